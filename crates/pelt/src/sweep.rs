//! `pelt sweep URL --slo '...'`: the highest rate a target holds under an
//! SLO, found by runs of `pelt run`'s engine (one per step, each saved);
//! or, with `-c A..B`, throughput and latency per closed-loop level. The
//! search and the judging of a step are pelt-analyze's
//! ([`pelt_analyze::sweep`]); this runs the steps, cools the server down
//! between them and writes the report.

use crate::execute::{execute, Keep};
use crate::flags::{FormatArg, RunArgs, SweepArgs};
use crate::live::Watch;
use crate::UserError;
use pelt_analyze::sweep::{
    self, connection_levels, judge, parse_slo, plateaued, Failure, Mode, Next, Outcome, Search,
    SearchPlan, Step, StepRules, SweepReport,
};
use pelt_core::{human_ns, parse_duration, RunConfig, RunSummary};
use pelt_report::sweep::SweepReports;
use std::cell::RefCell;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Requests in one cool-down probe (one connection, one after another).
const PROBE_REQUESTS: u64 = 10;
/// A server has cooled down when a probe's median is within this factor
/// of its idle median (plus [`COOL_SLACK`]).
const COOL_FACTOR: f64 = 1.5;
const COOL_SLACK: Duration = Duration::from_micros(500);
/// Pause between probes while the server is still slow: the probes must
/// not keep it busy.
const PROBE_PAUSE: Duration = Duration::from_millis(200);

pub fn command(args: SweepArgs) -> Result<ExitCode, UserError> {
    let record = args.run.record.clone();
    crate::history::baseline::check_spec(record.baseline.as_deref())?;
    let sweep = Sweep::new(args)?;
    // Opened before any load: a history pelt cannot use is bad input.
    let history = crate::history::Recording::for_sweep(&record)?;
    if history.is_none() && record.baseline.is_some() {
        return Err(UserError(
            "--baseline reads the history, and PELT_NO_HISTORY is set: give --history PATH|URL, or drop --baseline".into(),
        ));
    }
    let sweep = sweep.recorded(history);
    let format = sweep.args.run.format;
    let (report, reports) = sweep.conduct()?;
    crate::emit(
        match format {
            FormatArg::Json => &reports.json,
            FormatArg::Markdown => &reports.markdown,
            FormatArg::Html => &reports.html,
            _ => &reports.text,
        }
        .as_bytes(),
    )?;
    if let (Some(spec), Some((id, step))) = (&record.baseline, sweep.recorded_as.take()) {
        if report.outcome != Outcome::Interrupted {
            let mut history = sweep.history.borrow_mut();
            if let Some(h) = history.as_mut() {
                let judged = crate::history::baseline::after_sweep(
                    h.store(),
                    spec,
                    &step,
                    id,
                    report.capacity,
                    record.fail_on,
                )?;
                if judged != ExitCode::SUCCESS {
                    return Ok(judged);
                }
            }
        }
    }
    Ok(match report.outcome {
        Outcome::Interrupted => crate::signals::exit_code(),
        Outcome::Found | Outcome::AtMaxRate | Outcome::Levels => ExitCode::SUCCESS,
        Outcome::MaxTime if report.last_pass.is_some() => ExitCode::SUCCESS,
        _ => {
            eprintln!("pelt: {}", report.headline());
            ExitCode::FAILURE
        }
    })
}

/// What the flags asked for, checked.
pub struct Sweep {
    args: SweepArgs,
    rules: StepRules,
    mode: Mode,
    /// Closed loop: the levels; rate mode: the connection pool.
    levels: Vec<u32>,
    pool: Option<String>,
    step: Duration,
    warmup: Duration,
    confirm: Duration,
    max_time: Duration,
    cooldown: Duration,
    plan: SearchPlan,
    folder: PathBuf,
    /// A client that falls behind ends the search (false: it is what is
    /// measured, for `pelt calibrate`).
    stop_on_client: bool,
    /// `pelt sweep`'s history: each step, then the sweep with its
    /// capacity (calibration and experiments record nothing here).
    history: RefCell<Option<crate::history::Recording>>,
    /// The sweep's row in the history and the summary of the step that
    /// set its capacity, for --baseline.
    recorded_as: RefCell<Option<(Option<i64>, RunSummary)>>,
}

impl Sweep {
    /// Checks the flags (every step's run included) before any load.
    pub fn new(args: SweepArgs) -> Result<Sweep, UserError> {
        let r = &args.run;
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
        let slo = match &args.slo {
            Some(text) => parse_slo(text).map_err(|e| {
                UserError(format!(
                    "invalid --slo term '{}': {}; write terms like --slo 'p99 < 50ms, errors < 0.1%'",
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
        let step = match &r.duration {
            Some(d) => duration(d, "-d")?,
            None => Duration::from_secs(10),
        };
        let warmup = match &r.warmup {
            Some(d) => duration(d, "--warmup")?,
            None => Duration::from_secs(2),
        };
        let confirm = match &args.confirm {
            Some(d) => duration(d, "--confirm")?,
            None => step * 3,
        };
        let max_send_lag_ns = match &args.max_send_lag {
            Some(d) => Some(duration(d, "--max-send-lag")?.as_nanos() as u64),
            None => None,
        };
        let tolerance = args
            .tolerance
            .trim()
            .strip_suffix('%')
            .and_then(|p| p.trim().parse::<f64>().ok())
            .filter(|p| *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| {
                UserError(format!(
                    "invalid --tolerance '{}': use a percentage like 5%",
                    args.tolerance.escape_debug()
                ))
            })?;
        if !(args.start_rate >= 1.0 && args.start_rate <= args.max_rate) {
            return Err(UserError(format!(
                "--start-rate {} must be at least 1 and at most --max-rate {}",
                args.start_rate, args.max_rate
            )));
        }
        let (mode, levels, pool) = match r.connections.as_deref() {
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
                (Mode::Connections, connection_levels(lo, hi), None)
            }
            other => (Mode::Rate, Vec::new(), other.map(str::to_string)),
        };
        let folder = match &r.out {
            Some(dir) => dir.clone(),
            None => default_folder()?,
        };
        crate::experiment::refuse_non_empty(&folder)?;
        let sweep = Sweep {
            rules: StepRules {
                slo,
                min_achieved: 0.99,
                max_send_lag_ns,
            },
            mode,
            levels,
            pool,
            step,
            warmup,
            confirm,
            max_time: duration(&args.max_time, "--max-time")?,
            cooldown: duration(&args.cooldown, "--cooldown")?,
            plan: SearchPlan {
                start: args.start_rate,
                max: args.max_rate,
                tolerance: tolerance / 100.0,
            },
            folder,
            args,
            stop_on_client: true,
            history: RefCell::new(None),
            recorded_as: RefCell::new(None),
        };
        // Every flag of every step checked before any load is sent.
        sweep.config(Load::Rate(sweep.plan.start), step)?;
        if let Some(&c) = sweep.levels.first() {
            sweep.config(Load::Connections(c), step)?;
        }
        Ok(sweep)
    }

    /// The run for one step (or a probe), from the user's flags.
    fn config(&self, load: Load, duration: Duration) -> Result<RunConfig, UserError> {
        let mut a: RunArgs = self.args.run.clone();
        a.out = None;
        a.warmup = Some(format!("{}ms", self.warmup.as_millis()));
        a.duration = Some(format!("{}ms", duration.as_millis()));
        match load {
            Load::Rate(rate) => {
                a.rate = Some(format!("{rate}"));
                a.connections = self.pool.clone();
            }
            Load::Connections(c) => a.connections = Some(c.to_string()),
            Load::Probe => {
                a.connections = Some("1".into());
                a.requests = Some(PROBE_REQUESTS);
                a.duration = None;
                a.warmup = None;
                a.threads = Some(1);
            }
        }
        if a.until.is_some() {
            // Each step's length is -d: a stop by precision would make
            // steps of different lengths, judged alike.
            return Err(UserError(
                "--until is for pelt run: a sweep's steps last -d each; drop --until".into(),
            ));
        }
        RunConfig::try_from(&a)
    }

    /// The first step's configuration.
    pub fn first_config(&self) -> Result<RunConfig, UserError> {
        match self.levels.first() {
            Some(&c) => self.config(Load::Connections(c), self.step),
            None => self.config(Load::Rate(self.plan.start), self.step),
        }
    }

    /// Records the sweep and its steps in `history`.
    pub fn recorded(self, history: Option<crate::history::Recording>) -> Sweep {
        self.history.replace(history);
        self
    }

    /// The sweep's id in the history (`sweep=` tag): its folder.
    fn id(&self) -> String {
        std::fs::canonicalize(&self.folder)
            .unwrap_or_else(|_| self.folder.clone())
            .to_string_lossy()
            .into_owned()
    }

    /// Records the sweep: the step that set the capacity (the last
    /// passing one at it, a confirmation if any), else the last step.
    fn record(&self, report: &SweepReport, json: &str) {
        let mut history = self.history.borrow_mut();
        let Some(h) = history.as_mut() else {
            return;
        };
        let at = |s: &&Step| match report.mode {
            Mode::Rate => s.offered == report.last_pass,
            Mode::Connections => s.connections.map(f64::from) == report.last_pass,
        };
        let step = report
            .steps
            .iter()
            .rev()
            .find(|s| s.passed && at(s))
            .or(report.steps.last());
        let Some(file) = step
            .and_then(|s| s.file.as_ref())
            .map(|f| self.folder.join(f))
        else {
            return;
        };
        match crate::save::load(&file) {
            Ok(summary) => {
                let id = h.record_sweep(
                    &summary,
                    &file,
                    &self.id(),
                    report.capacity,
                    json.to_string(),
                );
                self.recorded_as.replace(Some((id, summary)));
            }
            Err(UserError(e)) => {
                eprintln!("pelt: warning: the sweep was not recorded in the history: {e}")
            }
        }
    }

    /// Searches for the client's own ceiling: a step the client could not
    /// keep up with is a failure like any other, bisected and confirmed.
    pub fn measuring_the_client(mut self) -> Sweep {
        self.stop_on_client = false;
        self
    }

    /// Runs the sweep and writes its reports to its folder.
    pub fn conduct(&self) -> Result<(SweepReport, SweepReports), UserError> {
        let first = self.config(Load::Rate(self.plan.start), self.step)?;
        let views = crate::live::Views::start(
            &crate::flags::LiveArgs {
                no_tui: true,
                ..self.args.run.live.clone()
            },
            &first,
            &self.args.run.record.redactor(),
            true,
        )?;
        let title = format!(
            "sweep of {}",
            target_of(&first, &self.args.run.record.redactor())
        );
        let mut watch = Watch {
            campaign: pelt_live::Campaign::new(title, 0),
            views,
        };
        std::fs::create_dir_all(self.folder.join("runs")).map_err(|e| {
            UserError(format!(
                "cannot create '{}': {e}; choose another folder with -o",
                self.folder.display()
            ))
        })?;
        crate::signals::install();
        let started = Instant::now();
        let idle = self.idle_latency()?;
        let mut report = SweepReport {
            target: target_of(&first, &self.args.run.record.redactor()),
            mode: self.mode,
            slo: self.rules.slo.iter().map(ToString::to_string).collect(),
            outcome: Outcome::Found,
            capacity: None,
            last_pass: None,
            first_fail: None,
            first_fail_reasons: Vec::new(),
            knee: None,
            idle_ns: Some(idle.as_nanos() as u64),
            elapsed_s: 0.0,
            steps: Vec::new(),
        };
        match self.mode {
            Mode::Rate => self.search(&mut report, &mut watch, started, idle)?,
            Mode::Connections => self.levels(&mut report, &mut watch, started, idle)?,
        }
        report.elapsed_s = started.elapsed().as_secs_f64();
        report.find_knee();
        let reports = pelt_report::sweep::render(&report);
        crate::save::write_reports(
            &self.folder,
            &reports.text,
            &reports.markdown,
            &reports.html,
            &reports.json,
        )?;
        self.record(&report, &reports.json);
        watch.campaign.verdicts = reports.text.clone();
        watch.views.campaign(&watch.campaign);
        watch.views.close_campaign(reports.json.clone());
        if !self.args.run.quiet {
            eprintln!(
                "pelt: the sweep's steps and reports are in {}",
                self.folder.display()
            );
        }
        Ok((report, reports))
    }

    /// The rate search.
    fn search(
        &self,
        report: &mut SweepReport,
        watch: &mut Watch,
        started: Instant,
        idle: Duration,
    ) -> Result<(), UserError> {
        let mut search = Search::new(self.plan);
        let outcome = loop {
            if crate::signals::interrupted() {
                break Outcome::Interrupted;
            }
            let (rate, confirm) = match search.next() {
                Next::Step { rate, confirm } => (rate, confirm),
                Next::Done(outcome) => break outcome,
            };
            let length = if confirm { self.confirm } else { self.step };
            if started.elapsed() + self.warmup + length > self.max_time {
                break Outcome::MaxTime;
            }
            let config = self.config(Load::Rate(rate), length)?;
            let (step, summary) = self.run_step(report, watch, config, confirm)?;
            if summary.interrupted {
                // Cut short: neither a pass nor a fail.
                report.steps.push(step);
                break Outcome::Interrupted;
            }
            search.record(rate, step.passed);
            let client = sweep::client_failure(&step.failures).is_some();
            report.steps.push(step);
            if client && self.stop_on_client {
                break Outcome::Client;
            }
            if matches!(search.next(), Next::Step { .. }) {
                self.cool_down(idle)?;
            }
        };
        search.stop(outcome);
        let (pass, fail) = search.bracket();
        report.outcome = outcome;
        report.last_pass = pass;
        report.first_fail = fail;
        report.capacity = match outcome {
            Outcome::Found | Outcome::AtMaxRate => pass,
            _ => None,
        };
        if outcome == Outcome::Client {
            // The client failed the last step: that is the bracket's top.
            report.first_fail = report.steps.last().and_then(|s| s.offered);
        }
        report.first_fail_reasons = report
            .steps
            .iter()
            .rev()
            .find(|s| !s.passed && s.offered == report.first_fail)
            .map(|s| s.failures.clone())
            .unwrap_or_default();
        Ok(())
    }

    /// Closed-loop levels, until the last or until throughput stops
    /// growing or a level fails the SLO.
    fn levels(
        &self,
        report: &mut SweepReport,
        watch: &mut Watch,
        started: Instant,
        idle: Duration,
    ) -> Result<(), UserError> {
        let mut seen: Vec<(u32, f64)> = Vec::new();
        report.outcome = Outcome::Levels;
        for (i, &c) in self.levels.iter().enumerate() {
            if crate::signals::interrupted() {
                report.outcome = Outcome::Interrupted;
                break;
            }
            if started.elapsed() + self.warmup + self.step > self.max_time {
                report.outcome = Outcome::MaxTime;
                break;
            }
            let config = self.config(Load::Connections(c), self.step)?;
            let (step, summary) = self.run_step(report, watch, config, false)?;
            if summary.interrupted {
                // Cut short: neither a pass nor a fail.
                report.steps.push(step);
                report.outcome = Outcome::Interrupted;
                break;
            }
            let passed = step.passed;
            let client = sweep::client_failure(&step.failures).is_some();
            if passed {
                seen.push((c, step.throughput));
                report.last_pass = Some(f64::from(c));
                report.capacity = Some(report.capacity.unwrap_or(0.0).max(step.throughput));
            } else if report.first_fail.is_none() {
                report.first_fail = Some(f64::from(c));
                report.first_fail_reasons = step.failures.clone();
            }
            report.steps.push(step);
            if client {
                report.outcome = Outcome::Client;
                break;
            }
            if !passed || plateaued(&seen) {
                break;
            }
            if i + 1 < self.levels.len() {
                self.cool_down(idle)?;
            }
        }
        if report.outcome == Outcome::Levels && report.last_pass.is_none() {
            report.outcome = Outcome::FailsAtStart;
        }
        Ok(())
    }

    /// Runs one step, saves it, judges it.
    fn run_step(
        &self,
        report: &SweepReport,
        watch: &mut Watch,
        config: RunConfig,
        confirm: bool,
    ) -> Result<(Step, RunSummary), UserError> {
        let index = report.steps.len() + 1;
        let level = match config.load.rate() {
            Some(_) => format!(
                "{}rps",
                config
                    .load
                    .offered_rate(config.stop.duration.unwrap_or_default())
                    .map_or(0.0, sweep::round_rate)
            ),
            None => format!("c{}", config.load.connections()),
        };
        let name = format!(
            "step-{index:02}-{level}{}.pelt",
            if confirm { "-confirm" } else { "" }
        );
        let file = self.folder.join("runs").join(&name);
        let label = format!(
            "step {index}: {}{}",
            match level.strip_suffix("rps") {
                Some(rate) => format!("{rate} req/s"),
                None => format!("{} connections", config.load.connections()),
            },
            if confirm { " (confirmation)" } else { "" }
        );
        if !self.args.run.quiet {
            eprintln!(
                "pelt: {label} for {}",
                pelt_core::Human(config.stop.duration.unwrap_or_default())
            );
        }
        watch.campaign.total = watch.campaign.total.max(index);
        watch.start(label, &format!("sweep-step-{index:02}"), &config);
        let keep = Keep {
            until: None,
            out: Some(&file),
            live: watch.views.feed(),
            // --secret-header and --secret-param apply to the steps' files
            // as to pelt run's.
            secrets: self.args.run.record.redactor(),
            ..Keep::default()
        };
        let summary = execute(config, self.args.run.quiet, keep)?;
        let failures = judge(&summary, &self.rules);
        let mut step = Step::of(index, &summary, failures, confirm);
        step.file = Some(format!("runs/{name}"));
        if let Some(h) = self.history.borrow_mut().as_mut() {
            h.record_step(&summary, &file, &self.id(), index);
        }
        if !self.args.run.quiet {
            let figures = format!(
                "sent {}/s, p99 {}, errors {:.2}%",
                sweep::thousands(step.sent_rate),
                human_ns(step.p99_ns),
                step.errors * 100.0
            );
            match step.failures.as_slice() {
                [] => eprintln!("pelt:   held ({figures})"),
                failures => {
                    let why: Vec<String> = failures.iter().map(Failure::to_string).collect();
                    eprintln!("pelt:   failed ({figures}): {}", why.join("; "));
                }
            }
        }
        if watch.views.watched() {
            watch.finished(&summary, format!("{} steps so far", index));
        }
        Ok((step, summary))
    }

    /// The target's latency at rest: the best median of three probes.
    fn idle_latency(&self) -> Result<Duration, UserError> {
        let mut best: Option<Duration> = None;
        for _ in 0..3 {
            let s = self.probe()?;
            if let Some(why) = s.no_response() {
                return Err(UserError(format!(
                    "the target does not answer before the sweep: {why}"
                )));
            }
            let p50 = median(&s);
            best = Some(best.map_or(p50, |b| b.min(p50)));
        }
        Ok(best.unwrap_or_default())
    }

    /// Waits (at most --cooldown) until the server answers at its idle
    /// latency again, so that no step starts with the last one's queue.
    fn cool_down(&self, idle: Duration) -> Result<(), UserError> {
        let goal = idle.mul_f64(COOL_FACTOR) + COOL_SLACK;
        let until = Instant::now() + self.cooldown;
        loop {
            if crate::signals::interrupted() {
                return Ok(());
            }
            let s = self.probe()?;
            let now = median(&s);
            if s.responses() > 0 && now <= goal {
                return Ok(());
            }
            if Instant::now() >= until {
                if !self.args.run.quiet {
                    eprintln!(
                        "pelt:   note: the server still answers in {} after {} of cool-down (idle: {}); going on",
                        human_ns(now.as_nanos() as u64),
                        pelt_core::Human(self.cooldown),
                        human_ns(idle.as_nanos() as u64)
                    );
                }
                return Ok(());
            }
            std::thread::sleep(PROBE_PAUSE);
        }
    }

    fn probe(&self) -> Result<RunSummary, UserError> {
        let config = self.config(Load::Probe, self.step)?;
        execute(config, true, Keep::default())
    }
}

/// A step's load.
#[derive(Debug, Clone, Copy)]
enum Load {
    Rate(f64),
    Connections(u32),
    /// A few requests on one connection, to read the server's latency.
    Probe,
}

fn median(s: &RunSummary) -> Duration {
    let h = &s.total.response;
    if h.is_empty() {
        Duration::MAX
    } else {
        Duration::from_nanos(pelt_core::rank::quantile(h, 0.5))
    }
}

fn target_of(config: &RunConfig, secrets: &pelt_store::Redactor) -> String {
    let mut secrets = secrets.clone();
    secrets.learn(config);
    let shown = secrets.config(config);
    match shown.targets.as_slice() {
        [one] => one.url.to_string(),
        [first, ..] => format!("{} and {} more targets", first.url, shown.targets.len() - 1),
        [] => "?".into(),
    }
}

fn default_folder() -> Result<PathBuf, UserError> {
    let data = crate::save::data_dir().ok_or_else(|| {
        UserError(
            "cannot tell where to save the sweep: give -o DIR, or set PELT_DATA_DIR or HOME".into(),
        )
    })?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Ok(data.join("sweeps").join(crate::save::utc_stamp(now)))
}
