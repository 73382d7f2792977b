//! `pelt history` and `--baseline`: the history's commands (recording is
//! pelt-campaign's [`pelt_campaign::history`]).

pub mod baseline;
pub mod command;

use crate::flags::Location;
use crate::UserError;
use pelt_store::Store;

/// Opens the history `--history` names (or the default one), saying what
/// its first opening imported.
pub fn open(loc: &Location) -> Result<Store, UserError> {
    let opened = pelt_campaign::history::open(loc.history.as_deref(), &crate::flags::places())?;
    say_notes(opened.notes);
    Ok(opened.store)
}

/// A history just opened for recording, its notes said.
pub fn said(mut h: pelt_campaign::history::Recording) -> pelt_campaign::history::Recording {
    say_notes(h.take_notes());
    h
}

/// The history's notes for the user (what an import did), on stderr.
pub fn say_notes(notes: Vec<String>) {
    for note in notes {
        eprintln!("pelt: {note}");
    }
}

/// A run the history could not take: a warning, since the run happened
/// and its results file is saved.
pub fn not_recorded(what: &str, e: &pelt_campaign::Error) {
    eprintln!("pelt: warning: {what} was not recorded in the history: {e}");
}
