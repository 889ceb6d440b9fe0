//! SSCAN.
//!
//! The cursor walks the set's member positions from the last one down. A
//! set only ever moves its *last* member (into the slot of a removed one)
//! and appends new members at the end, so a member present for the whole
//! iteration is always at a position the walk has yet to visit, or has
//! visited already: it is reported at least once, as SCAN promises.

use bytes::Bytes;

use crate::cmd::keys::{parse_cursor, parse_scan_options};
use crate::cmd::sets::member_replies;
use crate::ctx::Ctx;
use crate::error::CmdResult;
use crate::glob::glob_match;
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
fn sscan(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let key = &argv[1];
    let cursor = parse_cursor(argv[2])?;
    let intset_max = ctx.store.cfg.set_max_intset_entries;
    // Like Redis, a missing key replies before the options are looked at.
    let Some(set) = ctx.get::<SetValue>(key)? else {
        return Ok(scan_reply(0, Vec::new()));
    };
    let opts = parse_scan_options(&argv[3..], false)?;
    let pattern = opts.pattern.as_deref();
    let count = opts.count as u64;
    let keep = |m: &&[u8]| pattern.is_none_or(|p| glob_match(p, m, false));
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
}
