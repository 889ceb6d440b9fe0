//! CONFIG (COMMAND is in command_cmd.rs, DEBUG in debug_cmd.rs).

use ebb_core::error::unknown_subcommand;
use ebb_core::{Error, Reply, Store};
use parking_lot::MutexGuard;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::server::{apply_core_config, Shared};

type Guard<'a> = Option<MutexGuard<'a, Store>>;

pub(crate) fn eq(a: &[u8], b: &str) -> bool {
    a.eq_ignore_ascii_case(b.as_bytes())
}

pub(crate) fn err(s: impl Into<String>) -> Reply {
    Reply::Error(s.into().into())
}

pub(crate) fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// CONFIG GET/SET/RESETSTAT/REWRITE/HELP.
/// CONFIG; `client` is asking (for `enable-protected-configs local`).
pub fn config<'a>(
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    argv: &[&[u8]],
    client: &crate::server::ClientEntry,
) -> Reply {
    let sub = &argv[1];
    let n = argv.len();
    if eq(sub, "get") && n >= 3 {
        let cfg = shared.config.read();
        let mut seen = std::collections::BTreeMap::new();
        for pat in &argv[2..] {
            for (k, v) in cfg.matching(pat) {
                let v = if k.eq_ignore_ascii_case("notify-keyspace-events") {
                    shared.notify.read().to_config_string()
                } else {
                    v
                };
                seen.insert(k, v);
            }
        }
        Reply::Map(
            seen.into_iter()
                .map(|(k, v)| (Reply::text(k), Reply::text(v)))
                .collect(),
        )
    } else if eq(sub, "set") && n >= 4 && !n.is_multiple_of(2) {
        Error::Syntax.into()
    } else if eq(sub, "set") && n >= 4 && n.is_multiple_of(2) {
        // Options Redis 7.0 fixes at start: refused whatever the value.
        const IMMUTABLE: &[&str] = &[
            "aclfile",
            "always-show-logo",
            "aof_rewrite_cpulist",
            "appenddirname",
            "appendfilename",
            "bgsave_cpulist",
            "bio_cpulist",
            "cluster-config-file",
            "cluster-enabled",
            "cluster-port",
            "daemonize",
            "databases",
            "disable-thp",
            "enable-debug-command",
            "enable-module-command",
            "enable-protected-configs",
            "io-threads",
            "io-threads-do-reads",
            "logfile",
            "lua-enable-deprecated-api",
            "pidfile",
            "rdbchecksum",
            "replicaof",
            "server_cpulist",
            "set-proc-title",
            "socket-mark-id",
            "supervised",
            "syslog-enabled",
            "syslog-facility",
            "syslog-ident",
            "tcp-backlog",
            "unixsocket",
            "unixsocketperm",
        ];
        // The names first, as Redis checks them: an unknown one, then (for
        // the first that fails) an immutable or a repeated one, named as
        // the client wrote it; the values after.
        let mut names = std::collections::HashSet::new();
        let mut failure: Option<(String, &str)> = None;
        for pair in argv[2..].chunks(2) {
            let written = lossy(pair[0]);
            let Some(opt) = crate::config::option_name(&written) else {
                if failure.is_none() {
                    return err(format!(
                        "ERR Unknown option or number of arguments for CONFIG SET - '{written}'"
                    ));
                }
                continue;
            };
            if failure.is_some() {
                continue;
            }
            if IMMUTABLE.contains(&opt) {
                failure = Some((written, "can't set immutable config"));
            } else if matches!(opt, "dir" | "dbfilename")
                && !crate::conn::protected_allowed(shared, "enable-protected-configs", client)
            {
                failure = Some((written, "can't set protected config"));
            } else if !names.insert(opt) {
                failure = Some((written, "duplicate parameter"));
            }
        }
        if let Some((name, why)) = failure {
            return err(format!(
                "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
            ));
        }
        let mut cfg = shared.config.write();
        let mut next = cfg.clone();
        for pair in argv[2..].chunks(2) {
            let name = lossy(pair[0]).to_ascii_lowercase();
            if let Err(e) = next.set(&name, &lossy(pair[1])) {
                if e.starts_with("Bad directive") {
                    return err(format!(
                        "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
                    ));
                }
                return err(format!(
                    "ERR CONFIG SET failed (possibly related to argument '{}') - {e}",
                    lossy(pair[0])
                ));
            }
        }
        // New listening sockets are bound before anything is applied: a
        // port or address that cannot be had changes nothing.
        let mut rebound = None;
        let mut in_place = None;
        let listen_changed = ["port", "bind"]
            .iter()
            .any(|n| names.contains(*n) && next.get(n) != cfg.get(n));
        if listen_changed {
            let port = u16::try_from(next.get_i64("port")).unwrap_or(0);
            // On the same port, an address listened on already keeps its
            // socket (binding it twice would fail).
            let keep: Vec<String> = if next.get("port") == cfg.get("port") {
                crate::listen::listening(shared)
            } else {
                Vec::new()
            };
            let binds = crate::listen::binds_of(&next);
            match crate::listen::bind_all(&binds, port, &keep, crate::listen::backlog_of(&next)) {
                Ok(l) => rebound = Some((l, keep)),
                // An address overlapping one listened on (`*` while
                // `127.0.0.1` listens) on the same port: Redis's order,
                // once the checks below have passed.
                Err(e)
                    if e.error.kind() == std::io::ErrorKind::AddrInUse
                        && next.get("port") == cfg.get("port") =>
                {
                    in_place = Some(binds);
                }
                Err(e) => {
                    tracing::warn!(addr = %e.addr, port, error = %e.error, "could not bind");
                    return err(if next.get("port") != cfg.get("port") {
                        "ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port"
                    } else {
                        "ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses."
                    });
                }
            }
        }
        for name in ["databases", "dir", "io-threads"] {
            if names.contains(name) && next.get(name) != cfg.get(name) {
                if name == "dir" {
                    let d = next.get("dir").unwrap_or_default();
                    if std::env::set_current_dir(&d).is_err() {
                        return err("ERR CONFIG SET failed (possibly related to argument 'dir') - No such file or directory".to_string());
                    }
                    continue;
                }
                return err(format!("ERR CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config"));
            }
        }
        let clients = next.get_i64("maxclients").max(1) as u64;
        let fit = if names.contains("maxclients") {
            crate::process::raise_open_files(clients).clients
        } else {
            clients
        };
        if fit < clients {
            return err(format!("ERR CONFIG SET failed (possibly related to argument 'maxclients') - The operating system is not able to handle the specified number of clients, try with {fit}"));
        }
        if let Some(binds) = in_place {
            let port = u16::try_from(next.get_i64("port")).unwrap_or(0);
            let old = crate::listen::binds_of(&cfg);
            let backlog = crate::listen::backlog_of(&next);
            if let Err(e) = crate::listen::rebind_in_place(shared, &binds, &old, port, backlog) {
                tracing::warn!(addr = %e.addr, port, error = %e.error, "could not bind");
                return err("ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.");
            }
        }
        let aof_was = cfg.get_bool("appendonly");
        let aof_now = next.get_bool("appendonly");
        let fsync = next.get("appendfsync").unwrap_or_default();
        let timestamps = next.get_bool("aof-timestamp-enabled");
        *cfg = next;
        drop(cfg);
        if let Some((fresh, keep)) = rebound {
            let keep: Vec<String> = keep
                .into_iter()
                .filter(|a| crate::listen::binds_of(&shared.config.read()).contains(a))
                .collect();
            let port = crate::listen::serve(shared, fresh, &keep);
            tracing::info!(port, "Listening anew after CONFIG SET");
        }
        let store = guard.get_or_insert_with(|| shared.lock_store());
        if aof_now && !aof_was {
            if let Err(e) = shared.enable_aof(store) {
                return err(format!(
                    "ERR CONFIG SET failed (possibly related to argument 'appendonly') - {e}"
                ));
            }
        } else if !aof_now && aof_was {
            shared.disable_aof();
        }
        if let Some(a) = shared.aof.lock().log.as_mut() {
            a.fsync = crate::persist::aof::Fsync::parse(&fsync);
            a.timestamps = timestamps;
        }
        if argv[2..]
            .iter()
            .step_by(2)
            .any(|o| eq(o, "aof-disable-auto-gc"))
        {
            shared.collect_aof_history();
        }
        let cfg = shared.config.read();
        if argv[2..].iter().step_by(2).any(|o| {
            ["proc-title-template", "port", "bind", "unixsocket"]
                .iter()
                .any(|n| eq(o, n))
        }) {
            crate::proctitle::update(&cfg);
        }
        *shared.notify.write() =
            crate::notify::parse_flags(&cfg.get("notify-keyspace-events").unwrap_or_default())
                .unwrap_or_default();
        apply_core_config(&cfg, store);
        crate::busy_poll::configure(cfg.get_i64("busy-poll-us"));
        drop(cfg);
        // A lower maxmemory takes effect at once, as in Redis: keys are
        // evicted now under the policy, not at the next write.
        if argv[2..].iter().step_by(2).any(|o| eq(o, "maxmemory")) {
            let _ = crate::evict::make_room(shared, store);
        }
        // So does a lower client limit (or a lower maxmemory it is a
        // share of): the largest clients are closed now.
        if argv[2..]
            .iter()
            .step_by(2)
            .any(|o| eq(o, "maxmemory-clients") || eq(o, "maxmemory"))
        {
            crate::client_evict::evict(shared);
        }
        if argv[2..].iter().step_by(2).any(|o| eq(o, "requirepass")) {
            let pass = shared.config.read().get("requirepass").unwrap_or_default();
            shared.acl.set_requirepass(&pass);
        }
        Reply::Ok
    } else if eq(sub, "resetstat") && n == 2 {
        for c in [
            &shared.stats.commands,
            &shared.stats.connections,
            &shared.stats.expired_keys,
            &shared.stats.expired_members,
            &shared.stats.rejected,
            &shared.stats.net_in,
            &shared.stats.net_out,
            &shared.stats.pubsub_messages,
            &shared.stats.keyspace_hits,
            &shared.stats.keyspace_misses,
            &crate::server::LAZYFREED,
            &crate::evict::EVICTED,
            &crate::client_evict::EVICTED,
        ] {
            c.store(0, Ordering::Relaxed);
        }
        crate::cmdstats::reset();
        crate::figures::reset();
        Reply::Ok
    } else if eq(sub, "rewrite") && n == 2 {
        rewrite_config(shared, false)
    } else if eq(sub, "help") && n == 2 {
        Reply::help(&[
            "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET <pattern>",
            "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>",
            "    Set the configuration <directive> to <value>.",
            "RESETSTAT",
            "    Reset statistics reported by the INFO command.",
            "REWRITE",
            "    Rewrite the configuration file.",
            "HELP",
            "    Prints this help.",
        ])
    } else if [&b"get"[..], b"set", b"resetstat", b"rewrite", b"help"]
        .iter()
        .any(|s| sub.eq_ignore_ascii_case(s))
    {
        err(format!(
            "ERR wrong number of arguments for 'config|{}' command",
            lossy(sub).to_ascii_lowercase()
        ))
    } else {
        unknown_subcommand(sub, "config").into()
    }
}

/// CONFIG REWRITE (and DEBUG CONFIG-REWRITE-FORCE-ALL, which writes every
/// option, defaults included, and words its errors as Redis's DEBUG does:
/// without a config file Redis's write fails with `Bad address`).
pub fn rewrite_config(shared: &Shared, force_all: bool) -> Reply {
    let users = shared.acl.describe_all();
    let cfg = shared.config.read();
    let Some(f) = &cfg.file else {
        return err(if force_all {
            "ERR CONFIG-REWRITE-FORCE-ALL failed: Bad address"
        } else {
            "ERR The server is running without a config file"
        });
    };
    let text = cfg.rewrite_text(
        &std::fs::read_to_string(f).unwrap_or_default(),
        &users,
        force_all,
    );
    match std::fs::write(f, text) {
        Ok(()) => Reply::Ok,
        Err(e) if force_all => err(format!("ERR CONFIG-REWRITE-FORCE-ALL failed: {e}")),
        Err(e) => err(format!("ERR Rewriting config file: {e}")),
    }
}
