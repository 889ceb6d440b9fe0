//! Commands that need the connection or the server process (session state,
//! pub/sub, configuration, introspection). Their specs live here so that the
//! one table describes every command; ebb-server executes them.

use crate::args::parse_i64;
use crate::table::CommandSpec;

const fn s(
    name: &'static str,
    arity: i32,
    flags: &'static str,
    keys: (i32, i32, i32),
    group: &'static str,
    summary: &'static str,
) -> CommandSpec {
    CommandSpec::server(name, arity, flags, keys, group, summary)
}

/// Server-executed commands.
#[rustfmt::skip]
pub const COMMANDS: &[CommandSpec] = &[
    s("select", 2, "loading stale fast", (0, 0, 0), "connection", "Changes the selected database."),
    s("quit", -1, "noscript loading stale fast no_auth allow_busy", (0, 0, 0), "connection", "Closes the connection."),
    s("reset", 1, "noscript loading stale fast no_auth allow_busy", (0, 0, 0), "connection", "Resets the connection."),
    s("hello", -1, "noscript loading stale fast no_auth allow_busy", (0, 0, 0), "connection", "Handshakes with the server."),
    s("auth", -2, "noscript loading stale fast no_auth allow_busy", (0, 0, 0), "connection", "Authenticates the connection."),
    s("acl", -2, "", (0, 0, 0), "server", "A container for Access List Control commands."),
    s("client", -2, "", (0, 0, 0), "connection", "A container for client connection commands."),
    s("info", -1, "loading stale", (0, 0, 0), "server", "Returns information and statistics about the server."),
    s("config", -2, "", (0, 0, 0), "server", "A container for server configuration commands."),
    s("command", -1, "loading stale", (0, 0, 0), "server", "Returns detailed information about all commands."),
    s("time", 1, "loading stale fast", (0, 0, 0), "server", "Returns the server time."),
    s("debug", -2, "admin noscript loading stale", (0, 0, 0), "server", "A container for debugging commands."),
    s("shutdown", -1, "admin noscript loading stale no_multi allow_busy", (0, 0, 0), "server", "Synchronously saves the database(s) to disk and shuts down the server."),
    s("lolwut", -1, "readonly fast", (0, 0, 0), "server", "Display some computer art and the Redis version"),
    s("lastsave", 1, "loading stale fast", (0, 0, 0), "server", "Returns the Unix timestamp of the last successful save to disk."),
    s("role", 1, "noscript loading stale fast", (0, 0, 0), "server", "Returns the replication role."),
    s("save", 1, "admin noscript no_async_loading no_multi", (0, 0, 0), "server", "Synchronously saves the database(s) to disk."),
    s("bgsave", -1, "admin noscript no_async_loading", (0, 0, 0), "server", "Asynchronously saves the database(s) to disk."),
    s("monitor", 1, "admin noscript loading stale", (0, 0, 0), "server", "Listens for all requests received by the server in real time."),
    s("slowlog", -2, "", (0, 0, 0), "server", "A container for slow log commands."),
    s("latency", -2, "", (0, 0, 0), "server", "A container for latency diagnostics commands."),
    s("bgrewriteaof", 1, "admin noscript no_async_loading", (0, 0, 0), "server", "Asynchronously rewrites the append-only file to disk."),
    s("multi", 1, "noscript loading stale fast allow_busy", (0, 0, 0), "transactions", "Starts a transaction."),
    s("exec", 1, "noscript loading stale skip_slowlog", (0, 0, 0), "transactions", "Executes all commands in a transaction."),
    s("discard", 1, "noscript loading stale fast allow_busy", (0, 0, 0), "transactions", "Discards a transaction."),
    s("watch", -2, "noscript loading stale fast allow_busy", (1, -1, 1), "transactions", "Monitors changes to keys to determine the execution of a transaction."),
    s("unwatch", 1, "noscript loading stale fast allow_busy", (0, 0, 0), "transactions", "Forgets about watched keys of a transaction."),
    s("subscribe", -2, "pubsub noscript loading stale", (0, 0, 0), "pubsub", "Listens for messages published to channels."),
    s("unsubscribe", -1, "pubsub noscript loading stale", (0, 0, 0), "pubsub", "Stops listening to messages posted to channels."),
    s("psubscribe", -2, "pubsub noscript loading stale", (0, 0, 0), "pubsub", "Listens for messages published to channels that match one or more patterns."),
    s("punsubscribe", -1, "pubsub noscript loading stale", (0, 0, 0), "pubsub", "Stops listening to messages published to channels that match one or more patterns."),
    s("publish", 3, "pubsub loading stale fast", (0, 0, 0), "pubsub", "Posts a message to a channel."),
    // Redis 7.0 lists shard channels as key positions flagged NOT_KEY (for
    // a cluster's slot routing): COMMAND INFO shows them, nothing treats
    // them as keys (WATCH, ACL key rules, COMMAND GETKEYS).
    s("ssubscribe", -2, "pubsub noscript loading stale", (1, -1, 1), "pubsub", "Listens for messages published to shard channels.").with_keys(not_keys),
    s("sunsubscribe", -1, "pubsub noscript loading stale", (1, -1, 1), "pubsub", "Stops listening to messages posted to shard channels.").with_keys(not_keys),
    s("spublish", 3, "pubsub loading stale fast", (1, 1, 1), "pubsub", "Posts a message to a shard channel.").with_keys(not_keys),
    s("pubsub", -2, "", (0, 0, 0), "pubsub", "A container for Pub/Sub commands."),
    s("eval", -3, "noscript stale skip_monitor no_mandatory_keys movablekeys", (0, 0, 0), "scripting", "Executes a server-side Lua script.").with_keys(script_keys),
    s("evalsha", -3, "noscript stale skip_monitor no_mandatory_keys movablekeys", (0, 0, 0), "scripting", "Executes a server-side Lua script by SHA1 digest.").with_keys(script_keys),
    s("eval_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys movablekeys", (0, 0, 0), "scripting", "Executes a read-only server-side Lua script.").with_keys(script_keys),
    s("evalsha_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys movablekeys", (0, 0, 0), "scripting", "Executes a read-only server-side Lua script by SHA1 digest.").with_keys(script_keys),
    s("script", -2, "", (0, 0, 0), "scripting", "A container for Lua scripts management commands."),
    s("fcall", -3, "noscript stale skip_monitor no_mandatory_keys movablekeys", (0, 0, 0), "scripting", "Invokes a function.").with_keys(script_keys),
    s("fcall_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys movablekeys", (0, 0, 0), "scripting", "Invokes a read-only function.").with_keys(script_keys),
    s("function", -2, "", (0, 0, 0), "scripting", "A container for function commands."),
    // ebb is a standalone server without replicas: these answer as a Redis
    // 7.0 without cluster support does, and WAIT as one with no replica.
    s("cluster", -2, "", (0, 0, 0), "cluster", "A container for cluster commands"),
    s("readonly", 1, "loading stale fast", (0, 0, 0), "cluster", "Enables read queries for a connection to a cluster replica node"),
    s("readwrite", 1, "loading stale fast", (0, 0, 0), "cluster", "Disables read queries for a connection to a cluster replica node"),
    s("asking", 1, "fast", (0, 0, 0), "cluster", "Sent by cluster clients after an -ASK redirect"),
    s("wait", 3, "noscript", (0, 0, 0), "generic", "Wait for the synchronous replication of all the write commands sent in the context of the current connection"),
    // ebb is not redis-server and loads no Redis module: MODULE answers as
    // a Redis 7.0 with none loaded, whose every load fails.
    s("module", -2, "", (0, 0, 0), "server", "A container for module commands"),
];

/// Shard channels: in key positions for COMMAND INFO, but not keys.
fn not_keys(_argv: &[&[u8]]) -> Vec<usize> {
    Vec::new()
}

/// Whether the command's key positions name channels, not keys (Redis's
/// NOT_KEY key specs): COMMAND GETKEYS answers that it has no key.
pub fn channels_not_keys(name: &str) -> bool {
    matches!(name, "ssubscribe" | "sunsubscribe" | "spublish")
}

/// The keys of EVAL and its forms: `numkeys` at position 2, the keys after
/// it (none when the count is invalid; EVAL reports that itself).
fn script_keys(argv: &[&[u8]]) -> Vec<usize> {
    match argv.get(2).and_then(|n| parse_i64(n)) {
        Some(n) if n > 0 && (n as u64) <= (argv.len() - 3) as u64 => (3..3 + n as usize).collect(),
        _ => Vec::new(),
    }
}
