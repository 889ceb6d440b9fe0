//! Ordered sequences with positional access.
//!
//! [`Chunked`] keeps small `Copy` elements sorted by a comparison the owner
//! supplies: in sorted chunks of a few hundred elements, with the last
//! element of each chunk copied into one contiguous vector (so finding the
//! chunk reads no chunk) and a Fenwick tree over the chunk lengths that
//! turns a rank into a chunk and back in O(log n). Inserting or removing
//! shifts at most one chunk; the Fenwick tree is updated in place, or
//! rebuilt in O(chunks) when a chunk splits, merges or vanishes, which
//! happens at most once per `LOAD / 2` updates.
//!
//! A sorted set's order holds (score, id) pairs (ids are `u32` positions
//! in a [`MemberTable`](super::table::MemberTable)), compared by score and,
//! on a tie, by reading the two nodes' members: 12 bytes per element and
//! never a copy of a member. The member-deadline order holds (deadline, id)
//! pairs and compares them without reading any node.

use std::cmp::Ordering;

/// Target chunk length; chunks split above `2 * LOAD` and merge below `LOAD / 2`.
const LOAD: usize = 128;

/// Elements a full chunk grows by (a copy of at most `2 * LOAD` elements
/// every `GROW` insertions into it).
const GROW: usize = LOAD / 4;

/// Where an element sits: (chunk, offset).
pub type Slot = (usize, usize);

/// Elements in ascending order (as the owner's comparison defines it) with
/// O(log n) rank lookups.
#[derive(Debug, Clone)]
pub struct Chunked<E> {
    chunks: Vec<Vec<E>>,
    /// The last element of each chunk.
    tops: Vec<E>,
    /// Fenwick tree over `chunks[i].len()`, 1-based (`tree[0]` unused).
    tree: Vec<usize>,
    len: usize,
}

impl<E> Chunked<E> {
    /// An empty sequence (allocates nothing).
    pub const fn new() -> Self {
        Chunked {
            chunks: Vec::new(),
            tops: Vec::new(),
            tree: Vec::new(),
            len: 0,
        }
    }
}

impl<E> Default for Chunked<E> {
    fn default() -> Self {
        Chunked::new()
    }
}

impl<E: Copy + PartialEq> Chunked<E> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The chunk that holds, or would hold, `id`.
    fn chunk_for(&self, id: E, cmp: &impl Fn(E, E) -> Ordering) -> usize {
        let last = self.chunks.len().saturating_sub(1);
        // After the end of the chunk before the last (new deadlines,
        // timestamps as scores: the commonest case), the last chunk,
        // without searching the other tops.
        if last == 0 || cmp(self.tops[last - 1], id) == Ordering::Less {
            return last;
        }
        let i = self.tops.partition_point(|&l| cmp(l, id) == Ordering::Less);
        i.min(last)
    }

    /// Inserts `id`; false if an element comparing equal was present.
    pub fn insert(&mut self, id: E, cmp: &impl Fn(E, E) -> Ordering) -> bool {
        if self.chunks.is_empty() {
            self.chunks.push(vec![id]);
            self.tops.push(id);
            self.len = 1;
            self.rebuild();
            return true;
        }
        let ci = self.chunk_for(id, cmp);
        let chunk = &mut self.chunks[ci];
        let pos = match chunk.binary_search_by(|&e| cmp(e, id)) {
            Ok(_) => return false,
            Err(p) => p,
        };
        if chunk.len() == chunk.capacity() {
            // Grow by a step, not by doubling: a chunk of up to 2 * LOAD
            // elements otherwise averages a quarter of its room unused.
            chunk.reserve_exact(GROW);
        }
        chunk.insert(pos, id);
        self.len += 1;
        if pos + 1 == chunk.len() {
            self.tops[ci] = id;
        }
        if chunk.len() > 2 * LOAD {
            let tail = chunk.split_off(chunk.len() / 2);
            // The head grew past its capacity just before the split.
            chunk.shrink_to_fit();
            let head_top = chunk[chunk.len() - 1];
            self.tops[ci] = head_top;
            self.tops.insert(ci + 1, tail[tail.len() - 1]);
            self.chunks.insert(ci + 1, tail);
            self.rebuild_from(ci);
        } else {
            self.add(ci, 1);
        }
        true
    }

    /// Where `id` sits, if present.
    pub fn slot_of(&self, id: E, cmp: &impl Fn(E, E) -> Ordering) -> Option<Slot> {
        if self.chunks.is_empty() {
            return None;
        }
        let ci = self.chunk_for(id, cmp);
        let off = self.chunks[ci].binary_search_by(|&e| cmp(e, id)).ok()?;
        (self.chunks[ci][off] == id).then_some((ci, off))
    }

    /// Overwrites the id at `slot` (the node moved to another id).
    pub fn set_slot(&mut self, slot: Slot, id: E) {
        if let Some(c) = self.chunks.get_mut(slot.0) {
            if let Some(e) = c.get_mut(slot.1) {
                *e = id;
                if slot.1 + 1 == c.len() {
                    self.tops[slot.0] = id;
                }
            }
        }
    }

    /// Rewrites every id through `f` (the nodes were renumbered without
    /// changing their relative order).
    pub fn renumber(&mut self, f: impl Fn(E) -> E) {
        for c in &mut self.chunks {
            for e in c.iter_mut() {
                *e = f(*e);
            }
        }
        for t in &mut self.tops {
            *t = f(*t);
        }
    }

    /// Removes `id`; false if it was absent.
    pub fn remove(&mut self, id: E, cmp: &impl Fn(E, E) -> Ordering) -> bool {
        match self.slot_of(id, cmp) {
            Some((ci, pos)) => {
                self.remove_at(ci, pos);
                true
            }
            None => false,
        }
    }

    fn remove_at(&mut self, ci: usize, pos: usize) -> E {
        let id = self.chunks[ci].remove(pos);
        self.len -= 1;
        let n = self.chunks[ci].len();
        if n > 0 && pos == n {
            self.tops[ci] = self.chunks[ci][n - 1];
        }
        if n == 0 {
            self.chunks.remove(ci);
            self.tops.remove(ci);
            if self.chunks.is_empty() {
                // Release everything once the order is empty.
                *self = Chunked::default();
            } else {
                self.rebuild_from(ci);
            }
        } else if n < LOAD / 2 && self.chunks.len() > 1 {
            // Merge into a neighbour so chunks never get tiny.
            let (a, b) = if ci + 1 < self.chunks.len() {
                (ci, ci + 1)
            } else {
                (ci - 1, ci)
            };
            let moved = self.chunks.remove(b);
            self.chunks[a].extend(moved);
            // The merged chunk ends where the later of the two did.
            self.tops.remove(a);
            if self.chunks[a].len() > 2 * LOAD {
                let half = self.chunks[a].len() / 2;
                let tail = self.chunks[a].split_off(half);
                self.chunks[a].shrink_to_fit();
                self.tops.insert(a, self.chunks[a][half - 1]);
                self.chunks.insert(a + 1, tail);
            }
            self.rebuild_from(a);
        } else {
            self.add(ci, usize::MAX); // -1 in wrapping arithmetic
        }
        id
    }

    /// Removes and returns the element at `rank`.
    #[cfg(test)]
    pub fn remove_rank(&mut self, rank: usize) -> Option<E> {
        if rank >= self.len {
            return None;
        }
        let (ci, off) = self.locate(rank);
        Some(self.remove_at(ci, off))
    }

    /// For a predicate that holds on a prefix of the order (and not after),
    /// the length of that prefix.
    pub fn count_while(&self, pred: impl Fn(E) -> bool) -> usize {
        let ci = self.tops.partition_point(|&l| pred(l));
        if ci == self.chunks.len() {
            return self.len;
        }
        self.prefix(ci) + self.chunks[ci].partition_point(|&e| pred(e))
    }

    /// Keeps only the elements `keep` accepts, in one pass (O(n)); the
    /// survivors are re-chunked at the target load.
    pub fn retain(&mut self, keep: impl Fn(E) -> bool) {
        let kept: Vec<E> = self
            .chunks
            .iter()
            .flatten()
            .copied()
            .filter(|&e| keep(e))
            .collect();
        *self = Chunked::default();
        if kept.is_empty() {
            return;
        }
        self.len = kept.len();
        self.chunks = kept.chunks(LOAD).map(|c| c.to_vec()).collect();
        self.tops = kept.chunks(LOAD).map(|c| c[c.len() - 1]).collect();
        self.rebuild();
    }

    /// Number of chunks.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Keeps only the elements of chunk `ci` that `keep` accepts; returns
    /// how many went. O(chunk), plus O(chunks) if the chunk empties. A
    /// chunk left small is merged by a later removal, not here.
    pub fn retain_chunk(&mut self, ci: usize, keep: impl Fn(E) -> bool) -> usize {
        let Some(chunk) = self.chunks.get_mut(ci) else {
            return 0;
        };
        let before = chunk.len();
        chunk.retain(|&e| keep(e));
        let gone = before - chunk.len();
        if gone == 0 {
            return 0;
        }
        self.len -= gone;
        if chunk.capacity() - chunk.len() > GROW {
            // Chunks thinned this way are seldom refilled (new elements
            // mostly land elsewhere): give the room back.
            chunk.shrink_to(chunk.len() + GROW / 2);
        }
        if let Some(&top) = chunk.last() {
            self.tops[ci] = top;
            self.add(ci, gone.wrapping_neg());
        } else {
            self.chunks.remove(ci);
            self.tops.remove(ci);
            if self.chunks.is_empty() {
                *self = Chunked::default();
            } else {
                self.rebuild_from(ci);
            }
        }
        gone
    }

    /// The element at `rank` (0-based, ascending).
    pub fn get(&self, rank: usize) -> Option<E> {
        if rank >= self.len {
            return None;
        }
        let (ci, off) = self.locate(rank);
        self.chunks.get(ci)?.get(off).copied()
    }

    /// The lowest element.
    pub fn first(&self) -> Option<E> {
        self.chunks.first().and_then(|c| c.first()).copied()
    }

    /// The highest element.
    pub fn last(&self) -> Option<E> {
        self.tops.last().copied()
    }

    /// Elements with rank in `start..end`, ascending (reversible).
    pub fn range(&self, start: usize, end: usize) -> RankIter<'_, E> {
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
    pub fn iter(&self) -> RankIter<'_, E> {
        self.range(0, self.len)
    }

    /// Heap bytes held (chunk capacities, tops and the Fenwick tree).
    pub fn heap_bytes(&self) -> usize {
        let e = std::mem::size_of::<E>();
        self.chunks.capacity() * std::mem::size_of::<Vec<E>>()
            + self.chunks.iter().map(|c| c.capacity() * e).sum::<usize>()
            + self.tops.capacity() * e
            + self.tree.capacity() * std::mem::size_of::<usize>()
    }

    /// Chunk and offset of `rank < len`.
    fn locate(&self, rank: usize) -> Slot {
        let n = self.chunks.len();
        if n <= 1 {
            return (0, rank);
        }
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
    fn locate_or_end(&self, rank: usize) -> Slot {
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

    /// Rebuilds the Fenwick tree from the chunk lengths in O(chunks): it
    /// reads only the chunks' headers, which are contiguous (the tops are
    /// kept up to date by the caller, so no chunk's elements are read). A
    /// single chunk needs no tree (small collections save its allocation).
    fn rebuild(&mut self) {
        self.rebuild_from(0);
    }

    /// As [`rebuild`](Self::rebuild) when the first `kept` chunks are
    /// unchanged (same lengths, same places): only the tree nodes past
    /// them are recomputed, O(chunks - kept + log chunks). A chunk split or
    /// merged near the end (new deadlines are the latest) costs almost
    /// nothing.
    fn rebuild_from(&mut self, kept: usize) {
        debug_assert_eq!(self.tops.len(), self.chunks.len());
        let n = self.chunks.len();
        if n <= 1 {
            self.tree = Vec::new();
            return;
        }
        // Nodes 1..=kept cover only kept chunks; a tree that was not
        // built for as many chunks starts over.
        let kept = if self.tree.len() > kept { kept } else { 0 };
        self.tree.truncate(kept + 1);
        self.tree.resize(n + 1, 0);
        for i in kept + 1..=n {
            self.tree[i] = self.chunks[i - 1].len();
        }
        // Kept nodes whose parent is past them: exactly the nodes whose
        // ranges make up the prefix of `kept` chunks.
        let mut i = kept;
        while i > 0 {
            let j = i + (i & i.wrapping_neg());
            if j <= n {
                let v = self.tree[i];
                self.tree[j] += v;
            }
            i -= i & i.wrapping_neg();
        }
        for i in kept + 1..=n {
            let j = i + (i & i.wrapping_neg());
            if j <= n {
                let v = self.tree[i];
                self.tree[j] += v;
            }
        }
    }

    /// Checks the internal invariants against `cmp` (for tests).
    #[cfg(test)]
    pub fn check(&self, cmp: &impl Fn(E, E) -> Ordering) {
        let mut total = 0;
        for (i, c) in self.chunks.iter().enumerate() {
            assert!(!c.is_empty());
            assert!(c.len() <= 2 * LOAD);
            assert_eq!(self.prefix(i), total);
            total += c.len();
        }
        assert_eq!(total, self.len);
        let lasts: Vec<E> = self
            .chunks
            .iter()
            .filter_map(|c| c.last().copied())
            .collect();
        assert!(lasts == self.tops);
        let all: Vec<E> = self.chunks.iter().flatten().copied().collect();
        assert!(all.windows(2).all(|w| cmp(w[0], w[1]) == Ordering::Less));
    }
}

/// Iterator over a rank range of a [`Chunked`].
#[derive(Debug, Clone)]
pub struct RankIter<'a, E> {
    order: &'a Chunked<E>,
    /// Next element from the front.
    front: Slot,
    /// One past the next element from the back.
    back: Slot,
    remaining: usize,
}

impl<E: Copy> Iterator for RankIter<'_, E> {
    type Item = E;

    fn next(&mut self) -> Option<E> {
        if self.remaining == 0 {
            return None;
        }
        let (ci, off) = self.front;
        let chunk = self.order.chunks.get(ci)?;
        let id = *chunk.get(off)?;
        self.front = if off + 1 < chunk.len() {
            (ci, off + 1)
        } else {
            (ci + 1, 0)
        };
        self.remaining -= 1;
        Some(id)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<E: Copy> DoubleEndedIterator for RankIter<'_, E> {
    fn next_back(&mut self) -> Option<E> {
        if self.remaining == 0 {
            return None;
        }
        let (mut ci, mut off) = self.back;
        if off == 0 {
            ci = ci.checked_sub(1)?;
            off = self.order.chunks.get(ci)?.len();
        }
        off -= 1;
        let id = *self.order.chunks.get(ci)?.get(off)?;
        self.back = (ci, off);
        self.remaining -= 1;
        Some(id)
    }
}

impl<E: Copy> ExactSizeIterator for RankIter<'_, E> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids ordered by a key table: key `k / 3`, ties by `k`.
    fn keyed(keys: &[u32]) -> impl Fn(u32, u32) -> Ordering + '_ {
        move |a, b| {
            let (x, y) = (keys[a as usize], keys[b as usize]);
            (x / 3).cmp(&(y / 3)).then(x.cmp(&y))
        }
    }

    #[test]
    fn ranks_survive_splits_and_merges() {
        let n = 3000u32;
        // Id i holds key (i * 7919) % n: inserting ids in order scrambles keys.
        let keys: Vec<u32> = (0..n).map(|i| (i * 7919) % n).collect();
        let cmp = keyed(&keys);
        let mut id_of = vec![0u32; n as usize];
        for (i, &k) in keys.iter().enumerate() {
            id_of[k as usize] = i as u32;
        }
        let mut o = Chunked::<u32>::default();
        for i in 0..n {
            assert!(o.insert(i, &cmp));
        }
        assert!(!o.insert(0, &cmp));
        o.check(&cmp);
        assert_eq!(o.len(), n as usize);
        for k in 0..n {
            let id = id_of[k as usize];
            assert_eq!(o.count_while(|e| cmp(e, id) == Ordering::Less), k as usize);
            assert_eq!(o.get(k as usize), Some(id));
        }
        let fwd: Vec<_> = o.range(10, 700).collect();
        let back: Vec<_> = o.range(10, 700).rev().collect();
        assert_eq!(fwd.len(), 690);
        assert_eq!(fwd.iter().rev().copied().collect::<Vec<_>>(), back);
        assert_eq!(fwd[0], id_of[10]);
        // Remove most elements, scattered, to force merges.
        for i in 0..n {
            let k = (i * 104729) % n;
            if !k.is_multiple_of(10) {
                assert!(o.remove(id_of[k as usize], &cmp));
            }
        }
        o.check(&cmp);
        assert_eq!(o.len(), 300);
        for (r, id) in o.iter().enumerate() {
            assert_eq!(keys[id as usize], (r * 10) as u32);
        }
        assert_eq!(o.slot_of(id_of[20], &cmp), Some((0, 2)));
        assert_eq!(o.slot_of(id_of[21], &cmp), None);
        assert_eq!(o.remove_rank(0), Some(id_of[0]));
        assert_eq!(o.first(), Some(id_of[10]));
        assert_eq!(o.last(), Some(id_of[2990]));
        while o.remove_rank(0).is_some() {}
        o.check(&cmp);
        assert!(o.is_empty());
        assert_eq!(o.iter().next(), None);
        assert_eq!(o.range(0, 5).next_back(), None);
    }

    /// Appends (the fast path into the last chunk) keep the order a set:
    /// duplicates of any element of the last chunk, its first included,
    /// are refused, and elements between the last two chunks' ends land
    /// in the last chunk in order.
    #[test]
    fn appends_into_the_last_chunk_stay_a_set() {
        let cmp = |a: u32, b: u32| a.cmp(&b);
        let mut o = Chunked::<u32>::default();
        for i in 0..2000u32 {
            assert!(o.insert(i * 4, &cmp));
            assert!(!o.insert(i * 4, &cmp), "the newest element again");
            if i > 0 {
                assert!(!o.insert((i - 1) * 4, &cmp));
            }
        }
        o.check(&cmp);
        let n = o.chunk_count();
        assert!(n > 2);
        // The last chunk's first element, and one between it and the end
        // of the chunk before.
        let last_first = o.range(o.len() - 1, o.len()).next().expect("an element");
        let first_of_last = (0..o.len())
            .rev()
            .map(|r| o.get(r).expect("in range"))
            .find(|&e| {
                o.slot_of(e, &cmp)
                    .is_some_and(|(c, off)| c == n - 1 && off == 0)
            })
            .expect("the last chunk's first");
        assert!(first_of_last <= last_first);
        assert!(!o.insert(first_of_last, &cmp));
        assert!(o.insert(first_of_last - 1, &cmp));
        assert!(o.insert(first_of_last + 1, &cmp));
        o.check(&cmp);
        assert_eq!(o.len(), 2002);
        let all: Vec<u32> = o.iter().collect();
        assert!(all.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn mixed_iteration_meets_in_the_middle() {
        let keys: Vec<u32> = (0..600).map(|k| k * 3).collect();
        let cmp = keyed(&keys);
        let mut o = Chunked::<u32>::default();
        for k in 0..600 {
            o.insert(k, &cmp);
        }
        let mut r = o.range(100, 110);
        assert_eq!(r.len(), 10);
        assert_eq!(r.next(), Some(100));
        assert_eq!(r.next_back(), Some(109));
        assert_eq!(r.by_ref().count(), 8);
        assert_eq!(r.next_back(), None);
        assert_eq!(o.count_while(|e| e < 251), 251);
        assert_eq!(o.count_while(|_| true), 600);
        assert_eq!(o.count_while(|_| false), 0);
        o.renumber(|e| e + 1000);
        assert_eq!(o.first(), Some(1000));
    }

    /// Appends at the end (new deadlines), removals anywhere, thinning of
    /// one chunk: the tree, tops and ranks match a sorted model after every
    /// step, through splits, merges and partial tree rebuilds.
    #[test]
    fn partial_rebuilds_keep_ranks_exact() {
        use proptest::prelude::*;
        use proptest::test_runner::TestRunner;
        let cmp = |a: u32, b: u32| a.cmp(&b);
        let op = prop_oneof![
            4 => (0u32..5000).prop_map(|v| (0u8, v)),
            3 => (0u32..5000).prop_map(|v| (1u8, v)),
            1 => (0u32..64).prop_map(|v| (2u8, v)),
        ];
        let mut runner = TestRunner::new(ProptestConfig::with_cases(24));
        runner
            .run(&proptest::collection::vec(op, 0..4000), |ops| {
                let mut o: Chunked<u32> = Chunked::new();
                let mut m = std::collections::BTreeSet::new();
                let mut next = 0u32;
                for (kind, v) in ops {
                    match kind {
                        0 => {
                            // Mostly appends, as deadlines arrive.
                            let e = if v % 4 == 0 { v } else { 5000 + next };
                            next += 1;
                            prop_assert_eq!(o.insert(e, &cmp), m.insert(e));
                        }
                        1 => prop_assert_eq!(o.remove(v, &cmp), m.remove(&v)),
                        _ => {
                            let ci = v as usize % o.chunk_count().max(1);
                            let doomed: Vec<u32> = o.chunks.get(ci).map_or(Vec::new(), |c| {
                                c.iter().copied().filter(|e| e % 3 == 0).collect()
                            });
                            prop_assert_eq!(o.retain_chunk(ci, |e| e % 3 != 0), doomed.len());
                            for e in doomed {
                                m.remove(&e);
                            }
                        }
                    }
                    o.check(&cmp);
                    prop_assert_eq!(o.len(), m.len());
                }
                let all: Vec<u32> = o.iter().collect();
                prop_assert_eq!(all, m.iter().copied().collect::<Vec<_>>());
                for (r, e) in m.iter().enumerate().step_by(37) {
                    prop_assert_eq!(o.get(r), Some(*e));
                }
                Ok(())
            })
            .expect("order matches the model");
    }
}
