//! The opening handshake (RFC 6455 §4): the upgrade request's
//! WebSocket fields, `Sec-WebSocket-Accept` computed from the key
//! (SHA-1 and base64, a few lines each rather than two dependencies),
//! and the checks a client makes on the server's answer (§4.1), each
//! failure a `ws_upgrade` in a user's words.

/// The GUID RFC 6455 §1.3 appends to the key.
const GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// SHA-1 (FIPS 180-4) of `data`: only for `Sec-WebSocket-Accept`, which
/// the RFC defines with it.
pub(crate) fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [
        0x6745_2301,
        0xEFCD_AB89,
        0x98BA_DCFE,
        0x1032_5476,
        0xC3D2_E1F0,
    ];
    let bit_len = (data.len() as u64).wrapping_mul(8);
    let mut block = [0u8; 64];
    let process = |block: &[u8; 64], h: &mut [u32; 5]| {
        let mut w = [0u32; 80];
        for (i, c) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = *h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
                20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                _ => (b ^ c ^ d, 0xCA62_C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    };
    let mut chunks = data.chunks_exact(64);
    for c in &mut chunks {
        block.copy_from_slice(c);
        process(&block, &mut h);
    }
    let rest = chunks.remainder();
    block = [0u8; 64];
    block[..rest.len()].copy_from_slice(rest);
    block[rest.len()] = 0x80;
    if rest.len() >= 56 {
        process(&block, &mut h);
        block = [0u8; 64];
    }
    block[56..].copy_from_slice(&bit_len.to_be_bytes());
    process(&block, &mut h);
    let mut out = [0u8; 20];
    for (o, v) in out.chunks_exact_mut(4).zip(h) {
        o.copy_from_slice(&v.to_be_bytes());
    }
    out
}

/// Standard base64 with padding (RFC 4648 §4).
pub(crate) fn base64(data: &[u8], out: &mut String) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
}

/// A `Sec-WebSocket-Key`: 16 random bytes, base64 (24 characters).
pub(crate) fn key(random: [u64; 2]) -> String {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&random[0].to_ne_bytes());
    bytes[8..].copy_from_slice(&random[1].to_ne_bytes());
    let mut s = String::with_capacity(24);
    base64(&bytes, &mut s);
    s
}

/// The `Sec-WebSocket-Accept` a server must answer `key` with.
pub(crate) fn accept(key: &str) -> String {
    let mut input = Vec::with_capacity(key.len() + GUID.len());
    input.extend_from_slice(key.as_bytes());
    input.extend_from_slice(GUID);
    let mut s = String::with_capacity(28);
    base64(&sha1(&input), &mut s);
    s
}

/// Appends the upgrade's fields to a request head (`head` without its
/// last empty line) and ends it.
pub(crate) fn finish_request(head: &mut Vec<u8>, key: &str, protocols: &[String]) {
    head.extend_from_slice(b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ");
    head.extend_from_slice(key.as_bytes());
    head.extend_from_slice(b"\r\n");
    if !protocols.is_empty() {
        head.extend_from_slice(b"Sec-WebSocket-Protocol: ");
        head.extend_from_slice(protocols.join(", ").as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
}

/// What the server's answer to the upgrade said, when it is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Upgraded {
    /// The subprotocol the server chose, if any.
    pub protocol: Option<String>,
}

/// Checks a parsed answer to the upgrade (RFC 6455 §4.1, the client's
/// list): `101`, `Upgrade: websocket`, `Connection: Upgrade`, the
/// expected `Sec-WebSocket-Accept`, no extension (none was offered), a
/// subprotocol only from those offered. `Err`: why not, for the user.
pub(crate) fn check_answer(
    status: u16,
    reason: &str,
    headers: &[httparse::Header<'_>],
    expected_accept: &str,
    offered: &[String],
) -> Result<Upgraded, String> {
    if status != 101 {
        return Err(format!(
            "the server answered the WebSocket upgrade with {status} {reason}, not 101 Switching Protocols"
        ));
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_string())
    };
    let has_token = |name: &str, token: &str| {
        headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case(name))
            .flat_map(|h| h.value.split(|&b| b == b','))
            .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
    };
    if !has_token("upgrade", "websocket") {
        return Err("the server's 101 has no 'Upgrade: websocket'".to_string());
    }
    if !has_token("connection", "upgrade") {
        return Err("the server's 101 has no 'Connection: Upgrade'".to_string());
    }
    match get("sec-websocket-accept") {
        None => return Err("the server's 101 has no Sec-WebSocket-Accept".to_string()),
        Some(a) if a != expected_accept => {
            return Err(format!(
                "the server's Sec-WebSocket-Accept '{}' is not the one the key asks for ('{expected_accept}')",
                a.escape_debug()
            ))
        }
        Some(_) => {}
    }
    if let Some(ext) = get("sec-websocket-extensions") {
        return Err(format!(
            "the server chose extension '{}', which pelt did not offer",
            ext.escape_debug()
        ));
    }
    let protocol = get("sec-websocket-protocol");
    if let Some(p) = &protocol {
        if !offered.iter().any(|o| o == p) {
            return Err(format!(
                "the server chose subprotocol '{}', which was not offered (--ws-protocol)",
                p.escape_debug()
            ));
        }
    }
    Ok(Upgraded { protocol })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn sha1_matches_the_fips_vectors() {
        assert_eq!(
            hex(&sha1(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(hex(&sha1(b"")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(
            hex(&sha1(
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            )),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        // A million 'a's: many blocks.
        assert_eq!(
            hex(&sha1(&vec![b'a'; 1_000_000])),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f"
        );
    }

    #[test]
    fn base64_pads_as_rfc_4648_says() {
        for (input, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            let mut s = String::new();
            base64(input.as_bytes(), &mut s);
            assert_eq!(s, want, "{input}");
        }
    }

    #[test]
    fn accept_is_the_rfc_6455_example() {
        // RFC 6455 §1.3.
        assert_eq!(
            accept("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert_eq!(key([1, 2]).len(), 24);
    }

    fn answer(text: &str, offered: &[String]) -> Result<Upgraded, String> {
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut r = httparse::Response::new(&mut headers);
        r.parse(text.as_bytes()).expect("a head");
        let (code, reason) = (r.code.unwrap(), r.reason.unwrap_or(""));
        check_answer(
            code,
            reason,
            r.headers,
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
            offered,
        )
    }

    #[test]
    fn the_servers_answer_is_checked_field_by_field() {
        let good = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
        assert_eq!(answer(good, &[]), Ok(Upgraded { protocol: None }));
        let ok200 = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert!(answer(ok200, &[]).unwrap_err().contains("200 OK, not 101"));
        let wrong = good.replace(
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
            "AAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        );
        assert!(answer(&wrong, &[])
            .unwrap_err()
            .contains("not the one the key asks for"));
        let no_upgrade = good.replace("Upgrade: WebSocket\r\n", "");
        assert!(answer(&no_upgrade, &[])
            .unwrap_err()
            .contains("Upgrade: websocket"));
        let chat = good.replace("\r\n\r\n", "\r\nSec-WebSocket-Protocol: chat\r\n\r\n");
        assert!(answer(&chat, &[]).unwrap_err().contains("not offered"));
        let offered = ["superchat".to_string(), "chat".to_string()];
        assert_eq!(
            answer(&chat, &offered).unwrap().protocol.as_deref(),
            Some("chat")
        );
        let ext = good.replace(
            "\r\n\r\n",
            "\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
        );
        assert!(answer(&ext, &[]).unwrap_err().contains("extension"));
    }

    #[test]
    fn the_request_ends_with_the_upgrade_fields() {
        let mut head = b"GET /chat HTTP/1.1\r\nHost: h\r\n".to_vec();
        finish_request(&mut head, "k", &["a".into(), "b".into()]);
        let text = String::from_utf8(head).unwrap();
        assert!(text.ends_with("Sec-WebSocket-Key: k\r\nSec-WebSocket-Protocol: a, b\r\n\r\n"));
        assert!(text.contains(
            "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        ));
    }
}
