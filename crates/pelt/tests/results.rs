//! Results files: written as the run goes, re-rendered identically,
//! merged exactly, readable after SIGKILL, refused when corrupt.

use assert_cmd::Command;
use pelt_testkit::pelt::{command, ok_stdout};
use pelt_testkit::process::wait_until;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The built-in server, and the machine to this test alone: the killed
/// run's results are written by a low-priority thread, which another
/// test's load alongside could starve past the seconds this file checks.
fn server() -> (
    std::sync::RwLockWriteGuard<'static, ()>,
    pelt_target::ServerHandle,
) {
    (
        pelt_testkit::pelt::exclusive(),
        pelt_testkit::pelt::server(None),
    )
}

/// pelt with its own data directory, to check what it saves.
fn pelt(data: &Path) -> Command {
    let mut c = pelt_testkit::pelt::pelt();
    c.env("PELT_DATA_DIR", data);
    c
}

fn stdout_of(mut c: Command) -> String {
    ok_stdout(&c.output().unwrap())
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).expect("one JSON document")
}

/// A rate run of `s` saved to `data`/run.pelt: its path and live JSON report.
fn saved_rate_run(
    data: &Path,
    s: &pelt_target::ServerHandle,
    rate: &str,
    duration: &str,
) -> (PathBuf, Value) {
    let file = data.join("run.pelt");
    let url = format!("http://{}/", s.local_addr());
    let mut run = pelt(data);
    run.args([
        &url, "--rate", rate, "-d", duration, "--format", "json", "-o",
    ])
    .arg(&file);
    let live = json(&stdout_of(run));
    (file, live)
}

/// `pelt report FILE --format FORMAT`.
fn report_as(data: &Path, file: &Path, format: &str) -> String {
    let mut report = pelt(data);
    report.arg("report").arg(file).args(["--format", format]);
    stdout_of(report)
}

#[test]
fn saved_runs_report_exactly_as_they_did_live() {
    let (_machine, s) = server();
    let data = tempfile::tempdir().unwrap();
    let file = data.path().join("run.pelt");
    let url = format!("http://{}/?delay=1ms&delay_max=3ms", s.local_addr());
    for format in ["json", "text", "csv", "markdown"] {
        let mut run = pelt(data.path());
        run.args([&url, "--rate", "300", "-d", "2s", "--format", format, "-o"])
            .arg(&file);
        let live = stdout_of(run);
        let mut report = pelt(data.path());
        report.arg("report").arg(&file).args(["--format", format]);
        assert_eq!(stdout_of(report), live, "{format}: saved differs from live");
        // The copy saved for --last is the same run.
        let mut last = pelt(data.path());
        last.args(["report", "--last", "--format", format]);
        assert_eq!(stdout_of(last), live, "{format}: --last differs");
    }
    let saved = std::fs::read_dir(data.path().join("runs")).unwrap().count();
    assert_eq!(saved, 4, "each run was saved once");
}

#[test]
fn csv_and_window_cover_the_seconds_asked_for() {
    let (_machine, s) = server();
    let data = tempfile::tempdir().unwrap();
    let (file, whole) = saved_rate_run(data.path(), &s, "200", "4s");
    let csv = report_as(data.path(), &file, "csv");
    let requests = csv
        .lines()
        .next()
        .unwrap()
        .split(',')
        .position(|c| c == "requests")
        .unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), whole["timeline"].as_array().unwrap().len());
    let csv_total: u64 = rows
        .iter()
        .map(|r| r.split(',').nth(requests).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(csv_total, whole["requests"]["total"].as_u64().unwrap());

    let mut part = pelt(data.path());
    part.arg("report")
        .arg(&file)
        .args(["--window", "1s..3s", "--format", "json"]);
    let part = json(&stdout_of(part));
    let n = part["requests"]["total"].as_u64().unwrap();
    assert!((396..=404).contains(&n), "two seconds at 200/s: {n}");
    assert_eq!(part["timeline"].as_array().unwrap().len(), 2);
    assert_eq!(part["window"]["from_s"], 1.0);
    let d = part["duration_s"].as_f64().unwrap();
    assert!((1.99..=2.01).contains(&d), "{d}");
}

#[test]
fn merging_two_files_adds_exactly() {
    // Two runs at once against one server: what two machines would record.
    let (_machine, s) = server();
    let data = tempfile::tempdir().unwrap();
    let url = format!("http://{}/?delay=1ms&delay_max=4ms", s.local_addr());
    let files: Vec<PathBuf> = ["a", "b"]
        .iter()
        .map(|n| data.path().join(format!("{n}.pelt")))
        .collect();
    let children: Vec<_> = files
        .iter()
        .map(|f| {
            command()
                .env("PELT_DATA_DIR", data.path())
                .args([
                    &url, "--rate", "300", "-d", "2s", "--format", "json", "-q", "-o",
                ])
                .arg(f)
                .output_async()
        })
        .collect();
    let parts: Vec<Value> = children.into_iter().map(|c| json(&c.wait())).collect();
    let mut merge = pelt(data.path());
    merge
        .arg("report")
        .args(&files)
        .args(["--merge", "--format", "json"]);
    let merged = json(&stdout_of(merge));
    let sum = |path: &[&str]| -> u64 {
        parts
            .iter()
            .map(|p| path.iter().fold(p, |v, k| &v[*k]).as_u64().unwrap())
            .sum()
    };
    let get = |path: &[&str]| path.iter().fold(&merged, |v, k| &v[*k]).as_u64().unwrap();
    for path in [
        &["requests", "total"][..],
        &["requests", "successes"],
        &["status_codes", "200"],
        &["bytes", "in"],
        &["bytes", "out"],
        &["connections", "opened"],
        &["latency", "response_time", "count"],
        &["latency", "service_time", "count"],
    ] {
        assert_eq!(get(path), sum(path), "{path:?}");
    }
    assert_eq!(get(&["requests", "total"]), s.requests());
    // Regression (merged runs reported file 0's offered rate): two machines
    // at 300 req/s offered 600 together.
    assert_eq!(merged["offered_rate"], 600.0);
    // Percentiles of the union lie between the parts'.
    let p99 = |v: &Value| {
        v["latency"]["response_time"]["percentiles_s"]["p99"]
            .as_f64()
            .unwrap()
    };
    let (lo, hi) = (
        p99(&parts[0]).min(p99(&parts[1])),
        p99(&parts[0]).max(p99(&parts[1])),
    );
    assert!((lo..=hi).contains(&p99(&merged)));

    // Without --merge, several files are only overlaid (HTML) or refused.
    let mut refuse = pelt(data.path());
    refuse.arg("report").args(&files);
    let out = refuse.output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--merge"));
}

/// `Command::output` in a thread, so that two runs overlap in time.
trait OutputAsync {
    fn output_async(self) -> std::thread::JoinHandle<String>;
}

impl OutputAsync for &mut std::process::Command {
    fn output_async(self) -> std::thread::JoinHandle<String> {
        let out = self
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::spawn(move || {
            let out = out.wait_with_output().unwrap();
            // Seen failing once in a full-suite run under heavy load, with
            // no message; say why if it happens again.
            assert!(
                out.status.success(),
                "{:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        })
    }
}

trait Wait {
    fn wait(self) -> String;
}

impl Wait for std::thread::JoinHandle<String> {
    fn wait(self) -> String {
        self.join().unwrap()
    }
}

#[test]
fn a_run_killed_with_sigkill_is_readable_to_its_last_second() {
    let (_machine, s) = server();
    let data = tempfile::tempdir().unwrap();
    let file = data.path().join("killed.pelt");
    let url = format!("http://{}/", s.local_addr());
    let mut child = command()
        .env("PELT_DATA_DIR", data.path())
        .args([&url, "--rate", "500", "-d", "60s", "-q", "-o"])
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for ~3.5 s of load by the server's own count, then kill -9.
    wait_until(Duration::from_secs(30), "no load arrived", || {
        s.requests() >= 1750
    });
    child.kill().unwrap(); // SIGKILL: no chance to write a footer
    child.wait().unwrap();
    let sent = s.requests();

    let mut report = pelt(data.path());
    report.arg("report").arg(&file).args(["--format", "json"]);
    let r = json(&stdout_of(report));
    assert_eq!(r["complete"], false);
    assert!(r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "incomplete"));
    let total = r["requests"]["total"].as_u64().unwrap();
    // Every complete second was written: at most the last ~1.2 s is lost.
    assert!(
        total >= 1000 && total <= sent,
        "recorded {total} of {sent} sent"
    );
    assert!(sent - total <= 700, "lost {} requests", sent - total);
    let seconds = r["timeline"].as_array().unwrap().len();
    let elapsed = r["elapsed_s"].as_f64().unwrap();
    assert!(seconds >= 3, "{seconds} seconds");
    assert!(
        (elapsed - seconds as f64).abs() <= 1.5,
        "{elapsed} s over {seconds} rows"
    );
}

#[test]
fn corrupt_and_foreign_files_exit_2_with_one_line() {
    let (_machine, s) = server();
    let data = tempfile::tempdir().unwrap();
    let good = data.path().join("good.pelt");
    let url = format!("http://{}/", s.local_addr());
    let mut run = pelt(data.path());
    run.args([&url, "-n", "200", "-c", "2", "-o"]).arg(&good);
    stdout_of(run);
    let mut bytes = std::fs::read(&good).unwrap();
    let corrupt = data.path().join("corrupt.pelt");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&corrupt, &bytes).unwrap();
    let foreign = data.path().join("foreign.pelt");
    std::fs::write(&foreign, "{\"not\": \"pelt\"}").unwrap();
    let empty = tempfile::tempdir().unwrap();
    for (args, hint) in [
        (vec![corrupt.to_str().unwrap()], "corrupt results file"),
        (vec![foreign.to_str().unwrap()], "not a pelt results file"),
        (vec!["/no/such/run.pelt"], "cannot read"),
        (
            vec![good.to_str().unwrap(), "--window", "5s..1s"],
            "end must come after",
        ),
        (
            vec![good.to_str().unwrap(), "--format", "yaml"],
            "invalid value",
        ),
    ] {
        let mut c = pelt(data.path());
        c.arg("report").args(&args);
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(hint), "{args:?}: {err}");
    }
    let mut none = pelt(empty.path());
    none.args(["report", "--last"]);
    let out = none.output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no saved runs"));
}

#[test]
fn hdrlog_is_readable_by_hdrhistogram() {
    use base64::Engine;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    let (_machine, s) = server();
    let data = tempfile::tempdir().unwrap();
    let (file, live) = saved_rate_run(data.path(), &s, "300", "3s");
    let log = report_as(data.path(), &file, "hdrlog");
    // Per tag (None: the untagged main series), lines and values.
    let mut series: std::collections::BTreeMap<Option<String>, (usize, u64)> = Default::default();
    for entry in IntervalLogIterator::new(log.as_bytes()) {
        if let LogEntry::Interval(h) = entry.expect("a valid interval log") {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(h.encoded_histogram())
                .unwrap();
            let hist: hdrhistogram::Histogram<u64> =
                Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
            let s = series
                .entry(h.tag().map(|t| t.as_str().to_string()))
                .or_default();
            s.0 += 1;
            s.1 += hist.len();
        }
    }
    let seconds = live["timeline"].as_array().unwrap().len();
    // Response time is untagged, so HdrHistogram's tools read it without -tag.
    assert_eq!(
        series[&None],
        (
            seconds,
            live["latency"]["response_time"]["count"].as_u64().unwrap()
        )
    );
    for (tag, key) in [("service_time", "service_time"), ("send_lag", "send_lag")] {
        assert_eq!(
            series[&Some(tag.to_string())],
            (seconds, live["latency"][key]["count"].as_u64().unwrap()),
            "{tag}"
        );
    }
    assert_eq!(series.len(), 3, "{:?}", series.keys());
}

/// HdrHistogram's own Java HistogramLogProcessor (Debian's
/// libhdrhistogram-java, which `scripts/test` installs), run as a user
/// would, without `-tag`: it reads the untagged response-time series.
#[test]
fn hdrlog_main_series_is_found_by_histogram_log_processor() {
    const JAR: &str = "/usr/share/java/hdrhistogram.jar";
    assert!(
        Path::new(JAR).exists(),
        "{JAR} is missing: run scripts/test, which installs libhdrhistogram-java"
    );
    let (_machine, s) = server();
    let data = tempfile::tempdir().unwrap();
    let (file, live) = saved_rate_run(data.path(), &s, "200", "2s");
    let hlog = data.path().join("run.hlog");
    std::fs::write(&hlog, report_as(data.path(), &file, "hdrlog")).unwrap();
    let processor = |tag: Option<&str>| {
        let mut java = std::process::Command::new("java");
        java.args(["-cp", JAR, "org.HdrHistogram.HistogramLogProcessor", "-i"])
            .arg(&hlog);
        if let Some(tag) = tag {
            java.args(["-tag", tag]);
        }
        let out = java
            .stdin(std::process::Stdio::null())
            .output()
            .expect("java runs: scripts/test installs it");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "HistogramLogProcessor failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // `#[Max     =        6.115, Total count    =          200]`
        stdout
            .lines()
            .find_map(|l| l.split("Total count").nth(1))
            .and_then(|rest| {
                rest.trim_matches(|c: char| c == '=' || c == ']' || c.is_whitespace())
                    .parse::<u64>()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no total count in:\n{stdout}"))
    };
    assert_eq!(
        processor(None),
        live["latency"]["response_time"]["count"].as_u64().unwrap()
    );
    assert_eq!(
        processor(Some("send_lag")),
        live["latency"]["send_lag"]["count"].as_u64().unwrap()
    );
}
