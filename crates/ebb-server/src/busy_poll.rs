//! A short wait on the event queue before a connection thread sleeps.
//!
//! When a connection thread has nothing left to run it sleeps in the
//! kernel until a socket is ready. The next request then has to wake it,
//! and waking a sleeping (on a virtual machine, halted) core costs the
//! sending client and delays the reply. `busy-poll-us` (microseconds,
//! default 20, 0 turns it off) is how long the thread first keeps
//! checking whether its event queue has something ready, yielding the
//! core to any other runnable thread between checks. A server with no
//! traffic waits only after its periodic tasks (a few dozen times a
//! second).
//!
//! The check asks the kernel whether the runtime's epoll instance has a
//! ready event (`poll` on the epoll descriptor, which consumes nothing),
//! so a request that arrives during the wait is served at once. The
//! descriptors are found once, as the epoll instances building the
//! runtime opened; if none is found the wait is skipped.
//!
//! The wait is bounded (at most 10 ms) because nothing but I/O ends it
//! early: a timer coming due (a blocking command's timeout, the periodic
//! tasks) or a task woken from another thread waits until it is over. With
//! more than one connection thread (`io-threads`), each spins on its own
//! before sleeping.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The wait in microseconds (`busy-poll-us`).
static WAIT_US: AtomicU64 = AtomicU64::new(0);

/// The runtime's epoll descriptors (at most a few).
static POLL_FDS: OnceLock<Vec<libc::c_int>> = OnceLock::new();

/// The epoll instances open now.
pub fn epoll_fds() -> Vec<libc::c_int> {
    let mut fds = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc/self/fd") {
        for entry in dir.flatten() {
            let is_epoll = std::fs::read_link(entry.path())
                .map(|target| target.as_os_str() == "anon_inode:[eventpoll]")
                .unwrap_or(false);
            let fd = entry.file_name().to_str().and_then(|n| n.parse().ok());
            if let (true, Some(fd)) = (is_epoll, fd) {
                fds.push(fd);
            }
        }
    }
    fds
}

/// Records the runtime's epoll instances: those open now that were not
/// in `before` (taken just before the runtime was built, so one
/// inherited from the parent process is never watched).
pub fn use_new_epoll_fds(before: &[libc::c_int]) {
    let mut fds = epoll_fds();
    fds.retain(|fd| !before.contains(fd));
    fds.truncate(4);
    let _ = POLL_FDS.set(fds);
}

/// Applies `busy-poll-us` (at start and on CONFIG SET).
pub fn configure(us: i64) {
    WAIT_US.store(us.max(0) as u64, Ordering::Relaxed);
}

/// The runtime's hook before a worker thread parks: check the event queue
/// until something is ready or the wait is over.
pub fn before_park() {
    let us = WAIT_US.load(Ordering::Relaxed);
    let fds = match POLL_FDS.get() {
        Some(fds) if us > 0 && !fds.is_empty() => fds,
        _ => return,
    };
    let mut set = [libc::pollfd {
        fd: -1,
        events: 0,
        revents: 0,
    }; 4];
    for (slot, &fd) in set.iter_mut().zip(fds) {
        slot.fd = fd;
        slot.events = libc::POLLIN;
    }
    let until = Instant::now() + Duration::from_micros(us);
    loop {
        // SAFETY: `set` is a valid array of `fds.len()` pollfd entries,
        // and a zero timeout never blocks.
        let ready = unsafe { libc::poll(set.as_mut_ptr(), fds.len() as libc::nfds_t, 0) };
        if ready != 0 || Instant::now() >= until {
            return;
        }
        // SAFETY: no arguments; lets another runnable thread have the core.
        unsafe {
            libc::sched_yield();
        }
    }
}
