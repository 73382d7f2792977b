//! Threshold assertions on a run, for CI: `p99 < 50ms`, `errors < 0.1%`,
//! `rate >= 990`. A run that breaks one exits 1.

use crate::duration::{human_ns, parse_duration, DurationError};
use crate::summary::RunSummary;
use std::fmt;
use std::str::FromStr;

/// What an assertion measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measure {
    /// A percentile of the headline latency (response time in rate mode),
    /// e.g. 99.0 for `p99`.
    Percentile(f64),
    /// The mean of the headline latency.
    Mean,
    /// The slowest headline latency.
    Max,
    /// Share of requests that failed (no response, or a status outside
    /// 2xx/3xx; see [`crate::failure`]), 0..1. Written `failed` or
    /// `errors`.
    Errors,
    /// Requests per second actually sent (in rate mode, not the rate
    /// planned: a client that fell behind fails `rate >= ...`).
    Rate,
    /// Successful responses per second.
    Throughput,
    /// Requests recorded.
    Requests,
}

/// How an assertion compares the measured value with its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
}

/// `MEASURE OP VALUE`, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Assertion {
    /// What is measured.
    pub measure: Measure,
    /// How it is compared with the threshold.
    pub op: Op,
    /// Nanoseconds for latencies, a fraction for errors, a plain number
    /// otherwise.
    pub threshold: f64,
    text: String,
}

/// The verdict on one assertion.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The assertion as written.
    pub assertion: String,
    /// The measured value, formatted for people.
    pub actual: String,
    /// Whether the run met the assertion.
    pub ok: bool,
}

impl fmt::Display for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.ok { "ok" } else { "FAILED" };
        write!(f, "{verdict}: {} (was {})", self.assertion, self.actual)
    }
}

const HELP: &str = "use MEASURE OP VALUE, like 'p99 < 50ms', 'failed < 0.1%', 'failed == 0', \
'rate >= 990'; MEASURE is p50..p99.99, mean, max (durations with a unit), failed or errors (the share \
of requests with no response or a status outside 2xx/3xx, with %), \
rate, throughput (per second) or requests (a count); OP is <, <=, >, >= or ==";

/// Why an assertion did not parse: the text, what is wrong, and the
/// forms that are accepted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid assertion '{text}': {problem}; {HELP}")]
pub struct AssertionError {
    /// The assertion as given, escaped to stay on one line.
    pub text: String,
    /// What is wrong with it.
    pub problem: AssertionProblem,
}

/// What is wrong with an assertion.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AssertionProblem {
    /// No `<`, `<=`, `>`, `>=` or `==`.
    #[error("no comparison (<, <=, >, >=, ==)")]
    NoComparison,
    /// A single `=`, or `!=`.
    #[error("write == for equality (a single = or != is not a comparison here)")]
    SingleEquals,
    /// `pX` where X is not a number.
    #[error("unknown percentile")]
    UnknownPercentile,
    /// A percentile below 0 or above 100.
    #[error("percentiles run from p0 to p100")]
    PercentileRange,
    /// Not one of the measures in the help.
    #[error("unknown measure")]
    UnknownMeasure,
    /// A latency threshold that is not a duration.
    #[error("{}", .0.reason)]
    Duration(DurationError),
    /// An `errors` percentage that is not a number from 0 to 100.
    #[error("errors take a percentage from 0% to 100%, like 0.1%")]
    Percentage,
    /// An `errors` threshold other than 0 without its `%`: `errors < 5`
    /// could mean 5 % or 500 %.
    #[error(
        "errors is a share and needs its unit: write 'errors {} {value}%' for {value} % \
         (a bare {value} is ambiguous; only 0 may go without %)",
        .op.symbol()
    )]
    BareShare {
        /// The comparison, to repeat it in the advice.
        op: Op,
        /// The number as written.
        value: f64,
    },
    /// An `errors` threshold that is not a number.
    #[error("errors take a percentage, like 0.1% or 0")]
    NotAPercentage,
    /// A `rate` or `throughput` threshold that is not requests per second.
    #[error("rates are requests per second, like 990 or 990/s")]
    NotARate,
    /// A `requests` threshold that is not a whole number.
    #[error("requests is a count, like 1000")]
    NotACount,
    /// An infinite or NaN threshold.
    #[error("the value must be a finite number")]
    NotFinite,
}

impl FromStr for Assertion {
    type Err = AssertionError;

    fn from_str(text: &str) -> Result<Assertion, AssertionError> {
        let bad = |problem| AssertionError {
            text: text.escape_debug().to_string(),
            problem,
        };
        let t = text.trim();
        let op_at = t
            .find(['<', '>', '=', '!'])
            .ok_or_else(|| bad(AssertionProblem::NoComparison))?;
        let (name, rest) = t.split_at(op_at);
        let (op, value) = if let Some(v) = rest.strip_prefix("<=") {
            (Op::Le, v)
        } else if let Some(v) = rest.strip_prefix(">=") {
            (Op::Ge, v)
        } else if let Some(v) = rest.strip_prefix("==") {
            (Op::Eq, v)
        } else if let Some(v) = rest.strip_prefix('<') {
            (Op::Lt, v)
        } else if let Some(v) = rest.strip_prefix('>') {
            (Op::Gt, v)
        } else {
            return Err(bad(AssertionProblem::SingleEquals));
        };
        let (name, value) = (name.trim(), value.trim());
        let measure = match name {
            "mean" => Measure::Mean,
            "max" => Measure::Max,
            // One meaning (crate::failure): `failed` and the older
            // `errors` both read the share of requests that failed.
            "failed" | "errors" => Measure::Errors,
            "rate" => Measure::Rate,
            "throughput" => Measure::Throughput,
            "requests" => Measure::Requests,
            p if p.starts_with('p') => {
                let q: f64 = p[1..]
                    .parse()
                    .map_err(|_| bad(AssertionProblem::UnknownPercentile))?;
                if !(0.0..=100.0).contains(&q) {
                    return Err(bad(AssertionProblem::PercentileRange));
                }
                Measure::Percentile(q)
            }
            _ => return Err(bad(AssertionProblem::UnknownMeasure)),
        };
        let threshold = match measure {
            Measure::Percentile(_) | Measure::Mean | Measure::Max => parse_duration(value)
                .map_err(|e| bad(AssertionProblem::Duration(e)))?
                .as_nanos()
                as f64,
            // A share needs its unit: 'errors < 5' was read as 500 % and
            // made a gate that could never fail. Only 0 is the same in
            // every unit.
            Measure::Errors => match value.strip_suffix('%') {
                Some(pct) => pct
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=100.0).contains(p))
                    .map(|p| p / 100.0)
                    .ok_or_else(|| bad(AssertionProblem::Percentage))?,
                None => match value.parse::<f64>() {
                    Ok(0.0) => 0.0,
                    Ok(value) => return Err(bad(AssertionProblem::BareShare { op, value })),
                    Err(_) => return Err(bad(AssertionProblem::NotAPercentage)),
                },
            },
            Measure::Rate | Measure::Throughput => {
                let v = value.strip_suffix("/s").unwrap_or(value).trim();
                v.parse::<f64>()
                    .ok()
                    .filter(|v| *v >= 0.0)
                    .ok_or_else(|| bad(AssertionProblem::NotARate))?
            }
            Measure::Requests => value
                .parse::<u64>()
                .map(|n| n as f64)
                .map_err(|_| bad(AssertionProblem::NotACount))?,
        };
        if !threshold.is_finite() {
            return Err(bad(AssertionProblem::NotFinite));
        }
        Ok(Assertion {
            measure,
            op,
            threshold,
            text: t.to_string(),
        })
    }
}

impl fmt::Display for Assertion {
    /// The assertion as written (trimmed).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Op {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "==",
        }
    }
}

impl Assertion {
    /// Evaluates the assertion on `s`.
    pub fn check(&self, s: &RunSummary) -> Checked {
        let h = &s.total.response;
        let latency = |v: u64| (v as f64, human_ns(v).to_string());
        let (actual, shown) = match self.measure {
            Measure::Percentile(_) | Measure::Mean | Measure::Max if h.is_empty() => {
                (f64::NAN, "no timed responses".to_string())
            }
            Measure::Percentile(p) => latency(h.value_at_percentile(p)),
            Measure::Mean => latency(h.mean() as u64),
            Measure::Max => latency(h.max()),
            Measure::Errors => {
                let share = if s.total.requests == 0 {
                    f64::NAN
                } else {
                    s.total.failed_share()
                };
                (share, format!("{:.3}%", share * 100.0))
            }
            Measure::Rate => (s.sent_rate(), format!("{:.1}/s", s.sent_rate())),
            Measure::Throughput => (s.throughput(), format!("{:.1}/s", s.throughput())),
            Measure::Requests => (s.total.requests as f64, s.total.requests.to_string()),
        };
        // NaN compares false: an assertion about nothing fails.
        let ok = match self.op {
            Op::Lt => actual < self.threshold,
            Op::Le => actual <= self.threshold,
            Op::Gt => actual > self.threshold,
            Op::Ge => actual >= self.threshold,
            Op::Eq => actual == self.threshold,
        };
        Checked {
            assertion: self.text.clone(),
            actual: shown,
            ok,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_people_write() {
        let a: Assertion = "p99 < 50ms".parse().unwrap();
        assert_eq!(a.measure, Measure::Percentile(99.0));
        assert_eq!((a.op, a.threshold), (Op::Lt, 50e6));
        let a: Assertion = "p99.9<=1s".parse().unwrap();
        assert_eq!(
            (a.measure, a.op, a.threshold),
            (Measure::Percentile(99.9), Op::Le, 1e9)
        );
        let a: Assertion = "errors < 0.1%".parse().unwrap();
        assert!((a.threshold - 0.001).abs() < 1e-12);
        let a: Assertion = "rate >= 990".parse().unwrap();
        assert_eq!(
            (a.measure, a.op, a.threshold),
            (Measure::Rate, Op::Ge, 990.0)
        );
    }

    #[test]
    fn a_share_needs_its_unit() {
        // The trial's gate that could never fail: 'errors < 5' read as 500 %.
        let e = "errors < 5".parse::<Assertion>().unwrap_err().to_string();
        assert!(e.contains("'errors < 5%'"), "{e}");
        let a: Assertion = "errors == 0".parse().unwrap();
        assert_eq!(
            (a.measure, a.op, a.threshold),
            (Measure::Errors, Op::Eq, 0.0)
        );
        let a: Assertion = "errors <= 5%".parse().unwrap();
        assert!((a.threshold - 0.05).abs() < 1e-12);
        let a: Assertion = "rate >= 990/s".parse().unwrap();
        assert_eq!(a.threshold, 990.0);
    }

    #[test]
    fn rejects_with_help() {
        for bad in [
            "errors < 5",
            "errors < 0.05",
            "errors < 101%",
            "errors = 0",
            "requests >= 1.5",
            "p99 50ms",
            "p99 < 50",
            "latency < 5ms",
            "p101 < 1s",
            "errors < lots",
            "rate > x",
        ] {
            let e = bad.parse::<Assertion>().unwrap_err().to_string();
            assert!(e.contains("MEASURE OP VALUE"), "{bad}: {e}");
            assert!(!e.contains('\n'));
        }
    }
}
