//! DUMP and RESTORE. A payload is ebb's own: the commands that rebuild the
//! value (as AOF rewrite writes them, member deadlines included, absolute)
//! for an empty key name, length-prefixed, after a magic and followed by a
//! checksum. It moves values between ebb servers (and back in after a
//! FLUSHALL), not between ebb and Redis, whose payloads are RDB encodings.
//! The checksum only catches damage: a payload is untrusted input, so
//! RESTORE runs nothing but the value-building commands DUMP writes, on
//! the payload's own key, in a scratch keyspace.

use bytes::Bytes;

use crate::args::parse_i64;
use crate::ctx::Ctx;
use crate::db::{Entry, Store};
use crate::effects::Effects;
use crate::error::{CmdResult, Error};
use crate::lfu::{Lfu, LFU_INIT};
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::Value;

#[rustfmt::skip]
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core("dump", 2, "readonly", (1, 1, 1), "generic", "Returns a serialized representation of the value stored at a key.", dump),
    CommandSpec::core("restore", -4, "write denyoom", (1, 1, 1), "generic", "Creates a key from the serialized representation of a value.", restore),
];

/// First bytes of every payload; the digit is the format version.
const MAGIC: &[u8] = b"EBBDUMP1";

fn put_len(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn get_len(data: &[u8], i: &mut usize) -> Option<usize> {
    let mut n: usize = 0;
    for shift in (0..64).step_by(7) {
        let b = *data.get(*i)?;
        *i += 1;
        n |= ((b & 0x7f) as usize).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(n);
        }
    }
    None
}

/// The payload of a value at time `now`.
pub fn payload(value: &Value, now: u64) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    crate::dump::value_commands(&Bytes::new(), value, now, &mut |cmd| {
        put_len(&mut out, cmd.len());
        for a in &cmd {
            put_len(&mut out, a.len());
            out.extend_from_slice(a);
        }
    });
    let sum = crate::dump::checksum(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// What DUMP answers for `value` at `now`: Redis's payload when Redis can
/// hold the value (no member deadline), so that Redis RESTOREs it; else
/// ebb's own.
pub fn dump_payload(value: &Value, now: u64) -> Vec<u8> {
    crate::rdb::redis_payload(value, now).unwrap_or_else(|| payload(value, now))
}

/// The value a payload holds, rebuilt at `now` with default settings
/// (members whose deadline passed by `now` are left out); `None` if the
/// payload is damaged or not ebb's. The Redis module loads its snapshots
/// this way.
pub fn value_of_payload(data: &[u8], now: u64) -> Option<Value> {
    match rebuild(&Store::new(1), commands_of(body(data)?), now)? {
        Rebuilt::Value(v) => Some(v),
        Rebuilt::AllExpired => None,
    }
}

/// What a payload's commands built.
enum Rebuilt {
    Value(Value),
    /// Every member's deadline had passed: nothing is left.
    AllExpired,
}

/// A payload's command stream, if its magic and checksum hold.
fn body(data: &[u8]) -> Option<&[u8]> {
    let body_len = data.len().checked_sub(8)?;
    let (body, sum) = data.split_at(body_len);
    (body.starts_with(MAGIC)
        && (!crate::rdb::checksums_checked() || crate::dump::checksum(body).to_le_bytes() == sum))
        .then(|| &body[MAGIC.len()..])
}

/// The next command of a command stream, at `*i`.
fn next_command(body: &[u8], i: &mut usize) -> Option<Vec<Bytes>> {
    let argc = get_len(body, i)?;
    // Every argument takes a byte at least: a count past what is left is
    // damage, not a reason to reserve room.
    if argc < 2 || argc > body.len() - *i {
        return None;
    }
    let mut cmd = Vec::with_capacity(argc);
    for _ in 0..argc {
        let n = get_len(body, i)?;
        let end = i.checked_add(n)?;
        cmd.push(Bytes::copy_from_slice(body.get(*i..end)?));
        *i = end;
    }
    Some(cmd)
}

/// The commands a payload may hold: those [`crate::dump::value_commands`]
/// writes, on the payload's own (empty) key name.
const REBUILD: &[&str] = &[
    "set",
    "rpush",
    "sadd",
    "zadd",
    "hset",
    "spexpireat",
    "zpexpireat",
    "hpexpireat",
];

/// The commands of an ebb payload's stream, one at a time (None where
/// the stream is damaged).
fn commands_of(body: &[u8]) -> impl Iterator<Item = Option<Vec<Bytes>>> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || (i < body.len()).then(|| next_command(body, &mut i)))
}

/// A scratch keyspace with the live one's settings, where a payload's
/// commands build its value on the empty key name.
struct Scratch {
    tmp: Store,
    fx: Effects,
    now: u64,
    ran: bool,
    failed: bool,
}

impl Scratch {
    fn new(store: &Store, now: u64) -> Self {
        let mut tmp = Store::new(1);
        tmp.cfg = store.cfg.clone();
        // While a log loads, member deadlines that passed are kept, as
        // they are for the log's own commands (see `Ctx::deadline_floor`).
        tmp.loading = store.loading;
        Scratch {
            tmp,
            fx: Effects::default(),
            now,
            ran: false,
            failed: false,
        }
    }

    /// Runs one value-building command (after a failure, none).
    fn run(&mut self, cmd: &[&[u8]]) {
        if self.failed {
            return;
        }
        self.ran = true;
        let ok = crate::table::lookup(cmd[0]).is_some_and(|spec| {
            if !REBUILD.contains(&spec.name) || !cmd[1].is_empty() || !spec.arity_ok(cmd.len()) {
                return false;
            }
            let mut ctx = Ctx::new(&mut self.tmp, 0, self.now, &mut self.fx);
            let r = crate::cmd::execute_result(&mut ctx, spec, cmd);
            self.fx.clear();
            r.is_ok()
        });
        self.failed |= !ok;
    }

    fn finish(mut self) -> Option<Rebuilt> {
        if self.failed {
            return None;
        }
        match self.tmp.dbs[0].remove(b"") {
            Some(e) => Some(Rebuilt::Value(e.value)),
            None if self.ran => Some(Rebuilt::AllExpired),
            None => None,
        }
    }
}

/// Rebuilds the value of an ebb payload's commands in a scratch keyspace
/// with the same settings; one command at a time, so nothing is held but
/// the value being built.
fn rebuild(
    store: &Store,
    cmds: impl Iterator<Item = Option<Vec<Bytes>>>,
    now: u64,
) -> Option<Rebuilt> {
    let mut s = Scratch::new(store, now);
    for cmd in cmds {
        s.run(&crate::args::views(&cmd?));
    }
    s.finish()
}

/// [`rebuild`] for a Redis DUMP payload.
fn rebuild_redis(
    store: &Store,
    data: &[u8],
    now: u64,
) -> Result<Option<Rebuilt>, crate::rdb::PayloadError> {
    let mut s = Scratch::new(store, now);
    crate::rdb::payload_commands(data, b"", &mut |cmd| s.run(cmd))?;
    Ok(s.finish())
}

/// # Format
/// `DUMP key` → the key's value serialized (ebb's own format), or nil.
fn dump(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let key = &argv[1];
    if !ctx.read_hit(key) {
        return Ok(Reply::Nil);
    }
    let now = ctx.now;
    Ok(match ctx.store.dbs[ctx.db].peek(key) {
        Some(e) => Reply::Bulk(Bytes::from(dump_payload(&e.value, now))),
        None => Reply::Nil,
    })
}

/// # Format
/// `RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds]
/// [FREQ frequency]` → OK. `ttl` is milliseconds from now (a Unix time in
/// milliseconds with ABSTTL; 0 for none). FREQ sets the access counter
/// under an `-lfu` eviction policy, IDLETIME the access time otherwise.
pub(crate) fn restore(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let key = &argv[1];
    let (mut replace, mut absttl) = (false, false);
    let mut idle: Option<i64> = None;
    let mut freq: Option<i64> = None;
    let mut j = 4;
    while j < argv.len() {
        let a = &argv[j];
        let more = argv.len() - j - 1;
        if a.eq_ignore_ascii_case(b"replace") {
            replace = true;
        } else if a.eq_ignore_ascii_case(b"absttl") {
            absttl = true;
        } else if a.eq_ignore_ascii_case(b"idletime") && more >= 1 && freq.is_none() {
            let v = parse_i64(argv[j + 1]).ok_or(Error::NotInteger)?;
            if v < 0 {
                return Err(Error::msg("ERR Invalid IDLETIME value, must be >= 0"));
            }
            idle = Some(v);
            j += 1;
        } else if a.eq_ignore_ascii_case(b"freq") && more >= 1 && idle.is_none() {
            let v = parse_i64(argv[j + 1]).ok_or(Error::NotInteger)?;
            if !(0..=255).contains(&v) {
                return Err(Error::msg(
                    "ERR Invalid FREQ value, must be >= 0 and <= 255",
                ));
            }
            freq = Some(v);
            j += 1;
        } else {
            return Err(Error::Syntax);
        }
        j += 1;
    }
    if !replace && ctx.exists(key) {
        return Err(Error::msg("BUSYKEY Target key name already exists."));
    }
    let ttl = parse_i64(argv[2]).ok_or(Error::NotInteger)?;
    if ttl < 0 {
        return Err(Error::msg("ERR Invalid TTL value, must be >= 0"));
    }
    let now = ctx.now;
    let bad_format = || Error::msg("ERR Bad data format");
    // A reason left by an earlier refusal is not this one's.
    crate::rdb::take_refusal();
    let rebuilt = match body(argv[3]) {
        Some(body) => rebuild(ctx.store, commands_of(body), now),
        // Not ebb's: a payload of Redis's DUMP, if its footer checks; its
        // commands run as they are decoded.
        None => match rebuild_redis(ctx.store, argv[3], now) {
            Ok(r) => r,
            Err(crate::rdb::PayloadError::VersionOrChecksum) => {
                return Err(Error::msg("ERR DUMP payload version or checksum are wrong"))
            }
            Err(crate::rdb::PayloadError::BadFormat(why)) => {
                crate::rdb::note_refusal(why);
                return Err(bad_format());
            }
        },
    };
    let Some(rebuilt) = rebuilt else {
        return Err(bad_format());
    };
    let deleted = replace && ctx.delete(key);
    let at = match ttl {
        0 => None,
        t if absttl => Some(t as u64),
        // Past the largest time, Redis's sum wraps to a time long gone:
        // the key counts as expired.
        t => Some((now as i64).checked_add(t).map_or(0, |at| at as u64)),
    };
    // A key whose TTL has passed (unless a log is loading), or whose
    // members have all expired, is not created.
    let live = at.is_none_or(|t| t > now) || ctx.store.loading;
    let value = match rebuilt {
        Rebuilt::Value(v) if live => Some(v),
        _ => None,
    };
    let Some(value) = value else {
        // Already expired: only the old key goes.
        if deleted {
            ctx.modified(key);
            ctx.notify(b'g', "del", key);
            ctx.rewrite_as(vec![vec![
                Bytes::from_static(b"DEL"),
                Bytes::copy_from_slice(key),
            ]]);
        } else {
            ctx.rewrite_as(Vec::new());
        }
        return Ok(Reply::Ok);
    };
    let mut entry = Entry::new(value);
    let lfu = ctx.store.cfg.lfu;
    // As Redis: FREQ under an -lfu policy, IDLETIME otherwise.
    match (lfu.on, freq, idle) {
        (true, Some(f), _) => entry.last_access = Lfu::pack(now, f as u8),
        (true, None, _) => entry.last_access = Lfu::pack(now, LFU_INIT),
        // Redis's access clock counts seconds in 24 bits: an idle time
        // past it wraps.
        (false, _, Some(s)) => {
            entry.last_access = now.saturating_sub((s as u64 % (1 << 24)) * 1000)
        }
        (false, _, None) => entry.last_access = now,
    }
    let blockable = matches!(entry.value, Value::List(_) | Value::ZSet(_));
    ctx.store.dbs[ctx.db].insert_entry(key, entry);
    ctx.store.dbs[ctx.db].set_expire(key, at);
    if blockable {
        ctx.fx.ready.push((ctx.db, Bytes::copy_from_slice(key)));
    }
    ctx.modified(key);
    ctx.notify(b'g', "restore", key);
    if let Some(t) = at.filter(|_| !absttl) {
        // Logged with an absolute deadline, so a replay restores the same.
        let mut logged = crate::args::to_owned(argv);
        logged[2] = Bytes::from(t.to_string());
        logged.push(Bytes::from_static(b"ABSTTL"));
        ctx.rewrite_as(vec![logged]);
    }
    Ok(Reply::Ok)
}
