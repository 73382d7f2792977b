//! The second room, what a request's measurement is: the per-request
//! [`Sample`](sample::Sample), the kind of a failed request
//! ([`ErrorKind`](error_kind::ErrorKind)) and the one rule of "failed"
//! ([`failure`]), the [`Recorder`](recorder::Recorder) that turns samples
//! into histograms and counts, percentiles ([`rank`]), handshake phases,
//! streamed events ([`stream`]) and the independence of requests.

pub mod error_kind;
pub mod failure;
pub mod handshake;
pub mod histogram;
pub mod independence;
pub mod rank;
pub mod recorder;
pub mod sample;
pub mod stream;
pub mod ws;
