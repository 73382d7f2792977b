//! HTTP/1.1 on the wire: requests serialised once, responses read into a
//! reusable buffer and framed without allocating. The transport that
//! sends them, one connection per sender, is `transport::h1`.
//!
//! - `request`: a request's bytes, written once (and rewritten for a
//!   redirect hop);
//! - `response`: reading a response: its head, the copies a caller
//!   asks of it, its body;
//! - `head`: a response head parsed and framed;
//! - `chunked`: the chunked body decoder.

mod chunked;
mod head;
mod request;
mod response;

pub use crate::outcome::{Failure, Response};
pub use head::excerpt;
pub(crate) use request::{is_idempotent, with_header};
pub use request::{write_request, PreparedRequest, RequestLine};
pub use response::{read_response, read_response_location};
pub(crate) use response::{read_response_copies, Copies, Events, NoEvents};

/// Largest per-connection read buffer. Response heads must fit in it;
/// bodies stream through it. wrk uses 8 KiB; 16 KiB leaves room for fat
/// heads.
pub const READ_BUF: usize = 16 * 1024;
/// A connection's read buffer to begin with: a small response (a head of
/// a few hundred bytes, a short JSON body) fits; it doubles (up to
/// [`READ_BUF`]) when a head does not, or when a read fills it, and
/// stays grown, so a bigger response costs one more read per connection,
/// once. Memory per connection is what issues 25 and 27 measured against
/// Locust and wrk (1 KiB before: 0.5 MB more at 1,000 connections).
pub const FIRST_READ_BUF: usize = 512;
