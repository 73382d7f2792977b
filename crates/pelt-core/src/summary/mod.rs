//! What a finished run produced: the merged recorder, the per-second
//! timeline, the configuration and where it ran. Reports read only this.

use crate::config::{Load, RunConfig};
use crate::duration::human_ns;
use crate::error::ErrorKind;
use crate::header::{Environment, RunFooter, RunHeader, StopCause, ThreadLoad};
use crate::recorder::Recorder;
use crate::shard::LATE_START_NS;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub mod quantile_ci;
pub mod stationarity;
mod warning;
mod window;

pub use warning::*;
pub use window::*;

/// A worker thread that wanted a CPU for at least this share of the run
/// was, or was close to, the bottleneck: an event loop with work queued
/// never idles, and one with none idles most of the time.
pub const CLIENT_BUSY: f64 = 0.9;

/// A worker thread that waited for a CPU (ready to run while other work
/// held its core) at least this share of the run was held back by its
/// machine, however little it ran: the requests it had in hand waited
/// with it, so the run could have gone up to 1 / (1 − share) as fast, a
/// third faster at 25 %. A thread with its core to itself waits next to
/// none of the time. (Seen: a worker on a CPU 12 % of a run and waiting
/// for one 67 %, wanting a CPU 79 % in all, under [`CLIENT_BUSY`], while
/// it set the run's pace: issue 44.)
pub const CLIENT_STARVED: f64 = 0.25;

/// Why a worker thread may have set a run's pace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientBound {
    /// It waited for a CPU at least [`CLIENT_STARVED`] of the run: other
    /// work on its cores held it back.
    Starved,
    /// It wanted a CPU (on one, or waiting for one) at least
    /// [`CLIENT_BUSY`] of the run: its own work filled its core.
    Busy,
}

impl ClientBound {
    /// Whether `t` may have set the run's pace, and why: starved before
    /// busy, as the wait is what to fix first (more threads do not help
    /// a thread that cannot get a CPU). Shares compare in 0.01 % steps,
    /// as they are kept: 0.6 + 0.3 is 0.8999999999999999 in f64, and 90 %
    /// is "90 % or more".
    pub fn of(t: &ThreadLoad) -> Option<ClientBound> {
        let at_least = |share: f64, bound: f64| (share * 1e4).round() >= bound * 1e4;
        if at_least(t.waiting, CLIENT_STARVED) {
            Some(ClientBound::Starved)
        } else if at_least(t.demand(), CLIENT_BUSY) {
            Some(ClientBound::Busy)
        } else {
            None
        }
    }
}

/// Shortest run (warm-up included) whose thread load can give the
/// client-busy warning. A run of a few milliseconds is mostly the thread's
/// own start (connecting, the first burst of requests): its shares are
/// often over 90 % though the client set no pace (`-n 1` was flagged more
/// often than not).
pub const CLIENT_BUSY_MIN_RUN: Duration = Duration::from_secs(1);

/// A rate run whose send lag p99 is above this (10 ms) warns that
/// requests waited in the client.
pub const SEND_LAG_WARN_NS: u64 = 10_000_000;
/// A rate run that sent less than this share of its offered rate gets the
/// `rate_shortfall` warning.
pub const SHORTFALL_BELOW: f64 = 0.99;

/// How long requests in flight may finish after sending stops (capped by
/// `--timeout`); anything still pending is then recorded as unfinished.
pub const GRACE: Duration = Duration::from_secs(2);

/// One second of the run (intervals are aligned to wall-clock seconds,
/// so the first and last may be partial).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IntervalRow {
    /// Start of the interval, seconds since the Unix epoch.
    pub unix_second: u64,
    /// Seconds from the start of measurement to the interval's start
    /// (negative for the partial first second; reports show
    /// [`IntervalRow::span`] instead).
    pub offset_s: f64,
    /// Requests recorded in the interval.
    pub requests: u64,
    /// Requests without error and with a 2xx or 3xx status.
    pub successes: u64,
    /// Requests that failed: a transport failure or a status outside
    /// 2xx/3xx (`requests - successes`; see [`crate::failure`]).
    #[serde(alias = "errors")]
    pub failed: u64,
    /// Bytes received.
    pub bytes_in: u64,
    /// Bytes sent.
    #[serde(default)]
    pub bytes_out: u64,
    /// Median of the headline latency ([`Headline`]: response time in
    /// rate mode, service time in a closed loop) of the requests completed
    /// in the interval, nanoseconds.
    pub p50_ns: u64,
    /// 90th percentile of the headline latency, nanoseconds.
    pub p90_ns: u64,
    /// 99th percentile of the headline latency, nanoseconds.
    pub p99_ns: u64,
    /// Slowest headline latency, nanoseconds.
    pub max_ns: u64,
    /// Rate runs: requests the schedule offered in the interval (the part
    /// of it inside the measured duration), to set beside `requests`.
    #[serde(default)]
    pub offered: Option<f64>,
    /// Closed loops with a `-c` schedule: connections the schedule had
    /// active at the interval's middle.
    #[serde(default)]
    pub active_connections: Option<u32>,
    /// Runs that met a streamed response: events that arrived in the
    /// interval (see [`crate::stream`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
    /// Of those, events that came after a stall (a gap over
    /// `--stall-gap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls: Option<u64>,
}

/// A timeline row covering less of the run than this (the first or last
/// wall-clock second, cut by the run's start or end) gets no rate: a few
/// requests over a few milliseconds would read as a spike or a dip that
/// never happened. Its counts are still reported.
pub const MIN_RATE_SPAN_S: f64 = 0.1;

impl IntervalRow {
    /// The part of this wall-clock second inside the run, in seconds from
    /// the start of measurement, given the run's `elapsed_s`: `[0, 0.47]`
    /// for a first second that began 0.53 s before measurement. Never
    /// negative.
    pub fn span(&self, elapsed_s: f64) -> (f64, f64) {
        let end = elapsed_s.max(0.0);
        (
            self.offset_s.clamp(0.0, end),
            (self.offset_s + 1.0).clamp(0.0, end),
        )
    }

    /// Requests completed per second over the part of the second the run
    /// covered, so partial first and last seconds are not drawn as dips;
    /// `None` when that part is shorter than [`MIN_RATE_SPAN_S`].
    pub fn rate(&self, elapsed_s: f64) -> Option<f64> {
        let (from, to) = self.span(elapsed_s);
        (to - from >= MIN_RATE_SPAN_S).then(|| self.requests as f64 / (to - from))
    }

    /// Summarises one interval's recorder, its latencies of `headline`.
    pub fn from_recorder(
        unix_second: u64,
        offset_s: f64,
        r: &Recorder,
        headline: Headline,
    ) -> IntervalRow {
        let h = headline.of(r);
        IntervalRow {
            unix_second,
            offset_s,
            requests: r.requests,
            successes: r.successes,
            failed: r.failed(),
            bytes_in: r.bytes_in,
            bytes_out: r.bytes_out,
            p50_ns: quantile(h, 0.5),
            p90_ns: quantile(h, 0.9),
            p99_ns: quantile(h, 0.99),
            max_ns: if h.is_empty() { 0 } else { h.max() },
            offered: None,
            active_connections: None,
            events: r.streamed.as_ref().map(|s| s.events),
            stalls: r.streamed.as_ref().map(|s| s.stalls),
        }
    }
}

fn quantile(h: &Histogram<u64>, q: f64) -> u64 {
    if h.is_empty() {
        0
    } else {
        crate::rank::quantile(h, q)
    }
}
/// The headline latency, defined once. In rate mode it is response
/// time: from each request's planned start, so time spent waiting for a
/// connection or for the client counts, as it would for a user. A closed
/// loop has no plan to measure from: its "intended" start is when a
/// connection got round to the request, so response time there adds the
/// connect and the client's own turnaround to what the server did, and the
/// headline is service time (from the first byte written). Every view (text,
/// markdown, HTML, CSV, JSON's `headline`, the TUI, `--assert pNN`, a
/// comparison's default `--metric`) reads it from here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Headline {
    /// Done minus the planned start (rate mode).
    ResponseTime,
    /// Done minus the first byte written (a closed loop).
    ServiceTime,
}

impl Headline {
    /// Rate mode's headline, or a closed loop's.
    pub fn for_rate_mode(rate_mode: bool) -> Headline {
        match rate_mode {
            true => Headline::ResponseTime,
            false => Headline::ServiceTime,
        }
    }

    /// The JSON key: `response_time` or `service_time`.
    pub fn key(self) -> &'static str {
        match self {
            Headline::ResponseTime => "response_time",
            Headline::ServiceTime => "service_time",
        }
    }

    /// For people: `response time` or `service time`.
    pub fn name(self) -> &'static str {
        match self {
            Headline::ResponseTime => "response time",
            Headline::ServiceTime => "service time",
        }
    }

    /// This latency's histogram in `r`.
    pub fn of(self, r: &Recorder) -> &Histogram<u64> {
        match self {
            Headline::ResponseTime => &r.response,
            Headline::ServiceTime => &r.service,
        }
    }
}

/// The percentiles every report shows.
pub const PERCENTILES: [f64; 7] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99];

/// A histogram reduced to the numbers reports print (nanoseconds).
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyStats {
    /// Values recorded.
    pub count: u64,
    /// Smallest value.
    pub min: u64,
    /// Mean value.
    pub mean: f64,
    /// Standard deviation.
    pub stdev: f64,
    /// Largest value.
    pub max: u64,
    /// `(percentile, value)` for each percentile asked for: those of
    /// [`PERCENTILES`] from [`LatencyStats::of`].
    pub percentiles: Vec<(f64, u64)>,
}

impl LatencyStats {
    /// The numbers of `h` at [`PERCENTILES`]; all zero for an empty
    /// histogram.
    pub fn of(h: &Histogram<u64>) -> LatencyStats {
        LatencyStats::at_percentiles(h, &PERCENTILES)
    }

    /// The numbers of `h` at `percentiles` (each 0 to 100, like 98.0),
    /// by nearest rank as every report reads them
    /// ([`crate::rank::percentile`]); all zero for an empty histogram.
    pub fn at_percentiles(h: &Histogram<u64>, percentiles: &[f64]) -> LatencyStats {
        if h.is_empty() {
            return LatencyStats {
                count: 0,
                min: 0,
                mean: 0.0,
                stdev: 0.0,
                max: 0,
                percentiles: percentiles.iter().map(|&p| (p, 0)).collect(),
            };
        }
        LatencyStats {
            count: h.len(),
            min: h.min(),
            mean: h.mean(),
            stdev: h.stdev(),
            max: h.max(),
            percentiles: percentiles
                .iter()
                .map(|&p| (p, crate::rank::percentile(h, p)))
                .collect(),
        }
    }

    /// The value at percentile `p`, if it is one these stats hold (one
    /// of [`PERCENTILES`] for [`LatencyStats::of`]); `None` for any other,
    /// which only the histogram can give: `LatencyStats::at_percentiles(h,
    /// &[p])`, or [`crate::rank::percentile`]`(h, p)`.
    pub fn at(&self, p: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|(q, _)| (*q - p).abs() < 1e-9)
            .map(|&(_, v)| v)
    }
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// The configuration the run was made with.
    pub config: RunConfig,
    /// Where it ran.
    pub env: Environment,
    /// All measured requests (warm-up excluded).
    pub total: Recorder,
    /// One row per second, in order.
    pub timeline: Vec<IntervalRow>,
    /// From the start of measurement until sending stopped.
    pub duration: Duration,
    /// From the start of measurement until the last response or give-up.
    pub elapsed: Duration,
    /// From the start of measurement until the last request was sent, and
    /// at least `duration`: requests due before the end of a rate run but
    /// held back for want of a connection still go out late, in the wait
    /// for stragglers, so a client that fell behind sends for longer than
    /// its schedule.
    pub sending: Duration,
    /// Requests sent during warm-up (not in any statistic).
    pub warmup_requests: u64,
    /// Whether Ctrl-C, a signal or an `--abort-on` rule stopped the run
    /// before its stop condition.
    pub interrupted: bool,
    /// Which of them, when known.
    pub stopped_by: Option<crate::header::StopCause>,
    /// False when rebuilt from a results file that has no footer.
    pub complete: bool,
    /// The part of the run the figures cover, when restricted.
    pub window: Option<Window>,
    /// How busy each worker thread was (see [`ThreadLoad`]); empty when
    /// not known.
    pub worker_load: Vec<ThreadLoad>,
    /// The server's `Server` header (ab's "Server Software"), when a
    /// response carried one.
    pub server_software: Option<String>,
    /// What the user should know about the run, worked out by [`RunSummary::diagnose`].
    pub warnings: Vec<Warning>,
}

impl RunSummary {
    /// Requests recorded per second of the planned duration: in rate mode
    /// the rate *planned* (sent or not), elsewhere the rate sent. See
    /// [`RunSummary::sent_rate`] for what went out.
    pub fn request_rate(&self) -> f64 {
        per_second(self.total.requests, self.duration)
    }

    /// Requests the run accounted for: every request a rate schedule
    /// planned within the measured duration, whether or not it was sent;
    /// in a closed loop, every request started.
    pub fn planned(&self) -> u64 {
        self.total.requests
    }

    /// Requests whose first byte was written to a connection. The rest of
    /// [`RunSummary::planned`] never left the client: a failed connect, or
    /// (rate mode) no free connection before the run ended.
    pub fn sent(&self) -> u64 {
        self.total.send_lag.len()
    }

    /// Requests that ended, with a response or a failure, before the run
    /// did: all but the unfinished.
    pub fn completed(&self) -> u64 {
        self.total.requests - self.total.errors[ErrorKind::Unfinished.index()]
    }

    /// Responses received, whatever their status, complete or cut short
    /// (a status line counts: the server answered).
    pub fn responses(&self) -> u64 {
        self.total.statuses.iter().sum::<u64>() + self.total.cut_short
    }

    /// For a run whose work was done and none of it succeeded: one line
    /// saying so (`all 40 requests failed (status_4xx 40)`). The work is
    /// what the run loads: flows in a scenario (started, and not one
    /// completed), requests otherwise (made, and not one a success: the
    /// one meaning of failed). `None` when anything succeeded. The same
    /// rule for plain runs and scenarios: the binary exits 3 on it.
    pub fn nothing_succeeded(&self) -> Option<String> {
        let (n, ok, failures, unit) = match self.flows_started().filter(|&n| n > 0) {
            Some(n) => {
                let sc = self.config.scenario.as_ref()?;
                let mut ok = 0;
                let mut failures = Vec::new();
                for t in sc.flows().filter_map(|i| self.total.targets.get(i)) {
                    ok += t.successes();
                    failures.extend(t.failures());
                }
                (n, ok, failures, "flows")
            }
            None => (
                self.total.requests,
                self.total.successes,
                self.total.failures(),
                "requests",
            ),
        };
        if n == 0 || ok > 0 {
            return None;
        }
        let mut by_kind: Vec<(crate::FailureKind, u64)> = Vec::new();
        for (k, c) in failures {
            match by_kind.iter_mut().find(|(x, _)| *x == k) {
                Some((_, m)) => *m += c,
                None => by_kind.push((k, c)),
            }
        }
        by_kind.sort_by_key(|b| std::cmp::Reverse(b.1));
        let kinds: Vec<String> = by_kind
            .iter()
            .map(|(k, c)| format!("{} {c}", k.name()))
            .collect();
        Some(format!("all {n} {unit} failed ({})", kinds.join(", ")))
    }

    /// For a run in which requests were made but not one got a response:
    /// one line saying what happened, from the failures (the most common
    /// kind and an example of it). `None` when anything answered.
    pub fn no_response(&self) -> Option<String> {
        if self.total.requests == 0 || self.responses() > 0 {
            return None;
        }
        let n = self.total.requests;
        let (kind, count) = ErrorKind::ALL
            .iter()
            .map(|&k| (k, self.total.errors[k.index()]))
            .max_by_key(|&(_, c)| c)
            .filter(|&(_, c)| c > 0)?;
        let example = self
            .total
            .examples
            .iter()
            .find(|e| e.kind == kind)
            .map(|e| e.message.as_str())
            .unwrap_or("");
        // Examples start with the address: "127.0.0.1:1: Connection refused".
        let addr = example.split(": ").next().unwrap_or("the target");
        let all = if count == n {
            format!("all {n} requests")
        } else {
            format!("{count} of {n} requests")
        };
        Some(match kind {
            ErrorKind::Connect if example.contains("refused") => {
                format!("nothing listens on {addr}: is the server up? ({all} were refused a connection)")
            }
            ErrorKind::Connect => format!("could not connect to {addr} ({all}): {example}"),
            ErrorKind::Tls => format!("no TLS connection ({all}): {example}"),
            ErrorKind::Timeout => format!(
                "no response within --timeout {} ({all} timed out): is the server stuck, or the timeout too short?",
                human_ns(self.config.http.timeout.as_nanos() as u64)
            ),
            ErrorKind::Unfinished => format!(
                "no response before the run ended ({all} still pending): is the server stuck? Run longer to wait for it"
            ),
            ErrorKind::Extract | ErrorKind::Check => {
                format!("{} ({all}), e.g. {example}", kind.describe())
            }
            _ => format!("no response: {} ({all}), e.g. {example}", kind.describe()),
        })
    }

    /// Requests sent per second, over the time it took to send them (at
    /// least the planned duration): the rate the server was actually
    /// offered, to set beside [`RunSummary::offered_rate`].
    pub fn sent_rate(&self) -> f64 {
        per_second(self.sent(), self.sending.max(self.duration))
    }

    /// `--scenario`: flows started (completed, failed, or cut off by the
    /// run's end), summed over the flow rows; `None` for other runs.
    pub fn flows_started(&self) -> Option<u64> {
        let sc = self.config.scenario.as_ref()?;
        Some(
            sc.flows()
                .filter_map(|i| self.total.targets.get(i))
                .map(|t| t.requests())
                .sum(),
        )
    }

    /// `--scenario`: flows started per second, over the same span as
    /// [`RunSummary::sent_rate`]: what a scenario's offered rate (flows
    /// per second) is set beside.
    pub fn flow_rate(&self) -> Option<f64> {
        let n = self.flows_started()?;
        Some(per_second(n, self.sending.max(self.duration)))
    }

    /// Whether sending went on after the planned duration (requests the
    /// client could not send in time went out late, in the wait for
    /// stragglers), by more than a millisecond.
    pub fn sent_late(&self) -> bool {
        self.sending > self.duration + Duration::from_millis(1)
    }

    /// The wait after sending stopped for responses still due.
    pub fn straggler_wait(&self) -> Duration {
        self.elapsed.saturating_sub(self.sending.max(self.duration))
    }

    /// Successful responses per second, including the wait for the last
    /// ones (vegeta's "throughput").
    pub fn throughput(&self) -> f64 {
        per_second(self.total.successes, self.elapsed)
    }

    /// Share of requests that succeeded (2xx/3xx, no error).
    pub fn success_ratio(&self) -> f64 {
        if self.total.requests == 0 {
            0.0
        } else {
            self.total.successes as f64 / self.total.requests as f64
        }
    }

    /// Rate runs: the mean rate the schedule offered over the measured
    /// duration (the constant rate when there is no schedule), to compare
    /// with [`RunSummary::request_rate`].
    /// One shard of a sharded run (`--shard I/N`) offered its share, 1/N.
    pub fn offered_rate(&self) -> Option<f64> {
        let share = 1.0 / f64::from(self.config.shard_or_whole().count);
        if let Some((from, to)) = self.covered() {
            // `--window 2s..5s` of a staged run: what the schedule offered
            // over those seconds, not over the run's first three.
            self.config.load.rate()?;
            let at = |t: f64| {
                Duration::try_from_secs_f64(t.max(0.0))
                    .ok()
                    .and_then(|t| self.config.load.offered_count(t))
            };
            let span = to - from;
            return match (at(from), at(to)) {
                (Some(a), Some(b)) if span > 0.0 && span.is_finite() => {
                    Some((b - a) / span * share)
                }
                _ => Some(0.0),
            };
        }
        self.config
            .load
            .offered_rate(self.duration)
            .map(|r| r * share)
    }

    /// The part of the run `row` covers, in seconds from the start of
    /// measurement (see [`IntervalRow::span`]); within `--window`'s bounds
    /// when there is one (whose seconds lie after its start, not from 0).
    pub fn row_span(&self, row: &IntervalRow) -> (f64, f64) {
        match self.covered() {
            Some((from, to)) => (
                row.offset_s.clamp(from, to),
                (row.offset_s + 1.0).clamp(from, to),
            ),
            None => row.span(self.elapsed.as_secs_f64()),
        }
    }

    /// With `--window`: the part of the run its seconds cover, in seconds
    /// from the start of measurement. The seconds are consecutive, so it
    /// runs from the first one's start (or the run's) for the window's
    /// `elapsed`.
    pub fn covered(&self) -> Option<(f64, f64)> {
        self.window?;
        let from = self.timeline.first()?.offset_s.max(0.0);
        Some((from, from + self.elapsed.as_secs_f64()))
    }

    /// Requests per second over the part of the run `row` covers; `None`
    /// when that part is shorter than [`MIN_RATE_SPAN_S`].
    pub fn row_rate(&self, row: &IntervalRow) -> Option<f64> {
        let (from, to) = self.row_span(row);
        (to - from >= MIN_RATE_SPAN_S).then(|| row.requests as f64 / (to - from))
    }

    /// Whether the headline latency is response time (rate mode) or
    /// service time as a closed loop sees it.
    pub fn is_rate_mode(&self) -> bool {
        self.config.load.rate().is_some()
    }

    /// The run's headline latency: the one every view, `--assert pNN`
    /// and a comparison's default `--metric` read (see [`Headline`]).
    pub fn headline(&self) -> Headline {
        Headline::for_rate_mode(self.is_rate_mode())
    }

    /// Rate runs: how far the requests were the independent, on-schedule
    /// trials the run's figures assume (see [`crate::independence`]);
    /// `None` for a closed loop.
    pub fn independence(&self) -> Option<Independence> {
        self.is_rate_mode().then(|| Independence {
            lag1: self.total.lag1.correlation(),
            pairs: self.total.lag1.pairs,
            schedule: self.total.sends.fit(self.sent()),
        })
    }

    /// When `ns` (run time) was, in seconds from the first measured
    /// request's planned start.
    pub fn since_first_planned(&self, ns: crate::Nanos) -> f64 {
        let from = match self.total.first_intended {
            crate::Nanos::MAX => 0,
            t => t,
        };
        ns.saturating_sub(from) as f64 / 1e9
    }

    /// The worker thread that wanted a CPU the most: the one that would
    /// have limited the run. `None` when not measured.
    pub fn busiest_thread(&self) -> Option<ThreadLoad> {
        self.worker_load
            .iter()
            .copied()
            .max_by(|a, b| a.demand().total_cmp(&b.demand()))
    }

    /// The worker thread that may have set the run's pace (see
    /// [`ClientBound`]), the one that wanted a CPU the most if several.
    pub fn client_bound_thread(&self) -> Option<ThreadLoad> {
        self.worker_load
            .iter()
            .copied()
            .filter(|t| ClientBound::of(t).is_some())
            .max_by(|a, b| a.demand().total_cmp(&b.demand()))
    }

    /// Works out the warnings for this run. Called once by the engine; kept
    /// with the run so saved results explain themselves.
    pub fn diagnose(&self) -> Vec<Warning> {
        let mut w = Vec::new();
        if !self.complete {
            w.push(Warning::Incomplete);
        } else if self.interrupted {
            w.push(match &self.stopped_by {
                Some(StopCause::Abort { rule, at_s }) => Warning::Aborted {
                    rule: rule.clone(),
                    at_s: *at_s,
                },
                Some(StopCause::Signal { signal }) if signal != "SIGINT" => Warning::Terminated {
                    signal: signal.clone(),
                },
                _ => Warning::Interrupted,
            });
        } else if let Some(StopCause::FeedRanOut { feed, rows, at_s }) = &self.stopped_by {
            w.push(Warning::FeedRanOut {
                feed: feed.clone(),
                rows: *rows,
                at_s: *at_s,
            });
        }
        // Nothing to connect to leaves requests unsent and the workers
        // busy failing fast: the client's shortfall then says nothing
        // about the client, and "raise -c" would send the user the wrong
        // way (the report's failures and `no_response` say what happened).
        let unreachable = self.mostly_unreachable();
        if let Some(offered) = self.offered_rate() {
            // What went out, not what was planned: requests never sent are
            // recorded (as unfinished), and must not count as sent.
            let achieved = self.sent_rate();
            let count_limited = self.config.stop.requests.is_some();
            if !self.interrupted
                && self.complete
                && self.window.is_none()
                && !count_limited
                && !unreachable
                && achieved < offered * SHORTFALL_BELOW
            {
                w.push(Warning::RateShortfall { offered, achieved });
            }
            let lag = &self.total.send_lag;
            if !lag.is_empty() && crate::rank::quantile(lag, 0.99) > SEND_LAG_WARN_NS {
                // A connection opened per request puts its connect into
                // the lag: then no pool ran short, and "raise -c" is wrong.
                let t = &self.total;
                let per_request = t.requests > 0 && t.connections * 2 >= t.requests;
                w.push(Warning::SendLag {
                    p99_ns: crate::rank::quantile(lag, 0.99),
                    connections: self.config.load.connections(),
                    connect_p99_ns: per_request.then(|| crate::rank::quantile(&t.connect, 0.99)),
                });
            }
            // Issue 23 §5: are the requests the independent, on-schedule
            // trials the figures assume?
            if let Some(found) = self.independence() {
                // A ramp or stages change the load, and with it the
                // latency, by design: consecutive requests then correlate
                // through the trend (0.83 was seen on a 500..2,500 req/s
                // ramp against a healthy server), which says nothing
                // about a queue. Judged at a constant rate only.
                let constant = matches!(self.config.load, Load::Rate { schedule: None, .. });
                if let Some(r) = found
                    .lag1
                    .filter(|&r| constant && r >= crate::independence::AUTOCORRELATION_WARN)
                {
                    w.push(Warning::Autocorrelation {
                        r,
                        pairs: found.pairs,
                    });
                }
                if let Some(fit) = found.schedule.filter(|f| f.failed()) {
                    w.push(Warning::OffSchedule {
                        d: fit.d,
                        critical: fit.critical,
                        behind: fit.behind,
                        at_s: self.since_first_planned(fit.at_ns),
                        sent: fit.sent,
                    });
                }
            }
        }
        if let Some(mean) = self
            .total
            .read_lag_ns_sum
            .checked_div(self.total.kernel_timed)
        {
            // Beyond what a send window's batching accounts for (a read
            // waits at most one window, 1 ms by default).
            if mean > READ_LAG_WARN_NS {
                w.push(Warning::ReadLag {
                    mean_ns: mean,
                    max_ns: self.total.read_lag_ns_max,
                });
            }
        }
        if let Some((resource, e)) = self.total.examples.iter().find_map(|e| {
            (e.kind == ErrorKind::Connect)
                .then(|| LocalResource::of(&e.message).map(|r| (r, e)))
                .flatten()
        }) {
            w.push(Warning::ClientResources {
                resource,
                example: e.message.clone(),
            });
        }
        if let Some(st) = self
            .total
            .streamed
            .as_deref()
            .filter(|st| st.mostly_bursts())
        {
            w.push(Warning::BufferedStream {
                bursts: st.bursts,
                streams: st.burstable(),
            });
        }
        let (segments, retransmitted) = (self.total.tcp_segs_out, self.total.tcp_retrans);
        if retransmitted >= RETRANSMIT_MIN
            && retransmitted as f64 >= segments as f64 * RETRANSMIT_WARN
        {
            w.push(Warning::Retransmissions {
                retransmitted,
                segments,
                // HTTP/3 runs count QUIC's packets in the same fields.
                quic: self.config.http.http3,
            });
        }
        if let Some(link) = &self.env.link {
            let elapsed = self.elapsed.as_secs_f64();
            // Whole seconds: a partial one's bytes are not its rate.
            let peak = self
                .timeline
                .iter()
                .filter(|row| {
                    let (from, to) = row.span(elapsed);
                    to - from >= 0.99
                })
                .map(|row| row.bytes_in + row.bytes_out)
                .max()
                .unwrap_or(0);
            if link_saturated(peak, link.speed_mbps) {
                w.push(Warning::LinkSaturated {
                    interface: link.interface.clone(),
                    speed_mbps: link.speed_mbps,
                    peak_bytes_per_s: peak,
                });
            }
        }
        if self.total.lost_on_reuse > 0 {
            w.push(Warning::KeepAliveRace {
                lost: self.total.lost_on_reuse,
            });
        }
        // Stationarity (issue 23 §5): only for a whole run, as a window
        // is a part the user chose.
        if self.window.is_none() {
            let elapsed = self.elapsed.as_secs_f64();
            if let Some(d) = stationarity::drift(&self.timeline, elapsed) {
                w.push(Warning::Drift {
                    from_ns: d.from_ns,
                    to_ns: d.to_ns,
                    z: d.z,
                    seconds: d.seconds,
                });
            } else if let Some(s) = stationarity::stepped(&self.timeline, elapsed) {
                // A step Mann-Kendall did not see (issue 35).
                w.push(Warning::Step {
                    at_s: s.after_seconds as u64,
                    before_ns: s.before_ns,
                    after_ns: s.after_ns,
                    p: s.p,
                });
            } else if let Some((seconds, start_ns, rest_ns)) =
                stationarity::warmup(&self.timeline, elapsed)
            {
                w.push(Warning::Warmup {
                    seconds,
                    start_ns,
                    rest_ns,
                });
            }
        }
        let unfinished = self.total.errors[ErrorKind::Unfinished.index()];
        if unfinished > 0 {
            w.push(Warning::Unfinished { count: unfinished });
        }
        if self.total.requests > 0 {
            // The one meaning of failed (crate::failure): a 503 counts.
            let ratio = self.total.failed_share();
            if ratio >= 0.05 {
                let share = |n: u64| n as f64 / self.total.requests as f64;
                let untimed = ErrorKind::ALL
                    .iter()
                    .filter(|k| !k.is_timed())
                    .map(|k| self.total.errors[k.index()])
                    .sum();
                w.push(Warning::Errors {
                    ratio,
                    untimed: share(untimed),
                    length: share(self.total.errors[ErrorKind::Length.index()]),
                    top: self
                        .total
                        .failures()
                        .first()
                        .map(|&(k, n)| (k.name().to_string(), share(n))),
                });
            }
            if self.config.http.follow == 0 {
                let redirects: Vec<(u16, u64)> = self
                    .total
                    .status_counts()
                    .filter(|(code, _)| (300..400).contains(code))
                    .collect();
                let all: u64 = redirects.iter().map(|&(_, n)| n).sum();
                if all * 2 > self.total.requests {
                    let status = redirects
                        .iter()
                        .max_by_key(|&&(_, n)| n)
                        .map_or(302, |&(c, _)| c);
                    w.push(Warning::Redirects {
                        share: share(all, self.total.requests),
                        status,
                    });
                }
            }
        }
        let long_enough = self.config.warmup + self.elapsed >= CLIENT_BUSY_MIN_RUN;
        if let Some(t) = self
            .client_bound_thread()
            .filter(|_| long_enough && !unreachable)
        {
            w.push(Warning::ClientBusy {
                on_cpu: t.on_cpu,
                waiting: t.waiting,
                threads: self.worker_load.len(),
            });
        }
        if self.env.debug_build {
            w.push(Warning::DebugBuild);
        }
        w
    }
}

fn share(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 / of as f64
    }
}

impl RunSummary {
    /// Whether nearly every request failed to connect (at least
    /// [`UNREACHABLE_SHARE`]): nothing listening, a wrong port, a
    /// firewall.
    pub fn mostly_unreachable(&self) -> bool {
        let connect = self.total.errors[ErrorKind::Connect.index()];
        self.total.requests > 0 && connect as f64 >= self.total.requests as f64 * UNREACHABLE_SHARE
    }
}

/// The share of requests refused a connection beyond which a run is about
/// the target being unreachable, not about the client's pace.
pub const UNREACHABLE_SHARE: f64 = 0.9;

fn per_second(n: u64, d: Duration) -> f64 {
    let s = d.as_secs_f64();
    if s > 0.0 {
        n as f64 / s
    } else {
        0.0
    }
}

/// What [`RunSummary::independence`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Independence {
    /// The lag-1 correlation of consecutive response times (log scale);
    /// `None` with too few pairs or no spread.
    pub lag1: Option<f64>,
    /// The consecutive pairs it is over.
    pub pairs: u64,
    /// Kolmogorov–Smirnov between the planned and actual send instants;
    /// `None` with too few sends.
    pub schedule: Option<crate::independence::ScheduleFit>,
}

/// Folds a run's seconds, in order, into a [`RunSummary`].
///
/// The engine builds its live summary with this, and `pelt report`
/// rebuilds a saved one with it, so a saved run reports exactly as it did
/// live.
#[derive(Debug)]
pub struct SummaryBuilder {
    header: RunHeader,
    window: Option<Window>,
    total: Recorder,
    timeline: Vec<IntervalRow>,
}

impl SummaryBuilder {
    /// A builder for the run described by `header`; with a `window`, only the seconds inside it count.
    pub fn new(header: RunHeader, window: Option<Window>) -> SummaryBuilder {
        SummaryBuilder {
            header,
            window,
            total: Recorder::new(),
            timeline: Vec::new(),
        }
    }

    /// The header of the run being built.
    pub fn header(&self) -> &RunHeader {
        &self.header
    }

    /// Seconds from the start of measurement to the start of `unix_second`.
    pub fn offset_of(&self, unix_second: u64) -> f64 {
        (unix_second as f64 * 1e9 - self.header.measure_start_unix_ns as f64) / 1e9
    }

    /// Adds one second of the run; returns its row, or `None` if the
    /// window leaves it out.
    pub fn add(&mut self, unix_second: u64, rec: &Recorder) -> Option<IntervalRow> {
        let offset_s = self.offset_of(unix_second);
        if self.window.is_some_and(|w| !w.contains(offset_s)) {
            return None;
        }
        let headline = Headline::for_rate_mode(self.header.config.load.rate().is_some());
        let mut row = IntervalRow::from_recorder(unix_second, offset_s, rec, headline);
        self.plan_row(&mut row);
        self.total.merge(rec);
        self.timeline.push(row);
        Some(row)
    }

    /// Fills in what the schedule planned for `row`'s second: requests
    /// offered (rate runs) or connections active (a `-c` schedule).
    fn plan_row(&self, row: &mut IntervalRow) {
        let config = &self.header.config;
        let end = config
            .effective_stop()
            .duration
            .map_or(f64::INFINITY, |d| d.as_secs_f64());
        let from = row.offset_s.clamp(0.0, end);
        let to = (row.offset_s + 1.0).clamp(0.0, end);
        let count = |t: f64| {
            // A crafted results file can put `t` beyond any Duration.
            let t = std::time::Duration::try_from_secs_f64(t).ok()?;
            config.load.offered_count(t)
        };
        if let (Some(a), Some(b)) = (count(from), count(to)) {
            // One shard offered its share of the whole run's.
            row.offered = Some((b - a) / f64::from(config.shard_or_whole().count));
        }
        if let (crate::config::Load::Closed { .. }, Some(s)) =
            (&config.load, config.load.schedule())
        {
            row.active_connections = Some(s.level(row.offset_s + 0.5).ceil() as u32);
        }
    }

    /// Everything added so far.
    pub fn total(&self) -> &Recorder {
        &self.total
    }

    /// The summary. `footer` is `None` for a run that was killed.
    pub fn finish(self, footer: Option<&RunFooter>) -> RunSummary {
        let measured_end_ns = self
            .total
            .last_done
            .saturating_sub(self.header.measure_from_ns);
        let (duration, elapsed) = match footer {
            Some(f) => (f.duration_ns, f.elapsed_ns),
            None => (measured_end_ns, measured_end_ns),
        };
        let sending = self
            .total
            .last_sent
            .saturating_sub(self.header.measure_from_ns)
            .max(duration)
            .min(elapsed.max(duration));
        let (duration, elapsed, sending) = match self.window {
            None => (duration, elapsed, sending),
            Some(_) => {
                // Each included second covers its share of the run.
                let end = elapsed as f64 / 1e9;
                let covered: f64 = self
                    .timeline
                    .iter()
                    .map(|r| ((r.offset_s + 1.0).min(end) - r.offset_s.max(0.0)).max(0.0))
                    .sum();
                let ns = (covered * 1e9) as u64;
                (ns.min(duration), ns, ns.min(duration))
            }
        };
        let late_shard = self.header.shard.as_ref().map(|i| (i.shard, i.late_ns));
        let late_start = self.header.late_start_ns;
        let mut summary = RunSummary {
            config: self.header.config,
            env: self.header.env,
            total: self.total,
            timeline: self.timeline,
            duration: Duration::from_nanos(duration),
            elapsed: Duration::from_nanos(elapsed),
            sending: Duration::from_nanos(sending),
            warmup_requests: footer.map_or(0, |f| f.warmup_requests),
            interrupted: footer.is_none_or(|f| f.interrupted),
            stopped_by: footer.and_then(|f| f.stopped_by.clone()),
            complete: footer.is_some(),
            window: self.window,
            worker_load: footer.map_or_else(Vec::new, |f| f.worker_load.clone()),
            server_software: footer.and_then(|f| f.server_software.clone()),
            warnings: Vec::new(),
        };
        summary.warnings = summary.diagnose();
        if let Some((shard, late_ns)) = late_shard.filter(|&(_, l)| l > LATE_START_NS) {
            // One shard's own report (live, or its file alone): a shard
            // that came up after --start-at sent what it missed at once.
            explain_late_start(&mut summary.warnings, late_ns);
            summary.warnings.push(Warning::LateShard { shard, late_ns });
        } else if late_start > LATE_START_NS {
            // A whole run late against its --start-at sent its backlog at
            // once, as a late shard does (issue 35 §1: the warnings blamed
            // the connections, "raise -c").
            explain_late_start(&mut summary.warnings, late_start);
            summary.warnings.push(Warning::LateStart {
                late_ns: late_start,
            });
        }
        summary
    }
}

/// Drops the send-lag warning that a shard's late start explains: the
/// requests due before it came up went out at once, late by at most the
/// delay, so "raise -c" would be the wrong advice. Send lag beyond the
/// delay (plus the usual allowance) has another cause and keeps its
/// warning.
pub fn explain_late_start(warnings: &mut Vec<Warning>, late_ns: u64) {
    // The backlog it leaves peaks by the time the shard is up (and one
    // send grid slot for the slot's end).
    let late_s = (late_ns + crate::independence::GRID_NS) as f64 / 1e9;
    warnings.retain(|w| {
        !matches!(w, Warning::SendLag { p99_ns, .. } if *p99_ns <= late_ns.saturating_add(SEND_LAG_WARN_NS))
            && !matches!(w, Warning::OffSchedule { behind, at_s, .. } if *behind > 0 && *at_s <= late_s)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rate run's summary: `requests` sent 20 ms late each, of which
    /// `opened` opened a connection (2 ms to connect).
    fn late_rate_run(requests: u64, opened: u64) -> RunSummary {
        let mut rec = crate::Recorder::new();
        rec.requests = requests;
        rec.successes = requests;
        rec.connections = opened;
        rec.reused = requests - opened;
        rec.send_lag.record_n(20_000_000, requests).unwrap();
        rec.response.record_n(21_000_000, requests).unwrap();
        rec.service.record_n(1_000_000, requests).unwrap();
        rec.connect.record_n(2_000_000, opened.max(1)).unwrap();
        let mut header = crate::results::testing::header();
        header.config.load = crate::Load::rate_of(100.0, 100);
        let mut b = SummaryBuilder::new(header, None);
        b.add(1_795_000_000, &rec);
        b.finish(None)
    }

    /// Issue 35 §4: a rate run that opened a connection per request
    /// (`--no-keepalive`, or through a proxy) sent late by its connects,
    /// and the warning blamed "all 100 connections busy", advising -c.
    #[test]
    fn send_lag_from_a_connect_per_request_blames_no_pool() {
        let lag = |s: &RunSummary| {
            s.warnings
                .iter()
                .find(|w| matches!(w, Warning::SendLag { .. }))
                .expect("a send-lag warning")
                .to_string()
        };
        let per_request = lag(&late_rate_run(1_000, 1_000));
        assert!(!per_request.contains("busy"), "{per_request}");
        assert!(!per_request.contains("raise -c"), "{per_request}");
        assert!(per_request.contains("connect p99 2"), "{per_request}");
        // Kept alive, the lag was a wait for the pool (or the CPU).
        let pooled = lag(&late_rate_run(1_000, 100));
        assert!(pooled.contains("all 100 connections"), "{pooled}");
    }

    /// Issue 35 §6: `at(98.0)` answered 0 for a percentile the stats do
    /// not hold, a value no histogram gave. Now it says it has none, and
    /// the stats asked for it hold it, by the reports' rule.
    #[test]
    fn a_percentile_not_held_is_none_not_zero() {
        // The type the API hands out, by pelt-core's own name for it.
        let mut h: crate::Histogram<u64> = crate::histogram::new_histogram();
        for ms in 1..=100u64 {
            h.record(ms * 1_000_000).unwrap();
        }
        let stats = LatencyStats::of(&h);
        assert_eq!(stats.at(98.0), None);
        assert_eq!(stats.at(99.0), Some(crate::rank::percentile(&h, 99.0)));
        let p98 = LatencyStats::at_percentiles(&h, &[98.0]).at(98.0).unwrap();
        assert_eq!(p98, h.highest_equivalent(98_000_000));
        assert_eq!(p98, crate::rank::percentile(&h, 98.0));
        let empty = LatencyStats::at_percentiles(&crate::histogram::new_histogram(), &[98.0]);
        assert_eq!(
            empty.at(98.0),
            Some(0),
            "an empty histogram's zeros are its own"
        );
    }
}
