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
mod durability;
mod evict;
mod info;
mod latency;
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
use tokio::net::TcpListener;

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
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        // Scripts recurse over nested data (up to 1000 levels, see
        // script/libs.rs and script/msgpack.rs): room for that even in a
        // debug build.
        .thread_stack_size(8 << 20)
        .enable_all()
        .build()
    {
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
    let port = cfg.get_i64("port");
    let binds: Vec<String> = cfg
        .get("bind")
        .unwrap_or_default()
        .split_whitespace()
        .map(|s| s.trim_start_matches('-').to_string())
        .collect();
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
    let mut listeners = Vec::new();
    for addr in &binds {
        let host = if addr.contains(':') {
            format!("[{addr}]")
        } else {
            addr.clone()
        };
        match TcpListener::bind(format!("{host}:{port}")).await {
            Ok(l) => listeners.push(l),
            Err(e) if binds.len() > 1 && addr.contains(':') => {
                tracing::warn!(%addr, error = %e, "could not bind optional address");
            }
            Err(e) => {
                tracing::error!(%addr, port, error = %e, "could not bind");
                return 1;
            }
        }
    }
    if let Some(Ok(a)) = listeners.first().map(|l| l.local_addr()) {
        shared.port.store(a.port() as usize, Ordering::Relaxed);
        // Machine-readable line the test harness waits for.
        println!("ebb-server ready port={}", a.port());
        tracing::info!(port = a.port(), "Ready to accept connections");
    }
    tokio::spawn(sweeper::run(shared.clone()));
    tokio::spawn(durability::run_background(shared.clone()));
    for l in listeners {
        tokio::spawn(accept_loop(l, shared.clone()));
    }
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
    shared.persist_on_shutdown(&store, nosave);
    tracing::info!("ebb is now ready to exit, bye bye...");
}

/// Protected mode, as in Redis: with `protected-mode yes` and no password,
/// only clients on the loopback interface are served.
fn protected(shared: &Shared) -> bool {
    let c = shared.config.read();
    c.get_bool("protected-mode") && c.get("requirepass").unwrap_or_default().is_empty()
}

/// Tells a refused client why, then closes its connection.
async fn deny(mut stream: tokio::net::TcpStream) {
    use tokio::io::AsyncWriteExt;
    let _ = stream
        .write_all(
            b"-DENIED ebb is running in protected mode because protected mode is enabled and no \
              password is set for the default user. In this mode only clients on the loopback \
              interface are served. To accept other clients, set a password (requirepass), or \
              turn protected mode off (CONFIG SET protected-mode no from this host, or start with \
              --protected-mode no) once you are sure the server cannot be reached from the \
              internet.\r\n",
        )
        .await;
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                if !peer.ip().is_loopback() && protected(&shared) {
                    tokio::spawn(deny(stream));
                    continue;
                }
                tokio::spawn(conn::serve(stream, shared.clone()));
            }
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        }
    }
}
