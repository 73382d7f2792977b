//! pelt: parse, dispatch, map errors to exit codes. Nothing else.
//!
//! Exit codes: 0 ok, 1 an --assert failed, 2 bad usage or input (one
//! line: what is wrong and how to fix it), 130 interrupted by Ctrl-C
//! (after printing what was measured).

mod cli;
mod compare;
mod demo;
mod experiment;
mod progress;
mod report;
mod run;
mod save;
mod serve;
mod signals;

use clap::Parser;
use cli::{Cli, Command};
use std::process::ExitCode;

/// An error the user can fix: printed as one line, exit code 2.
#[derive(Debug)]
pub struct UserError(pub String);

const SUBCOMMANDS: [&str; 7] = [
    "run",
    "serve",
    "demo",
    "report",
    "compare",
    "experiment",
    "help",
];

fn main() -> ExitCode {
    let cli = match Cli::try_parse_from(with_implicit_run(std::env::args_os().collect())) {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    let result = match cli.command {
        Command::Run(args) => run::command(*args),
        Command::Serve(args) => serve::command(args),
        Command::Demo(args) => demo::command(args),
        Command::Report(args) => report::command(args),
        Command::Compare(args) => compare::command(args),
        Command::Experiment(args) => experiment::command(args),
    };
    result.unwrap_or_else(|UserError(message)| {
        eprintln!("error: {message}");
        ExitCode::from(2)
    })
}

/// Writes a report to stdout. A reader that went away (`| head`) is not an
/// error: the report was wanted only that far.
pub fn emit(bytes: &[u8]) -> Result<(), UserError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(UserError(format!("cannot write the report: {e}")))
        }
        _ => Ok(()),
    }
}

/// `pelt URL ...` means `pelt run URL ...`.
fn with_implicit_run(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    if let Some(first) = args.get(1).and_then(|a| a.to_str()) {
        let targets_flag = first == "-f" || first == "--targets";
        let is_flag = first.starts_with('-');
        if targets_flag || (!is_flag && !SUBCOMMANDS.contains(&first) && first.contains("://")) {
            args.insert(1, "run".into());
        }
    }
    args
}

/// clap's errors, cut to one line with its suggestion, exit code 2;
/// `--help` and `--version` print as usual.
fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        // Bare `pelt`: the help is the answer, but the command was not.
        let _ = e.print();
        return ExitCode::from(2);
    }
    let rendered = e.render().to_string();
    let first = rendered
        .lines()
        .next()
        .unwrap_or("error: invalid arguments");
    let mut line = first.to_string();
    match e
        .get(ContextKind::SuggestedArg)
        .or(e.get(ContextKind::SuggestedSubcommand))
    {
        Some(ContextValue::String(s)) => line.push_str(&format!("; did you mean '{s}'?")),
        Some(ContextValue::Strings(v)) if !v.is_empty() => {
            line.push_str(&format!("; did you mean '{}'?", v[0]))
        }
        _ => {}
    }
    line.push_str("; see 'pelt --help' or 'pelt run --help'");
    eprintln!("{line}");
    ExitCode::from(2)
}
