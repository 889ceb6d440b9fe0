//! Pub/sub: channel, pattern and shard-channel subscriptions, and the
//! delivery of PUBLISH and SPUBLISH messages to subscribers' mailboxes.

use bytes::Bytes;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::commands::eq;
use crate::server::{ClientEntry, Msg, Shared};
use ebb_core::glob::glob_match;
use ebb_core::Reply;

/// Pub/sub subscriptions.
#[derive(Default)]
pub struct PubSub {
    channels: HashMap<Bytes, HashMap<u64, Arc<ClientEntry>>>,
    patterns: HashMap<Bytes, HashMap<u64, Arc<ClientEntry>>>,
    /// Shard channels (SSUBSCRIBE / SPUBLISH): a namespace of their own,
    /// which patterns never match.
    shard: HashMap<Bytes, HashMap<u64, Arc<ClientEntry>>>,
}

thread_local! {
    /// The RESP3 subscriber whose command is running on this thread (0:
    /// none), and the messages it sent itself meanwhile: they are written
    /// ahead of the command's reply, as Redis writes them.
    static OWN: std::cell::RefCell<(u64, Vec<Vec<Bytes>>)> =
        const { std::cell::RefCell::new((0, Vec::new())) };
}

/// Marks client `id` (0: none) as the one whose command runs now, for
/// [`take_own`].
pub fn set_own(id: u64) {
    OWN.with(|o| o.borrow_mut().0 = id);
}

/// The messages the running client sent itself since the last call.
pub fn take_own() -> Vec<Vec<Bytes>> {
    OWN.with(|o| std::mem::take(&mut o.borrow_mut().1))
}

/// Queues a pub/sub message for subscriber `id`, unless its output limit
/// refuses it; true if queued. The running client's own copy (see
/// [`set_own`]) is kept for it instead, to be written ahead of its reply,
/// as Redis writes it.
fn deliver(id: u64, c: &ClientEntry, items: Vec<Bytes>) -> bool {
    let own = OWN.with(|o| {
        let mut o = o.borrow_mut();
        if o.0 != id {
            return Some(items);
        }
        o.1.push(items);
        None
    });
    match own {
        None => true,
        Some(items) => {
            let size = crate::outbuf::size(&items);
            crate::outbuf::admit(c, size) && c.queue(Msg::Push(items), size)
        }
    }
}

/// Sends `kind channel msg` to each subscriber of one channel (or shard
/// channel); returns how many got it.
fn to_channel(
    subs: Option<&HashMap<u64, Arc<ClientEntry>>>,
    kind: &'static [u8],
    channel: &[u8],
    msg: &[u8],
) -> usize {
    subs.into_iter()
        .flat_map(|m| m.iter())
        .filter(|(id, c)| {
            let items = vec![
                Bytes::from_static(kind),
                Bytes::copy_from_slice(channel),
                Bytes::copy_from_slice(msg),
            ];
            deliver(**id, c, items)
        })
        .count()
}

/// The three kinds of subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubKind {
    /// SUBSCRIBE.
    Channel,
    /// PSUBSCRIBE.
    Pattern,
    /// SSUBSCRIBE.
    Shard,
}

impl PubSub {
    fn map(&mut self, kind: SubKind) -> &mut HashMap<Bytes, HashMap<u64, Arc<ClientEntry>>> {
        match kind {
            SubKind::Channel => &mut self.channels,
            SubKind::Pattern => &mut self.patterns,
            SubKind::Shard => &mut self.shard,
        }
    }
}

impl ClientEntry {
    /// Whether the client holds any subscription (CLIENT LIST flag `P`,
    /// CLIENT KILL TYPE pubsub).
    pub fn subscribed(&self) -> bool {
        self.subs.load(Ordering::Relaxed)
            + self.psubs.load(Ordering::Relaxed)
            + self.ssubs.load(Ordering::Relaxed)
            > 0
    }
}

impl Shared {
    /// Publishes a message to a shard channel's subscribers (SPUBLISH:
    /// patterns do not see it); returns the number of receivers.
    pub fn spublish(&self, channel: &[u8], msg: &[u8]) -> usize {
        let ps = self.pubsub.lock();
        let n = to_channel(ps.shard.get(channel), b"smessage", channel, msg);
        self.stats
            .pubsub_messages
            .fetch_add(n as u64, Ordering::Relaxed);
        n
    }

    /// Publishes a message; returns the number of receivers.
    pub fn publish(&self, channel: &[u8], msg: &[u8]) -> usize {
        let ps = self.pubsub.lock();
        let mut n = to_channel(ps.channels.get(channel), b"message", channel, msg);
        for (pat, subs) in ps.patterns.iter() {
            if glob_match(pat, channel, false) {
                for (id, c) in subs.iter() {
                    let items = vec![
                        Bytes::from_static(b"pmessage"),
                        pat.clone(),
                        Bytes::copy_from_slice(channel),
                        Bytes::copy_from_slice(msg),
                    ];
                    n += usize::from(deliver(*id, c, items));
                }
            }
        }
        self.stats
            .pubsub_messages
            .fetch_add(n as u64, Ordering::Relaxed);
        n
    }

    /// Subscribes a client to a channel, pattern or shard channel.
    pub fn subscribe(&self, client: u64, entry: &Arc<ClientEntry>, name: Bytes, kind: SubKind) {
        let mut ps = self.pubsub.lock();
        ps.map(kind)
            .entry(name)
            .or_default()
            .insert(client, entry.clone());
    }

    /// Closes the connections of user `name` subscribed to a channel or
    /// pattern the user may no longer use (after ACL SETUSER), as Redis
    /// does.
    pub fn drop_forbidden_subscribers(&self, name: &[u8]) {
        let Some(user) = self.acl.user(name) else {
            return;
        };
        let ps = self.pubsub.lock();
        for (pattern, map) in [
            (false, &ps.channels),
            (true, &ps.patterns),
            (false, &ps.shard),
        ] {
            for (chan, subs) in map {
                for c in subs.values() {
                    if *c.user.lock() == name && !user.channel_ok(chan, pattern) {
                        let _ = c.tx.send(Msg::Kill);
                        c.kill.notify_one();
                    }
                }
            }
        }
    }

    /// Unsubscribes a client from a channel, pattern or shard channel.
    pub fn unsubscribe(&self, client: u64, name: &[u8], kind: SubKind) {
        let mut ps = self.pubsub.lock();
        let map = ps.map(kind);
        if let Some(s) = map.get_mut(name) {
            s.remove(&client);
            if s.is_empty() {
                map.remove(name);
            }
        }
    }

    /// PUBSUB CHANNELS / SHARDCHANNELS: channels (or shard channels, with
    /// `shard`) with a subscriber, matching `pattern` if given.
    pub fn pubsub_channels(&self, pattern: Option<&[u8]>, shard: bool) -> Vec<Bytes> {
        let ps = self.pubsub.lock();
        let map = if shard { &ps.shard } else { &ps.channels };
        map.keys()
            .filter(|c| pattern.is_none_or(|p| glob_match(p, c, false)))
            .cloned()
            .collect()
    }

    /// Subscribers of one channel (PUBSUB NUMSUB), or of one shard channel
    /// (SHARDNUMSUB).
    pub fn pubsub_numsub(&self, channel: &[u8], shard: bool) -> usize {
        let ps = self.pubsub.lock();
        let map = if shard { &ps.shard } else { &ps.channels };
        map.get(channel).map_or(0, |s| s.len())
    }

    /// Number of distinct patterns subscribed.
    pub fn pubsub_numpat(&self) -> usize {
        self.pubsub.lock().patterns.len()
    }
}

/// PUBSUB and its subcommands (arity checked before).
pub fn pubsub_command(shared: &Shared, argv: &[&[u8]]) -> Reply {
    let sub = &argv[1];
    let shard = eq(sub, "shardchannels") || eq(sub, "shardnumsub");
    if (eq(sub, "channels") || eq(sub, "shardchannels")) && argv.len() <= 3 {
        Reply::bulks(shared.pubsub_channels(argv.get(2).map(|b| &b[..]), shard))
    } else if eq(sub, "numsub") || eq(sub, "shardnumsub") {
        let mut v = Vec::new();
        for ch in &argv[2..] {
            v.push(Reply::bulk(ch));
            v.push(Reply::Int(shared.pubsub_numsub(ch, shard) as i64));
        }
        Reply::Array(v)
    } else if eq(sub, "numpat") && argv.len() == 2 {
        Reply::Int(shared.pubsub_numpat() as i64)
    } else if eq(sub, "help") && argv.len() == 2 {
        Reply::help(&[
                "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "CHANNELS [<pattern>]",
                "    Return the currently active channels matching a <pattern> (default: '*').",
                "NUMPAT",
                "    Return number of subscriptions to patterns.",
                "NUMSUB [<channel> ...]",
                "    Return the number of subscribers for the specified channels, excluding",
                "    pattern subscriptions(default: no channels).",
                "SHARDCHANNELS [<pattern>]",
                "    Return the currently active shard level channels matching a <pattern> (default: '*').",
                "SHARDNUMSUB [<shardchannel> ...]",
                "    Return the number of subscribers for the specified shard level channel(s)",
                "HELP",
                "    Prints this help.",
        ])
    } else {
        // A known subcommand with arguments it does not take.
        ebb_core::error::subcommand_syntax(sub, "pubsub").into()
    }
}
