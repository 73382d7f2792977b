//! The HTTP/3 transport, on `h3` over `h3-quinn`: streams as senders, as
//! with HTTP/2.
//!
//! One QUIC connection carries `--streams N` senders, each sending one
//! request at a time on a stream of its own. The first sender that needs
//! the connection opens it (its request carries the handshake time as
//! its connect time); the others wait for it, and a connection that ends
//! is reopened by the next sender that needs it. A task per connection
//! drives HTTP/3's control streams and retires the connection when it
//! closes. The worker's connections share its UDP socket (`Endpoints`).
//!
//! A request's clock starts when its stream is open: a sender first
//! reserves a stream within the server's stream credit (QUIC's
//! MAX_STREAMS; waiting for it is the client's queue, as HTTP/2's
//! SETTINGS_MAX_CONCURRENT_STREAMS is, not the server's service), then
//! marks the request sent and writes it (see [`Opener`]). A request the
//! server refused unprocessed (H3_REQUEST_REJECTED, or a GOAWAY that
//! did not cover it) is sent once more, as HTTP/2's REFUSED_STREAM is
//! (RFC 9114 §4.1.1, §5.2); one that never left because the connection
//! was closing goes to a new connection.
//!
//! Requests are the HTTP/2 transport's `http` parts (`PreparedH2`): the
//! same method, URI and headers, the same byte counts (header sections
//! sized as HPACK sizes them; QPACK's encoding is not reported by h3).
//! A response's end is timed by the kernel: the arrival of the latest
//! datagram quinn had read from the worker's socket when the body ended
//! (`conn::udp_stamp`), so a sender that ran late does not add its
//! lateness to the server's service time.
//!
//! `--0rtt`: a connection to a server that gave a session ticket earlier
//! in the run is shared as soon as it is dialled (0-RTT), and requests
//! with safe methods go out with the handshake; others wait for it
//! ([`Early`]). If the server rejects the early data, it never saw those
//! requests (quinn fails their streams with `ZeroRttRejected`, and h3's
//! own control streams, opened in 0-RTT too, are lost with them): the
//! connection is closed and each such request is sent again, uncounted,
//! on a connection that does not try 0-RTT. `--no-keepalive`: each
//! request dials a connection of its own and closes it after the response.

use super::redirect::{location_of, Redirects};
use super::shared::{Acquired, SharedConns};
use super::{Attempt, OpenConn, Outgoing, Runner, Transport};
use crate::conn::{connect_quic, Endpoints, KernelClock};
use crate::h2::{field_size, header_block_size};
use crate::outcome::{is_redirect, Failure, Response};
use crate::session::{jar::cookie_url, Jar};
use bytes::{Buf, Bytes};
use h3::quic::OpenStreams as _;
use pelt_core::handshake::Handshake;
use pelt_core::ErrorKind;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::poll_fn;
use std::rc::Rc;
use std::task::{Context, Poll};

type SendRequest = h3::client::SendRequest<Opener, Bytes>;
type BidiStream = h3_quinn::BidiStream<Bytes>;
type RequestStream = h3::client::RequestStream<BidiStream, Bytes>;

/// Streams a sender opened (within the server's stream credit) for its
/// next request, not yet taken by h3: a sender hands its stream to h3
/// with no await in between, so the queue is empty at every await point
/// but after a request h3 refused before taking its stream (the
/// connection closing), whose stream the next request takes.
type Reserved = Rc<RefCell<VecDeque<BidiStream>>>;

/// Times a connection that was closing is left for a new one before the
/// request counts as failed: a request that never left is no retry, but
/// a server closing every connection at once must not loop forever.
const MAX_REDIRECTS_TO_NEW_CONNECTION: u32 = 3;

/// h3's stream opener over quinn's, handing out a reserved stream first:
/// h3 opens a request's stream inside `send_request`, after pelt has
/// marked the request sent, so a wait for stream credit there would be
/// counted as service time. Senders open the stream themselves before
/// (`H3Sender::reserve`), and h3 takes it from here.
#[derive(Clone)]
pub(crate) struct Opener {
    inner: h3_quinn::OpenStreams,
    reserved: Reserved,
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
struct Quic {
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

/// Largest response header section accepted (decoded), as for HTTP/2
/// (`transport::h2`'s `MAX_HEADER_LIST`): beyond it a response is refused
/// and counted `invalid_response`.
const MAX_FIELD_SECTION: u64 = 64 * 1024;

/// The QUIC connections that `--streams` consecutive senders share: at
/// most one live connection per origin, as for HTTP/2.
pub(crate) struct SharedQuic {
    conns: Rc<SharedConns<Handle>>,
    /// The worker's UDP sockets.
    endpoints: Rc<Endpoints>,
}

/// What a sender needs of a live connection: h3's request handle, and a
/// stream opener of its own (its wait for credit is its own) with the
/// connection's [`Reserved`] streams.
#[derive(Clone)]
struct Handle {
    send: SendRequest,
    opener: Opener,
    /// The QUIC connection, to close it (`--no-keepalive`).
    conn: quinn::Connection,
    /// Set while a 0-RTT connection's handshake runs, and after.
    early: Option<Rc<Early>>,
}

/// What became of a 0-RTT connection's early data, known when its
/// handshake completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Accepted,
    /// The server completed the handshake without the early data.
    Rejected,
    /// The connection failed before its handshake completed.
    Failed,
}

/// A 0-RTT connection's [`Fate`], set by a task that awaits quinn's
/// `ZeroRttAccepted`, and the time its handshake took.
#[derive(Debug, Default)]
struct Early {
    fate: Cell<Option<Fate>>,
    handshake_ns: Cell<u64>,
    known: tokio::sync::Notify,
}

impl Early {
    /// Waits for the handshake's end (bounded by `--connect-timeout`).
    async fn fate(&self) -> Fate {
        loop {
            // Registered before the cell is read: a fate set in between
            // is not missed.
            let known = self.known.notified();
            if let Some(fate) = self.fate.get() {
                return fate;
            }
            known.await;
        }
    }
}

/// HTTP/3's code for a connection's graceful end (RFC 9114 §8.1).
fn no_error() -> quinn::VarInt {
    quinn::VarInt::from_u64(h3::error::Code::H3_NO_ERROR.value()).expect("a small code")
}

impl SharedQuic {
    pub fn new(origins: usize, endpoints: Rc<Endpoints>) -> Rc<SharedQuic> {
        Rc::new(SharedQuic {
            conns: SharedConns::new(origins),
            endpoints,
        })
    }
}

/// A sender that sends its requests as streams of a shared QUIC
/// connection.
pub(crate) struct H3Sender {
    shared: Rc<SharedQuic>,
    /// This sender's copy of the handle: `(origin, generation, handle)`.
    send: Option<(usize, u64, Handle)>,
    /// `--cookies`: this stream's jar, kept across new connections.
    jar: Option<Box<Jar>>,
    /// `--0rtt`: the 0-RTT connection this sender opened, whose handshake
    /// it records once its fate is known, with its connect time.
    opened_early: Option<(Rc<Early>, u64)>,
    /// `--0rtt`: the next connection this sender opens tries no 0-RTT (its
    /// request was rejected as 0-RTT once).
    no_early: bool,
    /// `--no-keepalive --0rtt`: the last connection, left open for its
    /// session ticket until the next one is done (see `close_own`).
    previous: Option<Handle>,
}

impl H3Sender {
    pub fn new(shared: Rc<SharedQuic>, jar: Option<Jar>) -> H3Sender {
        H3Sender {
            shared,
            send: None,
            jar: jar.map(Box::new),
            opened_early: None,
            no_early: false,
            previous: None,
        }
    }

    /// Makes `self.send` a handle on a live connection to `origin`,
    /// opening one if there is none; returns its generation.
    async fn handle(
        &mut self,
        w: &impl Runner,
        origin: usize,
        attempt: &mut Attempt,
    ) -> Result<u64, Failure> {
        let opening = match self.shared.conns.acquire(origin).await {
            Acquired::Ready(generation) => {
                attempt.reused = true;
                if !matches!(&self.send, Some((o, g, _)) if *o == origin && *g == generation) {
                    let handle = self.shared.conns.handle(origin).expect("ready");
                    self.send = Some((origin, generation, handle));
                }
                return Ok(generation);
            }
            Acquired::Open(opening) => opening,
        };
        w.connect_gate().permit(w, true).await?;
        let plan = w.plan();
        let config = plan.quic.as_ref().expect("planned for HTTP/3");
        let zero_rtt = plan.http.zero_rtt;
        let (quic, est, accepted) = connect_quic(
            &self.shared.endpoints,
            &plan.origins[origin],
            config,
            plan.connect_timeout,
            zero_rtt && !std::mem::take(&mut self.no_early),
        )
        .await?;
        let conn = quic.clone();
        // Its packet counts feed the run's loss warning, as TCP's do.
        let open = OpenConn::new(w).watch_quic(&quic);
        let quic = Quic {
            inner: h3_quinn::Connection::new(quic),
            reserved: Reserved::default(),
        };
        let opener = h3::quic::Connection::<Bytes>::opener(&quic);
        // h3's defaults but for grease (reserved frame and setting types
        // that test a peer's tolerance): a load test measures the server,
        // and sends only what it asks for.
        let (mut driver, send) = h3::client::builder()
            .max_field_section_size(MAX_FIELD_SECTION)
            .send_grease(false)
            .build(quic)
            .await
            .map_err(|e| {
                Failure::new(
                    ErrorKind::Connect,
                    format!(
                        "{}: HTTP/3 could not start on the QUIC connection: {e}",
                        plan.origins[origin].addr
                    ),
                )
            })?;
        w.record_connection(&est);
        if zero_rtt && accepted.is_none() {
            w.record_handshake(Handshake::OneRtt, est.connect_ns);
        }
        let early = accepted.is_some().then(|| Rc::new(Early::default()));
        let handle = Handle {
            send,
            opener,
            conn: conn.clone(),
            early: early.clone(),
        };
        let generation = opening.ready(handle.clone());
        if let (Some(accepted), Some(early)) = (accepted, early) {
            self.opened_early = Some((early.clone(), est.connect_ns));
            let conns = self.shared.conns.clone();
            let timeout = plan.connect_timeout;
            let start = std::time::Instant::now() - std::time::Duration::from_nanos(est.connect_ns);
            tokio::task::spawn_local(async move {
                let (accepted, timed_out) = match tokio::time::timeout(timeout, accepted).await {
                    Ok(accepted) => (accepted, false),
                    Err(_) => {
                        conn.close(no_error(), b"no QUIC handshake within the connect timeout");
                        (false, true)
                    }
                };
                // A rejection ends the handshake with the connection up
                // (or closed by h3, whose control streams it lost).
                let fate = match (accepted, conn.close_reason()) {
                    (true, _) => Fate::Accepted,
                    (false, None | Some(quinn::ConnectionError::LocallyClosed)) if !timed_out => {
                        Fate::Rejected
                    }
                    (false, _) => Fate::Failed,
                };
                early.handshake_ns.set(start.elapsed().as_nanos() as u64);
                if fate == Fate::Rejected {
                    // Its HTTP/3 layer went with the early data: no new
                    // request may take it.
                    conns.retire(origin, generation);
                    conn.close(no_error(), b"0-RTT rejected");
                }
                early.fate.set(Some(fate));
                early.known.notify_waiters();
            });
        }
        let conns = self.shared.conns.clone();
        tokio::task::spawn_local(async move {
            // Ends when the connection closes, however; its streams see
            // the error themselves. Counted open until then.
            let mut open = open;
            let _ = poll_fn(|cx| driver.poll_close(cx)).await;
            open.settle();
            conns.retire(origin, generation);
        });
        self.send = Some((origin, generation, handle));
        attempt.reused = false;
        Ok(generation)
    }

    /// Opens the stream for the next request, waiting while the server's
    /// stream credit is used up: before the request's clock starts.
    async fn reserve(&mut self, generation: u64) -> Result<(), (Failure, Unprocessed)> {
        let (_, _, handle) = self.send.as_mut().expect("handle() set it");
        let stream = poll_fn(|cx| handle.opener.inner.poll_open_bidi(cx))
            .await
            .map_err(|e| {
                // Nothing was sent: a closed connection's request goes to
                // a new one.
                let f = Failure::new(
                    ErrorKind::Closed,
                    format!(
                        "the QUIC connection ended before the request could open a stream: {e}"
                    ),
                );
                (f, Unprocessed::Closing(generation))
            })?;
        handle.opener.reserved.borrow_mut().push_back(stream);
        Ok(())
    }

    /// Sends `req` (with `body`, if any) on a new stream and reads its
    /// response head: the stream, for its body.
    async fn exchange(
        &mut self,
        req: http::Request<()>,
        body: Option<&Bytes>,
        earlier: u64,
        generation: u64,
    ) -> Result<(http::Response<()>, RequestStream), (Failure, Unprocessed)> {
        let (_, _, handle) = self.send.as_mut().expect("handle() set it");
        let io = |e: &h3::error::StreamError, kind| {
            let mut f = classify(e, kind, 0);
            f.bytes_in = earlier;
            (f, unprocessed(e, generation))
        };
        // The stream is reserved: this waits for no credit.
        let mut stream = handle
            .send
            .send_request(req)
            .await
            .map_err(|e| io(&e, ErrorKind::Write))?;
        if let Some(body) = body {
            stream
                .send_data(body.clone())
                .await
                .map_err(|e| io(&e, ErrorKind::Write))?;
        }
        stream
            .finish()
            .await
            .map_err(|e| io(&e, ErrorKind::Write))?;
        let response = stream
            .recv_response()
            .await
            .map_err(|e| io(&e, ErrorKind::Read))?;
        Ok((response, stream))
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
        let mut head = request.request();
        let early = self.send.as_ref().and_then(|(_, _, h)| h.early.clone());
        // 0-RTT data can be replayed by an attacker (RFC 8470): only safe
        // methods go with it; the others wait for the handshake.
        if let Some(early) = &early {
            if !head.method().is_safe() && early.fate().await == Fate::Rejected {
                let f = Failure::new(ErrorKind::Closed, "0-RTT rejected before the request left");
                return Err((f, Unprocessed::EarlyRejected));
            }
        }
        let rejected = |(f, u): (Failure, Unprocessed)| async move {
            match &early {
                Some(e) => match e.fate().await {
                    Fate::Rejected => (f, Unprocessed::EarlyRejected),
                    // The request went as 0-RTT data (or waited for the
                    // handshake) on a connection whose handshake never
                    // completed: it failed to connect, as a full
                    // handshake with no answer does, not to read or write.
                    Fate::Failed => (early_failed(f), Unprocessed::No),
                    Fate::Accepted => (f, u),
                },
                None => (f, u),
            }
        };
        if let Err(e) = self.reserve(generation).await {
            return Err(rejected(e).await);
        }
        *head.version_mut() = http::Version::HTTP_3;
        if let (Some(jar), Some(t)) = (&mut self.jar, target) {
            let url = &plan.cookie_urls[t as usize];
            attempt.cookie |= jar.add_to(head.headers_mut(), url);
        }
        attempt.sent = Some(w.mark_sent(sender));
        let body = (!request.body.is_empty()).then_some(&request.body);
        let (response, mut stream) = match self.exchange(head, body, 0, generation).await {
            Ok(exchanged) => exchanged,
            // The server never saw a request sent as rejected 0-RTT data.
            Err(e) => return Err(rejected(e).await),
        };
        attempt.bytes_out = request.bytes_out;
        attempt.first_byte = Some(w.now());
        if let (Some(jar), Some(t)) = (&mut self.jar, target) {
            jar.absorb_headers(response.headers(), &plan.cookie_urls[t as usize]);
        }
        let status = response.status().as_u16();
        out.copy_head(status, response.headers());
        let location = target
            .filter(|_| plan.http.follow > 0 && is_redirect(status))
            .map(|t| (t, location_of(&response)));
        // The worker's first response only (ab's "Server Software").
        let server = w.wants_server().then(|| {
            response
                .headers()
                .get(http::header::SERVER)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_owned())
                .filter(|v| !v.is_empty())
        });
        let resp = read_body(&mut stream, &response, 0, out.body_copy())
            .await
            .map_err(|f| (f, Unprocessed::No))?;
        if location.is_none() {
            self.stamp_done(w, origin, attempt);
        }
        if let Some(server) = server {
            w.note_server(server);
        }
        match location {
            Some((target, location)) => self
                .follow(w, target, resp, location, attempt, generation)
                .await
                .map_err(|f| (f, Unprocessed::No)),
            None => Ok(resp),
        }
    }

    /// `--no-keepalive`: a connection per request, retired once its
    /// request is done, however it ended. With `--0rtt` it is closed one
    /// request later: servers (quic-go's Caddy) answer a 0-RTT request
    /// before their handshake ends and send the session ticket after,
    /// so a connection closed at its response would often leave without
    /// one, and the next connection but one would have none to resume.
    fn close_own(&mut self, zero_rtt: bool) {
        if let Some((origin, generation, handle)) = self.send.take() {
            self.shared.conns.retire(origin, generation);
            // h3 closes a connection when its last handle goes: the kept
            // one holds it open.
            let done = match zero_rtt {
                true => self.previous.replace(handle),
                false => Some(handle),
            };
            if let Some(done) = done {
                done.conn.close(no_error(), b"");
            }
        }
    }

    /// `--0rtt`: records the handshake of the 0-RTT connection this sender
    /// opened, once its fate is known (by the end of its first request, as
    /// a rejection fails that request and an accepted handshake ends
    /// before its response can be read).
    async fn record_early(&mut self, w: &impl Runner) {
        let Some((early, connect_ns)) = self.opened_early.take() else {
            return;
        };
        match early.fate().await {
            Fate::Accepted => w.record_handshake(Handshake::ZeroRttAccepted, connect_ns),
            Fate::Rejected => {
                w.record_handshake(Handshake::ZeroRttRejected, early.handshake_ns.get())
            }
            Fate::Failed => {}
        }
    }

    /// The response is in: its time is the kernel's arrival of the latest
    /// datagram read from the worker's socket (never before the response's
    /// last packet, see `conn::udp_stamp`), not pelt's clock, when there
    /// is one from after the request went out. A redirect chain's hops
    /// are timed by pelt's clock, as over HTTP/1.1.
    fn stamp_done(&self, w: &impl Runner, origin: usize, attempt: &mut Attempt) {
        let crate::conn::Addr::Tcp(addr) = &w.plan().origins[origin].addr else {
            return;
        };
        let Some(stamp) = self.shared.endpoints.latest_stamp(addr) else {
            return;
        };
        let now = w.now();
        let done = KernelClock::at(now, || w.now()).run_time(stamp);
        if done >= attempt.sent.unwrap_or(now) {
            let done = done.min(now);
            attempt.done = Some(done);
            // The head came in no later than the body's end.
            attempt.first_byte = attempt.first_byte.map(|f| f.min(done));
        }
    }

    /// `--follow` over HTTP/3: each redirect is a new stream on the same
    /// connection (same origin only, as with HTTP/2). The chain is one
    /// request.
    async fn follow(
        &mut self,
        w: &impl Runner,
        target: u32,
        mut resp: Response,
        mut location: String,
        attempt: &mut Attempt,
        generation: u64,
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
                        "redirect to another origin, {}, over HTTP/3; drop --http3 to follow it",
                        chain.url
                    ),
                ));
            }
            let (mut req, send_body) = chain.hop_request(prepared, "HTTP/3")?;
            *req.version_mut() = http::Version::HTTP_3;
            let cookie_url = self.jar.as_ref().map(|_| cookie_url(&chain.url));
            if let (Some(jar), Some(url)) = (&mut self.jar, &cookie_url) {
                attempt.cookie |= jar.add_to(req.headers_mut(), url);
            }
            let earlier = resp.bytes_in;
            let body = send_body.then_some(&prepared.body);
            // A redirect's hop is part of one request: its refusal is
            // no retry.
            self.reserve(generation).await.map_err(|(f, _)| f)?;
            let (response, mut stream) = self
                .exchange(req, body, earlier, generation)
                .await
                .map_err(|(f, _)| f)?;
            attempt.bytes_out += match send_body {
                true => prepared.bytes_out,
                false => prepared.bytes_out - prepared.body.len() as u64,
            };
            if let (Some(jar), Some(url)) = (&mut self.jar, &cookie_url) {
                jar.absorb_headers(response.headers(), url);
            }
            location = match is_redirect(response.status().as_u16()) {
                true => location_of(&response),
                false => String::new(),
            };
            resp = read_body(&mut stream, &response, earlier, None).await?;
        }
        Ok(resp)
    }
}

/// Reads a response's body to the end, counting it. `earlier` bytes of
/// the same request (earlier redirects) are added to `bytes_in`; `copy`
/// (a scenario's step) keeps the body.
async fn read_body(
    stream: &mut RequestStream,
    response: &http::Response<()>,
    earlier: u64,
    mut copy: Option<&mut Vec<u8>>,
) -> Result<Response, Failure> {
    let status = response.status().as_u16();
    let mut bytes_in = earlier + field_size(":status", 3) + header_block_size(response.headers());
    let mut body_bytes = 0u64;
    loop {
        match stream.recv_data().await {
            Ok(Some(mut chunk)) => {
                let n = chunk.remaining() as u64;
                if let Some(copy) = copy.as_deref_mut() {
                    while chunk.has_remaining() {
                        let part = chunk.chunk();
                        copy.extend_from_slice(part);
                        let len = part.len();
                        chunk.advance(len);
                    }
                }
                body_bytes += n;
                bytes_in += n;
            }
            Ok(None) => break,
            Err(e) => {
                let mut f = classify(&e, ErrorKind::Read, status);
                f.bytes_in = bytes_in;
                return Err(f);
            }
        }
    }
    Ok(Response {
        status,
        bytes_in,
        body_bytes,
        reusable: true,
    })
}

impl Transport for H3Sender {
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
        // The shared connection outlives a failed stream; if the
        // connection itself failed, its driver retires it.
    }
}

impl H3Sender {
    /// Sends `out` and reads its whole response, as [`Transport::attempt`]
    /// does a target's: a scenario's virtual user sends its steps here.
    pub(crate) async fn send(
        &mut self,
        w: &impl Runner,
        out: &mut Outgoing<'_>,
        sender: usize,
        attempt: &mut Attempt,
    ) -> Result<Response, Failure> {
        let mut redirected = 0;
        let mut retried = false;
        loop {
            let result = self.once(w, out, sender, attempt).await;
            // Before any close: a 0-RTT handshake cut short by it would
            // read as rejected.
            self.record_early(w).await;
            if !w.plan().http.keepalive {
                self.close_own(w.plan().http.zero_rtt);
            }
            let unprocessed = match result {
                Ok(r) => return Ok(r),
                Err((failure, Unprocessed::No)) => return Err(failure),
                Err((failure, unprocessed)) => match unprocessed {
                    // It never left: a closing connection's request goes
                    // to a new one, uncounted (a few times at most).
                    Unprocessed::Closing(_) if redirected < MAX_REDIRECTS_TO_NEW_CONNECTION => {
                        redirected += 1;
                        unprocessed
                    }
                    // Rejected as 0-RTT data: unseen by the server, so
                    // sent again on a connection that tries no 0-RTT
                    // (this one is closed).
                    Unprocessed::EarlyRejected if redirected < MAX_REDIRECTS_TO_NEW_CONNECTION => {
                        redirected += 1;
                        self.no_early = true;
                        unprocessed
                    }
                    // Refused unprocessed (RFC 9114 §4.1.1, §5.2): safe to
                    // send again, once, as HTTP/2's REFUSED_STREAM, so a
                    // server refusing everything still shows as errors.
                    Unprocessed::Rejected(_) if !retried => {
                        retried = true;
                        unprocessed
                    }
                    _ => return Err(failure),
                },
            };
            let origin = out.parts(w.plan()).0;
            if let Unprocessed::Closing(generation) = unprocessed {
                self.shared.conns.retire(origin, generation);
            }
            *attempt = Attempt::default();
        }
    }
}

/// `f`, a request's failure on a 0-RTT connection whose handshake never
/// completed, counted as `connect`.
fn early_failed(f: Failure) -> Failure {
    Failure {
        kind: ErrorKind::Connect,
        detail: format!(
            "the resumed (0-RTT) QUIC handshake never completed: {}; \
             does an HTTP/3 server still listen on this UDP port?",
            f.detail
        ),
        ..f
    }
}

/// Whether a failed request was refused unprocessed, and so may be sent
/// again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unprocessed {
    No,
    /// H3_REQUEST_REJECTED on connection generation `.0` (the server did
    /// no processing; the connection may still work).
    Rejected(u64),
    /// Connection generation `.0` was closing (GOAWAY) or closed before
    /// the request's stream was opened or its headers accepted: nothing
    /// of it was processed; a new connection takes it.
    Closing(u64),
    /// Sent as 0-RTT data the server rejected (so never saw), or held
    /// back for a handshake that rejected it: a connection without 0-RTT
    /// takes it.
    EarlyRejected,
}

/// Whether the server refused a stream it had not processed. Called
/// only before a response head arrived.
fn unprocessed(e: &h3::error::StreamError, generation: u64) -> Unprocessed {
    use h3::error::ConnectionError as C;
    use h3::error::StreamError as S;
    use h3::quic::ConnectionErrorIncoming as I;
    match e {
        S::RemoteTerminate { code, .. } if *code == h3::error::Code::H3_REQUEST_REJECTED => {
            Unprocessed::Rejected(generation)
        }
        S::RemoteClosing { .. } => Unprocessed::Closing(generation),
        // A graceful close (after GOAWAY, RFC 9114 §5.2): the server
        // finished what it took before closing, so a request still
        // without a response was not taken (it crossed the GOAWAY).
        S::ConnectionError {
            0:
                C::Remote {
                    0: I::ApplicationClose { error_code },
                    ..
                },
            ..
        } if h3::error::Code::from(*error_code) == h3::error::Code::H3_NO_ERROR => {
            Unprocessed::Closing(generation)
        }
        _ => Unprocessed::No,
    }
}

/// Classifies an h3 stream error; `otherwise` is the kind for the phase
/// it came from (write before the request is out, read after).
fn classify(e: &h3::error::StreamError, otherwise: ErrorKind, status: u16) -> Failure {
    use h3::error::StreamError as S;
    let (kind, detail) = match e {
        S::RemoteTerminate { code, .. } => (
            ErrorKind::Reset,
            format!("the server reset the stream ({code})"),
        ),
        S::RemoteClosing { .. } => (
            ErrorKind::Closed,
            "the server is closing the connection (GOAWAY) and took no new stream".to_string(),
        ),
        S::ConnectionError { 0: c, .. } => connection_failure(c, otherwise),
        S::StreamError { code, reason, .. } => (
            ErrorKind::InvalidResponse,
            format!("not valid HTTP/3 ({code}: {reason}); does the server speak HTTP/3?"),
        ),
        other => (otherwise, other.to_string()),
    };
    Failure {
        kind,
        detail,
        bytes_in: 0,
        status,
    }
}

/// Classifies the end of a connection as its streams see it.
fn connection_failure(e: &h3::error::ConnectionError, otherwise: ErrorKind) -> (ErrorKind, String) {
    use h3::error::ConnectionError as C;
    use h3::quic::ConnectionErrorIncoming as I;
    match e {
        C::Remote {
            0: I::ApplicationClose { error_code },
            ..
        } => {
            let code = h3::error::Code::from(*error_code);
            match code == h3::error::Code::H3_NO_ERROR {
                true => (
                    ErrorKind::Closed,
                    "the server closed the QUIC connection".to_string(),
                ),
                false => (
                    ErrorKind::Reset,
                    format!("the server closed the QUIC connection with {code}"),
                ),
            }
        }
        C::Remote { 0: I::Timeout, .. } | C::Timeout { .. } => (
            ErrorKind::Read,
            "the QUIC connection timed out: no packet from the server within its idle timeout"
                .to_string(),
        ),
        other => (otherwise, format!("the QUIC connection failed: {other}")),
    }
}
