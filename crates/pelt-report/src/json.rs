//! The JSON report: one document per run, described by
//! `schema/run.schema.json`. Durations are seconds as floats.

use hdrhistogram::Histogram;
use pelt_core::{ErrorKind, FailureKind, LatencyStats, RunSummary, TargetStats};
use serde_json::{json, Map, Value};

/// Identifies the document format; bumped on incompatible changes.
pub const SCHEMA_ID: &str = "pelt.run/6";

fn secs(ns: f64) -> f64 {
    ns / 1e9
}

fn latency(h: &Histogram<u64>) -> Value {
    let l = LatencyStats::of(h);
    let mut percentiles = Map::new();
    for &(p, v) in &l.percentiles {
        percentiles.insert(format!("p{p}"), json!(secs(v as f64)));
    }
    // Each percentile's 95 % interval from the order statistics (issue 23
    // §5); absent for an empty histogram.
    let mut intervals = Map::new();
    for ci in pelt_core::summary::quantile_ci::intervals(h) {
        let half = ci.half_width();
        intervals.insert(
            format!("p{}", ci.percentile),
            json!({
                "lo_s": secs(ci.lo as f64),
                "hi_s": ci.hi.map(|v| secs(v as f64)),
                "half_width": half.is_finite().then_some(half),
                "too_wide": ci.too_wide(),
                "longer_by": ci.samples_factor(),
            }),
        );
    }
    let mut v = json!({
        "count": l.count,
        "min_s": secs(l.min as f64),
        "mean_s": secs(l.mean),
        "stdev_s": secs(l.stdev),
        "max_s": secs(l.max as f64),
        "percentiles_s": percentiles,
    });
    if !intervals.is_empty() {
        v["percentile_ci_s"] = Value::Object(intervals);
    }
    v
}

/// [`RunSummary::independence`]'s figures.
fn independence(s: &RunSummary, i: pelt_core::Independence) -> Value {
    json!({
        "lag1_autocorrelation": i.lag1,
        "pairs": i.pairs,
        "intervals_narrowed_by": i.lag1.map(pelt_core::independence::narrowing).filter(|f| f.is_finite()),
        "send_schedule": i.schedule.map(|f| json!({
            "ks_d": f.d,
            "ks_critical": f.critical,
            "failed": f.failed(),
            "max_behind": f.behind,
            "at_s": s.since_first_planned(f.at_ns),
            "sent": f.sent,
            "slot_s": f.slot_ns as f64 / 1e9,
        })),
    })
}

fn failure_map(kinds: Vec<(FailureKind, u64)>) -> Map<String, Value> {
    kinds
        .into_iter()
        .map(|(k, n)| (k.name().to_string(), json!(n)))
        .collect()
}

/// The JSON document for `s`, its secrets replaced
/// ([`crate::without_secrets`]; [`crate::render_with`] can keep them).
pub fn json_value(s: &RunSummary) -> Value {
    json_value_as_is(&crate::redacted(s))
}

/// The JSON document for `s` exactly as given.
pub(crate) fn json_value_as_is(s: &RunSummary) -> Value {
    json_value_rows(s, true)
}

/// The JSON report as text: [`json_value_as_is`] pretty-printed, with
/// `extra` applied to the value, but its per-target rows and the
/// configuration's targets made and written one at a time rather than
/// held as values all at once. A row as a `serde_json::Value` takes about
/// 10 KB (its latency and intervals) and a configured target ~1 KB, so
/// 1,000 targets took ~30 MB and 100,000 ~400 MB at the end of a run
/// (issue 27); the text is the same, byte for byte.
pub(crate) fn report_text(s: &RunSummary, extra: impl FnOnce(&mut Value)) -> String {
    let mut v = json_value_rows(s, false);
    extra(&mut v);
    let out = pretty(&v);
    if s.config.targets.is_empty() {
        return out;
    }
    // Keys are indented two spaces a level: the configuration's targets
    // are the first second-level `targets` after `config`, the report's
    // the only top-level one (after `config`: keys are sorted).
    const CONFIG: &str = "\n  \"config\": {";
    const CONFIG_TARGETS: &str = "\n    \"targets\": []";
    const TARGETS: &str = "\n  \"targets\": []";
    let config = out.find(CONFIG).expect("the report has its config");
    let config_targets = config
        + out[config..]
            .find(CONFIG_TARGETS)
            .expect("the config has targets");
    let targets = out.find(TARGETS).expect("the report has targets");
    assert!(config_targets < targets, "keys are sorted");
    let mut text = String::with_capacity(out.len() + 600 * s.config.targets.len());
    text.push_str(&out[..config_targets]);
    write_array(
        &mut text,
        2,
        s.config
            .targets
            .iter()
            .map(|t| serde_json::to_value(t).unwrap_or(Value::Null)),
    );
    text.push_str(&out[config_targets + CONFIG_TARGETS.len()..targets]);
    write_array(
        &mut text,
        1,
        s.config
            .targets
            .iter()
            .enumerate()
            .map(|(i, target)| target_row(s, i, target)),
    );
    text.push_str(&out[targets + TARGETS.len()..]);
    text
}

/// Writes `"targets": [...]` at `depth` (after a line break), as
/// `serde_json`'s pretty printer would, a value at a time.
fn write_array(out: &mut String, depth: usize, items: impl Iterator<Item = Value>) {
    let indent = "  ".repeat(depth);
    out.push('\n');
    out.push_str(&indent);
    out.push_str("\"targets\": [");
    let inner = format!("\n{indent}  ");
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&inner);
        let text = serde_json::to_string_pretty(&item).expect("a JSON value always serialises");
        // Line breaks within strings are escaped: each one here is the
        // pretty printer's, indented a level deeper.
        out.push_str(&text.replace('\n', &inner));
    }
    out.push('\n');
    out.push_str(&indent);
    out.push(']');
}

/// One target's row of the report.
fn target_row(s: &RunSummary, i: usize, target: &pelt_core::Target) -> Value {
    let empty = TargetStats::default();
    let c = s.total.targets.get(i).unwrap_or(&empty);
    let mut classes = Map::new();
    for (class, n) in c.classes() {
        classes.insert(format!("{class}xx"), json!(n));
    }
    let mut kinds = Map::new();
    // A judged response (a failed check or extraction) was complete: it
    // is in status_classes and failures, not among transport errors.
    for kind in ErrorKind::ALL.into_iter().filter(|k| !k.is_judgement()) {
        let n = c.error_kinds()[kind.index()];
        if n > 0 {
            kinds.insert(kind.name().to_string(), json!(n));
        }
    }
    json!({
        "method": target.method,
        "url": target.url.to_string(),
        "weight": target.weight,
        "requests": c.requests(),
        "successes": c.successes(),
        "failed": c.failed(),
        "failures": failure_map(c.failures()),
        "status_classes": classes,
        "transport_errors": kinds,
        // Null when not timed: beyond the first MAX_TIMED_TARGETS,
        // no timed request, or a file from an older pelt.
        "response_time": c.response().map_or(Value::Null, latency),
    })
}

/// The JSON document for `s`, with its per-target rows or (`rows`
/// false) an empty `targets` array.
fn json_value_rows(s: &RunSummary, rows: bool) -> Value {
    let t = &s.total;
    let mut statuses = Map::new();
    for (code, n) in t.status_counts() {
        statuses.insert(code.to_string(), json!(n));
    }
    let mut errors = Map::new();
    for kind in ErrorKind::ALL.into_iter().filter(|k| !k.is_judgement()) {
        errors.insert(kind.name().to_string(), json!(t.errors[kind.index()]));
    }
    // The one breakdown of "failed" (pelt_core::failure): transport kinds
    // and status classes, zeros left out.
    let failures = failure_map(t.failures());
    let examples: Vec<Value> = t
        .examples
        .iter()
        .map(|e| json!({"kind": e.kind.name(), "message": e.message}))
        .collect();
    let timeline: Vec<Value> = s
        .timeline
        .iter()
        .map(|r| {
            let (from, to) = s.row_span(r);
            let mut row = json!({
                "unix_second": r.unix_second,
                "offset_s": from,
                "from_s": from,
                "to_s": to,
                "requests": r.requests,
                "rate": s.row_rate(r),
                "successes": r.successes,
                "failed": r.failed,
                "bytes_in": r.bytes_in,
                "p50_s": secs(r.p50_ns as f64),
                "p90_s": secs(r.p90_ns as f64),
                "p99_s": secs(r.p99_ns as f64),
                "max_s": secs(r.max_ns as f64),
                "offered": r.offered,
                "active_connections": r.active_connections,
            });
            // Runs that met a streamed response: its events and stalls.
            if let (Some(events), Some(stalls)) = (r.events, r.stalls) {
                row["events"] = json!(events);
                row["stalls"] = json!(stalls);
            }
            // --llm runs: output tokens of the streams that ended in it.
            if let Some(tokens) = r.tokens.filter(|_| s.config.http.streamed.llm.is_some()) {
                row["tokens"] = json!(tokens);
            }
            row
        })
        .collect();
    let warnings: Vec<Value> = s
        .warnings
        .iter()
        .map(|w| {
            let mut v = serde_json::to_value(w).unwrap_or(Value::Null);
            if let Value::Object(m) = &mut v {
                m.insert("message".into(), json!(w.to_string()));
            }
            v
        })
        .collect();
    let targets: Vec<Value> = match rows {
        true => s
            .config
            .targets
            .iter()
            .enumerate()
            .map(|(i, target)| target_row(s, i, target))
            .collect(),
        false => Vec::new(),
    };
    // --scenario: per step and per flow, from the same rows.
    let scenario = s.config.scenario.as_ref().map(|sc| {
        let empty = TargetStats::default();
        let row = |i: usize| t.targets.get(i).unwrap_or(&empty);
        let hist = |n: &TargetStats| n.response().map_or(Value::Null, latency);
        let steps: Vec<Value> = (0..sc.steps.min(sc.names.len()))
            .map(|i| {
                let n = row(i);
                let (flow, name) = sc.names[i].split_once('/').unwrap_or(("", &sc.names[i]));
                json!({
                    "name": name,
                    "flow": flow,
                    "target": i,
                    "requests": n.requests(),
                    "successes": n.successes(),
                    "failed": n.failed(),
                    "failures": failure_map(n.failures()),
                    "skipped": sc.skipped(i, |j| row(j).failed()),
                    "response_time": hist(n),
                })
            })
            .collect();
        let flows: Vec<Value> = (sc.steps..sc.names.len())
            .map(|i| {
                let n = row(i);
                json!({
                    "name": sc.names[i],
                    "target": i,
                    "started": n.requests(),
                    "completed": n.successes(),
                    "failed": n.failed(),
                    "failures": failure_map(n.failures()),
                    "duration": hist(n),
                })
            })
            .collect();
        json!({ "file": sc.path, "steps": steps, "flows": flows })
    });
    let rate_mode = s.is_rate_mode();
    let mut v = json!({
        "schema": SCHEMA_ID,
        "config": match rows {
            true => json!(s.config),
            // report_text writes them a target at a time.
            false => json!(pelt_core::RunConfig {
                targets: pelt_core::Targets::default(),
                ..s.config.clone()
            }),
        },
        "environment": s.env,
        "mode": if rate_mode { "rate" } else { "closed" },
        "headline": s.headline().key(),
        "offered_rate": s.offered_rate(),
        "duration_s": s.duration.as_secs_f64(),
        "elapsed_s": s.elapsed.as_secs_f64(),
        "sending_s": s.sending.as_secs_f64(),
        "interrupted": s.interrupted,
        // What stopped it early: a signal, or an --abort-on rule.
        "stopped_by": s.stopped_by,
        "complete": s.complete,
        "window": s.window.map(|w| json!({
            "from_s": w.from_s.max(0.0),
            "to_s": if w.to_s.is_finite() { json!(w.to_s) } else { Value::Null },
        })),
        "requests": {
            "total": t.requests,
            "planned": s.planned(),
            "sent": s.sent(),
            "completed": s.completed(),
            "successes": t.successes,
            "failed": t.failed(),
            "failed_share": t.failed_share(),
            "transport_errors": t.transport_errors(),
            "non_2xx_3xx": t.non_success_statuses(),
            "judged_failed": t.judged_failed(),
            "warmup": s.warmup_requests,
            "rate": s.request_rate(),
            "sent_rate": s.sent_rate(),
            "throughput": s.throughput(),
            "success_ratio": s.success_ratio(),
        },
        "bytes": {
            "in": t.bytes_in,
            "body_in": t.body_bytes_in,
            "out": t.bytes_out,
            "in_per_s": if s.elapsed.is_zero() { 0.0 } else { t.bytes_in as f64 / s.elapsed.as_secs_f64() },
        },
        "connections": {
            "opened": t.connections,
            "reused_requests": t.reused,
            // Sent again on a fresh connection after a reused one closed
            // without a response byte (idempotent methods, once each).
            "retried_after_close": t.retried,
            // The kernel's counts (TCP_INFO) of pelt's HTTP/1.1 TCP
            // connections: packet loss on the path shows here (HTTP/3
            // runs: QUIC's, under their own names below).
            "tcp_segments_sent": if s.config.http.http3 { 0 } else { t.tcp_segs_out },
            "tcp_retransmitted": if s.config.http.http3 { 0 } else { t.tcp_retrans },
        },
        // --cookies and --login: requests with a cookie from the jar, and
        // the logins made before the run (in no other figure).
        "session": {
            "requests_with_cookie": t.with_cookie,
            "logins": t.logins,
        },
        // --proxy with https: CONNECT tunnels, timed apart from the TCP
        // connect to the proxy (latency.connect).
        "proxy_tunnels": {
            "count": t.tunnels,
            "mean_s": if t.tunnels == 0 { 0.0 } else { t.tunnel_ns_sum as f64 / t.tunnels as f64 / 1e9 },
            "max_s": t.tunnel_ns_max as f64 / 1e9,
        },
        // Which clock timed the responses: the kernel's receive stamps
        // (their arrival) for `kernel_timed` of them, pelt's own (when
        // read) for the rest; read lag is the time between the two.
        "timing": {
            "clock": if t.kernel_timed == 0 { "pelt" } else if t.kernel_timed >= t.service.len() { "kernel" } else { "mixed" },
            "kernel_timed": t.kernel_timed,
            // --tx-stamps: departures timed by the kernel's transmit stamps.
            "sends_kernel_timed": t.tx_stamped,
            "read_lag_mean_s": if t.kernel_timed == 0 { 0.0 } else { t.read_lag_ns_sum as f64 / t.kernel_timed as f64 / 1e9 },
            "read_lag_max_s": t.read_lag_ns_max as f64 / 1e9,
        },
        // pelt's own worker threads: shares of the run each spent on a
        // CPU and waiting for one. Empty when not known.
        "client_threads": s.worker_load,
        // ab's "Server Software": the `Server` header of the first
        // complete response, null when it had none.
        "server_software": s.server_software,
        // Rate runs: are the requests independent, on-schedule trials
        // (issue 23 §5)? Null for a closed loop.
        "independence": s.independence().map(|i| independence(s, i)),
        "latency": {
            "response_time": latency(&t.response),
            "service_time": latency(&t.service),
            "send_lag": latency(&t.send_lag),
            "first_byte": latency(&t.ttfb),
            "connect": latency(&t.connect),
            "tls": latency(&t.tls),
        },
        "targets": targets,
        "scenario": scenario,
        "status_codes": statuses,
        "failures": failures,
        "transport_errors": errors,
        "error_examples": examples,
        "timeline": timeline,
        "warnings": warnings,
    });
    // Streamed responses (issue 38): absent from runs that met none.
    if let Some(st) = crate::streams::of(s) {
        v["streamed"] = streamed(&st);
    }
    if let Some(ws) = crate::websocket::of(s) {
        // Issue 40: messages are the requests; these are WebSocket's own.
        let closes: Map<String, Value> = ws
            .closes
            .iter()
            .map(|(c, n)| (c.name(), json!(n)))
            .collect();
        v["websocket"] = json!({
            "upgrades": ws.upgrades,
            "upgrade": {
                "mean_s": secs(ws.mean_ns),
                "p50_s": secs(ws.p50_ns as f64),
                "p99_s": secs(ws.p99_ns as f64),
                "max_s": secs(ws.max_ns as f64),
            },
            "closes": closes,
        });
    }
    if s.config.http.http3 {
        // The recorder's TCP fields carry quinn's packet counts in an
        // HTTP/3 run: sent, and declared lost (their data sent again).
        let c = &mut v["connections"];
        c["quic_packets_sent"] = json!(t.tcp_segs_out);
        c["quic_packets_lost"] = json!(t.tcp_retrans);
    }
    // https over TCP, --0rtt: handshakes by kind, each with its count
    // and time.
    if let Some(kinds) = crate::handshakes::of(s) {
        let kinds: Map<String, Value> = kinds
            .iter()
            .map(|k| {
                let v = json!({
                    "count": k.count,
                    "mean_s": secs(k.mean_ns),
                    "p99_s": secs(k.p99_ns as f64),
                });
                (k.kind.name().to_string(), v)
            })
            .collect();
        v["connections"]["handshakes"] = Value::Object(kinds);
    }
    v
}

/// A run's stream figures (`crate::streams`), JSON's `streamed`.
fn streamed(st: &crate::streams::Streams<'_>) -> Value {
    let stats = st.stats;
    let per = &stats.events_per_stream;
    let mut v = json!({
        "framing": st.framing,
        "llm": st.llm,
        "streams": stats.streams,
        "stream_cut": st.cut,
        "events": stats.events,
        "events_per_s": st.events_per_s(),
        "events_per_stream": {
            "mean": if per.is_empty() { 0.0 } else { per.mean() },
            "p50": pelt_core::rank::percentile(per, 50.0),
            "max": if per.is_empty() { 0 } else { per.max() },
        },
        "stall_gap_s": st.stall_gap_s,
        "stalls": stats.stalls,
        "bursts": stats.bursts,
    });
    for m in st.measures() {
        v[m.key] = latency(m.hist);
    }
    if st.event_time.is_some() {
        v["event_time"] = json!(st.event_time);
        v["untimed"] = json!(stats.untimed);
    }
    if st.hold {
        v["held"] = json!(stats.held);
    }
    if st.llm {
        let r = &stats.tokens_per_s;
        let at = |q: f64| crate::streams::per_s_at(r, q);
        v["tokens"] = json!({
            "output": stats.tokens,
            "per_s": st.tokens_per_s(),
            "counted_by": st.tokens_counted_by(),
            "per_stream": {
                "count": r.len(),
                "mean": if r.is_empty() { 0.0 } else { r.mean() / 1_000.0 },
                "min": at(0.0),
                "p1": at(1.0),
                "p10": at(10.0),
                "p50": at(50.0),
                "p90": at(90.0),
                "max": at(100.0),
            },
        });
    }
    v
}

/// `v` as indented JSON and a final newline.
pub(crate) fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("a JSON value always serialises");
    s.push('\n');
    s
}

/// `--buckets`: the headline latency counted into the user's ranges
/// (vegeta's `hist`), seconds for bounds (`to_s` null for the last).
pub fn buckets(s: &RunSummary, b: &pelt_core::buckets::Buckets) -> Value {
    b.count(s.headline().of(&s.total))
        .iter()
        .map(|c| {
            json!({
                "from_s": c.from.as_secs_f64(),
                "to_s": c.to.map(|t| t.as_secs_f64()),
                "count": c.count,
                "share": c.share,
            })
        })
        .collect()
}
