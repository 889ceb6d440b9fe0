//! CLIENT subcommands.

use bytes::Bytes;
use ebb_core::args::parse_i64;
use ebb_core::error::unknown_subcommand;
use ebb_core::{Error, Reply};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::commands::Guard;
use crate::conn::{ReplyMode, Session};
use crate::server::{now_ms, ClientEntry, Msg, Shared};

fn eq(a: &[u8], b: &str) -> bool {
    a.eq_ignore_ascii_case(b.as_bytes())
}

fn err(s: impl Into<String>) -> Reply {
    Reply::Error(s.into().into())
}

/// Checks a client name as CLIENT SETNAME does.
pub fn valid_name(n: &[u8]) -> Result<(), Reply> {
    if n.iter().any(|&c| !(b'!'..=b'~').contains(&c)) {
        return Err(err(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        ));
    }
    Ok(())
}

/// One CLIENT LIST / CLIENT INFO line.
/// The RESP size of a request: what Redis's query buffer still holds of the
/// command running, reported as the caller's `qbuf`.
fn request_len(argv: &[&[u8]]) -> usize {
    let digits = |n: usize| n.checked_ilog10().map_or(1, |d| d as usize + 1);
    argv.iter()
        .map(|a| a.len() + 5 + digits(a.len()))
        .sum::<usize>()
        + 3
        + digits(argv.len())
}

/// One CLIENT LIST line; `this` is the calling session and its request.
pub fn describe(c: &ClientEntry, this: Option<(&Session, &[&[u8]])>) -> String {
    describe_with(c, this, c.last_command_name())
}

/// The CLIENT LIST line of a session while it runs `cmd` (for the ACL
/// log, which names the command refused).
pub fn describe_running(c: &ClientEntry, s: &Session, argv: &[&[u8]], cmd: &str) -> String {
    describe_with(c, Some((s, argv)), cmd)
}

fn describe_with(c: &ClientEntry, this: Option<(&Session, &[&[u8]])>, cmd: &str) -> String {
    let name = c
        .name
        .lock()
        .as_ref()
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .unwrap_or_default();
    let (lib, ver) = c.lib.lock().clone();
    let age = c.created.elapsed().as_secs();
    let idle = crate::server::now_ms().saturating_sub(c.last_active.load(Ordering::Relaxed)) / 1000;
    let subs = c.subs.load(Ordering::Relaxed);
    let psubs = c.psubs.load(Ordering::Relaxed);
    let ssubs = c.ssubs.load(Ordering::Relaxed);
    let mut flags = String::new();
    if c.monitor.load(Ordering::Relaxed) {
        flags.push('O');
    }
    if c.subscribed() {
        flags.push('P');
    }
    if c.in_multi.load(Ordering::Relaxed) {
        flags.push('x');
    }
    if c.blocked.load(Ordering::Relaxed) {
        flags.push('b');
    }
    let tracking = c.tracking.load(Ordering::Relaxed);
    for (bit, f) in [
        (crate::tracking::FLAG_ON, 't'),
        (crate::tracking::FLAG_BROKEN, 'R'),
        (crate::tracking::FLAG_BCAST, 'B'),
    ] {
        if tracking & bit != 0 {
            flags.push(f);
        }
    }
    if c.watch_dirty.load(Ordering::Relaxed) {
        flags.push('d');
    }
    if c.unix {
        flags.push('U');
    }
    if c.no_evict.load(Ordering::Relaxed) {
        flags.push('e');
    }
    if flags.is_empty() {
        flags.push('N');
    }
    let multi = c.multi_len.load(Ordering::Relaxed);
    // The calling client's query buffer holds the command it runs, as
    // Redis's does, and its arguments count as Redis counts them (bytes
    // and a pointer each); another client's, what is left of an
    // incomplete request, as that client last published it.
    let (qbuf, argv_mem, running) = match this {
        Some((_, argv)) => {
            let bytes: usize = argv.iter().map(|a| a.len()).sum();
            (request_len(argv), bytes, bytes + 8 * argv.len())
        }
        None => (
            c.qbuf.load(Ordering::Relaxed),
            c.argv_mem.load(Ordering::Relaxed),
            0,
        ),
    };
    let qbuf_free = c.qbuf_room.load(Ordering::Relaxed).saturating_sub(qbuf);
    // Output waiting: replies not yet written, and messages (pub/sub,
    // tracking) still in the mailbox.
    let omem = c.output_waiting();
    let tot_mem = c.memory() + running;
    format!(
        "id={} addr={} laddr={} fd=8 name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} multi={} qbuf={} qbuf-free={} argv-mem={} multi-mem={} rbs={} rbp=0 obl=0 oll=0 omem={} tot-mem={} events=r cmd={} user={} redir={} resp={} lib-name={} lib-ver={}",
        c.id,
        c.addr,
        c.laddr,
        name,
        age,
        idle,
        flags,
        c.db.load(Ordering::Relaxed),
        subs,
        psubs,
        ssubs,
        multi,
        qbuf,
        qbuf_free,
        argv_mem,
        c.multi_mem.load(Ordering::Relaxed),
        c.reply_room.load(Ordering::Relaxed),
        omem,
        tot_mem,
        cmd,
        String::from_utf8_lossy(&c.user.lock()),
        c.redir.load(Ordering::Relaxed),
        c.resp.load(Ordering::Relaxed),
        lib,
        ver
    )
}

/// CLIENT …; None when no reply must be sent (CLIENT REPLY OFF/SKIP).
pub fn client<'a>(
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    argv: &[&[u8]],
) -> Option<Reply> {
    let sub = &argv[1];
    let n = argv.len();
    let r = if eq(sub, "id") && n == 2 {
        Reply::Int(s.id as i64)
    } else if eq(sub, "setname") && n == 3 {
        match valid_name(argv[2]) {
            Err(e) => e,
            Ok(()) => {
                *s.entry.name.lock() = if argv[2].is_empty() {
                    None
                } else {
                    Some(Bytes::copy_from_slice(argv[2]))
                };
                Reply::Ok
            }
        }
    } else if eq(sub, "getname") && n == 2 {
        match s.entry.name.lock().as_ref() {
            Some(n) => Reply::Bulk(n.clone()),
            None => Reply::Nil,
        }
    } else if eq(sub, "setinfo") && n == 4 {
        let v = String::from_utf8_lossy(argv[3]).into_owned();
        if v.contains(' ') || v.contains('\n') {
            err(format!(
                "ERR {} cannot contain spaces, newlines or special characters.",
                String::from_utf8_lossy(argv[2])
            ))
        } else if eq(argv[2], "lib-name") {
            s.entry.lib.lock().0 = v;
            Reply::Ok
        } else if eq(argv[2], "lib-ver") {
            s.entry.lib.lock().1 = v;
            Reply::Ok
        } else {
            err(format!(
                "ERR Unrecognized option '{}'",
                String::from_utf8_lossy(argv[2])
            ))
        }
    } else if eq(sub, "info") && n == 2 {
        Reply::Verbatim(format!("{}\n", describe(&s.entry, Some((s, argv)))).into())
    } else if eq(sub, "list") {
        list(s, shared, argv)
    } else if eq(sub, "kill") && n >= 3 {
        kill(s, shared, &argv[2..])
    } else if eq(sub, "reply") && n == 3 {
        if eq(argv[2], "on") {
            s.reply_mode = ReplyMode::On;
            Reply::Ok
        } else if eq(argv[2], "off") {
            s.reply_mode = ReplyMode::Off;
            return None;
        } else if eq(argv[2], "skip") {
            s.reply_mode = ReplyMode::Skip;
            return None;
        } else {
            Error::Syntax.into()
        }
    } else if eq(sub, "no-evict") && n == 3 {
        if eq(argv[2], "on") || eq(argv[2], "off") {
            s.entry.no_evict.store(eq(argv[2], "on"), Ordering::Relaxed);
            Reply::Ok
        } else {
            Error::Syntax.into()
        }
    } else if eq(sub, "pause") && (n == 3 || n == 4) {
        // The mode is checked before the timeout, as in Redis.
        let writes_only = match argv.get(3) {
            None => false,
            Some(m) if eq(m, "write") => true,
            Some(m) if eq(m, "all") => false,
            Some(_) => return Some(err("ERR CLIENT PAUSE mode must be WRITE or ALL")),
        };
        let Some(ms) = parse_i64(argv[2]) else {
            return Some(err("ERR timeout is not an integer or out of range"));
        };
        if ms < 0 {
            return Some(err("ERR timeout is negative"));
        }
        shared
            .pause_writes_only
            .store(writes_only, Ordering::Relaxed);
        let store = guard.get_or_insert_with(|| shared.lock_store());
        shared.set_pause(store, now_ms().saturating_add(ms as u64));
        Reply::Ok
    } else if eq(sub, "unpause") && n == 2 {
        let store = guard.get_or_insert_with(|| shared.lock_store());
        shared.set_pause(store, 0);
        Reply::Ok
    } else if eq(sub, "unblock") && (n == 3 || n == 4) {
        // TIMEOUT: the reply the command gives when its time is up. The
        // reason is checked before the id, as in Redis.
        let error = match argv.get(3) {
            None => None,
            Some(m) if eq(m, "timeout") => None,
            Some(m) if eq(m, "error") => Some(err("UNBLOCKED client unblocked via CLIENT UNBLOCK")),
            Some(_) => return Some(err("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")),
        };
        let Some(id) = parse_i64(argv[2]) else {
            return Some(Error::NotInteger.into());
        };
        Reply::Int(shared.unblock_with(id as u64, error) as i64)
    } else if eq(sub, "tracking") && n >= 3 {
        tracking(s, shared, argv)
    } else if eq(sub, "caching") && n >= 3 {
        let Some(mode) = &s.track else {
            return Some(err("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"));
        };
        if eq(argv[2], "yes") {
            if !mode.optin {
                return Some(err(
                    "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
                ));
            }
        } else if eq(argv[2], "no") {
            if !mode.optout {
                return Some(err(
                    "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
                ));
            }
        } else {
            return Some(Error::Syntax.into());
        }
        s.caching = true;
        Reply::Ok
    } else if eq(sub, "getredir") && n == 2 {
        Reply::Int(s.track.as_ref().map_or(-1, |m| m.redirect as i64))
    } else if eq(sub, "trackinginfo") && n == 2 {
        tracking_info(s, shared)
    } else if eq(sub, "help") && n == 2 {
        Reply::help(&[
            "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CACHING (YES|NO)",
            "    In OPTIN or OPTOUT tracking, whether the next command's keys are tracked.",
            "GETREDIR",
            "    The id of the client tracking messages are redirected to (-1 if none).",
            "GETNAME",
            "    This connection's name.",
            "ID",
            "    This connection's id.",
            "INFO",
            "    This connection, described as in CLIENT LIST.",
            "KILL <ip:port>",
            "    Close the connection from <ip:port>.",
            "KILL <option> <value> [<option> <value> [...]]",
            "    Close the connections matching every option:",
            "    * ID <client-id>",
            "    * ADDR (<ip:port>|<unixsocket>:0)",
            "    * LADDR (<ip:port>|<unixsocket>:0)",
            "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
            "    * USER <username>",
            "    * SKIPME (YES|NO)",
            "      Whether to spare this connection (default: yes).",
            "LIST [options ...]",
            "    Every connection, one line each. Options:",
            "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
            "    * ID <client-id> [<client-id> ...]",
            "UNPAUSE",
            "    End a CLIENT PAUSE.",
            "PAUSE <timeout> [WRITE|ALL]",
            "    Hold every command, or only writes, for <timeout> milliseconds.",
            "REPLY (ON|OFF|SKIP)",
            "    Turn this connection's replies on or off, or skip the next one.",
            "SETNAME <name>",
            "    Name this connection.",
            "SETINFO <option> <value>",
            "    Record the client library's name (LIB-NAME) or version (LIB-VER).",
            "UNBLOCK <clientid> [TIMEOUT|ERROR]",
            "    Wake a client blocked in a blocking command.",
            "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
            "         [OPTIN] [OPTOUT] [NOLOOP]",
            "    Turn server-assisted client-side caching on or off.",
            "TRACKINGINFO",
            "    This connection's tracking settings.",
            "NO-EVICT (ON|OFF)",
            "    Spare this connection from client eviction.",
            "HELP",
            "    Print this help.",
        ])
    } else {
        // A known subcommand with the wrong arguments gets Redis's text for
        // that; an unknown one, its own.
        let name = format!(
            "client|{}",
            String::from_utf8_lossy(sub).to_ascii_lowercase()
        );
        if ebb_core::keyspecs::subcommand(&name).is_some() {
            ebb_core::error::subcommand_syntax(sub, "client").into()
        } else {
            unknown_subcommand(sub, "client").into()
        }
    };
    Some(r)
}

/// CLIENT TRACKING (ON|OFF) [REDIRECT id] [BCAST] [PREFIX p …] [OPTIN]
/// [OPTOUT] [NOLOOP], checked as Redis checks it.
fn tracking(s: &mut Session, shared: &Arc<Shared>, argv: &[&[u8]]) -> Reply {
    use crate::tracking::Mode;
    let mut mode = Mode::default();
    let mut j = 3;
    while j < argv.len() {
        let more = j + 1 < argv.len();
        let a = argv[j];
        if eq(a, "redirect") && more {
            j += 1;
            if mode.redirect != 0 {
                return err("ERR A client can only redirect to a single other client");
            }
            let Some(id) = parse_i64(argv[j]) else {
                return Error::NotInteger.into();
            };
            if id <= 0 || !shared.clients.lock().contains_key(&(id as u64)) {
                return err("ERR The client ID you want redirect to does not exist");
            }
            mode.redirect = id as u64;
        } else if eq(a, "bcast") {
            mode.bcast = true;
        } else if eq(a, "optin") {
            mode.optin = true;
        } else if eq(a, "optout") {
            mode.optout = true;
        } else if eq(a, "noloop") {
            mode.noloop = true;
        } else if eq(a, "prefix") && more {
            j += 1;
            mode.prefixes.push(Bytes::copy_from_slice(argv[j]));
        } else {
            return Error::Syntax.into();
        }
        j += 1;
    }
    if eq(argv[2], "off") {
        if s.track.take().is_some() {
            shared.tracking.disable(s.id);
        }
        s.entry.tracking.store(0, Ordering::Relaxed);
        s.entry.redir.store(-1, Ordering::Relaxed);
        s.caching = false;
        return Reply::Ok;
    }
    if !eq(argv[2], "on") {
        return Error::Syntax.into();
    }
    if !mode.bcast && !mode.prefixes.is_empty() {
        return err("ERR PREFIX option requires BCAST mode to be enabled");
    }
    if let Some(old) = &s.track {
        if old.bcast != mode.bcast {
            return err("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.");
        }
    }
    if mode.bcast && (mode.optin || mode.optout) {
        return err("ERR OPTIN and OPTOUT are not compatible with BCAST");
    }
    if mode.optin && mode.optout {
        return err("ERR You can't specify both OPTIN mode and OPTOUT mode");
    }
    if let Some(old) = &s.track {
        if (mode.optin && old.optout) || (mode.optout && old.optin) {
            return err("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.");
        }
    }
    if mode.bcast {
        let overlap = |a: &[u8], b: &[u8]| a[..a.len().min(b.len())] == b[..a.len().min(b.len())];
        let existing = s.track.as_ref().map(|m| &m.prefixes[..]).unwrap_or(&[]);
        for (i, p) in mode.prefixes.iter().enumerate() {
            if let Some(old) = existing.iter().find(|old| overlap(old, p)) {
                return err(format!(
                    "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single client must not overlap.",
                    String::from_utf8_lossy(p),
                    String::from_utf8_lossy(old)
                ));
            }
            if let Some(other) = mode.prefixes[i + 1..].iter().find(|o| overlap(p, o)) {
                return err(format!(
                    "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a single client must not overlap.",
                    String::from_utf8_lossy(p),
                    String::from_utf8_lossy(other)
                ));
            }
        }
    }
    let bcast = mode.bcast;
    s.entry.redir.store(mode.redirect as i64, Ordering::Relaxed);
    shared.tracking.enable(s.id, mode);
    s.track = shared.tracking.mode_of(s.id).map(|(m, _)| m);
    use crate::tracking::{FLAG_BCAST, FLAG_ON};
    s.entry.tracking.store(
        FLAG_ON | if bcast { FLAG_BCAST } else { 0 },
        Ordering::Relaxed,
    );
    Reply::Ok
}

/// CLIENT TRACKINGINFO: flags, redirection and prefixes.
fn tracking_info(s: &Session, shared: &Arc<Shared>) -> Reply {
    let mut flags: Vec<&str> = Vec::new();
    let (redirect, prefixes) = match shared.tracking.mode_of(s.id) {
        None => {
            flags.push("off");
            (-1, Vec::new())
        }
        Some((m, broken)) => {
            // In Redis's order.
            let all = [
                (true, "on"),
                (m.bcast, "bcast"),
                (m.optin, "optin"),
                (m.optin && s.caching, "caching-yes"),
                (m.optout, "optout"),
                (m.optout && s.caching, "caching-no"),
                (m.noloop, "noloop"),
                (broken, "broken_redirect"),
            ];
            flags.extend(all.iter().filter(|(on, _)| *on).map(|(_, f)| *f));
            let mut prefixes = m.prefixes.clone();
            prefixes.sort();
            (m.redirect as i64, prefixes)
        }
    };
    Reply::Map(vec![
        (
            Reply::bulk(b"flags"),
            Reply::Set(flags.iter().map(|f| Reply::bulk(f.as_bytes())).collect()),
        ),
        (Reply::bulk(b"redirect"), Reply::Int(redirect)),
        (
            Reply::bulk(b"prefixes"),
            Reply::Array(prefixes.into_iter().map(Reply::Bulk).collect()),
        ),
    ])
}

/// CLIENT LIST [TYPE …] [ID …]; `argv` is the whole request.
fn list(s: &Session, shared: &Arc<Shared>, argv: &[&[u8]]) -> Reply {
    let line = |c: &Arc<ClientEntry>| {
        let this = (c.id == s.id).then_some((s, argv));
        describe(c, this) + "\n"
    };
    // As Redis 7.0: `TYPE t` alone, or `ID id…` (each id looked up in the
    // order given, unknown ones skipped), or nothing.
    if argv.len() > 3 && eq(argv[2], "id") {
        let mut ids = Vec::new();
        for a in &argv[3..] {
            match parse_i64(a) {
                Some(x) => ids.push(x),
                None => return err("ERR Invalid client ID"),
            }
        }
        let map = shared.clients.lock();
        let out: String = ids
            .iter()
            .filter_map(|&id| u64::try_from(id).ok().and_then(|id| map.get(&id)).cloned())
            .map(|c| line(&c))
            .collect();
        return Reply::Verbatim(out.into());
    }
    let kind = match argv.len() {
        2 => None,
        4 if eq(argv[2], "type") => {
            let t = String::from_utf8_lossy(argv[3]).to_ascii_lowercase();
            if !["normal", "master", "replica", "slave", "pubsub"].contains(&t.as_str()) {
                let given = ebb_core::error::c_text(argv[3]);
                return err(format!("ERR Unknown client type '{given}'"));
            }
            Some(t)
        }
        _ => return Error::Syntax.into(),
    };
    let clients: Vec<Arc<ClientEntry>> = {
        let mut v: Vec<_> = shared.clients.lock().values().cloned().collect();
        v.sort_by_key(|c| c.id);
        v
    };
    let mut out = String::new();
    for c in clients {
        let pubsub = c.subscribed();
        match kind.as_deref() {
            Some("pubsub") if !pubsub => continue,
            Some("normal") if pubsub => continue,
            Some("master") | Some("replica") | Some("slave") => continue,
            _ => {}
        }
        out.push_str(&line(&c));
    }
    Reply::Verbatim(out.into())
}

fn kill(s: &Session, shared: &Arc<Shared>, args: &[&[u8]]) -> Reply {
    let clients: Vec<Arc<ClientEntry>> = shared.clients.lock().values().cloned().collect();
    if args.len() == 1 {
        let addr = String::from_utf8_lossy(args[0]).into_owned();
        return match clients.iter().find(|c| c.addr == addr) {
            Some(c) => {
                let _ = c.tx.send(Msg::Kill);
                c.kill.notify_one();
                Reply::Ok
            }
            None => err("ERR No such client"),
        };
    }
    if !args.len().is_multiple_of(2) {
        return Error::Syntax.into();
    }
    let mut skipme = true;
    let mut filters: Vec<(String, String)> = Vec::new();
    for pair in args.chunks(2) {
        let k = String::from_utf8_lossy(pair[0]).to_ascii_lowercase();
        let v = String::from_utf8_lossy(pair[1]).into_owned();
        match k.as_str() {
            "id" => {
                if parse_i64(pair[1]).is_none_or(|x| x <= 0) {
                    return err("ERR client-id should be greater than 0");
                }
            }
            "addr" | "laddr" => {}
            "user" if shared.acl.user(v.as_bytes()).is_none() => {
                return err(format!(
                    "ERR No such user '{}'",
                    ebb_core::error::c_text(pair[1])
                ))
            }
            "user" => {}
            "type" => {
                if !["normal", "master", "replica", "slave", "pubsub"]
                    .contains(&v.to_ascii_lowercase().as_str())
                {
                    let given = ebb_core::error::c_text(pair[1]);
                    return err(format!("ERR Unknown client type '{given}'"));
                }
            }
            "skipme" => {
                skipme = match v.to_ascii_lowercase().as_str() {
                    "yes" => true,
                    "no" => false,
                    _ => return Error::Syntax.into(),
                };
                continue;
            }
            _ => return Error::Syntax.into(),
        }
        filters.push((k, v));
    }
    let mut killed = 0;
    for c in clients {
        if skipme && c.id == s.id {
            continue;
        }
        let pubsub = c.subscribed();
        let ok = filters.iter().all(|(k, v)| match k.as_str() {
            "id" => v.parse::<u64>().ok() == Some(c.id),
            "addr" => &c.addr == v,
            "laddr" => &c.laddr == v,
            "user" => *c.user.lock() == v.as_bytes(),
            "type" => match v.to_ascii_lowercase().as_str() {
                "pubsub" => pubsub,
                "normal" => !pubsub,
                _ => false,
            },
            _ => false,
        });
        if ok {
            let _ = c.tx.send(Msg::Kill);
            c.kill.notify_one();
            killed += 1;
        }
    }
    Reply::Int(killed)
}

/// How often the client-buffer cron looks at the connections.
const BUFFER_CRON_MS: u64 = 250;

/// Runs forever: asks each connection idle for
/// [`crate::conn::IDLE_FREE_MS`] that still holds a read buffer, each
/// whose read buffer a long request grew, and each whose reply buffer's
/// peak asks for another size, to trim its buffers (`Msg::Trim`). The connections do the freeing themselves, on their own
/// task, so no buffer changes hands.
pub async fn buffer_cron(shared: Arc<Shared>) {
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(BUFFER_CRON_MS)).await;
        let now = now_ms();
        let clients: Vec<Arc<ClientEntry>> = shared.clients.lock().values().cloned().collect();
        if shared.cron_paused.load(Ordering::Relaxed) {
            continue;
        }
        shared.tracking.enforce_limit(&shared.clients);
        crate::migrate::close_idle();
        for c in clients {
            crate::outbuf::check_soft(&c, now);
            // A blocked command holds its connection's buffers until it
            // is served; asking would only wake it.
            if c.blocked.load(Ordering::Relaxed) {
                continue;
            }
            let room = c.qbuf_room.load(Ordering::Relaxed);
            let idle = now.saturating_sub(c.last_active.load(Ordering::Relaxed));
            let reply_room = c.reply_room.load(Ordering::Relaxed);
            let resize = reply_room > 0
                && crate::conn::reply_room_wanted(reply_room, c.reply_peak.load(Ordering::Relaxed))
                    .is_some();
            if resize
                || (room > 0 && idle >= crate::conn::IDLE_FREE_MS)
                || room > crate::conn::TRIM_ABOVE
            {
                let _ = c.tx.send(Msg::Trim);
            } else {
                crate::conn::reset_reply_peak(&c, now);
            }
        }
    }
}
