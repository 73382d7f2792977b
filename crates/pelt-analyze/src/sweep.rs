//! Capacity search (`pelt sweep`): which load to try next, whether a step
//! held, and the report of a finished search. Pure: the binary runs the
//! steps and feeds their summaries in.
//!
//! A rate search grows geometrically from a low rate (×2 until a step
//! fails, then ×1.25 from the last pass), bisects the bracket
//! [last pass, first fail] down to a tolerance, and confirms the answer
//! with one longer run: a confirmation that fails becomes the new first
//! fail and the bisection goes on below it. Each step is judged on its own
//! measured window (the engine discards its warm-up), never cumulatively.
//!
//! ```
//! use pelt_analyze::sweep::{Search, SearchPlan, Next, Outcome};
//!
//! // A server that holds anything up to 1,000 req/s.
//! let mut search = Search::new(SearchPlan::default());
//! let outcome = loop {
//!     match search.next() {
//!         Next::Step { rate, .. } => search.record(rate, rate <= 1000.0),
//!         Next::Done(outcome) => break outcome,
//!     }
//! };
//! let (pass, fail) = search.bracket();
//! assert_eq!(outcome, Outcome::Found);
//! assert!(pass.unwrap() <= 1000.0 && fail.unwrap() > 1000.0);
//! assert!(pass.unwrap() >= 950.0);
//! ```

use pelt_core::{Assertion, RunSummary, Warning};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How a rate search proceeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchPlan {
    /// The first rate tried, requests per second.
    pub start: f64,
    /// The highest rate tried.
    pub max: f64,
    /// Bisect until (first fail − last pass) / last pass is at most this.
    pub tolerance: f64,
}

impl Default for SearchPlan {
    fn default() -> SearchPlan {
        SearchPlan {
            start: 100.0,
            max: 100_000.0,
            tolerance: 0.05,
        }
    }
}

/// Growth while no step has failed.
pub const GROW: f64 = 2.0;
/// Growth from the last pass once a step has failed.
pub const NEAR: f64 = 1.25;
/// Confirmations that may fail before the search gives up on a stable
/// answer.
pub const MAX_CONFIRMS: u32 = 3;

/// What the search wants next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    /// Run a step at this rate; `confirm` asks for the longer run.
    Step {
        /// Requests per second.
        rate: f64,
        /// The confirmation of the answer.
        confirm: bool,
    },
    /// The search is over.
    Done(Outcome),
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The capacity was found and confirmed.
    Found,
    /// The highest rate allowed held: the capacity is at least that.
    AtMaxRate,
    /// The lowest rate failed: no capacity under the SLO.
    FailsAtStart,
    /// Confirmations kept failing below passes: the target is not stable
    /// enough for an answer at this tolerance.
    Unstable,
    /// The time budget ran out first.
    MaxTime,
    /// Ctrl-C.
    Interrupted,
    /// The client, not the server, could not keep up.
    Client,
    /// Closed-loop levels: the last level ran (or throughput stopped
    /// growing).
    Levels,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Grow,
    Near,
    Bisect,
    Confirm,
}

/// A rate search's state: feed it each step's verdict with
/// [`Search::record`], ask [`Search::next`] what to run.
#[derive(Debug, Clone)]
pub struct Search {
    plan: SearchPlan,
    phase: Phase,
    passes: Vec<f64>,
    first_fail: Option<f64>,
    failed_confirms: u32,
    done: Option<Outcome>,
}

impl Search {
    /// A search that has run nothing yet.
    pub fn new(plan: SearchPlan) -> Search {
        Search {
            plan,
            phase: Phase::Grow,
            passes: Vec::new(),
            first_fail: None,
            failed_confirms: 0,
            done: None,
        }
    }

    /// The highest rate that passed below the first fail, and the first
    /// (lowest) rate that failed above it.
    pub fn bracket(&self) -> (Option<f64>, Option<f64>) {
        (self.last_pass(), self.first_fail)
    }

    fn last_pass(&self) -> Option<f64> {
        self.passes
            .iter()
            .copied()
            .filter(|&r| self.first_fail.is_none_or(|f| r < f))
            .max_by(f64::total_cmp)
    }

    /// The rate to run next, or how the search ended.
    pub fn next(&self) -> Next {
        if let Some(outcome) = self.done {
            return Next::Done(outcome);
        }
        let step = |rate: f64| Next::Step {
            rate: round_rate(rate.min(self.plan.max)),
            confirm: false,
        };
        match (self.phase, self.last_pass(), self.first_fail) {
            (Phase::Grow, None, _) => step(self.plan.start),
            (Phase::Grow, Some(p), _) => step(p * GROW),
            (Phase::Near, Some(p), _) => step(p * NEAR),
            (Phase::Bisect, Some(p), Some(f)) => step((p + f) / 2.0),
            (Phase::Confirm, Some(p), _) => Next::Step {
                rate: p,
                confirm: true,
            },
            // A phase past Grow always has a pass and a fail.
            _ => Next::Done(Outcome::FailsAtStart),
        }
    }

    /// Records the verdict of the step [`Search::next`] asked for.
    pub fn record(&mut self, rate: f64, passed: bool) {
        if self.done.is_some() {
            return;
        }
        let confirming = self.phase == Phase::Confirm;
        if passed {
            if confirming {
                self.done = Some(Outcome::Found);
                return;
            }
            self.passes.push(rate);
            if rate >= self.plan.max {
                self.done = Some(Outcome::AtMaxRate);
                return;
            }
        } else {
            self.first_fail = Some(self.first_fail.map_or(rate, |f| f.min(rate)));
            if confirming {
                self.failed_confirms += 1;
                // The confirmed rate failed: it is no pass any more.
                self.passes.retain(|&r| r < rate);
                if self.failed_confirms >= MAX_CONFIRMS {
                    self.done = Some(Outcome::Unstable);
                    return;
                }
            }
            if self.last_pass().is_none() {
                self.done = Some(if confirming {
                    Outcome::Unstable
                } else {
                    Outcome::FailsAtStart
                });
                return;
            }
        }
        self.phase = self.phase_after();
    }

    fn phase_after(&self) -> Phase {
        let (Some(p), Some(f)) = (self.last_pass(), self.first_fail) else {
            return Phase::Grow;
        };
        if (f - p) / p <= self.plan.tolerance || round_rate((p + f) / 2.0) >= f {
            return Phase::Confirm;
        }
        match self.phase {
            // One failure seen: approach it in smaller steps, while a
            // ×1.25 step still lands below the failure.
            Phase::Grow | Phase::Near if round_rate(p * NEAR) < f => Phase::Near,
            _ => Phase::Bisect,
        }
    }

    /// Ends the search early (time budget, Ctrl-C, the client).
    pub fn stop(&mut self, outcome: Outcome) {
        self.done.get_or_insert(outcome);
    }
}

/// The margin within which two capacities count as the same: a sweep
/// brackets its answer to 5 % by default, so smaller changes are below
/// what it resolves.
pub const MARGIN_CAPACITY: f64 = 0.05;

/// Capacity as a compared metric: a ratio, higher is better.
pub fn capacity_metric() -> crate::Metric {
    crate::Metric::new(
        "capacity",
        crate::Scale::Ratio,
        crate::Direction::HigherIsBetter,
        MARGIN_CAPACITY,
    )
}

/// Rates are whole requests per second (at least 1): readable step names,
/// and no bisection below what a person would tell apart.
pub fn round_rate(rate: f64) -> f64 {
    rate.round().max(1.0)
}

/// The closed-loop levels from `lo` to `hi` connections: doubling, with
/// `hi` itself last.
pub fn connection_levels(lo: u32, hi: u32) -> Vec<u32> {
    let mut levels = Vec::new();
    let mut c = lo.max(1);
    while c < hi {
        levels.push(c);
        c = c.saturating_mul(2);
    }
    levels.push(hi.max(lo.max(1)));
    levels
}

/// Throughput within this share of the best counts as "no longer
/// growing".
pub const PLATEAU: f64 = 0.05;

/// The closed-loop level where throughput stops growing: the fewest
/// connections reaching within [`PLATEAU`] of the best throughput seen.
pub fn saturation(levels: &[(u32, f64)]) -> Option<u32> {
    let best = levels.iter().map(|&(_, t)| t).fold(0.0, f64::max);
    levels
        .iter()
        .find(|&&(_, t)| best > 0.0 && t >= best * (1.0 - PLATEAU))
        .map(|&(c, _)| c)
}

/// Whether the closed-loop sweep can stop: the last two levels added less
/// than [`PLATEAU`] over the best before them.
pub fn plateaued(levels: &[(u32, f64)]) -> bool {
    if levels.len() < 3 {
        return false;
    }
    let (before, last_two) = levels.split_at(levels.len() - 2);
    let best_before = before.iter().map(|&(_, t)| t).fold(0.0, f64::max);
    last_two
        .iter()
        .all(|&(_, t)| t < best_before * (1.0 + PLATEAU))
}

/// What a step must show to pass, beyond the SLO.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRules {
    /// The SLO's terms (`--slo 'p99 < 50ms, errors < 0.1%'`).
    pub slo: Vec<Assertion>,
    /// The share of the offered rate that must go out (0.99).
    pub min_achieved: f64,
    /// `--max-send-lag`: send lag p99 above this, with connections free,
    /// is the client's failure, nanoseconds. Without it the client fails
    /// a step when its lateness broke a latency term of the SLO (the term
    /// holds on service time and breaks on response time), or, with no
    /// latency term, above [`DEFAULT_SEND_LAG_NS`].
    pub max_send_lag_ns: Option<u64>,
}

/// The send-lag bound of an SLO without latency terms.
pub const DEFAULT_SEND_LAG_NS: u64 = 10_000_000;

/// Parses an SLO: assertions separated by commas, in `--assert` syntax.
pub fn parse_slo(text: &str) -> Result<Vec<Assertion>, pelt_core::check::AssertionError> {
    text.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::parse)
        .collect()
}

fn is_latency(a: &Assertion) -> bool {
    use pelt_core::check::Measure;
    matches!(
        a.measure,
        Measure::Percentile(_) | Measure::Mean | Measure::Max
    )
}

/// Whether a latency term holds on `h` (service or response time).
fn holds_on(a: &Assertion, h: &hdrhistogram::Histogram<u64>) -> bool {
    use pelt_core::check::{Measure, Op};
    if h.is_empty() {
        return false;
    }
    let v = match a.measure {
        Measure::Percentile(p) => h.value_at_percentile(p) as f64,
        Measure::Mean => h.mean(),
        Measure::Max => h.max() as f64,
        _ => return true,
    };
    match a.op {
        Op::Lt => v < a.threshold,
        Op::Le => v <= a.threshold,
        Op::Gt => v > a.threshold,
        Op::Ge => v >= a.threshold,
        Op::Eq => v == a.threshold,
    }
}

/// Why a step failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Failure {
    /// An SLO term did not hold.
    Slo {
        /// The term as written.
        term: String,
        /// What was measured.
        actual: String,
    },
    /// Less than the offered rate went out.
    Shortfall {
        /// Requests per second offered.
        offered: f64,
        /// Requests per second sent.
        achieved: f64,
    },
    /// Latency was still rising at the step's end: a queue growing.
    Climbing {
        /// Median latency over the step's first seconds, nanoseconds.
        first_ns: u64,
        /// Over its last seconds.
        last_ns: u64,
    },
    /// Requests went out late while connections were free: the client.
    SendLag {
        /// 99th percentile send lag, nanoseconds.
        p99_ns: u64,
        /// The bound it broke, nanoseconds; `None` when it broke the SLO
        /// instead (a latency term that service time alone met).
        bound_ns: Option<u64>,
    },
    /// A client-side warning (client_busy, read_lag, client_resources).
    Client {
        /// The warning's text.
        warning: String,
    },
    /// No response at all.
    NoResponse,
    /// The step was cut short by Ctrl-C.
    Interrupted,
}

impl Failure {
    /// Whether this says the client, not the server, was the limit: a
    /// search cannot go on past it.
    pub fn is_client(&self) -> bool {
        matches!(self, Failure::Client { .. } | Failure::SendLag { .. })
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |ns: u64| pelt_core::duration::human_ns(ns);
        match self {
            Failure::Slo { term, actual } => write!(f, "SLO '{term}' broken (was {actual})"),
            Failure::Shortfall { offered, achieved } => write!(
                f,
                "sent {achieved:.0} req/s of {offered:.0} offered ({:.1} %; a step needs 99 %)",
                achieved / offered * 100.0
            ),
            Failure::Climbing { first_ns, last_ns } => write!(
                f,
                "latency still climbing: p50 {} in the step's first seconds, {} in its last (a queue growing)",
                ms(*first_ns),
                ms(*last_ns)
            ),
            Failure::SendLag {
                p99_ns,
                bound_ns: Some(bound),
            } => write!(
                f,
                "the client sent late with connections free: send lag p99 {} (bound {})",
                ms(*p99_ns),
                ms(*bound)
            ),
            Failure::SendLag {
                p99_ns,
                bound_ns: None,
            } => write!(
                f,
                "the client sent late with connections free (send lag p99 {}) and that broke the SLO: the server's own service time met it",
                ms(*p99_ns)
            ),
            Failure::Client { warning } => write!(f, "the client: {warning}"),
            Failure::NoResponse => write!(f, "no request got a response"),
            Failure::Interrupted => write!(f, "interrupted by Ctrl-C"),
        }
    }
}

/// Judges one step's run: the failures, none when it passed.
pub fn judge(s: &RunSummary, rules: &StepRules) -> Vec<Failure> {
    let mut failures = Vec::new();
    if s.interrupted {
        failures.push(Failure::Interrupted);
    }
    if s.responses() == 0 {
        failures.push(Failure::NoResponse);
    }
    for w in &s.warnings {
        if w.is_client_side() {
            failures.push(Failure::Client {
                warning: w.to_string(),
            });
        }
    }
    for a in &rules.slo {
        let c = a.check(s);
        if !c.ok {
            failures.push(Failure::Slo {
                term: c.assertion,
                actual: c.actual,
            });
        }
    }
    if let Some(offered) = s.offered_rate() {
        let achieved = s.sent_rate();
        if achieved < offered * rules.min_achieved && !s.interrupted {
            failures.push(Failure::Shortfall { offered, achieved });
        }
        let lag = &s.total.send_lag;
        if !lag.is_empty() && connections_were_free(s, offered) {
            let p99 = lag.value_at_quantile(0.99);
            let latency_terms: Vec<&Assertion> =
                rules.slo.iter().filter(|a| is_latency(a)).collect();
            let late = match rules.max_send_lag_ns {
                Some(bound) => (p99 > bound).then_some(Some(bound)),
                None if latency_terms.is_empty() => {
                    (p99 > DEFAULT_SEND_LAG_NS).then_some(Some(DEFAULT_SEND_LAG_NS))
                }
                // Late sends matter when they, not the server, broke the
                // SLO: on a VM with millisecond pauses a send lag over
                // any fixed bound is common and harmless to the verdict.
                None => latency_terms
                    .iter()
                    .any(|a| !holds_on(a, &s.total.response) && holds_on(a, &s.total.service))
                    .then_some(None),
            };
            if let Some(bound_ns) = late {
                failures.push(Failure::SendLag {
                    p99_ns: p99,
                    bound_ns,
                });
            }
        }
    }
    if let Some((first_ns, last_ns)) = climbing(s) {
        failures.push(Failure::Climbing { first_ns, last_ns });
    }
    failures
}

/// Little's law: the connections the server kept busy are the rate times
/// its mean service time. Well under the pool, a late send was not
/// waiting for a connection: the client itself was late.
fn connections_were_free(s: &RunSummary, offered: f64) -> bool {
    let service = &s.total.service;
    if service.is_empty() {
        return false;
    }
    let busy = offered * service.mean() / 1e9;
    busy < f64::from(s.config.load.connections()) * 0.5
}

/// A step's latency is still climbing when the median of its last third
/// of seconds is over 1.5× (and 1 ms above) that of its first third and
/// the per-second medians rise with a Kendall τ of at least 0.6: a queue
/// growing through the step, which a longer step would have shown as a
/// failure. Needs 4 whole seconds.
fn climbing(s: &RunSummary) -> Option<(u64, u64)> {
    let elapsed = s.duration.as_secs_f64();
    let p50s: Vec<u64> = s
        .timeline
        .iter()
        .filter(|row| {
            let (from, to) = row.span(elapsed);
            to - from >= 0.5 && row.requests > 0
        })
        .map(|row| row.p50_ns)
        .collect();
    if p50s.len() < 4 {
        return None;
    }
    let third = p50s.len() / 3;
    let median = |xs: &[u64]| {
        let mut v = xs.to_vec();
        v.sort_unstable();
        v[v.len() / 2]
    };
    let first = median(&p50s[..third.max(1)]);
    let last = median(&p50s[p50s.len() - third.max(1)..]);
    let rising = last as f64 > first as f64 * 1.5 && last > first + 1_000_000;
    (rising && kendall_tau(&p50s) >= 0.6).then_some((first, last))
}

/// Kendall's τ of a series against time: +1 for always rising.
pub fn kendall_tau(xs: &[u64]) -> f64 {
    let n = xs.len();
    if n < 2 {
        return 0.0;
    }
    let mut s = 0i64;
    for i in 0..n {
        for j in i + 1..n {
            s += (xs[j] > xs[i]) as i64 - (xs[j] < xs[i]) as i64;
        }
    }
    s as f64 / (n * (n - 1) / 2) as f64
}

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
    /// Share of requests that failed (errors and non-2xx/3xx), 0 to 1.
    pub errors: f64,
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
                h.value_at_quantile(p)
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
            errors: 1.0 - s.success_ratio(),
            send_lag_p99_ns: if lag.is_empty() {
                0
            } else {
                lag.value_at_quantile(0.99)
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
                " (held {}, failed {})",
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
                    Outcome::Interrupted => "interrupted by Ctrl-C",
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

/// The first client-side failure among a step's, if any.
pub fn client_failure(failures: &[Failure]) -> Option<&Failure> {
    failures.iter().find(|f| f.is_client())
}

/// Whether any warning of the run says the client limited it.
pub fn client_limited(warnings: &[Warning]) -> bool {
    warnings.iter().any(Warning::is_client_side)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(plan: SearchPlan, holds: impl Fn(f64) -> bool) -> (Outcome, Search, Vec<f64>) {
        let mut search = Search::new(plan);
        let mut tried = Vec::new();
        for _ in 0..100 {
            match search.next() {
                Next::Step { rate, .. } => {
                    tried.push(rate);
                    search.record(rate, holds(rate));
                }
                Next::Done(o) => return (o, search, tried),
            }
        }
        panic!("no end after 100 steps: {tried:?}");
    }

    #[test]
    fn finds_capacities_within_the_tolerance() {
        for truth in [150.0, 999.0, 1_000.0, 3_333.0, 20_000.0, 77_777.0] {
            let (o, s, tried) = run(SearchPlan::default(), |r| r <= truth);
            let (p, f) = s.bracket();
            let (p, f) = (p.unwrap(), f.unwrap());
            assert_eq!(o, Outcome::Found, "{truth}: {tried:?}");
            assert!(p <= truth && truth < f, "{truth}: [{p}, {f}]");
            assert!((f - p) / p <= 0.05 + 1e-9, "{truth}: [{p}, {f}] {tried:?}");
            // Geometric growth, then ×1.25, then bisection: few steps.
            assert!(
                tried.len() <= 18,
                "{truth}: {} steps {tried:?}",
                tried.len()
            );
        }
    }

    #[test]
    fn grows_by_two_then_by_a_quarter() {
        let (_, _, tried) = run(SearchPlan::default(), |r| r <= 1_000.0);
        assert_eq!(&tried[..5], &[100.0, 200.0, 400.0, 800.0, 1_600.0]);
        assert_eq!(tried[5], 1_000.0);
        assert_eq!(tried[6], 1_250.0);
    }

    #[test]
    fn a_failed_confirmation_moves_the_answer_down() {
        // Steps up to 1,000 pass, but a long run at 960+ fails.
        let mut search = Search::new(SearchPlan::default());
        let mut confirmed = Vec::new();
        let outcome = loop {
            match search.next() {
                Next::Step { rate, confirm } => {
                    let ok = if confirm {
                        confirmed.push(rate);
                        rate < 960.0
                    } else {
                        rate <= 1_000.0
                    };
                    search.record(rate, ok);
                }
                Next::Done(o) => break o,
            }
        };
        assert_eq!(outcome, Outcome::Found, "{confirmed:?}");
        let (p, f) = search.bracket();
        assert!(p.unwrap() < 960.0 && f.unwrap() <= 1_000.0, "{p:?} {f:?}");
        assert!(confirmed.len() >= 2);
    }

    #[test]
    fn ends_at_the_edges() {
        let (o, _, tried) = run(SearchPlan::default(), |_| false);
        assert_eq!((o, tried), (Outcome::FailsAtStart, vec![100.0]));
        let plan = SearchPlan {
            max: 1_000.0,
            ..SearchPlan::default()
        };
        let (o, s, tried) = run(plan, |_| true);
        assert_eq!(o, Outcome::AtMaxRate);
        assert_eq!(tried.last(), Some(&1_000.0));
        assert_eq!(s.bracket(), (Some(1_000.0), None));
        // Flaky confirmations give up rather than loop.
        let mut search = Search::new(SearchPlan::default());
        let outcome = loop {
            match search.next() {
                Next::Step { rate, confirm } => search.record(rate, !confirm && rate <= 500.0),
                Next::Done(o) => break o,
            }
        };
        assert_eq!(outcome, Outcome::Unstable);
    }

    #[test]
    fn levels_double_and_plateaus_are_seen() {
        assert_eq!(
            connection_levels(1, 200),
            vec![1, 2, 4, 8, 16, 32, 64, 128, 200]
        );
        assert_eq!(connection_levels(8, 8), vec![8]);
        let growing = [(1, 100.0), (2, 190.0), (4, 370.0)];
        assert!(!plateaued(&growing));
        let flat = [(1, 100.0), (2, 190.0), (4, 196.0), (8, 193.0)];
        assert!(plateaued(&flat));
        assert_eq!(saturation(&flat), Some(2));
    }

    #[test]
    fn slo_terms_parse_and_name_the_bad_one() {
        let slo = parse_slo("p99 < 50ms, errors < 0.1%").unwrap();
        assert_eq!(slo.len(), 2);
        let e = parse_slo("p99 < 50ms, errors < 5").unwrap_err().to_string();
        assert!(e.contains("'errors < 5'"), "{e}");
    }

    #[test]
    fn kendall_tau_sees_a_rise() {
        assert_eq!(kendall_tau(&[1, 2, 3, 4]), 1.0);
        assert_eq!(kendall_tau(&[4, 3, 2, 1]), -1.0);
        assert!(kendall_tau(&[5, 3, 5, 3]).abs() < 0.5);
    }
}
