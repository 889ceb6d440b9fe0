//! Writes refused while the data cannot be persisted, as Redis refuses
//! them (`-MISCONF`): after a failed background save when save rules are
//! set and `stop-writes-on-bgsave-error` is on, and while the AOF cannot
//! be written or fsynced. Reads go on; writes, PING, an EXEC holding a
//! write and a script's first write are refused until a save succeeds
//! again, or the AOF writes again.

use std::sync::atomic::Ordering;

use ebb_core::{CommandSpec, Reply};

use crate::server::Shared;

/// Why writes are refused.
#[derive(Debug, Clone, PartialEq)]
pub enum DiskError {
    /// The last background save failed.
    Snapshot,
    /// Writing or fsyncing the AOF failed with this OS error.
    Aof(String),
}

/// Whether the last save and the AOF's writes and fsyncs all succeeded:
/// three relaxed loads, asked before every command.
#[inline(always)]
fn all_well(shared: &Shared) -> bool {
    shared.last_bgsave_ok.load(Ordering::Relaxed)
        && shared.aof_write_ok.load(Ordering::Relaxed)
        && shared.aof_fsync_ok.load(Ordering::Relaxed)
}

/// The reason writes are refused now, if any.
#[inline]
pub fn disk_error(shared: &Shared) -> Option<DiskError> {
    if all_well(shared) {
        return None;
    }
    why_refused(shared)
}

/// [`disk_error`] once something failed.
#[cold]
#[inline(never)]
fn why_refused(shared: &Shared) -> Option<DiskError> {
    let saved = shared.last_bgsave_ok.load(Ordering::Relaxed);
    let aof_ok =
        shared.aof_write_ok.load(Ordering::Relaxed) && shared.aof_fsync_ok.load(Ordering::Relaxed);
    if !saved {
        let c = shared.config.read();
        let rules = c.get("save").is_some_and(|s| !s.trim().is_empty());
        if rules && c.get_bool("stop-writes-on-bgsave-error") {
            return Some(DiskError::Snapshot);
        }
    }
    if !aof_ok && shared.aof.is_on() {
        return Some(DiskError::Aof(errno_text(
            shared.aof_errno.load(Ordering::Relaxed),
        )));
    }
    None
}

/// The text of an OS error number, as `strerror` gives it.
pub fn errno_text(errno: i32) -> String {
    let s = std::io::Error::from_raw_os_error(errno).to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The error a refused command gets.
pub fn refusal(e: &DiskError) -> String {
    match e {
        DiskError::Snapshot => "MISCONF Redis is configured to save RDB snapshots, but it's currently \
             unable to persist to disk. Commands that may modify the data set are disabled, because \
             this instance is configured to report errors during writes if RDB snapshotting fails \
             (stop-writes-on-bgsave-error option). Please check the Redis logs for details about \
             the RDB error."
            .to_string(),
        DiskError::Aof(why) => format!("MISCONF Errors writing to the AOF file: {why}"),
    }
}

/// The error a script that declares it may write (a `#!lua` script
/// without `no-writes`) gets before it starts.
pub fn script_refusal(e: &DiskError) -> String {
    match e {
        DiskError::Snapshot => "MISCONF Redis is configured to save RDB snapshots, but it's currently \
             unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read \
             only scripts."
            .to_string(),
        DiskError::Aof(why) => format!(
            "MISCONF Redis is configured to persist data to AOF, but it's currently unable to \
             persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only \
             scripts. AOF error: {why}"
        ),
    }
}

/// Whether a command is a write in Redis's sense: the write flag,
/// FUNCTION LOAD, DELETE, FLUSH and RESTORE, and a script that declares
/// it may write.
pub fn writes(shared: &Shared, spec: &CommandSpec, argv: &[&[u8]]) -> bool {
    spec.is_write()
        || (spec.name == "function"
            && ["load", "delete", "flush", "restore"].iter().any(|s| {
                argv.get(1)
                    .is_some_and(|a| a.eq_ignore_ascii_case(s.as_bytes()))
            }))
        || (spec.group == "scripting" && crate::script::declares_write(shared, spec, argv))
}

/// The refusal of a client's command while the data cannot be persisted:
/// writes, PING, and an EXEC whose transaction holds a write
/// (`queued_writes`, asked only then), as Redis refuses them.
#[inline(always)]
pub fn refusal_for(
    shared: &Shared,
    spec: &CommandSpec,
    argv: &[&[u8]],
    queued_writes: impl FnOnce() -> bool,
) -> Option<Reply> {
    if all_well(shared) {
        return None;
    }
    refusal_slow(shared, spec, argv, queued_writes)
}

/// [`refusal_for`] once something failed.
#[cold]
#[inline(never)]
fn refusal_slow(
    shared: &Shared,
    spec: &CommandSpec,
    argv: &[&[u8]],
    queued_writes: impl FnOnce() -> bool,
) -> Option<Reply> {
    let e = disk_error(shared)?;
    let applies = spec.name == "ping"
        || writes(shared, spec, argv)
        || (spec.name == "exec" && queued_writes());
    applies.then(|| Reply::Error(refusal(&e).into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_texts_are_strerror() {
        assert_eq!(errno_text(28), "No space left on device");
        assert_eq!(
            refusal(&DiskError::Aof(errno_text(5))),
            "MISCONF Errors writing to the AOF file: Input/output error"
        );
        assert!(
            refusal(&DiskError::Snapshot).contains("(stop-writes-on-bgsave-error option). Please")
        );
    }
}
