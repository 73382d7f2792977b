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
use super::redirect::{location_of, Redirects};
use super::shared::{Acquired, SharedConns};
use super::{Attempt, Outgoing, Runner, Transport};
use crate::conn::Stream;
use crate::h2::{field_size, header_block_size};
use crate::outcome::{is_redirect, read_error_kind, Failure, Response};
use crate::session::{jar::cookie_url, Jar};
use bytes::Bytes;
use h2::client::SendRequest;
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
#[derive(Debug)]
pub(crate) struct H2Sender {
    shared: Rc<SharedConn>,
    /// This sender's copy of the handle: `(origin, generation, handle)`.
    send: Option<(usize, u64, SendRequest<Bytes>)>,
    /// `--cookies`: this stream's jar (a stream is the simulated user,
    /// as an HTTP/1.1 connection is), kept across new connections.
    jar: Option<Box<Jar>>,
}

impl H2Sender {
    pub fn new(shared: Rc<SharedConn>, jar: Option<Jar>) -> H2Sender {
        H2Sender {
            shared,
            send: None,
            jar: jar.map(Box::new),
        }
    }

    /// Makes `self.send` a handle on a live connection to `origin`, opening
    /// one if there is none. Returns its generation.
    async fn handle(
        &mut self,
        w: &impl Runner,
        origin: usize,
        attempt: &mut Attempt,
    ) -> Result<u64, Failure> {
        let opening = match self.shared.acquire(origin).await {
            Acquired::Ready(generation) => {
                attempt.reused = true;
                if !matches!(&self.send, Some((o, g, _)) if *o == origin && *g == generation) {
                    let send = self.shared.handle(origin).expect("ready");
                    self.send = Some((origin, generation, send));
                }
                return Ok(generation);
            }
            Acquired::Open(opening) => opening,
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

    async fn once(
        &mut self,
        w: &impl Runner,
        out: &mut Outgoing<'_>,
        sender: usize,
        attempt: &mut Attempt,
    ) -> Result<Response, (Failure, Unprocessed)> {
        let plan = w.plan();
        let (origin, request) = out.parts(plan);
        let target = out.target();
        let generation = self
            .handle(w, origin, attempt)
            .await
            .map_err(|f| (f, Unprocessed::No))?;
        let (_, _, send) = self.send.as_mut().expect("handle() set it");
        let unsent = |e: &h2::Error| {
            (
                classify(e, ErrorKind::Write, None),
                unprocessed(e, generation),
            )
        };
        // Waits while the server's concurrent-stream limit is reached.
        poll_fn(|cx| send.poll_ready(cx))
            .await
            .map_err(|e| unsent(&e))?;
        let mut head = request.request();
        if let (Some(jar), Some(t)) = (&mut self.jar, target) {
            let url = &plan.cookie_urls[t as usize];
            attempt.cookie |= jar.add_to(head.headers_mut(), url);
        }
        attempt.sent = Some(w.mark_sent(sender));
        let (response, mut body_out) = send
            .send_request(head, request.body.is_empty())
            .map_err(|e| unsent(&e))?;
        if !request.body.is_empty() {
            // h2 queues what the flow-control window does not yet allow.
            body_out
                .send_data(request.body.clone(), true)
                .map_err(|e| unsent(&e))?;
        }
        attempt.bytes_out = request.bytes_out;
        let response = response.await.map_err(|e| {
            (
                classify(&e, ErrorKind::Read, None),
                unprocessed(&e, generation),
            )
        })?;
        attempt.first_byte = Some(w.now());
        if let (Some(jar), Some(t)) = (&mut self.jar, target) {
            jar.absorb_headers(response.headers(), &plan.cookie_urls[t as usize]);
        }
        let status = response.status().as_u16();
        out.copy_head(status, response.headers());
        let location = target
            .filter(|_| plan.http.follow > 0 && is_redirect(status))
            .map(|t| (t, location_of(&response)));
        // The worker's first response only (ab's "Server Software"): kept
        // once its body is in, as for HTTP/1.1.
        let server = w.wants_server().then(|| {
            response
                .headers()
                .get(http::header::SERVER)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_owned())
                .filter(|v| !v.is_empty())
        });
        let resp = read_body(response, 0, out.body_copy())
            .await
            .map_err(|f| (f, Unprocessed::No))?;
        if let Some(server) = server {
            w.note_server(server);
        }
        match location {
            Some((target, location)) => self
                .follow(w, target, resp, location, attempt)
                .await
                .map_err(|f| (f, Unprocessed::No)),
            None => Ok(resp),
        }
    }

    /// `--follow` over HTTP/2: each redirect is a new stream on the same
    /// connection (same origin only). The chain is one request.
    async fn follow(
        &mut self,
        w: &impl Runner,
        target: u32,
        mut resp: Response,
        mut location: String,
        attempt: &mut Attempt,
    ) -> Result<Response, Failure> {
        let plan = w.plan();
        let t = &plan.targets[target as usize];
        let prepared = &plan.h2_requests[target as usize];
        let mut chain = Redirects::new(t);
        while is_redirect(resp.status) {
            let same = chain.step(&plan.http, &location, resp.status, resp.bytes_in)?;
            if !same {
                // Refused by the configuration; a guard all the same.
                return Err(Failure::new(
                    ErrorKind::InvalidResponse,
                    format!(
                        "redirect to another origin, {}, over HTTP/2; drop --http2 to follow it",
                        chain.url
                    ),
                ));
            }
            let (mut req, send_body) = chain.hop_request(prepared, "HTTP/2")?;
            // With --cookies, the hop carries the jar's cookies for its URL
            // and keeps what its response sets, as a browser does.
            let cookie_url = self.jar.as_ref().map(|_| cookie_url(&chain.url));
            if let (Some(jar), Some(url)) = (&mut self.jar, &cookie_url) {
                attempt.cookie |= jar.add_to(req.headers_mut(), url);
            }
            let (_, _, send) = self.send.as_mut().expect("once() set it");
            let earlier = resp.bytes_in;
            let io = |e: h2::Error, kind| {
                let mut f = classify(&e, kind, None);
                f.bytes_in = earlier;
                f
            };
            poll_fn(|cx| send.poll_ready(cx))
                .await
                .map_err(|e| io(e, ErrorKind::Write))?;
            let (response, mut body_out) = send
                .send_request(req, !send_body)
                .map_err(|e| io(e, ErrorKind::Write))?;
            if send_body {
                body_out
                    .send_data(prepared.body.clone(), true)
                    .map_err(|e| io(e, ErrorKind::Write))?;
            }
            attempt.bytes_out += match send_body {
                true => prepared.bytes_out,
                false => prepared.bytes_out - prepared.body.len() as u64,
            };
            let response = response.await.map_err(|e| io(e, ErrorKind::Read))?;
            if let (Some(jar), Some(url)) = (&mut self.jar, &cookie_url) {
                jar.absorb_headers(response.headers(), url);
            }
            location = match is_redirect(response.status().as_u16()) {
                true => location_of(&response),
                false => String::new(),
            };
            resp = read_body(response, earlier, None).await?;
        }
        Ok(resp)
    }
}

/// Reads a response's body to the end, counting it and releasing flow
/// control capacity at once. `earlier` bytes of the same request (earlier
/// redirects) are added to `bytes_in`; `copy` (a scenario's step) keeps
/// the body.
async fn read_body(
    response: http::Response<h2::RecvStream>,
    earlier: u64,
    mut copy: Option<&mut Vec<u8>>,
) -> Result<Response, Failure> {
    let status = response.status().as_u16();
    let mut bytes_in = earlier + field_size(":status", 3) + header_block_size(response.headers());
    let mut body = response.into_body();
    let mut body_bytes = 0u64;
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(|e| {
            let mut f = classify(&e, ErrorKind::Read, Some(status));
            f.bytes_in = bytes_in;
            f
        })?;
        let n = chunk.len();
        if let Some(copy) = copy.as_deref_mut() {
            copy.extend_from_slice(&chunk);
        }
        body_bytes += n as u64;
        bytes_in += n as u64;
        let _ = body.flow_control().release_capacity(n);
    }
    Ok(Response {
        status,
        bytes_in,
        body_bytes,
        reusable: true,
    })
}

impl Transport for H2Sender {
    async fn attempt(
        &mut self,
        w: &impl Runner,
        target: u32,
        sender: usize,
        attempt: &mut Attempt,
    ) -> Result<Response, Failure> {
        self.send(w, &mut Outgoing::Target(target), sender, attempt)
            .await
    }

    fn reset(&mut self) {
        // The shared connection outlives a failed stream; if the connection
        // itself failed, its driver retires it.
    }
}

impl H2Sender {
    /// Sends `out` and reads its whole response, as [`Transport::attempt`]
    /// does a target's: a scenario's virtual user sends its steps here.
    pub(crate) async fn send(
        &mut self,
        w: &impl Runner,
        out: &mut Outgoing<'_>,
        sender: usize,
        attempt: &mut Attempt,
    ) -> Result<Response, Failure> {
        match self.once(w, out, sender, attempt).await {
            Ok(r) => Ok(r),
            Err((failure, Unprocessed::No)) => Err(failure),
            Err((_, unprocessed)) => {
                // The server refused the stream before processing it (a
                // graceful GOAWAY at its request limit or a reload, or
                // REFUSED_STREAM): RFC 9113 §8.7 makes it safe to send
                // again. Once, so a server refusing everything still shows
                // as errors; after a GOAWAY, on a new connection.
                if let Unprocessed::GoAway(generation) = unprocessed {
                    let origin = out.parts(w.plan()).0;
                    self.shared.retire(origin, generation);
                }
                *attempt = Attempt::default();
                self.once(w, out, sender, attempt).await.map_err(|(f, _)| f)
            }
        }
    }
}

/// Whether a failed request was refused unprocessed, and so may be retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unprocessed {
    No,
    /// RST_STREAM(REFUSED_STREAM): the connection still works.
    Stream,
    /// A graceful GOAWAY on connection generation `.0`: it takes no more.
    GoAway(u64),
}

/// Classifies an h2 error; `otherwise` is the kind for the phase it came
/// from (write before the request is out, read after).
fn classify(e: &h2::Error, otherwise: ErrorKind, status: Option<u16>) -> Failure {
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

/// Whether the server refused a stream it had not processed.
fn unprocessed(e: &h2::Error, generation: u64) -> Unprocessed {
    if !e.is_remote() {
        Unprocessed::No
    } else if e.is_go_away() && e.reason() == Some(h2::Reason::NO_ERROR) {
        Unprocessed::GoAway(generation)
    } else if e.is_reset() && e.reason() == Some(h2::Reason::REFUSED_STREAM) {
        Unprocessed::Stream
    } else {
        Unprocessed::No
    }
}
