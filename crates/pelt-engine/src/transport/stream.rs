//! What the HTTP/2 and HTTP/3 senders share: a sender is one stream at a
//! time on a connection that `--streams` senders share. A
//! [`StreamSender`] holds the sender's cookie jar and its protocol's half
//! (a [`Streams`]: the connection, stream credit, sending, reading), and
//! does the rest once for both: the request (a target's parts prepared
//! before the run, or a scenario step's made from its rendered bytes), the
//! jar, the attempt's milestones, the response counted (its head and body
//! copied out for a step), the worker's `Server` header, and `--follow`'s
//! redirect chain, and the one [`Transport`] for both: tries of
//! [`StreamSender::once`], again while the protocol's retry policy
//! ([`Streams::again`]) allows a request refused unprocessed.

use super::redirect::{location_of, Redirects};
use super::{Attempt, Outgoing, Runner, Transport};
use crate::events::Tap;
use crate::outcome::{is_redirect, Failure, Refused, Response};
use crate::parts::{field_size, header_block_size, write_head, PreparedParts};
use crate::plan::RunPlan;
use crate::session::{jar::cookie_url, Jar};
use bytes::Bytes;
use pelt_core::stream::Framing;
use pelt_core::ErrorKind;
use std::borrow::Cow;

/// A protocol's half of a stream sender: what differs between HTTP/2 and
/// HTTP/3. Each step reports a failure already classified, with whether
/// the server refused the request unprocessed.
pub(crate) trait Streams {
    /// The protocol, as messages name it ("HTTP/2").
    const NAME: &'static str;
    /// The flag that asks for it, for messages that say what to drop.
    const FLAG: &'static str;
    /// The version its requests carry.
    const VERSION: http::Version;
    /// A request sent, its response head awaited.
    type Pending;
    /// A response's body, being read.
    type Body;

    /// Makes sure the sender has a live connection to `origin`, opening
    /// one if there is none (its connect time recorded), and notes in
    /// `attempt` whether it was reused; returns the connection's
    /// generation (see `shared::SharedConns`).
    async fn connect(
        &mut self,
        w: &impl Runner,
        origin: usize,
        attempt: &mut Attempt,
    ) -> Result<u64, Failure>;

    /// Waits for the server's credit for one more stream: before the
    /// request's clock starts, so a wait for credit is send lag, not
    /// service time. `method`: the request's.
    async fn ready(
        &mut self,
        method: &http::Method,
        generation: u64,
    ) -> Result<(), (Failure, Unprocessed)>;

    /// Sends `req` with `body` (`None`: none) on a new stream.
    async fn send_request(
        &mut self,
        req: http::Request<()>,
        body: Option<&Bytes>,
        generation: u64,
    ) -> Result<Self::Pending, (Failure, Unprocessed)>;

    /// Reads the response head.
    async fn response(
        &mut self,
        pending: Self::Pending,
        generation: u64,
    ) -> Result<(http::Response<()>, Self::Body), (Failure, Unprocessed)>;

    /// The body's next part (a DATA frame): its length, its bytes handed
    /// to `on_data` (with whether they are the frame's first), `None` at
    /// the body's end. A failure is classified with `status`.
    async fn chunk(
        body: &mut Self::Body,
        status: u16,
        on_data: &mut impl FnMut(&[u8], bool),
    ) -> Result<Option<u64>, Failure>;

    /// The response is in (not a redirect's hop, which pelt's clock
    /// times): a protocol that can time its end by the kernel does it
    /// here (`attempt.done`).
    fn done(&self, _w: &impl Runner, _origin: usize, _attempt: &mut Attempt) {}

    /// The retry policy: whether a request refused `unprocessed` (never
    /// `No`) is sent again, after the earlier `tries` of the same request.
    fn again(&mut self, unprocessed: Unprocessed, tries: &Tries) -> bool;

    /// Forgets connection `generation` of `origin` (it was closing), so
    /// the next request opens a new one.
    fn retire(&self, origin: usize, generation: u64);

    /// After each try, whatever its outcome.
    async fn tried(&mut self, _w: &impl Runner) {}
}

/// A request's earlier tries, by why it was sent again.
#[derive(Debug, Default)]
pub(crate) struct Tries {
    /// Refused on a connection that may still work.
    pub refused: u32,
    /// On a new connection: the last one was closing, or rejected 0-RTT.
    pub moved: u32,
}

/// Whether a failed request was refused unprocessed, and so may be sent
/// again; each protocol's [`Transport`](super::Transport) decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unprocessed {
    No,
    /// Refused on connection generation `.0`, which may still work
    /// (HTTP/2's REFUSED_STREAM, HTTP/3's H3_REQUEST_REJECTED).
    Refused(u64),
    /// Connection generation `.0` was closing (GOAWAY) or closed before
    /// the request was taken: a new connection takes it.
    Closing(u64),
    /// HTTP/3: sent as 0-RTT data the server rejected (so never saw), or
    /// held back for a handshake that rejected it: a connection without
    /// 0-RTT takes it.
    EarlyRejected,
}

impl Unprocessed {
    /// What the protocol's error said, on connection `generation`.
    pub(super) fn of(refused: Refused, generation: u64) -> Unprocessed {
        match refused {
            Refused::No => Unprocessed::No,
            Refused::Stream => Unprocessed::Refused(generation),
            Refused::Closing => Unprocessed::Closing(generation),
        }
    }
}

/// A sender of streams: the protocol's half and the sender's jar.
pub(crate) struct StreamSender<S> {
    pub(super) streams: S,
    /// `--cookies`: this stream's jar (a stream is the simulated user, as
    /// an HTTP/1.1 connection is), kept across new connections.
    jar: Option<Box<Jar>>,
    /// Its stream reader, made at its first streamed response.
    events: Option<Box<Tap>>,
}

/// The origin `out` goes to and its request as `http` parts: a target's,
/// prepared before the run, or a scenario step's, made from its rendered
/// bytes (per request: HTTP/2 and HTTP/3 allocate per request anyway).
/// `Err`: the step cannot be sent over `protocol` (an extracted value it
/// refuses in a header, say).
pub(super) fn prepare<'p>(
    out: &Outgoing<'_>,
    plan: &'p RunPlan,
    protocol: &str,
) -> Result<(usize, Cow<'p, PreparedParts>), Failure> {
    match out {
        Outgoing::Target(t) => Ok((
            plan.target_origin[*t as usize],
            Cow::Borrowed(&plan.http_parts[*t as usize]),
        )),
        Outgoing::Step(s) => {
            let scheme = s.scheme.name();
            match PreparedParts::from_rendered(s.bytes, scheme) {
                Ok(parts) => Ok((s.origin, Cow::Owned(parts))),
                Err(why) => Err(Failure::new(
                    ErrorKind::Write,
                    format!("cannot send this step over {protocol}: {why}"),
                )),
            }
        }
    }
}

impl Outgoing<'_> {
    /// A step's response arrived: copies its status and fields out, as an
    /// HTTP/1.1 head (what its extractors, checks and jar read).
    fn copy_head(&mut self, status: u16, headers: &http::HeaderMap) {
        if let Outgoing::Step(s) = self {
            write_head(status, headers, s.head);
            *s.sets_cookie = headers.contains_key(http::header::SET_COOKIE);
        }
    }

    /// Where a step's body goes, emptied first.
    fn body_copy(&mut self) -> Option<&mut Vec<u8>> {
        match self {
            Outgoing::Step(s) => {
                let b = s.body.as_deref_mut()?;
                b.clear();
                Some(b)
            }
            Outgoing::Target(_) => None,
        }
    }
}

impl<S: Streams> StreamSender<S> {
    /// A sender over `streams`; with a `jar` (`--cookies`), it sends back
    /// the cookies it is given.
    pub(super) fn with(streams: S, jar: Option<Jar>) -> StreamSender<S> {
        StreamSender {
            streams,
            jar: jar.map(Box::new),
            events: None,
        }
    }

    /// One try of `out` (its `request` to `origin`, from [`prepare`]):
    /// sends it and reads its whole response, following redirects of a
    /// target under `--follow`.
    pub(super) async fn once(
        &mut self,
        w: &impl Runner,
        origin: usize,
        request: &PreparedParts,
        out: &mut Outgoing<'_>,
        sender: usize,
        attempt: &mut Attempt,
    ) -> Result<Response, (Failure, Unprocessed)> {
        let plan = w.plan();
        crate::events::idle(&mut self.events);
        // A step carries the user's cookies in its rendered request, and
        // is not followed: a target's options apply to targets only.
        let target = out.target();
        let generation = self
            .streams
            .connect(w, origin, attempt)
            .await
            .map_err(|f| (f, Unprocessed::No))?;
        self.streams.ready(&request.method, generation).await?;
        let mut head = request.request(S::VERSION);
        if let (Some(jar), Some(t)) = (&mut self.jar, target) {
            let url = &plan.cookie_urls[t as usize];
            attempt.cookie |= jar.add_to(head.headers_mut(), url);
        }
        attempt.sent = Some(w.mark_sent(sender));
        let body = (!request.body.is_empty()).then_some(&request.body);
        let pending = self.streams.send_request(head, body, generation).await?;
        attempt.bytes_out = request.bytes_out;
        let (response, mut body) = self.streams.response(pending, generation).await?;
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
        // A target's streamed response is read as a stream (a step's is
        // not yet): `--stream`/`--llm`, or a 2xx whose type names one.
        let framing = plan.http.streamed.forced().or_else(|| {
            response
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| Framing::of_content_type(v.as_bytes()))
        });
        let tap = match framing.filter(|_| target.is_some() && response.status().is_success()) {
            Some(framing) => Some(match &mut self.events {
                Some(tap) => {
                    tap.restart(framing, status);
                    &mut **tap
                }
                // Once per sender: its parser's buffers are kept from then on.
                None => &mut **self.events.insert(Box::new(Tap::new(
                    framing,
                    &plan.http.streamed,
                    status,
                ))),
            }),
            None => None,
        };
        let mut sink = |at, gap, sent| w.record_event(sender, at, gap, sent);
        let events = tap.map(|tap| (tap, &mut sink, || w.now()));
        let resp = read_body::<S>(&mut body, &response, 0, out.body_copy(), events)
            .await
            .map_err(|f| (f, Unprocessed::No))?;
        if location.is_none() {
            self.streams.done(w, origin, attempt);
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

    /// `--follow`: each redirect is a new stream on the same connection
    /// (same origin only: another is refused by the configuration). The
    /// chain is one request: its time, every hop's bytes, the last status.
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
        let prepared = &plan.http_parts[target as usize];
        let mut chain = Redirects::new(t);
        while is_redirect(resp.status) {
            let same = chain.step(&plan.http, &location, resp.status, resp.bytes_in)?;
            if !same {
                // Refused by the configuration; a guard all the same.
                return Err(Failure::new(
                    ErrorKind::InvalidResponse,
                    format!(
                        "redirect to another origin, {}, over {}; drop {} to follow it",
                        chain.url,
                        S::NAME,
                        S::FLAG
                    ),
                ));
            }
            let (mut req, send_body) = chain.hop_request(prepared, S::NAME, S::VERSION)?;
            // With --cookies, the hop carries the jar's cookies for its URL
            // and keeps what its response sets, as a browser does.
            let cookie_url = self.jar.as_ref().map(|_| cookie_url(&chain.url));
            if let (Some(jar), Some(url)) = (&mut self.jar, &cookie_url) {
                attempt.cookie |= jar.add_to(req.headers_mut(), url);
            }
            let earlier = resp.bytes_in;
            // A hop is part of one request: its refusal is no retry.
            let failed = |(mut f, _): (Failure, Unprocessed)| {
                f.bytes_in += earlier;
                f
            };
            self.streams
                .ready(req.method(), generation)
                .await
                .map_err(failed)?;
            let body = send_body.then_some(&prepared.body);
            let pending = self
                .streams
                .send_request(req, body, generation)
                .await
                .map_err(failed)?;
            attempt.bytes_out += match send_body {
                true => prepared.bytes_out,
                false => prepared.bytes_out - prepared.body.len() as u64,
            };
            let (response, mut body) = self
                .streams
                .response(pending, generation)
                .await
                .map_err(failed)?;
            if let (Some(jar), Some(url)) = (&mut self.jar, &cookie_url) {
                jar.absorb_headers(response.headers(), url);
            }
            location = match is_redirect(response.status().as_u16()) {
                true => location_of(&response),
                false => String::new(),
            };
            resp = read_body::<S>(&mut body, &response, earlier, None, None::<Tapped<'_>>).await?;
        }
        Ok(resp)
    }
}

impl<S: Streams> Transport for StreamSender<S> {
    async fn send(
        &mut self,
        w: &impl Runner,
        out: &mut Outgoing<'_>,
        sender: usize,
        attempt: &mut Attempt,
    ) -> Result<Response, Failure> {
        let (origin, request) = prepare(out, w.plan(), S::NAME)?;
        let mut tries = Tries::default();
        loop {
            let result = self.once(w, origin, &request, out, sender, attempt).await;
            self.streams.tried(w).await;
            let unprocessed = match result {
                Ok(r) => return Ok(r),
                Err((failure, Unprocessed::No)) => return Err(failure),
                Err((failure, unprocessed)) => match self.streams.again(unprocessed, &tries) {
                    true => unprocessed,
                    false => return Err(failure),
                },
            };
            match unprocessed {
                Unprocessed::Refused(_) => tries.refused += 1,
                Unprocessed::Closing(generation) => {
                    self.streams.retire(origin, generation);
                    tries.moved += 1;
                }
                _ => tries.moved += 1,
            }
            *attempt = Attempt::default();
        }
    }

    fn reset(&mut self) {
        // The shared connection outlives a failed stream; if the connection
        // itself failed, its driver retires it.
    }

    fn streamed(&self) -> Option<pelt_core::stream::Tally> {
        crate::events::streamed(&self.events)
    }
}

/// The type of no tap (a redirect's hop).
type Tapped<'a> = (
    &'a mut Tap,
    &'a mut fn(pelt_core::Nanos, Option<u64>, crate::events::SentAt),
    fn() -> pelt_core::Nanos,
);

/// Reads a response's body to the end, counting it (header sections at
/// their HPACK size). `earlier` bytes of the same request (earlier
/// redirects) are added to `bytes_in`; `copy` (a scenario's step) keeps
/// the body; a stream's `events` are cut from it as its frames arrive.
async fn read_body<S: Streams>(
    body: &mut S::Body,
    response: &http::Response<()>,
    earlier: u64,
    mut copy: Option<&mut Vec<u8>>,
    mut events: Option<(
        &mut Tap,
        &mut impl FnMut(pelt_core::Nanos, Option<u64>, crate::events::SentAt),
        impl Fn() -> pelt_core::Nanos,
    )>,
) -> Result<Response, Failure> {
    let status = response.status().as_u16();
    let mut bytes_in = earlier + field_size(":status", 3) + header_block_size(response.headers());
    let mut body_bytes = 0u64;
    loop {
        let mut on_data = |data: &[u8], first: bool| {
            if let Some(copy) = copy.as_deref_mut() {
                copy.extend_from_slice(data);
            }
            if let Some((tap, sink, now)) = &mut events {
                if !data.is_empty() {
                    tap.feed(data, first, now(), *sink);
                }
            }
        };
        match S::chunk(body, status, &mut on_data).await {
            Ok(Some(n)) => {
                body_bytes += n;
                bytes_in += n;
            }
            Ok(None) => break,
            Err(mut f) => {
                f.bytes_in = bytes_in;
                return Err(f);
            }
        }
    }
    if let Some((tap, sink, now)) = events {
        tap.finish(now(), sink);
    }
    Ok(Response {
        status,
        bytes_in,
        body_bytes,
        reusable: true,
    })
}
