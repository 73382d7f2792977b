//! Is the run one condition, or did latency move while it ran?
//!
//! A percentile of a whole run describes one steady condition only if the
//! condition was steady. A server that warms up, leaks or shares its
//! machine with a busier neighbour gives a p99 that is an average of
//! several regimes, and a comparison of such runs compares the regimes'
//! mix. Two checks, both on the run's whole seconds:
//!
//! # Trend: Mann–Kendall on the per-second p50
//!
//! `S = Σ_{i<j} sign(x_j − x_i)` over the seconds' medians, with the
//! normal approximation `Z = (S − sign S)/√Var S`,
//! `Var S = (n(n−1)(2n+5) − Σ t(t−1)(2t+5))/18` (ties of size `t`).
//! Why this test: it is rank-based, so it needs no distribution for the
//! per-second medians (they are skewed, and a single GC pause makes an
//! outlier that would dominate a regression slope); it detects any
//! monotone change, a steady climb as well as a step (a level shift is
//! monotone too); and the seconds, not the requests, are its units, so
//! the strong correlation between neighbouring requests does not inflate
//! it. Neighbouring *seconds* can still be correlated, which makes any
//! trend test call slow wandering a trend; so pelt flags a run only when
//! the trend is both clear (`|Z| > 2.576`, p < 0.01) and large: the medians
//! of the first and last fifth of the seconds differ by at least
//! [`DRIFT_MIN`] (10 %). The message says "latency climbed from X to Y".
//!
//! # Warm-up: MSER-5
//!
//! The Marginal Standard Error Rule (White, 1997; MSER-5 as in Franklin and
//! White, 2008) picks the truncation `d` that minimises the squared
//! standard error of the mean of what is left, on batch means of 5
//! seconds: `d* = argmin_{d ≤ k/2} Σ_{j>d} (Z_j − Z̄_d)² / (k − d)²`. When
//! `d* > 0` and the truncated start differs from the rest by at least
//! [`DRIFT_MIN`], the report suggests `--warmup 5·d* s`. Nothing is
//! dropped: the figures cover the whole run, and the suggestion is for the
//! next one.

use super::IntervalRow;

/// The smallest change between the start and the end of a run (relative)
/// that a trend warning reports, and that a warm-up must show.
pub const DRIFT_MIN: f64 = 0.10;
/// `|Z|` beyond which a Mann–Kendall trend is clear: two-sided p < 0.01.
pub const MK_Z: f64 = 2.576;
/// Fewest whole seconds the trend test is run on.
pub const MIN_SECONDS: usize = 8;
/// Fewest responses a second needs for its median to count.
pub const MIN_RESPONSES: u64 = 10;
/// MSER's batch: 5 seconds.
pub const BATCH: usize = 5;

/// What the checks found.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    /// The median of the first fifth of the seconds' p50s, nanoseconds.
    pub from_ns: u64,
    /// The median of the last fifth, nanoseconds.
    pub to_ns: u64,
    /// Mann–Kendall's Z.
    pub z: f64,
    /// Seconds tested.
    pub seconds: usize,
}

/// Mann–Kendall's `Z` for `x` in time order (0 for fewer than 3 values or
/// no spread).
pub fn mann_kendall_z(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 3 {
        return 0.0;
    }
    let mut s: i64 = 0;
    for i in 0..n {
        for j in i + 1..n {
            s += match x[j].partial_cmp(&x[i]) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    let mut sorted = x.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && sorted[j + 1] == sorted[i] {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        ties += t * (t - 1.0) * (2.0 * t + 5.0);
        i = j + 1;
    }
    let nf = n as f64;
    let var = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - ties) / 18.0;
    if var <= 0.0 || s == 0 {
        return 0.0;
    }
    (s - s.signum()) as f64 / var.sqrt()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// The seconds' p50s that count: whole seconds (the last, partial one
/// left out) with at least [`MIN_RESPONSES`] responses.
fn series(rows: &[IntervalRow], elapsed_s: f64) -> Vec<f64> {
    rows.iter()
        .filter(|r| {
            let (from, to) = r.span(elapsed_s);
            to - from >= 0.99 && r.successes >= MIN_RESPONSES && r.p50_ns > 0
        })
        .map(|r| r.p50_ns as f64)
        .collect()
}

/// A clear and large trend in `x` (see the module docs), if any.
pub fn trend(x: &[f64]) -> Option<Drift> {
    let n = x.len();
    if n < MIN_SECONDS {
        return None;
    }
    let z = mann_kendall_z(x);
    let fifth = (n / 5).max(1);
    let from = median(&mut x[..fifth].to_vec());
    let to = median(&mut x[n - fifth..].to_vec());
    let change = (to - from).abs() / from.min(to).max(1.0);
    (z.abs() > MK_Z && change >= DRIFT_MIN && (to > from) == (z > 0.0)).then_some(Drift {
        from_ns: from as u64,
        to_ns: to as u64,
        z,
        seconds: n,
    })
}

/// The run's trend over its seconds, if any (see [`trend`]).
pub fn drift(rows: &[IntervalRow], elapsed_s: f64) -> Option<Drift> {
    trend(&series(rows, elapsed_s))
}

/// MSER-5's truncation of `x`, in values (a multiple of [`BATCH`]); 0 when
/// there are fewer than 4 batches or keeping everything is best.
pub fn mser5(x: &[f64]) -> usize {
    let z: Vec<f64> = x
        .chunks_exact(BATCH)
        .map(|c| c.iter().sum::<f64>() / BATCH as f64)
        .collect();
    let k = z.len();
    if k < 4 {
        return 0;
    }
    let mut best = (f64::INFINITY, 0);
    for d in 0..=k / 2 {
        let rest = &z[d..];
        let m = rest.iter().sum::<f64>() / rest.len() as f64;
        let ss: f64 = rest.iter().map(|v| (v - m).powi(2)).sum();
        let stat = ss / (rest.len() as f64).powi(2);
        // Strictly smaller: ties keep the shorter truncation.
        if stat < best.0 {
            best = (stat, d);
        }
    }
    best.1 * BATCH
}

/// The warm-up MSER-5 suggests for `rows`, in whole seconds, with the
/// medians of the truncated start and of the rest (ns): only when the
/// start differs from the rest by at least [`DRIFT_MIN`].
pub fn warmup(rows: &[IntervalRow], elapsed_s: f64) -> Option<(u64, u64, u64)> {
    let x = series(rows, elapsed_s);
    let d = mser5(&x);
    if d == 0 {
        return None;
    }
    let start = median(&mut x[..d].to_vec());
    let rest = median(&mut x[d..].to_vec());
    ((start - rest).abs() / rest.max(1.0) >= DRIFT_MIN).then_some((
        d as u64,
        start as u64,
        rest as u64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeded noise: ±`amp` relative, deterministic.
    fn noise(i: usize, amp: f64) -> f64 {
        let mut z = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z ^= z >> 31;
        1.0 + amp * (2.0 * ((z >> 11) as f64 / (1u64 << 53) as f64) - 1.0)
    }

    #[test]
    fn mann_kendall_sees_a_climb_and_a_step_not_noise() {
        let climb: Vec<f64> = (0..30)
            .map(|i| (2e6 + 1e5 * i as f64) * noise(i, 0.05))
            .collect();
        let d = trend(&climb).expect("a linear climb is a trend");
        assert!(d.z > 4.0 && d.to_ns > d.from_ns * 2, "{d:?}");
        let step: Vec<f64> = (0..30)
            .map(|i| if i < 15 { 2e6 } else { 3e6 } * noise(i, 0.05))
            .collect();
        assert!(trend(&step).is_some());
        let steady: Vec<f64> = (0..30).map(|i| 2e6 * noise(i, 0.2)).collect();
        assert_eq!(trend(&steady), None, "z = {}", mann_kendall_z(&steady));
        // Clear but small: 2 % over the run is not worth a warning.
        let small: Vec<f64> = (0..30).map(|i| 2e6 * (1.0 + 0.0007 * i as f64)).collect();
        assert!(mann_kendall_z(&small) > MK_Z);
        assert_eq!(trend(&small), None);
        // Too few seconds to tell.
        assert_eq!(trend(&climb[..5]), None);
    }

    #[test]
    fn mann_kendall_matches_a_hand_count() {
        // 1 2 3 4: S = 6, Var = 4·3·13/18 = 8.667, Z = 5/2.944.
        let z = mann_kendall_z(&[1.0, 2.0, 3.0, 4.0]);
        assert!((z - 5.0 / (104.0f64 / 12.0).sqrt()).abs() < 1e-9, "{z}");
        assert_eq!(mann_kendall_z(&[1.0, 1.0, 1.0]), 0.0);
    }

    /// The false alarm rate of the trend flag on steady noise, over many
    /// simulated runs of 30 seconds: at most 1 % (the test's level), and
    /// the size rule makes it rarer still.
    #[test]
    fn steady_runs_are_rarely_flagged() {
        let mut flagged = 0;
        for run in 0..2000 {
            let x: Vec<f64> = (0..30).map(|i| 2e6 * noise(run * 100 + i, 0.3)).collect();
            if trend(&x).is_some() {
                flagged += 1;
            }
        }
        assert!(flagged <= 20, "{flagged} of 2000");
    }

    #[test]
    fn mser5_cuts_a_slow_start_and_keeps_a_steady_run() {
        let mut x: Vec<f64> = (0..60).map(|i| 2e6 * noise(i, 0.05)).collect();
        assert_eq!(mser5(&x), 0);
        for v in &mut x[..10] {
            *v *= 3.0;
        }
        assert_eq!(mser5(&x), 10);
        // Too short for batches of 5.
        assert_eq!(mser5(&x[..15]), 0);
    }
}
