//! How Redis 7.0 reads option names and values: old names, integer and
//! memory bounds, memory units, the form of `save` and
//! `oom-score-adj-values`.

/// The bounds Redis 7.0 puts on an integer option, where it has some.
pub(super) fn int_range(name: &str) -> Option<(i64, i64)> {
    const INT: i64 = i32::MAX as i64;
    const UINT: i64 = u32::MAX as i64;
    const LONG: i64 = i64::MAX;
    Some(match name {
        "port" | "tls-port" | "replica-announce-port" => (0, 65535),
        "databases" => (1, INT),
        "maxclients" => (1, UINT),
        "hz"
        | "timeout"
        | "auto-aof-rewrite-percentage"
        | "tcp-backlog"
        | "tcp-keepalive"
        | "list-compress-depth"
        | "replica-priority"
        | "repl-diskless-sync-delay"
        | "lfu-log-factor"
        | "lfu-decay-time"
        | "shutdown-timeout"
        | "min-replicas-max-lag"
        | "min-replicas-to-write"
        | "repl-diskless-sync-max-replicas" => (0, INT),
        "maxmemory-samples" | "repl-ping-replica-period" | "repl-timeout" => (1, INT),
        "io-threads" => (1, 128),
        "busy-poll-us" => (0, 10_000),
        "active-defrag-cycle-min" | "active-defrag-cycle-max" => (1, 99),
        "active-defrag-threshold-lower" | "active-defrag-threshold-upper" => (0, 1000),
        "active-defrag-max-scan-fields" => (1, LONG),
        "cluster-announce-bus-port" | "cluster-announce-port" | "cluster-announce-tls-port" => {
            (0, 65535)
        }
        "cluster-migration-barrier"
        | "cluster-replica-validity-factor"
        | "tls-session-cache-size"
        | "tls-session-cache-timeout" => (0, INT),
        "cluster-node-timeout" => (0, LONG),
        "active-expire-effort" => (1, 10),
        "maxmemory-eviction-tenacity" => (0, 100),
        "slowlog-log-slower-than" => (-1, LONG),
        "slowlog-max-len"
        | "latency-monitor-threshold"
        | "busy-reply-threshold"
        | "hash-max-listpack-entries"
        | "hash-max-ziplist-entries"
        | "zset-max-ziplist-entries"
        | "set-max-intset-entries"
        | "zset-max-listpack-entries"
        | "stream-node-max-entries"
        | "acllog-max-len"
        | "tracking-table-max-keys"
        | "repl-backlog-ttl" => (0, LONG),
        "list-max-listpack-size" | "list-max-ziplist-size" => (i32::MIN as i64, INT),
        _ => return None,
    })
}

/// The bounds Redis 7.0 puts on a memory option, where it has some.
pub(super) fn memory_range(name: &str) -> Option<(u64, u64)> {
    const LONG: u64 = i64::MAX as u64;
    Some(match name {
        "proto-max-bulk-len" | "client-query-buffer-limit" => (1024 * 1024, LONG),
        "repl-backlog-size" | "active-defrag-ignore-bytes" => (1, LONG),
        "auto-aof-rewrite-min-size" | "hll-sparse-max-bytes" | "stream-node-max-bytes" => (0, LONG),
        "hash-max-listpack-value"
        | "hash-max-ziplist-value"
        | "zset-max-listpack-value"
        | "zset-max-ziplist-value" => (0, LONG),
        _ => return None,
    })
}

/// `oom-score-adj-values`: three integers within -2000..2000, as Redis
/// takes them.
pub(super) fn oom_score_adj_values(value: &str) -> Result<String, String> {
    let words: Vec<&str> = value.split_ascii_whitespace().collect();
    if words.len() != 3 {
        return Err("wrong number of arguments".into());
    }
    for w in &words {
        if !w.parse::<i64>().is_ok_and(|n| (-2000..=2000).contains(&n)) {
            return Err(
                "Invalid oom-score-adj-values, elements must be between -2000 and 2000.".into(),
            );
        }
    }
    Ok(words.join(" "))
}

/// The `save` rules as Redis takes them: pairs of seconds (at least 1)
/// and changes (at least 0), or nothing at all; written back with single
/// spaces.
pub(super) fn save_rules(value: &str) -> Result<String, String> {
    let words: Vec<&str> = value.split_ascii_whitespace().collect();
    let bad = || "Invalid save parameters".to_string();
    if words.len() % 2 == 1 {
        return Err(bad());
    }
    for (i, w) in words.iter().enumerate() {
        let n: i64 = w.parse().map_err(|_| bad())?;
        if n < if i % 2 == 0 { 1 } else { 0 } {
            return Err(bad());
        }
    }
    Ok(words.join(" "))
}

/// Parses a memory value as Redis's `memtoull` does: digits (none reads as
/// 0), then an optional unit (`b`, `k`, `kb`, `m`, `mb`, `g`, `gb`, any
/// case). Too many digits saturate, and the unit multiplies with
/// wrap-around, as in C; the option's bounds are checked afterwards.
pub fn parse_memory(s: &str) -> Option<u64> {
    let digits = s.bytes().take_while(|c| c.is_ascii_digit()).count();
    let (num, unit) = s.split_at(digits);
    let mul: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    if digits >= 128 {
        return None;
    }
    let n = if num.is_empty() {
        0
    } else {
        num.parse::<u64>().unwrap_or(u64::MAX)
    };
    Some(n.wrapping_mul(mul))
}

/// The other name of an encoding threshold, kept in step with it.
pub(super) fn twin(name: &str) -> Option<&'static str> {
    Some(match name {
        "hash-max-listpack-entries" => "hash-max-ziplist-entries",
        "hash-max-ziplist-entries" => "hash-max-listpack-entries",
        "hash-max-listpack-value" => "hash-max-ziplist-value",
        "hash-max-ziplist-value" => "hash-max-listpack-value",
        "zset-max-listpack-entries" => "zset-max-ziplist-entries",
        "zset-max-ziplist-entries" => "zset-max-listpack-entries",
        "zset-max-listpack-value" => "zset-max-ziplist-value",
        "zset-max-ziplist-value" => "zset-max-listpack-value",
        "list-max-listpack-size" => "list-max-ziplist-size",
        "list-max-ziplist-size" => "list-max-listpack-size",
        _ => return None,
    })
}

/// The current name of an option given under an old one.
pub(super) fn canonical(name: &str) -> &str {
    match name {
        "lua-time-limit" => "busy-reply-threshold",
        "slaveof" => "replicaof",
        "slave-serve-stale-data" => "replica-serve-stale-data",
        "slave-read-only" => "replica-read-only",
        "slave-priority" => "replica-priority",
        "slave-lazy-flush" => "replica-lazy-flush",
        "cluster-slave-no-failover" => "cluster-replica-no-failover",
        "cluster-slave-validity-factor" => "cluster-replica-validity-factor",
        "min-slaves-max-lag" => "min-replicas-max-lag",
        "min-slaves-to-write" => "min-replicas-to-write",
        "repl-ping-slave-period" => "repl-ping-replica-period",
        "slave-announce-ip" => "replica-announce-ip",
        "slave-announce-port" => "replica-announce-port",
        "slave-ignore-maxmemory" => "replica-ignore-maxmemory",
        other => other,
    }
}

/// `appendfilename` and `appenddirname` name an entry of `dir`, never a
/// path, as Redis requires (other options pass).
pub(super) fn aof_names(name: &str, value: &str) -> Result<(), String> {
    let what = match name {
        "appendfilename" => "filename",
        "appenddirname" => "dirname",
        _ => return Ok(()),
    };
    if value.is_empty() {
        return Err(format!("{name} can't be empty"));
    }
    if value.contains(['/', '\\']) {
        return Err(format!("{name} can't be a path, just a {what}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_rules_are_pairs_of_seconds_and_changes() {
        assert_eq!(save_rules("").as_deref(), Ok(""));
        assert_eq!(
            save_rules("  3600   1 300 100 ").as_deref(),
            Ok("3600 1 300 100")
        );
        assert_eq!(save_rules("60 0").as_deref(), Ok("60 0"));
        for bad in ["abc", "100", "3600 1 300", "0 1", "10 -1", "10 x"] {
            assert_eq!(
                save_rules(bad),
                Err("Invalid save parameters".to_string()),
                "{bad}"
            );
        }
    }

    #[test]
    fn integer_bounds_are_redis_ones() {
        assert_eq!(int_range("timeout"), Some((0, i32::MAX as i64)));
        assert_eq!(int_range("maxclients"), Some((1, u32::MAX as i64)));
        assert_eq!(int_range("slowlog-log-slower-than"), Some((-1, i64::MAX)));
        assert_eq!(int_range("no-such-option"), None);
    }
}
