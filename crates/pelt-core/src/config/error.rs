//! Why a configuration cannot run.

use crate::quote::quote;

/// A configuration that cannot run, phrased as what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The run has no target.
    #[error("no target to load; give a URL, like pelt run http://127.0.0.1:8080/")]
    NoTargets,
    /// Poisson arrivals with anything but a constant rate, or a closed loop.
    #[error("--arrivals poisson needs a constant --rate (ramps, stages and closed loops are not supported); use --rate R, or drop --arrivals")]
    PoissonNeedsConstantRate,
    /// `-c 0`.
    #[error("-c/--connections must be at least 1")]
    NoConnections,
    /// More than [`MAX_CONNECTIONS`](super::MAX_CONNECTIONS) connections.
    #[error("-c/--connections must be at most 100,000, like -c 50")]
    TooManyConnections,
    /// A rate outside [`MIN_RATE`](super::MIN_RATE)..=[`MAX_RATE`](super::MAX_RATE).
    #[error("--rate must be a number of requests per second, at least 0.001 and at most 10,000,000, like --rate 1000")]
    BadRate,
    /// A rate schedule with a level out of range, or all zero.
    #[error("a --rate schedule's levels must be between 0 and 10,000,000 req/s and not all 0, like --rate 100..2000/30s")]
    BadRateSchedule,
    /// A connection schedule with a fractional or out-of-range level, all zero, or above the pool.
    #[error("a -c schedule's levels must be whole numbers of connections, at most 100,000, and not all 0, like -c 1..50/30s")]
    BadConnectionSchedule,
    #[error(
        "the request body is larger than 32 MiB; pelt holds bodies in memory, so use a smaller one"
    )]
    /// A body larger than [`MAX_BODY`](super::MAX_BODY).
    BodyTooLarge,
    /// `-n 0`.
    #[error("-n/--requests must be at least 1")]
    NoRequests,
    /// `-d 0`.
    #[error("-d/--duration must be longer than zero, like -d 10s")]
    ZeroDuration,
    /// Think time in a rate run.
    #[error("--delay (think time) is for closed loops; with --rate the schedule already spaces requests")]
    ThinkWithRate,
    /// No worker threads.
    #[error("--threads must be at least 1")]
    NoThreads,
    /// A shard index at or past the count.
    #[error("--shard I/N needs 0 <= I < N")]
    BadShard,
    /// Fewer connections than shards: some shard would have none.
    #[error("--shard: every shard needs a connection of its own (connection j goes to shard j mod N); raise -c to at least the number of shards")]
    ShardWithoutConnections,
    /// A closed loop's -n smaller than the shard count.
    #[error("--shard: -n is split over the shards and some would send nothing; raise -n to at least the number of shards")]
    ShardWithoutRequests,
    /// A zero request timeout.
    #[error("--timeout must be longer than zero")]
    ZeroTimeout,
    /// A zero connect timeout.
    #[error("--connect-timeout must be longer than zero")]
    ZeroConnectTimeout,
    /// Streams per connection outside 1..=[`MAX_STREAMS`](super::MAX_STREAMS).
    #[error("--streams must be between 1 and 1000")]
    BadStreams,
    /// More than [`MAX_SENDERS`](super::MAX_SENDERS) streams in flight.
    #[error("-c × --streams must be at most 1,000,000 streams in flight; use fewer connections or streams, like -c 100 --streams 100")]
    TooManyStreams,
    /// `--proxy` with `--http2`, `--follow` or `--unix-socket`.
    #[error("--proxy works with plain HTTP/1.1 requests only for now; drop --http2, --follow or --unix-socket")]
    ProxyWith,
    /// More than one stream without HTTP/2.
    #[error("--streams is for HTTP/2; add --http2, or use -c for more HTTP/1.1 connections")]
    StreamsWithoutHttp2,
    /// HTTP/2 without keep-alive.
    #[error("--no-keepalive is HTTP/1.1's Connection: close; HTTP/2 always reuses its connections, so drop one of them")]
    NoKeepaliveWithHttp2,
    /// A connection rate outside [`MIN_RATE`](super::MIN_RATE)..=[`MAX_CONNECT_RATE`](super::MAX_CONNECT_RATE).
    #[error("--connect-rate must be a number of connections per second, at least 0.001 and at most 10,000,000, like --connect-rate 100")]
    BadConnectRate,
    /// More than [`MAX_FOLLOW`](super::MAX_FOLLOW) redirects.
    #[error("--follow must be at most 100 redirects, like --follow 5")]
    BadFollow,
    /// `--follow-any-host` without `--follow`.
    #[error("--follow-any-host needs --follow N to say how many redirects to follow")]
    AnyHostWithoutFollow,
    /// `--follow-any-host` with HTTP/2.
    #[error("--follow-any-host is for HTTP/1.1; with --http2, --follow follows redirects within the same origin only")]
    AnyHostWithHttp2,
    /// A Unix socket with an `https://` target.
    #[error("--unix-socket carries plain HTTP only; use an http:// URL (the URL still gives the Host header and path)")]
    UnixSocketTls,
    /// An empty Unix socket path.
    #[error("--unix-socket needs a path, like --unix-socket /run/app.sock")]
    EmptyUnixSocket,
    /// `--follow-any-host` with a Unix socket.
    #[error("--follow-any-host cannot leave a --unix-socket (other origins have no socket); drop one of them")]
    AnyHostWithUnixSocket,
    /// A connection schedule with HTTP/2.
    #[error("a -c schedule counts HTTP/1.1 connections; with --http2 use a --rate schedule, or a fixed -c with --streams")]
    ConnectionScheduleWithHttp2,
    /// A target's method or a header cannot be written as given.
    #[error("{target}: {error}")]
    BadTarget {
        /// The target, as `METHOD URL`.
        target: String,
        /// What is wrong with it.
        error: TargetError,
    },
    /// A target with more than one Host header.
    #[error("{target} has {count} Host headers; give one (-H 'Host: NAME' or --host NAME)")]
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
