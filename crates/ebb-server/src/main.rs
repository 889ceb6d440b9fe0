//! ebb-server: a Redis-protocol server whose set, sorted-set and hash
//! members carry their own time to live.

mod acl;
mod acl_cmd;
mod admin;
mod alloc;
mod aof_dir;
mod busy_poll;
mod client;
mod client_evict;
mod cluster;
mod cmdstats;
mod command_cmd;
mod commands;
mod config;
mod conn;
mod debug_cmd;
mod durability;
mod evict;
mod exec;
mod figures;
mod handshake;
mod info;
mod latency;
mod listen;
mod loading;
mod lolwut;
mod migrate;
mod misconf;
mod module_cmd;
mod notify;
mod observe;
mod outbuf;
mod persist;
mod process;
mod proctitle;
mod pubsub;
mod rename;
mod resp;
mod script;
mod server;
mod sweeper;
mod tracking;
mod wake;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::config::Config;
use crate::server::Shared;

/// Counts allocated bytes for INFO's `used_memory` and `maxmemory`.
#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

fn main() {
    // Before anything else: it rewrites the environment.
    proctitle::init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-v" || a == "--version") {
        println!(
            "ebb-server v={} (redis compatible {})",
            env!("CARGO_PKG_VERSION"),
            info::REDIS_VERSION
        );
        return;
    }
    let mut cfg = match Config::from_args(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    proctitle::set_config_file(cfg.file.as_deref());
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
    let daemonized = process::wants_daemon(&cfg);
    let log = match process::log_target(&cfg, daemonized) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("*** FATAL CONFIG FILE ERROR *** {e}");
            std::process::exit(1);
        }
    };
    if daemonized {
        process::daemonize();
    }
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let logger = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    match log {
        // Colours only for a terminal: a log collected by systemd, docker
        // or a pipe gets plain lines, as with a log file.
        process::LogTarget::Stdout => logger
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
            .with_writer(std::io::stdout)
            .init(),
        process::LogTarget::File(f) => logger
            .with_ansi(false)
            .with_writer(std::sync::Mutex::new(f))
            .init(),
        process::LogTarget::Discard => logger.with_writer(std::io::sink).init(),
    }
    process::install_panic_report();
    fit_maxclients(&mut cfg);
    for m in &cfg.modules {
        tracing::warn!(
            "loadmodule {m}: ebb-server does not load Redis modules; their commands will be unknown"
        );
    }
    if let Some(p) = process::pidfile(&cfg, daemonized) {
        process::write_pidfile(p);
    }
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
    builder.on_thread_park(busy_poll::before_park);
    // Connections that became readable together are served in that order
    // (the last one woken would otherwise run first): a command sent
    // before another client's is executed first, as in Redis's event loop.
    #[cfg(tokio_unstable)]
    builder.disable_lifo_slot();
    let epolls_before = busy_poll::epoll_fds();
    let rt = match builder.build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start runtime: {e}");
            std::process::exit(1);
        }
    };
    busy_poll::use_new_epoll_fds(&epolls_before);
    busy_poll::configure(cfg.get_i64("busy-poll-us"));
    let code = rt.block_on(serve(cfg));
    process::remove_files();
    std::process::exit(code);
}

async fn serve(cfg: Config) -> i32 {
    // The handlers come first: SIGTERM or SIGINT arriving while the data
    // loads or just after the ready line is a clean shutdown (saving, the
    // log synced, the pid file removed), never the default abrupt exit.
    use tokio::signal::unix::{signal, SignalKind};
    let (mut term, mut int) = match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(t), Ok(i)) => (t, i),
        (Err(e), _) | (_, Err(e)) => {
            tracing::error!(error = %e, "cannot install signal handler");
            return 1;
        }
    };
    let port = u16::try_from(cfg.get_i64("port")).unwrap_or(0);
    let binds = listen::binds_of(&cfg);
    let backlog = listen::backlog_of(&cfg);
    let users = (
        cfg.get("requirepass").unwrap_or_default(),
        cfg.users.clone(),
        cfg.path_in_dir("aclfile"),
    );
    let shared = Shared::new(cfg);
    if let Err(e) = shared.acl.configure(&users.0, &users.1, &users.2) {
        eprintln!("*** FATAL CONFIG FILE ERROR *** {e}");
        tracing::error!("{e}");
        return 1;
    }
    // Bound before the data loads, as Redis does: a client connecting
    // meanwhile waits for its first reply rather than being refused.
    let listeners = match listen::bind_all(&binds, port, &[], backlog) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(addr = %e.addr, port, error = %e.error, "could not bind");
            return 1;
        }
    };
    // Logged once the ports are bound, as Redis does: test harnesses take
    // this line as the sign they may connect.
    tracing::info!(
        "ebb-server {} (Redis {} compatible) started, PID: {}",
        env!("CARGO_PKG_VERSION"),
        info::REDIS_VERSION,
        std::process::id()
    );
    // Before any script state exists (loading may run scripts).
    crate::script::DEPRECATED_API.store(
        shared.config.read().get_bool("lua-enable-deprecated-api"),
        Ordering::Relaxed,
    );
    // Connections are served while the data loads (on a thread of its
    // own), as in Redis: commands without the `loading` flag are refused
    // with -LOADING until it is in place.
    loading::begin();
    loading::set_total(aof_dir::bytes_to_load(
        &shared,
        shared.config.read().get_bool("appendonly"),
    ));
    if let Err(e) = listen::serve_unix(&shared) {
        tracing::error!("{e}");
        return 1;
    }
    let port = if listeners.is_empty() {
        None
    } else {
        let port = listen::serve(&shared, listeners, &[]);
        // `port 0` asked for any free port: CONFIG GET names the one taken.
        let _ = shared.config.write().set("port", &port.to_string());
        Some(port)
    };
    proctitle::update(&shared.config.read());
    let (done, loaded) = tokio::sync::oneshot::channel();
    let loader = shared.clone();
    let spawned = std::thread::Builder::new()
        .name("ebb-loader".into())
        // As the runtime's threads: loading may compile function libraries.
        .stack_size(8 << 20)
        .spawn(move || {
            let _ = done.send(durability::load_at_start(&loader));
        });
    if let Err(e) = spawned {
        tracing::error!("cannot start the loading thread: {e}");
        return 1;
    }
    match loaded.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::error!("{e}");
            eprintln!("{e}");
            return 1;
        }
        // The thread ended without an answer: a bug (its report is logged).
        Err(_) => {
            tracing::error!("loading the data failed");
            return 1;
        }
    }
    crate::script::load_libraries(&shared);
    loading::end();
    if let Some(port) = port {
        // Machine-readable line the test harness waits for.
        println!("ebb-server ready port={port}");
        tracing::info!(port, "Ready to accept connections");
    }
    tokio::spawn(sweeper::run(shared.clone()));
    tokio::spawn(figures::run(shared.clone()));
    tokio::spawn(client::buffer_cron(shared.clone()));
    tokio::spawn(durability::run_background(shared.clone()));
    loop {
        tokio::select! {
            _ = int.recv() => tracing::info!("Received SIGINT scheduling shutdown..."),
            _ = term.recv() => tracing::info!("Received SIGTERM scheduling shutdown..."),
        }
        // As in Redis the shutdown runs from the cron: DEBUG PAUSE-CRON
        // holds it, and SHUTDOWN ABORT meanwhile cancels it.
        shared.shutdown_asked.store(true, Ordering::SeqCst);
        while shared.cron_paused.load(Ordering::Relaxed)
            && shared.shutdown_asked.load(Ordering::SeqCst)
        {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        if !shared.shutdown_asked.load(Ordering::SeqCst) {
            continue;
        }
        // A second SIGINT while the final save runs exits at once, as in
        // Redis ("You insist"), leaving no temp file behind.
        let insist = process::InsistOnSigint::arm(&persist::snapshot::temp_path(
            &shared.snapshot_path(),
            std::process::id(),
        ));
        if shutdown(&shared) {
            return 0;
        }
        drop(insist);
        shared.shutdown_asked.store(false, Ordering::SeqCst);
    }
}

/// Raises the open-files limit for `maxclients`, or lowers `maxclients`
/// to what the limit allows, with Redis's log lines; a limit that leaves
/// no room for any client stops the start.
fn fit_maxclients(cfg: &mut Config) {
    let asked = cfg.get_i64("maxclients").max(1) as u64;
    let want = asked + process::RESERVED_FDS;
    let fl = process::raise_open_files(asked);
    if fl.clients >= asked {
        if fl.now > fl.old {
            tracing::info!(
                "Increased maximum number of open files to {} (it was originally set to {}).",
                fl.now,
                fl.old
            );
        }
        return;
    }
    if fl.now <= process::RESERVED_FDS {
        let text = format!(
            "Your current 'ulimit -n' of {} is not enough for the server to start. Please \
             increase your open file limit to at least {want}. Exiting.",
            fl.old
        );
        tracing::error!("{text}");
        eprintln!("{text}");
        std::process::exit(1);
    }
    let why = fl
        .error
        .map_or_else(|| "unknown".to_string(), |e| e.to_string());
    tracing::warn!(
        "You requested maxclients of {asked} requiring at least {want} max file descriptors."
    );
    tracing::warn!("Server can't set maximum open files to {want} because of OS error: {why}.");
    tracing::warn!(
        "Current maximum open files is {}. maxclients has been reduced to {} to compensate for \
         low ulimit. If you need higher maxclients increase 'ulimit -n'.",
        fl.now,
        fl.clients
    );
    let _ = cfg.set("maxclients", &fl.clients.to_string());
}

/// A shutdown on a signal: false (and the server goes on) when the final
/// snapshot could not be written, as in Redis.
fn shutdown(shared: &Arc<Shared>) -> bool {
    // Taking the store lock waits for any command in flight to finish.
    let store = shared.store.lock();
    if shared.writing_initial_aof() {
        tracing::warn!("Writing initial AOF, can't exit.");
        return false;
    }
    if shared.persist_on_shutdown(&store, false, false).is_err() {
        tracing::warn!("Error trying to save the DB, can't exit.");
        return false;
    }
    tracing::info!("ebb is now ready to exit, bye bye...");
    true
}
