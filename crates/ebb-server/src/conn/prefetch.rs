//! Prefetching the keys and members of the requests waiting in a
//! connection's read buffer.

use ebb_core::Store;

use crate::resp;

/// Requests of one batch looked at ahead (as many as one prefetch takes).
const PREFETCH_AHEAD: usize = ebb_core::db::PREFETCH_BATCH;

/// Starts loading what the complete requests waiting in `rbuf` will look
/// up, so that their cache misses overlap instead of following one
/// another: each request's key or, for a request naming the same key as
/// the one before it (`argv` for the first), its member in a large set,
/// sorted set or hash — guessed as the third argument of a hash command
/// (the field) and the last argument of any other. The store loads them
/// in steps over the whole batch (every index position, then every slot
/// or node; see `Store::prefetch`). Only a hint: a wrong guess costs a
/// lookup. Returns whether anything was worth prefetching (small
/// databases and collections are not).
#[inline(never)]
pub(super) fn prefetch_waiting(store: &Store, db: usize, argv: &[&[u8]], mut rbuf: &[u8]) -> bool {
    fn member_of<'a>(
        name: &[u8],
        third: Option<&'a [u8]>,
        last: Option<&'a [u8]>,
    ) -> Option<&'a [u8]> {
        if name.first().is_some_and(|c| c.eq_ignore_ascii_case(&b'h')) {
            third
        } else {
            last
        }
    }
    let mut keys: [&[u8]; PREFETCH_AHEAD] = [&[]; PREFETCH_AHEAD];
    let mut members: [(&[u8], &[u8]); PREFETCH_AHEAD] = [(&[], &[]); PREFETCH_AHEAD];
    let (mut nk, mut nm) = (0, 0);
    let mut prev_key = argv.get(1).map(|k| &k[..]);
    let mut prev_member = argv.first().and_then(|name| {
        member_of(
            name,
            argv.get(2).map(|a| &a[..]),
            argv.last().map(|a| &a[..]),
        )
    });
    for _ in 0..PREFETCH_AHEAD {
        let Some(next) = resp::peek_request(rbuf) else {
            break;
        };
        rbuf = &rbuf[next.len..];
        let [Some(name), Some(key), third] = next.args else {
            continue;
        };
        let member = member_of(name, third, next.last).filter(|&m| m != key);
        if prev_key != Some(key) {
            keys[nk] = key;
            nk += 1;
        } else if let Some(m) = member.filter(|&m| prev_member != Some(m)) {
            members[nm] = (key, m);
            nm += 1;
        }
        prev_key = Some(key);
        prev_member = member;
    }
    store.prefetch(db, &keys[..nk], &members[..nm])
}
