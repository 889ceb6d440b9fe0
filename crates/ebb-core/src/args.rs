//! Typed reading of command arguments, and Redis's number parsing rules.

use bytes::Bytes;

use crate::error::{CmdResult, Error};

/// An argument or member made into an owned `Bytes`: taken as is when it
/// already is one, copied when it is a slice of a request.
pub trait IntoBytes {
    /// The owned bytes.
    fn into_bytes(self) -> Bytes;
}

impl IntoBytes for Bytes {
    fn into_bytes(self) -> Bytes {
        self
    }
}

impl IntoBytes for &Bytes {
    fn into_bytes(self) -> Bytes {
        self.clone()
    }
}

impl IntoBytes for &[u8] {
    fn into_bytes(self) -> Bytes {
        Bytes::copy_from_slice(self)
    }
}

impl IntoBytes for &&[u8] {
    fn into_bytes(self) -> Bytes {
        Bytes::copy_from_slice(self)
    }
}

/// Borrowed views of a command held as owned arguments (a queued,
/// blocked or rebuilt command), in the form handlers take.
pub fn views(argv: &[Bytes]) -> Vec<&[u8]> {
    argv.iter().map(|a| &a[..]).collect()
}

/// Owned copies of a command's arguments, for a command that must outlive
/// the read buffer its arguments point into.
pub fn to_owned(argv: &[&[u8]]) -> Vec<Bytes> {
    argv.iter().map(|a| Bytes::copy_from_slice(a)).collect()
}

/// Reads the arguments of one command, front to back. Every getter returns
/// the Redis error for a missing or malformed argument; [`Args::finish`]
/// rejects leftovers with a syntax error.
pub struct Args<'a> {
    argv: &'a [&'a [u8]],
    pos: usize,
}

impl<'a> Args<'a> {
    /// A reader positioned after the command name.
    pub fn new(argv: &'a [&'a [u8]]) -> Args<'a> {
        Args { argv, pos: 1 }
    }

    /// The command name as sent.
    pub fn command(&self) -> &'a [u8] {
        self.argv.first().map(|b| &b[..]).unwrap_or(b"")
    }

    /// How many arguments are left.
    pub fn remaining(&self) -> usize {
        self.argv.len().saturating_sub(self.pos)
    }

    /// Whether all arguments were read.
    pub fn is_done(&self) -> bool {
        self.remaining() == 0
    }

    /// The next argument, if any.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<&'a [u8]> {
        let a = *self.argv.get(self.pos)?;
        self.pos += 1;
        Some(a)
    }

    /// The next argument without consuming it.
    pub fn peek(&self) -> Option<&'a [u8]> {
        self.argv.get(self.pos).copied()
    }

    /// The rest of the arguments, consumed.
    pub fn rest(&mut self) -> &'a [&'a [u8]] {
        let r = &self.argv[self.pos.min(self.argv.len())..];
        self.pos = self.argv.len();
        r
    }

    /// The next argument, or a syntax error.
    pub fn bytes(&mut self) -> CmdResult<&'a [u8]> {
        self.next().ok_or(Error::Syntax)
    }

    /// The next argument as an owned copy (not pinning the read buffer).
    pub fn owned(&mut self) -> CmdResult<Bytes> {
        Ok(Bytes::copy_from_slice(self.bytes()?))
    }

    /// The next argument as a 64-bit integer.
    pub fn i64(&mut self) -> CmdResult<i64> {
        parse_i64(self.bytes()?).ok_or(Error::NotInteger)
    }

    /// The next argument as a float (no NaN).
    pub fn f64(&mut self) -> CmdResult<f64> {
        parse_f64(self.bytes()?).ok_or(Error::NotFloat)
    }

    /// Consumes the next argument if it equals `kw` (ASCII case-insensitive).
    pub fn eat(&mut self, kw: &str) -> bool {
        match self.peek() {
            Some(a) if a.eq_ignore_ascii_case(kw.as_bytes()) => {
                self.pos += 1;
                true
            }
            _ => false,
        }
    }

    /// Whether the next argument equals `kw`, without consuming it.
    pub fn peek_is(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(a) if a.eq_ignore_ascii_case(kw.as_bytes()))
    }

    /// Ends parsing: leftover arguments are a syntax error.
    pub fn finish(&self) -> CmdResult<()> {
        if self.is_done() {
            Ok(())
        } else {
            Err(Error::Syntax)
        }
    }
}

/// Parses a signed 64-bit integer exactly as Redis's `string2ll` does: an
/// optional `-`, no `+`, no spaces, no leading zeros.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !(b'1'..=b'9').contains(&digits[0]) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    if neg {
        if v > (i64::MAX as u64) + 1 {
            None
        } else {
            Some((v as i64).wrapping_neg())
        }
    } else if v > i64::MAX as u64 {
        None
    } else {
        Some(v as i64)
    }
}

/// Parses an unsigned 64-bit integer under the same rules.
pub fn parse_u64(s: &[u8]) -> Option<u64> {
    if s == b"0" {
        return Some(0);
    }
    if s.is_empty() || s.len() > 20 || !(b'1'..=b'9').contains(&s[0]) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(v)
}

/// Parses a float as Redis does (`strtod` on the whole string, no leading
/// space, `inf`/`-inf` accepted, NaN rejected).
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    if s.is_empty() || s[0].is_ascii_whitespace() || s.len() > 256 {
        return None;
    }
    let t = std::str::from_utf8(s).ok()?;
    let v: f64 = match t.parse() {
        Ok(v) => v,
        Err(_) => {
            let l = t.to_ascii_lowercase();
            match l.as_str() {
                "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
                "-inf" | "-infinity" => f64::NEG_INFINITY,
                _ => return None,
            }
        }
    };
    if v.is_nan() {
        None
    } else {
        Some(v)
    }
}

/// The bytes of `s` up to its first NUL, as C string functions (and so
/// Redis, for many arguments and messages) see it.
pub fn c_str(s: &[u8]) -> &[u8] {
    &s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())]
}

/// C's `strtod` on the longest prefix of `s` that is a number (leading
/// space skipped; 0 when there is none), as Redis reads some arguments
/// (DEBUG SLEEP).
pub fn c_strtod(s: &[u8]) -> f64 {
    crate::cmd::zsets::range::strtod(s).value
}

/// Where C's number readers (`strtod`, `atoi`) find the number: after
/// leading space (as `isspace` has it) and an optional sign. Returns
/// whether the sign is `-`, and the index after it.
pub fn c_sign(s: &[u8]) -> (bool, usize) {
    let i = s
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
        .count();
    match s.get(i) {
        Some(b'-') => (true, i + 1),
        Some(b'+') => (false, i + 1),
        _ => (false, i),
    }
}

/// C's `atoi`: leading space, a sign and the digits after it; 0 when
/// there are none, as Redis reads some arguments (DEBUG switches).
pub fn c_atoi(s: &[u8]) -> i64 {
    let (neg, i) = c_sign(s);
    let mut v: i64 = 0;
    for &c in s[i..].iter().take_while(|c| c.is_ascii_digit()) {
        v = v.wrapping_mul(10).wrapping_add(i64::from(c - b'0'));
    }
    if neg {
        v.wrapping_neg()
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_readers_take_the_leading_number() {
        assert_eq!(c_atoi(b"abc"), 0);
        assert_eq!(c_atoi(b""), 0);
        assert_eq!(c_atoi(b" +12x"), 12);
        assert_eq!(c_atoi(b"-3"), -3);
        assert_eq!(c_atoi(b"01"), 1);
        assert_eq!(c_strtod(b"1abc"), 1.0);
        assert_eq!(c_strtod(b" .5e1x"), 5.0);
        assert_eq!(c_strtod(b"x"), 0.0);
    }

    #[test]
    fn integers_follow_string2ll() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-1"), Some(-1));
        assert_eq!(parse_i64(b"+1"), None);
        assert_eq!(parse_i64(b"01"), None);
        assert_eq!(parse_i64(b"-0"), None);
        assert_eq!(parse_i64(b" 1"), None);
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
    }

    #[test]
    fn floats_follow_strtod() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"+inf"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b"nan"), None);
        assert_eq!(parse_f64(b" 1"), None);
        assert_eq!(parse_f64(b"1e3"), Some(1000.0));
        assert_eq!(parse_f64(b"abc"), None);
    }
}
