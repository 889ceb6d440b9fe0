//! SORT and SORT_RO: sort the elements of a list, set or sorted set,
//! numerically or (ALPHA) as byte strings, optionally by weights or hash
//! fields looked up through a pattern (BY), fetching other keys (GET),
//! with LIMIT, and (SORT only) storing the result as a list (STORE).
//!
//! Differences from Redis 7.0 worth knowing:
//! - ALPHA compares bytes (what Redis does with STORE, and what its
//!   `strcoll` does in the C locale);
//! - elements that compare equal keep their collection order (Redis's
//!   qsort leaves their order unspecified);
//! - a set sorted `BY` a constant pattern is sorted ALPHA when the result
//!   is stored (as Redis does), but ebb cannot tell a script from a client,
//!   so unstored results keep the set's iteration order even in scripts.

use bytes::Bytes;
use std::cmp::Ordering;

use crate::args::{c_str, parse_i64};
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::{ListValue, Value};

/// SORT and SORT_RO.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core(
        "sort",
        -2,
        "write denyoom movablekeys",
        (1, 1, 1),
        "generic",
        "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.",
        sort,
    )
    .with_keys(sort_keys),
    CommandSpec::core(
        "sort_ro",
        -2,
        "readonly movablekeys",
        (1, 1, 1),
        "generic",
        "Returns the sorted elements of a list, a set, or a sorted set.",
        sort_ro,
    ),
];

/// Key positions of SORT: the sorted key and the last STORE destination
/// (LIMIT skips two arguments, GET and BY one each, as Redis parses it).
fn sort_keys(argv: &[&[u8]]) -> Vec<usize> {
    let mut keys = vec![1];
    let mut store = None;
    let mut i = 2;
    while i < argv.len() {
        let a = &argv[i];
        if a.eq_ignore_ascii_case(b"limit") {
            i += 2;
        } else if a.eq_ignore_ascii_case(b"get") || a.eq_ignore_ascii_case(b"by") {
            i += 1;
        } else if a.eq_ignore_ascii_case(b"store") && i + 1 < argv.len() {
            store = Some(i + 1);
        }
        i += 1;
    }
    keys.extend(store);
    keys
}

/// A parsed SORT command.
struct SortCommand {
    desc: bool,
    alpha: bool,
    limit: Option<(i64, i64)>,
    by: Option<Bytes>,
    /// BY pattern without `*`: keep the collection's order.
    dont_sort: bool,
    get: Vec<Bytes>,
    store: Option<Bytes>,
}

fn parse(argv: &[&[u8]], readonly: bool, reads_every_key: bool) -> CmdResult<SortCommand> {
    let mut c = SortCommand {
        desc: false,
        alpha: false,
        limit: None,
        by: None,
        dont_sort: false,
        get: Vec::new(),
        store: None,
    };
    let mut j = 2;
    while j < argv.len() {
        let a = &argv[j];
        let left = argv.len() - j - 1;
        if a.eq_ignore_ascii_case(b"asc") {
            c.desc = false;
        } else if a.eq_ignore_ascii_case(b"desc") {
            c.desc = true;
        } else if a.eq_ignore_ascii_case(b"alpha") {
            c.alpha = true;
        } else if a.eq_ignore_ascii_case(b"limit") && left >= 2 {
            let start = parse_i64(argv[j + 1]).ok_or(Error::NotInteger)?;
            let count = parse_i64(argv[j + 2]).ok_or(Error::NotInteger)?;
            c.limit = Some((start, count));
            j += 2;
        } else if !readonly && a.eq_ignore_ascii_case(b"store") && left >= 1 {
            c.store = Some(Bytes::copy_from_slice(argv[j + 1]));
            j += 1;
        } else if a.eq_ignore_ascii_case(b"by") && left >= 1 {
            let p = &argv[j + 1];
            // A pattern without `*` turns sorting off for good, even if
            // another BY follows (Redis never turns it back on).
            let real = c_str(p).contains(&b'*');
            if real && !reads_every_key {
                return Err(Error::msg(
                    "ERR BY option of SORT denied due to insufficient ACL permissions.",
                ));
            }
            c.dont_sort |= !real;
            c.by = Some(Bytes::copy_from_slice(p));
            j += 1;
        } else if a.eq_ignore_ascii_case(b"get") && left >= 1 {
            if !reads_every_key {
                return Err(Error::msg(
                    "ERR GET option of SORT denied due to insufficient ACL permissions.",
                ));
            }
            c.get.push(Bytes::copy_from_slice(argv[j + 1]));
            j += 1;
        } else {
            return Err(Error::Syntax);
        }
        j += 1;
    }
    Ok(c)
}

/// # Format
/// `SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]]
/// [ASC|DESC] [ALPHA] [STORE destination]` → the sorted elements (or, per
/// element, the value of each GET pattern, nil when missing); with STORE,
/// the number of elements stored as a list at `destination` (which is
/// deleted when the result is empty).
///
/// Patterns: the first `*` is replaced by the element; `key->field` reads a
/// hash field; `#` (GET only) is the element itself. A BY pattern without
/// `*` (conventionally `nosort`) skips sorting.
fn sort(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    sort_generic(ctx, argv, false)
}

/// # Format
/// `SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern ...]
/// [ASC|DESC] [ALPHA]` → as SORT without STORE.
fn sort_ro(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    sort_generic(ctx, argv, true)
}

/// One element being sorted, with its weight.
struct Item {
    elem: Bytes,
    score: f64,
    by: Option<Bytes>,
}

fn sort_generic(ctx: &mut Ctx, argv: &[&[u8]], readonly: bool) -> CmdResult<Reply> {
    let mut c = parse(argv, readonly, ctx.reads_every_key)?;
    let mut is_set = false;
    let mut unpack = false;
    let mut elems: Vec<Bytes> = match ctx.value(argv[1]) {
        None => Vec::new(),
        Some(Value::List(l)) => {
            let mut v: Vec<Bytes> = l.iter_bytes().collect();
            if c.dont_sort && c.desc {
                v.reverse();
            }
            v
        }
        Some(Value::Set(s)) => {
            is_set = true;
            s.iter().map(Bytes::copy_from_slice).collect()
        }
        Some(Value::ZSet(z)) => {
            unpack = z.is_packed();
            let mut v: Vec<Bytes> = z.iter().map(|(m, _)| Bytes::copy_from_slice(m)).collect();
            if c.dont_sort && c.desc {
                v.reverse();
            }
            v
        }
        Some(_) => return Err(Error::WrongType),
    };
    // Redis converts a packed sorted set to its skiplist form for any SORT
    // that gets this far, whatever then happens.
    if unpack {
        let db = ctx.db;
        if let Some(Value::ZSet(z)) = ctx.store.dbs[db].peek_mut(argv[1]).map(|e| &mut e.value) {
            z.unpack();
        }
    }
    // A set has no order of its own: a stored result, or a script's, must
    // not depend on it.
    if c.dont_sort && is_set && (c.store.is_some() || ctx.in_script) {
        c.dont_sort = false;
        c.alpha = true;
        c.by = None;
    }

    let (start, end) = limit_range(c.limit, elems.len());

    if !c.dont_sort {
        let mut items = Vec::with_capacity(elems.len());
        let mut bad_score = false;
        for elem in elems {
            let weight = match &c.by {
                Some(p) => lookup_by_pattern(ctx, p, &elem),
                None => Some(elem.clone()),
            };
            let mut item = Item {
                elem,
                score: 0.0,
                by: None,
            };
            if let Some(w) = weight {
                if c.alpha {
                    if c.by.is_some() {
                        item.by = Some(w);
                    }
                } else {
                    match parse_weight(&w) {
                        Some(s) => item.score = s,
                        None => bad_score = true,
                    }
                }
            }
            items.push(item);
        }
        if bad_score {
            return Err(Error::msg(
                "ERR One or more scores can't be converted into double",
            ));
        }
        let by_pattern = c.by.is_some();
        items.sort_by(|a, b| {
            let o = compare(a, b, c.alpha, by_pattern);
            if c.desc {
                o.reverse()
            } else {
                o
            }
        });
        elems = items.into_iter().map(|i| i.elem).collect();
    }

    let picked: &[Bytes] = match (start, end) {
        (Some(s), Some(e)) if s <= e => &elems[s..=e],
        _ => &[],
    };
    let picked = picked.to_vec();

    let Some(dst) = c.store.take() else {
        let mut out = Vec::with_capacity(picked.len() * c.get.len().max(1));
        for elem in &picked {
            if c.get.is_empty() {
                out.push(Reply::Bulk(elem.clone()));
            }
            for p in &c.get {
                out.push(match lookup_by_pattern(ctx, p, elem) {
                    Some(v) => Reply::Bulk(v),
                    None => Reply::Nil,
                });
            }
        }
        return Ok(Reply::Array(out));
    };

    let mut list = ListValue::new();
    for elem in &picked {
        if c.get.is_empty() {
            list.push_back(elem.clone());
        }
        for p in &c.get {
            list.push_back(lookup_by_pattern(ctx, p, elem).unwrap_or_default());
        }
    }
    let n = list.len();
    if n > 0 {
        ctx.set_value(&dst, Value::from(list));
        ctx.modified(&dst);
        ctx.fx.dirty += n as u64 - 1;
        ctx.notify(b'l', "sortstore", &dst);
        ctx.ready(&dst);
    } else if ctx.delete_stored(&dst) {
        ctx.modified(&dst);
        ctx.notify(b'g', "del", &dst);
    }
    Ok(Reply::Int(n as i64))
}

/// The inclusive index range LIMIT selects from `len` elements, following
/// Redis's clamping (None when nothing is selected).
fn limit_range(limit: Option<(i64, i64)>, len: usize) -> (Option<usize>, Option<usize>) {
    let len = len as i128;
    let (start, count) = limit
        .map(|(s, c)| (s as i128, c as i128))
        .unwrap_or((0, -1));
    let mut start = start.clamp(0, len);
    let count = count.clamp(-1, len);
    let mut end = if count < 0 {
        len - 1
    } else {
        start + count - 1
    };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    if end >= len {
        end = len - 1;
    }
    if start < 0 || end < start {
        return (None, None);
    }
    (Some(start as usize), Some(end as usize))
}

fn compare(a: &Item, b: &Item, alpha: bool, by_pattern: bool) -> Ordering {
    if !alpha {
        return match a.score.partial_cmp(&b.score) {
            Some(Ordering::Equal) | None => a.elem.cmp(&b.elem),
            Some(o) => o,
        };
    }
    if by_pattern {
        // Elements without a weight sort first.
        return match (&a.by, &b.by) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => x.cmp(y),
        };
    }
    a.elem.cmp(&b.elem)
}

/// Resolves a GET/BY pattern for `elem`: `#` is the element; otherwise the
/// first `*` is replaced by the element and the result names a string key,
/// or with `->field` after the `*`, a field of a hash key. Patterns without
/// `*`, missing keys, missing fields and other types give None.
pub fn lookup_by_pattern(ctx: &mut Ctx, pattern: &[u8], elem: &[u8]) -> Option<Bytes> {
    if pattern == b"#" {
        return Some(Bytes::copy_from_slice(elem));
    }
    // Like Redis, the `*` and `->` are searched as in a C string.
    let cs = c_str(pattern);
    let star = cs.iter().position(|&c| c == b'*')?;
    let after = &cs[star + 1..];
    let arrow = after
        .windows(2)
        .position(|w| w == b"->")
        .map(|i| star + 1 + i)
        .filter(|&f| f + 2 < cs.len());
    let (postfix, field) = match arrow {
        Some(f) => (&pattern[star + 1..f], Some(&pattern[f + 2..])),
        None => (&pattern[star + 1..], None),
    };
    let mut key = Vec::with_capacity(star + elem.len() + postfix.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(elem);
    key.extend_from_slice(postfix);
    match (ctx.value(&key)?, field) {
        (Value::Hash(h), Some(f)) => h.get(f).map(Bytes::copy_from_slice),
        (Value::Str(s), None) => Some(s.to_bytes()),
        _ => None,
    }
}

/// Reads a weight as C's `strtod` would for SORT: leading white space,
/// decimal or hexadecimal notation, `inf`/`infinity`; the whole string must
/// be used; NaN, overflow and underflow (including subnormal results) are
/// rejected; the empty string reads as 0.
pub fn parse_weight(s: &[u8]) -> Option<f64> {
    // C reads the string up to its first NUL byte.
    let s = c_str(s);
    let (neg, i) = crate::args::c_sign(s);
    let rest = &s[i..];
    let starts = |w: &[u8]| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w);
    let (value, used) = if starts(b"infinity") {
        (f64::INFINITY, 8)
    } else if starts(b"inf") {
        (f64::INFINITY, 3)
    } else if starts(b"nan") {
        return None;
    } else if starts(b"0x") && hex_body_len(&rest[2..]) > 0 {
        let (v, n) = parse_hex(&rest[2..])?;
        (v, n + 2)
    } else {
        let n = decimal_len(rest);
        if n == 0 {
            // No conversion: strtod stops at the very first byte.
            return if s.is_empty() { Some(0.0) } else { None };
        }
        let text = std::str::from_utf8(&rest[..n]).ok()?;
        let v: f64 = text.parse().ok()?;
        if v.is_infinite() {
            return None;
        }
        let nonzero_digits = rest[..n]
            .iter()
            .take_while(|c| !matches!(c, b'e' | b'E'))
            .any(|c| (b'1'..=b'9').contains(c));
        if (v == 0.0 && nonzero_digits) || (v != 0.0 && v.abs() < f64::MIN_POSITIVE) {
            return None;
        }
        (v, n)
    };
    if i + used != s.len() {
        return None;
    }
    Some(if neg { -value } else { value })
}

/// Length of the longest decimal float prefix: digits, optional fraction,
/// optional exponent (only if it has digits); 0 if there is no digit.
fn decimal_len(s: &[u8]) -> usize {
    let digits = |s: &[u8], mut i: usize| {
        while i < s.len() && s[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let int_end = digits(s, 0);
    let mut any = int_end > 0;
    let mut i = int_end;
    if i < s.len() && s[i] == b'.' {
        let frac_end = digits(s, i + 1);
        any |= frac_end > i + 1;
        i = frac_end;
    }
    if !any {
        return 0;
    }
    if i < s.len() && matches!(s[i], b'e' | b'E') {
        let mut j = i + 1;
        if j < s.len() && matches!(s[j], b'+' | b'-') {
            j += 1;
        }
        let exp_end = digits(s, j);
        if exp_end > j {
            i = exp_end;
        }
    }
    i
}

/// Whether a hexadecimal mantissa starts here (digits, or `.` and a digit).
fn hex_body_len(s: &[u8]) -> usize {
    match s {
        [d, ..] if d.is_ascii_hexdigit() => 1,
        [b'.', d, ..] if d.is_ascii_hexdigit() => 2,
        _ => 0,
    }
}

/// Parses a hexadecimal float body (after `0x`): returns the value and the
/// bytes used, or None on overflow or underflow.
fn parse_hex(s: &[u8]) -> Option<(f64, usize)> {
    let mut mant: u64 = 0;
    let mut exp: i64 = 0;
    let mut nonzero = false;
    let mut i = 0;
    let mut seen_dot = false;
    while i < s.len() {
        let c = s[i];
        if c == b'.' && !seen_dot {
            seen_dot = true;
        } else if let Some(d) = (c as char).to_digit(16) {
            nonzero |= d != 0;
            if mant >> 60 == 0 {
                mant = mant * 16 + d as u64;
                if seen_dot {
                    exp -= 4;
                }
            } else if !seen_dot {
                // Too many digits to keep: they only scale the value.
                exp += 4;
            }
        } else {
            break;
        }
        i += 1;
    }
    if i < s.len() && matches!(s[i], b'p' | b'P') {
        let mut j = i + 1;
        let neg = match s.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        let ds = j;
        let mut e: i64 = 0;
        while j < s.len() && s[j].is_ascii_digit() {
            e = (e * 10 + (s[j] - b'0') as i64).min(100_000);
            j += 1;
        }
        if j > ds {
            exp += if neg { -e } else { e };
            i = j;
        }
    }
    let v = mant as f64 * 2f64.powi(exp.clamp(-5000, 5000) as i32);
    let v = if v == 0.0 && nonzero && exp > 0 {
        f64::INFINITY
    } else {
        v
    };
    if v.is_infinite() || (nonzero && v.abs() < f64::MIN_POSITIVE) {
        return None;
    }
    Some((v, i))
}

#[cfg(test)]
#[path = "sort_tests.rs"]
mod tests;
