//! The keyspace: databases of keys, key TTLs, and the keyspace-wide index of
//! keys whose members carry deadlines, ordered by their earliest one.

use crate::dueset::DueSet;
use bytes::Bytes;

use crate::effects::Effects;
use crate::keytable::KeyTable;
use crate::lfu::Lfu;
use crate::value::member::Member;
use crate::value::Value;

/// One key's entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The value.
    pub value: Value,
    /// Key deadline (Unix ms), [`NO_DUE`] without a TTL (read through
    /// [`Entry::expire_at`]; a bare `u64` keeps every entry 8 bytes smaller).
    expire: u64,
    /// Last access by a command (Unix ms), for OBJECT IDLETIME; 0 = never.
    pub last_access: u64,
}

/// The stored deadline (key TTL or earliest member deadline) meaning none.
const NO_DUE: u64 = u64::MAX;

fn due_of(t: Option<u64>) -> u64 {
    t.unwrap_or(NO_DUE)
}

fn due_opt(t: u64) -> Option<u64> {
    (t != NO_DUE).then_some(t)
}

impl Entry {
    /// Key deadline (Unix ms), if the key has a TTL.
    pub fn expire_at(&self) -> Option<u64> {
        due_opt(self.expire)
    }

    /// A new entry without TTL.
    pub fn new(value: Value) -> Entry {
        Entry {
            value,
            expire: NO_DUE,
            last_access: 0,
        }
    }

    /// The earliest member deadline as recorded in the member index
    /// ([`NO_DUE`] when none). The collection value carries it, so that
    /// strings and lists pay nothing for it.
    fn member_due(&self) -> u64 {
        self.value.indexed_due()
    }
}

/// Moves the key at table position `i` to its entry's current earliest
/// member deadline in the member index (`member_expiry`), if that changed.
fn reindex(member_expiry: &mut DueIndex, i: usize, e: &mut Entry) {
    let now_due = e.value.earliest_deadline();
    if due_of(now_due) != e.member_due() {
        member_expiry.set(due_opt(e.member_due()), now_due, i);
        e.value.set_indexed_due(due_of(now_due));
    }
}

/// Size of the key-TTL and member-deadline indexes, for INFO.
#[derive(Debug, Default, Clone, Copy)]
pub struct DbStats {
    /// Keys.
    pub keys: usize,
    /// Keys with a TTL.
    pub expires: usize,
    /// Keys with member deadlines.
    pub member_expiry_keys: usize,
}

/// Keys by deadline (a key TTL or a key's earliest member deadline), as
/// (deadline, position in the key table) pairs: 12 bytes each in sorted
/// blocks ([`DueSet`]) and no copy of the key. The table moves its last key into the hole a removal leaves,
/// and [`Db::remove`] moves that key's pairs along. Also keeps the sum of
/// the deadlines (for INFO's `avg_ttl`).
#[derive(Debug, Default, Clone)]
struct DueIndex {
    set: DueSet,
    sum: u128,
}

/// A key table position as the index stores it (a table holds at most
/// 2^32 keys).
fn pos(i: usize) -> u32 {
    debug_assert!(u32::try_from(i).is_ok());
    i as u32
}

impl DueIndex {
    fn insert(&mut self, t: u64, i: usize) {
        if self.set.insert(t, pos(i)) {
            self.sum += u128::from(t);
        }
    }

    fn remove(&mut self, t: u64, i: usize) {
        if self.set.remove(t, pos(i)) {
            self.sum -= u128::from(t);
        }
    }

    /// Replaces position `i`'s deadline `old` with `new`.
    fn set(&mut self, old: Option<u64>, new: Option<u64>, i: usize) {
        if let Some(t) = old {
            self.remove(t, i);
        }
        if let Some(t) = new {
            self.insert(t, i);
        }
    }

    /// The pair of a key that moved from position `from` to `to`.
    fn moved(&mut self, t: u64, from: usize, to: usize) {
        if self.set.remove(t, pos(from)) {
            self.set.insert(t, pos(to));
        }
    }

    fn clear(&mut self) {
        self.set.clear();
        self.sum = 0;
    }

    fn first(&self) -> Option<(u64, usize)> {
        self.set.first().map(|(t, i)| (t, i as usize))
    }

    fn len(&self) -> usize {
        self.set.len()
    }

    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = (u64, usize)> + '_ {
        self.set.iter().map(|(t, i)| (t, i as usize))
    }
}

/// One logical database (SELECT n).
#[derive(Debug, Default, Clone)]
pub struct Db {
    map: KeyTable<Entry>,
    key_expiry: DueIndex,
    member_expiry: DueIndex,
}

/// How much work one expiry pass may do.
pub const PURGE_ALL: usize = usize::MAX;

impl Db {
    /// Number of keys (including logically expired ones not yet reclaimed).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the database holds no key.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Starts loading the first index position a lookup of `key` reads
    /// (only a hint, and only when the table is large enough to miss the
    /// cache).
    pub fn prefetch_probe(&self, key: &[u8]) {
        if self.map.worth_prefetching() {
            self.map.prefetch_probe(crate::value::table::hash_of(key));
        }
    }

    /// Starts loading what lookups of `keys` and of `members` ((key,
    /// member) pairs) will read, in steps over the whole batch so that
    /// their cache misses overlap: every key's index position, then every
    /// key's slot, then each member's index position in its (large)
    /// collection, then its node. A member's key is read to find its
    /// collection: members are meant to belong to a key already in the
    /// cache (the requests repeat it). Only a hint: nothing changes.
    /// Returns whether anything was large enough to be worth it.
    /// At most [`PREFETCH_BATCH`] keys and members are looked at.
    pub fn prefetch(&self, keys: &[&[u8]], members: &[(&[u8], &[u8])]) -> bool {
        const MAX: usize = PREFETCH_BATCH;
        let mut worth = false;
        if !keys.is_empty() && self.map.worth_prefetching() {
            worth = true;
            let mut hashes = [0u64; MAX];
            let n = keys.len().min(MAX);
            for (h, k) in hashes.iter_mut().zip(keys) {
                *h = crate::value::table::hash_of(k);
                self.map.prefetch_probe(*h);
            }
            for &h in &hashes[..n] {
                self.map.prefetch_slot(h);
            }
        }
        let mut found: [Option<(&dyn crate::value::table::Lookahead, u64)>; MAX] = [None; MAX];
        let mut last: Option<(&[u8], Option<&dyn crate::value::table::Lookahead>)> = None;
        for (slot, &(key, m)) in found.iter_mut().zip(members) {
            let table = match last {
                Some((k, t)) if k == key => t,
                _ => {
                    let t = self
                        .map
                        .get(key)
                        .and_then(|e| e.value.lookahead())
                        .filter(|t| t.worth_prefetching());
                    last = Some((key, t));
                    t
                }
            };
            if let Some(t) = table {
                let h = crate::value::table::hash_of(m);
                t.prefetch_probe(h);
                *slot = Some((t, h));
                worth = true;
            }
        }
        for (t, h) in found.iter().flatten() {
            t.prefetch_node(*h);
        }
        worth
    }

    /// Index sizes.
    pub fn stats(&self) -> DbStats {
        DbStats {
            keys: self.map.len(),
            expires: self.key_expiry.len(),
            member_expiry_keys: self.member_expiry.len(),
        }
    }

    /// Bytes the key table and the deadline indexes take besides the keys
    /// and values themselves, as MEMORY STATS reports a database's
    /// overhead: `(key table, deadline indexes)`. The table's slots count
    /// at its capacity (a slot holds the key's inline bytes and the entry),
    /// its hash index at its allocation; the deadline indexes at their
    /// blocks' size.
    pub fn overhead(&self) -> (usize, usize) {
        let slot = size_of::<Member>() + size_of::<Entry>();
        let main = self.map.capacity() * slot + self.map.index_bytes();
        let deadlines = self.key_expiry.set.heap_bytes() + self.member_expiry.set.heap_bytes();
        (main, deadlines)
    }

    /// The average time left (ms) of the keys with a TTL at `now`, as
    /// INFO's `avg_ttl` shows it (0 without any).
    pub fn avg_ttl(&self, now: u64) -> u64 {
        match self.key_expiry.len() as u128 {
            0 => 0,
            n => u64::try_from(self.key_expiry.sum / n)
                .unwrap_or(u64::MAX)
                .saturating_sub(now),
        }
    }

    /// Raw access without expiry (for snapshots and introspection).
    pub fn raw_get(&self, key: &[u8]) -> Option<&Entry> {
        self.map.get(key)
    }

    /// Iterates over all entries without expiry.
    pub fn raw_iter(&self) -> impl Iterator<Item = (&[u8], &Entry)> {
        self.map.iter().map(|(k, e)| (&k[..], e))
    }

    /// Expires `key` if its TTL passed and purges its due members. Returns
    /// false if the key does not exist (any more).
    pub fn expire_if_due(&mut self, db: usize, key: &[u8], now: u64, fx: &mut Effects) -> bool {
        let Some(e) = self.map.get(key) else {
            return false;
        };
        if matches!(e.expire_at(), Some(t) if t <= now) {
            let k = self.key_of(key);
            self.remove(key);
            fx.key_expired(db, k);
            return false;
        }
        if e.member_due() <= now {
            self.purge_members(db, key, now, PURGE_ALL, fx);
            return self.map.find(key).is_some();
        }
        true
    }

    fn key_of(&self, key: &[u8]) -> Bytes {
        match self.map.get_key_value(key) {
            Some((k, _)) => Bytes::copy_from_slice(k),
            None => Bytes::copy_from_slice(key),
        }
    }

    /// Removes up to `limit` due members of `key`, reporting them; deletes
    /// the key if none is left. Returns how many members were removed.
    pub fn purge_members(
        &mut self,
        db: usize,
        key: &[u8],
        now: u64,
        limit: usize,
        fx: &mut Effects,
    ) -> usize {
        let Some((k, e)) = self.map.get_full_mut(key).map(|(_, k, e)| (k, e)) else {
            return 0;
        };
        let k = Bytes::copy_from_slice(k);
        let Some(kind) = e.value.member_kind() else {
            return 0;
        };
        if e.value.all_members_due(now) && e.value.member_count() > limit.min(64) {
            // Every member is due: drop the whole key in O(1) and let the
            // server free it off the lock, however many members it holds.
            let n = e.value.member_count();
            let Some(entry) = self.remove(&k) else {
                return 0;
            };
            let names = if !fx.skip_member_names {
                entry.value.member_names()
            } else {
                Vec::new()
            };
            fx.whole_key_expired(db, k, kind, names, n);
            fx.garbage.push(entry.value);
            return n;
        }
        let removed = e.value.purge_due(now, limit);
        let n = removed.len();
        if n > 0 {
            fx.members_expired(db, k.clone(), kind, removed);
        }
        if e.value.is_empty_collection() {
            self.remove(&k);
            fx.deleted_empty(db, k);
        } else {
            self.refresh_member_index(&k);
        }
        n
    }

    /// Records that a command accessed `key` at `now` (OBJECT IDLETIME, or
    /// OBJECT FREQ under an `-lfu` policy).
    pub fn touch(&mut self, key: &[u8], now: u64, lfu: Lfu) {
        if let Some(e) = self.map.get_mut(key) {
            e.last_access = lfu.stamp(e.last_access, now);
        }
    }

    /// Looks a key up without expiring anything.
    pub fn peek(&self, key: &[u8]) -> Option<&Entry> {
        self.map.get(key)
    }

    /// Makes room for `n` keys in an empty database, as a load that knows
    /// how many come does; nothing under a `maxmemory` limit.
    pub fn reserve(&mut self, n: usize) {
        self.map.reserve(n);
    }

    /// Whether `key` is held, due or not.
    pub fn holds(&self, key: &[u8]) -> bool {
        self.map.get(key).is_some()
    }

    /// Mutable access without expiring anything (callers expired first).
    pub fn peek_mut(&mut self, key: &[u8]) -> Option<&mut Entry> {
        self.map.get_mut(key)
    }

    /// Inserts or replaces the value of `key`, dropping any TTL and member
    /// deadlines of the previous value (SET semantics).
    pub fn set(&mut self, key: impl AsRef<[u8]>, value: Value) {
        // An empty collection may be created here and filled by the caller;
        // emptiness is checked when the command ends.
        let due = value.earliest_deadline();
        let mut new = Entry::new(value);
        new.value.set_indexed_due(due_of(due));
        let key = key.as_ref();
        match self.map.find(key) {
            Some(i) => {
                let Some(slot) = self.map.get_index_mut(i) else {
                    return;
                };
                let old = std::mem::replace(slot, new);
                self.key_expiry.set(old.expire_at(), None, i);
                self.member_expiry.set(due_opt(old.member_due()), due, i);
                drop(old);
            }
            None => {
                let i = self.map.push(key, new);
                self.member_expiry.set(None, due, i);
            }
        }
    }

    /// Inserts a whole entry (value and TTL), replacing any previous one.
    pub fn insert_entry(&mut self, key: &[u8], mut entry: Entry) {
        self.remove(key);
        let ttl = entry.expire_at();
        // Not in the member index yet: the refresh below puts it there.
        entry.value.set_indexed_due(NO_DUE);
        let i = self.map.push(key, entry);
        self.key_expiry.set(None, ttl, i);
        self.refresh_member_index(key);
    }

    /// Removes `key`; returns its entry.
    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        let i = self.map.find(key)?;
        self.remove_index(i)
    }

    /// Removes the key at table position `i`; returns its entry.
    fn remove_index(&mut self, i: usize) -> Option<Entry> {
        let (_, e) = self.map.swap_remove_index(i)?;
        self.key_expiry.set(e.expire_at(), None, i);
        self.member_expiry.set(due_opt(e.member_due()), None, i);
        // The last key moved into position `i` (if `i` was not the last):
        // its pairs follow it.
        let last = self.map.len();
        if let Some((_, moved)) = self.map.get_index(i) {
            if let Some(t) = moved.expire_at() {
                self.key_expiry.moved(t, last, i);
            }
            if let Some(t) = due_opt(moved.member_due()) {
                self.member_expiry.moved(t, last, i);
            }
        }
        Some(e)
    }

    /// Sets or clears the TTL of an existing key.
    pub fn set_expire(&mut self, key: &[u8], at: Option<u64>) -> bool {
        let Some((i, _, e)) = self.map.get_full_mut(key) else {
            return false;
        };
        self.key_expiry.set(e.expire_at(), at, i);
        e.expire = due_of(at);
        true
    }

    /// Brings the member index in line with the key's current earliest
    /// member deadline, and deletes the key if its collection is empty.
    /// Returns false if the key was deleted (or does not exist).
    pub fn refresh_member_index(&mut self, key: &[u8]) -> bool {
        self.refresh(key, None) == Some(true)
    }

    /// After a command wrote `key`: stamps its access time, then does what
    /// [`Db::refresh_member_index`] does. `None` if the key is absent,
    /// `Some(false)` if it was deleted.
    /// Under an `-lfu` policy the stamp is left alone: the access was
    /// counted when the command looked the key up.
    pub fn settle(&mut self, key: &[u8], now: u64, lfu: Lfu) -> Option<bool> {
        self.refresh(key, (!lfu.on).then_some(now))
    }

    /// Both of the above, with one lookup when nothing changes.
    fn refresh(&mut self, key: &[u8], accessed: Option<u64>) -> Option<bool> {
        let (i, _, e) = self.map.get_full_mut(key)?;
        if let Some(now) = accessed {
            e.last_access = now;
        }
        if e.value.is_empty_collection() {
            self.remove_index(i);
            return Some(false);
        }
        reindex(&mut self.member_expiry, i, e);
        Some(true)
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.map.clear();
        self.key_expiry.clear();
        self.member_expiry.clear();
    }

    /// The key at position `i` of the table (no expiry check). Removing a
    /// key moves the last key into its place and new keys are appended, so
    /// a walk from the top position down to 0 (SCAN's) visits every key that
    /// stays in the table for the whole walk.
    pub fn key_at(&self, i: usize) -> Option<&[u8]> {
        self.map.get_index(i).map(|(k, _)| &k[..])
    }

    /// All keys (no expiry check).
    pub fn keys(&self) -> impl Iterator<Item = &[u8]> {
        self.map.keys().map(|k| &k[..])
    }

    /// A random key, without expiry checks.
    pub fn random_key(&self) -> Option<Bytes> {
        self.random_entry().map(|(k, _)| Bytes::copy_from_slice(k))
    }

    /// A random key and its entry, without expiry checks.
    pub fn random_entry(&self) -> Option<(&[u8], &Entry)> {
        use rand::Rng;
        if self.map.is_empty() {
            return None;
        }
        let n = rand::thread_rng().gen_range(0..self.map.len());
        self.map.get_index(n).map(|(k, e)| (&k[..], e))
    }

    /// Gives back the key table's free slots beyond a few (eviction under
    /// `maxmemory` calls this: the slots of evicted keys would otherwise
    /// stay allocated, and memory in use over the limit, until new keys
    /// fill them).
    pub fn trim_spare(&mut self) {
        self.map.trim_spare();
    }

    /// Bytes the key table holds for keys it does not have yet: free slots
    /// left after removals or reserved by its last growth, which new keys
    /// reuse without allocating.
    pub fn spare_bytes(&self) -> usize {
        let slot = std::mem::size_of::<(Member, Entry)>();
        let spare_slots = self.map.capacity().saturating_sub(self.map.len()) * slot;
        let buckets = self.map.index_buckets().max(1);
        let spare_buckets = buckets.saturating_sub(self.map.len());
        spare_slots + self.map.index_bytes() * spare_buckets / buckets
    }

    /// A copy of the key at table position `i`.
    fn key_copy(&self, i: usize) -> Option<Bytes> {
        self.map
            .get_index(i)
            .map(|(k, _)| Bytes::copy_from_slice(k))
    }

    /// The key whose TTL ends first, with that deadline.
    pub fn next_key_deadline(&self) -> Option<(u64, Bytes)> {
        self.key_expiry
            .first()
            .and_then(|(t, i)| Some((t, self.key_copy(i)?)))
    }

    /// The earliest due key TTL, if any is `<= now`.
    pub fn next_due_key(&self, now: u64) -> Option<Bytes> {
        match self.key_expiry.first() {
            Some((t, i)) if t <= now => self.key_copy(i),
            _ => None,
        }
    }

    /// The key with the earliest due member deadline, if any is `<= now`.
    pub fn next_due_members(&self, now: u64) -> Option<Bytes> {
        match self.member_expiry.first() {
            Some((t, i)) if t <= now => self.key_copy(i),
            _ => None,
        }
    }

    /// Reclaims due keys and members with at most `budget` units of work
    /// (one per key or member). Returns the work done.
    pub fn sweep(&mut self, db: usize, now: u64, budget: usize, fx: &mut Effects) -> usize {
        let mut work = 0;
        while work < budget {
            let Some(k) = self.next_due_key(now) else {
                break;
            };
            self.remove(&k);
            fx.key_expired(db, k);
            work += 1;
        }
        while work < budget {
            let Some(k) = self.next_due_members(now) else {
                break;
            };
            let n = self.purge_members(db, &k, now, budget - work, fx);
            // A stale index entry (nothing due after all) still costs one unit.
            work += n.max(1);
            if n == 0 {
                self.refresh_member_index(&k);
            }
        }
        work
    }
}

/// All databases, and settings the command semantics depend on.
#[derive(Debug, Clone)]
pub struct Store {
    /// The databases (16 by default).
    pub dbs: Vec<Db>,
    /// Settings read by command semantics.
    pub cfg: CoreConfig,
    /// The function libraries (FUNCTION LOAD), which FLUSHALL keeps.
    pub functions: crate::functions::Libraries,
    /// CLIENT PAUSE's end (Unix ms; 0 = no pause): until then keys past
    /// their TTL read as gone but are not deleted, and the sweeper rests,
    /// so the dataset stays as it was (Redis's behaviour during a pause).
    pub expiry_paused_until: u64,
    /// A log or snapshot is being replayed into the store: as in Redis, no
    /// key expires meanwhile (a key whose TTL has passed is still there
    /// for the commands after it, and `P*EXPIREAT` of a past time sets the
    /// TTL rather than deleting); whatever is due goes once loading ends.
    pub loading: bool,
}

/// Settings that affect command semantics or replies (encodings, limits).
#[derive(Debug, Clone)]
pub struct CoreConfig {
    /// `proto-max-bulk-len`: largest string a command may build.
    pub proto_max_bulk_len: u64,
    /// `hash-max-listpack-entries`.
    pub hash_max_listpack_entries: usize,
    /// `hash-max-listpack-value`.
    pub hash_max_listpack_value: usize,
    /// `set-max-intset-entries`.
    pub set_max_intset_entries: usize,
    /// `zset-max-listpack-entries`.
    pub zset_max_listpack_entries: usize,
    /// `zset-max-listpack-value`.
    pub zset_max_listpack_value: usize,
    /// How access stamps are kept (an `-lfu` eviction policy).
    pub lfu: Lfu,
    /// `maxmemory` is set with an LRU or LFU policy: Redis then does not
    /// share small integers (each value needs its own access stamp), which
    /// OBJECT REFCOUNT shows.
    pub no_shared_integers: bool,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig {
            proto_max_bulk_len: 512 * 1024 * 1024,
            hash_max_listpack_entries: 512,
            hash_max_listpack_value: 64,
            set_max_intset_entries: 512,
            zset_max_listpack_entries: 128,
            zset_max_listpack_value: 64,
            lfu: Lfu::default(),
            no_shared_integers: false,
        }
    }
}

/// Keys, and members, one call of [`Store::prefetch`] looks at.
pub const PREFETCH_BATCH: usize = 64;

impl Store {
    /// Starts loading what lookups of `keys` and `members` in database
    /// `db` will read, ahead of the commands that do them (see
    /// [`Db::prefetch`]). Returns whether anything was large enough to be
    /// worth it.
    pub fn prefetch(&self, db: usize, keys: &[&[u8]], members: &[(&[u8], &[u8])]) -> bool {
        self.dbs.get(db).is_some_and(|d| d.prefetch(keys, members))
    }

    /// Whether database `db` is large enough for prefetching its keys.
    pub fn worth_prefetching(&self, db: usize) -> bool {
        self.dbs.get(db).is_some_and(|d| d.map.worth_prefetching())
    }

    /// A store with `n` empty databases.
    pub fn new(n: usize) -> Store {
        Store {
            dbs: (0..n).map(|_| Db::default()).collect(),
            cfg: CoreConfig::default(),
            functions: Default::default(),
            expiry_paused_until: 0,
            loading: false,
        }
    }

    /// Whether CLIENT PAUSE holds key expiry back at `now`.
    pub fn expiry_paused(&self, now: u64) -> bool {
        now < self.expiry_paused_until
    }

    /// Reclaims due keys and members across databases with bounded work.
    pub fn sweep(&mut self, now: u64, budget: usize, fx: &mut Effects) -> usize {
        let mut work = 0;
        for (i, db) in self.dbs.iter_mut().enumerate() {
            if work >= budget {
                break;
            }
            work += db.sweep(i, now, budget - work, fx);
        }
        work
    }

    /// Whether any key or member is due at `now`.
    pub fn has_due(&self, now: u64) -> bool {
        self.dbs
            .iter()
            .any(|d| d.next_due_key(now).is_some() || d.next_due_members(now).is_some())
    }
}

impl Db {
    /// Like [`Db::set`] for a borrowed key, recording the access time: the
    /// key is copied only when it is new, and an existing entry is updated
    /// in place (its TTL and member deadlines dropped).
    pub fn set_at(&mut self, key: &[u8], value: Value, now: u64, lfu: Lfu) {
        let due = value.earliest_deadline();
        if let Some((i, _, e)) = self.map.get_full_mut(key) {
            let ttl = due_opt(std::mem::replace(&mut e.expire, NO_DUE));
            self.key_expiry.set(ttl, None, i);
            if e.member_due() != due_of(due) {
                self.member_expiry.set(due_opt(e.member_due()), due, i);
            }
            // An overwrite counts as one access, as in Redis.
            e.last_access = lfu.stamp(e.last_access, now);
            e.value = value;
            e.value.set_indexed_due(due_of(due));
            return;
        }
        self.add_at(key, value, now, lfu);
    }

    /// [`Db::set_at`] of a key known not to be held (a load that checked).
    pub fn add_at(&mut self, key: &[u8], value: Value, now: u64, lfu: Lfu) {
        let due = value.earliest_deadline();
        self.member_expiry.set(None, due, self.map.len());
        let mut value = value;
        value.set_indexed_due(due_of(due));
        self.map.push(
            key,
            Entry {
                value,
                expire: NO_DUE,
                last_access: lfu.fresh(now),
            },
        );
    }
}

impl Entry {
    /// Whether the key's TTL or its earliest member deadline is `<= now`
    /// (the entry needs expiry work before use).
    pub fn has_due(&self, now: u64) -> bool {
        matches!(self.expire_at(), Some(t) if t <= now) || self.member_due() <= now
    }
}

#[cfg(test)]
mod index_tests;
#[cfg(test)]
mod prefetch_tests;
