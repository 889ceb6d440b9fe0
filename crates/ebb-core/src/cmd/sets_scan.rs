//! SSCAN, and the glob matcher its MATCH option uses.
//!
//! The cursor walks the set's member positions from the last one down. A
//! set only ever moves its *last* member (into the slot of a removed one)
//! and appends new members at the end, so a member present for the whole
//! iteration is always at a position the walk has yet to visit, or has
//! visited already: it is reported at least once, as SCAN promises.

use bytes::Bytes;

use crate::args::{parse_i64, Args};
use crate::cmd::sets::member_replies;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::SetValue;

/// SSCAN.
pub const COMMANDS: &[CommandSpec] = &[CommandSpec::core(
    "sscan",
    -3,
    "readonly",
    (1, 1, 1),
    "set",
    "Incrementally iterate Set elements",
    sscan,
)];

/// Sets up to this size are returned whole by one SSCAN call, with cursor 0.
const SMALL_SET: usize = 128;

/// Parses a SCAN cursor as Redis does (`strtoul` on the whole argument: an
/// optional sign, where `-n` wraps around, no leading space, no overflow;
/// an empty argument reads as 0).
fn parse_cursor(s: &[u8]) -> Option<u64> {
    let Some(&first) = s.first() else {
        return Some(0);
    };
    if matches!(first, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r') {
        return None;
    }
    let (neg, digits) = match first {
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

/// Whether Redis 7.0 would return this set in one call: it keeps small
/// all-integer sets in a compact encoding that SSCAN returns whole.
fn returned_whole(set: &SetValue, intset_max: usize) -> bool {
    set.len() <= SMALL_SET || (set.len() <= intset_max && set.all_integers())
}

/// # Format
/// `SSCAN key cursor [MATCH pattern] [COUNT count]` → a two-element array:
/// the next cursor (a bulk string, `0` when the iteration is complete) and
/// the members found in this step. Small sets are returned whole with
/// cursor 0; larger ones about `count` (default 10) positions per call.
fn sscan(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let cursor = parse_cursor(a.bytes()?).ok_or(Error::msg("ERR invalid cursor"))?;
    let intset_max = ctx.store.cfg.set_max_intset_entries;
    let Some(set) = ctx.get::<SetValue>(key)? else {
        return Ok(scan_reply(0, Vec::new()));
    };
    let mut count: u64 = 10;
    let mut pattern: Option<&[u8]> = None;
    while let Some(opt) = a.next() {
        let Some(val) = a.peek() else {
            return Err(Error::Syntax);
        };
        if opt.eq_ignore_ascii_case(b"COUNT") {
            count = match parse_i64(val) {
                Some(c) if c >= 1 => c as u64,
                Some(_) => return Err(Error::Syntax),
                None => return Err(Error::NotInteger),
            };
        } else if opt.eq_ignore_ascii_case(b"MATCH") {
            pattern = if &val[..] == b"*" { None } else { Some(val) };
        } else {
            return Err(Error::Syntax);
        }
        a.next();
    }
    let keep = |m: &&Bytes| pattern.is_none_or(|p| glob_match(p, m));
    if returned_whole(set, intset_max) {
        return Ok(scan_reply(0, member_replies(set.iter().filter(keep))));
    }
    let len = set.len() as u64;
    let top = if cursor == 0 || cursor > len {
        len
    } else {
        cursor
    };
    let bottom = top.saturating_sub(count);
    let found = (bottom..top)
        .rev()
        .filter_map(|i| set.get_index(i as usize))
        .filter(keep);
    let found = member_replies(found);
    Ok(scan_reply(bottom, found))
}

fn scan_reply(cursor: u64, members: Vec<Reply>) -> Reply {
    Reply::Array(vec![
        Reply::Bulk(Bytes::from(cursor.to_string())),
        Reply::Array(members),
    ])
}

/// One element of a compiled glob pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Glob {
    /// `*`: any run of bytes (consecutive stars are one).
    Star,
    /// `?`: any one byte.
    Any,
    /// A literal byte (after `\` escapes).
    Byte(u8),
    /// `[…]`: one byte in (or, negated, not in) the listed bytes and ranges.
    Class { negated: bool, items: Vec<(u8, u8)> },
}

impl Glob {
    fn matches(&self, c: u8) -> bool {
        match self {
            Glob::Star | Glob::Any => true,
            Glob::Byte(b) => *b == c,
            // Redis compares class ranges as C `char`s, which are signed.
            Glob::Class { negated, items } => {
                let c = c as i8;
                items
                    .iter()
                    .any(|&(lo, hi)| (lo as i8) <= c && c <= (hi as i8))
                    != *negated
            }
        }
    }
}

/// Compiles a pattern with the same reading Redis's `stringmatchlen` gives
/// it, quirks included: a `\` at the very end is literal, an unterminated
/// class runs to the end of the pattern, and `x-]` inside a class is a range
/// whose upper bound is `]`.
fn compile(p: &[u8]) -> Vec<Glob> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            b'*' => {
                if out.last() != Some(&Glob::Star) {
                    out.push(Glob::Star);
                }
            }
            b'?' => out.push(Glob::Any),
            b'[' => {
                i += 1;
                let negated = p.get(i) == Some(&b'^');
                if negated {
                    i += 1;
                }
                let mut items = Vec::new();
                loop {
                    let left = p.len() - i.min(p.len());
                    if left == 0 {
                        i -= 1;
                        break;
                    }
                    let c = p[i];
                    if c == b'\\' && left >= 2 {
                        i += 1;
                        items.push((p[i], p[i]));
                    } else if c == b']' {
                        break;
                    } else if left >= 3 && p[i + 1] == b'-' {
                        let (x, y) = (p[i], p[i + 2]);
                        let (lo, hi) = if (x as i8) > (y as i8) {
                            (y, x)
                        } else {
                            (x, y)
                        };
                        items.push((lo, hi));
                        i += 2;
                    } else {
                        items.push((c, c));
                    }
                    i += 1;
                }
                out.push(Glob::Class { negated, items });
            }
            b'\\' if i + 1 < p.len() => {
                i += 1;
                out.push(Glob::Byte(p[i]));
            }
            c => out.push(Glob::Byte(c)),
        }
        i += 1;
    }
    out
}

/// Whether `s` matches the glob `pattern` exactly as Redis's
/// `stringmatchlen` decides it (case-sensitive). Runs in O(|p|·|s|) time
/// without recursion, so hostile patterns cannot exhaust the stack.
pub(super) fn glob_match(pattern: &[u8], s: &[u8]) -> bool {
    let p = compile(pattern);
    if s.is_empty() {
        // Redis never enters its matching loop for an empty string: only an
        // empty pattern matches it (not even `**`).
        return p.is_empty();
    }
    let (mut pi, mut si) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(Glob::Star) => {
                backtrack = Some((pi, si));
                pi += 1;
            }
            Some(g) if g.matches(s[si]) => {
                pi += 1;
                si += 1;
            }
            _ => match backtrack {
                Some((star, from)) => {
                    backtrack = Some((star, from + 1));
                    pi = star + 1;
                    si = from + 1;
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|g| *g == Glob::Star)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::sets::test_util::sorted;
    use crate::testing::{err, Harness};

    fn scan(h: &mut Harness, args: &[&str]) -> (String, Vec<String>) {
        let mut argv = vec!["SSCAN"];
        argv.extend_from_slice(args);
        match h.run(&argv) {
            Reply::Array(v) if v.len() == 2 => {
                let cursor = match &v[0] {
                    Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                    other => panic!("cursor {other:?}"),
                };
                (cursor, sorted(&v[1]))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn small_sets_come_back_whole() {
        let mut h = Harness::new();
        h.run(&["SADD", "s", "a", "b", "c"]);
        assert_eq!(
            scan(&mut h, &["s", "0"]),
            ("0".into(), vec!["a".into(), "b".into(), "c".into()])
        );
        assert_eq!(scan(&mut h, &["s", "0", "COUNT", "1"]).1.len(), 3);
        assert_eq!(scan(&mut h, &["s", "0", "MATCH", "[ab]"]).1, ["a", "b"]);
        assert_eq!(
            scan(&mut h, &["s", "0", "match", "*", "count", "5"])
                .1
                .len(),
            3
        );
        assert_eq!(scan(&mut h, &["nokey", "0"]), ("0".into(), vec![]));
        let ints: Vec<String> = (0..500).map(|i| i.to_string()).collect();
        let mut argv = vec!["SADD", "ints"];
        argv.extend(ints.iter().map(|s| s.as_str()));
        h.run(&argv);
        assert_eq!(scan(&mut h, &["ints", "0", "COUNT", "2"]).1.len(), 500);
    }

    #[test]
    fn large_sets_iterate_with_a_cursor() {
        let mut h = Harness::new();
        let members: Vec<String> = (0..1000).map(|i| format!("m{i}")).collect();
        let mut argv = vec!["SADD", "s"];
        argv.extend(members.iter().map(|s| s.as_str()));
        h.run(&argv);
        let mut seen = Vec::new();
        let mut cursor = "0".to_string();
        let mut calls = 0;
        loop {
            let (next, found) = scan(&mut h, &["s", &cursor, "COUNT", "7"]);
            assert!(found.len() <= 7);
            seen.extend(found);
            calls += 1;
            // Members removed and added mid-iteration must not hide others.
            if calls == 20 {
                h.run(&["SREM", "s", "m3", "m500", "m999"]);
                h.run(&["SADD", "s", "late"]);
            }
            if next == "0" {
                break;
            }
            cursor = next;
        }
        seen.sort();
        seen.dedup();
        let mut expected: Vec<String> = members
            .into_iter()
            .filter(|m| !["m3", "m500", "m999"].contains(&m.as_str()))
            .collect();
        expected.sort();
        let seen_kept: Vec<String> = seen
            .iter()
            .filter(|m| expected.contains(m))
            .cloned()
            .collect();
        assert_eq!(seen_kept, expected);
        let (_, matched) = scan(&mut h, &["s", "0", "MATCH", "m1?", "COUNT", "100000"]);
        assert_eq!(
            matched,
            (10..20).map(|i| format!("m{i}")).collect::<Vec<_>>()
        );
    }

    #[test]
    fn expired_members_are_never_scanned() {
        let mut h = Harness::new();
        h.run(&["SADD", "s", "a", "b"]);
        h.run(&["SADDEX", "s", "1", "c"]);
        h.advance(1000);
        assert_eq!(scan(&mut h, &["s", "0"]).1, ["a", "b"]);
    }

    #[test]
    fn sscan_errors() {
        let mut h = Harness::new();
        h.run(&["SADD", "s", "a"]);
        h.run(&["SET", "str", "x"]);
        let cursor = err("ERR invalid cursor");
        for c in ["abc", "-", "+", " 1", "1 ", "18446744073709551616", "0x1"] {
            assert_eq!(h.run(&["SSCAN", "s", c]), cursor, "{c}");
        }
        for c in [
            "",
            "+5",
            "007",
            "-1",
            "18446744073709551615",
            "-18446744073709551615",
        ] {
            assert_eq!(scan(&mut h, &["s", c]).1, ["a"], "{c}");
        }
        assert_eq!(
            h.run(&["SSCAN", "s", "0", "COUNT", "0"]),
            err("ERR syntax error")
        );
        assert_eq!(
            h.run(&["SSCAN", "s", "0", "COUNT", "abc"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            h.run(&["SSCAN", "s", "0", "MATCH"]),
            err("ERR syntax error")
        );
        assert_eq!(
            h.run(&["SSCAN", "s", "0", "TYPE", "set"]),
            err("ERR syntax error")
        );
        assert_eq!(
            h.run(&["SSCAN", "s", "0", "FOO", "bar"]),
            err("ERR syntax error")
        );
        assert_eq!(
            scan(&mut h, &["nokey", "0", "COUNT", "abc"]).1,
            Vec::<String>::new()
        );
        let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
        assert_eq!(h.run(&["SSCAN", "str", "0"]), wrongtype);
        assert_eq!(h.run(&["SSCAN", "str", "abc"]), cursor);
        assert_eq!(
            h.run(&["SSCAN", "s"]),
            err("ERR wrong number of arguments for 'sscan' command")
        );
    }

    #[test]
    fn glob_matches_like_redis() {
        // (pattern, string, expected) checked against redis-server 7.0's SSCAN.
        let cases: &[(&[u8], &[u8], bool)] = &[
            (b"", b"", true),
            // SSCAN and KEYS never ask this one: they treat a lone `*` as no pattern.
            (b"*", b"", false),
            (b"**", b"", false),
            (b"?", b"", false),
            (b"*", b"abc", true),
            (b"a*", b"abc", true),
            (b"*c", b"abc", true),
            (b"*b*", b"abc", true),
            (b"*d*", b"abc", false),
            (b"a?c", b"abc", true),
            (b"a??c", b"abc", false),
            (b"[abc]", b"b", true),
            (b"[^abc]", b"b", false),
            (b"[^abc]", b"d", true),
            (b"[a-c]x", b"bx", true),
            (b"[c-a]x", b"bx", true),
            (b"[a-c]", b"d", false),
            (b"\\*", b"*", true),
            (b"\\*", b"a", false),
            (b"a\\", b"a\\", true),
            (b"[", b"a", false),
            (b"[^", b"a", true),
            (b"[a", b"a", true),
            (b"[a-]", b"]", true),
            (b"[a-]", b"b", false),
            (b"[\\]]", b"]", true),
            (b"[]]", b"]", false),
            (b"h*llo", b"heeeello", true),
            (b"h*llo", b"hllo", true),
            (b"*a*a*a*b", b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
            (b"*x", b"xxxxxy", false),
            (b"a*b*c", b"abbbbcxc", true),
            (b"[\x80-\xff]", b"a", false),
            (b"[\x80-\xff]", b"\x90", true),
            (b"[a-\xff]", b"b", false),
        ];
        for &(p, s, want) in cases {
            assert_eq!(
                glob_match(p, s),
                want,
                "{:?} vs {:?}",
                String::from_utf8_lossy(p),
                String::from_utf8_lossy(s)
            );
        }
        let mut hostile = b"*a".repeat(50_000);
        hostile.push(b'b');
        assert!(!glob_match(&hostile, &[b'a'; 200]));
    }
}
