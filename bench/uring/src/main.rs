//! How much could an io_uring transport win over epoll for pelt's kind of
//! load? A minimal closed-loop HTTP/1.1 keep-alive client, on one thread,
//! three ways, against the same server:
//!
//! - `epoll`: non-blocking sockets, level-triggered epoll, one `read` per
//!   ready socket and one `write` per request (what tokio's reactor does
//!   for pelt, minus the runtime);
//! - `uring`: one `send` linked to one `recv` per request, every SQE made
//!   while reaping a batch of completions submitted with one syscall;
//! - `uring-multi`: one multishot `recv` per connection reading into a
//!   registered ring of provided buffers, sends batched as above.
//!
//! Each connection keeps one request outstanding. The server's response
//! is the same size every time (nginx `return 200`), learnt from the
//! first one, so a response ends when its bytes have arrived. The client
//! is as cheap as a client can be: if even this io_uring client does not
//! beat this epoll client by 10 % in CPU per request, a full io_uring
//! transport in pelt would not either (pelt's costs above the syscalls
//! are the same both ways).
//!
//! usage: uring-probe MODE 127.0.0.1:PORT CONNECTIONS SECONDS

use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: probe\r\n\r\n";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: uring-probe epoll|uring|uring-multi 127.0.0.1:PORT CONNECTIONS SECONDS");
        std::process::exit(2);
    }
    let addr: SocketAddr = args[2].parse().expect("an address like 127.0.0.1:8080");
    assert!(addr.ip().is_loopback(), "load goes to loopback only");
    let conns: usize = args[3].parse().expect("a number of connections");
    let secs: f64 = args[4].parse().expect("seconds");
    let size = response_size(addr);
    let streams: Vec<TcpStream> = (0..conns)
        .map(|_| {
            let s = TcpStream::connect(addr).expect("connect");
            s.set_nodelay(true).unwrap();
            s.set_nonblocking(true).unwrap();
            s
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let cpu0 = cpu();
    let start = Instant::now();
    let done = match args[1].as_str() {
        "epoll" => epoll(&streams, size, deadline),
        "uring" => uring(&streams, size, deadline),
        "uring-multi" => uring_multi(&streams, size, deadline),
        other => panic!("unknown mode {other}"),
    };
    let wall = start.elapsed().as_secs_f64();
    let cpu = cpu() - cpu0;
    println!(
        "{} conns={} responses={} req/s={:.0} cpu_us_per_req={:.3} cpu_share={:.2}",
        args[1],
        conns,
        done,
        done as f64 / wall,
        cpu * 1e6 / done as f64,
        cpu / wall
    );
}

/// This process's user + system CPU seconds.
fn cpu() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// The size of one whole response, from a first exchange.
fn response_size(addr: SocketAddr) -> usize {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.write_all(REQUEST).unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "the server closed");
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf);
        if let Some(end) = text.find("\r\n\r\n") {
            let len: usize = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .expect("a Content-Length");
            if buf.len() >= end + 4 + len {
                return end + 4 + len;
            }
        }
    }
}

fn epoll(streams: &[TcpStream], size: usize, deadline: Instant) -> u64 {
    let ep = unsafe { libc::epoll_create1(0) };
    for (i, s) in streams.iter().enumerate() {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: i as u64,
        };
        unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, s.as_raw_fd(), &mut ev) };
        write(s, REQUEST);
    }
    let mut have = vec![0usize; streams.len()];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
    let mut buf = vec![0u8; 16 * 1024];
    let mut done = 0u64;
    while Instant::now() < deadline {
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), 1024, 100) };
        for ev in &events[..n.max(0) as usize] {
            let i = ev.u64 as usize;
            let fd = streams[i].as_raw_fd();
            let r = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if r <= 0 {
                continue;
            }
            have[i] += r as usize;
            if have[i] >= size {
                have[i] -= size;
                done += 1;
                write(&streams[i], REQUEST);
            }
        }
    }
    done
}

fn write(s: &TcpStream, bytes: &[u8]) {
    let r = unsafe { libc::write(s.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
    assert_eq!(r as usize, bytes.len(), "a short write of a tiny request");
}

const SEND: u64 = 1 << 32;

/// A ring with room for a send and a receive per connection.
fn new_ring(connections: usize) -> IoUring {
    IoUring::builder()
        .setup_single_issuer()
        .setup_coop_taskrun()
        .build((connections * 2).next_power_of_two().max(64) as u32)
        .expect("io_uring")
}

fn uring(streams: &[TcpStream], size: usize, deadline: Instant) -> u64 {
    let mut ring = new_ring(streams.len());
    let mut bufs = vec![[0u8; 2048]; streams.len()];
    let mut have = vec![0usize; streams.len()];
    let mut pending: Vec<squeue::Entry> = Vec::with_capacity(streams.len() * 2);
    let exchange = |i: usize, bufs: &mut Vec<[u8; 2048]>, out: &mut Vec<squeue::Entry>| {
        let fd = types::Fd(streams[i].as_raw_fd());
        out.push(
            opcode::Send::new(fd, REQUEST.as_ptr(), REQUEST.len() as u32)
                .build()
                .flags(squeue::Flags::IO_LINK)
                .user_data(SEND | i as u64),
        );
        out.push(
            opcode::Recv::new(fd, bufs[i].as_mut_ptr(), 2048)
                .build()
                .user_data(i as u64),
        );
    };
    for i in 0..streams.len() {
        exchange(i, &mut bufs, &mut pending);
    }
    let mut done = 0u64;
    while Instant::now() < deadline {
        for c in reap(&mut ring, &mut pending) {
            let i = c.user_data() as usize;
            assert!(c.result() > 0, "recv: {}", c.result());
            have[i] += c.result() as usize;
            if have[i] >= size {
                have[i] -= size;
                done += 1;
                exchange(i, &mut bufs, &mut pending);
            } else {
                // Part of a response: read the rest.
                let fd = types::Fd(streams[i].as_raw_fd());
                pending.push(
                    opcode::Recv::new(fd, bufs[i].as_mut_ptr(), 2048)
                        .build()
                        .user_data(i as u64),
                );
            }
        }
    }
    done
}

/// Submits `pending`, waits for at least one completion, and returns the
/// receives' completions (a send's tells nothing this probe needs).
fn reap(ring: &mut IoUring, pending: &mut Vec<squeue::Entry>) -> Vec<cqueue::Entry> {
    push(ring, pending);
    ring.submit_and_wait(1).expect("submit");
    ring.completion().filter(|c| c.user_data() & SEND == 0).collect()
}

fn push(ring: &mut IoUring, pending: &mut Vec<squeue::Entry>) {
    let mut from = 0;
    while from < pending.len() {
        let mut sq = ring.submission();
        while from < pending.len() && !sq.is_full() {
            unsafe { sq.push(&pending[from]).expect("room in the SQ") };
            from += 1;
        }
        drop(sq);
        if from < pending.len() {
            ring.submit().expect("submit");
        }
    }
    pending.clear();
}

const GROUP: u16 = 7;
const BUF_LEN: usize = 2048;

/// A ring of provided buffers registered with the kernel (IORING_REGISTER_PBUF_RING).
struct BufRing {
    ring: *mut u8,
    entries: u16,
    tail: u16,
    data: Vec<u8>,
}

impl BufRing {
    fn new(ring: &IoUring, entries: u16) -> BufRing {
        let bytes = entries as usize * 16;
        let mem = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_ANONYMOUS | libc::MAP_PRIVATE,
                -1,
                0,
            )
        };
        assert_ne!(mem, libc::MAP_FAILED);
        unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(mem as u64, entries, GROUP, 0)
                .expect("a provided-buffer ring")
        };
        let mut r = BufRing {
            ring: mem.cast(),
            entries,
            tail: 0,
            data: vec![0u8; entries as usize * BUF_LEN],
        };
        for bid in 0..entries {
            r.give(bid);
        }
        r.publish();
        r
    }

    /// Buffer `bid` back to the kernel (seen after `publish`).
    fn give(&mut self, bid: u16) {
        let slot = (self.tail & (self.entries - 1)) as usize;
        unsafe {
            let e = self.ring.add(slot * 16);
            (e as *mut u64).write((self.data.as_mut_ptr() as u64) + bid as u64 * BUF_LEN as u64);
            (e.add(8) as *mut u32).write(BUF_LEN as u32);
            (e.add(12) as *mut u16).write(bid);
        }
        self.tail = self.tail.wrapping_add(1);
    }

    fn publish(&self) {
        // The tail is the first entry's last 16 bits.
        let tail = unsafe { &*(self.ring.add(14) as *const AtomicU16) };
        tail.store(self.tail, Ordering::Release);
    }
}

fn uring_multi(streams: &[TcpStream], size: usize, deadline: Instant) -> u64 {
    let mut ring = new_ring(streams.len());
    let mut bufs = BufRing::new(&ring, (streams.len() * 2).next_power_of_two().clamp(64, 32768) as u16);
    let recv = |i: usize| {
        opcode::RecvMulti::new(types::Fd(streams[i].as_raw_fd()), GROUP)
            .build()
            .user_data(i as u64)
    };
    let send = |i: usize| {
        opcode::Send::new(types::Fd(streams[i].as_raw_fd()), REQUEST.as_ptr(), REQUEST.len() as u32)
            .build()
            .user_data(SEND | i as u64)
    };
    let mut pending: Vec<squeue::Entry> = (0..streams.len()).flat_map(|i| [recv(i), send(i)]).collect();
    let mut have = vec![0usize; streams.len()];
    let mut done = 0u64;
    while Instant::now() < deadline {
        for c in reap(&mut ring, &mut pending) {
            let i = c.user_data() as usize;
            if c.result() == -libc::ENOBUFS {
                bufs.publish();
                pending.push(recv(i));
                continue;
            }
            assert!(c.result() > 0, "recv: {}", c.result());
            let bid = cqueue::buffer_select(c.flags()).expect("a provided buffer");
            bufs.give(bid);
            if !cqueue::more(c.flags()) {
                // The multishot ended (the kernel's choice): arm it again.
                pending.push(recv(i));
            }
            have[i] += c.result() as usize;
            if have[i] >= size {
                have[i] -= size;
                done += 1;
                pending.push(send(i));
            }
        }
        bufs.publish();
    }
    done
}
