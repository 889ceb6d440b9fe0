//! What a connection holds, published in its registry entry for CLIENT
//! LIST and added to the clients' total that client eviction
//! (`maxmemory-clients`) weighs.
//!
//! The figures are taken once per pass of the connection's loop, when it
//! has run what it read and written what the client took, and are only
//! stored when they changed: a client repeating small commands stores
//! nothing. Counted: the read buffer's room (an incomplete request in it
//! included), the reply buffer's room (replies not yet written included),
//! the queued transaction, watched keys, subscriptions and tracking
//! prefixes, plus a fixed part for the connection's own structures.
//! Messages waiting in the mailbox are counted by whoever queues them.

use bytes::BytesMut;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::mpsc::UnboundedReceiver;

use super::Session;
use crate::resp::Request;
use crate::server::{ClientEntry, Msg};

/// What any connection holds besides its buffers and lists: its session,
/// registry entry, task and mailbox.
const FIXED: usize = std::mem::size_of::<Session>() + std::mem::size_of::<ClientEntry>() + 512;

/// A watched key's entries in the session's list and the server's table
/// (the key itself aside, as Redis counts it).
const PER_WATCH: usize = 96;

/// A subscription's entries in the session's set and the server's table.
const PER_SUBSCRIPTION: usize = 96;

/// A BCAST tracking prefix's entries.
const PER_PREFIX: usize = 64;

/// What a connection holds, as it publishes it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Held {
    /// Everything, in bytes (the mailbox aside).
    total: usize,
    /// The unread part of an incomplete request.
    qbuf: usize,
    /// The arguments of that request read so far.
    argv: usize,
    /// The queued transaction.
    multi: usize,
    /// The read buffer's room.
    read_room: usize,
    /// The reply buffer's room.
    reply_room: usize,
    /// Replies not yet written.
    unsent: usize,
}

impl Session {
    /// Publishes what the connection holds, then makes the client
    /// eviction check. False when this client is evicted: the connection
    /// closes.
    pub(super) fn account(&mut self, rbuf: &BytesMut, out: &BytesMut, req: &Request) -> bool {
        if self.entry.evicted.load(Ordering::Relaxed) {
            return false;
        }
        let part = if rbuf.is_empty() {
            Default::default()
        } else {
            req.partial(rbuf)
        };
        let held = self.holding(rbuf.capacity(), out, part.unread, part.argv);
        self.publish_held(held);
        crate::client_evict::check(&self.shared, &self.entry)
    }

    /// The check between two commands of a batch, as Redis makes it
    /// before each command, while client eviction is on: when the reply
    /// buffer has grown or the transaction queued more, the figures are
    /// published and the check made. False when this client is evicted.
    pub(super) fn account_growth(&mut self, read_room: usize, out: &BytesMut) -> bool {
        if out.capacity() == self.held.reply_room && self.queued() == self.held.multi {
            return true;
        }
        if self.entry.evicted.load(Ordering::Relaxed) {
            return false;
        }
        let held = self.holding(read_room, out, self.held.qbuf, self.held.argv);
        self.publish_held(held);
        crate::client_evict::check(&self.shared, &self.entry)
    }

    /// Bytes of the transaction being queued.
    fn queued(&self) -> usize {
        if self.multi.is_some() {
            self.multi_mem
        } else {
            0
        }
    }

    fn holding(&self, read_room: usize, out: &BytesMut, qbuf: usize, argv: usize) -> Held {
        let multi = self.queued();
        let lists = self.watched.len() * PER_WATCH
            + (self.channels.len() + self.patterns.len() + self.shard_channels.len())
                * PER_SUBSCRIPTION
            + self
                .track
                .as_ref()
                .map_or(0, |m| m.prefixes.len() * PER_PREFIX);
        Held {
            total: FIXED + read_room + out.capacity() + multi + lists,
            qbuf,
            argv,
            multi,
            read_room,
            reply_room: out.capacity(),
            unsent: out.len(),
        }
    }

    /// Stores the figures that changed, and the change of the total in
    /// the clients' sum.
    fn publish_held(&mut self, held: Held) {
        let was = self.held;
        if held == was {
            return;
        }
        self.held = held;
        let entry = &self.entry;
        if held.total != was.total {
            let old = entry.own_memory.swap(held.total, Ordering::Relaxed);
            if held.total >= old {
                crate::client_evict::grow(held.total - old);
            } else {
                crate::client_evict::shrink(old - held.total);
            }
        }
        let store = |a: &AtomicUsize, now: usize, then: usize| {
            if now != then {
                a.store(now, Ordering::Relaxed);
            }
        };
        store(&entry.qbuf, held.qbuf, was.qbuf);
        store(&entry.argv_mem, held.argv, was.argv);
        store(&entry.multi_mem, held.multi, was.multi);
        store(&entry.qbuf_room, held.read_room, was.read_room);
        store(&entry.reply_room, held.reply_room, was.reply_room);
        store(&entry.unsent, held.unsent, was.unsent);
    }

    /// Takes the closed connection out of the clients' memory: what it
    /// published, and the messages left in its mailbox (closed first, so
    /// that nothing more is queued).
    pub(super) fn forget_memory(&mut self, rx: &mut UnboundedReceiver<Msg>) {
        rx.close();
        self.entry.close_mailbox();
        crate::client_evict::shrink(self.entry.own_memory.swap(0, Ordering::Relaxed));
    }
}
