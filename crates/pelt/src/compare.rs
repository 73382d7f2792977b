//! `pelt compare`: did B change from A, by how much, and is it real?
//!
//! Each run is reduced to one value per metric (from its merged
//! histogram), and the runs, not the requests, are compared: see
//! pelt-analyze for why and how; pelt-report renders the result.

use crate::flags::{CompareArgs, CompareFormat};
use crate::output::fail_on;
use crate::UserError;
use pelt_analyze::alike::{self, Mismatch};
use pelt_analyze::design::{self, Timed};
use pelt_analyze::latency::Latency;
use pelt_analyze::{headline, runs};
use pelt_campaign::results::{label, load, once_each};
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
    // ... and on both sides it would be compared with itself.
    let both: Vec<PathBuf> = a_files.iter().chain(&b_files).cloned().collect();
    once_each(&both, "a run on both sides would be compared with itself")?;
    let load_all = |files: &[PathBuf]| -> Result<Vec<RunSummary>, UserError> {
        files.iter().map(|f| Ok(load(f)?)).collect()
    };
    let (a, b) = (load_all(&a_files)?, load_all(&b_files)?);
    let allowed = like_with_like(&a_files, &a, &b_files, &b, args.allow_mismatch)?;
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
    let latency: Latency = args.metric.into();
    let (ta, tb) = (timed(&a, latency), timed(&b, latency));
    let values = |t: &[Timed]| t.iter().map(|r| r.values.clone()).collect::<Vec<_>>();
    let mut rows = runs::compare_values(&values(&ta), &values(&tb), args.paired);
    rows = latency.judge(rows);
    let time_design = design::assess(&runs::metrics(), &ta, &tb, args.sequential_ok);
    design::withhold_material(&mut rows, &time_design);
    let ctx = compare::Context {
        design: Some(time_design),
        warnings: headline::group_warnings(
            a_files
                .iter()
                .zip(&a)
                .chain(b_files.iter().zip(&b))
                .map(|(f, s)| (label(f), s.warnings.as_slice())),
        ),
        runs: a.len() + b.len(),
        allowed,
        notes: alike::servers(&a[0].config, &b[0].config)
            .map(|d| format!("A and B ran against different servers ({}): compared as two servers doing the same work.", d))
            .into_iter()
            .collect(),
        latency,
        baseline: None,
    };
    let names = |files: &[PathBuf]| files.iter().map(|f| label(f)).collect::<Vec<_>>();
    let paths = |files: &[PathBuf]| {
        files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    };
    let out = match args.format {
        CompareFormat::Text => {
            compare::text(&rows, &names(&a_files), &names(&b_files), args.paired, &ctx)
        }
        CompareFormat::Markdown => compare::markdown_report(&rows, &ctx),
        CompareFormat::Json => {
            compare::json(&rows, &paths(&a_files), &paths(&b_files), args.paired, &ctx)
        }
        CompareFormat::Html => compare::html(
            &rows,
            &labeled(&a_files, &a),
            &labeled(&b_files, &b),
            args.paired,
            &ctx,
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

/// Each run's start and values (its percentiles of `latency`), for the
/// comparison and the design's checks.
pub fn timed(runs: &[RunSummary], latency: Latency) -> Vec<Timed> {
    runs.iter()
        .map(|s| Timed {
            started_ms: s.env.started_unix_ms,
            values: pelt_analyze::latency::values(s, latency),
        })
        .collect()
}

/// Like with like (see `pelt_analyze::alike`): every run, A's and B's,
/// against A's first, and each complete. Differences refuse the
/// comparison (exit 2, naming them) unless `allow`, when they are
/// returned to be listed in the report. Two files holding the same run
/// (the same start and work) are refused whatever `allow` says: a run
/// compared with itself is no evidence.
fn like_with_like(
    a_files: &[PathBuf],
    a: &[RunSummary],
    b_files: &[PathBuf],
    b: &[RunSummary],
    allow: bool,
) -> Result<Vec<Mismatch>, UserError> {
    for (fa, ra) in a_files.iter().zip(a) {
        for (fb, rb) in b_files.iter().zip(b) {
            if ra.env.started_unix_ms == rb.env.started_unix_ms
                && ra.env.started_unix_ms != 0
                && ra.config == rb.config
            {
                return Err(UserError(format!(
                    "'{}' and '{}' are the same run (same start and configuration), on both sides; \
                     give each run on one side only",
                    fa.display(),
                    fb.display()
                )));
            }
        }
    }
    let reference = &a[0].config;
    let all = a_files
        .iter()
        .zip(a)
        .chain(b_files.iter().zip(b))
        .map(|(f, s)| (label(f), s));
    let mismatches = alike::mismatches(reference, all);
    if mismatches.is_empty() || allow {
        return Ok(mismatches);
    }
    Err(UserError(alike::refusal(
        &format!("{} (A's first run)", label(&a_files[0])),
        &mismatches,
        "--allow-mismatch",
    )))
}
