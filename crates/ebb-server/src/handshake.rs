//! HELLO and AUTH: the protocol version, the client's name and who it is.

use bytes::Bytes;
use ebb_core::args::parse_i64;
use ebb_core::{Error, Reply};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::commands::{eq, err, text};
use crate::conn::Session;
use crate::server::{now_ms, Shared};

/// # Format
/// `HELLO [protover [AUTH username password] [SETNAME clientname]]` →
/// the server's description as a map (a flat array in RESP2).
pub(crate) fn hello(s: &mut Session, shared: &Arc<Shared>, argv: &[&[u8]]) -> Reply {
    let mut i = 1;
    let mut proto = if s.resp3 { 3 } else { 2 };
    if argv.len() > 1 {
        match parse_i64(argv[1]) {
            Some(v) if v == 2 || v == 3 => proto = v,
            Some(_) => return err("NOPROTO unsupported protocol version"),
            None => return err("ERR Protocol version is not an integer or out of range"),
        }
        i = 2;
    }
    let mut name = None;
    while i < argv.len() {
        let more = argv.len() - i - 1;
        if eq(argv[i], "auth") && more >= 2 {
            let (user, pass) = (&argv[i + 1], &argv[i + 2]);
            if let Err(e) = check_auth(s, shared, argv[0], Some(user), pass) {
                return e;
            }
            i += 3;
        } else if eq(argv[i], "setname") && more >= 1 {
            if let Err(e) = crate::client::valid_name(argv[i + 1]) {
                return e;
            }
            name = Some(argv[i + 1]);
            i += 2;
        } else {
            return err(format!(
                "ERR Syntax error in HELLO option '{}'",
                text(argv[i])
            ));
        }
    }
    if !s.authenticated {
        return err("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time");
    }
    if let Some(n) = name {
        *s.entry.name.lock() = if n.is_empty() {
            None
        } else {
            Some(Bytes::copy_from_slice(n))
        };
    }
    s.resp3 = proto == 3;
    s.entry.resp.store(proto as usize, Ordering::Relaxed);
    Reply::Map(vec![
        (Reply::text("server"), Reply::text("redis")),
        (
            Reply::text("version"),
            Reply::text(crate::info::REDIS_VERSION),
        ),
        (Reply::text("proto"), Reply::Int(proto)),
        (Reply::text("id"), Reply::Int(s.id as i64)),
        (Reply::text("mode"), Reply::text("standalone")),
        (Reply::text("role"), Reply::text("master")),
        (Reply::text("modules"), Reply::Array(vec![])),
    ])
}

/// AUTH / HELLO AUTH: on success the session becomes that user. A failed
/// attempt is recorded in the ACL log.
fn check_auth(
    s: &mut Session,
    shared: &Arc<Shared>,
    cmd: &[u8],
    user: Option<&[u8]>,
    pass: &[u8],
) -> Result<(), Reply> {
    let name = user.unwrap_or(b"default");
    let found = shared.acl.user(name);
    if user.is_none() && found.as_ref().is_some_and(|u| u.nopass) {
        return Err(err("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"));
    }
    match found {
        Some(u) if u.enabled && u.password_ok(pass) => {
            *s.entry.user.lock() = u.name.clone();
            s.user = u;
            s.acl_gen = shared.acl.generation();
            s.authenticated = true;
            Ok(())
        }
        _ => {
            let info = crate::client::describe(&s.entry, None);
            shared.acl.log(
                "auth",
                "toplevel",
                String::from_utf8_lossy(cmd).into_owned(),
                name,
                info,
                crate::acl_cmd::log_max_len(shared),
                now_ms(),
            );
            Err(err(
                "WRONGPASS invalid username-password pair or user is disabled.",
            ))
        }
    }
}

/// # Format
/// `AUTH [username] password` → `+OK`, or `WRONGPASS …`.
pub(crate) fn auth(s: &mut Session, shared: &Arc<Shared>, argv: &[&[u8]]) -> Reply {
    let r = match argv.len() {
        2 => check_auth(s, shared, argv[0], None, argv[1]),
        3 => check_auth(s, shared, argv[0], Some(argv[1]), argv[2]),
        _ => return Error::Syntax.into(),
    };
    match r {
        Ok(()) => Reply::Ok,
        Err(e) => e,
    }
}
