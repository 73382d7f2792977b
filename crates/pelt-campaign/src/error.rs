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

/// A campaign's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
