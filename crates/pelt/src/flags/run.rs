//! `pelt run`'s flags (their lowering into a `RunConfig` is `lower.rs`).

use super::{LiveArgs, ProxyArgs, RecordArgs, SessionArgs, ShardArgs};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

pub const RUN_EXAMPLES: &str = "\
Examples:
  pelt run http://127.0.0.1:8080/ -c 50 -d 10s        closed loop, like wrk -c 50 -d 10s
  pelt run http://127.0.0.1:8080/ -n 5000 -c 500 -k   a count, like ab -k -c 500 -n 5000
  pelt run http://127.0.0.1:8080/ --rate 1000 -d 10s  open loop, like vegeta attack -rate=1000
  pelt http://127.0.0.1:8080/ --rate 2000 --warmup 5s -d 30s --format json > run.json
  pelt run http://127.0.0.1:8080/ --rate 100..2000/30s  a linear ramp of the rate over 30 s
  pelt run http://127.0.0.1:8080/ --stages 30s:100,1m:1000,30s:0   rate steps (k6-style stages)
  pelt run http://127.0.0.1:8080/ -c 1..50/30s        a closed loop ramping 1 to 50 connections
  pelt run http://127.0.0.1:8080/api -m POST -H 'Content-Type: application/json' --body '{\"a\":1}'
  pelt run http://127.0.0.1:8080/ --rate 500 -d 10m --abort-on 'failed > 50% for 5s'
  pelt run --scenario journey.toml -c 50 -d 1m        user journeys: 50 virtual users looping flows
  pelt run --scenario journey.toml --rate 20 -c 200   20 flows started per second (docs/SCENARIOS.md)
  pelt run http://127.0.0.1:8080/events --rate 50 -d 1m  SSE: first event, gaps, stalls
  pelt run http://127.0.0.1:8000/v1/chat/completions --llm openai --model m --prompt-tokens 512
      --max-tokens 128 --rate 2 -d 1m   an LLM: TTFT, ITL, tokens/s (docs/STREAMS.md)
  pelt run ws://127.0.0.1:8765/echo --body 'ping' -c 10 -d 30s   WebSocket echo: 10 connections,
      each sending a message when its last reply came (docs/WEBSOCKET.md)
  pelt run wss://127.0.0.1:8765/echo --body-file msg.json --rate 2000 -c 50 -d 1m
      2,000 messages/s on 50 connections, each timed from its scheduled send

Which mode? A closed loop (-c) tells you the most a server can do with N
busy clients, but it cannot see queueing: when the server stalls, the
clients stall with it and the stall barely shows. For latency questions
(\"how slow is it for users at 1,000 req/s?\") use --rate: requests are sent
on a fixed schedule, and each is timed from when it should have been sent.

Words: a request *failed* when it got no usable response: no response at
all (connect, tls, reset, closed, timeout, unfinished, ...), a response that
broke off or failed ab's length check, a stream that ended early
(stream_cut), or a complete response whose status is outside 2xx/3xx
(status_4xx, status_5xx), or with --scenario a failed extract or check;
over WebSocket, a message with no reply (ws_upgrade, ws_protocol,
ws_too_big, ws_closed, closed, timeout, ...). Every report, live view, metric,
--assert ('failed < 1%', also written 'errors'), history, compare and
experiment counts that one number, broken down by kind.

Exit codes: 0 ok; 1 an --assert failed (or --strict found the client or
network limiting); 2 bad usage or input; 3 not one request got a
response, or nothing succeeded (every request failed; with --scenario,
every flow) unless an --assert on 'failed' says what is acceptable; 4 an --abort-on rule stopped the run; 128 + the signal when one
stopped it: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (or --tui's terminal gone
away). Every ending but 2 prints the report first: SIGTERM and SIGHUP are
handled as Ctrl-C (results file finished, history row marked interrupted,
asserts printed).";

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// --shard, --start-at, --run-id (crates/pelt/src/shard.rs).
    #[command(flatten)]
    pub sharding: ShardArgs,

    /// The URL to load: http:// or https://, with host and optional port
    /// and path; or ws:// or wss:// for WebSocket, where each request is a
    /// message (--body) and its time the reply's round trip
    /// (docs/WEBSOCKET.md).
    #[arg(required_unless_present_any = ["targets_file", "scenario"])]
    pub url: Option<String>,

    /// Run the user journeys in FILE (a scenario: feeds, flows of steps with
    /// templates, extraction, checks; docs/SCENARIOS.md) instead of a URL:
    /// -c N virtual users each loop flows, or --rate R starts R flows/s.
    /// Each user has a connection of its own: HTTP/1.1, or an HTTP/2 or
    /// QUIC one with --http2 or --http3 (so no --streams).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["url", "targets_file"])]
    pub scenario: Option<PathBuf>,

    /// Load the targets in FILE instead of one URL: a list of URLs, siege's
    /// urls file, or vegeta's http or JSON-lines format (detected). Weights:
    /// `3 URL` in a list, `"weight": 3` in JSON lines (default 1).
    #[arg(
        short = 'f',
        long = "targets",
        value_name = "FILE",
        conflicts_with = "url"
    )]
    pub targets_file: Option<PathBuf>,

    /// Force the targets file format: plain, siege, http (vegeta) or json (vegeta).
    #[arg(
        long = "targets-format",
        value_name = "FORMAT",
        requires = "targets_file"
    )]
    pub targets_format: Option<String>,

    /// Send each request to a random target (siege -i) instead of in turn;
    /// reproducible with --seed.
    #[arg(long)]
    pub random: bool,

    /// Seed for --random and --arrivals poisson [default: 1].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// With --rate: how requests are spaced. uniform (the default): evenly,
    /// request i at i/R. poisson: exponential gaps of the same mean, as
    /// independent users arrive, whose bursts queue at a server in a way
    /// evenly spaced requests never show; reproducible with --seed, and
    /// every --shard draws the same times. Constant rates only.
    #[arg(long = "arrivals", value_name = "uniform|poisson", value_parser = ["uniform", "poisson"])]
    pub arrivals: Option<String>,

    /// Connections to use [default: 10 for a closed loop; 100 for --rate, as a pool].
    /// In a closed loop the number may change over time, like --rate:
    /// 1..50/30s ramps from 1 to 50 connections, 10s:1,10s:10,10s:50 steps.
    /// With --rate, -c is the pool's size and must be a number. At most
    /// 100,000 (with --http2, -c × --streams at most 1,000,000).
    #[arg(short = 'c', long = "connections", value_name = "N|A..B/DUR|DUR:N,...")]
    pub connections: Option<String>,

    /// Stop after N measured requests (exactly N are sent and recorded).
    #[arg(short = 'n', long = "requests", value_name = "N")]
    pub requests: Option<u64>,

    /// Stop after this long of measurement, like 10s or 1m [default: 10s unless -n is
    /// given; with a --rate or -c schedule, its length]. Not siege's -d (a
    /// delay between requests: --delay).
    #[arg(short = 'd', long = "duration", value_name = "DURATION")]
    pub duration: Option<String>,

    /// Run until this percentile's 95 % interval is this narrow, checked
    /// each second, like --until 'p99 ±2%' (also 'p99 2%'); needs
    /// --max-duration. The report says whether it was reached.
    #[arg(
        long = "until",
        value_name = "'pNN ±X%'",
        requires = "max_duration",
        conflicts_with_all = ["duration", "requests"]
    )]
    pub until: Option<String>,

    /// With --until: the longest the run may last, like 1m.
    #[arg(long = "max-duration", value_name = "DURATION", requires = "until")]
    pub max_duration: Option<String>,

    /// Open loop: send R requests per second in total on a fixed schedule
    /// (-r is not siege's repetitions: for a count, use -n),
    /// whatever the responses do, and time each from its scheduled start.
    /// The rate may change over time: 100..2000/30s ramps linearly from 100
    /// to 2000 req/s over 30 s; 30s:100,1m:1000,30s:0 holds each rate for
    /// its stage (steps), and 1m:100..1000 ramps within a stage. Without
    /// -d the run lasts the schedule; a longer -d holds the last rate.
    #[arg(short = 'r', long = "rate", value_name = "R|A..B/DUR|DUR:R,...")]
    pub rate: Option<String>,
    /// Whether the rate was typed as `-r` (siege's repetitions per user,
    /// which `run` then explains): set by `main` from the command line
    /// it read, with [`super::typed_dash_r`].
    #[arg(skip)]
    pub rate_typed_as_r: bool,

    /// With --rate: send each request within ±half this of its scheduled
    /// time, so that one wake-up sends every request due in the window and
    /// reads every response that has arrived [default: auto, about eight
    /// requests' spacing, at most 1ms]. Responses are timed by the kernel
    /// as they arrive, so reading them late moves no service time; a late
    /// send shows as send lag and in the response time, an early one is
    /// timed from when it went. 0 wakes up for every request (more CPU per
    /// request); a duration sets the width outright: 10ms spreads sends
    /// about as widely as bombardier does, for about 20 % less CPU than it.
    /// A window's requests reach the server together and queue there, so a
    /// wide one raises the latency measured (nginx at 20,000 req/s: service
    /// time p50 44µs with auto, 76µs with 1ms): widen it for slow servers.
    #[arg(long = "send-window", value_name = "DURATION|auto")]
    pub send_window: Option<String>,

    /// The same as --rate DUR:R,DUR:R,... (k6's stages), like
    /// --stages 30s:0..100,1m:100..1000,30s:1000..0.
    #[arg(long = "stages", value_name = "DUR:R,...", conflicts_with = "rate")]
    pub stages: Option<String>,

    /// Closed loop: pause between a connection's requests, like a browsing
    /// user (siege -d): 500ms, 0..2s for a random pause in that range,
    /// exp(1s) (exponential, that mean) or normal(1s, 200ms). Not counted
    /// in any latency.
    #[arg(long = "delay", value_name = "DURATION[..DURATION]")]
    pub delay: Option<String>,

    /// Load for this long before measuring, like 5s; excluded from every figure.
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,

    /// Worker threads, each with its own connections [default: the cores
    /// available]. As in wrk; not ab's or siege's -t (a time limit: use -d).
    #[arg(short = 't', long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,

    /// Reuse connections (the default; accepted for ab compatibility).
    #[arg(short = 'k', long = "keepalive", conflicts_with = "no_keepalive")]
    pub keepalive: bool,

    /// Open a new connection for every request (HTTP/1.1: sends
    /// `Connection: close`; HTTP/3: a QUIC connection each, one stream).
    #[arg(long = "no-keepalive")]
    pub no_keepalive: bool,

    /// HTTP method [default: GET, or POST when a body is given].
    #[arg(short = 'm', long, value_name = "METHOD")]
    pub method: Option<String>,

    /// Add a header, like -H 'Authorization: Bearer x'. Repeatable.
    #[arg(short = 'H', long = "header", value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,

    /// Request body as text.
    #[arg(long, value_name = "TEXT", conflicts_with = "body_file")]
    pub body: Option<String>,

    /// Request body read from a file (sent as is, binary safe), like ab's
    /// -p. pelt adds no Content-Type (ab sends text/plain): give one with
    /// -H 'Content-Type: ...' (ab's -T); pelt notes a body without one.
    #[arg(long = "body-file", value_name = "FILE")]
    pub body_file: Option<PathBuf>,

    /// Give up on a request after this long (counted as a timeout) [default: 30s].
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,

    /// Give up connecting after this long: the TCP connect (counted as a connect error)
    /// and, for https, the TLS handshake with it (counted as a tls error) [default: 5s].
    #[arg(long = "connect-timeout", value_name = "DURATION")]
    pub connect_timeout: Option<String>,

    /// Skip TLS certificate verification (self-signed test servers).
    #[arg(long)]
    pub insecure: bool,

    /// Make every TLS handshake a full one, as ab, siege and h2load do. By
    /// default a new connection offers the session ticket an earlier one
    /// of the run got, as browsers, curl and wrk do, and the server may
    /// resume the session (no certificate sent or checked: cheaper for
    /// both). The report counts full and resumed handshakes, each with its
    /// time ("handshakes by kind"; JSON connections.handshakes).
    #[arg(long = "no-tls-resume")]
    pub no_tls_resume: bool,

    /// Speak HTTP/2: over https:// negotiated by ALPN (the run fails with
    /// `tls` errors if the server does not choose h2); over http:// as h2c
    /// with prior knowledge (no Upgrade).
    #[arg(long)]
    pub http2: bool,

    /// Speak HTTP/3: QUIC over UDP to the URL's port, TLS 1.3 with ALPN h3,
    /// so https:// URLs only. Certificates are verified as for TCP
    /// (--insecure skips that). A port with nothing on UDP counts
    /// `connect` errors, at once where the host says so (ICMP port
    /// unreachable, as on loopback; the error says whether a TCP server
    /// listens there), else after --connect-timeout; a server that will
    /// not speak h3 counts `tls` errors. By IP address no server name
    /// (SNI) is sent: a server that needs one is told apart in the error,
    /// with the fix (the name in the URL, the address with --connect-to). The QUIC handshake (transport and TLS in one round trip) is
    /// timed as connect; a wait for the server's stream credit is the
    /// client's, not service time; packets QUIC lost give the
    /// retransmissions warning. Not with --http2, --proxy (no CONNECT-UDP)
    /// or --unix-socket. With --no-keepalive, each request has a QUIC
    /// connection (and handshake) of its own.
    #[arg(long)]
    pub http3: bool,

    /// With --http3: 0-RTT resumption. pelt keeps the TLS session tickets
    /// servers give during the run, and each later connection to a server
    /// sends its first requests with the handshake (0-RTT data), not a
    /// round trip after it. Only GET, HEAD, OPTIONS and TRACE go as 0-RTT
    /// (0-RTT data can be replayed); other methods wait for the handshake.
    /// A request the server rejected as 0-RTT (it never saw it) is sent
    /// again once, on a connection without 0-RTT. The report counts full
    /// handshakes and 0-RTT ones accepted and rejected, each with its time.
    #[arg(long = "0rtt")]
    pub zero_rtt: bool,

    /// With --http2 or --http3: concurrent streams per connection [default:
    /// 1]. Each stream works like one HTTP/1.1 connection, so a closed loop
    /// keeps c × N requests in flight, and --rate has a pool of c × N
    /// senders over c connections.
    #[arg(long, value_name = "N")]
    pub streams: Option<u32>,

    /// Send this Host header to every target, like -H 'Host: NAME' (which it
    /// replaces): NAME or NAME:PORT. Connections still go where the URL
    /// says, and TLS still sends the URL's host as SNI and verifies its
    /// certificate for it; to keep the URL and change where pelt connects,
    /// use --connect-to.
    #[arg(long = "host", value_name = "NAME[:PORT]")]
    pub host: Option<String>,

    /// Connect to CONNECT_HOST:CONNECT_PORT whenever a URL names HOST:PORT
    /// (curl's option): the Host header, SNI and certificate check still use
    /// the URL. An empty HOST or PORT matches any, an empty CONNECT_HOST or
    /// CONNECT_PORT keeps the URL's; IPv6 in brackets. Repeatable; the
    /// first match wins.
    #[arg(
        long = "connect-to",
        value_name = "HOST:PORT:CONNECT_HOST:CONNECT_PORT"
    )]
    pub connect_to: Vec<String>,

    /// Send every request over this Unix domain socket (HTTP/1.1, or h2c
    /// with --http2); the URL, which must be http://, still gives the Host
    /// header and path.
    #[arg(long = "unix-socket", value_name = "PATH")]
    pub unix_socket: Option<PathBuf>,

    /// Bind TCP connections to these local addresses in turn (a list,
    /// ranges, CIDR blocks: 127.0.0.2-127.0.0.9, 127.0.0.0/29,
    /// 10.0.0.1,10.0.0.2), to open more connections to one server than one
    /// address has ports for (~28,000 by default); loopback has all of
    /// 127/8. Targets need an address of their family.
    #[arg(long = "source-addresses", value_name = "LIST")]
    pub source_addresses: Option<String>,

    /// Open at most N new connections per second, in total (each worker
    /// paces its share). Reconnects count too (after Connection: close,
    /// --no-keepalive or errors). A request waiting for a connection waits
    /// with its clock running: with --rate it shows as send lag.
    #[arg(long = "connect-rate", value_name = "N")]
    pub connect_rate: Option<f64>,

    /// Follow up to N redirects (301, 302, 303, 307, 308) per request, on the
    /// same origin (scheme, host and port) only [default: 0, a 3xx is the
    /// response]. The chain is one request: its latency runs to the last
    /// response, whose status is counted. 303, and 301/302 after a POST,
    /// continue as a GET without body. A redirect elsewhere, more than N, or
    /// a Location that cannot be parsed is an invalid_response error. With
    /// --http2, each hop is a new stream on the same connection.
    #[arg(long = "follow", value_name = "N")]
    pub follow: Option<u32>,

    /// With --follow: also follow redirects to other origins, each over a
    /// new connection used for that one request (HTTP/1.1 only).
    #[arg(long = "follow-any-host", requires = "follow")]
    pub follow_any_host: bool,

    /// Accept 2xx responses whose body length differs from the first for
    /// the same target (ab's -l). Without it, such a response counts as a
    /// 'length' failure, ab's check for a server that answers some
    /// requests with an error page; turn it off for dynamic pages.
    #[arg(short = 'l', long = "accept-variable-length")]
    pub accept_variable_length: bool,
    /// Time each request's departure by the kernel's transmit stamp
    /// (SO_TIMESTAMPING), not pelt's clock read just before write():
    /// service time and send lag then agree with the wire to a few
    /// microseconds (bench/wire.sh), where the clock reads 15-30 us early
    /// and more when pelt is preempted. Costs ~10 % more CPU per request.
    /// HTTP/1.1 over TCP and TLS; requests up to 1,400 bytes.
    #[arg(long = "tx-stamps")]
    pub tx_stamps: bool,

    /// Report format (hdrlog is for `pelt report`).
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// Also count the headline latency into these ranges, in the text and
    /// JSON reports, like vegeta's hist[0,1ms,5ms,10ms]: bucket i holds
    /// [bound i, bound i+1), the last everything above its bound.
    #[arg(long, value_name = "0,1ms,5ms,...", value_parser = parse_buckets)]
    pub buckets: Option<pelt_core::buckets::Buckets>,

    /// Also save the results file here (it is always saved for `pelt report --last`).
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Do not save the run in pelt's data directory.
    #[arg(long = "no-save")]
    pub no_save: bool,

    /// With --scenario: print what the first 2 virtual users would send
    /// (one iteration of each flow, once steps first; feeds read,
    /// templates filled, secret headers, query values and form fields
    /// REDACTED; a value a response would give shown as {{name}}) and
    /// send nothing. --dry-run=send sends those requests, one at a time
    /// (each user its own connection and cookies), and shows each
    /// response (status, time, the body's first 300 characters) and what
    /// each extraction took and each check found.
    #[arg(long = "dry-run", requires = "scenario", value_name = "send", num_args = 0..=1, default_missing_value = "show", require_equals = true)]
    pub dry_run: Option<DryRunArg>,

    /// Also log every measured request to FILE, one line each, streamed as
    /// they finish (vegeta's results, hey's -o csv, ab's -g): planned,
    /// sent, first-byte and done times (Unix nanoseconds), status, bytes,
    /// error kind, target; with --scenario also the virtual user, flow,
    /// iteration and step. JSON lines for .json/.jsonl/.ndjson, else CSV
    /// (columns: docs/RESULTS-FORMAT.md). Secrets in URLs are replaced as
    /// in every file pelt writes.
    #[arg(long = "log-requests", value_name = "FILE")]
    pub log_requests: Option<std::path::PathBuf>,

    /// Fail (exit 1) unless the run meets this, like 'p99 < 50ms',
    /// 'failed < 0.1%', 'failed == 0' or 'rate >= 990'. failed (or errors)
    /// is the share of requests with no response or a status outside
    /// 2xx/3xx. Latencies need a unit and shares a % sign (a bare 5 is refused: 5% or 500%?);
    /// rate is the rate actually sent. A latency is the report's headline
    /// (response time with --rate, service time in a closed loop) unless
    /// prefixed service_time., response_time. or send_lag., or named as a
    /// word (like 'service p99 < 5ms'); target[N]. or target[/path]. judges
    /// one target's response time (like 'target[2].p99 < 20ms'). Repeatable, or several terms
    /// separated by commas as in --slo; results go to stderr.
    #[arg(long = "assert", value_name = "'MEASURE OP VALUE'", value_parser = parse_assertion, value_delimiter = ',')]
    pub asserts: Vec<pelt_core::Assertion>,

    /// Stop the run early, with its report and exit code 4, once this has
    /// held for the time given, judged second by second: 'failed > 50% for
    /// 5s' (a second's failed share: requests that got no response, a
    /// transport error or a status outside 2xx/3xx; `errors` is the same
    /// word) or 'p99 > 1s for 10s' (p50, p90, p99, max). A second in which
    /// no request ended counts neither way, and --warmup is not judged.
    /// Repeatable: the first rule to hold stops the run.
    #[arg(long = "abort-on", value_name = "'MEASURE OP VALUE for DURATION'", value_parser = parse_abort_rule)]
    pub abort_on: Vec<pelt_core::AbortRule>,

    /// Fail (exit 1) when the client or the network may have limited the
    /// run: a worker thread that wanted a CPU nearly all the time, or
    /// waited for one a quarter of it (client_busy), responses read late for want of CPU (read_lag),
    /// connections that failed for want of file descriptors or local ports
    /// (client_resources), TCP retransmissions on pelt's connections
    /// (retransmissions), or a network interface near its speed
    /// (link_saturated). For CI, where a busy runner must not pass for a
    /// slow server.
    #[arg(long = "strict")]
    pub strict: bool,

    /// No live progress line (it is only ever shown on a terminal).
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// The history: where the run is recorded, its tags, secrets, baseline.
    #[command(flatten)]
    pub record: RecordArgs,

    /// Sessions: cookies, a login, credentials.
    #[command(flatten)]
    pub session: SessionArgs,

    /// A forward proxy.
    #[command(flatten)]
    pub proxy: ProxyArgs,

    /// Streamed responses: --stream, --stall-gap, --llm.
    #[command(flatten)]
    pub streamed: super::StreamArgs,

    /// WebSocket: --ws-protocol, --ws-binary, --max-message.
    #[command(flatten)]
    pub ws: super::WsArgs,

    /// Watching the run live: --tui, --metrics, --dashboard.
    #[command(flatten)]
    pub live: LiveArgs,
}

/// `--dry-run` (show, send nothing) or `--dry-run=send`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DryRunArg {
    /// Show the requests; send nothing.
    Show,
    /// Send them and show each response.
    Send,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Human-readable report.
    Text,
    /// One JSON document (schema/run.schema.json).
    Json,
    /// The per-second timeline.
    Csv,
    /// A summary to paste into an issue or pull request.
    Markdown,
    /// A self-contained page with charts.
    Html,
    /// ab's -e file: the headline latency at each whole percentile, in ms.
    PercentilesCsv,
    /// HdrHistogram interval log of response times (pelt report only).
    Hdrlog,
}

/// `-t N`: a thread count. A duration there is ab's or siege's `-t` (a
/// time limit): point to `-d`.
pub fn parse_threads(text: &str) -> Result<usize, String> {
    text.trim().parse().map_err(|_| {
        if pelt_core::parse_duration(text).is_ok() {
            format!("-t is the number of worker threads here (as in wrk); for a time limit (ab's and siege's -t) use -d {text}")
        } else {
            "expected a number of threads, like 2".to_string()
        }
    })
}

pub fn parse_buckets(text: &str) -> Result<pelt_core::buckets::Buckets, String> {
    text.parse()
        .map_err(|e: pelt_core::buckets::BucketsError| e.to_string())
}

pub fn parse_assertion(text: &str) -> Result<pelt_core::Assertion, pelt_core::AssertionError> {
    text.parse()
}

pub fn parse_abort_rule(text: &str) -> Result<pelt_core::AbortRule, pelt_core::AbortRuleError> {
    text.parse()
}
