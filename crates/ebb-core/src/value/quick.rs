//! Large lists: a double-ended queue of packed nodes, as Redis keeps a
//! quicklist of listpacks.
//!
//! A node is one byte vector of entries
//!
//! ```text
//! [length varint] [bytes] [length, reversed varint]
//! ```
//!
//! so it is walked from either end, and holds up to [`NODE_BYTES`] bytes
//! (a longer element gets a node of its own). Pushes and pops at the ends
//! touch one node: appending at the tail is amortised O(1), at the head a
//! move of at most one node's bytes. An element costs its bytes plus two
//! length bytes (up to 127 bytes), instead of a shared-buffer handle and an
//! allocation of its own.

use bytes::Bytes;
use std::collections::VecDeque;

/// Most bytes a node holds (a single longer element is a node alone).
pub(crate) const NODE_BYTES: usize = 4096;

fn varint_len(mut v: usize) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Bytes an entry of `len` bytes takes.
fn entry_size(len: usize) -> usize {
    len + 2 * varint_len(len)
}

fn put_entry(out: &mut Vec<u8>, item: &[u8]) {
    let mut v = item.len();
    let mut head = [0u8; 10];
    let mut n = 0;
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            head[n] = b;
            n += 1;
            break;
        }
        head[n] = b | 0x80;
        n += 1;
    }
    out.extend_from_slice(&head[..n]);
    out.extend_from_slice(item);
    out.extend(head[..n].iter().rev());
}

/// The entry starting at `at`: (start of the bytes, length, next entry).
fn entry_at(buf: &[u8], at: usize) -> (usize, usize, usize) {
    let (mut len, mut shift, mut o) = (0usize, 0, at);
    loop {
        let b = buf[o];
        o += 1;
        len |= usize::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    let width = o - at;
    (o, len, o + len + width)
}

/// The entry ending at `end`: (start of the entry, start of the bytes,
/// length).
fn entry_before(buf: &[u8], end: usize) -> (usize, usize, usize) {
    let (mut len, mut shift, mut o) = (0usize, 0, end);
    loop {
        o -= 1;
        let b = buf[o];
        len |= usize::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    let width = end - o;
    let data = o - len;
    (data - width, data, len)
}

/// One node: its entries and how many.
#[derive(Debug, Clone, Default)]
struct Node {
    buf: Vec<u8>,
    count: u32,
}

impl Node {
    /// A node of one element, with room for `room` bytes in all.
    fn of(item: &[u8], room: usize) -> Node {
        let mut buf = Vec::with_capacity(entry_size(item.len()).max(room));
        put_entry(&mut buf, item);
        Node { buf, count: 1 }
    }

    /// Whether an entry of `len` bytes joins this node.
    fn has_room(&self, len: usize) -> bool {
        self.buf.len() + entry_size(len) <= NODE_BYTES
    }

    /// Room for `extra` more bytes, growing by doubling but never past a
    /// full node's size (nodes are many; their slack would add up).
    fn reserve(&mut self, extra: usize) {
        let need = self.buf.len() + extra;
        if need > self.buf.capacity() {
            let want = (self.buf.capacity() * 2).clamp(need, NODE_BYTES.max(need));
            self.buf.reserve_exact(want - self.buf.len());
        }
    }

    fn push_back(&mut self, item: &[u8]) {
        self.reserve(entry_size(item.len()));
        put_entry(&mut self.buf, item);
        self.count += 1;
    }

    fn push_front(&mut self, item: &[u8]) {
        self.insert_at(0, item);
    }

    /// Inserts an entry at byte offset `at`.
    fn insert_at(&mut self, at: usize, item: &[u8]) {
        let size = entry_size(item.len());
        self.reserve(size);
        let mut e = Vec::with_capacity(size);
        put_entry(&mut e, item);
        super::exact::replace(&mut self.buf, at..at, &e);
        self.count += 1;
    }

    fn pop_front(&mut self) -> Bytes {
        let (data, len, next) = entry_at(&self.buf, 0);
        let v = Bytes::copy_from_slice(&self.buf[data..data + len]);
        self.buf.drain(..next);
        self.count -= 1;
        v
    }

    fn pop_back(&mut self) -> Bytes {
        let (start, data, len) = entry_before(&self.buf, self.buf.len());
        let v = Bytes::copy_from_slice(&self.buf[data..data + len]);
        self.buf.truncate(start);
        self.count -= 1;
        v
    }

    /// Byte offset of entry `i` (`i == count` gives the end), walking from
    /// the nearer end.
    fn offset(&self, i: usize) -> usize {
        let count = self.count as usize;
        if i <= count / 2 {
            let mut at = 0;
            for _ in 0..i {
                at = entry_at(&self.buf, at).2;
            }
            at
        } else {
            let mut at = self.buf.len();
            for _ in i..count {
                at = entry_before(&self.buf, at).0;
            }
            at
        }
    }

    fn get(&self, i: usize) -> &[u8] {
        let (data, len, _) = entry_at(&self.buf, self.offset(i));
        &self.buf[data..data + len]
    }

    /// Removes entries `from..to` (indexes).
    fn remove_range(&mut self, from: usize, to: usize) {
        let a = self.offset(from);
        let mut b = a;
        for _ in from..to {
            b = entry_at(&self.buf, b).2;
        }
        self.buf.drain(a..b);
        self.count -= (to - from) as u32;
    }

    /// Splits off the entries from `i` on into a new node.
    fn split_off(&mut self, i: usize) -> Node {
        let at = self.offset(i);
        let tail = Node {
            buf: self.buf[at..].to_vec(),
            count: self.count - i as u32,
        };
        self.buf.truncate(at);
        self.buf.shrink_to_fit();
        self.count = i as u32;
        tail
    }
}

/// A large list (see the module documentation). No node is ever empty.
#[derive(Debug, Clone, Default)]
pub(crate) struct Quick {
    nodes: VecDeque<Node>,
    len: usize,
}

impl Quick {
    /// A list of `items`, in order.
    pub(crate) fn from_items<'a>(items: impl Iterator<Item = &'a [u8]>) -> Quick {
        let mut q = Quick::default();
        for item in items {
            q.push_back(item);
        }
        q
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn push_back(&mut self, item: &[u8]) {
        self.len += 1;
        if let Some(n) = self.nodes.back_mut() {
            if n.has_room(item.len()) {
                n.push_back(item);
                return;
            }
        }
        // A node started because the one at this end is full will most
        // likely fill too: it gets a full node's room at once (no growing
        // by steps, whose freed steps the allocator may keep).
        let room = if self.nodes.is_empty() { 0 } else { NODE_BYTES };
        self.nodes.push_back(Node::of(item, room));
    }

    pub(crate) fn push_front(&mut self, item: &[u8]) {
        self.len += 1;
        if let Some(n) = self.nodes.front_mut() {
            if n.has_room(item.len()) {
                n.push_front(item);
                return;
            }
        }
        // A node started because the one at this end is full will most
        // likely fill too: it gets a full node's room at once (no growing
        // by steps, whose freed steps the allocator may keep).
        let room = if self.nodes.is_empty() { 0 } else { NODE_BYTES };
        self.nodes.push_front(Node::of(item, room));
    }

    pub(crate) fn pop_front(&mut self) -> Option<Bytes> {
        let n = self.nodes.front_mut()?;
        let v = n.pop_front();
        if n.count == 0 {
            self.nodes.pop_front();
        }
        self.len -= 1;
        Some(v)
    }

    pub(crate) fn pop_back(&mut self) -> Option<Bytes> {
        let n = self.nodes.back_mut()?;
        let v = n.pop_back();
        if n.count == 0 {
            self.nodes.pop_back();
        }
        self.len -= 1;
        Some(v)
    }

    /// The node holding element `i < len` and the index inside it, walking
    /// from the nearer end.
    fn locate(&self, i: usize) -> (usize, usize) {
        if i < self.len / 2 {
            let mut rest = i;
            for (ni, n) in self.nodes.iter().enumerate() {
                let c = n.count as usize;
                if rest < c {
                    return (ni, rest);
                }
                rest -= c;
            }
        } else {
            let mut after = self.len - i;
            for (ni, n) in self.nodes.iter().enumerate().rev() {
                let c = n.count as usize;
                if after <= c {
                    return (ni, c - after);
                }
                after -= c;
            }
        }
        unreachable!("index {i} within a list of {}", self.len)
    }

    pub(crate) fn get(&self, i: usize) -> Option<&[u8]> {
        if i >= self.len {
            return None;
        }
        let (ni, k) = self.locate(i);
        Some(self.nodes[ni].get(k))
    }

    /// Inserts `item` so that it becomes element `i` (`i <= len`).
    pub(crate) fn insert(&mut self, i: usize, item: &[u8]) {
        if i == 0 {
            return self.push_front(item);
        }
        if i == self.len {
            return self.push_back(item);
        }
        let (ni, k) = self.locate(i);
        let node = &mut self.nodes[ni];
        let at = node.offset(k);
        node.insert_at(at, item);
        self.len += 1;
        if node.buf.len() > 2 * NODE_BYTES && node.count > 1 {
            let half = node.count as usize / 2;
            let tail = node.split_off(half);
            self.nodes.insert(ni + 1, tail);
        }
    }

    /// Replaces element `i` (which exists).
    pub(crate) fn set(&mut self, i: usize, item: &[u8]) {
        let (ni, k) = self.locate(i);
        let node = &mut self.nodes[ni];
        let at = node.offset(k);
        let end = entry_at(&node.buf, at).2;
        let mut e = Vec::with_capacity(entry_size(item.len()));
        put_entry(&mut e, item);
        super::exact::replace(&mut node.buf, at..end, &e);
        if node.buf.len() > 2 * NODE_BYTES && node.count > 1 {
            let tail = node.split_off(k.max(1));
            self.nodes.insert(ni + 1, tail);
        }
    }

    /// Removes the first `n` elements (whole nodes at once).
    pub(crate) fn drop_front(&mut self, mut n: usize) {
        n = n.min(self.len);
        self.len -= n;
        while n > 0 {
            let Some(node) = self.nodes.front_mut() else {
                break;
            };
            let c = node.count as usize;
            if c <= n {
                self.nodes.pop_front();
                n -= c;
            } else {
                node.remove_range(0, n);
                n = 0;
            }
        }
    }

    /// Removes the last `n` elements (whole nodes at once).
    pub(crate) fn drop_back(&mut self, mut n: usize) {
        n = n.min(self.len);
        self.len -= n;
        while n > 0 {
            let Some(node) = self.nodes.back_mut() else {
                break;
            };
            let c = node.count as usize;
            if c <= n {
                self.nodes.pop_back();
                n -= c;
            } else {
                node.remove_range(c - n, c);
                n = 0;
            }
        }
    }

    /// The elements from the head.
    pub(crate) fn iter(&self) -> QuickIter<'_> {
        let back = match self.nodes.back() {
            Some(n) => (self.nodes.len() - 1, n.buf.len()),
            None => (0, 0),
        };
        QuickIter {
            nodes: &self.nodes,
            front: (0, 0),
            back,
            left: self.len,
        }
    }

    /// The elements from element `i` on.
    pub(crate) fn iter_from(&self, i: usize) -> QuickIter<'_> {
        let mut it = self.iter();
        if i >= self.len {
            it.left = 0;
            return it;
        }
        let (ni, k) = self.locate(i);
        it.front = (ni, self.nodes[ni].offset(k));
        it.left = self.len - i;
        it
    }

    /// Bytes allocated: the node vector and every node's buffer.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.nodes.iter().map(|n| n.buf.capacity()).sum::<usize>()
    }

    /// Number of nodes (for tests and MEMORY USAGE).
    pub(crate) fn node_count(&self) -> usize {
        self.nodes.len()
    }
}

/// The elements of a [`Quick`] list, from either end.
pub struct QuickIter<'a> {
    nodes: &'a VecDeque<Node>,
    /// (node, byte offset) of the next element from the front.
    front: (usize, usize),
    /// (node, byte offset where it ends) of the next element from the back.
    back: (usize, usize),
    left: usize,
}

impl<'a> Iterator for QuickIter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let (mut ni, mut at) = self.front;
        while at >= self.nodes[ni].buf.len() {
            ni += 1;
            at = 0;
        }
        let buf = &self.nodes[ni].buf;
        let (data, len, next) = entry_at(buf, at);
        self.front = (ni, next);
        Some(&buf[data..data + len])
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl DoubleEndedIterator for QuickIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let (mut ni, mut end) = self.back;
        while end == 0 {
            ni -= 1;
            end = self.nodes[ni].buf.len();
        }
        let buf = &self.nodes[ni].buf;
        let (start, data, len) = entry_before(buf, end);
        self.back = (ni, start);
        Some(&buf[data..data + len])
    }
}

impl ExactSizeIterator for QuickIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        PushBack(usize, u8),
        PushFront(usize, u8),
        PopBack,
        PopFront,
        Insert(usize, usize, u8),
        Set(usize, usize, u8),
        DropFront(usize),
        DropBack(usize),
    }

    /// Element sizes around the one-byte/two-byte length boundary, and now
    /// and then one longer than a node.
    fn size() -> impl Strategy<Value = usize> {
        prop_oneof![8 => 0usize..200, 1 => 120usize..140, 1 => 4000usize..9000]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (size(), any::<u8>()).prop_map(|(n, b)| Op::PushBack(n, b)),
            6 => (size(), any::<u8>()).prop_map(|(n, b)| Op::PushFront(n, b)),
            2 => Just(Op::PopBack),
            2 => Just(Op::PopFront),
            2 => (any::<usize>(), size(), any::<u8>()).prop_map(|(i, n, b)| Op::Insert(i, n, b)),
            2 => (any::<usize>(), size(), any::<u8>()).prop_map(|(i, n, b)| Op::Set(i, n, b)),
            1 => (0usize..40).prop_map(Op::DropFront),
            1 => (0usize..40).prop_map(Op::DropBack),
        ]
    }

    fn item(n: usize, b: u8) -> Vec<u8> {
        (0..n).map(|i| b.wrapping_add(i as u8)).collect()
    }

    fn check(q: &Quick, m: &[Vec<u8>]) {
        assert_eq!(q.len(), m.len());
        assert!(q.nodes.iter().all(|n| n.count > 0));
        assert_eq!(
            q.nodes.iter().map(|n| n.count as usize).sum::<usize>(),
            m.len()
        );
        let fwd: Vec<&[u8]> = q.iter().collect();
        assert!(fwd.iter().zip(m).all(|(a, b)| *a == &b[..]) && fwd.len() == m.len());
        let back: Vec<&[u8]> = q.iter().rev().collect();
        assert!(back.iter().zip(m.iter().rev()).all(|(a, b)| *a == &b[..]));
        for i in [0, m.len() / 3, m.len() / 2, m.len().saturating_sub(1)] {
            assert_eq!(q.get(i), m.get(i).map(|v| &v[..]));
            let from: Vec<&[u8]> = q.iter_from(i).collect();
            assert_eq!(from.len(), m.len().saturating_sub(i));
            assert!(from
                .iter()
                .zip(&m[i.min(m.len())..])
                .all(|(a, b)| *a == &b[..]));
        }
        // Mixed ends meet in the middle.
        let mut it = q.iter();
        let (mut a, mut b) = (0, m.len());
        while a < b {
            if (a + b) % 2 == 0 {
                assert_eq!(it.next(), Some(&m[a][..]));
                a += 1;
            } else {
                b -= 1;
                assert_eq!(it.next_back(), Some(&m[b][..]));
            }
        }
        assert_eq!(it.next(), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn matches_a_vector(ops in proptest::collection::vec(op(), 0..400)) {
            let mut q = Quick::default();
            let mut m: Vec<Vec<u8>> = Vec::new();
            for o in ops {
                match o {
                    Op::PushBack(n, b) => { q.push_back(&item(n, b)); m.push(item(n, b)); }
                    Op::PushFront(n, b) => { q.push_front(&item(n, b)); m.insert(0, item(n, b)); }
                    Op::PopBack => prop_assert_eq!(q.pop_back().map(|v| v.to_vec()), m.pop()),
                    Op::PopFront => {
                        let want = if m.is_empty() { None } else { Some(m.remove(0)) };
                        prop_assert_eq!(q.pop_front().map(|v| v.to_vec()), want);
                    }
                    Op::Insert(i, n, b) => {
                        let i = i % (m.len() + 1);
                        q.insert(i, &item(n, b));
                        m.insert(i, item(n, b));
                    }
                    Op::Set(i, n, b) => if !m.is_empty() {
                        let i = i % m.len();
                        q.set(i, &item(n, b));
                        m[i] = item(n, b);
                    },
                    Op::DropFront(k) => { q.drop_front(k); m.drain(..k.min(m.len())); }
                    Op::DropBack(k) => { q.drop_back(k); let keep = m.len().saturating_sub(k); m.truncate(keep); }
                }
                check(&q, &m);
            }
        }
    }

    #[test]
    fn small_elements_fill_nodes() {
        let mut q = Quick::default();
        for i in 0..100_000u32 {
            q.push_back(format!("job:{i:08}").as_bytes());
        }
        // 12-byte elements take 14 bytes each; nodes are nearly full.
        let per = q.heap_bytes() as f64 / 100_000.0;
        assert!(per < 15.5, "{per} bytes per element");
        assert_eq!(q.get(99_999), Some(&b"job:00099999"[..]));
        q.drop_front(50_000);
        assert_eq!(q.iter().next(), Some(&b"job:00050000"[..]));
    }
}
