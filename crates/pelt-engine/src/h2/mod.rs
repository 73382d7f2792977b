//! HTTP/2 on the wire, as the `h2` crate speaks it: what its errors mean
//! for pelt's counts. The requests it sends are `parts::PreparedParts`;
//! the transport that sends them, as streams of shared connections, is
//! `transport::h2`.

use crate::outcome::{read_error_kind, Failure, Refused};
use pelt_core::ErrorKind;

/// Classifies an h2 error; `otherwise` is the kind for the phase it came
/// from (write before the request is out, read after).
pub(crate) fn classify(e: &h2::Error, otherwise: ErrorKind, status: Option<u16>) -> Failure {
    let (kind, detail) = if let Some(io) = e.get_io() {
        let kind = match read_error_kind(io) {
            ErrorKind::Read => otherwise,
            k => k,
        };
        (kind, e.to_string())
    } else if e.is_library() {
        (
            ErrorKind::InvalidResponse,
            format!(
                "not valid HTTP/2 ({e}); does the server speak HTTP/2 on this port \
                 (for http://, h2c with prior knowledge)?"
            ),
        )
    } else if e.is_go_away() || e.is_reset() {
        let reason = e.reason().unwrap_or(h2::Reason::NO_ERROR);
        let what = match (e.is_go_away(), e.is_remote()) {
            (true, true) => "the server ended the connection with GOAWAY",
            (true, false) => "pelt ended the connection with GOAWAY",
            (false, true) => "the server reset the stream (RST_STREAM)",
            (false, false) => "pelt reset the stream (RST_STREAM)",
        };
        (ErrorKind::Reset, format!("{what}: {reason:?}"))
    } else {
        (otherwise, e.to_string())
    };
    Failure {
        kind,
        detail,
        bytes_in: 0,
        status: status.unwrap_or(0),
    }
}

/// Whether the server refused a stream it had not processed: a graceful
/// GOAWAY (the connection takes no more), or REFUSED_STREAM.
pub(crate) fn refused(e: &h2::Error) -> Refused {
    if !e.is_remote() {
        Refused::No
    } else if e.is_go_away() && e.reason() == Some(h2::Reason::NO_ERROR) {
        Refused::Closing
    } else if e.is_reset() && e.reason() == Some(h2::Reason::REFUSED_STREAM) {
        Refused::Stream
    } else {
        Refused::No
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // (h2 makes only its `Reason` errors outside the crate: remote resets
    // and GOAWAYs are met in crates/pelt/tests/http2.rs against nginx.)
    #[test]
    fn a_bare_reason_is_counted_by_the_phase_it_came_from_and_keeps_a_status() {
        let e = h2::Error::from(h2::Reason::INTERNAL_ERROR);
        let f = classify(&e, ErrorKind::Write, None);
        assert_eq!((f.kind, f.status, f.bytes_in), (ErrorKind::Write, 0, 0));
        let f = classify(&e, ErrorKind::Read, Some(200));
        assert_eq!((f.kind, f.status), (ErrorKind::Read, 200));
    }

    #[test]
    fn a_refusal_pelt_made_itself_is_not_the_servers_to_send_again() {
        let e = h2::Error::from(h2::Reason::REFUSED_STREAM);
        assert!(!e.is_remote());
        assert_eq!(refused(&e), Refused::No);
    }
}
