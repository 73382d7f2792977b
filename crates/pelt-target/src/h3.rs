//! HTTP/3 beside HTTP/1.1 (`ServeConfig::http3`): a quinn endpoint on the
//! UDP port of the same number as the TCP listener, answering with `h3`
//! the same query controls (status, size, delay, work, pause, faults).
//!
//! TLS 1.3 is QUIC's own, so the server needs a certificate: a
//! self-signed one for `localhost` and the loopback addresses, made at
//! start (clients pass `--insecure`). A load-test target needs no trust,
//! only the handshake a real HTTP/3 server makes.
//!
//! What HTTP/3 cannot say as HTTP/1.1 does (see [`crate::QUERY_HELP`]):
//! `chunked=1` is ignored (HTTP/3 frames every body), `fault=extra` is a
//! plain response (no unasked response exists), and faults that break a
//! TCP connection break the request's stream instead: `reset` and
//! `invalid` reset it (H3_INTERNAL_ERROR, H3_MESSAGE_ERROR), `close`
//! resets it after half the body, `stall` resets it after the stall, and
//! `hangup` answers, then sends GOAWAY (the connection's graceful end).

use crate::query::{self, BodySpec, Fault, Params, DEFAULT_BODY};
use crate::wire::FILLER;
use crate::Shared;
use bytes::{Buf, Bytes};
use h3::error::Code;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use tokio::sync::Notify;
use tokio::time::Instant;

type Stream = h3::server::RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>;

/// Largest request header section accepted, as clients' default.
const MAX_FIELD_SECTION: u64 = 64 * 1024;

/// Concurrent request streams a client may open per connection by
/// default: as many as HTTP/2 servers commonly allow (nginx's 128), so
/// `--streams` up to that is never held back by the server.
pub(crate) const MAX_STREAMS: u32 = 128;

/// A DATA frame's payload at most: one filler slice.
const DATA_CHUNK: usize = FILLER.len();

/// quinn's server configuration: TLS 1.3 on ring with ALPN `h3` and a
/// self-signed certificate for `localhost`, the loopback addresses and
/// `ip`; `max_streams` concurrent request streams per connection. 0-RTT
/// is accepted (clients' `--0rtt`) unless `reject_0rtt`.
pub(crate) fn server_config(
    ip: std::net::IpAddr,
    max_streams: u32,
    reject_0rtt: bool,
) -> io::Result<quinn::ServerConfig> {
    let mut names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    if !ip.is_unspecified() && !ip.is_loopback() {
        names.push(ip.to_string());
    }
    let certified = rcgen::generate_simple_self_signed(names).map_err(io::Error::other)?;
    let cert = certified.cert.der().clone();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(certified.signing_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .map_err(io::Error::other)?;
    tls.alpn_protocols = vec![b"h3".to_vec()];
    // 0-RTT accepted: clients' `--0rtt` needs a server that takes it
    // (QUIC allows no limit but none or all, RFC 9001 §4.6.1). rustls
    // keeps the sessions its tickets name, each resumed once.
    tls.max_early_data_size = u32::MAX;
    if reject_0rtt {
        tls.session_storage = Arc::new(Forgetful);
    }
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(Arc::new(tls))
        .map_err(io::Error::other)?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let mut transport = quinn::TransportConfig::default();
    transport
        .max_concurrent_bidi_streams(max_streams.into())
        .stream_receive_window((1u32 << 20).into())
        .receive_window((16u32 << 20).into())
        .send_window(16 << 20);
    config.transport_config(Arc::new(transport));
    Ok(config)
}

/// Session storage that takes every session and gives none back: the
/// tickets issued invite 0-RTT, and every attempt is rejected.
#[derive(Debug)]
struct Forgetful;

impl rustls::server::StoresServerSessions for Forgetful {
    fn put(&self, _key: Vec<u8>, _value: Vec<u8>) -> bool {
        true
    }
    fn get(&self, _key: &[u8]) -> Option<Vec<u8>> {
        None
    }
    fn take(&self, _key: &[u8]) -> Option<Vec<u8>> {
        None
    }
    fn can_cache(&self) -> bool {
        true
    }
}

/// Binds the UDP socket for HTTP/3 on `addr` (the TCP listener's).
pub(crate) fn bind_udp(addr: SocketAddr) -> io::Result<UdpSocket> {
    let socket = UdpSocket::bind(addr)?;
    socket.set_nonblocking(true)?;
    Ok(socket)
}

/// Accepts QUIC connections until the runtime ends.
pub(crate) async fn accept_loop(endpoint: quinn::Endpoint, shared: Arc<Shared>) {
    while let Some(incoming) = endpoint.accept().await {
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            // A handshake that fails (a client refusing the certificate,
            // one that gave up) concerns that client only.
            let Ok(connecting) = incoming.accept() else {
                return;
            };
            // Served from the client's first flight (0.5-RTT): a 0-RTT
            // request is answered without waiting for the client's
            // Finished, as HTTP/3 servers do (quic-go's Caddy); a server
            // always may (quinn: `into_0rtt` never fails on this side).
            let conn = match connecting.into_0rtt() {
                Ok((conn, _)) => conn,
                Err(connecting) => match connecting.await {
                    Ok(conn) => conn,
                    Err(_) => return,
                },
            };
            serve_connection(conn, shared).await;
        });
    }
}

/// Serves one connection's request streams, each in a task of its own.
async fn serve_connection(conn: quinn::Connection, shared: Arc<Shared>) {
    let built = h3::server::builder()
        .max_field_section_size(MAX_FIELD_SECTION)
        .send_grease(false)
        .build::<_, Bytes>(h3_quinn::Connection::new(conn))
        .await;
    let Ok(mut h3_conn) = built else { return };
    // `fault=hangup`: a request's task asks the connection to end.
    let hangup = Arc::new(Notify::new());
    let mut closing = false;
    loop {
        let next = tokio::select! {
            next = h3_conn.accept() => next,
            () = hangup.notified(), if !closing => {
                closing = true;
                // GOAWAY: no new request, those in flight finish.
                let _ = h3_conn.shutdown(0).await;
                continue;
            }
        };
        let Ok(Some(resolver)) = next else { break };
        let shared = Arc::clone(&shared);
        let hangup = Arc::clone(&hangup);
        tokio::spawn(async move {
            if let Ok((req, stream)) = resolver.resolve_request().await {
                let _ = serve_request(req, stream, &shared, &hangup).await;
            }
        });
    }
}

/// Answers one request as the query asks. Errors end the stream only (a
/// client that went away).
async fn serve_request(
    req: http::Request<()>,
    mut stream: Stream,
    shared: &Shared,
    hangup: &Notify,
) -> Result<(), h3::error::StreamError> {
    // The request body, read and dropped.
    while let Some(mut chunk) = stream.recv_data().await? {
        chunk.advance(chunk.remaining());
    }
    shared.note_request();
    let head_only = req.method() == http::Method::HEAD;
    let target = req.uri().path_and_query().map_or("/", |p| p.as_str());
    let params: Params = match query::parse_target(target, shared.max_body) {
        Ok(p) => p,
        Err(e) => {
            hold_for_pause(shared).await;
            let msg = Bytes::from(format!("{e}\n"));
            let head = response(400, Some(msg.len()), None, true);
            stream.send_response(head).await?;
            if !head_only {
                stream.send_data(msg).await?;
            }
            return stream.finish().await;
        }
    };
    if !params.work.is_zero() {
        crate::conn::burn(params.work);
    }
    let delay = params.pick_delay() + shared.extra_delay(std::time::Instant::now());
    if !delay.is_zero() {
        crate::timer::sleep_until(Instant::now() + delay).await;
    }
    match params.fault {
        Some(Fault::Stall) => {
            tokio::time::sleep(params.stall).await;
            stream.stop_stream(Code::H3_REQUEST_CANCELLED);
            return Ok(());
        }
        Some(Fault::Reset) => {
            hold_for_pause(shared).await;
            stream.stop_stream(Code::H3_INTERNAL_ERROR);
            return Ok(());
        }
        Some(Fault::Invalid) => {
            hold_for_pause(shared).await;
            stream.stop_stream(Code::H3_MESSAGE_ERROR);
            return Ok(());
        }
        _ => {}
    }
    hold_for_pause(shared).await;
    let body = params.pick_body();
    let no_body = matches!(params.status, 204 | 304);
    let len = (!no_body).then(|| body.len());
    let location = params.location.as_ref().map(|l| l.as_bytes());
    stream
        .send_response(response(params.status, len, location, false))
        .await?;
    if !head_only && !no_body {
        match params.fault {
            Some(Fault::Close) => {
                send_body(&mut stream, BodySpec::Filler(body.len() / 2)).await?;
                stream.stop_stream(Code::H3_INTERNAL_ERROR);
                return Ok(());
            }
            _ => send_body(&mut stream, body).await?,
        }
    }
    stream.finish().await?;
    if params.fault == Some(Fault::Hangup) {
        hangup.notify_one();
    }
    Ok(())
}

/// A response head: status, `server`, `content-length` (unless
/// `len` is `None`), `location` and the type of a plain-text error body.
fn response(
    status: u16,
    len: Option<usize>,
    location: Option<&[u8]>,
    plain_text: bool,
) -> http::Response<()> {
    let mut builder = http::Response::builder()
        .status(status)
        .header(http::header::SERVER, "pelt-target");
    if let Some(loc) = location.and_then(|l| http::HeaderValue::from_bytes(l).ok()) {
        builder = builder.header(http::header::LOCATION, loc);
    }
    if let Some(len) = len {
        builder = builder.header(http::header::CONTENT_LENGTH, len);
    }
    if plain_text {
        builder = builder.header(http::header::CONTENT_TYPE, "text/plain; charset=utf-8");
    }
    // Statuses are 200-999 by the query's rules, all valid for `http`.
    builder.body(()).expect("a valid status and header values")
}

/// Sends a body as DATA frames cut from the one static filler buffer.
async fn send_body(stream: &mut Stream, body: BodySpec) -> Result<(), h3::error::StreamError> {
    let mut left = match body {
        BodySpec::Default => return stream.send_data(Bytes::from_static(DEFAULT_BODY)).await,
        BodySpec::Filler(n) => n,
    };
    while left > 0 {
        let n = left.min(DATA_CHUNK);
        stream.send_data(Bytes::from_static(&FILLER[..n])).await?;
        left -= n;
    }
    Ok(())
}

/// Holds a response while the server-wide pause window is open.
async fn hold_for_pause(shared: &Shared) {
    if let Some(end) = shared.pause_hold(std::time::Instant::now()) {
        crate::timer::sleep_until(Instant::from_std(end)).await;
    }
}
