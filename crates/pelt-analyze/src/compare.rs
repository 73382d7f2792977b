//! Before/after comparisons of runs, with a verdict per metric.
//!
//! # Why the run, not the request
//!
//! Requests within a run share the run's conditions (the machine's state,
//! the cache, the neighbours, the JIT, GC phases): they are strongly
//! autocorrelated, and two runs of the *same* build differ by more than
//! their request-level standard errors suggest. A test that pools requests
//! treats hundreds of thousands of correlated samples as independent and
//! calls identical configurations "significantly different" most of the
//! time. The independent unit is the run, so each input value here is one
//! run's figure (its p99, its throughput, its failed share), and the sample
//! size is the number of runs.
//!
//! # Designs
//!
//! - **Paired** ([`compare_paired`]): A and B were run in `n` blocks (A then
//!   B, or interleaved), block `i` giving `a[i]` and `b[i]`. Whatever drifts
//!   between blocks (time of day, thermal state) is shared within a block and
//!   cancels in `d_i = ln(b_i / a_i)` (ratio scale) or `d_i = b_i − a_i`
//!   (points scale). Estimate: the Hodges–Lehmann centre of the `d_i`; 95 %
//!   interval from the Wilcoxon signed-rank distribution.
//! - **Unpaired** ([`compare_unpaired`]): two independent sets of runs.
//!   Estimate: the Hodges–Lehmann shift, the median of all differences
//!   `ln b_j − ln a_i` (or `b_j − a_i`); 95 % interval from the Mann–Whitney
//!   distribution. Needs more runs than pairing for the same precision.
//! - **One run per side**: nothing measures run-to-run noise, so no interval
//!   and no verdict ([`Verdict::NoVerdict`]); only the difference is given.
//!
//! On a ratio scale the estimate and interval are reported as relative
//! changes, `exp(x) − 1` (e.g. `0.08` = B is 8 % higher than A).
//!
//! # Verdicts
//!
//! With `[L, U]` the interval on the scale of the `d_i` (log or points) and
//! `δ` the metric's margin, let the band be `[ln(1 − δ), ln(1 + δ)]` (ratio)
//! or `[−δ, +δ]` (points). On the reported relative scale this band is
//! exactly `[−δ, +δ]`: "within δ" means "within ±δ·100 % of A".
//!
//! 1. `L > 0` (B higher) or `U < 0` (B lower): the interval excludes no
//!    change, so the change is real: [`Verdict::Regression`] or
//!    [`Verdict::Improvement`] according to the metric's [`Direction`].
//!    It is `material` when the whole interval lies beyond the band on
//!    that side (`L > ln(1 + δ)`, or `U < ln(1 − δ)`): the change is real
//!    *and* bigger than the margin.
//! 2. Otherwise, when the whole interval lies inside the band
//!    (`ln(1 − δ) ≤ L` and `U ≤ ln(1 + δ)`): [`Verdict::Equivalent`].
//! 3. Otherwise [`Verdict::Inconclusive`]: the runs cannot tell a change
//!    bigger than δ from none.
//!
//! A small but real change (interval excludes 0, lies inside the band) is
//! therefore a regression or improvement with `material: false`, not
//! "equivalent": callers that gate on size should gate on `material`.
//!
//! # How many blocks
//!
//! For an inconclusive result, `blocks_needed ≈ 8.2·(σ_D/δ)²`, with `σ_D`
//! the sample standard deviation of the `d_i` and `δ` on the scale of the
//! `d_i` (`ln(1 + δ)` on a ratio scale, the smaller half of the band, so
//! the estimate errs high). This is the paired t-test's sample size for a
//! two-sided 5 % test with 80 % power to detect a shift of δ,
//! `(z₀.₉₇₅ + z₀.₈₀)² = (1.960 + 0.842)² ≈ 7.85`, divided by the Wilcoxon
//! test's asymptotic relative efficiency under normal noise, `3/π ≈ 0.955`,
//! giving `≈ 8.2`. It is never below the smallest `n` that gives a 95 %
//! interval at all (6). For unpaired runs the figure is *runs per side*,
//! `2·8.2·(s_p/δ)²` with `s_p` the pooled standard deviation of the
//! (log) values, never below 4. It is a planning figure, not a promise:
//! it assumes the noise seen so far is the noise to come.

use serde::{Deserialize, Serialize};

use crate::error::{AnalyzeError, Side};
use crate::rank::{
    hodges_lehmann_one_sample, hodges_lehmann_shift, mann_whitney_ci, mann_whitney_k, median,
    signed_rank_ci, signed_rank_k,
};

/// Confidence level of every interval in a [`Comparison`].
pub const CONFIDENCE: f64 = 0.95;

/// Default margin for throughput (relative: 2 %).
pub const MARGIN_THROUGHPUT: f64 = 0.02;
/// Default margin for the median latency (relative: 2 %).
pub const MARGIN_P50: f64 = 0.02;
/// Default margin for p90 latency (relative: 5 %).
pub const MARGIN_P90: f64 = 0.05;
/// Default margin for p99 latency (relative: 5 %).
pub const MARGIN_P99: f64 = 0.05;
/// Default margin for p99.9 latency (relative: 10 %).
pub const MARGIN_P999: f64 = 0.10;

/// `(z₀.₉₇₅ + z₀.₈₀)² / (3/π)`: blocks per `(σ_D/δ)²` for a 5 % two-sided
/// Wilcoxon test with 80 % power (see the module docs).
pub const BLOCKS_FACTOR: f64 = 8.2;

/// How the per-block difference is formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// Positive quantities that change by factors (latency, throughput):
    /// `d = ln(b / a)`, reported as a relative change, margin relative.
    Ratio,
    /// Quantities compared by difference (the failed share, a fraction):
    /// `d = b − a`, reported as a difference, margin absolute.
    Points,
}

/// Which way is bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Latency, the failed share: up is a regression.
    HigherIsWorse,
    /// Throughput: up is an improvement.
    HigherIsBetter,
}

/// A metric to compare, with its margin of indifference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Name, as reported (e.g. `"p99"`).
    pub name: String,
    /// How differences are formed.
    pub scale: Scale,
    /// Which way is bad.
    pub direction: Direction,
    /// The smallest change that matters: relative on a ratio scale (0.05 =
    /// 5 %, must be in (0, 1)), absolute on a points scale (must be > 0).
    pub margin: f64,
}

impl Metric {
    /// A metric with every field given.
    pub fn new(name: impl Into<String>, scale: Scale, direction: Direction, margin: f64) -> Self {
        Metric {
            name: name.into(),
            scale,
            direction,
            margin,
        }
    }

    /// A latency (ratio scale, higher is worse), e.g.
    /// `Metric::latency("p99", MARGIN_P99)`.
    pub fn latency(name: impl Into<String>, margin: f64) -> Self {
        Metric::new(name, Scale::Ratio, Direction::HigherIsWorse, margin)
    }

    /// Throughput (ratio scale, higher is better) with [`MARGIN_THROUGHPUT`].
    pub fn throughput() -> Self {
        Metric::new(
            "throughput",
            Scale::Ratio,
            Direction::HigherIsBetter,
            MARGIN_THROUGHPUT,
        )
    }
}

/// The outcome for one metric (see the module docs for the rules).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    /// B is worse.
    Regression {
        /// The whole interval lies beyond the margin.
        material: bool,
    },
    /// B is better.
    Improvement {
        /// The whole interval lies beyond the margin.
        material: bool,
    },
    /// The whole interval lies within the margin: no change that matters.
    Equivalent,
    /// The runs cannot tell.
    Inconclusive {
        /// About how many blocks (paired) or runs per side (unpaired)
        /// would; `None` when the noise could not be estimated.
        blocks_needed: Option<u32>,
    },
    /// One run per side: run-to-run noise is unknown, so no verdict.
    NoVerdict,
}

/// How the runs were arranged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Design {
    /// A and B in blocks, one run of each per block.
    Paired {
        /// Blocks compared.
        blocks: usize,
    },
    /// Independent sets of runs.
    Unpaired {
        /// A's runs.
        runs_a: usize,
        /// B's runs.
        runs_b: usize,
    },
    /// One new run against a prediction interval of baseline runs
    /// (`predict`).
    Prediction {
        /// The baseline's runs.
        baseline_runs: usize,
    },
}

/// The comparison of one metric between A (baseline) and B (candidate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The metric's name.
    pub metric: String,
    /// Median of A's runs.
    pub a: f64,
    /// Median of B's runs.
    pub b: f64,
    /// Hodges–Lehmann estimate of the change from A to B: relative
    /// (`0.08` = +8 %) on a ratio scale, a difference on a points scale.
    pub estimate: f64,
    /// Confidence interval of the change, on the same scale as `estimate`.
    /// None with one run per side or too few runs for a 95 % interval.
    pub ci: Option<(f64, f64)>,
    /// Confidence level the interval achieves (≥ 0.95; discrete).
    pub confidence: Option<f64>,
    /// Independent units: blocks (paired) or runs in all (unpaired).
    pub n: usize,
    /// How the runs were arranged.
    pub design: Design,
    /// The verdict.
    pub verdict: Verdict,
    /// The runs on the scale of the differences, for judging several
    /// metrics as one family ([`crate::family`]); not reported.
    #[serde(skip)]
    pub sample: Option<Sample>,
}

/// Compares paired runs: `a[i]` and `b[i]` come from block `i`.
///
/// Errors when the lengths differ, a side is empty, a value is not finite,
/// a ratio-scale value is not positive, or the margin is unusable.
pub fn compare_paired(metric: &Metric, a: &[f64], b: &[f64]) -> Result<Comparison, AnalyzeError> {
    check_metric(metric)?;
    if a.len() != b.len() {
        return Err(AnalyzeError::LengthMismatch {
            metric: metric.name.clone(),
            a: a.len(),
            b: b.len(),
        });
    }
    let xa = transform(metric, Side::A, a)?;
    let xb = transform(metric, Side::B, b)?;
    let d: Vec<f64> = xa.iter().zip(&xb).map(|(x, y)| y - x).collect();
    let n = d.len();
    let mut out = Comparison {
        metric: metric.name.clone(),
        a: median(a),
        b: median(b),
        estimate: report(metric, hodges_lehmann_one_sample(&d)),
        ci: None,
        confidence: None,
        n,
        design: Design::Paired { blocks: n },
        verdict: Verdict::NoVerdict,
        sample: Some(Sample::Paired(d.clone())),
    };
    if n == 1 {
        return Ok(out);
    }
    let ci = signed_rank_ci(&d, CONFIDENCE);
    out.verdict = match ci {
        Some((lo, hi, _)) => decide(metric, lo, hi),
        None => Verdict::Inconclusive {
            blocks_needed: None,
        },
    };
    if let Verdict::Inconclusive { .. } = out.verdict {
        let min = min_size(|k| signed_rank_k(k, CONFIDENCE));
        out.verdict = Verdict::Inconclusive {
            blocks_needed: sample_sd(&d).and_then(|sd| needed(metric, sd, BLOCKS_FACTOR, min)),
        };
    }
    if let Some((lo, hi, achieved)) = ci {
        out.ci = Some((report(metric, lo), report(metric, hi)));
        out.confidence = Some(achieved);
    }
    Ok(out)
}

/// Compares two independent sets of runs of A and B.
///
/// Errors when a side is empty, a value is not finite, a ratio-scale value
/// is not positive, or the margin is unusable.
pub fn compare_unpaired(metric: &Metric, a: &[f64], b: &[f64]) -> Result<Comparison, AnalyzeError> {
    check_metric(metric)?;
    let xa = transform(metric, Side::A, a)?;
    let xb = transform(metric, Side::B, b)?;
    let mut out = Comparison {
        metric: metric.name.clone(),
        a: median(a),
        b: median(b),
        estimate: report(metric, hodges_lehmann_shift(&xa, &xb)),
        ci: None,
        confidence: None,
        n: a.len() + b.len(),
        design: Design::Unpaired {
            runs_a: a.len(),
            runs_b: b.len(),
        },
        verdict: Verdict::NoVerdict,
        sample: Some(Sample::Unpaired(xa.clone(), xb.clone())),
    };
    if a.len() == 1 && b.len() == 1 {
        return Ok(out);
    }
    let ci = mann_whitney_ci(&xa, &xb, CONFIDENCE);
    out.verdict = match ci {
        Some((lo, hi, _)) => decide(metric, lo, hi),
        None => Verdict::Inconclusive {
            blocks_needed: None,
        },
    };
    if let Verdict::Inconclusive { .. } = out.verdict {
        let min = min_size(|k| mann_whitney_k(k, k, CONFIDENCE));
        out.verdict = Verdict::Inconclusive {
            blocks_needed: pooled_sd(&xa, &xb)
                .and_then(|sd| needed(metric, sd, 2.0 * BLOCKS_FACTOR, min)),
        };
    }
    if let Some((lo, hi, achieved)) = ci {
        out.ci = Some((report(metric, lo), report(metric, hi)));
        out.confidence = Some(achieved);
    }
    Ok(out)
}

pub(crate) fn check_metric(metric: &Metric) -> Result<(), AnalyzeError> {
    let m = metric.margin;
    let ok = m.is_finite() && m > 0.0 && (metric.scale == Scale::Points || m < 1.0);
    if ok {
        Ok(())
    } else {
        Err(AnalyzeError::InvalidMargin {
            metric: metric.name.clone(),
            margin: m,
        })
    }
}

/// Checks the values and maps them to the scale differences are taken on.
pub(crate) fn transform(
    metric: &Metric,
    side: Side,
    values: &[f64],
) -> Result<Vec<f64>, AnalyzeError> {
    if values.is_empty() {
        return Err(AnalyzeError::Empty {
            metric: metric.name.clone(),
            side,
        });
    }
    values
        .iter()
        .enumerate()
        .map(|(index, &value)| {
            if !value.is_finite() {
                return Err(AnalyzeError::NotFinite {
                    metric: metric.name.clone(),
                    side,
                    index,
                    value,
                });
            }
            match metric.scale {
                Scale::Points => Ok(value),
                Scale::Ratio if value > 0.0 => Ok(value.ln()),
                Scale::Ratio => Err(AnalyzeError::NonPositive {
                    metric: metric.name.clone(),
                    side,
                    index,
                    value,
                }),
            }
        })
        .collect()
}

/// From the scale of the differences to the reported scale.
pub(crate) fn report(metric: &Metric, x: f64) -> f64 {
    match metric.scale {
        Scale::Ratio => x.exp_m1(),
        Scale::Points => x,
    }
}

/// The band `[low, high]` of "no change that matters", on the scale of the
/// differences.
fn band(metric: &Metric) -> (f64, f64) {
    let m = metric.margin;
    match metric.scale {
        Scale::Ratio => ((-m).ln_1p(), m.ln_1p()),
        Scale::Points => (-m, m),
    }
}

/// The verdict for an interval `[lo, hi]` on the scale of the differences.
pub(crate) fn decide(metric: &Metric, lo: f64, hi: f64) -> Verdict {
    let (band_lo, band_hi) = band(metric);
    let up = |material| match metric.direction {
        Direction::HigherIsWorse => Verdict::Regression { material },
        Direction::HigherIsBetter => Verdict::Improvement { material },
    };
    let down = |material| match metric.direction {
        Direction::HigherIsWorse => Verdict::Improvement { material },
        Direction::HigherIsBetter => Verdict::Regression { material },
    };
    if lo > 0.0 {
        up(lo > band_hi)
    } else if hi < 0.0 {
        down(hi < band_lo)
    } else if band_lo <= lo && hi <= band_hi {
        Verdict::Equivalent
    } else {
        Verdict::Inconclusive {
            blocks_needed: None,
        }
    }
}

/// Sample standard deviation (n − 1); None for fewer than two values.
fn sample_sd(x: &[f64]) -> Option<f64> {
    if x.len() < 2 {
        return None;
    }
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    let ss: f64 = x.iter().map(|v| (v - mean).powi(2)).sum();
    Some((ss / (x.len() - 1) as f64).sqrt())
}

/// Pooled standard deviation of two samples; None without a degree of
/// freedom.
fn pooled_sd(a: &[f64], b: &[f64]) -> Option<f64> {
    let df = (a.len() + b.len()).checked_sub(2).filter(|&df| df > 0)?;
    let ss = |x: &[f64]| {
        let mean = x.iter().sum::<f64>() / x.len() as f64;
        x.iter().map(|v| (v - mean).powi(2)).sum::<f64>()
    };
    Some(((ss(a) + ss(b)) / df as f64).sqrt())
}

/// Smallest size for which `k_of` gives an interval (searched up to the
/// exact limit; the 95 % answers are 6 and 4).
fn min_size(k_of: impl Fn(usize) -> Option<(usize, f64)>) -> u32 {
    (1..=crate::rank::EXACT_MAX_N)
        .find(|&k| k_of(k).is_some())
        .unwrap_or(crate::rank::EXACT_MAX_N) as u32
}

/// `factor·(sd/δ)²`, rounded up, at least `min`; δ on the scale of the
/// differences (`ln(1 + δ)` on a ratio scale).
fn needed(metric: &Metric, sd: f64, factor: f64, min: u32) -> Option<u32> {
    let delta = match metric.scale {
        Scale::Ratio => metric.margin.ln_1p(),
        Scale::Points => metric.margin,
    };
    let n = (factor * (sd / delta).powi(2)).ceil();
    if !n.is_finite() {
        return None;
    }
    // Saturating cast: an absurd figure still reads as "very many".
    Some((n as u32).max(min))
}

/// A row's runs on the scale its differences are taken on (log for a
/// ratio metric), kept for the family's relabellings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Sample {
    /// Paired blocks: `ln(b_i / a_i)` (or `b_i − a_i`), block by block.
    Paired(Vec<f64>),
    /// Unpaired runs: A's and B's values, run by run.
    Unpaired(Vec<f64>, Vec<f64>),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p99() -> Metric {
        Metric::latency("p99", MARGIN_P99)
    }

    fn error_rate() -> Metric {
        Metric::new("error_rate", Scale::Points, Direction::HigherIsWorse, 0.01)
    }

    #[test]
    fn rejects_bad_input() {
        let m = p99();
        assert!(matches!(
            compare_paired(&m, &[1.0, 2.0], &[1.0]),
            Err(AnalyzeError::LengthMismatch { a: 2, b: 1, .. })
        ));
        assert!(matches!(
            compare_paired(&m, &[], &[]),
            Err(AnalyzeError::Empty { side: Side::A, .. })
        ));
        assert!(matches!(
            compare_unpaired(&m, &[1.0], &[]),
            Err(AnalyzeError::Empty { side: Side::B, .. })
        ));
        assert!(matches!(
            compare_paired(&m, &[1.0, f64::NAN], &[1.0, 2.0]),
            Err(AnalyzeError::NotFinite {
                side: Side::A,
                index: 1,
                ..
            })
        ));
        assert!(matches!(
            compare_unpaired(&m, &[1.0], &[f64::INFINITY]),
            Err(AnalyzeError::NotFinite {
                side: Side::B,
                index: 0,
                ..
            })
        ));
        assert!(matches!(
            compare_paired(&m, &[1.0, 2.0], &[1.0, 0.0]),
            Err(AnalyzeError::NonPositive {
                side: Side::B,
                index: 1,
                ..
            })
        ));
        // Zero is fine on a points scale.
        assert!(compare_paired(&error_rate(), &[0.0, 0.0], &[0.0, 0.01]).is_ok());
        for margin in [0.0, -0.1, 1.0, f64::NAN] {
            let m = Metric::latency("p99", margin);
            assert!(matches!(
                compare_paired(&m, &[1.0], &[1.0]),
                Err(AnalyzeError::InvalidMargin { .. })
            ));
        }
        // An absolute margin above 1 is fine on a points scale.
        let m = Metric::new("x", Scale::Points, Direction::HigherIsWorse, 5.0);
        assert!(compare_paired(&m, &[1.0], &[1.0]).is_ok());
        let msg = compare_paired(&p99(), &[1.0], &[-1.0])
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("must be positive") && msg.contains("points scale"),
            "{msg}"
        );
    }

    #[test]
    fn one_run_per_side_gives_no_verdict() {
        let c = compare_paired(&p99(), &[100.0], &[110.0]).unwrap();
        assert_eq!(c.verdict, Verdict::NoVerdict);
        assert!((c.estimate - 0.10).abs() < 1e-12);
        assert_eq!((c.ci, c.confidence, c.n), (None, None, 1));
        let c = compare_unpaired(&error_rate(), &[0.01], &[0.03]).unwrap();
        assert_eq!(c.verdict, Verdict::NoVerdict);
        assert!((c.estimate - 0.02).abs() < 1e-12);
        // One run on one side only: an interval is still impossible at 95 %,
        // but the other side's spread gives a plan.
        let c = compare_unpaired(&p99(), &[100.0], &[101.0, 99.0, 102.0, 100.5, 98.0]).unwrap();
        assert_eq!(c.ci, None);
        assert!(matches!(c.verdict, Verdict::Inconclusive { blocks_needed: Some(n) } if n >= 4));
    }

    /// The verdict rules on hand-made intervals (log scale for p99, margin
    /// 5 %: band [ln 0.95, ln 1.05] = [−0.0513, +0.0488]).
    #[test]
    fn verdict_rules() {
        let m = p99();
        let l = |x: f64| x.ln_1p();
        assert_eq!(
            decide(&m, l(0.06), l(0.20)),
            Verdict::Regression { material: true }
        );
        assert_eq!(
            decide(&m, l(0.04), l(0.20)),
            Verdict::Regression { material: false }
        );
        assert_eq!(
            decide(&m, l(0.01), l(0.02)),
            Verdict::Regression { material: false }
        );
        assert_eq!(
            decide(&m, l(-0.20), l(-0.06)),
            Verdict::Improvement { material: true }
        );
        // −5 % on the relative scale is the band's edge, not beyond it.
        assert_eq!(
            decide(&m, l(-0.20), l(-0.05)),
            Verdict::Improvement { material: false }
        );
        assert_eq!(decide(&m, l(-0.049), l(0.049)), Verdict::Equivalent);
        assert_eq!(decide(&m, l(-0.05), l(0.05)), Verdict::Equivalent);
        assert_eq!(
            decide(&m, l(-0.051), l(0.03)),
            Verdict::Inconclusive {
                blocks_needed: None
            }
        );
        assert_eq!(
            decide(&m, l(-0.01), l(0.06)),
            Verdict::Inconclusive {
                blocks_needed: None
            }
        );
        // An interval touching 0 does not exclude it.
        assert_eq!(
            decide(&m, 0.0, l(0.2)),
            Verdict::Inconclusive {
                blocks_needed: None
            }
        );
        // Higher is better: the directions swap.
        let t = Metric::throughput();
        assert_eq!(
            decide(&t, l(-0.10), l(-0.03)),
            Verdict::Regression { material: true }
        );
        assert_eq!(
            decide(&t, l(0.01), l(0.03)),
            Verdict::Improvement { material: false }
        );
        // Points: absolute band ±0.01.
        let e = error_rate();
        assert_eq!(
            decide(&e, 0.02, 0.05),
            Verdict::Regression { material: true }
        );
        assert_eq!(decide(&e, -0.005, 0.009), Verdict::Equivalent);
    }

    #[test]
    fn paired_regression_reported_as_relative_change() {
        let a = [
            100.0, 104.0, 98.0, 101.0, 106.0, 102.0, 99.0, 103.0, 97.0, 100.0,
        ];
        let b: Vec<f64> = a
            .iter()
            .enumerate()
            .map(|(i, x)| x * (1.2 + 0.01 * (i % 3) as f64))
            .collect();
        let c = compare_paired(&p99(), &a, &b).unwrap();
        assert_eq!(c.verdict, Verdict::Regression { material: true });
        let (lo, hi) = c.ci.unwrap();
        assert!(lo >= 0.2 - 1e-9 && hi <= 0.22 + 1e-9 && lo <= c.estimate && c.estimate <= hi);
        // d: 4 × ln 1.20, 3 × ln 1.21, 3 × ln 1.22. Sorted Walsh averages:
        // 10 × ln 1.20, 12 × (ln 1.20 + ln 1.21)/2, then 12 ×
        // (ln 1.20 + ln 1.22)/2 (just below ln 1.21), which holds the 28th
        // of 55: the estimate is √(1.20 · 1.22) − 1.
        assert!((c.estimate - ((1.2f64 * 1.22).sqrt() - 1.0)).abs() < 1e-12);
        assert!((c.confidence.unwrap() - (1.0 - 50.0 / 1024.0)).abs() < 1e-12);
        assert_eq!(
            (c.a, c.n, c.design),
            (100.5, 10, Design::Paired { blocks: 10 })
        );
        // The same runs, throughput: B higher is better.
        let c = compare_paired(&Metric::throughput(), &a, &b).unwrap();
        assert_eq!(c.verdict, Verdict::Improvement { material: true });
    }

    #[test]
    fn equivalent_when_the_interval_is_inside_the_margin() {
        let a = [100.0, 104.0, 98.0, 101.0, 106.0, 102.0, 99.0, 103.0];
        let wiggle = [0.01, -0.01, 0.005, -0.008, 0.0, 0.012, -0.004, -0.011];
        let b: Vec<f64> = a.iter().zip(wiggle).map(|(x, w)| x * (1.0 + w)).collect();
        let c = compare_paired(&p99(), &a, &b).unwrap();
        assert_eq!(c.verdict, Verdict::Equivalent);
        let c = compare_unpaired(&p99(), &a, &b).unwrap();
        assert_eq!(c.verdict, Verdict::Equivalent, "{c:?}");
        assert_eq!(
            c.design,
            Design::Unpaired {
                runs_a: 8,
                runs_b: 8
            }
        );
    }

    #[test]
    fn inconclusive_estimates_blocks_needed() {
        // d = ±2 alternating, n = 6: the interval is [W_(1), W_(21)] =
        // [−2, 2], wider than the band ±1. σ_D² = 6·4/5 = 4.8, so
        // 8.2 · 4.8 = 39.36 → 40 blocks.
        let m = Metric::new("x", Scale::Points, Direction::HigherIsWorse, 1.0);
        let a = [10.0; 6];
        let b = [8.0, 12.0, 8.0, 12.0, 8.0, 12.0];
        let c = compare_paired(&m, &a, &b).unwrap();
        assert_eq!(c.ci, Some((-2.0, 2.0)));
        assert_eq!(
            c.verdict,
            Verdict::Inconclusive {
                blocks_needed: Some(40)
            }
        );
        // Too few blocks for any 95 % interval: at least 6, whatever the noise.
        let c = compare_paired(&p99(), &[100.0, 101.0, 100.5], &[100.2, 101.1, 100.4]).unwrap();
        assert_eq!((c.ci, c.confidence), (None, None));
        assert_eq!(
            c.verdict,
            Verdict::Inconclusive {
                blocks_needed: Some(6)
            }
        );
        // Unpaired: runs per side, 2 · 8.2 · (s_p/δ)², at least 4.
        let c = compare_unpaired(&m, &[10.0, 12.0, 8.0], &[9.0, 13.0, 11.0]).unwrap();
        // s_p² = (8 + 8)/4 = 4 → 16.4 · 4 = 65.6 → 66.
        assert_eq!(
            c.verdict,
            Verdict::Inconclusive {
                blocks_needed: Some(66)
            }
        );
    }

    #[test]
    fn unpaired_shift() {
        let a = [
            100.0, 104.0, 98.0, 101.0, 106.0, 102.0, 99.0, 103.0, 97.0, 100.0,
        ];
        let b: Vec<f64> = a.iter().map(|x| x * 1.3).collect();
        let c = compare_unpaired(&p99(), &a, &b).unwrap();
        assert_eq!(c.verdict, Verdict::Regression { material: true });
        assert!((c.estimate - 0.3).abs() < 1e-9, "{}", c.estimate);
        let (lo, hi) = c.ci.unwrap();
        assert!(lo > 0.05 && lo <= c.estimate && c.estimate <= hi);
        assert_eq!(c.n, 20);
    }

    #[test]
    fn serialises_as_plain_data() {
        let c = compare_paired(&p99(), &[100.0], &[110.0]).unwrap();
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["verdict"], serde_json::json!({ "kind": "no_verdict" }));
        assert_eq!(
            json["design"],
            serde_json::json!({ "kind": "paired", "blocks": 1 })
        );
        let v = Verdict::Regression { material: true };
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"kind":"regression","material":true}"#
        );
        let v = Verdict::Inconclusive {
            blocks_needed: Some(12),
        };
        let back: Verdict = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
        assert_eq!(back, v);
        let back: Comparison = serde_json::from_value(json).unwrap();
        // The runs kept for the family are not reported.
        assert_eq!(back, Comparison { sample: None, ..c });
        let m: Metric = serde_json::from_str(
            r#"{"name":"rps","scale":"ratio","direction":"higher_is_better","margin":0.02}"#,
        )
        .unwrap();
        assert_eq!(m, Metric::throughput().tap_name("rps"));
    }

    impl Metric {
        fn tap_name(mut self, name: &str) -> Self {
            self.name = name.into();
            self
        }
    }

    use crate::sim::SplitMix;

    /// The simulations' normal draws.
    trait Normal {
        fn normal(&mut self) -> f64;
    }

    impl Normal for SplitMix {
        /// Standard normal by Box–Muller (one of the pair).
        fn normal(&mut self) -> f64 {
            let (u1, u2) = (self.uniform(), self.uniform());
            (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        }
    }

    /// One paired experiment: `blocks` blocks, each running A and B once.
    /// Each run's p99 is `base · exp(e_i + 0.03·z)`: 3 % lognormal
    /// run-to-run noise, plus a block effect `e_i` shared by A and B in the
    /// block and autocorrelated across blocks (AR(1), φ = 0.7, innovations
    /// 5 %: drift of the machine over time). B is multiplied by `shift`.
    fn paired_experiment(rng: &mut SplitMix, blocks: usize, shift: f64) -> Verdict {
        const PHI: f64 = 0.7;
        const INNOVATION: f64 = 0.05;
        const NOISE: f64 = 0.03;
        let base = 50.0;
        let mut e = rng.normal() * INNOVATION / (1.0 - PHI * PHI).sqrt();
        let mut a = Vec::with_capacity(blocks);
        let mut b = Vec::with_capacity(blocks);
        for _ in 0..blocks {
            a.push(base * (e + NOISE * rng.normal()).exp());
            b.push(base * shift * (e + NOISE * rng.normal()).exp());
            e = PHI * e + INNOVATION * rng.normal();
        }
        compare_paired(&Metric::latency("p99", MARGIN_P99), &a, &b)
            .unwrap()
            .verdict
    }

    fn count(verdicts: &[Verdict], pred: impl Fn(&Verdict) -> bool) -> usize {
        verdicts.iter().filter(|v| pred(v)).count()
    }

    fn significant(v: &Verdict) -> bool {
        matches!(v, Verdict::Regression { .. } | Verdict::Improvement { .. })
    }

    /// A/A: the same build on both sides, so every regression or
    /// improvement is a false positive. The seed was fixed before the first
    /// run and not changed. The expected rate is 1 − 0.9512 = 4.9 %
    /// (n = 10, exact); 200 experiments give a binomial standard error of
    /// about 1.5 points, so the ≤ 10 bound sits at the expectation.
    #[test]
    fn simulated_a_a_rarely_calls_a_change() {
        let mut rng = SplitMix(42);
        let verdicts: Vec<Verdict> = (0..200)
            .map(|_| paired_experiment(&mut rng, 10, 1.0))
            .collect();
        let false_positives = count(&verdicts, significant);
        let equivalent = count(&verdicts, |v| *v == Verdict::Equivalent);
        println!("A/A, 200 × 10 blocks: {false_positives} significant, {equivalent} equivalent");
        assert!(false_positives <= 10, "{false_positives} of 200");
    }

    /// The same with 2,000 experiments, for a rate precise to about half a
    /// point: it must be near the nominal 4.9 %.
    #[test]
    fn simulated_a_a_rate_is_near_nominal() {
        let mut rng = SplitMix(7);
        let verdicts: Vec<Verdict> = (0..2000)
            .map(|_| paired_experiment(&mut rng, 10, 1.0))
            .collect();
        let rate = count(&verdicts, significant) as f64 / 2000.0;
        println!("A/A, 2000 × 10 blocks: false-positive rate {rate:.4}");
        // 4.9 % ± 4 standard errors (0.48 points each).
        assert!((0.03..=0.07).contains(&rate), "{rate}");
    }

    /// A true +10 % shift in B's p99 with 10 blocks: detected as a
    /// regression nearly always (σ_D ≈ 4.2 %, shift ≈ 9.5 % on the log
    /// scale).
    #[test]
    fn simulated_ten_percent_regression_is_found() {
        let mut rng = SplitMix(43);
        let verdicts: Vec<Verdict> = (0..200)
            .map(|_| paired_experiment(&mut rng, 10, 1.10))
            .collect();
        let found = count(&verdicts, |v| matches!(v, Verdict::Regression { .. }));
        let material = count(&verdicts, |v| *v == Verdict::Regression { material: true });
        println!("+10 %, 200 × 10 blocks: {found} regressions, {material} material");
        assert!(found >= 170, "{found} of 200");
        assert_eq!(
            count(&verdicts, |v| matches!(v, Verdict::Improvement { .. })),
            0
        );
    }

    /// Unpaired A/A with independent runs (no block effect to cancel):
    /// the Mann–Whitney interval's false-positive rate, m = n = 10
    /// (nominal 1 − 0.9567 = 4.3 %).
    #[test]
    fn simulated_unpaired_a_a() {
        let mut rng = SplitMix(44);
        let m = Metric::latency("p99", MARGIN_P99);
        let mut false_positives = 0;
        for _ in 0..500 {
            let a: Vec<f64> = (0..10)
                .map(|_| 50.0 * (0.03 * rng.normal()).exp())
                .collect();
            let b: Vec<f64> = (0..10)
                .map(|_| 50.0 * (0.03 * rng.normal()).exp())
                .collect();
            if significant(&compare_unpaired(&m, &a, &b).unwrap().verdict) {
                false_positives += 1;
            }
        }
        println!("unpaired A/A, 500 × (10 + 10) runs: {false_positives} significant");
        // 4.3 % of 500 = 21.6, standard error 4.5.
        assert!(false_positives <= 40, "{false_positives} of 500");
    }
}
