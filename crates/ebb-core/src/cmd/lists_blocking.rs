//! The blocking list commands: BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP.
//!
//! Each tries its non-blocking form first. When nothing is available it
//! returns [`Error::WouldBlock`] with the keys to wait on, so the server
//! parks the client and runs the command again once a key is ready; where
//! blocking is not allowed (inside MULTI, scripts) it replies as Redis does
//! on timeout. A command that did pop is logged as its non-blocking form.

use bytes::Bytes;

use crate::cmd::lists::{move_element, mpop, numkeys_positions, parse_end, parse_mpop, popped};
use crate::cmd::timeout::parse_timeout;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::list::End;
use crate::value::ListValue;

/// The blocking list commands.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core("blpop", -3, "write noscript blocking", (1, -2, 1), "list", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", blpop),
    CommandSpec::core("brpop", -3, "write noscript blocking", (1, -2, 1), "list", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", brpop),
    CommandSpec::core("brpoplpush", 4, "write denyoom noscript blocking", (1, 2, 1), "list", "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.", brpoplpush),
    CommandSpec::core("blmove", 6, "write denyoom noscript blocking", (1, 2, 1), "list", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.", blmove),
    CommandSpec::core("blmpop", -5, "write blocking movablekeys", (0, 0, 0), "list", "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", blmpop)
        .with_keys(blmpop_keys),
];

/// Parks the client on `keys` when allowed, else replies `on_timeout`.
///
/// Where blocking is not allowed Redis replies the null array, except for
/// BLMOVE and BRPOPLPUSH, which reply a null bulk string (`$-1` in RESP2).
/// A client that really blocked and timed out gets the null array from
/// every blocking list command, those two included.
fn block_or(ctx: &Ctx, keys: &[&[u8]], timeout_ms: u64, on_timeout: Reply) -> CmdResult<Reply> {
    if !ctx.may_block {
        return Ok(on_timeout);
    }
    let mut wait: Vec<Bytes> = Vec::with_capacity(keys.len());
    for k in keys {
        if !wait.iter().any(|w| w == k) {
            wait.push(Bytes::copy_from_slice(k));
        }
    }
    Err(Error::WouldBlock {
        keys: wait,
        timeout_ms,
    })
}

fn bpop(ctx: &mut Ctx, argv: &[&[u8]], end: End) -> CmdResult<Reply> {
    let (last, keys) = match argv.split_last() {
        Some((t, rest)) if rest.len() >= 2 => (t, &rest[1..]),
        _ => return Err(Error::Syntax),
    };
    let timeout = parse_timeout(last)?;
    for key in keys {
        let Some(list) = ctx.get_mut::<ListValue>(key)? else {
            continue;
        };
        let Some(v) = list.pop_at(end) else { continue };
        popped(ctx, key, end, 1);
        let cmd = if end == End::Left { "LPOP" } else { "RPOP" };
        ctx.rewrite_as(vec![vec![
            Bytes::from_static(cmd.as_bytes()),
            Bytes::copy_from_slice(key),
        ]]);
        return Ok(Reply::Array(vec![Reply::bulk(key), Reply::Bulk(v)]));
    }
    block_or(ctx, keys, timeout, Reply::NilArray)
}

/// # Format
/// `BLPOP key [key ...] timeout` → `[key, element]` popped from the head of
/// the first non-empty list; blocks up to timeout seconds (0 = forever)
/// otherwise, then replies a null array.
fn blpop(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    bpop(ctx, argv, End::Left)
}

/// # Format
/// `BRPOP key [key ...] timeout` → as BLPOP, from the tail.
fn brpop(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    bpop(ctx, argv, End::Right)
}

fn bmove(ctx: &mut Ctx, argv: &[&[u8]], from: End, to: End, timeout_at: usize) -> CmdResult<Reply> {
    let timeout = parse_timeout(argv[timeout_at])?;
    let (src, dst) = (&argv[1], &argv[2]);
    if !ctx.check_type::<ListValue>(src)? {
        return block_or(ctx, std::slice::from_ref(src), timeout, Reply::Nil);
    }
    let reply = move_element(ctx, src, dst, from, to)?;
    let copy = |b: &[u8]| Bytes::copy_from_slice(b);
    let logged = if timeout_at == 3 {
        vec![Bytes::from_static(b"RPOPLPUSH"), copy(src), copy(dst)]
    } else {
        vec![
            Bytes::from_static(b"LMOVE"),
            copy(src),
            copy(dst),
            copy(argv[3]),
            copy(argv[4]),
        ]
    };
    ctx.rewrite_as(vec![logged]);
    Ok(reply)
}

/// # Format
/// `BRPOPLPUSH source destination timeout` → the element moved from the
/// tail of source to the head of destination; blocks while source is
/// empty, then replies nil on timeout.
fn brpoplpush(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    bmove(ctx, argv, End::Right, End::Left, 3)
}

/// # Format
/// `BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout` → the element
/// moved; blocks while source is empty, then replies nil on timeout.
fn blmove(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let from = parse_end(argv[3])?;
    let to = parse_end(argv[4])?;
    bmove(ctx, argv, from, to, 5)
}

/// # Format
/// `BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]` → as
/// LMPOP; blocks while every list is empty, then replies a null array.
fn blmpop(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let req = parse_mpop(argv, 2)?;
    let timeout = parse_timeout(argv[1])?;
    match mpop(ctx, req.keys, req.end, req.count)? {
        Some(r) => Ok(r),
        None => block_or(ctx, req.keys, timeout, Reply::NilArray),
    }
}

/// Key positions of BLMPOP.
fn blmpop_keys(argv: &[&[u8]]) -> Vec<usize> {
    numkeys_positions(argv, 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{lookup, Exec};
    use crate::testing::{bulk, bulks, err, Harness};

    /// Runs a command with blocking allowed, returning the handler's raw
    /// result (the harness itself never blocks).
    fn run_blocking(h: &mut Harness, args: &[&str]) -> CmdResult<Reply> {
        let argv: Vec<Bytes> = args
            .iter()
            .map(|a| Bytes::copy_from_slice(a.as_bytes()))
            .collect();
        let spec = lookup(&argv[0]).expect("command exists");
        let Exec::Core(handler) = spec.exec else {
            panic!("core command")
        };
        h.fx.clear();
        let mut ctx = Ctx::new(&mut h.store, h.db, h.now, &mut h.fx);
        ctx.may_block = true;
        let r = handler(&mut ctx, &crate::args::views(&argv));
        ctx.finish();
        r
    }

    fn would_block(keys: &[&str], timeout_ms: u64) -> CmdResult<Reply> {
        Err(Error::WouldBlock {
            keys: keys
                .iter()
                .map(|k| Bytes::copy_from_slice(k.as_bytes()))
                .collect(),
            timeout_ms,
        })
    }

    fn cmd(parts: &[&str]) -> Vec<Bytes> {
        parts
            .iter()
            .map(|p| Bytes::copy_from_slice(p.as_bytes()))
            .collect()
    }

    #[test]
    fn blpop_pops_first_non_empty() {
        let mut h = Harness::new();
        h.run(&["RPUSH", "b", "1", "2"]);
        assert_eq!(h.run(&["BLPOP", "a", "b", "0"]), bulks(&["b", "1"]));
        assert_eq!(h.fx.rewrite, Some(vec![cmd(&["LPOP", "b"])]));
        assert_eq!(
            h.fx.events
                .iter()
                .map(|e| e.name.as_ref())
                .collect::<Vec<_>>(),
            ["lpop"]
        );
        assert_eq!(h.run(&["BRPOP", "a", "b", "1.5"]), bulks(&["b", "2"]));
        assert_eq!(h.fx.rewrite, Some(vec![cmd(&["RPOP", "b"])]));
        let names: Vec<_> = h.fx.events.iter().map(|e| e.name.as_ref()).collect();
        assert_eq!(names, ["rpop", "del"]);
        assert_eq!(h.run(&["LLEN", "b"]), Reply::Int(0));
    }

    #[test]
    fn blpop_without_blocking_replies_as_on_timeout() {
        let mut h = Harness::new();
        assert_eq!(h.run(&["BLPOP", "a", "b", "0"]), Reply::NilArray);
        assert_eq!(h.run(&["BRPOP", "a", "1"]), Reply::NilArray);
        assert!(h.fx.rewrite.is_none() && h.fx.dirty == 0);
        assert_eq!(h.run(&["BLMPOP", "0", "1", "a", "LEFT"]), Reply::NilArray);
        assert_eq!(
            h.run(&["BLMOVE", "a", "b", "LEFT", "RIGHT", "0"]),
            Reply::Nil
        );
        assert_eq!(h.run(&["BRPOPLPUSH", "a", "b", "0"]), Reply::Nil);
    }

    #[test]
    fn blocking_forms_park_with_keys_and_timeout() {
        let mut h = Harness::new();
        assert_eq!(
            run_blocking(&mut h, &["BLPOP", "a", "b", "a", "0"]),
            would_block(&["a", "b"], 0)
        );
        assert_eq!(
            run_blocking(&mut h, &["BRPOP", "a", "2.5"]),
            would_block(&["a"], 2500)
        );
        assert_eq!(
            run_blocking(&mut h, &["BLMOVE", "a", "b", "LEFT", "RIGHT", "0.1"]),
            would_block(&["a"], 100)
        );
        assert_eq!(
            run_blocking(&mut h, &["BRPOPLPUSH", "a", "b", "1"]),
            would_block(&["a"], 1000)
        );
        assert_eq!(
            run_blocking(
                &mut h,
                &["BLMPOP", "3", "2", "a", "c", "RIGHT", "COUNT", "2"]
            ),
            would_block(&["a", "c"], 3000)
        );
        assert!(h.fx.is_empty());
        // Something to pop: served at once even when blocking is allowed.
        h.run(&["RPUSH", "c", "x"]);
        assert_eq!(
            run_blocking(
                &mut h,
                &["BLMPOP", "3", "2", "a", "c", "RIGHT", "COUNT", "2"]
            ),
            Ok(Reply::Array(vec![bulk("c"), bulks(&["x"])]))
        );
    }

    #[test]
    fn timeout_errors() {
        let mut h = Harness::new();
        for c in ["BLPOP", "BRPOP"] {
            assert_eq!(
                h.run(&[c, "a", "x"]),
                err("ERR timeout is not a float or out of range")
            );
            assert_eq!(h.run(&[c, "a", "-1"]), err("ERR timeout is negative"));
            assert_eq!(h.run(&[c, "a", "inf"]), err("ERR timeout is negative"));
            assert_eq!(
                h.run(&[c, "a", "nan"]),
                err("ERR timeout is not a float or out of range")
            );
        }
        assert_eq!(
            h.run(&["BLMOVE", "a", "b", "LEFT", "RIGHT", "x"]),
            err("ERR timeout is not a float or out of range")
        );
        assert_eq!(
            h.run(&["BRPOPLPUSH", "a", "b", "-1"]),
            err("ERR timeout is negative")
        );
        assert_eq!(
            h.run(&["BLMPOP", "-1", "1", "a", "LEFT"]),
            err("ERR timeout is negative")
        );
        // A timeout that rounds to zero blocks forever rather than failing.
        assert_eq!(
            run_blocking(&mut h, &["BLPOP", "a", "-0.0005"]),
            would_block(&["a"], 0)
        );
        assert_eq!(
            run_blocking(&mut h, &["BLPOP", "a", "0.0001"]),
            would_block(&["a"], 1)
        );
    }

    #[test]
    fn argument_errors_come_in_redis_order() {
        let mut h = Harness::new();
        h.run(&["SET", "s", "v"]);
        // BLMPOP checks numkeys, direction and COUNT before the timeout.
        assert_eq!(
            h.run(&["BLMPOP", "x", "0", "a", "LEFT"]),
            err("ERR numkeys should be greater than 0")
        );
        assert_eq!(
            h.run(&["BLMPOP", "x", "1", "a", "MIDDLE"]),
            err("ERR syntax error")
        );
        assert_eq!(
            h.run(&["BLMPOP", "x", "1", "a", "LEFT", "COUNT", "0"]),
            err("ERR count should be greater than 0")
        );
        assert_eq!(
            h.run(&["BLMPOP", "x", "1", "s", "LEFT"]),
            err("ERR timeout is not a float or out of range")
        );
        assert_eq!(
            h.run(&["BLMPOP", "0", "2", "s", "a", "LEFT"]),
            err("WRONGTYPE Operation against a key holding the wrong kind of value")
        );
        assert_eq!(
            h.run(&["BLMPOP", "0", "3", "a", "LEFT"]),
            err("ERR syntax error")
        );
        // BLMOVE checks the directions before the timeout.
        assert_eq!(
            h.run(&["BLMOVE", "a", "b", "UP", "RIGHT", "x"]),
            err("ERR syntax error")
        );
        assert_eq!(
            h.run(&["BLPOP", "s", "x"]),
            err("ERR timeout is not a float or out of range")
        );
        assert_eq!(
            h.run(&["BLPOP", "s", "1"]),
            err("WRONGTYPE Operation against a key holding the wrong kind of value")
        );
        assert_eq!(
            h.run(&["BLMOVE", "s", "b", "LEFT", "RIGHT", "1"]),
            err("WRONGTYPE Operation against a key holding the wrong kind of value")
        );
        assert_eq!(
            h.run(&["BRPOPLPUSH", "s", "b", "1"]),
            err("WRONGTYPE Operation against a key holding the wrong kind of value")
        );
        // A missing source blocks without looking at the destination.
        assert_eq!(h.run(&["BRPOPLPUSH", "a", "s", "1"]), Reply::Nil);
        assert_eq!(
            run_blocking(&mut h, &["BRPOPLPUSH", "a", "s", "1"]),
            would_block(&["a"], 1000)
        );
        h.run(&["RPUSH", "a", "1"]);
        assert_eq!(
            h.run(&["BRPOPLPUSH", "a", "s", "1"]),
            err("WRONGTYPE Operation against a key holding the wrong kind of value")
        );
        assert_eq!(h.run(&["LLEN", "a"]), Reply::Int(1));
        assert_eq!(
            h.run(&["BLPOP", "a"]),
            err("ERR wrong number of arguments for 'blpop' command")
        );
        assert_eq!(
            h.run(&["BLMPOP", "0", "1", "a"]),
            err("ERR wrong number of arguments for 'blmpop' command")
        );
    }

    #[test]
    fn blmove_and_brpoplpush_serve_and_log_as_non_blocking() {
        let mut h = Harness::new();
        h.run(&["RPUSH", "src", "a", "b"]);
        assert_eq!(h.run(&["BRPOPLPUSH", "src", "dst", "0"]), bulk("b"));
        assert_eq!(h.fx.rewrite, Some(vec![cmd(&["RPOPLPUSH", "src", "dst"])]));
        assert_eq!(h.fx.ready, vec![(0, Bytes::from("dst"))]);
        assert_eq!(
            h.run(&["BLMOVE", "src", "dst", "left", "RIGHT", "0"]),
            bulk("a")
        );
        assert_eq!(
            h.fx.rewrite,
            Some(vec![cmd(&["LMOVE", "src", "dst", "left", "RIGHT"])])
        );
        let names: Vec<_> =
            h.fx.events
                .iter()
                .map(|e| (e.name.as_ref(), e.key.clone()))
                .collect();
        assert_eq!(
            names,
            [
                ("rpush", Bytes::from("dst")),
                ("lpop", Bytes::from("src")),
                ("del", Bytes::from("src"))
            ]
        );
        assert_eq!(h.run(&["LRANGE", "dst", "0", "-1"]), bulks(&["b", "a"]));
    }

    #[test]
    fn blmpop_serves_with_count_and_logs_a_pop() {
        let mut h = Harness::new();
        h.run(&["RPUSH", "l", "1", "2", "3"]);
        assert_eq!(
            h.run(&["BLMPOP", "0", "2", "none", "l", "RIGHT", "COUNT", "2"]),
            Reply::Array(vec![bulk("l"), bulks(&["3", "2"])])
        );
        assert_eq!(h.fx.rewrite, Some(vec![cmd(&["RPOP", "l", "2"])]));
        assert_eq!(
            h.run(&["BLMPOP", "0", "1", "l", "LEFT", "COUNT", "5"]),
            Reply::Array(vec![bulk("l"), bulks(&["1"])])
        );
        assert_eq!(h.fx.rewrite, Some(vec![cmd(&["LPOP", "l", "1"])]));
    }

    #[test]
    fn key_finder() {
        let spec = lookup(b"blmpop").expect("blmpop");
        assert_eq!(
            spec.key_positions(&crate::args::views(&cmd(&[
                "BLMPOP", "0", "2", "a", "b", "LEFT"
            ]))),
            vec![3, 4]
        );
        assert_eq!(
            spec.key_positions(&crate::args::views(&cmd(&[
                "BLMPOP", "0", "9", "a", "LEFT"
            ]))),
            Vec::<usize>::new()
        );
        assert_eq!(
            spec.key_positions(&crate::args::views(&cmd(&[
                "BLMPOP", "0", "x", "a", "LEFT"
            ]))),
            Vec::<usize>::new()
        );
        let spec = lookup(b"blpop").expect("blpop");
        assert_eq!(
            spec.key_positions(&crate::args::views(&cmd(&["BLPOP", "a", "b", "0"]))),
            vec![1, 2]
        );
    }
}
