//! pelt against nginx from Debian's packages: a third-party server whose
//! access log is an independent count of what pelt sent.

use pelt_testkit::nginx::self_signed_cert;
use pelt_testkit::nginx::Nginx;
use pelt_testkit::pelt::{json, run_json, run_json_no_response};

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
    assert_eq!(r["transport_errors"]["length"], 0);
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
    let r = run_json_no_response(&[&url, "-n", "10", "-c", "2"]);
    assert_eq!(r["transport_errors"]["tls"], 10);
    let msg = r["error_examples"][0]["message"].as_str().unwrap();
    assert!(msg.to_lowercase().contains("certificate"), "{msg}");
}

/// TLS 1.3 servers send session tickets after the handshake, unasked:
/// pelt's check for a server that spoke on an idle kept-alive connection
/// must not take them for one and reopen every connection. Closed loop
/// (reused at once) and a slow rate (idle between requests) alike.
#[test]
fn https_keep_alive_connections_are_reused_despite_session_tickets() {
    let tls = self_signed_cert();
    let nginx = Nginx::start_tls("", &tls);
    let url = format!("https://127.0.0.1:{}/ok", nginx.port());
    let r = run_json(&[&url, "-n", "200", "-c", "4", "-t", "2", "--insecure"]);
    assert_eq!(r["requests"]["successes"], 200, "{}", r["error_examples"]);
    assert_eq!(r["connections"]["opened"], 4);
    assert_eq!(r["connections"]["reused_requests"], 196);
    let r = run_json(&[
        &url,
        "--rate",
        "20",
        "-n",
        "20",
        "-c",
        "2",
        "-t",
        "1",
        "--insecure",
    ]);
    assert_eq!(r["requests"]["successes"], 20, "{}", r["error_examples"]);
    assert!(
        r["connections"]["opened"].as_u64().unwrap() <= 2,
        "{}",
        r["connections"]
    );
}

/// Handshakes by kind from a JSON report: full, resumed.
fn tls_handshakes(r: &serde_json::Value) -> [u64; 2] {
    let h = &r["connections"]["handshakes"];
    ["full", "resumed"].map(|k| h[k]["count"].as_u64().unwrap_or(u64::MAX))
}

/// nginx's own count of full (`.`) and resumed (`r`) handshakes, one line
/// per request (each request here has its own connection).
fn nginx_handshakes(nginx: &Nginx, requests: usize) -> [u64; 2] {
    let lines = nginx.tls_log_lines(requests);
    assert_eq!(lines.len(), requests, "{lines:?}");
    let of = |mark: &str| {
        lines
            .iter()
            .filter(|l| l.split(' ').nth(1) == Some(mark))
            .count() as u64
    };
    [of("."), of("r")]
}

/// Issue 44 §3: a connection per request over TLS resumes the session an
/// earlier connection got (as browsers, curl and wrk do), `--no-tls-resume`
/// makes every handshake full (as ab and siege do), and the report counts
/// full and resumed handshakes as nginx saw them (`$ssl_session_reused`),
/// over TLS 1.2 (Debian's nginx 1.22 default: tickets) and TLS 1.3.
#[test]
fn tls_per_connection_counts_full_and_resumed_handshakes_as_nginx_does() {
    let tls = self_signed_cert();
    for (protocols, version) in [("", "TLSv1.2"), ("ssl_protocols TLSv1.3;", "TLSv1.3")] {
        let nginx = Nginx::start_tls(protocols, &tls);
        let url = format!("https://127.0.0.1:{}/ok", nginx.port());
        let base = [
            url.as_str(),
            "-n",
            "30",
            "-c",
            "1",
            "--no-keepalive",
            "--insecure",
        ];
        // One at a time: the first handshake is full, each later one
        // resumes the session the one before it got.
        let r = run_json(&base);
        assert_eq!(r["requests"]["successes"], 30, "{}", r["error_examples"]);
        assert_eq!(r["connections"]["opened"], 30);
        let seen = nginx_handshakes(&nginx, 30);
        assert_eq!(tls_handshakes(&r), seen, "{version}: {}", r["connections"]);
        assert_eq!(seen, [1, 29], "{version}");
        let lines = nginx.tls_log_lines(30);
        assert!(lines.iter().all(|l| l.ends_with(version)), "{lines:?}");
        // --no-tls-resume: every one full, by both counts.
        let mut none = base.to_vec();
        none.push("--no-tls-resume");
        let r = run_json(&none);
        assert_eq!(r["requests"]["successes"], 30, "{}", r["error_examples"]);
        assert_eq!(nginx_handshakes(&nginx, 60), [31, 29], "{version}");
        assert_eq!(
            tls_handshakes(&r),
            [30, 0],
            "{version}: {}",
            r["connections"]
        );
        // Concurrent connections: whatever each got, pelt's counts are
        // nginx's.
        let four = [
            url.as_str(),
            "-n",
            "40",
            "-c",
            "4",
            "-t",
            "2",
            "--no-keepalive",
            "--insecure",
        ];
        let r = run_json(&four);
        assert_eq!(r["requests"]["successes"], 40, "{}", r["error_examples"]);
        let [full, resumed] = nginx_handshakes(&nginx, 100);
        let counts = [full - 31, resumed - 29];
        assert_eq!(
            tls_handshakes(&r),
            counts,
            "{version}: {}",
            r["connections"]
        );
        assert!(counts[1] >= 30, "{version}: mostly resumed: {counts:?}");
    }
    // The text report says it, with each kind's time.
    let nginx = Nginx::start_tls("", &tls);
    let url = format!("https://127.0.0.1:{}/ok", nginx.port());
    let out = pelt_testkit::pelt::pelt()
        .args([
            "run",
            "-n",
            "5",
            "-c",
            "1",
            "--no-keepalive",
            "--insecure",
            &url,
        ])
        .output()
        .unwrap();
    let text = pelt_testkit::pelt::ok_stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.contains("handshakes by kind: full 1 (mean ")
                && l.contains("; resumed 4 (mean ")
                && !l.contains("0-RTT")),
        "{text}"
    );
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_plain_targets_file_is_sent_in_turn() {
    let nginx = Nginx::start("");
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "urls.txt",
        &format!(
            "# three pages\n{}\n\n{}\n{}\n",
            nginx.url("/ok"),
            nginx.url("/index.html"),
            nginx.url("/1k.bin")
        ),
    );
    let r = run_json(&["-f", file.to_str().unwrap(), "-n", "300", "-c", "3"]);
    assert_eq!(r["requests"]["successes"], 300);
    let lines = nginx.access_log_lines(Some(300));
    for path in ["/ok", "/index.html", "/1k.bin"] {
        let n = lines
            .iter()
            .filter(|l| l.starts_with(&format!("GET {path} ")))
            .count();
        assert_eq!(n, 100, "{path}");
    }
}

/// Issue 27: a targets file of 1,000 distinct URLs (per-target counters
/// kept compactly, most targets without a histogram of their own): each
/// target's count in the report is exactly nginx's count of its URL, and
/// the per-target counts add up to the total.
#[test]
fn a_thousand_targets_count_exactly_per_target_against_nginx_log() {
    let nginx = Nginx::start("");
    let dir = tempfile::tempdir().unwrap();
    let urls: String = (0..1000)
        .map(|i| format!("{}?t={i}\n", nginx.url("/ok")))
        .collect();
    let file = write(dir.path(), "urls.txt", &urls);
    let r = run_json(&[
        "-f",
        file.to_str().unwrap(),
        "-n",
        "3000",
        "-c",
        "8",
        "-t",
        "2",
    ]);
    assert_eq!(r["requests"]["total"], 3000);
    let targets = r["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 1000);
    let lines = nginx.access_log_lines(Some(3000));
    assert_eq!(lines.len(), 3000, "nginx logged every request, once");
    let mut logged = std::collections::HashMap::<String, u64>::new();
    for l in &lines {
        let uri = l.split(' ').nth(1).unwrap().to_string();
        *logged.entry(uri).or_default() += 1;
    }
    let mut sum = 0;
    for (i, t) in targets.iter().enumerate() {
        let uri = format!("/ok?t={i}");
        assert_eq!(t["url"], nginx.url(&uri), "report order is the file's");
        let n = t["requests"].as_u64().unwrap();
        assert_eq!(n, 3, "target {i}");
        assert_eq!(logged.get(&uri), Some(&n), "target {i}: nginx's count");
        assert_eq!(t["successes"], 3);
        assert_eq!(t["status_classes"]["2xx"], 3);
        sum += n;
    }
    assert_eq!(sum, 3000, "per-target counts add up to the total");
    // Timed targets carry a response-time summary; all here are among
    // the first 1,000.
    assert!(targets.iter().all(|t| t["response_time"].is_object()));
}

#[test]
fn siege_and_vegeta_files_send_their_methods_headers_and_bodies() {
    let nginx = Nginx::start("");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("body.json"), "{\"a\":1}").unwrap();
    let siege = write(
        dir.path(),
        "siege.txt",
        &format!(
            "HOST={}\n$(HOST)/ok POST name=pelt&x=1\n$(HOST)/ok PUT <body.json\n",
            nginx.url("")
        ),
    );
    let r = run_json(&["-f", siege.to_str().unwrap(), "-n", "20", "-c", "2"]);
    assert_eq!(r["requests"]["successes"], 20);
    let vegeta = write(
        dir.path(),
        "targets.http",
        &format!(
            "PATCH {}\nX-Test: yes\n@body.json\n\nGET {}\n",
            nginx.url("/ok"),
            nginx.url("/index.html")
        ),
    );
    let r = run_json(&["-f", vegeta.to_str().unwrap(), "-n", "20", "-c", "2"]);
    assert_eq!(r["requests"]["successes"], 20);
    let lines = nginx.access_log_lines(Some(40));
    let count = |prefix: &str| lines.iter().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(count("POST /ok 200"), 10);
    assert_eq!(count("PUT /ok 200"), 10);
    assert_eq!(count("PATCH /ok 200"), 10);
    assert_eq!(count("GET /index.html 200"), 10);
}

#[test]
fn random_order_hits_every_target_fairly_for_a_seed() {
    let nginx = Nginx::start("");
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "urls.txt",
        &format!("{}\n{}\n", nginx.url("/ok"), nginx.url("/index.html")),
    );
    let f = file.to_str().unwrap();
    run_json(&["-f", f, "-n", "2000", "-c", "4", "--random", "--seed", "42"]);
    let lines = nginx.access_log_lines(Some(2000));
    let ok = lines.iter().filter(|l| l.starts_with("GET /ok ")).count();
    // Stated tolerance: each of two targets gets 50 % ± 5 %.
    assert!((900..=1100).contains(&ok), "/ok got {ok} of 2000");
}

#[test]
fn a_malformed_targets_file_exits_2_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "bad.txt",
        "http://127.0.0.1:1/\nnot a url at all\n",
    );
    let out = pelt_testkit::pelt::pelt()
        .args(["-f", file.to_str().unwrap(), "-n", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.txt:2"), "{err}");
}

#[test]
fn weighted_targets_reach_nginx_in_proportion() {
    let nginx = Nginx::start("");
    let dir = tempfile::tempdir().unwrap();
    // Plain list: a weight before the URL. Round-robin is exact over
    // every cycle of 3 + 1 requests.
    let plain = write(
        dir.path(),
        "urls.txt",
        &format!("3 {}\n{}\n", nginx.url("/ok"), nginx.url("/index.html")),
    );
    let r = run_json(&["-f", plain.to_str().unwrap(), "-n", "400", "-c", "4"]);
    assert_eq!(r["targets"][0]["requests"], 300);
    assert_eq!(r["targets"][1]["requests"], 100);
    assert_eq!(r["config"]["targets"][0]["weight"], 3);
    let lines = nginx.access_log_lines(Some(400));
    let count = |prefix: &str| lines.iter().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(count("GET /ok 200"), 300);
    assert_eq!(count("GET /index.html 200"), 100);

    // JSON lines: a "weight" field; at random, with a seed, the shares
    // follow the weights within a stated tolerance.
    let json = write(
        dir.path(),
        "targets.json",
        &format!(
            "{{\"method\":\"GET\",\"url\":\"{}\",\"weight\":1}}\n{{\"method\":\"GET\",\"url\":\"{}\",\"weight\":4}}\n",
            nginx.url("/ok"),
            nginx.url("/1k.bin")
        ),
    );
    let f = json.to_str().unwrap();
    run_json(&["-f", f, "-n", "2000", "-c", "4", "--random", "--seed", "7"]);
    let lines = nginx.access_log_lines(Some(2400));
    let heavy = lines
        .iter()
        .filter(|l| l.starts_with("GET /1k.bin 200"))
        .count();
    // Stated tolerance: 80 % ± 4 % of 2,000 (over 4 standard deviations).
    assert!(
        (1520..=1680).contains(&heavy),
        "/1k.bin got {heavy} of 2000"
    );
}

/// ab's "Server Software": nginx's `Server` header (Debian's nginx sends
/// `nginx/VERSION`) in the text report, the JSON and the saved run's
/// report, over HTTP/1.1 and HTTP/2.
#[test]
fn server_software_is_nginx_in_text_json_and_the_saved_run() {
    let nginx = Nginx::start("");
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("run.pelt");
    let saved = saved.to_str().unwrap();
    let out = pelt_testkit::pelt::pelt()
        .args([&nginx.url("/ok"), "-n", "20", "-c", "2", "-o", saved])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let line = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("Server       "))
            .map(str::to_string)
    };
    assert!(
        line(&text).is_some_and(|l| l.starts_with("Server       nginx/")),
        "{text}"
    );
    let out = pelt_testkit::pelt::pelt()
        .args(["report", saved])
        .output()
        .unwrap();
    assert!(out.status.success());
    let again = String::from_utf8(out.stdout).unwrap();
    assert_eq!(line(&again), line(&text), "{again}");
    let out = pelt_testkit::pelt::pelt()
        .args(["report", saved, "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let r: serde_json::Value = json(&out);
    let server = r["server_software"].as_str().unwrap().to_string();
    assert!(server.starts_with("nginx/"), "{server}");
    assert_eq!(Some(format!("Server       {server}")), line(&text));

    let r = run_json(&[&nginx.url("/ok"), "-n", "20", "-c", "2"]);
    assert_eq!(r["server_software"], server.as_str());

    let h2 = Nginx::start_h2("", None);
    let r = run_json(&["run", "--http2", "-n", "20", "-c", "1", &h2.url("/ok")]);
    assert_eq!(r["requests"]["successes"], 20);
    assert_eq!(r["server_software"], server.as_str());
}
