//! Why a configuration cannot run.
//!
//! Messages name [`RunConfig`](super::RunConfig)'s fields, as a library
//! user writes them; the CLI says the same things in its flags.

use crate::config::quote::quote;

/// A configuration that cannot run, phrased as what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The run has no target.
    #[error("no target to load; give `targets` at least one Target, like Target::get(Url::parse(\"http://127.0.0.1:8080/\")?)")]
    NoTargets,
    /// Poisson arrivals with anything but a constant rate, or a closed loop.
    #[error("`arrivals: Arrivals::Poisson` needs a constant rate (`load: Load::Rate` without a schedule); ramps, stages and closed loops are not supported: set a constant rate, or `arrivals: Arrivals::Uniform`")]
    PoissonNeedsConstantRate,
    /// `-c 0`.
    #[error("`load`'s connections must be at least 1")]
    NoConnections,
    /// More than [`MAX_CONNECTIONS`](super::MAX_CONNECTIONS) connections.
    #[error("`load`'s connections must be at most 100,000")]
    TooManyConnections,
    /// A rate outside [`MIN_RATE`](super::MIN_RATE)..=[`MAX_RATE`](super::MAX_RATE).
    #[error("`load`'s rate must be a number of requests per second, at least 0.001 and at most 10,000,000")]
    BadRate,
    /// A rate schedule with a level out of range, or all zero.
    #[error(
        "a rate schedule's levels (`load`) must be between 0 and 10,000,000 req/s and not all 0"
    )]
    BadRateSchedule,
    /// A connection schedule with a fractional or out-of-range level, all zero, or above the pool.
    #[error("a connection schedule's levels (`load`) must be whole numbers of connections, at most 100,000, and not all 0")]
    BadConnectionSchedule,
    #[error(
        "the request body is larger than 32 MiB; pelt holds bodies in memory, so use a smaller one"
    )]
    /// A body larger than [`MAX_BODY`](super::MAX_BODY).
    BodyTooLarge,
    /// `-n 0`.
    #[error("`stop.requests` must be at least 1")]
    NoRequests,
    /// `-d 0`.
    #[error("`stop.duration` must be longer than zero")]
    ZeroDuration,
    /// Think time in a rate run.
    #[error("`think` (think time) is for closed loops; with `load: Load::Rate` the schedule already spaces requests")]
    ThinkWithRate,
    /// No worker threads.
    #[error("`threads` must be at least 1")]
    NoThreads,
    /// A shard index at or past the count.
    #[error("`shard` needs 0 <= index < count")]
    BadShard,
    /// Fewer connections than shards: some shard would have none.
    #[error("`shard`: every shard needs a connection of its own (connection j goes to shard j mod N); give `load` at least as many connections as shards")]
    ShardWithoutConnections,
    /// A closed loop's -n smaller than the shard count.
    #[error("`shard`: `stop.requests` is split over the shards and some would send nothing; raise it to at least the number of shards")]
    ShardWithoutRequests,
    /// A zero request timeout.
    #[error("`http.timeout` must be longer than zero")]
    ZeroTimeout,
    /// A zero connect timeout.
    #[error("`http.connect_timeout` must be longer than zero")]
    ZeroConnectTimeout,
    /// Streams per connection outside 1..=[`MAX_STREAMS`](super::MAX_STREAMS).
    #[error("`http.streams` must be between 1 and 1000")]
    BadStreams,
    /// More than [`MAX_SENDERS`](super::MAX_SENDERS) streams in flight.
    #[error("connections × `http.streams` must be at most 1,000,000 streams in flight; use fewer connections or streams")]
    TooManyStreams,
    /// `--proxy` with `--http2`, `--follow` or `--unix-socket`.
    #[error("`http.proxy` works with plain HTTP/1.1 requests only for now; unset `http.http2`, `http.follow` or `http.unix_socket`")]
    ProxyWith,
    /// More than one stream without HTTP/2 or HTTP/3.
    #[error(
        "`http.streams` above 1 is for HTTP/2 and HTTP/3; set `http.http2` or `http.http3`, or use more HTTP/1.1 connections"
    )]
    StreamsWithoutHttp2,
    /// `hold` with a rate: held subscriptions are a number of
    /// connections, not arrivals.
    #[error(
        "`http.streamed.hold` keeps `connections` subscribed; it takes a closed load, not a rate"
    )]
    HoldWithRate,
    /// `hold` with a count of requests.
    #[error("`http.streamed.hold` lasts for `stop.duration`; unset `stop.requests`")]
    HoldWithRequests,
    /// `hold` without a duration.
    #[error("`http.streamed.hold` needs `stop.duration`: how long the subscriptions are held")]
    HoldWithoutDuration,
    /// `hold` with a warm-up: every subscription starts in it, and a
    /// warm-up request's events are left out.
    #[error("`http.streamed.hold` subscribes at the start, inside any warm-up, whose events are left out; unset `warmup`")]
    HoldWithWarmup,
    /// `event_time` with nothing read as a stream.
    #[error(
        "`http.streamed.event_time` reads each event: set `http.streamed.framing`, `llm` or `hold`"
    )]
    EventTimeWithoutStream,
    /// `event_time` with a framing that has no such field: chunks (no
    /// whole message), or `id` with lines.
    #[error(
        "`http.streamed.event_time` needs whole messages: json:PATH with sse or lines, id with sse"
    )]
    EventTimeFraming,
    /// HTTP/2 or HTTP/3 without keep-alive.
    #[error("`http.keepalive: false` is HTTP/1.1's Connection: close (and HTTP/3's connection per request); HTTP/2 always reuses its connections, so change one of them")]
    NoKeepaliveWithHttp2,
    /// HTTP/3 without keep-alive and with more than one stream: each
    /// request has a connection of its own, so it has no streams to share.
    #[error("`http.keepalive: false` with `http.http3` opens a connection per request, one stream each; set `http.streams` to 1 or keep connections alive")]
    NoKeepaliveWithStreams,
    /// `http.zero_rtt` without `http.http3`.
    #[error("`http.zero_rtt` is QUIC's 0-RTT resumption, for HTTP/3 only; set `http.http3` or unset `http.zero_rtt`")]
    ZeroRttWithoutHttp3,
    /// `http.zero_rtt` with `http.no_tls_resume`: 0-RTT is a resumption.
    #[error(
        "`http.zero_rtt` resumes sessions and `http.no_tls_resume` forbids that; unset one of them"
    )]
    ZeroRttWithoutResume,
    /// Both `http.http2` and `http.http3`.
    #[error("`http.http2` and `http.http3` ask for different protocols; set one of them")]
    Http3WithHttp2,
    /// HTTP/3 to an `http://` target.
    #[error("`http.http3` runs over QUIC, which always uses TLS; give https:// targets (an http:// URL has no HTTP/3)")]
    Http3NeedsHttps,
    /// HTTP/3 through a proxy.
    #[error("`http.proxy` cannot carry HTTP/3 (QUIC runs over UDP, and pelt speaks no CONNECT-UDP); unset `http.proxy` or `http.http3`")]
    Http3WithProxy,
    /// HTTP/3 over a Unix socket.
    #[error("`http.unix_socket` cannot carry HTTP/3 (QUIC runs over UDP); unset `http.unix_socket` or `http.http3`")]
    Http3WithUnixSocket,
    /// A connection rate outside [`MIN_RATE`](super::MIN_RATE)..=[`MAX_CONNECT_RATE`](super::MAX_CONNECT_RATE).
    #[error("`http.connect_rate` must be a number of connections per second, at least 0.001 and at most 10,000,000")]
    BadConnectRate,
    /// More than [`MAX_FOLLOW`](super::MAX_FOLLOW) redirects.
    #[error("`http.follow` must be at most 100 redirects")]
    BadFollow,
    /// `--follow-any-host` without `--follow`.
    #[error(
        "`http.follow_any_host` needs `http.follow` above 0 to say how many redirects to follow"
    )]
    AnyHostWithoutFollow,
    /// `--follow-any-host` with HTTP/2 or HTTP/3.
    #[error("`http.follow_any_host` is for HTTP/1.1; with `http.http2` or `http.http3`, redirects are followed within the same origin only")]
    AnyHostWithHttp2,
    /// A Unix socket with an `https://` or `wss://` target.
    #[error("`http.unix_socket` carries no TLS; give the URL without it (http://, not https://; ws://, not wss://): it still gives the Host header and path")]
    UnixSocketTls,
    /// An empty Unix socket path.
    #[error("`http.unix_socket` needs a path, like /run/app.sock")]
    EmptyUnixSocket,
    /// `--follow-any-host` with a Unix socket.
    #[error("`http.follow_any_host` cannot leave `http.unix_socket` (other origins have no socket); unset one of them")]
    AnyHostWithUnixSocket,
    /// A connection schedule with HTTP/2 or HTTP/3.
    #[error("a connection schedule (`load: Load::Closed` with a schedule) counts HTTP/1.1 connections; with `http.http2` or `http.http3` use a rate schedule, or fixed connections with `http.streams`")]
    ConnectionScheduleWithHttp2,
    /// A scenario with more than one stream per connection: each virtual
    /// user has a connection of its own.
    #[error("a scenario's virtual users each have a connection of their own (`load.connections` of them), so `http.streams` must be 1; set it to 1 and raise the connections for more users")]
    ScenarioWithStreams,
    /// WebSocket and HTTP targets in one run.
    #[error("a run's targets are all WebSocket (ws://, wss://) or all HTTP (http://, https://); split them into two runs")]
    WsMixed,
    /// A WebSocket target with a method other than GET (a targets file
    /// that names one): the upgrade is always a GET.
    #[error("{url}: a WebSocket upgrade is always a GET, and the body is the message; drop the method {method}")]
    WsMethod {
        /// The target's URL.
        url: String,
        /// The method it named.
        method: String,
    },
    /// Something a WebSocket run cannot do yet.
    #[error("a WebSocket run (ws://, wss://) cannot use {0} yet; drop it, or load over http://")]
    WsWith(&'static str),
    /// `http.ws` options on a run with no WebSocket target.
    #[error("`http.ws` options apply to WebSocket targets only; use a ws:// or wss:// URL, or leave `http.ws` at its defaults")]
    WsOptionsWithoutWs,
    /// A zero `http.ws.max_message`.
    #[error("`http.ws.max_message` must be at least 1 byte")]
    WsMaxMessage,
    /// A subprotocol name that is not an HTTP token.
    #[error("WebSocket subprotocol '{0}' is not a token (RFC 6455 §4.1: letters, digits and !#$%&'*+-.^_`|~); give a name like chat.v2")]
    WsProtocolName(String),
    /// A text message whose body is not UTF-8.
    #[error("{0}: the message body is not UTF-8, so it cannot go as a text frame; send it as binary (`http.ws.binary`)")]
    WsTextNotUtf8(String),
    /// A target's method or a header cannot be written as given.
    #[error("{target}: {error}")]
    BadTarget {
        /// The target, as `METHOD URL`.
        target: String,
        /// What is wrong with it.
        error: TargetError,
    },
    /// A target with more than one Host header.
    #[error("{target} has {count} Host headers; give it one")]
    DuplicateHost {
        /// The target, as `METHOD URL`.
        target: String,
        /// How many it has.
        count: usize,
    },
    /// A Content-Length header that is not the body's length.
    #[error("{target} has a Content-Length header of '{value}' but a body of {actual} bytes; drop the header (pelt sets Content-Length from the body)")]
    ContentLengthMismatch {
        /// The target, as `METHOD URL`.
        target: String,
        /// The header's value, escaped.
        value: String,
        /// The body's length in bytes.
        actual: usize,
    },
}

/// What keeps a method or header from going on the wire as written.
///
/// The one rule for every way a request is given: `-m` and `-H` on the
/// command line, each line of a targets file, and
/// [`RunConfig::validate`](super::RunConfig::validate) for callers of the
/// library.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The method is not an RFC 9110 token (a word like `GET`).
    #[error("expected a method like GET or POST, found {}", quote(.0))]
    Method(String),
    /// A header name is not an RFC 9110 token.
    #[error(
        "expected a header name made of letters, digits and -, like X-Request-Id, found {}",
        quote(.0)
    )]
    HeaderName(String),
    /// A header value holds CR, LF or NUL (the header's name is given):
    /// written out, it would end the header early and split the request.
    #[error(
        "the value of header {} contains a line break or NUL, which would split the request",
        quote(.0)
    )]
    HeaderValue(String),
}
