//! Pacers: when each request of an open-loop run should start.
//!
//! A pacer is a pure function from a request's sequence number to its
//! intended start, so the schedule can never depend on responses: a slow
//! server makes requests *late*, and that lateness is measured, instead of
//! making them *fewer* (coordinated omission). Closed-loop runs have no
//! pacer: each connection's next request starts when its last one ends.

use pelt_core::{Nanos, Schedule};
use std::time::Duration;

/// What [`Pacer::at`] returns for a request the schedule never sends (its
/// rate has fallen to 0 for good): later than any deadline. Callers
/// compare it with the deadline before turning it into an `Instant`.
pub const NEVER: Nanos = Nanos::MAX;

/// An open-loop schedule. `at` must be non-decreasing in `seq`.
pub trait Pacer: Send + Sync + std::fmt::Debug {
    /// Intended start of request `seq` (0-based), in nanoseconds from the
    /// start of the schedule.
    fn at(&self, seq: u64) -> Nanos;

    /// How many requests are due strictly before `t`: the smallest `n`
    /// with `at(n) >= t`.
    fn count_before(&self, t: Nanos) -> u64 {
        // Exponential then binary search: correct for any monotonic `at`.
        let mut hi = 1u64;
        while self.at(hi) < t {
            hi = hi.saturating_mul(2);
        }
        let mut lo = 0u64;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.at(mid) < t {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// A constant rate λ: request `i` is due at `t_i = i / λ`.
///
/// Computed from `i` rather than by adding `1/λ` repeatedly, so rounding
/// never accumulates: request 10,000,000 at 3 req/s is due exactly when it
/// should be.
#[derive(Debug, Clone, Copy)]
pub struct ConstantRate {
    ns_per_request: f64,
}

impl ConstantRate {
    /// `rate` requests per second; must be positive and finite.
    pub fn new(rate: f64) -> ConstantRate {
        ConstantRate {
            ns_per_request: 1e9 / rate,
        }
    }
}

impl Pacer for ConstantRate {
    fn at(&self, seq: u64) -> Nanos {
        (seq as f64 * self.ns_per_request) as Nanos
    }
}

/// A rate that changes over time: a [`Schedule`] of linear pieces (a
/// ramp when the ends differ, a step when they are equal), its last level
/// held after its end.
///
/// In a piece starting at `T` with `N0` requests already due, rate
/// `λ(t) = λ0 + a·t` (`t` from the piece's start), the requests due by `t`
/// are the integral `N(t) = λ0·t + a·t²/2`. Request `i` is due when
/// `N(t) = j` with `j = i − N0`:
///
/// ```text
/// t_j = (−λ0 + √(λ0² + 2·a·j)) / a          (a ≠ 0)
///     = 2·j / (λ0 + √(λ0² + 2·a·j))         (the same, rationalised)
/// t_j = j / λ0                              (a = 0)
/// ```
///
/// The rationalised form is used: it needs no special case as `a → 0`
/// and does not cancel catastrophically on a ramp down (`a < 0`). `T` and
/// `N0` of each piece are computed once, so request `i`'s time comes from
/// `i` alone and rounding never accumulates across requests. A piece at
/// rate 0 holds no requests: the next request falls at the first later
/// time the rate is positive, or never ([`NEVER`]).
///
/// The schedule starts when measurement does; a warm-up before it runs at
/// the schedule's first level.
#[derive(Debug, Clone)]
pub struct Piecewise {
    pieces: Vec<Piece>,
    /// After the last piece: the last level, held.
    tail: Piece,
}

#[derive(Debug, Clone, Copy)]
struct Piece {
    /// Start, seconds from the start of the run.
    start: f64,
    /// Length in seconds (infinite for the tail).
    len: f64,
    /// Requests due before the piece starts, and by its end.
    n0: f64,
    n1: f64,
    /// Rate at the start (req/s) and slope (req/s²).
    rate: f64,
    slope: f64,
}

impl Piece {
    /// Requests due in the piece's first `t` seconds.
    fn count(&self, t: f64) -> f64 {
        self.rate * t + self.slope * t * t / 2.0
    }

    /// Seconds into the piece when its `j`-th request (from 0) is due.
    fn time_of(&self, j: f64) -> f64 {
        if j <= 0.0 {
            return 0.0;
        }
        let t = if self.slope == 0.0 {
            j / self.rate
        } else {
            let disc = (self.rate * self.rate + 2.0 * self.slope * j).max(0.0);
            2.0 * j / (self.rate + disc.sqrt())
        };
        // Rounding may put the last request a hair past the piece's end;
        // the next piece starts there, so clamping keeps `at` monotonic.
        t.min(self.len)
    }
}

impl Piecewise {
    /// The pacer for `schedule`, starting after `warmup` at its first level.
    pub fn new(schedule: &Schedule, warmup: Duration) -> Piecewise {
        let first = schedule.segments.first().map_or(0.0, |s| s.from);
        let mut parts = Vec::with_capacity(schedule.segments.len() + 1);
        if !warmup.is_zero() {
            parts.push((warmup.as_secs_f64(), first, first));
        }
        parts.extend(
            schedule
                .segments
                .iter()
                .map(|s| (s.duration.as_secs_f64(), s.from, s.to)),
        );
        let (mut start, mut n) = (0.0, 0.0);
        let mut pieces = Vec::with_capacity(parts.len());
        for (len, from, to) in parts {
            let mut p = Piece {
                start,
                len,
                n0: n,
                n1: n,
                rate: from,
                slope: (to - from) / len,
            };
            p.n1 = n + p.count(len);
            n = p.n1;
            start += len;
            pieces.push(p);
        }
        let last = schedule.segments.last().map_or(0.0, |s| s.to);
        let tail = Piece {
            start,
            len: f64::INFINITY,
            n0: n,
            n1: if last > 0.0 { f64::INFINITY } else { n },
            rate: last,
            slope: 0.0,
        };
        Piecewise { pieces, tail }
    }

    /// Requests due in the first `t` seconds (fractional).
    fn count_at(&self, t: f64) -> f64 {
        let k = self.pieces.partition_point(|p| p.start + p.len <= t);
        let p = self.pieces.get(k).unwrap_or(&self.tail);
        p.n0 + p.count((t - p.start).max(0.0))
    }
}

impl Pacer for Piecewise {
    fn at(&self, seq: u64) -> Nanos {
        let x = seq as f64;
        // The first piece whose requests run past `x`; zero-rate pieces
        // (n1 == n0) are skipped over.
        let k = self.pieces.partition_point(|p| p.n1 <= x);
        let p = match self.pieces.get(k) {
            Some(p) => p,
            None if x < self.tail.n1 => &self.tail,
            None => return NEVER,
        };
        let t = p.start + p.time_of(x - p.n0);
        (t * 1e9) as Nanos
    }

    fn count_before(&self, t: Nanos) -> u64 {
        // The integral gives the answer to within rounding; `at` decides.
        let mut n = (self.count_at(t as f64 / 1e9).ceil().max(0.0)) as u64;
        while n > 0 && self.at(n - 1) >= t {
            n -= 1;
        }
        while self.at(n) < t {
            n += 1;
        }
        n
    }
}

/// Poisson arrivals at a constant mean rate λ: the gaps between requests
/// are exponential with mean `1/λ`, as when many independent users arrive
/// (evenly spaced requests understate the queueing their bursts cause).
///
/// Gap `i` is `−ln(1 − U_i)/λ` with `U_i` a hash of the seed and `i`: a
/// pure function of `(seed, i)`, so a run repeats exactly, and shards and
/// workers that each need only some of the requests agree on every time.
/// `at(k)` is the sum of the first `k` gaps; the sums at every
/// [`POISSON_BLOCK`]th request are kept as they are first needed (8 bytes
/// per block: 2.8 MB for an hour at 100,000 req/s), so a lookup adds at
/// most a block's gaps.
#[derive(Debug)]
pub struct PoissonRate {
    mean_ns: f64,
    seed: u64,
    /// `blocks[b]` = `at(b × POISSON_BLOCK)`, in nanoseconds.
    blocks: std::sync::RwLock<Vec<f64>>,
}

/// Requests per kept partial sum in [`PoissonRate`].
pub const POISSON_BLOCK: u64 = 32;

impl PoissonRate {
    /// `rate` requests per second on average, drawn from `seed`.
    pub fn new(rate: f64, seed: u64) -> PoissonRate {
        PoissonRate {
            mean_ns: 1e9 / rate,
            seed,
            blocks: std::sync::RwLock::new(vec![0.0]),
        }
    }

    /// Gap `i`, between request `i` and request `i + 1`, in nanoseconds.
    fn gap(&self, i: u64) -> f64 {
        let h = pelt_core::splitmix64(self.seed ^ pelt_core::splitmix64(i));
        // 53 random bits: U in [0, 1), so 1 − U is never 0.
        let u = (h >> 11) as f64 / (1u64 << 53) as f64;
        -(1.0 - u).ln() * self.mean_ns
    }

    /// The sum of gaps `from..to`.
    fn sum(&self, from: u64, to: u64) -> f64 {
        (from..to).map(|i| self.gap(i)).sum()
    }

    /// `at(b × POISSON_BLOCK)`, extending the kept sums as needed.
    fn block_start(&self, b: usize) -> f64 {
        if let Some(&t) = self.blocks.read().unwrap_or_else(|e| e.into_inner()).get(b) {
            return t;
        }
        let mut blocks = self.blocks.write().unwrap_or_else(|e| e.into_inner());
        while blocks.len() <= b {
            let k = blocks.len() as u64 - 1;
            let last = blocks[k as usize];
            blocks.push(last + self.sum(k * POISSON_BLOCK, (k + 1) * POISSON_BLOCK));
        }
        blocks[b]
    }
}

impl Pacer for PoissonRate {
    fn at(&self, seq: u64) -> Nanos {
        let b = seq / POISSON_BLOCK;
        let t = self.block_start(b as usize) + self.sum(b * POISSON_BLOCK, seq);
        t as Nanos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(text: &str) -> Schedule {
        match pelt_core::Spec::parse(text).unwrap() {
            pelt_core::Spec::Varying(s) => s,
            pelt_core::Spec::Constant(_) => unreachable!(),
        }
    }

    const S: Nanos = 1_000_000_000;

    /// `at` is non-decreasing and `count_before` agrees with it everywhere.
    fn check_consistent(p: &dyn Pacer, upto: u64) {
        let mut last = 0;
        for i in 0..upto {
            let t = p.at(i);
            assert!(t >= last, "at({i}) = {t} < {last}");
            last = t;
            if t != NEVER {
                let n = p.count_before(t);
                assert!(n <= i && p.at(n) >= t, "count_before(at({i})) = {n}");
                assert!(n == 0 || p.at(n - 1) < t);
                assert!(p.count_before(t + 1) > i);
            }
        }
    }

    #[test]
    fn a_linear_ramp_follows_its_formula() {
        // 0..100/10s: N(t) = 5 t², so t_i = √(i/5).
        let p = Piecewise::new(&schedule("0..100/10s"), Duration::ZERO);
        assert_eq!(p.at(0), 0);
        assert_eq!(p.at(5), S);
        assert_eq!(p.at(20), 2 * S);
        assert_eq!(p.at(500), 10 * S);
        // Then 100/s held: 100 more in the 11th second.
        assert_eq!(p.at(600), 11 * S);
        assert_eq!(p.count_before(2 * S), 20);
        assert_eq!(p.count_before(10 * S), 500);
        assert_eq!(p.count_before(10 * S + 1), 501);
        check_consistent(&p, 2_000);
        // A ramp down, 100..0/2s: N(t) = 100 t − 25 t²; N = 50 at 2 − √2.
        let down = Piecewise::new(&schedule("100..0/2s"), Duration::ZERO);
        let t = down.at(50) as f64 / 1e9;
        assert!((t - (2.0 - 2f64.sqrt())).abs() < 1e-9, "{t}");
        assert!(down.at(99) < 2 * S);
        assert_eq!(down.at(100), NEVER);
        assert_eq!(down.count_before(Nanos::MAX - 1), 100);
        check_consistent(&down, 101);
    }

    #[test]
    fn steps_skip_zero_rate_and_warm_up_holds_the_first_level() {
        let p = Piecewise::new(&schedule("2s:100,2s:0,1s:50"), Duration::ZERO);
        assert_eq!(p.at(199), 1_990_000_000);
        // Nothing is due while the rate is 0.
        assert_eq!(p.at(200), 4 * S);
        assert_eq!(p.count_before(4 * S), 200);
        assert_eq!(p.count_before(4 * S + 1), 201);
        assert_eq!(p.at(249), 4_980_000_000);
        // 50/s is held past the end.
        assert_eq!(p.at(300), 6 * S);
        check_consistent(&p, 400);
        let w = Piecewise::new(&schedule("2s:100,1s:0"), Duration::from_secs(1));
        // One second of warm-up at 100/s, then the schedule.
        assert_eq!(w.at(100), S);
        assert_eq!(w.at(299), 2_990_000_000);
        assert_eq!(w.at(300), NEVER);
        check_consistent(&w, 301);
    }

    #[test]
    fn piecewise_matches_constant_rate_when_constant() {
        let c = ConstantRate::new(3.0);
        let p = Piecewise::new(
            &Schedule::constant(3.0, Duration::from_secs(5)),
            Duration::ZERO,
        );
        for i in 0..1000 {
            assert!(c.at(i).abs_diff(p.at(i)) <= 1, "{i}");
        }
        check_consistent(&p, 1000);
    }

    #[test]
    fn long_schedules_do_not_drift() {
        // One hour up to 10,000/s: request times stay exact to the
        // nanosecond's rounding, computed from `i` alone.
        let p = Piecewise::new(&schedule("1h:0..10000"), Duration::ZERO);
        let a = 10_000.0 / 3600.0;
        for i in [1u64, 1_000, 1_000_000, 17_999_999] {
            let exact = (2.0 * i as f64 / a).sqrt();
            assert!((p.at(i) as f64 / 1e9 - exact).abs() < 1e-6, "{i}");
        }
    }

    #[test]
    fn constant_rate_is_exact_and_counts_consistently() {
        let p = ConstantRate::new(1000.0);
        assert_eq!(p.at(0), 0);
        assert_eq!(p.at(1), 1_000_000);
        assert_eq!(p.at(6000), 6_000_000_000);
        // 2 s at 1000 req/s: requests 0..=1999 are due before 2 s.
        assert_eq!(p.count_before(2_000_000_000), 2000);
        assert_eq!(p.count_before(1), 1);
        assert_eq!(p.count_before(0), 0);
        let odd = ConstantRate::new(3.0);
        assert_eq!(odd.at(10_000_000), 3_333_333_333_333_333);
        for t in [0, 1, 333_333_333, 333_333_334, 10_000_000_000] {
            let n = odd.count_before(t);
            assert!(n == 0 || odd.at(n - 1) < t);
            assert!(odd.at(n) >= t);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Any schedule: `at` is monotonic, `count_before` agrees with it,
        /// and request `i` falls where the schedule's integral reaches `i`.
        #[test]
        fn any_schedule_is_consistent(
            segs in proptest::collection::vec((1u64..3000, 0u32..3000, 0u32..3000), 1..5),
            warmup_ms in 0u64..500,
        ) {
            let schedule = Schedule {
                segments: segs
                    .iter()
                    .map(|&(ms, from, to)| pelt_core::Segment {
                        duration: Duration::from_millis(ms),
                        from: f64::from(from),
                        to: f64::from(to),
                    })
                    .collect(),
            };
            let warmup = Duration::from_millis(warmup_ms);
            let p = Piecewise::new(&schedule, warmup);
            check_consistent(&p, 3000);
            let w = warmup.as_secs_f64();
            let first = schedule.segments[0].from;
            for i in (0..3000u64).step_by(37) {
                let t = p.at(i);
                if t == NEVER {
                    break;
                }
                let t = t as f64 / 1e9;
                let due = if t < w { first * t } else { first * w + schedule.count(t - w) };
                proptest::prop_assert!((due - i as f64).abs() < 0.01, "i {} t {} due {}", i, t, due);
            }
        }
    }

    /// The gaps are exponential: a Kolmogorov-Smirnov test against the
    /// exponential distribution of the same mean passes at the 1 % level
    /// (critical value 1.63/√n), and the mean is the rate's.
    #[test]
    fn poisson_gaps_are_exponential_with_the_rates_mean() {
        let rate = 2000.0;
        let p = PoissonRate::new(rate, 7);
        let n = 20_000u64;
        let mut gaps: Vec<f64> = (0..n)
            .map(|i| (p.at(i + 1) - p.at(i)) as f64 / 1e9)
            .collect();
        gaps.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let d = gaps
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let cdf = 1.0 - (-rate * x).exp();
                let lo = i as f64 / n as f64;
                let hi = (i + 1) as f64 / n as f64;
                (cdf - lo).abs().max((hi - cdf).abs())
            })
            .fold(0.0, f64::max);
        assert!(d < 1.63 / (n as f64).sqrt(), "KS distance {d}");
        // Over a long run the count matches the rate: 200,000 requests
        // due within 1 % of 100 s (the sum's spread is 0.22 %).
        let t = p.at(200_000) as f64 / 1e9;
        assert!((t - 100.0).abs() < 1.0, "200,000 requests took {t} s");
    }

    #[test]
    fn poisson_times_are_a_function_of_the_seed_and_the_index() {
        let a = PoissonRate::new(500.0, 1);
        let b = PoissonRate::new(500.0, 1);
        // Asked in another order (as shards and workers do), the same.
        let forward: Vec<Nanos> = (0..1000).map(|i| a.at(i)).collect();
        let backward: Vec<Nanos> = (0..1000).rev().map(|i| b.at(i)).collect();
        assert!(forward.iter().eq(backward.iter().rev()));
        assert!(forward.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(forward[0], 0);
        let other = PoissonRate::new(500.0, 2);
        assert_ne!(other.at(100), forward[100]);
    }
}
