//! The third room, what a run found: the results file (`.pelt`: a header,
//! a record per second, a footer; this module's own items), the
//! [`RunSummary`](summary::RunSummary) every report reads, with its
//! warnings, quantile intervals and stationarity tests, and the judging of
//! a run's seconds by its `--abort-on` rules ([`abort_watch`]).

mod file;
pub use file::*;

pub mod abort_watch;
pub mod header;
mod judge;
mod redact;
pub mod summary;
#[cfg(test)]
pub(crate) use file::testing;
