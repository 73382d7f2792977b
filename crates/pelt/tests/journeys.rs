//! Journeys, step 2 (issue 37): failures counted right in every view,
//! pauses and pacing, picking from a list, conditions and what a failed
//! step does next, and the mistakes refused at the start. Each test runs
//! a scenario against pelt-testkit's Flask app, whose log of every
//! request it answered (with its status) is the witness.

use pelt_testkit::flask::{Entry, FlaskApp};
use pelt_testkit::pelt::{count, pelt, run_json};
use std::path::PathBuf;

/// Writes `scenario` (with `{base}` replaced by the app's) into a temp
/// folder; returns the folder (kept alive by the caller) and the file.
fn scenario(app: &FlaskApp, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journey.toml");
    std::fs::write(&path, text.replace("{base}", &app.base())).unwrap();
    (dir, path)
}

/// The app's answers to `path`, by status.
fn answered(log: &[Entry], path: &str, status: u16) -> u64 {
    log.iter()
        .filter(|e| e.path == path && e.status == status)
        .count() as u64
}

/// The scenario section's step `name`.
fn step<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["scenario"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

/// Issue 37 §1: `check = { status = [200] }` on a URL answering 404
/// hid the status (no status code, `non_2xx_3xx` 0, every 404 a
/// transport error). The 404s are responses: they are in the status
/// codes and outside 2xx/3xx; the check is why each step failed, once.
/// And a failed extraction keeps its response's 200.
#[test]
fn a_failed_check_or_extraction_keeps_the_responses_status() {
    let app = FlaskApp::start();
    let (_dir, path) = scenario(
        &app,
        r#"
base = "{base}"
[[flow]]
name = "lost"
[[flow.step]]
name = "missing"
url = "/nowhere"
check = { status = [200] }
"#,
    );
    let p = path.to_str().unwrap();
    let r = pelt_testkit::pelt::run_json_nothing_succeeded(&[
        "run",
        "--scenario",
        p,
        "-c",
        "2",
        "-n",
        "10",
        "-t",
        "1",
    ]);
    let log = app.log();
    let not_found = answered(&log, "/nowhere", 404);
    assert_eq!(not_found, 10, "the app answered 10 × 404");
    assert_eq!(
        count(&r["status_codes"]["404"]),
        not_found,
        "{}",
        r["status_codes"]
    );
    assert_eq!(count(&r["requests"]["non_2xx_3xx"]), not_found);
    assert_eq!(count(&r["requests"]["transport_errors"]), 0);
    assert_eq!(count(&r["requests"]["judged_failed"]), 0);
    assert_eq!(count(&r["requests"]["failed"]), not_found);
    assert_eq!(r["failures"], serde_json::json!({ "check": not_found }));
    assert!(r["transport_errors"].get("check").is_none());
    let missing = step(&r, "missing");
    assert_eq!(
        missing["failures"],
        serde_json::json!({ "check": not_found })
    );
    assert_eq!(r["targets"][0]["status_classes"]["4xx"], not_found);

    // The login page is HTML: its JSON extraction fails on a 200.
    let app = FlaskApp::start();
    let (_dir, path) = scenario(
        &app,
        r#"
base = "{base}"
[[flow]]
name = "page"
[[flow.step]]
name = "form"
url = "/login"
extract = { id = { json = "/id" } }
"#,
    );
    let p = path.to_str().unwrap();
    let r = pelt_testkit::pelt::run_json_nothing_succeeded(&[
        "run",
        "--scenario",
        p,
        "-c",
        "2",
        "-n",
        "10",
        "-t",
        "1",
    ]);
    let ok = answered(&app.log(), "/login", 200);
    assert_eq!(ok, 10);
    assert_eq!(
        count(&r["status_codes"]["200"]),
        ok,
        "{}",
        r["status_codes"]
    );
    assert_eq!(count(&r["requests"]["judged_failed"]), ok);
    assert_eq!(count(&r["requests"]["transport_errors"]), 0);
    assert_eq!(count(&r["requests"]["failed"]), ok);
    assert_eq!(r["failures"], serde_json::json!({ "extract": ok }));

    // The text report says the same: a 200 line, no transport errors.
    let out = pelt()
        .args(["run", "--scenario", p, "-c", "1", "-n", "3", "-t", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Status codes 200: 3"), "{text}");
}

/// A slow second step, then a third: (`delay_ms` on the second).
fn three_steps(delay_ms: u32) -> String {
    format!(
        r#"
base = "{{base}}"
[[flow]]
name = "slow"
[[flow.step]]
name = "first"
url = "/login"
[[flow.step]]
name = "slow"
url = "/login?delay_ms={delay_ms}"
[[flow.step]]
name = "last"
url = "/login?last=1"
"#
    )
}

/// Issue 37 §1: "flows started" left out the flows the run's end cut off
/// (log: 2, report: 1). Every flow whose first step the app answered was
/// started; those cut off failed as unfinished, whether the end came
/// between two steps (the slow step ends in the wait for stragglers, and
/// the last is never sent) or during one (still in flight when that
/// wait ends).
#[test]
fn flows_cut_off_by_the_end_are_counted_as_started() {
    for (delay_ms, cut_in_flight) in [(1_300, false), (4_000, true)] {
        let app = FlaskApp::start();
        let (_dir, path) = scenario(&app, &three_steps(delay_ms));
        let p = path.to_str().unwrap();
        // Every flow is cut off: nothing succeeded, on purpose.
        let r = run_json(&[
            "run",
            "--scenario",
            p,
            "-c",
            "2",
            "-t",
            "1",
            "-d",
            "1s",
            "--assert",
            "failed <= 100%",
        ]);
        let log = app.log();
        let firsts = answered(&log, "/login", 200);
        assert_eq!(firsts, 2, "each user started one flow: {log:?}");
        let flow = &r["scenario"]["flows"][0];
        assert_eq!(count(&flow["started"]), firsts, "{flow}");
        assert_eq!(count(&flow["completed"]), 0, "{flow}");
        assert_eq!(
            flow["failures"],
            serde_json::json!({ "unfinished": firsts })
        );
        assert_eq!(answered(&log, "/login?last=1", 200), 0, "never sent");
        // In flight at the end: the slow step is unfinished too.
        let slow = &step(&r, "slow")["failures"];
        match cut_in_flight {
            true => assert_eq!(slow, &serde_json::json!({ "unfinished": 2 })),
            false => assert_eq!(slow, &serde_json::json!({})),
        }
    }
}

/// Issue 37 §1: a scenario's header said "2 targets" for one step, its
/// rate read "500 req/s of 100 req/s offered" for 100 flows/s, and the
/// markdown report listed the flow as one more (failed) `GET` row with
/// no Steps or Flows table. Each view says steps and flows now, with
/// the counts the app's log has.
#[test]
fn a_scenario_reports_steps_and_flows_and_its_rate_in_flows_per_second() {
    let app = FlaskApp::start();
    let (_dir, path) = scenario(
        &app,
        r#"
base = "{base}"
[[flow]]
name = "pages"
[[flow.step]]
name = "form"
url = "/login"
[[flow.step]]
name = "again"
url = "/login?again=1"
"#,
    );
    let p = path.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("run.pelt");
    let out = pelt()
        .args([
            "run",
            "--scenario",
            p,
            "--rate",
            "20",
            "-c",
            "4",
            "-t",
            "1",
            "-n",
            "20",
        ])
        .arg("-o")
        .arg(&saved)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let flows = answered(&app.log(), "/login", 200);
    assert_eq!(flows, 20);
    assert!(text.contains("journey.toml: 2 steps, 1 flow"), "{text}");
    assert!(!text.contains("targets"), "{text}");
    assert!(
        text.contains("20.00 flows/s, up to 4 virtual users"),
        "{text}"
    );
    assert!(text.contains("20 flows\n"), "-n counts flows: {text}");
    assert!(text.contains("Flows        20 started ("), "{text}");
    assert!(text.contains("flows/s of 20.00 flows/s offered)"), "{text}");
    assert!(!text.contains("req/s offered"), "{text}");

    // The saved run's markdown: the same steps and flows, no target rows.
    let md = pelt()
        .args(["report", "--format", "markdown"])
        .arg(&saved)
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.contains("journey.toml: 2 steps, 1 flow"), "{md}");
    assert!(md.contains("| flows | 20 started ("), "{md}");
    assert!(md.contains("| pages/form | 20 | 20 | 0 | 0 |"), "{md}");
    assert!(md.contains("| pages/again | 20 | 20 | 0 | 0 |"), "{md}");
    assert!(md.contains("| pages | 20 | 20 | 0 |"), "{md}");
    assert!(!md.contains("| `GET "), "no target rows: {md}");
    assert!(md.contains("Failed: none"), "{md}");
}

/// Issue 37 §1: a run in which every flow failed exited 0. One rule for
/// plain runs and scenarios: nothing succeeded (every request; in a
/// scenario, every flow) exits 3 with one line saying so, unless an
/// `--assert` on `failed` says what is acceptable.
#[test]
fn a_scenario_whose_every_flow_failed_exits_3_as_a_plain_run_does() {
    let app = FlaskApp::start();
    // The first step succeeds, the second always fails its check: no
    // request-level "nothing succeeded", but every flow failed.
    let (_dir, path) = scenario(
        &app,
        r#"
base = "{base}"
[[flow]]
name = "never"
[[flow.step]]
name = "form"
url = "/login"
[[flow.step]]
name = "lost"
url = "/nowhere"
check = { status = [200] }
"#,
    );
    let p = path.to_str().unwrap();
    let r = pelt_testkit::pelt::run_json_nothing_succeeded(&[
        "run",
        "--scenario",
        p,
        "-c",
        "1",
        "-n",
        "5",
        "-t",
        "1",
    ]);
    let log = app.log();
    assert_eq!(answered(&log, "/nowhere", 404), 5);
    assert_eq!(answered(&log, "/login", 200), 5);
    assert_eq!(
        r["scenario"]["flows"][0]["failures"],
        serde_json::json!({ "check": 5 })
    );
    let out = pelt()
        .args(["run", "--scenario", p, "-c", "1", "-n", "5", "-t", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pelt: nothing succeeded: all 5 flows failed (check 5)"),
        "{err}"
    );
    // Said to be acceptable: the asserts decide (here, met).
    let out = pelt()
        .args(["run", "--scenario", p, "-c", "1", "-n", "5", "-t", "1"])
        .args(["--assert", "failed <= 100%", "-q"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(answered(&app.log(), "/nowhere", 404), 15);
}

/// Runs `text` for 2 s with one closed-loop user; the app's log.
fn one_user_for_2s(text: &str, extra: &[&str]) -> (serde_json::Value, Vec<Entry>) {
    let app = FlaskApp::start();
    let (_dir, path) = scenario(&app, text);
    let p = path.to_str().unwrap();
    let mut args = vec!["run", "--scenario", p, "-c", "1", "-t", "1", "-d", "2s"];
    args.extend_from_slice(extra);
    let r = run_json(&args);
    (r, app.log())
}

/// Issue 37 §2: `think` on a flow's last step was ignored (one step with
/// `think = "500ms"`, `-c 1 -d 2s` sent ~30,000 requests, not ~4). It is
/// the pause after the step, the last one included; `pacing` starts a
/// user's flows every so often (Locust's `constant_pacing`); an
/// exponential or normal think time is drawn within its bounds. Each
/// bound below is a guarantee (pauses of at least so long in 2 s), not
/// a quiet machine's timing.
#[test]
fn the_last_steps_think_time_and_pacing_hold_the_next_flow() {
    let one_step = |extra: &str| {
        format!("base = \"{{base}}\"\n{extra}\n[[flow]]\nname = \"f\"\n[[flow.step]]\nname = \"page\"\nurl = \"/login\"\n")
    };
    // At least 500 ms after each of them: at most 4 start in 2 s.
    let (r, log) = one_user_for_2s(&format!("{}think = \"500ms\"\n", one_step("")), &[]);
    let sent = answered(&log, "/login", 200);
    assert!((1..=4).contains(&sent), "{sent} requests");
    assert_eq!(count(&step(&r, "page")["requests"]), sent);
    // A flow every 400 ms at most: 5 in 2 s (starts at 0, 0.4, ... 1.6).
    let (_, log) = one_user_for_2s(&one_step("pacing = \"400ms\""), &[]);
    let sent = answered(&log, "/login", 200);
    assert!((1..=5).contains(&sent), "{sent} requests");
    // Normal within 4 deviations: at least 260 ms each, so at most 8.
    let (_, log) = one_user_for_2s(
        &format!("{}think = \"normal(300ms, 10ms)\"\n", one_step("")),
        &[],
    );
    let sent = answered(&log, "/login", 200);
    assert!((1..=8).contains(&sent), "{sent} requests");

    // Pacing is the closed loop's: with --rate it is refused, by line.
    let app = FlaskApp::start();
    let (_dir, path) = scenario(&app, &one_step("pacing = \"1s\""));
    let out = pelt()
        .args([
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "--rate",
            "5",
            "-d",
            "1s",
        ])
        .output()
        .unwrap();
    let err = pelt_testkit::pelt::bad_input(&out, "pacing with --rate");
    assert!(err.contains("journey.toml:2: pacing sets when"), "{err}");
    assert!(app.log().is_empty(), "nothing sent");
}

/// Runs `text` (feeds beside it: `files`) and checks it is refused before
/// any load: exit 2, one line containing `says`; the app saw nothing.
fn refused_at_start(text: &str, files: &[(&str, &str)], says: &str) {
    let app = FlaskApp::start();
    let (dir, path) = scenario(&app, text);
    for (name, content) in files {
        std::fs::write(dir.path().join(name), content).unwrap();
    }
    let out = pelt()
        .args([
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "-n",
            "3",
            "-c",
            "1",
        ])
        .output()
        .unwrap();
    let err = pelt_testkit::pelt::bad_input(&out, says);
    assert!(err.contains(says), "{err}");
    assert!(app.log().is_empty(), "nothing sent: {:?}", app.log());
}

/// Issue 37 §3: mistakes that ran (and failed every request, or sent
/// 1,135 × 401) are refused at the start with their line: a template
/// inside an extraction path (taken literally), a CSV row short of a
/// column (the feed's file and line), a `[[once]]` step using a feed
/// read per iteration (said so, not "unknown variable"). A body without
/// a Content-Type is sent, with a warning first.
#[test]
fn mistakes_are_refused_at_the_start_and_a_body_without_a_type_is_warned_of() {
    refused_at_start(
        r#"base = "{base}"
[[flow]]
name = "f"
[[flow.step]]
url = "/login"
extract = { id = { json = "/items/{{n}}/id" } }
"#,
        &[],
        "journey.toml:6: extract 'id': a {{...}} in an extraction is not filled in",
    );
    refused_at_start(
        r#"base = "{base}"
[[feed]]
name = "users"
file = "users.csv"
[[flow]]
name = "f"
[[flow.step]]
url = "/login?u={{users.name}}"
"#,
        &[("users.csv", "name,password\nu0,pw0\nu1\nu2,pw2\n")],
        "users.csv:3 has 1 field where the header names 2 (name, password)",
    );
    refused_at_start(
        r#"base = "{base}"
[[feed]]
name = "users"
file = "users.csv"
[[once]]
name = "login"
url = "/login?u={{users.name}}"
[[flow]]
name = "f"
[[flow.step]]
url = "/login"
"#,
        &[("users.csv", "name\nu0\n")],
        "journey.toml:7: 'users.name' comes from a feed read per iteration, and a [[once]] step runs before any iteration; set per = \"user\"",
    );

    let app = FlaskApp::start();
    let (_dir, path) = scenario(
        &app,
        r#"base = "{base}"
[[flow]]
name = "f"
[[flow.step]]
name = "post"
method = "POST"
url = "/login"
body = "user=u0&password=pw-u0"
"#,
    );
    let out = pelt()
        .args([
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "-n",
            "2",
            "-c",
            "1",
            "-q",
        ])
        .args(["--assert", "failed <= 100%"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pelt: warning: ")
            && err.contains("journey.toml:8: step 'f/post' sends a body without a Content-Type"),
        "{err}"
    );
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        app.log().iter().filter(|e| e.method == "POST").count(),
        2,
        "sent"
    );
}

/// Issue 37 §3: `on_failure = "continue"` goes on after a failed step
/// (its flow still fails, by that step's kind; the later steps are not
/// counted skipped), `when`/`skip_if` send a step or not by a variable
/// (here the iteration), and `on_failure = "end_user"` stops the user.
/// The app's log is the witness of what was sent.
#[test]
fn on_failure_and_conditions_decide_what_is_sent() {
    let app = FlaskApp::start();
    let (_dir, path) = scenario(
        &app,
        r#"base = "{base}"
[[flow]]
name = "shop"
[[flow.step]]
name = "page"
url = "/login"
[[flow.step]]
name = "lost"
url = "/nowhere"
check = { status = [200] }
on_failure = "continue"
[[flow.step]]
name = "first time"
url = "/login?first=1"
when = "iteration == 1"
[[flow.step]]
name = "later"
url = "/login?later=1"
skip_if = "{{iteration}} == 1"
"#,
    );
    let p = path.to_str().unwrap();
    let r = run_json(&[
        "run",
        "--scenario",
        p,
        "-c",
        "1",
        "-t",
        "1",
        "-n",
        "3",
        "--assert",
        "failed <= 100%",
    ]);
    let log = app.log();
    assert_eq!(answered(&log, "/nowhere", 404), 3);
    assert_eq!(answered(&log, "/login?first=1", 200), 1);
    assert_eq!(answered(&log, "/login?later=1", 200), 2);
    assert_eq!(count(&step(&r, "lost")["failed"]), 3);
    assert_eq!(count(&step(&r, "first time")["requests"]), 1);
    assert_eq!(count(&step(&r, "later")["requests"]), 2);
    assert_eq!(
        count(&step(&r, "later")["skipped"]),
        0,
        "went on after the failure"
    );
    let flow = &r["scenario"]["flows"][0];
    assert_eq!(count(&flow["started"]), 3);
    assert_eq!(flow["failures"], serde_json::json!({ "check": 3 }));

    // end_user: each of 2 users fails once and stops; the run ends then.
    let app = FlaskApp::start();
    let (_dir, path) = scenario(
        &app,
        r#"base = "{base}"
[[flow]]
name = "once only"
[[flow.step]]
url = "/nowhere"
check = { status = [200] }
on_failure = "end_user"
"#,
    );
    let p = path.to_str().unwrap();
    let r = pelt_testkit::pelt::run_json_nothing_succeeded(&[
        "run",
        "--scenario",
        p,
        "-c",
        "2",
        "-t",
        "1",
        "-d",
        "30s",
    ]);
    assert_eq!(answered(&app.log(), "/nowhere", 404), 2);
    assert_eq!(count(&r["scenario"]["flows"][0]["started"]), 2);
    assert!(
        r["elapsed_s"].as_f64().unwrap() < 25.0,
        "ended when the users did"
    );
}

/// Issue 37 §3: "choose any product in stock" with no fixed index:
/// `json = "/items/*/id"` with `pick` ("first", "random", "all") and
/// `where`. The app's item ids for user u0 are 1, 2, 3; the log shows
/// which one each flow asked for.
#[test]
fn pick_takes_one_or_all_of_a_lists_matching_elements() {
    let app = FlaskApp::start();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journey.toml");
    let text = r#"base = "{base}"
[[once]]
name = "login page"
url = "/login"
extract = { csrf = { regex = 'name="csrf" value="([^"]+)"' } }
[[once]]
name = "login"
method = "POST"
url = "/login"
headers = { "Content-Type" = "application/x-www-form-urlencoded" }
body = "user=u0&password=pw-u0&csrf={{csrf|url}}"
check = { status = [302] }
[[flow]]
name = "shop"
[[flow.step]]
name = "list"
url = "/api/items"
extract = { any = { json = "/items/*/id", pick = "random" }, all = { json = "items[*].id", pick = "all" }, two = { json = "/items/*/id", where = { "/id" = 2 } } }
[[flow.step]]
name = "any"
url = "/item/{{any}}?all={{all}}&two={{two}}"
"#;
    std::fs::write(&path, text.replace("{base}", &app.base())).unwrap();
    let r = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "-c",
        "1",
        "-t",
        "1",
        "-n",
        "40",
    ]);
    let items: Vec<String> = app
        .log()
        .into_iter()
        .filter(|e| e.path.starts_with("/item/"))
        .map(|e| e.path)
        .collect();
    assert_eq!(items.len(), 40, "{items:?}");
    assert!(
        items.iter().all(|p| p.ends_with("?all=1,2,3&two=2")),
        "{items:?}"
    );
    let picked: std::collections::BTreeSet<&str> = items
        .iter()
        .map(|p| &p["/item/".len()..p.find('?').unwrap()])
        .collect();
    // Random among 3, 40 times: all three come up but with odds of
    // 3 · (2/3)^40 ≈ 2e-7 that one never does (seeded per user, too).
    assert_eq!(picked, ["1", "2", "3"].into(), "{items:?}");
    assert_eq!(count(&step(&r, "any")["successes"]), 40);
}

/// Issue 37 §4: `--dry-run` shows what the first users would send, one
/// iteration of each flow, feeds read and templates filled, secrets
/// redacted, a value a response would give as its `{{name}}`, and sends
/// nothing: the app's log stays empty.
#[test]
fn a_dry_run_shows_the_first_users_requests_and_sends_nothing() {
    let app = FlaskApp::start();
    let (dir, path) = scenario(
        &app,
        r#"base = "{base}"
[[feed]]
name = "users"
file = "users.csv"
per = "user"
[[once]]
name = "login"
method = "POST"
url = "/login"
headers = { "Content-Type" = "application/x-www-form-urlencoded", "Authorization" = "Bearer s3cr3t-t0ken" }
body = "user={{users.name}}&password={{users.password}}"
[[flow]]
name = "browse"
[[flow.step]]
name = "list"
url = "/api/items?api_key=k-12345&page={{iteration}}"
extract = { id = { json = "/items/*/id", pick = "random" } }
[[flow.step]]
name = "item"
url = "/item/{{id}}"
"#,
    );
    std::fs::write(
        dir.path().join("users.csv"),
        "name,password\nalice,pw-alice\nbob,pw-bob\n",
    )
    .unwrap();
    let out = pelt()
        .args(["run", "--scenario", path.to_str().unwrap(), "--dry-run"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("# user 0, iteration 0, step once/login"),
        "{text}"
    );
    assert!(
        text.contains("# user 1, iteration 1, step browse/item"),
        "{text}"
    );
    assert!(text.contains("user=alice&password=REDACTED"), "{text}");
    assert!(text.contains("user=bob&password=REDACTED"), "{text}");
    assert!(text.contains("Authorization: REDACTED"), "{text}");
    assert!(
        text.contains("GET /api/items?api_key=REDACTED&page=1 HTTP/1.1"),
        "{text}"
    );
    assert!(text.contains("GET /item/{{id}} HTTP/1.1"), "{text}");
    for secret in ["pw-alice", "pw-bob", "s3cr3t-t0ken", "k-12345"] {
        assert!(!text.contains(secret), "{secret}: {text}");
    }
    assert!(app.log().is_empty(), "nothing sent: {:?}", app.log());
}

/// One HAR entry: a GET of `url` answered 200 with an HTML page.
fn har_entry(t: &str, url: &str) -> String {
    format!(
        r#"{{"startedDateTime":"{t}","time":10,"request":{{"method":"GET","url":"{url}","headers":[]}},"response":{{"status":200,"content":{{"mimeType":"text/html","text":"<p>ok</p>"}}}}}}"#
    )
}

/// Issue 37 §5: an analytics beacon (another site's origin) was copied
/// into the scenario and loaded as if it were the site. It is left out,
/// named in the header comment, unless `--include-origin` keeps it; the
/// imported scenario then sends only the site's requests (the app's log).
#[test]
fn a_har_import_leaves_out_other_sites_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let har = dir.path().join("rec.har");
    let entries = [
        har_entry("2024-01-01T00:00:00.000Z", "http://www.shop.example/login"),
        har_entry(
            "2024-01-01T00:00:00.050Z",
            "https://www.google-analytics.com/collect?v=1",
        ),
        har_entry(
            "2024-01-01T00:00:00.100Z",
            "http://api.shop.example/login?again=1",
        ),
    ];
    std::fs::write(
        &har,
        format!(r#"{{"log":{{"entries":[{}]}}}}"#, entries.join(",")),
    )
    .unwrap();
    let import = |extra: &[&str]| {
        let out = pelt()
            .args(["import", "har"])
            .arg(&har)
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let text = import(&[]);
    assert!(
        !text.contains("url = \"https://www.google-analytics.com"),
        "{text}"
    );
    assert!(
        text.contains("# Left out, another site's (--include-origin ORIGIN keeps one): https://www.google-analytics.com."),
        "{text}"
    );
    assert!(
        text.contains("again=1"),
        "the site's other host is kept: {text}"
    );
    let kept = import(&["--include-origin", "https://www.google-analytics.com"]);
    assert!(kept.contains("google-analytics.com/collect"), "{kept}");

    // Run against the app: only the site's first host is rebased (the
    // second, api.shop.example, is left as recorded, so the scenario is
    // cut to its first step here).
    let app = FlaskApp::start();
    let only_site: String = text
        .split("[[flow.step]]")
        .take(2)
        .collect::<Vec<_>>()
        .join("[[flow.step]]");
    let path = dir.path().join("site.toml");
    std::fs::write(
        &path,
        only_site.replace("http://www.shop.example", &app.base()),
    )
    .unwrap();
    run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "-n",
        "3",
        "-c",
        "1",
    ]);
    let log = app.log();
    assert_eq!(log.len(), 3, "{log:?}");
    assert!(log.iter().all(|e| e.path == "/login"), "{log:?}");
}

/// The login every looping test starts with: user `u{{vu}}`.
const LOGIN: &str = r#"[[once]]
name = "login page"
url = "/login"
extract = { csrf = { regex = 'name="csrf" value="([^"]+)"' } }
[[once]]
name = "login"
method = "POST"
url = "/login"
headers = { "Content-Type" = "application/x-www-form-urlencoded" }
body = "user=u{{vu}}&password=pw-u{{vu}}&csrf={{csrf|url}}"
check = { status = [302] }
"#;

/// The app's answers to user `user` whose path starts with `prefix`.
fn answered_to(log: &[Entry], user: &str, prefix: &str) -> u64 {
    log.iter()
        .filter(|e| e.user.as_deref() == Some(user) && e.path.starts_with(prefix))
        .count() as u64
}

/// Issue 37 §3: loops with a data-dependent count. `for_each` over the
/// ids a list extracted (each user's own three), `repeat` as many times
/// as the response's count says, `repeat` from a feed column; a count
/// above the cap (1000) sends nothing and fails the flow as `extract`,
/// saying why; an empty list sends nothing and the flow goes on. The
/// app's log is the witness of every request.
#[test]
fn loops_send_a_step_as_often_as_the_users_data_says_and_no_more_than_the_cap() {
    let app = FlaskApp::start();
    let text = format!(
        r#"base = "{{base}}"
[[feed]]
name = "limits"
file = "limits.csv"
per = "user"
{LOGIN}
[[flow]]
name = "walk"
[[flow.step]]
name = "list"
url = "/api/items"
extract = {{ ids = {{ json = "/items/*/id", pick = "all" }}, n = {{ json = "/count" }}, none = {{ json = "/items/*/id", pick = "all", where = {{ "/id" = -1 }} }} }}
[[flow.step]]
name = "each"
url = "/item/{{{{id}}}}"
for_each = "ids"
as = "id"
check = {{ status = [200] }}
[[flow.step]]
name = "again"
url = "/home?round={{{{i}}}}"
repeat = "{{{{n}}}}"
as = "i"
[[flow.step]]
name = "nothing"
url = "/home?none={{{{x}}}}"
for_each = "none"
as = "x"
[[flow.step]]
name = "pages"
url = "/home?page={{{{p}}}}"
repeat = "{{{{limits.pages}}}}"
as = "p"
"#
    );
    let (dir, path) = scenario(&app, &text);
    // Users take rows in turn: u0 pages 2, u1 pages 5000 (above the cap).
    std::fs::write(dir.path().join("limits.csv"), "pages\n2\n5000\n").unwrap();
    let r = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "-c",
        "2",
        "-t",
        "1",
        "-n",
        "8",
        "--assert",
        "failed <= 100%",
    ]);
    let log = app.log();
    let flows = |u: &str| answered_to(&log, u, "/api/items");
    let (f0, f1) = (flows("u0"), flows("u1"));
    assert_eq!(f0 + f1, 8, "{log:?}");
    // Each user's own three items, each once per flow.
    for (user, n, first) in [("u0", f0, 1), ("u1", f1, 1001)] {
        for id in first..first + 3 {
            assert_eq!(
                answered_to(&log, user, &format!("/item/{id}")),
                n,
                "{user} item {id}"
            );
        }
        for round in 1..=3 {
            assert_eq!(answered_to(&log, user, &format!("/home?round={round}")), n);
        }
        assert_eq!(answered_to(&log, user, "/home?round=4"), 0);
        assert_eq!(answered_to(&log, user, "/home?none"), 0, "an empty list");
    }
    // Users take the feed's rows as they start: the one with 2 pages
    // asked for pages 1 and 2 each flow; the other, above the cap, none.
    let (small, fs, big, fb) = match answered_to(&log, "u0", "/home?page=1") {
        0 => ("u1", f1, "u0", f0),
        _ => ("u0", f0, "u1", f1),
    };
    assert!(fb >= 1, "both users ran a flow: {log:?}");
    assert_eq!(answered_to(&log, small, "/home?page=1"), fs);
    assert_eq!(answered_to(&log, small, "/home?page=2"), fs);
    assert_eq!(answered_to(&log, small, "/home?page=3"), 0);
    assert_eq!(
        answered_to(&log, big, "/home?page"),
        0,
        "above the cap: none"
    );
    // pelt's counts are the log's.
    assert_eq!(count(&step(&r, "each")["requests"]), 3 * 8);
    assert_eq!(count(&step(&r, "again")["requests"]), 3 * 8);
    assert_eq!(count(&step(&r, "nothing")["requests"]), 0);
    assert_eq!(count(&step(&r, "pages")["requests"]), 2 * fs);
    assert_eq!(
        count(&r["requests"]["completed"]),
        log.len() as u64,
        "once steps too"
    );
    let walk = &r["scenario"]["flows"][0];
    assert_eq!(count(&walk["failed"]), fb, "{walk}");
    assert_eq!(walk["failures"], serde_json::json!({ "extract": fb }));
    let examples = r["error_examples"].to_string();
    assert!(
        examples.contains("walk/pages: repeat: 5000 rounds is above the cap of 1000"),
        "{examples}"
    );
}

/// Issue 37 §4: `--log-requests` of a scenario run names who sent each
/// request: the virtual user, its flow, its iteration and the step. Each
/// request's `X-VU` header and `?it=` query (its user and iteration, as
/// the app saw them) are the witness: the log's lines are the app's
/// requests, one for one.
#[test]
fn the_request_log_names_each_steps_user_flow_iteration_and_step() {
    let app = FlaskApp::start();
    let text = format!(
        r#"base = "{{base}}"
{LOGIN}
[[flow]]
name = "walk"
[[flow.step]]
name = "list"
url = "/api/items?it={{{{iteration}}}}"
headers = {{ "X-VU" = "{{{{vu}}}}" }}
extract = {{ ids = {{ json = "/items/*/id", pick = "all" }} }}
[[flow.step]]
name = "each"
url = "/item/{{{{id}}}}?it={{{{iteration}}}}"
headers = {{ "X-VU" = "{{{{vu}}}}" }}
for_each = "ids"
as = "id"
"#
    );
    let (dir, path) = scenario(&app, &text);
    let mut seen = std::collections::BTreeMap::<(String, String, String), u64>::new();
    for (file, jsonl) in [("requests.csv", false), ("requests.jsonl", true)] {
        let log_path = dir.path().join(file);
        let before = app.log().len();
        run_json(&[
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "-c",
            "2",
            "-t",
            "1",
            "-n",
            "6",
            "--log-requests",
            log_path.to_str().unwrap(),
        ]);
        let text = std::fs::read_to_string(&log_path).unwrap();
        let mut logged = std::collections::BTreeMap::<(String, String, String), u64>::new();
        let mut once = 0;
        if jsonl {
            for l in text.lines() {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                let step = v["step"].as_str().unwrap().to_string();
                assert_eq!(v["flow"].as_str().unwrap(), step.split('/').next().unwrap());
                if step.starts_with("once/") {
                    assert_eq!(v["iteration"], 0);
                    once += 1;
                    continue;
                }
                *logged
                    .entry((v["user"].to_string(), v["iteration"].to_string(), step))
                    .or_default() += 1;
            }
        } else {
            let mut lines = text.lines();
            assert_eq!(
                lines.next().unwrap(),
                "intended_unix_ns,sent_unix_ns,first_byte_unix_ns,done_unix_ns,status,bytes_in,bytes_out,error,target,method,url,user,flow,iteration,step"
            );
            for l in lines {
                let cells: Vec<&str> = l.split(',').collect();
                assert_eq!(cells.len(), 15, "{l}");
                let (user, flow, iteration, step) = (cells[11], cells[12], cells[13], cells[14]);
                assert_eq!(flow, step.split('/').next().unwrap(), "{l}");
                if flow == "once" {
                    assert_eq!(iteration, "0", "{l}");
                    once += 1;
                    continue;
                }
                *logged
                    .entry((user.into(), iteration.into(), step.into()))
                    .or_default() += 1;
            }
        }
        assert_eq!(once, 4, "two users' two once steps: {text}");
        seen.clear();
        for e in &app.log()[before..] {
            let Some((path, it)) = e.path.split_once("?it=") else {
                continue;
            };
            let step = match path {
                "/api/items" => "walk/list",
                _ => "walk/each",
            };
            *seen
                .entry((e.vu.clone().unwrap(), it.to_string(), step.to_string()))
                .or_default() += 1;
        }
        assert_eq!(logged, seen, "{file}");
        assert_eq!(seen.values().sum::<u64>(), 6 * 4, "6 flows of 4 requests");
    }
}

/// Issue 37 §4: `--dry-run=send` sends one iteration of each flow for
/// the first two users, every round of a loop, each user with its own
/// cookies (the app's log: each user's session is its own login), and
/// shows each response and what each extraction and check found, with
/// secrets redacted; a failed check ends the flow there, as in a run.
#[test]
fn a_dry_run_that_sends_shows_each_response_and_what_was_extracted() {
    let app = FlaskApp::start();
    let text = format!(
        r#"base = "{{base}}"
{LOGIN}
[[flow]]
name = "walk"
[[flow.step]]
name = "list"
url = "/api/items"
extract = {{ ids = {{ json = "/items/*/id", pick = "all" }}, api_token = {{ json = "/user" }} }}
[[flow.step]]
name = "each"
url = "/item/{{{{id}}}}"
for_each = "ids"
as = "id"
check = {{ body_contains = "<h1>Item" }}
[[flow]]
name = "broken"
[[flow.step]]
name = "home"
url = "/home"
check = {{ body_contains = "no such text" }}
[[flow.step]]
name = "never"
url = "/never"
[[flow]]
name = "json"
[[flow.step]]
name = "post"
method = "POST"
url = "/home"
headers = {{ "Content-Type" = "application/json" }}
body = '{{"name": "u0", "pass": "{{{{env.PELT_TEST_PASSWORD}}}}"}}'
"#
    );
    let (_dir, path) = scenario(&app, &text);
    let out = pelt()
        .env("PELT_TEST_PASSWORD", "sup3r s3cret")
        .args([
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "--dry-run=send",
        ])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = app.log();
    // 2 users × (2 once steps, a list, 3 items, home, post): 16, and no
    // /never.
    assert_eq!(log.len(), 16, "{log:?}");
    assert!(!log.iter().any(|e| e.path == "/never"), "{log:?}");
    for (user, first) in [("u0", 1), ("u1", 1001)] {
        for id in first..first + 3 {
            assert_eq!(
                answered_to(&log, user, &format!("/item/{id}")),
                1,
                "{log:?}"
            );
        }
    }
    assert!(
        shown.contains(
            "# user 1, iteration 1, step walk/each, round 3 of 3\nGET /item/1003 HTTP/1.1"
        ),
        "{shown}"
    );
    assert!(shown.contains("-> 302 in "), "{shown}");
    assert!(
        shown.contains("   extract ids = 1001,1002,1003\n"),
        "{shown}"
    );
    assert!(
        shown.contains("   extract api_token = REDACTED\n"),
        "a secret's name: {shown}"
    );
    assert!(shown.contains("   body: {\"count\":3,"), "{shown}");
    assert!(shown.contains("user=u0&password=REDACTED&csrf="), "{shown}");
    assert!(!shown.contains("pw-u0"), "{shown}");
    // A secret from the environment, in a JSON body (no field name to go
    // by), raw or encoded.
    assert!(shown.contains(r#""pass": "REDACTED""#), "{shown}");
    assert!(!shown.contains("s3cret"), "{shown}");
    assert!(shown.contains("   check: passed\n"), "{shown}");
    assert!(shown.contains("   check failed: "), "{shown}");
    assert!(shown.contains("flow broken ends here"), "{shown}");
}

/// Issue 37 §5: a HAR of a login copied its password into the scenario
/// and logged in again every iteration. Imported, the password is read
/// from PELT_LOGIN_PASSWORD, and the login (with its form page, whose
/// CSRF token it sends) is a `[[once]]` step: against the app, each
/// user logs in once (the log's POST /login count is the users'), and
/// every flow after it runs in that user's session.
#[test]
fn a_har_login_is_a_once_step_with_its_password_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let har = dir.path().join("rec.har");
    let token = "Tk-0123456789abcdef+/=";
    let e = |t: &str, method: &str, url: &str, post: &str, mime: &str, body: &str| {
        format!(
            r#"{{"startedDateTime":"{t}","time":10,"request":{{"method":"{method}","url":"{url}","headers":[]{post}}},"response":{{"status":200,"content":{{"mimeType":"{mime}","text":{}}}}}}}"#,
            serde_json::to_string(body).unwrap()
        )
    };
    let entries = [
        e(
            "2024-01-01T00:00:00.000Z",
            "GET",
            "http://shop.example/login",
            "",
            "text/html",
            &format!(r#"<form><input type="hidden" name="csrf" value="{token}"></form>"#),
        ),
        e(
            "2024-01-01T00:00:00.100Z",
            "POST",
            "http://shop.example/login",
            &format!(
                r#","postData":{{"mimeType":"application/x-www-form-urlencoded","text":"user=u0&password=pw-u0&csrf={}"}}"#,
                token
                    .replace('+', "%2B")
                    .replace('/', "%2F")
                    .replace('=', "%3D")
            ),
            "text/html",
            "redirecting",
        ),
        e(
            "2024-01-01T00:00:00.200Z",
            "GET",
            "http://shop.example/api/items",
            "",
            "application/json",
            r#"{"items":[{"id":1},{"id":2},{"id":3}]}"#,
        ),
        e(
            "2024-01-01T00:00:00.300Z",
            "GET",
            "http://shop.example/item/2",
            "",
            "text/html",
            "<h1>Item 2</h1>",
        ),
    ];
    std::fs::write(
        &har,
        format!(r#"{{"log":{{"entries":[{}]}}}}"#, entries.join(",")),
    )
    .unwrap();
    let app = FlaskApp::start();
    let out = pelt()
        .args(["import", "har"])
        .arg(&har)
        .args(["--base", &app.base()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("pw-u0"), "{text}");
    assert!(text.contains("PELT_LOGIN_PASSWORD"), "{text}");
    let path = dir.path().join("journey.toml");
    std::fs::write(&path, &text).unwrap();
    let r = pelt()
        .env("PELT_LOGIN_PASSWORD", "pw-u0")
        .args([
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "-c",
            "2",
            "-t",
            "1",
            "-n",
            "6",
            "--format",
            "json",
            "-q",
            "--no-save",
        ])
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "{}\n{text}",
        String::from_utf8_lossy(&r.stderr)
    );
    let log = app.log();
    let logins: Vec<&Entry> = log
        .iter()
        .filter(|e| e.method == "POST" && e.path == "/login")
        .collect();
    assert_eq!(logins.len(), 2, "once per user: {log:?}");
    assert!(
        logins
            .iter()
            .all(|e| e.status == 302 && e.login_user.as_deref() == Some("u0")),
        "{log:?}"
    );
    assert_eq!(answered(&log, "/api/items", 200), 6, "{log:?}");
    assert_eq!(answered(&log, "/item/2", 200), 6, "{log:?}");
    assert!(log
        .iter()
        .filter(|e| e.path == "/item/2")
        .all(|e| e.user.as_deref() == Some("u0")));
}
