//! When each sender sends: the closed loop's next request (now, within
//! the count and the deadline), a `-c` schedule's active connections, and
//! the rate dispatcher handing schedule slots to idle senders.

use super::{InFlight, Worker};
use crate::timer::{Batching, PreciseTimer};
use crate::transport::{Runner, Transport};
use pelt_core::Nanos;
use std::rc::Rc;

impl Worker {
    /// Closed loop with a `-c` schedule: waits until the connection of
    /// sender `sender` is active, closing it while it is not (the user has
    /// left). Returns `false` when it will not be active again before the
    /// run ends. Which connections are active is a function of time alone.
    pub(super) async fn wait_active(&self, sender: usize, transport: &mut impl Transport) -> bool {
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
            // Inactive: close as the protocol asks (WebSocket's close
            // handshake), so the server sees the level too.
            transport.finish(self).await;
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
    pub(super) async fn next_job(&self, sender: usize) -> Option<(u32, Nanos)> {
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
            // A scenario's unique feed that ran out starts no more flows.
            if self.stopping.get() || self.rows_out.get() {
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
    pub(super) fn warm_senders(&self) -> usize {
        let Some(pacer) = &self.plan.pacer else {
            return 0;
        };
        let due = pacer.count_before(500_000) / self.share.stride.max(1);
        (due + 2).min(self.senders.len() as u64) as usize
    }

    /// The next unclaimed schedule slot: `(seq, target, intended)`, or
    /// `None` when the schedule is exhausted (count or deadline).
    pub(super) fn next_slot(&self) -> Option<(u64, u32, Nanos)> {
        let seq = self.next.get();
        let (target, intended) = self.plan.slot(&self.share, seq)?;
        Some((seq, target, intended))
    }

    /// Gives schedule slot `seq` to sender `sender`.
    pub(super) fn claim(
        &self,
        sender: usize,
        seq: u64,
        target: u32,
        intended: Nanos,
    ) -> (u32, Nanos) {
        self.next.set(seq + 1);
        self.senders[sender].in_flight.set(InFlight {
            active: true,
            target,
            intended,
            sent: None,
        });
        (target, intended)
    }
}

/// Rate mode: wakes when the next slot falls due and hands it to the most
/// recently idle sender. Each wake-up dispatches every slot due within
/// half the send window (see [`pelt_core::SendWindow`]), each stamped with
/// its own scheduled time, so timer granularity never shifts the schedule;
/// it only shows as send lag. While it sleeps, the thread does not wake
/// for arriving responses either ([`crate::timer::Batching`]): they are
/// read at the next wake-up, timed by the kernel's stamps.
pub(super) async fn dispatcher(worker: Rc<Worker>) {
    // Without a timerfd (not Linux, or out of descriptors) fall back to
    // tokio's millisecond timer; the lateness then shows as send lag.
    let timer = PreciseTimer::new().ok();
    let windowed = !worker.plan.send_window.max().is_zero();
    let mut last_wake: Nanos = 0;
    let mut window: Nanos = 0;
    loop {
        if worker.stopping.get() || worker.rows_out.get() {
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
