//! The packed encodings Redis writes inside RDB strings: listpack (7.0),
//! ziplist (before 7.0), intset and zipmap (before 2.6). Every reader
//! checks each length against the bytes it has: the input is untrusted (a
//! RESTORE payload), so damage is an error, never a panic or a huge
//! allocation.

use super::{Bad, R};

/// An element of a listpack or ziplist: bytes, or an integer Redis stored
/// as one (written out as its decimal text).
#[derive(Clone, Copy)]
pub enum Elem<'a> {
    Bytes(&'a [u8]),
    Int(i64),
}

impl Elem<'_> {
    #[cfg(test)]
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

/// A decoder of packed elements: [`listpack`], [`ziplist`] or [`intset`].
pub type Decode = for<'a> fn(&'a [u8], &mut dyn FnMut(Elem<'a>) -> R<()>) -> R<usize>;

/// Calls `f` with each element of a listpack, in order; returns their
/// number. An error (damage, or `f`'s) stops at once.
pub fn listpack<'a>(data: &'a [u8], f: &mut dyn FnMut(Elem<'a>) -> R<()>) -> R<usize> {
    if data.len() < 7 || le(&data[..4]) as usize != data.len() || data[data.len() - 1] != 0xff {
        return Err(Bad);
    }
    let count = le(&data[4..6]) as usize;
    let body = &data[..data.len() - 1];
    let mut at = 6;
    let mut n = 0;
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
            128..=16382 => 2,
            16383..=2097150 => 3,
            2097151..=268435454 => 4,
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
        f(elem)?;
        n += 1;
    }
    // The header's count saturates at 65535 (then the entries tell).
    if count != 0xffff && count != n {
        return Err(Bad);
    }
    Ok(n)
}

/// Calls `f` with each element of a ziplist, in order; returns their
/// number.
pub fn ziplist<'a>(data: &'a [u8], f: &mut dyn FnMut(Elem<'a>) -> R<()>) -> R<usize> {
    if data.len() < 11 || le(&data[..4]) as usize != data.len() || data[data.len() - 1] != 0xff {
        return Err(Bad);
    }
    let tail = le(&data[4..8]) as usize;
    let count = le(&data[8..10]) as usize;
    let body = &data[..data.len() - 1];
    let mut at = 10;
    let mut n = 0;
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
        f(elem)?;
        n += 1;
        (prev_start, prev_len) = (start, at - start);
    }
    // The header points at the last entry (at the end when there is none).
    let last = if n == 0 { body.len() } else { prev_start };
    if tail != last || (count != 0xffff && count != n) {
        return Err(Bad);
    }
    Ok(n)
}

/// Calls `f` with each integer of an intset (which Redis never writes
/// empty); returns their number.
pub fn intset<'a>(data: &'a [u8], f: &mut dyn FnMut(Elem<'a>) -> R<()>) -> R<usize> {
    if data.len() < 8 {
        return Err(Bad);
    }
    let width = le(&data[..4]) as usize;
    let count = le(&data[4..8]) as usize;
    if count == 0 || !matches!(width, 2 | 4 | 8) || count.checked_mul(width) != Some(data.len() - 8)
    {
        return Err(Bad);
    }
    for c in data[8..].chunks_exact(width) {
        f(Elem::Int(le_signed(c)))?;
    }
    Ok(count)
}

/// Calls `f` with each field and value of a zipmap (hashes before Redis
/// 2.6; never empty); returns their number.
pub fn zipmap<'a>(data: &'a [u8], f: &mut dyn FnMut(&'a [u8], &'a [u8]) -> R<()>) -> R<usize> {
    let mut at = 1;
    let len = |at: &mut usize| -> R<Option<usize>> {
        match take(data, at, 1)?[0] {
            0xff => Ok(None),
            0xfe => Ok(Some(le(take(data, at, 4)?) as usize)),
            n => Ok(Some(n as usize)),
        }
    };
    let mut count = 0;
    while let Some(n) = len(&mut at)? {
        let field = take(data, &mut at, n)?;
        let n = len(&mut at)?.ok_or(Bad)?;
        let free = take(data, &mut at, 1)?[0] as usize;
        let value = take(data, &mut at, n)?;
        take(data, &mut at, free)?;
        f(field, value)?;
        count += 1;
    }
    // The first byte counts the pairs, up to 253 (254: count them).
    if at != data.len() || count == 0 || (data[0] < 254 && data[0] as usize != count) {
        return Err(Bad);
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(
        decode: impl for<'a> Fn(&'a [u8], &mut dyn FnMut(Elem<'a>) -> R<()>) -> R<usize>,
        data: &[u8],
    ) -> R<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        decode(data, &mut |e| {
            out.push(e.into_bytes());
            Ok(())
        })?;
        Ok(out)
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
        let got = texts(listpack, &data).unwrap();
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
            assert!(texts(listpack, &data[..cut]).is_err());
        }
        let mut wrong_count = data.clone();
        wrong_count[4] = 2;
        assert!(texts(listpack, &wrong_count).is_err());
        let mut long = data.clone();
        long[6] = 0x8f; // a string running past the end
        assert!(texts(listpack, &long).is_err());
        let mut back = data.clone();
        back[10] = 3; // the entry's length after it
        assert!(texts(listpack, &back).is_err());
    }

    #[test]
    fn back_lengths_at_their_size_boundaries() {
        // String entries of 32-bit length: 5 header bytes + the string.
        for entry_len in [16382usize, 16383, 16384, 2097150, 2097151, 2097152] {
            let n = entry_len - 5;
            let mut data = vec![0; 6];
            data.push(0xf0);
            data.extend_from_slice(&(n as u32).to_le_bytes());
            data.resize(6 + entry_len, b'x');
            // Redis's layout, read from the end: 7 bits a byte, the high
            // bit on every byte but the first.
            let size = match entry_len {
                0..=127 => 1,
                128..=16382 => 2,
                16383..=2097150 => 3,
                _ => 4,
            };
            let mut back: Vec<u8> = (0..size)
                .map(|i| {
                    let b = ((entry_len >> (7 * i)) & 0x7f) as u8;
                    if i + 1 < size {
                        b | 0x80
                    } else {
                        b
                    }
                })
                .collect();
            back.reverse();
            data.extend_from_slice(&back);
            data.push(0xff);
            let total = data.len() as u32;
            data[..4].copy_from_slice(&total.to_le_bytes());
            data[4..6].copy_from_slice(&1u16.to_le_bytes());
            let got = texts(listpack, &data).unwrap_or_else(|_| panic!("entry of {entry_len}"));
            assert_eq!(got[0].len(), n);
        }
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
        let got = texts(ziplist, &data).unwrap();
        let want: Vec<Vec<u8>> = ["xyz", "-1", "0", "12", "-128", "-1"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        assert_eq!(got, want);
        assert!(texts(ziplist, &data[..data.len() - 2]).is_err());
        let mut wrong_prev = data.clone();
        wrong_prev[10 + 5] = 3; // the second entry's previous length
        assert!(texts(ziplist, &wrong_prev).is_err());
        let mut wrong_tail = data.clone();
        wrong_tail[4] = 10;
        assert!(texts(ziplist, &wrong_tail).is_err());
    }

    #[test]
    fn intsets_and_zipmaps() {
        let mut d = 8u32.to_le_bytes().to_vec();
        d.extend_from_slice(&2u32.to_le_bytes());
        d.extend_from_slice(&(-5_000_000_000i64).to_le_bytes());
        d.extend_from_slice(&7i64.to_le_bytes());
        assert_eq!(
            texts(intset, &d).unwrap(),
            vec![b"-5000000000".to_vec(), b"7".to_vec()]
        );
        assert!(texts(intset, &d[..d.len() - 1]).is_err());
        let empty = [8, 0, 0, 0, 0, 0, 0, 0];
        assert!(texts(intset, &empty).is_err());
        let zm = [1, 1, b'f', 2, 1, b'v', b'w', 0, 0xff];
        let mut got = Vec::new();
        zipmap(&zm, &mut |f, v| {
            got.push((f.to_vec(), v.to_vec()));
            Ok(())
        })
        .unwrap();
        assert_eq!(got, vec![(b"f".to_vec(), b"vw".to_vec())]);
        assert!(zipmap(&zm[..5], &mut |_, _| Ok(())).is_err());
        let mut wrong_count = zm;
        wrong_count[0] = 2;
        assert!(zipmap(&wrong_count, &mut |_, _| Ok(())).is_err());
    }
}
