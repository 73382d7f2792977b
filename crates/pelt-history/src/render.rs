//! The history as people read it: a listing of recorded runs (text, JSON,
//! CSV) and a metric's trend (text with a sparkline, JSON, CSV, HTML).

use crate::utc;
use pelt_core::human_ns;
use pelt_store::{Metric, RunRow, Unit};
use serde_json::json;
use std::fmt::Write;

/// Tags as `k=v,name`.
pub fn tags_text(tags: &[(String, String)]) -> String {
    tags.iter()
        .map(|(k, v)| {
            if v.is_empty() {
                k.clone()
            } else {
                format!("{k}={v}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn ns(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |v| human_ns(v).to_string())
}

/// The listing as a table for a terminal.
pub fn text_table(rows: &[RunRow]) -> String {
    if rows.is_empty() {
        return "no recorded runs match\n".into();
    }
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:>5}  {:<19}  {:<12} {:<6} {:<11} {:>9} {:>7} {:>9} {:>9} {:>10}  {:<30} tags",
        "id",
        "started (UTC)",
        "label",
        "mode",
        "ended",
        "requests",
        "failed",
        "p50",
        "p99",
        "rate",
        "url"
    );
    for r in rows {
        let f = &r.figures;
        let _ = writeln!(
            o,
            "{:>5}  {:<19}  {:<12} {:<6} {:<11} {:>9} {:>6.2}% {:>9} {:>9} {:>8.1}/s  {:<30} {}",
            r.id,
            utc(r.started_ms),
            r.label.as_deref().unwrap_or("-"),
            r.mode,
            ended(r),
            f.requests,
            f.failed_share * 100.0,
            ns(f.p50_ns),
            ns(f.p99_ns),
            f.rate,
            url_text(r),
            tags_text(&r.tags)
        );
    }
    o
}

/// How the run ended, as the listing says it: `complete`, `interrupted`
/// (a signal or an `--abort-on` rule stopped it before its end) or
/// `incomplete` (rebuilt from a results file without its footer). A
/// comparison or baseline passes over the last two: the listing says why.
fn ended(r: &RunRow) -> &'static str {
    match (r.complete, r.interrupted) {
        (_, true) => "interrupted",
        (false, false) => "incomplete",
        (true, false) => "complete",
    }
}

/// The run's targets: its URL, or `3 targets: URL, ...` (the first of
/// several is not the run).
fn url_text(r: &RunRow) -> String {
    match r.targets {
        0 | 1 => r.url.clone(),
        n => format!("{n} targets: {}, ...", r.url),
    }
}

/// One run as a JSON object: the listing's columns, figures flat.
pub fn row_json(r: &RunRow) -> serde_json::Value {
    let f = &r.figures;
    json!({
        "id": r.id,
        "started": utc(r.started_ms),
        "started_ms": r.started_ms,
        "recorded_ms": r.recorded_ms,
        "kind": r.kind,
        "label": r.label,
        "tags": r.tags.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
        "url": r.url,
        "method": r.method,
        "targets": r.targets,
        "mode": r.mode,
        "connections": r.connections,
        "offered_rate": r.offered_rate,
        "duration_s": r.duration_s,
        "requests": f.requests,
        "successes": f.successes,
        // The one meaning of failed (pelt_core::failure).
        "failed": f.failed,
        "failed_share": f.failed_share,
        "rate": f.rate,
        "throughput": f.throughput,
        "p50_ns": f.p50_ns,
        "p90_ns": f.p90_ns,
        "p99_ns": f.p99_ns,
        "p99_9_ns": f.p999_ns,
        "max_ns": f.max_ns,
        "client_busy": f.client_busy,
        "complete": r.complete,
        "interrupted": r.interrupted,
        "pelt_version": r.pelt_version,
        "results": r.results_path.clone().unwrap_or_else(|| "history".into()),
    })
}

/// A CSV field, quoted when it must be.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

/// The listing as CSV, a row per run.
pub fn csv_table(rows: &[RunRow]) -> String {
    let mut o = String::from(
        "id,started,label,tags,url,method,mode,connections,duration_s,requests,successes,failed,failed_share,rate,throughput,p50_ns,p90_ns,p99_ns,p99_9_ns,max_ns,client_busy,complete\n",
    );
    for r in rows {
        let f = &r.figures;
        let cells = [
            r.id.to_string(),
            utc(r.started_ms),
            r.label.clone().unwrap_or_default(),
            tags_text(&r.tags),
            r.url.clone(),
            r.method.clone(),
            r.mode.clone(),
            r.connections.to_string(),
            format!("{:.3}", r.duration_s),
            f.requests.to_string(),
            f.successes.to_string(),
            f.failed.to_string(),
            format!("{:.6}", f.failed_share),
            format!("{:.3}", f.rate),
            format!("{:.3}", f.throughput),
            opt(f.p50_ns),
            opt(f.p90_ns),
            opt(f.p99_ns),
            opt(f.p999_ns),
            opt(f.max_ns),
            opt(f.client_busy.map(|v| format!("{v:.4}"))),
            r.complete.to_string(),
        ];
        let line: Vec<String> = cells.iter().map(|c| field(c)).collect();
        let _ = writeln!(o, "{}", line.join(","));
    }
    o
}

/// The listing as a JSON array (`row_json` per run).
pub fn json_table(rows: &[RunRow]) -> String {
    let mut s = serde_json::to_string_pretty(&rows.iter().map(row_json).collect::<Vec<_>>())
        .expect("a JSON value always serialises");
    s.push('\n');
    s
}

/// A metric's value as people read it.
pub fn value_text(m: Metric, v: Option<f64>) -> String {
    match (v, m.unit()) {
        (None, _) => "-".into(),
        (Some(v), Unit::Nanos) => human_ns(v as u64).to_string(),
        (Some(v), Unit::PerSecond) => format!("{v:.1}/s"),
        (Some(v), Unit::Ratio) => format!("{:.2}%", v * 100.0),
    }
}

/// ▁..█ for each value between the smallest and largest.
pub fn sparkline(values: &[Option<f64>]) -> Vec<char> {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let known = values.iter().flatten();
    let lo = known.clone().copied().fold(f64::INFINITY, f64::min);
    let hi = known.copied().fold(f64::NEG_INFINITY, f64::max);
    values
        .iter()
        .map(|v| match v {
            None => ' ',
            Some(_) if hi <= lo => BARS[3],
            Some(v) => BARS[(((v - lo) / (hi - lo)) * 7.0).round() as usize],
        })
        .collect()
}

/// A metric's trend over `rows` (oldest first) for a terminal: a line per
/// run with a sparkline, then first, last, lowest and highest.
pub fn trend_text(m: Metric, rows: &[RunRow], values: &[Option<f64>], urls: &[&str]) -> String {
    if rows.is_empty() {
        "no recorded runs match\n".to_string()
    } else {
        let mut o = format!(
            "pelt history trend: {} of {} run(s), oldest first{}\n\n",
            m.name(),
            rows.len(),
            if urls.len() == 1 {
                format!(", {}", urls[0])
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            o,
            "{:>5}  {:<19}  {:<14} {:>10}  ",
            "id",
            "started (UTC)",
            "label",
            m.name()
        );
        for ((r, v), bar) in rows.iter().zip(values).zip(sparkline(values)) {
            let _ = writeln!(
                o,
                "{:>5}  {:<19}  {:<14} {:>10}  {bar}",
                r.id,
                utc(r.started_ms),
                r.label.as_deref().unwrap_or("-"),
                value_text(m, *v)
            );
        }
        let known: Vec<f64> = values.iter().flatten().copied().collect();
        if let (Some(first), Some(last)) = (known.first(), known.last()) {
            let change = if *first != 0.0 {
                format!(" ({:+.1}%)", (last / first - 1.0) * 100.0)
            } else {
                String::new()
            };
            let lo = known.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = known.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let _ = writeln!(
                o,
                "\nfirst {}, last {}{change}; lowest {}, highest {}",
                value_text(m, Some(*first)),
                value_text(m, Some(*last)),
                value_text(m, Some(lo)),
                value_text(m, Some(hi))
            );
        }
        o
    }
}

/// A metric's trend as JSON: the metric, its unit and a point per run.
pub fn trend_json(m: Metric, rows: &[RunRow], values: &[Option<f64>]) -> String {
    let points: Vec<serde_json::Value> = rows
        .iter()
        .zip(values)
        .map(|(r, v)| {
            json!({"id": r.id, "started": utc(r.started_ms), "started_ms": r.started_ms,
                   "label": r.label, "url": r.url, "value": v})
        })
        .collect();
    let unit = match m.unit() {
        Unit::Nanos => "ns",
        Unit::PerSecond => "per_second",
        Unit::Ratio => "ratio",
    };
    let mut s =
        serde_json::to_string_pretty(&json!({"metric": m.name(), "unit": unit, "runs": points}))
            .expect("a JSON value always serialises");
    s.push('\n');
    s
}

/// A metric's trend as CSV.
pub fn trend_csv(m: Metric, rows: &[RunRow], values: &[Option<f64>]) -> String {
    let mut o = format!("id,started,label,url,{}\n", m.name());
    for (r, v) in rows.iter().zip(values) {
        let _ = writeln!(
            o,
            "{},{},{},{},{}",
            r.id,
            utc(r.started_ms),
            field(r.label.as_deref().unwrap_or("")),
            field(&r.url),
            opt(*v)
        );
    }
    o
}

/// A metric's trend as a page with its chart.
pub fn trend_html(m: Metric, rows: &[RunRow], values: &[Option<f64>], urls: &[&str]) -> String {
    use pelt_report::html::{Block, Table, Trend, TrendUnit};
    let unit = match m.unit() {
        Unit::Nanos => TrendUnit::Nanos,
        Unit::PerSecond => TrendUnit::PerSecond,
        Unit::Ratio => TrendUnit::Ratio,
    };
    let chart = Trend {
        metric: m.name().to_string(),
        unit,
        points: rows
            .iter()
            .zip(values)
            .filter_map(|(r, v)| v.map(|v| (format!("#{}", r.id), v)))
            .collect(),
    };
    let table = Table {
        head: ["id", "started (UTC)", "label", "tags", m.name()]
            .map(String::from)
            .to_vec(),
        rows: rows
            .iter()
            .zip(values)
            .map(|(r, v)| {
                vec![
                    r.id.to_string(),
                    utc(r.started_ms),
                    r.label.clone().unwrap_or_default(),
                    tags_text(&r.tags),
                    value_text(m, *v),
                ]
            })
            .collect(),
    };
    let about = match urls {
        [] => "No recorded runs match.".to_string(),
        [one] => format!(
            "{} of {} run(s) of {one}, oldest first.",
            m.name(),
            rows.len()
        ),
        many => format!(
            "{} of {} run(s) of {} URLs, oldest first.",
            m.name(),
            rows.len(),
            many.len()
        ),
    };
    pelt_report::html::document(
        &format!("pelt history: {} trend", m.name()),
        &[
            Block::Paragraph(about),
            Block::Trend(chart),
            Block::Heading("Runs".into()),
            Block::Table(table),
        ],
    )
}
