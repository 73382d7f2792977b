//! Finds the highest rate pelt's built-in server holds with p99 under
//! 20 ms, as `pelt sweep` does, from a library: 1 s steps from 500 req/s
//! up to 4,000, a folder of saved steps and reports, the capacity printed.
//!
//!     cargo run --release -p pelt-campaign --example sweep

use pelt_analyze::sweep::parse_slo;
use pelt_campaign::{Cancel, Sweep, SweepSpec, Unobserved};
use pelt_core::{Load, RunConfig, Stop, Target, Url};
use pelt_target::{ServeConfig, Server};
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::bind(([127, 0, 0, 1], 0).into(), ServeConfig::default())?.spawn()?;
    let url = Url::parse(&format!("http://{}/", server.local_addr()))?;
    // Every step starts from this run; the sweep sets its load and length.
    let base = RunConfig::new(vec![Target::get(url)], Load::closed(1), Stop::default());
    let folder = std::env::temp_dir().join(format!("pelt-sweep-example-{}", std::process::id()));
    let mut spec = SweepSpec::new(folder.clone());
    spec.slo = parse_slo("p99 < 20ms, failed < 1%")?;
    (spec.step, spec.warmup, spec.confirm) = (
        Duration::from_secs(1),
        Duration::ZERO,
        Duration::from_secs(1),
    );
    (spec.plan.start, spec.plan.max, spec.plan.tolerance) = (500.0, 4_000.0, 0.25);
    let (report, reports) = Sweep::new(spec, base)?.conduct(&Cancel::new(), &mut Unobserved)?;
    println!("{}", reports.text);
    println!(
        "capacity: {:?} req/s, steps and reports in {}",
        report.capacity,
        folder.display()
    );
    std::fs::remove_dir_all(&folder)?;
    Ok(())
}
