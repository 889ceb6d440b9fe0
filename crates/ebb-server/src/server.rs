//! State shared by every connection: the store, configuration, client
//! registry, pub/sub, WATCH and blocked-client registries, statistics; and
//! what happens to a command's effects (WATCH, notifications, wake-ups).

use bytes::Bytes;
use ebb_core::{Effects, Reply, Store};
use parking_lot::{Mutex, RwLock};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc::UnboundedSender;

use crate::config::Config;
use crate::notify::NotifySettings;
pub use crate::pubsub::{PubSub, SubKind};

/// Something sent to a connection from elsewhere.
#[derive(Debug)]
pub enum Msg {
    /// A pub/sub message (already shaped: `message`/`pmessage` items).
    Push(Vec<Bytes>),
    /// A blocked command was served: its reply.
    Unblocked(Reply),
    /// CLIENT KILL or shutdown: close the connection.
    Kill,
    /// A CLIENT TRACKING invalidation (or a broken redirection).
    Tracking(crate::tracking::Note),
    /// The client-buffer cron's turn: a connection idle for a while lets
    /// go of its buffers, one whose read buffer a long request grew gives
    /// the room back (Redis's clientsCron resizes query buffers likewise).
    Trim,
}

/// Registry entry of one connected client (for CLIENT LIST/KILL/INFO).
pub struct ClientEntry {
    /// Client id.
    pub id: u64,
    /// Peer address.
    pub addr: String,
    /// Local address.
    pub laddr: String,
    /// Connected through the `unixsocket` (CLIENT LIST flag `U`).
    pub unix: bool,
    /// CLIENT SETNAME.
    pub name: Mutex<Option<Bytes>>,
    /// The ACL user the connection is authenticated as.
    pub user: Mutex<Bytes>,
    /// CLIENT SETINFO lib-name / lib-ver.
    pub lib: Mutex<(String, String)>,
    /// Selected database.
    pub db: AtomicUsize,
    /// Connected since.
    pub created: Instant,
    /// Time of the last command (Unix ms).
    pub last_active: AtomicU64,
    /// The last command: its statistics slot plus one (0 = none yet), so
    /// that recording it takes no lock and subcommands show as
    /// `client|list`.
    pub last_cmd: AtomicUsize,
    /// Subscriptions (channels, patterns) for CLIENT LIST.
    pub subs: AtomicUsize,
    /// Pattern subscriptions.
    pub psubs: AtomicUsize,
    /// Shard channel subscriptions (SSUBSCRIBE).
    pub ssubs: AtomicUsize,
    /// Protocol version.
    pub resp: AtomicUsize,
    /// Whether in MULTI.
    pub in_multi: AtomicBool,
    /// Commands queued by MULTI (-1 outside a transaction), for CLIENT
    /// LIST's `multi=`.
    pub multi_len: std::sync::atomic::AtomicI64,
    /// Where tracking invalidations go (-1: tracking off; 0: itself), for
    /// CLIENT LIST's `redir=`.
    pub redir: std::sync::atomic::AtomicI64,
    /// A watched key changed (CLIENT LIST's `d` flag); the session's own
    /// WATCH state.
    pub watch_dirty: Arc<AtomicBool>,
    /// The client is a MONITOR (CLIENT LIST's `O` flag).
    pub monitor: AtomicBool,
    /// Blocked in a blocking command.
    pub blocked: AtomicBool,
    /// Whether the client was exempted from eviction (CLIENT NO-EVICT).
    pub no_evict: AtomicBool,
    /// Channel to the connection task.
    pub tx: UnboundedSender<Msg>,
    /// Bytes of messages (pub/sub, tracking) waiting in the mailbox.
    pub pending: AtomicUsize,
    /// What the connection holds itself, in bytes, as it last published
    /// it (see `conn::memory`); with `pending`, CLIENT LIST's `tot-mem`.
    pub own_memory: AtomicUsize,
    /// Published with `own_memory`: the unread part of an incomplete
    /// request (CLIENT LIST's `qbuf`), the arguments of it already read
    /// (`argv-mem`), the queued transaction (`multi-mem`), the reply
    /// buffer's room (`rbs`) and the replies in it not yet written.
    pub qbuf: AtomicUsize,
    pub argv_mem: AtomicUsize,
    pub multi_mem: AtomicUsize,
    pub reply_room: AtomicUsize,
    pub unsent: AtomicUsize,
    /// Chosen by client eviction: out of the registry, closing.
    pub evicted: AtomicBool,
    /// When the backlog went over the soft output limit (ms, 0 = it is not).
    pub soft_since: AtomicU64,
    /// Set once the backlog passed the output limit: nothing more is queued.
    pub overflowed: AtomicBool,
    /// CLIENT TRACKING state for CLIENT LIST's flags (see
    /// `tracking::FLAG_ON`, `FLAG_BCAST`, `FLAG_BROKEN`).
    pub tracking: std::sync::atomic::AtomicU8,
    /// Wakes the connection task to close, even while it waits on a write.
    pub kill: tokio::sync::Notify,
    /// Bytes the connection's read buffer holds room for, as it last
    /// published (CLIENT LIST's `qbuf-free`; 0 once freed while idle).
    pub qbuf_room: AtomicUsize,
    /// The most replies the reply buffer held at once since the last
    /// peak reset (Redis's `buf_peak`), for the client-buffer cron's
    /// resizing.
    pub reply_peak: AtomicUsize,
    /// When the cron last reset [`ClientEntry::reply_peak`] (Unix ms).
    pub peak_reset_at: AtomicU64,
}

impl ClientEntry {
    /// What the client holds, in bytes (CLIENT LIST's `tot-mem`).
    pub fn memory(&self) -> usize {
        self.own_memory.load(Ordering::Relaxed) + self.mailbox_bytes()
    }

    /// Output waiting for the client: replies not yet written and
    /// messages in its mailbox (CLIENT LIST's `omem`).
    pub fn output_waiting(&self) -> usize {
        self.unsent.load(Ordering::Relaxed) + self.mailbox_bytes()
    }

    /// Bytes of the messages waiting in the mailbox.
    pub fn mailbox_bytes(&self) -> usize {
        self.pending.load(Ordering::Relaxed) & !MAILBOX_CLOSED
    }

    /// Queues `msg` (of `size` bytes) in the client's mailbox, counted in
    /// its memory until the connection takes it ([`ClientEntry::taken`]);
    /// false if the connection is gone.
    pub fn queue(&self, msg: Msg, size: usize) -> bool {
        let counted = self
            .pending
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |p| {
                (p & MAILBOX_CLOSED == 0).then_some(p + size)
            })
            .is_ok();
        if counted {
            crate::client_evict::grow(size);
        }
        if self.tx.send(msg).is_ok() {
            return true;
        }
        if counted {
            self.taken(size);
        }
        false
    }

    /// A queued message of `size` bytes left the mailbox.
    pub fn taken(&self, size: usize) {
        let counted = self
            .pending
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |p| {
                (p & MAILBOX_CLOSED == 0).then(|| p.saturating_sub(size))
            })
            .is_ok();
        if counted {
            crate::client_evict::shrink(size);
        }
    }

    /// Takes the client's mailbox out of the clients' memory for good
    /// (evicted or gone): what it holds now is subtracted once, and
    /// nothing queued or taken later counts.
    pub fn close_mailbox(&self) {
        let was = self.pending.fetch_or(MAILBOX_CLOSED, Ordering::Relaxed);
        if was & MAILBOX_CLOSED == 0 {
            crate::client_evict::shrink(was);
        }
    }

    /// Records the last command and its time.
    pub fn set_last_command(&self, slot: usize, now_ms: u64) {
        self.last_cmd.store(slot + 1, Ordering::Relaxed);
        self.last_active.store(now_ms, Ordering::Relaxed);
    }

    /// The name of the last command, `NULL` before the first.
    pub fn last_command_name(&self) -> &'static str {
        match self.last_cmd.load(Ordering::Relaxed) {
            0 => "NULL",
            n => crate::cmdstats::slot_name(n - 1),
        }
    }
}

/// Set in `ClientEntry::pending` once the mailbox no longer counts.
const MAILBOX_CLOSED: usize = 1 << (usize::BITS - 1);

/// Counters for INFO.
#[derive(Default)]
pub struct Stats {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Commands processed.
    pub commands: AtomicU64,
    /// Connections rejected (maxclients).
    pub rejected: AtomicU64,
    /// Keys expired.
    pub expired_keys: AtomicU64,
    /// Members expired.
    pub expired_members: AtomicU64,
    /// Changes since the last save.
    pub dirty: AtomicU64,
    /// Reads that found their key.
    pub keyspace_hits: AtomicU64,
    /// Reads that did not.
    pub keyspace_misses: AtomicU64,
    /// Bytes read from clients.
    pub net_in: AtomicU64,
    /// Bytes written to clients.
    pub net_out: AtomicU64,
    /// Pub/sub messages delivered.
    pub pubsub_messages: AtomicU64,
}

/// A client parked in a blocking command.
pub(crate) struct Waiter {
    pub(crate) client: u64,
    pub(crate) db: usize,
    pub(crate) argv: Vec<Bytes>,
    pub(crate) resp3: bool,
    pub(crate) keys: Vec<Bytes>,
    pub(crate) tx: UnboundedSender<Msg>,
}

#[derive(Default)]
pub(crate) struct Blocking {
    pub(crate) next: u64,
    pub(crate) by_key: HashMap<(usize, Bytes), VecDeque<u64>>,
    pub(crate) waiters: HashMap<u64, Waiter>,
}

/// A client watching a key: its id and the flag EXEC checks.
/// A WATCH: the client, its dirty flag, and whether the key existed (live)
/// when it was watched.
type Watcher = (u64, Arc<AtomicBool>, bool);

/// Server-wide shared state.
pub struct Shared {
    /// Bytes allocated when the server started, before loading any data
    /// (MEMORY STATS `startup.allocated`).
    pub startup_bytes: u64,
    /// Clients holding a command until CLIENT PAUSE ends.
    pub paused_clients: AtomicUsize,
    /// Clients blocked with a timeout (INFO's `clients_in_timeout_table`).
    pub timed_blocked: AtomicUsize,
    /// INFO's `run_id` and `master_replid`: random, fixed for the process.
    pub run_id: String,
    /// The replication id INFO reports (no replication: never changes).
    pub replid: String,
    /// The keyspace: one lock, taken once per batch of pipelined commands.
    pub store: Mutex<Store>,
    /// The configuration.
    pub config: RwLock<Config>,
    /// Number of databases (fixed at start).
    pub databases: usize,
    /// Parsed notify-keyspace-events.
    pub notify: NotifySettings,
    /// Connected clients.
    pub clients: Mutex<HashMap<u64, Arc<ClientEntry>>>,
    /// CLIENT TRACKING: who reads which keys.
    pub tracking: crate::tracking::Tracking,
    /// Next client id.
    pub next_id: AtomicU64,
    /// Pub/sub.
    pub pubsub: Mutex<PubSub>,
    watches: Mutex<HashMap<(usize, Bytes), Vec<Watcher>>>,
    watch_count: AtomicUsize,
    pub(crate) blocking: Mutex<Blocking>,
    /// Number of parked clients (read without the blocking lock).
    pub(crate) waiting: AtomicUsize,
    /// Statistics.
    pub stats: Stats,
    /// Values to free off the hot path.
    dropper: Mutex<std::sync::mpsc::Sender<Garbage>>,
    /// Start time.
    pub started: Instant,
    /// Whether the active-expiry sweeper runs (DEBUG SET-ACTIVE-EXPIRE).
    pub active_expire: AtomicBool,
    /// DEBUG PAUSE-CRON: the periodic work (active expiry, the client
    /// cron) waits while set.
    pub cron_paused: AtomicBool,
    /// A signal asked for a shutdown that has not run yet (it runs from
    /// the cron, so DEBUG PAUSE-CRON holds it); SHUTDOWN ABORT clears it.
    pub shutdown_asked: AtomicBool,
    /// Scripts may run commands marked `noscript` (DEBUG
    /// SET-DISABLE-DENY-SCRIPTS, for tests).
    pub scripts_any_command: AtomicBool,
    /// The port actually bound.
    pub port: AtomicUsize,
    /// The accept loops serving the listening sockets.
    pub listeners: Mutex<Vec<crate::listen::Listening>>,
    /// Unix time of the last successful save.
    pub last_save: AtomicU64,
    /// The AOF: the log, and the files of the AOF directory.
    pub aof: crate::persist::aof::AofSlot,
    /// Whether the last AOF write succeeded.
    pub aof_write_ok: AtomicBool,
    /// Whether the last background fsync of the AOF succeeded.
    pub aof_fsync_ok: AtomicBool,
    /// The OS error of the last failed AOF write or fsync.
    pub aof_errno: std::sync::atomic::AtomicI32,
    /// When the last background save started (Unix seconds): after a
    /// failed one, save rules try again only 5 seconds later, as Redis.
    pub last_bgsave_try: AtomicU64,
    /// A BGSAVE runs.
    pub bgsave_running: AtomicBool,
    /// The process writing a BGSAVE snapshot (0: none), killed by a
    /// shutdown so that it cannot put an older snapshot over the final one.
    pub bgsave_child: std::sync::atomic::AtomicI32,
    /// A BGREWRITEAOF runs.
    pub rewrite_running: AtomicBool,
    /// The process writing an AOF rewrite (0: none), killed when the AOF
    /// is turned off.
    pub rewrite_child: std::sync::atomic::AtomicI32,
    /// A BGREWRITEAOF waits for a BGSAVE to end (INFO's
    /// `aof_rewrite_scheduled`), as in Redis.
    pub rewrite_scheduled: AtomicBool,
    /// A BGSAVE SCHEDULE waits for an AOF rewrite to end.
    pub bgsave_scheduled: AtomicBool,
    /// Whether the last background save succeeded.
    pub last_bgsave_ok: AtomicBool,
    /// `stats.dirty` at the last save (for save rules).
    pub dirty_at_save: AtomicU64,
    /// Paused until (Unix ms), for CLIENT PAUSE; 0 = not paused.
    pub paused_until: AtomicU64,
    /// Whether CLIENT PAUSE only pauses writes.
    pub pause_writes_only: AtomicBool,
    /// Lua scripting: the engine, the script cache, SCRIPT KILL.
    pub scripting: crate::script::Scripting,
    /// ACL users and the ACL log.
    pub acl: crate::acl::Acl,
}

/// Current Unix time in milliseconds.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Shared {
    /// Shared state for a configuration.
    pub fn new(config: Config) -> Arc<Shared> {
        let dbs = config.get_i64("databases").clamp(1, 1 << 20) as usize;
        let mut store = Store::new(dbs);
        apply_core_config(&config, &mut store);
        let flags =
            crate::notify::parse_flags(&config.get("notify-keyspace-events").unwrap_or_default())
                .unwrap_or_default();
        let hex40 = || {
            (0..40)
                .map(|_| char::from_digit(rand::random::<u32>() % 16, 16).unwrap_or('0'))
                .collect::<String>()
        };
        Arc::new(Shared {
            startup_bytes: crate::alloc::allocated() as u64,
            paused_clients: AtomicUsize::new(0),
            timed_blocked: AtomicUsize::new(0),
            run_id: hex40(),
            replid: hex40(),
            store: Mutex::new(store),
            config: RwLock::new(config),
            databases: dbs,
            notify: NotifySettings::new(flags),
            clients: Mutex::new(HashMap::new()),
            cron_paused: AtomicBool::new(false),
            shutdown_asked: AtomicBool::new(false),
            tracking: Default::default(),
            next_id: AtomicU64::new(1),
            pubsub: Mutex::new(PubSub::default()),
            watches: Mutex::new(HashMap::new()),
            watch_count: AtomicUsize::new(0),
            blocking: Mutex::new(Blocking::default()),
            waiting: AtomicUsize::new(0),
            stats: Stats::default(),
            dropper: Mutex::new(spawn_dropper()),
            started: Instant::now(),
            active_expire: AtomicBool::new(true),
            scripts_any_command: AtomicBool::new(false),
            port: AtomicUsize::new(0),
            listeners: Mutex::new(Vec::new()),
            last_save: AtomicU64::new(now_ms() / 1000),
            aof: crate::persist::aof::AofSlot::new(),
            aof_write_ok: AtomicBool::new(true),
            aof_fsync_ok: AtomicBool::new(true),
            aof_errno: std::sync::atomic::AtomicI32::new(0),
            last_bgsave_try: AtomicU64::new(0),
            bgsave_running: AtomicBool::new(false),
            bgsave_child: std::sync::atomic::AtomicI32::new(0),
            rewrite_running: AtomicBool::new(false),
            rewrite_child: std::sync::atomic::AtomicI32::new(0),
            rewrite_scheduled: AtomicBool::new(false),
            bgsave_scheduled: AtomicBool::new(false),
            last_bgsave_ok: AtomicBool::new(true),
            dirty_at_save: AtomicU64::new(0),
            paused_until: AtomicU64::new(0),
            pause_writes_only: AtomicBool::new(false),
            scripting: Default::default(),
            acl: Default::default(),
        })
    }

    /// The store, for background work (active expiry, save rules): `None`
    /// while a script runs past `busy-reply-threshold` holding it, or while
    /// the dataset loads (DEBUG RELOAD holds it then), so that the work
    /// waits for the next tick instead of stalling the thread that answers
    /// clients.
    pub fn store_unless_busy(&self) -> Option<parking_lot::MutexGuard<'_, Store>> {
        loop {
            if self.scripting.busy() || crate::loading::active() {
                return None;
            }
            if let Some(g) = self.store.try_lock_for(std::time::Duration::from_millis(5)) {
                return Some(g);
            }
        }
    }

    /// The keyspace, for a client's command. While DEBUG RELOAD or
    /// LOADAOF holds it to load the data, the wait first hands this
    /// thread's other connections to another thread, so that they keep
    /// being answered (`-LOADING`) instead of waiting behind this one.
    pub fn lock_store(&self) -> parking_lot::MutexGuard<'_, Store> {
        if let Some(g) = self.store.try_lock() {
            return g;
        }
        if crate::loading::active() {
            use tokio::runtime::{Handle, RuntimeFlavor};
            if Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread)
            {
                return tokio::task::block_in_place(|| self.store.lock());
            }
        }
        self.store.lock()
    }

    /// A fresh effects record for one command or sweep.
    pub fn effects(&self) -> Effects {
        Effects {
            skip_member_names: !self.notify.member_names(),
            new_keys: self.notify.new_keys(),
            keymiss: self.notify.keymiss(),
            ..Effects::default()
        }
    }

    /// Prepares a (cleared) effects record for one client command: what no
    /// one will look at is not recorded. Called with the store locked, so
    /// no WATCH, blocked client or AOF can appear before the effects are
    /// applied.
    pub fn prepare_effects(&self, fx: &mut Effects) {
        fx.skip_member_names = !self.notify.member_names();
        fx.skip_events = !self.notify.any();
        fx.new_keys = self.notify.new_keys();
        fx.keymiss = self.notify.keymiss();
        fx.skip_touched = self.watch_count.load(Ordering::Relaxed) == 0 && !self.tracking.active();
        fx.skip_ready = self.waiting.load(Ordering::Relaxed) == 0;
        fx.skip_log = !self.aof.is_on();
    }

    /// Handles what a command (or the sweeper) changed, with the store
    /// still locked so that order is kept: WATCH invalidation, keyspace
    /// notifications, statistics, and serving blocked clients.
    pub fn apply_effects(&self, store: &mut Store, fx: &mut Effects) {
        // Reads from scripts, transactions and the like (a client's plain
        // commands hand theirs to the connection first).
        if fx.hits > 0 {
            let n = std::mem::take(&mut fx.hits);
            self.stats.keyspace_hits.fetch_add(n, Ordering::Relaxed);
        }
        if fx.misses > 0 {
            let n = std::mem::take(&mut fx.misses);
            self.stats.keyspace_misses.fetch_add(n, Ordering::Relaxed);
        }
        if fx.is_empty() {
            return;
        }
        // A flushed database invalidates every cached key, and empties the
        // table even with no client tracking now, as in Redis (which tells
        // nothing of a SWAPDB).
        if !fx.touched_dbs.is_empty() && !fx.swapped {
            self.tracking.flush(&self.clients);
        }
        if self.tracking.active() {
            // Changed keys are reported to the clients caching them.
            if !fx.touched.is_empty() || !fx.expired_touched.is_empty() {
                let origin = crate::tracking::origin();
                self.tracking
                    .invalidate(&self.clients, fx.touched.iter().map(|(_, k)| k), origin);
                self.tracking.invalidate(
                    &self.clients,
                    fx.expired_touched.iter().map(|(_, k)| k),
                    0,
                );
                // Outside a client's request (expiry, the server's own
                // work) BCAST clients are told at once; a request tells
                // them when it ends.
                if origin == 0 {
                    self.tracking.broadcast(&self.clients);
                }
            }
        }
        if self.watch_count.load(Ordering::Relaxed) > 0 {
            let w = self.watches.lock();
            for k in fx.touched.iter().chain(&fx.expired_touched) {
                if let Some(list) = w.get(k) {
                    for (_, flag, _) in list {
                        flag.store(true, Ordering::Relaxed);
                    }
                }
            }
            // A flushed or swapped database changes a watched key only if
            // the key logically existed before (when watched) or exists now,
            // as in Redis 7.0: a missing or already-expired key that stays
            // missing or expired is no change.
            let now = now_ms();
            for db in &fx.touched_dbs {
                for ((d, key), list) in w.iter() {
                    if d == db {
                        let live_now = store
                            .dbs
                            .get(*d)
                            .and_then(|x| x.raw_get(key))
                            .is_some_and(|e| e.expire_at().is_none_or(|t| t > now));
                        for (_, flag, live_then) in list {
                            if *live_then || live_now {
                                flag.store(true, Ordering::Relaxed);
                            }
                        }
                    }
                }
            }
        }
        if fx.dirty > 0 {
            self.stats.dirty.fetch_add(fx.dirty, Ordering::Relaxed);
        }
        // The effects count expired keys and members whether or not events
        // were recorded: the one source for these statistics.
        if fx.expired_keys > 0 {
            self.stats
                .expired_keys
                .fetch_add(fx.expired_keys, Ordering::Relaxed);
        }
        if fx.expired_members > 0 {
            self.stats
                .expired_members
                .fetch_add(fx.expired_members, Ordering::Relaxed);
        }
        if !fx.garbage.is_empty() || !fx.garbage_dbs.is_empty() {
            // Freeing a huge value takes long: do it on another thread.
            let g = Garbage {
                values: std::mem::take(&mut fx.garbage),
                dbs: std::mem::take(&mut fx.garbage_dbs),
            };
            LAZYFREE_PENDING.fetch_add(g.objects(), Ordering::Relaxed);
            let _ = self.dropper.lock().send(g);
        }
        if !fx.events.is_empty() && self.notify.any() {
            let flags = *self.notify.read();
            if flags.any() {
                for ev in &fx.events {
                    for (ch, msg) in flags.messages(ev) {
                        self.publish(&ch, &msg);
                    }
                }
            }
        }
        if !fx.touched_dbs.is_empty() {
            // SWAPDB (and flushes) change whole databases: every key a
            // client blocks on there may now hold data, as in Redis.
            let b = self.blocking.lock();
            for (db, key) in b.by_key.keys() {
                if fx.touched_dbs.contains(db) {
                    fx.ready.push((*db, key.clone()));
                }
            }
        }
        if !fx.ready.is_empty() {
            let ready = std::mem::take(&mut fx.ready);
            self.serve_blocked(store, ready);
        }
    }

    /// Starts CLIENT PAUSE until `until` (Unix ms), or ends it (0): the
    /// dispatcher holds commands, and the store holds key expiry back.
    pub fn set_pause(&self, store: &mut Store, until: u64) {
        self.paused_until.store(until, Ordering::Relaxed);
        store.expiry_paused_until = until;
    }

    /// Registers WATCH of `key` by `client`; `live` says whether the key
    /// exists (unexpired) at this moment.
    pub fn watch(&self, client: u64, db: usize, key: Bytes, flag: &Arc<AtomicBool>, live: bool) {
        let mut w = self.watches.lock();
        let list = w.entry((db, key)).or_default();
        if !list.iter().any(|(c, _, _)| *c == client) {
            list.push((client, flag.clone(), live));
            self.watch_count.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether `key` existed (unexpired) when `client` watched it.
    pub fn watched_live(&self, client: u64, db: usize, key: &Bytes) -> bool {
        let w = self.watches.lock();
        w.get(&(db, key.clone()))
            .and_then(|list| list.iter().find(|(c, _, _)| *c == client))
            .is_some_and(|(_, _, live)| *live)
    }

    /// Forgets every WATCH of `client` on `keys`.
    pub fn unwatch(&self, client: u64, keys: &[(usize, Bytes)]) {
        let mut w = self.watches.lock();
        for k in keys {
            if let Some(list) = w.get_mut(k) {
                let before = list.len();
                list.retain(|(c, _, _)| *c != client);
                self.watch_count
                    .fetch_sub(before - list.len(), Ordering::Relaxed);
                if list.is_empty() {
                    w.remove(k);
                }
            }
        }
    }

    /// Registers a connected client.
    pub fn register(&self, entry: Arc<ClientEntry>) {
        self.clients.lock().insert(entry.id, entry);
    }

    /// Forgets a disconnected client.
    pub fn deregister(&self, id: u64) {
        self.clients.lock().remove(&id);
        let mut b = self.blocking.lock();
        let ids: Vec<u64> = b
            .waiters
            .iter()
            .filter(|(_, w)| w.client == id)
            .map(|(i, _)| *i)
            .collect();
        for i in ids {
            self.remove_waiter(&mut b, i);
        }
    }

    /// Number of connected clients.
    pub fn client_count(&self) -> usize {
        self.clients.lock().len()
    }

    /// Number of blocked clients.
    pub fn blocked_count(&self) -> usize {
        self.blocking.lock().waiters.len() + self.paused_clients.load(Ordering::Relaxed)
    }
}

/// Values waiting for the freeing thread (INFO `lazyfree_pending_objects`).
pub static LAZYFREE_PENDING: AtomicU64 = AtomicU64::new(0);
/// Values the freeing thread has freed (INFO `lazyfreed_objects`).
pub static LAZYFREED: AtomicU64 = AtomicU64::new(0);

/// What the freeing thread frees: values removed whole, and databases
/// emptied by FLUSHDB/FLUSHALL ASYNC.
struct Garbage {
    values: Vec<ebb_core::Value>,
    dbs: Vec<ebb_core::Db>,
}

impl Garbage {
    /// Objects as INFO counts them: each value, each key of a database.
    fn objects(&self) -> u64 {
        (self.values.len() + self.dbs.iter().map(|d| d.len()).sum::<usize>()) as u64
    }
}

fn spawn_dropper() -> std::sync::mpsc::Sender<Garbage> {
    let (tx, rx) = std::sync::mpsc::channel::<Garbage>();
    let _ = std::thread::Builder::new()
        .name("ebb-free".into())
        .spawn(move || {
            for garbage in rx {
                let big = garbage
                    .values
                    .iter()
                    .map(|v| v.member_count())
                    .sum::<usize>()
                    > 10_000
                    || !garbage.dbs.is_empty();
                let n = garbage.objects();
                drop(garbage);
                LAZYFREE_PENDING.fetch_sub(n, Ordering::Relaxed);
                LAZYFREED.fetch_add(n, Ordering::Relaxed);
                if big {
                    // Hand the freed pages back to the OS, so RSS shows the reclaim.
                    #[cfg(all(target_os = "linux", target_env = "gnu"))]
                    // SAFETY: malloc_trim only releases free heap memory.
                    unsafe {
                        libc::malloc_trim(0);
                    }
                }
            }
        });
    tx
}

/// Copies the options command semantics depend on into the store.
pub fn apply_core_config(cfg: &Config, store: &mut Store) {
    crate::evict::configure(cfg);
    crate::acl::configure(cfg);
    crate::observe::configure(cfg);
    crate::latency::configure(cfg);
    crate::cmdstats::configure(cfg);
    crate::outbuf::configure(cfg);
    crate::conn::limits::configure(cfg);
    crate::client_evict::configure(cfg);
    crate::tracking::configure(cfg);
    let c = &mut store.cfg;
    c.proto_max_bulk_len = cfg.get_i64("proto-max-bulk-len").max(1) as u64;
    c.hash_max_listpack_entries = cfg.get_i64("hash-max-listpack-entries").max(0) as usize;
    c.hash_max_listpack_value = cfg.get_i64("hash-max-listpack-value").max(0) as usize;
    c.set_max_intset_entries = cfg.get_i64("set-max-intset-entries").max(0) as usize;
    c.zset_max_listpack_entries = cfg.get_i64("zset-max-listpack-entries").max(0) as usize;
    c.zset_max_listpack_value = cfg.get_i64("zset-max-listpack-value").max(0) as usize;
    c.lfu = ebb_core::lfu::Lfu {
        on: cfg
            .get("maxmemory-policy")
            .unwrap_or_default()
            .to_ascii_lowercase()
            .ends_with("-lfu"),
        log_factor: cfg.get_i64("lfu-log-factor").clamp(0, i32::MAX as i64) as u32,
        decay_minutes: cfg.get_i64("lfu-decay-time").max(0) as u64,
    };
    let policy = cfg
        .get("maxmemory-policy")
        .unwrap_or_default()
        .to_ascii_lowercase();
    c.no_shared_integers =
        cfg.get_i64("maxmemory") > 0 && (policy.ends_with("-lru") || policy.ends_with("-lfu"));
}
