//! The campaign's one error type.

use pelt_core::{ConfigError, Redactor};
use pelt_engine::EngineError;

/// Why a run or a campaign of runs could not be made. A failed request
/// is never one of these: it is data in the run's summary.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration was refused (`RunConfig::validate`); a command line
    /// rewords it in its flags.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// The engine could not start the run (a login failed, no event loop);
    /// `secrets` keeps the run's secrets out of the message.
    #[error("{}", secrets.text(&error.to_string()))]
    Engine {
        /// The engine's error.
        error: EngineError,
        /// The run's secrets, replaced in the message.
        secrets: Box<Redactor>,
    },
    /// [`Until::parse`](crate::Until::parse) was given text that is not a
    /// percentile and a width (the text, escaped).
    #[error("invalid stopping rule (`Keep::until`) '{0}': give a percentile and a width, like 'p99 ±2%'")]
    Until(String),
    /// A sweep's first rate (`SweepSpec::plan.start`) is below 1 or above
    /// its highest (`plan.max`).
    #[error("a sweep's `plan.start` {start} must be at least 1 and at most its `plan.max` {max}")]
    StartRate {
        /// `plan.start`.
        start: f64,
        /// `plan.max`.
        max: f64,
    },
    /// Runs that do not measure the same work as the reference, refused
    /// because the caller's `allow_mismatch` is off.
    #[error("{}", pelt_analyze::alike::refusal(&against.to_string(), mismatches, if *narrow {
        "`allow_mismatch: true` (or narrow the runs by url, tag or label)"
    } else {
        "`allow_mismatch: true`"
    }))]
    Mismatch {
        /// The run (or runs) the others were compared with.
        against: Against,
        /// The runs that differ, and how.
        mismatches: Vec<pelt_analyze::alike::Mismatch>,
        /// Whether the runs came from a query that can be narrowed.
        narrow: bool,
    },
    /// Paired comparison (`compare::Options::paired`) with unequal sides.
    #[error("`paired` needs as many B runs as A runs (got {a} and {b}); set `paired: false` to compare them as independent sets")]
    Paired {
        /// A's runs.
        a: usize,
        /// B's runs.
        b: usize,
    },
    /// pelt-history's `Spec::parse` (a baseline) was given text that is
    /// not `tag:`, `label:` or `last:` (the text, escaped).
    #[error("invalid baseline (`Spec::parse`) '{0}': use tag:KEY[=VALUE], label:NAME or last:N, like tag:release-1.4")]
    Baseline(String),
    /// No recorded run (or sweep) matches a baseline (its description).
    #[error("no recorded {} matches the baseline {spec}{detail}{}", recorded.noun(), recorded.hint(*last))]
    NoBaseline {
        /// What was looked for.
        recorded: Recorded,
        /// The baseline, described.
        spec: String,
        /// What else the runs had to be (" with the same work ..."), or "".
        detail: String,
        /// Whether the baseline was `last:N` (counted per URL).
        last: bool,
    },
    /// A run's latency (`Options::latency`) cannot be read from the
    /// history: its name and why.
    #[error("`latency` {latency}: {why}; or compare response_time, which the history keeps for every run")]
    Latency {
        /// The latency's name.
        latency: String,
        /// Why it cannot be read.
        why: String,
    },
    /// No history was named (`Places::history`) and there is no data
    /// directory to keep one in.
    #[error("cannot tell where the history is kept: set PELT_DATA_DIR or HOME, or give `Places::history`")]
    NoHistoryPlace,
    /// The data directory for the default history cannot be made.
    #[error("cannot create {dir}: {why}; set PELT_DATA_DIR to a writable folder, or give `Places::history`")]
    HistoryDir {
        /// The folder.
        dir: String,
        /// Why not.
        why: String,
    },
    /// Recording was asked for, but PELT_NO_HISTORY is set
    /// (`Places::no_history`) and no history (`RecordSpec::history`) was named.
    #[error("PELT_NO_HISTORY is set (`Places::no_history`), so there is no history to record in; give `RecordSpec::history`, or unset PELT_NO_HISTORY")]
    NoHistoryToRecord,
    /// A recorded run's results file cannot be read: the run's id, the
    /// file (when kept outside the history) and why; `None` when the run
    /// was recorded without one.
    #[error("run {id}'s results file {}; the history keeps its figures and JSON report (`report_json`)", match why {
        Some(why) => format!("{}cannot be read ({why})", file.as_ref().map_or(String::new(), |f| format!("{f} "))),
        None => "was not recorded".to_string(),
    })]
    NoResults {
        /// The run's id.
        id: i64,
        /// The results file's path, when the history points to one.
        file: Option<String>,
        /// Why it cannot be read, or `None` if it was never recorded.
        why: Option<String>,
    },
    /// Anything else, said for a person: what is wrong and how to fix it.
    #[error("{0}")]
    Other(String),
}

impl Error {
    /// [`Error::Other`] from any text.
    pub fn other(message: impl Into<String>) -> Error {
        Error::Other(message.into())
    }
}

/// What refused runs were compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Against {
    /// A run, as the caller names it (a file, `#12`, "the newest run").
    Run(String),
    /// The runs a baseline selected (its description).
    Baseline(String),
}

impl std::fmt::Display for Against {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Against::Run(name) => f.write_str(name),
            Against::Baseline(spec) => write!(f, "the runs compared (baseline {spec})"),
        }
    }
}

/// What a baseline looked for in the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// Runs.
    Run,
    /// Sweeps.
    Sweep,
    /// Sweeps that found a capacity.
    Capacity,
}

impl Recorded {
    /// The word for one.
    pub fn noun(self) -> &'static str {
        match self {
            Recorded::Run => "run",
            Recorded::Sweep => "sweep",
            Recorded::Capacity => "sweep with a capacity",
        }
    }

    /// How `last:N` counts, when the baseline was one.
    pub fn hint(self, last: bool) -> &'static str {
        match (self, last) {
            (Recorded::Run, true) => " (last:N counts runs of the same URL)",
            (Recorded::Sweep, true) => " (last:N counts sweeps of the same URL)",
            _ => "",
        }
    }
}

/// A campaign's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
