//! The workspace's one made-up run: a [`RunSummary`] (or its results
//! file) with figures a test chooses, for tests of what reads runs
//! (reports, charts, comparisons) that need no real load. Built the way
//! pelt builds a run's summary and rebuilds a saved one
//! ([`SummaryBuilder`]), so the summary equals the file's.
//!
//! ```
//! let mut a = pelt_testkit::summary::Synthetic::default();
//! a.base_ns = 2_000_000;
//! let run = a.summary();
//! assert_eq!(run.total.requests, 3 * 200);
//! ```

use pelt_core::{
    Environment, ErrorKind, Load, Recorder, ResultsWriter, RunConfig, RunFooter, RunHeader,
    RunSummary, Sample, Stop, SummaryBuilder, Target, ThreadLoad, Url,
};
use std::path::Path;
use std::time::Duration;

const SEC: u64 = 1_000_000_000;

/// What a made-up run is: every field has a default
/// ([`Synthetic::default`]), a test changes what it varies.
///
/// Request `i` of each second goes to target `i % urls.len()`, is sent
/// `lag_ns` after its planned time and takes `base_ns + (i % 97) *
/// spread_ns + second * (i % 13) * slowdown_ns` (plus `tail.1` for every
/// `tail.0`-th request) from its first byte written to its last byte
/// read.
#[derive(Debug, Clone)]
pub struct Synthetic {
    /// The targets' URLs.
    pub urls: Vec<String>,
    /// A header every target sends.
    pub header: Option<(String, String)>,
    /// A rate run (at `per_second`, 50 connections), or a closed loop.
    pub rate: bool,
    /// The closed loop's connections.
    pub connections: u32,
    /// Seconds measured.
    pub seconds: u64,
    /// Requests each second.
    pub per_second: u64,
    /// The service time's floor, nanoseconds.
    pub base_ns: u64,
    /// How far service times spread above the floor, per step of `i % 97`.
    pub spread_ns: u64,
    /// How much slower the run gets each second, per step of `i % 13`
    /// (0: steady).
    pub slowdown_ns: u64,
    /// Every `.0`-th request takes `.1` nanoseconds longer (`None`: no tail).
    pub tail: Option<(u64, u64)>,
    /// Send lag: from a request's planned time to its first byte written.
    pub lag_ns: u64,
    /// Every this-many-th request (the first of each second included) is
    /// answered 503; 0 for none.
    pub every_503: u64,
    /// A few timeouts and connection resets (about 1 % each), with
    /// examples of their messages.
    pub transport_errors: bool,
    /// Text put in the failures' example messages.
    pub message: String,
    /// When the run started (Unix milliseconds, a whole second).
    pub started_unix_ms: u64,
    /// Requests sent during warm-up.
    pub warmup_requests: u64,
    /// How busy each worker thread was (empty: not known).
    pub worker_load: Vec<ThreadLoad>,
    /// Stopped before its end (Ctrl-C): the footer says so.
    pub interrupted: bool,
}

impl Default for Synthetic {
    /// Three seconds of a rate run at 200 req/s to one URL: about 1.5 ms
    /// per response, a 90 ms tail, a 503 in 50, a few timeouts and
    /// resets.
    fn default() -> Synthetic {
        Synthetic {
            urls: vec!["http://127.0.0.1:8080/".into()],
            header: None,
            rate: true,
            connections: 8,
            seconds: 3,
            per_second: 200,
            base_ns: 500_000,
            spread_ns: 20_000,
            slowdown_ns: 0,
            tail: Some((199, 90_000_000)),
            lag_ns: 10_000,
            every_503: 50,
            transport_errors: true,
            message: String::new(),
            started_unix_ms: 1_700_000_000_000,
            warmup_requests: 0,
            worker_load: Vec::new(),
            interrupted: false,
        }
    }
}

impl Synthetic {
    /// A steady run with no failure and no tail: every response takes
    /// `base_ns` plus up to 1.9 ms, as [`Synthetic::default`] otherwise.
    pub fn clean() -> Synthetic {
        Synthetic {
            tail: None,
            every_503: 0,
            transport_errors: false,
            ..Synthetic::default()
        }
    }

    /// The run's configuration.
    pub fn config(&self) -> RunConfig {
        let targets = self
            .urls
            .iter()
            .map(|u| {
                let mut t = Target::get(Url::parse(u).expect("a synthetic run's URL"));
                if let Some((name, value)) = &self.header {
                    t.headers.push((name.clone(), value.clone()));
                }
                t
            })
            .collect();
        let load = if self.rate {
            Load::rate_of(self.per_second as f64, 50)
        } else {
            Load::closed(self.connections)
        };
        let stop = Stop {
            requests: None,
            duration: Some(Duration::from_secs(self.seconds)),
        };
        RunConfig::new(targets, load, stop)
    }

    /// The results file's header.
    pub fn run_header(&self) -> RunHeader {
        RunHeader {
            config: self.config(),
            env: Environment {
                pelt_version: "0.1.0".into(),
                os: "linux".into(),
                arch: "x86_64".into(),
                cores: 2,
                threads: 1,
                target_addrs: vec!["127.0.0.1:8080".into()],
                started_unix_ms: self.started_unix_ms,
                link: None,
                debug_build: false,
            },
            measure_start_unix_ns: self.started_unix_ms * 1_000_000,
            measure_from_ns: 0,
            shard: None,
            late_start_ns: 0,
        }
    }

    /// The results file's footer: sending stopped on time, the last
    /// response came 100 ms later.
    pub fn footer(&self) -> RunFooter {
        RunFooter {
            duration_ns: self.seconds * SEC,
            elapsed_ns: self.seconds * SEC + 100_000_000,
            warmup_requests: self.warmup_requests,
            interrupted: self.interrupted,
            stopped_by: None,
            worker_load: self.worker_load.clone(),
            server_software: None,
        }
    }

    /// Each second's recorder, with its Unix second.
    pub fn seconds(&self) -> Vec<(u64, Recorder)> {
        let first = self.started_unix_ms / 1000;
        let targets = self.urls.len().max(1) as u64;
        (0..self.seconds)
            .map(|sec| {
                let mut r = Recorder::new();
                r.record_connection(200_000, None);
                for i in 0..self.per_second {
                    let intended = sec * SEC + i * (SEC / self.per_second);
                    let service = self.base_ns
                        + (i % 97) * self.spread_ns
                        + sec * (i % 13) * self.slowdown_ns;
                    let tail = match self.tail {
                        Some((every, ns)) if i % every == 0 => ns,
                        _ => 0,
                    };
                    let sent = intended + self.lag_ns;
                    let failing = self.every_503 > 0 && i % self.every_503 == 0;
                    let mut s = Sample {
                        target: (i % targets) as u32,
                        intended,
                        sent: Some(sent),
                        first_byte: Some(sent + service / 2),
                        done: sent + service + tail,
                        status: if failing { 503 } else { 200 },
                        bytes_in: 250,
                        body_bytes: 100,
                        bytes_out: 80,
                        reused: i > 0,
                        error: None,
                    };
                    if self.transport_errors && i % 101 == 7 {
                        s.error = Some(ErrorKind::Timeout);
                        s.status = 0;
                        r.add_example(ErrorKind::Timeout, format!("timed out {}", self.message));
                    } else if self.transport_errors && i % 103 == 9 {
                        s.error = Some(ErrorKind::Reset);
                        s.status = 0;
                        r.add_example(ErrorKind::Reset, format!("reset by peer {}", self.message));
                    }
                    r.record(&s);
                }
                (first + sec, r)
            })
            .collect()
    }

    /// The run's summary, as pelt builds it (and `pelt report` rebuilds
    /// it from [`Synthetic::write`]'s file).
    pub fn summary(&self) -> RunSummary {
        let mut b = SummaryBuilder::new(self.run_header(), None);
        for (second, rec) in self.seconds() {
            b.add(second, &rec);
        }
        b.finish(Some(&self.footer()))
    }

    /// Writes the run as a results file at `path` (redacted, as pelt
    /// writes every file).
    pub fn write(&self, path: &Path) {
        let file = std::fs::File::create(path)
            .unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
        let mut w = ResultsWriter::new(std::io::BufWriter::new(file), &self.run_header())
            .expect("write a results file's header");
        for (second, rec) in self.seconds() {
            w.interval(second, &rec).expect("write a second");
        }
        use std::io::Write;
        w.finish(&self.footer())
            .expect("write the footer")
            .flush()
            .expect("flush the results file");
    }
}
