//! A new TCP connection, made ready to send at the cost of at most one
//! readiness wait, and none when the handshake is already done.
//!
//! With a connection per request (`--no-keepalive`, ab's and siege's
//! default) connecting is most of a request's work. tokio's
//! `TcpStream::connect` registered the socket, waited for it to become
//! writable, and then pelt moved it into its own registration
//! ([`StampedTcp`]) to set its receive stamps: a second registration
//! whose readiness tokio learns only from the reactor's next event, so
//! the request waited for a second `epoll_wait` before its `write`. Here
//! the socket is made, given its options and connected before it is
//! registered once; on loopback the handshake is over by the time
//! `connect` returns (the kernel runs the listener's side within the
//! call), which a second `connect` tells without waiting, and the first
//! write goes straight to the socket ([`StampedTcp`]'s `poll_write`).

use super::StampedTcp;
use std::io;
use std::net::{IpAddr, SocketAddr};

/// A TCP connection to `addr`, from `source` if given, established, with
/// Nagle off and receive (`stamp`) and transmit (`stamp_sends`) stamps
/// asked of the kernel.
#[cfg(target_os = "linux")]
pub(super) async fn connect_tcp(
    addr: SocketAddr,
    source: Option<IpAddr>,
    stamp: bool,
    stamp_sends: bool,
) -> io::Result<StampedTcp> {
    use super::stamped::{ask_kernel, register};
    let tcp = new_socket(addr, source)?;
    let established = start_connect(&tcp, addr)?;
    // After `connect`: the kernel refuses transmit stamps numbered by
    // byte offset (`SOF_TIMESTAMPING_OPT_ID`) on a socket not yet
    // connecting (EINVAL), and every request would go unstamped.
    let (stamping, tx_stamping) = ask_kernel(&tcp, stamp, stamp_sends);
    let fd = register(tcp)?;
    if !established {
        // Writable once the handshake ends, either way: the socket's
        // error says which way.
        let _ready = fd.writable().await?;
        if let Some(e) = fd.get_ref().take_error()? {
            return Err(e);
        }
    }
    Ok(StampedTcp::over(fd, stamping, tx_stamping))
}

/// A non-blocking TCP socket for `addr`'s family with Nagle off
/// (requests are written whole; Nagle would only delay them), bound to
/// `source` if given with the port left to `connect`
/// (`IP_BIND_ADDRESS_NO_PORT`), so that each source address has its own
/// ~28,000 ephemeral ports per destination rather than one port per
/// bind whatever the destination.
#[cfg(target_os = "linux")]
fn new_socket(addr: SocketAddr, source: Option<IpAddr>) -> io::Result<std::net::TcpStream> {
    use nix::sys::socket::{
        bind, setsockopt, socket, sockopt, AddressFamily, SockFlag, SockType, SockaddrStorage,
    };
    use std::os::fd::AsRawFd;
    let family = match addr {
        SocketAddr::V4(_) => AddressFamily::Inet,
        SocketAddr::V6(_) => AddressFamily::Inet6,
    };
    let fd = socket(
        family,
        SockType::Stream,
        SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    // Failure costs only a delayed request; connecting still works.
    let _ = setsockopt(&fd, sockopt::TcpNoDelay, &true);
    if let Some(ip) = source {
        // Failure only costs the port sharing: binding still works.
        let _ = setsockopt(&fd, sockopt::IpBindAddressNoPort, &true);
        bind(
            fd.as_raw_fd(),
            &SockaddrStorage::from(SocketAddr::new(ip, 0)),
        )?;
    }
    Ok(std::net::TcpStream::from(fd))
}

/// Starts connecting `tcp` to `addr`: whether the handshake is already
/// done, or the failure that ended it.
#[cfg(target_os = "linux")]
fn start_connect(tcp: &std::net::TcpStream, addr: SocketAddr) -> io::Result<bool> {
    use nix::errno::Errno;
    use nix::sys::socket::{connect, SockaddrStorage};
    use std::os::fd::AsRawFd;
    let to = SockaddrStorage::from(addr);
    match connect(tcp.as_raw_fd(), &to) {
        Ok(()) => return Ok(true),
        Err(Errno::EINPROGRESS) => {}
        Err(e) => return Err(e.into()),
    }
    // Asked again, `connect` says without waiting whether the handshake
    // has ended since (0), is still under way (EALREADY) or failed (its
    // error: a refusal on loopback is known by now too).
    match connect(tcp.as_raw_fd(), &to) {
        Ok(()) | Err(Errno::EISCONN) => Ok(true),
        Err(Errno::EALREADY | Errno::EINPROGRESS) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Elsewhere: tokio's connect, then the stream moved into a
/// [`StampedTcp`] (never stamped off Linux).
#[cfg(not(target_os = "linux"))]
pub(super) async fn connect_tcp(
    addr: SocketAddr,
    source: Option<IpAddr>,
    stamp: bool,
    stamp_sends: bool,
) -> io::Result<StampedTcp> {
    let tcp = match source {
        None => tokio::net::TcpStream::connect(addr).await?,
        Some(ip) => {
            let socket = match addr {
                SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
                SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
            };
            socket.bind(SocketAddr::new(ip, 0))?;
            socket.connect(addr).await?
        }
    };
    let _ = tcp.set_nodelay(true);
    StampedTcp::new(tcp, stamp, stamp_sends)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};
    use tokio::io::{AsyncReadExt, AsyncWrite};

    /// Issue 44: a new connection's request goes out on the first poll,
    /// with no trip round the reactor between connecting and writing
    /// (the waker here never wakes anything, so a `Pending` would hang a
    /// real run until the next `epoll_wait`). Before, the socket was
    /// registered twice and the first write waited for the second
    /// registration's readiness.
    #[tokio::test]
    async fn a_new_connection_writes_without_waiting_for_the_reactor() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut tcp = connect_tcp(addr, None, true, false).await.unwrap();
        let request = b"GET / HTTP/1.1\r\n\r\n";
        let mut cx = Context::from_waker(Waker::noop());
        let wrote = Pin::new(&mut tcp).poll_write(&mut cx, request);
        assert!(
            matches!(wrote, Poll::Ready(Ok(n)) if n == request.len()),
            "{wrote:?}"
        );
        let (mut server, _) = listener.accept().await.unwrap();
        let mut got = [0u8; 18];
        server.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, request);
    }

    /// A refused connection is the connect's own error, known at once on
    /// loopback (the second `connect` returns it), not a write's later.
    /// `--tx-stamps`: the kernel agrees to number transmit stamps only on
    /// a socket that is connecting or connected; asked before `connect`,
    /// it refused, and no request was stamped.
    #[tokio::test]
    async fn transmit_stamps_are_granted_on_a_new_connection() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut tcp = connect_tcp(addr, None, true, true).await.unwrap();
        let (mut server, _) = listener.accept().await.unwrap();
        tcp.clear_stamps();
        tokio::io::AsyncWriteExt::write_all(&mut tcp, b"x")
            .await
            .unwrap();
        let mut got = [0u8; 1];
        server.read_exact(&mut got).await.unwrap();
        assert!(tcp.tx_stamp().is_some(), "the write was not stamped");
    }

    #[tokio::test]
    async fn a_refused_connection_is_the_connects_error() {
        let nothing = "127.0.0.1:1".parse().unwrap();
        let e = connect_tcp(nothing, None, true, false).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused, "{e}");
    }
}
