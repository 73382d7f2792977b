//! The HTTP/3 transport, on `h3` over `h3-quinn` (the wire side, 0-RTT
//! and error classification are `crate::h3`): streams as senders, as with
//! HTTP/2.
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
//! marks the request sent and writes it (see `h3::Opener`). A request the
//! server refused unprocessed (H3_REQUEST_REJECTED, or a GOAWAY that
//! did not cover it) is sent once more, as HTTP/2's REFUSED_STREAM is
//! (RFC 9114 §4.1.1, §5.2); one that never left because the connection
//! was closing goes to a new connection.
//!
//! Requests are the same `http` parts as HTTP/2's (`PreparedParts`),
//! with the same byte counts (header sections sized as HPACK sizes them;
//! QPACK's encoding is not reported by h3). A response's end is timed by
//! the kernel: the arrival of the latest datagram quinn had read from the
//! worker's socket when the body ended (`conn::udp_stamp`), so a sender
//! that ran late does not add its lateness to the server's service time.
//!
//! `--0rtt`: a connection to a server that gave a session ticket earlier
//! in the run is shared as soon as it is dialled (0-RTT), and requests
//! with safe methods go out with the handshake; others wait for it
//! (`h3::early`). If the server rejects the early data, it never saw those
//! requests (quinn fails their streams with `ZeroRttRejected`, and h3's
//! own control streams, opened in 0-RTT too, are lost with them): the
//! connection is closed and each such request is sent again, uncounted,
//! on a connection that does not try 0-RTT. `--no-keepalive`: each
//! request dials a connection of its own and closes it after the response.

use super::shared::SharedConns;
use super::stream::{StreamSender, Streams, Tries, Unprocessed};
use super::{Attempt, OpenConn, Runner};
use crate::conn::{connect_quic, Endpoints, KernelClock};
use crate::h3::early::{early_failed, Early, Fate};
use crate::h3::errors::StreamEnd;
use crate::h3::{no_error, Opener, RequestStream, SendRequest};
use crate::outcome::Failure;
use crate::session::Jar;
use bytes::{Buf, Bytes};
use pelt_core::handshake::Handshake;
use pelt_core::ErrorKind;
use std::future::poll_fn;
use std::rc::Rc;

/// Times a connection that was closing is left for a new one before the
/// request counts as failed: a request that never left is no retry, but
/// a server closing every connection at once must not loop forever.
const MAX_REDIRECTS_TO_NEW_CONNECTION: u32 = 3;

/// The QUIC connections that `--streams` consecutive senders share: at
/// most one live connection per origin, as for HTTP/2.
pub(crate) struct SharedQuic {
    conns: Rc<SharedConns<Handle>>,
    /// The worker's UDP sockets.
    endpoints: Rc<Endpoints>,
}

impl SharedQuic {
    /// A worker's maker of shared connections (one per `--streams`
    /// senders, or per virtual user), all on the worker's UDP socket per
    /// address family.
    pub fn on_one_socket(origins: usize) -> impl FnMut() -> Rc<SharedQuic> {
        let endpoints = Rc::new(Endpoints::default());
        move || {
            Rc::new(SharedQuic {
                conns: SharedConns::new(origins),
                endpoints: endpoints.clone(),
            })
        }
    }
}

/// What a sender needs of a live connection: h3's request handle, and a
/// stream opener of its own (its wait for credit is its own).
#[derive(Clone)]
struct Handle {
    send: SendRequest,
    opener: Opener,
    /// The QUIC connection, to close it (`--no-keepalive`).
    conn: quinn::Connection,
    /// Set while a 0-RTT connection's handshake runs, and after.
    early: Option<Rc<Early>>,
}

/// A sender that sends its requests as streams of a shared QUIC
/// connection.
pub(crate) type H3Sender = StreamSender<H3>;

/// HTTP/3's half of an [`H3Sender`].
pub(crate) struct H3 {
    shared: Rc<SharedQuic>,
    /// This sender's copy of the handle: `(origin, generation, handle)`.
    send: Option<(usize, u64, Handle)>,
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
        let h3 = H3 {
            shared,
            send: None,
            opened_early: None,
            no_early: false,
            previous: None,
        };
        StreamSender::with(h3, jar)
    }
}

impl H3 {
    /// The handle [`Streams::connect`] set.
    fn handle(&mut self) -> &mut Handle {
        &mut self.send.as_mut().expect("connect() set it").2
    }

    /// A failure of a request on this sender's connection as its 0-RTT
    /// handshake turned out: the server never saw a request sent as
    /// rejected 0-RTT data; one that went (or waited) on a connection whose
    /// handshake never completed failed to connect, as a full handshake
    /// with no answer does, not to read or write.
    async fn as_early(&self, (f, u): (Failure, Unprocessed)) -> (Failure, Unprocessed) {
        let Some(early) = self.send.as_ref().and_then(|(_, _, h)| h.early.clone()) else {
            return (f, u);
        };
        match early.fate().await {
            Fate::Rejected => (f, Unprocessed::EarlyRejected),
            Fate::Failed => (early_failed(f), Unprocessed::No),
            Fate::Accepted => (f, u),
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
            Fate::Rejected => w.record_handshake(Handshake::ZeroRttRejected, early.handshake_ns()),
            Fate::Failed => {}
        }
    }
}

/// `e`, a failure of the phase `kind`, with whether the server refused
/// the request unprocessed on connection `generation`.
fn failed(e: &h3::error::StreamError, kind: ErrorKind, generation: u64) -> (Failure, Unprocessed) {
    let end = StreamEnd::of(e);
    (
        end.failure(kind, 0),
        Unprocessed::of(end.refused(), generation),
    )
}

impl Streams for H3 {
    const NAME: &'static str = "HTTP/3";
    const FLAG: &'static str = "--http3";
    const VERSION: http::Version = http::Version::HTTP_3;
    type Pending = RequestStream;
    type Body = RequestStream;

    async fn connect(
        &mut self,
        w: &impl Runner,
        origin: usize,
        attempt: &mut Attempt,
    ) -> Result<u64, Failure> {
        let opening = match self.shared.conns.acquire_own(origin, &mut self.send).await {
            Ok(generation) => {
                attempt.reused = true;
                return Ok(generation);
            }
            Err(opening) => opening,
        };
        w.connect_gate().permit(w, true).await?;
        let plan = w.plan();
        let config = plan.quic.as_ref().expect("planned for HTTP/3");
        let zero_rtt = plan.http.zero_rtt;
        let (conn, est, accepted) = connect_quic(
            &self.shared.endpoints,
            &plan.origins[origin],
            config,
            plan.connect_timeout,
            zero_rtt && !std::mem::take(&mut self.no_early),
        )
        .await?;
        // Its packet counts feed the run's loss warning, as TCP's do.
        let open = OpenConn::new(w).watch_quic(&conn);
        let (mut driver, send, opener) = crate::h3::start(conn.clone()).await.map_err(|e| {
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
            w.record_handshake(Handshake::Full, est.connect_ns);
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
            let start = std::time::Instant::now() - std::time::Duration::from_nanos(est.connect_ns);
            let rejected = move || conns.retire(origin, generation);
            tokio::task::spawn_local(early.watch(
                conn,
                accepted,
                plan.connect_timeout,
                start,
                rejected,
            ));
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

    /// Opens the stream for the request, waiting while the server's
    /// stream credit is used up: before the request's clock starts.
    async fn ready(
        &mut self,
        method: &http::Method,
        generation: u64,
    ) -> Result<(), (Failure, Unprocessed)> {
        // 0-RTT data can be replayed by an attacker (RFC 8470): only safe
        // methods go with it; the others wait for the handshake.
        if let Some(early) = self.send.as_ref().and_then(|(_, _, h)| h.early.clone()) {
            if !method.is_safe() && early.fate().await == Fate::Rejected {
                let f = Failure::new(ErrorKind::Closed, "0-RTT rejected before the request left");
                return Err((f, Unprocessed::EarlyRejected));
            }
        }
        let opener = &mut self.handle().opener;
        let Err(e) = poll_fn(|cx| opener.poll_reserve(cx)).await else {
            return Ok(());
        };
        // Nothing was sent: a closed connection's request goes to a new
        // one.
        let f = Failure::new(
            ErrorKind::Closed,
            format!("the QUIC connection ended before the request could open a stream: {e}"),
        );
        Err(self.as_early((f, Unprocessed::Closing(generation))).await)
    }

    async fn send_request(
        &mut self,
        req: http::Request<()>,
        body: Option<&Bytes>,
        generation: u64,
    ) -> Result<RequestStream, (Failure, Unprocessed)> {
        let send = &mut self.handle().send;
        let sent = async {
            // The stream is reserved: this waits for no credit.
            let mut stream = send.send_request(req).await?;
            if let Some(body) = body {
                stream.send_data(body.clone()).await?;
            }
            stream.finish().await?;
            Ok::<_, h3::error::StreamError>(stream)
        };
        match sent.await {
            Ok(stream) => Ok(stream),
            Err(e) => Err(self
                .as_early(failed(&e, ErrorKind::Write, generation))
                .await),
        }
    }

    async fn response(
        &mut self,
        mut stream: RequestStream,
        generation: u64,
    ) -> Result<(http::Response<()>, RequestStream), (Failure, Unprocessed)> {
        match stream.recv_response().await {
            Ok(response) => Ok((response, stream)),
            Err(e) => Err(self.as_early(failed(&e, ErrorKind::Read, generation)).await),
        }
    }

    async fn chunk(
        stream: &mut RequestStream,
        status: u16,
        on_data: &mut impl FnMut(&[u8], bool),
    ) -> Result<Option<u64>, Failure> {
        let mut chunk = match stream.recv_data().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => return Ok(None),
            Err(e) => return Err(StreamEnd::of(&e).failure(ErrorKind::Read, status)),
        };
        let n = chunk.remaining() as u64;
        let mut first = true;
        while chunk.has_remaining() {
            let part = chunk.chunk();
            on_data(part, first);
            first = false;
            let len = part.len();
            chunk.advance(len);
        }
        Ok(Some(n))
    }

    /// The response is in: its time is the kernel's arrival of the latest
    /// datagram read from the worker's socket (never before the response's
    /// last packet, see `conn::udp_stamp`), not pelt's clock, when there
    /// is one from after the request went out.
    fn done(&self, w: &impl Runner, origin: usize, attempt: &mut Attempt) {
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

    fn again(&mut self, unprocessed: Unprocessed, tries: &Tries) -> bool {
        match unprocessed {
            Unprocessed::No => false,
            // It never left: a closing connection's request goes to a new
            // one, uncounted (a few times at most).
            Unprocessed::Closing(_) => tries.moved < MAX_REDIRECTS_TO_NEW_CONNECTION,
            // Rejected as 0-RTT data: unseen by the server, so sent again
            // on a connection that tries no 0-RTT (this one is closed).
            Unprocessed::EarlyRejected => {
                let again = tries.moved < MAX_REDIRECTS_TO_NEW_CONNECTION;
                self.no_early |= again;
                again
            }
            // Refused unprocessed (RFC 9114 §4.1.1, §5.2): safe to send
            // again, once, as HTTP/2's REFUSED_STREAM, so a server refusing
            // everything still shows as errors.
            Unprocessed::Refused(_) => tries.refused == 0,
        }
    }

    fn retire(&self, origin: usize, generation: u64) {
        self.shared.conns.retire(origin, generation);
    }

    async fn tried(&mut self, w: &impl Runner) {
        // Before any close: a 0-RTT handshake cut short by it would read
        // as rejected.
        self.record_early(w).await;
        if !w.plan().http.keepalive {
            self.close_own(w.plan().http.zero_rtt);
        }
    }
}
