//! A script that runs long: past `busy-reply-threshold` other clients are
//! answered BUSY (the runtime's worker is handed to another thread while
//! the script keeps the keyspace), SCRIPT KILL may stop a script that has
//! not written, and the state other clients see is cleared when it ends.

use mlua::{HookTriggers, Lua, Table, VmState};
use std::sync::atomic::{AtomicU8, Ordering};

use super::{err, libs, with_call, Call, Scripting};
use crate::server::now_ms;
use ebb_core::Reply;

/// The reply to other clients while a script (EVAL) runs past the busy
/// threshold.
pub const BUSY_REPLY: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";

/// The same while a function (FCALL) runs.
pub const BUSY_FUNCTION_REPLY: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

/// What a script stopped by SCRIPT KILL raises.
pub(super) const KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";

/// Lua instructions between two looks at the clock and at SCRIPT KILL.
const HOOK_EVERY: u32 = 100_000;

/// Bits of [`Scripting::state`].
const BUSY: u8 = 1;
const WROTE: u8 = 2;
const KILL: u8 = 4;
const FUNCTION: u8 = 8;

impl Scripting {
    /// Whether a script has run past `busy-reply-threshold`: other
    /// clients get BUSY, and only SCRIPT KILL, SHUTDOWN NOSAVE and the
    /// connection commands Redis allows are served.
    pub fn busy(&self) -> bool {
        self.state.load(Ordering::Relaxed) & BUSY != 0
    }

    /// The BUSY reply other clients get now: it names FUNCTION KILL while
    /// a function runs, SCRIPT KILL while a script does.
    pub fn busy_reply(&self) -> &'static str {
        if self.state.load(Ordering::Relaxed) & FUNCTION != 0 {
            BUSY_FUNCTION_REPLY
        } else {
            BUSY_REPLY
        }
    }

    /// Marks the start of a run (the state is cleared when it ends).
    pub(super) fn start_run(&self, function: bool) {
        self.state
            .store(if function { FUNCTION } else { 0 }, Ordering::Release);
    }

    /// SCRIPT KILL (`function` false) or FUNCTION KILL: asks a busy script
    /// or function that has not written to stop. Each stops only its own
    /// kind and answers BUSY for the other.
    pub(super) fn kill(&self, function: bool) -> Reply {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            if s & BUSY == 0 {
                return err("NOTBUSY No scripts in execution right now.");
            }
            if s & WROTE != 0 {
                return err(
                    "UNKILLABLE Sorry the script already executed write commands against the \
                     dataset. You can either wait the script termination or kill the server in a \
                     hard way using the SHUTDOWN NOSAVE command.",
                );
            }
            if (s & FUNCTION != 0) != function {
                return err(if function {
                    BUSY_REPLY
                } else {
                    BUSY_FUNCTION_REPLY
                });
            }
            match self
                .state
                .compare_exchange(s, s | KILL, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Reply::Ok,
                Err(now) => s = now,
            }
        }
    }
}

/// Installs the hook that watches a running script: every
/// [`HOOK_EVERY`] instructions, or on every line once the script is being
/// killed (so that a `pcall` cannot catch the kill and go on).
pub(super) fn set_hook(lua: &Lua, state: &Table, every_line: bool) -> mlua::Result<()> {
    let triggers = if every_line {
        HookTriggers::EVERY_LINE
    } else {
        HookTriggers::new().every_nth_instruction(HOOK_EVERY)
    };
    let st = state.clone();
    lua.set_global_hook(triggers, move |lua, _| {
        if with_call(|c| c.interrupted()).unwrap_or(false) {
            if !every_line {
                set_hook(lua, &st, true)?;
                with_call(|c| c.line_hook = true);
            }
            return Err(libs::raise_table(lua, &st, KILLED));
        }
        Ok(VmState::Continue)
    })
}

/// Lets the runtime serve other connections on another thread while this
/// one goes on running a script (which keeps the keyspace locked): they
/// are answered BUSY. The runtime's worker is handed to a fresh thread,
/// and this thread waits until some worker has run a task (with more than
/// one worker that may be another one, which then serves the clients).
fn hand_off_worker() {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let Ok(handle) = Handle::try_current() else {
        return;
    };
    if handle.runtime_flavor() != RuntimeFlavor::MultiThread {
        return;
    }
    tokio::task::block_in_place(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        handle.spawn(async move {
            let _ = tx.send(());
        });
        let _ = rx.recv_timeout(std::time::Duration::from_secs(1));
    });
}

/// Clears the running script's state (busy, wrote, kill) when dropped.
pub(super) struct ClearState<'a>(pub(super) &'a AtomicU8);

impl Drop for ClearState<'_> {
    fn drop(&mut self) {
        self.0.store(0, Ordering::Release);
    }
}

impl Call<'_, '_> {
    /// Called by the hook: marks the script busy once it has run past
    /// `busy-reply-threshold` (and lets other clients be answered), and
    /// tells whether SCRIPT KILL asked it to stop.
    fn interrupted(&mut self) -> bool {
        let scripting = &self.shared.scripting;
        if !self.busy {
            let limit = self.shared.config.read().get_i64("busy-reply-threshold");
            let elapsed = now_ms().saturating_sub(self.now);
            if limit <= 0 || elapsed < limit as u64 {
                return false;
            }
            self.busy = true;
            scripting.state.fetch_or(BUSY, Ordering::AcqRel);
            let how = if scripting.state.load(Ordering::Relaxed) & FUNCTION != 0 {
                "FUNCTION KILL"
            } else {
                "SCRIPT KILL"
            };
            tracing::warn!(
                "Slow script detected: still in execution after {elapsed} milliseconds. You can \
                 try killing the script using the {how} command. Script name is: {}.",
                self.name
            );
            hand_off_worker();
        }
        scripting.state.load(Ordering::Acquire) & KILL != 0
    }

    /// Records that the script runs a write command: from then on SCRIPT
    /// KILL refuses. False if a kill was granted before (the write must
    /// not happen).
    pub(super) fn claim_write(&mut self) -> bool {
        if self.wrote {
            return true;
        }
        let prev = self
            .shared
            .scripting
            .state
            .fetch_or(WROTE, Ordering::AcqRel);
        if prev & KILL != 0 {
            return false;
        }
        self.wrote = true;
        true
    }
}
