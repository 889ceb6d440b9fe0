//! What COMMAND INFO and COMMAND GETKEYSANDFLAGS report beyond the command
//! table: each command's key specifications (how to find its keys and what
//! it does to each), its tips for cluster clients, and the arity, flags and
//! key positions of every subcommand. The values are Redis 7.0's for the
//! commands it has, and written in the same terms for ebb's own.
//!
//! A key specification is written `flags:begin:find`, several joined by `;`:
//!
//! - `flags`: space-separated (`RO access`, `RW insert`, `OW update`, …);
//! - `begin`: `iN`, the first key is argument N; `kWORD,S`, the argument
//!   after the keyword WORD, searched for from argument S (from the end
//!   when negative, backwards); `u`, unknown;
//! - `find`: `rL,S,M`, a range (last key L relative to the first, or from
//!   the end when negative, step S, limit M); `nI,F,S`, a key count at I
//!   (relative to the begin position), the first key at F, step S; `u`,
//!   unknown.

/// Where the search for a specification's keys begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Begin {
    /// At this argument.
    Index(i64),
    /// After this keyword, searched for from `startfrom` (from the end,
    /// backwards, when negative).
    Keyword {
        keyword: &'static str,
        startfrom: i64,
    },
    /// Not known from the arguments' positions alone.
    Unknown,
}

/// How the keys are found from where the search begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Find {
    /// Keys up to `last` (from the end when negative), `step` apart;
    /// `limit` > 1 with `last` = -1 takes a 1/limit share of what remains.
    Range { last: i64, step: i64, limit: i64 },
    /// The argument at `index` counts the keys; the first is at `first`,
    /// then every `step`.
    KeyNum { index: i64, first: i64, step: i64 },
    /// Not known.
    Unknown,
}

/// One key specification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySpec {
    pub flags: Vec<&'static str>,
    pub begin: Begin,
    pub find: Find,
}

/// Everything COMMAND INFO reports of a subcommand.
#[derive(Debug, Clone, Copy)]
pub struct SubInfo {
    /// `container|sub`.
    pub name: &'static str,
    pub arity: i32,
    /// Space-separated flags, in Redis's order.
    pub flags: &'static str,
    pub first_key: i32,
    pub last_key: i32,
    pub step: i32,
    /// Space-separated tips.
    pub tips: &'static str,
}

impl SubInfo {
    /// Its key specifications.
    pub fn key_specs(&self) -> Vec<KeySpec> {
        specs_of(self.name).to_vec()
    }
}

fn number(s: &str) -> Option<i64> {
    s.parse().ok()
}

fn numbers3(s: &str) -> Option<(i64, i64, i64)> {
    let mut it = s.split(',').map(number);
    let out = (it.next()??, it.next()??, it.next()??);
    it.next().is_none().then_some(out)
}

fn parse_one(text: &'static str) -> Option<KeySpec> {
    let mut parts = text.split(':');
    let flags = parts.next()?.split_ascii_whitespace().collect();
    let begin = match parts.next()? {
        "u" => Begin::Unknown,
        b if b.starts_with('k') => {
            let (keyword, from) = b[1..].split_once(',')?;
            Begin::Keyword {
                keyword,
                startfrom: number(from)?,
            }
        }
        b => Begin::Index(number(b.strip_prefix('i')?)?),
    };
    let find = match parts.next()? {
        "u" => Find::Unknown,
        f if f.starts_with('r') => {
            let (last, step, limit) = numbers3(&f[1..])?;
            Find::Range { last, step, limit }
        }
        f if f.starts_with('n') => {
            let (index, first, step) = numbers3(&f[1..])?;
            Find::KeyNum { index, first, step }
        }
        _ => return None,
    };
    parts
        .next()
        .is_none()
        .then_some(KeySpec { flags, begin, find })
}

/// Parses a table entry (checked whole by the tests; a malformed part is
/// left out).
fn parse(text: &'static str) -> Vec<KeySpec> {
    if text.is_empty() {
        return Vec::new();
    }
    text.split(';').filter_map(parse_one).collect()
}

/// The key specifications of a command (lower-case name).
pub fn key_specs(name: &str) -> Vec<KeySpec> {
    specs_of(name).to_vec()
}

/// The key specifications of a command or subcommand (`container|sub`),
/// parsed once (ACL checks read them on every command of a user with key
/// patterns).
fn specs_of(name: &str) -> &'static [KeySpec] {
    static PARSED: std::sync::OnceLock<std::collections::HashMap<&'static str, Vec<KeySpec>>> =
        std::sync::OnceLock::new();
    PARSED
        .get_or_init(|| {
            let commands = COMMANDS.iter().map(|c| (c.0, parse(c.2)));
            let subs = SUBCOMMANDS.iter().map(|s| (s.0, parse(s.5)));
            commands.chain(subs).collect()
        })
        .get(name)
        .map_or(&[], Vec::as_slice)
}

/// The note Redis 7.0 gives key specification `index` of command `name`,
/// if any (COMMAND INFO reports it first).
pub fn notes(name: &str, index: usize) -> Option<&'static str> {
    const WORST_RW: &str =
        "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE";
    const WORST_RO: &str =
        "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS";
    const BY_GET: &str = "For the optional BY/GET keyword. It is marked 'unknown' because the \
                          key names derive from the content of the key we sort";
    Some(match (name, index) {
        ("set", 0) => "RW and ACCESS due to the optional `GET` argument",
        ("getex", 0) => "RW and UPDATE because it changes the TTL",
        ("bitfield", 0) => "This command allows both access and modification of the key",
        ("eval" | "fcall", 0) => WORST_RW,
        ("eval_ro" | "fcall_ro", 0) => WORST_RO,
        ("sort" | "sort_ro", 1) => BY_GET,
        ("sort", 2) => {
            "For the optional STORE keyword. It is marked 'unknown' because the keyword can \
             appear anywhere in the argument array"
        }
        _ => return None,
    })
}

/// The tips of a command (lower-case name), space-separated.
pub fn tips(name: &str) -> &'static str {
    COMMANDS.iter().find(|c| c.0 == name).map_or("", |c| c.1)
}

/// A subcommand's entry (`container|sub`, lower case).
pub fn subcommand(name: &str) -> Option<SubInfo> {
    SUBCOMMANDS.iter().find(|s| s.0 == name).map(|s| SubInfo {
        name: s.0,
        arity: s.1,
        flags: s.2,
        first_key: s.3 .0,
        last_key: s.3 .1,
        step: s.3 .2,
        tips: s.4,
    })
}

/// Where a specification's keys begin in `argv`: `None` when that is not
/// known from the arguments, `Some(None)` when its keyword is not there.
/// A keyword is searched for as Redis does, forwards from a positive
/// start, backwards from a negative one (counted from the end).
fn begin_at(spec: &KeySpec, argv: &[&[u8]]) -> Option<Option<i64>> {
    let argc = argv.len() as i64;
    match spec.begin {
        Begin::Index(i) => Some(Some(i)),
        Begin::Unknown => None,
        Begin::Keyword { keyword, startfrom } => {
            let (start, forwards) = if startfrom > 0 {
                (startfrom, true)
            } else {
                (argc + startfrom, false)
            };
            let mut i = start;
            while i >= 1 && i < argc {
                if argv[i as usize].eq_ignore_ascii_case(keyword.as_bytes()) {
                    return Some(Some(i + 1));
                }
                i += if forwards { 1 } else { -1 };
            }
            Some(None)
        }
    }
}

/// The argument positions a specification names in `argv` (the command's
/// name first), when its positions follow from the arguments alone.
pub fn positions(spec: &KeySpec, argv: &[&[u8]]) -> Option<Vec<usize>> {
    let argc = argv.len() as i64;
    let Some(start) = begin_at(spec, argv)? else {
        return Some(Vec::new());
    };
    if start >= argc {
        return Some(Vec::new());
    }
    let (first, last, step) = match spec.find {
        Find::Unknown => return None,
        Find::Range { last, step, limit } => {
            let end = if last >= 0 {
                start + last
            } else if limit > 1 {
                start + (argc - start) / limit - 1
            } else {
                argc + last
            };
            (start, end, step)
        }
        Find::KeyNum { index, first, step } => {
            let count = std::str::from_utf8(argv.get((start + index) as usize)?)
                .ok()?
                .parse::<i64>()
                .ok()?;
            let first = start + first;
            (first, first + (count - 1) * step, step)
        }
    };
    if step <= 0 || first < 0 {
        return None;
    }
    Some(
        (first..=last.min(argc - 1))
            .step_by(step as usize)
            .map(|i| i as usize)
            .collect(),
    )
}

/// The keys COMMAND GETKEYS finds from the key specifications of `name`
/// (a command, or `container|sub`), as Redis 7.0 walks them: every
/// specification in order, each naming a range or a counted run of
/// arguments that must lie within `argv`. `None` when a specification
/// cannot be followed (its start or count is unknown, out of bounds or
/// not a count, or its flags vary with the arguments); the command's own
/// key finder then decides, as Redis falls back to its `getkeys_proc`.
pub fn positions_by_specs(name: &str, argv: &[&[u8]]) -> Option<Vec<usize>> {
    let specs = specs_of(name);
    let keys = |s: &&KeySpec| !s.flags.contains(&"not_key");
    if !specs.iter().any(|s| keys(&s)) || specs.iter().any(|s| s.flags.contains(&"variable_flags"))
    {
        return None;
    }
    let argc = argv.len() as i64;
    let mut out = Vec::new();
    for spec in specs.iter().filter(keys) {
        let Some(start) = begin_at(spec, argv)? else {
            // Its keyword is not there: it names no key.
            continue;
        };
        let (first, last, step) = match spec.find {
            Find::Unknown => return None,
            Find::Range { last, step, limit } => {
                let end = if last >= 0 {
                    start.checked_add(last)?
                } else if limit == 0 {
                    argc + last
                } else {
                    start + (argc - start) / limit + last
                };
                (start, end, step)
            }
            Find::KeyNum { index, first, step } => {
                if index >= argc {
                    return None;
                }
                let at = usize::try_from(start.checked_add(index)?).ok()?;
                let count = std::str::from_utf8(argv.get(at)?)
                    .ok()?
                    .parse::<i64>()
                    .ok()
                    .filter(|n| *n >= 0)?;
                let first = start.checked_add(first)?;
                (first, first.checked_add(count)? - 1, step)
            }
        };
        if last >= argc || last < first || first >= argc || step <= 0 || first < 1 {
            return None;
        }
        if spec.flags.contains(&"incomplete") {
            return None;
        }
        out.extend((first..=last).step_by(step as usize).map(|i| i as usize));
    }
    Some(out)
}

/// What a command does to the key at `pos` of `argv`, as COMMAND
/// GETKEYSANDFLAGS reports it: the flags of the specification that names
/// that position, refined where they depend on the arguments (SET with or
/// without GET, BITFIELD reading or writing).
pub fn flags_at(name: &str, argv: &[&[u8]], pos: usize) -> &'static [&'static str] {
    const RW_ACCESS_UPDATE: &[&str] = &["RW", "access", "update"];
    match name {
        // GET among the options (from the fourth argument: the value may
        // be the word `get`) makes SET read the key too.
        "set" if argv.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"get")) => {
            return RW_ACCESS_UPDATE
        }
        "set" => return &["OW", "update"],
        "bitfield" if bitfield_writes(argv) => return RW_ACCESS_UPDATE,
        "bitfield" => return &["RO", "access"],
        // Its second specification is incomplete: Redis takes MIGRATE's
        // keys from its own key finder, which flags each key alike.
        "migrate" => return &["RW", "access", "delete"],
        _ => {}
    }
    let mut specs = specs_of(name);
    if specs.is_empty() {
        // A container's keys are its subcommand's (MEMORY USAGE, OBJECT …).
        if let Some(sub) = argv.get(1) {
            let full = format!(
                "{name}|{}",
                String::from_utf8_lossy(sub).to_ascii_lowercase()
            );
            specs = specs_of(&full);
        }
    }
    let chosen = match specs {
        [only] => Some(only),
        _ => specs
            .iter()
            .find(|s| positions(s, argv).is_some_and(|p| p.contains(&pos)))
            // Keys no specification can place (SORT's STORE target) take
            // the last specification whose search is unknown.
            .or_else(|| specs.iter().rev().find(|s| s.begin == Begin::Unknown))
            .or_else(|| specs.first()),
    };
    chosen.map_or(&[], |s| s.flags.as_slice())
}

/// Whether BITFIELD may write: its operations, read as Redis reads them
/// for key flags, include a SET or INCRBY, or something it cannot place
/// (then it is taken to write, the safer guess).
fn bitfield_writes(argv: &[&[u8]]) -> bool {
    let mut i = 2;
    while i < argv.len() {
        let left = argv.len() - i - 1;
        let a = argv[i];
        if a.eq_ignore_ascii_case(b"get") && left >= 2 {
            i += 3;
        } else if a.eq_ignore_ascii_case(b"overflow") && left >= 1 {
            i += 2;
        } else {
            // SET or INCRBY with their arguments, or a syntax error.
            return true;
        }
    }
    false
}

// The tables: `(name, tips, key specs)` for commands, `(name, arity,
// flags, (first, last, step), tips, key specs)` for subcommands, sorted by
// name.
#[rustfmt::skip]
pub(crate) const COMMANDS: &[(&str, &str, &str)] = &[
    ("append", "", "RW insert:i1:r0,1,0"),
    ("bitcount", "", "RO access:i1:r0,1,0"),
    ("bitfield", "", "RW access update variable_flags:i1:r0,1,0"),
    ("bitfield_ro", "", "RO access:i1:r0,1,0"),
    ("bitop", "", "OW update:i2:r0,1,0;RO access:i3:r-1,1,0"),
    ("bitpos", "", "RO access:i1:r0,1,0"),
    ("blmove", "", "RW access delete:i1:r0,1,0;RW insert:i2:r0,1,0"),
    ("blmpop", "", "RW access delete:i2:n0,1,1"),
    ("blpop", "", "RW access delete:i1:r-2,1,0"),
    ("brpop", "", "RW access delete:i1:r-2,1,0"),
    ("brpoplpush", "", "RW access delete:i1:r0,1,0;RW insert:i2:r0,1,0"),
    ("bzmpop", "", "RW access delete:i2:n0,1,1"),
    ("bzpopmax", "", "RW access delete:i1:r-2,1,0"),
    ("bzpopmin", "", "RW access delete:i1:r-2,1,0"),
    ("cl.throttle", "", "RW access update:i1:r0,1,0"),
    ("command", "nondeterministic_output_order", ""),
    ("copy", "", "RO access:i1:r0,1,0;OW update:i2:r0,1,0"),
    ("dbsize", "request_policy:all_shards response_policy:agg_sum", ""),
    ("decr", "", "RW access update:i1:r0,1,0"),
    ("decrby", "", "RW access update:i1:r0,1,0"),
    ("del", "request_policy:multi_shard response_policy:agg_sum", "RM delete:i1:r-1,1,0"),
    ("dump", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("eval", "", "RW access update:i2:n0,1,1"),
    ("eval_ro", "", "RO access:i2:n0,1,1"),
    ("evalsha", "", "RW access update:i2:n0,1,1"),
    ("evalsha_ro", "", "RO access:i2:n0,1,1"),
    ("exists", "request_policy:multi_shard response_policy:agg_sum", "RO:i1:r-1,1,0"),
    ("expire", "", "RW update:i1:r0,1,0"),
    ("expireat", "", "RW update:i1:r0,1,0"),
    ("expiremember", "", "RW update:i1:r0,1,0"),
    ("expirememberat", "", "RW update:i1:r0,1,0"),
    ("expiretime", "", "RO access:i1:r0,1,0"),
    ("fcall", "", "RW access update:i2:n0,1,1"),
    ("fcall_ro", "", "RO access:i2:n0,1,1"),
    ("fieldexpire", "", "RW update:i1:r0,1,0"),
    ("fieldttl", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("flushall", "request_policy:all_shards response_policy:all_succeeded", ""),
    ("flushdb", "request_policy:all_shards response_policy:all_succeeded", ""),
    ("get", "", "RO access:i1:r0,1,0"),
    ("getbit", "", "RO access:i1:r0,1,0"),
    ("getdel", "", "RW access delete:i1:r0,1,0"),
    ("getex", "", "RW access update:i1:r0,1,0"),
    ("getrange", "", "RO access:i1:r0,1,0"),
    ("getset", "", "RW access update:i1:r0,1,0"),
    ("hdel", "", "RW delete:i1:r0,1,0"),
    ("hexists", "", "RO:i1:r0,1,0"),
    ("hexpire", "", "RW update:i1:r0,1,0"),
    ("hexpireat", "", "RW update:i1:r0,1,0"),
    ("hexpiretime", "", "RO access:i1:r0,1,0"),
    ("hget", "", "RO access:i1:r0,1,0"),
    ("hgetall", "nondeterministic_output_order", "RO access:i1:r0,1,0"),
    ("hgetdel", "", "RW access delete:i1:r0,1,0"),
    ("hgetex", "", "RW access update:i1:r0,1,0"),
    ("hincrby", "", "RW access update:i1:r0,1,0"),
    ("hincrbyfloat", "", "RW access update:i1:r0,1,0"),
    ("hkeys", "nondeterministic_output_order", "RO access:i1:r0,1,0"),
    ("hlen", "", "RO:i1:r0,1,0"),
    ("hmget", "", "RO access:i1:r0,1,0"),
    ("hmset", "", "RW update:i1:r0,1,0"),
    ("hpersist", "", "RW update:i1:r0,1,0"),
    ("hpexpire", "", "RW update:i1:r0,1,0"),
    ("hpexpireat", "", "RW update:i1:r0,1,0"),
    ("hpexpiretime", "", "RO access:i1:r0,1,0"),
    ("hpttl", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("hrandfield", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("hscan", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("hset", "", "RW update:i1:r0,1,0"),
    ("hsetex", "", "RW update:i1:r0,1,0"),
    ("hsetnx", "", "RW insert:i1:r0,1,0"),
    ("hstrlen", "", "RO:i1:r0,1,0"),
    ("httl", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("hvals", "nondeterministic_output_order", "RO access:i1:r0,1,0"),
    ("incr", "", "RW access update:i1:r0,1,0"),
    ("incrby", "", "RW access update:i1:r0,1,0"),
    ("incrbyfloat", "", "RW access update:i1:r0,1,0"),
    ("info", "nondeterministic_output request_policy:all_shards response_policy:special", ""),
    ("keys", "request_policy:all_shards nondeterministic_output_order", ""),
    ("lastsave", "nondeterministic_output", ""),
    ("lcs", "", "RO access:i1:r1,1,0"),
    ("lindex", "", "RO access:i1:r0,1,0"),
    ("linsert", "", "RW insert:i1:r0,1,0"),
    ("llen", "", "RO:i1:r0,1,0"),
    ("lmove", "", "RW access delete:i1:r0,1,0;RW insert:i2:r0,1,0"),
    ("lmpop", "", "RW access delete:i1:n0,1,1"),
    ("lpop", "", "RW access delete:i1:r0,1,0"),
    ("lpos", "", "RO access:i1:r0,1,0"),
    ("lpush", "", "RW insert:i1:r0,1,0"),
    ("lpushx", "", "RW insert:i1:r0,1,0"),
    ("lrange", "", "RO access:i1:r0,1,0"),
    ("lrem", "", "RW delete:i1:r0,1,0"),
    ("lset", "", "RW update:i1:r0,1,0"),
    ("ltrim", "", "RW delete:i1:r0,1,0"),
    ("mget", "request_policy:multi_shard", "RO access:i1:r-1,1,0"),
    ("migrate", "nondeterministic_output", "RW access delete:i3:r0,1,0;RW access delete incomplete:kKEYS,-2:r-1,1,0"),
    ("move", "", "RW access update:i1:r0,1,0"),
    ("mset", "request_policy:multi_shard response_policy:all_succeeded", "OW update:i1:r-1,2,0"),
    ("msetnx", "request_policy:multi_shard response_policy:agg_min", "OW insert:i1:r-1,2,0"),
    ("persist", "", "RW update:i1:r0,1,0"),
    ("pexpire", "", "RW update:i1:r0,1,0"),
    ("pexpireat", "", "RW update:i1:r0,1,0"),
    ("pexpirememberat", "", "RW update:i1:r0,1,0"),
    ("pexpiretime", "", "RO access:i1:r0,1,0"),
    ("ping", "request_policy:all_shards response_policy:all_succeeded", ""),
    ("psetex", "", "OW update:i1:r0,1,0"),
    ("pttl", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("randomkey", "request_policy:all_shards nondeterministic_output", ""),
    ("rename", "", "RW access delete:i1:r0,1,0;OW update:i2:r0,1,0"),
    ("renamenx", "", "RW access delete:i1:r0,1,0;OW insert:i2:r0,1,0"),
    ("restore", "", "OW update:i1:r0,1,0"),
    ("restore-asking", "", "OW update:i1:r0,1,0"),
    ("rpop", "", "RW access delete:i1:r0,1,0"),
    ("rpoplpush", "", "RW access delete:i1:r0,1,0;RW insert:i2:r0,1,0"),
    ("rpush", "", "RW insert:i1:r0,1,0"),
    ("rpushx", "", "RW insert:i1:r0,1,0"),
    ("sadd", "", "RW insert:i1:r0,1,0"),
    ("saddex", "", "RW insert:i1:r0,1,0"),
    ("scan", "nondeterministic_output request_policy:special", ""),
    ("scard", "", "RO:i1:r0,1,0"),
    ("sdiff", "nondeterministic_output_order", "RO access:i1:r-1,1,0"),
    ("sdiffstore", "", "OW update:i1:r0,1,0;RO access:i2:r-1,1,0"),
    ("set", "", "RW access update variable_flags:i1:r0,1,0"),
    ("setbit", "", "RW access update:i1:r0,1,0"),
    ("setex", "", "OW update:i1:r0,1,0"),
    ("setnx", "", "OW insert:i1:r0,1,0"),
    ("setrange", "", "RW update:i1:r0,1,0"),
    ("sexpire", "", "RW update:i1:r0,1,0"),
    ("sexpireat", "", "RW update:i1:r0,1,0"),
    ("sexpiretime", "", "RO access:i1:r0,1,0"),
    ("sinter", "nondeterministic_output_order", "RO access:i1:r-1,1,0"),
    ("sintercard", "", "RO access:i1:n0,1,1"),
    ("sinterstore", "", "RW update:i1:r0,1,0;RO access:i2:r-1,1,0"),
    ("sismember", "", "RO:i1:r0,1,0"),
    ("smembers", "nondeterministic_output_order", "RO access:i1:r0,1,0"),
    ("smismember", "", "RO access:i1:r0,1,0"),
    ("smove", "", "RW access delete:i1:r0,1,0;RW insert:i2:r0,1,0"),
    ("sort", "", "RO access:i1:r0,1,0;RO access:u:u;OW update:u:u"),
    ("sort_ro", "", "RO access:i1:r0,1,0;RO access:u:u"),
    ("spersist", "", "RW update:i1:r0,1,0"),
    ("spexpire", "", "RW update:i1:r0,1,0"),
    ("spexpireat", "", "RW update:i1:r0,1,0"),
    ("spexpiretime", "", "RO access:i1:r0,1,0"),
    ("spop", "nondeterministic_output", "RW access delete:i1:r0,1,0"),
    ("spttl", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("spublish", "", "not_key:i1:r0,1,0"),
    ("srandmember", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("srem", "", "RW delete:i1:r0,1,0"),
    ("sscan", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("ssubscribe", "", "not_key:i1:r-1,1,0"),
    ("strlen", "", "RO:i1:r0,1,0"),
    ("sttl", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("substr", "", "RO access:i1:r0,1,0"),
    ("sunion", "nondeterministic_output_order", "RO access:i1:r-1,1,0"),
    ("sunionstore", "", "OW update:i1:r0,1,0;RO access:i2:r-1,1,0"),
    ("sunsubscribe", "", "not_key:i1:r-1,1,0"),
    ("time", "nondeterministic_output", ""),
    ("touch", "request_policy:multi_shard response_policy:agg_sum", "RO:i1:r-1,1,0"),
    ("ttl", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("type", "", "RO:i1:r0,1,0"),
    ("unlink", "request_policy:multi_shard response_policy:agg_sum", "RM delete:i1:r-1,1,0"),
    ("wait", "request_policy:all_shards response_policy:agg_min", ""),
    ("watch", "", "RO:i1:r-1,1,0"),
    ("zadd", "", "RW update:i1:r0,1,0"),
    ("zaddex", "", "RW update:i1:r0,1,0"),
    ("zcard", "", "RO:i1:r0,1,0"),
    ("zcount", "", "RO access:i1:r0,1,0"),
    ("zdiff", "", "RO access:i1:n0,1,1"),
    ("zdiffstore", "", "OW update:i1:r0,1,0;RO access:i2:n0,1,1"),
    ("zexpire", "", "RW update:i1:r0,1,0"),
    ("zexpireat", "", "RW update:i1:r0,1,0"),
    ("zexpiretime", "", "RO access:i1:r0,1,0"),
    ("zincrby", "", "RW access update:i1:r0,1,0"),
    ("zinter", "", "RO access:i1:n0,1,1"),
    ("zintercard", "", "RO access:i1:n0,1,1"),
    ("zinterstore", "", "OW update:i1:r0,1,0;RO access:i2:n0,1,1"),
    ("zlexcount", "", "RO access:i1:r0,1,0"),
    ("zmpop", "", "RW access delete:i1:n0,1,1"),
    ("zmscore", "", "RO access:i1:r0,1,0"),
    ("zpersist", "", "RW update:i1:r0,1,0"),
    ("zpexpire", "", "RW update:i1:r0,1,0"),
    ("zpexpireat", "", "RW update:i1:r0,1,0"),
    ("zpexpiretime", "", "RO access:i1:r0,1,0"),
    ("zpopmax", "", "RW access delete:i1:r0,1,0"),
    ("zpopmin", "", "RW access delete:i1:r0,1,0"),
    ("zpttl", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("zrandmember", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("zrange", "", "RO access:i1:r0,1,0"),
    ("zrangebylex", "", "RO access:i1:r0,1,0"),
    ("zrangebyscore", "", "RO access:i1:r0,1,0"),
    ("zrangestore", "", "OW update:i1:r0,1,0;RO access:i2:r0,1,0"),
    ("zrank", "", "RO access:i1:r0,1,0"),
    ("zrem", "", "RW delete:i1:r0,1,0"),
    ("zremrangebylex", "", "RW delete:i1:r0,1,0"),
    ("zremrangebyrank", "", "RW delete:i1:r0,1,0"),
    ("zremrangebyscore", "", "RW delete:i1:r0,1,0"),
    ("zrevrange", "", "RO access:i1:r0,1,0"),
    ("zrevrangebylex", "", "RO access:i1:r0,1,0"),
    ("zrevrangebyscore", "", "RO access:i1:r0,1,0"),
    ("zrevrank", "", "RO access:i1:r0,1,0"),
    ("zscan", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("zscore", "", "RO access:i1:r0,1,0"),
    ("zttl", "nondeterministic_output", "RO access:i1:r0,1,0"),
    ("zunion", "", "RO access:i1:n0,1,1"),
    ("zunionstore", "", "OW update:i1:r0,1,0;RO access:i2:n0,1,1"),
];

/// `(name, arity, flags, (first, last, step), tips, key specs)`.
type SubRow = (
    &'static str,
    i32,
    &'static str,
    (i32, i32, i32),
    &'static str,
    &'static str,
);

#[rustfmt::skip]
pub(crate) const SUBCOMMANDS: &[SubRow] = &[
    ("acl|cat", -2, "noscript loading stale", (0, 0, 0), "", ""),
    ("acl|deluser", -3, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("acl|dryrun", -4, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("acl|genpass", -2, "noscript loading stale", (0, 0, 0), "", ""),
    ("acl|getuser", 3, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("acl|help", 2, "loading stale", (0, 0, 0), "", ""),
    ("acl|list", 2, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("acl|load", 2, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("acl|log", -2, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("acl|save", 2, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("acl|setuser", -3, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("acl|users", 2, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("acl|whoami", 2, "noscript loading stale", (0, 0, 0), "", ""),
    ("client|caching", 3, "noscript loading stale", (0, 0, 0), "", ""),
    ("client|getname", 2, "noscript loading stale", (0, 0, 0), "", ""),
    ("client|getredir", 2, "noscript loading stale", (0, 0, 0), "", ""),
    ("client|help", 2, "loading stale", (0, 0, 0), "", ""),
    ("client|id", 2, "noscript loading stale", (0, 0, 0), "", ""),
    ("client|info", 2, "noscript loading stale", (0, 0, 0), "nondeterministic_output", ""),
    ("client|kill", -3, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("client|list", -2, "admin noscript loading stale", (0, 0, 0), "nondeterministic_output", ""),
    ("client|no-evict", 3, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("client|pause", -3, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("client|reply", 3, "noscript loading stale", (0, 0, 0), "", ""),
    ("client|setinfo", 4, "noscript loading stale", (0, 0, 0), "", ""),
    ("client|setname", 3, "noscript loading stale", (0, 0, 0), "", ""),
    ("client|tracking", -3, "noscript loading stale", (0, 0, 0), "", ""),
    ("client|trackinginfo", 2, "noscript loading stale", (0, 0, 0), "", ""),
    ("client|unblock", -3, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("client|unpause", 2, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("cluster|addslots", -3, "admin stale no_async_loading", (0, 0, 0), "", ""),
    ("cluster|addslotsrange", -4, "admin stale no_async_loading", (0, 0, 0), "", ""),
    ("cluster|bumpepoch", 2, "admin stale no_async_loading", (0, 0, 0), "nondeterministic_output", ""),
    ("cluster|count-failure-reports", 3, "admin stale", (0, 0, 0), "nondeterministic_output", ""),
    ("cluster|countkeysinslot", 3, "stale", (0, 0, 0), "", ""),
    ("cluster|delslots", -3, "admin stale no_async_loading", (0, 0, 0), "", ""),
    ("cluster|delslotsrange", -4, "admin stale no_async_loading", (0, 0, 0), "", ""),
    ("cluster|failover", -2, "admin stale no_async_loading", (0, 0, 0), "", ""),
    ("cluster|flushslots", 2, "admin stale no_async_loading", (0, 0, 0), "", ""),
    ("cluster|forget", 3, "admin stale no_async_loading", (0, 0, 0), "", ""),
    ("cluster|getkeysinslot", 4, "stale", (0, 0, 0), "nondeterministic_output", ""),
    ("cluster|help", 2, "loading stale", (0, 0, 0), "", ""),
    ("cluster|info", 2, "stale", (0, 0, 0), "nondeterministic_output", ""),
    ("cluster|keyslot", 3, "stale", (0, 0, 0), "", ""),
    ("cluster|links", 2, "stale", (0, 0, 0), "nondeterministic_output", ""),
    ("cluster|meet", -4, "admin stale no_async_loading", (0, 0, 0), "", ""),
    ("cluster|myid", 2, "stale", (0, 0, 0), "", ""),
    ("cluster|nodes", 2, "stale", (0, 0, 0), "nondeterministic_output", ""),
    ("cluster|replicas", 3, "admin stale", (0, 0, 0), "nondeterministic_output", ""),
    ("cluster|replicate", 3, "admin stale no_async_loading", (0, 0, 0), "", ""),
    ("cluster|reset", -2, "admin noscript stale", (0, 0, 0), "", ""),
    ("cluster|saveconfig", 2, "admin stale no_async_loading", (0, 0, 0), "", ""),
    ("cluster|set-config-epoch", 3, "admin stale no_async_loading", (0, 0, 0), "", ""),
    ("cluster|setslot", -4, "admin stale no_async_loading", (0, 0, 0), "", ""),
    ("cluster|shards", 2, "stale", (0, 0, 0), "nondeterministic_output", ""),
    ("cluster|slaves", 3, "admin stale", (0, 0, 0), "nondeterministic_output", ""),
    ("cluster|slots", 2, "stale", (0, 0, 0), "nondeterministic_output", ""),
    ("command|count", 2, "loading stale", (0, 0, 0), "", ""),
    ("command|docs", -2, "loading stale", (0, 0, 0), "nondeterministic_output_order", ""),
    ("command|getkeys", -4, "loading stale", (0, 0, 0), "", ""),
    ("command|getkeysandflags", -4, "loading stale", (0, 0, 0), "", ""),
    ("command|help", 2, "loading stale", (0, 0, 0), "", ""),
    ("command|info", -2, "loading stale", (0, 0, 0), "nondeterministic_output_order", ""),
    ("command|list", -2, "loading stale", (0, 0, 0), "nondeterministic_output_order", ""),
    ("config|get", -3, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("config|help", 2, "loading stale", (0, 0, 0), "", ""),
    ("config|resetstat", 2, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("config|rewrite", 2, "admin noscript loading stale", (0, 0, 0), "", ""),
    ("config|set", -4, "admin noscript loading stale", (0, 0, 0), "request_policy:all_nodes response_policy:all_succeeded", ""),
    ("function|delete", 3, "write noscript", (0, 0, 0), "request_policy:all_shards response_policy:all_succeeded", ""),
    ("function|dump", 2, "noscript", (0, 0, 0), "", ""),
    ("function|flush", -2, "write noscript", (0, 0, 0), "request_policy:all_shards response_policy:all_succeeded", ""),
    ("function|help", 2, "loading stale", (0, 0, 0), "", ""),
    ("function|kill", 2, "noscript allow_busy", (0, 0, 0), "request_policy:all_shards response_policy:one_succeeded", ""),
    ("function|list", -2, "noscript", (0, 0, 0), "nondeterministic_output_order", ""),
    ("function|load", -3, "write denyoom noscript", (0, 0, 0), "request_policy:all_shards response_policy:all_succeeded", ""),
    ("function|restore", -3, "write denyoom noscript", (0, 0, 0), "request_policy:all_shards response_policy:all_succeeded", ""),
    ("function|stats", 2, "noscript allow_busy", (0, 0, 0), "nondeterministic_output request_policy:all_shards response_policy:special", ""),
    ("latency|doctor", 2, "admin noscript loading stale", (0, 0, 0), "nondeterministic_output request_policy:all_nodes response_policy:special", ""),
    ("latency|graph", 3, "admin noscript loading stale", (0, 0, 0), "nondeterministic_output request_policy:all_nodes response_policy:special", ""),
    ("latency|help", 2, "loading stale", (0, 0, 0), "", ""),
    ("latency|histogram", -2, "admin noscript loading stale", (0, 0, 0), "nondeterministic_output request_policy:all_nodes response_policy:special", ""),
    ("latency|history", 3, "admin noscript loading stale", (0, 0, 0), "nondeterministic_output request_policy:all_nodes response_policy:special", ""),
    ("latency|latest", 2, "admin noscript loading stale", (0, 0, 0), "nondeterministic_output request_policy:all_nodes response_policy:special", ""),
    ("latency|reset", -2, "admin noscript loading stale", (0, 0, 0), "request_policy:all_nodes response_policy:all_succeeded", ""),
    ("memory|doctor", 2, "", (0, 0, 0), "nondeterministic_output request_policy:all_shards response_policy:special", ""),
    ("memory|help", 2, "loading stale", (0, 0, 0), "", ""),
    ("memory|malloc-stats", 2, "", (0, 0, 0), "nondeterministic_output request_policy:all_shards response_policy:special", ""),
    ("memory|purge", 2, "", (0, 0, 0), "request_policy:all_shards response_policy:all_succeeded", ""),
    ("memory|stats", 2, "", (0, 0, 0), "nondeterministic_output request_policy:all_shards response_policy:special", ""),
    ("memory|usage", -3, "readonly", (2, 2, 1), "", "RO:i2:r0,1,0"),
    ("module|help", 2, "loading stale", (0, 0, 0), "", ""),
    ("module|list", 2, "admin noscript", (0, 0, 0), "nondeterministic_output_order", ""),
    ("module|load", -3, "admin noscript no_async_loading", (0, 0, 0), "", ""),
    ("module|loadex", -3, "admin noscript no_async_loading", (0, 0, 0), "", ""),
    ("module|unload", 3, "admin noscript no_async_loading", (0, 0, 0), "", ""),
    ("object|encoding", 3, "readonly", (2, 2, 1), "nondeterministic_output", "RO:i2:r0,1,0"),
    ("object|freq", 3, "readonly", (2, 2, 1), "nondeterministic_output", "RO:i2:r0,1,0"),
    ("object|help", 2, "loading stale", (0, 0, 0), "", ""),
    ("object|idletime", 3, "readonly", (2, 2, 1), "nondeterministic_output", "RO:i2:r0,1,0"),
    ("object|refcount", 3, "readonly", (2, 2, 1), "nondeterministic_output", "RO:i2:r0,1,0"),
    ("pubsub|channels", -2, "pubsub loading stale", (0, 0, 0), "", ""),
    ("pubsub|help", 2, "loading stale", (0, 0, 0), "", ""),
    ("pubsub|numpat", 2, "pubsub loading stale", (0, 0, 0), "", ""),
    ("pubsub|numsub", -2, "pubsub loading stale", (0, 0, 0), "", ""),
    ("pubsub|shardchannels", -2, "pubsub loading stale", (0, 0, 0), "", ""),
    ("pubsub|shardnumsub", -2, "pubsub loading stale", (0, 0, 0), "", ""),
    ("script|exists", -3, "noscript", (0, 0, 0), "request_policy:all_shards response_policy:agg_logical_and", ""),
    ("script|flush", -2, "noscript", (0, 0, 0), "request_policy:all_nodes response_policy:all_succeeded", ""),
    ("script|help", 2, "loading stale", (0, 0, 0), "", ""),
    ("script|kill", 2, "noscript allow_busy", (0, 0, 0), "request_policy:all_shards response_policy:one_succeeded", ""),
    ("script|load", 3, "noscript stale", (0, 0, 0), "request_policy:all_nodes response_policy:all_succeeded", ""),
    ("slowlog|get", -2, "admin loading stale", (0, 0, 0), "request_policy:all_nodes nondeterministic_output", ""),
    ("slowlog|help", 2, "loading stale", (0, 0, 0), "", ""),
    ("slowlog|len", 2, "admin loading stale", (0, 0, 0), "request_policy:all_nodes response_policy:agg_sum nondeterministic_output", ""),
    ("slowlog|reset", 2, "admin loading stale", (0, 0, 0), "request_policy:all_nodes response_policy:all_succeeded", ""),
];

#[cfg(test)]
#[path = "keyspecs_tests.rs"]
mod tests;
