//! A worker: one thread, one single-threaded tokio runtime, its own
//! senders and its own per-second recorders. Nothing is shared with other
//! workers on the hot path except read-only plan data; results leave once
//! a second as a whole interval recorder.
//!
//! The worker is the scheduler: it decides when each sender sends what
//! (closed loop, rate dispatch, connection schedule, think time), bounds
//! each exchange by `--timeout`, records the sample, and stops. How a
//! request is carried is the sender's [`Transport`](crate::transport::Transport).
//!
//! - this file: the worker's state, its start and its two phases (send
//!   until done, the deadline or a cancel; then a grace for stragglers);
//! - [`senders`]: the sender factory (the one place that knows which
//!   transports exist) and each sender's loop, think time included;
//! - [`dispatch`]: when each sender sends: the closed loop's next
//!   request, a `-c` schedule's active connections, the rate dispatcher;
//! - [`exchange`]: one request under `--timeout`, turned into its sample,
//!   with ab's length check;
//! - [`unfinished`]: what the run's end cut off;
//! - [`flows`]: `--scenario`'s virtual users, each sender running flows
//!   of steps.

mod dispatch;
mod exchange;
mod flows;
mod senders;
mod unfinished;

use crate::conn::Established;
use crate::cpu_load::ThreadClock;
use crate::events::SentAt;
use crate::intervals::{Intervals, WorkerMsg};
use crate::plan::{RunPlan, Share};
use crate::session::Jar;
use crate::timer::PreciseTimer;
use crate::transport::dial::ConnectGate;
use crate::transport::Runner;
use pelt_core::stream::EventLatency;
use pelt_core::{Nanos, Sample};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use tokio::sync::{watch, Notify};

/// Runs a worker to completion on the current thread.
pub(crate) fn run_worker(
    rt: tokio::runtime::Runtime,
    plan: Arc<RunPlan>,
    share: Share,
    jars: Vec<Jar>,
    tx: Sender<WorkerMsg>,
    cancel: watch::Receiver<bool>,
) {
    let local_set = tokio::task::LocalSet::new();
    let worker = Rc::new(Worker::new(plan, share, tx));
    local_set.block_on(&rt, drive(worker.clone(), jars, cancel));
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
    /// `--scenario`: the flow this user has under way (its row, its
    /// start), so that the run's end records it as started and cut off.
    flow: Cell<Option<(u32, Nanos)>>,
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
    /// `--scenario`: a `unique` feed ran out, so no flow starts here again
    /// (flows under way finish).
    rows_out: Cell<bool>,
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
        let now = self.now();
        let mut intervals = self.intervals.borrow_mut();
        intervals.record_connection(now, est.connect_ns, est.tls_ns, est.tunnel_ns);
        // TLS over TCP: full or resumed, in the views `--0rtt` fills.
        if let Some(ns) = est.tls_ns {
            let kind = match est.tls_resumed {
                true => pelt_core::handshake::Handshake::Resumed,
                false => pelt_core::handshake::Handshake::Full,
            };
            intervals.record_handshake(now, kind, ns);
        }
    }

    fn record_ws_upgrade(&self, ns: u64) {
        self.intervals
            .borrow_mut()
            .record_ws_upgrade(self.now(), ns);
    }

    fn record_ws_close(&self, close: pelt_core::ws::Close) {
        self.intervals.borrow_mut().record_ws_close(close);
    }

    fn record_handshake(&self, kind: pelt_core::handshake::Handshake, ns: u64) {
        self.intervals
            .borrow_mut()
            .record_handshake(self.now(), kind, ns);
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

    fn record_event(&self, sender: usize, at: Nanos, gap: Option<u64>, sent: SentAt) {
        let intended = self.senders[sender].in_flight.get().intended;
        let stall_gap = self.plan.http.streamed.stall_gap.as_nanos() as u64;
        let latency = match sent {
            SentAt::NotAsked => EventLatency::NotAsked,
            SentAt::Unreadable => EventLatency::Unreadable,
            // The arrival on the real-time clock the server's stamp is
            // on: the run's clock is monotonic, and the two may drift
            // apart over a long run, so they are paired now.
            SentAt::Unix(unix) => {
                let real_now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                let arrived = real_now.saturating_sub(self.now().saturating_sub(at));
                EventLatency::Of(arrived.saturating_sub(unix))
            }
        };
        self.intervals
            .borrow_mut()
            .record_event(intended, at, gap, stall_gap, latency);
    }
}

impl Worker {
    /// Worker `share.index` of `plan`, handing its seconds to `tx`.
    pub(crate) fn new(plan: Arc<RunPlan>, share: Share, tx: Sender<WorkerMsg>) -> Worker {
        let senders = plan.senders(&share);
        let mut intervals =
            Intervals::new(share.index, plan.unix_ns_at_epoch, plan.measure_from, tx);
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
            rows_out: Cell::new(false),
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

    /// Folds a finished request into the current second.
    fn record(&self, sample: &Sample) {
        self.intervals.borrow_mut().record(sample);
    }
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

/// The worker's life: its senders spawned, the start awaited, then the
/// two phases of a run and the last second handed over.
async fn drive(worker: Rc<Worker>, jars: Vec<Jar>, mut cancel: watch::Receiver<bool>) {
    let plan = worker.plan.clone();
    // Senders first: in rate mode some open their connections before the
    // start (see `warm_senders`); each then waits for the start.
    worker.alive.set(worker.senders.len());
    senders::spawn_senders(&worker, jars);
    match PreciseTimer::new() {
        Ok(t) => t.sleep_until(plan.instant(0).into_std()).await,
        Err(_) => tokio::time::sleep_until(plan.instant(0)).await,
    }
    worker.started.set(true);
    let started = ThreadClock::now();
    tokio::task::spawn_local(ticker(worker.clone()));
    if plan.pacer.is_some() {
        tokio::task::spawn_local(dispatch::dispatcher(worker.clone()));
    }

    let grace = plan.grace;
    let mut cancel_open = true;
    // Phase 1: run until the work is done, the deadline passes, or Ctrl-C.
    let hard_stop = loop {
        if worker.alive.get() == 0 {
            if plan.scenario.is_some() && plan.deadline.is_some() {
                // Every virtual user stopped before the deadline
                // (on_failure = "end_user"): the run ends here, complete
                // (as --until ends one), and its duration with it.
                plan.enough.store(true, std::sync::atomic::Ordering::SeqCst);
                worker.cut.set(worker.cut.get().min(worker.now()));
            }
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
