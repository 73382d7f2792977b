//! The kernel's TCP counts of a connection (`TCP_INFO`): segments sent
//! and retransmitted, so a run over a lossy or saturated path is told so.
//! No safe wrapper offers `TCP_INFO` (nix 0.31, rustix 1 and socket2 do
//! not), so this module holds pelt's one `getsockopt` call.
#![allow(unsafe_code)]

use std::os::fd::RawFd;

/// Segments sent and retransmitted, by the kernel's count (`TCP_INFO`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TcpCounts {
    pub segs_out: u64,
    pub retrans: u64,
}

impl TcpCounts {
    pub(crate) fn add(&mut self, other: Option<TcpCounts>) {
        if let Some(o) = other {
            self.segs_out += o.segs_out;
            self.retrans += o.retrans;
        }
    }
}

/// Reads `fd`'s `TCP_INFO`. `None` when it is not a TCP socket (or not
/// open): the counts are then simply missing.
pub fn tcp_counts(fd: RawFd) -> Option<TcpCounts> {
    // SAFETY: `info` is a plain C struct for which all-zero bytes are a
    // valid value, and `len` tells the kernel its size, so getsockopt
    // writes at most `len` bytes into it (older kernels fill fewer and
    // say so in `len`, which is checked before the fields are used). A
    // bad or closed `fd` is an error
    // return (EBADF, ENOTSOCK, EOPNOTSUPP), never a memory access: the
    // kernel validates the descriptor.
    let (rc, info, len) = unsafe {
        let mut info: libc::tcp_info = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        let rc = libc::getsockopt(
            fd,
            libc::SOL_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        );
        (rc, info, len)
    };
    // `tcpi_segs_out` (Linux 4.2) ends at byte 140 of the struct, after
    // `tcpi_total_retrans` (byte 104).
    (rc == 0 && len as usize >= 140).then(|| TcpCounts {
        segs_out: u64::from(info.tcpi_segs_out),
        retrans: u64::from(info.tcpi_total_retrans),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;

    #[test]
    fn counts_a_real_connection_and_refuses_the_rest() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let before = tcp_counts(client.as_raw_fd()).unwrap();
        for _ in 0..5 {
            client.write_all(b"ping").unwrap();
            let mut buf = [0u8; 4];
            server.read_exact(&mut buf).unwrap();
        }
        let after = tcp_counts(client.as_raw_fd()).unwrap();
        // Five writes are five more segments; loopback loses none.
        assert!(
            after.segs_out >= before.segs_out + 5,
            "{before:?} {after:?}"
        );
        assert_eq!(after.retrans, 0);
        // Not TCP: a UDP socket, a closed descriptor.
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        assert_eq!(tcp_counts(udp.as_raw_fd()), None);
        assert_eq!(tcp_counts(-1), None);
    }
}
