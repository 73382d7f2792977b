//! What a history holds: one row per run, its tags and its results file.

use pelt_core::RunSummary;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

/// A run's summary figures, kept as columns so that they can be queried,
/// filtered and drawn without reading any results file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figures {
    /// Requests planned (measured), as in `requests.planned`.
    pub requests: u64,
    /// Requests whose first byte was written (the rest never left pelt).
    pub sent: u64,
    /// Rate runs: the share of planned requests sent (`pelt compare`'s
    /// "sent"); `None` for closed loops.
    pub sent_share: Option<f64>,
    /// Requests answered with a status in 2xx/3xx.
    pub successes: u64,
    /// Failed requests: no response, or a status outside 2xx/3xx (the
    /// one meaning of failed, `pelt_core::failure`).
    pub failed: u64,
    /// The share of requests that failed (`failed / requests`): `pelt
    /// compare`'s "failed" and `--assert failed`.
    pub failed_share: f64,
    /// Requests sent per second (the rate `--assert rate` checks).
    pub rate: f64,
    /// Successful responses per second, to the last response.
    pub throughput: f64,
    /// The median (50th percentile) response time, nanoseconds; this and
    /// the other percentiles and maximum are `None` when no request was
    /// timed.
    pub p50_ns: Option<u64>,
    /// The 90th percentile response time, nanoseconds.
    pub p90_ns: Option<u64>,
    /// The 99th percentile response time, nanoseconds.
    pub p99_ns: Option<u64>,
    /// The 99.9th percentile response time, nanoseconds.
    pub p999_ns: Option<u64>,
    /// The slowest response time, nanoseconds.
    pub max_ns: Option<u64>,
    /// The share of the run pelt's busiest worker thread wanted a CPU
    /// (the client's health); `None` where it was not measured.
    pub client_busy: Option<f64>,
    /// A sweep's capacity, requests per second (`pelt sweep`); `None`
    /// for runs, and for a sweep that found none.
    pub capacity: Option<f64>,
}

impl Figures {
    /// The figures of `s`, each computed as the reports and `pelt
    /// compare` compute it, so a stored figure and a report agree.
    pub fn of(s: &RunSummary) -> Figures {
        let h = &s.total.response;
        let at = |p: f64| (!h.is_empty()).then(|| pelt_core::rank::percentile(h, p));
        Figures {
            requests: s.total.requests,
            sent: s.sent(),
            sent_share: (s.is_rate_mode() && s.planned() > 0)
                .then(|| s.sent() as f64 / s.planned() as f64),
            successes: s.total.successes,
            failed: s.total.failed(),
            failed_share: s.total.failed_share(),
            rate: s.sent_rate(),
            throughput: s.throughput(),
            p50_ns: at(50.0),
            p90_ns: at(90.0),
            p99_ns: at(99.0),
            p999_ns: at(99.9),
            max_ns: (!h.is_empty()).then(|| h.max()),
            client_busy: s.busiest_thread().map(|t| t.demand()),
            capacity: None,
        }
    }

    /// One metric's value; `None` when the run has none (no responses).
    pub fn get(&self, m: Metric) -> Option<f64> {
        let ns = |v: Option<u64>| v.map(|v| v as f64);
        match m {
            Metric::P50 => ns(self.p50_ns),
            Metric::P90 => ns(self.p90_ns),
            Metric::P99 => ns(self.p99_ns),
            Metric::P999 => ns(self.p999_ns),
            Metric::Max => ns(self.max_ns),
            Metric::Rate => Some(self.rate),
            Metric::Throughput => Some(self.throughput),
            Metric::Failed => Some(self.failed_share),
            Metric::Sent => self.sent_share,
            Metric::ClientBusy => self.client_busy,
            Metric::Capacity => self.capacity,
        }
    }
}

/// A figure that can be followed over runs (`pelt history trend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// The median response time (`p50`).
    P50,
    /// The 90th percentile response time (`p90`).
    P90,
    /// The 99th percentile response time (`p99`).
    P99,
    /// The 99.9th percentile response time (`p99.9`).
    P999,
    /// The slowest response time (`max`).
    Max,
    /// Requests sent per second (`rate`).
    Rate,
    /// Successful responses per second (`throughput`).
    Throughput,
    /// The share of requests that failed (`failed`).
    Failed,
    /// Rate runs: the share of planned requests sent (`sent`).
    Sent,
    /// The busiest worker thread's share of the run wanting a CPU
    /// (`client_busy`).
    ClientBusy,
    /// A sweep's capacity (rows of kind `sweep` only).
    Capacity,
}

/// How a metric's values read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A duration, nanoseconds.
    Nanos,
    /// A rate, per second.
    PerSecond,
    /// A share, 0 to 1.
    Ratio,
}

impl Metric {
    /// Every metric, in the order they are listed to the user.
    pub const ALL: [Metric; 11] = [
        Metric::P50,
        Metric::P90,
        Metric::P99,
        Metric::P999,
        Metric::Max,
        Metric::Rate,
        Metric::Throughput,
        Metric::Failed,
        Metric::Sent,
        Metric::ClientBusy,
        Metric::Capacity,
    ];

    /// The name used on the command line, in `--assert` and in `pelt
    /// compare`.
    pub fn name(self) -> &'static str {
        match self {
            Metric::P50 => "p50",
            Metric::P90 => "p90",
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
            Metric::Max => "max",
            Metric::Rate => "rate",
            Metric::Throughput => "throughput",
            Metric::Failed => "failed",
            Metric::Sent => "sent",
            Metric::ClientBusy => "client_busy",
            Metric::Capacity => "capacity",
        }
    }

    /// How the metric's values read (for formatting them).
    pub fn unit(self) -> Unit {
        match self {
            Metric::Rate | Metric::Throughput | Metric::Capacity => Unit::PerSecond,
            Metric::Failed | Metric::Sent | Metric::ClientBusy => Unit::Ratio,
            _ => Unit::Nanos,
        }
    }

    /// Whether a larger value is a worse one.
    pub fn higher_is_worse(self) -> bool {
        !matches!(
            self,
            Metric::Rate | Metric::Throughput | Metric::Sent | Metric::Capacity
        )
    }
}

impl std::str::FromStr for Metric {
    type Err = String;

    fn from_str(s: &str) -> Result<Metric, String> {
        let s = s.trim().to_ascii_lowercase();
        let s = match s.as_str() {
            "p999" => "p99.9",
            "client-busy" => "client_busy",
            // The older words for the failed share, still read.
            "errors" | "error" | "error_ratio" | "failed_share" => "failed",
            other => other,
        };
        Metric::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
                format!("unknown metric '{s}'; use one of {}", names.join(", "))
            })
    }
}

/// Where a run's results file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Results {
    /// Kept whole in the history.
    Blob(Vec<u8>),
    /// Kept whole in the history, read from a temporary file as it is
    /// stored: a run's results file, spooled to disk while it ran so that
    /// memory does not grow with the run's length. Only recorded, never
    /// read back (a stored run's file comes back as [`Results::Blob`]).
    Spool(Spool),
    /// Left where the user saved it (`-o FILE`): an absolute path.
    File(String),
    /// Not kept (a run recorded without its file).
    None,
}

/// A results file in a temporary file, typically one created unlinked
/// (`tempfile::tempfile`): it has no name, so the system removes it
/// however the process ends, and it is read in chunks as it is stored.
#[derive(Debug, Clone)]
pub struct Spool {
    file: Arc<File>,
    len: u64,
}

impl Spool {
    /// The file's bytes from its start to its end as they are now.
    pub fn new(mut file: File) -> std::io::Result<Spool> {
        let len = file.seek(SeekFrom::End(0))?;
        Ok(Spool {
            file: Arc::new(file),
            len,
        })
    }

    /// Its length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A reader of every byte, from the start (a clone shares the file:
    /// one reader at a time).
    pub fn reader(&self) -> std::io::Result<impl Read + '_> {
        let mut file = &*self.file;
        file.seek(SeekFrom::Start(0))?;
        Ok(file.take(self.len))
    }

    /// Reads it whole: for a caller that needs the bytes in memory.
    pub fn to_vec(&self) -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(usize::try_from(self.len).unwrap_or(0));
        self.reader()?.read_to_end(&mut bytes)?;
        Ok(bytes)
    }
}

/// The same spool, not the same bytes: files are not compared.
impl PartialEq for Spool {
    fn eq(&self, other: &Spool) -> bool {
        Arc::ptr_eq(&self.file, &other.file)
    }
}

impl Eq for Spool {}

/// What kind of thing a row records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `pelt run`.
    Run,
    /// One run of `pelt experiment`.
    Experiment,
    /// A saved run imported from the data folder.
    Import,
    /// One shard of a sharded run (`pelt run --shard I/N`), tagged with
    /// its run id and shard: a part, so never a baseline.
    Shard,
    /// A sharded run's shards merged (`pelt report --merge --record`).
    Merged,
    /// A `pelt sweep`: its capacity (the `capacity` column) and the
    /// figures of the step that set it; its JSON report is the sweep's.
    Sweep,
    /// One step of a sweep, tagged `sweep=ID` and `step=N`: a run at a
    /// rate the sweep chose, so never a baseline.
    Step,
}

impl Kind {
    /// The name stored in the `kind` column and shown in lists.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Experiment => "experiment",
            Kind::Import => "import",
            Kind::Shard => "shard",
            Kind::Merged => "merged",
            Kind::Sweep => "sweep",
            Kind::Step => "step",
        }
    }

    fn parse(s: &str) -> Kind {
        match s {
            "experiment" => Kind::Experiment,
            "import" => Kind::Import,
            "shard" => Kind::Shard,
            "merged" => Kind::Merged,
            "sweep" => Kind::Sweep,
            "step" => Kind::Step,
            _ => Kind::Run,
        }
    }
}

/// A run to record. Its parts must already be free of secrets: the store
/// keeps what it is given (see [`crate::Redactor`]).
///
/// The summary is borrowed where the caller still needs it (a run's
/// summary is printed and judged after it is recorded): with many
/// targets it holds a histogram per target, and a copy of it only for
/// the history was most of the history's memory.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    /// What kind of thing the row records.
    pub kind: Kind,
    /// The run's label (`--label`), if any.
    pub label: Option<String>,
    /// The run's tags (`--tag KEY=VALUE`), as key and value.
    pub tags: Vec<(String, String)>,
    /// The redacted summary: configuration, environment and figures
    /// (`Cow::Borrowed(&summary)`, or owned).
    pub summary: Cow<'a, RunSummary>,
    /// The run's JSON report, as `--format json` printed it.
    pub report_json: String,
    /// Where the run's results file is: kept, referenced or not kept.
    pub results: Results,
    /// A sweep's capacity, requests per second (kind `sweep`).
    pub capacity: Option<f64>,
}

/// One recorded run as listed: everything but the large parts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRow {
    /// The run's id in this history (what `pelt history show ID` takes).
    pub id: i64,
    /// When the run started, ms since the Unix epoch.
    pub started_ms: i64,
    /// When it was recorded, ms since the Unix epoch.
    pub recorded_ms: i64,
    /// The row's kind, by name ([`Kind::name`]).
    pub kind: &'static str,
    /// The run's label, if any.
    pub label: Option<String>,
    /// The run's tags, as key and value.
    pub tags: Vec<(String, String)>,
    /// The first target's URL (secrets replaced).
    pub url: String,
    /// The first target's HTTP method.
    pub method: String,
    /// How many targets the run had.
    pub targets: u64,
    /// `closed` or `rate`.
    pub mode: String,
    /// Connections the run opened.
    pub connections: u64,
    /// Rate runs: the rate asked for, requests per second.
    pub offered_rate: Option<f64>,
    /// Measured seconds.
    pub duration_s: f64,
    /// The run's summary figures.
    pub figures: Figures,
    /// False when the run was rebuilt from a results file without a footer.
    pub complete: bool,
    /// Whether Ctrl-C, a signal or an `--abort-on` rule stopped the run
    /// before its stop condition.
    pub interrupted: bool,
    /// The version of pelt that made the run.
    pub pelt_version: String,
    /// The results file, when referenced rather than kept.
    pub results_path: Option<String>,
}

impl RunRow {
    pub(crate) fn kind_of(s: &str) -> &'static str {
        Kind::parse(s).name()
    }
}

/// One recorded run in full.
#[derive(Debug, Clone)]
pub struct StoredRun {
    /// The run as listed.
    pub row: RunRow,
    /// The run's configuration, as JSON (secrets replaced).
    pub config_json: String,
    /// The environment the run was made in, as JSON.
    pub env_json: String,
    /// The run's JSON report, as `--format json` printed it.
    pub report_json: String,
    /// The run's results file, kept or referenced.
    pub results: Results,
    /// A scenario run's steps, as recorded (schema 3); empty for other
    /// runs and runs recorded before.
    pub steps: Vec<StepFigures>,
}

/// One step of a scenario run (`--scenario`) as the history keeps it:
/// the Steps table's figures, so they outlive the results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepFigures {
    /// `flow/step` (`once/step` for a once step).
    pub name: String,
    /// Requests the step made.
    pub requests: u64,
    /// Of them failed, by the one rule (`check` and `extract` included).
    pub failed: u64,
    /// Flows that failed before reaching it.
    pub skipped: u64,
    /// Median response time from the step's intended start; `None`
    /// without a timed request.
    pub p50_ns: Option<u64>,
    /// 99th percentile of the same.
    pub p99_ns: Option<u64>,
}

impl StepFigures {
    /// The steps of a scenario run, in the file's order; none for a run
    /// of plain targets.
    pub fn of(s: &RunSummary) -> Vec<StepFigures> {
        let Some(sc) = &s.config.scenario else {
            return Vec::new();
        };
        let empty = pelt_core::TargetStats::default();
        let row = |i: usize| s.total.targets.get(i).unwrap_or(&empty);
        (0..sc.steps.min(sc.names.len()))
            .map(|i| {
                let t = row(i);
                let p = |q: f64| match t.response() {
                    Some(h) if !h.is_empty() => Some(pelt_core::rank::percentile(h, q)),
                    _ => None,
                };
                StepFigures {
                    name: sc.names[i].clone(),
                    requests: t.requests(),
                    failed: t.failed(),
                    skipped: sc.skipped(i, |j| row(j).failed()),
                    p50_ns: p(50.0),
                    p99_ns: p(99.0),
                }
            })
            .collect()
    }
}

/// Which runs a query is about. Every condition given must hold.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only runs with these ids, when not empty.
    pub ids: Vec<i64>,
    /// The first target's URL, exactly (as stored: secrets replaced).
    pub url: Option<String>,
    /// `(key, Some(value))` for a tag with that value, `(key, None)` for
    /// any value.
    pub tags: Vec<(String, Option<String>)>,
    /// The run's label, exactly.
    pub label: Option<String>,
    /// Runs started at or after this time, ms since the Unix epoch.
    pub since_ms: Option<i64>,
    /// Runs started before this time.
    pub until_ms: Option<i64>,
    /// Only the newest N of the runs that match.
    pub last: Option<u64>,
    /// Leave out rows of these kinds (shards, from baselines and trends).
    pub without: Vec<Kind>,
    /// Only rows of these kinds, when not empty (sweeps, for a trend of
    /// capacity).
    pub kinds: Vec<Kind>,
}
