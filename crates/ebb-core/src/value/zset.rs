//! Sorted sets whose members may carry deadlines.

use bytes::Bytes;
use indexmap::IndexMap;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::Bound;

use crate::expiry::MemberDeadlines;

/// A score with a total order (scores are never NaN; -0 equals 0).
#[derive(Debug, Clone, Copy)]
pub struct Score(pub f64);

impl PartialEq for Score {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Score {}
impl PartialOrd for Score {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Score {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.partial_cmp(&o.0).unwrap_or(Ordering::Equal)
    }
}

/// A sorted set: a member→score dictionary plus (score, member) order.
#[derive(Debug, Default, Clone)]
pub struct ZSetValue {
    dict: IndexMap<Bytes, f64, ahash::RandomState>,
    order: BTreeSet<(Score, Bytes)>,
    deadlines: MemberDeadlines,
}

impl ZSetValue {
    /// An empty sorted set.
    pub fn new() -> ZSetValue {
        ZSetValue::default()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.dict.len()
    }

    /// Whether the sorted set is empty.
    pub fn is_empty(&self) -> bool {
        self.dict.is_empty()
    }

    /// The score of `m`.
    pub fn score(&self, m: &[u8]) -> Option<f64> {
        self.dict.get(m).copied()
    }

    /// Inserts `m` with `score` or updates its score (keeping its deadline);
    /// returns true if it is new.
    pub fn insert(&mut self, m: Bytes, score: f64) -> bool {
        match self.dict.get_mut(&m) {
            Some(old) => {
                if *old != score || old.is_sign_negative() != score.is_sign_negative() {
                    self.order.remove(&(Score(*old), m.clone()));
                    *old = score;
                    self.order.insert((Score(score), m));
                }
                false
            }
            None => {
                self.dict.insert(m.clone(), score);
                self.order.insert((Score(score), m));
                true
            }
        }
    }

    /// Removes `m` and its deadline; returns its score.
    pub fn remove(&mut self, m: &[u8]) -> Option<f64> {
        let (k, s) = self.dict.swap_remove_entry(m)?;
        self.order.remove(&(Score(s), k));
        self.deadlines.clear(m);
        Some(s)
    }

    /// 0-based rank of `m` in ascending order (descending with `rev`).
    pub fn rank(&self, m: &[u8], rev: bool) -> Option<usize> {
        let s = *self.dict.get(m)?;
        let key = (Score(s), Bytes::copy_from_slice(m));
        let below = self.order.range(..&key).count();
        Some(if rev { self.len() - 1 - below } else { below })
    }

    /// Members in ascending order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Bytes, f64)> {
        self.order.iter().map(|(s, m)| (m, s.0))
    }

    /// Members with score in the given bounds, ascending.
    pub fn range_by_score(
        &self,
        min: Bound<f64>,
        max: Bound<f64>,
    ) -> impl DoubleEndedIterator<Item = (&Bytes, f64)> {
        let lo = match min {
            Bound::Included(s) | Bound::Excluded(s) => Bound::Included((Score(s), Bytes::new())),
            Bound::Unbounded => Bound::Unbounded,
        };
        self.order
            .range((lo, Bound::Unbounded))
            .map(|(s, m)| (m, s.0))
            .skip_while(move |(_, s)| matches!(min, Bound::Excluded(v) if *s <= v))
            .take_while(move |(_, s)| match max {
                Bound::Included(v) => *s <= v,
                Bound::Excluded(v) => *s < v,
                Bound::Unbounded => true,
            })
            .collect::<Vec<_>>()
            .into_iter()
    }

    /// The member at dictionary position `i`, for random picks.
    pub fn get_index(&self, i: usize) -> Option<(&Bytes, f64)> {
        self.dict.get_index(i).map(|(m, s)| (m, *s))
    }

    /// The lowest (or with `max`, highest) member.
    pub fn first(&self, max: bool) -> Option<(&Bytes, f64)> {
        let e = if max {
            self.order.last()
        } else {
            self.order.first()
        };
        e.map(|(s, m)| (m, s.0))
    }

    /// Removes and returns the lowest (or highest) member.
    pub fn pop(&mut self, max: bool) -> Option<(Bytes, f64)> {
        let (s, m) = if max {
            self.order.pop_last()?
        } else {
            self.order.pop_first()?
        };
        self.dict.swap_remove(&m);
        self.deadlines.clear(&m);
        Some((m, s.0))
    }

    /// The member deadlines.
    pub fn deadlines(&self) -> &MemberDeadlines {
        &self.deadlines
    }

    /// Sets the deadline of an existing member; false if it is not a member.
    pub fn set_deadline(&mut self, m: &[u8], at: u64) -> bool {
        match self.dict.get_key_value(m) {
            Some((k, _)) => {
                self.deadlines.set(k.clone(), at);
                true
            }
            None => false,
        }
    }

    /// Clears the deadline of `m`; returns the one it had.
    pub fn clear_deadline(&mut self, m: &[u8]) -> Option<u64> {
        self.deadlines.clear(m)
    }

    /// Removes the earliest member whose deadline is `<= now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Bytes> {
        let m = self.deadlines.pop_due(now)?;
        if let Some((k, s)) = self.dict.swap_remove_entry(&m) {
            self.order.remove(&(Score(s), k));
        }
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn order_rank_and_ranges() {
        let mut z = ZSetValue::new();
        assert!(z.insert(b("b"), 2.0));
        assert!(z.insert(b("a"), 1.0));
        assert!(z.insert(b("c"), 2.0));
        assert!(!z.insert(b("a"), 3.0));
        let order: Vec<_> = z.iter().map(|(m, _)| m.clone()).collect();
        assert_eq!(order, vec![b("b"), b("c"), b("a")]);
        assert_eq!(z.rank(b"a", false), Some(2));
        assert_eq!(z.rank(b"a", true), Some(0));
        let r: Vec<_> = z
            .range_by_score(Bound::Excluded(2.0), Bound::Unbounded)
            .map(|(m, _)| m.clone())
            .collect();
        assert_eq!(r, vec![b("a")]);
        z.set_deadline(b"c", 5);
        assert_eq!(z.pop_due(5), Some(b("c")));
        assert_eq!(z.len(), 2);
    }
}
