//! `pelt experiment`: its flags, exit codes, output, progress and
//! signals, and one plan run end to end on a known difference (A/B).
//! What an experiment concludes and how it runs a plan's commands is
//! pelt-campaign's to test (crates/pelt-campaign/tests/experiment.rs).

use pelt_testkit::pelt::{command, exclusive, ok, pelt, server};
use pelt_testkit::pinned::{pelt_ahead_on, serve_ahead_on};
use pelt_testkit::process::{signal, wait_until};
use pelt_testkit::schema;
use serde_json::Value;
use std::path::Path;

/// Runs `pelt experiment plan` in `dir`, returns (exit code, stdout,
/// stderr, report.json).
fn experiment(dir: &Path, plan: &str) -> (i32, String, String, Option<Value>) {
    experiment_with(dir, plan, &[])
}

fn experiment_with(dir: &Path, plan: &str, extra: &[&str]) -> (i32, String, String, Option<Value>) {
    experiment_by(pelt(), dir, plan, extra)
}

/// [`experiment_with`] run by `pelt`, a command for the binary (one ahead
/// of other work, say).
fn experiment_by(
    mut pelt: assert_cmd::Command,
    dir: &Path,
    plan: &str,
    extra: &[&str],
) -> (i32, String, String, Option<Value>) {
    std::fs::write(dir.join("plan.toml"), plan).unwrap();
    let out = pelt
        .current_dir(dir)
        .args(["experiment", "plan.toml", "-o", "out"])
        .args(extra)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let report = std::fs::read(dir.join("out/report.json"))
        .ok()
        .map(|b| serde_json::from_slice(&b).expect("report.json is JSON"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        report,
    )
}

/// The p50 comparison of the first variant against the baseline.
fn p50_verdict(report: &Value) -> &Value {
    report["comparisons"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"]["name"] == "p50")
        .expect("a p50 row")
        .get("comparison")
        .expect("p50 was compared")
}

fn two_urls(a: &str, b: &str) -> String {
    format!(
        r#"
name = "ab"
blocks = 6
[load]
rate = 300
connections = 10
duration = "600ms"
warmup = "200ms"
threads = 1
[[variant]]
name = "A"
url = "{a}"
[[variant]]
name = "B"
url = "{b}"
"#
    )
}

#[test]
fn added_delay_of_2ms_is_a_material_p50_regression() {
    // Experiments own the machine: see `exclusive`.
    let _machine = exclusive();
    // A 2 ms delay is the truth the verdict is judged against: the
    // server and pelt run ahead of other work, on a CPU each (at a load
    // average of 8 to 13 the verdict came out not material).
    let (_server, base) = serve_ahead_on("1");
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr, report) = experiment_by(
        assert_cmd::Command::from_std(pelt_ahead_on("0")),
        dir.path(),
        &two_urls(&base, &format!("{base}?delay=2ms")),
        &["--fail-on", "material"],
    );
    // --fail-on material: a material regression fails the build.
    assert_eq!(code, 1, "{stderr}");
    let report = report.expect("report.json written");
    schema::experiment(&report);
    assert_eq!(report["runs"].as_array().unwrap().len(), 12);
    let p50 = p50_verdict(&report);
    assert_eq!(p50["verdict"]["kind"], "regression", "{stdout}");
    assert_eq!(p50["verdict"]["material"], true, "{stdout}");
    assert_eq!(p50["design"]["blocks"], 6);
    assert!(
        stdout.contains("B vs A (6 blocks, paired): p50 REGRESSION (material)"),
        "{stdout}"
    );
    // Progress says which run of how many, with the time left.
    assert!(stderr.contains("run 12/12: block 6/6"), "{stderr}");
    assert!(stderr.contains("left)"), "{stderr}");
    // Every run is saved, and the HTML report, as a browser sees it, has
    // the verdicts and charts and runs no script.
    for run in report["runs"].as_array().unwrap() {
        let file = dir.path().join("out").join(run["file"].as_str().unwrap());
        assert!(file.is_file(), "{}", file.display());
    }
    let dom = pelt_testkit::chromium::dump_dom(&dir.path().join("out/report.html"));
    assert!(dom.contains("REGRESSION (material)"));
    assert!(dom.contains("Latency against load"));
    assert_eq!(
        dom.matches("<svg").count(),
        2,
        "spectrum and latency against load"
    );
    assert!(!dom.contains("<script"));
}

/// A failed setup stops `pelt experiment` with exit 2 and one line
/// saying where the runs so far are.
#[test]
fn failed_setup_stops_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let plan = r#"
[load]
url = "http://127.0.0.1:9/"
rate = 10
duration = "1s"
[[variant]]
name = "broken"
setup = "echo starting; exit 3"
teardown = "touch torn-down"
"#;
    let (code, _, stderr, report) = experiment(dir.path(), plan);
    assert_eq!(code, 2, "{stderr}");
    let last = stderr.lines().last().unwrap();
    assert!(
        last.starts_with(
            "error: experiment stopped: variant 'broken', block 1: the setup command failed"
        ),
        "{stderr}"
    );
    assert!(
        last.contains("the runs so far and the report are in"),
        "{stderr}"
    );
    assert!(report.is_some(), "the report is written even so");
}

/// `$PELT` in a plan's commands is this pelt: the plan's setup starts
/// `pelt serve` as the backend every variant loads, its teardown stops
/// it; `--dry-run` says both. (The order of every command is
/// pelt-campaign's test.)
#[test]
fn a_plan_starts_pelt_serve_as_its_backend_and_dry_run_says_so() {
    let dir = tempfile::tempdir().unwrap();
    // `pelt serve -p` binds by number: a port below the ephemeral range.
    let port = pelt_testkit::ports::free_port();
    let plan = format!(
        r#"
setup = "echo up >> events; $PELT serve -p {port} -t 1 > serve.log 2>&1 & echo $! > serve.pid"
teardown = "kill $(cat serve.pid) && echo down >> events"
blocks = 2
[load]
url = "http://127.0.0.1:{port}/"
rate = 200
duration = "300ms"
warmup = "100ms"
threads = 1
[[variant]]
name = "shared backend"
setup = "echo variant-up >> events"
teardown = "echo variant-down >> events"
"#
    );
    std::fs::write(dir.path().join("plan.toml"), &plan).unwrap();
    let dry = pelt()
        .current_dir(dir.path())
        .args(["experiment", "plan.toml", "--dry-run"])
        .output()
        .unwrap();
    let dry = String::from_utf8_lossy(&dry.stdout);
    assert!(dry.contains("first, once: echo up >> events"), "{dry}");
    assert!(dry.contains("last, once, whatever happened: kill"), "{dry}");

    let (code, _, stderr, report) = experiment(dir.path(), &plan);
    assert_eq!(code, 0, "{stderr}");
    let runs = report.unwrap()["runs"].as_array().unwrap().clone();
    assert_eq!(runs.len(), 2);
    // Both runs were served by the `pelt serve` the plan started: without
    // it no variant would be ready, and the experiment would stop (exit 2).
    assert!(
        std::fs::read_to_string(dir.path().join("events"))
            .unwrap()
            .ends_with("down\n"),
        "the plan's teardown ran"
    );
    // The backend the plan started ends (SIGTERM from the teardown; it
    // exits, or is a zombie awaiting a reaper, within moments).
    let pid = std::fs::read_to_string(dir.path().join("serve.pid")).unwrap();
    let stat = format!("/proc/{}/stat", pid.trim());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let ended = || {
        std::fs::read_to_string(&stat).map_or(true, |s| {
            s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    while !ended() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(ended(), "pid {pid} still runs");
}

/// A failing plan setup stops `pelt experiment` with exit 2 and one line.
#[test]
fn failed_plan_setup_stops_before_any_variant() {
    let dir = tempfile::tempdir().unwrap();
    let plan = r#"
setup = "echo nope; exit 4"
teardown = "touch torn-down"
[load]
url = "http://127.0.0.1:9/"
rate = 10
duration = "1s"
[[variant]]
name = "never"
setup = "touch variant-set-up"
"#;
    let (code, _, stderr, _) = experiment(dir.path(), plan);
    assert_eq!(code, 2, "{stderr}");
    let last = stderr.lines().last().unwrap();
    assert!(
        last.starts_with("error: experiment not started: the plan's setup command failed"),
        "{stderr}"
    );
}

#[test]
fn a_variant_that_never_serves_is_refused_after_the_ready_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let plan = r#"
ready_timeout = "300ms"
[load]
url = "http://127.0.0.1:9/"
rate = 10
[[variant]]
name = "down"
"#;
    let (code, _, stderr, _) = experiment(dir.path(), plan);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not ready after 300ms"), "{stderr}");
    assert!(stderr.contains("connect"), "{stderr}");
}

#[test]
fn dry_run_and_bad_plans() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("plan.toml"),
        two_urls("http://127.0.0.1:9/", "http://127.0.0.1:9/?x"),
    )
    .unwrap();
    let out = pelt()
        .current_dir(dir.path())
        .args(["experiment", "plan.toml", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("= 12 runs"), "{text}");
    assert!(text.contains("block  2: B, A"), "{text}");
    assert!(!dir.path().join("out").exists());

    std::fs::write(dir.path().join("bad.toml"), "[load]\nrate = 1\n").unwrap();
    for (args, hint) in [
        (&["experiment", "bad.toml"][..], "bad.toml: no variants"),
        (
            &["experiment", "missing.toml"],
            "cannot read plan 'missing.toml'",
        ),
    ] {
        let out = pelt().current_dir(dir.path()).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(hint), "{err}");
    }
    // An existing, non-empty output folder is never reused.
    std::fs::create_dir_all(dir.path().join("used")).unwrap();
    std::fs::write(dir.path().join("used/x"), "").unwrap();
    let out = pelt()
        .current_dir(dir.path())
        .args(["experiment", "plan.toml", "-o", "used"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not empty"));
}

/// Waits (up to 20 s, polling another process's progress) until `ready`,
/// then sends `child` one SIGINT; returns when the wait started.
fn interrupt_once(
    child: &std::process::Child,
    what: &str,
    ready: impl Fn() -> bool,
) -> std::time::Instant {
    let started = wait_until(std::time::Duration::from_secs(20), what, ready);
    signal(child, "INT");
    started
}

#[test]
fn ctrl_c_tears_down_and_reports_what_was_measured() {
    // Experiments own the machine: see `exclusive`.
    let _machine = exclusive();
    let srv = server(None);
    let url = format!("http://{}/", srv.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let plan = two_urls(&url, &url)
        .replace("duration = \"600ms\"", "duration = \"30s\"")
        .replace("name = \"A\"", "name = \"A\"\nteardown = \"touch a-down\"");
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    let child = command()
        .current_dir(dir.path())
        .args(["experiment", "plan.toml", "-o", "out"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first run's load is flowing (the server's own count).
    let started = interrupt_once(&child, "no load arrived", || srv.requests() >= 200);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(started.elapsed().as_secs() < 20, "stopped promptly");
    assert!(
        dir.path().join("a-down").exists(),
        "the variant was torn down"
    );
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    assert_eq!(report["interrupted"], true);
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["interrupted"], true);
    let file = runs[0]["file"].as_str().unwrap();
    assert!(file.starts_with("runs/"), "{file}");
    assert!(
        dir.path().join("out").join(file).is_file(),
        "the run is saved"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Interrupted"), "{stdout}");
}

/// The plans in examples/ stay valid as pelt changes (running them takes
/// minutes; checking them takes none).
#[test]
fn example_plans_check_out() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut checked = 0;
    for entry in std::fs::read_dir(&examples).unwrap().flatten() {
        let plan = entry.path().join("plan.toml");
        if !plan.is_file() {
            continue;
        }
        let out = pelt()
            .args(["experiment", "--dry-run"])
            .arg(&plan)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            plan.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        // Their setup scripts exist and are executable.
        let text = std::fs::read_to_string(&plan).unwrap();
        for script in text.split('"').filter(|s| s.starts_with("./")) {
            let path = entry.path().join(script.split(' ').next().unwrap());
            let mode =
                std::os::unix::fs::PermissionsExt::mode(&path.metadata().unwrap().permissions());
            assert!(mode & 0o111 != 0, "{} is not executable", path.display());
        }
        checked += 1;
    }
    assert_eq!(
        checked, 4,
        "four example plans: concurrency, http3, proxy-cache, rewrite-rules"
    );
}

/// Ctrl-C used to kill pelt outright before the first run (during a setup
/// or a ready wait), leaving what the setup started running.
#[test]
fn ctrl_c_while_waiting_for_ready_still_tears_down() {
    let dir = tempfile::tempdir().unwrap();
    let plan = r#"
ready_timeout = "30s"
[load]
url = "http://127.0.0.1:9/"
rate = 10
[[variant]]
name = "never-ready"
setup = "sleep 300 > /dev/null 2>&1 & echo $! > server.pid"
teardown = "kill $(cat server.pid) && touch torn-down"
"#;
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    let mut child = command()
        .current_dir(dir.path())
        .args(["experiment", "plan.toml", "-o", "out", "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The setup has run once its pid file is written; pelt is then
    // waiting for a port that never answers.
    let pid_file = dir.path().join("server.pid");
    let started = interrupt_once(&child, "setup never ran", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n'))
    });
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        started.elapsed().as_secs() < 20,
        "stopped without waiting 30 s"
    );
    assert!(dir.path().join("torn-down").exists(), "teardown ran");
}

/// Issue 13: an experiment's runs are recorded in the history, labelled
/// with the experiment and tagged with variant, level and block.
#[test]
fn experiment_runs_are_recorded_in_the_history() {
    let a = pelt_testkit::pelt::server(None);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://{}/", a.local_addr());
    let plan = two_urls(&url, &url)
        .replace("duration = \"600ms\"", "duration = \"200ms\"")
        .replace("warmup = \"200ms\"", "warmup = \"100ms\"");
    let db = dir.path().join("history.db");
    let db = db.to_str().unwrap();
    let (code, _, err, _) = experiment_with(dir.path(), &plan, &["--history", db]);
    assert_eq!(code, 0, "{err}");
    let out = pelt()
        .args(["history", "--history", db, "--format", "json"])
        .output()
        .unwrap();
    ok(&out);
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.len(), 12, "6 blocks x 2 variants: {rows:#?}");
    assert!(rows
        .iter()
        .all(|r| r["kind"] == "experiment" && r["label"] == "ab"));
    for variant in ["A", "B"] {
        let n = rows
            .iter()
            .filter(|r| r["tags"]["variant"] == variant)
            .count();
        assert_eq!(n, 6, "{rows:#?}");
    }
    assert!(rows.iter().all(|r| r["tags"]["experiment"] == "ab"));
}
