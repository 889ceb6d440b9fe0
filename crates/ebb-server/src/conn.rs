//! One client connection: read what is available, parse every complete
//! request, execute them under one store lock, write all replies at once.

use bytes::{Bytes, BytesMut};
use ebb_core::table::flag;
use ebb_core::{CommandSpec, Ctx, Effects, Error, Exec, Reply, Store};
use parking_lot::MutexGuard;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::resp::{self, Limits, Request};
use crate::server::{now_ms, ClientEntry, Msg, Shared};

/// CLIENT REPLY mode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReplyMode {
    /// Replies are sent.
    On,
    /// No reply is sent.
    Off,
    /// The next command's reply is skipped.
    Skip,
}

/// What the connection does after a request.
pub enum Flow {
    /// Go on.
    Continue,
    /// Write what is pending and close.
    Close,
    /// Park on a blocking command: waiter id and deadline.
    Block(u64, Option<Instant>),
    /// CLIENT PAUSE is in force: run this command once it ends.
    Paused(Vec<Bytes>),
}

/// Per-connection state.
pub struct Session {
    /// Client id.
    pub id: u64,
    /// Selected database.
    pub db: usize,
    /// RESP3 after HELLO 3.
    pub resp3: bool,
    /// Authenticated (always true when no password is set).
    pub authenticated: bool,
    /// Commands queued by MULTI.
    pub multi: Option<Vec<Vec<Bytes>>>,
    /// An error was seen while queuing.
    pub multi_failed: bool,
    /// Watched keys.
    pub watched: Vec<(usize, Bytes)>,
    /// Set when a watched key changes.
    pub watch_dirty: Arc<AtomicBool>,
    /// Subscribed channels.
    pub channels: BTreeSet<Bytes>,
    /// Subscribed patterns.
    pub patterns: BTreeSet<Bytes>,
    /// CLIENT REPLY mode.
    pub reply_mode: ReplyMode,
    /// Sender of this connection's mailbox.
    pub tx: UnboundedSender<Msg>,
    /// Registry entry.
    pub entry: Arc<ClientEntry>,
    /// Shared state.
    pub shared: Arc<Shared>,
    /// The effects record, reused from command to command.
    fx: Effects,
    /// Commands run since the statistics were last published.
    batch_commands: u64,
    /// Changes made since the statistics were last published.
    batch_dirty: u64,
    /// The last command run, published with the statistics.
    last_cmd: Option<usize>,
    /// The clock as last read (Unix ms), reused while less than
    /// [`CLOCK_REUSE_US`] have passed (Redis too reads the time once per
    /// event-loop pass, not per command).
    clock: u64,
    /// The duration counter when `clock` was read.
    clock_ticks: u64,
    /// The previous command's table entry.
    prev_spec: Option<&'static CommandSpec>,
    /// The request size of the command running (RESP bytes): CLIENT LIST
    /// and CLIENT INFO report it as the caller's `qbuf`, as Redis still
    /// holds the command in its query buffer while it runs.
    pub cur_cmd_bytes: usize,
    /// Its statistics slot, if it has no subcommands.
    prev_plain_slot: Option<usize>,
    /// Error replies sent so far (for failed-call counting).
    pub err_seq: u64,
    /// `err_seq` when the current call started or the last one ended: a
    /// call failed if an error reply was sent since.
    pub err_mark: u64,
    /// A parked command's statistics slot: its call was counted when it
    /// parked; a wait ending in an error makes it a failed call.
    blocked_call: Option<usize>,
    /// Calls not yet added to the shared per-command counters.
    pub tally: crate::cmdstats::Tally,
    /// The duration counter when the previous command of this batch ended
    /// (0 at a batch's start): the next command's start, so that timing a
    /// command costs one reading, not two.
    ticks_last: u64,
    /// A run of fast commands of one kind timed together (see
    /// [`Session::close_run`]): its statistics slot, calls, failed calls
    /// and start.
    run: Option<(usize, u64, u64, u64)>,
}

/// Decimal digits of `n`.
fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// How long one reading of the clock serves commands (a clock reading
/// costs as much as a whole GET; the millisecond clock barely moves).
const CLOCK_REUSE_US: u64 = 100;

/// Fast commands timed as one run at most (so a long pipeline still reads
/// the duration counter, and with it the clock's age, now and then).
const MAX_RUN: u64 = 32;

/// Serves one accepted connection until it closes.
pub async fn serve(mut stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let addr = stream
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let laddr = stream
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let (tx, mut rx) = unbounded_channel();
    let entry = Arc::new(ClientEntry {
        id,
        addr,
        laddr,
        name: Default::default(),
        lib: Default::default(),
        db: AtomicUsize::new(0),
        created: Instant::now(),
        last_active: AtomicU64::new(now_ms()),
        last_cmd: AtomicUsize::new(0),
        subs: AtomicUsize::new(0),
        psubs: AtomicUsize::new(0),
        resp: AtomicUsize::new(2),
        in_multi: AtomicBool::new(false),
        blocked: AtomicBool::new(false),
        no_evict: AtomicBool::new(false),
        tx: tx.clone(),
        pending: AtomicUsize::new(0),
        soft_since: std::sync::atomic::AtomicU64::new(0),
        overflowed: AtomicBool::new(false),
        kill: tokio::sync::Notify::new(),
    });
    let maxclients = shared.config.read().get_i64("maxclients").max(1) as usize;
    shared.stats.connections.fetch_add(1, Ordering::Relaxed);
    if shared.client_count() >= maxclients {
        shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
        let _ = stream
            .write_all(b"-ERR max number of clients reached\r\n")
            .await;
        return;
    }
    shared.register(entry.clone());
    let authenticated = shared
        .config
        .read()
        .get("requirepass")
        .unwrap_or_default()
        .is_empty();
    let mut s = Session {
        id,
        db: 0,
        resp3: false,
        authenticated,
        multi: None,
        multi_failed: false,
        watched: Vec::new(),
        watch_dirty: Arc::new(AtomicBool::new(false)),
        channels: BTreeSet::new(),
        patterns: BTreeSet::new(),
        reply_mode: ReplyMode::On,
        tx,
        entry,
        shared: shared.clone(),
        fx: Effects::default(),
        batch_commands: 0,
        batch_dirty: 0,
        last_cmd: None,
        clock: 0,
        clock_ticks: 0,
        prev_spec: None,
        prev_plain_slot: None,
        cur_cmd_bytes: 0,
        err_seq: 0,
        err_mark: 0,
        blocked_call: None,
        tally: Default::default(),
        ticks_last: 0,
        run: None,
    };
    let _ = s.run(&mut stream, &mut rx).await;
    s.cleanup();
    shared.deregister(id);
}

impl Session {
    async fn run(
        &mut self,
        stream: &mut TcpStream,
        rx: &mut UnboundedReceiver<Msg>,
    ) -> std::io::Result<()> {
        let mut rbuf = BytesMut::with_capacity(16 * 1024);
        let mut out = BytesMut::with_capacity(16 * 1024);
        let mut req = Request::default();
        // One handle each for the whole connection: cloning an Arc per batch
        // would bounce its counter between cores.
        let shared = self.shared.clone();
        let entry = self.entry.clone();
        let (limits, qlimit, idle_timeout) = {
            let c = self.shared.config.read();
            let lim = Limits {
                max_bulk_len: c.get_i64("proto-max-bulk-len").max(1) as u64,
                ..Limits::default()
            };
            (
                lim,
                c.get_i64("client-query-buffer-limit").max(1024) as usize,
                c.get_i64("timeout").max(0) as u64,
            )
        };
        // One wait for CLIENT KILL for the whole connection: registered
        // once, not on every read and write.
        let kill = entry.kill.notified();
        tokio::pin!(kill);
        loop {
            // Run whatever complete requests are buffered.
            let flow = self.process(&shared, &mut req, &mut rbuf, &mut out, &limits);
            self.publish_stats();
            // Acknowledged writes reach the AOF before their replies leave.
            self.shared.flush_aof();
            if !out.is_empty() {
                self.shared
                    .stats
                    .net_out
                    .fetch_add(out.len() as u64, Ordering::Relaxed);
                tokio::select! {
                    biased;
                    r = stream.write_all(&out) => r?,
                    _ = &mut kill => return Ok(()),
                }
                out.clear();
            }
            match flow {
                Flow::Close => return Ok(()),
                Flow::Block(waiter, deadline) => {
                    self.entry.blocked.store(true, Ordering::Relaxed);
                    let r = self
                        .wait_unblocked(rx, waiter, deadline, stream, &mut out)
                        .await;
                    self.entry.blocked.store(false, Ordering::Relaxed);
                    if !r? {
                        return Ok(());
                    }
                    continue;
                }
                Flow::Paused(argv) => {
                    // A paused client counts in INFO's blocked_clients, as
                    // in Redis.
                    self.shared.paused_clients.fetch_add(1, Ordering::Relaxed);
                    self.entry.blocked.store(true, Ordering::Relaxed);
                    loop {
                        let until = self.shared.paused_until.load(Ordering::Relaxed);
                        let now = now_ms();
                        if until <= now {
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis((until - now).min(50))).await;
                    }
                    self.entry.blocked.store(false, Ordering::Relaxed);
                    self.shared.paused_clients.fetch_sub(1, Ordering::Relaxed);
                    self.start_batch();
                    let flow = {
                        let mut guard = None;
                        self.dispatch(&shared, &mut guard, &argv, &mut out)
                    };
                    self.publish_stats();
                    self.shared.flush_aof();
                    if let Flow::Close = flow {
                        stream.write_all(&out).await?;
                        return Ok(());
                    }
                    if let Flow::Block(waiter, deadline) = flow {
                        stream.write_all(&out).await?;
                        out.clear();
                        if !self
                            .wait_unblocked(rx, waiter, deadline, stream, &mut out)
                            .await?
                        {
                            return Ok(());
                        }
                    }
                    continue;
                }
                Flow::Continue => {}
            }
            if rbuf.len() > qlimit {
                tracing::warn!(
                    client = self.id,
                    "closing client that exceeded client-query-buffer-limit"
                );
                return Ok(());
            }
            let idle = async {
                if idle_timeout > 0 && self.channels.is_empty() && self.patterns.is_empty() {
                    tokio::time::sleep(Duration::from_secs(idle_timeout)).await
                } else {
                    std::future::pending::<()>().await
                }
            };
            tokio::select! {
                biased;
                _ = &mut kill => return Ok(()),
                m = rx.recv() => {
                    match m {
                        Some(Msg::Push(items)) => self.push(&items, &mut out),
                        Some(Msg::Kill) | None => return Ok(()),
                        Some(Msg::Unblocked(r)) => self.reply(&r, &mut out),
                    }
                    while let Ok(m) = rx.try_recv() {
                        match m {
                            Msg::Push(items) => self.push(&items, &mut out),
                            Msg::Kill => return Ok(()),
                            Msg::Unblocked(r) => self.reply(&r, &mut out),
                        }
                    }
                }
                n = stream.read_buf(&mut rbuf) => {
                    let n = n?;
                    if n == 0 {
                        return Ok(());
                    }
                    self.shared.stats.net_in.fetch_add(n as u64, Ordering::Relaxed);
                }
                _ = idle => return Ok(()),
            }
        }
    }

    /// Encodes a pub/sub message taken from the mailbox, which no longer
    /// counts toward the client's output backlog.
    fn push(&mut self, items: &[Bytes], out: &mut BytesMut) {
        self.entry
            .pending
            .fetch_sub(crate::outbuf::size(items), Ordering::Relaxed);
        resp::encode_push(items, self.resp3, out);
    }

    /// Waits for a parked command to be served, time out, or the client to
    /// go away. Returns false when the connection must close.
    async fn wait_unblocked(
        &mut self,
        rx: &mut UnboundedReceiver<Msg>,
        waiter: u64,
        deadline: Option<Instant>,
        stream: &mut TcpStream,
        out: &mut BytesMut,
    ) -> std::io::Result<bool> {
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d.into()).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::pin!(sleep);
        let mut probe = [0u8; 1];
        let mut watch_peer = true;
        loop {
            tokio::select! {
                m = rx.recv() => match m {
                    Some(Msg::Unblocked(r)) => {
                        self.reply(&r, out);
                        self.finish_blocked();
                        break;
                    }
                    Some(Msg::Push(items)) => self.push(&items, out),
                    Some(Msg::Kill) | None => {
                        self.shared.unblock(waiter);
                        self.blocked_call = None;
                        return Ok(false);
                    }
                },
                _ = &mut sleep => {
                    if self.shared.unblock(waiter) {
                        self.reply(&Reply::NilArray, out);
                        self.finish_blocked();
                        break;
                    }
                    // Served just now: the reply is in the mailbox.
                }
                r = stream.peek(&mut probe), if watch_peer => {
                    match r {
                        Ok(0) | Err(_) => {
                            self.shared.unblock(waiter);
                            return Ok(false);
                        }
                        // More requests arrived: they wait in the socket until this one ends.
                        Ok(_) => watch_peer = false,
                    }
                }
            }
        }
        if !out.is_empty() {
            stream.write_all(out).await?;
            out.clear();
        }
        Ok(true)
    }

    /// Parses and runs every complete request in `rbuf`, holding the store
    /// lock once for the whole batch.
    fn process(
        &mut self,
        shared: &Arc<Shared>,
        req: &mut Request,
        rbuf: &mut BytesMut,
        out: &mut BytesMut,
        limits: &Limits,
    ) -> Flow {
        let mut guard: Option<MutexGuard<'_, Store>> = None;
        self.start_batch();
        loop {
            match req.parse(rbuf, limits) {
                Ok(false) => return Flow::Continue,
                Ok(true) => {}
                Err(e) => {
                    self.note_error(&e.0);
                    resp::encode(&Reply::Error(e.0.into()), self.resp3, out);
                    return Flow::Close;
                }
            }
            if req.argv.is_empty() {
                continue;
            }
            match self.dispatch(shared, &mut guard, &req.argv, out) {
                Flow::Continue => {}
                other => return other,
            }
        }
    }

    /// Starts a batch of requests: its first command reads the duration
    /// counter afresh.
    fn start_batch(&mut self) {
        self.ticks_last = 0;
    }

    /// Publishes the per-batch statistics (command count, changes, last
    /// command and activity time for CLIENT LIST): once per batch rather
    /// than per command, since shared counters are costly across cores.
    pub fn publish_stats(&mut self) {
        self.close_run();
        self.tally.flush();
        if self.batch_commands > 0 {
            let stats = &self.shared.stats;
            stats
                .commands
                .fetch_add(self.batch_commands, Ordering::Relaxed);
            self.batch_commands = 0;
        }
        if self.batch_dirty > 0 {
            let stats = &self.shared.stats;
            stats.dirty.fetch_add(self.batch_dirty, Ordering::Relaxed);
            self.batch_dirty = 0;
        }
        if let Some(slot) = self.last_cmd.take() {
            // The clock as last read in this batch: close enough for an
            // idle time in seconds.
            let fresh = self.clock > 0
                && crate::cmdstats::ticks().wrapping_sub(self.clock_ticks)
                    < crate::cmdstats::us_to_ticks(CLOCK_REUSE_US);
            let now = if fresh { self.clock } else { now_ms() };
            self.entry.set_last_command(slot, now);
        }
    }

    /// Counts an error reply (INFO errorstats, failed calls).
    pub fn note_error(&mut self, text: &str) {
        self.err_seq += 1;
        crate::cmdstats::record_error(text);
    }

    /// Counts a call that ran (INFO commandstats and
    /// `total_commands_processed`; refused commands count in neither).
    pub fn count_call(&mut self, slot: usize, ticks: u64, failed: bool) {
        self.batch_commands += 1;
        self.tally.add(slot, ticks, failed);
    }

    /// Marks a parked command's call failed if its wait ended in an error.
    fn finish_blocked(&mut self) {
        if let Some(slot) = self.blocked_call.take() {
            let failed = self.err_seq > self.err_mark;
            self.err_mark = self.err_seq;
            if failed {
                crate::cmdstats::record_failed(slot);
            }
        }
    }

    /// Appends a reply, honouring CLIENT REPLY. An error counts even when
    /// replies are off, as in Redis.
    pub fn reply(&mut self, r: &Reply, out: &mut BytesMut) {
        if let Reply::Error(e) = r {
            self.note_error(e);
        }
        match self.reply_mode {
            ReplyMode::On => resp::encode(r, self.resp3, out),
            ReplyMode::Off => {}
            ReplyMode::Skip => self.reply_mode = ReplyMode::On,
        }
    }

    fn dispatch<'a>(
        &mut self,
        shared: &'a Arc<Shared>,
        guard: &mut Option<MutexGuard<'a, Store>>,
        argv: &[Bytes],
        out: &mut BytesMut,
    ) -> Flow {
        // Pipelines mostly repeat one command: compare with the previous
        // one before hashing the name.
        let cached = self
            .prev_spec
            .filter(|s| argv[0].eq_ignore_ascii_case(s.name.as_bytes()));
        let repeat = cached.is_some();
        let spec = match cached.or_else(|| ebb_core::lookup(&argv[0])) {
            Some(s) => {
                self.prev_spec = Some(s);
                s
            }
            None => {
                if self.multi.is_some() {
                    self.multi_failed = true;
                }
                self.reply(&ebb_core::error::unknown_command(argv).into(), out);
                return Flow::Continue;
            }
        };
        let plain = match self.prev_plain_slot {
            Some(i) if repeat => Some(i),
            _ => crate::cmdstats::plain_slot(spec),
        };
        self.prev_plain_slot = plain;
        let slot = plain.or_else(|| crate::cmdstats::slot_of(spec, argv));
        self.last_cmd = Some(slot.unwrap_or_else(|| ebb_core::table::index_of(spec)));
        self.cur_cmd_bytes = argv
            .iter()
            .map(|a| a.len() + 5 + digits(a.len()))
            .sum::<usize>()
            + 3
            + digits(argv.len());
        let reject = |s: &mut Session| {
            if let Some(slot) = slot {
                crate::cmdstats::record_rejected(slot);
            }
            if s.multi.is_some() {
                s.multi_failed = true;
            }
        };
        if !spec.arity_ok(argv.len()) {
            reject(self);
            self.reply(&Error::WrongArity(spec.name.to_string()).into(), out);
            return Flow::Continue;
        }
        if slot.is_none() {
            // A container command (CONFIG, CLIENT, …) with a subcommand it
            // does not have is refused like an unknown command.
            reject(self);
            let sub = String::from_utf8_lossy(&argv[1]);
            let sub: String = sub.chars().take(128).collect();
            let e = format!(
                "ERR unknown subcommand '{sub}'. Try {} HELP.",
                spec.name.to_ascii_uppercase()
            );
            self.reply(&Reply::Error(e.into()), out);
            return Flow::Continue;
        }
        if let Some(Err(full)) = slot
            .filter(|_| plain.is_none())
            .map(|i| crate::cmdstats::sub_arity_ok(i, argv.len()))
        {
            reject(self);
            self.reply(&Error::WrongArity(full.to_string()).into(), out);
            return Flow::Continue;
        }
        if !self.authenticated && !spec.has(flag::NO_AUTH) {
            reject(self);
            self.reply(&Reply::Error("NOAUTH Authentication required.".into()), out);
            return Flow::Continue;
        }
        if !self.resp3 && (!self.channels.is_empty() || !self.patterns.is_empty()) {
            let ok = matches!(
                spec.name,
                "subscribe"
                    | "psubscribe"
                    | "unsubscribe"
                    | "punsubscribe"
                    | "ping"
                    | "quit"
                    | "reset"
            );
            if spec.name == "ping" && argv.len() <= 2 {
                // RESP2 subscribed mode: PING answers as a message array.
                let msg = argv.get(1).cloned().unwrap_or_default();
                self.reply(
                    &Reply::Array(vec![Reply::bulk(b"pong"), Reply::Bulk(msg)]),
                    out,
                );
                if let Some(slot) = slot {
                    self.count_call(slot, 0, false);
                }
                return Flow::Continue;
            }
            if !ok {
                reject(self);
                let e = format!(
                    "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
                    spec.name
                );
                self.reply(&Reply::Error(e.into()), out);
                return Flow::Continue;
            }
        }
        // Over maxmemory with nothing left to evict, Redis refuses commands
        // that may grow memory, every command queued inside MULTI (the
        // queue itself grows), and an EXEC whose queue holds such commands.
        if crate::evict::limited()
            && (spec.has(flag::DENYOOM)
                || (self.multi.is_some()
                    && !matches!(spec.name, "exec" | "discard" | "quit" | "reset"))
                || (spec.name == "exec"
                    && self.multi.as_ref().is_some_and(|q| {
                        q.iter().any(|a| {
                            ebb_core::lookup(&a[0]).is_some_and(|sp| sp.has(flag::DENYOOM))
                        })
                    })))
        {
            let store = guard.get_or_insert_with(|| shared.store.lock());
            if let Err(e) = crate::evict::make_room(shared, store) {
                reject(self);
                if spec.name == "exec" {
                    self.multi = None;
                    self.multi_failed = false;
                    self.entry.in_multi.store(false, Ordering::Relaxed);
                    self.unwatch_all();
                    let text = Reply::from(e);
                    let why = match &text {
                        Reply::Error(t) => t.to_string(),
                        _ => String::new(),
                    };
                    self.reply(
                        &Reply::Error(
                            format!("EXECABORT Transaction discarded because of: {why}").into(),
                        ),
                        out,
                    );
                } else {
                    self.reply(&e.into(), out);
                }
                return Flow::Continue;
            }
        }
        if self.multi.is_some()
            && !matches!(
                spec.name,
                "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
            )
        {
            if spec.has_flag("no_multi") {
                reject(self);
                self.reply(
                    &Reply::Error("ERR Command not allowed inside a transaction".into()),
                    out,
                );
                return Flow::Continue;
            }
            if let Some(q) = self.multi.as_mut() {
                q.push(argv.to_vec());
            }
            self.reply(&Reply::Simple("QUEUED".into()), out);
            return Flow::Continue;
        }
        let paused = shared.paused_until.load(Ordering::Relaxed);
        // A write pause holds writes, PUBLISH (it would reach replicas), and
        // an EXEC whose transaction holds either, as Redis 7.0 does.
        let writes = |sp: &CommandSpec| sp.is_write() || sp.name == "publish";
        if paused > 0
            && paused > now_ms()
            && (writes(spec)
                || !shared.pause_writes_only.load(Ordering::Relaxed)
                || (spec.name == "exec"
                    && self.multi.as_ref().is_some_and(|q| {
                        q.iter()
                            .any(|a| ebb_core::lookup(&a[0]).is_some_and(writes))
                    })))
            && !matches!(
                spec.name,
                "client" | "ping" | "quit" | "reset" | "hello" | "auth" | "info" | "config"
            )
        {
            return Flow::Paused(argv.to_vec());
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
                Some((s, n, _, _)) if s == slot && n < MAX_RUN => {}
                _ => {
                    self.close_run();
                    let start = self.mark_ticks();
                    self.run = Some((slot, 0, 0, start));
                }
            }
            self.err_mark = self.err_seq;
            let flow = self.execute(shared, guard, spec, argv, out);
            let failed = self.err_seq > self.err_mark;
            self.err_mark = self.err_seq;
            if let Some((_, n, f, _)) = self.run.as_mut() {
                *n += 1;
                *f += failed as u64;
            }
            self.batch_commands += 1;
            return flow;
        }
        self.close_run();
        // The previous command's end reading is this one's start (and the
        // reading `now` compares the clock's age with).
        self.err_mark = self.err_seq;
        let start = self.mark_ticks();
        let db = self.db;
        let flow = self.execute(shared, guard, spec, argv, out);
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
        if let Some((slot, calls, failed, start)) = self.run.take() {
            let end = crate::cmdstats::ticks();
            self.ticks_last = end;
            self.tally
                .add_run(slot, calls, end.saturating_sub(start), failed);
        }
    }

    /// Runs a command that passed every check.
    fn execute<'a>(
        &mut self,
        shared: &'a Arc<Shared>,
        guard: &mut Option<MutexGuard<'a, Store>>,
        spec: &'static CommandSpec,
        argv: &[Bytes],
        out: &mut BytesMut,
    ) -> Flow {
        match spec.exec {
            Exec::Core(_) => {
                let store = guard.get_or_insert_with(|| shared.store.lock());
                match self.run_core(store, spec, argv, true) {
                    Ok(r) => {
                        self.reply(&r, out);
                        Flow::Continue
                    }
                    Err(Error::WouldBlock { keys, timeout_ms }) => {
                        let id = shared.block(
                            self.id,
                            self.db,
                            argv.to_vec(),
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
        spec: &CommandSpec,
        argv: &[Bytes],
        may_block: bool,
    ) -> Result<Reply, Error> {
        let now = self.now();
        let shared = &self.shared;
        let fx = &mut self.fx;
        shared.prepare_effects(fx);
        let r = {
            let mut ctx = Ctx::new(store, self.db, now, fx);
            ctx.resp3 = self.resp3;
            ctx.may_block = may_block;
            ebb_core::execute_result(&mut ctx, spec, argv)
        };
        if !matches!(r, Err(Error::WouldBlock { .. })) {
            shared.log_command(self.db, spec, argv, fx);
        } else {
            shared.log_propagated(fx);
        }
        // Counted locally, published once per batch.
        self.batch_dirty += std::mem::take(&mut fx.dirty);
        shared.apply_effects(store, fx);
        fx.clear();
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

    /// Forgets every WATCH.
    pub fn unwatch_all(&mut self) {
        if !self.watched.is_empty() {
            let keys = std::mem::take(&mut self.watched);
            self.shared.unwatch(self.id, &keys);
        }
        self.watch_dirty.store(false, Ordering::Relaxed);
    }

    fn cleanup(&mut self) {
        self.close_run();
        self.tally.flush();
        crate::observe::remove_monitor(self.id);
        self.unwatch_all();
        for c in std::mem::take(&mut self.channels) {
            self.shared.unsubscribe(self.id, &c, false);
        }
        for p in std::mem::take(&mut self.patterns) {
            self.shared.unsubscribe(self.id, &p, true);
        }
    }
}
