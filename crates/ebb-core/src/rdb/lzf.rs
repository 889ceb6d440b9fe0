//! LZF decompression (Redis compresses RDB strings with it) and the CRC-64
//! ("Jones", reflected) that guards RDB files and DUMP payloads.

use super::{Bad, R};

/// Decompresses `input` into exactly `len` bytes.
pub fn decompress(input: &[u8], len: usize) -> R<Vec<u8>> {
    // A compressed string never grows more than this much (LZF's longest
    // back-reference is 264 bytes for a 2-byte token): a larger claim is
    // damage, not a reason to reserve room.
    if len > input.len().saturating_mul(132).saturating_add(64) {
        return Err(Bad);
    }
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|_| Bad)?;
    let mut i = 0;
    while i < input.len() {
        let ctrl = input[i] as usize;
        i += 1;
        if ctrl < 32 {
            let run = input.get(i..i + ctrl + 1).ok_or(Bad)?;
            out.extend_from_slice(run);
            i += ctrl + 1;
        } else {
            let mut n = ctrl >> 5;
            if n == 7 {
                n += *input.get(i).ok_or(Bad)? as usize;
                i += 1;
            }
            let low = *input.get(i).ok_or(Bad)? as usize;
            i += 1;
            let back = ((ctrl & 0x1f) << 8) + low + 1;
            let from = out.len().checked_sub(back).ok_or(Bad)?;
            // Copied byte by byte: the reference may overlap what it
            // produces (a run).
            for k in 0..n + 2 {
                let b = out[from + k];
                out.push(b);
            }
        }
        if out.len() > len {
            return Err(Bad);
        }
    }
    if out.len() != len {
        return Err(Bad);
    }
    Ok(out)
}

/// The reflected form of the Jones polynomial 0xad93d23594c935a9.
const POLY: u64 = 0x95ac_9329_ac4b_c9b5;

/// Slicing tables: `TABLES[0]` is the byte-at-a-time table; `TABLES[k][b]`
/// is the CRC of byte `b` followed by `k` zero bytes, so eight bytes are
/// folded in with eight independent lookups (as Redis's crcspeed does).
const fn tables() -> [[u64; 256]; 8] {
    let mut t = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u64;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 == 1 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = t[0][(prev & 0xff) as usize] ^ (prev >> 8);
            i += 1;
        }
        k += 1;
    }
    t
}

static TABLES: [[u64; 256]; 8] = tables();

fn crc64_bytewise(mut crc: u64, data: &[u8]) -> u64 {
    for &b in data {
        crc = TABLES[0][((crc ^ b as u64) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

/// Redis's CRC-64 of `data` (initial value 0).
pub fn crc64(data: &[u8]) -> u64 {
    let mut crc = 0u64;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let v = crc ^ u64::from_le_bytes(w);
        crc = TABLES[7][(v & 0xff) as usize]
            ^ TABLES[6][((v >> 8) & 0xff) as usize]
            ^ TABLES[5][((v >> 16) & 0xff) as usize]
            ^ TABLES[4][((v >> 24) & 0xff) as usize]
            ^ TABLES[3][((v >> 32) & 0xff) as usize]
            ^ TABLES[2][((v >> 40) & 0xff) as usize]
            ^ TABLES[1][((v >> 48) & 0xff) as usize]
            ^ TABLES[0][(v >> 56) as usize];
    }
    crc64_bytewise(crc, chunks.remainder())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_check_value() {
        assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    proptest::proptest! {
        /// Eight bytes at a time gives the byte-at-a-time CRC, at every
        /// length and alignment.
        #[test]
        fn sliced_crc64_is_the_bytewise_one(
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            skip in 0usize..8,
        ) {
            let d = &data[skip.min(data.len())..];
            proptest::prop_assert_eq!(crc64(d), crc64_bytewise(0, d));
        }
    }

    #[test]
    fn literal_runs_and_back_references() {
        // "abcabcabca": 3 literals, then 7 bytes copied from 3 back.
        let data = [2, b'a', b'b', b'c', (5 << 5) as u8, 2];
        assert_eq!(decompress(&data, 10).unwrap(), b"abcabcabca");
        assert!(decompress(&data, 9).is_err());
        assert!(decompress(&data, 11).is_err());
        assert!(decompress(&data[..5], 10).is_err());
        // A reference before the start.
        assert!(decompress(&[0, b'a', (1 << 5) as u8, 5], 4).is_err());
    }
}
