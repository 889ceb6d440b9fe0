//! Running one request: the checks Redis makes before a command runs
//! (arity, authentication, subscribed mode, maxmemory, MULTI queuing,
//! CLIENT PAUSE), then the command itself, timed for the slow log and the
//! per-command statistics.

use bytes::BytesMut;
use ebb_core::table::flag;
use ebb_core::{CommandSpec, Ctx, Error, Exec, Reply, Store};
use parking_lot::MutexGuard;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Flow, Session};
use crate::server::{now_ms, ClientEntry, Shared};

/// How long one reading of the clock serves commands (a clock reading
/// costs as much as a whole GET; the millisecond clock barely moves).
pub(super) const CLOCK_REUSE_US: u64 = 100;

/// Fast commands timed as one run at most (so a long pipeline still reads
/// the duration counter, and with it the clock's age, now and then).
const MAX_RUN: u64 = 32;

/// While a script runs past `busy-reply-threshold`, the refusal of every
/// command but those Redis allows then (SCRIPT KILL, SHUTDOWN, AUTH,
/// HELLO, MULTI, DISCARD, WATCH, …).
fn busy_refusal(shared: &Shared, spec: &CommandSpec, argv: &[&[u8]]) -> Option<Reply> {
    if !shared.scripting.busy()
        || spec.has_flag("allow_busy")
        || (spec.name == "script" && argv[1].eq_ignore_ascii_case(b"kill"))
        || (spec.name == "function"
            && (argv[1].eq_ignore_ascii_case(b"kill") || argv[1].eq_ignore_ascii_case(b"stats")))
    {
        return None;
    }
    Some(Reply::Error(shared.scripting.busy_reply().into()))
}

/// While the dataset loads at start, Redis's refusal of a command without
/// the `loading` flag. DEBUG RELOAD, LOADAOF and POPULATE and CONFIG SET
/// of the options that name or switch the data files are refused too:
/// they would act on the empty keyspace the loaded one is about to
/// replace. (SHUTDOWN then saves nothing, as in Redis.)
fn loading_refusal(spec: &CommandSpec, slot: Option<usize>, argv: &[&[u8]]) -> Option<Reply> {
    if !crate::loading::active() {
        return None;
    }
    let allowed = slot.is_some_and(crate::cmdstats::allowed_while_loading);
    let unsafe_now = match spec.name {
        "debug" => ["reload", "loadaof", "populate"]
            .iter()
            .any(|s| argv[1].eq_ignore_ascii_case(s.as_bytes())),
        "config" => {
            argv[1].eq_ignore_ascii_case(b"set")
                && argv[2..].iter().step_by(2).any(|o| {
                    ["appendonly", "dir", "dbfilename"]
                        .iter()
                        .any(|n| o.eq_ignore_ascii_case(n.as_bytes()))
                })
        }
        _ => false,
    };
    (!allowed || unsafe_now).then(|| Reply::Error(crate::loading::REFUSAL.into()))
}

/// A run of fast commands of one kind timed together (see
/// [`Session::close_run`]).
#[derive(Debug, Clone, Copy)]
pub struct Run {
    slot: usize,
    calls: u64,
    failed: u64,
    start: u64,
}

impl Session {
    /// Counts an error reply (INFO errorstats, failed calls).
    pub fn note_error(&mut self, text: &str) {
        self.err_seq += 1;
        if !std::mem::take(&mut self.error_counted) {
            crate::cmdstats::record_error(text);
        }
    }

    /// Counts a call that ran (INFO commandstats and
    /// `total_commands_processed`; refused commands count in neither).
    pub fn count_call(&mut self, slot: usize, ticks: u64, failed: bool) {
        self.batch_commands += 1;
        self.tally.add(slot, ticks, failed);
    }

    /// Marks a parked command's call failed if its wait ended in an error.
    pub(super) fn finish_blocked(&mut self) {
        if let Some(slot) = self.blocked_call.take() {
            let failed = self.err_seq > self.err_mark;
            self.err_mark = self.err_seq;
            if failed {
                crate::cmdstats::record_failed(slot);
            }
        }
    }

    /// Runs one request: refused, queued, held by a pause, or executed.
    pub(super) fn dispatch<'a>(
        &mut self,
        shared: &'a Arc<Shared>,
        guard: &mut Option<MutexGuard<'a, Store>>,
        argv: &[&[u8]],
        out: &mut BytesMut,
    ) -> Flow {
        // Pipelines mostly repeat one command: compare with the previous
        // one before hashing the name.
        let cached = self.prev_spec.filter(|s| {
            argv[0].eq_ignore_ascii_case(s.name.as_bytes()) && !crate::rename::active()
        });
        let repeat = cached.is_some();
        let Some(spec) = cached.or_else(|| crate::rename::lookup(argv[0])) else {
            if self.multi.is_some() {
                self.multi_failed = true;
            }
            self.reply(&ebb_core::error::unknown_command(argv).into(), out);
            return Flow::Continue;
        };
        self.prev_spec = Some(spec);
        if self.tracking_live {
            // A lowered tracking-table-max-keys takes effect before the
            // next command, whose reply follows the invalidations.
            shared.tracking.enforce_limit(&shared.clients);
            self.write_own_notes(out);
        }
        let plain = match self.prev_plain_slot {
            Some(i) if repeat => Some(i),
            _ => crate::cmdstats::plain_slot(spec),
        };
        self.prev_plain_slot = plain;
        let slot = plain.or_else(|| crate::cmdstats::slot_of(spec, argv));
        self.last_cmd = Some(slot.unwrap_or_else(|| ebb_core::table::index_of(spec)));
        if let Some(flow) = self.admit(shared, guard, spec, slot, plain.is_some(), argv, out) {
            return flow;
        }
        if self.multi.is_none()
            && crate::outbuf::surely_over_hard(spec.name, argv)
            && !self.subscribed()
        {
            tracing::warn!(
                client = self.id,
                "client closed for overcoming of output buffer limits"
            );
            out.clear();
            return Flow::Close;
        }
        // EXEC shows in MONITOR after the commands it ran, as in Redis.
        let is_exec = spec.name == "exec";
        if !is_exec && crate::observe::monitoring() {
            crate::observe::feed(self.id, self.db, &self.entry.addr, spec, argv);
        }
        self.err_mark = self.err_seq;
        // A fast command (constant time: GET, INCR, ZADD, …) joins a run of
        // the same command, timed as a whole when the run ends: one reading
        // of the duration counter per run instead of one per command.
        if let Some(slot) = slot.filter(|_| {
            spec.has(flag::FAST)
                && matches!(spec.exec, Exec::Core(_))
                && crate::observe::runs_allowed()
        }) {
            match self.run {
                Some(r) if r.slot == slot && r.calls < MAX_RUN => {}
                _ => {
                    self.close_run();
                    let start = self.mark_ticks();
                    self.run = Some(Run {
                        slot,
                        calls: 0,
                        failed: 0,
                        start,
                    });
                }
            }
            let flow = self.execute_in_order(shared, guard, spec, argv, out);
            self.after_command(shared, spec, argv, out);
            let failed = self.err_seq > self.err_mark;
            self.err_mark = self.err_seq;
            if let Some(r) = self.run.as_mut() {
                r.calls += 1;
                r.failed += failed as u64;
            }
            self.batch_commands += 1;
            return flow;
        }
        self.close_run();
        // The previous command's end reading is this one's start (and the
        // reading `now` compares the clock's age with).
        let start = self.mark_ticks();
        let db = self.db;
        let flow = self.execute_in_order(shared, guard, spec, argv, out);
        self.after_command(shared, spec, argv, out);
        if is_exec && crate::observe::monitoring() {
            crate::observe::feed(self.id, db, &self.entry.addr, spec, argv);
        }
        let end = crate::cmdstats::ticks();
        self.ticks_last = end;
        let took = end.saturating_sub(start);
        let blocked = matches!(flow, Flow::Block(..));
        if !blocked {
            let us = crate::cmdstats::ticks_to_us(took);
            crate::observe::record(Duration::from_micros(us), spec, argv, &self.entry);
        }
        if let Some(slot) = slot {
            if blocked {
                // Counted when it parks, as in Redis; a wait that ends in an
                // error (CLIENT UNBLOCK … ERROR) makes it a failed call.
                self.count_call(slot, took, false);
                self.blocked_call = Some(slot);
            } else {
                self.count_call(slot, took, self.err_seq > self.err_mark);
                self.err_mark = self.err_seq;
            }
        }
        flow
    }

    /// CLIENT TRACKING's part after a command: its keys are remembered if
    /// it read them, and CLIENT CACHING lasts one command (or transaction).
    #[inline]
    fn after_command(
        &mut self,
        shared: &Shared,
        spec: &CommandSpec,
        argv: &[&[u8]],
        out: &mut BytesMut,
    ) {
        if !self.tracking_live {
            // Tracking turned on by this very command (CLIENT TRACKING).
            if self.track.is_some() {
                self.tracking_live = true;
                crate::tracking::set_origin(self.id);
            }
            return;
        }
        // What the command made for this connection follows its reply.
        self.write_own_notes(out);
        if self.track.is_none() && !self.caching {
            return;
        }
        self.track_read(shared, spec, argv);
        if self.multi.is_none() && spec.name != "client" {
            self.caching = false;
        }
    }

    /// Whether the keys this client reads now are remembered for it:
    /// tracking in the default mode, with OPTIN only after CLIENT CACHING
    /// YES and with OPTOUT unless CLIENT CACHING NO.
    pub fn remembers_reads(&self) -> bool {
        match &self.track {
            None => false,
            Some(m) if m.bcast => false,
            Some(m) if m.optin => self.caching,
            Some(m) if m.optout => !self.caching,
            Some(_) => true,
        }
    }

    /// Writes the tracking messages made for this connection while it ran
    /// a command (see `tracking::take_own`).
    pub fn write_own_notes(&mut self, out: &mut BytesMut) {
        if crate::tracking::has_own() {
            let subscribed = self.subscribed();
            for n in crate::tracking::take_own() {
                crate::tracking::encode(&n, self.resp3, subscribed, out);
            }
        }
    }

    /// Remembers the keys a read-only command read, for a client tracking
    /// in the default mode (with OPTIN only after CLIENT CACHING YES, with
    /// OPTOUT unless CLIENT CACHING NO). Scripts are handled by their
    /// calls: a script that reads has its declared keys remembered.
    pub fn track_read(&mut self, shared: &Shared, spec: &CommandSpec, argv: &[&[u8]]) {
        if !spec.has(flag::READONLY) || matches!(spec.name, "eval_ro" | "evalsha_ro" | "fcall_ro") {
            return;
        }
        if self.remembers_reads() {
            let keys = spec.key_positions(argv);
            if !keys.is_empty() {
                shared
                    .tracking
                    .remember(&shared.clients, self.id, keys.iter().map(|&i| argv[i]));
            }
        }
    }

    /// The checks Redis makes before a command runs. `Some` when the
    /// request ends here: refused (counted as a rejected call), queued by
    /// MULTI, answered in subscribed mode, or held by CLIENT PAUSE.
    #[allow(clippy::too_many_arguments)]
    fn admit<'a>(
        &mut self,
        shared: &'a Arc<Shared>,
        guard: &mut Option<MutexGuard<'a, Store>>,
        spec: &'static CommandSpec,
        slot: Option<usize>,
        plain: bool,
        argv: &[&[u8]],
        out: &mut BytesMut,
    ) -> Option<Flow> {
        let refusal: Reply = if !spec.arity_ok(argv.len()) {
            Error::WrongArity(spec.name.to_string()).into()
        } else if slot.is_none() {
            // A container command (CONFIG, CLIENT, …) with a subcommand it
            // does not have is refused like an unknown command.
            ebb_core::error::unknown_subcommand(argv[1], spec.name).into()
        } else if let Some(Err(full)) = slot
            .filter(|_| !plain)
            .map(|i| crate::cmdstats::sub_arity_ok(i, argv.len()))
        {
            Error::WrongArity(full.to_string()).into()
        } else if let Some(r) = protected_refusal(shared, spec, slot, &self.entry) {
            r
        } else if !self.authenticated && !spec.has(flag::NO_AUTH) {
            Reply::Error("NOAUTH Authentication required.".into())
        } else if self.multi.is_some() && spec.has_flag("no_multi") {
            // In Redis's order: authentication, then this, then memory,
            // subscribed mode and a busy script.
            Reply::Error("ERR Command not allowed inside a transaction".into())
        } else if let Some(r) = self.acl_refusal(shared, spec, slot, argv) {
            r
        } else if let Some(r) = self.oom_refusal(shared, guard, spec, argv) {
            r
        } else if let Some(r) = crate::misconf::refusal_for(shared, spec, argv, || {
            self.queued_any(|sp, a| crate::misconf::writes(shared, sp, a))
        }) {
            r
        } else if let Some(r) = self.subscribed_refusal(spec, slot) {
            r
        } else if let Some(r) = loading_refusal(spec, slot, argv) {
            r
        } else if let Some(r) = busy_refusal(shared, spec, argv) {
            r
        } else if self.subscribed_ping(spec, slot, argv, out) {
            return Some(Flow::Continue);
        } else if self.multi.is_some()
            && !matches!(
                spec.name,
                "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
            )
        {
            if let Some(q) = self.multi.as_mut() {
                // The copy queued: each argument and its handle, and the
                // command's list.
                self.multi_mem += argv
                    .iter()
                    .map(|a| a.len() + std::mem::size_of::<bytes::Bytes>())
                    .sum::<usize>()
                    + std::mem::size_of::<Vec<bytes::Bytes>>();
                q.push(ebb_core::args::to_owned(argv));
                self.entry
                    .multi_len
                    .store(q.len() as i64, Ordering::Relaxed);
            }
            self.reply(&Reply::Simple("QUEUED".into()), out);
            return Some(Flow::Continue);
        } else if self.held_by_pause(shared, spec, argv) {
            return Some(Flow::Paused(ebb_core::args::to_owned(argv)));
        } else {
            return None;
        };
        if let Some(slot) = slot {
            crate::cmdstats::record_rejected(slot);
        }
        if self.multi.is_some() {
            self.multi_failed = true;
        }
        let refusal = if spec.name == "exec" {
            self.exec_abort(refusal)
        } else {
            refusal
        };
        self.reply(&refusal, out);
        Some(Flow::Continue)
    }

    /// A refused EXEC discards the transaction (if any) and says why, as
    /// Redis does.
    fn exec_abort(&mut self, refusal: Reply) -> Reply {
        self.multi = None;
        self.multi_failed = false;
        self.entry.in_multi.store(false, Ordering::Relaxed);
        self.entry.multi_len.store(-1, Ordering::Relaxed);
        self.unwatch_all();
        let why = match &refusal {
            Reply::Error(t) => t.strip_prefix("ERR ").unwrap_or(t),
            _ => "",
        };
        Reply::Error(format!("EXECABORT Transaction discarded because of: {why}").into())
    }

    /// Whether the client is in RESP2 subscribed mode.
    pub(crate) fn subscribed_resp2(&self) -> bool {
        !self.resp3 && self.subscribed()
    }

    /// In RESP2 subscribed mode PING answers as a message array; true if
    /// it was answered here.
    fn subscribed_ping(
        &mut self,
        spec: &CommandSpec,
        slot: Option<usize>,
        argv: &[&[u8]],
        out: &mut BytesMut,
    ) -> bool {
        if spec.name != "ping" || argv.len() > 2 || !self.subscribed_resp2() {
            return false;
        }
        let msg = argv.get(1).copied().unwrap_or_default();
        self.reply(
            &Reply::Array(vec![Reply::bulk(b"pong"), Reply::bulk(msg)]),
            out,
        );
        if let Some(slot) = slot {
            self.count_call(slot, 0, false);
        }
        true
    }

    /// In RESP2 subscribed mode only (P)(UN)SUBSCRIBE, PING, QUIT and RESET
    /// run: the error for any other command.
    fn subscribed_refusal(&self, spec: &CommandSpec, slot: Option<usize>) -> Option<Reply> {
        let allowed = matches!(
            spec.name,
            "subscribe"
                | "psubscribe"
                | "ssubscribe"
                | "unsubscribe"
                | "punsubscribe"
                | "sunsubscribe"
                | "ping"
                | "quit"
                | "reset"
        );
        (self.subscribed_resp2() && !allowed).then(|| {
            Reply::Error(
                format!(
                    "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
                    slot.map_or(spec.name, crate::cmdstats::slot_name)
                )
                .into(),
            )
        })
    }

    /// The NOPERM refusal of a command the session's ACL user may not run
    /// (or run on those keys or channels), logged in the ACL log.
    fn acl_refusal(
        &mut self,
        shared: &Shared,
        spec: &'static CommandSpec,
        slot: Option<usize>,
        argv: &[&[u8]],
    ) -> Option<Reply> {
        self.refresh_user(shared);
        // AUTH, HELLO, RESET and QUIT need no permission.
        if self.user.unrestricted || spec.has(flag::NO_AUTH) {
            return None;
        }
        let denied = crate::acl::Acl::check(&self.user, spec, slot, argv).err()?;
        let name = slot.map_or(spec.name, crate::cmdstats::slot_name);
        let context = if self.multi.is_some() {
            "multi"
        } else {
            "toplevel"
        };
        crate::acl_cmd::log_denied(shared, self, denied, argv, name, context);
        Some(crate::acl::noperm(denied, name))
    }

    /// Picks up changes to the session's ACL user (ACL SETUSER).
    pub fn refresh_user(&mut self, shared: &Shared) {
        let g = shared.acl.generation();
        if g != self.acl_gen {
            self.acl_gen = g;
            if let Some(u) = shared.acl.user(&self.user.name) {
                self.user = u;
            }
        }
    }

    /// Over maxmemory with nothing left to evict, Redis refuses commands
    /// that may grow memory, every command queued inside MULTI (the queue
    /// itself grows), and an EXEC whose queue holds such commands (which
    /// also discards the transaction).
    fn oom_refusal<'a>(
        &mut self,
        shared: &'a Arc<Shared>,
        guard: &mut Option<MutexGuard<'a, Store>>,
        spec: &CommandSpec,
        argv: &[&[u8]],
    ) -> Option<Reply> {
        let exec = spec.name == "exec";
        // FUNCTION LOAD and RESTORE are Redis's `denyoom` subcommands.
        let grows_functions = spec.name == "function"
            && (argv[1].eq_ignore_ascii_case(b"load") || argv[1].eq_ignore_ascii_case(b"restore"));
        let applies = spec.has(flag::DENYOOM)
            || grows_functions
            || (self.multi.is_some()
                && !matches!(spec.name, "exec" | "discard" | "quit" | "reset"))
            || (exec && self.queued_any(|sp, _| sp.has(flag::DENYOOM)));
        // A busy script holds the keyspace: no eviction until it ends.
        if !crate::evict::limited() || shared.scripting.busy() {
            return None;
        }
        // Redis evicts before every command while memory is over the
        // limit; only a command that may grow memory is refused when
        // nothing can be evicted.
        let store = guard.get_or_insert_with(|| shared.lock_store());
        let evicted = crate::evict::make_room(shared, store);
        if !applies {
            return None;
        }
        evicted.err().map(Reply::from)
    }

    /// Whether CLIENT PAUSE holds this command. A pause of all commands
    /// holds every one (CLIENT UNPAUSE, PING and INFO too), as Redis 7.0
    /// does; a write pause holds writes, PUBLISH (it would reach
    /// replicas), and an EXEC whose transaction holds either.
    fn held_by_pause(&self, shared: &Shared, spec: &'static CommandSpec, argv: &[&[u8]]) -> bool {
        let paused = shared.paused_until.load(Ordering::Relaxed);
        if paused == 0 || paused <= now_ms() {
            return false;
        }
        // EVAL, EVALSHA and FCALL may write unless the script or function
        // declares `no-writes` (their read-only forms may not).
        // Redis holds what writes (a subcommand by its own flag, as
        // FUNCTION LOAD) or may replicate (PUBLISH, SPUBLISH).
        let writes = |sp: &'static CommandSpec, argv: &[&[u8]]| {
            sp.is_write()
                || matches!(sp.name, "publish" | "spublish")
                || crate::cmdstats::slot_of(sp, argv).is_some_and(crate::cmdstats::writes)
                || crate::script::may_write(shared, sp, argv)
        };
        writes(spec, argv)
            || !shared.pause_writes_only.load(Ordering::Relaxed)
            || (spec.name == "exec" && self.queued_any(writes))
    }

    /// Whether a command queued by MULTI satisfies `pred`.
    fn queued_any(&self, pred: impl Fn(&'static CommandSpec, &[&[u8]]) -> bool) -> bool {
        self.multi.as_ref().is_some_and(|q| {
            q.iter().any(|a| {
                crate::rename::lookup(&a[0]).is_some_and(|sp| pred(sp, &ebb_core::args::views(a)))
            })
        })
    }

    /// The duration counter now, as this batch last read it (commands of
    /// a batch run back to back, so one command's end is the next one's
    /// start); read afresh at a batch's start.
    fn mark_ticks(&mut self) -> u64 {
        if self.ticks_last == 0 {
            self.ticks_last = crate::cmdstats::ticks();
        }
        self.ticks_last
    }

    /// Ends the current run of fast commands: their time is shared out
    /// evenly between them.
    pub fn close_run(&mut self) {
        if let Some(r) = self.run.take() {
            let end = crate::cmdstats::ticks();
            self.ticks_last = end;
            self.tally
                .add_run(r.slot, r.calls, end.saturating_sub(r.start), r.failed);
        }
    }

    /// Runs a command that passed every check; for a RESP3 subscriber,
    /// the messages its own command sends it (keyspace events of its
    /// writes, a PUBLISH to itself) come ahead of the reply, as Redis
    /// writes them.
    fn execute_in_order<'a>(
        &mut self,
        shared: &'a Arc<Shared>,
        guard: &mut Option<MutexGuard<'a, Store>>,
        spec: &'static CommandSpec,
        argv: &[&[u8]],
        out: &mut BytesMut,
    ) -> Flow {
        if !(self.resp3 && self.subscribed()) {
            return self.execute(shared, guard, spec, argv, out);
        }
        crate::pubsub::set_own(self.id);
        let mark = out.len();
        let flow = self.execute(shared, guard, spec, argv, out);
        crate::pubsub::set_own(0);
        let own = crate::pubsub::take_own();
        if !own.is_empty() {
            let reply = out.split_off(mark);
            for items in &own {
                crate::resp::encode_push(items, true, out);
            }
            out.extend_from_slice(&reply);
        }
        flow
    }

    /// Runs a command that passed every check.
    fn execute<'a>(
        &mut self,
        shared: &'a Arc<Shared>,
        guard: &mut Option<MutexGuard<'a, Store>>,
        spec: &'static CommandSpec,
        argv: &[&[u8]],
        out: &mut BytesMut,
    ) -> Flow {
        // Messages an eviction made before the command ran come before
        // its reply, as in Redis.
        if self.tracking_live {
            self.write_own_notes(out);
        }
        match spec.exec {
            Exec::Core(_) => {
                let store = guard.get_or_insert_with(|| shared.lock_store());
                // A command of several keys (MSET, MGET, DEL …) has their
                // slots loading together rather than one after another.
                if spec.step > 0
                    && spec.last_key != spec.first_key
                    && store.worth_prefetching(self.db)
                {
                    let mut keys: [&[u8]; ebb_core::db::PREFETCH_BATCH] =
                        [&[]; ebb_core::db::PREFETCH_BATCH];
                    let mut n = 0;
                    for i in spec.fixed_key_positions(argv.len()) {
                        keys[n] = argv[i];
                        n += 1;
                        if n == keys.len() {
                            store.prefetch(self.db, &keys, &[]);
                            n = 0;
                        }
                    }
                    store.prefetch(self.db, &keys[..n], &[]);
                }
                match self.run_core(store, spec, argv, true) {
                    Ok(r) => {
                        self.reply(&r, out);
                        Flow::Continue
                    }
                    Err(Error::WouldBlock { keys, timeout_ms }) => {
                        let id = shared.block(
                            self.id,
                            self.db,
                            ebb_core::args::to_owned(argv),
                            self.resp3,
                            keys,
                            self.tx.clone(),
                        );
                        // Let other clients run while this one waits.
                        *guard = None;
                        let deadline = (timeout_ms > 0)
                            .then(|| Instant::now() + Duration::from_millis(timeout_ms));
                        Flow::Block(id, deadline)
                    }
                    Err(e) => {
                        self.reply(&e.into(), out);
                        Flow::Continue
                    }
                }
            }
            Exec::Server => {
                // Server commands (INFO, CLIENT LIST, SAVE, …) see exact
                // figures.
                self.publish_stats();
                crate::commands::run(self, shared, guard, spec, argv, out)
            }
        }
    }

    /// Runs a core command against the store and handles its effects.
    pub fn run_core(
        &mut self,
        store: &mut Store,
        spec: &'static CommandSpec,
        argv: &[&[u8]],
        may_block: bool,
    ) -> Result<Reply, Error> {
        if spec.name == "memory" {
            if let Some(r) = crate::info::memory_server(&self.shared, store, argv) {
                return Ok(r);
            }
        }
        let now = self.now();
        let shared = &self.shared;
        let fx = &mut self.fx;
        shared.prepare_effects(fx);
        let r = {
            let mut ctx = Ctx::new(store, self.db, now, fx);
            ctx.resp3 = self.resp3;
            ctx.may_block = may_block;
            ctx.reads_every_key = crate::acl::reads_every_key(&self.user, spec, argv);
            ebb_core::execute_result(&mut ctx, spec, argv)
        };
        if let Err(Error::Msg(m)) = &r {
            if m == "ERR Bad data format" {
                // As Redis logs a payload it refuses.
                let why = ebb_core::rdb::take_refusal().unwrap_or("integrity check failed");
                tracing::warn!("{}: payload refused: {why}", spec.name.to_uppercase());
            }
        }
        if !matches!(r, Err(Error::WouldBlock { .. })) {
            shared.log_command(self.db, spec, argv, fx);
        } else {
            shared.log_propagated(fx);
        }
        // Counted locally, published once per batch.
        self.batch_dirty += std::mem::take(&mut fx.dirty);
        self.batch_hits += std::mem::take(&mut fx.hits);
        self.batch_misses += std::mem::take(&mut fx.misses);
        let flushed_all = std::mem::take(&mut fx.flushed_all);
        shared.apply_effects(store, fx);
        fx.clear();
        if flushed_all {
            // The flush's changes count before the save resets the count.
            shared
                .stats
                .dirty
                .fetch_add(std::mem::take(&mut self.batch_dirty), Ordering::Relaxed);
            shared.after_flushall(store);
        }
        r
    }

    /// The current time for a command: the clock as last read, unless
    /// [`CLOCK_REUSE_US`] have passed since (the command's start reading of
    /// the duration counter tells).
    fn now(&mut self) -> u64 {
        let t = match self.ticks_last {
            0 => crate::cmdstats::ticks(),
            t => t,
        };
        if self.clock == 0
            || t.wrapping_sub(self.clock_ticks) >= crate::cmdstats::us_to_ticks(CLOCK_REUSE_US)
        {
            self.clock = now_ms();
            self.clock_ticks = t;
        }
        self.clock
    }
}

/// Whether a protected action (`enable-debug-command`,
/// `enable-module-command`, `enable-protected-configs`) is allowed to
/// `client`: `yes`, or `local` and the client is on the loopback
/// interface or the Unix socket, as Redis decides.
pub fn protected_allowed(shared: &Shared, option: &str, client: &ClientEntry) -> bool {
    let v = shared.config.read().get(option).unwrap_or_default();
    let addr = &client.addr;
    v.eq_ignore_ascii_case("yes")
        || (v.eq_ignore_ascii_case("local")
            && (client.unix || addr.starts_with("127.0.0.1:") || addr.starts_with("[::1]:")))
}

/// Redis's refusal of a protected command (DEBUG; MODULE LOAD, LOADEX and
/// UNLOAD) where its option (`enable-debug-command`,
/// `enable-module-command`) does not allow it to this client.
fn protected_refusal(
    shared: &Shared,
    spec: &CommandSpec,
    slot: Option<usize>,
    client: &ClientEntry,
) -> Option<Reply> {
    let (command, option) = match spec.name {
        "debug" => ("DEBUG", "enable-debug-command"),
        "module" if slot.is_some_and(crate::module_cmd::is_protected) => {
            ("MODULE", "enable-module-command")
        }
        _ => return None,
    };
    if protected_allowed(shared, option, client) {
        return None;
    }
    let text = format!(
        "ERR {command} command not allowed. If the {option} option is set to \"local\", you \
         can run it from a local connection, otherwise you need to set this option in the \
         configuration file, and then restart the server."
    );
    Some(Reply::Error(text.into()))
}
