//! The collector: one thread that merges the workers' seconds, in order,
//! into the run's timeline and total, hands each completed second on as a
//! [`Snapshot`], and builds the [`RunSummary`] at the end.

use crate::cancel::Canceller;
use crate::intervals::WorkerMsg;
use crate::plan::RunPlan;
use crate::priority::Background;
use pelt_core::{
    AbortWatch, IntervalRow, Nanos, Recorder, RunFooter, RunHeader, RunSummary, StopCause,
    SummaryBuilder, ThreadLoad,
};
use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;

/// One finished second of measurement, all workers merged: its row for
/// progress displays, and its whole recorder for the results file.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The second's figures (requests, rate, errors, percentiles).
    pub row: IntervalRow,
    /// Everything recorded in the second, to save or merge further.
    pub recorder: Box<Recorder>,
    /// Measured requests so far, this second included.
    pub total_requests: u64,
    /// Failed requests so far (no response, or a status outside
    /// 2xx/3xx), this second included.
    pub total_failed: u64,
    /// Requests sent and not yet answered at the second's end, summed
    /// over workers (a gauge, for live views).
    pub in_flight: u64,
    /// Connections open at the second's end, summed over workers.
    pub connections_open: u64,
}

/// Merges the workers' seconds, in order, into the summary.
pub(crate) struct Collector {
    plan: Arc<RunPlan>,
    /// Highest second each worker has handed over; `u64::MAX` once done.
    through: Vec<Option<u64>>,
    /// Seconds not yet emitted, each the workers' recorders of it added.
    pending: BTreeMap<u64, Box<Recorder>>,
    /// Each pending second's requests in flight and open connections,
    /// summed over workers.
    gauges: BTreeMap<u64, (u64, u64)>,
    /// Next second to emit; seconds before measurement are skipped.
    next_second: u64,
    builder: SummaryBuilder,
    warmup_requests: u64,
    cut: Option<Nanos>,
    /// Whether `-n` could end the run.
    count_limited: bool,
    /// Per worker: how busy its thread was, once it is done.
    worker_load: Vec<Option<ThreadLoad>>,
    /// The first `Server` header a worker reported.
    server: Option<String>,
    /// `--abort-on`: judged on each second as it is merged, here, where
    /// the whole second first exists; it stops the run through the same
    /// cancel as Ctrl-C.
    abort: AbortWatch,
    canceller: Canceller,
}

const NS: u64 = 1_000_000_000;

impl Collector {
    /// A collector for `plan`'s `workers`.
    pub fn new(
        plan: Arc<RunPlan>,
        header: RunHeader,
        workers: usize,
        canceller: Canceller,
    ) -> Collector {
        let abort = AbortWatch::new(&header.config.abort_on);
        let first = header.measure_start_unix_ns / NS;
        let count_limited = header.config.stop.requests.is_some();
        Collector {
            count_limited,
            plan,
            through: vec![None; workers],
            pending: BTreeMap::new(),
            gauges: BTreeMap::new(),
            next_second: first,
            builder: SummaryBuilder::new(header, None),
            warmup_requests: 0,
            cut: None,
            worker_load: vec![None; workers],
            server: None,
            abort,
            canceller,
        }
    }

    /// Merges what the workers send until the last one is done; each
    /// complete second goes to `events`.
    /// Runs on its own thread, lowered by `priority`, until every worker
    /// is done.
    pub fn run(
        mut self,
        rx: Receiver<WorkerMsg>,
        events: mpsc::Sender<Snapshot>,
        mut priority: Background,
    ) -> RunSummary {
        // Ends when every worker has sent Done and dropped its sender.
        for msg in rx {
            match msg {
                WorkerMsg::Interval {
                    worker,
                    second,
                    rec,
                    in_flight,
                    open,
                } => {
                    priority.keep_up(second);
                    let gauges = self.gauges.entry(second).or_default();
                    gauges.0 += in_flight;
                    gauges.1 += open;
                    // Merged here, off the workers' threads, and dropped.
                    let merged = self.pending.entry(second).or_default();
                    // Its work each second comes in steps of a fraction
                    // of a millisecond; between them a worker sharing
                    // the core may have it.
                    priority.pause();
                    merged.merge_counts(&rec);
                    drop(rec);
                    priority.pause();
                    self.through[worker] = Some(second);
                    priority.pause();
                }
                WorkerMsg::Done {
                    worker,
                    warmup_requests,
                    cut,
                    load,
                    server,
                } => {
                    self.through[worker] = Some(u64::MAX);
                    if self.server.is_none() {
                        self.server = server;
                    }
                    self.worker_load[worker] = load;
                    self.warmup_requests += warmup_requests;
                    if let Some(c) = cut {
                        self.cut = Some(self.cut.map_or(c, |old| old.min(c)));
                    }
                }
            }
            let complete = self.through.iter().map(|p| p.unwrap_or(0)).min();
            if let Some(upto) = complete.filter(|&c| c != u64::MAX) {
                self.emit_through(upto, &events, &priority);
            }
        }
        if let Some(&last) = self.pending.keys().next_back() {
            self.emit_through(last, &events, &priority);
        }
        self.finish()
    }

    /// Emits every second up to and including `upto`, empty ones too.
    fn emit_through(&mut self, upto: u64, events: &mpsc::Sender<Snapshot>, priority: &Background) {
        while self.next_second <= upto {
            let second = self.next_second;
            self.next_second += 1;
            let rec = self.pending.remove(&second).unwrap_or_default();
            let (in_flight, connections_open) = self.gauges.remove(&second).unwrap_or_default();
            let row = self.builder.add(second, &rec);
            priority.pause();
            if let Some(row) = row {
                if let Some(cause) = self.abort.observe(&row) {
                    self.canceller.stop(cause);
                }
                let total = self.builder.total();
                let _ = events.send(Snapshot {
                    row,
                    total_requests: total.requests,
                    total_failed: total.failed(),
                    in_flight,
                    connections_open,
                    recorder: rec,
                });
            }
        }
        // Anything older belongs to warm-up seconds that are not reported.
        self.pending = self.pending.split_off(&self.next_second);
        self.gauges = self.gauges.split_off(&self.next_second);
    }

    fn finish(self) -> RunSummary {
        let plan = &self.plan;
        let start = plan.measure_from;
        let last_done = self.builder.total().last_done.max(start);
        let stopped_early = self
            .cut
            .is_some_and(|c| plan.deadline.is_none_or(|d| c < d));
        // A stop the caller's condition asked for (`--until`) ends a
        // complete run; any other early stop is an interruption.
        let interrupted = stopped_early && !plan.enough.load(std::sync::atomic::Ordering::SeqCst);
        // When sending ended, by the plan rather than by when the last
        // response happened to arrive: a rate run's duration is its
        // schedule, or "1,000 req/s for 5 s" would read as 1,250 req/s when
        // the last response came back at 4 s.
        let send_end = match (self.cut, &plan.pacer, plan.total_slots) {
            (Some(cut), _, _) if stopped_early => cut,
            (_, Some(pacer), Some(slots)) => {
                let end = pacer.at(slots);
                plan.deadline.map_or(end, |d| end.min(d))
            }
            (_, Some(_), None) => plan.deadline.unwrap_or(last_done),
            (Some(cut), None, _) => cut,
            // Closed loop: the deadline if it ended the run (a count can
            // end it first), else like ab, the last response.
            (None, None, _) => match plan.deadline {
                Some(d) if plan.total_slots.is_none() && !self.count_limited => d,
                _ => last_done,
            },
        };
        let duration = send_end.saturating_sub(start);
        let elapsed = last_done.max(send_end) - start;
        self.builder.finish(Some(&RunFooter {
            duration_ns: duration,
            elapsed_ns: elapsed,
            warmup_requests: self.warmup_requests,
            interrupted,
            // Only a run the stop cut short has a cause: a signal after
            // the deadline changed nothing. A scenario's unique feed that
            // ran out ended a complete run, and the report says so.
            stopped_by: match interrupted {
                true => self.canceller.cause(),
                false => plan
                    .scenario
                    .as_ref()
                    .and_then(|sc| sc.ran_out())
                    .map(|(feed, rows)| StopCause::FeedRanOut {
                        feed,
                        rows,
                        at_s: self.cut.map_or(duration, |c| c.saturating_sub(start)) as f64 / 1e9,
                    }),
            },
            // All or nothing: a partial list would hide a busy thread.
            worker_load: self
                .worker_load
                .iter()
                .copied()
                .collect::<Option<Vec<_>>>()
                .unwrap_or_default(),
            server_software: self.server,
        }))
    }
}
