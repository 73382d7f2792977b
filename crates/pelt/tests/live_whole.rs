//! Live views keep the whole picture (issue 22 §5): a dashboard opened
//! late draws the run so far, its final tiles are per second of the run,
//! and two runs with the same flags are two series.

use pelt_testkit::chromium::{console, field, run_url};
use pelt_testkit::pelt::{command, json, ok, pelt, server};
use pelt_testkit::ports::free_port;
use pelt_testkit::process::wait_until;
use pelt_testkit::prometheus::Prometheus;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::time::Duration;

/// The first event of a new `/events` stream on 127.0.0.1:`port`, or
/// `None` if nothing listens yet.
fn first_event(port: u16) -> Option<Value> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut lines = BufReader::new(s).lines();
    lines.find_map(|l| {
        let l = l.ok()?;
        serde_json::from_str(l.strip_prefix("data: ")?).ok()
    })
}

/// `data-raw` of the element with `id` in the page's DOM.
fn raw(dom: &str, id: &str) -> f64 {
    let at = dom
        .find(&format!("id=\"{id}\" data-raw=\""))
        .unwrap_or_else(|| panic!("no {id} in {dom}"));
    let rest = &dom[at..].split_once("data-raw=\"").unwrap().1;
    rest.split('"').next().unwrap().parse().unwrap()
}

// The page was opened (or reloaded) 3 s into the run: it started with
// empty charts. Now its first update draws every second so far; and at
// the end, the rate tiles are per second of the run, not the last
// second's sliver ("25 req/s of 18 offered" for a 500 req/s run).
#[test]
fn a_dashboard_opened_late_draws_the_whole_run_and_ends_per_second() {
    let _heavy = pelt_testkit::pelt::shared();
    let dir = tempfile::tempdir().unwrap();
    let target = server(None);
    let port = free_port();
    let url = format!("http://{}/", target.local_addr());
    let run = command()
        .args(["run", &url, "-d", "7s", "--rate", "200", "--no-save"])
        .args([
            "--format",
            "json",
            "--dashboard",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Until 3 seconds are measured (the stream's own figure, polled).
    wait_until(Duration::from_secs(30), "the run never reached 3 s", || {
        first_event(port).map_or(0, |e| e["seconds"].as_u64().unwrap()) >= 3
    });
    let page = run_url(
        dir.path(),
        &format!("http://127.0.0.1:{port}/"),
        &["--dump-dom".into(), "--virtual-time-budget=30000".into()],
    );
    let out = run.wait_with_output().unwrap();
    ok(&out);
    assert!(page.status.success(), "chromium: {}", page.stderr);
    let report: Value = json(&out);

    let updates = console(&page.stderr, "pelt-live update ");
    let first = updates.first().unwrap_or_else(|| panic!("{}", page.stderr));
    // The first update already has every measured second (and the
    // partial one before them).
    assert!(field(first, "rows") >= 3.0, "{first}");
    assert!(field(first, "rows") >= field(first, "seconds"), "{first}");
    let last = updates.last().unwrap();
    let rows = report["timeline"].as_array().unwrap().len() as f64;
    assert_eq!(field(last, "rows"), rows, "{last}");

    // The final tiles: about the rate asked for, not a partial second's
    // count.
    let dom = page.stdout;
    let rate = raw(&dom, "rate");
    let offered = raw(&dom, "offered");
    assert!((offered - 200.0).abs() < 2.0, "offered {offered}");
    assert!((150.0..=250.0).contains(&rate), "rate {rate}");
    // Charts with a time axis and a legend.
    assert!(dom.contains("time into the run"), "{dom}");
    assert!(dom.contains("class=\"legend\""), "{dom}");
}

/// The `run="..."` label pelt printed beside its metrics address.
fn run_label(args: &[&str]) -> String {
    let target = server(None);
    let url = format!("http://{}/", target.local_addr());
    let out = pelt()
        .args(["run", &url, "-n", "20", "-c", "1", "--no-save"])
        .args(["--metrics", "127.0.0.1:0"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains("metrics on http://"))
        .unwrap_or_else(|| panic!("{stderr}"));
    line.split_once("run=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(id, _)| id.to_string())
        .unwrap_or_else(|| panic!("{line}"))
}

// Two runs with the same flags shared one `run` label (the config hash),
// so their counters made one series that went backwards.
#[test]
fn each_run_gets_its_own_run_label_unless_run_id_names_it() {
    let _heavy = pelt_testkit::pelt::shared();
    let a = run_label(&[]);
    let b = run_label(&[]);
    assert_ne!(a, b);
    // --run-id (a sharded run's, so that its shards share it) is kept.
    let named = ["--shard", "0/1", "--run-id", "nightly-7"];
    assert_eq!(run_label(&named), "nightly-7");
}

/// The value of `metric`, with `labels` (`a="b",` or nothing), in run
/// `run` (its newest sample in the last minute), as `prom` received it.
fn pushed(prom: &Prometheus, metric: &str, labels: &str, run: &str) -> Option<f64> {
    let q = format!("last_over_time({metric}{{{labels}run=\"{run}\"}}[1m])")
        .replace('{', "%7B")
        .replace('}', "%7D")
        .replace('"', "%22")
        .replace('[', "%5B")
        .replace(']', "%5D")
        .replace('=', "%3D")
        .replace(',', "%2C")
        .replace('+', "%2B");
    prom.value(&q)
}

// A short CI run was mostly missed at a 15 s scrape interval. Pushed by
// remote write, the counters equal the JSON report's, and two runs with
// the same flags are two series.
#[test]
fn metrics_pushed_by_remote_write_equal_the_report() {
    let _heavy = pelt_testkit::pelt::shared();
    let dir = tempfile::tempdir().unwrap();
    let prom = Prometheus::receiver(dir.path());
    let target = server(None);
    let url = format!("http://{}/?delay=1ms", target.local_addr());
    let push = format!("http://127.0.0.1:{}/api/v1/write", prom.port());
    let mut runs = Vec::new();
    for _ in 0..2 {
        let out = pelt()
            .args(["run", &url, "-d", "2s", "--rate", "200", "--format", "json"])
            .args(["--no-save", "--metrics-push", &push])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{stderr}");
        assert!(!stderr.contains("warning: --metrics-push"), "{stderr}");
        let run = stderr
            .split_once("run=\"")
            .and_then(|(_, r)| r.split_once('"'))
            .map(|(id, _)| id.to_string())
            .unwrap_or_else(|| panic!("{stderr}"));
        let report: Value = json(&out);
        runs.push((run, report));
    }
    assert_ne!(runs[0].0, runs[1].0);
    for (run, report) in &runs {
        let n = |v: &Value| v.as_u64().unwrap() as f64;
        assert_eq!(
            pushed(&prom, "pelt_requests_total", "", run),
            Some(n(&report["requests"]["total"])),
            "{run}"
        );
        assert_eq!(
            pushed(&prom, "pelt_response_time_seconds_count", "", run),
            Some(n(&report["latency"]["response_time"]["count"]))
        );
        assert_eq!(
            pushed(&prom, "pelt_responses_total", "class=\"2xx\",", run).map(|v| v as u64),
            report["requests"]["successes"].as_u64()
        );
        assert_eq!(
            pushed(&prom, "pelt_sent_bytes_total", "", run),
            Some(n(&report["bytes"]["out"]))
        );
        assert_eq!(pushed(&prom, "pelt_run_finished", "", run), Some(1.0));
    }
    // Two runs, two series: the same flags no longer share a label.
    assert_eq!(prom.query("pelt_requests_total").unwrap().len(), 2);
}

#[test]
fn a_push_url_nothing_answers_is_refused_before_any_load() {
    let target = TcpListener::bind("127.0.0.1:0").unwrap();
    target.set_nonblocking(true).unwrap();
    let url = format!("http://{}/", target.local_addr().unwrap());
    let closed = free_port();
    for (push, hint) in [
        (
            format!("http://127.0.0.1:{closed}/api/v1/write"),
            "cannot connect",
        ),
        ("127.0.0.1:9090".to_string(), "not an http:// URL"),
        (
            "https://127.0.0.1:9090/api/v1/write".to_string(),
            "https is not supported",
        ),
    ] {
        let out = pelt()
            .args(["run", &url, "-n", "5", "--no-save", "--metrics-push", &push])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{push}: {stderr}");
        assert!(stderr.contains(hint), "{push}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(target.accept().is_err(), "{push}: load was sent");
    }
}
