//! The libraries Redis gives scripts besides Lua's own: `bit` (LuaBitOp's
//! operations on 32-bit integers) and `cjson` (JSON encoding and decoding).

use mlua::{LightUserData, Lua, MultiValue, Table, Value};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

use super::convert::{number, to_bytes, to_number};

// --- bit ---------------------------------------------------------------------

/// Lua's "bad argument" error for argument `i` of `fname`.
pub fn bad_arg(i: usize, fname: &str, msg: &str) -> mlua::Error {
    mlua::Error::RuntimeError(format!("bad argument #{i} to '{fname}' ({msg})"))
}

/// The type name Lua's errors give a (possibly missing) argument.
fn type_of(v: Option<&Value>) -> &'static str {
    v.map_or("no value", |v| v.type_name())
}

/// A numeric argument as `luaL_checknumber` reads it (numbers, and
/// strings that hold one), or Lua's "bad argument" error.
pub fn check_number(v: Option<&Value>, i: usize, fname: &str) -> mlua::Result<f64> {
    v.and_then(to_number)
        .ok_or_else(|| bad_arg(i, fname, &format!("number expected, got {}", type_of(v))))
}

/// A string argument as `luaL_checklstring` reads it (strings, and numbers
/// as their text), or Lua's "bad argument" error.
pub fn check_string(v: Option<&Value>, i: usize, fname: &str) -> mlua::Result<Vec<u8>> {
    v.and_then(to_bytes)
        .ok_or_else(|| bad_arg(i, fname, &format!("string expected, got {}", type_of(v))))
}

/// LuaBitOp's normalisation: the number's low 32 bits as a signed integer
/// (the double is rounded to an integer first).
fn tobit(v: Option<&Value>, i: usize, fname: &str) -> mlua::Result<i32> {
    let t = check_number(v, i, fname)? + 6_755_399_441_055_744.0; // 2^52 + 2^51
    Ok(t.to_bits() as u32 as i32)
}

fn args_bits(args: &MultiValue, fname: &str) -> mlua::Result<Vec<i32>> {
    if args.is_empty() {
        return tobit(None, 1, fname).map(|v| vec![v]);
    }
    args.iter()
        .enumerate()
        .map(|(i, v)| tobit(Some(v), i + 1, fname))
        .collect()
}

fn first(args: &MultiValue, fname: &str) -> mlua::Result<i32> {
    tobit(args.front(), 1, fname)
}

fn second(args: &MultiValue, fname: &str) -> mlua::Result<u32> {
    Ok(tobit(args.get(1), 2, fname)? as u32 & 31)
}

/// Raises `msg` the way a C library's `luaL_error` does: prefixed with
/// the calling script's position. The text is left in the run state's
/// `pending` slot, where the error handler and `pcall` find it.
pub fn raise_plain(lua: &Lua, state: &Table, msg: &str) -> mlua::Error {
    let at = lua.inspect_stack(1, |d| {
        let src = d.source().short_src.map(|s| s.into_owned());
        (src, d.current_line())
    });
    let text = match at {
        Some((Some(src), Some(line))) => format!("{src}:{line}: {msg}"),
        _ => msg.to_string(),
    };
    let _ = state.raw_set("pending", text.as_str());
    mlua::Error::RuntimeError(text)
}

/// Raises an error table `{err = text}`, as `redis.call` does.
pub fn raise_table(lua: &Lua, state: &Table, text: &str) -> mlua::Error {
    if let Ok(t) = lua.create_table() {
        let _ = t.raw_set("err", text);
        let _ = state.raw_set("pending", t);
    }
    mlua::Error::RuntimeError(text.to_string())
}

/// Sets `t[name]` to `f`, whose failures are raised as C library errors.
fn set<F>(lua: &Lua, t: &Table, state: &Table, name: &str, f: F) -> mlua::Result<()>
where
    F: Fn(&Lua, MultiValue) -> mlua::Result<Value> + Send + 'static,
{
    let st = state.clone();
    let g = lua.create_function(move |lua, a: MultiValue| match f(lua, a) {
        Err(mlua::Error::RuntimeError(m)) => Err(raise_plain(lua, &st, &m)),
        other => other,
    })?;
    t.raw_set(name, g)
}

/// Sets `t[name]` to `f`, which may return several values; its failures
/// are raised as C library errors, with the script's position unless the
/// text is one of `unpositioned` (errors Lua itself raises without one).
pub fn set_multi(
    lua: &Lua,
    t: &Table,
    state: &Table,
    name: &str,
    unpositioned: &'static [&'static str],
    f: fn(&Lua, MultiValue) -> mlua::Result<MultiValue>,
) -> mlua::Result<()> {
    let st = state.clone();
    let g = lua.create_function(move |lua, a: MultiValue| match f(lua, a) {
        Err(mlua::Error::RuntimeError(m)) if unpositioned.contains(&m.as_str()) => {
            st.raw_set("pending", m.as_str())?;
            Err(mlua::Error::RuntimeError(m))
        }
        Err(mlua::Error::RuntimeError(m)) => Err(raise_plain(lua, &st, &m)),
        other => other,
    })?;
    t.raw_set(name, g)
}

fn int(v: i32) -> mlua::Result<Value> {
    Ok(Value::Number(v as f64))
}

/// The `bit` table.
pub fn bit(lua: &Lua, state: &Table) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let fold = |name: &'static str, op: fn(i32, i32) -> i32| {
        move |_: &Lua, args: MultiValue| -> mlua::Result<Value> {
            let v = args_bits(&args, name)?;
            let mut it = v.into_iter();
            let start = it.next().unwrap_or(0);
            int(it.fold(start, op))
        }
    };
    set(lua, &t, state, "band", fold("band", |a, b| a & b))?;
    set(lua, &t, state, "bor", fold("bor", |a, b| a | b))?;
    set(lua, &t, state, "bxor", fold("bxor", |a, b| a ^ b))?;
    set(lua, &t, state, "tobit", |_, a| int(first(&a, "tobit")?))?;
    set(lua, &t, state, "bnot", |_, a| int(!first(&a, "bnot")?))?;
    set(lua, &t, state, "bswap", |_, a| {
        int(first(&a, "bswap")?.swap_bytes())
    })?;
    let shift = |name: &'static str, op: fn(i32, u32) -> i32| {
        move |_: &Lua, a: MultiValue| -> mlua::Result<Value> {
            int(op(first(&a, name)?, second(&a, name)?))
        }
    };
    set(
        lua,
        &t,
        state,
        "lshift",
        shift("lshift", |x, n| ((x as u32) << n) as i32),
    )?;
    set(
        lua,
        &t,
        state,
        "rshift",
        shift("rshift", |x, n| ((x as u32) >> n) as i32),
    )?;
    set(lua, &t, state, "arshift", shift("arshift", |x, n| x >> n))?;
    set(
        lua,
        &t,
        state,
        "rol",
        shift("rol", |x, n| (x as u32).rotate_left(n) as i32),
    )?;
    set(
        lua,
        &t,
        state,
        "ror",
        shift("ror", |x, n| (x as u32).rotate_right(n) as i32),
    )?;
    set(lua, &t, state, "tohex", |lua, a| {
        let x = first(&a, "tohex")? as u32;
        let n = match a.get(1) {
            Some(v) if !v.is_nil() => tobit(Some(v), 2, "tohex")?,
            _ => 8,
        };
        let width = n.unsigned_abs().min(8) as usize;
        let s = if n < 0 {
            format!("{x:08X}")
        } else {
            format!("{x:08x}")
        };
        Ok(Value::String(lua.create_string(&s[8 - width..])?))
    })?;
    Ok(t)
}

// --- math.random ---------------------------------------------------------------

/// Redis's `lrand48` state: 48 bits, shared by every script for the
/// server's life, so a script's random numbers follow Redis's sequence.
static RAND: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0x1234_ABCD_330E);

fn lrand48() -> i64 {
    use std::sync::atomic::Ordering;
    let step = |x: u64| x.wrapping_mul(0x5_DEEC_E66D).wrapping_add(0xB) & ((1 << 48) - 1);
    let prev = RAND
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |x| Some(step(x)))
        .unwrap_or(0);
    (step(prev) >> 17) as i64
}

/// `math.random` and `math.randomseed` as Redis defines them.
pub fn random(lua: &Lua, state: &Table, math: &Table) -> mlua::Result<()> {
    set(lua, math, state, "random", |_, a| {
        let max = i32::MAX as i64;
        let r = (lrand48() % max) as f64 / max as f64;
        let int_arg = |i: usize| -> mlua::Result<f64> {
            Ok(check_number(a.get(i - 1), i, "random")?.trunc())
        };
        Ok(Value::Number(match a.len() {
            0 => r,
            1 => {
                let u = int_arg(1)?;
                if u < 1.0 {
                    return Err(mlua::Error::RuntimeError(
                        "bad argument #1 to 'random' (interval is empty)".into(),
                    ));
                }
                (r * u).floor() + 1.0
            }
            2 => {
                let (l, u) = (int_arg(1)?, int_arg(2)?);
                if l > u {
                    return Err(mlua::Error::RuntimeError(
                        "bad argument #2 to 'random' (interval is empty)".into(),
                    ));
                }
                (r * (u - l + 1.0)).floor() + l
            }
            _ => {
                return Err(mlua::Error::RuntimeError(
                    "wrong number of arguments".into(),
                ))
            }
        }))
    })?;
    set(lua, math, state, "randomseed", |_, a| {
        let seed = check_number(a.front(), 1, "randomseed")? as i64 as i32 as u32 as u64;
        RAND.store((seed << 16) | 0x330E, std::sync::atomic::Ordering::Relaxed);
        Ok(Value::Nil)
    })
}

// --- cjson -------------------------------------------------------------------

/// cjson's null: a light userdata holding a null pointer.
fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

const MAX_NESTING: usize = 1000;

/// The deepest nesting encode and decode ever go to, whatever the depth
/// settings say (they accept up to 2^31 - 1, as lua-cjson's do): deeper
/// recursion would overflow the thread's stack.
const HARD_NESTING: usize = 1000;

/// lua-cjson's settings that change what it does (kept for the Lua
/// state's life, as in Redis).
struct CjsonCfg {
    encode_max_depth: AtomicUsize,
    decode_max_depth: AtomicUsize,
    /// NaN and infinities: 0 refused, 1 written as `nan`/`inf`, 2 as `null`.
    encode_invalid: AtomicU8,
}

fn err(msg: impl Into<String>) -> mlua::Error {
    mlua::Error::RuntimeError(msg.into())
}

/// Lua's `%.14g`, which cjson uses for numbers.
fn num14(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e14 {
        return format!("{}", n as i64);
    }
    ebb_core::reply::format_g(n, 14)
}

fn encode_string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &c in s {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            8 => out.extend_from_slice(b"\\b"),
            12 => out.extend_from_slice(b"\\f"),
            c if c < 0x20 || c == 0x7f => out.extend_from_slice(format!("\\u{c:04x}").as_bytes()),
            c => out.push(c),
        }
    }
    out.push(b'"');
}

fn encode_value(out: &mut Vec<u8>, v: &Value, depth: usize, cfg: &CjsonCfg) -> mlua::Result<()> {
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::LightUserData(p) if p.0.is_null() => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(i) => out.extend_from_slice(i.to_string().as_bytes()),
        Value::Number(n) => {
            if !n.is_finite() {
                match cfg.encode_invalid.load(Ordering::Relaxed) {
                    0 => return Err(err("Cannot serialise number: must not be NaN or Inf")),
                    1 if n.is_nan() => out.extend_from_slice(b"nan"),
                    1 if *n > 0.0 => out.extend_from_slice(b"inf"),
                    1 => out.extend_from_slice(b"-inf"),
                    _ => out.extend_from_slice(b"null"),
                }
                return Ok(());
            }
            out.extend_from_slice(num14(*n).as_bytes());
        }
        Value::String(s) => encode_string(out, &s.as_bytes()),
        Value::Table(t) => {
            if depth
                >= cfg
                    .encode_max_depth
                    .load(Ordering::Relaxed)
                    .min(HARD_NESTING)
            {
                return Err(err(format!(
                    "Cannot serialise, excessive nesting ({})",
                    depth + 1
                )));
            }
            encode_table(out, t, depth + 1, cfg)?;
        }
        other => {
            return Err(err(format!(
                "Cannot serialise {}: type not supported",
                other.type_name()
            )))
        }
    }
    Ok(())
}

/// The largest index when every key is a positive whole number, `None`
/// when the table is an object.
fn array_len(t: &Table) -> mlua::Result<Option<usize>> {
    let mut max = 0usize;
    let mut count = 0usize;
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        match number(&k) {
            Some(n) if n >= 1.0 && n.fract() == 0.0 && n < 1e15 => {
                max = max.max(n as usize);
                count += 1;
            }
            _ => return Ok(None),
        }
    }
    if count == 0 {
        return Ok(None);
    }
    if max > 10 && max > count * 2 {
        return Err(err("Cannot serialise table: excessively sparse array"));
    }
    Ok(Some(max))
}

fn encode_table(out: &mut Vec<u8>, t: &Table, depth: usize, cfg: &CjsonCfg) -> mlua::Result<()> {
    if let Some(len) = array_len(t)? {
        out.push(b'[');
        for i in 1..=len {
            if i > 1 {
                out.push(b',');
            }
            encode_value(out, &t.raw_get::<Value>(i)?, depth, cfg)?;
        }
        out.push(b']');
        return Ok(());
    }
    out.push(b'{');
    let mut firstpair = true;
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair?;
        if !firstpair {
            out.push(b',');
        }
        firstpair = false;
        match &k {
            Value::String(s) => encode_string(out, &s.as_bytes()),
            k => match number(k) {
                Some(n) => encode_string(out, num14(n).as_bytes()),
                None => {
                    return Err(err(
                        "Cannot serialise table: table key must be a number or string",
                    ))
                }
            },
        }
        out.push(b':');
        encode_value(out, &v, depth, cfg)?;
    }
    out.push(b'}');
    Ok(())
}

struct Decoder<'a> {
    s: &'a [u8],
    i: usize,
    lua: &'a Lua,
    depth: usize,
    max_depth: usize,
}

impl Decoder<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn fail(&self, what: &str) -> mlua::Error {
        let rest = &self.s[self.i.min(self.s.len())..];
        let found = match rest.first() {
            None => "T_END",
            Some(b'{') => "T_OBJ_BEGIN",
            Some(b'}') => "T_OBJ_END",
            Some(b'[') => "T_ARR_BEGIN",
            Some(b']') => "T_ARR_END",
            Some(b',') => "T_COMMA",
            Some(b':') => "T_COLON",
            Some(b'"') => "T_STRING",
            Some(b'-' | b'0'..=b'9') => "T_NUMBER",
            _ if rest.starts_with(b"true") || rest.starts_with(b"false") => "T_BOOLEAN",
            _ if rest.starts_with(b"null") => "T_NULL",
            _ => "invalid token",
        };
        err(format!(
            "Expected {what} but found {found} at character {}",
            self.i + 1
        ))
    }

    fn value(&mut self) -> mlua::Result<Value> {
        self.ws();
        let Some(&c) = self.s.get(self.i) else {
            return Err(self.fail("value"));
        };
        match c {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => {
                let b = self.string()?;
                Ok(Value::String(self.lua.create_string(b)?))
            }
            b't' if self.s[self.i..].starts_with(b"true") => {
                self.i += 4;
                Ok(Value::Boolean(true))
            }
            b'f' if self.s[self.i..].starts_with(b"false") => {
                self.i += 5;
                Ok(Value::Boolean(false))
            }
            b'n' if self.s[self.i..].starts_with(b"null") => {
                self.i += 4;
                Ok(null())
            }
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(self.fail("value")),
        }
    }

    fn number(&mut self) -> mlua::Result<Value> {
        let start = self.i;
        while self.i < self.s.len()
            && matches!(
                self.s[self.i],
                b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
            )
        {
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        match text.parse::<f64>() {
            Ok(n) => Ok(Value::Number(n)),
            Err(_) => {
                self.i = start;
                Err(self.fail("value"))
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.s.get(self.i..self.i + 4)?;
        let v = u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()?;
        self.i += 4;
        Some(v)
    }

    fn string(&mut self) -> mlua::Result<Vec<u8>> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return Err(err(format!(
                    "Expected string but found unexpected end of string at character {}",
                    self.i + 1
                )));
            };
            self.i += 1;
            match c {
                b'"' => return Ok(out),
                b'\\' => {
                    let Some(&e) = self.s.get(self.i) else {
                        continue;
                    };
                    self.i += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let mut cp = self.hex4().ok_or_else(|| self.fail("string"))?;
                            if (0xD800..0xDC00).contains(&cp)
                                && self.s.get(self.i..self.i + 2) == Some(b"\\u")
                            {
                                self.i += 2;
                                let lo = self.hex4().ok_or_else(|| self.fail("string"))?;
                                cp = 0x10000
                                    + ((cp - 0xD800) << 10)
                                    + (lo.wrapping_sub(0xDC00) & 0x3FF);
                            }
                            let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                c => out.push(c),
            }
        }
    }

    fn nest(&mut self) -> mlua::Result<()> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(err(format!(
                "Found too many nested data structures ({}) at character {}",
                self.depth,
                self.i + 1
            )));
        }
        Ok(())
    }

    /// Past an array's or object's closing bracket: one level up.
    fn close(&mut self, t: Table) -> Value {
        self.i += 1;
        self.depth -= 1;
        Value::Table(t)
    }

    fn array(&mut self) -> mlua::Result<Value> {
        self.nest()?;
        self.i += 1;
        let t = self.lua.create_table()?;
        self.ws();
        if self.s.get(self.i) == Some(&b']') {
            return Ok(self.close(t));
        }
        let mut n = 1;
        loop {
            let v = self.value()?;
            t.raw_set(n, v)?;
            n += 1;
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    return Ok(self.close(t));
                }
                _ => return Err(self.fail("comma or array end")),
            }
        }
    }

    fn object(&mut self) -> mlua::Result<Value> {
        self.nest()?;
        self.i += 1;
        let t = self.lua.create_table()?;
        self.ws();
        if self.s.get(self.i) == Some(&b'}') {
            return Ok(self.close(t));
        }
        loop {
            self.ws();
            if self.s.get(self.i) != Some(&b'"') {
                return Err(self.fail("object key string"));
            }
            let k = self.string()?;
            self.ws();
            if self.s.get(self.i) != Some(&b':') {
                return Err(self.fail("colon"));
            }
            self.i += 1;
            let v = self.value()?;
            t.raw_set(self.lua.create_string(k)?, v)?;
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    return Ok(self.close(t));
                }
                _ => return Err(self.fail("comma or object end")),
            }
        }
    }
}

/// A lua-cjson depth setting's argument: `None` to read it, or the new
/// value (1 to 2^31 - 1).
fn depth_arg(name: &str, a: &MultiValue) -> mlua::Result<Option<usize>> {
    match a.front() {
        None | Some(Value::Nil) => Ok(None),
        Some(v) => match to_number(v) {
            Some(n) if (1.0..=2147483647.0).contains(&n) => Ok(Some(n as usize)),
            Some(_) => Err(err(format!(
                "bad argument #1 to '{name}' (expected integer between 1 and 2147483647)"
            ))),
            None => Err(err(format!(
                "bad argument #1 to '{name}' (number expected, got {})",
                v.type_name()
            ))),
        },
    }
}

/// The `cjson` table: `encode`, `decode`, `null` and the settings.
pub fn cjson(lua: &Lua, state: &Table) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let cfg = Arc::new(CjsonCfg {
        encode_max_depth: AtomicUsize::new(MAX_NESTING),
        decode_max_depth: AtomicUsize::new(MAX_NESTING),
        encode_invalid: AtomicU8::new(0),
    });
    let c = cfg.clone();
    set(lua, &t, state, "encode", move |lua, a| {
        if a.len() != 1 {
            return Err(err("bad argument #1 to 'encode' (expected 1 argument)"));
        }
        let mut out = Vec::new();
        encode_value(&mut out, &a[0], 0, &c)?;
        Ok(Value::String(lua.create_string(out)?))
    })?;
    let c = cfg.clone();
    set(lua, &t, state, "decode", move |lua, a| {
        let Some(Value::String(s)) = a.front() else {
            return Err(err("bad argument #1 to 'decode' (string expected)"));
        };
        let bytes = s.as_bytes().to_vec();
        let mut d = Decoder {
            s: &bytes,
            i: 0,
            lua,
            depth: 0,
            max_depth: c.decode_max_depth.load(Ordering::Relaxed).min(HARD_NESTING),
        };
        let v = d.value()?;
        d.ws();
        if d.i < bytes.len() {
            return Err(d.fail("the end"));
        }
        Ok(v)
    })?;
    for (name, encode) in [("encode_max_depth", true), ("decode_max_depth", false)] {
        let c = cfg.clone();
        set(lua, &t, state, name, move |_, a| {
            let slot = if encode {
                &c.encode_max_depth
            } else {
                &c.decode_max_depth
            };
            if let Some(n) = depth_arg(name, &a)? {
                slot.store(n, Ordering::Relaxed);
            }
            Ok(Value::Number(slot.load(Ordering::Relaxed) as f64))
        })?;
    }
    let c = cfg.clone();
    set(lua, &t, state, "encode_invalid_numbers", move |lua, a| {
        let mode = match a.front() {
            None | Some(Value::Nil) => None,
            Some(Value::Boolean(b)) => Some(*b as u8),
            Some(v) => {
                let text = match v {
                    Value::String(s) => s.as_bytes().to_vec(),
                    v => match number(v) {
                        Some(n) => num14(n).into_bytes(),
                        None => {
                            return Err(err(format!(
                            "bad argument #1 to 'encode_invalid_numbers' (string expected, got {})",
                            v.type_name()
                        )))
                        }
                    },
                };
                match &text[..] {
                    b"on" => Some(1),
                    b"off" => Some(0),
                    b"null" => Some(2),
                    _ => {
                        return Err(err(format!(
                            "bad argument #1 to 'encode_invalid_numbers' (invalid option '{}')",
                            String::from_utf8_lossy(&text)
                        )))
                    }
                }
            }
        };
        if let Some(m) = mode {
            c.encode_invalid.store(m, Ordering::Relaxed);
        }
        Ok(match c.encode_invalid.load(Ordering::Relaxed) {
            0 => Value::Boolean(false),
            1 => Value::Boolean(true),
            _ => Value::String(lua.create_string("null")?),
        })
    })?;
    // Settings that do not change ebb's output: accepted, and answered
    // with what ebb always does.
    let settings: [(&str, Value); 4] = [
        ("encode_keep_buffer", Value::Boolean(true)),
        ("encode_number_precision", Value::Number(14.0)),
        ("decode_invalid_numbers", Value::Boolean(true)),
        ("encode_sparse_array", Value::Boolean(false)),
    ];
    for (name, v) in settings {
        set(lua, &t, state, name, move |_, _| Ok(v.clone()))?;
    }
    t.raw_set("null", null())?;
    t.raw_set("_NAME", "cjson")?;
    t.raw_set("_VERSION", "2.1.0")?;
    Ok(t)
}
