//! The run configuration: plain, serialisable data.
//!
//! A `RunConfig` is everything needed to repeat a run. The CLI builds one
//! from its flags, experiments and sweeps build them programmatically, and
//! results files store them next to the numbers. The engine never sees
//! command-line flags.

mod error;
mod http;
mod load;
mod pick;
mod proxy;
mod source;
mod target;
mod words;
mod ws;

pub use error::{ConfigError, TargetError};
pub use http::{
    connect_address, ConnectTo, ConnectToError, HttpOptions, SessionOptions,
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, MAX_CONNECT_RATE, MAX_FOLLOW, MAX_STREAMS,
};
pub use load::{
    Load, Stop, ThinkShape, ThinkTime, ThinkTimeError, DEFAULT_CLOSED_CONNECTIONS,
    DEFAULT_DURATION, DEFAULT_RATE_CONNECTIONS, MAX_CONNECTIONS, MAX_RATE,
    MAX_SCHEDULED_CONNECTIONS, MAX_SENDERS, MIN_RATE,
};
pub use pick::{splitmix64, Order, TargetPicker};
pub use proxy::{Proxy, ProxyOptions, ProxyUrlError};
pub use source::{parse_source_addresses, SourceAddressError, MAX_SOURCE_ADDRESSES};
pub use target::{
    check_header, check_method, unregistered_method, Target, Targets, MAX_BODY, REGISTERED_METHODS,
};
pub use words::{
    add_authorization, apply_host, check_host, default_method, parse_header, userinfo,
    RequestWords, WordError,
};

use crate::duration::secs;
use crate::shard::Shard;
use crate::url::Scheme;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Everything a run needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// What to send; a request goes to one of them, per [`order`](RunConfig::order).
    pub targets: Targets,
    /// Which target each request goes to.
    #[serde(default)]
    pub order: Order,
    /// Closed loop only: a pause between a connection's requests.
    #[serde(default)]
    pub think: Option<ThinkTime>,
    /// How load is generated.
    pub load: Load,
    /// When the run stops.
    pub stop: Stop,
    /// Sent before measurement starts and excluded from every statistic.
    /// The measured duration (`stop.duration`) comes after it.
    #[serde(with = "secs")]
    pub warmup: Duration,
    /// Worker threads, each with its own event loop, connections and recorder.
    pub threads: usize,
    /// Connection and protocol options.
    pub http: HttpOptions,
    /// `--shard`: this process sends only its part of the run described
    /// by the rest of the configuration (see [`crate::shard`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// `--run-id`: names the run all shards belong to; by default derived
    /// from the configuration and `--start-at` ([`RunConfig::run_id`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// `--start-at`: measurement starts at this wall-clock time,
    /// nanoseconds since the Unix epoch (warm-up runs before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at_unix_ns: Option<u64>,
    /// `--send-window`: rate mode sends each request within half this of
    /// its planned time, so that one wake-up sends several and reads what
    /// has arrived (see [`SendWindow`]).
    #[serde(default, skip_serializing_if = "SendWindow::is_auto")]
    pub send_window: SendWindow,
    /// `--arrivals`: how rate mode spaces its requests.
    #[serde(default, skip_serializing_if = "Arrivals::is_uniform")]
    pub arrivals: Arrivals,
    /// `--abort-on`: rules that stop the run early, judged on each
    /// second of its timeline (see [`crate::abort`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub abort_on: Vec<crate::abort::AbortRule>,
    /// `--scenario`: user journeys (pelt-scenario's file, compiled by
    /// the engine at the start); `targets` then holds one row per step
    /// and per flow, in the scenario's order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<ScenarioSource>,
}

/// A scenario file as a run keeps it: its path (feeds are found beside
/// it) and its text, so a stored run says what it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioSource {
    /// The file's path, as given.
    pub path: String,
    /// The file's text.
    pub text: String,
    /// Targets from the first: steps (`targets[..steps]`), the rest
    /// flows (one row each: a flow's count, failures and duration).
    pub steps: usize,
    /// Each target row's name: `flow/step` for a step (`once/step` for a
    /// once step), the flow's name for a flow.
    pub names: Vec<String>,
    /// Step rows with `on_failure = "continue"`: their failures skip no
    /// later step (absent in runs from before it, and when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub goes_on: Vec<usize>,
}

impl ScenarioSource {
    /// Flow rows: the target rows after the steps.
    pub fn flows(&self) -> std::ops::Range<usize> {
        self.steps..self.names.len()
    }

    /// `journey.toml: 3 steps, 1 flow`: what a report's header names.
    pub fn describe(&self) -> String {
        let n = |k: usize, word: &str| match k {
            1 => format!("1 {word}"),
            k => format!("{k} {word}s"),
        };
        format!(
            "{}: {}, {}",
            self.path,
            n(self.steps, "step"),
            n(self.flows().len(), "flow")
        )
    }

    /// Steps skipped at target row `step` (a step): a failed step ends its
    /// flow, so the flows that failed at an earlier step of the same flow
    /// never reached it. `failed(row)` is a row's failed count.
    pub fn skipped(&self, step: usize, failed: impl Fn(usize) -> u64) -> u64 {
        let flow = |i: usize| self.names[i].split_once('/').map_or("", |(f, _)| f);
        (0..step)
            .rev()
            .take_while(|&j| flow(j) == flow(step))
            .filter(|j| !self.goes_on.contains(j))
            .map(failed)
            .sum()
    }
}

/// How rate mode spaces its requests over time (the mean rate is the
/// same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Arrivals {
    /// Evenly: request `i` at `i / rate`.
    #[default]
    Uniform,
    /// As independent users would arrive: exponential gaps of mean
    /// `1 / rate` (a Poisson process), drawn from `seed`, so a run can be
    /// repeated exactly and every shard of a run draws the same times.
    Poisson {
        /// The same seed gives the same arrival times.
        seed: u64,
    },
}

impl Arrivals {
    /// Whether this is the default.
    pub fn is_uniform(&self) -> bool {
        *self == Arrivals::Uniform
    }
}

/// How closely rate mode times each send, against how often the client
/// wakes up. Waking once per request is what makes a precise open loop
/// cost more CPU than a closed one; a window lets one wake-up send every
/// request due within it, each at most half a window early or late. An
/// early request's clock starts when it is sent (it waited for nothing),
/// a late one's at its planned time (the lateness is send lag), so the
/// window never makes a response time shorter than what a user waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SendWindow {
    /// A window of about eight requests' spacing, at most
    /// [`SendWindow::AUTO_MAX`]; none when requests are further apart
    /// than half of that.
    #[default]
    Auto,
    /// At most this wide (zero: a wake-up for every request).
    Max(#[serde(with = "secs")] Duration),
}

impl SendWindow {
    /// The widest automatic window: sends within ±0.5 ms of their plan.
    pub const AUTO_MAX: Duration = Duration::from_millis(1);

    /// Whether this is the default.
    pub fn is_auto(&self) -> bool {
        *self == SendWindow::Auto
    }

    /// Requests the automatic window holds: enough to share a wake-up,
    /// few enough that a burst barely changes the load's shape (a
    /// window's requests reach the server together and queue there).
    pub const AUTO_REQUESTS: u32 = 8;

    /// The widest window allowed.
    pub fn max(&self) -> Duration {
        match self {
            SendWindow::Auto => SendWindow::AUTO_MAX,
            SendWindow::Max(d) => *d,
        }
    }

    /// The window around a request whose next is due `gap` later: about
    /// [`SendWindow::AUTO_REQUESTS`] gaps, at most [`SendWindow::AUTO_MAX`]
    /// (auto), or the width set; none when it would hold fewer than two
    /// requests (batching would save nothing and only move sends).
    pub fn width(&self, gap: Duration) -> Duration {
        let max = self.max();
        if gap.saturating_mul(2) > max {
            return Duration::ZERO;
        }
        match self {
            SendWindow::Auto => gap.saturating_mul(SendWindow::AUTO_REQUESTS).min(max),
            SendWindow::Max(d) => *d,
        }
    }
}

/// Worker threads when none are asked for: one per core the process may
/// use (1 if that cannot be told), as the CLI's `--threads` default. A
/// run never uses more threads than it has connections to drive
/// ([`RunConfig::effective_threads`]).
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl RunConfig {
    /// What the run loads, in the words every view's header uses: `GET
    /// URL` for one target, `N targets`, or a scenario's file with its
    /// steps and flows (its target rows are those, never "targets").
    pub fn subject(&self) -> String {
        if let Some(sc) = &self.scenario {
            return format!("scenario {}", sc.describe());
        }
        match self.targets.as_slice() {
            [] => "no target".to_string(),
            [one] if self.is_ws() => format!("WebSocket {}", one.url),
            [one] => format!("{} {}", one.method, one.url),
            many => format!("{} targets", many.len()),
        }
    }

    /// What a rate counts per second: a scenario's rate starts flows
    /// (`flows/s`), any other run's sends requests (`req/s`).
    pub fn rate_unit(&self) -> &'static str {
        match self.scenario {
            Some(_) => "flows/s",
            None if self.is_ws() => "messages/s",
            None => "req/s",
        }
    }

    /// Whether this is a WebSocket run (`ws://`, `wss://` targets): each
    /// request is a message, each sender a WebSocket connection.
    pub fn is_ws(&self) -> bool {
        self.targets.first().is_some_and(|t| t.url.scheme.is_ws())
    }

    /// What one of the run's requests is: a `message` in a WebSocket
    /// run, else a `request` (a scenario's are its steps' requests).
    pub fn request_noun(&self) -> &'static str {
        match self.is_ws() {
            true => "message",
            false => "request",
        }
    }

    /// What `-c` counts: a scenario's virtual users, or connections.
    pub fn sender_noun(&self) -> &'static str {
        match self.scenario {
            Some(_) => "virtual user",
            None => "connection",
        }
    }

    /// What the run loaded, in a few words, for a table's column head or
    /// a listing: its one URL, `3 targets`, or `scenario FILE`. Never the
    /// first of several URLs alone: that would name a part for the whole.
    pub fn name(&self) -> String {
        match (&self.scenario, self.targets.as_slice()) {
            (Some(sc), _) => format!("scenario {}", sc.path),
            (None, []) => "no target".to_string(),
            (None, [one]) => one.url.to_string(),
            (None, many) => format!("{} targets", many.len()),
        }
    }

    /// A run of `targets` under `load` until `stop`, with the CLI's
    /// defaults everywhere else: round-robin targets, no warm-up, one
    /// worker thread per core ([`default_threads`]), keep-alive
    /// HTTP/1.1 with [`HttpOptions::default`]'s timeouts.
    pub fn new(targets: Vec<Target>, load: Load, stop: Stop) -> RunConfig {
        RunConfig {
            targets: targets.into(),
            order: Order::RoundRobin,
            think: None,
            load,
            stop,
            warmup: Duration::ZERO,
            threads: default_threads(),
            http: HttpOptions::default(),
            shard: None,
            run_id: None,
            start_at_unix_ns: None,
            send_window: SendWindow::Auto,
            arrivals: Arrivals::Uniform,
            abort_on: Vec::new(),
            scenario: None,
        }
    }

    /// The id all shards of this run share: `--run-id`, or else the
    /// configuration's hash and the start time (shards started with the
    /// same flags agree on it without talking to each other).
    pub fn run_id(&self) -> String {
        match (&self.run_id, self.start_at_unix_ns) {
            (Some(id), _) => id.clone(),
            (None, Some(at)) => format!("{}-{}", self.whole_run_hash(), at / 1_000_000_000),
            (None, None) => self.whole_run_hash(),
        }
    }

    /// The run's name in the live views (the Prometheus `run` label, the
    /// dashboard's events), unique per run: [`RunConfig::run_id`] where
    /// the user or the shards fixed it (`--run-id`, `--start-at`), else
    /// the configuration's hash and `started_unix_ms`, the moment the run
    /// was set up, so that two runs with the same flags are two series,
    /// not one whose counters go backwards.
    pub fn live_run_id(&self, started_unix_ms: u64) -> String {
        match (&self.run_id, self.start_at_unix_ns) {
            (None, None) => format!("{}-{started_unix_ms}", self.whole_run_hash()),
            _ => self.run_id(),
        }
    }

    /// The hash every shard of one run must agree on: the configuration
    /// without the shard ([`crate::shard::config_hash`]).
    pub fn whole_run_hash(&self) -> String {
        let whole = RunConfig {
            shard: None,
            run_id: None,
            ..self.clone()
        };
        let json = serde_json::to_vec(&whole).expect("a RunConfig always serialises");
        crate::shard::config_hash(&json)
    }

    /// The shard this process runs (the whole run when not sharded).
    pub fn shard_or_whole(&self) -> Shard {
        self.shard.unwrap_or(Shard::WHOLE)
    }

    /// Connections this process opens: its shard's share of the run's
    /// (connection `j` belongs to shard `j mod N`).
    pub fn shard_connections(&self) -> u32 {
        self.shard_or_whole()
            .items_of(u64::from(self.load.connections())) as u32
    }

    /// Checks what the types cannot: every library entry calls this, so a
    /// programmatic caller gets the same errors as the CLI.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.targets.is_empty() {
            return Err(ConfigError::NoTargets);
        }
        if !self.arrivals.is_uniform() && !matches!(self.load, Load::Rate { schedule: None, .. }) {
            return Err(ConfigError::PoissonNeedsConstantRate);
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
        for t in self.targets.iter().chain(&self.http.session.login) {
            t.check()?;
        }
        // HTTP/3 first: what it cannot work with, said as such (rather
        // than as, say, a Unix socket refusing https://).
        if self.http.http3 {
            if self.http.http2 {
                return Err(ConfigError::Http3WithHttp2);
            }
            if !self.http.proxy.is_off() {
                return Err(ConfigError::Http3WithProxy);
            }
            if self.http.unix_socket.is_some() {
                return Err(ConfigError::Http3WithUnixSocket);
            }
            if self.targets.iter().any(|t| t.url.scheme != Scheme::Https) {
                return Err(ConfigError::Http3NeedsHttps);
            }
        }
        if !self.http.proxy.is_off()
            && (self.http.http2 || self.http.follow > 0 || self.http.unix_socket.is_some())
        {
            return Err(ConfigError::ProxyWith);
        }
        self.validate_ws()?;
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
        if let Some(shard) = self.shard {
            if shard.count == 0 || shard.index >= shard.count {
                return Err(ConfigError::BadShard);
            }
            if self.load.connections() < shard.count {
                return Err(ConfigError::ShardWithoutConnections);
            }
            if let Some(n) = self.stop.requests {
                if self.load.rate().is_none() && n < u64::from(shard.count) {
                    return Err(ConfigError::ShardWithoutRequests);
                }
            }
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
        if self.http.streams > 1 && !self.http.multiplexed() {
            return Err(ConfigError::StreamsWithoutHttp2);
        }
        let streamed = &self.http.streamed;
        if streamed.hold {
            if self.load.rate().is_some() {
                return Err(ConfigError::HoldWithRate);
            }
            if self.stop.requests.is_some() {
                return Err(ConfigError::HoldWithRequests);
            }
            if self.stop.duration.is_none() {
                return Err(ConfigError::HoldWithoutDuration);
            }
            if !self.warmup.is_zero() {
                return Err(ConfigError::HoldWithWarmup);
            }
        }
        if let Some(event_time) = &streamed.event_time {
            if streamed.forced().is_none() && !streamed.hold {
                return Err(ConfigError::EventTimeWithoutStream);
            }
            match (streamed.forced(), event_time) {
                (Some(crate::config::stream::Framing::Chunks), _)
                | (
                    Some(crate::config::stream::Framing::Lines),
                    crate::config::stream::EventTime::Id,
                ) => return Err(ConfigError::EventTimeFraming),
                _ => {}
            }
        }
        // HTTP/3 without keep-alive is a QUIC connection per request (a
        // handshake each, which `--0rtt` measures); HTTP/2 has no such mode.
        if self.http.http2 && !self.http.keepalive {
            return Err(ConfigError::NoKeepaliveWithHttp2);
        }
        if self.http.http3 && !self.http.keepalive && self.http.streams > 1 {
            return Err(ConfigError::NoKeepaliveWithStreams);
        }
        if self.http.zero_rtt && !self.http.http3 {
            return Err(ConfigError::ZeroRttWithoutHttp3);
        }
        if self.http.zero_rtt && self.http.no_tls_resume {
            return Err(ConfigError::ZeroRttWithoutResume);
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
        if self.http.follow_any_host && self.http.multiplexed() {
            return Err(ConfigError::AnyHostWithHttp2);
        }
        if let Some(path) = &self.http.unix_socket {
            if path.is_empty() {
                return Err(ConfigError::EmptyUnixSocket);
            }
            if self.targets.iter().any(|t| t.url.scheme.is_tls()) {
                return Err(ConfigError::UnixSocketTls);
            }
            if self.http.follow_any_host {
                return Err(ConfigError::AnyHostWithUnixSocket);
            }
        }
        // The schedule numbers senders, and with HTTP/2 and HTTP/3 a
        // sender is a stream: it would schedule streams while saying
        // connections.
        if self.http.multiplexed()
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
        // A virtual user is a browser: its own connection (over HTTP/2
        // and HTTP/3 too), so users never share one as streams.
        if self.scenario.is_some() && self.http.streams > 1 {
            return Err(ConfigError::ScenarioWithStreams);
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

    /// Rate runs: the send window at the peak rate, where each worker
    /// thread's requests are `threads x shards / rate` apart (the width
    /// every request of a constant rate gets; the engine uses it only
    /// where the kernel times responses).
    pub fn peak_send_window(&self) -> Option<Duration> {
        let rate = self.load.rate()?;
        let apart = self.effective_threads() as f64 * f64::from(self.shard_or_whole().count) / rate;
        (apart.is_finite() && apart > 0.0 && apart < 1e9)
            .then(|| self.send_window.width(Duration::from_secs_f64(apart)))
    }

    /// Threads actually used: never more than connections.
    pub fn effective_threads(&self) -> usize {
        self.threads
            .clamp(1, self.shard_connections().max(1) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::url::Url;

    fn config() -> RunConfig {
        let url = Url::parse("http://127.0.0.1:1/").unwrap();
        RunConfig::new(vec![Target::get(url)], Load::closed(4), Stop::default())
    }

    // Issue 22 §5: two runs with the same flags shared one `run` label.
    #[test]
    fn live_run_ids_differ_per_run_unless_named() {
        let c = config();
        let (a, b) = (c.live_run_id(1_000), c.live_run_id(2_000));
        assert_ne!(a, b);
        assert!(a.starts_with(&c.whole_run_hash()), "{a}");
        let mut named = config();
        named.run_id = Some("nightly-42".into());
        assert_eq!(named.live_run_id(1_000), "nightly-42");
        assert_eq!(named.live_run_id(2_000), "nightly-42");
        // Shards of one run agree on it without talking to each other.
        let mut shard = config();
        shard.start_at_unix_ns = Some(1_795_000_000_000_000_000);
        assert_eq!(shard.live_run_id(1_000), shard.run_id());
        assert_eq!(shard.live_run_id(2_000), shard.run_id());
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
    fn the_send_window_holds_about_eight_requests_at_most_1ms() {
        let us = Duration::from_micros;
        let auto = SendWindow::Auto;
        assert_eq!(auto.width(us(50)), us(400));
        assert_eq!(auto.width(us(200)), us(1000));
        assert_eq!(auto.width(us(500)), us(1000));
        // Fewer than two requests in it: none.
        assert_eq!(auto.width(us(501)), Duration::ZERO);
        let set = SendWindow::Max(us(10_000));
        assert_eq!(set.width(us(50)), us(10_000));
        assert_eq!(set.width(us(5_001)), Duration::ZERO);
        assert_eq!(SendWindow::Max(Duration::ZERO).width(us(1)), Duration::ZERO);

        // At the peak rate, per worker thread and shard.
        let mut c = config();
        c.threads = 1;
        assert_eq!(c.peak_send_window(), None, "closed loop");
        c.load = Load::rate_of(20_000.0, 50);
        assert_eq!(c.peak_send_window(), Some(us(400)));
        c.threads = 2;
        assert_eq!(c.peak_send_window(), Some(us(800)));
        c.load = Load::rate_of(100.0, 50);
        assert_eq!(c.peak_send_window(), Some(Duration::ZERO));
    }

    /// A library run gets the CLI's threads, one per core, unless told.
    #[test]
    fn new_takes_one_thread_per_core() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(config().threads, cores);
        assert_eq!(default_threads(), cores);
    }

    #[test]
    fn validation_names_the_field() {
        let mut c = config();
        assert_eq!(c.validate(), Ok(()));
        c.load = Load::rate_of(0.0, 1);
        // A library user set a field, not a flag (the CLI says --rate).
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("`load`'s rate") && !e.contains("--"), "{e}");
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
    fn http3_refuses_what_quic_cannot_carry() {
        let https = |c: &mut RunConfig| {
            c.targets = vec![Target::get(Url::parse("https://127.0.0.1:1/").unwrap())].into();
        };
        let mut c = config();
        c.http.http3 = true;
        assert_eq!(c.validate(), Err(ConfigError::Http3NeedsHttps));
        https(&mut c);
        assert_eq!(c.validate(), Ok(()));
        // Streams per connection, as with HTTP/2.
        c.http.streams = 8;
        assert_eq!(c.validate(), Ok(()));
        c.http.http2 = true;
        assert_eq!(c.validate(), Err(ConfigError::Http3WithHttp2));
        c.http.http2 = false;
        c.http.proxy.https = Some(super::Proxy {
            host: "127.0.0.1".into(),
            port: 3128,
            authorization: None,
            authenticated: false,
        });
        assert_eq!(c.validate(), Err(ConfigError::Http3WithProxy));
        c.http.proxy = Default::default();
        c.http.unix_socket = Some("/run/app.sock".into());
        assert_eq!(c.validate(), Err(ConfigError::Http3WithUnixSocket));
        c.http.unix_socket = None;
        c.http.follow = 2;
        c.http.follow_any_host = true;
        assert_eq!(c.validate(), Err(ConfigError::AnyHostWithHttp2));
        c.http.follow_any_host = false;
        c.http.follow = 0;
        c.http.keepalive = false;
        assert_eq!(c.validate(), Err(ConfigError::NoKeepaliveWithStreams));
        // A connection per request: one stream each.
        c.http.streams = 1;
        assert_eq!(c.validate(), Ok(()));
        c.http.zero_rtt = true;
        assert_eq!(c.validate(), Ok(()));
        c.http.http3 = false;
        c.targets = config().targets;
        c.http.keepalive = true;
        assert_eq!(c.validate(), Err(ConfigError::ZeroRttWithoutHttp3));
        c.http.http3 = true;
        https(&mut c);
        // 0-RTT is a resumption: not with every handshake full.
        c.http.no_tls_resume = true;
        assert_eq!(c.validate(), Err(ConfigError::ZeroRttWithoutResume));
        c.http.no_tls_resume = false;
        assert_eq!(c.validate(), Ok(()));
        // Each message names fields, never flags.
        for e in [
            ConfigError::NoKeepaliveWithStreams,
            ConfigError::ZeroRttWithoutHttp3,
            ConfigError::ZeroRttWithoutResume,
            ConfigError::Http3WithHttp2,
            ConfigError::Http3NeedsHttps,
            ConfigError::Http3WithProxy,
            ConfigError::Http3WithUnixSocket,
        ] {
            let text = e.to_string();
            assert!(text.contains("`http.") && !text.contains("--"), "{text}");
        }
        // Other runs' configurations do not mention it.
        let json = serde_json::to_value(config()).unwrap();
        assert!(json["http"].get("http3").is_none(), "{json}");
        assert_eq!(config().http.protocol(), "HTTP/1.1");
        assert_eq!(c.http.protocol(), "HTTP/3");
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
