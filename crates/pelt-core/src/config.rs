//! The run configuration: plain, serialisable data.
//!
//! A `RunConfig` is everything needed to repeat a run. The CLI builds one
//! from its flags, experiments and sweeps build them programmatically, and
//! results files store them next to the numbers. The engine never sees
//! command-line flags.

use crate::schedule::Schedule;
use crate::url::{Scheme, Url};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Default connections for closed-loop runs (wrk's default).
pub const DEFAULT_CLOSED_CONNECTIONS: u32 = 10;
/// Default connection pool for rate runs: enough for 1,000 req/s at 100 ms
/// per request. When every connection is busy, requests wait in the client
/// with their clock running, and the report says so.
pub const DEFAULT_RATE_CONNECTIONS: u32 = 100;
/// Default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default connect timeout.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Highest accepted `--rate`: beyond any one machine, and keeps schedule
/// arithmetic (f64 nanoseconds) exact.
pub const MAX_RATE: f64 = 10_000_000.0;
/// Lowest accepted `--rate` and `--connect-rate`: one every 1,000 s.
/// Below it a "rate" is a zero in disguise (`--rate 1e-300 -n 2` waited
/// 10^300 s for its second request).
pub const MIN_RATE: f64 = 0.001;
/// Most connections a run may use (fixed `-c`, a `--rate` pool, or the
/// peak of a `-c` schedule): beyond what one machine's ports allow, and
/// each connection's state is allocated up front.
pub const MAX_CONNECTIONS: u32 = 100_000;
/// Most requests in flight at once with HTTP/2 (`-c` × `--streams`): each
/// stream's state is allocated up front, like a connection's.
pub const MAX_SENDERS: u64 = 1_000_000;
/// Most connections a `-c` schedule may reach.
pub const MAX_SCHEDULED_CONNECTIONS: f64 = MAX_CONNECTIONS as f64;
/// Largest request body: bodies are held in memory and stored with the run.
pub const MAX_BODY: usize = 32 << 20;
/// Default run length when neither a count nor a duration is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// One request to send: method, URL, headers and body, fixed for the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub method: String,
    pub url: Url,
    /// Extra headers, in order. `Host` here overrides the URL's host.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// Request body (stored base64-encoded so binary bodies survive JSON).
    #[serde(default, with = "base64_bytes")]
    pub body: Vec<u8>,
    /// Share of requests relative to the other targets (1 unless a
    /// targets file says otherwise).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub weight: u32,
}

fn one() -> u32 {
    1
}

fn is_one(w: &u32) -> bool {
    *w == 1
}

impl Target {
    /// A `GET` of `url` with no extra headers.
    pub fn get(url: Url) -> Target {
        Target {
            method: "GET".into(),
            url,
            headers: Vec::new(),
            body: Vec::new(),
            weight: 1,
        }
    }
}

/// How load is generated.
///
/// A `schedule` makes the level change over time (`--rate 100..2000/30s`,
/// `-c 10s:1,10s:10`); files written before schedules existed have none
/// and read as a constant level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum Load {
    /// `connections` each send the next request as soon as the last one
    /// ends (ab, wrk, siege). Cannot see queueing: a slow server just slows
    /// the senders down. With a `schedule` (of connection counts),
    /// connection `k` (0-based) works only while the level is above `k`,
    /// and `connections` is the schedule's peak.
    Closed {
        connections: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        schedule: Option<Schedule>,
    },
    /// `rate` requests per second in total, on a schedule that ignores
    /// responses (vegeta, wrk2), sent over at most `connections`. With a
    /// `schedule` (of requests per second), `rate` is its peak.
    Rate {
        rate: f64,
        connections: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        schedule: Option<Schedule>,
    },
}

impl Load {
    /// A closed loop of a fixed number of connections.
    pub fn closed(connections: u32) -> Load {
        Load::Closed {
            connections,
            schedule: None,
        }
    }

    /// A constant rate over a pool of `connections`.
    pub fn rate_of(rate: f64, connections: u32) -> Load {
        Load::Rate {
            rate,
            connections,
            schedule: None,
        }
    }

    /// Connections to open at most (the peak of a connection schedule).
    pub fn connections(&self) -> u32 {
        match *self {
            Load::Closed { connections, .. } | Load::Rate { connections, .. } => connections,
        }
    }

    /// The offered rate of rate runs: the constant rate, or a schedule's
    /// peak. For comparing with what was sent, see [`Load::offered_count`].
    pub fn rate(&self) -> Option<f64> {
        match *self {
            Load::Rate { rate, .. } => Some(rate),
            Load::Closed { .. } => None,
        }
    }

    /// The schedule of a load that changes over time: requests per second
    /// for rate runs, connections for closed loops.
    pub fn schedule(&self) -> Option<&Schedule> {
        match self {
            Load::Closed { schedule, .. } | Load::Rate { schedule, .. } => schedule.as_ref(),
        }
    }

    /// Rate runs: requests the schedule offers in the first `t` of
    /// measurement.
    pub fn offered_count(&self, t: Duration) -> Option<f64> {
        match self {
            Load::Rate {
                schedule: Some(s), ..
            } => Some(s.count(t.as_secs_f64())),
            Load::Rate { rate, .. } => Some(rate * t.as_secs_f64()),
            Load::Closed { .. } => None,
        }
    }

    /// Rate runs: the mean rate offered over the first `t` of measurement
    /// (the constant rate when there is no schedule).
    pub fn offered_rate(&self, t: Duration) -> Option<f64> {
        match self {
            Load::Rate {
                schedule: Some(s), ..
            } if !t.is_zero() => Some(s.count(t.as_secs_f64()) / t.as_secs_f64()),
            Load::Rate {
                schedule: Some(s), ..
            } => Some(s.level(0.0)),
            Load::Rate { rate, .. } => Some(*rate),
            Load::Closed { .. } => None,
        }
    }
}

/// When the run stops: after `requests` measured requests, after
/// `duration` of measurement, or whichever comes first.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Stop {
    pub requests: Option<u64>,
    #[serde(default, with = "opt_secs")]
    pub duration: Option<Duration>,
}

/// Which target each request goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Order {
    /// Targets in turn.
    #[default]
    RoundRobin,
    /// A random target per request, reproducible from `seed` (siege -i).
    Random { seed: u64 },
}

impl Order {
    /// The target of request `seq`: a pure function of the request's
    /// number, so the sequence does not depend on threads or timing.
    pub fn pick(&self, seq: u64, targets: usize) -> usize {
        let n = targets.max(1) as u64;
        match *self {
            Order::RoundRobin => (seq % n) as usize,
            Order::Random { seed } => (splitmix64(seed ^ splitmix64(seq)) % n) as usize,
        }
    }
}

/// Chooses each request's target from an [`Order`] and the targets'
/// weights: a pure function of the request number, built once per run.
///
/// With equal weights, round-robin is `seq % n` and random is a seeded
/// hash of `seq` modulo `n`. With weights `w_i` (total `W`), request `seq`
/// takes the slot `r` in `[0, W)` and the target whose share of the
/// prefix sums of the weights contains `r` (a binary search, O(log n), no
/// allocation). Round-robin's slot is `(seq mod W) · k mod W` for a stride
/// `k` near `W/φ` and coprime with `W`: a permutation of each cycle of `W`
/// requests, so every `W` consecutive requests send exactly `w_i` to
/// target `i`, interleaved rather than in runs (weights 3:1 give
/// `A B A A`). Random's slot is the seeded hash modulo `W`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetPicker {
    order: Order,
    /// Number of targets.
    n: u64,
    /// `ends[i]` = w_0 + ... + w_i; empty when every weight is 1.
    ends: Vec<u64>,
    /// W, the sum of the weights.
    total: u64,
    /// Round-robin's stride through a cycle.
    stride: u64,
}

impl TargetPicker {
    pub fn new(order: Order, targets: &[Target]) -> TargetPicker {
        let n = targets.len().max(1) as u64;
        let weighted = targets.iter().any(|t| t.weight != 1);
        let ends: Vec<u64> = if weighted {
            targets
                .iter()
                .scan(0u64, |sum, t| {
                    *sum += u64::from(t.weight.max(1));
                    Some(*sum)
                })
                .collect()
        } else {
            Vec::new()
        };
        let total = ends.last().copied().unwrap_or(n);
        // 1/φ of the cycle: consecutive requests land far apart, so no
        // target gets a run of requests while the others wait.
        let mut stride = ((total as f64 * 0.618_033_988_75).round() as u64).max(1);
        while gcd(stride, total) != 1 {
            stride += 1;
        }
        TargetPicker {
            order,
            n,
            ends,
            total,
            stride,
        }
    }

    /// The target of request `seq`.
    pub fn pick(&self, seq: u64) -> usize {
        if self.ends.is_empty() {
            return self.order.pick(seq, self.n as usize);
        }
        let slot = match self.order {
            Order::RoundRobin => {
                ((u128::from(seq % self.total) * u128::from(self.stride)) % u128::from(self.total))
                    as u64
            }
            Order::Random { seed } => splitmix64(seed ^ splitmix64(seq)) % self.total,
        };
        // The first target whose range ends after `slot`.
        self.ends.partition_point(|&end| end <= slot)
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A pause between a closed-loop connection's requests (siege's `-d`),
/// uniform in `[min, max]`, excluded from every latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkTime {
    #[serde(with = "secs")]
    pub min: Duration,
    #[serde(with = "secs")]
    pub max: Duration,
}

impl ThinkTime {
    /// Parses `500ms` (fixed) or `0..2s` (uniform between the two).
    pub fn parse(text: &str) -> Result<ThinkTime, String> {
        let (lo, hi) = text.split_once("..").unwrap_or((text, text));
        let p = |v: &str| crate::duration::parse_duration(v).map_err(|e| e.to_string());
        let t = ThinkTime {
            min: p(lo)?,
            max: p(hi)?,
        };
        if t.max < t.min {
            return Err(format!(
                "invalid think time '{}': the second value must not be smaller, like 0..2s",
                text.escape_debug()
            ));
        }
        Ok(t)
    }

    /// The pause before request `seq` of connection `conn`: reproducible,
    /// different per connection and request.
    pub fn pause(&self, conn: u64, seq: u64) -> Duration {
        let span = self.max.saturating_sub(self.min).as_nanos() as u64;
        if span == 0 {
            return self.min;
        }
        let r = splitmix64(conn.wrapping_mul(0x9E37_79B9) ^ splitmix64(seq));
        self.min + Duration::from_nanos(r % (span + 1))
    }
}

/// SplitMix64: a fast, well-mixed hash of a 64-bit counter.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

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
    #[serde(with = "secs")]
    pub connect_timeout: Duration,
    /// Skip TLS certificate verification.
    pub insecure: bool,
    /// Speak HTTP/2: negotiated by ALPN over TLS, or h2c with prior
    /// knowledge over plain TCP. Absent in results written before HTTP/2.
    #[serde(default)]
    pub http2: bool,
    /// HTTP/2 only: concurrent streams per connection. Each stream is a
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
    pub host: Option<String>,
    pub port: Option<u16>,
    pub connect_host: Option<String>,
    pub connect_port: Option<u16>,
}

impl ConnectTo {
    /// Parses curl's syntax; IPv6 addresses go in brackets.
    pub fn parse(text: &str) -> Result<ConnectTo, String> {
        let bad = |why: &str| {
            format!(
                "invalid --connect-to '{}': {why}; use HOST:PORT:CONNECT_HOST:CONNECT_PORT, like example.com:443:127.0.0.1:8443",
                text.escape_debug()
            )
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
            return Err(bad("it needs four fields separated by ':'"));
        }
        let host = |s: &str| -> Result<Option<String>, String> {
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
                return Err(bad("a host contains characters a host name cannot have"));
            }
            Ok(Some(s.to_ascii_lowercase()))
        };
        let port = |s: &str| -> Result<Option<u16>, String> {
            if s.is_empty() {
                return Ok(None);
            }
            s.parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .map(Some)
                .ok_or_else(|| bad("a port must be a number from 1 to 65535"))
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
            streams: 1,
            connect_to: Vec::new(),
            unix_socket: None,
            connect_rate: None,
            follow: 0,
            follow_any_host: false,
            accept_variable_length: false,
        }
    }
}

/// Everything a run needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub targets: Vec<Target>,
    /// Which target each request goes to.
    #[serde(default)]
    pub order: Order,
    /// Closed loop only: a pause between a connection's requests.
    #[serde(default)]
    pub think: Option<ThinkTime>,
    pub load: Load,
    pub stop: Stop,
    /// Sent before measurement starts and excluded from every statistic.
    /// The measured duration (`stop.duration`) comes after it.
    #[serde(with = "secs")]
    pub warmup: Duration,
    /// Worker threads, each with its own event loop, connections and recorder.
    pub threads: usize,
    pub http: HttpOptions,
}

impl Target {
    /// Headers that would break the request: two Host headers (servers
    /// must answer 400), or a Content-Length that is not the body's length
    /// (the server waits for bytes never sent, or reads the rest as the
    /// next request). A Transfer-Encoding header means the body is framed
    /// by the user, so Content-Length is then theirs to get right.
    fn check_framing(&self) -> Result<(), ConfigError> {
        let named = |name: &'static str| {
            self.headers
                .iter()
                .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
        };
        let hosts = named("host").count();
        if hosts > 1 {
            return Err(ConfigError::DuplicateHost {
                target: format!("{} {}", self.method, self.url),
                count: hosts,
            });
        }
        if named("transfer-encoding").next().is_none() {
            for (_, value) in named("content-length") {
                // Digits only: `parse` would take "+3", which servers
                // refuse (RFC 9110 allows 1*DIGIT).
                let v = value.trim();
                let digits = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
                if !digits || v.parse::<usize>().ok() != Some(self.body.len()) {
                    return Err(ConfigError::ContentLengthMismatch {
                        target: format!("{} {}", self.method, self.url),
                        value: value.escape_debug().to_string(),
                        actual: self.body.len(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// A configuration that cannot run, phrased as what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("no target to load; give a URL, like pelt run http://127.0.0.1:8080/")]
    NoTargets,
    #[error("-c/--connections must be at least 1")]
    NoConnections,
    #[error("-c/--connections must be at most 100,000, like -c 50")]
    TooManyConnections,
    #[error("--rate must be a number of requests per second, at least 0.001 and at most 10,000,000, like --rate 1000")]
    BadRate,
    #[error("a --rate schedule's levels must be between 0 and 10,000,000 req/s and not all 0, like --rate 100..2000/30s")]
    BadRateSchedule,
    #[error("a -c schedule's levels must be whole numbers of connections, at most 100,000, and not all 0, like -c 1..50/30s")]
    BadConnectionSchedule,
    #[error(
        "the request body is larger than 32 MiB; pelt holds bodies in memory, so use a smaller one"
    )]
    BodyTooLarge,
    #[error("-n/--requests must be at least 1")]
    NoRequests,
    #[error("-d/--duration must be longer than zero, like -d 10s")]
    ZeroDuration,
    #[error("--delay (think time) is for closed loops; with --rate the schedule already spaces requests")]
    ThinkWithRate,
    #[error("--threads must be at least 1")]
    NoThreads,
    #[error("--timeout must be longer than zero")]
    ZeroTimeout,
    #[error("--connect-timeout must be longer than zero")]
    ZeroConnectTimeout,
    #[error("--streams must be between 1 and 1000")]
    BadStreams,
    #[error("-c × --streams must be at most 1,000,000 streams in flight; use fewer connections or streams, like -c 100 --streams 100")]
    TooManyStreams,
    #[error("--streams is for HTTP/2; add --http2, or use -c for more HTTP/1.1 connections")]
    StreamsWithoutHttp2,
    #[error("--no-keepalive is HTTP/1.1's Connection: close; HTTP/2 always reuses its connections, so drop one of them")]
    NoKeepaliveWithHttp2,
    #[error("--connect-rate must be a number of connections per second, at least 0.001 and at most 10,000,000, like --connect-rate 100")]
    BadConnectRate,
    #[error("--follow must be at most 100 redirects, like --follow 5")]
    BadFollow,
    #[error("--follow-any-host needs --follow N to say how many redirects to follow")]
    AnyHostWithoutFollow,
    #[error("--follow-any-host is for HTTP/1.1; with --http2, --follow follows redirects within the same origin only")]
    AnyHostWithHttp2,
    #[error("--unix-socket carries plain HTTP only; use an http:// URL (the URL still gives the Host header and path)")]
    UnixSocketTls,
    #[error("--unix-socket needs a path, like --unix-socket /run/app.sock")]
    EmptyUnixSocket,
    #[error("--follow-any-host cannot leave a --unix-socket (other origins have no socket); drop one of them")]
    AnyHostWithUnixSocket,
    #[error("a -c schedule counts HTTP/1.1 connections; with --http2 use a --rate schedule, or a fixed -c with --streams")]
    ConnectionScheduleWithHttp2,
    #[error("{target} has {count} Host headers; give one (-H 'Host: NAME' or --host NAME)")]
    DuplicateHost { target: String, count: usize },
    #[error("{target} has a Content-Length header of '{value}' but a body of {actual} bytes; drop the header (pelt sets Content-Length from the body)")]
    ContentLengthMismatch {
        target: String,
        value: String,
        actual: usize,
    },
}

impl RunConfig {
    /// A closed-loop run of `url` with defaults everywhere else.
    pub fn new(targets: Vec<Target>, load: Load, stop: Stop) -> RunConfig {
        RunConfig {
            targets,
            order: Order::RoundRobin,
            think: None,
            load,
            stop,
            warmup: Duration::ZERO,
            threads: 1,
            http: HttpOptions::default(),
        }
    }

    /// Checks what the types cannot: every library entry calls this, so a
    /// programmatic caller gets the same errors as the CLI.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.targets.is_empty() {
            return Err(ConfigError::NoTargets);
        }
        match &self.load {
            Load::Rate {
                schedule: Some(s), ..
            } => {
                let ok = |v: f64| v.is_finite() && (0.0..=MAX_RATE).contains(&v);
                if s.segments.is_empty()
                    || !s.segments.iter().all(|g| ok(g.from) && ok(g.to))
                    || s.peak() <= 0.0
                {
                    return Err(ConfigError::BadRateSchedule);
                }
            }
            Load::Closed {
                schedule: Some(s),
                connections,
            } => {
                let ok =
                    |v: f64| v.fract() == 0.0 && (0.0..=MAX_SCHEDULED_CONNECTIONS).contains(&v);
                if s.segments.is_empty()
                    || !s.segments.iter().all(|g| ok(g.from) && ok(g.to))
                    || s.peak() < 1.0
                    || f64::from(*connections) < s.peak()
                {
                    return Err(ConfigError::BadConnectionSchedule);
                }
            }
            _ => {}
        }
        if self.load.connections() == 0 {
            return Err(ConfigError::NoConnections);
        }
        if self.load.connections() > MAX_CONNECTIONS {
            return Err(ConfigError::TooManyConnections);
        }
        if let Some(rate) = self.load.rate() {
            if !(rate.is_finite() && (MIN_RATE..=MAX_RATE).contains(&rate)) {
                return Err(ConfigError::BadRate);
            }
        }
        if self.targets.iter().any(|t| t.body.len() > MAX_BODY) {
            return Err(ConfigError::BodyTooLarge);
        }
        for t in &self.targets {
            t.check_framing()?;
        }
        if self.think.is_some() && self.load.rate().is_some() {
            return Err(ConfigError::ThinkWithRate);
        }
        if self.stop.requests == Some(0) {
            return Err(ConfigError::NoRequests);
        }
        if self.stop.duration == Some(Duration::ZERO) {
            return Err(ConfigError::ZeroDuration);
        }
        if self.threads == 0 {
            return Err(ConfigError::NoThreads);
        }
        if self.http.timeout.is_zero() {
            return Err(ConfigError::ZeroTimeout);
        }
        if self.http.connect_timeout.is_zero() {
            return Err(ConfigError::ZeroConnectTimeout);
        }
        if !(1..=MAX_STREAMS).contains(&self.http.streams) {
            return Err(ConfigError::BadStreams);
        }
        if u64::from(self.load.connections()) * u64::from(self.http.streams) > MAX_SENDERS {
            return Err(ConfigError::TooManyStreams);
        }
        if self.http.streams > 1 && !self.http.http2 {
            return Err(ConfigError::StreamsWithoutHttp2);
        }
        if self.http.http2 && !self.http.keepalive {
            return Err(ConfigError::NoKeepaliveWithHttp2);
        }
        if let Some(r) = self.http.connect_rate {
            if !(r.is_finite() && (MIN_RATE..=MAX_CONNECT_RATE).contains(&r)) {
                return Err(ConfigError::BadConnectRate);
            }
        }
        if self.http.follow > MAX_FOLLOW {
            return Err(ConfigError::BadFollow);
        }
        if self.http.follow_any_host && self.http.follow == 0 {
            return Err(ConfigError::AnyHostWithoutFollow);
        }
        if self.http.follow_any_host && self.http.http2 {
            return Err(ConfigError::AnyHostWithHttp2);
        }
        if let Some(path) = &self.http.unix_socket {
            if path.is_empty() {
                return Err(ConfigError::EmptyUnixSocket);
            }
            if self.targets.iter().any(|t| t.url.scheme == Scheme::Https) {
                return Err(ConfigError::UnixSocketTls);
            }
            if self.http.follow_any_host {
                return Err(ConfigError::AnyHostWithUnixSocket);
            }
        }
        // The schedule numbers senders, and with HTTP/2 a sender is a
        // stream: it would schedule streams while saying connections.
        if self.http.http2
            && matches!(
                self.load,
                Load::Closed {
                    schedule: Some(_),
                    ..
                }
            )
        {
            return Err(ConfigError::ConnectionScheduleWithHttp2);
        }
        Ok(())
    }

    /// The stop condition with the default applied: a run with neither a
    /// count nor a duration lasts [`DEFAULT_DURATION`]; a run with a
    /// schedule and no duration lasts the schedule's length (with `-n`
    /// too, so a schedule ending at 0 still ends the run).
    pub fn effective_stop(&self) -> Stop {
        let mut stop = self.stop;
        if stop.duration.is_none() {
            if let Some(s) = self.load.schedule() {
                stop.duration = Some(s.length());
            } else if stop.requests.is_none() {
                stop.duration = Some(DEFAULT_DURATION);
            }
        }
        stop
    }

    /// Threads actually used: never more than connections.
    pub fn effective_threads(&self) -> usize {
        self.threads
            .clamp(1, self.load.connections().max(1) as usize)
    }
}

/// Durations as seconds (floats) in serialised form.
pub mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }
}

mod opt_secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<f64>::deserialize(d)?
            .map(|v| Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom))
            .transpose()
    }
}

mod base64_bytes {
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(b))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(serde::de::Error::custom)
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
            let e = super::ConnectTo::parse(bad).unwrap_err();
            assert!(
                e.contains("HOST:PORT:CONNECT_HOST:CONNECT_PORT"),
                "{bad}: {e}"
            );
        }
    }

    use super::*;

    fn weighted(weights: &[u32]) -> Vec<Target> {
        weights
            .iter()
            .enumerate()
            .map(|(i, &w)| Target {
                weight: w,
                ..Target::get(Url::parse(&format!("http://127.0.0.1:1/{i}")).unwrap())
            })
            .collect()
    }

    fn counts(p: &TargetPicker, targets: usize, range: std::ops::Range<u64>) -> Vec<u64> {
        let mut c = vec![0u64; targets];
        for seq in range {
            c[p.pick(seq)] += 1;
        }
        c
    }

    #[test]
    fn weighted_round_robin_is_exact_over_every_cycle_and_interleaved() {
        let weights = [5, 1, 3, 1, 10];
        let p = TargetPicker::new(Order::RoundRobin, &weighted(&weights));
        // Any 20 consecutive requests (one cycle), wherever they start.
        for start in [0, 1, 7, 20, 1_000_003] {
            assert_eq!(counts(&p, 5, start..start + 20), vec![5, 1, 3, 1, 10]);
        }
        // Interleaved: the heaviest target never gets more than 2 in a row
        // here, where a block order would give it 10.
        let run = (0..40)
            .map(|s| p.pick(s))
            .collect::<Vec<_>>()
            .chunk_by(|a, b| a == b)
            .map(<[usize]>::len)
            .max();
        assert!(run <= Some(2), "longest run {run:?}");
        // 3:1 is A B A A.
        let p = TargetPicker::new(Order::RoundRobin, &weighted(&[3, 1]));
        assert_eq!(
            (0..8).map(|s| p.pick(s)).collect::<Vec<_>>(),
            [0, 1, 0, 0, 0, 1, 0, 0]
        );
        // Equal weights keep the plain order.
        let p = TargetPicker::new(Order::RoundRobin, &weighted(&[1, 1, 1]));
        assert_eq!(
            (0..6).map(|s| p.pick(s)).collect::<Vec<_>>(),
            [0, 1, 2, 0, 1, 2]
        );
        // Huge totals do not overflow.
        let p = TargetPicker::new(Order::RoundRobin, &weighted(&[1_000_000; 3]));
        assert!(counts(&p, 3, u64::MAX - 100..u64::MAX).iter().sum::<u64>() == 100);
    }

    #[test]
    fn weighted_random_follows_the_weights_and_the_seed() {
        let weights = [1u32, 2, 7];
        let targets = weighted(&weights);
        let p = TargetPicker::new(Order::Random { seed: 42 }, &targets);
        let n = 100_000u64;
        let c = counts(&p, 3, 0..n);
        for (got, w) in c.iter().zip(weights) {
            let expected = n as f64 * f64::from(w) / 10.0;
            // 1 % of all requests: over 6 standard deviations for each
            // count here (sd <= sqrt(n p (1-p)) <= 145).
            assert!(
                (*got as f64 - expected).abs() < n as f64 * 0.01,
                "counts {c:?} for weights {weights:?}"
            );
        }
        // Reproducible from the seed, different with another.
        let again = TargetPicker::new(Order::Random { seed: 42 }, &targets);
        assert!((0..1000).all(|s| p.pick(s) == again.pick(s)));
        let other = TargetPicker::new(Order::Random { seed: 43 }, &targets);
        assert!((0..1000).any(|s| p.pick(s) != other.pick(s)));
    }

    fn config() -> RunConfig {
        let url = Url::parse("http://127.0.0.1:1/").unwrap();
        RunConfig::new(vec![Target::get(url)], Load::closed(4), Stop::default())
    }

    #[test]
    fn round_trips_through_json() {
        let mut c = config();
        c.targets[0].body = vec![0, 159, 146, 150];
        c.load = Load::rate_of(1500.0, 20);
        c.stop.duration = Some(Duration::from_millis(2500));
        let json = serde_json::to_string(&c).unwrap();
        let back: RunConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn validation_names_the_flag() {
        let mut c = config();
        assert_eq!(c.validate(), Ok(()));
        c.load = Load::rate_of(0.0, 1);
        assert!(c.validate().unwrap_err().to_string().contains("--rate"));
        let mut c = config();
        c.stop.requests = Some(0);
        assert_eq!(c.validate(), Err(ConfigError::NoRequests));
    }

    #[test]
    fn configs_written_before_http2_read_as_http1() {
        let mut json = serde_json::to_value(config()).unwrap();
        let http = json["http"].as_object_mut().unwrap();
        assert!(http.remove("http2").is_some() && http.remove("streams").is_some());
        let back: RunConfig = serde_json::from_value(json).unwrap();
        assert!(!back.http.http2);
        assert_eq!(back.http.streams, 1);
        assert_eq!(back, config());
    }

    #[test]
    fn streams_need_http2_and_keepalive() {
        let mut c = config();
        c.http.streams = 4;
        assert_eq!(c.validate(), Err(ConfigError::StreamsWithoutHttp2));
        c.http.http2 = true;
        assert_eq!(c.validate(), Ok(()));
        c.http.streams = 0;
        assert_eq!(c.validate(), Err(ConfigError::BadStreams));
        c.http.streams = MAX_STREAMS + 1;
        assert_eq!(c.validate(), Err(ConfigError::BadStreams));
        c.http.streams = 1;
        c.http.keepalive = false;
        assert_eq!(c.validate(), Err(ConfigError::NoKeepaliveWithHttp2));
    }

    #[test]
    fn random_order_is_reproducible_and_fair() {
        let order = Order::Random { seed: 7 };
        let mut counts = [0u32; 3];
        for seq in 0..30_000 {
            counts[order.pick(seq, 3)] += 1;
        }
        for c in counts {
            assert!((9_700..=10_300).contains(&c), "{counts:?}");
        }
        assert_eq!(
            order.pick(12345, 3),
            Order::Random { seed: 7 }.pick(12345, 3)
        );
        assert_eq!(Order::RoundRobin.pick(7, 3), 1);
    }

    #[test]
    fn think_time_parses_and_stays_in_range() {
        let t = ThinkTime::parse("100ms..300ms").unwrap();
        for seq in 0..1000 {
            let p = t.pause(3, seq);
            assert!(p >= Duration::from_millis(100) && p <= Duration::from_millis(300));
        }
        assert_eq!(t.pause(3, 7), t.pause(3, 7));
        assert_ne!(t.pause(3, 7), t.pause(4, 7));
        let fixed = ThinkTime::parse("250ms").unwrap();
        assert_eq!(fixed.pause(1, 2), Duration::from_millis(250));
        assert!(ThinkTime::parse("2s..1s").is_err());
        assert!(ThinkTime::parse("2").is_err());
    }

    #[test]
    fn schedules_round_trip_and_old_files_still_read() {
        let old = r#"{"model":"rate","rate":1000.0,"connections":100}"#;
        let load: Load = serde_json::from_str(old).unwrap();
        assert_eq!(load, Load::rate_of(1000.0, 100));
        assert_eq!(serde_json::to_string(&load).unwrap(), old);
        let old = r#"{"model":"closed","connections":10}"#;
        assert_eq!(serde_json::from_str::<Load>(old).unwrap(), Load::closed(10));
        let schedule = match crate::schedule::Spec::parse("2s:0..100,2s:100").unwrap() {
            crate::schedule::Spec::Varying(s) => s,
            crate::schedule::Spec::Constant(_) => unreachable!(),
        };
        let mut c = config();
        c.load = Load::Rate {
            rate: 100.0,
            connections: 10,
            schedule: Some(schedule.clone()),
        };
        assert_eq!(c.validate(), Ok(()));
        let json = serde_json::to_string(&c).unwrap();
        assert!(
            json.contains(r#""schedule":[{"duration":2.0,"from":0.0,"to":100.0}"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<RunConfig>(&json).unwrap(), c);
        // No -d: the schedule's length, even with -n.
        c.stop.requests = Some(5);
        assert_eq!(c.effective_stop().duration, Some(Duration::from_secs(4)));
        // 100 + 200 requests offered in 4 s.
        assert_eq!(c.load.offered_count(Duration::from_secs(4)), Some(300.0));
        assert_eq!(c.load.offered_rate(Duration::from_secs(4)), Some(75.0));
        c.load = Load::Closed {
            connections: 10,
            schedule: Some(schedule),
        };
        assert_eq!(c.validate(), Err(ConfigError::BadConnectionSchedule));
    }

    #[test]
    fn defaults_apply() {
        let mut c = config();
        assert_eq!(c.effective_stop().duration, Some(DEFAULT_DURATION));
        c.threads = 8;
        assert_eq!(c.effective_threads(), 4);
    }
}
