//! What the run's end cut off, recorded as `unfinished`: requests in
//! flight, and (rate mode) slots that were due but never sent.

use super::{InFlight, Worker};
use crate::transport::Runner;
use pelt_core::{ErrorKind, Nanos, Sample};

impl Worker {
    /// Records what the run's end cut off: requests in flight, and (rate
    /// mode) slots that were due but never got a connection.
    pub(super) fn record_unfinished(&self) {
        let now = self.now();
        let cut = self.cut.get();
        for sender in &self.senders {
            let s = sender.in_flight.get();
            if s.active && s.intended < cut {
                let mut sample = Sample::failed(s.target, s.intended, now, ErrorKind::Unfinished);
                sample.sent = s.sent;
                self.record(&sample);
            }
            sender.in_flight.set(InFlight::IDLE);
            // A flow the end cut off was started: its row counts it,
            // failed as unfinished (as its step in flight is).
            if let Some((row, start)) = sender.flow.take() {
                self.record_cut_flow(row, start, now);
            }
        }
        if let (Some(pacer), true) = (&self.plan.pacer, cut != Nanos::MAX) {
            // Slots that fell due before the stop but never got a
            // connection: this worker's share of them, in bulk when there
            // are many (a dead server at a high rate leaves millions).
            let stop = self.plan.deadline.map_or(cut, |d| cut.min(d));
            let due_global = pacer.count_before(stop);
            let mut due_local =
                pelt_core::shard::owned(due_global, self.share.stride, self.share.offset);
            if let Some(limit) = self.share.slots {
                due_local = due_local.min(limit);
            }
            let first = self.next.get();
            let pending = due_local.saturating_sub(first);
            // Grouped for speed, unless each is logged with its own time.
            let step = if self.intervals.borrow().logging() {
                1
            } else {
                pending.div_ceil(MAX_UNFINISHED_RECORDS).max(1)
            };
            let mut seq = first;
            while seq < due_local {
                let n = step.min(due_local - seq);
                // Each group is recorded at its middle slot's time.
                // Groups are attributed to their middle slot's target.
                let mid = self.share.global(seq + n / 2);
                // A scenario's slot is a flow never started: its first
                // step's (the first flow's) request was never sent.
                let target = match &self.plan.scenario {
                    Some(sc) => sc.flows[0].steps[0] as u32,
                    None => self.plan.picker.pick(mid) as u32,
                };
                self.intervals
                    .borrow_mut()
                    .record_unsent(target, pacer.at(mid), now, n);
                seq += n;
            }
        }
    }
}

impl Worker {
    /// Records flow row `row`, started at `start`, as cut off by the
    /// run's end at `now`: started, and failed as `unfinished`.
    pub(super) fn record_cut_flow(&self, row: u32, start: Nanos, now: Nanos) {
        let s = Sample::failed(row, start, now.max(start), ErrorKind::Unfinished);
        self.intervals.borrow_mut().record_flow(&s);
    }
}

/// At most this many separate records for slots left unsent at the end;
/// beyond it they are recorded in groups.
const MAX_UNFINISHED_RECORDS: u64 = 100_000;
