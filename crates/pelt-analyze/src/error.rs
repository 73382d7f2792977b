//! The one error type of the crate.

use std::fmt;

/// Which side of a comparison a bad value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The baseline ("before") runs.
    A,
    /// The candidate ("after") runs.
    B,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::A => "A (baseline)",
            Side::B => "B (candidate)",
        })
    }
}

/// Why a comparison could not be made. Each message says what is wrong and
/// how to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnalyzeError {
    /// A paired comparison needs one A and one B value per block.
    #[error(
        "{metric}: a paired comparison needs one A and one B run per block, got {a} A and {b} B; \
         drop the unmatched runs or compare them unpaired"
    )]
    LengthMismatch {
        /// The metric's name.
        metric: String,
        /// A's values.
        a: usize,
        /// B's values.
        b: usize,
    },
    /// A side has no runs at all.
    #[error("{metric}: side {side} has no runs; give at least one run per side")]
    Empty {
        /// The metric's name.
        metric: String,
        /// The empty side.
        side: Side,
    },
    /// NaN or an infinity among the values.
    #[error(
        "{metric}: run {index} of side {side} has the value {value}, which is not a finite number; \
         check the results file of that run"
    )]
    NotFinite {
        /// The metric's name.
        metric: String,
        /// The side of the run.
        side: Side,
        /// The run's position on its side, from 0.
        index: usize,
        /// The value.
        value: f64,
    },
    /// Zero or a negative value on a ratio scale, where `ln` is taken.
    #[error(
        "{metric}: run {index} of side {side} has the value {value}, but a ratio-scale metric must be \
         positive; use the points scale for metrics that can be zero (like the failed share)"
    )]
    NonPositive {
        /// The metric's name.
        metric: String,
        /// The side of the run.
        side: Side,
        /// The run's position on its side, from 0.
        index: usize,
        /// The value.
        value: f64,
    },
    /// The metric does not apply to these runs' load model (its values
    /// are NaN).
    #[error("{why}")]
    NotApplicable {
        /// The metric's name.
        metric: String,
        /// Why not.
        why: Inapplicable,
    },
    /// The margin is not usable: it must be positive and finite, and below 1
    /// (100 %) on a ratio scale.
    #[error(
        "{metric}: margin {margin} is not usable; give a positive finite margin, below 1 (100 %) \
         for a ratio-scale metric, like 0.05 for 5 %"
    )]
    InvalidMargin {
        /// The metric's name.
        metric: String,
        /// The margin given.
        margin: f64,
    },
}

/// Why a metric does not apply to the runs compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inapplicable {
    /// Throughput in rate runs: their schedule fixes it (compare `sent`).
    FixedBySchedule,
    /// The share of the schedule sent, in closed-loop runs: they have none.
    RateRunsOnly,
    /// Some runs are rate runs and others closed loops.
    MixedLoad,
}

impl fmt::Display for Inapplicable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Inapplicable::FixedBySchedule => "fixed by the schedule in rate runs (see 'sent')",
            Inapplicable::RateRunsOnly => "for rate runs only (a closed loop's is 'throughput')",
            Inapplicable::MixedLoad => "the runs mix rate and closed-loop load",
        })
    }
}
