//! A small blocking HTTP/1.1 server for the live views: GET only, one
//! request per connection, a thread per connection and a bounded number
//! of them.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Connections served at once; more are closed at once (a scraper and a
/// few browser tabs need far fewer).
pub const MAX_CONNECTIONS: usize = 64;
/// A client that sends no complete request in this long is dropped.
const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// Request heads larger than this are refused.
const MAX_HEAD: usize = 16 * 1024;

/// Why a live server could not start: bad input, reported before any load.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The address is not IP:PORT.
    #[error(
        "{flag} '{addr}': not an address; give IP:PORT, like {flag} 127.0.0.1:9091 (or :9091)"
    )]
    Address {
        /// The flag.
        flag: &'static str,
        /// What was given.
        addr: String,
    },
    /// Not loopback, and remote access was not allowed.
    #[error("{flag} {addr} is not a loopback address: anyone who can reach it sees the run; use 127.0.0.1:PORT, or add {allow} to mean it")]
    Remote {
        /// The flag.
        flag: &'static str,
        /// The address.
        addr: SocketAddr,
        /// The flag that allows it.
        allow: &'static str,
    },
    /// The port is taken, or binding failed otherwise.
    #[error("{flag} {addr}: cannot listen: {source}; pick another port (or 0 for a free one)")]
    Bind {
        /// The flag.
        flag: &'static str,
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: io::Error,
    },
}

/// A listening socket, bound before the run starts.
#[derive(Debug)]
pub struct Bound {
    listener: TcpListener,
}

impl Bound {
    /// The address it listens on (the port chosen, for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("a bound listener has an address")
    }
}

/// Binds `text` (IP:PORT) for `flag`; refuses a non-loopback address
/// unless `allow_remote` (the flag named `allow`).
pub fn bind(
    flag: &'static str,
    text: &str,
    allow_remote: bool,
    allow: &'static str,
) -> Result<Bound, LiveError> {
    let addr = check_listen(flag, text, allow_remote, allow)?;
    let listener =
        TcpListener::bind(addr).map_err(|source| LiveError::Bind { flag, addr, source })?;
    Ok(Bound { listener })
}

/// What [`bind`] checks before binding: `text` is an address, and
/// loopback unless `allow_remote`. For a launcher, which must refuse what
/// each shard's `pelt run` would, with nothing to bind where it runs.
pub fn check_listen(
    flag: &'static str,
    text: &str,
    allow_remote: bool,
    allow: &'static str,
) -> Result<SocketAddr, LiveError> {
    let addr = listen_addr(text).ok_or_else(|| LiveError::Address {
        flag,
        addr: text.escape_debug().to_string(),
    })?;
    if !addr.ip().is_loopback() && !allow_remote {
        return Err(LiveError::Remote { flag, addr, allow });
    }
    Ok(addr)
}

/// `IP:PORT`, and the short forms people type: `:9091` and `localhost:9091`
/// (both loopback, 127.0.0.1, never every address by surprise).
pub fn listen_addr(text: &str) -> Option<SocketAddr> {
    let text = text.trim();
    if let Ok(addr) = text.parse() {
        return Some(addr);
    }
    let port = text
        .strip_prefix(':')
        .or_else(|| text.strip_prefix("localhost:"))?;
    let port: u16 = port.parse().ok()?;
    Some(SocketAddr::from(([127, 0, 0, 1], port)))
}

/// The URLs at which others can reach `addr`: itself, or, for an
/// unspecified address (0.0.0.0, ::), loopback, the machine's outward
/// address and its host name (a page printed as http://0.0.0.0:PORT
/// cannot be opened from another machine).
pub fn reachable_urls(addr: SocketAddr) -> Vec<String> {
    if !addr.ip().is_unspecified() {
        return vec![format!("http://{addr}")];
    }
    let port = addr.port();
    let v6 = addr.is_ipv6();
    let mut urls = vec![match v6 {
        true => format!("http://[::1]:{port}"),
        false => format!("http://127.0.0.1:{port}"),
    }];
    // The address the system would send from to a remote host: a UDP
    // connect only picks a route, it sends nothing. TEST-NET addresses.
    let outward = match v6 {
        true => std::net::UdpSocket::bind("[::]:0")
            .and_then(|s| s.connect("[2001:db8::1]:9").map(|()| s)),
        false => std::net::UdpSocket::bind("0.0.0.0:0")
            .and_then(|s| s.connect("192.0.2.1:9").map(|()| s)),
    }
    .and_then(|s| s.local_addr())
    .map(|a| a.ip())
    .ok()
    .filter(|ip| !ip.is_loopback() && !ip.is_unspecified());
    if let Some(ip) = outward {
        urls.push(format!("http://{}", SocketAddr::new(ip, port)));
    }
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        let host = host.trim();
        if !host.is_empty() && host != "localhost" {
            urls.push(format!("http://{host}:{port}"));
        }
    }
    urls
}

/// One request, as the handler sees it.
#[derive(Debug)]
pub struct Request<'a> {
    /// The path, without the query.
    pub path: &'a str,
    /// The query string, without '?', empty if none.
    pub query: &'a str,
}

/// What the handler answers.
pub enum Response {
    /// A whole response.
    Whole {
        /// Status line's code and reason.
        status: &'static str,
        /// Content-Type.
        content_type: &'static str,
        /// Body.
        body: Vec<u8>,
        /// Called once the response is written.
        sent: Option<Box<dyn FnOnce() + Send>>,
    },
    /// A stream the handler writes itself after the head (server-sent
    /// events), until it returns.
    Stream {
        /// Content-Type.
        content_type: &'static str,
        /// Writes the body.
        write: Box<dyn FnOnce(&mut TcpStream) + Send>,
    },
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Response::Whole { status, .. } => write!(f, "Response::Whole({status})"),
            Response::Stream { content_type, .. } => write!(f, "Response::Stream({content_type})"),
        }
    }
}

impl Response {
    /// 200 with `body`.
    pub fn ok(content_type: &'static str, body: Vec<u8>) -> Response {
        Response::Whole {
            status: "200 OK",
            content_type,
            body,
            sent: None,
        }
    }

    /// This response, calling `f` once it is written.
    pub fn then(self, f: impl FnOnce() + Send + 'static) -> Response {
        match self {
            Response::Whole {
                status,
                content_type,
                body,
                ..
            } => Response::Whole {
                status,
                content_type,
                body,
                sent: Some(Box::new(f)),
            },
            stream => stream,
        }
    }

    /// 404.
    pub fn not_found() -> Response {
        Response::Whole {
            status: "404 Not Found",
            content_type: "text/plain; charset=utf-8",
            body: b"not found\n".to_vec(),
            sent: None,
        }
    }

    /// 403 with a reason.
    pub fn forbidden(why: &str) -> Response {
        Response::Whole {
            status: "403 Forbidden",
            content_type: "text/plain; charset=utf-8",
            body: format!("{why}\n").into_bytes(),
            sent: None,
        }
    }
}

/// Accepts connections on `bound` from a thread of its own, each served
/// by `handler` on a thread of its own, until the process ends.
pub fn spawn<H>(bound: Bound, handler: H) -> io::Result<()>
where
    H: Fn(Request<'_>) -> Response + Send + Sync + 'static,
{
    let handler = Arc::new(handler);
    let open = Arc::new(AtomicUsize::new(0));
    std::thread::Builder::new()
        .name("pelt-live".into())
        .spawn(move || {
            for stream in bound.listener.incoming() {
                let Ok(stream) = stream else { continue };
                if open.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
                    open.fetch_sub(1, Ordering::AcqRel);
                    continue;
                }
                let handler = Arc::clone(&handler);
                let open_here = Arc::clone(&open);
                let started = std::thread::Builder::new()
                    .name("pelt-live-conn".into())
                    .spawn(move || {
                        let _ = serve_one(stream, &*handler);
                        open_here.fetch_sub(1, Ordering::AcqRel);
                    });
                if started.is_err() {
                    open.fetch_sub(1, Ordering::AcqRel);
                }
            }
        })?;
    Ok(())
}

fn serve_one<H>(mut stream: TcpStream, handler: &H) -> io::Result<()>
where
    H: Fn(Request<'_>) -> Response,
{
    stream.set_read_timeout(Some(READ_TIMEOUT))?;
    stream.set_write_timeout(Some(READ_TIMEOUT))?;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    let target = loop {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf) {
            Ok(httparse::Status::Complete(_)) => {
                if req.method != Some("GET") && req.method != Some("HEAD") {
                    return write_whole(
                        &mut stream,
                        "405 Method Not Allowed",
                        "text/plain; charset=utf-8",
                        b"GET only\n",
                    );
                }
                break req.path.unwrap_or("/").to_string();
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => continue,
            _ => {
                return write_whole(
                    &mut stream,
                    "400 Bad Request",
                    "text/plain; charset=utf-8",
                    b"bad request\n",
                )
            }
        }
    };
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    match handler(Request { path, query }) {
        Response::Whole {
            status,
            content_type,
            body,
            sent,
        } => {
            write_whole(&mut stream, status, content_type, &body)?;
            if let Some(sent) = sent {
                sent();
            }
            Ok(())
        }
        Response::Stream {
            content_type,
            write,
        } => {
            stream.set_write_timeout(None)?;
            write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
            )?;
            write(&mut stream);
            Ok(())
        }
    }
}

fn write_whole(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &[u8],
) -> io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body)?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_listen_addresses_mean_loopback() {
        // Issue 22 §8: `--metrics :9091` and `localhost:9091` were refused.
        let lo = SocketAddr::from(([127, 0, 0, 1], 9091));
        assert_eq!(listen_addr(":9091"), Some(lo));
        assert_eq!(listen_addr("localhost:9091"), Some(lo));
        assert_eq!(listen_addr("127.0.0.1:9091"), Some(lo));
        assert_eq!(listen_addr("[::1]:9091").map(|a| a.port()), Some(9091));
        for bad in ["9091x", ":", ":99999", "localhost", "example.com:9091"] {
            assert_eq!(listen_addr(bad), None, "{bad}");
        }
        let b = bind("--metrics", ":0", false, "--metrics-allow-remote").unwrap();
        assert!(b.local_addr().ip().is_loopback());
    }

    #[test]
    fn an_unspecified_address_is_shown_as_addresses_to_open() {
        let urls = reachable_urls(SocketAddr::from(([0, 0, 0, 0], 9091)));
        assert_eq!(urls[0], "http://127.0.0.1:9091");
        assert!(urls.iter().all(|u| !u.contains("0.0.0.0")), "{urls:?}");
        let one = reachable_urls(SocketAddr::from(([127, 0, 0, 1], 80)));
        assert_eq!(one, vec!["http://127.0.0.1:80".to_string()]);
    }
}
