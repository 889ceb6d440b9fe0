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
use ebb_core::functions::{parse_payload, Libraries};
use ebb_core::{CommandSpec, Reply};
use mlua::{Function, HookTriggers, Lua, MultiValue, Table, Value, VmState};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{busy, convert, err, libs, run_script, BaseState, Guard, RunSpec};
use crate::conn::Session;
use crate::server::{now_ms, Shared};

mod command;
pub use command::function;

const FUNCTIONS_LUA: &str = include_str!("../functions.lua");

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
            .load(super::text_only(&code[md.body..]).as_ref())
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
    fn sync(&mut self, libs: &Libraries) -> bool {
        if self.generation == libs.generation() {
            return false;
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
        true
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
fn engine<'e>(
    scripting: &super::Scripting,
    slot: &'e mut Option<FnEngine>,
    libs: &Libraries,
) -> Result<&'e mut FnEngine, Reply> {
    if slot.is_none() {
        let e =
            FnEngine::new().map_err(|e| err(format!("ERR could not start the Lua engine: {e}")))?;
        *slot = Some(e);
    }
    let eng = slot.as_mut().ok_or_else(|| err("ERR no Lua engine"))?;
    if eng.sync(libs) {
        scripting.note_functions(eng);
    }
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
    let store = shared.lock_store();
    if store.functions.is_empty() {
        return;
    }
    let mut slot = shared.scripting.functions.lock();
    let _ = engine(&shared.scripting, &mut slot, &store.functions);
}

/// What the function `name` declares about writing: whether it may
/// write (no `no-writes`), or None for an unknown function.
pub(super) fn declared_writes(shared: &Shared, name: &[u8]) -> Option<bool> {
    let slot = shared.scripting.functions.lock();
    let key = String::from_utf8_lossy(name).to_ascii_lowercase();
    let f = slot.as_ref()?.by_name.get(&key)?;
    Some(f.flags & NO_WRITES == 0)
}

/// FCALL and FCALL_RO.
pub fn fcall<'a>(
    s: &mut Session,
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    spec: &CommandSpec,
    argv: &[&[u8]],
) -> Reply {
    let read_only = spec.name == "fcall_ro";
    // The keyspace first, then the Lua state: the order every path takes
    // them in.
    let store = guard.get_or_insert_with(|| shared.lock_store());
    let scripting = &shared.scripting;
    let mut slot = scripting.functions.lock();
    let eng = match engine(&shared.scripting, &mut slot, &store.functions) {
        Ok(e) => e,
        Err(r) => return r,
    };
    let name = String::from_utf8_lossy(argv[1]).to_ascii_lowercase();
    let Some(f) = eng.by_name.get(&name).cloned() else {
        return err("ERR Function not found");
    };
    // A function that may write is refused over maxmemory (unless
    // allow-oom) before anything else is checked, as Redis refuses the
    // command itself, and by FCALL_RO.
    let may_write = f.flags & NO_WRITES == 0;
    if may_write && f.flags & ALLOW_OOM == 0 && crate::evict::limited() {
        let store = guard.get_or_insert_with(|| shared.lock_store());
        if let Err(e) = crate::evict::make_room(shared, store) {
            return e.into();
        }
    }
    let numkeys = match parse_i64(argv[2]) {
        Some(n) => n,
        None => return err("ERR Bad number of keys provided"),
    };
    if numkeys > (argv.len() - 3) as i64 {
        return err("ERR Number of keys can't be greater than number of args");
    }
    if numkeys < 0 {
        return err("ERR Number of keys can't be negative");
    }
    if may_write {
        if let Some(e) = crate::misconf::disk_error(shared) {
            return err(crate::misconf::script_refusal(&e));
        }
    }
    if may_write && read_only {
        return err("ERR Can not execute a script with write flag using *_ro command.");
    }
    let n = numkeys as usize;
    let eng: &FnEngine = eng;
    *scripting.running.lock() = Some((f.name.clone(), ebb_core::args::to_owned(argv), now_ms()));
    let how = RunSpec {
        lua: &eng.lua,
        state: &eng.state,
        name: &f.name,
        read_only: read_only || f.flags & NO_WRITES != 0,
        allow_oom: f.flags & (ALLOW_OOM | NO_WRITES) != 0,
        function: true,
        keys: &argv[3..3 + n],
        args: &argv[3 + n..],
    };
    let r = run_script(how, s, shared, guard, || {
        eng.call.call::<MultiValue>(f.callback.clone())
    });
    *scripting.running.lock() = None;
    let r = r.unwrap_or_else(|e| {
        err(format!(
            "ERR Error running script: {}",
            convert::one_line(e.to_string().as_bytes())
        ))
    });
    // A call changes no count; the Lua state's size is sampled as
    // EVAL's is.
    if scripting
        .fn_runs
        .fetch_add(1, Ordering::Relaxed)
        .is_multiple_of(64)
    {
        scripting
            .fn_lua_bytes
            .store(eng.used_memory() as u64, Ordering::Relaxed);
    }
    r
}

/// FUNCTION LOAD / DELETE / FLUSH / RESTORE read back from the append-only
/// file or a snapshot: the code is trusted (it was accepted when logged)
/// and compiled on first use.
pub fn replay_function(store: &mut ebb_core::Store, argv: &[&[u8]]) -> Result<(), String> {
    let sub = argv
        .get(1)
        .map(|s| String::from_utf8_lossy(s).to_ascii_lowercase())
        .unwrap_or_default();
    let libs = &mut store.functions;
    match (sub.as_str(), argv.len()) {
        ("load", n) if n >= 3 => {
            let code = &argv[n - 1];
            let md = checked_metadata(code)?;
            libs.insert(md.name, Bytes::copy_from_slice(code));
        }
        ("delete", 3) => {
            libs.remove(argv[2]);
        }
        ("flush", 2 | 3) => libs.clear(),
        ("restore", 3 | 4) => {
            let codes = parse_payload(argv[2]).ok_or("bad FUNCTION RESTORE payload")?;
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
    use ebb_core::functions::dump_payload;

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
        let b = |s: &'static str| s.as_bytes();
        let load = |code: &'static str| vec![b("FUNCTION"), b("LOAD"), b(code)];
        replay_function(&mut store, &load("#!lua name=a\nx")).unwrap();
        replay_function(&mut store, &load("#!lua name=b\ny")).unwrap();
        assert_eq!(store.functions.len(), 2);
        let payload = dump_payload(&store.functions);
        replay_function(&mut store, &[b("FUNCTION"), b("DELETE"), b("a")]).unwrap();
        assert_eq!(store.functions.len(), 1);
        replay_function(&mut store, &[b("FUNCTION"), b("FLUSH")]).unwrap();
        assert!(store.functions.is_empty());
        replay_function(
            &mut store,
            &[b("FUNCTION"), b("RESTORE"), &payload, b("FLUSH")],
        )
        .unwrap();
        assert_eq!(store.functions.len(), 2);
        assert!(replay_function(&mut store, &load("no metadata")).is_err());
    }
}
