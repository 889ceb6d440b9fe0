//! SADDEX: add members that carry a deadline, optionally all-or-nothing
//! under a cap on the number of live members (`LIMIT`).

use std::collections::HashSet;

use crate::args::Args;
use crate::cmd::member_ttl::MAX_DEADLINE_MS;
use crate::cmd::sets::log_cmd;
use crate::cmd::OneOrMany;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::SetValue;

/// SADDEX.
pub const COMMANDS: &[CommandSpec] = &[CommandSpec::core(
    "saddex",
    -4,
    "write denyoom fast",
    (1, 1, 1),
    "set",
    "Add one or more members to a set, each expiring after the given number of seconds",
    saddex,
)];

/// A parsed SADDEX.
#[derive(Debug)]
struct SaddEx<'a> {
    key: &'a [u8],
    keep_ttl: bool,
    limit: Option<u64>,
    deadline: u64,
    members: OneOrMany<&'a [u8]>,
}

impl<'a> SaddEx<'a> {
    /// Parses `SADDEX key [KEEPTTL] [LIMIT max] seconds member…` at `now`.
    /// Options may come in either order; the first other argument is
    /// `seconds`.
    fn parse(argv: &'a [&'a [u8]], now: u64) -> CmdResult<SaddEx<'a>> {
        let mut a = Args::new(argv);
        let key = a.bytes()?;
        let mut keep_ttl = false;
        let mut limit = None;
        loop {
            if a.eat("KEEPTTL") {
                keep_ttl = true;
            } else if a.eat("LIMIT") {
                let max = a.i64()?;
                if max < 0 {
                    return Err(Error::msg("ERR LIMIT can't be negative"));
                }
                limit = Some(max as u64);
            } else {
                break;
            }
        }
        let seconds = a.i64()?;
        let deadline = Some(seconds)
            .filter(|s| *s > 0)
            .and_then(|s| s.checked_mul(1000))
            .and_then(|ms| i64::try_from(now).ok()?.checked_add(ms))
            .filter(|&at| at as u64 <= MAX_DEADLINE_MS)
            .ok_or_else(|| Error::InvalidExpire("saddex".into()))? as u64;
        let rest = a.rest();
        if rest.is_empty() {
            return Err(Error::Syntax);
        }
        let members = if let [one] = rest {
            OneOrMany::One([*one])
        } else {
            let mut seen: HashSet<&[u8], ahash::RandomState> = HashSet::default();
            OneOrMany::Many(rest.iter().copied().filter(|m| seen.insert(m)).collect())
        };
        Ok(SaddEx {
            key,
            keep_ttl,
            limit,
            deadline,
            members,
        })
    }
}

/// # Format
/// `SADDEX key [KEEPTTL] [LIMIT max] seconds member [member …]` → the number
/// of members added (that were not live members before), or -1 with
/// `LIMIT` when the set would then hold more than `max` live members, in
/// which case nothing changes.
///
/// Every member written gets the deadline now + `seconds`: new members, and
/// existing ones too, whose deadline is replaced. With `KEEPTTL`, members
/// that already exist keep their current deadline, or their lack of one.
/// Logged as `SADD key new…` and `SPEXPIREAT key <unix-ms> MEMBERS n …`.
fn saddex(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let cmd = SaddEx::parse(argv, ctx.now)?;
    let key = cmd.key;
    // The live count and the number of new members matter only to LIMIT
    // and to KEEPTTL's "nothing to do" answer.
    if cmd.limit.is_some() || cmd.keep_ttl {
        let (live, new) = match ctx.get::<SetValue>(key)? {
            Some(set) => (
                set.len() as u64,
                cmd.members.iter().filter(|m| !set.contains(m)).count(),
            ),
            None => (0, cmd.members.len()),
        };
        if cmd.limit.is_some_and(|max| live + new as u64 > max) {
            ctx.rewrite_as(Vec::new());
            return Ok(Reply::Int(-1));
        }
        if cmd.keep_ttl && new == 0 {
            ctx.rewrite_as(Vec::new());
            return Ok(Reply::Int(0));
        }
    }
    // Member lists are built only for the log and for listeners.
    let (logs, notifies) = (ctx.logs(), ctx.notifies());
    let set = ctx.get_or_create::<SetValue>(key)?;
    let mut added_count = 0;
    let mut added = Vec::new();
    let mut timed = Vec::new();
    for m in cmd.members.iter() {
        let Some(new) = set.upsert_deadline(m, cmd.deadline, cmd.keep_ttl) else {
            continue; // an existing member kept its deadline (KEEPTTL)
        };
        if new {
            added_count += 1;
            if logs {
                added.push(*m);
            }
        }
        if logs || notifies {
            timed.push(*m);
        }
    }
    if logs {
        let mut log = Vec::with_capacity(2);
        if !added.is_empty() {
            log.push(log_cmd(b"SADD", key, &added));
        }
        let (deadline, count) = (cmd.deadline.to_string(), timed.len().to_string());
        let header: [&[u8]; 3] = [deadline.as_bytes(), b"MEMBERS", count.as_bytes()];
        log.push(log_cmd(b"SPEXPIREAT", key, header.iter().chain(&timed)));
        ctx.rewrite_as(log);
    }
    ctx.modified(key);
    if added_count > 0 {
        ctx.notify(b's', "sadd", key);
    }
    if notifies {
        ctx.notify_members(b's', "sexpire", key, timed);
    }
    Ok(Reply::Int(added_count))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::sets::test_util::*;
    use crate::testing::{err, Harness};

    fn member_event(h: &Harness, name: &str) -> Option<Vec<String>> {
        h.fx.events.iter().find(|e| e.name == name).map(|e| {
            let mut m: Vec<String> = e
                .members
                .iter()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect();
            m.sort();
            m
        })
    }

    #[test]
    fn saddex_adds_with_deadline() {
        let mut h = Harness::new();
        let t0 = h.now;
        assert_eq!(h.run(&["SADDEX", "s", "10", "a", "b", "a"]), Reply::Int(2));
        assert_eq!(deadline(&h, "s", "a"), Some(t0 + 10_000));
        assert_eq!(deadline(&h, "s", "b"), Some(t0 + 10_000));
        assert_eq!(events(&h), ["sadd:s", "sexpire:s"]);
        assert_eq!(
            member_event(&h, "sexpire"),
            Some(vec!["a".into(), "b".into()])
        );
        let at = (t0 + 10_000).to_string();
        assert_eq!(
            logged(&h),
            Some(vec![
                vec!["SADD".into(), "s".into(), "a".into(), "b".into()],
                vec![
                    "SPEXPIREAT".into(),
                    "s".into(),
                    at,
                    "MEMBERS".into(),
                    "2".into(),
                    "a".into(),
                    "b".into()
                ],
            ])
        );
        h.advance(9_999);
        assert_eq!(h.run(&["SCARD", "s"]), Reply::Int(2));
        h.advance(1);
        assert_eq!(h.run(&["SCARD", "s"]), Reply::Int(0));
        assert!(raw_set(&h, "s").is_none());
    }

    #[test]
    fn saddex_refreshes_existing_members_unless_keepttl() {
        let mut h = Harness::new();
        let t0 = h.now;
        h.run(&["SADD", "s", "plain"]);
        h.run(&["SADDEX", "s", "10", "timed"]);
        h.advance(1000);
        assert_eq!(
            h.run(&["SADDEX", "s", "20", "plain", "timed", "new"]),
            Reply::Int(1)
        );
        let at = t0 + 1000 + 20_000;
        assert_eq!(deadline(&h, "s", "plain"), Some(at));
        assert_eq!(deadline(&h, "s", "timed"), Some(at));
        assert_eq!(deadline(&h, "s", "new"), Some(at));
        assert_eq!(
            member_event(&h, "sexpire"),
            Some(vec!["new".into(), "plain".into(), "timed".into()])
        );

        let mut h = Harness::new();
        h.run(&["SADD", "s", "plain"]);
        h.run(&["SADDEX", "s", "10", "timed"]);
        h.advance(1000);
        assert_eq!(
            h.run(&["SADDEX", "s", "KEEPTTL", "20", "plain", "timed", "new"]),
            Reply::Int(1)
        );
        assert_eq!(deadline(&h, "s", "plain"), None);
        assert_eq!(deadline(&h, "s", "timed"), Some(t0 + 10_000));
        assert_eq!(deadline(&h, "s", "new"), Some(t0 + 1000 + 20_000));
        assert_eq!(member_event(&h, "sexpire"), Some(vec!["new".into()]));
        let at = (t0 + 21_000).to_string();
        assert_eq!(
            logged(&h),
            Some(vec![
                vec!["SADD".into(), "s".into(), "new".into()],
                vec![
                    "SPEXPIREAT".into(),
                    "s".into(),
                    at,
                    "MEMBERS".into(),
                    "1".into(),
                    "new".into()
                ],
            ])
        );
        assert_eq!(
            h.run(&["SADDEX", "s", "KEEPTTL", "20", "plain", "new"]),
            Reply::Int(0)
        );
        assert!(h.fx.events.is_empty());
        assert!(h.fx.touched.is_empty());
        assert_eq!(logged(&h), Some(vec![]));
    }

    #[test]
    fn saddex_existing_only_logs_just_the_deadline() {
        let mut h = Harness::new();
        h.run(&["SADD", "s", "a"]);
        assert_eq!(h.run(&["SADDEX", "s", "5", "a"]), Reply::Int(0));
        assert_eq!(events(&h), ["sexpire:s"]);
        let at = (h.now + 5000).to_string();
        assert_eq!(
            logged(&h),
            Some(vec![vec![
                "SPEXPIREAT".into(),
                "s".into(),
                at,
                "MEMBERS".into(),
                "1".into(),
                "a".into()
            ]])
        );
        assert_eq!(h.fx.touched.len(), 1);
    }

    #[test]
    fn saddex_limit_is_all_or_nothing() {
        let mut h = Harness::new();
        assert_eq!(
            h.run(&["SADDEX", "s", "LIMIT", "2", "60", "a", "b", "c"]),
            Reply::Int(-1)
        );
        assert!(raw_set(&h, "s").is_none());
        assert!(h.fx.events.is_empty());
        assert_eq!(logged(&h), Some(vec![]));
        assert_eq!(
            h.run(&["SADDEX", "s", "LIMIT", "3", "60", "a", "b", "c", "a"]),
            Reply::Int(3)
        );
        assert_eq!(
            h.run(&["SADDEX", "s", "LIMIT", "3", "60", "d"]),
            Reply::Int(-1)
        );
        assert_eq!(h.run(&["SCARD", "s"]), Reply::Int(3));
        // Existing members do not count twice.
        assert_eq!(
            h.run(&["SADDEX", "s", "LIMIT", "3", "60", "a", "b"]),
            Reply::Int(0)
        );
        // A set already over the cap refuses even a pure refresh.
        assert_eq!(
            h.run(&["SADDEX", "s", "LIMIT", "2", "60", "a"]),
            Reply::Int(-1)
        );
        assert_eq!(
            h.run(&["SADDEX", "s", "LIMIT", "0", "60", "zz"]),
            Reply::Int(-1)
        );
        // Expired members free their places.
        h.advance(60_000);
        assert_eq!(
            h.run(&["SADDEX", "s", "LIMIT", "1", "KEEPTTL", "60", "d"]),
            Reply::Int(1)
        );
        assert_eq!(
            h.run(&["SMEMBERS", "s"]),
            Reply::Set(vec![crate::testing::bulk("d")])
        );
    }

    #[test]
    fn saddex_rate_limit_recipe() {
        let mut h = Harness::new();
        for code in ["1", "2", "3"] {
            assert_eq!(
                h.run(&["SADDEX", "otp", "LIMIT", "3", "300", code]),
                Reply::Int(1)
            );
            h.advance(60_000);
        }
        assert_eq!(
            h.run(&["SADDEX", "otp", "LIMIT", "3", "300", "4"]),
            Reply::Int(-1)
        );
        h.advance(120_000);
        assert_eq!(
            h.run(&["SADDEX", "otp", "LIMIT", "3", "300", "4"]),
            Reply::Int(1)
        );
        assert_eq!(sorted(&h.run(&["SMEMBERS", "otp"])), ["2", "3", "4"]);
    }

    #[test]
    fn saddex_errors() {
        let mut h = Harness::new();
        h.run(&["SET", "str", "x"]);
        let invalid = err("ERR invalid expire time in 'saddex' command");
        assert_eq!(h.run(&["SADDEX", "s", "0", "a"]), invalid);
        assert_eq!(h.run(&["SADDEX", "s", "-5", "a"]), invalid);
        assert_eq!(h.run(&["SADDEX", "s", "9223372036854775", "a"]), invalid);
        assert_eq!(h.run(&["SADDEX", "s", "9223372036854775807", "a"]), invalid);
        // Past the largest member deadline (2^46 - 1 ms), as SPEXPIREAT.
        assert_eq!(h.run(&["SADDEX", "s", "70368744177", "a"]), invalid);
        assert_eq!(h.run(&["EXISTS", "s"]), Reply::Int(0));
        let not_int = err("ERR value is not an integer or out of range");
        assert_eq!(h.run(&["SADDEX", "s", "1.5", "a"]), not_int);
        assert_eq!(h.run(&["SADDEX", "s", "abc", "a"]), not_int);
        assert_eq!(h.run(&["SADDEX", "s", "LIMIT", "x", "10", "a"]), not_int);
        assert_eq!(
            h.run(&["SADDEX", "s", "LIMIT", "-1", "10", "a"]),
            err("ERR LIMIT can't be negative")
        );
        assert_eq!(
            h.run(&["SADDEX", "s", "KEEPTTL", "10"]),
            err("ERR syntax error")
        );
        assert_eq!(h.run(&["SADDEX", "s", "LIMIT", "10", "a"]), not_int);
        assert_eq!(
            h.run(&["SADDEX", "s", "10"]),
            err("ERR wrong number of arguments for 'saddex' command")
        );
        assert_eq!(
            h.run(&["SADDEX", "str", "10", "a"]),
            err("WRONGTYPE Operation against a key holding the wrong kind of value")
        );
        assert_eq!(
            h.run(&["SADDEX", "str", "LIMIT", "0", "10", "a"]),
            err("WRONGTYPE Operation against a key holding the wrong kind of value")
        );
        assert!(raw_set(&h, "s").is_none());
        assert_eq!(
            h.run(&["saddex", "s", "keepttl", "limit", "5", "keepttl", "10", "KEEPTTL"]),
            Reply::Int(1)
        );
        assert!(h.run(&["SISMEMBER", "s", "KEEPTTL"]) == Reply::Int(1));
    }

    mod model {
        use super::*;
        use proptest::prelude::*;
        use std::collections::BTreeMap;

        /// One step of the random walk.
        #[derive(Debug, Clone)]
        enum Op {
            Sadd(Vec<u8>),
            Srem(Vec<u8>),
            Saddex {
                keep_ttl: bool,
                limit: Option<u8>,
                secs: u8,
                members: Vec<u8>,
            },
            Advance(u16),
            Sweep,
        }

        fn members() -> impl Strategy<Value = Vec<u8>> {
            prop::collection::vec(0u8..8, 1..5)
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                2 => members().prop_map(Op::Sadd),
                2 => members().prop_map(Op::Srem),
                4 => (any::<bool>(), prop::option::of(0u8..8), 1u8..4, members())
                    .prop_map(|(keep_ttl, limit, secs, members)| Op::Saddex { keep_ttl, limit, secs, members }),
                3 => (0u16..2500).prop_map(Op::Advance),
                1 => Just(Op::Sweep),
            ]
        }

        fn name(m: u8) -> String {
            format!("m{m}")
        }

        fn distinct(ms: &[u8]) -> Vec<u8> {
            let mut out: Vec<u8> = Vec::new();
            for m in ms {
                if !out.contains(m) {
                    out.push(*m);
                }
            }
            out
        }

        /// Applies `op` to the model; returns the integer reply it expects.
        fn apply(model: &mut BTreeMap<u8, Option<u64>>, now: &mut u64, op: &Op) -> Option<i64> {
            model.retain(|_, d| d.is_none_or(|d| d > *now));
            match op {
                Op::Sadd(ms) => {
                    let mut added = 0;
                    for m in distinct(ms) {
                        if let std::collections::btree_map::Entry::Vacant(e) = model.entry(m) {
                            e.insert(None);
                            added += 1;
                        }
                    }
                    Some(added)
                }
                Op::Srem(ms) => Some(
                    distinct(ms)
                        .into_iter()
                        .filter(|m| model.remove(m).is_some())
                        .count() as i64,
                ),
                Op::Saddex {
                    keep_ttl,
                    limit,
                    secs,
                    members,
                } => {
                    let ms = distinct(members);
                    let new = ms.iter().filter(|m| !model.contains_key(m)).count();
                    if limit.is_some_and(|max| model.len() + new > max as usize) {
                        return Some(-1);
                    }
                    let at = *now + *secs as u64 * 1000;
                    for m in ms {
                        match model.get_mut(&m) {
                            Some(_) if *keep_ttl => {}
                            Some(d) => *d = Some(at),
                            None => {
                                model.insert(m, Some(at));
                            }
                        }
                    }
                    Some(new as i64)
                }
                Op::Advance(ms) => {
                    *now += *ms as u64;
                    model.retain(|_, d| d.is_none_or(|d| d > *now));
                    None
                }
                Op::Sweep => None,
            }
        }

        fn run(h: &mut Harness, op: &Op) -> Option<Reply> {
            let args: Vec<String> = match op {
                Op::Sadd(ms) => ["SADD", "s"]
                    .iter()
                    .map(|s| s.to_string())
                    .chain(ms.iter().map(|m| name(*m)))
                    .collect(),
                Op::Srem(ms) => ["SREM", "s"]
                    .iter()
                    .map(|s| s.to_string())
                    .chain(ms.iter().map(|m| name(*m)))
                    .collect(),
                Op::Saddex {
                    keep_ttl,
                    limit,
                    secs,
                    members,
                } => {
                    let mut a = vec!["SADDEX".to_string(), "s".to_string()];
                    if *keep_ttl {
                        a.push("KEEPTTL".into());
                    }
                    if let Some(l) = limit {
                        a.push("LIMIT".into());
                        a.push(l.to_string());
                    }
                    a.push(secs.to_string());
                    a.extend(members.iter().map(|m| name(*m)));
                    a
                }
                Op::Advance(ms) => {
                    h.advance(*ms as u64);
                    return None;
                }
                Op::Sweep => {
                    h.sweep();
                    return None;
                }
            };
            let refs: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            Some(h.run(&refs))
        }

        /// The live members of the stored set with their deadlines, read
        /// without triggering expiry.
        fn stored(h: &Harness) -> BTreeMap<u8, Option<u64>> {
            let Some(set) = raw_set(h, "s") else {
                return BTreeMap::new();
            };
            (0u8..8)
                .filter(|m| set.contains(name(*m).as_bytes()))
                .map(|m| (m, set.deadline(name(m).as_bytes())))
                .filter(|(_, d)| d.is_none_or(|d| d > h.now))
                .collect()
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 10_000, failure_persistence: None, ..ProptestConfig::default() })]

            #[test]
            fn set_matches_model(ops in prop::collection::vec(op(), 1..20)) {
                let mut h = Harness::new();
                let mut now = h.now;
                let mut model: BTreeMap<u8, Option<u64>> = BTreeMap::new();
                for op in &ops {
                    let want = apply(&mut model, &mut now, op);
                    let got = run(&mut h, op);
                    prop_assert_eq!(got, want.map(Reply::Int), "{:?}", op);
                    prop_assert_eq!(h.now, now);
                    prop_assert_eq!(stored(&h), model.clone(), "after {:?}", op);
                    let stored_set = raw_set(&h, "s");
                    prop_assert!(stored_set.is_none_or(|s| !s.is_empty()));
                }
                prop_assert_eq!(h.run(&["SCARD", "s"]), Reply::Int(model.len() as i64));
                let mut members: Vec<String> = model.keys().map(|m| name(*m)).collect();
                members.sort();
                prop_assert_eq!(sorted(&h.run(&["SMEMBERS", "s"])), members);
                for m in 0u8..8 {
                    let want = model.contains_key(&m) as i64;
                    prop_assert_eq!(h.run(&["SISMEMBER", "s", &name(m)]), Reply::Int(want));
                }
            }
        }
    }
}
