//! Baselines: recorded runs as side A of a comparison.
//!
//! `pelt compare --baseline tag:release-1.4 new*.pelt` and `pelt run ...
//! --baseline last:5 --fail-on regression` compare through the same
//! verdict method as `pelt compare` (runs as replicates, Hodges-Lehmann
//! and Mann-Whitney), with A's values read from the history's figure
//! columns: the baseline's results files need not be at hand.

use super::open;
use crate::flags::UserError;
use crate::flags::{CompareArgs, FailOn};
use crate::output::fails;
use pelt_core::RunSummary;
use pelt_history::baseline::{against_files, against_run, against_sweep, usable_runs, Spec};
use pelt_history::Comparison;
use pelt_store::Store;
use std::process::ExitCode;

/// A gate that could not judge must not pass: exit 2 saying `why`.
fn judged(c: &Comparison, fail_on: Option<FailOn>, why: String) -> Result<(), UserError> {
    match fail_on.is_some() && !c.has_verdict() {
        true => Err(UserError(why)),
        false => Ok(()),
    }
}

/// The gate's exit: 1 when `--fail-on` is met, and 1 too when a gated
/// metric could not judge (its interval leaves a regression that matters
/// possible): a gate never passes because it could not judge (issue 35).
fn gate(c: &Comparison, fail_on: Option<FailOn>) -> ExitCode {
    if fails(fail_on, |m| c.regressed(m)) {
        eprintln!("pelt: --fail-on: this run regressed against the baseline");
        return ExitCode::from(1);
    }
    if fail_on.is_some() && !c.unjudged.is_empty() {
        eprintln!(
            "pelt: --fail-on: the gate could not judge {}: this run is worse than every baseline run, \
             yet the baseline's spread is too wide to call it; a gate does not pass on that. Record more \
             baseline runs of this configuration, or repeat the new run (pelt compare --baseline SPEC FILES)",
            c.unjudged.join(", ")
        );
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// `pelt compare --baseline SPEC FILE...`.
pub fn compare(args: CompareArgs) -> Result<ExitCode, UserError> {
    let spec = Spec::parse(args.baseline.baseline.as_deref().unwrap_or_default())?;
    let mut store = open(&args.baseline.location)?;
    let c = against_files(
        &mut store,
        &spec,
        &args.files,
        &crate::compare::options(&args),
    )?;
    crate::compare::emit(&c, args.format)?;
    judged(&c, args.fail_on, format!(
        "--fail-on: no verdict was possible with {} baseline run(s) against {} run(s); record at least {} baseline runs (one file), or give 4 or more files and have 4 or more baseline runs",
        c.a.len(),
        c.b.len(),
        pelt_analyze::predict::MIN_BASELINE_RUNS
    ))?;
    Ok(gate(&c, args.fail_on))
}

/// `pelt run ... --baseline SPEC`: the run just recorded (`id`) against
/// the baseline; the table goes to stderr (stdout has the run's report).
/// Exit 1 when `fail_on` is met.
pub fn after_run(
    store: &mut Store,
    spec_text: &str,
    summary: &RunSummary,
    id: Option<i64>,
    fail_on: Option<FailOn>,
    allow_mismatch: bool,
) -> Result<ExitCode, UserError> {
    let spec = Spec::parse(spec_text)?;
    let c = against_run(store, &spec, summary, id, allow_mismatch)?;
    eprint!("{}", c.text());
    judged(&c, fail_on, format!(
        "--fail-on: no verdict was possible against --baseline {} ({} run(s) with latencies); record at least {} runs of this configuration first",
        spec.describe(),
        c.a.len(),
        pelt_analyze::predict::MIN_BASELINE_RUNS
    ))?;
    Ok(gate(&c, fail_on))
}

/// `pelt sweep ... --baseline SPEC`: this sweep's capacity against the
/// recorded sweeps' (pelt-campaign's `against_sweep`); the table goes to
/// stderr. Exit 1 when `fail_on` is met.
pub fn after_sweep(
    store: &mut Store,
    spec_text: &str,
    step: &RunSummary,
    id: Option<i64>,
    capacity: Option<f64>,
    fail_on: Option<FailOn>,
) -> Result<ExitCode, UserError> {
    let spec = Spec::parse(spec_text)?;
    let judgement = against_sweep(store, &spec, step, id, capacity)?;
    if !judgement.left_out.is_empty() {
        eprintln!(
            "pelt: note: {} of the baseline's sweeps found no capacity and are left out ({})",
            judgement.left_out.len(),
            judgement.left_out.join(", ")
        );
    }
    let Some(c) = judgement.comparison else {
        eprintln!(
            "pelt: this sweep found no capacity: there is nothing to set against the baseline"
        );
        return Ok(ExitCode::FAILURE);
    };
    eprint!("{}", c.text());
    Ok(if fails(fail_on, |m| c.regressed(m)) {
        eprintln!("pelt: --fail-on: this sweep's capacity regressed against the baseline");
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Checks `--baseline` before the run: a typo must not cost a run.
pub fn check_spec(text: Option<&str>) -> Result<(), UserError> {
    Ok(text.map(Spec::parse).transpose().map(drop)?)
}

/// Before any load: a `--fail-on` gate must be able to give a verdict,
/// so the baseline needs [`MIN_BASELINE_RUNS`] recorded runs (exit 2,
/// naming how many more, when it has fewer). A gate that passes because
/// it could not judge would pass every regression.
///
/// [`MIN_BASELINE_RUNS`]: pelt_analyze::predict::MIN_BASELINE_RUNS
pub fn before_run(
    store: Option<&mut Store>,
    spec_text: Option<&str>,
    config: &pelt_core::RunConfig,
    fail_on: Option<FailOn>,
    allow_mismatch: bool,
) -> Result<(), UserError> {
    let (Some(text), Some(_)) = (spec_text, fail_on) else {
        return Ok(());
    };
    let spec = Spec::parse(text)?;
    let Some(store) = store else {
        return Err(UserError(format!(
            "--fail-on with --baseline {} needs the history, which PELT_NO_HISTORY turns off; unset it or give --history PATH",
            spec.describe()
        )));
    };
    let min = pelt_analyze::predict::MIN_BASELINE_RUNS;
    let (found, why) = usable_runs(store, &spec, config, allow_mismatch)?;
    let why = why.map_or(String::new(), |e| format!(" ({})", UserError::from(e).0));
    if found < min {
        return Err(UserError(format!(
            "--fail-on needs a baseline of at least {min} recorded runs for a verdict, and --baseline {} has {found}{why}; record {} more (the same pelt run without --fail-on), then gate",
            spec.describe(),
            min - found
        )));
    }
    Ok(())
}
