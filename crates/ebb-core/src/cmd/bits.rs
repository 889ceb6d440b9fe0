//! Bitmaps: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, and BITFIELD /
//! BITFIELD_RO (`bits/bitfield.rs`). Bits are numbered from the most
//! significant bit of the first byte, as in Redis.

mod bitfield;
#[cfg(test)]
mod tests;

use super::strings::edit_bytes;
use crate::args::{parse_i64, Args};
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::strval::Written;
use crate::value::{StrValue, Value};

/// The bitmap family's commands.
#[rustfmt::skip]
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core("setbit", 4, "write denyoom", (1, 1, 1), "bitmap", "Sets or clears the bit at offset in the string value stored at key", setbit),
    CommandSpec::core("getbit", 3, "readonly fast", (1, 1, 1), "bitmap", "Returns the bit value at offset in the string value stored at key", getbit),
    CommandSpec::core("bitcount", -2, "readonly", (1, 1, 1), "bitmap", "Count set bits in a string", bitcount),
    CommandSpec::core("bitpos", -3, "readonly", (1, 1, 1), "bitmap", "Find first bit set or clear in a string", bitpos),
    CommandSpec::core("bitop", -4, "write denyoom", (2, -1, 1), "bitmap", "Perform bitwise operations between strings", bitop),
    CommandSpec::core("bitfield", -2, "write denyoom", (1, 1, 1), "bitmap", "Perform arbitrary bitfield integer operations on strings", bitfield::bitfield),
    CommandSpec::core("bitfield_ro", -2, "readonly fast", (1, 1, 1), "bitmap", "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", bitfield::bitfield_ro),
];

/// Parses a bit offset; with `hash`, `#n` means `n * bits` (BITFIELD).
/// Offsets must address a byte below `proto-max-bulk-len`.
fn bit_offset(ctx: &Ctx, raw: &[u8], hash: bool, bits: u32) -> CmdResult<u64> {
    let err = || Error::msg("ERR bit offset is not an integer or out of range");
    let by_width = hash && raw.len() > 1 && raw[0] == b'#';
    let digits = if by_width { &raw[1..] } else { raw };
    let mut v = parse_i64(digits).ok_or_else(err)?;
    if by_width {
        v = v.wrapping_mul(bits as i64);
    }
    if v < 0 || (v as u64 >> 3) >= ctx.store.cfg.proto_max_bulk_len {
        return Err(err());
    }
    Ok(v as u64)
}

/// Makes `key` a string long enough to hold bit `max_bit`, creating it
/// zero-filled if missing. Returns whether it was created or grown.
fn grow_for_bit(ctx: &mut Ctx, key: &[u8], max_bit: u64) -> CmdResult<bool> {
    let need = (max_bit >> 3) as usize + 1;
    match ctx.get_mut::<StrValue>(key)? {
        None => {
            ctx.set_value(key, Value::Str(StrValue::from_vec(vec![0u8; need])));
            Ok(true)
        }
        Some(b) if b.len() < need => {
            edit_bytes(b, |m| m.resize(need, 0));
            Ok(true)
        }
        Some(_) => Ok(false),
    }
}

/// Bit `i` of `buf` (0 beyond its end).
fn bit_at(buf: &[u8], i: u64) -> u8 {
    match buf.get((i >> 3) as usize) {
        Some(b) => (b >> (7 - (i & 7))) & 1,
        None => 0,
    }
}

/// # Format
/// `SETBIT key offset 0|1` → the previous bit. Grows the string with zero
/// bytes as needed; keeps the TTL.
fn setbit(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let offset = bit_offset(ctx, a.bytes()?, false, 0)?;
    let on = match parse_i64(a.bytes()?) {
        Some(v @ (0 | 1)) => v as u8,
        _ => return Err(Error::msg("ERR bit is not an integer or out of range")),
    };
    let grown = grow_for_bit(ctx, key, offset)?;
    let b = ctx.get_mut::<StrValue>(key)?.ok_or(Error::NoSuchKey)?;
    let old = bit_at(b, offset);
    if old != on {
        let (byte, mask) = ((offset >> 3) as usize, 0x80u8 >> (offset & 7));
        edit_bytes(b, |m| m[byte] ^= mask);
    }
    // Redis makes the string its own raw copy even when the bit stays.
    b.set_written(Written::InPlace);
    if grown || old != on {
        ctx.modified(key);
        ctx.notify(b'$', "setbit", key);
    }
    Ok(Reply::Int(old as i64))
}

/// # Format
/// `GETBIT key offset` → the bit at `offset` (0 past the end or for a
/// missing key).
fn getbit(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let offset = bit_offset(ctx, a.bytes()?, false, 0)?;
    Ok(Reply::Int(
        ctx.get::<StrValue>(key)?.map_or(0, |v| bit_at(v, offset)) as i64,
    ))
}

/// Reads `BYTE|BIT` (case-insensitive).
fn parse_unit(raw: &[u8]) -> CmdResult<bool> {
    if raw.eq_ignore_ascii_case(b"BIT") {
        Ok(true)
    } else if raw.eq_ignore_ascii_case(b"BYTE") {
        Ok(false)
    } else {
        Err(Error::Syntax)
    }
}

/// Resolves a `start`/`end` range over `total` units (bytes or bits) as
/// Redis does: negatives count from the end, then clamped. `None` when
/// the range is empty.
fn clamp_range(mut start: i64, mut end: i64, total: i64) -> Option<(u64, u64)> {
    if start < 0 {
        start += total;
    }
    if end < 0 {
        end += total;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= total {
        end = total - 1;
    }
    (start <= end).then_some((start as u64, end as u64))
}

/// Mask of the bits of byte `byte` that fall within bits `[first, last]`.
fn range_mask(byte: u64, first: u64, last: u64) -> u8 {
    let lo = first.max(byte * 8) - byte * 8;
    let hi = last.min(byte * 8 + 7) - byte * 8;
    (0xffu8 >> lo) & (0xffu8 << (7 - hi))
}

fn popcount(bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    let mut n: u64 = 0;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        n += u64::from_ne_bytes(w).count_ones() as u64;
    }
    n + chunks
        .remainder()
        .iter()
        .map(|b| b.count_ones() as u64)
        .sum::<u64>()
}

/// # Format
/// `BITCOUNT key [start end [BYTE|BIT]]` → the number of set bits in the
/// range (whole string by default; 0 for a missing key).
fn bitcount(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let Some(v) = ctx.get::<StrValue>(argv[1])?.cloned() else {
        return Ok(Reply::Int(0));
    };
    let (first, last) = match argv.len() {
        2 => {
            if v.is_empty() {
                return Ok(Reply::Int(0));
            }
            (0, v.len() as u64 * 8 - 1)
        }
        4 | 5 => {
            let start = parse_i64(argv[2]).ok_or(Error::NotInteger)?;
            let end = parse_i64(argv[3]).ok_or(Error::NotInteger)?;
            if start < 0 && end < 0 && start > end {
                return Ok(Reply::Int(0));
            }
            let bit = argv.len() == 5 && parse_unit(argv[4])?;
            let total = v.len() as i64 * if bit { 8 } else { 1 };
            match (clamp_range(start, end, total), bit) {
                (None, _) => return Ok(Reply::Int(0)),
                (Some((s, e)), true) => (s, e),
                (Some((s, e)), false) => (s * 8, e * 8 + 7),
            }
        }
        _ => return Err(Error::Syntax),
    };
    let (fb, lb) = (first / 8, last / 8);
    let mut n = popcount(&v[fb as usize..=lb as usize]);
    n -= (v[fb as usize] & !range_mask(fb, first, last)).count_ones() as u64;
    if lb != fb {
        n -= (v[lb as usize] & !range_mask(lb, first, last)).count_ones() as u64;
    }
    Ok(Reply::Int(n as i64))
}

/// The first bit equal to `bit` within bits `[first, last]` of `v`.
fn find_bit(v: &[u8], bit: u8, first: u64, last: u64) -> Option<u64> {
    let (fb, lb) = (first / 8, last / 8);
    let probe = |i: u64| {
        let byte = if bit == 1 {
            v[i as usize]
        } else {
            !v[i as usize]
        };
        let hit = byte & range_mask(i, first, last);
        (hit != 0).then(|| i * 8 + hit.leading_zeros() as u64)
    };
    if let Some(p) = probe(fb) {
        return Some(p);
    }
    if lb > fb + 1 {
        let skip = if bit == 1 { 0x00 } else { 0xff };
        let middle = &v[(fb + 1) as usize..lb as usize];
        if let Some(i) = middle.iter().position(|&b| b != skip) {
            return probe(fb + 1 + i as u64);
        }
    }
    if lb > fb {
        return probe(lb);
    }
    None
}

/// # Format
/// `BITPOS key 0|1 [start [end [BYTE|BIT]]]` → the position of the first
/// bit equal to the given one, or -1. A missing key is all zeros (0 for a
/// clear bit, -1 for a set one); without `end`, looking for a clear bit
/// past a string of ones answers the first bit after the string.
fn bitpos(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let bit = match parse_i64(argv[2]) {
        None => return Err(Error::NotInteger),
        Some(b @ (0 | 1)) => b as u8,
        Some(_) => return Err(Error::msg("ERR The bit argument must be 1 or 0.")),
    };
    let Some(v) = ctx.get::<StrValue>(argv[1])?.cloned() else {
        return Ok(Reply::Int(if bit == 1 { -1 } else { 0 }));
    };
    let len = v.len() as i64;
    let (range, end_given) = match argv.len() {
        3 => (
            clamp_range(0, len - 1, len).map(|(s, e)| (s * 8, e * 8 + 7)),
            false,
        ),
        4..=6 => {
            let start = parse_i64(argv[3]).ok_or(Error::NotInteger)?;
            let in_bits = argv.len() == 6 && parse_unit(argv[5])?;
            let end = match argv.get(4) {
                Some(raw) if argv.len() >= 5 => parse_i64(raw).ok_or(Error::NotInteger)?,
                _ if in_bits => len * 8 + 7,
                _ => len - 1,
            };
            let total = if in_bits { len * 8 } else { len };
            let range = clamp_range(start, end, total);
            let range = if in_bits {
                range
            } else {
                range.map(|(s, e)| (s * 8, e * 8 + 7))
            };
            (range, argv.len() >= 5)
        }
        _ => return Err(Error::Syntax),
    };
    let Some((first, last)) = range else {
        return Ok(Reply::Int(-1));
    };
    Ok(Reply::Int(match find_bit(&v, bit, first, last) {
        Some(p) => p as i64,
        None if bit == 0 && !end_given => last as i64 + 1,
        None => -1,
    }))
}

/// The operation of a BITOP.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BitOp {
    And,
    Or,
    Xor,
    Not,
}

/// # Format
/// `BITOP AND|OR|XOR|NOT destkey key [key ...]` → the length of the result
/// stored at `destkey` (shorter inputs are zero-padded; NOT takes exactly
/// one key). An empty result deletes `destkey`.
fn bitop(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let name = argv[1];
    let op = if name.eq_ignore_ascii_case(b"AND") {
        BitOp::And
    } else if name.eq_ignore_ascii_case(b"OR") {
        BitOp::Or
    } else if name.eq_ignore_ascii_case(b"XOR") {
        BitOp::Xor
    } else if name.eq_ignore_ascii_case(b"NOT") {
        BitOp::Not
    } else {
        return Err(Error::Syntax);
    };
    if op == BitOp::Not && argv.len() != 4 {
        return Err(Error::msg(
            "ERR BITOP NOT must be called with a single source key.",
        ));
    }
    let dest = &argv[2];
    let mut srcs = Vec::with_capacity(argv.len() - 3);
    for key in &argv[3..] {
        srcs.push(ctx.get::<StrValue>(key)?.cloned().unwrap_or_default());
    }
    let max = srcs.iter().map(|s| s.len()).max().unwrap_or(0);
    if max == 0 {
        if ctx.delete_stored(dest) {
            ctx.modified(dest);
            ctx.notify(b'g', "del", dest);
        }
        return Ok(Reply::Int(0));
    }
    let mut res = vec![0u8; max];
    res[..srcs[0].len()].copy_from_slice(&srcs[0]);
    match op {
        BitOp::Not => res.iter_mut().for_each(|b| *b = !*b),
        BitOp::And => {
            for s in &srcs[1..] {
                res.iter_mut().zip(s.iter()).for_each(|(r, b)| *r &= b);
                res[s.len()..].fill(0);
            }
        }
        BitOp::Or => {
            for s in &srcs[1..] {
                res.iter_mut().zip(s.iter()).for_each(|(r, b)| *r |= b);
            }
        }
        BitOp::Xor => {
            for s in &srcs[1..] {
                res.iter_mut().zip(s.iter()).for_each(|(r, b)| *r ^= b);
            }
        }
    }
    // Redis builds the result as a plain buffer: `raw` whatever it holds.
    let mut out = StrValue::from_vec(res);
    out.set_written(crate::value::strval::Written::InPlace);
    ctx.set_value(dest, Value::Str(out));
    ctx.modified(dest);
    ctx.notify(b'$', "set", dest);
    Ok(Reply::Int(max as i64))
}
