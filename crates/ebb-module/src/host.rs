//! Runs a core command on keys that live in the server. Each key the
//! command names is moved into a scratch keyspace (its value, and its TTL
//! as the server holds it), the command runs there with core's own
//! semantics, and what is left is moved back: values changed in place,
//! keys created or deleted, TTLs set or cleared. Then the server is told
//! what happened: keyspace events, and the commands to replicate and log
//! (expiry deletions as explicit removals, relative TTLs as absolute ones).

use std::cell::RefCell;
use std::ffi::{c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

use bytes::Bytes;
use ebb_core::value::StrValue;
use ebb_core::{CommandSpec, Ctx as CoreCtx, Effects, Entry, Reply, Store, Value};

use crate::ffi::{self, api, Ctx, Key, ModuleType, RString};
use crate::{expiry, names};

/// The module's data type, once registered.
pub static TYPE: AtomicPtr<ModuleType> = AtomicPtr::new(std::ptr::null_mut());

/// How a command's outcome is delivered.
#[derive(Clone, Copy, PartialEq)]
pub enum Mode {
    /// A client's command: a blocking pop that finds nothing parks the
    /// client on its keys, or answers a null array inside MULTI, a script,
    /// or for a client that may not block, as in Redis.
    MayBlock,
    /// A parked client's keys were signalled: reply only if there was
    /// something to pop, else stay parked (`ERR` to the server).
    Unblock,
}

/// Clients parked on module keys: while none is, writes do not collect the
/// keys that received elements.
static PARKED: AtomicUsize = AtomicUsize::new(0);

/// Set once the server may have replicas to feed: a replica connected, a
/// child was forked (a full synchronisation starts with one), or the role
/// changed. From then on, as in the server, every write is replicated.
pub static REPLICATION: AtomicBool = AtomicBool::new(false);

/// Whether what commands change must be logged and replicated: the AOF is
/// on, or replicas may need it (see [`REPLICATION`]). When neither, the
/// server itself would drop what the module replicates, so the module
/// does not build it (the absolute forms of relative TTLs, the removals of
/// expired members), as ebb-server does not without an AOF.
pub fn must_log(ctx_flags: c_int) -> bool {
    ctx_flags & ffi::CTX_FLAGS_AOF != 0 || REPLICATION.load(Ordering::Relaxed)
}

thread_local! {
    /// The scratch keyspace commands run in. The server calls the module
    /// from its main thread only.
    static SCRATCH: RefCell<Store> = RefCell::new(Store::new(1));
}

/// Runs `f` on the scratch database, emptied afterwards; `None` if the
/// scratch keyspace is in use (a command inside a command).
pub fn with_scratch<R>(f: impl FnOnce(&mut ebb_core::Db) -> R) -> Option<R> {
    SCRATCH.with(|cell| {
        let mut store = cell.try_borrow_mut().ok()?;
        let sdb = &mut store.dbs[0];
        let r = f(sdb);
        sdb.clear();
        Some(r)
    })
}

/// Stands for a value while it is moved out, and for a key of one of the
/// server's own types: core sees a string there, so reading it as a set,
/// sorted set or hash is a WRONGTYPE error, and overwriting it works.
pub fn placeholder() -> Value {
    Value::Str(StrValue::default())
}

/// What a key held when the command started.
#[derive(Clone, Copy, PartialEq)]
enum Held {
    Empty,
    Ours(*mut Value),
    /// One of the server's strings, for a command that reads them
    /// ([`names::reads_strings`]).
    Str,
    Other,
}

/// Stands for a key of the server's own types that the command cannot
/// read. For a command that reads strings it must not be a string (core
/// then answers WRONGTYPE, as for any list, set or hash of the server's).
fn stand_in(strings: bool) -> Value {
    match strings {
        true => {
            // Not empty: core drops an empty collection as no key at all.
            let mut l = ebb_core::value::ListValue::new();
            l.push_back(Bytes::from_static(b"-"));
            Value::List(l)
        }
        false => placeholder(),
    }
}

/// Whether `v`, found where a key of the server's own types stood, is
/// still the stand-in: the command left that key's value alone.
fn is_stand_in(v: &Value, strings: bool) -> bool {
    match strings {
        true => matches!(v, Value::List(_)),
        false => matches!(v, Value::Str(_)),
    }
}

/// A key the command names, opened in the server.
struct Opened<'a> {
    rstr: *mut RString,
    name: &'a [u8],
    key: *mut Key,
    writable: bool,
    held: Held,
    /// The key's TTL as an absolute deadline (Unix ms), as the scratch
    /// keyspace is given it (see [`Opened::open`]).
    ttl: Option<u64>,
    /// The value was copied into the scratch keyspace, not moved: the
    /// server's stays as it was (see [`run`]).
    copied: bool,
    /// The command changed the key: signalled to the server (WATCH,
    /// client-side caching) when the key is closed.
    modified: bool,
    /// The command reads and writes the server's strings.
    strings: bool,
}

impl Opened<'_> {
    /// Opens the key, for writing if the command writes. The module tells
    /// the server itself which keys changed ([`Opened::close`]), so opening
    /// for writing does not count as a change. `strings`: the command reads
    /// the server's strings ([`names::reads_strings`]).
    unsafe fn open(
        ctx: *mut Ctx,
        rstr: *mut RString,
        name: &[u8],
        now: u64,
        write: bool,
        strings: bool,
    ) -> Opened<'_> {
        let a = api();
        let mode = if write {
            ffi::READ | ffi::WRITE
        } else {
            ffi::READ
        };
        let key = (a.OpenKey)(ctx, rstr, mode);
        // A missing key opened for reading is a null handle.
        let held = if key.is_null() || (a.KeyType)(key) == ffi::KEYTYPE_EMPTY {
            Held::Empty
        } else if (a.ModuleTypeGetType)(key) == TYPE.load(Ordering::Relaxed) {
            Held::Ours((a.ModuleTypeGetValue)(key) as *mut Value)
        } else if strings && (a.KeyType)(key) == ffi::KEYTYPE_STRING {
            Held::Str
        } else {
            Held::Other
        };
        let ttl = match key.is_null() {
            true => None,
            false => match (a.GetAbsExpire)(key) {
                t if t < 0 => None,
                t => Some(t as u64),
            },
        };
        Opened {
            rstr,
            name,
            key,
            writable: write,
            held,
            // The server found the key alive: inside MULTI or a script it
            // judges TTLs at the time the transaction or script began, so a
            // TTL may have passed since. Core must not delete it then.
            ttl: ttl.map(|t| t.max(now + 1)),
            copied: false,
            modified: false,
            strings,
        }
    }

    /// The bytes of the server's string under the key (`Held::Str`).
    unsafe fn string(&self) -> &[u8] {
        let mut len = 0usize;
        let p = (api().StringDMA)(self.key, &mut len, ffi::READ);
        if p.is_null() || len == 0 {
            return &[];
        }
        std::slice::from_raw_parts(p as *const u8, len)
    }

    /// Readies the key for a change: reopens it for writing if it was
    /// opened for reading (a read that found due members), and records the
    /// change.
    unsafe fn writable(&mut self, ctx: *mut Ctx) {
        self.modified = true;
        if !self.writable {
            let a = api();
            (a.CloseKey)(self.key);
            self.key = (a.OpenKey)(ctx, self.rstr, ffi::READ | ffi::WRITE);
            self.writable = true;
        }
    }

    /// Closes the key, signalling a change.
    unsafe fn close(&self, ctx: *mut Ctx) {
        let a = api();
        if self.modified {
            (a.SignalModifiedKey)(ctx, self.rstr);
        }
        (a.CloseKey)(self.key);
    }
}

/// The scratch entry of a key: its value, and its server TTL.
fn entry_of(value: Value, ttl: Option<u64>, db: &mut ebb_core::Db, name: &[u8]) {
    db.insert_entry(name, Entry::new(value));
    if ttl.is_some() {
        db.set_expire(name, ttl);
    }
}

/// Whether the data must stay as the server holds it: on a replica (its
/// primary sends every change, removals of expired members included) and
/// while clients are paused (a failover must find the data fixed), as
/// Redis leaves expired keys in place then.
pub unsafe fn frozen(ctx_flags: c_int) -> bool {
    ctx_flags & ffi::CTX_FLAGS_SLAVE != 0 || (api().AvoidReplicaTraffic)() != 0
}

/// Runs `spec` for the command in `ctx`; `argv` are the arguments as the
/// client sent them and `core_args` the same with core's command name.
///
/// Time: a replica applies its primary's commands, and a server loading
/// its AOF replays them, as of no time at all (time 0), so that nothing is
/// due and nothing removed: the primary's (or the log's) removals come in
/// the stream, in order, and every deadline in it is absolute. A read that
/// must not change the data (a replica's, or while clients are paused)
/// runs on a copy of any value that has due members, so that it sees them
/// gone but they stay.
///
/// # Safety
/// `ctx` and `argv` must be the running command's.
pub unsafe fn run(
    ctx: *mut Ctx,
    spec: &'static CommandSpec,
    argv: &[*mut RString],
    core_args: &[&[u8]],
    mode: Mode,
) -> c_int {
    let a = api();
    let flags = (a.GetContextFlags)(ctx);
    let now = (a.Milliseconds)().max(0) as u64;
    let db = (a.GetSelectedDb)(ctx);
    let write = spec.is_write();
    let frozen = frozen(flags);
    let replayed = flags & (ffi::CTX_FLAGS_REPLICATED | ffi::CTX_FLAGS_LOADING) != 0;
    let core_now = if write && replayed { 0 } else { now };
    let log = must_log(flags);
    let mut status = ffi::OK;

    SCRATCH.with(|cell| {
        // Another module calling a command of this one from inside it (a
        // key event it sent) finds the scratch keyspace in use.
        let Ok(mut store) = cell.try_borrow_mut() else {
            crate::reply::error(ctx, "ERR ebb commands cannot run inside one another");
            return;
        };
        let strings = names::reads_strings(spec);
        let mut keys: Vec<Opened> = Vec::new();
        for pos in spec.key_positions(core_args) {
            let (Some(&rstr), Some(&name)) = (argv.get(pos), core_args.get(pos)) else {
                continue;
            };
            if keys.iter().any(|k| k.name == name) {
                continue;
            }
            keys.push(Opened::open(ctx, rstr, name, now, write, strings));
        }
        if mode == Mode::Unblock && !worth_retrying(&keys, now) {
            // Nothing to pop (every member due, or no key): stay parked,
            // changing nothing. A retry that only removed due members and
            // then did not serve the client would leave what it replicated
            // pending, which the server does not allow.
            for k in &keys {
                k.close(ctx);
            }
            status = ffi::ERR;
            return;
        }
        let mut fx = Effects {
            // One key: it changed if anything did. Several: core names them.
            skip_touched: keys.len() <= 1,
            skip_ready: PARKED.load(Ordering::Relaxed) == 0,
            skip_member_names: !crate::events::wanted(),
            skip_log: !log,
            // `notify-keyspace-events` is empty: nothing to publish.
            skip_events: (a.GetNotifyKeyspaceEvents)() == 0,
            ..Effects::default()
        };
        let sdb = &mut store.dbs[0];
        if !sdb.is_empty() {
            sdb.clear();
        }
        for k in keys.iter_mut() {
            match k.held {
                Held::Empty => {}
                Held::Ours(v)
                    if frozen && !write && (*v).earliest_deadline().is_some_and(|t| t <= now) =>
                {
                    k.copied = true;
                    entry_of((*v).clone(), k.ttl, sdb, k.name);
                }
                Held::Ours(v) => entry_of(
                    std::mem::replace(&mut *v, placeholder()),
                    k.ttl,
                    sdb,
                    k.name,
                ),
                Held::Str => entry_of(Value::Str(StrValue::new(k.string())), k.ttl, sdb, k.name),
                Held::Other => entry_of(stand_in(strings), k.ttl, sdb, k.name),
            }
        }
        let may_block = mode == Mode::MayBlock
            && flags & (ffi::CTX_FLAGS_MULTI | ffi::CTX_FLAGS_LUA | ffi::CTX_FLAGS_DENY_BLOCKING)
                == 0;
        let result = catch_unwind(AssertUnwindSafe(|| {
            let mut cx = CoreCtx::new(&mut store, 0, core_now, &mut fx);
            cx.resp3 = flags & ffi::CTX_FLAGS_RESP3 != 0;
            cx.may_block = may_block;
            ebb_core::execute_result(&mut cx, spec, core_args)
        }));
        if frozen && !write {
            // What the read removed, it removed from copies: nothing to
            // tell anyone.
            fx.propagate.clear();
            fx.events.clear();
            fx.dirty = 0;
        }
        let one = keys.len() <= 1;
        let sdb = &mut store.dbs[0];
        for k in keys.iter_mut() {
            let entry = sdb.remove(k.name);
            if !k.copied {
                let changed = fx.dirty > 0
                    && (one
                        || fx
                            .touched
                            .iter()
                            .chain(&fx.expired_touched)
                            .any(|(_, t)| &t[..] == k.name));
                put_back(ctx, db, k, entry, changed);
            }
        }
        if !sdb.is_empty() {
            sdb.clear();
        }
        drop(store);
        match result {
            Ok(outcome) => {
                tell_server(ctx, write && log, &mut fx, log);
                signal_ready(ctx, &mut fx, &keys);
                for k in &keys {
                    k.close(ctx);
                }
                match outcome {
                    Ok(Reply::NilArray) if mode == Mode::Unblock => status = ffi::ERR,
                    Ok(reply) => crate::reply::send(ctx, &reply),
                    Err(ebb_core::Error::WouldBlock { keys, timeout_ms }) => {
                        park(ctx, argv, core_args, &keys, timeout_ms)
                    }
                    Err(e) => crate::reply::send(ctx, &Reply::from(e)),
                }
            }
            Err(_) => {
                for k in &keys {
                    k.close(ctx);
                }
                crate::reply::error(ctx, "ERR internal error in the ebb module");
            }
        }
    });
    status
}

/// Whether a parked client's retry can serve it: a key of another type (an
/// error to report) or a value with a live member.
unsafe fn worth_retrying(keys: &[Opened], now: u64) -> bool {
    keys.iter().any(|k| match k.held {
        Held::Other | Held::Str => true,
        Held::Ours(v) => (*v).member_count() > 0 && !(*v).all_members_due(now),
        Held::Empty => false,
    })
}

/// Tells the server which keys received elements, for clients parked on
/// them (the server cannot see inside the module's values).
unsafe fn signal_ready(ctx: *mut Ctx, fx: &mut Effects, keys: &[Opened]) {
    let a = api();
    for (_, key) in fx.ready.drain(..) {
        match keys.iter().find(|k| k.name == &key[..]) {
            Some(k) => (a.SignalKeyAsReady)(ctx, k.rstr),
            None => {
                let s = (a.CreateString)(ctx, key.as_ptr() as *const _, key.len());
                (a.SignalKeyAsReady)(ctx, s);
                (a.FreeString)(ctx, s);
            }
        }
    }
}

/// Parks the client on `keys` (a blocking pop that found them all empty).
unsafe fn park(
    ctx: *mut Ctx,
    argv: &[*mut RString],
    core_args: &[&[u8]],
    keys: &[Bytes],
    timeout_ms: u64,
) {
    // Argument 0 is the command's name, which a key may equal.
    let mut names: Vec<*mut RString> = keys
        .iter()
        .filter_map(|k| {
            let i = core_args.iter().skip(1).position(|a| *a == &k[..])? + 1;
            argv.get(i).copied()
        })
        .collect();
    PARKED.fetch_add(1, Ordering::Relaxed);
    (api().BlockClientOnKeys)(
        ctx,
        crate::on_keys_ready,
        on_block_timeout,
        on_unpark,
        timeout_ms.min(i64::MAX as u64) as i64,
        names.as_mut_ptr(),
        names.len() as c_int,
        // Non-null, so that the server calls `on_unpark` when the client
        // leaves, however it leaves.
        std::ptr::NonNull::<u8>::dangling().as_ptr() as *mut std::ffi::c_void,
    );
}

unsafe extern "C" fn on_block_timeout(
    ctx: *mut Ctx,
    _argv: *mut *mut RString,
    _argc: c_int,
) -> c_int {
    (api().ReplyWithNullArray)(ctx);
    ffi::OK
}

unsafe extern "C" fn on_unpark(_ctx: *mut Ctx, _data: *mut std::ffi::c_void) {
    PARKED.fetch_sub(1, Ordering::Relaxed);
}

/// Moves a key's scratch entry (or its absence) back into the server.
/// `changed`: the command changed the key (or removed due members from
/// it); the key is then signalled as modified when closed (WATCH,
/// client-side caching).
unsafe fn put_back(ctx: *mut Ctx, db: c_int, k: &mut Opened, entry: Option<Entry>, changed: bool) {
    let a = api();
    let (value, ttl) = match entry {
        Some(e) => {
            let ttl = e.expire_at();
            (Some(e.value), ttl)
        }
        None => (None, None),
    };
    match (k.held, value) {
        (Held::Empty, None) => {}
        (Held::Other, Some(v)) if is_stand_in(&v, k.strings) => {
            // A key of the server's own types that the command did not
            // replace: only its TTL may have changed (PERSIST).
            if ttl != k.ttl {
                k.writable(ctx);
                set_ttl(k.key, ttl);
            }
        }
        (Held::Ours(p), Some(v)) => {
            *p = v;
            if changed {
                k.writable(ctx);
            }
            if ttl != k.ttl {
                k.writable(ctx);
                set_ttl(k.key, ttl);
            }
            expiry::note(db, k.name, (*p).earliest_deadline());
        }
        (Held::Str | Held::Empty, Some(Value::Str(s))) if k.strings => {
            // One of the server's strings, written back as one.
            if changed || k.held == Held::Empty {
                k.writable(ctx);
                let r = (a.CreateString)(ctx, s.as_slice().as_ptr() as *const _, s.len());
                (a.StringSet)(k.key, r);
                (a.FreeString)(ctx, r);
                // Setting the string cleared its TTL, as SET does.
                if ttl.is_some() {
                    set_ttl(k.key, ttl);
                }
            } else if ttl != k.ttl {
                k.writable(ctx);
                set_ttl(k.key, ttl);
            }
        }
        (_, Some(v)) => {
            k.writable(ctx);
            let due = v.earliest_deadline();
            (a.ModuleTypeSetValue)(
                k.key,
                TYPE.load(Ordering::Relaxed),
                Box::into_raw(Box::new(v)) as *mut _,
            );
            if ttl.is_some() {
                set_ttl(k.key, ttl);
            }
            expiry::note(db, k.name, due);
        }
        (_, None) => {
            k.writable(ctx);
            (a.DeleteKey)(k.key);
            expiry::note(db, k.name, None);
        }
    }
}

unsafe fn set_ttl(key: *mut Key, ttl: Option<u64>) {
    let at = match ttl {
        Some(t) => t.min(i64::MAX as u64) as i64,
        None => ffi::NO_EXPIRE,
    };
    (api().SetAbsExpire)(key, at);
}

/// Keyspace events, then replication (`log`): expiry deletions first,
/// then the command itself (`write`; or the form core logs it as).
unsafe fn tell_server(ctx: *mut Ctx, write: bool, fx: &mut Effects, log: bool) {
    notify(ctx, fx);
    if !log {
        fx.propagate.clear();
        if fx.dirty > 0 {
            // Nothing to log or replicate, but the change must count for
            // the save points (`save 3600 1`): replicating is how a module
            // counts one, and with no AOF and no replicas the server
            // propagates nothing.
            (api().ReplicateVerbatim)(ctx);
        }
    }
    for (_, cmd) in fx.propagate.drain(..) {
        replicate(ctx, &cmd);
    }
    if write {
        match fx.rewrite.take() {
            Some(cmds) => {
                for c in cmds {
                    replicate(ctx, &c);
                }
            }
            None if fx.dirty > 0 => {
                (api().ReplicateVerbatim)(ctx);
            }
            None => {}
        }
    }
    drop_garbage(fx);
}

/// Publishes the keyspace events core recorded.
///
/// # Safety
/// `ctx` must be a live context on the events' database.
pub unsafe fn notify(ctx: *mut Ctx, fx: &mut Effects) {
    let a = api();
    if fx.events.is_empty() {
        return;
    }
    let members = crate::events::flags((a.GetNotifyKeyspaceEvents)());
    for ev in fx.events.drain(..) {
        let class = match ev.class {
            b'g' => ffi::NOTIFY_GENERIC,
            b's' => ffi::NOTIFY_SET,
            b'h' => ffi::NOTIFY_HASH,
            b'z' => ffi::NOTIFY_ZSET,
            b'x' => ffi::NOTIFY_EXPIRED,
            b'e' => ffi::NOTIFY_EVICTED,
            b'l' => ffi::NOTIFY_LIST,
            b'$' => ffi::NOTIFY_STRING,
            // `new` events: the server sends its own when a key is added.
            _ => continue,
        };
        let Ok(name) = CString::new(ev.name.as_bytes()) else {
            continue;
        };
        let key = (a.CreateString)(ctx, ev.key.as_ptr() as *const _, ev.key.len());
        (a.NotifyKeyspaceEvent)(ctx, class, name.as_ptr(), key);
        (a.FreeString)(ctx, key);
        // Then the member channels, as ebb-server orders them.
        if let Some(f) = &members {
            if !ev.members.is_empty() {
                crate::events::publish(ctx, f, &ev);
            }
        }
    }
}

/// Replicates (and logs to the AOF) one command of core's, under the
/// module's name when the module has the command.
///
/// # Safety
/// `ctx` must be a live context.
pub unsafe fn replicate(ctx: *mut Ctx, cmd: &[Bytes]) {
    let Some((name, rest)) = cmd.split_first() else {
        return;
    };
    let a = api();
    let Some(cname) = names::logged_name(name) else {
        return;
    };
    let strs: Vec<*mut RString> = rest
        .iter()
        .map(|b| (a.CreateString)(ctx, b.as_ptr() as *const _, b.len()))
        .collect();
    (a.Replicate)(
        ctx,
        cname.as_ptr(),
        c"v".as_ptr(),
        strs.as_ptr(),
        strs.len(),
    );
    for s in strs {
        (a.FreeString)(ctx, s);
    }
}

/// Frees values core dropped whole. Large ones go to a thread of their
/// own so the server's thread does not pay for them (the allocator is the
/// server's, which any thread may call).
pub fn drop_garbage(fx: &mut Effects) {
    let big: Vec<Value> = fx
        .garbage
        .drain(..)
        .filter(|v| v.member_count() > 4096)
        .collect();
    if !big.is_empty() {
        if let Err(e) = std::thread::Builder::new()
            .name("ebb-free".into())
            .spawn(move || drop(big))
        {
            drop(e);
        }
    }
}
