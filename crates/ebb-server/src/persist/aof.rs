//! The append-only log: commands are encoded as they execute (under the
//! store lock, so in execution order), written at the end of each batch to
//! the current incremental file of the AOF directory, and fsynced per
//! `appendfsync`. A rewrite switches the log to a new incremental file, so
//! what is logged while it runs needs no buffer of its own.

use bytes::Bytes;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use super::encode_command;
use super::manifest::Manifest;

/// `appendfsync`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fsync {
    /// fsync after every batch, before replies are sent.
    Always,
    /// fsync once a second from a background task.
    EverySec,
    /// leave it to the OS.
    No,
}

impl Fsync {
    /// From the config value.
    pub fn parse(s: &str) -> Fsync {
        match s {
            "always" => Fsync::Always,
            "no" => Fsync::No,
            _ => Fsync::EverySec,
        }
    }
}

/// The incremental file commands are appended to.
pub struct Aof {
    /// Its name inside the AOF directory.
    pub name: String,
    file: File,
    /// Encoded commands not yet written.
    pending: Vec<u8>,
    /// Where an open MULTI block (a running script's commands) starts in
    /// `pending`: it is written only once its EXEC is logged, so a crash or
    /// SHUTDOWN NOSAVE in the middle of a script leaves none of it.
    held: Option<usize>,
    db: usize,
    /// fsync policy.
    pub fsync: Fsync,
    /// Data written but not yet fsynced.
    pub unsynced: bool,
    /// Bytes in this file.
    pub size: u64,
    /// `aof-timestamp-enabled`: a `#TS:<unix time>` line ahead of the
    /// first command logged in each second.
    pub timestamps: bool,
    last_stamp: u64,
}

impl Aof {
    /// Opens the file `name` in `dir` for appending, creating it, or
    /// emptying it first when `fresh`. Every write goes to the end of the
    /// file (O_APPEND), also after a failed write was cut off again.
    pub fn open(dir: &Path, name: &str, fsync: Fsync, fresh: bool) -> std::io::Result<Aof> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(name))?;
        if fresh {
            file.set_len(0)?;
        }
        let size = file.metadata()?.len();
        Ok(Aof {
            name: name.to_string(),
            file,
            pending: Vec::new(),
            held: None,
            db: usize::MAX,
            fsync,
            unsynced: false,
            size,
            timestamps: false,
            last_stamp: 0,
        })
    }

    /// Takes the file's size from the file (after something else cut it).
    pub fn refresh_size(&mut self) {
        if let Ok(m) = self.file.metadata() {
            self.size = m.len();
        }
    }

    /// Logs one command executed in database `db`.
    pub fn log<A: AsRef<[u8]>>(&mut self, db: usize, argv: &[A]) {
        if self.timestamps {
            let now = crate::server::now_ms() / 1000;
            if now > self.last_stamp {
                self.last_stamp = now;
                self.pending
                    .extend_from_slice(format!("#TS:{now}\r\n").as_bytes());
            }
        }
        if db != self.db {
            encode_command(
                &[Bytes::from_static(b"SELECT"), Bytes::from(db.to_string())],
                &mut self.pending,
            );
            self.db = db;
        }
        encode_command(argv, &mut self.pending);
    }

    /// Opens a block (logs MULTI) whose commands are held back until
    /// [`Aof::close_block`].
    pub fn open_block(&mut self, db: usize) {
        self.held = Some(self.pending.len());
        self.log(db, &[Bytes::from_static(b"MULTI")]);
    }

    /// Logs EXEC and lets the block be written.
    pub fn close_block(&mut self, db: usize) {
        self.log(db, &[Bytes::from_static(b"EXEC")]);
        self.held = None;
    }

    /// Whether a block (a running script's) is open.
    pub fn in_block(&self) -> bool {
        self.held.is_some()
    }

    /// Drops an open block (a script the server exits in the middle of).
    pub fn discard_block(&mut self) {
        if let Some(at) = self.held.take() {
            self.pending.truncate(at);
        }
    }

    /// Bytes waiting to be written (MEMORY STATS `aof.buffer`).
    pub fn buffered(&self) -> usize {
        self.pending.capacity()
    }

    /// Bytes of commands waiting to be written (INFO's `aof_buffer_length`).
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Whether anything waits to be written.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Writes pending commands, fsyncing when the policy is `always`;
    /// returns the bytes written. A write that fails leaves the commands
    /// pending for the next try, and whatever part of them reached the
    /// file is cut off again (else the next try would write it twice); if
    /// it cannot be cut off, that part counts as written, as Redis does.
    pub fn flush(&mut self) -> std::io::Result<u64> {
        let ready = self.held.unwrap_or(self.pending.len());
        if ready == 0 {
            return Ok(0);
        }
        let mut written = 0;
        while written < ready {
            let e = match self.file.write(&self.pending[written..ready]) {
                Ok(0) => std::io::Error::from_raw_os_error(libc::ENOSPC),
                Ok(n) => {
                    written += n;
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => e,
            };
            if written > 0 {
                if let Err(t) = self.file.set_len(self.size) {
                    tracing::warn!(
                        "Could not remove short write from the append-only file. \
                         The AOF may be refused the next time the server starts. ftruncate: {t}"
                    );
                    self.size += written as u64;
                    self.pending.drain(..written);
                    self.held = self.held.map(|h| h - written);
                    self.unsynced = true;
                }
            }
            return Err(e);
        }
        self.size += ready as u64;
        self.pending.drain(..ready);
        if self.held.is_some() {
            self.held = Some(0);
        }
        if self.fsync == Fsync::Always {
            self.file.sync_data()?;
        } else {
            self.unsynced = true;
        }
        Ok(ready as u64)
    }

    /// fsyncs if anything was written since the last one (everysec).
    pub fn sync(&mut self) -> std::io::Result<()> {
        if self.unsynced {
            self.unsynced = false;
            self.file.sync_data()?;
        }
        Ok(())
    }

    /// For `everysec`: when something was written since the last fsync, a
    /// second handle on the file, to fsync it without holding the log, so
    /// writers (and, with one io-thread, every client) carry on meanwhile,
    /// as Redis fsyncs from a background thread.
    pub fn sync_handle(&mut self) -> std::io::Result<Option<File>> {
        if !self.unsynced {
            return Ok(None);
        }
        self.unsynced = false;
        self.file.try_clone().map(Some)
    }

    /// Goes on in another file (a rewrite started): what is pending and
    /// an open block follow; the next command selects its database anew.
    /// The old file is fsynced and closed on a thread of its own.
    pub fn switch_to(&mut self, next: Aof) {
        let old = std::mem::replace(&mut self.file, next.file);
        self.name = next.name;
        self.size = next.size;
        self.db = usize::MAX;
        self.unsynced = false;
        std::thread::spawn(move || {
            let _ = old.sync_data();
        });
    }
}

/// The AOF's state: the log being appended to, and the directory's files.
#[derive(Default)]
pub struct AofState {
    /// The incremental file commands go to; None when nothing is logged.
    pub log: Option<Aof>,
    /// The files of the AOF directory, kept whether the AOF is on or not
    /// (a rewrite with the AOF off still writes a base).
    pub manifest: Manifest,
    /// `appendonly` is on (logging, or waiting for a first rewrite).
    pub enabled: bool,
    /// Turned on at run time, before its first rewrite has written a base
    /// (Redis's "wait rewrite" state): `log`, while that rewrite runs, is a
    /// temporary incremental file the manifest does not list yet.
    pub waiting: bool,
    /// Bytes in the base and incremental files (`aof_current_size`).
    pub current_size: u64,
    /// `aof_current_size` after the last rewrite, or the base's size after
    /// a load (`aof_base_size`, what automatic rewrites measure growth by).
    pub base_size: u64,
    /// Counts the times the AOF was turned off, so that a rewrite started
    /// before switches no file after.
    pub epoch: u64,
}

impl AofState {
    /// Writes what the log holds; `current_size` follows.
    pub fn flush(&mut self) -> std::io::Result<()> {
        if let Some(a) = self.log.as_mut() {
            let n = a.flush()?;
            self.current_size += n;
        }
        Ok(())
    }
}

/// The AOF state, with a lock-free "is anything logged" answer so that
/// commands pay no lock when the AOF is off.
pub struct AofSlot {
    inner: parking_lot::Mutex<AofState>,
    on: std::sync::atomic::AtomicBool,
}

/// Locked access to an [`AofSlot`]; the "on" answer follows on drop.
pub struct AofGuard<'a> {
    guard: parking_lot::MutexGuard<'a, AofState>,
    on: &'a std::sync::atomic::AtomicBool,
}

impl AofSlot {
    /// A slot with the AOF off.
    pub fn new() -> AofSlot {
        AofSlot {
            on: std::sync::atomic::AtomicBool::new(false),
            inner: parking_lot::Mutex::new(AofState::default()),
        }
    }

    /// Locks the slot.
    pub fn lock(&self) -> AofGuard<'_> {
        AofGuard {
            guard: self.inner.lock(),
            on: &self.on,
        }
    }

    /// Whether commands are being logged (without locking).
    pub fn is_on(&self) -> bool {
        self.on.load(std::sync::atomic::Ordering::Acquire)
    }
}

impl std::ops::Deref for AofGuard<'_> {
    type Target = AofState;
    fn deref(&self) -> &AofState {
        &self.guard
    }
}

impl std::ops::DerefMut for AofGuard<'_> {
    fn deref_mut(&mut self) -> &mut AofState {
        &mut self.guard
    }
}

impl Drop for AofGuard<'_> {
    fn drop(&mut self) {
        self.on.store(
            self.guard.log.is_some(),
            std::sync::atomic::Ordering::Release,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everysec_hands_out_a_sync_handle_once_per_write() {
        let dir = std::env::temp_dir().join(format!("ebb-aof-sync-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("appendonly.aof.1.incr.aof");
        let mut aof =
            Aof::open(&dir, "appendonly.aof.1.incr.aof", Fsync::EverySec, true).expect("open");
        assert!(aof.sync_handle().expect("nothing written").is_none());
        aof.log(
            0,
            &[
                Bytes::from_static(b"SET"),
                Bytes::from_static(b"k"),
                Bytes::from_static(b"v"),
            ],
        );
        assert_eq!(aof.flush().expect("flush"), 50);
        let h = aof
            .sync_handle()
            .expect("dup")
            .expect("written since the last fsync");
        h.sync_data().expect("fsync through the second handle");
        assert!(aof.sync_handle().expect("synced").is_none());
        let text = std::fs::read(&path).expect("read back");
        assert!(text.ends_with(b"$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
