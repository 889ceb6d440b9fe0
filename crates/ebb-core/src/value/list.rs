//! Lists: a packed buffer while small, a double-ended queue of byte
//! strings beyond, plus the index arithmetic and scans the list commands
//! share.

use bytes::Bytes;

use super::lpack::LPack;
use super::quick::{Quick, QuickIter};
use crate::reply::BulkList;

/// Which end of a list an operation works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The head (`LEFT`, index 0).
    Left,
    /// The tail (`RIGHT`, index -1).
    Right,
}

impl End {
    /// Parses `LEFT`/`RIGHT`, ASCII case-insensitively.
    pub fn parse(arg: &[u8]) -> Option<End> {
        if arg.eq_ignore_ascii_case(b"left") {
            Some(End::Left)
        } else if arg.eq_ignore_ascii_case(b"right") {
            Some(End::Right)
        } else {
            None
        }
    }

    /// The keyword as Redis writes it when it logs a command (`LEFT`/`RIGHT`).
    pub fn keyword(self) -> &'static str {
        match self {
            End::Left => "LEFT",
            End::Right => "RIGHT",
        }
    }

    /// The pop command and event name for this end (`lpop`/`rpop`).
    pub fn pop_name(self) -> &'static str {
        match self {
            End::Left => "lpop",
            End::Right => "rpop",
        }
    }

    /// The push event name for this end (`lpush`/`rpush`).
    pub fn push_name(self) -> &'static str {
        match self {
            End::Left => "lpush",
            End::Right => "rpush",
        }
    }
}

/// Resolves a possibly negative Redis index (`-1` is the last element)
/// against a length; `None` when it falls outside the list.
pub fn resolve_index(len: usize, index: i64) -> Option<usize> {
    let len = len as i64;
    let i = if index < 0 { len + index } else { index };
    if (0..len).contains(&i) {
        Some(i as usize)
    } else {
        None
    }
}

/// Resolves an inclusive `start..=stop` range with negative indexes as
/// LRANGE and LTRIM do; `None` when the range is empty.
pub fn resolve_range(len: usize, start: i64, stop: i64) -> Option<(usize, usize)> {
    let len = len as i64;
    let mut start = if start < 0 { len + start } else { start };
    let mut stop = if stop < 0 { len + stop } else { stop };
    if start < 0 {
        start = 0;
    }
    if start > stop || start >= len {
        return None;
    }
    if stop >= len {
        stop = len - 1;
    }
    Some((start as usize, stop as usize))
}

/// Options of an LPOS scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PosQuery {
    /// Which match to start from: 1 the first from the head, -1 the first
    /// from the tail; never 0.
    pub rank: i64,
    /// How many matches to report (`Some(0)` = all); `None` for a single one.
    pub count: Option<i64>,
    /// How many elements to scan at most (0 = all).
    pub maxlen: i64,
}

/// A list. Up to [`lpack::MAX_LEN`](super::lpack::MAX_LEN) elements of at
/// most [`lpack::MAX_ITEM`](super::lpack::MAX_ITEM) bytes it is one packed
/// buffer ([`LPack`], as Redis keeps a listpack); past that, a queue of
/// packed nodes ([`Quick`], as Redis's quicklist). A list never goes back
/// to the single buffer (it is deleted when emptied). OBJECT ENCODING says
/// `quicklist` for both, as Redis 7.0 does.
///
/// The value is 16 bytes: the packed buffer alone, or a box with the nodes.
#[derive(Debug, Clone, Default)]
pub struct ListValue {
    repr: Repr,
}

#[derive(Debug, Clone)]
enum Repr {
    Packed(LPack),
    Quick(Box<Quick>),
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Packed(LPack::default())
    }
}

/// A list's elements in order, from either form.
pub enum ListIter<'a> {
    /// A packed list's elements.
    Packed(std::vec::IntoIter<&'a [u8]>),
    /// A node list's elements.
    Quick(QuickIter<'a>),
}

impl<'a> Iterator for ListIter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        match self {
            ListIter::Packed(it) => it.next(),
            ListIter::Quick(it) => it.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            ListIter::Packed(it) => it.size_hint(),
            ListIter::Quick(it) => it.size_hint(),
        }
    }
}

impl DoubleEndedIterator for ListIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            ListIter::Packed(it) => it.next_back(),
            ListIter::Quick(it) => it.next_back(),
        }
    }
}

impl ExactSizeIterator for ListIter<'_> {}

impl FromIterator<Bytes> for ListValue {
    fn from_iter<I: IntoIterator<Item = Bytes>>(iter: I) -> ListValue {
        let mut l = ListValue::new();
        for v in iter {
            l.push_back(v);
        }
        l
    }
}

impl ListValue {
    /// An empty list.
    pub fn new() -> ListValue {
        ListValue::default()
    }

    /// The list pushing `items` one after another at `end` of an empty
    /// list makes, built in one buffer; None when it would not pack (too
    /// many elements, or one too long), or `items` is empty.
    pub fn packed_from(items: &[&[u8]], end: End) -> Option<ListValue> {
        if items.is_empty() || items.iter().any(|v| !LPack::fits(items.len(), v.len())) {
            return None;
        }
        let p = match end {
            End::Right => LPack::from_items(items.iter().copied()),
            End::Left => LPack::from_items(items.iter().rev().copied()),
        };
        Some(ListValue {
            repr: Repr::Packed(p),
        })
    }

    /// The list pushing `items` one after another at `end` of an empty
    /// list makes: packed in one buffer when it packs, otherwise the nodes
    /// the pushes make, without filling (and then converting) a packed
    /// buffer first. One by one, the elements up to the first that does
    /// not fit go into the packed form, which turns into nodes element by
    /// element (tail pushes in list order) before that one is pushed.
    pub fn from_pushes(items: &[&[u8]], end: End) -> ListValue {
        if items.is_empty() {
            return ListValue::new();
        }
        if let Some(l) = ListValue::packed_from(items, end) {
            return l;
        }
        let k = items
            .iter()
            .enumerate()
            .position(|(i, v)| !LPack::fits(i + 1, v.len()))
            .unwrap_or(items.len());
        let q = match end {
            End::Right => Quick::from_items(items.iter().copied()),
            End::Left => {
                let mut q = Quick::from_items(items[..k].iter().rev().copied());
                items[k..].iter().for_each(|v| q.push_front(v));
                q
            }
        };
        ListValue {
            repr: Repr::Quick(Box::new(q)),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Packed(p) => p.len(),
            Repr::Quick(q) => q.len(),
        }
    }

    /// Whether the list has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the list is in its single-buffer form.
    pub fn is_packed(&self) -> bool {
        matches!(self.repr, Repr::Packed(_))
    }

    /// The elements from the head.
    pub fn iter(&self) -> ListIter<'_> {
        match &self.repr {
            Repr::Packed(p) => ListIter::Packed(p.iter().collect::<Vec<_>>().into_iter()),
            Repr::Quick(q) => ListIter::Quick(q.iter()),
        }
    }

    /// The elements from the head, copied.
    pub fn iter_bytes(&self) -> impl Iterator<Item = Bytes> + '_ {
        self.iter().map(Bytes::copy_from_slice)
    }

    /// Element `i` (from the head), if there is one.
    pub fn get(&self, i: usize) -> Option<Bytes> {
        match &self.repr {
            Repr::Packed(p) => p.get(i).map(Bytes::copy_from_slice),
            Repr::Quick(q) => q.get(i).map(Bytes::copy_from_slice),
        }
    }

    /// Elements `start..=stop` (both within the list), copied back to back
    /// into one reply buffer.
    pub fn range(&self, start: usize, stop: usize) -> BulkList {
        let n = stop + 1 - start;
        let fill = |it: &mut dyn Iterator<Item = &[u8]>| -> BulkList {
            let mut out = BulkList::with_capacity(n, 0);
            it.take(n).for_each(|e| out.push(e));
            out
        };
        match &self.repr {
            Repr::Packed(p) => fill(&mut p.iter().skip(start)),
            Repr::Quick(q) => fill(&mut q.iter_from(start)),
        }
    }

    /// The node form, the packed elements moved into it first if need be.
    fn quick(&mut self) -> &mut Quick {
        if let Repr::Packed(p) = &self.repr {
            let q = Quick::from_items(p.iter());
            self.repr = Repr::Quick(Box::new(q));
        }
        match &mut self.repr {
            Repr::Quick(q) => q,
            Repr::Packed(_) => unreachable!("moved to nodes above"),
        }
    }

    /// The packed buffer when it can take one more element of `item`
    /// bytes; otherwise `None`.
    fn packed_room(&mut self, item: usize) -> Option<&mut LPack> {
        match &mut self.repr {
            Repr::Packed(p) if LPack::fits(p.len() + 1, item) => Some(p),
            _ => None,
        }
    }

    /// Replaces element `i` (which must exist).
    pub fn set(&mut self, i: usize, v: Bytes) {
        match &mut self.repr {
            Repr::Packed(p) if LPack::fits(p.len(), v.len()) => p.set(i, &v),
            _ => self.quick().set(i, &v),
        }
    }

    /// Inserts `v` so that it becomes element `i` (`i <= len`).
    fn insert(&mut self, i: usize, v: &[u8]) {
        match self.packed_room(v.len()) {
            Some(p) => p.insert(i, v),
            None => self.quick().insert(i, v),
        }
    }

    /// Appends `v` at the tail.
    pub fn push_back(&mut self, v: Bytes) {
        self.push_slice(End::Right, &v);
    }

    /// Pushes one element at `end`.
    pub fn push_at(&mut self, end: End, v: Bytes) {
        self.push_slice(end, &v);
    }

    /// Pushes a copy of `v` at `end`.
    pub fn push_slice(&mut self, end: End, v: &[u8]) {
        match (self.packed_room(v.len()), end) {
            (Some(p), End::Left) => p.insert(0, v),
            (Some(p), End::Right) => p.push_back(v),
            (None, End::Left) => self.quick().push_front(v),
            (None, End::Right) => self.quick().push_back(v),
        }
    }

    /// Pops one element from `end`.
    pub fn pop_at(&mut self, end: End) -> Option<Bytes> {
        match (&mut self.repr, end) {
            (Repr::Packed(p), _) => p.pop_many(end == End::Left, 1).pop(),
            (Repr::Quick(q), End::Left) => q.pop_front(),
            (Repr::Quick(q), End::Right) => q.pop_back(),
        }
    }

    /// Pops up to `n` elements from `end`, in pop order.
    pub fn pop_many(&mut self, end: End, n: usize) -> Vec<Bytes> {
        let q = match &mut self.repr {
            Repr::Packed(p) => return p.pop_many(end == End::Left, n),
            Repr::Quick(q) => q,
        };
        // Copied out first, then dropped a node at a time (popping one by
        // one would move a node's bytes for every element).
        let n = n.min(q.len());
        let out: Vec<Bytes> = match end {
            End::Left => q.iter().take(n).map(Bytes::copy_from_slice).collect(),
            End::Right => q.iter().rev().take(n).map(Bytes::copy_from_slice).collect(),
        };
        match end {
            End::Left => q.drop_front(n),
            End::Right => q.drop_back(n),
        }
        out
    }

    /// Inserts `v` before (or after) the first element equal to `pivot`
    /// from the head; false when there is no such element.
    pub fn insert_at_pivot(&mut self, pivot: &[u8], v: Bytes, after: bool) -> bool {
        match self.iter().position(|e| e == pivot) {
            Some(i) => {
                self.insert(if after { i + 1 } else { i }, &v);
                true
            }
            None => false,
        }
    }

    /// LREM: removes elements equal to `v`: the first `count` from the head
    /// if positive, from the tail if negative, all if 0. Returns how many.
    pub fn remove_matching(&mut self, v: &[u8], count: i64) -> usize {
        // i64::MIN has no positive counterpart; Redis then removes them all.
        let limit = match count.unsigned_abs() {
            0 => u64::MAX,
            n => n,
        };
        let mut keep = vec![true; self.len()];
        let mut removed: u64 = 0;
        let mut mark = |(i, e): (usize, &[u8])| {
            if removed < limit && e == v {
                keep[i] = false;
                removed += 1;
            }
        };
        if count >= 0 {
            self.iter().enumerate().for_each(&mut mark);
        } else {
            self.iter().enumerate().rev().for_each(&mut mark);
        }
        if removed > 0 {
            match &mut self.repr {
                Repr::Packed(p) => p.retain_flags(&keep),
                Repr::Quick(q) => {
                    let kept =
                        Quick::from_items(q.iter().zip(&keep).filter(|(_, &k)| k).map(|(e, _)| e));
                    **q = kept;
                }
            }
        }
        removed as usize
    }

    /// LTRIM: keeps only `start..=stop`; returns how many were removed.
    pub fn trim_to(&mut self, start: i64, stop: i64) -> usize {
        let before = self.len();
        let (s, e) = resolve_range(before, start, stop).map_or((0, 0), |(s, e)| (s, e + 1));
        match &mut self.repr {
            Repr::Packed(p) => {
                p.remove_range(e, before);
                p.remove_range(0, s);
            }
            Repr::Quick(q) => {
                q.drop_back(before - e);
                q.drop_front(s);
            }
        }
        before - self.len()
    }

    /// LPOS: indexes of the elements equal to `v`, per the query.
    pub fn positions(&self, v: &[u8], q: PosQuery) -> Vec<usize> {
        let from_tail = q.rank < 0;
        // Redis negates with wrapping: RANK i64::MIN stays negative and then
        // accepts every match, with no COUNT stop.
        let rank = if from_tail {
            q.rank.wrapping_neg()
        } else {
            q.rank
        };
        let mut out = Vec::new();
        let mut matches: i64 = 0;
        let mut scanned: i64 = 0;
        let mut check = |&(idx, e): &(usize, &[u8])| -> bool {
            if q.maxlen != 0 && scanned >= q.maxlen {
                return false;
            }
            scanned += 1;
            if e != v {
                return true;
            }
            matches += 1;
            if matches < rank {
                return true;
            }
            out.push(idx);
            match q.count {
                None => false,
                Some(c) => c == 0 || matches.wrapping_sub(rank).wrapping_add(1) < c,
            }
        };
        if from_tail {
            self.iter()
                .enumerate()
                .rev()
                .take_while(|x| check(x))
                .for_each(drop);
        } else {
            self.iter()
                .enumerate()
                .take_while(|x| check(x))
                .for_each(drop);
        }
        out
    }

    /// Bytes on the heap: the packed buffer, or the box, the node vector
    /// and the nodes.
    pub fn heap_bytes(&self) -> usize {
        match &self.repr {
            Repr::Packed(p) => p.heap_bytes(),
            Repr::Quick(q) => std::mem::size_of::<Quick>() + q.heap_bytes(),
        }
    }

    /// Separate allocations the list holds (for MEMORY USAGE's estimate
    /// of allocator overhead).
    pub fn allocations(&self) -> usize {
        match &self.repr {
            Repr::Packed(p) => usize::from(p.heap_bytes() > 0),
            Repr::Quick(q) => 2 + q.node_count(),
        }
    }
}

#[cfg(test)]
#[path = "list_tests.rs"]
mod tests;
