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
pub(crate) use request::with_header;
pub use request::{write_request, PreparedRequest, RequestLine};
pub use response::{read_response, read_response_location};
pub(crate) use response::{read_response_copies, Copies};

/// Largest per-connection read buffer. Response heads must fit in it;
/// bodies stream through it. wrk uses 8 KiB; 16 KiB leaves room for fat
/// heads.
pub const READ_BUF: usize = 16 * 1024;
/// A connection's read buffer to begin with: a typical response head and
/// small body fit; it doubles (up to [`READ_BUF`]) when a head does not,
/// or when a read fills it. Memory per idle connection is what issue 27
/// measured against wrk at 10,000 connections.
pub const FIRST_READ_BUF: usize = 1024;
