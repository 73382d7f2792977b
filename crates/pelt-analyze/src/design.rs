//! When the runs were made: whether a comparison's design separates the
//! change from time, and whether the runs drifted while it was made.
//!
//! # Why order matters
//!
//! Runs of the same build drift: the machine warms, a neighbour starts a
//! job, a cache fills. When every A run was made before every B run (the
//! "4 runs, change, 4 runs" recipe), whatever drifted between the two
//! halves is added to the change, and no statistic computed from the runs
//! can take it out again: the design *confounds change with time*. An A/A
//! test made that way (nothing changed, the machine got busier: the runs'
//! p99s 1.08/1.65/1.13/1.52 ms, then 1.88/2.26/2.54/3.87 ms) was called a
//! material +87 % p99 regression. Interleaved runs (A B B A ..., or
//! `pelt experiment`'s counterbalanced blocks) spread the drift over both
//! sides, where it widens the interval instead of moving the estimate.
//!
//! So [`order`] classifies the runs' start times, and a comparison whose
//! sides are [`Order::Sequential`] has its material verdicts withheld
//! ([`withhold_material`]) unless the user vouches for the conditions.
//!
//! # Drift within a side
//!
//! Each side's runs, taken in the order they started, are tested for a
//! monotone trend with the Mann–Kendall test ([`mann_kendall`]): `S`, the
//! number of later-larger pairs minus later-smaller pairs, against its
//! exact null distribution (every order of the values equally likely;
//! the counts of permutations by inversions, Mahonian numbers) up to 60
//! runs and its normal approximation beyond. It is rank-based, so one slow
//! run cannot fake a trend and the scale (ms, log ms) does not matter.
//! A trend is reported at `p ≤` [`DRIFT_ALPHA`] (10 %, not 5 %): this is a
//! screening test whose miss costs a false verdict and whose false alarm
//! costs a sentence, and with 4 runs the smallest two-sided p-value there
//! is, a strictly monotone side, is 2/24 = 0.083. Three runs or fewer
//! cannot show a trend at all (the smallest p is 0.33) and are not tested.
//!
//! Drifts are said in the report of a sequential design, where they bear
//! on the verdict; in an interleaved one they are kept in the JSON only.
//!
//! A drift seen within the sides also says how much of the change time
//! alone could make: [`Drift::over_gap`] extends the side's Theil–Sen
//! slope (the median of the pairwise slopes of `ln value` against start
//! time) over the time between the sides' median start times.

use crate::runs::Row;
use crate::{Metric, Scale, Verdict};
use serde::Serialize;

/// Two-sided level at which a side's trend over time is reported (see the
/// module docs for why 10 %).
pub const DRIFT_ALPHA: f64 = 0.10;

/// Largest `n` for which [`mann_kendall`] uses the exact distribution.
const EXACT_MAX: usize = 60;

/// How A's and B's runs were ordered in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Order {
    /// The sides' runs alternate or overlap in time.
    Interleaved,
    /// Every run of one side started before every run of the other.
    Sequential {
        /// A's runs came first (the usual before/after).
        a_first: bool,
    },
    /// A side has no start time (runs recorded before pelt kept one).
    Unknown,
}

/// How `a`'s and `b`'s runs (start times, ms since the Unix epoch) were
/// ordered. Times of 0 are unknown. One run per side is sequential too:
/// its difference is a before/after difference, whatever else it is.
pub fn order(a: &[u64], b: &[u64]) -> Order {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|&t| t == 0) {
        return Order::Unknown;
    }
    let (a_min, a_max) = (a.iter().min().unwrap(), a.iter().max().unwrap());
    let (b_min, b_max) = (b.iter().min().unwrap(), b.iter().max().unwrap());
    if a_max < b_min {
        Order::Sequential { a_first: true }
    } else if b_max < a_min {
        Order::Sequential { a_first: false }
    } else {
        Order::Interleaved
    }
}

/// A Mann–Kendall test of values in time order.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Trend {
    /// Runs tested.
    pub n: usize,
    /// Kendall's τ of value against order: +1 rose in every pair, −1 fell.
    pub tau: f64,
    /// Two-sided p-value of `S` under "no trend".
    pub p_value: f64,
}

/// The Mann–Kendall test of `values` taken in time order; `None` with
/// fewer than 4 values (no order of 3 is rarer than 1 in 3) or a NaN.
/// Tied pairs count 0 in `S` and the null distribution is the untied
/// one, which makes the test a little conservative with ties.
pub fn mann_kendall(values: &[f64]) -> Option<Trend> {
    let n = values.len();
    if n < 4 || values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let s = pelt_core::summary::stationarity::kendall_s(values);
    let pairs = (n * (n - 1) / 2) as i64;
    Some(Trend {
        n,
        tau: s as f64 / pairs as f64,
        p_value: s_p_value(n, s),
    })
}

/// `P(|S| ≥ |s|)` for `n` values in random order.
fn s_p_value(n: usize, s: i64) -> f64 {
    let pairs = n * (n - 1) / 2;
    if n > EXACT_MAX {
        // Normal approximation with continuity correction.
        let var = (n * (n - 1) * (2 * n + 5)) as f64 / 18.0;
        let z = ((s.abs() - 1).max(0)) as f64 / var.sqrt();
        return (2.0 * upper_normal(z)).min(1.0);
    }
    // counts[q]: permutations of n with q inversions (Mahonian numbers),
    // built one element at a time; S = pairs − 2q.
    let mut counts = vec![1.0f64];
    for m in 1..n {
        let mut next = vec![0.0; counts.len() + m];
        for (q, &c) in counts.iter().enumerate() {
            for extra in 0..=m {
                next[q + extra] += c;
            }
        }
        counts = next;
    }
    let total: f64 = counts.iter().sum();
    let extreme: f64 = counts
        .iter()
        .enumerate()
        .filter(|&(q, _)| (pairs as i64 - 2 * q as i64).abs() >= s.abs())
        .map(|(_, c)| c)
        .sum();
    (extreme / total).min(1.0)
}

/// `P(Z > z)` for a standard normal `Z` (Abramowitz–Stegun 7.1.26, error
/// below 1.5e-7: plenty for a screening test).
fn upper_normal(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if x >= 0.0 {
        erfc / 2.0
    } else {
        1.0 - erfc / 2.0
    }
}

/// A run reduced for the design's checks: when it started and its
/// values, in the order of `runs::metrics`.
#[derive(Debug, Clone, PartialEq)]
pub struct Timed {
    /// Start, ms since the Unix epoch (0: unknown).
    pub started_ms: u64,
    /// One value per metric.
    pub values: Vec<f64>,
}

/// A side whose metric moved with time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Drift {
    /// `a` or `b`.
    pub side: &'static str,
    /// The metric's name.
    pub metric: String,
    /// The test.
    pub trend: Trend,
    /// The side's first and last run's values, in time order.
    pub first: f64,
    /// See `first`.
    pub last: f64,
    /// The change this side's trend would make over the time between the
    /// sides' median starts (relative, `0.5` = +50 %), on a ratio scale
    /// only; `None` otherwise.
    pub over_gap: Option<f64>,
}

/// The time design of a comparison: its order and each side's drifts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeDesign {
    /// How the sides were ordered.
    pub order: Order,
    /// Metrics that trended within a side at [`DRIFT_ALPHA`].
    pub drifts: Vec<Drift>,
    /// Sides with too few runs (under 4) to test for a trend.
    pub untested: Vec<&'static str>,
    /// The user said the conditions held between the sides
    /// (`--sequential-ok`): material verdicts stand.
    pub sequential_ok: bool,
}

impl TimeDesign {
    /// Whether the change is confounded with time and the user has not
    /// vouched for the conditions: material verdicts are withheld.
    pub fn confounded(&self) -> bool {
        matches!(self.order, Order::Sequential { .. }) && !self.sequential_ok
    }
}

/// The design of comparing `b` with `a` on `metrics` (each run's values in
/// that order).
pub fn assess(metrics: &[Metric], a: &[Timed], b: &[Timed], sequential_ok: bool) -> TimeDesign {
    let starts = |runs: &[Timed]| runs.iter().map(|r| r.started_ms).collect::<Vec<_>>();
    let (ta, tb) = (starts(a), starts(b));
    let order = order(&ta, &tb);
    let gap_ms = if order == Order::Unknown {
        0.0
    } else {
        median_u64(&tb) - median_u64(&ta)
    };
    let mut drifts = Vec::new();
    let mut untested = Vec::new();
    for (side, runs) in [("a", a), ("b", b)] {
        if runs.len() < 4 || runs.iter().any(|r| r.started_ms == 0) {
            untested.push(side);
            continue;
        }
        let mut by_time: Vec<&Timed> = runs.iter().collect();
        by_time.sort_by_key(|r| r.started_ms);
        for (i, m) in metrics.iter().enumerate() {
            let values: Vec<f64> = by_time.iter().map(|r| r.values[i]).collect();
            let Some(trend) = mann_kendall(&values) else {
                continue;
            };
            if trend.p_value > DRIFT_ALPHA {
                continue;
            }
            let over_gap =
                (m.scale == Scale::Ratio && values.iter().all(|&v| v > 0.0)).then(|| {
                    let times: Vec<f64> = by_time.iter().map(|r| r.started_ms as f64).collect();
                    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
                    (theil_sen(&times, &logs) * gap_ms).exp_m1()
                });
            drifts.push(Drift {
                side,
                metric: m.name.clone(),
                trend,
                first: values[0],
                last: values[values.len() - 1],
                over_gap,
            });
        }
    }
    TimeDesign {
        order,
        drifts,
        untested,
        sequential_ok,
    }
}

fn median_u64(v: &[u64]) -> f64 {
    crate::rank::median(&v.iter().map(|&x| x as f64).collect::<Vec<_>>())
}

/// The Theil–Sen slope of `y` against `x`: the median of the pairwise
/// slopes (pairs with equal `x` skipped); 0 when there are none.
pub fn theil_sen(x: &[f64], y: &[f64]) -> f64 {
    let mut slopes = Vec::new();
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            if x[j] != x[i] {
                slopes.push((y[j] - y[i]) / (x[j] - x[i]));
            }
        }
    }
    if slopes.is_empty() {
        0.0
    } else {
        crate::rank::median(&slopes)
    }
}

/// Withholds the material verdicts of a confounded design: a material
/// regression or improvement becomes a plain one, its row marked
/// `confounded`, so `--fail-on material` cannot fire on drift. Rows whose
/// verdict is any other stay as they are, and so do one new run's
/// against a baseline's prediction interval, whose spread already holds
/// the drift between the baseline's runs (see
/// `predict::design_notes`).
pub fn withhold_material(rows: &mut [Row], design: &TimeDesign) {
    if !design.confounded() {
        return;
    }
    for row in rows {
        if let Ok(c) = &mut row.result {
            if matches!(c.design, crate::Design::Prediction { .. }) {
                continue;
            }
            match &mut c.verdict {
                Verdict::Regression { material } | Verdict::Improvement { material } => {
                    *material = false;
                    row.confounded = true;
                }
                _ => {}
            }
        }
    }
}

/// What the report says about the design, one sentence each; empty for an
/// interleaved design with no drift. `describe(value)` formats a
/// metric's value.
pub fn notes(design: &TimeDesign, describe: impl Fn(&str, f64) -> String) -> Vec<String> {
    let mut out = Vec::new();
    let side_name = |s: &str| if s == "a" { "A" } else { "B" };
    match design.order {
        Order::Sequential { a_first } => {
            let (first, then) = if a_first { ("A", "B") } else { ("B", "A") };
            out.push(format!(
                "Sequential design: every {first} run started before every {then} run, so the change is \
                 confounded with time: whatever drifted in between (load on the machine, its neighbours, \
                 caches, temperature) is inside the estimate. {}",
                if design.sequential_ok {
                    "--sequential-ok: material verdicts stand as if the conditions held."
                } else {
                    "Material verdicts are withheld (marked 'confounded with time'). Interleave the runs \
                     (A B B A ..., or pelt experiment), or pass --sequential-ok if you know the conditions held."
                }
            ));
        }
        Order::Unknown => out.push(
            "The runs' start times are unknown, so whether the design confounds change with time cannot be checked."
                .into(),
        ),
        Order::Interleaved => {}
    }
    // In an interleaved design a drift falls on both sides and only widens
    // the intervals; said there, every tenth side would carry a chance
    // "trend". The JSON keeps them all.
    let sequential = matches!(design.order, Order::Sequential { .. });
    for d in design.drifts.iter().filter(|_| sequential) {
        let dir = if d.trend.tau > 0.0 { "rose" } else { "fell" };
        let mut s = format!(
            "Drift within {}: its {} {dir} over time, {} to {} (Mann-Kendall tau {:+.2}, p = {:.3})",
            side_name(d.side),
            d.metric,
            describe(&d.metric, d.first),
            describe(&d.metric, d.last),
            d.trend.tau,
            d.trend.p_value
        );
        if let (Some(g), Order::Sequential { .. }) = (d.over_gap, design.order) {
            s.push_str(&format!(
                "; at that pace time alone would move it {:+.1} % between the sides",
                g * 100.0
            ));
        }
        s.push('.');
        out.push(s);
    }
    if matches!(design.order, Order::Sequential { .. }) && !design.untested.is_empty() {
        let who = match design.untested.as_slice() {
            [one] => format!("{} has", side_name(one)),
            _ => "A and B have".to_string(),
        };
        out.push(format!(
            "{who} too few runs (under 4) to test for drift within the side."
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::{compare_values, metrics};

    #[test]
    fn orders() {
        assert_eq!(
            order(&[1, 2, 3], &[4, 5]),
            Order::Sequential { a_first: true }
        );
        assert_eq!(
            order(&[10, 20], &[1, 5]),
            Order::Sequential { a_first: false }
        );
        assert_eq!(order(&[1, 4], &[2, 3]), Order::Interleaved);
        assert_eq!(order(&[1, 2], &[2, 3]), Order::Interleaved);
        assert_eq!(order(&[0, 2], &[3]), Order::Unknown);
        assert_eq!(order(&[], &[3]), Order::Unknown);
    }

    /// The exact null distribution against hand counts: for n = 4 the
    /// 24 orders give S = 6 once and S = 4 three times (by symmetry the
    /// same below), so P(|S| ≥ 6) = 2/24 and P(|S| ≥ 4) = 8/24.
    #[test]
    fn mann_kendall_exact_small() {
        let t = mann_kendall(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(t.tau, 1.0);
        assert!((t.p_value - 2.0 / 24.0).abs() < 1e-12);
        let t = mann_kendall(&[2.0, 1.0, 3.0, 4.0]).unwrap();
        assert!((t.tau - 4.0 / 6.0).abs() < 1e-12);
        assert!((t.p_value - 8.0 / 24.0).abs() < 1e-12);
        let t = mann_kendall(&[4.0, 3.0, 2.0, 1.0]).unwrap();
        assert_eq!(t.tau, -1.0);
        assert!(mann_kendall(&[1.0, 2.0, 3.0]).is_none());
        // 7 inversions of 45 pairs: S = 31, far out in the tail (the
        // normal approximation gives about 0.007).
        let t = mann_kendall(&[2.0, 1.0, 4.0, 3.0, 6.0, 5.0, 10.0, 7.0, 9.0, 8.0]).unwrap();
        assert!(t.p_value < 0.01, "{t:?}");
        // The normal approximation joins the exact distribution.
        let (exact, approx) = (s_p_value(60, 300), {
            let var = (60.0 * 59.0 * 125.0) / 18.0;
            2.0 * upper_normal(299.0 / f64::sqrt(var))
        });
        assert!((exact - approx).abs() < 0.005, "{exact} {approx}");
    }

    /// splitmix64 for the simulation below.
    fn rng(state: &mut u64) -> f64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Under no trend, the test flags at most its level: 4,000 sides of
    /// 4 to 12 independent runs each (seed fixed before the first run).
    /// The untied distribution is exact, so the rate sits at or just
    /// under 10 % (discreteness: n = 4 can only reach 8.3 %).
    #[test]
    fn mann_kendall_false_alarms_at_most_alpha() {
        let mut state = 2026;
        let mut flagged = 0;
        let reps = 4000;
        for i in 0..reps {
            let n = 4 + i % 9;
            let v: Vec<f64> = (0..n).map(|_| rng(&mut state)).collect();
            if mann_kendall(&v).unwrap().p_value <= DRIFT_ALPHA {
                flagged += 1;
            }
        }
        let rate = flagged as f64 / reps as f64;
        println!("no trend, {reps} sides of 4 to 12 runs: {rate:.4} flagged at p <= {DRIFT_ALPHA}");
        // Standard error ≈ 0.47 points.
        assert!(rate <= DRIFT_ALPHA + 0.015, "{rate}");
        assert!(rate >= 0.05, "{rate}");
    }

    fn run(started_ms: u64, p99: f64) -> Timed {
        Timed {
            started_ms,
            values: vec![p99 / 2.0, p99 / 1.5, p99, p99 * 1.2, 0.0, 1000.0, f64::NAN],
        }
    }

    /// The reproduction of issue 23 §1: an A/A test run as "4 runs,
    /// change, 4 runs" on a machine that got busier. The runs' p99s (ms)
    /// are the ones reported; each run took a minute.
    fn issue_a_a() -> (Vec<Timed>, Vec<Timed>) {
        let minute = 60_000;
        let t0 = 1_764_000_000_000;
        let a = [1.08, 1.65, 1.13, 1.52]
            .iter()
            .enumerate()
            .map(|(i, ms)| run(t0 + i as u64 * minute, ms * 1e6))
            .collect();
        let b = [1.88, 2.26, 2.54, 3.87]
            .iter()
            .enumerate()
            .map(|(i, ms)| run(t0 + (5 + i as u64) * minute, ms * 1e6))
            .collect();
        (a, b)
    }

    #[test]
    fn sequential_a_a_is_confounded_and_its_material_verdict_withheld() {
        let (a, b) = issue_a_a();
        let vals = |r: &[Timed]| r.iter().map(|t| t.values.clone()).collect::<Vec<_>>();
        let mut rows = compare_values(&vals(&a), &vals(&b), false);
        let p99 = |rows: &[Row]| rows[2].result.as_ref().unwrap().verdict;
        assert_eq!(p99(&rows), Verdict::Regression { material: true });
        let design = assess(&metrics(), &a, &b, false);
        assert_eq!(design.order, Order::Sequential { a_first: true });
        assert!(design.confounded());
        // B's p99 rose in every run: tau 1, p = 2/24.
        let d = design
            .drifts
            .iter()
            .find(|d| d.side == "b" && d.metric == "p99")
            .expect("B's drift found");
        assert_eq!(d.trend.tau, 1.0);
        assert!(d.over_gap.unwrap() > 0.5, "{d:?}");
        // A's p99s went up and down: no drift reported.
        assert!(!design.drifts.iter().any(|d| d.side == "a"));
        withhold_material(&mut rows, &design);
        assert_eq!(p99(&rows), Verdict::Regression { material: false });
        assert!(rows[2].confounded);
        assert!(!crate::runs::regressed(&rows, true));
        let notes = notes(&design, |_, v| format!("{v}"));
        assert!(notes[0].starts_with("Sequential design"), "{notes:?}");
        assert!(notes
            .iter()
            .any(|n| n.starts_with("Drift within B: its p99 rose")));
        // With --sequential-ok the verdicts stand.
        let design = assess(&metrics(), &a, &b, true);
        let mut rows = compare_values(&vals(&a), &vals(&b), false);
        withhold_material(&mut rows, &design);
        assert_eq!(p99(&rows), Verdict::Regression { material: true });
        assert!(!rows[2].confounded);
    }

    #[test]
    fn interleaved_runs_are_not_confounded() {
        let (a, mut b) = issue_a_a();
        for (i, r) in b.iter_mut().enumerate() {
            r.started_ms = a[i].started_ms + 30_000;
        }
        let design = assess(&metrics(), &a, &b, false);
        assert_eq!(design.order, Order::Interleaved);
        assert!(!design.confounded());
        assert!(notes(&design, |_, v| format!("{v}"))
            .iter()
            .all(|n| !n.starts_with("Sequential")));
    }

    #[test]
    fn theil_sen_is_the_median_slope() {
        // One wild point moves 4 of the 10 pairwise slopes, not the median.
        let x = [0.0, 1.0, 2.0, 3.0, 4.0];
        assert_eq!(theil_sen(&x, &[0.0, 2.0, 4.0, 6.0, 100.0]), 2.0);
        assert_eq!(theil_sen(&[1.0, 1.0], &[0.0, 5.0]), 0.0);
    }
}
