//! pelt-campaign: what a program needs to make more than one run, or one
//! run the way the `pelt` command makes it.
//!
//! - [`execute`] runs a `RunConfig` with its results file written each
//!   second ([`Keep`]), an observer fed each second ([`RunObserver`]) and
//!   a [`Cancel`] token that stops it, however it was started.
//! - [`results`] keeps and reads results files: the data directory, one
//!   file or several merged, reports written to a folder.
//! - [`sweep`] finds the highest rate a target holds under an SLO, or
//!   throughput against concurrency, from a typed [`SweepSpec`].
//! - [`calibrate`] measures this machine's ceiling as a load generator.
//!
//! Nothing here parses a command line or prints a report: a caller
//! builds typed values (a `RunConfig`, a `SweepSpec`), gets reports back
//! as data, and watches through [`Observer`]s.
//!
//! ```no_run
//! use pelt_campaign::{sweep::{Sweep, SweepSpec}, Cancel, Unobserved};
//! use pelt_core::{Load, RunConfig, Target};
//!
//! let target = Target::get("http://127.0.0.1:8080/".parse().unwrap());
//! let base = RunConfig::new(vec![target], Load::rate_of(100.0, 50));
//! let mut spec = SweepSpec::new(std::env::temp_dir().join("my-sweep"));
//! spec.slo = pelt_analyze::sweep::parse_slo("p99 < 50ms, errors < 0.1%").unwrap();
//! spec.plan.max = 5_000.0;
//! let sweep = Sweep::new(spec, base).unwrap();
//! let (report, reports) = sweep.conduct(&Cancel::new(), &mut Unobserved).unwrap();
//! println!("{}", reports.text);
//! println!("capacity: {:?} req/s", report.capacity);
//! ```

pub mod calibrate;
mod cancel;
mod error;
pub mod execute;
mod observe;
pub mod results;
pub mod sweep;

pub use cancel::Cancel;
pub use error::{Error, Result};
pub use execute::{execute, Keep, Until};
pub use observe::{Observer, RunObserver, Unobserved};
pub use sweep::{Sweep, SweepSpec};
