//! Issue 35 §3, "a verdict holds up": the one-run baseline gate against
//! an outlying baseline run and a baseline too noisy to judge, verdicts
//! that disagree, precision advice for a run that stopped by count, and
//! an experiment's dry run of such runs.

use pelt_testkit::pelt::{ok, ok_stdout, pelt, server};
use std::path::Path;

/// `pelt` with a history of its own in `dir`.
fn with_history(dir: &Path) -> assert_cmd::Command {
    let mut c = pelt();
    c.env("PELT_DATA_DIR", dir)
        .env("PELT_HISTORY", dir.join("h.db"))
        .env_remove("PELT_NO_HISTORY");
    c
}

/// Records a closed-loop run of 20 requests at `delay`, tagged `tag`.
fn record(dir: &Path, base: &str, delay: &str, tag: &str) {
    let out = with_history(dir)
        .args([
            "run",
            &format!("{base}/?delay={delay}"),
            "-n",
            "20",
            "-c",
            "1",
            "-q",
        ])
        .args(["--tag", tag])
        .output()
        .unwrap();
    ok(&out);
}

/// The gate: a run at `delay` against the runs tagged `tag`.
fn gate(dir: &Path, base: &str, delay: &str, tag: &str) -> std::process::Output {
    with_history(dir)
        .args([
            "run",
            &format!("{base}/?delay={delay}"),
            "-n",
            "20",
            "-c",
            "1",
            "-q",
        ])
        .args([
            "--baseline",
            &format!("tag:{tag}"),
            "--fail-on",
            "regression",
        ])
        // The delays are asked for in the query string: the URLs differ.
        .arg("--allow-mismatch")
        .output()
        .unwrap()
}

/// Issue 35 §3: 5 baseline runs at 20 ms and 1 at 60 ms, then a run at
/// 80 ms: the gate said INCONCLUSIVE (−38 % .. +1710 %) and passed (exit
/// 0), naming no outlier. The outlying run is named and left out by a
/// stated rule, and the gate fails. A baseline too noisy to judge a run
/// worse than all of it fails the gate too, saying so; and the table
/// says what its columns are (a mean, a 98.3 % interval).
#[test]
fn an_outlying_baseline_run_no_longer_blinds_the_gate() {
    let srv = server(None);
    let base = format!("http://{}", srv.local_addr());
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..5 {
        record(dir.path(), &base, "20ms", "steady");
    }
    record(dir.path(), &base, "60ms", "steady");
    let out = gate(dir.path(), &base, "80ms", "steady");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("Outlier left out of the baseline: #6 for p50"),
        "{err}"
    );
    assert!(
        err.contains("robust standard deviations"),
        "the rule: {err}"
    );
    let p50 = err.lines().find(|l| l.starts_with("p50 ")).unwrap();
    assert!(p50.contains("REGRESSION"), "{p50}");
    // The columns say what they hold.
    let head = err.lines().find(|l| l.starts_with("metric ")).unwrap();
    assert!(
        head.contains("A (mean)") && head.contains("B (run)"),
        "{head}"
    );
    assert!(
        !head.contains("95% interval") && head.contains("% interval"),
        "{head}"
    );

    // Three runs far apart: no verdict can be had against them, and a
    // run slower than all three must not pass for that.
    for delay in ["20ms", "40ms", "60ms"] {
        record(dir.path(), &base, delay, "noisy");
    }
    let out = gate(dir.path(), &base, "75ms", "noisy");
    let err = String::from_utf8_lossy(&out.stderr);
    let p50 = err.lines().find(|l| l.starts_with("p50 ")).unwrap();
    assert!(p50.contains("INCONCLUSIVE"), "{p50}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--fail-on: the gate could not judge p50"),
        "{err}"
    );
    // A run within the noisy baseline's range passes.
    let out = gate(dir.path(), &base, "30ms", "noisy");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 35 §3: a cold cache headlined "p99 REGRESSION (material)" while
/// p50 fell 97 % and throughput rose 134 %. B here answers most requests
/// in 1 ms and one in twenty in 40 ms; A answers all in 5 ms: p50 and
/// throughput improve, p99 regresses, and the headline says the verdicts
/// disagree.
#[test]
fn verdicts_that_disagree_are_headlined_as_disagreeing() {
    let srv = server(None);
    let base = format!("http://{}", srv.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let a_targets = dir.path().join("a.txt");
    std::fs::write(&a_targets, format!("{base}/?delay=5ms\n")).unwrap();
    let b_targets = dir.path().join("b.txt");
    std::fs::write(
        &b_targets,
        format!("19 {base}/?delay=1ms\n1 {base}/?delay=40ms\n"),
    )
    .unwrap();
    let mut files = (Vec::new(), Vec::new());
    for i in 0..4 {
        for (side, targets) in [("a", &a_targets), ("b", &b_targets)] {
            let f = dir.path().join(format!("{side}{i}.pelt"));
            let out = pelt()
                .arg("run")
                .arg("-f")
                .arg(targets)
                .args(["-n", "400", "-c", "2", "-t", "1", "-q", "--no-save", "-o"])
                .arg(&f)
                .output()
                .unwrap();
            ok(&out);
            match side {
                "a" => files.0.push(f),
                _ => files.1.push(f),
            }
        }
    }
    let out = pelt()
        .arg("compare")
        .args(&files.0)
        .arg("--vs")
        .args(&files.1)
        .arg("--allow-mismatch")
        .output()
        .unwrap();
    let text = ok_stdout(&out);
    let headline = text
        .lines()
        .find(|l| l.starts_with("headline: "))
        .unwrap_or_else(|| panic!("{text}"));
    let (better, worse) = headline
        .strip_prefix("headline: the verdicts disagree: ")
        .and_then(|rest| rest.split_once(" improved; "))
        .unwrap_or_else(|| panic!("{headline}"));
    assert!(
        better.contains("p50") && better.contains("throughput"),
        "{headline}"
    );
    assert!(
        worse.contains("p99") && worse.contains("regressed"),
        "{headline}"
    );
    // The verdicts were judged as one family, and the report says how.
    assert!(text.contains("judged as one family"), "{text}");
}

/// Issue 35 §3: a 0.6 s run of `-n` requests was told to run "~90 min"
/// to pin its p99.99: its length was the server's pace. A run that stops
/// by count is told a count; and Precision says it assumes a stationary
/// run.
#[test]
fn precision_advice_for_a_run_by_count_is_a_count() {
    let srv = server(None);
    let url = format!("http://{}/", srv.local_addr());
    let text = ok_stdout(
        &pelt()
            .args([&url, "-n", "3000", "-c", "2", "--no-save"])
            .output()
            .unwrap(),
    );
    let precision: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Precision"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(
        precision
            .iter()
            .any(|l| l.contains("assumes a stationary run")),
        "{precision:#?}"
    );
    let advice: Vec<&&str> = precision
        .iter()
        .filter(|l| l.contains("too wide") || l.contains("too few samples"))
        .collect();
    assert!(
        !advice.is_empty(),
        "p99.99 of 3,000 needs advice: {precision:#?}"
    );
    for line in advice {
        assert!(line.contains("requests (-n)"), "{line}");
        assert!(!line.contains("min ") && !line.contains("h "), "{line}");
    }
}

/// Issue 35 §3: `pelt experiment --dry-run` of runs with `-n` in `args`
/// said "about 8 min of load" (the default 10 s a run) for what took 26 s.
#[test]
fn an_experiment_dry_run_of_runs_by_count_does_not_guess_their_length() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("plan.toml"),
        r#"
name = "by-count"
blocks = 6
[load]
connections = 10
args = ["-n", "500"]
[[variant]]
name = "A"
url = "http://127.0.0.1:9/a"
[[variant]]
name = "B"
url = "http://127.0.0.1:9/b"
"#,
    )
    .unwrap();
    let out = pelt()
        .current_dir(dir.path())
        .args(["experiment", "plan.toml", "--dry-run"])
        .output()
        .unwrap();
    let text = ok_stdout(&out);
    let first = text.lines().next().unwrap();
    assert!(
        first.contains("12 runs, each until its 500 requests"),
        "{first}"
    );
    assert!(!first.contains("of load"), "{first}");
}
