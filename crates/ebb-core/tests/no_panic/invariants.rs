//! The keyspace invariants checked after every step.

#[allow(unused_imports)]
use super::*;

/// The keyspace invariants; `swept` adds "nothing is due any more".
pub(crate) fn check(store: &Store, now: u64, swept: bool) -> Result<(), String> {
    for (i, db) in store.dbs.iter().enumerate() {
        let (mut expires, mut with_members) = (0, 0);
        for (k, e) in db.raw_iter() {
            let at = format!("db {i} key \"{}\"", k.escape_ascii());
            if e.value.is_empty_collection() {
                return Err(format!("empty collection left at {at}"));
            }
            if let Some(t) = e.expire_at() {
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
pub(crate) fn check_value(v: &Value) -> Result<(), String> {
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
pub(crate) fn check_keys(argv: &[&[u8]]) -> Result<(), TestCaseError> {
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
