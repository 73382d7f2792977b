//! pelt-engine: generates load and records what happens.
//!
//! ```text
//! RunConfig ─▶ RunPlan ─▶ Worker × threads ─▶ sender: Transport ─▶ Sample
//!                          (Pacer, dispatcher)   (h1 | h2 | h3)          │
//!  RunSummary ◀─ Collector ◀─ one Recorder per second (Intervals) ◀─────┘
//!                   └─▶ Snapshot each second
//! ```
//!
//! [`Run::start`] plans the run, then spawns one worker thread per core,
//! each with a single-threaded tokio runtime that owns its connections
//! and recorders. Once a second every worker hands its interval recorder
//! to a collector thread, which merges seconds into the timeline and the
//! total, hands each second on as a [`Snapshot`], and produces the
//! [`RunSummary`](pelt_core::RunSummary).
//!
//! # Use as a library
//!
//! Build a [`RunConfig`](pelt_core::RunConfig), start a [`Run`], read a
//! [`Snapshot`] per second from [`Run::progress`], and get the summary
//! from [`Run::wait`]:
//!
//! ```no_run
//! use pelt_core::{Load, RunConfig, Stop, Target, Url};
//! use pelt_engine::{Progress, Run};
//! use std::time::Duration;
//!
//! let url = Url::parse("http://127.0.0.1:8080/")?;
//! let stop = Stop { requests: None, duration: Some(Duration::from_secs(5)) };
//! let config = RunConfig::new(vec![Target::get(url)], Load::closed(50), stop);
//! let run = Run::start(config)?;
//! loop {
//!     match run.progress(Duration::from_millis(200)) {
//!         Progress::Interval(second) => println!("{} req/s", second.row.requests),
//!         Progress::Waiting => {}
//!         Progress::Finished => break,
//!     }
//! }
//! let summary = run.wait();
//! println!("{:.0} req/s over {:?}", summary.request_rate(), summary.duration);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `examples/bench_url.rs` is the same as a program. docs/LIBRARY.md
//! has more, each an example that runs: a results file out and back
//! (secrets redacted by default), a run with a login from async code,
//! [`Run::snapshots`] and cancelling. Build with `--release` to measure:
//! a debug build of the engine is recorded in the run's environment and
//! every report warns about it.

#![warn(missing_docs)]

mod cancel;
mod collector;
mod conn;
mod cpu_load;
mod dry_send;
mod error;
mod events;
#[doc(hidden)]
pub mod fuzz;
pub mod h1;
mod h2;
mod h3;
mod intervals;
mod link;
mod outcome;
pub mod pacer;
mod parts;
mod plan;
mod priority;
mod request_log;
mod run;
mod session;
mod timer;
mod transport;
mod worker;
mod ws;

pub use cancel::Canceller;
pub use collector::Snapshot;
pub use dry_send::dry_send;
pub use error::EngineError;
pub use pacer::{ConstantRate, Pacer, Piecewise, PoissonRate};
pub use plan::GRACE;
pub use priority::Background;
pub use request_log::{RequestLogFormat, RequestLogSpec, CSV_HEADER as REQUEST_LOG_CSV_HEADER};
pub use run::{footer_of, Progress, Run, Snapshots};
