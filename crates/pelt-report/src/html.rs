//! The HTML report: one self-contained page per run, or per comparison of
//! runs, that opens offline and runs no JavaScript.
//!
//! Charts are SVG drawn by `plotters` and inlined; styling is one inline
//! `<style>`; a Content-Security-Policy forbids scripts and every network
//! load, so even a mistake in escaping could not run code or call out.
//!
//! Every number in the tables carries `data-key` and `data-value`
//! attributes whose key path and value are those of the JSON report
//! ([`crate::json_value`]): the tables are filled *from* that document,
//! so the page cannot disagree with it, and tests or scripts can read the
//! page without parsing display text. Key paths join object keys with `.`
//! (a key may itself contain a dot, like `p99.9`).
//!
//! Everything that comes from a user, a server or a targets file (URLs,
//! methods, headers, labels, error messages, warnings) is escaped.

mod charts;

pub use crate::table::Table;

use crate::json_value;
use crate::units::{bytes, rate, thousands};
use pelt_core::{ErrorKind, Human, Load, RunSummary, MAX_TIMED_TARGETS};
use serde_json::Value;
use std::fmt::Write;
use std::time::Duration;

/// One run to draw, with the name shown in legends.
#[derive(Debug, Clone)]
pub struct Labeled<'a> {
    pub label: String,
    pub summary: &'a RunSummary,
}

/// Targets listed per run in the configuration table; a targets file can
/// hold thousands.
const MAX_TARGETS_SHOWN: usize = 20;
/// Rows per run in the per-target table; the rest are in the JSON report.
const MAX_TARGET_ROWS: usize = 100;

const STYLE: &str = r#"
:root { color-scheme: light; }
body { margin: 0; background: #f6f7f9; color: #1d2330;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", Arial, sans-serif; }
main { max-width: 1160px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 0 0 10px; }
header p { margin: 0; color: #555d6e; }
section { background: #fff; border: 1px solid #dde1e8; border-radius: 8px; padding: 16px 20px; margin-top: 18px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 14px 4px 0; text-align: left; vertical-align: top; border-bottom: 1px solid #eef0f4; }
thead th { border-bottom: 2px solid #cfd5df; }
td.num { text-align: right; white-space: nowrap; }
th.run { text-align: right; max-width: 22em; overflow-wrap: anywhere; }
tr.group th { padding-top: 14px; font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: #5a6274; }
td.missing { color: #9aa1ad; }
span.none { display: block; text-align: right; }
table.config td.num { text-align: left; }
code { font: 13px ui-monospace, "DejaVu Sans Mono", Menlo, monospace; overflow-wrap: anywhere; }
.warnings { background: #fff7e6; border-color: #f0c36d; }
.warnings li { margin: 4px 0; }
.note { color: #555d6e; font-size: 14px; margin: 6px 0 0; }
figure { margin: 0; }
figure svg { display: block; width: 100%; height: auto; }
ul { margin: 4px 0; padding-left: 20px; }
ul.plain { list-style: none; padding: 0; }
footer { margin-top: 18px; color: #7a8191; font-size: 13px; }
"#;

/// The whole report as one HTML document: no network access needed to
/// view it, no JavaScript required.
pub fn render(runs: &[Labeled<'_>]) -> String {
    let jsons: Vec<Value> = runs.iter().map(|r| json_value(r.summary)).collect();
    let mut o = String::with_capacity(256 * 1024);
    // Writing to a String cannot fail; `let _` keeps the happy path plain.
    let _ = write_page(&mut o, runs, &jsons);
    o
}

/// Escapes text for HTML content and quoted attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The value at a dotted key path of the JSON report. Object keys may
/// contain dots themselves (`percentiles_s.p99.9`), so at each level the
/// longest key that matches the path's start wins; array elements are
/// addressed by index.
pub(crate) fn lookup<'v>(v: &'v Value, path: &str) -> Option<&'v Value> {
    if path.is_empty() {
        return Some(v);
    }
    match v {
        Value::Object(map) => map
            .iter()
            .filter_map(|(k, child)| {
                let rest = path.strip_prefix(k.as_str())?;
                if rest.is_empty() {
                    Some((k.len(), child, ""))
                } else {
                    rest.strip_prefix('.').map(|r| (k.len(), child, r))
                }
            })
            .max_by_key(|(len, _, _)| *len)
            .and_then(|(_, child, rest)| lookup(child, rest)),
        Value::Array(items) => {
            let (head, rest) = path.split_once('.').unwrap_or((path, ""));
            lookup(items.get(head.parse::<usize>().ok()?)?, rest)
        }
        _ => None,
    }
}

/// How a number from the JSON report is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fmt {
    Count,
    PerSecond,
    Ratio,
    Seconds,
    Bytes,
    YesNo,
    UnixMs,
}

impl Fmt {
    fn show(self, v: &Value) -> String {
        let f = v.as_f64().unwrap_or(0.0);
        match self {
            Fmt::Count => match v.as_u64() {
                Some(n) => thousands(n),
                None => rate(f),
            },
            Fmt::PerSecond => format!("{}/s", rate(f)),
            Fmt::Ratio => format!("{:.2}%", f * 100.0),
            Fmt::Seconds if f == 0.0 => "0".into(),
            Fmt::Seconds => match Duration::try_from_secs_f64(f) {
                Ok(d) => Human(d).to_string(),
                Err(_) => f.to_string(),
            },
            Fmt::Bytes => bytes(f),
            Fmt::YesNo => match v.as_bool() {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => v.to_string(),
            },
            Fmt::UnixMs => utc(v.as_u64().unwrap_or(0)),
        }
    }
}

/// A table cell for the JSON report's value at `key`, with its raw value
/// in `data-value`; a dash when the report has none (e.g. no offered rate
/// in a closed-loop run).
fn num_cell(run: usize, json: &Value, key: &str, fmt: Fmt) -> String {
    match lookup(json, key) {
        Some(v @ (Value::Number(_) | Value::Bool(_))) => format!(
            "<td class=\"num\" data-run=\"{run}\" data-key=\"{}\" data-value=\"{}\">{}</td>",
            esc(key),
            esc(&v.to_string()),
            esc(&fmt.show(v))
        ),
        _ => "<td class=\"num missing\">–</td>".to_string(),
    }
}

fn num_row(o: &mut String, label: &str, jsons: &[Value], key: &dyn Fn(usize) -> String, fmt: Fmt) {
    let _ = write!(o, "<tr><th>{}</th>", esc(label));
    for (i, json) in jsons.iter().enumerate() {
        o.push_str(&num_cell(i, json, &key(i), fmt));
    }
    o.push_str("</tr>\n");
}

fn fixed(key: &'static str) -> impl Fn(usize) -> String {
    move |_| key.to_string()
}

fn group_row(o: &mut String, title: &str, runs: usize) {
    let _ = writeln!(
        o,
        "<tr class=\"group\"><th colspan=\"{}\">{}</th></tr>",
        runs + 1,
        esc(title)
    );
}

/// Text cells, one per run, already escaped by the caller.
fn html_row(o: &mut String, label: &str, cells: impl Iterator<Item = String>) {
    let _ = write!(o, "<tr><th>{}</th>", esc(label));
    for c in cells {
        let _ = write!(o, "<td>{c}</td>");
    }
    o.push_str("</tr>\n");
}

fn head_row(o: &mut String, first: &str, runs: &[Labeled<'_>]) {
    let _ = write!(o, "<thead><tr><th>{}</th>", esc(first));
    for r in runs {
        let _ = write!(o, "<th class=\"run\">{}</th>", esc(&r.label));
    }
    o.push_str("</tr></thead>\n");
}

/// `2024-05-01 12:34:56 UTC` for milliseconds since the Unix epoch.
fn utc(ms: u64) -> String {
    let t = pelt_core::UtcTime::from_unix(ms / 1000);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

/// `response_time` in rate mode, `service_time` in a closed loop: the
/// JSON report's `headline`.
fn headline_key(s: &RunSummary) -> &'static str {
    if s.is_rate_mode() {
        "response_time"
    } else {
        "service_time"
    }
}

fn describe_target(s: &RunSummary) -> String {
    match s.config.targets.as_slice() {
        [] => "no target".to_string(),
        [one] => format!("{} {}", one.method, one.url),
        many => format!("{} targets", many.len()),
    }
}

fn write_page(o: &mut String, runs: &[Labeled<'_>], jsons: &[Value]) -> std::fmt::Result {
    let title = match runs {
        [] => "no runs".to_string(),
        [one] => describe_target(one.summary),
        many => format!(
            "{} runs: {}",
            many.len(),
            many.iter()
                .map(|r| r.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    writeln!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">"
    )?;
    writeln!(
        o,
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
    )?;
    writeln!(o, "<title>pelt report: {}</title>", esc(&title))?;
    writeln!(o, "<style>{STYLE}</style>\n</head>\n<body>\n<main>")?;
    writeln!(o, "<header><h1>pelt report</h1>")?;
    for r in runs {
        let s = r.summary;
        let label = if runs.len() > 1 {
            format!("<b>{}</b>: ", esc(&r.label))
        } else {
            String::new()
        };
        writeln!(
            o,
            "<p>{label}<code>{}</code>, started {}</p>",
            esc(&describe_target(s)),
            utc(s.env.started_unix_ms)
        )?;
    }
    writeln!(o, "</header>")?;
    if runs.is_empty() {
        writeln!(o, "<section><p>There are no runs to report.</p></section>")?;
    } else {
        write_warnings(o, runs)?;
        write_summary(o, runs, jsons)?;
        write_charts(o, runs)?;
        write_statuses(o, runs, jsons)?;
        write_errors(o, runs, jsons)?;
        write_targets(o, runs, jsons)?;
        write_config(o, runs, jsons)?;
    }
    let version = runs
        .first()
        .map_or("", |r| r.summary.env.pelt_version.as_str());
    writeln!(
        o,
        "<footer>Made by pelt {}. This page needs no network and runs no JavaScript; \
         every number in the tables carries its JSON report key in <code>data-key</code>.</footer>",
        esc(version)
    )?;
    writeln!(o, "</main>\n</body>\n</html>")
}

fn write_warnings(o: &mut String, runs: &[Labeled<'_>]) -> std::fmt::Result {
    if runs.iter().all(|r| r.summary.warnings.is_empty()) {
        return Ok(());
    }
    writeln!(
        o,
        "<section class=\"warnings\" id=\"warnings\"><h2>Warnings</h2><ul>"
    )?;
    for r in runs {
        for w in &r.summary.warnings {
            let who = if runs.len() > 1 {
                format!("<b>{}</b>: ", esc(&r.label))
            } else {
                String::new()
            };
            writeln!(o, "<li>{who}{}</li>", esc(&w.to_string()))?;
        }
    }
    writeln!(o, "</ul></section>")
}

fn write_summary(o: &mut String, runs: &[Labeled<'_>], jsons: &[Value]) -> std::fmt::Result {
    let n = runs.len();
    writeln!(
        o,
        "<section id=\"summary\"><h2>Summary</h2><table class=\"summary\">"
    )?;
    head_row(o, "", runs);
    o.push_str("<tbody>\n");
    group_row(o, "Requests", n);
    let rows: [(&str, &'static str, Fmt); 8] = [
        ("requests", "requests.total", Fmt::Count),
        ("succeeded (2xx/3xx)", "requests.successes", Fmt::Count),
        ("failed with an error", "requests.errors", Fmt::Count),
        (
            "responses outside 2xx/3xx",
            "requests.non_2xx_3xx",
            Fmt::Count,
        ),
        ("rate (sent)", "requests.rate", Fmt::PerSecond),
        ("offered rate", "offered_rate", Fmt::PerSecond),
        (
            "throughput (successes)",
            "requests.throughput",
            Fmt::PerSecond,
        ),
        ("success ratio", "requests.success_ratio", Fmt::Ratio),
    ];
    for (label, key, fmt) in rows {
        num_row(o, label, jsons, &fixed(key), fmt);
    }
    group_row(o, "Time and transfer", n);
    let rows: [(&str, &'static str, Fmt); 6] = [
        ("duration (sending)", "duration_s", Fmt::Seconds),
        ("elapsed (to the last response)", "elapsed_s", Fmt::Seconds),
        ("bytes in", "bytes.in", Fmt::Bytes),
        ("bytes out", "bytes.out", Fmt::Bytes),
        ("connections opened", "connections.opened", Fmt::Count),
        (
            "requests on a reused connection",
            "connections.reused_requests",
            Fmt::Count,
        ),
    ];
    for (label, key, fmt) in rows {
        num_row(o, label, jsons, &fixed(key), fmt);
    }
    let rate_runs = runs.iter().filter(|r| r.summary.is_rate_mode()).count();
    let latency_title = if rate_runs == n {
        "Latency: response time (from each request's scheduled send)"
    } else if rate_runs == 0 {
        "Latency: service time (closed loop)"
    } else {
        "Latency: response time in rate runs, service time in closed-loop runs"
    };
    group_row(o, latency_title, n);
    let stats: [(&str, &str); 7] = [
        ("min", "min_s"),
        ("mean", "mean_s"),
        ("p50", "percentiles_s.p50"),
        ("p90", "percentiles_s.p90"),
        ("p99", "percentiles_s.p99"),
        ("p99.9", "percentiles_s.p99.9"),
        ("max", "max_s"),
    ];
    for (label, stat) in stats {
        let key = |i: usize| format!("latency.{}.{stat}", headline_key(runs[i].summary));
        num_row(o, label, jsons, &key, Fmt::Seconds);
    }
    group_row(o, "Run", n);
    num_row(
        o,
        "warm-up requests (excluded)",
        jsons,
        &fixed("requests.warmup"),
        Fmt::Count,
    );
    num_row(o, "interrupted", jsons, &fixed("interrupted"), Fmt::YesNo);
    html_row(
        o,
        "busiest pelt thread: on a CPU, waiting",
        runs.iter().map(|r| match r.summary.busiest_thread() {
            Some(b) => format!("{:.0}%, {:.0}%", b.on_cpu * 100.0, b.waiting * 100.0),
            None => "<span class=\"none\">not measured</span>".to_string(),
        }),
    );
    html_row(
        o,
        "warnings",
        runs.iter().map(|r| {
            if r.summary.warnings.is_empty() {
                "<span class=\"none\">none</span>".to_string()
            } else {
                let items: String = r
                    .summary
                    .warnings
                    .iter()
                    .map(|w| format!("<li>{}</li>", esc(&w.to_string())))
                    .collect();
                format!("<ul class=\"plain\">{items}</ul>")
            }
        }),
    );
    writeln!(o, "</tbody></table>")?;
    if rate_runs > 0 {
        writeln!(
            o,
            "<p class=\"note\">Response time runs from each request's scheduled send time, so time spent \
             waiting for a free connection counts, as it would for a user.</p>"
        )?;
    }
    if rate_runs < n {
        writeln!(
            o,
            "<p class=\"note\">In a closed loop each connection waits for a response before sending \
             again, so queueing at the server is not seen (a slow server just gets fewer requests). \
             For the latency users would see at a given load, run with <code>--rate</code>.</p>"
        )?;
    }
    writeln!(o, "</section>")
}

fn write_charts(o: &mut String, runs: &[Labeled<'_>]) -> std::fmt::Result {
    let sections = [
        (
            "latency-over-time",
            "Latency over time",
            "p50, p90, p99 and max of the requests completed in each second.",
            charts::latency_over_time(runs),
        ),
        (
            "throughput-over-time",
            "Throughput and errors over time",
            "Requests and errors completed in each second (the first and last seconds are partial).",
            charts::throughput_over_time(runs),
        ),
        (
            "percentile-spectrum",
            "Latency by percentile",
            "The whole distribution, tail stretched: each step right is ten times rarer.",
            charts::percentile_spectrum(runs),
        ),
        (
            "latency-histogram",
            "Latency histogram",
            "Share of timed requests in log-spaced latency buckets.",
            charts::histogram(runs),
        ),
    ];
    for (id, title, note, svg) in sections {
        writeln!(
            o,
            "<section id=\"{id}\"><h2>{title}</h2><figure class=\"chart\">\n{svg}</figure>\
             <p class=\"note\">{note}</p></section>"
        )?;
    }
    Ok(())
}

fn write_statuses(o: &mut String, runs: &[Labeled<'_>], jsons: &[Value]) -> std::fmt::Result {
    let mut codes: Vec<u16> = runs
        .iter()
        .flat_map(|r| r.summary.total.status_counts().map(|(code, _)| code))
        .collect();
    codes.sort_unstable();
    codes.dedup();
    writeln!(o, "<section id=\"status-codes\"><h2>Status codes</h2>")?;
    if codes.is_empty() {
        writeln!(o, "<p>No response had a status line.</p></section>")?;
        return Ok(());
    }
    writeln!(o, "<table>")?;
    head_row(o, "status", runs);
    o.push_str("<tbody>\n");
    for code in codes {
        let key = format!("status_codes.{code}");
        let _ = write!(o, "<tr><th>{code}</th>");
        for (i, json) in jsons.iter().enumerate() {
            o.push_str(&num_cell(i, json, &key, Fmt::Count));
        }
        o.push_str("</tr>\n");
    }
    writeln!(o, "</tbody></table></section>")
}

fn write_errors(o: &mut String, runs: &[Labeled<'_>], jsons: &[Value]) -> std::fmt::Result {
    writeln!(o, "<section id=\"errors\"><h2>Errors</h2>")?;
    let kinds: Vec<ErrorKind> = ErrorKind::ALL
        .into_iter()
        .filter(|k| runs.iter().any(|r| r.summary.total.errors[k.index()] > 0))
        .collect();
    if kinds.is_empty() {
        writeln!(o, "<p>No request failed.</p></section>")?;
        return Ok(());
    }
    writeln!(o, "<table>")?;
    let _ = write!(o, "<thead><tr><th>kind</th><th>meaning</th>");
    for r in runs {
        let _ = write!(o, "<th class=\"run\">{}</th>", esc(&r.label));
    }
    o.push_str("</tr></thead><tbody>\n");
    for kind in &kinds {
        let key = format!("errors.{}", kind.name());
        write!(
            o,
            "<tr><th><code>{}</code></th><td>{}</td>",
            kind.name(),
            esc(kind.describe())
        )?;
        for (i, json) in jsons.iter().enumerate() {
            o.push_str(&num_cell(i, json, &key, Fmt::Count));
        }
        o.push_str("</tr>\n");
    }
    writeln!(o, "</tbody></table>")?;
    let any_examples = runs.iter().any(|r| !r.summary.total.examples.is_empty());
    if any_examples {
        writeln!(o, "<h3>Examples</h3><ul class=\"examples\">")?;
        for r in runs {
            for e in &r.summary.total.examples {
                let who = if runs.len() > 1 {
                    format!("<b>{}</b> ", esc(&r.label))
                } else {
                    String::new()
                };
                writeln!(
                    o,
                    "<li>{who}<code>{}</code>: <code>{}</code></li>",
                    e.kind.name(),
                    esc(&e.message)
                )?;
            }
        }
        writeln!(o, "</ul>")?;
    }
    writeln!(o, "</section>")
}

/// `LABEL COUNT` for the count at `key`, with its key and value.
fn count_span(run: usize, json: &Value, key: &str, label: &str) -> String {
    let v = lookup(json, key).cloned().unwrap_or(Value::Null);
    format!(
        "<span data-run=\"{run}\" data-key=\"{}\" data-value=\"{}\">{} {}</span>",
        esc(key),
        esc(&v.to_string()),
        esc(label),
        esc(&Fmt::Count.show(&v))
    )
}

/// A table per run of its targets: counts, response-time percentiles, and
/// the status classes and failure kinds of each. Only for runs with more
/// than one target.
fn write_targets(o: &mut String, runs: &[Labeled<'_>], jsons: &[Value]) -> std::fmt::Result {
    if runs.iter().all(|r| r.summary.config.targets.len() < 2) {
        return Ok(());
    }
    writeln!(o, "<section id=\"targets\"><h2>Targets</h2>")?;
    for (run, (r, json)) in runs.iter().zip(jsons).enumerate() {
        let targets = json["targets"].as_array().map_or(&[][..], Vec::as_slice);
        if runs.len() > 1 {
            writeln!(o, "<h3>{}</h3>", esc(&r.label))?;
        }
        writeln!(
            o,
            "<table class=\"targets\"><thead><tr><th>target</th><th>requests</th><th>ok</th>\
             <th>errors</th><th>p50</th><th>p90</th><th>p99</th><th>statuses</th><th>failures</th></tr></thead><tbody>"
        )?;
        for (j, t) in targets.iter().enumerate().take(MAX_TARGET_ROWS) {
            let method = t["method"].as_str().unwrap_or_default();
            let url = t["url"].as_str().unwrap_or_default();
            write!(o, "<tr><th><code>{} {}</code></th>", esc(method), esc(url))?;
            for field in ["requests", "successes", "errors"] {
                o.push_str(&num_cell(
                    run,
                    json,
                    &format!("targets.{j}.{field}"),
                    Fmt::Count,
                ));
            }
            for p in ["p50", "p90", "p99"] {
                let key = format!("targets.{j}.response_time.percentiles_s.{p}");
                o.push_str(&num_cell(run, json, &key, Fmt::Seconds));
            }
            for field in ["status_classes", "error_kinds"] {
                let spans: Vec<String> = t[field]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, _)| {
                        count_span(run, json, &format!("targets.{j}.{field}.{name}"), name)
                    })
                    .collect();
                write!(o, "<td>{}</td>", spans.join("<br>"))?;
            }
            o.push_str("</tr>\n");
        }
        writeln!(o, "</tbody></table>")?;
        if targets.len() > MAX_TARGET_ROWS {
            writeln!(
                o,
                "<p>… and {} more targets in the JSON report.</p>",
                thousands((targets.len() - MAX_TARGET_ROWS) as u64)
            )?;
        }
        if targets.len() > MAX_TIMED_TARGETS {
            writeln!(
                o,
                "<p>Targets after the first {} are counted but not timed.</p>",
                thousands(MAX_TIMED_TARGETS as u64)
            )?;
        }
    }
    writeln!(o, "</section>")
}

fn targets_cell(s: &RunSummary) -> String {
    let targets = &s.config.targets;
    let mut cell = String::from("<ul class=\"plain\">");
    for t in targets.iter().take(MAX_TARGETS_SHOWN) {
        let _ = write!(
            cell,
            "<li><code>{} {}</code>",
            esc(&t.method),
            esc(&t.url.to_string())
        );
        for (name, value) in &t.headers {
            let _ = write!(cell, "<br><code>{}: {}</code>", esc(name), esc(value));
        }
        if !t.body.is_empty() {
            let _ = write!(cell, "<br>body: {}", bytes(t.body.len() as f64));
        }
        cell.push_str("</li>");
    }
    if targets.len() > MAX_TARGETS_SHOWN {
        let _ = write!(
            cell,
            "<li>… and {} more</li>",
            thousands((targets.len() - MAX_TARGETS_SHOWN) as u64)
        );
    }
    cell.push_str("</ul>");
    cell
}

fn write_config(o: &mut String, runs: &[Labeled<'_>], jsons: &[Value]) -> std::fmt::Result {
    let n = runs.len();
    writeln!(
        o,
        "<section id=\"configuration\"><h2>Configuration</h2><table class=\"config\">"
    )?;
    head_row(o, "", runs);
    o.push_str("<tbody>\n");
    group_row(o, "Load", n);
    html_row(o, "targets", runs.iter().map(|r| targets_cell(r.summary)));
    html_row(
        o,
        "load model",
        runs.iter().map(|r| match &r.summary.config.load {
            Load::Closed { schedule: None, .. } => "closed loop".to_string(),
            Load::Closed {
                schedule: Some(s), ..
            } => format!("closed loop, connections {s}"),
            Load::Rate { schedule: None, .. } => "constant rate (open loop)".to_string(),
            Load::Rate {
                schedule: Some(s), ..
            } => format!("rate {s} req/s (open loop)"),
        }),
    );
    num_row(
        o,
        "connections",
        jsons,
        &fixed("config.load.connections"),
        Fmt::Count,
    );
    num_row(o, "rate", jsons, &fixed("config.load.rate"), Fmt::PerSecond);
    num_row(
        o,
        "stop after requests",
        jsons,
        &fixed("config.stop.requests"),
        Fmt::Count,
    );
    let _ = write!(o, "<tr><th>stop after duration</th>");
    for (i, (r, json)) in runs.iter().zip(jsons).enumerate() {
        let stop = r.summary.config.stop;
        if stop.requests.is_none() && stop.duration.is_none() {
            let d = r
                .summary
                .config
                .effective_stop()
                .duration
                .unwrap_or_default();
            let _ = write!(o, "<td class=\"num\">{} (default)</td>", Human(d));
        } else {
            o.push_str(&num_cell(i, json, "config.stop.duration", Fmt::Seconds));
        }
    }
    o.push_str("</tr>\n");
    num_row(o, "warm-up", jsons, &fixed("config.warmup"), Fmt::Seconds);
    num_row(
        o,
        "threads asked for",
        jsons,
        &fixed("config.threads"),
        Fmt::Count,
    );
    num_row(
        o,
        "worker threads used",
        jsons,
        &fixed("environment.threads"),
        Fmt::Count,
    );
    group_row(o, "HTTP", n);
    num_row(
        o,
        "timeout",
        jsons,
        &fixed("config.http.timeout"),
        Fmt::Seconds,
    );
    num_row(
        o,
        "connect timeout",
        jsons,
        &fixed("config.http.connect_timeout"),
        Fmt::Seconds,
    );
    num_row(
        o,
        "keep-alive",
        jsons,
        &fixed("config.http.keepalive"),
        Fmt::YesNo,
    );
    num_row(
        o,
        "TLS verification skipped",
        jsons,
        &fixed("config.http.insecure"),
        Fmt::YesNo,
    );
    num_row(o, "HTTP/2", jsons, &fixed("config.http.http2"), Fmt::YesNo);
    num_row(
        o,
        "HTTP/2 streams per connection",
        jsons,
        &fixed("config.http.streams"),
        Fmt::Count,
    );
    group_row(o, "Environment", n);
    html_row(
        o,
        "pelt version",
        runs.iter().map(|r| esc(&r.summary.env.pelt_version)),
    );
    html_row(
        o,
        "OS",
        runs.iter()
            .map(|r| esc(&format!("{} {}", r.summary.env.os, r.summary.env.arch))),
    );
    num_row(o, "cores", jsons, &fixed("environment.cores"), Fmt::Count);
    html_row(
        o,
        "target addresses",
        runs.iter().map(|r| {
            r.summary
                .env
                .target_addrs
                .iter()
                .map(|a| format!("<code>{}</code>", esc(a)))
                .collect::<Vec<_>>()
                .join(", ")
        }),
    );
    num_row(
        o,
        "started",
        jsons,
        &fixed("environment.started_unix_ms"),
        Fmt::UnixMs,
    );
    writeln!(o, "</tbody></table></section>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pelt_core::{
        Environment, IntervalRow, Recorder, RunConfig, Sample, Stop, Target, Url, Warning,
    };

    const SEC: u64 = 1_000_000_000;
    const XSS: &str = "<script>alert(1)</script>";

    /// A synthetic run: `seconds` of `per_second` requests with latencies
    /// spread over two orders of magnitude, a few timeouts and resets,
    /// and hostile text wherever a server or user could put some.
    fn summary(rate_mode: bool, seconds: u64, per_second: u64, slow: u64) -> RunSummary {
        let url = Url::parse(&format!("http://127.0.0.1:8080/a?q={XSS}")).unwrap();
        let mut target = Target::get(url);
        target.headers.push(("X-Test".into(), XSS.into()));
        let load = if rate_mode {
            Load::rate_of(per_second as f64, 50)
        } else {
            Load::closed(8)
        };
        let stop = Stop {
            requests: None,
            duration: Some(Duration::from_secs(seconds)),
        };
        let mut second = target.clone();
        second.url = Url::parse(&format!("http://127.0.0.1:8080/b?q={XSS}")).unwrap();
        let config = RunConfig::new(vec![target, second], load, stop);
        let mut total = Recorder::new();
        let mut timeline = Vec::new();
        for sec in 0..seconds {
            let mut r = Recorder::new();
            r.record_connection(200_000, None);
            for i in 0..per_second {
                let intended = sec * SEC + i * (SEC / per_second);
                // Mostly ~1 ms, a tail to ~100 ms, slower later in the run.
                let service = 500_000 + (i % 97) * 20_000 + slow * sec * (i % 13) * 100_000;
                let tail = if i % 199 == 0 { 90_000_000 } else { 0 };
                let sent = intended + 10_000;
                let mut s = Sample {
                    target: (i % 2) as u32,
                    intended,
                    sent: Some(sent),
                    first_byte: Some(sent + service / 2),
                    done: sent + service + tail,
                    status: if i % 50 == 0 { 503 } else { 200 },
                    bytes_in: 250,
                    body_bytes: 100,
                    bytes_out: 80,
                    reused: i > 0,
                    error: None,
                };
                if i % 101 == 7 {
                    s.error = Some(ErrorKind::Timeout);
                    s.status = 0;
                    r.add_example(ErrorKind::Timeout, format!("timed out {XSS}"));
                } else if i % 103 == 9 {
                    s.error = Some(ErrorKind::Reset);
                    s.status = 0;
                    r.add_example(ErrorKind::Reset, format!("reset by peer {XSS}"));
                }
                r.record(&s);
            }
            timeline.push(IntervalRow::from_recorder(
                1_700_000_000 + sec,
                sec as f64,
                &r,
            ));
            total.merge(&r);
        }
        let env = Environment {
            pelt_version: "0.1.0".into(),
            os: "linux".into(),
            arch: "x86_64".into(),
            cores: 2,
            threads: 1,
            target_addrs: vec!["127.0.0.1:8080".into()],
            started_unix_ms: 1_700_000_000_000,
        };
        let mut s = RunSummary {
            config,
            env,
            total,
            timeline,
            duration: Duration::from_secs(seconds),
            elapsed: Duration::from_millis(seconds * 1000 + 120),
            warmup_requests: 42,
            interrupted: false,
            complete: true,
            window: None,
            worker_load: Vec::new(),
            warnings: Vec::new(),
        };
        s.warnings = s.diagnose();
        s.warnings.push(Warning::Errors { ratio: 0.5 });
        s
    }

    /// `(run, key, value)` of every element with a `data-key`.
    fn data_cells(page: &str) -> Vec<(usize, String, String)> {
        let attr = |tag: &str, name: &str| -> Option<String> {
            let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
            let len = tag[start..].find('"')?;
            Some(tag[start..start + len].to_string())
        };
        let mut cells = Vec::new();
        let mut rest = page;
        while let Some(at) = rest.find("data-key=\"") {
            let tag_start = rest[..at].rfind('<').expect("data-key inside a tag");
            let tag_end = at + rest[at..].find('>').expect("tag closes");
            let tag = &rest[tag_start..tag_end];
            let run = attr(tag, "data-run").expect("data-run").parse().unwrap();
            let key = attr(tag, "data-key").unwrap();
            let value = attr(tag, "data-value").expect("data-value");
            cells.push((run, key, value));
            rest = &rest[tag_end..];
        }
        cells
    }

    /// Checks every data-key cell against the JSON report of its run.
    fn assert_cells_match_json(page: &str, summaries: &[&RunSummary]) -> Vec<String> {
        let jsons: Vec<Value> = summaries.iter().map(|s| json_value(s)).collect();
        let cells = data_cells(page);
        assert!(!cells.is_empty());
        for (run, key, value) in &cells {
            let expected = lookup(&jsons[*run], key)
                .unwrap_or_else(|| panic!("data-key {key} is not in the JSON report"));
            match expected {
                Value::Number(n) => {
                    let got: f64 = value.parse().unwrap();
                    assert_eq!(got, n.as_f64().unwrap(), "{key}: page {value}, JSON {n}");
                    if let Some(int) = n.as_u64() {
                        assert_eq!(value, &int.to_string(), "{key} is an integer");
                    }
                }
                Value::Bool(b) => assert_eq!(value, &b.to_string(), "{key}"),
                other => panic!("{key}: a data-value for a non-number {other}"),
            }
        }
        cells.into_iter().map(|(_, k, _)| k).collect()
    }

    #[test]
    fn page_has_the_four_charts_and_every_section() {
        let s = summary(true, 8, 400, 1);
        let page = render(&[Labeled {
            label: "run".into(),
            summary: &s,
        }]);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert_eq!(page.matches("<svg").count(), 4, "four charts");
        for id in [
            "summary",
            "latency-over-time",
            "throughput-over-time",
            "percentile-spectrum",
            "latency-histogram",
            "status-codes",
            "errors",
            "configuration",
            "warnings",
            "targets",
        ] {
            assert!(page.contains(&format!("id=\"{id}\"")), "section {id}");
        }
        // Axis descriptions carry units; the spectrum is labelled by percentile.
        assert!(page.contains("latency (ms"), "latency axis in ms");
        assert!(page.contains("99.9%"));
        assert!(page.contains("time since start (s)"));
        assert!(page.contains(ErrorKind::Timeout.describe()));
        assert!(page.contains(&esc(&Warning::Errors { ratio: 0.5 }.to_string())));
        assert!(
            !page.contains("http://") || !page.contains("src=\"http"),
            "no remote loads"
        );
    }

    #[test]
    fn data_keys_equal_the_json_report() {
        for rate_mode in [true, false] {
            let s = summary(rate_mode, 5, 300, 1);
            let page = render(&[Labeled {
                label: "run".into(),
                summary: &s,
            }]);
            let keys = assert_cells_match_json(&page, &[&s]);
            let latency = if rate_mode {
                "response_time"
            } else {
                "service_time"
            };
            for key in [
                "requests.total",
                "requests.rate",
                "requests.throughput",
                "requests.success_ratio",
                "requests.warmup",
                "duration_s",
                "elapsed_s",
                "bytes.in",
                "bytes.out",
                "connections.opened",
                "interrupted",
                "status_codes.200",
                "status_codes.503",
                "errors.timeout",
                "errors.reset",
                "config.load.connections",
                "environment.cores",
                &format!("latency.{latency}.min_s"),
                &format!("latency.{latency}.mean_s"),
                &format!("latency.{latency}.percentiles_s.p50"),
                &format!("latency.{latency}.percentiles_s.p99"),
                &format!("latency.{latency}.percentiles_s.p99.9"),
                &format!("latency.{latency}.max_s"),
                "targets.0.requests",
                "targets.1.errors",
                "targets.1.response_time.percentiles_s.p99",
                "targets.0.status_classes.5xx",
                "targets.1.error_kinds.timeout",
            ] {
                assert!(keys.iter().any(|k| k == key), "page has {key}");
            }
            assert_eq!(keys.iter().any(|k| k == "offered_rate"), rate_mode);
        }
    }

    #[test]
    fn lookup_handles_dotted_keys_and_arrays() {
        let v = serde_json::json!({"a": {"p99": 1, "p99.9": 2, "b": [10, {"c": 3}]}});
        assert_eq!(lookup(&v, "a.p99"), Some(&serde_json::json!(1)));
        assert_eq!(lookup(&v, "a.p99.9"), Some(&serde_json::json!(2)));
        assert_eq!(lookup(&v, "a.b.1.c"), Some(&serde_json::json!(3)));
        assert_eq!(lookup(&v, "a.b.0"), Some(&serde_json::json!(10)));
        assert_eq!(lookup(&v, "a.nope"), None);
        assert_eq!(lookup(&v, "a.p9"), None);
    }

    #[test]
    fn hostile_text_is_escaped_everywhere() {
        let s = summary(true, 3, 200, 0);
        let other = summary(true, 3, 200, 1);
        // Two runs, so that the labels are in the charts' legends too.
        let page = render(&[
            Labeled {
                label: XSS.into(),
                summary: &s,
            },
            Labeled {
                label: "other".into(),
                summary: &other,
            },
        ]);
        // The page has no script of its own, so any "<script" is injected.
        assert!(
            !page.to_lowercase().contains("<script"),
            "unescaped script tag"
        );
        let escaped = "&lt;script&gt;alert(1)&lt;/script&gt;";
        // URL (header, title and configuration), header value, error
        // examples, and the label in table heads and the SVG legends.
        assert!(page.contains(&format!("q={escaped}")), "URL");
        assert!(page.contains(&format!("X-Test: {escaped}")), "header");
        assert!(page.contains(&format!("timed out {escaped}")), "example");
        assert!(
            page.contains(&format!("reset by peer {escaped}")),
            "example"
        );
        assert!(
            page.contains(&format!("<th class=\"run\">{escaped}</th>")),
            "label"
        );
        for svg in page.split("<svg").skip(1) {
            assert!(svg.contains(escaped), "label in each SVG legend");
        }
    }

    #[test]
    fn quotes_cannot_leave_an_attribute() {
        assert_eq!(esc(r#"a"b'c<d>&e"#), "a&quot;b&#39;c&lt;d&gt;&amp;e");
        let s = summary(false, 2, 100, 0);
        let label = "x\" onmouseover=\"alert(1)";
        let page = render(&[Labeled {
            label: label.into(),
            summary: &s,
        }]);
        assert!(!page.contains("\" onmouseover=\""));
    }

    #[test]
    fn two_runs_overlay_with_a_legend_and_a_column_each() {
        let a = summary(true, 6, 300, 0);
        let b = summary(true, 4, 500, 2);
        let page = render(&[
            Labeled {
                label: "baseline-run".into(),
                summary: &a,
            },
            Labeled {
                label: "candidate-run".into(),
                summary: &b,
            },
        ]);
        assert_eq!(page.matches("<svg").count(), 4);
        // Each chart's legend names both runs.
        for chart in page.split("<svg").skip(1) {
            let svg = &chart[..chart.find("</svg>").unwrap()];
            assert!(svg.contains("baseline-run"), "legend has run 1");
            assert!(svg.contains("candidate-run"), "legend has run 2");
        }
        // Tables: one column per run, each checked against its own JSON.
        assert!(page
            .contains("<th class=\"run\">baseline-run</th><th class=\"run\">candidate-run</th>"));
        assert_cells_match_json(&page, &[&a, &b]);
        let totals: Vec<_> = data_cells(&page)
            .into_iter()
            .filter(|(_, k, _)| k == "requests.total")
            .map(|(run, _, v)| (run, v))
            .collect();
        assert_eq!(totals, [(0, "1800".to_string()), (1, "2000".to_string())]);
    }

    #[test]
    fn empty_run_still_renders() {
        let mut s = summary(false, 1, 10, 0);
        s.total = Recorder::new();
        s.timeline.clear();
        let page = render(&[Labeled {
            label: "empty".into(),
            summary: &s,
        }]);
        assert!(page.contains("No request failed."));
        assert!(page.contains("No timed responses to draw."));
        assert_cells_match_json(&page, &[&s]);
        assert!(render(&[]).contains("no runs"));
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_700_000_000_000), "2023-11-14 22:13:20 UTC");
        assert_eq!(utc(951_825_600_000), "2000-02-29 12:00:00 UTC");
    }
}

/// One variant's latency at each load level: (level, p50 ns, p99 ns).
#[derive(Debug, Clone)]
pub struct LoadSeries {
    pub label: String,
    pub points: Vec<(f64, u64, u64)>,
}

/// A piece of a [`document`] page. Each `Heading` starts a section.
#[derive(Debug, Clone)]
pub enum Block<'a> {
    Heading(String),
    Paragraph(String),
    Table(Table),
    /// Percentile spectra of these runs, overlaid.
    Spectrum(Vec<Labeled<'a>>),
    /// Per-second latency and throughput of these runs, overlaid.
    Timelines(Vec<Labeled<'a>>),
    /// Latency against load, one line per series; the string names the x axis.
    LatencyVsLoad(String, Vec<LoadSeries>),
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
        "<style>{STYLE}td.verdict-regression {{ color: #b3261e; font-weight: 600; }}\n\
         td.verdict-improvement {{ color: #1e7b34; font-weight: 600; }}</style>\n</head>\n<body>\n<main>"
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
            Block::Spectrum(runs) => writeln!(
                o,
                "<figure class=\"chart\">\n{}</figure>\
                 <p class=\"note\">Latency by percentile: each step right is ten times rarer.</p>",
                charts::percentile_spectrum(runs)
            )?,
            Block::Timelines(runs) => writeln!(
                o,
                "<figure class=\"chart\">\n{}</figure><figure class=\"chart\">\n{}</figure>\
                 <p class=\"note\">p50, p90, p99 and max, and requests and errors, in each second.</p>",
                charts::latency_over_time(runs),
                charts::throughput_over_time(runs)
            )?,
            Block::LatencyVsLoad(x_desc, series) => writeln!(
                o,
                "<figure class=\"chart\">\n{}</figure>",
                charts::latency_vs_load(x_desc, series)
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
