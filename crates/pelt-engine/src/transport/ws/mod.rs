//! The WebSocket transport (`ws://`, `wss://`; RFC 6455): each sender
//! owns one connection, upgraded from HTTP/1.1 on its first message, and
//! a *request* is one message: sent as a masked frame (text, or binary
//! with `--ws-binary`), answered by the server's next data message
//! (matched by order: a sender has one message in flight). So the
//! closed loop (`-c`, `-n`, `-d`), the rate dispatcher (`--rate`
//! messages per second, timed from their intended send), `--timeout`,
//! recording and every report work unchanged: the worker sees a
//! `Transport` like any other.
//!
//! What is WebSocket's own goes through the `Runner`: each upgrade's
//! time (request written to `101` read) and each connection's close by
//! code (the server's close frame, pelt's own when it fails the
//! connection: 1002, 1007, 1009; 1006 when it ended with no close
//! frame). Pings are answered with pongs while a reply is awaited. The
//! run's end closes each connection with 1000 and waits a moment for the
//! server's close frame (`finish`).
//!
//! Per message nothing is allocated: the frame is masked into a buffer
//! the sender keeps, and the reply is walked in its read buffer by the
//! wire module's `Reader` (`crate::ws`).

use super::dial::dial;
use super::{Attempt, OpenConn, Outgoing, Runner, Transport};
use crate::conn::Stream;
use crate::h1::{write_request, RequestLine};
use crate::outcome::{read_error_kind, write_error_kind, Failure, Response};
use crate::session::Jar;
use crate::ws::{code, encode, encode_close, handshake, op, Event, Keys, Reader};
use pelt_core::ws::{Close, ABNORMAL};
use pelt_core::ErrorKind;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The read buffer's first size; it doubles up to [`MAX_READ_BUF`] when
/// a read fills it (large messages, read in bigger pieces).
const FIRST_READ_BUF: usize = 2048;
const MAX_READ_BUF: usize = 64 * 1024;
/// The longest upgrade answer (status line and fields) read.
const MAX_HEAD: usize = 16 * 1024;

/// A WebSocket connection of its own, one message at a time.
pub(crate) struct WsSender {
    conn: Option<Conn>,
    /// Bytes read: those from `start` to `end` are not consumed yet.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// The frame being written (a message, a pong, a close), reused.
    out: Vec<u8>,
    reader: Reader,
    keys: Keys,
    /// `--cookies`: the sender's jar, sent with each upgrade and given
    /// the `101`'s cookies.
    jar: Option<Box<Jar>>,
    /// A close to count at the next chance: the worker dropped the
    /// connection (a timeout) without the sender seeing it end.
    dropped: bool,
}

/// The sender's open connection.
#[derive(Debug)]
struct Conn {
    stream: Stream,
    _open: OpenConn,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self._open.settle();
    }
}

impl WsSender {
    /// Room to read more into: the unconsumed bytes moved to the
    /// buffer's start once they reach its end (or dropped when there are
    /// none).
    fn make_room(&mut self) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
    }

    /// A sender with no connection yet (it upgrades one for its first
    /// message); `salt` seeds its mask keys.
    pub fn new(jar: Option<Jar>, salt: u64, max_message: u64) -> WsSender {
        WsSender {
            conn: None,
            buf: vec![0u8; FIRST_READ_BUF],
            start: 0,
            end: 0,
            out: Vec::new(),
            reader: Reader::new(max_message),
            keys: Keys::new(salt),
            jar: jar.map(Box::new),
            dropped: false,
        }
    }

    /// Counts a connection the worker dropped (see `dropped`).
    fn settle_dropped(&mut self, w: &impl Runner) {
        if std::mem::take(&mut self.dropped) {
            w.record_ws_close(Close::of(ABNORMAL));
        }
    }

    /// Opens and upgrades a connection for target `t`'s URL.
    async fn open(&mut self, w: &impl Runner, t: usize, unsent: bool) -> Result<(), Failure> {
        let plan = w.plan();
        let origin = plan.target_origin[t];
        let (mut stream, est) = dial(w, &plan.origins[origin], unsent).await?;
        w.record_connection(&est);
        let open = OpenConn::new(w).watch(&stream);
        let target = &plan.targets[t];
        let line = RequestLine {
            method: "GET",
            url: &target.url,
            body: false,
            keep_host: true,
        };
        write_request(&mut self.out, target, &line, true);
        // The head without its empty line, which the upgrade's fields end.
        self.out.truncate(self.out.len() - 2);
        if let Some(jar) = &mut self.jar {
            if let Some(line) = jar.header_line(&plan.cookie_urls[t]) {
                self.out.extend_from_slice(line);
            }
        }
        let key = handshake::key([self.keys.next(), self.keys.next()]);
        handshake::finish_request(&mut self.out, &key, &plan.http.ws.protocols);
        // The run's clock reads 0 until the start, and rate runs upgrade
        // their connections before it (`warm`): timed on its own clock.
        let started = std::time::Instant::now();
        let write = |e: std::io::Error| Failure::new(write_error_kind(&e), e.to_string());
        stream.write_all(&self.out).await.map_err(write)?;
        stream.flush().await.map_err(write)?;
        // The answer's head; what follows it is frames.
        self.start = 0;
        self.end = 0;
        let head_len = loop {
            if self.end == self.buf.len() {
                if self.buf.len() >= MAX_HEAD {
                    return Err(Failure::new(
                        ErrorKind::WsUpgrade,
                        format!(
                            "the answer to the WebSocket upgrade has a head over {MAX_HEAD} bytes"
                        ),
                    ));
                }
                self.buf.resize(self.buf.len() * 2, 0);
            }
            let n = stream.read(&mut self.buf[self.end..]).await.map_err(|e| {
                Failure::new(
                    read_error_kind(&e),
                    format!("reading the upgrade's answer: {e}"),
                )
            })?;
            if n == 0 {
                let mut f = Failure::new(
                    ErrorKind::Closed,
                    "the server closed the connection before answering the WebSocket upgrade",
                );
                f.bytes_in = self.end as u64;
                return Err(f);
            }
            self.end += n;
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut resp = httparse::Response::new(&mut headers);
            match resp.parse(&self.buf[..self.end]) {
                Ok(httparse::Status::Partial) => continue,
                Ok(httparse::Status::Complete(len)) => {
                    let status = resp.code.unwrap_or(0);
                    let expected = handshake::accept(&key);
                    let checked = handshake::check_answer(
                        status,
                        resp.reason.unwrap_or(""),
                        resp.headers,
                        &expected,
                        &plan.http.ws.protocols,
                    );
                    if let Err(why) = checked {
                        let mut f = Failure::new(ErrorKind::WsUpgrade, why);
                        f.bytes_in = self.end as u64;
                        return Err(f);
                    }
                    break len;
                }
                Err(e) => {
                    let mut f = Failure::new(
                        ErrorKind::InvalidResponse,
                        format!("the answer to the WebSocket upgrade is not HTTP/1.1: {e}"),
                    );
                    f.bytes_in = self.end as u64;
                    return Err(f);
                }
            }
        };
        w.record_ws_upgrade(started.elapsed().as_nanos() as u64);
        if let Some(jar) = &mut self.jar {
            jar.absorb(&self.buf[..head_len], &plan.cookie_urls[t]);
        }
        self.start = head_len;
        self.reader = Reader::new(plan.http.ws.max_message);
        self.conn = Some(Conn {
            stream,
            _open: open,
        });
        Ok(())
    }

    /// Fails the connection with close `code` (RFC 6455 §7.1.7): the
    /// close frame sent as a courtesy, never waited on; counted.
    async fn fail_connection(&mut self, w: &impl Runner, code: u16) {
        if let Some(mut c) = self.conn.take() {
            self.out.clear();
            encode_close(&mut self.out, code, self.keys.mask());
            let _ = c.stream.write_all(&self.out).await;
            let _ = c.stream.flush().await;
            w.record_ws_close(Close::of(code));
        }
    }

    /// Reads until a data message is whole (answering pings on the way):
    /// its length, and the bytes read.
    async fn read_reply(
        &mut self,
        w: &impl Runner,
        attempt: &mut Attempt,
    ) -> Result<(u64, u64), Failure> {
        let mut bytes_in = 0u64;
        let max = w.plan().http.ws.max_message;
        loop {
            // What is buffered first.
            loop {
                let from = self.start;
                match self.reader.next(&self.buf[from..self.end]) {
                    Ok((used, event)) => {
                        self.start += used;
                        match event {
                            Some(Event::Message { len, .. }) => return Ok((len, bytes_in)),
                            Some(Event::Ping { payload: (a, b) }) => {
                                self.out.clear();
                                let key = self.keys.mask();
                                encode(&mut self.out, op::PONG, &self.buf[from + a..from + b], key);
                                let c = self.conn.as_mut().expect("reading on a connection");
                                c.stream.write_all(&self.out).await.map_err(|e| {
                                    Failure::new(
                                        write_error_kind(&e),
                                        format!("answering a ping: {e}"),
                                    )
                                })?;
                                c.stream.flush().await.map_err(|e| {
                                    Failure::new(
                                        write_error_kind(&e),
                                        format!("answering a ping: {e}"),
                                    )
                                })?;
                            }
                            Some(Event::Pong) => {}
                            Some(Event::Close { code }) => {
                                // The server's close, echoed (§5.5.1), and
                                // counted by its code.
                                let echo = code.unwrap_or(code::NORMAL);
                                if let Some(mut c) = self.conn.take() {
                                    self.out.clear();
                                    encode_close(&mut self.out, echo, self.keys.mask());
                                    let _ = c.stream.write_all(&self.out).await;
                                    let _ = c.stream.flush().await;
                                }
                                w.record_ws_close(code.map_or(Close::of(1005), Close::of));
                                let mut f = Failure::new(
                                    ErrorKind::WsClosed,
                                    match code {
                                        Some(c) => format!("the server closed the WebSocket with code {c} before the reply came"),
                                        None => "the server closed the WebSocket (no code) before the reply came".to_string(),
                                    },
                                );
                                f.bytes_in = bytes_in;
                                return Err(f);
                            }
                            None if used == 0 => break,
                            None => {}
                        }
                    }
                    Err(e) => {
                        self.fail_connection(w, e.close_code()).await;
                        let mut f = Failure::new(e.kind(), e.detail(max));
                        f.bytes_in = bytes_in;
                        return Err(f);
                    }
                }
            }
            // More bytes: room first.
            self.make_room();
            if self.end == self.buf.len() {
                // Only a frame's head or a control frame waits whole (at
                // most 139 bytes): the first buffer always has room.
                self.buf.resize(self.buf.len() * 2, 0);
            }
            let c = self.conn.as_mut().expect("reading on a connection");
            let room = self.buf.len() - self.end;
            let n = match c.stream.read(&mut self.buf[self.end..]).await {
                Ok(n) => n,
                Err(e) => {
                    self.conn = None;
                    w.record_ws_close(Close::of(ABNORMAL));
                    let mut f = Failure::new(read_error_kind(&e), e.to_string());
                    f.bytes_in = bytes_in;
                    return Err(f);
                }
            };
            if n == 0 {
                self.conn = None;
                w.record_ws_close(Close::of(ABNORMAL));
                let mut f = Failure::new(
                    ErrorKind::Closed,
                    "the server closed the connection with no close frame (1006) before the reply came",
                );
                f.bytes_in = bytes_in;
                return Err(f);
            }
            if attempt.first_byte.is_none() {
                attempt.first_byte = Some(w.now());
            }
            bytes_in += n as u64;
            self.end += n;
            if n == room && self.buf.len() < MAX_READ_BUF {
                self.buf.resize(self.buf.len() * 2, 0);
            }
        }
    }
}

impl Transport for WsSender {
    async fn send(
        &mut self,
        w: &impl Runner,
        out: &mut Outgoing<'_>,
        sender: usize,
        attempt: &mut Attempt,
    ) -> Result<Response, Failure> {
        let Outgoing::Target(t) = out else {
            // `RunConfig::validate` refuses a scenario over WebSocket.
            return Err(Failure::new(
                ErrorKind::Write,
                "a scenario's steps cannot go over WebSocket",
            ));
        };
        let t = *t as usize;
        self.settle_dropped(w);
        attempt.reused = self.conn.is_some();
        if self.conn.is_none() {
            self.open(w, t, true).await?;
        }
        let plan = w.plan();
        let opcode = match plan.http.ws.binary {
            true => op::BINARY,
            false => op::TEXT,
        };
        self.out.clear();
        encode(
            &mut self.out,
            opcode,
            &plan.targets[t].body,
            self.keys.mask(),
        );
        let c = self.conn.as_mut().expect("open() set it");
        c.stream.clear_stamps();
        attempt.sent = Some(w.mark_sent(sender));
        let write = |e: std::io::Error| Failure::new(write_error_kind(&e), e.to_string());
        c.stream.write_all(&self.out).await.map_err(write)?;
        c.stream.flush().await.map_err(write)?;
        attempt.bytes_out = self.out.len() as u64;
        let (len, bytes_in) = self.read_reply(w, attempt).await?;
        if let Some(stamps) = self.conn.as_ref().and_then(|c| c.stream.stamps()) {
            // The kernel's arrival times, as HTTP/1.1's.
            attempt.stamped(w, stamps);
        }
        Ok(Response {
            // A reply is a complete answer: counted as a 2xx, as every
            // view's rule for `failed` reads it (docs/WEBSOCKET.md).
            status: 200,
            bytes_in,
            body_bytes: len,
            reusable: true,
        })
    }

    fn reset(&mut self) {
        if self.conn.take().is_some() {
            self.dropped = true;
        }
        self.start = 0;
        self.end = 0;
    }

    async fn warm(&mut self, w: &impl Runner, target: u32) {
        if self.conn.is_none() {
            let _ = self.open(w, target as usize, true).await;
        }
    }

    async fn finish(&mut self, w: &impl Runner) {
        self.settle_dropped(w);
        let Some(mut c) = self.conn.take() else {
            return;
        };
        // pelt's close (1000), then the server's, for a moment: half the
        // run's grace, so that it is counted before the worker's last
        // second is handed over.
        self.out.clear();
        encode_close(&mut self.out, code::NORMAL, self.keys.mask());
        let wait = w.plan().grace / 2;
        let closing = async {
            c.stream.write_all(&self.out).await.ok()?;
            c.stream.flush().await.ok()?;
            loop {
                loop {
                    match self.reader.next(&self.buf[self.start..self.end]) {
                        Ok((used, event)) => {
                            self.start += used;
                            match event {
                                Some(Event::Close { code }) => {
                                    return Some(code.map_or(Close::of(1005), Close::of))
                                }
                                None if used == 0 => break,
                                _ => {}
                            }
                        }
                        // A broken frame while closing: no close frame to
                        // wait for.
                        Err(e) => return Some(Close::of(e.close_code())),
                    }
                }
                self.make_room();
                match c.stream.read(&mut self.buf[self.end..]).await {
                    Ok(0) | Err(_) => return None,
                    Ok(n) => self.end += n,
                }
            }
        };
        let close = tokio::time::timeout(wait, closing).await.ok().flatten();
        w.record_ws_close(close.unwrap_or(Close::of(ABNORMAL)));
    }
}

#[cfg(test)]
mod tests;
