//! A 95 % confidence interval for a percentile of one run, from the order
//! statistics of its recorded samples.
//!
//! # The interval
//!
//! With `n` samples of a continuous distribution and `ξ` its true `q`
//! quantile, the number `B` of samples below `ξ` is Binomial(`n`, `q`)
//! whatever the distribution. The `l`-th smallest sample lies below `ξ`
//! exactly when `B ≥ l`, and the `u`-th lies above it when `B < u`, so
//!
//! ```text
//! P(x₍ₗ₎ ≤ ξ ≤ x₍ᵤ₎) ≥ P(l ≤ B ≤ u − 1)
//! ```
//!
//! [`ranks`] picks `l` as large and `u` as small as keep each tail at most
//! 2.5 % under the exact binomial distribution, so the interval
//! `[x₍ₗ₎, x₍ᵤ₎]` covers `ξ` at least 95 % of the time, for any
//! distribution (the classical distribution-free interval; David and
//! Nagaraja, *Order Statistics*, §7.1). [`interval`] reads those two ranks
//! from the run's merged histogram: two scans of the counts at report
//! time, nothing on the hot path, no resampling. The histogram's 3
//! significant digits widen each end by at most 0.1 %.
//!
//! The samples are one run's requests, and requests close in time are
//! correlated (a stall delays everyone queued behind it), so the interval
//! says how precisely the run pinned *its own* percentile: how far a
//! repeat of it could differ is run-to-run noise, which only more runs
//! measure (`pelt compare`, `pelt experiment`).
//!
//! When `q·n` is so near `n` that even the largest sample is below `ξ`
//! more than 2.5 % of the time (p99.9 of fewer than about 3,700 samples),
//! there is no upper bound: [`PercentileCi::hi`] is `None`.

use hdrhistogram::Histogram;

/// The two-sided confidence of every percentile interval.
pub const CI_CONFIDENCE: f64 = 0.95;

/// An interval wider than this either side of its percentile (relative)
/// is "too wide": the report says how long a run would narrow it.
pub const WIDE: f64 = 0.05;

/// A percentile with its 95 % interval (nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PercentileCi {
    /// The percentile, e.g. 99.0.
    pub percentile: f64,
    /// Its value in the run.
    pub value: u64,
    /// The interval's lower end.
    pub lo: u64,
    /// The interval's upper end; `None` when the run had too few samples
    /// above the percentile to bound it.
    pub hi: Option<u64>,
    /// Samples the interval is built from.
    pub n: u64,
}

impl PercentileCi {
    /// The larger relative distance from the value to an end of the
    /// interval (0.03 = ±3 %); infinite when unbounded above.
    pub fn half_width(&self) -> f64 {
        let v = self.value.max(1) as f64;
        match self.hi {
            Some(hi) => ((v - self.lo as f64) / v).max((hi as f64 - v) / v),
            None => f64::INFINITY,
        }
    }

    /// Whether the interval spans more than ±[`WIDE`].
    pub fn too_wide(&self) -> bool {
        self.half_width() > WIDE
    }

    /// How many times the run's samples would narrow the interval to
    /// ±[`WIDE`]: widths shrink as `1/√n`, so `(half_width / WIDE)²`; for
    /// an unbounded interval, the factor that makes an upper bound exist
    /// at all, doubled. `None` when already narrow enough.
    pub fn samples_factor(&self) -> Option<f64> {
        if !self.too_wide() {
            return None;
        }
        Some(match self.hi {
            Some(_) => (self.half_width() / WIDE).powi(2),
            None => {
                let q = self.percentile / 100.0;
                // The smallest n whose largest sample bounds ξ: qⁿ ≤ 2.5 %.
                let n_min = ((1.0 - CI_CONFIDENCE) / 2.0).ln() / q.ln();
                2.0 * n_min / self.n.max(1) as f64
            }
        })
    }
}

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, 9 terms; relative error near
/// 10⁻¹⁵).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection keeps the series in its accurate range.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The 1-based ranks `(l, u)` of the order statistics that bound the `q`
/// quantile (`0 < q < 1`) of `n` samples with confidence at least
/// `confidence` (see the module docs). `u` is `None` when no sample bounds
/// it from above; `l` is at least 1 (the smallest sample, which bounds it
/// from below with a tail of `(1 − q)ⁿ`, reported as it is). `None` for no
/// samples.
pub fn ranks(n: u64, q: f64, confidence: f64) -> Option<(u64, Option<u64>)> {
    if n == 0 || !(q > 0.0 && q < 1.0) {
        return None;
    }
    let tail = (1.0 - confidence) / 2.0;
    let nf = n as f64;
    // The binomial pmf around its mode, walked outwards: only the part
    // that holds all but a negligible mass is visited (±40 sd), so a run
    // of ten million samples costs a few thousand steps.
    let mode = ((nf + 1.0) * q).floor().min(nf);
    let ln_pmf = |k: f64| {
        ln_gamma(nf + 1.0) - ln_gamma(k + 1.0) - ln_gamma(nf - k + 1.0)
            + k * q.ln()
            + (nf - k) * (1.0 - q).ln()
    };
    let sd = (nf * q * (1.0 - q)).sqrt();
    let reach = (40.0 * sd).ceil() + 40.0;
    let k_lo = (mode - reach).max(0.0) as u64;
    let k_hi = (mode + reach).min(nf) as u64;
    // pmf(k) for k in k_lo..=k_hi, by the ratio recursion from the mode.
    let m = mode as u64;
    let mut pmf = vec![0.0; (k_hi - k_lo + 1) as usize];
    let at_mode = ln_pmf(mode).exp();
    pmf[(m - k_lo) as usize] = at_mode;
    let ratio_up = q / (1.0 - q);
    let mut p = at_mode;
    for k in m..k_hi {
        // pmf(k+1) = pmf(k)·(n−k)/(k+1)·q/(1−q)
        p *= (nf - k as f64) / (k as f64 + 1.0) * ratio_up;
        pmf[(k + 1 - k_lo) as usize] = p;
    }
    p = at_mode;
    for k in (k_lo + 1..=m).rev() {
        // pmf(k−1) = pmf(k)·k/(n−k+1)·(1−q)/q
        p *= k as f64 / (nf - k as f64 + 1.0) / ratio_up;
        pmf[(k - 1 - k_lo) as usize] = p;
    }
    // l: the largest with P(B ≤ l − 1) ≤ tail.
    let mut below = 0.0; // P(B ≤ k) as k rises
    let mut l = 0;
    for (i, &pk) in pmf.iter().enumerate() {
        let k = k_lo + i as u64;
        if below + pk > tail {
            // P(B ≤ k − 1) ≤ tail < P(B ≤ k): l − 1 = k − 1.
            l = k;
            break;
        }
        below += pk;
    }
    // u: the smallest with P(B ≥ u) ≤ tail.
    let mut above = 0.0; // P(B ≥ k) as k falls
    let mut u = None;
    for (i, &pk) in pmf.iter().enumerate().rev() {
        let k = k_lo + i as u64;
        if above + pk > tail {
            // P(B ≥ k + 1) ≤ tail < P(B ≥ k): u = k + 1, a rank only if
            // there are that many samples.
            u = (k < n).then_some(k + 1);
            break;
        }
        above += pk;
    }
    Some((l.max(1), u))
}

/// The value of the `rank`-th smallest sample (1-based) in `h`.
fn at_rank(h: &Histogram<u64>, rank: u64) -> u64 {
    // `value_at_quantile(q)` returns the sample of rank ⌈q·n⌉; half a rank
    // below keeps rounding from stepping to the next one.
    h.value_at_quantile((rank as f64 - 0.5) / h.len() as f64)
}

/// Percentile `p` (e.g. 99.0) of `h` with its 95 % interval; `None` for an
/// empty histogram or `p` outside (0, 100).
pub fn interval(h: &Histogram<u64>, p: f64) -> Option<PercentileCi> {
    let n = h.len();
    let (l, u) = ranks(n, p / 100.0, CI_CONFIDENCE)?;
    Some(PercentileCi {
        percentile: p,
        value: crate::rank::percentile(h, p),
        lo: at_rank(h, l),
        hi: u.map(|u| at_rank(h, u)),
        n,
    })
}

/// [`interval`] for each of [`super::PERCENTILES`]; empty for an empty
/// histogram.
pub fn intervals(h: &Histogram<u64>) -> Vec<PercentileCi> {
    super::PERCENTILES
        .iter()
        .filter_map(|&p| interval(h, p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SplitMix64: seeded draws for the simulations.
    struct Rng(u64);
    impl Rng {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        let mut f = 1.0_f64;
        for k in 1..30u32 {
            f *= k as f64;
            assert!((ln_gamma(k as f64 + 1.0) - f.ln()).abs() < 1e-9, "{k}");
        }
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
    }

    #[test]
    fn ranks_match_the_textbook() {
        // The median of 100: ranks 40 and 61 (a 95.4 % interval).
        assert_eq!(ranks(100, 0.5, 0.95), Some((40, Some(61))));
        // Too few samples for p99.9 to be bounded above.
        assert_eq!(ranks(1000, 0.999, 0.95).unwrap().1, None);
        assert!(ranks(10_000, 0.999, 0.95).unwrap().1.is_some());
        assert_eq!(ranks(0, 0.5, 0.95), None);
        // A large run: ranks near q·n ± 1.96·√(n·q·(1−q)).
        let (l, u) = ranks(10_000_000, 0.99, 0.95).unwrap();
        let sd = (1e7_f64 * 0.99 * 0.01).sqrt();
        assert!((l as f64 - (9.9e6 - 1.96 * sd)).abs() < 3.0, "{l}");
        assert!((u.unwrap() as f64 - (9.9e6 + 1.96 * sd)).abs() < 3.0);
    }

    /// Coverage: for known distributions, the interval from the sorted
    /// samples holds the true percentile in about 95 % of 2,000 simulated
    /// runs (at least 95 % in theory; the discreteness of ranks adds a
    /// little).
    #[test]
    fn intervals_cover_the_true_percentile_about_95_percent_of_runs() {
        let reps = 2000;
        // (name, quantile function)
        let exp = |u: f64| -(1.0 - u).ln();
        // Pareto with α = 1.5: a heavy tail, as latency often has.
        let pareto = |u: f64| (1.0 - u).powf(-1.0 / 1.5);
        let uniform = |u: f64| u;
        let cases: [(&str, &dyn Fn(f64) -> f64); 3] = [
            ("exponential", &exp),
            ("pareto", &pareto),
            ("uniform", &uniform),
        ];
        let mut rng = Rng(42);
        for (name, quantile) in cases {
            for (n, q) in [(50, 0.5), (200, 0.9), (1000, 0.99), (5000, 0.999)] {
                let truth = quantile(q);
                let (l, u) = ranks(n, q, 0.95).unwrap();
                let u = u.expect("bounded at these sizes");
                let mut covered = 0;
                let mut x: Vec<f64> = vec![0.0; n as usize];
                for _ in 0..reps {
                    for v in x.iter_mut() {
                        *v = quantile(rng.uniform());
                    }
                    x.sort_by(f64::total_cmp);
                    if x[l as usize - 1] <= truth && truth <= x[u as usize - 1] {
                        covered += 1;
                    }
                }
                let rate = covered as f64 / reps as f64;
                // With few samples beyond the percentile (n·q·(1−q) = 5
                // for p99.9 of 5,000) the ranks are coarse and the interval
                // covers more than asked: never less.
                let most = if n as f64 * q * (1.0 - q) < 10.0 {
                    0.99
                } else {
                    0.975
                };
                assert!(
                    (0.935..=most).contains(&rate),
                    "{name}, n {n}, q {q}: covered {:.1} %",
                    rate * 100.0
                );
            }
        }
    }

    /// The same through a histogram, as reports read it.
    #[test]
    fn histogram_intervals_cover_the_true_percentile() {
        let reps = 1000;
        let mut rng = Rng(7);
        // Exponential latencies with a 1 ms mean, in nanoseconds.
        let draw = |rng: &mut Rng| (-(1.0 - rng.uniform()).ln() * 1e6) as u64 + 1;
        let truth = -(0.01f64).ln() * 1e6; // p99
        let mut covered = 0;
        for _ in 0..reps {
            let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
            for _ in 0..5000 {
                h.record(draw(&mut rng)).unwrap();
            }
            let ci = interval(&h, 99.0).unwrap();
            assert!(ci.lo <= ci.value && Some(ci.value) <= ci.hi);
            // The histogram's buckets are 0.1 % wide: allow that.
            if ci.lo as f64 <= truth * 1.001 && truth <= ci.hi.unwrap() as f64 * 1.001 {
                covered += 1;
            }
        }
        let rate = covered as f64 / reps as f64;
        assert!(
            (0.93..=0.98).contains(&rate),
            "covered {:.1} %",
            rate * 100.0
        );
    }

    #[test]
    fn width_and_how_much_longer() {
        let ci = PercentileCi {
            percentile: 99.0,
            value: 1000,
            lo: 900,
            hi: Some(1100),
            n: 1000,
        };
        assert!((ci.half_width() - 0.1).abs() < 1e-12);
        assert!(ci.too_wide());
        assert!((ci.samples_factor().unwrap() - 4.0).abs() < 1e-9);
        let narrow = PercentileCi {
            lo: 990,
            hi: Some(1020),
            ..ci
        };
        assert_eq!(narrow.samples_factor(), None);
        let open = PercentileCi {
            percentile: 99.9,
            hi: None,
            ..ci
        };
        assert!(open.too_wide() && open.samples_factor().unwrap() > 1.0);
    }
}
