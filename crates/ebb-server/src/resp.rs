//! RESP2/RESP3 wire format: request parsing (multibulk and inline) and
//! reply encoding.

use bytes::{BufMut, Bytes, BytesMut};
use ebb_core::args::parse_i64;
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
    /// The connection has not authenticated yet (AUTH is required): at
    /// most 10 arguments of at most 16 KB each, as in Redis.
    pub unauthenticated: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bulk_len: 512 * 1024 * 1024,
            max_inline: 64 * 1024,
            // Redis 7.0's bound: any count that fits a C int.
            max_multibulk: i32::MAX as i64,
            unauthenticated: false,
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

fn find_byte(buf: &[u8], from: usize, byte: u8) -> Option<usize> {
    buf[from..]
        .iter()
        .position(|&c| c == byte)
        .map(|i| from + i)
}

/// A header number (`*<count>`, `$<len>`) with Redis's string2ll rules:
/// plain short digit strings, by far the common case, are read directly.
fn header_int(b: &[u8]) -> Option<i64> {
    if !b.is_empty() && b.len() <= 18 && b[0] != b'0' && b.iter().all(u8::is_ascii_digit) {
        return Some(b.iter().fold(0i64, |n, &c| n * 10 + (c - b'0') as i64));
    }
    parse_i64(b)
}

/// Where the header line starting at `from` ends, as Redis finds it in a
/// multibulk request: at the first `\r`, with one more byte (the `\n`,
/// which is skipped unread) already received. `Ok(None)`: not complete yet.
fn header_end(
    buf: &[u8],
    from: usize,
    max: usize,
    too_big: &str,
) -> Result<Option<usize>, ProtoError> {
    match find_byte(buf, from, b'\r') {
        Some(cr) if cr + 1 < buf.len() => Ok(Some(cr)),
        Some(_) => Ok(None),
        None if buf.len() - from > max => Err(ProtoError(too_big.into())),
        None => Ok(None),
    }
}

/// What [`peek_request`] sees of a complete request waiting in a pipeline.
#[derive(Debug, PartialEq, Eq)]
pub struct Peeked<'a> {
    /// The first [`PEEKED`] arguments (command name first).
    pub args: [Option<&'a [u8]>; PEEKED],
    /// The last argument.
    pub last: Option<&'a [u8]>,
    /// The request's length in bytes.
    pub len: usize,
}

/// The complete multibulk request at the front of `buf`, as far as
/// prefetching needs it: requests waiting in a pipeline are looked at ahead
/// of time, so that their keys and members can be loaded. Reads only;
/// `None` for an incomplete, inline or malformed request (the parser will
/// say what is wrong with it).
pub fn peek_request(buf: &[u8]) -> Option<Peeked<'_>> {
    fn header(buf: &[u8], at: usize, sigil: u8) -> Option<(usize, usize)> {
        if *buf.get(at)? != sigil {
            return None;
        }
        let cr = find_byte(&buf[..buf.len().min(at + 24)], at, b'\r')?;
        let n = usize::try_from(header_int(&buf[at + 1..cr])?).ok()?;
        Some((n, cr + 2))
    }
    let mut args = [None; PEEKED];
    let mut last = None;
    let (count, mut at) = header(buf, 0, b'*')?;
    for i in 0..count {
        let (len, start) = header(buf, at, b'$')?;
        let end = start.checked_add(len)?;
        let arg = buf.get(start..end)?;
        if let Some(slot) = args.get_mut(i) {
            *slot = Some(arg);
        }
        last = Some(arg);
        at = end.checked_add(2)?;
    }
    (at <= buf.len()).then_some(Peeked {
        args,
        last,
        len: at,
    })
}

/// Leading arguments [`peek_request`] returns: name, key, third.
pub const PEEKED: usize = 3;

/// Parses one request from the front of `buf`, consuming it when complete.
pub fn parse(buf: &mut BytesMut, lim: &Limits) -> Result<Parsed, ProtoError> {
    let mut req = Request::default();
    let Some(len) = req.parse(buf, lim)? else {
        return Ok(Parsed::Incomplete);
    };
    let frame = buf.split_to(len).freeze();
    Ok(Parsed::Command(match req.inline.take() {
        Some(args) => args,
        None => req.spans.iter().map(|&(s, e)| frame.slice(s..e)).collect(),
    }))
}

/// A reusable request parser: parsing many requests in a row through one
/// `Request` allocates nothing per request once its vectors have grown.
/// A request's arguments are not copied out of the read buffer: they are
/// read in place, as slices of it, for as long as the request runs.
#[derive(Debug, Default)]
pub struct Request {
    /// Where the last multibulk request's arguments lie in the buffer.
    spans: Vec<(usize, usize)>,
    /// The last request's arguments when it was inline (quotes and escapes
    /// undone, so they are owned).
    pub inline: Option<Vec<Bytes>>,
    /// Room for the argument slices of a batch, lent out by
    /// [`Request::lend_views`]; always empty here.
    views: Vec<&'static [u8]>,
    /// Where the reading of an incomplete multibulk request stopped (just
    /// after its last whole argument, whose places are in `spans`): the
    /// next call, on the same request with more bytes, goes on from there
    /// rather than reading every argument again.
    resume: Option<usize>,
    /// Bytes of the arguments in `spans` an incomplete request has so far
    /// (counted as they come, for [`Request::partial`]).
    argv_bytes: usize,
}

/// Where an incomplete request stands, as CLIENT LIST shows it and as
/// the read buffer makes room for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Partial {
    /// Bytes not yet taken as arguments (Redis's query buffer then holds
    /// these: the arguments read so far have left it).
    pub unread: usize,
    /// Bytes of the arguments read so far.
    pub argv: usize,
    /// Where the argument being received ends (after its `\r\n`), once its
    /// header is read.
    pub arg_end: Option<usize>,
}

impl Request {
    /// Lets go of the room a very long request left behind (Redis likewise
    /// shrinks an idle client's query buffer).
    pub fn shrink(&mut self) {
        const KEEP: usize = 1024;
        if self.spans.capacity() > KEEP {
            self.spans = Vec::new();
        }
        if self.views.capacity() > KEEP {
            self.views = Vec::new();
        }
    }

    /// Parses the request at the front of `buf` without consuming it:
    /// its length when it is complete (its arguments are then
    /// [`Request::args`]), None when more bytes are needed.
    pub fn parse(&mut self, buf: &[u8], lim: &Limits) -> Result<Option<usize>, ProtoError> {
        self.inline = None;
        let resume = self
            .resume
            .take()
            .filter(|&p| p <= buf.len() && buf.first() == Some(&b'*'));
        if resume.is_none() {
            self.argv_bytes = 0;
            self.spans.clear();
            if self.spans.capacity() > 1024 {
                // Do not keep the room a huge request needed.
                self.spans = Vec::new();
            }
        }
        if buf.is_empty() {
            return Ok(None);
        }
        if buf[0] == b'*' {
            let mut before = if resume.is_some() {
                self.spans.len()
            } else {
                0
            };
            let r = parse_multibulk(buf, lim, &mut self.spans, resume);
            if let Ok(Err(at)) = r {
                self.resume = Some(at);
                if before > self.spans.len() {
                    before = 0;
                    self.argv_bytes = 0;
                }
                let new = self.spans.get(before..).unwrap_or_default();
                self.argv_bytes += new.iter().map(|&(s, e)| e - s).sum::<usize>();
                return Ok(None);
            }
            r.map(|done| done.ok())
        } else {
            let Some((len, args)) = parse_inline(buf, lim)? else {
                return Ok(None);
            };
            self.inline = Some(args);
            Ok(Some(len))
        }
    }

    /// Where the incomplete request at the front of `buf` stands, after
    /// [`Request::parse`] found it incomplete.
    pub fn partial(&self, buf: &[u8]) -> Partial {
        let Some(pos) = self.resume.filter(|&p| p > 0 && p <= buf.len()) else {
            return Partial {
                unread: buf.len(),
                ..Partial::default()
            };
        };
        let argv = self.argv_bytes;
        let header = find_byte(buf, pos, b'\r')
            .filter(|&cr| cr + 1 < buf.len() && buf[pos] == b'$')
            .and_then(|cr| {
                Some((
                    cr + 2,
                    usize::try_from(header_int(&buf[pos + 1..cr])?).ok()?,
                ))
            });
        match header {
            Some((start, len)) => Partial {
                unread: buf.len() - start,
                argv,
                arg_end: start.checked_add(len).and_then(|e| e.checked_add(2)),
            },
            None => Partial {
                unread: buf.len() - pos,
                argv,
                arg_end: None,
            },
        }
    }

    /// The arguments of the multibulk request just parsed from `buf`,
    /// appended to `out` (nothing for an inline request: see
    /// [`Request::inline`]).
    pub fn args<'a>(&self, buf: &'a [u8], out: &mut Vec<&'a [u8]>) {
        out.extend(self.spans.iter().map(|&(s, e)| &buf[s..e]));
    }

    /// An empty vector for a batch's argument slices, with the room the
    /// last batch left.
    pub fn lend_views<'a>(&mut self) -> Vec<&'a [u8]> {
        // Empty, so nothing is converted: the allocation is reused as is.
        std::mem::take(&mut self.views)
            .into_iter()
            .map(|v| -> &'a [u8] { v })
            .collect()
    }

    /// Takes back the vector [`Request::lend_views`] lent.
    pub fn return_views(&mut self, mut views: Vec<&[u8]>) {
        views.clear();
        self.views = views
            .into_iter()
            .map(|_| -> &'static [u8] { b"" })
            .collect();
    }
}

/// Redis's limits for a connection that has not authenticated yet.
const UNAUTH_MAX_ARGS: i64 = 10;
const UNAUTH_MAX_BULK: usize = 16384;

/// Reads the multibulk request at the front of `buf`: `Ok(Ok(len))` when
/// it is complete, `Ok(Err(at))` when more bytes are needed, `at` being
/// where reading may go on (`resume`, with the arguments read so far in
/// `spans`).
fn parse_multibulk(
    buf: &[u8],
    lim: &Limits,
    spans: &mut Vec<(usize, usize)>,
    resume: Option<usize>,
) -> Result<Result<usize, usize>, ProtoError> {
    let too_big = "ERR Protocol error: too big mbulk count string";
    let Some(cr) = header_end(buf, 0, lim.max_inline, too_big)? else {
        return Ok(Err(0));
    };
    let count = match header_int(&buf[1..cr]) {
        Some(n) if n <= lim.max_multibulk => n,
        _ => {
            return Err(ProtoError(
                "ERR Protocol error: invalid multibulk length".into(),
            ))
        }
    };
    if lim.unauthenticated && count > UNAUTH_MAX_ARGS {
        return Err(ProtoError(
            "ERR Protocol error: unauthenticated multibulk length".into(),
        ));
    }
    let mut pos = cr + 2;
    if count <= 0 {
        return Ok(Ok(pos));
    }
    let done = match resume {
        Some(at) if at > 0 => {
            pos = at;
            spans.len() as i64
        }
        _ => {
            spans.clear();
            0
        }
    };
    // The count is the client's word: grow as arguments actually arrive.
    for _ in done..count {
        if pos >= buf.len() {
            return Ok(Err(pos));
        }
        let (cr, len) = match plain_bulk_header(buf, pos) {
            Some((cr, n)) if (n as u64) <= lim.max_bulk_len => (cr, n),
            Some(_) => return Err(ProtoError("ERR Protocol error: invalid bulk length".into())),
            None => {
                let too_big = "ERR Protocol error: too big bulk count string";
                let Some(cr) = header_end(buf, pos, lim.max_inline, too_big)? else {
                    return Ok(Err(pos));
                };
                if buf[pos] != b'$' {
                    return Err(ProtoError(format!(
                        "ERR Protocol error: expected '$', got '{}'",
                        buf[pos] as char
                    )));
                }
                match header_int(&buf[pos + 1..cr]) {
                    Some(n) if n >= 0 && (n as u64) <= lim.max_bulk_len => (cr, n as usize),
                    _ => return Err(ProtoError("ERR Protocol error: invalid bulk length".into())),
                }
            }
        };
        if lim.unauthenticated && len > UNAUTH_MAX_BULK {
            return Err(ProtoError(
                "ERR Protocol error: unauthenticated bulk length".into(),
            ));
        }
        let start = cr + 2;
        if buf.len() < start + len + 2 {
            return Ok(Err(pos));
        }
        spans.push((start, start + len));
        pos = start + len + 2;
    }
    Ok(Ok(pos))
}

/// The usual bulk header at `pos`, read in one pass: `$`, a length of 1
/// to 18 digits with no leading zero, and `\r` with a byte after it.
/// Returns where the `\r` is and the length; None for anything else (an
/// incomplete or unusual header), which the general path reads, and
/// reads the same way when it is this form.
#[inline]
fn plain_bulk_header(buf: &[u8], pos: usize) -> Option<(usize, usize)> {
    if buf[pos] != b'$' {
        return None;
    }
    let digits = buf.get(pos + 1..)?;
    let first = *digits.first()?;
    if !(b'1'..=b'9').contains(&first) {
        return None;
    }
    let mut n = (first - b'0') as usize;
    let mut i = 1;
    while i < digits.len() && i < 18 && digits[i].is_ascii_digit() {
        n = n * 10 + (digits[i] - b'0') as usize;
        i += 1;
    }
    (i + 1 < digits.len() && digits[i] == b'\r').then_some((pos + 1 + i, n))
}

/// An inline request at the front of `buf`: its length with the line end,
/// and its arguments.
fn parse_inline(buf: &[u8], lim: &Limits) -> Result<Option<(usize, Vec<Bytes>)>, ProtoError> {
    let Some(nl) = find_byte(buf, 0, b'\n') else {
        if buf.len() > lim.max_inline {
            return Err(ProtoError(
                "ERR Protocol error: too big inline request".into(),
            ));
        }
        return Ok(None);
    };
    let mut l = &buf[..nl];
    if l.last() == Some(&b'\r') {
        l = &l[..l.len() - 1];
    }
    match split_args(l) {
        Some(args) => Ok(Some((nl + 1, args))),
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

pub(crate) fn put_int(out: &mut BytesMut, prefix: u8, n: i64) {
    out.put_u8(prefix);
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

pub(crate) fn put_bulk(out: &mut BytesMut, b: &[u8]) {
    if b.len() < 10 {
        // One-digit length: the header in one write.
        out.extend_from_slice(&[b'$', b'0' + b.len() as u8, b'\r', b'\n']);
    } else {
        put_int(out, b'$', b.len() as i64);
    }
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
            // Errors never carry newlines on the wire: as Redis does, those
            // at the end go, those inside become spaces.
            out.put_u8(b'-');
            for c in e.trim_end_matches(['\r', '\n']).bytes() {
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
        Reply::BigNumber(n) => {
            if resp3 {
                out.put_u8(b'(');
                out.extend_from_slice(n);
                out.extend_from_slice(b"\r\n");
            } else {
                put_bulk(out, n);
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
        Reply::Bulks(list) => {
            if resp3 && list.is_pairs() {
                put_int(out, b'%', list.len() as i64 / 2);
            } else {
                put_int(out, b'*', list.len() as i64);
            }
            // Room for every element and its header at once.
            out.reserve(list.bytes() + list.len() * 8);
            for b in list.iter_opt() {
                match b {
                    Some(b) => put_bulk(out, b),
                    None => encode(&Reply::Nil, resp3, out),
                }
            }
        }
        Reply::Verbatim(b) => put_verbatim(out, b"txt", b, resp3),
        Reply::VerbatimAs(format, b) => put_verbatim(out, format, b, resp3),
    }
}

/// Writes verbatim text: `=` with its three-byte format in RESP3, a bulk
/// string in RESP2.
fn put_verbatim(out: &mut BytesMut, format: &[u8; 3], text: &[u8], resp3: bool) {
    if resp3 {
        put_int(out, b'=', text.len() as i64 + 4);
        out.extend_from_slice(format);
        out.extend_from_slice(b":");
        out.extend_from_slice(text);
        out.extend_from_slice(b"\r\n");
    } else {
        put_bulk(out, text);
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
mod props;

#[cfg(test)]
mod tests;
