//! The default human report.
//!
//! It carries everything ab and vegeta print for a run (counts, rates,
//! transfer, percentiles, status codes, failures by kind, keep-alive use,
//! connection times, a histogram), and says which latency is the headline
//! and what it can and cannot see.

mod latency;
mod scenario;
mod targets;
mod timeline;

use crate::units::{bytes, rate, thousands};
use hdrhistogram::Histogram;
use latency::*;
use pelt_core::summary::GRACE;
use pelt_core::{
    human_ns, ErrorKind, FailureKind, Human, LatencyStats, Load, RunSummary, TargetStats,
    MAX_TIMED_TARGETS,
};
use std::fmt::{self, Write};
use std::time::Duration;
use targets::*;
use timeline::*;

/// Rows of the per-second timeline printed before it is left to JSON/CSV.
const MAX_TIMELINE_ROWS: usize = 60;
const HISTOGRAM_BUCKETS: u64 = 10;
/// Targets listed one per line before the rest are left to JSON.
const MAX_TARGET_ROWS: usize = 20;
const BAR_WIDTH: u64 = 40;

/// `--scenario`: flows started, per second, and (rate mode) the flows
/// per second offered: the unit a scenario's rate counts.
fn write_flows_started(o: &mut String, s: &RunSummary) -> fmt::Result {
    let (Some(n), Some(per_s)) = (s.flows_started(), s.flow_rate()) else {
        return Ok(());
    };
    let offered = match (s.offered_rate(), s.config.load.schedule()) {
        (Some(r), None) => format!(" of {} flows/s offered", rate(r)),
        (Some(r), Some(_)) => format!(" of {} flows/s offered on average", rate(r)),
        (None, _) => String::new(),
    };
    writeln!(
        o,
        "Flows        {} started ({} flows/s{offered})",
        thousands(n),
        rate(per_s)
    )
}

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
    writeln!(o, "pelt {}  {}", s.env.pelt_version, c.subject())?;
    let stop = c.effective_stop();
    let mut limit = Vec::new();
    if let Some(n) = stop.requests {
        // A scenario's -n counts flows; a WebSocket run's, messages.
        let what = if c.scenario.is_some() {
            "flows"
        } else if c.is_ws() {
            "messages"
        } else {
            "requests"
        };
        limit.push(format!("{} {what}", thousands(n)));
    }
    if let Some(d) = stop.duration {
        limit.push(format!("{}", Human(d)));
    }
    let warmup = if c.warmup.is_zero() {
        String::new()
    } else {
        format!(" after {} warm-up", Human(c.warmup))
    };
    // "1 connection", not "1 connections"; a scenario's are users.
    let conns = match c.load.connections() {
        1 => format!("1 {}", c.sender_noun()),
        n => format!("{n} {}s", c.sender_noun()),
    };
    let unit = c.rate_unit();
    let load = match &c.load {
        Load::Closed {
            connections,
            schedule: Some(s),
        } => format!("closed loop, connections {s} (up to {connections})"),
        Load::Closed { schedule: None, .. } => match c.think {
            Some(t) => format!("closed loop, {conns}, {} think time", t.describe()),
            None => format!("closed loop, {conns}"),
        },
        Load::Rate {
            rate: r,
            schedule: None,
            ..
        } => {
            format!("{} {unit}, up to {conns}", rate(*r))
        }
        Load::Rate {
            schedule: Some(s), ..
        } => {
            format!("rate {s} {unit}, up to {conns}")
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

    // A WebSocket run's requests are messages.
    let label = match c.is_ws() {
        true => "Messages",
        false => "Requests",
    };
    match (s.offered_rate(), c.load.schedule()) {
        // A scenario's rate starts flows: its requests are steps, so the
        // rate sent is set beside the offered one on the Flows line.
        (Some(_), _) if c.scenario.is_some() => writeln!(
            o,
            "Requests     {} planned in {}, {} sent ({} req/s), {} completed",
            thousands(t.requests),
            Human(s.duration),
            thousands(s.sent()),
            rate(s.sent_rate()),
            thousands(s.completed()),
        )?,
        // Rate mode: the schedule plans requests whether or not the client
        // manages to send them, so planned, sent and completed are three
        // numbers, and the rate sent is set beside the rate offered.
        (Some(offered), schedule) => writeln!(
            o,
            "{:<13}{} planned in {}, {} sent ({} {unit} of {} {unit} offered{}), {} completed",
            label,
            thousands(t.requests),
            Human(s.duration),
            thousands(s.sent()),
            rate(s.sent_rate()),
            rate(offered),
            if schedule.is_some() {
                " on average"
            } else {
                ""
            },
            thousands(s.completed()),
        )?,
        (None, _) => {
            let unsent = t.requests - s.sent();
            writeln!(
                o,
                "{:<13}{} in {} ({} {unit}){}",
                label,
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
    write_flows_started(o, s)?;
    let failed = t.requests - t.successes;
    writeln!(
        o,
        "{:<13}{} ok ({:.2}%), {} failed; {} ok/s over {}",
        match c.is_ws() {
            true => "Replies",
            false => "Responses",
        },
        thousands(t.successes),
        s.success_ratio() * 100.0,
        thousands(failed),
        rate(s.throughput()),
        Human(s.elapsed),
    )?;
    write_overrun(o, s)?;
    let secs = s.elapsed.as_secs_f64().max(1e-9);
    let responses = t.requests - t.transport_errors() + t.errors[ErrorKind::Length.index()];
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
    // After a warm-up the connections in use were opened during it, and
    // no figure counts the warm-up: "0 opened" alone reads as a bug.
    let when = match s.warmup_requests > 0 || !s.config.warmup.is_zero() {
        true => " after the warm-up (those it opened are not counted)",
        false => "",
    };
    writeln!(
        o,
        "Connections  {} opened{when}; {} requests reused one (keep-alive {reuse:.1}%)",
        thousands(t.connections),
        thousands(t.reused),
    )?;
    if let Some(ws) = crate::websocket::of(s) {
        writeln!(o, "WebSocket    {}", ws.line())?;
    }
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
    write_streams(o, s)?;
    write_histogram(o, s.headline().of(t), s.headline().name())?;

    if let Some(sc) = &c.scenario {
        scenario::write_scenario(o, s, sc)?;
    } else if c.targets.len() > 1 {
        write_targets(o, s)?;
    }

    let statuses: Vec<String> = t
        .status_counts()
        .map(|(code, n)| format!("{code}: {}", thousands(n)))
        .collect();
    // A WebSocket reply counts as a 2xx by construction: no status to show.
    if !statuses.is_empty() && !c.is_ws() {
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
            "Failed       {} of {} {}s ({:.2}%): no response, or a status outside 2xx/3xx",
            thousands(t.failed()),
            thousands(t.requests),
            c.request_noun(),
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

/// `--buckets`: the headline latency counted into the user's ranges, in
/// vegeta's `hist` layout, after the report.
pub(crate) fn append_buckets(o: &mut String, s: &RunSummary, b: &pelt_core::buckets::Buckets) {
    let counts = b.count(s.headline().of(&s.total));
    let _ = writeln!(
        o,
        "\nLatency buckets ({}, the headline; --buckets)",
        s.headline().name()
    );
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
                pelt_core::Headline::ResponseTime,
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
            pelt_core::Headline::ResponseTime,
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
            shape: pelt_core::ThinkShape::Uniform,
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
        write_histogram(&mut o, h, "response time").unwrap();
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
