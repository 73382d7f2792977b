//! pelt-campaign: what a program needs to make more than one run, or one
//! run the way the `pelt` command makes it.
//!
//! - [`execute()`] runs a `RunConfig` with its results file written each
//!   second ([`Keep`]), an observer fed each second ([`RunObserver`]) and
//!   a [`Cancel`] token that stops it, however it was started.
//! - [`results`] keeps and reads results files: the data directory, one
//!   file or several merged, reports written to a folder.
//! - [`sweep`] finds the highest rate a target holds under an SLO, or
//!   throughput against concurrency, from a typed [`SweepSpec`].
//! - [`experiment`] runs variants x load levels in counterbalanced
//!   blocks, from a plan, and compares them.
//! - Judging and remembering runs (compare, baselines, the history) is
//!   pelt-history's, a floor above.
//! - `calibrate` (feature `calibrate`) measures this machine's ceiling as
//!   a load generator.
//! - [`Places`] says where runs are saved and the history kept: a value
//!   the caller fills (the binary from its environment), never read from
//!   the environment here.
//!
//! Nothing here parses a command line or prints a report: a caller
//! builds typed values (a `RunConfig`, a `SweepSpec`), gets reports back
//! as data, and watches through [`Observer`]s.
//!
//! A sweep from a library is a [`SweepSpec`], a base `RunConfig` and a
//! call: `examples/sweep.rs` finds the capacity of pelt's built-in server
//! in about 20 lines.

#![warn(missing_docs)]

#[cfg(feature = "calibrate")]
pub mod calibrate;
mod cancel;
mod error;
pub mod execute;
pub mod experiment;
mod observe;
mod places;
pub mod results;
pub mod sweep;

pub use cancel::Cancel;
pub use error::{Against, Error, Recorded, Result};
pub use execute::{execute, Keep, Until};
pub use observe::{Observer, RunObserver, Unobserved};
pub use places::Places;
pub use sweep::{Sweep, SweepSpec};

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
