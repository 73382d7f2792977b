//! Keeps the peer benchmark (`bench/peers.sh`) from rotting: a `--quick` run
//! with pelt alone against the harness's own nginx (installed by
//! scripts/test), which must finish and report pelt's requests per second;
//! and its h3 test, against a private Caddy and `pelt serve --http3`.
//!
//! This checks that the harness runs and reads pelt's JSON report, not any
//! performance figure: the numbers of a 2-second debug-build run mean nothing.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A quick run takes about 30 s (nine 2-second runs plus nginx's and
/// Caddy's start).
const TIME_LIMIT: Duration = Duration::from_secs(120);

/// The median requests/s in the "Max load: medians" table's pelt row.
fn pelt_requests_per_second(markdown: &str) -> Option<f64> {
    let table = markdown.split("## Max load: medians").nth(1)?;
    let row = table
        .lines()
        .take_while(|line| !line.starts_with("## "))
        .find(|line| line.starts_with("| pelt |"))?;
    // | tool | requests | req/s | ...
    let cell = row.split('|').nth(3)?.trim().replace(',', "");
    cell.parse().ok()
}

#[test]
fn bench_peers_quick_reports_pelt_requests_per_second() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out_dir = tempfile::tempdir().expect("temp dir for the reports");
    let pelt = pelt_testkit::pelt::bin();

    let started = Instant::now();
    let mut child = Command::new("bash")
        .arg(repo.join("bench/peers.sh"))
        .args(["--quick", "--skip-install", "--tools", "pelt", "--pelt"])
        .arg(&pelt)
        .arg("--out-dir")
        .arg(out_dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run bash bench/peers.sh");
    // Bounded: kill the harness (it stops its nginx and tool on SIGTERM) if it
    // overruns.
    while child.try_wait().expect("wait for peers.sh").is_none() {
        if started.elapsed() > TIME_LIMIT {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            std::thread::sleep(Duration::from_secs(5));
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("collect peers.sh output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "bench/peers.sh --quick failed ({}) after {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status,
        started.elapsed()
    );

    let rate = pelt_requests_per_second(&stdout).unwrap_or_else(|| {
        panic!("no pelt row with a req/s figure in:\n{stdout}\nstderr:\n{stderr}")
    });
    assert!(rate > 0.0, "pelt's req/s is {rate}:\n{stdout}");
    // The h3 test (a private Caddy, which scripts/test installs): pelt's
    // HTTP/3 and HTTP/2 rows.
    let h3 = stdout
        .split("## HTTP/3")
        .nth(1)
        .unwrap_or_else(|| panic!("no HTTP/3 section in:\n{stdout}\nstderr:\n{stderr}"));
    for row in ["| h3 | pelt |", "| h2 | pelt |", "| h3-serve | pelt |"] {
        assert!(h3.contains(row), "no {row} row in:\n{h3}");
    }
    // The close test (issue 44): pelt --no-keepalive at -c 1 and -c 50,
    // with its preemptions per request.
    let close = stdout
        .split("## A connection per request")
        .nth(1)
        .unwrap_or_else(|| panic!("no close section in:\n{stdout}\nstderr:\n{stderr}"));
    assert!(close.contains("preemptions/req"), "{close}");
    for row in ["| 1 | pelt |", "| 50 | pelt |"] {
        assert!(close.contains(row), "no {row} row in:\n{close}");
    }
    // The scale test (issue 27): pelt's row at 1,000 connections, and its
    // memory with one and 1,000 targets.
    let scale = stdout
        .split("## Scale: connections and targets")
        .nth(1)
        .unwrap_or_else(|| panic!("no scale section in:\n{stdout}\nstderr:\n{stderr}"));
    assert!(scale.contains("\n| 1,000 | 1 | – | "), "{scale}");
    assert!(scale.contains("1,000 distinct URLs"), "{scale}");

    // The report is also saved, with the raw JSON beside it.
    let saved: Vec<String> = std::fs::read_dir(out_dir.path())
        .expect("read the output dir")
        .map(|entry| {
            entry
                .expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    for ext in [".md", ".json"] {
        assert!(
            saved
                .iter()
                .any(|name| name.starts_with("peers-") && name.ends_with(ext)),
            "no peers-*{ext} in {saved:?}"
        );
    }
}
