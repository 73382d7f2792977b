use super::*;

/// A server frame (unmasked) of `opcode` with `payload`, final or not.
fn frame(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![(u8::from(fin) << 7) | opcode];
    let len = payload.len();
    if len < 126 {
        out.push(len as u8);
    } else if len <= 0xFFFF {
        out.push(126);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    out.extend_from_slice(payload);
    out
}

/// Every event in `wire`, fed in pieces of `size` bytes (as reads would
/// bring them); the error that stopped it, if any.
fn events(wire: &[u8], size: usize, max: u64) -> (Vec<Event>, Option<WsError>) {
    let mut r = Reader::new(max);
    let mut buf: Vec<u8> = Vec::new();
    let mut out = Vec::new();
    for piece in wire.chunks(size.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match r.next(&buf) {
                Ok((used, ev)) => {
                    // Pings carry indices into the bytes given: check
                    // them while they are valid, and keep the payload's
                    // length (the same whatever the split).
                    let ev = match ev {
                        Some(Event::Ping { payload: (a, b) }) => {
                            assert!(b <= used && buf[a..b] == b"p"[..]);
                            Some(Event::Ping {
                                payload: (0, b - a),
                            })
                        }
                        other => other,
                    };
                    buf.drain(..used);
                    match ev {
                        Some(e) => out.push(e),
                        None if used == 0 => break,
                        None => {}
                    }
                }
                Err(e) => return (out, Some(e)),
            }
        }
    }
    (out, None)
}

/// The same events whatever the split.
fn all_splits(wire: &[u8], max: u64) -> (Vec<Event>, Option<WsError>) {
    let whole = events(wire, usize::MAX, max);
    for size in [1, 2, 3, 5, 7, 64] {
        assert_eq!(events(wire, size, max), whole, "split every {size} bytes");
    }
    whole
}

#[test]
fn messages_of_every_length_encoding_are_read() {
    let mut wire = frame(true, op::TEXT, b"hello");
    wire.extend(frame(true, op::BINARY, &[7u8; 300]));
    wire.extend(frame(true, op::BINARY, &vec![1u8; 70_000]));
    wire.extend(frame(true, op::TEXT, b""));
    let (evs, err) = all_splits(&wire, 1 << 20);
    assert_eq!(err, None);
    assert_eq!(
        evs,
        [
            Event::Message {
                opcode: op::TEXT,
                len: 5
            },
            Event::Message {
                opcode: op::BINARY,
                len: 300
            },
            Event::Message {
                opcode: op::BINARY,
                len: 70_000
            },
            Event::Message {
                opcode: op::TEXT,
                len: 0
            },
        ]
    );
}

#[test]
fn fragments_are_reassembled_with_control_frames_between_them() {
    let mut wire = frame(false, op::TEXT, "héllo ".as_bytes());
    wire.extend(frame(true, op::PING, b"p"));
    // A character split across fragments.
    let text = "wörld".as_bytes();
    wire.extend(frame(false, op::CONTINUATION, &text[..2]));
    wire.extend(frame(true, op::PONG, b""));
    wire.extend(frame(true, op::CONTINUATION, &text[2..]));
    wire.extend(frame(true, op::CLOSE, &1000u16.to_be_bytes()));
    let (evs, err) = all_splits(&wire, 1 << 20);
    assert_eq!(err, None);
    assert_eq!(
        evs,
        [
            Event::Ping { payload: (0, 1) },
            Event::Pong,
            Event::Message {
                opcode: op::TEXT,
                len: 13
            },
            Event::Close { code: Some(1000) },
        ]
    );
}

#[test]
fn a_broken_frame_is_an_error_of_its_kind() {
    let masked = {
        let mut f = frame(true, op::TEXT, b"hi");
        f[1] |= 0x80;
        f.splice(2..2, [1, 2, 3, 4]);
        f
    };
    let cases: Vec<(Vec<u8>, ErrorKind, &str)> = vec![
        (masked, ErrorKind::WsProtocol, "masked"),
        (
            frame(true, op::TEXT, &[0xff, 0xfe]),
            ErrorKind::WsProtocol,
            "UTF-8",
        ),
        // A character cut off by the message's end.
        (
            frame(true, op::TEXT, &"é".as_bytes()[..1]),
            ErrorKind::WsProtocol,
            "UTF-8",
        ),
        (
            frame(true, op::BINARY, &[0; 200]),
            ErrorKind::WsTooBig,
            "over --max-message",
        ),
        (
            frame(true, 0x3, b""),
            ErrorKind::WsProtocol,
            "reserved opcode",
        ),
        (
            frame(false, op::PING, b""),
            ErrorKind::WsProtocol,
            "fragmented control",
        ),
        (
            frame(true, op::CONTINUATION, b"x"),
            ErrorKind::WsProtocol,
            "continuation",
        ),
        (
            [frame(false, op::TEXT, b"a"), frame(true, op::TEXT, b"b")].concat(),
            ErrorKind::WsProtocol,
            "before the last one's final",
        ),
        (
            frame(true, op::CLOSE, &[3]),
            ErrorKind::WsProtocol,
            "one-byte",
        ),
        (
            frame(true, op::CLOSE, &1005u16.to_be_bytes()),
            ErrorKind::WsProtocol,
            "no endpoint",
        ),
        (vec![0xC1, 0x00], ErrorKind::WsProtocol, "reserved bits"),
        (
            vec![0x89, 126, 0, 200],
            ErrorKind::WsProtocol,
            "longer than 125",
        ),
    ];
    for (wire, kind, says) in cases {
        let (_, err) = all_splits(&wire, 100);
        let err = err.unwrap_or_else(|| panic!("no error for {wire:?}"));
        assert_eq!(err.kind(), kind, "{wire:?}");
        assert!(
            err.detail(100).contains(says),
            "{}: {says}",
            err.detail(100)
        );
    }
    // Fragments that add up to more than the maximum, each under it.
    let wire = [
        frame(false, op::BINARY, &[0; 60]),
        frame(true, op::CONTINUATION, &[0; 60]),
    ]
    .concat();
    assert_eq!(all_splits(&wire, 100).1, Some(WsError::TooBig(120)));
}

#[test]
fn a_client_frame_is_masked_and_unmasks_to_its_payload() {
    for len in [0usize, 5, 125, 126, 65_535, 65_536] {
        let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let key = [0x37, 0xfa, 0x21, 0x3d];
        let mut out = Vec::new();
        encode(&mut out, op::BINARY, &payload, key);
        assert_eq!(out[0], 0x82);
        assert_eq!(out[1] & 0x80, 0x80, "mask bit");
        let head = match out[1] & 0x7F {
            126 => 4,
            127 => 10,
            _ => 2,
        };
        assert_eq!(&out[head..head + 4], &key);
        let mut body = out[head + 4..].to_vec();
        mask(&mut body, key);
        assert_eq!(body, payload, "{len}");
    }
    // RFC 6455 §5.7: a masked "Hello".
    let mut out = Vec::new();
    encode(&mut out, op::TEXT, b"Hello", [0x37, 0xfa, 0x21, 0x3d]);
    assert_eq!(
        out,
        [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]
    );
}

#[test]
fn utf8_is_validated_across_any_split() {
    let text = "aé€𝄞z".as_bytes();
    for cut in 0..=text.len() {
        for cut2 in cut..=text.len() {
            let mut u = Utf8::default();
            assert!(u.feed(&text[..cut]) && u.feed(&text[cut..cut2]) && u.feed(&text[cut2..]));
            assert!(u.finish(), "{cut} {cut2}");
        }
    }
    let mut u = Utf8::default();
    assert!(u.feed(&[0xE2]));
    assert!(!u.feed(&[0x41]), "a lead byte followed by ASCII");
    let mut u = Utf8::default();
    assert!(!u.feed(&[0xED, 0xA0, 0x80]), "a surrogate");
}

#[test]
fn keys_differ() {
    let mut k = Keys::new(1);
    let a = k.mask();
    let b = k.mask();
    assert_ne!(a, b);
}
