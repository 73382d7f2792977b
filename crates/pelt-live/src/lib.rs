//! pelt-live: watching a run while it goes.
//!
//! The binary's results thread (never a worker) hands every finished
//! second to a [`Live`] with [`Live::feed`]; servers started with
//! [`serve_metrics`] read it when asked. Workers never see any of this: a
//! slow or stuck scraper costs the results thread nothing but a lock held
//! for the time it takes to render the text.
//!
//! The HTTP side is a small blocking server on `std::net` and `httparse`
//! (a thread per connection, a bounded number of them): one page and one
//! scrape a second need nothing more.

#![warn(missing_docs)]

mod campaign;
pub mod dashboard;
pub mod metrics;
pub mod push;
mod server;
mod state;
pub mod tui;
mod views;

pub use campaign::{Campaign, CampaignRun};
pub use server::{
    bind, check_listen, listen_addr, reachable_urls, Bound, LiveError, MAX_CONNECTIONS,
};
pub use state::{Gauges, Live, TargetLabels};
pub use views::{Views, ViewsError, ViewsSpec};

use std::time::Duration;

/// How long a finished run waits for a scraper that has been scraping to
/// collect the final figures: a little more than the slowest usual
/// scrape interval of a local Prometheus set up for a load test.
pub const FINAL_SCRAPE_WAIT: Duration = Duration::from_secs(5);

/// Serves the dashboard (see [`dashboard::serve`]).
pub use dashboard::serve as serve_dashboard;

/// Serves `/metrics` from `live` on `bound` until the process ends.
pub fn serve_metrics(bound: Bound, live: Live) -> std::io::Result<()> {
    server::spawn(bound, move |req| match req.path {
        "/metrics" => {
            let (text, finished) = live.read(|s| (metrics::render(s), s.finished));
            let live = live.clone();
            // Counted once written: the run may end as soon as it is.
            server::Response::ok(metrics::CONTENT_TYPE, text.into_bytes())
                .then(move || live.delivered(finished))
        }
        "/" => server::Response::ok(
            "text/plain; charset=utf-8",
            b"pelt: Prometheus metrics are at /metrics\n".to_vec(),
        ),
        _ => server::Response::not_found(),
    })
}
