//! Property tests of the request parser: whatever bytes arrive, in
//! whatever pieces, `parse` never panics, never loops without consuming,
//! and cutting the stream anywhere does not change what it yields.

use super::*;
use proptest::prelude::*;

/// Runs the parser over `chunks` arriving one after the other, the way a
/// connection does: after each chunk, every complete request is taken.
/// Returns the requests and the protocol error that ended the stream.
fn drive<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
    lim: &Limits,
) -> (Vec<Vec<Bytes>>, Option<ProtoError>) {
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for c in chunks {
        buf.extend_from_slice(c);
        loop {
            let before = buf.clone();
            match parse(&mut buf, lim) {
                Ok(Parsed::Command(argv)) => {
                    assert!(
                        buf.len() < before.len(),
                        "a request consumed nothing from {before:?}"
                    );
                    out.push(argv);
                }
                Ok(Parsed::Incomplete) => {
                    assert_eq!(buf, before, "an incomplete request consumed bytes");
                    break;
                }
                Err(e) => return (out, Some(e)),
            }
        }
    }
    (out, None)
}

/// `bytes` cut at the given points.
fn cut<'a>(bytes: &'a [u8], points: &[prop::sample::Index]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = points.iter().map(|p| p.index(bytes.len() + 1)).collect();
    at.push(0);
    at.push(bytes.len());
    at.sort_unstable();
    at.windows(2).map(|w| &bytes[w[0]..w[1]]).collect()
}

/// Limits so large that only the content of the stream, never where it
/// was cut, decides the outcome.
fn unbounded() -> Limits {
    Limits {
        max_bulk_len: 1 << 40,
        max_inline: usize::MAX / 2,
        max_multibulk: 1 << 40,
        unauthenticated: false,
    }
}

/// Limits small enough for random streams to hit every one of them.
fn tiny() -> Limits {
    Limits {
        max_bulk_len: 40,
        max_inline: 24,
        max_multibulk: 6,
        unauthenticated: false,
    }
}

fn multibulk(args: &[Vec<u8>]) -> Vec<u8> {
    let mut v = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        v.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        v.extend_from_slice(a);
        v.extend_from_slice(b"\r\n");
    }
    v
}

/// An inline request quoting every argument, bytes as `\xHH` escapes.
fn inline(args: &[Vec<u8>]) -> Vec<u8> {
    let mut v = Vec::new();
    for a in args {
        v.extend_from_slice(b" \"");
        for b in a {
            v.extend_from_slice(format!("\\x{b:02x}").as_bytes());
        }
        v.push(b'"');
    }
    v.extend_from_slice(b"\r\n");
    v
}

fn args() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let arg = prop_oneof![
        3 => "[a-zA-Z0-9]{0,6}".prop_map(String::into_bytes),
        1 => prop::collection::vec(any::<u8>(), 0..20),
        1 => prop::sample::select(&["\r\n", "\"", "'", "\\", "*1\r\n", "$3\r\n"][..])
            .prop_map(|s| s.as_bytes().to_vec()),
    ];
    prop::collection::vec(arg, 0..8)
}

/// Pieces that stress the parser: odd lengths, bare line ends, quotes.
const NASTY: &[&[u8]] = &[
    b"*",
    b"$",
    b"\r",
    b"\n",
    b"\r\n",
    b"*0\r\n",
    b"*-1\r\n",
    b"*-99\r\n",
    b"*1\r\n",
    b"*2\n",
    b"*12\n",
    b"$-1\r\n",
    b"$0\r\n\r\n",
    b"$3\r\nabc\r\n",
    b"$99999999999999999999\r\n",
    b"*99999999999999999999\r\n",
    b"*9223372036854775807\r\n",
    b"*-9223372036854775808\r\n",
    b"$-9223372036854775808\r\n",
    b"*1048577\r\n",
    b"$536870913\r\n",
    b"*+1\r\n",
    b"$ 3\r\n",
    b"*1\r\n+a\r\n",
    b"\"",
    b"'",
    b"\\x",
    b"\\x4",
    b"\\xZZ",
    b"\"a\"b",
    b"'a'b",
    b"\"\\",
    b"\x00",
    b"\xff",
    b" ",
    b"\t",
    b"PING",
    b"SET a b",
];

/// A stream of requests, valid or not: well-formed frames of both kinds,
/// random bytes and nasty pieces, then mutated.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => args().prop_map(|a| multibulk(&a)),
        2 => args().prop_map(|a| inline(&a)),
        2 => prop::sample::select(NASTY).prop_map(<[u8]>::to_vec),
        1 => prop::collection::vec(any::<u8>(), 0..16),
    ];
    let edit = (any::<prop::sample::Index>(), any::<u8>(), 0u8..3);
    (
        prop::collection::vec(piece, 0..8),
        prop::collection::vec(edit, 0..3),
    )
        .prop_map(|(pieces, edits)| {
            let mut s = pieces.concat();
            for (at, byte, how) in edits {
                match how {
                    0 if !s.is_empty() => {
                        let i = at.index(s.len());
                        s[i] = byte;
                    }
                    1 if !s.is_empty() => {
                        s.remove(at.index(s.len()));
                    }
                    _ => s.insert(at.index(s.len() + 1), byte),
                }
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Well-formed requests of both kinds come back as they were sent,
    /// however the stream is cut.
    #[test]
    fn requests_round_trip(
        reqs in prop::collection::vec((args(), any::<bool>()), 0..6),
        points in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let bytes: Vec<u8> = reqs
            .iter()
            .flat_map(|(a, mb)| if *mb { multibulk(a) } else { inline(a) })
            .collect();
        let want: Vec<Vec<Bytes>> = reqs
            .iter()
            .map(|(a, _)| a.iter().map(|x| Bytes::from(x.clone())).collect())
            .collect();
        let got = drive(cut(&bytes, &points), &Limits::default());
        prop_assert_eq!(got, (want, None));
    }

    /// Any stream parses the same whole, cut anywhere, or byte by byte.
    #[test]
    fn cutting_never_changes_the_outcome(
        bytes in stream(),
        points in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let lim = unbounded();
        let whole = drive([&bytes[..]], &lim);
        prop_assert_eq!(&drive(cut(&bytes, &points), &lim), &whole);
        prop_assert_eq!(&drive(bytes.chunks(1), &lim), &whole);
    }

    /// With limits the stream does hit, a size limit may trip earlier when
    /// the stream arrives in pieces (as in Redis), but never later: the
    /// requests before the error are a prefix of the whole stream's.
    #[test]
    fn limits_only_ever_stop_earlier(
        bytes in stream(),
        points in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let lim = tiny();
        let (all, end) = drive([&bytes[..]], &lim);
        for (got, got_end) in [drive(cut(&bytes, &points), &lim), drive(bytes.chunks(1), &lim)] {
            prop_assert!(all.starts_with(&got), "{:?} is not a prefix of {:?}", got, all);
            if end.is_some() {
                prop_assert!(got_end.is_some(), "the whole stream fails with {:?}", end);
            }
            if got.len() < all.len() {
                prop_assert!(got_end.is_some());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Looking ahead agrees with the parser: on any stream, whatever
    /// `peek_request` finds complete, the parser takes whole, with the
    /// same first and last arguments and the same length; it never panics.
    #[test]
    fn peeking_agrees_with_parsing(bytes in stream(), reqs in prop::collection::vec(args(), 0..4)) {
        let mut all: Vec<u8> = reqs.iter().flat_map(|a| multibulk(a)).collect();
        all.extend_from_slice(&bytes);
        let mut buf = BytesMut::from(&all[..]);
        let lim = unbounded();
        loop {
            let peeked = peek_request(&buf).map(|p| {
                (p.args.map(|x| x.map(<[u8]>::to_vec)), p.last.map(<[u8]>::to_vec), p.len)
            });
            let before = buf.len();
            match parse(&mut buf, &lim) {
                Ok(Parsed::Command(argv)) => {
                    if let Some((args, last, n)) = peeked {
                        prop_assert_eq!(n, before - buf.len());
                        prop_assert_eq!(last.as_deref(), argv.last().map(|x| &x[..]));
                        for (i, a) in args.iter().enumerate() {
                            prop_assert_eq!(a.as_deref(), argv.get(i).map(|x| &x[..]));
                        }
                    }
                }
                Ok(Parsed::Incomplete) => {
                    prop_assert!(peeked.is_none());
                    break;
                }
                Err(_) => break,
            }
        }
    }
}
