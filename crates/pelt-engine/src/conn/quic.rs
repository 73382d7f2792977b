//! QUIC connections for HTTP/3, on quinn: the run's client configuration
//! (TLS 1.3 with ALPN `h3`, the same certificate rule as TCP's TLS), a
//! worker's UDP endpoint, and the handshake timed, bounded by
//! `--connect-timeout` and its failures classified.
//!
//! QUIC has no connect apart from its TLS handshake: one round trip sets
//! up both, so a new connection's whole handshake is its `connect` time
//! and it has no separate `tls` time.

use super::tls::client_config;
use super::udp_stamp::StampedUdp;
use super::{Addr, Established, Origin};
use crate::outcome::Failure;
use pelt_core::ErrorKind;
use std::cell::RefCell;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Per-stream receive window: large, as HTTP/2's (`transport::h2`), so a
/// fast server is not held back by flow control round trips.
const STREAM_WINDOW: u32 = 1 << 20;
/// The connection's receive window.
const CONNECTION_WINDOW: u32 = 16 << 20;

/// Server names whose session tickets `--0rtt` keeps (rustls keeps a few
/// tickets for each).
const TICKET_CACHE: usize = 4096;

/// The TLS alert a server sends when it speaks none of the protocols
/// offered by ALPN (RFC 8446 §6; QUIC carries it as error 0x100 + alert).
const NO_APPLICATION_PROTOCOL: u64 = 0x100 + 120;

/// The QUIC client configuration every HTTP/3 connection of a run uses:
/// TLS 1.3 on ring, ALPN offering only `h3` (a server that will not speak
/// HTTP/3 must fail visibly), certificates verified unless `insecure`.
/// With `zero_rtt` (`--0rtt`), the session tickets servers send are kept
/// for the run (in memory, shared by its workers) and offered with early
/// data. Without `resume` (`--no-tls-resume`), no session is offered.
/// `gso`: send with UDP segmentation offload (one `sendmsg` of
/// several packets, cut by the kernel or the NIC); off only to measure
/// what it gives (docs/BENCHMARKS.md). Receive offload (GRO) is the
/// socket's and quinn's, always on where supported.
pub(crate) fn quic_client_config(
    insecure: bool,
    zero_rtt: bool,
    resume: bool,
    gso: bool,
) -> quinn::ClientConfig {
    let mut tls = client_config(insecure, true);
    tls.alpn_protocols = vec![b"h3".to_vec()];
    if !resume {
        // --no-tls-resume: every handshake full, as over TCP.
        tls.resumption = rustls::client::Resumption::disabled();
    }
    if zero_rtt {
        // rustls keeps a few tickets per server name, each used once:
        // enough for the run's connections to take turns.
        tls.resumption = rustls::client::Resumption::store(Arc::new(
            rustls::client::ClientSessionMemoryCache::new(TICKET_CACHE),
        ));
        tls.enable_early_data = true;
    }
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(Arc::new(tls))
        .expect("ring offers TLS_AES_128_GCM_SHA256, QUIC's initial suite");
    let mut transport = quinn::TransportConfig::default();
    transport
        .stream_receive_window(STREAM_WINDOW.into())
        .receive_window(CONNECTION_WINDOW.into())
        // A server opens no request streams towards its client (HTTP/3
        // server push would be a unidirectional stream, and is not asked
        // for: h3 sends no MAX_PUSH_ID).
        .max_concurrent_bidi_streams(0u32.into())
        .enable_segmentation_offload(gso);
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(Arc::new(transport));
    config
}

/// A worker's QUIC endpoints: one UDP socket per address family, shared
/// by all the worker's connections (quinn tells their packets apart by
/// connection ID), opened when the first connection needs it. One socket
/// per worker, not per connection: quinn reads and writes it in batches
/// (recvmmsg, GSO) for all of them, and the worker's thread owns it, as
/// it owns its TCP connections.
///
/// Each socket also keeps the kernel's arrival time of the latest
/// datagram read from it ([`super::udp_stamp`]): responses are timed by it.
#[derive(Debug, Default)]
pub(crate) struct Endpoints {
    v4: RefCell<Option<(quinn::Endpoint, Arc<AtomicU64>)>>,
    v6: RefCell<Option<(quinn::Endpoint, Arc<AtomicU64>)>>,
    /// Addresses where a QUIC handshake has completed: no more probes
    /// for an ICMP refusal go there ([`refused`]).
    answered: RefCell<Vec<SocketAddr>>,
}

impl Endpoints {
    /// The endpoint that reaches `addr`, opened now if it is not yet.
    /// Needs the worker's runtime: quinn spawns the socket's driver on it.
    fn for_addr(&self, addr: &SocketAddr) -> std::io::Result<quinn::Endpoint> {
        let (slot, any): (_, SocketAddr) = match addr {
            SocketAddr::V4(_) => (&self.v4, (Ipv4Addr::UNSPECIFIED, 0).into()),
            SocketAddr::V6(_) => (&self.v6, (Ipv6Addr::UNSPECIFIED, 0).into()),
        };
        if let Some((e, _)) = &*slot.borrow() {
            return Ok(e.clone());
        }
        // As `quinn::Endpoint::client` makes it, with the socket stamped.
        let socket = std::net::UdpSocket::bind(any)?;
        let fd = std::os::fd::AsRawFd::as_raw_fd(&socket);
        let runtime = Arc::new(quinn::TokioRuntime);
        let inner = quinn::Runtime::wrap_udp_socket(&*runtime, socket)?;
        let (stamped, latest) = StampedUdp::new(inner, fd);
        let endpoint = quinn::Endpoint::new_with_abstract_socket(
            quinn::EndpointConfig::default(),
            None,
            Arc::new(stamped),
            runtime,
        )?;
        *slot.borrow_mut() = Some((endpoint.clone(), latest));
        Ok(endpoint)
    }

    /// The kernel's arrival time (`CLOCK_REALTIME` ns) of the latest
    /// datagram read from the socket that reaches `addr`, if any was
    /// stamped: never before the last packet of a response read by then.
    pub(crate) fn latest_stamp(&self, addr: &SocketAddr) -> Option<u64> {
        let slot = match addr {
            SocketAddr::V4(_) => &self.v4,
            SocketAddr::V6(_) => &self.v6,
        };
        let stamp = slot.borrow().as_ref()?.1.load(Ordering::Relaxed);
        (stamp > 0).then_some(stamp)
    }
}

/// Opens a QUIC connection to `origin` (its address and TLS name) within
/// `connect_timeout`, the handshake timed as its `connect` phase.
///
/// With `early` (`--0rtt`, and a ticket for the server kept from an
/// earlier connection), the connection is returned at once, before the
/// handshake, with the future of its 0-RTT's fate (`ZeroRttAccepted`,
/// which resolves when the handshake completes: true if the server took
/// the early data); `connect` is then the time until it could carry
/// requests. The caller bounds that handshake by `connect_timeout`.
pub(crate) async fn connect_quic(
    endpoints: &Endpoints,
    origin: &Origin,
    config: &quinn::ClientConfig,
    connect_timeout: Duration,
    early: bool,
) -> Result<
    (
        quinn::Connection,
        Established,
        Option<quinn::ZeroRttAccepted>,
    ),
    Failure,
> {
    let start = Instant::now();
    // Refused by the configuration (`http.unix_socket` with `http.http3`).
    let Addr::Tcp(addr) = &origin.addr else {
        return Err(Failure::new(
            ErrorKind::Connect,
            format!("{}: QUIC needs a UDP address", origin.addr),
        ));
    };
    // https:// only (the configuration says so), so there is a name.
    let name = origin
        .tls
        .as_ref()
        .map(|n| n.to_str().into_owned())
        .unwrap_or_else(|| addr.ip().to_string());
    let endpoint = endpoints.for_addr(addr).map_err(|e| {
        Failure::new(
            ErrorKind::Connect,
            format!("{addr}: cannot open a UDP socket for QUIC: {e}"),
        )
    })?;
    let connecting = endpoint
        .connect_with(config.clone(), *addr, &name)
        .map_err(|e| Failure::new(ErrorKind::Connect, format!("{addr}: {e}")))?;
    let established = |start: Instant| Established {
        connect_ns: start.elapsed().as_nanos() as u64,
        tls_ns: None,
        tls_resumed: false,
        tunnel_ns: None,
    };
    // Without a ticket for this server (the run's first connection to
    // it), rustls offers no early data and this gives the handshake back.
    let connecting = match early {
        true => match connecting.into_0rtt() {
            Ok((connection, accepted)) => {
                return Ok((connection, established(start), Some(accepted)))
            }
            Err(connecting) => connecting,
        },
        false => connecting,
    };
    let handshake = tokio::time::timeout(connect_timeout, connecting);
    let answered = endpoints.answered.borrow().contains(addr);
    let outcome = match answered {
        // QUIC answered here before: a probe would only cost a socket.
        true => handshake.await,
        // UDP has no refusal in the handshake itself, but a host with
        // nothing on the port says so with ICMP port unreachable: waited
        // for beside the handshake, it ends the wait at once rather than
        // after --connect-timeout (issue 35: `-c 1 -n 5` took 25 s).
        false => tokio::select! {
            biased;
            done = handshake => done,
            () = refused(*addr) => return Err(nothing_on_udp(addr, connect_timeout).await),
        },
    };
    match outcome {
        Ok(Ok(connection)) => {
            if !answered {
                endpoints.answered.borrow_mut().push(*addr);
            }
            Ok((connection, established(start), None))
        }
        Ok(Err(e)) => Err(handshake_failure(addr, &e, origin.tls.as_ref())),
        // UDP has no refusal to wait for: a port with nothing listening
        // (or a TCP-only server) just never answers.
        Err(_) => Err(Failure::new(
            ErrorKind::Connect,
            format!(
                "{addr}: no QUIC handshake within --connect-timeout {connect_timeout:?}; \
                 does an HTTP/3 server listen on this UDP port?"
            ),
        )),
    }
}

/// Resolves once `addr`'s host has said that nothing listens on its UDP
/// port (ICMP port unreachable, seen as `ECONNREFUSED` on a connected
/// UDP socket that sent it an empty datagram, which a QUIC server drops
/// unread); pending for ever otherwise: a server that answers, a host
/// that drops it, a socket that cannot be opened.
async fn refused(addr: SocketAddr) {
    let any: SocketAddr = match addr {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let probe = async {
        let socket = tokio::net::UdpSocket::bind(any).await?;
        socket.connect(addr).await?;
        socket.send(&[]).await?;
        let mut buf = [0u8; 64];
        loop {
            if let Err(e) = socket.recv(&mut buf).await {
                return Ok::<bool, std::io::Error>(
                    e.kind() == std::io::ErrorKind::ConnectionRefused,
                );
            }
        }
    };
    if !matches!(probe.await, Ok(true)) {
        std::future::pending::<()>().await;
    }
}

/// The failure of a handshake to `addr` where nothing listens on UDP,
/// saying so, and whether a TCP server listens on the same port (a
/// server without HTTP/3, or HTTP/3 not on this port).
async fn nothing_on_udp(addr: &SocketAddr, connect_timeout: Duration) -> Failure {
    let tcp = matches!(
        tokio::time::timeout(connect_timeout, tokio::net::TcpStream::connect(addr)).await,
        Ok(Ok(_))
    );
    let also = match tcp {
        true => "; a TCP server listens on that port: it speaks HTTP/1.1 or HTTP/2 there, so drop --http3 (or find the port its HTTP/3 is on)",
        false => "; nothing listens on TCP there either: is the server up, and is this its port?",
    };
    Failure::new(
        ErrorKind::Connect,
        format!(
            "{addr}: nothing listens on UDP port {} (the host answered ICMP port unreachable), so no HTTP/3 server is there{also}",
            addr.port()
        ),
    )
}

/// Whether a QUIC error code carries a TLS alert.
fn is_crypto(code: quinn::TransportErrorCode) -> bool {
    (0x100..0x200).contains(&u64::from(code))
}

/// Classifies a failed handshake: TLS's errors (a certificate refused
/// here, an alert from the server) as `tls`, the rest as `connect`. An
/// alert from the server names itself, and says what an IP address
/// without a server name (`name`, the origin's) may have to do with it.
fn handshake_failure(
    addr: &SocketAddr,
    e: &quinn::ConnectionError,
    name: Option<&rustls::pki_types::ServerName<'static>>,
) -> Failure {
    use quinn::ConnectionError as E;
    let (kind, detail) = match e {
        E::TransportError(t) if is_crypto(t.code) => (ErrorKind::Tls, format!("{addr}: {t}")),
        E::ConnectionClosed(c) if u64::from(c.error_code) == NO_APPLICATION_PROTOCOL => (
            ErrorKind::Tls,
            format!(
                "{addr}: the server did not negotiate HTTP/3 over ALPN ({c}); \
                 enable HTTP/3 on the server, or drop --http3"
            ),
        ),
        E::ConnectionClosed(c) if is_crypto(c.error_code) => {
            let alert = (u64::from(c.error_code) - 0x100) as u8;
            let named = super::tls::alert_name(alert).map_or(String::new(), |n| format!(" ({n})"));
            let sni = name.map_or(String::new(), |n| super::tls::without_sni(n, addr));
            (
                ErrorKind::Tls,
                format!("{addr}: the server ended the TLS handshake: {c}{named}{sni}"),
            )
        }
        E::VersionMismatch => (
            ErrorKind::Connect,
            format!("{addr}: the server speaks no QUIC version pelt does (QUIC v1)"),
        ),
        E::TimedOut => (
            ErrorKind::Connect,
            format!("{addr}: no answer to the QUIC handshake; does an HTTP/3 server listen on this UDP port?"),
        ),
        other => (ErrorKind::Connect, format!("{addr}: {other}")),
    };
    Failure::new(kind, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_alerts_are_tls_failures_and_the_rest_connect_failures() {
        let addr: SocketAddr = "127.0.0.1:443".parse().unwrap();
        let alert =
            quinn::ConnectionError::TransportError(quinn::TransportErrorCode::crypto(42).into());
        assert_eq!(handshake_failure(&addr, &alert, None).kind, ErrorKind::Tls);
        let f = handshake_failure(&addr, &quinn::ConnectionError::TimedOut, None);
        assert_eq!(f.kind, ErrorKind::Connect);
        assert!(f.detail.contains("UDP port"), "{}", f.detail);
        let f = handshake_failure(&addr, &quinn::ConnectionError::VersionMismatch, None);
        assert_eq!(f.kind, ErrorKind::Connect);
    }

    #[test]
    fn the_client_offers_h3_only_over_tls13() {
        // Builds (QUIC's initial suite is there) for both certificate rules.
        let _ = quic_client_config(false, false, true, true);
        let _ = quic_client_config(true, true, true, false);
        let tls = client_config(false, true);
        assert!(tls.alpn_protocols.is_empty(), "the caller sets ALPN");
    }
}
