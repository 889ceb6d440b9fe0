//! Introspection of one key: OBJECT (ENCODING, FREQ, REFCOUNT, HELP) and
//! MEMORY (USAGE, PURGE, MALLOC-STATS, HELP).
//!
//! ebb has its own value representations, so OBJECT ENCODING reports the
//! encoding Redis 7.0 would use for a value of the same contents under the
//! same `*-max-*` thresholds ([`encoding_name`]). Redis never converts a
//! collection back to its compact encoding once it outgrew it; ebb judges
//! by the current contents only.
//!
//! MEMORY USAGE is an estimate of what ebb itself spends on the key
//! ([`memory_usage`]): the key, its slot in the keyspace and index entries,
//! and the value's tables, members and member deadlines, modelled on the
//! allocator's size classes. Members whose deadline passed are purged
//! before measuring, so only live members count.

use bytes::Bytes;
use std::mem::size_of;

use crate::args::parse_i64;
use crate::ctx::Ctx;
use crate::db::{CoreConfig, Entry};
use crate::error::{unknown_subcommand, CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::member::{Member, INLINE};
use crate::value::strval::{Written, LARGE};
use crate::value::{HashValue, SetValue, Value, ZSetValue};

/// OBJECT and MEMORY.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core(
        "object",
        -2,
        "",
        (0, 0, 0),
        "generic",
        "A container for object introspection commands.",
        object,
    )
    .with_keys(object_keys),
    CommandSpec::core(
        "memory",
        -2,
        "",
        (0, 0, 0),
        "server",
        "A container for memory diagnostics commands.",
        memory,
    )
    .with_keys(memory_keys),
];

/// Key position of OBJECT's per-key subcommands.
fn object_keys(argv: &[&[u8]]) -> Vec<usize> {
    let per_key = ["encoding", "freq", "idletime", "refcount"];
    match argv.get(1) {
        Some(s)
            if argv.len() >= 3 && per_key.iter().any(|k| s.eq_ignore_ascii_case(k.as_bytes())) =>
        {
            vec![2]
        }
        _ => Vec::new(),
    }
}

/// Key position of MEMORY USAGE.
fn memory_keys(argv: &[&[u8]]) -> Vec<usize> {
    match argv.get(1) {
        Some(s) if argv.len() >= 3 && s.eq_ignore_ascii_case(b"usage") => vec![2],
        _ => Vec::new(),
    }
}

/// The live entry of `key`, read as OBJECT and MEMORY USAGE read it: a
/// read hit or miss, but no `keymiss` event (as Redis's).
fn entry_without_keymiss<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Option<&'c crate::db::Entry> {
    let keymiss = std::mem::take(&mut ctx.fx.keymiss);
    let found = ctx.read_hit(key);
    ctx.fx.keymiss = keymiss;
    let db = ctx.db;
    ctx.store.dbs[db].peek(key).filter(|_| found)
}

/// Checks a subcommand's arity (Redis counts the container name too).
fn arity(argv: &[&[u8]], arity: i32, full: &str) -> CmdResult<()> {
    let n = argv.len() as i32;
    let ok = if arity >= 0 { n == arity } else { n >= -arity };
    if ok {
        Ok(())
    } else {
        Err(Error::WrongArity(full.to_string()))
    }
}

fn help(lines: &[&'static str]) -> Reply {
    Reply::Array(lines.iter().map(|l| Reply::simple(l)).collect())
}

const OBJECT_HELP: &[&str] = &[
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Prints this help.",
];

/// # Format
/// `OBJECT ENCODING key` → the encoding name (see [`encoding_name`]), or nil.
/// `OBJECT REFCOUNT key` → 2147483647 for strings Redis shares (the
/// integers 0..9999), else 1; nil if the key does not exist.
/// `OBJECT FREQ key` → nil for a missing key, else the key's logarithmic
/// access counter (0–255) under an `-lfu` eviction policy, or Redis's
/// error without one.
/// `OBJECT HELP` → the help lines.
///
/// `OBJECT IDLETIME key` → seconds since a command last read or wrote the
/// key (OBJECT itself does not count as an access), or nil; Redis's error
/// under an `-lfu` policy (the stamp then holds the counter).
fn object(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let sub = argv[1].to_ascii_lowercase();
    match &sub[..] {
        b"help" => {
            arity(argv, 2, "object|help")?;
            Ok(help(OBJECT_HELP))
        }
        b"encoding" | b"refcount" | b"freq" => {
            let full = match &sub[..] {
                b"encoding" => "object|encoding",
                b"refcount" => "object|refcount",
                _ => "object|freq",
            };
            arity(argv, 3, full)?;
            let cfg = ctx.store.cfg.clone();
            let now = ctx.now;
            // OBJECT never counts as an access (Redis looks keys up with
            // LOOKUP_NOTOUCH for it).
            ctx.no_touch = true;
            let Some(e) = entry_without_keymiss(ctx, argv[2]) else {
                return Ok(Reply::Nil);
            };
            match &sub[..] {
                b"encoding" => Ok(Reply::text(encoding_name(&e.value, &cfg))),
                b"refcount" => Ok(Reply::Int(refcount(&e.value, cfg.no_shared_integers))),
                _ if cfg.lfu.on => Ok(Reply::Int(cfg.lfu.counter(e.last_access, now) as i64)),
                _ => Err(Error::msg(
                    "ERR An LFU maxmemory policy is not selected, access frequency not tracked. \
                     Please note that when switching between policies at runtime LRU and LFU \
                     data will take some time to adjust.",
                )),
            }
        }
        b"idletime" => {
            arity(argv, 3, "object|idletime")?;
            ctx.no_touch = true;
            let now = ctx.now;
            if ctx.store.cfg.lfu.on {
                return Err(Error::msg(
                    "ERR An LFU maxmemory policy is selected, idle time not tracked. Please \
                     note that when switching between policies at runtime LRU and LFU data \
                     will take some time to adjust.",
                ));
            }
            Ok(match entry_without_keymiss(ctx, argv[2]) {
                Some(e) => Reply::Int((now.saturating_sub(e.last_access.min(now)) / 1000) as i64),
                None => Reply::Nil,
            })
        }
        _ => Err(unknown_subcommand(argv[1], "object")),
    }
}

/// The encoding Redis 7.0 would report for a value with these contents:
/// strings `int` (a 64-bit integer in canonical form, at most 20 bytes),
/// `embstr` (up to 44 bytes) or `raw` — `raw` whatever they read as once
/// changed in place, and never `int` when stored as formatted text
/// (INCRBYFLOAT), as Redis keeps them; lists `quicklist`; sets `intset`
/// (all members integers, at most `set-max-intset-entries`) or
/// `hashtable`; hashes `listpack` (at most `hash-max-listpack-entries`
/// fields, no field or value longer than `hash-max-listpack-value`) or
/// `hashtable`; sorted sets `listpack` (same rule with the `zset-*`
/// settings, members only) or `skiplist`.
pub fn encoding_name(v: &Value, cfg: &CoreConfig) -> &'static str {
    match v {
        Value::Str(s) if s.written() == Written::InPlace => "raw",
        Value::Str(s)
            if s.written() == Written::Whole && s.len() <= 20 && parse_i64(s).is_some() =>
        {
            "int"
        }
        Value::Str(s) if s.len() <= 44 => "embstr",
        Value::Str(_) => "raw",
        Value::List(_) => "quicklist",
        Value::Set(s) => {
            // A small set remembers holding a non-integer, as Redis's set
            // stays a hash table once it did.
            if s.len() <= cfg.set_max_intset_entries && s.all_integers() {
                "intset"
            } else {
                "hashtable"
            }
        }
        // A hash or sorted set that outgrew its listpack stays a hash
        // table or skiplist, as in Redis.
        Value::Hash(h)
            if h.is_compact(cfg.hash_max_listpack_entries, cfg.hash_max_listpack_value) =>
        {
            "listpack"
        }
        Value::Hash(_) => "hashtable",
        Value::ZSet(z)
            if z.is_compact(cfg.zset_max_listpack_entries, cfg.zset_max_listpack_value) =>
        {
            "listpack"
        }
        Value::ZSet(_) => "skiplist",
    }
}

/// What Redis 7.0 reports as the reference count: its shared integer
/// objects (0..9999, stored by SET and friends) report `INT_MAX`, unless
/// `maxmemory` is set with an LRU or LFU policy (judged when asked, where
/// Redis judges when the value is stored).
fn refcount(v: &Value, no_shared_integers: bool) -> i64 {
    match v {
        // Only a string Redis holds as an integer is one of its shared
        // integers: not one changed in place or stored as text.
        Value::Str(s)
            if !no_shared_integers
                && s.written() == Written::Whole
                && s.len() <= 20
                && matches!(parse_i64(s), Some(0..=9999)) =>
        {
            i32::MAX as i64
        }
        _ => 1,
    }
}

const MEMORY_HELP: &[&str] = &[
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
];

/// # Format
/// `MEMORY USAGE key [SAMPLES count]` → estimated bytes used by the key and
/// its value, or nil; collections are extrapolated from `count` members
/// (default 5, 0 = all).
/// `MEMORY PURGE` → OK. `MEMORY MALLOC-STATS` → a verbatim note that the
/// allocator keeps no statistics. `MEMORY HELP` → the help lines.
///
/// MEMORY STATS and MEMORY DOCTOR need server-wide figures (allocator,
/// clients, logs): the server answers them before the core is asked.
fn memory(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let sub = argv[1].to_ascii_lowercase();
    match &sub[..] {
        b"help" => {
            arity(argv, 2, "memory|help")?;
            Ok(help(MEMORY_HELP))
        }
        b"purge" => {
            arity(argv, 2, "memory|purge")?;
            Ok(Reply::Ok)
        }
        b"malloc-stats" => {
            arity(argv, 2, "memory|malloc-stats")?;
            Ok(Reply::Verbatim(Bytes::from_static(
                b"Stats not supported for the current allocator",
            )))
        }
        b"usage" => {
            arity(argv, -3, "memory|usage")?;
            let mut samples = 5usize;
            let mut j = 3;
            while j < argv.len() {
                if argv[j].eq_ignore_ascii_case(b"samples") && j + 1 < argv.len() {
                    let n = parse_i64(argv[j + 1]).ok_or(Error::NotInteger)?;
                    if n < 0 {
                        return Err(Error::Syntax);
                    }
                    samples = if n == 0 {
                        usize::MAX
                    } else {
                        usize::try_from(n).unwrap_or(usize::MAX)
                    };
                    j += 2;
                } else {
                    return Err(Error::Syntax);
                }
            }
            let key = &argv[2];
            let Some(e) = entry_without_keymiss(ctx, key) else {
                return Ok(Reply::Nil);
            };
            Ok(Reply::Int(memory_usage(key, e, samples) as i64))
        }
        _ => Err(unknown_subcommand(argv[1], "memory")),
    }
}

/// Size of a `Bytes` handle.
const HANDLE: usize = size_of::<Bytes>();
/// Size of a stored key (a [`Member`]: inline up to 22 bytes, boxed beyond).
const KEY: usize = size_of::<Member>();

/// Bytes the allocator hands out for a request of `n` bytes (glibc malloc
/// chunks on 64-bit: 16-byte steps, 8 bytes of header, 32 at least).
fn alloc(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        ((n + 8 + 15) & !15).max(32)
    }
}

/// Extrapolates per-member costs from the first `samples` members.
fn sampled(costs: impl Iterator<Item = usize>, n: usize, samples: usize) -> usize {
    let k = samples.min(n);
    if k == 0 {
        return 0;
    }
    let sum: usize = costs.take(k).sum();
    if k == n {
        sum
    } else {
        (sum as f64 / k as f64 * n as f64) as usize
    }
}

/// Heap bytes of one stored key, member, field or value: none when it is
/// short enough to live inline.
fn stored(b: &[u8]) -> usize {
    if b.len() <= INLINE {
        0
    } else {
        alloc(b.len())
    }
}

fn set_usage(s: &SetValue, samples: usize) -> usize {
    if s.is_packed() {
        // The members are in the packed buffer.
        return s.heap_bytes();
    }
    s.heap_bytes() + sampled(s.iter().map(stored), s.len(), samples)
}

fn hash_usage(h: &HashValue, samples: usize) -> usize {
    h.heap_bytes()
        + sampled(
            h.iter().map(|(f, v)| stored(f) + stored(v)),
            h.len(),
            samples,
        )
}

fn zset_usage(z: &ZSetValue, samples: usize) -> usize {
    if z.is_packed() {
        // The members are in the packed buffer.
        return z.heap_bytes();
    }
    z.heap_bytes() + sampled(z.iter().map(|(m, _)| stored(m)), z.len(), samples)
}

/// Estimated bytes ebb spends on the value alone (besides its 24 bytes in
/// the entry): a packed collection's buffer, a large one's box and what
/// that holds, a list's box and elements.
pub fn value_usage(v: &Value, samples: usize) -> usize {
    match v {
        Value::Str(s) if s.len() < LARGE => stored(s),
        Value::Str(s) => alloc(HANDLE) + alloc(s.len()),
        // The elements are in the packed buffer or the nodes.
        Value::List(l) if l.is_packed() => alloc(l.heap_bytes()),
        Value::List(l) => l.heap_bytes() + 16 * l.allocations(),
        Value::Set(s) => set_usage(s, samples),
        Value::Hash(h) => hash_usage(h, samples),
        Value::ZSet(z) => zset_usage(z, samples),
    }
}

/// Estimated bytes ebb spends on `key` and its entry: the key bytes, its
/// share of the keyspace table, its entries in the key-TTL and
/// member-deadline indexes, and the value ([`value_usage`]).
pub fn memory_usage(key: &[u8], e: &Entry, samples: usize) -> usize {
    // One keyspace slot (key + entry), and its share of the hash index (a
    // 64-byte line per 12 positions, at most 80% used).
    let slot = KEY + size_of::<Entry>() + (64 * 5usize).div_ceil(12 * 4);
    // One B-tree element of (deadline, table position) at about two
    // thirds fill (the indexes hold no copy of the key).
    let index_entry = alloc(16 + 11 * 16) / 7;
    let mut total = stored(key) + slot + value_usage(&e.value, samples);
    if e.expire_at().is_some() {
        total += index_entry;
    }
    if e.value.earliest_deadline().is_some() {
        total += index_entry;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::keys::tests::{b, put_hash, put_list, put_set, put_zset, set_member_deadline};
    use crate::testing::{bulk, err, Harness};

    fn int(r: Reply) -> i64 {
        match r {
            Reply::Int(n) => n,
            other => panic!("not an integer: {other:?}"),
        }
    }

    #[test]
    fn string_encodings_and_refcounts() {
        let mut h = Harness::new();
        let cases = [
            ("-12", "int", 1),
            ("5", "int", i32::MAX as i64),
            ("9999", "int", i32::MAX as i64),
            ("10000", "int", 1),
            ("9223372036854775807", "int", 1),
            ("012", "embstr", 1),
            ("12345678901234567890", "embstr", 1),
            ("", "embstr", 1),
        ];
        for (v, enc, rc) in cases {
            h.run(&["SET", "k", v]);
            assert_eq!(h.run(&["OBJECT", "ENCODING", "k"]), bulk(enc), "{v}");
            assert_eq!(h.run(&["OBJECT", "REFCOUNT", "k"]), Reply::Int(rc), "{v}");
        }
        h.run(&["SET", "k", &"x".repeat(44)]);
        assert_eq!(h.run(&["object", "encoding", "k"]), bulk("embstr"));
        h.run(&["SET", "k", &"x".repeat(45)]);
        assert_eq!(h.run(&["OBJECT", "ENCODING", "k"]), bulk("raw"));
        // A small integer written as text or changed in place is not one
        // of Redis's shared integers.
        for write in [
            &["INCRBYFLOAT", "k", "5.0e3"][..],
            &["SETRANGE", "k", "0", "5"],
            &["APPEND", "k", ""],
        ] {
            h.run(&["SET", "k", "1"]);
            h.run(write);
            assert_eq!(
                h.run(&["OBJECT", "REFCOUNT", "k"]),
                Reply::Int(1),
                "{write:?}"
            );
        }
        h.run(&["INCR", "k"]);
        assert_eq!(
            h.run(&["OBJECT", "REFCOUNT", "k"]),
            Reply::Int(i32::MAX as i64)
        );
    }

    /// A string changed in place stays `raw` until written whole again,
    /// an INCRBYFLOAT result is text (`embstr`), an INCR result `int`, as
    /// in Redis 7.0.
    #[test]
    fn string_encodings_remember_how_they_were_written() {
        let mut h = Harness::new();
        let enc = |h: &mut Harness| h.run(&["OBJECT", "ENCODING", "k"]);
        h.run(&["SET", "k", "1234"]);
        assert_eq!(h.run(&["SETRANGE", "k", "0", ""]), Reply::Int(4));
        assert_eq!(enc(&mut h), bulk("int"), "nothing was set");
        h.run(&["SETRANGE", "k", "0", "2"]);
        assert_eq!(enc(&mut h), bulk("raw"));
        assert_eq!(h.run(&["GET", "k"]), bulk("2234"));
        h.run(&["INCR", "k"]);
        assert_eq!(enc(&mut h), bulk("int"));
        assert_eq!(h.run(&["GET", "k"]), bulk("2235"));
        h.run(&["APPEND", "k", ""]);
        assert_eq!(enc(&mut h), bulk("raw"));
        h.run(&["SET", "k", "5"]);
        h.run(&["SETBIT", "k", "2", "1"]);
        assert_eq!(enc(&mut h), bulk("raw"), "the bit was already set");
        assert_eq!(h.run(&["GET", "k"]), bulk("5"));
        h.run(&["SET", "k", "5"]);
        h.run(&["BITFIELD", "k", "GET", "u8", "0"]);
        assert_eq!(enc(&mut h), bulk("int"), "read only");
        h.run(&["BITFIELD", "k", "SET", "u8", "0", "54"]);
        assert_eq!(enc(&mut h), bulk("raw"));
        h.run(&["SET", "k", "1.5"]);
        h.run(&["INCRBYFLOAT", "k", "1.5"]);
        assert_eq!(h.run(&["GET", "k"]), bulk("3"));
        assert_eq!(enc(&mut h), bulk("embstr"));
        h.run(&["COPY", "k", "c"]);
        assert_eq!(h.run(&["OBJECT", "ENCODING", "c"]), bulk("embstr"));
        h.run(&["DEL", "k"]);
        h.run(&["SETRANGE", "k", "0", "7"]);
        assert_eq!(enc(&mut h), bulk("raw"), "created by SETRANGE");
        h.run(&["APPEND", "a", "12"]);
        assert_eq!(
            h.run(&["OBJECT", "ENCODING", "a"]),
            bulk("int"),
            "created by APPEND"
        );
    }

    #[test]
    fn collection_encodings_follow_thresholds() {
        let mut h = Harness::new();
        put_list(&mut h, "l", &["a"]);
        assert_eq!(h.run(&["OBJECT", "ENCODING", "l"]), bulk("quicklist"));
        put_set(&mut h, "s", &["1", "2", "-3"]);
        assert_eq!(h.run(&["OBJECT", "ENCODING", "s"]), bulk("intset"));
        put_set(&mut h, "s", &["1", "a"]);
        assert_eq!(h.run(&["OBJECT", "ENCODING", "s"]), bulk("hashtable"));
        // Like Redis's, the set stays a hash table once it held a
        // non-integer; an intset lists its members in numeric order.
        h.run(&["SREM", "s", "a"]);
        assert_eq!(h.run(&["OBJECT", "ENCODING", "s"]), bulk("hashtable"));
        h.run(&["DEL", "n"]);
        h.run(&["SADD", "n", "10", "-2", "3", "1"]);
        assert_eq!(h.run(&["OBJECT", "ENCODING", "n"]), bulk("intset"));
        assert_eq!(
            h.run(&["SMEMBERS", "n"]),
            Reply::Set(vec![bulk("-2"), bulk("1"), bulk("3"), bulk("10")])
        );
        put_hash(&mut h, "h", &[("f", "v")]);
        assert_eq!(h.run(&["OBJECT", "ENCODING", "h"]), bulk("listpack"));
        let long = "v".repeat(65);
        put_hash(&mut h, "h", &[("f", &long)]);
        assert_eq!(h.run(&["OBJECT", "ENCODING", "h"]), bulk("hashtable"));
        put_zset(&mut h, "z", &[(1.0, "a")]);
        assert_eq!(h.run(&["OBJECT", "ENCODING", "z"]), bulk("listpack"));
        put_zset(&mut h, "z", &[(1.0, &long)]);
        assert_eq!(h.run(&["OBJECT", "ENCODING", "z"]), bulk("skiplist"));
        h.store.cfg.set_max_intset_entries = 2;
        h.store.cfg.zset_max_listpack_entries = 0;
        h.store.cfg.hash_max_listpack_entries = 1;
        put_set(&mut h, "s", &["1", "2", "3"]);
        assert_eq!(h.run(&["OBJECT", "ENCODING", "s"]), bulk("hashtable"));
        put_zset(&mut h, "z", &[(1.0, "a")]);
        assert_eq!(h.run(&["OBJECT", "ENCODING", "z"]), bulk("skiplist"));
        put_hash(&mut h, "h", &[("f", "v"), ("g", "v")]);
        assert_eq!(h.run(&["OBJECT", "ENCODING", "h"]), bulk("hashtable"));
        assert_eq!(h.run(&["OBJECT", "REFCOUNT", "h"]), Reply::Int(1));
    }

    #[test]
    fn object_missing_keys_freq_help_and_errors() {
        let mut h = Harness::new();
        assert_eq!(h.run(&["OBJECT", "ENCODING", "nope"]), Reply::Nil);
        assert_eq!(h.run(&["OBJECT", "REFCOUNT", "nope"]), Reply::Nil);
        assert_eq!(h.run(&["OBJECT", "FREQ", "nope"]), Reply::Nil);
        h.run(&["SET", "k", "v"]);
        assert!(
            matches!(h.run(&["OBJECT", "FREQ", "k"]), Reply::Error(e) if e.starts_with("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note"))
        );
        match h.run(&["OBJECT", "HELP"]) {
            Reply::Array(lines) => {
                assert_eq!(
                    lines[0],
                    Reply::simple(
                        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
                    )
                );
                assert_eq!(lines.last(), Some(&Reply::simple("    Prints this help.")));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            h.run(&["OBJECT", "foo", "k"]),
            err("ERR unknown subcommand 'foo'. Try OBJECT HELP.")
        );
        h.advance(5_500);
        assert_eq!(h.run(&["OBJECT", "idletime", "k"]), Reply::Int(5));
        assert_eq!(h.run(&["OBJECT", "IDLETIME", "k"]), Reply::Int(5));
        // EXISTS is not an access (as in Redis 7.0); a read is.
        h.run(&["EXISTS", "k"]);
        assert_eq!(h.run(&["OBJECT", "idletime", "k"]), Reply::Int(5));
        h.run(&["GET", "k"]);
        assert_eq!(h.run(&["OBJECT", "idletime", "k"]), Reply::Int(0));
        assert_eq!(h.run(&["OBJECT", "idletime", "nope"]), Reply::Nil);
        assert_eq!(
            h.run(&["OBJECT", "ENCODING"]),
            err("ERR wrong number of arguments for 'object|encoding' command")
        );
        assert_eq!(
            h.run(&["OBJECT", "ENCODING", "a", "b"]),
            err("ERR wrong number of arguments for 'object|encoding' command")
        );
        assert_eq!(
            h.run(&["OBJECT", "help", "x"]),
            err("ERR wrong number of arguments for 'object|help' command")
        );
        assert_eq!(
            h.run(&["OBJECT"]),
            err("ERR wrong number of arguments for 'object' command")
        );
        // An expired key is gone for OBJECT too.
        h.store.dbs[0].set_expire(b"k", Some(h.now));
        assert_eq!(h.run(&["OBJECT", "ENCODING", "k"]), Reply::Nil);
    }

    #[test]
    fn key_positions() {
        let spec = crate::table::lookup(b"object").expect("registered");
        let argv = |v: &[&'static str]| v.iter().map(|s| s.as_bytes()).collect::<Vec<&[u8]>>();
        assert_eq!(
            spec.key_positions(&argv(&["OBJECT", "ENCODING", "k"])),
            vec![2]
        );
        assert_eq!(
            spec.key_positions(&argv(&["OBJECT", "HELP"])),
            Vec::<usize>::new()
        );
        let spec = crate::table::lookup(b"memory").expect("registered");
        assert_eq!(
            spec.key_positions(&argv(&["MEMORY", "usage", "k", "SAMPLES", "0"])),
            vec![2]
        );
        assert_eq!(
            spec.key_positions(&argv(&["MEMORY", "PURGE"])),
            Vec::<usize>::new()
        );
    }

    #[test]
    fn memory_usage_options_and_errors() {
        let mut h = Harness::new();
        h.run(&["SET", "k", "v"]);
        assert!(int(h.run(&["MEMORY", "USAGE", "k"])) > 0);
        assert_eq!(h.run(&["MEMORY", "USAGE", "nope"]), Reply::Nil);
        assert!(int(h.run(&["MEMORY", "USAGE", "k", "SAMPLES", "0"])) > 0);
        assert_eq!(
            h.run(&["MEMORY", "USAGE", "k", "SAMPLES", "-1"]),
            err("ERR syntax error")
        );
        assert_eq!(
            h.run(&["MEMORY", "USAGE", "k", "SAMPLES", "x"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            h.run(&["MEMORY", "USAGE", "k", "SAMPLES"]),
            err("ERR syntax error")
        );
        assert_eq!(
            h.run(&["MEMORY", "USAGE", "k", "foo"]),
            err("ERR syntax error")
        );
        assert_eq!(
            h.run(&["MEMORY", "USAGE"]),
            err("ERR wrong number of arguments for 'memory|usage' command")
        );
        assert_eq!(
            h.run(&["MEMORY", "foo"]),
            err("ERR unknown subcommand 'foo'. Try MEMORY HELP.")
        );
        assert_eq!(h.run(&["MEMORY", "PURGE"]), Reply::Ok);
        assert_eq!(
            h.run(&["MEMORY", "MALLOC-STATS"]),
            Reply::Verbatim(b("Stats not supported for the current allocator"))
        );
        assert!(
            matches!(h.run(&["MEMORY", "HELP"]), Reply::Array(l) if l.len() == MEMORY_HELP.len())
        );
    }

    #[test]
    fn memory_usage_grows_with_content_and_counts_live_members_only() {
        let mut h = Harness::new();
        h.run(&["SET", "small", "v"]);
        h.run(&["SET", "big", &"v".repeat(1000)]);
        let small = int(h.run(&["MEMORY", "USAGE", "small"]));
        let big = int(h.run(&["MEMORY", "USAGE", "big"]));
        assert!(big >= small + 950, "{small} {big}");
        let members: Vec<String> = (0..100).map(|i| format!("member:{i:04}")).collect();
        let refs: Vec<&str> = members.iter().map(|s| s.as_str()).collect();
        put_set(&mut h, "s", &refs);
        let full = int(h.run(&["MEMORY", "USAGE", "s", "SAMPLES", "0"]));
        // (each member takes at least its 11 bytes, packed or not)
        assert!(full > 100 * 11, "{full}");
        // Deadlines cost memory while they exist...
        let t = h.now + 10;
        for m in &refs[..90] {
            set_member_deadline(&mut h, 0, "s", m, t);
        }
        let with_deadlines = int(h.run(&["MEMORY", "USAGE", "s", "SAMPLES", "0"]));
        assert!(with_deadlines > full, "{with_deadlines} {full}");
        // ...and expired members are not counted.
        h.advance(10);
        let after = int(h.run(&["MEMORY", "USAGE", "s", "SAMPLES", "0"]));
        assert!(after < full / 3, "{after} {full}");
    }

    #[test]
    fn memory_usage_counts_keys_as_stored() {
        // Keys up to 22 bytes live inside the key table's slot: none costs
        // more than another, the empty key included.
        let mut h = Harness::new();
        let short = ["", "a", &"k".repeat(22)];
        let usage: Vec<i64> = short
            .iter()
            .map(|k| {
                h.run(&["SET", k, "v"]);
                int(h.run(&["MEMORY", "USAGE", k]))
            })
            .collect();
        assert!(usage.iter().all(|&u| u == usage[0]), "{usage:?}");
        // A longer key is boxed; a deadline index holds a small pair for it,
        // not a copy of it.
        let long = "k".repeat(1000);
        h.run(&["SET", &long, "v"]);
        let plain = int(h.run(&["MEMORY", "USAGE", &long]));
        assert!(plain >= usage[0] + 1000, "{plain}");
        h.run(&["PEXPIRE", &long, "100000"]);
        let with_ttl = int(h.run(&["MEMORY", "USAGE", &long]));
        assert!(
            with_ttl > plain && with_ttl < plain + 100,
            "{plain} {with_ttl}"
        );
    }

    #[test]
    fn sampling_extrapolates() {
        let mut z = ZSetValue::new();
        for i in 0..1000 {
            z.insert(b(&format!("m{i:05}")), i as f64);
        }
        let v = Value::from(z);
        let all = value_usage(&v, usize::MAX);
        let five = value_usage(&v, 5);
        assert_eq!(all, five);
        let mut l: crate::value::ListValue = Default::default();
        l.push_back(b(&"x".repeat(1000)));
        for _ in 0..99 {
            l.push_back(b("y"));
        }
        // A list's elements live in its nodes: counted exactly, no sampling.
        let v = Value::from(l);
        let all = value_usage(&v, usize::MAX);
        assert_eq!(value_usage(&v, 1), all);
        assert!(
            (1000 + 99 * 3..2 * (1000 + 99 * 3) + 512).contains(&all),
            "{all}"
        );
    }
}
