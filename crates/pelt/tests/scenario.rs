//! `--scenario` against a real app (issue 25): pelt-testkit's Flask app,
//! with a login form and its CSRF token, a session cookie, a JSON API of
//! the user's item ids, an item page and a form POST. The app's log of
//! every request and its user is the witness: journeys complete and in
//! order, values used only by the virtual user that received them, unique
//! feed rows used once, failures counted by kind, flows started on
//! schedule, bad files refused with their line. At the end, the same
//! semantics over HTTP/2 (nginx, h2c and TLS) and HTTP/3 (`pelt serve
//! --http3`, Caddy), witnessed by those servers' logs and counts.

use pelt_testkit::flask::{Entry, FlaskApp};
use pelt_testkit::pelt::{bad_input, pelt, run_json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Writes `scenario` (with `{base}` replaced by the app's) and a `users`
/// feed of `users` rows (u0.., their passwords) into a temp folder.
fn files(app: &FlaskApp, scenario: &str, users: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("name,password\n");
    for i in 0..users {
        csv.push_str(&format!("u{i},pw-u{i}\n"));
    }
    std::fs::write(dir.path().join("users.csv"), csv).unwrap();
    let path = dir.path().join("journey.toml");
    std::fs::write(&path, scenario.replace("{base}", &app.base())).unwrap();
    (dir, path)
}

/// The login (once per virtual user) and a three-step flow: the item ids
/// from the JSON API, the page of the second, a note posted with the
/// page's CSRF token. Every request names its virtual user (`X-VU`).
const JOURNEY: &str = r#"
base = "{base}"

[[feed]]
name = "users"
file = "users.csv"
pick = "unique"
per = "user"

[[once]]
name = "login page"
url = "/login"
headers = { "X-VU" = "{{vu}}" }
extract = { csrf = { regex = 'name="csrf" value="([^"]+)"' } }

[[once]]
name = "login"
method = "POST"
url = "/login"
headers = { "Content-Type" = "application/x-www-form-urlencoded", "X-VU" = "{{vu}}" }
body = "user={{users.name}}&password={{users.password}}&csrf={{csrf|url}}"
check = { status = [302] }

[[flow]]
name = "browse"
[[flow.step]]
name = "list"
url = "/api/items"
headers = { "X-VU" = "{{vu}}" }
extract = { id = { json = "items[1].id" } }
check = { status = [200], json = { "/ok" = true } }
[[flow.step]]
name = "item"
url = "/item/{{id}}"
headers = { "X-VU" = "{{vu}}" }
think = "5ms..15ms"
extract = { token = { regex = 'name="csrf" value="([^"]+)"' } }
check = { body_contains = "<h1>Item" }
[[flow.step]]
name = "note"
method = "POST"
url = "/item/{{id}}/note"
headers = { "Content-Type" = "application/x-www-form-urlencoded", "X-VU" = "{{vu}}" }
body = "csrf={{token|url}}&text=hello"
check = { json = { "/ok" = true } }
"#;

/// The app's requests by virtual user, in the order it answered them.
fn by_user(log: &[Entry]) -> BTreeMap<String, Vec<Entry>> {
    let mut m: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
    for e in log {
        m.entry(e.vu.clone().expect("every request names its user"))
            .or_default()
            .push(e.clone());
    }
    m
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

fn items_of(user: &str) -> Vec<u64> {
    let i: u64 = user[1..].parse().unwrap();
    vec![i * 1000 + 1, i * 1000 + 2, i * 1000 + 3]
}

#[test]
fn journeys_are_complete_in_order_and_values_stay_with_their_user() {
    let app = FlaskApp::start();
    let (_dir, path) = files(&app, JOURNEY, 10);
    let report = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "-c",
        "4",
        "-t",
        "2",
        "-d",
        "2s",
    ]);
    pelt_testkit::schema::run(&report);
    let log = app.log();
    let users = by_user(&log);
    assert_eq!(users.len(), 4, "four virtual users: {:?}", users.keys());
    let mut logged_in = BTreeSet::new();
    for (vu, entries) in &users {
        // The login first: the page, then the form with that page's token
        // in the session that page opened.
        assert_eq!(
            (entries[0].method.as_str(), entries[0].path.as_str()),
            ("GET", "/login"),
            "{vu}"
        );
        assert_eq!(
            (entries[1].method.as_str(), entries[1].path.as_str()),
            ("POST", "/login"),
            "{vu}"
        );
        assert_eq!(
            entries[1].csrf, entries[0].issued,
            "{vu} sent another user's token"
        );
        assert_eq!(
            entries[1].sid, entries[0].issued_sid,
            "{vu} used another session"
        );
        assert_eq!(entries[1].status, 302, "{vu}");
        let user = entries[1].login_user.clone().unwrap();
        assert!(
            logged_in.insert(user.clone()),
            "two users logged in as {user}"
        );
        // Then flows of three steps in order (the last perhaps cut off
        // by the run's end), all as this user, in this session, with
        // this user's ids and this session's tokens.
        let flows = &entries[2..];
        assert!(flows.len() >= 3, "{vu} ran no flow: {flows:?}");
        for (k, e) in flows.iter().enumerate() {
            assert_eq!(e.user.as_deref(), Some(user.as_str()), "{vu}: {e:?}");
            assert_eq!(e.sid, entries[1].sid, "{vu}: {e:?}");
            assert!(e.status < 400, "{vu}: {e:?}");
            let want = items_of(&user)[1];
            match k % 3 {
                0 => assert_eq!(
                    (e.method.as_str(), e.path.as_str()),
                    ("GET", "/api/items"),
                    "{vu}"
                ),
                1 => assert_eq!(
                    e.path,
                    format!("/item/{want}"),
                    "{vu}: the id from its own list"
                ),
                _ => {
                    assert_eq!(
                        (e.method.as_str(), e.path.clone()),
                        ("POST", format!("/item/{want}/note")),
                        "{vu}"
                    );
                    assert_eq!(
                        e.csrf,
                        flows[k - 1].issued,
                        "{vu}: the token from its own page"
                    );
                }
            }
        }
    }
    // The report's per-step counts are the app's.
    let count = |m: &str, p: &dyn Fn(&str) -> bool| {
        log.iter().filter(|e| e.method == m && p(&e.path)).count() as u64
    };
    assert_eq!(
        step(&report, "login page")["requests"],
        count("GET", &|p| p == "/login")
    );
    assert_eq!(
        step(&report, "login")["requests"],
        count("POST", &|p| p == "/login")
    );
    assert_eq!(
        step(&report, "list")["requests"],
        count("GET", &|p| p == "/api/items")
    );
    assert_eq!(
        step(&report, "item")["requests"],
        count("GET", &|p| p.starts_with("/item/"))
    );
    let notes = count("POST", &|p| p.ends_with("/note"));
    assert_eq!(step(&report, "note")["requests"], notes);
    let flow = &report["scenario"]["flows"][0];
    assert_eq!(flow["name"], "browse");
    assert_eq!(flow["completed"], notes, "a flow completes with its note");
    // A flow the run's end cut off is started and failed as unfinished
    // (issue 37): at most one per user, and no other failure.
    let cut = flow["failures"]["unfinished"].as_u64().unwrap_or(0);
    assert_eq!(flow["failed"].as_u64(), Some(cut), "{flow}");
    assert!(cut <= 4, "{flow}");
    let firsts = count("GET", &|p| p == "/api/items");
    assert_eq!(flow["started"].as_u64(), Some(firsts), "{flow}");
    assert_eq!(report["requests"]["failed"], 0);
    // The whole run counts requests, never flows.
    assert_eq!(report["requests"]["total"].as_u64(), Some(log.len() as u64));
}

/// Logins, each with a row of a `unique` feed of users.
const UNIQUE_LOGINS: &str = r#"
base = "{base}"

[[feed]]
name = "users"
file = "users.csv"
pick = "unique"
per = "iteration"

[[flow]]
name = "login"
[[flow.step]]
name = "page"
url = "/login"
headers = { "X-VU" = "{{vu}}" }
extract = { csrf = { regex = 'value="([^"]+)"' } }
[[flow.step]]
name = "form"
method = "POST"
url = "/login"
headers = { "Content-Type" = "application/x-www-form-urlencoded", "X-VU" = "{{vu}}" }
body = "user={{users.name}}&password={{users.password}}&csrf={{csrf|url}}"
check = { status = [302] }
"#;

#[test]
fn unique_rows_are_each_used_exactly_once_and_the_run_ends_when_they_run_out() {
    let app = FlaskApp::start();
    let scenario = UNIQUE_LOGINS;
    let (dir, path) = files(&app, scenario, 40);
    let saved = dir.path().join("run.pelt");
    let started = std::time::Instant::now();
    let report = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "-c",
        "3",
        "-t",
        "1",
        "-d",
        "60s",
        "-o",
        saved.to_str().unwrap(),
    ]);
    assert!(
        started.elapsed().as_secs() < 50,
        "the run ends when the rows run out"
    );
    let logins: Vec<String> = app.log().into_iter().filter_map(|e| e.login_user).collect();
    let distinct: BTreeSet<&String> = logins.iter().collect();
    assert_eq!(logins.len(), 40, "each row once: {logins:?}");
    assert_eq!(distinct.len(), 40);
    assert_eq!(report["scenario"]["flows"][0]["completed"], 40);
    // The report says why the run ended, and when: complete, its data
    // used up (JSON: the stop cause and a warning; text: the warning).
    pelt_testkit::schema::run(&report);
    assert_eq!(report["interrupted"], false);
    let by = &report["stopped_by"];
    assert_eq!(by["by"], "feed_ran_out", "{by}");
    assert_eq!(
        (&by["feed"], &by["rows"]),
        (&"users.csv".into(), &40.into())
    );
    let at = by["at_s"].as_f64().unwrap();
    assert!(at > 0.0 && at < 50.0, "{at}");
    let note = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "feed_ran_out")
        .unwrap_or_else(|| panic!("{}", report["warnings"]));
    assert!(
        note["message"]
            .as_str()
            .unwrap()
            .starts_with("feed users.csv: all 40 rows used"),
        "{note}"
    );
    // A saved run says it again.
    let out = pelt().args(["report"]).arg(&saved).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("feed users.csv: all 40 rows used"), "{text}");
    assert!(text.contains("no new flows started after"), "{text}");
}

#[test]
fn a_wrong_csrf_token_and_a_missing_id_are_counted_failures_with_examples() {
    let app = FlaskApp::start();
    // A token the app never issued: every login fails its check.
    let wrong = JOURNEY.replace("csrf={{csrf|url}}", "csrf=x{{csrf|url}}");
    let (_dir, path) = files(&app, &wrong, 10);
    let report = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "-c",
        "2",
        "-t",
        "1",
        "-d",
        "1s",
        // Every flow fails here, on purpose: said to be acceptable, so
        // the run is judged by this assert, not "nothing succeeded".
        "--assert",
        "failed <= 100%",
    ]);
    let login = step(&report, "login");
    assert_eq!(login["requests"], 2);
    assert_eq!(login["failures"]["check"], 2, "{login}");
    let examples = report["error_examples"].as_array().unwrap();
    assert!(
        examples
            .iter()
            .any(|e| e["kind"] == "check" && e["message"].as_str().unwrap().contains("status 400")),
        "{examples:?}"
    );
    // The same failures in the whole run's one count of failed.
    assert!(report["requests"]["failed"].as_u64().unwrap() >= 2);
    assert!(report["failures"]["check"].as_u64().unwrap() >= 2);

    // An id that is not there: the list's extract fails, and the item
    // and note steps are skipped, never sent.
    let app = FlaskApp::start();
    let missing = JOURNEY.replace("items[1].id", "items[7].id");
    let (_dir, path) = files(&app, &missing, 10);
    let report = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "-c",
        "2",
        "-t",
        "1",
        "-d",
        "1s",
        // Every flow fails here, on purpose: said to be acceptable, so
        // the run is judged by this assert, not "nothing succeeded".
        "--assert",
        "failed <= 100%",
    ]);
    let list = step(&report, "list");
    let lists = list["requests"].as_u64().unwrap();
    assert!(lists > 0);
    assert_eq!(list["failures"]["extract"].as_u64(), Some(lists), "{list}");
    assert_eq!(step(&report, "item")["requests"], 0);
    assert_eq!(step(&report, "item")["skipped"].as_u64(), Some(lists));
    assert_eq!(
        report["scenario"]["flows"][0]["failures"]["extract"].as_u64(),
        Some(lists)
    );
    assert!(report["error_examples"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["kind"] == "extract" && e["message"].as_str().unwrap().contains("/items/7/id")));
    assert!(
        !app.log().iter().any(|e| e.path.starts_with("/item/")),
        "skipped steps are never sent"
    );
}

#[test]
fn rate_mode_starts_exactly_r_flows_per_second() {
    let app = FlaskApp::start();
    let scenario = JOURNEY.replace("think = \"5ms..15ms\"\n", "");
    let (_dir, path) = files(&app, &scenario, 20);
    let report = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "--rate",
        "20",
        "-c",
        "10",
        "-t",
        "1",
        "-d",
        "3s",
    ]);
    let starts: Vec<f64> = app
        .log()
        .into_iter()
        .filter(|e| e.path == "/api/items")
        .map(|e| e.t)
        .collect();
    assert_eq!(starts.len(), 60, "20 flows/s for 3 s");
    // And 20 in each second of the schedule. The schedule's start is
    // read from every flow, not the first alone (flow k is due k/20 s in,
    // and a flow can only arrive late): on a busy machine a late first
    // flow would otherwise shift every window.
    let mut sorted = starts.clone();
    sorted.sort_by(f64::total_cmp);
    let t0 = sorted
        .iter()
        .enumerate()
        .map(|(k, t)| t - k as f64 / 20.0)
        .fold(f64::MAX, f64::min);
    for s in 0..3 {
        let n = starts
            .iter()
            .filter(|&&t| t - t0 >= s as f64 && t - t0 < (s + 1) as f64)
            .count();
        assert!((19..=21).contains(&n), "second {s}: {n} flows");
    }
    assert_eq!(step(&report, "list")["requests"], 60);
    assert_eq!(report["mode"], "rate");
}

/// Runs `--scenario` on `text` (feeds from `dir`) and checks it is
/// refused with exit 2, one line naming the file and `line`.
fn refused(dir: &Path, text: &str, line: usize, says: &str) {
    let path = dir.join("bad.toml");
    std::fs::write(&path, text).unwrap();
    let out = pelt()
        .args([
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "-c",
            "1",
            "-d",
            "1s",
        ])
        .output()
        .unwrap();
    let err = bad_input(&out, text);
    assert!(
        err.contains(&format!("{}:{line}: ", path.display())),
        "{err}"
    );
    assert!(err.contains(says), "{err} lacks {says:?}");
}

#[test]
fn bad_scenarios_exit_2_naming_the_file_and_line_before_any_load() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.csv"), "name\n").unwrap();
    // Port 1: nothing listens; a refusal proves no load was tried.
    let head = "base = \"http://127.0.0.1:1\"\n[[flow]]\nname = \"f\"\n[[flow.step]]\n";
    refused(
        dir.path(),
        &format!("{head}url = \"/a/{{{{nope}}}}\"\n"),
        5,
        "unknown variable 'nope'",
    );
    refused(
        dir.path(),
        &format!("{head}url = \"/a\"\nextract = {{ x = {{ regex = \"([\" }} }}\n"),
        6,
        "bad regex",
    );
    refused(
        dir.path(),
        &format!("{head}url = \"/a\"\nextract = {{ x = {{ json = \"a[x]\" }} }}\n"),
        6,
        "cannot match",
    );
    let feed = |extra: &str| {
        format!("[[feed]]\nname = \"u\"\n{extra}\n[[flow]]\nname = \"f\"\n[[flow.step]]\nurl = \"http://127.0.0.1:1/\"\n")
    };
    refused(
        dir.path(),
        &feed("file = \"nowhere.csv\""),
        3,
        "cannot open feed",
    );
    refused(
        dir.path(),
        &feed("file = \"empty.csv\"\npick = \"unique\""),
        3,
        "has no rows",
    );
    refused(
        dir.path(),
        "base = \"http://127.0.0.1:1\"\n[[flow]]\nname = \"a\"\n[[flow.step]]\nflow = \"b\"\n[[flow]]\nname = \"b\"\n[[flow.step]]\nflow = \"a\"\n",
        9,
        "cycle",
    );
    refused(
        dir.path(),
        &format!("{head}url = \"/a\"\nmethod = [\n"),
        6,
        "",
    );
}

/// The committed recording (crates/pelt/tests/data/flask-journey.har):
/// the app's login page, its stylesheet, the login form, the item list
/// (with a bearer token), an item page, a note posted on it.
fn har() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/flask-journey.har")
}

#[test]
fn a_har_recording_imports_into_a_scenario_that_runs_clean() {
    let app = FlaskApp::start();
    let out = pelt()
        .args([
            "import",
            "har",
            har().to_str().unwrap(),
            "--base",
            &app.base(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let scenario = String::from_utf8(out.stdout).unwrap();
    // Secrets stay out; the jar handles cookies; assets are left out;
    // the token and the id are carried, not replayed.
    assert!(!scenario.contains("recorded-secret-token"), "{scenario}");
    // The login's password too: it is read from the environment, and the
    // login is a once step (issue 37 §5).
    assert!(!scenario.contains("pw-u7"), "{scenario}");
    assert!(
        scenario.contains("password={{env.PELT_LOGIN_PASSWORD|url}}"),
        "{scenario}"
    );
    assert!(
        scenario.contains("{{env.PELT_SECRET_AUTHORIZATION}}"),
        "{scenario}"
    );
    let headers: Vec<&str> = scenario
        .lines()
        .filter(|l| l.starts_with("headers"))
        .collect();
    assert!(
        headers
            .iter()
            .all(|l| !l.to_ascii_lowercase().contains("\"cookie\"")),
        "{scenario}"
    );
    assert!(!scenario.contains("site.css"), "{scenario}");
    assert!(scenario.contains("csrf={{csrf|url}}"), "{scenario}");
    assert!(
        scenario.contains("url = \"/item/{{item_id|url}}/note\""),
        "{scenario}"
    );
    assert!(scenario.contains("think = \""), "{scenario}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("imported.toml");
    std::fs::write(&path, &scenario).unwrap();
    let out = pelt()
        .env("PELT_SECRET_AUTHORIZATION", "Bearer from-the-environment")
        .env("PELT_LOGIN_PASSWORD", "pw-u7")
        .args([
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "-c",
            "2",
            "-t",
            "1",
            "-d",
            "2s",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let report = pelt_testkit::pelt::ok_json(&out);
    assert_eq!(
        report["requests"]["failed"], 0,
        "{}",
        report["error_examples"]
    );
    let flows = &report["scenario"]["flows"][0];
    assert!(flows["completed"].as_u64().unwrap() >= 2, "{flows}");
    let log = app.log();
    assert!(
        log.iter()
            .any(|e| e.path == "/item/7002/note" && e.status == 200),
        "the recorded user's item, posted to"
    );
    assert!(log.iter().all(|e| e.status < 400), "{log:?}");
    let logins = log
        .iter()
        .filter(|e| e.method == "POST" && e.path == "/login")
        .count();
    assert_eq!(logins, 2, "a login per user, not per flow: {log:?}");

    // Assets on request.
    let out = pelt()
        .args(["import", "har", har().to_str().unwrap(), "--include-assets"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("/static/site.css"));
}

#[test]
fn a_har_that_is_not_json_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.har");
    std::fs::write(
        &path,
        "{\n  \"log\": {\n    \"entries\": [ oops ]\n  }\n}\n",
    )
    .unwrap();
    let out = pelt()
        .args(["import", "har", path.to_str().unwrap()])
        .output()
        .unwrap();
    let err = bad_input(&out, "broken HAR");
    assert!(err.contains(&format!("{}:3: ", path.display())), "{err}");
    assert!(err.contains("not a HAR file"), "{err}");
}

/// A step's response time by percentile `p` ("p50", "p90"...) in seconds.
fn step_p(report: &serde_json::Value, name: &str, p: &str) -> f64 {
    step(report, name)["response_time"]["percentiles_s"][p]
        .as_f64()
        .unwrap_or_else(|| panic!("{name} {p}"))
}

#[test]
fn each_step_is_timed_from_its_intended_start() {
    // pelt's own server: 100 ms for the first step, at once for the second.
    let server = pelt_testkit::pelt::server(None);
    let base = format!("http://{}", server.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("timed.toml");
    let write = |think: &str| {
        std::fs::write(
            &path,
            format!(
                "base = \"{base}\"\n[[flow]]\nname = \"f\"\n[[flow.step]]\nname = \"slow\"\nurl = \"/?delay=100ms\"\n{think}\n[[flow.step]]\nname = \"fast\"\nurl = \"/\"\n"
            ),
        )
        .unwrap();
    };
    // Closed loop with a think time: the pause is the user's, in no step's
    // time, but in the flow's.
    write("think = \"200ms\"");
    let report = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "-c",
        "1",
        "-t",
        "1",
        "-d",
        "2s",
    ]);
    assert!(
        step_p(&report, "fast", "p90") < 0.05,
        "{}",
        step(&report, "fast")
    );
    let flow = report["scenario"]["flows"][0]["duration"]["percentiles_s"]["p50"]
        .as_f64()
        .unwrap();
    assert!(flow >= 0.3, "slow + think + fast: {flow}");
    // Rate mode, one user, twice the flows it can run: each flow's slot
    // waits for the user, and the wait is in its first step's time (as
    // its user would feel it), never hidden; the next step still runs
    // from its predecessor's end.
    write("");
    let report = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "--rate",
        "20",
        "-c",
        "1",
        "-t",
        "1",
        "-d",
        "2s",
    ]);
    assert!(
        step_p(&report, "slow", "p90") > 0.4,
        "{}",
        step(&report, "slow")
    );
    assert!(
        step_p(&report, "fast", "p90") < 0.05,
        "{}",
        step(&report, "fast")
    );
}

#[test]
fn a_connection_schedule_adds_virtual_users_as_it_rises() {
    let app = FlaskApp::start();
    let (_dir, path) = files(&app, JOURNEY, 10);
    run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "-c",
        "1..3/2s",
        "-t",
        "1",
        "-d",
        "2s",
    ]);
    let users = by_user(&app.log());
    assert_eq!(users.len(), 3, "{:?}", users.keys());
    // The third user starts when the level passes 2, about 1 s later than
    // the first (the level rises from 1 to 3 over 2 s).
    let first = |vu: &str| users[vu][0].t;
    let late = first("2") - first("0");
    assert!(
        (0.8..1.6).contains(&late),
        "user 2 started {late:.2}s after user 0"
    );
}

#[test]
fn request_flags_that_a_scenario_would_ignore_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(
        &path,
        "[[flow]]\nname = \"f\"\n[[flow.step]]\nurl = \"http://127.0.0.1:1/\"\n",
    )
    .unwrap();
    for extra in [
        &["-H", "X-A: 1"][..],
        &["-m", "POST"],
        &["--login", "POST http://127.0.0.1:1/login a=b"],
    ] {
        let out = pelt()
            .args(["run", "--scenario", path.to_str().unwrap(), "-d", "1s"])
            .args(extra)
            .output()
            .unwrap();
        let err = bad_input(&out, &format!("{extra:?}"));
        assert!(
            err.contains("put methods, headers, bodies and a login"),
            "{err}"
        );
    }
}

#[test]
fn shards_share_a_unique_feed_each_row_once() {
    let app = FlaskApp::start();
    let scenario = UNIQUE_LOGINS;
    let (_dir, path) = files(&app, scenario, 30);
    // Two shards of one run, one after the other: row k goes to shard
    // k mod 2, so between them every row is used, none twice.
    let mut flows = 0;
    for shard in ["0/2", "1/2"] {
        let report = run_json(&[
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "-c",
            "2",
            "-t",
            "1",
            "-d",
            "30s",
            "--shard",
            shard,
        ]);
        flows += report["scenario"]["flows"][0]["completed"]
            .as_u64()
            .unwrap();
    }
    let logins: Vec<String> = app.log().into_iter().filter_map(|e| e.login_user).collect();
    let distinct: BTreeSet<&String> = logins.iter().collect();
    assert_eq!(
        (logins.len(), distinct.len(), flows),
        (30, 30, 30),
        "{logins:?}"
    );
}

#[test]
fn a_siege_targets_file_imports_into_a_scenario_that_runs() {
    let app = FlaskApp::start();
    let dir = tempfile::tempdir().unwrap();
    let targets = dir.path().join("urls.txt");
    // siege's form: URL, then POST and a body.
    std::fs::write(
        &targets,
        format!("{0}/login\n{0}/login POST user=u1&password=x\n", app.base()),
    )
    .unwrap();
    let out = pelt()
        .args(["import", "targets", targets.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = dir.path().join("s.toml");
    std::fs::write(&path, &out.stdout).unwrap();
    // Every flow's form is refused: nothing succeeded, exit 3.
    let report = pelt_testkit::pelt::run_json_nothing_succeeded(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "-c",
        "1",
        "-t",
        "1",
        "-n",
        "3",
    ]);
    let steps = report["scenario"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    let log = app.log();
    // Three flows: each the page, then the form (refused: no CSRF token,
    // which the file cannot know; the scenario is where to add it).
    assert_eq!(
        log.iter().map(|e| e.method.as_str()).collect::<Vec<_>>(),
        ["GET", "POST", "GET", "POST", "GET", "POST"]
    );
    assert_eq!(report["scenario"]["flows"][0]["failures"]["status_4xx"], 3);
}

#[test]
fn the_html_report_names_steps_and_flows() {
    let app = FlaskApp::start();
    let (_dir, path) = files(&app, JOURNEY, 10);
    let out = pelt()
        .args([
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "-c",
            "1",
            "-t",
            "1",
            "-n",
            "2",
            "--format",
            "html",
        ])
        .output()
        .unwrap();
    let html = pelt_testkit::pelt::ok_stdout(&out);
    assert!(
        html.contains("<h2>Steps and flows</h2>"),
        "no steps section"
    );
    for name in [
        "once/login page",
        "browse/list",
        "browse/item",
        "browse/note",
    ] {
        assert!(
            html.contains(&format!("step <code>{name}</code>")),
            "no row for {name}"
        );
    }
    assert!(html.contains("flow <code>browse</code>"));
}

#[test]
fn a_saved_scenario_run_reports_its_steps_again() {
    let app = FlaskApp::start();
    let (dir, path) = files(&app, JOURNEY, 10);
    let saved = dir.path().join("run.pelt");
    let live = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "-c",
        "2",
        "-t",
        "1",
        "-d",
        "1s",
        "-o",
        saved.to_str().unwrap(),
    ]);
    let out = pelt()
        .args(["report", saved.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    let again = pelt_testkit::pelt::ok_json(&out);
    pelt_testkit::schema::run(&again);
    for (a, b) in live["scenario"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .zip(again["scenario"]["steps"].as_array().unwrap())
    {
        assert_eq!(
            (&a["name"], &a["requests"], &a["failed"], &a["skipped"]),
            (&b["name"], &b["requests"], &b["failed"], &b["skipped"])
        );
    }
    assert_eq!(
        live["scenario"]["flows"][0]["completed"],
        again["scenario"]["flows"][0]["completed"]
    );
    assert!(again["scenario"]["flows"][0]["completed"].as_u64().unwrap() > 0);
}

#[test]
fn in_rate_mode_a_unique_feed_running_out_ends_the_run_at_once() {
    let app = FlaskApp::start();
    let scenario = r#"
base = "{base}"

[[feed]]
name = "users"
file = "users.csv"
pick = "unique"

[[flow]]
name = "page"
[[flow.step]]
url = "/login?u={{users.name}}"
headers = { "X-VU" = "{{vu}}" }
"#;
    let (_dir, path) = files(&app, scenario, 10);
    // 10 rows at 20 flows/s: out after half a second, with 50 idle users
    // that must not each wait for a slot to learn it.
    let started = std::time::Instant::now();
    let report = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "--rate",
        "20",
        "-c",
        "50",
        "-t",
        "1",
        "-d",
        "20s",
    ]);
    // Well before the 20 s -d, with room for a busy machine's start-up.
    assert!(
        started.elapsed().as_secs_f64() < 12.0,
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(report["scenario"]["flows"][0]["completed"], 10);
    assert_eq!(app.log().len(), 10);
}

/// The login and a two-step flow, its item page `delay_ms` slower.
fn journey_with_delay(base: &str, delay_ms: u32) -> String {
    format!(
        r#"
base = "{base}"

[[once]]
name = "login page"
url = "/login"
extract = {{ csrf = {{ regex = 'name="csrf" value="([^"]+)"' }} }}

[[once]]
name = "login"
method = "POST"
url = "/login"
headers = {{ "Content-Type" = "application/x-www-form-urlencoded" }}
body = "user=u{{{{vu}}}}&password=pw-u{{{{vu}}}}&csrf={{{{csrf|url}}}}"
check = {{ status = [302] }}

[[flow]]
name = "browse"
[[flow.step]]
name = "list"
url = "/api/items"
extract = {{ id = {{ json = "items[1].id" }} }}
[[flow.step]]
name = "item"
url = "/item/{{{{id}}}}?delay_ms={delay_ms}"
check = {{ body_contains = "<h1>Item" }}
"#
    )
}

/// The metric row `name` of the first comparison of an experiment's or
/// `pelt compare`'s JSON (`rows` is `metrics`).
fn metric_row<'a>(rows: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"]["name"] == name)
        .unwrap_or_else(|| panic!("no row {name} in {rows}"))
}

#[test]
fn an_experiment_of_two_scenarios_judges_each_step() {
    let _machine = pelt_testkit::pelt::exclusive();
    let app = FlaskApp::start();
    let dir = tempfile::tempdir().unwrap();
    // Scenario files beside the plan, named relative to it; the item
    // page is 20 ms slower in B, the list is the same.
    std::fs::create_dir(dir.path().join("plans")).unwrap();
    std::fs::write(
        dir.path().join("plans/fast.toml"),
        journey_with_delay(&app.base(), 0),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("plans/slow.toml"),
        journey_with_delay(&app.base(), 20),
    )
    .unwrap();
    let plan = r#"
name = "steps"
blocks = 6
[load]
connections = 1
duration = "600ms"
warmup = "200ms"
threads = 1
[[variant]]
name = "A"
scenario = "fast.toml"
[[variant]]
name = "B"
scenario = "slow.toml"
"#;
    std::fs::write(dir.path().join("plans/plan.toml"), plan).unwrap();
    let out = pelt()
        .current_dir(dir.path())
        .args(["experiment", "plans/plan.toml", "-o", "out"])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    pelt_testkit::schema::experiment(&report);
    let rows = &report["comparisons"][0]["metrics"];
    // The whole run's rows first, then three per step of either flow.
    assert!(metric_row(rows, "p50")["comparison"].is_object());
    let item = &metric_row(rows, "browse/item p50")["comparison"];
    assert_eq!(item["verdict"]["kind"], "regression", "{stdout}");
    assert_eq!(item["verdict"]["material"], true, "{stdout}");
    assert_eq!(item["design"]["blocks"], 6);
    for name in [
        "browse/list p50",
        "browse/list p99",
        "browse/item p99",
        "browse/item failed",
    ] {
        assert!(
            metric_row(rows, name)["comparison"]["verdict"]["kind"].is_string(),
            "{name}: {}",
            metric_row(rows, name)
        );
    }
    // Nothing failed on either side: no step's failed share changed.
    assert_ne!(
        metric_row(rows, "browse/item failed")["comparison"]["verdict"]["kind"],
        "regression"
    );
    assert!(stdout.contains("browse/item p50"), "{stdout}");
    // The login, made once per user in the warm-up, has no timed figure
    // in any run: no row, rather than one that cannot compare.
    assert!(!rows.to_string().contains("once/login p50"), "{rows}");

    // A scenario in args is refused: its path would not start at the plan.
    std::fs::write(
        dir.path().join("plans/bad.toml"),
        plan.replace(
            "scenario = \"slow.toml\"",
            "args = [\"--scenario\", \"slow.toml\"]",
        ),
    )
    .unwrap();
    let out = pelt()
        .current_dir(dir.path())
        .args(["experiment", "plans/bad.toml", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("scenario = \\\"file.toml\\\"") || err.contains("scenario = \"file.toml\""),
        "{err}"
    );
}

#[test]
fn compare_judges_each_step_of_two_sets_of_scenario_runs() {
    let app = FlaskApp::start();
    let dir = tempfile::tempdir().unwrap();
    // One file; the item page's delay comes from the environment. Its
    // value is in the step's URL, so the runs differ in their work:
    // --allow-mismatch says that is meant.
    let path = dir.path().join("journey.toml");
    std::fs::write(
        &path,
        journey_with_delay(&app.base(), 0).replace("delay_ms=0", "delay_ms={{env.DELAY_MS}}"),
    )
    .unwrap();
    let run = |name: &str, delay: &str| {
        let file = dir.path().join(format!("{name}.pelt"));
        let out = pelt()
            .env("DELAY_MS", delay)
            .args(["run", "--scenario", path.to_str().unwrap()])
            .args(["-c", "1", "-t", "1", "-d", "500ms", "-q", "-o"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        file
    };
    // Interleaved, so that no drift of the machine is taken for the change.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for i in 0..5 {
        a.push(run(&format!("a{i}"), "0"));
        b.push(run(&format!("b{i}"), "20"));
    }
    let out = pelt()
        .arg("compare")
        .args(&a)
        .arg("--vs")
        .args(&b)
        .args([
            "--format",
            "json",
            "--fail-on",
            "material",
            "--allow-mismatch",
        ])
        .output()
        .unwrap();
    // The item step's material regression fails the gate.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    pelt_testkit::schema::compare(&doc);
    let rows = &doc["metrics"];
    let item = &metric_row(rows, "browse/item p50")["comparison"];
    assert_eq!(item["verdict"]["kind"], "regression", "{doc:#}");
    assert_eq!(item["verdict"]["material"], true, "{doc:#}");
    // Every step has its rows (the list's may move too: after a 20 ms
    // idle wait the machine's caches and clocks are colder).
    for name in [
        "browse/list p50",
        "browse/list p99",
        "browse/item p99",
        "browse/item failed",
    ] {
        assert!(metric_row(rows, name)["comparison"].is_object(), "{name}");
    }
    // The text table has the same rows.
    let out = pelt()
        .arg("compare")
        .args(&a)
        .arg("--vs")
        .args(&b)
        .arg("--allow-mismatch")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("browse/item p50"), "{text}");
    assert!(text.contains("browse/item failed"), "{text}");
}

/// A TOML scenario as JSON (what schema/scenario.schema.json describes).
fn as_json(toml_text: &str, what: &str) -> serde_json::Value {
    let v: toml::Value = toml::from_str(toml_text).unwrap_or_else(|e| panic!("{what}: {e}"));
    serde_json::to_value(v).unwrap()
}

/// The ```toml blocks of a Markdown file that are scenarios (they have
/// flows; the experiment plans among them do not).
fn toml_blocks(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    for line in markdown.lines() {
        match (&mut block, line.trim_start()) {
            (None, "```toml") => block = Some(String::new()),
            (Some(b), "```") => {
                if b.contains("[[flow]]") {
                    out.push(std::mem::take(b));
                }
                block = None;
            }
            (Some(b), _) => {
                b.push_str(line);
                b.push('\n');
            }
            (None, _) => {}
        }
    }
    out
}

#[test]
fn every_scenario_in_the_repo_matches_the_schema_and_bad_ones_do_not() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut scenarios: Vec<(String, String)> = Vec::new();
    for file in [
        "bench/scenario/journey.toml",
        "fuzz/seeds/scenario/journey.toml",
    ] {
        scenarios.push((
            file.into(),
            std::fs::read_to_string(root.join(file)).unwrap(),
        ));
    }
    for doc in ["docs/SCENARIOS.md", "README.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        for (i, block) in toml_blocks(&text).into_iter().enumerate() {
            scenarios.push((format!("{doc} block {}", i + 1), block));
        }
    }
    assert!(
        scenarios.len() >= 4,
        "the docs' scenarios were found: {}",
        scenarios.len()
    );
    // The tests' own, and what `pelt import` writes.
    scenarios.push(("JOURNEY".into(), JOURNEY.into()));
    scenarios.push((
        "journey_with_delay".into(),
        journey_with_delay("http://127.0.0.1:1", 5),
    ));
    let out = pelt().args(["import", "har"]).arg(har()).output().unwrap();
    assert!(out.status.success());
    scenarios.push((
        "pelt import har".into(),
        String::from_utf8(out.stdout).unwrap(),
    ));
    for (what, text) in &scenarios {
        if let Err(e) = pelt_testkit::schema::check(&as_json(text, what), "scenario.schema.json") {
            panic!("{what} does not match schema/scenario.schema.json: {e}\n{text}");
        }
    }
    // Each mistake a shape can show is refused.
    let good =
        "base = \"http://127.0.0.1:1\"\n[[flow]]\nname = \"f\"\n[[flow.step]]\nurl = \"/\"\n";
    pelt_testkit::schema::scenario(&as_json(good, "good"));
    for (bad, why) in [
        (
            good.replace("url = \"/\"", "url = \"/\"\ntimeout = \"1s\""),
            "an unknown key",
        ),
        (
            good.replace("url = \"/\"", "method = \"GET\""),
            "a step without url",
        ),
        (
            good.replace(
                "url = \"/\"",
                "url = \"/\"\nextract = { x = { json = \"/a\", regex = \"b\" } }",
            ),
            "two sources for one variable",
        ),
        (
            format!("[[feed]]\nname = \"u\"\nfile = \"u.csv\"\npick = \"sometimes\"\n{good}"),
            "an unknown pick",
        ),
        (
            good.replace("url = \"/\"", "url = \"/\"\ncheck = { status = \"200\" }"),
            "a status that is not a list",
        ),
        (
            good.replace("[[flow]]\nname = \"f\"\n[[flow.step]]\nurl = \"/\"\n", ""),
            "no flow",
        ),
        (
            good.replace("url = \"/\"", "flow = \"g\"\nurl = \"/\""),
            "an include with a url of its own",
        ),
    ] {
        assert!(
            pelt_testkit::schema::check(&as_json(&bad, why), "scenario.schema.json").is_err(),
            "{why} passed:\n{bad}"
        );
    }
}

#[test]
fn the_history_keeps_a_scenario_runs_steps_and_shows_them() {
    let app = FlaskApp::start();
    let (dir, path) = files(&app, JOURNEY, 10);
    let db = dir.path().join("h.db");
    let history = |args: &[&str]| {
        pelt()
            .env("PELT_DATA_DIR", dir.path())
            .env("PELT_HISTORY", &db)
            .env_remove("PELT_NO_HISTORY")
            .args(args)
            .output()
            .unwrap()
    };
    let out = history(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "-c",
        "2",
        "-t",
        "1",
        "-d",
        "1s",
        "-q",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut store = pelt_store::open(db.to_str().unwrap()).unwrap();
    let rows = store.list(&pelt_store::Filter::default()).unwrap();
    assert_eq!(rows.len(), 1);
    let id = rows[0].id;
    let steps = store.get(id).unwrap().unwrap().steps;
    let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "once/login page",
            "once/login",
            "browse/list",
            "browse/item",
            "browse/note"
        ]
    );
    let list = &steps[2];
    assert!(list.requests > 0 && list.failed == 0, "{list:?}");
    assert!(
        list.p50_ns.is_some() && list.p99_ns >= list.p50_ns,
        "{list:?}"
    );
    // Shown from the results file, with the report's Steps table ...
    let out = history(&["history", "show", &id.to_string(), "--format", "text"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("Steps"), "{text}");
    // ... and, with the results file gone, from what the history kept.
    drop(store);
    let mut db_raw = pelt_store::sqlite::Sqlite::open(&db).unwrap();
    use pelt_store::Backend;
    db_raw
        .execute("DELETE FROM pelt_results WHERE run_id = ?1", &[id.into()])
        .unwrap();
    drop(db_raw);
    let out = history(&["history", "show", &id.to_string(), "--format", "text"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("steps as recorded"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.ends_with("browse/list") && l.contains(&list.requests.to_string())),
        "{text}"
    );
}

// ---- Over HTTP/2 and HTTP/3 ----

/// A three-step flow for nginx: `/start` answers JSON with an id and a
/// header with a token (and the connection's first response sets a `sid`
/// cookie), `/item/ID` echoes its path, and the POST to `/end` fails its
/// check (its body never says "nope").
const MUX_JOURNEY: &str = r#"
base = "{base}"

[[flow]]
name = "journey"
[[flow.step]]
name = "start"
url = "/start?vu={{vu}}"
extract = { id = { json = "id" }, next = { header = "X-Next" } }
check = { status = [200], json = { "/ok" = true } }
[[flow.step]]
name = "item"
url = "/item/{{id}}?next={{next}}"
check = { body_contains = "item /item/17" }
[[flow.step]]
name = "end"
method = "POST"
url = "/end"
headers = { "Content-Type" = "application/x-www-form-urlencoded" }
body = "id={{id}}"
check = { body_contains = "nope" }
"#;

const MUX_LOCATIONS: &str = r#"
        location = /start {
            default_type application/json;
            add_header X-Next "n42";
            add_header Set-Cookie $first_sid;
            return 200 '{"id": 17, "ok": true}';
        }
        location /item/ {
            default_type text/plain;
            return 200 "item $uri\n";
        }
        location = /end {
            default_type text/plain;
            return 200 "end\n";
        }
"#;

/// Writes `text` (with `{base}` replaced) as a scenario in a temp folder.
fn scenario_file(text: &str, base: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journey.toml");
    std::fs::write(&path, text.replace("{base}", base)).unwrap();
    (dir, path)
}

#[test]
fn a_scenario_over_http2_extracts_checks_and_keeps_a_connection_per_user() {
    use pelt_testkit::nginx::{self_signed_cert, Nginx};
    let tls = self_signed_cert();
    for with_tls in [false, true] {
        let nginx = Nginx::start_h2(MUX_LOCATIONS, with_tls.then_some(&tls));
        let scheme = if with_tls { "https" } else { "http" };
        let base = format!("{scheme}://127.0.0.1:{}", nginx.port());
        let (_dir, path) = scenario_file(MUX_JOURNEY, &base);
        let report = run_json(&[
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "--http2",
            "--insecure",
            "-c",
            "3",
            "-t",
            "1",
            "-n",
            "12",
            // Every flow fails its last check, on purpose.
            "--assert",
            "failed <= 100%",
        ]);
        pelt_testkit::schema::run(&report);
        assert_eq!(report["config"]["http"]["http2"], true);
        // Twelve flows: every step sent twelve times, the first two
        // clean, the last failing its check each time.
        for (name, ok, check) in [("start", 12, 0), ("item", 12, 0), ("end", 0, 12)] {
            let s = step(&report, name);
            assert_eq!(s["requests"], 12, "{scheme} {name}: {s}");
            assert_eq!(s["successes"], ok, "{scheme} {name}: {s}");
            assert_eq!(s["failed"], 12 - ok, "{scheme} {name}: {s}");
            assert_eq!(
                s["failures"]["check"].as_u64().unwrap_or(0),
                check,
                "{scheme} {name}: {s}"
            );
            assert_eq!(s["skipped"], 0, "{scheme} {name}: {s}");
        }
        let flow = &report["scenario"]["flows"][0];
        assert_eq!(flow["failures"]["check"], 12, "{flow}");
        // nginx saw each step twelve times, over HTTP/2, the extracted id
        // and token in the second step's URL.
        let lines = nginx.access_log_lines(Some(36));
        assert_eq!(lines.len(), 36, "{lines:?}");
        assert!(lines.iter().all(|l| l.ends_with("HTTP/2.0")), "{lines:?}");
        let count = |prefix: &str| lines.iter().filter(|l| l.starts_with(prefix)).count();
        assert_eq!(count("GET /start?vu="), 12, "{lines:?}");
        assert_eq!(count("GET /item/17?next=n42 200"), 12, "{lines:?}");
        assert_eq!(count("POST /end 200"), 12, "{lines:?}");
        // A connection per user (three), each carrying one user's
        // requests, with the cookie its own first response set.
        let session = nginx.session_log_lines(36);
        let mut by_conn: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
        for line in &session {
            let f: Vec<String> = line.split(' ').map(str::to_owned).collect();
            by_conn.entry(f[0].clone()).or_default().push(f);
        }
        assert_eq!(by_conn.len(), 3, "{session:?}");
        for (conn, reqs) in &by_conn {
            let vus: BTreeSet<&str> = reqs
                .iter()
                .filter_map(|f| f[2].strip_prefix("/start?vu="))
                .collect();
            assert_eq!(vus.len(), 1, "connection {conn} carried one user: {reqs:?}");
            for f in &reqs[1..] {
                assert_eq!(
                    f[3],
                    format!("c{conn}"),
                    "{scheme}: the jar's cookie: {reqs:?}"
                );
            }
        }
    }
}

/// A three-step flow for `pelt serve --http3`: its `location=` query
/// puts a value in a header, which the next step's URL carries as its
/// status (a 201 only if the value got there); the last step's check
/// fails.
const H3_JOURNEY: &str = r#"
base = "{base}"

[[flow]]
name = "journey"
[[flow.step]]
name = "first"
url = "/a?location=201"
extract = { code = { header = "Location" } }
[[flow.step]]
name = "second"
url = "/b?status={{code}}"
check = { status = [201] }
[[flow.step]]
name = "third"
url = "/c?size=100"
check = { body_contains = "nope" }
"#;

#[test]
fn a_scenario_over_http3_carries_an_extract_and_counts_a_failed_check() {
    let server = pelt_testkit::pelt::server_h3(pelt_target::ServeConfig::default());
    let base = format!("https://127.0.0.1:{}", server.local_addr().port());
    let (_dir, path) = scenario_file(H3_JOURNEY, &base);
    let report = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "--http3",
        "--insecure",
        "-c",
        "4",
        "-t",
        "2",
        "-n",
        "20",
        // Every flow fails its third step, on purpose.
        "--assert",
        "failed <= 100%",
    ]);
    pelt_testkit::schema::run(&report);
    assert_eq!(report["config"]["http"]["http3"], true);
    for (name, ok, check) in [("first", 20, 0), ("second", 20, 0), ("third", 0, 20)] {
        let s = step(&report, name);
        assert_eq!(s["requests"], 20, "{name}: {s}");
        assert_eq!(s["successes"], ok, "{name}: {s}");
        assert_eq!(
            s["failures"]["check"].as_u64().unwrap_or(0),
            check,
            "{name}: {s}"
        );
        assert_eq!(s["skipped"], 0, "{name}: {s}");
    }
    assert_eq!(
        report["status_codes"]["201"], 20,
        "{}",
        report["status_codes"]
    );
    // The whole run counts steps: 60 requests, the server got 60.
    assert_eq!(report["requests"]["total"], 60);
    assert_eq!(server.requests(), 60);
    // A QUIC connection per user.
    assert_eq!(
        report["connections"]["opened"], 4,
        "{}",
        report["connections"]
    );
    // The third step read its 100-byte body (the check ran on it).
    assert_eq!(report["bytes"]["body_in"], 20 * 2 * 2 + 20 * 100);
    let examples = report["error_examples"].to_string();
    assert!(examples.contains("nope"), "{examples}");
}

#[test]
fn a_scenario_over_http3_in_rate_mode_starts_exactly_the_flows_asked_for() {
    let server = pelt_testkit::pelt::server_h3(pelt_target::ServeConfig::default());
    let base = format!("https://127.0.0.1:{}", server.local_addr().port());
    let two_steps = H3_JOURNEY
        .split("[[flow.step]]\nname = \"third\"")
        .next()
        .unwrap();
    let (_dir, path) = scenario_file(two_steps, &base);
    let started = std::time::Instant::now();
    let report = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "--http3",
        "--insecure",
        "--rate",
        "50",
        "-n",
        "40",
        "-c",
        "5",
        "-t",
        "1",
    ]);
    assert_eq!(report["mode"], "rate");
    let flow = &report["scenario"]["flows"][0];
    assert_eq!(flow["started"], 40, "{flow}");
    assert_eq!(flow["completed"], 40, "{flow}");
    assert_eq!(step(&report, "first")["requests"], 40);
    assert_eq!(step(&report, "second")["successes"], 40);
    assert_eq!(server.requests(), 80);
    // Forty flows at 50 a second: 0.78 s of schedule, not all at once.
    assert!(started.elapsed() >= std::time::Duration::from_millis(780));
    assert_eq!(report["latency"]["send_lag"]["count"], 80);
}

#[test]
fn a_scenario_over_http3_reaches_caddy_step_by_step_with_the_users_cookie() {
    use pelt_testkit::caddy::Caddy;
    use pelt_testkit::nginx::self_signed_cert;
    let tls = self_signed_cert();
    let caddy = Caddy::start(&tls);
    let scenario = r#"
base = "{base}"

[[once]]
name = "login"
url = "/login"
extract = { s = { cookie = "session" } }

[[flow]]
name = "browse"
[[flow.step]]
name = "page"
url = "/ok?s={{s}}"
check = { body_contains = "ok" }
[[flow.step]]
name = "big"
url = "/big"
check = { body_contains = "xxxxxxxxxx" }
[[flow.step]]
name = "down"
url = "/status/503"
"#;
    let (_dir, path) = scenario_file(scenario, &caddy.url(""));
    let report = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "--http3",
        "--insecure",
        "-c",
        "2",
        "-t",
        "1",
        "-n",
        "10",
        // Every flow ends on a 503, on purpose.
        "--assert",
        "failed <= 100%",
    ]);
    assert_eq!(step(&report, "login")["requests"], 2);
    assert_eq!(step(&report, "page")["successes"], 10);
    assert_eq!(step(&report, "big")["successes"], 10);
    let down = step(&report, "down");
    assert_eq!(down["requests"], 10, "{down}");
    assert_eq!(down["failed"], 10, "{down}");
    // Caddy's log: each path exactly as often, all over HTTP/3, and the
    // login's cookie on every later request of its user.
    let lines = caddy.log_lines();
    let count = |line: &str| lines.iter().filter(|l| *l == line).count();
    assert_eq!(lines.len(), 32, "{lines:?}");
    assert_eq!(count("GET /login 200 HTTP/3.0"), 2, "{lines:?}");
    assert_eq!(count("GET /ok?s=abc 200 HTTP/3.0"), 10, "{lines:?}");
    assert_eq!(count("GET /big 200 HTTP/3.0"), 10, "{lines:?}");
    assert_eq!(count("GET /status/503 503 HTTP/3.0"), 10, "{lines:?}");
    let cookies = caddy.cookies();
    assert_eq!(
        cookies.iter().filter(|c| *c == "session=abc").count(),
        30,
        "{cookies:?}"
    );
}

#[test]
fn streams_with_a_scenario_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(
        &path,
        "base = \"https://127.0.0.1:1\"\n[[flow]]\nname = \"f\"\n[[flow.step]]\nurl = \"/\"\n",
    )
    .unwrap();
    let out = pelt()
        .args([
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "--http3",
            "--streams",
            "4",
        ])
        .output()
        .unwrap();
    let msg = bad_input(&out, "--streams with --scenario");
    assert!(msg.contains("--streams") && msg.contains("-c"), "{msg}");
}

#[test]
fn a_scenario_over_http3_with_0rtt_resumes_each_steps_connection() {
    // --no-keepalive: a QUIC connection per step, as a plain run's per
    // request; the user's first has no ticket, each later one resumes
    // with its step's request as 0-RTT data (pelt serve accepts it).
    let server = pelt_testkit::pelt::server_h3(pelt_target::ServeConfig::default());
    let base = format!("https://127.0.0.1:{}", server.local_addr().port());
    let (_dir, path) = scenario_file(H3_JOURNEY, &base);
    let report = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "--http3",
        "--insecure",
        "--0rtt",
        "--no-keepalive",
        "-c",
        "1",
        "-t",
        "1",
        "-n",
        "4",
        // Every flow fails its third step, on purpose.
        "--assert",
        "failed <= 100%",
    ]);
    // The extract still carries the value into the next step's URL.
    assert_eq!(step(&report, "second")["successes"], 4);
    assert_eq!(step(&report, "third")["failures"]["check"], 4);
    assert_eq!(server.requests(), 12);
    let c = &report["connections"];
    assert_eq!(c["opened"], 12, "{c}");
    assert_eq!(c["reused_requests"], 0, "{c}");
    let h = &c["handshakes"];
    let counts = ["full", "zero_rtt_accepted", "zero_rtt_rejected"]
        .map(|k| h[k]["count"].as_u64().unwrap_or(u64::MAX));
    assert_eq!(counts, [1, 11, 0], "{c}");
}

#[test]
fn a_scenarios_step_and_flow_counts_are_the_same_over_http1_and_http3() {
    // pelt serve answers HTTP/1.1 on TCP and HTTP/3 on UDP at one port:
    // the same scenario over each gives the same tables, in JSON and in
    // text, but for the times.
    let server = pelt_testkit::pelt::server_h3(pelt_target::ServeConfig::default());
    let port = server.local_addr().port();
    let counts = |scheme: &str, extra: &[&str]| {
        let (_dir, path) = scenario_file(H3_JOURNEY, &format!("{scheme}://127.0.0.1:{port}"));
        let mut args = vec!["run", "--scenario", path.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-c", "3", "-t", "1", "-n", "15"]);
        // Every flow fails its third step, on purpose.
        args.extend_from_slice(&["--assert", "failed <= 100%"]);
        let mut report = run_json(&args);
        let mut tables = report["scenario"].take();
        for table in ["steps", "flows"] {
            for row in tables[table].as_array_mut().unwrap() {
                let row = row.as_object_mut().unwrap();
                row.remove("response_time");
                row.remove("duration");
            }
        }
        tables.as_object_mut().unwrap().remove("file");
        let out = pelt()
            .args(&args)
            .args(["--format", "text", "--no-save"])
            .output()
            .unwrap();
        let text = pelt_testkit::pelt::ok_stdout(&out);
        // The Steps table's rows: the counts and the name with its
        // failures, without the percentile columns.
        let rows: Vec<String> = text
            .lines()
            .skip_while(|l| !l.starts_with("Steps"))
            .skip(1)
            .take(3)
            .map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                format!("{} {}", w[..4].join(" "), w[7..].join(" "))
            })
            .collect();
        (tables, rows)
    };
    let (h1, h1_text) = counts("http", &[]);
    let (h3, h3_text) = counts("https", &["--http3", "--insecure"]);
    assert_eq!(h1, h3, "JSON tables");
    assert_eq!(h1_text, h3_text, "text Steps table");
    assert_eq!(
        h1_text[2], "15 0 15 0 journey/third (check 15)",
        "{h1_text:?}"
    );
}

/// nginx for the keep-alive race: `/second` on a connection that already
/// carried a request is closed without an answer (`return 444`), as a
/// keep-alive timeout firing as the request arrives closes it, every
/// time, so the race a server's idle timeout makes now and then is met
/// on each flow. On a fresh connection it answers.
const CLOSES_REUSED: &str = r#"
        location = /first {
            default_type text/plain;
            return 200 "first\n";
        }
        location = /second {
            if ($connection_requests != 1) {
                return 444;
            }
            default_type text/plain;
            return 200 "second\n";
        }
"#;

/// Two steps on one kept-alive connection: the second meets the close.
const RACE_JOURNEY: &str = r#"
base = "{base}"

[[flow]]
name = "race"
[[flow.step]]
name = "first"
url = "/first"
[[flow.step]]
name = "second"
method = "{method}"
url = "/second"
check = { body_contains = "second" }
"#;

/// Runs `flows` flows of [`RACE_JOURNEY`] with `method` for its second
/// step against nginx closing reused connections; returns the report and
/// nginx's access log (`expected` lines).
fn race(method: &str, flows: usize, expected: usize) -> (serde_json::Value, Vec<String>) {
    use pelt_testkit::nginx::Nginx;
    let nginx = Nginx::start(CLOSES_REUSED);
    let base = format!("http://127.0.0.1:{}", nginx.port());
    let (_dir, path) = scenario_file(&RACE_JOURNEY.replace("{method}", method), &base);
    let report = run_json(&[
        "run",
        "--scenario",
        path.to_str().unwrap(),
        "-c",
        "1",
        "-t",
        "1",
        "-n",
        &flows.to_string(),
        // The POST race fails every flow, on purpose.
        "--assert",
        "failed <= 100%",
    ]);
    pelt_testkit::schema::run(&report);
    (report, nginx.access_log_lines(Some(expected)))
}

// Issue 36: scenario steps went around the HTTP/1.1 transport and missed
// its retry: a step whose reused connection the server closed unanswered
// failed as `closed`, and its flow with it. Now a step is sent as a
// target is: once more, on a fresh connection, counted.
#[test]
fn a_step_on_a_kept_alive_connection_the_server_closed_is_sent_again_and_its_flow_completes() {
    let (report, lines) = race("GET", 5, 15);
    // The witness: per flow, the first step answered, the second closed
    // unanswered on the reused connection, then answered on a fresh one.
    assert_eq!(lines.len(), 15, "{lines:?}");
    let count = |prefix: &str| lines.iter().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(count("GET /first 200 "), 5, "{lines:?}");
    assert_eq!(count("GET /second 444 "), 5, "{lines:?}");
    assert_eq!(count("GET /second 200 "), 5, "{lines:?}");
    for name in ["first", "second"] {
        let s = step(&report, name);
        assert_eq!(s["requests"], 5, "{s}");
        assert_eq!(s["successes"], 5, "{s}");
        assert_eq!(s["failed"], 0, "{s}");
    }
    let flow = &report["scenario"]["flows"][0];
    assert_eq!(flow["started"], 5, "{flow}");
    assert_eq!(flow["completed"], 5, "{flow}");
    assert_eq!(report["connections"]["retried_after_close"], 5);
}

// The same race with a method that is not idempotent: the step is not
// sent again (the server may have acted on it), its flow fails as
// `closed`, and the loss is counted and warned about, as for a target.
#[test]
fn a_post_step_lost_on_a_kept_alive_connection_is_not_sent_again() {
    let (report, lines) = race("POST", 4, 8);
    assert_eq!(lines.len(), 8, "{lines:?}");
    let count = |prefix: &str| lines.iter().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(count("GET /first 200 "), 4, "{lines:?}");
    assert_eq!(count("POST /second 444 "), 4, "{lines:?}");
    let s = step(&report, "second");
    assert_eq!(s["requests"], 4, "{s}");
    assert_eq!(s["failed"], 4, "{s}");
    assert_eq!(s["failures"]["closed"], 4, "{s}");
    let flow = &report["scenario"]["flows"][0];
    assert_eq!(flow["started"], 4, "{flow}");
    assert_eq!(flow["failed"], 4, "{flow}");
    assert_eq!(report["connections"]["retried_after_close"], 0);
    let warning = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "keep_alive_race")
        .unwrap_or_else(|| panic!("{}", report["warnings"]));
    assert_eq!(warning["lost"], 4, "{warning}");
}
