//! Parsing of sorted-set scores and ranges exactly as Redis 7.0 reads them,
//! shared by every sorted-set command.
//!
//! Redis reads scores with C's `strtod`, so it accepts what `strtod` does:
//! hexadecimal (`0x10`), `inf`/`infinity` in any case, a leading `+`. Score
//! arguments (ZADD, ZINCRBY) must be consumed whole and must not overflow;
//! range ends (ZRANGEBYSCORE) are read as C strings, so overflow gives
//! ±inf, an empty string reads as 0 and leading blanks are skipped.

use bytes::Bytes;

use crate::error::{CmdResult, Error};
use crate::value::zset::{LexBound, LexRange, ScoreRange};

/// What C's `strtod` makes of the start of a string.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Strtod {
    /// The value (0 when nothing was converted).
    pub value: f64,
    /// Bytes consumed (0 when nothing was converted).
    pub used: usize,
    /// Whether `strtod` would set `errno = ERANGE` (overflow, or underflow
    /// to zero).
    pub range_error: bool,
}

fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn eat_word(s: &[u8], at: usize, word: &[u8]) -> bool {
    s.len() >= at + word.len() && s[at..at + word.len()].eq_ignore_ascii_case(word)
}

/// C's `strtod` (C locale) on `s`.
pub(crate) fn strtod(s: &[u8]) -> Strtod {
    let none = Strtod {
        value: 0.0,
        used: 0,
        range_error: false,
    };
    let (neg, mut i) = crate::args::c_sign(s);
    let signed = |v: f64| if neg { -v } else { v };
    if eat_word(s, i, b"inf") {
        let used = if eat_word(s, i, b"infinity") {
            i + 8
        } else {
            i + 3
        };
        return Strtod {
            value: signed(f64::INFINITY),
            used,
            range_error: false,
        };
    }
    if eat_word(s, i, b"nan") {
        let mut used = i + 3;
        // An optional "(n-char-sequence)".
        if s.get(used) == Some(&b'(') {
            let body = s[used + 1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_');
            let close = used + 1 + body.count();
            if s.get(close) == Some(&b')') {
                used = close + 1;
            }
        }
        return Strtod {
            value: f64::NAN,
            used,
            range_error: false,
        };
    }
    if s.get(i) == Some(&b'0') && matches!(s.get(i + 1), Some(b'x' | b'X')) {
        if let Some((v, used, range_error)) = hex_float(s, i + 2) {
            return Strtod {
                value: signed(v),
                used,
                range_error,
            };
        }
        // "0x" without hex digits reads as the "0" alone.
        return Strtod {
            value: signed(0.0),
            used: i + 1,
            range_error: false,
        };
    }
    let start = i;
    let int_digits = s[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    i += int_digits;
    let mut frac_digits = 0;
    if s.get(i) == Some(&b'.') {
        frac_digits = s[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if int_digits + frac_digits > 0 {
            i += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return none;
    }
    let mantissa_nonzero = s[start..i].iter().any(|c| (b'1'..=b'9').contains(c));
    if matches!(s.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(s.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exp_digits = s[j.min(s.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if exp_digits > 0 {
            i = j + exp_digits;
        }
    }
    let text = std::str::from_utf8(&s[start..i]).unwrap_or("0");
    let v: f64 = text.parse().unwrap_or(0.0);
    let range_error = v.is_infinite() || (v == 0.0 && mantissa_nonzero);
    Strtod {
        value: signed(v),
        used: i,
        range_error,
    }
}

/// Reads the hexadecimal digits (and optional `.` and `p` exponent) after
/// `0x`; None if no hex digit follows.
fn hex_float(s: &[u8], mut i: usize) -> Option<(f64, usize, bool)> {
    let mut mant: u64 = 0;
    let mut exp: i64 = 0;
    let mut digits = 0;
    let mut seen_dot = false;
    let mut nonzero = false;
    while let Some(&c) = s.get(i) {
        if c == b'.' && !seen_dot {
            seen_dot = true;
            i += 1;
            continue;
        }
        let Some(d) = (c as char).to_digit(16) else {
            break;
        };
        digits += 1;
        nonzero |= d != 0;
        if mant >> 60 == 0 {
            mant = mant * 16 + u64::from(d);
            if seen_dot {
                exp -= 4;
            }
        } else if !seen_dot {
            // Beyond 64 bits of precision: keep the magnitude only.
            exp += 4;
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if matches!(s.get(i), Some(b'p' | b'P')) {
        let mut j = i + 1;
        let neg = match s.get(j) {
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
        let n = s[j.min(s.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if n > 0 {
            let mut e: i64 = 0;
            for &c in &s[j..j + n] {
                e = (e * 10 + i64::from(c - b'0')).min(1 << 20);
            }
            exp += if neg { -e } else { e };
            i = j + n;
        }
    }
    let mut v = mant as f64;
    // Scale in steps that cannot overflow the exponent of powi.
    let mut e = exp.clamp(-4000, 4000) as i32;
    while e != 0 {
        let step = e.clamp(-1000, 1000);
        v *= 2f64.powi(step);
        e -= step;
    }
    let range_error = v.is_infinite() || (v == 0.0 && nonzero);
    Some((v, i, range_error))
}

/// Reads a score argument (ZADD, ZINCRBY) as Redis's `getDoubleFromObject`
/// does: the whole argument, no leading blank, no overflow, no NaN.
pub(crate) fn parse_score(s: &[u8]) -> CmdResult<f64> {
    let r = strtod(s);
    let bad = s.is_empty()
        || is_c_space(s[0])
        || r.used != s.len()
        || (r.range_error && (r.value.is_infinite() || r.value == 0.0))
        || r.value.is_nan();
    if bad {
        Err(Error::NotFloat)
    } else {
        Ok(r.value)
    }
}

/// The C-string view of an argument: up to its first NUL byte.
fn c_str(s: &[u8]) -> &[u8] {
    match s.iter().position(|&c| c == 0) {
        Some(n) => &s[..n],
        None => s,
    }
}

/// One end of a score range: `[(]float`.
fn score_end(s: &[u8]) -> CmdResult<(f64, bool)> {
    let s = c_str(s);
    let (body, exclusive) = match s.first() {
        Some(b'(') => (&s[1..], true),
        _ => (s, false),
    };
    let r = strtod(body);
    if r.used != body.len() || r.value.is_nan() {
        return Err(Error::MinMaxNotFloat);
    }
    Ok((r.value, exclusive))
}

/// Parses a ZRANGEBYSCORE-style interval (`(1.5`, `-inf`, `+inf`, …);
/// "ERR min or max is not a float" if either end is malformed.
pub(crate) fn parse_score_range(min: &[u8], max: &[u8]) -> CmdResult<ScoreRange> {
    let (min, min_exclusive) = score_end(min)?;
    let (max, max_exclusive) = score_end(max)?;
    Ok(ScoreRange {
        min,
        min_exclusive,
        max,
        max_exclusive,
    })
}

/// One end of a lex range: `-`, `+`, `[member` or `(member`.
fn lex_end(s: &[u8]) -> CmdResult<LexBound> {
    // `-` and `+` must stand alone (Redis tests the byte after them for
    // the C string terminator).
    let alone = s.len() == 1 || s.get(1) == Some(&0);
    match s.first() {
        Some(b'+') if alone => Ok(LexBound::Max),
        Some(b'-') if alone => Ok(LexBound::Min),
        Some(b'(') => Ok(LexBound::Exclusive(Bytes::copy_from_slice(&s[1..]))),
        Some(b'[') => Ok(LexBound::Inclusive(Bytes::copy_from_slice(&s[1..]))),
        _ => Err(Error::MinMaxNotLex),
    }
}

/// Parses a ZRANGEBYLEX-style interval; "ERR min or max not valid string
/// range item" if either end is malformed.
pub(crate) fn parse_lex_range(min: &[u8], max: &[u8]) -> CmdResult<LexRange> {
    Ok(LexRange {
        min: lex_end(min)?,
        max: lex_end(max)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sc(s: &str) -> CmdResult<f64> {
        parse_score(s.as_bytes())
    }

    #[test]
    fn strtod_prefixes() {
        assert_eq!(
            strtod(b"  12abc"),
            Strtod {
                value: 12.0,
                used: 4,
                range_error: false
            }
        );
        assert_eq!(strtod(b"1e").used, 1);
        assert_eq!(strtod(b"1e+").used, 1);
        assert_eq!(strtod(b"1.5e-2x").used, 6);
        assert_eq!(strtod(b".").used, 0);
        assert_eq!(strtod(b"+").used, 0);
        assert_eq!(strtod(b"").used, 0);
        assert_eq!(strtod(b"-.5").value, -0.5);
        assert_eq!(strtod(b"infinit").used, 3);
        assert_eq!(strtod(b"-Infinity").value, f64::NEG_INFINITY);
        assert_eq!(strtod(b"nan(123)").used, 8);
        assert!(strtod(b"nan").value.is_nan());
        assert_eq!(strtod(b"0x").used, 1);
        assert_eq!(strtod(b"0x1p3").value, 8.0);
        assert_eq!(strtod(b"-0x.8").value, -0.5);
        assert_eq!(strtod(b"0x1P-2").value, 0.25);
        assert!(strtod(b"1e400").range_error);
        assert!(strtod(b"1e-400").range_error);
        assert!(!strtod(b"0e-400").range_error);
        assert!(!strtod(b"0.000").range_error);
    }

    #[test]
    fn scores_follow_get_double_from_object() {
        assert_eq!(sc("1.5"), Ok(1.5));
        assert_eq!(sc("0x10"), Ok(16.0));
        assert_eq!(sc("+inf"), Ok(f64::INFINITY));
        assert_eq!(sc("-INF"), Ok(f64::NEG_INFINITY));
        assert_eq!(sc("4.9e-324"), Ok(5e-324));
        for bad in [
            "", " 1", "1 ", "abc", "nan", "1e400", "1e-400", "1e", "(1", "1\u{0}",
        ] {
            assert_eq!(sc(bad), Err(Error::NotFloat), "{bad:?}");
        }
    }

    #[test]
    fn score_ranges() {
        let r = parse_score_range(b"(1", b"+inf").unwrap_or(ScoreRange::inclusive(0.0, 0.0));
        assert_eq!(
            r,
            ScoreRange {
                min: 1.0,
                min_exclusive: true,
                max: f64::INFINITY,
                max_exclusive: false
            }
        );
        let r = parse_score_range(b"", b"(").unwrap_or(ScoreRange::inclusive(9.0, 9.0));
        assert_eq!(
            r,
            ScoreRange {
                min: 0.0,
                min_exclusive: false,
                max: 0.0,
                max_exclusive: true
            }
        );
        assert_eq!(
            parse_score_range(b" 2", b"1e400").map(|r| (r.min, r.max)),
            Ok((2.0, f64::INFINITY))
        );
        assert_eq!(
            parse_score_range(b"1\x00junk", b"2").map(|r| r.min),
            Ok(1.0)
        );
        for bad in [&b"x"[..], b"2 ", b"nan", b"(nan", b"((1", b"+", b" "] {
            assert_eq!(parse_score_range(bad, b"1"), Err(Error::MinMaxNotFloat));
            assert_eq!(parse_score_range(b"1", bad), Err(Error::MinMaxNotFloat));
        }
    }

    #[test]
    fn lex_ranges() {
        let r = parse_lex_range(b"[a", b"(b").unwrap_or(LexRange {
            min: LexBound::Min,
            max: LexBound::Min,
        });
        assert_eq!(r.min, LexBound::Inclusive(Bytes::from_static(b"a")));
        assert_eq!(r.max, LexBound::Exclusive(Bytes::from_static(b"b")));
        assert_eq!(
            parse_lex_range(b"-", b"+").map(|r| (r.min, r.max)),
            Ok((LexBound::Min, LexBound::Max))
        );
        assert_eq!(
            parse_lex_range(b"+\x00x", b"[").map(|r| r.min),
            Ok(LexBound::Max)
        );
        for bad in [&b""[..], b"a", b"++", b"-x", b"]"] {
            assert_eq!(parse_lex_range(bad, b"+"), Err(Error::MinMaxNotLex));
            assert_eq!(parse_lex_range(b"-", bad), Err(Error::MinMaxNotLex));
        }
    }
}
