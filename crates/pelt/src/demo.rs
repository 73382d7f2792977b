//! `pelt demo`: no set-up at all. Starts the built-in server on a loopback
//! port and benchmarks it twice, so a new user sees both load models and
//! why the difference matters.

use crate::flags::DemoArgs;
use crate::flags::UserError;
use crate::live::execute;
use crate::output::render_one;
use pelt_campaign::Keep;
use pelt_core::{parse_duration, HttpOptions, Load, RunConfig, Stop, Target, Url};
use pelt_target::{Pause, ServeConfig, Server};
use std::time::Duration;

/// The demo server stalls once for this long, like a GC pause, one second
/// into each run: the closed loop barely notices, the rate run does.
const PAUSE: Duration = Duration::from_millis(300);
const DEMO_RATE: f64 = 2000.0;

pub fn command(args: DemoArgs) -> Result<std::process::ExitCode, UserError> {
    let duration =
        parse_duration(&args.duration).map_err(|e| UserError(format!("-d/--duration: {e}")))?;
    if duration < Duration::from_secs(2) {
        return Err(UserError(
            "-d/--duration must be at least 2s for the demo: its server pauses 1s in".into(),
        ));
    }
    if args.format == crate::flags::FormatArg::Hdrlog {
        // Refuse before two runs of load, not after the first.
        return Err(UserError(
            "--format hdrlog is for saved runs: the demo does not save its runs; use --format text, json, csv, markdown or html".into(),
        ));
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Half the cores each, so neither side starves the other.
    let half = (threads / 2).max(1);
    let runs = [
        (
            "closed loop: 50 connections, each sending as soon as its last response arrives",
            Load::closed(50),
        ),
        (
            "open loop: 2,000 requests/s on a fixed schedule (--rate 2000)",
            Load::rate_of(DEMO_RATE, 100),
        ),
    ];
    for (i, (title, load)) in runs.into_iter().enumerate() {
        // A fresh server per run: its one pause is timed from its first request.
        let server = Server::bind(
            "127.0.0.1:0".parse().expect("literal address"),
            ServeConfig {
                threads: half,
                pause: Some(Pause {
                    after: Duration::from_secs(1),
                    length: PAUSE,
                }),
                ..ServeConfig::default()
            },
        )
        .and_then(Server::spawn)
        .map_err(|e| UserError(format!("cannot start the demo server: {e}")))?;
        let url = format!(
            "http://{}/?size=1k&delay=200us&delay_max=2ms",
            server.local_addr()
        );
        eprintln!(
            "pelt demo {}/2: {title}\n  target: {url} (pelt serve; it pauses once for {} after 1s)\n",
            i + 1,
            pelt_core::Human(PAUSE)
        );
        let config = RunConfig {
            order: pelt_core::Order::RoundRobin,
            think: None,
            targets: vec![Target::get(
                Url::parse(&url).map_err(|e| UserError(e.to_string()))?,
            )]
            .into(),
            load,
            stop: Stop {
                requests: None,
                duration: Some(duration),
            },
            warmup: Duration::ZERO,
            threads: half,
            http: HttpOptions::default(),
            shard: None,
            run_id: None,
            start_at_unix_ns: None,
            send_window: Default::default(),
            arrivals: Default::default(),
            abort_on: Vec::new(),
            scenario: None,
        };
        // Demo runs are not saved: `pelt report --last` stays yours.
        let summary = execute(config, false, Keep::default(), Vec::new())?;
        crate::output::emit(render_one(&summary, args.format)?.as_bytes())?;
        server.shutdown();
        if let Some(code) = crate::signals::ending(&summary) {
            return Ok(code);
        }
        println!();
    }
    eprintln!(
        "Compare the p99 of the two runs: the stall hit both, but only the --rate run\n\
         times requests from when they should have been sent, so only it shows what\n\
         users would have waited. Next: pelt serve --help, pelt run --help."
    );
    Ok(std::process::ExitCode::SUCCESS)
}
