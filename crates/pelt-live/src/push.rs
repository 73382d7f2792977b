//! `--metrics-push URL`: the metrics pushed to a Prometheus remote-write
//! receiver once a second, and once more when the run ends, for runs too
//! short for a scrape interval (a 10 s CI run is mostly missed at 15 s).
//!
//! The series are exactly `/metrics`' (the text is rendered, then read
//! back), with a `job="pelt"` label, so a query works on either. Remote
//! write 1.0 is a protobuf `WriteRequest`, snappy-compressed, POSTed over
//! HTTP: the few messages are encoded by hand, and the snappy stream is
//! written as literals only (a valid stream every decoder reads; metrics
//! of one second are a few KB, so compression would save little), which
//! keeps pelt-live free of a protobuf or compression dependency.

use crate::{metrics, Live};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long one push may take (connect, write, answer).
const PUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// Where pushes go: a plain-HTTP remote-write URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushTarget {
    /// The URL as given, for messages.
    pub url: String,
    host: String,
    port: u16,
    path: String,
}

/// Why a `--metrics-push` URL is refused.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// Not an `http://HOST[:PORT]/PATH` URL.
    #[error("--metrics-push '{0}': not an http:// URL; give the receiver's remote-write URL, like --metrics-push http://127.0.0.1:9090/api/v1/write")]
    Url(String),
    /// https, which pelt-live does not speak.
    #[error("--metrics-push '{0}': https is not supported; push to a Prometheus or agent on a trusted network over http://, which can forward over TLS")]
    Https(String),
    /// Nothing answers there.
    #[error("--metrics-push {url}: cannot connect: {source}; start the receiver (Prometheus needs --web.enable-remote-write-receiver) or fix the URL")]
    Connect {
        /// The URL.
        url: String,
        /// Why.
        source: io::Error,
    },
}

impl PushTarget {
    /// Parses `url` (`http://HOST[:PORT][/PATH]`, port 80 by default).
    pub fn parse(url: &str) -> Result<PushTarget, PushError> {
        if url.starts_with("https://") {
            return Err(PushError::Https(url.into()));
        }
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| PushError::Url(url.into()))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() || authority.contains('@') || path.contains(char::is_whitespace) {
            return Err(PushError::Url(url.into()));
        }
        let (host, port) = match authority.rsplit_once(':') {
            // An IPv6 literal's colons are inside its brackets.
            Some((h, p)) if !p.contains(']') => {
                (h, p.parse().map_err(|_| PushError::Url(url.into()))?)
            }
            _ => (authority, 80),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(PushError::Url(url.into()));
        }
        Ok(PushTarget {
            url: url.into(),
            host: host.into(),
            port,
            path: path.into(),
        })
    }

    fn addr(&self) -> io::Result<SocketAddr> {
        (self.host.as_str(), self.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address for the host"))
    }

    /// Checks, before any load, that something accepts connections there.
    pub fn check(&self) -> Result<(), PushError> {
        self.addr()
            .and_then(|a| TcpStream::connect_timeout(&a, PUSH_TIMEOUT))
            .map(drop)
            .map_err(|source| PushError::Connect {
                url: self.url.clone(),
                source,
            })
    }

    /// POSTs one compressed `WriteRequest`; returns the status code and
    /// the start of the answer's body.
    fn post(&self, body: &[u8]) -> io::Result<(u16, String)> {
        let mut s = TcpStream::connect_timeout(&self.addr()?, PUSH_TIMEOUT)?;
        s.set_read_timeout(Some(PUSH_TIMEOUT))?;
        s.set_write_timeout(Some(PUSH_TIMEOUT))?;
        let host = match self.host.contains(':') {
            true => format!("[{}]:{}", self.host, self.port),
            false => format!("{}:{}", self.host, self.port),
        };
        let head = format!(
            "POST {} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: pelt/{}\r\n\
             Content-Type: application/x-protobuf\r\nContent-Encoding: snappy\r\n\
             X-Prometheus-Remote-Write-Version: 0.1.0\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n",
            self.path,
            env!("CARGO_PKG_VERSION"),
            body.len()
        );
        s.write_all(head.as_bytes())?;
        s.write_all(body)?;
        let mut r = BufReader::new(s);
        let mut status = String::new();
        r.read_line(&mut status)?;
        let code = status
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "not an HTTP answer"))?;
        // The body says why a push was refused.
        let mut rest = Vec::new();
        let _ = r.take(64 * 1024).read_to_end(&mut rest);
        let text = String::from_utf8_lossy(&rest);
        let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        Ok((code, body.chars().take(300).collect()))
    }
}

/// Pushes `live`'s metrics to `target` each time they change (each
/// second), and the final figures once the run has ended; then the
/// thread ends. A successful push counts as a delivery, so
/// [`Live::wait_final_scrape`] waits for the final one. `warn` hears of a
/// failed push (the first, and the first after any success): the run
/// goes on.
pub fn spawn(
    target: PushTarget,
    live: Live,
    warn: impl Fn(String) + Send + 'static,
) -> io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("pelt-push".into())
        .spawn(move || {
            let mut seen = u64::MAX;
            let mut last_ts = 0;
            let mut failing = false;
            loop {
                let (generation, text, finished) =
                    live.wait_change(seen, Duration::from_secs(1), |s| {
                        (s.generation, metrics::render(s), s.finished)
                    });
                if generation == seen {
                    continue;
                }
                seen = generation;
                // Each push a later timestamp than the last, as a series'
                // samples must be.
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as i64);
                last_ts = now.max(last_ts + 1);
                let body = snappy_literal(&write_request(&parse_text(&text), last_ts));
                match target.post(&body) {
                    Ok((200..=299, _)) => {
                        failing = false;
                        live.delivered(finished);
                    }
                    Ok((code, why)) if !failing => {
                        failing = true;
                        warn(format!(
                            "--metrics-push {}: the receiver answered {code}: {}",
                            target.url,
                            why.trim()
                        ));
                    }
                    Err(e) if !failing => {
                        failing = true;
                        warn(format!("--metrics-push {}: {e}", target.url));
                    }
                    _ => {}
                }
                if finished {
                    return;
                }
            }
        })
}

/// One series: its labels (`__name__` first) and value.
type Series = (Vec<(String, String)>, f64);

/// Reads the Prometheus text format that [`metrics::render`] writes:
/// `NAME{a="x",b="y"} VALUE` lines (comments skipped), label values
/// unescaped. Every series gets `job="pelt"`.
fn parse_text(text: &str) -> Vec<Series> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let value: f64 = match value {
                "+Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                v => v.parse().ok()?,
            };
            let (name, labels) = match series.split_once('{') {
                Some((n, l)) => (n, l.strip_suffix('}')?),
                None => (series, ""),
            };
            let mut out = vec![("__name__".to_string(), name.to_string())];
            out.extend(parse_labels(labels)?);
            out.push(("job".into(), "pelt".into()));
            // Remote write wants labels sorted by name.
            out.sort();
            Some((out, value))
        })
        .collect()
}

/// `a="x",b="y \"q\""` into pairs, unescaping `\\`, `\"` and `\n`.
fn parse_labels(text: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (name, after) = rest.split_once("=\"")?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next()? {
                (i, '"') => break i,
                (_, '\\') => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    c => value.push(c),
                },
                (_, c) => value.push(c),
            }
        };
        out.push((name.trim_start_matches(',').to_string(), value));
        rest = &after[end + 1..];
    }
    Some(out)
}

/// The protobuf `WriteRequest { repeated TimeSeries timeseries = 1; }`,
/// with `TimeSeries { repeated Label labels = 1; repeated Sample samples
/// = 2; }`, `Label { string name = 1; string value = 2; }` and `Sample {
/// double value = 1; int64 timestamp = 2; }` (prometheus/prompb).
fn write_request(series: &[Series], timestamp_ms: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(series.len() * 96);
    let mut ts = Vec::new();
    let mut field = Vec::new();
    for (labels, value) in series {
        ts.clear();
        for (name, v) in labels {
            field.clear();
            bytes_field(&mut field, 1, name.as_bytes());
            bytes_field(&mut field, 2, v.as_bytes());
            bytes_field(&mut ts, 1, &field);
        }
        field.clear();
        // double: wire type 1 (64-bit), little-endian.
        varint(&mut field, (1 << 3) | 1);
        field.extend_from_slice(&value.to_le_bytes());
        // int64: wire type 0 (varint), two's complement as u64.
        varint(&mut field, 2 << 3);
        varint(&mut field, timestamp_ms as u64);
        bytes_field(&mut ts, 2, &field);
        bytes_field(&mut out, 1, &ts);
    }
    out
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited field (wire type 2).
fn bytes_field(out: &mut Vec<u8>, number: u64, bytes: &[u8]) {
    varint(out, (number << 3) | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// `data` as a snappy block (the format remote write uses, not the framed
/// one) of literals only: the uncompressed length as a varint, then
/// literal elements of at most 64 KiB, each tagged 61 (`len - 1` in the
/// next two bytes, little-endian) or, when short, with the length in its
/// tag.
fn snappy_literal(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + data.len() / 65_536 * 3 + 8);
    varint(&mut out, data.len() as u64);
    for chunk in data.chunks(65_536) {
        let n = chunk.len() - 1;
        if n < 60 {
            out.push((n as u8) << 2);
        } else if n < 256 {
            out.extend_from_slice(&[60 << 2, n as u8]);
        } else {
            out.extend_from_slice(&[61 << 2, n as u8, (n >> 8) as u8]);
        }
        out.extend_from_slice(chunk);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_parsed_or_refused_with_advice() {
        let t = PushTarget::parse("http://127.0.0.1:9090/api/v1/write").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("127.0.0.1", 9090, "/api/v1/write")
        );
        let t = PushTarget::parse("http://[::1]:9090/w").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 9090));
        let t = PushTarget::parse("http://prom/api/v1/write").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("prom", 80));
        for bad in [
            "127.0.0.1:9090",
            "ftp://x/",
            "http://",
            "http://h:port/",
            "http://u:p@h/",
        ] {
            let e = PushTarget::parse(bad).unwrap_err().to_string();
            assert!(e.contains("remote-write URL"), "{bad}: {e}");
        }
        let e = PushTarget::parse("https://h/").unwrap_err().to_string();
        assert!(e.contains("https is not supported"), "{e}");
    }

    #[test]
    fn text_is_read_back_with_labels_unescaped_and_sorted() {
        let text = "# HELP x y\n# TYPE x counter\n\
                    pelt_requests_total{run=\"a\\\"b\"} 6\n\
                    pelt_x_bucket{run=\"r\",le=\"+Inf\"} 2\n\
                    up 1\n";
        let s = parse_text(text);
        assert_eq!(s.len(), 3);
        assert_eq!(
            s[0].0,
            [
                ("__name__".to_string(), "pelt_requests_total".to_string()),
                ("job".into(), "pelt".into()),
                ("run".into(), "a\"b".into()),
            ]
        );
        assert_eq!(s[0].1, 6.0);
        assert!(s[1].0.contains(&("le".into(), "+Inf".into())));
        assert_eq!(s[2].0.len(), 2);
    }

    #[test]
    fn write_request_bytes_are_protobuf() {
        let series = vec![(vec![("__name__".to_string(), "a".to_string())], 1.5)];
        let got = write_request(&series, 300);
        let mut want = vec![0x0a, 0x1d, 0x0a, 0x0d, 0x0a, 0x08];
        want.extend_from_slice(b"__name__");
        want.extend_from_slice(&[0x12, 0x01, b'a', 0x12, 0x0c, 0x09]);
        want.extend_from_slice(&1.5f64.to_le_bytes());
        want.extend_from_slice(&[0x10, 0xac, 0x02]);
        assert_eq!(got, want);
    }

    #[test]
    fn snappy_literals_carry_every_length() {
        for n in [1usize, 59, 60, 61, 255, 256, 257, 65_536, 65_537, 200_000] {
            let data: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
            let c = snappy_literal(&data);
            assert_eq!(unsnappy(&c), data, "{n}");
        }
    }

    /// A snappy block decoder for literals, enough to check the encoder.
    fn unsnappy(mut c: &[u8]) -> Vec<u8> {
        let mut len = 0u64;
        let mut shift = 0;
        loop {
            let b = c[0];
            c = &c[1..];
            len |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b < 0x80 {
                break;
            }
        }
        let mut out = Vec::new();
        while !c.is_empty() {
            let tag = c[0];
            assert_eq!(tag & 3, 0, "a literal");
            let (n, skip) = match tag >> 2 {
                60 => (c[1] as usize + 1, 2),
                61 => (c[1] as usize + ((c[2] as usize) << 8) + 1, 3),
                n => (n as usize + 1, 1),
            };
            out.extend_from_slice(&c[skip..skip + n]);
            c = &c[skip + n..];
        }
        assert_eq!(out.len() as u64, len);
        out
    }
}
