//! A finished sweep's steps and report data (the renderers are
//! pelt-report's).

use super::*;
use pelt_core::RunSummary;
use serde::{Deserialize, Serialize};

/// What kind of load a sweep varied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Open-loop rates (`--rate` steps).
    Rate,
    /// Closed-loop connection counts (`-c 1..200`).
    Connections,
}

/// One step of a sweep, as reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// 1-based, in the order run.
    pub index: usize,
    /// Rate mode: requests per second offered.
    pub offered: Option<f64>,
    /// Closed loop: connections.
    pub connections: Option<u32>,
    /// Whether this was the confirmation run.
    pub confirm: bool,
    /// Measured seconds.
    pub duration_s: f64,
    /// Requests per second sent.
    pub sent_rate: f64,
    /// Successful responses per second.
    pub throughput: f64,
    /// Latency percentiles (response time in rate mode), nanoseconds.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// Slowest.
    pub max_ns: u64,
    /// Share of requests that failed (no response, or a status outside
    /// 2xx/3xx), 0 to 1. (`errors` in pelt.sweep/1.)
    #[serde(alias = "errors")]
    pub failed: f64,
    /// 99th percentile send lag, nanoseconds.
    pub send_lag_p99_ns: u64,
    /// No failures.
    pub passed: bool,
    /// Why it failed.
    pub failures: Vec<Failure>,
    /// Its results file, relative to the sweep's folder.
    pub file: Option<String>,
}

impl Step {
    /// The step's figures from its run's summary.
    pub fn of(index: usize, s: &RunSummary, failures: Vec<Failure>, confirm: bool) -> Step {
        let h = &s.total.response;
        let q = |p: f64| {
            if h.is_empty() {
                0
            } else {
                pelt_core::rank::quantile(h, p)
            }
        };
        let lag = &s.total.send_lag;
        Step {
            index,
            offered: s.offered_rate().map(round_rate),
            connections: (!s.is_rate_mode()).then(|| s.config.load.connections()),
            confirm,
            duration_s: s.duration.as_secs_f64(),
            sent_rate: s.sent_rate(),
            throughput: s.throughput(),
            p50_ns: q(0.5),
            p90_ns: q(0.9),
            p99_ns: q(0.99),
            max_ns: if h.is_empty() { 0 } else { h.max() },
            failed: s.total.failed_share(),
            send_lag_p99_ns: if lag.is_empty() {
                0
            } else {
                pelt_core::rank::quantile(lag, 0.99)
            },
            passed: failures.is_empty(),
            failures,
            file: None,
        }
    }

    /// The load level, for people: "2,000 req/s" or "64 connections".
    pub fn level(&self) -> String {
        match (self.offered, self.connections) {
            (Some(r), _) => format!("{} req/s", thousands(r)),
            (None, Some(c)) => format!("{c} connections"),
            (None, None) => "?".into(),
        }
    }
}

/// `12,345`.
pub fn thousands(x: f64) -> String {
    let digits = format!("{:.0}", x.max(0.0));
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A finished (or stopped) sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    /// The target, secrets replaced.
    pub target: String,
    /// Rates or connections.
    pub mode: Mode,
    /// The SLO's terms as written.
    pub slo: Vec<String>,
    /// How it ended.
    pub outcome: Outcome,
    /// Rate mode: the highest rate that held (confirmed when `outcome` is
    /// `found`); closed loop: the best throughput of a level that held.
    pub capacity: Option<f64>,
    /// The highest passing level below the first fail.
    pub last_pass: Option<f64>,
    /// The lowest failing level.
    pub first_fail: Option<f64>,
    /// Why the first failing step failed.
    pub first_fail_reasons: Vec<Failure>,
    /// Where latency turns up: the highest-throughput passing step whose
    /// p99 is at most twice the lightest step's (rate mode), or the level
    /// where throughput stops growing (closed loop), as an index into
    /// `steps`.
    pub knee: Option<usize>,
    /// The idle latency the cool-downs wait for, nanoseconds.
    pub idle_ns: Option<u64>,
    /// Seconds the sweep took.
    pub elapsed_s: f64,
    /// Every step, in the order run.
    pub steps: Vec<Step>,
}

impl SweepReport {
    /// Fills in the knee from the steps.
    pub fn find_knee(&mut self) {
        self.knee = match self.mode {
            Mode::Rate => {
                let base = self
                    .steps
                    .iter()
                    .filter(|s| s.passed)
                    .min_by(|a, b| a.throughput.total_cmp(&b.throughput))
                    .map(|s| s.p99_ns.max(1));
                base.and_then(|base| {
                    self.steps
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| s.passed && s.p99_ns <= base * 2)
                        .max_by(|a, b| a.1.throughput.total_cmp(&b.1.throughput))
                        .map(|(i, _)| i)
                })
            }
            Mode::Connections => {
                let levels: Vec<(u32, f64)> = self
                    .steps
                    .iter()
                    .filter_map(|s| s.connections.map(|c| (c, s.throughput)))
                    .collect();
                saturation(&levels)
                    .and_then(|c| self.steps.iter().position(|s| s.connections == Some(c)))
            }
        };
    }

    /// One line: the answer.
    pub fn headline(&self) -> String {
        let slo = if self.slo.is_empty() {
            String::new()
        } else {
            format!(" under '{}'", self.slo.join(", "))
        };
        let bracket = match (self.last_pass, self.first_fail) {
            (Some(p), Some(f)) => format!(
                // "failed" is the failed requests' word; a level that broke
                // the SLO is over it.
                " (held {}, over the SLO at {})",
                self.level_name(p),
                self.level_name(f)
            ),
            _ => String::new(),
        };
        match (self.outcome, self.capacity) {
            (Outcome::Found, Some(c)) => {
                format!("capacity {} req/s{slo}{bracket}", thousands(c))
            }
            (Outcome::AtMaxRate, Some(c)) => format!(
                "capacity at least {} req/s{slo}: the highest rate allowed held (raise --max-rate)",
                thousands(c)
            ),
            (Outcome::FailsAtStart, _) => format!(
                "the target fails{slo} at the lowest {}: {}",
                self.first_fail.map_or("level".into(), |f| self.level_name(f)),
                self.reasons()
            ),
            (Outcome::Client, _) => format!(
                "the client, not the server, set the limit at {}: {}; no capacity can be given beyond {} \
                 (use more threads with -t, a bigger machine, or shards)",
                self.first_fail.map_or("?".into(), |f| self.level_name(f)),
                self.reasons(),
                self.last_pass
                    .map_or("the last pass".into(), |p| self.level_name(p))
            ),
            (Outcome::Levels, Some(c)) => {
                let knee = self
                    .knee
                    .and_then(|k| self.steps.get(k))
                    .and_then(|s| s.connections)
                    .map(|c| format!("; throughput stops growing at {c} connections"))
                    .unwrap_or_default();
                format!("best throughput {} req/s{slo}{knee}", thousands(c))
            }
            (outcome, _) => {
                let why = match outcome {
                    Outcome::MaxTime => "the time budget (--max-time) ran out",
                    Outcome::Interrupted => "interrupted (Ctrl-C, SIGTERM or SIGHUP)",
                    Outcome::Unstable => "confirmation runs kept failing below passing steps",
                    _ => "stopped",
                };
                match (self.last_pass, self.first_fail) {
                    (Some(p), Some(f)) => format!(
                        "{why}: capacity between {} and {}{slo}",
                        self.level_name(p),
                        self.level_name(f)
                    ),
                    (Some(p), None) => {
                        format!("{why}: capacity at least {}{slo}", self.level_name(p))
                    }
                    _ => format!("{why} before any step held{slo}"),
                }
            }
        }
    }

    fn level_name(&self, x: f64) -> String {
        match self.mode {
            Mode::Rate => format!("{} req/s", thousands(x)),
            Mode::Connections => format!("{x:.0} connections"),
        }
    }

    fn reasons(&self) -> String {
        let r: Vec<String> = self
            .first_fail_reasons
            .iter()
            .map(ToString::to_string)
            .collect();
        if r.is_empty() {
            "no reason recorded".into()
        } else {
            r.join("; ")
        }
    }
}
