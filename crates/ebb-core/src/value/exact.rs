//! The byte buffer a packed hash, set or sorted set lives in: one exactly
//! sized allocation holding a header, the entries and, while there are
//! deadlines to keep, a trailer of 8-byte words after the entries.

/// The buffer as a vector for editing (a missing header made, `header`
/// zero bytes), then back at its exact size: small collections are many,
/// and spare room in each would add up (a listpack is sized exactly too).
pub(crate) fn edit<R>(buf: &mut Box<[u8]>, header: usize, f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    let mut v = std::mem::take(buf).into_vec();
    if v.is_empty() {
        v.resize(header, 0);
    }
    let r = f(&mut v);
    *buf = if chunk(v.capacity()) == chunk(v.len()) + 16 {
        // A new buffer: glibc shrinks a chunk in place only when at least
        // 32 bytes can be split off, so a buffer one size class smaller
        // would keep costing what it used to.
        Box::from(&v[..])
    } else {
        v.into_boxed_slice()
    };
    r
}

/// The size of the glibc chunk that holds an allocation of `n` bytes.
fn chunk(n: usize) -> usize {
    ((n + 8 + 15) & !15).max(32)
}

/// The little-endian word at `at`.
pub(crate) fn word(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Replaces the trailer (present when `flags & flag` is set in the byte at
/// `flags_at`, then `old_words` long) with `words`, or drops it when
/// `words` is `None`.
pub(crate) fn set_trailer(
    v: &mut Vec<u8>,
    flags_at: usize,
    flag: u8,
    words: Option<&[u64]>,
    old_words: usize,
) {
    if v[flags_at] & flag != 0 {
        v.truncate(v.len() - old_words * 8);
    }
    match words {
        Some(ws) => {
            v.reserve_exact(ws.len() * 8);
            for w in ws {
                v.extend_from_slice(&w.to_le_bytes());
            }
            v[flags_at] |= flag;
        }
        None => v[flags_at] &= !flag,
    }
}

/// Replaces `v[range]` with `with` by moving the bytes after it once
/// (`Vec::splice` goes through an iterator and moves them in steps).
pub(crate) fn replace(v: &mut Vec<u8>, range: std::ops::Range<usize>, with: &[u8]) {
    let (start, end) = (range.start, range.end);
    let len = v.len();
    let new_end = start + with.len();
    if with.len() > end - start {
        let grow = with.len() - (end - start);
        v.reserve_exact(grow);
        v.resize(len + grow, 0);
        v.copy_within(end..len, new_end);
    } else if with.len() < end - start {
        v.copy_within(end..len, new_end);
        v.truncate(len - (end - start - with.len()));
    }
    v[start..new_end].copy_from_slice(with);
}

#[cfg(test)]
mod tests {
    #[test]
    fn replace_matches_splice() {
        for (start, end) in [(0, 0), (0, 3), (2, 2), (2, 5), (5, 7), (7, 7), (1, 7)] {
            for with in [&b""[..], b"x", b"yyy", b"zzzzzzzz"] {
                let mut a = b"0123456".to_vec();
                let mut b = a.clone();
                super::replace(&mut a, start..end, with);
                b.splice(start..end, with.iter().copied());
                assert_eq!(a, b, "{start}..{end} <- {with:?}");
            }
        }
    }
}
