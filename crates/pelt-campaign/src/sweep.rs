//! A capacity sweep: the highest rate a target holds under an SLO, found
//! by runs (one per step, each saved); or, in connections mode,
//! throughput and latency per closed-loop level. The search and the
//! judging of a step are pelt-analyze's ([`pelt_analyze::sweep`]); this
//! runs the steps from a typed [`SweepSpec`] and a base `RunConfig`,
//! cools the server down between them and writes the reports.

use crate::execute::{execute, Keep};
use crate::{Cancel, Error, Observer, Result};
use pelt_analyze::sweep::{
    self, judge, plateaued, Failure, Mode, Next, Outcome, Search, SearchPlan, Step, StepRules,
    SweepReport,
};
use pelt_core::config::DEFAULT_RATE_CONNECTIONS;
use pelt_core::{human_ns, Redactor, RunConfig, RunSummary, Stop};
use pelt_report::sweep::SweepReports;
use std::path::{Path, PathBuf};
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

/// What a sweep searches, every value typed. [`SweepSpec::new`] gives
/// `pelt sweep`'s defaults.
#[derive(Debug, Clone)]
pub struct SweepSpec {
    /// What every step must meet (empty: the rate goes out, latency is
    /// steady and there are no errors).
    pub slo: Vec<pelt_core::Assertion>,
    /// Send lag (p99, ns) a step may show while connections are free
    /// before the client counts as the limit; `None`: only when late
    /// sends broke a latency term the server met.
    pub max_send_lag_ns: Option<u64>,
    /// Rates (a search) or closed-loop connection levels.
    pub mode: Mode,
    /// Connections mode: the levels, in order.
    pub levels: Vec<u32>,
    /// Rate mode: the connection pool of every step.
    pub pool: u32,
    /// Each step's measured length, after its `warmup`.
    pub step: Duration,
    /// Each step's discarded start.
    pub warmup: Duration,
    /// The confirmation run of the answer.
    pub confirm: Duration,
    /// The whole sweep stops after this long, reporting the bracket so far.
    pub max_time: Duration,
    /// The longest wait after a step for the server's idle latency.
    pub cooldown: Duration,
    /// Where the search starts and ends, and how narrow it gets.
    pub plan: SearchPlan,
    /// Where the steps (runs/) and reports go: must be new or empty.
    pub folder: PathBuf,
    /// A client that falls behind ends the search (false: it is what is
    /// measured, for calibration).
    pub stop_on_client: bool,
    /// Keeps secrets out of the steps' files and the report's target.
    pub secrets: Redactor,
}

impl SweepSpec {
    /// `pelt sweep`'s defaults: rates from 100 to 10,000 req/s within
    /// 5 %, 10 s steps after 2 s of warm-up, a 30 s confirmation, 20 min
    /// at most, 30 s of cool-down, a pool of 100 connections.
    pub fn new(folder: PathBuf) -> SweepSpec {
        let step = Duration::from_secs(10);
        SweepSpec {
            slo: Vec::new(),
            max_send_lag_ns: None,
            mode: Mode::Rate,
            levels: Vec::new(),
            pool: DEFAULT_RATE_CONNECTIONS,
            step,
            warmup: Duration::from_secs(2),
            confirm: step * 3,
            max_time: Duration::from_secs(20 * 60),
            cooldown: Duration::from_secs(30),
            plan: SearchPlan {
                start: 100.0,
                max: 10_000.0,
                tolerance: 0.05,
            },
            folder,
            stop_on_client: true,
            secrets: Redactor::default(),
        }
    }
}

/// What a sweep tells its caller as it goes, besides [`Observer`]'s.
pub trait SweepObserver: Observer {
    /// Step `index` ended and was saved in `file`.
    fn step_saved(&mut self, _summary: &RunSummary, _file: &Path, _index: usize) {}
}

impl SweepObserver for crate::Unobserved {}

/// A sweep, checked, ready to run.
#[derive(Debug)]
pub struct Sweep {
    spec: SweepSpec,
    base: RunConfig,
    rules: StepRules,
}

/// A sweep under way: its report so far, and what every step needs.
struct Walk<'a> {
    report: &'a mut SweepReport,
    cancel: &'a Cancel,
    observer: &'a mut dyn SweepObserver,
    started: Instant,
    /// The idle latency, for cooling down between steps.
    idle: Duration,
}

/// What [`Sweep::try_step`] came to.
enum Tried {
    /// The step ran: it is judged, and `client` says whether the client
    /// was its limit.
    Ran { step: Step, client: bool },
    /// The sweep stops here, with this outcome.
    Stopped(Outcome),
}

impl Sweep {
    /// Checks `spec` and every step's configuration (`base` with the
    /// step's load, length and warm-up) before any load is sent.
    pub fn new(spec: SweepSpec, base: RunConfig) -> Result<Sweep> {
        if !(spec.plan.start >= 1.0 && spec.plan.start <= spec.plan.max) {
            return Err(Error::StartRate {
                start: spec.plan.start,
                max: spec.plan.max,
            });
        }
        if spec.mode == Mode::Connections && spec.levels.is_empty() {
            return Err(Error::other(
                "a connections sweep needs levels, like 1, 2, 4, ... 200",
            ));
        }
        crate::results::refuse_non_empty(&spec.folder)?;
        let sweep = Sweep {
            rules: StepRules {
                slo: spec.slo.clone(),
                min_achieved: 0.99,
                max_send_lag_ns: spec.max_send_lag_ns,
            },
            spec,
            base,
        };
        // Every step's configuration checked before any load is sent.
        sweep.config(Load::Rate(sweep.spec.plan.start), sweep.spec.step)?;
        if let Some(&c) = sweep.spec.levels.first() {
            sweep.config(Load::Connections(c), sweep.spec.step)?;
        }
        Ok(sweep)
    }

    /// The spec it runs.
    pub fn spec(&self) -> &SweepSpec {
        &self.spec
    }

    /// The run for one step (or a probe): the base with a typed override.
    fn config(&self, load: Load, duration: Duration) -> Result<RunConfig> {
        let mut c = self.base.clone();
        c.warmup = self.spec.warmup;
        c.stop = Stop {
            requests: None,
            duration: Some(duration),
        };
        match load {
            Load::Rate(rate) => c.load = pelt_core::Load::rate_of(rate, self.spec.pool),
            Load::Connections(n) => c.load = pelt_core::Load::closed(n),
            Load::Probe => {
                c.load = pelt_core::Load::closed(1);
                c.stop = Stop {
                    requests: Some(PROBE_REQUESTS),
                    duration: None,
                };
                c.warmup = Duration::ZERO;
                c.threads = 1;
            }
        }
        c.validate()?;
        Ok(c)
    }

    /// The first step's configuration.
    pub fn first_config(&self) -> Result<RunConfig> {
        match self.spec.levels.first() {
            Some(&c) if self.spec.mode == Mode::Connections => {
                self.config(Load::Connections(c), self.spec.step)
            }
            _ => self.config(Load::Rate(self.spec.plan.start), self.spec.step),
        }
    }

    /// The sweep's id (a history's `sweep=` tag): its folder.
    pub fn id(&self) -> String {
        std::fs::canonicalize(&self.spec.folder)
            .unwrap_or_else(|_| self.spec.folder.clone())
            .to_string_lossy()
            .into_owned()
    }

    /// The results file of the step that set `report`'s capacity (the
    /// last passing one at it, a confirmation if any), else the last
    /// step's.
    pub fn capacity_step(&self, report: &SweepReport) -> Option<PathBuf> {
        let at = |s: &&Step| match report.mode {
            Mode::Rate => s.offered == report.last_pass,
            Mode::Connections => s.connections.map(f64::from) == report.last_pass,
        };
        report
            .steps
            .iter()
            .rev()
            .find(|s| s.passed && at(s))
            .or(report.steps.last())
            .and_then(|s| s.file.as_ref())
            .map(|f| self.spec.folder.join(f))
    }

    /// Runs the sweep and writes its reports to its folder; `cancel`
    /// stops it (the bracket so far is reported, outcome `Interrupted`).
    pub fn conduct(
        &self,
        cancel: &Cancel,
        observer: &mut dyn SweepObserver,
    ) -> Result<(SweepReport, SweepReports)> {
        let first = self.first_config()?;
        let folder = &self.spec.folder;
        std::fs::create_dir_all(folder.join("runs")).map_err(|e| {
            Error::other(format!(
                "cannot create '{}': {e}; choose another folder with -o",
                folder.display()
            ))
        })?;
        let started = Instant::now();
        let idle = self.idle_latency(cancel)?;
        let mut report = SweepReport {
            target: target_of(&first, &self.spec.secrets),
            mode: self.spec.mode,
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
        let mut walk = Walk {
            report: &mut report,
            cancel,
            observer,
            started,
            idle,
        };
        match self.spec.mode {
            Mode::Rate => self.search(&mut walk)?,
            Mode::Connections => self.levels(&mut walk)?,
        }
        report.elapsed_s = started.elapsed().as_secs_f64();
        report.find_knee();
        let reports = pelt_report::sweep::render(&report);
        crate::results::publish(folder, &reports, observer)?;
        Ok((report, reports))
    }

    /// The rate search.
    fn search(&self, w: &mut Walk<'_>) -> Result<()> {
        let mut search = Search::new(self.spec.plan);
        let outcome = loop {
            if w.cancel.is_stopped() {
                break Outcome::Interrupted;
            }
            let (rate, confirm) = match search.next() {
                Next::Step { rate, confirm } => (rate, confirm),
                Next::Done(outcome) => break outcome,
            };
            let length = if confirm {
                self.spec.confirm
            } else {
                self.spec.step
            };
            let (step, client) = match self.try_step(w, Load::Rate(rate), length, confirm)? {
                Tried::Ran { step, client } => (step, client),
                Tried::Stopped(outcome) => break outcome,
            };
            search.record(rate, step.passed);
            w.report.steps.push(step);
            if client && self.spec.stop_on_client {
                break Outcome::Client;
            }
            if matches!(search.next(), Next::Step { .. }) {
                self.cool_down(w.idle, w.cancel, w.observer)?;
            }
        };
        search.stop(outcome);
        let (pass, fail) = search.bracket();
        let report = &mut *w.report;
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
    fn levels(&self, w: &mut Walk<'_>) -> Result<()> {
        let mut seen: Vec<(u32, f64)> = Vec::new();
        w.report.outcome = Outcome::Levels;
        for (i, &c) in self.spec.levels.iter().enumerate() {
            if w.cancel.is_stopped() {
                w.report.outcome = Outcome::Interrupted;
                break;
            }
            let load = Load::Connections(c);
            let (step, client) = match self.try_step(w, load, self.spec.step, false)? {
                Tried::Ran { step, client } => (step, client),
                Tried::Stopped(outcome) => {
                    w.report.outcome = outcome;
                    break;
                }
            };
            let report = &mut *w.report;
            let passed = step.passed;
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
            if i + 1 < self.spec.levels.len() {
                self.cool_down(w.idle, w.cancel, w.observer)?;
            }
        }
        if w.report.outcome == Outcome::Levels && w.report.last_pass.is_none() {
            w.report.outcome = Outcome::FailsAtStart;
        }
        Ok(())
    }

    /// A step of `load` for `length`, unless no time is left for it
    /// (`Stopped(MaxTime)`); a step cut short is kept, neither a pass nor
    /// a fail, and stops the sweep (`Stopped(Interrupted)`).
    fn try_step(
        &self,
        w: &mut Walk<'_>,
        load: Load,
        length: Duration,
        confirm: bool,
    ) -> Result<Tried> {
        if w.started.elapsed() + self.spec.warmup + length > self.spec.max_time {
            return Ok(Tried::Stopped(Outcome::MaxTime));
        }
        let config = self.config(load, length)?;
        let (step, summary) = self.run_step(w.report, w.cancel, w.observer, config, confirm)?;
        if summary.interrupted {
            w.report.steps.push(step);
            return Ok(Tried::Stopped(Outcome::Interrupted));
        }
        let client = sweep::client_failure(&step.failures).is_some();
        Ok(Tried::Ran { step, client })
    }

    /// Runs one step, saves it, judges it.
    fn run_step(
        &self,
        report: &SweepReport,
        cancel: &Cancel,
        observer: &mut dyn SweepObserver,
        config: RunConfig,
        confirm: bool,
    ) -> Result<(Step, RunSummary)> {
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
        let file = self.spec.folder.join("runs").join(&name);
        let label = format!(
            "step {index}: {}{}",
            match level.strip_suffix("rps") {
                Some(rate) => format!("{rate} req/s"),
                None => format!("{} connections", config.load.connections()),
            },
            if confirm { " (confirmation)" } else { "" }
        );
        observer.say(&format!(
            "{label} for {}",
            pelt_core::Human(config.stop.duration.unwrap_or_default())
        ));
        observer.run_started(&label, &format!("sweep-step-{index:02}"), &config);
        let keep = Keep {
            until: None,
            out: Some(&file),
            // The spec's secrets apply to the steps' files as to a run's.
            secrets: self.spec.secrets.clone(),
            ..Keep::default()
        };
        let mut seconds = observer.run_observer();
        let summary = execute(config, keep, cancel, &mut *seconds)?;
        let failures = judge(&summary, &self.rules);
        let mut step = Step::of(index, &summary, failures, confirm);
        step.file = Some(format!("runs/{name}"));
        observer.step_saved(&summary, &file, index);
        let figures = format!(
            "sent {}/s, p99 {}, failed {:.2}%",
            sweep::thousands(step.sent_rate),
            human_ns(step.p99_ns),
            step.failed * 100.0
        );
        observer.say(&match step.failures.as_slice() {
            [] => format!("  held ({figures})"),
            failures => {
                let why: Vec<String> = failures.iter().map(Failure::to_string).collect();
                format!("  failed ({figures}): {}", why.join("; "))
            }
        });
        observer.run_finished(&summary, format!("{index} steps so far"));
        Ok((step, summary))
    }

    /// The target's latency at rest: the best median of three probes.
    fn idle_latency(&self, cancel: &Cancel) -> Result<Duration> {
        let mut best: Option<Duration> = None;
        for _ in 0..3 {
            let s = self.probe(cancel)?;
            if let Some(why) = s.no_response() {
                return Err(Error::other(format!(
                    "the target does not answer before the sweep: {why}"
                )));
            }
            let p50 = median(&s);
            best = Some(best.map_or(p50, |b| b.min(p50)));
        }
        Ok(best.unwrap_or_default())
    }

    /// Waits (at most the spec's cool-down) until the server answers at
    /// its idle latency again, so that no step starts with the last one's
    /// queue.
    fn cool_down(
        &self,
        idle: Duration,
        cancel: &Cancel,
        observer: &mut dyn SweepObserver,
    ) -> Result<()> {
        let goal = idle.mul_f64(COOL_FACTOR) + COOL_SLACK;
        let until = Instant::now() + self.spec.cooldown;
        loop {
            if cancel.is_stopped() {
                return Ok(());
            }
            let s = self.probe(cancel)?;
            let now = median(&s);
            if s.responses() > 0 && now <= goal {
                return Ok(());
            }
            if Instant::now() >= until {
                observer.say(&format!(
                    "  note: the server still answers in {} after {} of cool-down (idle: {}); going on",
                    human_ns(now.as_nanos() as u64),
                    pelt_core::Human(self.spec.cooldown),
                    human_ns(idle.as_nanos() as u64)
                ));
                return Ok(());
            }
            std::thread::sleep(PROBE_PAUSE);
        }
    }

    fn probe(&self, cancel: &Cancel) -> Result<RunSummary> {
        let config = self.config(Load::Probe, self.spec.step)?;
        execute(config, Keep::default(), cancel, &mut crate::Unobserved)
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

/// The target a report names: its URL (or the first and a count), its
/// secrets replaced.
pub fn target_of(config: &RunConfig, secrets: &Redactor) -> String {
    let mut secrets = secrets.clone();
    secrets.learn(config);
    let shown = secrets.config(config);
    match shown.targets.as_slice() {
        [one] => one.url.to_string(),
        [first, ..] => format!("{} and {} more targets", first.url, shown.targets.len() - 1),
        [] => "?".into(),
    }
}

/// A new folder for a sweep in the data directory's sweeps/, named by
/// the time.
pub fn default_folder(places: &crate::Places) -> Result<PathBuf> {
    places.dated_folder("sweeps", None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pelt_core::{Target, Url};

    fn base(load: pelt_core::Load) -> RunConfig {
        let url = Url::parse("http://127.0.0.1:9/").unwrap();
        RunConfig::new(vec![Target::get(url)], load, Stop::default())
    }

    fn new_spec() -> (tempfile::TempDir, SweepSpec) {
        let dir = tempfile::tempdir().unwrap();
        let spec = SweepSpec::new(dir.path().join("sweep"));
        (dir, spec)
    }

    #[test]
    fn a_step_is_the_base_with_its_load_length_and_warmup() {
        let (_dir, mut spec) = new_spec();
        spec.pool = 40;
        spec.warmup = Duration::from_millis(300);
        let mut b = base(pelt_core::Load::closed(3));
        b.http.timeout = Duration::from_secs(7);
        let sweep = Sweep::new(spec, b).unwrap();
        let c = sweep
            .config(Load::Rate(250.0), Duration::from_secs(4))
            .unwrap();
        assert_eq!(c.load, pelt_core::Load::rate_of(250.0, 40));
        assert_eq!(c.stop.duration, Some(Duration::from_secs(4)));
        assert_eq!(c.warmup, Duration::from_millis(300));
        // Everything else is the base's.
        assert_eq!(c.http.timeout, Duration::from_secs(7));
        let probe = sweep.config(Load::Probe, Duration::from_secs(4)).unwrap();
        assert_eq!(probe.load, pelt_core::Load::closed(1));
        assert_eq!(probe.stop.requests, Some(PROBE_REQUESTS));
        assert_eq!((probe.threads, probe.warmup), (1, Duration::ZERO));
    }

    #[test]
    fn a_bad_spec_is_refused_before_any_load() {
        let (_dir, mut spec) = new_spec();
        spec.plan.start = 5_000.0;
        spec.plan.max = 1_000.0;
        let e = Sweep::new(spec, base(pelt_core::Load::closed(1))).unwrap_err();
        // The library names the field; the binary says the flag.
        assert!(
            matches!(e, Error::StartRate { start, max } if start == 5_000.0 && max == 1_000.0),
            "{e}"
        );
        assert!(e.to_string().contains("`plan.start` 5000"), "{e}");
        assert!(!e.to_string().contains("--"), "{e}");

        let (_dir, mut spec) = new_spec();
        spec.pool = 0;
        let e = Sweep::new(spec, base(pelt_core::Load::closed(1))).unwrap_err();
        assert!(
            matches!(e, Error::Config(pelt_core::ConfigError::NoConnections)),
            "{e:?}"
        );

        // A folder with results in it: nothing is mixed in or overwritten.
        let (_dir, spec) = new_spec();
        std::fs::create_dir_all(&spec.folder).unwrap();
        std::fs::write(spec.folder.join("report.txt"), "earlier").unwrap();
        let e = Sweep::new(spec, base(pelt_core::Load::closed(1))).unwrap_err();
        assert!(e.to_string().contains("is not empty"), "{e}");
    }

    #[test]
    fn the_capacity_step_is_the_last_pass_at_the_capacity() {
        let (_dir, spec) = new_spec();
        let folder = spec.folder.clone();
        let sweep = Sweep::new(spec, base(pelt_core::Load::closed(1))).unwrap();
        let step = |offered: f64, passed: bool, file: &str| Step {
            index: 1,
            offered: Some(offered),
            connections: None,
            confirm: false,
            duration_s: 1.0,
            sent_rate: offered,
            throughput: offered,
            p50_ns: 1,
            p90_ns: 1,
            p99_ns: 1,
            max_ns: 1,
            failed: 0.0,
            send_lag_p99_ns: 1,
            passed,
            failures: Vec::new(),
            file: Some(file.into()),
        };
        let report = SweepReport {
            target: String::new(),
            mode: Mode::Rate,
            slo: Vec::new(),
            outcome: Outcome::Found,
            capacity: Some(200.0),
            last_pass: Some(200.0),
            first_fail: Some(400.0),
            first_fail_reasons: Vec::new(),
            knee: None,
            idle_ns: None,
            elapsed_s: 0.0,
            steps: vec![
                step(100.0, true, "runs/a.pelt"),
                step(200.0, true, "runs/b.pelt"),
                step(400.0, false, "runs/c.pelt"),
                step(200.0, true, "runs/d-confirm.pelt"),
            ],
        };
        assert_eq!(
            sweep.capacity_step(&report),
            Some(folder.join("runs/d-confirm.pelt"))
        );
    }
}
