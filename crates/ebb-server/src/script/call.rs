//! `redis.call` and `redis.pcall`: what a script run sees of the server
//! (`Call`), the checks each command it runs passes, and the run current
//! on this thread.

use bytes::Bytes;
use ebb_core::table::flag;
use ebb_core::{CommandSpec, Exec, Reply};
use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{busy, err, Guard};
use crate::conn::Session;
use crate::server::Shared;

/// One script run's view of the server, used by `redis.call`.
pub(super) struct Call<'s, 'a> {
    pub(super) s: &'s mut Session,
    pub(super) shared: &'a Arc<Shared>,
    pub(super) guard: &'s mut Guard<'a>,
    /// The script's database (SELECT inside a script changes only it).
    pub(super) db: usize,
    /// The time every command of the script sees.
    pub(super) now: u64,
    /// The protocol the script reads replies in (`redis.setresp`).
    pub(super) resp: u8,
    pub(super) read_only: bool,
    pub(super) allow_oom: bool,
    /// MULTI was logged ahead of the script's first write.
    pub(super) logged_multi: bool,
    /// Keys made ready for blocked clients, served when the script ends.
    pub(super) ready: Vec<(usize, Bytes)>,
    /// The script ran a write command (SCRIPT KILL can no longer stop it).
    pub(super) wrote: bool,
    /// The script ran past `busy-reply-threshold`.
    pub(super) busy: bool,
    /// The hook fires on every line (the script is being killed).
    pub(super) line_hook: bool,
    /// The script's digest or the function's name (errors, the log).
    pub(super) name: &'s str,
    /// The script's keys and arguments (KEYS and ARGV).
    pub(super) keys: &'s [&'s [u8]],
    pub(super) args: &'s [&'s [u8]],
    /// The reply of the last command the script ran, held here while it
    /// is handed to Lua (see raw.rs).
    pub(super) reply: Reply,
}

impl Call<'_, '_> {
    /// Runs one command for the script; failures are error replies,
    /// counted in the error statistics here (as Redis counts them at the
    /// command, the script's own error reply does not count them again),
    /// and refusals count as the command's rejected calls.
    pub(super) fn run(&mut self, resp: u8, argv: &[&[u8]]) -> Reply {
        let (r, rejected) = match self.checked_run(resp, argv) {
            Ok(r) => (r, None),
            Err(refused) => refused,
        };
        if let Reply::Error(text) = &r {
            crate::cmdstats::record_error(text);
            if let Some(slot) = rejected {
                crate::cmdstats::record_rejected(slot);
            }
        }
        r
    }

    /// Checks then runs one command: its reply, or `Err` with the refusal
    /// and the command's statistics slot (if it has one).
    fn checked_run(&mut self, resp: u8, argv: &[&[u8]]) -> Result<Reply, (Reply, Option<usize>)> {
        let Some(spec) = crate::rename::lookup(argv[0]) else {
            return Err((err("ERR Unknown Redis command called from script"), None));
        };
        let plain = crate::cmdstats::plain_slot(spec);
        if !spec.arity_ok(argv.len()) {
            return Err((
                err("ERR Wrong number of args calling Redis command from script"),
                plain,
            ));
        }
        let Some(slot) = crate::cmdstats::slot_of(spec, argv) else {
            return Err((err("ERR Unknown Redis command called from script"), None));
        };
        let refuse = |text: &'static str| Err((err(text), Some(slot)));
        if crate::cmdstats::sub_arity_ok(slot, argv.len()).is_err() {
            return refuse("ERR Wrong number of args calling Redis command from script");
        }
        // Scripts, functions and their caches stay out of reach even with
        // DEBUG SET-DISABLE-DENY-SCRIPTS: the running script holds the Lua
        // state. (SCRIPT HELP and FUNCTION HELP touch no state, and Redis
        // allows them.)
        let reentrant = match spec.name {
            "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro" => true,
            "script" | "function" => !argv[1].eq_ignore_ascii_case(b"help"),
            _ => false,
        };
        if reentrant
            || (no_script(spec, plain, slot)
                && !self.shared.scripts_any_command.load(Ordering::Relaxed))
        {
            return refuse("ERR This Redis command is not allowed from script");
        }
        if self.read_only && (spec.is_write() || spec.name == "publish") {
            return refuse("ERR Write commands are not allowed from read-only scripts.");
        }
        if !self.s.user.unrestricted {
            if let Err(d) = crate::acl::Acl::check(&self.s.user, spec, Some(slot), argv) {
                let name = crate::cmdstats::slot_name(slot);
                crate::acl_cmd::log_denied(self.shared, self.s, d, argv, name, "lua");
                return refuse(crate::acl::script_denied(d));
            }
        }
        // A script's first write is refused while the data cannot be
        // persisted; once it has written, it runs to its end.
        if spec.is_write() && !self.wrote {
            if let Some(e) = crate::misconf::disk_error(self.shared) {
                return Err((err(crate::misconf::refusal(&e)), Some(slot)));
            }
        }
        let store = self.guard.get_or_insert_with(|| self.shared.lock_store());
        if !self.allow_oom && spec.has(flag::DENYOOM) && crate::evict::limited() {
            if let Err(e) = crate::evict::make_room(self.shared, store) {
                return Err((e.into(), Some(slot)));
            }
        }
        // Past the memory check, as in Redis.
        if spec.is_write() && !self.claim_write() {
            return refuse(busy::KILLED);
        }
        if crate::observe::monitoring() {
            // MONITOR shows a script's commands as the client `lua`.
            crate::observe::feed(u64::MAX, self.db, "lua", spec, argv);
        }
        let start = crate::cmdstats::ticks();
        let r = match spec.exec {
            Exec::Core(_) => self.core(resp, spec, argv),
            Exec::Server => self.server(spec, argv),
        };
        let took = crate::cmdstats::ticks().saturating_sub(start);
        self.s.count_call(slot, took, matches!(r, Reply::Error(_)));
        // A script that reads has its declared keys tracked for a client
        // caching them, as in Redis.
        if spec.has(flag::READONLY) && !self.keys.is_empty() && self.s.remembers_reads() {
            self.shared.tracking.remember(
                &self.shared.clients,
                self.s.id,
                self.keys.iter().copied(),
            );
        }
        Ok(r)
    }

    fn core(&mut self, resp: u8, spec: &'static CommandSpec, argv: &[&[u8]]) -> Reply {
        let shared = self.shared;
        if spec.is_write() && !self.logged_multi {
            shared.log_block_begin(self.db);
            self.logged_multi = true;
        }
        let store = self.guard.get_or_insert_with(|| shared.lock_store());
        crate::exec::run_core_deferred(
            shared,
            store,
            self.db,
            self.now,
            resp == 3,
            true,
            &self.s.user,
            spec,
            argv,
            &mut self.ready,
        )
    }

    fn server(&mut self, spec: &CommandSpec, argv: &[&[u8]]) -> Reply {
        if spec.name == "migrate" {
            // The script's database and time; its DEL is logged inside
            // the script's block.
            if !self.logged_multi {
                self.shared.log_block_begin(self.db);
                self.logged_multi = true;
            }
            return crate::migrate::migrate(self.shared, self.guard, self.db, self.now, argv);
        }
        if spec.name == "select" {
            return match ebb_core::cmd::keys::parse_db_index(argv[1], self.shared.databases) {
                Err(e) => e.into(),
                Ok(n) => {
                    self.db = n;
                    Reply::Ok
                }
            };
        }
        crate::commands::reply_for(self.s, self.shared, self.guard, spec, argv).unwrap_or(Reply::Ok)
    }
}

/// Whether a command is refused in scripts (Redis's `noscript` flag): a
/// container command (CONFIG, CLIENT, ACL, …) carries the flag per
/// subcommand, so that for instance CONFIG HELP is allowed and CONFIG GET
/// is not.
fn no_script(spec: &CommandSpec, plain: Option<usize>, slot: usize) -> bool {
    if plain.is_some() {
        return spec.has(flag::NOSCRIPT);
    }
    match ebb_core::keyspecs::subcommand(crate::cmdstats::slot_name(slot)) {
        Some(sub) => sub.flags.split_ascii_whitespace().any(|f| f == "noscript"),
        None => spec.has(flag::NOSCRIPT),
    }
}

thread_local! {
    /// The script run on this thread, for `redis.call` (a script runs to
    /// its end on the thread that started it, and never starts another).
    static CURRENT: Cell<*mut ()> = const { Cell::new(std::ptr::null_mut()) };
}

/// Marks a run as this thread's current one until dropped.
pub(super) struct Current;

impl Current {
    pub(super) fn enter(call: &mut Call<'_, '_>) -> Current {
        CURRENT.with(|c| c.set(call as *mut Call<'_, '_> as *mut ()));
        Current
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(std::ptr::null_mut()));
    }
}

/// Runs `f` on the current script run, if one is running on this thread.
pub(super) fn with_call<R>(f: impl FnOnce(&mut Call<'_, '_>) -> R) -> Option<R> {
    let p = CURRENT.with(|c| c.get()) as *mut Call<'static, 'static>;
    if p.is_null() {
        return None;
    }
    // SAFETY: the pointer was set by `Current::enter` from a `Call` that
    // outlives the Lua call it was set for, and is cleared when that call
    // returns; the Lua state runs on this thread only, one call at a time,
    // and nothing else touches the `Call` while Lua runs.
    Some(f(unsafe { &mut *p }))
}
