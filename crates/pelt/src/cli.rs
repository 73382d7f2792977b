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
  pelt run http://127.0.0.1:8080/ --rate 100..2000/30s  a linear ramp of the rate over 30 s
  pelt run http://127.0.0.1:8080/ --stages 30s:100,1m:1000,30s:0   rate steps (k6-style stages)
  pelt run http://127.0.0.1:8080/ -c 1..50/30s        a closed loop ramping 1 to 50 connections
  pelt run http://127.0.0.1:8080/api -m POST -H 'Content-Type: application/json' --body '{\"a\":1}'
  pelt run http://127.0.0.1:8080/ --rate 500 -d 10m --abort-on 'failed > 50% for 5s'

Which mode? A closed loop (-c) tells you the most a server can do with N
busy clients, but it cannot see queueing: when the server stalls, the
clients stall with it and the stall barely shows. For latency questions
(\"how slow is it for users at 1,000 req/s?\") use --rate: requests are sent
on a fixed schedule, and each is timed from when it should have been sent.

Words: a request *failed* when it got no usable response: no response at
all (connect, tls, reset, closed, timeout, unfinished, ...), a response that
broke off or failed ab's length check, or a complete response whose status is
outside 2xx/3xx (status_4xx, status_5xx). Every report, live view, metric,
--assert ('failed < 1%', also written 'errors'), history, compare and
experiment counts that one number, broken down by kind.

Exit codes: 0 ok; 1 an --assert failed (or --strict found the client or
network limiting); 2 bad usage or input; 3 not one request got a
response; 4 an --abort-on rule stopped the run; 128 + the signal when one
stopped it: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP. Every ending but 2 prints
the report first: SIGTERM and SIGHUP are handled as Ctrl-C (results file
finished, history row marked interrupted, asserts printed).";

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
    Run(Box<RunArgs>),
    /// Run the built-in target server (delays, sizes, statuses and faults on demand).
    Serve(ServeArgs),
    /// Start the built-in server and benchmark it twice: closed loop, then --rate.
    Demo(DemoArgs),
    /// Compare runs before and after a change: per-metric change, 95 % CI and verdict.
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// Re-render saved runs (.pelt results files): text, JSON, CSV, markdown, HTML, hdrlog.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Run a before/after experiment from a plan: variants x load levels, interleaved blocks, verdicts.
    #[command(after_help = EXPERIMENT_HELP)]
    Experiment(ExperimentArgs),
    /// Find the highest rate a target holds under an SLO (or sweep -c 1..200 connections).
    #[command(after_help = SWEEP_HELP)]
    Sweep(Box<SweepArgs>),
    /// Measure this machine's ceiling as a load generator (saved; `pelt run` warns beyond it).
    #[command(after_help = CALIBRATE_HELP)]
    Calibrate(CalibrateArgs),
    /// Recorded runs: list, show, remove, and a metric's trend over time.
    #[command(after_help = crate::history::command::HISTORY_HELP)]
    History(Box<crate::history::command::HistoryArgs>),
    /// Print a Kubernetes Indexed Job running a sharded run (docs/DISTRIBUTED.md).
    K8s(crate::launch::K8sArgs),
    /// Print a Slurm batch script running a sharded run with srun and merging it.
    Slurm(crate::launch::SlurmArgs),
    /// Print a shell completion script: bash, zsh, fish, elvish or powershell.
    #[command(after_help = COMPLETIONS_HELP)]
    Completions(CompletionsArgs),
    /// Print the man page (roff): pelt's, or a subcommand's.
    #[command(after_help = MAN_HELP)]
    Man(ManArgs),
}

const COMPLETIONS_HELP: &str = "\
Examples:
  pelt completions bash > ~/.local/share/bash-completion/completions/pelt
  pelt completions zsh > ~/.zfunc/_pelt        with fpath+=(~/.zfunc) before compinit
  pelt completions fish > ~/.config/fish/completions/pelt.fish";

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

const MAN_HELP: &str = "\
Examples:
  pelt man | man -l -                          read it now
  pelt man > ~/.local/share/man/man1/pelt.1    then `man pelt`
  pelt man run > ~/.local/share/man/man1/pelt-run.1";

/// The subcommands with a page of their own, and its title.
pub const MAN_PAGES: [(&str, &str); 13] = [
    ("run", "pelt-run"),
    ("sweep", "pelt-sweep"),
    ("calibrate", "pelt-calibrate"),
    ("serve", "pelt-serve"),
    ("demo", "pelt-demo"),
    ("compare", "pelt-compare"),
    ("report", "pelt-report"),
    ("experiment", "pelt-experiment"),
    ("history", "pelt-history"),
    ("completions", "pelt-completions"),
    ("man", "pelt-man"),
    ("k8s", "pelt-k8s"),
    ("slurm", "pelt-slurm"),
];

#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// A subcommand's page (pelt-run(1), ...) instead of pelt(1).
    #[arg(value_name = "SUBCOMMAND", value_parser = MAN_PAGES.map(|(name, _)| name))]
    pub subcommand: Option<String>,
}

const SWEEP_HELP: &str = "\
How it searches: open-loop steps of -d each (after --warmup, which is
not judged), from --start-rate doubling until a step fails, then x1.25
from the last pass, then bisecting until the bracket [last pass, first
fail] is within --tolerance; the answer is confirmed by one --confirm
run. A step holds when every --slo term holds on its own measured window,
at least 99 % of the offered rate went out, latency was not still
climbing through the step (a queue growing), and the client kept up (no
client_busy, read_lag or client_resources warning, and no late sends
that broke the SLO while connections were free; see --max-send-lag). Between steps pelt waits
until the server answers at its idle latency again (at most --cooldown).

A step that fails because of the client stops the sweep: the server's
capacity is then unknown, and pelt says so instead of reporting its own.

-c N is the connection pool for the rate steps [default: 100]; -c A..B
sweeps closed-loop concurrency instead (1, 2, 4, ... B connections),
reporting throughput and latency per level and where throughput stops
growing. Other `pelt run` flags (-m, -H, --body, -t, --timeout, --http2,
--arrivals poisson, ...) apply to every step; --rate, --stages, -n and
--assert do not (the sweep sets the load; use --slo).

Every step is saved as a results file in the sweep's folder (-o DIR, else
the data directory's sweeps/), runs/step-NN-RATE.pelt, for `pelt report`
and `pelt compare`; with report.txt, report.md, report.json and
report.html (latency against throughput, the SLO line and the knee).
--format picks what is printed: text, json, markdown or html.

The history: every step is recorded as kind `step` (tagged sweep=FOLDER
and step=N) and the sweep as kind `sweep` with its capacity, --tag and
--label (--no-history: neither). Follow capacities with
`pelt history trend --metric capacity`; --baseline SPEC (--fail-on)
sets the capacity against recorded sweeps' (exit 1 on a regression).
Steps and sweeps are never a run's baseline. --max-rate is 10,000 unless given: higher rates
saturated a shared CI runner's client; the sweep stops where the client
becomes the limit, and says so.

Exit codes: 0 a capacity was found (or the closed-loop levels ran), 1 no
capacity (the lowest rate fails, the client was the limit, or unstable),
2 bad input, 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (the bracket so far is
reported).

Examples:
  pelt sweep http://127.0.0.1:8080/ --slo 'p99 < 50ms, errors < 0.1%'
  pelt sweep http://127.0.0.1:8080/ --slo 'p99 < 10ms' -d 5s --warmup 1s --max-rate 20000
  pelt sweep http://127.0.0.1:8080/ -c 1..200 -d 10s    requests/s against concurrency
  pelt sweep http://127.0.0.1:8080/ --slo 'p99 < 50ms' -o sweeps/nginx --format json
  pelt sweep http://127.0.0.1:8080/ --slo 'p99 < 50ms' --tag release=1.4 && pelt history trend --metric capacity";

const CALIBRATE_HELP: &str = "\
pelt starts its own server on 127.0.0.1 (on the CPUs one worker thread
leaves) and measures, with one worker thread:
  closed loop     requests per second with 50 connections, and per core
                  of CPU the worker used
  rate mode       the highest rate held on schedule: send lag p99 under
                  1 ms and 99 % of the rate sent (a pelt sweep whose only
                  limit is the client; its steps are kept in the data
                  directory's calibrations/)
  latency floor   p50 and p99 of one connection, one request at a time
The figures are saved (calibration.json in the data directory); from then
on `pelt run --rate R` says when R is more than the machine held per
worker thread times -t. Calibrate again after changing the machine.

Examples:
  pelt calibrate              about a minute
  pelt calibrate --quick      a rougher figure in ~15 s";

#[derive(Debug, Clone, Args)]
pub struct CalibrateArgs {
    /// Shorter steps: a rougher figure, sooner.
    #[arg(long)]
    pub quick: bool,
    /// Print the figures without saving them.
    #[arg(long = "no-save")]
    pub no_save: bool,
    /// Only the result, no progress lines.
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    /// The SLO every step must meet: --assert terms separated by commas,
    /// like 'p99 < 50ms, errors < 0.1%'. Without it, a step holds while
    /// the rate goes out, latency is steady and there are no errors.
    #[arg(long, value_name = "'TERM, TERM, ...'")]
    pub slo: Option<String>,
    /// The first rate tried, requests per second.
    #[arg(long = "start-rate", value_name = "RATE", default_value_t = 100.0)]
    pub start_rate: f64,
    /// The highest rate tried: reaching it ends the sweep with "at least".
    /// 10,000 by default: a shared CI runner's client ran out of CPU well
    /// below the old 100,000, so go higher on purpose (pelt calibrate
    /// says what this machine can send; the sweep stops and says so where
    /// the client becomes the limit).
    #[arg(long = "max-rate", value_name = "RATE", default_value_t = 10_000.0)]
    pub max_rate: f64,
    /// Bisect until the bracket is this narrow (relative to its low end).
    #[arg(long, value_name = "PERCENT", default_value = "5%")]
    pub tolerance: String,
    /// How long the confirmation run of the answer lasts [default: 3 x -d].
    #[arg(long, value_name = "DURATION")]
    pub confirm: Option<String>,
    /// Stop after this long, reporting the bracket found so far.
    #[arg(long = "max-time", value_name = "DURATION", default_value = "20m")]
    pub max_time: String,
    /// The longest wait after a step for the server to answer at its idle
    /// latency again.
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    pub cooldown: String,
    /// Send lag (p99) a step may show while connections are free, before
    /// the client counts as the limit. By default the client fails a step
    /// only when its late sends broke a latency term of the SLO that the
    /// server's service time met (10 ms with no latency term).
    #[arg(long = "max-send-lag", value_name = "DURATION")]
    pub max_send_lag: Option<String>,
    /// Every `pelt run` flag, applied to each step (-d is a step's length
    /// [default: 10s], --warmup its discarded start [default: 2s], -o the
    /// sweep's folder).
    #[command(flatten)]
    pub run: RunArgs,
}

const EXPERIMENT_HELP: &str = "\
A plan (TOML):
  name = \"rewrite rules\"
  blocks = 10                        # each variant once per block, order counterbalanced (>= 6)
  # ready_timeout = \"30s\"            # how long a variant may take to answer
  # command_timeout = \"2m\"           # how long a setup or teardown may take
  # setup = \"./backend.sh start\"     # once before everything (a backend all variants share)
  # teardown = \"./backend.sh stop\"   # once after everything, whatever happened
  [load]
  url = \"http://127.0.0.1:20080/\"   # or targets = \"urls.txt\" (a targets file, as with -f)
  rate = 1000                        # or a list of load levels: rate = [250, 500, 1000]
  # connections = 50                 # closed loop instead of rate (a list makes levels)
  # sweep = \"p99 < 50ms\"            # instead of rate: each variant's capacity (pelt sweep)
  duration = \"10s\"
  warmup = \"1s\"                      # discarded at the start of every run [default: 1s]
  args = [\"--timeout\", \"2s\"]         # any other `pelt run` flags
  [[variant]]                        # the first is the baseline
  name = \"no rules\"
  setup = \"nginx -p . -c conf/0.conf\"  # shell commands, run in the plan's folder
  teardown = \"nginx -p . -c conf/0.conf -s quit\"
  # ready = \"...\"                    # a command that succeeds once it serves
  # ready_url = \"http://...\"         # polled until it answers [default: the variant's URL]
  # url = \"...\"  args = [...]        # this variant's own target and extra flags
  [[variant]]
  name = \"819 rules\"
  ...

Every run is saved in the experiment's folder (-o DIR, else the data
directory's experiments/), with the commands' output in logs/ (the plan's
own in logs/@plan.log), and report.txt, report.md, report.json and
report.html. For each load level and each variant against the first,
every metric gets a change, a 95 % interval and a verdict, paired by block
(see `pelt compare --help`). Commands see PELT_EXPERIMENT_DIR (absolute)
and PELT (this pelt, to start `$PELT serve` as a backend); a variant's
also PELT_VARIANT and PELT_BLOCK.

Ctrl-C, SIGTERM or SIGHUP stops the experiment after tearing the current
variant down and reports the complete blocks: exit 130, 143 or 129.

Examples:
  pelt experiment examples/rewrite-rules/plan.toml
  pelt experiment plan.toml --dry-run          the order of runs and the time it takes
  pelt experiment plan.toml -o results/ --fail-on regression";

#[derive(Debug, Clone, Args)]
pub struct ExperimentArgs {
    /// The plan: variants, load, levels and blocks (see below).
    #[arg(value_name = "PLAN.toml")]
    pub plan: PathBuf,

    /// Folder for the runs and reports; must be new or empty.
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Check the plan and print the order of runs; run nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,

    /// Exit 1 when a variant regressed against the baseline at any level
    /// (`regression`), or only beyond its margin (`material`).
    #[arg(long = "fail-on", value_enum, value_name = "WHAT")]
    pub fail_on: Option<FailOn>,

    /// The latency the verdicts' p50 .. p99.9 compare: response_time (the
    /// headline), service_time (without the client's send lag) or send_lag;
    /// or one figure judged alone: throughput (successful responses per
    /// second, higher is better) or errors (the failed share).
    #[arg(long = "metric", value_enum, default_value_t = LatencyArg::ResponseTime)]
    pub metric: LatencyArg,

    /// No progress lines on stderr.
    #[arg(short = 'q', long)]
    pub quiet: bool,

    #[command(flatten)]
    pub location: crate::history::Location,

    /// Do not record the experiment's runs in the history (also:
    /// PELT_NO_HISTORY=1). Each run is recorded with the experiment's name
    /// as its label and tags experiment, variant, level and block.
    #[arg(long = "no-history", conflicts_with = "history")]
    pub no_history: bool,

    /// Watching it live: --dashboard shows which run of how many is going,
    /// each finished run's figures and the verdicts so far, beside the
    /// running one's charts; --metrics labels each run's series by its run
    /// (experiment-bBLOCK-VARIANT-LEVEL). The terminal dashboard (--tui)
    /// watches single runs only.
    #[command(flatten)]
    pub live: crate::live::LiveArgs,
}

const COMPARE_EXAMPLES: &str = "\
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
--allow-mismatch. The headline is the most severe verdict, errors first.

Why several runs? Requests within one run are not independent (a slow
minute slows many of them), so one run per side cannot tell a change from
run-to-run noise. pelt compares whole runs: the estimate is Hodges-Lehmann,
the 95 % interval exact Wilcoxon (paired) or Mann-Whitney (unpaired).
A verdict says REGRESSION/IMPROVEMENT when the interval excludes no change
(\"material\" when all of it is beyond the margin: 2 % for p50 and
throughput, 5 % p90/p99, 10 % p99.9, 0.1 point for errors), EQUIVALENT when
all of it is within the margin, else INCONCLUSIVE with the runs needed.";

const REPORT_EXAMPLES: &str = "\
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
pub struct RunArgs {
    /// --shard, --start-at, --run-id (crates/pelt/src/shard.rs).
    #[command(flatten)]
    pub sharding: crate::shard::ShardArgs,

    /// The URL to load: http:// or https://, with host and optional port and path.
    #[arg(required_unless_present = "targets_file")]
    pub url: Option<String>,

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
    /// user (siege -d): 500ms, or 0..2s for a random pause in that range.
    /// Not counted in any latency.
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

    /// Speak HTTP/2: over https:// negotiated by ALPN (the run fails with
    /// `tls` errors if the server does not choose h2); over http:// as h2c
    /// with prior knowledge (no Upgrade).
    #[arg(long)]
    pub http2: bool,

    /// With --http2: concurrent streams per connection [default: 1]. Each
    /// stream works like one HTTP/1.1 connection, so a closed loop keeps
    /// c × N requests in flight, and --rate has a pool of c × N senders over
    /// c connections.
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

    /// Also log every measured request to FILE, one line each, streamed as
    /// they finish (vegeta's results, hey's -o csv, ab's -g): planned,
    /// sent, first-byte and done times (Unix nanoseconds), status, bytes,
    /// error kind, target. JSON lines for .json/.jsonl/.ndjson, else CSV.
    /// Secrets in URLs are replaced as in every file pelt writes.
    #[arg(long = "log-requests", value_name = "FILE")]
    pub log_requests: Option<std::path::PathBuf>,

    /// Fail (exit 1) unless the run meets this, like 'p99 < 50ms',
    /// 'failed < 0.1%', 'failed == 0' or 'rate >= 990'. failed (or errors)
    /// is the share of requests with no response or a status outside
    /// 2xx/3xx. Latencies need a unit and shares a % sign (a bare 5 is refused: 5% or 500%?);
    /// rate is the rate actually sent. A latency is the headline unless
    /// prefixed service_time., response_time. or send_lag. (like
    /// 'service_time.p99 < 5ms'); target[N]. or target[/path]. judges one
    /// target (like 'target[2].p99 < 20ms'). Repeatable, or several terms
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
    /// run: a worker thread that wanted a CPU nearly all the time
    /// (client_busy), responses read late for want of CPU (read_lag),
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
    pub record: crate::history::RecordArgs,

    /// Sessions: cookies, a login, credentials.
    #[command(flatten)]
    pub session: crate::session::SessionArgs,

    /// A forward proxy.
    #[command(flatten)]
    pub proxy: crate::session::ProxyArgs,

    /// Watching the run live: --tui, --metrics, --dashboard.
    #[command(flatten)]
    pub live: crate::live::LiveArgs,
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
    #[arg(long = "tag", value_name = "KEY[=VALUE]", requires = "record", value_parser = crate::history::parse_tag)]
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
    /// rate is the rate actually sent. A latency is the headline unless
    /// prefixed service_time., response_time. or send_lag. (like
    /// 'service_time.p99 < 5ms'); target[N]. or target[/path]. judges one
    /// target (like 'target[2].p99 < 20ms'). Repeatable, or several terms
    /// separated by commas as in --slo; results go to stderr.
    #[arg(long = "assert", value_name = "'MEASURE OP VALUE'", value_parser = parse_assertion, value_delimiter = ',')]
    pub asserts: Vec<pelt_core::Assertion>,
}

/// `-t N`: a thread count. A duration there is ab's or siege's `-t` (a
/// time limit): point to `-d`.
fn parse_threads(text: &str) -> Result<usize, String> {
    text.trim().parse().map_err(|_| {
        if pelt_core::parse_duration(text).is_ok() {
            format!("-t is the number of worker threads here (as in wrk); for a time limit (ab's and siege's -t) use -d {text}")
        } else {
            "expected a number of threads, like 2".to_string()
        }
    })
}

fn parse_buckets(text: &str) -> Result<pelt_core::buckets::Buckets, String> {
    text.parse()
        .map_err(|e: pelt_core::buckets::BucketsError| e.to_string())
}

fn parse_assertion(text: &str) -> Result<pelt_core::Assertion, pelt_core::AssertionError> {
    text.parse()
}

fn parse_abort_rule(text: &str) -> Result<pelt_core::AbortRule, pelt_core::AbortRuleError> {
    text.parse()
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

    /// The latency the p50 .. p99.9 rows compare: response_time (from the
    /// scheduled send; the headline), service_time (from the actual send:
    /// the server's part, without the client's timer jitter) or send_lag
    /// (the client's part); errors, throughput and the share sent are
    /// compared beside it. Or one figure judged alone, its verdict the only
    /// one: throughput (successful responses per second of each run,
    /// higher is better; rate runs too) or errors (the failed share of
    /// each run, higher is worse). With --baseline, other than
    /// response_time needs the recorded runs' results files.
    #[arg(long = "metric", value_enum, default_value_t = LatencyArg::ResponseTime)]
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
    pub baseline: crate::history::baseline::BaselineArgs,
}

/// `--metric`: which latency a comparison's percentiles measure, or the one figure it judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum LatencyArg {
    /// From each request's scheduled send to its response.
    #[default]
    ResponseTime,
    /// From the actual send to the response.
    ServiceTime,
    /// From the scheduled send to the actual send.
    SendLag,
    /// Successful responses per second, alone.
    Throughput,
    /// The failed share, alone.
    Errors,
}

impl From<LatencyArg> for pelt_analyze::latency::Latency {
    fn from(a: LatencyArg) -> Self {
        match a {
            LatencyArg::ResponseTime => Self::ResponseTime,
            LatencyArg::ServiceTime => Self::ServiceTime,
            LatencyArg::SendLag => Self::SendLag,
            LatencyArg::Throughput => Self::Throughput,
            LatencyArg::Errors => Self::Errors,
        }
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
