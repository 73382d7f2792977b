//! The live views of one run (or a campaign of runs), started before any
//! load: the terminal dashboard's figures, Prometheus metrics served or
//! pushed, the web dashboard. A port in use or a remote address not
//! allowed is found here, before a request is sent.

use crate::{Live, TargetLabels};
use pelt_core::{Redactor, RunConfig, RunSummary};
use std::sync::Arc;

/// What to watch a run with.
#[derive(Debug, Clone, Default)]
pub struct ViewsSpec {
    /// Feed the terminal dashboard (drawn by [`crate::tui::Tui`]).
    pub tui: bool,
    /// Serve Prometheus metrics on this address (`IP:PORT`, `:PORT`).
    pub metrics: Option<String>,
    /// Allow a non-loopback metrics address.
    pub metrics_allow_remote: bool,
    /// Serve the web dashboard on this address.
    pub dashboard: Option<String>,
    /// Allow a non-loopback dashboard address (it then needs a token).
    pub dashboard_allow_remote: bool,
    /// Push metrics by Prometheus remote write to this URL.
    pub metrics_push: Option<String>,
}

/// Why the views could not start.
#[derive(Debug, thiserror::Error)]
pub enum ViewsError {
    /// A listening address is in use or not allowed.
    #[error(transparent)]
    Bind(#[from] crate::LiveError),
    /// A push target is not usable.
    #[error(transparent)]
    Push(#[from] crate::push::PushError),
    /// A server thread could not start.
    #[error("cannot start a thread: {0}; free some memory")]
    Thread(std::io::Error),
    /// No token for a remote dashboard.
    #[error("--dashboard-allow-remote: cannot read /dev/urandom for a token: {0}")]
    Token(std::io::Error),
}

/// The live views of one run, listening already.
#[derive(Debug, Default)]
pub struct Views {
    live: Vec<Live>,
    tui: Option<Live>,
    /// Whether a view shows the final report (the web dashboard does;
    /// the terminal dashboard and the metrics do not).
    shows_report: bool,
}

impl Views {
    /// Binds what `args` ask for, before any load: a port in use or a
    /// remote address not allowed is bad input. `secrets` redacts the
    /// target URLs shown in labels.
    pub fn start(
        args: &ViewsSpec,
        config: &RunConfig,
        secrets: &Redactor,
        warn: impl Fn(String) + Send + 'static,
    ) -> Result<(Views, Vec<String>), ViewsError> {
        let mut views = Views::default();
        let mut said = Vec::new();
        let headline = pelt_core::Headline::for_rate_mode(config.load.rate().is_some());
        if args.tui {
            let live = Live::new(String::new(), TargetLabels::default());
            live.set_headline(headline);
            live.set_rate_unit(config.rate_unit());
            views.live.push(live.clone());
            views.tui = Some(live);
        }
        if args.metrics.is_none() && args.dashboard.is_none() && args.metrics_push.is_none() {
            return Ok((views, said));
        }
        // Checked before anything listens: nothing to undo if refused.
        let push = args
            .metrics_push
            .as_deref()
            .map(|url| {
                let target = crate::push::PushTarget::parse(url)?;
                target.check()?;
                Ok(target)
            })
            .transpose()
            .map_err(ViewsError::Push)?;
        // Both bound before either serves: a second refusal must not
        // leave the first listening for nothing.
        let metrics = args
            .metrics
            .as_deref()
            .map(|addr| {
                crate::bind(
                    "--metrics",
                    addr,
                    args.metrics_allow_remote,
                    "--metrics-allow-remote",
                )
            })
            .transpose()
            .map_err(ViewsError::Bind)?;
        let dashboard = args
            .dashboard
            .as_deref()
            .map(|addr| {
                crate::bind(
                    "--dashboard",
                    addr,
                    args.dashboard_allow_remote,
                    "--dashboard-allow-remote",
                )
            })
            .transpose()
            .map_err(ViewsError::Bind)?;
        let labels = labels(config, secrets);
        // Unique per run unless --run-id (or the shards' --start-at) names
        // it: two runs with the same flags are two series in Prometheus.
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let id = config.live_run_id(now_ms);
        let thread_error = ViewsError::Thread;
        if let Some(bound) = metrics {
            let live = Live::new(id.clone(), labels.clone());
            let local = bound.local_addr();
            crate::serve_metrics(bound, live.clone()).map_err(thread_error)?;
            let urls: Vec<String> = crate::reachable_urls(local)
                .into_iter()
                .map(|u| format!("{u}/metrics"))
                .collect();
            said.push(format!("metrics on {} (run=\"{id}\")", urls.join(" ")));
            views.live.push(live);
        }
        if let Some(target) = push {
            let live = Live::new(id.clone(), labels.clone());
            let url = target.url.clone();
            crate::push::spawn(target, live.clone(), warn).map_err(thread_error)?;
            said.push(format!("pushing metrics to {url} (run=\"{id}\")"));
            views.live.push(live);
        }
        if let Some(bound) = dashboard {
            let live = Live::new(id.clone(), labels);
            let local = bound.local_addr();
            // Beyond loopback, anyone who can reach the port could watch:
            // only those given the token can.
            let token = args.dashboard_allow_remote.then(token).transpose()?;
            crate::serve_dashboard(bound, live.clone(), token.clone()).map_err(thread_error)?;
            // On 0.0.0.0, the addresses others can open, not 0.0.0.0.
            let urls: Vec<String> = crate::reachable_urls(local)
                .into_iter()
                .map(|u| match &token {
                    Some(t) => format!("{u}/?token={t}"),
                    None => format!("{u}/"),
                })
                .collect();
            said.push(format!("dashboard on {}", urls.join(" ")));
            views.live.push(live);
            views.shows_report = true;
        }
        for live in &views.live {
            live.set_headline(headline);
            live.set_rate_unit(config.rate_unit());
        }
        Ok((views, said))
    }

    /// `pelt experiment`: the campaign's next run starts, with `config`,
    /// named `run_id`; the views' figures start afresh.
    pub fn next_run(&self, run_id: &str, config: &RunConfig, secrets: &Redactor) {
        let labels = labels(config, secrets);
        let headline = pelt_core::Headline::for_rate_mode(config.load.rate().is_some());
        for live in &self.live {
            live.next_run(run_id.to_string(), labels.clone());
            live.set_headline(headline);
            live.set_rate_unit(config.rate_unit());
        }
    }

    /// `pelt experiment`: publishes the campaign's progress.
    pub fn campaign(&self, campaign: &crate::Campaign) {
        for live in &self.live {
            live.campaign(campaign.clone());
        }
    }

    /// After a campaign: shows its final report (JSON), and lets watchers
    /// collect the final figures.
    pub fn close_campaign(&self, report: String) {
        let report = Arc::new(report);
        for live in &self.live {
            live.finish_with(Some(report.clone()));
        }
        for live in &self.live {
            live.wait_final_scrape(crate::FINAL_SCRAPE_WAIT);
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
    pub fn close(self, summary: &RunSummary, report: impl FnOnce() -> String) {
        if self.live.is_empty() {
            return;
        }
        // Made only when a view shows it, and once for all of them: for a
        // run of many targets the JSON report is the largest thing pelt
        // builds.
        let report = self.shows_report.then(|| Arc::new(report()));
        let elapsed = summary.elapsed.as_secs_f64();
        for live in &self.live {
            live.finish_run(report.clone(), elapsed);
        }
        for live in &self.live {
            live.wait_final_scrape(crate::FINAL_SCRAPE_WAIT);
        }
    }
}

/// A dashboard token: 128 random bits from the system, as hex.
fn token() -> Result<String, ViewsError> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(ViewsError::Token)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The run's id in metric labels: when it started, in Unix milliseconds
/// (unique per machine, sortable, and readable as a time).
/// The targets as labels, with their secrets replaced.
fn labels(config: &RunConfig, secrets: &Redactor) -> TargetLabels {
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
