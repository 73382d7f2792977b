//! The library entry point: start a run, watch its seconds go by, cancel
//! it, and collect its summary.

use crate::conn::{tls_connector, Addr, Origin};
use crate::h1::PreparedRequest;
use crate::h2::PreparedH2;
use crate::pacer::{ConstantRate, Pacer, Piecewise};
use crate::worker::{run_worker, Plan, Share, WorkerMsg};
use pelt_core::{
    connect_address, ConfigError, Environment, HttpOptions, IntervalRow, Load, Nanos, Recorder,
    RunConfig, RunFooter, RunHeader, RunSummary, Scheme, SummaryBuilder, ThreadLoad, Url,
};
use rustls::pki_types::ServerName;
use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::AtomicU64;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;

/// How long requests in flight may finish after sending stops (one
/// constant, kept in pelt-core so reports can explain the wait).
pub use pelt_core::summary::GRACE;
/// Workers start together this long after `Run::start`, so the schedule
/// does not begin while threads are still being created.
const START_DELAY: Duration = Duration::from_millis(5);

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot resolve host '{host}': {detail}; check the URL's host name")]
    Resolve { host: String, detail: String },
    #[error("{0}; fix the request, or drop --http2")]
    Request(String),
    #[error("cannot start worker threads: {0}")]
    Spawn(std::io::Error),
    #[error("cannot start a worker's event loop: {0}; raise the open-file limit (ulimit -n) or use fewer -t threads")]
    Runtime(std::io::Error),
}

/// One finished second: its row for progress displays, and its whole
/// recorder for the results file.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub row: IntervalRow,
    pub recorder: Box<Recorder>,
    pub total_requests: u64,
    pub total_errors: u64,
}

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

/// Stops a run early (Ctrl-C). Cloneable and usable from any thread.
#[derive(Debug, Clone)]
pub struct Canceller {
    tx: Arc<watch::Sender<bool>>,
}

impl Canceller {
    /// Stops sending; requests in flight get a short grace to finish.
    pub fn cancel(&self) {
        self.tx.send_replace(true);
    }
}

/// A run in progress.
#[derive(Debug)]
pub struct Run {
    events: Receiver<Snapshot>,
    canceller: Canceller,
    collector: JoinHandle<RunSummary>,
    epoch: Instant,
    measure_from: Duration,
    header: RunHeader,
}

impl Run {
    /// Validates `config`, resolves its hosts and starts the workers.
    pub fn start(config: RunConfig) -> Result<Run, EngineError> {
        config.validate()?;
        let stop = config.effective_stop();
        let workers = config.effective_threads();

        let (origins, target_origin) = resolve_origins(&config)?;
        // A redirect to another host may need TLS even if no target does.
        let tls = (origins.iter().any(|o| o.tls.is_some()) || config.http.follow_any_host)
            .then(|| tls_connector(config.http.insecure, config.http.http2));
        let requests = config
            .targets
            .iter()
            .map(|t| PreparedRequest::new(t, config.http.keepalive))
            .collect();
        let h2_requests = match config.http.http2 {
            true => config
                .targets
                .iter()
                .map(PreparedH2::new)
                .collect::<Result<Vec<_>, _>>()
                .map_err(EngineError::Request)?,
            false => Vec::new(),
        };
        let pacer: Option<Box<dyn Pacer>> = match &config.load {
            Load::Rate {
                schedule: Some(s), ..
            } => Some(Box::new(Piecewise::new(s, config.warmup))),
            Load::Rate { rate, .. } => Some(Box::new(ConstantRate::new(*rate))),
            Load::Closed { .. } => None,
        };
        let connection_schedule = match &config.load {
            Load::Closed { schedule, .. } => schedule.clone(),
            Load::Rate { .. } => None,
        };
        let measure_from = config.warmup.as_nanos() as Nanos;
        let deadline = stop.duration.map(|d| measure_from + d.as_nanos() as Nanos);
        // Rate mode with -n: the schedule's warm-up slots plus n measured.
        let total_slots = match (&pacer, stop.requests) {
            (Some(p), Some(n)) => Some(p.count_before(measure_from) + n),
            _ => None,
        };

        let start_wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let epoch = Instant::now() + START_DELAY;
        let plan = Arc::new(Plan {
            epoch,
            unix_ns_at_epoch: (start_wall + START_DELAY).as_nanos() as u64,
            requests,
            h2_requests,
            streams: if config.http.http2 {
                config.http.streams
            } else {
                0
            },
            picker: pelt_core::TargetPicker::new(config.order, &config.targets),
            think: config.think,
            target_origin,
            origins: origins.clone(),
            tls,
            pacer,
            connection_schedule,
            total_slots,
            measure_from,
            deadline,
            timeout: config.http.timeout,
            connect_timeout: config.http.connect_timeout,
            keepalive: config.http.keepalive,
            grace: GRACE.min(config.http.timeout),
            expected_len: config
                .targets
                .iter()
                .map(|_| AtomicU64::new(u64::MAX))
                .collect(),
            // Each worker paces its own share of --connect-rate.
            connect_interval: config
                .http
                .connect_rate
                .map(|r| (workers as f64 * 1e9 / r).max(1.0) as Nanos),
            targets: config.targets.clone(),
            http: config.http.clone(),
        });

        let (cancel_tx, cancel_rx) = watch::channel(false);
        let (tx, rx) = mpsc::channel();
        let connections = config.load.connections();
        // Every worker's runtime is built here, before any thread starts:
        // one that cannot be built (no file descriptors left for its
        // epoll) refuses the run instead of silently dropping its share.
        let runtimes = (0..workers)
            .map(|_| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(EngineError::Runtime)?;
        let mut handles = Vec::with_capacity(workers);
        let mut recycle = Vec::with_capacity(workers);
        for (index, rt) in runtimes.into_iter().enumerate() {
            let share = Share {
                index,
                workers,
                connections: split(connections as u64, workers, index) as u32,
                budget: match pacer_is_none(&config) {
                    true => stop.requests.map(|n| split(n, workers, index)),
                    false => None,
                },
                slots: total_slots.map(|n| split(n, workers, index)),
            };
            let (plan, tx, cancel) = (plan.clone(), tx.clone(), cancel_rx.clone());
            let (recycle_tx, recycled) = mpsc::channel();
            recycle.push(recycle_tx);
            let handle = std::thread::Builder::new()
                .name(format!("pelt-worker-{index}"))
                .spawn(move || run_worker(rt, plan, share, tx, recycled, cancel))
                .map_err(EngineError::Spawn)?;
            handles.push(handle);
        }
        drop(tx);

        let env = Environment {
            pelt_version: env!("CARGO_PKG_VERSION").to_string(),
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            threads: workers,
            target_addrs: origins.iter().map(|o| o.addr.to_string()).collect(),
            started_unix_ms: start_wall.as_millis() as u64,
        };
        let config = config.clone();
        let header = RunHeader {
            config,
            env,
            measure_start_unix_ns: plan.unix_ns_at_epoch + measure_from,
            measure_from_ns: measure_from,
        };
        let (events_tx, events) = mpsc::channel();
        let collector = Collector::new(plan, header.clone(), recycle);
        let collector = std::thread::Builder::new()
            .name("pelt-collector".into())
            .spawn(move || {
                set_nice(match workers > MANY_WORKERS {
                    true => COLLECTOR_NICE_MANY_WORKERS,
                    false => BACKGROUND_NICE,
                });
                let summary = collector.run(rx, events_tx);
                for h in handles {
                    let _ = h.join();
                }
                summary
            })
            .map_err(EngineError::Spawn)?;
        Ok(Run {
            events,
            canceller: Canceller {
                tx: Arc::new(cancel_tx),
            },
            collector,
            epoch,
            measure_from: Duration::from_nanos(measure_from),
            header,
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

    /// Waits for the run to end and returns its summary.
    pub fn wait(self) -> RunSummary {
        match self.collector.join() {
            Ok(summary) => summary,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

fn pacer_is_none(config: &RunConfig) -> bool {
    config.load.rate().is_none()
}

/// The collector's work each second (allocating, merging and emptying
/// megabyte-sized recorders) comes in steps of a fraction of a millisecond;
/// between them it offers the CPU to a worker that shares its core. Even
/// at a low priority the scheduler lets a thread finish its time slice (a
/// millisecond or more) before a waking worker gets the core.
fn yield_between_steps() {
    std::thread::yield_now();
}

/// Niceness of the threads that merge, write and display results: the
/// lowest, so that a waking worker sharing their core goes first. At
/// nice 19 a thread gets about 1.5 % of a core that a worker keeps busy.
const BACKGROUND_NICE: i32 = 19;
/// The collector's work grows with the workers (~0.3 ms per worker each
/// second: merging and emptying its recorder). Above this many workers it
/// could not keep up on 1.5 % of a core, so it takes nice 10 (about 10 %).
const MANY_WORKERS: usize = 16;
const COLLECTOR_NICE_MANY_WORKERS: i32 = 10;

/// Lowers the calling thread's CPU priority (nice 19, for this thread
/// only; Linux): for threads that write and display results while workers
/// send. Pinned to the same core as a worker (as in
/// `taskset -c 0 pelt run ...`), a normal-priority bookkeeping thread ran
/// its once-a-second millisecond of work *instead of* the worker, and
/// every request due meanwhile went out late; at a low priority it runs
/// in the worker's idle gaps. Elsewhere, or if refused, nothing changes.
pub fn background_priority() {
    set_nice(BACKGROUND_NICE);
}

fn set_nice(nice: i32) {
    #[cfg(target_os = "linux")]
    {
        let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), nice);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}

/// Share `index` of `total` split as evenly as possible over `parts`.
fn split(total: u64, parts: usize, index: usize) -> u64 {
    let parts = parts as u64;
    total / parts + u64::from((index as u64) < total % parts)
}

/// Resolves each distinct scheme/host/port once, before the run, after
/// `--connect-to` and `--unix-socket` have said where connections go.
fn resolve_origins(config: &RunConfig) -> Result<(Vec<Origin>, Vec<usize>), EngineError> {
    let mut keys: Vec<(Scheme, String, u16)> = Vec::new();
    let mut origins = Vec::new();
    let mut target_origin = Vec::new();
    for t in &config.targets {
        let key = (t.url.scheme, t.url.host.clone(), t.url.port);
        if let Some(i) = keys.iter().position(|k| *k == key) {
            target_origin.push(i);
            continue;
        }
        let origin = origin_of(&t.url, &config.http, |host, port| {
            let addrs: Vec<SocketAddr> = (host, port)
                .to_socket_addrs()
                .map_err(|e| e.to_string())?
                .collect();
            pick_reachable(&addrs, config.http.connect_timeout)
                .ok_or_else(|| "no addresses found".to_string())
        })?;
        target_origin.push(origins.len());
        keys.push(key);
        origins.push(origin);
    }
    Ok((origins, target_origin))
}

/// Where connections for `url` go: the Unix socket, or the address
/// `resolve` finds for the URL's host and port as `--connect-to` maps them.
/// The TLS name is always the URL's host.
pub(crate) fn origin_of(
    url: &Url,
    http: &HttpOptions,
    resolve: impl FnOnce(&str, u16) -> Result<SocketAddr, String>,
) -> Result<Origin, EngineError> {
    let addr = match &http.unix_socket {
        Some(path) => Addr::Unix(path.into()),
        None => {
            let (host, port) = connect_address(&http.connect_to, &url.host, url.port);
            Addr::Tcp(resolve(&host, port).map_err(|detail| EngineError::Resolve {
                detail: match host == url.host {
                    true => detail,
                    false => format!("{detail} (--connect-to maps '{}' to it)", url.host),
                },
                host,
            })?)
        }
    };
    let tls = match url.scheme {
        Scheme::Http => None,
        Scheme::Https => {
            Some(
                ServerName::try_from(url.host.clone()).map_err(|e| EngineError::Resolve {
                    host: url.host.clone(),
                    detail: format!("not a valid TLS server name: {e}"),
                })?,
            )
        }
    };
    Ok(Origin { addr, tls })
}

/// The first address that accepts a connection, else the first address.
///
/// `localhost` often resolves to `::1` first while the server listens on
/// 127.0.0.1 only: browsers and curl fall back, and so must a load
/// generator, or every request of the run fails to connect. Only names
/// with several addresses are probed.
fn pick_reachable(addrs: &[SocketAddr], timeout: Duration) -> Option<SocketAddr> {
    if addrs.len() > 1 {
        let probe = timeout.min(Duration::from_secs(1));
        if let Some(a) = addrs
            .iter()
            .find(|a| std::net::TcpStream::connect_timeout(a, probe).is_ok())
        {
            return Some(*a);
        }
    }
    addrs.first().copied()
}

/// Merges the workers' seconds, in order, into the summary.
struct Collector {
    plan: Arc<Plan>,
    /// Highest second each worker has handed over; `u64::MAX` once done.
    progress: Vec<Option<u64>>,
    pending: BTreeMap<u64, Recorder>,
    /// Next second to emit; seconds before measurement are skipped.
    next_second: u64,
    builder: SummaryBuilder,
    warmup_requests: u64,
    cut: Option<Nanos>,
    /// Whether `-n` could end the run.
    count_limited: bool,
    /// Per worker: where its merged recorders go back, emptied, for reuse.
    recycle: Vec<mpsc::Sender<Box<Recorder>>>,
    /// Per worker: how busy its thread was, once it is done.
    worker_load: Vec<Option<ThreadLoad>>,
}

const NS: u64 = 1_000_000_000;

impl Collector {
    fn new(
        plan: Arc<Plan>,
        header: RunHeader,
        recycle: Vec<mpsc::Sender<Box<Recorder>>>,
    ) -> Collector {
        let workers = recycle.len();
        let first = header.measure_start_unix_ns / NS;
        let count_limited = header.config.stop.requests.is_some();
        Collector {
            count_limited,
            plan,
            progress: vec![None; workers],
            pending: BTreeMap::new(),
            next_second: first,
            builder: SummaryBuilder::new(header, None),
            warmup_requests: 0,
            cut: None,
            recycle,
            worker_load: vec![None; workers],
        }
    }

    fn run(mut self, rx: Receiver<WorkerMsg>, events: mpsc::Sender<Snapshot>) -> RunSummary {
        // Ends when every worker has sent Done and dropped its sender.
        for msg in rx {
            match msg {
                WorkerMsg::Interval {
                    worker,
                    second,
                    mut rec,
                } => {
                    let merged = self.pending.entry(second).or_default();
                    yield_between_steps();
                    merged.merge(&rec);
                    self.progress[worker] = Some(second);
                    yield_between_steps();
                    // Emptied here, off the worker's thread; a worker that
                    // has finished no longer listens, which is fine.
                    rec.reset();
                    let _ = self.recycle[worker].send(rec);
                    yield_between_steps();
                }
                WorkerMsg::Done {
                    worker,
                    warmup_requests,
                    cut,
                    load,
                } => {
                    self.progress[worker] = Some(u64::MAX);
                    self.worker_load[worker] = load;
                    self.warmup_requests += warmup_requests;
                    if let Some(c) = cut {
                        self.cut = Some(self.cut.map_or(c, |old| old.min(c)));
                    }
                }
            }
            let complete = self.progress.iter().map(|p| p.unwrap_or(0)).min();
            if let Some(upto) = complete.filter(|&c| c != u64::MAX) {
                self.emit_through(upto, &events);
            }
        }
        if let Some(&last) = self.pending.keys().next_back() {
            self.emit_through(last, &events);
        }
        self.finish()
    }

    /// Emits every second up to and including `upto`, empty ones too.
    fn emit_through(&mut self, upto: u64, events: &mpsc::Sender<Snapshot>) {
        while self.next_second <= upto {
            let second = self.next_second;
            self.next_second += 1;
            let rec = self.pending.remove(&second).unwrap_or_default();
            let row = self.builder.add(second, &rec);
            yield_between_steps();
            if let Some(row) = row {
                let total = self.builder.total();
                let _ = events.send(Snapshot {
                    row,
                    total_requests: total.requests,
                    total_errors: total.error_count(),
                    recorder: Box::new(rec),
                });
            }
        }
        // Anything older belongs to warm-up seconds that are not reported.
        self.pending = self.pending.split_off(&self.next_second);
    }

    fn finish(self) -> RunSummary {
        let plan = &self.plan;
        let start = plan.measure_from;
        let last_done = self.builder.total().last_done.max(start);
        let interrupted = self
            .cut
            .is_some_and(|c| plan.deadline.is_none_or(|d| c < d));
        // When sending ended, by the plan rather than by when the last
        // response happened to arrive: a rate run's duration is its
        // schedule, or "1,000 req/s for 5 s" would read as 1,250 req/s when
        // the last response came back at 4 s.
        let send_end = match (self.cut, &plan.pacer, plan.total_slots) {
            (Some(cut), _, _) if interrupted => cut,
            (_, Some(pacer), Some(slots)) => {
                let end = pacer.at(slots);
                plan.deadline.map_or(end, |d| end.min(d))
            }
            (_, Some(_), None) => plan.deadline.unwrap_or(last_done),
            (Some(cut), None, _) => cut,
            // Closed loop: the deadline if it ended the run (a count can
            // end it first), else like ab, the last response.
            (None, None, _) => match plan.deadline {
                Some(d) if plan.total_slots.is_none() && !self.count_limited => d,
                _ => last_done,
            },
        };
        let duration = send_end.saturating_sub(start);
        let elapsed = last_done.max(send_end) - start;
        self.builder.finish(Some(&RunFooter {
            duration_ns: duration,
            elapsed_ns: elapsed,
            warmup_requests: self.warmup_requests,
            interrupted,
            // All or nothing: a partial list would hide a busy thread.
            worker_load: self
                .worker_load
                .iter()
                .copied()
                .collect::<Option<Vec<_>>>()
                .unwrap_or_default(),
        }))
    }
}

/// The footer a results file gets for `summary`.
pub fn footer_of(summary: &RunSummary) -> RunFooter {
    RunFooter {
        duration_ns: summary.duration.as_nanos() as u64,
        elapsed_ns: summary.elapsed.as_nanos() as u64,
        warmup_requests: summary.warmup_requests,
        interrupted: summary.interrupted,
        worker_load: summary.worker_load.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn an_address_that_accepts_is_preferred() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let open = listener.local_addr().unwrap();
        // Port 1 on loopback refuses at once.
        let refused: std::net::SocketAddr = "127.0.0.1:1".parse().unwrap();
        let pick = super::pick_reachable(&[refused, open], std::time::Duration::from_secs(1));
        assert_eq!(pick, Some(open));
        assert_eq!(
            super::pick_reachable(&[refused], std::time::Duration::from_secs(1)),
            Some(refused)
        );
    }

    #[test]
    fn split_is_exact() {
        for total in [0u64, 1, 7, 1000, 1001] {
            for parts in 1..5 {
                let sum: u64 = (0..parts).map(|i| split(total, parts, i)).sum();
                assert_eq!(sum, total);
            }
        }
    }
}
