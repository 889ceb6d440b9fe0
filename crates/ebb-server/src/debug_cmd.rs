//! DEBUG: the subcommands Redis's tests and operators use.

use bytes::Bytes;
use ebb_core::args::parse_i64;
use ebb_core::{Error, Reply, Store};
use parking_lot::MutexGuard;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::admin::{eq, err, lossy};
use crate::conn::Session;
use crate::server::Shared;

type Guard<'a> = Option<MutexGuard<'a, Store>>;

/// DEBUG SLEEP / SET-ACTIVE-EXPIRE / OBJECT / DIGEST / DIGEST-VALUE / ERROR / RELOAD / HELP.
pub fn debug<'a>(
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    argv: &[&[u8]],
) -> Reply {
    let sub = &argv[1];
    if eq(sub, "sleep") && argv.len() == 3 {
        // Read as C's strtod, as Redis reads it: "1abc" sleeps a second.
        let secs = ebb_core::args::c_strtod(argv[2]);
        let secs = if secs.is_nan() { 0.0 } else { secs.max(0.0) };
        // Like Redis, DEBUG SLEEP stalls the whole keyspace.
        let _store = guard.get_or_insert_with(|| shared.lock_store());
        std::thread::sleep(std::time::Duration::from_secs_f64(secs.min(3600.0)));
        Reply::Ok
    } else if eq(sub, "aof-flush-sleep") && argv.len() == 3 {
        // Microseconds each write of the log waits first (Redis's testing
        // aid: replies must still wait for the log).
        let us = parse_i64(argv[2]).unwrap_or(0).max(0) as u64;
        crate::durability::AOF_FLUSH_SLEEP_US.store(us, Ordering::Relaxed);
        Reply::Ok
    } else if eq(sub, "log") && argv.len() == 3 {
        // A line in the server's log (Redis's test harness marks each
        // test's start with it).
        tracing::warn!("DEBUG LOG: {}", lossy(argv[2]));
        Reply::Ok
    } else if eq(sub, "set-active-expire") && argv.len() == 3 {
        set_switch(&shared.active_expire, argv[2])
    } else if eq(sub, "set-skip-checksum-validation") && argv.len() == 3 {
        set_switch(&ebb_core::rdb::SKIP_CHECKSUM, argv[2])
    } else if eq(sub, "pause-cron") && argv.len() == 3 {
        set_switch(&shared.cron_paused, argv[2])
    } else if eq(sub, "set-disable-deny-scripts") && argv.len() == 3 {
        set_switch(&shared.scripts_any_command, argv[2])
    } else if eq(sub, "object") && argv.len() == 3 {
        // Looks at the table as it is: a key past its TTL that nobody has
        // touched yet is still shown, as in Redis.
        let store = guard.get_or_insert_with(|| shared.lock_store());
        match store.dbs[s.db].raw_get(argv[2]) {
            Some(e) => {
                let enc = ebb_core::cmd::keys_object::encoding_name(&e.value, &store.cfg);
                Reply::Simple(
                    format!("Value at:0x0 refcount:1 encoding:{enc} serializedlength:0 lru:0 lru_seconds_idle:0").into(),
                )
            }
            None => err("ERR no such key"),
        }
    } else if eq(sub, "digest") && argv.len() == 2 {
        use ebb_core::cmd::debug_digest;
        let store = guard.get_or_insert_with(|| shared.lock_store());
        let d = debug_digest::dataset_digest(store.dbs.iter(), crate::server::now_ms());
        Reply::Simple(lossy(&debug_digest::hex(&d)).into())
    } else if eq(sub, "digest-value") {
        use ebb_core::cmd::debug_digest;
        let store = guard.get_or_insert_with(|| shared.lock_store());
        let now = crate::server::now_ms();
        Reply::Array(
            argv[2..]
                .iter()
                .map(|k| {
                    let d = debug_digest::key_digest(&store.dbs[s.db], k, now);
                    Reply::Simple(lossy(&debug_digest::hex(&d)).into())
                })
                .collect(),
        )
    } else if eq(sub, "quicklist-packed-threshold") && argv.len() == 3 {
        // ebb keeps every list element the same way whatever its size, so
        // the size above which Redis gives an element a node of its own
        // changes nothing here; the argument is still checked as Redis does.
        let size = std::str::from_utf8(argv[2])
            .ok()
            .and_then(crate::config::parse_memory);
        match size {
            Some(n) if n < 1 << 32 => Reply::Ok,
            _ => err("ERR argument must be a memory value bigger than 1 and smaller than 4gb"),
        }
    } else if eq(sub, "config-rewrite-force-all") && argv.len() == 2 {
        crate::admin::rewrite_config(shared, true)
    } else if eq(sub, "loadaof") && argv.len() == 2 {
        // Empties the dataset and loads it back from the files the AOF
        // directory's manifest lists (as the AOF or BGREWRITEAOF left them).
        shared.flush_aof();
        let store = guard.get_or_insert_with(|| shared.lock_store());
        // What batches logged before the keyspace was taken is written
        // now: nothing can be logged while it is held, so the files stay
        // as they are while they load.
        shared.flush_aof();
        let mark = crate::loading::Mark::new(shared);
        // The worker goes on serving the other clients (-LOADING) meanwhile.
        let loaded = tokio::task::block_in_place(|| shared.reload_aof(store));
        drop(mark);
        match loaded {
            Ok(()) => {
                // As Redis: the reload itself is no change to save.
                let dirty = shared.stats.dirty.load(Ordering::Relaxed);
                shared.dirty_at_save.store(dirty, Ordering::Relaxed);
                tracing::warn!("Append Only File loaded by DEBUG LOADAOF");
                Reply::Ok
            }
            Err(e) => {
                tracing::error!("{e}");
                err("ERR Error loading the append only file, check the server logs")
            }
        }
    } else if eq(sub, "reload") {
        // The worker goes on serving the other clients (-LOADING) meanwhile.
        tokio::task::block_in_place(|| debug_reload(shared, guard, argv))
    } else if eq(sub, "protocol") && argv.len() == 3 {
        // Reached from scripts only (a connection's DEBUG PROTOCOL writes
        // its reply itself).
        crate::commands::protocol_sample(argv[2], false).1
    } else if eq(sub, "replybuffer") && argv.len() == 4 {
        if eq(argv[2], "peak-reset-time") {
            if eq(argv[3], "never") {
                crate::conn::set_peak_reset_time(Some(-1));
            } else if eq(argv[3], "reset") {
                crate::conn::set_peak_reset_time(None);
            } else {
                match parse_i64(argv[3]) {
                    Some(ms) => crate::conn::set_peak_reset_time(Some(ms)),
                    None => return Error::NotInteger.into(),
                }
            }
        } else if eq(argv[2], "resizing") {
            let on = std::str::from_utf8(argv[3])
                .ok()
                .and_then(|t| t.trim().parse::<i64>().ok())
                .unwrap_or(0);
            crate::conn::set_reply_buffer_resizing(on != 0);
        } else {
            return ebb_core::error::subcommand_syntax(sub, "debug").into();
        }
        Reply::Ok
    } else if eq(sub, "client-eviction") && argv.len() == 2 {
        match crate::client_evict::buckets(shared) {
            Some(text) => Reply::Verbatim(text.into()),
            None => err("ERR maxmemory-clients is disabled."),
        }
    } else if eq(sub, "error") && argv.len() == 3 {
        // From a script (a connection's DEBUG ERROR, and one inside EXEC,
        // write their reply themselves, see `error_line`).
        Reply::Error(
            String::from_utf8_lossy(&error_line(argv[2])[1..])
                .into_owned()
                .into(),
        )
    } else if eq(sub, "populate") && (3..=5).contains(&argv.len()) {
        populate(s, shared, guard, argv)
    } else if eq(sub, "help") && argv.len() == 2 {
        Reply::help(&[
            "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "AOF-FLUSH-SLEEP <microsec>",
            "    Server will sleep before flushing the AOF, this is used for testing.",
            "DIGEST",
            "    Output a hex signature representing the current DB content.",
            "DIGEST-VALUE <key> [<key> ...]",
            "    Output a hex signature of the values of all the specified keys.",
            "ERROR <string>",
            "    Return a Redis protocol error with <string> as message. Useful for clients",
            "    unit tests to simulate Redis errors.",
            "CLIENT-EVICTION",
            "    Show the evictable clients grouped by memory (powers of two).",
            "CONFIG-REWRITE-FORCE-ALL",
            "    Like CONFIG REWRITE but writes all configuration options, including",
            "    keywords not listed in original configuration file or default values.",
            "LOADAOF",
            "    Flush the AOF buffers on disk and reload the AOF in memory.",
            "LOG <message>",
            "    Write <message> to the server log.",
            "OBJECT <key>",
            "    Show low level info about the `key` and associated value.",
            "POPULATE <count> [<prefix>] [<size>]",
            "    Create <count> string keys named key:<num>. If <prefix> is specified then",
            "    it is used instead of the 'key' prefix. These are not propagated to",
            "    replicas. Cache master and replica results.",
            "PAUSE-CRON <0|1>",
            "    Stop periodic cron job processing.",
            "PROTOCOL <type>",
            "    Reply with a test value of the specified type. <type> can be: string,",
            "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
            "    true, false.",
            "QUICKLIST-PACKED-THRESHOLD <size>",
            "    Sets the threshold for elements to be inserted as plain vs packed nodes",
            "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
            "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
            "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
            "    In case NEVER is provided the last observed peak will never be reset",
            "    In case RESET is provided the peak reset time will be restored to the default value",
            "REPLYBUFFER RESIZING <0|1>",
            "    Enable or disable the reply buffer resize cron job",
            "RELOAD",
            "    Save the dataset to a snapshot, empty it and load it back.",
            "SET-ACTIVE-EXPIRE <0|1>",
            "    Setting it to 0 disables expiring keys (and members) in background.",
            "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
            "    Enables or disables checksum checks for RESTORE's payloads.",
            "SET-DISABLE-DENY-SCRIPTS <0|1>",
            "    Setting it to 1 lets scripts run commands that they normally may not.",
            "SLEEP <seconds>",
            "    Stop the server for <seconds>. Decimals allowed.",
            "HELP",
            "    Prints this help.",
        ])
    } else {
        ebb_core::error::subcommand_syntax(sub, "debug").into()
    }
}

/// DEBUG ERROR's reply line without its CRLF: `-` and the text as given,
/// with no `ERR` prefix added (the client names the error's kind) and each
/// CR or LF made a space so that the line stays one line.
pub(crate) fn error_line(text: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(text.len() + 1);
    line.push(b'-');
    line.extend(
        text.iter()
            .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
    line
}

/// DEBUG POPULATE count [prefix] [size]: creates string keys
/// `<prefix>:<n>` (prefix `key`) holding `value:<n>`, or that text padded
/// with zero bytes (or cut) to `size` bytes, for n in 0..count; keys that
/// exist are left alone. Unlike Redis (which skips its log here) the keys
/// are logged as SET commands when the AOF is on, so a restart keeps them.
fn populate<'a>(
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    argv: &[&[u8]],
) -> Reply {
    let positive = |b: &[u8]| parse_i64(b).filter(|n| *n >= 0);
    let Some(count) = positive(argv[2]) else {
        return err("ERR value is out of range, must be positive");
    };
    let size = match argv.get(4) {
        None => None,
        Some(b) => match positive(b) {
            Some(0) => None,
            Some(n) => Some(n as usize),
            None => return err("ERR value is out of range, must be positive"),
        },
    };
    let prefix = argv.get(3).map_or(&b"key"[..], |p| &p[..]);
    let Some(set) = ebb_core::lookup(b"set") else {
        return err("ERR no SET command");
    };
    let store = guard.get_or_insert_with(|| shared.lock_store());
    let mut cmd = vec![
        Bytes::from_static(b"SET"),
        Bytes::new(),
        Bytes::new(),
        Bytes::from_static(b"NX"),
    ];
    for n in 0..count {
        let mut key = prefix.to_vec();
        key.push(b':');
        key.extend_from_slice(n.to_string().as_bytes());
        let text = format!("value:{n}");
        let value = match size {
            None => text.into_bytes(),
            Some(len) => {
                let mut v = vec![0u8; len];
                let k = len.min(text.len());
                v[..k].copy_from_slice(&text.as_bytes()[..k]);
                v
            }
        };
        cmd[1] = Bytes::from(key);
        cmd[2] = Bytes::from(value);
        if let Err(e) = s.run_core(store, set, &ebb_core::args::views(&cmd), false) {
            return e.into();
        }
    }
    Reply::Ok
}

/// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: saves a snapshot (unless
/// NOSAVE) and loads it back, into an emptied dataset (unless NOFLUSH, when
/// a key or library already present fails the load, or with MERGE is
/// replaced).
fn debug_reload<'a>(
    shared: &'a Arc<Shared>,
    guard: &mut Option<parking_lot::MutexGuard<'a, Store>>,
    argv: &[&[u8]],
) -> Reply {
    let (mut merge, mut flush, mut save) = (false, true, true);
    for opt in &argv[2..] {
        if eq(opt, "merge") {
            merge = true;
        } else if eq(opt, "noflush") {
            flush = false;
        } else if eq(opt, "nosave") {
            save = false;
        } else {
            return err("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
        }
    }
    let store = guard.get_or_insert_with(|| shared.lock_store());
    let now = crate::server::now_ms();
    let data = if save {
        let data = crate::persist::snapshot::encode(store, now);
        if let Err(e) = crate::persist::snapshot::write_file(&shared.snapshot_path(), &data) {
            return err(format!("ERR Error trying to save the DB: {e}"));
        }
        data
    } else {
        match std::fs::read(shared.snapshot_path()) {
            Ok(d) => d,
            Err(_) => return err("ERR Error trying to load the RDB dump"),
        }
    };
    if let Err(e) = crate::persist::snapshot::check(&data, store.dbs.len()) {
        tracing::warn!("DEBUG RELOAD: {e}");
        return err("ERR Error trying to load the RDB dump");
    }
    let _loading = crate::loading::Mark::new(shared);
    crate::loading::set_total(data.len() as u64);
    if flush {
        for db in store.dbs.iter_mut() {
            db.clear();
        }
        store.functions.clear();
        return match crate::persist::snapshot::load(store, &data, now) {
            Ok(_) => Reply::Ok,
            Err(_) => err("ERR Error trying to load the RDB dump"),
        };
    }
    // Into a scratch store first, then merged.
    let mut loaded = Store::new(store.dbs.len());
    loaded.cfg = store.cfg.clone();
    if crate::persist::snapshot::load(&mut loaded, &data, now).is_err() {
        return err("ERR Error trying to load the RDB dump");
    }
    if !merge {
        let clash = loaded
            .functions
            .iter()
            .any(|(n, _)| store.functions.get(n).is_some())
            || loaded
                .dbs
                .iter()
                .zip(&store.dbs)
                .any(|(l, d)| l.raw_iter().any(|(k, _)| d.raw_get(k).is_some()));
        if clash {
            return err("ERR Error trying to load the RDB dump");
        }
    }
    for (name, code) in loaded.functions.iter() {
        store.functions.insert(name.clone(), code.clone());
    }
    for (l, d) in loaded.dbs.iter_mut().zip(store.dbs.iter_mut()) {
        let keys: Vec<Bytes> = l.keys().map(Bytes::copy_from_slice).collect();
        for k in keys {
            if let Some(e) = l.remove(&k) {
                d.insert_entry(&k, e);
            }
        }
    }
    Reply::Ok
}

/// A DEBUG on/off switch: 0 (as C's atoi reads it) clears it, anything
/// else sets it.
fn set_switch(switch: &std::sync::atomic::AtomicBool, arg: &[u8]) -> Reply {
    // Read as C's atoi, as Redis reads it: a sign and leading digits,
    // anything else 0.
    switch.store(ebb_core::args::c_atoi(arg) != 0, Ordering::Relaxed);
    Reply::Ok
}
