//! pelt: parse, dispatch, map errors to exit codes. Nothing else.
//!
//! Exit codes: 0 ok, 1 an --assert failed, 2 bad usage or input (one
//! line: what is wrong and how to fix it), 3 no request got a response,
//! or nothing succeeded (every request failed, with --scenario every
//! flow; unless an --assert on `failed` judges it), after the report, with
//! one line saying why, 4 an --abort-on rule
//! stopped the run (after the report, which names the rule), 128 + the
//! signal's number when a signal stopped it (130 Ctrl-C, 143 SIGTERM,
//! 129 SIGHUP or a terminal gone away; after printing what was measured).
//!
//! The binary (`main.rs`) only calls [`main`]; the code is a library so
//! that the fuzz targets in `fuzz/` reach the experiment-plan parser.
mod calibrate;
mod compare;
mod demo;
mod experiment;
mod flags;
#[doc(hidden)]
pub mod fuzz;
mod history;
mod import;
mod launch;
mod live;
mod manual;
mod output;
mod progress;
mod report;
mod run;
mod serve;
mod signals;
mod sweep;

use clap::Parser;
use flags::{clap_error, with_implicit_run, Cli, Command, UserError};
use std::process::ExitCode;

/// The whole program: `pelt`'s `main`.
pub fn main() -> ExitCode {
    let args = with_implicit_run(std::env::args_os().collect());
    if let Some(line) = flags::other_tools_long_flag(&args) {
        // Before clap, which would read `-header` as -h (help, exit 0).
        eprintln!("{line}");
        return ExitCode::from(2);
    }
    let mut cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return clap_error(e, &args),
    };
    if let Command::Run(run) = &mut cli.command {
        run.rate_typed_as_r = flags::typed_dash_r(&args);
    }
    let result = match cli.command {
        Command::Run(args) => run::command(*args),
        Command::Serve(args) => serve::command(args),
        Command::Demo(args) => demo::command(args),
        Command::Report(args) => report::command(args),
        Command::Compare(args) if args.baseline.baseline.is_some() => {
            history::baseline::compare(args)
        }
        Command::Compare(args) => compare::command(args),
        Command::Experiment(args) => experiment::command(args),
        Command::Sweep(args) => sweep::command(*args),
        Command::Calibrate(args) => calibrate::command(args),
        Command::History(args) => history::command::command(*args),
        Command::K8s(args) => launch::k8s(args),
        Command::Slurm(args) => launch::slurm(args),
        Command::Import(args) => import::command(args),
        Command::Completions(args) => manual::completions(args),
        Command::Man(args) => manual::man(args),
    };
    result.unwrap_or_else(|UserError(message)| {
        eprintln!("error: {message}");
        ExitCode::from(2)
    })
}
