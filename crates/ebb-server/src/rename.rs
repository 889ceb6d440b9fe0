//! `rename-command` from the configuration file: a command can be given
//! another name, or none (`rename-command FLUSHALL ""`), as operators do
//! to harden a server. Its old name is then unknown to clients, scripts
//! and transactions alike.

use ebb_core::CommandSpec;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

struct Renames {
    /// New lower-case name -> command.
    by_new: HashMap<String, &'static CommandSpec>,
    /// Original names no longer reachable.
    hidden: HashSet<&'static str>,
}

static RENAMES: OnceLock<Renames> = OnceLock::new();

/// Installs the renames of the configuration (once, at start). Errors are
/// Redis's start-up errors.
pub fn install(pairs: &[(String, String)]) -> Result<(), String> {
    if pairs.is_empty() {
        return Ok(());
    }
    let mut r = Renames {
        by_new: HashMap::new(),
        hidden: HashSet::new(),
    };
    for (old, new) in pairs {
        let Some(spec) = lookup_in(&r, old.as_bytes()) else {
            return Err(format!("No such command in rename-command: {old}"));
        };
        let new = new.to_ascii_lowercase();
        if !new.is_empty() && lookup_in(&r, new.as_bytes()).is_some() {
            return Err(format!("Target command name already exists: {new}"));
        }
        r.by_new.retain(|_, s| !std::ptr::eq(*s, spec));
        r.hidden.insert(spec.name);
        if !new.is_empty() {
            r.by_new.insert(new, spec);
        }
    }
    let _ = RENAMES.set(r);
    Ok(())
}

fn lookup_in(r: &Renames, name: &[u8]) -> Option<&'static CommandSpec> {
    let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
    if let Some(s) = r.by_new.get(&lower) {
        return Some(s);
    }
    ebb_core::lookup(name).filter(|s| !r.hidden.contains(s.name))
}

/// Whether any command was renamed.
pub fn active() -> bool {
    RENAMES.get().is_some()
}

/// The command a client names, under the renames in force.
pub fn lookup(name: &[u8]) -> Option<&'static CommandSpec> {
    match RENAMES.get() {
        None => ebb_core::lookup(name),
        Some(r) => lookup_in(r, name),
    }
}
