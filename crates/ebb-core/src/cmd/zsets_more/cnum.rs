//! Number reading that follows the C library calls Redis makes for these
//! commands: `strtod` for weights, `strtold` for blocking timeouts and
//! `strtoul` for scan cursors. They accept more than Rust's parsers (hex
//! floats, signs on cursors) and reject what overflows the C type.

use crate::error::{CmdResult, Error};

/// The range of a C floating type, as powers of ten and of two.
#[derive(Clone, Copy)]
struct CType {
    /// Largest finite value is below `max_lead * 10^max10`.
    max10: i64,
    max_lead: f64,
    /// Values below `min_lead * 10^min10` round to zero.
    min10: i64,
    min_lead: f64,
    /// Largest finite value is below `2^max2`.
    max2: i64,
    /// Values below `2^min2` round to zero.
    min2: i64,
    /// Whether the type is f64 itself, so Rust's own rounding decides.
    is_f64: bool,
}

/// C `double`.
const DOUBLE: CType = CType {
    max10: 308,
    max_lead: 1.797_693_134_862_315_7,
    min10: -324,
    min_lead: 2.470_328_229_206_232_7,
    max2: 1024,
    min2: -1075,
    is_f64: true,
};

/// x86-64 C `long double` (80-bit extended precision).
const LONG_DOUBLE: CType = CType {
    max10: 4932,
    max_lead: 1.189_731_495_357_231_8,
    min10: -4951,
    min_lead: 1.822_599_765_941_237_3,
    max2: 16384,
    min2: -16446,
    is_f64: false,
};

/// Where a finite, nonzero literal sits relative to a type's range.
enum Magnitude {
    Fits,
    Overflow,
    Underflow,
}

/// Reads a double as Redis's `getDoubleFromObject` does: the whole string
/// must be a `strtod` number (decimal, hex, `inf`), no leading space, no
/// NaN, and no overflow or underflow to zero.
pub(super) fn parse_double(s: &[u8]) -> Option<f64> {
    parse_real(s, DOUBLE)
}

/// Reads a blocking command's timeout (seconds, as `strtold` reads them)
/// and returns it in milliseconds, rounded up, 0 meaning "forever".
/// Values too large for a 64-bit millisecond count turn negative in C's
/// conversion, which is why Redis calls them negative.
pub(super) fn parse_timeout(s: &[u8]) -> CmdResult<u64> {
    let secs = parse_real(s, LONG_DOUBLE).ok_or(Error::TimeoutNotFloat)?;
    // A negative timeout that rounds up to zero milliseconds is accepted.
    if (-0.001..0.0).contains(&secs) {
        return Ok(0);
    }
    // long double holds about 19 digits: plain decimals are converted
    // exactly rather than through f64's 16.
    let ms = decimal_ms_ceil(s).unwrap_or_else(|| {
        let f = (secs * 1000.0).ceil();
        if (-9.3e18..9.3e18).contains(&f) {
            f as i128
        } else {
            i128::MIN
        }
    });
    u64::try_from(ms)
        .ok()
        .filter(|&v| v <= i64::MAX as u64)
        .ok_or(Error::TimeoutNegative)
}

/// `ceil(s * 1000)` computed on the decimal digits of a plain decimal
/// literal with at most 30 significant digits; None for other forms.
fn decimal_ms_ceil(s: &[u8]) -> Option<i128> {
    let (neg, body) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (mantissa, exp) = match body.iter().position(|&c| (c | 0x20) == b'e') {
        Some(i) => (
            &body[..i],
            std::str::from_utf8(&body[i + 1..])
                .ok()?
                .parse::<i64>()
                .ok()?,
        ),
        None => (body, 0),
    };
    let frac = mantissa
        .iter()
        .position(|&c| c == b'.')
        .map_or(0, |p| mantissa.len() - p - 1);
    let mut m: i128 = 0;
    let mut significant = 0;
    for &c in mantissa {
        if c == b'.' {
            continue;
        }
        if !c.is_ascii_digit() {
            return None;
        }
        if m > 0 || c != b'0' {
            significant += 1;
            if significant > 30 {
                return None;
            }
        }
        m = m * 10 + i128::from(c - b'0');
    }
    let scale = exp.checked_sub(frac as i64)?.checked_add(3)?;
    let ms = if m == 0 {
        0
    } else if scale >= 0 {
        if scale > 8 {
            // Beyond any millisecond count C can hold.
            return Some(i128::MIN);
        }
        m * 10i128.pow(scale as u32)
    } else if -scale > 38 {
        i128::from(!neg)
    } else {
        let d = 10i128.pow((-scale) as u32);
        // Rounding up: a positive remainder adds one, a negative one truncates.
        m / d + i128::from(!neg && m % d != 0)
    };
    Some(if neg { -ms } else { ms })
}

/// Reads a SCAN cursor as `strtoul(s, &end, 10)` with Redis's checks: no
/// leading space, nothing after the number, no overflow. A sign is allowed
/// (a negative cursor wraps around) and the empty string reads as 0.
pub(super) fn parse_cursor(s: &[u8]) -> Option<u64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        // strtoul parses nothing; only the empty string ends right there.
        return if s.is_empty() { Some(0) } else { None };
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(if neg { v.wrapping_neg() } else { v })
}

fn parse_real(s: &[u8], ty: CType) -> Option<f64> {
    if s.is_empty() || s.len() >= 5 * 1024 || is_c_space(s[0]) {
        return None;
    }
    let (neg, body) = match s[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let sign = if neg { -1.0 } else { 1.0 };
    if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
        return Some(sign * f64::INFINITY);
    }
    if body.len() > 1 && body[0] == b'0' && (body[1] | 0x20) == b'x' {
        return parse_hex(&body[2..], ty).map(|v| sign * v);
    }
    parse_decimal(body, ty).map(|v| sign * v)
}

fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Unsigned decimal: `digits [. digits] [e [sign] digits]`, with at least
/// one mantissa digit.
fn parse_decimal(b: &[u8], ty: CType) -> Option<f64> {
    let mut i = 0;
    let mut int_digits = 0usize;
    let mut frac_digits = 0usize;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        int_digits += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            frac_digits += 1;
        }
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    let mantissa_end = i;
    let mut exp: i64 = 0;
    if i < b.len() && (b[i] | 0x20) == b'e' {
        let mut j = i + 1;
        let eneg = match b.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        let start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            exp = (exp * 10 + i64::from(b[j] - b'0')).min(1 << 40);
            j += 1;
        }
        if j == start {
            return None;
        }
        if eneg {
            exp = -exp;
        }
        i = j;
    }
    if i != b.len() {
        return None;
    }
    let text = std::str::from_utf8(b).ok()?;
    let v: f64 = text.parse().ok()?;
    let mantissa: Vec<u8> = b[..mantissa_end]
        .iter()
        .copied()
        .filter(u8::is_ascii_digit)
        .collect();
    let Some(first) = mantissa.iter().position(|&c| c != b'0') else {
        return Some(0.0);
    };
    // Power of ten of the first significant digit, and the leading digits.
    let e10 = (int_digits as i64 - 1 - first as i64) + exp;
    let lead = mantissa[first..]
        .iter()
        .take(18)
        .enumerate()
        .fold(0.0, |acc, (k, &c)| {
            acc + f64::from(c - b'0') * 10f64.powi(-(k as i32))
        });
    let mag = if e10 > ty.max10 || (e10 == ty.max10 && lead >= ty.max_lead) {
        Magnitude::Overflow
    } else if e10 < ty.min10 || (e10 == ty.min10 && lead < ty.min_lead) {
        Magnitude::Underflow
    } else {
        Magnitude::Fits
    };
    settle(v, mag, ty)
}

/// Unsigned hex float after the `0x`: `hexdigits [. hexdigits] [p [sign] digits]`.
fn parse_hex(b: &[u8], ty: CType) -> Option<f64> {
    let mut i = 0;
    let mut mant: u64 = 0;
    let mut bexp: i64 = 0;
    let mut any = false;
    let mut seen_point = false;
    while i < b.len() {
        let c = b[i];
        if c == b'.' && !seen_point {
            seen_point = true;
            i += 1;
            continue;
        }
        let Some(d) = (c as char).to_digit(16) else {
            break;
        };
        any = true;
        if mant >> 60 == 0 {
            mant = (mant << 4) | u64::from(d);
            if seen_point {
                bexp -= 4;
            }
        } else if !seen_point {
            bexp += 4;
        }
        i += 1;
    }
    if !any {
        return None;
    }
    if i < b.len() && (b[i] | 0x20) == b'p' {
        let mut j = i + 1;
        let eneg = match b.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        let start = j;
        let mut e: i64 = 0;
        while j < b.len() && b[j].is_ascii_digit() {
            e = (e * 10 + i64::from(b[j] - b'0')).min(1 << 40);
            j += 1;
        }
        if j == start {
            return None;
        }
        bexp += if eneg { -e } else { e };
        i = j;
    }
    if i != b.len() {
        return None;
    }
    if mant == 0 {
        return Some(0.0);
    }
    let top = bexp + 63 - i64::from(mant.leading_zeros());
    let mag = if top >= ty.max2 {
        Magnitude::Overflow
    } else if top < ty.min2 {
        Magnitude::Underflow
    } else {
        Magnitude::Fits
    };
    let e = bexp.clamp(-3000, 3000) as i32;
    let v = mant as f64 * 2f64.powi(e / 2) * 2f64.powi(e - e / 2);
    settle(v, mag, ty)
}

/// The value to use for a nonzero literal: rejected when the C type cannot
/// hold it; kept at the edge of f64 when only f64 cannot.
fn settle(v: f64, mag: Magnitude, ty: CType) -> Option<f64> {
    if ty.is_f64 {
        return (v.is_finite() && v != 0.0).then_some(v);
    }
    match mag {
        Magnitude::Overflow | Magnitude::Underflow => None,
        Magnitude::Fits if v == 0.0 => Some(f64::from_bits(1)),
        Magnitude::Fits => Some(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_follow_strtod() {
        assert_eq!(parse_double(b"1.5"), Some(1.5));
        assert_eq!(parse_double(b"+.5e1"), Some(5.0));
        assert_eq!(parse_double(b"1."), Some(1.0));
        assert_eq!(parse_double(b"0x10"), Some(16.0));
        assert_eq!(parse_double(b"0x1p-1"), Some(0.5));
        assert_eq!(parse_double(b"-0X1.8P1"), Some(-3.0));
        assert_eq!(parse_double(b"inf"), Some(f64::INFINITY));
        assert_eq!(parse_double(b"-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_double(b"1e308"), Some(1e308));
        assert_eq!(parse_double(b"2e-310"), Some(2e-310));
        assert_eq!(parse_double(b"0e-99999"), Some(0.0));
        for bad in [
            &b""[..],
            b" 1",
            b"1 ",
            b"nan",
            b"1e400",
            b"1e-400",
            b"0x1p2000",
            b"0x",
            b"1e",
            b"1d",
            b".",
            b"-",
            b"1_0",
            b"infinit",
        ] {
            assert_eq!(
                parse_double(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn timeouts_follow_strtold_and_round_up() {
        assert_eq!(parse_timeout(b"0"), Ok(0));
        assert_eq!(parse_timeout(b"-0"), Ok(0));
        assert_eq!(parse_timeout(b"0.0001"), Ok(1));
        assert_eq!(parse_timeout(b"1.5"), Ok(1500));
        assert_eq!(parse_timeout(b"0x10"), Ok(16000));
        assert_eq!(parse_timeout(b"1e-4000"), Ok(1));
        assert_eq!(parse_timeout(b"-0.0001"), Ok(0));
        assert_eq!(parse_timeout(b"-0.001"), Ok(0));
        assert_eq!(
            parse_timeout(b"9223372036854775"),
            Ok(9_223_372_036_854_775_000)
        );
        assert_eq!(parse_timeout(b"-0.0011"), Err(Error::TimeoutNegative));
        assert_eq!(parse_timeout(b"-1"), Err(Error::TimeoutNegative));
        assert_eq!(parse_timeout(b"inf"), Err(Error::TimeoutNegative));
        assert_eq!(parse_timeout(b"1e4000"), Err(Error::TimeoutNegative));
        assert_eq!(parse_timeout(b"9223372036854775.807"), Ok(i64::MAX as u64));
        assert_eq!(
            parse_timeout(b"9223372036854776"),
            Err(Error::TimeoutNegative)
        );
        assert_eq!(parse_timeout(b"1e300"), Err(Error::TimeoutNegative));
        assert_eq!(parse_timeout(b"0.0015"), Ok(2));
        assert_eq!(parse_timeout(b"15e-1"), Ok(1500));
        for bad in [
            &b"abc"[..],
            b"nan",
            b" 1",
            b"1e5000",
            b"1e-5000",
            b"0x1p-20000",
            b"",
        ] {
            assert_eq!(parse_timeout(bad), Err(Error::TimeoutNotFloat));
        }
    }

    #[test]
    fn cursors_follow_strtoul() {
        assert_eq!(parse_cursor(b"0"), Some(0));
        assert_eq!(parse_cursor(b""), Some(0));
        assert_eq!(parse_cursor(b"+1"), Some(1));
        assert_eq!(parse_cursor(b"01"), Some(1));
        assert_eq!(parse_cursor(b"-1"), Some(u64::MAX));
        assert_eq!(parse_cursor(b"18446744073709551615"), Some(u64::MAX));
        for bad in [
            &b"18446744073709551616"[..],
            b" 1",
            b"1 ",
            b"-",
            b"+",
            b"1.5",
            b"0x1",
            b"abc",
        ] {
            assert_eq!(parse_cursor(bad), None);
        }
    }
}
