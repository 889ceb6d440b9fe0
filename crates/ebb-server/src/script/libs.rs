//! The libraries Redis gives scripts besides Lua's own: `bit` (LuaBitOp's
//! operations on 32-bit integers) and `math.random`; `cjson` is in
//! `cjson.rs`, `cmsgpack` in `msgpack.rs`, `struct` in `structlib.rs`.

use mlua::{Lua, MultiValue, Table, Value};

use super::convert::{to_bytes, to_number};

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
pub fn set<F>(lua: &Lua, t: &Table, state: &Table, name: &str, f: F) -> mlua::Result<()>
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
        // Only a missing width is the default: an explicit nil is refused.
        let n = match a.get(1) {
            Some(v) => tobit(Some(v), 2, "tohex")?,
            None => 8,
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
        // Lua 5.1 reads the bounds as C ints: the number cast to a 64-bit
        // integer, then cut to 32 bits (2^31 reads as -2^31, 2^32+5 as 5).
        let int_arg = |i: usize| -> mlua::Result<i32> {
            Ok(super::convert::truncate(check_number(a.get(i - 1), i, "random")?) as i32)
        };
        Ok(Value::Number(match a.len() {
            0 => r,
            1 => {
                let u = int_arg(1)?;
                if u < 1 {
                    return Err(mlua::Error::RuntimeError(
                        "bad argument #1 to 'random' (interval is empty)".into(),
                    ));
                }
                (r * f64::from(u)).floor() + 1.0
            }
            2 => {
                let (l, u) = (int_arg(1)?, int_arg(2)?);
                if l > u {
                    return Err(mlua::Error::RuntimeError(
                        "bad argument #2 to 'random' (interval is empty)".into(),
                    ));
                }
                // The width is an int sum too, wrapping as C's does.
                (r * f64::from(u.wrapping_sub(l).wrapping_add(1))).floor() + f64::from(l)
            }
            _ => {
                return Err(mlua::Error::RuntimeError(
                    "wrong number of arguments".into(),
                ))
            }
        }))
    })?;
    set(lua, math, state, "randomseed", |_, a| {
        let seed = super::convert::truncate(check_number(a.front(), 1, "randomseed")?) as i32 as u32
            as u64;
        RAND.store((seed << 16) | 0x330E, std::sync::atomic::Ordering::Relaxed);
        Ok(Value::Nil)
    })
}
