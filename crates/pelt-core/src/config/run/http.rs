//! How to connect and speak HTTP: keep-alive, timeouts, TLS, HTTP/2 and
//! HTTP/3 streams, `--connect-to`, Unix sockets, connection rate and redirects.

use crate::duration::secs;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default connect timeout.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Most HTTP/2 streams per connection: servers allow about 100 (nginx 128)
/// and queue the rest in the client; each stream costs a sender slot.
pub const MAX_STREAMS: u32 = 1000;

/// Connection and protocol options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpOptions {
    /// Reuse connections (HTTP/1.1 keep-alive).
    pub keepalive: bool,
    /// Per request, from the moment a connection starts working on it.
    #[serde(with = "secs")]
    pub timeout: Duration,
    /// Connecting (TCP, and TLS for `https`) must take no longer.
    #[serde(with = "secs")]
    pub connect_timeout: Duration,
    /// Skip TLS certificate verification.
    pub insecure: bool,
    /// Speak HTTP/2: negotiated by ALPN over TLS, or h2c with prior
    /// knowledge over plain TCP. Absent in results written before HTTP/2.
    #[serde(default)]
    pub http2: bool,
    /// Speak HTTP/3: QUIC over UDP, TLS 1.3 with ALPN `h3`, so `https://`
    /// targets only. Its connections carry `streams` senders each, as
    /// HTTP/2's do. Absent in results written before HTTP/3 (and in
    /// every other run's, so their files read as before).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub http3: bool,
    /// `--0rtt`, with `http3` only: keep the TLS session tickets servers
    /// give for the run, and send requests with safe methods (GET, HEAD,
    /// OPTIONS, TRACE) as 0-RTT data on each later connection to an
    /// origin; other methods wait for the handshake. Handshakes are then
    /// counted by kind (`Recorder::handshakes`). Absent when off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub zero_rtt: bool,
    /// HTTP/2 and HTTP/3 only: concurrent streams per connection. Each stream is a
    /// sender, as an HTTP/1.1 connection is, so a closed loop keeps
    /// connections × streams requests in flight.
    #[serde(default = "one_stream")]
    pub streams: u32,
    /// `--connect-to`: connect elsewhere than the URL says, keeping the
    /// URL's Host header, SNI and certificate name (curl's option).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect_to: Vec<ConnectTo>,
    /// `--unix-socket`: every connection goes to this Unix domain socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unix_socket: Option<String>,
    /// `--source-addresses`: TCP connections are bound to these local
    /// addresses in turn before connecting, to open more connections to
    /// one destination than one source address has ports for. Empty: the
    /// system picks (the usual). Each target needs an address of its
    /// family (refused before the run otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_addresses: Vec<std::net::IpAddr>,
    /// `--connect-rate`: at most this many new connections per second, in
    /// total across workers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_rate: Option<f64>,
    /// `--follow`: redirects followed per request (0: a 3xx is the answer).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub follow: u32,
    /// `--follow-any-host`: follow redirects to other origins too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub follow_any_host: bool,
    /// `-l`, `--accept-variable-length`: no `length` failure when a 2xx
    /// body's length differs from the first for its target (ab's `-l`),
    /// for pages whose length varies (timestamps, ads, random content).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub accept_variable_length: bool,
    /// `--tx-stamps`: time each HTTP/1.1 request's departure by the
    /// kernel's software transmit stamp instead of pelt's clock read just
    /// before `write()`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tx_stamps: bool,
    /// HTTP/3 sends without UDP segmentation offload (GSO): a switch for
    /// measuring what GSO gives (the binary sets it from
    /// `PELT_QUIC_GSO=0`), not a setting; quinn turns GSO off by itself
    /// where the kernel lacks it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_gso: bool,
    /// `--no-tls-resume`: every TLS handshake full, as ab, siege and
    /// h2load make them. By default a connection offers the session
    /// ticket (or TLS 1.2 session ID) an earlier connection of the run
    /// got, as browsers, curl and wrk do, and the server may resume it
    /// (handshakes are counted by kind: `Recorder::handshakes`). Absent
    /// when off, and in results from runs that always offered them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_tls_resume: bool,
    /// Sessions (issue 16): cookies, a login.
    #[serde(default, skip_serializing_if = "SessionOptions::is_off")]
    pub session: SessionOptions,
    /// `--proxy`, `--proxy-from-env`.
    #[serde(default, skip_serializing_if = "super::ProxyOptions::is_off")]
    pub proxy: super::ProxyOptions,
    /// `--stream`, `--stall-gap`, `--llm`: streamed responses measured as
    /// streams (issue 38). Absent when left at its default (streams
    /// detected by `Content-Type`).
    #[serde(
        default,
        skip_serializing_if = "crate::config::stream::StreamOptions::is_default"
    )]
    pub streamed: crate::config::stream::StreamOptions,
    /// `--ws-protocol`, `--ws-binary`, `--max-message`: how a WebSocket
    /// run (`ws://`, `wss://` targets) talks (issue 40). Absent when left
    /// at its defaults.
    #[serde(
        default,
        skip_serializing_if = "crate::config::ws::WsOptions::is_default"
    )]
    pub ws: crate::config::ws::WsOptions,
}

/// A simulated user's session: `--cookies` and `--login`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionOptions {
    /// `--cookies`: each sender keeps a cookie jar (RFC 6265), sending
    /// back what the server set, across reconnects.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cookies: bool,
    /// `--login`: a request each sender makes once, untimed, before its
    /// first measured request; its cookies go into the sender's jar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login: Option<super::Target>,
}

impl SessionOptions {
    /// Neither cookies nor a login: requests are sent as configured.
    pub fn is_off(&self) -> bool {
        !self.cookies && self.login.is_none()
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Most redirects `--follow` may follow per request.
pub const MAX_FOLLOW: u32 = 100;
/// Highest `--connect-rate`.
pub const MAX_CONNECT_RATE: f64 = 10_000_000.0;

/// One `--connect-to HOST:PORT:CONNECT_HOST:CONNECT_PORT` mapping. An
/// empty HOST or PORT matches any; an empty CONNECT_HOST or CONNECT_PORT
/// keeps the URL's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectTo {
    /// The URL host this applies to; `None` for any.
    pub host: Option<String>,
    /// The URL port this applies to; `None` for any.
    pub port: Option<u16>,
    /// Where to connect instead; `None` keeps the URL's host.
    pub connect_host: Option<String>,
    /// Which port to connect to instead; `None` keeps the URL's port.
    pub connect_port: Option<u16>,
}

/// Why a `--connect-to` value did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --connect-to '{text}': {problem}; use HOST:PORT:CONNECT_HOST:CONNECT_PORT, like example.com:443:127.0.0.1:8443")]
pub struct ConnectToError {
    /// The value as given, escaped to stay on one line.
    pub text: String,
    /// What is wrong with it.
    pub problem: ConnectToProblem,
}

/// The part of a `--connect-to` value at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConnectToProblem {
    /// Not exactly four `:`-separated fields.
    #[error("it needs four fields separated by ':'")]
    Fields,
    /// A host field holds characters no host name has.
    #[error("a host contains characters a host name cannot have")]
    Host,
    /// A port field is not a number from 1 to 65535.
    #[error("a port must be a number from 1 to 65535")]
    Port,
}

impl ConnectTo {
    /// Parses curl's syntax; IPv6 addresses go in brackets.
    pub fn parse(text: &str) -> Result<ConnectTo, ConnectToError> {
        let bad = |problem| ConnectToError {
            text: text.escape_debug().to_string(),
            problem,
        };
        let mut fields: Vec<&str> = Vec::with_capacity(4);
        let (mut start, mut depth) = (0, 0);
        for (i, c) in text.char_indices() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                ':' if depth == 0 => {
                    fields.push(&text[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        fields.push(&text[start..]);
        if fields.len() != 4 {
            return Err(bad(ConnectToProblem::Fields));
        }
        let host = |s: &str| -> Result<Option<String>, ConnectToError> {
            let s = s
                .strip_prefix('[')
                .and_then(|v| v.strip_suffix(']'))
                .unwrap_or(s);
            if s.is_empty() {
                return Ok(None);
            }
            if s.chars()
                .any(|c| c.is_whitespace() || c.is_control() || "/?#@[]%".contains(c))
            {
                return Err(bad(ConnectToProblem::Host));
            }
            Ok(Some(s.to_ascii_lowercase()))
        };
        let port = |s: &str| -> Result<Option<u16>, ConnectToError> {
            if s.is_empty() {
                return Ok(None);
            }
            s.parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .map(Some)
                .ok_or_else(|| bad(ConnectToProblem::Port))
        };
        Ok(ConnectTo {
            host: host(fields[0])?,
            port: port(fields[1])?,
            connect_host: host(fields[2])?,
            connect_port: port(fields[3])?,
        })
    }

    /// Where a connection to `host:port` goes instead, if this applies.
    pub fn apply(&self, host: &str, port: u16) -> Option<(String, u16)> {
        let host_matches = self
            .host
            .as_deref()
            .is_none_or(|h| h.eq_ignore_ascii_case(host));
        let port_matches = self.port.is_none_or(|p| p == port);
        (host_matches && port_matches).then(|| {
            (
                self.connect_host
                    .clone()
                    .unwrap_or_else(|| host.to_string()),
                self.connect_port.unwrap_or(port),
            )
        })
    }
}

/// Where a connection to `host:port` goes: the first `--connect-to` that
/// matches, else `host:port` itself.
pub fn connect_address(rules: &[ConnectTo], host: &str, port: u16) -> (String, u16) {
    rules
        .iter()
        .find_map(|r| r.apply(host, port))
        .unwrap_or_else(|| (host.to_string(), port))
}

impl HttpOptions {
    /// Whether senders are streams sharing a connection (HTTP/2 and
    /// HTTP/3, `streams` per connection) rather than connections of their
    /// own (HTTP/1.1).
    pub fn multiplexed(&self) -> bool {
        self.http2 || self.http3
    }

    /// The protocol spoken, as reports name it.
    pub fn protocol(&self) -> &'static str {
        match (self.http3, self.http2) {
            (true, _) => "HTTP/3",
            (false, true) => "HTTP/2",
            (false, false) => "HTTP/1.1",
        }
    }
}

fn one_stream() -> u32 {
    1
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            keepalive: true,
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            insecure: false,
            http2: false,
            http3: false,
            zero_rtt: false,
            streams: 1,
            connect_to: Vec::new(),
            unix_socket: None,
            source_addresses: Vec::new(),
            connect_rate: None,
            follow: 0,
            follow_any_host: false,
            accept_variable_length: false,
            tx_stamps: false,
            no_gso: false,
            no_tls_resume: false,
            session: SessionOptions::default(),
            proxy: super::ProxyOptions::default(),
            streamed: crate::config::stream::StreamOptions::default(),
            ws: crate::config::ws::WsOptions::default(),
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn connect_to_follows_curls_syntax() {
        let r = super::ConnectTo::parse("example.test:80:127.0.0.1:8080").unwrap();
        assert_eq!(
            r.apply("example.test", 80),
            Some(("127.0.0.1".into(), 8080))
        );
        assert_eq!(
            r.apply("EXAMPLE.test", 80),
            Some(("127.0.0.1".into(), 8080))
        );
        assert_eq!(r.apply("example.test", 81), None);
        assert_eq!(r.apply("other", 80), None);
        let any = super::ConnectTo::parse("::[::1]:").unwrap();
        assert_eq!(any.apply("h", 443), Some(("::1".into(), 443)));
        let v6 = super::ConnectTo::parse("[::1]:80:h:9").unwrap();
        assert_eq!(v6.apply("::1", 80), Some(("h".into(), 9)));
        assert_eq!(super::connect_address(&[r], "x", 1), ("x".to_string(), 1));
        for bad in ["a:1:b", "a:1:b:0", "a:x:b:1", "a:1:b c:1", "a:1:b:2:3"] {
            let e = super::ConnectTo::parse(bad).unwrap_err().to_string();
            assert!(
                e.contains("HOST:PORT:CONNECT_HOST:CONNECT_PORT"),
                "{bad}: {e}"
            );
        }
    }
}
