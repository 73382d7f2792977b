//! Records runs in a history (a SQLite file here; `postgres://...` with
//! pelt-store's `postgres` feature), as `pelt run` does, then lists them
//! as `pelt history` does.
//!
//!     cargo run --release -p pelt-history --example history

use pelt_campaign::{execute, Cancel, Keep, Places, Unobserved};
use pelt_core::{Load, RunConfig, Stop, Target, Url};
use pelt_history::{open, render, RecordSpec, Recording};
use pelt_target::{ServeConfig, Server};
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::bind(([127, 0, 0, 1], 0).into(), ServeConfig::default())?.spawn()?;
    let dir = std::env::temp_dir().join(format!("pelt-history-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("history.db").display().to_string();
    let spec = RecordSpec {
        history: Some(db.clone()),
        label: Some("nightly".into()),
        tags: vec![("build".into(), "abc123".into())],
        ..RecordSpec::default()
    };
    // Opened before any load: a history that cannot be used stops here.
    let mut history = Recording::start(&spec)?.ok_or("the history is off")?;
    for rate in [100.0, 200.0] {
        let url = Url::parse(&format!("http://{}/", server.local_addr()))?;
        let stop = Stop {
            requests: None,
            duration: Some(Duration::from_millis(500)),
        };
        let config = RunConfig::new(vec![Target::get(url)], Load::rate_of(rate, 10), stop);
        // The results file, spooled to a temporary file as the run goes,
        // goes into the history with it.
        let mut copy = None;
        let keep = Keep {
            copy: Some(&mut copy),
            ..Keep::default()
        };
        let summary = execute(config, keep, &Cancel::new(), &mut Unobserved)?;
        history.record(&summary, None, copy)?;
    }
    let rows = open(Some(db.as_str()), &Places::default())?
        .store
        .list(&pelt_store::Filter::default())?;
    print!("{}", render::text_table(&rows));
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
