//! `pelt history`: list, show, remove and follow recorded runs.

use super::open;
use crate::flags::FormatArg;
use crate::flags::{
    HistoryArgs, HistoryCommand, ListArgs, Location, RerunArgs, RmArgs, ShowArgs, TableFormat,
    TrendArgs, TrendFormat,
};
use crate::UserError;
use pelt_campaign::history::{
    results_bytes, store_error, summary_of, utc, RUN_ID_TAG, SHARD_TAG, STEP_TAG, SWEEP_TAG,
};
use pelt_core::human_ns;
use pelt_store::{Kind, Metric, RunRow, Unit};
use serde_json::json;
use std::fmt::Write;
use std::process::ExitCode;

pub fn command(args: HistoryArgs) -> Result<ExitCode, UserError> {
    let location = args.location;
    match args.command.unwrap_or(HistoryCommand::List(args.list)) {
        HistoryCommand::List(a) => list(&location, a),
        HistoryCommand::Show(a) => show(&location, a),
        HistoryCommand::Rm(a) => rm(&location, a),
        HistoryCommand::Trend(a) => trend(&location, a),
        HistoryCommand::Check => check(&location),
        HistoryCommand::Rerun(a) => rerun(&location, a),
    }
}

/// `pelt history rerun ID`: the stored configuration, its secrets given
/// again, run and recorded as a new run.
fn rerun(loc: &Location, a: RerunArgs) -> Result<ExitCode, UserError> {
    use pelt_store::secrets::MARKER;
    let mut store = open(loc)?;
    let run = store.get(a.id).map_err(store_error)?.ok_or_else(|| {
        UserError(format!(
            "no run {} in the history; see the ids with pelt history",
            a.id
        ))
    })?;
    let mut config: pelt_core::RunConfig = serde_json::from_str(&run.config_json)
        .map_err(|e| UserError(format!("run {}'s configuration cannot be read: {e}", a.id)))?;
    let given = a
        .headers
        .iter()
        .map(|h| crate::flags::parse_header(h))
        .collect::<Result<Vec<_>, _>>()?;
    for t in &mut config.targets {
        if t.url.to_string().contains(MARKER) {
            return Err(UserError(format!(
                "run {}'s URL had secrets (userinfo or a token-like parameter), which the history does not keep: \
                 run it again with pelt run and the full URL",
                a.id
            )));
        }
        for (name, value) in &mut t.headers {
            if value.contains(MARKER) {
                match given.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
                    Some((_, v)) => *value = v.clone(),
                    None => {
                        return Err(UserError(format!(
                            "run {}'s {name} header was secret, and the history does not keep it: \
                             give it again, like pelt history rerun {} -H '{name}: ...'",
                            a.id, a.id
                        )))
                    }
                }
            }
        }
    }
    drop(store);
    let record = crate::flags::RecordArgs {
        location: loc.clone(),
        tags: vec![("rerun_of".to_string(), a.id.to_string())],
        label: run.row.label.clone(),
        ..crate::flags::RecordArgs::default()
    };
    let mut history = pelt_campaign::history::Recording::start(&record.spec())?;
    let mut copy = None;
    let keep = pelt_campaign::Keep {
        until: None,
        secrets: record.redactor(),
        copy: history.as_ref().map(|_| &mut copy),
        ..pelt_campaign::Keep::default()
    };
    let summary = crate::live::execute(config, false, keep, Vec::new())?;
    if let Some(h) = history.as_mut() {
        h.record(&summary, None, copy);
    }
    crate::emit(crate::output::render_one(&summary, a.format)?.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn list(loc: &Location, a: ListArgs) -> Result<ExitCode, UserError> {
    let filter = a.select.filter()?;
    let rows = open(loc)?.list(&filter).map_err(store_error)?;
    let out = match a.format {
        TableFormat::Text => text_table(&rows),
        TableFormat::Json => {
            let mut s =
                serde_json::to_string_pretty(&rows.iter().map(row_json).collect::<Vec<_>>())
                    .expect("a JSON value always serialises");
            s.push('\n');
            s
        }
        TableFormat::Csv => csv_table(&rows),
    };
    crate::emit(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn tags_text(tags: &[(String, String)]) -> String {
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

fn text_table(rows: &[RunRow]) -> String {
    if rows.is_empty() {
        return "no recorded runs match\n".into();
    }
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:>5}  {:<19}  {:<12} {:<6} {:>9} {:>7} {:>9} {:>9} {:>10}  {:<30} tags",
        "id", "started (UTC)", "label", "mode", "requests", "failed", "p50", "p99", "rate", "url"
    );
    for r in rows {
        let f = &r.figures;
        let _ = writeln!(
            o,
            "{:>5}  {:<19}  {:<12} {:<6} {:>9} {:>6.2}% {:>9} {:>9} {:>8.1}/s  {:<30} {}",
            r.id,
            utc(r.started_ms),
            r.label.as_deref().unwrap_or("-"),
            r.mode,
            f.requests,
            f.error_ratio * 100.0,
            ns(f.p50_ns),
            ns(f.p99_ns),
            f.rate,
            r.url,
            tags_text(&r.tags)
        );
    }
    o
}

/// One run as a JSON object: the listing's columns, figures flat.
fn row_json(r: &RunRow) -> serde_json::Value {
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
        // The one meaning of failed (pelt_core::failure); "errors" and
        // "error_ratio" are the same numbers under their older names.
        "failed": f.errors,
        "failed_share": f.error_ratio,
        "errors": f.errors,
        "error_ratio": f.error_ratio,
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

fn csv_table(rows: &[RunRow]) -> String {
    let mut o = String::from(
        "id,started,label,tags,url,method,mode,connections,duration_s,requests,successes,errors,error_ratio,rate,throughput,p50_ns,p90_ns,p99_ns,p99_9_ns,max_ns,client_busy,complete\n",
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
            f.errors.to_string(),
            format!("{:.6}", f.error_ratio),
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

fn show(loc: &Location, a: ShowArgs) -> Result<ExitCode, UserError> {
    let mut store = open(loc)?;
    let run = store.get(a.id).map_err(store_error)?.ok_or_else(|| {
        UserError(format!(
            "no run {} in the history; see the ids with pelt history",
            a.id
        ))
    })?;
    if a.format == FormatArg::Json {
        crate::emit(run.report_json.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let bytes = results_bytes(&run)?;
    if a.format == FormatArg::Hdrlog {
        return Err(UserError(
            "--format hdrlog reads a results file: pelt history show ID --format json, or pelt report FILE --format hdrlog".into(),
        ));
    }
    let summary =
        summary_of(&bytes).map_err(|e| UserError(format!("run {}'s results file: {e}", a.id)))?;
    crate::emit(crate::output::render_one(&summary, a.format)?.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn rm(loc: &Location, a: RmArgs) -> Result<ExitCode, UserError> {
    let removed = open(loc)?.remove(&a.ids).map_err(store_error)?;
    let missing: Vec<String> = a
        .ids
        .iter()
        .filter(|id| !removed.contains(id))
        .map(|id| id.to_string())
        .collect();
    // "removed 0" and then an error said the same thing twice.
    if !removed.is_empty() {
        eprintln!("pelt: removed {} run(s) from the history", removed.len());
    }
    if !missing.is_empty() {
        return Err(UserError(format!(
            "no run {} in the history{}; see the ids with pelt history",
            missing.join(", "),
            if removed.is_empty() {
                ", nothing removed"
            } else {
                ""
            }
        )));
    }
    Ok(ExitCode::SUCCESS)
}

fn check(loc: &Location) -> Result<ExitCode, UserError> {
    let problems = open(loc)?.check().map_err(store_error)?;
    println!("{}", problems.join("\n"));
    Ok(if problems == ["ok"] {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
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
fn sparkline(values: &[Option<f64>]) -> Vec<char> {
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

fn trend(loc: &Location, a: TrendArgs) -> Result<ExitCode, UserError> {
    let mut filter = a.select.filter()?;
    let by_part = filter
        .tags
        .iter()
        .any(|(k, _)| [SHARD_TAG, RUN_ID_TAG, SWEEP_TAG, STEP_TAG].contains(&k.as_str()));
    if a.metric == Metric::Capacity {
        // Only sweeps have a capacity.
        filter.kinds.push(Kind::Sweep);
    } else if !by_part {
        // A shard's figures are its part of a run (four shards would read
        // as four runs of a quarter of the load), a sweep's steps are at
        // rates it chose, and a sweep's row is its capacity step. Asked
        // for by tag, they are followed like any run.
        filter
            .without
            .extend([Kind::Shard, Kind::Step, Kind::Sweep]);
    }
    let mut store = open(loc)?;
    let rows = store.list(&filter).map_err(store_error)?;
    // Sweeps are alike by their URL and tags; runs by their work.
    if !a.allow_mismatch && a.metric != Metric::Capacity && !by_part {
        like_with_like(&mut store, &rows)?;
    }
    let m = a.metric;
    let values: Vec<Option<f64>> = rows.iter().map(|r| r.figures.get(m)).collect();
    let mut urls: Vec<&str> = rows.iter().map(|r| r.url.as_str()).collect();
    urls.sort_unstable();
    urls.dedup();
    if urls.len() > 1 {
        eprintln!(
            "pelt: note: these runs load {} different URLs; add --url to follow one target",
            urls.len()
        );
    }
    let out = match a.format {
        TrendFormat::Text => {
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
                for ((r, v), bar) in rows.iter().zip(&values).zip(sparkline(&values)) {
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
        TrendFormat::Json => {
            let points: Vec<serde_json::Value> = rows
                .iter()
                .zip(&values)
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
            let mut s = serde_json::to_string_pretty(
                &json!({"metric": m.name(), "unit": unit, "runs": points}),
            )
            .expect("a JSON value always serialises");
            s.push('\n');
            s
        }
        TrendFormat::Csv => {
            let mut o = format!("id,started,label,url,{}\n", m.name());
            for (r, v) in rows.iter().zip(&values) {
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
        TrendFormat::Html => trend_html(m, &rows, &values, &urls),
    };
    crate::emit(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// A trend follows one experiment over time: every run must do the newest
/// run's work and be complete (see `pelt_analyze::alike`), or the trend is
/// refused, naming the difference.
fn like_with_like(store: &mut pelt_store::Store, rows: &[RunRow]) -> Result<(), UserError> {
    use pelt_analyze::alike::{self, Difference, Mismatch};
    let Some(newest) = rows.last() else {
        return Ok(());
    };
    let Some(reference) = pelt_campaign::baseline::stored_config(store, newest.id)? else {
        return Ok(());
    };
    let mut mismatches = Vec::new();
    for r in rows.iter().rev() {
        let mut differences = match pelt_campaign::baseline::stored_config(store, r.id)? {
            Some(c) => alike::differences(&reference, &c),
            None => Vec::new(),
        };
        if r.interrupted || !r.complete {
            differences.push(Difference {
                what: "completeness".into(),
                a: "complete".into(),
                b: if r.interrupted {
                    "interrupted"
                } else {
                    "incomplete"
                }
                .into(),
            });
        }
        if !differences.is_empty() {
            mismatches.push(Mismatch {
                run: format!("#{}", r.id),
                differences,
            });
        }
    }
    if mismatches.is_empty() {
        return Ok(());
    }
    Err(UserError(alike::refusal(
        &format!("the newest run, #{}", newest.id),
        &mismatches,
        "--allow-mismatch (or narrow the runs with --url, --tag, --label)",
    )))
}

fn trend_html(m: Metric, rows: &[RunRow], values: &[Option<f64>], urls: &[&str]) -> String {
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
