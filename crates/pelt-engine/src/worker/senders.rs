//! The sender factory and each sender's loop: the one place that knows
//! which transports exist (a match on the plan's `Protocol`, a line per
//! transport), and the loop every transport runs under in a plain run
//! (take the next request, exchange it, record it, think); a scenario's
//! virtual users run theirs (`flows`) on the same transports.

use super::{flows, InFlight, Worker};
use crate::plan::Protocol;
use crate::session::Jar;
#[cfg(test)]
use crate::transport::echo::EchoSender;
use crate::transport::h1::H1Sender;
use crate::transport::h2::{H2Sender, SharedConn};
use crate::transport::h3::{H3Sender, SharedQuic};
use crate::transport::ws::WsSender;
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
    // The protocol's goodbye (WebSocket's close handshake), bounded
    // by the transport.
    transport.finish(&*worker).await;
    worker.alive.set(worker.alive.get() - 1);
    if worker.alive.get() == 0 {
        worker.all_done.notify_one();
    }
}

/// Starts a task per sender, each on the transport the plan's protocol
/// asks for: the one place that knows which transports exist, so adding
/// one is its line here. `jars`: the senders' jars from the logins, in
/// sender order (none without `--login`).
pub(super) fn spawn_senders(worker: &Rc<Worker>, jars: Vec<Jar>) {
    let origins = worker.plan.origins.len();
    let each = Each { worker, jars };
    match worker.plan.protocol {
        Protocol::Http1 => each.spawn(|| (), |(), jar| H1Sender::new(jar)),
        Protocol::Http2 => each.spawn(|| SharedConn::new(origins), H2Sender::new),
        Protocol::Http3 => each.spawn(SharedQuic::on_one_socket(origins), H3Sender::new),
        Protocol::Ws => each.spawn(|| (), ws_sender(worker)),
        #[cfg(test)]
        Protocol::Echo => each.spawn(|| (), |(), jar| EchoSender::new(jar)),
    }
}

/// WebSocket senders, each with its own mask keys.
fn ws_sender(worker: &Worker) -> impl Fn((), Option<Jar>) -> WsSender {
    let max = worker.plan.http.ws.max_message;
    let salt = std::cell::Cell::new(worker.share.index as u64);
    move |(), jar| {
        salt.set(salt.get().wrapping_add(1 << 20));
        WsSender::new(jar, salt.get(), max)
    }
}

/// The worker's senders, to be started each on a transport.
struct Each<'a> {
    worker: &'a Rc<Worker>,
    jars: Vec<Jar>,
}

impl Each<'_> {
    /// Starts each sender's task on a transport made by `transport` from
    /// its connection (`connection()`'s: for HTTP/2 and HTTP/3, the
    /// connections `streams` consecutive senders share) and its jar: a
    /// plain run's sender loop, or (`--scenario`) a virtual user, which
    /// has a connection of its own and keeps its jar itself.
    fn spawn<C: Clone, T: Transport + 'static>(
        self,
        mut connection: impl FnMut() -> C,
        transport: impl Fn(C, Option<Jar>) -> T,
    ) {
        let Each { worker, jars } = self;
        let plan = &worker.plan;
        let users = plan.scenario.is_some();
        let per_conn = match users {
            true => 1,
            false => plan.streams.max(1) as usize,
        };
        // --cookies or --login: a jar per sender, the login's if any.
        let mut jars = jars.into_iter();
        let session = !plan.http.session.is_off() && !users;
        let mut shared = None;
        for sender in 0..worker.senders.len() {
            if sender % per_conn == 0 {
                shared = Some(connection());
            }
            let conn = shared.clone().expect("set at the first sender");
            let jar = session.then(|| jars.next().unwrap_or_default());
            let t = Box::new(transport(conn, jar));
            match users {
                true => tokio::task::spawn_local(flows::run_user(worker.clone(), sender, t)),
                false => tokio::task::spawn_local(run_sender(worker.clone(), sender, t)),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    //! Task sizes: a sender task lives for the whole run and holds room
    //! for its largest state, so its future's size is memory per
    //! connection (docs/ARCHITECTURE.md, "Per connection", states these
    //! bounds; a change that grows a task past one fails here, and the
    //! doc is updated with the new figure, or the state boxed).

    use super::{flows, run_sender, Worker};
    use crate::transport::h1::H1Sender;
    use crate::transport::h2::H2Sender;
    use crate::transport::h3::H3Sender;
    use std::future::Future;
    use std::rc::Rc;

    /// The size of the future `f` returns, without making one (no worker
    /// is needed to know it).
    fn future_size<T, F: Future>(_: impl Fn(Rc<Worker>, Box<T>) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    /// Prints every figure the doc quotes (`cargo test -p pelt-engine
    /// task_sizes -- --nocapture`) and holds each to its bound.
    #[test]
    fn task_sizes_stay_within_the_documented_bounds() {
        let sizes = [
            (
                "HTTP/1.1 sender",
                future_size(|w, t: Box<H1Sender>| run_sender(w, 0, t)),
                1_280,
            ),
            (
                "HTTP/3 sender",
                future_size(|w, t: Box<H3Sender>| run_sender(w, 0, t)),
                6_336,
            ),
            (
                "HTTP/1.1 virtual user",
                future_size(|w, t: Box<H1Sender>| flows::run_user(w, 0, t)),
                2_176,
            ),
            (
                "HTTP/2 virtual user",
                future_size(|w, t: Box<H2Sender>| flows::run_user(w, 0, t)),
                3_392,
            ),
            (
                "HTTP/3 virtual user",
                future_size(|w, t: Box<H3Sender>| flows::run_user(w, 0, t)),
                7_232,
            ),
        ];
        for (what, size, _) in sizes {
            println!("{what} task: {size} bytes");
        }
        for (what, size, bound) in sizes {
            assert!(
                size <= bound,
                "the {what} task's future is {size} bytes, over the {bound} that \
                 docs/ARCHITECTURE.md states: box what grew, or update the doc and this bound"
            );
        }
    }
}
