//! Drives a real server on 127.0.0.1 port 0 with plain std sockets.
//!
//! Waiting is done with socket read timeouts, never with sleeps used as
//! synchronisation.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use pelt_target::{Pause, ServeConfig, Server, ServerHandle};

const READ_TIMEOUT: Duration = Duration::from_secs(5);

fn start(config: ServeConfig) -> ServerHandle {
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), config).unwrap();
    let addr = server.local_addr();
    assert_ne!(addr.port(), 0);
    let handle = server.spawn().unwrap();
    assert_eq!(handle.local_addr(), addr);
    handle
}

fn server() -> ServerHandle {
    start(ServeConfig {
        threads: 1,
        ..ServeConfig::default()
    })
}

#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    /// The body as it came off the wire (chunk framing included).
    raw_body: Vec<u8>,
    /// The decoded body.
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
        Client {
            stream,
            buf: Vec::new(),
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    fn get(&mut self, target: &str) -> Response {
        self.send(format!("GET {target} HTTP/1.1\r\nHost: test\r\n\r\n").as_bytes());
        self.response(false).unwrap()
    }

    /// Reads more bytes into the buffer; UnexpectedEof at EOF.
    fn more(&mut self) -> io::Result<()> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }

    fn take(&mut self, n: usize) -> io::Result<Vec<u8>> {
        while self.buf.len() < n {
            self.more()?;
        }
        Ok(self.buf.drain(..n).collect())
    }

    fn line(&mut self) -> io::Result<Vec<u8>> {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                return self.take(i + 2);
            }
            self.more()?;
        }
    }

    fn response(&mut self, head_only: bool) -> io::Result<Response> {
        let (status, headers, head_len) = loop {
            let mut slots = [httparse::EMPTY_HEADER; 32];
            let mut res = httparse::Response::new(&mut slots);
            match res.parse(&self.buf) {
                Ok(httparse::Status::Complete(n)) => {
                    let headers = res
                        .headers
                        .iter()
                        .map(|h| {
                            (
                                h.name.to_string(),
                                String::from_utf8(h.value.to_vec()).unwrap(),
                            )
                        })
                        .collect::<Vec<_>>();
                    break (res.code.unwrap(), headers, n);
                }
                Ok(httparse::Status::Partial) => self.more()?,
                Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
            }
        };
        self.buf.drain(..head_len);
        let mut response = Response {
            status,
            headers,
            raw_body: Vec::new(),
            body: Vec::new(),
        };
        if head_only {
            return Ok(response);
        }
        if response.header("transfer-encoding") == Some("chunked") {
            loop {
                let line = self.line()?;
                response.raw_body.extend_from_slice(&line);
                let hex = std::str::from_utf8(&line[..line.len() - 2]).unwrap();
                let n = usize::from_str_radix(hex, 16).unwrap();
                let data = self.take(n + 2)?;
                response.raw_body.extend_from_slice(&data);
                assert_eq!(&data[n..], b"\r\n");
                response.body.extend_from_slice(&data[..n]);
                if n == 0 {
                    break;
                }
            }
        } else if let Some(len) = response.header("content-length") {
            response.body = self.take(len.parse().unwrap())?;
            response.raw_body = response.body.clone();
        }
        Ok(response)
    }

    /// Everything left until EOF (buffered bytes first).
    fn rest(&mut self) -> io::Result<Vec<u8>> {
        let mut all = std::mem::take(&mut self.buf);
        self.stream.read_to_end(&mut all)?;
        Ok(all)
    }

    fn assert_closed(&mut self) {
        assert_eq!(self.rest().unwrap(), b"", "expected EOF");
    }
}

#[test]
fn default_response_is_ok() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    let r = c.get("/anything");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"ok");
    assert_eq!(r.header("content-length"), Some("2"));
    assert_eq!(r.header("server"), Some("pelt-target"));
    assert_eq!(r.header("connection"), None);
}

#[test]
fn status_and_size_come_from_the_query() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    let r = c.get("/x?status=404&size=1k&unknown=zz");
    assert_eq!(r.status, 404);
    assert_eq!(r.body, vec![b'x'; 1024]);
    let r = c.get("/?size=0&status=503");
    assert_eq!((r.status, r.body.len()), (503, 0));
    // Big enough for the vectored path (several filler slices).
    let r = c.get("/?size=1m");
    assert_eq!(r.header("content-length"), Some("1048576"));
    assert!(r.body.len() == 1 << 20 && r.body.iter().all(|&b| b == b'x'));
    // 204 carries neither body nor length; the next response still parses.
    let r = c.get("/?status=204&size=100");
    assert_eq!(r.status, 204);
    assert_eq!(r.header("content-length"), None);
    assert_eq!(c.get("/").body, b"ok");
}

#[test]
fn size_range_is_honoured_per_request() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    let mut seen = std::collections::HashSet::new();
    for _ in 0..50 {
        let r = c.get("/?size=10&size_max=20");
        assert!((10..=20).contains(&r.body.len()), "{}", r.body.len());
        seen.insert(r.body.len());
    }
    assert!(seen.len() > 1, "size_max did not vary the size");
}

#[test]
fn chunked_framing_is_exact() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    let r = c.get("/?size=10000&chunked=1");
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    assert_eq!(r.header("content-length"), None);
    let mut expected = Vec::new();
    for n in [4096, 4096, 1808] {
        expected.extend_from_slice(format!("{n:x}\r\n").as_bytes());
        expected.extend(std::iter::repeat_n(b'x', n));
        expected.extend_from_slice(b"\r\n");
    }
    expected.extend_from_slice(b"0\r\n\r\n");
    assert_eq!(r.raw_body, expected);
    let r = c.get("/?size=0&chunked=1");
    assert_eq!(r.raw_body, b"0\r\n\r\n");
    // Still in sync afterwards.
    assert_eq!(c.get("/").body, b"ok");
}

#[test]
fn keep_alive_serves_several_requests_on_one_connection() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    assert_eq!(c.get("/?size=3").body, b"xxx");
    assert_eq!(c.get("/?status=201").status, 201);
    assert_eq!(server.requests(), 2);
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    c.send(
        b"GET /?status=201&size=5 HTTP/1.1\r\n\r\n\
          GET /?status=202&size=100k HTTP/1.1\r\n\r\n\
          GET /?status=203&delay=20ms HTTP/1.1\r\n\r\n\
          GET /?status=404 HTTP/1.1\r\n\r\n",
    );
    let got: Vec<(u16, usize)> = (0..4)
        .map(|_| c.response(false).unwrap())
        .map(|r| (r.status, r.body.len()))
        .collect();
    assert_eq!(got, [(201, 5), (202, 100 * 1024), (203, 2), (404, 2)]);
}

#[test]
fn request_bodies_are_read_and_discarded() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    c.send(b"POST /?size=3 HTTP/1.1\r\nContent-Length: 5\r\n\r\nhel");
    c.send(b"loGET /?status=201 HTTP/1.1\r\n\r\n");
    assert_eq!(c.response(false).unwrap().body, b"xxx");
    assert_eq!(c.response(false).unwrap().status, 201);
    // A body larger than the read buffer.
    let body = vec![b'b'; 100_000];
    c.send(format!("PUT / HTTP/1.1\r\nContent-Length: {}\r\n\r\n", body.len()).as_bytes());
    c.send(&body);
    assert_eq!(c.get("/?status=202").status, 200);
    assert_eq!(c.response(false).unwrap().status, 202);
    assert_eq!(server.requests(), 4);
}

#[test]
fn expect_continue_is_answered_before_the_body() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    c.send(b"POST /?status=201 HTTP/1.1\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
    // The read timeout turns a missing 100 into a failure, not a hang.
    assert_eq!(c.response(true).unwrap().status, 100);
    c.send(b"body");
    assert_eq!(c.response(false).unwrap().status, 201);
}

#[test]
fn head_gets_headers_only() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    c.send(b"HEAD /?size=1024 HTTP/1.1\r\n\r\n");
    let r = c.response(true).unwrap();
    assert_eq!(r.header("content-length"), Some("1024"));
    // If a body had been sent, this would read it as the next response.
    assert_eq!(c.get("/?status=201").status, 201);
}

#[test]
fn http10_closes_unless_keep_alive_is_asked_for() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    c.send(b"GET /?chunked=1 HTTP/1.0\r\n\r\n");
    let r = c.response(false).unwrap();
    assert_eq!(r.header("connection"), Some("close"));
    // HTTP/1.0 clients cannot decode chunked, so they get a length.
    assert_eq!(r.header("content-length"), Some("2"));
    c.assert_closed();

    let mut c = Client::connect(server.local_addr());
    c.send(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    let r = c.response(false).unwrap();
    assert_eq!(r.header("connection"), Some("keep-alive"));
    c.send(b"GET /?status=201 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assert_eq!(c.response(false).unwrap().status, 201);
}

#[test]
fn connection_close_is_honoured() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    c.send(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\n\r\n");
    let r = c.response(false).unwrap();
    assert_eq!(r.header("connection"), Some("close"));
    c.assert_closed();
    assert_eq!(server.requests(), 1);
}

#[test]
fn bad_parameters_get_400_naming_them() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    for (target, param) in [
        ("/?status=abc", "status"),
        ("/?status=101", "status"),
        ("/?size=99m", "size"),
        ("/?delay=10", "delay"),
        ("/?fault=explode", "fault"),
        ("/?size=9&size_max=3", "size_max"),
    ] {
        let r = c.get(target);
        assert_eq!(r.status, 400, "{target}");
        let text = String::from_utf8(r.body).unwrap();
        assert!(text.ends_with('\n') && text.lines().count() == 1, "{text}");
        assert!(
            text.contains(&format!("'{param}'")) && text.contains("expected"),
            "{target}: {text}"
        );
    }
    // The connection survives a bad parameter.
    assert_eq!(c.get("/").status, 200);
    assert_eq!(server.requests(), 7);
}

#[test]
fn malformed_requests_get_an_error_and_close() {
    let server = server();
    for (request, status) in [
        (&b"BLAH\r\n\r\n"[..], 400),
        (b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            501,
        ),
    ] {
        let mut c = Client::connect(server.local_addr());
        c.send(request);
        let r = c.response(false).unwrap();
        assert_eq!(r.status, status);
        assert_eq!(r.header("connection"), Some("close"));
        c.assert_closed();
    }
    // A head that never ends within 64 KiB.
    let mut c = Client::connect(server.local_addr());
    c.send(b"GET / HTTP/1.1\r\nX-Big: ");
    c.send(&vec![b'a'; 70 * 1024]);
    assert_eq!(c.response(false).unwrap().status, 431);
    c.assert_closed();
    assert_eq!(server.requests(), 0);
}

#[test]
fn fault_close_ends_mid_body() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    c.send(b"GET /?size=1000&fault=close HTTP/1.1\r\n\r\n");
    let r = c.response(true).unwrap();
    assert_eq!(r.header("content-length"), Some("1000"));
    let body = c.rest().unwrap();
    assert_eq!(body.len(), 500, "EOF should come halfway through the body");

    // Chunked: EOF inside the chunk.
    let mut c = Client::connect(server.local_addr());
    c.send(b"GET /?size=1000&chunked=1&fault=close HTTP/1.1\r\n\r\n");
    c.response(true).unwrap();
    let rest = c.rest().unwrap();
    assert!(rest.starts_with(b"3e8\r\n") && rest.len() == 5 + 500);
}

#[test]
fn fault_reset_resets_without_a_response() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    c.send(b"GET /?fault=reset HTTP/1.1\r\n\r\n");
    let mut buf = [0u8; 64];
    let err = c.stream.read(&mut buf).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
    assert_eq!(server.requests(), 1);
}

#[test]
fn fault_invalid_is_not_http() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    c.send(b"GET /?fault=invalid HTTP/1.1\r\n\r\n");
    let bytes = c.rest().unwrap();
    assert!(!bytes.is_empty());
    let mut headers = [httparse::EMPTY_HEADER; 16];
    assert!(httparse::Response::new(&mut headers).parse(&bytes).is_err());
}

#[test]
fn fault_stall_says_nothing() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    c.stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    c.send(b"GET /?fault=stall&stall=1s HTTP/1.1\r\n\r\n");
    let mut buf = [0u8; 64];
    let err = c.stream.read(&mut buf).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ),
        "{err:?}"
    );
}

#[test]
fn fault_stall_closes_after_its_duration() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    let t0 = Instant::now();
    c.send(b"GET /?fault=stall&stall=100ms HTTP/1.1\r\n\r\n");
    c.assert_closed();
    assert!(t0.elapsed() >= Duration::from_millis(100));
}

#[test]
fn fault_hangup_answers_in_full_then_closes() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    c.send(b"GET /?fault=hangup HTTP/1.1\r\n\r\n");
    let r = c.response(true).unwrap();
    assert_eq!(r.status, 200);
    // Nothing said the connection would close.
    assert_eq!(r.header("connection"), None);
    assert_eq!(c.rest().unwrap(), b"ok");
}

#[test]
fn fault_extra_sends_a_response_nobody_asked_for() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    c.send(b"GET /?fault=extra HTTP/1.1\r\n\r\n");
    let r = c.response(false).unwrap();
    assert_eq!((r.status, &r.body[..]), (200, &b"ok"[..]));
    // The unasked response follows the body and the connection stays up.
    let r = c.response(false).unwrap();
    assert_eq!(r.status, 503);
    assert_eq!(c.get("/").status, 200);
}

#[test]
fn delay_holds_the_response() {
    let server = server();
    let mut c = Client::connect(server.local_addr());
    let t0 = Instant::now();
    assert_eq!(c.get("/?delay=50ms").status, 200);
    assert!(t0.elapsed() >= Duration::from_millis(50));
    let t0 = Instant::now();
    c.get("/?delay=20ms&delay_max=40ms");
    assert!(t0.elapsed() >= Duration::from_millis(20));
}

/// Timer wheels round up, the window opens at the server's receipt of the
/// first request (after the client's clock starts): the only slack needed
/// is for clock granularity.
const SLACK: Duration = Duration::from_millis(5);

#[test]
fn pause_holds_responses_until_the_window_ends() {
    let server = start(ServeConfig {
        threads: 1,
        pause: Some(Pause {
            after: Duration::ZERO,
            length: Duration::from_millis(1000),
        }),
        ..ServeConfig::default()
    });
    let mut c = Client::connect(server.local_addr());
    let t0 = Instant::now();
    assert_eq!(c.get("/").status, 200);
    assert!(t0.elapsed() + SLACK >= Duration::from_millis(1000));
    // One window per lifetime: afterwards responses flow freely. A second
    // window would hold the request a second; a busy machine delays a
    // loopback request by milliseconds, not half of that.
    let t1 = Instant::now();
    c.get("/");
    assert!(t1.elapsed() < Duration::from_millis(500));
}

#[test]
fn pause_holds_a_delay_that_ends_inside_the_window() {
    let server = start(ServeConfig {
        threads: 1,
        pause: Some(Pause {
            after: Duration::from_millis(100),
            length: Duration::from_millis(900),
        }),
        ..ServeConfig::default()
    });
    let mut c = Client::connect(server.local_addr());
    let t0 = Instant::now();
    // The first request starts the clock and is answered at once, not
    // held to the window's end (a busy machine's delay is far less).
    c.get("/");
    assert!(t0.elapsed() < Duration::from_millis(500));
    // Ready at about 150 ms, inside [100 ms, 1 s): held to 1 s.
    c.get("/?delay=150ms");
    assert!(t0.elapsed() + SLACK >= Duration::from_millis(1000));
}

#[test]
fn request_counter_is_exact() {
    let server = start(ServeConfig {
        threads: 2,
        ..ServeConfig::default()
    });
    let addr = server.local_addr();
    let clients: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = Client::connect(addr);
                for _ in 0..25 {
                    assert_eq!(c.get("/").status, 200);
                }
            })
        })
        .collect();
    for t in clients {
        t.join().unwrap();
    }
    assert_eq!(server.requests(), 100);
}

#[test]
fn shutdown_closes_connections_and_stops_accepting() {
    let server = server();
    let addr = server.local_addr();
    let mut c = Client::connect(addr);
    c.get("/");
    server.shutdown();
    c.assert_closed();
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn run_serves_on_the_calling_thread() {
    let server = Server::bind(
        "127.0.0.1:0".parse().unwrap(),
        ServeConfig {
            threads: 1,
            ..ServeConfig::default()
        },
    )
    .unwrap();
    let addr = server.local_addr();
    // Never joined: `run` serves until the process (this test binary) ends.
    std::thread::spawn(move || server.run());
    let mut c = Client::connect(addr);
    assert_eq!(c.get("/?status=202").status, 202);
}

#[test]
fn bind_errors_are_returned() {
    let server = server();
    let taken = Server::bind(server.local_addr(), ServeConfig::default()).unwrap_err();
    assert_eq!(taken.kind(), io::ErrorKind::AddrInUse);
    let bad = Server::bind(
        "127.0.0.1:0".parse().unwrap(),
        ServeConfig {
            threads: 1_000_000,
            ..ServeConfig::default()
        },
    )
    .unwrap_err();
    assert_eq!(bad.kind(), io::ErrorKind::InvalidInput);
}

/// The median time one keep-alive client waits for `target`, over `n`
/// sequential requests.
fn median_wait(server: &ServerHandle, target: &str, n: usize) -> Duration {
    let mut c = Client::connect(server.local_addr());
    let mut waits: Vec<Duration> = (0..n)
        .map(|_| {
            let start = Instant::now();
            assert_eq!(c.get(target).status, 200);
            start.elapsed()
        })
        .collect();
    waits.sort();
    waits[n / 2]
}

/// A calibration server keeps its promise: `?delay=` waits the delay, not
/// the delay rounded up to a millisecond timer's next tick (it answered
/// `delay=2ms` after ~2.5 ms before). A millisecond timer rounds each
/// deadline up to its next tick, a wait of the delay plus 0 to 1 ms, so its
/// median is 500 µs late; this server's, beyond the same request without a
/// delay, is within tens of microseconds on a quiet machine, the client's
/// own wake-up after sleeping through the delay included (pelt, timing by
/// the kernel's stamps, sees the server alone: tests/kernel_time.rs).
///
/// The client's wake-up is the noisy part: on a busy CI machine, with the
/// other tests of this binary running beside it, one batch of 200 read a
/// median 260 µs late, and the best of five 132 µs with the load average
/// at 11 on two cores. Noise only ever adds to a wait, so a few batches
/// are measured and the best one judged against half the millisecond
/// timer's lateness (250 µs): a server that is late by design is late in
/// every batch and still fails.
#[test]
fn delays_are_accurate_to_tens_of_microseconds() {
    const BATCHES: usize = 5;
    let server = server();
    for (target, delay) in [
        ("/?delay=2ms", Duration::from_millis(2)),
        ("/?delay=500us", Duration::from_micros(500)),
    ] {
        let mut seen = Vec::new();
        let held = (0..BATCHES).any(|_| {
            let baseline = median_wait(&server, "/", 100);
            let got = median_wait(&server, target, 200);
            let extra = got.saturating_sub(baseline);
            seen.push(format!("{got:?} ({baseline:?} without a delay)"));
            extra + Duration::from_micros(50) > delay && extra < delay + Duration::from_micros(250)
        });
        assert!(
            held,
            "{target}: median wait in {BATCHES} batches: {}",
            seen.join(", ")
        );
    }
}

/// `?work=` holds the serving thread like a CPU-bound handler: on one
/// thread, requests on two connections are answered one after the other,
/// so the later of two sent together waits for both (the known capacity
/// `pelt sweep`'s test searches for), while `?delay=` lets them overlap.
#[test]
fn work_holds_the_thread_and_delay_does_not() {
    let server = server();
    let both = |target: &str| {
        let mut a = Client::connect(server.local_addr());
        let mut b = Client::connect(server.local_addr());
        let request = format!("GET {target} HTTP/1.1\r\nHost: t\r\n\r\n");
        let start = Instant::now();
        a.send(request.as_bytes());
        b.send(request.as_bytes());
        let threads = [a, b].map(|mut c| {
            std::thread::spawn(move || {
                assert_eq!(c.response(false).unwrap().status, 200);
                Instant::now()
            })
        });
        let last = threads
            .map(|t| t.join().unwrap())
            .into_iter()
            .max()
            .unwrap();
        last - start
    };
    // One after the other: at least twice the work. Overlapping: well
    // under twice the delay, with 80 ms to spare for a busy machine.
    let work = both("/?work=100ms");
    assert!(work >= Duration::from_millis(200), "work: {work:?}");
    let delay = both("/?delay=100ms");
    assert!(delay < Duration::from_millis(180), "delay: {delay:?}");
}

#[test]
fn http3_takes_the_udp_port_of_the_tcp_ports_number_and_refuses_no_streams() {
    let server = Server::bind(
        "127.0.0.1:0".parse().unwrap(),
        ServeConfig {
            threads: 1,
            http3: true,
            ..ServeConfig::default()
        },
    )
    .unwrap();
    let port = server.local_addr().port();
    let taken = std::net::UdpSocket::bind(("127.0.0.1", port)).unwrap_err();
    assert_eq!(taken.kind(), io::ErrorKind::AddrInUse, "{taken}");
    let refused = Server::bind(
        "127.0.0.1:0".parse().unwrap(),
        ServeConfig {
            http3: true,
            http3_max_streams: 0,
            ..ServeConfig::default()
        },
    )
    .unwrap_err();
    assert_eq!(refused.kind(), io::ErrorKind::InvalidInput);
    assert!(
        refused.to_string().contains("http3_max_streams"),
        "{refused}"
    );
}
