//! How the server process starts as operators configure redis-server:
//! `daemonize` (detach into the background), `pidfile` (the process id,
//! removed at a clean exit) and `logfile` (where the log goes).

use std::fs::{File, OpenOptions};
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::config::Config;

/// Redis's pid file when `daemonize yes` names none.
const DEFAULT_PIDFILE: &str = "/var/run/redis.pid";

/// Where the log goes: standard output (Redis's `logfile ""`), a file, or
/// nowhere.
pub enum LogTarget {
    Stdout,
    File(File),
    Discard,
}

/// Opens `logfile` for appending (created if missing), as Redis checks it
/// when it reads its configuration.
pub fn log_target(cfg: &Config, daemonized: bool) -> Result<LogTarget, String> {
    let path = cfg.get("logfile").unwrap_or_default();
    if path.is_empty() {
        // Redis logs to standard output then, and to nowhere once
        // daemonized (its output goes to /dev/null).
        return Ok(if daemonized {
            LogTarget::Discard
        } else {
            LogTarget::Stdout
        });
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map(LogTarget::File)
        .map_err(|e| format!("Can't open the log file: {e}"))
}

/// Whether `daemonize yes` is set.
pub fn wants_daemon(cfg: &Config) -> bool {
    cfg.get("daemonize")
        .is_some_and(|v| v.eq_ignore_ascii_case("yes"))
}

/// Detaches into the background as redis-server does: the parent exits,
/// the child starts a new session, and standard input, output and error
/// go to /dev/null. Called before any thread starts.
pub fn daemonize() {
    // SAFETY: only the main thread exists yet, so the child is a whole
    // copy of the process; the calls take no Rust-side state.
    unsafe {
        match libc::fork() {
            -1 => {
                eprintln!("cannot fork into the background");
                std::process::exit(1);
            }
            0 => {}
            _ => libc::_exit(0),
        }
        libc::setsid();
        let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR, 0);
        if fd != -1 {
            libc::dup2(fd, libc::STDIN_FILENO);
            libc::dup2(fd, libc::STDOUT_FILENO);
            libc::dup2(fd, libc::STDERR_FILENO);
            if fd > libc::STDERR_FILENO {
                libc::close(fd);
            }
        }
    }
}

/// The pid file to write, if any: `pidfile` when set, Redis's default
/// when daemonized without one.
pub fn pidfile(cfg: &Config, daemonized: bool) -> Option<PathBuf> {
    let path = cfg.get("pidfile").unwrap_or_default();
    if !path.is_empty() {
        Some(PathBuf::from(path))
    } else if daemonized {
        Some(PathBuf::from(DEFAULT_PIDFILE))
    } else {
        None
    }
}

/// The pid file written at start, removed at exit.
static WRITTEN: OnceLock<PathBuf> = OnceLock::new();

/// Writes the process id, best effort (as Redis does: a pid file that
/// cannot be written is logged, not fatal).
pub fn write_pidfile(path: PathBuf) {
    match std::fs::write(&path, format!("{}\n", std::process::id())) {
        Ok(()) => {
            let _ = WRITTEN.set(path);
        }
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "could not write the pid file")
        }
    }
}

/// Removes the pid file written at start and the Unix socket's file, if
/// any (every way the server exits cleanly calls this).
pub fn remove_files() {
    stop_listening();
    if let Some(p) = WRITTEN.get() {
        let _ = std::fs::remove_file(p);
    }
    if let Some(p) = SOCKET.get() {
        let _ = std::fs::remove_file(p);
    }
}

/// The listening sockets' descriptors (TCP and Unix), shut at exit.
static LISTENING: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// Records a listening socket for [`stop_listening`].
pub fn note_listener(fd: i32) {
    if let Ok(mut l) = LISTENING.lock() {
        l.push(fd);
    }
}

/// Stops listening, as Redis closes its listening sockets before it
/// exits: a client connecting while the process ends is refused rather
/// than accepted by the kernel and then dropped. (A listening socket
/// that is shut down stops listening; the descriptors themselves close
/// with the process.)
pub fn stop_listening() {
    STOPPED.store(true, std::sync::atomic::Ordering::SeqCst);
    if let Ok(l) = LISTENING.lock() {
        for &fd in l.iter() {
            // SAFETY: shutdown on a descriptor only changes that socket's
            // state; one replaced since (a rebind) is at worst a socket
            // of this exiting process or not a socket (ENOTSOCK).
            unsafe {
                libc::shutdown(fd, libc::SHUT_RDWR);
            }
        }
    }
}

/// In a child just forked (a background save or rewrite): closes its
/// copies of the listening sockets, as Redis's children do, so that a
/// child that outlives a killed server does not hold the port, and a
/// restart binds it at once. Only descriptors that still are listening
/// sockets are closed (one noted and replaced since may be anything).
pub fn close_listeners_in_child() {
    // The child has one thread: a lock another thread held at the fork
    // stays held, so it is only tried.
    let Ok(l) = LISTENING.try_lock() else {
        return;
    };
    for &fd in l.iter() {
        let mut on: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: reads one option of a descriptor into a local of its size.
        let r = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_ACCEPTCONN,
                (&mut on as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        if r == 0 && on != 0 {
            // SAFETY: closes this process's copy only; the parent's socket
            // stays open and listening.
            unsafe {
                libc::close(fd);
            }
        }
    }
}

/// Set once the listening sockets were shut: their accept loops end
/// quietly instead of logging the errors that follow.
static STOPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the process stopped listening (it is exiting).
pub fn listening_stopped() -> bool {
    STOPPED.load(std::sync::atomic::Ordering::SeqCst)
}

/// The Unix socket's file, removed at a clean exit.
static SOCKET: OnceLock<PathBuf> = OnceLock::new();

/// Records the Unix socket's file for [`remove_files`].
pub fn note_socket_file(path: &str) {
    let _ = SOCKET.set(PathBuf::from(path));
}

/// Logs a panic as Redis logs a crash: a bug report in the server's log
/// (the log file when one is set, where the default report on standard
/// error would be lost), with the message, where it happened and a
/// backtrace. The panic then goes on as before: a connection's ends that
/// connection, and the server keeps serving the others.
pub fn install_panic_report() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        let place = info
            .location()
            .map_or_else(|| "unknown place".into(), |l| l.to_string());
        let thread = std::thread::current();
        let backtrace = std::backtrace::Backtrace::force_capture();
        tracing::error!(
            "{}",
            bug_report(
                &message,
                &place,
                thread.name().unwrap_or("unnamed"),
                &backtrace.to_string()
            )
        );
        default(info);
    }));
}

/// The text of a bug report.
fn bug_report(message: &str, place: &str, thread: &str, backtrace: &str) -> String {
    format!(
        "\n\n=== EBB BUG REPORT START: Cut & paste starting from here ===\n\
         ebb-server {} panicked: {message}\n\
         at {place}, thread '{thread}'\n\n\
         ------ STACK TRACE ------\n{backtrace}\n\
         === EBB BUG REPORT END. Make sure to include from START to END. ===\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The file a second SIGINT removes before exiting (see
/// [`InsistOnSigint`]).
static INSIST_REMOVES: std::sync::OnceLock<std::ffi::CString> = std::sync::OnceLock::new();

/// While a signalled shutdown saves, a second SIGINT exits at once (exit
/// code 1) and removes the unfinished snapshot, as Redis does when the
/// user insists. The runtime's threads may all be waiting for the
/// keyspace the save holds, so this is a plain signal handler doing only
/// what a handler may (unlink, write, _exit). Dropping it puts the
/// previous handler back (the shutdown failed and the server goes on).
pub struct InsistOnSigint {
    previous: libc::sigaction,
}

extern "C" fn insist(_sig: libc::c_int) {
    const MSG: &[u8] = b"You insist... exiting now.\n";
    // SAFETY: write, unlink and _exit are async-signal-safe; the path was
    // set before the handler was installed and is never changed.
    unsafe {
        libc::write(1, MSG.as_ptr().cast(), MSG.len());
        if let Some(p) = INSIST_REMOVES.get() {
            libc::unlink(p.as_ptr());
        }
        libc::_exit(1);
    }
}

impl InsistOnSigint {
    /// Installs the handler; `temp` is the file to remove.
    pub fn arm(temp: &std::path::Path) -> Option<InsistOnSigint> {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(temp.as_os_str().as_bytes()).ok()?;
        let _ = INSIST_REMOVES.set(path);
        // SAFETY: installs a handler for SIGINT (the handler above) and
        // keeps the previous one to restore.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = insist as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGINT, &action, &mut previous) != 0 {
                return None;
            }
            Some(InsistOnSigint { previous })
        }
    }
}

impl Drop for InsistOnSigint {
    fn drop(&mut self) {
        // SAFETY: restores the handler saved by `arm`.
        unsafe {
            libc::sigaction(libc::SIGINT, &self.previous, std::ptr::null_mut());
        }
    }
}

/// Descriptors kept beyond the clients' (Redis's `CONFIG_MIN_RESERVED_FDS`):
/// listening sockets, the log, the AOF, snapshots.
pub const RESERVED_FDS: u64 = 32;

/// What [`raise_open_files`] found and did.
pub struct FilesLimit {
    /// The number of clients the open-files limit now allows (the one
    /// asked for when it fits).
    pub clients: u64,
    /// The soft limit before.
    pub old: u64,
    /// The soft limit now.
    pub now: u64,
    /// Why it could not be raised to what `maxclients` needs.
    pub error: Option<std::io::Error>,
}

/// Raises the open-files limit so that `maxclients` connections and
/// [`RESERVED_FDS`] more fit, as Redis does at start and on CONFIG SET
/// maxclients: both limits when the process may (root), else the soft one
/// up to the hard one.
pub fn raise_open_files(maxclients: u64) -> FilesLimit {
    let want = maxclients.saturating_add(RESERVED_FDS);
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return FilesLimit {
            clients: 1024 - RESERVED_FDS,
            old: 1024,
            now: 1024,
            error: Some(std::io::Error::last_os_error()),
        };
    }
    // `rlim_t` is u64 on the 64-bit targets ebb builds for.
    #[allow(clippy::useless_conversion)]
    let (old, hard) = (u64::from(lim.rlim_cur), u64::from(lim.rlim_max));
    let set = |cur: u64, max: u64| {
        let l = libc::rlimit {
            rlim_cur: libc::rlim_t::try_from(cur).unwrap_or(libc::rlim_t::MAX),
            rlim_max: libc::rlim_t::try_from(max).unwrap_or(libc::rlim_t::MAX),
        };
        // SAFETY: setrlimit reads the struct; a refusal leaves the limits.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &l) == 0 }
    };
    if old >= want {
        return FilesLimit {
            clients: maxclients,
            old,
            now: old,
            error: None,
        };
    }
    let mut error = None;
    let now = if set(want, want.max(hard)) {
        want
    } else {
        error = Some(std::io::Error::last_os_error());
        let cap = hard.min(want);
        if cap > old && set(cap, hard) {
            cap
        } else {
            old
        }
    };
    FilesLimit {
        clients: if now >= want {
            maxclients
        } else {
            now.saturating_sub(RESERVED_FDS)
        },
        old,
        now,
        error,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_bug_report_names_the_panic_and_where() {
        let r = super::bug_report("index out of bounds", "src/x.rs:1:2", "worker", "0: main");
        assert!(r.contains("=== EBB BUG REPORT START"));
        assert!(r.contains("panicked: index out of bounds\nat src/x.rs:1:2, thread 'worker'"));
        assert!(r.contains("------ STACK TRACE ------\n0: main"));
        assert!(r
            .trim_end()
            .ends_with("=== EBB BUG REPORT END. Make sure to include from START to END. ==="));
    }
}
