//! Kernel receive stamps: a client that reads late, because it is short of
//! CPU or batches its wake-ups, must not report a slower server. The
//! server (`pelt serve`, or nginx) runs on one CPU, pelt on the other.
//!
//! These tests assert what the stamps guarantee, not what a quiet machine
//! happens to give (issue 45): a run whose client is made to read late,
//! by milliseconds, on purpose, reports the same service time as the same
//! run without, interleaved in pairs so that other work on the machine
//! falls on both sides alike. Had pelt timed responses when it read them,
//! service time would move by the whole of the added read lag; the bound
//! allows a quarter of it. The figures themselves (send lag against
//! bombardier, service time to a few microseconds against tcpdump) are
//! benchmarks: bench/peers.sh and bench/wire.sh print them.

use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;

use pelt_testkit::nginx::Nginx;
use pelt_testkit::pelt::{exclusive, json, number as f, ok, ok_json, under};
use pelt_testkit::pinned::{pelt_on, serve_on, Pulses};

/// A run pinned to CPU 0 at `rate` for 3 s, as JSON; with `pulses`, pelt
/// is stopped 30 ms in every 60 ms while it runs.
fn run_at(url: &str, rate: &str, extra: &[&str], pulses: bool) -> Value {
    let child = pelt_on("0")
        .args(["run", url, "--rate", rate, "-d", "3s"])
        .args(["-c", "50", "-t", "1", "--format", "json"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _beat = pulses.then(|| {
        Pulses::start(
            child.id(),
            Duration::from_millis(30),
            Duration::from_millis(30),
        )
    });
    ok_json(&child.wait_with_output().unwrap())
}

fn service_p50(r: &Value) -> f64 {
    f(&r["latency"]["service_time"]["percentiles_s"]["p50"])
}

fn read_lag_mean(r: &Value) -> f64 {
    f(&r["timing"]["read_lag_mean_s"])
}

/// Every response, or nearly, timed by the kernel: it may leave the first
/// few unstamped while it turns stamping on (pelt's clock times those).
fn assert_kernel_timed(r: &Value) {
    let timed = f(&r["timing"]["kernel_timed"]);
    let count = f(&r["latency"]["service_time"]["count"]);
    assert!(timed >= count * 0.99, "{:#}", r["timing"]);
}

/// The median of `v`.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Three interleaved pairs of runs, `plain` then `late` (whose client
/// reads most responses late on purpose): the added read lag must show,
/// and the service time's p50 must not follow it (p50, not the mean: a
/// busy machine's few slow responses move a mean by milliseconds). A pair's differences cancel what other work
/// did to both; the median of three needs two pairs of three to cross the
/// bound, so a pair that met a burst of other work (seen here: one in
/// ten under a parallel build) cannot fail the test alone (about 3 %
/// false failures if pairs crossed that often, and they cross far less:
/// the bound is a quarter of an effect of milliseconds).
fn late_reads_move_no_service_time(plain: impl Fn() -> Value, late: impl Fn() -> Value) {
    let mut added_lag = Vec::new();
    let mut moved = Vec::new();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let (a, b) = (plain(), late());
        assert_kernel_timed(&a);
        assert_kernel_timed(&b);
        added_lag.push(read_lag_mean(&b) - read_lag_mean(&a));
        moved.push(service_p50(&b) - service_p50(&a));
        seen.push(format!(
            "read lag mean {:.0} -> {:.0} µs, service p50 {:.0} -> {:.0} µs",
            read_lag_mean(&a) * 1e6,
            read_lag_mean(&b) * 1e6,
            service_p50(&a) * 1e6,
            service_p50(&b) * 1e6
        ));
    }
    // Shown with --nocapture: the effect and the margin it left.
    eprintln!("{seen:#?}");
    let (added_lag, moved) = (median(added_lag), median(moved));
    // The client did read late: the stamps are what keep the figures
    // right, not luck.
    assert!(added_lag > 500e-6, "no late reads to keep out: {seen:?}");
    assert!(
        moved.abs() < added_lag / 4.0,
        "service time followed the read lag: {seen:?}"
    );
}

/// The reproduction: a client short of CPU read service time ~1 ms
/// (8 %) high at p50 with its own clock. Here pelt is stopped 30 ms in
/// every 60 ms (what a starved client lives through, made certain) at
/// 200 req/s against `pelt serve ?delay=30ms`: half the responses arrive
/// while it is stopped, so it reads them up to 30 ms late, and they keep
/// their service time; none is shorter than the server held it. (The
/// requests due while it is stopped go together when it goes on, a
/// handful, queueing at the server for a fraction of a millisecond: the
/// one genuine rise in service time here, kept small by the low rate.)
#[test]
fn a_starved_client_reports_the_servers_time() {
    let _machine = exclusive();
    let (_server, base) = serve_on("1");
    let url = format!("{base}?delay=30ms");
    late_reads_move_no_service_time(
        || run_at(&url, "200", &[], false),
        || {
            let r = run_at(&url, "200", &[], true);
            // A guarantee, on any machine: the server held each response
            // 30 ms, so no service time is shorter (a stamp from the
            // wrong clock, or a read time before the send, would be).
            assert!(
                service_p50(&r) >= 30e-3,
                "{:#}",
                r["latency"]["service_time"]
            );
            r
        },
    );
}

/// The send window batches wake-ups; it must not move service time. nginx
/// answers in tens of microseconds, so reading each response up to a
/// window late would show at once if the stamps were not used: a 10 ms
/// window at 500 req/s (about five requests a wake-up, too few to queue
/// at nginx) against a wake-up per request.
#[test]
fn the_send_window_does_not_move_service_time() {
    let _machine = exclusive();
    let nginx = Nginx::start("");
    let url = nginx.url("/ok");
    late_reads_move_no_service_time(
        || run_at(&url, "500", &["--send-window", "0"], false),
        || run_at(&url, "500", &["--send-window", "10ms"], false),
    );
}

/// The warnings by which a run says the client may have set its pace:
/// its worker wanted a CPU nearly all the time (`client_busy`), or read
/// responses late for want of one (`read_lag`).
const CLIENT_LIMITED: [&str; 2] = ["client_busy", "read_lag"];

fn client_limited(r: &Value) -> Vec<String> {
    r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["kind"].as_str())
        .filter(|k| CLIENT_LIMITED.contains(k))
        .map(String::from)
        .collect()
}

/// `--strict`: a run the client may have limited fails, for CI. pelt
/// stopped 30 ms in every 60 ms reads responses late (read_lag), whatever
/// else the machine does: exit 1 and one line naming the client. (A
/// busy loop on pelt's CPU was the cause here before, but on a machine
/// busy elsewhere the server on the other CPU is starved too, pelt waits
/// for it, and the run is rightly not the client's: it passed.) A light
/// run passes unless the client limited it too: its exit code and its
/// warnings always agree (a quiet machine gives it neither; a busy one
/// may take its core).
#[test]
fn strict_fails_a_run_the_client_limited() {
    let _machine = exclusive();
    let (_server, url) = serve_on("1");
    // Held 30 ms, so half the responses arrive while pelt is stopped.
    let late = format!("{url}?delay=30ms");
    let child = pelt_on("0")
        .args(["run", &late, "-t", "1", "-d", "2s", "--rate", "200"])
        .args(["--strict", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = {
        let _beat = Pulses::start(
            child.id(),
            Duration::from_millis(30),
            Duration::from_millis(30),
        );
        child.wait_with_output().unwrap()
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let line: Vec<&str> = stderr.lines().filter(|l| l.contains("--strict")).collect();
    assert_eq!(line.len(), 1, "{stderr}");
    assert!(line[0].contains("client"), "{stderr}");
    let r = json(&out);
    assert!(!client_limited(&r).is_empty(), "{:#}", r["warnings"]);

    let out = pelt_on("0")
        .args(["run", &url, "-t", "1", "-d", "1s"])
        .args(["--rate", "50", "--strict", "--format", "json"])
        .output()
        .unwrap();
    let limited = client_limited(&json(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    if limited.is_empty() {
        ok(&out);
    } else {
        assert_eq!(out.status.code(), Some(1), "{limited:?}: {stderr}");
        assert!(stderr.contains("--strict"), "{stderr}");
    }
}

/// Out of file descriptors (EMFILE) is pelt's machine's limit, not the
/// server's failure: the run says so, with the fix, and `--strict` fails
/// it. pelt runs under `prlimit --nofile` with more connections than the
/// limit leaves room for.
#[test]
fn running_out_of_file_descriptors_is_named_as_the_clients() {
    let (_server, url) = serve_on("1");
    let out = under("prlimit", ["--nofile=64"])
        .args(["run", &url, "-c", "200", "-t", "1"])
        .args(["-d", "1s", "--strict", "--format", "json"])
        .output()
        .expect("prlimit (util-linux) runs pelt");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let r = json(&out);
    let warning = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "client_resources")
        .unwrap_or_else(|| panic!("{:#}", r["warnings"]));
    let message = warning["message"].as_str().unwrap();
    assert!(
        message.contains("EMFILE") && message.contains("ulimit -n"),
        "{message}"
    );
    assert!(stderr.contains("--strict"), "{stderr}");
}

/// `--tx-stamps`: the report says the kernel timed the departures too,
/// and service time still reads the server's delay: never less than the
/// 2 ms the server held each response, and not off by a clock's worth
/// (bench/wire.sh checks it against tcpdump to a few microseconds).
#[test]
fn transmit_stamps_time_the_departures() {
    let _machine = exclusive();
    let (_server, base) = serve_on("1");
    let url = format!("{base}?delay=2ms");
    let r = run_at(&url, "500", &["--tx-stamps"], false);
    assert_eq!(r["config"]["http"]["tx_stamps"], true);
    let sends = f(&r["timing"]["sends_kernel_timed"]);
    let count = f(&r["latency"]["service_time"]["count"]);
    assert!(
        sends >= count * 0.99,
        "{sends} of {count}: {:#}",
        r["timing"]
    );
    // Departure and arrival from the same clock: at least the delay, and
    // within the same run's own-clock figure by far less than a second
    // (stamps from another clock are off by years).
    let plain = run_at(&url, "500", &[], false);
    let (stamped, own) = (service_p50(&r), service_p50(&plain));
    assert!(stamped >= 2e-3, "service p50 {stamped} for a 2 ms delay");
    assert!((stamped - own).abs() < 0.1, "{stamped} against {own}");
    // Without the switch, no departure is the kernel's.
    assert_eq!(plain["timing"]["sends_kernel_timed"], 0);
}
