//! One meaning of "failed" in every view (issue: a 503 counted as "errors
//! 0" in most views). nginx's access log is the witness: one target in
//! three answers 503, and every view of the one run reports that count.

use pelt_testkit::nginx::Nginx;
use pelt_testkit::pelt::{count, pelt};
use serde_json::Value;

fn stdout_of(args: &[&str]) -> (i32, String) {
    let out = pelt().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn a_503_target_is_failed_in_every_view_and_equal_to_nginx_count() {
    let nginx = Nginx::start("location = /unavailable { return 503; }\n");
    let dir = tempfile::tempdir().unwrap();
    let targets = dir.path().join("targets.txt");
    std::fs::write(
        &targets,
        format!(
            "{}\n{}\n{}\n",
            nginx.url("/ok"),
            nginx.url("/index.html"),
            nginx.url("/unavailable")
        ),
    )
    .unwrap();
    let saved = dir.path().join("run.pelt");
    let db = dir.path().join("history.db");
    let (targets, saved, db) = (
        targets.to_str().unwrap(),
        saved.to_str().unwrap(),
        db.to_str().unwrap(),
    );
    let (code, live_text) = stdout_of(&[
        "run",
        "-f",
        targets,
        "--rate",
        "300",
        "-d",
        "2s",
        "-c",
        "10",
        "-o",
        saved,
        "--history",
        db,
    ]);
    assert_eq!(code, 0, "{live_text}");

    // The witness: nginx's own count of the 503s it sent.
    let lines = nginx.access_log_lines(None);
    let unavailable = lines
        .iter()
        .filter(|l| l.starts_with("GET /unavailable 503 "))
        .count() as u64;
    assert!(unavailable > 100, "{} lines", lines.len());

    // JSON: the count, its breakdown, the timeline and the target agree.
    let (code, json) = stdout_of(&["report", saved, "--format", "json"]);
    assert_eq!(code, 0, "{json}");
    let r: Value = serde_json::from_str(&json).unwrap();
    let total = count(&r["requests"]["total"]);
    assert_eq!(
        total,
        lines.len() as u64,
        "every request reached nginx once"
    );
    assert_eq!(count(&r["requests"]["failed"]), unavailable);
    assert_eq!(count(&r["requests"]["non_2xx_3xx"]), unavailable);
    assert_eq!(count(&r["requests"]["transport_errors"]), 0);
    assert_eq!(
        r["failures"],
        serde_json::json!({ "status_5xx": unavailable })
    );
    let per_second: u64 = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| count(&row["failed"]))
        .sum();
    assert_eq!(per_second, unavailable, "the per-second rows add up");
    assert_eq!(count(&r["targets"][2]["failed"]), unavailable);
    assert_eq!(count(&r["targets"][0]["failed"]), 0);
    let share = unavailable as f64 / total as f64;
    assert_eq!(r["requests"]["failed_share"].as_f64().unwrap(), share);

    // Text, as printed live and re-rendered: the count, its kind, a warning.
    for text in [live_text.clone(), stdout_of(&["report", saved]).1] {
        let line = format!(
            "Failed       {unavailable} of {total} requests ({:.2}%)",
            share * 100.0
        );
        assert!(text.contains(&line), "{line}\n{text}");
        assert!(text.contains("status_5xx"), "{text}");
        assert!(
            text.contains(&format!("{:.1}% of requests failed", share * 100.0)),
            "{text}"
        );
        assert!(!text.contains("Failed       none"), "{text}");
    }

    // CSV: the failed column adds up to the same count.
    let (_, csv) = stdout_of(&["report", saved, "--format", "csv"]);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|c| *c == "failed")
        .expect("a failed column");
    let csv_failed: u64 = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(col).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(csv_failed, unavailable);

    // Markdown and HTML.
    let (_, md) = stdout_of(&["report", saved, "--format", "markdown"]);
    assert!(
        md.contains(&format!("Failed: {unavailable} of {total} requests")),
        "{md}"
    );
    assert!(md.contains("| status_5xx |"), "{md}");
    let (_, html) = stdout_of(&["report", saved, "--format", "html"]);
    assert!(
        html.contains(&format!(
            "data-key=\"requests.failed\" data-value=\"{unavailable}\""
        )),
        "the HTML summary's failed row"
    );
    assert!(!html.contains("No request failed"));

    // --assert reads the same share, under either name.
    for measure in ["failed", "errors"] {
        let (code, out) = stdout_of(&["report", saved, "--assert", &format!("{measure} < 10%")]);
        assert_eq!(code, 1, "{out}");
        assert!(out.contains(&format!("{:.3}%", share * 100.0)), "{out}");
    }

    // The history row.
    let (_, listed) = stdout_of(&["history", "--history", db, "--format", "json"]);
    let rows: Vec<Value> = serde_json::from_str(&listed).unwrap();
    assert_eq!(count(&rows[0]["failed"]), unavailable, "{listed}");
    assert_eq!(rows[0]["failed_share"].as_f64().unwrap(), share);
}

/// Every response a 401 (a wrong password): no longer "Failures none"
/// with no warning, and (issue 37) no longer exit 0: a run in which
/// nothing succeeded exits 3 with one line saying so, as a scenario
/// whose every flow failed does, unless an `--assert` on `failed` says
/// what is acceptable.
#[test]
fn all_responses_refused_is_a_failure_with_a_warning() {
    let nginx = Nginx::start("location = /private { return 401; }\n");
    let out = pelt()
        .args(["run", &nginx.url("/private"), "-n", "40", "-c", "2"])
        .output()
        .unwrap();
    let (code, text) = (out.status.code(), String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code, Some(3), "{text}{err}");
    assert!(
        err.contains("pelt: nothing succeeded: all 40 requests failed (status_4xx 40)"),
        "{err}"
    );
    let witnessed = nginx
        .access_log_lines(Some(40))
        .iter()
        .filter(|l| l.starts_with("GET /private 401 "))
        .count();
    assert_eq!(witnessed, 40);
    assert!(
        text.contains("Failed       40 of 40 requests (100.00%)"),
        "{text}"
    );
    assert!(text.contains("status_4xx"), "{text}");
    assert!(text.contains("most requests failed (100.0%)"), "{text}");
    // Said to be acceptable: the assert decides.
    let (code, _) = stdout_of(&[
        "run",
        &nginx.url("/private"),
        "-n",
        "10",
        "--assert",
        "failed <= 100%",
    ]);
    assert_eq!(code, 0);
    let witnessed = nginx
        .access_log_lines(Some(50))
        .iter()
        .filter(|l| l.starts_with("GET /private 401 "))
        .count();
    assert_eq!(witnessed, 50);
}

/// A login redirect with --follow off is named in the report.
#[test]
fn mostly_redirects_without_follow_are_named() {
    let nginx = Nginx::start("location = /app { return 302 /login; }\n");
    let (code, text) = stdout_of(&["run", &nginx.url("/app"), "-n", "30", "-c", "2"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(nginx.access_log_lines(Some(30)).len(), 30);
    assert!(
        text.contains("answered with a redirect (302) and --follow is off"),
        "{text}"
    );
}
