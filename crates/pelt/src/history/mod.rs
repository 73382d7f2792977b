//! `pelt history` and `--baseline`: the history's commands (recording is
//! pelt-history's record module, [`pelt_history`]).

pub mod baseline;
pub mod command;

use crate::flags::Location;
use crate::flags::UserError;
use pelt_store::Store;

/// Opens the history `--history` names (or the default one), saying what
/// its first opening imported.
pub fn open(loc: &Location) -> Result<Store, UserError> {
    let opened = pelt_history::open(loc.history.as_deref(), &crate::flags::places())?;
    crate::output::say_notes(opened.notes);
    Ok(opened.store)
}
