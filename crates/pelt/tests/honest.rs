//! Regression tests for issue 17: what pelt says when the server or the
//! client cannot keep up, or nothing answers, must be true. Each test is
//! the reproduction from a new user's trial, with the server's own count
//! (the built-in server's, or nginx's access log) as the witness.

mod support;

use support::pelt::{count, exclusive, number, pelt, server};

/// `--rate 1000 -c 10` against 30 ms responses: the pool serves about
/// 330/s. The report used to print "3,000 in 3.00s (1,000 req/s of 1,000
/// req/s offered)" and the HTML "rate (sent) 1,000/s", while the server
/// received about half of them, and no shortfall warning appeared.
#[test]
fn planned_is_not_printed_as_sent_when_the_pool_cannot_keep_up() {
    let _machine = exclusive();
    let srv = server(None);
    let url = format!("http://{}/?delay=30ms", srv.local_addr());
    let out = pelt()
        .args([&url, "--rate", "1000", "-c", "10", "-d", "3s"])
        .args(["--format", "json", "--no-save"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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
    assert!(sent < 2000, "10 connections at 30 ms cannot send 3,000: {sent}");
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
        requests.contains("2,000 planned") && requests.contains(" sent (") && requests.contains("completed"),
        "{requests}"
    );
    assert!(
        !requests.contains("(1,000 req/s of"),
        "the rate sent is not the rate offered: {requests}"
    );
    assert!(text.contains("Overrun      the run took"), "{text}");
    assert!(text.contains("warning: sent "), "{text}");
}
