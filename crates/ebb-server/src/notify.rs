//! Keyspace notifications: the `notify-keyspace-events` settings shared by
//! the connections. The flags, channels and payloads are core's
//! (`ebb_core::notify`), which the Redis module uses too.

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

pub use ebb_core::notify::{parse_flags, Flags};

/// The `notify-keyspace-events` flags in force, with lock-free answers for
/// the per-command checks (a shared read lock per command would bounce its
/// cache line between cores).
pub struct NotifySettings {
    flags: RwLock<Flags>,
    any: AtomicBool,
    member_names: AtomicBool,
    new_keys: AtomicBool,
    keymiss: AtomicBool,
}

/// Write access to [`NotifySettings`]; the cached answers are refreshed
/// when it is dropped.
pub struct NotifyWrite<'a> {
    guard: RwLockWriteGuard<'a, Flags>,
    any: &'a AtomicBool,
    member_names: &'a AtomicBool,
    new_keys: &'a AtomicBool,
    keymiss: &'a AtomicBool,
}

impl NotifySettings {
    /// Settings holding `flags`.
    pub fn new(flags: Flags) -> NotifySettings {
        NotifySettings {
            any: AtomicBool::new(flags.any()),
            member_names: AtomicBool::new(flags.wants_member_names()),
            new_keys: AtomicBool::new(flags.wants_new_keys()),
            keymiss: AtomicBool::new(flags.wants_keymiss()),
            flags: RwLock::new(flags),
        }
    }

    /// The flags.
    pub fn read(&self) -> RwLockReadGuard<'_, Flags> {
        self.flags.read()
    }

    /// The flags, for replacing them.
    pub fn write(&self) -> NotifyWrite<'_> {
        NotifyWrite {
            guard: self.flags.write(),
            any: &self.any,
            member_names: &self.member_names,
            new_keys: &self.new_keys,
            keymiss: &self.keymiss,
        }
    }

    /// Whether anything at all is published ([`Flags::any`]).
    pub fn any(&self) -> bool {
        self.any.load(Ordering::Relaxed)
    }

    /// Whether member names are needed ([`Flags::wants_member_names`]).
    pub fn member_names(&self) -> bool {
        self.member_names.load(Ordering::Relaxed)
    }

    /// Whether `new` key events are published ([`Flags::wants_new_keys`]).
    pub fn new_keys(&self) -> bool {
        self.new_keys.load(Ordering::Relaxed)
    }

    /// Whether `keymiss` events are published ([`Flags::wants_keymiss`]).
    pub fn keymiss(&self) -> bool {
        self.keymiss.load(Ordering::Relaxed)
    }
}

impl Deref for NotifyWrite<'_> {
    type Target = Flags;
    fn deref(&self) -> &Flags {
        &self.guard
    }
}

impl DerefMut for NotifyWrite<'_> {
    fn deref_mut(&mut self) -> &mut Flags {
        &mut self.guard
    }
}

impl Drop for NotifyWrite<'_> {
    fn drop(&mut self) {
        self.any.store(self.guard.any(), Ordering::Relaxed);
        self.member_names
            .store(self.guard.wants_member_names(), Ordering::Relaxed);
        self.new_keys
            .store(self.guard.wants_new_keys(), Ordering::Relaxed);
        self.keymiss
            .store(self.guard.wants_keymiss(), Ordering::Relaxed);
    }
}
