//! Commands the server executes: session state (SELECT, RESET, QUIT; HELLO
//! and AUTH are in handshake.rs; EXEC in exec.rs), pub/sub, CLIENT, CONFIG, COMMAND, INFO,
//! DEBUG, TIME, SHUTDOWN.

use bytes::{Bytes, BytesMut};
use ebb_core::{CommandSpec, Error, Reply, Store};
use parking_lot::MutexGuard;
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::conn::{Flow, ReplyMode, Session};
use crate::exec::in_exec;
use crate::resp;
use crate::server::{now_ms, Shared, SubKind};

pub(crate) type Guard<'a> = Option<MutexGuard<'a, Store>>;

pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub(crate) fn eq(a: &[u8], b: &str) -> bool {
    a.eq_ignore_ascii_case(b.as_bytes())
}

pub(crate) fn err(s: impl Into<String>) -> Reply {
    Reply::Error(s.into().into())
}

/// Runs a server command; replies go to `out`.
pub fn run<'a>(
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    spec: &CommandSpec,
    argv: &[&[u8]],
    out: &mut BytesMut,
) -> Flow {
    match spec.name {
        "quit" => {
            s.reply(&Reply::Ok, out);
            Flow::Close
        }
        "subscribe" | "psubscribe" | "ssubscribe" | "unsubscribe" | "punsubscribe"
        | "sunsubscribe" => {
            subscriptions(s, shared, spec, argv, out);
            Flow::Continue
        }
        "exec" => {
            match crate::exec::exec(s, shared, guard) {
                // (The errors inside were counted as the commands ran.)
                Ok(parts) if s.replies_on() => {
                    // One element per queued command, as Redis counts them,
                    // though a (un)subscription to several channels writes
                    // one reply per channel (Redis 7.0 does the same).
                    resp::put_int(out, b'*', parts.len() as i64);
                    for p in parts {
                        match p {
                            crate::exec::Part::Reply(r) => resp::encode(&r, s.resp3, out),
                            crate::exec::Part::Raw(b) => out.extend_from_slice(&b),
                        }
                    }
                }
                Ok(_) => {}
                Err(r) => s.reply(&r, out),
            }
            Flow::Continue
        }
        "wait" => crate::cluster::wait(s, shared, guard, argv, out),
        "debug" if argv.len() == 3 && eq(argv[1], "error") => {
            // Written as given (the text need not be UTF-8), and, as in
            // Redis, neither an error reply in INFO errorstats nor a failed
            // call.
            if s.replies_on() {
                out.extend_from_slice(&crate::debug_cmd::error_line(argv[2]));
                out.extend_from_slice(b"\r\n");
            }
            Flow::Continue
        }
        "debug" if argv.len() == 3 && eq(argv[1], "protocol") => {
            debug_protocol(s, argv[2], out);
            Flow::Continue
        }
        _ => {
            let r = reply_for(s, shared, guard, spec, argv);
            if let Some(r) = r {
                s.reply(&r, out);
            }
            Flow::Continue
        }
    }
}

/// SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UNSUBSCRIBE counterparts:
/// one reply per channel, written to `out`.
pub(crate) fn subscriptions(
    s: &mut Session,
    shared: &Arc<Shared>,
    spec: &CommandSpec,
    argv: &[&[u8]],
    out: &mut BytesMut,
) {
    let kind = sub_kind(spec.name);
    if matches!(spec.name, "subscribe" | "psubscribe" | "ssubscribe") {
        for ch in &argv[1..] {
            let ch = Bytes::copy_from_slice(ch);
            if sub_set(s, kind).insert(ch.clone()) {
                shared.subscribe(s.id, &s.entry, ch.clone(), kind);
            }
            let n = sub_count(s, kind);
            resp::encode_sub_reply(spec.name.as_bytes(), Some(&ch), n, s.resp3, out);
        }
        sync_sub_counts(s);
        return;
    }
    let names: Vec<Bytes> = if argv.len() > 1 {
        argv[1..]
            .iter()
            .map(|b| Bytes::copy_from_slice(b))
            .collect()
    } else {
        sub_set(s, kind).iter().cloned().collect()
    };
    if names.is_empty() {
        let n = sub_count(s, kind);
        resp::encode_sub_reply(spec.name.as_bytes(), None, n, s.resp3, out);
    }
    for ch in names {
        if sub_set(s, kind).remove(&ch) {
            shared.unsubscribe(s.id, &ch, kind);
        }
        let n = sub_count(s, kind);
        resp::encode_sub_reply(spec.name.as_bytes(), Some(&ch), n, s.resp3, out);
    }
    sync_sub_counts(s);
}

/// `DEBUG PROTOCOL <type>`: one sample reply of each RESP type, written as
/// Redis 7.0 writes it.
fn debug_protocol(s: &mut Session, name: &[u8], out: &mut BytesMut) {
    let (before, r) = protocol_sample(name, s.resp3);
    out.extend_from_slice(before);
    s.reply(&r, out);
}

/// DEBUG PROTOCOL's sample of type `name`, and what a RESP3 client gets
/// before it (an attribute or a push message, which have no [`Reply`]
/// value). Scripts get the reply alone.
pub(crate) fn protocol_sample(name: &[u8], resp3: bool) -> (&'static [u8], Reply) {
    let ints = || (0..3).map(Reply::Int).collect::<Vec<_>>();
    let r = match () {
        _ if eq(name, "string") => Reply::text("Hello World"),
        _ if eq(name, "integer") => Reply::Int(12345),
        // Redis's sample value, not an approximation of pi.
        #[allow(clippy::approx_constant)]
        _ if eq(name, "double") => Reply::Double(3.141),
        _ if eq(name, "bignum") => {
            Reply::BigNumber(Bytes::from_static(b"1234567999999999999999999999999999999"))
        }
        _ if eq(name, "null") => Reply::Nil,
        _ if eq(name, "array") => Reply::Array(ints()),
        _ if eq(name, "set") => Reply::Set(ints()),
        _ if eq(name, "map") => Reply::Map(
            (0..3)
                .map(|j| (Reply::Int(j), Reply::Bool(j == 1)))
                .collect(),
        ),
        _ if eq(name, "attrib") => {
            let before: &[u8] = if resp3 {
                b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"
            } else {
                b""
            };
            return (before, Reply::text("Some real reply following the attribute"));
        }
        _ if eq(name, "push") => {
            if !resp3 {
                err("ERR RESP2 is not supported by this command")
            } else {
                return (
                    b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n",
                    Reply::text("Some real reply following the push reply"),
                );
            }
        }
        _ if eq(name, "true") => Reply::Bool(true),
        _ if eq(name, "false") => Reply::Bool(false),
        _ if eq(name, "verbatim") => Reply::Verbatim(Bytes::from_static(b"This is a verbatim\nstring")),
        _ => err("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false"),
    };
    (b"", r)
}

/// The kind of subscription a (P|S)(UN)SUBSCRIBE command works on.
fn sub_kind(name: &str) -> SubKind {
    match name {
        "psubscribe" | "punsubscribe" => SubKind::Pattern,
        "ssubscribe" | "sunsubscribe" => SubKind::Shard,
        _ => SubKind::Channel,
    }
}

/// The session's subscriptions of one kind.
fn sub_set(s: &mut Session, kind: SubKind) -> &mut BTreeSet<Bytes> {
    match kind {
        SubKind::Channel => &mut s.channels,
        SubKind::Pattern => &mut s.patterns,
        SubKind::Shard => &mut s.shard_channels,
    }
}

/// The count a subscribe reply carries: channels and patterns together,
/// shard channels on their own (as Redis counts them).
fn sub_count(s: &Session, kind: SubKind) -> i64 {
    match kind {
        SubKind::Shard => s.shard_channels.len() as i64,
        _ => (s.channels.len() + s.patterns.len()) as i64,
    }
}

fn sync_sub_counts(s: &Session) {
    s.entry.subs.store(s.channels.len(), Ordering::Relaxed);
    s.entry.psubs.store(s.patterns.len(), Ordering::Relaxed);
    s.entry
        .ssubs
        .store(s.shard_channels.len(), Ordering::Relaxed);
}

/// Commands whose whole effect is one reply. None = no reply at all.
pub(crate) fn reply_for<'a>(
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    spec: &CommandSpec,
    argv: &[&[u8]],
) -> Option<Reply> {
    let r = match spec.name {
        "ping" => {
            // Only reached in RESP2 subscribed mode.
            let msg = argv.get(1).copied().unwrap_or_default();
            Reply::Array(vec![Reply::bulk(b"pong"), Reply::bulk(msg)])
        }
        "select" => match ebb_core::cmd::keys::parse_db_index(argv[1], shared.databases) {
            Err(e) => e.into(),
            Ok(n) => {
                s.db = n;
                s.entry.db.store(s.db, Ordering::Relaxed);
                Reply::Ok
            }
        },
        "monitor" => {
            crate::observe::add_monitor(s.id, &s.tx);
            s.entry.monitor.store(true, Ordering::Relaxed);
            Reply::Ok
        }
        "slowlog" => crate::observe::slowlog(argv),
        "latency" => crate::latency::latency(argv),
        "reset" => {
            crate::observe::remove_monitor(s.id);
            s.multi = None;
            s.multi_failed = false;
            s.entry.in_multi.store(false, Ordering::Relaxed);
            s.entry.multi_len.store(-1, Ordering::Relaxed);
            s.entry.monitor.store(false, Ordering::Relaxed);
            s.unwatch_all();
            s.unsubscribe_all();
            s.db = 0;
            s.entry.db.store(0, Ordering::Relaxed);
            s.resp3 = false;
            s.entry.resp.store(2, Ordering::Relaxed);
            // A CLIENT REPLY SKIP just before still skips RESET's own
            // reply, as in Redis; OFF ends.
            if s.reply_mode != ReplyMode::Skip {
                s.reply_mode = ReplyMode::On;
            }
            *s.entry.name.lock() = None;
            if s.track.take().is_some() {
                shared.tracking.disable(s.id);
            }
            s.entry.tracking.store(0, Ordering::Relaxed);
            s.entry.redir.store(-1, Ordering::Relaxed);
            s.caching = false;
            // Back to the default user, authenticated only if it needs no
            // password.
            let user = shared.acl.default_user();
            s.authenticated = user.enabled && user.nopass;
            *s.entry.user.lock() = user.name.clone();
            s.user = user;
            s.acl_gen = shared.acl.generation();
            Reply::Simple("RESET".into())
        }
        "hello" => crate::handshake::hello(s, shared, argv),
        "auth" => crate::handshake::auth(s, shared, argv),
        "acl" => crate::acl_cmd::acl(s, shared, argv),
        "multi" => {
            if s.multi.is_some() {
                err("ERR MULTI calls can not be nested")
            } else {
                s.multi = Some(Vec::new());
                s.multi_mem = 0;
                s.multi_failed = false;
                s.entry.in_multi.store(true, Ordering::Relaxed);
                s.entry.multi_len.store(0, Ordering::Relaxed);
                Reply::Ok
            }
        }
        "discard" => {
            if s.multi.take().is_none() {
                err("ERR DISCARD without MULTI")
            } else {
                s.multi_failed = false;
                s.entry.in_multi.store(false, Ordering::Relaxed);
                s.entry.multi_len.store(-1, Ordering::Relaxed);
                s.unwatch_all();
                Reply::Ok
            }
        }
        "watch" => {
            if s.multi.is_some() {
                err("ERR WATCH inside MULTI is not allowed")
            } else {
                if guard.is_none() && shared.scripting.busy() {
                    // A busy script holds the keyspace: watch the keys as
                    // they stand (its writes to them will abort EXEC).
                    for k in &argv[1..] {
                        let key = Bytes::copy_from_slice(k);
                        if !s.watched.iter().any(|(d, k2)| *d == s.db && *k2 == key) {
                            shared.watch(s.id, s.db, key.clone(), &s.watch_dirty, true);
                            s.watched.push((s.db, key));
                        }
                    }
                    return Some(Reply::Ok);
                }
                let store = guard.get_or_insert_with(|| shared.lock_store());
                for k in &argv[1..] {
                    let key = Bytes::copy_from_slice(k);
                    // Expire it first, so an already-dead key does not abort EXEC.
                    let mut fx = shared.effects();
                    store.dbs[s.db].expire_if_due(s.db, &key, now_ms(), &mut fx);
                    shared.apply_effects(store, &mut fx);
                    if !s.watched.iter().any(|(d, k2)| *d == s.db && *k2 == key) {
                        let live = store.dbs[s.db].raw_get(&key).is_some();
                        shared.watch(s.id, s.db, key.clone(), &s.watch_dirty, live);
                        s.watched.push((s.db, key));
                    }
                }
                Reply::Ok
            }
        }
        "unwatch" => {
            s.unwatch_all();
            Reply::Ok
        }
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" => {
            crate::script::eval(s, shared, guard, spec, argv)
        }
        "script" => crate::script::script(shared, argv),
        "fcall" | "fcall_ro" => crate::script::fcall(s, shared, guard, spec, argv),
        "function" => crate::script::function(shared, guard, argv),
        "publish" => Reply::Int(shared.publish(argv[1], argv[2]) as i64),
        "spublish" => Reply::Int(shared.spublish(argv[1], argv[2]) as i64),
        "pubsub" => crate::pubsub::pubsub_command(shared, argv),
        "client" => {
            // Connections made before this command count (CLIENT LIST, KILL).
            crate::listen::catch_up(shared);
            return crate::client::client(s, shared, guard, argv);
        }
        "config" => crate::admin::config(shared, guard, argv, &s.entry),
        "command" => crate::command_cmd::command(argv),
        "info" => {
            // Connections made before this command count (connected_clients).
            crate::listen::catch_up(shared);
            if guard.is_none() && crate::loading::active() {
                // DEBUG RELOAD or LOADAOF holds the keyspace while it
                // loads: INFO answers at once (Redis answers it while it
                // loads), with the figures of an empty keyspace.
                match shared.store.try_lock() {
                    Some(g) => *guard = Some(g),
                    None => {
                        let empty = Store::new(0);
                        let text = crate::info::info(shared, &empty, &argv[1..]);
                        return Some(Reply::Verbatim(text.into()));
                    }
                }
            }
            let store = guard.get_or_insert_with(|| shared.lock_store());
            let text = crate::info::info(shared, store, &argv[1..]);
            Reply::Verbatim(text.into())
        }
        "lolwut" => crate::lolwut::lolwut(argv),
        "time" => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            Reply::Array(vec![
                Reply::text(now.as_secs().to_string()),
                Reply::text(now.subsec_micros().to_string()),
            ])
        }
        "cluster" | "readonly" | "readwrite" | "asking" => crate::cluster::disabled(),
        "wait" => crate::cluster::wait_now(argv),
        "migrate" => crate::migrate::migrate(shared, guard, s.db, now_ms(), argv),
        "module" => crate::module_cmd::module(argv),
        "lastsave" => Reply::Int(shared.last_save.load(Ordering::Relaxed) as i64),
        // ebb has no replication: always a master without replicas.
        "role" => Reply::Array(vec![
            Reply::text("master"),
            Reply::Int(0),
            Reply::Array(vec![]),
        ]),
        "save" => {
            if shared.bgsave_running.load(Ordering::Relaxed) {
                err("ERR Background save already in progress")
            } else {
                let store = guard.get_or_insert_with(|| shared.lock_store());
                match shared.save_now(store) {
                    Ok(()) => Reply::Ok,
                    Err(e) => err(format!("ERR {e}")),
                }
            }
        }
        "bgsave" => {
            let schedule = argv.get(1).is_some_and(|a| eq(a, "schedule"));
            if argv.len() > 2 || (argv.len() == 2 && !schedule) {
                Error::Syntax.into()
            } else {
                // As Redis: one snapshot at a time, and none while an AOF
                // rewrite runs unless scheduled for when it ends.
                if shared.bgsave_running.load(Ordering::SeqCst) {
                    err("ERR Background save already in progress")
                } else if shared.rewrite_running.load(Ordering::SeqCst) || in_exec() {
                    if schedule || in_exec() {
                        shared.bgsave_scheduled.store(true, Ordering::SeqCst);
                        Reply::Simple("Background saving scheduled".into())
                    } else {
                        err("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
                    }
                } else {
                    let store = guard.get_or_insert_with(|| shared.lock_store());
                    if shared.bgsave(store) {
                        Reply::Simple("Background saving started".into())
                    } else {
                        err("ERR Background save already in progress")
                    }
                }
            }
        }
        "bgrewriteaof" => {
            if shared.rewrite_running.load(Ordering::SeqCst) {
                err("ERR Background append only file rewriting already in progress")
            } else if shared.bgsave_running.load(Ordering::SeqCst) || in_exec() {
                // Started when the snapshot (or the transaction) is done,
                // as Redis does; asked for by hand, it is not held back by
                // earlier failures.
                shared.rewrite_scheduled.store(true, Ordering::SeqCst);
                crate::figures::AOF_REWRITE_FAILURES.store(0, Ordering::Relaxed);
                Reply::Simple("Background append only file rewriting scheduled".into())
            } else {
                let store = guard.get_or_insert_with(|| shared.lock_store());
                match shared.bgrewrite(store) {
                    Ok(()) => Reply::Simple("Background append only file rewriting started".into()),
                    Err(e) => err(e),
                }
            }
        }
        "debug" => crate::debug_cmd::debug(s, shared, guard, argv),
        "shutdown" => {
            let abort = argv[1..].iter().any(|a| eq(a, "abort"));
            if abort && argv[1..].iter().any(|a| !eq(a, "abort")) {
                // ABORT takes no other flag.
                Error::Syntax.into()
            } else if abort {
                if shared.shutdown_asked.swap(false, Ordering::SeqCst) {
                    tracing::warn!("Shutdown manually aborted.");
                    Reply::Ok
                } else {
                    err("ERR No shutdown in progress.")
                }
            } else if argv[1..]
                .iter()
                .all(|a| ["nosave", "save", "now", "force"].iter().any(|k| eq(a, k)))
            {
                let nosave = argv[1..].iter().any(|a| eq(a, "nosave"));
                let save = argv[1..].iter().any(|a| eq(a, "save"));
                if nosave && save {
                    return Some(Error::Syntax.into());
                }
                if shared.scripting.busy() {
                    // Only SHUTDOWN NOSAVE ends a busy script: the server
                    // exits at once, with the log flushed but nothing saved.
                    if !nosave {
                        return Some(err(shared.scripting.busy_reply()));
                    }
                    tracing::warn!("User requested shutdown while a script was busy...");
                    shared.exit_now();
                }
                let force = argv[1..].iter().any(|a| eq(a, "force"));
                // While the data loads nothing is saved, as in Redis: the
                // files on disk must not be replaced by half the data.
                let (nosave, save) = if crate::loading::active() {
                    (true, false)
                } else {
                    (nosave, save)
                };
                tracing::info!("User requested shutdown...");
                if shared.writing_initial_aof() {
                    if !force {
                        tracing::warn!("Writing initial AOF, can't exit.");
                        return Some(err("ERR Errors trying to SHUTDOWN. Check logs."));
                    }
                    tracing::warn!("Writing initial AOF. Exit anyway.");
                }
                // NOSAVE skips the snapshot the save rules would take; SAVE
                // takes one even without rules. The process exits from
                // here, the keyspace still locked, so nothing runs after
                // the final snapshot; a snapshot that fails keeps the
                // server up (unless FORCE), as in Redis.
                let store = guard.get_or_insert_with(|| shared.lock_store());
                if shared.persist_on_shutdown(store, nosave, save).is_err() && !force {
                    tracing::warn!("Error trying to save the DB, can't exit.");
                    return Some(err("ERR Errors trying to SHUTDOWN. Check logs."));
                }
                tracing::info!("ebb is now ready to exit, bye bye...");
                crate::process::remove_files();
                std::process::exit(0);
            } else {
                Error::Syntax.into()
            }
        }
        _ => ebb_core::error::unknown_command(argv).into(),
    };
    Some(r)
}
