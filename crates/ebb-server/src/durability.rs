//! Durability wiring: logging executed commands to the AOF, flushing per
//! batch, SAVE/BGSAVE, save rules and automatic rewrites, and loading at
//! start (the AOF directory itself, and BGREWRITEAOF, are in `aof_dir`).

use ebb_core::{CommandSpec, Effects, Store};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::persist::aof::Fsync;
use crate::persist::snapshot;
use crate::server::{now_ms, Shared};

impl Shared {
    /// Logs what a command changed, in execution order: expiry deletions it
    /// caused first, then the command itself (or its rewritten form). More
    /// than one record is framed by MULTI and EXEC, as Redis frames them
    /// (unless a transaction or a script already frames them), so a torn
    /// tail cannot replay half of one command.
    pub fn log_command(&self, db: usize, spec: &CommandSpec, argv: &[&[u8]], fx: &mut Effects) {
        if !self.aof.is_on() {
            fx.propagate.clear();
            return;
        }
        let mut st = self.aof.lock();
        let Some(aof) = st.log.as_mut() else {
            fx.propagate.clear();
            return;
        };
        let rewrite = fx.rewrite.take();
        let own = match &rewrite {
            _ if !spec.is_write() => 0,
            Some(cmds) => cmds.len(),
            None => usize::from(fx.dirty > fx.expired_dirty),
        };
        let framed = fx.propagate.len() + own > 1
            && fx.propagate.iter().all(|(d, _)| *d == db)
            && !aof.in_block()
            && !crate::exec::in_exec();
        if framed {
            aof.log(db, &[b"MULTI"]);
        }
        for (d, cmd) in fx.propagate.drain(..) {
            aof.log(d, &cmd);
        }
        if own > 0 {
            match rewrite {
                Some(cmds) => {
                    for c in cmds {
                        aof.log(db, &c);
                    }
                }
                None => aof.log(db, argv),
            }
        }
        if framed {
            aof.log(db, &[b"EXEC"]);
        }
    }

    /// Logs commands with no originating client command (sweeper deletions).
    pub fn log_propagated(&self, fx: &mut Effects) {
        if fx.propagate.is_empty() {
            return;
        }
        if !self.aof.is_on() {
            fx.propagate.clear();
            return;
        }
        let mut st = self.aof.lock();
        match st.log.as_mut() {
            Some(aof) => {
                for (d, cmd) in fx.propagate.drain(..) {
                    aof.log(d, &cmd);
                }
            }
            None => fx.propagate.clear(),
        }
    }

    /// Logs MULTI ahead of a script's first write; the block reaches the
    /// file only with its EXEC ([`Shared::log_block_end`]).
    pub fn log_block_begin(&self, db: usize) {
        if let Some(aof) = self.aof.lock().log.as_mut() {
            aof.open_block(db);
        }
    }

    /// Logs the EXEC that ends a script's block.
    pub fn log_block_end(&self, db: usize) {
        if let Some(aof) = self.aof.lock().log.as_mut() {
            aof.close_block(db);
        }
    }

    /// Logs a raw command (MULTI/EXEC framing).
    pub fn log_raw<A: AsRef<[u8]>>(&self, db: usize, argv: &[A]) {
        if !self.aof.is_on() {
            return;
        }
        if let Some(aof) = self.aof.lock().log.as_mut() {
            aof.log(db, argv);
        }
    }

    /// Writes (and with `always`, fsyncs) what the batch logged. Called
    /// before replies are sent, so an acknowledged write is on disk.
    pub fn flush_aof(&self) {
        if !self.aof.is_on() {
            return;
        }
        let mut st = self.aof.lock();
        // The write-error state changes under the log's lock only, so a
        // success and a failure cannot cross.
        let solved = |ok: &std::sync::atomic::AtomicBool| {
            if !ok.load(Ordering::Relaxed) {
                ok.store(true, Ordering::Relaxed);
                tracing::warn!("AOF write error looks solved, Redis can write again.");
            }
        };
        if !st.log.as_ref().is_some_and(|a| a.has_pending()) {
            // Nothing waits (what a failed write left went with a rewrite
            // that then wrote the whole data set as a new base).
            solved(&self.aof_write_ok);
            return;
        }
        let sleep = AOF_FLUSH_SLEEP_US.load(Ordering::Relaxed);
        if sleep > 0 {
            std::thread::sleep(Duration::from_micros(sleep));
        }
        let always = st.log.as_ref().is_some_and(|a| a.fsync == Fsync::Always);
        match st.flush() {
            Ok(()) => solved(&self.aof_write_ok),
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.aof_errno.store(errno, Ordering::Relaxed);
                if !always {
                    self.aof_write_ok.store(false, Ordering::Relaxed);
                }
                drop(st);
                self.aof_write_failed(errno, always);
            }
        }
    }

    /// A write of the AOF failed (the commands stay pending). With
    /// `appendfsync always` the process exits, as Redis does: replies
    /// already computed cannot be taken back, and the promise was that an
    /// acknowledged write is on disk. Otherwise writes are refused
    /// (`-MISCONF`) until a later try succeeds; the error is logged at
    /// most every 30 seconds.
    fn aof_write_failed(&self, errno: i32, always: bool) {
        let why = crate::misconf::errno_text(errno);
        if always {
            tracing::warn!("Error writing to the AOF file: {why}");
            tracing::warn!(
                "Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting..."
            );
            self.kill_save_child();
            self.kill_rewrite_on_exit();
            crate::process::remove_files();
            std::process::exit(1);
        }
        static LAST_LOG: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let now = now_ms() / 1000;
        if now.saturating_sub(LAST_LOG.load(Ordering::Relaxed)) > 30 {
            LAST_LOG.store(now, Ordering::Relaxed);
            tracing::warn!("Error writing to the AOF file: {why}");
        }
    }

    /// The directory files are kept in (`dir`).
    pub(crate) fn data_dir(&self) -> PathBuf {
        PathBuf::from(self.config.read().get("dir").unwrap_or_else(|| ".".into()))
    }

    /// Path of the snapshot file.
    pub fn snapshot_path(&self) -> PathBuf {
        self.data_dir().join(
            self.config
                .read()
                .get("dbfilename")
                .unwrap_or_else(|| "dump.ebb".into()),
        )
    }

    /// SAVE: writes a snapshot now, with the store locked.
    pub fn save_now(&self, store: &Store) -> Result<(), String> {
        crate::figures::RDB_SAVES.fetch_add(1, Ordering::Relaxed);
        let data = snapshot::encode(store, now_ms());
        // `rdb-key-save-delay` holds a foreground save too (SAVE, the
        // final save of a shutdown), as in Redis.
        snapshot::write_file_after(&self.snapshot_path(), &data, self.save_delay(store)).map_err(
            |e| {
                tracing::warn!("Write error saving DB on disk: {e}");
                e.to_string()
            },
        )?;
        self.saved();
        Ok(())
    }

    fn saved(&self) {
        self.last_save.store(now_ms() / 1000, Ordering::Relaxed);
        self.dirty_at_save
            .store(self.stats.dirty.load(Ordering::Relaxed), Ordering::Relaxed);
        self.last_bgsave_ok.store(true, Ordering::Relaxed);
    }

    /// BGSAVE: writes a snapshot from a forked child process, which sees
    /// the keyspace as it was at the fork (copy-on-write pages), so the
    /// server pauses only for the fork itself. If fork fails, the store is
    /// copied under the lock and written from a thread instead.
    pub fn bgsave(self: &Arc<Self>, store: &Store) -> bool {
        if self.bgsave_running.swap(true, Ordering::SeqCst) {
            return false;
        }
        crate::figures::RDB_SAVES.fetch_add(1, Ordering::Relaxed);
        self.last_bgsave_try
            .store(now_ms() / 1000, Ordering::Relaxed);
        crate::figures::started(&crate::figures::RDB_STARTED);
        let path = self.snapshot_path();
        let delay = self.save_delay(store);
        // The keyspace as it is at the fork, whenever the child writes it.
        let at = now_ms();
        self.write_in_background(
            store,
            |s| &s.bgsave_child,
            ("saving", "Background saving started", "ebb-rdb-bgsave"),
            move |store| {
                let data = snapshot::encode(store, at);
                snapshot::write_file_after(&path, &data, delay).map_err(|e| e.to_string())
            },
            |me, written, _| me.bgsave_done(written),
        );
        true
    }

    /// Writes the keyspace as it is now in the background, in a forked
    /// child that sees it through copy-on-write pages (its pid in `child`
    /// while it runs), or, if fork fails, from a copy made under the lock
    /// in a thread. `names` are the job's name for the fork warning, the
    /// log line of a child started, and the child's process title. `done` then runs on a thread of
    /// its own with the outcome and the writer's process id.
    pub(crate) fn write_in_background(
        self: &Arc<Self>,
        store: &Store,
        child: fn(&Shared) -> &std::sync::atomic::AtomicI32,
        names: (&'static str, &'static str, &'static str),
        write: impl Fn(&Store) -> Result<(), String> + Send + 'static,
        done: impl FnOnce(&Arc<Shared>, Result<(), String>, libc::pid_t) + Send + 'static,
    ) {
        let me = self.clone();
        let (what, started, job) = names;
        let title = crate::proctitle::title_for(&self.config.read(), Some(job));
        // The child tells why it failed through a pipe (it does not log).
        let why = ErrorPipe::new();
        match fork_child(|| {
            if let Some(t) = &title {
                crate::proctitle::write(t);
            }
            match write(store) {
                Ok(()) => true,
                Err(e) => {
                    if let Some(p) = &why {
                        p.send(&e);
                    }
                    false
                }
            }
        }) {
            Ok(pid) => {
                tracing::info!("{started} by pid {pid}");
                child(self).store(pid, Ordering::SeqCst);
                if let Some(p) = &why {
                    p.close_sender();
                }
                std::thread::spawn(move || {
                    let ok = wait_child(pid);
                    let _ = child(&me).compare_exchange(pid, 0, Ordering::SeqCst, Ordering::SeqCst);
                    let written = if ok {
                        Ok(())
                    } else {
                        let told = why.map(|p| p.receive()).unwrap_or_default();
                        Err(if told.is_empty() {
                            format!("the {what} process failed")
                        } else {
                            format!("the {what} process failed: {told}")
                        })
                    };
                    done(&me, written, pid);
                });
            }
            Err(e) => {
                tracing::warn!(error = %e, "fork failed; {what} from a copy of the keyspace");
                let copy = store.clone();
                std::thread::spawn(move || {
                    let written = write(&copy);
                    drop(copy);
                    done(&me, written, std::process::id() as libc::pid_t);
                });
            }
        }
    }

    /// How long a background save or rewrite child waits before writing:
    /// `rdb-key-save-delay` (Redis's testing option, microseconds per key)
    /// times the number of keys, so that tests can hold a child running.
    pub(crate) fn save_delay(&self, store: &Store) -> Duration {
        let per_key = self.config.read().get_i64("rdb-key-save-delay").max(0) as u64;
        let keys: u64 = store.dbs.iter().map(|d| d.len() as u64).sum();
        Duration::from_micros(per_key.saturating_mul(keys))
    }

    fn bgsave_done(&self, result: Result<(), String>) {
        match result {
            Ok(()) => {
                self.saved();
                tracing::info!("Background saving terminated with success");
            }
            Err(e) => {
                self.last_bgsave_ok.store(false, Ordering::Relaxed);
                tracing::error!(error = %e, "Background saving error");
            }
        }
        crate::figures::finished(&crate::figures::RDB_STARTED, &crate::figures::RDB_LAST_SECS);
        self.bgsave_running.store(false, Ordering::SeqCst);
    }

    /// Everything to do before exiting: flush and fsync the AOF, and write a
    /// snapshot if save rules are configured (unless `nosave`).
    /// SHUTDOWN NOSAVE while a script is busy: exits at once, without
    /// waiting for the script. What the log already wrote is synced; the
    /// script's own commands, still buffered, are dropped with its effects
    /// (nothing else writes while it holds the keyspace).
    pub fn exit_now(&self) -> ! {
        self.kill_save_child();
        self.kill_rewrite_on_exit();
        let mut st = self.aof.lock();
        if let Some(a) = st.log.as_mut() {
            a.discard_block();
        }
        let _ = st.flush();
        if let Some(a) = st.log.as_mut() {
            let _ = a.sync();
        }
        tracing::info!("ebb is now ready to exit, bye bye...");
        crate::process::remove_files();
        std::process::exit(0);
    }

    /// Persists what a shutdown must before the process exits: a BGSAVE
    /// child is stopped (its older snapshot must not land over the final
    /// one), the AOF flushed and synced, and a snapshot written when save
    /// rules exist or `save` asks for one (never with `nosave`). Err when
    /// that snapshot could not be written: the server must not exit then
    /// (unless told to by SHUTDOWN FORCE), as Redis does not.
    pub fn persist_on_shutdown(
        &self,
        store: &Store,
        nosave: bool,
        save: bool,
    ) -> Result<(), String> {
        self.kill_save_child();
        self.kill_rewrite_on_exit();
        {
            let mut st = self.aof.lock();
            let _ = st.flush();
            if let Some(a) = st.log.as_mut() {
                let _ = a.sync();
            }
        }
        let rules = self.config.read().get("save").unwrap_or_default();
        if !nosave && (save || !rules.trim().is_empty()) {
            match self.save_now(store) {
                Ok(()) => tracing::info!("DB saved on disk"),
                Err(e) => {
                    tracing::error!(error = %e, "error saving on shutdown");
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// After FLUSHALL, as Redis does: a BGSAVE child is stopped, and with
    /// save rules set a snapshot of the emptied dataset replaces the old
    /// one at once, so that a restart cannot bring the flushed keys back
    /// and the change counter starts again from 0.
    pub fn after_flushall(&self, store: &Store) {
        self.kill_save_child();
        let rules = self.config.read().get("save").unwrap_or_default();
        if !rules.trim().is_empty() {
            if let Err(e) = self.save_now(store) {
                tracing::warn!(error = %e, "could not save the flushed dataset");
            }
        }
    }

    /// Stops a running AOF rewrite (the AOF was turned off): its waiting
    /// thread sees the child fail and drops the unfinished file.
    pub fn kill_rewrite_child(&self) {
        let pid = self.rewrite_child.load(Ordering::SeqCst);
        if pid <= 0 {
            return;
        }
        tracing::warn!("Killing running AOF rewrite child: {pid}");
        // SAFETY: signals our own child, which the waiting thread reaps.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }

    /// Stops an AOF rewrite child before the server exits (it would
    /// otherwise outlive the server, holding its listening sockets) and
    /// removes its unfinished file.
    fn kill_rewrite_on_exit(&self) {
        let pid = self.rewrite_child.load(Ordering::SeqCst);
        if kill_child(
            &self.rewrite_child,
            "There is a child rewriting the AOF. Killing it!",
        ) {
            let _ = std::fs::remove_file(self.rewrite_tmp_path(pid));
        }
    }

    /// Stops a running BGSAVE child and removes its unfinished file.
    fn kill_save_child(&self) {
        let pid = self.bgsave_child.load(Ordering::SeqCst);
        // The waiting thread's waitpid then fails, which it reports as a
        // failed save.
        if kill_child(
            &self.bgsave_child,
            "There is a child saving a snapshot. Killing it!",
        ) {
            let _ = std::fs::remove_file(crate::persist::snapshot::temp_path(
                &self.snapshot_path(),
                pid as u32,
            ));
        }
    }
}

/// Kills and reaps the child whose pid `slot` holds, taking it out of the
/// slot, with `message` in the log; false when there was none.
fn kill_child(slot: &std::sync::atomic::AtomicI32, message: &str) -> bool {
    let pid = slot.swap(0, Ordering::SeqCst);
    if pid <= 0 {
        return false;
    }
    tracing::warn!("{message}");
    // SAFETY: signals and reaps our own child.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        let mut status: libc::c_int = 0;
        libc::waitpid(pid, &mut status, 0);
    }
    true
}

/// Loads the AOF (when enabled) or the snapshot at start. Errors are fatal
/// and name the file and offset; a torn AOF tail is cut when allowed.
///
/// The data loads into a store of its own, which then takes the place of
/// the (empty) live one: meanwhile connections are served, and the
/// commands allowed while loading (INFO, CONFIG, CLIENT, …) find the
/// keyspace lock free. What they changed of the live store's settings
/// (CONFIG SET of an encoding threshold, CLIENT PAUSE) is kept.
pub fn load_at_start(shared: &Arc<Shared>) -> Result<(), String> {
    let aof_on = shared.config.read().get_bool("appendonly");
    let mut store = {
        let live = shared.store.lock();
        let mut s = Store::new(live.dbs.len());
        s.cfg = live.cfg.clone();
        s
    };
    load_into(shared, &mut store, aof_on)?;
    let mut live = shared.store.lock();
    store.cfg = live.cfg.clone();
    store.expiry_paused_until = live.expiry_paused_until;
    *live = store;
    Ok(())
}

/// [`load_at_start`]'s loading, into `store`.
fn load_into(shared: &Arc<Shared>, store: &mut Store, aof_on: bool) -> Result<(), String> {
    let now = now_ms();
    crate::loading::set_key_load_delay(shared.config.read().get_i64("key-load-delay"));
    crate::aof_dir::load_at_start(shared, store, aof_on)?;
    let mut snapshot_loaded = false;
    if !aof_on {
        let path = shared.snapshot_path();
        if let Ok(data) = std::fs::read(&path) {
            crate::loading::set_total(data.len() as u64);
            let fail = |e: String| {
                tracing::error!("Can't load snapshot {}: {e}", path.display());
                // Redis's words, which operators' alerting may look for.
                "Terminating server after rdb file reading failure.".to_string()
            };
            let commands = snapshot::load(store, &data, now).map_err(fail)?;
            tracing::info!(commands, "DB loaded from snapshot");
            snapshot_loaded = true;
        }
    }
    // Members and keys that expired while the server was down go now,
    // before the loaded data is served.
    let keys = |s: &Store| s.dbs.iter().map(|d| d.len()).sum::<usize>();
    let loaded = keys(store);
    let mut fx = shared.effects();
    while store.sweep(now, usize::MAX, &mut fx) > 0 {}
    shared.log_propagated(&mut fx);
    shared.flush_aof();
    if snapshot_loaded {
        // As Redis reports a snapshot load: the keys kept, and those whose
        // time had passed.
        let kept = keys(store);
        crate::figures::LOAD_KEYS_LOADED.store(kept as u64, Ordering::Relaxed);
        crate::figures::LOAD_KEYS_EXPIRED.store((loaded - kept) as u64, Ordering::Relaxed);
    }
    Ok(())
}

/// Background duties: fsync every second, save rules, automatic rewrites.
pub async fn run_background(shared: Arc<Shared>) {
    let mut last_rule_check = std::time::Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(1000)).await;
        if crate::loading::active() {
            // DEBUG LOADAOF holds the log while it loads: waiting for it
            // would stall a thread that answers clients (-LOADING).
            continue;
        }
        // The fsync runs on a blocking thread, outside the log's lock: a
        // slow disk never stalls the threads serving clients.
        let handle = match shared.aof.lock().log.as_mut() {
            Some(a) if a.fsync == Fsync::EverySec => a.sync_handle(),
            _ => Ok(None),
        };
        let synced = match handle {
            Ok(Some(f)) => tokio::task::spawn_blocking(move || f.sync_data())
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string()))),
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        };
        // A failed fsync refuses writes (-MISCONF) until one succeeds.
        match synced {
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                shared.aof_errno.store(errno, Ordering::Relaxed);
                // Tried again next second.
                if let Some(a) = shared.aof.lock().log.as_mut() {
                    a.unsynced = true;
                }
                if shared.aof_fsync_ok.swap(false, Ordering::Relaxed) {
                    tracing::warn!(
                        "Error syncing the append only file: {}",
                        crate::misconf::errno_text(errno)
                    );
                }
            }
            Ok(()) => shared.aof_fsync_ok.store(true, Ordering::Relaxed),
        }
        // Commands a failed write left pending are tried again even when
        // no client writes (they are refused meanwhile).
        if !shared.aof_write_ok.load(Ordering::Relaxed) {
            shared.flush_aof();
        }
        if last_rule_check.elapsed() < Duration::from_secs(1) {
            continue;
        }
        last_rule_check = std::time::Instant::now();
        let (rules, pct, min) = {
            let c = shared.config.read();
            (
                c.get("save").unwrap_or_default(),
                c.get_i64("auto-aof-rewrite-percentage"),
                c.get_i64("auto-aof-rewrite-min-size"),
            )
        };
        let changes = shared.stats.dirty.load(Ordering::Relaxed)
            - shared
                .dirty_at_save
                .load(Ordering::Relaxed)
                .min(shared.stats.dirty.load(Ordering::Relaxed));
        let since = (now_ms() / 1000).saturating_sub(shared.last_save.load(Ordering::Relaxed));
        let nums: Vec<u64> = rules
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        // After a failed save, the rules try again only 5 seconds on.
        let retry = shared.last_bgsave_ok.load(Ordering::Relaxed)
            || (now_ms() / 1000).saturating_sub(shared.last_bgsave_try.load(Ordering::Relaxed)) > 5;
        let due = retry
            && nums
                .chunks(2)
                .any(|c| c.len() == 2 && since >= c[0] && changes >= c[1] && changes > 0);
        // One child at a time, as in Redis: a scheduled rewrite or
        // snapshot starts once the other has ended.
        let busy = |s: &Shared| {
            s.bgsave_running.load(Ordering::SeqCst) || s.rewrite_running.load(Ordering::SeqCst)
        };
        if !busy(&shared)
            && shared.rewrite_scheduled.load(Ordering::SeqCst)
            && !crate::aof_dir::rewrite_limited()
        {
            if let Some(store) = shared.store_unless_busy() {
                shared.rewrite_scheduled.store(false, Ordering::SeqCst);
                let _ = shared.bgrewrite(&store);
            }
        }
        if !busy(&shared) && shared.bgsave_scheduled.load(Ordering::SeqCst) {
            if let Some(store) = shared.store_unless_busy() {
                shared.bgsave_scheduled.store(false, Ordering::SeqCst);
                shared.bgsave(&store);
            }
        }
        if due && !busy(&shared) {
            tracing::info!(
                changes,
                seconds = since,
                "save rule met, background saving started"
            );
            if let Some(store) = shared.store_unless_busy() {
                shared.bgsave(&store);
            }
        }
        // As Redis: past auto-aof-rewrite-min-size, a rewrite once the
        // files have grown by auto-aof-rewrite-percentage since the last.
        let growth = {
            let st = shared.aof.lock();
            let on = st.enabled && !st.waiting && st.log.is_some();
            (on && pct > 0 && st.current_size as i64 > min)
                .then(|| (st.current_size * 100 / st.base_size.max(1)) as i64 - 100)
        };
        if growth.is_some_and(|g| g >= pct) && !busy(&shared) && !crate::aof_dir::rewrite_limited()
        {
            tracing::info!(
                "Starting automatic rewriting of AOF on {}% growth",
                growth.unwrap_or(0)
            );
            if let Some(store) = shared.store_unless_busy() {
                let _ = shared.bgrewrite(&store);
            }
        }
    }
}

/// DEBUG AOF-FLUSH-SLEEP: microseconds each write of the log waits first.
pub static AOF_FLUSH_SLEEP_US: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Background children started (INFO's `total_forks`).
pub static FORKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Forks a child process that runs `work` on the memory as it is at the
/// fork (the caller holds the store lock, so the keyspace is consistent),
/// then exits: 0 if `work` returned true. The child only serialises and
/// writes files; it takes no lock and does not log (another thread may have
/// held the log's lock at the fork).
pub(crate) fn fork_child(work: impl FnOnce() -> bool) -> std::io::Result<libc::pid_t> {
    // SAFETY: fork has no memory-safety preconditions; in the child only
    // this thread exists and it runs `work`, then `_exit`s without running
    // destructors or atexit handlers of the parent's state.
    let forking = std::time::Instant::now();
    let pid = unsafe { libc::fork() };
    if pid > 0 {
        crate::figures::LATEST_FORK_USEC
            .store(forking.elapsed().as_micros() as u64, Ordering::Relaxed);
    }
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid > 0 {
        FORKS.fetch_add(1, Ordering::Relaxed);
    }
    if pid == 0 {
        crate::process::close_listeners_in_child();
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or(false);
        // SAFETY: ends the child at once, as intended.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    Ok(pid)
}

/// A pipe a background child writes its error to, read by the parent once
/// the child has ended.
struct ErrorPipe {
    read: libc::c_int,
    write: std::sync::atomic::AtomicI32,
}

impl ErrorPipe {
    fn new() -> Option<ErrorPipe> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe2 fills the two descriptors of the array it is given.
        let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) };
        (r == 0).then(|| ErrorPipe {
            read: fds[0],
            write: std::sync::atomic::AtomicI32::new(fds[1]),
        })
    }

    /// In the child: writes `text` (what fits in the pipe).
    fn send(&self, text: &str) {
        let fd = self.write.load(Ordering::Relaxed);
        // SAFETY: writes from a live buffer to the pipe's write end.
        unsafe {
            libc::write(fd, text.as_ptr().cast(), text.len().min(4096));
        }
    }

    /// In the parent, once the child is started: closes its write end, so
    /// reading ends where the child's text does.
    fn close_sender(&self) {
        let fd = self.write.swap(-1, Ordering::Relaxed);
        if fd >= 0 {
            // SAFETY: closes the parent's copy of a descriptor it owns.
            unsafe {
                libc::close(fd);
            }
        }
    }

    /// In the parent, once the child has ended: what it wrote.
    fn receive(self) -> String {
        let mut buf = [0u8; 4096];
        // SAFETY: reads into a local buffer of the length given.
        let n = unsafe { libc::read(self.read, buf.as_mut_ptr().cast(), buf.len()) };
        String::from_utf8_lossy(&buf[..n.max(0) as usize]).into_owned()
    }
}

impl Drop for ErrorPipe {
    fn drop(&mut self) {
        self.close_sender();
        // SAFETY: closes a descriptor this value owns.
        unsafe {
            libc::close(self.read);
        }
    }
}

/// Waits for a child made by [`fork_child`]; true if it exited with 0.
pub(crate) fn wait_child(pid: libc::pid_t) -> bool {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: waits on our own child with a valid status pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        }
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return false;
        }
    }
}
