//! `pelt run --metrics`: the live views' flags, and starting them before
//! any load is sent (pelt-live does the work).

use crate::UserError;
use clap::Args;
use pelt_core::RunConfig;
use pelt_live::{Live, TargetLabels};

/// Watching a run live.
#[derive(Debug, Clone, Default, Args)]
pub struct LiveArgs {
    /// Serve Prometheus metrics on http://ADDR/metrics during the run
    /// (counters, gauges and latency histograms labelled by run id; see
    /// docs/LIVE.md). Loopback only unless --metrics-allow-remote. After
    /// the run, pelt waits up to 5 s for a scraper that has been scraping
    /// to collect the final figures.
    #[arg(long = "metrics", value_name = "IP:PORT")]
    pub metrics: Option<String>,

    /// Let --metrics listen on an address other than loopback (anyone who
    /// can reach it sees the run's figures and target URLs).
    #[arg(long = "metrics-allow-remote", requires = "metrics")]
    pub metrics_allow_remote: bool,
}

/// The live views of one run, listening already.
#[derive(Debug, Default)]
pub struct Views {
    live: Option<Live>,
}

impl Views {
    /// Binds what `args` ask for, before any load: a port in use or a
    /// remote address not allowed is bad input. `secrets` redacts the
    /// target URLs shown in labels.
    pub fn start(
        args: &LiveArgs,
        config: &RunConfig,
        secrets: &pelt_store::Redactor,
    ) -> Result<Views, UserError> {
        let Some(addr) = &args.metrics else {
            return Ok(Views::default());
        };
        let bound = pelt_live::bind(
            "--metrics",
            addr,
            args.metrics_allow_remote,
            "--metrics-allow-remote",
        )
        .map_err(|e| UserError(e.to_string()))?;
        let mut shown = secrets.clone();
        shown.learn(config);
        let labels = TargetLabels::new(
            shown
                .config(config)
                .targets
                .iter()
                .map(|t| format!("{} {}", t.method, t.url)),
        );
        let live = Live::new(run_id(), labels);
        let local = bound.local_addr();
        pelt_live::serve_metrics(bound, live.clone())
            .map_err(|e| UserError(format!("--metrics: cannot start a thread: {e}")))?;
        eprintln!("pelt: metrics on http://{local}/metrics");
        Ok(Views { live: Some(live) })
    }

    /// What the results thread feeds, if anything is watching.
    pub fn feed(&self) -> Option<Live> {
        self.live.clone()
    }

    /// After the report: lets a scraper collect the final figures.
    pub fn close(self) {
        if let Some(live) = self.live {
            live.finish();
            live.wait_final_scrape(pelt_live::FINAL_SCRAPE_WAIT);
        }
    }
}

/// The run's id in metric labels: when it started, in Unix milliseconds
/// (unique per machine, sortable, and readable as a time).
fn run_id() -> String {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
        .to_string()
}
