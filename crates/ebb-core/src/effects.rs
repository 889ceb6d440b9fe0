//! What a command (or the sweeper) changed, reported as data: keys touched
//! (for WATCH), commands to log, events to publish, keys that became ready
//! for blocked clients. The server decides what to do with each.

use bytes::Bytes;
use std::borrow::Cow;

use crate::value::MemberKind;

/// A keyspace notification.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The class flag (`g`, `$`, `l`, `s`, `h`, `z`, `x`, `e`, `n`).
    pub class: u8,
    /// The event name (`set`, `del`, `sexpired`, …).
    pub name: Cow<'static, str>,
    /// Database index.
    pub db: usize,
    /// The key.
    pub key: Bytes,
    /// For member events: the members concerned (empty for key events).
    pub members: Vec<Bytes>,
}

/// Effects of one command or sweep.
#[derive(Debug, Default)]
pub struct Effects {
    /// Notifications, in order.
    pub events: Vec<Event>,
    /// Keys modified (signalModifiedKey), for WATCH.
    pub touched: Vec<(usize, Bytes)>,
    /// Keys modified by expiry rather than by the command (a key or
    /// members whose time passed), for WATCH and for CLIENT TRACKING,
    /// which reports them even to a NOLOOP client whose command found them
    /// expired.
    pub expired_touched: Vec<(usize, Bytes)>,
    /// Databases flushed or swapped wholesale: every watcher of them aborts.
    pub touched_dbs: Vec<usize>,
    /// The databases of `touched_dbs` were swapped (SWAPDB), not emptied:
    /// clients that track keys are told nothing, as in Redis.
    pub swapped: bool,
    /// Commands to log before the command itself (expiry deletions), with
    /// the database they apply to.
    pub propagate: Vec<(usize, Vec<Bytes>)>,
    /// If set, the command is logged as these commands instead of itself
    /// (e.g. relative TTLs as absolute deadlines). An empty list logs nothing.
    pub rewrite: Option<Vec<Vec<Bytes>>>,
    /// Number of changes (for `save` rules and INFO).
    pub dirty: u64,
    /// The part of `dirty` that expiry caused (keys and members whose
    /// time passed): a command whose only changes are these is not logged
    /// itself, as in Redis (the expiry is, on its own).
    pub expired_dirty: u64,
    /// Keys that received elements blocked clients may wait for.
    pub ready: Vec<(usize, Bytes)>,
    /// Set by the host when no one needs member names in expiry events
    /// (no subkey notifications), so dropping a huge key stays O(1).
    pub skip_member_names: bool,
    /// Members removed by expiry (counted even when names are not kept).
    pub expired_members: u64,
    /// Values removed whole; the host may free them off the hot path.
    pub garbage: Vec<crate::value::Value>,
    /// Databases emptied by FLUSHDB/FLUSHALL ASYNC: the host frees them
    /// off the hot path.
    pub garbage_dbs: Vec<crate::db::Db>,
    /// FLUSHALL ran: the host brings its snapshot in line (Redis saves
    /// the emptied dataset when save rules are set).
    pub flushed_all: bool,
    /// Set by the host when `new` key events (class `n`) are published:
    /// commands that create a key then record one before their own event.
    pub new_keys: bool,
    /// Set by the host when `keymiss` events (class `m`) are published:
    /// a read that finds no key then records one.
    pub keymiss: bool,
    /// Reads of a key that found it, and that did not (INFO's
    /// `keyspace_hits` and `keyspace_misses`); the host adds them up.
    pub hits: u64,
    pub misses: u64,
    /// Keys removed because their TTL passed (counted even when events
    /// are not recorded).
    pub expired_keys: u64,
    /// Set by the host when no keyspace notification is enabled: events
    /// are then not recorded at all (no key copies per command).
    pub skip_events: bool,
    /// Set by the host when no client watches any key: modified keys are
    /// then not recorded for WATCH.
    pub skip_touched: bool,
    /// Set by the host when no client is blocked: keys that received
    /// elements are then not recorded.
    pub skip_ready: bool,
    /// Set by the host when nothing is logged (no AOF): commands may then
    /// skip building the form they would be logged as (see [`Effects::rewrite`]).
    pub skip_log: bool,
}

impl Effects {
    /// Clears everything for reuse.
    pub fn clear(&mut self) {
        self.events.clear();
        self.touched.clear();
        self.expired_touched.clear();
        self.touched_dbs.clear();
        self.swapped = false;
        self.propagate.clear();
        self.rewrite = None;
        self.dirty = 0;
        self.expired_dirty = 0;
        self.ready.clear();
        self.expired_members = 0;
        self.expired_keys = 0;
        self.hits = 0;
        self.misses = 0;
        self.garbage.clear();
        self.garbage_dbs.clear();
        self.flushed_all = false;
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
            && self.touched.is_empty()
            && self.expired_touched.is_empty()
            && self.touched_dbs.is_empty()
            && self.propagate.is_empty()
            && self.rewrite.is_none()
            && self.dirty == 0
            && self.ready.is_empty()
            && self.garbage.is_empty()
            && self.garbage_dbs.is_empty()
            && self.expired_keys == 0
    }

    /// Records that `key` in `db` was modified, for WATCH (unless no one
    /// watches).
    pub fn touch(&mut self, db: usize, key: Bytes) {
        if !self.skip_touched {
            self.touched.push((db, key));
        }
    }

    /// Records that expiry changed `key` in `db` (see `expired_touched`).
    fn touch_expired(&mut self, db: usize, key: Bytes) {
        if !self.skip_touched {
            self.expired_touched.push((db, key));
        }
    }

    /// Records a key event.
    pub fn event(&mut self, class: u8, name: impl Into<Cow<'static, str>>, db: usize, key: Bytes) {
        if self.skip_events {
            return;
        }
        self.events.push(Event {
            class,
            name: name.into(),
            db,
            key,
            members: Vec::new(),
        });
    }

    /// Records a member event (key event plus the member names).
    pub fn member_event(
        &mut self,
        class: u8,
        name: impl Into<Cow<'static, str>>,
        db: usize,
        key: Bytes,
        members: Vec<Bytes>,
    ) {
        if self.skip_events {
            return;
        }
        self.events.push(Event {
            class,
            name: name.into(),
            db,
            key,
            members,
        });
    }

    /// A key was deleted because its TTL passed.
    pub fn key_expired(&mut self, db: usize, key: Bytes) {
        self.expired_keys += 1;
        self.touch_expired(db, key.clone());
        self.propagate
            .push((db, vec![Bytes::from_static(b"DEL"), key.clone()]));
        self.event(b'x', "expired", db, key);
        self.dirty += 1;
        self.expired_dirty += 1;
    }

    /// Members were removed because their deadline passed.
    pub fn members_expired(
        &mut self,
        db: usize,
        key: Bytes,
        kind: MemberKind,
        members: Vec<Bytes>,
    ) {
        self.touch_expired(db, key.clone());
        let mut cmd = Vec::with_capacity(members.len() + 2);
        cmd.push(Bytes::from_static(kind.remove_command().as_bytes()));
        cmd.push(key.clone());
        cmd.extend(members.iter().cloned());
        self.propagate.push((db, cmd));
        self.dirty += members.len() as u64;
        self.expired_dirty += members.len() as u64;
        self.expired_members += members.len() as u64;
        let name = match kind {
            MemberKind::Hash => "hexpired",
            MemberKind::Set => "sexpired",
            MemberKind::ZSet => "zexpired",
        };
        self.member_event(kind.class(), name, db, key, members);
    }

    /// Every member of a collection expired at once and the key was dropped
    /// whole: logged as one DEL, reported as member expiry then `del`.
    pub fn whole_key_expired(
        &mut self,
        db: usize,
        key: Bytes,
        kind: MemberKind,
        names: Vec<Bytes>,
        count: usize,
    ) {
        self.touch_expired(db, key.clone());
        self.propagate
            .push((db, vec![Bytes::from_static(b"DEL"), key.clone()]));
        self.dirty += count as u64;
        self.expired_dirty += count as u64;
        self.expired_members += count as u64;
        let name = match kind {
            MemberKind::Hash => "hexpired",
            MemberKind::Set => "sexpired",
            MemberKind::ZSet => "zexpired",
        };
        self.member_event(kind.class(), name, db, key.clone(), names);
        self.event(b'g', "del", db, key);
    }

    /// A collection became empty and its key was deleted.
    pub fn deleted_empty(&mut self, db: usize, key: Bytes) {
        self.touch(db, key.clone());
        self.event(b'g', "del", db, key);
    }
}

#[cfg(test)]
mod tests {
    use super::Effects;
    use crate::{execute, lookup, Ctx, Reply, Store};
    use bytes::Bytes;

    fn run(store: &mut Store, fx: &mut Effects, now: u64, args: &[&str]) -> Reply {
        let argv: Vec<Bytes> = args.iter().map(|a| Bytes::from(a.to_string())).collect();
        let spec = lookup(&argv[0]).expect("known command");
        let mut ctx = Ctx::new(store, 0, now, fx);
        execute(&mut ctx, spec, &crate::args::views(&argv))
    }

    #[test]
    fn what_no_one_looks_at_is_not_recorded_but_still_counted() {
        let mut store = Store::new(1);
        let mut fx = Effects {
            skip_events: true,
            skip_touched: true,
            skip_ready: true,
            ..Effects::default()
        };
        assert_eq!(
            run(&mut store, &mut fx, 1000, &["SET", "k", "v", "PX", "10"]),
            Reply::Ok
        );
        assert_eq!(
            run(&mut store, &mut fx, 1000, &["MSET", "a", "1", "b", "2"]),
            Reply::Ok
        );
        assert_eq!(
            run(&mut store, &mut fx, 1000, &["INCR", "a"]),
            Reply::Int(2)
        );
        assert_eq!(
            run(&mut store, &mut fx, 1000, &["LPUSH", "l", "x", "y"]),
            Reply::Int(2)
        );
        assert!(fx.events.is_empty() && fx.touched.is_empty() && fx.ready.is_empty());
        assert_eq!(fx.dirty, 6);
        // The key TTL passed: the expiry is counted and logged.
        assert_eq!(run(&mut store, &mut fx, 2000, &["GET", "k"]), Reply::Nil);
        assert_eq!(fx.expired_keys, 1);
        assert_eq!(fx.propagate.len(), 1);
        assert!(fx.events.is_empty() && fx.touched.is_empty());
        fx.clear();
        assert!(fx.is_empty());
        assert!(fx.skip_events && fx.skip_touched && fx.skip_ready);
    }

    #[test]
    fn everything_is_recorded_by_default() {
        let mut store = Store::new(1);
        let mut fx = Effects::default();
        run(&mut store, &mut fx, 1000, &["SET", "k", "v", "PX", "10"]);
        assert!(fx.rewrite.is_some());
        run(&mut store, &mut fx, 1000, &["INCR", "n"]);
        run(&mut store, &mut fx, 1000, &["RPUSH", "l", "x"]);
        run(&mut store, &mut fx, 2000, &["GET", "k"]);
        let names: Vec<&str> = fx.events.iter().map(|e| &*e.name).collect();
        assert_eq!(names, ["set", "expire", "incrby", "rpush", "expired"]);
        // SET, INCR and RPUSH changed their keys; the GET found k expired.
        assert_eq!(fx.touched.len(), 3);
        assert_eq!(fx.expired_touched, [(0, Bytes::from("k"))]);
        assert_eq!(fx.ready.len(), 1);
        assert_eq!(fx.expired_keys, 1);
    }
}
