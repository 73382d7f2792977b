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
