//! WebSocket on the wire (RFC 6455): the frame codec and the opening
//! handshake's arithmetic. Wire code only: the sender that uses it is
//! `transport::ws`.
//!
//! Written here rather than taken from a crate (tungstenite,
//! tokio-websockets, fastwebsockets) so that a message is read off
//! pelt's own connection (`conn::Stream`, with the kernel's receive
//! stamps) and nothing is allocated per message: the [`Reader`] walks a
//! byte buffer the sender owns, validates text incrementally and keeps
//! only a control frame's payload (at most 125 bytes) in place;
//! [`encode`] masks into a buffer the sender reuses.
//!
//! - [`Reader`]: server frames in, incrementally (input split anywhere),
//!   into [`Event`]s: a whole data message (fragments reassembled by
//!   length), a ping, a pong, a close; every breach of the RFC a
//!   [`WsError`].
//! - [`encode`]: one client frame, masked.
//! - [`handshake`]: `Sec-WebSocket-Key`/`Accept` (SHA-1, base64) and the
//!   checks on the server's `101`.

pub(crate) mod handshake;

use pelt_core::ErrorKind;

/// Frame opcodes (RFC 6455 §5.2).
pub(crate) mod op {
    pub const CONTINUATION: u8 = 0x0;
    pub const TEXT: u8 = 0x1;
    pub const BINARY: u8 = 0x2;
    pub const CLOSE: u8 = 0x8;
    pub const PING: u8 = 0x9;
    pub const PONG: u8 = 0xA;
}

/// Close codes pelt sends (RFC 6455 §7.4.1).
pub(crate) mod code {
    pub const NORMAL: u16 = 1000;
    pub const PROTOCOL: u16 = 1002;
    pub const INVALID_DATA: u16 = 1007;
    pub const TOO_BIG: u16 = 1009;
}

/// What the server broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WsError {
    /// A frame against RFC 6455 (§5, §7): why, in a user's words.
    Protocol(&'static str),
    /// A text message that is not UTF-8 (§8.1).
    Utf8,
    /// A message (or a frame's announced length) over the maximum.
    TooBig(u64),
}

impl WsError {
    /// The failure kind it is counted as.
    pub fn kind(&self) -> ErrorKind {
        match self {
            WsError::Protocol(_) | WsError::Utf8 => ErrorKind::WsProtocol,
            WsError::TooBig(_) => ErrorKind::WsTooBig,
        }
    }

    /// The close code pelt sends as it fails the connection.
    pub fn close_code(&self) -> u16 {
        match self {
            WsError::Protocol(_) => code::PROTOCOL,
            WsError::Utf8 => code::INVALID_DATA,
            WsError::TooBig(_) => code::TOO_BIG,
        }
    }

    /// What a user reads.
    pub fn detail(&self, max: u64) -> String {
        match self {
            WsError::Protocol(why) => format!("WebSocket protocol error: {why}"),
            WsError::Utf8 => "WebSocket text message is not valid UTF-8".to_string(),
            WsError::TooBig(n) => format!(
                "WebSocket message of at least {n} bytes is over --max-message ({max} bytes)"
            ),
        }
    }
}

/// What the server sent, a frame (or a message's last frame) at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// A whole data message: its opcode (text or binary) and length.
    Message { opcode: u8, len: u64 },
    /// A ping: its payload is at `payload` in the bytes last given.
    Ping { payload: (usize, usize) },
    /// A pong (unasked, or an answer): nothing to do.
    Pong,
    /// A close frame: its code (none when it carried none).
    Close { code: Option<u16> },
}

/// A frame's head, as parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Head {
    fin: bool,
    opcode: u8,
    len: u64,
    /// Bytes of the head (2 to 10: a server's frame has no mask key).
    size: usize,
}

/// Parses a frame head at the start of `buf`: `Ok(None)` when more bytes
/// are needed.
fn parse_head(buf: &[u8], max: u64) -> Result<Option<Head>, WsError> {
    let [b0, b1, ..] = *buf else {
        return Ok(None);
    };
    if b0 & 0x70 != 0 {
        return Err(WsError::Protocol(
            "reserved bits (RSV1-3) set, but no extension was negotiated",
        ));
    }
    if b1 & 0x80 != 0 {
        return Err(WsError::Protocol(
            "the server masked a frame (RFC 6455 §5.1: a client must fail the connection)",
        ));
    }
    let fin = b0 & 0x80 != 0;
    let opcode = b0 & 0x0F;
    match opcode {
        op::CONTINUATION | op::TEXT | op::BINARY => {}
        op::CLOSE | op::PING | op::PONG => {
            if !fin {
                return Err(WsError::Protocol("a fragmented control frame"));
            }
            if b1 & 0x7F > 125 {
                return Err(WsError::Protocol("a control frame longer than 125 bytes"));
            }
        }
        _ => return Err(WsError::Protocol("a reserved opcode")),
    }
    let (len, size) = match b1 & 0x7F {
        126 => match buf.get(2..4) {
            Some(b) => (u64::from(u16::from_be_bytes([b[0], b[1]])), 4),
            None => return Ok(None),
        },
        127 => match buf.get(2..10) {
            Some(b) => {
                let len = u64::from_be_bytes(b.try_into().expect("eight bytes"));
                if len >> 63 != 0 {
                    return Err(WsError::Protocol("a 64-bit length with its top bit set"));
                }
                (len, 10)
            }
            None => return Ok(None),
        },
        n => (u64::from(n), 2),
    };
    if len > max {
        return Err(WsError::TooBig(len));
    }
    Ok(Some(Head {
        fin,
        opcode,
        len,
        size,
    }))
}

/// Incremental UTF-8 validation of a message given in pieces split
/// anywhere: at most a character's first three bytes wait for the rest.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Utf8 {
    pending: [u8; 4],
    n: u8,
}

/// The length of the character `lead` starts, 0 if it starts none.
fn char_width(lead: u8) -> usize {
    match lead {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 0,
    }
}

impl Utf8 {
    /// Takes the next piece; false when the text so far cannot be UTF-8.
    pub fn feed(&mut self, mut data: &[u8]) -> bool {
        if self.n > 0 {
            let need = char_width(self.pending[0]);
            while usize::from(self.n) < need && !data.is_empty() {
                self.pending[usize::from(self.n)] = data[0];
                self.n += 1;
                data = &data[1..];
            }
            let have = &self.pending[..usize::from(self.n)];
            match std::str::from_utf8(have) {
                Ok(_) => self.n = 0,
                // Still a valid start of the character: wait for more.
                Err(e) if e.error_len().is_none() && data.is_empty() => return true,
                Err(_) => return false,
            }
        }
        match std::str::from_utf8(data) {
            Ok(_) => true,
            Err(e) => match e.error_len() {
                Some(_) => false,
                None => {
                    let tail = &data[e.valid_up_to()..];
                    self.pending[..tail.len()].copy_from_slice(tail);
                    self.n = tail.len() as u8;
                    true
                }
            },
        }
    }

    /// Whether the text ended on a character's end (and starts afresh).
    pub fn finish(&mut self) -> bool {
        let whole = self.n == 0;
        self.n = 0;
        whole
    }
}

/// Reads server frames into [`Event`]s, incrementally: give it the bytes
/// read so far; it says how many it consumed. A data frame's payload is
/// consumed as it comes (counted, and validated if text), so memory does
/// not grow with a message; a control frame waits until it is whole.
#[derive(Debug)]
pub(crate) struct Reader {
    max: u64,
    /// The data message being read: its opcode, once its first frame
    /// came.
    message: Option<u8>,
    /// Its bytes so far (every fragment's).
    len: u64,
    /// Payload bytes of the current data frame still to come (then
    /// whether it was the message's last frame).
    remaining: u64,
    fin: bool,
    in_frame: bool,
    utf8: Utf8,
}

impl Reader {
    /// A reader of messages up to `max` bytes.
    pub fn new(max: u64) -> Reader {
        Reader {
            max,
            message: None,
            len: 0,
            remaining: 0,
            fin: false,
            in_frame: false,
            utf8: Utf8::default(),
        }
    }

    /// Reads from `buf` (the bytes not yet consumed): how many it
    /// consumed, and the event they completed, if any. Call again with
    /// the rest while it consumes or finds events; `(0, None)` means it
    /// needs more bytes.
    pub fn next(&mut self, buf: &[u8]) -> Result<(usize, Option<Event>), WsError> {
        let mut at = 0;
        loop {
            if self.in_frame {
                let take =
                    (buf.len() - at).min(usize::try_from(self.remaining).unwrap_or(usize::MAX));
                let piece = &buf[at..at + take];
                if self.message == Some(op::TEXT) && !self.utf8.feed(piece) {
                    return Err(WsError::Utf8);
                }
                at += take;
                self.remaining -= take as u64;
                if self.remaining > 0 {
                    return Ok((at, None));
                }
                self.in_frame = false;
                if self.fin {
                    let opcode = self.message.take().expect("a data frame has its message");
                    if opcode == op::TEXT && !self.utf8.finish() {
                        return Err(WsError::Utf8);
                    }
                    let len = std::mem::take(&mut self.len);
                    return Ok((at, Some(Event::Message { opcode, len })));
                }
                continue;
            }
            let rest = &buf[at..];
            let Some(head) = parse_head(rest, self.max)? else {
                return Ok((at, None));
            };
            match head.opcode {
                op::CONTINUATION | op::TEXT | op::BINARY => {
                    match (head.opcode, self.message) {
                        (op::CONTINUATION, None) => {
                            return Err(WsError::Protocol(
                                "a continuation frame with no message to continue",
                            ))
                        }
                        (op::TEXT | op::BINARY, Some(_)) => {
                            return Err(WsError::Protocol(
                                "a new message began before the last one's final fragment",
                            ))
                        }
                        (op::CONTINUATION, Some(_)) => {}
                        (first, None) => self.message = Some(first),
                        _ => unreachable!("data opcodes only"),
                    }
                    self.len += head.len;
                    if self.len > self.max {
                        return Err(WsError::TooBig(self.len));
                    }
                    self.remaining = head.len;
                    self.fin = head.fin;
                    self.in_frame = true;
                    at += head.size;
                }
                _ => {
                    // A control frame (which may come between fragments):
                    // read whole.
                    let end = head.size + head.len as usize;
                    if rest.len() < end {
                        return Ok((at, None));
                    }
                    let payload = (at + head.size, at + end);
                    at += end;
                    let event = match head.opcode {
                        op::PING => Event::Ping { payload },
                        op::PONG => Event::Pong,
                        _ => Event::Close {
                            code: close_code(&buf[payload.0..payload.1])?,
                        },
                    };
                    return Ok((at, Some(event)));
                }
            }
        }
    }
}

/// A close frame's code (RFC 6455 §5.5.1, §7.4): none in an empty
/// payload; a payload of one byte, a code no endpoint may send, or a
/// reason that is not UTF-8 break the protocol.
fn close_code(payload: &[u8]) -> Result<Option<u16>, WsError> {
    match payload {
        [] => Ok(None),
        [_] => Err(WsError::Protocol("a close frame with a one-byte payload")),
        [a, b, reason @ ..] => {
            let code = u16::from_be_bytes([*a, *b]);
            let allowed = matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999);
            if !allowed {
                return Err(WsError::Protocol(
                    "a close frame with a code no endpoint may send",
                ));
            }
            if std::str::from_utf8(reason).is_err() {
                return Err(WsError::Utf8);
            }
            Ok(Some(code))
        }
    }
}

/// Appends one client frame (final, masked with `key`) of `opcode` with
/// `payload` to `out`.
pub(crate) fn encode(out: &mut Vec<u8>, opcode: u8, payload: &[u8], key: [u8; 4]) {
    out.push(0x80 | opcode);
    let len = payload.len();
    if len < 126 {
        out.push(0x80 | len as u8);
    } else if len <= usize::from(u16::MAX) {
        out.push(0x80 | 126);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0x80 | 127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    out.extend_from_slice(&key);
    let start = out.len();
    out.extend_from_slice(payload);
    mask(&mut out[start..], key);
}

/// XORs `data` with `key`, repeated (RFC 6455 §5.3): four bytes at a
/// time, which the compiler widens further.
pub(crate) fn mask(data: &mut [u8], key: [u8; 4]) {
    let word = u32::from_ne_bytes(key);
    let mut chunks = data.chunks_exact_mut(4);
    for c in &mut chunks {
        let v = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]) ^ word;
        c.copy_from_slice(&v.to_ne_bytes());
    }
    for (i, b) in chunks.into_remainder().iter_mut().enumerate() {
        *b ^= key[i];
    }
}

/// A client close frame with `code`, masked with `key`, into `out`.
pub(crate) fn encode_close(out: &mut Vec<u8>, code: u16, key: [u8; 4]) {
    encode(out, op::CLOSE, &code.to_be_bytes(), key);
}

/// Mask keys and handshake keys: xorshift64*, seeded per sender from
/// the process's random hasher keys. Not a cryptographic generator:
/// masking protects proxies from a hostile page's chosen bytes (RFC 6455
/// §10.3), which a load generator's configured bodies are not.
#[derive(Debug, Clone)]
pub(crate) struct Keys(u64);

impl Keys {
    /// A generator seeded from `salt` and the process's randomness.
    pub fn new(salt: u64) -> Keys {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(salt);
        Keys(h.finish() | 1)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A frame's mask key.
    pub fn mask(&mut self) -> [u8; 4] {
        (self.next() as u32).to_ne_bytes()
    }
}

/// The fuzz target's body (`pelt_engine::fuzz::ws_frames`): the first
/// byte is the largest message (`max`, 0 to 255 bytes: small enough for
/// the limit to be met), the second where to split the rest, which is
/// what a server sent. Panics when the reader panics, consumes more than
/// it was given, reports a ping outside what it consumed, or when a
/// split (whole, a byte at a time, in two) changes the events or the
/// error.
pub(crate) fn fuzz_frames(data: &[u8]) {
    let [max, cut, wire @ ..] = data else {
        return;
    };
    let max = u64::from(*max);
    let read = |pieces: &mut dyn Iterator<Item = &[u8]>| {
        let mut r = Reader::new(max);
        let mut buf: Vec<u8> = Vec::new();
        let mut events = Vec::new();
        for piece in pieces {
            buf.extend_from_slice(piece);
            loop {
                match r.next(&buf) {
                    Ok((used, event)) => {
                        assert!(used <= buf.len(), "consumed {used} of {}", buf.len());
                        let event = match event {
                            Some(Event::Ping { payload: (a, b) }) => {
                                assert!(a <= b && b <= used, "ping {a}..{b} of {used}");
                                Some(Event::Ping {
                                    payload: (0, b - a),
                                })
                            }
                            other => other,
                        };
                        buf.drain(..used);
                        match event {
                            Some(e) => events.push(e),
                            None if used == 0 => break,
                            None => {}
                        }
                    }
                    Err(e) => return (events, Some(e)),
                }
            }
        }
        (events, None)
    };
    let whole = read(&mut std::iter::once(wire));
    let at = usize::from(*cut).min(wire.len());
    let (a, b) = wire.split_at(at);
    assert_eq!(read(&mut [a, b].into_iter()), whole, "split at {at}");
    assert_eq!(read(&mut wire.chunks(1)), whole, "a byte at a time");
}

#[cfg(test)]
mod tests;
