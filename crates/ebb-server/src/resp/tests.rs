//! Unit tests of the RESP reader and writers.

use super::{peek_request, Limits, Request};
use bytes::BytesMut;

/// Before AUTH a request has at most 10 arguments of at most 16 KB
/// (Redis's texts); the same requests pass once authenticated.
#[test]
fn unauthenticated_requests_are_short() {
    let unauth = Limits {
        unauthenticated: true,
        ..Limits::default()
    };
    let parse = |text: &[u8], lim: &Limits| {
        Request::default()
            .parse(text, lim)
            .map(|done| done.is_some())
            .map_err(|e| e.0)
    };
    let many = b"*11\r\n".to_vec();
    assert_eq!(
        parse(&many, &unauth),
        Err("ERR Protocol error: unauthenticated multibulk length".to_string())
    );
    assert_eq!(parse(&many, &Limits::default()), Ok(false));
    let big = b"*1\r\n$16385\r\n".to_vec();
    assert_eq!(
        parse(&big, &unauth),
        Err("ERR Protocol error: unauthenticated bulk length".to_string())
    );
    assert_eq!(parse(&big, &Limits::default()), Ok(false));
    let fits = format!("*10\r\n{}", "$5\r\nhello\r\n".repeat(10));
    assert_eq!(parse(fits.as_bytes(), &unauth), Ok(true));
    let edge = format!("*1\r\n$16384\r\n{}\r\n", "x".repeat(16384));
    assert_eq!(parse(edge.as_bytes(), &unauth), Ok(true));
}

/// A complete request gives its first three arguments, its last one
/// and its length;
/// a request cut short, an inline one or odd headers give nothing.
#[test]
fn peek_request_reads_only_complete_requests() {
    let zadd = b"*5\r\n$4\r\nZADD\r\n$1\r\nz\r\n$1\r\n1\r\n$1\r\nm\r\n$1\r\nx\r\n";
    let p = peek_request(zadd).expect("complete");
    assert_eq!(p.args, [Some(&b"ZADD"[..]), Some(b"z"), Some(b"1")]);
    assert_eq!(p.last, Some(&b"x"[..]));
    assert_eq!(p.len, zadd.len());
    let mut two = zadd.to_vec();
    two.extend_from_slice(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    let first = peek_request(&two).expect("complete").len;
    let p = peek_request(&two[first..]).expect("complete");
    assert_eq!(p.args, [Some(&b"GET"[..]), Some(b"k"), None]);
    assert_eq!(p.last, Some(&b"k"[..]));
    for cut in 1..zadd.len() {
        assert_eq!(peek_request(&zadd[..cut]), None, "cut at {cut}");
    }
    for odd in [
        &b"GET key\r\n"[..],
        b"",
        b"*2\r\n$-1\r\n$1\r\nk\r\n",
        b"*2\r\n$3\r\nGET\r\n+k\r\n",
        b"*2\r\n$9223372036854775807\r\nGET\r\n$1\r\nk\r\n",
        b"*-1\r\n",
    ] {
        assert_eq!(peek_request(odd), None);
    }
    let p = peek_request(b"*2\r\n$3\r\nGET\r\n$0\r\n\r\n").expect("complete");
    assert_eq!(p.args[1], Some(&b""[..]));
    let empty = peek_request(b"*0\r\n").expect("complete");
    assert_eq!(empty.len, 4);
    assert_eq!(empty.last, None);
}

use super::*;

fn parse_all(s: &[u8]) -> Vec<Vec<Bytes>> {
    let mut b = BytesMut::from(s);
    let mut v = Vec::new();
    while let Ok(Parsed::Command(c)) = parse(&mut b, &Limits::default()) {
        v.push(c);
    }
    v
}

#[test]
fn multibulk_and_inline() {
    let v = parse_all(b"*2\r\n$3\r\nGET\r\n$1\r\na\r\nPING\r\nset \"a b\" 'c'\r\n");
    assert_eq!(v.len(), 3);
    assert_eq!(v[0], vec![Bytes::from("GET"), Bytes::from("a")]);
    assert_eq!(v[1], vec![Bytes::from("PING")]);
    assert_eq!(
        v[2],
        vec![Bytes::from("set"), Bytes::from("a b"), Bytes::from("c")]
    );
}

#[test]
fn partial_frames_wait() {
    let mut b = BytesMut::from(&b"*2\r\n$3\r\nGET\r\n$1\r"[..]);
    assert!(matches!(
        parse(&mut b, &Limits::default()),
        Ok(Parsed::Incomplete)
    ));
}

#[test]
fn errors() {
    let mut b = BytesMut::from(&b"*x\r\n"[..]);
    assert!(parse(&mut b, &Limits::default()).is_err());
    let mut b = BytesMut::from(&b"*1\r\n$-5\r\n"[..]);
    assert!(parse(&mut b, &Limits::default()).is_err());
    let mut b = BytesMut::from(&b"*1\r\n+a\r\n"[..]);
    assert!(parse(&mut b, &Limits::default()).is_err());
    assert!(split_args(b"\"abc").is_none());
}

fn outcome(s: &[u8]) -> Result<Vec<Vec<Bytes>>, String> {
    let mut b = BytesMut::from(s);
    let mut v = Vec::new();
    loop {
        match parse(&mut b, &Limits::default()) {
            Ok(Parsed::Command(c)) => v.push(c),
            Ok(Parsed::Incomplete) => return Ok(v),
            Err(e) => return Err(e.0),
        }
    }
}

#[test]
fn multibulk_lines_end_at_the_carriage_return_as_in_redis() {
    let ping = || Ok(vec![vec![Bytes::from("PING")]]);
    // A bare line feed does not end a header: "*12\n" used to read as 1.
    let bad_count = Err("ERR Protocol error: invalid multibulk length".to_string());
    assert_eq!(outcome(b"*12\n$4\r\nPING\r\n"), bad_count);
    let bad_len = Err("ERR Protocol error: invalid bulk length".to_string());
    assert_eq!(outcome(b"*1\r\n$4\nPING\r\n"), bad_len);
    // The byte after the carriage return is skipped unread, like the
    // two after a bulk.
    assert_eq!(outcome(b"*1\rX$4\r\nPING\r\n"), ping());
    assert_eq!(outcome(b"*1\r\n$4\r\nPINGxx"), ping());
    // A header is complete only with that byte.
    assert_eq!(outcome(b"*1\r"), Ok(vec![]));
    assert_eq!(outcome(b"*1\r\n$4\r"), Ok(vec![]));
}

#[test]
fn lengths_follow_string2ll() {
    let bad_count = Err("ERR Protocol error: invalid multibulk length".to_string());
    let bad_len = Err("ERR Protocol error: invalid bulk length".to_string());
    assert_eq!(outcome(b"*01\r\n$4\r\nPING\r\n"), bad_count);
    assert_eq!(outcome(b"*+1\r\n$4\r\nPING\r\n"), bad_count);
    assert_eq!(outcome(b"*-0\r\n"), bad_count);
    assert_eq!(outcome(b"*1\r\n$04\r\nPING\r\n"), bad_len);
    assert_eq!(outcome(b"*1\r\n$ 4\r\nPING\r\n"), bad_len);
    assert_eq!(
        outcome(b"*-5\r\nPING\r\n"),
        Ok(vec![vec![], vec![Bytes::from("PING")]])
    );
}

#[test]
fn the_plain_header_path_reads_as_the_general_one() {
    let cases: &[&[u8]] = &[
        b"$1\r\n",
        b"$12\r\n",
        b"$0\r\n",
        b"$01\r\n",
        b"$1\r",
        b"$1",
        b"$",
        b"$-1\r\n",
        b"$+1\r\n",
        b"$1 \r\n",
        b"$123456789012345678\r\n",
        b"$1234567890123456789\r\n",
        b"*1\r\n",
        b"$9\rX",
        b"$1\n\r\n",
    ];
    for c in cases {
        let general = header_end(c, 0, 1024, "too big")
            .ok()
            .flatten()
            .filter(|_| c[0] == b'$')
            .and_then(|cr| Some((cr, usize::try_from(header_int(&c[1..cr])?).ok()?)));
        if let Some(fast) = plain_bulk_header(c, 0) {
            assert_eq!(Some(fast), general, "{:?}", String::from_utf8_lossy(c));
        }
    }
    assert_eq!(plain_bulk_header(b"$12\r\n", 0), Some((3, 12)));
    assert_eq!(
        plain_bulk_header(b"$12\r", 0),
        None,
        "the byte after \\r is needed"
    );
}

#[test]
fn header_numbers_read_as_string2ll_does() {
    let cases: &[&[u8]] = &[
        b"0",
        b"1",
        b"7",
        b"10",
        b"042",
        b"-1",
        b"-0",
        b"+5",
        b" 5",
        b"5 ",
        b"",
        b"x",
        b"123456789012345678",
        b"1234567890123456789",
        b"9223372036854775807",
        b"9223372036854775808",
        b"99999999999999999999",
        b"1a",
    ];
    for c in cases {
        assert_eq!(
            header_int(c),
            parse_i64(c),
            "{:?}",
            String::from_utf8_lossy(c)
        );
    }
}

#[test]
fn a_request_buffer_is_reused() {
    let b = &b"*2\r\n$3\r\nGET\r\n$1\r\na\r\n*1\r\n$4\r\nPING\r\n*0\r\n"[..];
    let mut req = Request::default();
    let lim = Limits::default();
    let mut views = req.lend_views();
    let mut at = 0;
    let mut seen = Vec::new();
    while let Ok(Some(len)) = req.parse(&b[at..], &lim) {
        views.clear();
        req.args(&b[at..], &mut views);
        seen.push(views.clone());
        at += len;
    }
    assert_eq!(at, b.len());
    let want: Vec<Vec<&[u8]>> = vec![vec![b"GET", b"a"], vec![b"PING"], vec![]];
    assert_eq!(seen, want);
    let room = views.capacity();
    req.return_views(views);
    assert_eq!(req.lend_views().capacity(), room, "the room is kept");
}

#[test]
fn a_long_request_arriving_in_pieces_is_read_once() {
    // 2,000 arguments of varied lengths, then a second request.
    let args: Vec<Vec<u8>> = (0..2000)
        .map(|i| format!("a{}", "x".repeat(i % 37)).into_bytes())
        .collect();
    let mut whole = format!("*{}\r\n", args.len()).into_bytes();
    for a in &args {
        whole.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        whole.extend_from_slice(a);
        whole.extend_from_slice(b"\r\n");
    }
    let first_len = whole.len();
    whole.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
    let lim = Limits::default();
    let mut req = Request::default();
    // Every prefix, one byte more each time, with the same parser: only
    // the whole request completes, and it reads as the whole.
    for end in 0..first_len {
        assert_eq!(req.parse(&whole[..end], &lim), Ok(None), "prefix {end}");
    }
    assert_eq!(req.parse(&whole, &lim), Ok(Some(first_len)));
    let mut views = Vec::new();
    req.args(&whole, &mut views);
    let want: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
    assert_eq!(views, want);
    // The next request starts afresh.
    let rest = &whole[first_len..];
    assert_eq!(req.parse(rest, &lim), Ok(Some(rest.len())));
    views.clear();
    req.args(rest, &mut views);
    assert_eq!(views, vec![&b"PING"[..]]);
}

#[test]
fn counts_up_to_a_c_int_are_accepted() {
    let lim = Limits::default();
    let mut req = Request::default();
    assert_eq!(req.parse(b"*2147483647\r\n$1\r\na\r\n", &lim), Ok(None));
    let mut req = Request::default();
    assert!(req.parse(b"*2147483648\r\n", &lim).is_err());
}
