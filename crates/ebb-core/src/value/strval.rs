//! A string value (strings, counters, bitmaps) in 24 bytes.
//!
//! Up to [`INLINE`] bytes live inside the value itself, so a short string
//! key costs no allocation besides its slot in the key table. Longer
//! values take one exactly sized allocation; from [`LARGE`] bytes on (or
//! once an edit such as APPEND grew one past it) the value is a shared
//! buffer that keeps growth room, so repeated appends stay amortised O(1)
//! and a reply shares the bytes instead of copying them.
//!
//! A value also remembers how it was last written, for OBJECT ENCODING:
//! Redis keeps a string changed in place (APPEND, SETRANGE, SETBIT,
//! BITFIELD) `raw` and an INCRBYFLOAT result `embstr` whatever they read
//! as, where a value written whole is `int`, `embstr` or `raw` by its
//! contents ([`Written`]).

use bytes::{Bytes, BytesMut};
use std::ops::Deref;

use super::member::INLINE;

/// From this many bytes on a value lives in a shared, growable buffer.
pub const LARGE: usize = 512;

/// A string value: inline, exactly sized on the heap, or a shared buffer.
#[derive(Clone)]
pub struct StrValue(Repr);

/// How a value was last written, as far as its encoding goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// Whole (SET and the like): the encoding follows the contents.
    Whole,
    /// Changed in place: `raw`.
    InPlace,
    /// Stored as formatted text (INCRBYFLOAT): `embstr` when short.
    Text,
}

impl Written {
    fn bits(self) -> u8 {
        match self {
            Written::Whole => 0,
            Written::InPlace => IN_PLACE,
            Written::Text => TEXT,
        }
    }

    fn of(bits: u8) -> Written {
        if bits & IN_PLACE != 0 {
            Written::InPlace
        } else if bits & TEXT != 0 {
            Written::Text
        } else {
            Written::Whole
        }
    }
}

/// Bits of an inline value's length byte (and of a heap value's flag)
/// that say how it was written; the length takes the low six.
const IN_PLACE: u8 = 0x80;
const TEXT: u8 = 0x40;
const LEN_BITS: u8 = 0x3f;

#[derive(Clone)]
enum Repr {
    Inline {
        len: u8,
        buf: [u8; INLINE],
    },
    Heap(Box<[u8]>, u8),
    /// Always `raw` (longer than any `embstr`).
    Large(Box<Bytes>),
}

impl Default for StrValue {
    fn default() -> Self {
        StrValue(Repr::Inline {
            len: 0,
            buf: [0; INLINE],
        })
    }
}

impl StrValue {
    /// A copy of `b`.
    pub fn new(b: &[u8]) -> StrValue {
        if b.len() <= INLINE {
            let mut buf = [0u8; INLINE];
            buf[..b.len()].copy_from_slice(b);
            StrValue(Repr::Inline {
                len: b.len() as u8,
                buf,
            })
        } else if b.len() < LARGE {
            StrValue(Repr::Heap(b.into(), 0))
        } else {
            StrValue(Repr::Large(Box::new(Bytes::copy_from_slice(b))))
        }
    }

    /// Takes `b` over: a large buffer is kept as it is (with any room it
    /// has to grow), a smaller one is copied into the compact forms.
    pub fn from_buf(b: BytesMut) -> StrValue {
        if b.len() < LARGE {
            StrValue::new(&b)
        } else {
            StrValue(Repr::Large(Box::new(b.freeze())))
        }
    }

    /// Takes `v` over, as [`StrValue::from_buf`] does.
    pub fn from_vec(v: Vec<u8>) -> StrValue {
        if v.len() < LARGE {
            StrValue::new(&v)
        } else {
            StrValue(Repr::Large(Box::new(Bytes::from(v))))
        }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, buf } => &buf[..(*len & LEN_BITS) as usize],
            Repr::Heap(b, _) => b,
            Repr::Large(b) => b,
        }
    }

    /// How the value was last written.
    pub fn written(&self) -> Written {
        match &self.0 {
            Repr::Inline { len, .. } => Written::of(*len),
            Repr::Heap(_, w) => Written::of(*w),
            Repr::Large(_) => Written::InPlace,
        }
    }

    /// Records how the value was written (see [`Written`]).
    pub fn set_written(&mut self, w: Written) {
        match &mut self.0 {
            Repr::Inline { len, .. } => *len = (*len & LEN_BITS) | w.bits(),
            Repr::Heap(_, b) => *b = w.bits(),
            Repr::Large(_) => {}
        }
    }

    /// The bytes as a reply carries them: a copy of a short value, a
    /// shared handle to a large one.
    pub fn to_bytes(&self) -> Bytes {
        match &self.0 {
            Repr::Large(b) => Bytes::clone(b),
            _ => Bytes::copy_from_slice(self.as_slice()),
        }
    }

    /// The bytes in `r`, for a reply: copied from a short value, shared
    /// with a large one.
    pub fn slice(&self, r: std::ops::RangeInclusive<usize>) -> Bytes {
        match &self.0 {
            Repr::Large(b) => b.slice(r),
            _ => Bytes::copy_from_slice(&self.as_slice()[r]),
        }
    }

    /// Changes the bytes in place through a growable buffer (APPEND,
    /// SETRANGE, SETBIT, BITFIELD): a large value's own buffer when no
    /// reply still shares it, otherwise a copy. The value counts as
    /// written in place.
    pub fn edit<R>(&mut self, f: impl FnOnce(&mut BytesMut) -> R) -> R {
        let mut buf = match std::mem::take(self).0 {
            Repr::Large(b) => (*b)
                .try_into_mut()
                .unwrap_or_else(|shared| BytesMut::from(&shared[..])),
            other => BytesMut::from(StrValue(other).as_slice()),
        };
        let r = f(&mut buf);
        *self = StrValue::from_buf(buf);
        self.set_written(Written::InPlace);
        r
    }

    /// Bytes allocated for the value besides its 24 bytes in the entry.
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Inline { .. } => 0,
            Repr::Heap(b, _) => b.len(),
            Repr::Large(b) => std::mem::size_of::<Bytes>() + b.len(),
        }
    }
}

impl Deref for StrValue {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for StrValue {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl PartialEq for StrValue {
    fn eq(&self, o: &Self) -> bool {
        self.as_slice() == o.as_slice()
    }
}

impl Eq for StrValue {}

impl std::fmt::Debug for StrValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Bytes::copy_from_slice(self.as_slice()).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_24_bytes() {
        assert_eq!(std::mem::size_of::<StrValue>(), 24);
    }

    /// How a value was written survives in every form, leaves its bytes
    /// alone, and an edit makes it in place.
    #[test]
    fn remembers_how_it_was_written() {
        for n in [0, 5, INLINE, INLINE + 1, 44, LARGE - 1] {
            let data = vec![b'7'; n];
            let mut v = StrValue::new(&data);
            assert_eq!(v.written(), Written::Whole);
            for w in [Written::Text, Written::InPlace, Written::Whole] {
                v.set_written(w);
                assert_eq!(v.written(), w, "{n} bytes");
                assert_eq!(&v[..], &data[..]);
                assert_eq!(v.clone().written(), w);
            }
            v.edit(|_| ());
            assert_eq!(v.written(), Written::InPlace);
            assert_eq!(&v[..], &data[..]);
        }
        let mut big = StrValue::new(&[1u8; LARGE]);
        big.set_written(Written::Whole);
        assert_eq!(
            big.written(),
            Written::InPlace,
            "large values are always raw"
        );
    }

    /// Every length keeps its bytes through each form and through edits
    /// that cross the form boundaries both ways.
    #[test]
    fn round_trips_and_edits() {
        for n in [0, 1, INLINE, INLINE + 1, LARGE - 1, LARGE, 3 * LARGE] {
            let data: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
            let mut v = StrValue::new(&data);
            assert_eq!(&v[..], &data[..]);
            assert_eq!(&v.to_bytes()[..], &data[..]);
            // Grow past the next form, then shrink back.
            v.edit(|b| b.extend_from_slice(&[9u8; LARGE]));
            assert_eq!(v.len(), n + LARGE);
            assert_eq!(&v[..n], &data[..]);
            v.edit(|b| b.truncate(n));
            assert_eq!(&v[..], &data[..]);
        }
    }

    /// A reply holding a large value's bytes keeps them as they were when
    /// the value is edited afterwards.
    #[test]
    fn a_shared_large_value_is_copied_on_edit() {
        let mut v = StrValue::new(&[1u8; LARGE]);
        let reply = v.to_bytes();
        v.edit(|b| b[0] = 2);
        assert_eq!(reply[0], 1);
        assert_eq!(v[0], 2);
        assert_eq!(v.len(), LARGE);
    }

    /// Appending to a large value reuses its buffer's room: the bytes move
    /// only when the room runs out (a few times in a thousand appends).
    #[test]
    fn appends_to_a_large_value_keep_their_room() {
        let mut v = StrValue::new(&[0u8; LARGE]);
        let mut moves = 0;
        for _ in 0..1000 {
            let at = v.as_ptr();
            v.edit(|b| b.extend_from_slice(b"abc"));
            moves += usize::from(v.as_ptr() != at);
        }
        assert!(moves <= 20, "{moves} moves");
        assert_eq!(v.len(), LARGE + 3000);
        assert_eq!(&v[LARGE..LARGE + 3], b"abc");
    }
}
