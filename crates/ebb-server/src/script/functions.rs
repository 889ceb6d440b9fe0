//! Functions, as Redis 7.0 has them: FUNCTION LOAD / DELETE / LIST / FLUSH
//! / DUMP / RESTORE / KILL / STATS / HELP, and FCALL / FCALL_RO.
//!
//! A library is Lua code that starts with `#!lua name=<library>` and
//! registers functions with `redis.register_function`. The libraries'
//! code lives with the keyspace (`Store::functions`), so snapshots, AOF
//! rewrites and DEBUG RELOAD carry it; this module keeps them compiled in
//! a Lua state of their own (apart from EVAL's, as in Redis) and brings
//! that state up to date whenever the code changed under it (a reload, a
//! replayed log).

use bytes::Bytes;
use ebb_core::args::parse_i64;
use ebb_core::functions::{dump_payload, parse_payload, Libraries};
use ebb_core::{CommandSpec, Reply};
use mlua::{Function, HookTriggers, Lua, MultiValue, Table, Value, VmState};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{busy, convert, err, libs, list, run_script, BaseState, Guard, RunSpec};
use crate::conn::Session;
use crate::server::{now_ms, Shared};

const FUNCTIONS_LUA: &str = include_str!("functions.lua");

/// The flags a function may declare, in the order FUNCTION LIST shows them.
const FLAG_NAMES: [&str; 5] = [
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];
const NO_WRITES: u8 = 1;
const ALLOW_OOM: u8 = 2;

/// How long a library's code may run while it loads (FUNCTION LOAD; code
/// loaded from disk has no limit), as in Redis.
const LOAD_TIMEOUT: Duration = Duration::from_millis(500);

/// One registered function.
struct FunctionDef {
    name: String,
    callback: Function,
    description: Option<Bytes>,
    flags: u8,
}

/// The functions' Lua state and the compiled libraries.
pub struct FnEngine {
    lua: Lua,
    state: Table,
    /// The global table library code and functions run in.
    env: Table,
    /// `load_library(chunk)` of functions.lua.
    load: Function,
    /// `call(f, keys, args)` of functions.lua.
    call: Function,
    /// The generation of the libraries compiled here.
    generation: u64,
    /// Library name -> its functions, in registration order.
    libraries: BTreeMap<Bytes, Vec<Arc<FunctionDef>>>,
    /// Lower-case function name -> function (names are case-insensitive).
    by_name: HashMap<String, Arc<FunctionDef>>,
}

/// A library's metadata line: `#!<engine> name=<name>`.
struct Metadata {
    engine: String,
    name: Bytes,
    /// Where the code after the metadata line starts (at its newline, so
    /// line numbers count the metadata line).
    body: usize,
}

/// Reads a library's metadata line, with Redis's errors.
fn metadata(code: &[u8]) -> Result<Metadata, String> {
    if !code.starts_with(b"#!") {
        return Err("ERR Missing library metadata".into());
    }
    let Some(end) = code.iter().position(|&c| c == b'\n') else {
        return Err("ERR Invalid library metadata".into());
    };
    let parts = match crate::resp::split_args(&code[..end]) {
        Some(p) if !p.is_empty() => p,
        _ => return Err("ERR Invalid library metadata".into()),
    };
    let engine = String::from_utf8_lossy(parts[0].get(2..).unwrap_or_default()).into_owned();
    let mut name: Option<Bytes> = None;
    for part in &parts[1..] {
        if part.len() >= 5 && part[..5].eq_ignore_ascii_case(b"name=") {
            if name.is_some() {
                return Err(
                    "ERR Invalid metadata value, name argument was given multiple times".into(),
                );
            }
            name = Some(part.slice(5..));
            continue;
        }
        return Err(format!(
            "ERR Invalid metadata value given: {}",
            convert::one_line(part)
        ));
    }
    let Some(name) = name else {
        return Err("ERR Library name was not given".into());
    };
    Ok(Metadata {
        engine,
        name,
        body: end,
    })
}

/// Letters, digits and underscores, at least one.
fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// The checks before a library is compiled: metadata, name and engine.
fn checked_metadata(code: &[u8]) -> Result<Metadata, String> {
    let md = metadata(code)?;
    if !valid_name(&md.name) {
        return Err(
            "ERR Library names can only contain letters, numbers, or underscores(_) and \
                    must be at least one character long"
                .into(),
        );
    }
    if !md.engine.eq_ignore_ascii_case("lua") {
        return Err(format!("ERR Engine '{}' not found", md.engine));
    }
    Ok(md)
}

impl FnEngine {
    fn new() -> mlua::Result<FnEngine> {
        let b = BaseState::new()?;
        let (env, load, call): (Table, Function, Function) = b
            .lua
            .load(FUNCTIONS_LUA)
            .set_name("=[ebb]")
            .call(b.internals)?;
        Ok(FnEngine {
            lua: b.lua,
            state: b.state,
            env,
            load,
            call,
            generation: 0,
            libraries: BTreeMap::new(),
            by_name: HashMap::new(),
        })
    }

    /// Compiles a library and runs its code, which registers its
    /// functions (under `timeout`, if any): the functions, or Redis's error.
    fn compile(
        &self,
        code: &[u8],
        md: &Metadata,
        timeout: Option<Duration>,
    ) -> Result<Vec<Arc<FunctionDef>>, String> {
        let chunk = self
            .lua
            .load(&code[md.body..])
            .set_name("@user_function")
            .set_environment(self.env.clone())
            .into_function()
            .map_err(|e| {
                let msg = match e {
                    mlua::Error::SyntaxError { message, .. } => message,
                    other => other.to_string(),
                };
                format!(
                    "ERR Error compiling function: {}",
                    convert::one_line(msg.as_bytes())
                )
            })?;
        if let Some(limit) = timeout {
            let start = Instant::now();
            let st = self.state.clone();
            self.lua
                .set_global_hook(
                    HookTriggers::new().every_nth_instruction(100_000),
                    move |lua, _| {
                        if start.elapsed() > limit {
                            return Err(libs::raise_table(lua, &st, "ERR FUNCTION LOAD timeout"));
                        }
                        Ok(VmState::Continue)
                    },
                )
                .map_err(|e| e.to_string())?;
        }
        let outcome = self.load.call::<(bool, Value)>(chunk);
        if timeout.is_some() {
            // Back to the hook that watches running functions.
            busy::set_hook(&self.lua, &self.state, false).map_err(|e| e.to_string())?;
        }
        let (ok, value) = outcome.map_err(|e| {
            format!(
                "ERR Error registering functions: {}",
                convert::one_line(e.to_string().as_bytes())
            )
        })?;
        if !ok {
            let msg = match &value {
                Value::Table(t) => match t.raw_get::<Value>("err") {
                    Ok(Value::String(s)) => convert::one_line(&s.as_bytes()),
                    _ => "ERR unknown error".into(),
                },
                _ => "ERR unknown error".into(),
            };
            return Err(format!("ERR Error registering functions: {msg}"));
        }
        let Value::Table(regs) = value else {
            return Err("ERR Error registering functions".into());
        };
        let mut out = Vec::new();
        for r in regs.sequence_values::<Table>() {
            let r = r.map_err(|e| e.to_string())?;
            let name: mlua::LuaString = r.raw_get("name").map_err(|e| e.to_string())?;
            let description: Option<mlua::LuaString> =
                r.raw_get("description").map_err(|e| e.to_string())?;
            let flags_t: Table = r.raw_get("flags").map_err(|e| e.to_string())?;
            let mut flags = 0u8;
            for f in flags_t.sequence_values::<mlua::LuaString>().flatten() {
                if let Some(i) = FLAG_NAMES.iter().position(|n| f.as_bytes() == n.as_bytes()) {
                    flags |= 1 << i;
                }
            }
            out.push(Arc::new(FunctionDef {
                name: name.to_string_lossy(),
                callback: r.raw_get("callback").map_err(|e| e.to_string())?,
                description: description.map(|d| Bytes::copy_from_slice(&d.as_bytes())),
                flags,
            }));
        }
        Ok(out)
    }

    /// Makes a library's functions callable.
    fn link(&mut self, name: Bytes, functions: Vec<Arc<FunctionDef>>) {
        for f in &functions {
            self.by_name
                .entry(f.name.to_ascii_lowercase())
                .or_insert_with(|| f.clone());
        }
        self.libraries.insert(name, functions);
    }

    /// Removes a library and its functions.
    fn unlink(&mut self, name: &[u8]) -> Option<Vec<Arc<FunctionDef>>> {
        let functions = self.libraries.remove(name)?;
        for f in &functions {
            let key = f.name.to_ascii_lowercase();
            if self.by_name.get(&key).is_some_and(|g| Arc::ptr_eq(g, f)) {
                self.by_name.remove(&key);
            }
        }
        Some(functions)
    }

    /// The first of `functions` whose name another library already uses.
    fn collision(&self, functions: &[Arc<FunctionDef>]) -> Option<String> {
        functions
            .iter()
            .find(|f| self.by_name.contains_key(&f.name.to_ascii_lowercase()))
            .map(|f| f.name.clone())
    }

    /// Brings the compiled libraries up to date with `libs` (after a
    /// reload or a replayed log). Code that was accepted once compiles
    /// again; anything that does not is logged and left out.
    fn sync(&mut self, libs: &Libraries) {
        if self.generation == libs.generation() {
            return;
        }
        self.libraries.clear();
        self.by_name.clear();
        for (name, code) in libs.iter() {
            let compiled = checked_metadata(code).and_then(|md| self.compile(code, &md, None));
            match compiled {
                Ok(fs) => self.link(name.clone(), fs),
                Err(e) => tracing::warn!(
                    library = %String::from_utf8_lossy(name),
                    "could not load a function library: {e}"
                ),
            }
        }
        self.generation = libs.generation();
    }

    /// Number of functions (FUNCTION STATS counts each library's own).
    fn function_count(&self) -> usize {
        self.libraries.values().map(Vec::len).sum()
    }

    /// Bytes the Lua state holds.
    fn used_memory(&self) -> usize {
        self.lua.used_memory()
    }
}

/// The function engine, made on first use and synced with the store.
fn engine<'e>(slot: &'e mut Option<FnEngine>, libs: &Libraries) -> Result<&'e mut FnEngine, Reply> {
    if slot.is_none() {
        let e =
            FnEngine::new().map_err(|e| err(format!("ERR could not start the Lua engine: {e}")))?;
        *slot = Some(e);
    }
    let eng = slot.as_mut().ok_or_else(|| err("ERR no Lua engine"))?;
    eng.sync(libs);
    Ok(eng)
}

impl super::Scripting {
    /// Functions loaded (INFO's `number_of_functions`).
    pub fn function_count(&self) -> u64 {
        self.fn_count.load(Ordering::Relaxed)
    }

    /// Bytes the functions' Lua state held when last measured.
    pub fn functions_lua_bytes(&self) -> u64 {
        self.fn_lua_bytes.load(Ordering::Relaxed)
    }

    fn note_functions(&self, eng: &FnEngine) {
        self.fn_count
            .store(eng.by_name.len() as u64, Ordering::Relaxed);
        self.fn_libraries
            .store(eng.libraries.len() as u64, Ordering::Relaxed);
        self.fn_registered
            .store(eng.function_count() as u64, Ordering::Relaxed);
        self.fn_lua_bytes
            .store(eng.used_memory() as u64, Ordering::Relaxed);
    }
}

/// Compiles the libraries loaded from disk at start, as Redis does (so
/// INFO counts their functions and the first FCALL does not pay for it).
pub fn load_libraries(shared: &Shared) {
    let store = shared.store.lock();
    if store.functions.is_empty() {
        return;
    }
    let mut slot = shared.scripting.functions.lock();
    if let Ok(eng) = engine(&mut slot, &store.functions) {
        shared.scripting.note_functions(eng);
    }
}

/// FUNCTION and its subcommands (arity is checked before they run).
pub fn function<'a>(shared: &'a Arc<Shared>, guard: &mut Guard<'a>, argv: &[Bytes]) -> Reply {
    let sub = String::from_utf8_lossy(&argv[1]).to_ascii_lowercase();
    let syntax = || {
        err(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try FUNCTION HELP.",
            convert::one_line(&argv[1][..argv[1].len().min(128)])
        ))
    };
    match sub.as_str() {
        "load" => load(shared, guard, argv),
        "delete" => {
            let store = guard.get_or_insert_with(|| shared.store.lock());
            let mut slot = shared.scripting.functions.lock();
            let eng = match engine(&mut slot, &store.functions) {
                Ok(e) => e,
                Err(r) => return r,
            };
            if !store.functions.remove(&argv[2]) {
                return err("ERR Library not found");
            }
            eng.unlink(&argv[2]);
            eng.generation = store.functions.generation();
            shared.scripting.note_functions(eng);
            changed(shared, argv);
            Reply::Ok
        }
        "list" => list_libraries(shared, guard, argv),
        "flush" => {
            if argv.len() > 3 {
                return syntax();
            }
            if let Some(mode) = argv.get(2) {
                if !mode.eq_ignore_ascii_case(b"sync") && !mode.eq_ignore_ascii_case(b"async") {
                    return err("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
                }
            }
            let store = guard.get_or_insert_with(|| shared.store.lock());
            store.functions.clear();
            let mut slot = shared.scripting.functions.lock();
            if let Ok(eng) = engine(&mut slot, &store.functions) {
                shared.scripting.note_functions(eng);
            }
            changed(shared, argv);
            Reply::Ok
        }
        "dump" => {
            let store = guard.get_or_insert_with(|| shared.store.lock());
            Reply::Bulk(dump_payload(&store.functions).into())
        }
        "restore" => {
            if argv.len() > 4 {
                return syntax();
            }
            restore(shared, guard, argv)
        }
        "kill" => shared.scripting.kill(true),
        "stats" => stats(shared, guard),
        "help" => help(),
        _ => ebb_core::error::unknown_subcommand(&argv[1], "function").into(),
    }
}

/// After a change of the libraries: one more change for the save rules,
/// and the command in the append-only file.
fn changed(shared: &Shared, argv: &[Bytes]) {
    shared.stats.dirty.fetch_add(1, Ordering::Relaxed);
    shared.log_raw(0, argv);
}

/// FUNCTION LOAD [REPLACE] code.
fn load<'a>(shared: &'a Arc<Shared>, guard: &mut Guard<'a>, argv: &[Bytes]) -> Reply {
    let mut replace = false;
    let mut i = 2;
    while i < argv.len() - 1 {
        if argv[i].eq_ignore_ascii_case(b"replace") {
            replace = true;
            i += 1;
            continue;
        }
        return err(format!(
            "ERR Unknown option given: {}",
            convert::one_line(&argv[i])
        ));
    }
    let code = &argv[argv.len() - 1];
    let md = match checked_metadata(code) {
        Ok(md) => md,
        Err(e) => return err(e),
    };
    let store = guard.get_or_insert_with(|| shared.store.lock());
    if !replace && store.functions.get(&md.name).is_some() {
        return err(format!(
            "ERR Library '{}' already exists",
            String::from_utf8_lossy(&md.name)
        ));
    }
    let scripting = &shared.scripting;
    let mut slot = scripting.functions.lock();
    let eng = match engine(&mut slot, &store.functions) {
        Ok(e) => e,
        Err(r) => return r,
    };
    let functions = match eng.compile(code, &md, Some(LOAD_TIMEOUT)) {
        Ok(f) => f,
        Err(e) => return err(e),
    };
    if functions.is_empty() {
        return err("ERR No functions registered");
    }
    let old = eng.unlink(&md.name);
    if let Some(name) = eng.collision(&functions) {
        if let Some(old) = old {
            eng.link(md.name.clone(), old);
        }
        return err(format!("ERR Function {name} already exists"));
    }
    eng.link(md.name.clone(), functions);
    store.functions.insert(md.name.clone(), code.clone());
    eng.generation = store.functions.generation();
    scripting.note_functions(eng);
    changed(shared, argv);
    Reply::Bulk(md.name)
}

/// FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
fn restore<'a>(shared: &'a Arc<Shared>, guard: &mut Guard<'a>, argv: &[Bytes]) -> Reply {
    #[derive(PartialEq)]
    enum Policy {
        Append,
        Replace,
        Flush,
    }
    let policy =
        match argv.get(3) {
            None => Policy::Append,
            Some(p) if p.eq_ignore_ascii_case(b"append") => Policy::Append,
            Some(p) if p.eq_ignore_ascii_case(b"replace") => Policy::Replace,
            Some(p) if p.eq_ignore_ascii_case(b"flush") => Policy::Flush,
            Some(_) => return err(
                "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
            ),
        };
    let Some(codes) = parse_payload(&argv[2]) else {
        return err("ERR DUMP payload version or checksum are wrong");
    };
    let store = guard.get_or_insert_with(|| shared.store.lock());
    let scripting = &shared.scripting;
    let mut slot = scripting.functions.lock();
    let eng = match engine(&mut slot, &store.functions) {
        Ok(e) => e,
        Err(r) => return r,
    };
    // Every library of the payload, compiled, before anything changes.
    let mut incoming: Vec<(Bytes, Bytes, Vec<Arc<FunctionDef>>)> = Vec::new();
    for code in codes {
        let compiled = checked_metadata(&code).and_then(|md| {
            if incoming.iter().any(|(n, _, _)| *n == md.name) {
                return Err(format!(
                    "ERR Library {} already exists",
                    String::from_utf8_lossy(&md.name)
                ));
            }
            eng.compile(&code, &md, None).map(|f| (md.name, f))
        });
        match compiled {
            Ok((name, fs)) => incoming.push((name, code, fs)),
            Err(e) => return err(e),
        }
    }
    let mut target = if policy == Policy::Flush {
        Libraries::default()
    } else {
        store.functions.clone()
    };
    // Names of functions that stay (not in a library being replaced).
    let mut taken: HashMap<String, ()> = HashMap::new();
    for (name, fs) in &eng.libraries {
        if policy == Policy::Flush || incoming.iter().any(|(n, _, _)| n == name) {
            continue;
        }
        for f in fs {
            taken.insert(f.name.to_ascii_lowercase(), ());
        }
    }
    for (name, _, _) in &incoming {
        if policy == Policy::Append && target.get(name).is_some() {
            return err(format!(
                "ERR Library {} already exists",
                String::from_utf8_lossy(name)
            ));
        }
    }
    for (_, _, fs) in &incoming {
        for f in fs {
            if taken.insert(f.name.to_ascii_lowercase(), ()).is_some() {
                return err(format!("ERR Function {} already exists", f.name));
            }
        }
    }
    for (name, code, _) in &incoming {
        target.insert(name.clone(), code.clone());
    }
    if policy == Policy::Flush {
        eng.libraries.clear();
        eng.by_name.clear();
    }
    for (name, _, fs) in incoming {
        eng.unlink(&name);
        eng.link(name, fs);
    }
    store.functions = target;
    eng.generation = store.functions.generation();
    scripting.note_functions(eng);
    changed(shared, argv);
    Reply::Ok
}

/// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
fn list_libraries<'a>(shared: &'a Arc<Shared>, guard: &mut Guard<'a>, argv: &[Bytes]) -> Reply {
    let mut with_code = false;
    let mut pattern: Option<&Bytes> = None;
    let mut i = 2;
    while i < argv.len() {
        let a = &argv[i];
        if !with_code && a.eq_ignore_ascii_case(b"withcode") {
            with_code = true;
        } else if pattern.is_none() && a.eq_ignore_ascii_case(b"libraryname") {
            if i + 1 >= argv.len() {
                return err("ERR library name argument was not given");
            }
            i += 1;
            pattern = Some(&argv[i]);
        } else {
            return err(format!("ERR Unknown argument {}", convert::one_line(a)));
        }
        i += 1;
    }
    let store = guard.get_or_insert_with(|| shared.store.lock());
    let mut slot = shared.scripting.functions.lock();
    let eng = match engine(&mut slot, &store.functions) {
        Ok(e) => e,
        Err(r) => return r,
    };
    let mut out = Vec::new();
    for (name, fs) in &eng.libraries {
        if pattern.is_some_and(|p| !ebb_core::glob::glob_match(p, name, true)) {
            continue;
        }
        let functions = fs
            .iter()
            .map(|f| {
                let flags = FLAG_NAMES
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| f.flags & (1 << i) != 0)
                    .map(|(_, n)| Reply::simple(n))
                    .collect();
                Reply::Map(vec![
                    (Reply::text("name"), Reply::text(f.name.clone())),
                    (
                        Reply::text("description"),
                        f.description.clone().map_or(Reply::Nil, Reply::Bulk),
                    ),
                    (Reply::text("flags"), Reply::Set(flags)),
                ])
            })
            .collect();
        let mut lib = vec![
            (Reply::text("library_name"), Reply::Bulk(name.clone())),
            (Reply::text("engine"), Reply::text("LUA")),
            (Reply::text("functions"), Reply::Array(functions)),
        ];
        if with_code {
            let code = store.functions.get(name).cloned().unwrap_or_default();
            lib.push((Reply::text("library_code"), Reply::Bulk(code)));
        }
        out.push(Reply::Map(lib));
    }
    Reply::Array(out)
}

/// FUNCTION STATS: the function running (if any) and the engine's counts.
fn stats<'a>(shared: &'a Arc<Shared>, guard: &mut Guard<'a>) -> Reply {
    let scripting = &shared.scripting;
    if scripting.busy() {
        let running = scripting.running.lock().clone();
        let Some((name, command, start)) = running else {
            // A script (EVAL) is running: Redis answers this.
            return err(super::busy::BUSY_REPLY);
        };
        let engines = Reply::Map(vec![(
            Reply::text("LUA"),
            Reply::Map(vec![
                (
                    Reply::text("libraries_count"),
                    Reply::Int(scripting.fn_libraries.load(Ordering::Relaxed) as i64),
                ),
                (
                    Reply::text("functions_count"),
                    Reply::Int(scripting.fn_registered.load(Ordering::Relaxed) as i64),
                ),
            ]),
        )]);
        return Reply::Map(vec![
            (
                Reply::text("running_script"),
                Reply::Map(vec![
                    (Reply::text("name"), Reply::text(name)),
                    (
                        Reply::text("command"),
                        Reply::Array(command.into_iter().map(Reply::Bulk).collect()),
                    ),
                    (
                        Reply::text("duration_ms"),
                        Reply::Int(now_ms().saturating_sub(start) as i64),
                    ),
                ]),
            ),
            (Reply::text("engines"), engines),
        ]);
    }
    let store = guard.get_or_insert_with(|| shared.store.lock());
    let mut slot = scripting.functions.lock();
    let (libraries, functions) = match engine(&mut slot, &store.functions) {
        Ok(eng) => (eng.libraries.len(), eng.function_count()),
        Err(r) => return r,
    };
    Reply::Map(vec![
        (Reply::text("running_script"), Reply::Nil),
        (
            Reply::text("engines"),
            Reply::Map(vec![(
                Reply::text("LUA"),
                Reply::Map(vec![
                    (Reply::text("libraries_count"), Reply::Int(libraries as i64)),
                    (Reply::text("functions_count"), Reply::Int(functions as i64)),
                ]),
            )]),
        ),
    ])
}

fn help() -> Reply {
    Reply::Array(
        [
            "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "LOAD [REPLACE] <FUNCTION CODE>",
            "    Create a new library with the given library name and code.",
            "DELETE <LIBRARY NAME>",
            "    Delete the given library.",
            "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
            "    Return general information on all the libraries:",
            "    * Library name",
            "    * The engine used to run the Library",
            "    * Library description",
            "    * Functions list",
            "    * Library code (if WITHCODE is given)",
            "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
            "STATS",
            "    Return information about the current function running:",
            "    * Function name",
            "    * Command used to run the function",
            "    * Duration in MS that the function is running",
            "    If no function is running, return nil",
            "    In addition, returns a list of available engines.",
            "KILL",
            "    Kill the current running function.",
            "FLUSH [ASYNC|SYNC]",
            "    Delete all the libraries.",
            "    When called without the optional mode argument, the behavior is determined by the",
            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
            "    * ASYNC: Asynchronously flush the libraries.",
            "    * SYNC: Synchronously flush the libraries.",
            "DUMP",
            "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
            "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
            "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
            "    control how to handle existing libraries (default APPEND):",
            "    * FLUSH: delete all existing libraries.",
            "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
            "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
            "      libraries with the new libraries (notice that even on this option there is a chance of failure",
            "      in case of functions name collision with another library).",
            "HELP",
            "    Prints this help.",
        ]
        .iter()
        .map(|l| Reply::Simple((*l).into()))
        .collect(),
    )
}

/// Whether the function `name` may write (it does not declare
/// `no-writes`); true for an unknown one.
pub(super) fn may_write(shared: &Shared, name: &[u8]) -> bool {
    let slot = shared.scripting.functions.lock();
    let key = String::from_utf8_lossy(name).to_ascii_lowercase();
    match slot.as_ref().and_then(|e| e.by_name.get(&key)) {
        Some(f) => f.flags & NO_WRITES == 0,
        None => true,
    }
}

/// FCALL and FCALL_RO.
pub fn fcall<'a>(
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    spec: &CommandSpec,
    argv: &[Bytes],
) -> Reply {
    let read_only = spec.name == "fcall_ro";
    // The keyspace first, then the Lua state: the order every path takes
    // them in.
    let store = guard.get_or_insert_with(|| shared.store.lock());
    let scripting = &shared.scripting;
    let mut slot = scripting.functions.lock();
    let eng = match engine(&mut slot, &store.functions) {
        Ok(e) => e,
        Err(r) => return r,
    };
    let name = String::from_utf8_lossy(&argv[1]).to_ascii_lowercase();
    let Some(f) = eng.by_name.get(&name).cloned() else {
        return err("ERR Function not found");
    };
    // A function that may write is refused over maxmemory (unless
    // allow-oom) before anything else is checked, as Redis refuses the
    // command itself, and by FCALL_RO.
    let may_write = f.flags & NO_WRITES == 0;
    if may_write && f.flags & ALLOW_OOM == 0 && crate::evict::limited() {
        let store = guard.get_or_insert_with(|| shared.store.lock());
        if let Err(e) = crate::evict::make_room(shared, store) {
            return e.into();
        }
    }
    let numkeys = match parse_i64(&argv[2]) {
        Some(n) => n,
        None => return err("ERR Bad number of keys provided"),
    };
    if numkeys > (argv.len() - 3) as i64 {
        return err("ERR Number of keys can't be greater than number of args");
    }
    if numkeys < 0 {
        return err("ERR Number of keys can't be negative");
    }
    if may_write && read_only {
        return err("ERR Can not execute a script with write flag using *_ro command.");
    }
    let n = numkeys as usize;
    let eng: &FnEngine = eng;
    let tables =
        list(&eng.lua, &argv[3..3 + n]).and_then(|k| Ok((k, list(&eng.lua, &argv[3 + n..])?)));
    let (keys, args) = match tables {
        Ok(t) => t,
        Err(e) => return err(format!("ERR {e}")),
    };
    *scripting.running.lock() = Some((f.name.clone(), argv.to_vec(), now_ms()));
    let how = RunSpec {
        lua: &eng.lua,
        state: &eng.state,
        name: &f.name,
        read_only: read_only || f.flags & NO_WRITES != 0,
        allow_oom: f.flags & (ALLOW_OOM | NO_WRITES) != 0,
        function: true,
    };
    let r = run_script(how, s, shared, guard, || {
        eng.call
            .call::<MultiValue>((f.callback.clone(), keys, args))
    });
    *scripting.running.lock() = None;
    let r = r.unwrap_or_else(|e| {
        err(format!(
            "ERR Error running script: {}",
            convert::one_line(e.to_string().as_bytes())
        ))
    });
    scripting.note_functions(eng);
    r
}

/// FUNCTION LOAD / DELETE / FLUSH / RESTORE read back from the append-only
/// file or a snapshot: the code is trusted (it was accepted when logged)
/// and compiled on first use.
pub fn replay_function(store: &mut ebb_core::Store, argv: &[Bytes]) -> Result<(), String> {
    let sub = argv
        .get(1)
        .map(|s| String::from_utf8_lossy(s).to_ascii_lowercase())
        .unwrap_or_default();
    let libs = &mut store.functions;
    match (sub.as_str(), argv.len()) {
        ("load", n) if n >= 3 => {
            let code = &argv[n - 1];
            let md = checked_metadata(code)?;
            libs.insert(md.name, code.clone());
        }
        ("delete", 3) => {
            libs.remove(&argv[2]);
        }
        ("flush", 2 | 3) => libs.clear(),
        ("restore", 3 | 4) => {
            let codes = parse_payload(&argv[2]).ok_or("bad FUNCTION RESTORE payload")?;
            if argv
                .get(3)
                .is_some_and(|p| p.eq_ignore_ascii_case(b"flush"))
            {
                libs.clear();
            }
            for code in codes {
                let md = checked_metadata(&code)?;
                libs.insert(md.name, code);
            }
        }
        _ => return Err("unknown FUNCTION form in the log".into()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_lines() {
        let md = metadata(b"#!lua name=lib\nreturn").ok().unwrap();
        assert_eq!(
            (md.engine.as_str(), &md.name[..], md.body),
            ("lua", &b"lib"[..], 14)
        );
        let md = metadata(b"#!lua name=\"foo\"\n").ok().unwrap();
        assert_eq!(&md.name[..], b"foo");
        let e = |code: &[u8]| checked_metadata(code).err().unwrap();
        assert_eq!(e(b"return 1"), "ERR Missing library metadata");
        assert_eq!(e(b"#!lua name=x"), "ERR Invalid library metadata");
        assert_eq!(e(b"#!lua\n"), "ERR Library name was not given");
        assert_eq!(
            e(b"#!lua name=a name=b\n"),
            "ERR Invalid metadata value, name argument was given multiple times"
        );
        assert_eq!(
            e(b"#!lua foo=bar\n"),
            "ERR Invalid metadata value given: foo=bar"
        );
        assert_eq!(e(b"#! name=x\n"), "ERR Engine '' not found");
        assert!(e(b"#!lua name=a-b\n").starts_with("ERR Library names can only contain"));
        assert!(checked_metadata(b"#!LUA name=ok_1\n").is_ok());
    }

    #[test]
    fn replayed_commands_change_the_libraries() {
        let mut store = ebb_core::Store::new(1);
        let b = |s: &str| Bytes::from(s.to_string());
        let load = |code: &str| vec![b("FUNCTION"), b("LOAD"), b(code)];
        replay_function(&mut store, &load("#!lua name=a\nx")).unwrap();
        replay_function(&mut store, &load("#!lua name=b\ny")).unwrap();
        assert_eq!(store.functions.len(), 2);
        let payload = Bytes::from(dump_payload(&store.functions));
        replay_function(&mut store, &[b("FUNCTION"), b("DELETE"), b("a")]).unwrap();
        assert_eq!(store.functions.len(), 1);
        replay_function(&mut store, &[b("FUNCTION"), b("FLUSH")]).unwrap();
        assert!(store.functions.is_empty());
        replay_function(
            &mut store,
            &[b("FUNCTION"), b("RESTORE"), payload, b("FLUSH")],
        )
        .unwrap();
        assert_eq!(store.functions.len(), 2);
        assert!(replay_function(&mut store, &load("no metadata")).is_err());
    }
}
