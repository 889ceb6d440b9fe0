//! Active expiry for the module's keys. The server knows nothing of member
//! deadlines, so the module keeps its own index: every key of its type
//! that has members with deadlines, by earliest deadline. A timer takes the
//! due keys, removes their due members (logged and replicated as explicit
//! removals, with `*expired` events) and re-files each key under its next
//! deadline.
//!
//! The index learns of keys from the module's own commands and from the
//! server's events for keys that arrive otherwise (loaded from a snapshot,
//! renamed, moved, copied, restored, databases swapped). A key deleted or
//! overwritten by the server's own commands is not reported: its entry is
//! dropped when it comes due and the key is found not to be the module's.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use ebb_core::{Effects, Entry, Value};

use crate::ffi::{self, api, Ctx, RString};
use crate::host::{self, placeholder, TYPE};

/// Timer period (ms).
const PERIOD_MS: i64 = 10;
/// Work per timer run: at most this long, checking the clock every few keys.
const BUDGET: Duration = Duration::from_micros(1000);
/// Members removed from one key per visit (a key whose members are all
/// due is dropped whole, whatever its size).
const MEMBERS_PER_VISIT: usize = 2000;

#[derive(Default)]
struct Index {
    order: BTreeSet<(u64, i32, Box<[u8]>)>,
    due: HashMap<(i32, Box<[u8]>), u64>,
}

impl Index {
    fn set(&mut self, db: i32, key: &[u8], due: Option<u64>) {
        let k: (i32, Box<[u8]>) = (db, key.into());
        if let Some(old) = self.due.get(&k) {
            if Some(*old) == due {
                return;
            }
            self.order.remove(&(*old, db, k.1.clone()));
            self.due.remove(&k);
        }
        if let Some(t) = due {
            self.order.insert((t, db, k.1.clone()));
            self.due.insert(k, t);
        }
    }

    fn pop_due(&mut self, now: u64) -> Option<(i32, Box<[u8]>)> {
        let first = self.order.first()?;
        if first.0 > now {
            return None;
        }
        let (_, db, key) = self.order.pop_first()?;
        self.due.remove(&(db, key.clone()));
        Some((db, key))
    }

    /// Drops every entry of database `db` (all of them for -1).
    fn forget_db(&mut self, db: i32) {
        if db < 0 {
            self.order.clear();
            self.due.clear();
            return;
        }
        self.order.retain(|(_, d, _)| *d != db);
        self.due.retain(|(d, _), _| *d != db);
    }

    fn swap(&mut self, a: i32, b: i32) {
        let old = std::mem::take(&mut self.order);
        self.due.clear();
        for (t, db, key) in old {
            let db = if db == a {
                b
            } else if db == b {
                a
            } else {
                db
            };
            self.due.insert((db, key.clone()), t);
            self.order.insert((t, db, key));
        }
    }
}

thread_local! {
    static INDEX: RefCell<Index> = RefCell::new(Index::default());
}

/// Files `key` of database `db` under its earliest member deadline, or
/// takes it out (`None`).
pub fn note(db: c_int, key: &[u8], due: Option<u64>) {
    INDEX.with(|i| i.borrow_mut().set(db, key, due));
}

/// Starts the timer.
///
/// # Safety
/// `ctx` must be a live context.
pub unsafe fn start(ctx: *mut Ctx) {
    (api().CreateTimer)(ctx, PERIOD_MS, tick, std::ptr::null_mut());
}

unsafe extern "C" fn tick(ctx: *mut Ctx, _data: *mut c_void) {
    let a = api();
    let flags = (a.GetContextFlags)(ctx);
    // A replica waits for its primary's removals, as for expired keys, and
    // nothing changes while clients are paused (a failover in progress).
    if flags & ffi::CTX_FLAGS_LOADING == 0 && !host::frozen(flags) {
        let start = Instant::now();
        let now = (a.Milliseconds)().max(0) as u64;
        while let Some((db, key)) = INDEX.with(|i| i.borrow_mut().pop_due(now)) {
            visit(ctx, db, &key, now);
            if start.elapsed() >= BUDGET {
                break;
            }
        }
    }
    (a.CreateTimer)(ctx, PERIOD_MS, tick, std::ptr::null_mut());
}

/// Removes the due members of one key, if it is still the module's.
unsafe fn visit(ctx: *mut Ctx, db: i32, key: &[u8], now: u64) {
    let a = api();
    if (a.SelectDb)(ctx, db) != ffi::OK {
        return;
    }
    let rstr = (a.CreateString)(ctx, key.as_ptr() as *const c_char, key.len());
    // Opened for writing at once: changes are signalled explicitly, so a
    // key that turns out not to be the module's is left unmarked. (Its
    // own TTL may also have passed since it was filed; it is gone then.)
    let k = (a.OpenKey)(ctx, rstr, ffi::READ | ffi::WRITE);
    let p = if k.is_null()
        || (a.KeyType)(k) == ffi::KEYTYPE_EMPTY
        || (a.ModuleTypeGetType)(k) != TYPE.load(Ordering::Relaxed)
    {
        std::ptr::null_mut()
    } else {
        (a.ModuleTypeGetValue)(k) as *mut Value
    };
    if !p.is_null() {
        purge(ctx, db, key, rstr, k, p, now);
    }
    (a.CloseKey)(k);
    (a.FreeString)(ctx, rstr);
}

/// Removes the due members of the module value `p` of key `k`, then tells
/// the server: the change, events, and the removals to log.
unsafe fn purge(
    ctx: *mut Ctx,
    db: i32,
    key: &[u8],
    rstr: *mut RString,
    k: *mut ffi::Key,
    p: *mut Value,
    now: u64,
) {
    let a = api();
    let mut fx = Effects {
        skip_touched: true,
        skip_ready: true,
        skip_member_names: !crate::events::wanted(),
        skip_events: (a.GetNotifyKeyspaceEvents)() == 0,
        ..Effects::default()
    };
    let left = host::with_scratch(|sdb| {
        sdb.insert_entry(key, Entry::new(std::mem::replace(&mut *p, placeholder())));
        sdb.purge_members(db as usize, key, now, MEMBERS_PER_VISIT, &mut fx);
        sdb.remove(key).map(|e| e.value)
    });
    let Some(left) = left else {
        return;
    };
    let changed = fx.dirty > 0 || left.is_none();
    match left {
        Some(v) => {
            let due = v.earliest_deadline();
            *p = v;
            note(db, key, due);
        }
        None => {
            (a.DeleteKey)(k);
        }
    }
    if changed {
        (a.SignalModifiedKey)(ctx, rstr);
    }
    host::notify(ctx, &mut fx);
    // Replicated even with no AOF and no replicas (the server then drops
    // them): that is also how the removals count for the save points.
    for (_, cmd) in fx.propagate.drain(..) {
        host::replicate(ctx, &cmd);
    }
    host::drop_garbage(&mut fx);
}

/// Files a key that reached a database without a module command.
unsafe fn file(ctx: *mut Ctx, key: *mut RString) {
    let a = api();
    // The event's key may live on the server's stack (a key being loaded):
    // opening a key keeps a reference to its name, so open a copy.
    let name = ffi::bytes(key);
    let copy = (a.CreateString)(ctx, name.as_ptr() as *const c_char, name.len());
    let k = (a.OpenKey)(ctx, copy, ffi::READ | ffi::OPEN_KEY_NOTOUCH);
    let due = if !k.is_null() && (a.ModuleTypeGetType)(k) == TYPE.load(Ordering::Relaxed) {
        (*((a.ModuleTypeGetValue)(k) as *const Value)).earliest_deadline()
    } else {
        // Another type now holds the name (RESTORE, RENAME or COPY over a
        // module key): its entry goes.
        None
    };
    note((a.GetSelectedDb)(ctx), name, due);
    (a.CloseKey)(k);
    (a.FreeString)(ctx, copy);
}

/// The server's key events: keys that arrive under a name the index does
/// not know.
pub unsafe extern "C" fn on_key_event(
    ctx: *mut Ctx,
    _type: c_int,
    event: *const c_char,
    key: *mut RString,
) -> c_int {
    if event.is_null() || key.is_null() {
        return ffi::OK;
    }
    match CStr::from_ptr(event).to_bytes() {
        b"loaded" | b"rename_to" | b"move_to" | b"copy_to" | b"restore" => file(ctx, key),
        // Gone by the server's hand: no entry left behind (a replica, whose
        // timer does not run, would keep it for good).
        b"del" | b"expired" | b"evicted" | b"rename_from" | b"move_from" => {
            note((api().GetSelectedDb)(ctx), ffi::bytes(key), None)
        }
        _ => {}
    }
    ffi::OK
}

/// FLUSHDB / FLUSHALL: the flushed databases' entries go.
pub unsafe extern "C" fn on_flush(_ctx: *mut Ctx, _e: ffi::Event, sub: u64, data: *mut c_void) {
    if sub != ffi::SUBEVENT_FLUSHDB_END || data.is_null() {
        return;
    }
    let info = &*(data as *const ffi::FlushInfo);
    INDEX.with(|i| i.borrow_mut().forget_db(info.dbnum));
}

/// SWAPDB: the index follows the keys.
pub unsafe extern "C" fn on_swapdb(_ctx: *mut Ctx, _e: ffi::Event, _sub: u64, data: *mut c_void) {
    if data.is_null() {
        return;
    }
    let info = &*(data as *const ffi::SwapDbInfo);
    INDEX.with(|i| i.borrow_mut().swap(info.first, info.second));
}

#[cfg(test)]
mod tests {
    use super::Index;

    #[test]
    fn index_orders_and_replaces() {
        let mut i = Index::default();
        i.set(0, b"a", Some(30));
        i.set(0, b"b", Some(10));
        i.set(1, b"a", Some(20));
        i.set(0, b"a", Some(5));
        assert_eq!(i.pop_due(4), None);
        assert_eq!(
            i.pop_due(100).map(|(d, k)| (d, k.to_vec())),
            Some((0, b"a".to_vec()))
        );
        i.set(0, b"b", None);
        assert_eq!(
            i.pop_due(100).map(|(d, k)| (d, k.to_vec())),
            Some((1, b"a".to_vec()))
        );
        assert_eq!(i.pop_due(100), None);
        assert!(i.due.is_empty());
    }

    #[test]
    fn swap_moves_entries() {
        let mut i = Index::default();
        i.set(0, b"a", Some(1));
        i.set(3, b"b", Some(2));
        i.set(5, b"c", Some(3));
        i.swap(0, 3);
        assert_eq!(i.due.get(&(3, b"a".to_vec().into_boxed_slice())), Some(&1));
        assert_eq!(i.due.get(&(0, b"b".to_vec().into_boxed_slice())), Some(&2));
        assert_eq!(i.due.get(&(5, b"c".to_vec().into_boxed_slice())), Some(&3));
        i.set(3, b"a", None);
        assert_eq!(i.order.len(), 2);
        i.forget_db(0);
        assert_eq!(i.order.len(), 1);
        assert_eq!(i.due.len(), 1);
        i.forget_db(-1);
        assert!(i.order.is_empty() && i.due.is_empty());
    }
}
