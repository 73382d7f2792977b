//! `--abort-on`: rules that stop a run early when the service is plainly
//! broken (k6's `abortOnFail`), so a ten-minute soak against a dead or
//! all-503 service ends after seconds, with its report.
//!
//! A rule is `MEASURE OP VALUE for DURATION`, judged on the timeline, one
//! wall-clock second at a time: `failed > 50% for 5s` stops the run once
//! more than half of each second's requests failed, five seconds in a row.
//! A second's failed share is `(requests - successes) / requests` of its
//! `IntervalRow`, the same "failed" as everywhere else (judged in
//! `watch`). A second in
//! which no request ended (or, for a latency, none was timed) is no
//! evidence either way: it neither counts towards the duration nor breaks
//! the streak.

use crate::duration::{parse_duration, DurationError};
use crate::op::Op;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// What an abort rule watches, per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbortMeasure {
    /// The share of the second's requests that failed, 0..1 (`failed`,
    /// or `errors` as `--assert` says it).
    Failed,
    /// The second's median response time (`p50`).
    P50,
    /// Its 90th percentile (`p90`).
    P90,
    /// Its 99th percentile (`p99`).
    P99,
    /// Its slowest response (`max`).
    Max,
}

/// `MEASURE OP VALUE for DURATION`, parsed. Kept in the run's
/// configuration as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct AbortRule {
    /// What is watched.
    pub measure: AbortMeasure,
    /// How a second's value is compared with the threshold.
    pub op: Op,
    /// A fraction for `failed`, nanoseconds for latencies.
    pub threshold: f64,
    /// How long the condition must hold, in seconds of the run, before the
    /// run stops.
    pub hold: Duration,
    text: String,
}

const HELP: &str = "use 'MEASURE OP VALUE for DURATION', like 'failed > 50% for 5s' or \
'p99 > 1s for 10s'; MEASURE is failed (also: errors; a share with %) or p50, p90, p99, max \
(durations with a unit); OP is >, >=, <, <= or ==";

/// Why an `--abort-on` rule did not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid abort rule '{text}': {problem}; {HELP}")]
pub struct AbortRuleError {
    /// The rule as given, escaped to stay on one line.
    pub text: String,
    /// What is wrong with it.
    pub problem: AbortProblem,
}

/// What is wrong with an abort rule.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AbortProblem {
    /// No `for DURATION`: a rule that fires on one bad second would stop
    /// runs for a blip.
    #[error("say how long it must hold before the run stops, with 'for DURATION'")]
    NoDuration,
    /// The `for` part is not a duration, or zero.
    #[error("the time after 'for': {}", .0.reason)]
    Hold(DurationError),
    /// `for 0s`.
    #[error("the time after 'for' must be more than 0")]
    ZeroHold,
    /// No `<`, `<=`, `>`, `>=` or `==`.
    #[error("no comparison (>, >=, <, <=, ==)")]
    NoComparison,
    /// A single `=`, or `!=`.
    #[error("write == for equality (a single = or != is not a comparison here)")]
    SingleEquals,
    /// A measure the timeline does not keep per second.
    #[error("'{0}' is not watched per second")]
    UnknownMeasure(String),
    /// A latency threshold that is not a duration.
    #[error("{}", .0.reason)]
    Duration(DurationError),
    /// A failed share that is not a percentage from 0 to 100, or a bare
    /// number other than 0.
    #[error("failed is a share: write a percentage from 0% to 100%, like 50%")]
    Percentage,
}

impl FromStr for AbortRule {
    type Err = AbortRuleError;

    fn from_str(text: &str) -> Result<AbortRule, AbortRuleError> {
        let bad = |problem| AbortRuleError {
            text: text.escape_debug().to_string(),
            problem,
        };
        let t = text.trim();
        let (condition, hold) = split_for(t).ok_or_else(|| bad(AbortProblem::NoDuration))?;
        let hold = parse_duration(hold).map_err(|e| bad(AbortProblem::Hold(e)))?;
        if hold.is_zero() {
            return Err(bad(AbortProblem::ZeroHold));
        }
        let op_at = condition
            .find(['<', '>', '=', '!'])
            .ok_or_else(|| bad(AbortProblem::NoComparison))?;
        let (name, rest) = condition.split_at(op_at);
        let (op, value) = [
            ("<=", Op::Le),
            (">=", Op::Ge),
            ("==", Op::Eq),
            ("<", Op::Lt),
            (">", Op::Gt),
        ]
        .into_iter()
        .find_map(|(symbol, op)| rest.strip_prefix(symbol).map(|v| (op, v)))
        .ok_or_else(|| bad(AbortProblem::SingleEquals))?;
        let (name, value) = (name.trim(), value.trim());
        let measure = match name {
            "failed" | "errors" => AbortMeasure::Failed,
            "p50" => AbortMeasure::P50,
            "p90" => AbortMeasure::P90,
            "p99" => AbortMeasure::P99,
            "max" => AbortMeasure::Max,
            other => {
                return Err(bad(AbortProblem::UnknownMeasure(
                    other.escape_debug().to_string(),
                )))
            }
        };
        let threshold = match measure {
            // A share needs its %, as with --assert: `failed > 5` could
            // mean 5 % or 500 %. Only 0 is the same in every unit.
            AbortMeasure::Failed => match value.strip_suffix('%') {
                Some(pct) => pct
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=100.0).contains(p))
                    .map(|p| p / 100.0),
                None => value.parse::<f64>().ok().filter(|v| *v == 0.0),
            }
            .ok_or_else(|| bad(AbortProblem::Percentage))?,
            _ => parse_duration(value)
                .map_err(|e| bad(AbortProblem::Duration(e)))?
                .as_nanos() as f64,
        };
        Ok(AbortRule {
            measure,
            op,
            threshold,
            hold,
            text: t.to_string(),
        })
    }
}

/// `CONDITION for DURATION` split at its last standalone `for`.
fn split_for(t: &str) -> Option<(&str, &str)> {
    let at = t.rfind(" for ")?;
    let (condition, hold) = (t[..at].trim(), t[at + 5..].trim());
    (!condition.is_empty() && !hold.is_empty()).then_some((condition, hold))
}

impl TryFrom<String> for AbortRule {
    type Error = AbortRuleError;
    fn try_from(s: String) -> Result<AbortRule, AbortRuleError> {
        s.parse()
    }
}

impl From<AbortRule> for String {
    fn from(r: AbortRule) -> String {
        r.text
    }
}

impl fmt::Display for AbortRule {
    /// The rule as written (trimmed).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abort_watch::AbortWatch;
    use crate::header::StopCause;
    use crate::summary::IntervalRow;

    fn row(offset_s: f64, requests: u64, successes: u64, p99_ms: u64) -> IntervalRow {
        IntervalRow {
            unix_second: 0,
            offset_s,
            requests,
            successes,
            failed: requests - successes,
            bytes_in: 0,
            bytes_out: 0,
            p50_ns: p99_ms * 500_000,
            p90_ns: p99_ms * 900_000,
            p99_ns: p99_ms * 1_000_000,
            max_ns: p99_ms * 1_000_000,
            offered: None,
            active_connections: None,
            events: None,
            stalls: None,
            tokens: None,
        }
    }

    #[test]
    fn parses_the_forms_people_write() {
        let r: AbortRule = "errors > 50% for 5s".parse().unwrap();
        assert_eq!(
            (r.measure, r.op, r.threshold, r.hold),
            (AbortMeasure::Failed, Op::Gt, 0.5, Duration::from_secs(5))
        );
        let r: AbortRule = "failed>=10%  for 2s".parse().unwrap();
        assert_eq!(
            (r.measure, r.op, r.threshold),
            (AbortMeasure::Failed, Op::Ge, 0.1)
        );
        let r: AbortRule = " p99 > 1s for 10s ".parse().unwrap();
        assert_eq!(
            (r.measure, r.threshold, r.hold),
            (AbortMeasure::P99, 1e9, Duration::from_secs(10))
        );
        assert_eq!(r.to_string(), "p99 > 1s for 10s");
        let r: AbortRule = "failed > 0 for 1m".parse().unwrap();
        assert_eq!((r.threshold, r.hold), (0.0, Duration::from_secs(60)));
    }

    #[test]
    fn rejects_with_help() {
        for (bad, why) in [
            ("failed > 50%", "for DURATION"),
            ("failed > 50% for", "for DURATION"),
            ("failed > 50% for 0s", "more than 0"),
            ("failed > 50% for 5", "the time after 'for'"),
            ("failed > 50 for 5s", "percentage"),
            ("failed > 101% for 5s", "percentage"),
            ("failed = 1% for 5s", "=="),
            ("failed 50% for 5s", "no comparison"),
            ("p99.9 > 1s for 5s", "not watched per second"),
            ("rate < 10 for 5s", "not watched per second"),
            ("p99 > 1 for 5s", "unit"),
        ] {
            let e = bad.parse::<AbortRule>().unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
            assert!(e.starts_with("invalid abort rule"), "{e}");
            assert!(e.contains("'failed > 50% for 5s'"), "{e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn round_trips_as_written() {
        let r: AbortRule = "failed > 50% for 5s".parse().unwrap();
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(json, "\"failed > 50% for 5s\"");
        assert_eq!(serde_json::from_str::<AbortRule>(&json).unwrap(), r);
    }

    #[test]
    fn a_failed_share_is_requests_minus_successes() {
        let r: AbortRule = "failed > 50% for 1s".parse().unwrap();
        // 503s are failures though no transport error was counted.
        assert_eq!(r.value(&row(0.0, 10, 3, 1)), Some(0.7));
        assert_eq!(r.holds(&row(0.0, 10, 5, 1)), Some(false));
        assert_eq!(r.holds(&row(0.0, 0, 0, 0)), None);
    }

    #[test]
    fn fires_after_the_whole_duration_of_the_run() {
        let rules: Vec<AbortRule> = vec!["failed > 50% for 2s".parse().unwrap()];
        let mut w = AbortWatch::new(&rules);
        // The first second is cut by the run's start: 0.3 s of it.
        assert_eq!(w.observe(&row(-0.7, 30, 0, 1)), None);
        assert_eq!(w.observe(&row(0.3, 100, 0, 1)), None);
        match w.observe(&row(1.3, 100, 0, 1)) {
            Some(StopCause::Abort { rule, at_s }) => {
                assert_eq!(rule, "failed > 50% for 2s");
                assert!((at_s - 2.3).abs() < 1e-9, "{at_s}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_good_second_breaks_the_streak_and_an_empty_one_does_not() {
        let rules: Vec<AbortRule> = vec!["failed > 50% for 2s".parse().unwrap()];
        let mut w = AbortWatch::new(&rules);
        assert_eq!(w.observe(&row(0.0, 100, 0, 1)), None);
        assert_eq!(w.observe(&row(1.0, 100, 100, 1)), None);
        assert_eq!(w.observe(&row(2.0, 100, 0, 1)), None);
        assert_eq!(w.observe(&row(3.0, 0, 0, 0)), None);
        assert!(w.observe(&row(4.0, 100, 0, 1)).is_some());
    }

    #[test]
    fn a_latency_rule_ignores_seconds_with_nothing_timed() {
        let rules: Vec<AbortRule> = vec!["p99 > 1s for 2s".parse().unwrap()];
        let mut w = AbortWatch::new(&rules);
        assert_eq!(w.observe(&row(0.0, 10, 10, 1500)), None);
        // Every request refused: no latency, not a fast second.
        assert_eq!(w.observe(&row(1.0, 10, 0, 0)), None);
        assert!(w.observe(&row(2.0, 10, 10, 2000)).is_some());
        let mut w = AbortWatch::new(&rules);
        for s in 0..10 {
            assert_eq!(w.observe(&row(f64::from(s), 10, 10, 900)), None);
        }
    }
}
