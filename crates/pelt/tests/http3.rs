//! `--http3` against aioquic (an HTTP/3 implementation independent of
//! pelt's quinn and h3), whose access log says what it answered; and the
//! failures HTTP/3 meets: a certificate not trusted, a UDP port where
//! nothing answers, and flags that QUIC cannot work with.

use pelt_target::{Pause, ServeConfig};
use pelt_testkit::aioquic::H3Server;
use pelt_testkit::caddy::Caddy;
use pelt_testkit::nginx::{self_signed_cert, Nginx};
use pelt_testkit::pelt::{
    command, count, number, pelt, run_json, run_json_no_response, server, server_h3,
};
use pelt_testkit::ports::free_port;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn error_examples(r: &Value) -> String {
    r["error_examples"].to_string()
}

#[test]
fn http3_requests_reach_aioquic_exactly() {
    let tls = self_signed_cert();
    let h3 = H3Server::start(&tls);
    let r = h3_run(
        &["-n", "200", "-c", "2", "--streams", "4", "-t", "1"],
        &h3.url("/ok"),
    );
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
    let r = h3_run(
        &[
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
        ],
        &h3.url("/bytes/1000"),
    );
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

/// A TCP-only server: its port has nothing on UDP. Each request's
/// handshake used to wait out --connect-timeout (`-c 1 -n 5` took 25 s)
/// and the run then asked whether the server was stuck (issue 35 §6). The
/// host's ICMP port unreachable says at once that nothing listens on UDP
/// there, and a TCP connect that a TCP server listens: each request fails
/// as `connect` saying both, long before the timeout.
#[test]
fn http3_where_nothing_answers_on_udp_fails_to_connect_in_time() {
    let tcp_only = server(None);
    let url = format!("https://127.0.0.1:{}/", tcp_only.local_addr().port());
    let started = Instant::now();
    let r = run_json_no_response(&[
        "run",
        "--http3",
        "--insecure",
        "--connect-timeout",
        "30s",
        "-n",
        "3",
        "-c",
        "1",
        &url,
    ]);
    let took = started.elapsed();
    assert_eq!(
        r["transport_errors"]["connect"],
        3,
        "{}",
        error_examples(&r)
    );
    for says in [
        "nothing listens on UDP port",
        "ICMP port unreachable",
        "a TCP server listens on that port",
        "drop --http3",
    ] {
        assert!(
            error_examples(&r).contains(says),
            "{says}: {}",
            error_examples(&r)
        );
    }
    // Three handshakes waited out would take 90 s.
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assert_eq!(tcp_only.requests(), 0, "no request went over TCP");
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

/// `pelt run --http3 --insecure ARGS URL`, its JSON report (exit 0).
fn h3_run(args: &[&str], url: &str) -> Value {
    let mut all = vec!["run", "--http3", "--insecure"];
    all.extend_from_slice(args);
    all.push(url);
    run_json(&all)
}

/// `https://127.0.0.1:PORT` and `path` for the built-in server's HTTP/3.
fn h3_url(server: &pelt_target::ServerHandle, path: &str) -> String {
    format!("https://127.0.0.1:{}{path}", server.local_addr().port())
}

#[test]
fn pelt_serve_http3_answers_sizes_and_statuses_exactly() {
    let target = server_h3(ServeConfig::default());
    let r = h3_run(
        &["-n", "300", "-c", "2", "--streams", "4"],
        &h3_url(&target, "/?size=10k"),
    );
    assert_eq!(r["requests"]["successes"], 300, "{}", error_examples(&r));
    assert_eq!(r["bytes"]["body_in"], 300 * 10240);
    assert_eq!(r["connections"]["opened"], 2);
    assert_eq!(r["server_software"], "pelt-target");
    assert_eq!(
        target.requests(),
        300,
        "the server counted each request once"
    );
    // Statuses, sizes drawn from a range, and 204's empty body.
    let r = h3_run(
        &[
            "-n",
            "40",
            "-c",
            "1",
            "--streams",
            "2",
            "--assert",
            "failed <= 100%",
        ],
        &h3_url(&target, "/?status=503&size=100&size_max=200"),
    );
    assert_eq!(r["status_codes"]["503"], 40, "{}", error_examples(&r));
    let body = count(&r["bytes"]["body_in"]);
    assert!((40 * 100..=40 * 200).contains(&body), "{body}");
    let r = h3_run(&["-n", "10"], &h3_url(&target, "/?status=204&size=1k"));
    assert_eq!(r["status_codes"]["204"], 10);
    assert_eq!(r["bytes"]["body_in"], 0);
    // A bad parameter is a 400 naming it, as over HTTP/1.1.
    let r = h3_run(
        &["-n", "5", "--assert", "failed <= 100%"],
        &h3_url(&target, "/?size=lots"),
    );
    assert_eq!(r["status_codes"]["400"], 5);
    assert_eq!(target.requests(), 300 + 40 + 10 + 5);
}

#[test]
fn pelt_serve_http3_delays_and_pauses_as_over_tcp() {
    let target = server_h3(ServeConfig {
        delay: Duration::from_millis(5),
        ..ServeConfig::default()
    });
    // 20 ms asked + 5 ms server-wide: no response sooner.
    let r = h3_run(
        &["-n", "20", "-c", "1", "--streams", "2"],
        &h3_url(&target, "/?delay=20ms"),
    );
    assert_eq!(r["requests"]["successes"], 20, "{}", error_examples(&r));
    assert!(
        number(&r["latency"]["service_time"]["min_s"]) >= 0.025,
        "{r}"
    );
    // A pause from the first request on, 300 ms long: that request's
    // response is held until it ends.
    let paused = server_h3(ServeConfig {
        pause: Some(Pause {
            after: Duration::ZERO,
            length: Duration::from_millis(300),
        }),
        ..ServeConfig::default()
    });
    let r = h3_run(&["-n", "3", "-c", "1"], &h3_url(&paused, "/"));
    assert_eq!(r["requests"]["successes"], 3, "{}", error_examples(&r));
    assert!(
        number(&r["latency"]["service_time"]["max_s"]) >= 0.25,
        "{r}"
    );
}

#[test]
fn pelt_serve_http3_faults_break_the_stream_and_are_counted_exactly() {
    let target = server_h3(ServeConfig::default());
    for (fault, kind) in [("reset", "reset"), ("invalid", "reset"), ("close", "reset")] {
        let r = run_json_no_response(&[
            "run",
            "--http3",
            "--insecure",
            "-n",
            "10",
            "-c",
            "1",
            "--streams",
            "2",
            &h3_url(&target, &format!("/?fault={fault}&size=100k")),
        ]);
        assert_eq!(
            r["transport_errors"][kind],
            10,
            "fault={fault}: {}",
            error_examples(&r)
        );
        assert_eq!(r["requests"]["successes"], 0, "fault={fault}");
        // A broken stream leaves the connection to the others.
        assert_eq!(r["connections"]["opened"], 1, "fault={fault}");
    }
    // A stall past --timeout is a timeout.
    let r = run_json_no_response(&[
        "run",
        "--http3",
        "--insecure",
        "--timeout",
        "300ms",
        "-n",
        "4",
        "-c",
        "1",
        "--streams",
        "4",
        &h3_url(&target, "/?fault=stall&stall=2s"),
    ]);
    assert_eq!(
        r["transport_errors"]["timeout"],
        4,
        "{}",
        error_examples(&r)
    );
    assert_eq!(target.requests(), 3 * 10 + 4);
}

#[test]
fn pelt_serve_http3_from_the_command_line() {
    let mut child = command()
        .args(["serve", "--http3", "--port", "0", "-t", "1"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let urls: Vec<&str> = first
        .split_whitespace()
        .filter(|w| w.starts_with("http://") || w.starts_with("https://"))
        .collect();
    let [tcp, url] = urls[..] else {
        panic!("two URLs in {first:?}")
    };
    assert_eq!(
        url,
        tcp.replace("http://", "https://"),
        "HTTP/3 on the TCP port's number"
    );
    let h3 = h3_run(&["-n", "50", "-c", "2"], url);
    let h1 = run_json(&[
        "run",
        "-n",
        "50",
        "-c",
        "2",
        &url.replace("https://", "http://"),
    ]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(h3["requests"]["successes"], 50, "{}", error_examples(&h3));
    assert_eq!(h1["requests"]["successes"], 50, "{}", error_examples(&h1));
}

#[test]
fn http3_requests_reach_caddy_exactly() {
    let tls = self_signed_cert();
    let caddy = Caddy::start(&tls);
    let r = h3_run(
        &["-n", "300", "-c", "4", "--streams", "8"],
        &caddy.url("/ok"),
    );
    assert_eq!(r["requests"]["successes"], 300, "{}", error_examples(&r));
    assert_eq!(r["bytes"]["body_in"], 300 * 2);
    assert_eq!(r["connections"]["opened"], 4);
    assert_eq!(r["server_software"], "Caddy");
    let r = h3_run(
        &["-n", "50", "-c", "2", "--streams", "2"],
        &caddy.url("/big"),
    );
    assert_eq!(r["requests"]["successes"], 50, "{}", error_examples(&r));
    assert_eq!(r["bytes"]["body_in"], 50 * 10_000);
    let r = h3_run(
        &["-n", "20", "--assert", "failed <= 100%"],
        &caddy.url("/status/503"),
    );
    assert_eq!(r["status_codes"]["503"], 20, "{}", error_examples(&r));
    // Caddy saw each request once, and says it came over HTTP/3.
    let lines = caddy.log_lines();
    let of = |l: &str| lines.iter().filter(|x| *x == l).count();
    assert_eq!(
        of("GET /ok 200 HTTP/3.0"),
        300,
        "{:?}",
        &lines[..lines.len().min(5)]
    );
    assert_eq!(of("GET /big 200 HTTP/3.0"), 50);
    assert_eq!(of("GET /status/503 503 HTTP/3.0"), 20);
    assert_eq!(lines.len(), 370);
}

#[test]
fn http3_to_caddy_verifies_its_certificate_unless_insecure() {
    let tls = self_signed_cert();
    let caddy = Caddy::start(&tls);
    // Verification on: the test's certificate is no one's pelt trusts.
    let r = run_json_no_response(&["run", "--http3", "-n", "5", "-c", "1", &caddy.url("/ok")]);
    assert_eq!(r["transport_errors"]["tls"], 5, "{}", error_examples(&r));
    assert!(
        error_examples(&r).contains("certificate"),
        "{}",
        error_examples(&r)
    );
    assert!(caddy.log_lines().is_empty(), "{:?}", caddy.log_lines());
    // --insecure: the same server, the same count, over HTTP/3.
    let r = h3_run(&["-n", "5", "-c", "1"], &caddy.url("/ok"));
    assert_eq!(r["requests"]["successes"], 5, "{}", error_examples(&r));
    assert_eq!(caddy.log_lines(), vec!["GET /ok 200 HTTP/3.0"; 5]);
}

/// Runs pelt (text report) and returns its exit code and stderr.
fn exit_and_stderr(args: &[&str]) -> (Option<i32>, String) {
    let out = pelt().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn http3_failures_exit_as_http1_does_in_one_line() {
    let tls = self_signed_cert();
    let nginx = Nginx::start_tls("", &tls);
    let caddy = Caddy::start(&tls);
    let tcp_only = server(None);
    // Nothing on the port, TCP or UDP: HTTP/1.1 is refused at once, and
    // QUIC too (the host's ICMP port unreachable).
    let nothing = free_port();
    let h1_nothing = format!("http://127.0.0.1:{nothing}/");
    let h3_nothing = format!("https://127.0.0.1:{nothing}/");
    let h3_tcp_only = format!("https://127.0.0.1:{}/", tcp_only.local_addr().port());
    let h1_tls = nginx.url("/").replace("http://", "https://");
    let h3_tls = caddy.url("/ok");
    let quick = ["--connect-timeout", "300ms", "-n", "3", "-c", "1"];
    let cases: [(&str, &[&str], &str); 3] = [
        (
            &h1_nothing,
            &["--http3", &h3_nothing],
            "nothing listens on UDP port",
        ),
        // A TCP-only server: nothing speaks QUIC there, as nothing speaks
        // HTTP/1.1 at a closed port.
        (
            &h1_nothing,
            &["--http3", "--insecure", &h3_tcp_only],
            "UDP port",
        ),
        // A certificate not trusted: nginx over TLS, Caddy over QUIC.
        (&h1_tls, &["--http3", &h3_tls], "certificate"),
    ];
    for (h1_url, h3_args, says) in cases {
        let h1: Vec<&str> = ["run"]
            .iter()
            .chain(&quick)
            .chain(&[h1_url])
            .copied()
            .collect();
        let h3: Vec<&str> = ["run"]
            .iter()
            .chain(&quick)
            .chain(h3_args)
            .copied()
            .collect();
        let (h1_code, h1_err) = exit_and_stderr(&h1);
        let (h3_code, h3_err) = exit_and_stderr(&h3);
        assert_eq!(h1_code, Some(3), "{h1:?}: {h1_err}");
        assert_eq!(h3_code, h1_code, "{h3:?}: {h3_err}");
        assert_eq!(h1_err.lines().count(), 1, "{h1_err}");
        assert_eq!(h3_err.lines().count(), 1, "{h3_err}");
        assert!(
            h3_err.starts_with("pelt: no request got a response: "),
            "{h3_err}"
        );
        assert!(h3_err.contains(says), "{h3_err}");
    }
    assert!(caddy.log_lines().is_empty());
}

/// Issue 35 §5: by IP address, TLS sends no server name (SNI), and Caddy
/// with `tls internal` (a certificate chosen by name) ends the handshake:
/// "the cryptographic handshake failed: error 80" said nothing of why.
/// The one line says so and how to fix it, and the fix it gives works,
/// Caddy's access log the witness. HTTP/2 over TCP says the same.
#[test]
fn http3_by_ip_to_a_server_that_wants_a_name_says_so_and_how() {
    let caddy = Caddy::start_internal("localhost");
    let port = caddy.port();
    let by_ip = format!("https://127.0.0.1:{port}/ok");
    let quick = ["-n", "5", "-c", "1", "--insecure"];
    for protocol in ["--http3", "--http2"] {
        let args: Vec<&str> = ["run", protocol, &by_ip]
            .iter()
            .chain(&quick)
            .copied()
            .collect();
        let (code, err) = exit_and_stderr(&args);
        assert_eq!(code, Some(3), "{protocol}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("pelt: no request got a response: ")
                && err.contains("no server name (SNI) goes to an IP address")
                && err.contains(&format!(
                    "https://NAME:{port}/ --connect-to NAME:{port}:127.0.0.1:{port}"
                )),
            "{protocol}: {err}"
        );
        if protocol == "--http3" {
            assert!(err.contains("error 80 (internal_error)"), "{err}");
        }
    }
    assert!(caddy.log_lines().is_empty(), "{:?}", caddy.log_lines());
    // The fix, as the line gives it, with NAME the certificate's name.
    let fixed = format!("https://localhost:{port}/ok");
    let connect_to = format!("localhost:{port}:127.0.0.1:{port}");
    let r = h3_run(&["-n", "5", "-c", "1", "--connect-to", &connect_to], &fixed);
    assert_eq!(r["requests"]["successes"], 5, "{}", error_examples(&r));
    assert_eq!(caddy.log_lines(), vec!["GET /ok 200 HTTP/3.0"; 5]);
}

#[test]
fn http3_waiting_for_stream_credit_is_not_service_time() {
    // The server allows one stream at a time per connection; four senders
    // share it, so three wait for credit (QUIC's MAX_STREAMS) while one
    // is served. The wait is the client's queue: each request's service
    // time is the server's 40 ms, not up to four times that.
    let target = server_h3(ServeConfig {
        http3_max_streams: 1,
        ..ServeConfig::default()
    });
    let r = h3_run(
        &["-n", "12", "-c", "1", "--streams", "4"],
        &h3_url(&target, "/?delay=40ms"),
    );
    assert_eq!(r["requests"]["successes"], 12, "{}", error_examples(&r));
    assert_eq!(target.requests(), 12);
    assert_eq!(r["connections"]["opened"], 1);
    let service = &r["latency"]["service_time"];
    let min = number(&service["min_s"]);
    assert!(min >= 0.04, "service time {min} s under the server's delay");
    // Counted, the wait would put three requests in four at 80, 120 and
    // 160 ms; bounds with room for a busy machine's scheduling.
    let p50 = number(&service["percentiles_s"]["p50"]);
    let p90 = number(&service["percentiles_s"]["p90"]);
    assert!(
        p50 < 0.07 && p90 < 0.12,
        "service time p50 {p50} s, p90 {p90} s: waiting for stream credit was counted"
    );
}

#[test]
fn http3_requests_a_closing_connection_did_not_take_go_to_a_new_one() {
    // Each response comes with a GOAWAY (fault=hangup): requests that the
    // closing connection did not take (refused H3_REQUEST_REJECTED, or
    // not sent once GOAWAY arrived) go to a new connection, as HTTP/2's
    // unprocessed requests do; none is lost and none is served twice.
    let target = server_h3(ServeConfig::default());
    let r = h3_run(
        &["-n", "40", "-c", "1", "--streams", "4"],
        &h3_url(&target, "/?fault=hangup&delay=5ms"),
    );
    assert_eq!(r["requests"]["successes"], 40, "{}", error_examples(&r));
    assert_eq!(target.requests(), 40, "each request served once");
    assert!(
        count(&r["connections"]["opened"]) >= 10,
        "{}",
        r["connections"]
    );
}

#[test]
fn http3_follows_redirects_on_the_same_connection() {
    let target = server_h3(ServeConfig::default());
    let r = h3_run(
        &["-n", "10", "-c", "1", "--streams", "2", "--follow", "2"],
        &h3_url(&target, "/a?status=302&location=/b%3Fsize%3D100"),
    );
    assert_eq!(r["requests"]["successes"], 10, "{}", error_examples(&r));
    assert_eq!(r["status_codes"]["200"], 10);
    // The final responses' bodies (a hop's counts in bytes.in only).
    assert_eq!(r["bytes"]["body_in"], 10 * 100);
    assert_eq!(r["connections"]["opened"], 1);
    assert_eq!(target.requests(), 20, "each request and its hop, once");
}

#[test]
fn http3_responses_are_timed_by_the_kernel() {
    // Every response's end is the kernel's arrival time of the latest
    // datagram read (SIOCGSTAMPNS on the worker's UDP socket), not pelt's
    // clock: all kernel-timed, read lag reported, and never before the
    // server could have answered.
    let target = server_h3(ServeConfig::default());
    let r = h3_run(
        &["--rate", "200", "-n", "100", "-c", "2", "--streams", "2"],
        &h3_url(&target, "/?delay=5ms"),
    );
    assert_eq!(r["requests"]["successes"], 100, "{}", error_examples(&r));
    assert_eq!(r["timing"]["clock"], "kernel", "{}", r["timing"]);
    assert_eq!(r["timing"]["kernel_timed"], 100);
    assert!(
        number(&r["timing"]["read_lag_mean_s"]) > 0.0,
        "{}",
        r["timing"]
    );
    assert!(
        number(&r["latency"]["service_time"]["min_s"]) >= 0.005,
        "{r}"
    );
}

#[test]
fn http3_keeps_cookies_per_stream_against_caddy() {
    // Caddy sets a cookie on every response; with --cookies each stream
    // (a simulated user) sends it back from its second request on, which
    // Caddy's log shows, over HTTP/3.
    let tls = self_signed_cert();
    let caddy = Caddy::start(&tls);
    let r = h3_run(
        &["--cookies", "-n", "20", "-c", "1", "--streams", "2"],
        &caddy.url("/login"),
    );
    assert_eq!(r["requests"]["successes"], 20, "{}", error_examples(&r));
    assert_eq!(r["session"]["requests_with_cookie"], 18);
    let cookies = caddy.cookies();
    assert_eq!(cookies.len(), 20);
    assert_eq!(cookies.iter().filter(|c| *c == "session=abc").count(), 18);
    assert_eq!(cookies.iter().filter(|c| c.is_empty()).count(), 2);
    assert!(caddy
        .log_lines()
        .iter()
        .all(|l| l == "GET /login 200 HTTP/3.0"));
}

/// `--0rtt`'s handshake counts from a JSON report: full, 0-RTT accepted,
/// 0-RTT rejected.
fn handshakes(r: &Value) -> [u64; 3] {
    let h = &r["connections"]["handshakes"];
    ["full", "zero_rtt_accepted", "zero_rtt_rejected"].map(|k| count(&h[k]["count"]))
}

#[test]
fn http3_0rtt_resumes_every_connection_after_the_first() {
    // A connection per request, one at a time: the first has no ticket
    // (a full handshake), each later one resumes with its request as
    // 0-RTT data, which pelt serve accepts.
    let target = server_h3(ServeConfig::default());
    let url = h3_url(&target, "/?size=100");
    let args = ["-n", "12", "-c", "1", "--no-keepalive", "--0rtt"];
    let r = h3_run(&args, &url);
    pelt_testkit::schema::run(&r);
    assert_eq!(r["requests"]["successes"], 12, "{}", error_examples(&r));
    assert_eq!(target.requests(), 12, "each request served once");
    assert_eq!(r["connections"]["opened"], 12);
    assert_eq!(r["connections"]["reused_requests"], 0);
    assert_eq!(handshakes(&r), [1, 11, 0], "{}", r["connections"]);
    // No round trip before a 0-RTT request leaves: a small part of the
    // 1-RTT handshake's time.
    let h = &r["connections"]["handshakes"];
    let (one, zero) = (
        number(&h["full"]["mean_s"]),
        number(&h["zero_rtt_accepted"]["mean_s"]),
    );
    assert!(zero > 0.0 && zero < one, "0-RTT {zero} s, full {one} s");
    // The text report's connect line, split by handshake.
    let mut all = vec!["run", "--http3", "--insecure"];
    all.extend_from_slice(&args);
    all.push(&url);
    let out = pelt().args(&all).output().unwrap();
    let text = pelt_testkit::pelt::ok_stdout(&out);
    let line = text
        .lines()
        .find(|l| l.contains("handshakes by kind"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("full 1 (mean ")
            && !line.contains("resumed")
            && line.contains("0-RTT accepted 11 (mean ")
            && line.contains("0-RTT rejected 0"),
        "{line}"
    );
    assert_eq!(target.requests(), 24);
    // Without --0rtt, no such line and no such JSON.
    let r = h3_run(&["-n", "3", "-c", "1", "--no-keepalive"], &url);
    assert_eq!(r["connections"]["opened"], 3);
    assert!(r["connections"].get("handshakes").is_none());
}

#[test]
fn http3_0rtt_handshakes_show_in_every_view() {
    // One real --0rtt run (a connection per request: 1 full handshake,
    // then 11 resumed with 0-RTT), saved, then shown in each format: the
    // split reads the same wherever it is shown (issue 26).
    let target = server_h3(ServeConfig::default());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.pelt");
    let out = pelt()
        .args(["run", "--http3", "--insecure", "--0rtt", "-q"])
        .args(["-n", "12", "-c", "1", "--no-keepalive", "-o"])
        .arg(&file)
        .arg(h3_url(&target, "/?size=100"))
        .output()
        .unwrap();
    pelt_testkit::pelt::ok(&out);
    let report = |format: &str| {
        let out = pelt()
            .arg("report")
            .arg(&file)
            .args(["--format", format])
            .output()
            .unwrap();
        pelt_testkit::pelt::ok_stdout(&out)
    };
    let r: Value = serde_json::from_str(&report("json")).unwrap();
    assert_eq!(r["requests"]["successes"], 12, "{}", error_examples(&r));
    assert_eq!(handshakes(&r), [1, 11, 0], "{}", r["connections"]);
    let split = |shown: &str, what: &str| {
        assert!(
            shown.contains("handshakes by kind")
                && shown.contains("full 1 (mean ")
                && shown.contains("; 0-RTT accepted 11 (mean ")
                && shown.contains("; 0-RTT rejected 0"),
            "{what}: {shown}"
        );
    };
    let text = report("text");
    let line = text.lines().find(|l| l.contains("handshakes by kind"));
    split(line.unwrap_or(&text), "text");
    let markdown = report("markdown");
    let row = markdown
        .lines()
        .find(|l| l.starts_with("| handshakes by kind | full "));
    split(row.unwrap_or(&markdown), "markdown");
    let html = report("html");
    let row = html
        .lines()
        .find(|l| l.starts_with("<tr><th>handshakes by kind</th><td>full "));
    split(row.unwrap_or(&html), "html");
    assert!(html.contains("0-RTT accepted: until requests could go"));
    // The CSV is the per-second timeline: no whole-run connection figures.
    let csv = report("csv");
    assert!(!csv.contains("RTT"), "{csv}");
}

#[test]
fn http3_0rtt_to_a_server_that_never_answers_fails_as_connect() {
    // The first request gets a session ticket from pelt serve. The second
    // goes to a UDP port on the same address where a socket takes every
    // datagram and answers none: tickets are kept per server name (the
    // IP), so it resumes, and its request leaves as 0-RTT data on a
    // handshake that never completes. That is a failed connect, as when
    // nothing answers a full handshake, not a read or write error.
    let target = server_h3(ServeConfig::default());
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let targets = dir.path().join("targets.txt");
    let silent_url = format!("https://127.0.0.1:{}/", silent.local_addr().unwrap().port());
    // A POST is held back until the handshake ends (0-RTT data could be
    // replayed): it fails the same way, never having left.
    for method in ["GET", "POST hello"] {
        std::fs::write(
            &targets,
            format!("{} {method}\n{silent_url} {method}\n", h3_url(&target, "/")),
        )
        .unwrap();
        let r = run_json(&[
            "run",
            "--http3",
            "--insecure",
            "--0rtt",
            "-n",
            "2",
            "-c",
            "1",
            "--no-keepalive",
            "--connect-timeout",
            "500ms",
            "-f",
            targets.to_str().unwrap(),
        ]);
        assert_eq!(r["requests"]["successes"], 1, "{}", error_examples(&r));
        assert_eq!(
            r["transport_errors"]["connect"],
            1,
            "{method}: {}",
            error_examples(&r)
        );
        assert!(
            error_examples(&r).contains("0-RTT) QUIC handshake never completed"),
            "{}",
            error_examples(&r)
        );
        // The silent server's connection ended with no handshake: no kind.
        assert_eq!(handshakes(&r), [1, 0, 0], "{}", r["connections"]);
    }
}

#[test]
fn http3_0rtt_waits_for_the_handshake_before_a_post() {
    // A POST is not sent as 0-RTT data (a replay could repeat it): it
    // waits for the handshake, which still resumes with 0-RTT.
    let target = server_h3(ServeConfig::default());
    let r = h3_run(
        &[
            "-n",
            "8",
            "-c",
            "1",
            "--no-keepalive",
            "--0rtt",
            "-m",
            "POST",
            "--body",
            "hello",
        ],
        &h3_url(&target, "/"),
    );
    assert_eq!(r["requests"]["successes"], 8, "{}", error_examples(&r));
    assert_eq!(target.requests(), 8, "each request served once");
    assert_eq!(handshakes(&r), [1, 7, 0], "{}", r["connections"]);
}

#[test]
fn http3_0rtt_rejected_requests_are_sent_again_and_answered_once() {
    // The server's tickets invite 0-RTT, and it rejects every attempt:
    // the requests sent as 0-RTT never reached it, so each goes again on
    // a connection without 0-RTT. None is lost, none served twice.
    let target = server_h3(ServeConfig {
        http3_reject_0rtt: true,
        ..ServeConfig::default()
    });
    let r = h3_run(
        &["-n", "10", "-c", "1", "--no-keepalive", "--0rtt"],
        &h3_url(&target, "/"),
    );
    pelt_testkit::schema::run(&r);
    assert_eq!(r["requests"]["successes"], 10, "{}", error_examples(&r));
    assert_eq!(target.requests(), 10, "each request served once");
    // The first: 1-RTT. Each later one: a rejected 0-RTT attempt, then
    // 1-RTT for its request (whose tickets invite 0-RTT again).
    assert_eq!(handshakes(&r), [10, 0, 9], "{}", r["connections"]);
    assert_eq!(r["connections"]["opened"], 19);
    // Streams sharing connections that end (GOAWAY after each response):
    // every new one's 0-RTT is rejected under several senders' requests.
    let r = h3_run(
        &["-n", "40", "-c", "1", "--streams", "4", "--0rtt"],
        &h3_url(&target, "/?fault=hangup&delay=5ms"),
    );
    assert_eq!(r["requests"]["successes"], 40, "{}", error_examples(&r));
    assert_eq!(target.requests(), 50, "each request served once");
    let [_, accepted, rejected] = handshakes(&r);
    assert_eq!(accepted, 0);
    assert!(rejected >= 1, "{}", r["connections"]);
}

#[test]
fn zero_rtt_without_http3_is_a_usage_error() {
    let out = pelt()
        .args(["run", "--0rtt", "-n", "1", "https://127.0.0.1:1/"])
        .output()
        .unwrap();
    let err = pelt_testkit::pelt::bad_input(&out, "--0rtt without --http3");
    assert!(
        err.contains("--0rtt") && err.contains("add --http3"),
        "{err}"
    );
    let out = pelt()
        .args([
            "run",
            "--http3",
            "--no-keepalive",
            "--streams",
            "2",
            "-n",
            "1",
            "https://127.0.0.1:1/",
        ])
        .output()
        .unwrap();
    let err = pelt_testkit::pelt::bad_input(&out, "--no-keepalive --streams 2 --http3");
    assert!(err.contains("one stream each"), "{err}");
}

#[test]
fn http3_0rtt_against_caddy() {
    // Caddy (quic-go) gives tickets that invite 0-RTT, and accepts it;
    // its log shows each request once. It answers a 0-RTT request before
    // the handshake ends and sends its ticket after that: pelt keeps each
    // connection open one request longer (--no-keepalive --0rtt), so that
    // every connection after the first two resumes (the second is dialled
    // before the first's ticket came).
    let tls = self_signed_cert();
    let caddy = Caddy::start(&tls);
    let r = h3_run(
        &["-n", "10", "-c", "1", "--no-keepalive", "--0rtt"],
        &caddy.url("/ok"),
    );
    assert_eq!(r["requests"]["successes"], 10, "{}", error_examples(&r));
    assert_eq!(caddy.log_lines(), vec!["GET /ok 200 HTTP/3.0"; 10]);
    let [one, accepted, rejected] = handshakes(&r);
    assert_eq!((one + accepted, rejected), (10, 0), "{}", r["connections"]);
    assert!(accepted >= 8, "{}", r["connections"]);
    // Kept alive: two connections, and no other is needed; the second
    // resumes only if its worker dialled after the first's ticket came.
    let r = h3_run(&["-n", "10", "-c", "2", "--0rtt"], &caddy.url("/ok"));
    assert_eq!(r["requests"]["successes"], 10, "{}", error_examples(&r));
    let [one, accepted, rejected] = handshakes(&r);
    assert_eq!((one + accepted, rejected), (2, 0), "{}", r["connections"]);
    assert!(one >= 1, "{}", r["connections"]);
    assert_eq!(caddy.log_lines().len(), 20);
}

#[test]
fn http3_0rtt_handshakes_of_shards_add_when_merged() {
    // Two shards, each one connection at a time: each has its own
    // first (1-RTT) handshake; merged, the counts are the sums.
    let target = server_h3(ServeConfig::default());
    let url = h3_url(&target, "/");
    let data = tempfile::tempdir().unwrap();
    let files: Vec<String> = (0..2)
        .map(|i| {
            data.path()
                .join(format!("part{i}.pelt"))
                .display()
                .to_string()
        })
        .collect();
    for (i, file) in files.iter().enumerate() {
        let shard = format!("{i}/2");
        let r = h3_run(
            &[
                "-n",
                "12",
                "-c",
                "2",
                "--no-keepalive",
                "--0rtt",
                "--shard",
                &shard,
                "-q",
                "-o",
                file,
            ],
            &url,
        );
        assert_eq!(handshakes(&r), [1, 5, 0], "shard {i}: {}", r["connections"]);
    }
    let out = pelt()
        .args([
            "report", "--merge", &files[0], &files[1], "--format", "json",
        ])
        .output()
        .unwrap();
    let merged = pelt_testkit::pelt::ok_json(&out);
    pelt_testkit::schema::run(&merged);
    assert_eq!(merged["requests"]["successes"], 12);
    assert_eq!(handshakes(&merged), [2, 10, 0], "{}", merged["connections"]);
    assert_eq!(target.requests(), 12);
}
