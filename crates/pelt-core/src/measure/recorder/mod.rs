//! The recorder: histograms and counts that samples are folded into.
//!
//! Each worker owns one per interval, with no locks; recorders `merge`
//! associatively, so per-worker, per-second and per-machine results add up
//! to exactly the recorder a single process would have produced. Memory is
//! fixed by the histogram bounds, never by the number of requests.

use crate::error_kind::ErrorKind;
use crate::failure::{self, FailureKind};
use crate::independence::{Lag1, SendGrid};
use crate::sample::{Nanos, Sample};
use hdrhistogram::{Counter, Histogram};

/// Highest status code counted individually; anything above is invalid.
pub const MAX_STATUS: usize = 999;
/// How many example messages are kept for each error kind.
pub const EXAMPLES_PER_KIND: usize = 3;

pub use crate::histogram::{
    new_histogram, record_ns, record_ns_n, MAX_TRACKABLE_NS, SIGNIFICANT_DIGITS,
};

mod target;

pub use target::{
    new_target_histogram, TargetDetail, TargetStats, MAX_TIMED_TARGETS, TARGET_LOWEST_NS,
    TARGET_PRECISION_PERCENT, TARGET_SIGNIFICANT_DIGITS,
};

/// An error message kept as an example of its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorExample {
    /// The failure's kind.
    pub kind: ErrorKind,
    /// What happened, in the words of the code that saw it.
    pub message: String,
}

/// Histograms and counts for a set of requests.
///
/// Its latency histograms count in `C`: `u64` everywhere but in a
/// worker's one-second recorder, which counts in `u32` (no bucket sees
/// four billion values in a second) and so holds half the memory; the
/// collector adds it into a `u64` one ([`Recorder::merge_counts`]).
#[derive(Debug, Clone)]
pub struct Recorder<C: Counter = u64> {
    /// `done - intended`: what a user waiting for the response experiences.
    pub response: Histogram<C>,
    /// `done - sent`: what the server (and network) took once asked.
    pub service: Histogram<C>,
    /// `sent - intended`: how late the client sent; the client's health.
    pub send_lag: Histogram<C>,
    /// `first_byte - sent`: time to first byte.
    pub ttfb: Histogram<C>,
    /// TCP connect time, one value per new connection.
    pub connect: Histogram<C>,
    /// TLS handshake time, one value per new TLS connection.
    pub tls: Histogram<C>,
    /// Every recorded request, failed or not.
    pub requests: u64,
    /// Requests without error and with a 2xx or 3xx status.
    pub successes: u64,
    /// Complete responses by status code (index = code), those a
    /// scenario's check or extraction failed included.
    pub statuses: Box<[u64; MAX_STATUS + 1]>,
    /// Of `statuses`, the responses a scenario's check or extraction
    /// failed ([`ErrorKind::is_judgement`]), by status class (index =
    /// code / 100). Each is one failure, of its judgement's kind: the
    /// breakdown takes them out of their status class so that no
    /// request fails twice.
    pub judged: [u64; 10],
    /// Failures by kind (index = `ErrorKind::index`).
    pub errors: [u64; ErrorKind::COUNT],
    /// Figures by target (index = target); grows to the highest target seen.
    pub targets: Vec<TargetStats>,
    /// A few messages of each failure kind, to show what went wrong.
    pub examples: Vec<ErrorExample>,
    /// Bytes received, headers included.
    pub bytes_in: u64,
    /// Bytes of response bodies received.
    pub body_bytes_in: u64,
    /// Bytes sent.
    pub bytes_out: u64,
    /// Requests sent over a reused (keep-alive) connection.
    pub reused: u64,
    /// Connections opened successfully.
    pub connections: u64,
    /// `--cookies`: requests that carried a `Cookie` header from the
    /// sender's jar.
    pub with_cookie: u64,
    /// `--login`: logins made (untimed, not among `requests`).
    pub logins: u64,
    /// Requests sent a second time, on a fresh connection, after the
    /// reused connection they went out on closed without a response
    /// byte (HTTP/1.1 keep-alive races; idempotent methods only).
    pub retried: u64,
    /// Requests with a method that is not idempotent (POST) lost the same
    /// way, and not sent again: the report warns about them.
    pub lost_on_reuse: u64,
    /// `--proxy` with https: `CONNECT` tunnels set up (after the TCP
    /// connection to the proxy, which `connect` times). Sums, not a
    /// histogram: a mean and a maximum say enough of a once-per-connection
    /// step.
    pub tunnels: u64,
    /// The tunnels' total set-up time, in nanoseconds.
    pub tunnel_ns_sum: u64,
    /// The longest tunnel set-up, in nanoseconds.
    pub tunnel_ns_max: u64,
    /// Responses timed by the kernel's receive stamps (their arrival),
    /// not by when pelt read them. Sums, like the tunnels': the read lag
    /// is the client's health, not a figure of the server's.
    pub kernel_timed: u64,
    /// Their total read lag (from the last byte's arrival until pelt read
    /// it), in nanoseconds.
    pub read_lag_ns_sum: u64,
    /// The longest read lag, in nanoseconds.
    pub read_lag_ns_max: u64,
    /// Of the kernel-timed responses, requests whose departure the kernel
    /// timed too (`--tx-stamps`).
    pub tx_stamped: u64,
    /// Transport failures whose response had begun (a status line, then
    /// a close mid-body, a length mismatch, too many redirects): the
    /// server answered, though not usably. Not among `statuses`, which
    /// count complete responses only.
    pub cut_short: u64,
    /// TCP segments pelt's connections sent, by the kernel's count
    /// (`TCP_INFO`, read as each connection ends and at the run's end).
    pub tcp_segs_out: u64,
    /// Of those, segments the kernel sent again (lost, or acknowledged
    /// too late): packet loss between pelt and the server.
    pub tcp_retrans: u64,
    /// Earliest intended start seen (`Nanos::MAX` when empty); with
    /// `last_sent` and `last_done`, it gives rates without a clock.
    pub first_intended: Nanos,
    /// Latest send (0 when empty).
    pub last_sent: Nanos,
    /// Latest completion (0 when empty).
    pub last_done: Nanos,
    /// Consecutive response times, as sums for their lag-1 correlation
    /// (see [`crate::independence`]).
    pub lag1: Lag1,
    /// Planned against actual send instants, for the schedule check (see
    /// [`crate::independence`]).
    pub sends: SendGrid,
    /// TLS and QUIC handshakes by kind (full, resumed, 0-RTT), with their
    /// times: https runs over TCP and `--0rtt` runs (none in others,
    /// which so carry no extra histograms).
    pub handshakes: Option<Box<crate::handshake::Handshakes>>,
    /// WebSocket runs: upgrade times and closes by code (see
    /// [`crate::ws`]); none in other runs.
    pub ws: Option<Box<crate::ws::WsStats>>,
    /// Runs that met a streamed response (`--stream`, `--llm`, or a
    /// `Content-Type` that names a stream): its events and streams (see
    /// [`crate::stream`]); none in other runs.
    pub streamed: Option<Box<crate::stream::StreamStats>>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

impl Recorder {
    /// An empty recorder.
    pub fn new() -> Recorder {
        Recorder::empty()
    }

    /// Adds `other` into `self`. Associative and commutative for every
    /// count and histogram; examples keep the first few of each kind.
    pub fn merge(&mut self, other: &Recorder) {
        self.merge_with(other, crate::histogram::add);
    }

    /// [`Recorder::merge`] for a recorder with narrower counters (a
    /// worker's second): the same figures, added value by value.
    pub fn merge_counts<C: Counter>(&mut self, other: &Recorder<C>) {
        self.merge_with(other, crate::histogram::add_counts);
    }
}

impl<C: Counter> Recorder<C> {
    /// An empty recorder counting in `C`.
    pub fn empty() -> Recorder<C> {
        use crate::histogram::new_counts;
        Recorder {
            response: new_counts(),
            service: new_counts(),
            send_lag: new_counts(),
            ttfb: new_counts(),
            connect: new_counts(),
            tls: new_counts(),
            requests: 0,
            successes: 0,
            statuses: Box::new([0; MAX_STATUS + 1]),
            judged: [0; 10],
            errors: [0; ErrorKind::COUNT],
            targets: Vec::new(),
            examples: Vec::new(),
            bytes_in: 0,
            body_bytes_in: 0,
            bytes_out: 0,
            reused: 0,
            connections: 0,
            with_cookie: 0,
            logins: 0,
            retried: 0,
            lost_on_reuse: 0,
            tunnels: 0,
            tunnel_ns_sum: 0,
            tunnel_ns_max: 0,
            kernel_timed: 0,
            read_lag_ns_sum: 0,
            read_lag_ns_max: 0,
            tx_stamped: 0,
            cut_short: 0,
            tcp_segs_out: 0,
            tcp_retrans: 0,
            first_intended: Nanos::MAX,
            last_sent: 0,
            last_done: 0,
            lag1: Lag1::default(),
            sends: SendGrid::default(),
            handshakes: None,
            ws: None,
            streamed: None,
        }
    }

    /// Folds one sample in. No branches on strings, and no allocation
    /// but the send grid's growth (a few slots a second, kept by
    /// [`Recorder::reset`]).
    pub fn record(&mut self, s: &Sample) {
        self.requests += 1;
        let t = s.target as usize;
        if t >= self.targets.len() {
            // Once per target per recorder, never per request.
            self.targets.resize_with(t + 1, TargetStats::default);
        }
        let success = u64::from(s.is_success());
        // A status counts only for a complete response: one that failed
        // mid-body is a transport failure, so statuses and transport
        // failures add up to the requests. A scenario's failed check or
        // extraction judged a complete response: its status counts.
        let judged = s.error.is_some_and(ErrorKind::is_judgement);
        let answered = s.status != 0 && (s.error.is_none() || judged);
        self.bytes_in += s.bytes_in;
        self.body_bytes_in += s.body_bytes;
        self.bytes_out += s.bytes_out;
        self.reused += u64::from(s.reused);
        self.first_intended = self.first_intended.min(s.intended);
        self.last_done = self.last_done.max(s.done);
        self.cut_short += u64::from(s.status != 0 && s.error.is_some() && !judged);
        if answered {
            self.statuses[usize::from(s.status).min(MAX_STATUS)] += 1;
            if judged {
                self.judged[usize::from(s.status / 100).min(9)] += 1;
            }
        }
        if let Some(sent) = s.sent {
            self.last_sent = self.last_sent.max(sent);
            record_ns(&mut self.send_lag, sent.saturating_sub(s.intended));
            self.sends.record(s.intended, sent);
        }
        let timed = match s.error {
            None => {
                self.successes += success;
                true
            }
            Some(kind) => {
                self.errors[kind.index()] += 1;
                kind.is_timed()
            }
        };
        let mut timed_ns = None;
        if timed {
            // A request sent ahead of its slot (rate mode's send window)
            // waited for nothing: its clock starts when it went out.
            let start = s.sent.map_or(s.intended, |sent| sent.min(s.intended));
            let response = s.done.saturating_sub(start);
            record_ns(&mut self.response, response);
            self.lag1.record(response);
            timed_ns = Some(response);
            if let Some(sent) = s.sent {
                record_ns(&mut self.service, s.done.saturating_sub(sent));
                if let Some(fb) = s.first_byte {
                    record_ns(&mut self.ttfb, fb.saturating_sub(sent));
                }
            }
        }
        self.targets[t].record(t, s.status, s.error, timed_ns, 1);
    }

    /// `--scenario`: records a flow that ended, in its own row of
    /// `targets` only (a flow is not a request: the run's totals, which
    /// its steps are in, leave it out). `s.intended` is the flow's start,
    /// `s.done` its end, `s.error` the kind that failed it (its failing
    /// step's status is in `s.status`).
    pub fn record_flow(&mut self, s: &Sample) {
        let t = s.target as usize;
        if t >= self.targets.len() {
            self.targets.resize_with(t + 1, TargetStats::default);
        }
        let duration = s.done.saturating_sub(s.intended);
        self.targets[t].record(t, s.status, s.error, Some(duration), 1);
    }

    /// Records `n` requests for `target` that were due at about `intended`
    /// and never sent before the run ended: unfinished, timed up to `done`.
    pub fn record_unsent(&mut self, target: u32, intended: Nanos, done: Nanos, n: u64) {
        if n == 0 {
            return;
        }
        let t = target as usize;
        if t >= self.targets.len() {
            self.targets.resize_with(t + 1, TargetStats::default);
        }
        self.targets[t].record(
            t,
            0,
            Some(ErrorKind::Unfinished),
            Some(done.saturating_sub(intended)),
            n,
        );
        self.requests += n;
        self.errors[ErrorKind::Unfinished.index()] += n;
        self.first_intended = self.first_intended.min(intended);
        self.last_done = self.last_done.max(done);
        record_ns_n(&mut self.response, done.saturating_sub(intended), n);
    }

    /// Records a successfully opened connection and its phase times.
    pub fn record_connection(&mut self, connect_ns: u64, tls_ns: Option<u64>) {
        self.connections += 1;
        record_ns(&mut self.connect, connect_ns);
        if let Some(t) = tls_ns {
            record_ns(&mut self.tls, t);
        }
    }

    /// Records a stream's event (see [`crate::stream::StreamStats::record_event`]).
    pub fn record_event(
        &mut self,
        gap: Option<u64>,
        stall_gap: u64,
        sent: crate::stream::EventLatency,
    ) {
        self.streamed
            .get_or_insert_default()
            .record_event(gap, stall_gap, sent);
    }

    /// Records a stream that ended (see [`crate::stream::StreamStats::record_stream`]).
    pub fn record_stream(&mut self, start: Nanos, t: &crate::stream::Tally, complete: bool) {
        self.streamed
            .get_or_insert_default()
            .record_stream(start, t, complete);
    }

    /// Records a WebSocket upgrade that took `ns`.
    pub fn record_ws_upgrade(&mut self, ns: u64) {
        self.ws.get_or_insert_default().record_upgrade(ns);
    }

    /// Counts a WebSocket connection that closed with `close`.
    pub fn record_ws_close(&mut self, close: crate::ws::Close) {
        self.ws.get_or_insert_default().record_close(close);
    }

    /// Records a handshake of `kind` that took `ns` (a TLS connection's,
    /// or a QUIC one's in a `--0rtt` run).
    pub fn record_handshake(&mut self, kind: crate::handshake::Handshake, ns: u64) {
        self.handshakes.get_or_insert_default().record(kind, ns);
    }

    /// Records a `--proxy` tunnel's set-up time (its connection's
    /// [`record_connection`](Recorder::record_connection) times the TCP
    /// connection to the proxy).
    pub fn record_tunnel(&mut self, ns: u64) {
        self.tunnels += 1;
        self.tunnel_ns_sum = self.tunnel_ns_sum.saturating_add(ns);
        self.tunnel_ns_max = self.tunnel_ns_max.max(ns);
    }

    /// Records a response timed by the kernel's receive stamp, read
    /// `lag_ns` after its last byte arrived.
    pub fn record_read_lag(&mut self, lag_ns: u64) {
        self.kernel_timed += 1;
        self.read_lag_ns_sum = self.read_lag_ns_sum.saturating_add(lag_ns);
        self.read_lag_ns_max = self.read_lag_ns_max.max(lag_ns);
    }

    /// Whether another example message of `kind` would be kept. Check this
    /// before formatting a message, so the hot path never allocates for
    /// errors it would throw away.
    pub fn wants_example(&self, kind: ErrorKind) -> bool {
        self.examples.iter().filter(|e| e.kind == kind).count() < EXAMPLES_PER_KIND
    }

    /// Keeps `message` as an example of `kind` if there is room and it is new.
    pub fn add_example(&mut self, kind: ErrorKind, message: String) {
        if self.wants_example(kind)
            && !self
                .examples
                .iter()
                .any(|e| e.kind == kind && e.message == message)
        {
            self.examples.push(ErrorExample { kind, message });
        }
    }

    /// Requests that failed: a transport failure or a status outside
    /// 2xx/3xx. The one number every view calls "failed" (see
    /// [`crate::failure`]).
    pub fn failed(&self) -> u64 {
        self.requests - self.successes
    }

    /// The share of requests that failed, 0 to 1 (0 when there were none).
    pub fn failed_share(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.failed() as f64 / self.requests as f64
        }
    }

    /// [`Recorder::failed`] by kind, most common first: transport kinds
    /// and `status_4xx`/`status_5xx`/... classes.
    pub fn failures(&self) -> Vec<(FailureKind, u64)> {
        let classes = self.unjudged_classes();
        let statuses = classes
            .iter()
            .enumerate()
            .filter_map(|(c, &n)| FailureKind::of_status(c as u16 * 100).map(|k| (k, n)));
        failure::breakdown(&self.errors, statuses)
    }

    /// Complete responses by status class (index = code / 100), less
    /// those a scenario's judgement failed: what a status class
    /// contributes to the failures (a judged response fails by its
    /// judgement's kind, once).
    fn unjudged_classes(&self) -> [u64; 10] {
        let mut classes = [0u64; 10];
        for (code, n) in self.status_counts() {
            classes[usize::from(code / 100).min(9)] += n;
        }
        for (c, j) in classes.iter_mut().zip(self.judged) {
            // Saturating: a damaged results file must not panic a report.
            *c = c.saturating_sub(j);
        }
        classes
    }

    /// The failures of one kind (0 when there were none), as
    /// [`Recorder::failures`] counts them.
    pub fn failed_of(&self, kind: FailureKind) -> u64 {
        match kind {
            FailureKind::Error(k) => self.errors[k.index()],
            FailureKind::Status(_) => self
                .unjudged_classes()
                .iter()
                .enumerate()
                .filter(|&(c, _)| FailureKind::of_status(c as u16 * 100) == Some(kind))
                .map(|(_, n)| n)
                .sum(),
        }
    }

    /// Failures of every [`ErrorKind`], a scenario's judgements included.
    pub fn error_count(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Transport failures (no response, or an incomplete or mismatched
    /// one): the part of [`Recorder::failed`] without a complete
    /// response. A scenario's failed checks and extractions are not
    /// among them (their responses were complete).
    pub fn transport_errors(&self) -> u64 {
        ErrorKind::ALL
            .iter()
            .filter(|k| !k.is_judgement())
            .map(|k| self.errors[k.index()])
            .sum()
    }

    /// Complete responses in 2xx/3xx that a scenario's check or
    /// extraction failed: with [`Recorder::transport_errors`] and
    /// [`Recorder::non_success_statuses`], the parts of
    /// [`Recorder::failed`].
    pub fn judged_failed(&self) -> u64 {
        self.judged[2] + self.judged[3]
    }

    /// Complete responses whose status is outside 2xx/3xx (ab's "Non-2xx
    /// responses"): the rest of [`Recorder::failed`].
    pub fn non_success_statuses(&self) -> u64 {
        self.statuses
            .iter()
            .enumerate()
            .filter(|(code, _)| !(200..400).contains(code))
            .map(|(_, n)| n)
            .sum()
    }

    /// Status codes that occurred, with counts, ascending.
    pub fn status_counts(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.statuses
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(code, &n)| (code as u16, n))
    }

    /// Empties the recorder but keeps its memory: afterwards it records and
    /// merges exactly as a `Recorder::new()` would (the live views keep
    /// their last second this way).
    pub fn reset(&mut self) {
        for h in [
            &mut self.response,
            &mut self.service,
            &mut self.send_lag,
            &mut self.ttfb,
            &mut self.connect,
            &mut self.tls,
        ] {
            h.reset();
        }
        self.requests = 0;
        self.successes = 0;
        self.statuses.fill(0);
        self.judged = [0; 10];
        self.errors = [0; ErrorKind::COUNT];
        self.targets.clear();
        self.examples.clear();
        self.bytes_in = 0;
        self.body_bytes_in = 0;
        self.bytes_out = 0;
        self.reused = 0;
        self.connections = 0;
        self.with_cookie = 0;
        self.logins = 0;
        self.retried = 0;
        self.lost_on_reuse = 0;
        self.tunnels = 0;
        self.tunnel_ns_sum = 0;
        self.tunnel_ns_max = 0;
        self.kernel_timed = 0;
        self.read_lag_ns_sum = 0;
        self.read_lag_ns_max = 0;
        self.tx_stamped = 0;
        self.cut_short = 0;
        self.tcp_segs_out = 0;
        self.tcp_retrans = 0;
        self.first_intended = Nanos::MAX;
        self.last_sent = 0;
        self.last_done = 0;
        self.lag1.reset();
        self.sends.reset();
        if let Some(h) = &mut self.handshakes {
            h.reset();
        }
        if let Some(w) = &mut self.ws {
            w.reset();
        }
        if let Some(s) = &mut self.streamed {
            s.reset();
        }
    }

    /// Adds `other` into `self`, its histograms through `add`.
    fn merge_with<D: Counter>(
        &mut self,
        other: &Recorder<D>,
        add: fn(&mut Histogram<C>, &Histogram<D>),
    ) {
        for (mine, theirs) in [
            (&mut self.response, &other.response),
            (&mut self.service, &other.service),
            (&mut self.send_lag, &other.send_lag),
            (&mut self.ttfb, &other.ttfb),
            (&mut self.connect, &other.connect),
            (&mut self.tls, &other.tls),
        ] {
            add(mine, theirs);
        }
        self.requests += other.requests;
        self.successes += other.successes;
        for (a, b) in self.statuses.iter_mut().zip(other.statuses.iter()) {
            *a += b;
        }
        for (a, b) in self.errors.iter_mut().zip(other.errors) {
            *a += b;
        }
        for (a, b) in self.judged.iter_mut().zip(other.judged) {
            *a += b;
        }
        if other.targets.len() > self.targets.len() {
            self.targets
                .resize_with(other.targets.len(), TargetStats::default);
        }
        for (a, b) in self.targets.iter_mut().zip(&other.targets) {
            a.merge(b);
        }
        for e in &other.examples {
            self.add_example(e.kind, e.message.clone());
        }
        self.bytes_in += other.bytes_in;
        self.body_bytes_in += other.body_bytes_in;
        self.bytes_out += other.bytes_out;
        self.reused += other.reused;
        self.connections += other.connections;
        self.with_cookie += other.with_cookie;
        self.logins += other.logins;
        self.retried += other.retried;
        self.lost_on_reuse += other.lost_on_reuse;
        self.tunnels += other.tunnels;
        self.tunnel_ns_sum += other.tunnel_ns_sum;
        self.tunnel_ns_max = self.tunnel_ns_max.max(other.tunnel_ns_max);
        self.kernel_timed += other.kernel_timed;
        self.read_lag_ns_sum = self.read_lag_ns_sum.saturating_add(other.read_lag_ns_sum);
        self.read_lag_ns_max = self.read_lag_ns_max.max(other.read_lag_ns_max);
        self.tx_stamped += other.tx_stamped;
        self.cut_short += other.cut_short;
        self.tcp_segs_out += other.tcp_segs_out;
        self.tcp_retrans += other.tcp_retrans;
        self.first_intended = self.first_intended.min(other.first_intended);
        self.last_sent = self.last_sent.max(other.last_sent);
        self.last_done = self.last_done.max(other.last_done);
        self.lag1.merge(&other.lag1);
        self.sends.merge(&other.sends);
        if let Some(theirs) = &other.handshakes {
            self.handshakes.get_or_insert_default().merge(theirs);
        }
        if let Some(theirs) = &other.ws {
            self.ws.get_or_insert_default().merge(theirs);
        }
        if let Some(theirs) = &other.streamed {
            self.streamed.get_or_insert_default().merge(theirs);
        }
    }
}

/// Everything merge and the results file must preserve, compared field by
/// field (tests only).
#[cfg(test)]
fn assert_same_histogram(x: &Histogram<u64>, y: &Histogram<u64>) {
    assert_eq!(x.len(), y.len());
    assert_eq!(x.min(), y.min());
    assert_eq!(x.max(), y.max());
    for q in [0.5, 0.9, 0.99, 0.999] {
        assert_eq!(crate::rank::quantile(x, q), crate::rank::quantile(y, q));
    }
    assert!(x.iter_recorded().eq(y.iter_recorded()));
}

#[cfg(test)]
pub(crate) fn assert_same(a: &Recorder, b: &Recorder) {
    // Targets without requests may be present on one side only.
    let n = a.targets.len().max(b.targets.len());
    for i in 0..n {
        let empty = TargetStats::default();
        let (x, y) = (
            a.targets.get(i).unwrap_or(&empty),
            b.targets.get(i).unwrap_or(&empty),
        );
        assert_eq!(
            (x.requests(), x.successes(), x.errors()),
            (y.requests(), y.successes(), y.errors()),
            "target {i}"
        );
        assert_eq!(x.status_classes(), y.status_classes(), "target {i}");
        assert_eq!(x.judged_classes(), y.judged_classes(), "target {i}");
        assert_eq!(x.error_kinds(), y.error_kinds(), "target {i}");
        match (x.response(), y.response()) {
            (Some(hx), Some(hy)) => assert_same_histogram(hx, hy),
            (None, None) => {}
            (hx, hy) => assert_eq!(
                hx.as_ref().map_or(0, |h| h.len()),
                hy.as_ref().map_or(0, |h| h.len()),
                "target {i}"
            ),
        }
    }
    for (x, y) in [
        (&a.response, &b.response),
        (&a.service, &b.service),
        (&a.send_lag, &b.send_lag),
        (&a.ttfb, &b.ttfb),
        (&a.connect, &b.connect),
        (&a.tls, &b.tls),
    ] {
        assert_same_histogram(x, y);
    }
    assert_eq!(a.requests, b.requests);
    assert_eq!(a.successes, b.successes);
    assert_eq!(a.statuses, b.statuses);
    assert_eq!(a.judged, b.judged);
    assert_eq!(a.errors, b.errors);
    assert_eq!(a.connections, b.connections);
    assert_eq!(
        (a.bytes_in, a.body_bytes_in, a.bytes_out, a.reused),
        (b.bytes_in, b.body_bytes_in, b.bytes_out, b.reused)
    );
    assert_eq!(
        (a.first_intended, a.last_sent, a.last_done),
        (b.first_intended, b.last_sent, b.last_done)
    );
    assert_eq!(
        (a.tcp_segs_out, a.tcp_retrans, a.tx_stamped, a.cut_short),
        (b.tcp_segs_out, b.tcp_retrans, b.tx_stamped, b.cut_short)
    );
    assert_eq!(a.sends, b.sends);
    let counts = |r: &Recorder| {
        r.handshakes.as_ref().map_or([0; 4], |h| {
            crate::handshake::Handshake::ALL.map(|k| h.count(k))
        })
    };
    assert_eq!(counts(a), counts(b));
}

#[cfg(test)]
mod tests;
