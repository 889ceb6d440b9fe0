//! The x87 80-bit `long double` arithmetic INCRBYFLOAT is defined by: Redis
//! parses both operands with `strtold`, adds them with a 64-bit significand
//! and stores `%.17Lf` with trailing zeros removed. Doing the same here, in
//! software, is what makes replies and stored values match Redis byte for
//! byte (`0.1 + 0.2` is `0.3`, not `0.30000000000000004`).

use std::cmp::Ordering;

/// Exponent of the lowest significand bit of the smallest subnormal.
const MIN_EXP: i64 = -16445;
/// Exponent of the lowest significand bit of the largest finite values.
const MAX_EXP: i64 = 16320;
/// Longest input Redis accepts (its parse buffer is 5 KiB with the NUL).
const MAX_INPUT: usize = 5 * 1024;
/// Exponent values beyond this are saturated while parsing.
const EXP_SATURATION: i64 = 1 << 40;

/// An extended-precision value: `±mant × 2^exp`, or an infinity.
/// Normal values have bit 63 of `mant` set; subnormals have `exp == MIN_EXP`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LongDouble {
    /// A finite value (zero when `mant == 0`).
    Finite {
        /// Sign.
        neg: bool,
        /// Significand, integer bit explicit.
        mant: u64,
        /// Power of two of the lowest significand bit.
        exp: i64,
    },
    /// An infinity.
    Inf {
        /// Sign.
        neg: bool,
    },
}

impl LongDouble {
    /// Positive zero.
    pub const ZERO: LongDouble = LongDouble::Finite {
        neg: false,
        mant: 0,
        exp: 0,
    };

    /// Parses `s` the way Redis's `string2ld` does: the whole input must be
    /// one `strtold` number (decimal, hexadecimal or infinity), without
    /// leading space; NaN, overflow and underflow to zero are rejected.
    pub fn parse(s: &[u8]) -> Option<LongDouble> {
        if s.is_empty() || s.len() >= MAX_INPUT {
            return None;
        }
        // strtold stops at an embedded NUL, and Redis 7.0 then refuses the
        // value because fewer than all of its bytes were converted.
        if s.contains(&0) {
            return None;
        }
        if matches!(s[0], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
            return None;
        }
        let (neg, body) = match s[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
            return Some(LongDouble::Inf { neg });
        }
        let v = if body.len() > 2 && body[0] == b'0' && (body[1] | 0x20) == b'x' {
            parse_hex(&body[2..])?
        } else {
            parse_decimal(body)?
        };
        match v {
            Rounded::Value(LongDouble::Finite { mant, exp, .. }) => {
                Some(LongDouble::Finite { neg, mant, exp })
            }
            Rounded::Value(LongDouble::Inf { .. }) | Rounded::Overflow | Rounded::Underflow => None,
        }
    }

    /// The exact sum rounded to nearest-even; `None` if it is infinite or
    /// NaN (Redis refuses to store those).
    pub fn checked_add(self, other: LongDouble) -> Option<LongDouble> {
        let (
            LongDouble::Finite {
                neg: na,
                mant: ma,
                exp: ea,
            },
            LongDouble::Finite {
                neg: nb,
                mant: mb,
                exp: eb,
            },
        ) = (self, other)
        else {
            return None;
        };
        if ma == 0 && mb == 0 {
            return Some(LongDouble::Finite {
                neg: na && nb,
                mant: 0,
                exp: 0,
            });
        }
        if mb == 0 {
            return Some(self);
        }
        if ma == 0 {
            return Some(other);
        }
        // When the exponents are this far apart the smaller operand is
        // below a quarter of the larger one's last place: it cannot change
        // the rounded result.
        if ea - eb > 130 {
            return Some(self);
        }
        if eb - ea > 130 {
            return Some(other);
        }
        let e = ea.min(eb);
        let a = Big::from_u64(ma).shl((ea - e) as usize);
        let b = Big::from_u64(mb).shl((eb - e) as usize);
        let (neg, sum) = if na == nb {
            (na, a.add(&b))
        } else {
            match a.cmp(&b) {
                Ordering::Equal => return Some(LongDouble::ZERO),
                Ordering::Greater => (na, a.sub(&b)),
                Ordering::Less => (nb, b.sub(&a)),
            }
        };
        match round(&sum, e, false) {
            Rounded::Value(LongDouble::Finite { mant, exp, .. }) => {
                Some(LongDouble::Finite { neg, mant, exp })
            }
            _ => None,
        }
    }

    /// `printf("%.17Lf")` with trailing zeros (and a trailing point)
    /// removed, and `-0` written as `0`: Redis's "human friendly" form.
    pub fn to_human_string(self) -> String {
        let (neg, mant, exp) = match self {
            LongDouble::Finite { neg, mant, exp } => (neg, mant, exp),
            LongDouble::Inf { neg } => return if neg { "-inf".into() } else { "inf".into() },
        };
        // The value times 10^17, rounded half to even like glibc's printf.
        let mut scaled = Big::from_u64(mant);
        scaled.mul_small(100_000_000);
        scaled.mul_small(1_000_000_000);
        let scaled = if exp >= 0 {
            scaled.shl(exp as usize)
        } else {
            let k = (-exp) as usize;
            let mut q = scaled.shr(k);
            let half = scaled.bit(k - 1);
            let rest = scaled.low_bits_nonzero(k - 1);
            if half && (rest || q.bit(0)) {
                q.add_small(1);
            }
            q
        };
        let mut digits = scaled.to_decimal();
        if digits.len() < 18 {
            digits = format!("{}{}", "0".repeat(18 - digits.len()), digits);
        }
        let (int, frac) = digits.split_at(digits.len() - 17);
        let frac = frac.trim_end_matches('0');
        let mut out = String::with_capacity(digits.len() + 2);
        if neg {
            out.push('-');
        }
        out.push_str(int);
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
        if out == "-0" {
            out = "0".into();
        }
        out
    }
}

/// Outcome of rounding an exact value to the extended format.
#[derive(Debug)]
enum Rounded {
    Value(LongDouble),
    /// Too large: `strtold` returns infinity with `ERANGE`.
    Overflow,
    /// A nonzero value that rounds to zero: `strtold` sets `ERANGE`.
    Underflow,
}

/// Rounds `big × 2^exp2` (plus, when `sticky`, a nonzero remainder smaller
/// than its last bit) to nearest-even with a 64-bit significand. Callers
/// that pass `sticky` give at least 66 significant bits.
fn round(big: &Big, exp2: i64, sticky: bool) -> Rounded {
    if big.is_zero() {
        return if sticky {
            Rounded::Underflow
        } else {
            Rounded::Value(LongDouble::ZERO)
        };
    }
    let n = big.bit_len() as i64;
    let top = exp2.saturating_add(n - 1);
    if top > MAX_EXP + 63 {
        return Rounded::Overflow;
    }
    let mut e = (top - 63).max(MIN_EXP);
    let shift = e - exp2;
    let mant = if shift <= 0 {
        big.low_u64() << (-shift) as u32
    } else {
        let shift = shift as usize;
        let mut m = big.bits_u64(shift);
        let half = big.bit(shift - 1);
        let rest = sticky || big.low_bits_nonzero(shift - 1);
        if half && (rest || m & 1 == 1) {
            m = match m.checked_add(1) {
                Some(m) => m,
                None => {
                    e += 1;
                    1 << 63
                }
            };
        }
        m
    };
    if mant == 0 {
        return Rounded::Underflow;
    }
    if e > MAX_EXP {
        return Rounded::Overflow;
    }
    Rounded::Value(LongDouble::Finite {
        neg: false,
        mant,
        exp: e,
    })
}

/// Reads an optionally signed decimal exponent that must end the input.
fn parse_exponent(s: &[u8]) -> Option<i64> {
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
        v = (v * 10 + (c - b'0') as i64).min(EXP_SATURATION);
    }
    Some(if neg { -v } else { v })
}

/// Splits `digits[.digits]` off the front of `s`; returns the digits before
/// and after the point and the rest.
fn split_mantissa(s: &[u8], is_digit: fn(&u8) -> bool) -> (&[u8], &[u8], &[u8]) {
    let int_len = s.iter().take_while(|c| is_digit(c)).count();
    let (int, rest) = s.split_at(int_len);
    if let Some(after) = rest.strip_prefix(b".") {
        let frac_len = after.iter().take_while(|c| is_digit(c)).count();
        let (frac, rest) = after.split_at(frac_len);
        (int, frac, rest)
    } else {
        (int, &[], rest)
    }
}

fn parse_decimal(s: &[u8]) -> Option<Rounded> {
    let (int, frac, rest) = split_mantissa(s, u8::is_ascii_digit);
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let exp10 = match rest.first() {
        None => 0,
        Some(b'e' | b'E') => parse_exponent(&rest[1..])?,
        Some(_) => return None,
    };
    let mut digits: Vec<u8> = int.iter().chain(frac).copied().collect();
    let mut exp10 = exp10 - frac.len() as i64;
    let lead = digits.iter().take_while(|&&c| c == b'0').count();
    digits.drain(..lead);
    while digits.last() == Some(&b'0') {
        digits.pop();
        exp10 += 1;
    }
    if digits.is_empty() {
        return Some(Rounded::Value(LongDouble::ZERO));
    }
    // The value lies in [10^(mag-1), 10^mag).
    let mag = digits.len() as i64 + exp10;
    if mag > 4934 {
        return Some(Rounded::Overflow);
    }
    if mag < -4952 {
        return Some(Rounded::Underflow);
    }
    let mut d = Big::from_u64(0);
    for chunk in digits.chunks(9) {
        let mut part = 0u32;
        for &c in chunk {
            part = part * 10 + (c - b'0') as u32;
        }
        d.mul_small(10u32.pow(chunk.len() as u32));
        d.add_small(part);
    }
    if exp10 >= 0 {
        let mut n = d;
        n.mul_pow10(exp10 as usize);
        return Some(round(&n, 0, false));
    }
    let mut m = Big::from_u64(1);
    m.mul_pow10((-exp10) as usize);
    // Scale so that the quotient has 66 or 67 significant bits.
    let t = 66 + m.bit_len() as i64 - d.bit_len() as i64;
    let (a, b) = if t >= 0 {
        (d.shl(t as usize), m)
    } else {
        (d, m.shl((-t) as usize))
    };
    let (q, exact) = a.div_small_quotient(&b);
    Some(round(&Big::from_u128(q), -t, !exact))
}

fn parse_hex(s: &[u8]) -> Option<Rounded> {
    let (int, frac, rest) = split_mantissa(s, u8::is_ascii_hexdigit);
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let exp2 = match rest.first() {
        None => 0,
        Some(b'p' | b'P') => parse_exponent(&rest[1..])?,
        Some(_) => return None,
    };
    let mut h = Big::from_u64(0);
    for &c in int.iter().chain(frac) {
        let v = (c as char).to_digit(16).unwrap_or(0);
        h.mul_small(16);
        h.add_small(v);
    }
    Some(round(&h, exp2 - 4 * frac.len() as i64, false))
}

/// A minimal arbitrary-precision unsigned integer (little-endian 32-bit
/// limbs, no trailing zero limbs), enough for exact conversions.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Big {
    limbs: Vec<u32>,
}

impl Big {
    fn from_u64(v: u64) -> Big {
        let mut b = Big {
            limbs: vec![v as u32, (v >> 32) as u32],
        };
        b.trim();
        b
    }

    fn from_u128(v: u128) -> Big {
        let mut b = Big {
            limbs: (0..4).map(|i| (v >> (32 * i)) as u32).collect(),
        };
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.limbs.last() == Some(&0) {
            self.limbs.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.limbs.is_empty()
    }

    fn bit_len(&self) -> usize {
        match self.limbs.last() {
            None => 0,
            Some(&top) => self.limbs.len() * 32 - top.leading_zeros() as usize,
        }
    }

    fn bit(&self, i: usize) -> bool {
        self.limbs
            .get(i / 32)
            .is_some_and(|l| (l >> (i % 32)) & 1 == 1)
    }

    /// Whether any of the bits below position `n` is set.
    fn low_bits_nonzero(&self, n: usize) -> bool {
        let whole = n / 32;
        if self.limbs.iter().take(whole).any(|&l| l != 0) {
            return true;
        }
        let part = n % 32;
        part > 0
            && self
                .limbs
                .get(whole)
                .is_some_and(|&l| l & ((1u32 << part) - 1) != 0)
    }

    fn low_u64(&self) -> u64 {
        self.bits_u64(0)
    }

    /// The 64 bits starting at position `from`.
    fn bits_u64(&self, from: usize) -> u64 {
        let mut v = 0u64;
        for i in 0..64 {
            if self.bit(from + i) {
                v |= 1 << i;
            }
        }
        v
    }

    fn mul_small(&mut self, m: u32) {
        let mut carry = 0u64;
        for l in self.limbs.iter_mut() {
            let p = *l as u64 * m as u64 + carry;
            *l = p as u32;
            carry = p >> 32;
        }
        if carry > 0 {
            self.limbs.push(carry as u32);
        }
        self.trim();
    }

    fn mul_pow10(&mut self, mut k: usize) {
        while k >= 9 {
            self.mul_small(1_000_000_000);
            k -= 9;
        }
        self.mul_small(10u32.pow(k as u32));
    }

    fn add_small(&mut self, a: u32) {
        let mut carry = a as u64;
        for l in self.limbs.iter_mut() {
            if carry == 0 {
                break;
            }
            let s = *l as u64 + carry;
            *l = s as u32;
            carry = s >> 32;
        }
        if carry > 0 {
            self.limbs.push(carry as u32);
        }
    }

    fn add(&self, other: &Big) -> Big {
        let n = self.limbs.len().max(other.limbs.len());
        let mut out = Vec::with_capacity(n + 1);
        let mut carry = 0u64;
        for i in 0..n {
            let s = *self.limbs.get(i).unwrap_or(&0) as u64
                + *other.limbs.get(i).unwrap_or(&0) as u64
                + carry;
            out.push(s as u32);
            carry = s >> 32;
        }
        out.push(carry as u32);
        let mut b = Big { limbs: out };
        b.trim();
        b
    }

    /// `self - other`; `self` must not be smaller.
    fn sub(&self, other: &Big) -> Big {
        let mut out = self.clone();
        out.sub_assign(other);
        out
    }

    fn sub_assign(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for i in 0..self.limbs.len() {
            let d = self.limbs[i] as i64 - *other.limbs.get(i).unwrap_or(&0) as i64 - borrow;
            if d < 0 {
                self.limbs[i] = (d + (1 << 32)) as u32;
                borrow = 1;
            } else {
                self.limbs[i] = d as u32;
                borrow = 0;
            }
        }
        self.trim();
    }

    fn cmp(&self, other: &Big) -> Ordering {
        self.limbs
            .len()
            .cmp(&other.limbs.len())
            .then_with(|| self.limbs.iter().rev().cmp(other.limbs.iter().rev()))
    }

    fn shl(&self, n: usize) -> Big {
        if self.is_zero() {
            return self.clone();
        }
        let (whole, part) = (n / 32, n % 32);
        let mut out = vec![0u32; whole];
        out.reserve(self.limbs.len() + 1);
        let mut carry = 0u32;
        for &l in &self.limbs {
            if part == 0 {
                out.push(l);
            } else {
                out.push((l << part) | carry);
                carry = l >> (32 - part);
            }
        }
        out.push(carry);
        let mut b = Big { limbs: out };
        b.trim();
        b
    }

    fn shr(&self, n: usize) -> Big {
        let (whole, part) = (n / 32, n % 32);
        if whole >= self.limbs.len() {
            return Big { limbs: Vec::new() };
        }
        let src = &self.limbs[whole..];
        let mut out = Vec::with_capacity(src.len());
        for i in 0..src.len() {
            let lo = src[i] >> part;
            let hi = if part == 0 {
                0
            } else {
                src.get(i + 1).map_or(0, |&h| h << (32 - part))
            };
            out.push(lo | hi);
        }
        let mut b = Big { limbs: out };
        b.trim();
        b
    }

    fn shr1(&mut self) {
        let mut carry = 0u32;
        for l in self.limbs.iter_mut().rev() {
            let next = *l & 1;
            *l = (*l >> 1) | (carry << 31);
            carry = next;
        }
        self.trim();
    }

    /// `floor(self / d)` and whether the division is exact, for quotients
    /// of at most 128 bits.
    fn div_small_quotient(&self, d: &Big) -> (u128, bool) {
        let mut rem = self.clone();
        let span = self.bit_len().saturating_sub(d.bit_len());
        let mut shifted = d.shl(span);
        let mut q = 0u128;
        for i in (0..=span).rev() {
            if rem.cmp(&shifted) != Ordering::Less {
                rem.sub_assign(&shifted);
                if i < 128 {
                    q |= 1 << i;
                }
            }
            shifted.shr1();
        }
        (q, rem.is_zero())
    }

    /// Divides by `d` in place, returning the remainder.
    fn div_rem_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for l in self.limbs.iter_mut().rev() {
            let cur = (rem << 32) | *l as u64;
            *l = (cur / d as u64) as u32;
            rem = cur % d as u64;
        }
        self.trim();
        rem as u32
    }

    fn to_decimal(&self) -> String {
        if self.is_zero() {
            return "0".into();
        }
        let mut n = self.clone();
        let mut chunks = Vec::new();
        while !n.is_zero() {
            chunks.push(n.div_rem_small(1_000_000_000));
        }
        let mut s = String::with_capacity(chunks.len() * 9);
        if let Some(top) = chunks.pop() {
            s.push_str(&top.to_string());
        }
        for c in chunks.iter().rev() {
            s.push_str(&format!("{c:09}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incr(a: &str, b: &str) -> Option<String> {
        let x = LongDouble::parse(a.as_bytes())?;
        let y = LongDouble::parse(b.as_bytes())?;
        Some(x.checked_add(y)?.to_human_string())
    }

    #[test]
    fn sums_match_x87_long_double() {
        assert_eq!(incr("0", "0.1").as_deref(), Some("0.1"));
        assert_eq!(incr("0.1", "0.2").as_deref(), Some("0.3"));
        assert_eq!(incr("10.50", "0.1").as_deref(), Some("10.6"));
        assert_eq!(incr("10.6", "-5").as_deref(), Some("5.6"));
        assert_eq!(incr("5.0e3", "2.0e2").as_deref(), Some("5200"));
        assert_eq!(
            incr("0", "1.23456789012345678901234").as_deref(),
            Some("1.23456789012345679")
        );
        assert_eq!(
            incr("1.23456789012345679", "1e17").as_deref(),
            Some("100000000000000001.234375")
        );
        assert_eq!(
            incr("0", "0.000003814697265625").as_deref(),
            Some("0.00000381469726562")
        );
        assert_eq!(incr("0", "-0.000000000000000001").as_deref(), Some("0"));
        assert_eq!(
            incr("0.3", "1e300").as_deref().map(|s| &s[..30]),
            Some("100000000000000000000899732407")
        );
        assert_eq!(incr("1e300", "-1e300").as_deref(), Some("0"));
        assert_eq!(incr("0", "0x10").as_deref(), Some("16"));
        assert_eq!(incr("1", "-3").as_deref(), Some("-2"));
    }

    #[test]
    fn parse_rejects_what_strtold_refuses() {
        for bad in [
            "", " 1", "1 ", "abc", "nan", "-nan", "1e", "1e+", ".", "e5", "0x", "1e5000",
            "1e-5000", "--1", "inf1", "1.2.3",
        ] {
            assert_eq!(LongDouble::parse(bad.as_bytes()), None, "{bad}");
        }
        for good in [
            "1",
            "+1",
            "-1.5",
            ".5",
            "5.",
            "1E3",
            "INF",
            "-Infinity",
            "0x1p3",
            "0X1.8P1",
            "1e-4940",
            "0e-99999",
        ] {
            assert!(LongDouble::parse(good.as_bytes()).is_some(), "{good}");
        }
        assert_eq!(incr("1\0garbage", "1"), None);
        assert_eq!(incr("1\x002", "1"), None);
        assert_eq!(incr("inf", "1"), None);
        assert_eq!(incr("1e4932", "1e4932"), None);
    }
}
