//! A run from async code, with a login first (`pelt run --login`): each
//! connection logs in before the clock starts and sends its cookies.
//!
//!     cargo run --release -p pelt-engine --example async_login
//!
//! `Run::start` is a blocking call (it resolves hosts and logs in, a few
//! milliseconds); it works from inside a tokio runtime of either flavour.
//! For a long run, wait for it on a blocking thread
//! (`tokio::task::spawn_blocking(move || run.wait())`) so that the
//! runtime's other tasks go on.

use pelt_core::{Load, RunConfig, Stop, Target, Url};
use pelt_engine::Run;
use pelt_target::{ServeConfig, Server};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The target server (with a runtime of its own) lives outside the
    // async code: a runtime cannot be dropped inside another.
    let server = Server::bind(([127, 0, 0, 1], 0).into(), ServeConfig::default())?.spawn()?;
    let base = format!("http://{}", server.local_addr());
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(harness(base))
}

/// What a service's async benchmark harness would do.
async fn harness(base: String) -> Result<(), Box<dyn std::error::Error>> {
    let stop = Stop {
        requests: Some(500),
        duration: Some(std::time::Duration::from_secs(10)),
    };
    let mut config = RunConfig::new(
        vec![Target::get(Url::parse(&format!("{base}/"))?)],
        Load::closed(4),
        stop,
    );
    let mut login = Target::get(Url::parse(&format!("{base}/login"))?);
    login.method = "POST".into();
    login.body = b"user=alice&password=example".to_vec();
    config.http.session.login = Some(login);
    let run = Run::start(config)?;
    let summary = tokio::task::spawn_blocking(move || run.wait()).await?;
    println!(
        "{} logins, {} requests, {} answered",
        summary.total.logins, summary.total.requests, summary.total.successes
    );
    Ok(())
}
