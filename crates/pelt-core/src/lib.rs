//! pelt-core: plain data shared by every stage of pelt, in three rooms:
//! [`config`] (what to run: the [`RunConfig`]), [`measure`] (what a
//! request's measurement is: the per-request [`Sample`], the [`Recorder`]
//! that turns samples into histograms and counts) and [`results`] (what a
//! run found: the results file and the [`RunSummary`] that reports read).
//!
//! No I/O and no async runtime live here. Keeping
//! them plain means a saved run can be re-reported, merged and compared
//! without the engine.

#![warn(missing_docs)]

// Three rooms (see each one's page): what to run, what a request's
// measurement is, what a run found.
pub mod config;
pub mod measure;
pub mod results;

pub mod civil;
#[doc(hidden)]
pub mod fuzz;
pub mod ws_key;

// The rooms' modules at the paths they had before the rooms, so that
// `pelt_core::targets`, `pelt_core::summary` and the rest keep working.
pub use config::{abort, buckets, check, duration, op, schedule, secrets, shard, targets, url};
pub use measure::{
    error_kind, failure, handshake, histogram, independence, rank, recorder, sample, stream, ws,
};
pub use results::{abort_watch, header, summary};

pub use abort::{AbortRule, AbortRuleError};
pub use abort_watch::AbortWatch;
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
pub use error_kind::ErrorKind;
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
