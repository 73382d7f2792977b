//! Latency buckets of the user's choosing (`--buckets 0,1ms,5ms,10ms`,
//! vegeta's `hist[0,1ms,5ms,10ms]`): how many responses fell in each
//! range, for people who think in SLO bands rather than percentiles.

use crate::duration::{parse_duration, DurationError};
use hdrhistogram::Histogram;
use std::time::Duration;

/// Most bounds a bucket list may have: a histogram, not a dump.
pub const MAX_BUCKETS: usize = 100;

/// Why a bucket list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BucketsError {
    /// A bound is not a duration.
    #[error("invalid bucket bound: {0}")]
    Bound(#[from] DurationError),
    /// The bounds do not rise.
    #[error("invalid buckets: the bounds must rise, like 0,1ms,5ms,10ms ({0} does not)")]
    NotRising(String),
    /// No bounds, or too many.
    #[error("invalid buckets: give 1 to 100 bounds separated by commas, like 0,1ms,5ms,10ms")]
    Count,
}

/// Rising lower bounds: bucket `i` holds latencies in `[bounds[i],
/// bounds[i+1])`, the last everything from its bound up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buckets {
    bounds: Vec<Duration>,
}

/// One bucket's share of the responses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketCount {
    /// Lower bound (included).
    pub from: Duration,
    /// Upper bound (excluded); `None` for the last, open bucket.
    pub to: Option<Duration>,
    /// Responses in the bucket.
    pub count: u64,
    /// `count` over all timed responses (0 when there are none).
    pub share: f64,
}

impl std::str::FromStr for Buckets {
    type Err = BucketsError;

    /// Parses `0,1ms,5ms,10ms`; vegeta's `[0,1ms,5ms]` brackets are
    /// accepted too.
    fn from_str(text: &str) -> Result<Buckets, BucketsError> {
        let inner = text.trim().trim_start_matches('[').trim_end_matches(']');
        let bounds = inner
            .split(',')
            .map(|b| parse_duration(b.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        if bounds.is_empty() || bounds.len() > MAX_BUCKETS {
            return Err(BucketsError::Count);
        }
        if let Some(w) = bounds.windows(2).find(|w| w[1] <= w[0]) {
            return Err(BucketsError::NotRising(format!(
                "{:?} after {:?}",
                w[1], w[0]
            )));
        }
        Ok(Buckets { bounds })
    }
}

impl Buckets {
    /// The lower bounds, rising.
    pub fn bounds(&self) -> &[Duration] {
        &self.bounds
    }

    /// Counts `h` (nanoseconds) into the buckets. HdrHistogram keeps 3
    /// significant digits, so a value within 0.1 % of a bound may land on
    /// either side of it; latencies below the first bound are in no
    /// bucket.
    pub fn count(&self, h: &Histogram<u64>) -> Vec<BucketCount> {
        let total = h.len();
        let ns = |d: Duration| d.as_nanos().min(u128::from(u64::MAX)) as u64;
        self.bounds
            .iter()
            .enumerate()
            .map(|(i, &from)| {
                let to = self.bounds.get(i + 1).copied();
                let count = if h.is_empty() {
                    0
                } else {
                    let lo = ns(from);
                    let below = |v: u64| if v == 0 { 0 } else { h.count_between(0, v - 1) };
                    let upto = match to {
                        Some(t) => below(ns(t)),
                        None => total,
                    };
                    upto.saturating_sub(below(lo))
                };
                BucketCount {
                    from,
                    to,
                    count,
                    share: if total == 0 {
                        0.0
                    } else {
                        count as f64 / total as f64
                    },
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::new_histogram;

    #[test]
    fn counts_fall_in_their_ranges() {
        let b: Buckets = "0,1ms,5ms,10ms".parse().unwrap();
        let mut h = new_histogram();
        for (ms, n) in [(0.5, 3), (2.0, 5), (7.0, 2), (50.0, 1)] {
            h.record_n((ms * 1e6) as u64, n).unwrap();
        }
        let c = b.count(&h);
        let counts: Vec<u64> = c.iter().map(|b| b.count).collect();
        assert_eq!(counts, [3, 5, 2, 1]);
        assert_eq!(c[3].to, None);
        assert!((c[1].share - 5.0 / 11.0).abs() < 1e-12);
        // vegeta's spelling.
        assert_eq!("[0,1ms,5ms,10ms]".parse::<Buckets>().unwrap(), b);
    }

    #[test]
    fn bad_lists_are_refused() {
        assert!(matches!(
            "1ms,1ms".parse::<Buckets>(),
            Err(BucketsError::NotRising(_))
        ));
        assert!(matches!(
            "0,5".parse::<Buckets>(),
            Err(BucketsError::Bound(_))
        ));
        assert!(matches!("".parse::<Buckets>(), Err(BucketsError::Bound(_))));
    }
}
