//! Every ending is reported: a run stopped by SIGTERM or SIGHUP ends as
//! one stopped by Ctrl-C does (report, results file, history row, asserts,
//! an exit code of 128 + the signal), and so do sweeps and experiments;
//! a `--tui` run whose terminal goes away ends as on SIGHUP;
//! `--abort-on` stops a run against a broken service early, with its
//! report; nothing listening is not called a slow client. The built-in
//! server's request count is the witness.

use pelt_testkit::pelt::{
    bad_input, command, count as u, exclusive, json, number as f, pelt, server, warning_kinds,
};
use pelt_testkit::process::{signal, wait_until, Killed};
use pelt_testkit::schema;
use pelt_testkit::tmux::Tmux;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// `pelt ARGS` with runs saved under `data`, its history in `data` too,
/// stdout and stderr piped.
fn spawn(data: &Path, args: &[&str]) -> Child {
    command()
        .env("PELT_DATA_DIR", data)
        .env("PELT_HISTORY", data.join("history.db"))
        .env_remove("PELT_NO_HISTORY")
        .current_dir(data)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (up to 20 s) until `ready`, then sends `child` the signal.
fn signal_when(child: &Child, sig: &str, ready: impl Fn() -> bool) -> Instant {
    wait_until(Duration::from_secs(20), "never ready", ready);
    signal(child, sig);
    Instant::now()
}

/// A run report, checked against schema/run.schema.json.
fn checked(out: &Output) -> Value {
    let r = json(out);
    schema::run(&r);
    r
}

/// The CI job cancelled, the pod stopped, the Slurm time limit: SIGTERM
/// used to kill pelt (exit 143) with no report, no assert, no history row.
#[test]
fn sigterm_ends_a_run_as_ctrl_c_does() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let child = spawn(
        dir.path(),
        &[
            "run",
            &url,
            "--rate",
            "300",
            "-d",
            "60s",
            "-o",
            "run.pelt",
            "--assert",
            "p99 < 10s",
            "--format",
            "json",
        ],
    );
    let sent = signal_when(&child, "TERM", || s.requests() >= 300);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "128 + SIGTERM: {err}");
    assert!(sent.elapsed() < Duration::from_secs(10), "stopped promptly");
    // The report.
    let r = checked(&out);
    assert_eq!(r["interrupted"], true);
    assert_eq!(r["stopped_by"]["by"], "signal");
    assert_eq!(r["stopped_by"]["signal"], "SIGTERM");
    assert!(
        warning_kinds(&r).contains(&"terminated".to_string()),
        "{r:#}"
    );
    let total = u(&r["requests"]["total"]);
    let unfinished = u(&r["transport_errors"]["unfinished"]);
    // The server's count: all it answered was recorded; beyond that only
    // requests cut off by the stop.
    assert!(total >= s.requests() && total - unfinished <= s.requests());
    assert!(f(&r["duration_s"]) < 30.0);
    // The asserts, judged on what was measured.
    assert!(err.contains("pelt: assert ok: p99 < 10s"), "{err}");
    assert!(err.contains("stopping on SIGTERM"), "{err}");
    // The results file was finished: it re-reports the same run.
    let again = pelt()
        .current_dir(dir.path())
        .args(["report", "run.pelt", "--format", "json"])
        .output()
        .unwrap();
    assert!(again.status.success());
    let again = checked(&again);
    assert_eq!(again["complete"], true, "the footer was written");
    assert_eq!(again["stopped_by"], r["stopped_by"]);
    assert_eq!(again["requests"], r["requests"]);
    // The history row, marked interrupted.
    let listed = pelt()
        .env("PELT_HISTORY", dir.path().join("history.db"))
        .env_remove("PELT_NO_HISTORY")
        .args(["history", "list", "--format", "json"])
        .output()
        .unwrap();
    assert!(listed.status.success());
    let rows: Value = json(&listed);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["interrupted"], true);
    assert_eq!(u(&rows[0]["requests"]), total);
}

/// A closed terminal or session: SIGHUP, 129, with its report, its
/// results file finished and its history row.
#[test]
fn sighup_ends_a_run_with_its_report() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let child = spawn(
        dir.path(),
        &[
            "run", &url, "-c", "2", "-d", "60s", "-o", "run.pelt", "--format", "json",
        ],
    );
    let sent = signal_when(&child, "HUP", || s.requests() >= 100);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(129), "{err}");
    assert!(sent.elapsed() < Duration::from_secs(10), "stopped promptly");
    assert!(err.contains("stopping on SIGHUP"), "{err}");
    let r = checked(&out);
    assert_eq!(r["stopped_by"]["signal"], "SIGHUP");
    assert!(u(&r["requests"]["total"]) >= 100);
    let warned = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "terminated")
        .map(|w| w["message"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default();
    assert!(warned.contains("terminal or session closed"), "{r:#}");
    ended_on_record(dir.path(), &r);
}

/// What every ending leaves: the results file finished, re-reporting the
/// same run as `r` says, and one history row, marked interrupted.
fn ended_on_record(dir: &Path, r: &Value) {
    let again = pelt()
        .current_dir(dir)
        .args(["report", "run.pelt", "--format", "json"])
        .output()
        .unwrap();
    assert!(again.status.success(), "{again:?}");
    let again = checked(&again);
    assert_eq!(again["complete"], true, "the footer was written");
    assert_eq!(again["stopped_by"], r["stopped_by"]);
    assert_eq!(again["requests"], r["requests"]);
    let listed = pelt()
        .env("PELT_HISTORY", dir.join("history.db"))
        .env_remove("PELT_NO_HISTORY")
        .args(["history", "list", "--format", "json"])
        .output()
        .unwrap();
    assert!(listed.status.success(), "{listed:?}");
    let rows: Value = json(&listed);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["interrupted"], true);
    assert_eq!(rows[0]["requests"], r["requests"]["total"]);
}

/// A tmux session with one pane running `command`.
fn tmux_session(name: &str, command: &str) -> Tmux {
    let tmux = Tmux::new(name);
    tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "t",
        "-x",
        "110",
        "-y",
        "36",
        "sh",
        "-c",
        command,
    ]);
    tmux
}

/// Issue 35: a `--tui` run whose terminal went away (its tmux session
/// killed) spun on `read(0) = 0` for ever, its main thread waiting to
/// join the dashboard's: never reported, never recorded. Here pelt is
/// outside the terminal's session (a child of the test on the pane's
/// terminal), so no SIGHUP comes: the end of the terminal's input is the
/// hang-up, and the run ends as on SIGHUP.
#[test]
fn a_tui_run_whose_terminal_goes_away_ends_as_on_sighup() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let tmux = tmux_session("gone", "exec sleep 600");
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(tmux.pane_tty())
        .unwrap();
    let child = command()
        .env("PELT_DATA_DIR", dir.path())
        .env("PELT_HISTORY", dir.path().join("history.db"))
        .env_remove("PELT_NO_HISTORY")
        .current_dir(dir.path())
        .args(["run", &url, "--tui", "--rate", "200", "-d", "60s"])
        .args(["-o", "run.pelt", "--format", "json"])
        .stdin(tty.try_clone().unwrap())
        .stdout(std::fs::File::create(dir.path().join("out.json")).unwrap())
        .stderr(tty)
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    tmux.wait_for("the dashboard", |screen| screen.contains("pelt live"));
    wait_until(Duration::from_secs(20), "no load", || s.requests() >= 200);
    tmux.cmd(&["kill-session", "-t", "t"]);
    let closed = Instant::now();
    let mut status = None;
    wait_until(Duration::from_secs(20), "pelt did not end", || {
        status = child.0.try_wait().unwrap();
        status.is_some()
    });
    assert!(closed.elapsed() < Duration::from_secs(20));
    // 129, as SIGHUP: the report so far, written where stdout went.
    assert_eq!(status.unwrap().code(), Some(129));
    let out = std::fs::read(dir.path().join("out.json")).unwrap();
    let r: Value = serde_json::from_slice(&out).unwrap();
    schema::run(&r);
    assert_eq!(r["interrupted"], true);
    assert_eq!(r["stopped_by"]["signal"], "SIGHUP");
    let total = u(&r["requests"]["total"]);
    let unfinished = u(&r["transport_errors"]["unfinished"]);
    assert!(total >= s.requests() && total - unfinished <= s.requests());
    assert!(f(&r["duration_s"]) < 30.0);
    ended_on_record(dir.path(), &r);
}

/// The same with pelt as the terminal's own process (`exec pelt`): the
/// kernel's SIGHUP and the dashboard's end of input both come, and the run
/// ends once, as on SIGHUP, with its results file and history row.
#[test]
fn killing_the_tmux_session_of_a_tui_run_ends_it_on_record() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "cd {dir} && PELT_DATA_DIR={dir} PELT_HISTORY={dir}/history.db exec {pelt} run '{url}' \
         --tui --rate 200 -d 60s -o run.pelt --format json > out.json",
        dir = dir.path().display(),
        pelt = pelt_testkit::pelt::bin().display(),
    );
    let tmux = tmux_session("hup", &script);
    let pid = tmux.pane_pid();
    tmux.wait_for("the dashboard", |screen| screen.contains("pelt live"));
    wait_until(Duration::from_secs(20), "no load", || s.requests() >= 200);
    tmux.cmd(&["kill-session", "-t", "t"]);
    // Not our child: ended once its process is gone or a zombie.
    let ended = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
            stat.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    wait_until(Duration::from_secs(20), "pelt did not end", ended);
    let out = std::fs::read(dir.path().join("out.json")).unwrap();
    let r: Value = serde_json::from_slice(&out).unwrap();
    schema::run(&r);
    assert_eq!(r["stopped_by"]["signal"], "SIGHUP");
    assert!(u(&r["requests"]["total"]) >= 200);
    ended_on_record(dir.path(), &r);
}

/// `pelt sweep` on SIGTERM: the steps so far, reported and saved, as on
/// Ctrl-C.
#[test]
fn sigterm_stops_a_sweep_with_its_report() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn(
        dir.path(),
        &[
            "sweep",
            &url,
            "-d",
            "30s",
            "--warmup",
            "200ms",
            "--start-rate",
            "100",
            "--format",
            "json",
            "-o",
            "sweep",
        ],
    );
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("step 1:") {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "ended early: {seen}"
        );
        seen.push_str(&line);
    }
    let before = s.requests();
    signal_when(&child, "TERM", || s.requests() >= before + 200);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{seen}{rest}");
    let r: Value = json(&out);
    assert_eq!(r["outcome"], "interrupted");
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{seen}{rest}");
    assert!(dir.path().join("sweep/report.json").is_file());
    assert!(dir
        .path()
        .join("sweep")
        .join(steps[0]["file"].as_str().unwrap())
        .is_file());
}

/// `pelt experiment` on SIGTERM: the variant torn down, the runs so far
/// reported, as on Ctrl-C.
#[test]
fn sigterm_tears_down_an_experiment_and_reports() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let plan = format!(
        r#"
name = "ab"
blocks = 6
[load]
rate = 300
connections = 10
duration = "30s"
warmup = "200ms"
threads = 1
[[variant]]
name = "A"
url = "{url}"
teardown = "touch a-down"
[[variant]]
name = "B"
url = "{url}"
"#
    );
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    let child = spawn(dir.path(), &["experiment", "plan.toml", "-o", "out"]);
    let sent = signal_when(&child, "TERM", || s.requests() >= 200);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(sent.elapsed() < Duration::from_secs(15), "stopped promptly");
    assert!(dir.path().join("a-down").exists(), "torn down");
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    assert_eq!(report["interrupted"], true);
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["interrupted"], true);
}

/// `pelt run URL ARGS --format json` to its end; returns the exit code,
/// the report, stderr and how long it took.
fn run_to_end(args: &[&str]) -> (Option<i32>, Value, String, Duration) {
    let started = Instant::now();
    let out = pelt()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let took = started.elapsed();
    let r = checked(&out);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), r, err, took)
}

/// k6's abortOnFail: a 60 s run against an all-503 service stops once
/// the rule has held for 2 s of the run, with its report, exit 4.
#[test]
fn abort_on_stops_a_run_against_an_all_503_service() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/?status=503", s.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("aborted.pelt");
    let (code, r, err, took) = run_to_end(&[
        &url,
        "--rate",
        "200",
        "-d",
        "60s",
        "--abort-on",
        "failed > 50% for 2s",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(4), "{err}");
    assert!(took < Duration::from_secs(15), "took {took:?}");
    let duration = f(&r["duration_s"]);
    assert!((1.9..=4.0).contains(&duration), "stopped at {duration}s");
    assert_eq!(r["interrupted"], true);
    assert_eq!(r["stopped_by"]["by"], "abort");
    assert_eq!(r["stopped_by"]["rule"], "failed > 50% for 2s");
    let at = f(&r["stopped_by"]["at_s"]);
    assert!((2.0..=3.1).contains(&at), "fired at {at}s");
    assert!(warning_kinds(&r).contains(&"aborted".to_string()));
    assert!(
        err.contains("pelt: aborted after") && err.contains("'failed > 50% for 2s'"),
        "{err}"
    );
    // Every request failed, by the server's own count.
    let total = u(&r["requests"]["total"]);
    assert_eq!(u(&r["requests"]["successes"]), 0);
    assert_eq!(u(&r["status_codes"]["503"]), s.requests());
    assert!(total >= s.requests() && s.requests() >= 300, "{total}");
    // The results file says so too.
    let text = pelt().arg("report").arg(&file).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("aborted after") && text.contains("--abort-on 'failed > 50% for 2s'"),
        "{text}"
    );
}

/// The same rule on a healthy service changes nothing: the run lasts its
/// duration and exits 0.
#[test]
fn abort_on_lets_a_healthy_run_finish() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let (code, r, err, _) = run_to_end(&[
        &url,
        "--rate",
        "200",
        "-d",
        "3s",
        "--abort-on",
        "failed > 50% for 2s",
        "--abort-on",
        "p99 > 1s for 2s",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(r["interrupted"], false);
    assert!(r["stopped_by"].is_null());
    assert!((f(&r["duration_s"]) - 3.0).abs() < 0.01);
    assert_eq!(u(&r["requests"]["successes"]), s.requests());
    assert_eq!(
        r["config"]["abort_on"],
        serde_json::json!(["failed > 50% for 2s", "p99 > 1s for 2s"])
    );
}

/// A latency rule: every response 50 ms late, `p99 > 20ms for 2s`.
#[test]
fn abort_on_a_latency_rule() {
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/?delay=50ms", s.local_addr());
    let (code, r, err, took) = run_to_end(&[
        &url,
        "--rate",
        "50",
        "-d",
        "60s",
        "--abort-on",
        "p99 > 20ms for 2s",
    ]);
    assert_eq!(code, Some(4), "{err}");
    assert!(took < Duration::from_secs(15), "took {took:?}");
    assert_eq!(r["stopped_by"]["rule"], "p99 > 20ms for 2s");
    assert!(s.requests() >= 90, "{}", s.requests());
}

/// Nothing listening: every request refused a connection. The rule stops
/// the run (the report and the no-response line still say why), and the
/// report does not advise raising -c: the client did not fall behind,
/// there was nothing to send to. Before, it warned "sent 0.0 req/s of the
/// 1000.0 req/s asked for: the client could not keep up ... raise -c".
#[test]
fn nothing_listening_is_not_called_a_slow_client() {
    let _machine = exclusive();
    let (code, r, err, _) = run_to_end(&["http://127.0.0.1:1/", "--rate", "1000", "-d", "2s"]);
    assert_eq!(code, Some(3), "{err}");
    let kinds = warning_kinds(&r);
    assert!(!kinds.contains(&"rate_shortfall".to_string()), "{kinds:?}");
    assert!(!kinds.contains(&"client_busy".to_string()), "{kinds:?}");
    let text = pelt()
        .args(["http://127.0.0.1:1/", "--rate", "1000", "-d", "1s"])
        .output()
        .unwrap();
    let all = String::from_utf8_lossy(&text.stdout) + String::from_utf8_lossy(&text.stderr);
    assert!(!all.contains("raise -c"), "{all}");
    assert!(all.contains("nothing listens on 127.0.0.1:1"), "{all}");

    let (code, r, err, took) = run_to_end(&[
        "http://127.0.0.1:1/",
        "--rate",
        "500",
        "-d",
        "60s",
        "--abort-on",
        "errors > 50% for 2s",
    ]);
    assert_eq!(code, Some(4), "aborted, not merely no response: {err}");
    assert!(took < Duration::from_secs(15), "took {took:?}");
    assert!(err.contains("pelt: no request got a response"), "{err}");
    assert_eq!(r["stopped_by"]["by"], "abort");
    assert!(!warning_kinds(&r).contains(&"rate_shortfall".to_string()));
}

#[test]
fn bad_abort_rules_are_refused_before_any_load() {
    for (args, hint) in [
        (
            &["run", "http://127.0.0.1:1/", "--abort-on", "failed > 50%"][..],
            "for DURATION",
        ),
        (
            &[
                "run",
                "http://127.0.0.1:1/",
                "--abort-on",
                "failed > 50 for 5s",
            ],
            "percentage",
        ),
        (
            &[
                "run",
                "http://127.0.0.1:1/",
                "--abort-on",
                "rate < 5 for 5s",
            ],
            "not watched per second",
        ),
        (
            &[
                "sweep",
                "http://127.0.0.1:1/",
                "--abort-on",
                "failed > 50% for 5s",
            ],
            "pelt sweep takes no --abort-on",
        ),
    ] {
        let out = pelt().args(args).output().unwrap();
        let err = bad_input(&out, &format!("{args:?}"));
        assert!(err.contains(hint), "{args:?}: {err}");
    }
    // An experiment's run cut short would be left out of its verdicts.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("plan.toml"),
        r#"
name = "x"
[load]
url = "http://127.0.0.1:1/"
rate = 10
duration = "1s"
args = ["--abort-on", "failed > 50% for 2s"]
[[variant]]
name = "A"
[[variant]]
name = "B"
"#,
    )
    .unwrap();
    let out = pelt()
        .current_dir(dir.path())
        .args(["experiment", "plan.toml", "--dry-run"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--abort-on has no place"), "{err}");
}
