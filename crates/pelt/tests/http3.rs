//! `--http3` against aioquic (an HTTP/3 implementation independent of
//! pelt's quinn and h3), whose access log says what it answered; and the
//! failures HTTP/3 meets: a certificate not trusted, a UDP port where
//! nothing answers, and flags that QUIC cannot work with.

use pelt_testkit::aioquic::H3Server;
use pelt_testkit::nginx::self_signed_cert;
use pelt_testkit::pelt::{pelt, run_json, run_json_no_response, server};
use serde_json::Value;
use std::time::{Duration, Instant};

fn error_examples(r: &Value) -> String {
    r["error_examples"].to_string()
}

#[test]
fn http3_requests_reach_aioquic_exactly() {
    let tls = self_signed_cert();
    let h3 = H3Server::start(&tls);
    let r = run_json(&[
        "run",
        "--http3",
        "--insecure",
        "-n",
        "200",
        "-c",
        "2",
        "--streams",
        "4",
        "-t",
        "1",
        &h3.url("/ok"),
    ]);
    assert_eq!(r["requests"]["total"], 200, "{}", error_examples(&r));
    assert_eq!(r["requests"]["successes"], 200, "{}", error_examples(&r));
    assert_eq!(r["status_codes"]["200"], 200);
    assert_eq!(r["config"]["http"]["http3"], true);
    assert_eq!(r["config"]["http"]["streams"], 4);
    assert_eq!(r["server_software"], "aioquic-test");
    // Two QUIC connections, four streams each; each handshake is timed
    // once, as connect (QUIC's TLS is part of it, no tls time apart).
    assert_eq!(r["connections"]["opened"], 2);
    assert_eq!(r["connections"]["reused_requests"], 198);
    assert_eq!(r["latency"]["connect"]["count"], 2);
    assert_eq!(r["latency"]["tls"]["count"], 0);
    assert_eq!(r["bytes"]["body_in"], 200 * 3);
    // Every request timed from its send to its response, as for HTTP/2.
    assert_eq!(r["latency"]["service_time"]["count"], 200);
    // The server saw each request once, over HTTP/3.
    let lines = h3.log_lines();
    assert_eq!(lines.len(), 200, "aioquic answered every request, once");
    assert!(
        lines.iter().all(|l| l == "GET /ok 200 h3"),
        "{:?}",
        lines.iter().find(|l| *l != "GET /ok 200 h3")
    );
}

#[test]
fn http3_in_rate_mode_sends_every_slot() {
    let tls = self_signed_cert();
    let h3 = H3Server::start(&tls);
    let r = run_json(&[
        "run",
        "--http3",
        "--insecure",
        "--rate",
        "200",
        "-n",
        "100",
        "-c",
        "1",
        "--streams",
        "8",
        "-t",
        "1",
        &h3.url("/bytes/1000"),
    ]);
    assert_eq!(r["requests"]["total"], 100, "{}", error_examples(&r));
    assert_eq!(r["requests"]["successes"], 100, "{}", error_examples(&r));
    assert_eq!(r["bytes"]["body_in"], 100 * 1000);
    assert_eq!(r["latency"]["send_lag"]["count"], 100);
    assert_eq!(h3.log_lines().len(), 100);
}

#[test]
fn http3_verifies_certificates_by_default() {
    let tls = self_signed_cert();
    let h3 = H3Server::start(&tls);
    // A self-signed certificate is no one's the client trusts: each
    // handshake fails as `tls`, and no request reaches the server.
    let r = run_json_no_response(&["run", "--http3", "-n", "5", "-c", "1", &h3.url("/ok")]);
    assert_eq!(r["transport_errors"]["tls"], 5, "{}", error_examples(&r));
    assert!(
        error_examples(&r).contains("certificate"),
        "the message says why: {}",
        error_examples(&r)
    );
    assert!(h3.log_lines().is_empty());
}

#[test]
fn http3_where_nothing_answers_on_udp_fails_to_connect_in_time() {
    // A TCP-only server: its port has nothing on UDP. Each request's
    // handshake gets no answer, fails as `connect` at --connect-timeout,
    // and the run ends (no hang, no retry storm).
    let tcp_only = server(None);
    let url = format!("https://127.0.0.1:{}/", tcp_only.local_addr().port());
    let started = Instant::now();
    let r = run_json_no_response(&[
        "run",
        "--http3",
        "--insecure",
        "--connect-timeout",
        "500ms",
        "-n",
        "3",
        "-c",
        "1",
        &url,
    ]);
    assert_eq!(
        r["transport_errors"]["connect"],
        3,
        "{}",
        error_examples(&r)
    );
    assert!(
        error_examples(&r).contains("UDP port"),
        "{}",
        error_examples(&r)
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "bounded by --connect-timeout: {:?}",
        started.elapsed()
    );
}

#[test]
fn http3_with_what_quic_cannot_carry_is_a_usage_error() {
    for (args, message) in [
        (
            &["--http2"][..],
            "error: --http2 and --http3 ask for different protocols",
        ),
        (
            &["--proxy", "http://127.0.0.1:3128"][..],
            "error: --proxy cannot carry HTTP/3",
        ),
        (
            &["--unix-socket", "/tmp/pelt-none.sock"][..],
            "error: --unix-socket cannot carry HTTP/3",
        ),
    ] {
        let out = pelt()
            .args(["https://127.0.0.1:9/", "--http3", "-n", "1"])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with(message), "{stderr}");
    }
    let out = pelt()
        .args(["http://127.0.0.1:9/", "--http3", "-n", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("use an https:// URL"), "{stderr}");
}
