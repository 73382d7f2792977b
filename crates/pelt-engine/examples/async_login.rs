//! A run from async code, with a login first (`pelt run --login`): each
//! connection logs in before the clock starts and sends its cookies.
//!
//!     cargo run --release -p pelt-engine --example async_login
//!
//! `Run::start_async` and `Run::wait_async` never block the runtime, so
//! they work on either flavour, even a current-thread one (a
//! `#[tokio::test]`) with the server under test on it. A timeout around
//! the wait that expires drops the run, which cancels it.

use pelt_core::{Load, RunConfig, SessionOptions, Stop, Target, Url};
use pelt_engine::Run;
use pelt_target::{ServeConfig, Server};
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The flavour of `#[tokio::test]`: one thread, the caller's.
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(harness())
}

/// What a service's async benchmark harness would do.
async fn harness() -> Result<(), Box<dyn std::error::Error>> {
    // pelt's target server has a runtime of its own; it may be started
    // and dropped in async code.
    let server = Server::bind(([127, 0, 0, 1], 0).into(), ServeConfig::default())?.spawn()?;
    let base = format!("http://{}", server.local_addr());
    let stop = Stop {
        requests: Some(500),
        duration: Some(Duration::from_secs(10)),
    };
    let mut config = RunConfig::new(
        vec![Target::get(Url::parse(&format!("{base}/"))?)],
        Load::closed(4),
        stop,
    );
    // The CLI's `--login`: the form as application/x-www-form-urlencoded,
    // cookies on, so this run compares with `pelt run --login` like with
    // like.
    config.http.session =
        SessionOptions::login(&format!("POST {base}/login user=alice&password=example"))?;
    let run = Run::start_async(config).await?;
    let summary = tokio::time::timeout(Duration::from_secs(30), run.wait_async()).await?;
    println!(
        "{} logins, {} requests, {} answered",
        summary.total.logins, summary.total.requests, summary.total.successes
    );
    Ok(())
}
