//! Every core command, fed random argument lists (its keywords, numbers at
//! the edges, garbage, colliding keys of every type), with random clock
//! jumps and sweeps in between, must reply (possibly with an error) and
//! never panic or hang; after each step the keyspace must stay consistent:
//! no empty collection stored, the key-TTL and member-deadline indexes
//! matching the values, deadlines only on existing members, sorted sets
//! ordered, and nothing due left after a full sweep.
//!
//! Each command gets its own run of cases, so a failure names the command
//! and, after shrinking, the exact argument list. `PROPTEST_CASES` scales
//! the number of cases per command.

use bytes::Bytes;
use ebb_core::db::Store;
use ebb_core::table::{all, CommandSpec, Exec};
use ebb_core::testing::Harness;
use ebb_core::value::Value;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

/// Cases per command when `PROPTEST_CASES` is not set.
const DEFAULT_CASES: u32 = 48;

/// A command running longer than this is reported as a hang.
const HANG_LIMIT: Duration = Duration::from_secs(30);

/// Keys the random setup fills with values of random types (the short
/// names are the ones the unit tests use, so harvested command lines hit
/// them), each with the type its name suggests more often than not.
const KEYS: &[(&str, u8)] = &[
    ("k", 0),
    ("l", 1),
    ("h", 2),
    ("s", 3),
    ("z", 4),
    ("a", 9),
    ("b", 9),
    ("k1", 9),
    ("k2", 9),
];

/// Keys created with a fixed type, so each type is always present.
const TYPED_KEYS: &[&str] = &["str", "list", "hash", "set", "zset"];

/// Member, field and value names used by the setup and the arguments.
const MEMBERS: &[&str] = &["m1", "m2", "f1", "f2", "a", "x", "1", "2", "-1", "3.5", ""];

/// Keywords of the commands (options, subcommands, units, types).
const KEYWORDS: &[&str] = &[
    "NX",
    "XX",
    "GT",
    "LT",
    "CH",
    "INCR",
    "KEEPTTL",
    "CAP",
    "LIMIT",
    "EX",
    "PX",
    "EXAT",
    "PXAT",
    "FIELDS",
    "MEMBERS",
    "WITHSCORES",
    "WITHVALUES",
    "BYSCORE",
    "BYLEX",
    "REV",
    "COUNT",
    "MATCH",
    "TYPE",
    "STORE",
    "BY",
    "GET",
    "ALPHA",
    "ASC",
    "DESC",
    "WEIGHTS",
    "AGGREGATE",
    "SUM",
    "MIN",
    "MAX",
    "LEFT",
    "RIGHT",
    "BEFORE",
    "AFTER",
    "RANK",
    "MAXLEN",
    "IDLETIME",
    "FREQ",
    "ENCODING",
    "REFCOUNT",
    "HELP",
    "USAGE",
    "SAMPLES",
    "PERSIST",
    "FNX",
    "FXX",
    "REPLACE",
    "DB",
    "ABSTTL",
    "IDX",
    "LEN",
    "MINMATCHLEN",
    "WITHMATCHLEN",
    "BYTE",
    "BIT",
    "OVERFLOW",
    "WRAP",
    "SAT",
    "FAIL",
    "SET",
    "INCRBY",
    "AND",
    "OR",
    "XOR",
    "NOT",
    "ASYNC",
    "SYNC",
    "NOVALUES",
    "S",
    "MS",
    "u8",
    "i64",
    "u63",
    "i1",
    "u0",
    "#0",
    "#1",
    "string",
    "list",
    "hash",
    "set",
    "zset",
];

/// Numbers at the edges and things that almost look like numbers.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "-1",
    "-2",
    "10",
    "100",
    "1000000",
    "-1000000",
    "2147483647",
    "2147483648",
    "4294967296",
    "70368744177663",
    "70368744177664",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "1.5",
    "-1.5",
    "0.1",
    "-0",
    "0.0",
    "1e10",
    "1e308",
    "1.7976931348623157e308",
    "1e400",
    "-1e400",
    "1e-400",
    "inf",
    "-inf",
    "+inf",
    "infinity",
    "nan",
    "-nan",
    "(1",
    "(-1",
    "(inf",
    "(-inf",
    "(nan",
    "[a",
    "(a",
    "[",
    "(",
    "-",
    "+",
    "0x10",
    "1_000",
    " 1",
    "1 ",
    "01",
    "+1",
    "",
];

/// Other strings: glob patterns and odd bytes.
const ODD: &[&str] = &[
    "*", "?", "[a-", "[^", "\\", "a*b", "*\\", "[", "]", "h*llo", "\u{0}", "\u{ff}", " ",
];

/// One value of the random setup: type, members (with or without a
/// deadline) and a key TTL.
#[derive(Debug, Clone)]
struct Seed {
    kind: u8,
    members: Vec<(usize, Option<u64>)>,
    ttl: Option<u64>,
}

fn seed(hint: u8) -> impl Strategy<Value = Option<Seed>> {
    let member = (0..MEMBERS.len(), prop::option::weighted(0.3, 1u64..200));
    let kind = if hint < 5 {
        prop_oneof![3 => Just(hint), 1 => 0u8..5].boxed()
    } else {
        (0u8..5).boxed()
    };
    prop::option::weighted(
        0.85,
        (
            kind,
            prop::collection::vec(member, 1..6),
            prop::option::weighted(0.2, 1u64..300),
        )
            .prop_map(|(kind, members, ttl)| Seed { kind, members, ttl }),
    )
}

/// Fills `key` with the value described by `s`, through the commands.
fn plant(h: &mut Harness, key: &str, s: &Seed) {
    let names: Vec<&str> = s.members.iter().map(|(i, _)| MEMBERS[*i]).collect();
    let mut cmd: Vec<String> = Vec::new();
    match s.kind {
        0 => {
            let v = names.concat();
            cmd.extend(["SET".into(), key.into(), v]);
        }
        1 => {
            cmd.extend(["RPUSH".into(), key.into()]);
            cmd.extend(names.iter().map(|n| n.to_string()));
        }
        2 => {
            cmd.extend(["HSET".into(), key.into()]);
            for (j, n) in names.iter().enumerate() {
                cmd.extend([n.to_string(), MEMBERS[j % MEMBERS.len()].to_string()]);
            }
        }
        3 => {
            cmd.extend(["SADD".into(), key.into()]);
            cmd.extend(names.iter().map(|n| n.to_string()));
        }
        _ => {
            cmd.extend(["ZADD".into(), key.into()]);
            for (j, n) in names.iter().enumerate() {
                cmd.extend([NUMBERS[j % 8].to_string(), n.to_string()]);
            }
        }
    }
    run_strs(h, &cmd);
    let ttl_cmd = match s.kind {
        2 => Some(("HPEXPIRE", "FIELDS")),
        3 => Some(("SPEXPIRE", "MEMBERS")),
        4 => Some(("ZPEXPIRE", "MEMBERS")),
        _ => None,
    };
    if let Some((name, word)) = ttl_cmd {
        for (i, ttl) in &s.members {
            if let Some(ms) = ttl {
                let ms = ms.to_string();
                run_strs(
                    h,
                    &[name, key, &ms, word, "1", MEMBERS[*i]].map(String::from),
                );
            }
        }
    }
    if let Some(ms) = s.ttl {
        run_strs(h, &["PEXPIRE".into(), key.into(), ms.to_string()]);
    }
}

fn run_strs(h: &mut Harness, cmd: &[String]) {
    let argv: Vec<Bytes> = cmd.iter().map(|s| Bytes::from(s.clone())).collect();
    h.run_bytes(&argv);
}

/// A fresh harness with a bounded `proto-max-bulk-len` (so a random offset
/// cannot make a command legitimately build half a gigabyte), one key of
/// each type, random values under [`KEYS`] in databases 0 and 1.
fn harness(seeds: &[Option<Seed>], resp3: bool) -> Harness {
    assert_eq!(seeds.len(), KEYS.len() * 2);
    let mut h = Harness::new();
    h.store.cfg.proto_max_bulk_len = 4 << 20;
    let fixed = [
        &["SET", "str", "12"][..],
        &["RPUSH", "list", "a", "b", "1"],
        &["HSET", "hash", "f1", "1", "f2", "x"],
        &["SADD", "set", "m1", "m2", "3"],
        &["ZADD", "zset", "1", "m1", "2", "m2", "inf", "m3"],
        &["SPEXPIRE", "set", "50", "MEMBERS", "1", "m1"],
        &["ZPEXPIRE", "zset", "30", "MEMBERS", "1", "m2"],
        &["HPEXPIRE", "hash", "40", "FIELDS", "1", "f2"],
    ];
    for cmd in fixed {
        h.run(cmd);
    }
    for (i, s) in seeds.iter().enumerate() {
        if let Some(s) = s {
            h.db = i / KEYS.len();
            plant(&mut h, KEYS[i % KEYS.len()].0, s);
        }
    }
    h.db = 0;
    h.resp3 = resp3;
    h
}

fn word(list: &'static [&'static str]) -> BoxedStrategy<Vec<u8>> {
    prop::sample::select(list)
        .prop_map(|w| w.as_bytes().to_vec())
        .boxed()
}

fn key() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        2 => prop::sample::select(KEYS).prop_map(|(k, _)| k.as_bytes().to_vec()),
        1 => word(TYPED_KEYS),
    ]
    .boxed()
}

/// One argument: a key, member, keyword, number or garbage.
fn arg() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        4 => key(),
        2 => word(TYPED_KEYS),
        3 => word(MEMBERS),
        6 => word(KEYWORDS),
        6 => word(NUMBERS),
        1 => word(ODD),
        1 => prop::collection::vec(any::<u8>(), 0..12),
        1 => any::<i64>().prop_map(|n| n.to_string().into_bytes()),
        1 => (-5i64..70).prop_map(|n| n.to_string().into_bytes()),
        1 => any::<f64>().prop_map(|f| f.to_string().into_bytes()),
    ]
    .boxed()
}

/// One edit of an argument list.
#[derive(Debug, Clone)]
enum Edit {
    Replace(prop::sample::Index, Vec<u8>),
    Insert(prop::sample::Index, Vec<u8>),
    Remove(prop::sample::Index),
    Duplicate(prop::sample::Index),
    Swap(prop::sample::Index, prop::sample::Index),
    Truncate(prop::sample::Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    use prop::sample::Index;
    prop_oneof![
        6 => (any::<Index>(), arg()).prop_map(|(i, a)| Edit::Replace(i, a)),
        2 => (any::<Index>(), arg()).prop_map(|(i, a)| Edit::Insert(i, a)),
        2 => any::<Index>().prop_map(Edit::Remove),
        1 => any::<Index>().prop_map(Edit::Duplicate),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(i, j)| Edit::Swap(i, j)),
        1 => any::<Index>().prop_map(Edit::Truncate),
    ]
}

fn apply(args: &mut Vec<Vec<u8>>, e: &Edit) {
    let n = args.len();
    match e {
        Edit::Insert(i, a) => args.insert(i.index(n + 1), a.clone()),
        _ if n == 0 => {}
        Edit::Replace(i, a) => args[i.index(n)] = a.clone(),
        Edit::Remove(i) => {
            args.remove(i.index(n));
        }
        Edit::Duplicate(i) => {
            let a = args[i.index(n)].clone();
            args.insert(i.index(n), a);
        }
        Edit::Swap(i, j) => args.swap(i.index(n), j.index(n)),
        Edit::Truncate(i) => args.truncate(i.index(n)),
    }
}

/// An argument list for `spec` (name excluded): a command line from the
/// unit tests, as is or edited, or a random list, usually of an accepted
/// length; where the command takes a key, often one of the setup's.
fn args_for(spec: &'static CommandSpec) -> BoxedStrategy<Vec<Vec<u8>>> {
    let min = (spec.arity.unsigned_abs() as usize).saturating_sub(1);
    let fitting = if spec.arity >= 0 {
        min..min + 1
    } else {
        min..min + 7
    };
    let takes_key = spec.first_key > 0 && spec.keys.is_none();
    let random = prop_oneof![
        4 => prop::collection::vec(arg(), fitting),
        1 => prop::collection::vec(arg(), 0..10),
    ];
    let examples = corpus()
        .get(&spec.name.to_ascii_uppercase())
        .cloned()
        .unwrap_or_default();
    let lists = if examples.is_empty() {
        random.boxed()
    } else {
        let harvested = (
            prop::sample::select(examples),
            prop_oneof![2 => Just(Vec::new()), 3 => prop::collection::vec(edit(), 1..4)],
        )
            .prop_map(|(mut args, edits)| {
                for e in &edits {
                    apply(&mut args, e);
                }
                args
            });
        prop_oneof![3 => harvested, 1 => random].boxed()
    };
    (lists, key(), any::<bool>())
        .prop_map(move |(mut args, key, keep)| {
            if takes_key && !keep {
                if let Some(first) = args.get_mut(spec.first_key as usize - 1) {
                    *first = key;
                }
            }
            args
        })
        .boxed()
}

/// Any command line of the corpus, to vary the state between steps.
fn any_example() -> BoxedStrategy<Vec<Vec<u8>>> {
    let mut all: Vec<Vec<Vec<u8>>> = Vec::new();
    for (name, lines) in corpus() {
        for l in lines {
            let mut v = vec![name.as_bytes().to_vec()];
            v.extend(l.iter().cloned());
            all.push(v);
        }
    }
    all.sort();
    prop::sample::select(all).boxed()
}

/// How far the clock moves after a step: not at all, a little, past the
/// member deadlines of the setup, or by hours.
fn jump() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => Just(0u64),
        3 => 1u64..100,
        2 => 100u64..400,
        1 => 3_600_000u64..100_000_000,
    ]
}

/// One step: the command under test with these arguments, or (`Other`)
/// a whole command line of the corpus, then a clock jump and maybe a sweep.
#[derive(Debug, Clone)]
enum Run {
    This(Vec<Vec<u8>>),
    Other(Vec<Vec<u8>>),
}

#[derive(Debug, Clone)]
struct Case {
    seeds: Vec<Option<Seed>>,
    resp3: bool,
    steps: Vec<(Run, u64, bool)>,
}

fn case_for(spec: &'static CommandSpec) -> impl Strategy<Value = Case> {
    let seeds: Vec<_> = KEYS
        .iter()
        .chain(KEYS)
        .map(|(_, hint)| seed(*hint))
        .collect();
    let run = prop_oneof![
        4 => args_for(spec).prop_map(Run::This),
        1 => any_example().prop_map(Run::Other),
    ];
    (
        seeds,
        any::<bool>(),
        prop::collection::vec((run, jump(), any::<bool>()), 1..6),
    )
        .prop_map(|(seeds, resp3, steps)| Case {
            seeds,
            resp3,
            steps,
        })
}

/// Command lines added to the harvested ones, for the grammars the unit
/// tests use least (the harness clock starts at 10^12 ms).
const EXTRA: &[&str] = &[
    "PING",
    "PING hello",
    "ECHO hello",
    "SEXPIRE s 10 NX MEMBERS 2 m1 a",
    "SEXPIREAT s 1000000001 XX MEMBERS 1 m1",
    "SEXPIREAT s 999999999 MEMBERS 2 m1 x",
    "SPEXPIREAT s 1000000000050 GT MEMBERS 1 a",
    "SEXPIRETIME s MEMBERS 2 m1 a",
    "SPEXPIRETIME s MEMBERS 1 m1",
    "SPTTL s MEMBERS 3 m1 a x",
    "STTL s MEMBERS 1 1",
    "SPERSIST s MEMBERS 2 m1 a",
    "ZEXPIRE z 10 LT MEMBERS 2 m1 a",
    "ZEXPIREAT z 1000000001 MEMBERS 2 m1 a",
    "ZEXPIREAT z 0 MEMBERS 1 m1",
    "ZPEXPIREAT z 1000000000050 NX MEMBERS 1 a",
    "ZEXPIRETIME z MEMBERS 2 m1 a",
    "ZPEXPIRETIME z MEMBERS 1 m1",
    "ZPTTL z MEMBERS 2 m1 x",
    "ZTTL z MEMBERS 1 a",
    "ZPERSIST z MEMBERS 1 m1",
    "HEXPIREAT h 1000000001 FIELDS 2 f1 a",
    "HPEXPIREAT h 1000000000050 XX FIELDS 1 f1",
    "HEXPIRETIME h FIELDS 2 f1 a",
    "HPEXPIRETIME h FIELDS 1 f1",
    "HPTTL h FIELDS 2 f1 x",
    "EXPIREMEMBER s m1 10",
    "EXPIREMEMBER z a 1500 ms",
    "EXPIREMEMBER h f1 -1 s",
    "EXPIREMEMBERAT h f1 1000000001",
    "PEXPIREMEMBERAT z m1 1000000000050",
    "FIELDEXPIRE s 10 m1 a",
    "FIELDTTL h f1",
    "TTL z m1",
    "PTTL s a",
    "PERSIST h f1",
    "SUBSTR k 0 -1",
    "SUBSTR k -3 100",
    "DECR k",
    "TOUCH a b k",
    "UNLINK a b",
    "RANDOMKEY",
    "DBSIZE",
    "GETDEL k",
    "LPUSH l a b 1",
    "RPUSHX l x",
    "PEXPIRE k 100 GT",
    "SINTERSTORE a s set",
    "ZRANGESTORE a z 0 -1",
    "ZRANGESTORE a z (1 +inf BYSCORE REV LIMIT 0 2",
];

/// Command lines harvested from the crate's own unit tests: every
/// `&["CMD", "arg", …]` array of string literals and every string literal
/// `"CMD arg …"` whose first word names a core command. Mutating these
/// reaches the deep paths that purely random arguments never get past the
/// parser to.
fn corpus() -> &'static HashMap<String, Vec<Vec<Vec<u8>>>> {
    static CORPUS: OnceLock<HashMap<String, Vec<Vec<Vec<u8>>>>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let names: HashSet<String> = core_specs()
            .iter()
            .map(|s| s.name.to_ascii_uppercase())
            .collect();
        let mut files = Vec::new();
        rust_files(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut files,
        );
        files.sort();
        let mut out: HashMap<String, Vec<Vec<Vec<u8>>>> = HashMap::new();
        let mut seen = HashSet::new();
        let mut lines: Vec<Vec<Vec<u8>>> = EXTRA
            .iter()
            .map(|l| l.split(' ').map(|w| w.as_bytes().to_vec()).collect())
            .collect();
        for f in files {
            if let Ok(text) = std::fs::read(&f) {
                lines.extend(command_lines(&text));
            }
        }
        for line in lines {
            let Some(first) = line.first() else {
                continue;
            };
            let name = String::from_utf8_lossy(first).to_ascii_uppercase();
            if names.contains(&name) && seen.insert(line.clone()) {
                out.entry(name).or_default().push(line[1..].to_vec());
            }
        }
        out
    })
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Reads one string literal starting after its opening quote; returns
/// its bytes and the index after the closing quote.
fn literal(src: &[u8], mut i: usize) -> Option<(Vec<u8>, usize)> {
    let mut v = Vec::new();
    while i < src.len() {
        match src[i] {
            b'"' => return Some((v, i + 1)),
            b'\\' => {
                let c = *src.get(i + 1)?;
                i += 2;
                match c {
                    b'n' => v.push(b'\n'),
                    b'r' => v.push(b'\r'),
                    b't' => v.push(b'\t'),
                    b'0' => v.push(0),
                    b'x' => {
                        let hex = std::str::from_utf8(src.get(i..i + 2)?).ok()?;
                        v.push(u8::from_str_radix(hex, 16).ok()?);
                        i += 2;
                    }
                    b'u' => {
                        let end = i + src[i..].iter().position(|&b| b == b'}')?;
                        let hex = std::str::from_utf8(src.get(i + 1..end)?).ok()?;
                        let ch = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                        v.extend_from_slice(ch.to_string().as_bytes());
                        i = end + 1;
                    }
                    b'\n' => {
                        while src.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
                            i += 1;
                        }
                    }
                    c => v.push(c),
                }
            }
            b => {
                v.push(b);
                i += 1;
            }
        }
    }
    None
}

/// The command lines found in one source file (see [`corpus`]).
fn command_lines(src: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < src.len() {
        if src[i..].starts_with(b"&[\"") {
            // An array of literals, up to its closing bracket.
            let mut j = i + 2;
            let mut items = Vec::new();
            let complete = loop {
                while src
                    .get(j)
                    .is_some_and(|b| b.is_ascii_whitespace() || *b == b',')
                {
                    j += 1;
                }
                match src.get(j) {
                    Some(b'"') => match literal(src, j + 1) {
                        Some((v, next)) => {
                            items.push(v);
                            j = next;
                        }
                        None => break false,
                    },
                    Some(b']') => break true,
                    _ => break false,
                }
            };
            if complete && !items.is_empty() {
                out.push(items);
            }
            i += 2;
        } else if src[i] == b'"' && (i == 0 || src[i - 1] != b'\'') {
            match literal(src, i + 1) {
                Some((v, next)) => {
                    if v.contains(&b' ') && !v.contains(&b'{') && !v.contains(&b'\n') {
                        out.push(
                            v.split(|&b| b == b' ')
                                .filter(|w| !w.is_empty())
                                .map(<[u8]>::to_vec)
                                .collect(),
                        );
                    }
                    i = next;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out
}

/// What the panic hook saw last (message and location).
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// The command in flight and when it started, for the hang watchdog.
static IN_FLIGHT: Mutex<Option<(Instant, String)>> = Mutex::new(None);

thread_local! {
    /// Whether this thread is inside [`guarded`].
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// Records panics inside [`guarded`] instead of printing them (shrinking repeats them), and
/// starts a watchdog that aborts the run, naming the command, if one
/// command runs for longer than [`HANG_LIMIT`].
fn install_hooks() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(Cell::get) {
                return default(info);
            }
            if let Ok(mut last) = LAST_PANIC.lock() {
                *last = Some(info.to_string());
            }
        }));
        std::thread::spawn(|| loop {
            std::thread::sleep(Duration::from_millis(500));
            let stuck = IN_FLIGHT
                .lock()
                .ok()
                .and_then(|g| g.as_ref().cloned())
                .filter(|(t, _)| t.elapsed() > HANG_LIMIT);
            if let Some((_, what)) = stuck {
                eprintln!("hang: {what} ran for more than {HANG_LIMIT:?}");
                std::process::abort();
            }
        });
    });
}

fn show(argv: &[Bytes]) -> String {
    let parts: Vec<String> = argv
        .iter()
        .map(|a| format!("\"{}\"", a.escape_ascii()))
        .collect();
    parts.join(" ")
}

/// Runs `f` with the watchdog armed; a panic becomes a test failure
/// naming `what` and the panic message.
fn guarded<R>(what: &str, f: impl FnOnce() -> R) -> Result<R, TestCaseError> {
    if let Ok(mut g) = IN_FLIGHT.lock() {
        *g = Some((Instant::now(), what.to_string()));
    }
    GUARDED.with(|g| g.set(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(false));
    if let Ok(mut g) = IN_FLIGHT.lock() {
        *g = None;
    }
    r.map_err(|_| {
        let msg = LAST_PANIC
            .lock()
            .ok()
            .and_then(|mut g| g.take())
            .unwrap_or_default();
        TestCaseError::fail(format!("panic in {what}: {msg}"))
    })
}

/// The keyspace invariants; `swept` adds "nothing is due any more".
fn check(store: &Store, now: u64, swept: bool) -> Result<(), String> {
    for (i, db) in store.dbs.iter().enumerate() {
        let (mut expires, mut with_members) = (0, 0);
        for (k, e) in db.raw_iter() {
            let at = format!("db {i} key \"{}\"", k.escape_ascii());
            if e.value.is_empty_collection() {
                return Err(format!("empty collection left at {at}"));
            }
            if let Some(t) = e.expire_at {
                expires += 1;
                if swept && t <= now {
                    return Err(format!("{at}: TTL due after a full sweep"));
                }
            }
            if let Some(t) = e.value.earliest_deadline() {
                with_members += 1;
                if swept && t <= now {
                    return Err(format!("{at}: member due after a full sweep"));
                }
            }
            check_value(&e.value).map_err(|m| format!("{at}: {m}"))?;
        }
        let st = db.stats();
        if st.keys != db.raw_iter().count() {
            return Err(format!("db {i}: stats().keys is {}", st.keys));
        }
        if st.expires != expires {
            return Err(format!(
                "db {i}: {} keys in the TTL index, {expires} keys with a TTL",
                st.expires
            ));
        }
        if st.member_expiry_keys != with_members {
            return Err(format!(
                "db {i}: {} keys in the member index, {with_members} keys with member deadlines",
                st.member_expiry_keys
            ));
        }
    }
    Ok(())
}

/// Structural checks of one value.
fn check_value(v: &Value) -> Result<(), String> {
    match v {
        Value::Str(_) | Value::List(_) => {}
        Value::Hash(h) => {
            if h.iter().count() != h.len() {
                return Err("hash length disagrees with its fields".into());
            }
            for (m, t) in h.deadlines().iter() {
                if !h.contains(m) || h.deadline(m) != Some(t) {
                    return Err(format!(
                        "deadline of missing field \"{}\"",
                        m.escape_ascii()
                    ));
                }
            }
        }
        Value::Set(s) => {
            if s.iter().count() != s.len() {
                return Err("set length disagrees with its members".into());
            }
            for (m, t) in s.deadlines().iter() {
                if !s.contains(m) || s.deadline(m) != Some(t) {
                    return Err(format!(
                        "deadline of missing member \"{}\"",
                        m.escape_ascii()
                    ));
                }
            }
        }
        Value::ZSet(z) => {
            if z.iter().len() != z.len() {
                return Err("sorted set length disagrees with its order".into());
            }
            let mut prev: Option<(&[u8], f64)> = None;
            for (rank, (m, s)) in z.iter().enumerate() {
                if s.is_nan() {
                    return Err(format!("NaN score for \"{}\"", m.escape_ascii()));
                }
                if z.score(m) != Some(s) || z.rank(m, false) != Some(rank) {
                    return Err(format!(
                        "order and dictionary disagree on \"{}\"",
                        m.escape_ascii()
                    ));
                }
                if let Some((pm, ps)) = prev {
                    if (ps, pm) >= (s, m) {
                        return Err(format!("out of order at rank {rank}"));
                    }
                }
                prev = Some((m, s));
            }
            for (m, t) in z.deadlines().iter() {
                if !z.contains(m) || z.deadline(m) != Some(t) {
                    return Err(format!(
                        "deadline of missing member \"{}\"",
                        m.escape_ascii()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// COMMAND GETKEYS: finding the keys of a request of an accepted length
/// must not panic, and must point inside it.
fn check_keys(argv: &[Bytes]) -> Result<(), TestCaseError> {
    let Some(spec) = argv.first().and_then(|n| ebb_core::lookup(n)) else {
        return Ok(());
    };
    if !spec.arity_ok(argv.len()) {
        return Ok(());
    }
    let what = format!("key positions of {}", show(argv));
    let pos = guarded(&what, || spec.key_positions(argv))?;
    if pos.iter().any(|&p| p == 0 || p >= argv.len()) {
        return Err(TestCaseError::fail(format!("{what}: {pos:?}")));
    }
    Ok(())
}

fn run_case(spec: &CommandSpec, case: &Case) -> Result<(), TestCaseError> {
    let mut h = guarded("setup", || harness(&case.seeds, case.resp3))?;
    check(&h.store, h.now, false).map_err(|m| TestCaseError::fail(format!("after setup: {m}")))?;
    for (run, jump, sweep) in &case.steps {
        let argv: Vec<Bytes> = match run {
            Run::This(args) => std::iter::once(spec.name.to_ascii_uppercase().into_bytes())
                .chain(args.iter().cloned())
                .map(Bytes::from)
                .collect(),
            Run::Other(line) => line.iter().cloned().map(Bytes::from).collect(),
        };
        let what = show(&argv);
        check_keys(&argv)?;
        guarded(&what, || h.run_bytes(&argv))?;
        check(&h.store, h.now, false)
            .map_err(|m| TestCaseError::fail(format!("after {what}: {m}")))?;
        h.advance(*jump);
        if *sweep {
            guarded(&format!("sweep after {what}"), || h.sweep())?;
            check(&h.store, h.now, true)
                .map_err(|m| TestCaseError::fail(format!("sweep after {what}: {m}")))?;
        }
    }
    Ok(())
}

fn core_specs() -> Vec<&'static CommandSpec> {
    all()
        .iter()
        .filter(|s| matches!(s.exec, Exec::Core(_)))
        .collect()
}

#[test]
fn every_core_command_survives_random_arguments() {
    install_hooks();
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    let specs = core_specs();
    assert!(specs.len() > 150, "only {} core commands", specs.len());
    let covered = specs
        .iter()
        .filter(|s| corpus().contains_key(&s.name.to_ascii_uppercase()))
        .count();
    assert!(
        covered * 10 >= specs.len() * 9,
        "the unit tests give command lines for only {covered} of {} commands",
        specs.len()
    );
    let mut failures = Vec::new();
    for spec in specs {
        let config = Config {
            cases,
            failure_persistence: None,
            max_shrink_iters: 2000,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        if let Err(e) = runner.run(&case_for(spec), |case| run_case(spec, &case)) {
            failures.push(format!("{}: {e}", spec.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Edge values substituted, one position at a time, into every harvested
/// command line.
const EDGES: &[&str] = &[
    "-9223372036854775808",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "-1",
    "0",
    "-2",
    "4611686018427387904",
    "-4611686018427387904",
    "70368744177664",
    "inf",
    "-inf",
    "nan",
    "1e400",
    "(-inf",
    "",
];

#[test]
fn every_argument_position_survives_edge_values() {
    install_hooks();
    let mut lines: Vec<Vec<Vec<u8>>> = Vec::new();
    for (name, ls) in corpus() {
        for l in ls {
            let mut v = vec![name.as_bytes().to_vec()];
            v.extend(l.iter().cloned());
            lines.push(v);
        }
    }
    lines.sort();
    let seeds: Vec<Option<Seed>> = KEYS
        .iter()
        .chain(KEYS)
        .map(|(_, hint)| {
            Some(Seed {
                kind: if *hint < 5 { *hint } else { 0 },
                members: vec![(0, None), (2, Some(50)), (4, None), (6, Some(5000))],
                ttl: None,
            })
        })
        .collect();
    let mut failures = Vec::new();
    let mut h = harness(&seeds, false);
    for (n, line) in lines.iter().enumerate() {
        if n % 16 == 0 {
            h = harness(&seeds, n % 32 == 0);
        }
        let argv: Vec<Bytes> = line.iter().cloned().map(Bytes::from).collect();
        if let Err(e) = guarded(&show(&argv), || h.run_bytes(&argv)) {
            failures.push(e.to_string());
        }
        for pos in 1..line.len() {
            for e in EDGES {
                let mut argv: Vec<Bytes> = line.iter().cloned().map(Bytes::from).collect();
                argv[pos] = Bytes::from_static(e.as_bytes());
                let what = show(&argv);
                let r = check_keys(&argv).and_then(|_| guarded(&what, || h.run_bytes(&argv)));
                if let Err(e) = r {
                    failures.push(e.to_string());
                    h = harness(&seeds, false);
                    continue;
                }
                if let Err(m) = check(&h.store, h.now, false) {
                    failures.push(format!("after {what}: {m}"));
                    h = harness(&seeds, false);
                }
                h.advance(7);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
