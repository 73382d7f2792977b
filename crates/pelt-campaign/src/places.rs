//! Where pelt keeps what it saves, as a value: the caller decides (the
//! `pelt` binary reads `PELT_DATA_DIR`, `XDG_DATA_HOME`, `HOME`,
//! `PELT_HISTORY` and `PELT_NO_HISTORY`; a library user names folders, or
//! leaves them unset and nothing is saved behind its back).

use crate::results::{saved_runs, utc_stamp};
use crate::{Error, Result};
use std::path::PathBuf;

/// The data directory and the default history.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Places {
    /// The data directory: saved runs (`runs/`), `sweeps/`,
    /// `experiments/`, `calibrations/`, the default `history.db`, and the
    /// history's spooled copy of a running run. `None`: nothing is kept
    /// there, and what needs it says so.
    pub data_dir: Option<PathBuf>,
    /// The history used when none is named (`PELT_HISTORY` for the
    /// binary): a SQLite file or a `postgres://` URL.
    pub history: Option<String>,
    /// Record nothing unless a history is named (`PELT_NO_HISTORY` for
    /// the binary, set where shards run).
    pub no_history: bool,
}

impl Places {
    /// Where saved runs are kept: the data directory's `runs/`.
    pub fn runs_dir(&self) -> Option<PathBuf> {
        self.data_dir.as_ref().map(|d| d.join("runs"))
    }

    /// The newest saved run.
    pub fn last_run(&self) -> Result<PathBuf> {
        let dir = self.runs_dir().ok_or_else(|| {
            Error::other(
                "cannot tell where runs are saved: no data directory (PELT_DATA_DIR or HOME)",
            )
        })?;
        saved_runs(&dir).pop().ok_or_else(|| {
            Error::other(format!(
                "no saved runs in {}; run pelt run first, or give a results file",
                dir.display()
            ))
        })
    }

    /// A new folder in the data directory's `kind` folder (`sweeps`,
    /// `experiments`, `calibrations`), named by the time now (UTC) and, if
    /// given, `name`: folders that sort by time.
    pub fn dated_folder(&self, kind: &str, name: Option<&str>) -> Result<PathBuf> {
        let data = self.data_dir.as_ref().ok_or_else(|| {
            Error::other(format!(
                "cannot tell where to keep {kind}: give -o DIR, or set PELT_DATA_DIR or HOME"
            ))
        })?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let stamp = utc_stamp(now);
        Ok(data.join(kind).join(match name {
            Some(name) => format!("{stamp}-{name}"),
            None => stamp,
        }))
    }
}
