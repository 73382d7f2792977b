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

/// Per-connection read buffer. Response heads must fit in it; bodies
/// stream through it. wrk uses 8 KiB; 16 KiB leaves room for fat heads.
pub const READ_BUF: usize = 16 * 1024;
