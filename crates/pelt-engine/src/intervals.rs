//! A worker's per-second recorders: every sample goes into the recorder of
//! the wall-clock second it finished in, and each finished second goes,
//! whole, to the collector. Aligning to wall-clock seconds lets seconds
//! from several workers (or machines) merge by adding.

use crate::request_log::RequestLog;
use crate::transport::ConnLedger;
use pelt_core::{ErrorKind, Nanos, Recorder, Sample, ThreadLoad};
use std::rc::Rc;
use std::sync::mpsc::Sender;

const NS_PER_SEC: u64 = 1_000_000_000;

/// What a worker sends to the collector.
#[derive(Debug)]
pub(crate) enum WorkerMsg {
    /// The complete recorder of one wall-clock second.
    Interval {
        worker: usize,
        second: u64,
        rec: Box<Second>,
        /// Requests sent and not yet answered when the second ended.
        in_flight: u64,
        /// Connections open when the second ended.
        open: u64,
    },
    /// The worker has stopped; `cut` is when it stopped sending, if it was
    /// stopped (by deadline or cancel) rather than running out of work.
    Done {
        worker: usize,
        warmup_requests: u64,
        cut: Option<Nanos>,
        /// How busy the worker's thread was while it ran, where known.
        load: Option<ThreadLoad>,
        /// The `Server` header of the worker's first complete response.
        server: Option<String>,
    },
}

/// A worker's recorder of one second: counts in `u32`, half the memory
/// of the run's `u64` ones, which the collector adds it into.
pub(crate) type Second = Recorder<u32>;

/// The worker's current one-second recorder and how to hand it on.
pub(crate) struct Intervals {
    current: Box<Second>,
    /// Wall-clock second (since the Unix epoch) `current` covers.
    second: u64,
    /// End of that second, in run nanoseconds.
    end: Nanos,
    unix_ns_at_epoch: u64,
    measure_from: Nanos,
    warmup: u64,
    tx: Sender<WorkerMsg>,
    worker: usize,
    /// `--log-requests`: every measured request, as it is recorded.
    log: Option<RequestLog>,
    /// Requests sent and not yet recorded: the live views' in-flight
    /// gauge, sampled at each second's end.
    in_flight: u64,
    /// The worker's open connections, sampled likewise, and their TCP
    /// counts, added to each second as they come in.
    open: Rc<ConnLedger>,
}

impl Intervals {
    /// Worker `worker`'s recorders, starting with the second the run's
    /// clock starts in.
    pub fn new(
        worker: usize,
        unix_ns_at_epoch: u64,
        measure_from: Nanos,
        tx: Sender<WorkerMsg>,
    ) -> Intervals {
        let second = unix_ns_at_epoch / NS_PER_SEC;
        Intervals {
            current: Box::new(Second::empty()),
            second,
            end: (second + 1) * NS_PER_SEC - unix_ns_at_epoch,
            unix_ns_at_epoch,
            measure_from,
            warmup: 0,
            tx,
            worker,
            in_flight: 0,
            open: Rc::default(),
            log: None,
        }
    }

    /// Logs every measured request to `log` from now on.
    pub fn log_to(&mut self, log: RequestLog) {
        self.log = Some(log);
    }

    /// Whether requests are logged one by one (so requests never sent
    /// must be recorded one by one too, each with its planned time).
    pub fn logging(&self) -> bool {
        self.log.is_some()
    }

    /// When the current second ends, in run nanoseconds.
    pub fn end(&self) -> Nanos {
        self.end
    }

    /// `--scenario`: records a flow that ended (see
    /// [`Recorder::record_flow`]); warm-up flows are left out.
    pub fn record_flow(&mut self, s: &Sample) {
        if s.intended < self.measure_from {
            return;
        }
        if s.done >= self.end {
            self.rotate(s.done);
        }
        self.current.record_flow(s);
    }

    /// Records a finished request (warm-up requests are only counted).
    pub fn record(&mut self, s: &Sample) {
        self.record_by(s, None);
    }

    /// Records a finished request, a scenario's step sent `by` a virtual
    /// user (the log names it).
    pub fn record_by(&mut self, s: &Sample, by: Option<crate::request_log::StepOf>) {
        if s.sent.is_some() {
            self.in_flight = self.in_flight.saturating_sub(1);
        }
        if s.intended < self.measure_from {
            self.warmup += 1;
            return;
        }
        if s.done >= self.end {
            self.rotate(s.done);
        }
        self.current.record(s);
        if let Some(log) = &mut self.log {
            log.write(s, 1, by);
        }
    }

    /// Counts a request (intended at `intended`, done at `done`) that
    /// carried a cookie from its sender's jar (`--cookies`).
    pub fn count_cookie(&mut self, intended: Nanos, done: Nanos) {
        if intended < self.measure_from {
            return;
        }
        if done >= self.end {
            self.rotate(done);
        }
        self.current.with_cookie += 1;
    }

    /// The second being recorded (tests).
    #[cfg(test)]
    pub fn current(&self) -> &Second {
        &self.current
    }

    /// Counts a request (intended at `intended`, done at `done`) whose
    /// reused connection closed unanswered: sent again on a fresh one if
    /// `retried`, else lost (a method that is not idempotent).
    pub fn count_keepalive_race(&mut self, intended: Nanos, done: Nanos, retried: bool) {
        if intended < self.measure_from {
            return;
        }
        if done >= self.end {
            self.rotate(done);
        }
        match retried {
            true => self.current.retried += 1,
            false => self.current.lost_on_reuse += 1,
        }
    }

    /// Notes that a request (intended at `intended`, done at `done`) was
    /// timed by the kernel's receive stamp and read `lag` after it, and
    /// its departure by the kernel's transmit stamp if `tx_stamped`.
    pub fn record_read_lag(&mut self, intended: Nanos, done: Nanos, lag: Nanos, tx_stamped: bool) {
        if intended < self.measure_from {
            return;
        }
        if done >= self.end {
            self.rotate(done);
        }
        self.current.record_read_lag(lag);
        self.current.tx_stamped += u64::from(tx_stamped);
    }

    /// A streamed response's event (of a request intended at `intended`)
    /// arrived `at`, `gap` after its stream's previous: counted in the
    /// second it arrived in (warm-up requests' events are left out).
    pub fn record_event(
        &mut self,
        intended: Nanos,
        at: Nanos,
        gap: Option<u64>,
        stall_gap: u64,
        latency: pelt_core::stream::EventLatency,
    ) {
        if intended < self.measure_from {
            return;
        }
        if at >= self.end {
            self.rotate(at);
        }
        self.current.record_event(gap, stall_gap, latency);
    }

    /// A streamed response (intended at `intended`, its clock started at
    /// `start`) ended at `done`, complete or cut short.
    pub fn record_stream(
        &mut self,
        intended: Nanos,
        start: Nanos,
        done: Nanos,
        tally: &pelt_core::stream::Tally,
        complete: bool,
    ) {
        if intended < self.measure_from {
            return;
        }
        if done >= self.end {
            self.rotate(done);
        }
        self.current.record_stream(start, tally, complete);
    }

    /// Samples `open` (the worker's open connections) at each second's end.
    pub fn watch_open(&mut self, open: Rc<ConnLedger>) {
        self.open = open;
    }

    /// Notes that a request was just sent (see [`WorkerMsg::Interval`]'s
    /// `in_flight`).
    pub fn count_sent(&mut self) {
        self.in_flight += 1;
    }

    /// Records `n` slots scheduled around `intended` that were never sent.
    pub fn record_unsent(&mut self, target: u32, intended: Nanos, done: Nanos, n: u64) {
        if intended < self.measure_from {
            self.warmup += n;
            return;
        }
        if done >= self.end {
            self.rotate(done);
        }
        self.current.record_unsent(target, intended, done, n);
        if let Some(log) = &mut self.log {
            log.write(
                &Sample::failed(target, intended, done, ErrorKind::Unfinished),
                n,
                None,
            );
        }
    }

    /// Records a new connection's phase times, opened at `at` (outside
    /// warm-up only).
    pub fn record_connection(
        &mut self,
        at: Nanos,
        connect_ns: u64,
        tls_ns: Option<u64>,
        tunnel_ns: Option<u64>,
    ) {
        if at >= self.measure_from {
            self.current.record_connection(connect_ns, tls_ns);
            if let Some(t) = tunnel_ns {
                self.current.record_tunnel(t);
            }
        }
    }

    /// Records a WebSocket upgrade of `ns` that ended at `at` (outside
    /// warm-up only), as its connection is.
    pub fn record_ws_upgrade(&mut self, at: Nanos, ns: u64) {
        if at >= self.measure_from {
            self.current.record_ws_upgrade(ns);
        }
    }

    /// Counts a WebSocket connection that closed with `close` at `at`
    /// (every one: a close belongs to a connection, however early it
    /// opened).
    pub fn record_ws_close(&mut self, close: pelt_core::ws::Close) {
        self.current.record_ws_close(close);
    }

    /// Records a TLS or QUIC handshake of `kind` known at `at` (outside
    /// warm-up only), as its connection is.
    pub fn record_handshake(&mut self, at: Nanos, kind: pelt_core::handshake::Handshake, ns: u64) {
        if at >= self.measure_from {
            self.current.record_handshake(kind, ns);
        }
    }

    /// Keeps `detail` as an example of `kind` for a request intended at
    /// `intended`, if the recorder wants one: the message is built only
    /// then, which is rarely.
    pub fn add_example(
        &mut self,
        intended: Nanos,
        kind: ErrorKind,
        detail: impl FnOnce() -> String,
    ) {
        if intended >= self.measure_from && self.current.wants_example(kind) {
            self.current.add_example(kind, detail());
        }
    }

    /// Hands on the current second if `now` is past its end: called by a
    /// timer, so seconds in which nothing finishes still reach the
    /// collector.
    pub fn tick(&mut self, now: Nanos) {
        if now >= self.end {
            self.rotate(now);
        }
    }

    /// Hands on the last second and tells the collector this worker is
    /// done; `cut` is when it stopped sending, if it was stopped.
    pub fn finish(
        &mut self,
        cut: Option<Nanos>,
        load: Option<ThreadLoad>,
        logins: u64,
        server: Option<String>,
    ) {
        // Logins are outside every figure but their own count: the last
        // second (always measured) carries it.
        self.current.logins += logins;
        // Connections still open now: their counts go in the last second.
        let c = self.open.take_counts(true);
        self.current.tcp_segs_out += c.segs_out;
        self.current.tcp_retrans += c.retrans;
        let end = self.end;
        self.rotate(end);
        // Before the collector hears of the end: once every worker is
        // done, the log is complete on disk.
        if let Some(log) = &mut self.log {
            log.flush();
        }
        let _ = self.tx.send(WorkerMsg::Done {
            worker: self.worker,
            warmup_requests: self.warmup,
            cut,
            load,
            server,
        });
    }

    /// Sends the current second and starts the one containing `t`.
    fn rotate(&mut self, t: Nanos) {
        // A new, empty recorder: its histograms start at 16 KB and grow,
        // exactly, as this second's values need, a step of a few
        // microseconds at a time. The collector drops the old one once
        // it has merged it, so a worker holds one recorder, not one
        // recording and one on its way back: reusing emptied recorders
        // kept two per worker at the size of the run's worst second
        // (800 KB a worker at 1,000 connections).
        let mut rec = std::mem::replace(&mut self.current, Box::new(Second::empty()));
        let c = self.open.take_counts(false);
        rec.tcp_segs_out += c.segs_out;
        rec.tcp_retrans += c.retrans;
        // The collector outlives every worker; a failed send means the
        // whole run is being torn down, and there is nobody to tell.
        let _ = self.tx.send(WorkerMsg::Interval {
            worker: self.worker,
            second: self.second,
            rec,
            in_flight: self.in_flight,
            open: self.open.open(),
        });
        self.second = (self.unix_ns_at_epoch + t) / NS_PER_SEC;
        self.end = (self.second + 1) * NS_PER_SEC - self.unix_ns_at_epoch;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(intended: Nanos, done: Nanos) -> Sample {
        Sample {
            target: 0,
            intended,
            sent: Some(intended),
            first_byte: Some(done),
            done,
            status: 200,
            bytes_in: 100,
            body_bytes: 2,
            bytes_out: 40,
            reused: true,
            error: None,
        }
    }

    #[test]
    fn a_finished_second_goes_whole_and_the_worker_goes_on_in_an_empty_one() {
        let (tx, rx) = std::sync::mpsc::channel();
        // The run's clock starts 0.25 s into a wall-clock second, which
        // so ends at 0.75 s of the run.
        let epoch = 1_700_000_000 * NS_PER_SEC + NS_PER_SEC / 4;
        let mut w = Intervals::new(3, epoch, 0, tx);
        for done in [1_000_000, 400_000_000, 740_000_000] {
            w.record(&ok(done / 2, done));
        }
        w.record(&ok(700_000_000, 760_000_000));
        assert_eq!(w.current().requests, 1);
        assert_eq!(
            w.current().response.max(),
            w.current().response.highest_equivalent(60_000_000)
        );
        w.tick(2 * NS_PER_SEC);
        assert_eq!(w.current().requests, 0);
        let seconds: Vec<(u64, u64, u64)> = rx
            .try_iter()
            .map(|m| match m {
                WorkerMsg::Interval {
                    worker,
                    second,
                    rec,
                    ..
                } => {
                    assert_eq!(worker, 3);
                    (second, rec.requests, rec.response.len())
                }
                WorkerMsg::Done { .. } => panic!("not done"),
            })
            .collect();
        let first = epoch / NS_PER_SEC;
        assert_eq!(seconds, [(first, 3, 3), (first + 1, 1, 1)]);
    }
}
