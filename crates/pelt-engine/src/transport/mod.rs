//! Transports: how a sender gets one request answered.
//!
//! A *sender* is what the worker schedules: something that carries one
//! request at a time (an HTTP/1.1 connection, or one stream of an HTTP/2
//! or HTTP/3 connection). Its loop (take the next request, exchange it under
//! `--timeout`, record the sample) is the worker's and the same for every
//! protocol; what differs is behind [`Transport`]. A transport sees the
//! worker only as a [`Runner`], so this module and the transports below
//! it depend on the run plan and the connection code, never on the worker.
//!
//! Adding a transport is a module here implementing [`Transport`] (with
//! its wire module beside `h1`, `h2` and `h3`, if it needs one), plus the
//! line in `worker::senders::spawn_senders` that starts its senders for
//! its [`Protocol`](crate::plan::Protocol). `echo` (tests only) is one:
//! the worker's loops, and scenarios, run over it unchanged.
//!
//! - [`h1`]: HTTP/1.1, one connection per sender.
//! - [`h2`]: HTTP/2, `--streams` senders sharing a connection.
//! - [`h3`]: HTTP/3 over QUIC, `--streams` senders sharing a connection.
//! - [`ws`]: WebSocket (`ws://`, `wss://`): a connection per sender, a
//!   request per message.
//! - [`stream`]: what the HTTP/2 and HTTP/3 senders share.
//! - [`shared`]: the connections `--streams` senders share.
//! - [`dial`]: connecting, paced by `--connect-rate`.
//! - [`redirect`]: `--follow`'s redirect chain, the same for every
//!   protocol.

pub(crate) mod dial;
#[cfg(test)]
pub(crate) mod echo;
pub(crate) mod h1;
pub(crate) mod h2;
pub(crate) mod h3;
pub(crate) mod redirect;
pub(crate) mod shared;
pub(crate) mod stream;
#[cfg(test)]
mod tests;
pub(crate) mod ws;

use crate::conn::{Established, KernelClock, TcpCounts};
use crate::outcome::{Failure, Response};
use crate::plan::RunPlan;
use dial::ConnectGate;
use pelt_core::Nanos;
use std::cell::Cell;
use std::rc::Rc;

/// How a sender gets one request answered: the part that differs between
/// protocols (an HTTP/1.1 connection of its own, a stream on an HTTP/2 or
/// HTTP/3 connection shared with other senders). Pacing, timeouts,
/// recording and stopping are the worker's, the same for every transport;
/// a plain run's sender loop (`worker::senders`) and a scenario's virtual
/// user (`worker::flows`) drive any transport alike, through [`send`].
///
/// [`send`]: Transport::send
pub(crate) trait Transport {
    /// Sends `out` (a target's request, or a scenario step's) for sender
    /// `sender` and reads the whole response, noting in `attempt` how far
    /// it got. The caller bounds it by `--timeout` and may drop it at any
    /// await.
    async fn send(
        &mut self,
        w: &impl Runner,
        out: &mut Outgoing<'_>,
        sender: usize,
        attempt: &mut Attempt,
    ) -> Result<Response, Failure>;

    /// The attempt failed or timed out, or (a `-c` schedule) the sender
    /// goes inactive: drop whatever may be broken, or held open.
    fn reset(&mut self);

    /// The latest send's stream, if its response was one (`--stream`,
    /// `--llm`, or a type that names a stream): its events so far, read
    /// after the send ended, failed or timed out.
    fn streamed(&self) -> Option<pelt_core::stream::Tally> {
        None
    }

    /// Rate mode, as the run starts: opens the connection `target` would
    /// use, so that the first requests do not wait for connections opened
    /// one by one as the schedule reaches them. A failure is left for the
    /// first request to meet and count.
    async fn warm(&mut self, _w: &impl Runner, _target: u32) {}

    /// The sender is done (the run's end) or goes inactive (a `-c`
    /// schedule): ends its connection as its protocol asks (WebSocket's
    /// close handshake, bounded by half the run's grace); `reset` drops
    /// whatever is left.
    async fn finish(&mut self, _w: &impl Runner) {}
}

/// What a sender sends: a target's request, prepared before the run
/// (the plan's, by target), or a scenario step's, rendered for this
/// request, whose response head and body are copied out for its
/// extractors, checks and jar, and whose redirects are not followed.
/// A step comes by reference, so that a plain run's request, which every
/// sender's task holds room for, stays a number.
pub(crate) enum Outgoing<'a> {
    Target(u32),
    Step(&'a mut StepRequest<'a>),
}

/// A scenario step's request and where its response goes.
pub(crate) struct StepRequest<'a> {
    /// The origin it goes to (the plan's, by the step's target).
    pub origin: usize,
    /// The request as rendered: HTTP/1.1's bytes, head and body (with the
    /// user's cookies). HTTP/2 and HTTP/3 send its fields
    /// (`PreparedParts::from_rendered`).
    pub bytes: &'a [u8],
    /// The step's URL scheme.
    pub scheme: pelt_core::Scheme,
    /// Whether it is a HEAD request (its response has no body).
    pub head_request: bool,
    /// The response's head, as HTTP/1.1 writes it (status line and
    /// fields; for HTTP/2 and HTTP/3, `parts::write_head`).
    pub head: &'a mut Vec<u8>,
    /// The response's body, when the step reads it, without its
    /// transfer framing (HTTP/1.1's chunks decoded).
    pub body: Option<&'a mut Vec<u8>>,
    /// Set by the transport: whether the response has a `Set-Cookie`
    /// field (from its own parse, so the user's jar reads the head only
    /// then and nothing scans it for one).
    pub sets_cookie: &'a mut bool,
}

impl Outgoing<'_> {
    /// The target whose plain-run options apply (cookie jar, `--follow`):
    /// none for a scenario's step.
    fn target(&self) -> Option<u32> {
        match self {
            Outgoing::Target(t) => Some(*t),
            Outgoing::Step(_) => None,
        }
    }
}

/// The worker running a transport, as the transport sees it: the plan, the
/// run's clock, and where an attempt's milestones are noted.
pub(crate) trait Runner {
    /// The run plan: requests, origins, options.
    fn plan(&self) -> &RunPlan;

    /// Nanoseconds since the run's epoch.
    fn now(&self) -> Nanos {
        self.plan().epoch.elapsed().as_nanos() as Nanos
    }

    /// Notes that sender `sender` starts writing its request now (seen by
    /// the worker if the run ends before the response does); returns now.
    fn mark_sent(&self, sender: usize) -> Nanos;

    /// Records a new connection's phase times.
    fn record_connection(&self, est: &Established);

    /// Records a WebSocket upgrade, `ns` long (from its request written
    /// to its `101` read).
    fn record_ws_upgrade(&self, ns: u64);

    /// Counts a WebSocket connection that closed with `close`.
    fn record_ws_close(&self, close: pelt_core::ws::Close);

    /// Records a QUIC handshake by kind (`--0rtt` runs), `ns` long.
    fn record_handshake(&self, kind: pelt_core::handshake::Handshake, ns: u64);

    /// The worker's `--connect-rate` allowance.
    fn connect_gate(&self) -> &ConnectGate;

    /// The worker's open connections (see [`OpenConn`]).
    fn open_connections(&self) -> &Rc<ConnLedger>;

    /// Whether the worker still wants a response's `Server` header (ab's
    /// "Server Software"): only until its first complete response, so
    /// every later one costs a flag test and nothing more.
    fn wants_server(&self) -> bool;

    /// The first complete response's `Server` header, or `None` when it
    /// had none; either way the worker stops asking.
    fn note_server(&self, server: Option<String>);

    /// A streamed response's event arrived `at` on sender `sender`'s
    /// stream, `gap` after the stream's previous (none for its first):
    /// counted in the second it arrived in; `sent`: the time the server
    /// wrote in it (`--event-time`).
    fn record_event(&self, sender: usize, at: Nanos, gap: Option<u64>, sent: crate::events::SentAt);
}

/// A worker's connections: how many are open (the live views' gauge),
/// and the kernel's TCP counts of its HTTP/1.1 connections (quinn's
/// packet counts of its QUIC ones), read from each as it ends and from
/// those still open when the run does.
#[derive(Debug, Default)]
pub(crate) struct ConnLedger {
    open: Cell<u64>,
    /// Open connections' sockets (QUIC: connections), by id, for the
    /// counts at the end.
    sockets: std::cell::RefCell<std::collections::HashMap<u64, Watched>>,
    next_id: Cell<u64>,
    /// Counts of connections that ended and were not yet handed on.
    counts: Cell<TcpCounts>,
}

impl ConnLedger {
    /// Connections open now.
    pub fn open(&self) -> u64 {
        self.open.get()
    }

    /// The counts gathered since the last call, with those of the
    /// connections still open when `at_end`.
    pub fn take_counts(&self, at_end: bool) -> TcpCounts {
        let mut c = self.counts.take();
        if at_end {
            for watched in self.sockets.borrow().values() {
                c.add(watched.counts());
            }
            self.sockets.borrow_mut().clear();
        }
        c
    }
}

/// Holds one count in the worker's open connections while it lives: kept
/// beside a connection, it is dropped with it, however the connection
/// ends. For the live views' gauge, and (HTTP/1.1 over TCP, see
/// [`OpenConn::watch`]) the connection's TCP counts.
#[derive(Debug)]
pub(crate) struct OpenConn {
    ledger: Rc<ConnLedger>,
    socket: Option<u64>,
}

impl OpenConn {
    /// Counts a connection just opened by `w`.
    pub fn new(w: &impl Runner) -> OpenConn {
        let ledger = w.open_connections();
        ledger.open.set(ledger.open.get() + 1);
        OpenConn {
            ledger: ledger.clone(),
            socket: None,
        }
    }

    /// Also keeps the TCP counts of `stream`'s socket: read by
    /// [`OpenConn::settle`] when the connection ends, or at the run's end
    /// if it is still open then. The caller calls `settle` before the
    /// socket closes, so a registered descriptor is always its own.
    pub fn watch(self, stream: &crate::conn::Stream) -> OpenConn {
        match stream.tcp_fd() {
            Some(fd) => self.register(Watched::Tcp(fd)),
            None => self,
        }
    }

    /// Also keeps a QUIC connection's packet counts (quinn's: packets
    /// sent, and lost, which QUIC sends again in new packets), as
    /// [`OpenConn::watch`] keeps a TCP socket's.
    pub fn watch_quic(self, conn: &quinn::Connection) -> OpenConn {
        self.register(Watched::Quic(conn.clone()))
    }

    fn register(mut self, watched: Watched) -> OpenConn {
        let id = self.ledger.next_id.get();
        self.ledger.next_id.set(id + 1);
        self.ledger.sockets.borrow_mut().insert(id, watched);
        self.socket = Some(id);
        self
    }

    /// The connection is ending: its socket's counts go to the ledger.
    pub fn settle(&mut self) {
        if let Some(watched) = self
            .socket
            .take()
            .and_then(|id| self.ledger.sockets.borrow_mut().remove(&id))
        {
            let mut c = self.ledger.counts.get();
            c.add(watched.counts());
            self.ledger.counts.set(c);
        }
    }
}

/// What a connection's counts are read from.
#[derive(Debug)]
enum Watched {
    /// A TCP socket: the kernel's `TCP_INFO`.
    Tcp(std::os::fd::RawFd),
    /// A QUIC connection: quinn's path statistics (readable after it
    /// closed too).
    Quic(quinn::Connection),
}

impl Watched {
    fn counts(&self) -> Option<TcpCounts> {
        match self {
            Watched::Tcp(fd) => crate::conn::tcp_counts(*fd),
            Watched::Quic(conn) => {
                let path = conn.stats().path;
                Some(TcpCounts {
                    segs_out: path.sent_packets,
                    retrans: path.lost_packets,
                })
            }
        }
    }
}

impl Drop for OpenConn {
    fn drop(&mut self) {
        // Unregistered if still there: its socket may be closed already.
        if let Some(id) = self.socket.take() {
            self.ledger.sockets.borrow_mut().remove(&id);
        }
        self.ledger
            .open
            .set(self.ledger.open.get().saturating_sub(1));
    }
}

/// How far an attempt got before it finished, failed or timed out: the
/// parts of its sample that a failure or a timeout does not erase.
#[derive(Debug, Default)]
pub(crate) struct Attempt {
    /// When the request's first byte was written.
    pub sent: Option<Nanos>,
    /// When the response's first byte arrived.
    pub first_byte: Option<Nanos>,
    /// When the response's last byte arrived, by the kernel's stamp; `None`
    /// when the transport could not stamp it (the worker's clock then
    /// says when it was read).
    pub done: Option<Nanos>,
    /// Bytes written (every redirect hop's request included).
    pub bytes_out: u64,
    /// Whether it went on a connection that was already open.
    pub reused: bool,
    /// `--cookies`: whether it carried a `Cookie` header from the jar.
    pub cookie: bool,
    /// `--tx-stamps`: whether `sent` is the kernel's transmit stamp.
    pub tx_stamped: bool,
    /// Whether it was sent again on a fresh connection after a reused
    /// one closed without answering (HTTP/1.1, idempotent methods).
    pub retried: bool,
    /// Whether it was lost that way but not sent again (its method is
    /// not idempotent).
    pub lost_on_reuse: bool,
}

impl Attempt {
    /// Takes the response's first byte and end from the kernel's arrival
    /// stamps of its first and last bytes (`stamps`, real time: see
    /// `conn::StampedTcp`) rather than from the reads, as a late read is
    /// not a slow server. Returns the mapping to the run's clock and the
    /// first byte's time on it; `None`, leaving pelt's own clock to stand,
    /// for a stamp from before the request went out, which is not its
    /// response's (the kernel stamps some segments with 0 while it turns
    /// stamping on).
    pub fn stamped(&mut self, w: &impl Runner, stamps: (u64, u64)) -> Option<(KernelClock, Nanos)> {
        let now = w.now();
        let clock = KernelClock::at(now, || w.now());
        let (first, last) = (clock.run_time(stamps.0), clock.run_time(stamps.1));
        if first < self.sent.unwrap_or(0) {
            return None;
        }
        self.first_byte = Some(first.min(now));
        self.done = Some(last.clamp(first, now));
        Some((clock, first))
    }
}
