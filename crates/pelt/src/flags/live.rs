//! Watching a run live: `--tui`, `--metrics`, `--dashboard`.

use clap::Args;

/// Watching a run live.
#[derive(Debug, Clone, Default, Args)]
pub struct LiveArgs {
    /// Serve Prometheus metrics on http://ADDR/metrics during the run
    /// (counters, gauges and latency histograms labelled by a run id
    /// unique per run, printed at start, or a sharded run's --run-id; see
    /// docs/LIVE.md). Loopback only unless --metrics-allow-remote. After
    /// the run, pelt waits up to 5 s for a scraper that has been scraping
    /// to collect the final figures. `:PORT` and `localhost:PORT` mean
    /// 127.0.0.1:PORT.
    #[arg(long = "metrics", value_name = "IP:PORT")]
    pub metrics: Option<String>,

    /// Let --metrics listen on an address other than loopback (anyone who
    /// can reach it sees the run's figures and target URLs).
    #[arg(long = "metrics-allow-remote", requires = "metrics")]
    pub metrics_allow_remote: bool,

    /// Push the --metrics series to a Prometheus remote-write receiver
    /// each second and once more at the end (for runs shorter than a
    /// scrape interval): http://HOST:PORT/PATH, e.g. Prometheus started
    /// with --web.enable-remote-write-receiver at
    /// http://127.0.0.1:9090/api/v1/write. Checked before any load; a
    /// failed push is a warning, not the end of the run. After the run,
    /// pelt waits up to 5 s for the final push.
    #[arg(long = "metrics-push", value_name = "URL")]
    pub metrics_push: Option<String>,

    /// Serve a live dashboard on http://ADDR/ during the run: one page
    /// (nothing loaded from elsewhere) with the figures each second, and
    /// the final report when the run ends. Loopback only unless
    /// --dashboard-allow-remote (on 0.0.0.0, pelt prints the addresses to
    /// open). `:PORT` and `localhost:PORT` mean 127.0.0.1:PORT.
    #[arg(long = "dashboard", value_name = "IP:PORT")]
    pub dashboard: Option<String>,

    /// Let --dashboard listen on an address other than loopback; every
    /// request then needs the random token pelt prints at start.
    #[arg(long = "dashboard-allow-remote", requires = "dashboard")]
    pub dashboard_allow_remote: bool,

    /// Show a terminal dashboard on stderr during the run (latency chart,
    /// histogram, statuses; q or Ctrl-C stops the run) [default: on when
    /// stderr is a terminal and the run lasts longer than 5 s, unless -q].
    #[arg(long = "tui", conflicts_with = "no_tui")]
    pub tui: bool,

    /// Keep the one-line progress display instead of the terminal dashboard.
    #[arg(long = "no-tui")]
    pub no_tui: bool,
}
