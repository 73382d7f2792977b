//! `pelt compare`: did B change from A, by how much, and is it real?
//! pelt-history's [`Comparison`] judges; this prints and gates.

use crate::flags::UserError;
use crate::flags::{CompareArgs, CompareFormat};
use crate::output::fail_on;
use pelt_history::compare::{Comparison, Options};
use std::path::PathBuf;
use std::process::ExitCode;

pub fn command(args: CompareArgs) -> Result<ExitCode, UserError> {
    let (a_files, b_files): (Vec<PathBuf>, Vec<PathBuf>) = if args.vs.is_empty() {
        if args.files.len() != 2 {
            return Err(UserError(
                "give two files (A then B), or A's files then --vs and B's files".into(),
            ));
        }
        (vec![args.files[0].clone()], vec![args.files[1].clone()])
    } else {
        (args.files.clone(), args.vs.clone())
    };
    let c = Comparison::files(&a_files, &b_files, &options(&args))?;
    // A saturated client looks like a slow server: say so, on stderr so
    // that every format on stdout stays as it is.
    let busy = c.client_busy();
    if !busy.is_empty() {
        eprintln!(
            "pelt: warning: pelt was short of CPU in {} (client_busy: a worker thread wanted a CPU 90% of the run \
             or more, or waited for one 25% or more): there the client may have set the pace, and a difference may be pelt's, not the server's; \
             `pelt report FILE` says more",
            busy.join(", ")
        );
    }
    emit(&c, args.format)?;
    Ok(fail_on(args.fail_on, |material_only| {
        c.regressed(material_only)
    }))
}

/// The comparison options `pelt compare`'s flags ask for.
pub fn options(args: &CompareArgs) -> Options {
    Options {
        paired: args.paired,
        latency: args.metric.into(),
        sequential_ok: args.sequential_ok,
        allow_mismatch: args.allow_mismatch,
        // `pelt compare` reads results files, written redacted: nothing
        // to keep.
        keep_secrets: false,
    }
}

/// Prints `c` in `format` on stdout.
pub fn emit(c: &Comparison, format: CompareFormat) -> Result<(), UserError> {
    let out = match format {
        CompareFormat::Text => c.text(),
        CompareFormat::Markdown => c.markdown(),
        CompareFormat::Json => c.json(),
        CompareFormat::Html => c.html().ok_or_else(|| UserError(
            "--format html is not available with --baseline (the baseline's charts need its results files); use text, json or markdown".into(),
        ))?,
    };
    crate::output::emit(out.as_bytes())
}
