//! One new run against a baseline of recorded runs: a verdict from a
//! prediction interval.
//!
//! # Why not the rank test
//!
//! With one run on side B, the Mann–Whitney interval of
//! [`crate::compare_unpaired`] needs 39 baseline runs before a 95 %
//! interval exists at all (the most extreme arrangement has probability
//! `1/(n+1)`), so `pelt run ... --baseline last:20 --fail-on regression`
//! could never fire, whatever the change. A CI gate compares exactly one
//! new run with what came before, so it needs a method made for that.
//!
//! # The method
//!
//! On the metric's scale (`x = ln value` for latency, the value itself in
//! points for failed shares), the baseline runs give `x₁ … xₙ` with mean `x̄`
//! and sample standard deviation `s`; the new run gives `y`. Model: every
//! run's value is the run's true level plus run-to-run noise
//! `N(0, σ²)`, the new run's level shifted by `Δ`. Then
//!
//! ```text
//! (y − x̄ − Δ) / (s·√(1 + 1/n))  ~  Student t with n − 1 degrees of freedom
//! ```
//!
//! because `y − x̄` has variance `σ²(1 + 1/n)` and `s²` is independent of
//! both. So `y − x̄ ± t₀.₉₇₅,ₙ₋₁·s·√(1 + 1/n)` is an exact 95 % interval for
//! `Δ` (when `Δ = 0` it is the classical prediction interval of the next
//! run: the new run falls outside it 5 % of the time, half of that above).
//! The interval goes through the same verdict rules as every comparison
//! (see `compare`): a *regression* when it lies wholly above no
//! change, *material* when wholly beyond the margin.
//!
//! Latency is compared on the log scale because run-to-run noise is
//! multiplicative (a busier machine stretches every request by a factor)
//! and skewed to the right on the raw scale; logs make it close to
//! symmetric. The tests below check by simulation that a gate on this
//! interval false-alarms at most 5 % of the time with baselines of 3, 5,
//! 10 and 20 runs, also when the noise is heavy-tailed (Laplace) or skewed
//! (the machine only ever gets slower), and how often it catches a +10 %
//! shift at a given run-to-run noise ([`detection_rate`]).
//!
//! The interval never narrows below `±1.96·σ` however many baseline runs
//! there are: one new run carries its own run-to-run noise. A change
//! smaller than about `3.2·σ` (e.g. 10 % at σ = 3 %) is caught most of the
//! time only by repeating the new run (`pelt compare` with several runs per
//! side) or pairing runs (`pelt experiment`).

use crate::compare::{check_metric, decide, report, transform};
use crate::error::Side;
use crate::rank::median;
use crate::runs::{metrics, not_applicable, Row};
use crate::{AnalyzeError, Comparison, Design, Metric, Verdict, CONFIDENCE};

/// The fewest baseline runs that give a one-run verdict: two estimate a
/// spread with one degree of freedom (t = 12.7), three with two
/// (t = 4.30), which is where the gate starts catching changes of a few
/// times the noise. Fewer is refused before any load is sent.
pub const MIN_BASELINE_RUNS: usize = 3;

/// `P(|T| ≤ t)` for Student's t with `df` (≥ 1) degrees of freedom, by
/// the finite series for integer degrees of freedom (Abramowitz and
/// Stegun 26.7.3 and 26.7.4): exact up to rounding.
pub fn t_two_sided_cdf(t: f64, df: usize) -> f64 {
    assert!(df >= 1, "Student's t needs a degree of freedom");
    let theta = (t.abs() / (df as f64).sqrt()).atan();
    let (s, c) = theta.sin_cos();
    let c2 = c * c;
    if df % 2 == 1 {
        // 2/π·(θ + sinθ·cosθ·(1 + 2/3·cos²θ + 2·4/(3·5)·cos⁴θ + …)),
        // the sum running to cos^(df−3)θ.
        let mut sum = 0.0;
        if df > 1 {
            let mut term = 1.0;
            sum = 1.0;
            let mut k = 2;
            while k + 1 < df {
                term *= k as f64 / (k + 1) as f64 * c2;
                sum += term;
                k += 2;
            }
        }
        let core = if df > 1 { s * c * sum } else { 0.0 };
        2.0 / std::f64::consts::PI * (theta + core)
    } else {
        // sinθ·(1 + 1/2·cos²θ + 1·3/(2·4)·cos⁴θ + …), to cos^(df−2)θ.
        let mut term = 1.0;
        let mut sum = 1.0;
        let mut k = 1;
        while k + 1 < df {
            term *= k as f64 / (k + 1) as f64 * c2;
            sum += term;
            k += 2;
        }
        s * sum
    }
}

/// The two-sided `confidence` quantile of Student's t with `df` degrees of
/// freedom: `t` with `P(|T| ≤ t) = confidence` (bisection on
/// [`t_two_sided_cdf`]; `t₀.₉₇₅,₄ = 2.776`).
pub fn t_quantile(confidence: f64, df: usize) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while t_two_sided_cdf(hi, df) < confidence {
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if t_two_sided_cdf(mid, df) < confidence {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// One metric: the new run's value `run` against the baseline runs'
/// values (see the module docs). With fewer than two baseline runs there
/// is no spread to predict from: [`Verdict::NoVerdict`].
///
/// Errors as [`crate::compare_unpaired`] does: an empty baseline, a value
/// that is not finite, a ratio-scale value that is not positive, an
/// unusable margin.
pub fn compare_one_run(
    metric: &Metric,
    baseline: &[f64],
    run: f64,
) -> Result<Comparison, AnalyzeError> {
    compare_one_run_at(metric, baseline, run, CONFIDENCE)
}

/// [`compare_one_run`] with an interval of the given two-sided
/// `confidence` (in (0, 1)).
pub fn compare_one_run_at(
    metric: &Metric,
    baseline: &[f64],
    run: f64,
    confidence: f64,
) -> Result<Comparison, AnalyzeError> {
    check_metric(metric)?;
    let xa = transform(metric, Side::A, baseline)?;
    let y = transform(metric, Side::B, &[run])?[0];
    let n = xa.len();
    let mean = xa.iter().sum::<f64>() / n as f64;
    let centre = match metric.scale {
        // The geometric mean: the centre the interval is built around,
        // so the change column and the A column cannot disagree in sign.
        crate::Scale::Ratio => mean.exp(),
        crate::Scale::Points => mean,
    };
    let mut out = Comparison {
        metric: metric.name.clone(),
        a: if n == 1 { median(baseline) } else { centre },
        b: run,
        estimate: report(metric, y - mean),
        ci: None,
        confidence: None,
        n: n + 1,
        design: Design::Prediction { baseline_runs: n },
        verdict: Verdict::NoVerdict,
        sample: None,
    };
    if n < 2 {
        return Ok(out);
    }
    let ss: f64 = xa.iter().map(|x| (x - mean).powi(2)).sum();
    let sd = (ss / (n - 1) as f64).sqrt();
    let half = t_quantile(confidence, n - 1) * sd * (1.0 + 1.0 / n as f64).sqrt();
    let (lo, hi) = (y - mean - half, y - mean + half);
    out.verdict = decide(metric, lo, hi);
    out.ci = Some((report(metric, lo), report(metric, hi)));
    out.confidence = Some(confidence);
    Ok(out)
}

/// Every metric of [`crate::runs::metrics`]: one run's values `b` (from
/// [`crate::runs::values`]) against the baseline's, `a[run][metric]`.
///
/// A gate fails when *any* metric regressed, so each of the `m` metrics
/// compared gets a two-sided `1 − 0.10/m` interval: the side a regression
/// is called on has `0.05/m` of chance beyond it, and by Bonferroni
/// (valid whatever the metrics' correlation) the gate as a whole calls a
/// regression that is not there at most 5 % of the time, not 5 % per
/// metric. (An improvement that is not there is called at most 5 % of
/// the time too.)
pub fn compare_values(a: &[Vec<f64>], b: &[f64]) -> Vec<Row> {
    // Only a metric that can give a verdict spends part of the 5 %: one
    // with no value (a sole metric judged, NaN elsewhere; nothing timed)
    // cannot call a regression.
    let applicable: Vec<bool> = metrics()
        .iter()
        .enumerate()
        .map(|(i, metric)| {
            let va: Vec<f64> = a.iter().map(|v| v[i]).collect();
            not_applicable(metric, &va, &[b[i]]).is_none()
                && !b[i].is_nan()
                && va.iter().any(|x| !x.is_nan())
        })
        .collect();
    let m = applicable.iter().filter(|&&x| x).count().max(1);
    let confidence = 1.0 - 2.0 * (1.0 - CONFIDENCE) / m as f64;
    metrics()
        .into_iter()
        .enumerate()
        .map(|(i, metric)| {
            let mut va: Vec<f64> = a.iter().map(|v| v[i]).collect();
            if let Some(e) = not_applicable(&metric, &va, &[b[i]]) {
                return Row {
                    metric,
                    result: Err(e),
                    confounded: false,
                };
            }
            // A baseline run with no timed response has no latency: it
            // counts in the failed share, and is no evidence about speed.
            // An outlying run (one slow run among steady ones) is left
            // out too, by a robust rule the report states: it would widen
            // the interval until nothing could be judged (issue 35).
            let out = outlying(&metric, &va);
            va = va
                .iter()
                .enumerate()
                .filter(|(i, v)| !v.is_nan() && !out.contains(i))
                .map(|(_, v)| *v)
                .collect();
            if va.is_empty() {
                return Row {
                    result: Ok(no_spread(&metric, b[i])),
                    metric,
                    confounded: false,
                };
            }
            let result = compare_one_run_at(&metric, &va, b[i], confidence);
            Row {
                metric,
                result,
                confounded: false,
            }
        })
        .collect()
}

/// A comparison with nothing to predict from: no verdict.
fn no_spread(metric: &Metric, run: f64) -> Comparison {
    Comparison {
        metric: metric.name.clone(),
        a: f64::NAN,
        b: run,
        estimate: f64::NAN,
        ci: None,
        confidence: None,
        n: 1,
        design: Design::Prediction { baseline_runs: 0 },
        verdict: Verdict::NoVerdict,
        sample: None,
    }
}

/// A modified z-score above this marks a baseline run as an outlier:
/// `|x − median| / (1.4826·MAD)`, on the log scale, where a run is as far
/// from the others by a factor either way. Iglewicz and Hoaglin's 3.5 is
/// for larger samples: with the 5 runs a baseline may have, the MAD is
/// itself noisy, and 3.5 flagged a run in one normal baseline of five
/// (which doubled the gate's false alarms); 10 flags one in 150 at 5 runs
/// and one in 700 at 10 (simulated, 3 % normal noise), while a run at
/// 60 ms among runs at 20 ± 0.2 ms is at z ≈ 100.
pub const OUTLIER_Z: f64 = 10.0;

/// The smallest spread (log scale, as a MAD) the outlier rule assumes:
/// baseline runs that agree to the nanosecond would otherwise make any
/// run 1 % off an outlier.
const MIN_MAD: f64 = 0.005;

/// One baseline run left out of one metric's prediction, for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlier {
    /// The metric (`p50`).
    pub metric: String,
    /// The run, by its position in the baseline.
    pub run: usize,
    /// Its value.
    pub value: f64,
    /// The baseline's median of the metric.
    pub median: f64,
}

/// The baseline runs (positions in `values`) a latency metric leaves
/// out: those whose modified z-score exceeds [`OUTLIER_Z`], as long as
/// [`MIN_BASELINE_RUNS`] runs remain (else none). Only latencies: a run
/// with errors is evidence of errors, not an accident to drop. NaN values
/// (nothing timed) are not outliers; they are left out anyway.
pub fn outlying(metric: &Metric, values: &[f64]) -> Vec<usize> {
    if !metric.name.starts_with('p') || metric.scale != crate::Scale::Ratio {
        return Vec::new();
    }
    let logs: Vec<(usize, f64)> = values
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite() && **v > 0.0)
        .map(|(i, v)| (i, v.ln()))
        .collect();
    if logs.len() <= MIN_BASELINE_RUNS {
        return Vec::new();
    }
    let x: Vec<f64> = logs.iter().map(|(_, x)| *x).collect();
    let med = median(&x);
    let mad = median(&x.iter().map(|v| (v - med).abs()).collect::<Vec<_>>()).max(MIN_MAD);
    let out: Vec<usize> = logs
        .iter()
        .filter(|(_, v)| (v - med).abs() / (1.4826 * mad) > OUTLIER_Z)
        .map(|(i, _)| *i)
        .collect();
    match logs.len() - out.len() >= MIN_BASELINE_RUNS {
        true => out,
        false => Vec::new(),
    }
}

/// Every outlier [`compare_values`] leaves out of the baseline `a`
/// (`a[run][metric]`), metric by metric.
pub fn outliers(a: &[Vec<f64>]) -> Vec<Outlier> {
    let mut out = Vec::new();
    for (i, metric) in metrics().iter().enumerate() {
        let va: Vec<f64> = a.iter().map(|v| v[i]).collect();
        let finite: Vec<f64> = va.iter().copied().filter(|v| v.is_finite()).collect();
        for run in outlying(metric, &va) {
            out.push(Outlier {
                metric: metric.name.clone(),
                run,
                value: va[run],
                median: median(&finite),
            });
        }
    }
    out
}

/// Whether a gate on these rows has a verdict to act on: every latency
/// and the failed share compared with an interval. False means
/// `--fail-on` would pass for want of evidence (one run per side, or too
/// few runs for a rank interval).
pub fn gate_has_verdict(rows: &[Row]) -> bool {
    gated(rows)
        .iter()
        .all(|r| matches!(&r.result, Ok(c) if c.verdict != Verdict::NoVerdict && c.ci.is_some()))
}

/// The rows a gate acts on: every latency and the failed share, or the
/// one metric judged alone (`--metric throughput`).
fn gated(rows: &[Row]) -> Vec<&Row> {
    let gated =
        |r: &&Row| r.metric.name.starts_with('p') || r.metric.name == crate::headline::FAILED;
    // A comparison that judges one other metric alone (`--metric
    // throughput`) gates on that one.
    let any_gated = rows.iter().any(|r| gated(&r));
    rows.iter().filter(|r| !any_gated || gated(r)).collect()
}

/// The gated metrics a one-run gate could not judge: INCONCLUSIVE (or
/// without an interval), while the new run `b` is worse than every
/// baseline run of `a` (`a[run][metric]`). A baseline too noisy to call a
/// run that lies outside all of it must not let it through: `--fail-on`
/// fails on these (issue 35: an INCONCLUSIVE p50 of −38 % .. +1710 % let
/// a run at 80 ms through a baseline of runs at 20 to 60 ms). A run
/// within the baseline's range that is inconclusive passes, as before.
pub fn unjudged(rows: &[Row], a: &[Vec<f64>], b: &[f64]) -> Vec<String> {
    let index = |name: &str| metrics().iter().position(|m| m.name == name);
    gated(rows)
        .into_iter()
        .filter(|r| {
            let Ok(c) = &r.result else {
                return false;
            };
            let undecided = matches!(c.verdict, Verdict::Inconclusive { .. } | Verdict::NoVerdict)
                || c.ci.is_none();
            let Some(i) = index(&r.metric.name) else {
                return false;
            };
            let base: Vec<f64> = a.iter().map(|v| v[i]).filter(|v| v.is_finite()).collect();
            let y = b.get(i).copied().unwrap_or(f64::NAN);
            let outside = !base.is_empty()
                && y.is_finite()
                && match r.metric.direction {
                    crate::Direction::HigherIsWorse => base.iter().all(|&x| y > x),
                    crate::Direction::HigherIsBetter => base.iter().all(|&x| y < x),
                };
            undecided && outside
        })
        .map(|r| r.metric.name.clone())
        .collect()
}

/// What a one-run gate says about its design in time, one sentence
/// each.
///
/// A baseline is recorded before the run it judges: the design is
/// sequential by nature. `pelt compare` withholds material verdicts of a
/// sequential design, because its rank interval rests on the spread
/// *within* each side, and drift *between* the sides falls outside it
/// (an A/A test of 4 runs then 4 called p99 +87 % material). The gate's
/// interval is different: it is the baseline runs' own run-to-run spread,
/// and those runs were made at different times, so the drift between
/// them is inside it; its A/A false alarms were measured at 5 % or less
/// (docs/STATISTICS.md). So its material verdicts stand, and the note
/// says what they cannot see: a change in conditions since the last
/// baseline run, and a trend within the baseline (named with the pace's
/// reach to the new run, as `pelt compare` does), which breaks the
/// interval's premise that the new run is one more draw like them.
pub fn design_notes(
    design: &crate::design::TimeDesign,
    describe: impl Fn(&str, f64) -> String,
) -> Vec<String> {
    use crate::design::Order;
    let mut out = Vec::new();
    match design.order {
        Order::Sequential { a_first: true } => out.push(
            "Sequential, as a baseline is: every baseline run started before this one. Material verdicts \
             stand: the interval is the baseline runs' own run-to-run spread, so drift between them is \
             inside it; a change in conditions since the last of them (the machine, its neighbours) is \
             not, and would read as this run's change."
                .into(),
        ),
        Order::Unknown => out.push(
            "The runs' start times are unknown, so whether the baseline precedes this run cannot be checked."
                .into(),
        ),
        _ => {}
    }
    for d in design.drifts.iter().filter(|d| d.side == "a") {
        let dir = if d.trend.tau > 0.0 { "rose" } else { "fell" };
        let mut s = format!(
            "The baseline drifted: its {} {dir} over time, {} to {} (Mann-Kendall tau {:+.2}, p = {:.3}), \
             so this run may not be one more draw like them",
            d.metric,
            describe(&d.metric, d.first),
            describe(&d.metric, d.last),
            d.trend.tau,
            d.trend.p_value
        );
        if let Some(g) = d.over_gap {
            s.push_str(&format!(
                "; at that pace time alone would move it {:+.1} % from the baseline's centre",
                g * 100.0
            ));
        }
        s.push('.');
        out.push(s);
    }
    out
}

/// How often the gate calls a regression, by simulation: `trials` times,
/// `baseline_runs` values and one new run drawn as `exp(level + noise)`,
/// the new run's level `ln(1 + shift)` above the baseline's, with `noise`
/// a draw of run-to-run noise (log scale) from `draw`, each judged with
/// a `confidence` interval. The figure behind
/// the module docs' claims, kept as a function so the tests and
/// docs/STATISTICS.md read the same code.
pub fn detection_rate(
    baseline_runs: usize,
    shift: f64,
    trials: usize,
    confidence: f64,
    mut draw: impl FnMut() -> f64,
) -> f64 {
    let metric = Metric::latency("p50", crate::MARGIN_P50);
    let mut hits = 0;
    for _ in 0..trials {
        let a: Vec<f64> = (0..baseline_runs).map(|_| 1e6 * draw().exp()).collect();
        let b = 1e6 * (1.0 + shift) * draw().exp();
        let c = compare_one_run_at(&metric, &a, b, confidence).expect("positive finite values");
        if matches!(c.verdict, Verdict::Regression { .. }) {
            hits += 1;
        }
    }
    hits as f64 / trials as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-run gate says its design is sequential, keeps material
    /// verdicts, and names a trend within the baseline.
    #[test]
    fn a_one_run_gate_says_its_baseline_precedes_it() {
        use crate::design::{assess, Timed};
        let run = |started_ms: u64, p50: f64| Timed {
            started_ms,
            values: vec![p50, p50, p50, p50, 0.0, f64::NAN, 1.0],
        };
        let steady: Vec<Timed> = [1.0, 1.02, 0.99, 1.01, 1.0]
            .iter()
            .enumerate()
            .map(|(i, &x)| run(1_000 * (i as u64 + 1), x * 1e6))
            .collect();
        let new = [run(10_000, 2e6)];
        let describe = |_: &str, v: f64| format!("{v}");
        let d = assess(&metrics(), &steady, &new, false);
        let notes = design_notes(&d, describe);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("Sequential, as a baseline is"),
            "{notes:?}"
        );
        assert!(notes[0].contains("Material verdicts stand"));
        // ... and they do: the new run at twice the baseline's p50.
        assert!(d.confounded());
        let a: Vec<Vec<f64>> = steady.iter().map(|r| r.values.clone()).collect();
        let mut rows = compare_values(&a, &new[0].values);
        crate::design::withhold_material(&mut rows, &d);
        let p50 = rows[0].result.as_ref().unwrap();
        assert_eq!(p50.verdict, Verdict::Regression { material: true });
        assert!(!rows[0].confounded);
        // A baseline that rose every run: the trend and its reach.
        let rising: Vec<Timed> = (0..6)
            .map(|i| run(1_000 * (i + 1), 1e6 * (1.0 + 0.1 * i as f64)))
            .collect();
        let d = assess(&metrics(), &rising, &new, false);
        let notes = design_notes(&d, describe);
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("The baseline drifted: its p50 rose")
                    && n.contains("from the baseline's centre")),
            "{notes:?}"
        );
        // Start times unknown.
        let d = assess(&metrics(), &[run(0, 1e6)], &new, false);
        assert!(design_notes(&d, describe)[0].contains("unknown"));
    }

    use crate::MARGIN_P50;

    use crate::sim::SplitMix as Rng;

    /// The simulations' noise shapes.
    trait Noise {
        fn normal(&mut self) -> f64;
        fn laplace(&mut self) -> f64;
        fn skewed(&mut self) -> f64;
        fn very_skewed(&mut self) -> f64;
    }

    impl Noise for Rng {
        fn normal(&mut self) -> f64 {
            crate::rank::normal_quantile(self.uniform())
        }
        /// Laplace with standard deviation 1: heavier tails than normal.
        fn laplace(&mut self) -> f64 {
            let u = self.uniform() - 0.5;
            -u.signum() * (1.0 - 2.0 * u.abs()).ln() / std::f64::consts::SQRT_2
        }
        /// Gamma(4) standardised (sd 1, skewness 1): runs are sometimes
        /// much slower, rarely much faster.
        fn skewed(&mut self) -> f64 {
            let sum: f64 = (0..4).map(|_| -self.uniform().ln()).sum();
            (sum - 4.0) / 2.0
        }
        /// Exponential standardised (skewness 2): the extreme case.
        fn very_skewed(&mut self) -> f64 {
            -self.uniform().ln() - 1.0
        }
    }

    #[test]
    fn t_quantiles_match_tables() {
        for (df, t) in [
            (1, 12.706),
            (2, 4.303),
            (3, 3.182),
            (4, 2.776),
            (9, 2.262),
            (19, 2.093),
            (30, 2.042),
            (120, 1.980),
        ] {
            let q = t_quantile(0.95, df);
            assert!((q - t).abs() < 0.001, "df {df}: {q} vs {t}");
        }
    }

    #[test]
    fn a_tenfold_slowdown_is_a_material_regression_against_one_run_s_noise() {
        // The issue's reproduction: p50 2.40 ms in 20 baseline runs
        // (±2 %), then 20.4 ms.
        let a: Vec<f64> = (0..20)
            .map(|i| 2.4e6 * (1.0 + 0.02 * ((i % 5) as f64 - 2.0) / 2.0))
            .collect();
        let m = Metric::latency("p50", MARGIN_P50);
        let c = compare_one_run(&m, &a, 20.4e6).unwrap();
        assert_eq!(c.verdict, Verdict::Regression { material: true });
        assert_eq!(c.design, Design::Prediction { baseline_runs: 20 });
        let (lo, hi) = c.ci.unwrap();
        assert!(lo > 7.0 && hi < 8.0 && lo < c.estimate && c.estimate < hi);
        // The same run against itself is no change.
        // The same run against itself is no change (±2 % noise is too much
        // for one run to show equivalence within ±2 %: inconclusive).
        let c = compare_one_run(&m, &a, c.a).unwrap();
        assert!(matches!(c.verdict, Verdict::Inconclusive { .. }), "{c:?}");
        // One baseline run: no spread, no verdict.
        let c = compare_one_run(&m, &a[..1], 20.4e6).unwrap();
        assert_eq!(c.verdict, Verdict::NoVerdict);
        assert!(c.ci.is_none());
    }

    #[test]
    fn errors_compare_in_points() {
        let m = crate::runs::metrics()
            .into_iter()
            .find(|m| m.name == crate::headline::FAILED)
            .unwrap();
        let a = [0.0, 0.001, 0.0, 0.0, 0.002];
        let c = compare_one_run(&m, &a, 1.0).unwrap();
        assert_eq!(c.verdict, Verdict::Regression { material: true });
        let c = compare_one_run(&m, &a, 0.0).unwrap();
        assert!(!matches!(c.verdict, Verdict::Regression { .. }));
    }

    /// A/A: the gate's false alarms (a regression called when nothing
    /// changed), for each shape of run-to-run noise. 20,000 trials put
    /// the Monte Carlo error of a 5 % rate near ±0.15 pt; the seeds are
    /// fixed, so the figures (docs/STATISTICS.md) are reproducible.
    #[test]
    fn a_a_false_alarms_are_at_most_five_percent() {
        let trials = 20_000;
        for runs in [3, 5, 10, 20] {
            for (shape, seed) in [
                ("normal", 1),
                ("laplace", 2),
                ("skewed", 3),
                ("exponential", 4),
            ] {
                let mut rng = Rng(seed * 1000 + runs as u64);
                // σ = 3 % of run-to-run noise; the rates do not depend on σ.
                let mut draw = || {
                    0.03 * match shape {
                        "normal" => rng.normal(),
                        "laplace" => rng.laplace(),
                        "skewed" => rng.skewed(),
                        _ => rng.very_skewed(),
                    }
                };
                let regressions = detection_rate(runs, 0.0, trials, CONFIDENCE, &mut draw);
                let limit = match shape {
                    // Exact in theory: 2.5 % above (and 2.5 % below).
                    "normal" => 0.03,
                    "laplace" | "skewed" => 0.05,
                    // The documented limit: noise as skewed as an
                    // exponential (skewness 2) false-alarms 6-8 %.
                    _ => 0.08,
                };
                assert!(
                    regressions <= limit,
                    "{shape}, {runs} baseline runs: {:.2} % false regressions",
                    regressions * 100.0
                );
                if shape == "normal" {
                    assert!(regressions > 0.02, "{runs} runs: {regressions}");
                    // Either direction: 5 % in all.
                    let improvements = detection_rate(runs, 0.0, trials, CONFIDENCE, || -draw());
                    assert!(regressions + improvements <= 0.055);
                }
            }
        }
    }

    /// Power: a +10 % p50 shift is caught at least 90 % of the time at the
    /// run-to-run noise of p50 measured on this project's test machine
    /// (σ of ln p50 = 1.3 % over 20 runs of `--rate 300 -d 2s` against
    /// `pelt serve` with a 2 ms delay; docs/STATISTICS.md), with 5, 10 and
    /// 20 baseline runs, at the gate's Bonferroni level; and that a noisier
    /// machine would not do.
    #[test]
    fn a_ten_percent_shift_is_caught_at_the_measured_noise() {
        const MEASURED_SIGMA: f64 = 0.013;
        // The gate's interval for p50 in a rate run: six metrics compared.
        const GATE: f64 = 1.0 - 0.10 / 6.0;
        for runs in [5, 10, 20] {
            let mut rng = Rng(77 + runs as u64);
            let power = detection_rate(runs, 0.10, 10_000, GATE, || MEASURED_SIGMA * rng.normal());
            assert!(power >= 0.90, "{runs} runs: caught {:.1} %", power * 100.0);
        }
        // At σ = 3 % a single run is too noisy for a 10 % shift.
        let mut rng = Rng(5);
        let power = detection_rate(5, 0.10, 10_000, GATE, || 0.03 * rng.normal());
        assert!(power < 0.6, "{power}");
    }

    /// The gate as `pelt run --baseline last:N --fail-on regression` uses
    /// it: every metric of a rate run, the four latencies each with their
    /// own noise (independent: the worst case for the correction), no
    /// errors, all sent. A/A, it fails at most 5 % of the time.
    #[test]
    fn the_gate_over_all_metrics_false_alarms_at_most_five_percent() {
        let trials = 10_000;
        for runs in [5, 10, 20] {
            let mut rng = Rng(500 + runs as u64);
            let mut run = || -> Vec<f64> {
                let mut v: Vec<f64> = (1..=4)
                    .map(|k| k as f64 * 1e6 * (0.03 * rng.normal()).exp())
                    .collect();
                v.extend([0.0, f64::NAN, 1.0]);
                v
            };
            let mut alarms = 0;
            for _ in 0..trials {
                let a: Vec<Vec<f64>> = (0..runs).map(|_| run()).collect();
                if crate::runs::regressed(&compare_values(&a, &run()), false) {
                    alarms += 1;
                }
            }
            let rate = alarms as f64 / trials as f64;
            assert!(rate <= 0.05, "{runs} runs: {:.2} %", rate * 100.0);
            assert!(rate > 0.01, "{runs} runs: {rate} (the gate never fires?)");
        }
    }

    #[test]
    fn values_follow_the_metrics_and_their_load_models() {
        let run = |p50: f64| vec![p50, p50, p50, p50, 0.0, f64::NAN, 1.0];
        let a: Vec<Vec<f64>> = (0..10).map(|i| run(2e6 + 1e4 * i as f64)).collect();
        let rows = compare_values(&a, &run(20e6));
        assert_eq!(rows.len(), metrics().len());
        assert!(crate::runs::regressed(&rows, true));
        // Throughput is fixed by a rate run's schedule: not compared.
        assert!(rows[5].result.is_err());
        // Six metrics compared: 98.3 % intervals each, so that the gate
        // over all six false-alarms at most 5 %.
        let c = rows[0].result.as_ref().unwrap();
        assert!((c.confidence.unwrap() - (1.0 - 0.10 / 6.0)).abs() < 1e-12);
        let rows = compare_values(&a, &run(2.04e6));
        assert!(!crate::runs::regressed(&rows, false));
        assert!(gate_has_verdict(&rows));
        // Two runs a side: no rank interval, nothing a gate may pass on.
        let rows = crate::runs::compare_values(&a[..2], &a[2..4], false);
        assert!(!gate_has_verdict(&rows));
    }
}
