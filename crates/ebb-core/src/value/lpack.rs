//! Small lists packed into one byte buffer, as Redis keeps a listpack.
//!
//! While a list has at most [`MAX_LEN`] elements and none longer than
//! [`MAX_ITEM`] bytes, it is one exactly sized buffer: a one-byte element
//! count, then each element as `[length byte] [bytes]`. An empty list is an
//! empty buffer (no allocation).
//!
//! Every change rewrites the buffer at its new exact size, and reaching an
//! element walks the lengths from the head: O(n) over at most 128 short
//! entries, the price of one allocation per list instead of one per
//! element.

use bytes::Bytes;

/// Most elements a packed list holds.
pub(crate) const MAX_LEN: usize = 128;
/// Longest element a packed list holds.
pub(crate) const MAX_ITEM: usize = 64;

/// Bytes before the first entry.
const HEADER: usize = 1;

/// A small list as one buffer (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(crate) struct LPack {
    buf: Box<[u8]>,
}

/// The elements of a packed list from the head.
pub(crate) struct LPackIter<'a> {
    buf: &'a [u8],
    at: usize,
    left: usize,
}

impl<'a> Iterator for LPackIter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let n = usize::from(self.buf[self.at]);
        let item = &self.buf[self.at + 1..self.at + 1 + n];
        self.at += 1 + n;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for LPackIter<'_> {}

impl LPack {
    /// Whether `len` elements including one of `item` bytes still fit.
    pub(crate) fn fits(len: usize, item: usize) -> bool {
        len <= MAX_LEN && item <= MAX_ITEM
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.buf.first().map_or(0, |&n| usize::from(n))
    }

    /// The elements from the head.
    pub(crate) fn iter(&self) -> LPackIter<'_> {
        LPackIter {
            buf: &self.buf,
            at: HEADER,
            left: self.len(),
        }
    }

    /// Byte offset of element `i` (`i == len` gives the end of the
    /// entries).
    fn offset(&self, i: usize) -> usize {
        let mut at = HEADER;
        for _ in 0..i {
            at += 1 + usize::from(self.buf[at]);
        }
        at
    }

    /// Element `i`, if there is one.
    pub(crate) fn get(&self, i: usize) -> Option<&[u8]> {
        if i >= self.len() {
            return None;
        }
        let at = self.offset(i);
        let n = usize::from(self.buf[at]);
        Some(&self.buf[at + 1..at + 1 + n])
    }

    /// Rebuilds the buffer with `len` elements: the bytes before `from`,
    /// `entries` (already encoded), and the bytes from `to` on.
    fn splice(&mut self, from: usize, to: usize, entries: &[u8], len: usize) {
        debug_assert!(len <= MAX_LEN);
        if len == 0 {
            self.buf = Box::default();
            return;
        }
        let old = std::mem::take(&mut self.buf);
        let mut v = Vec::with_capacity(old.len().max(HEADER) - (to - from) + entries.len());
        v.push(len as u8);
        if !old.is_empty() {
            v.extend_from_slice(&old[HEADER..from]);
        }
        v.extend_from_slice(entries);
        if !old.is_empty() {
            v.extend_from_slice(&old[to..]);
        }
        debug_assert_eq!(v.len(), v.capacity());
        self.buf = v.into_boxed_slice();
    }

    /// Inserts `item` (at most [`MAX_ITEM`] bytes, room for one more) so
    /// that it becomes element `i`.
    pub(crate) fn insert(&mut self, i: usize, item: &[u8]) {
        debug_assert!(item.len() <= MAX_ITEM && self.len() < MAX_LEN);
        let at = self.offset(i);
        let mut e = Vec::with_capacity(1 + item.len());
        e.push(item.len() as u8);
        e.extend_from_slice(item);
        let len = self.len() + 1;
        self.splice(at, at, &e, len);
    }

    /// Appends `item` at the tail.
    pub(crate) fn push_back(&mut self, item: &[u8]) {
        self.insert(self.len(), item);
    }

    /// Replaces element `i` (which exists) with `item` (at most
    /// [`MAX_ITEM`] bytes).
    pub(crate) fn set(&mut self, i: usize, item: &[u8]) {
        let at = self.offset(i);
        let end = at + 1 + usize::from(self.buf[at]);
        let mut e = Vec::with_capacity(1 + item.len());
        e.push(item.len() as u8);
        e.extend_from_slice(item);
        let len = self.len();
        self.splice(at, end, &e, len);
    }

    /// Removes elements `start..end` (indexes).
    pub(crate) fn remove_range(&mut self, start: usize, end: usize) {
        let len = self.len();
        debug_assert!(start <= end && end <= len);
        if start == end {
            return;
        }
        let from = self.offset(start);
        let mut to = from;
        for _ in start..end {
            to += 1 + usize::from(self.buf[to]);
        }
        self.splice(from, to, &[], len - (end - start));
    }

    /// Keeps only the elements whose flag in `keep` is set.
    pub(crate) fn retain_flags(&mut self, keep: &[bool]) {
        let items: Vec<&[u8]> = self
            .iter()
            .zip(keep)
            .filter(|(_, &k)| k)
            .map(|(e, _)| e)
            .collect();
        let packed = LPack::from_items(items.iter().copied());
        *self = packed;
    }

    /// Removes and returns up to `n` elements from the head (`front`) or
    /// the tail, in pop order.
    pub(crate) fn pop_many(&mut self, front: bool, n: usize) -> Vec<Bytes> {
        let len = self.len();
        let n = n.min(len);
        let (start, end) = if front { (0, n) } else { (len - n, len) };
        let mut out: Vec<Bytes> = self
            .iter()
            .skip(start)
            .take(n)
            .map(Bytes::copy_from_slice)
            .collect();
        if !front {
            out.reverse();
        }
        self.remove_range(start, end);
        out
    }

    /// A packed list of `items` (which must fit).
    pub(crate) fn from_items<'a>(items: impl Iterator<Item = &'a [u8]>) -> LPack {
        let mut v = vec![0u8];
        let mut n = 0usize;
        for item in items {
            debug_assert!(item.len() <= MAX_ITEM);
            v.push(item.len() as u8);
            v.extend_from_slice(item);
            n += 1;
        }
        debug_assert!(n <= MAX_LEN);
        if n == 0 {
            return LPack::default();
        }
        v[0] = n as u8;
        LPack {
            buf: v.into_boxed_slice(),
        }
    }

    /// Bytes allocated for the buffer.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(p: &LPack) -> Vec<Vec<u8>> {
        p.iter().map(<[u8]>::to_vec).collect()
    }

    #[test]
    fn edits_keep_the_buffer_exact() {
        let mut p = LPack::default();
        assert_eq!(p.heap_bytes(), 0);
        p.push_back(b"bb");
        p.insert(0, b"a");
        p.push_back(b"");
        assert_eq!(items(&p), [b"a".to_vec(), b"bb".to_vec(), vec![]]);
        assert_eq!(p.heap_bytes(), 1 + 2 + 3 + 1);
        assert_eq!(p.get(1), Some(&b"bb"[..]));
        assert_eq!(p.get(3), None);
        p.set(1, b"cccc");
        assert_eq!(p.get(1), Some(&b"cccc"[..]));
        assert_eq!(p.heap_bytes(), 1 + 2 + 5 + 1);
        assert_eq!(p.pop_many(false, 2), [Bytes::new(), Bytes::from("cccc")]);
        assert_eq!(items(&p), [b"a".to_vec()]);
        assert_eq!(p.pop_many(true, 5), [Bytes::from("a")]);
        assert_eq!(p.len(), 0);
        assert_eq!(p.heap_bytes(), 0);
    }

    #[test]
    fn holds_its_limits() {
        let long = [b'x'; MAX_ITEM];
        let p = LPack::from_items(std::iter::repeat_n(&long[..], MAX_LEN));
        assert_eq!(p.len(), MAX_LEN);
        assert_eq!(p.get(MAX_LEN - 1), Some(&long[..]));
        assert_eq!(p.heap_bytes(), 1 + MAX_LEN * (1 + MAX_ITEM));
        let mut p = p;
        p.remove_range(1, MAX_LEN - 1);
        assert_eq!(p.len(), 2);
        p.retain_flags(&[false, true]);
        assert_eq!(p.len(), 1);
        p.retain_flags(&[false]);
        assert_eq!(p.heap_bytes(), 0);
    }
}
