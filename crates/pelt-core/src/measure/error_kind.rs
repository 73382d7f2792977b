//! Per-request failure kinds.
//!
//! A failed request is data, not an `Err`: the engine turns every failure
//! into one of these kinds, the recorder counts it in a fixed array indexed
//! by the kind, and the reports explain each kind in words.

use serde::{Deserialize, Serialize};

/// Why a request did not produce a usable response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The TCP connection could not be established (refused, unreachable,
    /// or not within `--connect-timeout`).
    Connect,
    /// The TLS handshake failed (certificate, protocol, or alert).
    Tls,
    /// Writing the request failed.
    Write,
    /// Reading the response failed with an I/O error other than a reset.
    Read,
    /// The server reset the connection (TCP RST), or with HTTP/2 reset the
    /// stream (RST_STREAM) or closed the connection (GOAWAY), before the
    /// response was complete.
    Reset,
    /// The server closed the connection before the response was complete.
    Closed,
    /// No complete response within `--timeout`.
    Timeout,
    /// The bytes received are not a valid HTTP/1.1 response (or, with
    /// `--http2`, break the HTTP/2 protocol).
    InvalidResponse,
    /// The body length differs from the first successful response for the
    /// same target (ab's "Length" failure).
    Length,
    /// Still waiting (in flight, or queued in the client) when the run ended.
    Unfinished,
    /// `--scenario`: a value a step extracts (a JSON pointer, a regex
    /// group, a header, a cookie) was not in its response; the flow's
    /// later steps are skipped.
    Extract,
    /// `--scenario`: a step's check (status in a set, body contains, a
    /// JSON value) did not pass; the flow's later steps are skipped.
    Check,
    /// A streamed response (`--stream`, `--llm`, or a stream by its
    /// `Content-Type`) whose connection closed or was reset, or whose
    /// framing ended, before the stream's end (HTTP/1.1's last chunk,
    /// HTTP/2's or HTTP/3's end of stream, an LLM stream's `[DONE]`).
    StreamCut,
    /// WebSocket (`ws://`, `wss://`): the server did not switch
    /// protocols as RFC 6455 §4.1 asks (a status other than 101, a
    /// missing or wrong `Sec-WebSocket-Accept`, no `Upgrade: websocket`,
    /// a subprotocol that was not offered).
    WsUpgrade,
    /// WebSocket: a frame that breaks RFC 6455 (a masked server frame,
    /// reserved bits or opcodes, a fragmented or long control frame, a
    /// continuation out of place, text that is not UTF-8, a bad close).
    WsProtocol,
    /// WebSocket: a message (or a frame's announced length) longer than
    /// `--max-message`.
    WsTooBig,
    /// WebSocket: the server sent a close frame before the reply came.
    WsClosed,
}

impl ErrorKind {
    /// Every kind, in the order of the recorder's count array.
    pub const ALL: [ErrorKind; 17] = [
        ErrorKind::Connect,
        ErrorKind::Tls,
        ErrorKind::Write,
        ErrorKind::Read,
        ErrorKind::Reset,
        ErrorKind::Closed,
        ErrorKind::Timeout,
        ErrorKind::InvalidResponse,
        ErrorKind::Length,
        ErrorKind::Unfinished,
        ErrorKind::Extract,
        ErrorKind::Check,
        ErrorKind::StreamCut,
        ErrorKind::WsUpgrade,
        ErrorKind::WsProtocol,
        ErrorKind::WsTooBig,
        ErrorKind::WsClosed,
    ];
    /// Number of kinds; the size of the recorder's count array.
    pub const COUNT: usize = Self::ALL.len();

    /// Index into a `[_; ErrorKind::COUNT]` array.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The snake_case name used in JSON and CSV.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Tls => "tls",
            ErrorKind::Write => "write",
            ErrorKind::Read => "read",
            ErrorKind::Reset => "reset",
            ErrorKind::Closed => "closed",
            ErrorKind::Timeout => "timeout",
            ErrorKind::InvalidResponse => "invalid_response",
            ErrorKind::Length => "length",
            ErrorKind::Unfinished => "unfinished",
            ErrorKind::Extract => "extract",
            ErrorKind::Check => "check",
            ErrorKind::StreamCut => "stream_cut",
            ErrorKind::WsUpgrade => "ws_upgrade",
            ErrorKind::WsProtocol => "ws_protocol",
            ErrorKind::WsTooBig => "ws_too_big",
            ErrorKind::WsClosed => "ws_closed",
        }
    }

    /// A short explanation for the text report.
    pub fn describe(self) -> &'static str {
        match self {
            ErrorKind::Connect => "could not connect",
            ErrorKind::Tls => "TLS handshake failed",
            ErrorKind::Write => "sending the request failed",
            ErrorKind::Read => "reading the response failed",
            ErrorKind::Reset => "connection reset by the server",
            ErrorKind::Closed => "connection closed before the response was complete",
            ErrorKind::Timeout => "no response within --timeout",
            ErrorKind::InvalidResponse => "response is not valid HTTP",
            ErrorKind::Length => "body length differs from the first response",
            ErrorKind::Unfinished => "still pending when the run ended",
            ErrorKind::Extract => "a value to extract was missing from the response",
            ErrorKind::Check => "a scenario check failed on the response",
            ErrorKind::StreamCut => "a streamed response ended before the stream did",
            ErrorKind::WsUpgrade => "the server did not upgrade to WebSocket (RFC 6455 handshake)",
            ErrorKind::WsProtocol => {
                "a WebSocket frame broke RFC 6455 (mask, opcode, UTF-8, close)"
            }
            ErrorKind::WsTooBig => "a WebSocket message was longer than --max-message",
            ErrorKind::WsClosed => "the server closed the WebSocket before the reply came",
        }
    }

    /// Whether requests of this kind are timed into the latency histograms.
    ///
    /// A request that failed fast (refused, reset, garbage) says nothing
    /// about latency and would flatter the percentiles; one that timed out
    /// or never finished is a *censored* slow request, and leaving it out
    /// would hide exactly the stalls a benchmark exists to find. So the
    /// censored kinds are recorded at the time they were given up on (a
    /// lower bound), and a `Length` failure still had a full response.
    pub fn is_timed(self) -> bool {
        matches!(
            self,
            ErrorKind::Timeout
                | ErrorKind::Unfinished
                | ErrorKind::Length
                | ErrorKind::Extract
                | ErrorKind::Check
        )
    }

    /// Whether this kind is a scenario's judgement of a *complete*
    /// response (a failed extraction or check), not a transport failure:
    /// such a response keeps its status code (in `statuses`, and in
    /// `non_2xx_3xx` when outside 2xx/3xx) while the judgement says why
    /// its step failed.
    pub fn is_judgement(self) -> bool {
        matches!(self, ErrorKind::Extract | ErrorKind::Check)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_matches_position_in_all() {
        for (i, k) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(k.index(), i);
            let json = serde_json::to_string(k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.name()));
        }
    }
}
