//! Saved runs compared: each [`RunSummary`] reduced to one value per
//! metric (from its merged histogram), and B's runs compared with A's,
//! run by run (see `compare` for why the run is the unit).
//!
//! ```
//! use pelt_analyze::runs::{compare_values, metrics};
//!
//! // p50, p90, p99, p99.9 (ns), error ratio, throughput and share sent
//! // (NaN: a closed loop has no schedule) of 6 blocks.
//! let run = |p50: f64, rate: f64| vec![p50, 2.0 * p50, 3.0 * p50, 4.0 * p50, 0.0, rate, f64::NAN];
//! let a: Vec<Vec<f64>> = (0..6).map(|i| run(1e6 + i as f64, 1000.0)).collect();
//! let b: Vec<Vec<f64>> = (0..6).map(|i| run(2e6 + i as f64, 500.0)).collect();
//! let rows = compare_values(&a, &b, true);
//! assert_eq!(rows.len(), metrics().len());
//! assert!(pelt_analyze::runs::regressed(&rows, true));
//! ```

use crate::{
    compare_paired, compare_unpaired, AnalyzeError, Comparison, Direction, Inapplicable, Metric,
    Scale, Verdict, MARGIN_P50, MARGIN_P90, MARGIN_P99, MARGIN_P999,
};
use pelt_core::{RunSummary, Warning};

/// The failed share's metric name in [`metrics`].
pub const FAILED: &str = "failed";

/// Failed shares are compared in points: 0.001 = 0.1 percentage point.
pub const MARGIN_FAILED: f64 = 0.001;
/// The share of planned requests sent is compared in points: 0.01 = one
/// percentage point of the schedule missed.
pub const MARGIN_SENT: f64 = 0.01;

/// How a run yields one metric's value.
type Extract = fn(&RunSummary) -> f64;

/// What is compared, and how each run yields its value.
fn extractors() -> Vec<(Metric, Extract)> {
    fn pct(s: &RunSummary, p: f64) -> f64 {
        let h = &s.total.response;
        if h.is_empty() {
            f64::NAN
        } else {
            pelt_core::rank::percentile(h, p) as f64
        }
    }
    vec![
        (Metric::latency("p50", MARGIN_P50), |s| pct(s, 50.0)),
        (Metric::latency("p90", MARGIN_P90), |s| pct(s, 90.0)),
        (Metric::latency("p99", MARGIN_P99), |s| pct(s, 99.0)),
        (Metric::latency("p99.9", MARGIN_P999), |s| pct(s, 99.9)),
        (
            Metric::new(
                FAILED,
                Scale::Points,
                Direction::HigherIsWorse,
                MARGIN_FAILED,
            ),
            |s| s.total.failed_share(),
        ),
        // A closed loop's throughput is what the server managed; a rate
        // run's is fixed by its schedule (499.9/s against 499.5/s was
        // called a regression over nothing), so rate runs compare what
        // they control instead: the share of planned requests actually
        // sent. Each is NaN in the other mode, and not compared there.
        (Metric::throughput(), |s| {
            if s.is_rate_mode() {
                f64::NAN
            } else {
                s.throughput()
            }
        }),
        (
            Metric::new(
                "sent",
                Scale::Points,
                Direction::HigherIsBetter,
                MARGIN_SENT,
            ),
            |s| {
                if s.is_rate_mode() && s.planned() > 0 {
                    s.sent() as f64 / s.planned() as f64
                } else {
                    f64::NAN
                }
            },
        ),
    ]
}

/// Why a metric has no comparison when its values are NaN: it does not
/// apply to the runs' load model (see [`metrics`]).
pub(crate) fn not_applicable(metric: &Metric, a: &[f64], b: &[f64]) -> Option<AnalyzeError> {
    let nan = |v: &[f64]| !v.is_empty() && v.iter().all(|x| x.is_nan());
    let mixed = |v: &[f64]| v.iter().any(|x| x.is_nan()) && !v.iter().all(|x| x.is_nan());
    let why = match metric.name.as_str() {
        "throughput" => Inapplicable::FixedBySchedule,
        "sent" => Inapplicable::RateRunsOnly,
        _ => return None,
    };
    let why = if mixed(a) || mixed(b) || nan(a) != nan(b) {
        Inapplicable::MixedLoad
    } else if nan(a) {
        why
    } else {
        return None;
    };
    Some(AnalyzeError::NotApplicable {
        metric: metric.name.clone(),
        why,
    })
}

/// The compared metrics, in order: p50, p90, p99, p99.9 of response time
/// (nanoseconds), the error ratio (points), throughput (per second; closed
/// loops only) and the share of planned requests sent (points; rate runs
/// only).
pub fn metrics() -> Vec<Metric> {
    extractors().into_iter().map(|(m, _)| m).collect()
}

/// Each metric's value for one run, in the order of [`metrics`]. A run
/// with no timed response has NaN latencies.
pub fn values(run: &RunSummary) -> Vec<f64> {
    extractors().into_iter().map(|(_, f)| f(run)).collect()
}

/// One metric's comparison, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What was compared.
    pub metric: Metric,
    /// The comparison, or why the values could not be compared.
    pub result: Result<Comparison, AnalyzeError>,
    /// The design confounds the change with time and its material
    /// verdict was withheld (see `design::withhold_material`).
    pub confounded: bool,
}

/// Every metric of B's runs against A's: paired by position (blocks), or
/// as two independent sets.
pub fn compare_runs(a: &[RunSummary], b: &[RunSummary], paired: bool) -> Vec<Row> {
    let all = |runs: &[RunSummary]| runs.iter().map(values).collect::<Vec<_>>();
    compare_values(&all(a), &all(b), paired)
}

/// [`compare_runs`] on runs already reduced by [`values`]: `a[run][metric]`.
pub fn compare_values(a: &[Vec<f64>], b: &[Vec<f64>], paired: bool) -> Vec<Row> {
    compare_metrics(metrics(), a, b, paired)
}

/// A scenario run's steps by name (`flow/step`, `once/step`), in the
/// file's order; none for a run of plain targets.
pub fn step_names(run: &RunSummary) -> Vec<String> {
    match &run.config.scenario {
        Some(sc) => sc.names[..sc.steps.min(sc.names.len())].to_vec(),
        None => Vec::new(),
    }
}

/// The steps every one of `runs` has, in the first run's order: the
/// steps two sets of scenario runs can be compared on (variants of an
/// experiment may run different scenarios).
pub fn common_steps<'a>(runs: impl IntoIterator<Item = &'a [String]>) -> Vec<String> {
    let mut runs = runs.into_iter();
    let Some(first) = runs.next() else {
        return Vec::new();
    };
    let mut names = first.to_vec();
    for other in runs {
        names.retain(|n| other.contains(n));
    }
    names
}

/// The per-step metrics of `steps`, three a step in order: `STEP p50`
/// and `STEP p99` (response time from the step's intended start, as the
/// Steps table has it) and `STEP failed` (the step's failed share of its
/// requests, by the one rule: `check` and `extract` failures count), with
/// the whole run's margins for the same figures.
pub fn step_metrics(steps: &[String]) -> Vec<Metric> {
    steps
        .iter()
        .flat_map(|s| {
            [
                Metric::latency(format!("{s} p50"), MARGIN_P50),
                Metric::latency(format!("{s} p99"), MARGIN_P99),
                Metric::new(
                    format!("{s} failed"),
                    Scale::Points,
                    Direction::HigherIsWorse,
                    MARGIN_FAILED,
                ),
            ]
        })
        .collect()
}

/// Whether `metric` is one of [`step_metrics`]' (or [`stream_metrics`]')
/// rather than the whole run's ([`metrics`]): of response time, not of
/// the latency `--metric` names.
pub fn is_step_metric(metric: &Metric) -> bool {
    !metrics().iter().any(|m| m.name == metric.name)
}

/// Each of `steps`' values in `run`, in the order of [`step_metrics`]:
/// NaN for a step the run does not have, or a figure it has no request
/// for.
pub fn step_values(run: &RunSummary, steps: &[String]) -> Vec<f64> {
    let names = step_names(run);
    let empty = pelt_core::TargetStats::default();
    steps
        .iter()
        .flat_map(|s| {
            let row = names
                .iter()
                .position(|n| n == s)
                .map(|i| run.total.targets.get(i).unwrap_or(&empty));
            let pct = |q: f64| match row.and_then(|t| t.response()) {
                Some(h) if !h.is_empty() => pelt_core::rank::percentile(h, q) as f64,
                _ => f64::NAN,
            };
            let failed = match row {
                Some(t) if t.requests() > 0 => t.failed() as f64 / t.requests() as f64,
                _ => f64::NAN,
            };
            [pct(50.0), pct(99.0), failed]
        })
        .collect()
}

/// Each step's metrics of B's runs against A's ([`step_metrics`] of
/// `steps`; `a[run]` from [`step_values`]), judged as [`compare_values`]
/// judges the whole run's.
/// A figure no run measured on either side (a `once` step made in the
/// warm-up, a step never reached) has no row.
pub fn compare_steps(steps: &[String], a: &[Vec<f64>], b: &[Vec<f64>], paired: bool) -> Vec<Row> {
    let measured = |i: usize| a.iter().chain(b).any(|v| !v[i].is_nan());
    let keep: Vec<usize> = (0..3 * steps.len()).filter(|&i| measured(i)).collect();
    let pick = |runs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        runs.iter()
            .map(|v| keep.iter().map(|&i| v[i]).collect())
            .collect()
    };
    let metrics = step_metrics(steps);
    let metrics = keep.iter().map(|&i| metrics[i].clone()).collect();
    compare_metrics(metrics, &pick(a), &pick(b), paired)
}

/// The steps both sides' runs all have, compared ([`compare_steps`]);
/// no rows unless both sides ran scenarios.
pub fn compare_runs_steps(a: &[RunSummary], b: &[RunSummary], paired: bool) -> Vec<Row> {
    let names: Vec<Vec<String>> = a.iter().chain(b).map(step_names).collect();
    let steps = common_steps(names.iter().map(Vec::as_slice));
    if steps.is_empty() {
        return Vec::new();
    }
    let values = |runs: &[RunSummary]| -> Vec<Vec<f64>> {
        runs.iter().map(|r| step_values(r, &steps)).collect()
    };
    compare_steps(&steps, &values(a), &values(b), paired)
}

/// Streamed responses' metrics (issue 38), after the whole run's and the
/// steps': time to first event p50 and p99, and every gap's p99
/// (`first event p50`, ...), with the whole run's margins.
pub fn stream_metrics() -> Vec<Metric> {
    vec![
        Metric::latency("first event p50", MARGIN_P50),
        Metric::latency("first event p99", MARGIN_P99),
        Metric::latency("gap p99", MARGIN_P99),
    ]
}

/// A run's values of [`stream_metrics`], `None` when it met no stream.
pub fn stream_values(run: &RunSummary) -> Option<Vec<f64>> {
    let st = run.total.streamed.as_deref()?;
    let pct = |h: &pelt_core::Histogram<u64>, p: f64| match h.is_empty() {
        true => f64::NAN,
        false => pelt_core::rank::percentile(h, p) as f64,
    };
    Some(vec![
        pct(&st.first_event, 50.0),
        pct(&st.first_event, 99.0),
        pct(&st.gaps, 99.0),
    ])
}

/// B's runs' [`stream_metrics`] against A's, judged as the whole run's
/// are; no rows unless every run on both sides met a stream.
pub fn compare_runs_streams(a: &[RunSummary], b: &[RunSummary], paired: bool) -> Vec<Row> {
    let values =
        |runs: &[RunSummary]| -> Option<Vec<Vec<f64>>> { runs.iter().map(stream_values).collect() };
    match (values(a), values(b)) {
        (Some(va), Some(vb)) => compare_streams(&va, &vb, paired),
        _ => Vec::new(),
    }
}

/// [`stream_metrics`] of B's runs against A's (`a[run]` from
/// [`stream_values`]).
pub fn compare_streams(a: &[Vec<f64>], b: &[Vec<f64>], paired: bool) -> Vec<Row> {
    compare_metrics(stream_metrics(), a, b, paired)
}

/// Each of `metrics` compared: `a[run][i]` is run's value of `metrics[i]`.
fn compare_metrics(metrics: Vec<Metric>, a: &[Vec<f64>], b: &[Vec<f64>], paired: bool) -> Vec<Row> {
    metrics
        .into_iter()
        .enumerate()
        .map(|(i, metric)| {
            let va: Vec<f64> = a.iter().map(|v| v[i]).collect();
            let vb: Vec<f64> = b.iter().map(|v| v[i]).collect();
            if let Some(e) = not_applicable(&metric, &va, &vb) {
                return Row {
                    metric,
                    result: Err(e),
                    confounded: false,
                };
            }
            let result = if paired {
                compare_paired(&metric, &va, &vb)
            } else {
                compare_unpaired(&metric, &va, &vb)
            };
            Row {
                metric,
                result,
                confounded: false,
            }
        })
        .collect()
}

/// Whether any metric regressed: any clear regression, or with
/// `material_only` only one whose whole interval is beyond the margin.
pub fn regressed(rows: &[Row], material_only: bool) -> bool {
    rows.iter().any(|row| match &row.result {
        Ok(c) => match c.verdict {
            Verdict::Regression { material } => material || !material_only,
            _ => false,
        },
        Err(_) => false,
    })
}

/// Whether any row has no verdict because each side has one run only.
pub fn any_without_verdict(rows: &[Row]) -> bool {
    rows.iter()
        .any(|row| matches!(&row.result, Ok(c) if c.verdict == Verdict::NoVerdict))
}

/// Whether pelt's busiest worker thread wanted a CPU nearly all of `run`:
/// the client may have set the pace (see [`Warning::ClientBusy`]).
pub fn client_busy(run: &RunSummary) -> bool {
    run.warnings
        .iter()
        .any(|w| matches!(w, Warning::ClientBusy { .. }))
}

/// Adds `run`'s requests to a pooled summary (the first run's, with its
/// timeline dropped): one distribution for a chart. A picture only; the
/// statistics compare runs, never pooled requests.
pub fn pool(into: &mut Option<RunSummary>, mut run: RunSummary) {
    match into {
        Some(p) => p.total.merge(&run.total),
        None => {
            run.timeline.clear();
            *into = Some(run);
        }
    }
}

/// The median of the values that are numbers; NaN when none is.
pub fn median_of_numbers(mut v: Vec<f64>) -> f64 {
    v.retain(|x| !x.is_nan());
    if v.is_empty() {
        return f64::NAN;
    }
    crate::rank::median(&v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(base: f64, n: usize) -> Vec<Vec<f64>> {
        (0..n)
            .map(|i| {
                let x = base * (1.0 + i as f64 * 0.001);
                vec![x, x, x, x, 0.0, 1e9 / x, f64::NAN]
            })
            .collect()
    }

    #[test]
    fn one_row_per_metric_in_order() {
        let rows = compare_values(&runs(1e6, 6), &runs(1e6, 6), true);
        let names: Vec<&str> = rows.iter().map(|r| r.metric.name.as_str()).collect();
        assert_eq!(
            names,
            ["p50", "p90", "p99", "p99.9", "failed", "throughput", "sent"]
        );
        // A closed loop has no schedule to have sent.
        assert_eq!(
            rows[6].result,
            Err(AnalyzeError::NotApplicable {
                metric: "sent".into(),
                why: Inapplicable::RateRunsOnly
            })
        );
        assert!(!regressed(&rows, false));
    }

    #[test]
    fn regressions_gate_by_materiality() {
        // B 1 % slower in every block: real but within every margin.
        let small = compare_values(&runs(1e6, 8), &runs(1.01e6, 8), true);
        assert!(regressed(&small, false));
        assert!(!regressed(&small, true));
        let big = compare_values(&runs(1e6, 8), &runs(2e6, 8), true);
        assert!(regressed(&big, true));
    }

    #[test]
    fn one_run_each_gives_no_verdict_and_a_paired_mismatch_an_error() {
        let rows = compare_values(&runs(1e6, 1), &runs(2e6, 1), false);
        assert!(any_without_verdict(&rows));
        assert!(!regressed(&rows, false));
        let rows = compare_values(&runs(1e6, 2), &runs(2e6, 1), true);
        assert!(rows.iter().all(|r| r.result.is_err()));
    }

    #[test]
    fn throughput_and_sent_each_apply_to_one_load_model() {
        let rate = |n: usize, sent: f64| -> Vec<Vec<f64>> {
            (0..n)
                .map(|_| vec![1e6, 1e6, 1e6, 1e6, 0.0, f64::NAN, sent])
                .collect()
        };
        let rows = compare_values(&rate(6, 1.0), &rate(6, 0.9), true);
        assert_eq!(
            rows[5].result.as_ref().unwrap_err().to_string(),
            "fixed by the schedule in rate runs (see 'sent')"
        );
        assert!(rows[6].result.is_ok());
        let mut closed = runs(1e6, 6);
        closed.truncate(3);
        let rows = compare_values(&rate(3, 1.0), &closed, false);
        for row in &rows[5..] {
            assert_eq!(
                row.result.as_ref().unwrap_err().to_string(),
                "the runs mix rate and closed-loop load"
            );
        }
    }

    #[test]
    fn steps_are_compared_by_name_and_unmeasured_figures_have_no_row() {
        let a: Vec<String> = ["once/login", "f/list", "f/item"]
            .map(String::from)
            .to_vec();
        let b: Vec<String> = ["f/item", "f/list", "f/extra"].map(String::from).to_vec();
        let steps = common_steps([a.as_slice(), b.as_slice()]);
        assert_eq!(steps, ["f/list", "f/item"]);
        let names: Vec<String> = step_metrics(&steps).into_iter().map(|m| m.name).collect();
        assert_eq!(
            names,
            [
                "f/list p50",
                "f/list p99",
                "f/list failed",
                "f/item p50",
                "f/item p99",
                "f/item failed"
            ]
        );
        assert!(is_step_metric(&step_metrics(&steps)[0]));
        assert!(!is_step_metric(&metrics()[0]));
        // f/list never timed on either side (NaN): its latency rows go;
        // f/item twice as slow in B: a material regression.
        let run = |x: f64| vec![f64::NAN, f64::NAN, 0.0, x, 2.0 * x, 0.0];
        let side = |base: f64| -> Vec<Vec<f64>> {
            (0..6)
                .map(|i| run(base * (1.0 + i as f64 * 0.001)))
                .collect()
        };
        let rows = compare_steps(&steps, &side(1e6), &side(2e6), true);
        let names: Vec<&str> = rows.iter().map(|r| r.metric.name.as_str()).collect();
        assert_eq!(
            names,
            ["f/list failed", "f/item p50", "f/item p99", "f/item failed"]
        );
        assert!(regressed(&rows[1..2], true));
        assert!(!regressed(&rows[..1], false));
    }

    #[test]
    fn medians_skip_nan() {
        assert_eq!(median_of_numbers(vec![3.0, f64::NAN, 1.0, 2.0]), 2.0);
        assert!(median_of_numbers(vec![f64::NAN]).is_nan());
    }
}
