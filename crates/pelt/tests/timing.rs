//! Tests whose figures depend on time: coordinated omission, rate
//! accuracy, warm-up, Ctrl-C. They take a lock so that they never compete
//! with each other for the machine's cores.

use pelt_target::Pause;
use pelt_testkit::pelt::{
    command, count as u, exclusive, json, number as f, ok, pelt, run_json, run_json_no_response,
    server,
};
use pelt_testkit::process::{signal, wait_until};
use std::time::{Duration, Instant};

/// The classic coordinated-omission check. At 1,000 req/s for 6 s the
/// server stops the world once for 1 s. The 1,000 requests scheduled in
/// that second waited 0 to 1 s each, so the true p99 of 6,000 requests is
/// about the 60th largest of those waits: ~0.94 s. A closed-loop tool, or
/// one that times from the actual send, reports a few milliseconds.
#[test]
fn stall_is_measured_from_the_intended_send_time() {
    let _machine = exclusive();
    let s = server(Some(Pause {
        after: Duration::from_secs(2),
        length: Duration::from_secs(1),
    }));
    let url = format!("http://{}/", s.local_addr());
    let r = run_json(&[&url, "--rate", "1000", "-d", "6s", "-c", "10"]);
    let total = u(&r["requests"]["total"]);
    assert!((5940..=6060).contains(&total), "requests {total}");
    assert_eq!(
        u(&r["requests"]["transport_errors"]),
        0,
        "{:#} {:#}",
        r["transport_errors"],
        r["error_examples"]
    );
    let response_p99 = f(&r["latency"]["response_time"]["percentiles_s"]["p99"]);
    let service_p99 = f(&r["latency"]["service_time"]["percentiles_s"]["p99"]);
    let lag_p99 = f(&r["latency"]["send_lag"]["percentiles_s"]["p99"]);
    assert!(
        // The truth is 0.94 s; hiding the stall (coordinated omission)
        // would read ~0.01 s, so a busy machine's 100 ms is room to spare.
        (0.88..=1.1).contains(&response_p99),
        "response-time p99 {response_p99:.3}s should be near the truth, 0.94s"
    );
    assert!(
        service_p99 < 0.1,
        "service-time p99 {service_p99:.3}s: only the 10 requests on the wire saw the stall"
    );
    assert!(
        lag_p99 > 0.5,
        "the wait happened in the client: send lag p99 {lag_p99:.3}s"
    );
    assert_eq!(r["headline"], "response_time");
    // The timeline shows the stall. Seconds are aligned to the wall clock,
    // so how the stall splits completions between two intervals depends on
    // where it falls; but the interval in which the backlog drains always
    // holds a response of ~1 s, and the seconds before the stall do not.
    let max_s: Vec<f64> = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| f(&row["max_s"]))
        .collect();
    let stalled = max_s
        .iter()
        .position(|&m| m >= 0.9)
        .unwrap_or_else(|| panic!("no second shows the stall: {max_s:?}"));
    assert!(stalled >= 2, "the stall starts 2 s in: {max_s:?}");
    // Before it, no second holds anything like the 1 s stall. Half of it
    // is the bound: a busy machine's hiccup put 109 ms in the first
    // second once (load average 8), and hiding the stall there would read
    // ~1 s.
    assert!(max_s[..stalled - 1].iter().all(|&m| m < 0.5), "{max_s:?}");
}

#[test]
fn rate_is_held_within_one_percent() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let r = run_json(&[&url, "--rate", "2000", "-d", "5s"]);
    let total = u(&r["requests"]["total"]);
    assert!(
        (9900..=10100).contains(&total),
        "asked for 10,000 requests, recorded {total}"
    );
    assert_eq!(u(&r["transport_errors"]["unfinished"]), 0);
    assert_eq!(
        s.requests(),
        total,
        "the server saw every request pelt recorded"
    );
    let rate = f(&r["requests"]["rate"]);
    assert!((1980.0..=2020.0).contains(&rate), "achieved rate {rate}");
    assert_eq!(r["offered_rate"], 2000.0);
    assert!(
        !r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "rate_shortfall"),
        "{:#}",
        r["warnings"]
    );
}

#[test]
fn rate_with_a_count_sends_exactly_that_many() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let r = run_json(&[&url, "--rate", "1000", "-n", "1500", "--warmup", "500ms"]);
    assert_eq!(u(&r["requests"]["total"]), 1500);
    let warmup = u(&r["requests"]["warmup"]);
    assert_eq!(
        warmup, 500,
        "warm-up slots are the first 0.5 s of the schedule"
    );
    assert_eq!(s.requests(), 2000);
    let d = f(&r["duration_s"]);
    assert!(
        // Not 2 s: the warm-up is not measured time (the upper bound has
        // room for a busy machine's last responses).
        (1.45..1.95).contains(&d),
        "1,500 at 1,000/s takes ~1.5 s: {d}"
    );
}

/// Regression: a rate run's duration was measured to its last response, so
/// "10 req/s for 2 s" reported ~10.5 req/s when the last slot came at 1.9 s.
#[test]
fn rate_duration_is_the_schedule_not_the_last_response() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let r = run_json(&[&url, "--rate", "10", "-d", "2s"]);
    assert_eq!(u(&r["requests"]["total"]), 20);
    assert_eq!(f(&r["duration_s"]), 2.0);
    assert_eq!(f(&r["requests"]["rate"]), 10.0);
    let r = run_json(&[&url, "--rate", "10", "-n", "10"]);
    assert_eq!(f(&r["duration_s"]), 1.0, "10 slots at 10/s span 1 s");
    assert_eq!(f(&r["requests"]["rate"]), 10.0);
}

/// Regression: slots left unsent at the end were recorded one by one, so a
/// dead server at a high rate kept pelt busy long after the run.
#[test]
fn a_stuck_server_at_a_high_rate_ends_on_time() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/?fault=stall&stall=10s", s.local_addr());
    let started = Instant::now();
    // Nothing answers: exit 3, the report still on stdout.
    let r = run_json_no_response(&[
        &url,
        "--rate",
        "2000000",
        "-d",
        "2s",
        "-c",
        "10",
        "--timeout",
        "5s",
    ]);
    let total = u(&r["requests"]["total"]);
    assert!(
        (3_900_000..=4_000_000).contains(&total),
        "every due slot is counted: {total}"
    );
    assert_eq!(u(&r["transport_errors"]["unfinished"]), total);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn warmup_is_excluded_from_every_figure() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let r = run_json(&[&url, "--rate", "400", "--warmup", "1s", "-d", "1s"]);
    let total = u(&r["requests"]["total"]);
    let warmup = u(&r["requests"]["warmup"]);
    assert!((396..=404).contains(&total), "measured {total}");
    assert!((396..=404).contains(&warmup), "warm-up {warmup}");
    assert_eq!(s.requests(), total + warmup);
    // The timeline covers the measured second only.
    let rows: u64 = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| u(&row["requests"]))
        .sum();
    assert_eq!(rows, total);
}

#[test]
fn ctrl_c_prints_what_was_measured() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let child = command()
        .args([&url, "--rate", "500", "-d", "60s", "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until load is flowing (the server's own count), then interrupt.
    let started = wait_until(Duration::from_secs(20), "no load arrived", || {
        s.requests() >= 300
    });
    signal(&child, "INT");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "interrupted exits 130");
    let r = json(&out);
    assert_eq!(r["interrupted"], true);
    let total = u(&r["requests"]["total"]);
    assert!(total >= 300, "recorded {total}");
    assert!(f(&r["duration_s"]) < 30.0);
    // Everything the server saw was recorded; beyond that, only requests
    // cut off by the stop (due but unsent, or in flight) may be extra.
    let unfinished = u(&r["transport_errors"]["unfinished"]);
    assert!(
        total >= s.requests(),
        "recorded {total}, server saw {}",
        s.requests()
    );
    assert!(
        total - unfinished <= s.requests(),
        "{total} recorded, {unfinished} unfinished, server saw {}",
        s.requests()
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn demo_runs_both_models() {
    let _machine = exclusive();
    let out = pelt()
        .args(["demo", "-d", "2s"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    ok(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches("\nLatency ").count(), 2, "{text}");
    assert!(text.contains("closed loop, 50 connections"));
    assert!(text.contains("response time*"));
    assert!(text.contains("Failed       none"), "{text}");
}

/// Requests a schedule offers per second, `n(t)` being its integral, for
/// each timeline row (its part within `0..end`), next to what was sent.
/// Each row as `(from, to, expected, got)`.
fn rows_against(
    r: &serde_json::Value,
    end: f64,
    n: impl Fn(f64) -> f64,
) -> Vec<(f64, f64, f64, f64)> {
    r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            // The part of the wall-clock second inside the run.
            let (o, to) = (f(&row["from_s"]), f(&row["to_s"]));
            let expected = n(to.clamp(0.0, end)) - n(o.clamp(0.0, end));
            // The report's own figure agrees with the formula.
            let offered = f(&row["offered"]);
            assert!((offered - expected).abs() < 1e-6, "{row}");
            (o, to, expected, u(&row["requests"]) as f64)
        })
        .collect()
}

/// Rows count requests by the second they *completed* in, so a request
/// sent late (the client short of CPU: this machine has two cores, shared
/// with builds) or answered slowly can land in the next second. This is
/// how many the measured send lag and service time (p99 of each) can move
/// across a boundary at `peak` req/s; it is a few requests when the
/// machine is quiet.
fn shift(r: &serde_json::Value, peak: f64) -> f64 {
    let p99 = |which: &str| f(&r["latency"][which]["percentiles_s"]["p99"]);
    peak * (p99("send_lag") + p99("service_time"))
}

/// The test: a ramp run's per-second counts follow the ramp
/// within 2 %. 500..2500/4s offers N(t) = 500 t + 250 t² requests by t.
#[test]
fn a_rate_ramp_follows_its_schedule_second_by_second() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let r = run_json(&[&url, "--rate", "500..2500/4s", "-c", "50"]);
    // Without -d the run lasts the schedule: N(4) = 6,000 requests.
    assert_eq!(f(&r["duration_s"]), 4.0);
    assert_eq!(u(&r["requests"]["total"]), 6000);
    assert_eq!(
        u(&r["requests"]["transport_errors"]),
        0,
        "{:#}",
        r["transport_errors"]
    );
    assert!((f(&r["offered_rate"]) - 1500.0).abs() < 1e-6);
    // The schedule was met. Warnings about the client's machine are
    // allowed: on a shared two-core machine the client can be starved for
    // tens of ms (CI saw 31 ms), and `shift` below widens the tolerance by
    // exactly the send lag that caused.
    let unexpected: Vec<&serde_json::Value> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        // A debug build of pelt (as tests run it) says so in every report.
        .filter(|w| {
            w["kind"] != "send_lag" && w["kind"] != "client_busy" && w["kind"] != "debug_build"
        })
        .collect();
    assert!(unexpected.is_empty(), "{unexpected:#?}");
    let rows = rows_against(&r, 4.0, |t| 500.0 * t + 250.0 * t * t);
    let mut checked = 0;
    let slack = shift(&r, 2500.0);
    for (o, _, expected, got) in &rows {
        // Partial seconds at the ends hold too few requests for 2 %.
        if *expected >= 400.0 {
            checked += 1;
            assert!(
                (got - expected).abs() <= expected * 0.02 + slack,
                "second at {o:.2}s: sent {got}, the ramp offers {expected:.0} (slack {slack:.0}); {rows:?}"
            );
        }
    }
    assert!(checked >= 3, "{rows:?}");
    // The rate grows: each whole second carries 500 more than the last.
    let whole: Vec<f64> = rows
        .iter()
        .filter(|r| r.1 - r.0 > 0.999 && r.1 <= 4.0)
        .map(|r| r.3)
        .collect();
    assert!(whole.len() >= 3, "{rows:?}");
    for pair in whole.windows(2) {
        assert!(
            (pair[1] - pair[0] - 500.0).abs() <= 40.0 + 2.0 * slack,
            "{rows:?}"
        );
    }
}

/// Steps hold each rate for their stage; a warm-up runs at the first one.
#[test]
fn rate_stages_step_and_warm_up_at_the_first_level() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let r = run_json(&[
        &url,
        "--stages",
        "2s:500,2s:1500",
        "--warmup",
        "1s",
        "-c",
        "50",
    ]);
    assert_eq!(u(&r["requests"]["total"]), 4000);
    assert_eq!(u(&r["requests"]["warmup"]), 500);
    let rows = rows_against(&r, 4.0, |t| {
        500.0 * t.min(2.0) + 1500.0 * (t - 2.0).max(0.0)
    });
    let mut checked = 0;
    let slack = shift(&r, 1500.0);
    for (o, _, expected, got) in &rows {
        if *expected >= 400.0 {
            checked += 1;
            assert!(
                (got - expected).abs() <= expected * 0.02 + slack,
                "second at {o:.2}s: sent {got}, the steps offer {expected:.0} (slack {slack:.0}); {rows:?}"
            );
        }
    }
    assert!(checked >= 3, "{rows:?}");
    assert_eq!(
        r["config"]["load"]["schedule"],
        serde_json::json!([
            {"duration": 2.0, "from": 500.0, "to": 500.0},
            {"duration": 2.0, "from": 1500.0, "to": 1500.0}
        ])
    );
}

/// A closed loop whose connections follow a schedule: connection k works
/// while the level is above k, and closes while it is not. With 10 ms
/// per response each connection completes at most 100 per second, so
/// throughput follows the number of connections.
#[test]
fn a_connection_schedule_sets_the_working_connections() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/?delay=10ms", s.local_addr());
    let r = run_json(&[&url, "-c", "2s:1,2s:4,2s:2,2s:3", "-t", "2"]);
    assert_eq!(f(&r["duration_s"]), 8.0);
    assert_eq!(r["config"]["load"]["connections"], 4);
    assert_eq!(
        u(&r["requests"]["transport_errors"]),
        0,
        "{:#}",
        r["transport_errors"]
    );
    // 1, then 3 more; 2 close at 4 s; 1 reopens at 6 s.
    assert_eq!(u(&r["connections"]["opened"]), 5);
    // Whole seconds inside one stage: requests per active connection.
    let mut per_conn = Vec::new();
    for row in r["timeline"].as_array().unwrap() {
        let (o, to) = (f(&row["from_s"]), f(&row["to_s"]));
        let stage = |t: f64| (t / 2.0).floor();
        let whole = to - o > 0.999;
        if whole && to <= 8.0 && stage(o) == stage(o + 0.999) {
            let active = u(&row["active_connections"]) as f64;
            assert_eq!(active, [1.0, 4.0, 2.0, 3.0][stage(o) as usize], "{row}");
            let got = u(&row["requests"]) as f64;
            // At most 100 per connection; well above 3 connections' worth
            // when 4 work, well below 2 when 1 does.
            assert!(got <= active * 101.0, "{row}");
            per_conn.push((active, got / active));
        }
    }
    assert!(per_conn.len() >= 4, "{per_conn:?}");
    let rates: Vec<f64> = per_conn.iter().map(|p| p.1).collect();
    let (lo, hi) = rates
        .iter()
        .fold((f64::MAX, 0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    assert!(
        lo > 50.0 && hi < lo * 1.3,
        "each connection's throughput should be about the same whatever the level: {per_conn:?}"
    );
}
