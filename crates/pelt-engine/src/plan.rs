//! The run plan: everything workers need to know, fixed before the first
//! request and read-only after (hosts resolved, requests serialised, the
//! pacer, the clock's zero), and each worker's share of it.

use crate::conn::{for_origin, resolve_origins, tls_connector, Origin};
use crate::error::EngineError;
use crate::h1::PreparedRequest;
use crate::h2::PreparedH2;
use crate::pacer::{ConstantRate, Pacer, Piecewise};
use crate::session::{jar::cookie_url, Jar};
use pelt_core::{Load, Nanos, RunConfig};
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long requests in flight may finish after sending stops (one
/// constant, kept in pelt-core so reports can explain the wait).
pub use pelt_core::summary::GRACE;
/// Workers start together this long after `Run::start`, so the schedule
/// does not begin while threads are still being created.
const START_DELAY: Duration = Duration::from_millis(5);
/// Marks a target whose first successful body length is not known yet.
pub(crate) const LENGTH_UNSET: u64 = u64::MAX;

/// Read-only facts every worker shares.
pub(crate) struct RunPlan {
    /// Time zero of the run; all `Nanos` are measured from here.
    pub epoch: Instant,
    /// Wall clock at `epoch`, so intervals align to wall-clock seconds.
    pub unix_ns_at_epoch: u64,
    /// Wall clock when the run was planned, in milliseconds since the Unix
    /// epoch (the environment's start time).
    pub started_unix_ms: u64,
    /// Worker threads.
    pub workers: usize,
    pub requests: Vec<PreparedRequest>,
    /// With `--http2`: the same requests for HTTP/2 (else empty).
    pub h2_requests: Vec<PreparedH2>,
    /// HTTP/2 streams per connection; 0 for HTTP/1.1.
    pub streams: u32,
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
    /// `--connect-rate`: each worker opens at most one connection per
    /// interval (its share of the rate).
    pub connect_interval: Option<Nanos>,
    /// The targets as configured, for building redirected requests.
    pub targets: Vec<pelt_core::Target>,
    /// `--log-requests`: the file every worker appends its requests to.
    pub request_log: Option<std::sync::Arc<crate::request_log::SharedLog>>,
    pub http: pelt_core::HttpOptions,
    /// `--cookies` (or `--login`): each target's URL, as the jars match
    /// cookies against it.
    pub cookie_urls: Vec<url::Url>,
    /// `--login`: each worker's senders' jars, filled by the logins, taken
    /// by the worker when it starts.
    pub jars: std::sync::Mutex<Vec<Vec<Jar>>>,
    /// `--login`: logins made (all before the epoch).
    pub logins: u64,
}

impl RunPlan {
    /// Plans a run of `config` (already validated): resolves its hosts,
    /// serialises its requests, picks its pacer and sets its clock's zero
    /// a moment ahead, for the workers to start on together.
    pub fn new(config: &RunConfig) -> Result<RunPlan, EngineError> {
        let stop = config.effective_stop();
        let workers = config.effective_threads();

        let (origins, target_origin) = resolve_origins(config)?;
        // A redirect to another host may need TLS even if no target does.
        let tls = (origins.iter().any(|o| o.tls.is_some()) || config.http.follow_any_host)
            .then(|| tls_connector(config.http.insecure, config.http.http2));
        let requests = config
            .targets
            .iter()
            .zip(&target_origin)
            .map(|(t, &o)| {
                let mut r = PreparedRequest::new(t, config.http.keepalive);
                // --proxy: plain HTTP goes to the proxy in absolute form.
                r.bytes = for_origin(r.bytes, &t.url, &origins[o]);
                r
            })
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
        Ok(RunPlan {
            epoch: Instant::now() + START_DELAY,
            unix_ns_at_epoch: (start_wall + START_DELAY).as_nanos() as u64,
            started_unix_ms: start_wall.as_millis() as u64,
            workers,
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
            origins,
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
                .map(|_| AtomicU64::new(LENGTH_UNSET))
                .collect(),
            // Each worker paces its own share of --connect-rate.
            connect_interval: config
                .http
                .connect_rate
                .map(|r| (workers as f64 * 1e9 / r).max(1.0) as Nanos),
            targets: config.targets.clone(),
            request_log: None,
            http: config.http.clone(),
            cookie_urls: match config.http.session.is_off() {
                true => Vec::new(),
                false => config.targets.iter().map(|t| cookie_url(&t.url)).collect(),
            },
            jars: std::sync::Mutex::new(Vec::new()),
            logins: 0,
        })
    }

    /// `--login`: logs every sender in (see [`crate::session::login`]),
    /// then sets the clock's zero afresh, so that the run starts after
    /// the logins and no figure includes them.
    pub fn log_in(&mut self, shares: &[Share]) -> Result<(), EngineError> {
        let Some(login) = &self.http.session.login else {
            return Ok(());
        };
        let per_worker: Vec<usize> = shares
            .iter()
            .map(|s| s.connections as usize * self.streams.max(1) as usize)
            .collect();
        let total = per_worker.iter().sum();
        let mut jars = crate::session::login::login_all(login, &self.http, total)?.into_iter();
        let by_worker = per_worker
            .iter()
            .map(|&n| jars.by_ref().take(n).collect())
            .collect();
        *self.jars.get_mut().unwrap_or_else(|e| e.into_inner()) = by_worker;
        self.logins = total as u64;
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        self.epoch = Instant::now() + START_DELAY;
        self.unix_ns_at_epoch = (wall + START_DELAY).as_nanos() as u64;
        Ok(())
    }

    /// Worker `index`'s senders' jars from the logins (empty without
    /// `--login`).
    pub fn take_jars(&self, index: usize) -> Vec<Jar> {
        let mut jars = self.jars.lock().unwrap_or_else(|e| e.into_inner());
        jars.get_mut(index).map(std::mem::take).unwrap_or_default()
    }

    /// Run time `t` as an instant tokio can sleep until.
    pub fn instant(&self, t: Nanos) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.epoch + Duration::from_nanos(t))
    }

    /// Each worker's share of `config`'s connections and counts.
    pub fn shares(&self, config: &RunConfig) -> Vec<Share> {
        let workers = self.workers;
        let requests = config.effective_stop().requests;
        let connections = config.load.connections();
        (0..workers)
            .map(|index| Share {
                index,
                workers,
                connections: split(connections as u64, workers, index) as u32,
                budget: match self.pacer.is_none() {
                    true => requests.map(|n| split(n, workers, index)),
                    false => None,
                },
                slots: self.total_slots.map(|n| split(n, workers, index)),
            })
            .collect()
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

/// Share `index` of `total` split as evenly as possible over `parts`.
fn split(total: u64, parts: usize, index: usize) -> u64 {
    let parts = parts as u64;
    total / parts + u64::from((index as u64) < total % parts)
}

#[cfg(test)]
mod tests {
    use super::split;

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
