//! Pages of headings, paragraphs, tables and charts, for comparisons and
//! experiments: the same style and no-script policy as a run's report.

use super::style::{STYLE, VERDICT_STYLE};
use super::{charts, esc, Labeled, Table};
use pelt_analyze::latency::Latency;
use std::fmt::Write;

/// One variant's latency at each load level: (level, p50 ns, p99 ns).
#[derive(Debug, Clone)]
pub struct LoadSeries {
    /// The variant's name, in the legend.
    pub label: String,
    /// `(level, p50 ns, p99 ns)`, in the order of the levels.
    pub points: Vec<(f64, u64, u64)>,
}

/// Lines drawn over a latency-against-load chart.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    /// A latency objective: a horizontal line, nanoseconds.
    pub slo_ns: Option<u64>,
    /// A vertical line at this x, with its label (a sweep's knee).
    pub knee: Option<(String, f64)>,
}

/// How a [`Trend`]'s values read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrendUnit {
    /// Nanoseconds (drawn in a time unit that fits).
    Nanos,
    /// Per second.
    PerSecond,
    /// A share, 0 to 1 (drawn as a percentage).
    Ratio,
}

/// One metric over a series of runs, in order (`pelt history trend`):
/// `(label, value)` per run.
#[derive(Debug, Clone)]
pub struct Trend {
    /// The metric's name.
    pub metric: String,
    /// How its values read.
    pub unit: TrendUnit,
    /// `(run label, value)`, oldest first.
    pub points: Vec<(String, f64)>,
}

/// A piece of a [`document`] page. Each `Heading` starts a section.
#[derive(Debug, Clone)]
pub enum Block<'a> {
    /// A section's title: the blocks after it, up to the next heading,
    /// are its content.
    Heading(String),
    /// A paragraph of text (escaped).
    Paragraph(String),
    /// A table (cells escaped; verdicts coloured).
    Table(Table),
    /// Percentile spectra of these runs, overlaid, of this latency (the
    /// one a comparison judges; `Headline`: each run's headline).
    Spectrum(Vec<Labeled<'a>>, Latency),
    /// Per-second latency and throughput of these runs, overlaid.
    Timelines(Vec<Labeled<'a>>),
    /// Latency against load, one line per series; the string names the x axis.
    LatencyVsLoad(String, Vec<LoadSeries>),
    /// Latency against throughput with an SLO line and a knee marked
    /// (`pelt sweep`).
    Capacity(String, Vec<LoadSeries>, Marks),
    /// One metric over runs.
    Trend(Trend),
}

/// A self-contained page of headings, tables and charts, in the same
/// style and under the same no-script policy as a run's report.
pub fn document(title: &str, blocks: &[Block<'_>]) -> String {
    let mut o = String::with_capacity(128 * 1024);
    let _ = write_document(&mut o, title, blocks);
    o
}

fn write_document(o: &mut String, title: &str, blocks: &[Block<'_>]) -> std::fmt::Result {
    writeln!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
    )?;
    writeln!(o, "<title>{}</title>", esc(title))?;
    writeln!(
        o,
        "<style>{STYLE}{VERDICT_STYLE}</style>\n</head>\n<body>\n<main>"
    )?;
    writeln!(o, "<header><h1>{}</h1></header>", esc(title))?;
    let mut open = false;
    for block in blocks {
        match block {
            Block::Heading(h) => {
                if open {
                    writeln!(o, "</section>")?;
                }
                writeln!(o, "<section><h2>{}</h2>", esc(h))?;
                open = true;
                continue;
            }
            _ if !open => {
                writeln!(o, "<section>")?;
                open = true;
            }
            _ => {}
        }
        match block {
            Block::Heading(_) => unreachable!("handled above"),
            Block::Paragraph(p) => writeln!(o, "<p>{}</p>", esc(p))?,
            Block::Table(t) => {
                write!(o, "<table><thead><tr>")?;
                for h in &t.head {
                    write!(o, "<th>{}</th>", esc(h))?;
                }
                writeln!(o, "</tr></thead><tbody>")?;
                for row in &t.rows {
                    write!(o, "<tr>")?;
                    for (i, cell) in row.iter().enumerate() {
                        let class = if cell.starts_with("REGRESSION") {
                            " class=\"verdict-regression\""
                        } else if cell.starts_with("IMPROVEMENT") {
                            " class=\"verdict-improvement\""
                        } else if i > 0 && cell.starts_with(|c: char| c.is_ascii_digit() || "+-".contains(c)) {
                            " class=\"num\""
                        } else {
                            ""
                        };
                        write!(o, "<td{class}>{}</td>", esc(cell))?;
                    }
                    writeln!(o, "</tr>")?;
                }
                writeln!(o, "</tbody></table>")?;
            }
            Block::Spectrum(runs, latency) => writeln!(
                o,
                "<figure class=\"chart\">\n{}</figure>\
                 <p class=\"note\">Latency ({}) by percentile: each step right is ten times rarer.</p>",
                charts::percentile_spectrum(runs, *latency),
                latency.drawn()
            )?,
            Block::Timelines(runs) => writeln!(
                o,
                "<figure class=\"chart\">\n{}</figure><figure class=\"chart\">\n{}</figure>\
                 <p class=\"note\">p50, p90, p99 and max, and requests and failed requests, in each second.</p>",
                charts::latency_over_time(runs),
                charts::throughput_over_time(runs)
            )?,
            Block::LatencyVsLoad(x_desc, series) => writeln!(
                o,
                "<figure class=\"chart\">\n{}</figure>",
                charts::latency_vs_load(x_desc, series, &Marks::default())
            )?,
            Block::Capacity(x_desc, series, marks) => writeln!(
                o,
                "<figure class=\"chart\">\n{}</figure>\
                 <p class=\"note\">Each step's p50 (thin) and p99 (dashed) against the throughput it got; \
                 the red line is the SLO's latency, the grey one the knee.</p>",
                charts::latency_vs_load(x_desc, series, marks)
            )?,
            Block::Trend(trend) => writeln!(
                o,
                "<figure class=\"chart\">\n{}</figure>",
                charts::trend(trend)
            )?,
        }
    }
    if open {
        writeln!(o, "</section>")?;
    }
    writeln!(
        o,
        "<footer>Made by pelt {}. This page needs no network and runs no JavaScript.</footer>\n</main>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION")
    )
}
