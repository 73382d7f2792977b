//! `pelt compare`: did B change from A, by how much, and is it real?
//!
//! Each run is reduced to one value per metric (from its merged
//! histogram), and the runs, not the requests, are compared: see
//! pelt-analyze for why and how; pelt-report renders the result.

use crate::cli::{CompareArgs, CompareFormat};
use crate::output::fail_on;
use crate::save::{label, load, once_each};
use crate::UserError;
use pelt_analyze::runs;
use pelt_core::RunSummary;
use pelt_report::compare;
use pelt_report::html::Labeled;
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
    if args.paired && a_files.len() != b_files.len() {
        return Err(UserError(format!(
            "--paired needs as many B runs as A runs (got {} and {}); drop --paired to compare them as independent sets",
            a_files.len(),
            b_files.len()
        )));
    }
    // The same run twice on one side would count as two runs' evidence.
    once_each(&a_files, "each of A's runs is one replicate")?;
    once_each(&b_files, "each of B's runs is one replicate")?;
    let load_all = |files: &[PathBuf]| -> Result<Vec<RunSummary>, UserError> {
        files.iter().map(|f| load(f)).collect()
    };
    let (a, b) = (load_all(&a_files)?, load_all(&b_files)?);
    // A saturated client looks like a slow server: say so, on stderr so
    // that every format on stdout stays as it is.
    let busy: Vec<String> = a_files
        .iter()
        .zip(&a)
        .chain(b_files.iter().zip(&b))
        .filter(|(_, s)| runs::client_busy(s))
        .map(|(f, _)| label(f))
        .collect();
    if !busy.is_empty() {
        eprintln!(
            "pelt: warning: pelt was short of CPU in {} (client_busy: its busiest thread wanted a CPU 90% of the run \
             or more): there the client may have set the pace, and a difference may be pelt's, not the server's; \
             `pelt report FILE` says more",
            busy.join(", ")
        );
    }
    let rows = runs::compare_runs(&a, &b, args.paired);
    let names = |files: &[PathBuf]| files.iter().map(|f| label(f)).collect::<Vec<_>>();
    let paths = |files: &[PathBuf]| {
        files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    };
    let out = match args.format {
        CompareFormat::Text => {
            compare::text(&rows, &names(&a_files), &names(&b_files), args.paired)
        }
        CompareFormat::Markdown => compare::markdown(&rows),
        CompareFormat::Json => {
            compare::json(&rows, &paths(&a_files), &paths(&b_files), args.paired)
        }
        CompareFormat::Html => compare::html(
            &rows,
            &labeled(&a_files, &a),
            &labeled(&b_files, &b),
            args.paired,
        ),
    };
    crate::emit(out.as_bytes())?;
    Ok(fail_on(args.fail_on, |material_only| {
        runs::regressed(&rows, material_only)
    }))
}

/// Each run with its file's name, for charts.
fn labeled<'a>(files: &[PathBuf], runs: &'a [RunSummary]) -> Vec<Labeled<'a>> {
    files
        .iter()
        .zip(runs)
        .map(|(f, summary)| Labeled {
            label: label(f),
            summary,
        })
        .collect()
}
