//! Unit tests of the packed buffer.
use super::*;

impl<const SCORED: bool> Pack<SCORED> {
    /// Checks the buffer's structure.
    pub(crate) fn check(&self) {
        let mut n = 0;
        let mut timed = 0;
        let mut prev: Option<(f64, Vec<u8>)> = None;
        for o in self.offsets() {
            let size = self.size(o);
            assert_eq!(self.buf[o + size - 1] as usize, size);
            let e = self.entry(o);
            assert_eq!(
                self.encode(e.member, e.score, e.deadline).as_slice(),
                &self.buf[o..o + size]
            );
            if let Some((s, m)) = prev.as_ref().filter(|_| SCORED) {
                assert_eq!(
                    (Score(*s), &m[..]).cmp(&(Score(e.score), e.member)),
                    Ordering::Less
                );
            }
            prev = Some((e.score, e.member.to_vec()));
            n += 1;
            timed += usize::from(e.deadline != NO_DEADLINE);
        }
        assert_eq!(n, self.len());
        assert_eq!(timed, self.timed());
        if !SCORED && self.ints() {
            let v: Vec<i64> = self
                .offsets()
                .map(|o| parse_i64(self.member_at(o)).expect("an integer"))
                .collect();
            assert!(v.windows(2).all(|w| w[0] < w[1]));
        }
        assert_eq!(self.first_due_raw(), self.scan_first_due());
        if self.len() > 0 {
            assert_eq!(
                self.last_offset().map(|o| o + self.size(o)),
                Some(self.end())
            );
        }
    }
}

#[test]
fn scores_and_deadlines_round_trip() {
    let mut p = ZPack::default();
    let scores = [
        1_700_000_000_000.0,
        1_700_000_000_001.0,
        -5.0,
        0.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        INT_LIMIT,
        -INT_LIMIT,
        INT_LIMIT * 2.0,
        1e300,
    ];
    for (i, &s) in scores.iter().enumerate() {
        let at = match i % 3 {
            0 => NO_DEADLINE,
            1 => 1_700_000_000_000 + i as u64,
            _ => DEADLINE_LIMIT - 1 - i as u64,
        };
        p.insert(format!("m{i}").as_bytes(), s, at);
    }
    p.check();
    for (i, &s) in scores.iter().enumerate() {
        let (o, _) = p.find(format!("m{i}").as_bytes()).expect("present");
        let e = p.entry(o);
        assert_eq!(e.score, s);
        let want = match i % 3 {
            0 => NO_DEADLINE,
            1 => 1_700_000_000_000 + i as u64,
            _ => DEADLINE_LIMIT - 1 - i as u64,
        };
        assert_eq!(e.deadline, want);
    }
    let got: Vec<f64> = p.range(0, p.len()).map(|(_, s)| s).collect();
    let mut want = scores.to_vec();
    want.sort_by_key(|&s| Score(s));
    assert_eq!(got, want);
    let back: Vec<f64> = p.range(0, p.len()).rev().map(|(_, s)| s).collect();
    want.reverse();
    assert_eq!(back, want);
}

#[test]
fn deadlines_change_in_place_and_counts_follow() {
    let mut p = ZPack::default();
    let o = p.insert(b"a", 1.0, NO_DEADLINE);
    p.insert(b"b", 2.0, 50);
    p.set_deadline_at(o, 10);
    assert_eq!(p.timed(), 2);
    assert_eq!(p.earliest(), Some((10, p.offset_of_rank(0))));
    assert_eq!(p.latest(), Some(50));
    p.set_deadline_at(o, NO_DEADLINE);
    assert_eq!(p.timed(), 1);
    let (o, _) = p.find(b"b").expect("b");
    let o = p.set_score_at(o, -1.0);
    assert_eq!(o, p.offset_of_rank(0));
    assert_eq!(p.entry(o).deadline, 50);
    assert_eq!(p.remove_at(o), (Bytes::from_static(b"b"), -1.0, 50));
    assert_eq!(p.timed(), 0);
    p.check();
}

/// The buffer is the header, the entries and, while a deadline is to
/// be kept, the trailer (16 bytes while the recorded deadline is the
/// earliest, 24 otherwise): nothing else, and entries stay put
/// when the trailer comes or goes.
#[test]
fn one_exact_buffer_with_a_trailer_only_for_deadlines() {
    let mut p = SPack::default();
    assert_eq!(p.heap_bytes(), 0);
    p.insert(b"123456", 0.0, NO_DEADLINE);
    // header 3 + entry (size, length, 6 bytes, deadline 0, size)
    assert_eq!(p.heap_bytes(), 3 + 10);
    assert!(p.ints());
    p.insert(b"654321", 0.0, 1_700_000_000_000);
    p.check();
    // The first deadline is the base: stored as a one-byte delta. The
    // keyspace has not recorded it yet: three words.
    assert_eq!(p.heap_bytes(), 3 + 10 + 10 + DUES);
    assert_eq!(p.indexed_due(), NO_DEADLINE);
    p.set_indexed_due(1_700_000_000_000);
    // Recorded = earliest: the third word goes.
    assert_eq!(p.heap_bytes(), 3 + 10 + 10 + SHORT_DUES);
    assert_eq!(p.indexed_due(), 1_700_000_000_000);
    assert_eq!(p.first_due(), Some(1_700_000_000_000));
    let (o, _) = p.find(b"654321").expect("present");
    p.set_deadline_at(o, NO_DEADLINE);
    p.check();
    // The earliest is gone, the recorded one stays until the keyspace
    // moves it.
    assert_eq!(p.heap_bytes(), 3 + 10 + 10 + DUES);
    assert_eq!(p.indexed_due(), 1_700_000_000_000);
    assert_eq!(p.first_due(), None);
    p.set_indexed_due(NO_DEADLINE);
    assert_eq!(p.heap_bytes(), 3 + 10 + 10);
    assert_eq!(p.find(b"654321"), Some((o, 1)));
    p.insert(b"x", 0.0, NO_DEADLINE);
    assert!(!p.ints());
    p.check();
    let mut z = ZPack::default();
    z.insert(b"a", 1_700_000_000_000.0, NO_DEADLINE);
    // header 11 (with the score base) + entry (size, length, a, score
    // delta, deadline 0, size)
    assert_eq!(z.heap_bytes(), 11 + 6);
    z.check();
}

#[test]
fn a_full_set_of_long_members_fits_the_size_bytes() {
    let mut p = ZPack::default();
    for i in 0..MAX_LEN {
        let m = format!("{i:0>64}");
        p.insert(m.as_bytes(), 0.1 * i as f64, DEADLINE_LIMIT - 1);
    }
    p.check();
    assert_eq!(p.range(0, MAX_LEN).rev().count(), MAX_LEN);
}
