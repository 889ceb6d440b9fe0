//! Clients parked in blocking commands: parking and unparking them, and
//! serving them once their keys receive elements (each waiter's command
//! runs again under the store lock, in the order the clients blocked).

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::Ordering;

use bytes::Bytes;
use ebb_core::{Ctx, Error, Reply, Store};
use tokio::sync::mpsc::UnboundedSender;

use crate::server::{now_ms, Blocking, Msg, Shared, Waiter};

impl Waiter {
    /// What the command replies when its timeout ends (or CLIENT UNBLOCK
    /// … TIMEOUT ends it early), as Redis answers by kind of block: WAIT
    /// the number of replicas that acknowledged (ebb has none), a blocked
    /// pop a null array.
    fn timeout_reply(&self) -> Reply {
        match self.argv.first() {
            Some(name) if name.eq_ignore_ascii_case(b"wait") => Reply::Int(0),
            _ => Reply::NilArray,
        }
    }
}

impl Shared {
    /// Parks a client on `keys` (none for WAIT, which only a timeout or
    /// CLIENT UNBLOCK ends); returns the waiter id.
    pub fn block(
        &self,
        client: u64,
        db: usize,
        argv: Vec<Bytes>,
        resp3: bool,
        keys: Vec<Bytes>,
        tx: UnboundedSender<Msg>,
    ) -> u64 {
        let mut b = self.blocking.lock();
        b.next += 1;
        let id = b.next;
        for k in &keys {
            b.by_key.entry((db, k.clone())).or_default().push_back(id);
        }
        self.waiting.fetch_add(1, Ordering::Relaxed);
        b.waiters.insert(
            id,
            Waiter {
                client,
                db,
                argv,
                resp3,
                keys,
                tx,
            },
        );
        id
    }

    /// Removes a waiter (disconnect, kill); false if it was already served.
    pub fn unblock(&self, id: u64) -> bool {
        let mut b = self.blocking.lock();
        self.remove_waiter(&mut b, id).is_some()
    }

    /// Removes a waiter whose timeout ended: its reply for that, or `None`
    /// if it was served just before.
    pub fn time_out(&self, id: u64) -> Option<Reply> {
        let mut b = self.blocking.lock();
        self.remove_waiter(&mut b, id).map(|w| w.timeout_reply())
    }

    /// Ends a client's block (CLIENT UNBLOCK) with `error`, or with the
    /// reply its command gives when it times out; false if not blocked.
    pub fn unblock_with(&self, client: u64, error: Option<Reply>) -> bool {
        let mut b = self.blocking.lock();
        let Some(id) = b
            .waiters
            .iter()
            .find(|(_, w)| w.client == client)
            .map(|(id, _)| *id)
        else {
            return false;
        };
        match self.remove_waiter(&mut b, id) {
            Some(w) => {
                let reply = error.unwrap_or_else(|| w.timeout_reply());
                w.tx.send(Msg::Unblocked(reply)).is_ok()
            }
            None => false,
        }
    }

    pub(crate) fn remove_waiter(&self, b: &mut Blocking, id: u64) -> Option<Waiter> {
        let w = b.waiters.remove(&id)?;
        self.waiting.fetch_sub(1, Ordering::Relaxed);
        forget_waiter_keys(b, id, &w);
        Some(w)
    }
}

impl Shared {
    /// Serves blocked clients waiting on keys that became ready, in the
    /// order they blocked, re-running their commands under the store lock.
    pub(crate) fn serve_blocked(&self, store: &mut Store, ready: Vec<(usize, Bytes)>) {
        let mut queue: VecDeque<(usize, Bytes)> = ready.into_iter().collect();
        let mut seen = HashSet::new();
        while let Some(k) = queue.pop_front() {
            if !seen.insert(k.clone()) && queue.len() > 10_000 {
                break;
            }
            loop {
                let ids: Vec<u64> = {
                    let b = self.blocking.lock();
                    match b.by_key.get(&k) {
                        Some(q) => q.iter().copied().collect(),
                        None => break,
                    }
                };
                let mut served_any = false;
                for id in ids {
                    let (db, argv, resp3) = {
                        let b = self.blocking.lock();
                        match b.waiters.get(&id) {
                            Some(w) => (w.db, w.argv.clone(), w.resp3),
                            None => continue,
                        }
                    };
                    let Some(spec) = argv.first().and_then(|n| ebb_core::lookup(n)) else {
                        continue;
                    };
                    let argv = ready_key_first(spec, argv, &k.1);
                    let mut fx = self.effects();
                    let result = {
                        let mut ctx = Ctx::new(store, db, now_ms(), &mut fx);
                        ctx.resp3 = resp3;
                        ctx.may_block = true;
                        ebb_core::execute_result(&mut ctx, spec, &ebb_core::args::views(&argv))
                    };
                    // The ready key now holding another type (e.g. a SET in
                    // the same EXEC) does not serve the client: as in Redis,
                    // it stays blocked until the key holds its type again. A
                    // WRONGTYPE about another key (a BLMOVE destination) is
                    // the client's answer.
                    let waited_key_retyped = matches!(result, Err(Error::WrongType)) && {
                        let want = if argv[0].len() > 1 && argv[0][..2].eq_ignore_ascii_case(b"bz")
                        {
                            "zset"
                        } else {
                            "list"
                        };
                        store.dbs[k.0]
                            .raw_get(&k.1)
                            .is_some_and(|e| e.value.type_name() != want)
                    };
                    let reply = match result {
                        Err(Error::WouldBlock { .. }) => {
                            self.log_propagated(&mut fx);
                            self.apply_effects(store, &mut fx);
                            continue;
                        }
                        Err(Error::WrongType) if waited_key_retyped => {
                            self.log_propagated(&mut fx);
                            self.apply_effects(store, &mut fx);
                            continue;
                        }
                        other => other.unwrap_or_else(Reply::from),
                    };
                    self.log_command(db, spec, &ebb_core::args::views(&argv), &mut fx);
                    let w = {
                        let mut b = self.blocking.lock();
                        self.remove_waiter(&mut b, id)
                    };
                    if let Some(w) = w {
                        let _ = w.tx.send(Msg::Unblocked(reply));
                    }
                    served_any = true;
                    for r in fx.ready.drain(..) {
                        queue.push_back(r);
                    }
                    self.apply_effects(store, &mut fx);
                }
                if !served_any {
                    break;
                }
            }
        }
    }
}

/// A blocked pop on several keys served because `ready` received
/// elements pops from `ready` first, as Redis serves a client from the key
/// that woke it: its keys are reordered with `ready` first.
fn ready_key_first(spec: &ebb_core::CommandSpec, argv: Vec<Bytes>, ready: &[u8]) -> Vec<Bytes> {
    let views = ebb_core::args::views(&argv);
    let pos = spec.key_positions(&views);
    let Some(at) = pos.iter().position(|&p| &argv[p][..] == ready) else {
        return argv;
    };
    if at == 0 || !spec.has_flag("blocking") {
        return argv;
    }
    let mut out = argv.clone();
    let mut keys: Vec<Bytes> = pos.iter().map(|&p| argv[p].clone()).collect();
    let first = keys.remove(at);
    keys.insert(0, first);
    for (&p, k) in pos.iter().zip(keys) {
        out[p] = k;
    }
    out
}

fn forget_waiter_keys(b: &mut Blocking, id: u64, w: &Waiter) {
    for k in &w.keys {
        let key = (w.db, k.clone());
        if let Some(q) = b.by_key.get_mut(&key) {
            q.retain(|x| *x != id);
            if q.is_empty() {
                b.by_key.remove(&key);
            }
        }
    }
}
