//! The default human report.
//!
//! It carries everything ab and vegeta print for a run (counts, rates,
//! transfer, percentiles, status codes, failures by kind, keep-alive use,
//! connection times, a histogram), and says which latency is the headline
//! and what it can and cannot see.

use crate::units::{bytes, rate, thousands};
use hdrhistogram::Histogram;
use pelt_core::summary::GRACE;
use pelt_core::{
    human_ns, ErrorKind, FailureKind, Human, LatencyStats, Load, RunSummary, TargetStats,
    MAX_TIMED_TARGETS,
};
use std::fmt::{self, Write};
use std::time::Duration;

/// Rows of the per-second timeline printed before it is left to JSON/CSV.
const MAX_TIMELINE_ROWS: usize = 60;
const HISTOGRAM_BUCKETS: u64 = 10;
/// Targets listed one per line before the rest are left to JSON.
const MAX_TARGET_ROWS: usize = 20;
const BAR_WIDTH: u64 = 40;

/// Renders the text report.
pub fn text(s: &RunSummary) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail; `let _` keeps the happy path plain.
    let _ = write_report(&mut out, s);
    out
}

fn write_report(o: &mut String, s: &RunSummary) -> std::fmt::Result {
    let t = &s.total;
    let c = &s.config;
    let target = match c.targets.as_slice() {
        [one] => format!("{} {}", one.method, one.url),
        many => format!("{} targets", many.len()),
    };
    writeln!(o, "pelt {}  {target}", s.env.pelt_version)?;
    let stop = c.effective_stop();
    let mut limit = Vec::new();
    if let Some(n) = stop.requests {
        limit.push(format!("{} requests", thousands(n)));
    }
    if let Some(d) = stop.duration {
        limit.push(format!("{}", Human(d)));
    }
    let warmup = if c.warmup.is_zero() {
        String::new()
    } else {
        format!(" after {} warm-up", Human(c.warmup))
    };
    // "1 connection", not "1 connections".
    let conns = match c.load.connections() {
        1 => "1 connection".to_string(),
        n => format!("{n} connections"),
    };
    let load = match &c.load {
        Load::Closed {
            connections,
            schedule: Some(s),
        } => format!("closed loop, connections {s} (up to {connections})"),
        Load::Closed { schedule: None, .. } => match c.think {
            Some(t) if t.min == t.max => {
                format!("closed loop, {conns}, {} think time", Human(t.min))
            }
            // `0-200ms`, not `0.00ns-200ms`.
            Some(t) => format!(
                "closed loop, {conns}, {}-{} think time",
                if t.min.is_zero() {
                    "0".to_string()
                } else {
                    Human(t.min).to_string()
                },
                Human(t.max)
            ),
            None => format!("closed loop, {conns}"),
        },
        Load::Rate {
            rate: r,
            schedule: None,
            ..
        } => {
            format!("{} req/s, up to {conns}", rate(*r))
        }
        Load::Rate {
            schedule: Some(s), ..
        } => {
            format!("rate {s} req/s, up to {conns}")
        }
    };
    writeln!(
        o,
        "Load         {load}, {} thread{}, {}{warmup}{}",
        s.env.threads,
        if s.env.threads == 1 { "" } else { "s" },
        limit.join(" or "),
        match (c.http.multiplexed(), c.http.keepalive) {
            (true, _) => format!(
                ", {} with {} stream{} per connection",
                c.http.protocol(),
                c.http.streams,
                if c.http.streams == 1 { "" } else { "s" }
            ),
            (false, true) => String::new(),
            (false, false) => ", no keep-alive".to_string(),
        }
    )?;
    // ab's "Server Software". A server that sends no `Server` header gets
    // no line: there is nothing to say about it.
    if let Some(server) = &s.server_software {
        writeln!(o, "Server       {server}")?;
    }
    writeln!(o)?;

    match (s.offered_rate(), c.load.schedule()) {
        // Rate mode: the schedule plans requests whether or not the client
        // manages to send them, so planned, sent and completed are three
        // numbers, and the rate sent is set beside the rate offered.
        (Some(offered), schedule) => {
            writeln!(
            o,
            "Requests     {} planned in {}, {} sent ({} req/s of {} req/s offered{}), {} completed",
            thousands(t.requests),
            Human(s.duration),
            thousands(s.sent()),
            rate(s.sent_rate()),
            rate(offered),
            if schedule.is_some() { " on average" } else { "" },
            thousands(s.completed()),
        )?
        }
        (None, _) => {
            let unsent = t.requests - s.sent();
            writeln!(
                o,
                "Requests     {} in {} ({} req/s){}",
                thousands(t.requests),
                Human(s.duration),
                rate(s.request_rate()),
                if unsent > 0 {
                    format!(", {} of them never sent", thousands(unsent))
                } else {
                    String::new()
                }
            )?
        }
    }
    let failed = t.requests - t.successes;
    writeln!(
        o,
        "Responses    {} ok ({:.2}%), {} failed; {} ok/s over {}",
        thousands(t.successes),
        s.success_ratio() * 100.0,
        thousands(failed),
        rate(s.throughput()),
        Human(s.elapsed),
    )?;
    write_overrun(o, s)?;
    let secs = s.elapsed.as_secs_f64().max(1e-9);
    let responses = t.requests - t.error_count() + t.errors[ErrorKind::Length.index()];
    writeln!(
        o,
        "Transfer     {} in ({}/s; {} per response, body {}), {} out ({} per request)",
        bytes(t.bytes_in as f64),
        bytes(t.bytes_in as f64 / secs),
        bytes(t.bytes_in as f64 / responses.max(1) as f64),
        bytes(t.body_bytes_in as f64 / responses.max(1) as f64),
        bytes(t.bytes_out as f64),
        bytes(t.bytes_out as f64 / t.requests.max(1) as f64),
    )?;
    let reuse = if t.requests > 0 {
        t.reused as f64 * 100.0 / t.requests as f64
    } else {
        0.0
    };
    writeln!(
        o,
        "Connections  {} opened; {} requests reused one (keep-alive {reuse:.1}%)",
        thousands(t.connections),
        thousands(t.reused),
    )?;
    if t.retried > 0 {
        // Shown, never hidden: each one cost the server a request it
        // never answered, and pelt a round trip.
        writeln!(
            o,
            "             {} request{} retried after the server closed an idle connection{}",
            thousands(t.retried),
            if t.retried == 1 { "" } else { "s" },
            if t.retried * 10 >= t.requests.max(1) {
                " (it closes them without saying so: --no-keepalive avoids the round trips)"
            } else {
                ""
            },
        )?;
    }
    if let Some(proxy) = s.config.http.proxy.describe() {
        // What was measured includes the proxy: say it was there.
        writeln!(o, "Proxy        through {proxy}")?;
    }
    if !s.config.http.session.is_off() {
        // --cookies/--login: how many requests the jars changed.
        writeln!(
            o,
            "Session      {} requests carried a cookie; {} logins (untimed, not among the requests)",
            thousands(t.with_cookie),
            thousands(t.logins),
        )?;
        if s.is_rate_mode() && !c.http.multiplexed() && t.connections < t.logins {
            // Every sender of the pool logs in; a light rate uses few of
            // them. Each connection is one sender's, so no more were used.
            writeln!(
                o,
                "             at most {} of the {} logged-in senders sent requests (rate mode logs in \
                 the whole -c pool: -c {} would have done)",
                thousands(t.connections),
                thousands(t.logins),
                t.connections.max(1)
            )?;
        }
    }
    if let Some(b) = s.busiest_thread() {
        // pelt's own load, so that a client-bound run says so.
        writeln!(
            o,
            "Client       busiest of {} worker thread{} on a CPU {:.0}% of the run, waiting for one {:.0}%{}",
            s.worker_load.len(),
            if s.worker_load.len() == 1 { "" } else { "s" },
            b.on_cpu * 100.0,
            b.waiting * 100.0,
            // Measured per thread over the whole run, not per second.
            if s.window.is_some() { " (whole run)" } else { "" }
        )?;
    }
    if s.warmup_requests > 0 {
        writeln!(
            o,
            "Warm-up      {} requests excluded from every figure",
            thousands(s.warmup_requests)
        )?;
    }
    writeln!(o)?;

    write_latency(o, s)?;
    o.push_str(&crate::precision::text(s));
    writeln!(o)?;
    write_histogram(o, &t.response)?;

    if c.targets.len() > 1 {
        write_targets(o, s)?;
    }

    let statuses: Vec<String> = t
        .status_counts()
        .map(|(code, n)| format!("{code}: {}", thousands(n)))
        .collect();
    if !statuses.is_empty() {
        writeln!(o, "Status codes {}", statuses.join("  "))?;
    }
    let non2xx = t.non_success_statuses();
    if non2xx > 0 {
        writeln!(
            o,
            "             {} responses outside 2xx/3xx",
            thousands(non2xx)
        )?;
    }
    // One meaning of failed (pelt_core::failure): a transport failure or
    // a status outside 2xx/3xx, each by kind.
    let failures = t.failures();
    if failures.is_empty() {
        writeln!(o, "Failed       none")?;
    } else {
        writeln!(
            o,
            "Failed       {} of {} requests ({:.2}%): no response, or a status outside 2xx/3xx",
            thousands(t.failed()),
            thousands(t.requests),
            t.failed_share() * 100.0
        )?;
        for (kind, n) in failures {
            writeln!(
                o,
                "  {:<17}{:>10}  {}",
                kind.name(),
                thousands(n),
                kind.describe()
            )?;
            if let FailureKind::Error(kind) = kind {
                for e in t.examples.iter().filter(|e| e.kind == kind) {
                    writeln!(o, "  {:<17}{:>10}  e.g. {}", "", "", e.message)?;
                }
            }
        }
    }

    write_timeline(o, s)?;

    for w in &s.warnings {
        writeln!(o, "\nwarning: {w}")?;
    }
    Ok(())
}

/// One line per target: counts, response-time percentiles, and the mix of
/// status classes and failure kinds.
fn write_targets(o: &mut String, s: &RunSummary) -> std::fmt::Result {
    let t = &s.total;
    let c = &s.config;
    writeln!(
        o,
        "Targets      requests        ok    failed       p50       p90       p99  target (statuses; failures)"
    )?;
    let empty = TargetStats::default();
    for (i, target) in c.targets.iter().enumerate().take(MAX_TARGET_ROWS) {
        let n = t.targets.get(i).unwrap_or(&empty);
        let p = |q: f64| match &n.response {
            Some(h) if !h.is_empty() => human_ns(pelt_core::rank::quantile(h, q)).to_string(),
            _ => "-".to_string(),
        };
        let mut mix: String = n
            .classes()
            .map(|(class, k)| format!("{class}xx {}", thousands(k)))
            .collect::<Vec<_>>()
            .join(", ");
        let failures: Vec<String> = ErrorKind::ALL
            .iter()
            .filter(|k| n.error_kinds[k.index()] > 0)
            .map(|k| format!("{} {}", k.name(), thousands(n.error_kinds[k.index()])))
            .collect();
        if !failures.is_empty() {
            if !mix.is_empty() {
                mix.push_str("; ");
            }
            mix.push_str(&failures.join(", "));
        }
        let weight = if target.weight == 1 {
            String::new()
        } else {
            format!(" (weight {})", target.weight)
        };
        writeln!(
            o,
            "  {:>19} {:>9} {:>9} {:>9} {:>9} {:>9}  {} {}{weight}  ({})",
            thousands(n.requests),
            thousands(n.successes),
            thousands(n.failed()),
            p(0.5),
            p(0.9),
            p(0.99),
            target.method,
            target.url,
            if mix.is_empty() { "none" } else { &mix },
        )?;
    }
    if c.targets.len() > MAX_TARGET_ROWS {
        writeln!(
            o,
            "  ... {} more targets in --format json",
            c.targets.len() - MAX_TARGET_ROWS
        )?;
    }
    if c.targets.len() > MAX_TIMED_TARGETS {
        writeln!(
            o,
            "  targets after the first {} are counted but not timed (no per-target percentiles)",
            thousands(MAX_TIMED_TARGETS as u64)
        )?;
    }
    // Said once, so that nobody reads a target's p99 beside the run's as
    // if they were as exact.
    writeln!(
        o,
        "  per-target percentiles are within {}% (the run's above within 0.1%)",
        pelt_core::recorder::TARGET_PRECISION_PERCENT
    )?;
    writeln!(o)
}

/// Why the run took longer than planned, when it did: late sending (a
/// client that fell behind sends requests due earlier after the planned
/// end) and the wait for responses still due. Users otherwise read `-d 3s`
/// and a 5 s run as a bug.
fn write_overrun(o: &mut String, s: &RunSummary) -> fmt::Result {
    let wait = s.straggler_wait();
    // A few milliseconds for the last responses is the normal end of a run.
    if !s.sent_late() && wait < Duration::from_millis(100) {
        return Ok(());
    }
    // Three digits can round both to 4.00s: then show milliseconds.
    let (took, planned) = match Human(s.elapsed).to_string() == Human(s.duration).to_string() {
        true => (
            format!("{:.3}s", s.elapsed.as_secs_f64()),
            format!("{:.3}s", s.duration.as_secs_f64()),
        ),
        false => (Human(s.elapsed).to_string(), Human(s.duration).to_string()),
    };
    writeln!(
        o,
        "Overrun      the run took {took}, not the {planned} planned:",
    )?;
    if s.sent_late() {
        writeln!(
            o,
            "             requests due earlier waited for a free connection and went out late, until {}",
            Human(s.sending)
        )?;
    }
    if wait >= Duration::from_millis(100) {
        writeln!(
            o,
            "             {} {} waiting for responses still due (at most {}, the shorter of 2s and \
             --timeout;\n             what was still pending then counts as unfinished)",
            if s.sent_late() { "then" } else { "sending ended on time, then" },
            Human(wait),
            Human(GRACE.min(s.config.http.timeout)),
        )?;
    }
    Ok(())
}

fn write_latency(o: &mut String, s: &RunSummary) -> std::fmt::Result {
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
        vec![
            ("latency*", LatencyStats::of(&t.response)),
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
            write!(o, "{:>16}", cell(l, human_ns(l.at(p)).to_string()))?;
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
            "  * closed loop: each connection waits for a response before sending again, so queueing\n    \
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
            human_ns(l.at(99.0)),
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
            human_ns(l.at(99.0)),
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

/// A histogram of response times in log-spaced buckets from the fastest
/// response to p99.9 (latency spans orders of magnitude; equal-width
/// buckets would put nearly everything in the first), plus one bucket for
/// the tail beyond p99.9.
/// Rate runs timed by the kernel: the send window the run used, since it
/// sets most of the send lag and read lag above.
fn write_send_window(o: &mut String, s: &RunSummary) -> fmt::Result {
    let c = &s.config;
    let (Some(width), Some(rate)) = (c.peak_send_window(), c.load.rate()) else {
        return Ok(());
    };
    if width.is_zero() || c.http.follow > 0 {
        return Ok(());
    }
    let at = match c.load.schedule() {
        Some(_) => "at the peak rate",
        None => "at",
    };
    let how = match c.send_window.is_auto() {
        true => "auto: about eight requests' spacing, at most 1ms",
        false => "--send-window",
    };
    writeln!(
        o,
        "  * send window: {} {at} {} req/s ({how}):\n    \
         one wake-up sends the requests due within ±{} and reads what has arrived;\n    \
         --send-window 0 wakes for each request (more CPU).",
        Human(width),
        thousands(rate.round() as u64),
        Human(width / 2),
    )
}

fn write_histogram(o: &mut String, h: &Histogram<u64>) -> std::fmt::Result {
    if h.len() < 2 || h.max() == h.min() {
        return Ok(());
    }
    let low = h.min().max(1);
    let top = pelt_core::rank::quantile(h, 0.999).max(low + 1);
    let ratio = (top as f64 / low as f64).powf(1.0 / HISTOGRAM_BUCKETS as f64);
    let mut buckets = Vec::new();
    let mut from = 0u64;
    for i in 1..=HISTOGRAM_BUCKETS {
        let to = if i == HISTOGRAM_BUCKETS {
            top
        } else {
            ((low as f64) * ratio.powi(i as i32)) as u64
        };
        if to < from {
            continue;
        }
        buckets.push((to, h.count_between(from, to)));
        from = h.next_non_equivalent(to);
    }
    if h.max() >= from {
        let tail = h.count_between(from, h.max());
        match buckets.last_mut() {
            // The max is within display rounding of p99.9 ("304ms" twice
            // would read as a bug): one row up to the max holds both.
            Some(last) if human_ns(last.0).to_string() == human_ns(h.max()).to_string() => {
                *last = (h.max(), last.1 + tail);
            }
            _ => buckets.push((h.max(), tail)),
        }
    }
    let peak = buckets.iter().map(|b| b.1).max().unwrap_or(1).max(1);
    writeln!(o, "Response time histogram (up to, count)")?;
    for (to, n) in buckets {
        let bar = (n * BAR_WIDTH).div_ceil(peak) as usize;
        writeln!(
            o,
            "  {:>9} {:>10} {}",
            human_ns(to).to_string(),
            thousands(n),
            "■".repeat(bar)
        )?;
    }
    writeln!(o)
}

fn write_timeline(o: &mut String, s: &RunSummary) -> std::fmt::Result {
    if s.timeline.len() < 2 {
        return Ok(());
    }
    writeln!(
        o,
        "\nPer second (response time of the requests completed in it)"
    )?;
    // With a schedule, what it planned for each second, beside the result.
    let (plan_title, plan): (&str, fn(&pelt_core::IntervalRow) -> String) =
        match (s.config.load.schedule(), s.is_rate_mode()) {
            (None, _) => ("", |_| String::new()),
            (Some(_), true) => ("offered", |r| {
                r.offered
                    .map_or(String::new(), |n| thousands(n.round() as u64))
            }),
            (Some(_), false) => ("conns", |r| {
                r.active_connections
                    .map_or(String::new(), |n| n.to_string())
            }),
        };
    let cell = |v: String| {
        if plan_title.is_empty() {
            String::new()
        } else {
            format!(" {v:>9}")
        }
    };
    writeln!(
        o,
        "  {:>11}{} {:>10} {:>9} {:>8} {:>10} {:>10} {:>10}",
        "seconds",
        cell(plan_title.into()),
        "requests",
        "req/s",
        "failed",
        "p50",
        "p99",
        "max"
    )?;
    // Intervals follow wall-clock seconds, so the first and last are
    // partial: label each with the part of the run it covers, and give
    // its rate over that part (a partial second's count is no dip).
    for row in s.timeline.iter().take(MAX_TIMELINE_ROWS) {
        let (from, to) = s.row_span(row);
        if to <= from && row.requests == 0 {
            // A wall-clock second that began as the run ended, with
            // nothing in it: a `4.00-4.00 0 - 0 0.00ns` row says nothing.
            continue;
        }
        let digits = if to - from < pelt_core::summary::MIN_RATE_SPAN_S {
            2
        } else {
            1
        };
        writeln!(
            o,
            "  {:>11}{} {:>10} {:>9} {:>8} {:>10} {:>10} {:>10}",
            format!("{from:.digits$}-{to:.digits$}"),
            cell(plan(row)),
            thousands(row.requests),
            s.row_rate(row).map_or("-".to_string(), rate),
            thousands(row.failed),
            human_ns(row.p50_ns).to_string(),
            human_ns(row.p99_ns).to_string(),
            human_ns(row.max_ns).to_string(),
        )?;
    }
    if s.timeline.len() > MAX_TIMELINE_ROWS {
        writeln!(
            o,
            "  ... {} more seconds in --format json",
            s.timeline.len() - MAX_TIMELINE_ROWS
        )?;
    }
    Ok(())
}

/// `--buckets`: the headline latency counted into the user's ranges, in
/// vegeta's `hist` layout, after the report.
pub(crate) fn append_buckets(o: &mut String, s: &RunSummary, b: &pelt_core::buckets::Buckets) {
    let counts = b.count(&s.total.response);
    let _ = writeln!(o, "\nLatency buckets (headline latency; --buckets)");
    let _ = writeln!(
        o,
        "  {:<22} {:>10} {:>8}  histogram",
        "bucket", "count", "share"
    );
    let bound = |d: std::time::Duration| {
        if d.is_zero() {
            "0".to_string()
        } else {
            Human(d).to_string()
        }
    };
    for c in counts {
        let range = match c.to {
            Some(to) => format!("[{}, {})", bound(c.from), bound(to)),
            None => format!("[{}, +inf)", bound(c.from)),
        };
        let bar = "#".repeat((c.share * 50.0).round() as usize);
        let _ = writeln!(
            o,
            "  {range:<22} {:>10} {:>7.2}%  {bar}",
            thousands(c.count),
            c.share * 100.0
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pelt_core::{Environment, IntervalRow, Recorder, RunConfig, Sample, Stop, Target, Url};

    const SEC: u64 = 1_000_000_000;

    /// A closed-loop run of `seconds` with ten 1 ms requests a second,
    /// a timeline row per second, and `elapsed` as given.
    fn run(seconds: u64, elapsed: Duration) -> RunSummary {
        let target = Target::get(Url::parse("http://127.0.0.1:8080/").unwrap());
        let stop = Stop {
            requests: None,
            duration: Some(Duration::from_secs(seconds)),
        };
        let config = RunConfig::new(vec![target], Load::closed(2), stop);
        let mut total = Recorder::new();
        let mut timeline = Vec::new();
        for sec in 0..seconds {
            let mut r = Recorder::new();
            for i in 0..10 {
                let at = sec * SEC + i * SEC / 10;
                r.record(&Sample {
                    target: 0,
                    intended: at,
                    sent: Some(at),
                    first_byte: Some(at + 500_000),
                    done: at + 1_000_000,
                    status: 200,
                    bytes_in: 100,
                    body_bytes: 10,
                    bytes_out: 50,
                    reused: i > 0,
                    error: None,
                });
            }
            timeline.push(IntervalRow::from_recorder(
                1_700_000_000 + sec,
                sec as f64,
                &r,
            ));
            total.merge(&r);
        }
        RunSummary {
            config,
            env: Environment {
                pelt_version: "0.1.0".into(),
                os: "linux".into(),
                arch: "x86_64".into(),
                cores: 2,
                threads: 1,
                target_addrs: vec!["127.0.0.1:8080".into()],
                started_unix_ms: 1_700_000_000_000,
                link: None,
                debug_build: false,
            },
            total,
            timeline,
            duration: Duration::from_secs(seconds),
            elapsed,
            sending: Duration::from_secs(seconds),
            warmup_requests: 0,
            interrupted: false,
            complete: true,
            window: None,
            worker_load: Vec::new(),
            server_software: None,
            stopped_by: None,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn small_report_wordings_of_issue_22() {
        // A wall-clock second that began as the run ended: no empty row.
        let mut s = run(4, Duration::from_secs(4));
        s.timeline.push(IntervalRow::from_recorder(
            1_700_000_004,
            4.0,
            &Recorder::new(),
        ));
        let t = text(&s);
        assert!(t.contains("3.0-4.0"), "{t}");
        assert!(!t.contains("4.00-4.00") && !t.contains("4.0-4.0"), "{t}");

        // Sent 4 ms late: the overrun names two different lengths.
        let mut s = run(4, Duration::from_millis(4_150));
        s.sending = Duration::from_millis(4_004);
        let t = text(&s);
        assert!(
            t.contains("the run took 4.15s, not the 4.00s planned")
                || t.contains("the run took 4.150s, not the 4.000s planned"),
            "{t}"
        );
        let mut s = run(4, Duration::from_millis(4_004));
        s.sending = Duration::from_millis(4_004);
        let t = text(&s);
        assert!(
            t.contains("the run took 4.004s, not the 4.000s planned"),
            "{t}"
        );

        // A think time from 0: `0-200ms`, not `0.00ns-200ms`.
        let mut s = run(2, Duration::from_secs(2));
        s.config.think = Some(pelt_core::ThinkTime {
            min: Duration::ZERO,
            max: Duration::from_millis(200),
        });
        let t = text(&s);
        assert!(t.contains(", 0-200ms think time"), "{t}");
        let mut one = run(2, Duration::from_secs(2));
        one.config.load = Load::closed(1);
        let t = text(&one);
        assert!(t.contains("closed loop, 1 connection, 1 thread"), "{t}");
        assert!(!t.contains("0.00ns-"), "{t}");

        // A run through a proxy says so.
        let mut s = run(2, Duration::from_secs(2));
        let proxy = pelt_core::Proxy {
            host: "127.0.0.1".into(),
            port: 8888,
            authorization: Some("Basic c2VjcmV0".into()),
            authenticated: true,
        };
        s.config.http.proxy.http = Some(proxy.clone());
        s.config.http.proxy.https = Some(proxy);
        let t = text(&s);
        assert!(
            t.contains("Proxy        through http://127.0.0.1:8888 (with credentials)"),
            "{t}"
        );
        assert!(!t.contains("c2VjcmV0"), "{t}");
        assert!(!text(&run(2, Duration::from_secs(2))).contains("Proxy"));

        // ab's figures: time per request, and the connect column's basis.
        let t = text(&run(2, Duration::from_secs(2)));
        assert!(
            t.contains("Time per request (ab): 200ms mean, 100ms across all concurrent requests"),
            "{t}"
        );
        assert!(
            t.contains("connect**") && t.contains("once per connection opened (0)"),
            "{t}"
        );

        // Markdown: "1 thread", not "1 threads".
        let md = crate::markdown::markdown(&run(2, Duration::from_secs(2)));
        assert!(
            md.contains("closed loop, 2 connections, 1 thread |"),
            "{md}"
        );
    }

    fn histogram_rows(h: &Histogram<u64>) -> Vec<(String, u64)> {
        let mut o = String::new();
        write_histogram(&mut o, h).unwrap();
        o.lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let mut words = l.split_whitespace();
                let label = words.next().unwrap().to_string();
                let count = words.next().unwrap().replace(',', "").parse().unwrap();
                (label, count)
            })
            .collect()
    }

    #[test]
    fn histogram_rows_count_every_response_once_under_distinct_labels() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        // 998 fast responses and a tail whose max rounds to the same label
        // as p99.9 (304.0 ms and 304.3 ms, in separate histogram buckets,
        // both print as "304ms").
        for i in 0..998u64 {
            h.record(400_000 + i * 3_000).unwrap();
        }
        h.record(304_000_000).unwrap();
        h.record(304_300_000).unwrap();
        let p999 = h.value_at_quantile(0.999);
        assert!(!h.equivalent(p999, h.max()));
        assert_eq!(human_ns(p999).to_string(), human_ns(h.max()).to_string());
        let rows = histogram_rows(&h);
        let total: u64 = rows.iter().map(|r| r.1).sum();
        assert_eq!(total, h.len(), "{rows:?}");
        let mut labels: Vec<&String> = rows.iter().map(|r| &r.0).collect();
        labels.dedup();
        assert_eq!(labels.len(), rows.len(), "{rows:?}");
        assert_eq!(rows.last().unwrap().0, "304ms", "{rows:?}");

        // A tail well beyond p99.9 keeps a row of its own.
        h.record(2_000_000_000).unwrap();
        let rows = histogram_rows(&h);
        assert_eq!(rows.last().unwrap(), &("2.00s".to_string(), 1), "{rows:?}");
        assert_eq!(rows.iter().map(|r| r.1).sum::<u64>(), h.len());
    }
}
