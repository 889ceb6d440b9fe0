//! Conversions between command replies and Lua values, both ways, with the
//! rules of Redis 7.0's scripting: a reply becomes what the script's
//! protocol (`redis.setresp`) would show, and a script's result becomes
//! the reply its caller receives.

use bytes::Bytes;
use ebb_core::Reply;
use mlua::{Lua, Table, Value};

/// Tables nested deeper than this in a script's result are refused (a
/// table that contains itself would otherwise never end).
const MAX_DEPTH: usize = 200;

/// A Lua number, the way a command argument or a reply shows it.
pub fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        _ => None,
    }
}

/// A number as `luaL_checknumber` takes it: a number, or a string that
/// reads as one.
pub fn to_number(v: &Value) -> Option<f64> {
    number(v).or_else(|| match v {
        Value::String(s) => std::str::from_utf8(&s.as_bytes()).ok()?.trim().parse().ok(),
        _ => None,
    })
}

/// A string as `luaL_checklstring` takes it: a string, or a number as
/// Lua writes it (`%.14g`).
pub fn to_bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        v => number(v).map(|n| ebb_core::reply::format_g(n, 14).into_bytes()),
    }
}

/// A command argument from a Lua value: strings as they are, numbers as
/// `%.17g` (as Redis formats them, not Lua's shorter `%.14g`); anything
/// else is refused.
pub fn arg(v: &Value) -> Option<Bytes> {
    match v {
        Value::String(s) => Some(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Integer(i) => Some(Bytes::from(ebb_core::reply::format_double(*i as f64))),
        Value::Number(n) => Some(Bytes::from(ebb_core::reply::format_double(*n))),
        _ => None,
    }
}

/// An error or status text made single-line, as a reply line must be.
pub fn one_line(s: &[u8]) -> String {
    String::from_utf8_lossy(s)
        .chars()
        .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
        .collect()
}

/// A reply as the script sees it, for a script using RESP `resp`.
pub fn to_lua(lua: &Lua, r: &Reply, resp: u8) -> mlua::Result<Value> {
    let resp3 = resp == 3;
    Ok(match r {
        Reply::Ok => status(lua, b"OK")?,
        Reply::Simple(s) => status(lua, s.as_bytes())?,
        Reply::Error(e) => {
            // A command's error, counted in the error statistics when the
            // command replied it: marked so that the script's reply, if it
            // is this error, is not counted again (Redis's field name).
            let t = lua.create_table()?;
            t.raw_set("err", lua.create_string(e.as_bytes())?)?;
            t.raw_set("ignore_error_stats_update", true)?;
            Value::Table(t)
        }
        Reply::Int(i) => Value::Number(*i as f64),
        Reply::Bulk(b) => Value::String(lua.create_string(b)?),
        Reply::Nil | Reply::NilArray => {
            if resp3 {
                Value::Nil
            } else {
                Value::Boolean(false)
            }
        }
        Reply::Array(items) => array(lua, items.iter(), resp)?,
        Reply::Bulks(list) if resp3 && list.is_pairs() => to_lua(lua, &list.to_array(), resp)?,
        Reply::Bulks(list) => {
            let t = lua.create_table_with_capacity(list.len(), 0)?;
            for (i, b) in list.iter_opt().enumerate() {
                match b {
                    Some(b) => t.raw_set(i + 1, lua.create_string(b)?)?,
                    None => t.raw_set(i + 1, to_lua(lua, &Reply::Nil, resp)?)?,
                }
            }
            Value::Table(t)
        }
        Reply::Set(items) if resp3 => {
            let inner = lua.create_table()?;
            for m in items {
                inner.raw_set(to_lua(lua, m, resp)?, true)?;
            }
            wrapped(lua, "set", Value::Table(inner))?
        }
        Reply::Set(items) => array(lua, items.iter(), resp)?,
        Reply::Map(pairs) if resp3 => {
            let inner = lua.create_table()?;
            for (k, v) in pairs {
                inner.raw_set(to_lua(lua, k, resp)?, to_lua(lua, v, resp)?)?;
            }
            wrapped(lua, "map", Value::Table(inner))?
        }
        Reply::Map(pairs) => array(lua, pairs.iter().flat_map(|(k, v)| [k, v]), resp)?,
        Reply::Double(d) if resp3 => wrapped(lua, "double", Value::Number(*d))?,
        Reply::Double(d) => Value::String(lua.create_string(ebb_core::reply::format_double(*d))?),
        Reply::Bool(b) if resp3 => Value::Boolean(*b),
        Reply::Bool(b) => Value::Number(*b as i64 as f64),
        Reply::Verbatim(b) if resp3 => {
            let inner = lua.create_table()?;
            inner.raw_set("format", "txt")?;
            inner.raw_set("string", lua.create_string(b)?)?;
            wrapped(lua, "verbatim_string", Value::Table(inner))?
        }
        Reply::Verbatim(b) => Value::String(lua.create_string(b)?),
        Reply::BigNumber(n) if resp3 => {
            wrapped(lua, "big_number", Value::String(lua.create_string(n)?))?
        }
        Reply::BigNumber(n) => Value::String(lua.create_string(n)?),
    })
}

fn status(lua: &Lua, s: &[u8]) -> mlua::Result<Value> {
    wrapped(lua, "ok", Value::String(lua.create_string(s)?))
}

fn wrapped(lua: &Lua, field: &str, v: Value) -> mlua::Result<Value> {
    let t = lua.create_table()?;
    t.raw_set(field, v)?;
    Ok(Value::Table(t))
}

fn array<'r>(lua: &Lua, items: impl Iterator<Item = &'r Reply>, resp: u8) -> mlua::Result<Value> {
    let t = lua.create_table()?;
    for (i, item) in items.enumerate() {
        t.raw_set(i + 1, to_lua(lua, item, resp)?)?;
    }
    Ok(Value::Table(t))
}

/// C's `(long long)` conversion of a double on x86-64: out of range and
/// NaN give the smallest integer.
fn truncate(n: f64) -> i64 {
    if n.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

/// A script's result as the reply its caller gets; `resp` is the protocol
/// the script chose (booleans differ).
pub fn to_reply(v: &Value, resp: u8) -> Reply {
    value_reply(v, resp, 0)
}

fn value_reply(v: &Value, resp: u8, depth: usize) -> Reply {
    match v {
        Value::String(s) => Reply::Bulk(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Integer(i) => Reply::Int(*i),
        Value::Number(n) => Reply::Int(truncate(*n)),
        Value::Boolean(b) if resp == 3 => Reply::Bool(*b),
        Value::Boolean(true) => Reply::Int(1),
        Value::Table(t) => table_reply(t, resp, depth),
        _ => Reply::Nil,
    }
}

fn table_reply(t: &Table, resp: u8, depth: usize) -> Reply {
    if depth >= MAX_DEPTH {
        return Reply::Error("ERR reached lua stack limit".into());
    }
    let field = |name: &str| t.raw_get::<Value>(name).unwrap_or(Value::Nil);
    if let Value::String(e) = field("err") {
        return Reply::Error(one_line(&e.as_bytes()).into());
    }
    if let Value::String(s) = field("ok") {
        return Reply::Simple(one_line(&s.as_bytes()).into());
    }
    if let Some(d) = number(&field("double")) {
        return Reply::Double(d);
    }
    if let Value::String(s) = field("big_number") {
        return Reply::BigNumber(Bytes::from(one_line(&s.as_bytes())));
    }
    if let Value::Table(m) = field("map") {
        let mut pairs = Vec::new();
        for (k, v) in m.pairs::<Value, Value>().flatten() {
            pairs.push((
                value_reply(&k, resp, depth + 1),
                value_reply(&v, resp, depth + 1),
            ));
        }
        return Reply::Map(pairs);
    }
    if let Value::Table(s) = field("set") {
        let members = s
            .pairs::<Value, Value>()
            .flatten()
            .map(|(k, _)| value_reply(&k, resp, depth + 1))
            .collect();
        return Reply::Set(members);
    }
    if let Value::Table(v) = field("verbatim_string") {
        if let Ok(Value::String(s)) = v.raw_get::<Value>("string") {
            return Reply::Verbatim(Bytes::copy_from_slice(&s.as_bytes()));
        }
    }
    // An array: its elements up to the first nil.
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(value_reply(&v, resp, depth + 1)),
        }
    }
    Reply::Array(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_truncate_like_c() {
        assert_eq!(truncate(1.9), 1);
        assert_eq!(truncate(-3.7), -3);
        assert_eq!(truncate(1e30), i64::MIN);
        assert_eq!(truncate(f64::NAN), i64::MIN);
        assert_eq!(truncate(3e9), 3_000_000_000);
    }

    #[test]
    fn replies_round_trip_through_lua() {
        let lua = Lua::new();
        let r = Reply::Array(vec![Reply::Int(3), Reply::bulk(b"x"), Reply::Nil]);
        let v = to_lua(&lua, &r, 2).unwrap();
        // The nil became false, which ends nothing: three elements back,
        // false as a nil reply.
        assert_eq!(
            to_reply(&v, 2),
            Reply::Array(vec![Reply::Int(3), Reply::bulk(b"x"), Reply::Nil])
        );
        let d = to_lua(&lua, &Reply::Double(1.5), 2).unwrap();
        assert_eq!(to_reply(&d, 2), Reply::bulk(b"1.5"));
        let d3 = to_lua(&lua, &Reply::Double(1.5), 3).unwrap();
        assert_eq!(to_reply(&d3, 3), Reply::Double(1.5));
        let e = to_lua(&lua, &Reply::Error("ERR x\ny".into()), 2).unwrap();
        assert_eq!(to_reply(&e, 2), Reply::Error("ERR x y".into()));
    }

    #[test]
    fn number_arguments_use_seventeen_digits() {
        assert_eq!(arg(&Value::Number(1.5)).unwrap(), Bytes::from("1.5"));
        assert_eq!(arg(&Value::Number(1e20)).unwrap(), Bytes::from("1e+20"));
        assert_eq!(arg(&Value::Integer(12)).unwrap(), Bytes::from("12"));
        assert!(arg(&Value::Boolean(true)).is_none());
    }
}
