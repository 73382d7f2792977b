//! HTTP/3 on the wire, on `h3` over `h3-quinn`: the adapters pelt puts
//! between them, QUIC's 0-RTT, and what h3's errors mean for pelt's
//! counts. The transport that sends requests over it, as streams of
//! shared connections, is `transport::h3`.
//!
//! - this file: h3's view of a quinn connection ([`start`]), with a
//!   stream opener that hands out a stream reserved beforehand
//!   ([`Opener::poll_reserve`]), so that a wait for the server's stream
//!   credit happens before a request's clock starts, not inside h3's
//!   `send_request`;
//! - [`early`]: a 0-RTT connection's fate (accepted, rejected, failed);
//! - [`errors`]: h3's stream errors, classified and told apart from
//!   refusals that are safe to send again.

pub(crate) mod early;
pub(crate) mod errors;

use bytes::Bytes;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::task::{Context, Poll};

/// h3's request handle over a connection started by [`start`].
pub(crate) type SendRequest = h3::client::SendRequest<Opener, Bytes>;
/// h3's driver of a connection's control streams (`poll_close`).
pub(crate) type Driver = h3::client::Connection<Quic, Bytes>;
/// One request's stream, for its body and its response.
pub(crate) type RequestStream = h3::client::RequestStream<BidiStream, Bytes>;
type BidiStream = h3_quinn::BidiStream<Bytes>;

/// Streams a sender opened (within the server's stream credit) for its
/// next request, not yet taken by h3: a sender hands its stream to h3
/// with no await in between, so the queue is empty at every await point
/// but after a request h3 refused before taking its stream (the
/// connection closing), whose stream the next request takes.
type Reserved = Rc<RefCell<VecDeque<BidiStream>>>;

/// Largest response header section accepted (decoded), as for HTTP/2
/// (`transport::h2`'s `MAX_HEADER_LIST`): beyond it a response is refused
/// and counted `invalid_response`.
const MAX_FIELD_SECTION: u64 = 64 * 1024;

/// HTTP/3's code for a connection's graceful end (RFC 9114 §8.1).
pub(crate) fn no_error() -> quinn::VarInt {
    quinn::VarInt::from_u64(h3::error::Code::H3_NO_ERROR.value()).expect("a small code")
}

/// Starts HTTP/3 on a QUIC connection: h3's driver (to be polled until
/// the connection closes), its request handle, and a stream opener for
/// [`Opener::poll_reserve`].
pub(crate) async fn start(
    conn: quinn::Connection,
) -> Result<(Driver, SendRequest, Opener), h3::error::ConnectionError> {
    let quic = Quic {
        inner: h3_quinn::Connection::new(conn),
        reserved: Reserved::default(),
    };
    let opener = h3::quic::Connection::<Bytes>::opener(&quic);
    // h3's defaults but for grease (reserved frame and setting types
    // that test a peer's tolerance): a load test measures the server,
    // and sends only what it asks for.
    let (driver, send) = h3::client::builder()
        .max_field_section_size(MAX_FIELD_SECTION)
        .send_grease(false)
        .build(quic)
        .await?;
    Ok((driver, send, opener))
}

/// h3's stream opener over quinn's, handing out a reserved stream first:
/// h3 opens a request's stream inside `send_request`, after pelt has
/// marked the request sent, so a wait for stream credit there would be
/// counted as service time. Senders open the stream themselves before
/// ([`Opener::poll_reserve`]), and h3 takes it from here.
#[derive(Clone)]
pub(crate) struct Opener {
    inner: h3_quinn::OpenStreams,
    reserved: Reserved,
}

impl Opener {
    /// Opens a stream for the next request and keeps it for h3's
    /// `send_request`; pending while the server's stream credit
    /// (MAX_STREAMS) is used up.
    pub(crate) fn poll_reserve(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), h3::quic::StreamErrorIncoming>> {
        use h3::quic::OpenStreams as _;
        self.inner.poll_open_bidi(cx).map_ok(|stream| {
            self.reserved.borrow_mut().push_back(stream);
        })
    }
}

impl h3::quic::OpenStreams<Bytes> for Opener {
    type BidiStream = BidiStream;
    type SendStream = h3_quinn::SendStream<Bytes>;

    fn poll_open_bidi(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<BidiStream, h3::quic::StreamErrorIncoming>> {
        match self.reserved.borrow_mut().pop_front() {
            Some(stream) => Poll::Ready(Ok(stream)),
            None => self.inner.poll_open_bidi(cx),
        }
    }

    fn poll_open_send(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Self::SendStream, h3::quic::StreamErrorIncoming>> {
        self.inner.poll_open_send(cx)
    }

    fn close(&mut self, code: h3::error::Code, reason: &[u8]) {
        h3::quic::OpenStreams::<Bytes>::close(&mut self.inner, code, reason)
    }
}

/// h3-quinn's connection, giving h3 an [`Opener`] for its requests.
pub(crate) struct Quic {
    inner: h3_quinn::Connection,
    reserved: Reserved,
}

impl h3::quic::OpenStreams<Bytes> for Quic {
    type BidiStream = BidiStream;
    type SendStream = h3_quinn::SendStream<Bytes>;

    fn poll_open_bidi(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<BidiStream, h3::quic::StreamErrorIncoming>> {
        self.inner.poll_open_bidi(cx)
    }

    fn poll_open_send(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Self::SendStream, h3::quic::StreamErrorIncoming>> {
        self.inner.poll_open_send(cx)
    }

    fn close(&mut self, code: h3::error::Code, reason: &[u8]) {
        h3::quic::OpenStreams::<Bytes>::close(&mut self.inner, code, reason)
    }
}

impl h3::quic::Connection<Bytes> for Quic {
    type RecvStream = h3_quinn::RecvStream;
    type OpenStreams = Opener;

    fn poll_accept_recv(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Self::RecvStream, h3::quic::ConnectionErrorIncoming>> {
        h3::quic::Connection::<Bytes>::poll_accept_recv(&mut self.inner, cx)
    }

    fn poll_accept_bidi(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<BidiStream, h3::quic::ConnectionErrorIncoming>> {
        h3::quic::Connection::<Bytes>::poll_accept_bidi(&mut self.inner, cx)
    }

    fn opener(&self) -> Opener {
        Opener {
            inner: h3::quic::Connection::<Bytes>::opener(&self.inner),
            reserved: self.reserved.clone(),
        }
    }
}
