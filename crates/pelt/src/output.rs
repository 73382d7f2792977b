//! What the subcommands share at their end: one run's report in the
//! format asked for, and the exit codes of `--assert` and `--fail-on`.

use crate::flags::UserError;
use crate::flags::{FailOn, FormatArg};
use pelt_core::RunSummary;
use pelt_report::Format;
use std::process::ExitCode;

/// Renders one run in a format that needs only its summary.
pub fn render_one(summary: &RunSummary, f: FormatArg) -> Result<String, UserError> {
    render_one_with(summary, f, &pelt_report::Options::default())
}

/// [`render_one`] with report options (`--buckets`).
pub fn render_one_with(
    summary: &RunSummary,
    f: FormatArg,
    options: &pelt_report::Options,
) -> Result<String, UserError> {
    let format = match f {
        FormatArg::Text => Format::Text,
        FormatArg::Json => Format::Json,
        FormatArg::Csv => Format::Csv,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Html => Format::Html,
        FormatArg::PercentilesCsv => Format::PercentilesCsv,
        FormatArg::Hdrlog => {
            return Err(UserError(
                "--format hdrlog needs the per-second histograms: save the run (-o run.pelt) and use pelt report run.pelt --format hdrlog".into(),
            ))
        }
    };
    Ok(pelt_report::render_with(summary, format, options))
}

/// Checks `--assert`s on stderr: exit 1 if any fails, else 0.
pub fn check(summary: &RunSummary, asserts: &[pelt_core::Assertion]) -> ExitCode {
    let mut failed = false;
    for a in asserts {
        let result = a.check(summary);
        failed |= !result.ok;
        eprintln!("pelt: assert {result}");
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Whether `--fail-on` is met. `regressed(material_only)` tells whether
/// any metric regressed (beyond its margin, if asked).
pub fn fails(fail_on: Option<FailOn>, regressed: impl Fn(bool) -> bool) -> bool {
    match fail_on {
        None => false,
        Some(FailOn::Regression) => regressed(false),
        Some(FailOn::Material) => regressed(true),
    }
}

/// Exit 1 when `--fail-on` is met, else 0 (see [`fails`]).
pub fn fail_on(fail_on: Option<FailOn>, regressed: impl Fn(bool) -> bool) -> ExitCode {
    if fails(fail_on, regressed) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// A history just opened for recording, its notes said.
pub fn said(mut h: pelt_history::Recording) -> pelt_history::Recording {
    say_notes(h.take_notes());
    h
}

/// The history's notes for the user (what an import did), on stderr.
pub fn say_notes(notes: Vec<String>) {
    for note in notes {
        eprintln!("pelt: {note}");
    }
}

/// A run the history could not take: a warning, since the run happened
/// and its results file is saved.
pub fn not_recorded(what: &str, e: &pelt_campaign::Error) {
    eprintln!("pelt: warning: {what} was not recorded in the history: {e}");
}

/// Exit code of a run in which requests were made and not one got a
/// response (nothing listening, every connection refused or reset), or
/// not one succeeded (every request failed; in a scenario, every flow)
/// unless an `--assert` on `failed` judges it: a benchmark of nothing is
/// not a pass.
pub const NO_RESPONSE: u8 = 3;

/// Exit code of a run that an `--abort-on` rule stopped: the service
/// was plainly broken, and the run did not last its planned time.
pub const ABORTED: u8 = 4;

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
