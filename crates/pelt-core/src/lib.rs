//! pelt-core: plain data shared by every stage of pelt.
//!
//! No I/O and no async runtime live here: the run configuration, the
//! per-request [`Sample`], the [`Recorder`] that turns samples into
//! histograms and counts, and the [`RunSummary`] that reports read. Keeping
//! them plain means a saved run can be re-reported, merged and compared
//! without the engine.

#![warn(missing_docs)]

pub mod abort;
pub mod buckets;
pub mod check;
pub mod civil;
pub mod config;
pub mod duration;
pub mod error;
pub mod failure;
#[doc(hidden)]
pub mod fuzz;
pub mod handshake;
pub mod header;
pub mod histogram;
pub mod independence;
pub mod op;
mod quote;
pub mod rank;
pub mod recorder;
pub mod results;
pub mod sample;
pub mod schedule;
pub mod secrets;
pub mod shard;
pub mod stream;
pub mod summary;
pub mod targets;
pub mod url;
pub mod watch;
pub mod ws;

pub use abort::{AbortRule, AbortRuleError};
pub use check::{Assertion, AssertionError, Checked};
pub use civil::UtcTime;
pub use config::{
    check_header, check_method, connect_address, splitmix64, unregistered_method, Arrivals,
    ConfigError, ConnectTo, ConnectToError, HttpOptions, Load, Order, Proxy, ProxyOptions,
    ProxyUrlError, RunConfig, ScenarioSource, SendWindow, SessionOptions, SourceAddressError, Stop,
    Target, TargetError, TargetPicker, Targets, ThinkShape, ThinkTime, ThinkTimeError,
    REGISTERED_METHODS,
};
pub use config::{parse_source_addresses, MAX_SOURCE_ADDRESSES};
pub use duration::{human_ns, parse_duration, DurationError, Human};
pub use error::ErrorKind;
pub use failure::FailureKind;
/// The `hdrhistogram` crate itself, for its iterators and serialisers.
pub use hdrhistogram;
/// The histogram type a [`Recorder`] holds (`response`, `service`, ...)
/// and [`LatencyStats::of`] and [`rank::percentile`] read: HdrHistogram,
/// re-exported so that a library user names the same type without
/// depending on the crate at the same version.
pub use hdrhistogram::Histogram;
pub use header::{Environment, Link, NotOneRun, RunFooter, RunHeader, StopCause, ThreadLoad};
pub use recorder::{Recorder, TargetStats, MAX_TIMED_TARGETS};
pub use results::{ResultsError, ResultsReader, ResultsWriter};
pub use sample::{Nanos, Sample};
pub use schedule::{Schedule, ScheduleError, Segment, Spec};
pub use secrets::Redactor;
pub use shard::{Shard, ShardError, ShardInfo};
pub use summary::{
    ClientBound, Headline, Independence, IntervalRow, LatencyStats, LocalResource, RunSummary,
    SummaryBuilder, Warning, Window, WindowError, CLIENT_BUSY, CLIENT_STARVED, PERCENTILES,
};
pub use targets::{ReadError, TargetsError, TargetsFormat, UnknownTargetsFormat};
pub use url::{Scheme, Url, UrlError};
pub use watch::AbortWatch;
