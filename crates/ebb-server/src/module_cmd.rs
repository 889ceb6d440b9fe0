//! MODULE, as a Redis 7.0 with no module loaded answers it. ebb is not
//! redis-server and cannot load Redis modules (its own module, in
//! crates/ebb-module, is one for redis-server): LIST is empty, every LOAD
//! and LOADEX fails as a load that fails in Redis does (an error pointing
//! to the log, and a warning there naming the path), and UNLOAD finds no
//! module of that name.
//!
//! `enable-module-command` guards LOAD, LOADEX and UNLOAD (not HELP and
//! LIST) as in Redis; the check runs with the other protected commands',
//! before the command (see `conn::dispatch`).

use ebb_core::Reply;

use crate::commands::eq;

/// Redis's reply to a load that failed, whatever the reason.
const LOAD_FAILED: &str = "ERR Error loading the extension. Please check the server logs.";

/// Whether the subcommand in a statistics slot (`module|load`, …) is one
/// `enable-module-command` guards: those that change which modules are
/// loaded.
pub fn is_protected(slot: usize) -> bool {
    matches!(
        crate::cmdstats::slot_name(slot),
        "module|load" | "module|loadex" | "module|unload"
    )
}

/// # Format
/// `MODULE HELP` → the subcommands, one line each;
/// `MODULE LIST` → an empty array (no module is loaded);
/// `MODULE LOAD path [arg …]` → `ERR Error loading the extension. Please
/// check the server logs.`;
/// `MODULE LOADEX path [CONFIG name value …] [ARGS arg …]` → the same
/// error, once its arguments read as Redis reads them;
/// `MODULE UNLOAD name` → `ERR Error unloading module: no such module with
/// that name`.
///
/// The arity of each subcommand is checked before (unknown subcommands
/// never get here).
pub fn module(argv: &[&[u8]]) -> Reply {
    let sub = argv[1];
    let n = argv.len();
    if eq(sub, "help") && n == 2 {
        Reply::help(&[
            "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "LIST",
            "    Return a list of loaded modules.",
            "LOAD <path> [<arg> ...]",
            "    Load a module library from <path>, passing to it any optional arguments.",
            "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
            "    Load a module library from <path>, while passing it module configurations and optional arguments.",
            "UNLOAD <name>",
            "    Unload a module.",
            "HELP",
            "    Prints this help.",
        ])
    } else if eq(sub, "load") && n >= 3 {
        load(argv[2])
    } else if eq(sub, "loadex") && n >= 3 {
        match loadex_syntax(&argv[3..]) {
            Ok(()) => load(argv[2]),
            Err(why) => {
                // Redis logs this at notice level and tries no load.
                tracing::info!("{why}");
                Reply::Error(LOAD_FAILED.into())
            }
        }
    } else if eq(sub, "unload") && n == 3 {
        Reply::Error("ERR Error unloading module: no such module with that name".into())
    } else if eq(sub, "list") && n == 2 {
        Reply::Array(Vec::new())
    } else {
        ebb_core::error::subcommand_syntax(sub, "module").into()
    }
}

/// A load: it always fails, with a warning naming the path.
fn load(path: &[u8]) -> Reply {
    tracing::warn!(
        "Module {} failed to load: ebb-server does not load Redis modules",
        printable(path)
    );
    Reply::Error(LOAD_FAILED.into())
}

/// Reads LOADEX's arguments after the path as Redis does: any number of
/// `CONFIG name value`, then optionally `ARGS` and everything after it
/// (the module's own arguments, not read). `Err` holds the line Redis
/// logs for the first thing it cannot read.
fn loadex_syntax(rest: &[&[u8]]) -> Result<(), String> {
    let mut i = 0;
    while i < rest.len() {
        if eq(rest[i], "config") {
            if i + 2 >= rest.len() {
                return Err("CONFIG specified without name value pair".into());
            }
            i += 3;
        } else if eq(rest[i], "args") {
            return Ok(());
        } else {
            return Err(format!(
                "Syntax Error from arguments to loadex around {}.",
                printable(rest[i])
            ));
        }
    }
    Ok(())
}

/// A client's bytes as one log line: invalid UTF-8 replaced, control
/// characters (a newline would start a line of its own) escaped.
fn printable(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for c in String::from_utf8_lossy(bytes).chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loadex(args: &[&str]) -> Result<(), String> {
        let v: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        loadex_syntax(&v)
    }

    #[test]
    fn loadex_arguments_read_as_redis_reads_them() {
        assert_eq!(loadex(&[]), Ok(()));
        assert_eq!(loadex(&["CONFIG", "a", "b"]), Ok(()));
        assert_eq!(loadex(&["config", "a", "b", "Config", "c", "d"]), Ok(()));
        assert_eq!(loadex(&["ARGS"]), Ok(()));
        assert_eq!(loadex(&["args", "x", "config", "whatever"]), Ok(()));
        assert_eq!(loadex(&["CONFIG", "a", "b", "ARGS", "1", "2"]), Ok(()));
        let no_pair = Err("CONFIG specified without name value pair".to_string());
        assert_eq!(loadex(&["CONFIG"]), no_pair);
        assert_eq!(loadex(&["CONFIG", "a"]), no_pair);
        assert_eq!(loadex(&["CONFIG", "a", "b", "CONFIG", "c"]), no_pair);
        assert_eq!(
            loadex(&["foo", "ARGS"]),
            Err("Syntax Error from arguments to loadex around foo.".to_string())
        );
        assert_eq!(
            loadex(&["CONFIG", "a", "b", "bar"]),
            Err("Syntax Error from arguments to loadex around bar.".to_string())
        );
    }

    #[test]
    fn logged_paths_stay_on_one_line() {
        assert_eq!(printable(b"/tmp/x.so"), "/tmp/x.so");
        assert_eq!(printable(b"a\nb\r"), "a\\nb\\r");
        assert_eq!(printable(b"\xff/x"), "\u{fffd}/x");
    }

    #[test]
    fn only_load_loadex_and_unload_are_protected() {
        use crate::cmdstats::sub_slot;
        for name in ["module|load", "module|loadex", "module|unload"] {
            assert!(sub_slot(name).is_some_and(is_protected), "{name}");
        }
        for name in ["module|help", "module|list", "config|set"] {
            assert!(sub_slot(name).is_some_and(|s| !is_protected(s)), "{name}");
        }
        for name in ["module", "debug"] {
            let spec = ebb_core::table::lookup(name.as_bytes()).expect(name);
            assert!(!is_protected(ebb_core::table::index_of(spec)), "{name}");
        }
    }
}
