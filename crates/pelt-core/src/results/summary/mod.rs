//! What a finished run produced: the merged recorder, the per-second
//! timeline, the configuration and where it ran. Reports read only this.

use crate::config::{Load, RunConfig};
use crate::duration::human_ns;
use crate::error_kind::ErrorKind;
use crate::header::{Environment, RunFooter, RunHeader, StopCause, ThreadLoad};
use crate::recorder::Recorder;
use crate::shard::LATE_START_NS;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

mod builder;
mod diagnose;
mod latency;
pub mod quantile_ci;
mod row;
pub mod stationarity;
mod warning;
mod window;

pub use builder::*;
pub use diagnose::*;
pub use latency::*;
pub use row::*;
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
}

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
