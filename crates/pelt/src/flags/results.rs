//! The flags of the commands that read results: `pelt report`,
//! `pelt compare`, and of `pelt serve` and `pelt demo`.

use super::{parse_assertion, parse_buckets, BaselineArgs, FormatArg};
use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};
use pelt_analyze::latency::Latency;
use std::path::PathBuf;

pub const COMPARE_EXAMPLES: &str = "\
Examples:
  pelt compare before.pelt after.pelt                      one run each: differences, no verdict
  pelt compare a1.pelt a2.pelt a3.pelt --vs b1.pelt b2.pelt b3.pelt
  pelt compare a*.pelt --vs b*.pelt --paired               runs made in blocks (AB, BA, ...)
  pelt compare a*.pelt --vs b*.pelt --fail-on regression   exit 1 in CI when B is worse
  pelt compare --baseline tag:release-1.4 b*.pelt          recorded runs (pelt history) as A

Interleave the sides (A B B A ..., or pelt experiment). When every A run
came before every B run the change is confounded with time (the machine
drifts): the report says so, tests each side for drift, and withholds
material verdicts unless --sequential-ok. Runs must do the same work (same
targets, load model and level, protocol, proxy, method, body) and be
complete; others are refused with the difference named, unless
--allow-mismatch. The headline is the most severe verdict, the failed share first.

Why several runs? Requests within one run are not independent (a slow
minute slows many of them), so one run per side cannot tell a change from
run-to-run noise. pelt compares whole runs: the estimate is Hodges-Lehmann,
the 95 % interval exact Wilcoxon (paired) or Mann-Whitney (unpaired).
A verdict says REGRESSION/IMPROVEMENT when the interval excludes no change
(\"material\" when all of it is beyond the margin: 2 % for p50 and
throughput, 5 % p90/p99, 10 % p99.9, 0.1 point for the failed share), EQUIVALENT when
all of it is within the margin, else INCONCLUSIVE with the runs needed.
Scenario runs (--scenario) add each step's p50, p99 and failed share
(`flow/step p50`, ...: the steps both sides ran), judged the same way.";

pub const REPORT_EXAMPLES: &str = "\
Examples:
  pelt report --last                          the latest run, as it was printed
  pelt report run.pelt --format html > r.html charts: latency over time, percentiles, ...
  pelt report a.pelt b.pelt --format html > ab.html   overlay two runs to compare them
  pelt report m1.pelt m2.pelt --merge         one run measured from several machines
  pelt report run.pelt --window 10s..50s      only part of a run
  pelt report run.pelt --format csv           the per-second timeline
  pelt report run.pelt --format hdrlog > run.hlog     for HdrHistogram's own tools

Every `pelt run` is saved in the runs folder of pelt's data directory
($PELT_DATA_DIR, else $XDG_DATA_HOME/pelt, else ~/.local/share/pelt); the
newest 100 are kept. `-o FILE` on `pelt run` saves a copy where you say.";

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Results files written by `pelt run` (-o, or the saved copies).
    #[arg(value_name = "FILE", required_unless_present = "last")]
    pub files: Vec<PathBuf>,

    /// Report the most recent saved run.
    #[arg(long, conflicts_with = "files")]
    pub last: bool,

    /// Combine the files into one run (histograms add): for one test run
    /// from several machines. Without it, several files need --format html,
    /// which overlays them.
    #[arg(long)]
    pub merge: bool,

    /// With --merge of a sharded run (--shard): merge the shards there are
    /// even if some are missing; every format then says the run is partial.
    #[arg(long = "allow-partial", requires = "merge")]
    pub allow_partial: bool,

    /// With --merge: record the merged run in the history (kind `merged`,
    /// tagged run_id=ID and shards=N), once per run id. The shards' own
    /// rows (kind `shard`) are parts of it and never baselines.
    #[arg(long, requires = "merge", conflicts_with_all = ["allow_partial", "window"])]
    pub record: bool,

    /// With --record: tag the merged run, like --tag env=staging. Repeatable.
    #[arg(long = "tag", value_name = "KEY[=VALUE]", requires = "record", value_parser = super::parse_tag)]
    pub tags: Vec<(String, String)>,

    /// With --record: name the merged run in the history, like --label nightly.
    #[arg(long, value_name = "NAME", requires = "record")]
    pub label: Option<String>,

    /// With --record: the history database, a SQLite file or
    /// postgres://USER@HOST/DB [default: $PELT_HISTORY, else history.db in
    /// pelt's data directory].
    #[arg(long = "history", value_name = "PATH|URL", requires = "record")]
    pub history: Option<String>,

    /// Only this part of the run, in seconds from the start of measurement:
    /// 10s..50s, ..30s, 1m.. (whole seconds, by their midpoint).
    #[arg(long, value_name = "FROM..TO")]
    pub window: Option<String>,

    /// Report format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// Also count the headline latency into these ranges (text and JSON),
    /// like vegeta's hist[0,1ms,5ms,10ms].
    #[arg(long, value_name = "0,1ms,5ms,...", value_parser = parse_buckets)]
    pub buckets: Option<pelt_core::buckets::Buckets>,

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

    /// Add this delay to every response (a slower server at the same URL).
    #[arg(long = "delay", value_name = "DURATION")]
    pub delay: Option<String>,

    /// Add this much delay to every response for each second since the
    /// first request (--delay-growth 1ms: 10 ms slower after 10 s), as a
    /// server with a leak slows down.
    #[arg(long = "delay-growth", value_name = "DURATION")]
    pub delay_growth: Option<String>,

    /// Serve HTTP/3 too: QUIC on the UDP port of the same number, with a
    /// self-signed certificate made at start (so `pelt run --http3
    /// --insecure https://127.0.0.1:PORT/`). The same controls; chunked=1
    /// is ignored, fault=extra is a plain response, and the faults that
    /// break a TCP connection reset the request's stream (hangup: GOAWAY).
    /// 0-RTT is accepted (`pelt run --http3 --0rtt`).
    #[arg(long)]
    pub http3: bool,
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

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The baseline run(s), A. With exactly two files and no --vs, the
    /// second is B. A folder is one sharded run: its .pelt parts, merged
    /// (every shard required).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// The candidate run(s), B.
    #[arg(long = "vs", value_name = "FILE", num_args = 1..)]
    pub vs: Vec<PathBuf>,

    /// A's and B's runs come in blocks: pair them by position.
    #[arg(long)]
    pub paired: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,

    /// Exit 1 when a metric regressed (`regression`), or only when it
    /// regressed beyond its margin (`material`).
    #[arg(long = "fail-on", value_enum, value_name = "WHAT")]
    pub fail_on: Option<FailOn>,

    /// The latency the p50 .. p99.9 rows compare: headline (the runs'
    /// report's: response time with --rate, service time in a closed
    /// loop), response_time (from the scheduled send), service_time (from
    /// the actual send: the server's part, without the client's timer
    /// jitter) or send_lag (the client's part); the failed share,
    /// throughput and the share sent are compared beside it. Or one figure judged alone, its
    /// verdict the only one: throughput (successful responses per second
    /// of each run, higher is better; rate runs too) or failed (the failed
    /// share of each run, higher is worse; errors is read too). With --baseline, other than
    /// response_time needs the recorded runs' results files.
    #[arg(long = "metric", value_enum, default_value_t = LatencyArg::HEADLINE)]
    pub metric: LatencyArg,

    /// When every A run came before every B run (or after), the change is
    /// confounded with whatever drifted in between, and material verdicts
    /// are withheld: say that the conditions held, and let them stand.
    #[arg(long = "sequential-ok")]
    pub sequential_ok: bool,

    /// Compare runs whose work differs (targets, load model or level,
    /// protocol, proxy, method, body) or that are not complete; by default
    /// they are refused, naming the difference.
    #[arg(long = "allow-mismatch")]
    pub allow_mismatch: bool,

    /// Recorded runs as A.
    #[command(flatten)]
    pub baseline: BaselineArgs,
}

/// `--metric`: which latency a comparison's percentiles measure, or the
/// one figure it judges: pelt-analyze's [`Latency`], by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LatencyArg(pub Latency);

impl LatencyArg {
    /// The default, `headline`.
    pub const HEADLINE: LatencyArg = LatencyArg(Latency::Headline);
    /// Every value, in the library's order.
    const ALL: [LatencyArg; Latency::ALL.len()] = {
        let mut all = [LatencyArg::HEADLINE; Latency::ALL.len()];
        let mut i = 0;
        while i < all.len() {
            all[i] = LatencyArg(Latency::ALL[i]);
            i += 1;
        }
        all
    };
}

impl ValueEnum for LatencyArg {
    fn value_variants<'a>() -> &'a [Self] {
        &LatencyArg::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self.0 {
            Latency::Headline => {
                "The runs' headline: response time with --rate, service time in a closed loop"
            }
            Latency::ResponseTime => "From each request's scheduled send to its response",
            Latency::ServiceTime => "From the actual send to the response",
            Latency::SendLag => "From the scheduled send to the actual send",
            Latency::Throughput => "Successful responses per second, alone",
            Latency::Failed => {
                "The failed share, alone (\"errors\", the older word, is still read)"
            }
        };
        let value = PossibleValue::new(self.0.name()).help(help);
        Some(match self.0 {
            Latency::Failed => value.alias("errors"),
            _ => value,
        })
    }
}

impl From<LatencyArg> for Latency {
    fn from(a: LatencyArg) -> Latency {
        a.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Text,
    Json,
    Markdown,
    /// A page with the verdict table and overlaid percentile spectra and timelines.
    Html,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Any statistically clear regression.
    Regression,
    /// Only a regression whose whole interval is beyond the margin.
    Material,
}
