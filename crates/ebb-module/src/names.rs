//! Which of core's commands the module serves, and under which names:
//! every set, sorted-set and hash command (the sorted sets' blocking pops
//! included), and the member-expiration commands, each as `ebb.<name>`.

use std::borrow::Cow;
use std::ffi::{CStr, CString};
use std::sync::OnceLock;

use ebb_core::table::{self, Exec};
use ebb_core::CommandSpec;

/// The prefix of every module command.
pub const PREFIX: &str = "ebb.";

/// Commands outside the set, sorted-set and hash groups that the module
/// serves: member deadlines (KeyDB's and Dragonfly's forms, and TTL,
/// PTTL and PERSIST with a member), TYPE, which names the collection, and
/// the rate limiter, whose state is one of the server's own strings (see
/// [`reads_strings`]).
const EXTRA: &[&str] = &[
    "expiremember",
    "expirememberat",
    "pexpirememberat",
    "ttl",
    "pttl",
    "persist",
    "fieldexpire",
    "fieldttl",
    "type",
    "cl.throttle",
];

/// Whether the module serves `spec`.
pub fn served(spec: &CommandSpec) -> bool {
    if !matches!(spec.exec, Exec::Core(_)) {
        return false;
    }
    // The sorted sets' blocking pops are served (see `block`); lists are
    // Redis's own.
    if spec.has_flag("blocking") && spec.group != "sorted-set" {
        return false;
    }
    matches!(spec.group, "set" | "sorted-set" | "sorted_set" | "hash") || EXTRA.contains(&spec.name)
}

/// Whether `spec` keeps its state in strings, which stay the server's own
/// type: the command then reads and writes the server's strings themselves
/// (`CL.THROTTLE`, as redis-cell stores its limiters), where every other
/// command sees any key of the server's types as a stand-in it cannot read.
pub fn reads_strings(spec: &CommandSpec) -> bool {
    spec.name == "cl.throttle"
}

/// The module's name (`ebb.<name>`) of every command in core's table, by
/// table position; `None` where the module does not serve it. Built once,
/// so that finding a command and naming it in the log cost a lookup.
fn module_names() -> &'static [Option<CString>] {
    static NAMES: OnceLock<Vec<Option<CString>>> = OnceLock::new();
    NAMES.get_or_init(|| {
        table::all()
            .iter()
            .map(|s| {
                served(s)
                    .then(|| CString::new(format!("{PREFIX}{}", s.name)).ok())
                    .flatten()
            })
            .collect()
    })
}

/// The module's name of `spec`, if the module serves it.
pub fn module_name(spec: &'static CommandSpec) -> Option<&'static CStr> {
    module_names().get(table::index_of(spec))?.as_deref()
}

/// Every command the module serves, with its name.
pub fn all_served() -> impl Iterator<Item = (&'static CommandSpec, &'static CStr)> {
    table::all()
        .iter()
        .filter_map(|s| Some((s, module_name(s)?)))
}

/// The command a client's name stands for (`ebb.zadd`, any case).
pub fn spec_of(name: &[u8]) -> Option<&'static CommandSpec> {
    let rest = name.get(PREFIX.len()..)?;
    if !name[..PREFIX.len()].eq_ignore_ascii_case(PREFIX.as_bytes()) {
        return None;
    }
    table::lookup(rest).filter(|s| module_name(s).is_some())
}

/// The name a core command is replicated and logged under: the module's
/// when the module serves it (`ZREM` → `ebb.zrem`), the server's own
/// otherwise (`DEL`, `PEXPIREAT`).
pub fn logged_name(name: &[u8]) -> Option<Cow<'static, CStr>> {
    match table::lookup(name).and_then(module_name) {
        Some(n) => Some(Cow::Borrowed(n)),
        None => CString::new(name).ok().map(Cow::Owned),
    }
}

/// The module's flags for a command (`write deny-oom fast …`), from
/// core's.
pub fn module_flags(spec: &CommandSpec) -> String {
    let mut out: Vec<&str> = Vec::new();
    for f in spec.flags.split_ascii_whitespace() {
        match f {
            "write" => out.push("write"),
            "readonly" => out.push("readonly"),
            "denyoom" => out.push("deny-oom"),
            "fast" => out.push("fast"),
            "noscript" => out.push("deny-script"),
            "blocking" => out.push("blocking"),
            _ => {}
        }
    }
    if spec.keys.is_some() {
        out.push("getkeys-api");
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_the_collections_and_member_ttls_only() {
        let served = [
            "zaddex",
            "saddex",
            "hsetex",
            "zrange",
            "sunionstore",
            "hexpire",
            "expiremember",
            "ttl",
            "bzpopmin",
            "bzmpop",
            "cl.throttle",
        ];
        for name in served {
            assert!(
                spec_of(format!("EBB.{name}").as_bytes()).is_some(),
                "{name}"
            );
            // Only under the prefix.
            assert!(spec_of(name.as_bytes()).is_none(), "{name}");
        }
        for name in ["set", "get", "lpush", "blpop", "del", "expire", "flushall"] {
            assert!(
                spec_of(format!("ebb.{name}").as_bytes()).is_none(),
                "{name}"
            );
        }
    }

    #[test]
    fn logged_names() {
        let name = |n: &[u8]| logged_name(n).map(|c| c.to_bytes().to_vec());
        assert_eq!(name(b"ZREM").as_deref(), Some(&b"ebb.zrem"[..]));
        assert_eq!(name(b"SPEXPIREAT").as_deref(), Some(&b"ebb.spexpireat"[..]));
        assert_eq!(name(b"DEL").as_deref(), Some(&b"DEL"[..]));
        assert_eq!(name(b"PEXPIREAT").as_deref(), Some(&b"PEXPIREAT"[..]));
    }
}
