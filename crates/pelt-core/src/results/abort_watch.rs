//! Judging a run's seconds by its `--abort-on` rules (the rules
//! themselves are plain configuration: [`crate::abort`]).

use crate::abort::{AbortMeasure, AbortRule};
use crate::header::StopCause;
use crate::op::Op;
use crate::summary::IntervalRow;

impl AbortRule {
    /// The second's value of the measure, or `None` when the second says
    /// nothing about it (no request ended; for a latency, none was timed).
    pub fn value(&self, row: &IntervalRow) -> Option<f64> {
        if row.requests == 0 {
            return None;
        }
        // A second whose requests all failed untimed (refused, reset) has
        // no latency: zero would read as "fast".
        let timed = row.max_ns > 0;
        match self.measure {
            AbortMeasure::Failed => {
                let failed = row.failed;
                Some(failed as f64 / row.requests as f64)
            }
            AbortMeasure::P50 => timed.then_some(row.p50_ns as f64),
            AbortMeasure::P90 => timed.then_some(row.p90_ns as f64),
            AbortMeasure::P99 => timed.then_some(row.p99_ns as f64),
            AbortMeasure::Max => timed.then_some(row.max_ns as f64),
        }
    }

    /// Whether the second breaks the rule's condition; `None` when it says
    /// nothing (see [`AbortRule::value`]).
    pub fn holds(&self, row: &IntervalRow) -> Option<bool> {
        let v = self.value(row)?;
        Some(match self.op {
            Op::Lt => v < self.threshold,
            Op::Le => v <= self.threshold,
            Op::Gt => v > self.threshold,
            Op::Ge => v >= self.threshold,
            Op::Eq => v == self.threshold,
        })
    }
}

/// Follows a run's seconds for its abort rules: how long each rule's
/// condition has held without a break.
#[derive(Debug, Clone)]
pub struct AbortWatch {
    rules: Vec<(AbortRule, f64)>,
}

/// Slack for summing partial seconds: `0.3 + 0.7 + 1.0` must reach 2.
const HOLD_SLACK_S: f64 = 1e-6;

impl AbortWatch {
    /// A watch over `rules` (none: it never fires).
    pub fn new(rules: &[AbortRule]) -> AbortWatch {
        AbortWatch {
            rules: rules.iter().map(|r| (r.clone(), 0.0)).collect(),
        }
    }

    /// Whether there is anything to watch.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Folds in the run's next second; returns why the run must stop when
    /// a rule has now held for its whole duration. A second counts for the
    /// part of it the run covered (the first is cut by the run's start),
    /// so `for 2s` means two seconds of the run, not two rows.
    pub fn observe(&mut self, row: &IntervalRow) -> Option<StopCause> {
        let covered = (1.0 + row.offset_s.min(0.0)).clamp(0.0, 1.0);
        let mut fired = None;
        for (rule, held) in &mut self.rules {
            match rule.holds(row) {
                Some(true) => *held += covered,
                Some(false) => *held = 0.0,
                None => {}
            }
            if fired.is_none() && *held + HOLD_SLACK_S >= rule.hold.as_secs_f64() {
                fired = Some(StopCause::Abort {
                    rule: rule.to_string(),
                    at_s: row.offset_s + 1.0,
                });
            }
        }
        fired
    }
}
