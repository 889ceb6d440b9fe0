//! The keyspace as a stream of commands that rebuild it exactly: values,
//! key TTLs and member deadlines (absolute). Used by AOF rewrite and
//! snapshots.

use bytes::Bytes;

use crate::db::{Db, Entry};
use crate::expiry::MemberDeadlines;
use crate::reply::format_double;
use crate::value::Value;

/// FNV-1a, 64 bit: the checksum of snapshots and DUMP payloads (enough to
/// notice damage, cheap to compute).
pub fn checksum(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in data {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// Elements per command, so no single command gets huge.
const CHUNK: usize = 512;

fn b(s: &'static str) -> Bytes {
    Bytes::from_static(s.as_bytes())
}

fn num(n: u64) -> Bytes {
    Bytes::from(n.to_string())
}

/// Calls `emit` with every command that rebuilds `key` (value, member
/// deadlines, key TTL). Members already due at `now` are skipped.
pub fn entry_commands(key: &Bytes, e: &Entry, now: u64, emit: &mut dyn FnMut(Vec<Bytes>)) {
    value_commands(key, &e.value, now, emit);
    if let Some(t) = e.expire_at() {
        emit(vec![b("PEXPIREAT"), key.clone(), num(t)]);
    }
}

/// Calls `emit` with every command that rebuilds `value` under `key`,
/// member deadlines included (not a key TTL: DUMP's payload).
pub fn value_commands(key: &Bytes, value: &Value, now: u64, emit: &mut dyn FnMut(Vec<Bytes>)) {
    let live = |d: MemberDeadlines<'_>, m: &[u8]| !d.is_due(m, now);
    match value {
        Value::Str(v) => emit(vec![b("SET"), key.clone(), v.to_bytes()]),
        Value::List(l) => {
            let items: Vec<Bytes> = l.iter_bytes().collect();
            for c in items.chunks(CHUNK) {
                let mut cmd = vec![b("RPUSH"), key.clone()];
                cmd.extend(c.iter().cloned());
                emit(cmd);
            }
        }
        Value::Set(s) => {
            let d = s.deadlines();
            let members: Vec<&[u8]> = s.iter().filter(|m| live(d, m)).collect();
            for c in members.chunks(CHUNK) {
                let mut cmd = vec![b("SADD"), key.clone()];
                cmd.extend(c.iter().map(|x| Bytes::copy_from_slice(x)));
                emit(cmd);
            }
            deadline_commands("SPEXPIREAT", "MEMBERS", key, d, now, emit);
        }
        Value::Hash(h) => {
            let d = h.deadlines();
            let fields: Vec<(&[u8], &[u8])> = h.iter().filter(|(f, _)| live(d, f)).collect();
            for c in fields.chunks(CHUNK) {
                let mut cmd = vec![b("HSET"), key.clone()];
                for (f, v) in c {
                    cmd.push(Bytes::copy_from_slice(f));
                    cmd.push(Bytes::copy_from_slice(v));
                }
                emit(cmd);
            }
            deadline_commands("HPEXPIREAT", "FIELDS", key, d, now, emit);
        }
        Value::ZSet(z) => {
            let d = z.deadlines();
            let members: Vec<(&[u8], f64)> = z.iter().filter(|(m, _)| live(d, m)).collect();
            for c in members.chunks(CHUNK) {
                let mut cmd = vec![b("ZADD"), key.clone()];
                for (m, s) in c {
                    cmd.push(Bytes::from(format_double(*s)));
                    cmd.push(Bytes::copy_from_slice(m));
                }
                emit(cmd);
            }
            deadline_commands("ZPEXPIREAT", "MEMBERS", key, d, now, emit);
        }
    }
}

/// `<cmd> key <t> MEMBERS n m…` for each group of members sharing a
/// deadline still ahead of `now`.
fn deadline_commands(
    cmd: &'static str,
    word: &'static str,
    key: &Bytes,
    d: MemberDeadlines<'_>,
    now: u64,
    emit: &mut dyn FnMut(Vec<Bytes>),
) {
    let live = d.iter().filter(|&(_, t)| t > now);
    deadline_runs(
        cmd,
        word,
        key,
        live.map(|(m, t)| (Bytes::copy_from_slice(m), t)),
        emit,
    );
}

/// `<cmd> key <t> <word> n m…` for each run of (member, deadline) pairs,
/// given in deadline order, that share a deadline ([`CHUNK`] members at
/// most a command).
pub(crate) fn deadline_runs(
    cmd: &'static str,
    word: &'static str,
    key: &Bytes,
    pairs: impl IntoIterator<Item = (Bytes, u64)>,
    emit: &mut dyn FnMut(Vec<Bytes>),
) {
    let mut group: Vec<Bytes> = Vec::new();
    let mut at = 0u64;
    let mut flush = |at: u64, group: &mut Vec<Bytes>| {
        if group.is_empty() {
            return;
        }
        let mut c = vec![
            b(cmd),
            key.clone(),
            num(at),
            b(word),
            num(group.len() as u64),
        ];
        c.append(group);
        emit(c);
    };
    for (m, t) in pairs {
        if t != at || group.len() >= CHUNK {
            flush(at, &mut group);
            at = t;
        }
        group.push(m);
    }
    flush(at, &mut group);
}

/// Every command that rebuilds `db`, skipping keys already expired at
/// `now` (as Redis's AOF rewrite skips them; snapshots keep them, see
/// [`crate::rdb::snapshot`]).
pub fn db_commands(db: &Db, now: u64, emit: &mut dyn FnMut(Vec<Bytes>)) {
    for (k, e) in db.raw_iter() {
        if matches!(e.expire_at(), Some(t) if t <= now) {
            continue;
        }
        if e.value.earliest_deadline().is_some() {
            let all_due = match &e.value {
                Value::Set(s) => s.iter().all(|m| s.deadlines().is_due(m, now)),
                Value::Hash(h) => h.iter().all(|(f, _)| h.deadlines().is_due(f, now)),
                Value::ZSet(z) => z.iter().all(|(m, _)| z.deadlines().is_due(m, now)),
                _ => false,
            };
            if all_due {
                continue;
            }
        }
        entry_commands(&Bytes::copy_from_slice(k), e, now, emit);
    }
}
