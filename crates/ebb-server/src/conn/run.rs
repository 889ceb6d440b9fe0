//! The connection's loop: run what was read, write what the client takes
//! at once, and wait for whichever comes next: more requests, room to
//! write the rest, a message for the client, CLIENT KILL. Replies a slow
//! reader leaves waiting do not stop the connection reading and running
//! its requests (as in Redis): they wait in the reply buffer, where they
//! count in the client's memory (client eviction) and against the output
//! buffer limits.

use bytes::{Buf, Bytes, BytesMut};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc::UnboundedReceiver;

use super::{Flow, Session, BUF, IDLE_FREE_MS, TRIM_ABOVE, UNAUTH_MAX_OUTPUT};
use crate::resp::{self, Limits, Request};
use crate::server::{now_ms, ClientEntry, Msg};

/// Whether idle connections give back their reply buffers (DEBUG
/// REPLYBUFFER RESIZING, for tests that compare clients' memory).
static REPLY_BUFFER_RESIZING: AtomicBool = AtomicBool::new(true);

/// DEBUG REPLYBUFFER RESIZING <0|1>.
pub fn set_reply_buffer_resizing(on: bool) {
    REPLY_BUFFER_RESIZING.store(on, Ordering::Relaxed);
}

/// Redis's default time between reply buffer peak resets.
const DEFAULT_PEAK_RESET_MS: i64 = 5000;

/// Time between reply buffer peak resets (ms; -1: never).
static PEAK_RESET_MS: AtomicI64 = AtomicI64::new(DEFAULT_PEAK_RESET_MS);

/// DEBUG REPLYBUFFER PEAK-RESET-TIME: `Some(ms)` (negative: never), or
/// None for the default.
pub fn set_peak_reset_time(ms: Option<i64>) {
    PEAK_RESET_MS.store(ms.unwrap_or(DEFAULT_PEAK_RESET_MS), Ordering::Relaxed);
}

/// Smallest room a reply buffer is resized to (Redis's `PROTO_REPLY_MIN_BYTES`).
const REPLY_MIN: usize = 1024;

/// The room a reply buffer of `room` bytes should be resized to, given
/// the most it held since the last peak reset, as Redis 7.0 resizes a
/// client's fixed reply buffer: down to just above the peak when the
/// peak stays under half the room, up (to at most [`BUF`]) when replies
/// filled it. None: as it is, or resizing is off.
pub fn reply_room_wanted(room: usize, peak: usize) -> Option<usize> {
    if !REPLY_BUFFER_RESIZING.load(Ordering::Relaxed) {
        return None;
    }
    if room / 2 >= REPLY_MIN && peak < room / 2 {
        Some(REPLY_MIN.max(peak + 1))
    } else if room < BUF && peak >= room {
        Some(BUF.min((peak + 1).next_power_of_two()))
    } else {
        None
    }
}

/// Starts a new peak for the client's reply buffer once the reset time
/// has passed since the last (the client-buffer cron, after it judged
/// the old one).
pub fn reset_reply_peak(entry: &ClientEntry, now: u64) {
    let every = PEAK_RESET_MS.load(Ordering::Relaxed);
    let last = entry.peak_reset_at.load(Ordering::Relaxed);
    if every >= 0 && now.saturating_sub(last) >= every as u64 {
        entry
            .reply_peak
            .store(entry.unsent.load(Ordering::Relaxed), Ordering::Relaxed);
        entry.peak_reset_at.store(now, Ordering::Relaxed);
    }
}

/// Arguments this long are given exactly the room they need as soon as
/// their header is read (Redis's `PROTO_MBULK_BIG_ARG`), rather than a
/// buffer doubled until they fit.
const BIG_ARG: usize = 32 * 1024;

/// What one wait on the stream brought.
enum Io {
    Read(usize),
    Wrote(usize),
}

/// Waits until the stream takes some of `out` (when it holds anything) or
/// gives more bytes into `rbuf`, whichever comes first.
fn io_step<'a, S: AsyncRead + AsyncWrite + Unpin>(
    stream: &'a mut S,
    rbuf: &'a mut BytesMut,
    out: &'a [u8],
) -> impl Future<Output = std::io::Result<Io>> + 'a {
    std::future::poll_fn(move |cx| {
        if !out.is_empty() {
            match Pin::new(&mut *stream).poll_write(cx, out) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()))
                }
                Poll::Ready(r) => return Poll::Ready(r.map(Io::Wrote)),
                Poll::Pending => {}
            }
        }
        let read = std::pin::pin!(stream.read_buf(&mut *rbuf));
        read.poll(cx).map(|r| r.map(Io::Read))
    })
}

/// Writes as much of `out` as the stream takes without waiting; returns
/// how much that was.
async fn write_now<S: AsyncWrite + Unpin>(stream: &mut S, out: &[u8]) -> std::io::Result<usize> {
    std::future::poll_fn(|cx| {
        let mut at = 0;
        while at < out.len() {
            match Pin::new(&mut *stream).poll_write(cx, &out[at..]) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()))
                }
                Poll::Ready(Ok(n)) => at += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => break,
            }
        }
        Poll::Ready(Ok(at))
    })
    .await
}

impl Session {
    pub(super) async fn run<S: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        stream: &mut S,
        rx: &mut UnboundedReceiver<Msg>,
    ) -> std::io::Result<()> {
        let mut rbuf = BytesMut::with_capacity(BUF);
        let mut out = BytesMut::with_capacity(BUF);
        let mut req = Request::default();
        // One handle each for the whole connection: cloning an Arc per batch
        // would bounce its counter between cores.
        let shared = self.shared.clone();
        let entry = self.entry.clone();
        // One wait for CLIENT KILL for the whole connection: registered
        // once, not on every read and write.
        let kill = entry.kill.notified();
        tokio::pin!(kill);
        // The client-buffer cron freed the buffer (it takes room again
        // when used), as opposed to a buffer read or written to its end.
        let mut rbuf_freed = false;
        let mut out_freed = false;
        // The room the reply buffer keeps (resized by the client-buffer
        // cron from the replies' peak, as Redis resizes its fixed buffer).
        let mut out_room = BUF;
        // When replies over the `normal` class's soft output limit have
        // waited too long.
        let mut soft_deadline: Option<tokio::time::Instant> = None;
        loop {
            // Run whatever complete requests are buffered.
            let limits = Limits {
                max_bulk_len: super::limits::max_bulk_len(),
                ..Limits::default()
            };
            let flow = self.process(&shared, &mut req, &mut rbuf, &mut out, &limits);
            self.publish_stats();
            // A connection that must still authenticate gets at most 1 KB
            // of replies waiting (Redis's limit): one that only sends
            // refused commands without reading is closed, not buffered.
            if !self.authenticated && out.len() > UNAUTH_MAX_OUTPUT {
                tracing::warn!(
                    id = self.id,
                    "unauthenticated client closed for overcoming the output buffer limit"
                );
                return Ok(());
            }
            // Acknowledged writes reach the AOF before their replies leave.
            self.shared.flush_aof();
            if !out.is_empty() {
                // In use again: it keeps a whole buffer's room.
                out_freed = false;
                note_peak(&entry, out.len());
                crate::figures::WRITES.fetch_add(1, Ordering::Relaxed);
                let n = write_now(stream, &out).await?;
                self.wrote(&mut out, n);
            }
            match flow {
                Flow::Close => {
                    self.write_rest(stream, &mut out, kill.as_mut()).await?;
                    return Ok(());
                }
                Flow::Block(waiter, deadline) => {
                    if !self.write_rest(stream, &mut out, kill.as_mut()).await? {
                        return Ok(());
                    }
                    self.entry.blocked.store(true, Ordering::Relaxed);
                    let r = self
                        .wait_unblocked(rx, waiter, deadline, stream, &mut rbuf, &mut out, &req)
                        .await;
                    self.entry.blocked.store(false, Ordering::Relaxed);
                    if !r? {
                        return Ok(());
                    }
                    continue;
                }
                Flow::Paused(argv) => {
                    if !self.write_rest(stream, &mut out, kill.as_mut()).await? {
                        return Ok(());
                    }
                    if !self.wait_pause(kill.as_mut()).await {
                        return Ok(());
                    }
                    self.start_batch();
                    let flow = {
                        let mut guard = None;
                        self.dispatch(&shared, &mut guard, &ebb_core::args::views(&argv), &mut out)
                    };
                    self.publish_stats();
                    self.shared.flush_aof();
                    if let Flow::Close = flow {
                        self.write_rest(stream, &mut out, kill.as_mut()).await?;
                        return Ok(());
                    }
                    if let Flow::Block(waiter, deadline) = flow {
                        if !self.write_rest(stream, &mut out, kill.as_mut()).await? {
                            return Ok(());
                        }
                        if !self
                            .wait_unblocked(rx, waiter, deadline, stream, &mut rbuf, &mut out, &req)
                            .await?
                        {
                            return Ok(());
                        }
                    }
                    continue;
                }
                Flow::Continue => {}
            }
            // A reply buffer that grew past its first room gives the rest
            // back once drained, as Redis frees the reply blocks beyond a
            // client's fixed 16 kB buffer once written (memory in use then
            // drops as soon as replies and messages are out, which
            // `maxmemory` eviction relies on); a read buffer waits for the
            // client-buffer cron (`Msg::Trim`), as Redis resizes query
            // buffers in its cron.
            if out.is_empty() {
                if out.capacity() > out_room {
                    out = BytesMut::with_capacity(out_room);
                } else if out.capacity() < out_room && !out_freed {
                    // Written to its end: the room before is taken back
                    // (in place, unless the buffer was freed and regrown
                    // smaller).
                    out.reserve(out_room);
                }
            }
            if !rbuf.is_empty() {
                make_room_for_argument(&req, &mut rbuf);
            } else if rbuf.capacity() < BUF && !rbuf_freed {
                // A drained read buffer takes back the room its consumed
                // requests used (in place: no request holds on to it), so
                // the next read has a whole buffer.
                rbuf.reserve(BUF);
            }
            if rbuf.len() > super::limits::query_buffer_limit() {
                tracing::warn!(
                    client = self.id,
                    "closing client that exceeded client-query-buffer-limit"
                );
                return Ok(());
            }
            // What the connection now holds is published (CLIENT LIST,
            // client eviction); over `maxmemory-clients`, the largest
            // clients are closed, perhaps this one.
            if !self.account(&rbuf, &out, &req) {
                return Ok(());
            }
            match crate::outbuf::normal_soft().filter(|_| !self.subscribed()) {
                Some((limit, window)) if out.len() > limit => {
                    soft_deadline.get_or_insert_with(|| tokio::time::Instant::now() + window);
                }
                _ => soft_deadline = None,
            }
            let idle_timeout = super::limits::idle_timeout_secs();
            let idle = async {
                if idle_timeout > 0 && !self.subscribed() {
                    tokio::time::sleep(Duration::from_secs(idle_timeout)).await
                } else {
                    std::future::pending::<()>().await
                }
            };
            let over_soft = async {
                match soft_deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                biased;
                _ = &mut kill => return Ok(()),
                m = rx.recv() => {
                    let Some(m) = m else { return Ok(()) };
                    let mut next = Some(m);
                    while let Some(m) = next {
                        match m {
                            Msg::Push(items) => self.push(&items, &mut out),
                            Msg::Kill => return Ok(()),
                            Msg::Unblocked(r) => self.reply(&r, &mut out),
                            Msg::Trim => {
                                let (r, o) = trim(&entry, &mut rbuf, &mut out, &mut out_room, &mut req);
                                rbuf_freed |= r;
                                out_freed |= o;
                            }
                            Msg::Tracking(n) => self.tracking_note(&n, &mut out),
                        }
                        next = rx.try_recv().ok();
                    }
                    note_peak(&entry, out.len());
                }
                io = io_step(stream, &mut rbuf, &out) => match io? {
                    Io::Read(0) => return Ok(()),
                    Io::Read(n) => {
                        // The first read after the buffer was freed got a
                        // small one: give the rest of the request room.
                        if std::mem::take(&mut rbuf_freed) {
                            rbuf.reserve(BUF);
                        }
                        self.shared.stats.net_in.fetch_add(n as u64, Ordering::Relaxed);
                        crate::figures::READS.fetch_add(1, Ordering::Relaxed);
                    }
                    Io::Wrote(n) => self.wrote(&mut out, n),
                },
                _ = over_soft => {
                    tracing::warn!(
                        client = self.id,
                        "client closed for overcoming of output buffer limits"
                    );
                    return Ok(());
                }
                _ = idle => return Ok(()),
            }
        }
    }

    /// Takes `n` written bytes off the front of the reply buffer.
    fn wrote(&self, out: &mut BytesMut, n: usize) {
        self.shared
            .stats
            .net_out
            .fetch_add(n as u64, Ordering::Relaxed);
        if n >= out.len() {
            out.clear();
        } else {
            out.advance(n);
        }
    }

    /// Writes every reply still waiting (before the connection closes,
    /// parks on a blocking command or waits out CLIENT PAUSE); false if
    /// CLIENT KILL came first.
    async fn write_rest<S: AsyncWrite + Unpin>(
        &self,
        stream: &mut S,
        out: &mut BytesMut,
        kill: Pin<&mut tokio::sync::futures::Notified<'_>>,
    ) -> std::io::Result<bool> {
        if out.is_empty() {
            return Ok(true);
        }
        tokio::select! {
            biased;
            r = stream.write_all(out) => r?,
            _ = kill => return Ok(false),
        }
        self.wrote(out, out.len());
        Ok(true)
    }

    /// Holds a command while CLIENT PAUSE lasts; false if the client was
    /// killed meanwhile. A paused client counts in INFO's
    /// `blocked_clients`, as in Redis.
    async fn wait_pause(&self, mut kill: Pin<&mut tokio::sync::futures::Notified<'_>>) -> bool {
        self.shared.paused_clients.fetch_add(1, Ordering::Relaxed);
        self.entry.blocked.store(true, Ordering::Relaxed);
        let mut alive = true;
        loop {
            let until = self.shared.paused_until.load(Ordering::Relaxed);
            let now = now_ms();
            if until <= now {
                break;
            }
            tokio::select! {
                biased;
                _ = kill.as_mut() => {
                    alive = false;
                    break;
                }
                _ = tokio::time::sleep(Duration::from_millis((until - now).min(50))) => {}
            }
        }
        self.entry.blocked.store(false, Ordering::Relaxed);
        self.shared.paused_clients.fetch_sub(1, Ordering::Relaxed);
        alive
    }

    /// Writes a tracking message in this connection's protocol (or drops
    /// it when the connection cannot receive it); it no longer counts in
    /// the mailbox.
    fn tracking_note(&mut self, note: &crate::tracking::Note, out: &mut BytesMut) {
        self.entry.taken(note.size());
        let subscribed = self.subscribed();
        crate::tracking::encode(note, self.resp3, subscribed, out);
    }

    /// Encodes a pub/sub message taken from the mailbox, which no longer
    /// counts there.
    fn push(&mut self, items: &[Bytes], out: &mut BytesMut) {
        self.entry.taken(crate::outbuf::size(items));
        resp::encode_push(items, self.resp3, out);
    }

    /// Waits for a parked command to be served, time out, or the client to
    /// go away. Returns false when the connection must close.
    #[allow(clippy::too_many_arguments)]
    async fn wait_unblocked<S: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        rx: &mut UnboundedReceiver<Msg>,
        waiter: u64,
        deadline: Option<Instant>,
        stream: &mut S,
        rbuf: &mut BytesMut,
        out: &mut BytesMut,
        req: &Request,
    ) -> std::io::Result<bool> {
        /// Counts the client in `clients_in_timeout_table` while it waits.
        struct Timed<'a>(&'a AtomicUsize);
        impl Drop for Timed<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::Relaxed);
            }
        }
        let shared = self.shared.clone();
        let _timed = deadline.map(|_| {
            shared.timed_blocked.fetch_add(1, Ordering::Relaxed);
            Timed(&shared.timed_blocked)
        });
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d.into()).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::pin!(sleep);
        // Requests sent meanwhile are read (they run once this one ends),
        // so that a client that then goes away is seen going, as Redis
        // keeps reading a blocked client's socket; past this much, they
        // wait in the socket.
        const READ_AHEAD_MAX: usize = 64 << 20;
        loop {
            tokio::select! {
                m = rx.recv() => match m {
                    Some(Msg::Unblocked(r)) => {
                        self.reply(&r, out);
                        self.finish_blocked();
                        break;
                    }
                    Some(Msg::Push(items)) => self.push(&items, out),
                    Some(Msg::Tracking(n)) => self.tracking_note(&n, out),
                    // Its buffers are in use until the command ends.
                    Some(Msg::Trim) => {}
                    Some(Msg::Kill) | None => {
                        self.shared.unblock(waiter);
                        self.blocked_call = None;
                        return Ok(false);
                    }
                },
                _ = &mut sleep => {
                    if let Some(r) = self.shared.time_out(waiter) {
                        self.reply(&r, out);
                        self.finish_blocked();
                        break;
                    }
                    // Served just now: the reply is in the mailbox.
                }
                r = stream.read_buf(rbuf), if rbuf.len() < READ_AHEAD_MAX => {
                    match r {
                        Ok(0) | Err(_) => {
                            self.shared.unblock(waiter);
                            return Ok(false);
                        }
                        Ok(n) => {
                            self.shared.stats.net_in.fetch_add(n as u64, Ordering::Relaxed);
                            crate::figures::READS.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            }
            // Requests read ahead and messages kept for after the reply
            // count in the client's memory meanwhile.
            if !self.account(rbuf, out, req) {
                self.shared.unblock(waiter);
                self.blocked_call = None;
                return Ok(false);
            }
        }
        // The reply (and what came with it) is written by the loop, with
        // the replies of the requests read meanwhile.
        Ok(true)
    }
}

/// An argument of [`BIG_ARG`] bytes or more being received gets exactly
/// the room it still needs at once, as Redis sizes its query buffer for
/// it (what the client holds then shows in its memory from the start).
fn make_room_for_argument(req: &Request, rbuf: &mut BytesMut) {
    let Some(end) = req.partial(rbuf).arg_end else {
        return;
    };
    if end > rbuf.capacity() && end - rbuf.len() >= BIG_ARG {
        let mut room = BytesMut::with_capacity(end);
        room.extend_from_slice(rbuf);
        *rbuf = room;
    }
}

/// The client-buffer cron's turn for one connection (`Msg::Trim`): idle
/// for [`IDLE_FREE_MS`], it lets go of both buffers while they are empty
/// (the reply buffer only while DEBUG REPLYBUFFER RESIZING allows);
/// otherwise a drained read buffer that a long request grew past
/// [`TRIM_ABOVE`] goes back to [`BUF`], and an empty reply buffer takes
/// the room its peak asks for ([`reply_room_wanted`]). Returns which
/// buffers were freed.
fn trim(
    entry: &ClientEntry,
    rbuf: &mut BytesMut,
    out: &mut BytesMut,
    out_room: &mut usize,
    req: &mut Request,
) -> (bool, bool) {
    let idle = now_ms().saturating_sub(entry.last_active.load(Ordering::Relaxed)) >= IDLE_FREE_MS;
    let mut freed = (false, false);
    if rbuf.is_empty() && (idle || rbuf.capacity() > TRIM_ABOVE) {
        *rbuf = if idle {
            freed.0 = true;
            BytesMut::new()
        } else {
            BytesMut::with_capacity(BUF)
        };
        req.shrink();
    }
    if idle && out.is_empty() && REPLY_BUFFER_RESIZING.load(Ordering::Relaxed) {
        *out = BytesMut::new();
        freed.1 = true;
    } else if out.is_empty() && out.capacity() > 0 {
        let peak = entry.reply_peak.load(Ordering::Relaxed);
        if let Some(room) = reply_room_wanted(*out_room, peak) {
            *out_room = room;
            *out = BytesMut::with_capacity(room);
        }
    }
    reset_reply_peak(entry, now_ms());
    freed
}

/// Records `len` bytes of replies waiting at once in the client's peak.
fn note_peak(entry: &ClientEntry, len: usize) {
    if len > entry.reply_peak.load(Ordering::Relaxed) {
        entry.reply_peak.store(len, Ordering::Relaxed);
    }
}
