//! The experiment's report: per load level, each variant's medians and its
//! verdicts against the baseline; latency against load per variant. Text
//! on stdout, and text, markdown, JSON and HTML in the folder.

use super::plan::{LevelKind, Plan};
use super::{Outcome, RunRecord};
use crate::compare::{self, Row};
use crate::UserError;
use pelt_analyze::{Metric, Verdict};
use pelt_report::html::{Block, LoadSeries, Table};
use std::fmt::Write;

/// One variant against the baseline at one level.
#[derive(Debug)]
pub struct LevelComparison {
    pub level: usize,
    pub variant: usize,
    pub blocks: usize,
    pub rows: Vec<Row>,
}

#[derive(Debug)]
pub struct Reports {
    pub text: String,
    pub comparisons: Vec<LevelComparison>,
}

/// Complete runs of `variant` at `level`, by block.
fn runs_of(outcome: &Outcome, variant: usize, level: usize) -> Vec<&RunRecord> {
    outcome
        .runs
        .iter()
        .filter(|r| r.variant == variant && r.level == level && !r.interrupted)
        .collect()
}

/// Pairs each other variant's runs with the baseline's of the same block.
fn comparisons(plan: &Plan, outcome: &Outcome) -> Vec<LevelComparison> {
    let mut out = Vec::new();
    for level in 0..plan.levels.len() {
        let base = runs_of(outcome, 0, level);
        for variant in 1..plan.variants.len() {
            let other = runs_of(outcome, variant, level);
            let (a, b): (Vec<Vec<f64>>, Vec<Vec<f64>>) = base
                .iter()
                .filter_map(|ra| {
                    other
                        .iter()
                        .find(|rb| rb.block == ra.block)
                        .map(|rb| (ra.values.clone(), rb.values.clone()))
                })
                .unzip();
            if a.is_empty() {
                continue;
            }
            out.push(LevelComparison {
                level,
                variant,
                blocks: a.len(),
                rows: compare::compare_values(&a, &b, true),
            });
        }
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| !x.is_nan());
    if v.is_empty() {
        return f64::NAN;
    }
    pelt_analyze::rank::median(&v)
}

/// Each metric's median over a variant's complete runs at a level.
fn medians(outcome: &Outcome, variant: usize, level: usize) -> Option<Vec<f64>> {
    let runs = runs_of(outcome, variant, level);
    if runs.is_empty() {
        return None;
    }
    let n = runs[0].values.len();
    Some(
        (0..n)
            .map(|i| median(runs.iter().map(|r| r.values[i]).collect()))
            .collect(),
    )
}

fn median_table(plan: &Plan, outcome: &Outcome, level: usize) -> Table {
    let metrics = compare::metric_list();
    let mut head = vec!["variant".to_string(), "runs".to_string()];
    head.extend(metrics.iter().map(|m| m.name.clone()));
    let rows = plan
        .variants
        .iter()
        .enumerate()
        .map(|(v, variant)| {
            let mut row = vec![
                variant.name.clone(),
                runs_of(outcome, v, level).len().to_string(),
            ];
            match medians(outcome, v, level) {
                Some(m) => row.extend(
                    metrics
                        .iter()
                        .zip(m)
                        .map(|(metric, value)| compare::value(metric, value)),
                ),
                None => row.extend(metrics.iter().map(|_| "-".to_string())),
            }
            row
        })
        .collect();
    Table { head, rows }
}

fn text_table(t: &Table) -> String {
    let cols = t.head.len();
    let mut widths = vec![0usize; cols];
    for row in std::iter::once(&t.head).chain(&t.rows) {
        for (i, cell) in row.iter().enumerate().take(cols) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let mut o = String::new();
    for row in std::iter::once(&t.head).chain(&t.rows) {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 0 || i + 1 == cols && cols > 6 {
                    format!("{c:<w$}", w = widths[i.min(cols - 1)])
                } else {
                    format!("{c:>w$}", w = widths[i.min(cols - 1)])
                }
            })
            .collect();
        let _ = writeln!(o, "  {}", line.join("  ").trim_end());
    }
    o
}

fn markdown_table(t: &Table) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut o = format!(
        "| {} |\n|{}\n",
        t.head
            .iter()
            .map(|h| esc(h))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(t.head.len())
    );
    for row in &t.rows {
        let _ = writeln!(
            o,
            "| {} |",
            row.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
        );
    }
    o
}

fn load_series(plan: &Plan, outcome: &Outcome) -> Vec<LoadSeries> {
    let med = |v: Vec<u64>| median(v.into_iter().map(|x| x as f64).collect());
    plan.variants
        .iter()
        .enumerate()
        .map(|(v, variant)| LoadSeries {
            label: variant.name.clone(),
            points: plan
                .levels
                .iter()
                .enumerate()
                .filter_map(|(l, level)| {
                    let runs = runs_of(outcome, v, l);
                    if runs.is_empty() {
                        return None;
                    }
                    let p50 = med(runs.iter().map(|r| r.p50_ns).collect());
                    let p99 = med(runs.iter().map(|r| r.p99_ns).collect());
                    Some((level.value, p50 as u64, p99 as u64))
                })
                .collect(),
        })
        .collect()
}

fn headline(plan: &Plan, outcome: &Outcome) -> String {
    let done = outcome.runs.len();
    let total = plan.total_runs();
    format!(
        "pelt experiment '{}': {} variant(s) x {} load level(s) x {} block(s) = {total} runs, {}",
        plan.name,
        plan.variants.len(),
        plan.levels.len(),
        plan.blocks,
        if done == total {
            "all done".to_string()
        } else {
            format!("{done} done")
        }
    )
}

fn verdict_summary(c: &LevelComparison, plan: &Plan) -> String {
    let p50 = c.rows.iter().find(|(m, _)| m.name == "p50");
    let word = match p50 {
        Some((_, Ok(cmp))) => match cmp.verdict {
            Verdict::Regression { material: true } => "p50 REGRESSION (material)",
            Verdict::Regression { material: false } => "p50 REGRESSION",
            Verdict::Improvement { material: true } => "p50 IMPROVEMENT (material)",
            Verdict::Improvement { material: false } => "p50 IMPROVEMENT",
            Verdict::Equivalent => "p50 EQUIVALENT",
            Verdict::Inconclusive { .. } => "p50 INCONCLUSIVE",
            Verdict::NoVerdict => "no verdict",
        },
        _ => "no verdict",
    };
    format!(
        "{} vs {} ({} blocks, paired): {word}",
        plan.variants[c.variant].name, plan.variants[0].name, c.blocks
    )
}

/// A saturated client looks like a slow server: says which runs had pelt's
/// own thread busy nearly all the time, since their verdicts may describe
/// pelt rather than the variants.
fn client_bound(plan: &Plan, outcome: &Outcome) -> Option<String> {
    let busy: Vec<&RunRecord> = outcome.runs.iter().filter(|r| r.client_busy).collect();
    if busy.is_empty() {
        return None;
    }
    let mut which: Vec<String> = busy
        .iter()
        .map(|r| {
            format!(
                "{} at {}",
                plan.variants[r.variant].name,
                plan.levels[r.level].label()
            )
        })
        .collect();
    which.sort();
    which.dedup();
    Some(format!(
        "Client-bound: in {} of {} runs ({}) pelt's busiest worker thread wanted a CPU 90 % of the run \
         or more, so the client may have set the pace and the verdicts there may describe pelt, not the \
         variants. Give pelt more threads (`threads` under [load]) if cores are free, or run the servers on other cores.",
        busy.len(),
        outcome.runs.len(),
        which.join(", ")
    ))
}

pub fn write_all(plan: &Plan, outcome: &Outcome) -> Result<Reports, UserError> {
    let comparisons = comparisons(plan, outcome);
    let x_desc = match plan.levels[0].kind {
        LevelKind::Rate => "offered load (requests per second)",
        LevelKind::Connections => "connections",
    };
    let series = load_series(plan, outcome);

    let mut text = String::new();
    let mut md = String::new();
    let mut blocks: Vec<Block<'_>> = Vec::new();
    let head = headline(plan, outcome);
    let _ = writeln!(text, "{head}\nfolder: {}", outcome.folder.display());
    let _ = writeln!(md, "# {}\n\n{head}\n", plan.name);
    blocks.push(Block::Paragraph(head.clone()));
    for p in &outcome.problems {
        let _ = writeln!(text, "problem: {p}");
        let _ = writeln!(md, "- **problem:** {p}");
        blocks.push(Block::Paragraph(format!("Problem: {p}")));
    }
    if let Some(note) = client_bound(plan, outcome) {
        let _ = writeln!(text, "{note}");
        let _ = writeln!(md, "\n**{note}**");
        blocks.push(Block::Paragraph(note));
    }
    if outcome.interrupted {
        let note = "Interrupted: the interrupted run and any block left incomplete are left out of the verdicts.";
        let _ = writeln!(text, "{note}");
        let _ = writeln!(md, "\n{note}");
        blocks.push(Block::Paragraph(note.into()));
    }
    for (l, level) in plan.levels.iter().enumerate() {
        let title = format!("At {}", level.label());
        let medians = median_table(plan, outcome, l);
        let _ = writeln!(
            text,
            "\n{title}: medians over runs\n{}",
            text_table(&medians)
        );
        let _ = writeln!(
            md,
            "\n## {title}\n\nMedians over runs:\n\n{}",
            markdown_table(&medians)
        );
        blocks.push(Block::Heading(title));
        blocks.push(Block::Paragraph("Medians over runs.".into()));
        blocks.push(Block::Table(medians));
        for c in comparisons.iter().filter(|c| c.level == l) {
            let summary = verdict_summary(c, plan);
            let _ = writeln!(text, "{summary}\n{}", compare::table(&c.rows));
            let _ = writeln!(md, "\n### {summary}\n\n{}", compare::markdown(&c.rows));
            blocks.push(Block::Paragraph(summary));
            blocks.push(Block::Table(compare::verdict_table(&c.rows)));
        }
        let pooled: Vec<pelt_report::html::Labeled<'_>> = plan
            .variants
            .iter()
            .zip(&outcome.pooled)
            .filter_map(|(v, p)| {
                p[l].as_ref().map(|s| pelt_report::html::Labeled {
                    label: v.name.clone(),
                    summary: s,
                })
            })
            .collect();
        if !pooled.is_empty() {
            blocks.push(Block::Paragraph(
                "Every run of each variant at this level, pooled (a picture of the distributions; the verdicts above compare runs):".into(),
            ));
            blocks.push(Block::Spectrum(pooled));
        }
    }
    let load_table = Table {
        head: std::iter::once("variant".to_string())
            .chain(plan.levels.iter().map(|l| l.label()))
            .collect(),
        rows: series
            .iter()
            .map(|s| {
                std::iter::once(s.label.clone())
                    .chain(plan.levels.iter().map(|l| {
                        s.points
                            .iter()
                            .find(|p| p.0 == l.value)
                            .map_or("-".into(), |p| {
                                format!(
                                    "{} / {}",
                                    pelt_core::human_ns(p.1),
                                    pelt_core::human_ns(p.2)
                                )
                            })
                    }))
                    .collect()
            })
            .collect(),
    };
    let _ = writeln!(
        text,
        "\nLatency against load (median over runs of p50 / p99):\n{}",
        text_table(&load_table)
    );
    let _ = writeln!(
        md,
        "\n## Latency against load\n\nMedian over runs of p50 / p99:\n\n{}",
        markdown_table(&load_table)
    );
    blocks.push(Block::Heading("Latency against load".into()));
    blocks.push(Block::LatencyVsLoad(x_desc.into(), series.clone()));
    blocks.push(Block::Table(load_table));
    let runs_note = format!(
        "Runs are in {}/runs, one .pelt file each: pelt report FILE shows one, pelt compare compares any of them.",
        outcome.folder.display()
    );
    let _ = writeln!(text, "{runs_note}");
    blocks.push(Block::Heading("Runs".into()));
    blocks.push(Block::Paragraph(runs_note));

    let html = pelt_report::html::document(&format!("pelt experiment: {}", plan.name), &blocks);
    let json = json(plan, outcome, &comparisons);
    for (name, body) in [
        ("report.txt", &text),
        ("report.md", &md),
        ("report.html", &html),
        ("report.json", &json),
    ] {
        let path = outcome.folder.join(name);
        std::fs::write(&path, body).map_err(|e| {
            UserError(format!(
                "cannot write {}: {e}; check the disk",
                path.display()
            ))
        })?;
    }
    Ok(Reports { text, comparisons })
}

fn json(plan: &Plan, outcome: &Outcome, comparisons: &[LevelComparison]) -> String {
    let metrics: Vec<Metric> = compare::metric_list();
    let runs: Vec<serde_json::Value> = outcome
        .runs
        .iter()
        .map(|r| {
            serde_json::json!({
                "block": r.block + 1,
                "variant": plan.variants[r.variant].name,
                "level": plan.levels[r.level].value,
                // Relative to the folder, so that it can be moved whole.
                "file": r.file.strip_prefix(&outcome.folder).unwrap_or(&r.file).display().to_string(),
                "interrupted": r.interrupted,
                "client_busy": r.client_busy,
                "values": metrics.iter().zip(&r.values).map(|(m, v)| (m.name.clone(), serde_json::json!(v))).collect::<serde_json::Map<_, _>>(),
            })
        })
        .collect();
    let comparisons: Vec<serde_json::Value> = comparisons
        .iter()
        .map(|c| {
            serde_json::json!({
                "level": plan.levels[c.level].value,
                "baseline": plan.variants[0].name,
                "variant": plan.variants[c.variant].name,
                "blocks": c.blocks,
                "metrics": c.rows.iter().map(|(m, r)| match r {
                    Ok(cmp) => serde_json::json!({ "metric": m, "comparison": cmp }),
                    Err(e) => serde_json::json!({ "metric": m, "error": e }),
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    let doc = serde_json::json!({
        "schema": "pelt.experiment/1",
        "name": plan.name,
        "blocks": plan.blocks,
        "level_kind": match plan.levels[0].kind { LevelKind::Rate => "rate", LevelKind::Connections => "connections" },
        "levels": plan.levels.iter().map(|l| l.value).collect::<Vec<_>>(),
        "variants": plan.variants.iter().map(|v| v.name.clone()).collect::<Vec<_>>(),
        "interrupted": outcome.interrupted,
        "problems": outcome.problems,
        "runs": runs,
        "comparisons": comparisons,
    });
    let mut s = serde_json::to_string_pretty(&doc).expect("a JSON value always serialises");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn record(variant: usize, level: usize, client_busy: bool) -> RunRecord {
        RunRecord {
            block: 0,
            variant,
            level,
            file: PathBuf::from("runs/x.pelt"),
            values: Vec::new(),
            p50_ns: 0,
            p99_ns: 0,
            interrupted: false,
            client_busy,
        }
    }

    #[test]
    fn client_bound_runs_are_named_once_per_variant_and_level() {
        let plan = Plan::parse(
            r#"
            name = "n"
            [load]
            url = "http://127.0.0.1:9/"
            rate = [100, 200]
            duration = "1s"
            [[variant]]
            name = "a"
            [[variant]]
            name = "b"
            "#,
            Path::new("."),
        )
        .unwrap();
        let mut outcome = Outcome {
            runs: vec![record(0, 0, false), record(1, 1, false)],
            pooled: Vec::new(),
            problems: Vec::new(),
            interrupted: false,
            folder: PathBuf::from("."),
        };
        assert_eq!(client_bound(&plan, &outcome), None);
        outcome
            .runs
            .extend([record(1, 1, true), record(1, 1, true)]);
        let note = client_bound(&plan, &outcome).unwrap();
        assert!(
            note.starts_with("Client-bound: in 2 of 4 runs (b at "),
            "{note}"
        );
        assert_eq!(note.matches(" at ").count(), 1, "{note}");
    }
}
