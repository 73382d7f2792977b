//! The library entry point: start a run, watch its seconds go by, cancel
//! it, and collect its summary.
//!
//! Starting is three steps: plan (`RunPlan::new`: resolve, serialise,
//! pace), spawn (a thread per worker, and the collector), and capture the
//! environment the run's results will name.
//!
//! A `Run` owns its load: dropping it (or a future awaiting it, cut
//! short by `tokio::time::timeout`) cancels the run as Ctrl-C does, so a
//! test harness that gives up on a run never leaves it loading a server.
//!
//! The blocking calls (`start` with a login, `wait`, `observe`,
//! `snapshots`, `progress`) park the caller's thread. On a current-thread
//! tokio runtime that thread is the runtime: a server spawned on it
//! would not answer while it is parked, and every login and request
//! would time out. There they refuse at once, naming the fix
//! ([`Run::start_async`], [`Run::wait_async`], `spawn_blocking`, or the
//! multi-thread runtime); on a multi-thread runtime they block in place
//! (`tokio::task::block_in_place`), so the runtime's other tasks go on.

use crate::cancel::Canceller;
use crate::collector::{Collector, Snapshot};
use crate::error::EngineError;
use crate::intervals::WorkerMsg;
use crate::plan::{RunPlan, Share};
use crate::priority::{Background, Lowered, SendingEnds};
use crate::request_log::{RequestLogSpec, SharedLog};
use crate::session::login::login_all;
use crate::session::Jar;
use crate::worker::run_worker;
use pelt_core::{Environment, RunConfig, RunFooter, RunHeader, RunSummary};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, watch};

/// What [`Run::progress`] saw.
#[derive(Debug, Clone)]
pub enum Progress {
    /// Another second completed.
    Interval(Snapshot),
    /// Nothing new within the timeout.
    Waiting,
    /// The run is over; call [`Run::wait`] for the summary.
    Finished,
}

/// A run in progress: started by [`Run::start`], watched with
/// [`Run::progress`], ended early with a [`Canceller`], and turned into
/// its summary by [`Run::wait`] (or [`Run::wait_async`]).
///
/// Dropping a `Run` before it ends cancels it, as Ctrl-C does: sending
/// stops at once and requests in flight get the usual short grace. So
/// does dropping the future of [`Run::wait_async`] (a
/// `tokio::time::timeout` around it that expires).
#[derive(Debug)]
pub struct Run {
    events: Receiver<Snapshot>,
    canceller: Canceller,
    /// The collector's thread; taken by the wait.
    collector: Option<JoinHandle<()>>,
    /// The summary, sent by the collector's thread as its last act.
    summary: Option<oneshot::Receiver<RunSummary>>,
    epoch: Instant,
    measure_from: Duration,
    header: RunHeader,
    request_log: Option<Arc<SharedLog>>,
    /// Its bookkeeping threads, lowered while the workers send.
    lowered: Arc<Lowered>,
}

impl Run {
    /// Validates `config`, resolves its hosts and starts the workers. The
    /// first requests go out a few milliseconds later; this returns at
    /// once.
    pub fn start(config: RunConfig) -> Result<Run, EngineError> {
        Run::start_with_log(config, None)
    }

    /// [`Run::start`], also logging every measured request to the file
    /// `log` names, one line each, as they finish (`--log-requests`). The
    /// file is created before any load is sent.
    ///
    /// Unless `log.targets_shown` says otherwise, the log names each
    /// target with its secrets replaced ([`pelt_core::Redactor::for_config`]),
    /// as every file pelt writes does.
    pub fn start_with_log(
        config: RunConfig,
        log: Option<RequestLogSpec>,
    ) -> Result<Run, EngineError> {
        if config.http.session.login.is_some() {
            // The logins wait for their answers: refuse before a runtime
            // whose server could not give them is parked for --timeout.
            if let Some(tasks) = stalls_a_runtime() {
                return Err(EngineError::BlocksRuntime {
                    call: "Run::start with a login",
                    tasks,
                });
            }
        }
        config.validate()?;
        let mut plan = RunPlan::new(&config)?;
        let shares = plan.shares(&config);
        // Logins first: they set the clock's zero afresh, which the
        // request log's times count from.
        let jars = block_here(|| log_in(&mut plan, &shares)).map_err(|e| match e {
            // A refused login may quote the server's answer, which may
            // echo the form: the run's secrets go from the message.
            EngineError::Login(why) => {
                EngineError::Login(pelt_core::Redactor::for_config(&config).text(&why))
            }
            other => other,
        })?;
        if let Some(mut spec) = log {
            if spec.targets_shown.is_none() {
                spec.targets_shown = Some(
                    pelt_core::Redactor::for_config(&config)
                        .config(&config)
                        .targets,
                );
            }
            plan.request_log = Some(SharedLog::create(
                spec,
                &config.targets,
                config.scenario.as_ref(),
                plan.unix_ns_at_epoch,
            )?);
        }
        let enough = plan.enough.clone();
        let plan = Arc::new(plan);
        let (canceller, cancel_rx) = Canceller::new(enough);
        let (tx, rx) = mpsc::channel();
        let workers = spawn_workers(&plan, shares, jars, tx, cancel_rx)?;
        let lowered = workers.lowered.clone();
        let header = RunHeader {
            env: environment(&plan),
            measure_start_unix_ns: plan.unix_ns_at_epoch + plan.measure_from,
            measure_from_ns: plan.measure_from,
            shard: config.shard.map(|shard| pelt_core::ShardInfo {
                run_id: config.run_id(),
                shard,
                config_hash: config.whole_run_hash(),
                start_at_unix_ns: config.start_at_unix_ns,
                late_ns: plan.late_ns,
            }),
            late_start_ns: match config.shard {
                Some(_) => 0,
                None => plan.late_ns,
            },
            config,
        };
        let (events_tx, events) = mpsc::channel();
        let (summary_tx, summary) = oneshot::channel();
        let collector = spawn_collector(
            plan.clone(),
            header.clone(),
            workers,
            rx,
            events_tx,
            summary_tx,
            canceller.clone(),
        )?;
        Ok(Run {
            events,
            canceller,
            collector: Some(collector),
            summary: Some(summary),
            epoch: plan.epoch,
            measure_from: Duration::from_nanos(plan.measure_from),
            header,
            request_log: plan.request_log.clone(),
            lowered,
        })
    }

    /// [`Run::start`] for async code: the planning and the logins are made
    /// on a thread of their own while this future waits, so the caller's
    /// runtime (of either flavour, with the server the run loads on it)
    /// goes on answering. Dropping the future before it is ready cancels
    /// the run it was starting.
    pub async fn start_async(config: RunConfig) -> Result<Run, EngineError> {
        Run::start_with_log_async(config, None).await
    }

    /// [`Run::start_with_log`] for async code, as [`Run::start_async`].
    pub async fn start_with_log_async(
        config: RunConfig,
        log: Option<RequestLogSpec>,
    ) -> Result<Run, EngineError> {
        let (tx, rx) = oneshot::channel();
        std::thread::Builder::new()
            .name("pelt-start".into())
            .spawn(move || {
                // If the caller gave up, the run comes back and is
                // dropped here: cancelled.
                let _ = tx.send(Run::start_with_log(config, log));
            })
            .map_err(EngineError::Spawn)?;
        match rx.await {
            Ok(started) => started,
            // The thread ended without an answer: it panicked.
            Err(_) => panic!("pelt's run-starting thread panicked"),
        }
    }

    /// What the run is and where: the first record of its results file.
    pub fn header(&self) -> &RunHeader {
        &self.header
    }

    /// Lowers the calling thread, one that writes or shows this run's
    /// seconds, below the workers until they stop sending (the idle
    /// class in rate runs, nice 19 in closed loops; see [`Background`]);
    /// the last worker to stop raises it back.
    pub fn lower_this_thread(&self) -> Background {
        self.lowered.lower(self.header.config.load.rate().is_some())
    }

    /// A handle that stops this run from another thread (e.g. on Ctrl-C).
    pub fn canceller(&self) -> Canceller {
        self.canceller.clone()
    }

    /// Time since the run started (including warm-up).
    pub fn elapsed(&self) -> Duration {
        self.epoch.elapsed()
    }

    /// When measurement starts, relative to the run's start.
    pub fn measure_from(&self) -> Duration {
        self.measure_from
    }

    /// Waits up to `timeout` for the next completed second.
    /// `Duration::ZERO` never blocks: async code may poll with it
    /// between its own awaits.
    pub fn progress(&self, timeout: Duration) -> Progress {
        if !timeout.is_zero() {
            refuse_to_block("Run::progress with a timeout");
        }
        match block_here(|| self.events.recv_timeout(timeout)) {
            Ok(s) => Progress::Interval(s),
            Err(RecvTimeoutError::Timeout) => Progress::Waiting,
            Err(RecvTimeoutError::Disconnected) => Progress::Finished,
        }
    }

    /// Every completed second, in order, as it completes: an iterator
    /// that blocks for the next one and ends with the run (then call
    /// [`Run::wait`]). The same snapshots [`Run::progress`] polls for, and
    /// the CLI's progress line and live views read; take them one way
    /// or the other, as each is handed out once.
    pub fn snapshots(&self) -> Snapshots<'_> {
        refuse_to_block("Run::snapshots");
        Snapshots { run: self }
    }

    /// Runs to the end, handing `observer` each completed second as it
    /// completes, and returns the summary: [`Run::snapshots`] and
    /// [`Run::wait`] in one call.
    pub fn observe(self, mut observer: impl FnMut(&Snapshot)) -> RunSummary {
        refuse_to_block("Run::observe");
        for s in self.snapshots() {
            observer(&s);
        }
        self.wait()
    }

    /// Waits for the run to end and returns its summary. It blocks the
    /// calling thread for the run's length: from async code, await
    /// [`Run::wait_async`] instead (on a current-thread runtime with
    /// other tasks this panics at once, naming the fix, rather than
    /// starve them).
    pub fn wait(mut self) -> RunSummary {
        refuse_to_block("Run::wait");
        if let Some(collector) = self.collector.take() {
            if let Err(panic) = block_here(|| collector.join()) {
                std::panic::resume_unwind(panic);
            }
        }
        // The collector's thread sent the summary before it ended.
        let summary = self.summary.take().and_then(|mut rx| rx.try_recv().ok());
        self.finish(summary.expect("the collector sends the summary before it ends"))
    }

    /// [`Run::wait`] for async code: the summary, awaited without
    /// blocking the runtime (of either flavour). Dropping this future
    /// before the run ends (a `tokio::time::timeout` that expires)
    /// cancels the run.
    pub async fn wait_async(mut self) -> RunSummary {
        let rx = self.summary.take().expect("a run's summary is taken once");
        match rx.await {
            // The thread has nothing left to do but end: it is not joined.
            Ok(summary) => self.finish(summary),
            Err(_) => {
                // No summary: the collector panicked. Its thread has
                // ended (or is unwinding): join it for the panic.
                let collector = self.collector.take().expect("joined once");
                match collector.join() {
                    Err(panic) => std::panic::resume_unwind(panic),
                    Ok(()) => unreachable!("the collector sends the summary before it ends"),
                }
            }
        }
    }

    /// The summary with what only the run knows added.
    fn finish(&self, mut summary: RunSummary) -> RunSummary {
        // Every worker has flushed its part of the log before it said it
        // was done, so any write error is known by now.
        if let Some(error) = self.request_log.as_ref().and_then(|l| l.error.get()) {
            summary.warnings.push(pelt_core::Warning::RequestLog {
                error: error.clone(),
            });
        }
        summary
    }
}

impl Drop for Run {
    /// Cancels the run if it is still going (a finished run has nothing
    /// left to stop): nobody will read its results, so no server should
    /// go on receiving its load.
    fn drop(&mut self) {
        self.canceller.cancel();
    }
}

/// How many other tasks a blocking call would stall: `Some` when this
/// thread drives a current-thread tokio runtime (it is polling that
/// runtime's `block_on` future) that has tasks alive, a server the run
/// loads perhaps. A task's own thread cannot be told from
/// `spawn_blocking`'s (tokio says neither), so inside a task this
/// assumes the latter, the fix it recommends.
fn stalls_a_runtime() -> Option<usize> {
    let handle = tokio::runtime::Handle::try_current().ok()?;
    if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::CurrentThread
        || tokio::task::try_id().is_some()
    {
        return None;
    }
    let tasks = handle.metrics().num_alive_tasks();
    (tasks > 0).then_some(tasks)
}

/// Panics, naming the fix, where blocking would stall a runtime's tasks
/// (see [`stalls_a_runtime`]); the run is then dropped, and so cancelled.
fn refuse_to_block(call: &'static str) {
    if let Some(tasks) = stalls_a_runtime() {
        panic!("{}", EngineError::BlocksRuntime { call, tasks });
    }
}

/// Runs `f`, which blocks, so that a multi-thread runtime this thread
/// may be a worker of goes on running its other tasks meanwhile.
fn block_here<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// A run's seconds as they complete ([`Run::snapshots`]).
#[derive(Debug)]
pub struct Snapshots<'a> {
    run: &'a Run,
}

impl Iterator for Snapshots<'_> {
    type Item = Snapshot;

    /// The next completed second; `None` once the run is over.
    fn next(&mut self) -> Option<Snapshot> {
        block_here(|| self.run.events.recv().ok())
    }
}

/// The running workers' threads.
struct Workers {
    handles: Vec<JoinHandle<()>>,
    /// The run's bookkeeping threads, lowered while these send.
    lowered: Arc<Lowered>,
}

/// `--login`: logs every sender of every worker in (see
/// `session::login`), then starts the plan's clock afresh after the
/// logins. Returns each share's senders' jars, in share order (none
/// without a login). The plan stays read-only once the run starts: each
/// worker is handed its own jars.
fn log_in(plan: &mut RunPlan, shares: &[Share]) -> Result<Vec<Vec<Jar>>, EngineError> {
    let Some(login) = &plan.http.session.login else {
        return Ok(shares.iter().map(|_| Vec::new()).collect());
    };
    let per_worker: Vec<usize> = shares.iter().map(|s| plan.senders(s)).collect();
    let total = per_worker.iter().sum();
    let mut jars = login_all(login, &plan.http, total)?.into_iter();
    let by_worker = per_worker
        .iter()
        .map(|&n| jars.by_ref().take(n).collect())
        .collect();
    plan.restart_after_logins(total as u64);
    Ok(by_worker)
}

/// Starts one thread per share, each running its worker (with its
/// senders' jars) on its own single-threaded runtime.
fn spawn_workers(
    plan: &Arc<RunPlan>,
    shares: Vec<Share>,
    jars: Vec<Vec<Jar>>,
    tx: mpsc::Sender<WorkerMsg>,
    cancel: watch::Receiver<bool>,
) -> Result<Workers, EngineError> {
    // Every worker's runtime is built here, before any thread starts:
    // one that cannot be built (no file descriptors left for its
    // epoll) refuses the run instead of silently dropping its share.
    let runtimes = shares
        .iter()
        .map(|_| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .on_thread_park(crate::timer::before_park)
                .build()
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(EngineError::Runtime)?;
    let mut workers = Workers {
        handles: Vec::with_capacity(shares.len()),
        lowered: Lowered::new(shares.len()),
    };
    for ((share, rt), jars) in shares.into_iter().zip(runtimes).zip(jars) {
        let (plan, tx, cancel) = (plan.clone(), tx.clone(), cancel.clone());
        let ends = SendingEnds(workers.lowered.clone());
        let handle = std::thread::Builder::new()
            .name(format!("pelt-worker-{}", share.index))
            .spawn(move || {
                let _ends = ends;
                run_worker(rt, plan, share, jars, tx, cancel)
            })
            .map_err(EngineError::Spawn)?;
        workers.handles.push(handle);
    }
    Ok(workers)
}

/// Starts the collector's thread; it returns the summary once every
/// worker is done, and joins them.
fn spawn_collector(
    plan: Arc<RunPlan>,
    header: RunHeader,
    workers: Workers,
    rx: Receiver<WorkerMsg>,
    events: mpsc::Sender<Snapshot>,
    done: oneshot::Sender<RunSummary>,
    canceller: Canceller,
) -> Result<JoinHandle<()>, EngineError> {
    let many = workers.handles.len() > MANY_WORKERS;
    let open_loop = plan.pacer.is_some();
    let collector = Collector::new(plan, header, workers.handles.len(), canceller);
    let (handles, lowered) = (workers.handles, workers.lowered);
    std::thread::Builder::new()
        .name("pelt-collector".into())
        .spawn(move || {
            let priority = match many {
                true => lowered.lower_to_nice(COLLECTOR_NICE_MANY_WORKERS),
                false => lowered.lower(open_loop),
            };
            let summary = collector.run(rx, events, priority);
            for h in handles {
                let _ = h.join();
            }
            // Nobody waiting (the run was dropped) is no error.
            let _ = done.send(summary);
        })
        .map_err(EngineError::Spawn)
}

/// Where and with what the run ran, for its results to name.
fn environment(plan: &RunPlan) -> Environment {
    Environment {
        pelt_version: env!("CARGO_PKG_VERSION").to_string(),
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        threads: plan.workers,
        target_addrs: plan.origins.iter().map(|o| o.addr.to_string()).collect(),
        started_unix_ms: plan.started_unix_ms,
        link: plan.origins.first().and_then(|o| match &o.addr {
            crate::conn::Addr::Tcp(a) => crate::link::link_to(a.ip()),
            crate::conn::Addr::Unix(_) => None,
        }),
        // This crate's own profile: the engine's hot path is what a debug
        // build slows down, whatever the program around it.
        debug_build: cfg!(debug_assertions),
    }
}

/// The collector's work grows with the workers (~0.3 ms per worker each
/// second: merging and emptying its recorder). Above this many workers it
/// could not keep up in the idle class or at nice 19 (see [`Background`]), so it takes nice 10
/// (about 10 % of a busy core).
const MANY_WORKERS: usize = 16;
const COLLECTOR_NICE_MANY_WORKERS: i32 = 10;

/// The footer a results file gets for `summary`.
pub fn footer_of(summary: &RunSummary) -> RunFooter {
    RunFooter {
        duration_ns: summary.duration.as_nanos() as u64,
        elapsed_ns: summary.elapsed.as_nanos() as u64,
        warmup_requests: summary.warmup_requests,
        interrupted: summary.interrupted,
        stopped_by: summary.stopped_by.clone(),
        worker_load: summary.worker_load.clone(),
        server_software: summary.server_software.clone(),
    }
}
