//! Argument documentation of every command, as COMMAND DOCS reports it
//! (and as redis-cli turns it into the grey hints it shows while typing).
//!
//! Each command's arguments are written once, in a compact grammar kept in
//! [`crate::docs_table`], and parsed here into the tree COMMAND DOCS
//! returns. The grammar:
//!
//! - `name` is a string argument; `name:T` gives it a type: `key`, `int`
//!   (integer), `double`, `pattern` or `time` (unix-time). Keys are given
//!   key-spec indexes in order; a trailing number sets one explicitly, on a
//!   key (`key2:key0`) or on a pattern naming keys (`pattern:pattern1`).
//!   A colon followed by anything else is part of the name (`ip:port`).
//! - An upper-case word (`NX`, `WITHSCORES`, `LIB-NAME`) is a pure token;
//!   `""` is the empty string as a token.
//! - `[ … ]` is optional, `( … )` groups, `{ … }` forces a block even around
//!   one argument; `a|b|c` inside a group makes a one-of.
//! - Inside a group, a leading token binds to what follows it: `EX seconds`
//!   is the argument `seconds` introduced by `EX`; `LIMIT offset count` is a
//!   block introduced by `LIMIT`; `AGGREGATE (SUM|MIN|MAX)` a one-of.
//! - `…...` marks an argument that repeats; `…...+` one whose token repeats
//!   with it (`GET pattern [GET pattern ...]`).
//! - `name=` before a group or token names it (`condition=[NX|XX]`,
//!   `change=CH`); unnamed groups are named after their parts.

use crate::docs_table::DOCS;

/// The documentation entry of a command or subcommand (`container|sub`).
#[derive(Debug, Clone, Copy)]
pub struct CommandDoc {
    /// Lower-case name, `container|sub` for subcommands.
    pub name: &'static str,
    /// Version that introduced it.
    pub since: &'static str,
    /// Its argument grammar.
    pub grammar: &'static str,
    /// One-line summary (subcommands only; commands use their table entry).
    pub summary: &'static str,
}

impl CommandDoc {
    /// The parsed arguments (the grammar is checked by the tests, so a
    /// failure here yields no arguments rather than an error).
    pub fn args(&self) -> Vec<Arg> {
        parse(self.grammar).unwrap_or_default()
    }
}

fn entry(d: &(&'static str, &'static str, &'static str, &'static str)) -> CommandDoc {
    CommandDoc {
        name: d.0,
        since: d.1,
        grammar: d.2,
        summary: d.3,
    }
}

/// The entry of a command (lower-case name) or subcommand (`container|sub`).
pub fn lookup(name: &str) -> Option<CommandDoc> {
    DOCS.iter().find(|d| d.0 == name).map(entry)
}

/// The subcommands of a container command, in table order.
pub fn subcommands(container: &str) -> Vec<CommandDoc> {
    DOCS.iter()
        .filter(|d| d.0.split_once('|').is_some_and(|(c, _)| c == container))
        .map(entry)
        .collect()
}

/// The type of a documented argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    /// A key name.
    Key,
    /// Any string.
    String,
    /// An integer.
    Integer,
    /// A floating point number.
    Double,
    /// A glob-style pattern.
    Pattern,
    /// A Unix time.
    UnixTime,
    /// A keyword standing alone.
    PureToken,
    /// Exactly one of the nested arguments.
    Oneof,
    /// All of the nested arguments, in order.
    Block,
}

impl ArgType {
    /// The name COMMAND DOCS uses.
    pub fn as_str(self) -> &'static str {
        match self {
            ArgType::Key => "key",
            ArgType::String => "string",
            ArgType::Integer => "integer",
            ArgType::Double => "double",
            ArgType::Pattern => "pattern",
            ArgType::UnixTime => "unix-time",
            ArgType::PureToken => "pure-token",
            ArgType::Oneof => "oneof",
            ArgType::Block => "block",
        }
    }
}

/// One documented argument.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    /// Its name.
    pub name: String,
    /// Its type.
    pub kind: ArgType,
    /// For keys: the index of the key specification it belongs to.
    pub key_spec: Option<usize>,
    /// The keyword that introduces it, if any.
    pub token: Option<String>,
    /// May be left out.
    pub optional: bool,
    /// May repeat.
    pub multiple: bool,
    /// Repeats together with its token.
    pub multiple_token: bool,
    /// Nested arguments of a one-of or a block.
    pub args: Vec<Arg>,
}

impl Arg {
    fn new(name: &str, kind: ArgType) -> Arg {
        Arg {
            name: name.to_string(),
            kind,
            key_spec: None,
            token: None,
            optional: false,
            multiple: false,
            multiple_token: false,
            args: Vec::new(),
        }
    }
}

/// A parsed item and whether it is a bare token that may bind to what
/// follows it.
struct Item {
    arg: Arg,
    bare_token: bool,
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    next_key: usize,
}

/// Parses the compact grammar of one command's arguments.
pub fn parse(syntax: &str) -> Result<Vec<Arg>, String> {
    let mut p = Parser {
        s: syntax.as_bytes(),
        i: 0,
        next_key: 0,
    };
    let items = p.seq()?;
    p.skip_ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected `{}` at {}", p.s[p.i] as char, p.i));
    }
    Ok(items.into_iter().map(|it| it.arg).collect())
}

fn is_special(c: u8) -> bool {
    matches!(c, b'[' | b']' | b'(' | b')' | b'{' | b'}' | b'|' | b'=') || c.is_ascii_whitespace()
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// Items up to a closing bracket, a `|` or the end.
    fn seq(&mut self) -> Result<Vec<Item>, String> {
        let mut out = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None | Some(b']' | b')' | b'}' | b'|') => return Ok(out),
                _ => out.push(self.item()?),
            }
        }
    }

    fn word(&mut self) -> String {
        let start = self.i;
        while self.i < self.s.len() && !is_special(self.s[self.i]) {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    fn item(&mut self) -> Result<Item, String> {
        let mut name = None;
        let mut item = match self.peek() {
            Some(b'[' | b'(' | b'{') => self.group()?,
            _ => {
                let w = self.word();
                if w.is_empty() {
                    return Err(format!("empty word at {}", self.i));
                }
                if self.peek() == Some(b'=') {
                    self.i += 1;
                    name = Some(strip_repeat(&w).0.to_string());
                    match self.peek() {
                        Some(b'[' | b'(' | b'{') => self.group()?,
                        _ => {
                            let w2 = self.word();
                            self.simple(&w2)?
                        }
                    }
                } else {
                    self.simple(&w)?
                }
            }
        };
        if let Some(n) = name {
            item.arg.name = n;
            item.bare_token = false;
        }
        // A repeat mark after a closing bracket.
        if self.s[self.i..].starts_with(b"...") {
            self.i += 3;
            item.arg.multiple = true;
            if self.peek() == Some(b'+') {
                self.i += 1;
                item.arg.multiple_token = true;
            }
        }
        Ok(item)
    }

    /// A word: a pure token or a typed argument, with its repeat mark.
    fn simple(&mut self, w: &str) -> Result<Item, String> {
        let (w, multiple, multiple_token) = strip_repeat(w);
        if w == "\"\"" {
            // The empty string as a token (MIGRATE's key argument).
            let mut a = Arg::new("", ArgType::PureToken);
            a.token = Some(String::new());
            return Ok(Item {
                arg: a,
                bare_token: false,
            });
        }
        let is_token = w.bytes().any(|c| c.is_ascii_uppercase())
            && !w.bytes().any(|c| c.is_ascii_lowercase() || c == b':');
        let mut arg = if is_token {
            let mut a = Arg::new(&w.to_ascii_lowercase(), ArgType::PureToken);
            a.token = Some(w.to_string());
            a
        } else {
            let (name, kind, spec) = typed(w);
            let mut a = Arg::new(name, kind);
            if kind == ArgType::Key || spec.is_some() {
                let idx = spec.unwrap_or(self.next_key);
                self.next_key = self.next_key.max(idx + 1);
                a.key_spec = Some(idx);
            }
            a
        };
        arg.multiple = multiple;
        arg.multiple_token = multiple_token;
        Ok(Item {
            arg,
            bare_token: is_token && !multiple,
        })
    }

    fn group(&mut self) -> Result<Item, String> {
        let open = self.s[self.i];
        let close = match open {
            b'[' => b']',
            b'(' => b')',
            _ => b'}',
        };
        self.i += 1;
        let mut alts = vec![self.seq()?];
        while self.peek() == Some(b'|') {
            self.i += 1;
            alts.push(self.seq()?);
        }
        if self.peek() != Some(close) {
            return Err(format!("expected `{}` at {}", close as char, self.i));
        }
        self.i += 1;
        let mut arg = if alts.len() > 1 {
            let args: Vec<Arg> = alts
                .into_iter()
                .map(|seq| combine(seq, false))
                .collect::<Result<_, _>>()?;
            let mut a = Arg::new(&joined_name(&args), ArgType::Oneof);
            a.args = args;
            a
        } else {
            let seq = alts.pop().unwrap_or_default();
            combine(seq, open == b'{')?
        };
        if open == b'[' {
            arg.optional = true;
        }
        Ok(Item {
            arg,
            bare_token: false,
        })
    }
}

/// Splits a trailing `...` / `...+` off a word.
fn strip_repeat(w: &str) -> (&str, bool, bool) {
    if let Some(r) = w.strip_suffix("...+") {
        (r, true, true)
    } else if let Some(r) = w.strip_suffix("...") {
        (r, true, false)
    } else {
        (w, false, false)
    }
}

/// `name:type` → (name, type, explicit key-spec index).
fn typed(w: &str) -> (&str, ArgType, Option<usize>) {
    if let Some((name, t)) = w.rsplit_once(':') {
        let digits = t.len() - t.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (t, idx) = t.split_at(t.len() - digits);
        let kind = match t {
            "key" => Some(ArgType::Key),
            "int" => Some(ArgType::Integer),
            "double" => Some(ArgType::Double),
            "pattern" => Some(ArgType::Pattern),
            "time" => Some(ArgType::UnixTime),
            _ => None,
        };
        if let Some(k) = kind {
            return (name, k, idx.parse().ok());
        }
    }
    (w, ArgType::String, None)
}

fn joined_name(args: &[Arg]) -> String {
    args.iter()
        .map(|a| a.name.as_str())
        .collect::<Vec<_>>()
        .join("_")
}

/// Makes one argument of the items of a group (or of one alternative).
fn combine(mut seq: Vec<Item>, force_block: bool) -> Result<Arg, String> {
    if seq.is_empty() {
        return Err("empty group".into());
    }
    let token = if seq.len() > 1 && seq[0].bare_token {
        let t = seq.remove(0);
        t.arg.token
    } else {
        None
    };
    if seq.len() == 1 && !force_block && (token.is_none() || seq[0].arg.token.is_none()) {
        let mut a = seq.remove(0).arg;
        if token.is_some() {
            a.token = token;
        }
        return Ok(a);
    }
    let args: Vec<Arg> = seq.into_iter().map(|it| it.arg).collect();
    let mut a = Arg::new(&joined_name(&args), ArgType::Block);
    a.token = token;
    a.args = args;
    Ok(a)
}

/// The one-line syntax of an argument list, the way Redis's documentation
/// and redis-cli's hints write it.
pub fn render(args: &[Arg]) -> String {
    args.iter().map(render_arg).collect::<Vec<_>>().join(" ")
}

fn render_arg(a: &Arg) -> String {
    let body = match a.kind {
        ArgType::PureToken => String::new(),
        ArgType::Oneof => a.args.iter().map(render_arg).collect::<Vec<_>>().join("|"),
        ArgType::Block => render(&a.args),
        _ => a.name.clone(),
    };
    let mut s = match (&a.token, body.is_empty()) {
        (Some(t), true) if t.is_empty() => "\"\"".to_string(),
        (Some(t), true) => t.clone(),
        (Some(t), false) => format!("{t} {body}"),
        (None, _) => body.clone(),
    };
    if a.multiple {
        let again = if a.multiple_token { s.clone() } else { body };
        s = format!("{s} [{again} ...]");
    }
    if a.optional {
        s = format!("[{s}]");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_grammar_parses_into_redis_shape() {
        let args = parse(
            "key:key value condition=[NX|XX] [GET] expiration=[EX seconds:int|PX milliseconds:int|EXAT unix-time-seconds:time|PXAT unix-time-milliseconds:time|KEEPTTL]",
        )
        .expect("parses");
        assert_eq!(args.len(), 5);
        assert_eq!(args[0].kind, ArgType::Key);
        assert_eq!(args[0].key_spec, Some(0));
        assert_eq!(args[2].name, "condition");
        assert_eq!(args[2].kind, ArgType::Oneof);
        assert!(args[2].optional);
        assert_eq!(args[2].args[0].token.as_deref(), Some("NX"));
        assert_eq!(args[3].kind, ArgType::PureToken);
        assert_eq!(args[3].name, "get");
        let ex = &args[4].args[0];
        assert_eq!(
            (ex.name.as_str(), ex.kind, ex.token.as_deref()),
            ("seconds", ArgType::Integer, Some("EX"))
        );
        assert_eq!(
            render(&args),
            "key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|KEEPTTL]"
        );
    }

    #[test]
    fn blocks_tokens_and_repeats() {
        let args = parse(
            "destination:key numkeys:int key:key... [WEIGHTS weight:int...] aggregate=[AGGREGATE (SUM|MIN|MAX)] offset_count=[LIMIT offset:int count:int] [GET pattern:pattern...+] score_member=(score:double member)... id=[ID {client-id:int...}]",
        )
        .expect("parses");
        assert_eq!(args[2].key_spec, Some(1));
        assert!(args[2].multiple);
        assert_eq!(args[3].token.as_deref(), Some("WEIGHTS"));
        assert_eq!(args[4].kind, ArgType::Oneof);
        assert_eq!(args[4].token.as_deref(), Some("AGGREGATE"));
        assert_eq!(args[5].kind, ArgType::Block);
        assert_eq!(args[5].args.len(), 2);
        assert!(args[6].multiple_token);
        assert_eq!(args[7].kind, ArgType::Block);
        assert!(args[7].multiple && !args[7].optional);
        assert_eq!(args[8].kind, ArgType::Block);
        assert_eq!(args[8].args.len(), 1);
        assert_eq!(
            render(&args),
            "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [LIMIT offset count] [GET pattern [GET pattern ...]] score member [score member ...] [ID client-id [client-id ...]]"
        );
    }

    #[test]
    fn explicit_key_spec_and_colon_names() {
        let args = parse("key1:key key2:key0 filter=(ip:port|[ADDR ip:port])").expect("parses");
        assert_eq!(args[1].key_spec, Some(0));
        assert_eq!(args[2].args[0].name, "ip:port");
        assert_eq!(args[2].args[0].kind, ArgType::String);
    }

    #[test]
    fn every_command_has_a_parsable_entry_and_no_entry_is_orphaned() {
        let mut missing = Vec::new();
        for spec in crate::table::all() {
            if lookup(spec.name).is_none() {
                missing.push(spec.name);
            }
        }
        assert!(missing.is_empty(), "commands without docs: {missing:?}");
        for d in DOCS {
            let args = parse(d.2).unwrap_or_else(|e| panic!("{}: {e}", d.0));
            let top = d.0.split('|').next().unwrap_or_default();
            assert!(
                crate::table::lookup(top.as_bytes()).is_some(),
                "{} is not a command",
                d.0
            );
            assert_eq!(d.0.contains('|'), !d.3.is_empty(), "{}: summary", d.0);
            fn names_ok(args: &[Arg]) -> bool {
                args.iter().all(|a| !a.name.is_empty() && names_ok(&a.args))
            }
            assert!(names_ok(&args), "{}", d.0);
        }
        let mut seen = std::collections::HashSet::new();
        assert!(DOCS.iter().all(|d| seen.insert(d.0)), "duplicate entries");
    }

    #[test]
    fn own_commands_render_as_documented() {
        let r = |n: &str| render(&lookup(n).expect("entry").args());
        assert_eq!(
            r("zaddex"),
            "key [NX|XX] [GT|LT] [CH] [INCR] [KEEPTTL] [CAP count|LIMIT max] EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds score member [score member ...]"
        );
        assert_eq!(
            r("saddex"),
            "key [KEEPTTL] [LIMIT max] seconds member [member ...]"
        );
        assert_eq!(
            r("hexpire"),
            "key seconds [NX|XX|GT|LT] FIELDS numfields field [field ...]"
        );
        assert_eq!(
            r("client|list"),
            "[TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id [client-id ...]]"
        );
        assert_eq!(subcommands("object").len(), 5);
    }

    #[test]
    fn malformed_grammar_is_an_error() {
        assert!(parse("key [NX").is_err());
        assert!(parse("key ]").is_err());
        assert!(parse("()").is_err());
    }
}

#[cfg(test)]
mod doc_file {
    use super::*;

    /// Each row of docs/commands.md shows the command's rendered syntax.
    #[test]
    fn commands_md_shows_each_syntax() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/commands.md");
        let doc = std::fs::read_to_string(path).unwrap_or_default();
        let mut wrong = Vec::new();
        for spec in crate::table::all() {
            let Some(d) = lookup(spec.name) else { continue };
            let upper = spec.name.to_ascii_uppercase();
            let syntax = render(&d.args()).replace('|', "\\|");
            let want = if syntax.is_empty() {
                format!("| `{upper}` | `{upper}` |")
            } else {
                format!("| `{upper}` | `{upper} {syntax}` |")
            };
            if !doc.lines().any(|l| l.starts_with(&want)) {
                wrong.push(want);
            }
        }
        assert!(
            wrong.is_empty(),
            "rows to fix in docs/commands.md: {wrong:#?}"
        );
    }
}
