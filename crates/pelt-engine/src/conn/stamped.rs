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
use tokio::net::TcpStream;

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
}

impl StampedTcp {
    /// The socket's descriptor (for its `TCP_INFO`).
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.fd.get_ref().as_raw_fd()
    }

    /// Takes over `tcp` from tokio's reactor, asking the kernel to stamp
    /// what it receives when `stamp` is set. If the kernel refuses, reads
    /// are simply unstamped.
    pub fn new(tcp: TcpStream, stamp: bool) -> io::Result<StampedTcp> {
        let std = tcp.into_std()?;
        let stamping = stamp && enable(&std);
        // `AsyncFd::new` is deprecated because a registered descriptor could
        // be closed behind the reactor's back. The stream is moved in, never
        // handed out mutably, and closed only when the `AsyncFd` (and its
        // registration) is dropped, so that cannot happen; the replacement,
        // `register`, is `unsafe`, which this crate forbids.
        #[allow(deprecated)]
        let fd = AsyncFd::new(std)?;
        Ok(StampedTcp {
            fd,
            first: None,
            last: None,
            control: match stamping {
                true => control_space(),
                false => Vec::new(),
            },
        })
    }

    /// Forgets the stamps of earlier reads: the next read is a new
    /// response's first.
    pub fn clear_stamps(&mut self) {
        self.first = None;
        self.last = None;
    }

    /// `(first, last)`: the arrival of the first and the last bytes read
    /// since [`StampedTcp::clear_stamps`], `CLOCK_REALTIME` nanoseconds.
    pub fn stamps(&self) -> Option<(u64, u64)> {
        Some((self.first?, self.last?))
    }

    fn note(&mut self, stamp: Option<u64>) {
        if let Some(t) = stamp {
            self.first.get_or_insert(t);
            self.last = Some(t);
        }
    }
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
        loop {
            let mut guard = ready!(this.fd.poll_write_ready(cx))?;
            match guard.try_io(|fd| fd.get_ref().write(buf)) {
                Ok(done) => return Poll::Ready(done),
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

    /// The reason this module exists: bytes read long after they arrived
    /// carry their arrival time, not the read's.
    #[tokio::test]
    async fn a_late_read_carries_the_arrival_time() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = TcpStream::connect(addr).await.unwrap();
        let (mut server, _) = listener.accept().await.unwrap();
        let mut client = StampedTcp::new(client, true).unwrap();
        assert!(!client.control.is_empty(), "the kernel refused to stamp");
        // The kernel turns receive stamping on system-wide a moment after
        // the first socket asks (a deferred static key): until then
        // segments arrive unstamped. Exchange bytes until one is stamped.
        let mut buf = [0u8; 16];
        for _ in 0..1000 {
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
