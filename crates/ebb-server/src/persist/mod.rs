//! Persistence: the append-only file, snapshots, and loading either at
//! start. Both files are streams of RESP commands that rebuild the data
//! with absolute deadlines, so replay is deterministic.

pub mod aof;
pub mod manifest;
pub mod snapshot;

use bytes::{Bytes, BytesMut};
use ebb_core::{Ctx, Effects, Store};

use crate::resp::{self, Limits, Parsed};

/// Appends one command as a RESP multibulk.
pub fn encode_command<A: AsRef<[u8]>>(argv: &[A], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("*{}\r\n", argv.len()).as_bytes());
    for a in argv {
        let a = a.as_ref();
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

/// Writes the whole store as commands: the function libraries, then each
/// database (with SELECT between databases).
pub fn dump_store(store: &Store, now: u64, out: &mut Vec<u8>) {
    for (_, code) in store.functions.iter() {
        encode_command(
            &[
                Bytes::from_static(b"FUNCTION"),
                Bytes::from_static(b"LOAD"),
                code.clone(),
            ],
            out,
        );
    }
    for (i, db) in store.dbs.iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        encode_command(
            &[Bytes::from_static(b"SELECT"), Bytes::from(i.to_string())],
            out,
        );
        ebb_core::dump::db_commands(db, now, &mut |cmd| encode_command(&cmd, out));
    }
}

/// Why a load failed.
#[derive(Debug)]
pub enum LoadError {
    /// A complete but invalid record at this byte offset.
    Corrupt(usize, String),
    /// A record naming a command ebb does not have.
    UnknownCommand(String),
}

/// Outcome of replaying a command stream.
pub struct Replayed {
    /// Commands applied.
    pub commands: usize,
    /// Offset just after the last complete record (and complete MULTI block).
    pub valid_len: usize,
    /// Whether the data ended in the middle of a record or transaction.
    pub truncated: bool,
}

/// Replays RESP commands into `store`. As in Redis, no key expires while
/// they load ([`Store::loading`]): a key whose TTL has passed stays for
/// the commands after it and goes once loading is over (lazily, or by the
/// sweep that follows a load at start). Member deadlines likewise
/// ([`ebb_core::Ctx::deadline_floor`]). The bytes read count in the loading
/// progress (INFO's `loading_loaded_bytes`).
pub fn replay(store: &mut Store, data: &[u8], now: u64) -> Result<Replayed, LoadError> {
    let mut reported = 0;
    let was = std::mem::replace(&mut store.loading, true);
    SKIPPED_SCRIPTS.with(|n| n.set(0));
    let r = replay_counted(store, data, now, &mut reported);
    store.loading = was;
    let skipped = SKIPPED_SCRIPTS.with(|n| n.get());
    if skipped > 0 {
        tracing::warn!(
            "{skipped} script call(s) (EVAL, EVALSHA, FCALL) in the loaded file were not \
             replayed: ebb logs a script's effects and replays those, not scripts"
        );
    }
    crate::loading::advance(data.len().saturating_sub(reported) as u64);
    r
}

/// [`replay`] for a file of the AOF, which may start with the data in
/// Redis's RDB format (Redis's `aof-use-rdb-preamble`: a base file named
/// `.base.rdb`, or an old single-file AOF beginning `REDIS`); the commands
/// after it replay as usual. Offsets in errors and in the result are the
/// file's.
pub fn replay_log_file(store: &mut Store, data: &[u8], now: u64) -> Result<Replayed, LoadError> {
    if !ebb_core::rdb::is_file(data) {
        return replay(store, data, now);
    }
    let (loaded, commands) = load_rdb(store, data, now).map_err(|e| LoadError::Corrupt(0, e))?;
    let mut r = replay(store, &data[loaded.len..], now).map_err(|e| match e {
        LoadError::Corrupt(off, why) => LoadError::Corrupt(off + loaded.len, why),
        other => other,
    })?;
    r.commands += commands;
    r.valid_len += loaded.len;
    Ok(r)
}

/// Loads data in Redis's RDB format into `store`, each command applied as
/// the file is decoded (no intermediate copy of the data); returns what
/// the file held and the commands applied. Keys whose time passed stay
/// until the load is over, as for [`replay`]. Err is the reason to log;
/// the store may then hold part of the file.
pub fn load_rdb(
    store: &mut Store,
    data: &[u8],
    now: u64,
) -> Result<(ebb_core::rdb::Loaded, usize), String> {
    let was = std::mem::replace(&mut store.loading, true);
    let databases = store.dbs.len();
    let mut target = RdbLoad {
        store,
        now,
        db: 0,
        fresh: false,
        applied: 0,
        failed: None,
        reported: 0,
    };
    let r = ebb_core::rdb::load_file(data, databases, &mut target);
    // Room a hint reserved for keys the file did not have goes back.
    for d in target.store.dbs.iter_mut() {
        d.trim_spare();
    }
    let RdbLoad {
        store,
        applied,
        failed,
        reported,
        ..
    } = target;
    store.loading = was;
    crate::loading::advance((data.len() - reported) as u64);
    let loaded = r?;
    if let Some(e) = failed {
        return Err(format!("a value of the RDB file could not be rebuilt: {e}"));
    }
    Ok((loaded, applied))
}

/// The store an RDB file loads into.
struct RdbLoad<'s> {
    store: &'s mut Store,
    now: u64,
    /// The database being read.
    db: usize,
    /// Whether the key being read was not held before it.
    fresh: bool,
    /// Commands applied.
    applied: usize,
    /// The first command that failed.
    failed: Option<String>,
    /// Bytes of the file reported to INFO's loading figures.
    reported: usize,
}

impl ebb_core::rdb::Target for RdbLoad<'_> {
    fn command(&mut self, cmd: &[&[u8]]) {
        if self.failed.is_some() {
            return;
        }
        let (store, db, now) = (&mut *self.store, self.db, self.now);
        if cmd[0].eq_ignore_ascii_case(b"select") {
            self.db = std::str::from_utf8(cmd[1])
                .ok()
                .and_then(|d| d.parse().ok())
                .unwrap_or(0);
            return;
        }
        if cmd.len() == 3 && cmd[0] == b"SET" {
            // Most keys are strings: stored as SET stores them, without
            // the command's parsing and bookkeeping (nothing watches a
            // store that is loading).
            let lfu = store.cfg.lfu;
            let value = ebb_core::Value::Str(ebb_core::value::StrValue::new(cmd[2]));
            if self.fresh {
                store.dbs[db].add_at(cmd[1], value, now, lfu);
            } else {
                store.dbs[db].set_at(cmd[1], value, now, lfu);
            }
            self.applied += 1;
            crate::loading::pace();
            return;
        }
        let Some(spec) = ebb_core::lookup(cmd[0]) else {
            return;
        };
        let outcome = if spec.name == "function" {
            crate::script::replay_function(store, cmd).map_err(|e| format!("FUNCTION LOAD: {e}"))
        } else {
            let mut fx = Effects::default();
            let mut ctx = Ctx::new(store, db, now, &mut fx);
            ebb_core::execute_result(&mut ctx, spec, cmd)
                .map(|_| ())
                .map_err(|e| format!("{}: {}", spec.name.to_uppercase(), e.text()))
        };
        match outcome {
            Ok(()) => self.applied += 1,
            Err(e) => self.failed = Some(e),
        }
        // `key-load-delay` holds each command, as in a replay.
        crate::loading::pace();
    }

    fn holds(&mut self, db: u64, key: &[u8]) -> bool {
        let held = self
            .store
            .dbs
            .get(db as usize)
            .is_some_and(|d| d.holds(key));
        self.fresh = !held;
        held
    }

    fn prefetch(&mut self, db: u64, key: &[u8]) {
        if let Some(d) = self.store.dbs.get(db as usize) {
            d.prefetch_probe(key);
        }
    }

    fn progress(&mut self, at: usize) {
        crate::loading::advance((at - self.reported) as u64);
        self.reported = at;
    }

    fn expect_keys(&mut self, keys: u64) {
        if let Some(d) = self.store.dbs.get_mut(self.db) {
            d.reserve(usize::try_from(keys).unwrap_or(usize::MAX));
        }
    }
}

thread_local! {
    /// Server-level commands (scripts) a replay met and did not run.
    static SKIPPED_SCRIPTS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Commands replayed between two reports of the loading progress.
const PROGRESS_EVERY: usize = 1024;

/// [`replay`], reporting the bytes read every [`PROGRESS_EVERY`] commands
/// (`reported`: how many so far).
fn replay_counted(
    store: &mut Store,
    data: &[u8],
    now: u64,
    reported: &mut usize,
) -> Result<Replayed, LoadError> {
    let mut buf = BytesMut::from(data);
    let limits = Limits {
        max_bulk_len: u64::MAX / 4,
        max_inline: usize::MAX / 4,
        max_multibulk: i64::MAX / 4,
        unauthenticated: false,
    };
    let mut db = 0usize;
    let mut applied = 0;
    let mut valid_len = 0;
    // A MULTI block's commands, each with the database selected when it
    // was logged (a script's SELECT may switch it inside the block).
    let mut multi: Option<Vec<(usize, Vec<Bytes>)>> = None;
    loop {
        let offset = data.len() - buf.len();
        if buf.is_empty() {
            return Ok(Replayed {
                commands: applied,
                valid_len,
                truncated: multi.is_some(),
            });
        }
        // A timestamp annotation (`#TS:...`), as Redis writes with
        // aof-timestamp-enabled: skipped.
        if buf[0] == b'#' {
            match buf.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    let _ = buf.split_to(i + 1);
                    if multi.is_none() {
                        valid_len = data.len() - buf.len();
                    }
                    continue;
                }
                None => {
                    return Ok(Replayed {
                        commands: applied,
                        valid_len,
                        truncated: true,
                    })
                }
            }
        }
        if buf[0] != b'*' {
            return Err(LoadError::Corrupt(
                offset,
                "expected '*' at the start of a record".into(),
            ));
        }
        let argv = match resp::parse(&mut buf, &limits) {
            Ok(Parsed::Command(a)) => a,
            Ok(Parsed::Incomplete) => {
                return Ok(Replayed {
                    commands: applied,
                    valid_len,
                    truncated: true,
                })
            }
            Err(e) => return Err(LoadError::Corrupt(offset, e.0)),
        };
        let end = data.len() - buf.len();
        if argv.is_empty() {
            continue;
        }
        let name = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
        match name.as_str() {
            "select" => {
                db = std::str::from_utf8(argv.get(1).map(|b| &b[..]).unwrap_or(b""))
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .filter(|&d: &usize| d < store.dbs.len())
                    .ok_or_else(|| LoadError::Corrupt(offset, "bad SELECT".into()))?;
            }
            "multi" => multi = Some(Vec::new()),
            "exec" => {
                for (d, cmd) in multi.take().unwrap_or_default() {
                    apply(store, d, &ebb_core::args::views(&cmd), now, offset)?;
                    applied += 1;
                    crate::loading::pace();
                }
            }
            _ => {
                if let Some(q) = multi.as_mut() {
                    q.push((db, argv));
                } else {
                    apply(store, db, &ebb_core::args::views(&argv), now, offset)?;
                    applied += 1;
                    crate::loading::pace();
                }
            }
        }
        if multi.is_none() {
            valid_len = end;
        }
        if applied % PROGRESS_EVERY == 0 && end > *reported {
            crate::loading::advance((end - *reported) as u64);
            *reported = end;
        }
    }
}

/// Applies one command.
fn apply(
    store: &mut Store,
    db: usize,
    argv: &[&[u8]],
    now: u64,
    offset: usize,
) -> Result<(), LoadError> {
    let Some(spec) = ebb_core::lookup(argv[0]) else {
        return Err(LoadError::UnknownCommand(
            String::from_utf8_lossy(argv[0]).into_owned(),
        ));
    };
    if !spec.arity_ok(argv.len()) {
        return Err(LoadError::Corrupt(
            offset,
            format!("wrong number of arguments for '{}'", spec.name),
        ));
    }
    if matches!(spec.exec, ebb_core::table::Exec::Server) && spec.name != "function" {
        // A script as an older Redis logged it: not run (see `replay`).
        SKIPPED_SCRIPTS.with(|n| n.set(n.get() + 1));
        return Ok(());
    }
    if spec.name == "function" {
        return crate::script::replay_function(store, argv)
            .map_err(|e| LoadError::Corrupt(offset, format!("FUNCTION: {e}")));
    }
    let mut fx = Effects::default();
    let mut ctx = Ctx::new(store, db, now, &mut fx);
    ebb_core::execute(&mut ctx, spec, argv);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(parts: &[&str]) -> Vec<Bytes> {
        parts
            .iter()
            .map(|p| Bytes::copy_from_slice(p.as_bytes()))
            .collect()
    }

    #[test]
    fn replay_keeps_each_commands_database_inside_multi() {
        // A script's effects: MULTI, writes, a SELECT between them, EXEC.
        let mut data = Vec::new();
        for c in [
            &["MULTI"][..],
            &["SET", "a", "1"],
            &["SELECT", "2"],
            &["SET", "b", "2"],
            &["EXEC"],
        ] {
            encode_command(&cmd(c), &mut data);
        }
        let mut store = Store::new(16);
        let r = replay(&mut store, &data, 0)
            .map(|r| r.commands)
            .unwrap_or(0);
        assert_eq!(r, 2);
        assert!(store.dbs[0].raw_get(b"a").is_some());
        assert!(store.dbs[0].raw_get(b"b").is_none());
        assert!(store.dbs[2].raw_get(b"b").is_some());
    }

    #[test]
    fn replay_counts_the_scripts_it_does_not_run() {
        let mut data = Vec::new();
        for c in [
            &["EVAL", "redis.call('set', KEYS[1], 'x')", "1", "s"][..],
            &["SET", "a", "1"],
        ] {
            encode_command(&cmd(c), &mut data);
        }
        let mut store = Store::new(16);
        assert!(replay(&mut store, &data, 0).is_ok());
        assert_eq!(SKIPPED_SCRIPTS.with(|n| n.get()), 1);
        assert!(store.dbs[0].raw_get(b"a").is_some());
        assert!(store.dbs[0].raw_get(b"s").is_none());
    }

    #[test]
    fn replay_detects_torn_tail_and_corruption() {
        let mut data = Vec::new();
        encode_command(&cmd(&["SET", "a", "1"]), &mut data);
        let good = data.len();
        encode_command(&cmd(&["SET", "b", "2"]), &mut data);
        data.truncate(data.len() - 3);
        let mut store = Store::new(16);
        let r = replay(&mut store, &data, 0)
            .map_err(|_| ())
            .unwrap_or(Replayed {
                commands: 0,
                valid_len: 0,
                truncated: false,
            });
        assert!(r.truncated);
        assert_eq!(r.valid_len, good);
        assert_eq!(r.commands, 1);
        let mut bad = Vec::new();
        encode_command(&cmd(&["SET", "a", "1"]), &mut bad);
        bad.extend_from_slice(b"garbage\r\n");
        encode_command(&cmd(&["SET", "b", "2"]), &mut bad);
        assert!(
            matches!(replay(&mut Store::new(16), &bad, 0), Err(LoadError::Corrupt(o, _)) if o == good)
        );
    }

    #[test]
    fn no_key_expires_while_the_log_replays() {
        // Redis's "AOF+EXPIRE" case: a PEXPIREAT long past, then a write to
        // the same key, which still finds the list (it goes after loading).
        let mut data = Vec::new();
        for c in [
            &["RPUSH", "list", "foo"][..],
            &["PEXPIREAT", "list", "1000"],
            &["RPUSH", "list", "bar"],
        ] {
            encode_command(&cmd(c), &mut data);
        }
        let mut store = Store::new(16);
        assert!(replay(&mut store, &data, 5_000).is_ok());
        assert!(!store.loading);
        let e = store.dbs[0]
            .raw_get(b"list")
            .map(|e| (e.expire_at(), e.value.member_count()));
        assert_eq!(e, Some((Some(1000), 2)));
        let mut fx = Effects::default();
        store.sweep(5_000, usize::MAX, &mut fx);
        assert!(store.dbs[0].raw_get(b"list").is_none());
    }
}
