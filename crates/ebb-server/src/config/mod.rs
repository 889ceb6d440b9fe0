//! Configuration as redis-server takes it: a config file of `name value…`
//! lines, `--name value…` command-line options, CONFIG GET/SET. Options ebb
//! has no use for are accepted, reported back and logged once as inert.

use std::collections::BTreeMap;

use ebb_core::glob::glob_match;

mod checks;
mod rewrite;
pub use checks::parse_memory;
use checks::{canonical, int_range, save_rules, twin};
use rewrite::repr_word;

/// How an option's value is checked and normalised.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Int,
    Memory,
    Bool,
    Enum(&'static [&'static str]),
    Str,
    /// Free-form, several words allowed (save, client-output-buffer-limit…).
    Words,
}

struct Opt {
    name: &'static str,
    default: &'static str,
    kind: Kind,
    /// Whether ebb acts on the option.
    effective: bool,
    /// One of Redis's hidden (debugging) options: CONFIG GET answers it
    /// only when named exactly, never through a pattern.
    hidden: bool,
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

static OPTIONS: &[Opt] = &[
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
    o("set-proc-title", "yes", Kind::Bool, false),
    o(
        "proc-title-template",
        "{title} {listen-addr} {server-mode}",
        Kind::Str,
        false,
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
const ALIASES: [&str; 14] = [
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

fn find(name: &str) -> Option<&'static Opt> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// The option a name (any case, old names too) stands for, if any.
pub fn option_name(name: &str) -> Option<&'static str> {
    find(canonical(&name.to_ascii_lowercase())).map(|o| o.name)
}

/// The whole configuration: every option's current value as text.
#[derive(Debug, Clone)]
pub struct Config {
    values: BTreeMap<String, String>,
    /// The config file it was loaded from, for CONFIG REWRITE.
    pub file: Option<String>,
    /// `rename-command old new` lines, in order.
    pub renames: Vec<(String, String)>,
    /// `user name rules…` lines, in order.
    pub users: Vec<Vec<String>>,
    /// `loadmodule` lines (modules ebb-server does not load: warned at start).
    pub modules: Vec<String>,
    /// Files being read through `include` (to refuse a loop).
    including: Vec<String>,
    /// A `save` line was read (file, include or command line): the first
    /// replaces the default rules, later ones add to them, as in Redis.
    save_seen: bool,
}

impl Default for Config {
    fn default() -> Self {
        let mut values = BTreeMap::new();
        for opt in OPTIONS {
            values.insert(opt.name.to_string(), opt.default.to_string());
        }
        if let Ok(d) = std::env::current_dir() {
            values.insert("dir".into(), d.display().to_string());
        }
        Config {
            values,
            file: None,
            renames: Vec::new(),
            users: Vec::new(),
            modules: Vec::new(),
            including: Vec::new(),
            save_seen: false,
        }
    }
}

impl Config {
    /// Builds the configuration from `ebb-server [config-file] [--name value…]`.
    pub fn from_args(args: &[String]) -> Result<Config, String> {
        let mut cfg = Config::default();
        let mut rest = args;
        if let Some(first) = args.first() {
            if !first.starts_with("--") {
                let text = std::fs::read_to_string(first)
                    .map_err(|e| format!("Fatal error, can't open config file '{first}': {e}"))?;
                cfg.load_text(&text)?;
                cfg.file = Some(first.clone());
                rest = &args[1..];
            }
        }
        // As redis-server reads its command line: `--name` starts a line,
        // the argument right after a bare name is its value even when it
        // starts with `--`, further plain arguments add to the line, and
        // `--name value` in one argument is a whole line. The lines are
        // read after the file, as if appended to it.
        let mut lines: Vec<String> = Vec::new();
        let mut want_value = false;
        for (i, arg) in rest.iter().enumerate() {
            if let Some(body) = arg.strip_prefix("--").filter(|_| !want_value) {
                let words = crate::resp::split_args(body.as_bytes()).map_or(1, |w| w.len());
                let mut line = body.to_string();
                want_value = words <= 1;
                // `--save` with nothing after it (or another option
                // next) means `save ""`, as in Redis.
                let next_is_option = rest.get(i + 1).is_none_or(|n| n.starts_with("--"));
                if want_value && next_is_option && body.eq_ignore_ascii_case("save") {
                    line.push_str(" \"\"");
                    want_value = false;
                }
                lines.push(line);
            } else {
                // Values are quoted as Redis quotes them (errors then show
                // `'port "6379" "6380"'`). Words before any `--name` make a
                // line of their own, which Redis also accepts
                // (`loglevel verbose`).
                match lines.last_mut() {
                    Some(line) => {
                        line.push(' ');
                        line.push_str(&repr_word(arg));
                    }
                    None => lines.push(repr_word(arg)),
                }
                want_value = false;
            }
        }
        cfg.load_text(&lines.join("\n"))?;
        Ok(cfg)
    }

    /// Loads config-file text.
    pub fn load_text(&mut self, text: &str) -> Result<(), String> {
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words = split_config_line(line)
                .ok_or_else(|| format!("Unbalanced quotes in configuration line {}", n + 1))?;
            let Some((name, args)) = words.split_first() else {
                continue;
            };
            let name = name.to_ascii_lowercase();
            let fatal = |e: String| {
                format!(
                    "*** FATAL CONFIG FILE ERROR *** line {}: >>> '{}' {}",
                    n + 1,
                    line,
                    e
                )
            };
            // An option takes at least one argument, except those made of
            // several words (`save`, `bind`, …).
            let known = find(canonical(&name));
            if args.is_empty() && known.is_some_and(|o| o.kind != Kind::Words) {
                return Err(fatal("wrong number of arguments".into()));
            }
            // A number, a yes/no or a choice is one argument.
            let single = known.is_some_and(|o| {
                matches!(
                    o.kind,
                    Kind::Int | Kind::Memory | Kind::Bool | Kind::Enum(_)
                )
            });
            if args.len() > 1 && single {
                return Err(fatal("wrong number of arguments".into()));
            }
            if name == "include" {
                let [path] = args else {
                    return Err(fatal("wrong number of arguments".into()));
                };
                if self.including.contains(path) || self.including.len() > 16 {
                    return Err(fatal("include loop".into()));
                }
                let text = std::fs::read_to_string(path)
                    .map_err(|e| fatal(format!("can't open included file: {e}")))?;
                self.including.push(path.clone());
                let r = self.load_text(&text);
                self.including.pop();
                r?;
                continue;
            }
            if name == "rename-command" {
                let [old, new] = args else {
                    return Err(fatal("wrong number of arguments".into()));
                };
                self.renames.push((old.clone(), new.clone()));
                continue;
            }
            if name == "user" {
                if args.is_empty() {
                    return Err(fatal("wrong number of arguments".into()));
                }
                if self.users.iter().any(|u| u[0] == args[0]) {
                    return Err(fatal(format!(
                        "Error in user declaration '{}': Duplicate user found. A user can only \
                         be defined once in config files",
                        args[0]
                    )));
                }
                self.users.push(args.to_vec());
                continue;
            }
            if name == "loadmodule" {
                self.modules.push(args.join(" "));
                continue;
            }
            let value = args.join(" ");
            if name == "save" {
                // Several `save` lines accumulate, as in Redis.
                let cur = if self.save_seen {
                    self.get("save").unwrap_or_default()
                } else {
                    String::new()
                };
                self.save_seen = true;
                let value = save_rules(&value).map_err(|e| {
                    format!(
                        "*** FATAL CONFIG FILE ERROR *** line {}: >>> '{}' {}",
                        n + 1,
                        line,
                        e
                    )
                })?;
                let v = if value.is_empty() || cur.is_empty() {
                    value
                } else {
                    format!("{cur} {value}")
                };
                self.values.insert("save".into(), v);
                continue;
            }
            self.set(&name, &value).map_err(|e| {
                format!(
                    "*** FATAL CONFIG FILE ERROR *** line {}: >>> '{}' {}",
                    n + 1,
                    line,
                    e
                )
            })?;
        }
        Ok(())
    }

    /// The value of an option.
    pub fn get(&self, name: &str) -> Option<String> {
        self.values
            .get(canonical(&name.to_ascii_lowercase()))
            .cloned()
    }

    /// A file option's path: relative paths are inside `dir`, where Redis
    /// (which changes into `dir`) looks for them. Empty when unset.
    pub fn path_in_dir(&self, name: &str) -> String {
        let path = self.get(name).unwrap_or_default();
        if path.is_empty() || std::path::Path::new(&path).is_absolute() {
            return path;
        }
        let dir = self.get("dir").unwrap_or_default();
        if dir.is_empty() {
            return path;
        }
        std::path::Path::new(&dir)
            .join(path)
            .to_string_lossy()
            .into_owned()
    }

    /// The value of a numeric option.
    pub fn get_i64(&self, name: &str) -> i64 {
        self.get(name).and_then(|v| v.parse().ok()).unwrap_or(0)
    }

    /// Whether a yes/no option is yes.
    pub fn get_bool(&self, name: &str) -> bool {
        self.get(name).as_deref() == Some("yes")
    }

    /// Sets an option after checking its value; errors name the problem.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let lname = name.to_ascii_lowercase();
        let cname = canonical(&lname);
        let Some(opt) = find(cname) else {
            return Err("Bad directive or wrong number of arguments".into());
        };
        let v = match opt.kind {
            Kind::Int => {
                let n: i64 = value
                    .trim()
                    .parse()
                    .map_err(|_| "argument couldn't be parsed into an integer".to_string())?;
                if let Some((lo, hi)) = int_range(cname) {
                    if !(lo..=hi).contains(&n) {
                        return Err(format!("argument must be between {lo} and {hi} inclusive"));
                    }
                }
                // Redis keeps `hz` within 1..500 whatever it is given.
                let n = if cname == "hz" { n.clamp(1, 500) } else { n };
                n.to_string()
            }
            Kind::Memory if cname == "maxmemory-clients" && value.trim().ends_with('%') => {
                // A share of maxmemory, as Redis takes it.
                let pct: i64 = value
                    .trim()
                    .trim_end_matches('%')
                    .parse()
                    .map_err(|_| "argument must be a memory or percent value".to_string())?;
                if pct > 100 {
                    return Err("percentage argument must be less or equal to 100".into());
                }
                if pct < 0 {
                    return Err("argument must be a memory or percent value".into());
                }
                format!("{pct}%")
            }
            Kind::Memory => {
                let n = parse_memory(value.trim()).ok_or_else(|| {
                    if cname == "maxmemory-clients" {
                        "argument must be a memory or percent value".to_string()
                    } else {
                        "argument must be a memory value".to_string()
                    }
                })?;
                if let Some((lo, hi)) = checks::memory_range(cname) {
                    if !(lo..=hi).contains(&n) {
                        return Err(format!("argument must be between {lo} and {hi} inclusive"));
                    }
                }
                // Redis's replication backlog is never under 16 kB.
                let n = if cname == "repl-backlog-size" {
                    n.max(16 * 1024)
                } else {
                    n
                };
                n.to_string()
            }
            Kind::Bool => match value.trim().to_ascii_lowercase().as_str() {
                "yes" => "yes".into(),
                "no" => "no".into(),
                _ => return Err("argument must be 'yes' or 'no'".into()),
            },
            Kind::Enum(choices) => {
                let l = value.trim().to_ascii_lowercase();
                if !choices.contains(&l.as_str()) {
                    return Err("argument(s) must be one of the following: ".to_string()
                        + &choices.join(", "));
                }
                // `relative` is another name of `yes`, shown as `yes`.
                if cname == "oom-score-adj" && l == "relative" {
                    "yes".to_string()
                } else {
                    l
                }
            }
            Kind::Words if cname == "save" => save_rules(value)?,
            Kind::Words if cname == "oom-score-adj-values" => checks::oom_score_adj_values(value)?,
            Kind::Str | Kind::Words => value.to_string(),
        };
        let v = if cname == "latency-tracking-info-percentiles" {
            match crate::cmdstats::parse_percentiles(&v) {
                Some(list) => crate::cmdstats::canonical_percentiles(&list),
                None if v
                    .split_whitespace()
                    .all(|w| w.parse::<f64>().is_ok_and(|p| p.is_finite())) =>
                {
                    return Err(
                        "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
                            .into(),
                    )
                }
                None => return Err("Invalid latency-tracking-info-percentiles parameters".into()),
            }
        } else {
            v
        };
        checks::aof_names(cname, &v)?;
        if cname == "replicaof" && !v.is_empty() && !v.eq_ignore_ascii_case("no one") {
            let words: Vec<&str> = v.split_ascii_whitespace().collect();
            if words.len() != 2 {
                return Err("wrong number of arguments".into());
            }
            if words[1].parse::<u16>().is_err() {
                return Err("Invalid master port".into());
            }
        }
        let v = if matches!(cname, "shutdown-on-sigint" | "shutdown-on-sigterm") {
            // Redis's flags: `default`, or some of save/nosave/now/force,
            // shown in that order.
            const FLAGS: [&str; 5] = ["default", "save", "nosave", "now", "force"];
            let words: Vec<String> = v
                .split_ascii_whitespace()
                .map(|w| w.to_ascii_lowercase())
                .collect();
            if words.is_empty() || words.iter().any(|w| !FLAGS.contains(&w.as_str())) {
                return Err(
                    "argument(s) must be one of the following: default, save, nosave, now, force"
                        .into(),
                );
            }
            FLAGS
                .iter()
                .filter(|f| words.iter().any(|w| w == *f))
                .copied()
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            v
        };
        let v = if cname == "client-output-buffer-limit" {
            let current = self
                .values
                .get(cname)
                .cloned()
                .unwrap_or_else(|| opt.default.to_string());
            crate::outbuf::merge_limits(&current, &v)?
        } else {
            v
        };
        if cname == "notify-keyspace-events" && crate::notify::parse_flags(&v).is_none() {
            return Err("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".into());
        }
        if !opt.effective && v != opt.default && !v.is_empty() {
            tracing::info!(option = cname, value = %v, "option accepted but has no effect in ebb");
        }
        // Keep the old and new encoding-threshold names in step.
        if let Some(other) = twin(cname) {
            self.values.insert(other.to_string(), v.clone());
        }
        self.values.insert(cname.to_string(), v);
        Ok(())
    }

    /// CONFIG GET: every (name, value) whose name matches a pattern.
    pub fn matching(&self, pattern: &[u8]) -> Vec<(String, String)> {
        let lower = pattern.to_ascii_lowercase();
        let exact = std::str::from_utf8(&lower)
            .ok()
            .map(canonical)
            .and_then(find);
        if let Some(opt) = exact {
            // A name (not a pattern) is answered under the name as asked,
            // old names and letter case included, as Redis does.
            return vec![(
                String::from_utf8_lossy(pattern).into_owned(),
                self.values.get(opt.name).cloned().unwrap_or_default(),
            )];
        }
        // A pattern matches the old names too (`*of` gives slaveof and
        // replicaof), as in Redis.
        let mut out: Vec<(String, String)> = self
            .values
            .iter()
            .filter(|(k, _)| !find(k).is_some_and(|o| o.hidden))
            .filter(|(k, _)| glob_match(&lower, k.as_bytes(), true))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for alias in ALIASES {
            if glob_match(&lower, alias.as_bytes(), true) {
                let v = self
                    .values
                    .get(canonical(alias))
                    .cloned()
                    .unwrap_or_default();
                out.push((alias.to_string(), v));
            }
        }
        out
    }
}

fn split_config_line(line: &str) -> Option<Vec<String>> {
    let args = crate::resp::split_args(line.as_bytes())?;
    Some(
        args.iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

#[cfg(test)]
mod tests;
