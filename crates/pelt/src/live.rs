//! `pelt run --metrics` and `--dashboard`: the live views' flags, and starting them before
//! any load is sent (pelt-live does the work).

use crate::flags::LiveArgs;
use crate::UserError;
use pelt_core::{RunConfig, RunSummary};
use pelt_live::{Live, TargetLabels};

/// Runs at least this long get the terminal dashboard by default.
const TUI_FROM: std::time::Duration = std::time::Duration::from_secs(5);

/// The live views of one run, listening already.
#[derive(Debug, Default)]
pub struct Views {
    live: Vec<Live>,
    tui: Option<Live>,
}

impl Views {
    /// Binds what `args` ask for, before any load: a port in use or a
    /// remote address not allowed is bad input. `secrets` redacts the
    /// target URLs shown in labels.
    pub fn start(
        args: &LiveArgs,
        config: &RunConfig,
        secrets: &pelt_store::Redactor,
        quiet: bool,
    ) -> Result<Views, UserError> {
        let mut views = Views::default();
        let long = config
            .effective_stop()
            .duration
            .is_some_and(|d| d > TUI_FROM);
        let tui = args.tui
            || (!args.no_tui
                && !quiet
                && long
                && std::io::IsTerminal::is_terminal(&std::io::stderr()));
        if tui {
            let live = Live::new(String::new(), TargetLabels::default());
            views.live.push(live.clone());
            views.tui = Some(live);
        }
        if args.metrics.is_none() && args.dashboard.is_none() && args.metrics_push.is_none() {
            return Ok(views);
        }
        // Checked before anything listens: nothing to undo if refused.
        let push = args
            .metrics_push
            .as_deref()
            .map(|url| {
                let target = pelt_live::push::PushTarget::parse(url)?;
                target.check()?;
                Ok(target)
            })
            .transpose()
            .map_err(|e: pelt_live::push::PushError| UserError(e.to_string()))?;
        // Both bound before either serves: a second refusal must not
        // leave the first listening for nothing.
        let metrics = args
            .metrics
            .as_deref()
            .map(|addr| {
                pelt_live::bind(
                    "--metrics",
                    addr,
                    args.metrics_allow_remote,
                    "--metrics-allow-remote",
                )
            })
            .transpose()
            .map_err(|e| UserError(e.to_string()))?;
        let dashboard = args
            .dashboard
            .as_deref()
            .map(|addr| {
                pelt_live::bind(
                    "--dashboard",
                    addr,
                    args.dashboard_allow_remote,
                    "--dashboard-allow-remote",
                )
            })
            .transpose()
            .map_err(|e| UserError(e.to_string()))?;
        let labels = labels(config, secrets);
        // Unique per run unless --run-id (or the shards' --start-at) names
        // it: two runs with the same flags are two series in Prometheus.
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let id = config.live_run_id(now_ms);
        let thread_error =
            |e: std::io::Error| UserError(format!("cannot start a thread: {e}; free some memory"));
        if let Some(bound) = metrics {
            let live = Live::new(id.clone(), labels.clone());
            let local = bound.local_addr();
            pelt_live::serve_metrics(bound, live.clone()).map_err(thread_error)?;
            let urls: Vec<String> = pelt_live::reachable_urls(local)
                .into_iter()
                .map(|u| format!("{u}/metrics"))
                .collect();
            eprintln!("pelt: metrics on {} (run=\"{id}\")", urls.join(" "));
            views.live.push(live);
        }
        if let Some(target) = push {
            let live = Live::new(id.clone(), labels.clone());
            let url = target.url.clone();
            pelt_live::push::spawn(target, live.clone(), |why| {
                eprintln!("pelt: warning: {why}; the run goes on without it");
            })
            .map_err(thread_error)?;
            eprintln!("pelt: pushing metrics to {url} (run=\"{id}\")");
            views.live.push(live);
        }
        if let Some(bound) = dashboard {
            let live = Live::new(id.clone(), labels);
            let local = bound.local_addr();
            // Beyond loopback, anyone who can reach the port could watch:
            // only those given the token can.
            let token = args.dashboard_allow_remote.then(token).transpose()?;
            pelt_live::serve_dashboard(bound, live.clone(), token.clone()).map_err(thread_error)?;
            // On 0.0.0.0, the addresses others can open, not 0.0.0.0.
            let urls: Vec<String> = pelt_live::reachable_urls(local)
                .into_iter()
                .map(|u| match &token {
                    Some(t) => format!("{u}/?token={t}"),
                    None => format!("{u}/"),
                })
                .collect();
            eprintln!("pelt: dashboard on {}", urls.join(" "));
            views.live.push(live);
        }
        Ok(views)
    }

    /// `pelt experiment`: the campaign's next run starts, with `config`,
    /// named `run_id`; the views' figures start afresh.
    pub fn next_run(&self, run_id: &str, config: &RunConfig, secrets: &pelt_store::Redactor) {
        let labels = labels(config, secrets);
        for live in &self.live {
            live.next_run(run_id.to_string(), labels.clone());
        }
    }

    /// `pelt experiment`: publishes the campaign's progress.
    pub fn campaign(&self, campaign: &pelt_live::Campaign) {
        for live in &self.live {
            live.campaign(campaign.clone());
        }
    }

    /// After a campaign: shows its final report (JSON), and lets watchers
    /// collect the final figures.
    pub fn close_campaign(&self, report: String) {
        for live in &self.live {
            live.finish_with(Some(report.clone()));
        }
        for live in &self.live {
            live.wait_final_scrape(pelt_live::FINAL_SCRAPE_WAIT);
        }
    }

    /// Whether anything watches (a campaign's progress is worth working
    /// out only then).
    pub fn watched(&self) -> bool {
        !self.live.is_empty()
    }

    /// What the results thread feeds.
    pub fn feed(&self) -> Vec<Live> {
        self.live.clone()
    }

    /// What the terminal dashboard draws, if it is on.
    pub fn tui(&self) -> Option<Live> {
        self.tui.clone()
    }

    /// After the report: shows it on the dashboard, and lets a scraper or
    /// page that has been watching collect the final figures.
    pub fn close(self, summary: &RunSummary) {
        if self.live.is_empty() {
            return;
        }
        let report = pelt_report::json_value(summary).to_string();
        let elapsed = summary.elapsed.as_secs_f64();
        for live in &self.live {
            live.finish_run(Some(report.clone()), elapsed);
        }
        for live in &self.live {
            live.wait_final_scrape(pelt_live::FINAL_SCRAPE_WAIT);
        }
    }
}

/// A dashboard token: 128 random bits from the system, as hex.
fn token() -> Result<String, UserError> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(|e| {
            UserError(format!(
                "--dashboard-allow-remote: cannot read /dev/urandom for a token: {e}"
            ))
        })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The run's id in metric labels: when it started, in Unix milliseconds
/// (unique per machine, sortable, and readable as a time).
/// The targets as labels, with their secrets replaced.
fn labels(config: &RunConfig, secrets: &pelt_store::Redactor) -> TargetLabels {
    let mut shown = secrets.clone();
    shown.learn(config);
    TargetLabels::new(
        shown
            .config(config)
            .targets
            .iter()
            .map(|t| format!("{} {}", t.method, t.url)),
    )
}

/// The live views (`--dashboard`, `--metrics`) and the progress of a
/// campaign of runs (`pelt experiment`, `pelt sweep`) they show.
pub struct Watch {
    pub views: Views,
    pub campaign: pelt_live::Campaign,
}

impl Watch {
    /// Run `label` (named `run_id`, loading with `config`) starts.
    pub fn start(&mut self, label: String, run_id: &str, config: &pelt_core::RunConfig) {
        self.campaign.current = Some(label);
        self.views.campaign(&self.campaign);
        self.views
            .next_run(run_id, config, &pelt_store::Redactor::default());
    }

    /// The run in progress ended with `summary`; `verdicts` are the
    /// campaign's report so far.
    pub fn finished(&mut self, summary: &pelt_core::RunSummary, verdicts: String) {
        let label = self.campaign.current.take().unwrap_or_default();
        let l = &summary.total.response;
        let quantile = |q: f64| match l.is_empty() {
            true => "-".to_string(),
            false => pelt_core::human_ns(pelt_core::rank::quantile(l, q)).to_string(),
        };
        let failed = summary.total.failed_share() * 100.0;
        self.campaign.runs.push(pelt_live::CampaignRun {
            label,
            status: match summary.interrupted {
                true => "interrupted",
                false => "done",
            }
            .into(),
            figures: vec![
                ("req/s".into(), format!("{:.1}", summary.throughput())),
                ("p50".into(), quantile(0.5)),
                ("p99".into(), quantile(0.99)),
                ("failed".into(), format!("{failed:.2}%")),
            ],
        });
        self.campaign.verdicts = verdicts;
        self.views.campaign(&self.campaign);
    }
}

/// What the command line shows of a run as it goes: the progress line
/// (on a terminal, unless quiet) and each second fed to the live views.
#[derive(Debug)]
pub struct Shown {
    quiet: bool,
    line: Option<crate::progress::ProgressLine>,
    live: Vec<Live>,
}

impl Shown {
    /// The progress line unless `quiet`, and `live`'s views.
    pub fn new(quiet: bool, live: Vec<Live>) -> Shown {
        Shown {
            quiet,
            line: None,
            live,
        }
    }
}

impl pelt_campaign::RunObserver for Shown {
    fn started(&mut self, planned: &pelt_core::Stop, warmup: std::time::Duration) {
        self.line = Some(crate::progress::ProgressLine::new(
            self.quiet, *planned, warmup,
        ));
    }

    fn interval(&mut self, elapsed: std::time::Duration, s: &pelt_engine::Snapshot) {
        for view in &self.live {
            view.feed(
                &s.row,
                &s.recorder,
                pelt_live::Gauges {
                    in_flight: s.in_flight,
                    connections_open: s.connections_open,
                },
            );
        }
        if let Some(line) = &mut self.line {
            line.update(elapsed, Some(s));
        }
    }

    fn waiting(&mut self, elapsed: std::time::Duration) {
        if let Some(line) = &mut self.line {
            line.update(elapsed, None);
        }
    }

    fn finished(&mut self) {
        if let Some(line) = &mut self.line {
            line.clear();
        }
    }
}

/// A campaign (`pelt sweep`, `pelt calibrate`) as the command line shows
/// it: progress lines on stderr (unless quiet) and the live views, and
/// each step recorded in the history, if there is one.
pub struct Campaign<'a> {
    pub watch: Option<&'a mut Watch>,
    /// Printed before each progress line: "pelt: ", "pelt calibrate: ".
    pub prefix: &'static str,
    pub quiet: bool,
    /// The history the steps go into, and the sweep's id there.
    pub history: Option<(&'a mut pelt_campaign::history::Recording, String)>,
}

impl pelt_campaign::Observer for Campaign<'_> {
    fn say(&mut self, line: &str) {
        if !self.quiet {
            eprintln!("{}{line}", self.prefix);
        }
    }

    fn run_started(&mut self, label: &str, run_id: &str, config: &RunConfig) {
        if let Some(w) = &mut self.watch {
            w.campaign.total = w.campaign.total.max(w.campaign.runs.len() + 1);
            w.start(label.to_string(), run_id, config);
        }
    }

    fn run_observer(&mut self) -> Box<dyn pelt_campaign::RunObserver> {
        let live = self.watch.as_ref().map_or(Vec::new(), |w| w.views.feed());
        Box::new(Shown::new(true, live))
    }

    fn run_finished(&mut self, summary: &RunSummary, so_far: String) {
        if let Some(w) = &mut self.watch {
            if w.views.watched() {
                w.finished(summary, so_far);
            }
        }
    }

    fn done(&mut self, text: &str, json: &str) {
        if let Some(w) = &mut self.watch {
            w.campaign.verdicts = text.to_string();
            w.views.campaign(&w.campaign);
            w.views.close_campaign(json.to_string());
        }
    }
}

impl pelt_campaign::sweep::SweepObserver for Campaign<'_> {
    fn step_saved(&mut self, summary: &RunSummary, file: &std::path::Path, index: usize) {
        if let Some((h, id)) = &mut self.history {
            h.record_step(summary, file, id, index);
        }
    }
}

/// Runs `config` as the command line shows a run: the progress line
/// unless `quiet`, `live`'s views fed each second, and a signal stops it.
pub fn execute(
    config: RunConfig,
    quiet: bool,
    keep: pelt_campaign::Keep<'_>,
    live: Vec<Live>,
) -> Result<RunSummary, UserError> {
    let mut shown = Shown::new(quiet, live);
    Ok(pelt_campaign::execute(
        config,
        keep,
        &crate::signals::token(),
        &mut shown,
    )?)
}

/// [`execute`] with `views`, the terminal dashboard drawn instead of the
/// progress line if it is on (`q` there stops the run as Ctrl-C does).
pub fn execute_watched(
    config: RunConfig,
    quiet: bool,
    keep: pelt_campaign::Keep<'_>,
    views: &Views,
) -> Result<RunSummary, UserError> {
    let planned = config.effective_stop();
    let token = crate::signals::token();
    let tui = views.tui().and_then(|live| {
        let token = token.clone();
        pelt_live::tui::Tui::start(live, planned.duration, move || token.cancel())
            .map_err(|e| eprintln!("pelt: no terminal dashboard ({e}); showing the progress line"))
            .ok()
    });
    let mut shown = Shown::new(quiet || tui.is_some(), views.feed());
    let summary = pelt_campaign::execute(config, keep, &token, &mut shown);
    // The terminal back as it was before the report is printed.
    drop(tui);
    Ok(summary?)
}
