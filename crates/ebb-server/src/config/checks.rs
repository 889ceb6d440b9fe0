//! Checks Redis 7.0 makes on option values: integer bounds and the form
//! of the `save` rules.

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
        "active-expire-effort" => (1, 10),
        "maxmemory-eviction-tenacity" => (0, 100),
        "slowlog-log-slower-than" => (-1, LONG),
        "slowlog-max-len"
        | "latency-monitor-threshold"
        | "busy-reply-threshold"
        | "hash-max-listpack-entries"
        | "set-max-intset-entries"
        | "zset-max-listpack-entries"
        | "stream-node-max-entries"
        | "acllog-max-len"
        | "tracking-table-max-keys"
        | "repl-backlog-ttl" => (0, LONG),
        "list-max-listpack-size" => (i32::MIN as i64, INT),
        _ => return None,
    })
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
