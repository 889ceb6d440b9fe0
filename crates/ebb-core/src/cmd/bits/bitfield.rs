//! BITFIELD and BITFIELD_RO: reading, writing and incrementing integers of
//! 1 to 64 bits (unsigned: 1 to 63) at arbitrary bit offsets, with the
//! WRAP, SAT and FAIL overflow policies.

use super::{bit_at, bit_offset, grow_for_bit};
use crate::args::parse_i64;
use crate::cmd::strings::edit_bytes;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::value::StrValue;

/// What to do when SET or INCRBY leaves the type's range.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

/// One sub-command.
#[derive(Clone, Copy)]
enum OpKind {
    Get,
    Set(i64),
    IncrBy(i64),
}

#[derive(Clone, Copy)]
struct Op {
    kind: OpKind,
    signed: bool,
    bits: u32,
    offset: u64,
    overflow: Overflow,
}

/// Parses `i<bits>` (1..=64) or `u<bits>` (1..=63); lower case only.
fn parse_type(raw: &[u8]) -> CmdResult<(bool, u32)> {
    let err = || {
        Error::msg(
            "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.",
        )
    };
    let signed = match raw.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(err()),
    };
    let bits = parse_i64(&raw[1..]).ok_or_else(err)?;
    let max = if signed { 64 } else { 63 };
    if !(1..=max).contains(&bits) {
        return Err(err());
    }
    Ok((signed, bits as u32))
}

fn parse_ops(ctx: &Ctx, argv: &[&[u8]]) -> CmdResult<Vec<Op>> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < argv.len() {
        let left = argv.len() - j - 1;
        let sub = argv[j];
        let is = |kw: &[u8]| sub.eq_ignore_ascii_case(kw);
        let kind = if is(b"GET") && left >= 2 {
            OpKind::Get
        } else if is(b"SET") && left >= 3 {
            OpKind::Set(0)
        } else if is(b"INCRBY") && left >= 3 {
            OpKind::IncrBy(0)
        } else if is(b"OVERFLOW") && left >= 1 {
            let name = argv[j + 1];
            overflow = if name.eq_ignore_ascii_case(b"WRAP") {
                Overflow::Wrap
            } else if name.eq_ignore_ascii_case(b"SAT") {
                Overflow::Sat
            } else if name.eq_ignore_ascii_case(b"FAIL") {
                Overflow::Fail
            } else {
                return Err(Error::msg("ERR Invalid OVERFLOW type specified"));
            };
            j += 2;
            continue;
        } else {
            return Err(Error::Syntax);
        };
        let (signed, bits) = parse_type(argv[j + 1])?;
        let offset = bit_offset(ctx, argv[j + 2], true, bits)?;
        let kind = match kind {
            OpKind::Get => kind,
            OpKind::Set(_) => OpKind::Set(parse_i64(argv[j + 3]).ok_or(Error::NotInteger)?),
            OpKind::IncrBy(_) => OpKind::IncrBy(parse_i64(argv[j + 3]).ok_or(Error::NotInteger)?),
        };
        ops.push(Op {
            kind,
            signed,
            bits,
            offset,
            overflow,
        });
        j += if matches!(kind, OpKind::Get) { 3 } else { 4 };
    }
    Ok(ops)
}

/// Reads `bits` bits at `offset` as an unsigned number (zeros past the end).
fn read_bits(buf: &[u8], offset: u64, bits: u32) -> u64 {
    (0..bits as u64).fold(0u64, |v, i| (v << 1) | bit_at(buf, offset + i) as u64)
}

fn write_bits(buf: &mut [u8], offset: u64, bits: u32, value: u64) {
    for i in 0..bits as u64 {
        let pos = offset + i;
        let mask = 0x80u8 >> (pos & 7);
        let byte = &mut buf[(pos >> 3) as usize];
        if (value >> (bits as u64 - 1 - i)) & 1 == 1 {
            *byte |= mask;
        } else {
            *byte &= !mask;
        }
    }
}

/// Reads the field as a number of its type.
fn read_field(buf: &[u8], op: &Op) -> i128 {
    let raw = read_bits(buf, op.offset, op.bits);
    if op.signed && op.bits < 64 && raw >> (op.bits - 1) == 1 {
        raw as i128 - (1i128 << op.bits)
    } else if op.signed {
        raw as i64 as i128
    } else {
        raw as i128
    }
}

/// Applies the overflow policy to the exact result `n`: the value to
/// store, or `None` when FAIL refuses it.
fn fit(op: &Op, n: i128) -> Option<i128> {
    let (min, max) = if op.signed {
        (-(1i128 << (op.bits - 1)), (1i128 << (op.bits - 1)) - 1)
    } else {
        (0, (1i128 << op.bits) - 1)
    };
    if (min..=max).contains(&n) {
        return Some(n);
    }
    match op.overflow {
        Overflow::Fail => None,
        Overflow::Sat => Some(if n > max { max } else { min }),
        Overflow::Wrap => Some((n - min).rem_euclid(1i128 << op.bits) + min),
    }
}

/// Runs one SET or INCRBY on `buf`: the reply, whether it wrote, and
/// whether the field's value actually changed.
fn write_op(buf: &mut [u8], op: &Op) -> (Reply, bool, bool) {
    let old = read_field(buf, op);
    let (target, reply_new) = match op.kind {
        OpKind::IncrBy(by) => (old + by as i128, true),
        // Unsigned fields take the argument's 64-bit pattern, as Redis does.
        OpKind::Set(v) if !op.signed => (v as u64 as i128, false),
        // Redis 7.0 checks a signed SET's range by subtracting the value
        // from the field's maximum in 64 bits: for a value that far below
        // the minimum the difference wraps, and SAT stores the maximum.
        OpKind::Set(v)
            if op.bits < 64
                && matches!(op.overflow, Overflow::Sat)
                && (v as i128) < (1i128 << (op.bits - 1)) - 1 - i64::MAX as i128 =>
        {
            (i64::MAX as i128, false)
        }
        OpKind::Set(v) => (v as i128, false),
        OpKind::Get => return (Reply::Int(old as i64), false, false),
    };
    match fit(op, target) {
        None => (Reply::Nil, false, false),
        Some(new) => {
            write_bits(buf, op.offset, op.bits, new as u64);
            let reply = Reply::Int(if reply_new { new } else { old } as i64);
            (reply, true, new != old)
        }
    }
}

fn bitfield_generic(ctx: &mut Ctx, argv: &[&[u8]], read_only_cmd: bool) -> CmdResult<Reply> {
    let key = &argv[1];
    let ops = parse_ops(ctx, argv)?;
    let highest = ops
        .iter()
        .filter(|op| !matches!(op.kind, OpKind::Get))
        .map(|op| op.offset + op.bits as u64 - 1)
        .max();
    let Some(highest) = highest else {
        let v = ctx
            .get::<StrValue>(key)?
            .map(StrValue::to_bytes)
            .unwrap_or_default();
        return Ok(Reply::Array(
            ops.iter()
                .map(|op| Reply::Int(read_field(&v, op) as i64))
                .collect(),
        ));
    };
    if read_only_cmd {
        return Err(Error::msg(
            "ERR BITFIELD_RO only supports the GET subcommand",
        ));
    }
    let grown = grow_for_bit(ctx, key, highest)?;
    let b = ctx.get_mut::<StrValue>(key)?.ok_or(Error::NoSuchKey)?;
    let (replies, changes, changed) = edit_bytes(b, |m| {
        let mut changes = 0u64;
        let mut changed = false;
        let replies: Vec<Reply> = ops
            .iter()
            .map(|op| {
                let (r, wrote, differs) = write_op(m, op);
                changes += wrote as u64;
                changed |= differs;
                r
            })
            .collect();
        (replies, changes, changed)
    });
    // As in Redis 7.0: nothing is reported unless the key was created or
    // grown or some field really changed; then every write counts.
    if changes > 0 && (grown || changed) {
        ctx.modified(key);
        ctx.fx.dirty += changes - 1;
        ctx.notify(b'$', "setbit", key);
    }
    Ok(Reply::Array(replies))
}

/// # Format
/// `BITFIELD key [GET type offset] [SET type offset value] [INCRBY type
/// offset increment] [OVERFLOW WRAP|SAT|FAIL] ...` → an array with one
/// entry per GET/SET/INCRBY: the value read, the previous value (SET), the
/// new value (INCRBY), or nil when OVERFLOW FAIL refused the write. `type`
/// is `i1`..`i64` or `u1`..`u63`; `#n` offsets are multiplied by the width.
pub(super) fn bitfield(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    bitfield_generic(ctx, argv, false)
}

/// # Format
/// `BITFIELD_RO key [GET type offset ...]` → the values read, as BITFIELD.
pub(super) fn bitfield_ro(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    bitfield_generic(ctx, argv, true)
}
