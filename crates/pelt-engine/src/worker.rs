//! A worker: one thread, one single-threaded tokio runtime, its own
//! connections and its own recorder. Nothing is shared with other workers
//! on the hot path except read-only plan data; results leave once a
//! second as a whole interval recorder.

use crate::conn::{connect, Established, Origin, Stream};
use crate::h1::{
    is_redirect, read_error_kind, read_response, read_response_location, write_request,
    PreparedRequest, RequestLine, Response, READ_BUF,
};
use crate::h2::{H2Sender, PreparedH2, SharedConn};
use crate::load::ThreadClock;
use crate::pacer::Pacer;
use crate::timer::PreciseTimer;
use pelt_core::{ErrorKind, Nanos, Recorder, Sample};
use std::cell::{Cell, RefCell};
use std::io;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::sync::{watch, Notify};

const NS_PER_SEC: u64 = 1_000_000_000;
/// Marks a target whose first successful body length is not known yet.
const LENGTH_UNSET: u64 = u64::MAX;

/// Read-only facts every worker shares.
pub(crate) struct Plan {
    /// Time zero of the run; all `Nanos` are measured from here.
    pub epoch: Instant,
    /// Wall clock at `epoch`, so intervals align to wall-clock seconds.
    pub unix_ns_at_epoch: u64,
    pub requests: Vec<PreparedRequest>,
    /// With `--http2`: the same requests for HTTP/2 (else empty).
    pub h2_requests: Vec<PreparedH2>,
    /// HTTP/2 streams per connection; 0 for HTTP/1.1.
    pub streams: u32,
    /// Which target each request goes to.
    /// Which target each request goes to.
    pub picker: pelt_core::TargetPicker,
    /// Closed loop: pause between a connection's requests.
    pub think: Option<pelt_core::ThinkTime>,
    /// Origin index of each target.
    pub target_origin: Vec<usize>,
    pub origins: Vec<Origin>,
    pub tls: Option<tokio_rustls::TlsConnector>,
    /// `None` for a closed loop.
    pub pacer: Option<Box<dyn Pacer>>,
    /// Closed loop with a `-c` schedule: connection `k` (numbered across
    /// workers) works only while the level is above `k`.
    pub connection_schedule: Option<pelt_core::Schedule>,
    /// Rate mode with `-n`: schedule slots in all (warm-up included).
    pub total_slots: Option<u64>,
    /// Requests intended before this are warm-up.
    pub measure_from: Nanos,
    /// No request starts at or after this.
    pub deadline: Option<Nanos>,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub keepalive: bool,
    /// How long in-flight requests may finish after sending stops.
    pub grace: Duration,
    /// Body length of the first successful response per target (ab's check).
    pub expected_len: Vec<AtomicU64>,
    /// `--connect-rate`: this worker opens at most one connection per
    /// interval (its share of the rate).
    pub connect_interval: Option<Nanos>,
    /// The targets as configured, for building redirected requests.
    pub targets: Vec<pelt_core::Target>,
    pub http: pelt_core::HttpOptions,
}

impl Plan {
    pub fn instant(&self, t: Nanos) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.epoch + Duration::from_nanos(t))
    }
}

/// This worker's share of the run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Share {
    pub index: usize,
    pub workers: usize,
    pub connections: u32,
    /// Closed loop with `-n`: measured requests this worker sends.
    pub budget: Option<u64>,
    /// Rate mode with `-n`: schedule slots this worker owns (every
    /// `workers`-th slot, starting at `index`), warm-up included.
    pub slots: Option<u64>,
}

/// What a worker sends to the collector.
#[derive(Debug)]
pub(crate) enum WorkerMsg {
    /// The complete recorder of one wall-clock second.
    Interval {
        worker: usize,
        second: u64,
        rec: Box<Recorder>,
    },
    /// The worker has stopped; `cut` is when it stopped sending, if it was
    /// stopped (by deadline or cancel) rather than running out of work.
    Done {
        worker: usize,
        warmup_requests: u64,
        cut: Option<Nanos>,
        /// How busy the worker's thread was while it ran, where known.
        load: Option<pelt_core::ThreadLoad>,
    },
}

/// Runs a worker to completion on the current thread.
pub(crate) fn run_worker(
    rt: tokio::runtime::Runtime,
    plan: std::sync::Arc<Plan>,
    share: Share,
    tx: Sender<WorkerMsg>,
    recycled: Receiver<Box<Recorder>>,
    cancel: watch::Receiver<bool>,
) {
    let local_set = tokio::task::LocalSet::new();
    let start_second = (plan.unix_ns_at_epoch) / NS_PER_SEC;
    let senders = share.connections as usize * plan.streams.max(1) as usize;
    let worker = Rc::new(Worker {
        intervals: RefCell::new(Intervals {
            current: Box::new(Recorder::new()),
            recycled,
            second: start_second,
            end: (start_second + 1) * NS_PER_SEC - plan.unix_ns_at_epoch,
            unix_ns_at_epoch: plan.unix_ns_at_epoch,
            measure_from: plan.measure_from,
            warmup: 0,
            tx,
            worker: share.index,
        }),
        plan,
        share,
        next: Cell::new(0),
        budget: Cell::new(share.budget),
        stopping: Cell::new(false),
        cut: Cell::new(Nanos::MAX),
        stop: Notify::new(),
        slots: (0..senders).map(|_| ConnSlot::default()).collect(),
        idle: RefCell::new(Vec::with_capacity(senders)),
        idle_added: Notify::new(),
        alive: Cell::new(0),
        all_done: Notify::new(),
        next_connect: Cell::new(0),
    });
    local_set.block_on(&rt, drive(worker.clone(), cancel));
    // Dropping the set cancels connection tasks still waiting; the driver
    // has already recorded what they held as unfinished.
    drop(local_set);
}

/// A request a connection is working on, so that it can be recorded as
/// unfinished if the run ends first.
#[derive(Debug, Clone, Copy)]
struct Slot {
    active: bool,
    target: u32,
    intended: Nanos,
    sent: Option<Nanos>,
}

/// Per-sender state the worker can see. A sender is an HTTP/1.1
/// connection, or one stream of an HTTP/2 connection.
#[derive(Debug, Default)]
struct ConnSlot {
    state: Cell<Slot>,
    /// A slot handed over by the dispatcher.
    job: Cell<Option<(u32, Nanos)>>,
    wake: Notify,
}

impl Default for Slot {
    fn default() -> Self {
        Slot::IDLE
    }
}

impl Slot {
    const IDLE: Slot = Slot {
        active: false,
        target: 0,
        intended: 0,
        sent: None,
    };
}

pub(crate) struct Worker {
    pub(crate) plan: std::sync::Arc<Plan>,
    share: Share,
    /// Rate mode: this worker's next schedule slot. Closed loop: requests
    /// started, for round-robin target choice.
    next: Cell<u64>,
    budget: Cell<Option<u64>>,
    stopping: Cell<bool>,
    /// When sending stopped; `Nanos::MAX` while running.
    cut: Cell<Nanos>,
    /// Wakes connections sleeping until their next slot when the run stops.
    stop: Notify,
    /// One per sender: connections × streams.
    slots: Vec<ConnSlot>,
    /// Rate mode: idle connections, most recently used last, so the
    /// dispatcher hands work to warm connections and the pool only grows
    /// when the load needs it.
    idle: RefCell<Vec<usize>>,
    /// Wakes the dispatcher when a connection goes idle.
    idle_added: Notify,
    alive: Cell<usize>,
    all_done: Notify,
    intervals: RefCell<Intervals>,
    /// `--connect-rate`: the earliest time this worker's next connection
    /// may open.
    next_connect: Cell<Nanos>,
}

impl Worker {
    pub(crate) fn now(&self) -> Nanos {
        self.plan.epoch.elapsed().as_nanos() as Nanos
    }

    /// Notes that sender `slot` starts writing its request now.
    pub(crate) fn mark_sent(&self, slot: usize) -> Nanos {
        let sent = self.now();
        let mut s = self.slots[slot].state.get();
        s.sent = Some(sent);
        self.slots[slot].state.set(s);
        sent
    }

    /// Records a new connection's phase times (outside warm-up).
    pub(crate) fn record_connection(&self, connect_ns: u64, tls_ns: Option<u64>) {
        if self.now() >= self.plan.measure_from {
            self.intervals
                .borrow_mut()
                .current
                .record_connection(connect_ns, tls_ns);
        }
    }

    /// `--connect-rate`: waits for this worker's next connection slot (a
    /// token bucket holding one token). Nothing is booked ahead: a waiter
    /// takes the token only when it is there, so a wait cut short (the
    /// request's `--timeout`, Ctrl-C) leaves no slot taken that nobody
    /// uses. The waiting request's clock runs: in rate mode the wait shows
    /// as send lag, in a closed loop as slower requests. A closed-loop
    /// request whose slot would come after the deadline is abandoned unsent
    /// (an `Unfinished` failure that the sender does not record), as if it
    /// had been decided on after the deadline (only with `unsent`: a
    /// redirect of a request already sent always waits).
    pub(crate) async fn connect_permit(&self, unsent: bool) -> Result<(), Failure> {
        let Some(interval) = self.plan.connect_interval else {
            return Ok(());
        };
        loop {
            let now = self.now();
            let at = self.next_connect.get();
            if unsent
                && self.plan.pacer.is_none()
                && self.plan.deadline.is_some_and(|d| at.max(now) >= d)
            {
                return Err(Failure::new(
                    ErrorKind::Unfinished,
                    "the run ended before --connect-rate allowed a connection".into(),
                ));
            }
            if at <= now {
                // Keep the cadence when a waiter wakes a little late; after
                // an idle spell start afresh, so no burst builds up.
                let from = if now - at < interval { at } else { now };
                self.next_connect.set(from.saturating_add(interval));
                return Ok(());
            }
            // Several waiters may wake for one token; one takes it and the
            // rest wait for the next. A few wake-ups per connection opened.
            tokio::time::sleep_until(self.plan.instant(at)).await;
        }
    }

    fn begin_stop(&self, at: Nanos) {
        self.stopping.set(true);
        self.cut.set(self.cut.get().min(at));
        self.stop.notify_waiters();
    }

    /// Closed loop with a `-c` schedule: waits until connection `slot` is
    /// active, closing its TCP connection while it is not (the user has
    /// left). Returns `false` when it will not be active again before the
    /// run ends. Which connections are active is a function of time alone.
    async fn wait_active(&self, slot: usize, transport: &mut impl Transport) -> bool {
        let Some(schedule) = &self.plan.connection_schedule else {
            return true;
        };
        let k = (slot * self.share.workers + self.share.index) as f64;
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

    /// The next request for a connection: `(target, intended start)`, or
    /// `None` when this connection should stop.
    async fn next_job(&self, slot: usize) -> Option<(u32, Nanos)> {
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
            let seq = n * self.share.workers as u64 + self.share.index as u64;
            let target = self.plan.picker.pick(seq) as u32;
            self.slots[slot].state.set(Slot {
                active: true,
                target,
                intended: now,
                sent: None,
            });
            return Some((target, now));
        }
        // Open loop. A connection that frees up late takes an overdue slot
        // at once (the wait shows in its response time); otherwise it goes
        // idle and the dispatcher hands it a slot when one falls due.
        loop {
            if self.stopping.get() {
                return None;
            }
            match self.next_slot() {
                None => return None,
                Some((seq, target, intended)) if intended <= self.now() => {
                    return Some(self.claim(slot, seq, target, intended));
                }
                Some(_) => {}
            }
            self.idle.borrow_mut().push(slot);
            self.idle_added.notify_one();
            tokio::select! {
                _ = self.slots[slot].wake.notified() => {}
                _ = self.stop.notified() => {}
            }
            if let Some(job) = self.slots[slot].job.take() {
                return Some(job);
            }
        }
    }

    /// The next unclaimed schedule slot: `(seq, target, intended)`, or
    /// `None` when the schedule is exhausted (count or deadline).
    fn next_slot(&self) -> Option<(u64, u32, Nanos)> {
        let pacer = self.plan.pacer.as_ref()?;
        let seq = self.next.get();
        if self.share.slots.is_some_and(|limit| seq >= limit) {
            return None;
        }
        let global = seq * self.share.workers as u64 + self.share.index as u64;
        let intended = pacer.at(global);
        if self.plan.deadline.is_some_and(|d| intended >= d) {
            return None;
        }
        Some((seq, self.plan.picker.pick(global) as u32, intended))
    }

    fn claim(&self, slot: usize, seq: u64, target: u32, intended: Nanos) -> (u32, Nanos) {
        self.next.set(seq + 1);
        self.slots[slot].state.set(Slot {
            active: true,
            target,
            intended,
            sent: None,
        });
        (target, intended)
    }

    /// Sends one request and reads its response, never longer than
    /// `--timeout`. Always returns a sample: failures are data.
    async fn exchange(
        &self,
        sender: &mut impl Transport,
        target: u32,
        intended: Nanos,
        slot: usize,
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
        let mut progress = Progress::default();
        let result =
            tokio::time::timeout_at(deadline, sender.attempt(self, target, slot, &mut progress))
                .await;
        let mut sample = Sample {
            target,
            intended,
            sent: progress.sent,
            first_byte: progress.first_byte,
            done: self.now(),
            status: 0,
            bytes_in: 0,
            body_bytes: 0,
            bytes_out: progress.bytes_out,
            reused: progress.reused,
            error: None,
        };
        match result {
            Ok(Ok(resp)) => {
                sample.status = resp.status;
                sample.bytes_in = resp.bytes_in;
                sample.body_bytes = resp.body_bytes;
                if (200..300).contains(&resp.status) && !self.plan.http.accept_variable_length {
                    self.check_length(&mut sample);
                }
            }
            Ok(Err(failure)) if failure.kind == ErrorKind::Unfinished => {
                // Never sent; the sender drops it (see `connect_permit`).
                sample.error = Some(ErrorKind::Unfinished);
            }
            Ok(Err(failure)) => {
                sender.reset();
                sample.status = failure.status;
                sample.bytes_in = failure.bytes_in;
                self.fail(&mut sample, failure.kind, || failure.detail);
            }
            Err(_elapsed) => {
                sender.reset();
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
        let mut iv = self.intervals.borrow_mut();
        if sample.intended >= iv.measure_from && iv.current.wants_example(kind) {
            iv.current.add_example(kind, detail());
        }
    }

    fn record(&self, sample: &Sample) {
        self.intervals.borrow_mut().record(sample);
    }

    /// Records what the run's end cut off: requests in flight, and (rate
    /// mode) slots that were due but never got a connection.
    fn record_unfinished(&self) {
        let now = self.now();
        let cut = self.cut.get();
        for slot in &self.slots {
            let s = slot.state.get();
            if s.active && s.intended < cut {
                let mut sample = Sample::failed(s.target, s.intended, now, ErrorKind::Unfinished);
                sample.sent = s.sent;
                self.record(&sample);
            }
            slot.state.set(Slot::IDLE);
        }
        if let (Some(pacer), true) = (&self.plan.pacer, cut != Nanos::MAX) {
            // Slots that fell due before the stop but never got a
            // connection: this worker's share of them, in bulk when there
            // are many (a dead server at a high rate leaves millions).
            let stop = self.plan.deadline.map_or(cut, |d| cut.min(d));
            let due_global = pacer.count_before(stop);
            let (w, workers) = (self.share.index as u64, self.share.workers as u64);
            let mut due_local = if due_global > w {
                (due_global - w).div_ceil(workers)
            } else {
                0
            };
            if let Some(limit) = self.share.slots {
                due_local = due_local.min(limit);
            }
            let first = self.next.get();
            let pending = due_local.saturating_sub(first);
            let step = pending.div_ceil(MAX_UNFINISHED_RECORDS).max(1);
            let mut seq = first;
            while seq < due_local {
                let n = step.min(due_local - seq);
                // Each group is recorded at its middle slot's time.
                // Groups are attributed to their middle slot's target.
                let mid = (seq + n / 2) * workers + w;
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

/// What an attempt got done before it finished, failed or timed out.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    pub sent: Option<Nanos>,
    pub first_byte: Option<Nanos>,
    pub bytes_out: u64,
    pub reused: bool,
}

/// A failed attempt, already classified.
#[derive(Debug)]
pub(crate) struct Failure {
    pub kind: ErrorKind,
    pub detail: String,
    pub bytes_in: u64,
    pub status: u16,
}

impl Failure {
    pub(crate) fn new(kind: ErrorKind, detail: String) -> Failure {
        Failure {
            kind,
            detail,
            bytes_in: 0,
            status: 0,
        }
    }
}

fn write_error_kind(e: &io::Error) -> ErrorKind {
    match read_error_kind(e) {
        ErrorKind::Read => ErrorKind::Write,
        other => other,
    }
}

/// How a sender gets one request answered: the part that differs between
/// HTTP/1.1 (a connection of its own) and HTTP/2 (a stream on a connection
/// shared with other senders). Pacing, timeouts, recording and stopping are
/// the worker's, the same for both.
pub(crate) trait Transport {
    /// Sends request `target` for sender `slot` and reads the whole
    /// response, noting progress as it goes. The caller bounds it by
    /// `--timeout` and may drop it at any await.
    async fn attempt(
        &mut self,
        w: &Worker,
        target: u32,
        slot: usize,
        progress: &mut Progress,
    ) -> Result<Response, Failure>;

    /// The attempt failed or timed out: drop whatever it may have broken.
    fn reset(&mut self);
}

/// HTTP/1.1: one connection, one request at a time.
struct H1Sender {
    conn: Option<Conn>,
    buf: Box<[u8]>,
    /// `--follow` only: the last redirect's Location, and the redirected
    /// request (both reused, so following allocates only for the URL).
    location: Vec<u8>,
    redirect: Vec<u8>,
}

fn read_failure(f: crate::h1::ReadFailure, earlier_bytes_in: u64) -> Failure {
    Failure {
        kind: f.kind,
        detail: f.detail,
        bytes_in: earlier_bytes_in + f.bytes_in,
        status: f.status,
    }
}

/// Connects to `origin`, paced by `--connect-rate` (`unsent`: whether
/// the request is still unsent while it waits, see `connect_permit`).
/// The phase times come back unrecorded, for a caller that has more
/// handshaking to do (HTTP/2) before the connection counts.
pub(crate) async fn dial(
    w: &Worker,
    origin: &Origin,
    unsent: bool,
) -> Result<(Stream, Established), Failure> {
    w.connect_permit(unsent).await?;
    let plan = &*w.plan;
    connect(origin, plan.tls.as_ref(), plan.connect_timeout)
        .await
        .map_err(|f| Failure::new(f.kind, f.detail))
}

/// Opens a connection to `origin` with [`dial`], recording its phase times.
async fn open(w: &Worker, origin: &Origin, unsent: bool) -> Result<Stream, Failure> {
    let (stream, est) = dial(w, origin, unsent).await?;
    w.record_connection(est.connect_ns, est.tls_ns);
    Ok(stream)
}

/// Writes `request` and reads its response (with its Location).
async fn send_on(
    stream: &mut Stream,
    request: &[u8],
    buf: &mut [u8],
    head: bool,
    location: &mut Vec<u8>,
    earlier_bytes_in: u64,
) -> Result<Response, Failure> {
    let io_failure = |e: io::Error| {
        let mut f = Failure::new(write_error_kind(&e), e.to_string());
        f.bytes_in = earlier_bytes_in;
        f
    };
    stream.write_all(request).await.map_err(io_failure)?;
    stream.flush().await.map_err(io_failure)?;
    read_response_location(stream, buf, head, || {}, location)
        .await
        .map_err(|f| read_failure(f, earlier_bytes_in))
}

/// Where a redirect to another origin connects (`--follow-any-host`).
async fn other_origin(plan: &Plan, url: &pelt_core::Url) -> Result<Origin, Failure> {
    let addr = match plan.http.unix_socket {
        Some(_) => None,
        None => {
            let (host, port) =
                pelt_core::connect_address(&plan.http.connect_to, &url.host, url.port);
            let found = tokio::net::lookup_host((host.as_str(), port))
                .await
                .map_err(|e| {
                    Failure::new(
                        ErrorKind::Connect,
                        format!("cannot resolve redirect host '{host}': {e}"),
                    )
                })?
                .next();
            Some(found.ok_or_else(|| {
                Failure::new(
                    ErrorKind::Connect,
                    format!("redirect host '{host}' has no addresses"),
                )
            })?)
        }
    };
    crate::run::origin_of(url, &plan.http, |_, _| {
        addr.ok_or_else(|| "no addresses found".to_string())
    })
    .map_err(|e| Failure::new(ErrorKind::Connect, e.to_string()))
}

/// A request's redirect chain under `--follow`: where it has got to, how
/// it is sent now, and how many hops it has taken. Shared by HTTP/1.1 and
/// HTTP/2, which differ only in how they send each hop.
pub(crate) struct Redirects<'a> {
    /// The target's URL: "same origin" is judged against it.
    origin: &'a pelt_core::Url,
    /// The URL of the latest hop.
    pub url: pelt_core::Url,
    pub method: &'a str,
    /// Whether the request still carries its body.
    pub body: bool,
    hops: u32,
}

impl<'a> Redirects<'a> {
    pub fn new(target: &'a pelt_core::Target) -> Redirects<'a> {
        Redirects {
            origin: &target.url,
            url: target.url.clone(),
            method: &target.method,
            body: true,
            hops: 0,
        }
    }

    /// Steps to `location`, from a `status` redirect: `self.url` becomes
    /// the next hop; returns whether it is the target's origin. As browsers
    /// do, 303, and 301/302 after a POST, continue as a GET without body.
    /// A redirect beyond `--follow`, without a usable Location, or to
    /// another origin without `--follow-any-host` is an `invalid_response`
    /// failure carrying the `bytes_in` of the chain so far.
    pub fn step(
        &mut self,
        plan: &Plan,
        location: &str,
        status: u16,
        bytes_in: u64,
    ) -> Result<bool, Failure> {
        let url = &self.url;
        let fail = |detail: String| Failure {
            kind: ErrorKind::InvalidResponse,
            detail,
            bytes_in,
            status,
        };
        if self.hops == plan.http.follow {
            return Err(fail(format!(
                "more than --follow {} redirects (the last, {status}, to '{}'); raise --follow, or load the final URL directly",
                plan.http.follow,
                location.escape_debug()
            )));
        }
        self.hops += 1;
        if location.is_empty() {
            return Err(fail(format!(
                "a {status} redirect from {url} without a Location header"
            )));
        }
        let next = url.join(location).map_err(|e| {
            fail(format!(
                "cannot follow the {status} redirect from {url}: {e}"
            ))
        })?;
        let same = next.same_origin(self.origin);
        if !same && !plan.http.follow_any_host {
            return Err(fail(format!(
                "{status} redirect to another origin, {next}; add --follow-any-host to follow it, or load that URL directly"
            )));
        }
        if (status == 303 && self.method != "HEAD")
            || (matches!(status, 301 | 302) && self.method == "POST")
        {
            self.method = "GET";
            self.body = false;
        }
        self.url = next;
        Ok(same)
    }
}

impl H1Sender {
    /// `--follow`: follows `resp`'s redirects, up to the limit. The whole
    /// chain is one request: its time, bytes and final status.
    async fn follow(
        &mut self,
        w: &Worker,
        target: u32,
        mut resp: Response,
        progress: &mut Progress,
    ) -> Result<Response, Failure> {
        let plan = &*w.plan;
        let t = &plan.targets[target as usize];
        let origin = plan.target_origin[target as usize];
        let mut chain = Redirects::new(t);
        let mut bytes_in = resp.bytes_in;
        while is_redirect(resp.status) {
            let location = String::from_utf8_lossy(&self.location).into_owned();
            let same = chain.step(plan, &location, resp.status, bytes_in)?;
            let line = RequestLine {
                method: chain.method,
                url: &chain.url,
                body: chain.body,
                keep_host: same,
            };
            let head = chain.method == "HEAD";
            let r = if same {
                // The target's own connection, reopened if it was closed.
                write_request(&mut self.redirect, t, &line, plan.keepalive);
                let c = match &mut self.conn {
                    Some(c) => c,
                    None => {
                        let stream = open(w, &plan.origins[origin], false).await?;
                        self.conn.insert(Conn { stream, origin })
                    }
                };
                let r = send_on(
                    &mut c.stream,
                    &self.redirect,
                    &mut self.buf,
                    head,
                    &mut self.location,
                    bytes_in,
                )
                .await?;
                if !(r.reusable && plan.keepalive) {
                    self.conn = None;
                }
                r
            } else {
                // Another origin: a connection for this request only.
                write_request(&mut self.redirect, t, &line, false);
                let o = other_origin(plan, &chain.url).await?;
                let mut stream = open(w, &o, false).await?;
                send_on(
                    &mut stream,
                    &self.redirect,
                    &mut self.buf,
                    head,
                    &mut self.location,
                    bytes_in,
                )
                .await?
            };
            progress.bytes_out += self.redirect.len() as u64;
            bytes_in += r.bytes_in;
            resp = r;
        }
        resp.bytes_in = bytes_in;
        Ok(resp)
    }
}

#[derive(Debug)]
struct Conn {
    stream: Stream,
    origin: usize,
}

impl Transport for H1Sender {
    async fn attempt(
        &mut self,
        w: &Worker,
        target: u32,
        slot: usize,
        progress: &mut Progress,
    ) -> Result<Response, Failure> {
        let plan = &*w.plan;
        let origin = plan.target_origin[target as usize];
        if self
            .conn
            .as_mut()
            .is_some_and(|c| c.origin != origin || c.stream.has_spoken_unasked(&mut self.buf))
        {
            self.conn = None;
        }
        let c = match &mut self.conn {
            Some(c) => {
                progress.reused = true;
                c
            }
            None => {
                let stream = open(w, &plan.origins[origin], true).await?;
                self.conn.insert(Conn { stream, origin })
            }
        };
        let request = &plan.requests[target as usize];
        progress.sent = Some(w.mark_sent(slot));
        c.stream
            .write_all(&request.bytes)
            .await
            .map_err(|e| Failure::new(write_error_kind(&e), e.to_string()))?;
        // A no-op for plain TCP; TLS may hold a partial record until flushed.
        c.stream
            .flush()
            .await
            .map_err(|e| Failure::new(write_error_kind(&e), e.to_string()))?;
        progress.bytes_out = request.bytes.len() as u64;
        let first_byte = &mut progress.first_byte;
        let on_first = || *first_byte = Some(w.now());
        let follow = plan.http.follow > 0;
        let resp = if follow {
            read_response_location(
                &mut c.stream,
                &mut self.buf,
                request.head,
                on_first,
                &mut self.location,
            )
            .await
        } else {
            read_response(&mut c.stream, &mut self.buf, request.head, on_first).await
        }
        .map_err(|f| read_failure(f, 0))?;
        if !(resp.reusable && plan.keepalive) {
            self.conn = None;
        }
        if follow && is_redirect(resp.status) {
            return self.follow(w, target, resp, progress).await;
        }
        Ok(resp)
    }

    fn reset(&mut self) {
        self.conn = None;
    }
}

/// The worker's current one-second recorder and how to hand it on.
struct Intervals {
    current: Box<Recorder>,
    /// Recorders the collector has merged and emptied, to reuse.
    recycled: Receiver<Box<Recorder>>,
    /// Wall-clock second (since the Unix epoch) `current` covers.
    second: u64,
    /// End of that second, in run nanoseconds.
    end: Nanos,
    unix_ns_at_epoch: u64,
    measure_from: Nanos,
    warmup: u64,
    tx: Sender<WorkerMsg>,
    worker: usize,
}

impl Intervals {
    fn record(&mut self, s: &Sample) {
        if s.intended < self.measure_from {
            self.warmup += 1;
            return;
        }
        if s.done >= self.end {
            self.rotate(s.done);
        }
        self.current.record(s);
    }

    /// Records `n` slots scheduled around `intended` that were never sent.
    fn record_unsent(&mut self, target: u32, intended: Nanos, done: Nanos, n: u64) {
        if intended < self.measure_from {
            self.warmup += n;
            return;
        }
        if done >= self.end {
            self.rotate(done);
        }
        self.current.record_unsent(target, intended, done, n);
    }

    /// Sends the current second and starts the one containing `t`.
    fn rotate(&mut self, t: Nanos) {
        // Reuse a recorder the collector has emptied: allocating a fresh
        // one here (1.6 MB of histograms, zeroed and faulted in) held up
        // sends for most of a millisecond every second.
        let fresh = self
            .recycled
            .try_recv()
            .unwrap_or_else(|_| Box::new(Recorder::new()));
        let rec = std::mem::replace(&mut self.current, fresh);
        // The collector outlives every worker; a failed send means the
        // whole run is being torn down, and there is nobody to tell.
        let _ = self.tx.send(WorkerMsg::Interval {
            worker: self.worker,
            second: self.second,
            rec,
        });
        self.second = (self.unix_ns_at_epoch + t) / NS_PER_SEC;
        self.end = (self.second + 1) * NS_PER_SEC - self.unix_ns_at_epoch;
    }
}

/// One sender's loop: take the next request, exchange it, record it.
async fn sender(worker: Rc<Worker>, slot: usize, mut transport: impl Transport) {
    let mut done = 0u64;
    while worker.wait_active(slot, &mut transport).await {
        let Some((target, intended)) = worker.next_job(slot).await else {
            break;
        };
        done += 1;
        let sample = worker
            .exchange(&mut transport, target, intended, slot)
            .await;
        worker.slots[slot].state.set(Slot::IDLE);
        if sample.error == Some(ErrorKind::Unfinished) {
            // Abandoned before it was sent (see `connect_permit`).
            break;
        }
        worker.record(&sample);
        if let Some(think) = worker.plan.think {
            // Think time, outside any request's clock; never past the
            // deadline, and cut short by Ctrl-C.
            let conn_id = (slot * worker.share.workers + worker.share.index) as u64;
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
/// recently idle connection. Each wake-up dispatches every slot already
/// due, each stamped with its own scheduled time, so timer granularity
/// never shifts the schedule; it only shows as send lag.
async fn dispatcher(worker: Rc<Worker>) {
    // Without a timerfd (not Linux, or out of descriptors) fall back to
    // tokio's millisecond timer; the lateness then shows as send lag.
    let timer = PreciseTimer::new().ok();
    loop {
        if worker.stopping.get() {
            return;
        }
        let Some((seq, target, intended)) = worker.next_slot() else {
            // Schedule exhausted: release idle connections so they finish.
            for slot in worker.idle.borrow_mut().drain(..) {
                worker.slots[slot].wake.notify_one();
            }
            return;
        };
        if intended > worker.now() {
            let at = worker.plan.instant(intended);
            tokio::select! {
                _ = async {
                    match &timer {
                        Some(t) => t.sleep_until(at.into_std()).await,
                        None => tokio::time::sleep_until(at).await,
                    }
                } => {}
                _ = worker.stop.notified() => {}
            }
            continue;
        }
        let idle = worker.idle.borrow_mut().pop();
        match idle {
            Some(slot) => {
                let job = worker.claim(slot, seq, target, intended);
                worker.slots[slot].job.set(Some(job));
                worker.slots[slot].wake.notify_one();
            }
            // Every connection is busy: the slot waits in the client, its
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

/// Hands a finished second to the collector even when no request completes
/// in it, so progress and the timeline keep moving through a stall.
async fn ticker(worker: Rc<Worker>) {
    loop {
        let end = worker.intervals.borrow().end;
        tokio::time::sleep_until(worker.plan.instant(end)).await;
        let now = worker.now();
        let mut iv = worker.intervals.borrow_mut();
        if now >= iv.end {
            iv.rotate(now);
        }
    }
}

async fn drive(worker: Rc<Worker>, mut cancel: watch::Receiver<bool>) {
    let plan = worker.plan.clone();
    tokio::time::sleep_until(plan.instant(0)).await;
    let started = ThreadClock::now();
    tokio::task::spawn_local(ticker(worker.clone()));
    if plan.pacer.is_some() {
        tokio::task::spawn_local(dispatcher(worker.clone()));
    }
    worker.alive.set(worker.slots.len());
    if plan.streams > 0 {
        // HTTP/2: `streams` consecutive senders share each connection.
        let per_conn = plan.streams as usize;
        let mut shared = None;
        for slot in 0..worker.slots.len() {
            if slot % per_conn == 0 {
                shared = Some(SharedConn::new(plan.origins.len()));
            }
            let conn = shared.clone().expect("set at the first stream");
            tokio::task::spawn_local(sender(worker.clone(), slot, H2Sender::new(conn)));
        }
    } else {
        for slot in 0..worker.slots.len() {
            let h1 = H1Sender {
                conn: None,
                buf: vec![0u8; READ_BUF].into_boxed_slice(),
                location: Vec::new(),
                redirect: Vec::new(),
            };
            tokio::task::spawn_local(sender(worker.clone(), slot, h1));
        }
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
    let mut iv = worker.intervals.borrow_mut();
    let end = iv.end;
    iv.rotate(end);
    let cut = worker.cut.get();
    let load = started.zip(sending_ended).map(|(s, e)| e.since(&s));
    let _ = iv.tx.send(WorkerMsg::Done {
        worker: worker.share.index,
        warmup_requests: iv.warmup,
        cut: (cut != Nanos::MAX).then_some(cut),
        load,
    });
}
