//! Lua scripting: EVAL, EVALSHA, their read-only forms and SCRIPT, with
//! Redis 7.0's environment (Lua 5.1, read-only globals, `KEYS`/`ARGV`, the
//! `redis` library, `bit`, `cjson`, `cmsgpack` and `struct`), replies and
//! error texts.
//!
//! A script runs whole under the keyspace lock, with expiry checked
//! against the time it started, so it is atomic like a transaction. Its writes go to the
//! append-only file as the commands it ran, framed by MULTI/EXEC (Redis
//! 7.0 replicates a script's effects the same way). One Lua state serves
//! every script; it is made on first use.

mod busy;
mod call;
mod cjson;
mod convert;
mod functions;
mod libs;
mod msgpack;
mod natives;
mod raw;
mod run;
mod structlib;

use bytes::Bytes;
use ebb_core::args::parse_i64;
use ebb_core::{CommandSpec, Error, Reply, Store};
use mlua::{Function, Lua, LuaOptions, MultiValue, StdLib, Table};
use parking_lot::{Mutex, MutexGuard};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use crate::conn::Session;
use crate::server::Shared;

type Guard<'a> = Option<MutexGuard<'a, Store>>;

const PRELUDE: &str = include_str!("prelude.lua");

/// EVALSHA's reply for a digest not in the cache.
const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";

use call::{with_call, Call};
pub use functions::{fcall, function, load_libraries, replay_function};
use run::{run_script, RunSpec};

fn err(s: impl Into<String>) -> Reply {
    Reply::Error(s.into().into())
}

/// The server's scripting state.
#[derive(Default)]
pub struct Scripting {
    engine: Mutex<Option<Engine>>,
    /// Scripts in the cache (INFO's `number_of_cached_scripts`).
    cached: AtomicU64,
    /// Bytes of their text.
    script_bytes: AtomicU64,
    /// Bytes the Lua state holds, as of the last script (INFO's
    /// `used_memory_lua`).
    lua_bytes: AtomicU64,
    /// Scripts run (for sampling the Lua state's size).
    runs: AtomicU64,
    /// The running script, as other clients see it: busy once it has run
    /// past `busy-reply-threshold`, wrote once it ran a write command,
    /// kill once SCRIPT KILL asked it to stop, function when it is a
    /// function (bits: see `busy.rs`).
    state: AtomicU8,
    /// The function libraries' Lua state, made on first use (functions run
    /// apart from EVAL's scripts, as in Redis).
    functions: Mutex<Option<functions::FnEngine>>,
    /// The function running, for FUNCTION STATS: its name, the command
    /// that called it and when it started (ms).
    running: Mutex<Option<(String, Vec<Bytes>, u64)>>,
    /// Functions callable by name (INFO's `number_of_functions`).
    fn_count: AtomicU64,
    /// Libraries, and the functions they registered (FUNCTION STATS).
    fn_libraries: AtomicU64,
    fn_registered: AtomicU64,
    /// Bytes the functions' Lua state held when last measured.
    fn_lua_bytes: AtomicU64,
    /// Functions called (for sampling their Lua state's size).
    fn_runs: AtomicU64,
}

impl Scripting {
    /// Scripts in the cache.
    pub fn cached(&self) -> u64 {
        self.cached.load(Ordering::Relaxed)
    }

    /// Bytes the Lua state held after the last script ran or loaded.
    pub fn lua_bytes(&self) -> u64 {
        self.lua_bytes.load(Ordering::Relaxed)
    }

    /// Bytes of the cached scripts' text (INFO's
    /// `used_memory_scripts_eval`).
    pub fn cached_script_bytes(&self) -> u64 {
        self.script_bytes.load(Ordering::Relaxed)
    }

    fn note_engine(&self, eng: &Engine) {
        self.cached.store(eng.cache.len() as u64, Ordering::Relaxed);
        self.script_bytes.store(
            eng.cache.values().map(|s| s.size as u64).sum(),
            Ordering::Relaxed,
        );
        self.lua_bytes
            .store(eng.lua.used_memory() as u64, Ordering::Relaxed);
    }

    /// After a run: the Lua state's size is read once per 64 runs (reading
    /// it costs as much as a small script's whole conversion).
    fn note_run(&self, eng: &Engine) {
        if self.runs.fetch_add(1, Ordering::Relaxed).is_multiple_of(64)
            || self.lua_bytes.load(Ordering::Relaxed) == 0
        {
            self.note_engine(eng);
        }
    }
}

/// A compiled script and what its shebang line allows.
#[derive(Clone)]
struct Script {
    func: Function,
    /// Bytes of the script's text.
    size: usize,
    /// The script starts with a `#!lua` line: it declares its flags, and
    /// one without `no-writes` is taken to write.
    declared: bool,
    no_writes: bool,
    allow_oom: bool,
}

/// The Lua state and the script cache.
struct Engine {
    lua: Lua,
    /// The read-only view compiled scripts run in.
    env: Table,
    /// Runs a script under the error handler: `ok, result | error`.
    run: Function,
    /// Where raising natives leave what they raise.
    state: Table,
    cache: HashMap<String, Script>,
}

/// `7.0.15` as Redis's `REDIS_VERSION_NUM` (`0x00MMmmpp`).
fn version_num(v: &str) -> i64 {
    v.split('.')
        .map(|p| p.parse::<i64>().unwrap_or(0))
        .chain(std::iter::repeat(0))
        .take(3)
        .fold(0, |acc, p| (acc << 8) | (p & 0xff))
}

/// The lower-case SHA1 hex digest of `b`.
fn sha1_hex(b: &[u8]) -> String {
    sha1_smol::Sha1::from(b).digest().to_string()
}

/// `lua-enable-deprecated-api` (fixed at start): scripts may use
/// `getfenv`, `setfenv` and `newproxy`, which are otherwise refused as
/// nonexistent globals.
pub static DEPRECATED_API: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// A Lua state with the scripting environment of `prelude.lua`.
struct BaseState {
    lua: Lua,
    state: Table,
    env: Table,
    run: Function,
    /// What `functions.lua` builds on (see the end of `prelude.lua`).
    internals: Table,
}

impl BaseState {
    fn new() -> mlua::Result<BaseState> {
        // The debug library is for the error handler only; scripts never
        // see it.
        let lua = unsafe {
            Lua::unsafe_new_with(
                StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::DEBUG,
                LuaOptions::new(),
            )
        };
        let globals = lua.create_table()?;
        let state = lua.create_table()?;
        let native = lua.create_table()?;
        native.raw_set("bit", libs::bit(&lua, &state)?)?;
        native.raw_set("cjson", cjson::cjson(&lua, &state)?)?;
        native.raw_set("cmsgpack", msgpack::cmsgpack(&lua, &state)?)?;
        native.raw_set("struct", structlib::structlib(&lua, &state)?)?;
        let math = lua.create_table()?;
        libs::random(&lua, &state, &math)?;
        native.raw_set("math", math)?;
        natives::redis_natives(&lua, &state, &native)?;
        native.raw_set(
            "deprecated_api",
            DEPRECATED_API.load(std::sync::atomic::Ordering::Relaxed),
        )?;
        native.raw_set("version", crate::info::REDIS_VERSION)?;
        native.raw_set("version_num", version_num(crate::info::REDIS_VERSION))?;
        let (env, run, internals): (Table, Function, Table) = lua
            .load(PRELUDE)
            .set_name("=[ebb]")
            .call((globals, state.clone(), native))?;
        busy::set_hook(&lua, &state, false)?;
        // A collection cycle starts once memory reaches 1.2 times what the
        // last one left (Lua's default is twice). The state holds about
        // 58 kB of libraries, against Redis's 29 kB: with the default, 10,000
        // one-call scripts left up to 135 kB in `used_memory_lua` (Redis's
        // tests expect under 100 kB); now at most about 90 kB, at no
        // measurable cost in throughput.
        lua.gc_set_mode(mlua::state::GcMode::Incremental(
            mlua::state::GcIncParams::default().pause(120),
        ));
        Ok(BaseState {
            lua,
            state,
            env,
            run,
            internals,
        })
    }
}

impl Engine {
    fn new() -> mlua::Result<Engine> {
        let b = BaseState::new()?;
        Ok(Engine {
            state: b.state,
            lua: b.lua,
            env: b.env,
            run: b.run,
            cache: HashMap::new(),
        })
    }

    /// Compiles `body` (after its shebang line, if any) and caches it.
    fn compile(&mut self, body: &[u8]) -> Result<String, Reply> {
        let sha = sha1_hex(body);
        if self.cache.contains_key(&sha) {
            return Ok(sha);
        }
        let (skip, no_writes, allow_oom) = shebang(body)?;
        let func = self
            .lua
            .load(text_only(&body[skip..]).as_ref())
            .set_name("@user_script")
            .set_environment(self.env.clone())
            .into_function()
            .map_err(|e| {
                let msg = match e {
                    mlua::Error::SyntaxError { message, .. } => message,
                    other => other.to_string(),
                };
                err(format!(
                    "ERR Error compiling script (new function): {}",
                    convert::one_line(msg.as_bytes())
                ))
            })?;
        let script = Script {
            func,
            size: body.len(),
            declared: skip > 0,
            no_writes,
            allow_oom,
        };
        self.cache.insert(sha.clone(), script);
        Ok(sha)
    }
}

/// Source code as Lua's text parser must read it: Redis's Lua never loads
/// precompiled chunks (they can break out of the sandbox), so a chunk
/// starting as one (ESC) gets a space before it. The text parser then
/// refuses it as Redis's does (`unexpected symbol near 'char(27)'`), on
/// the same line.
pub(crate) fn text_only(code: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if code.first() == Some(&0x1b) {
        let mut spaced = Vec::with_capacity(code.len() + 1);
        spaced.push(b' ');
        spaced.extend_from_slice(code);
        std::borrow::Cow::Owned(spaced)
    } else {
        std::borrow::Cow::Borrowed(code)
    }
}

/// Reads a `#!lua [flags=a,b]` first line: how many bytes to skip (the
/// line without its newline, so line numbers stay right) and the flags
/// `no-writes` and `allow-oom`.
fn shebang(body: &[u8]) -> Result<(usize, bool, bool), Reply> {
    if !body.starts_with(b"#!") {
        return Ok((0, false, false));
    }
    let Some(end) = body.iter().position(|&c| c == b'\n') else {
        return Err(err("ERR Invalid script shebang"));
    };
    let line = String::from_utf8_lossy(&body[..end]);
    let mut parts = line.split_ascii_whitespace();
    let engine = parts.next().unwrap_or("");
    if engine != "#!lua" {
        return Err(err(format!(
            "ERR Unexpected engine in script shebang: {engine}"
        )));
    }
    let (mut no_writes, mut allow_oom) = (false, false);
    for part in parts {
        let Some(list) = part.strip_prefix("flags=") else {
            return Err(err(format!("ERR Unknown lua shebang option: {part}")));
        };
        // `flags=` alone is no flag; an empty one between commas is
        // refused, as Redis refuses it.
        if list.is_empty() {
            continue;
        }
        for f in list.split(',') {
            match f {
                "no-writes" => no_writes = true,
                "allow-oom" => allow_oom = true,
                "allow-stale" | "no-cluster" | "allow-cross-slot-keys" => {}
                other => {
                    return Err(err(format!(
                        "ERR Unexpected flag in script shebang: {other}"
                    )))
                }
            }
        }
    }
    Ok((end, no_writes, allow_oom))
}

/// The engine, made on first use.
fn engine(slot: &mut Option<Engine>) -> Result<&mut Engine, Reply> {
    if slot.is_none() {
        let e =
            Engine::new().map_err(|e| err(format!("ERR could not start the Lua engine: {e}")))?;
        *slot = Some(e);
    }
    slot.as_mut().ok_or_else(|| err("ERR no Lua engine"))
}

/// What a script command's script declares about writing: `Some(true)`
/// for a `#!lua` script (or a function) without `no-writes`,
/// `Some(false)` with it, None when nothing is declared (no `#!lua`
/// line, an unknown script or function) or for another command.
fn declared_writes(shared: &Shared, spec: &CommandSpec, argv: &[&[u8]]) -> Option<bool> {
    let arg = argv.get(1)?;
    match spec.name {
        "eval" | "eval_ro" => match shebang(arg) {
            Ok((skip, no_writes, _)) if skip > 0 => Some(!no_writes),
            _ => None,
        },
        "evalsha" | "evalsha_ro" => {
            let sha = String::from_utf8_lossy(arg).to_ascii_lowercase();
            let slot = shared.scripting.engine.lock();
            let script = slot.as_ref()?.cache.get(&sha)?;
            script.declared.then_some(!script.no_writes)
        }
        "fcall" | "fcall_ro" => functions::declared_writes(shared, arg),
        _ => None,
    }
}

/// Whether a script command is a write in Redis's command flags: a
/// `#!lua` script (or a function) that does not declare `no-writes`.
/// A script without a `#!lua` line is not; its first write is checked
/// as it runs.
pub fn declares_write(shared: &Shared, spec: &CommandSpec, argv: &[&[u8]]) -> bool {
    declared_writes(shared, spec, argv) == Some(true)
}

/// Whether EVAL, EVALSHA or FCALL may write (what CLIENT PAUSE WRITE
/// holds): unless the script's `#!lua` line or the function declares
/// `no-writes`. False for every other command.
pub fn may_write(shared: &Shared, spec: &CommandSpec, argv: &[&[u8]]) -> bool {
    matches!(spec.name, "eval" | "evalsha" | "fcall")
        && declared_writes(shared, spec, argv).unwrap_or(true)
}

/// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO.
pub fn eval<'a>(
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    spec: &CommandSpec,
    argv: &[&[u8]],
) -> Reply {
    let by_sha = spec.name.starts_with("evalsha");
    // A digest is 40 hex digits; anything else is in no cache, which Redis
    // answers before it reads the key count.
    if by_sha && argv[1].len() != 40 {
        return err(NOSCRIPT);
    }
    let Some(numkeys) = parse_i64(argv[2]) else {
        return Error::NotInteger.into();
    };
    if numkeys < 0 {
        return err("ERR Number of keys can't be negative");
    }
    if numkeys as u64 > (argv.len() - 3) as u64 {
        return err("ERR Number of keys can't be greater than number of args");
    }
    // The keyspace first, then the Lua state: the order every path takes
    // them in (a pipelined batch may already hold the keyspace).
    guard.get_or_insert_with(|| shared.lock_store());
    let scripting = &shared.scripting;
    let mut slot = scripting.engine.lock();
    let eng = match engine(&mut slot) {
        Ok(e) => e,
        Err(r) => return r,
    };
    let mut lower = [0u8; 40];
    let sha: std::borrow::Cow<'_, str> = if by_sha {
        // 40 bytes: checked above.
        lower.copy_from_slice(argv[1]);
        lower.make_ascii_lowercase();
        match std::str::from_utf8(&lower) {
            Ok(s) => s.into(),
            Err(_) => return err(NOSCRIPT),
        }
    } else {
        let sha = match eng.compile(argv[1]) {
            Ok(sha) => sha,
            Err(r) => return r,
        };
        scripting
            .cached
            .store(eng.cache.len() as u64, Ordering::Relaxed);
        sha.into()
    };
    let eng: &Engine = eng;
    let Some(script) = eng.cache.get(sha.as_ref()) else {
        return err(NOSCRIPT);
    };
    if script.declared && !script.no_writes {
        // A script that declares it may write is refused up front over
        // maxmemory (unless allow-oom) and by the read-only forms.
        if !script.allow_oom && crate::evict::limited() {
            let store = guard.get_or_insert_with(|| shared.lock_store());
            if let Err(e) = crate::evict::make_room(shared, store) {
                return e.into();
            }
        }
        if let Some(e) = crate::misconf::disk_error(shared) {
            return err(crate::misconf::script_refusal(&e));
        }
        if spec.name.ends_with("_ro") {
            return err("ERR Can not execute a script with write flag using *_ro command.");
        }
    }
    let n = numkeys as usize;
    let r = match run(
        eng,
        s,
        shared,
        guard,
        script,
        &sha,
        &argv[3..3 + n],
        &argv[3 + n..],
        spec.name.ends_with("_ro"),
    ) {
        Ok(r) => r,
        Err(e) => err(format!(
            "ERR Error running script: {}",
            convert::one_line(e.to_string().as_bytes())
        )),
    };
    scripting.note_run(eng);
    r
}

#[allow(clippy::too_many_arguments)]
fn run<'a>(
    eng: &Engine,
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    script: &Script,
    sha: &str,
    keys: &[&[u8]],
    args: &[&[u8]],
    read_only: bool,
) -> mlua::Result<Reply> {
    let how = RunSpec {
        lua: &eng.lua,
        state: &eng.state,
        name: sha,
        read_only: read_only || script.no_writes,
        allow_oom: script.allow_oom,
        function: false,
        keys,
        args,
    };
    run_script(how, s, shared, guard, || {
        eng.run.call::<MultiValue>(&script.func)
    })
}

/// SCRIPT LOAD / EXISTS / FLUSH / KILL / HELP.
pub fn script(shared: &Arc<Shared>, argv: &[&[u8]]) -> Reply {
    let sub = String::from_utf8_lossy(argv[1]).to_ascii_lowercase();
    let scripting = &shared.scripting;
    match sub.as_str() {
        "load" => {
            let mut slot = scripting.engine.lock();
            let eng = match engine(&mut slot) {
                Ok(e) => e,
                Err(r) => return r,
            };
            let r = match eng.compile(argv[2]) {
                Ok(sha) => Reply::Bulk(Bytes::from(sha)),
                Err(r) => r,
            };
            scripting.note_engine(eng);
            r
        }
        "exists" => {
            let slot = scripting.engine.lock();
            let found = |sha: &[u8]| {
                let key = String::from_utf8_lossy(sha).to_ascii_lowercase();
                slot.as_ref().is_some_and(|e| e.cache.contains_key(&key))
            };
            Reply::Array(
                argv[2..]
                    .iter()
                    .map(|sha| Reply::Int(found(sha) as i64))
                    .collect(),
            )
        }
        "flush" => {
            let mode_ok = match argv.get(2) {
                None => argv.len() == 2,
                Some(m) => {
                    argv.len() == 3
                        && (m.eq_ignore_ascii_case(b"sync") || m.eq_ignore_ascii_case(b"async"))
                }
            };
            if !mode_ok {
                return err("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
            }
            // A fresh Lua state, as Redis makes one: nothing a script left
            // behind survives.
            *scripting.engine.lock() = None;
            scripting.cached.store(0, Ordering::Relaxed);
            scripting.script_bytes.store(0, Ordering::Relaxed);
            scripting.lua_bytes.store(0, Ordering::Relaxed);
            Reply::Ok
        }
        "kill" => scripting.kill(false),
        "help" => Reply::Array(
            [
                "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "EXISTS <sha1> [<sha1> ...]",
                "    Return information about the existence of the scripts in the script cache.",
                "FLUSH [ASYNC|SYNC]",
                "    Flush the Lua scripts cache. Very dangerous on replicas.",
                "    When called without the optional mode argument, the behavior is determined by the",
                "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
                "    * ASYNC: Asynchronously flush the scripts cache.",
                "    * SYNC: Synchronously flush the scripts cache.",
                "KILL",
                "    Kill the currently executing Lua script.",
                "LOAD <script>",
                "    Load a script into the scripts cache without executing it.",
                "HELP",
                "    Prints this help.",
            ]
            .iter()
            .map(|l| Reply::Simple((*l).into()))
            .collect(),
        ),
        _ => ebb_core::error::unknown_subcommand(argv[1], "script").into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_number_packs_three_parts() {
        assert_eq!(version_num("7.0.15"), 458_767);
    }

    #[test]
    fn shebang_lines() {
        assert_eq!(shebang(b"return 1").ok(), Some((0, false, false)));
        assert_eq!(
            shebang(b"#!lua flags=no-writes,allow-oom\nreturn 1").ok(),
            Some((31, true, true))
        );
        assert!(
            matches!(shebang(b"#!lua"), Err(Reply::Error(e)) if e == "ERR Invalid script shebang")
        );
        assert!(
            matches!(shebang(b"#!lua flags=x\n"), Err(Reply::Error(e)) if e == "ERR Unexpected flag in script shebang: x")
        );
        assert!(
            matches!(shebang(b"#!py\n"), Err(Reply::Error(e)) if e == "ERR Unexpected engine in script shebang: #!py")
        );
        assert!(
            matches!(shebang(b"#!lua name=x\n"), Err(Reply::Error(e)) if e == "ERR Unknown lua shebang option: name=x")
        );
    }
}
