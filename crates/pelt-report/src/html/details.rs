//! The detail tables of a run's report: status codes, errors with
//! examples, per-target figures, and the configuration and environment.

use super::tables::{count_span, fixed, group_row, head_row, html_row, num_cell, num_row, Fmt};
use super::{esc, Labeled};
use crate::units::{bytes, thousands};
use pelt_core::{FailureKind, Human, Load, RunSummary, MAX_TIMED_TARGETS};
use serde_json::Value;
use std::fmt::Write;

/// Targets listed per run in the configuration table; a targets file can
/// hold thousands.
const MAX_TARGETS_SHOWN: usize = 20;
/// Rows per run in the per-target table; the rest are in the JSON report.
const MAX_TARGET_ROWS: usize = 100;

pub(super) fn write_statuses(
    o: &mut String,
    runs: &[Labeled<'_>],
    jsons: &[Value],
) -> std::fmt::Result {
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

pub(super) fn write_errors(
    o: &mut String,
    runs: &[Labeled<'_>],
    jsons: &[Value],
) -> std::fmt::Result {
    // One meaning of failed (pelt_core::failure): transport kinds and
    // statuses outside 2xx/3xx, in the order of the first run's counts.
    writeln!(o, "<section id=\"failures\"><h2>Failures</h2>")?;
    let mut kinds: Vec<FailureKind> = Vec::new();
    for r in runs {
        for (k, _) in r.summary.total.failures() {
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
    }
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
        let key = format!("failures.{}", kind.name());
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

/// A table per run of its targets: counts, response-time percentiles, and
/// the status classes and failure kinds of each. Only for runs with more
/// than one target.
pub(super) fn write_targets(
    o: &mut String,
    runs: &[Labeled<'_>],
    jsons: &[Value],
) -> std::fmt::Result {
    if runs.iter().all(|r| r.summary.config.targets.len() < 2) {
        return Ok(());
    }
    let scenario = runs.iter().any(|r| r.summary.config.scenario.is_some());
    writeln!(
        o,
        "<section id=\"targets\"><h2>{}</h2>",
        if scenario {
            "Steps and flows"
        } else {
            "Targets"
        }
    )?;
    if scenario {
        writeln!(
            o,
            "<p>A step's time runs from its intended start (the flow's, then the previous step's end plus think time); a flow's row counts flows (started = completed + failed) and their duration, and is in no figure of the run's requests.</p>"
        )?;
    }
    for (run, (r, json)) in runs.iter().zip(jsons).enumerate() {
        let targets = json["targets"].as_array().map_or(&[][..], Vec::as_slice);
        if runs.len() > 1 {
            writeln!(o, "<h3>{}</h3>", esc(&r.label))?;
        }
        writeln!(
            o,
            "<table class=\"targets\"><thead><tr><th>target</th><th>requests</th><th>ok</th>\
             <th>failed</th><th>p50</th><th>p90</th><th>p99</th><th>statuses</th><th>failures</th></tr></thead><tbody>"
        )?;
        for (j, t) in targets.iter().enumerate().take(MAX_TARGET_ROWS) {
            let method = t["method"].as_str().unwrap_or_default();
            let url = t["url"].as_str().unwrap_or_default();
            // --scenario: rows are steps, then flows, named by the file.
            match r.summary.config.scenario.as_ref().and_then(|sc| {
                sc.names
                    .get(j)
                    .map(|n| (n, if j < sc.steps { "step" } else { "flow" }))
            }) {
                Some((name, kind)) => write!(
                    o,
                    "<tr><th>{kind} <code>{}</code><br><small><code>{} {}</code></small></th>",
                    esc(name),
                    esc(method),
                    esc(url)
                )?,
                None => write!(o, "<tr><th><code>{} {}</code></th>", esc(method), esc(url))?,
            }
            for field in ["requests", "successes", "failed"] {
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
            // Failures by pelt-core's one breakdown: a 503 is a failure
            // here as in every view, not only a transport error.
            for field in ["status_classes", "failures"] {
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
    if s.config.scenario.is_some() {
        // Its rows are steps and flows, in the "Steps and flows" table.
        return esc(&s.config.subject()).to_string();
    }
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

pub(super) fn write_config(
    o: &mut String,
    runs: &[Labeled<'_>],
    jsons: &[Value],
) -> std::fmt::Result {
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
            } => format!("rate {s} {} (open loop)", r.summary.config.rate_unit()),
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
    html_row(
        o,
        "proxy",
        runs.iter()
            .map(|r| match r.summary.config.http.proxy.describe() {
                Some(p) => format!("<code>{}</code>", esc(&p)),
                None => "none".to_string(),
            }),
    );
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
