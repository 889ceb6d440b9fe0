//! Member expiration for hash fields, sorted-set members and set members,
//! written once over [`MemberTtl`]: the EXPIRE / TTL / PERSIST families in
//! Redis 7.4's `HEXPIRE … FIELDS n field…` shape (`H*`), Garnet's
//! `ZEXPIRE … MEMBERS n member…` (`Z*`) and the same shape for sets (`S*`).
//!
//! The KeyDB and Dragonfly forms (`EXPIREMEMBER`, `TTL key member`,
//! `FIELDEXPIRE`, …) live in `member_ttl_compat.rs` and reuse the building
//! blocks exported here.

use bytes::Bytes;

use crate::args::parse_i64;
use crate::ctx::{Ctx, Kind};
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::{HashValue, SetValue, ZSetValue};

/// The largest absolute deadline a member may get, in Unix ms: Redis 7.4's
/// `HFE_MAX_ABS_TIME_MSEC` (2^46 - 1), about the year 4199.
pub const MAX_DEADLINE_MS: u64 = 0xFFFF_FFFF_FFFF >> 2;

/// The command names, keywords, events and error texts of one type's
/// member-expiration commands.
pub struct Names {
    /// Keyword introducing the member block: `FIELDS` or `MEMBERS`.
    pub keyword: &'static str,
    /// The absolute-ms command relative forms are logged as (`HPEXPIREAT`).
    pub pexpireat: &'static str,
    /// The command that logs member deletions (`HDEL`, `SREM`, `ZREM`).
    pub remove: &'static str,
    /// Keyspace-notification class flag.
    pub class: u8,
    /// Event for deadlines set (`hexpire`).
    pub expire_event: &'static str,
    /// Event for deadlines removed (`hpersist`).
    pub persist_event: &'static str,
    /// Event for members deleted by a deadline in the past (`hdel`).
    pub remove_event: &'static str,
    /// Error when the keyword is not where the grammar wants it.
    pub missing_keyword: &'static str,
    /// Error for a bad count in the EXPIRE-style commands.
    pub bad_count_expire: &'static str,
    /// Error for a bad count in the TTL- and PERSIST-style commands.
    pub bad_count_read: &'static str,
    /// Error when the count does not match the number of members given.
    pub count_mismatch: &'static str,
}

/// A collection whose members can carry deadlines, seen through the
/// operations member expiration needs.
pub trait MemberTtl: Kind {
    /// Names, events and error texts for this type.
    const NAMES: Names;
    /// Whether `m` is a member.
    fn has_member(&self, m: &[u8]) -> bool;
    /// The deadline of `m`, if it has one.
    fn deadline_of(&self, m: &[u8]) -> Option<u64>;
    /// Gives the existing member `m` the deadline `at`.
    fn set_member_deadline(&mut self, m: &[u8], at: u64) -> bool;
    /// Removes the deadline of `m`; returns the one it had.
    fn clear_member_deadline(&mut self, m: &[u8]) -> Option<u64>;
    /// Removes `m` (and its deadline); true if it was a member.
    fn remove_member(&mut self, m: &[u8]) -> bool;
    /// Number of members.
    fn member_count(&self) -> usize;
}

impl MemberTtl for HashValue {
    const NAMES: Names = Names {
        keyword: "FIELDS",
        pexpireat: "HPEXPIREAT",
        remove: "HDEL",
        class: b'h',
        expire_event: "hexpire",
        persist_event: "hpersist",
        remove_event: "hdel",
        missing_keyword: "ERR Mandatory argument FIELDS is missing or not at the right position",
        bad_count_expire: "ERR Parameter `numFields` should be greater than 0",
        bad_count_read: "ERR Number of fields must be a positive integer",
        count_mismatch: "ERR The `numfields` parameter must match the number of arguments",
    };
    fn has_member(&self, m: &[u8]) -> bool {
        self.contains(m)
    }
    fn deadline_of(&self, m: &[u8]) -> Option<u64> {
        self.deadlines().get(m)
    }
    fn set_member_deadline(&mut self, m: &[u8], at: u64) -> bool {
        self.set_deadline(m, at)
    }
    fn clear_member_deadline(&mut self, m: &[u8]) -> Option<u64> {
        self.clear_deadline(m)
    }
    fn remove_member(&mut self, m: &[u8]) -> bool {
        self.remove(m).is_some()
    }
    fn member_count(&self) -> usize {
        self.len()
    }
}

impl MemberTtl for SetValue {
    const NAMES: Names = Names {
        keyword: "MEMBERS",
        pexpireat: "SPEXPIREAT",
        remove: "SREM",
        class: b's',
        expire_event: "sexpire",
        persist_event: "spersist",
        remove_event: "srem",
        missing_keyword: "ERR Mandatory argument MEMBERS is missing or not at the right position",
        bad_count_expire: "ERR Parameter `numMembers` should be greater than 0",
        bad_count_read: "ERR Number of members must be a positive integer",
        count_mismatch: "ERR The `nummembers` parameter must match the number of arguments",
    };
    fn has_member(&self, m: &[u8]) -> bool {
        self.contains(m)
    }
    fn deadline_of(&self, m: &[u8]) -> Option<u64> {
        self.deadlines().get(m)
    }
    fn set_member_deadline(&mut self, m: &[u8], at: u64) -> bool {
        self.set_deadline(m, at)
    }
    fn clear_member_deadline(&mut self, m: &[u8]) -> Option<u64> {
        self.clear_deadline(m)
    }
    fn remove_member(&mut self, m: &[u8]) -> bool {
        self.remove(m)
    }
    fn member_count(&self) -> usize {
        self.len()
    }
}

impl MemberTtl for ZSetValue {
    const NAMES: Names = Names {
        keyword: "MEMBERS",
        pexpireat: "ZPEXPIREAT",
        remove: "ZREM",
        class: b'z',
        expire_event: "zexpire",
        persist_event: "zpersist",
        remove_event: "zrem",
        missing_keyword: "ERR Mandatory argument MEMBERS is missing or not at the right position",
        bad_count_expire: "ERR Parameter `numMembers` should be greater than 0",
        bad_count_read: "ERR Number of members must be a positive integer",
        count_mismatch: "ERR The `nummembers` parameter must match the number of arguments",
    };
    fn has_member(&self, m: &[u8]) -> bool {
        self.score(m).is_some()
    }
    fn deadline_of(&self, m: &[u8]) -> Option<u64> {
        self.deadlines().get(m)
    }
    fn set_member_deadline(&mut self, m: &[u8], at: u64) -> bool {
        self.set_deadline(m, at)
    }
    fn clear_member_deadline(&mut self, m: &[u8]) -> Option<u64> {
        self.clear_deadline(m)
    }
    fn remove_member(&mut self, m: &[u8]) -> bool {
        self.remove(m).is_some()
    }
    fn member_count(&self) -> usize {
        self.len()
    }
}

/// The NX / XX / GT / LT condition of an EXPIRE-style command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    /// No condition.
    Always,
    /// Only members without a deadline.
    Nx,
    /// Only members with a deadline.
    Xx,
    /// Only if the new deadline is later (no deadline counts as infinite).
    Gt,
    /// Only if the new deadline is earlier (no deadline counts as infinite).
    Lt,
}

impl Cond {
    /// Parses `NX`/`XX`/`GT`/`LT`, case-insensitively.
    pub fn parse(arg: &[u8]) -> Option<Cond> {
        match arg.to_ascii_uppercase().as_slice() {
            b"NX" => Some(Cond::Nx),
            b"XX" => Some(Cond::Xx),
            b"GT" => Some(Cond::Gt),
            b"LT" => Some(Cond::Lt),
            _ => None,
        }
    }

    /// Whether a member whose deadline is `cur` may get the deadline `at`.
    pub fn allows(self, cur: Option<u64>, at: u64) -> bool {
        match (self, cur) {
            (Cond::Always, _) => true,
            (Cond::Nx, c) => c.is_none(),
            (Cond::Xx, c) => c.is_some(),
            (Cond::Gt, None) => false,
            (Cond::Gt, Some(c)) => at > c,
            (Cond::Lt, None) => true,
            (Cond::Lt, Some(c)) => at < c,
        }
    }
}

/// Reply code: no such member (or no such key).
pub const NO_MEMBER: i64 = -2;
/// Reply code: the NX/XX/GT/LT condition was not met.
pub const NOT_MET: i64 = 0;
/// Reply code: the deadline was set.
pub const SET: i64 = 1;
/// Reply code: the member was deleted because the deadline is not in the future.
pub const DELETED: i64 = 2;
/// TTL-style reply code: the member has no deadline.
pub const NO_DEADLINE: i64 = -1;

/// Applies one EXPIRE-style change to a live collection at time `now`;
/// returns the Redis 7.4 reply code.
pub fn expire_one<T: MemberTtl>(v: &mut T, m: &[u8], at: u64, now: u64, cond: Cond) -> i64 {
    if !v.has_member(m) {
        return NO_MEMBER;
    }
    if !cond.allows(v.deadline_of(m), at) {
        return NOT_MET;
    }
    if at <= now {
        v.remove_member(m);
        return DELETED;
    }
    v.set_member_deadline(m, at);
    SET
}

/// Sets the deadline `at` on `members` of `key` under `cond`, reporting the
/// changes (WATCH, events, log); returns one code per member. A missing key
/// is an empty collection: every code is `-2`.
pub fn expire_members<T: MemberTtl>(
    ctx: &mut Ctx,
    key: &[u8],
    at: u64,
    cond: Cond,
    members: &[&[u8]],
) -> CmdResult<Vec<i64>> {
    let now = ctx.deadline_floor();
    let Some(v) = ctx.get_mut::<T>(key)? else {
        ctx.rewrite_as(Vec::new());
        return Ok(vec![NO_MEMBER; members.len()]);
    };
    let mut codes = Vec::with_capacity(members.len());
    let mut set = Vec::new();
    let mut deleted = Vec::new();
    for m in members {
        let code = expire_one(v, m, at, now, cond);
        match code {
            SET => set.push(Bytes::copy_from_slice(m)),
            DELETED => deleted.push(Bytes::copy_from_slice(m)),
            _ => {}
        }
        codes.push(code);
    }
    report_expire::<T>(ctx, key, at, set, deleted);
    Ok(codes)
}

/// Reports what an EXPIRE-style command changed: the key is modified, the
/// members deleted by a past deadline are logged as `HDEL`/`SREM`/`ZREM`
/// with an `hdel`/`srem`/`zrem` event, the members given a deadline are
/// logged as one absolute `*PEXPIREAT` with an `hexpire`/`sexpire`/`zexpire`
/// event. Nothing is logged when nothing changed.
fn report_expire<T: MemberTtl>(
    ctx: &mut Ctx,
    key: &[u8],
    at: u64,
    set: Vec<Bytes>,
    deleted: Vec<Bytes>,
) {
    let names = &T::NAMES;
    let changes = (set.len() + deleted.len()) as u64;
    if changes == 0 {
        ctx.rewrite_as(Vec::new());
        return;
    }
    ctx.modified(key);
    ctx.fx.dirty += changes - 1;
    let k = Bytes::copy_from_slice(key);
    let mut log = Vec::with_capacity(2);
    if !deleted.is_empty() {
        let mut cmd = Vec::with_capacity(deleted.len() + 2);
        cmd.push(Bytes::from_static(names.remove.as_bytes()));
        cmd.push(k.clone());
        cmd.extend(deleted.iter().cloned());
        log.push(cmd);
        ctx.notify_members(names.class, names.remove_event, key, deleted);
    }
    if !set.is_empty() {
        let mut cmd = Vec::with_capacity(set.len() + 5);
        cmd.push(Bytes::from_static(names.pexpireat.as_bytes()));
        cmd.push(k);
        cmd.push(Bytes::from(at.to_string()));
        cmd.push(Bytes::from_static(names.keyword.as_bytes()));
        cmd.push(Bytes::from(set.len().to_string()));
        cmd.extend(set.iter().cloned());
        log.push(cmd);
        ctx.notify_members(names.class, names.expire_event, key, set);
    }
    ctx.rewrite_as(log);
}

/// Removes the deadline of `members` of `key`, reporting the change; returns
/// one PERSIST-style code per member (`-2`, `-1`, `1`).
pub fn persist_members<T: MemberTtl>(
    ctx: &mut Ctx,
    key: &[u8],
    members: &[&[u8]],
) -> CmdResult<Vec<i64>> {
    let Some(v) = ctx.get_mut::<T>(key)? else {
        return Ok(vec![NO_MEMBER; members.len()]);
    };
    let mut codes = Vec::with_capacity(members.len());
    let mut changed = Vec::new();
    for m in members {
        let code = if !v.has_member(m) {
            NO_MEMBER
        } else if v.clear_member_deadline(m).is_some() {
            changed.push(Bytes::copy_from_slice(m));
            SET
        } else {
            NO_DEADLINE
        };
        codes.push(code);
    }
    if changed.is_empty() {
        ctx.rewrite_as(Vec::new());
    } else {
        let names = &T::NAMES;
        ctx.modified(key);
        ctx.notify_members(names.class, names.persist_event, key, changed);
    }
    Ok(codes)
}

/// The deadline of each member of `key`: `Err(())` for no such member (or
/// no key), `Ok(None)` for a member without deadline.
pub fn member_deadlines<T: MemberTtl>(
    ctx: &mut Ctx,
    key: &[u8],
    members: &[&[u8]],
) -> CmdResult<Vec<Result<Option<u64>, ()>>> {
    Ok(match ctx.get::<T>(key)? {
        None => vec![Err(()); members.len()],
        Some(v) => members
            .iter()
            .map(|m| {
                if v.has_member(m) {
                    Ok(v.deadline_of(m))
                } else {
                    Err(())
                }
            })
            .collect(),
    })
}

/// Seconds from milliseconds, rounded up (HTTL, HEXPIRETIME, FIELDTTL).
pub fn ceil_secs(ms: u64) -> i64 {
    (ms.div_ceil(1000)) as i64
}

/// The name of the command as Redis reports it in errors (lower case).
pub fn command_name(argv: &[&[u8]]) -> String {
    argv.first()
        .map(|n| String::from_utf8_lossy(n).to_ascii_lowercase())
        .unwrap_or_default()
}

/// Parses the time argument of an EXPIRE-style command as Redis 7.4 does
/// and returns the absolute deadline in ms. `secs` says the argument is in
/// seconds; `base` is `now` for relative forms and 0 for absolute ones.
pub fn parse_deadline(argv: &[&[u8]], pos: usize, secs: bool, base: u64) -> CmdResult<u64> {
    let arg = argv.get(pos).ok_or(Error::Syntax)?;
    let t = parse_i64(arg).ok_or(Error::NotInteger)?;
    if t < 0 {
        return Err(Error::msg("ERR invalid expire time, must be >= 0"));
    }
    let mut t = t as u64;
    let invalid = || Error::InvalidExpire(command_name(argv));
    if secs {
        if t > MAX_DEADLINE_MS / 1000 {
            return Err(invalid());
        }
        t *= 1000;
    }
    if base > MAX_DEADLINE_MS || t > MAX_DEADLINE_MS - base {
        return Err(invalid());
    }
    Ok(t + base)
}

/// Reads `KEYWORD n member…` with the keyword at `at - 1` and the count at
/// `at`, requiring exactly `n` members to follow.
fn parse_members<'a>(
    argv: &'a [&'a [u8]],
    at: usize,
    names: &Names,
    bad_count: &'static str,
) -> CmdResult<&'a [&'a [u8]]> {
    match argv.get(at - 1) {
        Some(kw) if kw.eq_ignore_ascii_case(names.keyword.as_bytes()) => {}
        _ => return Err(Error::msg(names.missing_keyword)),
    }
    let n = argv
        .get(at)
        .and_then(|a| parse_i64(a))
        .filter(|n| *n >= 1)
        .ok_or(Error::msg(bad_count))?;
    let given = argv.len() - at - 1;
    if n as u64 != given as u64 {
        return Err(Error::msg(names.count_mismatch));
    }
    Ok(&argv[at + 1..])
}

fn int_array(codes: Vec<i64>) -> Reply {
    Reply::Array(codes.into_iter().map(Reply::Int).collect())
}

/// `xEXPIRE key t [NX|XX|GT|LT] KEYWORD n member…`: relative (`REL`) or
/// absolute, in seconds or milliseconds (`MS`).
fn expire_cmd<T: MemberTtl, const REL: bool, const MS: bool>(
    ctx: &mut Ctx,
    argv: &[&[u8]],
) -> CmdResult<Reply> {
    let key = argv.get(1).ok_or(Error::Syntax)?;
    // Redis checks the type before looking at any argument.
    ctx.check_type::<T>(key)?;
    let base = if REL { ctx.now } else { 0 };
    let at = parse_deadline(argv, 2, !MS, base)?;
    let (cond, block) = match argv.get(3).and_then(|a| Cond::parse(a)) {
        Some(c) => (c, 5),
        None => (Cond::Always, 4),
    };
    let members = parse_members(argv, block, &T::NAMES, T::NAMES.bad_count_expire)?;
    Ok(int_array(expire_members::<T>(ctx, key, at, cond, members)?))
}

/// `xTTL key KEYWORD n member…` and friends: remaining time (`REL`) or
/// absolute deadline, in seconds (rounded up) or milliseconds (`MS`).
fn ttl_cmd<T: MemberTtl, const REL: bool, const MS: bool>(
    ctx: &mut Ctx,
    argv: &[&[u8]],
) -> CmdResult<Reply> {
    let key = argv.get(1).ok_or(Error::Syntax)?;
    ctx.check_type::<T>(key)?;
    let members = parse_members(argv, 3, &T::NAMES, T::NAMES.bad_count_read)?;
    let now = ctx.now;
    let codes = member_deadlines::<T>(ctx, key, members)?
        .into_iter()
        .map(|d| match d {
            Err(()) => NO_MEMBER,
            Ok(None) => NO_DEADLINE,
            Ok(Some(at)) => {
                let v = if REL { at.saturating_sub(now) } else { at };
                if MS {
                    v as i64
                } else {
                    ceil_secs(v)
                }
            }
        })
        .collect();
    Ok(int_array(codes))
}

/// `xPERSIST key KEYWORD n member…`.
fn persist_cmd<T: MemberTtl>(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let key = argv.get(1).ok_or(Error::Syntax)?;
    ctx.check_type::<T>(key)?;
    let members = parse_members(argv, 3, &T::NAMES, T::NAMES.bad_count_read)?;
    Ok(int_array(persist_members::<T>(ctx, key, members)?))
}

/// Declares documented command handlers that forward to a generic one.
macro_rules! handlers {
    ($( $(#[$doc:meta])* $name:ident => $target:expr; )*) => {
        $(
            $(#[$doc])*
            fn $name(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
                $target(ctx, argv)
            }
        )*
    };
}

handlers! {
    /// # Format
    /// `HEXPIRE key seconds [NX|XX|GT|LT] FIELDS numfields field…` → array of
    /// codes per field: -2 no such field, 0 condition not met, 1 set, 2 deleted.
    hexpire => expire_cmd::<HashValue, true, false>;
    /// # Format
    /// `HPEXPIRE key milliseconds [NX|XX|GT|LT] FIELDS numfields field…` → as HEXPIRE.
    hpexpire => expire_cmd::<HashValue, true, true>;
    /// # Format
    /// `HEXPIREAT key unix-seconds [NX|XX|GT|LT] FIELDS numfields field…` → as HEXPIRE.
    hexpireat => expire_cmd::<HashValue, false, false>;
    /// # Format
    /// `HPEXPIREAT key unix-ms [NX|XX|GT|LT] FIELDS numfields field…` → as HEXPIRE.
    hpexpireat => expire_cmd::<HashValue, false, true>;
    /// # Format
    /// `HTTL key FIELDS numfields field…` → per field -2, -1, or seconds left (rounded up).
    httl => ttl_cmd::<HashValue, true, false>;
    /// # Format
    /// `HPTTL key FIELDS numfields field…` → per field -2, -1, or milliseconds left.
    hpttl => ttl_cmd::<HashValue, true, true>;
    /// # Format
    /// `HEXPIRETIME key FIELDS numfields field…` → per field -2, -1, or the Unix deadline in seconds.
    hexpiretime => ttl_cmd::<HashValue, false, false>;
    /// # Format
    /// `HPEXPIRETIME key FIELDS numfields field…` → per field -2, -1, or the Unix deadline in ms.
    hpexpiretime => ttl_cmd::<HashValue, false, true>;
    /// # Format
    /// `HPERSIST key FIELDS numfields field…` → per field -2, -1 (no deadline), or 1 (removed).
    hpersist => persist_cmd::<HashValue>;

    /// # Format
    /// `ZEXPIRE key seconds [NX|XX|GT|LT] MEMBERS nummembers member…` → array of
    /// codes per member: -2 no such member, 0 condition not met, 1 set, 2 deleted.
    zexpire => expire_cmd::<ZSetValue, true, false>;
    /// # Format
    /// `ZPEXPIRE key milliseconds [NX|XX|GT|LT] MEMBERS nummembers member…` → as ZEXPIRE.
    zpexpire => expire_cmd::<ZSetValue, true, true>;
    /// # Format
    /// `ZEXPIREAT key unix-seconds [NX|XX|GT|LT] MEMBERS nummembers member…` → as ZEXPIRE.
    zexpireat => expire_cmd::<ZSetValue, false, false>;
    /// # Format
    /// `ZPEXPIREAT key unix-ms [NX|XX|GT|LT] MEMBERS nummembers member…` → as ZEXPIRE.
    zpexpireat => expire_cmd::<ZSetValue, false, true>;
    /// # Format
    /// `ZTTL key MEMBERS nummembers member…` → per member -2, -1, or seconds left (rounded up).
    zttl => ttl_cmd::<ZSetValue, true, false>;
    /// # Format
    /// `ZPTTL key MEMBERS nummembers member…` → per member -2, -1, or milliseconds left.
    zpttl => ttl_cmd::<ZSetValue, true, true>;
    /// # Format
    /// `ZEXPIRETIME key MEMBERS nummembers member…` → per member -2, -1, or the Unix deadline in seconds.
    zexpiretime => ttl_cmd::<ZSetValue, false, false>;
    /// # Format
    /// `ZPEXPIRETIME key MEMBERS nummembers member…` → per member -2, -1, or the Unix deadline in ms.
    zpexpiretime => ttl_cmd::<ZSetValue, false, true>;
    /// # Format
    /// `ZPERSIST key MEMBERS nummembers member…` → per member -2, -1 (no deadline), or 1 (removed).
    zpersist => persist_cmd::<ZSetValue>;

    /// # Format
    /// `SEXPIRE key seconds [NX|XX|GT|LT] MEMBERS nummembers member…` → array of
    /// codes per member: -2 no such member, 0 condition not met, 1 set, 2 deleted.
    sexpire => expire_cmd::<SetValue, true, false>;
    /// # Format
    /// `SPEXPIRE key milliseconds [NX|XX|GT|LT] MEMBERS nummembers member…` → as SEXPIRE.
    spexpire => expire_cmd::<SetValue, true, true>;
    /// # Format
    /// `SEXPIREAT key unix-seconds [NX|XX|GT|LT] MEMBERS nummembers member…` → as SEXPIRE.
    sexpireat => expire_cmd::<SetValue, false, false>;
    /// # Format
    /// `SPEXPIREAT key unix-ms [NX|XX|GT|LT] MEMBERS nummembers member…` → as SEXPIRE.
    spexpireat => expire_cmd::<SetValue, false, true>;
    /// # Format
    /// `STTL key MEMBERS nummembers member…` → per member -2, -1, or seconds left (rounded up).
    sttl => ttl_cmd::<SetValue, true, false>;
    /// # Format
    /// `SPTTL key MEMBERS nummembers member…` → per member -2, -1, or milliseconds left.
    spttl => ttl_cmd::<SetValue, true, true>;
    /// # Format
    /// `SEXPIRETIME key MEMBERS nummembers member…` → per member -2, -1, or the Unix deadline in seconds.
    sexpiretime => ttl_cmd::<SetValue, false, false>;
    /// # Format
    /// `SPEXPIRETIME key MEMBERS nummembers member…` → per member -2, -1, or the Unix deadline in ms.
    spexpiretime => ttl_cmd::<SetValue, false, true>;
    /// # Format
    /// `SPERSIST key MEMBERS nummembers member…` → per member -2, -1 (no deadline), or 1 (removed).
    spersist => persist_cmd::<SetValue>;
}

const WF: &str = "write denyoom fast";
const RF: &str = "readonly fast";
const PF: &str = "write fast";
const K: (i32, i32, i32) = (1, 1, 1);

/// The member-expiration commands of hashes, sorted sets and sets.
#[rustfmt::skip]
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core("hexpire", -6, WF, K, "hash", "Set expiry for hash field using relative time to expire (seconds)", hexpire),
    CommandSpec::core("hpexpire", -6, WF, K, "hash", "Set expiry for hash field using relative time to expire (milliseconds)", hpexpire),
    CommandSpec::core("hexpireat", -6, WF, K, "hash", "Set expiry for hash field using an absolute Unix timestamp (seconds)", hexpireat),
    CommandSpec::core("hpexpireat", -6, WF, K, "hash", "Set expiry for hash field using an absolute Unix timestamp (milliseconds)", hpexpireat),
    CommandSpec::core("httl", -5, RF, K, "hash", "Returns the TTL in seconds of a hash field.", httl),
    CommandSpec::core("hpttl", -5, RF, K, "hash", "Returns the TTL in milliseconds of a hash field.", hpttl),
    CommandSpec::core("hexpiretime", -5, RF, K, "hash", "Returns the expiration time of a hash field as a Unix timestamp, in seconds.", hexpiretime),
    CommandSpec::core("hpexpiretime", -5, RF, K, "hash", "Returns the expiration time of a hash field as a Unix timestamp, in msec.", hpexpiretime),
    CommandSpec::core("hpersist", -5, PF, K, "hash", "Removes the expiration time for each specified field", hpersist),
    CommandSpec::core("zexpire", -6, WF, K, "sorted-set", "Set expiry for sorted-set members using relative time to expire (seconds)", zexpire),
    CommandSpec::core("zpexpire", -6, WF, K, "sorted-set", "Set expiry for sorted-set members using relative time to expire (milliseconds)", zpexpire),
    CommandSpec::core("zexpireat", -6, WF, K, "sorted-set", "Set expiry for sorted-set members using an absolute Unix timestamp (seconds)", zexpireat),
    CommandSpec::core("zpexpireat", -6, WF, K, "sorted-set", "Set expiry for sorted-set members using an absolute Unix timestamp (milliseconds)", zpexpireat),
    CommandSpec::core("zttl", -5, RF, K, "sorted-set", "Returns the TTL in seconds of sorted-set members.", zttl),
    CommandSpec::core("zpttl", -5, RF, K, "sorted-set", "Returns the TTL in milliseconds of sorted-set members.", zpttl),
    CommandSpec::core("zexpiretime", -5, RF, K, "sorted-set", "Returns the expiration time of sorted-set members as a Unix timestamp, in seconds.", zexpiretime),
    CommandSpec::core("zpexpiretime", -5, RF, K, "sorted-set", "Returns the expiration time of sorted-set members as a Unix timestamp, in msec.", zpexpiretime),
    CommandSpec::core("zpersist", -5, PF, K, "sorted-set", "Removes the expiration time of sorted-set members.", zpersist),
    CommandSpec::core("sexpire", -6, WF, K, "set", "Set expiry for set members using relative time to expire (seconds)", sexpire),
    CommandSpec::core("spexpire", -6, WF, K, "set", "Set expiry for set members using relative time to expire (milliseconds)", spexpire),
    CommandSpec::core("sexpireat", -6, WF, K, "set", "Set expiry for set members using an absolute Unix timestamp (seconds)", sexpireat),
    CommandSpec::core("spexpireat", -6, WF, K, "set", "Set expiry for set members using an absolute Unix timestamp (milliseconds)", spexpireat),
    CommandSpec::core("sttl", -5, RF, K, "set", "Returns the TTL in seconds of set members.", sttl),
    CommandSpec::core("spttl", -5, RF, K, "set", "Returns the TTL in milliseconds of set members.", spttl),
    CommandSpec::core("sexpiretime", -5, RF, K, "set", "Returns the expiration time of set members as a Unix timestamp, in seconds.", sexpiretime),
    CommandSpec::core("spexpiretime", -5, RF, K, "set", "Returns the expiration time of set members as a Unix timestamp, in msec.", spexpiretime),
    CommandSpec::core("spersist", -5, PF, K, "set", "Removes the expiration time of set members.", spersist),
];

#[cfg(test)]
#[path = "member_ttl_tests.rs"]
pub(crate) mod tests;

#[cfg(test)]
#[path = "member_ttl_props.rs"]
mod props;
