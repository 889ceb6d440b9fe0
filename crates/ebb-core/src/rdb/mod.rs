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
mod value;
mod write;

use std::sync::atomic::{AtomicBool, Ordering};

pub use lzf::crc64;
pub use write::{aof_base, redis_payload, snapshot};

/// Damage, or something ebb cannot rebuild; the caller words it.
#[derive(Debug, PartialEq, Eq)]
pub struct Bad;

type R<T> = Result<T, Bad>;

/// Redis 7.4's latest field deadline (2^48 - 1 ms).
const FIELD_DEADLINE_MAX: u64 = (1 << 48) - 1;

/// The newest RDB version Redis 7.0 writes and its RESTORE accepts.
pub const PAYLOAD_VERSION: u16 = 10;
/// The newest file version read (Redis 7.4): later types are refused one
/// by one, with their name.
pub const FILE_VERSION: u32 = 12;

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

    /// A length when `read`, else 0 (nothing read).
    fn len_if(&mut self, read: bool) -> R<u64> {
        if read {
            self.len()
        } else {
            Ok(0)
        }
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
        self.bytes().map(std::borrow::Cow::into_owned)
    }

    /// A string: borrowed from the input when stored as it is, else
    /// (an integer encoding, LZF) made.
    fn bytes(&mut self) -> R<std::borrow::Cow<'a, [u8]>> {
        use std::borrow::Cow;
        let int = |i: i64| Cow::Owned(itoa::Buffer::new().format(i).as_bytes().to_vec());
        match self.len_or_enc()? {
            (n, false) => {
                let n = usize::try_from(n).map_err(|_| Bad)?;
                Ok(Cow::Borrowed(self.take(n)?))
            }
            (0, true) => Ok(int(self.byte()? as i8 as i64)),
            (1, true) => {
                let s = self.take(2)?;
                Ok(int(i16::from_le_bytes([s[0], s[1]]) as i64))
            }
            (2, true) => {
                let s = self.take(4)?;
                Ok(int(i32::from_le_bytes([s[0], s[1], s[2], s[3]]) as i64))
            }
            (3, true) => {
                let clen = usize::try_from(self.len()?).map_err(|_| Bad)?;
                let len = usize::try_from(self.len()?).map_err(|_| Bad)?;
                lzf::decompress(self.take(clen)?, len).map(Cow::Owned)
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
/// Why a type cannot be read.
#[derive(Debug, PartialEq, Eq)]
pub enum Unreadable {
    /// Damaged or truncated; what failed, as Redis words it.
    Damaged(&'static str),
    /// An empty collection: Redis never writes one, and skips one it
    /// reads in a file (RESTORE refuses it).
    Empty,
    /// A type ebb has no counterpart for (streams, module values); its
    /// name.
    Unsupported(&'static str),
}

impl From<Bad> for Unreadable {
    fn from(_: Bad) -> Self {
        Unreadable::Damaged("RDB integrity check failed")
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

/// Calls `emit` with the commands that build the value of a Redis DUMP
/// payload (on the key `key`).
pub fn payload_commands(
    data: &[u8],
    key: &[u8],
    emit: &mut dyn FnMut(&[&[u8]]),
) -> Result<(), PayloadError> {
    if !is_payload(data) {
        return Err(PayloadError::VersionOrChecksum);
    }
    let body = &data[..data.len() - 10];
    let mut r = Reader { data: body, at: 0 };
    let t = r
        .byte()
        .map_err(|_| PayloadError::BadFormat("payload without a value"))?;
    // Types newer than Redis 7.0's are not in a payload it would take.
    if t > 21 {
        return Err(PayloadError::BadFormat("Unknown RDB encoding type"));
    }
    value::value_commands(&mut r, t, key, emit).map_err(|e| {
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
    Ok(())
}

/// The libraries' code in a payload of Redis's FUNCTION DUMP: an
/// RDB function record (opcode 245 and the code) per library, then the
/// DUMP footer. Err is Redis's reply text.
pub fn function_payload(data: &[u8]) -> Result<Vec<Vec<u8>>, &'static str> {
    if !is_payload(data) {
        return Err("ERR DUMP payload version or checksum are wrong");
    }
    let mut r = Reader {
        data: &data[..data.len() - 10],
        at: 0,
    };
    let mut out = Vec::new();
    while r.left() > 0 {
        if r.byte() != Ok(file::OP_FUNCTION2) {
            return Err("ERR given type is not a function");
        }
        out.push(r.string().map_err(|_| "ERR Bad data format")?);
    }
    Ok(out)
}

/// Redis's FUNCTION DUMP payload for these libraries' code (version 10,
/// the first with functions), which Redis's FUNCTION RESTORE takes.
pub fn function_dump<'a>(codes: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for code in codes {
        out.push(file::OP_FUNCTION2);
        write::put_raw_string(&mut out, code);
    }
    out.extend_from_slice(&PAYLOAD_VERSION.to_le_bytes());
    let sum = crc64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

mod file;
pub use file::{file_commands, is_file, load_file, Loaded, Target};

/// A command's arguments as text, for tests.
#[cfg(test)]
fn as_text(cmd: &[&[u8]]) -> Vec<String> {
    cmd.iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

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

    /// The commands a payload decodes to, as text.
    fn cmds(data: &[u8]) -> Result<Vec<Vec<String>>, PayloadError> {
        let mut out = Vec::new();
        payload_commands(data, b"k", &mut |c| out.push(as_text(c)))?;
        Ok(out)
    }

    #[test]
    fn payload_footer_checks() {
        // A string "hello", as Redis 7.0 dumps it.
        let p = with_footer(b"\x00\x05hello", 10);
        assert_eq!(
            cmds(&p),
            Ok(vec![vec!["SET".into(), "k".into(), "hello".into()]])
        );
        let newer = with_footer(b"\x00\x05hello", 11);
        assert_eq!(cmds(&newer), Err(PayloadError::VersionOrChecksum));
        let mut flipped = p.clone();
        flipped[3] ^= 1;
        assert_eq!(cmds(&flipped), Err(PayloadError::VersionOrChecksum));
        assert_eq!(cmds(b"x"), Err(PayloadError::VersionOrChecksum));
        // Good footer, bad insides.
        for body in [
            &b"\x00\x09hello"[..],
            b"\xc8",
            b"\x00\x05hello!",
            b"\x0f\x00",
            b"\x18\x00",
            b"",
        ] {
            assert!(matches!(
                cmds(&with_footer(body, 10)),
                Err(PayloadError::BadFormat(_))
            ));
        }
    }

    #[test]
    fn empty_or_repeated_collections_are_refused() {
        assert!(cmds(&with_footer(b"\x02\x00", 10)).is_err());
        assert_eq!(
            cmds(&with_footer(b"\x02\x02\x01a\x01a", 10)),
            Err(PayloadError::BadFormat("Duplicate set members detected"))
        );
        assert_eq!(
            cmds(&with_footer(b"\x02\x02\x01a\x01b", 10)),
            Ok(vec![vec![
                "SADD".into(),
                "k".into(),
                "a".into(),
                "b".into()
            ]])
        );
        // A score that is not a number.
        let mut z = b"\x05\x01\x01m".to_vec();
        z.extend_from_slice(&f64::NAN.to_le_bytes());
        assert_eq!(
            cmds(&with_footer(&z, 10)),
            Err(PayloadError::BadFormat("Zset with NAN score detected"))
        );
    }

    #[test]
    fn elements_go_out_in_commands_of_a_chunk() {
        // A set of 1,200 members: three SADDs of 512, 512 and 176.
        let mut body = vec![2u8, 0x44, 0xb0]; // type, 14-bit length 1200
        for i in 0..1200u32 {
            let m = i.to_string();
            body.push(m.len() as u8);
            body.extend_from_slice(m.as_bytes());
        }
        let got = cmds(&with_footer(&body, 10)).unwrap();
        let sizes: Vec<usize> = got.iter().map(|c| c.len() - 2).collect();
        assert_eq!(sizes, vec![512, 512, 176]);
    }

    #[test]
    fn scores_survive_the_trip_through_zadd() {
        for s in [
            0.1,
            1e-300,
            -3.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            5e-324,
            1e22,
        ] {
            let t = value::score_text(s);
            let back = crate::cmd::zsets::range::parse_score(&t).unwrap();
            assert_eq!(back.to_bits(), s.to_bits(), "{s}");
        }
    }

    proptest! {
        #[test]
        fn any_score_survives_the_trip_through_zadd(bits in any::<u64>()) {
            let s = f64::from_bits(bits);
            if !s.is_nan() {
                let t = value::score_text(s);
                let back = crate::cmd::zsets::range::parse_score(&t).unwrap();
                prop_assert_eq!(back.to_bits(), s.to_bits(), "{}", s);
            }
        }

        #[test]
        fn any_payload_is_a_value_or_an_error(t in 0u8..=25, body in proptest::collection::vec(any::<u8>(), 0..200)) {
            let mut b = vec![t];
            b.extend_from_slice(&body);
            let _ = payload_commands(&with_footer(&b, 10), b"", &mut |_| {});
        }

        #[test]
        fn any_file_is_data_or_an_error(body in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut d = b"REDIS0010".to_vec();
            d.extend_from_slice(&body);
            let _ = file_commands(&d, 16, &mut |_| {});
        }
    }
}
