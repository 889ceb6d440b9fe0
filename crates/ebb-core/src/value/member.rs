//! A compact byte string for stored members, fields and hash values.
//!
//! Up to [`INLINE`] bytes live inside the 24-byte value itself (no heap
//! allocation); longer ones in an exactly sized boxed slice. Unlike a
//! `Bytes` handle, a stored member is never shared, so reading it (a reply
//! copies it) never adds a reference-count allocation that would then live
//! as long as the member.

use bytes::Bytes;
use std::borrow::Borrow;
use std::ops::Deref;

/// Longest byte string stored inline.
pub const INLINE: usize = 22;

/// An owned byte string: inline up to [`INLINE`] bytes, boxed beyond.
#[derive(Clone)]
pub enum Member {
    /// Short: the bytes in place.
    Inline {
        /// How many of `buf`'s bytes are used.
        len: u8,
        /// The bytes, zero-padded.
        buf: [u8; INLINE],
    },
    /// Long: the bytes on the heap.
    Heap(Box<[u8]>),
}

impl Member {
    /// A copy of `b`.
    pub fn new(b: &[u8]) -> Member {
        if b.len() <= INLINE {
            let mut buf = [0u8; INLINE];
            buf[..b.len()].copy_from_slice(b);
            Member::Inline {
                len: b.len() as u8,
                buf,
            }
        } else {
            Member::Heap(b.into())
        }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Member::Inline { len, buf } => &buf[..*len as usize],
            Member::Heap(b) => b,
        }
    }

    /// Whether this equals `other` when both are inline: compares the
    /// fixed-size buffers (zero-padded), which needs no call to memcmp.
    pub fn same_inline(&self, other: &Member) -> bool {
        match (self, other) {
            (Member::Inline { len: a, buf: x }, Member::Inline { len: b, buf: y }) => {
                a == b && x == y
            }
            _ => false,
        }
    }

    /// Converts into a `Bytes` (without copying a heap member).
    pub fn into_bytes(self) -> Bytes {
        match self {
            Member::Inline { .. } => Bytes::copy_from_slice(self.as_slice()),
            Member::Heap(b) => Bytes::from(b),
        }
    }

    /// Heap bytes held beyond the value itself.
    #[cfg(test)]
    pub fn heap_len(&self) -> usize {
        match self {
            Member::Inline { .. } => 0,
            Member::Heap(b) => b.len(),
        }
    }
}

impl Deref for Member {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for Member {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Borrow<[u8]> for Member {
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

/// Hashes as the byte slice does, so a map keyed by members is searched
/// with a `&[u8]`.
impl std::hash::Hash for Member {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_slice().hash(h)
    }
}

impl PartialEq for Member {
    fn eq(&self, o: &Self) -> bool {
        self.as_slice() == o.as_slice()
    }
}

impl Eq for Member {}

impl PartialOrd for Member {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Member {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.as_slice().cmp(o.as_slice())
    }
}

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", Bytes::copy_from_slice(self.as_slice()))
    }
}

/// Copies of many byte strings (for one reply), all in one shared buffer:
/// one allocation instead of one per string. Yields them in order.
pub fn shared_copies<'a, T>(
    items: &'a [T],
    bytes: impl Fn(&T) -> &[u8] + 'a,
) -> impl Iterator<Item = Bytes> + 'a {
    let mut buf = bytes::BytesMut::with_capacity(items.iter().map(|t| bytes(t).len()).sum());
    for t in items {
        buf.extend_from_slice(bytes(t));
    }
    let buf = buf.freeze();
    let mut at = 0;
    items.iter().map(move |t| {
        let n = bytes(t).len();
        at += n;
        buf.slice(at - n..at)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_inline_long_boxed() {
        assert_eq!(std::mem::size_of::<Member>(), 24);
        for n in [0usize, 1, 21, 22, 23, 100] {
            let v: Vec<u8> = (0..n as u8).collect();
            let m = Member::new(&v);
            assert_eq!(&m[..], &v[..]);
            assert_eq!(m.heap_len() == 0, n <= INLINE);
            assert_eq!(m.clone().into_bytes(), Bytes::from(v));
        }
        assert!(Member::new(b"ab") < Member::new(b"abc"));
        assert!(Member::new(b"b") > Member::new(&[b'a'; 30]));
        let parts: [&[u8]; 3] = [b"ab", b"", b"cde"];
        let copies: Vec<Bytes> = shared_copies(&parts, |p| p).collect();
        assert_eq!(copies, vec![&b"ab"[..], b"", b"cde"]);
    }
}
