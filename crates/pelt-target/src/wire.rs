//! HTTP/1.1 bytes: request heads in (httparse), response heads out.
//!
//! Both directions are pure functions over byte buffers so they can be tested
//! without sockets and cost no allocation: the connection reuses one output
//! `Vec` for every response.

use crate::query::{self, ParamError, Params};

/// Largest request head accepted; a bigger one gets 431 and a close.
pub(crate) const MAX_HEAD: usize = 64 * 1024;

/// Headers parsed per request. More than this is answered like an oversized
/// head (431), which is what the client would get from most servers.
const MAX_HEADERS: usize = 96;

/// Static filler for response bodies. Bodies larger than this are written as
/// the same slice repeated (vectored writes), so one small buffer that stays
/// in cache serves any `size` without a per-server or per-request allocation.
pub(crate) static FILLER: [u8; 64 * 1024] = [b'x'; 64 * 1024];

/// A parsed request head, owning nothing from the read buffer.
#[derive(Debug)]
pub(crate) struct Head {
    /// Bytes of the head, including the blank line.
    pub len: usize,
    /// `HEAD` request: headers only.
    pub head_only: bool,
    /// HTTP/1.0 client (no chunked responses, close by default).
    pub http10: bool,
    /// Whether the connection stays open after the response.
    pub keep_alive: bool,
    /// Request body bytes to read and discard.
    pub body_len: u64,
    /// The client waits for `100 Continue` before sending the body.
    pub expect_continue: bool,
    pub params: Result<Params, ParamError>,
    /// A WebSocket upgrade's `Sec-WebSocket-Key` (with `Upgrade:
    /// websocket`).
    pub ws_key: Option<String>,
}

/// A request the server cannot frame; answered with an error, then closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reject {
    /// Not HTTP/1.x, or conflicting Content-Length: 400.
    Malformed,
    /// Head over [`MAX_HEAD`] or too many headers: 431.
    HeadTooLarge,
    /// A Transfer-Encoding request body: 501 (only Content-Length bodies are
    /// read, which is all a load generator sends).
    TransferEncoding,
}

impl Reject {
    pub(crate) fn status(self) -> u16 {
        match self {
            Reject::Malformed => 400,
            Reject::HeadTooLarge => 431,
            Reject::TransferEncoding => 501,
        }
    }

    pub(crate) fn message(self) -> &'static [u8] {
        match self {
            Reject::Malformed => b"malformed HTTP/1.x request\n",
            Reject::HeadTooLarge => b"request head too large (limit 64 KiB, 96 headers)\n",
            Reject::TransferEncoding => {
                b"Transfer-Encoding request bodies are not supported; send Content-Length\n"
            }
        }
    }
}

// `Head` carries an inline `location=` value (a few hundred bytes, copied
// once per request); boxing it would allocate per request instead.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Parsed {
    Complete(Head),
    /// Need more bytes.
    Partial,
    Reject(Reject),
}

/// Parses one request head from the start of `bytes`.
pub(crate) fn parse_head(bytes: &[u8], max_body: usize) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let len = match req.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(httparse::Error::TooManyHeaders) => return Parsed::Reject(Reject::HeadTooLarge),
        Err(_) => return Parsed::Reject(Reject::Malformed),
    };
    let http10 = req.version == Some(0);
    let mut body_len: Option<u64> = None;
    let mut conn_close = false;
    let mut conn_keep_alive = false;
    let mut expect_continue = false;
    let mut upgrade_ws = false;
    let mut ws_key = None;
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let Some(n) = parse_content_length(h.value) else {
                return Parsed::Reject(Reject::Malformed);
            };
            // Two different lengths make the framing ambiguous (request
            // smuggling territory): refuse rather than guess.
            if body_len.is_some_and(|prev| prev != n) {
                return Parsed::Reject(Reject::Malformed);
            }
            body_len = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Parsed::Reject(Reject::TransferEncoding);
        } else if h.name.eq_ignore_ascii_case("expect") {
            expect_continue = h.value.trim_ascii().eq_ignore_ascii_case(b"100-continue");
        } else if h.name.eq_ignore_ascii_case("upgrade") {
            upgrade_ws = h
                .value
                .split(|&b| b == b',')
                .any(|t| t.trim_ascii().eq_ignore_ascii_case(b"websocket"));
        } else if h.name.eq_ignore_ascii_case("sec-websocket-key") {
            ws_key = std::str::from_utf8(h.value.trim_ascii())
                .ok()
                .map(str::to_string);
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                conn_close |= token.eq_ignore_ascii_case(b"close");
                conn_keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        }
    }
    let keep_alive = if http10 {
        conn_keep_alive && !conn_close
    } else {
        !conn_close
    };
    Parsed::Complete(Head {
        len,
        head_only: req.method == Some("HEAD"),
        http10,
        keep_alive,
        body_len: body_len.unwrap_or(0),
        expect_continue: expect_continue && !http10,
        params: query::parse_target(req.path.unwrap_or("/"), max_body),
        ws_key: ws_key.filter(|_| upgrade_ws && !http10 && req.method == Some("GET")),
    })
}

fn parse_content_length(value: &[u8]) -> Option<u64> {
    let value = value.trim_ascii();
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // At most 19 digits, so this fits in a u64.
    Some(
        value
            .iter()
            .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')),
    )
}

/// How the response body is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    Length(usize),
    Chunked,
    /// 204 and 304: HTTP forbids a body and its framing headers.
    NoBody,
}

/// What the `Connection` header says about the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConnHeader {
    /// HTTP/1.1 keep-alive: no header needed.
    None,
    /// HTTP/1.0 keep-alive must be confirmed explicitly.
    KeepAlive,
    Close,
}

impl ConnHeader {
    pub(crate) fn new(keep_alive: bool, http10: bool) -> Self {
        match (keep_alive, http10) {
            (false, _) => ConnHeader::Close,
            (true, true) => ConnHeader::KeepAlive,
            (true, false) => ConnHeader::None,
        }
    }
}

/// Appends a response head. The status line is always HTTP/1.1, which
/// HTTP/1.0 clients accept (RFC 9110 section 2.5).
pub(crate) fn push_head(
    out: &mut Vec<u8>,
    status: u16,
    framing: Framing,
    conn: ConnHeader,
    plain_text: bool,
    location: Option<&[u8]>,
) {
    out.extend_from_slice(b"HTTP/1.1 ");
    push_decimal(out, u64::from(status));
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\nServer: pelt-target\r\n");
    if let Some(loc) = location {
        out.extend_from_slice(b"Location: ");
        out.extend_from_slice(loc);
        out.extend_from_slice(b"\r\n");
    }
    match framing {
        Framing::Length(n) => {
            out.extend_from_slice(b"Content-Length: ");
            push_decimal(out, n as u64);
            out.extend_from_slice(b"\r\n");
        }
        Framing::Chunked => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
        Framing::NoBody => {}
    }
    if plain_text {
        out.extend_from_slice(b"Content-Type: text/plain; charset=utf-8\r\n");
    }
    match conn {
        ConnHeader::None => {}
        ConnHeader::KeepAlive => out.extend_from_slice(b"Connection: keep-alive\r\n"),
        ConnHeader::Close => out.extend_from_slice(b"Connection: close\r\n"),
    }
    out.extend_from_slice(b"\r\n");
}

/// Appends `n` in decimal without going through `fmt` (this runs per
/// response).
pub(crate) fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends `n` in lowercase hex, for chunk sizes.
pub(crate) fn push_hex(out: &mut Vec<u8>, mut n: usize) {
    let mut digits = [0u8; 16];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b"0123456789abcdef"[n & 0xf];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Reason phrases for common codes; clients ignore them, people read them.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => match status / 100 {
            2 => "Success",
            3 => "Redirection",
            4 => "Client Error",
            5 => "Server Error",
            _ => "Unknown",
        },
    }
}

/// The interim response a client sending `Expect: 100-continue` waits for.
pub(crate) const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// A response that is not HTTP: a status that is not three digits and a
/// header line without a colon. Any HTTP/1.x parser rejects it.
/// `fault=extra`: a well-formed response to a request nobody made.
pub(crate) const EXTRA_RESPONSE: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n";
pub(crate) const INVALID_RESPONSE: &[u8] = b"HTTP/1.1 9x9 ???\r\nthis is not a header\r\n\r\n";

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(bytes: &[u8]) -> Head {
        match parse_head(bytes, 1 << 20) {
            Parsed::Complete(h) => h,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn keep_alive_follows_version_and_connection_header() {
        assert!(complete(b"GET / HTTP/1.1\r\n\r\n").keep_alive);
        assert!(!complete(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n").keep_alive);
        assert!(!complete(b"GET / HTTP/1.1\r\nConnection: Upgrade, CLOSE\r\n\r\n").keep_alive);
        assert!(!complete(b"GET / HTTP/1.0\r\n\r\n").keep_alive);
        assert!(complete(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive);
    }

    #[test]
    fn reads_method_length_and_query() {
        let h = complete(b"HEAD /x?status=503 HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
        assert!(h.head_only);
        assert_eq!(h.body_len, 5);
        assert_eq!(h.len, 50);
        assert_eq!(h.params.unwrap().status, 503);
    }

    #[test]
    fn rejects_what_it_cannot_frame() {
        let reject = |b: &[u8]| match parse_head(b, 1024) {
            Parsed::Reject(r) => r,
            other => panic!("{other:?}"),
        };
        assert_eq!(reject(b"NOT HTTP\r\n\r\n"), Reject::Malformed);
        assert_eq!(
            reject(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
            Reject::Malformed
        );
        assert_eq!(
            reject(b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"),
            Reject::Malformed
        );
        assert_eq!(
            reject(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Reject::TransferEncoding
        );
        let many = format!("GET / HTTP/1.1\r\n{}\r\n", "a: b\r\n".repeat(200));
        assert_eq!(reject(many.as_bytes()), Reject::HeadTooLarge);
        assert!(matches!(
            parse_head(b"GET / HTTP/1.1\r\nHost: x", 1024),
            Parsed::Partial
        ));
    }

    #[test]
    fn formats_heads() {
        let mut out = Vec::new();
        push_head(
            &mut out,
            200,
            Framing::Length(1234),
            ConnHeader::None,
            false,
            None,
        );
        assert_eq!(
            out,
            b"HTTP/1.1 200 OK\r\nServer: pelt-target\r\nContent-Length: 1234\r\n\r\n"
        );
        out.clear();
        push_head(
            &mut out,
            799,
            Framing::Chunked,
            ConnHeader::Close,
            false,
            None,
        );
        assert_eq!(
            out,
            b"HTTP/1.1 799 Unknown\r\nServer: pelt-target\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        );
        out.clear();
        push_decimal(&mut out, 0);
        push_hex(&mut out, 0x1000);
        push_hex(&mut out, 0);
        assert_eq!(out, b"010000");
    }

    #[test]
    fn invalid_response_does_not_parse() {
        let mut headers = [httparse::EMPTY_HEADER; 4];
        let mut res = httparse::Response::new(&mut headers);
        assert!(res.parse(INVALID_RESPONSE).is_err());
    }
}
