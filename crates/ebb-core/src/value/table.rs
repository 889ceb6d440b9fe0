//! The members of a set, sorted set or hash, each stored once.
//!
//! Members (with their score or value) live in one dense vector of nodes
//! addressed by `u32` ids (their positions). A hash index of ids, hashing
//! and comparing through the nodes, finds a member in O(1) without a second
//! copy of it (built once the collection passes a few dozen members;
//! smaller ones are scanned); the member-deadline index and a sorted set's order hold ids
//! as well. Removing a member moves the last node into its place (the same
//! order an index map's `swap_remove` gives) or, for small hashes, shifts
//! the nodes above it down (`shift_remove`); every index is fixed up.

use std::sync::OnceLock;

use super::member::{Member, INLINE};
use crate::expiry::{DeadlineIndex, Due, MemberDeadlines, MemberNames, NO_DEADLINE};
use crate::segindex::SegIndex;

/// One member and what it maps to (nothing, a score or a value).
#[derive(Debug, Clone)]
pub struct Node<V> {
    /// The member (or field) name.
    pub member: Member,
    /// Its score (sorted sets), value (hashes) or `()` (sets).
    pub value: V,
}

/// Up to this many members, lookups scan the nodes instead of keeping a
/// hash index (a small collection saves the index's memory; comparing a
/// few dozen short members costs about one hash lookup).
const LINEAR_MAX: usize = 32;

/// The members of one collection with their deadlines.
#[derive(Debug, Clone)]
pub struct MemberTable<V> {
    nodes: Vec<Node<V>>,
    /// Ids by member hash, once the table passes [`LINEAR_MAX`] members
    /// (boxed: a small table pays one null pointer for it).
    index: Option<Box<SegIndex>>,
    deadlines: Option<Box<DeadlineIndex>>,
}

impl<V> Default for MemberTable<V> {
    fn default() -> Self {
        MemberTable {
            nodes: Vec::new(),
            index: None,
            deadlines: None,
        }
    }
}

/// Hash of a member: one process-wide random seed, as Redis has.
pub(crate) fn hash_of(m: &[u8]) -> u64 {
    static SEED: OnceLock<ahash::RandomState> = OnceLock::new();
    SEED.get_or_init(ahash::RandomState::new).hash_one(m)
}

impl<V> MemberNames for MemberTable<V> {
    fn member(&self, id: u32) -> &[u8] {
        &self.nodes[id as usize].member
    }

    fn find(&self, member: &[u8]) -> Option<u32> {
        MemberTable::find(self, member)
    }
}

/// A large collection's member lookups, as the look-ahead over a
/// pipeline sees them: first every probe position of a batch is loaded
/// ([`prefetch_probe`](Lookahead::prefetch_probe), computed from the hash
/// alone), then every node those probes name
/// ([`prefetch_node`](Lookahead::prefetch_node)), so that the cache misses
/// of a batch's lookups overlap instead of following one another.
pub trait Lookahead {
    /// Whether the table is too large to stay in the cache, so that
    /// prefetching pays.
    fn worth_prefetching(&self) -> bool;
    /// Starts loading the index position of a member hashing to `hash`
    /// (see [`hash_of`]).
    fn prefetch_probe(&self, hash: u64);
    /// Starts loading the node (and deadline) of the member the index
    /// holds under `hash` (the index is read).
    fn prefetch_node(&self, hash: u64);
}

/// What a lookup of a member reads besides its node: its index slot and
/// control byte (about 8 bytes at the index's load) and its deadline.
const LOOKUP_EXTRA: usize = 16;

impl<V> Lookahead for MemberTable<V> {
    fn worth_prefetching(&self) -> bool {
        crate::prefetch::worth_bytes(
            self.nodes
                .len()
                .saturating_mul(size_of::<Node<V>>() + LOOKUP_EXTRA),
        )
    }

    fn prefetch_probe(&self, hash: u64) {
        if let Some(ix) = &self.index {
            ix.prefetch(hash);
        }
    }

    fn prefetch_node(&self, hash: u64) {
        let Some(id) = self.index.as_ref().and_then(|ix| ix.first_candidate(hash)) else {
            return;
        };
        if let Some(node) = self.nodes.get(id as usize) {
            crate::prefetch::prefetch_value(node);
        }
        if let Some(at) = self.deadlines.as_ref().and_then(|d| d.at.get(id as usize)) {
            crate::prefetch::prefetch_value(at);
        }
    }
}

impl<V> MemberTable<V> {
    /// Number of members.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// All nodes by id.
    pub fn nodes(&self) -> &[Node<V>] {
        &self.nodes
    }

    /// The node with id `id`.
    pub fn node(&self, id: u32) -> Option<&Node<V>> {
        self.nodes.get(id as usize)
    }

    /// Whether the hash index is built (otherwise lookups scan the nodes).
    fn indexed(&self) -> bool {
        self.index.is_some()
    }

    /// The id of `member`.
    pub fn find(&self, member: &[u8]) -> Option<u32> {
        let nodes = &self.nodes;
        let Some(index) = &self.index else {
            let found = if member.len() <= INLINE {
                let key = Member::new(member);
                nodes.iter().position(|n| n.member.same_inline(&key))
            } else {
                nodes.iter().position(|n| n.member[..] == *member)
            };
            return found.map(|i| i as u32);
        };
        index.find(hash_of(member), |id| {
            nodes[id as usize].member[..] == *member
        })
    }

    /// Mutable access to the value of node `id` (not to be used for a
    /// sorted set's score while the node is in its order).
    pub fn value_mut(&mut self, id: u32) -> Option<&mut V> {
        self.nodes.get_mut(id as usize).map(|n| &mut n.value)
    }

    /// Appends a member known to be absent (stored as a copy of
    /// `member`); returns its id.
    pub fn push(&mut self, member: &[u8], value: V) -> u32 {
        let id = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
        self.nodes.push(Node {
            member: Member::new(member),
            value,
        });
        if let Some(d) = &mut self.deadlines {
            d.at.push(NO_DEADLINE);
        }
        let nodes = &self.nodes;
        let rehash = |i: u32| hash_of(&nodes[i as usize].member);
        if let Some(index) = &mut self.index {
            index.insert(hash_of(member), id, rehash);
        } else if nodes.len() > LINEAR_MAX {
            // Large enough to be worth a hash index and a deadline order:
            // index every node.
            let mut index = Box::new(SegIndex::with_capacity(nodes.len()));
            for (i, n) in nodes.iter().enumerate() {
                index.insert(hash_of(&n.member), i as u32, rehash);
            }
            self.index = Some(index);
            if let Some(d) = &mut self.deadlines {
                for i in 0..nodes.len() as u32 {
                    let at = d.at[i as usize];
                    if at != NO_DEADLINE {
                        d.order.insert(Due { at, id: i });
                    }
                }
            }
        }
        id
    }

    /// The deadline of node `id`.
    pub fn deadline(&self, id: u32) -> Option<u64> {
        let t = *self.deadlines.as_ref()?.at.get(id as usize)?;
        (t != NO_DEADLINE).then_some(t)
    }

    /// Gives node `id` the deadline `at`, replacing any it had.
    pub fn set_deadline(&mut self, id: u32, at: u64) {
        let at = at.min(NO_DEADLINE - 1);
        let n = self.nodes.len();
        let ordered = self.indexed();
        let d = self.deadlines.get_or_insert_with(|| {
            Box::new(DeadlineIndex {
                at: vec![NO_DEADLINE; n],
                order: Default::default(),
                count: 0,
                sweep: 0,
            })
        });
        let Some(&old) = d.at.get(id as usize) else {
            return;
        };
        if old == at {
            return;
        }
        if old == NO_DEADLINE {
            d.count += 1;
        }
        d.at[id as usize] = at;
        if ordered {
            // The old pair, if any, goes stale where it is (see
            // DeadlineIndex::order).
            d.order.insert(Due { at, id });
            d.settle();
        }
    }

    /// Removes the deadline of node `id`; returns the one it had.
    pub fn clear_deadline(&mut self, id: u32) -> Option<u64> {
        let old = self.deadline(id)?;
        let d = self.deadlines.as_mut()?;
        d.order.remove(Due { at: old, id });
        d.at[id as usize] = NO_DEADLINE;
        d.count -= 1;
        if d.count == 0 {
            self.deadlines = None;
        } else {
            d.settle();
        }
        Some(old)
    }

    /// The id of the member with the earliest deadline, if that is `<= now`.
    pub fn first_due(&self, now: u64) -> Option<u32> {
        let d = self.deadlines.as_ref()?;
        let id = d.earliest_id()?;
        (d.at[id as usize] <= now).then_some(id)
    }

    /// A read-only view of the deadlines.
    pub fn deadlines(&self) -> MemberDeadlines<'_> {
        MemberDeadlines::new(self, self.deadlines.as_deref())
    }

    /// Takes node `id` out of the hash index and the deadline order.
    fn unlink(&mut self, id: u32) {
        if let Some(index) = &mut self.index {
            index.remove(hash_of(&self.nodes[id as usize].member), id);
            if index.is_empty() {
                self.index = None;
            }
        }
        if let Some(d) = &mut self.deadlines {
            let at = d.at[id as usize];
            if at != NO_DEADLINE {
                d.order.remove(Due { at, id });
                d.count -= 1;
            }
        }
    }

    /// Removes node `id`, moving the last node into its place (the last
    /// node's id becomes `id`). The caller fixes its own indexes of the
    /// last node first. Returns the removed node.
    pub fn swap_remove(&mut self, id: u32) -> Option<Node<V>> {
        let n = self.nodes.len();
        if id as usize >= n {
            return None;
        }
        self.unlink(id);
        let last = (n - 1) as u32;
        if id != last {
            if let Some(index) = &mut self.index {
                let h = hash_of(&self.nodes[last as usize].member);
                if let Some(x) = index.find_mut(h, last) {
                    *x = id;
                }
            }
            if let Some(d) = &mut self.deadlines {
                // The last node takes id `id`: its place among the members
                // due at the same millisecond moves accordingly.
                let at = d.at[last as usize];
                if at != NO_DEADLINE && d.order.remove(Due { at, id: last }) {
                    d.order.insert(Due { at, id });
                }
            }
        }
        self.finish_removal();
        if let Some(d) = &mut self.deadlines {
            d.at.swap_remove(id as usize);
            d.settle();
        }
        let node = self.nodes.swap_remove(id as usize);
        self.maybe_shrink();
        Some(node)
    }

    /// Removes node `id`, shifting the nodes above it down by one (keeps
    /// the order of the others; O(n)). Returns the removed node.
    pub fn shift_remove(&mut self, id: u32) -> Option<Node<V>> {
        if id as usize >= self.nodes.len() {
            return None;
        }
        self.unlink(id);
        let down = |x: u32| if x > id { x - 1 } else { x };
        for x in self.index.iter_mut().flat_map(|ix| ix.iter_mut()) {
            *x = down(*x);
        }
        if let Some(d) = &mut self.deadlines {
            // Shifting ids could make a stale pair equal a live one.
            d.compact();
            d.order.renumber(|e| Due {
                at: e.at,
                id: down(e.id),
            });
        }
        self.finish_removal();
        if let Some(d) = &mut self.deadlines {
            d.at.remove(id as usize);
            d.settle();
        }
        let node = self.nodes.remove(id as usize);
        self.maybe_shrink();
        Some(node)
    }

    /// Drops the deadline index once no member has a deadline.
    fn finish_removal(&mut self) {
        if self.deadlines.as_ref().is_some_and(|d| d.count == 0) {
            self.deadlines = None;
        }
    }

    /// Gives memory back once removals left the table under a quarter
    /// full (halving keeps the cost amortized O(1) per removal), as Redis
    /// shrinks its dictionaries.
    fn maybe_shrink(&mut self) {
        let (len, cap) = (self.nodes.len(), self.nodes.capacity());
        if cap <= 16 || len >= cap / 4 {
            return;
        }
        let target = (len * 2).max(8);
        self.nodes.shrink_to(target);
        let nodes = &self.nodes;
        if let Some(index) = &mut self.index {
            index.shrink(|i| hash_of(&nodes[i as usize].member));
        }
        if let Some(d) = &mut self.deadlines {
            d.at.shrink_to(target);
        }
    }

    /// Heap bytes held by the table (nodes, index, deadlines), not
    /// counting the members' own bytes.
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node<V>>()
            + self.index.as_ref().map_or(0, |ix| {
                std::mem::size_of::<SegIndex>() + ix.allocation_size()
            })
            + self.deadlines.as_ref().map_or(0, |d| {
                std::mem::size_of::<DeadlineIndex>() + d.at.capacity() * 8 + d.order.heap_bytes()
            })
    }

    /// Checks that the index, the nodes and the deadlines agree (tests).
    #[cfg(test)]
    pub fn check(&self) {
        if let Some(index) = &self.index {
            assert_eq!(index.len(), self.nodes.len());
            assert!(!index.is_empty());
        } else {
            assert!(self.nodes.len() <= LINEAR_MAX);
        }
        for (i, n) in self.nodes.iter().enumerate() {
            assert_eq!(self.find(&n.member), Some(i as u32));
        }
        if let Some(d) = &self.deadlines {
            assert_eq!(d.at.len(), self.nodes.len());
            d.order.check();
            let with = d.at.iter().filter(|&&t| t != NO_DEADLINE).count();
            assert_eq!(with, d.count);
            let live = d.order.iter().filter(|&e| d.live(e)).count();
            let ordered = if self.indexed() { with } else { 0 };
            // Every node with a deadline has its pair; the others are
            // stale, bounded, and never at either end.
            assert_eq!(live, ordered);
            // Incremental clearing lets stale pairs pass live ones by at
            // most a few chunks' worth.
            assert!(d.order.len() - live <= with.max(64) + 1024);
            assert!(d.order.first().is_none_or(|e| d.live(e)));
            assert!(d.order.last().is_none_or(|e| d.live(e)));
            assert!(with > 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_tables_scan_and_large_ones_index() {
        let mut t: MemberTable<()> = MemberTable::default();
        for i in 0..40u32 {
            t.push(format!("m{i}").as_bytes(), ());
            if i % 2 == 1 {
                t.set_deadline(i, 100 - u64::from(i % 7));
            }
            assert_eq!(t.indexed(), t.len() > LINEAR_MAX);
            t.check();
            // Earliest (deadline, id) whether scanned or ordered.
            let want = (0..=i)
                .filter(|j| j % 2 == 1)
                .map(|j| (100 - u64::from(j % 7), j))
                .min();
            let got = t
                .first_due(u64::MAX - 1)
                .and_then(|id| Some((t.deadline(id)?, id)));
            assert_eq!(got, want);
            let all: Vec<u64> = t.deadlines().iter().map(|(_, d)| d).collect();
            assert!(all.windows(2).all(|w| w[0] <= w[1]));
            assert_eq!(t.deadlines().latest(), all.last().copied());
        }
        assert_eq!(t.find(b"m39"), Some(39));
        assert_eq!(t.find(b"m40"), None);
        while t.len() > 1 {
            t.swap_remove(0);
            t.check();
        }
        t.swap_remove(0);
        t.push(b"again", ());
        assert_eq!(t.find(b"again"), Some(0));
        t.check();
    }

    #[test]
    fn removals_keep_every_index_in_step() {
        let mut t: MemberTable<u32> = MemberTable::default();
        for i in 0..300u32 {
            t.push(format!("m{i}").as_bytes(), i);
            if i % 3 != 0 {
                t.set_deadline(i, 1000 - u64::from(i % 50));
            }
        }
        t.check();
        let id = t.find(b"m10").unwrap_or(u32::MAX);
        assert_eq!(t.deadline(id), Some(990));
        assert_eq!(t.swap_remove(id).map(|n| n.value), Some(10));
        assert_eq!(t.node(id).map(|n| n.value), Some(299));
        t.check();
        let id = t.find(b"m20").unwrap_or(u32::MAX);
        assert_eq!(t.shift_remove(id).map(|n| n.value), Some(20));
        assert_eq!(t.node(id).map(|n| n.value), Some(21));
        t.check();
        assert_eq!(t.deadlines().earliest(), Some(951));
        // Due together at 951: m49, m149, m199 and m299; the lowest
        // id comes first, and m299 took m10's id 10.
        let first = t.first_due(951).and_then(|i| t.node(i)).map(|n| n.value);
        assert_eq!(first, Some(299));
        while let Some(id) = t.first_due(u64::MAX - 1) {
            t.swap_remove(id);
            t.check();
        }
        assert!(t.deadlines().is_empty());
        assert_eq!(t.len(), 100);
        // Removals gave memory back.
        assert!(t.nodes.capacity() <= 256, "{}", t.nodes.capacity());
        for i in (0..100).rev() {
            t.set_deadline(i, 5);
            t.clear_deadline(i);
        }
        t.check();
        assert!(t.deadlines.is_none());
    }

    /// A table large enough for a segmented index: members stay found
    /// through swap removals (the last member taking the hole's id) and
    /// shrinking.
    #[test]
    fn large_tables_keep_finding_members() {
        let mut t: MemberTable<u32> = MemberTable::default();
        let n = 20_000u32;
        for i in 0..n {
            t.push(format!("member:{i}").as_bytes(), i);
        }
        assert!(t.index.as_ref().is_some_and(|ix| ix.segmented()));
        for i in (0..n).filter(|i| i % 4 != 0) {
            let id = t.find(format!("member:{i}").as_bytes()).expect("present");
            assert_eq!(t.swap_remove(id).map(|n| n.value), Some(i));
        }
        t.check();
        for i in 0..n {
            let got = t.find(format!("member:{i}").as_bytes());
            assert_eq!(
                got.and_then(|id| t.node(id)).map(|n| n.value),
                (i % 4 == 0).then_some(i)
            );
        }
    }

    /// Random deadline moves, clears and removals on a large table,
    /// against a plain vector of deadlines: the order's stale pairs never
    /// show (earliest, latest, due order) and stay bounded.
    #[test]
    fn moved_deadlines_leave_no_visible_trace() {
        let mut t: MemberTable<u32> = MemberTable::default();
        let mut model: Vec<Option<u64>> = Vec::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut next = 0u32;
        for step in 0..20_000u32 {
            let op = rand(100);
            let len = model.len() as u64;
            let floor = if step < 10_000 { 40 } else { 300 };
            if len < floor || op < 15 {
                t.push(format!("m{next}").as_bytes(), next);
                next += 1;
                model.push(None);
            } else if op < 75 {
                // Few distinct deadlines, so pairs revive and collide.
                let id = rand(len) as u32;
                let at = 1_000 + rand(60);
                t.set_deadline(id, at);
                model[id as usize] = Some(at);
            } else if op < 82 {
                let id = rand(len) as u32;
                assert_eq!(t.clear_deadline(id), model[id as usize].take());
            } else if op < 96 {
                let id = rand(len) as u32;
                t.swap_remove(id);
                model.swap_remove(id as usize);
            } else {
                let id = rand(len) as u32;
                t.shift_remove(id);
                model.remove(id as usize);
            }
            if step % 7 == 0 || model.len() < 50 {
                t.check();
            }
            let mut want: Vec<(u64, u32)> = model
                .iter()
                .enumerate()
                .filter_map(|(i, d)| d.map(|d| (d, i as u32)))
                .collect();
            want.sort_unstable();
            let first = t
                .first_due(u64::MAX - 1)
                .and_then(|id| Some((t.deadline(id)?, id)));
            assert_eq!(first, want.first().copied(), "step {step}");
            assert_eq!(t.deadlines().latest(), want.last().map(|w| w.0));
            assert_eq!(t.deadlines().len(), want.len());
            if step % 50 == 0 {
                let got: Vec<u64> = t.deadlines().iter().map(|(_, d)| d).collect();
                let w: Vec<u64> = want.iter().map(|w| w.0).collect();
                assert_eq!(got, w);
            }
        }
        t.check();
    }
}
