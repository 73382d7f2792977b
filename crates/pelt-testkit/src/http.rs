//! A minimal HTTP/1.1 GET over loopback, for servers the tests start
//! (Prometheus, pelt's metrics and dashboard), so that no test needs an
//! HTTP client crate.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// GET `path` from 127.0.0.1:`port` with `Connection: close`; the status
/// and body, or `None` if nothing listens yet.
pub fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let status = text.split(' ').nth(1)?.parse().ok()?;
    let (_, body) = text.split_once("\r\n\r\n")?;
    Some((status, body.to_string()))
}
