//! CONFIG and COMMAND (DEBUG is in debug_cmd.rs).

use bytes::Bytes;
use ebb_core::error::unknown_subcommand;
use ebb_core::table::flag;
use ebb_core::{CommandSpec, Error, Reply, Store};
use parking_lot::MutexGuard;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::server::{apply_core_config, Shared};
use ebb_core::glob::glob_match;
use ebb_core::keyspecs;

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
        let store = guard.get_or_insert_with(|| shared.store.lock());
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
        | "acl" | "cluster" | "module" => {
            vec![]
        }
        "command" | "readonly" | "readwrite" | "asking" | "wait" => vec!["@connection"],
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
    // Redis lists a command's categories in its category order.
    cats.sort_by_key(|c| {
        crate::acl::CATEGORIES
            .iter()
            .position(|k| Some(*k) == c.strip_prefix('@'))
    });
    cats
}

/// Space-separated words as a set: simple strings, or bulk strings (Redis
/// writes a command's flags the first way, its tips the second).
fn word_set(words: &'static str, bulk: bool) -> Reply {
    let word = |w: &'static str| match bulk {
        true => Reply::Bulk(Bytes::from_static(w.as_bytes())),
        false => Reply::simple(w),
    };
    Reply::Set(words.split_ascii_whitespace().map(word).collect())
}

/// A key specification as COMMAND INFO shows it.
fn key_spec_reply(spec: &keyspecs::KeySpec) -> Reply {
    let typed = |kind: &str, fields: Vec<(&str, i64)>| {
        Reply::Map(vec![
            (Reply::text("type"), Reply::text(kind)),
            (
                Reply::text("spec"),
                Reply::Map(
                    fields
                        .into_iter()
                        .map(|(k, v)| (Reply::text(k), Reply::Int(v)))
                        .collect(),
                ),
            ),
        ])
    };
    let begin = match spec.begin {
        keyspecs::Begin::Index(i) => typed("index", vec![("index", i)]),
        keyspecs::Begin::Unknown => typed("unknown", vec![]),
    };
    let find = match spec.find {
        keyspecs::Find::Range { last, step, limit } => typed(
            "range",
            vec![("lastkey", last), ("keystep", step), ("limit", limit)],
        ),
        keyspecs::Find::KeyNum { index, first, step } => typed(
            "keynum",
            vec![("keynumidx", index), ("firstkey", first), ("keystep", step)],
        ),
        keyspecs::Find::Unknown => typed("unknown", vec![]),
    };
    Reply::Map(vec![
        (
            Reply::text("flags"),
            Reply::Set(spec.flags.iter().map(|f| Reply::simple(f)).collect()),
        ),
        (Reply::text("begin_search"), begin),
        (Reply::text("find_keys"), find),
    ])
}

fn key_specs_reply(specs: &[keyspecs::KeySpec]) -> Reply {
    Reply::Set(specs.iter().map(key_spec_reply).collect())
}

/// One COMMAND INFO entry: name, arity, flags, key positions, ACL
/// categories, tips, key specifications and subcommands.
#[allow(clippy::too_many_arguments)]
fn info_entry(
    name: &str,
    arity: i32,
    flags: &'static str,
    keys: (i32, i32, i32),
    categories: Vec<Reply>,
    tips: &'static str,
    specs: &[keyspecs::KeySpec],
    subs: Reply,
) -> Reply {
    Reply::Array(vec![
        Reply::text(name),
        Reply::Int(arity as i64),
        word_set(flags, false),
        Reply::Int(keys.0 as i64),
        Reply::Int(keys.1 as i64),
        Reply::Int(keys.2 as i64),
        Reply::Set(categories),
        word_set(tips, true),
        key_specs_reply(specs),
        subs,
    ])
}

/// COMMAND INFO's entry of a subcommand (`container|sub`).
fn subcommand_info(sub: &keyspecs::SubInfo) -> Reply {
    let categories = crate::acl::sub_categories(sub.name)
        .unwrap_or("")
        .split_ascii_whitespace()
        .map(|c| Reply::Simple(format!("@{c}").into()))
        .collect();
    info_entry(
        sub.name,
        sub.arity,
        sub.flags,
        (sub.first_key, sub.last_key, sub.step),
        categories,
        sub.tips,
        &sub.key_specs(),
        Reply::Set(vec![]),
    )
}

/// The subcommands of a container that COMMAND INFO describes.
fn subcommands_of(spec: &CommandSpec) -> Vec<keyspecs::SubInfo> {
    ebb_core::docs::subcommands(spec.name)
        .iter()
        .filter_map(|d| keyspecs::subcommand(d.name))
        .collect()
}

fn command_info(spec: &CommandSpec) -> Reply {
    let subs = subcommands_of(spec);
    info_entry(
        spec.name,
        spec.arity,
        spec.flags,
        (spec.first_key, spec.last_key, spec.step),
        acl_categories(spec),
        keyspecs::tips(spec.name),
        &keyspecs::key_specs(spec.name),
        if subs.is_empty() {
            Reply::Set(vec![])
        } else {
            Reply::Array(subs.iter().map(subcommand_info).collect())
        },
    )
}

/// COMMAND INFO's entry for a name: a command, or `container|sub`.
fn info_of(name: &[u8]) -> Reply {
    if let Some(spec) = ebb_core::lookup(name) {
        return command_info(spec);
    }
    let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
    match lower.split_once('|') {
        Some((container, _))
            if ebb_core::lookup(container.as_bytes()).is_some()
                && ebb_core::docs::lookup(&lower).is_some() =>
        {
            keyspecs::subcommand(&lower).map_or(Reply::Nil, |s| subcommand_info(&s))
        }
        // A null bulk in RESP2, as Redis answers for a name it does not know.
        _ => Reply::Nil,
    }
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

/// The positions of the keys in a full command line (`args`, the
/// command's name first), or COMMAND GETKEYS's error.
fn key_positions_of(args: &[&[u8]]) -> Result<Vec<usize>, Reply> {
    let Some(spec) = ebb_core::lookup(args[0]) else {
        return Err(err("ERR Invalid command specified"));
    };
    // A container's subcommand is looked up as Redis does, and judged on
    // its own: whether it has keys, then its arity.
    let sub = if args.len() >= 2 && !ebb_core::docs::subcommands(spec.name).is_empty() {
        let full = format!("{}|{}", spec.name, lossy(args[1]).to_ascii_lowercase());
        match keyspecs::subcommand(&full) {
            Some(s) => Some(s),
            None => return Err(err("ERR Invalid command specified")),
        }
    } else {
        None
    };
    let (name, has_keys, arity_ok) = match &sub {
        Some(s) => {
            let argc = args.len() as i32;
            let fits = if s.arity >= 0 {
                argc == s.arity
            } else {
                argc >= -s.arity
            };
            let keyed = s.key_specs().iter().any(|k| !k.flags.contains(&"not_key"));
            (s.name.to_string(), keyed, fits)
        }
        None => (
            spec.name.to_string(),
            (spec.first_key != 0 || spec.keys.is_some())
                && !ebb_core::cmd::server::channels_not_keys(spec.name),
            spec.arity_ok(args.len()),
        ),
    };
    if !has_keys {
        return Err(err("ERR The command has no key arguments"));
    }
    if !arity_ok {
        return Err(err("ERR Invalid number of arguments specified for command"));
    }
    let pos = match keyspecs::positions_by_specs(&name, args) {
        Some(p) => p,
        // A key count that does not fit the arguments names no key, as in
        // Redis's own key finders for such commands.
        None if keyspecs::key_specs(&name)
            .iter()
            .any(|k| matches!(k.find, keyspecs::Find::KeyNum { .. })) =>
        {
            Vec::new()
        }
        None => spec.key_positions(args),
    };
    // EVAL, FCALL and the like may well name no key.
    if pos.is_empty() && !spec.has_flag("no_mandatory_keys") {
        return Err(err("ERR Invalid arguments specified for command"));
    }
    Ok(pos)
}

/// COMMAND [COUNT | INFO | DOCS | LIST | GETKEYS | GETKEYSANDFLAGS | HELP].
pub fn command(argv: &[&[u8]]) -> Reply {
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
        Reply::Array(argv[2..].iter().map(|n| info_of(n)).collect())
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
            5 if eq(argv[2], "filterby")
                && ["pattern", "aclcat", "module"]
                    .iter()
                    .any(|t| eq(argv[3], t)) =>
            {
                Some((&argv[3], &argv[4]))
            }
            _ => return Error::Syntax.into(),
        };
        let names: Vec<&'static str> = match filter {
            // ACL CAT's list: commands and subcommands of the category.
            Some((kind, v)) if eq(kind, "aclcat") => {
                crate::acl::commands_in(&lossy(v).to_ascii_lowercase())
            }
            // No modules are loaded.
            Some((kind, _)) if eq(kind, "module") => Vec::new(),
            // Every command and subcommand (`container|sub`), matched
            // against the pattern if one is given.
            _ => all
                .iter()
                .flat_map(|spec| {
                    std::iter::once(spec.name).chain(
                        ebb_core::docs::subcommands(spec.name)
                            .into_iter()
                            .map(|d| d.name),
                    )
                })
                .filter(|name| filter.is_none_or(|(_, v)| glob_match(v, name.as_bytes(), true)))
                .collect(),
        };
        Reply::bulks(names.into_iter().map(|n| Bytes::from_static(n.as_bytes())))
    } else if (eq(sub, "getkeys") || eq(sub, "getkeysandflags")) && argv.len() >= 3 {
        let args = &argv[2..];
        let pos = match key_positions_of(args) {
            Ok(pos) => pos,
            Err(e) => return e,
        };
        let with_flags = eq(sub, "getkeysandflags");
        let name = ebb_core::lookup(args[0]).map_or("", |s| s.name);
        Reply::Array(
            pos.into_iter()
                .filter_map(|i| {
                    let key = Reply::Bulk(Bytes::copy_from_slice(args.get(i)?));
                    Some(if with_flags {
                        let flags = keyspecs::flags_at(name, args, i);
                        Reply::Array(vec![
                            key,
                            Reply::Set(flags.iter().map(|f| Reply::simple(f)).collect()),
                        ])
                    } else {
                        key
                    })
                })
                .collect(),
        )
    } else if eq(sub, "help") && argv.len() == 2 {
        Reply::help(&[
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
            "GETKEYSANDFLAGS <full-command>",
            "    Return the keys and the access flags from a full Redis command.",
            "HELP",
            "    Prints this help.",
        ])
    } else {
        unknown_subcommand(sub, "command").into()
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
