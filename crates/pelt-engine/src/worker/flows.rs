//! `--scenario`: each sender is a virtual user running flows. Its loop:
//! take the next job (closed loop: now; rate mode: a schedule slot, one
//! flow each), run its `once` steps the first time, pick a flow, and run
//! its steps in order on the user's own connection and cookie jar, each
//! request rendered from the compiled scenario into a buffer.
//!
//! The user's connection is a [`Link`]: an HTTP/1.1 stream, or (`--http2`,
//! `--http3`) a sender of the transport's own with a connection of its own
//! (its private `SharedConns`, of one user), which sends the rendered
//! request as `http` parts and copies the response's fields out as an
//! HTTP/1.1 head, so extractors, checks and the jar read every protocol's
//! responses alike.
//!
//! Each step's response time runs from its intended start: the flow's
//! (the slot's, or now in a closed loop) for the first step, the previous
//! step's end plus its think time for the next, so a stall in one step
//! shows in every later one as the user would feel it. A step that fails
//! (no response, a status outside 2xx/3xx, an extract or a check) ends
//! its flow: the flow's row counts it failed by that kind, and the steps
//! after it are skipped (reports count them: the failures of the steps
//! before).

use super::{InFlight, Worker};
use crate::conn::{Endpoints, KernelClock, Stream};
use crate::h1::{read_response_copies, Copies, FIRST_READ_BUF};
use crate::h2::PreparedH2;
use crate::outcome::{Failure, Response};
use crate::plan::RunPlan;
use crate::session::Jar;
use crate::transport::dial::open;
use crate::transport::h2::{H2Sender, SharedConn};
use crate::transport::h3::{H3Sender, SharedQuic};
use crate::transport::{Attempt, OpenConn, Outgoing, Runner, StepRequest, Transport};
use pelt_core::{ErrorKind, Nanos, Sample};
use pelt_scenario::{Reply, Scenario, StepFailure, VuVars};
use std::rc::Rc;
use std::sync::Arc;
use tokio::io::AsyncWriteExt;

/// A virtual user's connection, and the origin it goes to.
pub(super) struct Conn {
    stream: Stream,
    origin: usize,
    _open: OpenConn,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self._open.settle();
    }
}

/// A virtual user's connection, by protocol. HTTP/2 and HTTP/3 take
/// the transports' senders whole (connection set-up, stream credit,
/// retries of refused streams, `--0rtt`, HTTP/3's kernel stamps), each
/// with connections no other user shares.
pub(super) enum Link {
    H1(Option<Conn>),
    // Boxed: an HTTP/1.1 user holds only its connection.
    H2(Box<H2Sender>),
    H3(Box<H3Sender>),
}

impl Link {
    /// A new user's connection (none open yet) for `plan`'s protocol;
    /// `endpoints`: the worker's UDP sockets, with `--http3`.
    pub(super) fn new(plan: &RunPlan, endpoints: Option<&Rc<Endpoints>>) -> Link {
        let origins = plan.origins.len();
        match endpoints {
            Some(e) => Link::H3(Box::new(H3Sender::new(
                SharedQuic::new(origins, e.clone()),
                None,
            ))),
            None if plan.streams > 0 => {
                Link::H2(Box::new(H2Sender::new(SharedConn::new(origins), None)))
            }
            None => Link::H1(None),
        }
    }

    /// The step failed or timed out: an HTTP/1.1 connection may be in
    /// any state, so it goes. An HTTP/2 or HTTP/3 connection outlives a
    /// failed stream, as in a plain run (its driver retires it if the
    /// connection itself failed).
    fn reset(&mut self) {
        if let Link::H1(conn) = self {
            *conn = None;
        }
    }
}

/// A virtual user: its variables, connection, jar and buffers, reused
/// for every request.
struct User {
    vars: VuVars,
    link: Link,
    jar: Jar,
    /// The jar's `Cookie` line per step, as last built: (the jar's
    /// generation then, when it was built, the line). Built again when
    /// the jar took a cookie since, or a second later (a cookie may have
    /// expired).
    cookie_lines: Vec<(u64, Nanos, Vec<u8>)>,
    /// Responses with a `Set-Cookie` the jar took so far.
    jar_generation: u64,
    request: Vec<u8>,
    scratch: Vec<u8>,
    head: Vec<u8>,
    body: Vec<u8>,
    buf: Vec<u8>,
}

/// A `-c` schedule's inactive user closes its connection (its jar and
/// variables stay): the worker's `wait_active` sees a user only as this.
impl Transport for User {
    async fn attempt(
        &mut self,
        _w: &impl Runner,
        _target: u32,
        _sender: usize,
        _attempt: &mut Attempt,
    ) -> Result<Response, Failure> {
        unreachable!("a virtual user sends its steps itself (`Worker::step`)")
    }

    fn reset(&mut self) {
        // (A `-c` schedule is refused with HTTP/2 and HTTP/3.)
        self.link.reset();
    }
}

/// How a step ended: its sample (recorded), and whether the flow goes on.
struct Ended {
    done: Nanos,
    error: Option<ErrorKind>,
    status: u16,
}

/// One virtual user's life: sender `sender` of `worker`.
/// `endpoints`: the worker's UDP sockets, with `--http3` (the user's
/// connection is made here: an argument would keep its room in the task
/// for the whole run, beside the user's own).
pub(super) async fn run_user(worker: Rc<Worker>, sender: usize, endpoints: Option<Rc<Endpoints>>) {
    let plan = worker.plan.clone();
    let link = Link::new(&plan, endpoints.as_ref());
    drop(endpoints);
    let sc: Arc<Scenario> = plan.scenario.clone().expect("a scenario run");
    let number = worker.share.global(sender as u64);
    // Each step's URL as the jar matches cookies against it, made once
    // for the run (the plan's, by target: steps are the first targets).
    let cookie_urls = &plan.cookie_urls[..sc.steps.len()];
    let mut user = User {
        vars: sc.vu(
            number,
            pelt_core::splitmix64(number ^ plan.unix_ns_at_epoch),
        ),
        link,
        jar: Jar::default(),
        cookie_lines: vec![(u64::MAX, 0, Vec::new()); sc.steps.len()],
        jar_generation: 0,
        // Grows to the longest request the user renders, once.
        request: Vec::new(),
        scratch: Vec::new(),
        head: Vec::new(),
        body: Vec::new(),
        buf: vec![0u8; FIRST_READ_BUF],
    };
    if plan.pacer.is_none() {
        tokio::time::sleep_until(plan.instant(0)).await;
    }
    let mut began = false;
    while worker.wait_active(sender, &mut user).await {
        let Some((_, intended)) = worker.next_job(sender).await else {
            break;
        };
        if worker.rows_out.get() {
            break;
        }
        let mut at = intended;
        if !began {
            began = true;
            if !sc.begin_user(&mut user.vars) {
                worker.out_of_rows();
                break;
            }
            // The login: once per user, before its first flow, each step
            // measured as any other; the flow then starts after it.
            for &step in &sc.once {
                let e = worker
                    .step(&sc, &mut user, cookie_urls, sender, step, at)
                    .await;
                at = e.done;
                if e.error.is_some() {
                    break;
                }
                at = worker.think(&sc, step, at, number).await;
            }
        }
        let Some(flow) = sc.begin_flow(&mut user.vars) else {
            worker.senders[sender].in_flight.set(InFlight::IDLE);
            worker.out_of_rows();
            break;
        };
        let f = &sc.flows[flow];
        let start = at;
        let mut ended = None;
        for (k, &step) in f.steps.iter().enumerate() {
            if k > 0 && (worker.stopping.get() || plan.deadline.is_some_and(|d| at >= d)) {
                // The run ended mid-flow: the flow is neither completed
                // nor failed, and is left out.
                ended = None;
                break;
            }
            let e = worker
                .step(&sc, &mut user, cookie_urls, sender, step, at)
                .await;
            let failed = e.error.is_some() || !(200..400).contains(&e.status);
            let last = k + 1 == f.steps.len();
            ended = Some(e);
            if failed || last {
                break;
            }
            at = worker
                .think(&sc, step, ended.as_ref().map_or(at, |e| e.done), number)
                .await;
        }
        worker.senders[sender].in_flight.set(InFlight::IDLE);
        if let Some(e) = ended {
            let mut s = Sample::failed(f.row as u32, start, e.done, ErrorKind::Unfinished);
            s.error = e.error;
            s.status = e.status;
            worker.intervals.borrow_mut().record_flow(&s);
        }
    }
    worker.senders[sender].in_flight.set(InFlight::IDLE);
    worker.alive.set(worker.alive.get() - 1);
    if worker.alive.get() == 0 {
        worker.all_done.notify_one();
    }
}

impl Worker {
    /// A `unique` feed has no row left: this worker starts no more flows
    /// (flows under way finish; the run ends when every user stopped).
    fn out_of_rows(&self) {
        if !self.rows_out.replace(true) {
            // The run's end, as --until's: complete, not interrupted, its
            // duration up to here.
            self.plan
                .enough
                .store(true, std::sync::atomic::Ordering::SeqCst);
            self.cut.set(self.cut.get().min(self.now()));
            // Idle users (rate mode) wake to find no flow to start; the
            // dispatcher, waiting for one of them, wakes to stop.
            for sender in self.idle.borrow_mut().drain(..) {
                self.senders[sender].wake.notify_one();
            }
            self.idle_added.notify_one();
        }
    }

    /// Waits out step `step`'s think time after `done`; returns when the
    /// next step is due (cut short by a stop or the deadline).
    async fn think(&self, sc: &Scenario, step: usize, done: Nanos, user: u64) -> Nanos {
        let Some(think) = sc.steps[step].think else {
            return done;
        };
        let pause = think.pause(user, done).as_nanos() as Nanos;
        let due = done.saturating_add(pause);
        let mut until = self.plan.instant(due);
        if let Some(d) = self.plan.deadline {
            until = until.min(self.plan.instant(d));
        }
        tokio::select! {
            _ = tokio::time::sleep_until(until) => {}
            _ = self.stop.notified() => {}
        }
        due
    }

    /// Sends step `step` for `user`, intended at `intended`, and records
    /// its sample; extraction and checks run on a complete response.
    async fn step(
        &self,
        sc: &Scenario,
        user: &mut User,
        cookie_urls: &[url::Url],
        sender: usize,
        step: usize,
        intended: Nanos,
    ) -> Ended {
        let plan = &*self.plan;
        self.senders[sender].in_flight.set(InFlight {
            active: true,
            target: step as u32,
            intended,
            sent: None,
        });
        let now = self.now();
        let (generation, built, line) = &mut user.cookie_lines[step];
        if *generation != user.jar_generation || now.saturating_sub(*built) >= 1_000_000_000 {
            line.clear();
            line.extend_from_slice(user.jar.header_line(&cookie_urls[step]).unwrap_or_default());
            (*generation, *built) = (user.jar_generation, now);
        }
        let cookie = !line.is_empty();
        sc.render(
            step,
            &mut user.vars,
            plan.keepalive,
            line,
            &mut user.request,
            &mut user.scratch,
        );
        let origin = plan.target_origin[step];
        let head_request = sc.steps[step].head_request;
        let reads = sc.steps[step].reads_response();
        let mut attempt = Attempt::default();
        let mut stamps = None;
        let deadline = plan.instant(self.now()) + plan.timeout;
        let User {
            link,
            request,
            head,
            body,
            buf,
            ..
        } = user;
        let bytes: &[u8] = request;
        let result = match link {
            Link::H1(conn) => {
                let exchange = async {
                    if conn
                        .as_mut()
                        .is_some_and(|c| c.origin != origin || c.stream.has_spoken_unasked(buf))
                    {
                        *conn = None;
                    }
                    attempt.reused = conn.is_some();
                    if conn.is_none() {
                        let stream = open(self, &plan.origins[origin], true).await?;
                        *conn = Some(Conn {
                            _open: OpenConn::new(self).watch(&stream),
                            stream,
                            origin,
                        });
                    }
                    let c = conn.as_mut().expect("just set");
                    c.stream.clear_stamps();
                    attempt.sent = Some(self.mark_sent(sender));
                    attempt.bytes_out = bytes.len() as u64;
                    let io = |e: std::io::Error| {
                        crate::outcome::Failure::new(
                            crate::outcome::write_error_kind(&e),
                            e.to_string(),
                        )
                    };
                    c.stream.write_all(bytes).await.map_err(io)?;
                    c.stream.flush().await.map_err(io)?;
                    let copies = Copies {
                        head: Some(head),
                        body: reads.then_some(&mut *body),
                        ..Copies::default()
                    };
                    let on_first = || attempt.first_byte = Some(self.now());
                    let r =
                        read_response_copies(&mut c.stream, buf, head_request, on_first, copies)
                            .await;
                    stamps = c.stream.stamps();
                    r
                };
                tokio::time::timeout_at(deadline, exchange).await
            }
            Link::H2(_) | Link::H3(_) => {
                let protocol = match link {
                    Link::H2(_) => "HTTP/2",
                    _ => "HTTP/3",
                };
                let scheme = match sc.steps[step].target.url.scheme {
                    pelt_core::Scheme::Http => "http",
                    pelt_core::Scheme::Https => "https",
                };
                // Boxed, per HTTP/2 or HTTP/3 step (which allocates for
                // its request anyway): their send state is several times
                // HTTP/1.1's, and every user's task would hold room for it
                // otherwise.
                let send = async {
                    let prepared = match PreparedH2::from_rendered(bytes, scheme) {
                        Ok(prepared) => prepared,
                        // An extracted value HTTP/2 refuses in a header,
                        // say: the step cannot be sent.
                        Err(why) => {
                            return Err(Failure::new(
                                ErrorKind::Write,
                                format!("cannot send this step over {protocol}: {why}"),
                            ))
                        }
                    };
                    let mut out = Outgoing::Step(StepRequest {
                        origin,
                        request: &prepared,
                        head,
                        body: reads.then_some(body),
                    });
                    match link {
                        Link::H2(s) => s.send(self, &mut out, sender, &mut attempt).await,
                        Link::H3(s) => s.send(self, &mut out, sender, &mut attempt).await,
                        Link::H1(_) => unreachable!("matched above"),
                    }
                };
                tokio::time::timeout_at(deadline, Box::pin(send)).await
            }
        };
        let mut sample = Sample {
            target: step as u32,
            intended,
            sent: attempt.sent,
            first_byte: attempt.first_byte,
            done: self.now(),
            status: 0,
            bytes_in: 0,
            body_bytes: 0,
            bytes_out: attempt.bytes_out,
            reused: attempt.reused,
            error: None,
        };
        if cookie {
            self.intervals
                .borrow_mut()
                .count_cookie(intended, sample.done);
        }
        match result {
            Ok(Ok(resp)) => {
                // The kernel's arrival times, as the HTTP/1.1 transport
                // takes them (see `StampedTcp`): a late read is not a slow
                // server. A stamp from before the send is not this
                // response's.
                if let (Some((first, last)), Some(at)) = (stamps, sample.sent) {
                    let now = sample.done;
                    let clock = KernelClock::at(now, || self.now());
                    let (first, last) = (clock.run_time(first), clock.run_time(last));
                    if first >= at {
                        sample.first_byte = Some(first.min(now));
                        sample.done = last.clamp(first, now);
                    }
                }
                // HTTP/3's, as its transport takes them: the latest
                // datagram's arrival (see `H3Sender::stamp_done`).
                if let Some(done) = attempt.done {
                    sample.done = done;
                }
                sample.status = resp.status;
                sample.bytes_in = resp.bytes_in;
                sample.body_bytes = resp.body_bytes;
                if let Link::H1(conn) = &mut user.link {
                    if !(resp.reusable && plan.keepalive) {
                        *conn = None;
                    }
                }
                // The jar parses a head only when it sets a cookie.
                if has_set_cookie(&user.head) {
                    user.jar.absorb(&user.head, &cookie_urls[step]);
                    user.jar_generation += 1;
                }
                if !reads {
                    user.body.clear();
                }
                let reply = Reply {
                    status: resp.status,
                    head: &user.head,
                    body: &user.body,
                };
                match sc.after(step, &mut user.vars, reply) {
                    Ok(()) => {}
                    Err(StepFailure::Extract(m)) => {
                        self.fail(&mut sample, ErrorKind::Extract, || m)
                    }
                    Err(StepFailure::Check(m)) => self.fail(&mut sample, ErrorKind::Check, || m),
                }
            }
            Ok(Err(failure)) => {
                user.link.reset();
                sample.status = failure.status;
                sample.bytes_in = failure.bytes_in;
                let kind = failure.kind;
                self.fail(&mut sample, kind, || failure.detail);
            }
            Err(_elapsed) => {
                user.link.reset();
                let timeout = plan.timeout;
                self.fail(&mut sample, ErrorKind::Timeout, || {
                    format!("no complete response within --timeout {timeout:?}")
                });
            }
        }
        self.senders[sender].in_flight.set(InFlight {
            active: false,
            ..InFlight::IDLE
        });
        self.record(&sample);
        Ended {
            done: sample.done,
            error: sample.error,
            status: sample.status,
        }
    }
}

/// Whether a response head has a `Set-Cookie` header (any case).
fn has_set_cookie(head: &[u8]) -> bool {
    head.windows(12)
        .any(|w| w[0] == b'\n' && w[1..].eq_ignore_ascii_case(b"set-cookie:"))
}
