//! WebSocket on `pelt serve` (RFC 6455): a request that asks for the
//! upgrade (`Upgrade: websocket` with a `Sec-WebSocket-Key`) is answered
//! `101 Switching Protocols`, and the connection then is
//!
//! - an *echo* (the default): each data frame comes back as it came (text
//!   or binary, fragments as fragments), after the query's `delay` (or a
//!   random one up to `delay_max`), timed as HTTP responses are;
//! - a *push* (`push=DUR`): a text message every DUR from the upgrade,
//!   `{"seq":N,"ts":UNIX_SECONDS}` with the send time to the microsecond
//!   (for latency from a timestamp in the event), `count` of them (all run
//!   long without), then a close (1000). What the client sends is read and
//!   dropped.
//!
//! Pings get pongs; a close is answered with a close and ends the
//! connection. A client frame without a mask, a reserved bit or opcode, a
//! fragmented control frame or one longer than the server's max body is
//! failed with a close of 1002 or 1009 (§5.1, §7.4.1).

use std::io;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::query::Params;

const CONTINUATION: u8 = 0x0;
const TEXT: u8 = 0x1;
const BINARY: u8 = 0x2;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;
const PONG: u8 = 0xA;

const PROTOCOL_ERROR: u16 = 1002;
const TOO_BIG: u16 = 1009;
const NORMAL: u16 = 1000;

/// The `101` answer to a key.
pub(crate) fn switching_protocols(key: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ",
    );
    out.extend_from_slice(pelt_core::ws_key::accept(key).as_bytes());
    out.extend_from_slice(b"\r\n\r\n");
}

/// One client frame's head, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FrameHead {
    fin: bool,
    opcode: u8,
    /// Bytes of the head, mask included.
    len: usize,
    payload: usize,
    mask: [u8; 4],
}

/// Parses the frame head at the start of `buf`: `Ok(None)` until all of it
/// is there, `Err(close code)` for a frame the server must fail.
fn frame_head(buf: &[u8], max: usize) -> Result<Option<FrameHead>, u16> {
    let [b0, b1, ..] = *buf else {
        return Ok(None);
    };
    let (fin, opcode) = (b0 & 0x80 != 0, b0 & 0x0F);
    if b0 & 0x70 != 0 || !matches!(opcode, CONTINUATION | TEXT | BINARY | CLOSE | PING | PONG) {
        return Err(PROTOCOL_ERROR);
    }
    if b1 & 0x80 == 0 {
        // §5.1: a server closes the connection on an unmasked frame.
        return Err(PROTOCOL_ERROR);
    }
    let (payload, at) = match b1 & 0x7F {
        126 => match buf.get(2..4) {
            Some(b) => (u64::from(u16::from_be_bytes([b[0], b[1]])), 4),
            None => return Ok(None),
        },
        127 => match buf.get(2..10) {
            Some(b) => (u64::from_be_bytes(b.try_into().expect("8 bytes")), 10),
            None => return Ok(None),
        },
        n => (u64::from(n), 2),
    };
    if opcode >= CLOSE && (!fin || payload > 125) {
        return Err(PROTOCOL_ERROR);
    }
    if payload > max as u64 {
        return Err(TOO_BIG);
    }
    let Some(mask) = buf.get(at..at + 4) else {
        return Ok(None);
    };
    Ok(Some(FrameHead {
        fin,
        opcode,
        len: at + 4,
        payload: payload as usize,
        mask: mask.try_into().expect("4 bytes"),
    }))
}

/// Appends an unmasked frame (a server's, §5.1).
fn push_frame(out: &mut Vec<u8>, fin: bool, opcode: u8, payload: &[u8]) {
    out.push(u8::from(fin) << 7 | opcode);
    match payload.len() {
        n @ 0..=125 => out.push(n as u8),
        n @ 126..=0xFFFF => {
            out.push(126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
}

fn push_close(out: &mut Vec<u8>, code: u16) {
    push_frame(out, true, CLOSE, &code.to_be_bytes());
}

/// Serves an upgraded connection; `buf[..end]` holds what the client sent
/// after its upgrade request.
pub(crate) async fn serve(
    stream: &mut TcpStream,
    mut buf: Vec<u8>,
    mut end: usize,
    params: &Params,
    max_message: usize,
) -> io::Result<()> {
    let mut out = Vec::with_capacity(256);
    let mut push = params.push.map(|every| Push {
        every,
        next: Instant::now() + every,
        seq: 0,
        left: params.count,
    });
    if push.as_ref().is_some_and(|p| p.left == Some(0)) {
        push_close(&mut out, NORMAL);
        return stream.write_all(&out).await;
    }
    loop {
        // Every complete frame in the buffer.
        let mut start = 0;
        loop {
            let head = match frame_head(&buf[start..end], max_message) {
                Ok(Some(head)) if end - start >= head.len + head.payload => head,
                Ok(_) => break,
                Err(code) => {
                    push_close(&mut out, code);
                    return stream.write_all(&out).await;
                }
            };
            let body = start + head.len..start + head.len + head.payload;
            for (i, b) in buf[body.clone()].iter_mut().enumerate() {
                *b ^= head.mask[i % 4];
            }
            start = body.end;
            match head.opcode {
                CLOSE => {
                    // Echo the client's code (§5.5.1), then end.
                    push_frame(&mut out, true, CLOSE, buf[body].get(..2).unwrap_or(&[]));
                    return stream.write_all(&out).await;
                }
                PING => push_frame(&mut out, true, PONG, &buf[body]),
                PONG => {}
                _ if push.is_some() => {}
                opcode => {
                    if opcode != CONTINUATION {
                        let wait = params.pick_delay();
                        if !wait.is_zero() {
                            stream.write_all(&out).await?;
                            out.clear();
                            crate::timer::sleep_until(Instant::now() + wait).await;
                        }
                    }
                    push_frame(&mut out, head.fin, opcode, &buf[body]);
                }
            }
        }
        buf.copy_within(start..end, 0);
        end -= start;
        if !out.is_empty() {
            stream.write_all(&out).await?;
            out.clear();
        }
        if end == buf.len() {
            // A frame longer than the buffer (within the max): room for it.
            buf.resize((buf.len() * 2).min(max_message + 14).max(end + 1), 0);
        }
        let read = match push.as_mut() {
            None => stream.read(&mut buf[end..]).await?,
            Some(p) => {
                tokio::select! {
                    n = stream.read(&mut buf[end..]) => n?,
                    () = crate::timer::sleep_until(p.next) => {
                        if !p.send(&mut out) {
                            push_close(&mut out, NORMAL);
                            return stream.write_all(&out).await;
                        }
                        continue;
                    }
                }
            }
        };
        if read == 0 {
            return Ok(());
        }
        end += read;
    }
}

/// `push=DUR`: the next message's time, its number, how many are left.
struct Push {
    every: Duration,
    next: Instant,
    seq: u64,
    left: Option<u64>,
}

impl Push {
    /// Appends the next message; `false` once `count` were sent.
    fn send(&mut self, out: &mut Vec<u8>) -> bool {
        if self.left == Some(0) {
            return false;
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let text = format!(
            "{{\"seq\":{},\"ts\":{}.{:06}}}",
            self.seq,
            now.as_secs(),
            now.subsec_micros()
        );
        push_frame(out, true, TEXT, text.as_bytes());
        self.seq += 1;
        self.left = self.left.map(|n| n - 1);
        // On the schedule, not from now: a late wake-up does not shift the
        // messages after it.
        self.next += self.every;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mask = [1, 2, 3, 4];
        let mut f = vec![u8::from(fin) << 7 | opcode];
        match payload.len() {
            n @ 0..=125 => f.push(0x80 | n as u8),
            n => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
        }
        f.extend_from_slice(&mask);
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        f
    }

    #[test]
    fn client_frames_parse_in_pieces_and_bad_ones_are_failed() {
        let f = masked(true, TEXT, b"hello");
        for cut in 0..f.len() {
            let got = frame_head(&f[..cut], 1 << 20).unwrap();
            assert!(got.is_none_or(|h| cut < h.len + h.payload), "{cut}");
        }
        let h = frame_head(&f, 1 << 20).unwrap().unwrap();
        assert_eq!((h.fin, h.opcode, h.len, h.payload), (true, TEXT, 6, 5));
        let long = masked(false, BINARY, &[7u8; 300]);
        let h = frame_head(&long, 1 << 20).unwrap().unwrap();
        assert_eq!((h.fin, h.len, h.payload), (false, 8, 300));
        assert_eq!(frame_head(&long, 100), Err(TOO_BIG));
        // Unmasked, a reserved bit, an unknown opcode, a long ping.
        assert_eq!(frame_head(&[0x81, 0x01, b'x'], 100), Err(PROTOCOL_ERROR));
        assert_eq!(frame_head(&[0xC1, 0x80], 100), Err(PROTOCOL_ERROR));
        assert_eq!(frame_head(&[0x83, 0x80], 100), Err(PROTOCOL_ERROR));
        assert_eq!(frame_head(&[0x89, 0xFE, 0, 126], 1000), Err(PROTOCOL_ERROR));
        assert_eq!(frame_head(&[0x09, 0x80], 100), Err(PROTOCOL_ERROR));
    }

    #[test]
    fn server_frames_are_unmasked_with_the_right_length_form() {
        for n in [0usize, 125, 126, 65_535, 65_536] {
            let mut out = Vec::new();
            push_frame(&mut out, true, BINARY, &vec![0u8; n]);
            assert_eq!(out[0], 0x82);
            assert_eq!(out[1] & 0x80, 0, "unmasked");
            let head = match n {
                0..=125 => 2,
                126..=65_535 => 4,
                _ => 10,
            };
            assert_eq!(out.len(), head + n, "{n}");
        }
    }

    #[test]
    fn pushes_number_their_messages_and_stop_at_the_count() {
        let mut p = Push {
            every: Duration::from_millis(10),
            next: Instant::now(),
            seq: 0,
            left: Some(2),
        };
        let mut out = Vec::new();
        assert!(p.send(&mut out));
        assert!(p.send(&mut out));
        assert!(!p.send(&mut out));
        let first = std::str::from_utf8(&out[2..2 + out[1] as usize]).unwrap();
        assert!(first.starts_with("{\"seq\":0,\"ts\":"), "{first}");
        let ts: f64 = first[14..first.len() - 1].parse().unwrap();
        assert!(ts > 1.7e9, "{first}");
    }
}
