//! Capacity search (`pelt sweep`): which load to try next, whether a step
//! held, and the report of a finished search. Pure: the binary runs the
//! steps and feeds their summaries in.
//!
//! A rate search grows geometrically from a low rate (×2 until a step
//! fails, then ×1.25 from the last pass), bisects the bracket
//! [last pass, first fail] down to a tolerance, and confirms the answer
//! with one longer run: a confirmation that fails becomes the new first
//! fail and the bisection goes on below it. Each step is judged on its own
//! measured window (the engine discards its warm-up), never cumulatively.
//!
//! ```
//! use pelt_analyze::sweep::{Search, SearchPlan, Next, Outcome};
//!
//! // A server that holds anything up to 1,000 req/s.
//! let mut search = Search::new(SearchPlan::default());
//! let outcome = loop {
//!     match search.next() {
//!         Next::Step { rate, .. } => search.record(rate, rate <= 1000.0),
//!         Next::Done(outcome) => break outcome,
//!     }
//! };
//! let (pass, fail) = search.bracket();
//! assert_eq!(outcome, Outcome::Found);
//! assert!(pass.unwrap() <= 1000.0 && fail.unwrap() > 1000.0);
//! assert!(pass.unwrap() >= 950.0);
//! ```

mod judge;
mod report;
#[cfg(test)]
mod tests;

pub use judge::*;
pub use report::*;

use serde::{Deserialize, Serialize};

/// How a rate search proceeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchPlan {
    /// The first rate tried, requests per second.
    pub start: f64,
    /// The highest rate tried.
    pub max: f64,
    /// Bisect until (first fail − last pass) / last pass is at most this.
    pub tolerance: f64,
}

impl Default for SearchPlan {
    fn default() -> SearchPlan {
        SearchPlan {
            start: 100.0,
            max: 100_000.0,
            tolerance: 0.05,
        }
    }
}

/// Growth while no step has failed.
pub const GROW: f64 = 2.0;
/// Growth from the last pass once a step has failed.
pub const NEAR: f64 = 1.25;
/// Confirmations that may fail before the search gives up on a stable
/// answer.
pub const MAX_CONFIRMS: u32 = 3;

/// What the search wants next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    /// Run a step at this rate; `confirm` asks for the longer run.
    Step {
        /// Requests per second.
        rate: f64,
        /// The confirmation of the answer.
        confirm: bool,
    },
    /// The search is over.
    Done(Outcome),
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The capacity was found and confirmed.
    Found,
    /// The highest rate allowed held: the capacity is at least that.
    AtMaxRate,
    /// The lowest rate failed: no capacity under the SLO.
    FailsAtStart,
    /// Confirmations kept failing below passes: the target is not stable
    /// enough for an answer at this tolerance.
    Unstable,
    /// The time budget ran out first.
    MaxTime,
    /// Ctrl-C.
    Interrupted,
    /// The client, not the server, could not keep up.
    Client,
    /// Closed-loop levels: the last level ran (or throughput stopped
    /// growing).
    Levels,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Grow,
    Near,
    Bisect,
    Confirm,
}

/// A rate search's state: feed it each step's verdict with
/// [`Search::record`], ask [`Search::next`] what to run.
#[derive(Debug, Clone)]
pub struct Search {
    plan: SearchPlan,
    phase: Phase,
    passes: Vec<f64>,
    first_fail: Option<f64>,
    failed_confirms: u32,
    done: Option<Outcome>,
}

impl Search {
    /// A search that has run nothing yet.
    pub fn new(plan: SearchPlan) -> Search {
        Search {
            plan,
            phase: Phase::Grow,
            passes: Vec::new(),
            first_fail: None,
            failed_confirms: 0,
            done: None,
        }
    }

    /// The highest rate that passed below the first fail, and the first
    /// (lowest) rate that failed above it.
    pub fn bracket(&self) -> (Option<f64>, Option<f64>) {
        (self.last_pass(), self.first_fail)
    }

    fn last_pass(&self) -> Option<f64> {
        self.passes
            .iter()
            .copied()
            .filter(|&r| self.first_fail.is_none_or(|f| r < f))
            .max_by(f64::total_cmp)
    }

    /// The rate to run next, or how the search ended.
    pub fn next(&self) -> Next {
        if let Some(outcome) = self.done {
            return Next::Done(outcome);
        }
        let step = |rate: f64| Next::Step {
            rate: round_rate(rate.min(self.plan.max)),
            confirm: false,
        };
        match (self.phase, self.last_pass(), self.first_fail) {
            (Phase::Grow, None, _) => step(self.plan.start),
            (Phase::Grow, Some(p), _) => step(p * GROW),
            (Phase::Near, Some(p), _) => step(p * NEAR),
            (Phase::Bisect, Some(p), Some(f)) => step((p + f) / 2.0),
            (Phase::Confirm, Some(p), _) => Next::Step {
                rate: p,
                confirm: true,
            },
            // A phase past Grow always has a pass and a fail.
            _ => Next::Done(Outcome::FailsAtStart),
        }
    }

    /// Records the verdict of the step [`Search::next`] asked for.
    pub fn record(&mut self, rate: f64, passed: bool) {
        if self.done.is_some() {
            return;
        }
        let confirming = self.phase == Phase::Confirm;
        if passed {
            if confirming {
                self.done = Some(Outcome::Found);
                return;
            }
            self.passes.push(rate);
            if rate >= self.plan.max {
                self.done = Some(Outcome::AtMaxRate);
                return;
            }
        } else {
            self.first_fail = Some(self.first_fail.map_or(rate, |f| f.min(rate)));
            if confirming {
                self.failed_confirms += 1;
                // The confirmed rate failed: it is no pass any more.
                self.passes.retain(|&r| r < rate);
                if self.failed_confirms >= MAX_CONFIRMS {
                    self.done = Some(Outcome::Unstable);
                    return;
                }
            }
            if self.last_pass().is_none() {
                self.done = Some(if confirming {
                    Outcome::Unstable
                } else {
                    Outcome::FailsAtStart
                });
                return;
            }
        }
        self.phase = self.phase_after();
    }

    fn phase_after(&self) -> Phase {
        let (Some(p), Some(f)) = (self.last_pass(), self.first_fail) else {
            return Phase::Grow;
        };
        if (f - p) / p <= self.plan.tolerance || round_rate((p + f) / 2.0) >= f {
            return Phase::Confirm;
        }
        match self.phase {
            // One failure seen: approach it in smaller steps, while a
            // ×1.25 step still lands below the failure.
            Phase::Grow | Phase::Near if round_rate(p * NEAR) < f => Phase::Near,
            _ => Phase::Bisect,
        }
    }

    /// Ends the search early (time budget, Ctrl-C, the client).
    pub fn stop(&mut self, outcome: Outcome) {
        self.done.get_or_insert(outcome);
    }
}

/// The margin within which two capacities count as the same: a sweep
/// brackets its answer to 5 % by default, so smaller changes are below
/// what it resolves.
pub const MARGIN_CAPACITY: f64 = 0.05;

/// Capacity as a compared metric: a ratio, higher is better.
pub fn capacity_metric() -> crate::Metric {
    crate::Metric::new(
        "capacity",
        crate::Scale::Ratio,
        crate::Direction::HigherIsBetter,
        MARGIN_CAPACITY,
    )
}

/// Rates are whole requests per second (at least 1): readable step names,
/// and no bisection below what a person would tell apart.
pub fn round_rate(rate: f64) -> f64 {
    rate.round().max(1.0)
}

/// The closed-loop levels from `lo` to `hi` connections: doubling, with
/// `hi` itself last.
pub fn connection_levels(lo: u32, hi: u32) -> Vec<u32> {
    let mut levels = Vec::new();
    let mut c = lo.max(1);
    while c < hi {
        levels.push(c);
        c = c.saturating_mul(2);
    }
    levels.push(hi.max(lo.max(1)));
    levels
}

/// Throughput within this share of the best counts as "no longer
/// growing".
pub const PLATEAU: f64 = 0.05;

/// The closed-loop level where throughput stops growing: the fewest
/// connections reaching within [`PLATEAU`] of the best throughput seen.
pub fn saturation(levels: &[(u32, f64)]) -> Option<u32> {
    let best = levels.iter().map(|&(_, t)| t).fold(0.0, f64::max);
    levels
        .iter()
        .find(|&&(_, t)| best > 0.0 && t >= best * (1.0 - PLATEAU))
        .map(|&(c, _)| c)
}

/// Whether the closed-loop sweep can stop: the last two levels added less
/// than [`PLATEAU`] over the best before them.
pub fn plateaued(levels: &[(u32, f64)]) -> bool {
    if levels.len() < 3 {
        return false;
    }
    let (before, last_two) = levels.split_at(levels.len() - 2);
    let best_before = before.iter().map(|&(_, t)| t).fold(0.0, f64::max);
    last_two
        .iter()
        .all(|&(_, t)| t < best_before * (1.0 + PLATEAU))
}
