//! A fixed-rate run written to a results file as it goes, read back, and
//! reported in JSON: what `pelt run --rate 200 -d 3s -o run.pelt` and
//! `pelt report run.pelt --format json` do.
//!
//!     cargo run --release -p pelt-engine --example results_file
//!
//! The request carries an `Authorization` header and a `token=` query
//! parameter: the results file and the report hold `REDACTED` in their
//! place (the run itself sends the real values).

use pelt_core::results::MergedReader;
use pelt_core::{Load, ResultsReader, ResultsWriter, RunConfig, Stop, Target, Url};
use pelt_engine::{footer_of, Run};
use pelt_target::{ServeConfig, Server};
use std::io::{BufReader, BufWriter};
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // pelt's own target server on a free loopback port: load only servers
    // you run.
    let server = Server::bind(([127, 0, 0, 1], 0).into(), ServeConfig::default())?.spawn()?;
    let url = Url::parse(&format!("http://{}/?token=abc123", server.local_addr()))?;
    let mut target = Target::get(url);
    target
        .headers
        .push(("Authorization".into(), "Bearer s3cr3t".into()));
    // 200 requests per second over up to 20 connections, for 3 seconds.
    let stop = Stop {
        requests: None,
        duration: Some(Duration::from_secs(3)),
    };
    let config = RunConfig::new(vec![target], Load::rate_of(200.0, 20), stop);

    let path = std::env::temp_dir().join(format!("pelt-example-{}.pelt", std::process::id()));
    let run = Run::start(config)?;
    // Secrets are redacted by default; ResultsWriter::unredacted keeps them.
    let mut file = ResultsWriter::new(BufWriter::new(std::fs::File::create(&path)?), run.header())?;
    let summary = run.observe(|second| {
        // One line per wall-clock second; the file gets the whole second.
        println!(
            "{:>6} requests  p99 {:.2} ms",
            second.row.requests,
            second.row.p99_ns as f64 / 1e6
        );
        if let Err(e) = file.interval(second.row.unix_second, &second.recorder) {
            eprintln!("cannot write {}: {e}", path.display());
        }
    });
    file.finish(&footer_of(&summary))?;

    // Read it back: one file, or the shards of one run, merged.
    let reader = ResultsReader::open(BufReader::new(std::fs::File::open(&path)?))?;
    let saved = MergedReader::new(vec![reader])?.summary(None)?;
    println!("{}", pelt_report::render(&saved, pelt_report::Format::Json));
    assert_eq!(saved.total.requests, summary.total.requests);
    std::fs::remove_file(&path)?;
    Ok(())
}
