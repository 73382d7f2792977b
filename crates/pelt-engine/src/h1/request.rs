//! HTTP/1.1 requests serialised to bytes once, before the run, so the hot
//! path copies bytes and never formats.

use pelt_core::Target;

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
            idempotent: is_idempotent(&target.method),
        }
    }
}

/// Whether `method` is idempotent (RFC 9110 §9.2.2), so that a request
/// lost to a keep-alive race may be sent again. Methods are
/// case-sensitive: `get` is not GET.
pub(crate) fn is_idempotent(method: &str) -> bool {
    ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"].contains(&method)
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

/// Writes `request` (a serialised HTTP/1.1 request) into `out` with
/// `line` (a whole header line) added at the end of its head.
pub(crate) fn with_header(request: &[u8], line: &[u8], out: &mut Vec<u8>) {
    // The head ends at the first empty line; the body follows it.
    let end = request
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(request.len(), |p| p + 2);
    out.clear();
    out.extend_from_slice(&request[..end]);
    out.extend_from_slice(line);
    out.extend_from_slice(&request[end..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use pelt_core::Url;

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

    #[test]
    fn the_header_goes_at_the_end_of_the_head_before_the_body() {
        let mut out = Vec::new();
        with_header(
            b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi",
            b"Cookie: a=1\r\n",
            &mut out,
        );
        assert_eq!(
            out,
            b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nCookie: a=1\r\n\r\nhi"
        );
    }
}
