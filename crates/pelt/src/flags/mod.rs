//! Every command-line flag, and the lowering of flags into library
//! values (a `RunConfig`, a sweep's or an experiment's spec). This is the
//! binary's ground floor: it imports no command module, and the commands
//! import it. Parsing only: a check that spans flags lives in the
//! lowering (`run.rs`'s `TryFrom<&RunArgs> for RunConfig`), a check of a
//! finished config in `RunConfig::validate`.

mod campaign;
mod errors;
mod experiment;
mod history;
mod import;
mod launch;
mod live;
mod lower;
mod parse;
mod places;
mod results;
mod run;
mod session;
mod shard;
mod stream;
mod ws;

pub use campaign::*;
pub use errors::*;
pub use experiment::*;
pub use history::*;
pub use import::*;
pub use launch::*;
pub use live::*;
pub use lower::*;
pub use parse::*;
pub use places::*;
pub use results::*;
pub use run::*;
pub use session::*;
pub use shard::*;
pub use stream::*;
pub use ws::*;

use clap::{Args, Parser, Subcommand};

pub const TOP_ABOUT: &str = "\
An HTTP load generator that measures latency correctly.

`pelt URL [OPTIONS]` is short for `pelt run URL [OPTIONS]`.";

#[derive(Debug, Parser)]
#[command(name = "pelt", version, about = TOP_ABOUT, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load a URL and report what happened (closed loop with -c, open loop with --rate).
    #[command(after_help = RUN_EXAMPLES)]
    Run(Box<RunArgs>),
    /// Run the built-in target server (delays, sizes, statuses and faults on demand).
    Serve(ServeArgs),
    /// Start the built-in server and benchmark it twice: closed loop, then --rate.
    Demo(DemoArgs),
    /// Compare runs before and after a change: per-metric change, 95 % CI and verdict.
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// Re-render saved runs (.pelt results files): text, JSON, CSV, markdown, HTML, hdrlog.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Run a before/after experiment from a plan: variants x load levels, interleaved blocks, verdicts.
    #[command(after_help = EXPERIMENT_HELP)]
    Experiment(ExperimentArgs),
    /// Find the highest rate a target holds under an SLO (or sweep -c 1..200 connections).
    #[command(after_help = SWEEP_HELP)]
    Sweep(Box<SweepArgs>),
    /// Measure this machine's ceiling as a load generator (saved; `pelt run` warns beyond it).
    #[command(after_help = CALIBRATE_HELP)]
    Calibrate(CalibrateArgs),
    /// Recorded runs: list, show, remove, and a metric's trend over time.
    #[command(after_help = HISTORY_HELP)]
    History(Box<HistoryArgs>),
    /// Print a Kubernetes Indexed Job running a sharded run (docs/DISTRIBUTED.md).
    K8s(K8sArgs),
    /// Print a Slurm batch script running a sharded run with srun and merging it.
    Slurm(SlurmArgs),
    /// Turn a browser's recording (HAR) into a scenario for `pelt run --scenario`.
    #[command(after_help = IMPORT_HELP)]
    Import(ImportArgs),
    /// Print a shell completion script: bash, zsh, fish, elvish or powershell.
    #[command(after_help = COMPLETIONS_HELP)]
    Completions(CompletionsArgs),
    /// Print the man page (roff): pelt's, or a subcommand's.
    #[command(after_help = MAN_HELP)]
    Man(ManArgs),
}

pub const COMPLETIONS_HELP: &str = "\
Examples:
  pelt completions bash > ~/.local/share/bash-completion/completions/pelt
  pelt completions zsh > ~/.zfunc/_pelt        with fpath+=(~/.zfunc) before compinit
  pelt completions fish > ~/.config/fish/completions/pelt.fish";

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub const MAN_HELP: &str = "\
Examples:
  pelt man | man -l -                          read it now
  pelt man > ~/.local/share/man/man1/pelt.1    then `man pelt`
  pelt man run > ~/.local/share/man/man1/pelt-run.1";

/// Every subcommand's name, in `pelt --help`'s order: the one list that
/// `pelt URL` (an implicit `run`), error hints and `pelt man NAME` read.
/// A test holds it to the clap enum above, so the two cannot drift.
pub const SUBCOMMANDS: [&str; 15] = [
    "run",
    "serve",
    "demo",
    "compare",
    "report",
    "experiment",
    "sweep",
    "calibrate",
    "history",
    "k8s",
    "slurm",
    "import",
    "completions",
    "man",
    "help",
];

#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// A subcommand's page (pelt-run(1), ...) instead of pelt(1).
    #[arg(value_name = "SUBCOMMAND", value_parser = man_pages())]
    pub subcommand: Option<String>,
}

/// The names `pelt man` takes: every subcommand but `help`.
fn man_pages() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(SUBCOMMANDS.iter().filter(|&&n| n != "help"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_subcommand_list_is_the_clap_enum() {
        let mut clap: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        clap.push("help".into());
        assert_eq!(clap, SUBCOMMANDS.map(String::from).to_vec());
    }
}
