//! pelt against nginx from Debian's packages: a third-party server whose
//! access log is an independent count of what pelt sent.

mod support;

use support::nginx::self_signed_cert;
use support::nginx::Nginx;
use support::pelt::run_json;

#[test]
fn count_matches_nginx_access_log_exactly() {
    let nginx = Nginx::start("");
    let r = run_json(&[&nginx.url("/ok"), "-n", "1000", "-c", "10"]);
    assert_eq!(r["requests"]["total"], 1000);
    assert_eq!(r["requests"]["successes"], 1000);
    let lines = nginx.access_log_lines(Some(1000));
    assert_eq!(lines.len(), 1000, "nginx logged every request, once");
    assert!(lines.iter().all(|l| l.starts_with("GET /ok 200 3 ")));
    assert!(lines.iter().all(|l| l.ends_with("HTTP/1.1")));
}

#[test]
fn method_body_and_static_files_reach_nginx_as_sent() {
    let nginx = Nginx::start("");
    let r = run_json(&[
        &nginx.url("/ok"),
        "-n",
        "50",
        "-c",
        "5",
        "-m",
        "PUT",
        "--body",
        &"x".repeat(500),
    ]);
    assert_eq!(r["requests"]["successes"], 50);
    let lines = nginx.access_log_lines(Some(50));
    assert_eq!(lines.len(), 50);
    assert!(lines.iter().all(|l| l.starts_with("PUT /ok 200 ")));
    // nginx discards the body of a `return` location, so its log does not
    // count it; but had pelt sent fewer or more bytes than its
    // Content-Length, the reused connections would have desynchronised.
    assert!(r["connections"]["reused_requests"].as_u64().unwrap() >= 45);
    assert!(r["bytes"]["out"].as_u64().unwrap() > 50 * 500);
    let r = run_json(&[&nginx.url("/1k.bin"), "-n", "100", "-c", "4"]);
    assert_eq!(r["bytes"]["body_in"], 100 * 1024);
    assert_eq!(r["errors"]["length"], 0);
}

#[test]
fn https_with_and_without_verification() {
    let tls = self_signed_cert();
    let nginx = Nginx::start_tls("", &tls);
    let url = format!("https://127.0.0.1:{}/ok", nginx.port());
    let r = run_json(&[&url, "-n", "200", "-c", "4", "--insecure"]);
    assert_eq!(r["requests"]["successes"], 200);
    assert_eq!(r["latency"]["tls"]["count"], r["connections"]["opened"]);
    assert!(r["latency"]["tls"]["count"].as_u64().unwrap() >= 1);
    assert_eq!(nginx.access_log_lines(Some(200)).len(), 200);

    // Without --insecure the self-signed certificate is refused: counted
    // as TLS errors with the reason, not a crash.
    let r = run_json(&[&url, "-n", "10", "-c", "2"]);
    assert_eq!(r["errors"]["tls"], 10);
    let msg = r["error_examples"][0]["message"].as_str().unwrap();
    assert!(msg.to_lowercase().contains("certificate"), "{msg}");
}
