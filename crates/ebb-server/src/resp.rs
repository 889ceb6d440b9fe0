//! RESP2/RESP3 wire format: request parsing (multibulk and inline) and
//! reply encoding.

use bytes::{BufMut, Bytes, BytesMut};
use ebb_core::reply::{format_double, Reply};

/// Limits the parser enforces, with Redis's errors.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// `proto-max-bulk-len`.
    pub max_bulk_len: u64,
    /// Largest inline request without a newline.
    pub max_inline: usize,
    /// Largest multibulk count.
    pub max_multibulk: i64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bulk_len: 512 * 1024 * 1024,
            max_inline: 64 * 1024,
            max_multibulk: 1024 * 1024,
        }
    }
}

/// A protocol error: the text is sent and the connection closed, as Redis does.
#[derive(Debug, Clone, PartialEq)]
pub struct ProtoError(pub String);

/// Outcome of trying to parse one request from the buffer.
pub enum Parsed {
    /// A complete command (possibly empty for blank lines / `*0`).
    Command(Vec<Bytes>),
    /// Need more bytes.
    Incomplete,
}

fn find_crlf(buf: &[u8], from: usize) -> Option<usize> {
    memchr_newline(&buf[from..]).map(|i| from + i)
}

fn memchr_newline(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

fn parse_len(line: &[u8]) -> Option<i64> {
    if line.is_empty() || line.len() > 20 {
        return None;
    }
    let (neg, d) = if line[0] == b'-' {
        (true, &line[1..])
    } else {
        (false, line)
    };
    if d.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    for &c in d {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as i64)?;
    }
    Some(if neg { -v } else { v })
}

/// Parses one request from the front of `buf`, consuming it when complete.
pub fn parse(buf: &mut BytesMut, lim: &Limits) -> Result<Parsed, ProtoError> {
    if buf.is_empty() {
        return Ok(Parsed::Incomplete);
    }
    if buf[0] == b'*' {
        parse_multibulk(buf, lim)
    } else {
        parse_inline(buf, lim)
    }
}

fn parse_multibulk(buf: &mut BytesMut, lim: &Limits) -> Result<Parsed, ProtoError> {
    let Some(nl) = find_crlf(buf, 0) else {
        if buf.len() > lim.max_inline {
            return Err(ProtoError(
                "ERR Protocol error: too big mbulk count string".into(),
            ));
        }
        return Ok(Parsed::Incomplete);
    };
    let line = &buf[1..nl.saturating_sub(1).max(1)];
    let line = if nl >= 1 && buf[nl - 1] == b'\r' {
        &buf[1..nl - 1]
    } else {
        line
    };
    let count = match parse_len(line) {
        Some(n) if n <= lim.max_multibulk => n,
        _ => {
            return Err(ProtoError(
                "ERR Protocol error: invalid multibulk length".into(),
            ))
        }
    };
    let mut pos = nl + 1;
    if count <= 0 {
        let _ = buf.split_to(pos);
        return Ok(Parsed::Command(Vec::new()));
    }
    let mut spans = Vec::with_capacity(count as usize);
    for _ in 0..count {
        if pos >= buf.len() {
            return Ok(Parsed::Incomplete);
        }
        if buf[pos] != b'$' {
            return Err(ProtoError(format!(
                "ERR Protocol error: expected '$', got '{}'",
                buf[pos] as char
            )));
        }
        let Some(nl) = find_crlf(buf, pos) else {
            if buf.len() - pos > lim.max_inline {
                return Err(ProtoError(
                    "ERR Protocol error: too big bulk count string".into(),
                ));
            }
            return Ok(Parsed::Incomplete);
        };
        let end = if buf[nl - 1] == b'\r' { nl - 1 } else { nl };
        let len = match parse_len(&buf[pos + 1..end]) {
            Some(n) if n >= 0 && (n as u64) <= lim.max_bulk_len => n as usize,
            _ => return Err(ProtoError("ERR Protocol error: invalid bulk length".into())),
        };
        let start = nl + 1;
        if buf.len() < start + len + 2 {
            return Ok(Parsed::Incomplete);
        }
        spans.push((start, start + len));
        pos = start + len + 2;
    }
    let frame = buf.split_to(pos).freeze();
    Ok(Parsed::Command(
        spans.into_iter().map(|(s, e)| frame.slice(s..e)).collect(),
    ))
}

fn parse_inline(buf: &mut BytesMut, lim: &Limits) -> Result<Parsed, ProtoError> {
    let Some(nl) = find_crlf(buf, 0) else {
        if buf.len() > lim.max_inline {
            return Err(ProtoError(
                "ERR Protocol error: too big inline request".into(),
            ));
        }
        return Ok(Parsed::Incomplete);
    };
    let line = buf.split_to(nl + 1);
    let mut l = &line[..nl];
    if l.last() == Some(&b'\r') {
        l = &l[..l.len() - 1];
    }
    match split_args(l) {
        Some(args) => Ok(Parsed::Command(args)),
        None => Err(ProtoError(
            "ERR Protocol error: unbalanced quotes in request".into(),
        )),
    }
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Splits an inline request like Redis's `sdssplitargs` (quotes, escapes).
pub fn split_args(line: &[u8]) -> Option<Vec<Bytes>> {
    let mut out = Vec::new();
    let mut i = 0;
    let n = line.len();
    loop {
        while i < n && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= n {
            return Some(out);
        }
        let mut cur = Vec::new();
        let mut inq = false;
        let mut insq = false;
        loop {
            if inq {
                if i >= n {
                    return None;
                }
                if line[i] == b'\\' && i + 3 < n && line[i + 1] == b'x' {
                    if let (Some(a), Some(b)) = (hex(line[i + 2]), hex(line[i + 3])) {
                        cur.push(a * 16 + b);
                        i += 4;
                        continue;
                    }
                }
                if line[i] == b'\\' && i + 1 < n {
                    let c = match line[i + 1] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        c => c,
                    };
                    cur.push(c);
                    i += 2;
                    continue;
                }
                if line[i] == b'"' {
                    if i + 1 < n && !line[i + 1].is_ascii_whitespace() {
                        return None;
                    }
                    i += 1;
                    break;
                }
                cur.push(line[i]);
                i += 1;
            } else if insq {
                if i >= n {
                    return None;
                }
                if line[i] == b'\\' && i + 1 < n && line[i + 1] == b'\'' {
                    cur.push(b'\'');
                    i += 2;
                    continue;
                }
                if line[i] == b'\'' {
                    if i + 1 < n && !line[i + 1].is_ascii_whitespace() {
                        return None;
                    }
                    i += 1;
                    break;
                }
                cur.push(line[i]);
                i += 1;
            } else {
                if i >= n || line[i].is_ascii_whitespace() {
                    break;
                }
                match line[i] {
                    b'"' => inq = true,
                    b'\'' => insq = true,
                    c => cur.push(c),
                }
                i += 1;
            }
        }
        out.push(Bytes::from(cur));
    }
}

fn put_int(out: &mut BytesMut, prefix: u8, n: i64) {
    out.put_u8(prefix);
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

fn put_bulk(out: &mut BytesMut, b: &[u8]) {
    put_int(out, b'$', b.len() as i64);
    out.extend_from_slice(b);
    out.extend_from_slice(b"\r\n");
}

fn put_line(out: &mut BytesMut, prefix: u8, s: &str) {
    out.put_u8(prefix);
    out.extend_from_slice(s.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Encodes a reply for a RESP2 (`resp3 == false`) or RESP3 client.
pub fn encode(r: &Reply, resp3: bool, out: &mut BytesMut) {
    match r {
        Reply::Ok => out.extend_from_slice(b"+OK\r\n"),
        Reply::Simple(s) => put_line(out, b'+', s),
        Reply::Error(e) => {
            // Errors never carry newlines on the wire.
            out.put_u8(b'-');
            for c in e.bytes() {
                out.put_u8(if c == b'\r' || c == b'\n' { b' ' } else { c });
            }
            out.extend_from_slice(b"\r\n");
        }
        Reply::Int(n) => put_int(out, b':', *n),
        Reply::Bulk(b) => put_bulk(out, b),
        Reply::Nil => out.extend_from_slice(if resp3 { b"_\r\n" } else { b"$-1\r\n" }),
        Reply::NilArray => out.extend_from_slice(if resp3 { b"_\r\n" } else { b"*-1\r\n" }),
        Reply::Array(items) => {
            put_int(out, b'*', items.len() as i64);
            for i in items {
                encode(i, resp3, out);
            }
        }
        Reply::Set(items) => {
            put_int(out, if resp3 { b'~' } else { b'*' }, items.len() as i64);
            for i in items {
                encode(i, resp3, out);
            }
        }
        Reply::Map(pairs) => {
            if resp3 {
                put_int(out, b'%', pairs.len() as i64);
            } else {
                put_int(out, b'*', 2 * pairs.len() as i64);
            }
            for (k, v) in pairs {
                encode(k, resp3, out);
                encode(v, resp3, out);
            }
        }
        Reply::Double(d) => {
            let s = format_double(*d);
            if resp3 {
                put_line(out, b',', &s);
            } else {
                put_bulk(out, s.as_bytes());
            }
        }
        Reply::Bool(b) => {
            if resp3 {
                out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" });
            } else {
                out.extend_from_slice(if *b { b":1\r\n" } else { b":0\r\n" });
            }
        }
        Reply::Verbatim(b) => {
            if resp3 {
                put_int(out, b'=', b.len() as i64 + 4);
                out.extend_from_slice(b"txt:");
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            } else {
                put_bulk(out, b);
            }
        }
    }
}

/// Encodes a pub/sub message: a RESP3 push or a RESP2 array of bulks.
pub fn encode_push(items: &[Bytes], resp3: bool, out: &mut BytesMut) {
    put_int(out, if resp3 { b'>' } else { b'*' }, items.len() as i64);
    for i in items {
        put_bulk(out, i);
    }
}

/// Encodes a subscription confirmation: kind, channel (or nil), count.
pub fn encode_sub_reply(
    kind: &[u8],
    channel: Option<&[u8]>,
    count: i64,
    resp3: bool,
    out: &mut BytesMut,
) {
    put_int(out, if resp3 { b'>' } else { b'*' }, 3);
    put_bulk(out, kind);
    match channel {
        Some(c) => put_bulk(out, c),
        None => out.extend_from_slice(if resp3 { b"_\r\n" } else { b"$-1\r\n" }),
    }
    put_int(out, b':', count);
}

#[cfg(test)]
mod tests {
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
}
