//! Kernel receive timestamps: when a response's bytes reached the socket,
//! whenever pelt got round to reading them.
//!
//! A client that reads late (descheduled, or batching its wake-ups to save
//! CPU in rate mode) would otherwise add its own lateness to the server's
//! service time. With `SO_TIMESTAMPNS` the kernel stamps each segment as it
//! arrives, and `recvmsg` hands the stamp of the last segment a read
//! consumed back in a control message, so a read's time is the arrival of
//! its last byte. [`StampedTcp`] is a `TcpStream` whose reads keep the
//! first and the last such stamp since [`StampedTcp::clear_stamps`]: the
//! arrival of the response's first and last bytes.
//!
//! The stamps are on `CLOCK_REALTIME`; the run's clock is monotonic.
//! [`KernelClock`] maps one to the other with an offset read beside each
//! use, so a clock step or NTP slew during a long run moves nothing.

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A TCP stream whose reads are stamped by the kernel (on Linux; elsewhere
/// the stamps are never there and callers fall back to their own clock).
///
/// It drives the socket itself rather than through tokio's `TcpStream`,
/// for the stamps and for one system call fewer per response: a read that
/// returns less than it asked for leaves the socket empty, so its
/// readiness is dropped at once instead of by a second read that finds
/// nothing (tokio does the same inside `TcpStream`, out of reach here).
#[derive(Debug)]
pub struct StampedTcp {
    fd: AsyncFd<std::net::TcpStream>,
    /// `CLOCK_REALTIME` nanoseconds of the first and the last stamped read
    /// since the last [`StampedTcp::clear_stamps`].
    first: Option<u64>,
    last: Option<u64>,
    /// Room for the stamp's control message: heap memory, so that it is
    /// aligned for a `cmsghdr` (a byte array on the stack need not be).
    control: Vec<u8>,
    /// Transmit stamps (`SO_TIMESTAMPING`, software): the kernel's time
    /// for the segment that carried a request, read from the socket's
    /// error queue; room for that message's control data, empty when off.
    tx_control: Vec<u8>,
    /// Bytes written so far (the kernel numbers transmit stamps by the
    /// offset of the last byte of each write, `SOF_TIMESTAMPING_OPT_ID`).
    written: u64,
    /// Where the current request's bytes start.
    tx_from: u64,
    /// The current request's transmit stamp, `CLOCK_REALTIME` ns.
    tx: Option<u64>,
}

impl StampedTcp {
    /// The socket's descriptor (for its `TCP_INFO`).
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.fd.get_ref().as_raw_fd()
    }

    /// Takes over `tcp` from tokio's reactor, asking the kernel to stamp
    /// what it receives when `stamp` is set, and what it sends when
    /// `stamp_sends` is too. If the kernel refuses, reads (or writes) are
    /// simply unstamped.
    ///
    /// Transmit stamps cost a read of the socket's error queue per request
    /// and an error event per write (10-13 % more CPU per request here),
    /// hence their own switch.
    ///
    /// On Linux pelt's own connections are made by `conn::tcp`, which
    /// registers the socket once; this is for the tests, and elsewhere.
    #[cfg(any(test, not(target_os = "linux")))]
    pub fn new(
        tcp: tokio::net::TcpStream,
        stamp: bool,
        stamp_sends: bool,
    ) -> io::Result<StampedTcp> {
        let std = tcp.into_std()?;
        let (stamping, tx_stamping) = ask_kernel(&std, stamp, stamp_sends);
        Ok(StampedTcp::over(register(std)?, stamping, tx_stamping))
    }

    /// A stream over `fd`, already registered with the reactor, whose
    /// socket the kernel was asked to stamp (see [`ask_kernel`]).
    pub(super) fn over(
        fd: AsyncFd<std::net::TcpStream>,
        stamping: bool,
        tx_stamping: bool,
    ) -> StampedTcp {
        StampedTcp {
            fd,
            first: None,
            last: None,
            // With transmit stamps on, received segments carry a second
            // message (SCM_TIMESTAMPING) beside SCM_TIMESTAMPNS: room for
            // both, or the kernel truncates them away.
            control: match (stamping, tx_stamping) {
                (true, true) => vec![0; TX_CONTROL],
                (true, false) => control_space(),
                (false, _) => Vec::new(),
            },
            tx_control: match tx_stamping {
                true => vec![0; TX_CONTROL],
                false => Vec::new(),
            },
            written: 0,
            tx_from: 0,
            tx: None,
        }
    }

    /// The kernel's transmit time of the current request (the segment
    /// carrying its last byte), `CLOCK_REALTIME` ns, when stamped.
    pub fn tx_stamp(&mut self) -> Option<u64> {
        if self.tx.is_none() {
            self.fetch_tx();
        }
        self.tx
    }

    /// Reads transmit stamps off the error queue until the current
    /// request's: earlier ones (a TLS handshake's, a stamp left over) are
    /// passed by their byte offsets. Never blocks.
    fn fetch_tx(&mut self) {
        if self.tx_control.is_empty() || self.tx.is_some() {
            return;
        }
        while let Some(message) = recv_tx(self.fd.get_ref(), &mut self.tx_control) {
            if let Some((_, stamp)) = message.filter(|&(offset, _)| offset >= self.tx_from) {
                self.tx = Some(stamp);
                return;
            }
        }
    }

    /// Forgets the stamps of earlier reads: the next read is a new
    /// response's first.
    pub fn clear_stamps(&mut self) {
        self.first = None;
        self.last = None;
        self.tx = None;
        self.tx_from = self.written;
    }

    /// `(first, last)`: the arrival of the first and the last bytes read
    /// since [`StampedTcp::clear_stamps`], `CLOCK_REALTIME` nanoseconds.
    pub fn stamps(&self) -> Option<(u64, u64)> {
        Some((self.first?, self.last?))
    }

    /// Counts `n` bytes written, and takes the request's transmit stamp:
    /// on loopback (and most NICs) it is queued within the write, so one
    /// read now, while the socket is hot, finds it.
    fn wrote(&mut self, n: usize) -> usize {
        self.written += n as u64;
        self.fetch_tx();
        n
    }

    fn note(&mut self, stamp: Option<u64>) {
        if let Some(t) = stamp {
            self.first.get_or_insert(t);
            self.last = Some(t);
        }
    }
}

/// Asks the kernel to stamp what `s` receives (`stamp`) and sends
/// (`stamp_sends`, only with `stamp`): whether it agreed to each. If it
/// refuses, reads (or writes) are simply unstamped.
pub(super) fn ask_kernel(s: &std::net::TcpStream, stamp: bool, stamp_sends: bool) -> (bool, bool) {
    let stamping = stamp && enable(s);
    (stamping, stamping && stamp_sends && enable_tx(s))
}

/// Hands `std` to tokio's reactor.
pub(super) fn register(std: std::net::TcpStream) -> io::Result<AsyncFd<std::net::TcpStream>> {
    // `AsyncFd::new` is deprecated because a registered descriptor could
    // be closed behind the reactor's back. The stream is moved in, never
    // handed out mutably, and closed only when the `AsyncFd` (and its
    // registration) is dropped, so that cannot happen; the replacement,
    // `register`, is `unsafe`, which this crate forbids.
    #[allow(deprecated)]
    AsyncFd::new(std)
}

#[cfg(target_os = "linux")]
fn control_space() -> Vec<u8> {
    nix::cmsg_space!(nix::sys::time::TimeSpec)
}

#[cfg(not(target_os = "linux"))]
fn control_space() -> Vec<u8> {
    Vec::new()
}

#[cfg(target_os = "linux")]
fn enable(s: &std::net::TcpStream) -> bool {
    use nix::sys::socket::{setsockopt, sockopt::ReceiveTimestampns};
    setsockopt(s, ReceiveTimestampns, &true).is_ok()
}

#[cfg(not(target_os = "linux"))]
fn enable(_: &std::net::TcpStream) -> bool {
    false
}

/// Room for a transmit stamp's control messages: the stamps (three
/// timespecs) and the extended error that carries the byte offset (with
/// an IPv6 address).
const TX_CONTROL: usize = 256;

/// Asks the kernel for software transmit stamps, numbered by byte offset,
/// without the packet's bytes.
#[cfg(target_os = "linux")]
fn enable_tx(s: &std::net::TcpStream) -> bool {
    use nix::sys::socket::{setsockopt, sockopt::Timestamping, TimestampingFlag as F};
    let flags = F::SOF_TIMESTAMPING_TX_SOFTWARE
        | F::SOF_TIMESTAMPING_SOFTWARE
        | F::SOF_TIMESTAMPING_OPT_ID
        | F::SOF_TIMESTAMPING_OPT_TSONLY;
    setsockopt(s, Timestamping, &flags).is_ok()
}

#[cfg(not(target_os = "linux"))]
fn enable_tx(_: &std::net::TcpStream) -> bool {
    false
}

/// One message from the error queue: `None` when the queue is empty,
/// `Some(None)` for a message that is not a usable transmit stamp, else
/// the byte offset the stamp is for and its time (`CLOCK_REALTIME` ns).
#[cfg(target_os = "linux")]
fn recv_tx(s: &std::net::TcpStream, control: &mut [u8]) -> Option<Option<(u64, u64)>> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    let mut iov: [io::IoSliceMut<'_>; 0] = [];
    let msg = recvmsg::<()>(
        s.as_raw_fd(),
        &mut iov,
        Some(control),
        MsgFlags::MSG_ERRQUEUE | MsgFlags::MSG_DONTWAIT,
    )
    .ok()?;
    let (mut offset, mut stamp) = (None, None);
    let Ok(cmsgs) = msg.cmsgs() else {
        return Some(None);
    };
    for c in cmsgs {
        match c {
            ControlMessageOwned::ScmTimestampsns(ts) => {
                let t = ts.system;
                let ns = t.tv_sec() as i128 * 1_000_000_000 + t.tv_nsec() as i128;
                stamp = u64::try_from(ns).ok().filter(|&ns| ns > 0);
            }
            ControlMessageOwned::Ipv4RecvErr(e, _) | ControlMessageOwned::Ipv6RecvErr(e, _)
                if u32::from(e.ee_origin) == libc::SO_EE_ORIGIN_TIMESTAMPING as u32 =>
            {
                offset = Some(u64::from(e.ee_data));
            }
            _ => {}
        }
    }
    Some(offset.zip(stamp))
}

#[cfg(not(target_os = "linux"))]
fn recv_tx(_: &std::net::TcpStream, _: &mut [u8]) -> Option<Option<(u64, u64)>> {
    None
}

/// One read into `buf`: the bytes read, and (if `stamped`) the kernel's
/// stamp of the last segment it consumed (none at end of stream).
#[cfg(target_os = "linux")]
fn recv(
    mut s: &std::net::TcpStream,
    buf: &mut [u8],
    control: &mut [u8],
) -> io::Result<(usize, Option<u64>)> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    if control.is_empty() {
        return Ok((s.read(buf)?, None));
    }
    let mut iov = [io::IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(s.as_raw_fd(), &mut iov, Some(control), MsgFlags::empty())
        .map_err(io::Error::from)?;
    let mut stamp = None;
    if let Ok(cmsgs) = msg.cmsgs() {
        for c in cmsgs {
            if let ControlMessageOwned::ScmTimestampns(ts) = c {
                let ns = ts.tv_sec() as i128 * 1_000_000_000 + ts.tv_nsec() as i128;
                stamp = u64::try_from(ns).ok();
            }
        }
    }
    Ok((msg.bytes, stamp))
}

#[cfg(not(target_os = "linux"))]
fn recv(
    mut s: &std::net::TcpStream,
    buf: &mut [u8],
    _control: &mut [u8],
) -> io::Result<(usize, Option<u64>)> {
    Ok((s.read(buf)?, None))
}

impl AsyncRead for StampedTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            let mut guard = ready!(this.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let asked = unfilled.len();
            let control = &mut this.control[..];
            match guard.try_io(|fd| recv(fd.get_ref(), unfilled, control)) {
                Ok(Ok((n, stamp))) => {
                    if n > 0 && n < asked {
                        // Drained: wait for the reactor's next event.
                        guard.clear_ready();
                    }
                    buf.advance(n);
                    this.note(stamp);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                // `WouldBlock`: readiness cleared, wait again.
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsyncWrite for StampedTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.written == 0 {
            // A new connection's first write goes straight to the socket:
            // tokio learns a registration's readiness only from the
            // reactor's next event, so asking it first would cost a trip
            // round the runtime (an `epoll_wait`) between connecting and
            // sending, though a connection just made has all its send
            // buffer free. Would it block, readiness decides as usual.
            match this.fd.get_ref().write(buf) {
                Ok(n) => return Poll::Ready(Ok(this.wrote(n))),
                Err(e) if e.kind() != io::ErrorKind::WouldBlock => return Poll::Ready(Err(e)),
                Err(_would_block) => {}
            }
        }
        loop {
            let mut guard = ready!(this.fd.poll_write_ready(cx))?;
            match guard.try_io(|fd| fd.get_ref().write(buf)) {
                Ok(Ok(n)) => return Poll::Ready(Ok(this.wrote(n))),
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.fd.get_ref().shutdown(std::net::Shutdown::Write))
    }
}

/// Keeps the kernel's receive stamping switched on while held: a socket
/// (never connected) that asks for stamps.
///
/// Linux turns stamping on for the whole machine when the first socket
/// asks, and off when the last one that asked closes, each time by a
/// kernel worker that rewrites the kernel's code (a static key; code
/// patched on every CPU). With a connection per request and few
/// connections (`--no-keepalive -c 1`) every request turned it on and off
/// again: two kernel workers woken on pelt's CPU per request, ~1.7
/// involuntary context switches per request, a third of ab's requests per
/// second, and responses that arrived before the worker had run were
/// unstamped. Held for the run, later sockets only count up and down.
#[derive(Debug)]
pub(crate) struct StampsOn {
    _socket: Option<std::os::fd::OwnedFd>,
}

impl StampsOn {
    /// Asks for stamps on a socket of its own; if the kernel refuses,
    /// holds nothing (connections' own requests will be refused too).
    pub fn hold() -> StampsOn {
        StampsOn {
            _socket: stamping_socket(),
        }
    }
}

#[cfg(target_os = "linux")]
fn stamping_socket() -> Option<std::os::fd::OwnedFd> {
    use nix::sys::socket::{setsockopt, socket, sockopt, AddressFamily, SockFlag, SockType};
    let s = socket(
        AddressFamily::Inet,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .ok()?;
    setsockopt(&s, sockopt::ReceiveTimestampns, &true).ok()?;
    Some(s)
}

#[cfg(not(target_os = "linux"))]
fn stamping_socket() -> Option<std::os::fd::OwnedFd> {
    None
}

/// Two clock readings further apart than this were interrupted.
const CLOCK_PAIR_NS: u64 = 20_000;

/// Maps kernel stamps (`CLOCK_REALTIME`) onto the run's monotonic clock,
/// by the distance from a real-time reading taken beside `now`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KernelClock {
    real_now: u64,
    run_now: pelt_core::Nanos,
}

impl KernelClock {
    /// The mapping as of `run_now` on the run's clock, read with the
    /// real-time clock just after it. If the thread was descheduled
    /// between the two readings (the real-time clock then moved more than
    /// a few microseconds past a second reading's), the mapping would be
    /// off by the pause: `run_now` is re-read and the pair taken again.
    pub(crate) fn at(run_now: pelt_core::Nanos, now: impl Fn() -> pelt_core::Nanos) -> KernelClock {
        let real = || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        };
        let mut clock = KernelClock {
            real_now: real(),
            run_now,
        };
        for _ in 0..3 {
            let run_again = now();
            if run_again.saturating_sub(clock.run_now) < CLOCK_PAIR_NS {
                break;
            }
            clock = KernelClock {
                run_now: run_again,
                real_now: real(),
            };
        }
        clock
    }

    /// `stamp` on the run's clock. A stamp from the future (a clock step
    /// between the two readings) is now.
    pub(crate) fn run_time(&self, stamp: u64) -> pelt_core::Nanos {
        self.run_now
            .saturating_sub(self.real_now.saturating_sub(stamp))
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    /// The reason this module exists: bytes read long after they arrived
    /// carry their arrival time, not the read's.
    #[tokio::test]
    async fn a_late_read_carries_the_arrival_time() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = TcpStream::connect(addr).await.unwrap();
        let (mut server, _) = listener.accept().await.unwrap();
        let mut client = StampedTcp::new(client, true, false).unwrap();
        assert!(!client.control.is_empty(), "the kernel refused to stamp");
        // The kernel turns receive stamping on system-wide a moment after
        // the first socket asks (a deferred static key): until then
        // segments arrive unstamped. Exchange bytes until one is stamped;
        // bounded in time, not count: on a busy machine the kernel's
        // worker that flips the key may run only after a thousand
        // exchanges (it failed so in a test run beside two compilers).
        let mut buf = [0u8; 16];
        let give_up = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < give_up {
            server.write_all(b"x").await.unwrap();
            let _ = client.read(&mut buf).await.unwrap();
            if client.stamps().is_some() {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(client.stamps().is_some(), "the kernel never stamped");
        client.clear_stamps();
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        server.write_all(b"hello").await.unwrap();
        // Read 50 ms after the bytes arrived (blocking the thread on
        // purpose: a descheduled client).
        std::thread::sleep(std::time::Duration::from_millis(50));
        let n = client.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"hello");
        let (first, last) = client.stamps().expect("the read was stamped");
        assert_eq!(first, last);
        let late_by = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            - last;
        assert!(last >= before, "stamped before the write");
        assert!(
            late_by >= 45_000_000,
            "stamp is the read's time: {late_by} ns ago"
        );
        client.clear_stamps();
        assert_eq!(client.stamps(), None);
    }

    fn unix_ns() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
    }

    /// `--tx-stamps`: each request's transmit stamp is found among the
    /// error queue's messages by its byte offset, lies between clock
    /// readings taken before and after its write, and a stamp of an
    /// earlier write is never taken for a later request's.
    #[tokio::test]
    async fn each_write_gets_its_own_transmit_stamp() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = TcpStream::connect(addr).await.unwrap();
        let (mut server, _) = listener.accept().await.unwrap();
        let mut client = StampedTcp::new(client, true, true).unwrap();
        assert!(
            !client.tx_control.is_empty(),
            "the kernel refused transmit stamps"
        );
        let mut buf = [0u8; 64];
        let mut last = 0;
        for i in 0..20u8 {
            client.clear_stamps();
            assert_eq!(
                client.tx_stamp(),
                None,
                "write {i}: a stamp before the write"
            );
            let before = unix_ns();
            client.write_all(&[b'a' + i; 10]).await.unwrap();
            let after = unix_ns();
            server.read_exact(&mut buf[..10]).await.unwrap();
            let tx = client.tx_stamp().expect("the write was stamped");
            assert!(
                (before..=after).contains(&tx),
                "write {i}: {before} <= {tx} <= {after}"
            );
            assert!(tx > last, "write {i} took an earlier write's stamp");
            last = tx;
        }
        // Two writes for one request: its stamp is the first write's.
        client.clear_stamps();
        client.write_all(b"one").await.unwrap();
        let first = client.tx_stamp().unwrap();
        client.write_all(b"two").await.unwrap();
        assert_eq!(client.tx_stamp(), Some(first));
        // Without the switch, nothing is asked of the kernel.
        let other = TcpStream::connect(addr).await.unwrap();
        let mut plain = StampedTcp::new(other, true, false).unwrap();
        plain.write_all(b"x").await.unwrap();
        assert_eq!(plain.tx_stamp(), None);
    }

    #[test]
    fn mapping_keeps_the_distance_to_now() {
        let real_now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        let run_now = 10_000_000_000;
        let clock = KernelClock::at(run_now, || run_now);
        let mapped = clock.run_time(real_now - 3_000_000);
        // 3 ms ago, give or take the time between the two clock reads.
        assert!((run_now - 3_100_000..=run_now - 3_000_000).contains(&mapped));
        assert_eq!(clock.run_time(real_now + 1_000_000_000), run_now);
    }
}
