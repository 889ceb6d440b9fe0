//! Lua scripting: EVAL, EVALSHA, their read-only forms and SCRIPT, with
//! Redis 7.0's environment (Lua 5.1, read-only globals, `KEYS`/`ARGV`, the
//! `redis` library, `bit`, `cjson`, `cmsgpack` and `struct`), replies and
//! error texts.
//!
//! A script runs whole under the keyspace lock, with the clock frozen at
//! its start, so it is atomic like a transaction. Its writes go to the
//! append-only file as the commands it ran, framed by MULTI/EXEC (Redis
//! 7.0 replicates a script's effects the same way). One Lua state serves
//! every script; it is made on first use.

mod convert;
mod libs;
mod msgpack;
mod structlib;

use bytes::Bytes;
use ebb_core::args::parse_i64;
use ebb_core::table::flag;
use ebb_core::{CommandSpec, Error, Exec, Reply, Store};
use mlua::{Function, HookTriggers, Lua, LuaOptions, MultiValue, StdLib, Table, Value, VmState};
use parking_lot::{Mutex, MutexGuard};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use crate::conn::Session;
use crate::server::{now_ms, Shared};

type Guard<'a> = Option<MutexGuard<'a, Store>>;

const PRELUDE: &str = include_str!("prelude.lua");

/// EVALSHA's reply for a digest not in the cache.
const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";

/// The reply to other clients while a script runs past the busy threshold.
pub const BUSY_REPLY: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";

/// What a script stopped by SCRIPT KILL raises.
const KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";

/// Lua instructions between two looks at the clock and at SCRIPT KILL.
const HOOK_EVERY: u32 = 100_000;

/// Bits of [`Scripting::state`].
const BUSY: u8 = 1;
const WROTE: u8 = 2;
const KILL: u8 = 4;

fn err(s: impl Into<String>) -> Reply {
    Reply::Error(s.into().into())
}

/// The server's scripting state.
#[derive(Default)]
pub struct Scripting {
    engine: Mutex<Option<Engine>>,
    /// Scripts in the cache (INFO's `number_of_cached_scripts`).
    cached: AtomicU64,
    /// Bytes the Lua state holds, as of the last script (INFO's
    /// `used_memory_lua`).
    lua_bytes: AtomicU64,
    /// Scripts run (for sampling the Lua state's size).
    runs: AtomicU64,
    /// The running script, as other clients see it: [`BUSY`] once it has
    /// run past `busy-reply-threshold`, [`WROTE`] once it ran a write
    /// command, [`KILL`] once SCRIPT KILL asked it to stop.
    state: AtomicU8,
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

    /// Whether a script has run past `busy-reply-threshold`: other
    /// clients get BUSY, and only SCRIPT KILL, SHUTDOWN NOSAVE and the
    /// connection commands Redis allows are served.
    pub fn busy(&self) -> bool {
        self.state.load(Ordering::Relaxed) & BUSY != 0
    }

    /// SCRIPT KILL: asks a busy script that has not written to stop.
    fn kill(&self) -> Reply {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            if s & BUSY == 0 {
                return err("NOTBUSY No scripts in execution right now.");
            }
            if s & WROTE != 0 {
                return err(
                    "UNKILLABLE Sorry the script already executed write commands against the \
                     dataset. You can either wait the script termination or kill the server in a \
                     hard way using the SHUTDOWN NOSAVE command.",
                );
            }
            match self
                .state
                .compare_exchange(s, s | KILL, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Reply::Ok,
                Err(now) => s = now,
            }
        }
    }

    fn note_engine(&self, eng: &Engine) {
        self.cached.store(eng.cache.len() as u64, Ordering::Relaxed);
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
    /// The script starts with a `#!lua` line: it declares its flags, and
    /// one without `no-writes` is taken to write.
    declared: bool,
    no_writes: bool,
    allow_oom: bool,
}

/// The Lua state and the script cache.
struct Engine {
    lua: Lua,
    /// The globals scripts read (through a read-only view); KEYS and ARGV
    /// are set here before each run.
    globals: Table,
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
        v => convert::number(v).map(|n| ebb_core::reply::format_g(n, 14)),
    }
}

/// The `redis` functions that can raise an error, written in Rust so that
/// (like Redis's C functions) a failing call reports the script's line even
/// in a tail call (`return redis.call(...)`).
fn redis_natives(lua: &Lua, state: &Table, native: &Table) -> mlua::Result<()> {
    let st = state.clone();
    native.raw_set(
        "call",
        lua.create_function(move |lua, args: MultiValue| {
            let (v, failed) = call_from_script(lua, args)?;
            if failed {
                st.raw_set("pending", v)?;
                return Err(mlua::Error::RuntimeError("redis.call failed".into()));
            }
            Ok(v)
        })?,
    )?;
    native.raw_set(
        "pcall",
        lua.create_function(|lua, args: MultiValue| Ok(call_from_script(lua, args)?.0))?,
    )?;
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
        let level = convert::number(&a[0]).ok_or(Fail::Redis(
            "ERR First argument must be a number (log level).",
        ))?;
        if !(0.0..4.0).contains(&level) {
            return Err(Fail::Redis("ERR Invalid debug level."));
        }
        let text = a
            .iter()
            .skip(1)
            .filter_map(lua_text)
            .collect::<Vec<_>>()
            .join(" ");
        match level as i64 {
            3 => tracing::warn!(target: "script", "{text}"),
            2 => tracing::info!(target: "script", "{text}"),
            _ => tracing::debug!(target: "script", "{text}"),
        }
        Ok(())
    })?;
    set_native(lua, native, state, "setresp", |_, a| {
        if a.len() != 1 {
            return Err(Fail::Redis("ERR redis.setresp() requires one argument."));
        }
        match convert::number(&a[0]) {
            Some(v) if v == 2.0 || v == 3.0 => {
                with_call(|c| c.resp = v as u8);
                Ok(())
            }
            _ => Err(Fail::Redis("ERR RESP version must be 2 or 3.")),
        }
    })?;
    set_native(lua, native, state, "set_repl", |_, a| {
        if a.len() != 1 {
            return Err(Fail::Redis("ERR redis.set_repl() requires one argument."));
        }
        match convert::number(&a[0]) {
            Some(v) if (0.0..=3.0).contains(&v) && v.fract() == 0.0 => Ok(()),
            _ => Err(Fail::Redis(
                "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
            )),
        }
    })?;
    set_native(lua, native, state, "acl_check_cmd", |_, a| {
        let name = a.front().ok_or(Fail::Redis(
            "ERR Please specify at least one argument for this redis lib call",
        ))?;
        if convert::arg(name).is_some_and(|n| ebb_core::lookup(&n).is_some()) {
            Ok(true)
        } else {
            Err(Fail::Redis(
                "ERR Invalid command passed to redis.acl_check_cmd()",
            ))
        }
    })
}

/// Installs the hook that watches a running script: every
/// [`HOOK_EVERY`] instructions, or on every line once the script is being
/// killed (so that a `pcall` cannot catch the kill and go on).
fn set_hook(lua: &Lua, state: &Table, every_line: bool) -> mlua::Result<()> {
    let triggers = if every_line {
        HookTriggers::EVERY_LINE
    } else {
        HookTriggers::new().every_nth_instruction(HOOK_EVERY)
    };
    let st = state.clone();
    lua.set_global_hook(triggers, move |lua, _| {
        if with_call(|c| c.interrupted()).unwrap_or(false) {
            if !every_line {
                set_hook(lua, &st, true)?;
                with_call(|c| c.line_hook = true);
            }
            return Err(libs::raise_table(lua, &st, KILLED));
        }
        Ok(VmState::Continue)
    })
}

/// Lets the runtime serve other connections on another thread while this
/// one goes on running a script (which keeps the keyspace locked): they
/// are answered BUSY. The runtime's worker is handed to a fresh thread,
/// and this thread waits until some worker has run a task (with more than
/// one worker that may be another one, which then serves the clients).
fn hand_off_worker() {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let Ok(handle) = Handle::try_current() else {
        return;
    };
    if handle.runtime_flavor() != RuntimeFlavor::MultiThread {
        return;
    }
    tokio::task::block_in_place(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        handle.spawn(async move {
            let _ = tx.send(());
        });
        let _ = rx.recv_timeout(std::time::Duration::from_secs(1));
    });
}

/// The lower-case SHA1 hex digest of `b`.
fn sha1_hex(b: &[u8]) -> String {
    sha1_smol::Sha1::from(b).digest().to_string()
}

impl Engine {
    fn new() -> mlua::Result<Engine> {
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
        native.raw_set("cjson", libs::cjson(&lua, &state)?)?;
        native.raw_set("cmsgpack", msgpack::cmsgpack(&lua, &state)?)?;
        native.raw_set("struct", structlib::structlib(&lua, &state)?)?;
        let math = lua.create_table()?;
        libs::random(&lua, &state, &math)?;
        native.raw_set("math", math)?;
        redis_natives(&lua, &state, &native)?;
        native.raw_set("version", crate::info::REDIS_VERSION)?;
        native.raw_set("version_num", version_num(crate::info::REDIS_VERSION))?;
        let (env, run): (Table, Function) =
            lua.load(PRELUDE)
                .set_name("=[ebb]")
                .call((globals.clone(), state.clone(), native))?;
        set_hook(&lua, &state, false)?;
        Ok(Engine {
            state,
            lua,
            globals,
            env,
            run,
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
            .load(&body[skip..])
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
            declared: skip > 0,
            no_writes,
            allow_oom,
        };
        self.cache.insert(sha.clone(), script);
        Ok(sha)
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
        for f in list.split(',').filter(|f| !f.is_empty()) {
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

/// One script run's view of the server, used by `redis.call`.
struct Call<'s, 'a> {
    s: &'s mut Session,
    shared: &'a Arc<Shared>,
    guard: &'s mut Guard<'a>,
    /// The script's database (SELECT inside a script changes only it).
    db: usize,
    /// The time every command of the script sees.
    now: u64,
    /// The protocol the script reads replies in (`redis.setresp`).
    resp: u8,
    read_only: bool,
    allow_oom: bool,
    /// MULTI was logged ahead of the script's first write.
    logged_multi: bool,
    /// Keys made ready for blocked clients, served when the script ends.
    ready: Vec<(usize, Bytes)>,
    /// The script ran a write command (SCRIPT KILL can no longer stop it).
    wrote: bool,
    /// The script ran past `busy-reply-threshold`.
    busy: bool,
    /// The hook fires on every line (the script is being killed).
    line_hook: bool,
    /// The script's digest, for the log.
    sha: &'s str,
}

impl Call<'_, '_> {
    /// Runs one command for the script; failures are error replies,
    /// counted in the error statistics here (as Redis counts them at the
    /// command, the script's own error reply does not count them again),
    /// and refusals count as the command's rejected calls.
    fn run(&mut self, resp: u8, argv: &[Bytes]) -> Reply {
        let (r, rejected) = match self.checked_run(resp, argv) {
            Ok(r) => (r, None),
            Err(refused) => refused,
        };
        if let Reply::Error(text) = &r {
            crate::cmdstats::record_error(text);
            if let Some(slot) = rejected {
                crate::cmdstats::record_rejected(slot);
            }
        }
        r
    }

    /// Checks then runs one command: its reply, or `Err` with the refusal
    /// and the command's statistics slot (if it has one).
    fn checked_run(&mut self, resp: u8, argv: &[Bytes]) -> Result<Reply, (Reply, Option<usize>)> {
        let Some(spec) = ebb_core::lookup(&argv[0]) else {
            return Err((err("ERR Unknown Redis command called from script"), None));
        };
        let plain = crate::cmdstats::plain_slot(spec);
        if !spec.arity_ok(argv.len()) {
            return Err((
                err("ERR Wrong number of args calling Redis command from script"),
                plain,
            ));
        }
        let Some(slot) = crate::cmdstats::slot_of(spec, argv) else {
            return Err((err("ERR Unknown Redis command called from script"), None));
        };
        let refuse = |text: &'static str| Err((err(text), Some(slot)));
        if crate::cmdstats::sub_arity_ok(slot, argv.len()).is_err() {
            return refuse("ERR Wrong number of args calling Redis command from script");
        }
        // Scripts and the script cache stay out of reach even with DEBUG
        // SET-DISABLE-DENY-SCRIPTS: the running script holds the Lua state.
        let reentrant = matches!(
            spec.name,
            "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "script"
        );
        if reentrant
            || ((spec.has(flag::NOSCRIPT) || matches!(spec.name, "client" | "config"))
                && !self.shared.scripts_any_command.load(Ordering::Relaxed))
        {
            return refuse("ERR This Redis command is not allowed from script");
        }
        if self.read_only && (spec.is_write() || spec.name == "publish") {
            return refuse("ERR Write commands are not allowed from read-only scripts.");
        }
        let store = self.guard.get_or_insert_with(|| self.shared.store.lock());
        if !self.allow_oom && spec.has(flag::DENYOOM) && crate::evict::limited() {
            if let Err(e) = crate::evict::make_room(self.shared, store) {
                return Err((e.into(), Some(slot)));
            }
        }
        if spec.is_write() && !self.wrote {
            // From here on (past the memory check, as in Redis) SCRIPT KILL
            // refuses; a kill it already granted stops the script before
            // its first write.
            let prev = self
                .shared
                .scripting
                .state
                .fetch_or(WROTE, Ordering::AcqRel);
            if prev & KILL != 0 {
                return refuse(KILLED);
            }
            self.wrote = true;
        }
        if crate::observe::monitoring() {
            // MONITOR shows a script's commands as the client `lua`.
            crate::observe::feed(u64::MAX, self.db, "lua", spec, argv);
        }
        let start = crate::cmdstats::ticks();
        let r = match spec.exec {
            Exec::Core(_) => self.core(resp, spec, argv),
            Exec::Server => self.server(spec, argv),
        };
        let took = crate::cmdstats::ticks().saturating_sub(start);
        self.s.count_call(slot, took, matches!(r, Reply::Error(_)));
        Ok(r)
    }

    /// Called by the hook: marks the script busy once it has run past
    /// `busy-reply-threshold` (and lets other clients be answered), and
    /// tells whether SCRIPT KILL asked it to stop.
    fn interrupted(&mut self) -> bool {
        let scripting = &self.shared.scripting;
        if !self.busy {
            let limit = self.shared.config.read().get_i64("busy-reply-threshold");
            let elapsed = now_ms().saturating_sub(self.now);
            if limit <= 0 || elapsed < limit as u64 {
                return false;
            }
            self.busy = true;
            scripting.state.fetch_or(BUSY, Ordering::AcqRel);
            tracing::warn!(
                "Slow script detected: still in execution after {elapsed} milliseconds. You can \
                 try killing the script using the SCRIPT KILL command. Script name is: {}.",
                self.sha
            );
            hand_off_worker();
        }
        scripting.state.load(Ordering::Acquire) & KILL != 0
    }

    fn core(&mut self, resp: u8, spec: &CommandSpec, argv: &[Bytes]) -> Reply {
        let shared = self.shared;
        if spec.is_write() && !self.logged_multi {
            shared.log_block_begin(self.db);
            self.logged_multi = true;
        }
        let store = self.guard.get_or_insert_with(|| shared.store.lock());
        crate::commands::run_core_deferred(
            shared,
            store,
            self.db,
            self.now,
            resp == 3,
            true,
            spec,
            argv,
            &mut self.ready,
        )
    }

    fn server(&mut self, spec: &CommandSpec, argv: &[Bytes]) -> Reply {
        if spec.name == "select" {
            return match parse_i64(&argv[1]) {
                None => Error::NotInteger.into(),
                Some(n) if n < 0 || n as usize >= self.shared.databases => {
                    Error::DbIndexOutOfRange.into()
                }
                Some(n) => {
                    self.db = n as usize;
                    Reply::Ok
                }
            };
        }
        crate::commands::reply_for(self.s, self.shared, self.guard, spec, argv).unwrap_or(Reply::Ok)
    }
}

thread_local! {
    /// The script run on this thread, for `redis.call` (a script runs to
    /// its end on the thread that started it, and never starts another).
    static CURRENT: Cell<*mut ()> = const { Cell::new(std::ptr::null_mut()) };
}

/// Clears the running script's state (busy, wrote, kill) when dropped.
struct ClearState<'a>(&'a AtomicU8);

impl Drop for ClearState<'_> {
    fn drop(&mut self) {
        self.0.store(0, Ordering::Release);
    }
}

/// Marks a run as this thread's current one until dropped.
struct Current;

impl Current {
    fn enter(call: &mut Call<'_, '_>) -> Current {
        CURRENT.with(|c| c.set(call as *mut Call<'_, '_> as *mut ()));
        Current
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(std::ptr::null_mut()));
    }
}

/// Runs `f` on the current script run, if one is running on this thread.
fn with_call<R>(f: impl FnOnce(&mut Call<'_, '_>) -> R) -> Option<R> {
    let p = CURRENT.with(|c| c.get()) as *mut Call<'static, 'static>;
    if p.is_null() {
        return None;
    }
    // SAFETY: the pointer was set by `Current::enter` from a `Call` that
    // outlives the Lua call it was set for, and is cleared when that call
    // returns; the Lua state runs on this thread only, one call at a time,
    // and nothing else touches the `Call` while Lua runs.
    Some(f(unsafe { &mut *p }))
}

/// `redis.call` / `redis.pcall`: the command's reply as a Lua value, and
/// whether it failed.
fn call_from_script(lua: &Lua, args: MultiValue) -> mlua::Result<(Value, bool)> {
    let argv = if args.is_empty() {
        None
    } else {
        Some(
            args.iter()
                .map(convert::arg)
                .collect::<Option<Vec<Bytes>>>(),
        )
    };
    let (reply, resp) = with_call(|call| {
        let reply = match &argv {
            None => err("ERR Please specify at least one argument for this redis lib call"),
            Some(None) => err("ERR Lua redis lib command arguments must be strings or integers"),
            Some(Some(argv)) => call.run(call.resp, argv),
        };
        (reply, call.resp)
    })
    .unwrap_or_else(|| (err("ERR no script is running"), 2));
    let failed = matches!(reply, Reply::Error(_));
    Ok((convert::to_lua(lua, &reply, resp)?, failed))
}

/// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO.
pub fn eval<'a>(
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    spec: &CommandSpec,
    argv: &[Bytes],
) -> Reply {
    let by_sha = spec.name.starts_with("evalsha");
    let Some(numkeys) = parse_i64(&argv[2]) else {
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
    guard.get_or_insert_with(|| shared.store.lock());
    let scripting = &shared.scripting;
    let mut slot = scripting.engine.lock();
    let eng = match engine(&mut slot) {
        Ok(e) => e,
        Err(r) => return r,
    };
    let mut lower = [0u8; 40];
    let sha: std::borrow::Cow<'_, str> = if by_sha {
        // A digest is 40 hex digits; anything else is in no cache.
        if argv[1].len() != 40 {
            return err(NOSCRIPT);
        }
        lower.copy_from_slice(&argv[1]);
        lower.make_ascii_lowercase();
        match std::str::from_utf8(&lower) {
            Ok(s) => s.into(),
            Err(_) => return err(NOSCRIPT),
        }
    } else {
        let sha = match eng.compile(&argv[1]) {
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
            let store = guard.get_or_insert_with(|| shared.store.lock());
            if let Err(e) = crate::evict::make_room(shared, store) {
                return e.into();
            }
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

fn list(lua: &Lua, items: &[Bytes]) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, b) in items.iter().enumerate() {
        t.raw_set(i + 1, lua.create_string(b)?)?;
    }
    Ok(t)
}

#[allow(clippy::too_many_arguments)]
fn run<'a>(
    eng: &Engine,
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    script: &Script,
    sha: &str,
    keys: &[Bytes],
    args: &[Bytes],
    read_only: bool,
) -> mlua::Result<Reply> {
    eng.globals.raw_set("KEYS", list(&eng.lua, keys)?)?;
    eng.globals.raw_set("ARGV", list(&eng.lua, args)?)?;
    guard.get_or_insert_with(|| shared.store.lock());
    let db = s.db;
    let mut call = Call {
        s,
        shared,
        guard,
        db,
        now: now_ms(),
        resp: 2,
        read_only: read_only || script.no_writes,
        allow_oom: script.allow_oom,
        logged_multi: false,
        ready: Vec::new(),
        wrote: false,
        busy: false,
        line_hook: false,
        sha,
    };
    let outcome = {
        // However the run ends, other clients see no script running after.
        let _clear = ClearState(&shared.scripting.state);
        let _current = Current::enter(&mut call);
        eng.run.call::<MultiValue>(&script.func)
    };
    if call.line_hook {
        set_hook(&eng.lua, &eng.state, false)?;
    }
    if call.logged_multi {
        shared.log_block_end(call.db);
    }
    if let Some(store) = call.guard.as_mut() {
        crate::commands::serve_ready(shared, store, std::mem::take(&mut call.ready));
    }
    let resp = call.resp;
    let out = outcome?;
    let ok = matches!(out.front(), Some(Value::Boolean(true)));
    let value = out.get(1).cloned().unwrap_or(Value::Nil);
    let reply = if ok {
        convert::to_reply(&value, resp)
    } else {
        failure(&value, sha)
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
        Ok(Value::String(s)) => convert::one_line(&s.as_bytes()),
        Ok(other) => match convert::number(&other) {
            Some(n) => ebb_core::reply::format_g(n, 14),
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
    match (source, line) {
        (Some(src), Some(l)) => err(format!("{msg} script: {sha}, on {src}:{}.", l as i64)),
        _ => err(msg),
    }
}

/// SCRIPT LOAD / EXISTS / FLUSH / KILL / HELP.
pub fn script(shared: &Arc<Shared>, argv: &[Bytes]) -> Reply {
    let sub = String::from_utf8_lossy(&argv[1]).to_ascii_lowercase();
    let scripting = &shared.scripting;
    match sub.as_str() {
        "load" => {
            let mut slot = scripting.engine.lock();
            let eng = match engine(&mut slot) {
                Ok(e) => e,
                Err(r) => return r,
            };
            let r = match eng.compile(&argv[2]) {
                Ok(sha) => Reply::Bulk(Bytes::from(sha)),
                Err(r) => r,
            };
            scripting.note_engine(eng);
            r
        }
        "exists" => {
            let slot = scripting.engine.lock();
            let found = |sha: &Bytes| {
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
            scripting.lua_bytes.store(0, Ordering::Relaxed);
            Reply::Ok
        }
        "kill" => scripting.kill(),
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
        _ => ebb_core::error::unknown_subcommand(&argv[1], "script").into(),
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
