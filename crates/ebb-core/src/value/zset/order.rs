//! The (score, member) order of a sorted set with positional access.
//!
//! Elements live in sorted chunks of a few hundred entries (no per-element
//! node, so small and large sets stay compact); a Fenwick tree over the
//! chunk lengths turns a rank into a chunk and back in O(log n). Inserting
//! or removing shifts at most one chunk; the Fenwick tree is updated in
//! place, or rebuilt in O(chunks) when a chunk splits, merges or vanishes,
//! which happens at most once per `LOAD / 2` updates.

use bytes::Bytes;

use super::Score;

/// One element: its score and member.
pub type Item = (Score, Bytes);

/// Target chunk length; chunks split above `2 * LOAD` and merge below `LOAD / 2`.
const LOAD: usize = 128;

/// Elements in ascending (score, member) order with O(log n) rank lookups.
#[derive(Debug, Clone, Default)]
pub struct RankedOrder {
    chunks: Vec<Vec<Item>>,
    /// Fenwick tree over `chunks[i].len()`, 1-based (`tree[0]` unused).
    tree: Vec<usize>,
    len: usize,
}

impl RankedOrder {
    /// Number of elements.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no element.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The chunk that holds, or would hold, `item`.
    fn chunk_for(&self, item: &Item) -> usize {
        let i = self
            .chunks
            .partition_point(|c| c.last().is_some_and(|l| l < item));
        i.min(self.chunks.len().saturating_sub(1))
    }

    /// Inserts `item`; false if it was already present.
    pub fn insert(&mut self, item: Item) -> bool {
        if self.chunks.is_empty() {
            self.chunks.push(vec![item]);
            self.len = 1;
            self.rebuild();
            return true;
        }
        let ci = self.chunk_for(&item);
        let chunk = &mut self.chunks[ci];
        let pos = match chunk.binary_search(&item) {
            Ok(_) => return false,
            Err(p) => p,
        };
        chunk.insert(pos, item);
        self.len += 1;
        if chunk.len() > 2 * LOAD {
            let tail = chunk.split_off(chunk.len() / 2);
            self.chunks.insert(ci + 1, tail);
            self.rebuild();
        } else {
            self.add(ci, 1);
        }
        true
    }

    /// Removes `item`; false if it was absent.
    pub fn remove(&mut self, item: &Item) -> bool {
        if self.chunks.is_empty() {
            return false;
        }
        let ci = self.chunk_for(item);
        match self.chunks[ci].binary_search(item) {
            Ok(pos) => {
                self.remove_at(ci, pos);
                true
            }
            Err(_) => false,
        }
    }

    fn remove_at(&mut self, ci: usize, pos: usize) -> Item {
        let item = self.chunks[ci].remove(pos);
        self.len -= 1;
        let n = self.chunks[ci].len();
        if n == 0 {
            self.chunks.remove(ci);
            self.rebuild();
        } else if n < LOAD / 2 && self.chunks.len() > 1 {
            // Merge into a neighbour so chunks never get tiny.
            let (a, b) = if ci + 1 < self.chunks.len() {
                (ci, ci + 1)
            } else {
                (ci - 1, ci)
            };
            let moved = self.chunks.remove(b);
            self.chunks[a].extend(moved);
            if self.chunks[a].len() > 2 * LOAD {
                let half = self.chunks[a].len() / 2;
                let tail = self.chunks[a].split_off(half);
                self.chunks.insert(a + 1, tail);
            }
            self.rebuild();
        } else {
            self.add(ci, usize::MAX); // -1 in wrapping arithmetic
        }
        item
    }

    /// Removes and returns the element at `rank`.
    pub fn remove_rank(&mut self, rank: usize) -> Option<Item> {
        if rank >= self.len {
            return None;
        }
        let (ci, off) = self.locate(rank);
        Some(self.remove_at(ci, off))
    }

    /// The number of elements less than `item` (its rank if present).
    pub fn rank_of(&self, item: &Item) -> usize {
        self.count_while(|e| e < item)
    }

    /// Whether `item` is present.
    #[cfg(test)]
    pub fn contains(&self, item: &Item) -> bool {
        if self.chunks.is_empty() {
            return false;
        }
        self.chunks[self.chunk_for(item)]
            .binary_search(item)
            .is_ok()
    }

    /// For a predicate that holds on a prefix of the order (and not after),
    /// the length of that prefix.
    pub fn count_while(&self, pred: impl Fn(&Item) -> bool) -> usize {
        let ci = self.chunks.partition_point(|c| c.last().is_some_and(&pred));
        if ci == self.chunks.len() {
            return self.len;
        }
        self.prefix(ci) + self.chunks[ci].partition_point(&pred)
    }

    /// The element at `rank` (0-based, ascending).
    pub fn get(&self, rank: usize) -> Option<&Item> {
        if rank >= self.len {
            return None;
        }
        let (ci, off) = self.locate(rank);
        self.chunks.get(ci)?.get(off)
    }

    /// The lowest element.
    pub fn first(&self) -> Option<&Item> {
        self.chunks.first().and_then(|c| c.first())
    }

    /// The highest element.
    pub fn last(&self) -> Option<&Item> {
        self.chunks.last().and_then(|c| c.last())
    }

    /// Elements with rank in `start..end`, ascending (reversible).
    pub fn range(&self, start: usize, end: usize) -> RankIter<'_> {
        let end = end.min(self.len);
        let start = start.min(end);
        RankIter {
            order: self,
            front: self.locate_or_end(start),
            back: self.locate_or_end(end),
            remaining: end - start,
        }
    }

    /// All elements, ascending (reversible).
    pub fn iter(&self) -> RankIter<'_> {
        self.range(0, self.len)
    }

    /// Chunk and offset of `rank < len`.
    fn locate(&self, rank: usize) -> (usize, usize) {
        let n = self.chunks.len();
        let mut pos = 0;
        let mut rem = rank;
        let mut step = if n == 0 {
            0
        } else {
            1usize << (usize::BITS - 1 - n.leading_zeros())
        };
        while step > 0 {
            let next = pos + step;
            if next <= n && self.tree[next] <= rem {
                pos = next;
                rem -= self.tree[next];
            }
            step >>= 1;
        }
        (pos, rem)
    }

    /// Like `locate`, but `len` maps to one past the last chunk.
    fn locate_or_end(&self, rank: usize) -> (usize, usize) {
        if rank >= self.len {
            (self.chunks.len(), 0)
        } else {
            self.locate(rank)
        }
    }

    /// Total length of `chunks[..i]`.
    fn prefix(&self, i: usize) -> usize {
        let mut i = i;
        let mut sum = 0;
        while i > 0 {
            sum += self.tree[i];
            i &= i - 1;
        }
        sum
    }

    /// Adds `delta` (wrapping, so `usize::MAX` is -1) to chunk `ci`'s length.
    fn add(&mut self, ci: usize, delta: usize) {
        let mut i = ci + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Rebuilds the Fenwick tree from the chunk lengths in O(chunks).
    fn rebuild(&mut self) {
        let n = self.chunks.len();
        self.tree.clear();
        self.tree.resize(n + 1, 0);
        for i in 1..=n {
            self.tree[i] += self.chunks[i - 1].len();
            let j = i + (i & i.wrapping_neg());
            if j <= n {
                let v = self.tree[i];
                self.tree[j] += v;
            }
        }
    }

    /// Checks the internal invariants (for tests).
    #[cfg(test)]
    pub fn check(&self) {
        let mut total = 0;
        for (i, c) in self.chunks.iter().enumerate() {
            assert!(!c.is_empty());
            assert!(c.len() <= 2 * LOAD);
            assert_eq!(self.prefix(i), total);
            total += c.len();
        }
        assert_eq!(total, self.len);
        let all: Vec<&Item> = self.chunks.iter().flatten().collect();
        assert!(all.windows(2).all(|w| w[0] < w[1]));
    }
}

/// Iterator over a rank range of a [`RankedOrder`].
pub struct RankIter<'a> {
    order: &'a RankedOrder,
    /// Next element from the front: (chunk, offset).
    front: (usize, usize),
    /// One past the next element from the back: (chunk, offset).
    back: (usize, usize),
    remaining: usize,
}

impl<'a> Iterator for RankIter<'a> {
    type Item = &'a Item;

    fn next(&mut self) -> Option<&'a Item> {
        if self.remaining == 0 {
            return None;
        }
        let (ci, off) = self.front;
        let chunk = self.order.chunks.get(ci)?;
        let item = chunk.get(off)?;
        self.front = if off + 1 < chunk.len() {
            (ci, off + 1)
        } else {
            (ci + 1, 0)
        };
        self.remaining -= 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<'a> DoubleEndedIterator for RankIter<'a> {
    fn next_back(&mut self) -> Option<&'a Item> {
        if self.remaining == 0 {
            return None;
        }
        let (mut ci, mut off) = self.back;
        if off == 0 {
            ci = ci.checked_sub(1)?;
            off = self.order.chunks.get(ci)?.len();
        }
        off -= 1;
        let item = self.order.chunks.get(ci)?.get(off)?;
        self.back = (ci, off);
        self.remaining -= 1;
        Some(item)
    }
}

impl ExactSizeIterator for RankIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn it(s: f64, m: u32) -> Item {
        (Score(s), Bytes::from(format!("m{m:06}")))
    }

    #[test]
    fn ranks_survive_splits_and_merges() {
        let mut o = RankedOrder::default();
        let n = 3000u32;
        // Insert in a scrambled order to split chunks everywhere.
        for i in 0..n {
            let k = (i * 7919) % n;
            assert!(o.insert(it((k / 3) as f64, k)));
        }
        assert!(!o.insert(it(0.0, 0)));
        o.check();
        assert_eq!(o.len(), n as usize);
        for k in 0..n {
            let item = it((k / 3) as f64, k);
            assert_eq!(o.rank_of(&item), k as usize);
            assert_eq!(o.get(k as usize), Some(&item));
        }
        let fwd: Vec<_> = o.range(10, 700).cloned().collect();
        let back: Vec<_> = o.range(10, 700).rev().cloned().collect();
        assert_eq!(fwd.len(), 690);
        assert_eq!(fwd.iter().rev().cloned().collect::<Vec<_>>(), back);
        assert_eq!(fwd[0], it(3.0, 10));
        // Remove most elements, scattered, to force merges.
        for i in 0..n {
            let k = (i * 104729) % n;
            if !k.is_multiple_of(10) {
                assert!(o.remove(&it((k / 3) as f64, k)));
            }
        }
        o.check();
        assert_eq!(o.len(), 300);
        for (r, item) in o.iter().enumerate() {
            assert_eq!(o.rank_of(item), r);
            assert_eq!(item, &it(((r * 10 / 3) as u32) as f64, (r * 10) as u32));
        }
        assert_eq!(o.remove_rank(0), Some(it(0.0, 0)));
        assert_eq!(o.first(), Some(&it(3.0, 10)));
        assert_eq!(o.last(), Some(&it(996.0, 2990)));
        while o.remove_rank(0).is_some() {}
        o.check();
        assert!(o.is_empty());
        assert_eq!(o.iter().next(), None);
        assert_eq!(o.range(0, 5).next_back(), None);
    }

    #[test]
    fn mixed_iteration_meets_in_the_middle() {
        let mut o = RankedOrder::default();
        for k in 0..600 {
            o.insert(it(k as f64, k));
        }
        let mut r = o.range(100, 110);
        assert_eq!(r.len(), 10);
        assert_eq!(r.next(), Some(&it(100.0, 100)));
        assert_eq!(r.next_back(), Some(&it(109.0, 109)));
        assert_eq!(r.by_ref().count(), 8);
        assert_eq!(r.next_back(), None);
        assert_eq!(o.count_while(|e| e.0 < Score(250.5)), 251);
        assert_eq!(o.count_while(|_| true), 600);
        assert_eq!(o.count_while(|_| false), 0);
    }
}
