//! One client connection: read what is available, parse every complete
//! request, execute them under one store lock, write all replies at once.

use bytes::{Buf, Bytes, BytesMut};
use ebb_core::{CommandSpec, Effects, Reply, Store};
use parking_lot::MutexGuard;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use crate::resp::{self, Limits, Request};

mod dispatch;
pub mod limits;
pub use dispatch::protected_allowed;
mod memory;
mod prefetch;
mod run;
pub use run::{
    reply_room_wanted, reset_reply_peak, set_peak_reset_time, set_reply_buffer_resizing,
};
mod stats;
use crate::server::{now_ms, ClientEntry, Msg, Shared};
use dispatch::Run;
use prefetch::prefetch_waiting;

/// Most reply bytes an unauthenticated connection may have waiting.
const UNAUTH_MAX_OUTPUT: usize = 1024;

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
    /// The ACL user, as of ACL generation `acl_gen`.
    pub user: Arc<crate::acl::User>,
    pub acl_gen: u64,
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
    /// Subscribed shard channels (SSUBSCRIBE).
    pub shard_channels: BTreeSet<Bytes>,
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
    /// Read hits and misses of this batch's commands, published with it.
    batch_hits: u64,
    batch_misses: u64,
    /// The last command run, published with the statistics.
    pub(crate) last_cmd: Option<usize>,
    /// The clock as last read (Unix ms), reused while less than
    /// [`dispatch::CLOCK_REUSE_US`] have passed (Redis too reads the time once per
    /// event-loop pass, not per command).
    clock: u64,
    /// The duration counter when `clock` was read.
    clock_ticks: u64,
    /// The previous command's table entry.
    prev_spec: Option<&'static CommandSpec>,
    /// Its statistics slot, if it has no subcommands.
    prev_plain_slot: Option<usize>,
    /// Batches left before the next look-ahead for prefetching (after one
    /// found nothing worth loading: the same key and member again, or a
    /// small database or collection).
    prefetch_rest: u8,
    /// When this client's replies went over the `normal` class's soft
    /// output limit (0: they are not over it).
    obuf_soft_since: u64,
    /// CLIENT TRACKING's mode, when on.
    pub track: Option<crate::tracking::Mode>,
    /// CLIENT CACHING was given for the next command (or transaction).
    pub caching: bool,
    /// Some client had tracking on when the current request started (read
    /// once per request).
    tracking_live: bool,
    /// Error replies sent so far (for failed-call counting).
    pub err_seq: u64,
    /// `err_seq` when the current call started or the last one ended: a
    /// call failed if an error reply was sent since.
    pub err_mark: u64,
    /// The next error reply was already counted in the error statistics
    /// (a script's error that a command it ran replied): it only marks the
    /// call failed.
    pub error_counted: bool,
    /// A parked command's statistics slot: its call was counted when it
    /// parked; a wait ending in an error makes it a failed call.
    blocked_call: Option<usize>,
    /// Calls not yet added to the shared per-command counters.
    pub tally: crate::cmdstats::Tally,
    /// The duration counter when the previous command of this batch ended
    /// (0 at a batch's start): the next command's start, so that timing a
    /// command costs one reading, not two.
    ticks_last: u64,
    /// The run of fast commands being timed together, if any.
    run: Option<Run>,
    /// Bytes the transaction being queued holds (meaningful while
    /// `multi` is set).
    pub multi_mem: usize,
    /// What the connection held when it last published it.
    held: memory::Held,
}

/// Turns on TCP keepalive probes as Redis's `tcp-keepalive` does: after
/// `secs` idle seconds, then every third of that, giving up after 3
/// unanswered probes (so a vanished peer's connection is closed in about
/// twice `secs`). 0 leaves them off.
fn keepalive(stream: &TcpStream, secs: i64) {
    use std::os::fd::AsRawFd;
    if secs <= 0 {
        return;
    }
    let fd = stream.as_raw_fd();
    let idle = secs.min(i64::from(libc::c_int::MAX)) as libc::c_int;
    let set = |level: libc::c_int, name: libc::c_int, v: libc::c_int| {
        // SAFETY: `fd` is the open socket `stream` owns, and the option
        // value is a live c_int of the size given.
        unsafe {
            libc::setsockopt(
                fd,
                level,
                name,
                (&v as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        }
    };
    set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1);
    set(libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, idle);
    set(libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, (idle / 3).max(1));
    set(libc::IPPROTO_TCP, libc::TCP_KEEPCNT, 3);
}

/// What a new connection is admitted with, as the configuration says.
#[derive(Clone, Copy)]
pub struct Admission {
    maxclients: usize,
    keepalive: i64,
    /// Protected mode is in force (on, and no password set): only
    /// loopback clients are served.
    pub protected: bool,
}

impl Admission {
    pub fn of(c: &crate::config::Config) -> Admission {
        Admission {
            maxclients: c.get_i64("maxclients").max(1) as usize,
            keepalive: c.get_i64("tcp-keepalive"),
            protected: c.get_bool("protected-mode")
                && c.get("requirepass").unwrap_or_default().is_empty(),
        }
    }
}

/// Starts serving an accepted TCP connection: registered at once (CLIENT
/// LIST and INFO count it from now on), served by a task of its own.
pub fn start_tcp(stream: TcpStream, shared: &Arc<Shared>, how: Admission) {
    let admitted = admit_tcp(&stream, shared, how);
    tokio::spawn(serve_admitted(stream, admitted, shared.clone()));
}

/// Sets a TCP connection's socket options and admits it.
fn admit_tcp(stream: &TcpStream, shared: &Arc<Shared>, how: Admission) -> Option<Admitted> {
    let _ = stream.set_nodelay(true);
    keepalive(stream, how.keepalive);
    let addr = stream
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let laddr = stream
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    admit(shared, addr, laddr, false, how.maxclients)
}

/// Starts serving a connection accepted on the `unixsocket`, registered
/// at once: both its addresses are `<path>:0`, as Redis shows them.
pub fn start_unix(stream: UnixStream, path: &str, shared: &Arc<Shared>, how: Admission) {
    let addr = format!("{path}:0");
    let admitted = admit(shared, addr.clone(), addr, true, how.maxclients);
    tokio::spawn(serve_admitted(stream, admitted, shared.clone()));
}

/// A connection registered as a client, not yet served.
struct Admitted {
    entry: Arc<ClientEntry>,
    tx: UnboundedSender<Msg>,
    rx: tokio::sync::mpsc::UnboundedReceiver<Msg>,
}

/// Registers a new connection as a client; `None` when `maxclients` are
/// already connected (counted as rejected).
fn admit(
    shared: &Arc<Shared>,
    addr: String,
    laddr: String,
    unix: bool,
    maxclients: usize,
) -> Option<Admitted> {
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = unbounded_channel();
    let entry = Arc::new(ClientEntry {
        id,
        addr,
        laddr,
        unix,
        name: Default::default(),
        user: parking_lot::Mutex::new(Bytes::from_static(b"default")),
        lib: Default::default(),
        db: AtomicUsize::new(0),
        created: Instant::now(),
        last_active: AtomicU64::new(now_ms()),
        last_cmd: AtomicUsize::new(0),
        subs: AtomicUsize::new(0),
        psubs: AtomicUsize::new(0),
        ssubs: AtomicUsize::new(0),
        resp: AtomicUsize::new(2),
        in_multi: AtomicBool::new(false),
        multi_len: std::sync::atomic::AtomicI64::new(-1),
        redir: std::sync::atomic::AtomicI64::new(-1),
        watch_dirty: Arc::new(AtomicBool::new(false)),
        monitor: AtomicBool::new(false),
        blocked: AtomicBool::new(false),
        no_evict: AtomicBool::new(false),
        tx: tx.clone(),
        pending: AtomicUsize::new(0),
        own_memory: AtomicUsize::new(0),
        qbuf: AtomicUsize::new(0),
        argv_mem: AtomicUsize::new(0),
        multi_mem: AtomicUsize::new(0),
        reply_room: AtomicUsize::new(0),
        unsent: AtomicUsize::new(0),
        evicted: AtomicBool::new(false),
        soft_since: std::sync::atomic::AtomicU64::new(0),
        overflowed: AtomicBool::new(false),
        tracking: std::sync::atomic::AtomicU8::new(0),
        kill: tokio::sync::Notify::new(),
        qbuf_room: AtomicUsize::new(0),
        reply_peak: AtomicUsize::new(0),
        peak_reset_at: std::sync::atomic::AtomicU64::new(crate::server::now_ms()),
    });
    shared.stats.connections.fetch_add(1, Ordering::Relaxed);
    if shared.client_count() >= maxclients {
        shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    shared.register(entry.clone());
    Some(Admitted { entry, tx, rx })
}

/// Serves an admitted connection until it closes (a refused one gets
/// Redis's error and is closed).
async fn serve_admitted<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    admitted: Option<Admitted>,
    shared: Arc<Shared>,
) {
    let Some(Admitted { entry, tx, mut rx }) = admitted else {
        let _ = stream
            .write_all(b"-ERR max number of clients reached\r\n")
            .await;
        return;
    };
    let id = entry.id;
    // Without AUTH a connection is the default user, authenticated when
    // that user is on and needs no password.
    let user = shared.acl.default_user();
    let authenticated = user.enabled && user.nopass;
    let acl_gen = shared.acl.generation();
    let mut s = Session {
        id,
        db: 0,
        resp3: false,
        authenticated,
        user,
        acl_gen,
        multi: None,
        multi_failed: false,
        watched: Vec::new(),
        watch_dirty: entry.watch_dirty.clone(),
        channels: BTreeSet::new(),
        patterns: BTreeSet::new(),
        shard_channels: BTreeSet::new(),
        reply_mode: ReplyMode::On,
        tx,
        entry,
        shared: shared.clone(),
        fx: Effects::default(),
        batch_commands: 0,
        batch_dirty: 0,
        batch_hits: 0,
        batch_misses: 0,
        last_cmd: None,
        clock: 0,
        clock_ticks: 0,
        prev_spec: None,
        prev_plain_slot: None,
        prefetch_rest: 0,
        obuf_soft_since: 0,
        track: None,
        caching: false,
        tracking_live: false,
        err_seq: 0,
        err_mark: 0,
        error_counted: false,
        blocked_call: None,
        tally: Default::default(),
        ticks_last: 0,
        run: None,
        multi_mem: 0,
        held: Default::default(),
    };
    let ended = {
        let run = std::pin::pin!(s.run(&mut stream, &mut rx));
        CatchUnwind(run).await
    };
    if ended.is_err() {
        // A bug stopped a command (its report is in the log): the client
        // goes as if it had closed, its subscriptions, watches and
        // registration with it.
        tracing::warn!(client = id, "client closed after an internal error");
    }
    s.cleanup();
    s.forget_memory(&mut rx);
    shared.deregister(id);
}

/// A future whose panic is caught and returned as an error, so that a
/// connection that ran into a bug is still cleaned up.
struct CatchUnwind<F>(F);

impl<F: std::future::Future + Unpin> std::future::Future for CatchUnwind<F> {
    type Output = std::thread::Result<F::Output>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            std::pin::Pin::new(inner).poll(cx)
        })) {
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Ok(std::task::Poll::Ready(v)) => std::task::Poll::Ready(Ok(v)),
            Err(e) => std::task::Poll::Ready(Err(e)),
        }
    }
}

impl Session {
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
        // Read once a batch: whether client eviction is on.
        let evicting = crate::client_evict::limit() != 0;
        // A connection that still has to authenticate may send only short
        // requests (Redis's limits), so it cannot make the server buffer
        // a huge one.
        let unauth;
        let limits = if self.authenticated {
            limits
        } else {
            unauth = Limits {
                unauthenticated: true,
                ..*limits
            };
            &unauth
        };
        // Requests are read in place: their arguments are slices of the
        // read buffer until the batch ends, when what ran is consumed.
        let mut views = req.lend_views();
        let mut at = 0;
        let flow = loop {
            let data = &rbuf[at..];
            let len = match req.parse(data, limits) {
                Ok(None) => break Flow::Continue,
                Ok(Some(len)) => len,
                Err(e) => {
                    self.note_error(&e.0);
                    resp::encode(&Reply::Error(e.0.into()), self.resp3, out);
                    break Flow::Close;
                }
            };
            at += len;
            views.clear();
            let locked = guard.is_some();
            self.tracking_live = shared.tracking.active();
            if self.tracking_live {
                crate::tracking::set_origin(self.id);
            }
            let flow = match req.inline.take() {
                Some(args) if args.is_empty() => continue,
                Some(args) => {
                    let argv = ebb_core::args::views(&args);
                    self.dispatch(shared, &mut guard, &argv, out)
                }
                None => {
                    req.args(data, &mut views);
                    if views.is_empty() {
                        continue;
                    }
                    self.dispatch(shared, &mut guard, &views, out)
                }
            };
            if self.tracking_live || shared.tracking.active() {
                // Anything left for this connection (a refused or queued
                // command's) is written before another client runs.
                self.write_own_notes(out);
                crate::tracking::set_origin(0);
                shared.tracking.broadcast(&shared.clients);
            }
            if !matches!(flow, Flow::Continue) {
                break flow;
            }
            // Replies over the output limit close the client at once:
            // nothing of the batch is sent and nothing after it runs.
            if crate::outbuf::normal_over(out.len(), &mut self.obuf_soft_since)
                && !self.subscribed()
            {
                tracing::warn!(
                    client = self.id,
                    pending = out.len(),
                    "client closed for overcoming of output buffer limits"
                );
                out.clear();
                break Flow::Close;
            }
            // Client eviction looks at the reply buffer's growth between
            // commands, as Redis checks before each command: a client
            // evicted now gets nothing more.
            if evicting && !self.account_growth(rbuf.capacity(), out) {
                out.clear();
                break Flow::Close;
            }
            // Once per batch, as soon as the store is held: the requests
            // waiting behind this one start loading their keys.
            if let (false, Some(store)) = (locked, guard.as_deref()) {
                if self.prefetch_rest > 0 {
                    self.prefetch_rest -= 1;
                } else if !prefetch_waiting(store, self.db, &views, &rbuf[at..]) {
                    self.prefetch_rest = PREFETCH_REST;
                }
            }
        };
        if self.tracking_live {
            crate::tracking::set_origin(0);
        }
        req.return_views(views);
        rbuf.advance(at);
        flow
    }

    /// Appends a reply, honouring CLIENT REPLY. An error counts even when
    /// replies are off, as in Redis.
    pub fn reply(&mut self, r: &Reply, out: &mut BytesMut) {
        if let Reply::Error(e) = r {
            self.note_error(e);
        }
        if self.replies_on() {
            resp::encode(r, self.resp3, out);
        }
    }

    /// Whether the reply to the current command is to be written (CLIENT
    /// REPLY OFF and SKIP say not; SKIP only for this one).
    pub fn replies_on(&mut self) -> bool {
        match self.reply_mode {
            ReplyMode::On => true,
            ReplyMode::Off => false,
            ReplyMode::Skip => {
                self.reply_mode = ReplyMode::On;
                false
            }
        }
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
        self.shared.tracking.disable(self.id);
        self.tally.flush();
        crate::observe::remove_monitor(self.id);
        self.unwatch_all();
        self.unsubscribe_all();
    }

    /// Whether the connection holds any subscription.
    pub fn subscribed(&self) -> bool {
        !self.channels.is_empty() || !self.patterns.is_empty() || !self.shard_channels.is_empty()
    }

    /// Drops every subscription (connection closed, RESET).
    pub fn unsubscribe_all(&mut self) {
        use crate::server::SubKind;
        for c in std::mem::take(&mut self.channels) {
            self.shared.unsubscribe(self.id, &c, SubKind::Channel);
        }
        for p in std::mem::take(&mut self.patterns) {
            self.shared.unsubscribe(self.id, &p, SubKind::Pattern);
        }
        for c in std::mem::take(&mut self.shard_channels) {
            self.shared.unsubscribe(self.id, &c, SubKind::Shard);
        }
        self.entry.subs.store(0, Ordering::Relaxed);
        self.entry.psubs.store(0, Ordering::Relaxed);
        self.entry.ssubs.store(0, Ordering::Relaxed);
    }
}

/// Batches a session lets pass without looking ahead after a look-ahead
/// that found nothing to prefetch: a workload repeating one key, or on a
/// small database, then pays for one look in this many.
const PREFETCH_REST: u8 = 16;

/// Room a connection's read and reply buffers start with.
pub const BUF: usize = 16 * 1024;

/// How long a connection stays idle before its buffers are freed (Redis
/// frees an idle client's query buffer after 2 seconds).
pub const IDLE_FREE_MS: u64 = 2000;

/// Read buffer room past which a drained buffer goes back to [`BUF`].
pub const TRIM_ABOVE: usize = 4 * BUF;
