//! The keys family: commands on whole keys and databases. DEL, UNLINK,
//! EXISTS, TYPE, TOUCH, RENAME, RENAMENX, COPY, MOVE, RANDOMKEY, KEYS,
//! SCAN, DBSIZE, FLUSHDB, FLUSHALL, SWAPDB. Key TTLs are in
//! `keys_expire.rs`, OBJECT and MEMORY in `keys_object.rs`, SORT in
//! `sort.rs`.
//!
//! Moving a key (RENAME, MOVE) moves its whole [`Entry`]: the value keeps
//! every member deadline and the entry keeps its key TTL; COPY clones the
//! entry. [`Db::insert_entry`] and [`Db::remove`] keep the key-TTL and
//! member-deadline indexes right.

use bytes::Bytes;

use crate::args::{parse_i64, Args};
use crate::ctx::Ctx;
use crate::db::Entry;
use crate::error::{CmdResult, Error};
use crate::glob::glob_match;
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::Value;

/// The keys family's commands.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core("del", -2, "write", (1, -1, 1), "generic", "Deletes one or more keys.", del),
    CommandSpec::core("unlink", -2, "write fast", (1, -1, 1), "generic", "Asynchronously deletes one or more keys.", unlink),
    CommandSpec::core("exists", -2, "readonly fast", (1, -1, 1), "generic", "Determines whether one or more keys exist.", exists),
    CommandSpec::core("type", 2, "readonly fast", (1, 1, 1), "generic", "Determines the type of value stored at a key.", type_cmd),
    CommandSpec::core("touch", -2, "readonly fast", (1, -1, 1), "generic", "Returns the number of existing keys out of those specified after updating the time they were last accessed.", touch),
    CommandSpec::core("rename", 3, "write", (1, 2, 1), "generic", "Renames a key and overwrites the destination.", rename),
    CommandSpec::core("renamenx", 3, "write fast", (1, 2, 1), "generic", "Renames a key only when the target key name doesn't exist.", renamenx),
    CommandSpec::core("copy", -3, "write denyoom", (1, 2, 1), "generic", "Copies the value of a key to a new key.", copy),
    CommandSpec::core("move", 3, "write fast", (1, 1, 1), "generic", "Moves a key to another database.", move_cmd),
    CommandSpec::core("randomkey", 1, "readonly", (0, 0, 0), "generic", "Returns a random key name from the database.", randomkey),
    CommandSpec::core("keys", 2, "readonly", (0, 0, 0), "generic", "Returns all key names that match a pattern.", keys),
    CommandSpec::core("scan", -2, "readonly", (0, 0, 0), "generic", "Iterates over the key names in the database.", scan),
    CommandSpec::core("dbsize", 1, "readonly fast", (0, 0, 0), "server", "Returns the number of keys in the database.", dbsize),
    CommandSpec::core("flushdb", -1, "write", (0, 0, 0), "server", "Remove all keys from the current database.", flushdb),
    CommandSpec::core("flushall", -1, "write", (0, 0, 0), "server", "Removes all keys from all databases.", flushall),
    CommandSpec::core("swapdb", 3, "write fast", (0, 0, 0), "server", "Swaps two Redis databases.", swapdb),
];

/// Records that `key` in database `db` changed, for WATCH (no dirty count).
pub(crate) fn touched_in(ctx: &mut Ctx, db: usize, key: &[u8]) {
    ctx.fx.touched.push((db, Bytes::copy_from_slice(key)));
}

/// Parses a database index the way Redis's `getIntFromObjectOrReply` +
/// `selectDb` do: not an integer, outside a C int, or not a database.
pub fn parse_db_index(arg: &[u8], dbs: usize) -> CmdResult<usize> {
    let v = parse_i64(arg).ok_or(Error::NotInteger)?;
    if v < i32::MIN as i64 || v > i32::MAX as i64 {
        return Err(Error::msg(
            "ERR value is out of range, value must between -2147483648 and 2147483647",
        ));
    }
    if v < 0 || v as usize >= dbs {
        return Err(Error::DbIndexOutOfRange);
    }
    Ok(v as usize)
}

fn same_object() -> Error {
    Error::msg("ERR source and destination objects are the same")
}

/// # Format
/// `DEL key [key ...]` → the number of keys that existed and were removed.
fn del(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    delete_keys(ctx, &argv[1..])
}

/// # Format
/// `UNLINK key [key ...]` → the number of keys removed (as DEL); a value
/// of more than 64 members is freed off the hot path.
fn unlink(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    delete_keys_with(ctx, &argv[1..], true)
}

fn delete_keys(ctx: &mut Ctx, keys: &[&[u8]]) -> CmdResult<Reply> {
    delete_keys_with(ctx, keys, false)
}

/// DEL, or UNLINK (`lazy`: big values freed off the hot path).
fn delete_keys_with(ctx: &mut Ctx, keys: &[&[u8]], lazy: bool) -> CmdResult<Reply> {
    let mut n = 0;
    for key in keys {
        let removed = if lazy {
            ctx.unlink(key)
        } else {
            ctx.delete(key)
        };
        if removed {
            ctx.modified(key);
            ctx.notify(b'g', "del", key);
            n += 1;
        }
    }
    Ok(Reply::Int(n))
}

/// # Format
/// `EXISTS key [key ...]` → how many of the keys exist (a key named twice
/// counts twice).
fn exists(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    // Looking at a key's existence is not an access (OBJECT IDLETIME).
    ctx.no_touch = true;
    Ok(Reply::Int(
        argv[1..].iter().filter(|k| ctx.read_hit(k)).count() as i64,
    ))
}

/// # Format
/// `TOUCH key [key ...]` → how many of the keys exist.
fn touch(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Int(
        argv[1..].iter().filter(|k| ctx.read_hit(k)).count() as i64,
    ))
}

/// # Format
/// `TYPE key` → status `string`, `list`, `set`, `zset`, `hash`, or `none`.
fn type_cmd(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    ctx.no_touch = true;
    let name = ctx.value(argv[1]).map(Value::type_name).unwrap_or("none");
    Ok(Reply::simple(name))
}

/// # Format
/// `RENAME key newkey` → OK; `ERR no such key` if `key` does not exist.
/// An existing `newkey` is overwritten. TTL and member deadlines move along.
fn rename(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    rename_generic(ctx, argv[1], argv[2], false)
}

/// # Format
/// `RENAMENX key newkey` → 1 if renamed, 0 if `newkey` already exists;
/// `ERR no such key` if `key` does not exist.
fn renamenx(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    rename_generic(ctx, argv[1], argv[2], true)
}

fn rename_generic(ctx: &mut Ctx, src: &[u8], dst: &[u8], nx: bool) -> CmdResult<Reply> {
    let done = if nx { Reply::Int(1) } else { Reply::Ok };
    if !ctx.exists(src) {
        return Err(Error::NoSuchKey);
    }
    if src == dst {
        return Ok(if nx { Reply::Int(0) } else { Reply::Ok });
    }
    if ctx.exists(dst) && nx {
        return Ok(Reply::Int(0));
    }
    let db = ctx.db;
    let entry = ctx.store.dbs[db].remove(src).ok_or(Error::NoSuchKey)?;
    place(ctx, db, dst, entry);
    touched_in(ctx, db, src);
    touched_in(ctx, db, dst);
    ctx.fx.dirty += 1;
    ctx.notify(b'g', "rename_from", src);
    ctx.notify(b'g', "rename_to", dst);
    Ok(done)
}

/// Stores `entry` (value, TTL, member deadlines) under `key` in `db`,
/// replacing what was there, and wakes blocked clients if needed.
fn place(ctx: &mut Ctx, db: usize, key: &[u8], entry: Entry) {
    if ctx.fx.new_keys {
        // The key is added afresh, whatever it replaced (Redis's `new`
        // comes before the command's own events).
        ctx.fx.event(b'n', "new", db, Bytes::copy_from_slice(key));
    }
    let blockable = matches!(entry.value, Value::List(_) | Value::ZSet(_));
    ctx.store.dbs[db].insert_entry(key, entry);
    if blockable {
        ctx.fx.ready.push((db, Bytes::copy_from_slice(key)));
    }
}

/// # Format
/// `COPY source destination [DB destination-db] [REPLACE]` → 1 if copied,
/// 0 if `source` does not exist or `destination` exists (without REPLACE).
/// The copy keeps the TTL and every member deadline.
fn copy(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let src = a.bytes()?;
    let dst = a.bytes()?;
    let mut replace = false;
    let mut dst_db = ctx.db;
    while let Some(opt) = a.next() {
        if opt.eq_ignore_ascii_case(b"replace") {
            replace = true;
        } else if opt.eq_ignore_ascii_case(b"db") && a.remaining() >= 1 {
            dst_db = parse_db_index(a.bytes()?, ctx.store.dbs.len())?;
        } else {
            return Err(Error::Syntax);
        }
    }
    let src_db = ctx.db;
    if src_db == dst_db && src == dst {
        return Err(same_object());
    }
    if !ctx.read_hit(src) {
        return Ok(Reply::Int(0));
    }
    let Some(mut entry) = ctx.store.dbs[src_db].peek(src).cloned() else {
        return Ok(Reply::Int(0));
    };
    // The copy is a new object, as in Redis: accessed now, and under an
    // `-lfu` policy with a new key's counter, not the source's.
    entry.last_access = ctx.store.cfg.lfu.fresh(ctx.now);
    if ctx.expire_key_in(dst_db, dst) && !replace {
        return Ok(Reply::Int(0));
    }
    place(ctx, dst_db, dst, entry);
    touched_in(ctx, dst_db, dst);
    ctx.fx.dirty += 1;
    ctx.fx
        .event(b'g', "copy_to", dst_db, Bytes::copy_from_slice(dst));
    Ok(Reply::Int(1))
}

/// # Format
/// `MOVE key db` → 1 if moved, 0 if `key` does not exist here or already
/// exists in `db`. TTL and member deadlines move along.
fn move_cmd(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let key = &argv[1];
    let dst = parse_db_index(argv[2], ctx.store.dbs.len())?;
    let src = ctx.db;
    if src == dst {
        return Err(same_object());
    }
    if !ctx.exists(key) || ctx.expire_key_in(dst, key) {
        return Ok(Reply::Int(0));
    }
    let Some(entry) = ctx.store.dbs[src].remove(key) else {
        return Ok(Reply::Int(0));
    };
    place(ctx, dst, key, entry);
    touched_in(ctx, src, key);
    touched_in(ctx, dst, key);
    ctx.fx.dirty += 1;
    ctx.fx
        .event(b'g', "move_from", src, Bytes::copy_from_slice(key));
    ctx.fx
        .event(b'g', "move_to", dst, Bytes::copy_from_slice(key));
    Ok(Reply::Int(1))
}

/// # Format
/// `RANDOMKEY` → a random live key, or nil when the database is empty.
fn randomkey(ctx: &mut Ctx, _argv: &[&[u8]]) -> CmdResult<Reply> {
    let db = ctx.db;
    // Every miss deletes the expired key it drew, so this ends, except
    // during CLIENT PAUSE, when expired keys stay: then, after 100 misses,
    // the first live key in table order.
    let mut tries = 0;
    while let Some(k) = ctx.store.dbs[db].random_key() {
        if ctx.expire_key(&k) {
            return Ok(Reply::Bulk(k));
        }
        tries += 1;
        if tries >= 100 && ctx.store.expiry_paused(ctx.now) {
            let now = ctx.now;
            let live = ctx.store.dbs[db]
                .raw_iter()
                .find(|(_, e)| !matches!(e.expire_at(), Some(t) if t <= now))
                .map(|(k, _)| Bytes::copy_from_slice(k));
            return Ok(live.map_or(Reply::Nil, Reply::Bulk));
        }
    }
    Ok(Reply::Nil)
}

/// Whether the entry may be (partly) expired at `now` and needs the lazy
/// expiry pass before it is reported.
fn needs_expiry(e: &Entry, now: u64) -> bool {
    matches!(e.expire_at(), Some(t) if t <= now)
        || matches!(e.value.earliest_deadline(), Some(t) if t <= now)
}

/// # Format
/// `KEYS pattern` → every live key matching the glob `pattern`, in no
/// particular order.
fn keys(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let pattern = argv[1];
    let all = pattern == b"*";
    let now = ctx.now;
    let db = ctx.db;
    let mut live = Vec::new();
    let mut check = Vec::new();
    for (k, e) in ctx.store.dbs[db].raw_iter() {
        if all || glob_match(pattern, k, false) {
            if matches!(e.expire_at(), Some(t) if t <= now) {
                // A key past its TTL is left out but not deleted here, as
                // Redis's KEYS leaves it (its expiry comes on access or
                // from the active cycle).
                continue;
            }
            if needs_expiry(e, now) {
                check.push(Bytes::copy_from_slice(k));
            } else {
                live.push(Bytes::copy_from_slice(k));
            }
        }
    }
    for k in check {
        if ctx.expire_key(&k) {
            live.push(k);
        }
    }
    Ok(Reply::bulks(live))
}

/// Parses a SCAN cursor as Redis does with `strtoul`: decimal, optional
/// sign (a negative value wraps), no leading space, nothing after the
/// digits, no overflow; the empty string reads as 0.
pub fn parse_cursor(s: &[u8]) -> CmdResult<u64> {
    let invalid = || Error::msg("ERR invalid cursor");
    // Read as a C string, as Redis reads it: a NUL ends it.
    let s = crate::args::c_str(s);
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        // "" converts nothing and ends at the terminator; "-" or "+" alone
        // leave the sign unconsumed.
        return if s.is_empty() { Ok(0) } else { Err(invalid()) };
    }
    if !digits.iter().all(u8::is_ascii_digit) {
        return Err(invalid());
    }
    let mut v: u64 = 0;
    for &c in digits {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add((c - b'0') as u64))
            .ok_or_else(invalid)?;
    }
    Ok(if neg { v.wrapping_neg() } else { v })
}

/// SCAN options shared with the *SCAN family: COUNT and MATCH (and TYPE
/// for SCAN itself).
pub struct ScanOptions {
    /// How many entries to examine (default 10).
    pub count: usize,
    /// The MATCH pattern, unless it is absent or exactly `*`.
    pub pattern: Option<Bytes>,
    /// The TYPE filter (SCAN only).
    pub type_name: Option<Bytes>,
}

/// Parses `[MATCH pattern] [COUNT count] [TYPE type]` (TYPE only when
/// `with_type`) with Redis's errors: a COUNT that is not an integer, a
/// COUNT below 1 (syntax error), an unknown or incomplete option.
pub fn parse_scan_options(rest: &[&[u8]], with_type: bool) -> CmdResult<ScanOptions> {
    let mut o = ScanOptions {
        count: 10,
        pattern: None,
        type_name: None,
    };
    let mut i = 0;
    while i < rest.len() {
        let opt = &rest[i];
        let has_value = rest.len() - i >= 2;
        if opt.eq_ignore_ascii_case(b"count") && has_value {
            let n = parse_i64(rest[i + 1]).ok_or(Error::NotInteger)?;
            if n < 1 {
                return Err(Error::Syntax);
            }
            o.count = usize::try_from(n).unwrap_or(usize::MAX);
        } else if opt.eq_ignore_ascii_case(b"match") && has_value {
            let p = &rest[i + 1];
            o.pattern = if &p[..] == b"*" {
                None
            } else {
                Some(Bytes::copy_from_slice(p))
            };
        } else if with_type && opt.eq_ignore_ascii_case(b"type") && has_value {
            o.type_name = Some(Bytes::copy_from_slice(rest[i + 1]));
        } else {
            return Err(Error::Syntax);
        }
        i += 2;
    }
    Ok(o)
}

/// # Format
/// `SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]` → a two-element
/// array: the next cursor (a bulk string, `"0"` when the iteration is
/// complete) and the keys found in this step.
///
/// The cursor is a position in the database's key table: an iteration
/// walks it from the top position down to 0 (cursor 0 starts at the top),
/// examining COUNT positions per call, then filtering the keys found by
/// MATCH, TYPE and expiry, so a step may return fewer keys than COUNT, or
/// none, before the iteration is over. Removing a key moves the table's
/// last key into its position and new keys are appended at the top, which
/// gives Redis's guarantees:
/// - a key present for the whole iteration is returned, possibly twice
///   (when a removal moves it from the visited top into an unvisited
///   position);
/// - keys added during the iteration may or may not be returned;
/// - the iteration always ends, each call costs O(COUNT);
/// - a cursor above 2^63 (what a negative number parses to) ends at once.
fn scan(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let cursor = parse_cursor(argv[1])?;
    let opts = parse_scan_options(&argv[2..], true)?;
    let db = ctx.db;
    let len = ctx.store.dbs[db].len();
    if cursor > i64::MAX as u64 {
        // Beyond any position (a negative number, as Redis parses it): the
        // iteration is over.
        return Ok(Reply::Array(vec![Reply::text("0"), Reply::Array(vec![])]));
    }
    let top = match usize::try_from(cursor) {
        Ok(0) | Err(_) => len,
        Ok(c) => c.min(len),
    };
    let bottom = top.saturating_sub(opts.count);
    let batch: Vec<Bytes> = (bottom..top)
        .rev()
        .filter_map(|i| ctx.store.dbs[db].key_at(i).map(Bytes::copy_from_slice))
        .collect();
    let mut out = Vec::with_capacity(batch.len());
    for k in &batch {
        if let Some(p) = &opts.pattern {
            if !glob_match(p, k, false) {
                continue;
            }
        }
        if !ctx.exists(k) {
            continue;
        }
        if let Some(t) = &opts.type_name {
            let name = ctx.value(k).map(Value::type_name).unwrap_or("none");
            if !t.eq_ignore_ascii_case(name.as_bytes()) {
                continue;
            }
        }
        out.push(k.clone());
    }
    Ok(Reply::Array(vec![
        Reply::text(bottom.to_string()),
        Reply::bulks(out),
    ]))
}

/// # Format
/// `DBSIZE` → the number of keys in the selected database (keys whose TTL
/// passed count until they are reclaimed, as in Redis).
fn dbsize(ctx: &mut Ctx, _argv: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Int(ctx.db().len() as i64))
}

/// Parses the optional `ASYNC|SYNC` of FLUSHDB/FLUSHALL: whether to free
/// the keys off the hot path (ASYNC) rather than in place.
fn parse_flush_mode(argv: &[&[u8]]) -> CmdResult<bool> {
    match argv.len() {
        1 => Ok(false),
        2 if argv[1].eq_ignore_ascii_case(b"sync") => Ok(false),
        2 if argv[1].eq_ignore_ascii_case(b"async") => Ok(true),
        _ => Err(Error::Syntax),
    }
}

fn flush_db(ctx: &mut Ctx, db: usize, lazy: bool) -> u64 {
    let n = ctx.store.dbs[db].len() as u64;
    let old = std::mem::take(&mut ctx.store.dbs[db]);
    if lazy && n > 0 {
        ctx.fx.garbage_dbs.push(old);
    }
    ctx.fx.touched_dbs.push(db);
    n
}

/// # Format
/// `FLUSHDB [ASYNC|SYNC]` → OK, after removing every key of the selected
/// database.
fn flushdb(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let lazy = parse_flush_mode(argv)?;
    let n = flush_db(ctx, ctx.db, lazy);
    // Always counted as a change, so an empty flush is still logged.
    ctx.fx.dirty += n + 1;
    Ok(Reply::Ok)
}

/// # Format
/// `FLUSHALL [ASYNC|SYNC]` → OK, after removing every key of every database.
fn flushall(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let lazy = parse_flush_mode(argv)?;
    let mut n = 0;
    for db in 0..ctx.store.dbs.len() {
        n += flush_db(ctx, db, lazy);
    }
    ctx.fx.dirty += n + 1;
    ctx.fx.flushed_all = true;
    Ok(Reply::Ok)
}

/// Parses a SWAPDB index: any integer failure replies `msg`.
fn parse_swap_index(arg: &[u8], msg: &'static str) -> CmdResult<i64> {
    match parse_i64(arg) {
        Some(v) if v >= i32::MIN as i64 && v <= i32::MAX as i64 => Ok(v),
        _ => Err(Error::msg(msg)),
    }
}

/// # Format
/// `SWAPDB index1 index2` → OK. Clients see the other database's keys at
/// once; every TTL and member deadline goes with its database. The server
/// must re-check clients blocked on keys of both databases.
fn swapdb(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let a = parse_swap_index(argv[1], "ERR invalid first DB index")?;
    let b = parse_swap_index(argv[2], "ERR invalid second DB index")?;
    let n = ctx.store.dbs.len() as i64;
    if a < 0 || a >= n || b < 0 || b >= n {
        return Err(Error::DbIndexOutOfRange);
    }
    let (a, b) = (a as usize, b as usize);
    if a != b {
        ctx.store.dbs.swap(a, b);
        ctx.fx.touched_dbs.push(a);
        ctx.fx.touched_dbs.push(b);
        ctx.fx.swapped = true;
    }
    ctx.fx.dirty += 1;
    Ok(Reply::Ok)
}

#[cfg(test)]
#[path = "keys_tests.rs"]
pub(crate) mod tests;
