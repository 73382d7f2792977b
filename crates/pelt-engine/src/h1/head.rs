//! A response head parsed and framed: status, how its body is delimited,
//! whether the connection may be reused; and the header values a caller
//! may ask to have copied out of it.

/// Response headers parsed on the stack: real servers send a dozen or two.
/// (The array is zeroed for every response, so it stays small.)
const MAX_HEADERS: usize = 64;
/// Heads with more (CDNs and frameworks can send many) are parsed again
/// with room for this many on the heap; beyond that, a head is invalid.
const MAX_HEADERS_LARGE: usize = 256;

/// The `Server` header's value in a complete response head, trimmed, any
/// bytes outside UTF-8 replaced; `None` without one (or an empty one).
pub(super) fn server_of(head: &[u8]) -> Option<String> {
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
pub(super) fn copy_location(head: &[u8], out: &mut Vec<u8>) {
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

/// Whether `b` holds an empty line (`\n\n` or `\n\r\n`): the end of a head.
pub(super) fn has_blank_line(b: &[u8]) -> bool {
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

/// How a response's body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Framing {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

/// A complete response head, framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ParsedHead {
    pub status: u16,
    /// Bytes of the head, its blank line included.
    pub len: usize,
    pub framing: Framing,
    /// Whether the connection may carry another request, as far as the
    /// head says.
    pub reusable: bool,
    /// The stream its `Content-Type` names (`text/event-stream`,
    /// `application/x-ndjson`), if any.
    pub stream: Option<pelt_core::stream::Framing>,
    /// Whether it has a `Set-Cookie` field (a scenario's user's jar reads
    /// the head only then).
    pub sets_cookie: bool,
}

/// Parses a response head, or `None` when more bytes are needed.
pub(super) fn parse_head(data: &[u8], head_request: bool) -> Result<Option<ParsedHead>, String> {
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
) -> Result<Option<ParsedHead>, String> {
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
    let mut stream = None;
    let mut sets_cookie = false;
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
        } else if h.name.eq_ignore_ascii_case("content-type") {
            stream = pelt_core::stream::Framing::of_content_type(h.value);
        } else if h.name.eq_ignore_ascii_case("set-cookie") {
            sets_cookie = true;
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
    Ok(Some(ParsedHead {
        status,
        len: head_len,
        framing,
        reusable,
        stream,
        sets_cookie,
    }))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_escape_what_the_server_sent() {
        assert_eq!(
            excerpt(b"HTTP/1.1 9x9\r\n\x1b[2J"),
            r#""HTTP/1.1 9x9\r\n\x1b[2J""#
        );
        assert!(excerpt(&[b'a'; 100]).ends_with("\"..."));
    }
}
