//! Client-side caching (`CLIENT TRACKING`), as Redis 7.0 has it.
//!
//! In the default mode the server remembers which keys a tracking client
//! read (with read-only commands) and, when one of them changes, expires,
//! is evicted or is flushed, sends that client one invalidation message
//! and forgets the key for it. In BCAST mode a client names key prefixes
//! instead and is told of every changed key under them, once per command
//! that changed them. Messages go to the client itself as RESP3 push
//! messages (`invalidate` and the keys), or to another client (`REDIRECT`):
//! a RESP3 one gets the push, a RESP2 one subscribed to
//! `__redis__:invalidate` gets a pub/sub message. Keys of every database
//! share one table, as in Redis, and the table holds at most
//! `tracking-table-max-keys` keys: past that, keys are dropped with an
//! invalidation as if they had changed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;

use crate::server::{ClientEntry, Msg};

thread_local! {
    /// The client whose command is running on this thread (0: none), for
    /// NOLOOP: its own changes are not reported back to it.
    static ORIGIN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

thread_local! {
    /// Messages for the client running commands on this thread: written
    /// into its replies at the right place (before the reply when an
    /// eviction made them, after it when the command did), not through
    /// its mailbox, which is read only after the whole batch.
    static OWN: std::cell::RefCell<Vec<Note>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Takes the messages for the running client (see `OWN`).
pub fn take_own() -> Vec<Note> {
    OWN.with(|o| std::mem::take(&mut *o.borrow_mut()))
}

/// Whether messages wait for the running client.
pub fn has_own() -> bool {
    OWN.with(|o| !o.borrow().is_empty())
}

/// Delivers `note` to `target`: kept for the running client, or sent to
/// the connection's mailbox.
fn deliver(target: &ClientEntry, note: Note) {
    if target.id == origin() {
        OWN.with(|o| o.borrow_mut().push(note));
    } else {
        let size = note.size();
        target.queue(Msg::Tracking(note), size);
    }
}

/// Marks `id` as the client running commands on this thread (0: none).
pub fn set_origin(id: u64) {
    ORIGIN.with(|o| o.set(id));
}

/// The client running commands on this thread (0: none).
pub fn origin() -> u64 {
    ORIGIN.with(|o| o.get())
}

/// `tracking-table-max-keys` (0: no limit).
static MAX_KEYS: AtomicUsize = AtomicUsize::new(1_000_000);

/// Reads `tracking-table-max-keys`.
pub fn configure(cfg: &crate::config::Config) {
    MAX_KEYS.store(
        cfg.get_i64("tracking-table-max-keys").max(0) as usize,
        Ordering::Relaxed,
    );
}

/// CLIENT LIST flag bits kept in `ClientEntry::tracking`.
pub const FLAG_ON: u8 = 1;
pub const FLAG_BCAST: u8 = 2;
pub const FLAG_BROKEN: u8 = 4;

/// The channel a RESP2 redirection client receives invalidations on.
pub const CHANNEL: &[u8] = b"__redis__:invalidate";

/// How a client tracks keys (`CLIENT TRACKING ON` and its options).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mode {
    pub bcast: bool,
    pub optin: bool,
    pub optout: bool,
    pub noloop: bool,
    /// The client invalidations go to (0: the tracking client itself).
    pub redirect: u64,
    /// BCAST prefixes (the empty prefix when none was given).
    pub prefixes: Vec<Bytes>,
}

/// What a connection is sent about tracking.
#[derive(Debug)]
pub enum Note {
    /// These keys changed; None: every key (a flush).
    Invalidate(Option<Vec<Bytes>>),
    /// The redirection client went away (RESP3 tracking clients only).
    RedirBroken(u64),
}

impl Note {
    /// The bytes the message takes while it waits in a mailbox (about
    /// what it takes on the wire).
    pub fn size(&self) -> usize {
        match self {
            Note::Invalidate(Some(keys)) => keys.iter().map(|k| k.len() + 16).sum::<usize>() + 48,
            Note::Invalidate(None) | Note::RedirBroken(_) => 48,
        }
    }
}

#[derive(Default)]
struct Prefix {
    clients: HashSet<u64>,
    /// Keys changed under the prefix since the last broadcast, with the
    /// client that changed each last (0: none), for NOLOOP.
    keys: BTreeMap<Bytes, u64>,
}

struct Client {
    mode: Mode,
    /// The redirection client was found gone (TRACKINGINFO `broken_redirect`).
    broken: bool,
}

#[derive(Default)]
struct State {
    /// Keys read by clients in the default mode, and who read them.
    table: HashMap<Bytes, HashSet<u64>>,
    /// Client ids in the table, over all keys.
    items: u64,
    prefixes: BTreeMap<Bytes, Prefix>,
    clients: HashMap<u64, Client>,
}

/// The server's tracking state.
#[derive(Default)]
pub struct Tracking {
    /// Clients with tracking on (INFO `tracking_clients`); when 0, nothing
    /// else here is looked at.
    active: AtomicUsize,
    /// BCAST prefixes have changed keys waiting to be sent.
    pending: std::sync::atomic::AtomicBool,
    state: Mutex<State>,
}

type Clients = HashMap<u64, Arc<ClientEntry>>;

impl Tracking {
    /// Whether any client has tracking on.
    pub fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed) > 0
    }

    /// INFO's figures: tracking clients, keys, items, prefixes.
    pub fn figures(&self) -> (usize, usize, u64, usize) {
        let st = self.state.lock();
        (
            st.clients.len(),
            st.table.len(),
            st.items,
            st.prefixes.len(),
        )
    }

    /// Turns tracking on for `id` (or changes its options; the caller has
    /// checked them against its current mode).
    pub fn enable(&self, id: u64, mut mode: Mode) {
        let mut st = self.state.lock();
        let old_prefixes = st
            .clients
            .get(&id)
            .map(|c| c.mode.prefixes.clone())
            .unwrap_or_default();
        if mode.bcast {
            if mode.prefixes.is_empty() {
                mode.prefixes.push(Bytes::new());
            }
            for p in &mode.prefixes {
                st.prefixes.entry(p.clone()).or_default().clients.insert(id);
            }
            // Prefixes add up while tracking stays on, as in Redis (the
            // old ones are compared with the few given, not with each
            // other: a client may hold thousands).
            let given = mode.prefixes.len();
            for p in old_prefixes {
                if !mode.prefixes[..given].contains(&p) {
                    mode.prefixes.push(p);
                }
            }
        }
        if st
            .clients
            .insert(
                id,
                Client {
                    mode,
                    broken: false,
                },
            )
            .is_none()
        {
            self.active.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Turns tracking off for `id` (also when it disconnects). Its ids in
    /// the key table go lazily, as in Redis.
    pub fn disable(&self, id: u64) {
        if !self.active() {
            return;
        }
        let mut st = self.state.lock();
        let Some(c) = st.clients.remove(&id) else {
            return;
        };
        self.active.fetch_sub(1, Ordering::Relaxed);
        for p in &c.mode.prefixes {
            if let Some(pre) = st.prefixes.get_mut(p) {
                pre.clients.remove(&id);
                if pre.clients.is_empty() {
                    st.prefixes.remove(p);
                }
            }
        }
    }

    /// `id`'s mode and whether its redirection is broken, if it tracks.
    pub fn mode_of(&self, id: u64) -> Option<(Mode, bool)> {
        if !self.active() {
            return None;
        }
        let st = self.state.lock();
        st.clients.get(&id).map(|c| (c.mode.clone(), c.broken))
    }

    /// Remembers that `id` read `keys`; then keeps the table within
    /// `max_keys` (0: no limit).
    pub fn remember<'a>(
        &self,
        clients: &Mutex<Clients>,
        id: u64,
        keys: impl Iterator<Item = &'a [u8]>,
    ) {
        let max_keys = MAX_KEYS.load(Ordering::Relaxed);
        let mut st = self.state.lock();
        for k in keys {
            let ids = match st.table.get_mut(k) {
                Some(ids) => ids,
                None => st.table.entry(Bytes::copy_from_slice(k)).or_default(),
            };
            if ids.insert(id) {
                st.items += 1;
            }
        }
        if max_keys > 0 && st.table.len() > max_keys {
            limit(&mut st, &clients.lock(), max_keys);
        }
    }

    /// Drops keys past `max_keys` (the client cron's turn, for a limit
    /// lowered by CONFIG SET).
    pub fn enforce_limit(&self, clients: &Mutex<Clients>) {
        let max_keys = MAX_KEYS.load(Ordering::Relaxed);
        if !self.active() || max_keys == 0 {
            return;
        }
        let mut st = self.state.lock();
        if st.table.len() > max_keys {
            limit(&mut st, &clients.lock(), max_keys);
        }
    }

    /// Keys changed by a command (or expired, or evicted), `origin` the
    /// client that ran it (0: none): their readers are told. BCAST clients
    /// are told by [`Tracking::broadcast`], once per request.
    pub fn invalidate<'a>(
        &self,
        clients: &Mutex<Clients>,
        keys: impl Iterator<Item = &'a Bytes>,
        origin: u64,
    ) {
        let mut st = self.state.lock();
        let clients = clients.lock();
        let st = &mut *st;
        for key in keys {
            for (p, pre) in st.prefixes.iter_mut() {
                if key.starts_with(p) {
                    pre.keys.insert(key.clone(), origin);
                    self.pending.store(true, Ordering::Relaxed);
                }
            }
            if let Some(ids) = st.table.remove(&key[..]) {
                st.items -= ids.len() as u64;
                for id in ids {
                    let skip = st
                        .clients
                        .get(&id)
                        .is_none_or(|c| c.mode.bcast || (c.mode.noloop && id == origin));
                    if !skip {
                        send(st, &clients, id, Note::Invalidate(Some(vec![key.clone()])));
                    }
                }
            }
        }
    }

    /// Sends BCAST clients the keys changed under their prefixes since the
    /// last call: one message per prefix (the end of each request, as
    /// Redis sends them once per event-loop turn).
    pub fn broadcast(&self, clients: &Mutex<Clients>) {
        if !self.pending.swap(false, Ordering::Relaxed) {
            return;
        }
        let mut st = self.state.lock();
        broadcast(&mut st, &clients.lock());
    }

    /// A flush: every tracking client is told that every key changed, and
    /// the table is emptied.
    pub fn flush(&self, clients: &Mutex<Clients>) {
        let mut st = self.state.lock();
        let clients = clients.lock();
        st.table.clear();
        st.items = 0;
        let ids: Vec<u64> = st.clients.keys().copied().collect();
        for id in ids {
            send(&mut st, &clients, id, Note::Invalidate(None));
        }
    }
}

/// Sends `note` for tracking client `id`: to its redirection client, or to
/// itself. A redirection client that is gone marks the redirection broken
/// and tells the tracking client (RESP3 only).
fn send(st: &mut State, clients: &Clients, id: u64, note: Note) {
    let Some(c) = st.clients.get_mut(&id) else {
        return;
    };
    let redirect = c.mode.redirect;
    if redirect != 0 {
        match clients.get(&redirect) {
            Some(target) => deliver(target, note),
            None => {
                c.broken = true;
                if let Some(me) = clients.get(&id) {
                    me.tracking.fetch_or(FLAG_BROKEN, Ordering::Relaxed);
                    if me.resp.load(Ordering::Relaxed) >= 3 {
                        deliver(me, Note::RedirBroken(redirect));
                    }
                }
            }
        }
        return;
    }
    // Without redirection only RESP3 has a way to say it.
    if let Some(me) = clients.get(&id) {
        if me.resp.load(Ordering::Relaxed) >= 3 {
            deliver(me, note);
        }
    }
}

/// Sends each prefix's changed keys to its clients (without the keys a
/// NOLOOP client changed itself), and starts the prefixes afresh.
fn broadcast(st: &mut State, clients: &Clients) {
    let mut out: Vec<(u64, Vec<Bytes>)> = Vec::new();
    for pre in st.prefixes.values_mut() {
        if pre.keys.is_empty() {
            continue;
        }
        let keys = std::mem::take(&mut pre.keys);
        for &id in &pre.clients {
            let noloop = st.clients.get(&id).is_some_and(|c| c.mode.noloop);
            let list: Vec<Bytes> = keys
                .iter()
                .filter(|(_, &by)| !(noloop && by == id))
                .map(|(k, _)| k.clone())
                .collect();
            if !list.is_empty() {
                out.push((id, list));
            }
        }
    }
    for (id, keys) in out {
        send(st, clients, id, Note::Invalidate(Some(keys)));
    }
}

/// Drops keys from the table until it holds `max_keys`, telling their
/// readers as if the keys had changed.
fn limit(st: &mut State, clients: &Clients, max_keys: usize) {
    let excess = st.table.len().saturating_sub(max_keys);
    let victims: Vec<Bytes> = st.table.keys().take(excess).cloned().collect();
    for key in victims {
        let Some(ids) = st.table.remove(&key) else {
            continue;
        };
        st.items -= ids.len() as u64;
        for id in ids {
            if st.clients.get(&id).is_some_and(|c| !c.mode.bcast) {
                send(st, clients, id, Note::Invalidate(Some(vec![key.clone()])));
            }
        }
    }
}

/// The message a connection writes for `note`, in its protocol: a RESP3
/// push, or for a RESP2 connection in pub/sub mode a message on
/// [`CHANNEL`]; None when the connection has no way to receive it.
pub fn encode(note: &Note, resp3: bool, subscribed: bool, out: &mut BytesMut) -> bool {
    use crate::resp::{put_bulk, put_int};
    match note {
        Note::RedirBroken(id) => {
            if !resp3 {
                return false;
            }
            put_int(out, b'>', 2);
            put_bulk(out, b"tracking-redir-broken");
            put_int(out, b':', *id as i64);
        }
        Note::Invalidate(keys) => {
            if resp3 {
                put_int(out, b'>', 2);
                put_bulk(out, b"invalidate");
            } else if subscribed {
                put_int(out, b'*', 3);
                put_bulk(out, b"message");
                put_bulk(out, CHANNEL);
            } else {
                return false;
            }
            match keys {
                Some(keys) => {
                    put_int(out, b'*', keys.len() as i64);
                    for k in keys {
                        put_bulk(out, k);
                    }
                }
                None if resp3 => out.extend_from_slice(b"_\r\n"),
                None => out.extend_from_slice(b"$-1\r\n"),
            }
        }
    }
    true
}
