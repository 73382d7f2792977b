//! Which latency the percentile rows of a comparison measure.
//!
//! The headline latency is response time: from each request's scheduled
//! send to its response, so time a request waited in the client counts,
//! as it would for a user. For a fast server much of that can be the
//! client's own timer jitter (at 100 req/s a 191 µs p50 was 122 µs of
//! service and 68 µs of send lag), and a change to the server is then
//! diluted by noise the server never saw. Service time (from the actual
//! send) leaves the client's lag out; send lag is the client's health on
//! its own. Each is compared run by run like response time.
//!
//! Or a comparison can judge one run-level figure alone: `throughput`
//! (successful responses per second, higher is better; in rate runs too,
//! where it is otherwise left out as set by the schedule) or `errors`
//! (the failed share, more is worse). Each run is then reduced to that
//! one value, and the same run-level machinery judges it: paired or
//! unpaired rank intervals, or one new run against the baseline's
//! prediction interval (which then spends its whole 5 % on the one
//! metric), the design's drift checks on it alone.

use crate::runs::{self, Row};
use hdrhistogram::Histogram;
use pelt_core::RunSummary;
use serde::{Deserialize, Serialize};

/// What a comparison judges: the latency its p50 .. p99.9 rows measure
/// (with errors, throughput and the share sent beside them), or one
/// run-level figure alone ([`Latency::Throughput`], [`Latency::Failed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Latency {
    /// The runs' headline ([`pelt_core::Headline`]): response time in
    /// rate runs, service time in a closed loop. The default; a comparison
    /// resolves it ([`Latency::resolve`]) once it has its runs.
    #[default]
    Headline,
    /// From the scheduled send to the response (rate mode's headline).
    ResponseTime,
    /// From the actual send to the response: the server's part.
    ServiceTime,
    /// From the scheduled send to the actual one: the client's part.
    SendLag,
    /// Throughput alone: successful responses per second.
    Throughput,
    /// The failed share alone.
    Failed,
}

impl Latency {
    /// Every one, the default first.
    pub const ALL: [Latency; 6] = [
        Latency::Headline,
        Latency::ResponseTime,
        Latency::ServiceTime,
        Latency::SendLag,
        Latency::Throughput,
        Latency::Failed,
    ];

    /// `response_time`, `service_time`, `send_lag`, `throughput`,
    /// `failed`.
    pub fn name(self) -> &'static str {
        match self {
            Latency::Headline => "headline",
            Latency::ResponseTime => "response_time",
            Latency::ServiceTime => "service_time",
            Latency::SendLag => "send_lag",
            Latency::Throughput => "throughput",
            Latency::Failed => "failed",
        }
    }

    /// The latency [`Latency::Headline`] stands for in runs of this mode;
    /// any other as it is.
    pub fn resolve(self, rate_mode: bool) -> Latency {
        match (self, pelt_core::Headline::for_rate_mode(rate_mode)) {
            (Latency::Headline, pelt_core::Headline::ResponseTime) => Latency::ResponseTime,
            (Latency::Headline, pelt_core::Headline::ServiceTime) => Latency::ServiceTime,
            (other, _) => other,
        }
    }

    /// [`Latency::resolve`] for `run`'s mode.
    pub fn resolve_for(self, run: &RunSummary) -> Latency {
        self.resolve(run.is_rate_mode())
    }

    /// Whether this is the headline of runs of this mode (what a report
    /// shows first, and what needs no note).
    pub fn is_headline(self, rate_mode: bool) -> bool {
        self.resolve(rate_mode) == Latency::Headline.resolve(rate_mode)
    }

    /// Response time, or the headline unresolved: what a report needs
    /// no note for (the reports' default before closed loops had their
    /// own headline).
    pub fn is_headline_of_rate_runs(self) -> bool {
        matches!(self, Latency::ResponseTime | Latency::Headline)
    }

    /// The one metric judged ([`runs::metrics`]' name), when a comparison
    /// judges one run-level figure alone; `None` for a latency.
    pub fn sole(self) -> Option<&'static str> {
        match self {
            Latency::Throughput => Some("throughput"),
            Latency::Failed => Some(crate::headline::FAILED),
            _ => None,
        }
    }

    /// Whether a group of the runs' warnings bears on what is judged: all
    /// do for a latency; for a sole metric, those that weaken it or every
    /// metric (a `failed` warning weakens latencies, not the failed share).
    pub fn weakened_by(self, group: &crate::headline::WarningGroup) -> bool {
        match self.sole() {
            Some(name) => group.weakens == "every metric" || group.weakens.contains(name),
            // Send lag weakens response time's percentiles because they
            // include it; service time's leave it out (issue 35).
            None if self == Latency::ServiceTime => group.kind != "send_lag",
            None => true,
        }
    }

    /// The rows a comparison judges: all of them for response and
    /// service time (a scenario's per-step rows are of response time),
    /// the whole run's for send lag, the sole metric's row alone
    /// otherwise.
    pub fn judge(self, rows: Vec<Row>) -> Vec<Row> {
        match self.sole() {
            Some(name) => rows.into_iter().filter(|r| r.metric.name == name).collect(),
            // Steps keep response time only (per target). Beside send
            // lag they would measure nothing asked for; beside service
            // time (a closed loop's headline, so every closed-loop
            // scenario) they are kept, each step's response time, which
            // differs from its service time by the connect and the
            // client's turnaround: dropping them left a closed-loop
            // scenario's comparison with no step at all.
            None if matches!(self, Latency::SendLag) => rows
                .into_iter()
                .filter(|r| !runs::is_step_metric(&r.metric))
                .collect(),
            None => rows,
        }
    }

    /// One sentence for a report.
    pub fn describe(self) -> &'static str {
        match self {
            Latency::Headline => {
                "Latency: the runs' headline, response time in rate runs and service time in a closed loop."
            }
            Latency::ResponseTime => {
                "Latency: response time, from each request's scheduled send to its response (the client's send lag included)."
            }
            Latency::ServiceTime => {
                "Latency: service time, from each request's actual send to its response (a closed loop's headline; in rate runs, the client's send lag left out)."
            }
            Latency::SendLag => {
                "Latency: send lag, from each request's scheduled send to its actual send (the client's health, not the server's)."
            }
            Latency::Throughput => {
                "Judged: throughput alone, successful responses per second of each run (higher is better; in rate runs it cannot exceed the offered rate)."
            }
            Latency::Failed => {
                "Judged: the failed share alone, of each run's requests (higher is worse)."
            }
        }
    }

    /// What a chart of [`Latency::histogram`] draws, for its title:
    /// `service time`, or `the headline latency` (unresolved, or for a
    /// sole metric).
    pub fn drawn(self) -> &'static str {
        match self {
            Latency::ResponseTime => "response time",
            Latency::ServiceTime => "service time",
            Latency::SendLag => "send lag",
            _ => "the headline latency",
        }
    }

    /// The histogram this latency reads in `run` (the headline's for a
    /// sole metric).
    pub fn histogram(self, run: &RunSummary) -> &Histogram<u64> {
        match self {
            Latency::ServiceTime => &run.total.service,
            Latency::SendLag => &run.total.send_lag,
            Latency::ResponseTime => &run.total.response,
            _ => run.headline().of(&run.total),
        }
    }
}

/// [`runs::values`] with the percentile rows read from `latency`'s
/// histogram (NaN when it is empty); for a sole metric, its value alone
/// and NaN for every other (throughput in rate runs too).
pub fn values(run: &RunSummary, latency: Latency) -> Vec<f64> {
    let mut v = runs::values(run);
    if let Some(name) = latency.sole() {
        for (x, m) in v.iter_mut().zip(runs::metrics()) {
            *x = match m.name.as_str() {
                n if n != name => f64::NAN,
                "throughput" => run.throughput(),
                _ => *x,
            };
        }
        return v;
    }
    if latency.resolve_for(run) == Latency::ResponseTime {
        return v;
    }
    let h = latency.histogram(run);
    for (i, m) in runs::metrics().iter().enumerate() {
        let p = match m.name.as_str() {
            "p50" => 50.0,
            "p90" => 90.0,
            "p99" => 99.0,
            "p99.9" => 99.9,
            _ => continue,
        };
        v[i] = if h.is_empty() {
            f64::NAN
        } else {
            pelt_core::rank::percentile(h, p) as f64
        };
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde() {
        for l in Latency::ALL {
            let json = serde_json::to_value(l).unwrap();
            assert_eq!(json, l.name());
            assert_eq!(serde_json::from_value::<Latency>(json).unwrap(), l);
        }
    }

    /// Runs reduced to one metric as [`values`] reduces them for a sole
    /// metric: NaN everywhere else.
    fn sole_runs(name: &str, base: f64, n: usize) -> Vec<Vec<f64>> {
        let i = runs::metrics().iter().position(|m| m.name == name).unwrap();
        (0..n)
            .map(|k| {
                let mut v = vec![f64::NAN; runs::metrics().len()];
                v[i] = base * (1.0 + 0.001 * k as f64);
                v
            })
            .collect()
    }

    #[test]
    fn a_sole_metric_is_judged_alone_in_its_direction() {
        use crate::Verdict;
        let judged = |l: Latency, a: &[Vec<f64>], b: &[Vec<f64>]| {
            let rows = l.judge(runs::compare_values(a, b, true));
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0].metric.name, l.sole().unwrap());
            rows[0].result.clone().unwrap().verdict
        };
        let material = |regression: bool| match regression {
            true => Verdict::Regression { material: true },
            false => Verdict::Improvement { material: true },
        };
        // Throughput: higher is better.
        let (slow, fast) = (
            sole_runs("throughput", 500.0, 8),
            sole_runs("throughput", 1000.0, 8),
        );
        assert_eq!(judged(Latency::Throughput, &slow, &fast), material(false));
        assert_eq!(judged(Latency::Throughput, &fast, &slow), material(true));
        // Errors: more is worse.
        let (few, many) = (sole_runs("failed", 0.0, 8), sole_runs("failed", 0.2, 8));
        assert_eq!(judged(Latency::Failed, &few, &many), material(true));
        assert_eq!(judged(Latency::Failed, &many, &few), material(false));
        // A latency keeps every row.
        let rows = runs::compare_values(&few, &many, true);
        assert_eq!(
            Latency::ServiceTime.judge(rows).len(),
            runs::metrics().len()
        );
    }

    /// One new run against a baseline: a sole metric spends the gate's
    /// whole 5 % (no Bonferroni share for metrics that were not measured),
    /// and the gate has its verdict.
    #[test]
    fn one_run_against_a_baseline_on_a_sole_metric() {
        let baseline = sole_runs("throughput", 1000.0, 10);
        let one = sole_runs("throughput", 700.0, 1).remove(0);
        let rows = Latency::Throughput.judge(crate::predict::compare_values(&baseline, &one));
        assert_eq!(rows.len(), 1);
        let c = rows[0].result.as_ref().unwrap();
        // Two-sided 90 %: the 5 % on the side a regression is called on.
        let alone = 1.0 - 2.0 * (1.0 - crate::CONFIDENCE);
        assert!((c.confidence.unwrap() - alone).abs() < 1e-9, "{c:?}");
        assert_eq!(c.verdict, crate::Verdict::Regression { material: true });
        assert!(crate::predict::gate_has_verdict(&rows));
    }

    #[test]
    fn only_warnings_that_bear_on_a_sole_metric_are_kept() {
        let group = |weakens: &str| crate::headline::WarningGroup {
            kind: "k".into(),
            runs: vec!["r".into()],
            weakens: weakens.into(),
            why: String::new(),
            example: String::new(),
        };
        let latency = group("p50, p90, p99, p99.9");
        assert!(Latency::ResponseTime.weakened_by(&latency));
        assert!(!Latency::Failed.weakened_by(&latency));
        assert!(!Latency::Throughput.weakened_by(&latency));
        assert!(Latency::Failed.weakened_by(&group("failed, sent")));
        assert!(Latency::Throughput.weakened_by(&group("every metric")));
    }
}
