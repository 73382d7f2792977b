//! What a run was, around its numbers: the header a results file starts
//! with (the configuration and where it ran) and the footer it ends with
//! (how long it took and how it ended). Several files of one run, measured
//! from several machines, merge here.

use crate::config::{Load, RunConfig};
use crate::schedule::Schedule;
use serde::{Deserialize, Serialize};

/// Written first: what the run was and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunHeader {
    /// The configuration the run was made with.
    pub config: RunConfig,
    /// Where it ran.
    pub env: Environment,
    /// When measurement started, nanoseconds since the Unix epoch.
    pub measure_start_unix_ns: u64,
    /// When measurement started, in the run's own nanoseconds (the clock
    /// of `Recorder::first_intended` and friends).
    pub measure_from_ns: u64,
    /// A sharded run (`--shard`): the run id, the shard and the hash of
    /// the configuration every part must share. `None` for a whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::ShardInfo>,
    /// How late a whole run (not a shard: see `shard.late_ns`) started
    /// measuring against `--start-at`, in nanoseconds; 0 when on time or
    /// without one. Late, it keeps its schedule and sends what it missed
    /// at once, and its report says why those sends were late.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub late_start_ns: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What stopped a run before its stop condition, when known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum StopCause {
    /// A signal: `SIGINT` (Ctrl-C), `SIGTERM` (a CI job cancelled, a
    /// Kubernetes pod stopped, a Slurm job out of time) or `SIGHUP`.
    Signal {
        /// Its name, like `SIGTERM`.
        signal: String,
    },
    /// An `--abort-on` rule held for its whole time.
    Abort {
        /// The rule as written.
        rule: String,
        /// When it fired: seconds from the start of measurement to the end
        /// of the second that completed it.
        at_s: f64,
    },
    /// `--scenario`: a `unique` feed had no row left, so no flow started
    /// after it and the run ended when the flows under way did. The run
    /// is complete (not interrupted): it used its data up.
    FeedRanOut {
        /// The feed's file name.
        feed: String,
        /// Rows used (with `--shard`, this shard's).
        rows: u64,
        /// When: seconds from the start of measurement.
        at_s: f64,
    },
}

/// Written last, when the run ended normally, by Ctrl-C or another
/// signal, or by an `--abort-on` rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFooter {
    /// From the start of measurement until sending stopped, in nanoseconds.
    pub duration_ns: u64,
    /// From the start of measurement until the last response or give-up, in nanoseconds.
    pub elapsed_ns: u64,
    /// Requests sent during warm-up (not in any statistic).
    pub warmup_requests: u64,
    /// Whether Ctrl-C, a signal or an `--abort-on` rule stopped the run
    /// before its stop condition.
    pub interrupted: bool,
    /// Which of them, when known (files written before pelt said, and
    /// runs stopped through the library without a cause, have none); or
    /// for a complete run, a scenario's unique feed that ran out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<StopCause>,
    /// How busy each worker thread was; empty where the platform does not
    /// say (and in files written before pelt recorded it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worker_load: Vec<ThreadLoad>,
    /// The server's `Server` response header (ab's "Server Software"), as
    /// sent in the first complete response that carried one; `None` when
    /// no response did (and in files written before pelt recorded it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_software: Option<String>,
}

/// Why files cannot be merged as one run measured from several machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotOneRun {
    /// Both have schedules, whose segments do not line up.
    #[error("cannot --merge runs with different schedules: they are not one run")]
    Schedules,
    /// One has a schedule and the other has none.
    #[error("cannot --merge a run with a schedule and one without: they are not one run")]
    ScheduleAndNone,
    /// A rate run and a closed loop.
    #[error("cannot --merge a rate run with a closed-loop run: they are not one run")]
    LoadModels,
}

impl RunHeader {
    /// Folds in the header of another file of the same run (another
    /// machine): threads and cores add, target addresses unite, the
    /// earliest start wins, and the offered loads add, since the machines
    /// offered them together. Refuses to mix load models.
    pub fn merge(&mut self, other: &RunHeader) -> Result<(), NotOneRun> {
        let add = |a: &Option<Schedule>, b: &Option<Schedule>| match (a, b) {
            (None, None) => Ok(None),
            (Some(a), Some(b)) => a.add(b).map(Some).ok_or(NotOneRun::Schedules),
            _ => Err(NotOneRun::ScheduleAndNone),
        };
        self.config.load = match (&self.config.load, &other.config.load) {
            (
                Load::Rate {
                    rate: a,
                    connections: c,
                    schedule: s,
                },
                Load::Rate {
                    rate: b,
                    connections: d,
                    schedule: t,
                },
            ) => Load::Rate {
                rate: a + b,
                connections: c + d,
                schedule: add(s, t)?,
            },
            (
                Load::Closed {
                    connections: c,
                    schedule: s,
                },
                Load::Closed {
                    connections: d,
                    schedule: t,
                },
            ) => Load::Closed {
                connections: c + d,
                schedule: add(s, t)?,
            },
            _ => return Err(NotOneRun::LoadModels),
        };
        self.merge_environment(other);
        Ok(())
    }

    /// Folds in where another part of the run ran: threads and cores add,
    /// target addresses unite, the earliest start wins.
    pub fn merge_environment(&mut self, other: &RunHeader) {
        self.env.threads += other.env.threads;
        self.env.cores += other.env.cores;
        for a in &other.env.target_addrs {
            if !self.env.target_addrs.contains(a) {
                self.env.target_addrs.push(a.clone());
            }
        }
        self.measure_start_unix_ns = self.measure_start_unix_ns.min(other.measure_start_unix_ns);
    }
}

impl RunFooter {
    /// The footer of several files of one run: the longest duration and
    /// elapsed time, warm-ups added, interrupted if any part was. Every
    /// file's worker threads, or none when a file does not say (an older
    /// pelt, another platform): a partial list would report "busiest of 2
    /// threads" for a run of 4, whose unmeasured threads may have been the
    /// busy ones (the engine keeps all or nothing for the same reason).
    pub fn merge(&self, other: &RunFooter) -> RunFooter {
        RunFooter {
            duration_ns: self.duration_ns.max(other.duration_ns),
            elapsed_ns: self.elapsed_ns.max(other.elapsed_ns),
            warmup_requests: self.warmup_requests + other.warmup_requests,
            interrupted: self.interrupted || other.interrupted,
            // Parts stop on their own (a signal to one machine, a rule
            // judged on one part's seconds): the first part's cause.
            stopped_by: self.stopped_by.clone().or_else(|| other.stopped_by.clone()),
            worker_load: match self.worker_load.is_empty() || other.worker_load.is_empty() {
                true => Vec::new(),
                false => [&self.worker_load[..], &other.worker_load[..]].concat(),
            },
            // The same server seen from several machines: the first
            // file's, else whichever part saw one.
            server_software: self
                .server_software
                .clone()
                .or_else(|| other.server_software.clone()),
        }
    }
}

/// Where and with what a run was made: enough to reproduce or distrust it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// The pelt version that made the run.
    pub pelt_version: String,
    /// Operating system (`std::env::consts::OS`).
    pub os: String,
    /// CPU architecture (`std::env::consts::ARCH`).
    pub arch: String,
    /// Cores available to the process.
    pub cores: usize,
    /// Worker threads used.
    pub threads: usize,
    /// Resolved addresses of each target host.
    pub target_addrs: Vec<String>,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// The network interface the first target's address routes through,
    /// when the system reports its speed (loopback reports none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<Link>,
    /// Whether the engine that ran was built without optimisations
    /// (`debug_assertions` on: `cargo build` without `--release`, or a
    /// program embedding pelt built so). Its figures then include the
    /// client's own, much larger, overhead; reports warn
    /// ([`crate::Warning::DebugBuild`]). Written only when true: files
    /// without it were made by an optimised build.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub debug_build: bool,
}

/// A network interface and its speed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// Its name (`eth0`).
    pub interface: String,
    /// Megabits per second (`/sys/class/net/IFACE/speed`).
    pub speed_mbps: u64,
}

/// How busy one of pelt's worker threads was while it sent (warm-up
/// included; the wait for the last responses after sending stopped is
/// not, being mostly idle), from the kernel's scheduler
/// statistics: the share of the wall-clock time it ran on a CPU, and the
/// share it was ready to run but waited for one. A thread that wanted a
/// CPU nearly all the time set the pace of its connections: the figures
/// then describe the client as much as the server.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ThreadLoad {
    /// Share of the wall-clock time the thread ran on a CPU, 0 to 1.
    pub on_cpu: f64,
    /// Share of the wall-clock time the thread was ready to run but waited for a CPU, 0 to 1.
    pub waiting: f64,
}

impl ThreadLoad {
    /// The share of the run the thread wanted a CPU.
    pub fn demand(&self) -> f64 {
        self.on_cpu + self.waiting
    }
}
