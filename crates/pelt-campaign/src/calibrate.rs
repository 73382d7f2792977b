//! `pelt calibrate`: this machine's ceiling as a load generator, measured
//! against pelt's own server on loopback: requests per second per core in
//! a closed loop, the highest rate one worker thread holds on schedule
//! (send lag p99 under 1 ms: a `pelt sweep` whose only limit is the
//! client), and the latency floor. Saved in the data directory, so that
//! `pelt run` can say when a run asks for more than the machine has shown
//! it can send.

use crate::execute::{execute, Keep};
use crate::sweep::{Sweep, SweepObserver, SweepSpec};
use crate::{Cancel, Error, Result};
use pelt_analyze::sweep::{thousands, Failure, Outcome, SweepReport};
use pelt_core::{human_ns, Load, RunConfig, RunSummary, Stop, Target};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file, in the data directory.
const FILE: &str = "calibration.json";

/// What `pelt calibrate` measured, as saved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Calibration {
    /// pelt's version.
    pub version: String,
    /// When, seconds since the Unix epoch.
    pub unix_time: u64,
    /// CPUs pelt could use.
    pub cores: usize,
    /// Closed loop, one worker thread, 50 connections: requests per second.
    pub closed_loop_rps: f64,
    /// The same per core of CPU the worker used.
    pub closed_loop_per_core: f64,
    /// The highest rate one worker thread held with send lag p99 < 1 ms.
    pub rate_per_thread: f64,
    /// Whether the client set that ceiling (`client`) or the server did
    /// first (`found`, `at_max_rate`: the client's ceiling is higher).
    pub rate_limited_by: Outcome,
    /// One connection, one request at a time: p50 and p99, nanoseconds.
    pub floor_p50_ns: u64,
    /// p99 of the same.
    pub floor_p99_ns: u64,
}

/// What a calibration found: the figures and the rate search behind
/// them, or why the machine was too busy for figures worth saving.
#[derive(Debug)]
pub enum Measured {
    /// pelt's ceiling on this machine.
    Ceiling {
        /// The figures, as saved.
        calibration: Calibration,
        /// The rate search (one worker thread, pelt's own server).
        sweep: Box<SweepReport>,
    },
    /// The figures would be the machine's other work rather than pelt's
    /// ceiling: why, in words. Nothing to save.
    TooBusy(String),
}

/// Measures this machine's ceiling as a load generator against pelt's
/// own server on loopback (on the CPUs one worker thread leaves): a
/// closed loop, the highest rate held on schedule (a sweep whose only
/// limit is the client, its steps kept in `folder`) and the latency
/// floor. `quick`: shorter steps, a rougher figure (~15 s, not ~1 min).
pub fn measure(
    quick: bool,
    folder: PathBuf,
    cancel: &Cancel,
    observer: &mut dyn SweepObserver,
) -> Result<Measured> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // The server gets the cores the client's one thread leaves.
    let server = pelt_target::Server::bind(
        "127.0.0.1:0".parse().expect("a literal address"),
        pelt_target::ServeConfig {
            threads: threads.saturating_sub(1).max(1),
            ..pelt_target::ServeConfig::default()
        },
    )
    .and_then(pelt_target::Server::spawn)
    .map_err(|e| Error::other(format!("cannot start pelt's own server on 127.0.0.1: {e}")))?;
    let url = pelt_core::Url::parse(&format!("http://{}/", server.local_addr()))
        .map_err(|e| Error::other(format!("pelt's own server's address: {e}")))?;
    let (step, warmup, closed) = if quick {
        (
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(1),
        )
    } else {
        (
            Duration::from_secs(3),
            Duration::from_secs(1),
            Duration::from_secs(5),
        )
    };
    // One worker thread, pelt's defaults otherwise.
    let config = |load: Load, stop: Stop, warmup: Duration| {
        let mut c = RunConfig::new(vec![Target::get(url.clone())], load, stop);
        c.threads = 1;
        c.warmup = warmup;
        c
    };
    let for_time = |d: Duration| Stop {
        requests: None,
        duration: Some(d),
    };

    observer.say("closed loop, 50 connections, one worker thread");
    let closed_run = run(config(Load::closed(50), for_time(closed), warmup), cancel)?;
    let on_cpu = closed_run
        .busiest_thread()
        .map_or(1.0, |t| t.on_cpu)
        .clamp(0.05, 1.0);
    let closed_loop_rps = closed_run.throughput();
    // How long the worker waited for a CPU while it had work: other work
    // on the machine, which lowers every figure below. Past the limit the
    // answer is known now: say so, rather than sweep on a quarter of a CPU.
    let waiting = closed_run.busiest_thread().map(|t| t.waiting);
    if let Some(why) = waited_too_long(waiting) {
        return Ok(Measured::TooBusy(why));
    }

    observer.say("latency floor: one connection, one request at a time");
    let count = Stop {
        requests: Some(if quick { 500 } else { 5000 }),
        duration: None,
    };
    let floor = run(config(Load::closed(1), count, Duration::ZERO), cancel)?;
    let h = &floor.total.response;
    let (floor_p50_ns, floor_p99_ns) = if h.is_empty() {
        (0, 0)
    } else {
        (
            pelt_core::rank::quantile(h, 0.5),
            pelt_core::rank::quantile(h, 0.99),
        )
    };

    observer
        .say("rate mode: the highest rate one worker thread holds with send lag p99 under 1 ms");
    let mut spec = SweepSpec::new(folder);
    spec.max_send_lag_ns = Some(1_000_000);
    spec.step = step;
    spec.warmup = warmup;
    spec.confirm = step;
    spec.plan.start = 1000.0;
    spec.plan.max = 2_000_000.0;
    spec.plan.tolerance = 0.10;
    // The client's ceiling is what is measured: a step it cannot keep up
    // with is a failure like any other, bisected and confirmed.
    spec.stop_on_client = false;
    let base = config(Load::rate_of(1000.0, spec.pool), for_time(step), warmup);
    let (report, _) = Sweep::new(spec, base)?.conduct(cancel, observer)?;
    drop(server);
    if report.outcome == Outcome::Interrupted || cancel.is_stopped() {
        return Err(Error::other(
            "calibration interrupted; nothing saved (run pelt calibrate again)",
        ));
    }
    let rate_per_thread = report.capacity.or(report.last_pass).unwrap_or(0.0);
    // Whose limit it was: the client's when the step above the answer
    // failed because pelt fell behind, else the server gave out first.
    let rate_limited_by = if report.first_fail_reasons.iter().any(Failure::is_client) {
        Outcome::Client
    } else {
        report.outcome
    };
    if let Some(why) = never_on_schedule(rate_per_thread, waiting) {
        return Ok(Measured::TooBusy(why));
    }
    Ok(Measured::Ceiling {
        calibration: Calibration {
            version: env!("CARGO_PKG_VERSION").into(),
            unix_time: now(),
            cores: threads,
            closed_loop_rps,
            closed_loop_per_core: closed_loop_rps / on_cpu,
            rate_per_thread,
            rate_limited_by,
            floor_p50_ns,
            floor_p99_ns,
        },
        sweep: Box::new(report),
    })
}

impl Calibration {
    /// The figures for a person; `first_fail` is the rate at which the
    /// client fell behind, if the search found one.
    pub fn text(&self, first_fail: Option<f64>) -> String {
        let c = self;
        let mut o = format!(
            "This machine as a load generator (pelt {}, {} CPUs, against pelt's own server on loopback):\n",
            c.version, c.cores
        );
        o += &format!(
            "  closed loop:   {} req/s on one worker thread ({} req/s per core of CPU it used)\n",
            thousands(c.closed_loop_rps),
            thousands(c.closed_loop_per_core)
        );
        o += &match c.rate_limited_by {
            Outcome::Client => format!(
                "  rate mode:     {} req/s per worker thread on schedule (send lag p99 < 1 ms); {}\n",
                thousands(c.rate_per_thread),
                first_fail
                    .map(|f| format!("at {} req/s the client fell behind", thousands(f)))
                    .unwrap_or_default()
            ),
            _ => format!(
                "  rate mode:     at least {} req/s per worker thread on schedule: pelt's server gave out first\n",
                thousands(c.rate_per_thread)
            ),
        };
        o += &format!(
            "  latency floor: {} p50, {} p99 (one connection, one request at a time)\n",
            human_ns(c.floor_p50_ns),
            human_ns(c.floor_p99_ns)
        );
        o
    }

    /// Saves it as `dir`'s calibration.json; returns the path.
    pub fn save(&self, dir: &Path) -> Result<PathBuf> {
        let path = dir.join(FILE);
        std::fs::create_dir_all(dir)
            .and_then(|()| {
                std::fs::write(
                    &path,
                    serde_json::to_string_pretty(self).unwrap_or_default(),
                )
            })
            .map_err(|e| {
                Error::other(format!(
                    "cannot save {}: {e}; check the data directory",
                    path.display()
                ))
            })?;
        Ok(path)
    }
}

/// The worker thread may wait for a CPU this share of a run before the
/// figures are the machine's load rather than pelt's ceiling.
const MAX_WAITING: f64 = 0.2;

/// How long pelt's worker waited for a CPU in the closed loop, in words.
fn waited(waiting: f64) -> String {
    format!(
        "pelt's worker thread waited for a CPU {:.0}% of the closed-loop run",
        waiting * 100.0
    )
}

/// Why the figures would measure other work: the worker waited for a CPU
/// more than [`MAX_WAITING`] of the closed loop.
fn waited_too_long(waiting: Option<f64>) -> Option<String> {
    waiting
        .filter(|w| *w > MAX_WAITING)
        .map(|w| format!("{} (other work had the CPUs)", waited(w)))
}

/// Why the figures would measure other work although the closed loop had
/// its CPU: no rate held its schedule at all (not even the first step,
/// 1,000 req/s, which any machine holds when pelt has a CPU).
fn never_on_schedule(rate_per_thread: f64, waiting: Option<f64>) -> Option<String> {
    (rate_per_thread <= 0.0).then(|| match waiting {
        Some(w) => format!(
            "not even 1,000 req/s went out on schedule, and {}",
            waited(w)
        ),
        None => "not even 1,000 req/s went out on schedule".to_string(),
    })
}

/// A quiet, unsaved run.
fn run(config: RunConfig, cancel: &Cancel) -> Result<RunSummary> {
    let summary = execute(config, Keep::default(), cancel, &mut crate::Unobserved)?;
    if let Some(why) = summary.no_response() {
        return Err(Error::other(format!(
            "pelt's own server did not answer: {why}"
        )));
    }
    Ok(summary)
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The saved calibration in data directory `data`, if any.
pub fn saved(data: &Path) -> Option<(PathBuf, Calibration)> {
    let path = data.join(FILE);
    let text = std::fs::read_to_string(&path).ok()?;
    serde_json::from_str(&text).ok().map(|c| (path, c))
}

/// A note when a rate run asks for more per worker thread than this
/// machine held on schedule when calibrated (`c`, say [`saved`]'s).
pub fn note_for(config: &RunConfig, c: &Calibration) -> Option<String> {
    // A shard sends its share.
    let rate = config.load.rate()? / f64::from(config.shard_or_whole().count);
    if c.rate_limited_by != Outcome::Client || c.rate_per_thread <= 0.0 {
        return None;
    }
    let threads = config.threads.max(1) as f64;
    let can = c.rate_per_thread * threads;
    (rate > can).then(|| {
        format!(
            "pelt: note: --rate {} asks for more than this machine held on schedule when calibrated: \
             {} req/s per worker thread x {} (pelt calibrate, {}); expect send lag, or add threads (-t), \
             or spread the load over machines (--shard)",
            thousands(rate),
            thousands(c.rate_per_thread),
            threads,
            crate::results::utc_stamp(c.unix_time)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_machine_is_named_not_calibrated() {
        // Issue 22 §9: a busy machine printed a ceiling of 0 req/s.
        let why = never_on_schedule(0.0, Some(0.15)).unwrap();
        assert!(why.contains("1,000 req/s") && why.contains("15%"), "{why}");
        assert!(never_on_schedule(0.0, None).is_some());
        assert_eq!(never_on_schedule(40_000.0, Some(0.15)), None);
        let why = waited_too_long(Some(0.45)).unwrap();
        assert!(why.contains("45%") && why.contains("other work"), "{why}");
        assert_eq!(waited_too_long(Some(0.05)), None);
        assert_eq!(waited_too_long(None), None);
    }
}
