//! Establishing connections: TCP, optionally TLS, each phase timed; QUIC
//! for HTTP/3 ([`quic`]). Where they go is [`origin`]; how TLS is set up,
//! [`tls`].

mod origin;
mod proxy;
mod quic;
mod stamped;
mod tcp;
mod tcp_info;
mod tls;
mod udp_stamp;

pub(crate) use origin::{lookup_origin, resolve_origin, resolve_origins};
pub use origin::{Addr, Origin};
pub(crate) use proxy::for_origin;
pub(crate) use quic::{connect_quic, quic_client_config, Endpoints};
pub use stamped::StampedTcp;
pub(crate) use stamped::{KernelClock, StampsOn};
pub(crate) use tcp_info::{tcp_counts, TcpCounts};
pub(crate) use tls::client_config;
pub use tls::tls_connector;
use tls::{alert_received, no_application_protocol, plain_text_reply};

use crate::outcome::Failure;
use pelt_core::ErrorKind;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;

/// A connected stream, plain or TLS.
#[derive(Debug)]
pub enum Stream {
    /// TCP.
    Plain(StampedTcp),
    /// A Unix domain socket (`--unix-socket`).
    Unix(UnixStream),
    /// TLS over TCP.
    Tls(Box<tokio_rustls::client::TlsStream<StampedTcp>>),
}

impl Stream {
    /// The TCP socket under the stream, for its kernel counts (none for
    /// a Unix socket).
    pub(crate) fn tcp_fd(&self) -> Option<std::os::fd::RawFd> {
        match self {
            Stream::Plain(tcp) => Some(tcp.raw_fd()),
            Stream::Tls(tls) => Some(tls.get_ref().0.raw_fd()),
            Stream::Unix(_) => None,
        }
    }
}

/// Phase times of a new connection, in nanoseconds.
#[derive(Debug, Clone, Copy)]
pub struct Established {
    /// Until the TCP (or Unix socket) connection was up.
    pub connect_ns: u64,
    /// The TLS handshake, for https.
    pub tls_ns: Option<u64>,
    /// The TLS handshake resumed a session (from a ticket or session ID
    /// an earlier connection got) rather than making a full one.
    pub tls_resumed: bool,
    /// `--proxy` with https: the `CONNECT` exchange that set up the tunnel
    /// (`connect_ns` is then the connection to the proxy).
    pub tunnel_ns: Option<u64>,
}

/// Opens a connection to `origin`. Time limits are the caller's: the whole
/// request runs under `--timeout`, and `connect_timeout` bounds this part
/// (TCP connect and TLS handshake together). With `stamp`, the kernel
/// stamps what the connection receives, and with `stamp_sends` what it
/// sends (see [`StampedTcp`]).
pub async fn connect(
    origin: &Origin,
    tls: Option<&tokio_rustls::TlsConnector>,
    connect_timeout: std::time::Duration,
    stamp: bool,
    stamp_sends: bool,
) -> Result<(Stream, Established), Failure> {
    connect_from(origin, None, tls, connect_timeout, stamp, stamp_sends).await
}

/// [`connect`] from the local address `source` (`--source-addresses`),
/// when given, for a TCP origin.
pub async fn connect_from(
    origin: &Origin,
    source: Option<std::net::IpAddr>,
    tls: Option<&tokio_rustls::TlsConnector>,
    connect_timeout: std::time::Duration,
    stamp: bool,
    stamp_sends: bool,
) -> Result<(Stream, Established), Failure> {
    let start = std::time::Instant::now();
    let addr = match &origin.addr {
        Addr::Tcp(a) => *a,
        Addr::Unix(path) => return connect_unix(path, connect_timeout, start).await,
    };
    let connecting = tcp::connect_tcp(addr, source, stamp, stamp_sends);
    let tcp = match tokio::time::timeout(connect_timeout, connecting).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            return Err(Failure::new(
                ErrorKind::Connect,
                match source {
                    Some(from) => format!("{} from {from}: {e}", origin.addr),
                    None => format!("{}: {e}", origin.addr),
                },
            ))
        }
        Err(_) => {
            return Err(Failure::new(
                ErrorKind::Connect,
                format!(
                    "{}: no connection within --connect-timeout {:?}",
                    origin.addr, connect_timeout
                ),
            ))
        }
    };
    let connect_ns = start.elapsed().as_nanos() as u64;
    // --proxy with https: a CONNECT tunnel to the origin, within
    // --connect-timeout too.
    let mut tcp = tcp;
    let tunnel_ns = match origin
        .proxy
        .as_ref()
        .and_then(|p| p.tunnel.as_ref().map(|t| (p, t)))
    {
        Some((route, authority)) => {
            let tunnel_start = std::time::Instant::now();
            let by = tokio::time::Instant::from_std(start + connect_timeout);
            match tokio::time::timeout_at(by, proxy::tunnel(&mut tcp, authority, route)).await {
                Ok(Ok(())) => Some(tunnel_start.elapsed().as_nanos() as u64),
                Ok(Err(detail)) => {
                    return Err(Failure::new(
                        ErrorKind::Connect,
                        format!("proxy {}: {detail}", origin.addr),
                    ))
                }
                Err(_) => {
                    return Err(Failure::new(
                        ErrorKind::Connect,
                        format!(
                            "proxy {}: no answer to CONNECT {authority} within --connect-timeout {connect_timeout:?}",
                            origin.addr
                        ),
                    ))
                }
            }
        }
        None => None,
    };
    match (&origin.tls, tls) {
        (Some(name), Some(connector)) => {
            let tls_start = std::time::Instant::now();
            // The handshake is part of connecting: a server that accepts
            // and never answers the ClientHello (a plain-HTTP port waiting
            // for a request line) is a `tls` failure within
            // --connect-timeout, as with curl, not a `timeout` that says
            // only that no response came.
            let by = tokio::time::Instant::from_std(start + connect_timeout);
            // Boxed: the handshake's state is most of a connect's, and
            // plain TCP connects (a thousand at once, at a run's start)
            // should not each hold room for it.
            let handshake =
                match tokio::time::timeout_at(by, Box::pin(connector.connect(name.clone(), tcp)))
                    .await
                {
                    Ok(done) => done,
                    Err(_) => {
                        return Err(Failure::new(
                            ErrorKind::Tls,
                            format!(
                                "{}: no TLS handshake within --connect-timeout {:?}; \
                                 does this port serve TLS?",
                                origin.addr, connect_timeout
                            ),
                        ))
                    }
                };
            match handshake {
                Ok(s) => {
                    let tls_ns = Some(tls_start.elapsed().as_nanos() as u64);
                    let tls_resumed =
                        s.get_ref().1.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
                    Ok((
                        Stream::Tls(Box::new(s)),
                        Established {
                            connect_ns,
                            tls_ns,
                            tls_resumed,
                            tunnel_ns,
                        },
                    ))
                }
                Err(e) => Err(Failure::new(
                    ErrorKind::Tls,
                    match no_application_protocol(&e) {
                        true if connector.config().alpn_protocols == [b"h2"] => format!(
                            "{}: the server did not negotiate HTTP/2 over ALPN ({e}); \
                             enable HTTP/2 on the server, or drop --http2",
                            origin.addr
                        ),
                        true => format!(
                            "{}: the server did not negotiate HTTP/1.1 over ALPN ({e}); \
                             if it speaks only HTTP/2, add --http2",
                            origin.addr
                        ),
                        false if plain_text_reply(&e) => format!(
                            "{}: the port answered in plain text, not TLS ({e}); \
                             it likely speaks plain HTTP: use http:// instead of https://",
                            origin.addr
                        ),
                        false => format!(
                            "{}: {e}{}",
                            origin.addr,
                            match (alert_received(&e), &origin.addr) {
                                (true, Addr::Tcp(addr)) => tls::without_sni(name, addr),
                                _ => String::new(),
                            }
                        ),
                    },
                )),
            }
        }
        _ => Ok((
            Stream::Plain(tcp),
            Established {
                connect_ns,
                tls_ns: None,
                tls_resumed: false,
                tunnel_ns,
            },
        )),
    }
}

async fn connect_unix(
    path: &std::path::Path,
    connect_timeout: std::time::Duration,
    start: std::time::Instant,
) -> Result<(Stream, Established), Failure> {
    let failure = |detail: String| Failure::new(ErrorKind::Connect, detail);
    match tokio::time::timeout(connect_timeout, UnixStream::connect(path)).await {
        Ok(Ok(s)) => Ok((
            Stream::Unix(s),
            Established {
                connect_ns: start.elapsed().as_nanos() as u64,
                tls_ns: None,
                tls_resumed: false,
                tunnel_ns: None,
            },
        )),
        Ok(Err(e)) => Err(failure(format!(
            "unix socket {}: {e}; check --unix-socket names the socket the server listens on",
            path.display()
        ))),
        Err(_) => Err(failure(format!(
            "unix socket {}: no connection within --connect-timeout {connect_timeout:?}",
            path.display()
        ))),
    }
}

impl Stream {
    /// Forgets the kernel stamps of earlier reads (see [`StampedTcp`]).
    pub fn clear_stamps(&mut self) {
        match self {
            Stream::Plain(s) => s.clear_stamps(),
            Stream::Tls(s) => s.get_mut().0.clear_stamps(),
            Stream::Unix(_) => {}
        }
    }

    /// The kernel's arrival times of the first and last bytes read since
    /// [`Stream::clear_stamps`] (`CLOCK_REALTIME` ns), if it stamps them.
    pub fn stamps(&self) -> Option<(u64, u64)> {
        match self {
            Stream::Plain(s) => s.stamps(),
            Stream::Tls(s) => s.get_ref().0.stamps(),
            Stream::Unix(_) => None,
        }
    }

    /// The kernel's transmit time of the current request's last segment
    /// (`CLOCK_REALTIME` ns), if it stamps them.
    pub fn tx_stamp(&mut self) -> Option<u64> {
        match self {
            Stream::Plain(s) => s.tx_stamp(),
            Stream::Tls(s) => s.get_mut().0.tx_stamp(),
            Stream::Unix(_) => None,
        }
    }

    /// Whether the server has closed this idle kept-alive connection, or
    /// written to it unasked (a response nobody requested, bytes past the
    /// last body). Either way the next request must not go on it: it would
    /// fail as `closed` though the server did nothing wrong, or read an
    /// answer that is not its own. Polls the socket once and never waits;
    /// while the socket has seen nothing since the last read, tokio answers
    /// from its cached readiness without a system call. What it reads goes
    /// into `scratch` and is discarded with the connection.
    pub fn has_spoken_unasked(&mut self, scratch: &mut [u8]) -> bool {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut buf = ReadBuf::new(scratch);
        // Data, end of stream, or an error: the connection is spent.
        Pin::new(self).poll_read(&mut cx, &mut buf).is_ready()
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Unix(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Unix(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Unix(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Unix(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
