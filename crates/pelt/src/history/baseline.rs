//! Baselines: recorded runs as side A of a comparison.
//!
//! `pelt compare --baseline tag:release-1.4 new*.pelt` and `pelt run ...
//! --baseline last:5 --fail-on regression` compare through the same
//! verdict method as `pelt compare` (runs as replicates, Hodges-Lehmann
//! and Mann-Whitney), with A's values read from the history's figure
//! columns: the baseline's results files need not be at hand.

use super::open;
use crate::flags::{CompareArgs, CompareFormat, FailOn};
use crate::output::fails;
use crate::UserError;
use pelt_analyze::alike;
use pelt_analyze::design::{self, Timed};
use pelt_analyze::headline;
use pelt_analyze::latency::Latency;
use pelt_analyze::runs::{self, compare_values, values, Row};
use pelt_campaign::baseline::{recorded_values, rows, stored_values, Spec};
use pelt_core::RunSummary;
use pelt_report::compare::Context;
use pelt_store::{RunRow, Store};
use std::process::ExitCode;

/// Said above a one-run comparison's table: how its intervals are made,
/// and at what confidence (the column says 95 %; these are wider).
fn prediction_note(rows: &[Row]) -> String {
    let confidence = rows
        .iter()
        .find_map(|r| r.result.as_ref().ok().and_then(|c| c.confidence))
        .unwrap_or(pelt_analyze::CONFIDENCE);
    format!(
        "one run against the baseline's run-to-run spread: each interval is a {:.1}% Student t prediction\n\
         interval of the baseline runs (log scale for latency; A = their geometric mean), {:.1}% so that\n\
         the gate over all metrics calls a regression that is not there at most 5% of the time\n",
        confidence * 100.0,
        confidence * 100.0
    )
}

fn names(rows: &[RunRow]) -> Vec<String> {
    rows.iter().map(|r| format!("#{}", r.id)).collect()
}

fn render(
    format: CompareFormat,
    rows: &[Row],
    spec: &Spec,
    a: &[RunRow],
    b_names: &[String],
    ctx: &Context,
) -> Result<String, UserError> {
    Ok(match format {
        CompareFormat::Text => {
            let mut t = pelt_report::compare::text(rows, &names(a), b_names, false, ctx);
            if b_names.len() == 1 {
                t.insert_str(0, &prediction_note(rows));
            }
            t.insert_str(0, &format!("baseline {}: recorded runs as A\n", spec.describe()));
            t
        }
        CompareFormat::Markdown => pelt_report::compare::markdown_report(rows, ctx),
        CompareFormat::Json => {
            let a: Vec<String> = a.iter().map(|r| format!("history:{}", r.id)).collect();
            let ctx = Context {
                baseline: Some(spec.describe()),
                ..ctx.clone()
            };
            pelt_report::compare::json(rows, &a, b_names, false, &ctx)
        }
        CompareFormat::Html => {
            return Err(UserError(
                "--format html is not available with --baseline (the baseline's charts need its results files); use text, json or markdown".into(),
            ))
        }
    })
}

/// `pelt compare --baseline SPEC FILE...`.
pub fn compare(args: CompareArgs) -> Result<ExitCode, UserError> {
    let spec = Spec::parse(args.baseline.baseline.as_deref().unwrap_or_default())?;
    pelt_campaign::results::once_each(&args.files, "each of B's runs is one replicate")?;
    let b: Vec<RunSummary> = args
        .files
        .iter()
        .map(|f| pelt_campaign::results::load(f))
        .collect::<Result<_, _>>()?;
    let b_names: Vec<String> = args
        .files
        .iter()
        .map(|f| pelt_campaign::results::label(f))
        .collect();
    // B's own runs must be alike too: they stand for one candidate.
    let mut b_mismatches = alike::mismatches(&b[0].config, b_names.iter().cloned().zip(b.iter()));
    if !b_mismatches.is_empty() && !args.allow_mismatch {
        return Err(UserError(alike::refusal(
            &format!("{} (B's first run)", b_names[0]),
            &b_mismatches,
            "--allow-mismatch",
        )));
    }
    let mut store = open(&args.baseline.location)?;
    let selection = spec.select(&mut store, &b, None, args.allow_mismatch)?;
    let a = &selection.runs;
    let latency: Latency = args.metric.into();
    let b_timed = crate::compare::timed(&b, latency);
    // The baseline's runs were recorded before these, as a rule: the
    // change is confounded with time like any before/after.
    let a_timed: Vec<Timed> = a
        .iter()
        .map(|r| {
            Ok(Timed {
                started_ms: r.started_ms.max(0) as u64,
                values: match latency {
                    // The figure columns hold response time only.
                    Latency::ResponseTime => stored_values(r),
                    other => recorded_values(&mut store, r.id, other)?,
                },
            })
        })
        .collect::<Result<_, UserError>>()?;
    let values = |t: &[Timed]| t.iter().map(|r| r.values.clone()).collect::<Vec<_>>();
    // One new run is judged against the baseline's prediction interval
    // (pelt_analyze::predict): the rank test needs 39 baseline runs.
    let mut rows = match values(&b_timed).as_slice() {
        [one] => pelt_analyze::predict::compare_values(&values(&a_timed), one),
        more => compare_values(&values(&a_timed), more, false),
    };
    rows = latency.judge(rows);
    let time_design = design::assess(&runs::metrics(), &a_timed, &b_timed, args.sequential_ok);
    design::withhold_material(&mut rows, &time_design);
    b_mismatches.extend(selection.allowed.iter().cloned());
    let ctx = Context {
        design: Some(time_design),
        warnings: headline::group_warnings(
            b_names
                .iter()
                .cloned()
                .zip(b.iter().map(|s| s.warnings.as_slice())),
        ),
        runs: b.len(),
        allowed: b_mismatches,
        notes: selection.notes.clone(),
        latency,
        baseline: None,
    };
    crate::emit(render(args.format, &rows, &spec, a, &b_names, &ctx)?.as_bytes())?;
    if args.fail_on.is_some() && !pelt_analyze::predict::gate_has_verdict(&rows) {
        // A gate that could not judge must not pass.
        return Err(UserError(format!(
            "--fail-on: no verdict was possible with {} baseline run(s) against {} run(s); record at least {} baseline runs (one file), or give 4 or more files and have 4 or more baseline runs",
            a.len(),
            b.len(),
            pelt_analyze::predict::MIN_BASELINE_RUNS
        )));
    }
    Ok(if fails(args.fail_on, |m| runs::regressed(&rows, m)) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
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
    let selection = spec.select(store, std::slice::from_ref(summary), id, allow_mismatch)?;
    let a = &selection.runs;
    let rows = rows(a, &[values(summary)]);
    let name = id.map_or_else(|| "this run".to_string(), |id| format!("#{id} (this run)"));
    // Sequential by nature: said, with any trend within the baseline
    // (pelt_analyze::predict::design_notes says why verdicts stand).
    let timed = |started_ms: u64, values: Vec<f64>| Timed { started_ms, values };
    let baseline: Vec<Timed> = a
        .iter()
        .map(|r| timed(r.started_ms.max(0) as u64, stored_values(r)))
        .collect();
    let this = [timed(summary.env.started_unix_ms, values(summary))];
    let ctx = Context {
        design: Some(design::assess(&runs::metrics(), &baseline, &this, false)),
        notes: selection.notes.clone(),
        allowed: selection.allowed.clone(),
        runs: 1,
        ..Context::default()
    };
    eprint!(
        "{}",
        render(CompareFormat::Text, &rows, &spec, a, &[name], &ctx)?
    );
    if fail_on.is_some() && !pelt_analyze::predict::gate_has_verdict(&rows) {
        // A gate that could not judge must not pass.
        return Err(UserError(format!(
            "--fail-on: no verdict was possible against --baseline {} ({} run(s) with latencies); record at least {} runs of this configuration first",
            spec.describe(),
            a.len(),
            pelt_analyze::predict::MIN_BASELINE_RUNS
        )));
    }
    Ok(if fails(fail_on, |m| runs::regressed(&rows, m)) {
        eprintln!("pelt: --fail-on: this run regressed against the baseline");
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `pelt sweep ... --baseline SPEC`: this sweep's capacity (`id`
/// recorded, `step` the summary of the step that set it) against the
/// capacities of the recorded sweeps SPEC selects, by `pelt compare`'s
/// method with capacity's margin (5 %, a sweep's resolution); the table
/// goes to stderr. Exit 1 when `fail_on` is met.
pub fn after_sweep(
    store: &mut Store,
    spec_text: &str,
    step: &RunSummary,
    id: Option<i64>,
    capacity: Option<f64>,
    fail_on: Option<FailOn>,
) -> Result<ExitCode, UserError> {
    let spec = Spec::parse(spec_text)?;
    let url = pelt_campaign::baseline::single_url(std::slice::from_ref(step));
    let a = spec.sweeps(store, url.as_deref(), id)?;
    let (a, without): (Vec<RunRow>, Vec<RunRow>) =
        a.into_iter().partition(|r| r.figures.capacity.is_some());
    if !without.is_empty() {
        eprintln!(
            "pelt: note: {} of the baseline's sweeps found no capacity and are left out ({})",
            without.len(),
            names(&without).join(", ")
        );
    }
    let Some(b) = capacity else {
        eprintln!(
            "pelt: this sweep found no capacity: there is nothing to set against the baseline"
        );
        return Ok(ExitCode::FAILURE);
    };
    if a.is_empty() {
        return Err(UserError(format!(
            "no recorded sweep with a capacity matches --baseline {}; see pelt history trend --metric capacity",
            spec.describe()
        )));
    }
    let values: Vec<f64> = a.iter().filter_map(|r| r.figures.capacity).collect();
    let metric = pelt_analyze::sweep::capacity_metric();
    let rows = vec![Row {
        result: pelt_analyze::compare::compare_unpaired(&metric, &values, &[b]),
        metric,
        confounded: false,
    }];
    let name = id.map_or_else(
        || "this sweep".to_string(),
        |id| format!("#{id} (this sweep)"),
    );
    eprint!(
        "{}",
        render(
            CompareFormat::Text,
            &rows,
            &spec,
            &a,
            &[name],
            &Context {
                runs: a.len() + 1,
                ..Context::default()
            }
        )?
    );
    Ok(if fails(fail_on, |m| runs::regressed(&rows, m)) {
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
    let mut url = config.targets[0].url.clone();
    pelt_store::Redactor::default().url(&mut url);
    // Counted by the one rule of likeness the gate will use.
    let (found, why) = match spec.select_like(
        store,
        config,
        &[],
        Some(url.to_string()),
        None,
        allow_mismatch,
    ) {
        Ok(selection) => (selection.runs.len(), String::new()),
        // None at all says itself in the count; runs doing other work are
        // named, so the user sees why they do not count.
        Err(e) if e.to_string().starts_with("no recorded run") => (0, String::new()),
        Err(e) => (0, format!(" ({e})")),
    };
    if found < min {
        return Err(UserError(format!(
            "--fail-on needs a baseline of at least {min} recorded runs for a verdict, and --baseline {} has {found}{why}; record {} more (the same pelt run without --fail-on), then gate",
            spec.describe(),
            min - found
        )));
    }
    Ok(())
}
