//! The ACL command: SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT,
//! GENPASS, DRYRUN, LOG, LOAD, SAVE, HELP (Redis 7.0's replies and errors).

use bytes::Bytes;
use ebb_core::args::parse_i64;
use ebb_core::Reply;
use rand::RngCore;
use std::sync::Arc;

use crate::acl::{Acl, Denied, CATEGORIES};
use crate::conn::Session;
use crate::server::{now_ms, Msg, Shared};

fn err(s: impl Into<String>) -> Reply {
    Reply::Error(s.into().into())
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Redis's reply to a subcommand given the wrong number of arguments.
fn syntax(argv: &[&[u8]]) -> Reply {
    ebb_core::error::subcommand_syntax(argv[1], "acl").into()
}

/// ACL and its subcommands (arity is checked before they run).
pub fn acl(s: &mut Session, shared: &Arc<Shared>, argv: &[&[u8]]) -> Reply {
    let sub = lossy(argv[1]).to_ascii_lowercase();
    let acl = &shared.acl;
    let n = argv.len();
    let fits = match sub.as_str() {
        "getuser" => n == 3,
        "list" | "users" | "whoami" | "load" | "save" | "help" => n == 2,
        "cat" | "genpass" | "log" => n <= 3,
        _ => true,
    };
    if !fits {
        return syntax(argv);
    }
    match sub.as_str() {
        "setuser" => {
            let name = &argv[2];
            if name.iter().any(|&c| c == b' ' || c == 0) {
                return err("ERR Usernames can't contain spaces or null characters");
            }
            let rules: Vec<&[u8]> = argv[3..].iter().map(|b| &b[..]).collect();
            match acl.set_user(name, &rules) {
                Ok(()) => {
                    shared.drop_forbidden_subscribers(name);
                    Reply::Ok
                }
                Err(e) => err(format!("ERR {}", e.replace(['\r', '\n'], " "))),
            }
        }
        "getuser" => match acl.user(argv[2]) {
            None => Reply::Nil,
            Some(u) => getuser(&u),
        },
        "deluser" => {
            if argv[2..].iter().any(|n| &n[..] == b"default") {
                return err("ERR The 'default' user cannot be removed");
            }
            let deleted = acl.delete_users(&argv[2..]);
            kill_clients_of(shared, &deleted);
            Reply::Int(deleted.len() as i64)
        }
        "list" => Reply::Array(acl.describe_all().into_iter().map(Reply::text).collect()),
        "users" => Reply::Array(acl.names().into_iter().map(Reply::Bulk).collect()),
        "whoami" => Reply::Bulk(s.user.name.clone()),
        "cat" => cat(argv),
        "genpass" => genpass(argv),
        "dryrun" => dryrun(acl, argv),
        "log" => log(shared, argv),
        "load" | "save" => {
            let path = shared.config.read().path_in_dir("aclfile");
            if path.is_empty() {
                return err(
                    "ERR This Redis instance is not configured to use an ACL file. You may want \
                     to specify users via the ACL SETUSER command and then issue a CONFIG \
                     REWRITE (assuming you have a Redis configuration file set) in order to \
                     store users in the Redis configuration.",
                );
            }
            if sub == "load" {
                match acl.load_file(&path) {
                    Ok(replaced) => {
                        kill_clients_of(shared, &replaced);
                        Reply::Ok
                    }
                    Err(e) => err(format!("ERR {}", e.replace(['\r', '\n'], " "))),
                }
            } else {
                match acl.save_file(&path) {
                    Ok(()) => Reply::Ok,
                    Err(_) => err("ERR There was an error trying to save the ACLs. Please check the server logs for more information"),
                }
            }
        }
        "help" => Reply::Array(
            [
                "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "CAT [<category>]",
                "    List all commands that belong to <category>, or all command categories",
                "    when no category is specified.",
                "DELUSER <username> [<username> ...]",
                "    Delete a list of users.",
                "DRYRUN <username> <command> [<arg> ...]",
                "    Returns whether the user can execute the given command without executing the command.",
                "GETUSER <username>",
                "    Get the user's details.",
                "GENPASS [<bits>]",
                "    Generate a secure 256-bit user password. The optional `bits` argument can",
                "    be used to specify a different size.",
                "LIST",
                "    Show users details in config file format.",
                "LOAD",
                "    Reload users from the ACL file.",
                "LOG [<count> | RESET]",
                "    Show the ACL log entries.",
                "SAVE",
                "    Save the current config to the ACL file.",
                "SETUSER <username> <attribute> [<attribute> ...]",
                "    Create or modify a user with the specified attributes.",
                "USERS",
                "    List all the registered usernames.",
                "WHOAMI",
                "    Return the current connection username.",
                "HELP",
                "    Prints this help.",
            ]
            .iter()
            .map(|l| Reply::Simple((*l).into()))
            .collect(),
        ),
        _ => ebb_core::error::unknown_subcommand(argv[1], "acl").into(),
    }
}

fn getuser(u: &crate::acl::User) -> Reply {
    let d = u.describe_parts();
    let mut fields = vec![
        (
            Reply::text("flags"),
            Reply::Set(d.flags.into_iter().map(Reply::text).collect()),
        ),
        (
            Reply::text("passwords"),
            Reply::Array(d.passwords.into_iter().map(Reply::text).collect()),
        ),
    ];
    fields.extend(selector_fields(d.root));
    fields.push((
        Reply::text("selectors"),
        Reply::Array(
            d.selectors
                .into_iter()
                .map(|s| Reply::Map(selector_fields(s)))
                .collect(),
        ),
    ));
    Reply::Map(fields)
}

/// A selector's commands, keys and channels, as ACL GETUSER shows them.
fn selector_fields(s: crate::acl::SelectorParts) -> Vec<(Reply, Reply)> {
    vec![
        (Reply::text("commands"), Reply::text(s.commands)),
        (Reply::text("keys"), Reply::text(s.keys)),
        (Reply::text("channels"), Reply::text(s.channels)),
    ]
}

/// Closes the connections of deleted users, as Redis does.
fn kill_clients_of(shared: &Shared, names: &[Bytes]) {
    if names.is_empty() {
        return;
    }
    for c in shared.clients.lock().values() {
        if names.iter().any(|n| *c.user.lock() == *n) {
            let _ = c.tx.send(Msg::Kill);
            c.kill.notify_one();
        }
    }
}

fn cat(argv: &[&[u8]]) -> Reply {
    match argv.get(2) {
        None if argv.len() == 2 => {
            Reply::Array(CATEGORIES.iter().map(|c| Reply::text(*c)).collect())
        }
        Some(c) if argv.len() == 3 => {
            let name = lossy(c).to_ascii_lowercase();
            if !CATEGORIES.contains(&name.as_str()) {
                return err(format!(
                    "ERR Unknown category '{}'",
                    lossy(&c[..c.len().min(128)]).replace(['\r', '\n'], " ")
                ));
            }
            Reply::Array(
                crate::acl::commands_in(&name)
                    .into_iter()
                    .map(Reply::text)
                    .collect(),
            )
        }
        _ => ebb_core::error::unknown_subcommand(argv[1], "acl").into(),
    }
}

fn genpass(argv: &[&[u8]]) -> Reply {
    let bits = match argv.get(2) {
        None => 256,
        Some(b) => match parse_i64(b) {
            None => return err("ERR value is not an integer or out of range"),
            Some(n) if (1..=4096).contains(&n) => n as usize,
            Some(_) => {
                return err(
                    "ERR ACL GENPASS argument must be the number of bits for the output \
                     password, a positive number up to 4096",
                )
            }
        },
    };
    let chars = bits.div_ceil(4);
    let mut bytes = vec![0u8; chars.div_ceil(2)];
    rand::thread_rng().fill_bytes(&mut bytes);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Reply::text(hex[..chars].to_string())
}

fn dryrun(acl: &Acl, argv: &[&[u8]]) -> Reply {
    let Some(user) = acl.user(argv[2]) else {
        return err(format!("ERR User '{}' not found", lossy(argv[2])));
    };
    let args = &argv[3..];
    let Some(spec) = crate::rename::lookup(args[0]) else {
        return err(format!("ERR Command '{}' not found", lossy(args[0])));
    };
    if !spec.arity_ok(args.len()) {
        return err(format!(
            "ERR wrong number of arguments for '{}' command",
            spec.name
        ));
    }
    let Some(slot) = crate::cmdstats::slot_of(spec, args) else {
        return err(format!("ERR Command '{}' not found", lossy(args[0])));
    };
    if let Err(full) = crate::cmdstats::sub_arity_ok(slot, args.len()) {
        return err(format!(
            "ERR wrong number of arguments for '{full}' command"
        ));
    }
    let name = crate::cmdstats::slot_name(slot);
    let slot = Some(slot);
    match Acl::check(&user, spec, slot, args) {
        Ok(()) => Reply::Ok,
        Err(Denied::Command) => Reply::text(format!(
            "This user has no permissions to run the '{name}' command"
        )),
        Err(Denied::Key(i)) => Reply::text(format!(
            "This user has no permissions to access the '{}' key",
            lossy(args.get(i).map_or(&b""[..], |a| &a[..]))
        )),
        Err(Denied::Channel(i)) => Reply::text(format!(
            "This user has no permissions to access the '{}' channel",
            lossy(args.get(i).map_or(&b""[..], |a| &a[..]))
        )),
    }
}

fn log(shared: &Shared, argv: &[&[u8]]) -> Reply {
    let count = match argv.get(2) {
        None => 10,
        Some(a) if a.eq_ignore_ascii_case(b"reset") => {
            shared.acl.reset_log();
            return Reply::Ok;
        }
        Some(a) => match parse_i64(a) {
            Some(n) => n.max(0) as usize,
            None => return err("ERR value is not an integer or out of range"),
        },
    };
    let now = now_ms();
    Reply::Array(
        shared
            .acl
            .log_entries(count)
            .into_iter()
            .map(|e| {
                Reply::Map(vec![
                    (Reply::text("count"), Reply::Int(e.count as i64)),
                    (Reply::text("reason"), Reply::text(e.reason)),
                    (Reply::text("context"), Reply::text(e.context)),
                    (Reply::text("object"), Reply::text(e.object)),
                    (Reply::text("username"), Reply::text(e.username)),
                    (
                        Reply::text("age-seconds"),
                        Reply::Double(now.saturating_sub(e.created_ms) as f64 / 1000.0),
                    ),
                    (Reply::text("client-info"), Reply::text(e.client_info)),
                ])
            })
            .collect(),
    )
}

/// The `acllog-max-len` setting.
pub fn log_max_len(shared: &Shared) -> usize {
    shared.config.read().get_i64("acllog-max-len").max(0) as usize
}

/// Records a refused command in the ACL log.
pub fn log_denied(
    shared: &Shared,
    s: &Session,
    d: Denied,
    argv: &[&[u8]],
    slot_name: &str,
    context: &'static str,
) {
    let (reason, object) = crate::acl::log_reason(d, argv, slot_name);
    // A script's refused call shows the client running the script.
    let running = match (context, s.last_cmd) {
        ("lua", Some(slot)) => crate::cmdstats::slot_name(slot),
        ("lua", None) => s.entry.last_command_name(),
        _ => slot_name,
    };
    let info = crate::client::describe_running(&s.entry, s, argv, running);
    shared.acl.log(
        reason,
        context,
        object,
        &s.user.name,
        info,
        log_max_len(shared),
        now_ms(),
    );
}
