//! Tests of the key specifications.

use super::*;

fn argv<'a>(words: &[&'a str]) -> Vec<&'a [u8]> {
    words.iter().map(|w| w.as_bytes()).collect()
}

/// Every entry parses whole, and the tables are sorted with no name twice.
#[test]
fn tables_parse_and_are_sorted() {
    for (name, _, text) in COMMANDS {
        let parts = if text.is_empty() {
            0
        } else {
            text.split(';').count()
        };
        assert_eq!(parse(text).len(), parts, "{name}: {text}");
    }
    for s in SUBCOMMANDS {
        let parts = if s.5.is_empty() {
            0
        } else {
            s.5.split(';').count()
        };
        assert_eq!(parse(s.5).len(), parts, "{}", s.0);
    }
    assert!(COMMANDS.windows(2).all(|w| w[0].0 < w[1].0));
    assert!(SUBCOMMANDS.windows(2).all(|w| w[0].0 < w[1].0));
    assert!(parse("RW:x1:r0,1,0").is_empty());
    assert!(parse("RW:i1:r0,1").is_empty());
    assert!(parse("RW:i1:r0,1,0:extra").is_empty());
}

/// Every command that takes keys (or sharded channels) describes them,
/// keyless commands describe none, and every table name is a command.
#[test]
fn specs_cover_the_key_taking_commands() {
    for spec in crate::table::all() {
        // Sharded channels are described as `not_key` arguments.
        let takes_keys = spec.first_key > 0 || spec.keys.is_some();
        // A container's keys are described by its subcommands.
        let described = !key_specs(spec.name).is_empty()
            || crate::docs::subcommands(spec.name)
                .iter()
                .any(|d| subcommand(d.name).is_some_and(|s| !s.key_specs().is_empty()));
        assert_eq!(described, takes_keys, "{}", spec.name);
    }
    for (name, _, _) in COMMANDS {
        assert!(crate::table::lookup(name.as_bytes()).is_some(), "{name}");
    }
}

/// Every documented subcommand has an entry, and its arity is the one
/// checked before it runs.
#[test]
fn every_subcommand_is_described() {
    for spec in crate::table::all() {
        for d in crate::docs::subcommands(spec.name) {
            let sub = subcommand(d.name).unwrap_or_else(|| panic!("{}", d.name));
            assert_eq!(crate::table::subcommand_arity(d.name), Some(sub.arity));
        }
    }
}

/// For commands with fixed key positions, the specifications name the
/// same arguments as the table's first/last/step, at several lengths.
#[test]
fn specs_agree_with_fixed_positions() {
    for spec in crate::table::all() {
        if spec.keys.is_some() || spec.first_key == 0 {
            continue;
        }
        let min = spec.arity.unsigned_abs() as usize;
        for argc in [min, min + 1, min + 2, min + 5] {
            if !spec.arity_ok(argc) {
                continue;
            }
            let words: Vec<String> = (0..argc).map(|i| format!("a{i}")).collect();
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let args = argv(&words);
            let mut from_specs: Vec<usize> = key_specs(spec.name)
                .iter()
                .filter_map(|s| positions(s, &args))
                .flatten()
                .collect();
            from_specs.sort_unstable();
            from_specs.dedup();
            let fixed: Vec<usize> = spec.fixed_key_positions(argc).collect();
            assert_eq!(from_specs, fixed, "{} with {argc} arguments", spec.name);
        }
    }
}

#[test]
fn key_counts_and_flags() {
    let z = argv(&["zunionstore", "d", "2", "a", "b", "WEIGHTS", "1", "2"]);
    let specs = key_specs("zunionstore");
    assert_eq!(positions(&specs[0], &z), Some(vec![1]));
    assert_eq!(positions(&specs[1], &z), Some(vec![3, 4]));
    assert_eq!(flags_at("zunionstore", &z, 1), vec!["OW", "update"]);
    assert_eq!(flags_at("zunionstore", &z, 4), vec!["RO", "access"]);
    // A key count that is not a number names no key.
    let bad = argv(&["zunionstore", "d", "x", "a"]);
    assert_eq!(positions(&specs[1], &bad), None);
    let set = argv(&["set", "k", "v"]);
    assert_eq!(flags_at("set", &set, 1), vec!["OW", "update"]);
    let set_get = argv(&["set", "k", "v", "get"]);
    assert_eq!(flags_at("set", &set_get, 1), vec!["RW", "access", "update"]);
    let mig = argv(&[
        "migrate", "h", "1", "", "0", "5", "auth", "keys", "keys", "a",
    ]);
    let specs = key_specs("migrate");
    assert_eq!(positions(&specs[1], &mig), Some(vec![9]));
    assert_eq!(flags_at("migrate", &mig, 9), vec!["RW", "access", "delete"]);
    let one = argv(&["migrate", "h", "1", "k", "0", "5"]);
    assert_eq!(positions(&specs[1], &one), Some(vec![]));
    let sort = argv(&["sort", "k1", "store", "k2"]);
    assert_eq!(flags_at("sort", &sort, 1), vec!["RO", "access"]);
    assert_eq!(flags_at("sort", &sort, 3), vec!["OW", "update"]);
    let usage = argv(&["memory", "usage", "k"]);
    assert_eq!(flags_at("memory", &usage, 2), vec!["RO"]);
    let lmove = argv(&["lmove", "a", "b", "left", "right"]);
    assert_eq!(flags_at("lmove", &lmove, 1), vec!["RW", "access", "delete"]);
    assert_eq!(flags_at("lmove", &lmove, 2), vec!["RW", "insert"]);
    assert_eq!(
        tips("keys"),
        "request_policy:all_shards nondeterministic_output_order"
    );
    assert_eq!(tips("get"), "");
}
