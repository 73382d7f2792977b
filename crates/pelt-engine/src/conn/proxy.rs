//! `--proxy`: the `CONNECT` exchange that opens a tunnel to an https
//! origin through a forward proxy, and the absolute-form request line
//! plain-HTTP requests take to one.

use super::origin::ProxyRoute;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest `CONNECT` response head read.
const MAX_HEAD: usize = 16 * 1024;

/// Asks the proxy on `tcp` for a tunnel to `authority` (`host:port`);
/// `Ok` once it answers 2xx, the stream then carrying the origin's bytes.
/// Else what the proxy said, for the failure's message.
pub(crate) async fn tunnel(
    tcp: &mut (impl AsyncRead + AsyncWrite + Unpin),
    authority: &str,
    route: &ProxyRoute,
) -> Result<(), String> {
    let mut request = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
    if let Some(auth) = &route.authorization {
        request.push_str(&format!("Proxy-Authorization: {auth}\r\n"));
    }
    request.push_str("\r\n");
    tcp.write_all(request.as_bytes())
        .await
        .map_err(|e| format!("CONNECT {authority}: {e}"))?;
    // Read the head byte by byte: what follows it is the origin's (TLS),
    // and must stay unread. A few dozen bytes, once per connection.
    let mut head = Vec::with_capacity(128);
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match tcp.read(&mut byte).await {
            Ok(0) => {
                return Err(format!(
                    "the proxy closed the connection in answer to CONNECT {authority}"
                ))
            }
            Ok(_) => head.push(byte[0]),
            Err(e) => return Err(format!("CONNECT {authority}: {e}")),
        }
        if head.len() > MAX_HEAD {
            return Err(format!("CONNECT {authority}: response head too large"));
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut resp = httparse::Response::new(&mut headers);
    match resp.parse(&head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err(format!("CONNECT {authority}: not an HTTP response")),
    }
    match resp.code {
        Some(200..=299) => Ok(()),
        Some(407) => Err(format!(
            "407 {} to CONNECT {authority}; give the proxy's credentials as --proxy http://user:pass@host:port",
            resp.reason.unwrap_or("")
        )),
        code => Err(format!(
            "{} {} to CONNECT {authority}",
            code.unwrap_or(0),
            resp.reason.unwrap_or("")
        )),
    }
}

/// `request` (serialised for `url`) as it goes to `origin`: unchanged,
/// or in absolute form with the credentials when `origin` is reached
/// through a forward proxy (plain HTTP; a tunnel carries it unchanged).
pub(crate) fn for_origin(
    request: Vec<u8>,
    url: &pelt_core::Url,
    origin: &super::Origin,
) -> Vec<u8> {
    match &origin.proxy {
        Some(route) if route.tunnel.is_none() => {
            absolute_form(&request, &format!("http://{}", url.host_header()), route)
        }
        _ => request,
    }
}

/// Rewrites a serialised request for a forward proxy: the request target
/// in absolute form (`GET http://host:port/path HTTP/1.1`), plus the
/// proxy's credentials.
pub(crate) fn absolute_form(request: &[u8], origin: &str, route: &ProxyRoute) -> Vec<u8> {
    let mut out = Vec::with_capacity(request.len() + origin.len() + 64);
    match request.iter().position(|&b| b == b' ') {
        Some(sp) => {
            out.extend_from_slice(&request[..=sp]);
            out.extend_from_slice(origin.as_bytes());
            out.extend_from_slice(&request[sp + 1..]);
        }
        None => out.extend_from_slice(request),
    }
    match &route.authorization {
        Some(auth) => {
            let line = format!("Proxy-Authorization: {auth}\r\n");
            let mut with = Vec::with_capacity(out.len() + line.len());
            crate::h1::with_header(&out, line.as_bytes(), &mut with);
            with
        }
        None => out,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn absolute_form_names_the_origin_and_adds_credentials() {
        let route = super::ProxyRoute {
            tunnel: None,
            authorization: Some("Basic dTpw".into()),
        };
        let out = super::absolute_form(
            b"GET /p?q HTTP/1.1\r\nHost: h:8\r\n\r\n",
            "http://h:8",
            &route,
        );
        assert_eq!(
            out,
            b"GET http://h:8/p?q HTTP/1.1\r\nHost: h:8\r\nProxy-Authorization: Basic dTpw\r\n\r\n"
        );
    }
}
