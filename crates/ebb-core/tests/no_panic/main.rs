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
use ebb_core::testing::{Harness, COMMAND_WORDS};
use ebb_core::value::Value;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

mod corpus;
mod guard;
mod invariants;

use corpus::corpus;
use guard::{guarded, install_hooks, show};
use invariants::{check, check_keys};

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

/// Type names (TYPE, SCAN … TYPE), next to the shared command keywords.
const TYPE_NAMES: &[&str] = &["string", "list", "hash", "set", "zset"];

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
        5 => word(COMMAND_WORDS),
        1 => word(TYPE_NAMES),
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
        let argv = ebb_core::args::views(&argv);
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
        let argv = ebb_core::args::views(&argv);
        if let Err(e) = guarded(&show(&argv), || h.run_bytes(&argv)) {
            failures.push(e.to_string());
        }
        for pos in 1..line.len() {
            for e in EDGES {
                let mut argv: Vec<Bytes> = line.iter().cloned().map(Bytes::from).collect();
                argv[pos] = Bytes::from_static(e.as_bytes());
                let argv = ebb_core::args::views(&argv);
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
