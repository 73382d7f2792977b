//! Each second as it completes, and a run stopped early: a closed loop
//! meant to last a minute, cancelled once 2 seconds have been measured.
//!
//!     cargo run --release -p pelt-engine --example snapshots_cancel

use pelt_core::{Load, RunConfig, Stop, Target, Url};
use pelt_engine::Run;
use pelt_target::{ServeConfig, Server};
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::bind(([127, 0, 0, 1], 0).into(), ServeConfig::default())?.spawn()?;
    let url = Url::parse(&format!("http://{}/", server.local_addr()))?;
    let stop = Stop {
        requests: None,
        duration: Some(Duration::from_secs(60)),
    };
    let run = Run::start(RunConfig::new(
        vec![Target::get(url)],
        Load::closed(8),
        stop,
    ))?;
    // A Canceller works from any thread (a signal handler, a timer).
    let canceller = run.canceller();
    for (i, second) in run.snapshots().enumerate() {
        println!(
            "second {i}: {} requests, {} failed so far, {} connections open",
            second.row.requests, second.total_failed, second.connections_open
        );
        if i == 2 {
            canceller.cancel();
        }
    }
    let summary = run.wait();
    println!(
        "stopped early: {}; {} requests at {:.0} req/s",
        summary.interrupted,
        summary.total.requests,
        summary.request_rate()
    );
    for warning in &summary.warnings {
        // A debug build says so here: build with --release to measure.
        println!("warning: {warning}");
    }
    Ok(())
}
