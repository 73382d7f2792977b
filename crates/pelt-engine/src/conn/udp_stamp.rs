//! Kernel receive times for HTTP/3: a worker's UDP socket (quinn's, for
//! sending and receiving) that also keeps the kernel's arrival time of the
//! latest datagram quinn read from it (`SIOCGSTAMPNS` after each read), so
//! a response is timed by when its last packet reached the socket, not
//! when pelt got round to it. quinn-udp hands no receive stamps to its
//! caller, so the stamp is asked for beside its reads; the latest
//! datagram of a read batch is never before the response's last one, so
//! the time is at worst a batch late, never early, and never later than
//! pelt's own clock. `SIOCGSTAMPNS` has no safe wrapper (nix, rustix), so
//! this module holds one `ioctl` call.
#![allow(unsafe_code)]

use std::fmt;
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};

/// quinn's socket, its reads followed by the latest arrival stamp.
pub(crate) struct StampedUdp {
    inner: Arc<dyn AsyncUdpSocket>,
    /// The socket `inner` owns (and keeps open as long as it lives).
    fd: RawFd,
    /// `CLOCK_REALTIME` ns of the latest datagram read; 0 before any.
    latest: Arc<AtomicU64>,
}

impl fmt::Debug for StampedUdp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StampedUdp").field("fd", &self.fd).finish()
    }
}

impl StampedUdp {
    /// Wraps quinn's socket `inner`, whose descriptor is `fd`; the stamp
    /// is read through the returned cell.
    pub fn new(inner: Arc<dyn AsyncUdpSocket>, fd: RawFd) -> (StampedUdp, Arc<AtomicU64>) {
        let latest = Arc::new(AtomicU64::new(0));
        let socket = StampedUdp {
            inner,
            fd,
            latest: latest.clone(),
        };
        (socket, latest)
    }
}

impl AsyncUdpSocket for StampedUdp {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        self.inner.clone().create_io_poller()
    }

    fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
        self.inner.try_send(transmit)
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        let read = self.inner.poll_recv(cx, bufs, meta);
        if let Poll::Ready(Ok(n)) = &read {
            if *n > 0 {
                if let Some(stamp) = latest_stamp(self.fd) {
                    self.latest.store(stamp, Ordering::Relaxed);
                }
            }
        }
        read
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    fn max_transmit_segments(&self) -> usize {
        self.inner.max_transmit_segments()
    }

    fn max_receive_segments(&self) -> usize {
        self.inner.max_receive_segments()
    }

    fn may_fragment(&self) -> bool {
        self.inner.may_fragment()
    }
}

/// The kernel's arrival time of the latest datagram read from `fd`,
/// `CLOCK_REALTIME` ns. The first call turns stamping on for the socket
/// (and has none to give).
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn latest_stamp(fd: RawFd) -> Option<u64> {
    // SIOCGSTAMPNS as 64-bit Linux numbers it (SIOCGSTAMPNS_OLD, whose
    // `struct timespec` is 64-bit there); libc does not export it.
    const SIOCGSTAMPNS: u64 = 0x8907;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: the request writes one `struct timespec` through the
    // pointer, which points to one, valid and exclusively borrowed for the
    // call; `fd` is the UDP socket `inner` owns and keeps open (a closed
    // or foreign descriptor would only make the call fail).
    let rc = unsafe { libc::ioctl(fd, SIOCGSTAMPNS as _, &mut ts as *mut libc::timespec) };
    (rc == 0 && ts.tv_sec > 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn latest_stamp(_: RawFd) -> Option<u64> {
    None
}
