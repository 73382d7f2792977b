//! Entry point for the HTTP/1.1 response fuzz target in `fuzz/` (see
//! docs/FUZZING.md), also run on arbitrary bytes by the unit tests below.

use crate::h1::{read_response_location, Failure, Response, READ_BUF};
use pelt_core::ErrorKind;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncRead, ReadBuf};

/// Feeds a server's bytes to the HTTP/1.1 response reader, whole and in
/// pieces, and checks what it says.
///
/// Input: a flags byte (bit 0: the request was HEAD), a seed byte for the
/// split points, then the bytes the server sent before closing.
///
/// Panics when the reader panics, or when:
/// - a result claims more bytes than the server sent, or a complete
///   response more body bytes than bytes, or a body for a HEAD request;
/// - splitting the same bytes differently changes the outcome (status,
///   body bytes, error kind), beyond what the split may legitimately
///   change: reads that happen to carry bytes past the response (then
///   `bytes_in` grows and the connection is not reused), and a head both
///   malformed and cut short by the close (`Closed` or `InvalidResponse`);
/// - the response read a byte at a time, then read again from exactly the
///   bytes it consumed in one piece, gives a different result.
pub fn h1_response(data: &[u8]) {
    let [flags, seed, wire @ ..] = data else {
        return;
    };
    let head = flags & 1 == 1;
    let exact = read(wire, head, &mut Sizes::Fixed(1));
    check(&exact, wire, head);
    let mut splits = [
        Sizes::Fixed(usize::MAX),
        Sizes::Seeded(u32::from(*seed) | 0x100),
        Sizes::Seeded(u32::from(*seed).wrapping_mul(0x9e37) | 0x1_0000),
    ];
    for sizes in &mut splits {
        let other = read(wire, head, sizes);
        check(&other, wire, head);
        same_outcome(&exact, &other, sizes);
    }
    if let Ok(r) = &exact {
        let consumed = usize::try_from(r.bytes_in).expect("checked against the input length");
        let again = read(&wire[..consumed], head, &mut Sizes::Fixed(usize::MAX));
        match again {
            Ok(a) => assert_eq!(&a, r, "the {consumed} bytes consumed, read whole"),
            Err(e) => panic!(
                "read a byte at a time: {r:?}; the {consumed} bytes it consumed, read whole: {:?} {}",
                e.kind, e.detail
            ),
        }
    }
}

type Outcome = Result<Response, Failure>;

fn check(r: &Outcome, wire: &[u8], head: bool) {
    let len = wire.len() as u64;
    match r {
        Ok(r) => {
            assert!(r.bytes_in <= len, "{r:?} from {len} bytes");
            assert!(r.body_bytes <= r.bytes_in, "{r:?}");
            assert!((200..=999).contains(&r.status), "{r:?}");
            assert!(!head || r.body_bytes == 0, "a body for HEAD: {r:?}");
        }
        Err(e) => assert!(
            e.bytes_in <= len,
            "{:?} {} from {len} bytes",
            e.kind,
            e.detail
        ),
    }
}

fn same_outcome(exact: &Outcome, other: &Outcome, sizes: &Sizes) {
    match (exact, other) {
        (Ok(a), Ok(b)) => {
            assert_eq!(
                (a.status, a.body_bytes),
                (b.status, b.body_bytes),
                "{sizes:?}"
            );
            assert!(b.bytes_in >= a.bytes_in, "{a:?} vs {b:?} ({sizes:?})");
            if b.bytes_in == a.bytes_in {
                assert_eq!(a.reusable, b.reusable, "{sizes:?}");
            } else {
                assert!(!b.reusable, "extra bytes, yet reusable: {b:?} ({sizes:?})");
            }
        }
        (Err(a), Err(b)) => {
            let truncated_or_invalid =
                |k| matches!(k, ErrorKind::Closed | ErrorKind::InvalidResponse);
            assert!(
                a.kind == b.kind || (truncated_or_invalid(a.kind) && truncated_or_invalid(b.kind)),
                "{:?} ({}) vs {:?} ({}) ({sizes:?})",
                a.kind,
                a.detail,
                b.kind,
                b.detail
            );
        }
        (Ok(a), Err(b)) | (Err(b), Ok(a)) => panic!(
            "one split reads {a:?}, another fails: {:?} {} ({sizes:?})",
            b.kind, b.detail
        ),
    }
}

/// How many bytes each read hands out.
#[derive(Debug)]
enum Sizes {
    Fixed(usize),
    /// 1 to 64 bytes, from a xorshift generator.
    Seeded(u32),
}

impl Sizes {
    fn next(&mut self) -> usize {
        match self {
            Sizes::Fixed(n) => *n,
            Sizes::Seeded(x) => {
                *x ^= *x << 13;
                *x ^= *x >> 17;
                *x ^= *x << 5;
                (*x % 64) as usize + 1
            }
        }
    }
}

/// A server that has sent `rest` and closed, handing out pieces.
struct Pieces<'a, 's> {
    rest: &'a [u8],
    sizes: &'s mut Sizes,
}

impl AsyncRead for Pieces<'_, '_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let n = self.sizes.next().min(buf.remaining()).min(self.rest.len());
        let (now, later) = self.rest.split_at(n);
        buf.put_slice(now);
        self.rest = later;
        Poll::Ready(Ok(()))
    }
}

fn read(wire: &[u8], head: bool, sizes: &mut Sizes) -> Outcome {
    let mut stream = Pieces { rest: wire, sizes };
    let mut buf = vec![0u8; READ_BUF];
    let mut location = Vec::new();
    let mut first_bytes = 0;
    let outcome = {
        let fut = read_response_location(
            &mut stream,
            &mut buf,
            head,
            || first_bytes += 1,
            &mut location,
        );
        let mut fut = std::pin::pin!(fut);
        // The stream is always ready, so one poll finishes the read.
        match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(outcome) => outcome,
            Poll::Pending => panic!("the reader waited on a stream that is always ready"),
        }
    };
    assert!(first_bytes <= 1, "first byte reported {first_bytes} times");
    assert!(
        location.len() <= wire.len(),
        "a Location longer than the response"
    );
    outcome
}

/// Feeds a streamed body to every framing (`--stream sse|lines|chunks`,
/// plain and as `--llm openai`): the first byte says where to split the
/// rest in two. Panics when a framing panics, when the events it hands
/// on differ from its tally's count, or when the split changes what SSE
/// or lines count (chunks count pieces, so their split may).
pub fn stream_events(data: &[u8]) {
    crate::events::fuzz_events(data);
}

/// Feeds a server's WebSocket frames to the frame reader (`crate::ws`):
/// the first byte is the largest message, the second a split point, the
/// rest what the server sent. Panics when the reader panics, consumes
/// more than it had, or when splitting the bytes differently (whole, in
/// two, a byte at a time) changes the messages, pings, pongs, closes or
/// the error.
pub fn ws_frames(data: &[u8]) {
    crate::ws::fuzz_frames(data);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Pieces of server frames, so that arbitrary sequences often frame.
    const FRAME_WORDS: &[&[u8]] = &[
        &[0x81, 0x02, b'h', b'i'],
        &[0x82, 0x00],
        &[0x01, 0x01, 0xC3],
        &[0x80, 0x01, 0xA9],
        &[0x00, 0x01, b'x'],
        &[0x89, 0x01, b'p'],
        &[0x8A, 0x00],
        &[0x88, 0x02, 0x03, 0xE8],
        &[0x88, 0x01, 0x03],
        &[0x81, 0x7E, 0x00, 0x03, b'a', b'b', b'c'],
        &[0x82, 0x7F, 0, 0, 0, 0, 0, 0, 0x01, 0x00],
        &[0x81, 0x82, 1, 2, 3, 4, 0, 0],
        &[0xC1, 0x00],
        &[0xFF, 0xFE],
    ];

    /// Pieces of streamed bodies, so that arbitrary sequences often frame.
    const EVENT_WORDS: &[&str] = &[
        "data: ",
        "data:",
        "event: x",
        "id: 1",
        "retry: 5",
        ": comment",
        "\r\n",
        "\n",
        "\r",
        "\u{feff}",
        "{\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}",
        "{\"choices\":[],\"usage\":{\"completion_tokens\":7}}",
        "[DONE]",
        "x",
    ];

    /// Pieces of responses, so that arbitrary sequences often parse.
    const WORDS: &[&str] = &[
        "HTTP/1.1 200 OK\r\n",
        "HTTP/1.0 204 No Content\r\n",
        "HTTP/1.1 100 Continue\r\n\r\n",
        "HTTP/1.1 302 Found\r\nLocation: /x\r\n",
        "HTTP/1.1 304 Not Modified\r\n",
        "Content-Length: 5\r\n",
        "Content-Length: 0\r\n",
        "Transfer-Encoding: chunked\r\n",
        "Transfer-Encoding: gzip\r\n",
        "Connection: close\r\n",
        "Connection: keep-alive\r\n",
        "\r\n",
        "\n",
        "5\r\nhello\r\n",
        "0\r\n\r\n",
        "ff;x=y\r\n",
        "hello",
        " ",
        ":",
    ];

    fn input() -> impl Strategy<Value = Vec<u8>> {
        let words = proptest::collection::vec(proptest::sample::select(WORDS), 0..10)
            .prop_map(|w| w.concat().into_bytes());
        let noise = proptest::collection::vec(any::<u8>(), 0..64);
        (
            any::<u8>(),
            any::<u8>(),
            prop_oneof![words.clone(), noise.clone()],
            noise,
        )
            .prop_map(|(flags, seed, mut wire, tail)| {
                let mut data = vec![flags, seed];
                data.append(&mut wire);
                // Sometimes a few stray bytes after the response.
                if flags & 2 == 2 {
                    data.extend(tail);
                }
                data
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 512,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn ws_frames_hold_their_invariants(
            max in any::<u8>(),
            cut in any::<u8>(),
            words in proptest::collection::vec(proptest::sample::select(FRAME_WORDS), 0..12),
            noise in proptest::collection::vec(any::<u8>(), 0..16),
        ) {
            let mut data = vec![max, cut];
            data.extend(words.concat());
            data.extend(noise);
            ws_frames(&data);
        }

        #[test]
        fn h1_response_holds_its_invariants(data in input()) {
            h1_response(&data);
        }

        #[test]
        fn stream_events_hold_their_invariants(
            cut in any::<u8>(),
            words in proptest::collection::vec(proptest::sample::select(EVENT_WORDS), 0..16),
            noise in proptest::collection::vec(any::<u8>(), 0..32),
        ) {
            let mut data = vec![cut];
            data.extend_from_slice(words.concat().as_bytes());
            data.extend(noise);
            stream_events(&data);
        }
    }

    #[test]
    fn h1_response_reads_well_formed_responses() {
        for wire in [
            &b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"[..],
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\n\r\nuntil close",
        ] {
            for seed in [0, 7, 255] {
                let mut data = vec![0, seed];
                data.extend_from_slice(wire);
                h1_response(&data);
                assert!(read(wire, false, &mut Sizes::Seeded(u32::from(seed) | 0x100)).is_ok());
            }
        }
    }
}
