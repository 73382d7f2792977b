//! The per-request controls read from the query string.
//!
//! Parsing is a pure function of the request target so it can be tested
//! without sockets. Unknown parameters are ignored (a load generator may add
//! cache-busting parameters); a known parameter with a bad value is an error
//! whose message names the parameter and what it accepts, because a silently
//! ignored `?delay=10` would ruin the test it was meant to set up.

use std::time::Duration;

/// Longest `delay`, `delay_max` or `stall` accepted: a test server must not
/// be told to hold a connection for an hour by a typo.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(60);

/// How long `fault=stall` holds the connection when `stall=` is not given.
const DEFAULT_STALL: Duration = MAX_WAIT;

/// Longest value echoed back in an error message, so a huge query string
/// does not become a huge response.
const MAX_ECHO: usize = 64;

/// The body sent when neither `size` nor `size_max` is given.
pub(crate) const DEFAULT_BODY: &[u8] = b"ok";

/// A fault to inject instead of (or in the middle of) a normal response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// Headers with the full Content-Length, half the body, then EOF.
    Close,
    /// Close with SO_LINGER 0 so the client sees a reset and no bytes.
    Reset,
    /// Bytes that are not an HTTP response, then EOF.
    Invalid,
    /// No answer at all for the stall duration, then EOF.
    Stall,
    /// A full keep-alive response, then EOF: what a server's idle
    /// keep-alive timeout does to a client that waits before reusing.
    Hangup,
    /// A full response, then shortly after a second one nobody asked for.
    Extra,
}

/// Everything the query string can ask for, with defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    pub status: u16,
    /// `None` means the default `ok` body.
    pub size: Option<usize>,
    pub size_max: Option<usize>,
    pub delay: Duration,
    pub delay_max: Option<Duration>,
    /// `work=`: CPU time to burn on the serving thread before answering.
    pub work: Duration,
    pub chunked: bool,
    pub fault: Option<Fault>,
    pub stall: Duration,
    /// `location=`: a Location header to send (percent-decoded), for
    /// redirect tests with `status=302`.
    pub location: Option<Location>,
    /// `push=`: on a WebSocket upgrade, a message every so often.
    pub push: Option<Duration>,
    /// `count=`: how many messages `push` sends before closing.
    pub count: Option<u64>,
}

/// Longest `location=` value, decoded.
pub(crate) const MAX_LOCATION: usize = 256;

/// A Location value held inline, so `Params` stays `Copy` and parsing
/// allocates nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Location {
    bytes: [u8; MAX_LOCATION],
    len: usize,
}

impl Location {
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl Default for Params {
    fn default() -> Self {
        Params {
            status: 200,
            size: None,
            size_max: None,
            delay: Duration::ZERO,
            delay_max: None,
            work: Duration::ZERO,
            chunked: false,
            fault: None,
            stall: DEFAULT_STALL,
            location: None,
            push: None,
            count: None,
        }
    }
}

/// What the body should be for one response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodySpec {
    /// The default `ok`.
    Default,
    /// This many filler bytes.
    Filler(usize),
}

impl BodySpec {
    pub(crate) fn len(self) -> usize {
        match self {
            BodySpec::Default => DEFAULT_BODY.len(),
            BodySpec::Filler(n) => n,
        }
    }
}

impl Params {
    /// The body for this response, drawing from `[size, size_max]` if a
    /// range was given.
    pub(crate) fn pick_body(&self) -> BodySpec {
        match (self.size, self.size_max) {
            (None, None) => BodySpec::Default,
            (Some(n), None) => BodySpec::Filler(n),
            (lo, Some(hi)) => BodySpec::Filler(fastrand::usize(lo.unwrap_or(0)..=hi)),
        }
    }

    /// The delay for this response, drawing from `[delay, delay_max]` if a
    /// range was given.
    pub(crate) fn pick_delay(&self) -> Duration {
        match self.delay_max {
            None => self.delay,
            Some(hi) => {
                // Nanosecond resolution is plenty and both ends are at most
                // 60 s, so u64 nanoseconds cannot overflow.
                let lo = self.delay.as_nanos() as u64;
                let hi = hi.as_nanos() as u64;
                Duration::from_nanos(fastrand::u64(lo..=hi))
            }
        }
    }
}

/// A query parameter with a value the server cannot honour.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad query parameter '{param}': expected {expected}, got '{got}'")]
pub(crate) struct ParamError {
    pub param: &'static str,
    pub expected: String,
    pub got: String,
}

impl ParamError {
    fn new(param: &'static str, expected: impl Into<String>, got: &str) -> Self {
        let got = match got.char_indices().nth(MAX_ECHO) {
            Some((cut, _)) => format!("{}...", &got[..cut]),
            None => got.to_string(),
        };
        ParamError {
            param,
            expected: expected.into(),
            got,
        }
    }
}

/// Parses the query part of a request target (`/any/path?status=404&size=1k`).
pub(crate) fn parse_target(target: &str, max_body: usize) -> Result<Params, ParamError> {
    let target = target.split_once('#').map_or(target, |(t, _)| t);
    let Some((_, query)) = target.split_once('?') else {
        return Ok(Params::default());
    };
    let mut p = Params::default();
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "status" => p.status = parse_status(value)?,
            "size" => p.size = Some(parse_size("size", value, max_body)?),
            "size_max" => p.size_max = Some(parse_size("size_max", value, max_body)?),
            "delay" => p.delay = parse_wait("delay", value)?,
            "delay_max" => p.delay_max = Some(parse_wait("delay_max", value)?),
            "work" => p.work = parse_work(value)?,
            "chunked" => p.chunked = parse_flag("chunked", value)?,
            "fault" => p.fault = parse_fault(value)?,
            "stall" => p.stall = parse_wait("stall", value)?,
            "location" => p.location = Some(parse_location(value)?),
            "push" => p.push = Some(parse_push(value)?),
            "count" => p.count = Some(parse_count(value)?),
            _ => {}
        }
    }
    // Ranges are checked once all parameters are known, so their order in
    // the query string does not matter.
    if let Some(hi) = p.size_max {
        let lo = p.size.unwrap_or(0);
        if hi < lo {
            return Err(ParamError::new(
                "size_max",
                format!("a byte count at least size ({lo})"),
                &hi.to_string(),
            ));
        }
    }
    if let Some(hi) = p.delay_max {
        if hi < p.delay {
            return Err(ParamError::new(
                "delay_max",
                format!("a duration at least delay ({:?})", p.delay),
                &format!("{hi:?}"),
            ));
        }
    }
    Ok(p)
}

/// Longest `work` accepted: a request holds its thread that long, so a
/// typo must not freeze the server.
pub(crate) const MAX_WORK: Duration = Duration::from_secs(1);

fn parse_work(value: &str) -> Result<Duration, ParamError> {
    let d = parse_wait("work", value)?;
    if d > MAX_WORK {
        return Err(ParamError::new(
            "work",
            "a duration of CPU work up to 1s, like 200us or 2ms",
            value,
        ));
    }
    Ok(d)
}

fn parse_status(value: &str) -> Result<u16, ParamError> {
    let err = || {
        ParamError::new(
            "status",
            "a status code from 200 to 999 (1xx cannot be a final response)",
            value,
        )
    };
    let code: u16 = value.parse().map_err(|_| err())?;
    if (200..=999).contains(&code) {
        Ok(code)
    } else {
        Err(err())
    }
}

/// Byte counts: `1024`, `4k`, `1m` (binary multiples, case-insensitive).
fn parse_size(param: &'static str, value: &str, max_body: usize) -> Result<usize, ParamError> {
    let expected = || format!("a byte count like 512, 4k or 1m, at most {max_body}");
    let (digits, scale) = match value.as_bytes().last() {
        Some(b'k' | b'K') => (&value[..value.len() - 1], 1024),
        Some(b'm' | b'M') => (&value[..value.len() - 1], 1024 * 1024),
        _ => (value, 1),
    };
    // `parse` alone would accept a leading '+'.
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ParamError::new(param, expected(), value));
    }
    let n = digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|&n| n <= max_body)
        .ok_or_else(|| ParamError::new(param, expected(), value))?;
    Ok(n)
}

fn parse_wait(param: &'static str, value: &str) -> Result<Duration, ParamError> {
    let expected = "a duration like 10ms, 1.5s or 1m, at most 60s";
    match pelt_core::parse_duration(value) {
        Ok(d) if d <= MAX_WAIT => Ok(d),
        _ => Err(ParamError::new(param, expected, value)),
    }
}

/// Shortest `push` period: a typo must not make the server a busy loop.
const MIN_PUSH: Duration = Duration::from_micros(100);

fn parse_push(value: &str) -> Result<Duration, ParamError> {
    let expected = "a period like 10ms or 1s, from 100us to 60s";
    match pelt_core::parse_duration(value) {
        Ok(d) if (MIN_PUSH..=MAX_WAIT).contains(&d) => Ok(d),
        _ => Err(ParamError::new("push", expected, value)),
    }
}

fn parse_count(value: &str) -> Result<u64, ParamError> {
    value
        .parse()
        .map_err(|_| ParamError::new("count", "a whole number of messages, like 100", value))
}

fn parse_flag(param: &'static str, value: &str) -> Result<bool, ParamError> {
    match value {
        // A bare `?chunked` reads as a request for it.
        "" | "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(ParamError::new(param, "1 or 0", value)),
    }
}

/// Percent-decodes a `location=` value (so it can carry its own query:
/// `location=/b%3Fstatus%3D302`).
fn parse_location(value: &str) -> Result<Location, ParamError> {
    let err = || {
        ParamError::new(
            "location",
            format!("a URL or path, percent-encoded, at most {MAX_LOCATION} bytes"),
            value,
        )
    };
    let mut loc = Location {
        bytes: [0; MAX_LOCATION],
        len: 0,
    };
    let raw = value.as_bytes();
    let mut i = 0;
    while i < raw.len() {
        let b = match raw[i] {
            b'%' => {
                let hex = raw.get(i + 1..i + 3).ok_or_else(err)?;
                let hex = std::str::from_utf8(hex).map_err(|_| err())?;
                i += 2;
                u8::from_str_radix(hex, 16).map_err(|_| err())?
            }
            b => b,
        };
        i += 1;
        // A header value must not break the response.
        if b.is_ascii_control() || loc.len == MAX_LOCATION {
            return Err(err());
        }
        loc.bytes[loc.len] = b;
        loc.len += 1;
    }
    Ok(loc)
}

fn parse_fault(value: &str) -> Result<Option<Fault>, ParamError> {
    Ok(Some(match value {
        "close" => Fault::Close,
        "reset" => Fault::Reset,
        "invalid" => Fault::Invalid,
        "stall" => Fault::Stall,
        "hangup" => Fault::Hangup,
        "extra" => Fault::Extra,
        "" | "none" => return Ok(None),
        _ => {
            return Err(ParamError::new(
                "fault",
                "one of close, reset, invalid, stall, hangup, extra",
                value,
            ))
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = 16 << 20;

    fn parse(target: &str) -> Result<Params, ParamError> {
        parse_target(target, MAX)
    }

    #[test]
    fn no_query_gives_defaults() {
        assert_eq!(parse("/").unwrap(), Params::default());
        assert_eq!(parse("/a/b?").unwrap(), Params::default());
        assert_eq!(parse("/?#status=500").unwrap(), Params::default());
        assert_eq!(Params::default().pick_body(), BodySpec::Default);
    }

    #[test]
    fn reads_every_parameter() {
        let p = parse("/x?status=404&size=4k&size_max=1m&delay=10ms&delay_max=1s&chunked=1&fault=stall&stall=2s&other=zz").unwrap();
        assert_eq!(p.status, 404);
        assert_eq!(p.size, Some(4096));
        assert_eq!(p.size_max, Some(1 << 20));
        assert_eq!(p.delay, Duration::from_millis(10));
        assert_eq!(p.delay_max, Some(Duration::from_secs(1)));
        assert!(p.chunked);
        assert_eq!(p.fault, Some(Fault::Stall));
        assert_eq!(p.stall, Duration::from_secs(2));
    }

    #[test]
    fn ranges_draw_inside_their_bounds() {
        let p = parse("/?size=10&size_max=20&delay=1ms&delay_max=2ms").unwrap();
        for _ in 0..1000 {
            let n = p.pick_body().len();
            assert!((10..=20).contains(&n), "{n}");
            let d = p.pick_delay();
            assert!(d >= Duration::from_millis(1) && d <= Duration::from_millis(2));
        }
        let only_max = parse("/?size_max=3").unwrap();
        assert!(only_max.pick_body().len() <= 3);
    }

    #[test]
    fn bad_values_name_the_parameter() {
        for (target, param) in [
            ("/?status=abc", "status"),
            ("/?status=150", "status"),
            ("/?status=1000", "status"),
            ("/?size=-1", "size"),
            ("/?size=+1", "size"),
            ("/?size=17m", "size"),
            ("/?size=99999999999999999999k", "size"),
            ("/?size=k", "size"),
            ("/?size=10&size_max=5", "size_max"),
            ("/?delay=10", "delay"),
            ("/?delay=61s", "delay"),
            ("/?delay=2s&delay_max=1s", "delay_max"),
            ("/?work=2s", "work"),
            ("/?work=fast", "work"),
            ("/?chunked=maybe", "chunked"),
            ("/?fault=explode", "fault"),
            ("/?stall=2m", "stall"),
        ] {
            let e = parse(target).unwrap_err();
            assert_eq!(e.param, param, "{target}");
            let msg = e.to_string();
            assert!(msg.contains(param) && msg.contains("expected"), "{msg}");
        }
    }

    #[test]
    fn location_is_percent_decoded() {
        let p = parse("/?status=302&location=/b%3Fstatus%3D200%26x%3D1").unwrap();
        assert_eq!(p.location.unwrap().as_bytes(), b"/b?status=200&x=1");
        for bad in ["/?location=%0d%0a", "/?location=%zz", "/?location=%4"] {
            assert_eq!(parse(bad).unwrap_err().param, "location", "{bad}");
        }
        let long = format!("/?location={}", "a".repeat(MAX_LOCATION + 1));
        assert_eq!(parse(&long).unwrap_err().param, "location");
    }

    #[test]
    fn echoed_values_are_bounded() {
        let long = format!("/?status={}", "9".repeat(10_000));
        let e = parse(&long).unwrap_err();
        assert!(e.to_string().len() < 200);
    }
}
