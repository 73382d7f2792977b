//! `pelt compare` on real runs: a real slowdown is a material regression,
//! unchanged figures are not, and CI can fail on it.

mod support;

use serde_json::Value;
use std::path::PathBuf;
use support::pelt::{pelt, server};

/// Four 1 s runs at 200 req/s against `path`, saved; returns the files.
fn runs(dir: &std::path::Path, name: &str, url: &str) -> Vec<PathBuf> {
    (0..4)
        .map(|i| {
            let file = dir.join(format!("{name}{i}.pelt"));
            let out = pelt()
                .args([url, "--rate", "200", "-d", "1s", "-q", "--no-save", "-o"])
                .arg(&file)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            file
        })
        .collect()
}

fn verdict<'a>(doc: &'a Value, metric: &str) -> &'a Value {
    doc["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"]["name"] == metric)
        .map(|m| &m["comparison"]["verdict"])
        .unwrap_or_else(|| panic!("no {metric} in {doc:#}"))
}

#[test]
fn a_real_slowdown_is_a_material_regression() {
    let s = server(None);
    let dir = tempfile::tempdir().unwrap();
    let fast = format!("http://{}/?delay=1ms&delay_max=2ms", s.local_addr());
    let slow = format!("http://{}/?delay=4ms&delay_max=5ms", s.local_addr());
    let a = runs(dir.path(), "a", &fast);
    let b = runs(dir.path(), "b", &slow);

    let out = pelt()
        .arg("compare")
        .args(&a)
        .arg("--vs")
        .args(&b)
        .args(["--format", "json", "--fail-on", "regression"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a regression fails the build");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p50 = verdict(&doc, "p50");
    assert_eq!(p50["kind"], "regression", "{doc:#}");
    assert_eq!(p50["material"], true);
    // Throughput (successes over the time to the last response) really is a
    // hair lower when responses are slower, and runs are steady enough to
    // show it: a regression, but far inside the 2 % margin.
    assert_ne!(verdict(&doc, "throughput")["material"], true, "{doc:#}");
    assert_ne!(verdict(&doc, "errors")["kind"], "regression");

    // The other way round p50 is an improvement, and nothing material fails.
    let out = pelt()
        .arg("compare")
        .args(&b)
        .arg("--vs")
        .args(&a)
        .args(["--format", "json", "--fail-on", "material"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdict(&doc, "p50")["kind"], "improvement");

    // The HTML page: the same verdicts, pooled spectra and timelines, no script.
    let out = pelt()
        .arg("compare")
        .args(&a)
        .arg("--vs")
        .args(&b)
        .args(["--format", "html"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains("<td class=\"verdict-regression\">REGRESSION (material)</td>"));
    assert!(page.contains("Latency by percentile") && page.contains("Over time"));
    assert_eq!(
        page.matches("<svg").count(),
        3,
        "spectrum, latency and throughput"
    );
    assert!(!page.contains("<script"));

    // One run each: differences, and no verdict.
    let out = pelt()
        .arg("compare")
        .arg(&a[0])
        .arg(&b[0])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("no verdict"), "{text}");
    assert!(text.contains("cannot separate a change from run-to-run noise"));

    // --paired needs equal counts.
    let out = pelt()
        .arg("compare")
        .args(&a)
        .arg("--vs")
        .arg(&b[0])
        .arg("--paired")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A saturated client looks like a slow server: a run whose worker
/// thread was busy all along is flagged by `pelt report` and `pelt
/// compare`. The busy footer is written into a copy of a real run (how
/// busy a real run's thread is depends on the machine).
#[test]
fn client_bound_runs_are_flagged_in_reports_and_comparisons() {
    use pelt_core::{ResultsReader, ResultsWriter, ThreadLoad};
    let s = server(None);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://{}/", s.local_addr());
    let real = runs(dir.path(), "a", &url).remove(0);
    let busy = dir.path().join("busy.pelt");
    let mut reader = ResultsReader::open(std::fs::File::open(&real).unwrap()).unwrap();
    let mut writer =
        ResultsWriter::new(std::fs::File::create(&busy).unwrap(), reader.header()).unwrap();
    while let Some((second, rec)) = reader.next_interval().unwrap() {
        writer.interval(second, &rec).unwrap();
    }
    let mut footer = reader.footer().cloned().unwrap();
    footer.worker_load = vec![
        ThreadLoad {
            on_cpu: 0.2,
            waiting: 0.0,
        },
        ThreadLoad {
            on_cpu: 0.93,
            waiting: 0.04,
        },
    ];
    writer.finish(&footer).unwrap();

    let out = pelt().arg("report").arg(&busy).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "Client       busiest of 2 worker threads on a CPU 93% of the run, waiting for one 4%"
        ),
        "{text}"
    );
    assert!(
        text.contains("warning: pelt's busiest worker thread (of 2) wanted a CPU 97% of the run"),
        "{text}"
    );

    let out = pelt()
        .arg("compare")
        .arg(&real)
        .arg(&busy)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("pelt was short of CPU in busy (client_busy: "),
        "{err}"
    );
    // The real run (a light 200 req/s) is not flagged.
    let out = pelt()
        .arg("compare")
        .arg(&real)
        .arg(&real)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "");
}
