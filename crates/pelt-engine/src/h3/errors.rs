//! h3's stream errors as pelt counts them: each read once into a
//! [`StreamEnd`] (plain data, borrowed from the error), which says the
//! failure's kind and message and whether the server refused the request
//! unprocessed. h3 lets no one outside it make its errors, so the rules
//! are tested on [`StreamEnd`]s.

use crate::outcome::{Failure, Refused};
use h3::error::Code;
use pelt_core::ErrorKind;
use std::fmt::Display;

/// How a request's stream ended, as far as pelt tells endings apart.
#[derive(Clone, Copy)]
pub(crate) enum StreamEnd<'a> {
    /// The server reset the stream (RESET_STREAM or STOP_SENDING) with
    /// this code.
    Reset(Code),
    /// The server is closing the connection (GOAWAY) and took no new
    /// stream.
    GoAway,
    /// The server closed the QUIC connection with this HTTP/3 code.
    ClosedBy(Code),
    /// No packet from the server within the connection's idle timeout.
    TimedOut,
    /// Not valid HTTP/3: the code and reason h3 gives.
    Invalid(Code, &'a str),
    /// The connection failed otherwise.
    Broken(&'a dyn Display),
    /// Anything else.
    Other(&'a dyn Display),
}

impl<'a> StreamEnd<'a> {
    /// Reads h3's error.
    pub(crate) fn of(e: &'a h3::error::StreamError) -> StreamEnd<'a> {
        use h3::error::ConnectionError as C;
        use h3::error::StreamError as S;
        use h3::quic::ConnectionErrorIncoming as I;
        match e {
            S::RemoteTerminate { code, .. } => StreamEnd::Reset(*code),
            S::RemoteClosing { .. } => StreamEnd::GoAway,
            S::ConnectionError { 0: c, .. } => match c {
                C::Remote {
                    0: I::ApplicationClose { error_code },
                    ..
                } => StreamEnd::ClosedBy(Code::from(*error_code)),
                C::Remote { 0: I::Timeout, .. } | C::Timeout { .. } => StreamEnd::TimedOut,
                other => StreamEnd::Broken(other),
            },
            S::StreamError { code, reason, .. } => StreamEnd::Invalid(*code, reason),
            other => StreamEnd::Other(other),
        }
    }

    /// The failure it is; `otherwise` is the kind for the phase it came
    /// from (write before the request is out, read after), `status` the
    /// response's if its head was read (else 0).
    pub(crate) fn failure(self, otherwise: ErrorKind, status: u16) -> Failure {
        let (kind, detail) = match self {
            StreamEnd::Reset(code) => (
                ErrorKind::Reset,
                format!("the server reset the stream ({code})"),
            ),
            StreamEnd::GoAway => (
                ErrorKind::Closed,
                "the server is closing the connection (GOAWAY) and took no new stream".to_string(),
            ),
            StreamEnd::ClosedBy(code) if code == Code::H3_NO_ERROR => (
                ErrorKind::Closed,
                "the server closed the QUIC connection".to_string(),
            ),
            StreamEnd::ClosedBy(code) => (
                ErrorKind::Reset,
                format!("the server closed the QUIC connection with {code}"),
            ),
            StreamEnd::TimedOut => (
                ErrorKind::Read,
                "the QUIC connection timed out: no packet from the server within its idle timeout"
                    .to_string(),
            ),
            StreamEnd::Invalid(code, reason) => (
                ErrorKind::InvalidResponse,
                format!("not valid HTTP/3 ({code}: {reason}); does the server speak HTTP/3?"),
            ),
            StreamEnd::Broken(e) => (otherwise, format!("the QUIC connection failed: {e}")),
            StreamEnd::Other(e) => (otherwise, e.to_string()),
        };
        Failure {
            kind,
            detail,
            bytes_in: 0,
            status,
        }
    }

    /// Whether the server refused the request unprocessed (asked only
    /// before a response head arrived): H3_REQUEST_REJECTED, or a
    /// connection closing gracefully (after GOAWAY, RFC 9114 §5.2, the
    /// server finishes what it took before closing, so a request still
    /// without a response was not taken: it crossed the GOAWAY).
    pub(crate) fn refused(self) -> Refused {
        match self {
            StreamEnd::Reset(code) if code == Code::H3_REQUEST_REJECTED => Refused::Stream,
            StreamEnd::GoAway => Refused::Closing,
            StreamEnd::ClosedBy(code) if code == Code::H3_NO_ERROR => Refused::Closing,
            _ => Refused::No,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(end: StreamEnd<'_>) -> ErrorKind {
        end.failure(ErrorKind::Write, 0).kind
    }

    #[test]
    fn a_reset_stream_is_reset_and_only_a_rejection_is_refused() {
        let rejected = StreamEnd::Reset(Code::H3_REQUEST_REJECTED);
        assert_eq!(kind(rejected), ErrorKind::Reset);
        assert_eq!(rejected.refused(), Refused::Stream);
        // Cancelled after processing may have begun: it stands.
        let cancelled = StreamEnd::Reset(Code::H3_REQUEST_CANCELLED);
        assert_eq!(kind(cancelled), ErrorKind::Reset);
        assert_eq!(cancelled.refused(), Refused::No);
        let f = cancelled.failure(ErrorKind::Read, 0);
        assert!(f.detail.contains("H3_REQUEST_CANCELLED"), "{}", f.detail);
    }

    #[test]
    fn a_goaway_and_a_graceful_close_are_closed_and_refused_unprocessed() {
        for (what, end) in [
            ("GOAWAY", StreamEnd::GoAway),
            ("close", StreamEnd::ClosedBy(Code::H3_NO_ERROR)),
        ] {
            assert_eq!(kind(end), ErrorKind::Closed, "{what}");
            assert_eq!(end.refused(), Refused::Closing, "{what}");
        }
    }

    #[test]
    fn a_connection_closed_with_an_error_is_reset_and_stands() {
        let end = StreamEnd::ClosedBy(Code::H3_INTERNAL_ERROR);
        let f = end.failure(ErrorKind::Read, 0);
        assert_eq!(f.kind, ErrorKind::Reset);
        assert!(f.detail.contains("H3_INTERNAL_ERROR"), "{}", f.detail);
        assert_eq!(end.refused(), Refused::No);
    }

    #[test]
    fn an_idle_timeout_is_a_read_failure_whatever_the_phase() {
        assert_eq!(kind(StreamEnd::TimedOut), ErrorKind::Read);
        assert_eq!(StreamEnd::TimedOut.refused(), Refused::No);
    }

    #[test]
    fn a_protocol_error_is_an_invalid_response_naming_its_code_and_reason() {
        let end = StreamEnd::Invalid(Code::H3_FRAME_UNEXPECTED, "DATA before HEADERS");
        let f = end.failure(ErrorKind::Read, 200);
        assert_eq!((f.kind, f.status), (ErrorKind::InvalidResponse, 200));
        assert!(f.detail.contains("H3_FRAME_UNEXPECTED"), "{}", f.detail);
        assert!(f.detail.contains("DATA before HEADERS"), "{}", f.detail);
        assert_eq!(end.refused(), Refused::No);
    }

    #[test]
    fn other_failures_take_the_phases_kind_and_say_what_happened() {
        let f = StreamEnd::Broken(&"the socket went away").failure(ErrorKind::Write, 0);
        assert_eq!(f.kind, ErrorKind::Write);
        assert_eq!(f.detail, "the QUIC connection failed: the socket went away");
        let f = StreamEnd::Other(&"odd").failure(ErrorKind::Read, 0);
        assert_eq!((f.kind, f.detail.as_str()), (ErrorKind::Read, "odd"));
        assert_eq!(StreamEnd::Other(&"odd").refused(), Refused::No);
    }
}
