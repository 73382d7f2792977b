//! Requests as `http` parts, for the protocols that send fields rather
//! than bytes (HTTP/2, HTTP/3): a target's built once before the run,
//! each send cloning it (reference counts, and one header map); a
//! scenario step's made from its rendered HTTP/1.1 bytes per request. Both
//! protocols send the same parts and count the same bytes (header sections
//! at their HPACK size). The transports that send them are
//! `transport::h2` and `transport::h3`, through `transport::stream`.

use bytes::Bytes;
use pelt_core::Target;

/// HPACK's per-field overhead (RFC 7541 §4.1), used to size header blocks.
const HPACK_FIELD_OVERHEAD: u64 = 32;

/// A request as `http` parts, whichever protocol sends it; each send
/// clones its parts (reference-counted, except the header map).
#[derive(Debug, Clone)]
pub(crate) struct PreparedParts {
    pub(crate) method: http::Method,
    pub(crate) uri: http::Uri,
    pub(crate) headers: http::HeaderMap,
    pub(crate) body: Bytes,
    /// Header block size (name + value + 32 per field, pseudo-headers
    /// included) plus the body: what `bytes_out` counts for HTTP/2 and
    /// HTTP/3.
    pub(crate) bytes_out: u64,
}

impl PreparedParts {
    /// Builds the request for `target`, or says why HTTP/2 cannot send it.
    pub fn new(target: &Target) -> Result<PreparedParts, String> {
        let method = http::Method::from_bytes(target.method.as_bytes())
            .map_err(|_| format!("invalid method '{}'", target.method))?;
        // `Host` becomes :authority; HTTP/1.1's connection headers have no
        // meaning in HTTP/2 and are forbidden there (RFC 9113 §8.2.2).
        let authority = target
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("host"))
            .map_or_else(|| target.url.host_header(), |(_, v)| v.clone());
        let scheme = target.url.scheme.name();
        let uri: http::Uri = format!("{scheme}://{authority}{}", target.url.path_and_query)
            .parse()
            .map_err(|e| format!("cannot send {} over HTTP/2: {e}", target.url))?;
        let mut headers = http::HeaderMap::new();
        let has = |name: &str| {
            target
                .headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(name))
        };
        let mut add = |name: &str, value: &str| -> Result<(), String> {
            let n = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("invalid header name '{name}'"))?;
            let v = http::HeaderValue::from_str(value)
                .map_err(|_| format!("invalid value for header '{name}'"))?;
            headers.append(n, v);
            Ok(())
        };
        if !has("user-agent") {
            add("user-agent", concat!("pelt/", env!("CARGO_PKG_VERSION")))?;
        }
        if !has("accept") {
            add("accept", "*/*")?;
        }
        for (name, value) in &target.headers {
            if name.eq_ignore_ascii_case("host")
                || HOP_BY_HOP.iter().any(|h| name.eq_ignore_ascii_case(h))
            {
                continue;
            }
            add(name, value)?;
        }
        let needs_length =
            !target.body.is_empty() || matches!(target.method.as_str(), "POST" | "PUT" | "PATCH");
        if needs_length && !has("content-length") {
            add("content-length", &target.body.len().to_string())?;
        }
        let pseudo = field_size(":method", method.as_str().len())
            + field_size(":scheme", scheme.len())
            + field_size(":authority", authority.len())
            + field_size(":path", target.url.path_and_query.len());
        let bytes_out = pseudo + header_block_size(&headers) + target.body.len() as u64;
        Ok(PreparedParts {
            method,
            uri,
            headers,
            body: Bytes::copy_from_slice(&target.body),
            bytes_out,
        })
    }

    /// A scenario step's request, rendered as HTTP/1.1 bytes (a head, then
    /// the body), as HTTP/2 and HTTP/3 send it: `Host` becomes
    /// `:authority`, HTTP/1.1's connection headers are dropped (as
    /// [`PreparedParts::new`] drops them) and nothing is added, so each
    /// protocol carries the same fields. `Err` says why it cannot be sent
    /// (a header value an extraction filled with bytes HTTP/2 refuses).
    pub fn from_rendered(bytes: &[u8], scheme: &str) -> Result<PreparedParts, String> {
        let mut fields = [httparse::EMPTY_HEADER; 128];
        let mut req = httparse::Request::new(&mut fields);
        let head_len = match req.parse(bytes) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Err("an incomplete request head".into()),
            Err(e) => return Err(format!("a request head HTTP/2 cannot carry ({e})")),
        };
        let method = http::Method::from_bytes(req.method.unwrap_or("GET").as_bytes())
            .map_err(|_| "an invalid method".to_string())?;
        let path = req.path.unwrap_or("/");
        let mut authority: &[u8] = b"";
        let mut headers = http::HeaderMap::with_capacity(req.headers.len());
        for h in req.headers.iter() {
            if h.name.eq_ignore_ascii_case("host") {
                authority = h.value;
                continue;
            }
            if HOP_BY_HOP.iter().any(|n| h.name.eq_ignore_ascii_case(n)) {
                continue;
            }
            let name = http::HeaderName::from_bytes(h.name.as_bytes())
                .map_err(|_| format!("an invalid header name '{}'", h.name))?;
            let value = http::HeaderValue::from_bytes(h.value)
                .map_err(|_| format!("an invalid value for header '{}'", h.name))?;
            headers.append(name, value);
        }
        let authority = std::str::from_utf8(authority).map_err(|_| "an invalid Host")?;
        let uri: http::Uri = format!("{scheme}://{authority}{path}")
            .parse()
            .map_err(|e| format!("a URI HTTP/2 cannot carry ({e})"))?;
        let body = Bytes::copy_from_slice(&bytes[head_len..]);
        let pseudo = field_size(":method", method.as_str().len())
            + field_size(":scheme", scheme.len())
            + field_size(":authority", authority.len())
            + field_size(":path", path.len());
        let bytes_out = pseudo + header_block_size(&headers) + body.len() as u64;
        Ok(PreparedParts {
            method,
            uri,
            headers,
            body,
            bytes_out,
        })
    }

    /// A fresh `http` request with this one's method, URI and headers,
    /// for protocol `version`.
    pub(crate) fn request(&self, version: http::Version) -> http::Request<()> {
        let mut req = http::Request::new(());
        *req.method_mut() = self.method.clone();
        *req.uri_mut() = self.uri.clone();
        *req.version_mut() = version;
        *req.headers_mut() = self.headers.clone();
        req
    }
}

/// HTTP/1.1's connection headers: no meaning in HTTP/2 or HTTP/3, and
/// forbidden there (RFC 9113 §8.2.2).
const HOP_BY_HOP: [&str; 5] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

/// Writes a response's status and fields as an HTTP/1.1 head (status
/// line, `name: value` lines, a blank line) into `out`: the form a
/// scenario's extractors, checks and cookie jar read, whatever protocol
/// carried the response.
pub(crate) fn write_head(status: u16, headers: &http::HeaderMap, out: &mut Vec<u8>) {
    use std::io::Write;
    out.clear();
    let _ = write!(out, "HTTP/1.1 {status} \r\n");
    for (name, value) in headers {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// A header field's HPACK size: name, value and the fixed overhead.
pub(crate) fn field_size(name: &str, value_len: usize) -> u64 {
    (name.len() + value_len) as u64 + HPACK_FIELD_OVERHEAD
}

/// The HPACK size of a header block: an upper bound on what its HEADERS
/// frames carry (h2 does not report the compressed size).
pub(crate) fn header_block_size(headers: &http::HeaderMap) -> u64 {
    headers
        .iter()
        .map(|(n, v)| field_size(n.as_str(), v.len()))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendered_request_keeps_its_fields_and_body_and_drops_connection_headers() {
        let rendered = b"POST /item/17/note?x=1 HTTP/1.1\r\nContent-Type: text/plain\r\n\
            Host: app.test:8443\r\nConnection: close\r\nCookie: sid=1\r\n\
            Content-Length: 5\r\n\r\nhello";
        let r = PreparedParts::from_rendered(rendered, "https").unwrap();
        assert_eq!(r.method, http::Method::POST);
        assert_eq!(r.uri, "https://app.test:8443/item/17/note?x=1");
        assert_eq!(&r.body[..], b"hello");
        let names: Vec<&str> = r.headers.keys().map(|n| n.as_str()).collect();
        assert_eq!(names, ["content-type", "cookie", "content-length"]);
        // Counted as HPACK sizes them, as for a prepared target.
        let pseudo = field_size(":method", 4)
            + field_size(":scheme", 5)
            + field_size(":authority", 13)
            + field_size(":path", 17);
        assert_eq!(r.bytes_out, pseudo + header_block_size(&r.headers) + 5);
    }

    #[test]
    fn a_header_value_http2_refuses_is_an_error_not_a_panic() {
        let rendered = b"GET / HTTP/1.1\r\nHost: a\r\nX-Id: \x01\r\n\r\n";
        let e = PreparedParts::from_rendered(rendered, "http").unwrap_err();
        assert!(e.contains("X-Id") || e.contains("HTTP/2"), "{e}");
    }

    #[test]
    fn a_response_head_is_written_as_http1_for_extractors_and_the_jar() {
        let mut h = http::HeaderMap::new();
        h.append("set-cookie", "a=1".parse().unwrap());
        h.append("x-next", "n42".parse().unwrap());
        let mut out = b"stale".to_vec();
        write_head(201, &h, &mut out);
        assert_eq!(
            out,
            b"HTTP/1.1 201 \r\nset-cookie: a=1\r\nx-next: n42\r\n\r\n".to_vec()
        );
        let mut fields = [httparse::EMPTY_HEADER; 4];
        let mut resp = httparse::Response::new(&mut fields);
        assert!(resp.parse(&out).unwrap().is_complete());
        assert_eq!(resp.code, Some(201));
    }
}
