//! The append-only file: commands are encoded as they execute (under the
//! store lock, so in execution order), written at the end of each batch,
//! and fsynced per `appendfsync`. Rewrites run in a background thread from
//! a copy of the store while new commands also go to a rewrite buffer.

use bytes::Bytes;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::encode_command;

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

/// State of the append-only file.
pub struct Aof {
    /// Path of the file.
    pub path: PathBuf,
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
    /// Commands logged while a rewrite runs, and the database they left selected.
    rewrite_buf: Option<(Vec<u8>, usize)>,
    /// Current file size.
    pub size: u64,
    /// Size after the last rewrite (for auto-aof-rewrite-percentage).
    pub base_size: u64,
}

impl Aof {
    /// Opens (creating) the file for appending.
    pub fn open(path: PathBuf, fsync: Fsync) -> std::io::Result<Aof> {
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        let size = file.metadata()?.len();
        Ok(Aof {
            path,
            file,
            pending: Vec::new(),
            held: None,
            db: usize::MAX,
            fsync,
            unsynced: false,
            rewrite_buf: None,
            size,
            base_size: size,
        })
    }

    /// Logs one command executed in database `db`.
    pub fn log<A: AsRef<[u8]>>(&mut self, db: usize, argv: &[A]) {
        if db != self.db {
            encode_command(
                &[Bytes::from_static(b"SELECT"), Bytes::from(db.to_string())],
                &mut self.pending,
            );
            self.db = db;
        }
        encode_command(argv, &mut self.pending);
        if let Some((buf, bdb)) = self.rewrite_buf.as_mut() {
            if *bdb != db {
                encode_command(
                    &[Bytes::from_static(b"SELECT"), Bytes::from(db.to_string())],
                    buf,
                );
                *bdb = db;
            }
            encode_command(argv, buf);
        }
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

    /// Drops an open block (a script the server exits in the middle of).
    pub fn discard_block(&mut self) {
        if let Some(at) = self.held.take() {
            self.pending.truncate(at);
        }
    }

    /// Bytes waiting to be written, with the copy kept for a rewrite in
    /// progress (MEMORY STATS `aof.buffer`).
    pub fn buffered(&self) -> usize {
        self.pending.capacity() + self.rewrite_buf.as_ref().map_or(0, |(b, _)| b.capacity())
    }

    /// Whether anything waits to be written.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Writes pending commands; fsyncs when the policy is `always`.
    pub fn flush(&mut self) -> std::io::Result<()> {
        let ready = self.held.unwrap_or(self.pending.len());
        if ready == 0 {
            return Ok(());
        }
        self.file.write_all(&self.pending[..ready])?;
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
        Ok(())
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

    /// Starts buffering commands for a rewrite in progress.
    pub fn begin_rewrite(&mut self) {
        self.rewrite_buf = Some((Vec::new(), usize::MAX));
    }

    /// Abandons a rewrite.
    pub fn abort_rewrite(&mut self) {
        self.rewrite_buf = None;
    }

    /// Completes a rewrite: appends what was logged meanwhile to the new
    /// file `tmp`, fsyncs it, and renames it over the live file.
    pub fn finish_rewrite(&mut self, tmp: &Path) -> std::io::Result<()> {
        self.flush()?;
        let (buf, _) = self.rewrite_buf.take().unwrap_or_default();
        let mut f = OpenOptions::new().append(true).open(tmp)?;
        f.write_all(&buf)?;
        f.sync_all()?;
        std::fs::rename(tmp, &self.path)?;
        self.file = OpenOptions::new().append(true).open(&self.path)?;
        self.size = self.file.metadata()?.len();
        self.base_size = self.size;
        // The rewrite buffer left its own database selected; force a SELECT.
        self.db = usize::MAX;
        Ok(())
    }
}

/// The append-only file when enabled, with a lock-free "is it on" answer
/// so that commands pay no lock when the AOF is off.
pub struct AofSlot {
    inner: parking_lot::Mutex<Option<Aof>>,
    on: std::sync::atomic::AtomicBool,
}

/// Locked access to an [`AofSlot`]; the "on" answer follows on drop.
pub struct AofGuard<'a> {
    guard: parking_lot::MutexGuard<'a, Option<Aof>>,
    on: &'a std::sync::atomic::AtomicBool,
}

impl AofSlot {
    /// A slot holding `aof`.
    pub fn new(aof: Option<Aof>) -> AofSlot {
        AofSlot {
            on: std::sync::atomic::AtomicBool::new(aof.is_some()),
            inner: parking_lot::Mutex::new(aof),
        }
    }

    /// Locks the slot.
    pub fn lock(&self) -> AofGuard<'_> {
        AofGuard {
            guard: self.inner.lock(),
            on: &self.on,
        }
    }

    /// Whether an AOF is open (without locking).
    pub fn is_on(&self) -> bool {
        self.on.load(std::sync::atomic::Ordering::Acquire)
    }
}

impl std::ops::Deref for AofGuard<'_> {
    type Target = Option<Aof>;
    fn deref(&self) -> &Option<Aof> {
        &self.guard
    }
}

impl std::ops::DerefMut for AofGuard<'_> {
    fn deref_mut(&mut self) -> &mut Option<Aof> {
        &mut self.guard
    }
}

impl Drop for AofGuard<'_> {
    fn drop(&mut self) {
        self.on
            .store(self.guard.is_some(), std::sync::atomic::Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everysec_hands_out_a_sync_handle_once_per_write() {
        let dir = std::env::temp_dir().join(format!("ebb-aof-sync-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("appendonly.aof");
        let mut aof = Aof::open(path.clone(), Fsync::EverySec).expect("open");
        assert!(aof.sync_handle().expect("nothing written").is_none());
        aof.log(
            0,
            &[
                Bytes::from_static(b"SET"),
                Bytes::from_static(b"k"),
                Bytes::from_static(b"v"),
            ],
        );
        aof.flush().expect("flush");
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
