//! One finished request, as the engine hands it to the recorder.

use crate::error_kind::ErrorKind;

/// Nanoseconds since the run's epoch (a monotonic clock reading taken
/// when the run started). Plain integers keep samples `Copy` and cheap.
pub type Nanos = u64;

/// A finished (or abandoned) request.
///
/// Three times make the three latencies the recorder keeps:
/// response time = `done - intended` (the headline in rate mode: it
/// includes any wait for a free connection), service time = `done - sent`,
/// and send lag = `sent - intended` (the client's health).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Index of the target in `RunConfig::targets`.
    pub target: u32,
    /// When the request should have started: its slot in the rate
    /// schedule, or the moment a closed-loop connection turned to it.
    pub intended: Nanos,
    /// When the first byte of the request was written; `None` if it never
    /// was (connect failed, or it was still queued at the end).
    pub sent: Option<Nanos>,
    /// When the first byte of the response arrived.
    pub first_byte: Option<Nanos>,
    /// When the response was complete, or the request was given up on.
    pub done: Nanos,
    /// HTTP status; 0 when no status line was received.
    pub status: u16,
    /// Bytes read from the connection for this response (head and body).
    pub bytes_in: u64,
    /// Body bytes only (after de-chunking); what the Length check compares.
    pub body_bytes: u64,
    /// Bytes of the request written.
    pub bytes_out: u64,
    /// Whether the request went over a connection that had already served
    /// one (keep-alive reuse).
    pub reused: bool,
    /// Why the request failed, if it did.
    pub error: Option<ErrorKind>,
}

impl Sample {
    /// A sample for a request that failed with `kind` and nothing else
    /// known; callers fill in what they have.
    pub fn failed(target: u32, intended: Nanos, done: Nanos, kind: ErrorKind) -> Sample {
        Sample {
            target,
            intended,
            sent: None,
            first_byte: None,
            done,
            status: 0,
            bytes_in: 0,
            body_bytes: 0,
            bytes_out: 0,
            reused: false,
            error: Some(kind),
        }
    }

    /// A response that arrived without error and with a 2xx or 3xx status.
    pub fn is_success(&self) -> bool {
        self.error.is_none() && (200..400).contains(&self.status)
    }
}
