//! `pelt sweep`: capacity searches against servers whose capacity is known
//! (the built-in server's `?work=` on one thread, nginx's `limit_req`), a
//! starved client named instead of measured, closed-loop levels, and bad
//! input. Pinned with taskset (util-linux): the server on CPU 1, pelt on
//! CPU 0, one test at a time; both at nice -20 where a test judges a
//! capacity, so that other work on the machine cannot move it (which is
//! why these searches are the binary's: only a process of its own can be
//! pinned so). A search that needs no pinning, and what the history makes
//! of a sweep, are the libraries' tests (crates/pelt-campaign/tests/sweep.rs,
//! crates/pelt-history/tests/sweep.rs).

use pelt_testkit::nginx::Nginx;
use pelt_testkit::pelt::{bad_input, exclusive, json, number as f, ok, pelt};
use pelt_testkit::pinned::{busy_on, pelt_ahead_on, pelt_on, put_ahead, serve_ahead_on, serve_on};
use pelt_testkit::process::{signal, Killed};
use pelt_testkit::schema;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Output, Stdio};

/// `pelt sweep ARGS --format json -o DIR` pinned to CPU 0 at nice -20
/// (bounded to 5 minutes).
fn sweep(dir: &Path, args: &[&str]) -> Output {
    sweep_by(pelt_ahead_on("0"), dir, args)
}

/// [`sweep`] run by `pelt`, a command that ends in the pelt binary.
fn sweep_by(pelt: std::process::Command, dir: &Path, args: &[&str]) -> Output {
    let mut c = assert_cmd::Command::from_std(pelt);
    c.arg("sweep")
        .args(args)
        .args(["--format", "json", "-o"])
        .arg(dir)
        .timeout(std::time::Duration::from_secs(300));
    c.output().unwrap()
}

/// The sweep's JSON report, checked against schema/sweep.schema.json.
fn report(out: &Output) -> Value {
    let r = json(out);
    schema::sweep(&r);
    r
}

/// Every step the JSON lists is a results file in runs/, and nothing else
/// is; `pelt report` reads them.
fn steps_are_saved(dir: &Path, r: &Value) {
    let steps = r["steps"].as_array().unwrap();
    let mut files: Vec<String> = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| format!("runs/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    files.sort();
    let mut listed: Vec<String> = steps
        .iter()
        .map(|s| s["file"].as_str().unwrap().to_string())
        .collect();
    listed.sort();
    assert_eq!(files, listed);
    let out = pelt()
        .arg("report")
        .arg(dir.join(&listed[0]))
        .args(["--format", "json"])
        .output()
        .unwrap();
    ok(&out);
    for name in ["report.txt", "report.md", "report.json", "report.html"] {
        assert!(dir.join(name).is_file(), "{name}");
    }
}

/// The built-in server spending 1 ms of CPU per request on one thread
/// holds at most 1,000 req/s: the sweep finds that within 10 %, each step
/// judged on its own, and saves every step it took.

#[test]
fn finds_the_capacity_of_a_cpu_bound_server() {
    let _one = exclusive();
    let (_server, url) = serve_ahead_on("1");
    let dir = tempfile::tempdir().unwrap();
    let out = sweep(
        dir.path(),
        &[
            &format!("{url}?work=1ms"),
            "--slo",
            "p99 < 50ms, failed < 0.1%",
            "--start-rate",
            "200",
            "-d",
            "1500ms",
            "--warmup",
            "500ms",
            "--confirm",
            "3s",
        ],
    );
    let r = report(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(r["outcome"], "found", "{stderr}");
    let capacity = f(&r["capacity"]);
    assert!(
        (900.0..=1100.0).contains(&capacity),
        "capacity {capacity}: {stderr}"
    );
    // The bracket is within the tolerance, and its top failed for a reason.
    let (pass, fail) = (f(&r["last_pass"]), f(&r["first_fail"]));
    assert!(
        pass < fail && (fail - pass) / pass <= 0.05 + 1e-9,
        "{pass} {fail}"
    );
    assert!(!r["first_fail_reasons"].as_array().unwrap().is_empty());
    // Started low, doubled, and confirmed the answer with a longer run.
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(f(&steps[0]["offered"]), 200.0);
    assert_eq!(f(&steps[1]["offered"]), 400.0);
    let last = steps.last().unwrap();
    assert!(last["confirm"].as_bool().unwrap() && last["passed"].as_bool().unwrap());
    assert!(f(&last["duration_s"]) > 2.9);
    steps_are_saved(dir.path(), &r);
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(
        page.contains("<svg") && page.contains("knee"),
        "chart with its knee"
    );
}

/// nginx's limit_req at 2,000 req/s (a burst of 20 for the jitter of
/// evenly spaced requests): beyond it nginx answers 503, and the sweep's
/// `failed < 0.1%` finds the limit within 10 %.
#[test]
fn finds_nginx_limit_req() {
    let _one = exclusive();
    let nginx = Nginx::start_http(
        "    limit_req_zone $server_name zone=sweep:1m rate=2000r/s;",
        // Not `return`: it answers in the rewrite phase, before limit_req
        // runs. The file comes from nginx's default root, PREFIX/html.
        "        location = /limited {\n            limit_req zone=sweep burst=20 nodelay;\n            limit_req_status 503;\n            rewrite ^ /index.html break;\n        }",
    );
    put_ahead(nginx.pid());
    let dir = tempfile::tempdir().unwrap();
    let out = sweep(
        dir.path(),
        &[
            &nginx.url("/limited"),
            "--slo",
            "p99 < 50ms, failed < 0.1%",
            "--start-rate",
            "250",
            "-d",
            "1500ms",
            "--warmup",
            "500ms",
            "--confirm",
            "3s",
        ],
    );
    let r = report(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let capacity = f(&r["capacity"]);
    assert!(
        (1800.0..=2200.0).contains(&capacity),
        "capacity {capacity}: {stderr}"
    );
    // Steps above the limit failed on the failed share (503s), not on the client.
    let failed_on_errors = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| !s["passed"].as_bool().unwrap())
        .all(|s| {
            s["failures"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["kind"] == "slo" && f["term"] == "failed < 0.1%")
        });
    assert!(failed_on_errors, "{stderr}");
    steps_are_saved(dir.path(), &r);
}

/// pelt on a CPU it shares with a busy loop, against a server it cannot
/// saturate: the sweep stops with "the client, not the server" and gives
/// no capacity, rather than report its own ceiling as the server's.
#[test]
fn a_starved_client_is_named_not_measured() {
    let _one = exclusive();
    let (_server, url) = serve_on("1");
    let _busy = busy_on("0");
    let dir = tempfile::tempdir().unwrap();
    // At pelt's own priority: the busy loop must be able to starve it.
    let out = sweep_by(
        pelt_on("0"),
        dir.path(),
        &[
            &url,
            "--slo",
            "p99 < 100ms",
            "--start-rate",
            "4000",
            "--max-rate",
            "1000000",
            "-d",
            "2s",
            "--warmup",
            "500ms",
        ],
    );
    let r = report(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(r["outcome"], "client", "{stderr}");
    assert!(r["capacity"].is_null());
    assert!(stderr.contains("the client, not the server"), "{stderr}");
    let last = r["steps"].as_array().unwrap().last().unwrap().clone();
    assert!(
        last["failures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "client" || f["kind"] == "send_lag"),
        "{last}"
    );
}

/// `-c 1..8` sweeps closed-loop concurrency: a server that serializes every
/// request (1 ms of CPU on one thread) gives no more throughput past one
/// connection, so the sweep stops when throughput stops growing and names
/// the level where it did.
#[test]
fn closed_loop_levels_find_where_throughput_stops_growing() {
    let _one = exclusive();
    let (_server, url) = serve_ahead_on("1");
    let dir = tempfile::tempdir().unwrap();
    let out = sweep(
        dir.path(),
        &[
            &format!("{url}?work=1ms"),
            "-c",
            "1..64",
            "-d",
            "1500ms",
            "--warmup",
            "500ms",
        ],
    );
    let r = report(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(r["mode"], "connections");
    assert_eq!(r["outcome"], "levels");
    let steps = r["steps"].as_array().unwrap();
    // Stopped at the plateau, long before 64.
    assert!(
        (3..=5).contains(&steps.len()),
        "{} steps: {stderr}",
        steps.len()
    );
    let best = f(&r["capacity"]);
    assert!((850.0..=1050.0).contains(&best), "best {best}");
    let knee = &steps[r["knee"].as_u64().unwrap() as usize];
    assert!(f(&knee["connections"]) <= 2.0, "{knee}");
    steps_are_saved(dir.path(), &r);
}

/// Bad input exits 2 with one line naming what is wrong, before any load.
#[test]
fn bad_input_is_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (vec!["--slo", "p99 < 50ms, errors < 5"], "'errors < 5'"),
        (vec!["--slo", "p99 <"], "'p99 <'"),
        (vec!["--rate", "100"], "--rate"),
        (vec!["-c", "8..2"], "8..2"),
        (vec!["--tolerance", "5"], "--tolerance"),
        (vec!["--assert", "p99 < 1s"], "--slo"),
        // Issue 22 §4: flags a sweep would ignore are refused, not
        // accepted and forgotten.
        (vec!["--baseline", "last:0"], "--baseline"),
        (vec!["--buckets", "0,1ms"], "takes no --buckets"),
        (vec!["--strict"], "takes no --strict"),
        (vec!["--shard", "0/2"], "--shard"),
    ] {
        let out = pelt()
            .arg("sweep")
            .arg("http://127.0.0.1:1/")
            .args(&args)
            .arg("-o")
            .arg(dir.path().join("x"))
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let err = bad_input(&out, &format!("{args:?}"));
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert!(
        !dir.path().join("x").exists(),
        "nothing created for bad input"
    );
}

/// Issue 22 §4: the default --max-rate stays within what a shared CI
/// runner's client can send (100,000 saturated one).
#[test]
fn the_default_max_rate_is_modest_and_said() {
    let out = pelt().args(["sweep", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("[default: 10000]"), "{help}");
}

/// Ctrl-C during a step stops the sweep: the report of the steps so far
/// (the interrupted one included, and saved) and exit 130.
#[test]
fn ctrl_c_reports_the_steps_so_far() {
    let _one = exclusive();
    // Ahead of other work: a first step failed by a starved client would
    // end the sweep before the second one this test interrupts.
    let (_server, url) = serve_ahead_on("1");
    let dir = tempfile::tempdir().unwrap();
    let mut child = Killed(
        pelt_ahead_on("0")
            .args([
                "sweep", &url, "-d", "3s", "--warmup", "200ms", "--format", "json", "-o",
            ])
            .arg(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Interrupt once the second step has started.
    let mut stderr = BufReader::new(child.0.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "ended early: {seen}"
        );
        seen.push_str(&line);
        if line.contains("step 2:") {
            break;
        }
    }
    signal(&child.0, "INT");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut child.0.stdout.take().unwrap(), &mut out).unwrap();
    let status = child.0.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{seen}{rest}");
    let r: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(r["outcome"], "interrupted");
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{seen}{rest}");
    assert!(steps[0]["passed"].as_bool().unwrap());
    assert!(steps[1]["failures"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["kind"] == "interrupted"));
    // The first step held: its rate is the bracket's low end; the one cut
    // short is no failure.
    assert_eq!(f(&r["last_pass"]), 100.0);
    assert!(r["first_fail"].is_null());
    steps_are_saved(dir.path(), &r);
}

/// An experiment whose load is a sweep: each variant's capacity in each
/// block, compared paired by block. A handler costing 2 ms holds half
/// what one costing 1 ms does: the report says so, with the verdict.
#[test]
fn an_experiment_compares_capacities() {
    let _one = exclusive();
    let (_server, url) = serve_ahead_on("1");
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"name = "handler cost"
blocks = 6
[load]
sweep = "p99 < 50ms, failed < 0.1%"
duration = "500ms"
warmup = "100ms"
args = ["--start-rate", "300", "--tolerance", "30%", "--confirm", "500ms"]
[[variant]]
name = "1ms"
url = "{url}?work=1ms"
[[variant]]
name = "2ms"
url = "{url}?work=2ms"
"#
        ),
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    // 300 req/s is ~60 % of the slow variant's capacity: a start at 80 %
    // (400) failed its first step on a momentary stall once in CI, and
    // that block had no capacity to compare.
    let dry = pelt()
        .args(["experiment", plan.to_str().unwrap(), "--dry-run"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&dry.stdout).contains("12 sweeps"));
    let out = assert_cmd::Command::from_std(pelt_ahead_on("0"))
        .args(["experiment", plan.to_str().unwrap(), "-o"])
        .arg(&out_dir)
        .timeout(std::time::Duration::from_secs(400))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("report.json")).unwrap()).unwrap();
    let caps = r["capacities"].as_array().unwrap();
    let median = |v: &Value| {
        let mut c: Vec<f64> = v.as_array().unwrap().iter().map(f).collect();
        assert_eq!(c.len(), 6, "a capacity in every block: {v}");
        c.sort_by(f64::total_cmp);
        c[3]
    };
    let (fast, slow) = (median(&caps[0]), median(&caps[1]));
    // Coarse sweeps (a 30 % bracket) keep the test short.
    assert!((700.0..=1100.0).contains(&fast), "{fast}: {stdout}");
    assert!((350.0..=550.0).contains(&slow), "{slow}: {stdout}");
    let comparison = &r["comparisons"][0]["rows"][0]["comparison"];
    assert_eq!(comparison["verdict"]["kind"], "regression", "{stdout}");
    // Half the capacity, read through 30 % brackets.
    assert!(f(&comparison["estimate"]) < -0.25, "{comparison}");
    assert!(stdout.contains("2ms vs 1ms"), "{stdout}");
    // Every sweep kept its steps.
    assert_eq!(out_dir.join("sweeps").read_dir().unwrap().count(), 12);
}

/// A target that fails the SLO at the lowest rate says so in one line and
/// exits 1, with the failing step reported.
#[test]
fn failing_at_the_lowest_rate_is_one_line() {
    let _one = exclusive();
    let (_server, url) = serve_on("1");
    let dir = tempfile::tempdir().unwrap();
    let out = sweep(
        dir.path(),
        &[
            &format!("{url}?status=503"),
            "--slo",
            "failed < 1%",
            "-d",
            "1s",
            "--warmup",
            "0s",
        ],
    );
    let r = report(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(r["outcome"], "fails_at_start");
    assert_eq!(r["steps"].as_array().unwrap().len(), 1);
    let line: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("fails under 'failed < 1%' at the lowest 100 req/s"))
        .collect();
    assert_eq!(line.len(), 1, "{stderr}");
    assert!(
        line[0].contains("failed < 1%") && line[0].contains("100.000%"),
        "{stderr}"
    );
}

/// Issue 22 §4: a sweep is remembered. Its steps go into the history as
/// kind `step` (tagged with the sweep and their number), the sweep as kind
/// `sweep` with its capacity and the user's --tag and --label; `history
/// trend --metric capacity` follows it, and neither is a run's baseline.
#[test]
fn a_sweep_is_recorded_with_its_capacity_and_steps() {
    let _one = exclusive();
    let server = pelt_testkit::pelt::server(None);
    let url = format!("http://{}/", server.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("h.db");
    let folder = dir.path().join("sweep");
    let hpelt = || {
        let mut c = pelt();
        c.env("PELT_DATA_DIR", dir.path())
            .env("PELT_HISTORY", &history)
            .env_remove("PELT_NO_HISTORY")
            .timeout(std::time::Duration::from_secs(120));
        c
    };
    let out = hpelt()
        .args(["sweep", &url, "--start-rate", "50", "--max-rate", "100"])
        .args(["-d", "1s", "--warmup", "200ms", "--confirm", "1s"])
        // What is tested is the history: a busy machine's late sends must
        // not fail these slow steps.
        .args(["--max-send-lag", "900ms"])
        .args([
            "--tag", "env=ci", "--label", "nightly", "--format", "json", "-o",
        ])
        .arg(&folder)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let r: Value = json(&out);
    assert_eq!(r["outcome"], "at_max_rate", "{err}");
    let steps = r["steps"].as_array().unwrap().len();
    // 50 and 100 req/s for a second each reached the server.
    assert!(server.requests() >= 150, "{}", server.requests());

    let out = hpelt()
        .args(["history", "--format", "json"])
        .output()
        .unwrap();
    let rows: Value = json(&out);
    let rows = rows.as_array().unwrap();
    let of = |kind: &str| -> Vec<&Value> { rows.iter().filter(|r| r["kind"] == kind).collect() };
    assert_eq!(of("step").len(), steps, "{rows:?}");
    for s in of("step") {
        let tags = s["tags"].to_string();
        assert!(
            tags.contains("\"step\"") && tags.contains("sweep"),
            "{tags}"
        );
    }
    let sweeps = of("sweep");
    assert_eq!(sweeps.len(), 1, "{rows:?}");
    let tags = sweeps[0]["tags"].to_string();
    assert!(tags.contains("env") && tags.contains("ci"), "{tags}");
    assert_eq!(sweeps[0]["label"], "nightly");
    assert_eq!(rows.len(), steps + 1, "nothing else: {rows:?}");

    // The trend of capacity: the sweep's 100 req/s.
    let out = hpelt()
        .args([
            "history", "trend", "--metric", "capacity", "--format", "json",
        ])
        .output()
        .unwrap();
    let t: Value = json(&out);
    let runs = t["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{t}");
    assert_eq!(runs[0]["value"], 100.0, "{t}");
    // `history show` gives the sweep's own report.
    let id = sweeps[0]["id"].to_string();
    let out = hpelt().args(["history", "show", &id]).output().unwrap();
    let shown: Value = json(&out);
    assert_eq!(shown["capacity"], r["capacity"], "{shown}");
    // Neither steps nor sweeps are a run's baseline.
    let step_file = folder.join(r["steps"][0]["file"].as_str().unwrap());
    let out = hpelt()
        .args(["compare", "--baseline", "last:5"])
        .arg(&step_file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no recorded run matches"));

    // --baseline and --fail-on judge capacity. 40 recorded sweeps that
    // held 1,000 req/s (copies of this one's row) make a baseline against
    // which one new sweep can get a verdict (Mann-Whitney, 1 against 39+).
    {
        use pelt_store::Backend;
        let mut db = pelt_store::sqlite::Sqlite::open(&history).unwrap();
        let cols =
            "recorded_ms, started_ms, kind, label, url, method, targets, mode, connections, \
            offered_rate, duration_s, requests, sent, successes, failed, failed_share, rate, \
            throughput, p50_ns, p90_ns, p99_ns, p999_ns, max_ns, client_busy, capacity, complete, \
            interrupted, pelt_version, config_json, env_json, report_json, results_path";
        let copy = cols
            .replace("capacity", "1000.0")
            .replace("label", "'fast'");
        for _ in 0..40 {
            db.execute(
                &format!("INSERT INTO pelt_runs ({cols}) SELECT {copy} FROM pelt_runs WHERE kind = 'sweep' AND capacity = 100.0"),
                &[],
            )
            .unwrap();
        }
    }
    let again = |baseline: &str| {
        hpelt()
            .args(["sweep", &url, "--start-rate", "50", "--max-rate", "100"])
            .args(["-d", "1s", "--warmup", "200ms", "--format", "json"])
            .args(["--max-send-lag", "900ms"])
            .args(["--baseline", baseline, "--fail-on", "regression", "-o"])
            .arg(dir.path().join(baseline.replace(':', "-")))
            .output()
            .unwrap()
    };
    // 100 req/s against 1,000: a regression, exit 1, the table on stderr.
    let out = again("label:fast");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("capacity") && err.contains("REGRESSION"),
        "{err}"
    );
    assert!(err.contains("A = 40 run(s)"), "{err}");
    // Against its own kind (100 req/s): no regression, exit 0.
    let out = again("tag:env=ci");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("baseline tag:env=ci"), "{err}");
    // Only sweeps are a sweep's baseline.
    let out = again("label:none-such");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no recorded sweep"));
}
