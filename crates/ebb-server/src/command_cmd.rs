//! COMMAND: INFO, DOCS, COUNT, LIST, GETKEYS(ANDFLAGS), HELP, from the one
//! command table, its key specifications and documentation.

use bytes::Bytes;
use ebb_core::error::unknown_subcommand;
use ebb_core::glob::glob_match;
use ebb_core::keyspecs;
use ebb_core::table::flag;
use ebb_core::{CommandSpec, Error, Reply};

use crate::admin::{eq, err, lossy};

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
        | "acl" | "cluster" | "module" | "lolwut" => {
            vec![]
        }
        "command" | "readonly" | "readwrite" | "asking" | "wait" => vec!["@connection"],
        "info" => vec!["@dangerous"],
        "lastsave" | "role" => vec!["@admin", "@dangerous"],
        "keys" | "restore" | "restore-asking" | "migrate" => vec!["@keyspace", "@dangerous"],
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

/// A key specification as COMMAND INFO shows it, its note first when Redis
/// gives one.
fn key_spec_reply(spec: &keyspecs::KeySpec, note: Option<&str>) -> Reply {
    let typed_with = |kind: &str, fields: Vec<(&str, Reply)>| {
        Reply::Map(vec![
            (Reply::text("type"), Reply::text(kind)),
            (
                Reply::text("spec"),
                Reply::Map(
                    fields
                        .into_iter()
                        .map(|(k, v)| (Reply::text(k), v))
                        .collect(),
                ),
            ),
        ])
    };
    let typed = |kind: &str, fields: Vec<(&str, i64)>| {
        typed_with(
            kind,
            fields
                .into_iter()
                .map(|(k, v)| (k, Reply::Int(v)))
                .collect(),
        )
    };
    let begin = match spec.begin {
        keyspecs::Begin::Index(i) => typed("index", vec![("index", i)]),
        keyspecs::Begin::Keyword { keyword, startfrom } => typed_with(
            "keyword",
            vec![
                ("keyword", Reply::text(keyword)),
                ("startfrom", Reply::Int(startfrom)),
            ],
        ),
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
    let mut fields = Vec::with_capacity(4);
    if let Some(n) = note {
        fields.push((Reply::text("notes"), Reply::text(n)));
    }
    fields.push((
        Reply::text("flags"),
        Reply::Set(spec.flags.iter().map(|f| Reply::simple(f)).collect()),
    ));
    fields.push((Reply::text("begin_search"), begin));
    fields.push((Reply::text("find_keys"), find));
    Reply::Map(fields)
}

/// The key specifications of command `name`.
fn key_specs_reply(name: &str, specs: &[keyspecs::KeySpec]) -> Reply {
    Reply::Set(
        specs
            .iter()
            .enumerate()
            .map(|(i, s)| key_spec_reply(s, keyspecs::notes(name, i)))
            .collect(),
    )
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
        key_specs_reply(name, specs),
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

/// COMMAND DOCS of one name: a command, or a subcommand as
/// `container|name`, under its full lower-case name.
fn docs_of(name: &[u8]) -> Option<(Reply, Reply)> {
    if let Some(spec) = ebb_core::lookup(name) {
        return Some((Reply::text(spec.name), command_docs(spec)));
    }
    let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
    let (container, _) = lower.split_once('|')?;
    let spec = ebb_core::lookup(container.as_bytes())?;
    let doc = ebb_core::docs::lookup(&lower)?;
    let docs = Reply::Map(docs_map(doc.summary, spec.group, Some(doc)));
    Some((Reply::text(lower.as_str()), docs))
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
        if argv.len() == 2 {
            return Reply::Map(
                all.iter()
                    .map(|s| (Reply::text(s.name), command_docs(s)))
                    .collect(),
            );
        }
        // Names it does not know are left out, as in Redis.
        Reply::Map(argv[2..].iter().filter_map(|n| docs_of(n)).collect())
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
