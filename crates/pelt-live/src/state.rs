//! What the live views show: the run's figures so far, fed once a second.

use pelt_core::{IntervalRow, Recorder};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Names for the run's targets in metric labels: the first
/// [`TargetLabels::MAX`] by their (redacted) method and URL, the rest
/// together as `other`, so that a site list of thousands of URLs cannot
/// make thousands of series.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetLabels(Vec<String>);

impl TargetLabels {
    /// Targets that get a label of their own.
    pub const MAX: usize = 10;

    /// Labels for targets shown as `names` (in config order). A single
    /// target gets none: the run label already says which it is.
    pub fn new(names: impl IntoIterator<Item = String>) -> TargetLabels {
        let names: Vec<String> = names.into_iter().take(Self::MAX + 1).collect();
        if names.len() < 2 {
            return TargetLabels(Vec::new());
        }
        TargetLabels(names.into_iter().take(Self::MAX).collect())
    }

    /// The label of the target at `index`, `None` when targets are not
    /// labelled.
    pub fn of(&self, index: usize) -> Option<&str> {
        if self.0.is_empty() {
            None
        } else {
            Some(self.0.get(index).map_or("other", String::as_str))
        }
    }

    /// Whether targets are labelled at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The figures the views read.
#[derive(Debug)]
pub struct State {
    /// The run's id in labels.
    pub run_id: String,
    /// Target labels.
    pub targets: TargetLabels,
    /// Everything measured so far.
    pub total: Recorder,
    /// The latency the views headline (response time with `--rate`,
    /// service time in a closed loop), as the reports do.
    pub headline: pelt_core::Headline,
    /// What the offered rate counts per second: `flows/s` for a
    /// scenario, `req/s` otherwise (`RunConfig::rate_unit`).
    pub rate_unit: &'static str,
    /// The newest second, with its recorder.
    pub last: Option<(IntervalRow, Box<Recorder>)>,
    /// Seconds fed so far.
    pub seconds: u64,
    /// The newest second's gauges.
    pub gauges: Gauges,
    /// When the run is one of several (`pelt experiment`): their progress.
    pub campaign: Option<crate::Campaign>,
    /// Every second's row so far (a few KB an hour).
    pub rows: Vec<IntervalRow>,
    /// Whether the run has ended (the figures are final).
    pub finished: bool,
    /// The run's measured length, once it has ended (so the last,
    /// partial second's rate can be per second of the run it covered).
    pub elapsed_s: Option<f64>,
    /// The final report (JSON), once the run has ended, for the dashboard;
    /// shared by every view (with many targets it is the largest thing
    /// pelt makes).
    pub report: Option<Arc<String>>,
    /// Bumped on every change, for readers that wait for one.
    pub generation: u64,
    /// Scrapes served so far, and how many of them after the end.
    scrapes: u64,
    final_scrapes: u64,
}

impl State {
    /// Where the run's seconds end, for [`IntervalRow::span`]: its
    /// length once it has ended; while it runs, every second fed is whole
    /// but the first.
    pub fn end_s(&self) -> f64 {
        self.elapsed_s.unwrap_or(f64::INFINITY)
    }
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    scraped: Condvar,
    changed: Condvar,
}

/// What the engine samples at the end of each second, beside its figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gauges {
    /// Requests sent and not yet answered.
    pub in_flight: u64,
    /// Connections open.
    pub connections_open: u64,
}

/// The live figures of one run, shared by the results thread (which
/// feeds them) and the servers (which read them). Cheap to clone.
#[derive(Debug, Clone)]
pub struct Live(Arc<Shared>);

impl Live {
    /// An empty run called `run_id`, with its targets' labels.
    pub fn new(run_id: String, targets: TargetLabels) -> Live {
        Live(Arc::new(Shared {
            state: Mutex::new(State {
                run_id,
                targets,
                total: Recorder::new(),
                headline: pelt_core::Headline::ResponseTime,
                rate_unit: "req/s",
                last: None,
                seconds: 0,
                gauges: Gauges::default(),
                campaign: None,
                rows: Vec::new(),
                finished: false,
                elapsed_s: None,
                report: None,
                generation: 0,
                scrapes: 0,
                final_scrapes: 0,
            }),
            scraped: Condvar::new(),
            changed: Condvar::new(),
        }))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while rendering must not take the run down with it.
        self.0.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds one finished second (from the engine's `Snapshot`), with the
    /// gauges at its end.
    pub fn feed(&self, row: &IntervalRow, rec: &Recorder, gauges: Gauges) {
        let mut s = self.lock();
        s.total.merge(rec);
        s.seconds += 1;
        s.gauges = gauges;
        s.rows.push(*row);
        match &mut s.last {
            Some((r, last)) => {
                *r = *row;
                last.reset();
                last.merge(rec);
            }
            None => s.last = Some((*row, Box::new(rec.clone()))),
        }
        s.generation += 1;
        drop(s);
        self.0.changed.notify_all();
    }

    /// Which latency the views headline: the run's
    /// ([`pelt_core::RunSummary::headline`]).
    pub fn set_headline(&self, headline: pelt_core::Headline) {
        self.lock().headline = headline;
    }

    /// What the offered rate counts ([`pelt_core::RunConfig::rate_unit`]).
    pub fn set_rate_unit(&self, unit: &'static str) {
        self.lock().rate_unit = unit;
    }

    /// Publishes the progress of the campaign this run belongs to.
    pub fn campaign(&self, campaign: crate::Campaign) {
        let mut s = self.lock();
        s.campaign = Some(campaign);
        s.generation += 1;
        drop(s);
        self.0.changed.notify_all();
    }

    /// A campaign's next run starts: the figures start afresh, under the
    /// new run's id and target labels (the campaign stays).
    pub fn next_run(&self, run_id: String, targets: TargetLabels) {
        let mut s = self.lock();
        s.run_id = run_id;
        s.targets = targets;
        s.total.reset();
        s.last = None;
        s.seconds = 0;
        s.gauges = Gauges::default();
        s.rows.clear();
        s.finished = false;
        s.elapsed_s = None;
        s.report = None;
        s.generation += 1;
        drop(s);
        self.0.changed.notify_all();
    }

    /// Marks the figures final, with the run's JSON report and its
    /// measured length in seconds.
    pub fn finish_run(&self, report: Option<Arc<String>>, elapsed_s: f64) {
        self.lock().elapsed_s = Some(elapsed_s);
        self.finish_with(report);
    }

    /// Marks the figures final.
    pub fn finish(&self) {
        self.finish_with(None);
    }

    /// Marks the figures final, with the run's JSON report.
    pub fn finish_with(&self, report: Option<Arc<String>>) {
        let mut s = self.lock();
        s.finished = true;
        if report.is_some() {
            s.report = report;
        }
        s.generation += 1;
        drop(s);
        self.0.changed.notify_all();
    }

    /// Waits (at most `limit`) for a change after generation `seen`;
    /// reads the figures either way.
    pub fn wait_change<T>(&self, seen: u64, limit: Duration, read: impl FnOnce(&State) -> T) -> T {
        let s = self.lock();
        let s = match self
            .0
            .changed
            .wait_timeout_while(s, limit, |s| s.generation == seen)
        {
            Ok((s, _)) => s,
            Err(p) => p.into_inner().0,
        };
        read(&s)
    }

    /// Counts a delivery to a watcher (a scrape, an event stream), once
    /// it is written: of the final figures if `final_figures`.
    pub fn delivered(&self, final_figures: bool) {
        let mut s = self.lock();
        s.scrapes += 1;
        if final_figures {
            s.final_scrapes += 1;
        }
        drop(s);
        self.0.scraped.notify_all();
    }

    /// Reads the figures.
    pub fn read<T>(&self, read: impl FnOnce(&State) -> T) -> T {
        read(&self.lock())
    }

    /// After [`Live::finish`]: if anyone scraped during the run, waits
    /// (at most `limit`) until someone has scraped the final figures, so
    /// that the last second of a run is not lost to the scrape interval.
    /// Returns whether a final scrape happened.
    pub fn wait_final_scrape(&self, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        let mut s = self.lock();
        if s.scrapes == 0 {
            return false;
        }
        while s.final_scrapes == 0 {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            s = match self.0.scraped.wait_timeout(s, left) {
                Ok((s, _)) => s,
                Err(p) => p.into_inner().0,
            };
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_labels_are_bounded() {
        assert!(TargetLabels::new(["GET http://a/".to_string()]).is_empty());
        let many = TargetLabels::new((0..5000).map(|i| format!("GET http://h/{i}")));
        assert_eq!(many.of(0), Some("GET http://h/0"));
        assert_eq!(many.of(TargetLabels::MAX - 1), Some("GET http://h/9"));
        assert_eq!(many.of(TargetLabels::MAX), Some("other"));
        assert_eq!(many.of(4999), Some("other"));
    }

    #[test]
    fn final_scrape_wait_returns_at_once_without_a_scraper() {
        let live = Live::new("r".into(), TargetLabels::default());
        live.finish();
        let t = Instant::now();
        assert!(!live.wait_final_scrape(Duration::from_secs(30)));
        assert!(t.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn final_scrape_wait_ends_with_a_scrape_after_the_end() {
        let live = Live::new("r".into(), TargetLabels::default());
        live.delivered(false);
        live.finish();
        let other = live.clone();
        let scraper = std::thread::spawn(move || {
            let finished = other.read(|s| s.finished);
            other.delivered(finished);
            finished
        });
        assert!(live.wait_final_scrape(Duration::from_secs(60)));
        assert!(scraper.join().unwrap());
    }
}
