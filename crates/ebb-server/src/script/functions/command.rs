//! FUNCTION and its subcommands: LOAD, DELETE, LIST, FLUSH, DUMP,
//! RESTORE, KILL, STATS, HELP.

use bytes::Bytes;
use ebb_core::functions::{dump_payload, Libraries};
use ebb_core::Reply;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{checked_metadata, engine, FunctionDef, FLAG_NAMES, LOAD_TIMEOUT};
use crate::script::{convert, err, Guard};
use crate::server::{now_ms, Shared};

/// FUNCTION and its subcommands (arity is checked before they run).
pub fn function<'a>(shared: &'a Arc<Shared>, guard: &mut Guard<'a>, argv: &[&[u8]]) -> Reply {
    let sub = String::from_utf8_lossy(argv[1]).to_ascii_lowercase();
    let syntax = || Reply::from(ebb_core::error::subcommand_syntax(argv[1], "function"));
    match sub.as_str() {
        "load" => load(shared, guard, argv),
        "delete" => {
            let store = guard.get_or_insert_with(|| shared.lock_store());
            let mut slot = shared.scripting.functions.lock();
            let eng = match engine(&shared.scripting, &mut slot, &store.functions) {
                Ok(e) => e,
                Err(r) => return r,
            };
            if !store.functions.remove(argv[2]) {
                return err("ERR Library not found");
            }
            eng.unlink(argv[2]);
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
            let store = guard.get_or_insert_with(|| shared.lock_store());
            store.functions.clear();
            let mut slot = shared.scripting.functions.lock();
            let _ = engine(&shared.scripting, &mut slot, &store.functions);
            changed(shared, argv);
            Reply::Ok
        }
        "dump" => {
            let store = guard.get_or_insert_with(|| shared.lock_store());
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
        _ => ebb_core::error::unknown_subcommand(argv[1], "function").into(),
    }
}

/// After a change of the libraries: one more change for the save rules,
/// and the command in the append-only file.
fn changed(shared: &Shared, argv: &[&[u8]]) {
    shared.stats.dirty.fetch_add(1, Ordering::Relaxed);
    shared.log_raw(0, argv);
}

/// FUNCTION LOAD [REPLACE] code.
fn load<'a>(shared: &'a Arc<Shared>, guard: &mut Guard<'a>, argv: &[&[u8]]) -> Reply {
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
            convert::one_line(argv[i])
        ));
    }
    let code = &argv[argv.len() - 1];
    let md = match checked_metadata(code) {
        Ok(md) => md,
        Err(e) => return err(e),
    };
    let store = guard.get_or_insert_with(|| shared.lock_store());
    if !replace && store.functions.get(&md.name).is_some() {
        return err(format!(
            "ERR Library '{}' already exists",
            String::from_utf8_lossy(&md.name)
        ));
    }
    let scripting = &shared.scripting;
    let mut slot = scripting.functions.lock();
    let eng = match engine(&shared.scripting, &mut slot, &store.functions) {
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
    store
        .functions
        .insert(md.name.clone(), Bytes::copy_from_slice(code));
    eng.generation = store.functions.generation();
    scripting.note_functions(eng);
    changed(shared, argv);
    Reply::Bulk(md.name)
}

/// FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
fn restore<'a>(shared: &'a Arc<Shared>, guard: &mut Guard<'a>, argv: &[&[u8]]) -> Reply {
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
    let codes = match ebb_core::functions::parse_payload_checked(argv[2]) {
        Ok(c) => c,
        Err(e) => return err(e),
    };
    let store = guard.get_or_insert_with(|| shared.lock_store());
    let scripting = &shared.scripting;
    let mut slot = scripting.functions.lock();
    let eng = match engine(&shared.scripting, &mut slot, &store.functions) {
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
fn list_libraries<'a>(shared: &'a Arc<Shared>, guard: &mut Guard<'a>, argv: &[&[u8]]) -> Reply {
    let mut with_code = false;
    let mut pattern: Option<&[u8]> = None;
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
            pattern = Some(argv[i]);
        } else {
            return err(format!("ERR Unknown argument {}", convert::one_line(a)));
        }
        i += 1;
    }
    let store = guard.get_or_insert_with(|| shared.lock_store());
    let mut slot = shared.scripting.functions.lock();
    let eng = match engine(&shared.scripting, &mut slot, &store.functions) {
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
    let store = guard.get_or_insert_with(|| shared.lock_store());
    let mut slot = scripting.functions.lock();
    let (libraries, functions) = match engine(&shared.scripting, &mut slot, &store.functions) {
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
