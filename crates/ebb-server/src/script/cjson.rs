//! `cjson`, as Redis's scripts have it (lua-cjson 2.1): JSON encoding with
//! numbers as `%.14g`, and a decoder that reads what lua-cjson reads, with
//! its error texts.

use mlua::{LightUserData, Lua, MultiValue, Table, Value};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

use super::convert::{number, to_number};
use super::libs::{check_string, set};

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
    super::convert::g14(n)
}

/// The type name Lua's C API gives a value (`lua_typename`).
fn lua_type_name(v: &Value) -> &'static str {
    match v {
        Value::LightUserData(_) => "userdata",
        v => v.type_name(),
    }
}

/// A number as cjson writes it: `%.14g`, and NaN and the infinities as
/// `encode_invalid_numbers` says.
fn encode_number(out: &mut Vec<u8>, n: f64, cfg: &CjsonCfg) -> mlua::Result<()> {
    if !n.is_finite() {
        match cfg.encode_invalid.load(Ordering::Relaxed) {
            0 => return Err(err("Cannot serialise number: must not be NaN or Inf")),
            1 if n.is_nan() => out.extend_from_slice(b"nan"),
            1 if n > 0.0 => out.extend_from_slice(b"inf"),
            1 => out.extend_from_slice(b"-inf"),
            _ => out.extend_from_slice(b"null"),
        }
        return Ok(());
    }
    out.extend_from_slice(num14(n).as_bytes());
    Ok(())
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
        Value::Integer(i) => encode_number(out, *i as f64, cfg)?,
        Value::Number(n) => encode_number(out, *n, cfg)?,
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
                lua_type_name(other)
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
            Value::String(s) => {
                encode_string(out, &s.as_bytes());
                out.push(b':');
            }
            k => match number(k) {
                Some(n) => {
                    out.push(b'"');
                    encode_number(out, n, cfg)?;
                    out.extend_from_slice(b"\":");
                }
                None => {
                    return Err(err(format!(
                        "Cannot serialise {}: table key must be a number or string",
                        lua_type_name(k)
                    )))
                }
            },
        }
        encode_value(out, &v, depth, cfg)?;
    }
    out.push(b'}');
    Ok(())
}

/// A token of JSON text, as lua-cjson's tokenizer sees it.
enum Tok {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    Comma,
    Colon,
    End,
    Str(Vec<u8>),
    Num(f64),
    Bool(bool),
    Null,
    /// What is wrong at the token's position.
    Error(&'static str),
}

impl Tok {
    /// The name an error message gives the token.
    fn name(&self) -> &'static str {
        match self {
            Tok::ObjBegin => "T_OBJ_BEGIN",
            Tok::ObjEnd => "T_OBJ_END",
            Tok::ArrBegin => "T_ARR_BEGIN",
            Tok::ArrEnd => "T_ARR_END",
            Tok::Comma => "T_COMMA",
            Tok::Colon => "T_COLON",
            Tok::End => "T_END",
            Tok::Str(_) => "T_STRING",
            Tok::Num(_) => "T_NUMBER",
            Tok::Bool(_) => "T_BOOLEAN",
            Tok::Null => "T_NULL",
            Tok::Error(what) => what,
        }
    }
}

/// JSON text being decoded. The text ends at its first zero byte (as a C
/// string does), and `s` holds it with one zero byte after it.
struct Decoder<'a> {
    s: Vec<u8>,
    i: usize,
    lua: &'a Lua,
    depth: usize,
    max_depth: usize,
}

impl Decoder<'_> {
    fn at(&self, i: usize) -> u8 {
        self.s.get(i).copied().unwrap_or(0)
    }

    /// The next token and where it is (for an error token, where the
    /// error is).
    fn next(&mut self) -> (Tok, usize) {
        while matches!(self.at(self.i), b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
        let start = self.i;
        let single = match self.at(start) {
            0 => return (Tok::End, start),
            b'{' => Some(Tok::ObjBegin),
            b'}' => Some(Tok::ObjEnd),
            b'[' => Some(Tok::ArrBegin),
            b']' => Some(Tok::ArrEnd),
            b',' => Some(Tok::Comma),
            b':' => Some(Tok::Colon),
            _ => None,
        };
        if let Some(t) = single {
            self.i += 1;
            return (t, start);
        }
        let rest = &self.s[start..];
        let word = |w: &[u8]| rest.starts_with(w);
        match rest[0] {
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => self.number(),
            _ if word(b"true") => {
                self.i += 4;
                (Tok::Bool(true), start)
            }
            _ if word(b"false") => {
                self.i += 5;
                (Tok::Bool(false), start)
            }
            _ if word(b"null") => {
                self.i += 4;
                (Tok::Null, start)
            }
            // Numbers JSON does not allow but cjson reads: a leading `+`,
            // infinities and NaN.
            b'+' => self.number(),
            b'i' | b'I' | b'n' | b'N'
                if rest.len() >= 3
                    && (rest[..3].eq_ignore_ascii_case(b"inf")
                        || rest[..3].eq_ignore_ascii_case(b"nan")) =>
            {
                self.number()
            }
            _ => (Tok::Error("invalid token"), start),
        }
    }

    /// A number read by C's `strtod`, as cjson reads one.
    fn number(&mut self) -> (Tok, usize) {
        let start = self.i;
        let p = self.s[start..].as_ptr() as *const libc::c_char;
        let mut stop: *mut libc::c_char = std::ptr::null_mut();
        // SAFETY: `s` ends with a zero byte, so `strtod` reads a C string
        // inside it and points `stop` into it.
        let (n, used) = unsafe {
            let n = libc::strtod(p, &mut stop);
            (n, stop.offset_from(p) as usize)
        };
        if used == 0 {
            return (Tok::Error("invalid number"), start);
        }
        self.i += used;
        (Tok::Num(n), start)
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        (at..at + 4).try_fold(0u32, |acc, i| {
            Some((acc << 4) | (self.at(i) as char).to_digit(16)?)
        })
    }

    /// The `\uXXXX` escape (or surrogate pair) at `self.i`: its code point
    /// and the escape's length.
    fn unicode_escape(&self) -> Option<(u32, usize)> {
        let cp = self.hex4(self.i + 2)?;
        if cp & 0xF800 != 0xD800 {
            return Some((cp, 6));
        }
        // A surrogate: a high one, followed by an escaped low one.
        if cp & 0x400 != 0 || self.at(self.i + 6) != b'\\' || self.at(self.i + 7) != b'u' {
            return None;
        }
        let low = self.hex4(self.i + 8)?;
        if low & 0xFC00 != 0xDC00 {
            return None;
        }
        Some(((((cp & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000, 12))
    }

    fn string(&mut self) -> (Tok, usize) {
        let start = self.i;
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let c = self.at(self.i);
            match c {
                b'"' => break,
                0 => return (Tok::Error("unexpected end of string"), self.i),
                b'\\' => {
                    let plain = match self.at(self.i + 1) {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            let Some((cp, len)) = self.unicode_escape() else {
                                return (Tok::Error("invalid unicode escape code"), self.i);
                            };
                            let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                            self.i += len;
                            continue;
                        }
                        _ => return (Tok::Error("invalid escape code"), self.i),
                    };
                    out.push(plain);
                    self.i += 2;
                }
                c => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
        self.i += 1;
        (Tok::Str(out), start)
    }

    fn expected(what: &str, tok: &Tok, at: usize) -> mlua::Error {
        err(format!(
            "Expected {what} but found {} at character {}",
            tok.name(),
            at + 1
        ))
    }

    /// The value that starts with `tok`.
    fn value(&mut self, tok: Tok, at: usize) -> mlua::Result<Value> {
        match tok {
            Tok::Str(b) => Ok(Value::String(self.lua.create_string(b)?)),
            Tok::Num(n) => Ok(Value::Number(n)),
            Tok::Bool(b) => Ok(Value::Boolean(b)),
            Tok::Null => Ok(null()),
            Tok::ObjBegin => self.object(),
            Tok::ArrBegin => self.array(),
            tok => Err(Self::expected("value", &tok, at)),
        }
    }

    /// One level deeper (just past an opening bracket).
    fn descend(&mut self) -> mlua::Result<()> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(err(format!(
                "Found too many nested data structures ({}) at character {}",
                self.depth, self.i
            )));
        }
        Ok(())
    }

    fn array(&mut self) -> mlua::Result<Value> {
        self.descend()?;
        let t = self.lua.create_table()?;
        let (mut tok, mut at) = self.next();
        if matches!(tok, Tok::ArrEnd) {
            self.depth -= 1;
            return Ok(Value::Table(t));
        }
        for n in 1.. {
            let v = self.value(tok, at)?;
            t.raw_set(n, v)?;
            (tok, at) = self.next();
            match tok {
                Tok::ArrEnd => break,
                Tok::Comma => (tok, at) = self.next(),
                tok => return Err(Self::expected("comma or array end", &tok, at)),
            }
        }
        self.depth -= 1;
        Ok(Value::Table(t))
    }

    fn object(&mut self) -> mlua::Result<Value> {
        self.descend()?;
        let t = self.lua.create_table()?;
        let (mut tok, mut at) = self.next();
        if matches!(tok, Tok::ObjEnd) {
            self.depth -= 1;
            return Ok(Value::Table(t));
        }
        loop {
            let Tok::Str(key) = tok else {
                return Err(Self::expected("object key string", &tok, at));
            };
            let (colon, colon_at) = self.next();
            if !matches!(colon, Tok::Colon) {
                return Err(Self::expected("colon", &colon, colon_at));
            }
            let (vt, vat) = self.next();
            let v = self.value(vt, vat)?;
            t.raw_set(self.lua.create_string(key)?, v)?;
            (tok, at) = self.next();
            match tok {
                Tok::ObjEnd => break,
                Tok::Comma => (tok, at) = self.next(),
                tok => return Err(Self::expected("comma or object end", &tok, at)),
            }
        }
        self.depth -= 1;
        Ok(Value::Table(t))
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
        if a.len() != 1 {
            return Err(err("bad argument #1 to 'decode' (expected 1 argument)"));
        }
        let text = check_string(a.front(), 1, "decode")?;
        if text.len() >= 2 && (text[0] == 0 || text[1] == 0) {
            return Err(err("JSON parser does not support UTF-16 or UTF-32"));
        }
        let end = text.iter().position(|&c| c == 0).unwrap_or(text.len());
        let mut s = text;
        s.truncate(end);
        s.push(0);
        let mut d = Decoder {
            s,
            i: 0,
            lua,
            depth: 0,
            max_depth: c.decode_max_depth.load(Ordering::Relaxed).min(HARD_NESTING),
        };
        let (tok, at) = d.next();
        let v = d.value(tok, at)?;
        let (tok, at) = d.next();
        if !matches!(tok, Tok::End) {
            return Err(Decoder::expected("the end", &tok, at));
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
    // A separate instance, with settings of its own.
    let st = state.clone();
    t.raw_set(
        "new",
        lua.create_function(move |lua, _: MultiValue| cjson(lua, &st))?,
    )?;
    t.raw_set("null", null())?;
    t.raw_set("_NAME", "cjson")?;
    t.raw_set("_VERSION", "2.1.0")?;
    Ok(t)
}
