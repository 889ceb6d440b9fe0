//! Property tests: random member adds and removals, every EXPIRE-, TTL- and
//! PERSIST-style command, clock jumps and sweeps, run through the Harness
//! on a set, a sorted set and a hash, and compared at every step with a
//! `BTreeMap<member, (value, deadline)>` model.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;
use crate::effects::Effects;
use crate::testing::Harness;
use crate::value::Value;

const KEY: &str = "k";
const UNIVERSE: u8 = 6;

/// What the tests need beyond [`MemberTtl`] to drive and inspect a type.
trait Subject: MemberTtl + Deadlines {
    /// Command prefix: `H`, `Z` or `S`.
    const PREFIX: &'static str;
    /// Whether re-adding an existing member keeps its deadline (HSET clears it).
    const ADD_KEEPS_DEADLINE: bool;
    /// Adds or updates `m` the way SADD / ZADD / HSET do.
    fn add(&mut self, m: Bytes, val: u32);
    /// The member's value (score, field value; 0 for sets).
    fn value(&self, m: &[u8]) -> Option<u32>;
    /// The value stored in the model for an add of `val`.
    fn model_value(val: u32) -> u32 {
        val
    }
    /// The live value under the key, raw (no expiry applied).
    fn raw(v: &Value) -> Option<&Self>;
}

impl Subject for SetValue {
    const PREFIX: &'static str = "S";
    const ADD_KEEPS_DEADLINE: bool = true;
    fn add(&mut self, m: Bytes, _val: u32) {
        self.insert(m);
    }
    fn value(&self, m: &[u8]) -> Option<u32> {
        self.contains(m).then_some(0)
    }
    fn model_value(_val: u32) -> u32 {
        0
    }
    fn raw(v: &Value) -> Option<&Self> {
        match v {
            Value::Set(s) => Some(s),
            _ => None,
        }
    }
}

impl Subject for ZSetValue {
    const PREFIX: &'static str = "Z";
    const ADD_KEEPS_DEADLINE: bool = true;
    fn add(&mut self, m: Bytes, val: u32) {
        self.insert(m, val as f64);
    }
    fn value(&self, m: &[u8]) -> Option<u32> {
        self.score(m).map(|s| s as u32)
    }
    fn raw(v: &Value) -> Option<&Self> {
        match v {
            Value::ZSet(z) => Some(z),
            _ => None,
        }
    }
}

impl Subject for HashValue {
    const PREFIX: &'static str = "H";
    const ADD_KEEPS_DEADLINE: bool = false;
    fn add(&mut self, m: Bytes, val: u32) {
        self.insert(m, Bytes::from(val.to_string()));
    }
    fn value(&self, m: &[u8]) -> Option<u32> {
        self.get(m)
            .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
    }
    fn raw(v: &Value) -> Option<&Self> {
        match v {
            Value::Hash(h) => Some(h),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Add(u8, u32),
    Remove(u8),
    /// form: 0 relative s, 1 relative ms, 2 absolute s, 3 absolute ms.
    Expire {
        form: u8,
        t: i64,
        cond: u8,
        members: Vec<u8>,
    },
    ExpireMember {
        member: u8,
        delay: i64,
        unit: u8,
    },
    FieldExpire {
        secs: u64,
        members: Vec<u8>,
    },
    Persist(Vec<u8>),
    PersistMember(u8),
    Ttl(Vec<u8>),
    Advance(u64),
    Sweep,
}

fn members() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(0..UNIVERSE, 1..4)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..UNIVERSE, 0u32..100).prop_map(|(m, v)| Op::Add(m, v)),
        1 => (0..UNIVERSE).prop_map(Op::Remove),
        // Times in steps of 250 ms so that equal deadlines (GT/LT edges) are common.
        4 => (0u8..4, -12i64..24, 0u8..5, members())
            .prop_map(|(form, t, cond, members)| Op::Expire { form, t: t * 250, cond, members }),
        1 => (0..UNIVERSE, -3i64..8, 0u8..3)
            .prop_map(|(member, delay, unit)| Op::ExpireMember { member, delay, unit }),
        1 => (1u64..4, members()).prop_map(|(secs, members)| Op::FieldExpire { secs, members }),
        1 => members().prop_map(Op::Persist),
        1 => (0..UNIVERSE).prop_map(Op::PersistMember),
        2 => members().prop_map(Op::Ttl),
        3 => prop_oneof![Just(0u64), (1u64..8).prop_map(|n| n * 250), 1u64..1500, 1500u64..6000]
            .prop_map(Op::Advance),
        1 => Just(Op::Sweep),
    ]
}

/// A TTL-style command suffix and its expected value from (deadline, now).
type TtlForm = (&'static str, fn(u64, u64) -> i64);

/// The model: live members with their value and deadline.
type Model = BTreeMap<Bytes, (u32, Option<u64>)>;

fn name(i: u8) -> Bytes {
    Bytes::from(format!("m{i}"))
}

fn purge(model: &mut Model, now: u64) {
    model.retain(|_, (_, d)| d.is_none_or(|d| d > now));
}

fn run_words(h: &mut Harness, words: &[String]) -> Reply {
    let w: Vec<&str> = words.iter().map(|s| s.as_str()).collect();
    h.run(&w)
}

fn words(parts: &[&str], members: &[u8]) -> Vec<String> {
    let mut v: Vec<String> = parts.iter().map(|s| s.to_string()).collect();
    v.extend(members.iter().map(|m| format!("m{m}")));
    v
}

/// Expected EXPIRE-style codes, applying them to the model.
fn model_expire(model: &mut Model, members: &[u8], at: u64, now: u64, cond: Cond) -> Vec<i64> {
    members
        .iter()
        .map(|&m| {
            let k = name(m);
            let Some((_, d)) = model.get_mut(&k) else {
                return NO_MEMBER;
            };
            // Written out independently of `Cond::allows`: no deadline is infinity.
            let current = d.unwrap_or(u64::MAX);
            let allowed = match cond {
                Cond::Always => true,
                Cond::Nx => d.is_none(),
                Cond::Xx => d.is_some(),
                Cond::Gt => d.is_some() && at > current,
                Cond::Lt => at < current,
            };
            if !allowed {
                NOT_MET
            } else if at <= now {
                model.remove(&k);
                DELETED
            } else {
                *d = Some(at);
                SET
            }
        })
        .collect()
}

/// Applies `op` to the harness and the model, asserting every reply.
fn step<T: Subject>(h: &mut Harness, model: &mut Model, op: &Op) {
    let now = h.now;
    purge(model, now);
    let kw = T::NAMES.keyword;
    let p = T::PREFIX;
    match op {
        Op::Add(m, val) => {
            let mut fx = Effects::default();
            let mut ctx = Ctx::new(&mut h.store, 0, now, &mut fx);
            let v = ctx.get_or_create::<T>(KEY.as_bytes()).expect("member type");
            v.add(name(*m), *val);
            ctx.finish();
            let e = model.entry(name(*m)).or_insert((0, None));
            e.0 = T::model_value(*val);
            if !T::ADD_KEEPS_DEADLINE {
                e.1 = None;
            }
        }
        Op::Remove(m) => {
            let mut fx = Effects::default();
            let mut ctx = Ctx::new(&mut h.store, 0, now, &mut fx);
            let removed = match ctx.get_mut::<T>(KEY.as_bytes()).expect("member type") {
                Some(v) => v.remove_member(&name(*m)),
                None => false,
            };
            ctx.finish();
            assert_eq!(removed, model.remove(&name(*m)).is_some());
        }
        Op::Expire {
            form,
            t,
            cond,
            members,
        } => {
            let conds = [Cond::Always, Cond::Nx, Cond::Xx, Cond::Gt, Cond::Lt];
            let cond = conds[*cond as usize % conds.len()];
            let (cmd, arg, at) = match form {
                0 => {
                    let s = t.rem_euclid(8) as u64;
                    ("EXPIRE", s.to_string(), now + s * 1000)
                }
                1 => {
                    let ms = t.unsigned_abs();
                    ("PEXPIRE", ms.to_string(), now + ms)
                }
                2 => {
                    let s = (now / 1000).saturating_add_signed(t / 1000);
                    ("EXPIREAT", s.to_string(), s * 1000)
                }
                _ => {
                    let ms = now.saturating_add_signed(*t);
                    ("PEXPIREAT", ms.to_string(), ms)
                }
            };
            let mut parts = vec![format!("{p}{cmd}"), KEY.to_string(), arg];
            match cond {
                Cond::Always => {}
                Cond::Nx => parts.push("NX".into()),
                Cond::Xx => parts.push("xx".into()),
                Cond::Gt => parts.push("GT".into()),
                Cond::Lt => parts.push("lt".into()),
            }
            parts.push(kw.into());
            parts.push(members.len().to_string());
            parts.extend(members.iter().map(|m| format!("m{m}")));
            let expect = model_expire(model, members, at, now, cond);
            let reply = run_words(h, &parts);
            assert_eq!(
                reply,
                Reply::Array(expect.iter().map(|c| Reply::Int(*c)).collect()),
                "{parts:?}"
            );
        }
        Op::ExpireMember {
            member,
            delay,
            unit,
        } => {
            let (unit_arg, mult) = match unit {
                0 => (None, 1000),
                1 => (Some("s"), 1000),
                _ => (Some("ms"), 1),
            };
            let delay = if mult == 1 { delay * 400 } else { *delay };
            let mut parts = vec![
                "EXPIREMEMBER".to_string(),
                KEY.into(),
                format!("m{member}"),
                delay.to_string(),
            ];
            parts.extend(unit_arg.map(String::from));
            let at = (now as i64 + delay * mult).max(0) as u64;
            let code = model_expire(model, &[*member], at, now, Cond::Always)[0];
            let reply = run_words(h, &parts);
            assert_eq!(reply, Reply::Int(i64::from(code != NO_MEMBER)), "{parts:?}");
        }
        Op::FieldExpire { secs, members } => {
            let s = secs.to_string();
            let parts = words(&["FIELDEXPIRE", KEY, &s], members);
            let expect = model_expire(model, members, now + secs * 1000, now, Cond::Always);
            let reply = run_words(h, &parts);
            assert_eq!(
                reply,
                Reply::Array(expect.iter().map(|c| Reply::Int(*c)).collect())
            );
        }
        Op::Persist(members) => {
            let n = members.len().to_string();
            let cmd = format!("{p}PERSIST");
            let parts = words(&[&cmd, KEY, kw, &n], members);
            let expect: Vec<Reply> = members
                .iter()
                .map(|m| match model.get_mut(&name(*m)) {
                    None => Reply::Int(NO_MEMBER),
                    Some((_, d)) => Reply::Int(if d.take().is_some() { SET } else { NO_DEADLINE }),
                })
                .collect();
            assert_eq!(run_words(h, &parts), Reply::Array(expect));
        }
        Op::PersistMember(m) => {
            let parts = words(&["PERSIST", KEY], &[*m]);
            let had = model
                .get_mut(&name(*m))
                .and_then(|(_, d)| d.take())
                .is_some();
            assert_eq!(run_words(h, &parts), Reply::Int(i64::from(had)));
        }
        Op::Ttl(members) => {
            let n = members.len().to_string();
            let forms: [TtlForm; 4] = [
                ("TTL", |at, now| (at - now).div_ceil(1000) as i64),
                ("PTTL", |at, now| (at - now) as i64),
                ("EXPIRETIME", |at, _| at.div_ceil(1000) as i64),
                ("PEXPIRETIME", |at, _| at as i64),
            ];
            for (cmd, f) in forms {
                let cmd = format!("{p}{cmd}");
                let parts = words(&[&cmd, KEY, kw, &n], members);
                let expect: Vec<Reply> = members
                    .iter()
                    .map(|m| {
                        Reply::Int(match model.get(&name(*m)) {
                            None => NO_MEMBER,
                            Some((_, None)) => NO_DEADLINE,
                            Some((_, Some(at))) => f(*at, now),
                        })
                    })
                    .collect();
                assert_eq!(run_words(h, &parts), Reply::Array(expect), "{parts:?}");
            }
            let m = members[0];
            let one = model.get(&name(m)).map(|(_, d)| *d);
            let key_ttl = |ms: bool| match one {
                None => NO_MEMBER,
                Some(None) => NO_DEADLINE,
                Some(Some(at)) if ms => (at - now) as i64,
                Some(Some(at)) => ((at - now) as i64 + 999) / 1000,
            };
            assert_eq!(
                run_words(h, &words(&["TTL", KEY], &[m])),
                Reply::Int(key_ttl(false))
            );
            assert_eq!(
                run_words(h, &words(&["PTTL", KEY], &[m])),
                Reply::Int(key_ttl(true))
            );
            let field_ttl = match one {
                _ if model.is_empty() => -2,
                None => -3,
                Some(None) => NO_DEADLINE,
                Some(Some(at)) => (at - now).div_ceil(1000) as i64,
            };
            assert_eq!(
                run_words(h, &words(&["FIELDTTL", KEY], &[m])),
                Reply::Int(field_ttl)
            );
        }
        Op::Advance(ms) => h.advance(*ms),
        Op::Sweep => {
            h.sweep();
            assert!(!h.store.has_due(h.now), "nothing due after a sweep");
            let db = &h.store.dbs[0];
            let stats = db.stats();
            let any_deadline = model.values().any(|(_, d)| d.is_some());
            assert_eq!(stats.member_expiry_keys, usize::from(any_deadline));
            assert_eq!(stats.keys, usize::from(!model.is_empty()));
            if let Some(v) = db.raw_get(KEY.as_bytes()).and_then(|e| T::raw(&e.value)) {
                assert_eq!(v.member_count(), model.len(), "sweep left due members");
                assert!(v.deadlines().is_none_or_after(h.now));
            }
        }
    }
    check::<T>(h, model);
}

/// Helper so sweep checks can ask a value's deadlines for "nothing due".
trait DueCheck {
    fn is_none_or_after(&self, now: u64) -> bool;
}
impl DueCheck for crate::expiry::MemberDeadlines<'_> {
    fn is_none_or_after(&self, now: u64) -> bool {
        self.earliest().is_none_or(|t| t > now)
    }
}

/// A read-only view of the member deadlines of each type.
trait Deadlines {
    fn deadlines(&self) -> crate::expiry::MemberDeadlines<'_>;
}
impl Deadlines for SetValue {
    fn deadlines(&self) -> crate::expiry::MemberDeadlines<'_> {
        SetValue::deadlines(self)
    }
}
impl Deadlines for ZSetValue {
    fn deadlines(&self) -> crate::expiry::MemberDeadlines<'_> {
        ZSetValue::deadlines(self)
    }
}
impl Deadlines for HashValue {
    fn deadlines(&self) -> crate::expiry::MemberDeadlines<'_> {
        HashValue::deadlines(self)
    }
}

/// Compares cardinality, membership, values and deadlines with the model,
/// reading through the context (so lazy expiry applies, as for any command).
fn check<T: Subject>(h: &mut Harness, model: &mut Model) {
    let now = h.now;
    purge(model, now);
    let mut fx = Effects::default();
    let mut ctx = Ctx::new(&mut h.store, 0, now, &mut fx);
    let v = ctx.get::<T>(KEY.as_bytes()).expect("member type");
    match v {
        None => assert!(model.is_empty(), "key missing but model has {model:?}"),
        Some(v) => {
            assert!(!model.is_empty(), "an empty collection must not exist");
            assert_eq!(v.member_count(), model.len());
            for i in 0..UNIVERSE {
                let m = name(i);
                let expect = model.get(&m);
                assert_eq!(v.value(&m), expect.map(|(val, _)| *val), "value of {m:?}");
                assert_eq!(
                    v.deadline_of(&m),
                    expect.and_then(|(_, d)| *d),
                    "deadline of {m:?}"
                );
            }
        }
    }
}

fn run_ops<T: Subject>(ops: &[Op]) {
    let mut h = Harness::new();
    let mut model = Model::new();
    for op in ops {
        step::<T>(&mut h, &mut model, op);
    }
    h.advance(10_000);
    step::<T>(&mut h, &mut model, &Op::Sweep);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn set_members_match_the_model(ops in prop::collection::vec(op(), 1..32)) {
        run_ops::<SetValue>(&ops);
    }

    #[test]
    fn zset_members_match_the_model(ops in prop::collection::vec(op(), 1..32)) {
        run_ops::<ZSetValue>(&ops);
    }

    #[test]
    fn hash_fields_match_the_model(ops in prop::collection::vec(op(), 1..32)) {
        run_ops::<HashValue>(&ops);
    }
}
