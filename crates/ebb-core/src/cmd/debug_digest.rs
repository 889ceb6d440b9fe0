//! Content digests behind `DEBUG DIGEST` and `DEBUG DIGEST-VALUE`: two
//! values with the same logical content (same elements, member deadlines,
//! and for the dataset digest also key names and TTLs) get the same
//! 40-hex-digit digest, whatever their internal layout or insertion order
//! where the type has no order (sets, hashes, sorted sets).
//!
//! The digests are only meant to be compared with other digests of the same
//! server, as Redis's own test suite does (a copy against its source, a
//! dataset before and after a reload); they are not Redis's SHA1 values.

use std::hash::Hasher;

use bytes::Bytes;

use crate::db::{Db, Entry};
use crate::reply::format_double;
use crate::value::Value;

/// A 160-bit digest, the size Redis reports.
pub type Digest = [u8; 20];

/// The digest of an empty dataset or a missing key: all zeros, as in Redis.
pub const ZERO: Digest = [0; 20];

/// Three independently seeded 64-bit hashes of the same byte strings.
struct Mix([u64; 3]);

impl Mix {
    fn of(parts: &[&[u8]]) -> Mix {
        let mut out = [0u64; 3];
        for (seed, slot) in out.iter_mut().enumerate() {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            h.write_u64(0x9e37_79b9_7f4a_7c15 ^ seed as u64);
            for p in parts {
                h.write_usize(p.len());
                h.write(p);
            }
            *slot = h.finish();
        }
        Mix(out)
    }

    fn xor(&mut self, other: &Mix) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a ^= b;
        }
    }

    fn bytes(&self) -> [u8; 24] {
        let mut out = [0u8; 24];
        for (i, v) in self.0.iter().enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        out
    }

    fn digest(&self) -> Digest {
        let mut d = ZERO;
        d.copy_from_slice(&self.bytes()[..20]);
        d
    }
}

/// Folds an ordered sequence of elements into one mix.
fn ordered<'a>(tag: &[u8], items: impl Iterator<Item = &'a [u8]>) -> Mix {
    let mut state = Mix::of(&[tag]);
    for it in items {
        let prev = state.bytes();
        state = Mix::of(&[&prev, it]);
    }
    state
}

/// Folds elements without order: the XOR of each element's own mix.
fn unordered(tag: &[u8], items: impl Iterator<Item = Mix>) -> Mix {
    let mut state = Mix::of(&[tag]);
    let mut n = 0u64;
    for it in items {
        state.xor(&it);
        n += 1;
    }
    let prev = state.bytes();
    Mix::of(&[&prev, &n.to_le_bytes()])
}

fn deadline_bytes(d: Option<u64>) -> [u8; 8] {
    d.map_or([0xff; 8], u64::to_le_bytes)
}

/// The digest of one value; members already due at `now` do not count.
pub fn value_digest(v: &Value, now: u64) -> Digest {
    let live = |d: Option<u64>| d.is_none_or(|t| t > now);
    let m = match v {
        Value::Str(s) => Mix::of(&[b"string", s]),
        Value::List(l) => ordered(b"list", l.iter()),
        Value::Set(s) => {
            let dl = s.deadlines();
            unordered(
                b"set",
                s.iter().filter_map(|m| {
                    let d = dl.get(m);
                    live(d).then(|| Mix::of(&[m, &deadline_bytes(d)]))
                }),
            )
        }
        Value::Hash(h) => {
            let dl = h.deadlines();
            unordered(
                b"hash",
                h.iter().filter_map(|(f, val)| {
                    let d = dl.get(f);
                    live(d).then(|| Mix::of(&[f, val, &deadline_bytes(d)]))
                }),
            )
        }
        Value::ZSet(z) => {
            let dl = z.deadlines();
            unordered(
                b"zset",
                z.iter().filter_map(|(m, score)| {
                    let d = dl.get(m);
                    let s = format_double(score);
                    live(d).then(|| Mix::of(&[m, s.as_bytes(), &deadline_bytes(d)]))
                }),
            )
        }
    };
    m.digest()
}

fn live_entry(e: &Entry, now: u64) -> bool {
    e.expire_at().is_none_or(|t| t > now)
}

/// `DEBUG DIGEST-VALUE` for one key: [`ZERO`] when the key is missing.
pub fn key_digest(db: &Db, key: &[u8], now: u64) -> Digest {
    match db.raw_get(key) {
        Some(e) if live_entry(e, now) => value_digest(&e.value, now),
        _ => ZERO,
    }
}

/// `DEBUG DIGEST`: every live key of every database with its value and TTL;
/// [`ZERO`] when the dataset is empty.
pub fn dataset_digest<'a>(dbs: impl Iterator<Item = &'a Db>, now: u64) -> Digest {
    let mut acc = Mix([0; 3]);
    let mut any = false;
    for (i, db) in dbs.enumerate() {
        let idx = (i as u64).to_le_bytes();
        for (key, e) in db.raw_iter() {
            if !live_entry(e, now) {
                continue;
            }
            any = true;
            let vd = value_digest(&e.value, now);
            acc.xor(&Mix::of(&[&idx, key, &vd, &deadline_bytes(e.expire_at())]));
        }
    }
    if any {
        acc.digest()
    } else {
        ZERO
    }
}

/// A digest as Redis prints it: 40 lowercase hex digits.
pub fn hex(d: &Digest) -> Bytes {
    let mut s = String::with_capacity(40);
    for b in d {
        s.push_str(&format!("{b:02x}"));
    }
    Bytes::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    fn digest(h: &Harness, key: &str) -> Bytes {
        hex(&key_digest(&h.store.dbs[0], key.as_bytes(), h.now))
    }

    #[test]
    fn copies_and_reordered_values_share_a_digest() {
        let mut h = Harness::new();
        h.run(&["SADD", "a", "x", "y", "z"]);
        h.run(&["SADD", "b", "z", "y", "x"]);
        assert_eq!(digest(&h, "a"), digest(&h, "b"));
        h.run(&["HSET", "h1", "f", "1", "g", "2"]);
        h.run(&["HSET", "h2", "g", "2", "f", "1"]);
        assert_eq!(digest(&h, "h1"), digest(&h, "h2"));
        h.run(&["ZADD", "z1", "1", "a", "2", "b"]);
        h.run(&["COPY", "z1", "z2"]);
        assert_eq!(digest(&h, "z1"), digest(&h, "z2"));
        assert_eq!(digest(&h, "z1").len(), 40);
    }

    #[test]
    fn different_content_gives_different_digests() {
        let mut h = Harness::new();
        h.run(&["RPUSH", "l1", "a", "b"]);
        h.run(&["RPUSH", "l2", "b", "a"]);
        assert_ne!(digest(&h, "l1"), digest(&h, "l2"));
        h.run(&["SET", "s", "a"]);
        h.run(&["SADD", "t", "a"]);
        assert_ne!(digest(&h, "s"), digest(&h, "t"));
        h.run(&["ZADD", "z1", "1", "a"]);
        h.run(&["ZADD", "z2", "2", "a"]);
        assert_ne!(digest(&h, "z1"), digest(&h, "z2"));
    }

    #[test]
    fn missing_keys_and_empty_datasets_digest_to_zeros() {
        let mut h = Harness::new();
        assert_eq!(digest(&h, "nope"), Bytes::from("0".repeat(40)));
        assert_eq!(dataset_digest(h.store.dbs.iter(), h.now), ZERO);
        h.run(&["SET", "k", "v"]);
        let one = dataset_digest(h.store.dbs.iter(), h.now);
        assert_ne!(one, ZERO);
        h.run(&["PEXPIRE", "k", "100000"]);
        assert_ne!(dataset_digest(h.store.dbs.iter(), h.now), one);
        h.run(&["PERSIST", "k"]);
        assert_eq!(dataset_digest(h.store.dbs.iter(), h.now), one);
    }
}
