//! The report of an experiment (`pelt experiment`): per load level, each
//! variant's medians and its verdicts against the baseline; latency
//! against load per variant. As text, markdown, JSON and a page with
//! charts. The statistics come from [`pelt_analyze::experiment`].

use crate::html::{Block, Labeled, LoadSeries};
use crate::table::Table;
use pelt_analyze::experiment::{Level, LevelComparison, LevelKind, Outcome, RunRecord};
use pelt_analyze::runs;
use pelt_analyze::Metric;
use std::fmt::Write;

/// An experiment to report: its design (from the plan) and what it produced.
#[derive(Debug, Clone, Copy)]
pub struct Experiment<'a> {
    /// The plan's name.
    pub name: &'a str,
    /// Blocks planned.
    pub blocks: u32,
    /// The load levels, in order; all of one kind.
    pub levels: &'a [Level],
    /// The variants' names; the first is the baseline.
    pub variants: &'a [String],
    /// The runs made, pooled summaries and problems.
    pub outcome: &'a Outcome,
    /// The latency the verdicts' percentiles compare (`--metric`).
    pub latency: pelt_analyze::latency::Latency,
}

/// The report in each format, and the comparisons it shows.
#[derive(Debug)]
pub struct Reports {
    /// For the terminal (and report.txt).
    pub text: String,
    /// report.md.
    pub markdown: String,
    /// report.html: a self-contained page with charts.
    pub html: String,
    /// report.json (`pelt.experiment/2`).
    pub json: String,
    /// Each variant against the baseline at each level.
    pub comparisons: Vec<LevelComparison>,
}

impl Experiment<'_> {
    fn total_runs(&self) -> usize {
        self.blocks as usize * self.variants.len() * self.levels.len()
    }

    fn median_table(&self, level: usize) -> Table {
        // A sole metric judged (`--metric throughput`): the others were
        // not measured (NaN), so their columns are left out.
        let shown = |m: &Metric| self.latency.sole().is_none_or(|name| m.name == name);
        let metrics: Vec<Metric> = runs::metrics();
        let mut head = vec!["variant".to_string(), "runs".to_string()];
        head.extend(metrics.iter().filter(|m| shown(m)).map(|m| m.name.clone()));
        let rows = self
            .variants
            .iter()
            .enumerate()
            .map(|(v, name)| {
                let mut row = vec![
                    name.clone(),
                    self.outcome.runs_of(v, level).len().to_string(),
                ];
                match self.outcome.medians(v, level) {
                    Some(m) => row.extend(
                        metrics
                            .iter()
                            .zip(m)
                            .filter(|(metric, _)| shown(metric))
                            .map(|(metric, value)| crate::compare::value(metric, value)),
                    ),
                    None => {
                        row.extend(metrics.iter().filter(|m| shown(m)).map(|_| "-".to_string()))
                    }
                }
                row
            })
            .collect();
        Table { head, rows }
    }

    fn load_series(&self) -> Vec<LoadSeries> {
        self.variants
            .iter()
            .enumerate()
            .map(|(v, name)| LoadSeries {
                label: name.clone(),
                points: self
                    .levels
                    .iter()
                    .enumerate()
                    .filter_map(|(l, level)| {
                        let (p50, p99) = self.outcome.latency_medians(v, l)?;
                        Some((level.value, p50, p99))
                    })
                    .collect(),
            })
            .collect()
    }

    fn headline(&self) -> String {
        let done = self.outcome.runs.len();
        let total = self.total_runs();
        format!(
            "pelt experiment '{}': {} variant(s) x {} load level(s) x {} block(s) = {total} runs, {}",
            self.name,
            self.variants.len(),
            self.levels.len(),
            self.blocks,
            if done == total {
                "all done".to_string()
            } else {
                format!("{done} done")
            }
        )
    }

    /// A comparison's one line: who against whom, and its most severe
    /// verdict, errors first (see [`crate::compare::headline`]).
    fn verdict_summary(&self, c: &LevelComparison) -> String {
        format!(
            "{} vs {} ({} blocks, paired): {}",
            self.variants[c.variant],
            self.variants[0],
            c.blocks,
            crate::compare::headline(&c.rows)
        )
    }

    /// Variants whose failed share differs materially from the baseline's,
    /// one line each: said before anything else in every format, since
    /// their latencies describe other work (error pages, refusals).
    fn error_flags(&self, comparisons: &[LevelComparison]) -> Vec<String> {
        comparisons
            .iter()
            .filter_map(|c| {
                let flag = crate::compare::errors_flag(&c.rows)?;
                Some(format!(
                    "{} vs {} at {}: {flag}",
                    self.variants[c.variant],
                    self.variants[0],
                    self.levels[c.level].label()
                ))
            })
            .collect()
    }

    /// The runs' own warnings, by kind, naming the runs (variant, level,
    /// block) and the verdicts each weakens.
    fn warning_groups(&self) -> Vec<pelt_analyze::headline::WarningGroup> {
        pelt_analyze::headline::group_warnings(self.outcome.runs.iter().map(|r| {
            (
                format!(
                    "{} at {} block {}",
                    self.variants[r.variant],
                    self.levels[r.level].label(),
                    r.block + 1
                ),
                r.warnings.as_slice(),
            )
        }))
        .into_iter()
        .filter(|g| self.latency.weakened_by(g))
        .collect()
    }

    /// A saturated client looks like a slow server: says which runs had
    /// pelt's own thread busy nearly all the time, since their verdicts
    /// may describe pelt rather than the variants.
    fn client_bound(&self) -> Option<String> {
        let busy: Vec<&RunRecord> = self.outcome.runs.iter().filter(|r| r.client_busy).collect();
        if busy.is_empty() {
            return None;
        }
        let mut which: Vec<String> = busy
            .iter()
            .map(|r| {
                format!(
                    "{} at {}",
                    self.variants[r.variant],
                    self.levels[r.level].label()
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
            self.outcome.runs.len(),
            which.join(", ")
        ))
    }

    fn load_table(&self, series: &[LoadSeries]) -> Table {
        Table {
            head: std::iter::once("variant".to_string())
                .chain(self.levels.iter().map(|l| l.label()))
                .collect(),
            rows: series
                .iter()
                .map(|s| {
                    std::iter::once(s.label.clone())
                        .chain(self.levels.iter().map(|l| {
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
        }
    }

    /// The report in every format.
    pub fn render(&self) -> Reports {
        let outcome = self.outcome;
        let mut comparisons = outcome.comparisons(self.variants.len(), self.levels.len());
        // `--metric throughput|errors`: that metric's verdicts alone.
        // ... judged as one family each (pelt_analyze::family).
        let mut family: Option<pelt_analyze::family::Family> = None;
        for c in &mut comparisons {
            c.rows = self.latency.judge(std::mem::take(&mut c.rows));
            let f = pelt_analyze::family::control(&mut c.rows);
            family = match (family, f) {
                (Some(a), Some(b)) => Some(pelt_analyze::family::Family {
                    rows: a.rows.max(b.rows),
                    withheld: a.withheld + b.withheld,
                }),
                (a, b) => a.or(b),
            };
        }
        let x_desc = match self.levels[0].kind {
            LevelKind::Rate => "offered load (requests per second)",
            LevelKind::Connections => "connections",
        };
        let series = self.load_series();

        let mut text = String::new();
        let mut md = String::new();
        let mut blocks: Vec<Block<'_>> = Vec::new();
        let head = self.headline();
        let _ = writeln!(text, "{head}\nfolder: {}", outcome.folder.display());
        let _ = writeln!(md, "# {}\n\n{head}\n", self.name);
        blocks.push(Block::Paragraph(head.clone()));
        for flag in self.error_flags(&comparisons) {
            let _ = writeln!(text, "{flag}");
            let _ = writeln!(md, "**{flag}**\n");
            blocks.push(Block::Paragraph(flag));
        }
        for note in
            pelt_analyze::headline::warning_notes(&self.warning_groups(), outcome.runs.len())
        {
            let _ = writeln!(text, "{note}");
            let _ = writeln!(md, "- {note}");
            blocks.push(Block::Paragraph(note));
        }
        if let Some(f) = &family {
            let note = pelt_analyze::family::note(f);
            let _ = writeln!(text, "{note}");
            let _ = writeln!(md, "- {note}");
            blocks.push(Block::Paragraph(note));
        }
        if !self.latency.is_headline_of_rate_runs() {
            let note = self.latency.describe();
            let _ = writeln!(text, "{note}");
            let _ = writeln!(md, "- {note}");
            blocks.push(Block::Paragraph(note.into()));
        }
        for p in &outcome.problems {
            let _ = writeln!(text, "problem: {p}");
            let _ = writeln!(md, "- **problem:** {p}");
            blocks.push(Block::Paragraph(format!("Problem: {p}")));
        }
        if let Some(note) = self.client_bound() {
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
        for (l, level) in self.levels.iter().enumerate() {
            let title = format!("At {}", level.label());
            let medians = self.median_table(l);
            let _ = writeln!(text, "\n{title}: medians over runs\n{}", medians.text());
            let _ = writeln!(
                md,
                "\n## {title}\n\nMedians over runs:\n\n{}",
                medians.markdown()
            );
            blocks.push(Block::Heading(title));
            blocks.push(Block::Paragraph("Medians over runs.".into()));
            blocks.push(Block::Table(medians));
            for c in comparisons.iter().filter(|c| c.level == l) {
                let summary = self.verdict_summary(c);
                let _ = writeln!(text, "{summary}\n{}", crate::compare::table(&c.rows));
                let _ = writeln!(
                    md,
                    "\n### {summary}\n\n{}",
                    crate::compare::markdown(&c.rows)
                );
                blocks.push(Block::Paragraph(summary));
                blocks.push(Block::Table(crate::compare::verdict_table(&c.rows)));
            }
            let pooled: Vec<Labeled<'_>> = self
                .variants
                .iter()
                .zip(&outcome.pooled)
                .filter_map(|(name, p)| {
                    p[l].as_ref().map(|s| Labeled {
                        label: name.clone(),
                        summary: s,
                    })
                })
                .collect();
            if !pooled.is_empty() {
                blocks.push(Block::Paragraph(
                    "Every run of each variant at this level, pooled (a picture of the distributions; the verdicts above compare runs):".into(),
                ));
                blocks.push(Block::Spectrum(pooled, self.latency));
            }
        }
        let load_table = self.load_table(&series);
        // The latency the verdicts judge (`--metric`), never another.
        let drawn = self.latency.drawn();
        let _ = writeln!(
            text,
            "\nLatency against load (median over runs of p50 / p99 of {drawn}):\n{}",
            load_table.text()
        );
        let _ = writeln!(
            md,
            "\n## Latency against load\n\nMedian over runs of p50 / p99 of {drawn}:\n\n{}",
            load_table.markdown()
        );
        blocks.push(Block::Heading("Latency against load".into()));
        blocks.push(Block::Paragraph(format!(
            "Median over runs of p50 (thin) and p99 (thick) of {drawn}."
        )));
        blocks.push(Block::LatencyVsLoad(x_desc.into(), series.clone()));
        blocks.push(Block::Table(load_table));
        let runs_note = format!(
            "Runs are in {}/runs, one .pelt file each: pelt report FILE shows one, pelt compare compares any of them.",
            outcome.folder.display()
        );
        let _ = writeln!(text, "{runs_note}");
        blocks.push(Block::Heading("Runs".into()));
        blocks.push(Block::Paragraph(runs_note));

        let html = crate::html::document(&format!("pelt experiment: {}", self.name), &blocks);
        let json = self.json(&comparisons);
        Reports {
            text,
            markdown: md,
            html,
            json,
            comparisons,
        }
    }

    fn json(&self, comparisons: &[LevelComparison]) -> String {
        let outcome = self.outcome;
        let error_flags = self.error_flags(comparisons);
        let metrics: Vec<Metric> = runs::metrics();
        let runs: Vec<serde_json::Value> = outcome
            .runs
            .iter()
            .map(|r| {
                serde_json::json!({
                    "block": r.block + 1,
                    "variant": self.variants[r.variant],
                    "level": self.levels[r.level].value,
                    // Relative to the folder, so that it can be moved whole.
                    "file": r.file.strip_prefix(&outcome.folder).unwrap_or(&r.file).display().to_string(),
                    "interrupted": r.interrupted,
                    "client_busy": r.client_busy,
                    "warnings": r.warnings,
                    "values": metrics.iter().zip(&r.values).map(|(m, v)| (m.name.clone(), serde_json::json!(v))).collect::<serde_json::Map<_, _>>(),
                })
            })
            .collect();
        let comparisons: Vec<serde_json::Value> = comparisons
            .iter()
            .map(|c| {
                serde_json::json!({
                    "level": self.levels[c.level].value,
                    "baseline": self.variants[0],
                    "variant": self.variants[c.variant],
                    "blocks": c.blocks,
                    "headline": crate::compare::headline(&c.rows),
                    "headline_metric": pelt_analyze::headline::most_severe(&c.rows).map(|r| r.metric.name.clone()),
                    "failed_differs": pelt_analyze::headline::failed_differs(&c.rows).is_some(),
                    "metrics": crate::compare::json_rows(&c.rows),
                })
            })
            .collect();
        let doc = serde_json::json!({
            "schema": "pelt.experiment/2",
            "name": self.name,
            "blocks": self.blocks,
            "level_kind": match self.levels[0].kind { LevelKind::Rate => "rate", LevelKind::Connections => "connections" },
            "levels": self.levels.iter().map(|l| l.value).collect::<Vec<_>>(),
            "variants": self.variants,
            "interrupted": outcome.interrupted,
            "problems": outcome.problems,
            "failed_differs": error_flags,
            "latency": self.latency,
            "warnings": self.warning_groups(),
            "runs": runs,
            "comparisons": comparisons,
        });
        crate::json::pretty(&doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn record(variant: usize, level: usize, client_busy: bool) -> RunRecord {
        RunRecord {
            block: 0,
            variant,
            level,
            file: PathBuf::from("runs/x.pelt"),
            values: Vec::new(),
            steps: Vec::new(),
            step_values: Vec::new(),
            stream_values: None,
            p50_ns: 0,
            p99_ns: 0,
            interrupted: false,
            client_busy,
            warnings: Vec::new(),
        }
    }

    /// Issue 23 §2: 5 of 6 runs had send lag and the report said nothing.
    #[test]
    fn runs_warnings_reach_every_format_with_what_they_weaken() {
        let levels = [Level {
            kind: LevelKind::Rate,
            value: 300.0,
        }];
        let variants = ["base".to_string(), "cache".to_string()];
        let mut outcome = Outcome::new(2, 1, PathBuf::from("."));
        for block in 0..6 {
            for variant in 0..2 {
                let mut r = record(variant, 0, false);
                r.block = block;
                r.values = vec![1e6, 1e6, 1e6, 1e6, 0.0, f64::NAN, 1.0];
                if variant == 1 && block < 5 {
                    r.warnings.push(pelt_core::Warning::SendLag {
                        p99_ns: 41_000_000,
                        connections: 10,
                        connect_p99_ns: None,
                    });
                }
                outcome.runs.push(r);
            }
        }
        let reports = Experiment {
            name: "n",
            blocks: 6,
            levels: &levels,
            variants: &variants,
            outcome: &outcome,
            latency: Default::default(),
        }
        .render();
        let line = "Warning send_lag in 5 of 12 runs (cache at 300 req/s block 1, cache at 300 req/s block 2";
        assert!(reports.text.contains(line), "{}", reports.text);
        assert!(reports.text.contains("weakens p50, p90, p99, p99.9"));
        assert!(reports.markdown.contains(line));
        assert!(reports.html.contains("Warning send_lag in 5 of 12 runs"));
        let doc: serde_json::Value = serde_json::from_str(&reports.json).unwrap();
        assert_eq!(doc["warnings"][0]["kind"], "send_lag");
        assert_eq!(doc["warnings"][0]["runs"].as_array().unwrap().len(), 5);
        assert_eq!(doc["runs"][1]["warnings"][0]["kind"], "send_lag");
    }

    /// `--metric failed`: the failed share judged alone, its column alone
    /// in the medians, its verdict the only one (and it fails the gate).
    #[test]
    fn a_sole_metric_is_the_only_verdict_and_column() {
        let levels = [Level {
            kind: LevelKind::Rate,
            value: 300.0,
        }];
        let variants = ["base".to_string(), "broken".to_string()];
        let mut outcome = Outcome::new(2, 1, PathBuf::from("."));
        for block in 0..6 {
            for variant in 0..2 {
                let mut r = record(variant, 0, false);
                r.block = block;
                let nan = f64::NAN;
                r.values = vec![nan, nan, nan, nan, 0.3 * variant as f64, nan, nan];
                r.warnings.push(pelt_core::Warning::SendLag {
                    p99_ns: 41_000_000,
                    connections: 10,
                    connect_p99_ns: None,
                });
                outcome.runs.push(r);
            }
        }
        let reports = Experiment {
            name: "n",
            blocks: 6,
            levels: &levels,
            variants: &variants,
            outcome: &outcome,
            latency: pelt_analyze::latency::Latency::Failed,
        }
        .render();
        let rows = &reports.comparisons[0].rows;
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].metric.name, "failed");
        assert!(pelt_analyze::experiment::regressed(
            &reports.comparisons,
            true
        ));
        assert!(
            reports.text.contains("Judged: the failed share alone"),
            "{}",
            reports.text
        );
        assert!(
            reports.text.contains("variant  runs  failed\n"),
            "{}",
            reports.text
        );
        assert!(
            !reports.text.lines().any(|l| l.starts_with("p50")),
            "{}",
            reports.text
        );
        // Send lag weakens latencies, which are not judged here.
        assert!(
            !reports.text.contains("Warning send_lag"),
            "{}",
            reports.text
        );
        // No other verdicts for the failures to spoil: the flag says so.
        let flag = crate::compare::errors_flag(rows).expect("the errors differ");
        assert!(!flag.contains("other verdicts"), "{flag}");
        assert!(flag.contains("fix the failures first"), "{flag}");
    }

    #[test]
    fn client_bound_runs_are_named_once_per_variant_and_level() {
        let levels = [100.0, 200.0].map(|value| Level {
            kind: LevelKind::Rate,
            value,
        });
        let variants = ["a".to_string(), "b".to_string()];
        let mut outcome = Outcome::new(2, 2, PathBuf::from("."));
        outcome.runs = vec![record(0, 0, false), record(1, 1, false)];
        let note = |outcome: &Outcome| {
            Experiment {
                name: "n",
                blocks: 6,
                levels: &levels,
                variants: &variants,
                outcome,
                latency: Default::default(),
            }
            .client_bound()
        };
        assert_eq!(note(&outcome), None);
        outcome
            .runs
            .extend([record(1, 1, true), record(1, 1, true)]);
        let note = note(&outcome).unwrap();
        assert!(
            note.starts_with("Client-bound: in 2 of 4 runs (b at "),
            "{note}"
        );
        assert_eq!(note.matches(" at ").count(), 1, "{note}");
    }
}
