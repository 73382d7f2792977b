//! Comparisons of runs (`pelt compare`): per metric, A's and B's medians,
//! the change, its 95 % interval and the verdict, as text, markdown, JSON
//! or a page with charts. The numbers come from [`pelt_analyze::runs`].

use crate::html::{Block, Labeled};
use crate::table::Table;
use pelt_analyze::alike::Mismatch;
use pelt_analyze::design::TimeDesign;
use pelt_analyze::headline::{failed_differs, most_severe, warning_notes, WarningGroup};
use pelt_analyze::runs::{any_without_verdict, pool, Row};
use pelt_analyze::{Comparison, Design, Direction, Metric, Scale, Verdict};
use pelt_core::{human_ns, RunSummary};
use std::fmt::Write;

/// Runs per side drawn in the timeline charts; more would be a tangle.
const TIMELINES_PER_SIDE: usize = 3;

/// Said under a table whose sides have one run each.
const ONE_RUN_NOTE: &str =
    "One run per side cannot separate a change from run-to-run noise: the changes";

fn design(paired: bool) -> &'static str {
    if paired {
        "paired by position"
    } else {
        "independent runs"
    }
}

/// A metric's value as people read it: `1.23ms`, `0.10%`, `950.0/s`;
/// `n/a` for NaN (a run with no timed response).
pub fn value(metric: &Metric, v: f64) -> String {
    if v.is_nan() {
        return "n/a".into();
    }
    match (metric.scale, metric.direction) {
        (Scale::Points, _) => format!("{:.2}%", v * 100.0),
        (Scale::Ratio, Direction::HigherIsBetter) => format!("{v:.1}/s"),
        (Scale::Ratio, Direction::HigherIsWorse) => human_ns(v as u64).to_string(),
    }
}

/// A change: `+1.2%` on a ratio scale, `+0.05 pt` on the points scale.
fn change(metric: &Metric, v: f64) -> String {
    match metric.scale {
        // A change too small for one decimal still shows its sign and
        // size, so "-0.0% .. -0.0%  REGRESSION" cannot happen.
        Scale::Ratio if v != 0.0 && v.abs() < 0.0005 => format!("{:+.3}%", v * 100.0),
        Scale::Ratio => format!("{:+.1}%", v * 100.0),
        Scale::Points if v != 0.0 && v.abs() < 0.00005 => format!("{:+.4} pt", v * 100.0),
        Scale::Points => format!("{:+.2} pt", v * 100.0),
    }
}

/// Above this many runs (or blocks) per side, "run more" is no advice a
/// person can take: the noise has to come down, or the margin go up.
const PRACTICAL_RUNS: u32 = 30;

fn verdict(m: &Metric, c: &Comparison, confounded: bool) -> String {
    let margin = match m.scale {
        Scale::Ratio => format!("±{:.0}%", m.margin * 100.0),
        Scale::Points => format!("±{:.1} pt", m.margin * 100.0),
    };
    let each = match c.design {
        Design::Paired { .. } => "blocks",
        Design::Unpaired { .. } => "runs each",
        Design::Prediction { .. } => "baseline runs",
    };
    match c.verdict {
        Verdict::Inconclusive { .. } if c.ci.is_none() => {
            "INCONCLUSIVE (too few runs for a 95% interval: 4+ per side, 6+ paired)".into()
        }
        Verdict::Inconclusive {
            blocks_needed: Some(n),
        } if n <= PRACTICAL_RUNS => format!("INCONCLUSIVE (~{n} {each} would resolve {margin})"),
        Verdict::Inconclusive {
            blocks_needed: Some(_),
        } => format!(
            "INCONCLUSIVE (too noisy to resolve {margin} in {PRACTICAL_RUNS} {each}: steady the runs first, with longer runs or a quieter machine)"
        ),
        Verdict::Regression { .. } | Verdict::Improvement { .. } if confounded => {
            format!("{} (confounded with time)", verdict_word(&c.verdict))
        }
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

fn ci(metric: &Metric, c: &Comparison) -> String {
    match c.ci {
        Some((lo, hi)) => format!("{} .. {}", change(metric, lo), change(metric, hi)),
        None => "-".into(),
    }
}

/// A row's cells: A, B, change, interval, verdict.
fn cells(row: &Row, c: &Comparison) -> [String; 5] {
    let m = &row.metric;
    [
        value(m, c.a),
        value(m, c.b),
        change(m, c.estimate),
        ci(m, c),
        verdict(m, c, row.confounded),
    ]
}

/// Whether the change column's sign disagrees with the medians beside it:
/// the change is Hodges-Lehmann's estimate (the median of the paired
/// differences, or of all cross differences), not `B - A` of the medians,
/// and the two can point different ways.
fn sign_differs(c: &Comparison) -> bool {
    let medians = c.b - c.a;
    c.estimate != 0.0 && medians != 0.0 && (c.estimate > 0.0) != (medians > 0.0)
}

/// Said under a table whose change column has the opposite sign to its
/// medians somewhere.
pub const ESTIMATOR_NOTE: &str = "change: the Hodges-Lehmann estimate, the median of the per-block (or \
     all A-to-B) differences of the runs; the medians beside it are each side's alone, so the two can \
     differ, even in sign (marked *). The interval and verdict go with the change.";

/// What a comparison's report says besides its table: how the runs were
/// ordered in time, their warnings, the differences allowed between them.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The runs' order in time and their drift, when known.
    pub design: Option<TimeDesign>,
    /// The runs' warnings, by kind.
    pub warnings: Vec<WarningGroup>,
    /// Runs compared in all, for "in 5 of 8 runs".
    pub runs: usize,
    /// Runs that differ in their work, compared anyway (`--allow-mismatch`).
    pub allowed: Vec<Mismatch>,
    /// Anything else to say first (runs left out of a baseline).
    pub notes: Vec<String>,
    /// The latency the percentile rows measure (`--metric`).
    pub latency: pelt_analyze::latency::Latency,
    /// Side A is recorded runs chosen by this (`tag:X`, `last:N`, ...).
    pub baseline: Option<String>,
    /// How the rows were judged as one family ([`pelt_analyze::family`]).
    pub family: Option<pelt_analyze::family::Family>,
}

impl Context {
    /// The runs' warnings that bear on what is judged (see
    /// [`pelt_analyze::latency::Latency::weakened_by`]).
    pub fn bearing_warnings(&self) -> Vec<WarningGroup> {
        self.warnings
            .iter()
            .filter(|g| self.latency.weakened_by(g))
            .cloned()
            .collect()
    }
}

/// The headline of a comparison: its most severe verdict, errors first
/// (see [`pelt_analyze::headline`]), with the change and interval.
pub fn headline(rows: &[Row]) -> String {
    let Some(row) = most_severe(rows) else {
        return "no metric could be compared".into();
    };
    let c = row
        .result
        .as_ref()
        .expect("most_severe picks compared rows");
    let m = &row.metric;
    let interval = match c.ci {
        Some(_) => format!(" ({})", ci(m, c)),
        None => String::new(),
    };
    let severe = format!(
        "{} {}, {}{interval}",
        m.name,
        verdict(m, c, row.confounded),
        change(m, c.estimate),
    );
    // Verdicts that point both ways are said to, before the most severe
    // one: "cache: p99 REGRESSION" alone hid p50 -97 % and throughput
    // +134 % (issue 35).
    match pelt_analyze::headline::disagreeing(rows) {
        Some((better, worse)) => format!(
            "the verdicts disagree: {} improved; {} regressed. Most severe: {severe}",
            and_list(&better),
            and_list(&worse)
        ),
        None => severe,
    }
}

/// `p50`, `p50 and p99`, `p50, p90 and p99`.
fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The flag raised above everything when the failed share differs
/// materially: the latencies of a variant that fails describe other work.
pub fn errors_flag(rows: &[Row]) -> Option<String> {
    let c = failed_differs(rows)?;
    let m = rows
        .iter()
        .find(|r| r.metric.name == pelt_analyze::headline::FAILED)
        .map(|r| &r.metric)?;
    // With errors the only metric judged (`--metric errors`), there are
    // no other verdicts for the failures to spoil.
    let others = rows
        .iter()
        .any(|r| r.metric.name != pelt_analyze::headline::FAILED && r.result.is_ok());
    let why = if others {
        "the other verdicts compare different work (error pages, refusals); fix the failures first"
    } else {
        "fix the failures first"
    };
    Some(format!(
        "FAILED SHARE DIFFERS: it went from {} to {} ({}): {why} (pelt report FILE names their kinds)",
        value(m, c.a),
        value(m, c.b),
        change(m, c.estimate),
    ))
}

/// Everything said above the table, in order: the errors flag, the
/// headline, the design, differences allowed, the runs' warnings, notes.
pub fn lead(rows: &[Row], ctx: &Context) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(errors_flag(rows));
    out.push(format!("headline: {}", headline(rows)));
    if !ctx.latency.is_headline_of_rate_runs() {
        out.push(ctx.latency.describe().into());
    }
    if let Some(d) = &ctx.design {
        let metrics: Vec<&Metric> = rows.iter().map(|r| &r.metric).collect();
        let describe = |name: &str, v: f64| {
            metrics
                .iter()
                .find(|m| m.name == name)
                .map_or(format!("{v}"), |m| value(m, v))
        };
        // One new run against a baseline's prediction interval keeps its
        // material verdicts and says why (pelt_analyze::predict).
        out.extend(match prediction(rows) {
            true => pelt_analyze::predict::design_notes(d, describe),
            false => pelt_analyze::design::notes(d, describe),
        });
    }
    if !ctx.allowed.is_empty() {
        // Runs that differ the same way are named together.
        let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
        for m in &ctx.allowed {
            let how = m
                .differences
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("; ");
            match groups.iter_mut().find(|(h, _)| *h == how) {
                Some((_, runs)) => runs.push(&m.run),
                None => groups.push((how, vec![&m.run])),
            }
        }
        out.push(format!(
            "--allow-mismatch: compared although the runs' work differs: {}.",
            groups
                .iter()
                .map(|(how, runs)| format!("{} ({how})", runs.join(", ")))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out.extend(warning_notes(&ctx.bearing_warnings(), ctx.runs));
    out.extend(ctx.family.as_ref().map(pelt_analyze::family::note));
    out.extend(ctx.notes.iter().cloned());
    out
}

/// Whether the rows judge one new run against a baseline's prediction
/// interval (`pelt_analyze::predict`).
fn prediction(rows: &[Row]) -> bool {
    rows.iter().any(|r| {
        matches!(&r.result, Ok(c) if matches!(c.design, pelt_analyze::Design::Prediction { .. }))
    })
}

/// The JSON of a [`Context`] and the headline, merged into a comparison's
/// document.
pub fn json_context(rows: &[Row], ctx: &Context) -> serde_json::Value {
    serde_json::json!({
        "headline": headline(rows),
        "latency": ctx.latency,
        "headline_metric": most_severe(rows).map(|r| r.metric.name.clone()),
        "failed_differs": failed_differs(rows).is_some(),
        "design": ctx.design,
        "confounded_with_time": ctx.design.as_ref().is_some_and(|d| d.confounded()) && !prediction(rows),
        "warnings": ctx.bearing_warnings(),
        "mismatches_allowed": ctx.allowed,
        "family": ctx.family,
        "notes": ctx.notes,
    })
}

/// The text report: which runs are on each side (by name), what matters
/// most ([`lead`]), then [`table`].
pub fn text(rows: &[Row], a: &[String], b: &[String], paired: bool, ctx: &Context) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "pelt compare: A = {} run(s), B = {} run(s), {}",
        a.len(),
        b.len(),
        design(paired)
    );
    let _ = writeln!(o, "  A: {}\n  B: {}\n", a.join(", "), b.join(", "));
    for line in lead(rows, ctx) {
        let _ = writeln!(o, "{line}");
    }
    o.push('\n');
    o.push_str(&table(rows));
    o
}

/// The heads of the A, B and interval columns, saying what they hold:
/// each side's median and the 95 % rank interval; or, for one new run
/// against a baseline's prediction interval, the baseline's mean
/// (geometric for latencies: the centre the interval is built around),
/// the run itself, and the interval's real confidence (98.3 %, say, so
/// that the gate over all metrics errs at most 5 % in all).
fn heads(rows: &[Row]) -> [String; 3] {
    if !prediction(rows) {
        return [
            "A (median)".into(),
            "B (median)".into(),
            "95% interval".into(),
        ];
    }
    let confidence = rows
        .iter()
        .find_map(|r| r.result.as_ref().ok().and_then(|c| c.confidence))
        .unwrap_or(pelt_analyze::CONFIDENCE);
    [
        "A (mean)".into(),
        "B (run)".into(),
        format!("{:.1}% interval", confidence * 100.0),
    ]
}

/// The per-metric table of a comparison as text, with a note when no
/// verdict is possible.
pub fn table(rows: &[Row]) -> String {
    let mut o = String::new();
    // A scenario's step rows (`browse/item p50`) widen the first column.
    let w = rows
        .iter()
        .map(|r| r.metric.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(11);
    let [a_head, b_head, ci_head] = heads(rows);
    let _ = writeln!(
        o,
        "{:<w$} {:>12} {:>12} {:>10}  {:<22} verdict",
        "metric", a_head, b_head, "change", ci_head
    );
    let mut flipped = false;
    for row in rows {
        let m = &row.metric;
        match &row.result {
            Ok(c) => {
                let [a, b, mut change, ci, verdict] = cells(row, c);
                if sign_differs(c) {
                    change.push('*');
                    flipped = true;
                }
                let _ = writeln!(
                    o,
                    "{:<w$} {a:>12} {b:>12} {change:>10}  {ci:<22} {verdict}",
                    m.name
                );
            }
            Err(e) => {
                let _ = writeln!(o, "{:<w$} cannot compare: {e}", m.name);
            }
        }
    }
    if flipped {
        let _ = writeln!(o, "\n{ESTIMATOR_NOTE}");
    }
    if any_without_verdict(rows) {
        let _ = writeln!(
            o,
            "\n{ONE_RUN_NOTE} \
             above are\nobservations, not findings. Repeat each side (6 or more runs, ideally \
             interleaved A, B, B, A, ...)."
        );
    }
    o
}

/// The per-metric table as markdown.
pub fn markdown(rows: &[Row]) -> String {
    let [a_head, b_head, ci_head] = heads(rows);
    let mut o = format!(
        "| metric | {a_head} | {b_head} | change | {ci_head} | verdict |\n|---|---:|---:|---:|---|---|\n",
    );
    let mut flipped = false;
    for row in rows {
        let m = &row.metric;
        match &row.result {
            Ok(c) => {
                let mut cells = cells(row, c);
                if sign_differs(c) {
                    cells[2].push('*');
                    flipped = true;
                }
                let _ = writeln!(o, "| {} | {} |", m.name, cells.join(" | "));
            }
            Err(e) => {
                let _ = writeln!(
                    o,
                    "| {} | | | | | cannot compare: {} |",
                    m.name,
                    e.to_string().replace('|', "\\|")
                );
            }
        }
    }
    if flipped {
        let _ = writeln!(o, "\n{ESTIMATOR_NOTE}");
    }
    o
}

/// A comparison's markdown report: [`lead`] as a list, then the table.
pub fn markdown_report(rows: &[Row], ctx: &Context) -> String {
    let mut o = String::new();
    for (i, line) in lead(rows, ctx).into_iter().enumerate() {
        // The first line is the errors flag or the headline: in bold.
        if i == 0 {
            let _ = writeln!(o, "**{line}**\n");
        } else {
            let _ = writeln!(o, "- {line}");
        }
    }
    o.push('\n');
    o.push_str(&markdown(rows));
    o
}

/// The per-metric rows as a table for HTML pages.
pub fn verdict_table(rows: &[Row]) -> Table {
    Table {
        head: {
            let [a_head, b_head, ci_head] = heads(rows);
            vec![
                "metric".into(),
                a_head,
                b_head,
                "change".into(),
                ci_head,
                "verdict".into(),
            ]
        },
        rows: rows
            .iter()
            .map(|row| match &row.result {
                Ok(c) => std::iter::once(row.metric.name.clone())
                    .chain(cells(row, c))
                    .collect(),
                Err(e) => vec![row.metric.name.clone(), format!("cannot compare: {e}")],
            })
            .collect(),
    }
}

/// The rows as JSON values: `{metric, comparison}` or `{metric, error}`.
pub fn json_rows(rows: &[Row]) -> Vec<serde_json::Value> {
    rows.iter()
        .map(
            |Row {
                 metric,
                 result,
                 confounded,
             }| match result {
                Ok(c) => serde_json::json!({
                    "metric": metric,
                    "comparison": c,
                    "confounded_with_time": confounded,
                }),
                Err(e) => serde_json::json!({ "metric": metric, "error": e.to_string() }),
            },
        )
        .collect()
}

/// The JSON document (`pelt.compare/2`), naming each side's files (a
/// baseline's as `history:ID`), for `pelt compare` with or without one.
pub fn json(
    rows: &[Row],
    a_files: &[String],
    b_files: &[String],
    paired: bool,
    ctx: &Context,
) -> String {
    let mut doc = serde_json::json!({
        "schema": "pelt.compare/2",
        "paired": paired,
        "a": a_files,
        "b": b_files,
        "metrics": json_rows(rows),
    });
    if let Some(spec) = &ctx.baseline {
        merge(&mut doc, serde_json::json!({ "baseline": spec }));
    }
    merge(&mut doc, json_context(rows, ctx));
    crate::json::pretty(&doc)
}

/// Adds `extra`'s keys to the object `doc`.
pub fn merge(doc: &mut serde_json::Value, extra: serde_json::Value) {
    if let (Some(d), serde_json::Value::Object(e)) = (doc.as_object_mut(), extra) {
        d.extend(e);
    }
}

/// The verdict table, both sides' pooled percentile spectra, and the
/// first runs' timelines, on one self-contained page. Each side has at
/// least one run.
pub fn html(
    rows: &[Row],
    a: &[Labeled<'_>],
    b: &[Labeled<'_>],
    paired: bool,
    ctx: &Context,
) -> String {
    let pooled = |runs: &[Labeled<'_>]| {
        let mut p: Option<RunSummary> = None;
        for r in runs {
            pool(&mut p, r.summary.clone());
        }
        p.expect("each side has a run")
    };
    let (pa, pb) = (pooled(a), pooled(b));
    let names = |runs: &[Labeled<'_>]| {
        runs.iter()
            .map(|r| r.label.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut timelines: Vec<Labeled<'_>> = Vec::new();
    for (side, runs) in [("A", a), ("B", b)] {
        for run in runs.iter().take(TIMELINES_PER_SIDE) {
            timelines.push(Labeled {
                label: format!("{side}: {}", run.label),
                summary: run.summary,
            });
        }
    }
    let mut blocks = vec![Block::Paragraph(format!(
        "A = {} run(s): {}. B = {} run(s): {}. {}.",
        a.len(),
        names(a),
        b.len(),
        names(b),
        design(paired)
    ))];
    blocks.extend(lead(rows, ctx).into_iter().map(Block::Paragraph));
    blocks.push(Block::Table(verdict_table(rows)));
    if rows
        .iter()
        .any(|r| r.result.as_ref().is_ok_and(sign_differs))
    {
        blocks.push(Block::Paragraph(ESTIMATOR_NOTE.into()));
    }
    if any_without_verdict(rows) {
        blocks.push(Block::Paragraph(format!(
            "{ONE_RUN_NOTE} above are observations, not findings. Repeat each side (6 or more runs, interleaved A, B, B, A, ...)."
        )));
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
        ], ctx.latency),
        Block::Heading("Over time".into()),
        Block::Paragraph(format!(
            "The first {TIMELINES_PER_SIDE} runs of each side, second by second; the latencies are each \
             run's headline ({}), whatever the verdicts judge: a second keeps no other.",
            headline_of(a)
        )),
        Block::Timelines(timelines),
    ]);
    crate::html::document("pelt compare", &blocks)
}

/// The headline latency of `runs` (one load model: they are alike), for
/// people.
fn headline_of(runs: &[Labeled<'_>]) -> &'static str {
    runs.first()
        .map_or("response time", |r| r.summary.headline().name())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pelt_analyze::runs::compare_values;

    fn runs(base: f64, n: usize) -> Vec<Vec<f64>> {
        (0..n)
            .map(|i| {
                let x = base * (1.0 + i as f64 * 0.01);
                vec![x, x, x, x, 0.001, 1e9 / x, f64::NAN]
            })
            .collect()
    }

    #[test]
    fn one_run_each_is_an_observation() {
        let rows = compare_values(&runs(1e6, 1), &runs(2e6, 1), false);
        let t = text(
            &rows,
            &["a".into()],
            &["b".into()],
            false,
            &Context::default(),
        );
        assert!(
            t.starts_with(
                "pelt compare: A = 1 run(s), B = 1 run(s), independent runs\n  A: a\n  B: b\n"
            ),
            "{t}"
        );
        assert!(
            t.contains("\np50               1.00ms       2.00ms    +100.0%  -  "),
            "{t}"
        );
        assert!(t.contains("no verdict"));
        assert!(t.contains("observations, not findings"));
        assert!(markdown(&rows).contains("| p50 | 1.00ms | 2.00ms | +100.0% | - | no verdict |"));
    }

    #[test]
    fn errors_and_verdicts_reach_every_format() {
        let rows = compare_values(&runs(1e6, 2), &runs(2e6, 1), true);
        assert!(table(&rows).contains("p50         cannot compare: p50: a paired comparison"));
        let doc: serde_json::Value = serde_json::from_str(&json(
            &rows,
            &["a.pelt".into()],
            &[],
            true,
            &Context::default(),
        ))
        .unwrap();
        assert_eq!(doc["schema"], "pelt.compare/2");
        assert!(doc["metrics"][0]["error"]
            .as_str()
            .unwrap()
            .contains("paired"));
        let rows = compare_values(&runs(1e6, 8), &runs(2e6, 8), true);
        let t = verdict_table(&rows);
        assert_eq!(t.rows[0][5], "REGRESSION (material)");
        assert_eq!(t.rows[5][0], "throughput");
        assert_eq!(t.rows[4][1], "0.10%");
    }

    /// Issue 23 §2: `p90 120µs 127µs -10.1 %`. The change is
    /// Hodges-Lehmann's, not the medians' difference; where the two point
    /// different ways the page says why.
    #[test]
    fn a_change_against_the_medians_is_explained() {
        // Paired: four blocks 10 % faster, two much slower. B's median is
        // lower, the paired estimate higher.
        let v = |x: f64| vec![x, x, x, x, 0.0, 1e9 / x, f64::NAN];
        let a: Vec<Vec<f64>> = [100.0, 200.0, 300.0, 400.0, 500.0, 600.0]
            .iter()
            .map(|&x| v(x))
            .collect();
        let b: Vec<Vec<f64>> = [90.0, 180.0, 270.0, 360.0, 900.0, 1000.0]
            .iter()
            .map(|&x| v(x))
            .collect();
        let rows = compare_values(&a, &b, true);
        let c = rows[0].result.as_ref().unwrap();
        assert!(c.b < c.a && c.estimate > 0.0, "{c:?}");
        let t = table(&rows);
        assert!(t.contains("%*"), "{t}");
        assert!(t.contains(ESTIMATOR_NOTE), "{t}");
        assert!(markdown(&rows).contains(ESTIMATOR_NOTE));
        // Where they agree, no note.
        let rows = compare_values(&runs(1e6, 8), &runs(2e6, 8), true);
        assert!(!table(&rows).contains(ESTIMATOR_NOTE));
    }

    /// "~18,927 runs each would resolve ±5 %" is no advice: past 30 the
    /// verdict says to steady the runs.
    #[test]
    fn inconclusive_advice_is_practical() {
        let m = Metric::latency("p99", 0.05);
        let mut c = compare_values(&runs(1e6, 6), &runs(1e6, 6), false)[0]
            .result
            .clone()
            .unwrap();
        c.ci = Some((-0.9, 2.4));
        c.verdict = Verdict::Inconclusive {
            blocks_needed: Some(18_927),
        };
        assert_eq!(
            verdict(&m, &c, false),
            "INCONCLUSIVE (too noisy to resolve ±5% in 30 runs each: steady the runs first, with longer runs or a quieter machine)"
        );
        c.verdict = Verdict::Inconclusive {
            blocks_needed: Some(12),
        };
        assert_eq!(
            verdict(&m, &c, false),
            "INCONCLUSIVE (~12 runs each would resolve ±5%)"
        );
    }

    #[test]
    fn tiny_changes_keep_their_sign() {
        let m = Metric::latency("p50", 0.02);
        assert_eq!(change(&m, -0.0001), "-0.010%");
        assert_eq!(change(&m, 0.0), "+0.0%");
        let errors = Metric::new("failed", Scale::Points, Direction::HigherIsWorse, 0.001);
        assert_eq!(change(&errors, 0.00001), "+0.0010 pt");
        assert_eq!(value(&errors, f64::NAN), "n/a");
    }
}
