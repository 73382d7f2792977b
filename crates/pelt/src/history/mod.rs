//! `pelt history` and `--baseline`: the history's commands (recording is
//! pelt-campaign's [`pelt_campaign::history`]).

pub mod baseline;
pub mod command;

use crate::flags::Location;
use crate::UserError;
use pelt_store::Store;

/// Opens the history `--history` names (or the default one).
pub fn open(loc: &Location) -> Result<Store, UserError> {
    Ok(pelt_campaign::history::open(loc.history.as_deref())?)
}
