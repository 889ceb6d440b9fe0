//! Sets whose members may carry deadlines.

use bytes::Bytes;

use super::table::{Lookahead, MemberTable, Node};
use super::zpack::{packable_deadline, PackIter, SPack};
use crate::expiry::{MemberDeadlines, NO_DEADLINE};

/// A set. While small (up to 128 members of at most 64 bytes) it is one
/// packed buffer ([`SPack`]) in ascending numeric order while every member
/// is an integer (as Redis's `intset` lists them), otherwise in the order
/// members were added. Then its members are stored once in a dense
/// [`MemberTable`], so random members (SPOP, SRANDMEMBER) cost O(1), and
/// removal moves the last member into the hole, as an index set's
/// `swap_remove` does. Like Redis, a set that outgrew the packed form keeps
/// the large one.
///
/// The value is 16 bytes: a packed set is its buffer alone, a large one a
/// box with the table.
#[derive(Debug, Clone)]
pub struct SetValue {
    repr: Repr,
}

/// The large form's box: the table, and the earliest member deadline the
/// keyspace's member index recorded ([`NO_DEADLINE`] for none; a packed
/// set keeps it in its buffer).
#[derive(Debug, Clone)]
struct Large {
    table: MemberTable<()>,
    indexed_due: u64,
    /// The set has held a member that is not an integer, or more members
    /// than Redis's default `set-max-intset-entries`: Redis's set would be
    /// a hash table from then on, whatever it holds now.
    wide: bool,
}

/// Redis's default `set-max-intset-entries`.
const INTSET_MAX: usize = 512;

impl std::ops::Deref for Large {
    type Target = MemberTable<()>;

    fn deref(&self) -> &MemberTable<()> {
        &self.table
    }
}

impl std::ops::DerefMut for Large {
    fn deref_mut(&mut self) -> &mut MemberTable<()> {
        &mut self.table
    }
}

/// What [`SetValue::write`] found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Did {
    Added,
    Existed,
    Absent,
}

#[derive(Debug, Clone)]
enum Repr {
    Packed(SPack),
    Large(Box<Large>),
}

impl Default for SetValue {
    fn default() -> Self {
        SetValue {
            repr: Repr::Packed(SPack::default()),
        }
    }
}

/// The members of a set, in either form.
#[derive(Debug, Clone)]
pub struct SetIter<'a>(IterRepr<'a>);

#[derive(Debug, Clone)]
enum IterRepr<'a> {
    Packed(PackIter<'a, false>),
    Large(std::slice::Iter<'a, Node<()>>),
    /// A large set of integers only, in numeric order (Redis's intset):
    /// (value, member) pairs.
    Sorted(std::vec::IntoIter<(i64, &'a [u8])>),
}

impl<'a> Iterator for SetIter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        match &mut self.0 {
            IterRepr::Packed(it) => it.next().map(|(m, _)| m),
            IterRepr::Large(it) => it.next().map(|n| &n.member[..]),
            IterRepr::Sorted(it) => it.next().map(|(_, m)| m),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            IterRepr::Packed(it) => it.size_hint(),
            IterRepr::Large(it) => it.size_hint(),
            IterRepr::Sorted(it) => it.size_hint(),
        }
    }
}

impl DoubleEndedIterator for SetIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::Packed(it) => it.next_back().map(|(m, _)| m),
            IterRepr::Large(it) => it.next_back().map(|n| &n.member[..]),
            IterRepr::Sorted(it) => it.next_back().map(|(_, m)| m),
        }
    }
}

impl ExactSizeIterator for SetIter<'_> {}

impl SetValue {
    /// The most members the packed form holds.
    pub const PACKED_MAX_LEN: usize = super::zpack::MAX_LEN;

    /// The member table of the large form, for the look-ahead over a
    /// pipeline (the packed form needs none).
    pub(crate) fn lookahead(&self) -> Option<&dyn Lookahead> {
        match &self.repr {
            Repr::Large(l) => Some(&l.table),
            Repr::Packed(_) => None,
        }
    }

    /// An empty set.
    pub fn new() -> SetValue {
        SetValue::default()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Packed(p) => p.len(),
            Repr::Large(t) => t.len(),
        }
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the set is in its packed form.
    pub fn is_packed(&self) -> bool {
        matches!(self.repr, Repr::Packed(_))
    }

    /// Takes the large form for good, as a hash table: what Redis's set
    /// becomes once it outgrows `set-max-intset-entries`.
    pub fn widen(&mut self) {
        self.large().wide = true;
    }

    /// The large form, converting a packed set to it first (same order).
    fn large(&mut self) -> &mut Large {
        if let Repr::Packed(p) = &self.repr {
            self.repr = Repr::Large(Box::new(Large {
                table: p.to_table(|_| ()),
                indexed_due: p.indexed_due(),
                wide: !p.ints() && p.len() > 0,
            }));
        }
        match &mut self.repr {
            Repr::Large(t) => t,
            Repr::Packed(_) => unreachable!("converted above"),
        }
    }

    /// Whether `m` is a member.
    pub fn contains(&self, m: &[u8]) -> bool {
        match &self.repr {
            Repr::Packed(p) => p.find(m).is_some(),
            Repr::Large(t) => t.find(m).is_some(),
        }
    }

    /// Adds `m`; returns true if it was new. An existing member keeps its deadline.
    pub fn insert(&mut self, m: impl AsRef<[u8]>) -> bool {
        self.write(m.as_ref(), NO_DEADLINE, true, false) == Did::Added
    }

    /// Removes `m` and its deadline; returns true if it was present.
    pub fn remove(&mut self, m: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Packed(p) => match p.find(m) {
                Some((o, _)) => {
                    p.remove_at(o);
                    true
                }
                None => false,
            },
            Repr::Large(t) => match t.find(m) {
                Some(id) => t.swap_remove(id).is_some(),
                None => false,
            },
        }
    }

    /// The member at position `i` (0..len), for random picks.
    pub fn get_index(&self, i: usize) -> Option<&[u8]> {
        match &self.repr {
            Repr::Packed(p) => p.range(i, i + 1).next().map(|(m, _)| m),
            Repr::Large(t) => t.nodes().get(i).map(|n| &n.member[..]),
        }
    }

    /// Iterates over the members: a set of integers only (Redis's intset
    /// shape) in numeric order, as Redis lists an intset; any other in the
    /// order it keeps them.
    pub fn iter(&self) -> SetIter<'_> {
        SetIter(match &self.repr {
            Repr::Packed(p) => IterRepr::Packed(p.range(0, p.len())),
            Repr::Large(t) if !t.wide => {
                let mut ints: Vec<(i64, &[u8])> = Vec::with_capacity(t.len());
                for n in t.nodes() {
                    match crate::args::parse_i64(&n.member) {
                        Some(i) => ints.push((i, &n.member[..])),
                        None => return SetIter(IterRepr::Large(t.nodes().iter())),
                    }
                }
                ints.sort_unstable_by_key(|&(i, _)| i);
                IterRepr::Sorted(ints.into_iter())
            }
            Repr::Large(t) => IterRepr::Large(t.nodes().iter()),
        })
    }

    /// The deadline of `m`, if it is a member with one.
    pub fn deadline(&self, m: &[u8]) -> Option<u64> {
        match &self.repr {
            Repr::Packed(p) => p.deadline_at(p.find(m)?.0),
            Repr::Large(t) => t.deadline(t.find(m)?),
        }
    }

    /// Whether every member is a canonical 64-bit integer, the shape Redis
    /// 7.0 keeps in its compact `intset` encoding.
    /// A packed set remembers a member that was not, as Redis's set stays
    /// a hash table once it held one.
    pub fn all_integers(&self) -> bool {
        match &self.repr {
            Repr::Packed(p) => p.ints() || p.len() == 0,
            Repr::Large(l) => {
                !l.wide
                    && l.nodes()
                        .iter()
                        .all(|n| crate::args::parse_i64(&n.member).is_some())
            }
        }
    }

    /// The member deadlines.
    pub fn deadlines(&self) -> MemberDeadlines<'_> {
        match &self.repr {
            Repr::Packed(p) => MemberDeadlines::packed(p),
            Repr::Large(t) => t.deadlines(),
        }
    }

    /// Sets the deadline of an existing member; false if it is not a member.
    pub fn set_deadline(&mut self, m: &[u8], at: u64) -> bool {
        self.write(m, at, false, true) != Did::Absent
    }

    /// Clears the deadline of `m`; returns the one it had.
    pub fn clear_deadline(&mut self, m: &[u8]) -> Option<u64> {
        match &mut self.repr {
            Repr::Packed(p) => p.clear_deadline_at(p.find(m)?.0),
            Repr::Large(t) => {
                let id = t.find(m)?;
                t.clear_deadline(id)
            }
        }
    }

    /// Adds `m` with the deadline `at`, replacing any deadline it had;
    /// returns true if it was new.
    #[cfg(test)]
    pub fn insert_with_deadline(&mut self, m: impl AsRef<[u8]>, at: u64) -> bool {
        self.upsert_deadline(m.as_ref(), at, false) == Some(true)
    }

    /// SADDEX's write of one member, with one lookup: adds `m` with the
    /// deadline `at` (`Some(true)`), or gives an existing member that
    /// deadline (`Some(false)`) unless `keep` is set, in which case it keeps
    /// its own (`None`).
    pub fn upsert_deadline(&mut self, m: &[u8], at: u64, keep: bool) -> Option<bool> {
        match self.write(m, at, true, !keep) {
            Did::Added => Some(true),
            Did::Existed if !keep => Some(false),
            _ => None,
        }
    }

    /// SADD of `members` into a new (empty) set that packs: built at once,
    /// without a search and a reallocation per member. Returns how many
    /// were added; None (nothing done) when the set is not empty or they
    /// would not pack.
    pub fn fill_packed(&mut self, members: &[&[u8]]) -> Option<usize> {
        if !self.is_empty() || !self.is_packed() {
            return None;
        }
        let (p, n) = SPack::set_from_members(members)?;
        self.repr = Repr::Packed(p);
        Some(n)
    }

    /// Before up to `n` members are added to a new (empty) set that
    /// [`Self::fill_packed`] could not pack: more than the packed form
    /// holds take the large form at once, instead of filling the packed
    /// form first.
    pub fn expect(&mut self, n: usize) {
        if n > super::zpack::MAX_LEN && self.is_empty() {
            self.large();
        }
    }

    /// One lookup of `m`, then: a member gets the deadline `at` if
    /// `refresh` (`Existed` either way); a new one is added with `at` if
    /// `add` (`Added`, otherwise `Absent`).
    fn write(&mut self, m: &[u8], at: u64, add: bool, refresh: bool) -> Did {
        if let Repr::Packed(p) = &mut self.repr {
            match p.find(m) {
                Some(_) if !refresh => return Did::Existed,
                Some((o, _)) if packable_deadline(at) => {
                    p.set_deadline_at(o, at);
                    return Did::Existed;
                }
                None if !add => return Did::Absent,
                None if p.can_add(m) && packable_deadline(at) => {
                    p.insert(m, 0.0, at);
                    return Did::Added;
                }
                // Past the packed form's limits.
                _ => {}
            }
        }
        let t = self.large();
        let (id, did) = match t.find(m) {
            Some(_) if !refresh => return Did::Existed,
            Some(id) => (id, Did::Existed),
            None if !add => return Did::Absent,
            None => {
                let id = t.push(m, ());
                if !t.wide && (t.len() > INTSET_MAX || crate::args::parse_i64(m).is_none()) {
                    t.wide = true;
                }
                (id, Did::Added)
            }
        };
        if at != NO_DEADLINE {
            t.set_deadline(id, at);
        }
        did
    }

    /// Removes the earliest member whose deadline is `<= now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Bytes> {
        match &mut self.repr {
            Repr::Packed(p) => Some(p.remove_at(p.first_due_by(now)?).0),
            Repr::Large(t) => {
                let id = t.first_due(now)?;
                t.swap_remove(id).map(|n| n.member.into_bytes())
            }
        }
    }

    /// The earliest member deadline the keyspace's member index recorded.
    pub(crate) fn indexed_due(&self) -> u64 {
        match &self.repr {
            Repr::Packed(p) => p.indexed_due(),
            Repr::Large(l) => l.indexed_due,
        }
    }

    /// Records what the keyspace's member index holds for this set.
    pub(crate) fn set_indexed_due(&mut self, at: u64) {
        match &mut self.repr {
            Repr::Packed(p) => p.set_indexed_due(at),
            Repr::Large(l) => l.indexed_due = at,
        }
    }

    /// Heap bytes held by the structure (not the members' own bytes,
    /// except in the packed form, where they are the structure).
    pub fn heap_bytes(&self) -> usize {
        match &self.repr {
            Repr::Packed(p) => p.heap_bytes(),
            Repr::Large(t) => std::mem::size_of::<Large>() + t.heap_bytes(),
        }
    }

    /// Checks the packed buffer or the table (tests).
    #[cfg(test)]
    pub fn check(&self) {
        match &self.repr {
            Repr::Packed(p) => p.check(),
            Repr::Large(t) => t.check(),
        }
    }
}

impl<B: AsRef<[u8]>> FromIterator<B> for SetValue {
    /// A set of the given members, none with a deadline.
    fn from_iter<I: IntoIterator<Item = B>>(iter: I) -> SetValue {
        let mut s = SetValue::new();
        for m in iter {
            s.insert(m);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn insert_keeps_deadline_and_remove_forgets_it() {
        let mut s = SetValue::new();
        assert!(s.insert_with_deadline(b("a"), 50));
        assert!(!s.insert(b("a")));
        assert_eq!(s.deadline(b"a"), Some(50));
        assert!(s.remove(b"a"));
        assert!(s.insert(b("a")));
        assert_eq!(s.deadline(b"a"), None);
        assert!(s.deadlines().is_empty());
    }

    #[test]
    fn insert_with_deadline_replaces_deadline() {
        let mut s = SetValue::new();
        s.insert(b("a"));
        assert!(!s.insert_with_deadline(b("a"), 10));
        assert!(!s.insert_with_deadline(b("a"), 20));
        assert_eq!(s.deadline(b"a"), Some(20));
        assert_eq!(s.deadlines().len(), 1);
    }

    #[test]
    fn pop_due_in_deadline_order() {
        let mut s = SetValue::new();
        s.insert_with_deadline(b("late"), 30);
        s.insert_with_deadline(b("early"), 10);
        s.insert(b("forever"));
        assert_eq!(s.pop_due(9), None);
        assert_eq!(s.pop_due(100).as_deref(), Some(&b"early"[..]));
        assert_eq!(s.pop_due(100).as_deref(), Some(&b"late"[..]));
        assert_eq!(s.pop_due(100), None);
        assert_eq!(s.len(), 1);
        assert!(s.contains(b"forever"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// A new set filled at once is the set the same members added one
        /// by one make, byte for byte; when it would not pack, nothing is
        /// done.
        #[test]
        fn filled_at_once_as_one_by_one(
            picks in proptest::collection::vec((0u8..4, 0i64..300), 1..140)
        ) {
            let owned: Vec<Vec<u8>> = picks
                .iter()
                .map(|&(kind, v)| match kind {
                    0 | 1 => v.to_string().into_bytes(),
                    2 => format!("-{v}").into_bytes(),
                    _ if v % 50 == 7 => vec![b'x'; 70],
                    _ => format!("m{v}").into_bytes(),
                })
                .collect();
            let members: Vec<&[u8]> = owned.iter().map(|m| &m[..]).collect();
            let mut one = SetValue::new();
            let mut added = 0;
            for m in &members {
                added += usize::from(one.insert(m));
            }
            let mut all = SetValue::new();
            match all.fill_packed(&members) {
                Some(n) => {
                    proptest::prop_assert!(one.is_packed());
                    proptest::prop_assert_eq!(n, added);
                    proptest::prop_assert_eq!(format!("{all:?}"), format!("{one:?}"));
                    proptest::prop_assert!(all.fill_packed(&members).is_none());
                }
                None => proptest::prop_assert!(
                    members.len() > 128 || members.iter().any(|m| m.len() > 64)
                ),
            }
        }

        /// Random writes to a small set (packed, sometimes growing past the
        /// packed limits) against a model; while packed, members keep the
        /// order they were added in.
        #[test]
        fn packed_sets_match_a_model(
            ops in proptest::collection::vec((0u8..140, 0u8..6, proptest::option::of(0u64..50)), 1..400),
            long in proptest::bool::weighted(0.1),
            numbers in proptest::bool::weighted(0.5),
        ) {
            let mut s = SetValue::new();
            // (member, deadline) in the set's order: ascending while every
            // member since the set was last empty is an integer, then the
            // order added.
            let mut model: Vec<(Bytes, Option<u64>)> = Vec::new();
            let mut ints = true;
            let int = |m: &[u8]| crate::args::parse_i64(m);
            let mut add = |model: &mut Vec<(Bytes, Option<u64>)>, m: Bytes, t: Option<u64>| {
                ints = (ints || model.is_empty()) && int(&m).is_some();
                let at = match int(&m).filter(|_| ints) {
                    Some(v) => model.iter().position(|e| int(&e.0).is_some_and(|x| x > v)).unwrap_or(model.len()),
                    None => model.len(),
                };
                model.insert(at, (m, t));
            };
            let pos = |model: &Vec<(Bytes, Option<u64>)>, m: &Bytes| model.iter().position(|e| e.0 == m);
            for (m, op, t) in ops {
                let m = if long && m == 7 {
                    Bytes::from(vec![b'x'; 70])
                } else if numbers && m != 9 {
                    Bytes::from(format!("{}", i64::from(m) - 70))
                } else {
                    Bytes::from(format!("m{m}"))
                };
                let at = t.map_or(u64::MAX - 1, |t| t + 1_700_000_000_000);
                match op {
                    0 => {
                        let new = pos(&model, &m).is_none();
                        proptest::prop_assert_eq!(s.insert(&m), new);
                        if new {
                            add(&mut model, m, None);
                        }
                    }
                    1 => {
                        let i = pos(&model, &m);
                        proptest::prop_assert_eq!(s.remove(&m), i.is_some());
                        if let Some(i) = i {
                            model.remove(i);
                        }
                    }
                    2 => {
                        let keep = t.is_some_and(|t| t % 2 == 0);
                        let got = s.upsert_deadline(&m, at, keep);
                        match pos(&model, &m) {
                            None => {
                                proptest::prop_assert_eq!(got, Some(true));
                                add(&mut model, m, Some(at));
                            }
                            Some(_) if keep => proptest::prop_assert_eq!(got, None),
                            Some(i) => {
                                proptest::prop_assert_eq!(got, Some(false));
                                model[i].1 = Some(at);
                            }
                        }
                    }
                    3 => {
                        let i = pos(&model, &m);
                        proptest::prop_assert_eq!(s.set_deadline(&m, at), i.is_some());
                        if let Some(i) = i {
                            model[i].1 = Some(at);
                        }
                    }
                    4 => {
                        let had = pos(&model, &m).and_then(|i| model[i].1.take());
                        proptest::prop_assert_eq!(s.clear_deadline(&m), had);
                    }
                    _ => {
                        let now = t.unwrap_or(0) + 1_700_000_000_000;
                        while let Some(gone) = s.pop_due(now) {
                            let i = pos(&model, &gone);
                            proptest::prop_assert!(i.is_some_and(|i| model[i].1.is_some_and(|t| t <= now)));
                            if let Some(i) = i {
                                model.remove(i);
                            }
                        }
                        proptest::prop_assert!(model.iter().all(|e| e.1.is_none_or(|t| t > now)));
                    }
                }
            }
            s.check();
            proptest::prop_assert_eq!(s.len(), model.len());
            let got: Vec<&[u8]> = s.iter().collect();
            if s.is_packed() {
                let want: Vec<&[u8]> = model.iter().map(|e| &e.0[..]).collect();
                proptest::prop_assert_eq!(&got, &want);
                proptest::prop_assert!(model.len() <= 128 && model.iter().all(|e| e.0.len() <= 64));
            } else {
                let mut a = got.clone();
                let mut b: Vec<&[u8]> = model.iter().map(|e| &e.0[..]).collect();
                a.sort();
                b.sort();
                proptest::prop_assert_eq!(a, b);
            }
            proptest::prop_assert!(s.iter().rev().eq(got.iter().rev().copied()));
            // Positions are the kept order; a large set of integers only
            // lists them in numeric order (Redis's intset).
            let by_index: Vec<&[u8]> = (0..got.len()).filter_map(|i| s.get_index(i)).collect();
            if s.is_packed() || !s.all_integers() {
                proptest::prop_assert_eq!(&by_index, &got);
            } else {
                let nums: Vec<i64> = got.iter().filter_map(|m| int(m)).collect();
                proptest::prop_assert!(nums.len() == got.len() && nums.windows(2).all(|w| w[0] < w[1]));
                let mut a = by_index.clone();
                let mut b = got.clone();
                a.sort();
                b.sort();
                proptest::prop_assert_eq!(a, b);
            }
            for m in got.iter() {
                let e = &model[pos(&model, &Bytes::copy_from_slice(m)).expect("in model")];
                proptest::prop_assert_eq!(s.deadline(m), e.1);
                proptest::prop_assert!(s.contains(m));
            }
            let timed: Vec<u64> = model.iter().filter_map(|e| e.1).collect();
            let d = s.deadlines();
            proptest::prop_assert_eq!(d.len(), timed.len());
            proptest::prop_assert_eq!(d.earliest(), timed.iter().min().copied());
            proptest::prop_assert_eq!(d.latest(), timed.iter().max().copied());
            let walked: Vec<u64> = d.iter().map(|(_, t)| t).collect();
            proptest::prop_assert!(walked.windows(2).all(|w| w[0] <= w[1]));
            proptest::prop_assert_eq!(walked.len(), timed.len());
        }
    }

    #[test]
    fn integers_and_collect() {
        let s: SetValue = [b("1"), b("-20")].into_iter().collect();
        assert!(s.all_integers());
        let t: SetValue = [b("1"), b("01")].into_iter().collect();
        assert!(!t.all_integers());
        assert!(t.deadlines().is_empty());
    }
}
