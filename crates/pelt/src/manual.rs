//! `pelt completions` and `pelt man`: shell completion scripts and man
//! pages, generated from the clap definitions so they cannot drift from
//! `--help`.

use crate::flags::UserError;
use crate::flags::{Cli, CompletionsArgs, ManArgs, SUBCOMMANDS};
use clap::CommandFactory;
use std::process::ExitCode;

/// `pelt completions SHELL`.
pub fn completions(args: CompletionsArgs) -> Result<ExitCode, UserError> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "pelt", &mut script);
    crate::output::emit(&script)?;
    Ok(ExitCode::SUCCESS)
}

/// `pelt man [SUBCOMMAND]`: pelt(1), or pelt-SUBCOMMAND(1).
pub fn man(args: ManArgs) -> Result<ExitCode, UserError> {
    let mut pelt = Cli::command();
    pelt.build();
    let page = match &args.subcommand {
        None => pelt,
        Some(name) => {
            let missing = || UserError(format!("no page for '{name}'; see 'pelt man --help'"));
            if !SUBCOMMANDS.contains(&name.as_str()) {
                return Err(missing());
            }
            // Titled pelt-run(1), as git's and cargo's subcommand pages are.
            pelt.find_subcommand(name)
                .cloned()
                .ok_or_else(missing)?
                // clap wants a &'static str; the program ends after one page.
                .name(&*Box::leak(format!("pelt-{name}").into_boxed_str()))
        }
    };
    // NAME is one line: the about's first; the whole goes to DESCRIPTION.
    let about = page.get_about().map(|a| a.to_string()).unwrap_or_default();
    let page = match about.split_once('\n') {
        Some((first, _)) if page.get_long_about().is_none() => page
            .about(first.trim_end_matches('.').to_string())
            .long_about(about.clone()),
        _ => page,
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut roff)
        .map_err(|e| UserError(format!("cannot write the man page: {e}")))?;
    crate::output::emit(&roff)?;
    Ok(ExitCode::SUCCESS)
}
