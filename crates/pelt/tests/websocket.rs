//! WebSocket runs (issue 40) against real servers on loopback: an echo
//! server on Python's websockets (pelt-testkit's `WsServer`), which logs
//! each connection with the messages it received (the witness: pelt's
//! sent must equal the server's received), and nginx proxying the
//! upgrade in front of it, plain and over TLS, its access log a second
//! witness. Misbehaving servers (200 instead of 101, a wrong accept, a
//! masked frame, an oversized frame, bad UTF-8, a server that never
//! closes) are the engine's tests (`transport/ws/tests.rs`), where a
//! scripted server can break the protocol on purpose.

use pelt_testkit::nginx::{self_signed_cert, Nginx};
use pelt_testkit::pelt::{bad_input, count, number, pelt, run_json, server};
use pelt_testkit::websocket::WsServer;
use serde_json::Value;

/// The report, checked against its schema, and its WebSocket figures.
fn websocket(r: &Value) -> &Value {
    pelt_testkit::schema::run(r);
    let w = &r["websocket"];
    assert!(
        w.is_object(),
        "no websocket figures: {}",
        r["error_examples"]
    );
    w
}

/// Messages the server received over `n` connections.
fn received(server: &WsServer, n: usize) -> u64 {
    let conns = server.conns(n);
    assert_eq!(conns.len(), n, "{conns:?}");
    conns.iter().map(|c| c.received).sum()
}

#[test]
fn a_closed_loop_sends_exactly_n_messages_and_the_server_receives_them() {
    let server = WsServer::start();
    let url = server.url("/echo");
    let r = run_json(&["run", &url, "--body", "hello", "-c", "4", "-n", "200"]);
    let w = websocket(&r);
    let req = &r["requests"];
    assert_eq!(count(&req["sent"]), 200);
    assert_eq!((count(&req["successes"]), count(&req["failed"])), (200, 0));
    // The witness: every message sent was received, on four connections
    // each closed by pelt's close handshake (1000).
    assert_eq!(received(&server, 4), 200);
    assert!(server.conns(4).iter().all(|c| c.close_code == Some(1000)));
    assert_eq!(count(&w["upgrades"]), 4);
    assert_eq!(count(&w["closes"]["1000"]), 4);
    assert_eq!(count(&r["connections"]["opened"]), 4);
    // Each reply is the echo: five bytes of body per message.
    assert_eq!(count(&r["bytes"]["body_in"]), 1000, "{}", r["bytes"]);
    // A round trip is timed, and the upgrade too.
    assert!(number(&r["latency"]["service_time"]["min_s"]) > 0.0);
    assert!(number(&w["upgrade"]["max_s"]) > 0.0);
}

/// A `-c` schedule that ramps down closes each connection it no longer
/// needs with the close handshake (1000), as the run's end does: the
/// server sees four clean closes, none abnormal (1006).
#[test]
fn a_schedule_ramping_down_closes_with_the_handshake() {
    let server = WsServer::start();
    let url = server.url("/echo");
    let r = run_json(&["run", &url, "--body", "hi", "-c", "4..1/1s", "-d", "2s"]);
    let w = websocket(&r);
    assert_eq!(count(&w["upgrades"]), 4, "{w}");
    assert_eq!(count(&w["closes"]["1000"]), 4, "{w}");
    assert!(server.conns(4).iter().all(|c| c.close_code == Some(1000)));
}

/// `pelt serve` answers upgrades (echo, with its delay): a closed loop
/// gets every message back at the delay, and a rate run's upgrades, made
/// before its start, are timed (they read 0 on the run's clock once).
#[test]
fn pelt_serve_echoes_after_its_delay_and_upgrades_are_timed_in_rate_runs() {
    let target = server(None);
    let url = format!("ws://{}/?delay=2ms", target.local_addr());
    let r = run_json(&["run", &url, "--body", "hello", "-c", "4", "-n", "100"]);
    let req = &r["requests"];
    assert_eq!((count(&req["successes"]), count(&req["failed"])), (100, 0));
    assert_eq!(count(&r["bytes"]["body_in"]), 500, "{}", r["bytes"]);
    assert!(number(&r["latency"]["service_time"]["min_s"]) >= 0.002);
    assert_eq!(count(&websocket(&r)["closes"]["1000"]), 4);
    let url = format!("ws://{}/", target.local_addr());
    let r = run_json(&[
        "run", &url, "--body", "tick", "--rate", "200", "-d", "1s", "-c", "4",
    ]);
    let w = websocket(&r);
    assert!(count(&w["upgrades"]) >= 1, "{w}");
    assert!(number(&w["upgrade"]["p50_s"]) > 0.0, "{w}");
    // `--assert` judges the upgrades by their own name.
    let url = format!("ws://{}/", target.local_addr());
    let judged = |term: &str| {
        pelt()
            .args(["run", &url, "--body", "x", "-c", "2", "-n", "10"])
            .args(["--assert", term, "--no-save"])
            .output()
            .unwrap()
    };
    let out = judged("ws_upgrade p99 < 10s");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = judged("ws_upgrade.max < 1ns");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("WebSocket upgrade"), "{text}");
}

#[test]
fn an_open_loop_offers_messages_per_second_and_the_server_receives_every_one_sent() {
    let server = WsServer::start();
    let url = server.url("/echo");
    let r = run_json(&[
        "run", &url, "--body", "tick", "--rate", "200", "-d", "1s", "-c", "8",
    ]);
    websocket(&r);
    assert_eq!(r["mode"], "rate");
    assert_eq!(number(&r["offered_rate"]), 200.0);
    let req = &r["requests"];
    // A schedule of 200 messages in the second; each one sent reached the
    // server (counted there), and each one planned is sent, failed or
    // counted unfinished: none dropped.
    assert_eq!(count(&req["planned"]), 200);
    let sent = count(&req["sent"]);
    assert_eq!(
        received(&server, count(&r["websocket"]["closes"]["1000"]) as usize),
        sent
    );
    assert_eq!(count(&req["successes"]) + count(&req["failed"]), 200);
    assert!(
        r["latency"]["response_time"].is_object(),
        "timed from the schedule"
    );
}

#[test]
fn subprotocols_headers_and_cookies_go_with_the_upgrade() {
    let server = WsServer::start();
    let url = server.url("/echo");
    let r = run_json(&[
        "run",
        &url,
        "--body",
        "{}",
        "-n",
        "3",
        "-c",
        "1",
        "--ws-protocol",
        "nope",
        "--ws-protocol",
        "chat.v2",
        "-H",
        "X-Test: yes",
        "-H",
        "Cookie: sid=42",
    ]);
    assert_eq!(count(&r["requests"]["successes"]), 3);
    let conns = server.conns(1);
    assert_eq!(conns[0].subprotocol.as_deref(), Some("chat.v2"));
    assert_eq!(conns[0].x_test.as_deref(), Some("yes"));
    assert_eq!(conns[0].cookie.as_deref(), Some("sid=42"));
    assert_eq!(conns[0].received, 3);
    assert_eq!(r["config"]["http"]["ws"]["protocols"][1], "chat.v2");
}

#[test]
fn binary_messages_go_from_a_body_file_byte_for_byte() {
    let server = WsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("msg.bin");
    // Not UTF-8: only a binary frame can carry it.
    let body: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
    std::fs::write(&file, &body).unwrap();
    let url = server.url("/echo");
    let path = file.to_str().unwrap();
    let r = run_json(&[
        "run",
        &url,
        "--body-file",
        path,
        "--ws-binary",
        "-c",
        "2",
        "-n",
        "10",
    ]);
    assert_eq!(count(&r["requests"]["successes"]), 10);
    let conns = server.conns(2);
    assert_eq!(conns.iter().map(|c| c.bytes).sum::<u64>(), 10_000);
    assert_eq!(count(&r["bytes"]["body_in"]), 10_000);
    // Without --ws-binary it cannot go as text: refused before any load.
    let out = pelt()
        .args(["run", &url, "--body-file", path, "-n", "1"])
        .output()
        .unwrap();
    assert!(bad_input(&out, "text").contains("--ws-binary"));
}

#[test]
fn a_server_close_fails_the_message_in_flight_as_ws_closed_with_its_code() {
    let server = WsServer::start();
    // Two echoes per connection, then a close with 1011 instead of the
    // third reply; six messages take two connections.
    let url = server.url("/close?after=2&code=1011");
    let r = run_json(&["run", &url, "--body", "x", "-c", "1", "-n", "6"]);
    let w = websocket(&r);
    assert_eq!(count(&r["requests"]["successes"]), 4);
    assert_eq!(count(&r["failures"]["ws_closed"]), 2, "{}", r["failures"]);
    assert_eq!(count(&r["requests"]["failed"]), 2);
    assert_eq!(count(&w["closes"]["1011"]), 2, "{w}");
    assert_eq!(received(&server, 2), 6, "the third of each was received");
}

#[test]
fn the_text_report_counts_messages() {
    let server = WsServer::start();
    let url = server.url("/echo");
    let out = pelt()
        .args([
            "run", &url, "--body", "hi", "-c", "2", "-n", "20", "--rate", "100",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("WebSocket ws://127.0.0.1:"), "{text}");
    assert!(text.contains("Messages     20 planned"), "{text}");
    assert!(
        text.contains("messages/s of 100 messages/s offered"),
        "{text}"
    );
    assert!(text.contains("WebSocket    2 upgrades"), "{text}");
    assert!(text.contains("closes 1000 ×2"), "{text}");
    assert!(!text.contains("req/s offered"), "{text}");
}

#[test]
fn bad_websocket_flags_exit_2_with_one_line() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["ws://127.0.0.1:9/", "--ws-protocol", "a b"],
            "not a token",
        ),
        (&["ws://127.0.0.1:9/", "--http2"], "cannot use HTTP/2"),
        (
            &["ws://127.0.0.1:9/", "--max-message", "0"],
            "at least 1 byte",
        ),
        (
            &["ws://127.0.0.1:9/", "--max-message", "lots"],
            "is not a size",
        ),
        (&["ws://127.0.0.1:9/", "-m", "POST"], "always a GET"),
        (
            &["http://127.0.0.1:9/", "--ws-binary"],
            "for WebSocket runs",
        ),
    ];
    for (args, says) in cases {
        let out = pelt().arg("run").args(args).output().unwrap();
        let err = bad_input(&out, &format!("{args:?}"));
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// A targets file that names a method for a ws:// target, and a wss://
/// target over a Unix socket, are refused before anything is sent.
#[test]
fn a_targets_file_method_and_tls_over_a_unix_socket_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let targets = dir.path().join("targets.txt");
    std::fs::write(&targets, "POST ws://127.0.0.1:9/chat\n").unwrap();
    let out = pelt()
        .args(["run", "-f"])
        .arg(&targets)
        .args(["-n", "1"])
        .output()
        .unwrap();
    let err = bad_input(&out, "POST in a targets file");
    assert!(err.contains("drop the method POST"), "{err}");
    let out = pelt()
        .args(["run", "wss://127.0.0.1:9/", "--unix-socket"])
        .arg(dir.path().join("sock"))
        .output()
        .unwrap();
    let err = bad_input(&out, "wss over a Unix socket");
    assert!(err.contains("ws://, not wss://"), "{err}");
}

/// nginx in front, proxying the upgrade (Upgrade and Connection passed
/// on), plain and over TLS (wss:// to nginx, ws:// behind it): pelt's
/// sent equals the server's received, and nginx logged one 101 per
/// connection.
#[test]
fn through_nginx_plain_and_over_tls() {
    let server = WsServer::start();
    let upstream = format!("http://127.0.0.1:{}", server.port());
    let location = format!(
        "location /ws/ {{ proxy_pass {upstream}/; proxy_http_version 1.1; \
         proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection \"upgrade\"; }}\n"
    );
    let plain = Nginx::start(&location);
    let url = plain.url("/ws/echo").replacen("http://", "ws://", 1);
    let r = run_json(&["run", &url, "--body", "via nginx", "-c", "3", "-n", "60"]);
    websocket(&r);
    assert_eq!(count(&r["requests"]["successes"]), 60);
    assert_eq!(received(&server, 3), 60);
    let log = plain.access_log_lines(Some(3));
    assert_eq!(
        log.iter()
            .filter(|l| l.starts_with("GET /ws/echo 101 "))
            .count(),
        3,
        "{log:?}"
    );

    let tls = self_signed_cert();
    let secure = Nginx::start_tls(&location, &tls);
    let url = format!("wss://127.0.0.1:{}/ws/echo", secure.port());
    let r = run_json(&[
        "run",
        &url,
        "--body",
        "secret",
        "-c",
        "2",
        "-n",
        "40",
        "--insecure",
    ]);
    websocket(&r);
    assert_eq!(count(&r["requests"]["successes"]), 40);
    assert_eq!(count(&r["connections"]["opened"]), 2);
    assert_eq!(received(&server, 5), 100, "60 before, 40 over TLS");
}

/// A saved run reports its WebSocket figures as it did live: upgrades
/// and closes are in the results file, second by second.
#[test]
fn a_saved_run_reports_the_same_websocket_figures() {
    let server = WsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ws.pelt");
    let file = file.to_str().unwrap();
    let url = server.url("/close?after=3&code=4000");
    let live = run_json(&[
        "run", &url, "--body", "x", "-c", "2", "-n", "16", "-o", file,
    ]);
    let w = websocket(&live);
    // Four messages a connection, the fourth refused with a close: four
    // connections, two of them per sender.
    assert_eq!(count(&w["closes"]["other"]), 4, "{w}");
    let out = pelt()
        .args(["report", file, "--format", "json"])
        .output()
        .unwrap();
    let saved = pelt_testkit::pelt::ok_json(&out);
    assert_eq!(websocket(&saved), w);
    assert_eq!(saved["requests"], live["requests"]);
    assert_eq!(received(&server, 4), 16);
}
