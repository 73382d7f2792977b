//! `pelt compare`: did B change from A, by how much, and is it real?
//!
//! Each run is reduced to one value per metric (from its merged
//! histogram), and the runs, not the requests, are compared: see
//! pelt-analyze for why and how.

use crate::cli::{CompareArgs, CompareFormat, FailOn};
use crate::report::{label, load, once_each};
use crate::UserError;
use pelt_analyze::{
    compare_paired, compare_unpaired, Comparison, Direction, Metric, Scale, Verdict, MARGIN_P50,
    MARGIN_P90, MARGIN_P99, MARGIN_P999,
};
use pelt_core::{human_ns, RunSummary};
use std::fmt::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Error rates are compared in points: 0.001 = 0.1 percentage point.
const MARGIN_ERRORS: f64 = 0.001;

/// How a run yields one metric's value.
type Extract = fn(&RunSummary) -> f64;

/// What is compared, and how each run yields its value.
fn metrics() -> Vec<(Metric, Extract)> {
    fn pct(s: &RunSummary, p: f64) -> f64 {
        let h = &s.total.response;
        if h.is_empty() {
            f64::NAN
        } else {
            h.value_at_percentile(p) as f64
        }
    }
    vec![
        (Metric::latency("p50", MARGIN_P50), |s| pct(s, 50.0)),
        (Metric::latency("p90", MARGIN_P90), |s| pct(s, 90.0)),
        (Metric::latency("p99", MARGIN_P99), |s| pct(s, 99.0)),
        (Metric::latency("p99.9", MARGIN_P999), |s| pct(s, 99.9)),
        (
            Metric::new(
                "errors",
                Scale::Points,
                Direction::HigherIsWorse,
                MARGIN_ERRORS,
            ),
            |s| 1.0 - s.success_ratio(),
        ),
        // A closed loop's throughput is what the server managed; a rate
        // run's is fixed by its schedule (499.9/s against 499.5/s was
        // called a regression over nothing), so rate runs compare what
        // they control instead: the share of planned requests actually
        // sent. Each is NaN in the other mode, and not compared there.
        (Metric::throughput(), |s| {
            if s.is_rate_mode() {
                f64::NAN
            } else {
                s.throughput()
            }
        }),
        (
            Metric::new(
                "sent",
                Scale::Points,
                Direction::HigherIsBetter,
                MARGIN_SENT,
            ),
            |s| {
                if s.is_rate_mode() && s.planned() > 0 {
                    s.sent() as f64 / s.planned() as f64
                } else {
                    f64::NAN
                }
            },
        ),
    ]
}

/// The share of planned requests sent is compared in points: 0.01 = one
/// percentage point of the schedule missed.
const MARGIN_SENT: f64 = 0.01;

/// Why a metric has no comparison when its values are NaN: it does not
/// apply to the runs' load model (see [`metrics`]).
fn not_applicable(metric: &Metric, a: &[f64], b: &[f64]) -> Option<String> {
    let nan = |v: &[f64]| !v.is_empty() && v.iter().all(|x| x.is_nan());
    let mixed = |v: &[f64]| v.iter().any(|x| x.is_nan()) && !v.iter().all(|x| x.is_nan());
    let which = match metric.name.as_str() {
        "throughput" => "fixed by the schedule in rate runs (see 'sent')",
        "sent" => "for rate runs only (a closed loop's is 'throughput')",
        _ => return None,
    };
    if mixed(a) || mixed(b) || nan(a) != nan(b) {
        Some("the runs mix rate and closed-loop load".into())
    } else if nan(a) {
        Some(which.to_string())
    } else {
        None
    }
}

/// One row: the comparison, or why there is none.
pub type Row = (Metric, Result<Comparison, String>);

/// Every metric of B's runs against A's: paired by position (blocks), or
/// as two independent sets.
pub fn compare_runs(a: &[RunSummary], b: &[RunSummary], paired: bool) -> Vec<Row> {
    let values = |runs: &[RunSummary]| runs.iter().map(values).collect::<Vec<_>>();
    compare_values(&values(a), &values(b), paired)
}

/// [`compare_runs`] on runs already reduced by [`values`].
pub fn compare_values(a: &[Vec<f64>], b: &[Vec<f64>], paired: bool) -> Vec<Row> {
    metrics()
        .into_iter()
        .enumerate()
        .map(|(i, (metric, _))| {
            let va: Vec<f64> = a.iter().map(|v| v[i]).collect();
            let vb: Vec<f64> = b.iter().map(|v| v[i]).collect();
            if let Some(why) = not_applicable(&metric, &va, &vb) {
                return (metric, Err(why));
            }
            let result = if paired {
                compare_paired(&metric, &va, &vb)
            } else {
                compare_unpaired(&metric, &va, &vb)
            };
            (metric, result.map_err(|e| e.to_string()))
        })
        .collect()
}

/// Whether `--fail-on` is triggered by these rows.
pub fn fails(rows: &[Row], fail_on: Option<FailOn>) -> bool {
    rows.iter().any(|(_, r)| match r {
        Ok(c) => match (c.verdict, fail_on) {
            (Verdict::Regression { .. }, Some(FailOn::Regression)) => true,
            (Verdict::Regression { material }, Some(FailOn::Material)) => material,
            _ => false,
        },
        Err(_) => false,
    })
}

/// Each metric's value for one run, in the order of [`metric_list`].
pub fn values(run: &RunSummary) -> Vec<f64> {
    metrics().into_iter().map(|(_, f)| f(run)).collect()
}

/// The compared metrics, in order.
pub fn metric_list() -> Vec<Metric> {
    metrics().into_iter().map(|(m, _)| m).collect()
}

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
        .filter(|(_, s)| {
            s.warnings
                .iter()
                .any(|w| matches!(w, pelt_core::Warning::ClientBusy { .. }))
        })
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
    let rows = compare_runs(&a, &b, args.paired);
    let names = |files: &[PathBuf]| files.iter().map(|f| label(f)).collect::<Vec<_>>();
    let out = match args.format {
        CompareFormat::Text => text(&rows, &names(&a_files), &names(&b_files), args.paired),
        CompareFormat::Markdown => markdown(&rows),
        CompareFormat::Json => json(&rows, &a_files, &b_files, args.paired),
        CompareFormat::Html => html(
            &rows,
            &a,
            &b,
            &names(&a_files),
            &names(&b_files),
            args.paired,
        ),
    };
    crate::emit(out.as_bytes())?;
    Ok(if fails(&rows, args.fail_on) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

pub(crate) fn value(metric: &Metric, v: f64) -> String {
    if v.is_nan() {
        return "n/a".into();
    }
    match (metric.scale, metric.direction) {
        (Scale::Points, _) => format!("{:.2}%", v * 100.0),
        (Scale::Ratio, Direction::HigherIsBetter) => format!("{v:.1}/s"),
        (Scale::Ratio, Direction::HigherIsWorse) => human_ns(v as u64).to_string(),
    }
}

pub(crate) fn change(metric: &Metric, v: f64) -> String {
    match metric.scale {
        // A change too small for one decimal still shows its sign and
        // size, so "-0.0% .. -0.0%  REGRESSION" cannot happen.
        Scale::Ratio if v != 0.0 && v.abs() < 0.0005 => format!("{:+.3}%", v * 100.0),
        Scale::Ratio => format!("{:+.1}%", v * 100.0),
        Scale::Points if v != 0.0 && v.abs() < 0.00005 => format!("{:+.4} pt", v * 100.0),
        Scale::Points => format!("{:+.2} pt", v * 100.0),
    }
}

pub(crate) fn verdict(m: &Metric, c: &Comparison) -> String {
    let margin = match m.scale {
        Scale::Ratio => format!("±{:.0}%", m.margin * 100.0),
        Scale::Points => format!("±{:.1} pt", m.margin * 100.0),
    };
    match c.verdict {
        Verdict::Inconclusive { .. } if c.ci.is_none() => {
            "INCONCLUSIVE (too few runs for a 95% interval: 4+ per side, 6+ paired)".into()
        }
        Verdict::Inconclusive {
            blocks_needed: Some(n),
        } => format!("INCONCLUSIVE (~{n} runs each would resolve {margin})"),
        v => verdict_word(&v),
    }
}

fn verdict_word(v: &Verdict) -> String {
    match v {
        Verdict::Regression { material: true } => "REGRESSION (material)".into(),
        Verdict::Regression { material: false } => "REGRESSION".into(),
        Verdict::Improvement { material: true } => "IMPROVEMENT (material)".into(),
        Verdict::Improvement { material: false } => "IMPROVEMENT".into(),
        Verdict::Equivalent => "EQUIVALENT".into(),
        Verdict::Inconclusive {
            blocks_needed: Some(n),
        } => format!("INCONCLUSIVE (~{n} runs each would tell)"),
        Verdict::Inconclusive {
            blocks_needed: None,
        } => "INCONCLUSIVE".into(),
        Verdict::NoVerdict => "no verdict".into(),
    }
}

pub(crate) fn ci(metric: &Metric, c: &Comparison) -> String {
    match c.ci {
        Some((lo, hi)) => format!("{} .. {}", change(metric, lo), change(metric, hi)),
        None => "-".into(),
    }
}

/// A row's cells: A, B, change, interval, verdict.
pub(crate) fn cells(m: &Metric, c: &Comparison) -> [String; 5] {
    [
        value(m, c.a),
        value(m, c.b),
        change(m, c.estimate),
        ci(m, c),
        verdict(m, c),
    ]
}

pub(crate) fn text(rows: &[Row], a: &[String], b: &[String], paired: bool) -> String {
    let mut o = String::new();
    let design = if paired {
        "paired by position"
    } else {
        "independent runs"
    };
    let _ = writeln!(
        o,
        "pelt compare: A = {} run(s), B = {} run(s), {design}",
        a.len(),
        b.len()
    );
    let _ = writeln!(o, "  A: {}\n  B: {}\n", a.join(", "), b.join(", "));
    o.push_str(&table(rows));
    o
}

/// The per-metric table of a comparison, with a note when no verdict is
/// possible.
pub(crate) fn table(rows: &[Row]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<11} {:>12} {:>12} {:>10}  {:<22} verdict",
        "metric", "A (median)", "B (median)", "change", "95% interval"
    );
    for (m, r) in rows {
        match r {
            Ok(c) => {
                let [a, b, change, ci, verdict] = cells(m, c);
                let _ = writeln!(
                    o,
                    "{:<11} {a:>12} {b:>12} {change:>10}  {ci:<22} {verdict}",
                    m.name
                );
            }
            Err(e) => {
                let _ = writeln!(o, "{:<11} cannot compare: {e}", m.name);
            }
        }
    }
    if rows
        .iter()
        .any(|(_, r)| matches!(r, Ok(c) if c.verdict == Verdict::NoVerdict))
    {
        let _ = writeln!(
            o,
            "\nOne run per side cannot separate a change from run-to-run noise: the changes \
             above are\nobservations, not findings. Repeat each side (6 or more runs, ideally \
             interleaved A, B, B, A, ...)."
        );
    }
    o
}

pub(crate) fn markdown(rows: &[Row]) -> String {
    let mut o = String::from(
        "| metric | A | B | change | 95% interval | verdict |\n|---|---:|---:|---:|---|---|\n",
    );
    for (m, r) in rows {
        match r {
            Ok(c) => {
                let _ = writeln!(o, "| {} | {} |", m.name, cells(m, c).join(" | "));
            }
            Err(e) => {
                let _ = writeln!(
                    o,
                    "| {} | | | | | cannot compare: {} |",
                    m.name,
                    e.replace('|', "\\|")
                );
            }
        }
    }
    o
}

/// Adds `run`'s requests to a pooled summary (the first run's, with its
/// timeline dropped): one distribution for a chart. A picture only; the
/// statistics compare runs, never pooled requests.
pub(crate) fn pool(into: &mut Option<RunSummary>, mut run: RunSummary) {
    match into {
        Some(p) => p.total.merge(&run.total),
        None => {
            run.timeline.clear();
            *into = Some(run);
        }
    }
}

/// The per-metric rows as a table for HTML pages.
pub(crate) fn verdict_table(rows: &[Row]) -> pelt_report::html::Table {
    pelt_report::html::Table {
        head: [
            "metric",
            "A (median)",
            "B (median)",
            "change",
            "95% interval",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
        rows: rows
            .iter()
            .map(|(m, r)| match r {
                Ok(c) => std::iter::once(m.name.clone()).chain(cells(m, c)).collect(),
                Err(e) => vec![m.name.clone(), format!("cannot compare: {e}")],
            })
            .collect(),
    }
}

/// Runs per side drawn in the timeline charts; more would be a tangle.
const TIMELINES_PER_SIDE: usize = 3;

/// The verdict table, both sides' pooled percentile spectra, and the
/// first runs' timelines, on one self-contained page.
fn html(
    rows: &[Row],
    a: &[RunSummary],
    b: &[RunSummary],
    a_names: &[String],
    b_names: &[String],
    paired: bool,
) -> String {
    use pelt_report::html::{Block, Labeled};
    let pooled = |runs: &[RunSummary]| {
        let mut p = None;
        for r in runs {
            pool(&mut p, r.clone());
        }
        p.expect("each side has a run")
    };
    let (pa, pb) = (pooled(a), pooled(b));
    let table = verdict_table(rows);
    let design = if paired {
        "paired by position"
    } else {
        "independent runs"
    };
    let mut timelines: Vec<Labeled<'_>> = Vec::new();
    for (side, runs, names) in [("A", a, a_names), ("B", b, b_names)] {
        for (run, name) in runs.iter().zip(names).take(TIMELINES_PER_SIDE) {
            timelines.push(Labeled {
                label: format!("{side}: {name}"),
                summary: run,
            });
        }
    }
    let mut blocks = vec![
        Block::Paragraph(format!(
            "A = {} run(s): {}. B = {} run(s): {}. {design}.",
            a.len(),
            a_names.join(", "),
            b.len(),
            b_names.join(", ")
        )),
        Block::Table(table),
    ];
    if rows
        .iter()
        .any(|(_, r)| matches!(r, Ok(c) if c.verdict == Verdict::NoVerdict))
    {
        blocks.push(Block::Paragraph(
            "One run per side cannot separate a change from run-to-run noise: the changes above are observations, not findings. Repeat each side (6 or more runs, interleaved A, B, B, A, ...).".into(),
        ));
    }
    blocks.extend([
        Block::Heading("Latency by percentile".into()),
        Block::Paragraph(
            "Each side's runs pooled: a picture of the distributions; the verdicts compare runs."
                .into(),
        ),
        Block::Spectrum(vec![
            Labeled {
                label: "A".into(),
                summary: &pa,
            },
            Labeled {
                label: "B".into(),
                summary: &pb,
            },
        ]),
        Block::Heading("Over time".into()),
        Block::Paragraph(format!(
            "The first {TIMELINES_PER_SIDE} runs of each side, second by second."
        )),
        Block::Timelines(timelines),
    ]);
    pelt_report::html::document("pelt compare", &blocks)
}

fn json(rows: &[Row], a: &[PathBuf], b: &[PathBuf], paired: bool) -> String {
    let comparisons: Vec<serde_json::Value> = rows
        .iter()
        .map(|(m, r)| match r {
            Ok(c) => serde_json::json!({ "metric": m, "comparison": c }),
            Err(e) => serde_json::json!({ "metric": m, "error": e }),
        })
        .collect();
    let files = |f: &[PathBuf]| {
        f.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    };
    let doc = serde_json::json!({
        "schema": "pelt.compare/1",
        "paired": paired,
        "a": files(a),
        "b": files(b),
        "metrics": comparisons,
    });
    let mut s = serde_json::to_string_pretty(&doc).expect("a JSON value always serialises");
    s.push('\n');
    s
}
