//! Packed collections built at once: what adding their members one at a
//! time would make, without a search and a reallocation per member.

use super::{Pack, ZPack, H_FLAGS, H_LEN, H_SCORE_BASE, INT_LIMIT, MAX_LEN, MAX_MEMBER, NOT_INTS};
use crate::args::parse_i64;
use crate::expiry::NO_DEADLINE;
use crate::value::table::MemberTable;
use crate::value::zset::{stored_score, Score};

impl<const SCORED: bool> Pack<SCORED> {
    /// A set's: the packed set SADD of `members` (repeats allowed) makes
    /// from nothing, built in one buffer, byte for byte what adding them
    /// one at a time makes: integers in numeric order up to the first
    /// member that is not one, the rest in the order they came. Returns it
    /// and how many members it has; None when they would not all pack.
    pub(crate) fn set_from_members(members: &[&[u8]]) -> Option<(Self, usize)> {
        if SCORED || members.iter().any(|m| m.len() > MAX_MEMBER) {
            return None;
        }
        let mut firsts: Vec<&[u8]> = Vec::with_capacity(members.len().min(MAX_LEN));
        for &m in members {
            if !firsts.contains(&m) {
                if firsts.len() == MAX_LEN {
                    return None;
                }
                firsts.push(m);
            }
        }
        if firsts.is_empty() {
            return None;
        }
        let ints = firsts
            .iter()
            .position(|m| parse_i64(m).is_none())
            .unwrap_or(firsts.len());
        firsts[..ints].sort_by_key(|m| parse_i64(m));
        let blank = Self::default();
        let mut v =
            Vec::with_capacity(Self::HEADER + firsts.iter().map(|m| m.len() + 4).sum::<usize>());
        v.resize(Self::HEADER, 0);
        v[H_LEN] = firsts.len() as u8;
        if ints < firsts.len() {
            v[H_FLAGS] |= NOT_INTS;
        }
        for m in &firsts {
            v.extend_from_slice(blank.encode(m, 0.0, NO_DEADLINE).as_slice());
        }
        let n = firsts.len();
        Some((
            Pack {
                buf: v.into_boxed_slice(),
            },
            n,
        ))
    }

    /// The packed collection adding `t`'s members in its order one at a
    /// time makes (scores from `score`), or None when they would not all
    /// pack (too many, one too long, or one with a deadline).
    pub(crate) fn from_table<V>(t: &MemberTable<V>, score: impl Fn(&V) -> f64) -> Option<Self> {
        let nodes = t.nodes();
        let fits = nodes.len() <= MAX_LEN
            && nodes.iter().all(|n| n.member.len() <= MAX_MEMBER)
            && (0..nodes.len() as u32).all(|id| t.deadline(id).is_none());
        if !fits {
            return None;
        }
        let mut p = Self::default();
        for n in nodes {
            p.insert(&n.member, stored_score(score(&n.value)), NO_DEADLINE);
        }
        Some(p)
    }
}

impl ZPack {
    /// The packed sorted set a plain ZADD of `pairs` (repeats allowed:
    /// the last score of a member wins) makes from
    /// nothing, built in one buffer, byte for byte what adding them one at
    /// a time makes. Returns it and how many members it has; None when
    /// they would not all pack.
    ///
    /// One at a time, the score base changes only when the set is empty:
    /// its first member sets it, when its score is an integer. A repeat of
    /// the only member so far empties the set for a moment (a new score is
    /// a removal and an insertion), so it does the same; other repeats
    /// leave it alone. The integer flag is whether every member is one.
    pub(crate) fn zset_from_pairs(pairs: &[(f64, &[u8])]) -> Option<(Self, usize)> {
        let mut firsts: Vec<(f64, &[u8])> = Vec::with_capacity(pairs.len().min(MAX_LEN));
        let mut base = 0i64;
        let mut ints = true;
        for &(score, m) in pairs {
            let score = stored_score(score);
            if m.len() > MAX_MEMBER {
                return None;
            }
            let refill = match firsts.iter_mut().find(|(_, x)| *x == m) {
                Some((cur, _)) if *cur == score => false,
                Some((cur, _)) => {
                    *cur = score;
                    firsts.len() == 1
                }
                None => {
                    if firsts.len() == MAX_LEN {
                        return None;
                    }
                    firsts.push((score, m));
                    ints &= parse_i64(m).is_some();
                    firsts.len() == 1
                }
            };
            if refill && score.fract() == 0.0 && score.abs() <= INT_LIMIT {
                base = score as i64;
            }
        }
        if firsts.is_empty() {
            return None;
        }
        firsts.sort_by(|a, b| (Score(a.0), a.1).cmp(&(Score(b.0), b.1)));
        let mut v = vec![0u8; Self::HEADER];
        v[H_LEN] = firsts.len() as u8;
        if !ints {
            v[H_FLAGS] |= NOT_INTS;
        }
        v[H_SCORE_BASE..H_SCORE_BASE + 8].copy_from_slice(&base.to_le_bytes());
        let mut p = Pack {
            buf: v.into_boxed_slice(),
        };
        let mut body = Vec::with_capacity(
            Self::HEADER + firsts.iter().map(|(_, m)| m.len() + 13).sum::<usize>(),
        );
        body.extend_from_slice(&p.buf);
        for &(score, m) in &firsts {
            body.extend_from_slice(p.encode(m, score, NO_DEADLINE).as_slice());
        }
        p.buf = body.into_boxed_slice();
        let n = firsts.len();
        Some((p, n))
    }
}
