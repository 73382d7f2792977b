//! The HTTP/2 transport, on the `h2` crate: streams as senders.
//!
//! One HTTP/2 connection carries `--streams N` senders. Each sender works
//! like an HTTP/1.1 connection does (one request at a time, taken from the
//! closed loop or the rate dispatcher); the N senders of a connection share
//! its `SendRequest` handle. Whichever sender first needs the connection
//! opens it (and its request carries the connect and TLS times); the others
//! wait for that, and a connection that ends is reopened by the next sender
//! that needs it.

use super::dial::dial;
use super::shared::SharedConns;
use super::stream::{StreamSender, Streams, Tries, Unprocessed};
use super::{Attempt, Runner};
use crate::conn::Stream;
use crate::h2::{classify, refused};
use crate::outcome::Failure;
use crate::session::Jar;
use bytes::Bytes;
use h2::client::{ResponseFuture, SendRequest};
use h2::RecvStream;
use pelt_core::ErrorKind;
use std::future::poll_fn;
use std::rc::Rc;

/// Per-stream receive window: large, as h2load's, so a fast server is not
/// held back by WINDOW_UPDATE round trips. pelt releases capacity as soon
/// as it has counted the bytes.
const STREAM_WINDOW: u32 = 1 << 20;
/// The connection's receive window.
const CONNECTION_WINDOW: u32 = 16 << 20;
/// Largest response header list accepted (decoded, HPACK-sized), the
/// HTTP/2 counterpart of HTTP/1.1's head limit (`h1::READ_BUF`). h2's
/// default, 16 MiB, let a server make each connection hold well over
/// 100 MB of decoded headers; beyond this a response is refused and
/// counted `invalid_response`.
const MAX_HEADER_LIST: u32 = 64 * 1024;

/// The HTTP/2 connections that `--streams` consecutive senders share: at
/// most one live connection per origin.
pub(crate) type SharedConn = SharedConns<SendRequest<Bytes>>;

/// A sender that sends its requests as streams of a shared connection.
pub(crate) type H2Sender = StreamSender<H2>;

/// HTTP/2's half of an [`H2Sender`]: its connections, and its copy of
/// the handle on the one it uses.
#[derive(Debug)]
pub(crate) struct H2 {
    shared: Rc<SharedConn>,
    /// This sender's copy of the handle: `(origin, generation, handle)`.
    send: Option<(usize, u64, SendRequest<Bytes>)>,
}

impl H2Sender {
    pub fn new(shared: Rc<SharedConn>, jar: Option<Jar>) -> H2Sender {
        StreamSender::with(H2 { shared, send: None }, jar)
    }
}

impl H2 {
    /// The handle [`Streams::connect`] set.
    fn handle(&mut self) -> &mut SendRequest<Bytes> {
        &mut self.send.as_mut().expect("connect() set it").2
    }
}

/// `e`, classified as a failure of the phase `kind`, with whether the
/// server refused the stream unprocessed.
fn failed(e: &h2::Error, kind: ErrorKind, generation: u64) -> (Failure, Unprocessed) {
    (
        classify(e, kind, None),
        Unprocessed::of(refused(e), generation),
    )
}

impl Streams for H2 {
    const NAME: &'static str = "HTTP/2";
    const FLAG: &'static str = "--http2";
    const VERSION: http::Version = http::Version::HTTP_2;
    type Pending = ResponseFuture;
    type Body = RecvStream;

    async fn connect(
        &mut self,
        w: &impl Runner,
        origin: usize,
        attempt: &mut Attempt,
    ) -> Result<u64, Failure> {
        let opening = match self.shared.acquire_own(origin, &mut self.send).await {
            Ok(generation) => {
                attempt.reused = true;
                return Ok(generation);
            }
            Err(opening) => opening,
        };
        let plan = w.plan();
        let (stream, est) = dial(w, &plan.origins[origin], true).await?;
        if let Stream::Tls(tls) = &stream {
            let alpn = tls.get_ref().1.alpn_protocol();
            if alpn != Some(b"h2") {
                let chose = alpn.map_or_else(
                    || "no protocol".to_string(),
                    |p| String::from_utf8_lossy(p).into_owned(),
                );
                return Err(Failure::new(
                    ErrorKind::Tls,
                    format!(
                        "{}: the server did not negotiate HTTP/2 over ALPN (it chose {chose}); \
                         enable HTTP/2 on the server, or drop --http2",
                        plan.origins[origin].addr
                    ),
                ));
            }
        }
        // Counted open from here, and its socket watched for the kernel's
        // TCP counts (retransmissions) while this code still holds the
        // stream: h2 owns it from the handshake on.
        let mut open = super::OpenConn::new(w).watch(&stream);
        let (send, connection) = h2::client::Builder::new()
            .initial_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .enable_push(false)
            .max_header_list_size(MAX_HEADER_LIST)
            .handshake::<_, Bytes>(stream)
            .await
            .map_err(|e| classify(&e, ErrorKind::Write, None))?;
        w.record_connection(&est);
        let generation = opening.ready(send.clone());
        let shared = self.shared.clone();
        tokio::task::spawn_local(async move {
            // Ends when the connection closes or fails; its streams see the
            // error themselves. Polled through a pin, so that the
            // connection, and its socket, outlive the wait...
            let mut connection = std::pin::pin!(connection);
            let _ = connection.as_mut().await;
            // ... and the socket's counts are read before it closes.
            open.settle();
            shared.retire(origin, generation);
        });
        self.send = Some((origin, generation, send));
        attempt.reused = false;
        Ok(generation)
    }

    async fn ready(
        &mut self,
        _method: &http::Method,
        generation: u64,
    ) -> Result<(), (Failure, Unprocessed)> {
        // Waits while the server's concurrent-stream limit is reached.
        let send = self.handle();
        poll_fn(|cx| send.poll_ready(cx))
            .await
            .map_err(|e| failed(&e, ErrorKind::Write, generation))
    }

    async fn send_request(
        &mut self,
        req: http::Request<()>,
        body: Option<&Bytes>,
        generation: u64,
    ) -> Result<ResponseFuture, (Failure, Unprocessed)> {
        let (response, mut body_out) = self
            .handle()
            .send_request(req, body.is_none())
            .map_err(|e| failed(&e, ErrorKind::Write, generation))?;
        if let Some(body) = body {
            // h2 queues what the flow-control window does not yet allow.
            body_out
                .send_data(body.clone(), true)
                .map_err(|e| failed(&e, ErrorKind::Write, generation))?;
        }
        Ok(response)
    }

    async fn response(
        &mut self,
        pending: ResponseFuture,
        generation: u64,
    ) -> Result<(http::Response<()>, RecvStream), (Failure, Unprocessed)> {
        let response = pending
            .await
            .map_err(|e| failed(&e, ErrorKind::Read, generation))?;
        let (head, body) = response.into_parts();
        Ok((http::Response::from_parts(head, ()), body))
    }

    async fn chunk(
        body: &mut RecvStream,
        status: u16,
        on_data: &mut impl FnMut(&[u8], bool),
    ) -> Result<Option<u64>, Failure> {
        let Some(chunk) = body.data().await else {
            return Ok(None);
        };
        let chunk = chunk.map_err(|e| classify(&e, ErrorKind::Read, Some(status)))?;
        let n = chunk.len();
        on_data(&chunk, true);
        // Capacity released at once: pelt has counted the bytes.
        let _ = body.flow_control().release_capacity(n);
        Ok(Some(n as u64))
    }

    fn again(&mut self, _unprocessed: Unprocessed, tries: &Tries) -> bool {
        // The server refused the stream before processing it (a graceful
        // GOAWAY at its request limit or a reload, or REFUSED_STREAM): RFC
        // 9113 §8.7 makes it safe to send again. Once, so a server refusing
        // everything still shows as errors; after a GOAWAY, on a new
        // connection.
        tries.refused + tries.moved == 0
    }

    fn retire(&self, origin: usize, generation: u64) {
        self.shared.retire(origin, generation);
    }
}
