//! Values stored under keys.

pub(crate) mod exact;
pub mod hash;
pub(crate) mod hpack;
pub mod list;
pub(crate) mod lpack;
pub(crate) mod member;
pub(crate) mod order;
pub(crate) mod quick;
pub mod set;
pub mod strval;
pub(crate) mod table;
pub(crate) mod zpack;
pub mod zset;

pub use hash::HashValue;
pub use list::ListValue;
pub use set::SetValue;
pub use strval::StrValue;
pub use zset::{MemberRef, Score, ZSetValue};

use bytes::Bytes;

/// The value stored under one key.
///
/// Every key's entry holds one of these inline, so the large collection
/// types live behind a box: a string key pays for a `Bytes`, not for the
/// biggest variant.
#[derive(Debug, Clone)]
pub enum Value {
    /// A string (also used for counters and bitmaps).
    Str(StrValue),
    /// A list (16 bytes: see [`ListValue`]).
    List(ListValue),
    /// A hash whose fields may carry deadlines (16 bytes: see
    /// [`HashValue`]).
    Hash(HashValue),
    /// A set whose members may carry deadlines.
    Set(SetValue),
    /// A sorted set whose members may carry deadlines.
    ZSet(ZSetValue),
}

impl From<HashValue> for Value {
    fn from(h: HashValue) -> Value {
        Value::Hash(h)
    }
}

impl From<ZSetValue> for Value {
    fn from(z: ZSetValue) -> Value {
        Value::ZSet(z)
    }
}

impl From<SetValue> for Value {
    fn from(s: SetValue) -> Value {
        Value::Set(s)
    }
}

impl From<ListValue> for Value {
    fn from(l: ListValue) -> Value {
        Value::List(l)
    }
}

impl Value {
    /// The member table of a large set, sorted set or hash, for the
    /// look-ahead over a pipeline.
    pub(crate) fn lookahead(&self) -> Option<&dyn table::Lookahead> {
        match self {
            Value::Hash(h) => h.lookahead(),
            Value::Set(s) => s.lookahead(),
            Value::ZSet(z) => z.lookahead(),
            Value::Str(_) | Value::List(_) => None,
        }
    }

    /// The name TYPE replies with.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Hash(_) => "hash",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
        }
    }

    /// Whether this is a collection with no element left (to be deleted).
    pub fn is_empty_collection(&self) -> bool {
        match self {
            Value::Str(_) => false,
            Value::List(l) => l.is_empty(),
            Value::Hash(h) => h.is_empty(),
            Value::Set(s) => s.is_empty(),
            Value::ZSet(z) => z.is_empty(),
        }
    }

    /// The earliest member deadline the keyspace's member index last
    /// recorded for this value (`u64::MAX` for none; always that for
    /// strings and lists).
    pub(crate) fn indexed_due(&self) -> u64 {
        match self {
            Value::Hash(h) => h.indexed_due(),
            Value::Set(s) => s.indexed_due(),
            Value::ZSet(z) => z.indexed_due(),
            Value::Str(_) | Value::List(_) => u64::MAX,
        }
    }

    /// Records what the keyspace's member index holds for this value. A
    /// string or list never has member deadlines, so has nothing to record.
    pub(crate) fn set_indexed_due(&mut self, t: u64) {
        match self {
            Value::Hash(h) => h.set_indexed_due(t),
            Value::Set(s) => s.set_indexed_due(t),
            Value::ZSet(z) => z.set_indexed_due(t),
            Value::Str(_) | Value::List(_) => debug_assert_eq!(t, u64::MAX),
        }
    }

    /// The earliest member deadline, for collections that have any.
    pub fn earliest_deadline(&self) -> Option<u64> {
        match self {
            Value::Hash(h) => h.deadlines().earliest(),
            Value::Set(s) => s.deadlines().earliest(),
            Value::ZSet(z) => z.deadlines().earliest(),
            _ => None,
        }
    }

    /// Number of members of a collection (0 for strings).
    pub fn member_count(&self) -> usize {
        match self {
            Value::Str(_) => 0,
            Value::List(l) => l.len(),
            Value::Hash(h) => h.len(),
            Value::Set(s) => s.len(),
            Value::ZSet(z) => z.len(),
        }
    }

    /// Whether every member carries a deadline and all of them are `<= now`.
    pub fn all_members_due(&self, now: u64) -> bool {
        let d = match self {
            Value::Hash(h) => h.deadlines(),
            Value::Set(s) => s.deadlines(),
            Value::ZSet(z) => z.deadlines(),
            _ => return false,
        };
        d.len() == self.member_count() && d.latest().is_some_and(|t| t <= now)
    }

    /// The names of every member of a set, sorted set or hash.
    pub fn member_names(&self) -> Vec<Bytes> {
        match self {
            Value::Hash(h) => h.iter().map(|(f, _)| Bytes::copy_from_slice(f)).collect(),
            Value::Set(s) => s.iter().map(Bytes::copy_from_slice).collect(),
            Value::ZSet(z) => z.iter().map(|(m, _)| Bytes::copy_from_slice(m)).collect(),
            _ => Vec::new(),
        }
    }

    /// Removes up to `limit` members whose deadline is `<= now`; returns them.
    pub fn purge_due(&mut self, now: u64, limit: usize) -> Vec<Bytes> {
        let mut out = Vec::new();
        while out.len() < limit {
            let m = match self {
                Value::Hash(h) => h.pop_due(now),
                Value::Set(s) => s.pop_due(now),
                Value::ZSet(z) => z.pop_due(now),
                _ => None,
            };
            match m {
                Some(m) => out.push(m),
                None => break,
            }
        }
        out
    }

    /// The command that deletes members of this type (for the log) and the
    /// notification names for member expiry, as (`SREM`, class, "sexpired").
    pub fn member_kind(&self) -> Option<MemberKind> {
        match self {
            Value::Hash(_) => Some(MemberKind::Hash),
            Value::Set(_) => Some(MemberKind::Set),
            Value::ZSet(_) => Some(MemberKind::ZSet),
            _ => None,
        }
    }
}

/// The three types whose members carry deadlines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberKind {
    /// Hash fields.
    Hash,
    /// Set members.
    Set,
    /// Sorted-set members.
    ZSet,
}

impl MemberKind {
    /// The command that removes members, used to log expiry deletions.
    pub fn remove_command(self) -> &'static str {
        match self {
            MemberKind::Hash => "HDEL",
            MemberKind::Set => "SREM",
            MemberKind::ZSet => "ZREM",
        }
    }

    /// Keyspace-notification class flag of this type.
    pub fn class(self) -> u8 {
        match self {
            MemberKind::Hash => b'h',
            MemberKind::Set => b's',
            MemberKind::ZSet => b'z',
        }
    }

    /// The event name prefix: `h`, `s` or `z`.
    pub fn prefix(self) -> &'static str {
        match self {
            MemberKind::Hash => "h",
            MemberKind::Set => "s",
            MemberKind::ZSet => "z",
        }
    }
}
#[cfg(test)]
mod tests {
    use std::mem::size_of;

    /// Every key pays for one entry: keep it from growing back.
    #[test]
    fn entries_stay_small() {
        // A collection without member deadlines pays one null pointer for them.
        assert!(size_of::<Option<Box<crate::expiry::DeadlineIndex>>>() <= 8);
        // A short string lives in the value itself; collections behind a box.
        assert_eq!(size_of::<super::Value>(), 24);
        // The value, the TTL and the access time.
        assert_eq!(size_of::<crate::db::Entry>(), 40);
    }
}
