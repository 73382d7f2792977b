//! The flags of the commands that make many runs: `pelt sweep`,
//! `pelt calibrate`, `pelt experiment`.

use super::UserError;
use super::{FailOn, FormatArg, LatencyArg, LiveArgs, Location, RunArgs};
use clap::Args;
use pelt_analyze::sweep::{connection_levels, parse_slo, Mode, SearchPlan};
use pelt_campaign::SweepSpec;
use pelt_core::{parse_duration, Load, RunConfig};
use std::path::PathBuf;

pub const SWEEP_HELP: &str = "\
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
  pelt sweep http://127.0.0.1:8080/ --slo 'p99 < 50ms, failed < 0.1%'
  pelt sweep http://127.0.0.1:8080/ --slo 'p99 < 10ms' -d 5s --warmup 1s --max-rate 20000
  pelt sweep http://127.0.0.1:8080/ -c 1..200 -d 10s    requests/s against concurrency
  pelt sweep http://127.0.0.1:8080/ --slo 'p99 < 50ms' -o sweeps/nginx --format json
  pelt sweep http://127.0.0.1:8080/ --slo 'p99 < 50ms' --tag release=1.4 && pelt history trend --metric capacity";

pub const CALIBRATE_HELP: &str = "\
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
    /// like 'p99 < 50ms, failed < 0.1%'. Without it, a step holds while
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

pub const EXPERIMENT_HELP: &str = "\
A plan (TOML):
  name = \"rewrite rules\"
  blocks = 10                        # each variant once per block, order counterbalanced (>= 6)
  # ready_timeout = \"30s\"            # how long a variant may take to answer
  # command_timeout = \"2m\"           # how long a setup or teardown may take
  # setup = \"./backend.sh start\"     # once before everything (a backend all variants share)
  # teardown = \"./backend.sh stop\"   # once after everything, whatever happened
  [load]
  url = \"http://127.0.0.1:20080/\"   # or targets = \"urls.txt\" (a targets file, as with -f)
                                     # or scenario = \"journey.toml\" (--scenario; paths from the plan's folder)
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
  # url = \"...\"  args = [...]        # this variant's own target (url, targets or scenario) and extra flags
  [[variant]]
  name = \"819 rules\"
  ...

Every run is saved in the experiment's folder (-o DIR, else the data
directory's experiments/), with the commands' output in logs/ (the plan's
own in logs/@plan.log), and report.txt, report.md, report.json and
report.html. For each load level and each variant against the first,
every metric gets a change, a 95 % interval and a verdict, paired by block
(see `pelt compare --help`); scenario runs add each step's p50, p99 and
failed share (the steps both variants ran). Commands see PELT_EXPERIMENT_DIR (absolute)
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

    /// The latency the verdicts' p50 .. p99.9 compare: headline (the runs'
    /// report's: response time with --rate, service time in a closed
    /// loop), response_time, service_time (without the client's send lag)
    /// or send_lag; or one figure judged alone: throughput (successful
    /// responses per second, higher is better) or failed (the failed
    /// share; errors is read too).
    #[arg(long = "metric", value_enum, default_value_t = LatencyArg::HEADLINE)]
    pub metric: LatencyArg,

    /// No progress lines on stderr.
    #[arg(short = 'q', long)]
    pub quiet: bool,

    #[command(flatten)]
    pub location: Location,

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
    pub live: LiveArgs,
}

impl SweepArgs {
    /// The sweep these flags describe, checked whole before any load: its
    /// spec, and the run every step starts from (the steps override its
    /// load, length and warm-up by type).
    pub fn spec(&self) -> Result<(SweepSpec, RunConfig), UserError> {
        let r = &self.run;
        for (given, flag, why) in [
            (
                r.rate.is_some(),
                "--rate",
                "the sweep sets each step's rate: use --start-rate and --max-rate",
            ),
            (
                r.stages.is_some(),
                "--stages",
                "the sweep sets each step's rate",
            ),
            (r.requests.is_some(), "-n", "steps last -d each"),
            (
                !r.asserts.is_empty(),
                "--assert",
                "give the terms every step must meet with --slo",
            ),
            (
                !r.abort_on.is_empty(),
                "--abort-on",
                "a step that fails its --slo ends the search already",
            ),
            (
                r.live.tui,
                "--tui",
                "watch a sweep with --dashboard IP:PORT",
            ),
            (
                r.log_requests.is_some(),
                "--log-requests",
                "each step's results file keeps its requests' figures; use pelt run for a log",
            ),
            (
                r.buckets.is_some(),
                "--buckets",
                "a sweep's report has no buckets; pelt report DIR/runs/step-NN-*.pelt --buckets ... has a step's",
            ),
            (
                r.strict,
                "--strict",
                "a sweep stops by itself where the client became the limit, and says so",
            ),
            (
                r.sharding.shard.is_some() || r.sharding.start_at.is_some(),
                "--shard or --start-at",
                "a sweep runs from one machine",
            ),
        ] {
            if given {
                return Err(UserError(format!("pelt sweep takes no {flag}: {why}")));
            }
        }
        if matches!(
            r.format,
            FormatArg::Csv | FormatArg::PercentilesCsv | FormatArg::Hdrlog
        ) {
            return Err(UserError(
                "a sweep's report is text, json, markdown or html; for a step's timeline, pelt report runs/step-NN-*.pelt --format csv".into(),
            ));
        }
        if r.until.is_some() {
            // Each step's length is -d: a stop by precision would make
            // steps of different lengths, judged alike.
            return Err(UserError(
                "--until is for pelt run: a sweep's steps last -d each; drop --until".into(),
            ));
        }
        let slo = match &self.slo {
            Some(text) => parse_slo(text).map_err(|e| {
                UserError(format!(
                    "invalid --slo term '{}': {}; write terms like --slo 'p99 < 50ms, failed < 0.1%'",
                    e.text, e.problem
                ))
            })?,
            None => Vec::new(),
        };
        let duration = |value: &str, flag: &str| {
            parse_duration(value).map_err(|e| {
                UserError(format!(
                    "invalid {flag} '{}': {}; use a duration like 10s or 2m",
                    value.escape_debug(),
                    e.reason
                ))
            })
        };
        let folder = match &r.out {
            Some(dir) => dir.clone(),
            None => pelt_campaign::sweep::default_folder(&super::places())?,
        };
        let mut spec = SweepSpec::new(folder);
        spec.slo = slo;
        if let Some(d) = &r.duration {
            spec.step = duration(d, "-d")?;
        }
        if let Some(d) = &r.warmup {
            spec.warmup = duration(d, "--warmup")?;
        }
        spec.confirm = match &self.confirm {
            Some(d) => duration(d, "--confirm")?,
            None => spec.step * 3,
        };
        spec.max_send_lag_ns = match &self.max_send_lag {
            Some(d) => Some(duration(d, "--max-send-lag")?.as_nanos() as u64),
            None => None,
        };
        let tolerance = self
            .tolerance
            .trim()
            .strip_suffix('%')
            .and_then(|p| p.trim().parse::<f64>().ok())
            .filter(|p| *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| {
                UserError(format!(
                    "invalid --tolerance '{}': use a percentage like 5%",
                    self.tolerance.escape_debug()
                ))
            })?;
        spec.plan = SearchPlan {
            start: self.start_rate,
            max: self.max_rate,
            tolerance: tolerance / 100.0,
        };
        spec.max_time = duration(&self.max_time, "--max-time")?;
        spec.cooldown = duration(&self.cooldown, "--cooldown")?;
        spec.secrets = r.record.redactor();
        match r.connections.as_deref() {
            Some(c) if c.contains("..") => {
                let (lo, hi) = c
                    .split_once("..")
                    .and_then(|(a, b)| Some((a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?)))
                    .filter(|&(lo, hi)| lo >= 1 && lo <= hi)
                    .ok_or_else(|| {
                        UserError(format!(
                            "invalid -c '{}' for a sweep: use A..B connections, like 1..200 (closed-loop levels 1, 2, 4, ... 200), or N for the rate steps' pool",
                            c.escape_debug()
                        ))
                    })?;
                spec.mode = Mode::Connections;
                spec.levels = connection_levels(lo, hi);
            }
            Some(c) => {
                spec.pool = c.trim().parse().map_err(|_| {
                    UserError(format!(
                        "invalid -c '{}' for a sweep: give the rate steps' connection pool, like -c 200, or A..B connections for closed-loop levels",
                        c.escape_debug()
                    ))
                })?;
            }
            None => {}
        }
        if !(spec.plan.start >= 1.0 && spec.plan.start <= spec.plan.max) {
            return Err(UserError(format!(
                "--start-rate {} must be at least 1 and at most --max-rate {}",
                spec.plan.start, spec.plan.max
            )));
        }
        let load = match spec.levels.first() {
            Some(&c) => Load::closed(c),
            None => Load::rate_of(spec.plan.start, spec.pool),
        };
        if spec.mode == Mode::Connections && r.send_window.is_some() {
            return Err(UserError(
                "--send-window times rate-mode sends; a -c A..B sweep is closed-loop: drop --send-window".into(),
            ));
        }
        let base = r.config_with(Some(load))?;
        Ok((spec, base))
    }
}
