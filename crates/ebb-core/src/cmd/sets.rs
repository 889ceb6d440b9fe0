//! The sets family: SADD, SREM, membership queries and SMOVE. Random
//! picks (SPOP, SRANDMEMBER) live in `sets_random.rs`, set algebra in
//! `sets_algebra.rs`, SSCAN in `sets_scan.rs` and SADDEX in `sets_ex.rs`.
//!
//! Handlers only ever see live members: the typed accessors of [`Ctx`]
//! purge due members before a handler borrows the set, so a member whose
//! deadline passed is invisible to every command here.

use bytes::Bytes;

use crate::args::{Args, IntoBytes};
use crate::ctx::Ctx;
use crate::error::CmdResult;
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::member::shared_copies;
use crate::value::SetValue;

/// The sets family's commands (membership and moves).
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core(
        "sadd",
        -3,
        "write denyoom fast",
        (1, 1, 1),
        "set",
        "Add one or more members to a set",
        sadd,
    ),
    CommandSpec::core(
        "srem",
        -3,
        "write fast",
        (1, 1, 1),
        "set",
        "Remove one or more members from a set",
        srem,
    ),
    CommandSpec::core(
        "smembers",
        2,
        "readonly",
        (1, 1, 1),
        "set",
        "Get all the members in a set",
        smembers,
    ),
    CommandSpec::core(
        "sismember",
        3,
        "readonly fast",
        (1, 1, 1),
        "set",
        "Determine if a given value is a member of a set",
        sismember,
    ),
    CommandSpec::core(
        "smismember",
        -3,
        "readonly fast",
        (1, 1, 1),
        "set",
        "Returns the membership associated with the given elements for a set",
        smismember,
    ),
    CommandSpec::core(
        "scard",
        2,
        "readonly fast",
        (1, 1, 1),
        "set",
        "Get the number of members in a set",
        scard,
    ),
    CommandSpec::core(
        "smove",
        4,
        "write fast",
        (1, 2, 1),
        "set",
        "Move a member from one set to another",
        smove,
    ),
];

/// A reply element for each member.
pub(super) fn member_replies<M: AsRef<[u8]>>(members: impl IntoIterator<Item = M>) -> Vec<Reply> {
    let members: Vec<M> = members.into_iter().collect();
    shared_copies(&members, |m| m.as_ref())
        .map(Reply::Bulk)
        .collect()
}

/// Deletes `key` after the command emptied its set, with the `del` event
/// right after the command's own event, in Redis's order.
pub(super) fn delete_emptied(ctx: &mut Ctx, key: &[u8]) {
    if ctx.delete(key) {
        ctx.notify(b'g', "del", key);
    }
}

/// A command as logged: `name key args…`.
pub(super) fn log_cmd(
    name: &'static [u8],
    key: &[u8],
    args: impl IntoIterator<Item = impl IntoBytes>,
) -> Vec<Bytes> {
    let mut cmd = vec![Bytes::from_static(name), Bytes::copy_from_slice(key)];
    cmd.extend(args.into_iter().map(IntoBytes::into_bytes));
    cmd
}

/// # Format
/// `SADD key member [member …]` → the number of members that were not
/// already in the set. A member already present keeps its deadline.
fn sadd(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let members = a.rest();
    let set = ctx.get_or_create::<SetValue>(key)?;
    let added = match set.fill_packed(members) {
        Some(n) => n as i64,
        None => {
            set.expect(members.len());
            members.iter().filter(|m| set.insert(m)).count() as i64
        }
    };
    if added > 0 {
        ctx.modified(key);
        ctx.notify(b's', "sadd", key);
    }
    Ok(Reply::Int(added))
}

/// # Format
/// `SREM key member [member …]` → the number of members removed. A removed
/// member's deadline is forgotten; removing the last member deletes the key.
fn srem(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let members = a.rest();
    let Some(set) = ctx.get_mut::<SetValue>(key)? else {
        return Ok(Reply::Int(0));
    };
    let mut removed = 0;
    for m in members {
        if set.remove(m) {
            removed += 1;
        }
    }
    let emptied = set.is_empty();
    if removed > 0 {
        ctx.modified(key);
        ctx.notify(b's', "srem", key);
        if emptied {
            delete_emptied(ctx, key);
        }
    }
    Ok(Reply::Int(removed))
}

/// # Format
/// `SMEMBERS key` → every live member (a set reply; empty if no key).
fn smembers(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let key = Args::new(argv).bytes()?;
    Ok(Reply::Set(match ctx.get::<SetValue>(key)? {
        Some(set) => member_replies(set.iter()),
        None => Vec::new(),
    }))
}

/// # Format
/// `SISMEMBER key member` → 1 if `member` is a live member, else 0.
fn sismember(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let member = a.bytes()?;
    let set = ctx.get::<SetValue>(key)?;
    Ok(Reply::Int(set.is_some_and(|s| s.contains(member)) as i64))
}

/// # Format
/// `SMISMEMBER key member [member …]` → an array of 1/0, one per member.
fn smismember(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let members = a.rest();
    let set = ctx.get::<SetValue>(key)?;
    Ok(Reply::Array(
        members
            .iter()
            .map(|m| Reply::Int(set.is_some_and(|s| s.contains(m)) as i64))
            .collect(),
    ))
}

/// # Format
/// `SCARD key` → the number of live members (0 if no key).
fn scard(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let key = Args::new(argv).bytes()?;
    Ok(Reply::Int(
        ctx.get::<SetValue>(key)?.map_or(0, |s| s.len() as i64),
    ))
}

/// # Format
/// `SMOVE source destination member` → 1 if `member` was moved, 0 if it is
/// not a member of `source`. The member is removed from `source` (losing
/// any deadline) and added to `destination` (where, if it was already a
/// member, it keeps the deadline it had there). With `source` equal to
/// `destination` nothing changes and the reply says whether it is a member.
fn smove(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let src = a.bytes()?;
    let dst = a.bytes()?;
    let member = a.bytes()?;
    ctx.expire_key(src);
    ctx.expire_key(dst);
    let Some(sset) = ctx.get_for_write::<SetValue>(src)? else {
        return Ok(Reply::Int(0));
    };
    let is_member = sset.contains(member);
    ctx.check_type::<SetValue>(dst)?;
    if src == dst {
        return Ok(Reply::Int(is_member as i64));
    }
    if !is_member {
        return Ok(Reply::Int(0));
    }
    let Some(sset) = ctx.get_mut::<SetValue>(src)? else {
        return Ok(Reply::Int(0));
    };
    sset.remove(member);
    let emptied = sset.is_empty();
    ctx.modified(src);
    ctx.notify(b's', "srem", src);
    if emptied {
        delete_emptied(ctx, src);
    }
    let dset = ctx.get_or_create::<SetValue>(dst)?;
    if dset.insert(Bytes::copy_from_slice(member)) {
        ctx.modified(dst);
        ctx.notify(b's', "sadd", dst);
    }
    Ok(Reply::Int(1))
}

/// Helpers shared by the sets test modules.
#[cfg(test)]
pub(super) mod test_util {
    use crate::reply::Reply;
    use crate::testing::Harness;
    use crate::value::{SetValue, Value};

    /// The members of an array or set reply, as sorted strings.
    pub fn sorted(r: &Reply) -> Vec<String> {
        let items = match r {
            Reply::Array(v) | Reply::Set(v) => v,
            other => panic!("not a collection: {other:?}"),
        };
        let mut out: Vec<String> = items
            .iter()
            .map(|i| match i {
                Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                other => panic!("not a bulk: {other:?}"),
            })
            .collect();
        out.sort();
        out
    }

    /// The stored set under `key` in db 0, without any expiry.
    pub fn raw_set<'a>(h: &'a Harness, key: &str) -> Option<&'a SetValue> {
        match h.store.dbs[h.db].raw_get(key.as_bytes()).map(|e| &e.value) {
            Some(Value::Set(s)) => Some(s),
            _ => None,
        }
    }

    /// The deadline of `member` in the stored set under `key`.
    pub fn deadline(h: &Harness, key: &str, member: &str) -> Option<u64> {
        raw_set(h, key).and_then(|s| s.deadline(member.as_bytes()))
    }

    /// Event names of the last command, in order, as `name:key`.
    pub fn events(h: &Harness) -> Vec<String> {
        h.fx.events
            .iter()
            .map(|e| format!("{}:{}", e.name, String::from_utf8_lossy(&e.key)))
            .collect()
    }

    /// The commands the last command is logged as, if rewritten.
    pub fn logged(h: &Harness) -> Option<Vec<Vec<String>>> {
        h.fx.rewrite.as_ref().map(|cmds| {
            cmds.iter()
                .map(|c| {
                    c.iter()
                        .map(|a| String::from_utf8_lossy(a).into_owned())
                        .collect()
                })
                .collect()
        })
    }

    /// Gives `member` of set `key` the deadline `at` directly.
    pub fn set_deadline(h: &mut Harness, key: &str, member: &str, at: u64) {
        let db = &mut h.store.dbs[h.db];
        if let Some(Value::Set(s)) = db.peek_mut(key.as_bytes()).map(|e| &mut e.value) {
            assert!(s.set_deadline(member.as_bytes(), at));
        }
        db.refresh_member_index(key.as_bytes());
    }

    /// Gives `member` of set `key` a deadline `ms` from now.
    pub fn expire_in(h: &mut Harness, key: &str, member: &str, ms: u64) {
        let at = h.now + ms;
        set_deadline(h, key, member, at);
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::*;
    use super::*;
    use crate::testing::{err, Harness};

    const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

    fn setup() -> Harness {
        let mut h = Harness::new();
        h.run(&["SET", "str", "x"]);
        h
    }

    #[test]
    fn sadd_counts_new_members_and_creates_key() {
        let mut h = setup();
        assert_eq!(h.run(&["SADD", "s", "a", "b", "a"]), Reply::Int(2));
        assert_eq!(events(&h), ["sadd:s"]);
        assert_eq!(h.fx.touched.len(), 1);
        assert_eq!(h.run(&["SADD", "s", "a"]), Reply::Int(0));
        assert!(h.fx.events.is_empty());
        assert!(h.fx.touched.is_empty());
        assert_eq!(sorted(&h.run(&["SMEMBERS", "s"])), ["a", "b"]);
        assert_eq!(h.run(&["SADD", "str", "a"]), err(WRONGTYPE));
        assert_eq!(
            h.run(&["SADD", "s"]),
            err("ERR wrong number of arguments for 'sadd' command")
        );
    }

    #[test]
    fn sadd_of_existing_member_keeps_deadline() {
        let mut h = setup();
        h.run(&["SADD", "s", "a", "b"]);
        let at = h.now + 1000;
        set_deadline(&mut h, "s", "a", at);
        assert_eq!(h.run(&["SADD", "s", "a"]), Reply::Int(0));
        assert_eq!(deadline(&h, "s", "a"), Some(at));
        h.advance(1000);
        assert_eq!(h.run(&["SISMEMBER", "s", "a"]), Reply::Int(0));
        assert_eq!(h.run(&["SCARD", "s"]), Reply::Int(1));
    }

    #[test]
    fn srem_forgets_deadline_and_readded_member_has_none() {
        let mut h = setup();
        h.run(&["SADD", "s", "a", "b"]);
        expire_in(&mut h, "s", "a", 1000);
        assert_eq!(h.run(&["SREM", "s", "a", "zz"]), Reply::Int(1));
        assert_eq!(events(&h), ["srem:s"]);
        assert_eq!(deadline(&h, "s", "a"), None);
        assert_eq!(h.run(&["SADD", "s", "a"]), Reply::Int(1));
        assert_eq!(deadline(&h, "s", "a"), None);
        h.advance(5000);
        assert_eq!(h.run(&["SISMEMBER", "s", "a"]), Reply::Int(1));
    }

    #[test]
    fn srem_last_member_deletes_key() {
        let mut h = setup();
        h.run(&["SADD", "s", "a", "b"]);
        assert_eq!(h.run(&["SREM", "s", "a", "b", "c"]), Reply::Int(2));
        assert_eq!(events(&h), ["srem:s", "del:s"]);
        assert!(raw_set(&h, "s").is_none());
        assert_eq!(h.run(&["SREM", "s", "a"]), Reply::Int(0));
        assert!(h.fx.events.is_empty());
        assert_eq!(h.run(&["SREM", "str", "a"]), err(WRONGTYPE));
    }

    #[test]
    fn membership_queries() {
        let mut h = setup();
        h.run(&["SADD", "s", "a", "b"]);
        assert_eq!(h.run(&["SISMEMBER", "s", "a"]), Reply::Int(1));
        assert_eq!(h.run(&["SISMEMBER", "s", "z"]), Reply::Int(0));
        assert_eq!(h.run(&["SISMEMBER", "nokey", "a"]), Reply::Int(0));
        assert_eq!(
            h.run(&["SMISMEMBER", "s", "a", "z", "b"]),
            Reply::Array(vec![Reply::Int(1), Reply::Int(0), Reply::Int(1)])
        );
        assert_eq!(
            h.run(&["SMISMEMBER", "nokey", "a", "b"]),
            Reply::Array(vec![Reply::Int(0), Reply::Int(0)])
        );
        assert_eq!(h.run(&["SCARD", "s"]), Reply::Int(2));
        assert_eq!(h.run(&["SCARD", "nokey"]), Reply::Int(0));
        assert_eq!(h.run(&["SMEMBERS", "nokey"]), Reply::Set(vec![]));
        assert!(matches!(h.run(&["SMEMBERS", "s"]), Reply::Set(_)));
        for cmd in [
            &["SISMEMBER", "str", "a"][..],
            &["SMISMEMBER", "str", "a"],
            &["SCARD", "str"],
            &["SMEMBERS", "str"],
        ] {
            assert_eq!(h.run(cmd), err(WRONGTYPE), "{cmd:?}");
        }
        assert_eq!(
            h.run(&["SMISMEMBER", "s"]),
            err("ERR wrong number of arguments for 'smismember' command")
        );
        assert_eq!(
            h.run(&["SCARD", "s", "x"]),
            err("ERR wrong number of arguments for 'scard' command")
        );
    }

    #[test]
    fn scard_is_exact_as_time_moves() {
        let mut h = setup();
        h.run(&["SADD", "s", "a", "b", "c", "d"]);
        let t0 = h.now;
        set_deadline(&mut h, "s", "a", t0 + 100);
        set_deadline(&mut h, "s", "b", t0 + 200);
        set_deadline(&mut h, "s", "c", t0 + 200);
        assert_eq!(h.run(&["SCARD", "s"]), Reply::Int(4));
        h.advance(99);
        assert_eq!(h.run(&["SCARD", "s"]), Reply::Int(4));
        h.advance(1);
        assert_eq!(h.run(&["SCARD", "s"]), Reply::Int(3));
        assert_eq!(sorted(&h.run(&["SMEMBERS", "s"])), ["b", "c", "d"]);
        h.advance(100);
        assert_eq!(h.run(&["SCARD", "s"]), Reply::Int(1));
        assert_eq!(sorted(&h.run(&["SRANDMEMBER", "s", "10"])), ["d"]);
        h.run(&["SREM", "s", "d"]);
        assert!(raw_set(&h, "s").is_none());
    }

    #[test]
    fn last_member_expiring_deletes_key() {
        let mut h = setup();
        h.run(&["SADD", "s", "a"]);
        expire_in(&mut h, "s", "a", 10);
        h.advance(10);
        assert_eq!(h.run(&["SCARD", "s"]), Reply::Int(0));
        assert!(raw_set(&h, "s").is_none());
        assert!(h.fx.events.iter().any(|e| e.name == "sexpired"));
        assert!(h.fx.events.iter().any(|e| e.name == "del"));
    }

    #[test]
    fn smove_moves_and_drops_deadline() {
        let mut h = setup();
        h.run(&["SADD", "src", "a", "b"]);
        h.run(&["SADD", "dst", "x"]);
        expire_in(&mut h, "src", "a", 1000);
        assert_eq!(h.run(&["SMOVE", "src", "dst", "a"]), Reply::Int(1));
        assert_eq!(events(&h), ["srem:src", "sadd:dst"]);
        assert_eq!(h.fx.touched.len(), 2);
        assert_eq!(deadline(&h, "dst", "a"), None);
        assert_eq!(deadline(&h, "src", "a"), None);
        h.advance(2000);
        assert_eq!(sorted(&h.run(&["SMEMBERS", "dst"])), ["a", "x"]);
        assert_eq!(sorted(&h.run(&["SMEMBERS", "src"])), ["b"]);
    }

    #[test]
    fn smove_to_existing_member_keeps_destination_deadline() {
        let mut h = setup();
        h.run(&["SADD", "src", "a", "b"]);
        h.run(&["SADD", "dst", "a"]);
        let at = h.now + 1000;
        set_deadline(&mut h, "dst", "a", at);
        assert_eq!(h.run(&["SMOVE", "src", "dst", "a"]), Reply::Int(1));
        assert_eq!(events(&h), ["srem:src"]);
        assert_eq!(h.fx.touched.len(), 1);
        assert_eq!(deadline(&h, "dst", "a"), Some(at));
    }

    #[test]
    fn smove_last_member_deletes_source_and_creates_destination() {
        let mut h = setup();
        h.run(&["SADD", "src", "a"]);
        assert_eq!(h.run(&["SMOVE", "src", "new", "a"]), Reply::Int(1));
        assert_eq!(events(&h), ["srem:src", "del:src", "sadd:new"]);
        assert!(raw_set(&h, "src").is_none());
        assert_eq!(sorted(&h.run(&["SMEMBERS", "new"])), ["a"]);
    }

    #[test]
    fn smove_edge_cases() {
        let mut h = setup();
        h.run(&["SADD", "s", "a"]);
        assert_eq!(h.run(&["SMOVE", "nokey", "str", "a"]), Reply::Int(0));
        assert_eq!(h.run(&["SMOVE", "s", "str", "a"]), err(WRONGTYPE));
        assert_eq!(h.run(&["SMOVE", "s", "str", "zz"]), err(WRONGTYPE));
        assert_eq!(h.run(&["SMOVE", "str", "s", "a"]), err(WRONGTYPE));
        assert_eq!(h.run(&["SMOVE", "s", "d", "zz"]), Reply::Int(0));
        assert!(h.fx.events.is_empty());
        assert!(raw_set(&h, "d").is_none());
        expire_in(&mut h, "s", "a", 1000);
        assert_eq!(h.run(&["SMOVE", "s", "s", "a"]), Reply::Int(1));
        assert!(h.fx.events.is_empty());
        assert_eq!(deadline(&h, "s", "a"), Some(h.now + 1000));
        assert_eq!(h.run(&["SMOVE", "s", "s", "zz"]), Reply::Int(0));
        h.advance(1000);
        assert_eq!(h.run(&["SMOVE", "s", "d", "a"]), Reply::Int(0));
        assert!(raw_set(&h, "d").is_none());
    }
}
