//! Issue 35 §2, "a number means one thing": the headline latency, the
//! labels of multi-target runs and the figures every view shows are one
//! definition each, named the same everywhere.

use pelt_testkit::pelt::{json, number, ok, ok_stdout, pelt, server};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Nanoseconds of a duration as pelt prints it (`1.23ms`, `456µs`,
/// `2.00s`, `120ns`).
fn ns_of(text: &str) -> f64 {
    let t = text.trim();
    let (num, unit) = t
        .find(|c: char| c.is_ascii_alphabetic() || c == 'µ')
        .map(|i| t.split_at(i))
        .unwrap_or_else(|| panic!("no unit in {t:?}"));
    let n: f64 = num
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {t:?}"));
    n * match unit {
        "ns" => 1.0,
        "µs" | "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => panic!("unit {unit:?} in {t:?}"),
    }
}

/// Whether `shown` is `want_ns` as printed to three significant digits.
fn same(shown_ns: f64, want_ns: f64) -> bool {
    (shown_ns - want_ns).abs() <= want_ns * 0.006 + 1.0
}

/// A closed-loop run whose response time is far from its service time:
/// each request waits its turn for a new connection (`--connect-rate`)
/// with its clock running, so response time holds ~100 ms of waiting a
/// 1 ms service time does not. Saved to `dir/NAME.pelt`; its JSON.
fn closed_loop_run(dir: &Path, name: &str, url: &str) -> (PathBuf, Value) {
    let file = dir.join(format!("{name}.pelt"));
    let out = pelt()
        .arg(format!("{url}?delay=1ms"))
        .args(["-c", "2", "-t", "1", "-n", "12", "--no-keepalive"])
        .args([
            "--connect-rate",
            "20",
            "--format",
            "json",
            "-q",
            "--no-save",
        ])
        .arg("-o")
        .arg(&file)
        .output()
        .unwrap();
    (file, json(ok(&out)))
}

fn p50_s(r: &Value, latency: &str) -> f64 {
    number(&r["latency"][latency]["percentiles_s"]["p50"])
}

/// `pelt report FILE ARGS`, its stdout.
fn report(file: &Path, args: &[&str]) -> String {
    ok_stdout(&pelt().arg("report").arg(file).args(args).output().unwrap())
}

/// Issue 35 §2: JSON named a closed loop's headline `service_time` while
/// the text's `latency*` column, markdown, the ab percentiles file,
/// `--assert p50` and `pelt compare`'s default metric read response time
/// (the connect and the client's turnaround included). One definition,
/// read the same in every view.
#[test]
fn a_closed_loops_headline_is_service_time_in_every_view() {
    let srv = server(None);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://{}/", srv.local_addr());
    let (file, r) = closed_loop_run(dir.path(), "a", &url);
    assert_eq!(r["headline"], "service_time");
    let (service, response) = (
        p50_s(&r, "service_time") * 1e9,
        p50_s(&r, "response_time") * 1e9,
    );
    // The set-up's guarantee: every request waited for a connection slot.
    assert!(
        response > 5.0 * service,
        "service {service} ns, response {response} ns"
    );

    // Text: the first column is the headline, named as JSON names it.
    let text = report(&file, &[]);
    let head = text
        .lines()
        .find(|l| l.starts_with("Latency "))
        .unwrap_or_else(|| panic!("no latency table:\n{text}"));
    let words: Vec<&str> = head.split_whitespace().collect();
    assert_eq!(&words[1..4], ["service", "time*", "response"], "{head}");
    let p50: Vec<&str> = text
        .lines()
        .find(|l| l.trim_start().starts_with("p50 "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert!(
        same(ns_of(p50[1]), service),
        "text p50 {p50:?}, service {service}"
    );
    assert!(
        same(ns_of(p50[2]), response),
        "text p50 {p50:?}, response {response}"
    );
    assert!(text.contains("* headline: service time"), "{text}");

    // Markdown: the same columns.
    let md = report(&file, &["--format", "markdown"]);
    assert!(
        md.contains("| | service time (headline) | response time |"),
        "{md}"
    );
    let row = md.lines().find(|l| l.starts_with("| p50 |")).unwrap();
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert!(same(ns_of(cells[2]), service), "{row}");
    assert!(same(ns_of(cells[3]), response), "{row}");

    // ab's percentiles file, in milliseconds.
    let csv = report(&file, &["--format", "percentiles-csv"]);
    let ms: f64 = csv
        .lines()
        .find_map(|l| l.strip_prefix("50,"))
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        same(ms * 1e6, service),
        "csv p50 {ms} ms, service {service} ns"
    );

    // --assert: a bare p50 is the headline; `response p50` is response time.
    let between = format!("{:.0}us", (service * response).sqrt() / 1e3);
    let check = |term: &str| {
        pelt()
            .arg("report")
            .arg(&file)
            .args(["--format", "json", "--assert", term])
            .output()
            .unwrap()
    };
    let bare = check(&format!("p50 < {between}"));
    let said = String::from_utf8_lossy(&bare.stderr);
    assert_eq!(bare.status.code(), Some(0), "{said}");
    assert!(said.contains("service time)"), "{said}");
    for term in [
        format!("service p50 < {between}"),
        format!("service_time.p50 < {between}"),
    ] {
        assert_eq!(check(&term).status.code(), Some(0), "{term}");
    }
    for term in [
        format!("response p50 < {between}"),
        format!("response_time.p50 < {between}"),
    ] {
        let out = check(&term);
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{term}: {said}");
        assert!(said.contains("response time)"), "{said}");
    }

    // HTML: the precision row's interval is of the headline.
    let html = report(&file, &["--format", "html"]);
    let at = html.find("p50: 95% interval").expect("a precision row");
    let cell = &html[at..];
    let lo = cell[cell.find('[').unwrap() + 1..]
        .split(" ..")
        .next()
        .unwrap();
    assert!(
        ns_of(lo) <= service * 1.01 && ns_of(lo) < response / 2.0,
        "{lo}"
    );

    // pelt compare's default metric is the runs' headline.
    let (other, _) = closed_loop_run(dir.path(), "b", &url);
    let c = json(ok(&pelt()
        .args(["compare", "--format", "json"])
        .arg(&file)
        .arg(&other)
        .output()
        .unwrap()));
    assert_eq!(c["latency"], "service_time", "{c}");
}

/// Issue 35 §2: `pelt experiment --metric service_time` judged service
/// time (3.97 ms) beside charts and a "Latency against load" table of
/// response time (87.2 ms), and warned that send lag weakened the
/// percentiles, which service time leaves out. Every figure shown is of
/// the latency judged. The runs: rate mode whose sends wait for scarce
/// new connections, so send lag (and response time) is ~100 ms or more
/// while the server takes 1 ms.
#[test]
fn an_experiment_on_service_time_draws_and_warns_about_service_time() {
    let srv = server(None);
    let url = format!("http://{}/?delay=1ms", srv.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let plan = format!(
        r#"
name = "service"
blocks = 6
[load]
rate = 40
connections = 2
duration = "500ms"
threads = 1
args = ["--no-keepalive", "--connect-rate", "20"]
[[variant]]
name = "A"
url = "{url}"
[[variant]]
name = "B"
url = "{url}"
"#
    );
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    let out = pelt()
        .current_dir(dir.path())
        .args([
            "experiment",
            "plan.toml",
            "-o",
            "out",
            "-q",
            "--metric",
            "service_time",
        ])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The set-up's guarantee: the runs' response time is mostly waiting.
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    let first = report["runs"][0]["file"].as_str().unwrap();
    let run = json(ok(&pelt()
        .arg("report")
        .arg(dir.path().join("out").join(first))
        .args(["--format", "json"])
        .output()
        .unwrap()));
    let (service, response) = (
        p50_s(&run, "service_time") * 1e9,
        p50_s(&run, "response_time") * 1e9,
    );
    assert!(
        response > 10.0 * service,
        "service {service} ns, response {response} ns"
    );
    assert!(
        pelt_testkit::pelt::warned(&run, "send_lag"),
        "the runs warn of send lag"
    );

    // The load table: medians of service time's p50 / p99.
    let at = text
        .find("Latency against load (median over runs of p50 / p99 of service time)")
        .unwrap_or_else(|| panic!("{text}"));
    let row = text[at..]
        .lines()
        .find(|l| l.trim_start().starts_with("A "))
        .unwrap();
    let p50 = row.split_whitespace().nth(1).unwrap();
    assert!(
        ns_of(p50) < response / 5.0,
        "{row}: response p50 {response} ns"
    );
    // No send-lag warning weakens verdicts on service time.
    assert!(!text.contains("Warning send_lag"), "{text}");
    // The HTML's spectrum says what it draws.
    let html = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
    assert!(
        html.contains("Latency (service time) by percentile"),
        "spectrum"
    );
    assert!(
        html.contains("p99 (thick) of service time"),
        "latency against load"
    );
}

/// `pelt` with a history of its own in `dir` (recorded, unlike the
/// tests' default).
fn with_history(dir: &Path) -> assert_cmd::Command {
    let mut c = pelt();
    c.env("PELT_DATA_DIR", dir)
        .env("PELT_HISTORY", dir.join("h.db"))
        .env_remove("PELT_NO_HISTORY");
    c
}

/// Issue 35 §2: a 3-target run was labelled by its first URL in the
/// HTML's Summary, Status codes, Failures and Configuration tables and
/// in `pelt history` ("…/a: 404 400, 503 400"); the targets tables left
/// `failures` empty for targets that answered 404 or 503 to everything;
/// `pelt history` did not mark an aborted run.
#[test]
fn a_multi_target_run_is_named_as_such_and_its_failing_targets_show_failures() {
    let srv = server(None);
    let base = format!("http://{}", srv.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let targets = dir.path().join("targets.txt");
    std::fs::write(
        &targets,
        format!("{base}/a?status=404\n{base}/b?status=503\n{base}/c\n"),
    )
    .unwrap();
    let file = dir.path().join("three.pelt");
    let out = with_history(dir.path())
        .arg("run")
        .arg("-f")
        .arg(&targets)
        .args(["-n", "300", "-c", "3", "-q", "--format", "json", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    let r = json(&out);
    assert_eq!(r["targets"][1]["failed"], 100, "{r}");

    // HTML: every table's column is the run, "3 targets", never /a.
    let html = report(&file, &["--format", "html"]);
    assert!(
        html.contains("<th class=\"run\">3 targets</th>"),
        "column head"
    );
    assert!(
        !html.contains(&format!("<th class=\"run\">{base}/a")),
        "labelled by its first URL"
    );
    // ... and its targets table names each target's failures.
    let at = html
        .find("<table class=\"targets\">")
        .expect("a targets table");
    let row_b = &html[at..][html[at..].find("/b?status=503").unwrap()..];
    let row_b = &row_b[..row_b.find("</tr>").unwrap()];
    assert!(row_b.contains("status_5xx"), "{row_b}");
    // Text and markdown too.
    let text = report(&file, &[]);
    let line = text.lines().find(|l| l.contains("/a?status=404")).unwrap();
    assert!(line.contains("status_4xx 100"), "{line}");
    let md = report(&file, &["--format", "markdown"]);
    let line = md
        .lines()
        .find(|l| l.starts_with("| `GET") && l.contains("/b?status=503"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(line.trim_end().ends_with("status_5xx 100 |"), "{line}");

    // An aborted run, then the history's table: named and marked.
    let out = with_history(dir.path())
        .args([
            "run",
            &format!("{base}/?status=500"),
            "-d",
            "5s",
            "-c",
            "1",
            "-q",
        ])
        .args(["--abort-on", "failed > 50% for 1s", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = ok_stdout(&with_history(dir.path()).arg("history").output().unwrap());
    let head = table.lines().next().unwrap();
    assert!(head.contains(" ended "), "{table}");
    let three = table
        .lines()
        .find(|l| l.contains("3 targets:"))
        .expect("the 3-target run");
    assert!(three.contains(" complete "), "{three}");
    let aborted = table
        .lines()
        .find(|l| l.contains("status=500"))
        .expect("the aborted run");
    assert!(aborted.contains(" interrupted "), "{aborted}");
}

/// Issue 35 §2: after a warm-up the text said "Connections 0 opened":
/// the connections in use were opened during the warm-up, which no
/// figure counts.
#[test]
fn connections_after_a_warm_up_say_so() {
    let srv = server(None);
    let url = format!("http://{}/", srv.local_addr());
    let out = pelt()
        .args([
            &url,
            "-c",
            "2",
            "-t",
            "1",
            "-d",
            "600ms",
            "--warmup",
            "300ms",
            "--no-save",
        ])
        .output()
        .unwrap();
    let text = ok_stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("Connections "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("opened after the warm-up (those it opened are not counted)"),
        "{line}"
    );
}
