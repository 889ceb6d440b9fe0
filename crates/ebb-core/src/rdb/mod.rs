//! Reading Redis's RDB encoding, so that data leaves Redis for ebb without
//! a conversion step: a `dump.rdb` written by Redis (up to 7.4's format
//! version 12, for the types ebb has) and the payloads of Redis's DUMP,
//! which RESTORE and MIGRATE carry. Values come out as the commands that
//! rebuild them (as [`crate::dump`] writes ebb's own), so loading runs
//! the same code as an AOF replay. ebb writes only its own format.
//!
//! Everything read is untrusted: lengths are checked against the bytes
//! present before anything is reserved, and damage is an error.

mod lzf;
mod packed;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;

pub use lzf::crc64;
use packed::Elem;

/// Damage, or something ebb cannot rebuild; the caller words it.
#[derive(Debug, PartialEq, Eq)]
pub struct Bad;

type R<T> = Result<T, Bad>;

/// The newest RDB version Redis 7.0 writes and its RESTORE accepts.
pub const PAYLOAD_VERSION: u16 = 10;
/// The newest file version read (Redis 7.4): later types are refused one
/// by one, with their name.
pub const FILE_VERSION: u32 = 12;

/// A decoded value.
#[derive(Debug, PartialEq)]
pub enum Object {
    Str(Vec<u8>),
    List(Vec<Vec<u8>>),
    Set(Vec<Vec<u8>>),
    ZSet(Vec<(f64, Vec<u8>)>),
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        let end = self.at.checked_add(n).ok_or(Bad)?;
        let s = self.data.get(self.at..end).ok_or(Bad)?;
        self.at = end;
        Ok(s)
    }

    fn byte(&mut self) -> R<u8> {
        Ok(self.take(1)?[0])
    }

    fn left(&self) -> usize {
        self.data.len() - self.at
    }

    /// A length, or (second field true) a special string encoding's id.
    fn len_or_enc(&mut self) -> R<(u64, bool)> {
        let b = self.byte()?;
        Ok(match b >> 6 {
            0 => ((b & 0x3f) as u64, false),
            1 => ((((b & 0x3f) as u64) << 8) | self.byte()? as u64, false),
            2 if b == 0x80 => {
                let s = self.take(4)?;
                (u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as u64, false)
            }
            2 if b == 0x81 => {
                let mut a = [0u8; 8];
                a.copy_from_slice(self.take(8)?);
                (u64::from_be_bytes(a), false)
            }
            2 => return Err(Bad),
            _ => ((b & 0x3f) as u64, true),
        })
    }

    fn len(&mut self) -> R<u64> {
        match self.len_or_enc()? {
            (n, false) => Ok(n),
            _ => Err(Bad),
        }
    }

    /// A count of items that each take at least `min` bytes: one past what
    /// is left is damage (nothing is reserved for it).
    fn count(&mut self, min: usize) -> R<usize> {
        let n = self.len()?;
        if n > (self.left() / min.max(1)) as u64 {
            return Err(Bad);
        }
        Ok(n as usize)
    }

    fn string(&mut self) -> R<Vec<u8>> {
        match self.len_or_enc()? {
            (n, false) => {
                let n = usize::try_from(n).map_err(|_| Bad)?;
                Ok(self.take(n)?.to_vec())
            }
            (0, true) => Ok((self.byte()? as i8).to_string().into_bytes()),
            (1, true) => {
                let s = self.take(2)?;
                Ok(i16::from_le_bytes([s[0], s[1]]).to_string().into_bytes())
            }
            (2, true) => {
                let s = self.take(4)?;
                Ok(i32::from_le_bytes([s[0], s[1], s[2], s[3]])
                    .to_string()
                    .into_bytes())
            }
            (3, true) => {
                let clen = usize::try_from(self.len()?).map_err(|_| Bad)?;
                let len = usize::try_from(self.len()?).map_err(|_| Bad)?;
                lzf::decompress(self.take(clen)?, len)
            }
            _ => Err(Bad),
        }
    }

    fn u64_le(&mut self) -> R<u64> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }

    /// A score of the old sorted-set type: its text, one length byte
    /// first (253 nan, 254 +inf, 255 -inf).
    fn text_double(&mut self) -> R<f64> {
        match self.byte()? {
            253 => Err(Bad),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            n => parse_score(self.take(n as usize)?),
        }
    }
}

fn parse_score(text: &[u8]) -> R<f64> {
    let v: f64 = std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or(Bad)?;
    if v.is_nan() {
        return Err(Bad);
    }
    Ok(v)
}

fn elem_score(e: Elem<'_>) -> R<f64> {
    match e {
        Elem::Int(i) => Ok(i as f64),
        Elem::Bytes(b) => parse_score(b),
    }
}

/// Pairs of elements (hash fields and values, sorted-set members and
/// scores); an odd count is damage.
fn pairs(items: Vec<Elem<'_>>) -> R<Vec<(Elem<'_>, Elem<'_>)>> {
    if !items.len().is_multiple_of(2) {
        return Err(Bad);
    }
    let mut it = items.into_iter();
    let mut out = Vec::new();
    while let (Some(a), Some(b)) = (it.next(), it.next()) {
        out.push((a, b));
    }
    Ok(out)
}

/// Why a type cannot be read.
#[derive(Debug, PartialEq, Eq)]
pub enum Unreadable {
    /// Damaged or truncated; what failed, as Redis words it.
    Damaged(&'static str),
    /// An empty collection: Redis never writes one, and skips one it
    /// reads in a file (RESTORE refuses it).
    Empty,
    /// A type ebb has no counterpart for (streams, module values, hashes
    /// with field TTLs in Redis 7.4's encoding); its name.
    Unsupported(&'static str),
}

impl From<Bad> for Unreadable {
    fn from(_: Bad) -> Self {
        Unreadable::Damaged("RDB integrity check failed")
    }
}

fn unsupported(t: u8) -> Option<&'static str> {
    Some(match t {
        6 | 7 => "a module value",
        15 | 19 | 21 => "a stream",
        22..=25 => "a hash with field TTLs",
        _ => return None,
    })
}

/// Reads one value of RDB type `t`.
fn object(r: &mut Reader<'_>, t: u8) -> Result<Object, Unreadable> {
    if let Some(name) = unsupported(t) {
        return Err(Unreadable::Unsupported(name));
    }
    let strings = |r: &mut Reader<'_>| -> R<Vec<Vec<u8>>> {
        let n = r.count(1)?;
        (0..n).map(|_| r.string()).collect()
    };
    let texts = |v: Vec<Elem<'_>>| v.into_iter().map(Elem::into_bytes).collect::<Vec<_>>();
    let hash_of = |v: Vec<Elem<'_>>| -> R<Vec<(Vec<u8>, Vec<u8>)>> {
        Ok(pairs(v)?
            .into_iter()
            .map(|(f, v)| (f.into_bytes(), v.into_bytes()))
            .collect())
    };
    let zset_of = |v: Vec<Elem<'_>>| -> R<Vec<(f64, Vec<u8>)>> {
        pairs(v)?
            .into_iter()
            .map(|(m, s)| Ok((elem_score(s)?, m.into_bytes())))
            .collect()
    };
    let obj = match t {
        0 => Object::Str(r.string()?),
        1 => Object::List(strings(r)?),
        2 => Object::Set(strings(r)?),
        3 | 5 => {
            let n = r.count(2)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                let m = r.string()?;
                let s = if t == 3 {
                    r.text_double()?
                } else {
                    let s = f64::from_bits(r.u64_le()?);
                    if s.is_nan() {
                        return Err(Unreadable::Damaged("Zset with NAN score detected"));
                    }
                    s
                };
                v.push((s, m));
            }
            Object::ZSet(v)
        }
        4 => {
            let n = r.count(2)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push((r.string()?, r.string()?));
            }
            Object::Hash(v)
        }
        9 | 10 | 11 | 12 | 13 | 16 | 17 | 20 => {
            let blob = r.string()?;
            let b = &blob[..];
            let (obj, what) = match t {
                9 => (packed::zipmap(b).map(Object::Hash), "Zipmap"),
                10 => (
                    packed::ziplist(b).map(|v| Object::List(texts(v))),
                    "List ziplist",
                ),
                11 => (packed::intset(b).map(Object::Set), "Intset"),
                12 => (
                    packed::ziplist(b).and_then(zset_of).map(Object::ZSet),
                    "Zset ziplist",
                ),
                13 => (
                    packed::ziplist(b).and_then(hash_of).map(Object::Hash),
                    "Hash ziplist",
                ),
                16 => (
                    packed::listpack(b).and_then(hash_of).map(Object::Hash),
                    "Hash listpack",
                ),
                17 => (
                    packed::listpack(b).and_then(zset_of).map(Object::ZSet),
                    "Zset listpack",
                ),
                _ => (
                    packed::listpack(b).map(|v| Object::Set(texts(v))),
                    "Set listpack",
                ),
            };
            // Redis's integrity check of a packed value covers repeated
            // members and fields, and an empty zipmap.
            let obj = obj.and_then(|o| match &o {
                Object::Hash(v) if t == 9 && v.is_empty() => Err(Bad),
                _ => check(&o).map(|()| o),
            });
            obj.map_err(|_| Unreadable::Damaged(integrity(what)))?
        }
        14 | 18 => {
            let nodes = r.count(1)?;
            let mut items = Vec::new();
            for _ in 0..nodes {
                // Version 2 says per node whether it holds one plain
                // element (1) or a listpack of them (2).
                let plain = t == 18
                    && match r.len()? {
                        1 => true,
                        2 => false,
                        _ => return Err(Unreadable::Damaged("Quicklist integrity check failed")),
                    };
                let blob = r.string()?;
                if blob.is_empty() {
                    return Err(Unreadable::Damaged("Quicklist integrity check failed"));
                }
                if plain {
                    items.push(blob);
                    continue;
                }
                let elems = if t == 14 {
                    packed::ziplist(&blob)
                        .map_err(|_| Unreadable::Damaged("Ziplist integrity check failed"))?
                } else {
                    packed::listpack(&blob)
                        .map_err(|_| Unreadable::Damaged("Listpack integrity check failed"))?
                };
                // An empty node is skipped, as Redis skips it (a list left
                // with none is an empty key).
                items.extend(texts(elems));
            }
            Object::List(items)
        }
        _ => return Err(Unreadable::Damaged("Unknown RDB encoding type")),
    };
    if match &obj {
        Object::Str(_) => false,
        Object::List(v) => v.is_empty(),
        Object::Set(v) => v.is_empty(),
        Object::ZSet(v) => v.is_empty(),
        Object::Hash(v) => v.is_empty(),
    } {
        return Err(Unreadable::Empty);
    }
    check(&obj).map_err(|_| {
        Unreadable::Damaged(match obj {
            Object::Set(_) => "Duplicate set members detected",
            Object::ZSet(_) => "Duplicate zset fields detected",
            _ => "Duplicate hash fields detected",
        })
    })?;
    Ok(obj)
}

/// "`what` integrity check failed", for the packed types.
fn integrity(what: &'static str) -> &'static str {
    match what {
        "Zipmap" => "Zipmap integrity check failed",
        "List ziplist" => "List ziplist integrity check failed",
        "Intset" => "Intset integrity check failed",
        "Zset ziplist" => "Zset ziplist integrity check failed",
        "Hash ziplist" => "Hash ziplist integrity check failed",
        "Hash listpack" => "Hash listpack integrity check failed",
        "Zset listpack" => "Zset listpack integrity check failed",
        _ => "Set listpack integrity check failed",
    }
}

/// Refuses what Redis refuses in a value it reads: a member or field
/// twice.
fn check(obj: &Object) -> R<()> {
    fn distinct<'a>(n: usize, items: impl Iterator<Item = &'a [u8]>) -> R<()> {
        let mut seen = HashSet::with_capacity(n);
        for m in items {
            if !seen.insert(m) {
                return Err(Bad);
            }
        }
        Ok(())
    }
    match obj {
        Object::Str(_) | Object::List(_) => Ok(()),
        Object::Set(v) => distinct(v.len(), v.iter().map(|m| m.as_slice())),
        Object::ZSet(v) => distinct(v.len(), v.iter().map(|(_, m)| m.as_slice())),
        Object::Hash(v) => distinct(v.len(), v.iter().map(|(f, _)| f.as_slice())),
    }
}

/// Elements per command, so no single command gets huge.
const CHUNK: usize = 512;

fn b(s: &'static str) -> Bytes {
    Bytes::from_static(s.as_bytes())
}

/// A score as text that parses back to the same double.
fn score_text(s: f64) -> Bytes {
    Bytes::from(format!("{s:?}"))
}

/// Calls `emit` with the commands that build `obj` under `key`.
pub fn object_commands(key: &Bytes, obj: Object, emit: &mut dyn FnMut(Vec<Bytes>)) {
    fn chunked<T>(
        name: &'static str,
        key: &Bytes,
        items: Vec<T>,
        emit: &mut dyn FnMut(Vec<Bytes>),
        mut push: impl FnMut(&mut Vec<Bytes>, T),
    ) {
        let mut it = items.into_iter().peekable();
        while it.peek().is_some() {
            let mut cmd = vec![b(name), key.clone()];
            for x in it.by_ref().take(CHUNK) {
                push(&mut cmd, x);
            }
            emit(cmd);
        }
    }
    match obj {
        Object::Str(v) => emit(vec![b("SET"), key.clone(), Bytes::from(v)]),
        Object::List(v) => chunked("RPUSH", key, v, emit, |c, x| c.push(Bytes::from(x))),
        Object::Set(v) => chunked("SADD", key, v, emit, |c, x| c.push(Bytes::from(x))),
        Object::ZSet(v) => chunked("ZADD", key, v, emit, |c, (s, m)| {
            c.push(score_text(s));
            c.push(Bytes::from(m));
        }),
        Object::Hash(v) => chunked("HSET", key, v, emit, |c, (f, x)| {
            c.push(Bytes::from(f));
            c.push(Bytes::from(x));
        }),
    }
}

/// Why a DUMP payload was refused, in Redis's two errors.
#[derive(Debug, PartialEq, Eq)]
pub enum PayloadError {
    /// Too short, a version past [`PAYLOAD_VERSION`], or a CRC mismatch.
    VersionOrChecksum,
    /// Passed those checks but does not decode to a value ebb has; what
    /// failed, as Redis logs it.
    BadFormat(&'static str),
}

/// DEBUG SET-SKIP-CHECKSUM-VALIDATION: payloads are taken whatever their
/// checksum (Redis's testing aid, for hand-made payloads).
pub static SKIP_CHECKSUM: AtomicBool = AtomicBool::new(false);

/// Whether a payload's checksum is to be checked.
pub fn checksums_checked() -> bool {
    !SKIP_CHECKSUM.load(Ordering::Relaxed)
}

thread_local! {
    static REFUSAL: std::cell::Cell<Option<&'static str>> = const { std::cell::Cell::new(None) };
}

/// Keeps why RESTORE refused a payload, for the server's log.
pub fn note_refusal(why: &'static str) {
    REFUSAL.with(|r| r.set(Some(why)));
}

/// Why the last payload refused on this thread was refused (once).
pub fn take_refusal() -> Option<&'static str> {
    REFUSAL.with(|r| r.take())
}

/// Whether `data` has the footer of a Redis DUMP payload (2-byte version
/// no newer than Redis 7.0's, CRC-64 of all before it) that checks.
pub fn is_payload(data: &[u8]) -> bool {
    let Some(body_len) = data.len().checked_sub(10) else {
        return false;
    };
    let version = u16::from_le_bytes([data[body_len], data[body_len + 1]]);
    let crc = &data[body_len + 2..];
    version <= PAYLOAD_VERSION
        && (!checksums_checked() || crc64(&data[..body_len + 2]).to_le_bytes() == crc)
}

/// The value of a Redis DUMP payload.
pub fn payload_object(data: &[u8]) -> Result<Object, PayloadError> {
    if !is_payload(data) {
        return Err(PayloadError::VersionOrChecksum);
    }
    let body = &data[..data.len() - 10];
    let mut r = Reader { data: body, at: 0 };
    let t = r
        .byte()
        .map_err(|_| PayloadError::BadFormat("payload without a value"))?;
    let obj = object(&mut r, t).map_err(|e| {
        PayloadError::BadFormat(match e {
            Unreadable::Damaged(why) => why,
            Unreadable::Empty => "Empty keys are not allowed",
            Unreadable::Unsupported(what) => what,
        })
    })?;
    // Trailing bytes after the value are damage too.
    if r.left() != 0 {
        return Err(PayloadError::BadFormat("bytes left after the value"));
    }
    Ok(obj)
}

mod file;
pub use file::{file_commands, is_file, Loaded};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `body` with a DUMP footer of `version` whose CRC checks.
    fn with_footer(body: &[u8], version: u16) -> Vec<u8> {
        let mut d = body.to_vec();
        d.extend_from_slice(&version.to_le_bytes());
        let c = crc64(&d);
        d.extend_from_slice(&c.to_le_bytes());
        d
    }

    #[test]
    fn payload_footer_checks() {
        // A string "hello", as Redis 7.0 dumps it.
        let p = with_footer(b"\x00\x05hello", 10);
        assert_eq!(payload_object(&p), Ok(Object::Str(b"hello".to_vec())));
        let newer = with_footer(b"\x00\x05hello", 11);
        assert_eq!(payload_object(&newer), Err(PayloadError::VersionOrChecksum));
        let mut flipped = p.clone();
        flipped[3] ^= 1;
        assert_eq!(
            payload_object(&flipped),
            Err(PayloadError::VersionOrChecksum)
        );
        assert_eq!(payload_object(b"x"), Err(PayloadError::VersionOrChecksum));
        // Good footer, bad insides.
        for body in [
            &b"\x00\x09hello"[..],
            b"\xc8",
            b"\x00\x05hello!",
            b"\x0f\x00",
            b"",
        ] {
            assert!(matches!(
                payload_object(&with_footer(body, 10)),
                Err(PayloadError::BadFormat(_))
            ));
        }
    }

    #[test]
    fn empty_or_repeated_collections_are_refused() {
        assert!(payload_object(&with_footer(b"\x02\x00", 10)).is_err());
        assert!(payload_object(&with_footer(b"\x02\x02\x01a\x01a", 10)).is_err());
        assert_eq!(
            payload_object(&with_footer(b"\x02\x02\x01a\x01b", 10)),
            Ok(Object::Set(vec![b"a".to_vec(), b"b".to_vec()]))
        );
        // A score that is not a number.
        let mut z = b"\x05\x01\x01m".to_vec();
        z.extend_from_slice(&f64::NAN.to_le_bytes());
        assert!(payload_object(&with_footer(&z, 10)).is_err());
    }

    #[test]
    fn scores_survive_the_trip_through_text() {
        for s in [
            0.1,
            1e-300,
            -3.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            5e-324,
            -0.0,
        ] {
            let t = score_text(s);
            let back: f64 = crate::args::parse_f64(&t).unwrap();
            assert_eq!(back.to_bits(), s.to_bits(), "{s}");
        }
    }

    proptest! {
        #[test]
        fn any_payload_is_a_value_or_an_error(t in 0u8..=25, body in proptest::collection::vec(any::<u8>(), 0..200)) {
            let mut b = vec![t];
            b.extend_from_slice(&body);
            let _ = payload_object(&with_footer(&b, 10));
        }

        #[test]
        fn any_file_is_data_or_an_error(body in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut d = b"REDIS0010".to_vec();
            d.extend_from_slice(&body);
            let _ = file_commands(&d, 16, &mut |_| {});
        }
    }
}
