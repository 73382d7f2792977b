//! The HTTP/1.1 transport: each sender owns one connection and sends one
//! request at a time on it, reopening it when the server closes it.

use super::dial::open;
use super::redirect::Redirects;
use super::{Attempt, OpenConn, Outgoing, Runner, Transport};
use crate::conn::{lookup_origin, KernelClock, Stream};
use crate::h1::{
    is_idempotent, read_response_copies, read_response_location, with_header, write_request,
    Copies, Events, NoEvents, RequestLine, FIRST_READ_BUF,
};
use crate::outcome::{is_redirect, write_error_kind, Failure, Response};
use crate::session::{jar::cookie_url, Jar};
use std::io;
use tokio::io::AsyncWriteExt;

/// HTTP/1.1: one connection, one request at a time.
pub(crate) struct H1Sender {
    conn: Option<Conn>,
    buf: Vec<u8>,
    /// `--follow` only: the last redirect's Location, and the redirected
    /// request (both reused, so following allocates only for the URL).
    location: Vec<u8>,
    redirect: Vec<u8>,
    /// `--cookies`: the sender's jar (kept when the connection is not),
    /// and room for a request with its cookies and a response's head.
    session: Option<Box<Session>>,
    /// Its stream reader, made at its first streamed response.
    events: Option<Box<crate::events::Tap>>,
}

/// A sender's session state (`--cookies`, `--login`).
#[derive(Debug, Default)]
struct Session {
    jar: Jar,
    request: Vec<u8>,
    head: Vec<u8>,
}

/// A request this long fits in one TCP segment on any common path (an
/// Ethernet MSS is 1,448 bytes with timestamps), so its transmit stamp is
/// its first byte's.
const ONE_SEGMENT: usize = 1_400;

/// The sender's open connection, and the origin it goes to.
#[derive(Debug)]
struct Conn {
    stream: Stream,
    origin: usize,
    _open: OpenConn,
}

impl Conn {
    /// `stream`, just opened to `origin` by `w`: counted open, its TCP
    /// counts watched.
    fn new(w: &impl Runner, stream: Stream, origin: usize) -> Conn {
        Conn {
            _open: OpenConn::new(w).watch(&stream),
            stream,
            origin,
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        // Before the fields drop: the socket is still open here.
        self._open.settle();
    }
}

impl H1Sender {
    /// A sender with no connection yet: it opens one for its first
    /// request. With a `jar` (`--cookies`), it sends back the cookies it
    /// is given.
    pub fn new(jar: Option<Jar>) -> H1Sender {
        H1Sender {
            conn: None,
            buf: vec![0u8; FIRST_READ_BUF],
            location: Vec::new(),
            redirect: Vec::new(),
            events: None,
            session: jar.map(|jar| {
                Box::new(Session {
                    jar,
                    ..Session::default()
                })
            }),
        }
    }

    /// Makes sure the sender holds a connection to `origin`: the one it
    /// has, unless it goes elsewhere or the server spoke on it unasked
    /// (mostly: closed it, as a keep-alive timeout does), else a new one
    /// (`unsent`: see [`open`]). Returns whether the connection is reused.
    /// Every request checks this way, a redirect hop too.
    async fn connect(
        &mut self,
        w: &impl Runner,
        origin: usize,
        unsent: bool,
    ) -> Result<bool, Failure> {
        if self
            .conn
            .as_mut()
            .is_some_and(|c| c.origin != origin || c.stream.has_spoken_unasked(&mut self.buf))
        {
            self.conn = None;
        }
        if self.conn.is_some() {
            return Ok(true);
        }
        let stream = open(w, &w.plan().origins[origin], unsent).await?;
        self.conn = Some(Conn::new(w, stream, origin));
        Ok(false)
    }

    /// `--follow`: follows `resp`'s redirects, up to the limit. The whole
    /// chain is one request: its time, bytes and final status.
    async fn follow(
        &mut self,
        w: &impl Runner,
        target: u32,
        mut resp: Response,
        attempt: &mut Attempt,
    ) -> Result<Response, Failure> {
        let plan = w.plan();
        let t = &plan.targets[target as usize];
        let origin = plan.target_origin[target as usize];
        let mut chain = Redirects::new(t);
        let mut bytes_in = resp.bytes_in;
        while is_redirect(resp.status) {
            let location = String::from_utf8_lossy(&self.location).into_owned();
            let same = chain.step(&plan.http, &location, resp.status, bytes_in)?;
            let line = RequestLine {
                method: chain.method,
                url: &chain.url,
                body: chain.body,
                keep_host: same,
            };
            let head = chain.method == "HEAD";
            // Another origin's connection, for this request only.
            let mut other;
            let stream = if same {
                // The target's own connection, reopened if the redirect
                // or the server since closed it.
                write_request(&mut self.redirect, t, &line, plan.keepalive);
                self.connect(w, origin, false).await?;
                &mut self.conn.as_mut().expect("connect() set it").stream
            } else {
                write_request(&mut self.redirect, t, &line, false);
                let o = lookup_origin(&chain.url, &plan.http).await?;
                other = open(w, &o, false).await?;
                &mut other
            };
            let hop = Hop::new(
                &self.redirect,
                &chain.url,
                self.session.as_deref_mut(),
                attempt,
            );
            let buf = &mut self.buf;
            let r = send_on(stream, hop, buf, head, &mut self.location, bytes_in).await?;
            if same && !(r.reusable && plan.keepalive) {
                self.conn = None;
            }
            bytes_in += r.bytes_in;
            resp = r;
        }
        resp.bytes_in = bytes_in;
        Ok(resp)
    }
}

impl Transport for H1Sender {
    async fn send(
        &mut self,
        w: &impl Runner,
        out: &mut Outgoing<'_>,
        sender: usize,
        attempt: &mut Attempt,
    ) -> Result<Response, Failure> {
        // Bytes the first try wrote, when there is a second.
        let mut earlier = None;
        loop {
            // One call site, so the common path's state machine is no
            // larger than before.
            let r = self.send_once(w, out, sender, attempt).await;
            if let Some(first) = earlier {
                attempt.bytes_out += first;
                return r;
            }
            match r {
                Err(f) if attempt.reused && lost_to_a_quiet_close(&f) => {
                    // The server (or a proxy) closed the idle connection
                    // as the request went out: nothing of it was
                    // answered. RFC 9112 §9.3.1 lets a client send an
                    // idempotent request again on a fresh connection, as
                    // browsers and curl do; once only, counted
                    // (`retried`), and the response time still runs from
                    // the first try. A scenario's step too: its user's
                    // flow goes on.
                    if !idempotent(w, out) {
                        attempt.lost_on_reuse = true;
                        return Err(f);
                    }
                    self.conn = None;
                    earlier = Some(std::mem::take(&mut attempt.bytes_out));
                    attempt.retried = true;
                    attempt.first_byte = None;
                    attempt.done = None;
                    attempt.tx_stamped = false;
                    attempt.cookie = false;
                }
                r => return r,
            }
        }
    }

    fn reset(&mut self) {
        self.conn = None;
    }

    fn streamed(&self) -> Option<pelt_core::stream::Tally> {
        crate::events::streamed(&self.events)
    }

    async fn warm(&mut self, w: &impl Runner, target: u32) {
        if self.conn.is_some() {
            return;
        }
        let plan = w.plan();
        let origin = plan.target_origin[target as usize];
        if let Ok(stream) = open(w, &plan.origins[origin], true).await {
            self.conn = Some(Conn::new(w, stream, origin));
        }
    }
}

/// Whether `out`'s method is idempotent (RFC 9110 §9.2.2), so that it may
/// be sent again: a target's, known before the run; a step's, read from
/// its rendered request line (its method may be a template).
fn idempotent(w: &impl Runner, out: &Outgoing<'_>) -> bool {
    match out {
        Outgoing::Target(t) => w.plan().requests[*t as usize].idempotent,
        Outgoing::Step(s) => {
            let method = s.bytes.split(|&b| b == b' ').next().unwrap_or_default();
            std::str::from_utf8(method).is_ok_and(is_idempotent)
        }
    }
}

/// Whether `f` is how a keep-alive race ends: the connection closed or
/// reset before a single response byte came back (a failure later than
/// that, or with a status, is the server's answer and stands).
fn lost_to_a_quiet_close(f: &Failure) -> bool {
    f.bytes_in == 0
        && f.status == 0
        && matches!(
            f.kind,
            pelt_core::ErrorKind::Closed | pelt_core::ErrorKind::Reset
        )
}

impl H1Sender {
    /// One try of [`Transport::send`]: connect (or reuse), send, read.
    async fn send_once(
        &mut self,
        w: &impl Runner,
        out: &mut Outgoing<'_>,
        sender: usize,
        attempt: &mut Attempt,
    ) -> Result<Response, Failure> {
        let plan = w.plan();
        // A target's request, prepared before the run (with the jar's
        // cookies, with --cookies); or a step's, rendered by its user with
        // the user's cookies.
        let (origin, mut bytes, head_request) = match out {
            Outgoing::Target(t) => {
                let request = &plan.requests[*t as usize];
                let origin = plan.target_origin[*t as usize];
                (origin, &request.bytes[..], request.head)
            }
            Outgoing::Step(s) => (s.origin, s.bytes, s.head_request),
        };
        crate::events::idle(&mut self.events);
        attempt.reused = self.connect(w, origin, true).await?;
        let c = self.conn.as_mut().expect("connect() set it");
        if let (Some(s), Outgoing::Target(t)) = (&mut self.session, &*out) {
            if let Some(line) = s.jar.header_line(&plan.cookie_urls[*t as usize]) {
                with_header(bytes, line, &mut s.request);
                bytes = &s.request;
                attempt.cookie = true;
            }
        }
        c.stream.clear_stamps();
        attempt.sent = Some(w.mark_sent(sender));
        c.stream
            .write_all(bytes)
            .await
            .map_err(|e| Failure::new(write_error_kind(&e), e.to_string()))?;
        // A no-op for plain TCP; TLS may hold a partial record until flushed.
        c.stream
            .flush()
            .await
            .map_err(|e| Failure::new(write_error_kind(&e), e.to_string()))?;
        attempt.bytes_out = bytes.len() as u64;
        let first_byte = &mut attempt.first_byte;
        let on_first = || *first_byte = Some(w.now());
        // A streamed response's events, timed by the kernel's arrival
        // stamps where the connection has them (see `StampedTcp`).
        let sent = attempt.sent.unwrap_or(0);
        let clock = |stamp: Option<u64>| {
            let now = w.now();
            stamp
                .map(|s| KernelClock::at(now, || w.now()).run_time(s))
                .filter(|&t| t >= sent)
                .map_or(now, |t| t.min(now))
        };
        let sink = |at, gap, sent| w.record_event(sender, at, gap, sent);
        let events = Some(Events {
            tap: &mut self.events,
            opts: &plan.http.streamed,
            arrival: |s: &Stream| s.stamps().map(|(_, last)| last),
            clock,
            sink,
        });
        let resp = match out {
            Outgoing::Step(s) => {
                // A scenario's step: its head, and its body if the step
                // reads it, copied out for its extractors, checks and its
                // user's jar; no redirect followed; not read as a stream.
                let copies = Copies {
                    location: None,
                    head: Some(&mut *s.head),
                    server: None,
                    sets_cookie: Some(&mut *s.sets_cookie),
                    body: s.body.as_deref_mut(),
                };
                read_response_copies(
                    &mut c.stream,
                    &mut self.buf,
                    head_request,
                    on_first,
                    copies,
                    None::<NoEvents<'_, _>>,
                )
                .await
            }
            Outgoing::Target(t) => {
                let cookie_url = &plan.cookie_urls[..];
                let t = *t as usize;
                let follow = plan.http.follow > 0;
                // The worker's first response: its `Server` header is
                // kept too (ab's "Server Software"), only once per worker.
                let mut server = None;
                let wants_server = w.wants_server();
                let copies = Copies {
                    location: follow.then_some(&mut self.location),
                    head: self.session.as_mut().map(|s| &mut s.head),
                    server: wants_server.then_some(&mut server),
                    sets_cookie: None,
                    body: None,
                };
                let r = read_response_copies(
                    &mut c.stream,
                    &mut self.buf,
                    head_request,
                    on_first,
                    copies,
                    events,
                )
                .await;
                if r.is_ok() {
                    if wants_server {
                        w.note_server(server);
                    }
                    if let Some(s) = &mut self.session {
                        s.jar.absorb(&s.head, &cookie_url[t]);
                    }
                }
                r
            }
        };
        let resp = resp?;
        // The kernel's arrival times, not the read's.
        let sent = attempt.sent.unwrap_or(0);
        if let Some((clock, first)) = c.stream.stamps().and_then(|s| attempt.stamped(w, s)) {
            // And the request's departure: the kernel's transmit stamp
            // rather than pelt's clock read before `write()` (17-29 us
            // earlier here at p50, more if preempted in between:
            // bench/wire.sh). The stamp is of the write's last segment, so
            // only a request that fits in one segment takes it.
            if attempt.bytes_out as usize <= ONE_SEGMENT {
                if let Some(tx) = c.stream.tx_stamp().map(|t| clock.run_time(t)) {
                    if (sent..=first).contains(&tx) {
                        attempt.sent = Some(tx);
                        attempt.tx_stamped = true;
                    }
                }
            }
        }
        if !(resp.reusable && plan.keepalive) {
            self.conn = None;
        }
        let follow = match out {
            Outgoing::Target(t) if plan.http.follow > 0 && is_redirect(resp.status) => Some(*t),
            _ => None,
        };
        if let Some(target) = follow {
            // The chain's later hops are timed by the worker's clock.
            attempt.done = None;
            // Boxed, once per redirected request: following's state is
            // larger than the rest of a request's, and a sender task holds
            // its largest state for the whole run (memory per connection).
            return Box::pin(self.follow(w, target, resp, attempt)).await;
        }
        Ok(resp)
    }
}

/// A redirect hop's request (its bytes and cookie counted in the
/// chain's [`Attempt`] as it is made): the serialised request, and with
/// `--cookies` the sender's jar, which adds its cookies for the hop's URL
/// and keeps the ones the hop's response sets, as a browser does (a login
/// answered by a redirect that sets the session cookie, for one).
struct Hop<'a> {
    request: &'a [u8],
    session: Option<(&'a mut Jar, &'a mut Vec<u8>, url::Url)>,
}

impl<'a> Hop<'a> {
    fn new(
        request: &'a [u8],
        url: &pelt_core::Url,
        session: Option<&'a mut Session>,
        attempt: &mut Attempt,
    ) -> Hop<'a> {
        let Some(Session {
            jar,
            request: with_cookies,
            head,
        }) = session
        else {
            attempt.bytes_out += request.len() as u64;
            return Hop {
                request,
                session: None,
            };
        };
        let url = cookie_url(url);
        let request = match jar.header_line(&url) {
            Some(line) => {
                with_header(request, line, with_cookies);
                attempt.cookie = true;
                &with_cookies[..]
            }
            None => request,
        };
        attempt.bytes_out += request.len() as u64;
        Hop {
            request,
            session: Some((jar, head, url)),
        }
    }
}

/// Writes a redirect `hop` and reads its response (with its Location),
/// after `earlier_bytes_in` bytes of the chain.
async fn send_on(
    stream: &mut Stream,
    hop: Hop<'_>,
    buf: &mut Vec<u8>,
    head: bool,
    location: &mut Vec<u8>,
    earlier_bytes_in: u64,
) -> Result<Response, Failure> {
    let earlier = |mut f: Failure| {
        f.bytes_in += earlier_bytes_in;
        f
    };
    let io_failure = |e: io::Error| earlier(Failure::new(write_error_kind(&e), e.to_string()));
    stream.write_all(hop.request).await.map_err(io_failure)?;
    stream.flush().await.map_err(io_failure)?;
    let r = match hop.session {
        Some((jar, response_head, url)) => {
            let copies = Copies {
                location: Some(location),
                head: Some(response_head),
                server: None,
                sets_cookie: None,
                body: None,
            };
            let r = read_response_copies(stream, buf, head, || {}, copies, None::<NoEvents<'_, _>>)
                .await;
            if r.is_ok() {
                jar.absorb(response_head, &url);
            }
            r
        }
        None => read_response_location(stream, buf, head, || {}, location).await,
    };
    r.map_err(earlier)
}
