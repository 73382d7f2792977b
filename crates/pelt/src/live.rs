//! `pelt run --metrics` and `--dashboard`: the live views' flags, and starting them before
//! any load is sent (pelt-live does the work).

use crate::flags::LiveArgs;
use crate::flags::UserError;
use pelt_core::{RunConfig, RunSummary};
use pelt_live::Live;

/// Runs at least this long get the terminal dashboard by default.
const TUI_FROM: std::time::Duration = std::time::Duration::from_secs(5);

pub use pelt_live::Views;

/// Binds what `args` ask for, before any load: a port in use or a remote
/// address not allowed is bad input. `secrets` redacts the target URLs
/// shown in labels. The terminal dashboard is on with --tui, or by
/// default for a run of more than 5 s on a terminal (unless --no-tui or
/// quiet).
pub fn start(
    args: &LiveArgs,
    config: &RunConfig,
    secrets: &pelt_core::Redactor,
    quiet: bool,
) -> Result<Views, UserError> {
    let long = config
        .effective_stop()
        .duration
        .is_some_and(|d| d > TUI_FROM);
    let tui = args.tui
        || (!args.no_tui && !quiet && long && std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let spec = pelt_live::ViewsSpec {
        tui,
        metrics: args.metrics.clone(),
        metrics_allow_remote: args.metrics_allow_remote,
        dashboard: args.dashboard.clone(),
        dashboard_allow_remote: args.dashboard_allow_remote,
        metrics_push: args.metrics_push.clone(),
    };
    let (views, said) = Views::start(&spec, config, secrets, |why| {
        eprintln!("pelt: warning: {why}; the run goes on without it");
    })
    .map_err(|e| UserError(e.to_string()))?;
    for line in said {
        eprintln!("pelt: {line}");
    }
    Ok(views)
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
        self.campaign
            .runs
            .push(pelt_live::CampaignRun::of(label, summary));
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

    fn warning(&mut self, message: &str) {
        // On a line of its own, not through the progress line.
        if let Some(line) = &mut self.line {
            line.clear();
        }
        eprintln!("pelt: warning: {message}");
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
    pub history: Option<(&'a mut pelt_history::Recording, String)>,
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
            if let Err(e) = h.record_step(summary, file, id, index) {
                crate::output::not_recorded("a sweep's step", &e);
            }
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
/// progress line if it is on (`q` there stops the run as Ctrl-C does; a
/// terminal that goes away, as SIGHUP does).
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
        pelt_live::tui::Tui::start(live, planned.duration, move |why| match why {
            pelt_live::tui::Stop::Quit => token.cancel(),
            // A closed tmux session or SSH connection: as SIGHUP, which
            // a process outside the terminal's session never gets.
            pelt_live::tui::Stop::Gone => crate::signals::hang_up(),
        })
        .map_err(|e| eprintln!("pelt: no terminal dashboard ({e}); showing the progress line"))
        .ok()
    });
    let mut shown = Shown::new(quiet || tui.is_some(), views.feed());
    let summary = pelt_campaign::execute(config, keep, &token, &mut shown);
    // The terminal back as it was before the report is printed.
    drop(tui);
    Ok(summary?)
}
