//! Command replies as values; only the server encodes them to RESP2/RESP3.

use bytes::Bytes;
use std::borrow::Cow;

use crate::error::Error;

/// A reply value, independent of the protocol version.
#[derive(Debug, Clone)]
pub enum Reply {
    /// `+OK`.
    Ok,
    /// A simple status string (`+PONG`).
    Simple(Cow<'static, str>),
    /// An error; the text includes its prefix (`ERR …`, `WRONGTYPE …`).
    Error(Cow<'static, str>),
    /// An integer.
    Int(i64),
    /// A bulk string.
    Bulk(Bytes),
    /// The null bulk string (`$-1` in RESP2, `_` in RESP3).
    Nil,
    /// The null array (`*-1` in RESP2, `_` in RESP3).
    NilArray,
    /// An array.
    Array(Vec<Reply>),
    /// A map: a flat array of pairs in RESP2.
    Map(Vec<(Reply, Reply)>),
    /// A set: an array in RESP2.
    Set(Vec<Reply>),
    /// A double: a bulk string in RESP2 (formatted as Redis 7.0 does).
    Double(f64),
    /// A boolean: `:1`/`:0` in RESP2.
    Bool(bool),
    /// A big number, as its decimal digits: `(` in RESP3, a bulk string in
    /// RESP2.
    BigNumber(Bytes),
    /// Verbatim text (`=` in RESP3, a bulk string in RESP2).
    Verbatim(Bytes),
    /// Verbatim text with a format other than `txt` (a script's
    /// `verbatim_string`): its three format bytes, then the text.
    VerbatimAs([u8; 3], Bytes),
    /// An array of bulk strings stored back to back (a long member list
    /// without an allocation or a reference count per element). Equal to
    /// the [`Reply::Array`] of the same [`Reply::Bulk`]s.
    Bulks(BulkList),
}

/// The end recorded for a nil element.
const NIL: usize = usize::MAX;

/// Byte strings (or nils) stored back to back in one buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkList {
    data: Vec<u8>,
    ends: Vec<usize>,
    /// The strings are key/value pairs: a map in RESP3 (a flat array in
    /// RESP2), as [`Reply::Map`] of bulk strings.
    pairs: bool,
}

impl BulkList {
    /// An empty list with room for `n` strings of `bytes` bytes in all.
    pub fn with_capacity(n: usize, bytes: usize) -> BulkList {
        BulkList {
            data: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(n),
            pairs: false,
        }
    }

    /// An empty list of key/value pairs (a map reply) with room for `n`
    /// pairs of `bytes` bytes in all.
    pub fn pairs_with_capacity(n: usize, bytes: usize) -> BulkList {
        BulkList {
            pairs: true,
            ..BulkList::with_capacity(2 * n, bytes)
        }
    }

    /// Whether the strings are key/value pairs (a map reply).
    pub fn is_pairs(&self) -> bool {
        self.pairs
    }

    /// Appends a copy of `b`.
    pub fn push(&mut self, b: &[u8]) {
        self.data.extend_from_slice(b);
        self.ends.push(self.data.len());
    }

    /// Appends a nil (MGET's missing key).
    pub fn push_nil(&mut self) {
        self.ends.push(NIL);
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Total length of the strings.
    pub fn bytes(&self) -> usize {
        self.data.len()
    }

    /// The strings, in order (a nil as an empty string: see
    /// [`Self::iter_opt`]).
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.iter_opt().map(|b| b.unwrap_or_default())
    }

    /// The strings and nils, in order.
    pub fn iter_opt(&self) -> impl Iterator<Item = Option<&[u8]>> + '_ {
        let mut at = 0;
        self.ends.iter().map(move |&end| {
            if end == NIL {
                return None;
            }
            let s = &self.data[at..end];
            at = end;
            Some(s)
        })
    }

    /// The same reply as an array of bulk strings (a map of them for
    /// pairs).
    pub fn to_array(&self) -> Reply {
        if self.pairs {
            let mut it = self.iter();
            let mut out = Vec::with_capacity(self.len() / 2);
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                out.push((Reply::bulk(k), Reply::bulk(v)));
            }
            return Reply::Map(out);
        }
        Reply::Array(
            self.iter_opt()
                .map(|b| b.map_or(Reply::Nil, Reply::bulk))
                .collect(),
        )
    }
}

impl PartialEq for Reply {
    fn eq(&self, other: &Reply) -> bool {
        use Reply::*;
        match (self, other) {
            (Bulks(a), Bulks(b)) => a == b,
            (Bulks(a), b) | (b, Bulks(a)) => a.to_array() == *b,
            (Ok, Ok) | (Nil, Nil) | (NilArray, NilArray) => true,
            (Simple(a), Simple(b)) | (Error(a), Error(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Bulk(a), Bulk(b)) | (Verbatim(a), Verbatim(b)) | (BigNumber(a), BigNumber(b)) => {
                a == b
            }
            (VerbatimAs(f, a), VerbatimAs(g, b)) => f == g && a == b,
            (Array(a), Array(b)) | (Set(a), Set(b)) => a == b,
            (Map(a), Map(b)) => a == b,
            (Double(a), Double(b)) => a == b,
            (Bool(a), Bool(b)) => a == b,
            _ => false,
        }
    }
}

impl Reply {
    /// A bulk reply copied from a byte slice.
    pub fn bulk(b: &[u8]) -> Reply {
        Reply::Bulk(Bytes::copy_from_slice(b))
    }

    /// A bulk reply from a string.
    pub fn text(s: impl Into<String>) -> Reply {
        Reply::Bulk(Bytes::from(s.into()))
    }

    /// A simple-string reply.
    pub fn simple(s: &'static str) -> Reply {
        Reply::Simple(Cow::Borrowed(s))
    }

    /// A HELP reply: one status line per line of text, as Redis sends
    /// every subcommand's help.
    pub fn help<'a>(lines: impl IntoIterator<Item = &'a &'static str>) -> Reply {
        Reply::Array(lines.into_iter().map(|l| Reply::simple(l)).collect())
    }

    /// An array of bulk strings.
    pub fn bulks<I, B>(items: I) -> Reply
    where
        I: IntoIterator<Item = B>,
        B: Into<Bytes>,
    {
        Reply::Array(items.into_iter().map(|b| Reply::Bulk(b.into())).collect())
    }

    /// Whether this reply is an error.
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }
}

impl From<Error> for Reply {
    fn from(e: Error) -> Reply {
        Reply::Error(e.text())
    }
}

/// Formats a double exactly as Redis 7.0 does in replies (`%.17g`, with
/// `inf`/`-inf`).
pub fn format_double(d: f64) -> String {
    if d.is_infinite() {
        return if d > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if d.is_nan() {
        // As C's printf shows it, sign included (a Lua script's 0/0 is a
        // negative NaN).
        return if d.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    // Whole numbers below 1e17 (timestamps, counters: most scores) print
    // as their integer digits under %.17g; skip the general formatter.
    if d != 0.0 && d.fract() == 0.0 && d.abs() < 1e17 {
        return (d as i64).to_string();
    }
    format_g(d, 17)
}

/// C's `%.<precision>g` for a finite double.
pub fn format_g(d: f64, precision: usize) -> String {
    if d == 0.0 {
        return if d.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let p = precision.max(1);
    let sci = format!("{:.*e}", p - 1, d);
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (sci.as_str(), 0),
    };
    if exp < -4 || exp >= p as i32 {
        let m = strip_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{:.*}", decimals, d)).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Formats a float the way INCRBYFLOAT/HINCRBYFLOAT store it: plain decimal
/// notation, shortest representation that reads back the same.
pub fn format_human_float(d: f64) -> String {
    if d == 0.0 {
        return "0".into();
    }
    let s = format!("{d}");
    if s.contains('e') || s.contains('E') {
        // Rust only uses exponents for Debug; Display is plain, keep as is.
        return s;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g17_matches_c() {
        assert_eq!(format_double(1.1), "1.1000000000000001");
        assert_eq!(format_double(1.0), "1");
        assert_eq!(format_double(-2.5), "-2.5");
        assert_eq!(format_double(1e20), "1e+20");
        assert_eq!(format_double(1e-5), "1.0000000000000001e-05");
        assert_eq!(format_double(123456.0), "123456");
        assert_eq!(format_double(f64::INFINITY), "inf");
        assert_eq!(format_double(0.5), "0.5");
        assert_eq!(format_double(3.0e16), "30000000000000000");
    }

    #[test]
    fn whole_numbers_format_as_the_general_path_does() {
        let mut cases = vec![1.0, -1.0, 7.0, 10.0, 1e15, 1e16, 99999999999999998.0, -1e16];
        cases.extend([
            1700000000000.0,
            9007199254740992.0,
            9007199254740993.0,
            -123456789.0,
        ]);
        let mut x = 1.0f64;
        while x < 1e17 {
            cases.push(x);
            cases.push(-x);
            cases.push(x + 1.0);
            x *= 3.7;
            x = x.round();
        }
        for d in cases {
            assert_eq!(super::format_double(d), super::format_g(d, 17), "{d}");
        }
        assert_eq!(super::format_double(1e17), "1e+17");
        assert_eq!(super::format_double(-0.0), "-0");
        assert_eq!(super::format_double(0.5), "0.5");
    }
}
