//! The one command table: name, arity, flags, key positions and handler of
//! every command. COMMAND INFO/DOCS/GETKEYS and key extraction come from it.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::ctx::Ctx;
use crate::error::CmdResult;
use crate::reply::Reply;

/// A command handler in core: parses `argv` (name included), applies it.
pub type Handler = fn(&mut Ctx, &[&[u8]]) -> CmdResult<Reply>;

/// Extracts key positions for commands whose keys move (numkeys, …).
pub type KeyFinder = fn(&[&[u8]]) -> Vec<usize>;

/// Who executes a command.
#[derive(Clone, Copy)]
pub enum Exec {
    /// Pure keyspace semantics, run by [`crate::execute`].
    Core(Handler),
    /// Needs the connection or the server (SELECT, MULTI, SUBSCRIBE, CONFIG,
    /// blocking forms, …): the server dispatches it by name.
    Server,
}

/// One command's description.
#[derive(Clone, Copy)]
pub struct CommandSpec {
    /// Lower-case name.
    pub name: &'static str,
    /// Redis arity: exact if positive, minimum `-arity` if negative (name included).
    pub arity: i32,
    /// Space-separated Redis flags (`write readonly denyoom fast …`).
    pub flags: &'static str,
    /// The same flags as bits ([`flag`]), parsed once when the table is
    /// built so per-command checks compare no strings.
    pub flag_bits: u32,
    /// First key position (0 = none).
    pub first_key: i32,
    /// Last key position (-1 = last argument, -2 = …).
    pub last_key: i32,
    /// Step between keys.
    pub step: i32,
    /// Group for COMMAND DOCS (`string`, `list`, `generic`, …).
    pub group: &'static str,
    /// One-line summary for COMMAND DOCS.
    pub summary: &'static str,
    /// The handler.
    pub exec: Exec,
    /// Key finder for movable-key commands.
    pub keys: Option<KeyFinder>,
    /// The most arguments (name included) of a command with a minimum
    /// arity, 0 for none: Redis's fixed-arity commands that take one more
    /// optional argument here (`TTL key [member]`) still fail the arity
    /// check, even when queued in MULTI, with more.
    pub max_argc: usize,
}

impl CommandSpec {
    /// A core command.
    pub const fn core(
        name: &'static str,
        arity: i32,
        flags: &'static str,
        keys: (i32, i32, i32),
        group: &'static str,
        summary: &'static str,
        handler: Handler,
    ) -> CommandSpec {
        CommandSpec {
            name,
            arity,
            flags,
            flag_bits: flag_bits(flags),
            first_key: keys.0,
            last_key: keys.1,
            step: keys.2,
            group,
            summary,
            exec: Exec::Core(handler),
            keys: None,
            max_argc: 0,
        }
    }

    /// A command the server executes.
    pub const fn server(
        name: &'static str,
        arity: i32,
        flags: &'static str,
        keys: (i32, i32, i32),
        group: &'static str,
        summary: &'static str,
    ) -> CommandSpec {
        CommandSpec {
            name,
            arity,
            flags,
            flag_bits: flag_bits(flags),
            first_key: keys.0,
            last_key: keys.1,
            step: keys.2,
            group,
            summary,
            exec: Exec::Server,
            keys: None,
            max_argc: 0,
        }
    }

    /// The same spec with a key finder for movable keys.
    pub const fn with_keys(mut self, f: KeyFinder) -> CommandSpec {
        self.keys = Some(f);
        self
    }

    /// The same spec taking at most `n` arguments (name included).
    pub const fn with_max_argc(mut self, n: usize) -> CommandSpec {
        self.max_argc = n;
        self
    }

    /// Whether the spec has the given flag.
    pub fn has_flag(&self, flag: &str) -> bool {
        match FLAG_NAMES.iter().position(|&f| f == flag) {
            Some(i) => self.flag_bits & (1 << i) != 0,
            None => self.flags.split_ascii_whitespace().any(|f| f == flag),
        }
    }

    /// Whether the spec has the flag `bit` (one of the [`flag`] constants).
    pub fn has(&self, bit: u32) -> bool {
        self.flag_bits & bit != 0
    }

    /// Whether the command writes.
    pub fn is_write(&self) -> bool {
        self.has(flag::WRITE)
    }

    /// Whether `argc` (name included) satisfies the arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        let a = self.arity;
        if a >= 0 {
            argc == a as usize
        } else {
            argc >= (-a) as usize && (self.max_argc == 0 || argc <= self.max_argc)
        }
    }

    /// Positions of the keys in `argv`.
    pub fn key_positions(&self, argv: &[&[u8]]) -> Vec<usize> {
        match self.keys {
            Some(f) => f(argv),
            None => self.fixed_key_positions(argv.len()).collect(),
        }
    }

    /// Positions of the keys that `first_key`, `last_key` and `step`
    /// name in a request of `argc` arguments (none for movable-key
    /// commands, whose finder knows them).
    pub fn fixed_key_positions(&self, argc: usize) -> impl Iterator<Item = usize> {
        let argc = i32::try_from(argc).unwrap_or(i32::MAX);
        let first = if self.keys.is_some() {
            0
        } else {
            self.first_key
        };
        let last = if self.last_key < 0 {
            argc + self.last_key
        } else {
            self.last_key
        };
        let end = if first <= 0 { 0 } else { (last + 1).min(argc) };
        let first = first.max(1);
        (first..end.max(first))
            .step_by(self.step.max(1) as usize)
            .map(|i| i as usize)
    }
}

/// Flag names with a bit, in bit order (see [`flag`]).
const FLAG_NAMES: [&str; 9] = [
    "write",
    "readonly",
    "denyoom",
    "fast",
    "admin",
    "no_auth",
    "skip_slowlog",
    "blocking",
    "noscript",
];

/// Bits of [`CommandSpec::flag_bits`], for checks made on every command.
pub mod flag {
    /// `write`.
    pub const WRITE: u32 = 1 << 0;
    /// `readonly`.
    pub const READONLY: u32 = 1 << 1;
    /// `denyoom`.
    pub const DENYOOM: u32 = 1 << 2;
    /// `fast`.
    pub const FAST: u32 = 1 << 3;
    /// `admin`.
    pub const ADMIN: u32 = 1 << 4;
    /// `no_auth`.
    pub const NO_AUTH: u32 = 1 << 5;
    /// `skip_slowlog`.
    pub const SKIP_SLOWLOG: u32 = 1 << 6;
    /// `blocking`.
    pub const BLOCKING: u32 = 1 << 7;
    /// `noscript`.
    pub const NOSCRIPT: u32 = 1 << 8;
}

/// The bits of the known flags named in a space-separated flag list.
const fn flag_bits(flags: &str) -> u32 {
    let b = flags.as_bytes();
    let mut bits = 0;
    let mut start = 0;
    while start < b.len() {
        let mut end = start;
        while end < b.len() && b[end] != b' ' {
            end += 1;
        }
        let mut i = 0;
        while i < FLAG_NAMES.len() {
            let name = FLAG_NAMES[i].as_bytes();
            if name.len() == end - start {
                let mut j = 0;
                while j < name.len() && name[j] == b[start + j] {
                    j += 1;
                }
                if j == name.len() {
                    bits |= 1 << i;
                }
            }
            i += 1;
        }
        start = end + 1;
    }
    bits
}

fn all_specs() -> Vec<CommandSpec> {
    let mut v = Vec::new();
    for family in crate::cmd::FAMILIES {
        v.extend_from_slice(family);
    }
    v
}

struct Table {
    list: Vec<CommandSpec>,
    by_name: HashMap<&'static str, usize>,
}

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| {
        let list = all_specs();
        let by_name = list.iter().enumerate().map(|(i, s)| (s.name, i)).collect();
        Table { list, by_name }
    })
}

/// Looks a command up by name, ASCII case-insensitively, without allocating
/// for names of up to 32 bytes.
pub fn lookup(name: &[u8]) -> Option<&'static CommandSpec> {
    let mut buf = [0u8; 32];
    let t = table();
    if name.len() <= buf.len() {
        for (d, s) in buf.iter_mut().zip(name) {
            *d = s.to_ascii_lowercase();
        }
        let s = std::str::from_utf8(&buf[..name.len()]).ok()?;
        t.by_name.get(s).map(|&i| &t.list[i])
    } else {
        let s = String::from_utf8_lossy(name).to_ascii_lowercase();
        t.by_name.get(s.as_str()).map(|&i| &t.list[i])
    }
}

/// Every command, in table order.
pub fn all() -> &'static [CommandSpec] {
    &table().list
}

/// Redis 7.0's arity of a subcommand (`container|sub`, counting the
/// container's name), checked before the command runs as for any command.
pub fn subcommand_arity(full: &str) -> Option<i32> {
    match crate::keyspecs::subcommand(full) {
        Some(sub) => Some(sub.arity),
        None if full.contains('|') => Some(2),
        None => None,
    }
}

/// The position of a table entry in [`all`] (for per-command counters).
pub fn index_of(spec: &'static CommandSpec) -> usize {
    let list = &table().list;
    let base = list.as_ptr() as usize;
    let at = spec as *const CommandSpec as usize;
    let i = at.wrapping_sub(base) / std::mem::size_of::<CommandSpec>().max(1);
    if i < list.len() && std::ptr::eq(&list[i], spec) {
        i
    } else {
        list.iter().position(|s| std::ptr::eq(s, spec)).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fixed key positions follow first/last/step, stop at the last
    /// argument and give nothing for keyless commands.
    #[test]
    fn fixed_key_positions_follow_the_spec() {
        let at = |name: &str, argc: usize| {
            lookup(name.as_bytes())
                .map(|s| s.fixed_key_positions(argc).collect::<Vec<_>>())
                .unwrap_or_default()
        };
        assert_eq!(at("mset", 7), vec![1, 3, 5]);
        assert_eq!(at("mset", 6), vec![1, 3, 5]);
        assert_eq!(at("mget", 4), vec![1, 2, 3]);
        assert_eq!(at("get", 2), vec![1]);
        assert_eq!(at("ping", 2), Vec::<usize>::new());
        assert_eq!(at("rename", 3), vec![1, 2]);
        assert_eq!(at("zunion", 4), Vec::<usize>::new());
    }

    #[test]
    fn every_command_is_documented() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/commands.md");
        let doc = std::fs::read_to_string(path).unwrap_or_default();
        let missing: Vec<&str> = super::all()
            .iter()
            .map(|s| s.name)
            .filter(|n| !doc.contains(&format!("`{}`", n.to_ascii_uppercase())))
            .collect();
        assert!(
            missing.is_empty(),
            "missing from docs/commands.md: {missing:?}"
        );
    }

    #[test]
    fn flag_bits_agree_with_the_flag_lists() {
        for s in super::all() {
            for (i, name) in super::FLAG_NAMES.iter().enumerate() {
                let listed = s.flags.split_ascii_whitespace().any(|f| f == *name);
                assert_eq!(s.flag_bits & (1 << i) != 0, listed, "{} {}", s.name, name);
            }
        }
    }

    #[test]
    fn names_are_unique_and_lower_case() {
        let mut seen = std::collections::HashSet::new();
        for s in super::all() {
            assert_eq!(s.name, s.name.to_ascii_lowercase());
            assert!(seen.insert(s.name), "duplicate command {}", s.name);
        }
    }
}
