//! HRANDFIELD and HSCAN.

use bytes::Bytes;
use rand::Rng;

use crate::args::parse_i64;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::glob::glob_match;
use crate::reply::Reply;
use crate::value::HashValue;

/// Largest number of picks a negative HRANDFIELD count may ask for. Redis
/// has no bound and builds the reply until memory runs out; ebb refuses
/// counts whose reply could not reasonably be built.
const MAX_RANDOM_PICKS: u64 = 1 << 24;

/// # Format
/// `HRANDFIELD key [count [WITHVALUES]]` → without count, one random field
/// (nil for a missing key); with a positive count, up to that many distinct
/// fields; with a negative count, exactly that many fields, possibly
/// repeated. WITHVALUES adds the values: a flat array in RESP2, an array of
/// `[field, value]` pairs in RESP3.
pub(super) fn hrandfield(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    if argv.len() < 3 {
        let Some(h) = ctx.get::<HashValue>(argv[1])? else {
            return Ok(Reply::Nil);
        };
        let i = rand::thread_rng().gen_range(0..h.len());
        return Ok(h
            .get_index(i)
            .map_or(Reply::Nil, |(f, _)| Reply::Bulk(Bytes::copy_from_slice(f))));
    }
    let l = parse_i64(argv[2]).ok_or(Error::NotInteger)?;
    if l == i64::MIN {
        return Err(Error::msg(
            "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
        ));
    }
    let with_values = match argv.len() {
        3 => false,
        4 if argv[3].eq_ignore_ascii_case(b"withvalues") => true,
        _ => return Err(Error::Syntax),
    };
    if with_values && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&l) {
        return Err(Error::msg("ERR value is out of range"));
    }
    let resp3 = ctx.resp3;
    let Some(h) = ctx.get::<HashValue>(argv[1])? else {
        return Ok(Reply::Array(Vec::new()));
    };
    let count = l.unsigned_abs();
    let mut out = Vec::new();
    let mut push = |f: &[u8], v: &[u8]| {
        if !with_values {
            out.push(Reply::bulk(f));
        } else if resp3 {
            out.push(Reply::Array(vec![Reply::bulk(f), Reply::bulk(v)]));
        } else {
            out.push(Reply::bulk(f));
            out.push(Reply::bulk(v));
        }
    };
    let size = h.len();
    let mut rng = rand::thread_rng();
    if l < 0 {
        if count > MAX_RANDOM_PICKS {
            return Err(Error::msg("ERR value is out of range"));
        }
        if h.is_packed() {
            // One walk of the buffer, not one per pick.
            let pairs: Vec<_> = h.iter().collect();
            for _ in 0..count {
                let (f, v) = pairs[rng.gen_range(0..size)];
                push(f, v);
            }
        } else {
            for _ in 0..count {
                if let Some((f, v)) = h.get_index(rng.gen_range(0..size)) {
                    push(f, v);
                }
            }
        }
    } else if count as usize >= size {
        for (f, v) in h.iter() {
            push(f, v);
        }
    } else {
        for i in rand::seq::index::sample(&mut rng, size, count as usize) {
            if let Some((f, v)) = h.get_index(i) {
                push(f, v);
            }
        }
    }
    Ok(Reply::Array(out))
}

/// Parses a SCAN cursor as Redis does with `strtoul`: decimal, an optional
/// sign (a negative value wraps around), no leading space, nothing left
/// over; the empty string is cursor 0.
fn parse_cursor(s: &[u8]) -> Option<u64> {
    if s.first()
        .is_some_and(|&c| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
    {
        return None;
    }
    let s = match s.iter().position(|&c| c == 0) {
        Some(i) => &s[..i],
        None => s,
    };
    if s.is_empty() {
        return Some(0);
    }
    let (neg, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(if neg { v.wrapping_neg() } else { v })
}

/// # Format
/// `HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]` →
/// `[next-cursor, [field, value, ...]]`. A hash small enough for Redis's
/// listpack encoding is returned whole with cursor 0. MATCH filters fields.
pub(super) fn hscan(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let cursor = parse_cursor(argv[2]).ok_or_else(|| Error::msg("ERR invalid cursor"))?;
    let (max_entries, max_value) = (
        ctx.store.cfg.hash_max_listpack_entries,
        ctx.store.cfg.hash_max_listpack_value,
    );
    let Some(h) = ctx.get::<HashValue>(argv[1])? else {
        return Ok(Reply::Array(vec![
            Reply::bulk(b"0"),
            Reply::Array(Vec::new()),
        ]));
    };
    let mut count: usize = 10;
    let mut pattern: Option<&[u8]> = None;
    let mut no_values = false;
    let mut i = 3;
    while i < argv.len() {
        let left = argv.len() - i;
        let opt = &argv[i];
        if opt.eq_ignore_ascii_case(b"count") && left >= 2 {
            let n = parse_i64(argv[i + 1]).ok_or(Error::NotInteger)?;
            if n < 1 {
                return Err(Error::Syntax);
            }
            count = usize::try_from(n).unwrap_or(usize::MAX);
            i += 2;
        } else if opt.eq_ignore_ascii_case(b"match") && left >= 2 {
            let p = argv[i + 1];
            pattern = if p == b"*" { None } else { Some(p) };
            i += 2;
        } else if opt.eq_ignore_ascii_case(b"novalues") {
            no_values = true;
            i += 1;
        } else {
            return Err(Error::Syntax);
        }
    }
    let (next, items) = if h.is_compact(max_entries, max_value) {
        (0, h.iter().collect())
    } else {
        h.scan(cursor, count)
    };
    let mut out = Vec::new();
    for (f, v) in items {
        if pattern.is_some_and(|p| !glob_match(p, f, false)) {
            continue;
        }
        out.push(Reply::Bulk(Bytes::copy_from_slice(f)));
        if !no_values {
            out.push(Reply::Bulk(Bytes::copy_from_slice(v)));
        }
    }
    Ok(Reply::Array(vec![
        Reply::text(next.to_string()),
        Reply::Array(out),
    ]))
}

#[cfg(test)]
mod tests {
    use super::parse_cursor;

    #[test]
    fn cursors_follow_strtoul() {
        assert_eq!(parse_cursor(b"0"), Some(0));
        assert_eq!(parse_cursor(b""), Some(0));
        assert_eq!(parse_cursor(b"007"), Some(7));
        assert_eq!(parse_cursor(b"+3"), Some(3));
        assert_eq!(parse_cursor(b"-1"), Some(u64::MAX));
        assert_eq!(parse_cursor(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_cursor(b"18446744073709551616"), None);
        assert_eq!(parse_cursor(b" 1"), None);
        assert_eq!(parse_cursor(b"1 "), None);
        assert_eq!(parse_cursor(b"abc"), None);
        assert_eq!(parse_cursor(b"+"), None);
        assert_eq!(parse_cursor(b"5\0x"), Some(5));
    }
}
