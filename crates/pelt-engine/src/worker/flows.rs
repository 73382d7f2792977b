//! `--scenario`: each sender is a virtual user running flows. Its loop:
//! take the next job (closed loop: now; rate mode: a schedule slot, one
//! flow each), run its `once` steps the first time, pick a flow, and run
//! its steps in order on the user's own connection and cookie jar, each
//! request rendered from the compiled scenario into a buffer.
//!
//! The user's connection is a [`Transport`] of its own, whichever the
//! run's protocol (`senders::spawn_senders` makes it, as for a plain run's
//! sender, with a connection no other user shares): each step goes to it
//! as a [`StepRequest`], the rendered HTTP/1.1 bytes, and its response's
//! head comes back as an HTTP/1.1 head (HTTP/2 and HTTP/3 send the
//! request's fields and write their response's out so), so extractors,
//! checks and the jar read every protocol's responses alike. What the
//! transport does for a target it does for a step: HTTP/1.1 sends a step
//! lost to a keep-alive race once more, HTTP/2 and HTTP/3 a refused one.
//!
//! In a closed loop the pause after a flow's last step (its think time)
//! and the scenario's `pacing` (a flow at most every so often per user,
//! Locust's `constant_pacing`) hold the user's next flow.
//!
//! Each step's response time runs from its intended start: the flow's
//! (the slot's, or now in a closed loop) for the first step, the previous
//! step's end plus its think time for the next, so a stall in one step
//! shows in every later one as the user would feel it. A step that fails
//! (no response, a status outside 2xx/3xx, an extract or a check) ends
//! its flow: the flow's row counts it failed by that kind, and the steps
//! after it are skipped (reports count them: the failures of the steps
//! before). A flow the run's end cuts off (a step in flight, or a step
//! not yet sent) was started: its row counts it failed as `unfinished`.

use super::{InFlight, Worker};
use crate::session::Jar;
use crate::transport::{Attempt, Outgoing, Runner, StepRequest, Transport};
use pelt_core::{ErrorKind, Nanos, Sample};
use pelt_scenario::{OnFailure, Reply, Scenario, StepFailure, VuVars};
use std::rc::Rc;
use std::sync::Arc;

/// A virtual user: its variables, jar and buffers, reused for every
/// request. (Its connection is its transport's.)
struct User {
    vars: VuVars,
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
    /// A `for_each` step's list, copied for its rounds.
    list: Vec<u8>,
    head: Vec<u8>,
    body: Vec<u8>,
}

/// How a flow ended (not cut off by the run's end): when, its first
/// failure's kind and status (else its last step's status), the last
/// step it sent, and whether its user stops (`on_failure = "end_user"`).
struct FlowRun {
    done: Nanos,
    error: Option<ErrorKind>,
    status: u16,
    last_sent: Option<usize>,
    end_user: bool,
}

/// How a step's rounds ended: the last sent and the first failed (none
/// when its conditions or an empty list sent nothing), when the flow's
/// next step is due, and whether the run's end cut the rounds off.
struct StepRun {
    last: Option<Ended>,
    failed: Option<Ended>,
    next: Nanos,
    cut: bool,
}

/// How a step ended: its sample (recorded), and whether the flow goes on.
#[derive(Clone, Copy)]
struct Ended {
    done: Nanos,
    error: Option<ErrorKind>,
    status: u16,
}

/// One virtual user's life: sender `sender` of `worker`, on `transport`
/// (boxed, as a plain run's sender's is: see `senders::run_sender`).
pub(super) async fn run_user<T: Transport>(
    worker: Rc<Worker>,
    sender: usize,
    mut transport: Box<T>,
) {
    let plan = worker.plan.clone();
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
        jar: Jar::default(),
        cookie_lines: vec![(u64::MAX, 0, Vec::new()); sc.steps.len()],
        jar_generation: 0,
        // Grows to the longest request the user renders, once.
        request: Vec::new(),
        scratch: Vec::new(),
        list: Vec::new(),
        head: Vec::new(),
        body: Vec::new(),
    };
    if plan.pacer.is_none() {
        tokio::time::sleep_until(plan.instant(0)).await;
    }
    let mut began = false;
    while worker.wait_active(sender, &mut *transport).await {
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
                let r = worker
                    .run_step(
                        &sc,
                        &mut user,
                        &mut *transport,
                        cookie_urls,
                        sender,
                        step,
                        at,
                        true,
                    )
                    .await;
                at = r.next;
                if r.cut || r.failed.is_some_and(|e| e.error.is_some()) {
                    break;
                }
            }
        }
        let Some(flow) = sc.begin_flow(&mut user.vars) else {
            worker.senders[sender].in_flight.set(InFlight::IDLE);
            worker.out_of_rows();
            break;
        };
        let f = &sc.flows[flow];
        let start = at;
        // Seen by the run's end if it comes while a step is in flight.
        worker.senders[sender].flow.set(Some((f.row as u32, start)));
        let run = worker
            .run_flow(
                &sc,
                &mut user,
                &mut *transport,
                cookie_urls,
                sender,
                flow,
                at,
            )
            .await;
        worker.senders[sender].in_flight.set(InFlight::IDLE);
        worker.senders[sender].flow.set(None);
        let Some(run) = run else {
            continue;
        };
        let mut s = Sample::failed(f.row as u32, start, run.done, ErrorKind::Unfinished);
        (s.error, s.status) = (run.error, run.status);
        worker.intervals.borrow_mut().record_flow(&s);
        if run.end_user {
            // on_failure = "end_user": this virtual user stops.
            break;
        }
        if plan.pacer.is_none() {
            // Closed loop: the pause after the flow's last step sent
            // (its think time) and the pacing both hold the user's
            // next flow; whichever ends later. In rate mode the
            // schedule starts flows, so neither applies.
            let mut due = run.done;
            if let Some(step) = run.last_sent {
                due = worker.think_due(&sc, step, run.done, number);
            }
            if let Some((pacing, _)) = sc.pacing {
                due = due.max(start.saturating_add(pacing.as_nanos() as Nanos));
            }
            worker.pause_until(due).await;
        }
    }
    worker.senders[sender].in_flight.set(InFlight::IDLE);
    worker.alive.set(worker.alive.get() - 1);
    if worker.alive.get() == 0 {
        worker.all_done.notify_one();
    }
}

impl Worker {
    /// Runs flow `flow` for `user` from `start`: its steps in order, each
    /// sent if its `when`/`skip_if` holds, a failure ending the flow (or
    /// the user) unless the step says `on_failure = "continue"`. `None`:
    /// the run's end cut it off (recorded so here).
    #[allow(clippy::too_many_arguments)]
    async fn run_flow(
        &self,
        sc: &Scenario,
        user: &mut User,
        transport: &mut impl Transport,
        cookie_urls: &[url::Url],
        sender: usize,
        flow: usize,
        start: Nanos,
    ) -> Option<FlowRun> {
        let f = &sc.flows[flow];
        let mut at = start;
        let mut first_failure: Option<Ended> = None;
        let mut last: Option<Ended> = None;
        let mut run = FlowRun {
            done: start,
            error: None,
            status: 200,
            last_sent: None,
            end_user: false,
        };
        for (k, &step) in f.steps.iter().enumerate() {
            if k > 0 && self.cut_off(at) {
                // The run ended mid-flow: the flow started and was cut
                // off, so it counts as started, failed as unfinished.
                self.senders[sender].flow.set(None);
                self.record_cut_flow(f.row as u32, start, self.now());
                return None;
            }
            // No pause after the flow's last step here: the caller holds
            // the user's next flow by it (closed loop) or not (rate).
            let last_step = k + 1 == f.steps.len();
            let r = self
                .run_step(
                    sc,
                    user,
                    transport,
                    cookie_urls,
                    sender,
                    step,
                    at,
                    !last_step,
                )
                .await;
            if r.cut {
                self.senders[sender].flow.set(None);
                self.record_cut_flow(f.row as u32, start, self.now());
                return None;
            }
            if r.last.is_some() {
                (last, run.last_sent) = (r.last, Some(step));
            }
            at = r.next;
            if let Some(e) = r.failed {
                first_failure.get_or_insert(e);
                match sc.steps[step].on_failure {
                    OnFailure::Continue => {}
                    OnFailure::EndFlow => break,
                    OnFailure::EndUser => {
                        run.end_user = true;
                        break;
                    }
                }
            }
        }
        // A flow whose conditions sent no step completed (200 stands for
        // "completed" in its row, as a last step's 2xx does).
        run.done = last.map_or(at, |e| e.done);
        match first_failure {
            Some(e) => (run.error, run.status) = (e.error, e.status),
            None => run.status = last.map_or(200, |e| e.status),
        }
        Some(run)
    }

    /// Whether the run has ended (a stop, or the deadline by `at`), so a
    /// flow's next step or round is not sent.
    fn cut_off(&self, at: Nanos) -> bool {
        self.stopping.get() || self.plan.deadline.is_some_and(|d| at >= d)
    }

    /// Sends step `step` for `user` once per round (once without
    /// `repeat`/`for_each`) from `at`: each round sent if its
    /// `when`/`skip_if` holds, the next at the last one's end plus its
    /// think time (after the last round too if `think_last`). A failure
    /// ends the rounds unless the step says `on_failure = "continue"`; a
    /// count that cannot be used sends nothing and fails the flow, kind
    /// `extract`.
    #[allow(clippy::too_many_arguments)]
    async fn run_step(
        &self,
        sc: &Scenario,
        user: &mut User,
        transport: &mut impl Transport,
        cookie_urls: &[url::Url],
        sender: usize,
        step: usize,
        at: Nanos,
        think_last: bool,
    ) -> StepRun {
        let mut out = StepRun {
            last: None,
            failed: None,
            cut: false,
            next: at,
        };
        let rounds = match sc.rounds(step, &mut user.vars, &mut user.list) {
            Ok(n) => n,
            Err(why) => {
                // Nothing is sent, so no request is counted (the step's
                // row and the server's log agree): the flow fails by
                // it, kind `extract`, with the reason as its example.
                let done = self.now();
                self.intervals
                    .borrow_mut()
                    .add_example(at, ErrorKind::Extract, || {
                        format!("{}: {why}", sc.steps[step].label)
                    });
                out.failed = Some(Ended {
                    done,
                    error: Some(ErrorKind::Extract),
                    status: 0,
                });
                out.next = done;
                return out;
            }
        };
        let mut cursor = 0;
        for round in 0..rounds {
            if round > 0 && self.cut_off(out.next) {
                out.cut = true;
                return out;
            }
            sc.enter_round(step, round, &mut user.vars, &user.list, &mut cursor);
            if !sc.runs(step, &user.vars) {
                // Its condition says no: not sent, not a request.
                continue;
            }
            let e = self
                .step(sc, user, transport, cookie_urls, sender, step, out.next)
                .await;
            (out.last, out.next) = (Some(e), e.done);
            if e.error.is_some() || !(200..400).contains(&e.status) {
                out.failed.get_or_insert(e);
                if sc.steps[step].on_failure != OnFailure::Continue {
                    return out;
                }
            }
            if round + 1 < rounds || think_last {
                out.next = self.think(sc, step, e.done, user.vars.vu).await;
            }
        }
        out
    }

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
        if sc.steps[step].think.is_none() {
            // No pause, and no clock to read for one.
            return done;
        }
        let due = self.think_due(sc, step, done, user);
        self.pause_until(due).await;
        due
    }

    /// When step `step`'s think time after `done` ends (`done` if it has
    /// none).
    fn think_due(&self, sc: &Scenario, step: usize, done: Nanos, user: u64) -> Nanos {
        let Some(think) = sc.steps[step].think else {
            return done;
        };
        let pause = think.pause(user, done).as_nanos() as Nanos;
        done.saturating_add(pause)
    }

    /// Sleeps until `due`, cut short by a stop or the deadline.
    async fn pause_until(&self, due: Nanos) {
        // A stop already given wakes no one: do not start waiting.
        if due <= self.now() || self.stopping.get() {
            return;
        }
        let mut until = self.plan.instant(due);
        if let Some(d) = self.plan.deadline {
            until = until.min(self.plan.instant(d));
        }
        tokio::select! {
            _ = tokio::time::sleep_until(until) => {}
            _ = self.stop.notified() => {}
        }
    }

    /// Sends step `step` for `user` on `transport`, intended at
    /// `intended`, and records its sample; extraction and checks run on a
    /// complete response.
    #[allow(clippy::too_many_arguments)]
    async fn step(
        &self,
        sc: &Scenario,
        user: &mut User,
        transport: &mut impl Transport,
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
        let reads = sc.steps[step].reads_response();
        let mut attempt = Attempt::default();
        // The clock read above: the render between is a copy of bytes.
        let deadline = plan.instant(now) + plan.timeout;
        let mut sets_cookie = false;
        let mut request = StepRequest {
            origin: plan.target_origin[step],
            bytes: &user.request,
            scheme: sc.steps[step].target.url.scheme,
            head_request: sc.steps[step].head_request,
            head: &mut user.head,
            body: reads.then_some(&mut user.body),
            sets_cookie: &mut sets_cookie,
        };
        let mut out = Outgoing::Step(&mut request);
        // Built in place, as a plain request's (`exchange`): a send
        // future bound to a name first is moved into the timeout.
        let result = tokio::time::timeout_at(
            deadline,
            transport.send(self, &mut out, sender, &mut attempt),
        )
        .await;
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
        self.count_race(&attempt, intended, sample.done);
        match result {
            Ok(Ok(resp)) => {
                // The kernel's arrival time, where the transport took it
                // (see `StampedTcp`, `H3::done`): a late read is not a
                // slow server.
                if let Some(done) = attempt.done {
                    sample.done = done;
                }
                sample.status = resp.status;
                sample.bytes_in = resp.bytes_in;
                sample.body_bytes = resp.body_bytes;
                // The jar parses a head only when it sets a cookie (the
                // transport says so from its own parse).
                if sets_cookie {
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
                transport.reset();
                sample.status = failure.status;
                sample.bytes_in = failure.bytes_in;
                let kind = failure.kind;
                self.fail(&mut sample, kind, || failure.detail);
            }
            Err(_elapsed) => {
                transport.reset();
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
        let by = crate::request_log::StepOf {
            user: user.vars.vu,
            iteration: user.vars.iteration,
        };
        self.intervals.borrow_mut().record_by(&sample, Some(by));
        Ended {
            done: sample.done,
            error: sample.error,
            status: sample.status,
        }
    }
}
