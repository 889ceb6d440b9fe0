//! The table of options: every name redis-server 7.0 answers to, its
//! default, how its value is checked, and whether ebb acts on it.

use super::checks::canonical;

/// How an option's value is checked and normalised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Int,
    Memory,
    Bool,
    Enum(&'static [&'static str]),
    Str,
    /// Free-form, several words allowed (save, client-output-buffer-limit…).
    Words,
}

pub(super) struct Opt {
    pub(super) name: &'static str,
    pub(super) default: &'static str,
    pub(super) kind: Kind,
    /// Whether ebb acts on the option.
    pub(super) effective: bool,
    /// One of Redis's hidden (debugging) options: CONFIG GET answers it
    /// only when named exactly, never through a pattern.
    pub(super) hidden: bool,
}

const fn o(name: &'static str, default: &'static str, kind: Kind, effective: bool) -> Opt {
    Opt {
        name,
        default,
        kind,
        effective,
        hidden: false,
    }
}

/// A hidden option (see [`Opt::hidden`]); none has an effect in ebb.
const fn hidden(name: &'static str, default: &'static str, kind: Kind) -> Opt {
    Opt {
        hidden: true,
        ..o(name, default, kind, false)
    }
}

/// A hidden option that ebb acts on.
const fn hidden_effective(name: &'static str, default: &'static str, kind: Kind) -> Opt {
    Opt {
        hidden: true,
        ..o(name, default, kind, true)
    }
}

const POLICIES: &[&str] = &[
    "volatile-lru",
    "volatile-lfu",
    "volatile-random",
    "volatile-ttl",
    "allkeys-lru",
    "allkeys-lfu",
    "allkeys-random",
    "noeviction",
];
// In Redis's order, which its errors list.
const FSYNC: &[&str] = &["everysec", "always", "no"];
const DISKLESS_LOAD: &[&str] = &["disabled", "on-empty-db", "swapdb"];
const OOM_SCORE_ADJ: &[&str] = &["no", "yes", "relative", "absolute"];
const PROPAGATION_ERROR: &[&str] = &["ignore", "panic", "panic-on-replicas"];
const ENDPOINT_TYPE: &[&str] = &["ip", "hostname", "unknown-endpoint"];
const SANITIZE: &[&str] = &["no", "yes", "clients"];
const TLS_AUTH: &[&str] = &["no", "yes", "optional"];
const LOGLEVEL: &[&str] = &["debug", "verbose", "notice", "warning"];
/// Who may run a protected action: `no` one, everybody, `local` clients.
const PROTECTED: Kind = Kind::Enum(&["no", "yes", "local"]);
const SUPERVISED: &[&str] = &["upstart", "systemd", "auto", "no"];

pub(super) static OPTIONS: &[Opt] = &[
    o("port", "6379", Kind::Int, true),
    o("bind", "127.0.0.1 -::1", Kind::Words, true),
    o("dir", "", Kind::Str, true),
    o("databases", "16", Kind::Int, true),
    o("requirepass", "", Kind::Str, true),
    o("maxclients", "10000", Kind::Int, true),
    o("notify-keyspace-events", "", Kind::Str, true),
    o("hz", "10", Kind::Int, true),
    o("timeout", "0", Kind::Int, true),
    o("protected-mode", "yes", Kind::Bool, true),
    o("proto-max-bulk-len", "536870912", Kind::Memory, true),
    o(
        "client-query-buffer-limit",
        "1073741824",
        Kind::Memory,
        true,
    ),
    o("appendonly", "no", Kind::Bool, true),
    o("appendfsync", "everysec", Kind::Enum(FSYNC), true),
    o("appendfilename", "appendonly.aof", Kind::Str, true),
    o("appenddirname", "appendonlydir", Kind::Str, false),
    o("dbfilename", "dump.ebb", Kind::Str, true),
    o("save", "3600 1 300 100 60 10000", Kind::Words, true),
    o("aof-load-truncated", "yes", Kind::Bool, true),
    o("auto-aof-rewrite-percentage", "100", Kind::Int, true),
    o("auto-aof-rewrite-min-size", "67108864", Kind::Memory, true),
    o("maxmemory", "0", Kind::Memory, true),
    o("maxmemory-policy", "noeviction", Kind::Enum(POLICIES), true),
    o("maxmemory-samples", "5", Kind::Int, true),
    o("loglevel", "notice", Kind::Enum(LOGLEVEL), true),
    o("logfile", "", Kind::Str, true),
    o("daemonize", "no", Kind::Bool, true),
    o("pidfile", "", Kind::Str, true),
    o("supervised", "no", Kind::Enum(SUPERVISED), false),
    o("tcp-backlog", "511", Kind::Int, true),
    o("tcp-keepalive", "300", Kind::Int, true),
    o("unixsocket", "", Kind::Str, false),
    o("unixsocketperm", "0", Kind::Int, false),
    o("slowlog-log-slower-than", "10000", Kind::Int, true),
    o("slowlog-max-len", "128", Kind::Int, true),
    o("latency-monitor-threshold", "0", Kind::Int, true),
    o("busy-reply-threshold", "5000", Kind::Int, true),
    o("hash-max-listpack-entries", "512", Kind::Int, true),
    o("hash-max-listpack-value", "64", Kind::Memory, true),
    o("hash-max-ziplist-entries", "512", Kind::Int, true),
    o("hash-max-ziplist-value", "64", Kind::Memory, true),
    o("set-max-intset-entries", "512", Kind::Int, true),
    // Options of other Redis versions: answered by name, left out of
    // patterns (CONFIG GET *), as Redis 7.0 does not have them.
    hidden("set-max-listpack-entries", "128", Kind::Int),
    hidden("set-max-listpack-value", "64", Kind::Int),
    o("zset-max-listpack-entries", "128", Kind::Int, true),
    o("zset-max-listpack-value", "64", Kind::Memory, true),
    o("zset-max-ziplist-entries", "128", Kind::Int, true),
    o("zset-max-ziplist-value", "64", Kind::Memory, true),
    o("list-max-listpack-size", "-2", Kind::Int, false),
    o("list-max-ziplist-size", "-2", Kind::Int, false),
    o("list-compress-depth", "0", Kind::Int, false),
    o("stream-node-max-bytes", "4096", Kind::Memory, false),
    o("stream-node-max-entries", "100", Kind::Int, false),
    o("hll-sparse-max-bytes", "3000", Kind::Memory, false),
    o("activerehashing", "yes", Kind::Bool, false),
    o("active-expire-effort", "1", Kind::Int, false),
    o("dynamic-hz", "yes", Kind::Bool, false),
    o(
        "client-output-buffer-limit",
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
        Kind::Words,
        true,
    ),
    o("stop-writes-on-bgsave-error", "yes", Kind::Bool, false),
    o("rdbcompression", "yes", Kind::Bool, false),
    o("rdbchecksum", "yes", Kind::Bool, false),
    o("rdb-del-sync-files", "no", Kind::Bool, false),
    o("rdb-save-incremental-fsync", "yes", Kind::Bool, false),
    o("aof-rewrite-incremental-fsync", "yes", Kind::Bool, false),
    o("aof-use-rdb-preamble", "yes", Kind::Bool, false),
    o("aof-timestamp-enabled", "no", Kind::Bool, false),
    o("no-appendfsync-on-rewrite", "no", Kind::Bool, false),
    o("always-show-logo", "no", Kind::Bool, false),
    o("set-proc-title", "yes", Kind::Bool, true),
    o(
        "proc-title-template",
        "{title} {listen-addr} {server-mode}",
        Kind::Str,
        true,
    ),
    o("lazyfree-lazy-eviction", "no", Kind::Bool, false),
    o("lazyfree-lazy-expire", "no", Kind::Bool, false),
    o("lazyfree-lazy-server-del", "no", Kind::Bool, false),
    o("lazyfree-lazy-user-del", "no", Kind::Bool, false),
    o("lazyfree-lazy-user-flush", "no", Kind::Bool, false),
    o("replicaof", "", Kind::Str, false),
    o("replica-lazy-flush", "no", Kind::Bool, false),
    o("replica-serve-stale-data", "yes", Kind::Bool, false),
    o("replica-read-only", "yes", Kind::Bool, false),
    o("replica-priority", "100", Kind::Int, false),
    o("repl-diskless-sync", "yes", Kind::Bool, false),
    o("repl-diskless-sync-delay", "5", Kind::Int, false),
    o(
        "repl-diskless-load",
        "disabled",
        Kind::Enum(DISKLESS_LOAD),
        false,
    ),
    o("repl-disable-tcp-nodelay", "no", Kind::Bool, false),
    o("repl-backlog-size", "1048576", Kind::Memory, false),
    o("io-threads", "1", Kind::Int, true),
    o("io-threads-do-reads", "no", Kind::Bool, false),
    o("jemalloc-bg-thread", "yes", Kind::Bool, false),
    o("activedefrag", "no", Kind::Bool, false),
    o("oom-score-adj", "no", Kind::Enum(OOM_SCORE_ADJ), false),
    o("oom-score-adj-values", "0 200 800", Kind::Words, false),
    o("disable-thp", "yes", Kind::Bool, false),
    o("lfu-log-factor", "10", Kind::Int, true),
    o("lfu-decay-time", "1", Kind::Int, true),
    o("crash-log-enabled", "yes", Kind::Bool, false),
    o("crash-memcheck-enabled", "yes", Kind::Bool, false),
    o("syslog-enabled", "no", Kind::Bool, false),
    o("syslog-ident", "redis", Kind::Str, false),
    o("syslog-facility", "local0", Kind::Str, false),
    o("acllog-max-len", "128", Kind::Int, false),
    o("aclfile", "", Kind::Str, false),
    o("enable-debug-command", "local", PROTECTED, true),
    o("enable-protected-configs", "local", PROTECTED, true),
    o("enable-module-command", "no", PROTECTED, true),
    o("cluster-enabled", "no", Kind::Bool, false),
    o("tracking-table-max-keys", "1000000", Kind::Int, true),
    o("maxmemory-clients", "0", Kind::Memory, true),
    o("shutdown-timeout", "10", Kind::Int, false),
    o("shutdown-on-sigint", "default", Kind::Words, false),
    o("shutdown-on-sigterm", "default", Kind::Words, false),
    o("latency-tracking", "yes", Kind::Bool, true),
    o(
        "latency-tracking-info-percentiles",
        "50 99 99.9",
        Kind::Words,
        true,
    ),
    hidden("lua-replicate-commands", "yes", Kind::Bool),
    o("tls-port", "0", Kind::Int, false),
    hidden("locale-collate", "", Kind::Str),
    hidden("use-exit-on-panic", "no", Kind::Bool),
    hidden_effective("lua-enable-deprecated-api", "no", Kind::Bool),
    hidden_effective("rdb-key-save-delay", "0", Kind::Int),
    hidden_effective("key-load-delay", "0", Kind::Int),
    // ebb's own (src/busy_poll.rs): named exactly, never listed by a pattern.
    hidden_effective("busy-poll-us", "20", Kind::Int),
    hidden("watchdog-period", "0", Kind::Int),
    hidden(
        "loading-process-events-interval-bytes",
        "2097152",
        Kind::Int,
    ),
    o(
        "acl-pubsub-default",
        "resetchannels",
        Kind::Enum(&["allchannels", "resetchannels"]),
        true,
    ),
    o("active-defrag-cycle-max", "25", Kind::Int, false),
    o("active-defrag-cycle-min", "1", Kind::Int, false),
    o(
        "active-defrag-ignore-bytes",
        "104857600",
        Kind::Memory,
        false,
    ),
    o("active-defrag-max-scan-fields", "1000", Kind::Int, false),
    o("active-defrag-threshold-lower", "10", Kind::Int, false),
    o("active-defrag-threshold-upper", "100", Kind::Int, false),
    o("aof-disable-auto-gc", "no", Kind::Bool, false),
    o("aof_rewrite_cpulist", "", Kind::Str, false),
    o("bgsave_cpulist", "", Kind::Str, false),
    o("bind-source-addr", "", Kind::Str, false),
    o("bio_cpulist", "", Kind::Str, false),
    o(
        "cluster-allow-pubsubshard-when-down",
        "yes",
        Kind::Bool,
        false,
    ),
    o("cluster-allow-reads-when-down", "no", Kind::Bool, false),
    o("cluster-allow-replica-migration", "yes", Kind::Bool, false),
    o("cluster-announce-bus-port", "0", Kind::Int, false),
    o("cluster-announce-hostname", "", Kind::Str, false),
    o("cluster-announce-ip", "", Kind::Str, false),
    o("cluster-announce-port", "0", Kind::Int, false),
    o("cluster-announce-tls-port", "0", Kind::Int, false),
    o("cluster-config-file", "nodes.conf", Kind::Str, false),
    o("cluster-link-sendbuf-limit", "0", Kind::Memory, false),
    o("cluster-migration-barrier", "1", Kind::Int, false),
    o("cluster-node-timeout", "15000", Kind::Int, false),
    o("cluster-port", "0", Kind::Int, false),
    o(
        "cluster-preferred-endpoint-type",
        "ip",
        Kind::Enum(ENDPOINT_TYPE),
        false,
    ),
    o("cluster-replica-no-failover", "no", Kind::Bool, false),
    o("cluster-replica-validity-factor", "10", Kind::Int, false),
    o("cluster-require-full-coverage", "yes", Kind::Bool, false),
    o("ignore-warnings", "", Kind::Str, false),
    o("masterauth", "", Kind::Str, false),
    o("masteruser", "", Kind::Str, false),
    o("maxmemory-eviction-tenacity", "10", Kind::Int, false),
    o("min-replicas-max-lag", "10", Kind::Int, false),
    o("min-replicas-to-write", "0", Kind::Int, false),
    o(
        "propagation-error-behavior",
        "ignore",
        Kind::Enum(PROPAGATION_ERROR),
        false,
    ),
    o("repl-backlog-ttl", "3600", Kind::Int, false),
    o("repl-diskless-sync-max-replicas", "0", Kind::Int, false),
    o("repl-ping-replica-period", "10", Kind::Int, false),
    o("repl-timeout", "60", Kind::Int, false),
    o("replica-announce-ip", "", Kind::Str, false),
    o("replica-announce-port", "0", Kind::Int, false),
    o("replica-announced", "yes", Kind::Bool, false),
    o("replica-ignore-disk-write-errors", "no", Kind::Bool, false),
    o("replica-ignore-maxmemory", "yes", Kind::Bool, false),
    o("sanitize-dump-payload", "no", Kind::Enum(SANITIZE), false),
    o("server_cpulist", "", Kind::Str, false),
    o("socket-mark-id", "0", Kind::Int, false),
    o("tls-auth-clients", "yes", Kind::Enum(TLS_AUTH), false),
    o("tls-ca-cert-dir", "", Kind::Str, false),
    o("tls-ca-cert-file", "", Kind::Str, false),
    o("tls-cert-file", "", Kind::Str, false),
    o("tls-ciphers", "", Kind::Str, false),
    o("tls-ciphersuites", "", Kind::Str, false),
    o("tls-client-cert-file", "", Kind::Str, false),
    o("tls-client-key-file", "", Kind::Str, false),
    o("tls-client-key-file-pass", "", Kind::Str, false),
    o("tls-cluster", "no", Kind::Bool, false),
    o("tls-dh-params-file", "", Kind::Str, false),
    o("tls-key-file", "", Kind::Str, false),
    o("tls-key-file-pass", "", Kind::Str, false),
    o("tls-prefer-server-ciphers", "no", Kind::Bool, false),
    o("tls-protocols", "", Kind::Str, false),
    o("tls-replication", "no", Kind::Bool, false),
    o("tls-session-cache-size", "20480", Kind::Int, false),
    o("tls-session-cache-timeout", "300", Kind::Int, false),
    o("tls-session-caching", "yes", Kind::Bool, false),
];

/// Aliases Redis keeps for renamed options.
/// The old option names Redis still answers to.
pub(super) const ALIASES: [&str; 14] = [
    "lua-time-limit",
    "slaveof",
    "slave-serve-stale-data",
    "slave-read-only",
    "slave-priority",
    "slave-lazy-flush",
    "cluster-slave-no-failover",
    "cluster-slave-validity-factor",
    "min-slaves-max-lag",
    "min-slaves-to-write",
    "repl-ping-slave-period",
    "slave-announce-ip",
    "slave-announce-port",
    "slave-ignore-maxmemory",
];

pub(super) fn find(name: &str) -> Option<&'static Opt> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// The option a name (any case, old names too) stands for, if any.
pub fn option_name(name: &str) -> Option<&'static str> {
    find(canonical(&name.to_ascii_lowercase())).map(|o| o.name)
}
