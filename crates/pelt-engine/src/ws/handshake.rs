//! The opening handshake (RFC 6455 §4): the upgrade request's
//! WebSocket fields, `Sec-WebSocket-Accept` computed from the key
//! (`pelt_core::ws_key`, shared with `pelt serve`), and the checks a client makes on the server's answer (§4.1), each
//! failure a `ws_upgrade` in a user's words.

pub(crate) use pelt_core::ws_key::accept;
use pelt_core::ws_key::base64;

/// A `Sec-WebSocket-Key`: 16 random bytes, base64 (24 characters).
pub(crate) fn key(random: [u64; 2]) -> String {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&random[0].to_ne_bytes());
    bytes[8..].copy_from_slice(&random[1].to_ne_bytes());
    let mut s = String::with_capacity(24);
    base64(&bytes, &mut s);
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

    #[test]
    fn a_key_is_24_characters_and_accepted_as_the_rfc_says() {
        assert_eq!(key([1, 2]).len(), 24);
        // RFC 6455 §1.3.
        assert_eq!(
            accept("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
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
