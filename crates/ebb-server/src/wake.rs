//! Serving clients parked in blocking commands once their keys receive
//! elements: each waiter's command runs again under the store lock, in the
//! order the clients blocked.

use std::collections::{HashSet, VecDeque};

use bytes::Bytes;
use ebb_core::{Ctx, Error, Reply, Store};

use crate::server::{now_ms, Msg, Shared};

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
