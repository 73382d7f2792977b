//! A capacity sweep's report (`pelt sweep`), from pelt-analyze's
//! [`SweepReport`]: the answer in one line, the bracket and why its upper
//! end failed, every step, and latency against throughput with the SLO
//! and the knee marked.

use crate::html::{document, Block, LoadSeries, Marks};
use crate::Table;
use pelt_analyze::sweep::{thousands, Mode, Step, SweepReport};
use pelt_core::human_ns;
use std::fmt::Write;

/// The report in every format it is saved in.
#[derive(Debug, Clone)]
pub struct SweepReports {
    /// Aligned text, for the terminal.
    pub text: String,
    /// For issues and pull requests.
    pub markdown: String,
    /// One JSON document.
    pub json: String,
    /// A self-contained page with the chart.
    pub html: String,
}

/// Renders `r` in every format.
pub fn render(r: &SweepReport) -> SweepReports {
    SweepReports {
        text: text(r),
        markdown: markdown(r),
        json: json(r),
        html: html(r),
    }
}

/// The schema a sweep's JSON follows (schema/sweep.schema.json).
pub const SWEEP_SCHEMA_ID: &str = "pelt.sweep/2";

/// The JSON document: the report's fields under its schema's name.
pub fn json(r: &SweepReport) -> String {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    if let serde_json::Value::Object(m) = &mut v {
        m.insert("schema".into(), SWEEP_SCHEMA_ID.into());
    }
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}

fn steps_table(r: &SweepReport) -> Table {
    let level = match r.mode {
        Mode::Rate => "offered",
        Mode::Connections => "connections",
    };
    Table {
        head: [
            "step",
            level,
            "sent/s",
            "ok/s",
            "p50",
            "p99",
            "failed",
            "send lag p99",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
        rows: r.steps.iter().map(step_row).collect(),
    }
}

fn step_row(s: &Step) -> Vec<String> {
    let verdict = if s.passed {
        "held".to_string()
    } else {
        let why: Vec<String> = s.failures.iter().map(short).collect();
        format!("FAILED: {}", why.join(", "))
    };
    vec![
        format!("{}{}", s.index, if s.confirm { " (confirm)" } else { "" }),
        match (s.offered, s.connections) {
            (Some(rate), _) => thousands(rate),
            (None, Some(c)) => c.to_string(),
            _ => "-".into(),
        },
        thousands(s.sent_rate),
        thousands(s.throughput),
        human_ns(s.p50_ns).to_string(),
        human_ns(s.p99_ns).to_string(),
        format!("{:.2}%", s.failed * 100.0),
        human_ns(s.send_lag_p99_ns).to_string(),
        verdict,
    ]
}

/// A failure in a table cell's few words.
fn short(f: &pelt_analyze::sweep::Failure) -> String {
    use pelt_analyze::sweep::Failure;
    match f {
        Failure::Slo { term, actual } => format!("{term} (was {actual})"),
        Failure::Shortfall { achieved, offered } => {
            format!("sent {:.1}%", achieved / offered * 100.0)
        }
        Failure::Climbing { .. } => "latency climbing".into(),
        Failure::SendLag { .. } => "client sent late".into(),
        Failure::Client { .. } => "client limited".into(),
        Failure::NoResponse => "no response".into(),
        Failure::Interrupted => "interrupted".into(),
    }
}

fn details(r: &SweepReport) -> Vec<String> {
    let mut lines = Vec::new();
    if !r.slo.is_empty() {
        lines.push(format!("SLO: {}", r.slo.join(", ")));
    }
    if let Some(fail) = r.steps.iter().find(|s| {
        !s.passed
            && match r.mode {
                Mode::Rate => s.offered == r.first_fail,
                Mode::Connections => s.connections.map(f64::from) == r.first_fail,
            }
    }) {
        for f in &fail.failures {
            lines.push(format!("{} failed: {f}", fail.level()));
        }
    }
    if let Some(k) = r.knee.and_then(|k| r.steps.get(k)) {
        lines.push(match r.mode {
            Mode::Rate => format!(
                "knee: {} (the most throughput with p99 within twice the lightest step's: {})",
                k.level(),
                human_ns(k.p99_ns)
            ),
            Mode::Connections => format!(
                "knee: {} (throughput within 5 % of the best: {} req/s)",
                k.level(),
                thousands(k.throughput)
            ),
        });
    }
    if let Some(idle) = r.idle_ns {
        lines.push(format!(
            "idle latency {} (cool-downs wait for it); {} steps in {:.0} s",
            human_ns(idle),
            r.steps.len(),
            r.elapsed_s
        ));
    }
    lines
}

/// The terminal report.
pub fn text(r: &SweepReport) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Sweep of {}", r.target);
    let _ = writeln!(o, "  {}", r.headline());
    for line in details(r) {
        let _ = writeln!(o, "  {line}");
    }
    let _ = writeln!(o, "\nSteps:");
    o.push_str(&steps_table(r).text());
    o
}

/// The markdown report.
pub fn markdown(r: &SweepReport) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "### Sweep of `{}`\n", r.target);
    let _ = writeln!(o, "**{}**\n", r.headline());
    for line in details(r) {
        let _ = writeln!(o, "- {line}");
    }
    let _ = writeln!(o);
    o.push_str(&steps_table(r).markdown());
    o
}

/// The HTML page: the answer, the chart, the steps.
pub fn html(r: &SweepReport) -> String {
    let mut passed: Vec<&Step> = r.steps.iter().filter(|s| s.throughput > 0.0).collect();
    passed.sort_by(|a, b| a.throughput.total_cmp(&b.throughput));
    let series = vec![LoadSeries {
        label: "steps".into(),
        points: passed
            .iter()
            .map(|s| (s.throughput, s.p50_ns, s.p99_ns))
            .collect(),
    }];
    let slo_ns = r
        .slo
        .iter()
        .filter_map(|t| t.parse::<pelt_core::Assertion>().ok())
        .filter(|a| {
            matches!(a.measure, pelt_core::check::Measure::Percentile(_))
                && a.target.is_none()
                && matches!(
                    a.latency,
                    pelt_core::check::Latency::Headline | pelt_core::check::Latency::Response
                )
        })
        .map(|a| a.threshold as u64)
        .min();
    let marks = Marks {
        slo_ns,
        knee: r
            .knee
            .and_then(|k| r.steps.get(k))
            .map(|s| (format!("knee: {}", s.level()), s.throughput)),
    };
    let mut blocks = vec![
        Block::Paragraph(r.headline()),
        Block::Heading("Latency against throughput".into()),
        Block::Capacity(
            "throughput (successful responses per second)".into(),
            series,
            marks,
        ),
    ];
    for line in details(r) {
        blocks.push(Block::Paragraph(line));
    }
    blocks.push(Block::Heading("Steps".into()));
    blocks.push(Block::Table(steps_table(r)));
    document(&format!("Sweep of {}", r.target), &blocks)
}

/// An experiment whose load is a sweep (`[load] sweep = "SLO"`): each
/// variant's capacity in each block, and each variant's against the
/// first's, paired by block.
#[derive(Debug)]
pub struct CapacityExperiment<'a> {
    /// The experiment's name.
    pub name: &'a str,
    /// The SLO every sweep searched under.
    pub slo: &'a str,
    /// Variant names, the baseline first.
    pub variants: &'a [String],
    /// `[variant][block]`: the capacity found, `None` when that sweep
    /// found none (or has not run).
    pub capacities: &'a [Vec<Option<f64>>],
    /// `("B vs A", comparison of capacity)` for each variant after the
    /// first.
    pub rows: &'a [(String, pelt_analyze::runs::Row)],
}

impl CapacityExperiment<'_> {
    fn table(&self) -> Table {
        let blocks = self.capacities.iter().map(Vec::len).max().unwrap_or(0);
        let mut head: Vec<String> = ["variant", "median", "min", "max"]
            .map(String::from)
            .to_vec();
        head.extend((1..=blocks).map(|b| format!("b{b}")));
        let rows = self
            .variants
            .iter()
            .zip(self.capacities)
            .map(|(name, caps)| {
                let mut found: Vec<f64> = caps.iter().flatten().copied().collect();
                found.sort_by(f64::total_cmp);
                let pick = |i: Option<usize>| {
                    i.and_then(|i| found.get(i))
                        .map_or("-".to_string(), |&c| thousands(c))
                };
                let mut row = vec![
                    name.clone(),
                    pick((!found.is_empty()).then_some(found.len() / 2)),
                    pick((!found.is_empty()).then_some(0)),
                    pick(found.len().checked_sub(1)),
                ];
                row.extend(caps.iter().map(|c| c.map_or("none".to_string(), thousands)));
                row
            })
            .collect();
        Table { head, rows }
    }

    fn title(&self) -> String {
        format!(
            "pelt experiment '{}': capacity (req/s) under '{}', {} variant(s) x {} block(s)",
            self.name,
            self.slo,
            self.variants.len(),
            self.capacities.first().map_or(0, Vec::len)
        )
    }

    /// Every format.
    pub fn render(&self) -> SweepReports {
        let mut text = format!("{}\n\n{}", self.title(), self.table().text());
        let mut markdown = format!("### {}\n\n{}", self.title(), self.table().markdown());
        let mut blocks = vec![
            Block::Heading("Capacity per block".into()),
            Block::Table(self.table()),
        ];
        for (label, row) in self.rows {
            let rows = std::slice::from_ref(row);
            let _ = write!(text, "\n{label}:\n{}", crate::compare::table(rows));
            let _ = write!(
                markdown,
                "\n**{label}**\n\n{}",
                crate::compare::markdown(rows)
            );
            blocks.push(Block::Heading(label.clone()));
            blocks.push(Block::Table(crate::compare::verdict_table(rows)));
        }
        let json = serde_json::json!({
            "name": self.name,
            "slo": self.slo,
            "variants": self.variants,
            "capacities": self.capacities,
            "comparisons": self.rows.iter().map(|(label, row)| serde_json::json!({
                "label": label,
                "rows": crate::compare::json_rows(std::slice::from_ref(row)),
            })).collect::<Vec<_>>(),
        });
        SweepReports {
            html: document(&self.title(), &blocks),
            text,
            markdown,
            json: serde_json::to_string_pretty(&json).unwrap_or_default() + "\n",
        }
    }
}
