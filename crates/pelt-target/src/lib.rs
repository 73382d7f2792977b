//! pelt-target: the built-in HTTP/1.1 target server behind `pelt serve`,
//! and HTTP/3 on the same port number over UDP with
//! [`ServeConfig::http3`].
//!
//! A fast, predictable server for tests, demos and calibrating the load
//! generator. Each request picks its own status, body size, delay, framing
//! and fault from the query string (see [`QUERY_HELP`]); a server-wide
//! [`Pause`] models a stop-the-world stall for coordinated-omission tests.
//!
//! It shares small machines with the load generator, so the per-request
//! path is kept cheap: a hand-rolled HTTP/1.1 loop on tokio and `httparse`
//! (no hyper), one input and one output buffer per connection, bodies
//! written from one static filler buffer, and pipelined responses coalesced
//! into single writes.
//!
//! ```no_run
//! use pelt_target::{ServeConfig, Server};
//!
//! let server = Server::bind("127.0.0.1:0".parse().unwrap(), ServeConfig::default())?;
//! let handle = server.spawn()?;
//! println!("serving on http://{}/?size=1k&delay=5ms", handle.local_addr());
//! # Ok::<(), std::io::Error>(())
//! ```

#![warn(missing_docs)]

mod conn;
mod h3;
mod query;
mod timer;
mod wire;
mod ws;

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;

/// Long help for `pelt serve --help`: every query parameter, with examples.
pub const QUERY_HELP: &str = "\
PER-REQUEST CONTROL

Any path works; the query string controls the response. Unknown parameters
are ignored. A bad value gets a 400 whose one-line body names the parameter
and what it accepts.

  status=CODE      Response status, 200-999 (default 200). 1xx is refused.
                   204 and 304 never carry a body.
  size=BYTES       Body size in bytes; k and m suffixes are 1024 and 1024^2
                   (default: the 2-byte body \"ok\"). At most the server's
                   max body (16 MiB unless configured otherwise).
  size_max=BYTES   With size: a random size in [size, size_max] per request
                   (size defaults to 0). Provokes length-mismatch checks.
  delay=DUR        Wait before answering: 500us, 10ms, 1.5s (max 60s).
  delay_max=DUR    With delay: a random delay in [delay, delay_max].
  work=DUR         Spin on the serving thread for DUR before answering, as
                   a CPU-bound handler would (max 1s): other requests on
                   that thread wait, so with --threads 1 the server holds
                   at most 1/DUR requests per second (work=1ms: 1,000).
  chunked=1        Send the body with Transfer-Encoding: chunked (4 KiB
                   chunks) instead of Content-Length. HTTP/1.0 clients get
                   Content-Length regardless.
  fault=KIND       Misbehave on purpose (after any delay):
                     close    headers with the full Content-Length, half
                              the body, then EOF
                     reset    read the request, then reset the connection
                              (the client sees ECONNRESET, no bytes)
                     invalid  answer with bytes that are not HTTP, then EOF
                     stall    never answer; close after stall=DUR
                     hangup   the full response, kept alive, then EOF
                              (an idle keep-alive timeout, at once)
                     extra    the full response, then 20 ms later a
                              second one nobody asked for (a 503)
  stall=DUR        How long fault=stall holds the connection (default and
                   max 60s).
  location=URL     Send a Location header with this value, percent-decoded
                   (so it can carry a query: /b%3Fstatus%3D302); pair it
                   with status=301|302|303|307|308. At most 256 bytes.
  push=DUR         WebSocket only: send a text message every DUR (100us to
                   60s), {\"seq\":N,\"ts\":UNIX_SECONDS}, instead of echoing.
  count=N          With push: N messages, then a close (1000).

WEBSOCKET

A request with Upgrade: websocket and a Sec-WebSocket-Key is answered 101
(RFC 6455) on any path. The connection then echoes each message as it
came (text or binary, fragments as fragments) after delay (or a random
delay up to delay_max), or with push=DUR sends messages of its own and
drops what it reads. Pings get pongs; a close gets a close. An unmasked
or malformed client frame is failed with a close of 1002, one longer
than the max body with 1009.

  ws://127.0.0.1:8080/?delay=2ms     echo each message after 2 ms
  ws://127.0.0.1:8080/?push=10ms&count=500
                                     500 timestamped messages, 10 ms apart

EXAMPLES

  /                                  200, body \"ok\"
  /api?status=503&delay=50ms         503 after 50 ms
  /?size=1k&size_max=4k              1-4 KiB body, random per request
  /?delay=5ms&delay_max=200ms        latency spread between 5 and 200 ms
  /?work=500us                       a CPU-bound handler: 2,000 req/s per thread
  /?size=1m&chunked=1                1 MiB in 4 KiB chunks
  /?fault=stall&stall=5s             provoke a client timeout
  /old?status=302&location=/new      a redirect (pelt run --follow 1)

With --http3 the same controls work over HTTP/3 (UDP, the same port
number), except: chunked=1 is ignored (HTTP/3 frames every body),
fault=extra is a plain response, reset and invalid reset the request's
stream (H3_INTERNAL_ERROR, H3_MESSAGE_ERROR), close resets it after half
the body, stall resets it after the stall, and hangup sends GOAWAY after
the response.

Connections are kept alive (HTTP/1.1 default, or HTTP/1.0 with
Connection: keep-alive) and pipelined requests are answered in order.
Request bodies need Content-Length (Expect: 100-continue is answered);
Transfer-Encoding bodies get 501.
";

/// Server-wide stop-the-world stall, like a long GC pause.
///
/// The clock starts at the first request the server receives. Every
/// response that would be written during `[first + after, first + after +
/// length)` is held until the window ends, whether the request arrived
/// inside the window or its delay ended there. There is exactly one window
/// per server lifetime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pause {
    /// Time from the first request to the start of the stall.
    pub after: Duration,
    /// How long the stall lasts.
    pub length: Duration,
}

/// How to run the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeConfig {
    /// Tokio worker threads; 0 means one per available core.
    pub threads: usize,
    /// Optional server-wide stall; see [`Pause`].
    pub pause: Option<Pause>,
    /// Largest body `?size=` may ask for, in bytes; more gets a 400.
    pub max_body: usize,
    /// Added to every response's delay (`?delay=` and all): a slower
    /// server at the same URL, for tests of baselines.
    pub delay: Duration,
    /// Added to every response's delay per second since the first
    /// request: a server that slows down steadily (a leak), for tests of
    /// the stationarity check.
    pub delay_growth: Duration,
    /// Serve HTTP/3 too: QUIC on the UDP port of the TCP port's number,
    /// with a self-signed certificate for `localhost` and the loopback
    /// addresses made at start (clients skip verification), the same
    /// query controls (HTTP/3's differences in [`QUERY_HELP`]).
    pub http3: bool,
    /// With `http3`: request streams a client may have open at once on
    /// a connection (QUIC's MAX_STREAMS credit; 128 by default, as
    /// HTTP/2 servers commonly allow). Lower, clients wait for credit.
    pub http3_max_streams: u32,
    /// With `http3`: refuse every 0-RTT attempt. The server still gives
    /// session tickets that invite early data, but keeps no sessions, so
    /// each resumption falls back to a full handshake and the early data
    /// is rejected (as a server restarted, or one guarding against
    /// replays, rejects it). Off: 0-RTT is accepted.
    pub http3_reject_0rtt: bool,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            threads: 0,
            pause: None,
            max_body: 16 << 20,
            delay: Duration::ZERO,
            delay_growth: Duration::ZERO,
            http3: false,
            http3_max_streams: h3::MAX_STREAMS,
            http3_reject_0rtt: false,
        }
    }
}

/// Most worker threads accepted: beyond this a typo, not a configuration.
const MAX_THREADS: usize = 1024;

/// Listen backlog. The std default of 128 overflows when a load generator
/// opens hundreds of connections at once, and a dropped SYN costs the client
/// a one-second retransmit that would show up as connect latency.
const BACKLOG: i32 = 4096;

/// A bound server that is not serving yet.
#[derive(Debug)]
pub struct Server {
    listener: std::net::TcpListener,
    /// With `http3`: the UDP socket on the listener's port number.
    udp: Option<std::net::UdpSocket>,
    local_addr: SocketAddr,
    config: ServeConfig,
}

impl Server {
    /// Binds the listener now, so port 0 works and the port is known before
    /// serving. A bad address, a port in use or an invalid configuration is
    /// returned as an error.
    pub fn bind(addr: SocketAddr, config: ServeConfig) -> io::Result<Server> {
        if config.threads > MAX_THREADS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} threads requested, at most {MAX_THREADS} are supported; use 0 for one per core",
                    config.threads
                ),
            ));
        }
        if config.http3 && config.http3_max_streams == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "http3_max_streams is 0: no client could send a request; give 1 or more",
            ));
        }
        // Port 0 lets the system pick the TCP port; its UDP twin may be
        // taken, so a few picks are tried before giving up.
        let mut tries = if config.http3 && addr.port() == 0 {
            8
        } else {
            1
        };
        loop {
            let listener = listen(addr)?;
            let local_addr = listener.local_addr()?;
            let udp = match config.http3 {
                false => None,
                true => match h3::bind_udp(local_addr) {
                    Ok(udp) => Some(udp),
                    Err(e) if tries > 1 && e.kind() == io::ErrorKind::AddrInUse => {
                        tries -= 1;
                        continue;
                    }
                    Err(e) => {
                        return Err(io::Error::new(
                            e.kind(),
                            format!("UDP port {} for HTTP/3: {e}", local_addr.port()),
                        ))
                    }
                },
            };
            return Ok(Server {
                listener,
                udp,
                local_addr,
                config,
            });
        }
    }

    /// The bound address (with the real port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves on background threads with its own tokio runtime until the
    /// returned handle is shut down or dropped.
    pub fn spawn(self) -> io::Result<ServerHandle> {
        let local_addr = self.local_addr;
        let (runtime, shared) = self.start()?;
        Ok(ServerHandle {
            local_addr,
            shared,
            runtime: Some(runtime),
        })
    }

    /// Serves on the current thread until the process ends. Returns only if
    /// the server could not start.
    pub fn run(self) -> io::Result<()> {
        let (runtime, _shared) = self.start()?;
        // The accept loop was spawned onto a worker by `start`; blocking on
        // a future that never completes parks this thread for good.
        runtime.block_on(std::future::pending::<()>());
        Ok(())
    }

    fn start(self) -> io::Result<(Runtime, Arc<Shared>)> {
        let threads = match self.config.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("pelt-target")
            .on_thread_start(timer::tight_slack)
            .enable_io()
            .enable_time()
            .build()?;
        let shared = Arc::new(Shared::new(&self.config));
        let listener = {
            // Registering with the reactor needs the runtime's context.
            let _enter = runtime.enter();
            tokio::net::TcpListener::from_std(self.listener)?
        };
        runtime.spawn(accept_loop(listener, Arc::clone(&shared)));
        if let Some(udp) = self.udp {
            let config = h3::server_config(
                self.local_addr.ip(),
                self.config.http3_max_streams,
                self.config.http3_reject_0rtt,
            )?;
            let endpoint = {
                let _enter = runtime.enter();
                quinn::Endpoint::new(
                    quinn::EndpointConfig::default(),
                    Some(config),
                    udp,
                    Arc::new(quinn::TokioRuntime),
                )?
            };
            runtime.spawn(h3::accept_loop(endpoint, Arc::clone(&shared)));
        }
        Ok((runtime, shared))
    }
}

/// A running server. Dropping it stops the server like [`shutdown`].
///
/// [`shutdown`]: ServerHandle::shutdown
pub struct ServerHandle {
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    runtime: Option<Runtime>,
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle")
            .field("local_addr", &self.local_addr)
            .field("requests", &self.requests())
            .finish_non_exhaustive()
    }
}

impl ServerHandle {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Requests fully received so far (head and body read), whatever the
    /// answer. Malformed requests that got a 400/431/501 are not counted.
    pub fn requests(&self) -> u64 {
        self.shared.requests.load(Ordering::Relaxed)
    }

    /// Stops accepting, closes every connection and shuts the runtime down.
    pub fn shutdown(self) {
        drop(self);
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        let Some(runtime) = self.runtime.take() else {
            return;
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            // Blocking inside another runtime panics; there the tasks (and
            // with them the listener and sockets) are dropped shortly after
            // by the worker threads instead.
            runtime.shutdown_background();
        } else {
            // Waiting for the workers means the listener and every
            // connection are closed when this returns. Tasks are cancelled,
            // not awaited, so this is quick.
            runtime.shutdown_timeout(Duration::from_secs(1));
        }
    }
}

/// State shared by every connection of one server.
#[derive(Debug)]
pub(crate) struct Shared {
    requests: AtomicU64,
    pub(crate) max_body: usize,
    pause: Option<PauseClock>,
    delay: Duration,
    delay_growth: Duration,
    first_request: OnceLock<Instant>,
}

#[derive(Debug)]
struct PauseClock {
    pause: Pause,
    first_request: OnceLock<Instant>,
}

impl Shared {
    fn new(config: &ServeConfig) -> Self {
        Shared {
            requests: AtomicU64::new(0),
            max_body: config.max_body,
            pause: config.pause.map(|pause| PauseClock {
                pause,
                first_request: OnceLock::new(),
            }),
            delay: config.delay,
            delay_growth: config.delay_growth,
            first_request: OnceLock::new(),
        }
    }

    /// The server-wide delay for a response at `now` (`--delay`, and
    /// `--delay-growth` for each second since the first request).
    pub(crate) fn extra_delay(&self, now: Instant) -> Duration {
        if self.delay_growth.is_zero() {
            return self.delay;
        }
        let since = self
            .first_request
            .get()
            .map_or(Duration::ZERO, |t| now.saturating_duration_since(*t));
        self.delay + self.delay_growth.mul_f64(since.as_secs_f64())
    }

    /// Counts a fully received request and starts the pause clock.
    pub(crate) fn note_request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        if !self.delay_growth.is_zero() {
            self.first_request.get_or_init(Instant::now);
        }
        if let Some(clock) = &self.pause {
            clock.first_request.get_or_init(Instant::now);
        }
    }

    /// If a response written at `now` falls inside the pause window, the
    /// instant the window ends.
    pub(crate) fn pause_hold(&self, now: Instant) -> Option<Instant> {
        let clock = self.pause.as_ref()?;
        let first = *clock.first_request.get()?;
        // Absurd durations overflow Instant; such a window never opens.
        let start = first.checked_add(clock.pause.after)?;
        let end = start.checked_add(clock.pause.length)?;
        (start <= now && now < end).then_some(end)
    }
}

fn listen(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // Restarting `pelt serve` right after a load test must not fail on the
    // old connections' TIME-WAIT state (std sets this too).
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

async fn accept_loop(listener: tokio::net::TcpListener, shared: Arc<Shared>) {
    loop {
        match listener.accept().await {
            Ok((stream, _peer)) => {
                // Without this, Nagle holds a small response for the client's
                // delayed ACK (up to 40 ms) whenever a response takes two
                // writes.
                let _ = stream.set_nodelay(true);
                tokio::spawn(conn::serve(stream, Arc::clone(&shared)));
            }
            Err(e) => match e.kind() {
                // The peer gave up before we accepted: nothing to do.
                io::ErrorKind::ConnectionAborted
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::Interrupted => {}
                // Typically out of file descriptors: back off so closing
                // connections can free some, instead of spinning.
                _ => tokio::time::sleep(Duration::from_millis(10)).await,
            },
        }
    }
}
