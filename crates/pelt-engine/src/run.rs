//! The library entry point: start a run, watch its seconds go by, cancel
//! it, and collect its summary.
//!
//! Starting is three steps: plan (`RunPlan::new`: resolve, serialise,
//! pace), spawn (a thread per worker, and the collector), and capture the
//! environment the run's results will name.

use crate::cancel::Canceller;
use crate::collector::{Collector, Snapshot};
use crate::error::EngineError;
use crate::intervals::WorkerMsg;
use crate::plan::{RunPlan, Share};
use crate::priority::Background;
use crate::request_log::{RequestLogSpec, SharedLog};
use crate::session::login::login_all;
use crate::session::Jar;
use crate::worker::run_worker;
use pelt_core::{Environment, RunConfig, RunFooter, RunHeader, RunSummary};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::watch;

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
/// its summary by [`Run::wait`].
#[derive(Debug)]
pub struct Run {
    events: Receiver<Snapshot>,
    canceller: Canceller,
    collector: JoinHandle<RunSummary>,
    epoch: Instant,
    measure_from: Duration,
    header: RunHeader,
    request_log: Option<Arc<SharedLog>>,
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
    pub fn start_with_log(
        config: RunConfig,
        log: Option<RequestLogSpec>,
    ) -> Result<Run, EngineError> {
        config.validate()?;
        let mut plan = RunPlan::new(&config)?;
        let shares = plan.shares(&config);
        // Logins first: they set the clock's zero afresh, which the
        // request log's times count from.
        let jars = log_in(&mut plan, &shares)?;
        if let Some(spec) = log {
            plan.request_log = Some(SharedLog::create(
                spec,
                &config.targets,
                plan.unix_ns_at_epoch,
            )?);
        }
        let enough = plan.enough.clone();
        let plan = Arc::new(plan);
        let (canceller, cancel_rx) = Canceller::new(enough);
        let (tx, rx) = mpsc::channel();
        let workers = spawn_workers(&plan, shares, jars, tx, cancel_rx)?;
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
            config,
        };
        let (events_tx, events) = mpsc::channel();
        let collector = spawn_collector(
            plan.clone(),
            header.clone(),
            workers,
            rx,
            events_tx,
            canceller.clone(),
        )?;
        Ok(Run {
            events,
            canceller,
            collector,
            epoch: plan.epoch,
            measure_from: Duration::from_nanos(plan.measure_from),
            header,
            request_log: plan.request_log.clone(),
        })
    }

    /// What the run is and where: the first record of its results file.
    pub fn header(&self) -> &RunHeader {
        &self.header
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
    pub fn progress(&self, timeout: Duration) -> Progress {
        match self.events.recv_timeout(timeout) {
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
        Snapshots { run: self }
    }

    /// Runs to the end, handing `observer` each completed second as it
    /// completes, and returns the summary: [`Run::snapshots`] and
    /// [`Run::wait`] in one call.
    pub fn observe(self, mut observer: impl FnMut(&Snapshot)) -> RunSummary {
        for s in self.snapshots() {
            observer(&s);
        }
        self.wait()
    }

    /// Waits for the run to end and returns its summary.
    pub fn wait(self) -> RunSummary {
        let mut summary = match self.collector.join() {
            Ok(summary) => summary,
            Err(panic) => std::panic::resume_unwind(panic),
        };
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

/// A run's seconds as they complete ([`Run::snapshots`]).
#[derive(Debug)]
pub struct Snapshots<'a> {
    run: &'a Run,
}

impl Iterator for Snapshots<'_> {
    type Item = Snapshot;

    /// The next completed second; `None` once the run is over.
    fn next(&mut self) -> Option<Snapshot> {
        self.run.events.recv().ok()
    }
}

/// The running workers' threads.
struct Workers {
    handles: Vec<JoinHandle<()>>,
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
    };
    for ((share, rt), jars) in shares.into_iter().zip(runtimes).zip(jars) {
        let (plan, tx, cancel) = (plan.clone(), tx.clone(), cancel.clone());
        let handle = std::thread::Builder::new()
            .name(format!("pelt-worker-{}", share.index))
            .spawn(move || run_worker(rt, plan, share, jars, tx, cancel))
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
    canceller: Canceller,
) -> Result<JoinHandle<RunSummary>, EngineError> {
    let many = workers.handles.len() > MANY_WORKERS;
    let open_loop = plan.pacer.is_some();
    let collector = Collector::new(plan, header, workers.handles.len(), canceller);
    let handles = workers.handles;
    std::thread::Builder::new()
        .name("pelt-collector".into())
        .spawn(move || {
            let priority = match many {
                true => Background::at_nice(COLLECTOR_NICE_MANY_WORKERS),
                false => Background::lower(open_loop),
            };
            let summary = collector.run(rx, events, priority);
            for h in handles {
                let _ = h.join();
            }
            summary
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
