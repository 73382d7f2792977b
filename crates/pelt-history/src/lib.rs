//! pelt-history: judging runs and remembering them.
//!
//! - [`compare`] judges two sets of runs ([`Comparison`]), and
//!   [`baseline`] new runs against recorded ones, by one method.
//! - The history: [`Recording`] records runs, sweeps, experiments and
//!   merged runs as they end ([`RecordSpec`]: where, with which label and
//!   tags), [`open`] opens it to read, [`Trend`] follows a metric over
//!   recorded runs (like with like), [`rerun_config`] gives a recorded
//!   run back with its secrets, and [`render`] shows listings and trends.
//!
//! Nothing here prints or reads the environment: where the history is
//! comes in a [`pelt_campaign::Places`], and what the user should be told
//! comes back as data ([`Opened::notes`], [`Recording::take_notes`], a
//! recording's `Err`). Runs are made by pelt-campaign, below.

#![warn(missing_docs)]

pub mod baseline;
pub mod compare;
mod follow;
mod record;
pub mod render;

pub use compare::Comparison;
pub use follow::{rerun_config, Trend};
pub use pelt_campaign::{Against, Error, Recorded, Result};
pub use record::*;

/// pelt's own server on a free loopback port, for the unit tests' runs.
#[cfg(test)]
pub(crate) fn loopback_server() -> pelt_target::ServerHandle {
    pelt_target::Server::bind(
        ([127, 0, 0, 1], 0).into(),
        pelt_target::ServeConfig::default(),
    )
    .and_then(pelt_target::Server::spawn)
    .expect("pelt's server on loopback")
}
