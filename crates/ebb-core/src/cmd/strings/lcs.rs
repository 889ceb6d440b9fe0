//! LCS: the longest common subsequence of two strings, by the classic
//! dynamic-programming table, with Redis's way of reporting match ranges.

use bytes::Bytes;

use crate::args::parse_i64;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::value::Value;

/// Reads a string key for LCS: missing keys are empty strings.
fn read(ctx: &mut Ctx, key: &[u8]) -> Option<Bytes> {
    match ctx.value(key) {
        None => Some(Bytes::new()),
        Some(Value::Str(v)) => Some(v.to_bytes()),
        Some(_) => None,
    }
}

/// What LCS replies with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    String,
    Len,
    Idx,
}

/// # Format
/// `LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]` → the
/// longest common subsequence as a string; with `LEN` its length; with
/// `IDX` a map `{matches: [[[a-start, a-end], [b-start, b-end], (len)]…],
/// len: n}` listing matching ranges from the end of the strings.
pub(super) fn lcs(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let a = read(ctx, argv[1]);
    let b = read(ctx, argv[2]);
    let (Some(a), Some(b)) = (a, b) else {
        return Err(Error::msg(
            "ERR The specified keys must contain string values",
        ));
    };
    let (mut len, mut idx, mut with_len) = (false, false, false);
    let mut min_len: i64 = 0;
    let mut i = 3;
    while i < argv.len() {
        let opt = argv[i];
        if opt.eq_ignore_ascii_case(b"IDX") {
            idx = true;
        } else if opt.eq_ignore_ascii_case(b"LEN") {
            len = true;
        } else if opt.eq_ignore_ascii_case(b"WITHMATCHLEN") {
            with_len = true;
        } else if opt.eq_ignore_ascii_case(b"MINMATCHLEN") && i + 1 < argv.len() {
            min_len = parse_i64(argv[i + 1]).ok_or(Error::NotInteger)?.max(0);
            i += 1;
        } else {
            return Err(Error::Syntax);
        }
        i += 1;
    }
    if idx && len {
        return Err(Error::msg(
            "ERR If you want both the length and indexes, please just use IDX.",
        ));
    }
    let mode = if idx {
        Mode::Idx
    } else if len {
        Mode::Len
    } else {
        Mode::String
    };
    if a.len() as u64 >= u32::MAX as u64 - 1 || b.len() as u64 >= u32::MAX as u64 - 1 {
        return Err(Error::msg("ERR String too long for LCS"));
    }
    let cells = (a.len() + 1).checked_mul(b.len() + 1);
    let bytes = cells.and_then(|c| c.checked_mul(4));
    let (Some(cells), Some(bytes)) = (cells, bytes) else {
        return Err(alloc_failed());
    };
    if bytes as u64 > ctx.store.cfg.proto_max_bulk_len {
        return Err(Error::msg(
            "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len",
        ));
    }
    let mut table: Vec<u32> = Vec::new();
    table.try_reserve_exact(cells).map_err(|_| alloc_failed())?;
    table.resize(cells, 0);
    Ok(compute(&a, &b, &mut table, mode, min_len as u64, with_len))
}

fn alloc_failed() -> Error {
    Error::msg("ERR Insufficient memory, failed allocating transient memory for LCS")
}

/// One matching range: start and end in `a`, start and end in `b`.
type Range = (usize, usize, usize, usize);

fn compute(a: &[u8], b: &[u8], t: &mut [u32], mode: Mode, min_len: u64, with_len: bool) -> Reply {
    let w = b.len() + 1;
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            t[i * w + j] = if a[i - 1] == b[j - 1] {
                t[(i - 1) * w + j - 1] + 1
            } else {
                t[(i - 1) * w + j].max(t[i * w + j - 1])
            };
        }
    }
    let total = t[a.len() * w + b.len()] as usize;
    if mode == Mode::Len {
        return Reply::Int(total as i64);
    }
    // Walk back from the end, collecting the subsequence and the ranges
    // where it runs contiguously in both strings.
    let mut out = vec![0u8; total];
    let mut left = total;
    let mut ranges: Vec<Range> = Vec::new();
    let mut cur: Option<Range> = None;
    let (mut i, mut j) = (a.len(), b.len());
    while i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            out[left - 1] = a[i - 1];
            match cur.as_mut() {
                None => cur = Some((i - 1, i - 1, j - 1, j - 1)),
                Some(r) if r.0 == i && r.2 == j => {
                    r.0 -= 1;
                    r.2 -= 1;
                }
                Some(_) => emit = true,
            }
            if cur.is_some_and(|r| r.0 == 0 || r.2 == 0) {
                emit = true;
            }
            left -= 1;
            i -= 1;
            j -= 1;
        } else {
            if t[(i - 1) * w + j] > t[i * w + j - 1] {
                i -= 1;
            } else {
                j -= 1;
            }
            emit = cur.is_some();
        }
        if emit {
            if let Some(r) = cur.take() {
                if (r.1 - r.0 + 1) as u64 >= min_len {
                    ranges.push(r);
                }
            }
        }
    }
    if mode == Mode::String {
        return Reply::Bulk(Bytes::from(out));
    }
    let pair = |x: usize, y: usize| Reply::Array(vec![Reply::Int(x as i64), Reply::Int(y as i64)]);
    let matches = ranges
        .into_iter()
        .map(|(a0, a1, b0, b1)| {
            let mut m = vec![pair(a0, a1), pair(b0, b1)];
            if with_len {
                m.push(Reply::Int((a1 - a0 + 1) as i64));
            }
            Reply::Array(m)
        })
        .collect();
    Reply::Map(vec![
        (Reply::bulk(b"matches"), Reply::Array(matches)),
        (Reply::bulk(b"len"), Reply::Int(total as i64)),
    ])
}
