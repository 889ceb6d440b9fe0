//! INFO sections, with Redis's field names.

use bytes::Bytes;
use ebb_core::{Reply, Store};
use std::fmt::Write;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::server::{now_ms, Shared};

/// The Redis version ebb reports for client compatibility.
pub const REDIS_VERSION: &str = "7.0.15";

const SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "commandstats",
    "errorstats",
    "latencystats",
    "cluster",
    "keyspace",
];
const DEFAULT: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "errorstats",
    "cluster",
    "keyspace",
];

/// Resident set size in bytes (Linux), 0 elsewhere.
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u64>().ok())
        })
        .map(|pages| pages * 4096)
        .unwrap_or(0)
}

/// Builds the INFO text for the requested sections.
pub fn info(shared: &Arc<Shared>, store: &Store, args: &[&[u8]]) -> String {
    let mut want: Vec<String> = args
        .iter()
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
        .collect();
    if want.is_empty() || want.iter().any(|w| w == "default") {
        want.extend(DEFAULT.iter().map(|s| s.to_string()));
    }
    if want.iter().any(|w| w == "all" || w == "everything") {
        want.extend(SECTIONS.iter().map(|s| s.to_string()));
    }
    let mut out = String::new();
    for sec in SECTIONS {
        if !want.iter().any(|w| w == sec) {
            continue;
        }
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        section(&mut out, sec, shared, store);
    }
    out
}

fn section(out: &mut String, sec: &str, shared: &Arc<Shared>, store: &Store) {
    let st = &shared.stats;
    let cfg = shared.config.read();
    let l = |out: &mut String, k: &str, v: &dyn std::fmt::Display| {
        let _ = write!(out, "{k}:{v}\r\n");
    };
    match sec {
        "server" => {
            out.push_str("# Server\r\n");
            l(out, "redis_version", &REDIS_VERSION);
            l(out, "ebb_version", &env!("CARGO_PKG_VERSION"));
            // Not built from Redis's repository: the fields a build from
            // a source tarball shows.
            l(out, "redis_git_sha1", &"00000000");
            l(out, "redis_git_dirty", &0);
            l(out, "redis_build_id", &build_id());
            l(out, "redis_mode", &"standalone");
            l(out, "os", &crate::figures::os());
            l(out, "arch_bits", &(usize::BITS));
            l(out, "monotonic_clock", &"POSIX clock_gettime");
            l(out, "multiplexing_api", &"epoll");
            l(out, "atomicvar_api", &"c11-builtin");
            l(out, "gcc_version", &"0.0.0");
            l(out, "process_id", &std::process::id());
            l(out, "process_supervised", &"no");
            l(out, "run_id", &shared.run_id);
            l(out, "tcp_port", &shared.port.load(Ordering::Relaxed));
            l(out, "server_time_usec", &(now_ms() * 1000));
            l(
                out,
                "uptime_in_seconds",
                &shared.started.elapsed().as_secs(),
            );
            l(
                out,
                "uptime_in_days",
                &(shared.started.elapsed().as_secs() / 86400),
            );
            l(out, "hz", &cfg.get_i64("hz"));
            l(out, "configured_hz", &cfg.get_i64("hz"));
            l(out, "lru_clock", &crate::figures::lru_clock());
            l(
                out,
                "executable",
                &std::env::current_exe()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            );
            l(out, "config_file", &cfg.file.clone().unwrap_or_default());
            l(
                out,
                "io_threads_active",
                &u8::from(cfg.get_i64("io-threads") > 1),
            );
        }
        "clients" => {
            out.push_str("# Clients\r\n");
            // The largest read buffer and pub/sub backlog held right now
            // (Redis keeps the largest of the last few seconds).
            let (max_in, max_out, pubsub) = {
                let map = shared.clients.lock();
                map.values().fold((0, 0, 0), |(i, o, p), c| {
                    (
                        i.max(c.qbuf_room.load(Ordering::Relaxed)),
                        o.max(c.output_waiting()),
                        p + usize::from(c.subscribed()),
                    )
                })
            };
            l(out, "connected_clients", &shared.client_count());
            l(out, "cluster_connections", &0);
            l(out, "maxclients", &cfg.get_i64("maxclients"));
            l(out, "client_recent_max_input_buffer", &max_in);
            l(out, "client_recent_max_output_buffer", &max_out);
            l(out, "blocked_clients", &shared.blocked_count());
            l(out, "tracking_clients", &shared.tracking.figures().0);
            l(out, "pubsub_clients", &pubsub);
            l(
                out,
                "clients_in_timeout_table",
                &shared.timed_blocked.load(Ordering::Relaxed),
            );
        }
        "memory" => {
            out.push_str("# Memory\r\n");
            let m = mem_figures(shared);
            let overhead = overhead(&m, store);
            let net = m.total.saturating_sub(m.startup);
            let dataset = m.total.saturating_sub(overhead);
            let pct = |a: u64, b: u64| format!("{:.2}%", a as f32 * 100.0 / b.max(1) as f32);
            for (name, n) in [
                ("used_memory", m.total),
                ("used_memory_rss", m.rss),
                ("used_memory_peak", m.peak),
            ] {
                l(out, name, &n);
                l(out, &format!("{name}_human"), &human(n));
            }
            l(out, "used_memory_peak_perc", &pct(m.total, m.peak));
            l(out, "used_memory_overhead", &overhead);
            l(out, "used_memory_startup", &m.startup);
            l(out, "used_memory_dataset", &dataset);
            l(out, "used_memory_dataset_perc", &pct(dataset, net));
            // The system's malloc, seen through ebb's own counting (as in
            // MEMORY STATS).
            l(out, "allocator_allocated", &m.total);
            l(out, "allocator_active", &m.total);
            l(out, "allocator_resident", &m.rss);
            let system = crate::figures::total_system_memory();
            l(out, "total_system_memory", &system);
            l(out, "total_system_memory_human", &human(system));
            let lua = m.lua;
            let sc = &shared.scripting;
            l(out, "used_memory_lua", &lua);
            l(out, "used_memory_vm_eval", &lua);
            l(out, "used_memory_lua_human", &human(lua));
            l(out, "used_memory_scripts_eval", &sc.cached_script_bytes());
            l(out, "number_of_cached_scripts", &sc.cached());
            l(out, "number_of_functions", &sc.function_count());
            l(out, "number_of_libraries", &store.functions.len());
            let fn_vm = sc.functions_lua_bytes();
            l(out, "used_memory_vm_functions", &fn_vm);
            l(out, "used_memory_vm_total", &(lua + fn_vm));
            l(out, "used_memory_vm_total_human", &human(lua + fn_vm));
            let fn_code = store.functions.code_bytes() as u64;
            l(out, "used_memory_functions", &fn_code);
            let scripts = fn_code + sc.cached_script_bytes();
            l(out, "used_memory_scripts", &scripts);
            l(out, "used_memory_scripts_human", &human(scripts));
            let max = cfg.get_i64("maxmemory");
            l(out, "maxmemory", &max);
            l(out, "maxmemory_human", &human(max.max(0) as u64));
            l(
                out,
                "maxmemory_policy",
                &cfg.get("maxmemory-policy").unwrap_or_default(),
            );
            let ratio = |a: u64, b: u64| format!("{:.2}", a as f32 / b.max(1) as f32);
            let rss_bytes = m.rss as i64 - m.total as i64;
            l(out, "allocator_frag_ratio", &ratio(m.total, m.total));
            l(out, "allocator_frag_bytes", &0);
            l(out, "allocator_rss_ratio", &ratio(m.rss, m.total));
            l(out, "allocator_rss_bytes", &rss_bytes);
            l(out, "rss_overhead_ratio", &ratio(m.rss, m.rss));
            l(out, "rss_overhead_bytes", &0);
            l(out, "mem_fragmentation_ratio", &ratio(m.rss, m.total));
            l(out, "mem_fragmentation_bytes", &rss_bytes);
            l(
                out,
                "mem_not_counted_for_evict",
                &crate::evict::not_counted(store),
            );
            // No replication, cluster bus or replicas: nothing held for
            // them.
            l(out, "mem_replication_backlog", &0);
            l(out, "mem_total_replication_buffers", &0);
            l(out, "mem_clients_slaves", &0);
            l(out, "mem_clients_normal", &m.clients);
            l(out, "mem_cluster_links", &0);
            l(out, "mem_aof_buffer", &m.aof);
            l(out, "mem_allocator", &"libc");
            l(out, "active_defrag_running", &0);
            l(
                out,
                "lazyfree_pending_objects",
                &crate::server::LAZYFREE_PENDING.load(Ordering::Relaxed),
            );
            l(
                out,
                "lazyfreed_objects",
                &crate::server::LAZYFREED.load(Ordering::Relaxed),
            );
        }
        "persistence" => {
            use crate::figures as f;
            out.push_str("# Persistence\r\n");
            let dirty = st.dirty.load(Ordering::Relaxed);
            let saved = shared.dirty_at_save.load(Ordering::Relaxed);
            let ok = |b: bool| if b { "ok" } else { "err" };
            let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
            l(out, "loading", &u8::from(crate::loading::active()));
            l(out, "async_loading", &0);
            // Children write what they see at the fork; their copied pages
            // are not measured.
            l(out, "current_cow_peak", &0);
            l(out, "current_cow_size", &0);
            l(out, "current_cow_size_age", &0);
            l(out, "current_fork_perc", &"0.00");
            l(out, "current_save_keys_processed", &0);
            l(out, "current_save_keys_total", &0);
            l(
                out,
                "rdb_changes_since_last_save",
                &dirty.saturating_sub(saved),
            );
            l(
                out,
                "rdb_bgsave_in_progress",
                &(shared.bgsave_running.load(Ordering::Relaxed) as u8),
            );
            l(
                out,
                "rdb_last_save_time",
                &shared.last_save.load(Ordering::Relaxed),
            );
            l(
                out,
                "rdb_last_bgsave_status",
                &ok(shared.last_bgsave_ok.load(Ordering::Relaxed)),
            );
            l(
                out,
                "rdb_last_bgsave_time_sec",
                &f::RDB_LAST_SECS.load(Ordering::Relaxed),
            );
            l(
                out,
                "rdb_current_bgsave_time_sec",
                &f::running_secs(&f::RDB_STARTED),
            );
            l(out, "rdb_saves", &n(&f::RDB_SAVES));
            l(out, "rdb_last_cow_size", &0);
            l(out, "rdb_last_load_keys_expired", &n(&f::LOAD_KEYS_EXPIRED));
            l(out, "rdb_last_load_keys_loaded", &n(&f::LOAD_KEYS_LOADED));
            let aof = shared.aof.lock();
            l(out, "aof_enabled", &(aof.enabled as u8));
            l(
                out,
                "aof_rewrite_in_progress",
                &(shared.rewrite_running.load(Ordering::Relaxed) as u8),
            );
            let scheduled = shared.rewrite_scheduled.load(Ordering::Relaxed) as u8;
            l(out, "aof_rewrite_scheduled", &scheduled);
            l(
                out,
                "aof_last_rewrite_time_sec",
                &f::AOF_LAST_SECS.load(Ordering::Relaxed),
            );
            l(
                out,
                "aof_current_rewrite_time_sec",
                &f::running_secs(&f::AOF_STARTED),
            );
            l(
                out,
                "aof_last_bgrewrite_status",
                &ok(f::AOF_REWRITE_OK.load(Ordering::Relaxed)),
            );
            l(out, "aof_rewrites", &n(&f::AOF_REWRITES));
            l(
                out,
                "aof_rewrites_consecutive_failures",
                &n(&f::AOF_REWRITE_FAILURES),
            );
            l(
                out,
                "aof_last_write_status",
                &ok(shared.aof_write_ok.load(Ordering::Relaxed)),
            );
            l(out, "aof_last_cow_size", &0);
            l(out, "module_fork_in_progress", &0);
            l(out, "module_fork_last_cow_size", &0);
            if aof.enabled {
                // The base and incremental files the manifest lists, and
                // their total after the last rewrite.
                l(out, "aof_current_size", &aof.current_size);
                l(out, "aof_base_size", &aof.base_size);
                l(out, "aof_pending_rewrite", &scheduled);
                let buffered = aof.log.as_ref().map_or(0, |a| a.pending_len());
                l(out, "aof_buffer_length", &buffered);
                l(out, "aof_pending_bio_fsync", &0);
                l(out, "aof_delayed_fsync", &0);
            }
            crate::loading::info_lines(out);
        }
        "stats" => {
            use crate::figures as f;
            out.push_str("# Stats\r\n");
            let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
            let (ops, kin, kout) = f::rates();
            l(out, "total_connections_received", &n(&st.connections));
            l(out, "total_commands_processed", &n(&st.commands));
            l(out, "instantaneous_ops_per_sec", &ops);
            l(out, "total_net_input_bytes", &n(&st.net_in));
            l(out, "total_net_output_bytes", &n(&st.net_out));
            l(out, "total_net_repl_input_bytes", &0);
            l(out, "total_net_repl_output_bytes", &0);
            l(out, "instantaneous_input_kbps", &format!("{kin:.2}"));
            l(out, "instantaneous_output_kbps", &format!("{kout:.2}"));
            l(out, "instantaneous_input_repl_kbps", &"0.00");
            l(out, "instantaneous_output_repl_kbps", &"0.00");
            l(out, "rejected_connections", &n(&st.rejected));
            l(out, "sync_full", &0);
            l(out, "sync_partial_ok", &0);
            l(out, "sync_partial_err", &0);
            l(out, "expired_keys", &n(&st.expired_keys));
            l(out, "expired_members", &n(&st.expired_members));
            // Active expiry walks an index of deadlines, not samples: no
            // expired key is left waiting once a cycle has run.
            l(out, "expired_stale_perc", &"0.00");
            l(out, "expired_time_cap_reached_count", &n(&f::EXPIRE_CAPPED));
            l(
                out,
                "expire_cycle_cpu_milliseconds",
                &(n(&f::EXPIRE_CYCLE_US) / 1000),
            );
            l(out, "evicted_keys", &n(&crate::evict::EVICTED));
            l(out, "evicted_clients", &n(&crate::client_evict::EVICTED));
            l(out, "total_eviction_exceeded_time", &0);
            l(out, "current_eviction_exceeded_time", &0);
            l(out, "keyspace_hits", &n(&st.keyspace_hits));
            l(out, "keyspace_misses", &n(&st.keyspace_misses));
            l(
                out,
                "pubsub_channels",
                &shared.pubsub_channels(None, false).len(),
            );
            l(out, "pubsub_patterns", &shared.pubsub_numpat());
            l(
                out,
                "pubsubshard_channels",
                &shared.pubsub_channels(None, true).len(),
            );
            l(out, "latest_fork_usec", &n(&f::LATEST_FORK_USEC));
            l(out, "total_forks", &n(&crate::durability::FORKS));
            l(
                out,
                "migrate_cached_sockets",
                &crate::migrate::cached_count(),
            );
            l(out, "slave_expires_tracked_keys", &0);
            for name in [
                "active_defrag_hits",
                "active_defrag_misses",
                "active_defrag_key_hits",
                "active_defrag_key_misses",
                "total_active_defrag_time",
                "current_active_defrag_time",
            ] {
                l(out, name, &0);
            }
            let (_, keys, items, prefixes) = shared.tracking.figures();
            l(out, "tracking_total_keys", &keys);
            l(out, "tracking_total_items", &items);
            l(out, "tracking_total_prefixes", &prefixes);
            l(out, "unexpected_error_replies", &0);
            l(out, "total_error_replies", &crate::cmdstats::total_errors());
            l(out, "dump_payload_sanitizations", &0);
            l(out, "total_reads_processed", &n(&f::READS));
            l(out, "total_writes_processed", &n(&f::WRITES));
            l(out, "io_threaded_reads_processed", &0);
            l(out, "io_threaded_writes_processed", &0);
            l(out, "reply_buffer_shrinks", &0);
            l(out, "reply_buffer_expands", &0);
        }
        "replication" => {
            out.push_str("# Replication\r\n");
            l(out, "role", &"master");
            l(out, "connected_slaves", &0);
            l(out, "master_failover_state", &"no-failover");
            l(out, "master_replid", &shared.replid);
            l(
                out,
                "master_replid2",
                &"0000000000000000000000000000000000000000",
            );
            l(out, "master_repl_offset", &0);
            l(out, "second_repl_offset", &-1);
            l(out, "repl_backlog_active", &0);
            l(out, "repl_backlog_size", &cfg.get_i64("repl-backlog-size"));
            l(out, "repl_backlog_first_byte_offset", &0);
            l(out, "repl_backlog_histlen", &0);
        }
        "cpu" => {
            out.push_str("# CPU\r\n");
            for (who, suffix) in [
                (libc::RUSAGE_SELF, ""),
                (libc::RUSAGE_CHILDREN, "_children"),
            ] {
                let (sys, user) = cpu_times(who);
                let _ = write!(
                    out,
                    "used_cpu_sys{suffix}:{sys}\r\nused_cpu_user{suffix}:{user}\r\n"
                );
            }
            // The thread that runs commands (the one answering INFO).
            let (sys, user) = cpu_times(libc::RUSAGE_THREAD);
            let _ = write!(
                out,
                "used_cpu_sys_main_thread:{sys}\r\nused_cpu_user_main_thread:{user}\r\n"
            );
        }
        "modules" => out.push_str("# Modules\r\n"),
        "commandstats" => {
            out.push_str("# Commandstats\r\n");
            crate::cmdstats::commandstats(out);
        }
        "errorstats" => {
            out.push_str("# Errorstats\r\n");
            crate::cmdstats::errorstats(out);
        }
        "latencystats" => {
            out.push_str("# Latencystats\r\n");
            crate::cmdstats::latencystats(out);
        }
        "cluster" => {
            out.push_str("# Cluster\r\n");
            l(out, "cluster_enabled", &0);
        }
        "keyspace" => {
            out.push_str("# Keyspace\r\n");
            let now = now_ms();
            for (i, db) in store.dbs.iter().enumerate() {
                let s = db.stats();
                if s.keys > 0 {
                    let _ = write!(
                        out,
                        "db{i}:keys={},expires={},avg_ttl={},member_expiry_keys={}\r\n",
                        s.keys,
                        s.expires,
                        db.avg_ttl(now),
                        s.member_expiry_keys
                    );
                }
            }
        }
        _ => {}
    }
}

fn human(b: u64) -> String {
    let f = b as f64;
    if f >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2}G", f / 1024.0 / 1024.0 / 1024.0)
    } else if f >= 1024.0 * 1024.0 {
        format!("{:.2}M", f / 1024.0 / 1024.0)
    } else if f >= 1024.0 {
        format!("{:.2}K", f / 1024.0)
    } else {
        format!("{b}B")
    }
}

/// System and user CPU time of `who` (a `getrusage` target), formatted as
/// Redis prints them: seconds with six decimals.
fn cpu_times(who: libc::c_int) -> (String, String) {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return ("0.000000".into(), "0.000000".into());
    }
    let fmt = |t: libc::timeval| format!("{}.{:06}", t.tv_sec, t.tv_usec);
    (fmt(ru.ru_stime), fmt(ru.ru_utime))
}

/// MEMORY STATS and MEMORY DOCTOR, which need server-wide figures (the
/// other MEMORY subcommands are the core's). `None` for other subcommands.
pub fn memory_server(shared: &Shared, store: &Store, argv: &[&[u8]]) -> Option<Reply> {
    let sub = argv.get(1)?;
    if sub.eq_ignore_ascii_case(b"stats") {
        Some(memory_stats(shared, store))
    } else if sub.eq_ignore_ascii_case(b"doctor") {
        Some(memory_doctor(shared))
    } else {
        None
    }
}

/// The figures MEMORY STATS reports and MEMORY DOCTOR judges.
struct MemFigures {
    peak: u64,
    total: u64,
    startup: u64,
    clients: u64,
    client_count: u64,
    aof: u64,
    lua: u64,
    rss: u64,
}

fn mem_figures(shared: &Shared) -> MemFigures {
    // What the connections hold, as they published it (buffers, queued
    // transactions, subscriptions, output waiting).
    let client_count = shared.client_count() as u64;
    let clients = crate::client_evict::total() as u64;
    let aof = shared
        .aof
        .lock()
        .log
        .as_ref()
        .map_or(0, |a| a.buffered() as u64);
    MemFigures {
        peak: crate::alloc::peak() as u64,
        total: crate::alloc::allocated() as u64,
        startup: shared.startup_bytes,
        clients,
        client_count,
        aof,
        lua: shared.scripting.lua_bytes(),
        rss: rss_bytes(),
    }
}

/// Memory that is not the data: the start-up allocation, client
/// buffers, the AOF buffer, Lua, and the key tables' own room.
fn overhead(m: &MemFigures, store: &Store) -> u64 {
    let tables: usize = store
        .dbs
        .iter()
        .filter(|db| !db.is_empty())
        .map(|db| {
            let (main, expires) = db.overhead();
            main + expires
        })
        .sum();
    m.startup + m.clients + m.aof + m.lua + tables as u64
}

/// The build id: a hash of the version, as stable as Redis's.
fn build_id() -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in concat!("ebb-", env!("CARGO_PKG_VERSION")).bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// A ratio as Redis computes it (in single precision, reported as a
/// double).
fn ratio(a: u64, b: u64) -> Reply {
    Reply::Double((a as f32 / b.max(1) as f32) as f64)
}

fn memory_stats(shared: &Shared, store: &Store) -> Reply {
    let m = mem_figures(shared);
    let name = |s: &str| Reply::Bulk(Bytes::copy_from_slice(s.as_bytes()));
    let int = |n: u64| Reply::Int(n as i64);
    let mut out: Vec<(Reply, Reply)> = vec![
        (name("peak.allocated"), int(m.peak)),
        (name("total.allocated"), int(m.total)),
        (name("startup.allocated"), int(m.startup)),
        (name("replication.backlog"), int(0)),
        (name("clients.slaves"), int(0)),
        (name("clients.normal"), int(m.clients)),
        (name("cluster.links"), int(0)),
        (name("aof.buffer"), int(m.aof)),
        (name("lua.caches"), int(m.lua)),
        (name("functions.caches"), int(0)),
    ];
    let overhead = overhead(&m, store);
    let mut keys = 0u64;
    for (i, db) in store.dbs.iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        keys += db.len() as u64;
        let (main, expires) = db.overhead();
        out.push((
            name(&format!("db.{i}")),
            Reply::Map(vec![
                (name("overhead.hashtable.main"), int(main as u64)),
                (name("overhead.hashtable.expires"), int(expires as u64)),
                (name("overhead.hashtable.slot-to-keys"), int(0)),
            ]),
        ));
    }
    let net = m.total.saturating_sub(m.startup);
    let dataset = m.total.saturating_sub(overhead);
    out.extend([
        (name("overhead.total"), int(overhead)),
        (name("keys.count"), int(keys)),
        (
            name("keys.bytes-per-key"),
            int(net.checked_div(keys).unwrap_or(0)),
        ),
        (name("dataset.bytes"), int(dataset)),
        (
            name("dataset.percentage"),
            Reply::Double((dataset as f32 * 100.0 / net.max(1) as f32) as f64),
        ),
        (
            name("peak.percentage"),
            Reply::Double((m.total as f32 * 100.0 / m.peak.max(1) as f32) as f64),
        ),
        // The allocator is the system's malloc, seen through ebb's own
        // counting: what it holds is what ebb allocated, and its
        // resident size is the process's.
        (name("allocator.allocated"), int(m.total)),
        (name("allocator.active"), int(m.total)),
        (name("allocator.resident"), int(m.rss)),
        (
            name("allocator-fragmentation.ratio"),
            ratio(m.total, m.total),
        ),
        (name("allocator-fragmentation.bytes"), int(0)),
        (name("allocator-rss.ratio"), ratio(m.rss, m.total)),
        (
            name("allocator-rss.bytes"),
            Reply::Int(m.rss as i64 - m.total as i64),
        ),
        (name("rss-overhead.ratio"), ratio(m.rss, m.rss)),
        (name("rss-overhead.bytes"), int(0)),
        (name("fragmentation"), ratio(m.rss, m.total)),
        (
            name("fragmentation.bytes"),
            Reply::Int(m.rss as i64 - m.total as i64),
        ),
    ]);
    Reply::Map(out)
}

fn memory_doctor(shared: &Shared) -> Reply {
    let m = mem_figures(shared);
    let text = if m.total < 5 * 1024 * 1024 {
        "Hi Sam, this instance is empty or is using very little memory, my issues detector \
         can't be used in these conditions. Please, leave for your mission on Earth and fill it \
         with some data. The new Sam and I will be back to our programming as soon as I finished \
         rebooting.\n"
            .to_string()
    } else {
        let frag = m.rss as f32 / m.total.max(1) as f32;
        let mut found = Vec::new();
        if m.peak as f32 / m.total.max(1) as f32 > 1.5 {
            found.push(DOCTOR_PEAK.to_string());
        }
        if frag > 1.4 && m.rss.saturating_sub(m.total) > 10 << 20 {
            found.push(DOCTOR_FRAG.to_string());
        }
        if m.client_count > 0 && m.clients / m.client_count > 200 * 1024 {
            found.push(DOCTOR_CLIENTS.to_string());
        }
        if shared.scripting.cached() > 1000 {
            found.push(DOCTOR_SCRIPTS.to_string());
        }
        if found.is_empty() {
            "Hi Sam, I can't find any memory issue in your instance. I can only account for what \
             occurs on this base.\n"
                .to_string()
        } else {
            let mut s = String::from(
                "Sam, I detected a few issues in this Redis instance memory implants:\n\n",
            );
            for f in found {
                s.push_str(&f);
                s.push_str("\n\n");
            }
            s.push_str("I'm here to keep you safe, Sam. I want to help you.\n");
            s
        }
    };
    Reply::Verbatim(Bytes::from(text))
}

const DOCTOR_PEAK: &str = " * Peak memory: the peak allocation is over 150% of what is \
    allocated now. Memory freed since the peak may still be held by the process and shows as \
    fragmentation; it is reused as data grows again. MEMORY PURGE asks the allocator to return \
    free pages; a restart returns everything.";

const DOCTOR_FRAG: &str = " * High total RSS: the resident size is over 1.4 times the bytes \
    allocated (and over 10 MB more). A past peak (see above) is the usual cause; otherwise the \
    workload fragments the allocator's heap. The currently used allocator is \"libc\".";

const DOCTOR_CLIENTS: &str = " * Big client buffers: connections hold more than 200 kB of \
    buffers each on average: slow Pub/Sub subscribers, large replies or very long pipelines. \
    CLIENT LIST shows which connections they are.";

const DOCTOR_SCRIPTS: &str = " * Many scripts: more than 1000 scripts are cached. Scripts built \
    with their values inside and sent with EVAL each fill the cache; pass values as KEYS and ARGV, \
    load the script once and run it with EVALSHA, or call SCRIPT FLUSH now and then.";
