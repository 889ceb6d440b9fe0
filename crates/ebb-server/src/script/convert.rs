//! Conversions between Lua values and command replies, with the rules of
//! Redis 7.0's scripting: a script's result becomes the reply its caller
//! receives, and a Lua value becomes a command argument. (A command's
//! reply becomes a Lua value in raw.rs.)

use bytes::Bytes;
use ebb_core::Reply;
use mlua::{Table, Value};

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
    fn number_arguments_use_seventeen_digits() {
        assert_eq!(arg(&Value::Number(1.5)).unwrap(), Bytes::from("1.5"));
        assert_eq!(arg(&Value::Number(1e20)).unwrap(), Bytes::from("1e+20"));
        assert_eq!(arg(&Value::Integer(12)).unwrap(), Bytes::from("12"));
        assert!(arg(&Value::Boolean(true)).is_none());
    }
}
