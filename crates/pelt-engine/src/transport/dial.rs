//! Dialling: one way to open a connection for every transport and every
//! redirect hop: wait for `--connect-rate` to allow it, connect (TCP,
//! TLS), and classify a failure.

use super::Runner;
use crate::conn::{connect_from, Established, Origin, Stream};
use crate::outcome::Failure;
use pelt_core::{ErrorKind, Nanos};
use std::cell::Cell;

/// `--connect-rate` for one worker: a token bucket holding one token,
/// refilled every `interval` (the worker's share of the rate).
#[derive(Debug)]
pub(crate) struct ConnectGate {
    /// `None` without `--connect-rate`: every connection may open at once.
    interval: Option<Nanos>,
    /// The earliest time the next connection may open.
    next: Cell<Nanos>,
    /// Whether a waiter is sleeping until `next`: only one does, the rest
    /// wait on `turn`. When every waiter slept until the token, each one
    /// taken woke them all: 8,000 waiters on a worker made 64 million
    /// wake-ups for 8,000 connections, and a 2-core machine opened a
    /// fifth of them in the time asked (issue 27).
    sleeping: Cell<bool>,
    /// Passes the sleeping role on: to the next waiter when the sleeper
    /// took the token or gave up waiting.
    turn: tokio::sync::Notify,
}

/// How late tokio's timer may wake a waiter (its resolution is a
/// millisecond) with the tokens due meanwhile still given out.
const TIMER_SLACK: Nanos = 2_000_000;

/// Hands the sleeping role on when its holder stops, however it stops (a
/// token taken, or a wait cut short by `--timeout` or a stop).
struct Sleeper<'a>(&'a ConnectGate);

impl Drop for Sleeper<'_> {
    fn drop(&mut self) {
        self.0.sleeping.set(false);
        self.0.turn.notify_one();
    }
}

impl ConnectGate {
    /// A gate that lets one connection through per `interval`, if any.
    pub fn new(interval: Option<Nanos>) -> ConnectGate {
        ConnectGate {
            interval,
            next: Cell::new(0),
            sleeping: Cell::new(false),
            turn: tokio::sync::Notify::new(),
        }
    }

    /// Waits for the token. Nothing is booked ahead: a waiter takes the
    /// token only when it is there, so a wait cut short (the request's
    /// `--timeout`, Ctrl-C) leaves no token taken that nobody uses. The
    /// waiting request's clock runs: in rate mode the wait shows as send
    /// lag, in a closed loop as slower requests. A closed-loop request
    /// whose token would come after the deadline is abandoned unsent (an
    /// `Unfinished` failure that the sender does not record), as if it had
    /// been decided on after the deadline (only with `unsent`: a redirect
    /// of a request already sent always waits).
    pub async fn permit(&self, w: &impl Runner, unsent: bool) -> Result<(), Failure> {
        let Some(interval) = self.interval else {
            return Ok(());
        };
        let plan = w.plan();
        // Whether this waiter slept until the token (rather than being
        // handed a turn): it wakes the waiters for the tokens due now.
        let mut slept = false;
        loop {
            let now = w.now();
            let at = self.next.get();
            if unsent && plan.pacer.is_none() && plan.deadline.is_some_and(|d| at.max(now) >= d) {
                // The waiters after this one learn the same at once.
                self.turn.notify_one();
                return Err(Failure::new(
                    ErrorKind::Unfinished,
                    "the run ended before --connect-rate allowed a connection",
                ));
            }
            if at <= now {
                // Keep the cadence when a waiter wakes a little late; after
                // an idle spell start afresh, so no burst builds up.
                // tokio's timer wakes up to a millisecond late: tokens
                // due meanwhile are still given out, at most that many.
                let from = if now - at < interval.max(TIMER_SLACK) {
                    at
                } else {
                    now
                };
                let next = from.saturating_add(interval);
                self.next.set(next);
                // Waiters for the tokens due now, woken together rather
                // than one after another through a busy worker's queue.
                let due = if slept && next <= now {
                    (now - next) / interval + 1
                } else {
                    0
                };
                for _ in 0..due {
                    self.turn.notify_one();
                }
                if !self.sleeping.get() {
                    // Nobody sleeps for the next token: one waiter comes
                    // to take it, or to sleep for it.
                    self.turn.notify_one();
                }
                return Ok(());
            }
            if self.sleeping.get() {
                // Another waiter sleeps until the token; wait for it to
                // take the token (or give up) and pass the role on.
                self.turn.notified().await;
                continue;
            }
            self.sleeping.set(true);
            let _role = Sleeper(self);
            tokio::time::sleep_until(plan.instant(at)).await;
            slept = true;
            // `_role` drops here: the next waiter sleeps for the token
            // after the one this waiter now takes.
        }
    }
}

/// Connects to `origin`, paced by `--connect-rate` (`unsent`: whether
/// the request is still unsent while it waits, see
/// [`ConnectGate::permit`]). The phase times come back unrecorded, for a
/// caller that has more handshaking to do (HTTP/2) before the connection
/// counts.
pub(crate) async fn dial(
    w: &impl Runner,
    origin: &Origin,
    unsent: bool,
) -> Result<(Stream, Established), Failure> {
    w.connect_gate().permit(w, unsent).await?;
    let plan = w.plan();
    // Boxed, once per connection: the connect and TLS handshake's state
    // is the largest part of a sender's future, which every sender task
    // holds for the whole run (issue 27: memory per connection).
    Box::pin(connect_from(
        origin,
        plan.source_for(origin),
        plan.tls.as_ref(),
        plan.connect_timeout,
        plan.stamp_reads,
        plan.stamp_sends,
    ))
    .await
}

/// Opens a connection to `origin` with [`dial`], recording its phase times.
pub(crate) async fn open(
    w: &impl Runner,
    origin: &Origin,
    unsent: bool,
) -> Result<Stream, Failure> {
    let (stream, est) = dial(w, origin, unsent).await?;
    w.record_connection(&est);
    Ok(stream)
}
