//! pelt-core: plain data shared by every stage of pelt.
//!
//! No I/O and no async runtime live here: the run configuration, the
//! per-request [`Sample`], the [`Recorder`] that turns samples into
//! histograms and counts, and the [`RunSummary`] that reports read. Keeping
//! them plain means a saved run can be re-reported, merged and compared
//! without the engine.

pub mod buckets;
pub mod check;
pub mod civil;
pub mod config;
pub mod duration;
pub mod error;
#[doc(hidden)]
pub mod fuzz;
pub mod recorder;
pub mod results;
pub mod sample;
pub mod schedule;
pub mod summary;
pub mod targets;
pub mod url;

pub use check::{Assertion, Checked};
pub use civil::UtcTime;
pub use config::{
    connect_address, ConfigError, ConnectTo, HttpOptions, Load, Order, RunConfig, Stop, Target,
    TargetPicker, ThinkTime,
};
pub use duration::{human_ns, parse_duration, DurationError, Human};
pub use error::ErrorKind;
pub use recorder::{Recorder, TargetStats, MAX_TIMED_TARGETS};
pub use results::{ResultsError, ResultsReader, ResultsWriter, RunFooter, RunHeader};
pub use sample::{Nanos, Sample};
pub use schedule::{Schedule, ScheduleError, Segment, Spec};
pub use summary::{
    Environment, IntervalRow, LatencyStats, RunSummary, SummaryBuilder, ThreadLoad, Warning,
    Window, CLIENT_BUSY, PERCENTILES,
};
pub use targets::{TargetsError, TargetsFormat};
pub use url::{Scheme, Url, UrlError};
