//! Why a scenario file cannot be run: always a file, a line and what to
//! do, so the binary prints one line and exits 2 before any load.

use std::fmt;
use std::path::{Path, PathBuf};

/// A scenario file (or a file it names) that cannot be run, found while
/// compiling it, before any load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file at fault: the scenario, a feed, a HAR.
    pub file: PathBuf,
    /// The 1-based line in `file`, when one is at fault.
    pub line: Option<usize>,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl ScenarioError {
    /// An error at `line` of `file`.
    pub fn at(file: &Path, line: Option<usize>, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            file: file.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// The 1-based line of byte offset `at` in `text`.
pub(crate) fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
