//! One value of an RDB stream, decoded straight into the commands that
//! rebuild it: elements go out in commands of [`CHUNK`] as they are read,
//! so nothing but the value being built is held, however the input claims
//! to expand (a LZF-compressed listpack of millions of tiny entries).

use std::collections::HashSet;

use bytes::Bytes;

use super::packed::{self, Decode, Elem};
use super::{parse_score, Bad, Reader, Unreadable, FIELD_DEADLINE_MAX, R};

/// Elements per command, so no single command gets huge.
const CHUNK: usize = 512;

fn b(s: &'static str) -> Bytes {
    Bytes::from_static(s.as_bytes())
}

/// A score as text that parses back to the same double.
pub(super) fn score_text(s: f64) -> Bytes {
    Bytes::from(format!("{s:?}"))
}

fn elem_bytes(e: Elem<'_>) -> Bytes {
    match e {
        Elem::Bytes(b) => Bytes::copy_from_slice(b),
        Elem::Int(i) => Bytes::from(i.to_string()),
    }
}

fn elem_score(e: &Elem<'_>) -> R<f64> {
    match e {
        Elem::Int(i) => Ok(*i as f64),
        Elem::Bytes(b) => parse_score(b),
    }
}

/// Two independent 64-bit hashes (fixed seeds, so a load is repeatable):
/// members are told apart by these alone (a false match needs about 2^64
/// members).
pub(super) fn hash128(parts: &[&[u8]]) -> u128 {
    use std::hash::{BuildHasher, Hasher};
    static SEEDS: [ahash::RandomState; 2] = [
        ahash::RandomState::with_seeds(1, 2, 3, 4),
        ahash::RandomState::with_seeds(5, 6, 7, 8),
    ];
    let one = |state: &ahash::RandomState| {
        let mut h = state.build_hasher();
        for p in parts {
            h.write_usize(p.len());
            h.write(p);
        }
        h.finish()
    };
    ((one(&SEEDS[0]) as u128) << 64) | one(&SEEDS[1]) as u128
}

/// A set of [`hash128`] values, hashed by their own low bits.
pub(super) type Seen = HashSet<u128, std::hash::BuildHasherDefault<Identity>>;

/// The hasher of [`Seen`]: its keys are hashes already.
#[derive(Default)]
pub(super) struct Identity(u64);

impl std::hash::Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64;
    }
}

/// Builds one key's commands: `name key item…`, [`CHUNK`] items a
/// command; with `unique`, a member or field met twice is damage.
struct Sink<'e> {
    key: Bytes,
    name: &'static str,
    emit: &'e mut dyn FnMut(Vec<Bytes>),
    cmd: Vec<Bytes>,
    items: usize,
    total: u64,
    seen: Option<Seen>,
    /// Field deadlines of the command being built, sent after it.
    deadlines: Vec<(u64, Bytes)>,
}

impl<'e> Sink<'e> {
    fn new(
        key: &Bytes,
        name: &'static str,
        unique: bool,
        emit: &'e mut dyn FnMut(Vec<Bytes>),
    ) -> Self {
        Sink {
            key: key.clone(),
            name,
            emit,
            cmd: Vec::new(),
            items: 0,
            total: 0,
            seen: unique.then(Seen::default),
            deadlines: Vec::new(),
        }
    }

    /// Notes a member or field; Err if it came before.
    fn member(&mut self, m: &[u8]) -> R<()> {
        match &mut self.seen {
            Some(seen) => {
                if seen.insert(hash128(&[m])) {
                    Ok(())
                } else {
                    Err(Bad)
                }
            }
            None => Ok(()),
        }
    }

    fn push<const N: usize>(&mut self, args: [Bytes; N]) {
        if self.cmd.is_empty() {
            self.cmd.push(b(self.name));
            self.cmd.push(self.key.clone());
        }
        self.cmd.extend(args);
        self.items += 1;
        self.total += 1;
        if self.items == CHUNK {
            self.flush();
        }
    }

    /// A hash field's deadline (Unix ms), set once its HSET is out.
    fn deadline(&mut self, at: u64, field: Bytes) {
        self.deadlines.push((at, field));
    }

    fn flush(&mut self) {
        if !self.cmd.is_empty() {
            (self.emit)(std::mem::take(&mut self.cmd));
        }
        self.items = 0;
        self.deadlines.sort();
        let fields = self.deadlines.drain(..).map(|(at, f)| (f, at));
        crate::dump::deadline_runs("HPEXPIREAT", "FIELDS", &self.key, fields, self.emit);
    }

    /// The number of elements sent; an empty value is [`Unreadable::Empty`].
    fn finish(mut self) -> Result<u64, Unreadable> {
        self.flush();
        match self.total {
            0 => Err(Unreadable::Empty),
            n => Ok(n),
        }
    }
}

/// Types ebb has no counterpart for.
fn unsupported(t: u8) -> Option<&'static str> {
    Some(match t {
        6 | 7 => "a module value",
        15 | 19 | 21 => "a stream",
        _ => return None,
    })
}

/// Feeds a packed blob's elements in pairs (field and value, member and
/// score) or triplets (field, value, deadline) to `f`; a count that does
/// not divide is damage.
fn grouped<'a, const N: usize>(
    decode: Decode,
    blob: &'a [u8],
    f: &mut dyn FnMut([Elem<'a>; N]) -> R<()>,
) -> R<()> {
    let mut group: Vec<Elem<'a>> = Vec::with_capacity(N);
    decode(blob, &mut |e| {
        group.push(e);
        if group.len() == N {
            let g: [Elem<'a>; N] = std::mem::take(&mut group).try_into().map_err(|_| Bad)?;
            f(g)?;
        }
        Ok(())
    })?;
    if group.is_empty() {
        Ok(())
    } else {
        Err(Bad)
    }
}

/// Reads one value of RDB type `t` and calls `emit` with the commands that
/// build it under `key`; returns how many elements it has.
pub(super) fn value_commands(
    r: &mut Reader<'_>,
    t: u8,
    key: &Bytes,
    emit: &mut dyn FnMut(Vec<Bytes>),
) -> Result<u64, Unreadable> {
    use Unreadable::Damaged;
    if let Some(name) = unsupported(t) {
        return Err(Unreadable::Unsupported(name));
    }
    let dup = |what: &'static str| move |_: Bad| Damaged(what);
    match t {
        0 => {
            let v = r.string()?;
            emit(vec![b("SET"), key.clone(), Bytes::from(v)]);
            Ok(1)
        }
        1 => {
            let mut s = Sink::new(key, "RPUSH", false, emit);
            for _ in 0..r.count(1)? {
                s.push([Bytes::from(r.string()?)]);
            }
            s.finish()
        }
        2 => {
            let mut s = Sink::new(key, "SADD", true, emit);
            for _ in 0..r.count(1)? {
                let m = r.string()?;
                s.member(&m)
                    .map_err(dup("Duplicate set members detected"))?;
                s.push([Bytes::from(m)]);
            }
            s.finish()
        }
        3 | 5 => {
            let mut s = Sink::new(key, "ZADD", true, emit);
            for _ in 0..r.count(2)? {
                let m = r.string()?;
                let score = if t == 3 {
                    r.text_double()?
                } else {
                    f64::from_bits(r.u64_le()?)
                };
                if score.is_nan() {
                    return Err(Damaged("Zset with NAN score detected"));
                }
                s.member(&m)
                    .map_err(dup("Duplicate zset fields detected"))?;
                s.push([score_text(score), Bytes::from(m)]);
            }
            s.finish()
        }
        4 | 22 | 24 => {
            // 22 and 24 are Redis 7.4's hashes with field deadlines: per
            // field the deadline comes first, as a length: 0 for none,
            // else absolute (22, a release candidate's form) or 1 + its
            // distance from the earliest deadline, read first (24).
            let base = if t == 24 { Some(r.u64_le()?) } else { None };
            let mut s = Sink::new(key, "HSET", true, emit);
            for _ in 0..r.count(if t == 4 { 2 } else { 3 })? {
                let at = match (t, r.len_if(t != 4)?, base) {
                    (4, _, _) | (_, 0, _) => 0,
                    (_, ttl, Some(b)) => b.checked_add(ttl - 1).ok_or(Bad)?,
                    (_, ttl, None) => ttl,
                };
                if at > FIELD_DEADLINE_MAX {
                    return Err(Damaged("invalid expireAt time"));
                }
                let f = Bytes::from(r.string()?);
                let v = Bytes::from(r.string()?);
                s.member(&f)
                    .map_err(dup("Duplicate hash fields detected"))?;
                if at != 0 {
                    s.deadline(at, f.clone());
                }
                s.push([f, v]);
            }
            s.finish()
        }
        9 => {
            let blob = r.string()?;
            let mut s = Sink::new(key, "HSET", true, emit);
            packed::zipmap(&blob, &mut |f, v| {
                s.member(f)?;
                s.push([Bytes::copy_from_slice(f), Bytes::copy_from_slice(v)]);
                Ok(())
            })
            .map_err(dup("Zipmap integrity check failed"))?;
            s.finish()
        }
        10 | 11 | 20 => {
            let blob = r.string()?;
            let (name, unique, what, decode): (_, _, _, Decode) = match t {
                10 => (
                    "RPUSH",
                    false,
                    "List ziplist integrity check failed",
                    packed::ziplist,
                ),
                11 => (
                    "SADD",
                    true,
                    "Intset integrity check failed",
                    packed::intset,
                ),
                _ => (
                    "SADD",
                    true,
                    "Set listpack integrity check failed",
                    packed::listpack,
                ),
            };
            let mut s = Sink::new(key, name, unique, emit);
            decode(&blob, &mut |e| {
                let m = elem_bytes(e);
                s.member(&m)?;
                s.push([m]);
                Ok(())
            })
            .map_err(dup(what))?;
            s.finish()
        }
        12 | 17 => {
            let blob = r.string()?;
            let (what, decode): (_, Decode) = if t == 12 {
                ("Zset ziplist integrity check failed", packed::ziplist)
            } else {
                ("Zset listpack integrity check failed", packed::listpack)
            };
            let mut s = Sink::new(key, "ZADD", true, emit);
            grouped(decode, &blob, &mut |[m, score]: [Elem<'_>; 2]| {
                let score = elem_score(&score)?;
                let m = elem_bytes(m);
                s.member(&m)?;
                s.push([score_text(score), m]);
                Ok(())
            })
            .map_err(dup(what))?;
            s.finish()
        }
        13 | 16 => {
            let blob = r.string()?;
            let (what, decode): (_, Decode) = if t == 13 {
                ("Hash ziplist integrity check failed", packed::ziplist)
            } else {
                ("Hash listpack integrity check failed", packed::listpack)
            };
            let mut s = Sink::new(key, "HSET", true, emit);
            grouped(decode, &blob, &mut |[f, v]: [Elem<'_>; 2]| {
                let f = elem_bytes(f);
                s.member(&f)?;
                s.push([f, elem_bytes(v)]);
                Ok(())
            })
            .map_err(dup(what))?;
            s.finish()
        }
        23 | 25 => {
            // Redis 7.4's listpack of (field, value, deadline) triplets,
            // the deadline absolute or 0 for none; 25 first has the
            // earliest deadline, which is not needed here.
            if t == 25 {
                r.u64_le()?;
            }
            let blob = r.string()?;
            let mut s = Sink::new(key, "HSET", true, emit);
            grouped(packed::listpack, &blob, &mut |[f, v, at]: [Elem<'_>; 3]| {
                let at = match at {
                    Elem::Int(i) if (0..=FIELD_DEADLINE_MAX as i64).contains(&i) => i as u64,
                    _ => return Err(Bad),
                };
                let f = elem_bytes(f);
                s.member(&f)?;
                if at != 0 {
                    s.deadline(at, f.clone());
                }
                s.push([f, elem_bytes(v)]);
                Ok(())
            })
            .map_err(dup("Hash listpackex integrity check failed"))?;
            s.finish()
        }
        14 | 18 => {
            let mut s = Sink::new(key, "RPUSH", false, emit);
            for _ in 0..r.count(1)? {
                // Version 2 says per node whether it holds one plain
                // element (1) or a listpack of them (2).
                let plain = t == 18
                    && match r.len()? {
                        1 => true,
                        2 => false,
                        _ => return Err(Damaged("Quicklist integrity check failed")),
                    };
                let blob = r.string()?;
                if blob.is_empty() {
                    return Err(Damaged("Quicklist integrity check failed"));
                }
                if plain {
                    s.push([Bytes::from(blob)]);
                    continue;
                }
                let (what, decode): (_, Decode) = if t == 14 {
                    ("Ziplist integrity check failed", packed::ziplist)
                } else {
                    ("Listpack integrity check failed", packed::listpack)
                };
                // An empty node is skipped, as Redis skips it (a list left
                // with none is an empty key).
                decode(&blob, &mut |e| {
                    s.push([elem_bytes(e)]);
                    Ok(())
                })
                .map_err(dup(what))?;
            }
            s.finish()
        }
        _ => Err(Damaged("Unknown RDB encoding type")),
    }
}
