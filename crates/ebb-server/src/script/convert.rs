//! Conversions between Lua values and command replies, with the rules of
//! Redis 7.0's scripting: a script's result becomes the reply its caller
//! receives, and a Lua value becomes a command argument. (A command's
//! reply becomes a Lua value in raw.rs.)

use bytes::Bytes;
use ebb_core::args::c_str;
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

/// A number as `lua_tonumber` and `luaL_checknumber` take it: a number,
/// or a string that reads as one (see [`str_to_number`]).
pub fn to_number(v: &Value) -> Option<f64> {
    number(v).or_else(|| match v {
        Value::String(s) => str_to_number(&s.as_bytes()),
        _ => None,
    })
}

/// A string read as a number the way Lua 5.1 converts one: C's `strtod`
/// (leading blanks, a sign, decimals, exponents, hexadecimal, `inf` and
/// `nan`), then a hexadecimal integer (`strtoul`) when `strtod` stopped at
/// an `x`; only blanks may follow. The string ends at its first zero
/// byte, as a C string does.
pub fn str_to_number(s: &[u8]) -> Option<f64> {
    let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    let mut buf = Vec::with_capacity(end + 1);
    buf.extend_from_slice(&s[..end]);
    buf.push(0);
    let start = buf.as_ptr() as *const libc::c_char;
    let mut stop: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `buf` is zero-terminated and outlives both calls, which only
    // read it and point `stop` into it.
    let (mut n, mut at) = unsafe {
        let n = libc::strtod(start, &mut stop);
        (n, stop.offset_from(start) as usize)
    };
    if at == 0 {
        return None;
    }
    if matches!(buf[at], b'x' | b'X') {
        // SAFETY: as above.
        unsafe {
            n = libc::strtoul(start, &mut stop, 16) as f64;
            at = stop.offset_from(start) as usize;
        }
    }
    let rest = &buf[at..end.max(at)];
    rest.iter()
        .all(|c| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
        .then_some(n)
}

/// C's conversion of a double to `int` on x86-64 (what Lua 5.1's
/// `lua_tonumber` result becomes when stored in an `int`): truncated
/// toward zero, with NaN and out-of-range values giving the smallest int.
pub fn c_int(n: f64) -> i32 {
    if n.is_nan() || !(-2_147_483_649.0 < n && n < 2_147_483_648.0) {
        i32::MIN
    } else {
        n as i32
    }
}

/// A double as C's `%.14g` writes it (Lua's `tostring`): NaN keeps its
/// sign (`-nan` when the sign bit is set), as the C library prints it.
pub fn g14(n: f64) -> String {
    if n.is_nan() {
        return nan_text(n).into();
    }
    // Whole numbers of up to 14 digits print as their digits (-0 aside).
    if n.fract() == 0.0 && n.abs() < 1e14 && !(n == 0.0 && n.is_sign_negative()) {
        return (n as i64).to_string();
    }
    ebb_core::reply::format_g(n, 14)
}

/// A double as C's `%.17g` writes it (how Redis turns a number into a
/// command argument or a double reply), with NaN's sign as above.
pub fn g17(n: f64) -> String {
    if n.is_nan() {
        return nan_text(n).into();
    }
    ebb_core::reply::format_double(n)
}

fn nan_text(n: f64) -> &'static str {
    if n.is_sign_negative() {
        "-nan"
    } else {
        "nan"
    }
}

/// A string as `luaL_checklstring` takes it: a string, or a number as
/// Lua writes it (`%.14g`).
pub fn to_bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        v => number(v).map(|n| g14(n).into_bytes()),
    }
}

/// A command argument from a Lua value: strings as they are, numbers as
/// `%.17g` (as Redis formats them, not Lua's shorter `%.14g`); anything
/// else is refused.
pub fn arg(v: &Value) -> Option<Bytes> {
    match v {
        Value::String(s) => Some(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Integer(i) => Some(Bytes::from(g17(*i as f64))),
        Value::Number(n) => Some(Bytes::from(g17(*n))),
        _ => None,
    }
}

/// An error line as Redis writes a script's error: up to a NUL (it is
/// formatted as a C string), without CR or LF at its end, and with the
/// others turned into spaces.
pub fn error_line(s: &[u8]) -> String {
    let s = c_str(s);
    let end = s
        .iter()
        .rposition(|&c| c != b'\r' && c != b'\n')
        .map_or(0, |i| i + 1);
    one_line(&s[..end])
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
pub fn truncate(n: f64) -> i64 {
    if n.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

/// A script's result as the reply its caller gets; `resp` is the protocol
/// the script chose (booleans differ), `client_resp3` the caller's.
pub fn to_reply(v: &Value, resp: u8, client_resp3: bool) -> Reply {
    let how = Out { resp, client_resp3 };
    value_reply(v, how, 0)
}

/// What a conversion depends on besides the value.
#[derive(Clone, Copy)]
struct Out {
    resp: u8,
    client_resp3: bool,
}

fn value_reply(v: &Value, how: Out, depth: usize) -> Reply {
    match v {
        Value::String(s) => Reply::Bulk(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Integer(i) => Reply::Int(*i),
        Value::Number(n) => Reply::Int(truncate(*n)),
        Value::Boolean(b) if how.resp == 3 => Reply::Bool(*b),
        Value::Boolean(true) => Reply::Int(1),
        Value::Table(t) => table_reply(t, how, depth),
        _ => Reply::Nil,
    }
}

/// A double reply. A NaN is written with its sign, as the C library
/// prints it: to a RESP2 caller that is a bulk string, written here.
fn double_reply(d: f64, how: Out) -> Reply {
    if d.is_nan() && !how.client_resp3 {
        return Reply::Bulk(Bytes::from_static(nan_text(d).as_bytes()));
    }
    Reply::Double(d)
}

fn table_reply(t: &Table, how: Out, depth: usize) -> Reply {
    if depth >= MAX_DEPTH {
        return Reply::Error("ERR reached lua stack limit".into());
    }
    let field = |name: &str| t.raw_get::<Value>(name).unwrap_or(Value::Nil);
    if let Value::String(e) = field("err") {
        return Reply::Error(error_line(&e.as_bytes()).into());
    }
    if let Value::String(s) = field("ok") {
        return Reply::Simple(one_line(c_str(&s.as_bytes())).into());
    }
    if let Some(d) = number(&field("double")) {
        return double_reply(d, how);
    }
    if let Value::String(s) = field("big_number") {
        return Reply::BigNumber(Bytes::from(one_line(&s.as_bytes())));
    }
    if let Value::Table(m) = field("map") {
        let mut pairs = Vec::new();
        for (k, v) in m.pairs::<Value, Value>().flatten() {
            pairs.push((
                value_reply(&k, how, depth + 1),
                value_reply(&v, how, depth + 1),
            ));
        }
        return Reply::Map(pairs);
    }
    if let Value::Table(s) = field("set") {
        let members = s
            .pairs::<Value, Value>()
            .flatten()
            .map(|(k, _)| value_reply(&k, how, depth + 1))
            .collect();
        return Reply::Set(members);
    }
    // A verbatim string needs both its format and its text as strings;
    // otherwise the table is an array.
    if let Value::Table(v) = field("verbatim_string") {
        let text = |name: &str| match v.raw_get::<Value>(name) {
            Ok(Value::String(s)) => Some(s),
            _ => None,
        };
        if let (Some(f), Some(s)) = (text("format"), text("string")) {
            // As Redis: the format's first three bytes (up to a NUL, as a
            // C string), padded with spaces.
            let mut format = [b' '; 3];
            for (slot, &c) in format.iter_mut().zip(c_str(&f.as_bytes())) {
                *slot = c;
            }
            let text = Bytes::copy_from_slice(&s.as_bytes());
            return match &format {
                b"txt" => Reply::Verbatim(text),
                _ => Reply::VerbatimAs(format, text),
            };
        }
    }
    // An array: its elements up to the first nil.
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(value_reply(&v, how, depth + 1)),
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
    fn strings_read_as_lua_reads_numbers() {
        assert_eq!(str_to_number(b" 12 "), Some(12.0));
        assert_eq!(str_to_number(b"0x10"), Some(16.0));
        assert_eq!(str_to_number(b"0X1f"), Some(31.0));
        assert_eq!(str_to_number(b"1e1"), Some(10.0));
        assert_eq!(str_to_number(b"-2.5"), Some(-2.5));
        assert_eq!(str_to_number(b"inf"), Some(f64::INFINITY));
        assert_eq!(str_to_number(b"12\0junk"), Some(12.0));
        assert_eq!(str_to_number(b"1 2"), None);
        assert_eq!(str_to_number(b"0x"), None);
        assert_eq!(str_to_number(b""), None);
        assert_eq!(str_to_number(b"abc"), None);
    }

    #[test]
    fn doubles_become_c_ints() {
        assert_eq!(c_int(2.9), 2);
        assert_eq!(c_int(-0.5), 0);
        assert_eq!(c_int(-3.7), -3);
        assert_eq!(c_int(f64::NAN), i32::MIN);
        assert_eq!(c_int(3e9), i32::MIN);
    }

    #[test]
    fn nan_keeps_its_sign() {
        assert_eq!(g14(-f64::NAN), "-nan");
        assert_eq!(g14(f64::NAN), "nan");
        assert_eq!(g17(-f64::NAN), "-nan");
        assert_eq!(g14(-0.0), "-0");
        assert_eq!(g14(0.0), "0");
        assert_eq!(g14(-12.0), "-12");
        assert_eq!(g14(99_999_999_999_999.0), "99999999999999");
        assert_eq!(g14(1e15), "1e+15");
        assert_eq!(g14(123456789012345.0), "1.2345678901234e+14");
        assert_eq!(g17(0.1), "0.10000000000000001");
    }

    #[test]
    fn number_arguments_use_seventeen_digits() {
        assert_eq!(arg(&Value::Number(1.5)).unwrap(), Bytes::from("1.5"));
        assert_eq!(arg(&Value::Number(1e20)).unwrap(), Bytes::from("1e+20"));
        assert_eq!(arg(&Value::Integer(12)).unwrap(), Bytes::from("12"));
        assert!(arg(&Value::Boolean(true)).is_none());
    }
}
