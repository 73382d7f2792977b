//! The latency section of the text report: percentiles of each measure.

use super::*;

/// https and `--0rtt` runs: handshakes by kind (full, resumed, 0-RTT),
/// each with its count and time (mean, p99). Other runs have none.
fn write_handshakes(o: &mut String, s: &RunSummary) -> std::fmt::Result {
    use crate::handshakes::{line, note, TITLE};
    let Some(line) = line(s) else {
        return Ok(());
    };
    writeln!(o, "  {TITLE}: {line}")?;
    // The note in lines of the report's width, cut between its clauses.
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for clause in note(s).split("; ") {
        if !line.is_empty() && line.len() + clause.len() >= 90 {
            line.push(';');
            lines.push(std::mem::take(&mut line));
        } else if !line.is_empty() {
            line.push_str("; ");
        }
        line.push_str(clause);
    }
    lines.push(line);
    writeln!(o, "    ({})", lines.join("\n     "))
}

/// Runs that met a streamed response: its counts, then its four
/// latencies as rows (p50, p90, p99, max), each named once.
pub(super) fn write_streams(o: &mut String, s: &RunSummary) -> std::fmt::Result {
    let Some(st) = crate::streams::of(s) else {
        return Ok(());
    };
    writeln!(o, "Streamed    ({}) {}", st.framing, st.counts_line())?;
    writeln!(
        o,
        "  {:<38}{:>10}{:>10}{:>10}{:>10}",
        "", "p50", "p90", "p99", "max"
    )?;
    for m in st.measures() {
        let h = m.hist;
        let cell = |p: f64| match h.is_empty() {
            true => "-".to_string(),
            false => human_ns(pelt_core::rank::percentile(h, p)).to_string(),
        };
        writeln!(
            o,
            "  {:<38}{:>10}{:>10}{:>10}{:>10}",
            m.words,
            cell(50.0),
            cell(90.0),
            cell(99.0),
            cell(100.0)
        )?;
    }
    if let Some(line) = st.tokens_per_stream_line() {
        writeln!(o, "  output tokens/s per stream: {line}")?;
    }
    let measures = st.measures();
    let (first, mean) = (&measures[0], &measures[2]);
    writeln!(o, "  first: {}.\n  mean: {}.", first.note, mean.note)?;
    if let Some(m) = measures.get(4) {
        writeln!(o, "  event latency: {}.", m.note)?;
    }
    if st.llm && !st.stats.tokens_per_s.is_empty() {
        writeln!(o, "  tokens/s: {}.", crate::streams::TOKENS_PER_S_NOTE)?;
    }
    writeln!(o)
}

pub(super) fn write_latency(o: &mut String, s: &RunSummary) -> std::fmt::Result {
    let t = &s.total;
    let rate_mode = s.is_rate_mode();
    if t.response.is_empty() {
        // A table of 0.00ns would read as a very fast server.
        return writeln!(
            o,
            "Latency      no responses: nothing was timed (see the failures below)\n"
        );
    }
    let columns: Vec<(&str, LatencyStats)> = if rate_mode {
        vec![
            ("response time*", LatencyStats::of(&t.response)),
            ("service time", LatencyStats::of(&t.service)),
            ("send lag", LatencyStats::of(&t.send_lag)),
            ("first byte", LatencyStats::of(&t.ttfb)),
        ]
    } else {
        // The headline first (pelt_core::Headline), named as JSON names it.
        vec![
            ("service time*", LatencyStats::of(&t.service)),
            ("response time", LatencyStats::of(&t.response)),
            ("first byte", LatencyStats::of(&t.ttfb)),
            // Per connection opened, not per request as ab's row is.
            ("connect**", LatencyStats::of(&t.connect)),
        ]
    };
    write!(o, "Latency     ")?;
    for (name, _) in &columns {
        write!(o, "{name:>16}")?;
    }
    writeln!(o)?;
    type Pick = fn(&LatencyStats) -> String;
    let rows: [(&str, Pick); 4] = [
        ("min", |l| human_ns(l.min).to_string()),
        ("mean", |l| human_ns(l.mean as u64).to_string()),
        ("stdev", |l| human_ns(l.stdev as u64).to_string()),
        ("max", |l| human_ns(l.max).to_string()),
    ];
    // A column with no samples (no connection opened, say) shows a dash.
    let cell = |l: &LatencyStats, text: String| if l.count == 0 { "-".to_string() } else { text };
    for (label, pick) in &rows[..3] {
        write!(o, "  {label:<10}")?;
        for (_, l) in &columns {
            write!(o, "{:>16}", cell(l, pick(l)))?;
        }
        writeln!(o)?;
    }
    for p in pelt_core::PERCENTILES {
        write!(o, "  {:<10}", format!("p{p}"))?;
        for (_, l) in &columns {
            let v = l
                .at(p)
                .expect("LatencyStats::of holds every one of PERCENTILES");
            write!(o, "{:>16}", cell(l, human_ns(v).to_string()))?;
        }
        writeln!(o)?;
    }
    let (label, pick) = &rows[3];
    write!(o, "  {label:<10}")?;
    for (_, l) in &columns {
        write!(o, "{:>16}", cell(l, pick(l)))?;
    }
    writeln!(o)?;
    if rate_mode {
        writeln!(
            o,
            "  * headline: response time runs from each request's scheduled send time, so time spent\n    \
             waiting for a connection counts, as it would for a user (a request the send window\n    \
             sent early is timed from its send). Service time runs from the actual send; send lag\n    \
             is the difference."
        )?;
    } else {
        writeln!(
            o,
            "  * headline: service time, from each request's first byte written to its last byte read.\n    \
             Response time adds what came before the send (a connect, the client's turnaround).\n    \
             Closed loop: each connection waits for a response before sending again, so queueing\n    \
             at the server is not seen (a slow server just gets fewer requests). For the latency\n    \
             users would see at a given load, run with --rate."
        )?;
        writeln!(
            o,
            "  ** connect: once per connection opened ({}), not per request as ab's Connect row;\n    \
             with keep-alive most requests open none.",
            thousands(t.connections)
        )?;
        if let Some((each, all)) = per_request(s) {
            // ab's two "Time per request" lines, the figures ab users look for.
            writeln!(
                o,
                "  Time per request (ab): {} mean, {} across all concurrent requests",
                human_ns(each),
                human_ns(all)
            )?;
        }
    }
    write_handshakes(o, s)?;
    if let Some(mean) = t.read_lag_ns_sum.checked_div(t.kernel_timed) {
        writeln!(
            o,
            "  * clock: {} of {} responses timed at their arrival by the kernel (receive stamps);\n    \
             pelt read them {} later on average (at most {}), which no figure includes.",
            thousands(t.kernel_timed),
            thousands(t.service.len()),
            human_ns(mean),
            human_ns(t.read_lag_ns_max)
        )?;
        if t.tx_stamped > 0 {
            writeln!(
                o,
                "    {} requests' departures timed by the kernel too (transmit stamps, --tx-stamps).",
                thousands(t.tx_stamped)
            )?;
        }
        write_send_window(o, s)?;
    } else if !t.service.is_empty() {
        writeln!(
            o,
            "  * clock: pelt's own, when it read each response (the kernel stamps only HTTP/1.1\n    \
             over TCP on Linux); a busy client adds its lateness to service time."
        )?;
    }
    if !t.tls.is_empty() {
        let l = LatencyStats::of(&t.tls);
        writeln!(
            o,
            "  TLS handshake: mean {}, p99 {}, max {}",
            human_ns(l.mean as u64),
            human_ns(pelt_core::rank::percentile(&t.tls, 99.0)),
            human_ns(l.max)
        )?;
    }
    if let Some(mean) = t.tunnel_ns_sum.checked_div(t.tunnels) {
        // --proxy with https: TCP connect (above, to the proxy) and the
        // CONNECT tunnel are separate steps.
        writeln!(
            o,
            "  Proxy tunnel (CONNECT, after the TCP connect to the proxy): mean {}, max {} ({} tunnels)",
            human_ns(mean),
            human_ns(t.tunnel_ns_max),
            thousands(t.tunnels)
        )?;
    }
    if rate_mode && !t.connect.is_empty() {
        let l = LatencyStats::of(&t.connect);
        writeln!(
            o,
            "  TCP connect: mean {}, p99 {}, max {} ({} connections)",
            human_ns(l.mean as u64),
            human_ns(pelt_core::rank::percentile(&t.connect, 99.0)),
            human_ns(l.max),
            thousands(t.connections)
        )?;
    }
    writeln!(o)
}

/// ab's "Time per request": the run's length times the connections over
/// the requests (each connection's mean time per request, waits between
/// included), and the run's length over the requests ("across all
/// concurrent requests"); nanoseconds. A closed loop without a schedule only.
fn per_request(s: &RunSummary) -> Option<(u64, u64)> {
    let t = &s.total;
    if s.is_rate_mode() || s.config.load.schedule().is_some() || t.requests == 0 {
        return None;
    }
    let all = s.elapsed.as_nanos() as f64 / t.requests as f64;
    let streams = if s.config.http.multiplexed() {
        s.config.http.streams.max(1)
    } else {
        1
    };
    let each = all * f64::from(s.config.load.connections()) * f64::from(streams);
    Some((each as u64, all as u64))
}
