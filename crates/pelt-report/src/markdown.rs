//! Markdown: a summary to paste into an issue, a pull request or a wiki.

use crate::units::{bytes, rate, thousands};
use pelt_core::{human_ns, Human, LatencyStats, RunSummary, TargetStats};
use std::fmt::Write;

/// Pipes and newlines would break a table cell; everything else is text.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// A run's summary as markdown, to paste into an issue or pull request.
pub fn markdown(s: &RunSummary) -> String {
    let mut o = String::new();
    let _ = write_md(&mut o, s);
    o
}

fn write_md(o: &mut String, s: &RunSummary) -> std::fmt::Result {
    let t = &s.total;
    let subject = match &s.config.scenario {
        // Its target rows are steps and flows: the Steps and Flows tables.
        Some(_) => format!("`{}`", cell(&s.config.subject())),
        None => s
            .config
            .targets
            .iter()
            .map(|t| format!("`{} {}`", cell(&t.method), cell(&t.url.to_string())))
            .collect::<Vec<_>>()
            .join(", "),
    };
    writeln!(o, "### pelt run: {subject}\n")?;
    let c = s.config.load.connections();
    let conns = plural(u64::from(c), s.config.sender_noun());
    let unit = s.config.rate_unit();
    let load = match (s.config.load.rate(), s.config.load.schedule()) {
        (Some(r), None) => format!("{} {unit}, up to {conns}", rate(r)),
        (Some(_), Some(sched)) => format!("rate `{sched}` {unit}, up to {conns}"),
        (None, None) => format!("closed loop, {conns}"),
        (None, Some(sched)) => format!("closed loop, connections `{sched}`"),
    };
    writeln!(o, "| | |\n|---|---|")?;
    writeln!(
        o,
        "| load | {load}, {} |",
        plural(s.env.threads as u64, "thread")
    )?;
    writeln!(
        o,
        "| requests | {} in {} |",
        thousands(t.requests),
        Human(s.duration)
    )?;
    if let (Some(n), Some(per_s)) = (s.flows_started(), s.flow_rate()) {
        let offered = s.offered_rate().map_or(String::new(), |r| {
            format!(" of {} flows/s offered", rate(r))
        });
        writeln!(
            o,
            "| flows | {} started ({} flows/s{offered}) |",
            thousands(n),
            rate(per_s)
        )?;
        writeln!(
            o,
            "| sent | {} ({} req/s), {} completed |",
            thousands(s.sent()),
            rate(s.sent_rate()),
            thousands(s.completed())
        )?;
    } else if let Some(offered) = s.offered_rate() {
        writeln!(
            o,
            "| sent | {} ({} {unit} of {} {unit} offered), {} completed |",
            thousands(s.sent()),
            rate(s.sent_rate()),
            rate(offered),
            thousands(s.completed())
        )?;
    } else {
        writeln!(o, "| rate | {} {unit} |", rate(s.request_rate()))?;
    }
    writeln!(o, "| throughput | {} ok/s |", rate(s.throughput()))?;
    writeln!(o, "| success | {:.2}% |", s.success_ratio() * 100.0)?;
    writeln!(
        o,
        "| transfer | {} in, {} out |",
        bytes(t.bytes_in as f64),
        bytes(t.bytes_out as f64)
    )?;
    writeln!(o, "| connections | {} opened |", thousands(t.connections))?;
    if let Some(ws) = crate::websocket::of(s) {
        writeln!(
            o,
            "| {} | {} ({}) |",
            crate::websocket::TITLE,
            ws.line(),
            crate::websocket::NOTE
        )?;
    }
    if let Some(line) = crate::handshakes::line(s) {
        writeln!(
            o,
            "| {} | {line} ({}) |",
            crate::handshakes::TITLE,
            crate::handshakes::note(s)
        )?;
    }
    if let Some(st) = crate::streams::of(s) {
        writeln!(
            o,
            "| streamed responses ({}) | {} |",
            st.framing,
            st.counts_line()
        )?;
        for m in st.measures() {
            let h = m.hist;
            let at = |p: f64| human_ns(pelt_core::rank::percentile(h, p)).to_string();
            match h.is_empty() {
                true => writeln!(o, "| {} | none |", m.words)?,
                false => writeln!(
                    o,
                    "| {} | p50 {}, p90 {}, p99 {}, max {} ({}) |",
                    m.words,
                    at(50.0),
                    at(90.0),
                    at(99.0),
                    at(100.0),
                    m.note
                )?,
            }
        }
        if let Some(line) = st.tokens_per_stream_line() {
            writeln!(
                o,
                "| output tokens/s per stream | {line} ({}) |",
                crate::streams::TOKENS_PER_S_NOTE
            )?;
        }
    }
    if let Some(b) = s.busiest_thread() {
        writeln!(
            o,
            "| client | busiest worker thread on a CPU {:.0}%, waiting for one {:.0}%{} |",
            b.on_cpu * 100.0,
            b.waiting * 100.0,
            if s.window.is_some() {
                " (whole run)"
            } else {
                ""
            }
        )?;
    }
    if let Some(w) = s.window {
        writeln!(
            o,
            "| window | {:.0}s to {:.0}s |",
            w.from_s,
            w.to_s.min(1e9)
        )?;
    }
    writeln!(o)?;

    // The headline first (pelt_core::Headline), named as every view names it.
    let mut cols = vec![(
        format!("{} (headline)", s.headline().name()),
        LatencyStats::of(s.headline().of(t)),
    )];
    if s.is_rate_mode() {
        cols.push(("service time".into(), LatencyStats::of(&t.service)));
        cols.push(("send lag".into(), LatencyStats::of(&t.send_lag)));
    } else {
        cols.push(("response time".into(), LatencyStats::of(&t.response)));
    }
    write!(o, "| |")?;
    for (name, _) in &cols {
        write!(o, " {name} |")?;
    }
    write!(o, "\n|---|")?;
    for _ in &cols {
        write!(o, "---:|")?;
    }
    writeln!(o)?;
    let mut row = |label: &str, f: &dyn Fn(&LatencyStats) -> u64| -> std::fmt::Result {
        write!(o, "| {label} |")?;
        for (_, l) in &cols {
            if l.count == 0 {
                // Not 0.00ns: nothing was timed.
                write!(o, " no responses |")?;
            } else {
                write!(o, " {} |", human_ns(f(l)))?;
            }
        }
        writeln!(o)
    };
    row("min", &|l| l.min)?;
    row("mean", &|l| l.mean as u64)?;
    for p in [50.0, 90.0, 99.0, 99.9] {
        row(&format!("p{p}"), &|l| {
            l.at(p)
                .expect("LatencyStats::of holds every one of PERCENTILES")
        })?;
    }
    row("max", &|l| l.max)?;
    writeln!(o)?;
    o.push_str(&crate::precision::markdown(s));

    let statuses: Vec<String> = t
        .status_counts()
        .map(|(c, n)| format!("{c}: {}", thousands(n)))
        .collect();
    if !statuses.is_empty() {
        writeln!(o, "Status codes: {}\n", statuses.join(", "))?;
    }
    if let Some(sc) = &s.config.scenario {
        write_scenario(o, s, sc)?;
    } else if s.config.targets.len() > 1 {
        write_targets(o, s)?;
    }
    // One meaning of failed (pelt_core::failure).
    let failures = t.failures();
    if failures.is_empty() {
        writeln!(o, "Failed: none\n")?;
    } else {
        writeln!(
            o,
            "Failed: {} of {} requests ({:.2}%)\n",
            thousands(t.failed()),
            thousands(t.requests),
            t.failed_share() * 100.0
        )?;
        writeln!(o, "| failure | count | meaning |\n|---|---:|---|")?;
        for (k, n) in failures {
            writeln!(o, "| {} | {} | {} |", k.name(), thousands(n), k.describe())?;
        }
        writeln!(o)?;
    }
    for w in &s.warnings {
        writeln!(o, "> warning: {}", cell(&w.to_string()))?;
    }
    Ok(())
}

/// Targets shown in the per-target table; the rest are in the JSON report.
const MAX_TARGET_ROWS: usize = 20;

fn write_targets(o: &mut String, s: &RunSummary) -> std::fmt::Result {
    writeln!(
        o,
        "| target | requests | ok | failed | p50 | p90 | p99 | statuses | failures |\n\
         |---|---:|---:|---:|---:|---:|---:|---|---|"
    )?;
    let empty = TargetStats::default();
    for (i, target) in s.config.targets.iter().enumerate().take(MAX_TARGET_ROWS) {
        let n = s.total.targets.get(i).unwrap_or(&empty);
        let [p50, p90, p99] = percentiles(n);
        let classes: Vec<String> = n
            .classes()
            .map(|(c, k)| format!("{c}xx {}", thousands(k)))
            .collect();
        writeln!(
            o,
            "| `{} {}` | {} | {} | {} | {p50} | {p90} | {p99} | {} | {} |",
            cell(&target.method),
            cell(&target.url.to_string()),
            thousands(n.requests()),
            thousands(n.successes()),
            thousands(n.failed()),
            classes.join(", "),
            // pelt-core's one breakdown: statuses outside 2xx/3xx too.
            failures_cell(n),
        )?;
    }
    if s.config.targets.len() > MAX_TARGET_ROWS {
        writeln!(
            o,
            "\n{} more targets in the JSON report.",
            thousands((s.config.targets.len() - MAX_TARGET_ROWS) as u64)
        )?;
    }
    writeln!(o)
}

/// A row's p50, p90 and p99 cells, or dashes when it has no times.
fn percentiles(n: &TargetStats) -> [String; 3] {
    [0.5, 0.9, 0.99].map(|q| match n.response() {
        Some(h) if !h.is_empty() => human_ns(pelt_core::rank::quantile(h, q)).to_string(),
        _ => "–".to_string(),
    })
}

/// A row's failures by kind (pelt-core's one breakdown).
fn failures_cell(n: &TargetStats) -> String {
    let f: Vec<String> = n
        .failures()
        .into_iter()
        .map(|(k, count)| format!("{} {}", k.name(), thousands(count)))
        .collect();
    f.join(", ")
}

/// `--scenario`: the Steps and Flows tables, as the text report has
/// them (a scenario's target rows are its steps, then its flows: never
/// a list of targets, where a flow would read as a failed request).
fn write_scenario(
    o: &mut String,
    s: &RunSummary,
    sc: &pelt_core::ScenarioSource,
) -> std::fmt::Result {
    let empty = TargetStats::default();
    let row = |i: usize| s.total.targets.get(i).unwrap_or(&empty);
    writeln!(
        o,
        "| step | requests | ok | failed | skipped | p50 | p90 | p99 | failures |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---|"
    )?;
    for i in 0..sc.steps.min(sc.names.len()) {
        let n = row(i);
        let [p50, p90, p99] = percentiles(n);
        writeln!(
            o,
            "| {} | {} | {} | {} | {} | {p50} | {p90} | {p99} | {} |",
            cell(&sc.names[i]),
            thousands(n.requests()),
            thousands(n.successes()),
            thousands(n.failed()),
            thousands(sc.skipped(i, |j| row(j).failed())),
            failures_cell(n),
        )?;
    }
    writeln!(
        o,
        "\n| flow | started | completed | failed | p50 | p90 | p99 | failures |\n\
         |---|---:|---:|---:|---:|---:|---:|---|"
    )?;
    for i in sc.flows() {
        let n = row(i);
        let [p50, p90, p99] = percentiles(n);
        writeln!(
            o,
            "| {} | {} | {} | {} | {p50} | {p90} | {p99} | {} |",
            cell(&sc.names[i]),
            thousands(n.requests()),
            thousands(n.successes()),
            thousands(n.failed()),
            failures_cell(n),
        )?;
    }
    writeln!(
        o,
        "\nSteps: response time from each step's intended start. Flows: duration from the flow's start to its last step's end.\n"
    )
}

/// `1 thread`, `2 threads`.
fn plural(n: u64, word: &str) -> String {
    match n {
        1 => format!("1 {word}"),
        n => format!("{} {word}s", thousands(n)),
    }
}
