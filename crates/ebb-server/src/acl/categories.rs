//! ACL categories: Redis 7.0's list, and which commands and subcommands
//! each holds (worked out once, from the command table and Redis's
//! filing of each subcommand).

use std::sync::OnceLock;

/// Redis 7.0's categories, in its order (ACL CAT).
pub const CATEGORIES: [&str; 21] = [
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// Redis 7.0's categories of the subcommands ebb has.
pub(crate) fn sub_categories(name: &str) -> Option<&'static str> {
    Some(match name {
        "memory|usage" => "read slow",
        "memory|malloc-stats" => "slow",
        "memory|purge" => "slow",
        "memory|help" => "slow",
        "memory|stats" => "slow",
        "memory|doctor" => "slow",
        "config|get" => "admin slow dangerous",
        "config|set" => "admin slow dangerous",
        "config|resetstat" => "admin slow dangerous",
        "config|rewrite" => "admin slow dangerous",
        "config|help" => "slow",
        "object|encoding" => "keyspace read slow",
        "object|freq" => "keyspace read slow",
        "object|idletime" => "keyspace read slow",
        "object|refcount" => "keyspace read slow",
        "object|help" => "keyspace slow",
        "command|count" => "slow connection",
        "command|docs" => "slow connection",
        "command|getkeys" => "slow connection",
        "command|getkeysandflags" => "slow connection",
        "command|help" => "slow connection",
        "command|info" => "slow connection",
        "command|list" => "slow connection",
        "script|exists" => "slow scripting",
        "script|flush" => "slow scripting",
        "script|help" => "slow scripting",
        "script|kill" => "slow scripting",
        "script|load" => "slow scripting",
        "function|delete" => "write slow scripting",
        "function|dump" => "slow scripting",
        "function|flush" => "write slow scripting",
        "function|help" => "slow scripting",
        "function|kill" => "slow scripting",
        "function|list" => "slow scripting",
        "function|load" => "write slow scripting",
        "function|restore" => "write slow scripting",
        "function|stats" => "slow scripting",
        "pubsub|channels" => "pubsub slow",
        "pubsub|help" => "slow",
        "pubsub|numpat" => "pubsub slow",
        "pubsub|numsub" => "pubsub slow",
        "pubsub|shardchannels" => "pubsub slow",
        "pubsub|shardnumsub" => "pubsub slow",
        "client|caching" => "slow connection",
        "client|getname" => "slow connection",
        "client|getredir" => "slow connection",
        "client|tracking" => "slow connection",
        "client|trackinginfo" => "slow connection",
        "client|help" => "slow connection",
        "client|id" => "slow connection",
        "client|info" => "slow connection",
        "client|kill" => "admin slow dangerous connection",
        "client|list" => "admin slow dangerous connection",
        "client|no-evict" => "admin slow dangerous connection",
        "client|pause" => "admin slow dangerous connection",
        "client|reply" => "slow connection",
        "client|setname" => "slow connection",
        "client|unblock" => "admin slow dangerous connection",
        "client|unpause" => "admin slow dangerous connection",
        "latency|doctor" => "admin slow dangerous",
        "latency|graph" => "admin slow dangerous",
        "latency|histogram" => "admin slow dangerous",
        "latency|history" => "admin slow dangerous",
        "latency|latest" => "admin slow dangerous",
        "latency|reset" => "admin slow dangerous",
        "latency|help" => "slow",
        "slowlog|get" => "admin slow dangerous",
        "slowlog|len" => "admin slow dangerous",
        "slowlog|reset" => "admin slow dangerous",
        "slowlog|help" => "slow",
        "acl|genpass" | "acl|whoami" | "acl|cat" | "acl|help" => "slow",
        "acl|dryrun" | "acl|users" | "acl|save" | "acl|load" | "acl|deluser" | "acl|getuser"
        | "acl|setuser" | "acl|list" | "acl|log" => "admin slow dangerous",
        "cluster|countkeysinslot"
        | "cluster|getkeysinslot"
        | "cluster|help"
        | "cluster|info"
        | "cluster|keyslot"
        | "cluster|links"
        | "cluster|myid"
        | "cluster|nodes"
        | "cluster|shards"
        | "cluster|slots" => "slow",
        "cluster|addslots"
        | "cluster|addslotsrange"
        | "cluster|bumpepoch"
        | "cluster|count-failure-reports"
        | "cluster|delslots"
        | "cluster|delslotsrange"
        | "cluster|failover"
        | "cluster|flushslots"
        | "cluster|forget"
        | "cluster|meet"
        | "cluster|replicas"
        | "cluster|replicate"
        | "cluster|reset"
        | "cluster|saveconfig"
        | "cluster|set-config-epoch"
        | "cluster|setslot"
        | "cluster|slaves" => "admin slow dangerous",
        "module|help" => "slow",
        "module|list" | "module|load" | "module|loadex" | "module|unload" => "admin slow dangerous",
        _ => return None,
    })
}

/// The categories of a command or subcommand slot, without the `@`.
fn slot_categories(slot: usize) -> Vec<&'static str> {
    let name = crate::cmdstats::slot_name(slot);
    if let Some(c) = name.contains('|').then(|| sub_categories(name)).flatten() {
        return c.split_whitespace().collect();
    }
    let container = name.split('|').next().unwrap_or(name);
    match ebb_core::lookup(container.as_bytes()) {
        Some(spec) => crate::command_cmd::categories(spec)
            .into_iter()
            .map(|c| c.trim_start_matches('@'))
            .collect(),
        None => Vec::new(),
    }
}

/// The slots (commands and subcommands) of each category, in
/// [`CATEGORIES`] order.
pub(super) fn members() -> &'static [Vec<usize>] {
    static M: OnceLock<Vec<Vec<usize>>> = OnceLock::new();
    M.get_or_init(|| {
        let n = crate::cmdstats::slot_count();
        let per_slot: Vec<Vec<&'static str>> = (0..n).map(slot_categories).collect();
        CATEGORIES
            .iter()
            .map(|c| (0..n).filter(|&s| per_slot[s].contains(c)).collect())
            .collect()
    })
}

/// The slots of category `name` (without the `@`), if it is one.
pub(super) fn slots_of(name: &str) -> Option<&'static [usize]> {
    let i = CATEGORIES.iter().position(|c| *c == name)?;
    Some(&members()[i])
}
