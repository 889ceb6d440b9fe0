//! CONFIG, COMMAND and DEBUG.

use bytes::Bytes;
use ebb_core::args::{parse_f64, parse_i64};
use ebb_core::error::unknown_subcommand;
use ebb_core::table::flag;
use ebb_core::{CommandSpec, Error, Reply, Store};
use parking_lot::MutexGuard;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::conn::Session;
use crate::server::{apply_core_config, Shared};
use ebb_core::glob::glob_match;

type Guard<'a> = Option<MutexGuard<'a, Store>>;

fn eq(a: &[u8], b: &str) -> bool {
    a.eq_ignore_ascii_case(b.as_bytes())
}

fn err(s: impl Into<String>) -> Reply {
    Reply::Error(s.into().into())
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// CONFIG GET/SET/RESETSTAT/REWRITE/HELP.
pub fn config<'a>(shared: &'a Arc<Shared>, guard: &mut Guard<'a>, argv: &[Bytes]) -> Reply {
    let sub = &argv[1];
    let n = argv.len();
    if eq(sub, "get") && n >= 3 {
        let cfg = shared.config.read();
        let mut seen = std::collections::BTreeMap::new();
        for pat in &argv[2..] {
            for (k, v) in cfg.matching(pat) {
                let v = if k == "notify-keyspace-events" {
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
    } else if eq(sub, "set") && n >= 4 && n.is_multiple_of(2) {
        let mut cfg = shared.config.write();
        let mut next = cfg.clone();
        let mut names = std::collections::HashSet::new();
        for pair in argv[2..].chunks(2) {
            let name = lossy(&pair[0]).to_ascii_lowercase();
            if !names.insert(name.clone()) {
                return err(format!("ERR CONFIG SET failed (possibly related to argument '{name}') - duplicate parameter"));
            }
            if let Err(e) = next.set(&name, &lossy(&pair[1])) {
                if e.starts_with("Bad directive") {
                    return err(format!(
                        "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
                    ));
                }
                return err(format!(
                    "ERR CONFIG SET failed (possibly related to argument '{name}') - {e}"
                ));
            }
        }
        // Options Redis 7.0 fixes at start: refused whatever the value.
        const IMMUTABLE: &[&str] = &[
            "aclfile",
            "always-show-logo",
            "appenddirname",
            "appendfilename",
            "cluster-config-file",
            "cluster-enabled",
            "cluster-port",
            "daemonize",
            "disable-thp",
            "enable-debug-command",
            "enable-module-command",
            "enable-protected-configs",
            "io-threads-do-reads",
            "logfile",
            "pidfile",
            "rdbchecksum",
            "replicaof",
            "slaveof",
            "set-proc-title",
            "supervised",
            "syslog-enabled",
            "syslog-facility",
            "syslog-ident",
            "tcp-backlog",
            "unixsocket",
            "unixsocketperm",
        ];
        if let Some(name) = argv[2..]
            .chunks(2)
            .map(|p| lossy(&p[0]).to_ascii_lowercase())
            .find(|n| IMMUTABLE.contains(&n.as_str()))
        {
            return err(format!(
                "ERR CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config"
            ));
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
        let store = guard.get_or_insert_with(|| shared.store.lock());
        if aof_now && !aof_was {
            if let Err(e) = shared.enable_aof(store) {
                return err(format!(
                    "ERR CONFIG SET failed (possibly related to argument 'appendonly') - {e}"
                ));
            }
        } else if !aof_now && aof_was {
            if let Some(a) = shared.aof.lock().as_mut() {
                let _ = a.flush();
                let _ = a.sync();
            }
            *shared.aof.lock() = None;
        }
        if let Some(a) = shared.aof.lock().as_mut() {
            a.fsync = crate::persist::aof::Fsync::parse(&fsync);
        }
        let cfg = shared.config.read();
        *shared.notify.write() =
            crate::notify::parse_flags(&cfg.get("notify-keyspace-events").unwrap_or_default())
                .unwrap_or_default();
        apply_core_config(&cfg, store);
        drop(cfg);
        // A lower maxmemory takes effect at once, as in Redis: keys are
        // evicted now under the policy, not at the next write.
        if argv[2..].iter().step_by(2).any(|o| eq(o, "maxmemory")) {
            let _ = crate::evict::make_room(shared, store);
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
        ] {
            c.store(0, Ordering::Relaxed);
        }
        crate::cmdstats::reset();
        Reply::Ok
    } else if eq(sub, "rewrite") && n == 2 {
        let cfg = shared.config.read();
        match &cfg.file {
            None => err("ERR The server is running without a config file"),
            Some(f) => match std::fs::write(f, cfg.rewrite_text()) {
                Ok(()) => Reply::Ok,
                Err(e) => err(format!("ERR Rewriting config file: {e}")),
            },
        }
    } else if eq(sub, "help") && n == 2 {
        Reply::bulks(
            [
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
            ]
            .iter()
            .map(|s| Bytes::from_static(s.as_bytes())),
        )
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

fn acl_categories(spec: &CommandSpec) -> Vec<Reply> {
    categories(spec).into_iter().map(Reply::simple).collect()
}

/// The ACL categories of a command, as Redis 7.0 files it (`@read`, …).
pub fn categories(spec: &CommandSpec) -> Vec<&'static str> {
    if spec.group == "scripting" && !matches!(spec.name, "script" | "function") {
        // Scripts may do anything: Redis files them under neither @read
        // nor @write.
        return vec!["@slow", "@scripting"];
    }
    // Where Redis files a command under categories other than its group's.
    let mut cats: Vec<&'static str> = match spec.name {
        "client" | "config" | "pubsub" | "object" | "memory" | "time" | "slowlog" | "latency"
        | "acl" => {
            vec![]
        }
        "command" => vec!["@connection"],
        "info" => vec!["@dangerous"],
        "lastsave" | "role" => vec!["@admin", "@dangerous"],
        "keys" | "restore" => vec!["@keyspace", "@dangerous"],
        "dbsize" => vec!["@keyspace"],
        "flushdb" | "flushall" | "swapdb" => vec!["@keyspace", "@dangerous"],
        "sort" | "sort_ro" => vec!["@set", "@sortedset", "@list", "@dangerous"],
        _ => match spec.group {
            "bitmap" => vec!["@bitmap"],
            "string" => vec!["@string"],
            "list" => vec!["@list"],
            "hash" => vec!["@hash"],
            "set" => vec!["@set"],
            "sorted-set" | "zset" => vec!["@sortedset"],
            "generic" => vec!["@keyspace"],
            "pubsub" => vec!["@pubsub"],
            "transactions" => vec!["@transaction"],
            "connection" => vec!["@connection"],
            "server" => vec!["@admin"],
            _ => vec![],
        },
    };
    let by_flag = [
        (spec.is_write(), "@write"),
        (spec.has(flag::READONLY), "@read"),
        (spec.has(flag::FAST), "@fast"),
        (!spec.has(flag::FAST), "@slow"),
        (spec.has(flag::BLOCKING), "@blocking"),
        (spec.has(flag::ADMIN), "@dangerous"),
    ];
    for (on, cat) in by_flag {
        if on && !cats.contains(&cat) {
            cats.push(cat);
        }
    }
    cats
}

fn command_info(spec: &CommandSpec) -> Reply {
    let flags = spec
        .flags
        .split_ascii_whitespace()
        .map(|f| Reply::Simple(f.to_string().into()))
        .collect();
    Reply::Array(vec![
        Reply::text(spec.name),
        Reply::Int(spec.arity as i64),
        Reply::Set(flags),
        Reply::Int(spec.first_key as i64),
        Reply::Int(spec.last_key as i64),
        Reply::Int(spec.step as i64),
        Reply::Set(acl_categories(spec)),
        Reply::Array(vec![]),
        Reply::Array(vec![]),
        Reply::Array(vec![]),
    ])
}

fn arg_docs(a: &ebb_core::docs::Arg) -> Reply {
    let mut m = vec![
        (Reply::text("name"), Reply::text(a.name.as_str())),
        (Reply::text("type"), Reply::text(a.kind.as_str())),
    ];
    if let Some(i) = a.key_spec {
        m.push((Reply::text("key_spec_index"), Reply::Int(i as i64)));
    }
    if let Some(t) = &a.token {
        m.push((Reply::text("token"), Reply::text(t.as_str())));
    }
    let flags: Vec<Reply> = [
        (a.optional, "optional"),
        (a.multiple, "multiple"),
        (a.multiple_token, "multiple_token"),
    ]
    .into_iter()
    .filter(|f| f.0)
    .map(|f| Reply::simple(f.1))
    .collect();
    if !flags.is_empty() {
        m.push((Reply::text("flags"), Reply::Set(flags)));
    }
    if !a.args.is_empty() {
        m.push((
            Reply::text("arguments"),
            Reply::Array(a.args.iter().map(arg_docs).collect()),
        ));
    }
    Reply::Map(m)
}

/// The docs map of a command or subcommand: summary, since, group, then its
/// arguments and subcommands when it has any.
fn docs_map(
    summary: &str,
    group: &str,
    doc: Option<ebb_core::docs::CommandDoc>,
) -> Vec<(Reply, Reply)> {
    let mut m = vec![
        (Reply::text("summary"), Reply::text(summary)),
        (
            Reply::text("since"),
            Reply::text(doc.map_or("1.0.0", |d| d.since)),
        ),
        (Reply::text("group"), Reply::text(group)),
    ];
    if let Some(d) = doc {
        let args = d.args();
        if !args.is_empty() {
            m.push((
                Reply::text("arguments"),
                Reply::Array(args.iter().map(arg_docs).collect()),
            ));
        }
    }
    m
}

fn command_docs(spec: &CommandSpec) -> Reply {
    let mut m = docs_map(spec.summary, spec.group, ebb_core::docs::lookup(spec.name));
    let subs = ebb_core::docs::subcommands(spec.name);
    if !subs.is_empty() {
        m.push((
            Reply::text("subcommands"),
            Reply::Map(
                subs.into_iter()
                    .map(|d| {
                        (
                            Reply::text(d.name),
                            Reply::Map(docs_map(d.summary, spec.group, Some(d))),
                        )
                    })
                    .collect(),
            ),
        ));
    }
    Reply::Map(m)
}

/// COMMAND [COUNT | INFO | DOCS | LIST | GETKEYS | HELP].
pub fn command(argv: &[Bytes]) -> Reply {
    let all = ebb_core::table::all();
    if argv.len() == 1 {
        return Reply::Array(all.iter().map(command_info).collect());
    }
    let sub = &argv[1];
    if eq(sub, "count") && argv.len() == 2 {
        Reply::Int(all.len() as i64)
    } else if eq(sub, "info") {
        if argv.len() == 2 {
            return Reply::Array(all.iter().map(command_info).collect());
        }
        Reply::Array(
            argv[2..]
                .iter()
                .map(|n| ebb_core::lookup(n).map_or(Reply::NilArray, command_info))
                .collect(),
        )
    } else if eq(sub, "docs") {
        let specs: Vec<&CommandSpec> = if argv.len() == 2 {
            all.iter().collect()
        } else {
            argv[2..]
                .iter()
                .filter_map(|n| ebb_core::lookup(n))
                .collect()
        };
        Reply::Map(
            specs
                .into_iter()
                .map(|s| (Reply::text(s.name), command_docs(s)))
                .collect(),
        )
    } else if eq(sub, "list") {
        // No filter, or FILTERBY PATTERN|ACLCAT|MODULE <value>.
        let filter = match argv.len() {
            2 => None,
            5 if eq(&argv[2], "filterby")
                && ["pattern", "aclcat", "module"]
                    .iter()
                    .any(|t| eq(&argv[3], t)) =>
            {
                Some((&argv[3], &argv[4]))
            }
            _ => return Error::Syntax.into(),
        };
        let mut names: Vec<&'static str> = Vec::new();
        for spec in all.iter() {
            match filter {
                // Redis lists subcommands as `container|sub` too; a pattern
                // is matched against both kinds of names afterwards.
                None => {
                    names.push(spec.name);
                    names.extend(
                        ebb_core::docs::subcommands(spec.name)
                            .iter()
                            .map(|d| d.name),
                    );
                }
                Some((kind, _)) if eq(kind, "pattern") => {
                    names.push(spec.name);
                    names.extend(
                        ebb_core::docs::subcommands(spec.name)
                            .iter()
                            .map(|d| d.name),
                    );
                }
                Some((kind, v)) if eq(kind, "aclcat") => {
                    let cat = format!("@{}", lossy(v).to_ascii_lowercase());
                    if acl_categories(spec)
                        .iter()
                        .any(|c| matches!(c, Reply::Simple(t) if *t == cat))
                    {
                        names.push(spec.name);
                    }
                }
                // No modules are loaded.
                Some(_) => {}
            }
        }
        if let Some((kind, v)) = filter {
            if eq(kind, "pattern") {
                names.retain(|n| glob_match(v, n.as_bytes(), true));
            }
        }
        Reply::bulks(names.into_iter().map(|n| Bytes::from_static(n.as_bytes())))
    } else if eq(sub, "getkeys") && argv.len() >= 3 {
        let Some(spec) = ebb_core::lookup(&argv[2]) else {
            return err("ERR Invalid command specified");
        };
        let args = &argv[2..];
        if !spec.arity_ok(args.len()) {
            return err("ERR Invalid number of arguments specified for command");
        }
        if (spec.first_key == 0 && spec.keys.is_none())
            || ebb_core::cmd::server::channels_not_keys(spec.name)
        {
            return err("ERR The command has no key arguments");
        }
        let pos = spec.key_positions(args);
        if pos.is_empty() {
            // EVAL, FCALL and the like may well name no key.
            if spec.has_flag("no_mandatory_keys") {
                return Reply::Array(Vec::new());
            }
            return err("ERR Invalid arguments specified for command");
        }
        Reply::Array(
            pos.into_iter()
                .filter_map(|i| args.get(i).cloned())
                .map(Reply::Bulk)
                .collect(),
        )
    } else if eq(sub, "help") && argv.len() == 2 {
        Reply::bulks(
            [
                "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "(no subcommand)",
                "    Return details about all Redis commands.",
                "COUNT",
                "    Return the total number of commands in this Redis server.",
                "LIST",
                "    Return a list of all commands in this Redis server.",
                "INFO [<command-name> ...]",
                "    Return details about multiple Redis commands.",
                "DOCS [<command-name> ...]",
                "    Return documentation details about multiple Redis commands.",
                "GETKEYS <full-command>",
                "    Return the keys from a full Redis command.",
                "HELP",
                "    Prints this help.",
            ]
            .iter()
            .map(|s| Bytes::from_static(s.as_bytes())),
        )
    } else {
        unknown_subcommand(sub, "command").into()
    }
}

/// DEBUG SLEEP / SET-ACTIVE-EXPIRE / OBJECT / DIGEST / DIGEST-VALUE / RELOAD / HELP.
pub fn debug<'a>(
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    argv: &[Bytes],
) -> Reply {
    let sub = &argv[1];
    if eq(sub, "sleep") && argv.len() == 3 {
        let secs = parse_f64(&argv[2]).unwrap_or(0.0).max(0.0);
        // Like Redis, DEBUG SLEEP stalls the whole keyspace.
        let _store = guard.get_or_insert_with(|| shared.store.lock());
        std::thread::sleep(std::time::Duration::from_secs_f64(secs.min(3600.0)));
        Reply::Ok
    } else if eq(sub, "set-active-expire") && argv.len() == 3 {
        match parse_i64(&argv[2]) {
            Some(v) => {
                shared.active_expire.store(v != 0, Ordering::Relaxed);
                Reply::Ok
            }
            None => Error::NotInteger.into(),
        }
    } else if eq(sub, "set-disable-deny-scripts") && argv.len() == 3 {
        match parse_i64(&argv[2]) {
            Some(v) => {
                shared.scripts_any_command.store(v != 0, Ordering::Relaxed);
                Reply::Ok
            }
            None => Error::NotInteger.into(),
        }
    } else if eq(sub, "object") && argv.len() == 3 {
        // Looks at the table as it is: a key past its TTL that nobody has
        // touched yet is still shown, as in Redis.
        let store = guard.get_or_insert_with(|| shared.store.lock());
        match store.dbs[s.db].raw_get(&argv[2]) {
            Some(e) => {
                let enc = ebb_core::cmd::keys_object::encoding_name(&e.value, &store.cfg);
                Reply::Simple(
                    format!("Value at:0x0 refcount:1 encoding:{enc} serializedlength:0 lru:0 lru_seconds_idle:0").into(),
                )
            }
            None => err("ERR no such key"),
        }
    } else if eq(sub, "digest") && argv.len() == 2 {
        use ebb_core::cmd::debug_digest;
        let store = guard.get_or_insert_with(|| shared.store.lock());
        let d = debug_digest::dataset_digest(store.dbs.iter(), crate::server::now_ms());
        Reply::Simple(lossy(&debug_digest::hex(&d)).into())
    } else if eq(sub, "digest-value") {
        use ebb_core::cmd::debug_digest;
        let store = guard.get_or_insert_with(|| shared.store.lock());
        let now = crate::server::now_ms();
        Reply::Array(
            argv[2..]
                .iter()
                .map(|k| {
                    let d = debug_digest::key_digest(&store.dbs[s.db], k, now);
                    Reply::Simple(lossy(&debug_digest::hex(&d)).into())
                })
                .collect(),
        )
    } else if eq(sub, "quicklist-packed-threshold") && argv.len() == 3 {
        // ebb keeps every list element the same way whatever its size, so
        // the size above which Redis gives an element a node of its own
        // changes nothing here; the argument is still checked as Redis does.
        let size = std::str::from_utf8(&argv[2])
            .ok()
            .and_then(crate::config::parse_memory);
        match size {
            Some(n) if n < 1 << 32 => Reply::Ok,
            _ => err("ERR argument must be a memory value bigger than 1 and smaller than 4gb"),
        }
    } else if eq(sub, "loadaof") && argv.len() == 2 {
        // Empties the dataset and loads it back from the append only file
        // (written by the AOF or by BGREWRITEAOF).
        shared.flush_aof();
        let data = match std::fs::read(shared.aof_path()) {
            Ok(d) => d,
            Err(e) => return err(format!("ERR Error reading the append only file: {e}")),
        };
        let store = guard.get_or_insert_with(|| shared.store.lock());
        for db in store.dbs.iter_mut() {
            db.clear();
        }
        match crate::persist::replay(store, &data, crate::server::now_ms()) {
            Ok(_) => Reply::Ok,
            Err(_) => err("ERR Bad file format reading the append only file"),
        }
    } else if eq(sub, "reload") {
        debug_reload(shared, guard, argv)
    } else if eq(sub, "protocol") && argv.len() == 3 {
        // Reached from scripts only (a connection's DEBUG PROTOCOL writes
        // its reply itself).
        crate::commands::protocol_sample(&argv[2], false).1
    } else if eq(sub, "populate") && (3..=5).contains(&argv.len()) {
        populate(s, shared, guard, argv)
    } else if eq(sub, "help") && argv.len() == 2 {
        Reply::bulks(
            [
                "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "DIGEST",
                "    Output a hex signature representing the current DB content.",
                "DIGEST-VALUE <key> [<key> ...]",
                "    Output a hex signature of the values of all the specified keys.",
                "LOADAOF",
                "    Flush the AOF buffers on disk and reload the AOF in memory.",
                "OBJECT <key>",
                "    Show low level info about the `key` and associated value.",
                "POPULATE <count> [<prefix>] [<size>]",
                "    Create <count> string keys named key:<num>. If <prefix> is specified then",
                "    it is used instead of the 'key' prefix. These are not propagated to",
                "    replicas. Cache master and replica results.",
                "PROTOCOL <type>",
                "    Reply with a test value of the specified type. <type> can be: string,",
                "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
                "    true, false.",
                "QUICKLIST-PACKED-THRESHOLD <size>",
                "    Sets the threshold for elements to be inserted as plain vs packed nodes",
                "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
                "RELOAD",
                "    Save the dataset to a snapshot, empty it and load it back.",
                "SET-ACTIVE-EXPIRE <0|1>",
                "    Setting it to 0 disables expiring keys (and members) in background.",
                "SET-DISABLE-DENY-SCRIPTS <0|1>",
                "    Setting it to 1 lets scripts run commands that they normally may not.",
                "SLEEP <seconds>",
                "    Stop the server for <seconds>. Decimals allowed.",
                "HELP",
                "    Prints this help.",
            ]
            .iter()
            .map(|s| Bytes::from_static(s.as_bytes())),
        )
    } else {
        ebb_core::error::subcommand_syntax(sub, "debug").into()
    }
}

/// DEBUG POPULATE count [prefix] [size]: creates string keys
/// `<prefix>:<n>` (prefix `key`) holding `value:<n>`, or that text padded
/// with zero bytes (or cut) to `size` bytes, for n in 0..count; keys that
/// exist are left alone. Unlike Redis (which skips its log here) the keys
/// are logged as SET commands when the AOF is on, so a restart keeps them.
fn populate<'a>(
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    argv: &[Bytes],
) -> Reply {
    let positive = |b: &Bytes| parse_i64(b).filter(|n| *n >= 0);
    let Some(count) = positive(&argv[2]) else {
        return err("ERR value is out of range, must be positive");
    };
    let size = match argv.get(4) {
        None => None,
        Some(b) => match positive(b) {
            Some(0) => None,
            Some(n) => Some(n as usize),
            None => return err("ERR value is out of range, must be positive"),
        },
    };
    let prefix = argv.get(3).map_or(&b"key"[..], |p| &p[..]);
    let Some(set) = ebb_core::lookup(b"set") else {
        return err("ERR no SET command");
    };
    let store = guard.get_or_insert_with(|| shared.store.lock());
    let mut cmd = vec![
        Bytes::from_static(b"SET"),
        Bytes::new(),
        Bytes::new(),
        Bytes::from_static(b"NX"),
    ];
    for n in 0..count {
        let mut key = prefix.to_vec();
        key.push(b':');
        key.extend_from_slice(n.to_string().as_bytes());
        let text = format!("value:{n}");
        let value = match size {
            None => text.into_bytes(),
            Some(len) => {
                let mut v = vec![0u8; len];
                let k = len.min(text.len());
                v[..k].copy_from_slice(&text.as_bytes()[..k]);
                v
            }
        };
        cmd[1] = Bytes::from(key);
        cmd[2] = Bytes::from(value);
        if let Err(e) = s.run_core(store, set, &cmd, false) {
            return e.into();
        }
    }
    Reply::Ok
}

/// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: saves a snapshot (unless
/// NOSAVE) and loads it back, into an emptied dataset (unless NOFLUSH, when
/// a key or library already present fails the load, or with MERGE is
/// replaced).
fn debug_reload<'a>(
    shared: &'a Arc<Shared>,
    guard: &mut Option<parking_lot::MutexGuard<'a, Store>>,
    argv: &[Bytes],
) -> Reply {
    let (mut merge, mut flush, mut save) = (false, true, true);
    for opt in &argv[2..] {
        if eq(opt, "merge") {
            merge = true;
        } else if eq(opt, "noflush") {
            flush = false;
        } else if eq(opt, "nosave") {
            save = false;
        } else {
            return err("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
        }
    }
    let store = guard.get_or_insert_with(|| shared.store.lock());
    let now = crate::server::now_ms();
    let data = if save {
        let data = crate::persist::snapshot::encode(store, now);
        if let Err(e) = crate::persist::snapshot::write_file(&shared.snapshot_path(), &data) {
            return err(format!("ERR Error trying to save the DB: {e}"));
        }
        data
    } else {
        match std::fs::read(shared.snapshot_path()) {
            Ok(d) => d,
            Err(_) => return err("ERR Error trying to load the RDB dump"),
        }
    };
    let Ok(body) = crate::persist::snapshot::decode(&data) else {
        return err("ERR Error trying to load the RDB dump");
    };
    if flush {
        for db in store.dbs.iter_mut() {
            db.clear();
        }
        store.functions.clear();
        return match crate::persist::replay(store, body, now) {
            Ok(_) => Reply::Ok,
            Err(_) => err("ERR Error trying to load the RDB dump"),
        };
    }
    // Into a scratch store first, then merged.
    let mut loaded = Store::new(store.dbs.len());
    loaded.cfg = store.cfg.clone();
    if crate::persist::replay(&mut loaded, body, now).is_err() {
        return err("ERR Error trying to load the RDB dump");
    }
    if !merge {
        let clash = loaded
            .functions
            .iter()
            .any(|(n, _)| store.functions.get(n).is_some())
            || loaded
                .dbs
                .iter()
                .zip(&store.dbs)
                .any(|(l, d)| l.raw_iter().any(|(k, _)| d.raw_get(k).is_some()));
        if clash {
            return err("ERR Error trying to load the RDB dump");
        }
    }
    for (name, code) in loaded.functions.iter() {
        store.functions.insert(name.clone(), code.clone());
    }
    for (l, d) in loaded.dbs.iter_mut().zip(store.dbs.iter_mut()) {
        let keys: Vec<Bytes> = l.keys().map(Bytes::copy_from_slice).collect();
        for k in keys {
            if let Some(e) = l.remove(&k) {
                d.insert_entry(&k, e);
            }
        }
    }
    Reply::Ok
}
