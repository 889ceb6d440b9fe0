//! EXEC: running a transaction's queued commands, and running core
//! commands for transactions and scripts with the wake-ups of blocked
//! clients held until the whole of it is over.

use bytes::{Bytes, BytesMut};
use ebb_core::{CommandSpec, Exec, Reply, Store};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::commands::{eq, err, reply_for, subscriptions, Guard};
use crate::conn::Session;
use crate::resp;
use crate::server::{now_ms, Shared};

/// One queued command's share of EXEC's reply.
pub(crate) enum Part {
    Reply(Reply),
    /// Replies already encoded (a subscription's, one per channel).
    Raw(BytesMut),
}

thread_local! {
    /// A transaction's commands are running on this thread (Redis's
    /// `server.in_exec`): background saves and rewrites asked for are
    /// scheduled rather than started.
    static IN_EXEC: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a transaction's commands are running on this thread.
pub fn in_exec() -> bool {
    IN_EXEC.with(|e| e.get())
}

/// Marks the transaction running on this thread until dropped.
struct InExec;

impl InExec {
    fn enter() -> InExec {
        IN_EXEC.with(|e| e.set(true));
        InExec
    }
}

impl Drop for InExec {
    fn drop(&mut self) {
        IN_EXEC.with(|e| e.set(false));
    }
}

/// EXEC: the queued commands' replies, or the reply that replaces them
/// all (an error, or the null array of an aborted transaction).
pub(crate) fn exec<'a>(
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
) -> Result<Vec<Part>, Reply> {
    let Some(queue) = s.multi.take() else {
        return Err(err("ERR EXEC without MULTI"));
    };
    // CLIENT LIST shows the transaction (`x`, `multi=`) until EXEC ends.
    let _done = MultiEnds(s.entry.clone());
    if s.multi_failed {
        s.multi_failed = false;
        s.unwatch_all();
        return Err(err(
            "EXECABORT Transaction discarded because of previous errors.",
        ));
    }
    // (A transaction that may grow memory over maxmemory was refused
    // before EXEC ran: see the session's dispatch.)
    let store = guard.get_or_insert_with(|| shared.lock_store());
    // Expiry is checked against the time EXEC starts, as in Redis: a key
    // (or member) that expires while the queued commands run reads as
    // present until EXEC ends. Expiry of a watched key (or of one of its
    // members) counts as a change.
    let now = now_ms();
    for (db, key) in s.watched.clone() {
        // A watched key past its TTL aborts the transaction; as in Redis,
        // it is left for its expiry to delete (no event, no count here).
        let key_due = store.dbs[db]
            .raw_get(&key)
            .and_then(|e| e.expire_at())
            .is_some_and(|t| t <= now);
        if key_due {
            if shared.watched_live(s.id, db, &key) {
                s.watch_dirty.store(true, Ordering::Relaxed);
            }
            continue;
        }
        let mut fx = shared.effects();
        store.dbs[db].expire_if_due(db, &key, now, &mut fx);
        if !shared.watched_live(s.id, db, &key) {
            // Missing when watched and already expired now (SWAPDB brought
            // in a stale key): logically it never existed, no change.
            fx.touched.retain(|(d, k)| !(*d == db && *k == key));
            fx.expired_touched.retain(|(d, k)| !(*d == db && *k == key));
        }
        shared.apply_effects(store, &mut fx);
    }
    if s.watch_dirty.load(Ordering::Relaxed) {
        s.unwatch_all();
        return Err(Reply::NilArray);
    }
    s.unwatch_all();
    let writes = queue
        .iter()
        .any(|a| crate::rename::lookup(&a[0]).is_some_and(|sp| sp.is_write()));
    if writes {
        shared.log_raw(s.db, &[Bytes::from_static(b"MULTI")]);
    }
    let mut replies = Vec::with_capacity(queue.len());
    // Keys made ready inside the transaction wake blocked clients only once
    // it is over, as in Redis: a list pushed and deleted again by the same
    // EXEC wakes nobody, and a woken client sees the final state.
    let mut ready = Vec::new();
    s.refresh_user(shared);
    let _in_exec = InExec::enter();
    for argv in queue {
        let argv = ebb_core::args::views(&argv);
        let Some(spec) = crate::rename::lookup(argv[0]) else {
            continue;
        };
        // The rules may have changed since the command was queued.
        if !s.user.unrestricted && !spec.has(ebb_core::table::flag::NO_AUTH) {
            let slot = crate::cmdstats::slot_of(spec, &argv);
            if let Err(d) = crate::acl::Acl::check(&s.user, spec, slot, &argv) {
                let name = slot.map_or(spec.name, crate::cmdstats::slot_name);
                crate::acl_cmd::log_denied(shared, s, d, &argv, name, "multi");
                let reason = match d {
                    crate::acl::Denied::Command => {
                        "no permission to execute the command or subcommand"
                    }
                    crate::acl::Denied::Key(_) => "no permission to touch the specified keys",
                    crate::acl::Denied::Channel(_) => {
                        "no permission to access one of the channels used as arguments"
                    }
                };
                let e = format!(
                    "NOPERM ACLs rules changed between the moment the transaction was \
                     accumulated and the EXEC call. This command is no longer allowed for the \
                     following reason: {reason}"
                );
                s.note_error(&e);
                replies.push(Part::Reply(err(e)));
                continue;
            }
        }
        // Each queued command counts as a call of its own (INFO
        // commandstats), failed if it replies an error.
        s.err_mark = s.err_seq;
        if crate::observe::monitoring() {
            crate::observe::feed(s.id, s.db, &s.entry.addr, spec, &argv);
        }
        let start = crate::cmdstats::ticks();
        let part = match spec.exec {
            // A PING after a SUBSCRIBE of the same transaction answers as
            // a subscribed RESP2 client's does.
            Exec::Core(_) if spec.name == "ping" && argv.len() <= 2 && s.subscribed_resp2() => {
                let msg = argv.get(1).copied().unwrap_or_default();
                Part::Reply(Reply::Array(vec![Reply::bulk(b"pong"), Reply::bulk(msg)]))
            }
            Exec::Core(_) => {
                let store = guard.get_or_insert_with(|| shared.lock_store());
                Part::Reply(run_core_deferred(
                    shared, store, s.db, now, s.resp3, false, &s.user, spec, &argv, &mut ready,
                ))
            }
            Exec::Server => match spec.name {
                "exec" | "multi" | "shutdown" => {
                    Part::Reply(err("ERR Command not allowed inside a transaction"))
                }
                "monitor" => Part::Reply(err("ERR MONITOR isn't allowed for DENY BLOCKING client")),
                // As Redis: a transaction expects one reply per command.
                "ssubscribe" => Part::Reply(err(
                    "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client",
                )),
                // Written as given and not counted, as outside EXEC.
                "debug" if argv.len() == 3 && eq(argv[1], "error") => {
                    let mut raw = BytesMut::from(&crate::debug_cmd::error_line(argv[2])[..]);
                    raw.extend_from_slice(b"\r\n");
                    Part::Raw(raw)
                }
                // Redis 7.0 runs the others, their replies inside EXEC's.
                "subscribe" | "psubscribe" | "unsubscribe" | "punsubscribe" | "sunsubscribe" => {
                    let mut raw = BytesMut::new();
                    subscriptions(s, shared, spec, &argv, &mut raw);
                    Part::Raw(raw)
                }
                _ => {
                    // INFO and the like see the counts of the commands
                    // this EXEC already ran.
                    s.publish_stats();
                    Part::Reply(reply_for(s, shared, guard, spec, &argv).unwrap_or(Reply::Ok))
                }
            },
        };
        if let Part::Reply(Reply::Error(e)) = &part {
            s.note_error(e);
        }
        s.track_read(shared, spec, &argv);
        let took = crate::cmdstats::ticks().saturating_sub(start);
        // The slow log shows the commands EXEC ran, not EXEC, as in Redis.
        let us = crate::cmdstats::ticks_to_us(took);
        crate::observe::record(std::time::Duration::from_micros(us), spec, &argv, &s.entry);
        if let Some(slot) = crate::cmdstats::slot_of(spec, &argv) {
            let failed = s.err_seq > s.err_mark;
            s.count_call(slot, took, failed);
        }
        s.err_mark = s.err_seq;
        // A RESP3 subscriber's own messages from this command come between
        // EXEC's elements, ahead of the command's reply, as Redis writes
        // them (see the session's `execute_in_order`).
        let own = crate::pubsub::take_own();
        if own.is_empty() {
            replies.push(part);
        } else {
            let mut raw = BytesMut::new();
            for items in &own {
                resp::encode_push(items, true, &mut raw);
            }
            match part {
                Part::Reply(r) => resp::encode(&r, s.resp3, &mut raw),
                Part::Raw(b) => raw.extend_from_slice(&b),
            }
            replies.push(Part::Raw(raw));
        }
    }
    if writes {
        shared.log_raw(s.db, &[Bytes::from_static(b"EXEC")]);
    }
    if !ready.is_empty() {
        let store = guard.get_or_insert_with(|| shared.lock_store());
        serve_ready(shared, store, ready);
    }
    Ok(replies)
}

/// Clears a client's transaction state for CLIENT LIST when dropped (at
/// the end of EXEC, however it ends).
struct MultiEnds(Arc<crate::server::ClientEntry>);

impl Drop for MultiEnds {
    fn drop(&mut self) {
        self.0.in_multi.store(false, Ordering::Relaxed);
        self.0.multi_len.store(-1, Ordering::Relaxed);
    }
}

/// Runs a core command of a transaction or a script like
/// `Session::run_core`, in database `db` at time `now`, but keeps the keys
/// it made ready in `ready` instead of serving blocked clients at once
/// (they are served when the whole EXEC or script is over: see
/// [`serve_ready`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_core_deferred(
    shared: &Arc<Shared>,
    store: &mut Store,
    db: usize,
    now: u64,
    resp3: bool,
    in_script: bool,
    user: &crate::acl::User,
    spec: &'static CommandSpec,
    argv: &[&[u8]],
    ready: &mut Vec<(usize, Bytes)>,
) -> Reply {
    if spec.name == "memory" {
        if let Some(r) = crate::info::memory_server(shared, store, argv) {
            return r;
        }
    }
    let mut fx = shared.effects();
    let r = {
        let mut ctx = ebb_core::Ctx::new(store, db, now, &mut fx);
        // Expiry is checked against `now`, read as the transaction or
        // script started; TTLs and relative times read the clock, as in
        // Redis.
        ctx.clock = now_ms().max(now);
        ctx.resp3 = resp3;
        ctx.may_block = false;
        ctx.in_script = in_script;
        ctx.reads_every_key = crate::acl::reads_every_key(user, spec, argv);
        ebb_core::execute_result(&mut ctx, spec, argv)
    };
    shared.log_command(db, spec, argv, &mut fx);
    ready.append(&mut fx.ready);
    let flushed_all = std::mem::take(&mut fx.flushed_all);
    shared.apply_effects(store, &mut fx);
    if flushed_all {
        shared.after_flushall(store);
    }
    r.unwrap_or_else(Reply::from)
}

/// Serves the clients blocked on keys a transaction or script made ready.
pub(crate) fn serve_ready(shared: &Shared, store: &mut Store, ready: Vec<(usize, Bytes)>) {
    if !ready.is_empty() {
        let mut fx = shared.effects();
        fx.ready = ready;
        shared.apply_effects(store, &mut fx);
    }
}
