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
//! # Step: Pettitt's change-point test on the per-second p50
//!
//! A level shift partway through (2 ms, then 10 ms from the 8th second
//! of 16) is monotone, but Mann–Kendall weighs every pair of seconds, so
//! a few noisy seconds at the start can cancel the step's pairs (Z ≈ 0.9
//! on such a run, issue 35). Pettitt's test (1979) asks the step's own
//! question: for each split `t`, `U_t = Σ_{i≤t<j} sign(x_j − x_i)` (the
//! Mann–Whitney statistic of the seconds before against those after,
//! `2·W_t − t(n+1)` from the rank sum `W_t` of the first `t`), `K = max
//! |U_t|` at the most likely change point, each part at least a fifth of
//! the seconds. Its p-value is a permutation one (999 seeded random orders
//! of the same seconds: Pettitt's asymptotic formula is far too cautious
//! for a run of 16 seconds). Rank-based like Mann–Kendall, for the same
//! reasons. A few wild seconds at the start can still hide a step from
//! any test of the whole run, so the test is made with the first 0, 1, 2
//! and 3 seconds set aside, the level shared between the four
//! (Bonferroni). pelt flags a step when it is clear (p < [`STEP_P`]) and
//! large (the medians before and after differ by at least [`STEP_MIN`]:
//! half as high again); on steady seconds with ±30 % noise that is rarer
//! than 1 in 100 runs (the tests below). Seconds that wander together can
//! still look like a step: the size rule guards against calling that.
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

/// Kendall's `S` of `x` against its order: each later value above an
/// earlier one counts +1, below −1, equal (or unordered, a NaN) 0. The
/// one count behind every trend test pelt makes (a run's seconds here,
/// a side's runs in pelt-analyze's design, a sweep step's medians).
pub fn kendall_s<T: PartialOrd>(x: &[T]) -> i64 {
    let mut s: i64 = 0;
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            s += match x[j].partial_cmp(&x[i]) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    s
}

/// Mann–Kendall's `Z` for `x` in time order (0 for fewer than 3 values or
/// no spread).
pub fn mann_kendall_z(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 3 {
        return 0.0;
    }
    let s = kendall_s(x);
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

/// A level shift found by Pettitt's test (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Whole seconds (of those tested) before the change.
    pub after_seconds: usize,
    /// The median p50 of the seconds before it, nanoseconds.
    pub before_ns: u64,
    /// The median p50 of the seconds after it, nanoseconds.
    pub after_ns: u64,
    /// The permutation p-value, over the warm-up offsets tried.
    pub p: f64,
    /// Seconds tested.
    pub seconds: usize,
}

/// The smallest step (relative, between the medians before and after)
/// the step warning reports: a level half as high again, or more.
pub const STEP_MIN: f64 = 0.5;
/// The step test's level: p < 0.05 over every warm-up offset tried.
pub const STEP_P: f64 = 0.05;
/// Leading seconds the step test may set aside as a warm-up (0 to this),
/// the level shared between the offsets by Bonferroni.
pub const STEP_OFFSETS: usize = 3;
/// Random relabellings behind each permutation p-value (seeded: the same
/// seconds always give the same answer).
const PERMUTATIONS: usize = 999;

/// Ranks from 1, ties given their average.
fn ranks(x: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&i, &j| x[i].total_cmp(&x[j]));
    let mut r = vec![0.0; x.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && x[idx[j + 1]] == x[idx[i]] {
            j += 1;
        }
        for &k in &idx[i..=j] {
            r[k] = (i + j) as f64 / 2.0 + 1.0;
        }
        i = j + 1;
    }
    r
}

/// Pettitt's `K = max |U_t|` over splits leaving at least `min` values on
/// each side, with `U_t = 2·(sum of the first t ranks) − t·(n + 1)`, and
/// the split where it is reached.
fn pettitt_ranks(r: &[f64], min: usize) -> (f64, usize) {
    let n = r.len();
    let mut best = (0.0_f64, 0usize);
    let mut w = 0.0;
    for t in 1..n {
        w += r[t - 1];
        if t < min || n - t < min {
            continue;
        }
        let u = (2.0 * w - t as f64 * (n as f64 + 1.0)).abs();
        if u > best.0 + 1e-9 {
            best = (u, t);
        }
    }
    best
}

/// Pettitt's statistic of `x` (its change point found on ranks) and its
/// permutation p-value: the share of random orders of the same seconds
/// whose statistic is as large.
pub fn pettitt(x: &[f64], min: usize) -> (f64, usize, f64) {
    let r = ranks(x);
    let (k, t) = pettitt_ranks(&r, min);
    let mut shuffled = r.clone();
    let mut state: u64 = 0x7065_6c74_7374_6570;
    let mut as_large = 0usize;
    for _ in 0..PERMUTATIONS {
        for i in (1..shuffled.len()).rev() {
            let z = crate::splitmix64(state);
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            shuffled.swap(i, (z % (i as u64 + 1)) as usize);
        }
        if pettitt_ranks(&shuffled, min).0 >= k - 1e-9 {
            as_large += 1;
        }
    }
    (k, t, (as_large + 1) as f64 / (PERMUTATIONS + 1) as f64)
}

/// A clear and large step in `x` (see the module docs), if any: the
/// clearest of Pettitt's tests with the first 0 to [`STEP_OFFSETS`]
/// seconds set aside, at [`STEP_P`] shared among them.
pub fn step(x: &[f64]) -> Option<Step> {
    let n = x.len();
    if n < MIN_SECONDS {
        return None;
    }
    let offsets = STEP_OFFSETS.min(n - MIN_SECONDS) + 1;
    let mut best: Option<(f64, usize, usize)> = None;
    for skip in 0..offsets {
        let rest = &x[skip..];
        let min = (rest.len() / 5).max(2);
        let (k, t, p) = pettitt(rest, min);
        if k > 0.0 && best.is_none_or(|(bp, _, _)| p < bp) {
            best = Some((p, skip, t));
        }
    }
    let (p, skip, t) = best?;
    let p = (p * offsets as f64).min(1.0);
    if p >= STEP_P {
        return None;
    }
    let rest = &x[skip..];
    let before = median(&mut rest[..t].to_vec());
    let after = median(&mut rest[t..].to_vec());
    let change = (after - before).abs() / before.min(after).max(1.0);
    (change >= STEP_MIN).then_some(Step {
        after_seconds: skip + t,
        before_ns: before as u64,
        after_ns: after as u64,
        p,
        seconds: n,
    })
}

/// The run's step over its seconds, if any (see [`step`]).
pub fn stepped(rows: &[IntervalRow], elapsed_s: f64) -> Option<Step> {
    step(&series(rows, elapsed_s))
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

    /// Issue 35 §3: a 2 → 10 ms step at 8 s of 16 s, after three noisy
    /// seconds, left Mann–Kendall at Z ≈ 1: no warning, while Precision
    /// said ±0.1 %. The step test names it, and where.
    #[test]
    fn a_step_after_noisy_seconds_is_found_where_mann_kendall_is_not() {
        let mut x: Vec<f64> = vec![30e6, 1e6, 25e6];
        x.extend((3..8).map(|i| 2e6 * noise(i, 0.05)));
        x.extend((8..16).map(|i| 10e6 * noise(i, 0.05)));
        let z = mann_kendall_z(&x);
        assert!(z.abs() < MK_Z, "Mann-Kendall alone: z = {z}");
        assert_eq!(trend(&x), None);
        let s = step(&x).expect("a step");
        assert_eq!(s.after_seconds, 8, "{s:?}");
        assert!(s.before_ns < 2_200_000 && s.after_ns > 9_000_000, "{s:?}");
        // The clean step too, and a climb is no step's business only when
        // it is small: a steady run is neither.
        let clean: Vec<f64> = (0..16)
            .map(|i| if i < 8 { 2e6 } else { 10e6 } * noise(i, 0.05))
            .collect();
        assert_eq!(step(&clean).map(|s| s.after_seconds), Some(8));
        let steady: Vec<f64> = (0..16).map(|i| 2e6 * noise(i, 0.3)).collect();
        assert_eq!(step(&steady), None);
        assert_eq!(step(&x[..7]), None, "too few seconds");
    }

    /// Steady seconds (±30 % noise) are rarely called a step: at most
    /// 1 % of 500 runs each of 16 and 40 seconds (seeded).
    #[test]
    fn steady_runs_are_rarely_called_a_step() {
        for n in [16, 40] {
            let flagged = (0..500)
                .filter(|run| {
                    let x: Vec<f64> = (0..n).map(|i| 2e6 * noise(run * 1000 + i, 0.3)).collect();
                    step(&x).is_some()
                })
                .count();
            assert!(flagged <= 5, "{flagged} of 500 at {n} s");
        }
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
