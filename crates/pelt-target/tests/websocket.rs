//! `pelt serve`'s WebSocket side, driven with plain std sockets and
//! hand-made frames: the upgrade's accept, echo (text, binary, fragments,
//! a ping, after a delay), push with a count, the close handshake, and a
//! client frame without a mask failed with 1002.
//!
//! Waiting is done with socket read timeouts, never with sleeps used as
//! synchronisation.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use pelt_target::{ServeConfig, Server, ServerHandle};

fn server() -> ServerHandle {
    let config = ServeConfig {
        threads: 1,
        ..ServeConfig::default()
    };
    Server::bind("127.0.0.1:0".parse().unwrap(), config)
        .unwrap()
        .spawn()
        .unwrap()
}

/// A connection upgraded at `path`; asserts the `101` and its accept.
fn upgrade(server: &ServerHandle, path: &str) -> TcpStream {
    let mut s = TcpStream::connect(server.local_addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // RFC 6455 §1.3's example key and its accept.
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
    assert!(
        head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"),
        "{head}"
    );
    s
}

/// A client frame: masked, as RFC 6455 §5.1 requires (unless `unmasked`).
fn frame(fin: bool, opcode: u8, payload: &[u8], unmasked: bool) -> Vec<u8> {
    let mask = [0x37, 0xfa, 0x21, 0x3d];
    let bit = if unmasked { 0 } else { 0x80 };
    let mut f = vec![u8::from(fin) << 7 | opcode];
    match payload.len() {
        n @ 0..=125 => f.push(bit | n as u8),
        n => {
            f.push(bit | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
    }
    if unmasked {
        f.extend_from_slice(payload);
    } else {
        f.extend_from_slice(&mask);
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    }
    f
}

/// The next server frame: (fin, opcode, payload); asserts it is unmasked.
fn read_frame(s: &mut TcpStream) -> (bool, u8, Vec<u8>) {
    let mut h = [0u8; 2];
    s.read_exact(&mut h).unwrap();
    assert_eq!(h[1] & 0x80, 0, "a server frame is never masked");
    let len = match h[1] & 0x7f {
        126 => {
            let mut b = [0u8; 2];
            s.read_exact(&mut b).unwrap();
            u16::from_be_bytes(b) as usize
        }
        127 => {
            let mut b = [0u8; 8];
            s.read_exact(&mut b).unwrap();
            u64::from_be_bytes(b) as usize
        }
        n => n as usize,
    };
    let mut payload = vec![0u8; len];
    s.read_exact(&mut payload).unwrap();
    (h[0] & 0x80 != 0, h[0] & 0x0f, payload)
}

#[test]
fn echoes_text_binary_and_fragments_answers_pings_and_closes() {
    let server = server();
    let mut s = upgrade(&server, "/chat");
    s.write_all(&frame(true, 1, b"hello", false)).unwrap();
    assert_eq!(read_frame(&mut s), (true, 1, b"hello".to_vec()));
    let big = vec![0xabu8; 1000];
    s.write_all(&frame(true, 2, &big, false)).unwrap();
    assert_eq!(read_frame(&mut s), (true, 2, big));
    // A fragmented message with a ping between its fragments: the pong
    // comes at once, the fragments as they came.
    let mut out = frame(false, 1, b"frag", false);
    out.extend(frame(true, 9, b"p", false));
    out.extend(frame(true, 0, b"ments", false));
    s.write_all(&out).unwrap();
    assert_eq!(read_frame(&mut s), (false, 1, b"frag".to_vec()));
    assert_eq!(read_frame(&mut s), (true, 10, b"p".to_vec()));
    assert_eq!(read_frame(&mut s), (true, 0, b"ments".to_vec()));
    // pelt's close (1000) is answered with the same code, then the end.
    s.write_all(&frame(true, 8, &1000u16.to_be_bytes(), false))
        .unwrap();
    assert_eq!(
        read_frame(&mut s),
        (true, 8, 1000u16.to_be_bytes().to_vec())
    );
    assert_eq!(s.read(&mut [0u8; 1]).unwrap(), 0, "closed after the close");
    // The upgrade counts as a request.
    assert_eq!(server.requests(), 1);
}

#[test]
fn an_echo_waits_its_delay() {
    let server = server();
    let mut s = upgrade(&server, "/?delay=30ms");
    for _ in 0..3 {
        let t0 = Instant::now();
        s.write_all(&frame(true, 1, b"x", false)).unwrap();
        assert_eq!(read_frame(&mut s).2, b"x");
        assert!(t0.elapsed() >= Duration::from_millis(30));
    }
}

#[test]
fn push_sends_count_timestamped_messages_then_closes() {
    let server = server();
    let t0 = Instant::now();
    let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let mut s = upgrade(&server, "/?push=10ms&count=5");
    for seq in 0..5 {
        let (fin, op, text) = read_frame(&mut s);
        assert!(fin && op == 1);
        let text = String::from_utf8(text).unwrap();
        let ts: f64 = text
            .strip_prefix(&format!("{{\"seq\":{seq},\"ts\":"))
            .and_then(|t| t.strip_suffix('}'))
            .unwrap_or_else(|| panic!("{text}"))
            .parse()
            .unwrap();
        assert!(ts >= before.as_secs_f64(), "{text}");
    }
    // Five messages 10 ms apart from the upgrade: the fifth after 50 ms.
    assert!(t0.elapsed() >= Duration::from_millis(50));
    assert_eq!(
        read_frame(&mut s),
        (true, 8, 1000u16.to_be_bytes().to_vec())
    );
}

#[test]
fn an_unmasked_client_frame_is_failed_with_1002() {
    let server = server();
    let mut s = upgrade(&server, "/");
    s.write_all(&frame(true, 1, b"bare", true)).unwrap();
    assert_eq!(
        read_frame(&mut s),
        (true, 8, 1002u16.to_be_bytes().to_vec())
    );
}

#[test]
fn a_bad_push_is_a_400_naming_it() {
    let server = server();
    let mut s = TcpStream::connect(server.local_addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /?push=1ns HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    .unwrap();
    let mut got = [0u8; 512];
    let n = s.read(&mut got).unwrap();
    let text = String::from_utf8_lossy(&got[..n]);
    assert!(text.starts_with("HTTP/1.1 400 "), "{text}");
    assert!(text.contains("push"), "{text}");
}
