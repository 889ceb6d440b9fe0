//! The `redis` functions that are Rust natives: `call`, `pcall` and those
//! that raise Redis's errors, so that (like Redis's C functions) a failing
//! call reports the script's line even in a tail call.

use bytes::Bytes;
use mlua::{Lua, MultiValue, Table, Value};

use super::{convert, libs, sha1_hex, with_call};

/// Why a native `redis` function failed: a Lua error, or one of Redis's
/// error texts, raised as the table `{err = text}`.
enum Fail {
    Lua(mlua::Error),
    Redis(&'static str),
}

impl From<mlua::Error> for Fail {
    fn from(e: mlua::Error) -> Fail {
        Fail::Lua(e)
    }
}

/// Sets `native[name]` to `f`, raising its [`Fail::Redis`] texts as Redis
/// raises them.
fn set_native<F, R>(lua: &Lua, native: &Table, state: &Table, name: &str, f: F) -> mlua::Result<()>
where
    F: Fn(&Lua, MultiValue) -> Result<R, Fail> + Send + 'static,
    R: mlua::IntoLuaMulti,
{
    let st = state.clone();
    let g = lua.create_function(move |lua, a: MultiValue| match f(lua, a) {
        Ok(r) => Ok(r),
        Err(Fail::Lua(e)) => Err(e),
        Err(Fail::Redis(text)) => Err(libs::raise_table(lua, &st, text)),
    })?;
    native.raw_set(name, g)
}

/// A Lua value as Lua's `tostring` shows a string or number (`None` for
/// other types).
fn lua_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.to_string_lossy()),
        v => convert::number(v).map(convert::g14),
    }
}

/// The `redis` functions that can raise an error, written in Rust so that
/// (like Redis's C functions) a failing call reports the script's line even
/// in a tail call (`return redis.call(...)`).
pub(super) fn redis_natives(lua: &Lua, state: &Table, native: &Table) -> mlua::Result<()> {
    // `call` and `pcall` are C functions (raw.rs); `call` leaves what it
    // raises in the state table, which it finds in the registry.
    lua.set_named_registry_value(
        super::raw::STATE_KEY.to_str().unwrap_or_default(),
        state.clone(),
    )?;
    // SAFETY: these follow raw.rs's rules for raising errors.
    native.raw_set("call", unsafe { lua.create_c_function(super::raw::call)? })?;
    native.raw_set("pcall", unsafe {
        lua.create_c_function(super::raw::pcall)?
    })?;
    native.raw_set("unpack", unsafe {
        lua.create_c_function(super::raw::unpack)?
    })?;
    native.raw_set("script_args", unsafe {
        lua.create_c_function(super::raw::script_args)?
    })?;
    set_native(lua, native, state, "sha1hex", |lua, a| {
        if a.len() != 1 {
            return Err(Fail::Redis("ERR wrong number of arguments"));
        }
        let text = match &a[0] {
            Value::String(s) => s.as_bytes().to_vec(),
            v => lua_text(v).unwrap_or_default().into_bytes(),
        };
        Ok(lua.create_string(sha1_hex(&text))?)
    })?;
    set_native(lua, native, state, "log", |_, a| {
        if a.len() < 2 {
            return Err(Fail::Redis(
                "ERR redis.log() requires two arguments or more.",
            ));
        }
        let level = convert::to_number(&a[0]).ok_or(Fail::Redis(
            "ERR First argument must be a number (log level).",
        ))?;
        let level = convert::c_int(level);
        if !(0..=3).contains(&level) {
            return Err(Fail::Redis("ERR Invalid debug level."));
        }
        let text = a
            .iter()
            .skip(1)
            .filter_map(lua_text)
            .collect::<Vec<_>>()
            .join(" ");
        match level {
            3 => tracing::warn!(target: "script", "{text}"),
            2 => tracing::info!(target: "script", "{text}"),
            _ => tracing::debug!(target: "script", "{text}"),
        }
        Ok(())
    })?;
    // The argument is read as `lua_tonumber` reads it (a number, or a
    // string holding one; anything else is 0) and kept as a C `int`.
    let c_int_arg = |v: &Value| convert::c_int(convert::to_number(v).unwrap_or(0.0));
    set_native(lua, native, state, "setresp", move |_, a| {
        if a.len() != 1 {
            return Err(Fail::Redis("ERR redis.setresp() requires one argument."));
        }
        match c_int_arg(&a[0]) {
            v @ (2 | 3) => {
                with_call(|c| c.resp = v as u8);
                Ok(())
            }
            _ => Err(Fail::Redis("ERR RESP version must be 2 or 3.")),
        }
    })?;
    set_native(lua, native, state, "set_repl", move |_, a| {
        if a.len() != 1 {
            // Redis's text says "two" for this one-argument function.
            return Err(Fail::Redis("ERR redis.set_repl() requires two arguments."));
        }
        // Any combination of REPL_AOF (1) and REPL_REPLICA (2).
        if c_int_arg(&a[0]) & !3 != 0 {
            return Err(Fail::Redis(
                "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
            ));
        }
        Ok(())
    })?;
    set_native(lua, native, state, "acl_check_cmd", |_, a| {
        if a.is_empty() {
            return Err(Fail::Redis(
                "ERR Please specify at least one argument for this redis lib call",
            ));
        }
        let argv: Option<Vec<Bytes>> = a.iter().map(convert::arg).collect();
        let Some(argv) = argv else {
            return Err(Fail::Redis(
                "ERR Lua redis lib command arguments must be strings or integers",
            ));
        };
        let argv = ebb_core::args::views(&argv);
        let Some(spec) = crate::rename::lookup(argv[0]) else {
            return Err(Fail::Redis(
                "ERR Invalid command passed to redis.acl_check_cmd()",
            ));
        };
        let Some(slot) = crate::cmdstats::slot_of(spec, &argv) else {
            return Err(Fail::Redis(
                "ERR Invalid command passed to redis.acl_check_cmd()",
            ));
        };
        // Whether the user running the script may run that command.
        Ok(
            with_call(|c| crate::acl::Acl::check(&c.s.user, spec, Some(slot), &argv).is_ok())
                .unwrap_or(true),
        )
    })
}
