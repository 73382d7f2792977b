//! Threshold assertions on a run, for CI: `p99 < 50ms`, `failed < 0.1%`,
//! `rate >= 990`; on one latency (`service_time.p99 < 5ms`) or one target
//! (`target[2].p99 < 20ms`, `target[/search].failed < 1%`). A run that
//! breaks one exits 1.

use crate::duration::{parse_duration, DurationError};
pub use crate::op::Op;
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
    /// 2xx/3xx; see [`crate::failure`]), 0..1. Written `failed` (or
    /// `errors`, the older word, still read).
    Failed,
    /// Requests per second actually sent (in rate mode, not the rate
    /// planned: a client that fell behind fails `rate >= ...`).
    Rate,
    /// Successful responses per second.
    Throughput,
    /// Requests recorded.
    Requests,
}

/// Which latency a latency measure reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Latency {
    /// The report's headline ([`crate::Headline`]): response time in
    /// rate mode, service time in a closed loop. A bare `p99` reads it.
    #[default]
    Headline,
    /// `response_time.` (or `response `): from the planned start (in a
    /// closed loop, from when the connection began the request, its
    /// connect included).
    Response,
    /// `service_time.` (or `service `): from the first byte written to the
    /// last read.
    Service,
    /// `send_lag.`: from the planned start to the first byte written.
    SendLag,
    /// `ttft.` or `ttfe.` (or `ttft `): a streamed response's time to
    /// first event (first token), from the start response time has.
    FirstEvent,
    /// `itl.` or `gap.`: every gap between a stream's consecutive events.
    Gap,
    /// `mean_itl.` or `mean_gap.`: each stream's mean gap,
    /// `(last − first) / (events − 1)`.
    MeanGap,
    /// `stream_duration.`: each stream's first event to its last.
    StreamDuration,
    /// `event_latency.`: each event's arrival minus the time the server
    /// wrote in it (`--event-time`).
    EventLatency,
    /// `tokens_per_s.`: each complete LLM stream's output tokens per
    /// second (a rate: its threshold is tokens/s, not a duration).
    TokensPerStream,
    /// `ws_upgrade.`: a WebSocket connection's upgrade, from the request
    /// written to the `101` read.
    WsUpgrade,
}

/// `target[...]`: which target a per-target assertion is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetRef {
    /// `target[2]`: the second target, counted from 1 as the report lists them.
    Position(usize),
    /// `target[/search]` or `target[http://h/search]`: the one target
    /// whose URL, or path and query, is exactly this.
    Url(String),
}

impl fmt::Display for TargetRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetRef::Position(n) => write!(f, "target[{n}]"),
            TargetRef::Url(u) => write!(f, "target[{u}]"),
        }
    }
}

/// `[SCOPE.]MEASURE OP VALUE`, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Assertion {
    /// What is measured.
    pub measure: Measure,
    /// Which latency a latency measure reads (the headline unless a
    /// `service_time.` or `send_lag.` prefix says otherwise).
    pub latency: Latency,
    /// The target it is about, or the whole run.
    pub target: Option<TargetRef>,
    /// How it is compared with the threshold.
    pub op: Op,
    /// Nanoseconds for latencies, a fraction for the failed share, a plain number
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
'rate >= 990', 'service_time.p99 < 5ms' or 'target[2].p99 < 20ms'; MEASURE is p50..p99.99, mean, \
max (durations with a unit; of the headline latency: response time with --rate, service time in a \
closed loop; or prefixed service_time., response_time. or send_lag., or 'service p50'; of streamed \
responses ttft. (time to first event or token), itl. (every gap between events), mean_itl. (each stream's \
mean gap), stream_duration. or event_latency., like 'ttft p99 < 200ms'; tokens_per_s. in tokens/s, like \
'tokens_per_s p50 > 20'; of WebSocket upgrades ws_upgrade.), failed (the share of requests with no response or a status outside 2xx/3xx, with %; errors is read too), rate, throughput (per second) or requests (a count), \
optionally after target[N]. or target[/path].; OP is <, <=, >, >= or ==";

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
    /// A `failed` percentage that is not a number from 0 to 100.
    #[error("failed takes a percentage from 0% to 100%, like 0.1%")]
    Percentage,
    /// A `failed` threshold other than 0 without its `%`: `failed < 5`
    /// could mean 5 % or 500 %.
    #[error(
        "failed is a share and needs its unit: write 'failed {} {value}%' for {value} % \
         (a bare {value} is ambiguous; only 0 may go without %)",
        .op.symbol()
    )]
    BareShare {
        /// The comparison, to repeat it in the advice.
        op: Op,
        /// The number as written.
        value: f64,
    },
    /// A `failed` threshold that is not a number.
    #[error("failed takes a percentage, like 0.1% or 0")]
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
    /// Several terms in one `--assert`, one of which did not parse.
    #[error("one term per --assert, or terms separated by commas, each MEASURE OP VALUE")]
    SeveralTerms,
    /// A prefix that is not a latency or `target[...]`.
    #[error("unknown prefix before the measure (service_time., response_time., send_lag., ttft., itl., mean_itl., stream_duration., event_latency., tokens_per_s., ws_upgrade. or target[N].)")]
    UnknownScope,
    /// A latency prefix on a measure that is not a latency.
    #[error("service_time., response_time., send_lag., ttft., itl., mean_itl., stream_duration., event_latency., tokens_per_s. and ws_upgrade. go before p50..p99.99, mean or max")]
    LatencyPrefix,
    /// `target[...]` on a measure that has no per-target value.
    #[error("a target's measures are p50..p99.99, mean, max, failed and requests")]
    TargetMeasure,
    /// `target[]`, `target[0]` or an unclosed bracket.
    #[error("name the target as target[N] (from 1, as the report lists them) or target[/path]")]
    TargetRef,
}

/// Parses assertions separated by commas (`--slo`'s syntax, and
/// `--assert 'p99 < 50ms, failed < 1%'`). Empty terms are skipped.
pub fn parse_terms(text: &str) -> Result<Vec<Assertion>, AssertionError> {
    text.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::parse)
        .collect()
}

impl FromStr for Assertion {
    type Err = AssertionError;

    fn from_str(text: &str) -> Result<Assertion, AssertionError> {
        let bad = |problem| AssertionError {
            text: text.escape_debug().to_string(),
            problem,
        };
        let t = text.trim();
        // A URL in `target[...]` may hold '=' (a query): look after it.
        let skip = match t.starts_with("target[") {
            true => t.find(']').map_or(0, |i| i + 1),
            false => 0,
        };
        let op_at = t[skip..]
            .find(['<', '>', '=', '!'])
            .map(|i| i + skip)
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
        if value.contains(['<', '>', '=']) {
            // 'p99 < 50ms, failed < 1%' reaching one term.
            return Err(bad(AssertionProblem::SeveralTerms));
        }
        // `target[...].` then `service_time.` (either, both or neither).
        let (target, name) = match name.strip_prefix("target[") {
            Some(rest) => {
                let (inner, after) = rest
                    .split_once(']')
                    .ok_or_else(|| bad(AssertionProblem::TargetRef))?;
                let inner = inner.trim();
                let target = match inner.parse::<usize>() {
                    Ok(0) => return Err(bad(AssertionProblem::TargetRef)),
                    Ok(n) => TargetRef::Position(n),
                    Err(_) if inner.is_empty() => return Err(bad(AssertionProblem::TargetRef)),
                    Err(_) => TargetRef::Url(inner.to_string()),
                };
                let name = after
                    .strip_prefix('.')
                    .ok_or_else(|| bad(AssertionProblem::UnknownScope))?;
                (Some(target), name.trim())
            }
            None => (None, name),
        };
        // `service p50`: the latency as a word before the measure.
        let spaced = name
            .split_once(char::is_whitespace)
            .and_then(|(w, rest)| latency_word(w).map(|l| (l, rest.trim())));
        let (latency, prefixed, name) = match (spaced, name.split_once('.')) {
            (Some((l, rest)), _) => (l, true, rest),
            // A dot inside a percentile (p99.9) is not a prefix.
            (None, Some((prefix, rest))) if !prefix.starts_with('p') || prefix.contains('_') => {
                let latency = latency_word(prefix.trim())
                    .ok_or_else(|| bad(AssertionProblem::UnknownScope))?;
                (latency, true, rest.trim())
            }
            _ => (Latency::Headline, false, name),
        };
        let measure = match name {
            "mean" => Measure::Mean,
            "max" => Measure::Max,
            // One meaning (crate::failure): `failed` and the older
            // `errors` both read the share of requests that failed.
            "failed" | "errors" => Measure::Failed,
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
        let is_latency = matches!(
            measure,
            Measure::Percentile(_) | Measure::Mean | Measure::Max
        );
        if prefixed && !is_latency {
            return Err(bad(AssertionProblem::LatencyPrefix));
        }
        if target.is_some() && matches!(measure, Measure::Rate | Measure::Throughput) {
            return Err(bad(AssertionProblem::TargetMeasure));
        }
        if target.is_some() && !matches!(latency, Latency::Headline | Latency::Response) {
            // Only response time is kept per target.
            return Err(bad(AssertionProblem::TargetMeasure));
        }
        let threshold = match measure {
            // Tokens per second, a number (`tokens_per_s p50 > 20`).
            Measure::Percentile(_) | Measure::Mean | Measure::Max
                if latency == Latency::TokensPerStream =>
            {
                let v = value.strip_suffix("/s").unwrap_or(value).trim();
                v.parse::<f64>()
                    .ok()
                    .filter(|v| *v >= 0.0)
                    .ok_or_else(|| bad(AssertionProblem::NotARate))?
            }
            Measure::Percentile(_) | Measure::Mean | Measure::Max => parse_duration(value)
                .map_err(|e| bad(AssertionProblem::Duration(e)))?
                .as_nanos()
                as f64,
            // A share needs its unit: 'errors < 5' was read as 500 % and
            // made a gate that could never fail. Only 0 is the same in
            // every unit.
            Measure::Failed => match value.strip_suffix('%') {
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
            latency,
            target,
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

/// A latency named as a prefix or a word: `service_time`, `service`,
/// `response_time`, `response`, `send_lag`.
fn latency_word(w: &str) -> Option<Latency> {
    match w {
        "response_time" | "response" => Some(Latency::Response),
        "service_time" | "service" => Some(Latency::Service),
        "send_lag" => Some(Latency::SendLag),
        "ttft" | "ttfe" | "first_event" => Some(Latency::FirstEvent),
        "itl" | "gap" => Some(Latency::Gap),
        "mean_itl" | "mean_gap" => Some(Latency::MeanGap),
        "stream_duration" => Some(Latency::StreamDuration),
        "event_latency" => Some(Latency::EventLatency),
        "tokens_per_s" => Some(Latency::TokensPerStream),
        "ws_upgrade" => Some(Latency::WsUpgrade),
        _ => None,
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
        let a: Assertion = "failed < 0.1%".parse().unwrap();
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
        assert!(e.contains("'failed < 5%'"), "{e}");
        let a: Assertion = "errors == 0".parse().unwrap();
        assert_eq!(
            (a.measure, a.op, a.threshold),
            (Measure::Failed, Op::Eq, 0.0)
        );
        let a: Assertion = "errors <= 5%".parse().unwrap();
        assert!((a.threshold - 0.05).abs() < 1e-12);
        let a: Assertion = "rate >= 990/s".parse().unwrap();
        assert_eq!(a.threshold, 990.0);
    }

    #[test]
    fn several_terms_and_spaced_units() {
        // Issue 22 §8: the --slo syntax and '50 ms' gave a unit error.
        let terms = parse_terms("p99 < 50ms, failed < 1%").unwrap();
        assert_eq!(terms.len(), 2);
        assert_eq!(terms[0].threshold, 50e6);
        assert_eq!(terms[1].measure, Measure::Failed);
        let a: Assertion = "p99 < 50 ms".parse().unwrap();
        assert_eq!(a.threshold, 50e6);
        // One term reaching the parser with another in it says so.
        let e = "p99 < 50ms, errors < 1%"
            .parse::<Assertion>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("one term per --assert"), "{e}");
        let a: Assertion = "failed < 1%".parse().unwrap();
        assert_eq!(a.measure, Measure::Failed);
    }

    #[test]
    fn per_latency_and_per_target_terms() {
        let a: Assertion = "service_time.p99 < 5ms".parse().unwrap();
        assert_eq!(
            (a.measure, a.latency, &a.target),
            (Measure::Percentile(99.0), Latency::Service, &None)
        );
        let a: Assertion = "send_lag.p99.9 <= 1ms".parse().unwrap();
        assert_eq!(
            (a.measure, a.latency),
            (Measure::Percentile(99.9), Latency::SendLag)
        );
        let a: Assertion = "response_time.max < 1s".parse().unwrap();
        assert_eq!((a.measure, a.latency), (Measure::Max, Latency::Response));
        let a: Assertion = "service p50 < 1ms".parse().unwrap();
        assert_eq!(
            (a.measure, a.latency),
            (Measure::Percentile(50.0), Latency::Service)
        );
        let a: Assertion = "target[2].p99 < 20ms".parse().unwrap();
        assert_eq!(a.target, Some(TargetRef::Position(2)));
        let a: Assertion = "target[/search?q=1].errors < 1%".parse().unwrap();
        assert_eq!(a.target, Some(TargetRef::Url("/search?q=1".into())));
        for (bad, why) in [
            ("service_time.errors < 1%", "go before"),
            ("target[1].rate > 5", "a target's measures"),
            ("target[0].p99 < 1s", "target[N]"),
            ("target[1.p99 < 1s", "target[N]"),
            ("cpu.p99 < 1s", "unknown prefix"),
        ] {
            let e = bad.parse::<Assertion>().unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
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
