//! A worker: one thread, one single-threaded tokio runtime, its own
//! senders and its own per-second recorders. Nothing is shared with other
//! workers on the hot path except read-only plan data; results leave once
//! a second as a whole interval recorder.
//!
//! The worker is the scheduler: it decides when each sender sends what
//! (closed loop, rate dispatch, connection schedule, think time), bounds
//! each exchange by `--timeout`, records the sample, and stops. How a
//! request is carried is the sender's [`Transport`].

use crate::conn::Established;
use crate::h1::sender::H1Sender;
use crate::h2::sender::{H2Sender, SharedConn};
use crate::intervals::{Intervals, WorkerMsg};
use crate::load::ThreadClock;
use crate::plan::{RunPlan, Share, LENGTH_UNSET};
use crate::timer::{Batching, PreciseTimer};
use crate::transport::dial::ConnectGate;
use crate::transport::{Attempt, Runner, Transport};
use pelt_core::{ErrorKind, Nanos, Recorder, Sample};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use tokio::sync::{watch, Notify};

/// Runs a worker to completion on the current thread.
pub(crate) fn run_worker(
    rt: tokio::runtime::Runtime,
    plan: Arc<RunPlan>,
    share: Share,
    tx: Sender<WorkerMsg>,
    recycled: Receiver<Box<Recorder>>,
    cancel: watch::Receiver<bool>,
) {
    let local_set = tokio::task::LocalSet::new();
    let worker = Rc::new(Worker::new(plan, share, tx, recycled));
    local_set.block_on(&rt, drive(worker.clone(), cancel));
    // Dropping the set cancels sender tasks still waiting; the driver
    // has already recorded what they held as unfinished.
    drop(local_set);
}

/// The request a sender is working on, so that it can be recorded as
/// unfinished if the run ends first.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    active: bool,
    target: u32,
    intended: Nanos,
    sent: Option<Nanos>,
}

impl Default for InFlight {
    fn default() -> Self {
        InFlight::IDLE
    }
}

impl InFlight {
    const IDLE: InFlight = InFlight {
        active: false,
        target: 0,
        intended: 0,
        sent: None,
    };
}

/// Per-sender state the worker can see. A sender is an HTTP/1.1
/// connection, or one stream of an HTTP/2 connection.
#[derive(Debug, Default)]
struct SenderState {
    in_flight: Cell<InFlight>,
    /// Rate mode: a job (target, intended start) handed over by the
    /// dispatcher.
    job: Cell<Option<(u32, Nanos)>>,
    wake: Notify,
}

pub(crate) struct Worker {
    plan: Arc<RunPlan>,
    share: Share,
    /// Rate mode: this worker's next schedule slot. Closed loop: requests
    /// started, for round-robin target choice.
    next: Cell<u64>,
    budget: Cell<Option<u64>>,
    stopping: Cell<bool>,
    /// When sending stopped; `Nanos::MAX` while running.
    cut: Cell<Nanos>,
    /// Wakes senders sleeping until their next job when the run stops.
    stop: Notify,
    /// One per sender: connections × streams.
    senders: Vec<SenderState>,
    /// Rate mode: idle senders, most recently used last, so the
    /// dispatcher hands work to warm connections and the pool only grows
    /// when the load needs it.
    idle: RefCell<Vec<usize>>,
    /// Wakes the dispatcher when a sender goes idle.
    idle_added: Notify,
    alive: Cell<usize>,
    all_done: Notify,
    intervals: RefCell<Intervals>,
    /// `--connect-rate`: this worker's share of it.
    connect_gate: ConnectGate,
    /// Connections open now (see `transport::OpenConn`).
    open: Rc<crate::transport::ConnLedger>,
    /// Whether the run's start has come (senders may exist before it).
    started: Cell<bool>,
    /// Whether the first complete response's `Server` header is still to
    /// be looked at (see [`Runner::wants_server`]), and what it said.
    server_wanted: Cell<bool>,
    server: RefCell<Option<String>>,
}

impl Runner for Worker {
    fn plan(&self) -> &RunPlan {
        &self.plan
    }

    fn mark_sent(&self, sender: usize) -> Nanos {
        let sent = self.now();
        self.intervals.borrow_mut().count_sent();
        let state = &self.senders[sender].in_flight;
        state.set(InFlight {
            sent: Some(sent),
            ..state.get()
        });
        sent
    }

    fn record_connection(&self, est: &Established) {
        self.intervals.borrow_mut().record_connection(
            self.now(),
            est.connect_ns,
            est.tls_ns,
            est.tunnel_ns,
        );
    }

    fn connect_gate(&self) -> &ConnectGate {
        &self.connect_gate
    }

    fn open_connections(&self) -> &Rc<crate::transport::ConnLedger> {
        &self.open
    }

    fn wants_server(&self) -> bool {
        self.server_wanted.get()
    }

    fn note_server(&self, server: Option<String>) {
        // Senders that started reading before the first response came in
        // also report: the first to finish decides.
        if self.server_wanted.replace(false) {
            *self.server.borrow_mut() = server;
        }
    }
}

impl Worker {
    /// Worker `share.index` of `plan`, handing its seconds to `tx`.
    pub(crate) fn new(
        plan: Arc<RunPlan>,
        share: Share,
        tx: Sender<WorkerMsg>,
        recycled: Receiver<Box<Recorder>>,
    ) -> Worker {
        let senders = share.connections as usize * plan.streams.max(1) as usize;
        let mut intervals = Intervals::new(
            share.index,
            plan.unix_ns_at_epoch,
            plan.measure_from,
            tx,
            recycled,
        );
        if let Some(shared) = &plan.request_log {
            intervals.log_to(crate::request_log::RequestLog::open(shared.clone()));
        }
        let open = Rc::new(crate::transport::ConnLedger::default());
        intervals.watch_open(open.clone());
        Worker {
            open,
            started: Cell::new(false),
            server_wanted: Cell::new(true),
            server: RefCell::new(None),
            intervals: RefCell::new(intervals),
            connect_gate: ConnectGate::new(plan.connect_interval),
            plan,
            share,
            next: Cell::new(0),
            budget: Cell::new(share.budget),
            stopping: Cell::new(false),
            cut: Cell::new(Nanos::MAX),
            stop: Notify::new(),
            senders: (0..senders).map(|_| SenderState::default()).collect(),
            idle: RefCell::new(Vec::with_capacity(senders)),
            idle_added: Notify::new(),
            alive: Cell::new(0),
            all_done: Notify::new(),
        }
    }

    fn begin_stop(&self, at: Nanos) {
        self.stopping.set(true);
        self.cut.set(self.cut.get().min(at));
        self.stop.notify_waiters();
    }

    /// Closed loop with a `-c` schedule: waits until the connection of
    /// sender `sender` is active, closing it while it is not (the user has
    /// left). Returns `false` when it will not be active again before the
    /// run ends. Which connections are active is a function of time alone.
    async fn wait_active(&self, sender: usize, transport: &mut impl Transport) -> bool {
        let Some(schedule) = &self.plan.connection_schedule else {
            return true;
        };
        let k = self.share.global(sender as u64) as f64;
        let from = self.plan.measure_from;
        loop {
            if self.stopping.get() {
                return false;
            }
            // Seconds into the schedule (negative during warm-up, which
            // holds the first level).
            let t = (self.now() as f64 - from as f64) / 1e9;
            if schedule.level(t) > k {
                return true;
            }
            // Inactive: close, so the server sees the level too.
            transport.reset();
            let Some(next) = schedule.next_above(k, t) else {
                return false;
            };
            let at = from.saturating_add((next * 1e9) as Nanos);
            if self.plan.deadline.is_some_and(|d| at >= d) {
                return false;
            }
            tokio::select! {
                _ = tokio::time::sleep_until(self.plan.instant(at)) => {}
                _ = self.stop.notified() => {}
            }
        }
    }

    /// The next request for sender `sender`: `(target, intended start)`,
    /// or `None` when this sender should stop.
    async fn next_job(&self, sender: usize) -> Option<(u32, Nanos)> {
        if self.stopping.get() {
            return None;
        }
        if self.plan.pacer.is_none() {
            // Closed loop: start now, if the count and clock allow.
            let now = self.now();
            if self.plan.deadline.is_some_and(|d| now >= d) {
                return None;
            }
            if now >= self.plan.measure_from {
                if let Some(left) = self.budget.get() {
                    if left == 0 {
                        return None;
                    }
                    self.budget.set(Some(left - 1));
                }
            }
            let n = self.next.get();
            self.next.set(n + 1);
            // Number requests across workers, as rate slots are, so that
            // random order does not repeat per worker.
            let seq = self.share.global(n);
            let target = self.plan.picker.pick(seq) as u32;
            self.senders[sender].in_flight.set(InFlight {
                active: true,
                target,
                intended: now,
                sent: None,
            });
            return Some((target, now));
        }
        // Open loop. A sender that frees up late takes an overdue slot at
        // once (the wait shows in its response time); otherwise it goes
        // idle and the dispatcher hands it a slot when one falls due.
        loop {
            if self.stopping.get() {
                return None;
            }
            match self.next_slot() {
                None => return None,
                // Not before the run's start (the clock reads 0 until then).
                Some((seq, target, intended)) if self.started.get() && intended <= self.now() => {
                    return Some(self.claim(sender, seq, target, intended));
                }
                Some(_) => {}
            }
            self.idle.borrow_mut().push(sender);
            self.idle_added.notify_one();
            tokio::select! {
                _ = self.senders[sender].wake.notified() => {}
                _ = self.stop.notified() => {}
            }
            if let Some(job) = self.senders[sender].job.take() {
                return Some(job);
            }
        }
    }

    /// Rate mode: how many senders open their connection before the run
    /// starts: about the requests due in its first half millisecond, and
    /// two more, at most the pool (each connect costs the start time; the
    /// pool grows later as the load needs).
    fn warm_senders(&self) -> usize {
        let Some(pacer) = &self.plan.pacer else {
            return 0;
        };
        let due = pacer.count_before(500_000) / self.share.stride.max(1);
        (due + 2).min(self.senders.len() as u64) as usize
    }

    /// The next unclaimed schedule slot: `(seq, target, intended)`, or
    /// `None` when the schedule is exhausted (count or deadline).
    fn next_slot(&self) -> Option<(u64, u32, Nanos)> {
        let seq = self.next.get();
        let (target, intended) = self.plan.slot(&self.share, seq)?;
        Some((seq, target, intended))
    }

    /// Gives schedule slot `seq` to sender `sender`.
    fn claim(&self, sender: usize, seq: u64, target: u32, intended: Nanos) -> (u32, Nanos) {
        self.next.set(seq + 1);
        self.senders[sender].in_flight.set(InFlight {
            active: true,
            target,
            intended,
            sent: None,
        });
        (target, intended)
    }

    /// Sends one request and reads its response, never longer than
    /// `--timeout`. Always returns a sample: failures are data.
    pub(crate) async fn exchange(
        &self,
        transport: &mut impl Transport,
        target: u32,
        intended: Nanos,
        sender: usize,
    ) -> Sample {
        let plan = &*self.plan;
        // In a closed loop the request starts when it was decided on, an
        // instant ago; in rate mode it may start long after its slot.
        let started = if plan.pacer.is_none() {
            intended
        } else {
            self.now()
        };
        let deadline = plan.instant(started) + plan.timeout;
        let mut attempt = Attempt::default();
        let result = tokio::time::timeout_at(
            deadline,
            transport.attempt(self, target, sender, &mut attempt),
        )
        .await;
        let now = self.now();
        let mut sample = Sample {
            target,
            intended,
            sent: attempt.sent,
            first_byte: attempt.first_byte,
            done: now,
            status: 0,
            bytes_in: 0,
            body_bytes: 0,
            bytes_out: attempt.bytes_out,
            reused: attempt.reused,
            error: None,
        };
        if attempt.cookie {
            self.intervals
                .borrow_mut()
                .count_cookie(intended, sample.done);
        }
        if attempt.retried || attempt.lost_on_reuse {
            self.intervals.borrow_mut().count_keepalive_race(
                intended,
                sample.done,
                attempt.retried,
            );
        }
        match result {
            Ok(Ok(resp)) => {
                if let Some(done) = attempt.done {
                    sample.done = done;
                    self.intervals.borrow_mut().record_read_lag(
                        intended,
                        done,
                        now - done,
                        attempt.tx_stamped,
                    );
                }
                sample.status = resp.status;
                sample.bytes_in = resp.bytes_in;
                sample.body_bytes = resp.body_bytes;
                if (200..300).contains(&resp.status) && !self.plan.http.accept_variable_length {
                    self.check_length(&mut sample);
                }
            }
            Ok(Err(failure)) if failure.kind == ErrorKind::Unfinished => {
                // Never sent; the sender drops it (see `ConnectGate::permit`).
                sample.error = Some(ErrorKind::Unfinished);
            }
            Ok(Err(failure)) => {
                transport.reset();
                sample.status = failure.status;
                sample.bytes_in = failure.bytes_in;
                self.fail(&mut sample, failure.kind, || failure.detail);
            }
            Err(_elapsed) => {
                transport.reset();
                let sent = sample.sent.is_some();
                self.fail(&mut sample, ErrorKind::Timeout, || match sent {
                    true => format!("no complete response within --timeout {:?}", plan.timeout),
                    // Else the wait looks like a slow server.
                    false => format!(
                        "no complete response within --timeout {:?}: the request was never \
                         sent (no connection was ready, or with --http2 the server's limit \
                         on concurrent streams allowed no new one)",
                        plan.timeout
                    ),
                });
            }
        }
        sample
    }

    /// Requests counted as retried, and as lost on a reused connection,
    /// in the current second (tests).
    #[cfg(test)]
    pub(crate) fn races_so_far(&self) -> [u64; 2] {
        let i = self.intervals.borrow();
        [i.current().retried, i.current().lost_on_reuse]
    }

    /// ab's Length check: a 2xx body whose length differs from the first
    /// 2xx body of the same target is a failure.
    fn check_length(&self, sample: &mut Sample) {
        let expected = &self.plan.expected_len[sample.target as usize];
        // Load first: a shared read is cheap, a compare-exchange takes the
        // cache line away from the other workers on every request.
        let mut first = expected.load(Ordering::Relaxed);
        if first == LENGTH_UNSET {
            first = match expected.compare_exchange(
                LENGTH_UNSET,
                sample.body_bytes,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => sample.body_bytes,
                Err(existing) => existing,
            };
        }
        if first != sample.body_bytes {
            let got = sample.body_bytes;
            self.fail(sample, ErrorKind::Length, || {
                format!("body was {got} bytes; the first response for this target had {first}")
            });
        }
    }

    /// Marks `sample` failed with `kind`, keeping the message as an example
    /// only if the recorder wants one (so the message is rarely built).
    fn fail(&self, sample: &mut Sample, kind: ErrorKind, detail: impl FnOnce() -> String) {
        sample.error = Some(kind);
        self.intervals
            .borrow_mut()
            .add_example(sample.intended, kind, detail);
    }

    fn record(&self, sample: &Sample) {
        self.intervals.borrow_mut().record(sample);
    }

    /// Records what the run's end cut off: requests in flight, and (rate
    /// mode) slots that were due but never got a connection.
    fn record_unfinished(&self) {
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
                let target = self.plan.picker.pick(mid) as u32;
                self.intervals
                    .borrow_mut()
                    .record_unsent(target, pacer.at(mid), now, n);
                seq += n;
            }
        }
    }
}

/// At most this many separate records for slots left unsent at the end;
/// beyond it they are recorded in groups.
const MAX_UNFINISHED_RECORDS: u64 = 100_000;

/// One sender's loop: take the next request, exchange it, record it.
async fn run_sender(worker: Rc<Worker>, sender: usize, mut transport: impl Transport) {
    let mut done = 0u64;
    if sender < worker.warm_senders() {
        // Before the run's start, in the moments the threads take to line
        // up; bounded like any connect, and cut short by a stop.
        let warm = transport.warm(&*worker, worker.plan.picker.pick(0) as u32);
        tokio::select! {
            _ = tokio::time::timeout(worker.plan.connect_timeout, warm) => {}
            _ = worker.stop.notified() => {}
        }
    }
    if worker.plan.pacer.is_none() {
        // A closed loop starts sending at the start; in rate mode the
        // sender goes idle at once and the dispatcher hands it its first
        // job when one falls due (tokio's timer would wake it up to a
        // millisecond late, and the first jobs would wait for it).
        tokio::time::sleep_until(worker.plan.instant(0)).await;
    }
    while worker.wait_active(sender, &mut transport).await {
        let Some((target, intended)) = worker.next_job(sender).await else {
            break;
        };
        done += 1;
        let sample = worker
            .exchange(&mut transport, target, intended, sender)
            .await;
        worker.senders[sender].in_flight.set(InFlight::IDLE);
        if sample.error == Some(ErrorKind::Unfinished) {
            // Abandoned before it was sent (see `ConnectGate::permit`).
            break;
        }
        worker.record(&sample);
        if let Some(think) = worker.plan.think {
            // Think time, outside any request's clock; never past the
            // deadline, and cut short by Ctrl-C.
            let conn_id = worker.share.global(sender as u64);
            let mut until = worker.plan.instant(worker.now()) + think.pause(conn_id, done);
            if let Some(d) = worker.plan.deadline {
                until = until.min(worker.plan.instant(d));
            }
            tokio::select! {
                _ = tokio::time::sleep_until(until) => {}
                _ = worker.stop.notified() => {}
            }
        } else if sample.error.is_some() {
            // A connect that fails synchronously (EMFILE, EADDRNOTAVAIL)
            // never returns Pending: without this the loop would starve
            // the worker's other tasks, its ticker and Ctrl-C.
            tokio::task::yield_now().await;
        }
    }
    worker.alive.set(worker.alive.get() - 1);
    if worker.alive.get() == 0 {
        worker.all_done.notify_one();
    }
}

/// Rate mode: wakes when the next slot falls due and hands it to the most
/// recently idle sender. Each wake-up dispatches every slot due within
/// half the send window (see [`pelt_core::SendWindow`]), each stamped with
/// its own scheduled time, so timer granularity never shifts the schedule;
/// it only shows as send lag. While it sleeps, the thread does not wake
/// for arriving responses either ([`crate::timer::Batching`]): they are
/// read at the next wake-up, timed by the kernel's stamps.
async fn dispatcher(worker: Rc<Worker>) {
    // Without a timerfd (not Linux, or out of descriptors) fall back to
    // tokio's millisecond timer; the lateness then shows as send lag.
    let timer = PreciseTimer::new().ok();
    let windowed = !worker.plan.send_window.max().is_zero();
    let mut last_wake: Nanos = 0;
    let mut window: Nanos = 0;
    loop {
        if worker.stopping.get() {
            return;
        }
        let Some((seq, target, intended)) = worker.next_slot() else {
            // Schedule exhausted: release idle senders so they finish.
            for sender in worker.idle.borrow_mut().drain(..) {
                worker.senders[sender].wake.notify_one();
            }
            return;
        };
        let now = worker.now();
        if windowed && intended > now {
            window = send_window(&worker, seq, intended);
        }
        let half = window / 2;
        if intended > now + half {
            // Not before the slot is within half a window, nor sooner than
            // a window after the last wake-up: that spacing is what saves
            // the wake-ups.
            let wake = intended
                .saturating_sub(half)
                .max(last_wake.saturating_add(window));
            let at = worker.plan.instant(wake);
            let _batching = (window > 0).then(|| Batching::until(at.into_std(), window));
            tokio::select! {
                _ = async {
                    match &timer {
                        Some(t) => t.sleep_until(at.into_std()).await,
                        None => tokio::time::sleep_until(at).await,
                    }
                } => {}
                _ = worker.stop.notified() => {}
            }
            last_wake = worker.now();
            continue;
        }
        let idle = worker.idle.borrow_mut().pop();
        match idle {
            Some(sender) => {
                let job = worker.claim(sender, seq, target, intended);
                worker.senders[sender].job.set(Some(job));
                worker.senders[sender].wake.notify_one();
            }
            // Every sender is busy: the slot waits in the client, its
            // clock running, until one frees up and takes it.
            None => {
                tokio::select! {
                    _ = worker.idle_added.notified() => {}
                    _ = worker.stop.notified() => {}
                }
            }
        }
    }
}

/// The send window around slot `seq` (intended at `intended`), by the
/// gap to the next slot (see [`pelt_core::SendWindow::width`]).
fn send_window(worker: &Worker, seq: u64, intended: Nanos) -> Nanos {
    let Some((_, next)) = worker.plan.slot(&worker.share, seq + 1) else {
        return 0;
    };
    let gap = std::time::Duration::from_nanos(next.saturating_sub(intended));
    worker.plan.send_window.width(gap).as_nanos() as Nanos
}

/// Hands a finished second to the collector even when no request completes
/// in it, so progress and the timeline keep moving through a stall.
async fn ticker(worker: Rc<Worker>) {
    loop {
        let end = worker.intervals.borrow().end();
        tokio::time::sleep_until(worker.plan.instant(end)).await;
        let now = worker.now();
        worker.intervals.borrow_mut().tick(now);
    }
}

async fn drive(worker: Rc<Worker>, mut cancel: watch::Receiver<bool>) {
    let plan = worker.plan.clone();
    // Senders first: in rate mode some open their connections before the
    // start (see `warm_senders`); each then waits for the start.
    worker.alive.set(worker.senders.len());
    spawn_senders(&worker);
    match PreciseTimer::new() {
        Ok(t) => t.sleep_until(plan.instant(0).into_std()).await,
        Err(_) => tokio::time::sleep_until(plan.instant(0)).await,
    }
    worker.started.set(true);
    let started = ThreadClock::now();
    tokio::task::spawn_local(ticker(worker.clone()));
    if plan.pacer.is_some() {
        tokio::task::spawn_local(dispatcher(worker.clone()));
    }

    let grace = plan.grace;
    let mut cancel_open = true;
    // Phase 1: run until the work is done, the deadline passes, or Ctrl-C.
    let hard_stop = loop {
        if worker.alive.get() == 0 {
            break None;
        }
        let deadline = plan.deadline.filter(|_| worker.cut.get() == Nanos::MAX);
        tokio::select! {
            _ = worker.all_done.notified() => {}
            changed = cancel.changed(), if cancel_open => {
                match changed {
                    Ok(()) if *cancel.borrow() => {
                        let now = worker.now();
                        worker.begin_stop(now);
                        break Some(plan.instant(now) + grace);
                    }
                    Ok(()) => {}
                    // The run handle was dropped without cancelling.
                    Err(_) => cancel_open = false,
                }
            }
            _ = tokio::time::sleep_until(plan.instant(deadline.unwrap_or(0))), if deadline.is_some() => {
                // The deadline closes the schedule: no slot at or after it
                // is taken, but slots due before it still go out, late if
                // the client is behind, with the lateness measured. Only
                // Ctrl-C stops sending outright. Requests still pending at
                // the hard stop are recorded as unfinished.
                let d = deadline.unwrap_or(0);
                worker.cut.set(worker.cut.get().min(d));
                break Some(plan.instant(d) + grace);
            }
        }
    };
    // The thread's load over the sending, warm-up included: the wait for
    // stragglers below is mostly idle and would dilute a busy run's share
    // (10 s flat out, then a 2 s wait for one stuck request, reads 83 %).
    let sending_ended = ThreadClock::now();
    // Phase 2: give requests in flight a moment to finish.
    if let Some(hard_stop) = hard_stop {
        if worker.alive.get() > 0 {
            tokio::select! {
                _ = worker.all_done.notified() => {}
                _ = tokio::time::sleep_until(hard_stop) => {}
            }
        }
    }
    worker.record_unfinished();
    let cut = worker.cut.get();
    let load = started.zip(sending_ended).map(|(s, e)| e.since(&s));
    // Worker 0 reports the logins, made before the run by all workers'
    // senders.
    let logins = match worker.share.index {
        0 => plan.logins,
        _ => 0,
    };
    worker.intervals.borrow_mut().finish(
        (cut != Nanos::MAX).then_some(cut),
        load,
        logins,
        worker.server.take(),
    );
}

/// Starts a task per sender, each with the transport the plan asks for:
/// the one place that knows which transports exist.
fn spawn_senders(worker: &Rc<Worker>) {
    let plan = &worker.plan;
    // --cookies or --login: a jar per sender, the login's if any.
    let mut jars = plan.take_jars(worker.share.index).into_iter();
    let session = !plan.http.session.is_off();
    let mut jar = move || session.then(|| jars.next().unwrap_or_default());
    if plan.streams > 0 {
        // HTTP/2: `streams` consecutive senders share each connection.
        let per_conn = plan.streams as usize;
        let mut shared = None;
        for sender in 0..worker.senders.len() {
            if sender % per_conn == 0 {
                shared = Some(SharedConn::new(plan.origins.len()));
            }
            let conn = shared.clone().expect("set at the first stream");
            tokio::task::spawn_local(run_sender(
                worker.clone(),
                sender,
                H2Sender::new(conn, jar()),
            ));
        }
    } else {
        for sender in 0..worker.senders.len() {
            tokio::task::spawn_local(run_sender(worker.clone(), sender, H1Sender::new(jar())));
        }
    }
}
