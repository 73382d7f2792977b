//! Tests whose figures depend on time: coordinated omission, rate
//! accuracy, warm-up, Ctrl-C. They take a lock so that they never compete
//! with each other for the machine's cores.

mod support;

use pelt_target::Pause;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use support::pelt::{count as u, number as f, pelt, run_json, server};

static MACHINE: Mutex<()> = Mutex::new(());

fn exclusive() -> MutexGuard<'static, ()> {
    MACHINE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

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
        u(&r["requests"]["errors"]),
        0,
        "{:#} {:#}",
        r["errors"],
        r["error_examples"]
    );
    let response_p99 = f(&r["latency"]["response_time"]["percentiles_s"]["p99"]);
    let service_p99 = f(&r["latency"]["service_time"]["percentiles_s"]["p99"]);
    let lag_p99 = f(&r["latency"]["send_lag"]["percentiles_s"]["p99"]);
    assert!(
        (0.88..=1.0).contains(&response_p99),
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
    assert!(max_s[..stalled - 1].iter().all(|&m| m < 0.1), "{max_s:?}");
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
    assert_eq!(u(&r["errors"]["unfinished"]), 0);
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
        (1.45..1.7).contains(&d),
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
    let r = run_json(&[
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
    assert_eq!(u(&r["errors"]["unfinished"]), total);
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
    let bin = assert_cmd::cargo::cargo_bin("pelt");
    let child = std::process::Command::new(bin)
        .env("PELT_DATA_DIR", support::pelt::data_dir())
        .args([&url, "--rate", "500", "-d", "60s", "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until load is flowing (the server's own count), then interrupt.
    let started = Instant::now();
    while s.requests() < 300 {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no load arrived"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "interrupted exits 130");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a full report");
    assert_eq!(r["interrupted"], true);
    let total = u(&r["requests"]["total"]);
    assert!(total >= 300, "recorded {total}");
    assert!(f(&r["duration_s"]) < 30.0);
    // Everything the server saw was recorded; beyond that, only requests
    // cut off by the stop (due but unsent, or in flight) may be extra.
    let unfinished = u(&r["errors"]["unfinished"]);
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
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches("\nLatency ").count(), 2, "{text}");
    assert!(text.contains("closed loop, 50 connections"));
    assert!(text.contains("response time*"));
    assert!(text.contains("Failures     none"), "{text}");
}
