//! One accepted connection: read request heads, discard bodies, answer in
//! order.
//!
//! The loop owns two buffers for the connection's lifetime (input and
//! output), so a steady stream of requests allocates nothing. Responses to
//! pipelined requests are gathered in the output buffer and written with one
//! syscall when the input runs dry, before any wait (delay, pause, stall), or
//! once the buffer passes [`FLUSH_AT`].

use std::io::{self, IoSlice};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{sleep, timeout, Instant};

use crate::query::{BodySpec, Fault, Params, DEFAULT_BODY};
use crate::wire::{self, ConnHeader, Framing, Head, Parsed, Reject, FILLER, MAX_HEAD};
use crate::Shared;

/// Initial input buffer; grows up to [`MAX_HEAD`] only for large heads.
const READ_BUF: usize = 8 * 1024;

/// Output gathered before a write is forced.
const FLUSH_AT: usize = 16 * 1024;

/// Bodies up to this size are copied behind their head (one write for
/// both); larger ones are written straight from [`FILLER`] with vectored
/// writes, which avoids the copy.
const COPY_BODY_MAX: usize = 8 * 1024;

/// Chunk size for `chunked=1` responses.
const CHUNK: usize = 4 * 1024;

/// Filler slices per vectored write: 1 MiB per syscall at most.
const IOV_BODY: usize = 16;

/// After our FIN, how long (and how many bytes) we keep reading so that
/// closing does not send a RST that could destroy the response before the
/// client reads it.
const LINGER_TIME: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 256 * 1024;

/// `fault=extra`: the pause between the response and the unasked one.
const EXTRA_AFTER: Duration = Duration::from_millis(20);

/// How a response leaves the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    KeepAlive,
    /// FIN after the response, then drain.
    Close,
    /// Drop the socket now (after a reset, or when the peer is gone).
    Drop,
}

/// Serves one connection until it closes. I/O errors just end it: a client
/// that hangs up mid-response is normal for a load-test target.
pub(crate) async fn serve(stream: TcpStream, shared: Arc<Shared>) {
    let mut conn = Conn {
        stream,
        shared,
        buf: vec![0; READ_BUF],
        start: 0,
        end: 0,
        out: Vec::with_capacity(1024),
    };
    match conn.run().await {
        Ok(Next::Close) => conn.close_gracefully().await,
        Ok(Next::KeepAlive | Next::Drop) | Err(_) => {}
    }
}

#[derive(Debug)]
struct Conn {
    stream: TcpStream,
    shared: Arc<Shared>,
    /// Input bytes; `buf[start..end]` is received but not yet consumed.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Response bytes not yet written.
    out: Vec<u8>,
}

impl Conn {
    async fn run(&mut self) -> io::Result<Next> {
        loop {
            let parsed = wire::parse_head(&self.buf[self.start..self.end], self.shared.max_body);
            let next = match parsed {
                Parsed::Partial => {
                    if self.end - self.start >= MAX_HEAD {
                        self.reject(Reject::HeadTooLarge)
                    } else {
                        self.flush().await?;
                        if self.fill().await? == 0 {
                            // Clean EOF between requests (or mid-head: there
                            // is nobody left to answer).
                            return Ok(Next::Drop);
                        }
                        continue;
                    }
                }
                Parsed::Reject(reject) => self.reject(reject),
                Parsed::Complete(head) => {
                    self.start += head.len;
                    let buffered = (self.end - self.start) as u64;
                    if head.expect_continue && head.body_len > buffered {
                        // Otherwise the client holds the body back until its
                        // own timeout (a second, for curl).
                        self.out.extend_from_slice(wire::CONTINUE);
                    }
                    if !self.discard_body(head.body_len).await? {
                        return Ok(Next::Drop);
                    }
                    self.shared.note_request();
                    if let (Some(key), Ok(params)) = (&head.ws_key, &head.params) {
                        return self.upgrade(key, params).await;
                    }
                    self.respond(head).await?
                }
            };
            if next != Next::KeepAlive {
                return Ok(next);
            }
        }
    }

    /// A WebSocket upgrade: `101`, then the connection is the WebSocket
    /// module's (echo or push) until it ends.
    async fn upgrade(&mut self, key: &str, params: &Params) -> io::Result<Next> {
        crate::ws::switching_protocols(key, &mut self.out);
        self.flush().await?;
        self.buf.copy_within(self.start..self.end, 0);
        let end = self.end - self.start;
        let buf = std::mem::take(&mut self.buf);
        crate::ws::serve(&mut self.stream, buf, end, params, self.shared.max_body).await?;
        Ok(Next::Drop)
    }

    /// Reads more input into the buffer; returns the byte count (0 at EOF).
    async fn fill(&mut self) -> io::Result<usize> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            // A large head made the buffer grow; give it back once it is
            // empty so idle connections stay small.
            if self.buf.len() > READ_BUF {
                self.buf.truncate(READ_BUF);
                self.buf.shrink_to_fit();
            }
        } else if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.end == self.buf.len() {
                // Callers check MAX_HEAD first, so this never exceeds it.
                let grown = (self.buf.len() * 2).min(MAX_HEAD);
                self.buf.resize(grown, 0);
            }
        }
        let n = self.stream.read(&mut self.buf[self.end..]).await?;
        self.end += n;
        Ok(n)
    }

    /// Consumes a Content-Length request body; false if the peer hung up
    /// before sending all of it.
    async fn discard_body(&mut self, len: u64) -> io::Result<bool> {
        let buffered = (self.end - self.start) as u64;
        if len <= buffered {
            self.start += len as usize;
            return Ok(true);
        }
        let mut left = len - buffered;
        self.start = self.end;
        while left > 0 {
            self.flush().await?;
            let n = self.fill().await? as u64;
            if n == 0 {
                return Ok(false);
            }
            // Whatever follows the body in this read is the next request.
            let used = n.min(left);
            self.start += used as usize;
            left -= used;
        }
        Ok(true)
    }

    /// Answers a request that cannot be framed, then closes.
    fn reject(&mut self, reject: Reject) -> Next {
        let msg = reject.message();
        wire::push_head(
            &mut self.out,
            reject.status(),
            Framing::Length(msg.len()),
            ConnHeader::Close,
            true,
            None,
        );
        self.out.extend_from_slice(msg);
        Next::Close
    }

    async fn respond(&mut self, head: Head) -> io::Result<Next> {
        let keep = if head.keep_alive {
            Next::KeepAlive
        } else {
            Next::Close
        };
        let conn_header = ConnHeader::new(head.keep_alive, head.http10);
        let params: Params = match head.params {
            Ok(p) => p,
            Err(e) => {
                // A bad parameter is the client's mistake, not a broken
                // connection: answer 400 and keep serving.
                let msg = e.to_string();
                self.hold_for_pause().await?;
                let body_len = msg.len() + 1;
                wire::push_head(
                    &mut self.out,
                    400,
                    Framing::Length(body_len),
                    conn_header,
                    true,
                    None,
                );
                if !head.head_only {
                    self.out.extend_from_slice(msg.as_bytes());
                    self.out.push(b'\n');
                }
                return Ok(keep);
            }
        };

        if !params.work.is_zero() {
            burn(params.work);
        }
        let delay = params.pick_delay() + self.shared.extra_delay(std::time::Instant::now());
        if !delay.is_zero() {
            self.wait_until(Instant::now() + delay).await?;
        }
        if params.fault == Some(Fault::Stall) {
            return self.stall(params.stall).await;
        }
        self.hold_for_pause().await?;

        match params.fault {
            Some(Fault::Reset) => {
                self.flush().await?;
                // SO_LINGER 0 makes close() send RST instead of FIN.
                socket2::SockRef::from(&self.stream).set_linger(Some(Duration::ZERO))?;
                return Ok(Next::Drop);
            }
            Some(Fault::Invalid) => {
                self.out.extend_from_slice(wire::INVALID_RESPONSE);
                return Ok(Next::Close);
            }
            Some(Fault::Close | Fault::Stall | Fault::Hangup | Fault::Extra) | None => {}
        }

        let body = params.pick_body();
        let len = body.len();
        // No body or framing headers where HTTP forbids them; chunked only
        // for clients that can decode it.
        let framing = if matches!(params.status, 204 | 304) {
            Framing::NoBody
        } else if params.chunked && !head.http10 {
            Framing::Chunked
        } else {
            Framing::Length(len)
        };
        let truncate = params.fault == Some(Fault::Close);
        let conn_header = if truncate {
            ConnHeader::Close
        } else {
            conn_header
        };
        let location = params.location.as_ref().map(|l| l.as_bytes());
        wire::push_head(
            &mut self.out,
            params.status,
            framing,
            conn_header,
            false,
            location,
        );
        if head.head_only {
            return Ok(if truncate { Next::Close } else { keep });
        }
        match (framing, truncate) {
            (Framing::NoBody, _) => {}
            (Framing::Length(_), false) => self.write_body(body).await?,
            (Framing::Chunked, false) => self.write_chunked(len).await?,
            // Promise the whole body, deliver half, then EOF.
            (Framing::Length(_), true) => self.write_body(BodySpec::Filler(len / 2)).await?,
            (Framing::Chunked, true) => {
                wire::push_hex(&mut self.out, len);
                self.out.extend_from_slice(b"\r\n");
                self.write_body(BodySpec::Filler(len / 2)).await?;
            }
        }
        match params.fault {
            // The response as promised (kept alive), then the close.
            Some(Fault::Hangup) => return Ok(Next::Close),
            Some(Fault::Extra) => {
                // Apart from the response, so that a client reading it
                // does not find the extra bytes in the same read.
                self.wait_until(Instant::now() + EXTRA_AFTER).await?;
                self.out.extend_from_slice(wire::EXTRA_RESPONSE);
            }
            _ => {}
        }
        Ok(if truncate { Next::Close } else { keep })
    }

    /// Appends (or, when large, writes) a plain body after the pending head.
    async fn write_body(&mut self, body: BodySpec) -> io::Result<()> {
        match body {
            BodySpec::Default => self.out.extend_from_slice(DEFAULT_BODY),
            BodySpec::Filler(n) if n <= COPY_BODY_MAX => {
                self.out.extend_from_slice(&FILLER[..n]);
            }
            BodySpec::Filler(n) => self.write_out_and_filler(n).await?,
        }
        if self.out.len() >= FLUSH_AT {
            self.flush().await?;
        }
        Ok(())
    }

    async fn write_chunked(&mut self, len: usize) -> io::Result<()> {
        let mut left = len;
        while left > 0 {
            let n = left.min(CHUNK);
            wire::push_hex(&mut self.out, n);
            self.out.extend_from_slice(b"\r\n");
            self.out.extend_from_slice(&FILLER[..n]);
            self.out.extend_from_slice(b"\r\n");
            left -= n;
            if self.out.len() >= FLUSH_AT {
                self.flush().await?;
            }
        }
        self.out.extend_from_slice(b"0\r\n\r\n");
        Ok(())
    }

    /// Writes the pending output followed by `n` filler bytes, using
    /// vectored writes of the one static filler slice.
    async fn write_out_and_filler(&mut self, mut n: usize) -> io::Result<()> {
        let mut out_done = 0;
        while out_done < self.out.len() || n > 0 {
            let mut iov = [IoSlice::new(&[]); 1 + IOV_BODY];
            let mut k = 0;
            if out_done < self.out.len() {
                iov[0] = IoSlice::new(&self.out[out_done..]);
                k = 1;
            }
            let mut left = n;
            while left > 0 && k < iov.len() {
                let piece = left.min(FILLER.len());
                iov[k] = IoSlice::new(&FILLER[..piece]);
                k += 1;
                left -= piece;
            }
            let written = self.stream.write_vectored(&iov[..k]).await?;
            if written == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            // Every filler slice holds the same bytes, so progress through
            // the body is just a count.
            let from_out = written.min(self.out.len() - out_done);
            out_done += from_out;
            n -= written - from_out;
        }
        self.out.clear();
        Ok(())
    }

    async fn flush(&mut self) -> io::Result<()> {
        if !self.out.is_empty() {
            self.stream.write_all(&self.out).await?;
            self.out.clear();
        }
        Ok(())
    }

    /// Waits, after sending what earlier pipelined requests are owed.
    async fn wait_until(&mut self, deadline: Instant) -> io::Result<()> {
        self.flush().await?;
        crate::timer::sleep_until(deadline).await;
        Ok(())
    }

    /// Holds the response while the server-wide pause window is open.
    async fn hold_for_pause(&mut self) -> io::Result<()> {
        if let Some(end) = self.shared.pause_hold(std::time::Instant::now()) {
            self.wait_until(Instant::from_std(end)).await?;
        }
        Ok(())
    }

    /// `fault=stall`: say nothing for `length`, then close. Reading meanwhile
    /// notices a client that gave up, so abandoned stalls do not pin file
    /// descriptors for the full duration.
    async fn stall(&mut self, length: Duration) -> io::Result<Next> {
        self.flush().await?;
        let stream = &mut self.stream;
        let buf = &mut self.buf;
        let hung_up = async {
            loop {
                match stream.read(buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        };
        tokio::select! {
            () = sleep(length) => Ok(Next::Close),
            () = hung_up => Ok(Next::Drop),
        }
    }

    /// Sends FIN, then reads (and discards) until the client closes, within
    /// bounds. Closing with unread input would make the kernel send RST, and
    /// a RST can discard our last response in the client's receive buffer.
    async fn close_gracefully(&mut self) {
        if self.flush().await.is_err() || self.stream.shutdown().await.is_err() {
            return;
        }
        let stream = &mut self.stream;
        let buf = &mut self.buf;
        let drain = async {
            let mut total = 0;
            while total < LINGER_BYTES {
                match stream.read(buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => total += n,
                }
            }
        };
        let _ = timeout(LINGER_TIME, drain).await;
    }
}

/// `?work=`: spins on this thread for `d` of wall-clock time, holding it
/// like a CPU-bound handler (a template render, a JSON encode): requests
/// on the same thread queue behind it, so one thread serves at most
/// 1/d requests per second. A known capacity, for testing capacity
/// searches (`pelt sweep`). Wall clock, not CPU time: a preempted thread
/// still answers after `d`, as a real handler's user would see.
pub(crate) fn burn(d: Duration) {
    let until = std::time::Instant::now() + d;
    while std::time::Instant::now() < until {
        std::hint::spin_loop();
    }
}
