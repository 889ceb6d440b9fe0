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

/// A score as text that parses back to the same double.
#[cfg(test)]
pub(super) fn score_text(s: f64) -> Bytes {
    let mut out = Vec::new();
    write_score(&mut out, s);
    Bytes::from(out)
}

/// Appends a score's text: an integer as digits, anything else in the
/// shortest form that reads back to the same double (`inf`, `-inf`).
fn write_score(out: &mut Vec<u8>, s: f64) {
    // Integers below 2^53 are exact both ways; -0 keeps its sign below.
    if s.fract() == 0.0 && s.abs() < 9.0e15 && !(s == 0.0 && s.is_sign_negative()) {
        out.extend_from_slice(itoa::Buffer::new().format(s as i64).as_bytes());
    } else {
        out.extend_from_slice(ryu::Buffer::new().format(s).as_bytes());
    }
}

/// One argument of a command being built, written into the command's
/// buffer as text.
enum Arg<'a> {
    Bytes(&'a [u8]),
    Int(i64),
    Score(f64),
}

impl<'a> From<Elem<'a>> for Arg<'a> {
    fn from(e: Elem<'a>) -> Self {
        match e {
            Elem::Bytes(b) => Arg::Bytes(b),
            Elem::Int(i) => Arg::Int(i),
        }
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

/// The buffers of a [`Sink`], kept from one value to the next (a file
/// of many small collections would otherwise grow new ones for each).
#[derive(Default)]
struct Scratch {
    buf: Vec<u8>,
    ends: Vec<usize>,
    seen: Seen,
}

/// Buffers larger than this are not kept for the next value.
const SCRATCH_KEEP: usize = 1 << 16;

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Builds one key's commands: `name key item…`, [`CHUNK`] items a
/// command; with `unique`, a member or field met twice is damage. The
/// arguments are written one after another into one buffer, reused from
/// command to command, so an element costs no allocation.
struct Sink<'e> {
    key: &'e [u8],
    name: &'static str,
    emit: &'e mut dyn FnMut(&[&[u8]]),
    /// The arguments of the command being built, back to back.
    buf: Vec<u8>,
    /// Where each of them ends in `buf`.
    ends: Vec<usize>,
    items: usize,
    total: u64,
    unique: bool,
    /// With `unique`: the members written so far.
    seen: Seen,
    /// Field deadlines of the command being built, sent after it.
    deadlines: Vec<(u64, Bytes)>,
}

impl Drop for Sink<'_> {
    fn drop(&mut self) {
        let mut kept = Scratch {
            buf: std::mem::take(&mut self.buf),
            ends: std::mem::take(&mut self.ends),
            seen: std::mem::take(&mut self.seen),
        };
        if kept.buf.capacity() > SCRATCH_KEEP {
            kept.buf = Vec::new();
        }
        if kept.ends.capacity() > SCRATCH_KEEP / 8 {
            kept.ends = Vec::new();
        }
        if kept.seen.capacity() > SCRATCH_KEEP / 16 {
            kept.seen = Seen::default();
        }
        kept.buf.clear();
        kept.ends.clear();
        kept.seen.clear();
        SCRATCH.with(|s| *s.borrow_mut() = kept);
    }
}

impl<'e> Sink<'e> {
    fn new(
        key: &'e [u8],
        name: &'static str,
        unique: bool,
        emit: &'e mut dyn FnMut(&[&[u8]]),
    ) -> Self {
        let Scratch { buf, ends, seen } = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
        Sink {
            key,
            name,
            emit,
            buf,
            ends,
            items: 0,
            total: 0,
            unique,
            seen,
            deadlines: Vec::new(),
        }
    }

    /// Writes one argument; returns where it starts in `buf`.
    fn put(&mut self, a: Arg<'_>) -> usize {
        let start = self.buf.len();
        match a {
            Arg::Bytes(b) => self.buf.extend_from_slice(b),
            Arg::Int(i) => self
                .buf
                .extend_from_slice(itoa::Buffer::new().format(i).as_bytes()),
            Arg::Score(s) => write_score(&mut self.buf, s),
        }
        self.ends.push(self.buf.len());
        start
    }

    /// Writes a member or field (the argument it becomes is checked as
    /// text, so `5` from an integer and from a string are one member);
    /// Err if it came before. Returns its index among the arguments.
    fn member(&mut self, a: Arg<'_>) -> R<usize> {
        let start = self.put(a);
        if self.unique && !self.seen.insert(hash128(&[&self.buf[start..]])) {
            return Err(Bad);
        }
        Ok(self.ends.len() - 1)
    }

    /// Ends an item (an element, a score and member, a field and value).
    fn item(&mut self) {
        self.items += 1;
        self.total += 1;
        if self.items == CHUNK {
            self.flush();
        }
    }

    /// A hash field's deadline (Unix ms), set once its HSET is out; the
    /// field is argument `i`.
    fn deadline(&mut self, at: u64, i: usize) {
        let from = if i == 0 { 0 } else { self.ends[i - 1] };
        let field = Bytes::copy_from_slice(&self.buf[from..self.ends[i]]);
        self.deadlines.push((at, field));
    }

    fn flush(&mut self) {
        if !self.ends.is_empty() {
            let mut argv: Vec<&[u8]> = Vec::with_capacity(self.ends.len() + 2);
            argv.push(self.name.as_bytes());
            argv.push(self.key);
            let mut from = 0;
            for &end in &self.ends {
                argv.push(&self.buf[from..end]);
                from = end;
            }
            (self.emit)(&argv);
            self.buf.clear();
            self.ends.clear();
        }
        self.items = 0;
        if !self.deadlines.is_empty() {
            self.deadlines.sort();
            let fields = self.deadlines.drain(..).map(|(at, f)| (f, at));
            let key = Bytes::copy_from_slice(self.key);
            let emit = &mut *self.emit;
            crate::dump::deadline_runs("HPEXPIREAT", "FIELDS", &key, fields, &mut |c| {
                emit(&crate::args::views(&c))
            });
        }
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
    let mut group = [Elem::Int(0); N];
    let mut filled = 0;
    decode(blob, &mut |e| {
        group[filled] = e;
        filled += 1;
        if filled == N {
            filled = 0;
            f(group)?;
        }
        Ok(())
    })?;
    if filled == 0 {
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
    key: &[u8],
    emit: &mut dyn FnMut(&[&[u8]]),
) -> Result<u64, Unreadable> {
    use Unreadable::Damaged;
    if let Some(name) = unsupported(t) {
        return Err(Unreadable::Unsupported(name));
    }
    let dup = |what: &'static str| move |_: Bad| Damaged(what);
    match t {
        0 => {
            let v = r.bytes()?;
            emit(&[b"SET", key, &v]);
            Ok(1)
        }
        1 => {
            let mut s = Sink::new(key, "RPUSH", false, emit);
            for _ in 0..r.count(1)? {
                s.put(Arg::Bytes(&r.bytes()?));
                s.item();
            }
            s.finish()
        }
        2 => {
            let mut s = Sink::new(key, "SADD", true, emit);
            for _ in 0..r.count(1)? {
                s.member(Arg::Bytes(&r.bytes()?))
                    .map_err(dup("Duplicate set members detected"))?;
                s.item();
            }
            s.finish()
        }
        3 | 5 => {
            let mut s = Sink::new(key, "ZADD", true, emit);
            for _ in 0..r.count(2)? {
                let m = r.bytes()?;
                let score = if t == 3 {
                    r.text_double()?
                } else {
                    f64::from_bits(r.u64_le()?)
                };
                if score.is_nan() {
                    return Err(Damaged("Zset with NAN score detected"));
                }
                s.put(Arg::Score(score));
                s.member(Arg::Bytes(&m))
                    .map_err(dup("Duplicate zset fields detected"))?;
                s.item();
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
                let f = s
                    .member(Arg::Bytes(&r.bytes()?))
                    .map_err(dup("Duplicate hash fields detected"))?;
                s.put(Arg::Bytes(&r.bytes()?));
                if at != 0 {
                    s.deadline(at, f);
                }
                s.item();
            }
            s.finish()
        }
        9 => {
            let blob = r.bytes()?;
            let mut s = Sink::new(key, "HSET", true, emit);
            packed::zipmap(&blob, &mut |f, v| {
                s.member(Arg::Bytes(f))?;
                s.put(Arg::Bytes(v));
                s.item();
                Ok(())
            })
            .map_err(dup("Zipmap integrity check failed"))?;
            s.finish()
        }
        10 | 11 | 20 => {
            let blob = r.bytes()?;
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
                s.member(e.into())?;
                s.item();
                Ok(())
            })
            .map_err(dup(what))?;
            s.finish()
        }
        12 | 17 => {
            let blob = r.bytes()?;
            let (what, decode): (_, Decode) = if t == 12 {
                ("Zset ziplist integrity check failed", packed::ziplist)
            } else {
                ("Zset listpack integrity check failed", packed::listpack)
            };
            let mut s = Sink::new(key, "ZADD", true, emit);
            grouped(decode, &blob, &mut |[m, score]: [Elem<'_>; 2]| {
                s.put(Arg::Score(elem_score(&score)?));
                s.member(m.into())?;
                s.item();
                Ok(())
            })
            .map_err(dup(what))?;
            s.finish()
        }
        13 | 16 => {
            let blob = r.bytes()?;
            let (what, decode): (_, Decode) = if t == 13 {
                ("Hash ziplist integrity check failed", packed::ziplist)
            } else {
                ("Hash listpack integrity check failed", packed::listpack)
            };
            let mut s = Sink::new(key, "HSET", true, emit);
            grouped(decode, &blob, &mut |[f, v]: [Elem<'_>; 2]| {
                s.member(f.into())?;
                s.put(v.into());
                s.item();
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
            let blob = r.bytes()?;
            let mut s = Sink::new(key, "HSET", true, emit);
            grouped(packed::listpack, &blob, &mut |[f, v, at]: [Elem<'_>; 3]| {
                let at = match at {
                    Elem::Int(i) if (0..=FIELD_DEADLINE_MAX as i64).contains(&i) => i as u64,
                    _ => return Err(Bad),
                };
                let f = s.member(f.into())?;
                s.put(v.into());
                if at != 0 {
                    s.deadline(at, f);
                }
                s.item();
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
                let blob = r.bytes()?;
                if blob.is_empty() {
                    return Err(Damaged("Quicklist integrity check failed"));
                }
                if plain {
                    s.put(Arg::Bytes(&blob));
                    s.item();
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
                    s.put(e.into());
                    s.item();
                    Ok(())
                })
                .map_err(dup(what))?;
            }
            s.finish()
        }
        _ => Err(Damaged("Unknown RDB encoding type")),
    }
}
