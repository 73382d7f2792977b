//! Where pelt keeps what it saves, read once from the environment: the
//! libraries take it as a value ([`pelt_campaign::Places`]).

use pelt_campaign::Places;
use std::path::PathBuf;

/// `PELT_DATA_DIR`, else `$XDG_DATA_HOME/pelt`, else
/// `~/.local/share/pelt`; `PELT_HISTORY`; `PELT_NO_HISTORY`. An empty
/// variable counts as unset.
pub fn places() -> Places {
    let env = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    let data_dir = env("PELT_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| env("XDG_DATA_HOME").map(|d| PathBuf::from(d).join("pelt")))
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".local/share/pelt")));
    Places {
        data_dir,
        history: env("PELT_HISTORY").map(|h| h.to_string_lossy().into_owned()),
        no_history: env("PELT_NO_HISTORY").is_some(),
    }
}
