//! Command-line arguments. Parsing only: every check that spans flags
//! lives in `TryFrom<RunArgs> for RunConfig` (run.rs).

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const RUN_EXAMPLES: &str = "\
Examples:
  pelt run http://127.0.0.1:8080/ -c 50 -d 10s        closed loop, like wrk -c 50 -d 10s
  pelt run http://127.0.0.1:8080/ -n 5000 -c 500 -k   a count, like ab -k -c 500 -n 5000
  pelt run http://127.0.0.1:8080/ --rate 1000 -d 10s  open loop, like vegeta attack -rate=1000
  pelt http://127.0.0.1:8080/ --rate 2000 --warmup 5s -d 30s --format json > run.json
  pelt run http://127.0.0.1:8080/api -m POST -H 'Content-Type: application/json' --body '{\"a\":1}'

Which mode? A closed loop (-c) tells you the most a server can do with N
busy clients, but it cannot see queueing: when the server stalls, the
clients stall with it and the stall barely shows. For latency questions
(\"how slow is it for users at 1,000 req/s?\") use --rate: requests are sent
on a fixed schedule, and each is timed from when it should have been sent.";

const TOP_ABOUT: &str = "\
An HTTP load generator that measures latency correctly.

`pelt URL [OPTIONS]` is short for `pelt run URL [OPTIONS]`.";

#[derive(Debug, Parser)]
#[command(name = "pelt", version, about = TOP_ABOUT, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load a URL and report what happened (closed loop with -c, open loop with --rate).
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// Run the built-in target server (delays, sizes, statuses and faults on demand).
    Serve(ServeArgs),
    /// Start the built-in server and benchmark it twice: closed loop, then --rate.
    Demo(DemoArgs),
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The URL to load: http:// or https://, with host and optional port and path.
    pub url: String,

    /// Connections to use [default: 10 for a closed loop; 100 for --rate, as a pool].
    #[arg(short = 'c', long = "connections", value_name = "N")]
    pub connections: Option<u32>,

    /// Stop after N measured requests (exactly N are sent and recorded).
    #[arg(short = 'n', long = "requests", value_name = "N")]
    pub requests: Option<u64>,

    /// Stop after this long of measurement, like 10s or 1m [default: 10s unless -n is given].
    #[arg(short = 'd', long = "duration", value_name = "DURATION")]
    pub duration: Option<String>,

    /// Open loop: send R requests per second in total on a fixed schedule,
    /// whatever the responses do, and time each from its scheduled start.
    #[arg(short = 'r', long = "rate", value_name = "R")]
    pub rate: Option<f64>,

    /// Load for this long before measuring, like 5s; excluded from every figure.
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,

    /// Worker threads, each with its own connections [default: the cores available].
    #[arg(short = 't', long, value_name = "N")]
    pub threads: Option<usize>,

    /// Reuse connections (the default; accepted for ab compatibility).
    #[arg(short = 'k', long = "keepalive", conflicts_with = "no_keepalive")]
    pub keepalive: bool,

    /// Open a new connection for every request (sends `Connection: close`).
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

    /// Request body read from a file (sent as is, binary safe).
    #[arg(long = "body-file", value_name = "FILE")]
    pub body_file: Option<PathBuf>,

    /// Give up on a request after this long (counted as a timeout) [default: 30s].
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,

    /// Give up connecting after this long (counted as a connect error) [default: 5s].
    #[arg(long = "connect-timeout", value_name = "DURATION")]
    pub connect_timeout: Option<String>,

    /// Skip TLS certificate verification (self-signed test servers).
    #[arg(long)]
    pub insecure: bool,

    /// Report format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// No live progress line (it is only ever shown on a terminal).
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Human-readable report.
    Text,
    /// One JSON document (schema/run.schema.json).
    Json,
}

#[derive(Debug, Clone, Args)]
#[command(after_long_help = pelt_target::QUERY_HELP)]
pub struct ServeArgs {
    /// Port to listen on (0 picks a free one and prints it).
    #[arg(short, long, default_value_t = 8080)]
    pub port: u16,

    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,

    /// Server threads [default: the cores available].
    #[arg(short = 't', long, value_name = "N")]
    pub threads: Option<usize>,

    /// Pause the whole server once, this long after its first request
    /// (a stop-the-world stall, like a GC pause). Needs --pause-for.
    #[arg(long = "pause-after", value_name = "DURATION", requires = "pause_for")]
    pub pause_after: Option<String>,

    /// How long the pause lasts: responses due in it are held until it ends.
    #[arg(long = "pause-for", value_name = "DURATION", requires = "pause_after")]
    pub pause_for: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Length of each of the two benchmark runs.
    #[arg(short = 'd', long, default_value = "4s", value_name = "DURATION")]
    pub duration: String,

    /// Report format for both runs.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
}
