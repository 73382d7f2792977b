//! Whether one step of a sweep held: its SLO, the rate it sent, a trend
//! test over its seconds, and the client's health.

use pelt_core::{Assertion, RunSummary, Warning};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a step must show to pass, beyond the SLO.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRules {
    /// The SLO's terms (`--slo 'p99 < 50ms, failed < 0.1%'`).
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
    pelt_core::check::parse_terms(text)
}

/// A term on the run's headline latency: the one whose breaking on
/// response time while it holds on service time blames the client.
fn is_latency(a: &Assertion) -> bool {
    use pelt_core::check::{Latency, Measure};
    a.target.is_none()
        && matches!(a.latency, Latency::Headline | Latency::Response)
        && matches!(
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
        Measure::Percentile(p) => pelt_core::rank::percentile(h, p) as f64,
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
            Failure::Interrupted => write!(f, "interrupted (Ctrl-C, SIGTERM or SIGHUP)"),
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
            let p99 = pelt_core::rank::quantile(lag, 0.99);
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
    let s = pelt_core::summary::stationarity::kendall_s(xs);
    s as f64 / (n * (n - 1) / 2) as f64
}

/// The first client-side failure among a step's, if any.
pub fn client_failure(failures: &[Failure]) -> Option<&Failure> {
    failures.iter().find(|f| f.is_client())
}

/// Whether any warning of the run says the client limited it.
pub fn client_limited(warnings: &[Warning]) -> bool {
    warnings.iter().any(Warning::is_client_side)
}
