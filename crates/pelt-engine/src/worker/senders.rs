//! The sender factory and each sender's loop: the one place that knows
//! which transports exist, and the loop every transport runs under (take
//! the next request, exchange it, record it, think).

use super::{InFlight, Worker};
use crate::conn::Endpoints;
use crate::session::Jar;
use crate::transport::h1::H1Sender;
use crate::transport::h2::{H2Sender, SharedConn};
use crate::transport::h3::{H3Sender, SharedQuic};
use crate::transport::{Runner, Transport};
use pelt_core::ErrorKind;
use std::rc::Rc;

/// One sender's loop: take the next request, exchange it, record it.
///
/// `transport` comes boxed: an `async fn` keeps its arguments' room for
/// the whole task beside the locals they move into, and a task per
/// connection would hold its transport twice.
async fn run_sender<T: Transport>(worker: Rc<Worker>, sender: usize, mut transport: Box<T>) {
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
    while worker.wait_active(sender, &mut *transport).await {
        let Some((target, intended)) = worker.next_job(sender).await else {
            break;
        };
        done += 1;
        let sample = worker
            .exchange(&mut *transport, target, intended, sender)
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

/// Starts a task per sender, each with the transport the plan asks for:
/// the one place that knows which transports exist. `jars`: the senders'
/// jars from the logins, in sender order (none without `--login`).
pub(super) fn spawn_senders(worker: &Rc<Worker>, jars: Vec<Jar>) {
    let plan = &worker.plan;
    // --cookies or --login: a jar per sender, the login's if any.
    let mut jars = jars.into_iter();
    let session = !plan.http.session.is_off();
    let mut jar = move || session.then(|| jars.next().unwrap_or_default());
    if plan.scenario.is_some() {
        // Virtual users: each sender runs flows on a connection and jar
        // of its own (with HTTP/3, the worker's UDP socket shared).
        let endpoints = plan.quic.is_some().then(|| Rc::new(Endpoints::default()));
        for sender in 0..worker.senders.len() {
            let endpoints = endpoints.clone();
            tokio::task::spawn_local(super::flows::run_user(worker.clone(), sender, endpoints));
        }
        return;
    }
    if plan.quic.is_some() {
        // HTTP/3: as HTTP/2, `streams` consecutive senders share each
        // connection; all the worker's connections share its UDP socket.
        let per_conn = plan.streams as usize;
        let endpoints = Rc::new(Endpoints::default());
        let mut shared = None;
        for sender in 0..worker.senders.len() {
            if sender % per_conn == 0 {
                shared = Some(SharedQuic::new(plan.origins.len(), endpoints.clone()));
            }
            let conn = shared.clone().expect("set at the first stream");
            tokio::task::spawn_local(run_sender(
                worker.clone(),
                sender,
                Box::new(H3Sender::new(conn, jar())),
            ));
        }
    } else if plan.streams > 0 {
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
                Box::new(H2Sender::new(conn, jar())),
            ));
        }
    } else {
        for sender in 0..worker.senders.len() {
            tokio::task::spawn_local(run_sender(
                worker.clone(),
                sender,
                Box::new(H1Sender::new(jar())),
            ));
        }
    }
}
