//! Timeout arguments of blocking commands (BLPOP, BLMOVE, BZPOPMIN, …),
//! parsed exactly as Redis 7.0 on x86-64 does: the text is read with
//! `strtold` into an 80-bit extended double (64-bit mantissa), multiplied
//! by 1000 in that precision, rounded up with `ceill` and converted to a
//! signed 64-bit count of milliseconds, where out-of-range values become
//! `i64::MIN` (and so "negative").
//!
//! The rounding is observable: `-0.001` is read as slightly less than a
//! millisecond in magnitude and means "block forever", while `-0.0011` is
//! rejected; `9223372036854775.807` is accepted and `…775.8075` is not.

use crate::error::{CmdResult, Error};

/// Parses a timeout in seconds into milliseconds (0 = block forever), with
/// Redis's errors: `ERR timeout is not a float or out of range` and
/// `ERR timeout is negative`.
pub fn parse_timeout(arg: &[u8]) -> CmdResult<u64> {
    let (neg, mag) = parse_extended(arg).ok_or(Error::TimeoutNotFloat)?;
    let ms = match mag {
        Magnitude::Zero => 0,
        Magnitude::Tiny => {
            if neg {
                0
            } else {
                1
            }
        }
        Magnitude::Huge => return Err(Error::TimeoutNegative),
        Magnitude::Exact { m, e } => {
            let (m2, e2) = round64(m as u128 * 1000, e);
            match ceil_ms(neg, m2, e2) {
                Some(t) if t >= 0 => t as u64,
                _ => return Err(Error::TimeoutNegative),
            }
        }
    };
    Ok(ms)
}

/// Parses a timeout given in milliseconds (WAIT's) as Redis reads one: a
/// 64-bit integer in Redis's strict form (no sign `+`, no `-0`, no leading
/// zeros), 0 meaning for ever, with `ERR timeout is not an integer or out
/// of range` and `ERR timeout is negative`.
pub fn parse_timeout_ms(arg: &[u8]) -> CmdResult<u64> {
    match crate::args::parse_i64(arg) {
        None => Err(Error::TimeoutNotInteger),
        Some(ms) if ms < 0 => Err(Error::TimeoutNegative),
        Some(ms) => Ok(ms as u64),
    }
}

/// The magnitude of a parsed number, as far as a millisecond timeout
/// needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Magnitude {
    /// Exactly zero.
    Zero,
    /// Non-zero but far below a microsecond.
    Tiny,
    /// Infinite, or so large that the milliseconds overflow 64 bits.
    Huge,
    /// `m * 2^e` with the top bit of `m` set.
    Exact { m: u64, e: i32 },
}

/// Significant decimal digits kept before the rest is folded into a sticky
/// digit; enough to round every number in the exact range correctly.
const KEEP_DIGITS: usize = 200;

/// Reads a number with `strtold`'s grammar (no leading space, optional
/// sign, decimal or `0x` hexadecimal, `inf`/`infinity`), requiring the
/// whole argument to be consumed. `None` for anything Redis's `string2ld`
/// rejects: syntax, NaN, overflow to infinity, underflow to zero.
fn parse_extended(s: &[u8]) -> Option<(bool, Magnitude)> {
    if s.is_empty() || s.len() >= 5 * 1024 || s.contains(&0) {
        return None;
    }
    let (neg, body) = match s[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
        return Some((neg, Magnitude::Huge));
    }
    let mag = if body.len() > 2 && body[0] == b'0' && (body[1] | 0x20) == b'x' {
        parse_hex(&body[2..])?
    } else {
        parse_decimal(body)?
    };
    Some((neg, mag))
}

fn parse_decimal(s: &[u8]) -> Option<Magnitude> {
    let mut i = 0;
    let mut a = Big::zero();
    let mut kept = 0usize;
    let mut exp10: i64 = 0;
    let mut sticky = false;
    let mut digits = 0usize;
    let mut seen_point = false;
    while i < s.len() {
        let c = s[i];
        if c == b'.' && !seen_point {
            seen_point = true;
        } else if c.is_ascii_digit() {
            digits += 1;
            let d = (c - b'0') as u64;
            if kept == 0 && d == 0 {
                if seen_point {
                    exp10 -= 1;
                }
            } else if kept < KEEP_DIGITS {
                a.mul_add(10, d);
                kept += 1;
                if seen_point {
                    exp10 -= 1;
                }
            } else {
                sticky |= d != 0;
                if !seen_point {
                    exp10 += 1;
                }
            }
        } else {
            break;
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if i < s.len() {
        exp10 = exp10.checked_add(parse_exponent(&s[i..])?)?;
    }
    if kept == 0 {
        return Some(Magnitude::Zero);
    }
    if sticky {
        a.mul_add(10, 1);
        kept += 1;
        exp10 -= 1;
    }
    // The value lies in [10^mag, 10^(mag+1)).
    let mag = kept as i64 - 1 + exp10;
    let lead = a.leading_decimal(kept);
    // LDBL_MAX is 1.18973149535723176502e4932; the smallest subnormal is
    // about 3.6452e-4951, and half of it rounds to zero (an error).
    if mag > 4932 || (mag == 4932 && lead > 1.189_731_495_357_231_8) {
        return None;
    }
    if mag < -4951 || (mag == -4951 && lead <= 1.822_599_765_941_237_3) {
        return None;
    }
    if mag < -40 {
        return Some(Magnitude::Tiny);
    }
    if mag > 30 {
        return Some(Magnitude::Huge);
    }
    let (m, e) = if exp10 >= 0 {
        let mut n = a;
        for _ in 0..exp10 {
            n.mul_add(10, 0);
        }
        n.round_to_64()
    } else {
        let mut den = Big::from_u64(1);
        for _ in 0..-exp10 {
            den.mul_add(10, 0);
        }
        divide_to_64(&a, &den)
    };
    Some(Magnitude::Exact { m, e })
}

/// Parses `e[sign]digits`; the exponent saturates far beyond any range.
fn parse_exponent(s: &[u8]) -> Option<i64> {
    if s.len() < 2 || (s[0] | 0x20) != b'e' {
        return None;
    }
    parse_signed_digits(&s[1..])
}

fn parse_signed_digits(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i64 = 0;
    for &c in digits {
        v = (v * 10 + (c - b'0') as i64).min(1_000_000_000);
    }
    Some(if neg { -v } else { v })
}

fn parse_hex(s: &[u8]) -> Option<Magnitude> {
    let mut h: u128 = 0;
    let mut exp2: i64 = 0;
    let mut sticky = false;
    let mut digits = 0usize;
    let mut seen_point = false;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c == b'.' && !seen_point {
            seen_point = true;
        } else if let Some(d) = (c as char).to_digit(16) {
            digits += 1;
            if h < 1 << 120 {
                h = h * 16 + d as u128;
                if seen_point {
                    exp2 -= 4;
                }
            } else {
                sticky |= d != 0;
                if !seen_point {
                    exp2 += 4;
                }
            }
        } else {
            break;
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if i < s.len() {
        if s.len() - i < 2 || (s[i] | 0x20) != b'p' {
            return None;
        }
        exp2 = exp2.checked_add(parse_signed_digits(&s[i + 1..])?)?;
    }
    if h == 0 {
        return Some(Magnitude::Zero);
    }
    if sticky {
        h = h << 1 | 1;
        exp2 -= 1;
    }
    let top = 127 - h.leading_zeros() as i64 + exp2;
    if top >= 16384 {
        return None;
    }
    // Below half the smallest subnormal (2^-16445) the value rounds to
    // zero; exactly half rounds to even, also zero.
    if top < -16446 || (top == -16446 && h.is_power_of_two()) {
        return None;
    }
    if top < -140 {
        return Some(Magnitude::Tiny);
    }
    if top > 100 {
        return Some(Magnitude::Huge);
    }
    let (m, e) = round64(h, exp2 as i32);
    Some(Magnitude::Exact { m, e })
}

/// Rounds `v * 2^e` to a 64-bit mantissa, to nearest, ties to even.
fn round64(v: u128, e: i32) -> (u64, i32) {
    let bits = 128 - v.leading_zeros() as i32;
    if bits <= 64 {
        let sh = 64 - bits;
        return (((v << sh) as u64), e - sh);
    }
    let sh = bits - 64;
    let mut m = v >> sh;
    let half = 1u128 << (sh - 1);
    let rest = v & ((1u128 << sh) - 1);
    if rest > half || (rest == half && m & 1 == 1) {
        m += 1;
    }
    if m >> 64 != 0 {
        (1u64 << 63, e + sh + 1)
    } else {
        (m as u64, e + sh)
    }
}

/// `ceil(±m * 2^e)` as a signed 64-bit integer; `None` when out of range
/// (where C's conversion yields `i64::MIN`).
fn ceil_ms(neg: bool, m: u64, e: i32) -> Option<i64> {
    let (floor, frac) = if e >= 0 {
        if e >= 64 {
            return None;
        }
        ((m as u128) << e, false)
    } else if e <= -128 {
        (0, true)
    } else {
        let sh = -e as u32;
        let v = m as u128;
        (v >> sh, v & ((1u128 << sh) - 1) != 0)
    };
    if neg {
        // ceil(-x) = -floor(x)
        if floor > 1u128 << 63 {
            return None;
        }
        Some((floor as i128).wrapping_neg() as i64)
    } else {
        let t = floor + frac as u128;
        i64::try_from(t).ok()
    }
}

/// `a / den` rounded to a 64-bit mantissa: `(m, e)` with `m * 2^e`.
fn divide_to_64(a: &Big, den: &Big) -> (u64, i32) {
    // Scale so that the quotient has 66 or 67 bits: two guard bits.
    let s = 66 - (a.bits() as i32 - den.bits() as i32);
    let (num, den) = if s >= 0 {
        (a.shl(s as u32), den.clone())
    } else {
        (a.clone(), den.shl((-s) as u32))
    };
    let (q, rem_zero) = num.div_small_quotient(&den);
    let (m, e) = if rem_zero {
        round64(q, 0)
    } else {
        round64(q << 1 | 1, -1)
    };
    (m, e - s)
}

/// A small unsigned big integer (little-endian 64-bit limbs), just enough
/// for correctly rounded decimal conversion.
#[derive(Debug, Clone)]
struct Big(Vec<u64>);

impl Big {
    fn zero() -> Big {
        Big(Vec::new())
    }

    fn from_u64(v: u64) -> Big {
        let mut b = Big(vec![v]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn mul_add(&mut self, mul: u64, add: u64) {
        let mut carry = add as u128;
        for limb in self.0.iter_mut() {
            let v = *limb as u128 * mul as u128 + carry;
            *limb = v as u64;
            carry = v >> 64;
        }
        if carry != 0 {
            self.0.push(carry as u64);
        }
    }

    fn bits(&self) -> u32 {
        match self.0.last() {
            None => 0,
            Some(&top) => (self.0.len() as u32 - 1) * 64 + (64 - top.leading_zeros()),
        }
    }

    fn bit(&self, i: u32) -> bool {
        let (w, b) = ((i / 64) as usize, i % 64);
        self.0.get(w).is_some_and(|l| l >> b & 1 == 1)
    }

    fn any_below(&self, i: u32) -> bool {
        let (w, b) = ((i / 64) as usize, i % 64);
        self.0.iter().take(w).any(|&l| l != 0)
            || self.0.get(w).is_some_and(|l| l & ((1u64 << b) - 1) != 0)
    }

    fn shl(&self, n: u32) -> Big {
        let (w, b) = ((n / 64) as usize, n % 64);
        let mut out = vec![0u64; w];
        let mut carry = 0u64;
        for &l in &self.0 {
            if b == 0 {
                out.push(l);
            } else {
                out.push(l << b | carry);
                carry = l >> (64 - b);
            }
        }
        if carry != 0 {
            out.push(carry);
        }
        let mut r = Big(out);
        r.trim();
        r
    }

    fn cmp(&self, o: &Big) -> std::cmp::Ordering {
        self.0
            .len()
            .cmp(&o.0.len())
            .then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
    }

    fn sub_assign(&mut self, o: &Big) {
        let mut borrow = 0u64;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let rhs = o.0.get(i).copied().unwrap_or(0);
            let (v1, b1) = limb.overflowing_sub(rhs);
            let (v2, b2) = v1.overflowing_sub(borrow);
            *limb = v2;
            borrow = (b1 || b2) as u64;
        }
        self.trim();
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// `self / den` for a quotient below 2^70, by shift and subtract;
    /// returns it and whether the remainder is zero.
    fn div_small_quotient(&self, den: &Big) -> (u128, bool) {
        let mut rem = self.clone();
        let mut q: u128 = 0;
        for i in (0..70).rev() {
            let d = den.shl(i);
            if rem.cmp(&d) != std::cmp::Ordering::Less {
                rem.sub_assign(&d);
                q |= 1 << i;
            }
        }
        (q, rem.is_zero())
    }

    /// Rounds to a 64-bit mantissa: `(m, e)` with `m * 2^e`.
    fn round_to_64(&self) -> (u64, i32) {
        let bits = self.bits();
        if bits <= 64 {
            let v = self.0.first().copied().unwrap_or(0);
            return round64(v as u128, 0);
        }
        let sh = bits - 64;
        let mut m: u128 = 0;
        for i in (sh..bits).rev() {
            m = m << 1 | self.bit(i) as u128;
        }
        let guard = self.bit(sh - 1);
        let rest = self.any_below(sh - 1);
        if guard && (rest || m & 1 == 1) {
            m += 1;
        }
        if m >> 64 != 0 {
            (1u64 << 63, sh as i32 + 1)
        } else {
            (m as u64, sh as i32)
        }
    }

    /// The leading digits as `d.ddd…` (for range checks), given the number
    /// of decimal digits.
    fn leading_decimal(&self, digits: usize) -> f64 {
        // Only used near the extremes, where 17 digits are plenty.
        let mut v = self.clone();
        let mut drop = digits.saturating_sub(18);
        while drop > 0 {
            v.div_small(10);
            drop -= 1;
        }
        let top =
            v.0.iter()
                .rev()
                .fold(0f64, |acc, &l| acc * 18446744073709551616.0 + l as f64);
        let shown = digits.min(18);
        top / 10f64.powi(shown as i32 - 1)
    }

    fn div_small(&mut self, d: u64) {
        let mut rem: u128 = 0;
        for limb in self.0.iter_mut().rev() {
            let cur = rem << 64 | *limb as u128;
            *limb = (cur / d as u128) as u64;
            rem = cur % d as u128;
        }
        self.trim();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn millisecond_timeouts() {
        let ms = |s: &str| parse_timeout_ms(s.as_bytes());
        assert_eq!(ms("0"), Ok(0));
        assert_eq!(ms("100"), Ok(100));
        assert_eq!(ms("9223372036854775807"), Ok(i64::MAX as u64));
        assert_eq!(ms("-1"), Err(Error::TimeoutNegative));
        assert_eq!(ms("-9223372036854775808"), Err(Error::TimeoutNegative));
        for bad in [
            "",
            "1.5",
            "abc",
            "-0",
            "+5",
            "01",
            " 1",
            "9223372036854775808",
        ] {
            assert_eq!(ms(bad), Err(Error::TimeoutNotInteger), "{bad:?}");
        }
    }

    fn ok(s: &str) -> u64 {
        parse_timeout(s.as_bytes()).unwrap_or_else(|e| panic!("{s}: {e:?}"))
    }

    fn err(s: &str) -> Error {
        parse_timeout(s.as_bytes())
            .err()
            .unwrap_or_else(|| panic!("{s} parsed"))
    }

    #[test]
    fn plain_values() {
        assert_eq!(ok("0"), 0);
        assert_eq!(ok("-0"), 0);
        assert_eq!(ok("1"), 1000);
        assert_eq!(ok("0.5"), 500);
        assert_eq!(ok(".5"), 500);
        assert_eq!(ok("5."), 5000);
        assert_eq!(ok("+0.5"), 500);
        assert_eq!(ok("1e3"), 1_000_000);
        assert_eq!(ok("1E-3"), 1);
        assert_eq!(ok("0.1"), 100);
        assert_eq!(ok("2.5e-1"), 250);
        assert_eq!(ok("000123.000"), 123_000);
    }

    #[test]
    fn rounding_as_extended_precision() {
        // Tiny positive values round up to a millisecond, tiny negative
        // ones to zero (forever).
        assert_eq!(ok("0.001"), 1);
        assert_eq!(ok("0.0001"), 1);
        assert_eq!(ok("1e-400"), 1);
        assert_eq!(ok("-0.0001"), 0);
        assert_eq!(ok("-0.0009"), 0);
        assert_eq!(ok("-0.001"), 0);
        assert_eq!(ok("-1e-3"), 0);
        assert_eq!(err("-0.0011"), Error::TimeoutNegative);
        assert_eq!(err("-0.002"), Error::TimeoutNegative);
        assert_eq!(ok("9223372036854775.807"), i64::MAX as u64);
        assert_eq!(ok("9223372036854775.806"), i64::MAX as u64 - 1);
        assert_eq!(err("9223372036854775.8075"), Error::TimeoutNegative);
        assert_eq!(err("9223372036854775.808"), Error::TimeoutNegative);
    }

    #[test]
    fn cases_checked_against_redis_7_0() {
        // Each was sent to redis-server 7.0.15 (x86-64) inside MULTI.
        for s in [
            "-0.00099999999999999999999",
            "-.001",
            "-0.001e0",
            "-1e-400",
            "-0x1p-10",
            "-0x1.0624dd2f1a9fbe76p-10",
            "9223372036854775.8070000001",
            "92233720368547758.07e-1",
            "0x20c49ba5e353f7p0",
            "9.2e15",
            "3.6e-4951",
            "1.9e-4951",
            "0x1p-16445",
            "00000",
            "0.",
            "+.5",
            "1e-0",
            "0x1.",
            "0x.1",
            "1.e3",
            "0e99999999999999999999",
            "-0e+19",
        ] {
            assert!(parse_timeout(s.as_bytes()).is_ok(), "{s}");
        }
        for s in [
            "-0.0010000000000000000001",
            "-0.00100000000000000001",
            "-0x1.0624dd2f1a9fcp-10",
            "-0x1.0624dd2f1a9fbe77p-10",
            "9223372036854775.8074",
            "9223372036854775.80751",
            "0x20c49ba5e353f8p0",
            "1e16",
            "9.3e15",
            "1e4932",
            "1.18973149535723176503e4932",
            "0x1p16383",
            "infINITY",
            "-907.2",
        ] {
            assert_eq!(err(s), Error::TimeoutNegative, "{s}");
        }
        for s in [
            "1.2e4932",
            "1.8e-4951",
            "1e-4951",
            "0x1p16384",
            "0x1p-16446",
            "0x1p-16447",
            ".",
            "-",
            "+",
            "0xg",
            ".e3",
            "1d",
            "0b1",
            "1,5",
            "nan(123)",
            "+nan",
            "1e-99999999999999999999",
            "1e99999999999999999999",
        ] {
            assert_eq!(err(s), Error::TimeoutNotFloat, "{s}");
        }
    }

    #[test]
    fn hexadecimal() {
        assert_eq!(ok("0x10"), 16_000);
        assert_eq!(ok("0X.8"), 500);
        assert_eq!(ok("0x1p-3"), 125);
        assert_eq!(ok("-0x0"), 0);
        assert_eq!(err("0x"), Error::TimeoutNotFloat);
        assert_eq!(err("0x1p"), Error::TimeoutNotFloat);
        assert_eq!(err("0x1p-20000"), Error::TimeoutNotFloat);
        assert_eq!(err("0x7FFFFFFFFFFFFF"), Error::TimeoutNegative);
    }

    #[test]
    fn rejected_and_negative() {
        for s in [
            "", "x", "nan", "-nan", "1e", "1e+", " 1", "1 ", "1_0", "..5", "1.2.3", "e5", "0.5\0",
            "1e-5000", "1e5000", "infinit",
        ] {
            assert_eq!(err(s), Error::TimeoutNotFloat, "{s:?}");
        }
        for s in [
            "-1", "inf", "-inf", "Infinity", "1e30", "1e4000", "1e17", "-1e4000",
        ] {
            assert_eq!(err(s), Error::TimeoutNegative, "{s:?}");
        }
        assert_eq!(err(&"1".repeat(5120)), Error::TimeoutNotFloat);
    }
}
