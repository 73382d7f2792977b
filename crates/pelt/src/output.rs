//! What the subcommands share at their end: one run's report in the
//! format asked for, and the exit codes of `--assert` and `--fail-on`.

use crate::flags::{FailOn, FormatArg};
use crate::UserError;
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
