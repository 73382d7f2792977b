//! What an attempt ends with: a complete response, or a failure already
//! classified as an [`ErrorKind`]. Every transport, and the wire code
//! below it, speaks these two types, so the worker records a sample the
//! same way whatever carried the request. It imports nothing of the
//! crate, so the connection code, the wire code and the transports can
//! all use it without importing one another.

use pelt_core::ErrorKind;
use std::io;

/// What a complete response told us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    /// The final status code (after redirects, with `--follow`).
    pub status: u16,
    /// Bytes received: heads and bodies, of every redirect hop.
    pub bytes_in: u64,
    /// Bytes of the (last) body, after any chunked framing is removed.
    pub body_bytes: u64,
    /// Whether the connection may carry another request.
    pub reusable: bool,
}

/// A failed attempt, already classified: counted by `kind`, with `detail`
/// kept as an example message.
#[derive(Debug)]
pub struct Failure {
    /// What went wrong, as the results count it.
    pub kind: ErrorKind,
    /// What a user reads: what happened, where, and what to check.
    pub detail: String,
    /// Response bytes received before the failure.
    pub bytes_in: u64,
    /// The status, if a response head had been read; else 0.
    pub status: u16,
}

impl Failure {
    /// A failure before any response byte.
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Failure {
        Failure {
            kind,
            detail: detail.into(),
            bytes_in: 0,
            status: 0,
        }
    }
}

/// Whether a server refused a request it had not processed, as HTTP/2's
/// and HTTP/3's errors say: such a request is safe to send again (RFC
/// 9113 §8.7, RFC 9114 §4.1.1). The transports decide whether and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// It may have been processed: the failure stands.
    No,
    /// The server refused the stream (HTTP/2's REFUSED_STREAM, HTTP/3's
    /// H3_REQUEST_REJECTED); the connection may still work.
    Stream,
    /// The connection was closing (a graceful GOAWAY, or closed without
    /// error) and did not take the request: a new connection may.
    Closing,
}

/// The statuses `--follow` follows.
pub fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// Maps an I/O error while reading to its kind.
pub fn read_error_kind(e: &io::Error) -> ErrorKind {
    match e.kind() {
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => ErrorKind::Reset,
        io::ErrorKind::UnexpectedEof | io::ErrorKind::BrokenPipe => ErrorKind::Closed,
        io::ErrorKind::InvalidData => ErrorKind::Tls,
        _ => ErrorKind::Read,
    }
}

/// Maps an I/O error while writing to its kind: as for reading, but what
/// is neither a reset, a close nor TLS is a `write` failure.
pub fn write_error_kind(e: &io::Error) -> ErrorKind {
    match read_error_kind(e) {
        ErrorKind::Read => ErrorKind::Write,
        other => other,
    }
}
