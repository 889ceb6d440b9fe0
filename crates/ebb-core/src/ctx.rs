//! The execution context of one command: the store, the selected database,
//! the current time and the effects sink, with typed key accessors that do
//! lazy expiry and the per-key housekeeping after writes.

use bytes::Bytes;

use crate::args::IntoBytes;
use crate::db::{Db, Entry, Store};
use crate::effects::Effects;
use crate::error::{CmdResult, Error};
use crate::value::member::Member;
use crate::value::{HashValue, ListValue, SetValue, StrValue, Value, ZSetValue};

/// Context of one command execution.
pub struct Ctx<'a> {
    /// All databases.
    pub store: &'a mut Store,
    /// Selected database index.
    pub db: usize,
    /// Current time, Unix milliseconds: what expiry is checked against
    /// (frozen for a whole transaction or script).
    pub now: u64,
    /// The clock as the command reads it, for a key's TTL and for relative
    /// times (EX/PX, EXPIRE): `now`, except inside a transaction or a
    /// script, where, as in Redis, it goes on while `now` stays.
    pub clock: u64,
    /// What the command changed.
    pub fx: &'a mut Effects,
    /// Whether the client speaks RESP3.
    pub resp3: bool,
    /// Set by commands that must not count as an access (OBJECT IDLETIME).
    pub no_touch: bool,
    /// Whether a blocking command may park the client (false inside MULTI,
    /// scripts, and when re-run to serve a woken client).
    pub may_block: bool,
    /// Whether a script runs the command (SORT then orders a set it was
    /// told not to sort, so that the script's result is deterministic).
    pub in_script: bool,
    /// Whether the client's ACL user may read every key (with the
    /// command's other permissions): SORT's BY and GET patterns, which
    /// name keys of their own, are refused otherwise.
    pub reads_every_key: bool,
    /// Keys accessed for writing: emptied collections are deleted and the
    /// member index refreshed for each once the command ends. Most commands
    /// write one key: it is kept inline (a short key without allocating),
    /// the rest in `pending_more`.
    pending: Option<(usize, Member)>,
    /// Further keys accessed for writing.
    pending_more: Vec<(usize, Bytes)>,
    /// Keys this command created as empty collections (only tracked while
    /// `new` events are published): if still empty at the end, they never
    /// existed, so neither their `new` nor a `del` event is published.
    created: Vec<(usize, Bytes)>,
}

/// A value type that commands access through [`Ctx`].
pub trait Kind: Sized {
    /// Borrow from a value if it is this type.
    fn of(v: &Value) -> Option<&Self>;
    /// Borrow mutably from a value if it is this type.
    fn of_mut(v: &mut Value) -> Option<&mut Self>;
    /// A new empty value of this type.
    fn empty() -> Value;
    /// Whether values of this type are collections (which need the
    /// after-command housekeeping: emptiness, member index). Strings do not.
    const COLLECTION: bool = true;
}

macro_rules! kind {
    ($t:ty, $variant:ident, $empty:expr) => {
        impl Kind for $t {
            fn of(v: &Value) -> Option<&Self> {
                match v {
                    Value::$variant(x) => Some(x),
                    _ => None,
                }
            }
            fn of_mut(v: &mut Value) -> Option<&mut Self> {
                match v {
                    Value::$variant(x) => Some(x),
                    _ => None,
                }
            }
            fn empty() -> Value {
                Value::$variant($empty)
            }
        }
    };
}
impl Kind for StrValue {
    fn of(v: &Value) -> Option<&Self> {
        match v {
            Value::Str(x) => Some(x),
            _ => None,
        }
    }
    fn of_mut(v: &mut Value) -> Option<&mut Self> {
        match v {
            Value::Str(x) => Some(x),
            _ => None,
        }
    }
    fn empty() -> Value {
        Value::Str(StrValue::default())
    }
    const COLLECTION: bool = false;
}
kind!(ListValue, List, ListValue::new());
kind!(HashValue, Hash, HashValue::new());
kind!(SetValue, Set, SetValue::new());
kind!(ZSetValue, ZSet, ZSetValue::new());

/// Members above which UNLINK frees a value off the hot path (Redis's
/// `LAZYFREE_THRESHOLD`).
const LAZYFREE_THRESHOLD: usize = 64;

impl<'a> Ctx<'a> {
    /// A context on database `db` at time `now`.
    pub fn new(store: &'a mut Store, db: usize, now: u64, fx: &'a mut Effects) -> Ctx<'a> {
        Ctx {
            store,
            db,
            now,
            clock: now,
            fx,
            resp3: false,
            may_block: false,
            in_script: false,
            reads_every_key: true,
            no_touch: false,
            pending: None,
            pending_more: Vec::new(),
            created: Vec::new(),
        }
    }

    /// The selected database.
    pub fn db(&mut self) -> &mut Db {
        &mut self.store.dbs[self.db]
    }

    /// Applies lazy expiry to `key` in database `db`; false if it is absent.
    pub fn expire_key_in(&mut self, db: usize, key: &[u8]) -> bool {
        let now = self.now;
        let lfu = self.store.cfg.lfu;
        let paused = self.store.expiry_paused(now);
        // The common case, one lookup: the key is absent or nothing is due.
        let loading = self.store.loading;
        match self.store.dbs[db].peek_mut(key) {
            None => return false,
            Some(e) if loading || !e.has_due(now) => {
                if !self.no_touch {
                    e.last_access = lfu.stamp(e.last_access, now);
                }
                return true;
            }
            Some(e) => {
                if paused && matches!(e.expire_at(), Some(t) if t <= now) {
                    // Logically expired, deleted once the pause ends.
                    return false;
                }
            }
        }
        let live = self.store.dbs[db].expire_if_due(db, key, now, self.fx);
        if live && !self.no_touch {
            self.store.dbs[db].touch(key, now, lfu);
        }
        live
    }

    /// The time a member deadline must be after for a command to set it:
    /// a deadline at or before it deletes the member at once. It is `now`,
    /// except while a log or snapshot loads, where it is 0: as Redis does
    /// with hash fields, a deadline that passed while the server was down
    /// is set as it was, the member stays for the commands after it in
    /// the file, and it goes once loading is over.
    pub fn deadline_floor(&self) -> u64 {
        if self.store.loading {
            0
        } else {
            self.now
        }
    }

    /// Applies lazy expiry to `key`; false if it is absent.
    pub fn expire_key(&mut self, key: &[u8]) -> bool {
        self.expire_key_in(self.db, key)
    }

    /// The live entry of `key`.
    /// A read: counted as a hit or a miss, and a miss is a `keymiss`
    /// event, as Redis's read lookups are.
    pub fn entry(&mut self, key: &[u8]) -> Option<&Entry> {
        if !self.read_hit(key) {
            return None;
        }
        self.store.dbs[self.db].peek(key)
    }

    /// The live entry of `key` looked up for writing: not a read hit or
    /// miss, and no `keymiss` event (Redis's `lookupKeyWrite`).
    pub fn entry_for_write(&mut self, key: &[u8]) -> Option<&Entry> {
        if !self.expire_key(key) {
            return None;
        }
        self.store.dbs[self.db].peek(key)
    }

    /// The value of `key` as type `T`, looked up for writing (see
    /// [`Ctx::entry_for_write`]); WRONGTYPE if it holds another type.
    pub fn get_for_write<T: Kind>(&mut self, key: &[u8]) -> CmdResult<Option<&T>> {
        match self.entry_for_write(key) {
            None => Ok(None),
            Some(e) => T::of(&e.value).map(Some).ok_or(Error::WrongType),
        }
    }

    /// Whether `key` exists (after lazy expiry), counted as a read (see
    /// [`Ctx::entry`]).
    pub fn read_hit(&mut self, key: &[u8]) -> bool {
        if self.expire_key(key) {
            self.fx.hits += 1;
            return true;
        }
        self.fx.misses += 1;
        if self.fx.keymiss {
            self.fx
                .event(b'm', "keymiss", self.db, Bytes::copy_from_slice(key));
        }
        false
    }

    /// The live entry of `key`, mutably; the key is housekept after the command.
    pub fn entry_mut(&mut self, key: &[u8]) -> Option<&mut Entry> {
        if !self.expire_key(key) {
            return None;
        }
        self.mark_pending(key);
        self.store.dbs[self.db].peek_mut(key)
    }

    /// The live value of `key`.
    pub fn value(&mut self, key: &[u8]) -> Option<&Value> {
        self.entry(key).map(|e| &e.value)
    }

    /// Whether `key` exists (after lazy expiry).
    pub fn exists(&mut self, key: &[u8]) -> bool {
        self.expire_key(key)
    }

    /// The value of `key` as type `T`; WRONGTYPE if it holds another type.
    pub fn get<T: Kind>(&mut self, key: &[u8]) -> CmdResult<Option<&T>> {
        match self.value(key) {
            None => Ok(None),
            Some(v) => T::of(v).map(Some).ok_or(Error::WrongType),
        }
    }

    /// The value of `key` as type `T`, mutably.
    pub fn get_mut<T: Kind>(&mut self, key: &[u8]) -> CmdResult<Option<&mut T>> {
        if !T::COLLECTION && !self.no_touch {
            // A string can neither empty nor carry member deadlines, and
            // the access time was set by the lookup: no housekeeping.
            if !self.expire_key(key) {
                return Ok(None);
            }
            let is_t = match self.store.dbs[self.db].peek(key) {
                None => return Ok(None),
                Some(e) => T::of(&e.value).is_some(),
            };
            if !is_t {
                // Wrong type: nothing is written, but keep the usual
                // housekeeping of a key accessed for writing.
                self.mark_pending(key);
                return Err(Error::WrongType);
            }
            return Ok(self.store.dbs[self.db]
                .peek_mut(key)
                .and_then(|e| T::of_mut(&mut e.value)));
        }
        match self.entry_mut(key) {
            None => Ok(None),
            Some(e) => T::of_mut(&mut e.value).map(Some).ok_or(Error::WrongType),
        }
    }

    /// The value of `key` as type `T`, created empty if absent.
    pub fn get_or_create<T: Kind>(&mut self, key: &[u8]) -> CmdResult<&mut T> {
        if !self.expire_key(key) {
            if self.fx.new_keys {
                // Redis's `new` event (class `n`) precedes the command's own.
                let k = Bytes::copy_from_slice(key);
                self.fx.event(b'n', "new", self.db, k.clone());
                self.created.push((self.db, k));
            }
            self.store.dbs[self.db].set(key, T::empty());
        }
        self.mark_pending(key);
        let e = self.store.dbs[self.db]
            .peek_mut(key)
            .ok_or(Error::NoSuchKey)?;
        T::of_mut(&mut e.value).ok_or(Error::WrongType)
    }

    /// Checks that `key`, if it exists, holds type `T` (for commands that
    /// must fail before doing anything).
    pub fn check_type<T: Kind>(&mut self, key: &[u8]) -> CmdResult<bool> {
        // A lookup for writing: not a read hit or miss.
        Ok(self.get_for_write::<T>(key)?.is_some())
    }

    /// Replaces the value of `key` (dropping its TTL), like Redis's setKey.
    pub fn set_value(&mut self, key: &[u8], v: Value) {
        let now = self.now;
        let lfu = self.store.cfg.lfu;
        let db = &mut self.store.dbs[self.db];
        // The old value goes anyway: only its expiry (events, log) matters.
        let existed = db.expire_if_due(self.db, key, now, self.fx);
        if !existed && self.fx.new_keys {
            self.fx
                .event(b'n', "new", self.db, Bytes::copy_from_slice(key));
        }
        if let Value::Str(_) = v {
            // A string needs no after-command housekeeping but the access time.
            db.set_at(key, v, now, lfu);
            return;
        }
        db.set(key, v);
        self.mark_pending(key);
    }

    /// Deletes `key`; true if it existed (and was live).
    pub fn delete(&mut self, key: &[u8]) -> bool {
        if !self.expire_key(key) {
            return false;
        }
        self.store.dbs[self.db].remove(key).is_some()
    }

    /// Deletes a store command's destination when its result is empty, as
    /// Redis's `dbDelete` does: a key whose TTL passed goes too, as a
    /// deletion (the caller's `del` event), not as an expiry.
    pub fn delete_stored(&mut self, key: &[u8]) -> bool {
        let now = self.now;
        let db = &mut self.store.dbs[self.db];
        let ttl_passed = matches!(db.peek(key).and_then(|e| e.expire_at()), Some(t) if t <= now);
        if ttl_passed {
            return db.remove(key).is_some();
        }
        self.delete(key)
    }

    /// Deletes `key` like [`Ctx::delete`], but a value of more than 64
    /// members goes to [`Effects::garbage`], for the host to free off the
    /// hot path (UNLINK).
    pub fn unlink(&mut self, key: &[u8]) -> bool {
        if !self.expire_key(key) {
            return false;
        }
        match self.store.dbs[self.db].remove(key) {
            Some(e) => {
                if e.value.member_count() > LAZYFREE_THRESHOLD {
                    self.fx.garbage.push(e.value);
                }
                true
            }
            None => false,
        }
    }

    /// Records that `key` was modified (WATCH, dirty counter).
    pub fn modified(&mut self, key: &[u8]) {
        if !self.fx.skip_touched {
            self.fx.touched.push((self.db, Bytes::copy_from_slice(key)));
        }
        self.fx.dirty += 1;
    }

    /// Records a keyspace notification for `key`.
    pub fn notify(&mut self, class: u8, event: &'static str, key: &[u8]) {
        if !self.fx.skip_events {
            self.fx
                .event(class, event, self.db, Bytes::copy_from_slice(key));
        }
    }

    /// Records a member-level notification for `key`.
    pub fn notify_members(
        &mut self,
        class: u8,
        event: &'static str,
        key: &[u8],
        members: Vec<impl IntoBytes>,
    ) {
        if self.fx.skip_events {
            return;
        }
        let members = members.into_iter().map(IntoBytes::into_bytes).collect();
        self.fx
            .member_event(class, event, self.db, Bytes::copy_from_slice(key), members);
    }

    /// Records that `key` received elements blocked clients may wait for.
    pub fn ready(&mut self, key: &[u8]) {
        if !self.fx.skip_ready {
            self.fx.ready.push((self.db, Bytes::copy_from_slice(key)));
        }
    }

    /// Whether what the command is logged as matters (false when the host
    /// logs nothing): a command may skip building its rewritten form.
    pub fn logs(&self) -> bool {
        !self.fx.skip_log
    }

    /// Whether keyspace events are recorded for this command (someone may
    /// listen), so building their member lists is worth it.
    pub fn notifies(&self) -> bool {
        !self.fx.skip_events
    }

    /// Logs the command as `cmds` instead of as sent.
    pub fn rewrite_as(&mut self, cmds: Vec<Vec<Bytes>>) {
        self.fx.rewrite = Some(cmds);
    }

    /// Marks `key` (in the selected database) for housekeeping after the command.
    pub fn mark_pending(&mut self, key: &[u8]) {
        self.mark_pending_in(self.db, key);
    }

    /// Marks `key` in database `db` for housekeeping after the command.
    pub fn mark_pending_in(&mut self, db: usize, key: &[u8]) {
        let same = |(d, k): &(usize, Bytes)| *d == db && &k[..] == key;
        match &self.pending {
            None => self.pending = Some((db, Member::new(key))),
            Some((d, k)) if *d == db && &k[..] == key => {}
            Some(_) => {
                if !self.pending_more.iter().any(same) {
                    self.pending_more.push((db, Bytes::copy_from_slice(key)));
                }
            }
        }
    }

    /// Deletes emptied collections (with a `del` event) and refreshes the
    /// member index of every key written by the command.
    pub fn finish(&mut self) {
        if let Some((db, key)) = self.pending.take() {
            self.settle(db, &key);
        }
        let more = std::mem::take(&mut self.pending_more);
        for (db, key) in more {
            self.settle(db, &key);
        }
    }

    /// Under encoding limits set lower than what the packed forms hold, a
    /// sorted set or set a command left past them takes its large form for
    /// good: Redis converts past the limits and never back, so OBJECT
    /// ENCODING keeps saying `skiplist` or `hashtable` after it shrinks.
    fn unpack_outgrown(&mut self, db: usize, key: &[u8]) {
        let c = &self.store.cfg;
        let (ze, zv, se) = (
            c.zset_max_listpack_entries,
            c.zset_max_listpack_value,
            c.set_max_intset_entries,
        );
        let zset_low = ze < ZSetValue::PACKED_MAX_LEN || zv < ZSetValue::PACKED_MAX_MEMBER;
        let set_low = se < SetValue::PACKED_MAX_LEN;
        if !zset_low && !set_low {
            return;
        }
        match self.store.dbs[db].peek_mut(key).map(|e| &mut e.value) {
            Some(Value::ZSet(z)) if zset_low && z.is_packed() && !z.is_compact(ze, zv) => {
                z.unpack()
            }
            Some(Value::Set(s)) if set_low && s.is_packed() && s.len() > se => s.widen(),
            _ => {}
        }
    }

    /// Housekeeping of one key a command wrote: its access time, its place
    /// in the member index, and its deletion if the command left it empty.
    fn settle(&mut self, db: usize, key: &[u8]) {
        self.unpack_outgrown(db, key);
        let lfu = self.store.cfg.lfu;
        if self.store.dbs[db].settle(key, self.now, lfu) != Some(false) {
            return;
        }
        let key = Bytes::copy_from_slice(key);
        if let Some(i) = self
            .created
            .iter()
            .position(|(cd, ck)| *cd == db && *ck == key)
        {
            // Created empty and left empty: it never existed.
            self.created.swap_remove(i);
            self.fx
                .events
                .retain(|ev| !(ev.class == b'n' && ev.db == db && ev.key == key));
            self.fx.touch(db, key);
            return;
        }
        self.fx.event(b'g', "del", db, key.clone());
        self.fx.touch(db, key);
    }
}
