//! Benchmarks a URL as a library user would: 50 connections for 5 seconds,
//! a line per wall-clock second (the first and last are partial), then the
//! summary.
//!
//!     cargo run --release -p pelt-engine --example bench_url [URL]
//!
//! Without a URL it loads pelt's built-in target server, started here on
//! a free loopback port. Give only URLs of servers you run.

use pelt_core::{Load, RunConfig, Stop, Target, Url};
use pelt_engine::{Progress, Run};
use pelt_target::{ServeConfig, Server};
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::bind(([127, 0, 0, 1], 0).into(), ServeConfig::default())?.spawn()?;
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| format!("http://{}/", server.local_addr()));
    let stop = Stop {
        requests: None,
        duration: Some(Duration::from_secs(5)),
    };
    let config = RunConfig::new(vec![Target::get(Url::parse(&url)?)], Load::closed(50), stop);
    let run = Run::start(config)?;
    loop {
        match run.progress(Duration::from_millis(100)) {
            Progress::Interval(s) => println!(
                "{:>8} requests  p99 {:>6.2} ms",
                s.row.requests,
                s.row.p99_ns as f64 / 1e6
            ),
            Progress::Waiting => {}
            Progress::Finished => break,
        }
    }
    let summary = run.wait();
    let (requests, errors) = (summary.total.requests, summary.total.error_count());
    println!(
        "{url}: {requests} requests, {errors} errors, {:.0} req/s",
        summary.request_rate()
    );
    Ok(())
}
