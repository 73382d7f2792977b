//! Connection control: --host, --connect-to, --unix-socket, --connect-rate
//! and --follow, against nginx (whose logs say what arrived) and the
//! built-in server.

use pelt_testkit::nginx::Nginx;
use pelt_testkit::pelt::{
    count, exclusive, number, pelt, run_json, run_json_no_response, run_json_nothing_succeeded,
    server,
};
use serde_json::Value;
use std::collections::HashSet;

/// The Host header of each line of nginx's connection log.
fn hosts(lines: &[String]) -> HashSet<String> {
    lines
        .iter()
        .map(|l| l.split(' ').nth(1).unwrap_or("").to_string())
        .collect()
}

fn example_message(r: &Value, kind: &str) -> String {
    r["error_examples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} example in {}", r["error_examples"]))["message"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn host_flag_sets_the_host_header_and_replaces_h() {
    let nginx = Nginx::start("");
    let r = run_json(&[
        &nginx.url("/ok"),
        "-n",
        "20",
        "-c",
        "2",
        "-H",
        "Host: from-h.test",
        "--host",
        "api.example.test:8080",
    ]);
    assert_eq!(r["requests"]["successes"], 20);
    let lines = nginx.conn_log_lines(20);
    assert_eq!(lines.len(), 20);
    assert_eq!(
        hosts(&lines),
        HashSet::from(["api.example.test:8080".to_string()])
    );
}

#[test]
fn bad_host_and_connect_to_exit_2_with_one_line() {
    for args in [
        &["http://127.0.0.1:1/", "--host", ""][..],
        &["http://127.0.0.1:1/", "--host", "a b"],
        &["http://127.0.0.1:1/", "--connect-to", "a:1:b"],
        &["http://127.0.0.1:1/", "--connect-rate", "-5"],
        &["http://127.0.0.1:1/", "--follow-any-host"],
    ] {
        let out = pelt().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
    }
}

#[test]
fn connect_to_keeps_the_url_and_changes_the_address() {
    let nginx = Nginx::start("");
    let map = format!("example.test:80:127.0.0.1:{}", nginx.port());
    let r = run_json(&[
        "http://example.test:80/ok",
        "--connect-to",
        "nowhere.test::127.0.0.1:1",
        "--connect-to",
        &map,
        "-n",
        "30",
        "-c",
        "3",
    ]);
    assert_eq!(r["requests"]["successes"], 30);
    let lines = nginx.conn_log_lines(30);
    assert_eq!(lines.len(), 30);
    // The URL's host (port 80 is the default, so it is not in the header).
    assert_eq!(hosts(&lines), HashSet::from(["example.test".to_string()]));

    // The built-in server too, with an empty HOST matching any host.
    let s = server(None);
    let map = format!(":80:127.0.0.1:{}", s.local_addr().port());
    let r = run_json(&["http://example.test/", "--connect-to", &map, "-n", "25"]);
    assert_eq!(r["requests"]["successes"], 25);
    assert_eq!(s.requests(), 25);
}

#[test]
fn unix_socket_carries_http1_and_h2c() {
    let nginx = Nginx::start("");
    let sock = nginx.unix_socket();
    let r = run_json(&[
        "http://app.test/ok",
        "--unix-socket",
        sock.to_str().unwrap(),
        "-n",
        "50",
        "-c",
        "5",
    ]);
    assert_eq!(r["requests"]["successes"], 50);
    assert!(count(&r["connections"]["opened"]) >= 5);
    assert_eq!(r["connections"]["reused_requests"], 45);
    let lines = nginx.access_log_lines(Some(50));
    assert_eq!(lines.len(), 50);
    assert!(lines.iter().all(|l| l.starts_with("GET /ok 200 3 ")));
    assert_eq!(
        hosts(&nginx.conn_log_lines(50)),
        HashSet::from(["app.test".to_string()])
    );

    let h2 = Nginx::start_h2("", None);
    let sock = h2.unix_socket();
    let r = run_json(&[
        "http://app.test/ok",
        "--unix-socket",
        sock.to_str().unwrap(),
        "--http2",
        "--streams",
        "4",
        "-n",
        "40",
        "-c",
        "2",
    ]);
    assert_eq!(r["requests"]["successes"], 40);
    let lines = h2.access_log_lines(Some(40));
    assert_eq!(lines.len(), 40);
    assert!(lines.iter().all(|l| l.ends_with("HTTP/2.0")), "{lines:?}");
}

#[test]
fn a_missing_unix_socket_is_a_connect_error() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("absent.sock");
    let r = run_json_no_response(&[
        "http://app.test/",
        "--unix-socket",
        sock.to_str().unwrap(),
        "-n",
        "3",
        "-c",
        "1",
    ]);
    assert_eq!(r["transport_errors"]["connect"], 3);
    let msg = example_message(&r, "connect");
    assert!(
        msg.contains("absent.sock") && msg.contains("--unix-socket"),
        "{msg}"
    );
}

#[test]
fn connect_rate_caps_new_connections() {
    // Counts connections per second: no other test's load alongside.
    let _machine = exclusive();
    let nginx = Nginx::start("");
    let r = run_json(&[
        &nginx.url("/ok"),
        "--no-keepalive",
        "-c",
        "20",
        "-t",
        "2",
        "--connect-rate",
        "200",
        "-d",
        "2s",
    ]);
    let opened = count(&r["connections"]["opened"]);
    assert!((360..=440).contains(&opened), "opened {opened}");
    assert_eq!(r["transport_errors"]["connect"], 0);
    let lines = nginx.conn_log_lines(opened as usize);
    let conns: HashSet<&str> = lines.iter().filter_map(|l| l.split(' ').next()).collect();
    assert!(
        (360..=440).contains(&conns.len()),
        "nginx saw {} connections",
        conns.len()
    );
    // Without the cap the same run opens many more (thousands a second
    // when the machine is quiet; the bound leaves room for a busy one).
    let r = run_json(&[
        &nginx.url("/ok"),
        "--no-keepalive",
        "-c",
        "20",
        "-t",
        "2",
        "-d",
        "1s",
    ]);
    let uncapped = count(&r["connections"]["opened"]);
    assert!(uncapped > 600, "opened {uncapped} in 1 s without a cap");
}

/// Waiters used to book connection slots ahead; one whose request timed
/// out while waiting left its slot booked and unused, and the queue ran
/// away: 40 waiters at 20/s with a 1 s timeout opened 20 connections in 6 s.
#[test]
fn connect_rate_slots_of_timed_out_waiters_are_not_lost() {
    // Counts connections per second: no other test's load alongside.
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    let r = run_json(&[
        &url,
        "--no-keepalive",
        "-c",
        "40",
        "-t",
        "1",
        "--connect-rate",
        "20",
        "--timeout",
        "1s",
        "-d",
        "3s",
    ]);
    let opened = count(&r["connections"]["opened"]);
    assert!(
        (50..=65).contains(&opened),
        "opened {opened} in 3 s at 20/s"
    );
}

#[test]
fn connect_rate_waits_show_as_send_lag_in_rate_mode() {
    // Counts connections per second: no other test's load alongside.
    let _machine = exclusive();
    let s = server(None);
    let url = format!("http://{}/", s.local_addr());
    // 100 req/s, each on a new connection, but only 20 connections/s.
    let r = run_json(&[
        &url,
        "--rate",
        "100",
        "--no-keepalive",
        "-t",
        "1",
        "--connect-rate",
        "20",
        "-d",
        "1s",
        "--timeout",
        "10s",
    ]);
    // Request k is due at k × 10 ms but gets its connection at k × 50 ms:
    // the lag grows by 40 ms a request until the grace after the run ends
    // (2 s) cuts the rest off as unfinished.
    let lag = number(&r["latency"]["send_lag"]["max_s"]);
    assert!(lag > 1.5, "send lag max {lag}");
    let opened = count(&r["connections"]["opened"]);
    assert!((50..=65).contains(&opened), "opened {opened}");
    assert!(count(&r["transport_errors"]["unfinished"]) >= 30);
}

#[test]
fn redirects_are_responses_unless_followed() {
    let s = server(None);
    let base = format!("http://{}", s.local_addr());
    let url = format!("{base}/old?status=302&location=/new");
    let r = run_json(&[&url, "-n", "10", "-c", "1"]);
    assert_eq!(r["status_codes"]["302"], 10);
    assert_eq!(s.requests(), 10);

    let r = run_json(&[&url, "-n", "10", "-c", "1", "--follow", "1"]);
    assert_eq!(r["requests"]["total"], 10);
    assert_eq!(r["status_codes"]["200"], 10);
    assert!(r["status_codes"].get("302").is_none());
    assert_eq!(s.requests(), 30, "each request and its redirect");
    assert_eq!(r["connections"]["reused_requests"], 9);
    assert_eq!(
        r["connections"]["opened"], 1,
        "followed on the same connection"
    );

    // The redirect's time is in the request's latency.
    let slow = format!("{base}/?status=307&location=/%3Fdelay%3D100ms");
    let r = run_json(&[&slow, "-n", "5", "-c", "1", "--follow", "3"]);
    assert_eq!(r["status_codes"]["200"], 5);
    assert!(number(&r["latency"]["response_time"]["min_s"]) >= 0.1);
}

#[test]
fn redirect_limits_hosts_and_bad_locations_are_errors() {
    let s = server(None);
    let port = s.local_addr().port();
    let base = format!("http://127.0.0.1:{port}");
    // A chain of two redirects, followed only one deep.
    let chain = format!("{base}/?status=302&location=/%3Fstatus%3D301%26location%3D/");
    let r = run_json_nothing_succeeded(&[&chain, "-n", "4", "-c", "1", "--follow", "1"]);
    assert_eq!(r["transport_errors"]["invalid_response"], 4);
    assert!(example_message(&r, "invalid_response").contains("more than --follow 1"));
    let r = run_json(&[&chain, "-n", "4", "-c", "1", "--follow", "2"]);
    assert_eq!(r["status_codes"]["200"], 4);

    // Another origin (same server, another name): refused, then followed.
    let other = format!("{base}/?status=302&location=http://localhost:{port}/x");
    let r = run_json_nothing_succeeded(&[&other, "-n", "4", "-c", "1", "--follow", "5"]);
    assert_eq!(r["transport_errors"]["invalid_response"], 4);
    assert!(example_message(&r, "invalid_response").contains("--follow-any-host"));
    let r = run_json(&[
        &other,
        "-n",
        "4",
        "-c",
        "1",
        "--follow",
        "5",
        "--follow-any-host",
    ]);
    assert_eq!(r["status_codes"]["200"], 4);
    // One connection to the target, one per followed redirect elsewhere.
    assert_eq!(r["connections"]["opened"], 5);

    // A Location that is not a URL pelt can load.
    let bad = format!("{base}/?status=302&location=ftp://x/");
    let r = run_json_nothing_succeeded(&[&bad, "-n", "2", "-c", "1", "--follow", "1"]);
    assert_eq!(r["transport_errors"]["invalid_response"], 2);
    assert!(example_message(&r, "invalid_response").contains("only http"));
}

#[test]
fn nginx_redirects_switch_methods_like_browsers() {
    let nginx = Nginx::start(
        "        location = /see-other { return 303 /ok; }\n\
         location = /moved { return 302 /ok; }\n\
         location = /temporary { return 307 /ok; }\n",
    );
    for (path, method, then) in [
        ("/see-other", "POST", "GET"),
        ("/moved", "POST", "GET"),
        ("/moved", "PUT", "PUT"),
        ("/temporary", "POST", "POST"),
    ] {
        let before = nginx.access_log_lines(None).len();
        let r = run_json(&[
            &nginx.url(path),
            "-m",
            method,
            "--body",
            "hello",
            "-n",
            "3",
            "-c",
            "1",
            "--follow",
            "2",
        ]);
        assert_eq!(r["status_codes"]["200"], 3, "{method} {path}");
        let lines = nginx.access_log_lines(Some(before + 6));
        let new = &lines[before..];
        assert_eq!(new.len(), 6, "{new:?}");
        for pair in new.chunks(2) {
            assert!(
                pair[0].starts_with(&format!("{method} {path} 30")),
                "{pair:?}"
            );
            assert!(pair[1].starts_with(&format!("{then} /ok 200")), "{pair:?}");
        }
    }
}

#[test]
fn http2_follows_same_origin_redirects_on_its_connection() {
    let nginx = Nginx::start_h2(
        "        location = /see-other { return 303 /ok; }\n\
         location = /chain { return 307 /see-other; }\n",
        None,
    );
    let r = run_json(&[
        &nginx.url("/chain"),
        "--http2",
        "-m",
        "POST",
        "--body",
        "hello",
        "-n",
        "5",
        "-c",
        "1",
        "--follow",
        "2",
    ]);
    assert_eq!(r["status_codes"]["200"], 5, "{}", r["error_examples"]);
    assert_eq!(r["connections"]["opened"], 1);
    let lines = nginx.access_log_lines(Some(15));
    assert_eq!(lines.len(), 15);
    for triple in lines.chunks(3) {
        assert!(triple[0].starts_with("POST /chain 307 "), "{triple:?}");
        assert!(triple[1].starts_with("POST /see-other 303 "), "{triple:?}");
        assert!(triple[2].starts_with("GET /ok 200 "), "{triple:?}");
        assert!(triple.iter().all(|l| l.ends_with("HTTP/2.0")));
    }
    // One more than allowed is an error.
    let r = run_json_nothing_succeeded(&[
        &nginx.url("/chain"),
        "--http2",
        "-n",
        "3",
        "-c",
        "1",
        "--follow",
        "1",
    ]);
    assert_eq!(r["transport_errors"]["invalid_response"], 3);
}

#[test]
fn connect_to_works_over_tls_with_the_urls_name() {
    let tls = pelt_testkit::nginx::self_signed_cert();
    let nginx = Nginx::start_tls("", &tls);
    let map = format!("secure.test:443:127.0.0.1:{}", nginx.port());
    let r = run_json(&[
        "https://secure.test/ok",
        "--connect-to",
        &map,
        "--insecure",
        "-n",
        "10",
        "-c",
        "2",
    ]);
    assert_eq!(r["requests"]["successes"], 10, "{}", r["error_examples"]);
    assert!(count(&r["latency"]["tls"]["count"]) >= 1);
    assert_eq!(
        hosts(&nginx.conn_log_lines(10)),
        HashSet::from(["secure.test".to_string()])
    );
}

/// Issue 27: `--source-addresses` binds connections to local addresses
/// in turn: nginx sees them come from each, counts exact. A foreign
/// address, a range backwards or a family without a source is refused
/// before any load, in one line.
#[test]
fn source_addresses_spread_connections_over_local_addresses() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("peers.log");
    let http = format!(
        "log_format peer '$remote_addr $connection';\n    access_log \"{}\" peer;",
        log.display()
    );
    let nginx = Nginx::start_http(&http, "");
    for list in ["127.0.0.2-127.0.0.9", "127.0.0.8/29"] {
        let before = nginx.access_log_lines(None).len();
        let r = run_json(&[
            &nginx.url("/ok"),
            "--source-addresses",
            list,
            "-c",
            "32",
            "-t",
            "2",
            "-n",
            "640",
        ]);
        assert_eq!(r["requests"]["successes"], 640, "{}", r["error_examples"]);
        assert_eq!(count(&r["connections"]["opened"]), 32);
        let first = pelt_core::parse_source_addresses(list).unwrap()[0].to_string();
        assert_eq!(r["config"]["http"]["source_addresses"][0], first.as_str());
        nginx.access_log_lines(Some(before + 640));
        let text = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<&str> = text.lines().skip(before).collect();
        assert_eq!(lines.len(), 640);
        // Connections (nginx's serial numbers) by the address they came from.
        let mut by_addr = std::collections::HashMap::<&str, HashSet<&str>>::new();
        for l in &lines {
            let (addr, conn) = l.split_once(' ').unwrap();
            by_addr.entry(addr).or_default().insert(conn);
        }
        let want: HashSet<String> = pelt_core::parse_source_addresses(list)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        let got: HashSet<String> = by_addr.keys().map(|a| a.to_string()).collect();
        assert_eq!(got, want, "{list}: every address used, no other");
        // 32 connections over 8 addresses in turn: 4 each.
        assert!(
            by_addr.values().all(|c| c.len() == 4),
            "{list}: {by_addr:?}"
        );
    }
    for (list, says) in [
        ("127.0.0.9-127.0.0.2", "runs backwards"),
        // TEST-NET-1: documentation only, never a machine's.
        ("192.0.2.1", "cannot use 192.0.2.1"),
        ("::1", "no address of the family of 127.0.0.1:"),
        ("127.0.0.0/8", "more than 65536 addresses"),
    ] {
        let out = pelt()
            .args([&nginx.url("/ok"), "--source-addresses", list, "-n", "1"])
            .output()
            .unwrap();
        let err = pelt_testkit::pelt::bad_input(&out, list);
        assert!(
            err.starts_with("error: ") && err.contains(says),
            "{list}: {err}"
        );
        assert!(err.contains("--source-addresses"), "{err}");
    }
}

/// Issue 27: 10,000 keep-alive connections at once from two source
/// addresses, held for 3 s with a request on each every second: every one
/// opens, nginx sees each (by its serial number) and every request, and
/// pelt's counts are exactly nginx's. (100,000: bench/connections.sh,
/// which needs more descriptors and memory than a CI runner has.)
#[test]
fn ten_thousand_connections_are_held_and_counted_exactly() {
    let _machine = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("peers.log");
    let http = format!(
        "log_format peer '$connection $remote_addr';\n    access_log \"{}\" peer;",
        log.display()
    );
    let n = 10_000;
    let nginx = Nginx::start_for_connections(n, &http);
    // pelt needs a descriptor per connection: above the usual 1,024.
    let out = pelt_testkit::pelt::under("prlimit", ["--nofile=12000"])
        .args(["run", &nginx.url("/ok"), "-c", "10000", "-t", "2"])
        .args(["--delay", "1s", "-d", "3s", "--timeout", "20s"])
        .args(["--source-addresses", "127.0.0.2-127.0.0.3"])
        .args(["--format", "json", "--no-save"])
        .output()
        .expect("prlimit (util-linux) runs pelt");
    let r = pelt_testkit::pelt::ok_json(&out);
    assert_eq!(
        count(&r["connections"]["opened"]),
        n as u64,
        "{}",
        r["error_examples"]
    );
    let requests = count(&r["requests"]["total"]);
    assert_eq!(count(&r["requests"]["successes"]), requests);
    assert!(
        requests >= n as u64,
        "at least one request per connection: {requests}"
    );
    nginx.access_log_lines(Some(requests as usize));
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len() as u64,
        requests,
        "nginx logged every request, once"
    );
    let conns: HashSet<&str> = lines.iter().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(conns.len(), n, "nginx saw every connection");
    let addrs: HashSet<&str> = lines.iter().map(|l| l.split(' ').nth(1).unwrap()).collect();
    assert_eq!(addrs, HashSet::from(["127.0.0.2", "127.0.0.3"]));
}

/// Issue 27: `--connect-rate` with thousands of connections waiting on a
/// worker (held open, a request each second). Every waiter slept until
/// the next token and woke with the others, so each connection opened
/// woke all of them: 5,000 waiters at 2,500/s kept their worker on a CPU
/// for 1.3 – 1.5 s of the 2 s (a debug build), and 100,000 connections
/// at 20,000/s from six processes on two cores opened 21,741 in 10 s.
/// One waiter now sleeps for the token and hands the turn on: 0.15 –
/// 0.25 s here, and 76,946 of the 100,000.
#[test]
fn connect_rate_with_thousands_of_waiters_keeps_its_pace() {
    let _machine = exclusive();
    let nginx = Nginx::start_for_connections(5_000, "");
    // The pace is the test's truth: nginx and pelt run ahead of other
    // work (at a load average of 8 to 13 pelt opened 2,496 of 5,000).
    pelt_testkit::pinned::put_ahead(nginx.pid());
    let out = pelt_testkit::pinned::ahead_under("prlimit", &["--nofile=7000"])
        .args(["run", &nginx.url("/ok"), "-c", "5000", "-t", "1"])
        .args(["--connect-rate", "2500", "-d", "2s", "--delay", "1s"])
        .args(["--format", "json", "--no-save"])
        .output()
        .expect("prlimit (util-linux) runs pelt");
    let r = pelt_testkit::pelt::ok_json(&out);
    let opened = count(&r["connections"]["opened"]);
    // 2 s at 2,500/s: 5,000, less what a busy machine's debug build
    // cannot keep up with.
    assert!(
        (3_000..=5_000).contains(&opened),
        "opened {opened} in 2 s at 2,500/s"
    );
    let on_cpu = number(&r["client_threads"][0]["on_cpu"]);
    assert!(
        on_cpu < 0.5,
        "the worker was on a CPU {on_cpu:.2} of the run to open {opened} connections"
    );
}
