//! The packed encodings Redis writes inside RDB strings: listpack (7.0),
//! ziplist (before 7.0), intset and zipmap (before 2.6). Every reader
//! checks each length against the bytes it has: the input is untrusted (a
//! RESTORE payload), so damage is an error, never a panic or a huge
//! allocation.

use super::{Bad, R};

/// An element of a listpack or ziplist: bytes, or an integer Redis stored
/// as one (turned back into its decimal text by [`Elem::into_bytes`]).
pub enum Elem<'a> {
    Bytes(&'a [u8]),
    Int(i64),
}

impl Elem<'_> {
    pub fn into_bytes(self) -> Vec<u8> {
        match self {
            Elem::Bytes(b) => b.to_vec(),
            Elem::Int(i) => i.to_string().into_bytes(),
        }
    }
}

fn take<'a>(data: &'a [u8], at: &mut usize, n: usize) -> R<&'a [u8]> {
    let end = at.checked_add(n).ok_or(Bad)?;
    let s = data.get(*at..end).ok_or(Bad)?;
    *at = end;
    Ok(s)
}

fn le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | b as u64)
}

/// A little-endian two's-complement integer of `bytes.len()` bytes.
fn le_signed(bytes: &[u8]) -> i64 {
    let bits = bytes.len() * 8;
    let v = le(bytes);
    if bits < 64 && v >> (bits - 1) & 1 == 1 {
        (v | (u64::MAX << bits)) as i64
    } else {
        v as i64
    }
}

/// The elements of a listpack, in order.
pub fn listpack(data: &[u8]) -> R<Vec<Elem<'_>>> {
    if data.len() < 7 || le(&data[..4]) as usize != data.len() || data[data.len() - 1] != 0xff {
        return Err(Bad);
    }
    let count = le(&data[4..6]) as usize;
    let body = &data[..data.len() - 1];
    let mut at = 6;
    let mut out = Vec::new();
    while at < body.len() {
        let start = at;
        let b = body[at];
        at += 1;
        let elem = match b {
            0x00..=0x7f => Elem::Int(b as i64),
            0x80..=0xbf => Elem::Bytes(take(body, &mut at, (b & 0x3f) as usize)?),
            0xc0..=0xdf => {
                let lo = *take(body, &mut at, 1)?.first().ok_or(Bad)?;
                let v = (((b & 0x1f) as i64) << 8) | lo as i64;
                Elem::Int(if v >= 1 << 12 { v - (1 << 13) } else { v })
            }
            0xe0..=0xef => {
                let lo = *take(body, &mut at, 1)?.first().ok_or(Bad)?;
                let n = (((b & 0x0f) as usize) << 8) | lo as usize;
                Elem::Bytes(take(body, &mut at, n)?)
            }
            0xf0 => {
                let n = le(take(body, &mut at, 4)?) as usize;
                Elem::Bytes(take(body, &mut at, n)?)
            }
            0xf1 => Elem::Int(le_signed(take(body, &mut at, 2)?)),
            0xf2 => Elem::Int(le_signed(take(body, &mut at, 3)?)),
            0xf3 => Elem::Int(le_signed(take(body, &mut at, 4)?)),
            0xf4 => Elem::Int(le_signed(take(body, &mut at, 8)?)),
            _ => return Err(Bad),
        };
        // Each entry ends with its own length (encoding and data), in
        // 1 to 5 bytes of 7 bits.
        let len = at - start;
        let back = match len {
            0..=127 => 1,
            128..=16383 => 2,
            16384..=2097151 => 3,
            2097152..=268435455 => 4,
            _ => 5,
        };
        // Read from its last byte backwards: 7 bits a byte, the high bit
        // set on every byte but the first.
        let stored = take(body, &mut at, back)?
            .iter()
            .rev()
            .enumerate()
            .try_fold(0usize, |v, (i, &b)| {
                let more = b & 0x80 != 0;
                (more == (i + 1 < back)).then_some(v | ((b & 0x7f) as usize) << (7 * i))
            });
        if stored != Some(len) {
            return Err(Bad);
        }
        out.push(elem);
    }
    // The header's count saturates at 65535 (then the entries tell).
    if count != 0xffff && count != out.len() {
        return Err(Bad);
    }
    Ok(out)
}

/// The elements of a ziplist, in order.
pub fn ziplist(data: &[u8]) -> R<Vec<Elem<'_>>> {
    if data.len() < 11 || le(&data[..4]) as usize != data.len() || data[data.len() - 1] != 0xff {
        return Err(Bad);
    }
    let tail = le(&data[4..8]) as usize;
    let count = le(&data[8..10]) as usize;
    let body = &data[..data.len() - 1];
    let mut at = 10;
    let mut out = Vec::new();
    // Each entry starts with the length of the one before it (0 for the
    // first): 1 byte, or 0xfe and 4 bytes.
    let (mut prev_start, mut prev_len) = (10, 0);
    while at < body.len() {
        let start = at;
        let stored = match take(body, &mut at, 1)?[0] {
            0xfe => le(take(body, &mut at, 4)?) as usize,
            0xff => return Err(Bad),
            n => n as usize,
        };
        if stored != prev_len {
            return Err(Bad);
        }
        let b = take(body, &mut at, 1)?[0];
        let elem = match b >> 6 {
            0 => Elem::Bytes(take(body, &mut at, (b & 0x3f) as usize)?),
            1 => {
                let lo = take(body, &mut at, 1)?[0];
                Elem::Bytes(take(
                    body,
                    &mut at,
                    (((b & 0x3f) as usize) << 8) | lo as usize,
                )?)
            }
            2 if b == 0x80 => {
                let n = take(body, &mut at, 4)?;
                let n = u32::from_be_bytes([n[0], n[1], n[2], n[3]]) as usize;
                Elem::Bytes(take(body, &mut at, n)?)
            }
            2 => return Err(Bad),
            _ => match b {
                0xc0 => Elem::Int(le_signed(take(body, &mut at, 2)?)),
                0xd0 => Elem::Int(le_signed(take(body, &mut at, 4)?)),
                0xe0 => Elem::Int(le_signed(take(body, &mut at, 8)?)),
                0xf0 => Elem::Int(le_signed(take(body, &mut at, 3)?)),
                0xfe => Elem::Int(le_signed(take(body, &mut at, 1)?)),
                0xf1..=0xfd => Elem::Int((b & 0x0f) as i64 - 1),
                _ => return Err(Bad),
            },
        };
        out.push(elem);
        (prev_start, prev_len) = (start, at - start);
    }
    // The header points at the last entry (at the end when there is none).
    let last = if out.is_empty() {
        body.len()
    } else {
        prev_start
    };
    if tail != last || (count != 0xffff && count != out.len()) {
        return Err(Bad);
    }
    Ok(out)
}

/// The integers of an intset, as decimal text.
pub fn intset(data: &[u8]) -> R<Vec<Vec<u8>>> {
    if data.len() < 8 {
        return Err(Bad);
    }
    let width = le(&data[..4]) as usize;
    let count = le(&data[4..8]) as usize;
    if !matches!(width, 2 | 4 | 8) || count.checked_mul(width) != Some(data.len() - 8) {
        return Err(Bad);
    }
    Ok(data[8..]
        .chunks_exact(width)
        .map(|c| le_signed(c).to_string().into_bytes())
        .collect())
}

/// The field and value pairs of a zipmap (hashes before Redis 2.6).
pub fn zipmap(data: &[u8]) -> R<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut at = 1;
    let len = |at: &mut usize| -> R<Option<usize>> {
        match take(data, at, 1)?[0] {
            0xff => Ok(None),
            0xfe => Ok(Some(le(take(data, at, 4)?) as usize)),
            n => Ok(Some(n as usize)),
        }
    };
    let mut out = Vec::new();
    while let Some(n) = len(&mut at)? {
        let field = take(data, &mut at, n)?.to_vec();
        let n = len(&mut at)?.ok_or(Bad)?;
        let free = take(data, &mut at, 1)?[0] as usize;
        let value = take(data, &mut at, n)?.to_vec();
        take(data, &mut at, free)?;
        out.push((field, value));
    }
    if at != data.len() {
        return Err(Bad);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(v: Vec<Elem<'_>>) -> Vec<Vec<u8>> {
        v.into_iter().map(Elem::into_bytes).collect()
    }

    /// A listpack of the given raw entries (encoding + data; back-lengths
    /// added here).
    fn lp(entries: &[&[u8]]) -> Vec<u8> {
        let mut body = Vec::new();
        for e in entries {
            body.extend_from_slice(e);
            assert!(e.len() < 128);
            body.push(e.len() as u8);
        }
        let total = 6 + body.len() + 1;
        let mut out = (total as u32).to_le_bytes().to_vec();
        out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        out.extend_from_slice(&body);
        out.push(0xff);
        out
    }

    #[test]
    fn listpack_entries_of_every_encoding() {
        let data = lp(&[
            &[5],
            &[0x83, b'a', b'b', b'c'],
            &[0xdf, 0xff], // 13-bit -1
            &[0xc1, 0x00], // 13-bit 256
            &[0xf1, 0x00, 0x80],
            &[0xf2, 0xff, 0xff, 0x7f],
            &[0xf3, 0x00, 0x00, 0x00, 0x80],
            &[0xf4, 1, 0, 0, 0, 0, 0, 0, 0],
        ]);
        let got = texts(listpack(&data).unwrap());
        let want: Vec<Vec<u8>> = [
            "5",
            "abc",
            "-1",
            "256",
            "-32768",
            "8388607",
            "-2147483648",
            "1",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn damaged_listpacks_are_errors() {
        let data = lp(&[&[0x83, b'a', b'b', b'c']]);
        for cut in 0..data.len() {
            assert!(listpack(&data[..cut]).is_err());
        }
        let mut wrong_count = data.clone();
        wrong_count[4] = 2;
        assert!(listpack(&wrong_count).is_err());
        let mut long = data.clone();
        long[6] = 0x8f; // a string running past the end
        assert!(listpack(&long).is_err());
        let mut back = data.clone();
        back[10] = 3; // the entry's length after it
        assert!(listpack(&back).is_err());
    }

    #[test]
    fn ziplist_entries_of_every_encoding() {
        let mut body = Vec::new();
        let (mut prev, mut last) = (0, 0);
        for e in [
            &[0x03, b'x', b'y', b'z'][..],
            &[0xc0, 0xff, 0xff],
            &[0xf1],
            &[0xfd],
            &[0xfe, 0x80],
            &[0xf0, 0xff, 0xff, 0xff],
        ] {
            last = 10 + body.len();
            body.push(prev);
            body.extend_from_slice(e);
            prev = e.len() as u8 + 1;
        }
        let total = 10 + body.len() + 1;
        let mut data = (total as u32).to_le_bytes().to_vec();
        data.extend_from_slice(&(last as u32).to_le_bytes());
        data.extend_from_slice(&6u16.to_le_bytes());
        data.extend_from_slice(&body);
        data.push(0xff);
        let got = texts(ziplist(&data).unwrap());
        let want: Vec<Vec<u8>> = ["xyz", "-1", "0", "12", "-128", "-1"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        assert_eq!(got, want);
        assert!(ziplist(&data[..data.len() - 2]).is_err());
        let mut wrong_prev = data.clone();
        wrong_prev[10 + 5] = 3; // the second entry's previous length
        assert!(ziplist(&wrong_prev).is_err());
        let mut wrong_tail = data.clone();
        wrong_tail[4] = 10;
        assert!(ziplist(&wrong_tail).is_err());
    }

    #[test]
    fn intsets_and_zipmaps() {
        let mut d = 8u32.to_le_bytes().to_vec();
        d.extend_from_slice(&2u32.to_le_bytes());
        d.extend_from_slice(&(-5_000_000_000i64).to_le_bytes());
        d.extend_from_slice(&7i64.to_le_bytes());
        assert_eq!(
            intset(&d).unwrap(),
            vec![b"-5000000000".to_vec(), b"7".to_vec()]
        );
        assert!(intset(&d[..d.len() - 1]).is_err());
        let zm = [1, 1, b'f', 2, 1, b'v', b'w', 0, 0xff];
        assert_eq!(zipmap(&zm).unwrap(), vec![(b"f".to_vec(), b"vw".to_vec())]);
        assert!(zipmap(&zm[..5]).is_err());
    }
}
