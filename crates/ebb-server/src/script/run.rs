//! Running a script or function: atomically under the keyspace lock with
//! expiry checked against its start time, and its outcome (a value or a raised error) as a
//! reply.

use ebb_core::Reply;
use mlua::{Lua, MultiValue, Table, Value};
use std::sync::Arc;

use super::call::{Call, Current};
use super::{busy, convert, err, Guard};
use crate::conn::Session;
use crate::server::{now_ms, Shared};

/// How one script or function runs: the Lua state it runs in and what it
/// may do.
pub(super) struct RunSpec<'e> {
    pub(super) lua: &'e Lua,
    pub(super) state: &'e Table,
    /// The script's digest or the function's name.
    pub(super) name: &'e str,
    pub(super) read_only: bool,
    pub(super) allow_oom: bool,
    /// A function (FCALL): other clients' BUSY replies and SCRIPT KILL
    /// name FUNCTION KILL.
    pub(super) function: bool,
    /// Its keys and arguments.
    pub(super) keys: &'e [&'e [u8]],
    pub(super) args: &'e [&'e [u8]],
}

/// Runs a script or function (`invoke` calls it under the error handler:
/// `ok, result | error`) atomically under the keyspace lock, expiry
/// checked against its start time, and converts its outcome to a reply.
pub(super) fn run_script<'a>(
    how: RunSpec<'_>,
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    invoke: impl FnOnce() -> mlua::Result<MultiValue>,
) -> mlua::Result<Reply> {
    guard.get_or_insert_with(|| shared.lock_store());
    let db = s.db;
    let mut call = Call {
        s,
        shared,
        guard,
        db,
        now: now_ms(),
        resp: 2,
        read_only: how.read_only,
        allow_oom: how.allow_oom,
        logged_multi: false,
        ready: Vec::new(),
        wrote: false,
        busy: false,
        line_hook: false,
        name: how.name,
        keys: how.keys,
        args: how.args,
        reply: Reply::Nil,
    };
    let outcome = {
        // However the run ends, other clients see no script running after.
        let _clear = busy::ClearState(&shared.scripting.state);
        shared.scripting.start_run(how.function);
        let _current = Current::enter(&mut call);
        invoke()
    };
    if call.line_hook {
        busy::set_hook(how.lua, how.state, false)?;
    }
    if call.logged_multi {
        shared.log_block_end(call.db);
    }
    if let Some(store) = call.guard.as_mut() {
        crate::exec::serve_ready(shared, store, std::mem::take(&mut call.ready));
    }
    let resp = call.resp;
    let client_resp3 = call.s.resp3;
    let out = outcome?;
    let ok = matches!(out.front(), Some(Value::Boolean(true)));
    let value = out.get(1).cloned().unwrap_or(Value::Nil);
    let reply = if ok {
        convert::to_reply(&value, resp, client_resp3)
    } else {
        failure(&value, how.name)
    };
    if matches!(reply, Reply::Error(_)) {
        call.s.error_counted = matches!(&value, Value::Table(t)
            if t.raw_get::<bool>("ignore_error_stats_update").unwrap_or(false));
    }
    Ok(reply)
}

/// The reply for a script that raised an error: the error's text, and
/// where it happened when known.
fn failure(v: &Value, sha: &str) -> Reply {
    let Value::Table(t) = v else {
        return err("ERR Error running script");
    };
    let msg = match t.raw_get::<Value>("err") {
        Ok(Value::String(s)) => {
            String::from_utf8_lossy(ebb_core::args::c_str(&s.as_bytes())).into_owned()
        }
        Ok(other) => match convert::number(&other) {
            Some(n) => convert::g14(n),
            None => "ERR unknown error".into(),
        },
        Err(_) => "ERR unknown error".into(),
    };
    let source = match t.raw_get::<Value>("source") {
        Ok(Value::String(s)) => Some(convert::one_line(&s.as_bytes())),
        _ => None,
    };
    let line = t
        .raw_get::<Value>("line")
        .ok()
        .as_ref()
        .and_then(convert::number);
    let text = match (source, line) {
        (Some(src), Some(l)) => format!("{msg} script: {sha}, on {src}:{}.", l as i64),
        _ => msg,
    };
    err(convert::error_line(text.as_bytes()))
}
