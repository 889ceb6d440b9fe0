//! Listening sockets: bound from `bind` and `port` at start, and bound
//! anew when CONFIG SET changes either (as Redis does). New sockets are
//! bound before the old ones close, so a port or address that cannot be
//! had leaves the server listening where it was; an address kept on the
//! same port keeps its socket.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};

use crate::config::Config;
use crate::conn::Admission;
use crate::server::Shared;

/// One listening socket's address (as `bind` names it), the socket, and
/// the task accepting on it.
pub struct Listening {
    addr: String,
    listener: Arc<TcpListener>,
    task: tokio::task::AbortHandle,
}

/// The addresses of the `bind` option (a leading `-` marks one that may
/// be missing; it is bound like the others when it can be). An empty
/// `bind` listens nowhere, as in Redis.
pub fn binds_of(cfg: &Config) -> Vec<String> {
    cfg.get("bind")
        .unwrap_or_default()
        .split_whitespace()
        .map(|s| s.to_string())
        .collect()
}

/// The `tcp-backlog` option.
pub fn backlog_of(cfg: &Config) -> u32 {
    u32::try_from(cfg.get_i64("tcp-backlog")).unwrap_or(511)
}

/// Why binding failed: the address, and the error.
pub struct BindError {
    pub addr: String,
    pub error: std::io::Error,
}

/// Binds every address of `binds` but those in `keep` (already listening)
/// on `port` (0: a port the system picks, the same on every address after
/// the first). An address marked optional (`-`), or an IPv6 one among
/// several, may fail alone. Names (`localhost`) are resolved.
pub fn bind_all(
    binds: &[String],
    port: u16,
    keep: &[String],
    backlog: u32,
) -> Result<Vec<(String, TcpListener)>, BindError> {
    let mut out = Vec::new();
    let mut port = port;
    for raw in binds.iter().filter(|b| !keep.contains(b)) {
        let optional = raw.starts_with('-') || (binds.len() > 1 && raw.contains(':'));
        // `*` and `::*` are Redis's names for every IPv4 / IPv6 interface.
        let addr = match raw.trim_start_matches('-') {
            "*" => "0.0.0.0",
            "::*" => "::",
            a => a,
        };
        let host = if addr.contains(':') {
            format!("[{addr}]")
        } else {
            addr.to_string()
        };
        let bound = bind_one(&format!("{host}:{port}"), backlog);
        match bound {
            Ok(l) => {
                if port == 0 {
                    port = l.local_addr().map(|a| a.port()).unwrap_or(0);
                }
                out.push((raw.clone(), l));
            }
            Err(e) if optional => {
                tracing::warn!(%addr, error = %e, "could not bind optional address");
            }
            Err(error) => {
                return Err(BindError {
                    addr: addr.to_string(),
                    error,
                })
            }
        }
    }
    Ok(out)
}

/// Binds and listens on the first address `spec` resolves to that can be
/// had, with a `backlog` of pending connections (`tcp-backlog`). As in
/// Redis, an IPv6 socket is IPv6-only, so `::*` and `*` can both listen on
/// one port.
fn bind_one(spec: &str, backlog: u32) -> std::io::Result<TcpListener> {
    use std::net::ToSocketAddrs;
    let mut last = std::io::Error::new(std::io::ErrorKind::InvalidInput, "no address");
    for sa in spec.to_socket_addrs()? {
        let socket = if sa.is_ipv6() {
            tokio::net::TcpSocket::new_v6()
        } else {
            tokio::net::TcpSocket::new_v4()
        };
        let bound = socket.and_then(|s| {
            s.set_reuseaddr(true)?;
            if sa.is_ipv6() {
                v6_only(&s)?;
            }
            s.bind(sa)?;
            s.listen(backlog)
        });
        match bound {
            Ok(l) => {
                use std::os::fd::AsRawFd;
                crate::process::note_listener(l.as_raw_fd());
                return Ok(l);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Sets IPV6_V6ONLY on an IPv6 socket.
fn v6_only(s: &tokio::net::TcpSocket) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    // SAFETY: the descriptor is the socket's own, open for the call; the
    // option value is a c_int and its length is given.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_IPV6,
            libc::IPV6_V6ONLY,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Serves `fresh` from now on besides the sockets listening on `keep`,
/// closing the others, and records the port. Returns the port listened on.
pub fn serve(shared: &Arc<Shared>, fresh: Vec<(String, TcpListener)>, keep: &[String]) -> u16 {
    let mut list = shared.listeners.lock();
    list.retain(|l| {
        let kept = keep.contains(&l.addr);
        if !kept {
            l.task.abort();
        }
        kept
    });
    let mut port = None;
    for (addr, l) in fresh {
        port = port.or_else(|| l.local_addr().ok().map(|a| a.port()));
        let listener = Arc::new(l);
        let task = tokio::spawn(accept_loop(listener.clone(), shared.clone())).abort_handle();
        list.push(Listening {
            addr,
            listener,
            task,
        });
    }
    if let Some(p) = port {
        shared.port.store(usize::from(p), Ordering::Relaxed);
    }
    shared.port.load(Ordering::Relaxed) as u16
}

/// Redis's order for a change of addresses on the same port: closes every
/// listening socket, then binds `binds` (retrying for a moment while the
/// closed sockets are released); if that fails, binds `old` again and
/// gives the error.
pub fn rebind_in_place(
    shared: &Arc<Shared>,
    binds: &[String],
    old: &[String],
    port: u16,
    backlog: u32,
) -> Result<(), BindError> {
    // The closed sockets are released by their accept tasks, which another
    // worker runs while this one waits.
    tokio::task::block_in_place(|| {
        // (Each socket closes once its task is gone and its entry dropped.)
        for l in shared.listeners.lock().drain(..) {
            l.task.abort();
        }
        let bind = |addrs: &[String]| {
            let until = std::time::Instant::now() + std::time::Duration::from_millis(500);
            loop {
                match bind_all(addrs, port, &[], backlog) {
                    Err(e)
                        if e.error.kind() == std::io::ErrorKind::AddrInUse
                            && std::time::Instant::now() < until =>
                    {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                    r => return r,
                }
            }
        };
        match bind(binds) {
            Ok(fresh) => {
                serve(shared, fresh, &[]);
                Ok(())
            }
            Err(e) => {
                if let Ok(back) = bind(old) {
                    serve(shared, back, &[]);
                }
                Err(e)
            }
        }
    })
}

/// The addresses listened on now.
pub fn listening(shared: &Shared) -> Vec<String> {
    shared
        .listeners
        .lock()
        .iter()
        .map(|l| l.addr.clone())
        .collect()
}

/// Tells a refused client (protected mode, as in Redis: with
/// `protected-mode yes` and no password, only clients on the loopback
/// interface are served) why, then closes its connection.
async fn deny(mut stream: TcpStream) {
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

/// Takes, at once, the connections whose handshake is done but that no
/// accept task has taken yet, and registers them as clients. A command
/// that looks at the clients (CLIENT, INFO) calls it first, so it sees
/// every connection made before it was sent, as in Redis, whose event
/// loop takes a listening socket's events in the order they came.
pub fn catch_up(shared: &Arc<Shared>) {
    use std::os::fd::{AsRawFd, FromRawFd};
    // (Not while a CONFIG SET holds the configuration.)
    let Some(how) = shared.config.try_read().map(|c| Admission::of(&c)) else {
        return;
    };
    let listeners: Vec<Arc<TcpListener>> = shared
        .listeners
        .lock()
        .iter()
        .map(|l| l.listener.clone())
        .collect();
    for l in listeners {
        loop {
            // SAFETY: the listener is alive (held above); a new descriptor
            // is owned by the stream made from it.
            let fd = unsafe {
                libc::accept4(
                    l.as_raw_fd(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                )
            };
            if fd < 0 {
                break;
            }
            // SAFETY: `fd` was just accepted and nothing else owns it.
            let std = unsafe { std::net::TcpStream::from_raw_fd(fd) };
            if let (Ok(peer), Ok(stream)) = (std.peer_addr(), TcpStream::from_std(std)) {
                start(stream, peer, shared, how);
            }
        }
    }
}

/// Serves a new connection, or refuses it in protected mode.
fn start(stream: TcpStream, peer: SocketAddr, shared: &Arc<Shared>, how: Admission) {
    if !peer.ip().is_loopback() && how.protected {
        tokio::spawn(deny(stream));
    } else {
        crate::conn::start_tcp(stream, shared, how);
    }
}

async fn accept_loop(listener: Arc<TcpListener>, shared: Arc<Shared>) {
    // A failing accept (out of file descriptors) is retried every 10 ms
    // and logged at most once a second.
    let mut warned: Option<std::time::Instant> = None;
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                // The connection is registered here, before any command
                // that comes after it (CLIENT LIST, INFO count it). That
                // reads the configuration, which a CONFIG SET may hold
                // while it rebinds (and aborts this loop): then it waits in
                // the connection's own task.
                let how = shared.config.try_read().map(|c| Admission::of(&c));
                match how {
                    Some(how) => start(stream, peer, &shared, how),
                    None => {
                        let shared = shared.clone();
                        tokio::spawn(async move {
                            let how = Admission::of(&shared.config.read());
                            start(stream, peer, &shared, how);
                        });
                    }
                }
            }
            Err(_) if crate::process::listening_stopped() => return,
            Err(e) => {
                if warned.is_none_or(|t| t.elapsed().as_secs() >= 1) {
                    tracing::warn!("Accepting client connection: accept: {e}");
                    warned = Some(std::time::Instant::now());
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        }
    }
}

/// Listens on the `unixsocket` path, if one is set, as Redis does: a file
/// left there is replaced, `unixsocketperm` (octal, 0 leaves the
/// default) sets its mode, and the file is removed when the server exits
/// cleanly. Clients on it count as local (protected mode, `local`
/// protected actions).
pub fn serve_unix(shared: &Arc<Shared>) -> Result<(), String> {
    let (path, perm) = {
        let c = shared.config.read();
        (
            c.get("unixsocket").unwrap_or_default(),
            c.get("unixsocketperm").unwrap_or_default(),
        )
    };
    if path.is_empty() {
        return Ok(());
    }
    let _ = std::fs::remove_file(&path);
    let listener = tokio::net::UnixListener::bind(&path)
        .map_err(|e| format!("Failed opening Unix socket: {e}"))?;
    crate::process::note_socket_file(&path);
    {
        use std::os::fd::AsRawFd;
        crate::process::note_listener(listener.as_raw_fd());
    }
    let mode = u32::from_str_radix(&perm, 8).unwrap_or(0);
    if mode != 0 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("Failed opening Unix socket: {e}"))?;
    }
    tracing::info!(path = %path, "The server is now ready to accept connections at the Unix socket");
    let shared = shared.clone();
    tokio::spawn(async move {
        let mut warned: Option<std::time::Instant> = None;
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    // Registered here, as on TCP (see `accept_loop`).
                    match shared.config.try_read().map(|c| Admission::of(&c)) {
                        Some(how) => crate::conn::start_unix(stream, &path, &shared, how),
                        None => {
                            let shared = shared.clone();
                            let path = path.clone();
                            tokio::spawn(async move {
                                let how = Admission::of(&shared.config.read());
                                crate::conn::start_unix(stream, &path, &shared, how);
                            });
                        }
                    }
                }
                Err(_) if crate::process::listening_stopped() => return,
                Err(e) => {
                    if warned.is_none_or(|t| t.elapsed().as_secs() >= 1) {
                        tracing::warn!("Accepting client connection: accept: {e}");
                        warned = Some(std::time::Instant::now());
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                }
            }
        }
    });
    Ok(())
}
