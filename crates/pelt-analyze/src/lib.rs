//! pelt-analyze: the statistics behind `pelt compare` and `pelt experiment`.
//!
//! Comparisons take **one value per run** (a run's p99, its throughput),
//! never per-request data: requests within a run are autocorrelated, so the
//! run is the unit of replication (see [`compare`] for the argument and the
//! rules). Estimates are Hodges–Lehmann, intervals are the distribution-free
//! Wilcoxon signed-rank (paired blocks) and Mann–Whitney (unpaired) ones,
//! from exact null distributions for small samples ([`rank`]).
//!
//! ```
//! use pelt_analyze::{compare_paired, Metric, Verdict, MARGIN_P99};
//!
//! // p99 (ms) of 8 blocks, each running A then B.
//! let a = [10.0, 10.4, 9.8, 10.1, 10.6, 10.2, 9.9, 10.3];
//! let b = [11.1, 11.5, 10.9, 11.0, 11.8, 11.2, 10.9, 11.4];
//! let c = compare_paired(&Metric::latency("p99", MARGIN_P99), &a, &b).unwrap();
//! assert_eq!(c.verdict, Verdict::Regression { material: true });
//! let (lo, hi) = c.ci.unwrap();
//! assert!(lo > 0.05 && hi < 0.15 && lo <= c.estimate && c.estimate <= hi);
//! ```
#![warn(missing_docs)]

pub mod alike;
pub mod compare;
pub mod design;
pub mod error;
pub mod experiment;
pub mod family;
pub mod headline;
pub mod latency;
pub mod predict;
pub mod rank;
pub mod runs;
#[cfg(test)]
mod sim;
pub mod sweep;

pub use compare::{
    compare_paired, compare_unpaired, Comparison, Design, Direction, Metric, Scale, Verdict,
    BLOCKS_FACTOR, CONFIDENCE, MARGIN_P50, MARGIN_P90, MARGIN_P99, MARGIN_P999, MARGIN_THROUGHPUT,
};
pub use error::{AnalyzeError, Inapplicable, Side};
pub use rank::{
    hodges_lehmann_one_sample, hodges_lehmann_shift, mann_whitney_ci, mann_whitney_k,
    signed_rank_ci, signed_rank_k,
};
