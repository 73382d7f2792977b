//! The WebSocket transport through a real worker against scripted
//! loopback servers, each misbehaving one way (RFC 6455's list of what a
//! client must refuse), with the server's own counts as witness: every
//! misbehaviour is a failure of its kind, closes are counted by code, and
//! nothing hangs (each run bounded by `--timeout`).

use crate::intervals::WorkerMsg;
use crate::plan::{Protocol, RunPlan};
use crate::ws::handshake::accept;
use pelt_core::ws::Close;
use pelt_core::{ErrorKind, Load, Recorder, RunConfig, Stop, Target, Url};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How the scripted server behaves after the client's upgrade request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A good server: pings before each reply, echoes, answers a close.
    Echo,
    /// Answers the upgrade with a 200.
    Status200,
    /// A 101 with the wrong `Sec-WebSocket-Accept`.
    WrongAccept,
    /// Replies with a masked frame.
    Masked,
    /// Replies with a frame announcing a megabyte.
    Oversized,
    /// Replies with a text frame that is not UTF-8.
    BadUtf8,
    /// Echoes, but never answers the client's close.
    NeverCloses,
    /// Echoes twice per connection, then closes with 1011.
    Closes1011,
    /// As `Closes1011`, its 101 setting a cookie.
    SetsCookie,
    /// Reads messages and never answers.
    Silent,
}

/// What the server counted.
#[derive(Debug, Default)]
struct Counts {
    upgrades: AtomicU64,
    messages: AtomicU64,
    pongs: AtomicU64,
    closes: AtomicU64,
    /// Each upgrade request's `Cookie` header (empty without one).
    cookies: std::sync::Mutex<Vec<String>>,
}

/// Reads one client frame: its opcode and unmasked payload; `None` at
/// the connection's end. Panics on an unmasked client frame.
fn read_frame(s: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
    let mut h = [0u8; 2];
    s.read_exact(&mut h).ok()?;
    assert_eq!(h[1] & 0x80, 0x80, "every client frame is masked");
    let len = match h[1] & 0x7F {
        126 => {
            let mut b = [0u8; 2];
            s.read_exact(&mut b).ok()?;
            u64::from(u16::from_be_bytes(b))
        }
        127 => {
            let mut b = [0u8; 8];
            s.read_exact(&mut b).ok()?;
            u64::from_be_bytes(b)
        }
        n => u64::from(n),
    };
    let mut key = [0u8; 4];
    s.read_exact(&mut key).ok()?;
    let mut payload = vec![0u8; len as usize];
    s.read_exact(&mut payload).ok()?;
    crate::ws::mask(&mut payload, key);
    Some((h[0] & 0x0F, payload))
}

fn frame(first: u8, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() < 126);
    let mut f = vec![first, payload.len() as u8];
    f.extend_from_slice(payload);
    f
}

fn serve_conn(mut s: TcpStream, mode: Mode, counts: &Counts) {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut b).unwrap_or(0) == 0 {
            return;
        }
        head.push(b[0]);
    }
    let text = String::from_utf8_lossy(&head).to_string();
    let key = text
        .lines()
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
        .expect("a key")
        .trim()
        .to_string();
    let good = |accept: &str| {
        format!("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n")
    };
    let cookie = text
        .lines()
        .find_map(|l| l.strip_prefix("Cookie: "))
        .unwrap_or_default()
        .trim()
        .to_string();
    counts.cookies.lock().expect("not poisoned").push(cookie);
    let answer = match mode {
        Mode::Status200 => "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi".to_string(),
        Mode::WrongAccept => good("AAAAAAAAAAAAAAAAAAAAAAAAAAA="),
        Mode::SetsCookie => {
            good(&accept(&key)).replacen("\r\n\r\n", "\r\nSet-Cookie: sid=7; Path=/\r\n\r\n", 1)
        }
        _ => good(&accept(&key)),
    };
    if s.write_all(answer.as_bytes()).is_err() {
        return;
    }
    counts.upgrades.fetch_add(1, Ordering::SeqCst);
    let mut echoed = 0;
    while let Some((opcode, payload)) = read_frame(&mut s) {
        match opcode {
            0x1 | 0x2 => {
                counts.messages.fetch_add(1, Ordering::SeqCst);
                let reply = match mode {
                    Mode::Echo => {
                        // A ping first: the client must answer it.
                        let _ = s.write_all(&frame(0x89, b"are you there"));
                        frame(0x80 | opcode, &payload)
                    }
                    Mode::Masked => {
                        let mut f = frame(0x80 | opcode, &payload);
                        f[1] |= 0x80;
                        f.splice(2..2, [0, 0, 0, 0]);
                        f
                    }
                    Mode::Oversized => {
                        let mut f = vec![0x82, 127];
                        f.extend_from_slice(&(1u64 << 20).to_be_bytes());
                        f
                    }
                    Mode::BadUtf8 => frame(0x81, &[b'a', 0xff, 0xfe]),
                    Mode::Closes1011 | Mode::SetsCookie if echoed == 2 => {
                        frame(0x88, &1011u16.to_be_bytes())
                    }
                    Mode::Silent => continue,
                    _ => frame(0x80 | opcode, &payload),
                };
                echoed += 1;
                if s.write_all(&reply).is_err() {
                    return;
                }
            }
            0xA => {
                counts.pongs.fetch_add(1, Ordering::SeqCst);
            }
            0x8 => {
                counts.closes.fetch_add(1, Ordering::SeqCst);
                if mode != Mode::NeverCloses {
                    let _ = s.write_all(&frame(0x88, &payload));
                    return;
                }
            }
            _ => {}
        }
    }
}

/// A server on loopback in `mode`: its address and counts.
fn server(mode: Mode) -> (u16, Arc<Counts>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let counts = Arc::new(Counts::default());
    let c = counts.clone();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(s) = s else { return };
            let c = c.clone();
            std::thread::spawn(move || serve_conn(s, mode, &c));
        }
    });
    (port, counts)
}

/// Runs one worker of a closed loop of `connections` sending `messages`
/// to `port` on this thread; returns its seconds merged and how long it
/// took.
fn run(
    port: u16,
    connections: u32,
    messages: u64,
    adjust: impl FnOnce(&mut RunConfig),
) -> (Recorder, Duration) {
    let url = Url::parse(&format!("ws://127.0.0.1:{port}/echo")).expect("a URL");
    let mut target = Target::get(url);
    target.body = b"hello".to_vec();
    let stop = Stop {
        requests: Some(messages),
        duration: None,
    };
    let mut config = RunConfig::new(vec![target], Load::closed(connections), stop);
    config.threads = 1;
    config.http.timeout = Duration::from_secs(2);
    adjust(&mut config);
    config.validate().expect("a valid configuration");
    let plan = RunPlan::new(&config).expect("a plan");
    assert_eq!(plan.protocol, Protocol::Ws);
    let share = plan.shares(&config)[0];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (tx, rx) = std::sync::mpsc::channel();
    let (_cancel, cancel_rx) = tokio::sync::watch::channel(false);
    let began = Instant::now();
    crate::worker::run_worker(rt, Arc::new(plan), share, Vec::new(), tx, cancel_rx);
    let took = began.elapsed();
    let mut all = Recorder::new();
    while let Ok(msg) = rx.try_recv() {
        if let WorkerMsg::Interval { rec, .. } = msg {
            all.merge_counts(&*rec);
        }
    }
    (all, took)
}

fn closes(r: &Recorder) -> Vec<(String, u64)> {
    r.ws.as_ref()
        .map(|w| w.closes().map(|(c, n)| (c.name(), n)).collect())
        .unwrap_or_default()
}

#[test]
fn an_echo_server_answers_every_message_and_every_ping() {
    let (port, counts) = server(Mode::Echo);
    let (r, _) = run(port, 3, 30, |_| {});
    assert_eq!((r.requests, r.successes, r.failed()), (30, 30, 0));
    // The witness: the server read every message, and a pong per ping.
    assert_eq!(counts.messages.load(Ordering::SeqCst), 30);
    assert_eq!(counts.pongs.load(Ordering::SeqCst), 30);
    assert_eq!(counts.upgrades.load(Ordering::SeqCst), 3);
    assert_eq!(r.ws.as_ref().map(|w| w.upgrades.len()), Some(3));
    // Each connection closed by the handshake at the end.
    assert_eq!(counts.closes.load(Ordering::SeqCst), 3);
    assert_eq!(closes(&r), [("1000".to_string(), 3)]);
    assert_eq!(r.body_bytes_in, 30 * 5);
}

/// Each bad server's messages fail with their kind, and the run ends.
#[test]
fn a_misbehaving_server_is_a_failure_of_its_kind_never_a_hang() {
    let cases = [
        (Mode::Status200, ErrorKind::WsUpgrade, None),
        (Mode::WrongAccept, ErrorKind::WsUpgrade, None),
        (Mode::Masked, ErrorKind::WsProtocol, Some("1002")),
        (Mode::Oversized, ErrorKind::WsTooBig, Some("1009")),
        (Mode::BadUtf8, ErrorKind::WsProtocol, Some("1007")),
    ];
    for (mode, kind, close) in cases {
        let (port, counts) = server(mode);
        let (r, took) = run(port, 2, 6, |c| c.http.ws.max_message = 1000);
        assert_eq!(r.requests, 6, "{mode:?}");
        assert_eq!(r.errors[kind.index()], 6, "{mode:?}: {:?}", r.errors);
        assert_eq!(r.failed(), 6, "{mode:?}");
        assert!(took < Duration::from_secs(5), "{mode:?} took {took:?}");
        match close {
            // A connection per message, each failed by pelt with its code.
            Some(code) => {
                assert_eq!(closes(&r), [(code.to_string(), 6)], "{mode:?}");
                assert_eq!(counts.messages.load(Ordering::SeqCst), 6, "{mode:?}");
            }
            // Never upgraded: no WebSocket connection to close.
            None => assert_eq!(closes(&r), [], "{mode:?}"),
        }
    }
}

#[test]
fn a_server_that_never_closes_is_left_after_a_moment_as_1006() {
    let (port, counts) = server(Mode::NeverCloses);
    let (r, took) = run(port, 2, 4, |_| {});
    assert_eq!((r.requests, r.successes), (4, 4));
    assert_eq!(
        counts.closes.load(Ordering::SeqCst),
        2,
        "pelt's close frames"
    );
    assert_eq!(closes(&r), [("1006".to_string(), 2)]);
    // Half the grace (min(2 s, --timeout) = 2 s) at most, and a margin.
    assert!(took < Duration::from_secs(4), "took {took:?}");
}

#[test]
fn a_server_close_fails_the_message_in_flight_and_counts_its_code() {
    let (port, _) = server(Mode::Closes1011);
    // One connection: two replies, then a close; a new connection each
    // time: nine messages make three connections, three closes.
    let (r, _) = run(port, 1, 9, |_| {});
    assert_eq!(r.requests, 9);
    assert_eq!(r.errors[ErrorKind::WsClosed.index()], 3, "{:?}", r.errors);
    assert_eq!(r.successes, 6);
    assert_eq!(closes(&r), [("1011".to_string(), 3)]);
    assert!(Close::of(1011).is_abnormal());
}

#[test]
fn a_server_that_never_replies_times_out() {
    let (port, counts) = server(Mode::Silent);
    let (r, took) = run(port, 1, 2, |c| c.http.timeout = Duration::from_millis(300));
    assert_eq!(r.errors[ErrorKind::Timeout.index()], 2, "{:?}", r.errors);
    assert_eq!(counts.messages.load(Ordering::SeqCst), 2);
    // Each dropped connection counted as 1006 (no close frame).
    assert_eq!(closes(&r), [("1006".to_string(), 2)]);
    assert!(took < Duration::from_secs(3), "took {took:?}");
}

#[test]
fn cookies_set_by_the_upgrade_go_with_the_next_one() {
    let (port, counts) = server(Mode::SetsCookie);
    // One sender: three messages a connection (two replies, then the
    // server's close), so six messages take two upgrades.
    let (r, _) = run(port, 1, 6, |c| c.http.session.cookies = true);
    assert_eq!(r.requests, 6);
    let cookies = counts.cookies.lock().expect("not poisoned").clone();
    assert_eq!(
        cookies,
        ["", "sid=7"],
        "the jar's cookie on the second upgrade"
    );
}
