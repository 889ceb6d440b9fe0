//! Redis DUMP payloads written by ebb, for values Redis can hold: no
//! member carries a deadline. They use the plainest types every Redis
//! since 4.0 reads (string, list, set, hash, sorted set with binary
//! scores) under RDB version 9, so Redis 6.2 and 7.x RESTORE them (and
//! MIGRATE from ebb to Redis works); Redis re-encodes them as it would its
//! own. A value with a live member deadline has no Redis form: DUMP then
//! writes ebb's own payload.

use crate::db::Store;
use crate::expiry::MemberDeadlines;
use crate::value::Value;

use super::crc64;

/// The RDB version written in the footer.
const WRITE_VERSION: u16 = 9;

fn put_len(out: &mut Vec<u8>, n: usize) {
    match n {
        0..=63 => out.push(n as u8),
        64..=16383 => out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]),
        _ => match u32::try_from(n) {
            Ok(n) => {
                out.push(0x80);
                out.extend_from_slice(&n.to_be_bytes());
            }
            Err(_) => {
                out.push(0x81);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        },
    }
}

/// A string, as an 8, 16 or 32-bit integer when it is one written
/// canonically (as Redis stores such strings), else its bytes.
fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    if s.len() <= 11 {
        if let Some(i) = std::str::from_utf8(s)
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
            .filter(|i| i.to_string().as_bytes() == s)
        {
            if let Ok(v) = i8::try_from(i) {
                out.extend_from_slice(&[0xc0, v as u8]);
                return;
            }
            if let Ok(v) = i16::try_from(i) {
                out.push(0xc1);
                out.extend_from_slice(&v.to_le_bytes());
                return;
            }
            if let Ok(v) = i32::try_from(i) {
                out.push(0xc2);
                out.extend_from_slice(&v.to_le_bytes());
                return;
            }
        }
    }
    put_raw_string(out, s);
}

/// A string as its length and bytes.
pub(super) fn put_raw_string(out: &mut Vec<u8>, s: &[u8]) {
    put_len(out, s.len());
    out.extend_from_slice(s);
}

/// The name of the AUX field after a key whose members carry deadlines:
/// Redis skips AUX fields it does not know, so a snapshot stays loadable
/// by Redis (whose members then simply have no deadline).
pub(super) const DEADLINES_AUX: &[u8] = b"ebb-member-deadlines";

/// The live members of a value with member deadlines, as the AUX value
/// ebb reads back: a kind byte (`s`, `z`, `h`), the key, then each member
/// and its deadline (8 bytes, little-endian), in deadline order.
fn deadlines_aux(kind: u8, key: &[u8], d: MemberDeadlines<'_>, now: u64) -> Option<Vec<u8>> {
    let mut out = vec![kind];
    put_raw_string(&mut out, key);
    let mut any = false;
    for (m, t) in d.iter().filter(|&(_, t)| t > now) {
        put_raw_string(&mut out, m);
        out.extend_from_slice(&t.to_le_bytes());
        any = true;
    }
    any.then_some(out)
}

/// A value as an RDB type byte and its encoding, members already due at
/// `now` left out, plus (for a snapshot) the AUX value of its members'
/// deadlines. None when nothing is left, or when `deadlines_for` is None
/// and a member has a live deadline (a DUMP payload has no room for one).
fn value_record(
    value: &Value,
    now: u64,
    deadlines_for: Option<&[u8]>,
) -> Option<(u8, Vec<u8>, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let aux = |kind: u8, d: MemberDeadlines<'_>| -> Result<Option<Vec<u8>>, ()> {
        match deadlines_for {
            Some(key) => Ok(deadlines_aux(kind, key, d, now)),
            None if d.iter().any(|(_, t)| t > now) => Err(()),
            None => Ok(None),
        }
    };
    let (t, deadlines) = match value {
        Value::Str(v) => {
            put_string(&mut out, &v.to_bytes());
            (0, None)
        }
        Value::List(l) => {
            put_len(&mut out, l.len());
            for item in l.iter_bytes() {
                put_string(&mut out, &item);
            }
            (1, None)
        }
        Value::Set(s) => {
            let d = s.deadlines();
            let deadlines = aux(b's', d).ok()?;
            let members: Vec<&[u8]> = s.iter().filter(|m| !d.is_due(m, now)).collect();
            if members.is_empty() {
                return None;
            }
            put_len(&mut out, members.len());
            for m in members {
                put_string(&mut out, m);
            }
            (2, deadlines)
        }
        Value::Hash(h) => {
            let d = h.deadlines();
            let deadlines = aux(b'h', d).ok()?;
            let fields: Vec<(&[u8], &[u8])> = h.iter().filter(|(f, _)| !d.is_due(f, now)).collect();
            if fields.is_empty() {
                return None;
            }
            put_len(&mut out, fields.len());
            for (f, v) in fields {
                put_string(&mut out, f);
                put_string(&mut out, v);
            }
            (4, deadlines)
        }
        Value::ZSet(z) => {
            let d = z.deadlines();
            let deadlines = aux(b'z', d).ok()?;
            let members: Vec<(&[u8], f64)> = z.iter().filter(|(m, _)| !d.is_due(m, now)).collect();
            if members.is_empty() {
                return None;
            }
            put_len(&mut out, members.len());
            for (m, s) in members {
                put_string(&mut out, m);
                out.extend_from_slice(&s.to_le_bytes());
            }
            (5, deadlines)
        }
    };
    Some((t, out, deadlines))
}

/// The Redis DUMP payload of `value` at `now`, or None when the value
/// has a member deadline (or nothing left once due members are gone).
pub fn redis_payload(value: &Value, now: u64) -> Option<Vec<u8>> {
    let (t, body, _) = value_record(value, now, None)?;
    let mut out = vec![t];
    out.extend_from_slice(&body);
    out.extend_from_slice(&WRITE_VERSION.to_le_bytes());
    let sum = crc64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    Some(out)
}

fn put_aux(out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    out.push(super::file::OP_AUX);
    put_raw_string(out, key);
    put_raw_string(out, value);
}

/// The whole keyspace as a Redis RDB file (version 10): function
/// libraries, then every database's keys with their TTLs. Keys whose TTL
/// passed but that are still held are written too, as Redis writes them
/// (the load after drops and counts them). Member deadlines go in an AUX
/// field after their key ([`DEADLINES_AUX`]), so Redis 7 loads the file
/// too, without them.
pub fn snapshot(store: &Store, now: u64) -> Vec<u8> {
    write_file(store, now, false)
}

/// [`snapshot`] as the base of an AOF (`aof-use-rdb-preamble yes`): the
/// same file, marked with Redis's `aof-base` AUX field.
pub fn aof_base(store: &Store, now: u64) -> Vec<u8> {
    write_file(store, now, true)
}

fn write_file(store: &Store, now: u64, aof_base: bool) -> Vec<u8> {
    use super::file::{OP_EOF, OP_EXPIRETIME_MS, OP_FUNCTION2, OP_RESIZEDB, OP_SELECTDB};
    let mut out = b"REDIS0010".to_vec();
    put_aux(&mut out, b"redis-ver", b"7.0.15");
    put_aux(&mut out, b"redis-bits", b"64");
    put_aux(&mut out, b"ctime", (now / 1000).to_string().as_bytes());
    put_aux(&mut out, b"aof-base", if aof_base { b"1" } else { b"0" });
    put_aux(&mut out, b"ebb-ver", env!("CARGO_PKG_VERSION").as_bytes());
    for (_, code) in store.functions.iter() {
        out.push(OP_FUNCTION2);
        put_raw_string(&mut out, code);
    }
    for (i, db) in store.dbs.iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        out.push(OP_SELECTDB);
        put_len(&mut out, i);
        out.push(OP_RESIZEDB);
        put_len(&mut out, db.len());
        put_len(
            &mut out,
            db.raw_iter()
                .filter(|(_, e)| e.expire_at().is_some())
                .count(),
        );
        for (k, e) in db.raw_iter() {
            let Some((t, body, deadlines)) = value_record(&e.value, now, Some(k)) else {
                continue;
            };
            if let Some(at) = e.expire_at() {
                out.push(OP_EXPIRETIME_MS);
                out.extend_from_slice(&at.to_le_bytes());
            }
            out.push(t);
            put_string(&mut out, k);
            out.extend_from_slice(&body);
            if let Some(d) = deadlines {
                put_aux(&mut out, DEADLINES_AUX, &d);
            }
        }
    }
    out.push(OP_EOF);
    let sum = crc64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    /// DUMP of `key` in the harness, RESTOREd under `copy`: the two read
    /// the same through `read` (`K` standing for the key).
    fn round_trip(h: &mut Harness, key: &str, read: &[&str]) {
        let now = h.now;
        let payload = {
            let e = h.store.dbs[0].peek(key.as_bytes()).expect("key");
            redis_payload(&e.value, now).expect("a Redis payload")
        };
        h.run(&["DEL", "copy"]);
        let mut cmds = Vec::new();
        super::super::payload_commands(&payload, b"copy", &mut |c| {
            cmds.push(crate::args::to_owned(c))
        })
        .unwrap();
        for c in &cmds {
            let args: Vec<&[u8]> = c.iter().map(|a| &a[..]).collect();
            h.run_bytes(&args);
        }
        let with = |k: &'static str| -> Vec<&str> {
            read.iter()
                .map(|a| if *a == "K" { k } else { *a })
                .collect()
        };
        let key: &'static str = Box::leak(key.to_string().into_boxed_str());
        let a = h.run(&with(key));
        let b = h.run(&with("copy"));
        assert_eq!(a, b, "{key}");
    }

    #[test]
    fn every_type_round_trips_through_the_redis_form() {
        let mut h = Harness::new();
        h.run(&["SET", "s", "hello"]);
        h.run(&["SET", "i", "-70000"]);
        h.run(&["SET", "pad", "007"]);
        h.run(&["RPUSH", "l", "a", "1", "-129", "32768", "3000000000"]);
        h.run(&["SADD", "set", "x", "12", "y"]);
        h.run(&["HSET", "h", "f", "v", "n", "5"]);
        h.run(&["ZADD", "z", "0.1", "a", "-inf", "b", "1e300", "c"]);
        round_trip(&mut h, "s", &["GET", "K"]);
        round_trip(&mut h, "i", &["GET", "K"]);
        round_trip(&mut h, "pad", &["GET", "K"]);
        round_trip(&mut h, "l", &["LRANGE", "K", "0", "-1"]);
        round_trip(&mut h, "set", &["SMEMBERS", "K"]);
        round_trip(&mut h, "h", &["HGETALL", "K"]);
        round_trip(&mut h, "z", &["ZRANGE", "K", "0", "-1", "WITHSCORES"]);
    }

    #[test]
    fn a_snapshot_carries_member_deadlines_and_expired_keys() {
        let mut h = Harness::new();
        let far = (h.now + 3_600_000).to_string();
        h.run(&["SADD", "s", "a", "b"]);
        h.run(&["SPEXPIREAT", "s", &far, "MEMBERS", "1", "a"]);
        h.run(&["ZADD", "z", "1", "m", "2", "n"]);
        h.run(&["ZPEXPIREAT", "z", &far, "MEMBERS", "2", "m", "n"]);
        h.run(&["HSET", "h", "f", "v"]);
        h.run(&["HPEXPIREAT", "h", &far, "FIELDS", "1", "f"]);
        h.run(&["SET", "old", "x", "PX", "10"]);
        let later = h.now + 1000;
        let data = snapshot(&h.store, later);
        let mut cmds = Vec::new();
        let loaded =
            super::super::file_commands(&data, 16, &mut |c| cmds.push(super::super::as_text(c)))
                .unwrap();
        // The key past its TTL is written (with that TTL), as Redis does.
        assert_eq!(loaded.keys, 4);
        let has = |want: &[&str]| cmds.iter().any(|c| c == want);
        assert!(
            has(&["SPEXPIREAT", "s", &far, "MEMBERS", "1", "a"]),
            "{cmds:?}"
        );
        assert!(
            has(&["ZPEXPIREAT", "z", &far, "MEMBERS", "2", "m", "n"]),
            "{cmds:?}"
        );
        assert!(
            has(&["HPEXPIREAT", "h", &far, "FIELDS", "1", "f"]),
            "{cmds:?}"
        );
        assert!(
            cmds.iter().any(|c| c[0] == "PEXPIREAT" && c[1] == "old"),
            "{cmds:?}"
        );
    }

    #[test]
    fn a_live_member_deadline_has_no_redis_form() {
        let mut h = Harness::new();
        h.run(&["SADDEX", "s", "100", "m"]);
        let e = h.store.dbs[0].peek(b"s").unwrap();
        assert!(redis_payload(&e.value, h.now).is_none());
    }

    #[test]
    fn lengths_of_every_size() {
        for (n, want) in [
            (63usize, vec![63u8]),
            (64, vec![0x40, 64]),
            (16383, vec![0x7f, 0xff]),
            (16384, vec![0x80, 0, 0, 0x40, 0]),
        ] {
            let mut out = Vec::new();
            put_len(&mut out, n);
            assert_eq!(out, want, "{n}");
        }
    }
}
