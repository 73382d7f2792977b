//! Which target each request goes to: a pure function of the request's
//! number, so the sequence does not depend on threads or timing.

use super::target::Target;
use serde::{Deserialize, Serialize};

/// Which target each request goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Order {
    /// Targets in turn.
    #[default]
    RoundRobin,
    /// A random target per request, reproducible from `seed` (siege -i).
    Random {
        /// The same seed picks the same targets.
        seed: u64,
    },
}

impl Order {
    /// The target of request `seq`: a pure function of the request's
    /// number, so the sequence does not depend on threads or timing.
    pub fn pick(&self, seq: u64, targets: usize) -> usize {
        let n = targets.max(1) as u64;
        match *self {
            Order::RoundRobin => (seq % n) as usize,
            Order::Random { seed } => (splitmix64(seed ^ splitmix64(seq)) % n) as usize,
        }
    }
}

/// Chooses each request's target from an [`Order`] and the targets'
/// weights: a pure function of the request number, built once per run.
///
/// With equal weights, round-robin is `seq % n` and random is a seeded
/// hash of `seq` modulo `n`. With weights `w_i` (total `W`), request `seq`
/// takes the slot `r` in `[0, W)` and the target whose share of the
/// prefix sums of the weights contains `r` (a binary search, O(log n), no
/// allocation). Round-robin's slot is `(seq mod W) · k mod W` for a stride
/// `k` near `W/φ` and coprime with `W`: a permutation of each cycle of `W`
/// requests, so every `W` consecutive requests send exactly `w_i` to
/// target `i`, interleaved rather than in runs (weights 3:1 give
/// `A B A A`). Random's slot is the seeded hash modulo `W`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetPicker {
    order: Order,
    /// Number of targets.
    n: u64,
    /// `ends[i]` = w_0 + ... + w_i; empty when every weight is 1.
    ends: Vec<u64>,
    /// W, the sum of the weights.
    total: u64,
    /// Round-robin's stride through a cycle.
    stride: u64,
}

impl TargetPicker {
    /// Prepares the picking of `targets` in `order` (the weights summed once).
    pub fn new(order: Order, targets: &[Target]) -> TargetPicker {
        let n = targets.len().max(1) as u64;
        let weighted = targets.iter().any(|t| t.weight != 1);
        let ends: Vec<u64> = if weighted {
            targets
                .iter()
                .scan(0u64, |sum, t| {
                    *sum += u64::from(t.weight.max(1));
                    Some(*sum)
                })
                .collect()
        } else {
            Vec::new()
        };
        let total = ends.last().copied().unwrap_or(n);
        // 1/φ of the cycle: consecutive requests land far apart, so no
        // target gets a run of requests while the others wait.
        let mut stride = ((total as f64 * 0.618_033_988_75).round() as u64).max(1);
        while gcd(stride, total) != 1 {
            stride += 1;
        }
        TargetPicker {
            order,
            n,
            ends,
            total,
            stride,
        }
    }

    /// The target of request `seq`.
    pub fn pick(&self, seq: u64) -> usize {
        if self.ends.is_empty() {
            return self.order.pick(seq, self.n as usize);
        }
        let slot = match self.order {
            Order::RoundRobin => {
                ((u128::from(seq % self.total) * u128::from(self.stride)) % u128::from(self.total))
                    as u64
            }
            Order::Random { seed } => splitmix64(seed ^ splitmix64(seq)) % self.total,
        };
        // The first target whose range ends after `slot`.
        self.ends.partition_point(|&end| end <= slot)
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// SplitMix64: a fast, well-mixed hash of a 64-bit counter.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::url::Url;

    fn weighted(weights: &[u32]) -> Vec<Target> {
        weights
            .iter()
            .enumerate()
            .map(|(i, &w)| Target {
                weight: w,
                ..Target::get(Url::parse(&format!("http://127.0.0.1:1/{i}")).unwrap())
            })
            .collect()
    }

    fn counts(p: &TargetPicker, targets: usize, range: std::ops::Range<u64>) -> Vec<u64> {
        let mut c = vec![0u64; targets];
        for seq in range {
            c[p.pick(seq)] += 1;
        }
        c
    }

    #[test]
    fn weighted_round_robin_is_exact_over_every_cycle_and_interleaved() {
        let weights = [5, 1, 3, 1, 10];
        let p = TargetPicker::new(Order::RoundRobin, &weighted(&weights));
        // Any 20 consecutive requests (one cycle), wherever they start.
        for start in [0, 1, 7, 20, 1_000_003] {
            assert_eq!(counts(&p, 5, start..start + 20), vec![5, 1, 3, 1, 10]);
        }
        // Interleaved: the heaviest target never gets more than 2 in a row
        // here, where a block order would give it 10.
        let run = (0..40)
            .map(|s| p.pick(s))
            .collect::<Vec<_>>()
            .chunk_by(|a, b| a == b)
            .map(<[usize]>::len)
            .max();
        assert!(run <= Some(2), "longest run {run:?}");
        // 3:1 is A B A A.
        let p = TargetPicker::new(Order::RoundRobin, &weighted(&[3, 1]));
        assert_eq!(
            (0..8).map(|s| p.pick(s)).collect::<Vec<_>>(),
            [0, 1, 0, 0, 0, 1, 0, 0]
        );
        // Equal weights keep the plain order.
        let p = TargetPicker::new(Order::RoundRobin, &weighted(&[1, 1, 1]));
        assert_eq!(
            (0..6).map(|s| p.pick(s)).collect::<Vec<_>>(),
            [0, 1, 2, 0, 1, 2]
        );
        // Huge totals do not overflow.
        let p = TargetPicker::new(Order::RoundRobin, &weighted(&[1_000_000; 3]));
        assert!(counts(&p, 3, u64::MAX - 100..u64::MAX).iter().sum::<u64>() == 100);
    }

    #[test]
    fn weighted_random_follows_the_weights_and_the_seed() {
        let weights = [1u32, 2, 7];
        let targets = weighted(&weights);
        let p = TargetPicker::new(Order::Random { seed: 42 }, &targets);
        let n = 100_000u64;
        let c = counts(&p, 3, 0..n);
        for (got, w) in c.iter().zip(weights) {
            let expected = n as f64 * f64::from(w) / 10.0;
            // 1 % of all requests: over 6 standard deviations for each
            // count here (sd <= sqrt(n p (1-p)) <= 145).
            assert!(
                (*got as f64 - expected).abs() < n as f64 * 0.01,
                "counts {c:?} for weights {weights:?}"
            );
        }
        // Reproducible from the seed, different with another.
        let again = TargetPicker::new(Order::Random { seed: 42 }, &targets);
        assert!((0..1000).all(|s| p.pick(s) == again.pick(s)));
        let other = TargetPicker::new(Order::Random { seed: 43 }, &targets);
        assert!((0..1000).any(|s| p.pick(s) != other.pick(s)));
    }

    #[test]
    fn random_order_is_reproducible_and_fair() {
        let order = Order::Random { seed: 7 };
        let mut counts = [0u32; 3];
        for seq in 0..30_000 {
            counts[order.pick(seq, 3)] += 1;
        }
        for c in counts {
            assert!((9_700..=10_300).contains(&c), "{counts:?}");
        }
        assert_eq!(
            order.pick(12345, 3),
            Order::Random { seed: 7 }.pick(12345, 3)
        );
        assert_eq!(Order::RoundRobin.pick(7, 3), 1);
    }
}
