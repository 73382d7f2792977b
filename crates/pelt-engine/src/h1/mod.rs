//! HTTP/1.1 on the wire: requests serialised once, responses read into a
//! reusable buffer and framed without allocating. The transport that
//! sends them, one connection per sender, is `sender`.

pub(crate) mod sender;

use crate::transport::outcome::{is_redirect, read_error_kind};
pub use crate::transport::outcome::{Failure, Response};
use pelt_core::{ErrorKind, Target};
use std::io;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Per-connection read buffer. Response heads must fit in it; bodies
/// stream through it. wrk uses 8 KiB; 16 KiB leaves room for fat heads.
pub const READ_BUF: usize = 16 * 1024;
/// Response headers parsed on the stack: real servers send a dozen or two.
/// (The array is zeroed for every response, so it stays small.)
const MAX_HEADERS: usize = 64;
/// Heads with more (CDNs and frameworks can send many) are parsed again
/// with room for this many on the heap; beyond that, a head is invalid.
const MAX_HEADERS_LARGE: usize = 256;

/// A request serialised to bytes before the run starts, so the hot path
/// copies bytes and never formats.
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    /// The whole request: head and body.
    pub bytes: Vec<u8>,
    /// HEAD responses have no body whatever their headers say.
    pub head: bool,
    /// Whether the method is idempotent (RFC 9110 §9.2.2), so that a
    /// request lost to a keep-alive race may be sent again.
    pub idempotent: bool,
}

impl PreparedRequest {
    /// Serialises `target`'s request; without `keepalive` it asks the
    /// server to close the connection after answering.
    pub fn new(target: &Target, keepalive: bool) -> PreparedRequest {
        let mut out = Vec::with_capacity(256 + target.body.len());
        write_request(
            &mut out,
            target,
            &RequestLine {
                method: &target.method,
                url: &target.url,
                body: true,
                keep_host: true,
            },
            keepalive,
        );
        PreparedRequest {
            bytes: out,
            head: target.method.eq_ignore_ascii_case("HEAD"),
            // Methods are case-sensitive: `get` is not GET.
            idempotent: ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]
                .contains(&target.method.as_str()),
        }
    }
}

/// What a request sends instead of its target's method and URL (a
/// redirect): `body: false` drops the body and its headers, `keep_host:
/// false` drops a configured Host header (the URL's is sent instead).
#[derive(Debug, Clone, Copy)]
pub struct RequestLine<'a> {
    /// The method to send.
    pub method: &'a str,
    /// The URL whose path (and host, without `keep_host`) is sent.
    pub url: &'a pelt_core::Url,
    /// Whether the target's body (and its headers) go too.
    pub body: bool,
    /// Whether a Host header configured on the target is kept.
    pub keep_host: bool,
}

/// Serialises `target`'s request, with `line`'s method and URL, into `out`
/// (cleared first).
pub fn write_request(out: &mut Vec<u8>, target: &Target, line: &RequestLine<'_>, keepalive: bool) {
    out.clear();
    let skip = |name: &str| {
        (!line.keep_host && name.eq_ignore_ascii_case("host"))
            || (!line.body
                && ["content-length", "content-type", "transfer-encoding"]
                    .iter()
                    .any(|h| name.eq_ignore_ascii_case(h)))
    };
    let has = |name: &str| {
        target
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name) && !skip(n))
    };
    out.extend_from_slice(line.method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(line.url.path_and_query.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    if !has("host") {
        push_header(out, "Host", &line.url.host_header());
    }
    if !has("user-agent") {
        push_header(
            out,
            "User-Agent",
            concat!("pelt/", env!("CARGO_PKG_VERSION")),
        );
    }
    if !has("accept") {
        push_header(out, "Accept", "*/*");
    }
    for (name, value) in &target.headers {
        if !skip(name) {
            push_header(out, name, value);
        }
    }
    let body: &[u8] = if line.body { &target.body } else { &[] };
    let needs_length = !body.is_empty() || matches!(line.method, "POST" | "PUT" | "PATCH");
    if needs_length && !has("content-length") && !has("transfer-encoding") {
        push_header(out, "Content-Length", &body.len().to_string());
    }
    if !keepalive && !has("connection") {
        push_header(out, "Connection", "close");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
}

fn push_header(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

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
    buf: &mut [u8],
    head_request: bool,
    on_first_byte: impl FnMut(),
) -> Result<Response, Failure> {
    read_response_inner(stream, buf, head_request, on_first_byte, None, None, None).await
}

/// [`read_response`] that also copies a redirect's `Location` value into
/// `location` (cleared first; left empty for other statuses).
pub async fn read_response_location<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut [u8],
    head_request: bool,
    on_first_byte: impl FnMut(),
    location: &mut Vec<u8>,
) -> Result<Response, Failure> {
    read_response_inner(
        stream,
        buf,
        head_request,
        on_first_byte,
        Some(location),
        None,
        None,
    )
    .await
}

/// [`read_response`] that also copies the final response's head (status
/// line and headers) into `head` (cleared first), for `--cookies`, and a
/// redirect's `Location` into `location` if asked.
pub(crate) async fn read_response_head<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut [u8],
    head_request: bool,
    on_first_byte: impl FnMut(),
    location: Option<&mut Vec<u8>>,
    head: &mut Vec<u8>,
) -> Result<Response, Failure> {
    read_response_inner(
        stream,
        buf,
        head_request,
        on_first_byte,
        location,
        Some(head),
        None,
    )
    .await
}

/// [`read_response`] with every copy optional: a redirect's `Location`,
/// the head (`--cookies`) and the `Server` header's value (`server` is set
/// to `None` when the response has none). The sender takes this one only
/// for a worker's first response (see `Runner::wants_server`).
pub(crate) async fn read_response_copies<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut [u8],
    head_request: bool,
    on_first_byte: impl FnMut(),
    location: Option<&mut Vec<u8>>,
    head: Option<&mut Vec<u8>>,
    server: &mut Option<String>,
) -> Result<Response, Failure> {
    read_response_inner(
        stream,
        buf,
        head_request,
        on_first_byte,
        location,
        head,
        Some(server),
    )
    .await
}

/// The `Server` header's value in a complete response head, trimmed, any
/// bytes outside UTF-8 replaced; `None` without one (or an empty one).
fn server_of(head: &[u8]) -> Option<String> {
    // Once per worker: room for every header the parser accepts.
    let mut headers = vec![httparse::EMPTY_HEADER; MAX_HEADERS_LARGE];
    let mut resp = httparse::Response::new(&mut headers);
    resp.parse(head).ok()?;
    let h = resp
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("server"))?;
    let value = h.value.trim_ascii();
    (!value.is_empty()).then(|| String::from_utf8_lossy(value).into_owned())
}

/// Copies the `Location` header's value from a complete response head.
fn copy_location(head: &[u8], out: &mut Vec<u8>) {
    // Rare (redirects only): room for every header the parser accepts.
    let mut headers = vec![httparse::EMPTY_HEADER; MAX_HEADERS_LARGE];
    let mut resp = httparse::Response::new(&mut headers);
    if resp.parse(head).is_ok() {
        if let Some(h) = resp
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("location"))
        {
            out.extend_from_slice(h.value.trim_ascii());
        }
    }
}

async fn read_response_inner<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut [u8],
    head_request: bool,
    mut on_first_byte: impl FnMut(),
    location: Option<&mut Vec<u8>>,
    head_copy: Option<&mut Vec<u8>>,
    server: Option<&mut Option<String>>,
) -> Result<Response, Failure> {
    let mut filled = 0usize;
    let mut bytes_in = 0u64;
    let mut first = true;
    // The head: read until httparse sees a complete one. 1xx interim
    // responses (100 Continue, 103 Early Hints) are skipped.
    //
    // The head is parsed only once a blank line may have arrived: a server
    // that trickles its head a byte at a time would otherwise make every
    // read re-parse all of it.
    let mut scanned = 0usize;
    let (status, head_len, framing, mut reusable) = loop {
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
                Ok(Some(head)) if head.0 == 101 => {
                    // pelt never asks to upgrade: a switch is a protocol
                    // violation, and what follows is not HTTP/1.1.
                    return Err(read_failure(
                        ErrorKind::InvalidResponse,
                        "101 Switching Protocols to a request that asked for no upgrade",
                        bytes_in,
                        101,
                    ));
                }
                Ok(Some(head)) if (100..200).contains(&head.0) => {
                    buf.copy_within(head.1..filled, 0);
                    filled -= head.1;
                    scanned = 0;
                    continue;
                }
                Ok(Some(head)) => break head,
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
        if filled == buf.len() {
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
    };

    if let Some(out) = head_copy {
        out.clear();
        out.extend_from_slice(&buf[..head_len]);
    }
    if let Some(out) = server {
        *out = server_of(&buf[..head_len]);
    }
    if let Some(out) = location {
        out.clear();
        if is_redirect(status) {
            copy_location(&buf[..head_len], out);
        }
    }
    let fail = |kind, detail: &str, bytes_in| Err(read_failure(kind, detail, bytes_in, status));
    let mut body_bytes = 0u64;
    let mut leftover = &buf[head_len..filled];
    match framing {
        Framing::Length(len) => {
            let mut remaining = len;
            loop {
                let take = (leftover.len() as u64).min(remaining);
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
                let n = match stream.read(buf).await {
                    Ok(0) => {
                        return fail(
                            ErrorKind::Closed,
                            "connection closed before the body was complete",
                            bytes_in,
                        )
                    }
                    Ok(n) => n,
                    Err(e) => return fail(read_error_kind(&e), &e.to_string(), bytes_in),
                };
                bytes_in += n as u64;
                leftover = &buf[..n];
            }
        }
        Framing::Chunked => {
            let mut decoder = ChunkedDecoder::default();
            loop {
                match decoder.feed(leftover) {
                    Ok(Some(used)) => {
                        if used < leftover.len() {
                            reusable = false;
                        }
                        break;
                    }
                    Ok(None) => {}
                    Err(detail) => return fail(ErrorKind::InvalidResponse, detail, bytes_in),
                }
                let n = match stream.read(buf).await {
                    Ok(0) => {
                        return fail(
                            ErrorKind::Closed,
                            "connection closed before the last chunk",
                            bytes_in,
                        )
                    }
                    Ok(n) => n,
                    Err(e) => return fail(read_error_kind(&e), &e.to_string(), bytes_in),
                };
                bytes_in += n as u64;
                leftover = &buf[..n];
            }
            body_bytes = decoder.body_bytes;
        }
        Framing::UntilClose => {
            reusable = false;
            body_bytes += leftover.len() as u64;
            loop {
                match stream.read(buf).await {
                    Ok(0) => break,
                    Ok(n) => {
                        bytes_in += n as u64;
                        body_bytes += n as u64;
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
    Ok(Response {
        status,
        bytes_in,
        body_bytes,
        reusable,
    })
}

/// Whether `b` holds an empty line (`\n\n` or `\n\r\n`): the end of a head.
fn has_blank_line(b: &[u8]) -> bool {
    let mut i = 0;
    while let Some(p) = b[i..].iter().position(|&c| c == b'\n') {
        let j = i + p;
        match b.get(j + 1) {
            Some(b'\n') => return true,
            Some(b'\r') if b.get(j + 2) == Some(&b'\n') => return true,
            _ => i = j + 1,
        }
    }
    false
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

/// Parses a response head: `(status, head length, framing, reusable)`, or
/// `None` when more bytes are needed.
fn parse_head(
    data: &[u8],
    head_request: bool,
) -> Result<Option<(u16, usize, Framing, bool)>, String> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    match resp.parse(data) {
        Err(httparse::Error::TooManyHeaders) => {
            let mut many = vec![httparse::EMPTY_HEADER; MAX_HEADERS_LARGE];
            let mut resp = httparse::Response::new(&mut many);
            let parsed = resp.parse(data);
            frame_head(data, &resp, parsed, head_request)
        }
        parsed => frame_head(data, &resp, parsed, head_request),
    }
}

/// Framing from a parsed head (see [`parse_head`]).
fn frame_head(
    data: &[u8],
    resp: &httparse::Response<'_, '_>,
    parsed: httparse::Result<usize>,
    head_request: bool,
) -> Result<Option<(u16, usize, Framing, bool)>, String> {
    let head_len = match parsed {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => {
            return Err(format!(
                "unparsable response head ({e}), starting {}",
                excerpt(data)
            ))
        }
    };
    let status = resp.code.unwrap_or(0);
    if status < 100 {
        // httparse takes any three digits. Status 0 means "none received"
        // to the recorder, so a `000` would vanish from every count.
        return Err(format!(
            "status code {status:03} (HTTP's are 100-999), starting {}",
            excerpt(data)
        ));
    }
    let http10 = resp.version == Some(0);
    let mut reusable = !http10;
    let mut length = None;
    let mut chunked = false;
    let mut encoded = false;
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            // Digits only: `u64::from_str` would also take `+5`.
            let digits = h.value.trim_ascii();
            let v: u64 = (!digits.is_empty() && digits.iter().all(u8::is_ascii_digit))
                .then(|| std::str::from_utf8(digits).ok()?.parse().ok())
                .flatten()
                .ok_or_else(|| format!("invalid Content-Length {}", excerpt(h.value)))?;
            if length.is_some_and(|l| l != v) {
                return Err("conflicting Content-Length headers".into());
            }
            length = Some(v);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            encoded = true;
            chunked = h
                .value
                .rsplit(|&b| b == b',')
                .next()
                .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    reusable = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") && http10 {
                    reusable = true;
                }
            }
        }
    }
    let framing = if head_request || status == 204 || status == 304 || (100..200).contains(&status)
    {
        Framing::None
    } else if chunked {
        Framing::Chunked
    } else if encoded {
        // RFC 9112 6.3: a transfer coding other than a final chunked makes
        // the body run to the close, whatever Content-Length says.
        reusable = false;
        Framing::UntilClose
    } else if let Some(len) = length {
        if len == 0 {
            Framing::None
        } else {
            Framing::Length(len)
        }
    } else {
        Framing::UntilClose
    };
    Ok(Some((status, head_len, framing, reusable)))
}

/// Up to 64 bytes of what the server sent, quoted, with anything that is
/// not printable ASCII escaped: error messages carry server data, and
/// must not carry control characters into a terminal.
pub fn excerpt(data: &[u8]) -> String {
    const MAX: usize = 64;
    let mut out = String::from("\"");
    for &b in data.iter().take(MAX) {
        out.extend(std::ascii::escape_default(b).map(char::from));
    }
    out.push('"');
    if data.len() > MAX {
        out.push_str("...");
    }
    out
}

/// Incremental decoder for `Transfer-Encoding: chunked`, counting body
/// bytes and discarding them.
#[derive(Debug, Default)]
struct ChunkedDecoder {
    state: ChunkState,
    size: u64,
    digits: u32,
    significant: u32,
    body_bytes: u64,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    #[default]
    Size,
    Extension,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerStart,
    Trailer,
    TrailerLf,
    FinalLf,
}

impl ChunkedDecoder {
    /// Consumes `data`. Returns `Some(bytes used)` when the final chunk and
    /// trailers are complete, `None` when more is needed.
    fn feed(&mut self, data: &[u8]) -> Result<Option<usize>, &'static str> {
        use ChunkState::*;
        let mut i = 0;
        while i < data.len() {
            if self.state == Data {
                let take = ((data.len() - i) as u64).min(self.size);
                self.size -= take;
                self.body_bytes += take;
                i += take as usize;
                if self.size == 0 {
                    self.state = DataCr;
                }
                continue;
            }
            let b = data[i];
            i += 1;
            self.state = match (self.state, b) {
                (Size, b';' | b' ' | b'\t') if self.digits > 0 => Extension,
                (Size, b'\r') if self.digits > 0 => SizeLf,
                (Size, _) => {
                    let d = (b as char).to_digit(16).ok_or("invalid chunk size")?;
                    // Leading zeros count as digits (a size was seen) but
                    // not against the limit.
                    if self.size > 0 || d > 0 {
                        self.significant += 1;
                    }
                    self.digits += 1;
                    if self.significant > 15 {
                        return Err("chunk size too large");
                    }
                    self.size = self.size * 16 + u64::from(d);
                    Size
                }
                (Extension, b'\r') => SizeLf,
                (Extension, _) => Extension,
                (SizeLf, b'\n') if self.size == 0 => TrailerStart,
                (SizeLf, b'\n') => Data,
                (DataCr, b'\r') => DataLf,
                (DataLf, b'\n') => {
                    self.digits = 0;
                    self.significant = 0;
                    Size
                }
                (TrailerStart, b'\r') => FinalLf,
                (Trailer, b'\r') => TrailerLf,
                (TrailerStart | Trailer, _) => Trailer,
                (TrailerLf, b'\n') => TrailerStart,
                (FinalLf, b'\n') => return Ok(Some(i)),
                _ => return Err("malformed chunked encoding"),
            };
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pelt_core::Url;

    async fn read_all_split(data: &[u8], split: usize, head: bool) -> Result<Response, Failure> {
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
        let mut buf = vec![0u8; READ_BUF];
        let mut got_first = false;
        let r = read_response(&mut client, &mut buf, head, || got_first = true).await;
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
                let r = read_response_copies(
                    &mut client,
                    &mut buf,
                    false,
                    || {},
                    None,
                    None,
                    &mut server,
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

    #[test]
    fn excerpts_escape_what_the_server_sent() {
        assert_eq!(
            excerpt(b"HTTP/1.1 9x9\r\n\x1b[2J"),
            r#""HTTP/1.1 9x9\r\n\x1b[2J""#
        );
        assert!(excerpt(&[b'a'; 100]).ends_with("\"..."));
    }

    #[test]
    fn serialises_requests_once_with_the_right_headers() {
        let mut t = Target::get(Url::parse("http://127.0.0.1:8080/p?q=1").unwrap());
        let r = PreparedRequest::new(&t, true);
        let text = String::from_utf8(r.bytes).unwrap();
        assert!(text.starts_with("GET /p?q=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
        assert!(!text.contains("Connection"));
        assert!(text.ends_with("\r\n\r\n"));

        t.method = "POST".into();
        t.body = b"a=1".to_vec();
        t.headers.push(("Host".into(), "example.test".into()));
        let text = String::from_utf8(PreparedRequest::new(&t, false).bytes).unwrap();
        assert!(text.contains("Host: example.test\r\n"));
        assert!(!text.contains("127.0.0.1"));
        assert!(text.contains("Content-Length: 3\r\n"));
        assert!(text.contains("Connection: close\r\n"));
        assert!(text.ends_with("\r\n\r\na=1"));
    }
}
