//! Software emulation of the x86-64 `long double` (80-bit extended
//! precision: 64-bit mantissa, 15-bit exponent), the type Redis uses for
//! HINCRBYFLOAT. Doing the arithmetic in `f64` would reply `0.30000000000000004`
//! where Redis replies `0.3`, so parsing (`strtold`), addition and the
//! `%.17Lf` formatting are reproduced exactly, with round-half-even
//! everywhere as the C library does.

use std::cmp::Ordering;

/// Exponent of the least significant mantissa bit of the smallest values
/// (subnormals and the smallest normal number, 2^-16382).
const MIN_EXP: i64 = -16445;
/// Largest exponent of a value whose mantissa has its top bit set:
/// (2^64 - 1) * 2^16320 is the largest finite value.
const MAX_EXP: i64 = 16320;
/// Redis refuses float strings of this length or more (`MAX_LONG_DOUBLE_CHARS`).
const MAX_CHARS: usize = 5 * 1024;

/// An extended-precision float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LongDouble {
    neg: bool,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Zero,
    Inf,
    /// `mant * 2^exp`, `mant != 0`; `mant < 2^63` only for subnormals.
    Finite {
        mant: u64,
        exp: i64,
    },
}

/// Why a rounded result is not representable.
enum Range {
    Overflow,
    Underflow,
}

impl LongDouble {
    /// Positive zero.
    pub const ZERO: LongDouble = LongDouble {
        neg: false,
        kind: Kind::Zero,
    };

    /// Whether the value is infinite.
    pub fn is_infinite(&self) -> bool {
        self.kind == Kind::Inf
    }

    /// Parses `s` as Redis's `string2ld` does: `strtold` on the whole
    /// string (decimal, hexadecimal `0x…p…`, `inf`, `infinity`), no leading
    /// space, nothing left over, NaN refused, and a result that overflows or
    /// underflows to zero refused. `None` if the string is not a valid float.
    pub fn parse(s: &[u8]) -> Option<LongDouble> {
        if s.is_empty() || s.len() >= MAX_CHARS || is_c_space(s[0]) {
            return None;
        }
        // The C string ends at the first NUL; strtold sees only that part.
        let s = match s.iter().position(|&c| c == 0) {
            Some(i) => &s[..i],
            None => s,
        };
        if s.is_empty() {
            return Some(LongDouble::ZERO);
        }
        let (neg, body) = match s[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
            return Some(LongDouble {
                neg,
                kind: Kind::Inf,
            });
        }
        let hex = body.len() > 2
            && body[0] == b'0'
            && (body[1] == b'x' || body[1] == b'X')
            && (body[2].is_ascii_hexdigit()
                || (body[2] == b'.' && body.get(3).is_some_and(|c| c.is_ascii_hexdigit())));
        let r = if hex {
            parse_hex(&body[2..])?
        } else {
            parse_decimal(body)?
        };
        match r {
            None => Some(LongDouble {
                neg,
                kind: Kind::Zero,
            }),
            Some((num, den, e2)) => from_ratio(neg, num, &den, e2).ok(),
        }
    }

    /// `self + other` rounded to extended precision; `None` for NaN
    /// (infinities of opposite signs). Overflow gives an infinity.
    pub fn add(self, other: LongDouble) -> Option<LongDouble> {
        let (a, b) = (self, other);
        match (a.kind, b.kind) {
            (Kind::Inf, Kind::Inf) => (a.neg == b.neg).then_some(a),
            (Kind::Inf, _) => Some(a),
            (_, Kind::Inf) => Some(b),
            (Kind::Zero, Kind::Zero) => Some(LongDouble {
                neg: a.neg && b.neg,
                kind: Kind::Zero,
            }),
            (Kind::Zero, _) => Some(b),
            (_, Kind::Zero) => Some(a),
            (Kind::Finite { mant: ma, exp: ea }, Kind::Finite { mant: mb, exp: eb }) => {
                Some(add_finite((a.neg, ma, ea), (b.neg, mb, eb)))
            }
        }
    }

    /// Formats as Redis's `ld2string(…, LD_STR_HUMAN)`: `%.17Lf`, then
    /// trailing zeros (and a trailing point) removed, and `-0` written `0`.
    pub fn to_human(self) -> String {
        let body = match self.kind {
            Kind::Inf => "inf".to_string(),
            Kind::Zero => "0".to_string(),
            Kind::Finite { mant, exp } => fixed17(mant, exp),
        };
        let s = if self.neg { format!("-{body}") } else { body };
        if s == "-0" {
            "0".to_string()
        } else {
            s
        }
    }
}

fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// A parsed magnitude `num / den * 2^e2`, or `None` for zero.
type Ratio = Option<(Big, Big, i64)>;

/// Decimal `digits[.digits][(e|E)[sign]digits]`; `None` if the whole
/// string is not one number.
fn parse_decimal(s: &[u8]) -> Option<Ratio> {
    let mut i = 0;
    let mut digits: Vec<u8> = Vec::new();
    let mut seen_digit = false;
    let mut dec_exp: i64 = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        seen_digit = true;
        if !(digits.is_empty() && s[i] == b'0') {
            digits.push(s[i] - b'0');
        }
        i += 1;
    }
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while i < s.len() && s[i].is_ascii_digit() {
            seen_digit = true;
            if digits.is_empty() && s[i] == b'0' {
                dec_exp -= 1;
            } else {
                digits.push(s[i] - b'0');
                dec_exp -= 1;
            }
            i += 1;
        }
    }
    if !seen_digit {
        return None;
    }
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        let (e, used) = parse_exponent(&s[i + 1..])?;
        dec_exp = dec_exp.saturating_add(e);
        i += 1 + used;
    }
    if i != s.len() {
        return None;
    }
    while digits.last() == Some(&0) {
        digits.pop();
        dec_exp += 1;
    }
    if digits.is_empty() {
        return Some(None);
    }
    // Magnitude in [10^(pos-1), 10^pos): far outside the range the result
    // is certainly infinite or zero; closer in, compute exactly.
    let pos = digits.len() as i64 + dec_exp;
    if pos > 4940 {
        return Some(Some((Big::from_u64(1), Big::from_u64(1), 20000)));
    }
    if pos < -4970 {
        return Some(Some((Big::from_u64(1), Big::from_u64(1), -20000)));
    }
    let mut d = Big::zero();
    for chunk in digits.chunks(19) {
        let mut v: u64 = 0;
        for &c in chunk {
            v = v * 10 + c as u64;
        }
        d.mul_small(10u64.pow(chunk.len() as u32));
        d.add_small(v);
    }
    if dec_exp >= 0 {
        let mut n = d;
        n.mul_pow10(dec_exp as u64);
        Some(Some((n, Big::from_u64(1), 0)))
    } else {
        let mut den = Big::from_u64(1);
        den.mul_pow10((-dec_exp) as u64);
        Some(Some((d, den, 0)))
    }
}

/// Hexadecimal mantissa after `0x`, with an optional binary exponent.
fn parse_hex(s: &[u8]) -> Option<Ratio> {
    let mut i = 0;
    let mut h = Big::zero();
    let mut e2: i64 = 0;
    let mut seen_digit = false;
    let mut frac = false;
    while i < s.len() {
        let c = s[i];
        if c == b'.' && !frac {
            frac = true;
        } else if let Some(v) = (c as char).to_digit(16) {
            seen_digit = true;
            if !h.is_zero() || v != 0 {
                h.shl_small(4);
                h.add_small(v as u64);
                if frac {
                    e2 -= 4;
                }
            } else if frac {
                e2 -= 4;
            }
        } else {
            break;
        }
        i += 1;
    }
    if !seen_digit {
        return None;
    }
    if i < s.len() && (s[i] == b'p' || s[i] == b'P') {
        let (e, used) = parse_exponent(&s[i + 1..])?;
        e2 = e2.saturating_add(e);
        i += 1 + used;
    }
    if i != s.len() {
        return None;
    }
    if h.is_zero() {
        return Some(None);
    }
    let top = h.bits() as i64 + e2;
    if top > 16400 {
        return Some(Some((Big::from_u64(1), Big::from_u64(1), 20000)));
    }
    if top < MIN_EXP - 10 {
        return Some(Some((Big::from_u64(1), Big::from_u64(1), -20000)));
    }
    Some(Some((h, Big::from_u64(1), e2)))
}

/// An exponent `[sign]digits`; `Some((0, 0))` when there are no digits (the
/// exponent marker is then not part of the number, which leaves it over).
/// The value saturates far beyond any meaningful exponent.
fn parse_exponent(s: &[u8]) -> Option<(i64, usize)> {
    let (neg, start) = match s.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let mut i = start;
    let mut v: i64 = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        v = (v * 10 + (s[i] - b'0') as i64).min(1_000_000);
        i += 1;
    }
    if i == start {
        // `1e` or `1e+`: strtold stops before the `e`; the caller sees a
        // leftover and refuses the string.
        return None;
    }
    Some((if neg { -v } else { v }, i))
}

/// Rounds `num / den * 2^e2` (num > 0) to extended precision.
fn from_ratio(neg: bool, num: Big, den: &Big, e2: i64) -> Result<LongDouble, Range> {
    // Scale so that the quotient has about 101 bits: plenty of guard bits
    // below the 64 kept, with the remainder folded into a sticky bit.
    let t = num.bits() as i64 - den.bits() as i64 - 100;
    let (n, sticky) = if t > 0 {
        num.shr_sticky(t as u64)
    } else {
        (num.shl((-t) as u64), false)
    };
    let (q, rem) = divide(n, den);
    round(neg, q, e2 + t, sticky || rem)
}

/// `n / den` for a quotient below 2^128: (quotient, remainder != 0).
fn divide(mut r: Big, den: &Big) -> (u128, bool) {
    let shift = r.bits().saturating_sub(den.bits());
    let mut d = den.shl(shift);
    let mut q: u128 = 0;
    for _ in 0..=shift {
        q <<= 1;
        if r.cmp(&d) != Ordering::Less {
            r.sub_assign(&d);
            q |= 1;
        }
        d.shr1();
    }
    (q, !r.is_zero())
}

/// Rounds `(q + sticky) * 2^e` to a 64-bit mantissa, round-half-even,
/// with gradual underflow. When `sticky` is set, `q` has enough bits that
/// the sticky part lies below the rounding bit.
fn round(neg: bool, q: u128, e: i64, sticky: bool) -> Result<LongDouble, Range> {
    if q == 0 {
        return if sticky {
            Err(Range::Underflow)
        } else {
            Ok(LongDouble {
                neg,
                kind: Kind::Zero,
            })
        };
    }
    let bits = 128 - q.leading_zeros() as i64;
    let mut shift = bits - 64;
    if e + shift < MIN_EXP {
        shift = MIN_EXP - e;
    }
    let (mant, exp) = if shift <= 0 {
        ((q << (-shift) as u32) as u64, e + shift)
    } else {
        let (kept, round_bit, rest) = if shift > 128 {
            (0u128, false, true)
        } else if shift == 128 {
            (0u128, q >> 127 == 1, q & !(1u128 << 127) != 0 || sticky)
        } else {
            let s = shift as u32;
            let below = q & ((1u128 << (s - 1)) - 1);
            (q >> s, (q >> (s - 1)) & 1 == 1, below != 0 || sticky)
        };
        let mut m = kept;
        if round_bit && (rest || m & 1 == 1) {
            m += 1;
        }
        let mut exp = e + shift;
        if m == 1u128 << 64 {
            m >>= 1;
            exp += 1;
        }
        (m as u64, exp)
    };
    if mant == 0 {
        return Err(Range::Underflow);
    }
    if exp > MAX_EXP {
        return Err(Range::Overflow);
    }
    Ok(LongDouble {
        neg,
        kind: Kind::Finite { mant, exp },
    })
}

/// Sum of two finite non-zero values given as (negative, mantissa, exponent).
fn add_finite(a: (bool, u64, i64), b: (bool, u64, i64)) -> LongDouble {
    let norm = |(neg, m, e): (bool, u64, i64)| {
        let lz = m.leading_zeros();
        (neg, m << lz, e - lz as i64)
    };
    let (mut a, mut b) = (norm(a), norm(b));
    if (b.2, b.1) > (a.2, a.1) {
        std::mem::swap(&mut a, &mut b);
    }
    let d = (a.2 - b.2) as u64;
    let big_a = (a.1 as u128) << 62;
    let bm = (b.1 as u128) << 62;
    let (big_b, sticky) = if d == 0 {
        (bm, false)
    } else if d >= 127 {
        (0, true)
    } else {
        (bm >> d, bm & ((1u128 << d) - 1) != 0)
    };
    let e = a.2 - 62;
    let sum = if a.0 == b.0 {
        big_a + big_b
    } else if sticky {
        // The true subtrahend lies strictly between big_b and big_b + 1.
        big_a - big_b - 1
    } else {
        big_a - big_b
    };
    if sum == 0 && !sticky {
        return LongDouble::ZERO;
    }
    match round(a.0, sum, e, sticky) {
        Ok(v) => v,
        Err(Range::Overflow) => LongDouble {
            neg: a.0,
            kind: Kind::Inf,
        },
        Err(Range::Underflow) => LongDouble {
            neg: a.0,
            kind: Kind::Zero,
        },
    }
}

/// `%.17f` of `mant * 2^exp` (no sign), trailing zeros and point removed.
fn fixed17(mant: u64, exp: i64) -> String {
    if exp >= 0 {
        return Big::from_u64(mant).shl(exp as u64).to_decimal();
    }
    let mut scaled = Big::from_u64(mant);
    scaled.mul_pow10(17);
    let sh = (-exp) as u64;
    let round_bit = scaled.bit(sh - 1);
    let rest = scaled.any_below(sh - 1);
    let (mut q, _) = scaled.shr_sticky(sh);
    if round_bit && (rest || q.bit(0)) {
        q.add_small(1);
    }
    let mut digits = q.to_decimal();
    if digits.len() < 18 {
        digits = format!("{}{}", "0".repeat(18 - digits.len()), digits);
    }
    let (int, frac) = digits.split_at(digits.len() - 17);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    }
}

/// A minimal unsigned big integer (little-endian 64-bit limbs, no zero
/// high limbs), enough for exact decimal/binary conversion.
#[derive(Clone, Debug, PartialEq, Eq)]
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

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn bits(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(&top) => self.0.len() as u64 * 64 - top.leading_zeros() as u64,
        }
    }

    fn bit(&self, i: u64) -> bool {
        let limb = (i / 64) as usize;
        limb < self.0.len() && (self.0[limb] >> (i % 64)) & 1 == 1
    }

    /// Whether any bit below position `n` is set.
    fn any_below(&self, n: u64) -> bool {
        let full = (n / 64) as usize;
        if self.0.iter().take(full).any(|&l| l != 0) {
            return true;
        }
        let r = n % 64;
        r > 0 && full < self.0.len() && self.0[full] & ((1u64 << r) - 1) != 0
    }

    fn mul_small(&mut self, m: u64) {
        let mut carry: u128 = 0;
        for l in self.0.iter_mut() {
            let v = (*l as u128) * (m as u128) + carry;
            *l = v as u64;
            carry = v >> 64;
        }
        if carry > 0 {
            self.0.push(carry as u64);
        }
        self.trim();
    }

    fn add_small(&mut self, a: u64) {
        let mut carry = a;
        for l in self.0.iter_mut() {
            if carry == 0 {
                break;
            }
            let (v, o) = l.overflowing_add(carry);
            *l = v;
            carry = o as u64;
        }
        if carry > 0 {
            self.0.push(carry);
        }
    }

    fn mul_pow10(&mut self, mut n: u64) {
        while n >= 19 {
            self.mul_small(10u64.pow(19));
            n -= 19;
        }
        if n > 0 {
            self.mul_small(10u64.pow(n as u32));
        }
    }

    fn shl_small(&mut self, n: u32) {
        *self = self.shl(n as u64);
    }

    fn shl(&self, n: u64) -> Big {
        if self.is_zero() {
            return Big::zero();
        }
        let limbs = (n / 64) as usize;
        let r = (n % 64) as u32;
        let mut out = vec![0u64; limbs];
        if r == 0 {
            out.extend_from_slice(&self.0);
        } else {
            let mut carry = 0u64;
            for &l in &self.0 {
                out.push((l << r) | carry);
                carry = l >> (64 - r);
            }
            out.push(carry);
        }
        let mut b = Big(out);
        b.trim();
        b
    }

    /// `self >> n` and whether any shifted-out bit was set.
    fn shr_sticky(&self, n: u64) -> (Big, bool) {
        let sticky = self.any_below(n);
        let limbs = (n / 64) as usize;
        if limbs >= self.0.len() {
            return (Big::zero(), sticky);
        }
        let r = (n % 64) as u32;
        let src = &self.0[limbs..];
        let mut out = Vec::with_capacity(src.len());
        for i in 0..src.len() {
            let lo = if r == 0 { src[i] } else { src[i] >> r };
            let hi = if r == 0 {
                0
            } else {
                src.get(i + 1).map_or(0, |&h| h << (64 - r))
            };
            out.push(lo | hi);
        }
        let mut b = Big(out);
        b.trim();
        (b, sticky)
    }

    fn shr1(&mut self) {
        let n = self.0.len();
        for i in 0..n {
            let hi = if i + 1 < n { self.0[i + 1] << 63 } else { 0 };
            self.0[i] = (self.0[i] >> 1) | hi;
        }
        self.trim();
    }

    fn cmp(&self, o: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&o.0.len())
            .then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
    }

    /// `self -= o`, with `self >= o`.
    fn sub_assign(&mut self, o: &Big) {
        let mut borrow = false;
        for i in 0..self.0.len() {
            let b = o.0.get(i).copied().unwrap_or(0);
            let (v1, o1) = self.0[i].overflowing_sub(b);
            let (v2, o2) = v1.overflowing_sub(borrow as u64);
            self.0[i] = v2;
            borrow = o1 || o2;
        }
        self.trim();
    }

    /// Divides in place by `d`; returns the remainder.
    fn div_small(&mut self, d: u64) -> u64 {
        let mut rem: u128 = 0;
        for l in self.0.iter_mut().rev() {
            let cur = (rem << 64) | *l as u128;
            *l = (cur / d as u128) as u64;
            rem = cur % d as u128;
        }
        self.trim();
        rem as u64
    }

    fn to_decimal(&self) -> String {
        if self.is_zero() {
            return "0".to_string();
        }
        let mut n = self.clone();
        let mut chunks = Vec::new();
        while !n.is_zero() {
            chunks.push(n.div_small(10u64.pow(19)));
        }
        let mut s = String::new();
        for (i, c) in chunks.iter().rev().enumerate() {
            if i == 0 {
                s.push_str(&c.to_string());
            } else {
                s.push_str(&format!("{c:019}"));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(a: &str, b: &str) -> String {
        let x = LongDouble::parse(a.as_bytes()).expect("a");
        let y = LongDouble::parse(b.as_bytes()).expect("b");
        x.add(y).expect("not nan").to_human()
    }

    /// Expected values captured from redis-server 7.0 (HSET then HINCRBYFLOAT).
    #[test]
    fn sums_match_redis() {
        let cases = [
            ("0", "0.000003814697265625", "0.00000381469726562"),
            ("0", "0.000003814697265627", "0.00000381469726563"),
            ("0.1", "0.2", "0.3"),
            ("10.5", "0.1", "10.6"),
            ("5.0e3", "2.0e2", "5200"),
            ("0", "1e-20", "0"),
            ("-0", "-0", "0"),
            ("0", "-1e-20", "0"),
            ("1", "0x10", "17"),
            ("1", "0x1.8p1", "4"),
            ("1", ".5", "1.5"),
            ("1", "5.", "6"),
            ("1", "+5", "6"),
            ("1", "1e-4940", "1"),
            (
                "1.7976931348623157e308",
                "1.7976931348623157e308",
                "359538626972463139991842093548208868096772893888658356970628841530353257046248792709403737216774171128857586838851041378617416726902272110715794556052955234146997955372576789671236326588091188869859074894581254961338834769297758245552436667197907705664206565009503223382416235440319971852753604933726679072768",
            ),
            ("0", "123456789012345678901234567890", "123456789012345678899921813504"),
            ("0", "0.1", "0.1"),
            ("0", "1.1", "1.1"),
            ("0", "3.3333333333333333333333", "3.33333333333333333"),
            ("9007199254740993", "0", "9007199254740993"),
            ("1", "1e-18", "1"),
            ("1", "-1", "0"),
            ("0", "-0.5", "-0.5"),
            ("0", "1e-17", "0.00000000000000001"),
            ("0", "5e-18", "0"),
            ("0", "1.5e-17", "0.00000000000000002"),
            ("0", "2.5e-17", "0.00000000000000002"),
            ("0x397734d7c1c7fde806p60", "-199126.88616319593470092920", "1222159213843720989903911359338837442560"),
            ("0x1809208a650f3ebdd4p-77", "0x2976c468aec7321cc1p25", "25664932328551580317226369024"),
            ("0xad7185ddaee82ec40p162", "-0xad7185ddaee82ec40p162", "0"),
            ("5.926270398047206258e-4937", "1.215950681669966578e-4925", "0"),
            ("0.66057895565516888681", "2.240653121130457943e-4937", "0.66057895565516889"),
            ("3.417524938155091752e-4908", "-347041.10881284921870895876", "-347041.10881284921870815"),
        ];
        for (a, b, want) in cases {
            assert_eq!(sum(a, b), want, "{a} + {b}");
        }
    }

    #[test]
    fn parse_follows_string2ld() {
        for bad in [
            " 1", "1 ", "1e", "1e+", "", "abc", "nan", "-nan", "1e4933", "1e-4960", "0x", ".", "-",
            "infinit", "1..2",
        ] {
            assert!(LongDouble::parse(bad.as_bytes()).is_none(), "{bad:?}");
        }
        assert!(LongDouble::parse(b"inf").is_some_and(|v| v.is_infinite()));
        assert!(LongDouble::parse(b"-Infinity").is_some_and(|v| v.is_infinite()));
        assert_eq!(
            LongDouble::parse(b"1\0junk")
                .map(|v| v.to_human())
                .as_deref(),
            Some("1")
        );
        assert_eq!(
            LongDouble::parse(b"\0").map(|v| v.to_human()).as_deref(),
            Some("0")
        );
        assert_eq!(
            LongDouble::parse(b"0e-99999")
                .map(|v| v.to_human())
                .as_deref(),
            Some("0")
        );
    }

    #[test]
    fn infinities() {
        let inf = LongDouble::parse(b"inf").expect("inf");
        let ninf = LongDouble::parse(b"-inf").expect("-inf");
        let one = LongDouble::parse(b"1").expect("1");
        assert!(inf.add(one).is_some_and(|v| v.is_infinite()));
        assert!(inf.add(ninf).is_none());
        let a = LongDouble::parse(b"4.908730427091547663e4931").expect("a");
        let b = LongDouble::parse(b"9.788290701559522188e4931").expect("b");
        assert!(a.add(b).is_some_and(|v| v.is_infinite()));
        assert!(LongDouble::parse(b"4.339133674163939405e4932").is_none());
    }
}
