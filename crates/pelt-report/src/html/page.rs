//! A run's report page (one run, or several overlaid): its frame, the
//! warnings, the summary table and the charts. The detail tables are in
//! [`super::details`].

use super::details::{write_config, write_errors, write_statuses, write_targets};
use super::style::STYLE;
use super::tables::{fixed, group_row, head_row, html_row, num_row, utc, Fmt};
use super::{charts, esc, Labeled};
use pelt_analyze::latency::Latency;
use pelt_core::RunSummary;
use serde_json::Value;
use std::fmt::Write;

/// `response_time` in rate mode, `service_time` in a closed loop: the
/// JSON report's `headline` ([`pelt_core::Headline`]).
fn headline_key(s: &RunSummary) -> &'static str {
    s.headline().key()
}

fn describe_target(s: &RunSummary) -> String {
    s.config.subject()
}

pub(super) fn write_page(
    o: &mut String,
    runs: &[Labeled<'_>],
    jsons: &[Value],
) -> std::fmt::Result {
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
    let rows: [(&str, &'static str, Fmt); 12] = [
        ("requests (planned)", "requests.total", Fmt::Count),
        ("sent", "requests.sent", Fmt::Count),
        ("completed", "requests.completed", Fmt::Count),
        ("succeeded (2xx/3xx)", "requests.successes", Fmt::Count),
        ("failed", "requests.failed", Fmt::Count),
        (
            "of which no response (transport)",
            "requests.transport_errors",
            Fmt::Count,
        ),
        (
            "of which a status outside 2xx/3xx",
            "requests.non_2xx_3xx",
            Fmt::Count,
        ),
        (
            "of which a 2xx/3xx a check or extraction failed",
            "requests.judged_failed",
            Fmt::Count,
        ),
        ("rate (sent)", "requests.sent_rate", Fmt::PerSecond),
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
    let rows: [(&str, &'static str, Fmt); 7] = [
        ("duration (planned)", "duration_s", Fmt::Seconds),
        ("sending (to the last send)", "sending_s", Fmt::Seconds),
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
    let handshakes = runs.iter().any(|r| r.summary.total.handshakes.is_some());
    if handshakes {
        // https, --0rtt: the text report's line, in a row of its own.
        html_row(
            o,
            crate::handshakes::TITLE,
            runs.iter()
                .map(|r| match crate::handshakes::line(r.summary) {
                    Some(line) => esc(&line),
                    None => "<span class=\"none\">not counted</span>".to_string(),
                }),
        );
    }
    if runs.iter().any(|r| r.summary.config.is_ws()) {
        // Issue 40: upgrades and closes, the text report's line.
        html_row(
            o,
            "WebSocket upgrades and closes",
            runs.iter().map(|r| match crate::websocket::of(r.summary) {
                Some(ws) => esc(&ws.line()),
                None => "<span class=\"none\">not a WebSocket run</span>".to_string(),
            }),
        );
    }
    if runs.iter().any(|r| r.summary.total.streamed.is_some()) {
        // Issue 38: streamed responses, from JSON's `streamed`.
        group_row(o, "Streamed responses", n);
        html_row(
            o,
            "streams and events (framing)",
            runs.iter().map(|r| match crate::streams::of(r.summary) {
                Some(st) => esc(&format!("{}: {}", st.framing, st.counts_line())),
                None => "<span class=\"none\">no streams</span>".to_string(),
            }),
        );
        let keys: Vec<(&str, &str)> = crate::streams::of(
            runs.iter()
                .find(|r| r.summary.total.streamed.is_some())
                .expect("one run has streams")
                .summary,
        )
        .expect("it has streams")
        .measures()
        .iter()
        .map(|m| (m.key, m.words))
        .collect();
        for (key, words) in keys {
            for (stat, label) in [
                ("percentiles_s.p50", "p50"),
                ("percentiles_s.p99", "p99"),
                ("max_s", "max"),
            ] {
                num_row(
                    o,
                    &format!("{words}: {label}"),
                    jsons,
                    &move |_| format!("streamed.{key}.{stat}"),
                    Fmt::Seconds,
                );
            }
        }
        if runs.iter().any(|r| {
            crate::streams::of(r.summary).is_some_and(|st| st.tokens_per_stream_line().is_some())
        }) {
            html_row(
                o,
                "output tokens/s per stream",
                runs.iter().map(|r| {
                    match crate::streams::of(r.summary).and_then(|st| st.tokens_per_stream_line()) {
                        Some(line) => esc(&line),
                        None => "<span class=\"none\">none</span>".to_string(),
                    }
                }),
            );
        }
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
    // Each percentile's 95 % interval (of the headline latency, as the
    // text report gives it), with what to do when it is too wide.
    for p in [50.0, 90.0, 99.0, 99.9] {
        html_row(
            o,
            &format!("p{p}: 95% interval"),
            runs.iter().map(|r| {
                let h = r.summary.headline().of(&r.summary.total);
                match pelt_core::summary::quantile_ci::interval(h, p) {
                    Some(ci) => {
                        let mut cell = format!(
                            "{} {}",
                            crate::precision::range(&ci),
                            crate::precision::half_width(&ci)
                        );
                        if let Some(a) = crate::precision::advice(&ci, r.summary) {
                            cell.push_str(&format!(" ({a})"));
                        }
                        esc(&cell)
                    }
                    None => "<span class=\"none\">nothing timed</span>".to_string(),
                }
            }),
        );
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
    if handshakes {
        writeln!(
            o,
            "<p class=\"note\">Handshakes by kind: {}.</p>",
            esc(crate::handshakes::NOTE)
        )?;
    }
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
            "Throughput and failures over time",
            "Requests and failed requests completed per second, each second's count over the part of it the run covered (the first and last seconds are partial; one shorter than 0.1 s is left out).",
            charts::throughput_over_time(runs),
        ),
        (
            "percentile-spectrum",
            "Latency by percentile",
            "The whole distribution, tail stretched: each step right is ten times rarer.",
            charts::percentile_spectrum(runs, Latency::Headline),
        ),
        (
            "latency-histogram",
            "Latency histogram",
            "Share of timed requests in log-spaced latency buckets.",
            charts::histogram(runs, Latency::Headline),
        ),
    ];
    for (id, title, note, svg) in sections {
        write_chart(o, id, title, note, &svg)?;
    }
    // Issue 38: streamed responses' first event and gaps, by percentile.
    if let Some(st) = runs.iter().find_map(|r| crate::streams::of(r.summary)) {
        let measures = st.measures();
        let ids = [
            "stream-first-event",
            "stream-gaps",
            "",
            "",
            "stream-event-latency",
        ];
        for (id, m) in ids
            .into_iter()
            .zip(&measures)
            .filter(|(id, _)| !id.is_empty())
        {
            let empty = pelt_core::histogram::new_histogram();
            let hists: Vec<&pelt_core::Histogram<u64>> = runs
                .iter()
                .map(|r| {
                    r.summary
                        .total
                        .streamed
                        .as_deref()
                        .map_or(&empty, |s| match m.key {
                            "first_event" => &s.first_event,
                            "event_latency" => &s.event_latency,
                            _ => &s.gaps,
                        })
                })
                .collect();
            let title = format!("Streams: {} by percentile", m.words);
            let svg = charts::spectrum_of(runs, &hists, "streamed responses");
            write_chart(o, id, &title, m.note, &svg)?;
        }
    }
    Ok(())
}

/// One chart's section: its title, the figure, a note under it.
fn write_chart(o: &mut String, id: &str, title: &str, note: &str, svg: &str) -> std::fmt::Result {
    writeln!(
        o,
        "<section id=\"{id}\"><h2>{}</h2><figure class=\"chart\">\n{svg}</figure>\
         <p class=\"note\">{}</p></section>",
        esc(title),
        esc(note)
    )
}
