//! ebb-server: a Redis-protocol server whose set, sorted-set and hash
//! members carry their own time to live.

mod acl;
mod acl_cmd;
mod admin;
mod alloc;
mod client;
mod cmdstats;
mod commands;
mod config;
mod conn;
mod debug_cmd;
mod durability;
mod evict;
mod info;
mod latency;
mod listen;
mod notify;
mod observe;
mod outbuf;
mod persist;
mod pubsub;
mod rename;
mod resp;
mod script;
mod server;
mod sweeper;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::config::Config;
use crate::server::Shared;

/// Counts allocated bytes for INFO's `used_memory` and `maxmemory`.
#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-v" || a == "--version") {
        println!(
            "ebb-server v={} (redis compatible {})",
            env!("CARGO_PKG_VERSION"),
            info::REDIS_VERSION
        );
        return;
    }
    let cfg = match Config::from_args(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = rename::install(&cfg.renames) {
        eprintln!("*** FATAL CONFIG FILE ERROR *** {e}");
        std::process::exit(1);
    }
    let level = match cfg.get("loglevel").as_deref() {
        Some("debug") => "debug",
        Some("verbose") => "info",
        Some("warning") => "warn",
        _ => "info",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level)),
        )
        .with_target(false)
        .with_writer(std::io::stderr)
        .init();
    // `io-threads` (Redis's name, default 1): how many threads serve
    // connections. Commands run one batch at a time under the keyspace
    // lock whatever the count; more threads spread reading, parsing,
    // reply encoding and socket writes over cores.
    let threads = cfg.get_i64("io-threads").clamp(1, 128) as usize;
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder
        .worker_threads(threads)
        // Scripts recurse over nested data (up to 1000 levels, see
        // script/libs.rs and script/msgpack.rs): room for that even in a
        // debug build.
        .thread_stack_size(8 << 20)
        .enable_all();
    // Connections that became readable together are served in that order
    // (the last one woken would otherwise run first): a command sent
    // before another client's is executed first, as in Redis's event loop.
    #[cfg(tokio_unstable)]
    builder.disable_lifo_slot();
    let rt = match builder.build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start runtime: {e}");
            std::process::exit(1);
        }
    };
    let code = rt.block_on(serve(cfg));
    std::process::exit(code);
}

async fn serve(cfg: Config) -> i32 {
    let port = u16::try_from(cfg.get_i64("port")).unwrap_or(0);
    let binds = listen::binds_of(&cfg);
    let backlog = listen::backlog_of(&cfg);
    let users = (
        cfg.get("requirepass").unwrap_or_default(),
        cfg.users.clone(),
        cfg.get("aclfile").unwrap_or_default(),
    );
    let shared = Shared::new(cfg);
    if let Err(e) = shared.acl.configure(&users.0, &users.1, &users.2) {
        eprintln!("*** FATAL CONFIG FILE ERROR *** {e}");
        tracing::error!("{e}");
        return 1;
    }
    if let Err(e) = durability::load_at_start(&shared) {
        tracing::error!("{e}");
        eprintln!("{e}");
        return 1;
    }
    crate::script::load_libraries(&shared);
    let listeners = match listen::bind_all(&binds, port, &[], backlog) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(addr = %e.addr, port, error = %e.error, "could not bind");
            return 1;
        }
    };
    if !listeners.is_empty() {
        let port = listen::serve(&shared, listeners, &[]);
        // `port 0` asked for any free port: CONFIG GET names the one taken.
        let _ = shared.config.write().set("port", &port.to_string());
        // Machine-readable line the test harness waits for.
        println!("ebb-server ready port={port}");
        tracing::info!(port, "Ready to accept connections");
    }
    tokio::spawn(sweeper::run(shared.clone()));
    tokio::spawn(client::buffer_cron(shared.clone()));
    tokio::spawn(durability::run_background(shared.clone()));
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "cannot install signal handler");
            return 1;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => tracing::info!("Received SIGINT scheduling shutdown..."),
        _ = term.recv() => tracing::info!("Received SIGTERM scheduling shutdown..."),
        _ = shared.shutdown.notified() => {},
    }
    shutdown(&shared);
    0
}

fn shutdown(shared: &Arc<Shared>) {
    shared.shutting_down.store(true, Ordering::SeqCst);
    // Taking the store lock waits for any command in flight to finish.
    let store = shared.store.lock();
    let nosave = shared.shutdown_nosave.load(Ordering::SeqCst);
    let save = shared.shutdown_save.load(Ordering::SeqCst);
    shared.persist_on_shutdown(&store, nosave, save);
    tracing::info!("ebb is now ready to exit, bye bye...");
}
