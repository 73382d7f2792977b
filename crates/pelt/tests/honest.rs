//! Regression tests for issue 17: what pelt says when the server or the
//! client cannot keep up, or nothing answers, must be true. Each test is
//! the reproduction from a new user's trial, with the server's own count
//! (the built-in server's, or nginx's access log) as the witness.

use pelt_testkit::nginx::Nginx;
use pelt_testkit::pelt::{count, exclusive, isolate, json, number, ok, ok_json, pelt, server};

/// Runs `cmd`, which must succeed, and reads its stdout as one JSON
/// document.
fn json_run(cmd: &mut assert_cmd::Command) -> serde_json::Value {
    ok_json(&cmd.output().unwrap())
}

/// `--rate 1000 -c 10` against 30 ms responses: the pool serves about
/// 330/s. The report used to print "3,000 in 3.00s (1,000 req/s of 1,000
/// req/s offered)" and the HTML "rate (sent) 1,000/s", while the server
/// received about half of them, and no shortfall warning appeared.
#[test]
fn planned_is_not_printed_as_sent_when_the_pool_cannot_keep_up() {
    let _machine = exclusive();
    let srv = server(None);
    let url = format!("http://{}/?delay=30ms", srv.local_addr());
    let r = json_run(
        pelt()
            .args([&url, "--rate", "1000", "-c", "10", "-d", "3s"])
            .args(["--format", "json", "--no-save"]),
    );
    let req = &r["requests"];
    let (planned, sent, completed) = (
        count(&req["planned"]),
        count(&req["sent"]),
        count(&req["completed"]),
    );
    assert_eq!(planned, 3000, "the schedule's 3 s at 1,000/s");
    // The witness: every request pelt says it sent reached the server (the
    // few in flight at the end were fully received too: the server reads
    // the whole request before its delay).
    assert_eq!(sent, srv.requests(), "sent = what the server received");
    assert!(
        sent < 2000,
        "10 connections at 30 ms cannot send 3,000: {sent}"
    );
    assert!(completed <= sent && completed + 10 >= sent);
    let sent_rate = number(&req["sent_rate"]);
    assert!(
        sent_rate < 700.0,
        "the rate actually sent is reported, not the plan's: {sent_rate}"
    );
    // The run went on after its 3 s (late sends, then the wait for the
    // last responses), and says so.
    assert!(number(&r["sending_s"]) > 3.5);
    let kinds: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"rate_shortfall"), "warnings: {kinds:?}");

    // The text report of the same run, from its saved results file.
    let text = pelt()
        .args([&url, "--rate", "1000", "-c", "10", "-d", "2s", "--no-save"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    let requests = text.lines().find(|l| l.starts_with("Requests")).unwrap();
    assert!(
        requests.contains("2,000 planned")
            && requests.contains(" sent (")
            && requests.contains("completed"),
        "{requests}"
    );
    assert!(
        !requests.contains("(1,000 req/s of"),
        "the rate sent is not the rate offered: {requests}"
    );
    assert!(text.contains("Overrun      the run took"), "{text}");
    assert!(text.contains("warning: sent "), "{text}");
}

/// `--assert 'errors < 5'` read 5 as a fraction (500 %): a gate that
/// could never fail. A share now needs its % sign; `errors == 0` works.
#[test]
fn an_error_share_without_its_unit_is_refused_before_any_load() {
    let srv = server(None);
    let url = format!("http://{}/", srv.local_addr());
    let out = pelt()
        .args([&url, "-n", "10", "--no-save", "--assert", "errors < 5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("'failed < 5%'"), "{err}");
    assert_eq!(srv.requests(), 0, "refused before any load");
    let ok = pelt()
        .args([&url, "-n", "10", "--no-save", "--assert", "errors == 0"])
        .output()
        .unwrap();
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

/// The trial's CI script: asserts in a shell loop under `set -e`. Against
/// a server that fails every request, the script must fail.
#[test]
fn a_ci_gate_fails_against_a_failing_server() {
    let srv = server(None);
    let pelt_bin = pelt_testkit::pelt::bin();
    let script = format!(
        "set -e\n\
         for path in '/?status=500' '/'; do\n\
           '{}' run \"http://{}$path\" -n 20 -c 2 --no-save --assert 'errors < 5%' --assert 'p99 < 1s' >/dev/null\n\
         done\n\
         echo passed",
        pelt_bin.display(),
        srv.local_addr()
    );
    let out = isolate(&mut std::process::Command::new("bash"))
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "the first run's assert fails the script"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("FAILED: errors < 5% (was 100.000%)"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("passed"));
}

/// Nothing listening: 20 connect errors, a table of 0.00ns and exit 0.
/// Now exit 3, one line saying what happened, and no zero latencies.
#[test]
fn a_run_with_no_response_at_all_exits_3_and_says_why() {
    let out = pelt()
        .args(["http://127.0.0.1:1/", "-n", "20", "--no-save"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nothing listens on 127.0.0.1:1: is the server up?"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no responses"), "{text}");
    assert!(!text.contains("0.00ns"), "{text}");
    let md = pelt()
        .args([
            "http://127.0.0.1:1/",
            "-n",
            "5",
            "--no-save",
            "--format",
            "markdown",
        ])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains("| p99 | no responses |") && !md.contains("0.00ns"),
        "{md}"
    );

    // https:// to a plain-HTTP port says so.
    let srv = server(None);
    let out = pelt()
        .args([
            &format!("https://{}/", srv.local_addr()),
            "-n",
            "3",
            "--no-save",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("speaks plain HTTP: use http://"), "{err}");
}

/// A dynamic page of varying length: 594 of 600 counted as `length`
/// failures, so an `errors < 1%` gate failed a healthy server, and the
/// warning said the latency figures describe "the rest" though every
/// response was timed. `-l` turns ab's check off, as in ab.
#[test]
fn variable_length_pages_can_be_accepted_with_l() {
    let srv = server(None);
    let url = format!("http://{}/?size=100&size_max=200", srv.local_addr());
    let run = |extra: &[&str]| {
        let out = pelt()
            .args([&url, "-n", "600", "-c", "4", "--no-save"])
            .args(extra)
            .args(["--assert", "errors < 1%"])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, text, _) = run(&[]);
    assert_eq!(code, Some(1), "ab's check on: the gate fails");
    let warning = text
        .lines()
        .find(|l| l.starts_with("warning:") && l.contains("failed"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(warning.contains("turn the check off with -l"), "{warning}");
    assert!(
        warning.contains("latency figures include them"),
        "{warning}"
    );
    assert!(!warning.contains("describe the rest"), "{warning}");
    let (code, text, err) = run(&["-l"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(text.contains("600 ok (100.00%)"), "{text}");
}

/// A siege urls file with a POST line, and `-H 'Content-Type:
/// application/json'`: the POST went out as
/// `application/x-www-form-urlencoded` (siege's default won) and the GET,
/// which has no body, carried `application/json`. nginx logs what came.
#[test]
fn a_command_line_content_type_goes_on_bodies_and_beats_siege_s_default() {
    let nginx = Nginx::start("");
    let dir = tempfile::tempdir().unwrap();
    let urls = dir.path().join("urls.txt");
    std::fs::write(
        &urls,
        format!(
            "{} POST {{\"a\":1}}\n{}\n",
            nginx.url("/ok?post"),
            nginx.url("/ok?get")
        ),
    )
    .unwrap();
    let out = pelt()
        .args(["run", "-f"])
        .arg(&urls)
        .args(["-n", "10", "-c", "1", "--no-save"])
        .args(["-H", "Content-Type: application/json"])
        .output()
        .unwrap();
    ok(&out);
    nginx.access_log_lines(Some(10));
    let log = std::fs::read_to_string(nginx.prefix().join("logs/headers.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 10, "{log}");
    assert_eq!(
        lines
            .iter()
            .filter(|l| **l == "POST /ok?post application/json")
            .count(),
        5,
        "{log}"
    );
    assert_eq!(
        lines.iter().filter(|l| **l == "GET /ok?get -").count(),
        5,
        "no Content-Type on a request without a body: {log}"
    );
}

/// vegeta's `echo "GET URL" | vegeta attack`: `-f -` reads standard input,
/// its format detected as for files.
#[test]
fn targets_are_read_from_standard_input_with_f_dash() {
    let srv = server(None);
    let input = format!("GET http://{0}/a\n\nGET http://{0}/b\n", srv.local_addr());
    let out = pelt()
        .args([
            "run",
            "-f",
            "-",
            "-n",
            "8",
            "-c",
            "1",
            "--format",
            "json",
            "--no-save",
        ])
        .write_stdin(input)
        .output()
        .unwrap();
    let r = ok_json(&out);
    assert_eq!(r["targets"].as_array().unwrap().len(), 2);
    assert_eq!(count(&r["requests"]["successes"]), 8);
    assert_eq!(srv.requests(), 8);
    // Empty input: the file's usual error, naming standard input.
    let out = pelt()
        .args(["run", "-f", "-", "-n", "1", "--no-save"])
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("standard input") && err.contains("no targets found"),
        "{err}"
    );
}

/// Two rate runs that each sent exactly what was offered: compare called
/// `throughput 499.9/s 499.5/s -0.1% ... REGRESSION`, a figure the plan
/// fixed, so `--fail-on regression` could fail a CI job over nothing.
/// Rate runs now compare the share of the schedule sent instead.
#[test]
fn rate_runs_are_not_judged_on_a_throughput_the_plan_fixed() {
    let _machine = exclusive();
    let srv = server(None);
    let url = format!("http://{}/", srv.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    for name in ["a.pelt", "b.pelt"] {
        let out = pelt()
            .args([
                &url,
                "--rate",
                "500",
                "-d",
                "1s",
                "--no-save",
                "-o",
                &file(name),
            ])
            .output()
            .unwrap();
        ok(&out);
    }
    let out = pelt()
        .args(["compare", &file("a.pelt"), &file("b.pelt")])
        .args(["--format", "json", "--fail-on", "regression"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = json(&out);
    let metric = |name: &str| {
        r["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"]["name"] == name)
            .unwrap_or_else(|| panic!("no {name} row: {r:#}"))
            .clone()
    };
    let throughput = metric("throughput");
    assert!(throughput["comparison"].is_null(), "{throughput:#}");
    assert!(
        throughput["error"]
            .as_str()
            .unwrap()
            .contains("fixed by the schedule"),
        "{throughput:#}"
    );
    let sent = metric("sent");
    assert_eq!(sent["comparison"]["a"], 1.0, "{sent:#}");
    assert_eq!(sent["comparison"]["b"], 1.0, "{sent:#}");
    assert_eq!(sent["comparison"]["verdict"]["kind"], "no_verdict");
}

/// Per-second rows follow wall-clock seconds, so the first and last are
/// partial: a constant 500/s run's chart climbed 100 -> 500 -> 390, the
/// text had a row `0.0-0.0  22`, the CSV an `offset_s` of -0.534. Rows now
/// say which part of the run they cover, never before 0, and their rate is
/// over that part.
#[test]
fn partial_seconds_are_rates_over_the_part_covered() {
    let _machine = exclusive();
    let srv = server(None);
    let url = format!("http://{}/", srv.local_addr());
    let out = pelt()
        .args([
            &url,
            "--rate",
            "500",
            "-d",
            "3s",
            "--no-save",
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    ok(&out);
    let csv = String::from_utf8(out.stdout).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (from, to, requests, rate) = (col("from_s"), col("to_s"), col("requests"), col("rate"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.len() >= 3, "{csv}");
    let mut total = 0;
    for row in &rows {
        let (a, b): (f64, f64) = (row[from].parse().unwrap(), row[to].parse().unwrap());
        assert!(a >= 0.0 && b >= a, "never before the start: {csv}");
        total += row[requests].parse::<u64>().unwrap();
        if b - a >= 0.1 {
            let r: f64 = row[rate].parse().unwrap();
            // A partial second is no dip: its rate is the run's.
            assert!((400.0..=600.0).contains(&r), "rate {r} in {csv}");
        } else {
            assert_eq!(row[rate], "", "no rate over a sliver: {csv}");
        }
    }
    assert_eq!(total, 1500);
}

/// Coming from siege and ab: `-d 10S` is siege's spelling of 10 seconds,
/// and ab's `-t 3` (a time limit) must not silently mean 3 threads here.
#[test]
fn siege_durations_are_accepted_and_ab_s_t_is_explained() {
    let srv = server(None);
    let url = format!("http://{}/", srv.local_addr());
    let r = json_run(pelt().args([&url, "-d", "1S", "-c", "1", "--no-save", "--format", "json"]));
    assert_eq!(number(&r["duration_s"]), 1.0);

    let out = pelt()
        // No -d and no -n: a -c schedule sets the run's length.
        .args([&url, "-t", "1", "-c", "1s:1", "--no-save"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("not a time limit") && err.contains("use -d 1s"),
        "{err}"
    );

    let out = pelt().args([&url, "-t", "10S"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("use -d 10S"), "{err}");
}

/// `--log-requests FILE`: one line per measured request, streamed, as
/// vegeta's results and hey's `-o csv` give. Every planned request is in
/// it (those never sent too, as unfinished), and the lines with a send
/// time are exactly what the server received.
#[test]
fn every_request_is_logged_once_with_its_times() {
    let _machine = exclusive();
    let srv = server(None);
    let url = format!("http://{}/?delay=30ms", srv.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests.csv");
    let r = json_run(
        pelt()
            .args([&url, "--rate", "600", "-c", "10", "-d", "1s", "--no-save"])
            .args(["--format", "json", "--log-requests"])
            .arg(&log),
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "intended_unix_ns");
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len() as u64, count(&r["requests"]["planned"]));
    let sent = rows
        .iter()
        .filter(|r| !r[col("sent_unix_ns")].is_empty())
        .count() as u64;
    assert_eq!(sent, count(&r["requests"]["sent"]));
    assert_eq!(sent, srv.requests(), "the server's count is the witness");
    let unfinished = rows
        .iter()
        .filter(|r| r[col("error")] == "unfinished")
        .count() as u64;
    assert_eq!(unfinished, count(&r["transport_errors"]["unfinished"]));
    for row in &rows {
        let t = |c: &str| row[col(c)].parse::<u64>().ok();
        let (intended, done) = (t("intended_unix_ns").unwrap(), t("done_unix_ns").unwrap());
        assert!(done >= intended, "{row:?}");
        if let Some(sent) = t("sent_unix_ns") {
            assert!(sent >= intended && done >= sent, "{row:?}");
        }
    }
    // Rate mode: planned times are the schedule's, 1/600 s apart.
    let mut planned: Vec<u64> = rows
        .iter()
        .map(|r| r[col("intended_unix_ns")].parse().unwrap())
        .collect();
    planned.sort_unstable();
    for gap in planned.windows(2).map(|w| w[1] - w[0]) {
        assert!((1_666_000..=1_667_400).contains(&gap), "gap {gap} ns");
    }

    // JSON lines by extension; an unwritable path refuses the run first.
    let jsonl = dir.path().join("requests.jsonl");
    let out = pelt()
        .args([
            &format!("http://{}/", srv.local_addr()),
            "-n",
            "20",
            "--no-save",
        ])
        .arg("--log-requests")
        .arg(&jsonl)
        .output()
        .unwrap();
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 20);
    assert!(lines
        .iter()
        .all(|l| l["status"] == 200 && l["error"].is_null()));
    let before = srv.requests();
    let out = pelt()
        .args([
            &format!("http://{}/", srv.local_addr()),
            "-n",
            "5",
            "--no-save",
        ])
        .args(["--log-requests", "/nonexistent-dir/log.csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot write the request log"), "{err}");
    assert_eq!(srv.requests(), before, "no load before the refusal");
}

/// vegeta's `hist[0,1ms,5ms,10ms]` and ab's `-e` percentile file.
#[test]
fn latency_buckets_and_abs_percentile_file() {
    let srv = server(None);
    let url = format!("http://{}/?delay=20ms", srv.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.pelt");
    let r = json_run(
        pelt()
            .args([&url, "-n", "40", "-c", "4", "--no-save", "--format", "json"])
            .args(["--buckets", "0,1ms,10ms,1s", "-o"])
            .arg(&file),
    );
    let buckets = r["buckets"].as_array().unwrap();
    let counts: Vec<u64> = buckets.iter().map(|b| count(&b["count"])).collect();
    // Every response took 20 ms or more, and far less than a second.
    assert_eq!(counts, [0, 0, 40, 0], "{buckets:?}");
    assert_eq!(buckets[3]["to_s"], serde_json::Value::Null);
    assert_eq!(number(&buckets[2]["share"]), 1.0);

    // The same from the saved run, as text; a bad list exits 2.
    let text = pelt()
        .args(["report", "--buckets", "[0,10ms]"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("[10.0ms, +inf)") && text.contains("100.00%"),
        "{text}"
    );
    let bad = pelt()
        .args(["report", "--buckets", "5ms,1ms"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("must rise"));

    let csv = pelt()
        .args(["report", "--format", "percentiles-csv"])
        .arg(&file)
        .output()
        .unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("Percentage served,Time in ms"));
    let rows: Vec<(u32, f64)> = lines
        .map(|l| {
            let (p, ms) = l.split_once(',').unwrap();
            (p.parse().unwrap(), ms.parse().unwrap())
        })
        .collect();
    assert_eq!(rows.len(), 101);
    assert!(rows.iter().enumerate().all(|(i, r)| r.0 == i as u32));
    assert!(rows.windows(2).all(|w| w[1].1 >= w[0].1), "non-decreasing");
    assert!(rows[0].1 >= 20.0 && rows[100].1 < 1000.0, "{rows:?}");
}
