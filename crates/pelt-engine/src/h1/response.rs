//! HTTP/1.1 responses read into a reusable buffer and framed without
//! allocating: the head (1xx interim responses skipped), then the body by
//! its framing, counted and discarded. Three steps: [`read_head`], the
//! copies a caller asked for ([`Copies`]), [`read_body`].

use super::chunked::ChunkedDecoder;
use super::head::{copy_location, has_blank_line, parse_head, server_of, Framing, ParsedHead};
use crate::events::Tap;
use crate::outcome::{is_redirect, read_error_kind, Failure, Response};
use pelt_core::stream::StreamOptions;
use pelt_core::{ErrorKind, Nanos};
use std::io;
use tokio::io::{AsyncRead, AsyncReadExt};

/// A failure while reading, `bytes_in` bytes into the response (and
/// after its `status`, if the head was read).
fn read_failure(kind: ErrorKind, detail: impl Into<String>, bytes_in: u64, status: u16) -> Failure {
    Failure {
        bytes_in,
        status,
        ..Failure::new(kind, detail)
    }
}

/// Reads one response from `stream` into `buf`, calling `on_first_byte`
/// when the first bytes arrive. Bodies are counted and discarded.
pub async fn read_response<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut Vec<u8>,
    head_request: bool,
    on_first_byte: impl FnMut(),
) -> Result<Response, Failure> {
    read_response_copies(
        stream,
        buf,
        head_request,
        on_first_byte,
        Copies::default(),
        None::<NoEvents<'_, S>>,
    )
    .await
}

/// [`read_response`] that also copies a redirect's `Location` value into
/// `location` (cleared first; left empty for other statuses).
pub async fn read_response_location<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut Vec<u8>,
    head_request: bool,
    on_first_byte: impl FnMut(),
    location: &mut Vec<u8>,
) -> Result<Response, Failure> {
    let copies = Copies {
        location: Some(location),
        ..Copies::default()
    };
    read_response_copies(
        stream,
        buf,
        head_request,
        on_first_byte,
        copies,
        None::<NoEvents<'_, S>>,
    )
    .await
}

/// A streamed response's events, read as its body arrives (`--stream`,
/// `--llm`, or a 2xx response whose `Content-Type` names a stream). The
/// sender's [`Tap`] is made at its first stream and reused; after the
/// read, `Tap::active` says whether the response was one.
pub(crate) struct Events<'a, S, C, K> {
    /// The sender's tap.
    pub tap: &'a mut Option<Box<Tap>>,
    /// How streams are read.
    pub opts: &'a StreamOptions,
    /// The kernel's arrival stamp of the latest bytes read from the
    /// stream, where it stamps them.
    pub arrival: fn(&S) -> Option<u64>,
    /// The run's time of an arrival stamp (pelt's clock now, without).
    pub clock: C,
    /// Where each event goes, with its gap since the stream's previous.
    pub sink: K,
}

/// The type of "no events" (a login, a scenario's step, the fuzz target).
pub(crate) type NoEvents<'a, S> =
    Events<'a, S, fn(Option<u64>) -> Nanos, fn(Nanos, Option<u64>, crate::events::SentAt)>;

impl<S, C: Fn(Option<u64>) -> Nanos, K: FnMut(Nanos, Option<u64>, crate::events::SentAt)>
    Events<'_, S, C, K>
{
    /// The response `head` begins: its tap, if it is a stream.
    fn start(&mut self, head: &ParsedHead) -> bool {
        if let Some(tap) = self.tap.as_deref_mut() {
            tap.active = false;
        }
        let framing = self.opts.forced().or(head.stream);
        let streamed = (200..300).contains(&head.status) && head.framing != Framing::None;
        let Some(framing) = framing.filter(|_| streamed) else {
            return false;
        };
        match self.tap.as_deref_mut() {
            Some(tap) => tap.restart(framing, head.status),
            // Once per sender: its parser's buffers are kept from then on.
            None => *self.tap = Some(Box::new(Tap::new(framing, self.opts, head.status))),
        }
        true
    }

    /// Body bytes arrived (`new_piece`: a transport chunk's first).
    fn feed(&mut self, stream: &S, bytes: &[u8], new_piece: bool) {
        if bytes.is_empty() {
            return;
        }
        let at = (self.clock)((self.arrival)(stream));
        if let Some(tap) = self.tap.as_deref_mut() {
            tap.feed(bytes, new_piece, at, &mut self.sink);
        }
    }

    /// The body ended.
    fn finish(&mut self, stream: &S) {
        let at = (self.clock)((self.arrival)(stream));
        if let Some(tap) = self.tap.as_deref_mut() {
            tap.finish(at, &mut self.sink);
        }
    }
}

/// What a caller wants copied out of the final response's head besides
/// the response itself; each left `None` costs nothing.
#[derive(Debug, Default)]
pub(crate) struct Copies<'a> {
    /// A redirect's `Location` value (cleared first; left empty for other
    /// statuses).
    pub location: Option<&'a mut Vec<u8>>,
    /// The head, status line and headers (cleared first), for `--cookies`.
    pub head: Option<&'a mut Vec<u8>>,
    /// The `Server` header's value, set to `None` when the response has
    /// none. The sender asks only for a worker's first response (see
    /// `Runner::wants_server`).
    pub server: Option<&'a mut Option<String>>,
    /// Whether the head has a `Set-Cookie` field (read from the parse,
    /// so that a caller does not scan the head for it).
    pub sets_cookie: Option<&'a mut bool>,
    /// The body, its chunked framing removed (cleared first; at most
    /// [`MAX_BODY_COPY`] bytes), for a scenario's extraction and checks.
    pub body: Option<&'a mut Vec<u8>>,
}

/// The most of a body [`Copies::body`] keeps.
pub(crate) const MAX_BODY_COPY: usize = 1 << 20;

/// Appends `bytes` to the body copy, if one is wanted, up to its cap.
fn keep(copy: &mut Option<&mut Vec<u8>>, bytes: &[u8]) {
    if let Some(out) = copy {
        let room = MAX_BODY_COPY.saturating_sub(out.len());
        out.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

impl Copies<'_> {
    /// Takes what was asked from the complete head `head`, parsed as
    /// `parsed`.
    fn take_from(self, head: &[u8], parsed: &ParsedHead) {
        let status = parsed.status;
        if let Some(out) = self.sets_cookie {
            *out = parsed.sets_cookie;
        }
        if let Some(out) = self.head {
            out.clear();
            out.extend_from_slice(head);
        }
        if let Some(out) = self.server {
            *out = server_of(head);
        }
        if let Some(out) = self.location {
            out.clear();
            if is_redirect(status) {
                copy_location(head, out);
            }
        }
    }
}

/// [`read_response`] with the copies of its head that `copies` asks for.
pub(crate) async fn read_response_copies<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut Vec<u8>,
    head_request: bool,
    on_first_byte: impl FnMut(),
    copies: Copies<'_>,
    events: Option<
        Events<
            '_,
            S,
            impl Fn(Option<u64>) -> Nanos,
            impl FnMut(Nanos, Option<u64>, crate::events::SentAt),
        >,
    >,
) -> Result<Response, Failure> {
    let mut copies = copies;
    let mut body = copies.body.take();
    if let Some(b) = &mut body {
        b.clear();
    }
    let read = read_head(stream, buf, head_request, on_first_byte).await?;
    copies.take_from(&buf[..read.head.len], &read.head);
    let events = events.and_then(|mut e| e.start(&read.head).then_some(e));
    read_body(stream, buf, read, body, events).await
}

/// A final response's head read into the buffer, and what came with it.
#[derive(Debug)]
struct HeadRead {
    head: ParsedHead,
    /// Bytes in the buffer: the head, then the body's first bytes.
    filled: usize,
    /// Bytes received so far (interim responses included).
    bytes_in: u64,
}

/// Doubles `buf` up to [`READ_BUF`](crate::h1::READ_BUF); false when it
/// is that size already. A connection's buffer starts at
/// [`FIRST_READ_BUF`](crate::h1::FIRST_READ_BUF) and grows only when a
/// head does not fit or a read fills it (a large body, then read in
/// bigger pieces): 10,000 connections with 16 KiB each took 160 MB, most
/// of it never used by responses of a few hundred bytes.
fn grow(buf: &mut Vec<u8>) -> bool {
    let max = crate::h1::READ_BUF;
    if buf.len() >= max {
        return false;
    }
    buf.resize((buf.len() * 2).clamp(crate::h1::FIRST_READ_BUF, max), 0);
    true
}

/// Reads until httparse sees a complete final head; 1xx interim responses
/// (100 Continue, 103 Early Hints) are skipped.
async fn read_head<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut Vec<u8>,
    head_request: bool,
    mut on_first_byte: impl FnMut(),
) -> Result<HeadRead, Failure> {
    let mut filled = 0usize;
    let mut bytes_in = 0u64;
    let mut first = true;
    // The head is parsed only once a blank line may have arrived: a server
    // that trickles its head a byte at a time would otherwise make every
    // read re-parse all of it.
    let mut scanned = 0usize;
    loop {
        // The first read usually holds the whole head: parse it at once.
        // Later reads look for a blank line in the new bytes only.
        let may_be_complete = filled > 0
            && (scanned == 0
                || has_blank_line(&buf[scanned.saturating_sub(2)..filled])
                // httparse rejects garbage before any blank line.
                || !buf[..filled.min(5)].eq_ignore_ascii_case(&b"HTTP/"[..filled.min(5)]));
        scanned = filled;
        if may_be_complete {
            match parse_head(&buf[..filled], head_request) {
                Ok(Some(head)) if head.status == 101 => {
                    // pelt never asks to upgrade: a switch is a protocol
                    // violation, and what follows is not HTTP/1.1.
                    return Err(read_failure(
                        ErrorKind::InvalidResponse,
                        "101 Switching Protocols to a request that asked for no upgrade",
                        bytes_in,
                        101,
                    ));
                }
                Ok(Some(head)) if (100..200).contains(&head.status) => {
                    buf.copy_within(head.len..filled, 0);
                    filled -= head.len;
                    scanned = 0;
                    continue;
                }
                Ok(Some(head)) => {
                    return Ok(HeadRead {
                        head,
                        filled,
                        bytes_in,
                    })
                }
                Ok(None) => {}
                Err(detail) => {
                    return Err(read_failure(
                        ErrorKind::InvalidResponse,
                        detail,
                        bytes_in,
                        0,
                    ))
                }
            }
        }
        if filled == buf.len() && !grow(buf) {
            return Err(read_failure(
                ErrorKind::InvalidResponse,
                format!("response head larger than {} KiB", buf.len() / 1024),
                bytes_in,
                0,
            ));
        }
        let n = match stream.read(&mut buf[filled..]).await {
            Ok(0) => {
                let detail = if bytes_in == 0 {
                    "connection closed before any response byte"
                } else {
                    "connection closed in the middle of the response head"
                };
                return Err(read_failure(ErrorKind::Closed, detail, bytes_in, 0));
            }
            Ok(n) => n,
            Err(e) => {
                return Err(read_failure(
                    read_error_kind(&e),
                    e.to_string(),
                    bytes_in,
                    0,
                ))
            }
        };
        if first {
            on_first_byte();
            first = false;
        }
        filled += n;
        bytes_in += n as u64;
    }
}

/// What a body cut short by a closed connection fails with: a body of
/// known length, and a chunked body.
const CUT_IN_BODY: &str = "connection closed before the body was complete";
const CUT_IN_CHUNKS: &str = "connection closed before the last chunk";

/// What a read of more of a body got: its length, counted in `bytes_in`;
/// or its failure, a closed connection's as `closed` says, with the
/// response's `status`.
fn read_more(
    read: std::io::Result<usize>,
    status: u16,
    bytes_in: &mut u64,
    closed: &str,
) -> Result<usize, Failure> {
    match read {
        Ok(0) => Err(read_failure(ErrorKind::Closed, closed, *bytes_in, status)),
        Ok(n) => {
            *bytes_in += n as u64;
            Ok(n)
        }
        Err(e) => Err(read_failure(
            read_error_kind(&e),
            e.to_string(),
            *bytes_in,
            status,
        )),
    }
}

/// Reads the body that follows `read`'s head (its first bytes already in
/// `buf`) as its framing says, counting and discarding it.
async fn read_body<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut Vec<u8>,
    read: HeadRead,
    mut copy: Option<&mut Vec<u8>>,
    mut events: Option<
        Events<
            '_,
            S,
            impl Fn(Option<u64>) -> Nanos,
            impl FnMut(Nanos, Option<u64>, crate::events::SentAt),
        >,
    >,
) -> Result<Response, Failure> {
    let HeadRead {
        head,
        filled,
        mut bytes_in,
    } = read;
    let status = head.status;
    let mut reusable = head.reusable;
    let fail = |kind, detail: &str, bytes_in| Err(read_failure(kind, detail, bytes_in, status));
    let mut body_bytes = 0u64;
    let mut leftover = &buf[head.len..filled];
    match head.framing {
        Framing::Length(len) => {
            let mut remaining = len;
            loop {
                let take = (leftover.len() as u64).min(remaining);
                keep(&mut copy, &leftover[..take as usize]);
                if let Some(e) = &mut events {
                    e.feed(stream, &leftover[..take as usize], true);
                }
                remaining -= take;
                body_bytes += take;
                if leftover.len() as u64 > take {
                    // Bytes beyond the response: we never pipeline, so the
                    // server said something unasked. Don't reuse.
                    reusable = false;
                }
                if remaining == 0 {
                    break;
                }
                if leftover.len() == buf.len() {
                    grow(buf);
                }
                let n = read_more(stream.read(buf).await, status, &mut bytes_in, CUT_IN_BODY)?;
                leftover = &buf[..n];
            }
        }
        Framing::Chunked => {
            let mut decoder = ChunkedDecoder::default();
            loop {
                let fed = match &mut events {
                    Some(e) => {
                        // The arrival of the read that holds the data.
                        let at = (e.clock)((e.arrival)(stream));
                        let Events { tap, sink, .. } = e;
                        let tap = tap.as_deref_mut().expect("a started stream has its tap");
                        decoder.feed(leftover, &mut |data, fresh| {
                            keep(&mut copy, data);
                            tap.feed(data, fresh, at, sink)
                        })
                    }
                    // A step's copy gets the chunks' data, decoded here
                    // once (its extractors read the body, not its framing).
                    None => decoder.feed(leftover, &mut |data, _| keep(&mut copy, data)),
                };
                match fed {
                    Ok(Some(used)) => {
                        if used < leftover.len() {
                            reusable = false;
                        }
                        break;
                    }
                    Ok(None) => {}
                    Err(detail) => return fail(ErrorKind::InvalidResponse, detail, bytes_in),
                }
                if leftover.len() == buf.len() {
                    grow(buf);
                }
                let n = read_more(stream.read(buf).await, status, &mut bytes_in, CUT_IN_CHUNKS)?;
                leftover = &buf[..n];
            }
            body_bytes = decoder.body_bytes;
        }
        Framing::UntilClose => {
            reusable = false;
            body_bytes += leftover.len() as u64;
            keep(&mut copy, leftover);
            if let Some(e) = &mut events {
                e.feed(stream, leftover, true);
            }
            loop {
                match stream.read(buf).await {
                    Ok(0) => break,
                    Ok(n) => {
                        keep(&mut copy, &buf[..n]);
                        if let Some(e) = &mut events {
                            e.feed(stream, &buf[..n], true);
                        }
                        bytes_in += n as u64;
                        body_bytes += n as u64;
                        if n == buf.len() {
                            grow(buf);
                        }
                    }
                    // rustls reports a close without close_notify as an
                    // unexpected EOF; for a body that ends at the close,
                    // the close is the end.
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                    Err(e) => return fail(read_error_kind(&e), &e.to_string(), bytes_in),
                }
            }
        }
        Framing::None => {
            if !leftover.is_empty() {
                reusable = false;
            }
        }
    }
    if let Some(e) = &mut events {
        e.finish(stream);
    }
    Ok(Response {
        status,
        bytes_in,
        body_bytes,
        reusable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h1::READ_BUF;

    async fn read_all_split(data: &[u8], split: usize, head: bool) -> Result<Response, Failure> {
        read_split_into(&mut vec![0u8; READ_BUF], data, split, head).await
    }

    async fn read_split_into(
        buf: &mut Vec<u8>,
        data: &[u8],
        split: usize,
        head: bool,
    ) -> Result<Response, Failure> {
        // A reader that hands out at most `split` bytes per read, to
        // exercise every state boundary.
        let (mut client, mut server) = tokio::io::duplex(64 * 1024);
        let data = data.to_vec();
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            for chunk in data.chunks(split) {
                server.write_all(chunk).await.unwrap();
                tokio::task::yield_now().await;
            }
        });
        let mut got_first = false;
        let r = read_response(&mut client, buf, head, || got_first = true).await;
        assert!(got_first || r.is_err());
        r
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
    }

    #[test]
    fn frames_content_length_chunked_and_close() {
        let rt = rt();
        let cl = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n";
        let close = b"HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\nbody until close";
        for split in [1, 3, 7, 1000] {
            let r = rt.block_on(read_all_split(cl, split, false)).unwrap();
            assert_eq!((r.status, r.body_bytes, r.reusable), (200, 5, true));
            assert_eq!(r.bytes_in, cl.len() as u64);
            let r = rt.block_on(read_all_split(chunked, split, false)).unwrap();
            assert_eq!(
                (r.status, r.body_bytes, r.reusable),
                (200, 11, true),
                "split {split}"
            );
            let r = rt.block_on(read_all_split(close, split, false)).unwrap();
            assert_eq!((r.status, r.body_bytes, r.reusable), (404, 16, false));
        }
    }

    /// Issue 27: a connection's buffer starts small (memory per idle
    /// connection) and grows, up to `READ_BUF`, for a head that does not
    /// fit and for a body that fills it; a head beyond `READ_BUF` is
    /// refused as before.
    #[test]
    fn a_small_buffer_grows_for_big_heads_and_bodies_only() {
        use crate::h1::FIRST_READ_BUF;
        let rt = rt();
        let small = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n";
        let mut buf = vec![0u8; FIRST_READ_BUF];
        let r = rt.block_on(read_split_into(&mut buf, small, 1000, false));
        assert_eq!(r.unwrap().body_bytes, 3);
        assert_eq!(
            buf.len(),
            FIRST_READ_BUF,
            "a small response leaves it small"
        );
        // A 10 KiB head: grows until it fits.
        let fat = format!(
            "HTTP/1.1 200 OK\r\nX-Fat: {}\r\nContent-Length: 2\r\n\r\nok",
            "a".repeat(10 * 1024)
        );
        for split in [1_000, 64 * 1024] {
            let mut buf = vec![0u8; FIRST_READ_BUF];
            let r = rt.block_on(read_split_into(&mut buf, fat.as_bytes(), split, false));
            let r = r.unwrap();
            assert_eq!((r.status, r.body_bytes), (200, 2));
            assert_eq!(r.bytes_in, fat.len() as u64);
            assert_eq!(buf.len(), READ_BUF);
        }
        // A 100 KiB body, by length, chunked or until the close.
        let body = "b".repeat(100 * 1024);
        for wire in [
            format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            ),
            format!(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
                body.len()
            ),
            format!("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{body}"),
        ] {
            let mut buf = vec![0u8; FIRST_READ_BUF];
            let r = rt.block_on(read_split_into(&mut buf, wire.as_bytes(), 64 * 1024, false));
            assert_eq!(r.unwrap().body_bytes, body.len() as u64);
            assert_eq!(buf.len(), READ_BUF, "{}", &wire[..40]);
        }
        let too_fat = format!("HTTP/1.1 200 OK\r\nX-Fat: {}\r\n\r\n", "a".repeat(READ_BUF));
        let mut buf = vec![0u8; FIRST_READ_BUF];
        let e = rt
            .block_on(read_split_into(
                &mut buf,
                too_fat.as_bytes(),
                64 * 1024,
                false,
            ))
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidResponse);
        assert!(e.detail.contains("larger than 16 KiB"), "{}", e.detail);
    }

    #[test]
    fn skips_interim_and_honours_head_and_http10() {
        let rt = rt();
        let r = rt
            .block_on(read_all_split(
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
                4,
                false,
            ))
            .unwrap();
        assert_eq!((r.status, r.body_bytes), (201, 2));
        let r = rt
            .block_on(read_all_split(
                b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n",
                100,
                true,
            ))
            .unwrap();
        assert_eq!((r.body_bytes, r.reusable), (0, true));
        let r = rt
            .block_on(read_all_split(
                b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n",
                100,
                false,
            ))
            .unwrap();
        assert!(!r.reusable);
    }

    #[test]
    fn classifies_broken_responses() {
        let rt = rt();
        let cases: [(&[u8], ErrorKind); 10] = [
            (
                b"HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n",
                ErrorKind::InvalidResponse,
            ),
            (
                b"HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n",
                ErrorKind::InvalidResponse,
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello",
                ErrorKind::InvalidResponse,
            ),
            (
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
                ErrorKind::InvalidResponse,
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n",
                ErrorKind::InvalidResponse,
            ),
            (b"", ErrorKind::Closed),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
                ErrorKind::Closed,
            ),
            (b"garbage\r\n\r\n", ErrorKind::InvalidResponse),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
                ErrorKind::InvalidResponse,
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                ErrorKind::InvalidResponse,
            ),
        ];
        for (data, kind) in cases {
            let e = rt.block_on(read_all_split(data, 5, false)).unwrap_err();
            assert_eq!(e.kind, kind, "{}", String::from_utf8_lossy(data));
        }
    }

    #[test]
    fn odd_but_valid_framing() {
        let rt = rt();
        // Leading zeros do not make a chunk size too long.
        let zeros = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n00000000000000000005\r\nhello\r\n0\r\n\r\n";
        // A coding other than chunked runs to the close, Content-Length or not.
        let gzip = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nabcdef";
        // More headers than a small fixed array would hold.
        let mut many = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n".to_vec();
        for i in 0..100 {
            many.extend_from_slice(format!("X-H{i}: {i}\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\nok");
        for split in [1, 4, 1000] {
            let r = rt.block_on(read_all_split(zeros, split, false)).unwrap();
            assert_eq!((r.body_bytes, r.reusable), (5, true), "split {split}");
            let r = rt.block_on(read_all_split(gzip, split, false)).unwrap();
            assert_eq!((r.body_bytes, r.reusable), (6, false), "split {split}");
            let r = rt.block_on(read_all_split(&many, split, false)).unwrap();
            assert_eq!((r.status, r.body_bytes), (200, 2), "split {split}");
        }
    }

    /// Issue 38: a streamed body's events are cut as it arrives, whatever
    /// its framing (chunked, by length, to the close) and wherever the
    /// reads split it; a type that names no stream is no stream unless
    /// `--stream` says so, and an error status never is one.
    #[test]
    fn streamed_bodies_give_their_events_in_any_framing_and_split() {
        use pelt_core::stream::{Framing, StreamOptions};
        let body = "data: a\r\n\r\n: ping\n\ndata: b\ndata: c\n\nevent: x\ndata: d\n\n";
        let sse = "Content-Type: text/event-stream; charset=utf-8";
        let mut chunked = format!("HTTP/1.1 200 OK\r\n{sse}\r\nTransfer-Encoding: chunked\r\n\r\n");
        for piece in body.as_bytes().chunks(7) {
            chunked.push_str(&format!(
                "{:x}\r\n{}\r\n",
                piece.len(),
                std::str::from_utf8(piece).unwrap()
            ));
        }
        chunked.push_str("0\r\n\r\n");
        let length = format!(
            "HTTP/1.1 200 OK\r\n{sse}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let close = format!("HTTP/1.1 200 OK\r\n{sse}\r\nConnection: close\r\n\r\n{body}");
        let plain = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let error = format!(
            "HTTP/1.1 503 No\r\n{sse}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let rt = rt();
        let events = |wire: &str, split: usize, opts: &StreamOptions| {
            let mut tap = None;
            let mut seen = 0u64;
            let data = wire.as_bytes().to_vec();
            let r = rt.block_on(async {
                let (mut client, mut server) = tokio::io::duplex(64 * 1024);
                tokio::spawn(async move {
                    use tokio::io::AsyncWriteExt;
                    for chunk in data.chunks(split) {
                        server.write_all(chunk).await.unwrap();
                        tokio::task::yield_now().await;
                    }
                });
                let events = Events {
                    tap: &mut tap,
                    opts,
                    arrival: |_: &tokio::io::DuplexStream| None,
                    clock: |_| 1,
                    sink: |_, _, _| seen += 1,
                };
                let mut buf = vec![0u8; crate::h1::FIRST_READ_BUF];
                read_response_copies(
                    &mut client,
                    &mut buf,
                    false,
                    || {},
                    Copies::default(),
                    Some(events),
                )
                .await
            });
            r.unwrap();
            let active = tap.as_ref().is_some_and(|t| t.active);
            (active, seen, tap.map_or(0, |t| t.tally.events))
        };
        let auto = StreamOptions::default();
        for split in [1, 2, 3, 5, 8, 13, 1000] {
            for wire in [&chunked, &length, &close] {
                assert_eq!(
                    events(wire, split, &auto),
                    (true, 3, 3),
                    "split {split}: {wire}"
                );
            }
            assert!(!events(&plain, split, &auto).0);
            assert!(!events(&error, split, &auto).0, "a 503 is no stream");
            let lines = StreamOptions {
                framing: Some(Framing::Lines),
                ..StreamOptions::default()
            };
            // Six non-blank lines.
            assert_eq!(events(&plain, split, &lines), (true, 6, 6), "split {split}");
        }
    }

    /// The `Server` header is taken from the final response's head,
    /// however its name is cased, past a 100 Continue and a body that
    /// spans reads; a response without one gives `None`.
    #[test]
    fn copies_the_server_header_when_asked() {
        let server = |data: &'static [u8], split: usize| {
            rt().block_on(async move {
                let (mut client, mut peer) = tokio::io::duplex(64 * 1024);
                tokio::spawn(async move {
                    use tokio::io::AsyncWriteExt;
                    for chunk in data.chunks(split) {
                        peer.write_all(chunk).await.unwrap();
                        tokio::task::yield_now().await;
                    }
                });
                let mut buf = vec![0u8; READ_BUF];
                // Set beforehand: a response without one must clear it.
                let mut server = Some("stale".to_string());
                let copies = Copies {
                    server: Some(&mut server),
                    body: None,
                    ..Copies::default()
                };
                let r = read_response_copies(
                    &mut client,
                    &mut buf,
                    false,
                    || {},
                    copies,
                    None::<NoEvents<'_, _>>,
                )
                .await
                .unwrap();
                (r.body_bytes, server)
            })
        };
        let nginx = b"HTTP/1.1 100 Continue\r\nServer: interim\r\n\r\nHTTP/1.1 200 OK\r\nsErVeR:  nginx/1.22.1 \r\nContent-Length: 5\r\n\r\nhello";
        for split in [1, 7, nginx.len()] {
            assert_eq!(server(nginx, split), (5, Some("nginx/1.22.1".into())));
        }
        let none = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        assert_eq!(server(none, 3), (2, None));
        let empty = b"HTTP/1.1 200 OK\r\nServer:\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(server(empty, 64), (0, None));
    }
}
