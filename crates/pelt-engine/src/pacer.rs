//! Pacers: when each request of an open-loop run should start.
//!
//! A pacer is a pure function from a request's sequence number to its
//! intended start, so the schedule can never depend on responses: a slow
//! server makes requests *late*, and that lateness is measured, instead of
//! making them *fewer* (coordinated omission). Closed-loop runs have no
//! pacer: each connection's next request starts when its last one ends.

use pelt_core::Nanos;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
