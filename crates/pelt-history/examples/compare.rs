//! Is a server slower with 2 ms of work per request than with 1 ms, and
//! is that real? Six runs of each, interleaved (A B, B A, ...), compared
//! as `pelt compare --paired` compares them ([`Comparison::runs`]): each
//! run one value per metric, a 95 % interval and a verdict.
//!
//!     cargo run --release -p pelt-history --example compare

use pelt_campaign::{execute, Cancel, Keep, Unobserved};
use pelt_core::{Load, RunConfig, RunSummary, Stop, Target, Url};
use pelt_history::compare::{Comparison, Options};
use pelt_target::{ServeConfig, Server};
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::bind(([127, 0, 0, 1], 0).into(), ServeConfig::default())?.spawn()?;
    let run = |query: &str| -> Result<RunSummary, Box<dyn std::error::Error>> {
        let url = Url::parse(&format!("http://{}/{query}", server.local_addr()))?;
        let stop = Stop {
            requests: None,
            duration: Some(Duration::from_millis(500)),
        };
        let config = RunConfig::new(vec![Target::get(url)], Load::rate_of(200.0, 20), stop);
        Ok(execute(
            config,
            Keep::default(),
            &Cancel::new(),
            &mut Unobserved,
        )?)
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for block in 0..6 {
        // Alternating which goes first spreads any drift over both.
        if block % 2 == 0 {
            a.push(run("?work=1ms")?);
            b.push(run("?work=2ms")?);
        } else {
            b.push(run("?work=2ms")?);
            a.push(run("?work=1ms")?);
        }
    }
    // The same checks and method as `pelt compare --paired`: like with
    // like, the design in time, one value per run and metric.
    let options = Options {
        paired: true,
        // The URLs differ on purpose (?work=1ms, ?work=2ms): the work
        // is what is compared.
        allow_mismatch: true,
        ..Options::default()
    };
    let comparison = Comparison::runs(a, b, &options)?;
    print!("{}", comparison.text());
    Ok(())
}
