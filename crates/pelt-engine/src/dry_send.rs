//! `pelt run --scenario FILE --dry-run=send`: the first users' journeys
//! sent once, one request at a time, each shown with its response.
//!
//! Not the run's machinery: no schedule, no recorder, nothing timed for a
//! report. A virtual user here is a blocking connection per origin (kept
//! alive while the server allows) and its own cookie jar, so the dry run
//! sees what a run's user would: the same rendered bytes, the same jar,
//! the same extraction and checks (pelt-scenario's `dry_send`, which
//! owns the walk through steps, rounds and conditions). Blocking is
//! right for a handful of requests read by a person, and keeps the
//! async transports free of a mode that shows bodies.

use crate::session::jar::cookie_url;
use crate::session::Jar;
use pelt_core::{RunConfig, Scheme};
use pelt_scenario::{DryReply, DrySender, Redact, Scenario};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most of a response the dry run reads (the run's extraction and
/// checks see 1 MiB of a body; so does this).
const MAX_READ: usize = 1 << 20;

/// Sends one iteration of each flow for the first `users` virtual users
/// of `config`'s scenario and returns what each step sent and got back
/// (see [`Scenario::dry_send`]). Only http:// and https:// over TCP: a
/// run's `--http2`/`--http3` steps are sent here as HTTP/1.1.
pub fn dry_send(config: &RunConfig, users: u64, redact: &Redact<'_>) -> Result<String, String> {
    let source = config
        .scenario
        .as_ref()
        .ok_or("--dry-run shows a scenario's requests: give --scenario FILE")?;
    let scenario = Scenario::from_source(source).map_err(|e| e.to_string())?;
    let urls: Vec<url::Url> = config.targets[..source.steps]
        .iter()
        .map(|t| cookie_url(&t.url))
        .collect();
    let origins: Vec<(Scheme, String, u16)> = config.targets[..source.steps]
        .iter()
        .map(|t| (t.url.scheme, t.url.host.clone(), t.url.port))
        .collect();
    let tls = Arc::new(crate::conn::client_config(config.http.insecure, false));
    let timeout = config.http.timeout;
    Ok(scenario.dry_send(users, redact, |_| User {
        urls: urls.clone(),
        origins: origins.clone(),
        jar: Jar::default(),
        conns: HashMap::new(),
        tls: tls.clone(),
        timeout,
    }))
}

/// A virtual user of the dry run: its jar and its connections.
struct User {
    urls: Vec<url::Url>,
    origins: Vec<(Scheme, String, u16)>,
    jar: Jar,
    conns: HashMap<(Scheme, String, u16), Box<dyn Stream>>,
    tls: Arc<rustls::ClientConfig>,
    timeout: Duration,
}

/// A blocking byte stream: TCP, or TLS over it.
trait Stream: Read + Write {}
impl<T: Read + Write> Stream for T {}

impl User {
    fn connect(&self, origin: &(Scheme, String, u16)) -> Result<Box<dyn Stream>, String> {
        let (scheme, host, port) = origin;
        let tcp = TcpStream::connect((host.as_str(), *port))
            .map_err(|e| format!("cannot connect to {host}:{port}: {e}"))?;
        tcp.set_read_timeout(Some(self.timeout)).ok();
        tcp.set_write_timeout(Some(self.timeout)).ok();
        tcp.set_nodelay(true).ok();
        match scheme.is_tls() {
            false => Ok(Box::new(tcp)),
            true => {
                let name = rustls::pki_types::ServerName::try_from(host.clone())
                    .map_err(|e| format!("{host}: {e}"))?;
                let conn = rustls::ClientConnection::new(self.tls.clone(), name)
                    .map_err(|e| format!("TLS to {host}: {e}"))?;
                Ok(Box::new(rustls::StreamOwned::new(conn, tcp)))
            }
        }
    }
}

impl DrySender for User {
    fn extra(&mut self, step: usize) -> Vec<u8> {
        self.jar
            .header_line(&self.urls[step])
            .unwrap_or_default()
            .to_vec()
    }

    fn send(&mut self, step: usize, request: &[u8]) -> Result<DryReply, String> {
        let origin = self.origins[step].clone();
        let head_request = request.starts_with(b"HEAD ");
        let started = Instant::now();
        // A kept-alive connection the server closed since is tried once
        // more on a new one, as a run's idempotent step would be.
        let idempotent = [
            &b"GET "[..],
            b"HEAD ",
            b"PUT ",
            b"DELETE ",
            b"OPTIONS ",
            b"TRACE ",
        ]
        .iter()
        .any(|m| request.starts_with(m));
        for _ in 0..2 {
            let (mut conn, pooled) = match self.conns.remove(&origin) {
                Some(c) => (c, true),
                None => (self.connect(&origin)?, false),
            };
            match exchange(&mut *conn, request, head_request) {
                Ok((mut reply, keep)) => {
                    reply.ms = started.elapsed().as_secs_f64() * 1000.0;
                    self.jar.absorb(&reply.head, &self.urls[step]);
                    if keep {
                        self.conns.insert(origin, conn);
                    }
                    return Ok(reply);
                }
                Err((_, nothing_read)) if pooled && nothing_read && idempotent => continue,
                Err((why, _)) => return Err(why),
            }
        }
        Err("the server closed the connection twice".into())
    }
}

/// Writes `request` and reads one response: the reply, and whether the
/// connection may be used again. `Err`: why, and whether nothing at all
/// came back (a closed kept-alive connection, worth one more try).
fn exchange(
    conn: &mut dyn Stream,
    request: &[u8],
    head_request: bool,
) -> Result<(DryReply, bool), (String, bool)> {
    conn.write_all(request)
        .and_then(|()| conn.flush())
        .map_err(|e| (format!("cannot send: {e}"), true))?;
    let mut buf = Vec::with_capacity(8192);
    let mut chunk = [0u8; 8192];
    // The head.
    let (status, head_len, length, chunked, close) = loop {
        let n = conn
            .read(&mut chunk)
            .map_err(|e| (format!("reading the response: {e}"), buf.is_empty()))?;
        if n == 0 {
            return Err(("the server closed the connection".into(), buf.is_empty()));
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut resp = httparse::Response::new(&mut headers);
        match resp.parse(&buf) {
            Ok(httparse::Status::Complete(len)) => {
                let status = resp.code.unwrap_or(0);
                let value = |name: &str| {
                    resp.headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case(name))
                        .map(|h| String::from_utf8_lossy(h.value).to_ascii_lowercase())
                };
                let length = value("content-length").and_then(|v| v.trim().parse::<usize>().ok());
                let chunked = value("transfer-encoding").is_some_and(|v| v.contains("chunked"));
                let close = value("connection").is_some_and(|v| v.contains("close"));
                if status < 200 && status != 101 {
                    // An interim response (100 Continue): the real one follows.
                    buf.drain(..len);
                    continue;
                }
                break (status, len, length, chunked, close);
            }
            Ok(httparse::Status::Partial) if buf.len() < 64 * 1024 => {}
            Ok(httparse::Status::Partial) => {
                return Err(("a response head over 64 KiB".into(), false))
            }
            Err(e) => return Err((format!("not an HTTP/1.1 response: {e}"), false)),
        }
    };
    let head = buf[..head_len].to_vec();
    let mut body = buf.split_off(head_len);
    let no_body = head_request || status == 204 || status == 304;
    // How the body ends: its length, the chunked end, or the close.
    let complete = |b: &[u8]| {
        if no_body {
            true
        } else if chunked {
            b.starts_with(b"0\r\n\r\n") || b.windows(7).any(|w| w == b"\r\n0\r\n\r\n")
        } else {
            length.is_some_and(|n| b.len() >= n)
        }
    };
    let mut ended = false;
    while !complete(&body) && body.len() < MAX_READ {
        let n = conn
            .read(&mut chunk)
            .map_err(|e| (format!("reading the body: {e}"), false))?;
        if n == 0 {
            ended = true;
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    if no_body {
        body.clear();
    }
    if let Some(n) = length.filter(|_| !chunked && !no_body) {
        body.truncate(n);
    }
    let whole = complete(&body);
    Ok((
        DryReply {
            status,
            head,
            body,
            ms: 0.0,
        },
        whole && !ended && !close && (length.is_some() || chunked || no_body),
    ))
}
