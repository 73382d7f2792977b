//! Establishing connections: TCP, optionally TLS, each phase timed.

use pelt_core::ErrorKind;
use rustls::pki_types::ServerName;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpStream, UnixStream};

/// A socket address: TCP, or a Unix domain socket (`--unix-socket`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Addr {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Addr::Tcp(a) => a.fmt(f),
            Addr::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

/// Where a connection goes: one per distinct scheme, host and port.
#[derive(Debug, Clone)]
pub struct Origin {
    pub addr: Addr,
    /// Present for https: the name to verify and send as SNI.
    pub tls: Option<ServerName<'static>>,
}

/// A connected stream, plain or TLS.
#[derive(Debug)]
pub enum Stream {
    Plain(TcpStream),
    Unix(UnixStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

/// Phase times of a new connection, in nanoseconds.
#[derive(Debug, Clone, Copy)]
pub struct Established {
    pub connect_ns: u64,
    pub tls_ns: Option<u64>,
}

/// A failure to connect, already classified.
#[derive(Debug)]
pub struct ConnectFailure {
    pub kind: ErrorKind,
    pub detail: String,
}

/// Opens a connection to `origin`. Time limits are the caller's: the whole
/// request runs under `--timeout`, and `connect_timeout` bounds this part
/// (TCP connect and TLS handshake together).
pub async fn connect(
    origin: &Origin,
    tls: Option<&tokio_rustls::TlsConnector>,
    connect_timeout: std::time::Duration,
) -> Result<(Stream, Established), ConnectFailure> {
    let start = std::time::Instant::now();
    let addr = match &origin.addr {
        Addr::Tcp(a) => *a,
        Addr::Unix(path) => return connect_unix(path, connect_timeout, start).await,
    };
    let tcp = match tokio::time::timeout(connect_timeout, TcpStream::connect(addr)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            return Err(ConnectFailure {
                kind: ErrorKind::Connect,
                detail: format!("{}: {e}", origin.addr),
            })
        }
        Err(_) => {
            return Err(ConnectFailure {
                kind: ErrorKind::Connect,
                detail: format!(
                    "{}: no connection within --connect-timeout {:?}",
                    origin.addr, connect_timeout
                ),
            })
        }
    };
    // Requests are written whole; Nagle would only delay them.
    let _ = tcp.set_nodelay(true);
    let connect_ns = start.elapsed().as_nanos() as u64;
    match (&origin.tls, tls) {
        (Some(name), Some(connector)) => {
            let tls_start = std::time::Instant::now();
            // The handshake is part of connecting: a server that accepts
            // and never answers the ClientHello (a plain-HTTP port waiting
            // for a request line) is a `tls` failure within
            // --connect-timeout, as with curl, not a `timeout` that says
            // only that no response came.
            let by = tokio::time::Instant::from_std(start + connect_timeout);
            let handshake =
                match tokio::time::timeout_at(by, connector.connect(name.clone(), tcp)).await {
                    Ok(done) => done,
                    Err(_) => {
                        return Err(ConnectFailure {
                            kind: ErrorKind::Tls,
                            detail: format!(
                                "{}: no TLS handshake within --connect-timeout {:?}; \
                                 does this port serve TLS?",
                                origin.addr, connect_timeout
                            ),
                        })
                    }
                };
            match handshake {
                Ok(s) => Ok((
                    Stream::Tls(Box::new(s)),
                    Established {
                        connect_ns,
                        tls_ns: Some(tls_start.elapsed().as_nanos() as u64),
                    },
                )),
                Err(e) => Err(ConnectFailure {
                    kind: ErrorKind::Tls,
                    detail: match no_application_protocol(&e) {
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
                        false => format!("{}: {e}", origin.addr),
                    },
                }),
            }
        }
        _ => Ok((
            Stream::Plain(tcp),
            Established {
                connect_ns,
                tls_ns: None,
            },
        )),
    }
}

async fn connect_unix(
    path: &std::path::Path,
    connect_timeout: std::time::Duration,
    start: std::time::Instant,
) -> Result<(Stream, Established), ConnectFailure> {
    let failure = |detail: String| ConnectFailure {
        kind: ErrorKind::Connect,
        detail,
    };
    match tokio::time::timeout(connect_timeout, UnixStream::connect(path)).await {
        Ok(Ok(s)) => Ok((
            Stream::Unix(s),
            Established {
                connect_ns: start.elapsed().as_nanos() as u64,
                tls_ns: None,
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

/// Whether a handshake failed because the server supports none of the
/// protocols offered by ALPN (OpenSSL-based servers such as nginx say so
/// with an alert rather than ignoring ALPN).
fn no_application_protocol(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|r| {
            matches!(
                r,
                rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol)
            )
        })
}

/// Whether a handshake failed because the server's first bytes were no
/// TLS record at all: a plain-HTTP server answers a ClientHello with an
/// `HTTP/1.1 400` response, whose 'H' is no TLS content type.
fn plain_text_reply(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|r| {
            matches!(
                r,
                rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType)
            )
        })
}

/// The TLS client configuration shared by every connection of a run.
/// With `http2`, ALPN offers only `h2`: the user asked for HTTP/2, so a
/// server that would pick HTTP/1.1 must fail visibly, not quietly change
/// what is measured.
pub fn tls_connector(insecure: bool, http2: bool) -> tokio_rustls::TlsConnector {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions");
    let mut config = if insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCert(provider)))
            .with_no_client_auth()
    } else {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    config.alpn_protocols = if http2 {
        vec![b"h2".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

/// `--insecure`: accepts any certificate, still checks handshake signatures
/// so the connection is at least consistent.
#[derive(Debug)]
struct AcceptAnyCert(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AcceptAnyCert {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

impl Stream {
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
