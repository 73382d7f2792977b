//! What a caller sees while runs go on: each second of a run (a progress
//! line, live views) and the campaign's steps (lines for a person, a
//! dashboard). Every method has a default that does nothing.

use pelt_core::{RunConfig, RunSummary, Stop};
use pelt_engine::Snapshot;
use std::time::Duration;

/// Watches one run, second by second, from the thread that writes its
/// results file (so it must be `Send`).
pub trait RunObserver: Send {
    /// The run started: what stops it, and how long its warm-up lasts.
    fn started(&mut self, _planned: &Stop, _warmup: Duration) {}
    /// A second ended (`elapsed` since the start, warm-up included).
    fn interval(&mut self, _elapsed: Duration, _snapshot: &Snapshot) {}
    /// No second ended since the last call.
    fn waiting(&mut self, _elapsed: Duration) {}
    /// The run ended; its summary follows.
    fn finished(&mut self) {}
    /// A copy of the results could not be written (the run goes on: the
    /// measurements matter more than their copies); one line.
    fn warning(&mut self, _message: &str) {}
}

/// Watches nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct Unobserved;

impl RunObserver for Unobserved {}
impl Observer for Unobserved {}

/// Watches a campaign of runs (a sweep, a calibration).
pub trait Observer {
    /// A line for a person ("step 3: 4,000 req/s for 10s").
    fn say(&mut self, _line: &str) {}
    /// The next run, named `label` (and `run_id` for metric labels), starts.
    fn run_started(&mut self, _label: &str, _run_id: &str, _config: &RunConfig) {}
    /// Who watches that run's seconds.
    fn run_observer(&mut self) -> Box<dyn RunObserver> {
        Box::new(Unobserved)
    }
    /// The run ended with `summary`; `so_far` is the campaign's report so far.
    fn run_finished(&mut self, _summary: &RunSummary, _so_far: String) {}
    /// The campaign ended: its report as text and as JSON.
    fn done(&mut self, _text: &str, _json: &str) {}
}
