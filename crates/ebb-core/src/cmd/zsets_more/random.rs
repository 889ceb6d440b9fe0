//! ZRANDMEMBER and ZSCAN: commands that walk a sorted set by position
//! rather than by score.

use bytes::Bytes;
use rand::Rng;

use crate::args::parse_i64;
use crate::cmd::keys::parse_cursor;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::glob::glob_match;
use crate::reply::{format_double, Reply};
use crate::value::ZSetValue;

/// The most entries one ZRANDMEMBER reply may hold. Redis streams any
/// number; building a reply of billions of entries would only exhaust
/// memory, so larger requests are refused as out of range.
const MAX_RANDOM_REPLY: u64 = 1 << 24;

/// # Format
/// `ZRANDMEMBER key [count [WITHSCORES]]` → without count, one random
/// member or nil. With a positive count, up to count distinct members;
/// with a negative count, exactly -count members that may repeat; a
/// count of at least the size gives the whole set by descending score. With
/// WITHSCORES each comes with its score (flat in RESP2, `[member, score]`
/// pairs in RESP3).
pub(super) fn zrandmember(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let key = &argv[1];
    if argv.len() == 2 {
        let Some(z) = ctx.get::<ZSetValue>(key)? else {
            return Ok(Reply::Nil);
        };
        let i = rand::thread_rng().gen_range(0..z.len().max(1));
        return Ok(z
            .get_index(i)
            .map_or(Reply::Nil, |(m, _)| Reply::Bulk(Bytes::copy_from_slice(m))));
    }
    let l = match parse_i64(argv[2]) {
        None => return Err(Error::NotInteger),
        Some(i64::MIN) => {
            return Err(Error::msg(
                "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
            ))
        }
        Some(l) => l,
    };
    let withscores = match argv.get(3) {
        None => false,
        Some(w) if argv.len() == 4 && w.eq_ignore_ascii_case(b"WITHSCORES") => true,
        Some(_) => return Err(Error::Syntax),
    };
    if withscores && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&l) {
        return Err(Error::msg("ERR value is out of range"));
    }
    let resp3 = ctx.resp3;
    let Some(z) = ctx.get::<ZSetValue>(key)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    let size = z.len();
    let count = l.unsigned_abs();
    if count == 0 || size == 0 {
        return Ok(Reply::Array(Vec::new()));
    }
    let per = if withscores && !resp3 { 2 } else { 1 };
    let mut rng = rand::thread_rng();
    let picks: Vec<usize> = if l < 0 || count == 1 {
        if count > MAX_RANDOM_REPLY {
            return Err(Error::msg("ERR value is out of range"));
        }
        (0..count).map(|_| rng.gen_range(0..size)).collect()
    } else if count >= size as u64 {
        // The whole set, highest score first: Redis walks it from the tail.
        let mut v = Vec::with_capacity(size * per);
        for (m, s) in z.iter().rev() {
            push_entry(&mut v, m, s, withscores, resp3);
        }
        return Ok(Reply::Array(v));
    } else if count * 3 > size as u64 {
        // Many of the members: a partial shuffle of all positions.
        let count = count as usize;
        let mut all: Vec<usize> = (0..size).collect();
        for i in 0..count {
            let j = rng.gen_range(i..size);
            all.swap(i, j);
        }
        all.truncate(count);
        all
    } else {
        // Few of them: random picks until enough are distinct.
        let count = count as usize;
        let mut seen = std::collections::HashSet::with_capacity(count);
        let mut picks = Vec::with_capacity(count);
        while picks.len() < count {
            let i = rng.gen_range(0..size);
            if seen.insert(i) {
                picks.push(i);
            }
        }
        picks
    };
    let mut v = Vec::with_capacity(picks.len() * per);
    // A packed set finds a position by walking: walk it once.
    let packed: Option<Vec<(&[u8], f64)>> = z.is_packed().then(|| z.iter().collect());
    let at = |i: usize| match &packed {
        Some(all) => all.get(i).copied(),
        None => z.get_index(i),
    };
    for i in picks {
        if let Some((m, s)) = at(i) {
            push_entry(&mut v, m, s, withscores, resp3);
        }
    }
    Ok(Reply::Array(v))
}

fn push_entry(v: &mut Vec<Reply>, m: &[u8], s: f64, withscores: bool, resp3: bool) {
    match (withscores, resp3) {
        (false, _) => v.push(Reply::bulk(m)),
        (true, false) => {
            v.push(Reply::bulk(m));
            v.push(Reply::Double(s));
        }
        (true, true) => v.push(Reply::Array(vec![Reply::bulk(m), Reply::Double(s)])),
    }
}

/// # Format
/// `ZSCAN key cursor [MATCH pattern] [COUNT count]` → `[next-cursor,
/// [member, score, …]]`, scores as bulk strings in both protocols. A small
/// sorted set (within `zset-max-listpack-entries`/`-value`, or held packed
/// whatever those say) comes back whole, in score order, with cursor 0; a
/// larger one is walked `count` members (default 10) per call until the
/// cursor is 0.
///
/// Every member present for the whole walk is returned at least once: the
/// walk goes from the highest dictionary position down, and the
/// dictionary only ever moves its last member into a freed slot (or shifts
/// later members down), never a not-yet-visited member upward.
pub(super) fn zscan(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let key = &argv[1];
    let cursor = parse_cursor(argv[2])?;
    let cfg = ctx.store.cfg.clone();
    let Some(z) = ctx.get::<ZSetValue>(key)? else {
        return Ok(scan_reply(0, Vec::new()));
    };
    let mut pattern: Option<&[u8]> = None;
    let mut count: i64 = 10;
    let mut j = 3;
    while j < argv.len() {
        let has_value = j + 1 < argv.len();
        if has_value && argv[j].eq_ignore_ascii_case(b"COUNT") {
            count = parse_i64(argv[j + 1]).ok_or(Error::NotInteger)?;
            if count < 1 {
                return Err(Error::Syntax);
            }
        } else if has_value && argv[j].eq_ignore_ascii_case(b"MATCH") {
            let p = argv[j + 1];
            // "*" matches everything, the empty member included.
            pattern = if p == b"*" { None } else { Some(p) };
        } else {
            return Err(Error::Syntax);
        }
        j += 2;
    }
    let mut items = Vec::new();
    let mut emit = |m: &[u8], s: Bytes| {
        if pattern.is_none_or(|p| glob_match(p, m, false)) {
            items.push(Reply::bulk(m));
            items.push(Reply::Bulk(s));
        }
    };
    let n = z.len();
    // A packed set has no stable positions (an insertion shifts the ranks
    // above it), so it cannot be walked by position. Its scores come back
    // as Redis's listpack holds them.
    if z.is_packed() || super::fits_listpack(z, &cfg) {
        for (m, s) in z.iter() {
            emit(m, Bytes::from(listpack_score_text(s)));
        }
        return Ok(scan_reply(0, items));
    }
    let start = match cursor {
        0 => n - 1,
        c => usize::try_from(c - 1).map_or(n - 1, |c| c.min(n - 1)),
    };
    let steps = usize::try_from(count).unwrap_or(usize::MAX).min(start + 1);
    let lowest = start + 1 - steps;
    for i in (lowest..=start).rev() {
        if let Some((m, s)) = z.get_index(i) {
            emit(m, Bytes::from(format_double(s)));
        }
    }
    Ok(scan_reply(lowest as u64, items))
}

/// A score as Redis's listpack holds it: a whole number within half the
/// 64-bit range as its integer digits (-0 as `0`), anything else as a
/// reply formats it.
fn listpack_score_text(s: f64) -> String {
    const HALF: f64 = (i64::MAX / 2) as f64;
    if s.fract() == 0.0 && (-HALF..=HALF).contains(&s) {
        (s as i64).to_string()
    } else {
        format_double(s)
    }
}

fn scan_reply(cursor: u64, items: Vec<Reply>) -> Reply {
    Reply::Array(vec![
        Reply::Bulk(Bytes::from(cursor.to_string())),
        Reply::Array(items),
    ])
}
