//! pelt-engine: generates load and records what happens.
//!
//! ```text
//! RunConfig ─▶ Pacer ─▶ (seq, intended) ─▶ Worker ─▶ Connection ─▶ Sample ─▶ Recorder
//! ```
//!
//! [`Run::start`] spawns one worker thread per core, each with a
//! single-threaded tokio runtime that owns its connections and recorder.
//! Once a second every worker hands its interval recorder to a collector
//! thread, which merges seconds into the timeline and the total and
//! produces the [`pelt_core::RunSummary`].

mod conn;
#[doc(hidden)]
pub mod fuzz;
pub mod h1;
mod h2;
mod load;
pub mod pacer;
mod run;
mod timer;
mod worker;

pub use pacer::{ConstantRate, Pacer, Piecewise};
pub use run::{
    background_priority, footer_of, Canceller, EngineError, Progress, Run, Snapshot, GRACE,
};
