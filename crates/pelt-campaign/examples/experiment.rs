//! An experiment from a plan, as `pelt experiment` runs one: two variants
//! (1 ms and 2 ms of work per request) in 6 counterbalanced blocks, a
//! verdict per metric. A plan's `args` are `pelt run` flags to the CLI;
//! this program has its own `Lower`, which takes none.
//!
//!     cargo run --release -p pelt-campaign --example experiment

use pelt_campaign::experiment::conduct;
use pelt_campaign::experiment::plan::{Lower, Plan, RunWords};
use pelt_campaign::{Cancel, SweepSpec, Unobserved};
use pelt_core::{Load, RunConfig, Stop, Target, Url};
use pelt_target::{ServeConfig, Server};

/// Runs from a plan's words: its URL and length, no flags.
struct Plain;

impl Lower for Plain {
    fn run(&self, w: &RunWords, load: Load) -> Result<RunConfig, String> {
        if !w.args.is_empty() {
            return Err("args are not taken here".into());
        }
        let url = Url::parse(w.url.as_deref().ok_or("give url")?).map_err(|e| e.to_string())?;
        let stop = Stop {
            requests: None,
            duration: w.duration,
        };
        let mut config = RunConfig::new(vec![Target::get(url)], load, stop);
        config.warmup = w.warmup;
        Ok(config)
    }

    fn sweep(&self, _: &RunWords, _: &str) -> Result<(SweepSpec, RunConfig), String> {
        Err("no sweeps in this example".into())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::bind(([127, 0, 0, 1], 0).into(), ServeConfig::default())?.spawn()?;
    let at = server.local_addr();
    let plan = format!(
        r#"
        name = "work per request"
        blocks = 6
        [load]
        rate = 200
        connections = 20
        duration = "500ms"
        warmup = "100ms"
        [[variant]]
        name = "1ms"
        url = "http://{at}/?work=1ms"
        [[variant]]
        name = "2ms"
        url = "http://{at}/?work=2ms"
        "#
    );
    let dir = std::env::temp_dir().join(format!("pelt-experiment-example-{}", std::process::id()));
    let plan = Plan::parse(&plan, &dir, &Plain)?;
    let done = conduct(&plan, &dir, &Cancel::new(), &mut Unobserved)?;
    print!("{}", done.text);
    println!("runs and reports in {}", dir.display());
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
