//! The AOF directory, laid out as Redis 7.0's multi-part AOF: under
//! `dir/appenddirname`, a base file (the data as of the last rewrite: an
//! RDB file, `.base.rdb`, with `aof-use-rdb-preamble yes` as in Redis by
//! default, or RESP commands, `.base.aof`), incremental files (commands
//! logged since), and the manifest naming them (see
//! [`crate::persist::manifest`]).
//!
//! - At start with `appendonly yes`, the manifest's base and incremental
//!   files are replayed in order; a torn tail may be cut only from the
//!   last one. With nothing to load, an empty base is written; the log
//!   then appends to the last incremental file (or a new one). A file of
//!   the old single-file layout, `dir/appendfilename`, is moved into the
//!   directory and becomes its base.
//! - BGREWRITEAOF switches the log to a new incremental file, listed in the
//!   manifest at once, and forks a child writing the data as a new base.
//!   When it succeeds, the base and incremental files it covers become
//!   history in a manifest replaced atomically, and are deleted (unless
//!   `aof-disable-auto-gc`). When it fails, the new incremental file
//!   stays: the next load replays both.
//! - CONFIG SET appendonly yes logs to a temporary incremental file while
//!   the first rewrite runs; only when it has written the base do both
//!   enter the manifest. If it fails, the temporary file goes and another
//!   rewrite is scheduled.

use ebb_core::Store;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crate::persist::aof::{Aof, AofState, Fsync};
use crate::persist::manifest::{self, FileKind, Manifest};
use crate::persist::{self, LoadError};
use crate::server::{now_ms, Shared};

/// The error BGREWRITEAOF replies when no rewrite could start.
const CANT_REWRITE: &str =
    "ERR Can't execute an AOF background rewriting. Please check the server logs for more information.";

/// What a rewrite was started for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum RewriteKind {
    /// The AOF is on: the log moved to a new incremental file.
    Live,
    /// The AOF was just turned on: the log goes to the temporary file.
    Initial,
    /// The AOF is off: only a new base is written.
    Offline,
}

/// A rewrite in progress.
#[derive(Debug, Clone, Copy)]
struct Rewrite {
    kind: RewriteKind,
    /// [`AofState::epoch`] when it started.
    epoch: u64,
    /// Whether the base is written in the RDB format (`.base.rdb`).
    rdb: bool,
}

/// The settings a rewrite or a load reads, taken once.
struct Settings {
    dir: PathBuf,
    prefix: String,
    fsync: Fsync,
    timestamps: bool,
    keep_history: bool,
    truncate_ok: bool,
    /// `aof-use-rdb-preamble`: bases are RDB files.
    rdb_base: bool,
}

impl Shared {
    /// The AOF directory (`dir/appenddirname`).
    pub fn aof_dir(&self) -> PathBuf {
        self.data_dir().join(
            self.config
                .read()
                .get("appenddirname")
                .unwrap_or_else(|| "appendonlydir".into()),
        )
    }

    fn aof_settings(&self) -> Settings {
        let dir = self.aof_dir();
        let c = self.config.read();
        Settings {
            dir,
            prefix: c
                .get("appendfilename")
                .unwrap_or_else(|| "appendonly.aof".into()),
            fsync: Fsync::parse(&c.get("appendfsync").unwrap_or_default()),
            timestamps: c.get_bool("aof-timestamp-enabled"),
            keep_history: c.get_bool("aof-disable-auto-gc"),
            truncate_ok: c.get_bool("aof-load-truncated"),
            rdb_base: c.get_bool("aof-use-rdb-preamble"),
        }
    }

    /// Where the rewrite child `pid` writes the new base (in `dir`, as
    /// Redis names it) before it is renamed into the AOF directory.
    pub(crate) fn rewrite_tmp_path(&self, pid: i32) -> PathBuf {
        self.data_dir()
            .join(format!("temp-rewriteaof-bg-{pid}.aof"))
    }

    /// BGREWRITEAOF: writes the data as a new base from a forked child
    /// (or, if fork fails, from a copy in a thread), the log going on
    /// meanwhile in a new incremental file.
    pub fn bgrewrite(self: &Arc<Self>, store: &Store) -> Result<(), &'static str> {
        if self.rewrite_running.swap(true, Ordering::SeqCst) {
            return Err("ERR Background append only file rewriting already in progress");
        }
        let set = self.aof_settings();
        let Some(job) = self.open_rewrite_log(&set) else {
            crate::figures::AOF_REWRITE_OK.store(false, Ordering::Relaxed);
            self.rewrite_running.store(false, Ordering::SeqCst);
            return Err(CANT_REWRITE);
        };
        crate::figures::AOF_REWRITES.fetch_add(1, Ordering::Relaxed);
        crate::figures::started(&crate::figures::AOF_STARTED);
        let delay = self.save_delay(store);
        let data_dir = self.data_dir();
        let ts = set.timestamps;
        let rdb = job.rdb;
        // The base holds what is live at the fork, whenever the child
        // writes it: what the log records from now on applies to that.
        let at = now_ms();
        self.write_in_background(
            store,
            |s| &s.rewrite_child,
            (
                "rewriting",
                "Background append only file rewriting started",
                "ebb-aof-rewrite",
            ),
            move |store| {
                std::thread::sleep(delay);
                // The writer's own pid: the child's, or this process's.
                let tmp = data_dir.join(format!("temp-rewriteaof-bg-{}.aof", std::process::id()));
                write_rewrite(&tmp, store, at, ts, rdb).map_err(|e| e.to_string())
            },
            move |me, written, pid| {
                let tmp = me.rewrite_tmp_path(pid);
                me.rewrite_done(job, &tmp, written.map_err(std::io::Error::other));
            },
        );
        Ok(())
    }

    /// Before a rewrite forks: moves the log to the file that takes what
    /// is logged while it runs (a new incremental file recorded in the
    /// manifest, or, for the first rewrite, the temporary one). None when
    /// that could not be done; the log is then unchanged.
    fn open_rewrite_log(&self, set: &Settings) -> Option<Rewrite> {
        if let Err(e) = fs::create_dir_all(&set.dir) {
            tracing::error!(
                "Can't open or create append-only dir {}: {}",
                set.dir.display(),
                io_text(&e)
            );
            return None;
        }
        let mut st = self.aof.lock();
        if let Err(e) = st.flush() {
            tracing::error!(error = %e, "flush before rewrite failed");
        }
        let opened = |name: &str| match Aof::open(&set.dir, name, set.fsync, true) {
            Ok(mut a) => {
                a.timestamps = set.timestamps;
                tracing::info!("Creating AOF incr file {name} on background rewrite");
                Some(a)
            }
            Err(e) => {
                tracing::error!("Can't open the append-only file {name}: {}", io_text(&e));
                None
            }
        };
        let kind = if !st.enabled {
            RewriteKind::Offline
        } else if st.waiting {
            st.log = Some(opened(&manifest::temp_incr_name(&set.prefix))?);
            RewriteKind::Initial
        } else {
            let mut m = st.manifest.clone();
            let next = opened(&m.new_incr(&set.prefix))?;
            if let Err(e) = manifest::persist(&set.dir, &set.prefix, &m) {
                tracing::error!("Can't write the AOF manifest: {}", io_text(&e));
                return None;
            }
            match st.log.as_mut() {
                Some(log) => log.switch_to(next),
                None => st.log = Some(next),
            }
            st.manifest = m;
            RewriteKind::Live
        };
        Some(Rewrite {
            kind,
            epoch: st.epoch,
            rdb: set.rdb_base,
        })
    }

    fn rewrite_done(&self, job: Rewrite, tmp: &Path, written: std::io::Result<()>) {
        let set = self.aof_settings();
        // Switch over with the store locked, so nothing is logged in between.
        let _store = self.store.lock();
        let mut st = self.aof.lock();
        let temp_incr = set.dir.join(manifest::temp_incr_name(&set.prefix));
        if st.epoch != job.epoch {
            // The AOF was turned off meanwhile (the child killed): nothing
            // to switch, and not counted as a failure.
            let _ = fs::remove_file(tmp);
            if job.kind == RewriteKind::Initial {
                let _ = fs::remove_file(&temp_incr);
            }
            tracing::warn!("Background AOF rewrite stopped: the AOF was turned off");
        } else {
            let result = written.and_then(|()| install_rewrite(&mut st, job, tmp, &set));
            crate::figures::rewrite_result(result.is_ok());
            match result {
                Ok(()) => tracing::info!("Background AOF rewrite finished successfully"),
                Err(e) => {
                    tracing::error!("Background AOF rewrite terminated with error: {e}");
                    let _ = fs::remove_file(tmp);
                    if job.kind == RewriteKind::Initial {
                        // What was logged meanwhile goes with the temporary
                        // file: the next rewrite, scheduled now, covers it.
                        st.log = None;
                        tracing::info!(
                            "Removing the temp incr aof file {} in the background",
                            manifest::temp_incr_name(&set.prefix)
                        );
                        let _ = fs::remove_file(&temp_incr);
                        self.rewrite_scheduled.store(true, Ordering::SeqCst);
                    }
                }
            }
        }
        crate::figures::finished(&crate::figures::AOF_STARTED, &crate::figures::AOF_LAST_SECS);
        self.rewrite_running.store(false, Ordering::SeqCst);
    }

    /// Turns the AOF on at run time (CONFIG SET appendonly yes): nothing
    /// is logged until a rewrite starts, which writes the first base.
    pub fn enable_aof(self: &Arc<Self>, store: &Store) -> Result<(), String> {
        {
            let mut st = self.aof.lock();
            st.enabled = true;
            st.waiting = true;
            st.log = None;
        }
        self.aof_write_ok.store(true, Ordering::Relaxed);
        self.aof_fsync_ok.store(true, Ordering::Relaxed);
        let busy = if self.bgsave_running.load(Ordering::SeqCst) {
            Some("there is already another background operation")
        } else if crate::exec::in_exec() {
            Some("during a transaction")
        } else if self.rewrite_running.load(Ordering::SeqCst) {
            Some("while an earlier AOF rewrite was still ending")
        } else {
            None
        };
        if let Some(why) = busy {
            self.rewrite_scheduled.store(true, Ordering::SeqCst);
            tracing::info!(
                "AOF was enabled {why}. An AOF background was scheduled to start when possible."
            );
            return Ok(());
        }
        if self.bgrewrite(store).is_err() {
            let mut st = self.aof.lock();
            st.enabled = false;
            st.waiting = false;
            tracing::warn!("ebb needs to enable the AOF but can't trigger a background AOF rewrite operation. Check the above logs for more info about the error.");
            return Err("Unable to turn on AOF. Check server logs.".into());
        }
        Ok(())
    }

    /// Turns the AOF off (CONFIG SET appendonly no): a running rewrite is
    /// stopped, the log written and synced, and the files left as they are.
    pub fn disable_aof(&self) {
        self.kill_rewrite_child();
        self.rewrite_scheduled.store(false, Ordering::SeqCst);
        let mut st = self.aof.lock();
        let _ = st.flush();
        if let Some(a) = st.log.as_mut() {
            let _ = a.sync();
        }
        st.log = None;
        st.enabled = false;
        st.waiting = false;
        st.epoch += 1;
    }

    /// `aof-disable-auto-gc no`: history files left by earlier rewrites go.
    pub fn collect_aof_history(&self) {
        let set = self.aof_settings();
        if set.keep_history {
            return;
        }
        let mut st = self.aof.lock();
        if let Err(e) = manifest::delete_history(&set.dir, &set.prefix, &mut st.manifest) {
            tracing::warn!("Can't write the AOF manifest: {}", io_text(&e));
        }
    }

    /// Whether a shutdown must wait: the AOF was turned on and its first
    /// base is still being written (without it, a restart would load
    /// nothing).
    pub fn writing_initial_aof(&self) -> bool {
        self.rewrite_running.load(Ordering::SeqCst) && {
            let st = self.aof.lock();
            st.enabled && st.waiting && st.log.is_some()
        }
    }

    /// DEBUG LOADAOF: the manifest read again from disk, history files
    /// deleted, and the data replaced by what the files hold.
    pub fn reload_aof(&self, store: &mut Store) -> Result<(), String> {
        let set = self.aof_settings();
        let m = match read_manifest(&set)? {
            Some(m) if !m.is_empty() => m,
            // Nothing to load: the data stays as it is.
            _ => {
                return Err(format!(
                    "The AOF directory {} lists no file to load",
                    set.dir.display()
                ))
            }
        };
        let m = {
            let mut st = self.aof.lock();
            st.manifest = m;
            if !set.keep_history {
                let _ = manifest::delete_history(&set.dir, &set.prefix, &mut st.manifest);
            }
            st.manifest.clone()
        };
        for db in store.dbs.iter_mut() {
            db.clear();
        }
        // The log is not held while the files load: every connection
        // takes it after its batch, and nothing can be logged meanwhile
        // (the keyspace is locked).
        let (total, base) = load_files(&set, &m, store)?;
        let mut st = self.aof.lock();
        st.current_size = total;
        st.base_size = base;
        // A torn tail cut off while loading shortened the file being
        // appended to.
        if let Some(a) = st.log.as_mut() {
            a.refresh_size();
        }
        Ok(())
    }
}

/// Completes a successful rewrite: the new base (and, for the first
/// rewrite, the temporary incremental file) take their names, the files
/// the base covers become history, and the manifest is replaced.
fn install_rewrite(
    st: &mut AofState,
    job: Rewrite,
    tmp: &Path,
    set: &Settings,
) -> std::io::Result<()> {
    let mut m = st.manifest.clone();
    let base = m.new_base(&set.prefix, job.rdb);
    let base_path = set.dir.join(&base);
    if let Err(e) = fs::rename(tmp, &base_path) {
        tracing::error!(
            "Error trying to rename the temporary AOF base file {} into {base}: {}",
            tmp.display(),
            io_text(&e)
        );
        return Err(e);
    }
    let temp_incr = set.dir.join(manifest::temp_incr_name(&set.prefix));
    let mut incr = None;
    if job.kind == RewriteKind::Initial {
        let name = m.new_incr(&set.prefix);
        if let Err(e) = fs::rename(&temp_incr, set.dir.join(&name)) {
            tracing::error!("Error trying to rename the temporary AOF incr file into {name}: {e}");
            let _ = fs::remove_file(&base_path);
            return Err(e);
        }
        incr = Some(name);
    }
    m.retire_incrs(st.log.is_some());
    if let Err(e) = manifest::persist(&set.dir, &set.prefix, &m) {
        let _ = fs::remove_file(&base_path);
        if let Some(name) = &incr {
            let _ = fs::rename(set.dir.join(name), &temp_incr);
        }
        return Err(e);
    }
    st.manifest = m;
    if let Some(name) = incr {
        if let Some(log) = st.log.as_mut() {
            log.name = name;
        }
        st.waiting = false;
    }
    if st.enabled {
        let base_len = fs::metadata(&base_path).map(|m| m.len()).unwrap_or(0);
        st.current_size = base_len + st.log.as_ref().map_or(0, |l| l.size);
        st.base_size = st.current_size;
    }
    if !set.keep_history {
        if let Err(e) = manifest::delete_history(&set.dir, &set.prefix, &mut st.manifest) {
            tracing::warn!("Can't write the AOF manifest: {}", io_text(&e));
        }
    }
    Ok(())
}

/// Writes the whole data set, as a base file, to `tmp`, and fsyncs it:
/// an RDB file when `rdb`, else RESP commands (after a `#TS:` annotation
/// when `timestamps`), holding what is live at `now`.
fn write_rewrite(
    tmp: &Path,
    store: &Store,
    now: u64,
    timestamps: bool,
    rdb: bool,
) -> std::io::Result<()> {
    let data = if rdb {
        ebb_core::rdb::aof_base(store, now)
    } else {
        let mut data = Vec::new();
        if timestamps {
            data.extend_from_slice(format!("#TS:{}\r\n", now / 1000).as_bytes());
        }
        persist::dump_store(store, now, &mut data);
        data
    };
    fs::write(tmp, &data)?;
    fs::File::open(tmp)?.sync_all()
}

/// An I/O error as Redis prints `strerror`: without Rust's "(os error N)".
fn io_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The bytes the load at start will read, as far as the files on disk
/// tell before it begins (INFO's `loading_total_bytes` from the first
/// moment, as Redis sizes its file before it serves anyone): the files
/// the AOF manifest lists, or the snapshot.
pub fn bytes_to_load(shared: &Shared, aof_on: bool) -> u64 {
    let size = |p: &std::path::Path| fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    if !aof_on {
        return size(&shared.snapshot_path());
    }
    let set = shared.aof_settings();
    match manifest::read(&set.dir, &set.prefix) {
        Ok(Some(m)) => m.live().map(|f| size(&set.dir.join(&f.name))).sum(),
        _ => 0,
    }
}

/// Reads the manifest (None when there is none); a bad one is fatal, its
/// problem logged as Redis does.
fn read_manifest(set: &Settings) -> Result<Option<Manifest>, String> {
    manifest::read(&set.dir, &set.prefix).map_err(|e| {
        tracing::error!("*** FATAL AOF MANIFEST FILE ERROR ***");
        if let Some((n, text)) = &e.line {
            tracing::error!("Reading the manifest file, at line {n}");
            tracing::error!(">>> '{text}'");
        }
        e.reason.to_string()
    })
}

/// Replays the manifest's base and incremental files into `store`, in
/// order. Returns the bytes they hold and the base's size; Err is the line
/// to log before exiting (anything else was logged already).
fn load_files(set: &Settings, m: &Manifest, store: &mut Store) -> Result<(u64, u64), String> {
    let mut total = 0;
    for f in m.live() {
        match fs::metadata(set.dir.join(&f.name)) {
            Ok(md) => total += md.len(),
            Err(e) => {
                return Err(format!(
                    "Unable to obtain the AOF file {} length. stat: {}",
                    f.name,
                    io_text(&e)
                ))
            }
        }
    }
    if total == 0 {
        return Ok((0, 0));
    }
    crate::loading::set_total(total);
    let files = m.live().count();
    let now = now_ms();
    let mut base_size = 0;
    for (i, f) in m.live().enumerate() {
        let path = set.dir.join(&f.name);
        let data = fs::read(&path).map_err(|e| {
            format!(
                "Fatal error: can't open the append log file {} for reading: {}",
                f.name,
                io_text(&e)
            )
        })?;
        if f.kind == FileKind::Base {
            base_size = data.len() as u64;
        }
        if data.is_empty() {
            continue;
        }
        let started = Instant::now();
        let r = persist::replay_log_file(store, &data, now).map_err(|e| match e {
            // On one line (what was read may hold CR or LF), with Redis's
            // advice.
            LoadError::Corrupt(off, why) => format!(
                "Bad file format reading the append only file {} at offset {off}: {}. \
                 Make a backup of the AOF directory, then run redis-check-aof --fix {}",
                f.name,
                why.escape_debug(),
                set.dir.join(manifest::manifest_name(&set.prefix)).display()
            ),
            LoadError::UnknownCommand(cmd) => format!(
                "Unknown command '{cmd}' reading the append only file {}",
                f.name
            ),
        })?;
        if r.truncated {
            if !set.truncate_ok {
                return Err(format!(
                    "Unexpected end of file reading the append only file {} at offset {}: set aof-load-truncated yes to load it without its torn tail",
                    f.name, r.valid_len
                ));
            }
            if i + 1 != files {
                return Err("Fatal error: the truncated file is not the last file".into());
            }
            tracing::warn!(
                "!!! Warning: short read while loading the AOF file {}!!!",
                f.name
            );
            tracing::warn!(
                "!!! Truncating the AOF {} at offset {} !!!",
                f.name,
                r.valid_len
            );
            let cut = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .and_then(|h| {
                    h.set_len(r.valid_len as u64)?;
                    h.sync_all()
                });
            if let Err(e) = cut {
                return Err(format!(
                    "Error truncating the AOF file {}: {}",
                    f.name,
                    io_text(&e)
                ));
            }
            total -= (data.len() - r.valid_len) as u64;
            tracing::warn!(
                "AOF {} loaded anyway because aof-load-truncated is enabled",
                f.name
            );
        }
        let what = if f.kind == FileKind::Base {
            "base"
        } else {
            "incr"
        };
        tracing::info!(
            "DB loaded from {what} file {}: {:.3} seconds",
            f.name,
            started.elapsed().as_secs_f64()
        );
    }
    Ok((total, base_size))
}

/// At start: reads the manifest (whether the AOF is on or not, as Redis
/// does), and with the AOF on, upgrades an old single file, loads the
/// files, and opens the log. Err is the fatal error to log.
pub fn load_at_start(shared: &Arc<Shared>, store: &mut Store, aof_on: bool) -> Result<(), String> {
    let set = shared.aof_settings();
    let mut m = read_manifest(&set)?.unwrap_or_default();
    if !aof_on {
        if !set.keep_history {
            let _ = manifest::delete_history(&set.dir, &set.prefix, &mut m);
        }
        shared.aof.lock().manifest = m;
        return Ok(());
    }
    upgrade_old_file(shared, &set, &mut m)?;
    let started = Instant::now();
    let (_, base_size) = load_files(&set, &m, store)?;
    if !m.is_empty() {
        tracing::info!(
            "DB loaded from append only file: {:.3} seconds",
            started.elapsed().as_secs_f64()
        );
    }
    if let Err(e) = fs::create_dir_all(&set.dir) {
        return Err(format!(
            "Can't open or create append-only dir {}: {}",
            set.dir.display(),
            io_text(&e)
        ));
    }
    let fresh = m.is_empty();
    if fresh {
        // Nothing loaded: the (empty) data set becomes the first base.
        let name = m.new_base(&set.prefix, set.rdb_base);
        let tmp = shared.rewrite_tmp_path(std::process::id() as i32);
        write_rewrite(&tmp, store, now_ms(), set.timestamps, set.rdb_base)
            .and_then(|()| fs::rename(&tmp, set.dir.join(&name)))
            .map_err(|e| format!("Can't write the AOF base file {name}: {}", io_text(&e)))?;
        tracing::info!("Creating AOF base file {name} on server start");
    }
    let had_incr = !m.incrs.is_empty();
    let name = m.last_incr_or_new(&set.prefix);
    let mut log = Aof::open(&set.dir, &name, set.fsync, false)
        .map_err(|e| format!("Can't open the append-only file {name}: {}", io_text(&e)))?;
    log.timestamps = set.timestamps;
    manifest::persist(&set.dir, &set.prefix, &m)
        .map_err(|e| format!("Can't write the AOF manifest: {}", io_text(&e)))?;
    if had_incr {
        tracing::info!("Opening AOF incr file {name} on server start");
    } else {
        tracing::info!("Creating AOF incr file {name} on server start");
    }
    if !set.keep_history {
        let _ = manifest::delete_history(&set.dir, &set.prefix, &mut m);
    }
    // As in Redis, a base written at start is not counted in the size.
    let current: u64 = m
        .live()
        .filter(|f| !(fresh && f.kind == FileKind::Base))
        .filter_map(|f| fs::metadata(set.dir.join(&f.name)).ok())
        .map(|md| md.len())
        .sum();
    let mut st = shared.aof.lock();
    st.manifest = m;
    st.log = Some(log);
    st.enabled = true;
    st.waiting = false;
    st.current_size = current;
    st.base_size = base_size;
    Ok(())
}

/// Moves an AOF of the single-file layout (`dir/appendfilename`) into the
/// directory as its base, as Redis 7.0 does when it finds one and the
/// directory does not already hold the data. Done in an order that a
/// crash at any point leaves something the next start can finish.
fn upgrade_old_file(shared: &Shared, set: &Settings, m: &mut Manifest) -> Result<(), String> {
    let old = shared.data_dir().join(&set.prefix);
    if !old.is_file() {
        return Ok(());
    }
    let interrupted = m.incrs.is_empty()
        && m.base.as_ref().is_some_and(|b| b.name == set.prefix)
        && !set.dir.join(&set.prefix).exists();
    if set.dir.is_dir() && !m.is_empty() && !interrupted {
        return Ok(());
    }
    fs::create_dir_all(&set.dir).map_err(|e| {
        format!(
            "Can't open or create append-only dir {}: {}",
            set.dir.display(),
            io_text(&e)
        )
    })?;
    m.base = Some(manifest::AofFile {
        name: set.prefix.clone(),
        seq: 1,
        kind: FileKind::Base,
    });
    m.base_seq = 1;
    manifest::persist(&set.dir, &set.prefix, m)
        .map_err(|e| format!("Can't write the AOF manifest: {}", io_text(&e)))?;
    fs::rename(&old, set.dir.join(&set.prefix)).map_err(|e| {
        format!(
            "Error trying to move the old AOF file {} into dir {}: {}",
            set.prefix,
            set.dir.display(),
            io_text(&e)
        )
    })?;
    tracing::info!(
        "Successfully migrated an old-style AOF file ({}) into the AOF directory ({}).",
        set.prefix,
        set.dir.display()
    );
    Ok(())
}

/// Whether automatic (and scheduled) rewrites must wait: after three
/// failures in a row, the next try waits 1 minute, then 2, 4, ... up to an
/// hour, as in Redis. BGREWRITEAOF itself is never held back.
pub fn rewrite_limited() -> bool {
    use parking_lot::Mutex;
    // (minutes of the current delay, Unix time the next try may start)
    static LIMIT: Mutex<(u64, u64)> = Mutex::new((0, 0));
    let mut limit = LIMIT.lock();
    if crate::figures::AOF_REWRITE_FAILURES.load(Ordering::Relaxed) < 3 {
        *limit = (0, 0);
        return false;
    }
    let now = now_ms() / 1000;
    if limit.1 != 0 {
        if now < limit.1 {
            return true;
        }
        limit.1 = 0;
        return false;
    }
    limit.0 = if limit.0 == 0 {
        1
    } else {
        (limit.0 * 2).min(60)
    };
    limit.1 = now + limit.0 * 60;
    tracing::warn!(
        "Background AOF rewrite has repeatedly failed and triggered the limit, will retry in {} minutes",
        limit.0
    );
    true
}
