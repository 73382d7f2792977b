//! Watching a run live: `--metrics` scraped by a real Prometheus
//! (Debian's `prometheus`, installed by scripts/test), and the flags'
//! bad input refused before any load.

use pelt_testkit::chromium::{console, field, run_url};
use pelt_testkit::http::get;
use pelt_testkit::pelt::{command, json, pelt, server};
use pelt_testkit::pinned::{serve_ahead_on, AHEAD};
use pelt_testkit::ports::free_port;
use pelt_testkit::process::wait_until;
use pelt_testkit::prometheus::Prometheus;
use pelt_testkit::tmux::Tmux;
use serde_json::Value;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// `series`' newest sample in the last minute, stale or not (URL-encoded).
fn last(series: &str) -> String {
    format!("last_over_time({series}%5B1m%5D)")
}

#[test]
fn prometheus_scrapes_what_the_report_says() {
    let _heavy = pelt_testkit::pelt::shared();
    let dir = tempfile::tempdir().unwrap();
    let target = server(None);
    let metrics = free_port();
    let prom = Prometheus::scraping(dir.path(), metrics);
    let url = format!("http://{}/?delay=1ms", target.local_addr());
    let out = pelt()
        .args(["run", &url, "-d", "4s", "--rate", "300", "--format", "json"])
        .args(["--no-save", "--metrics", &format!("127.0.0.1:{metrics}")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("metrics on http://127.0.0.1:{metrics}/metrics")));
    let report: Value = json(&out);
    let requests = report["requests"]["total"].as_u64().unwrap();
    let timed = report["latency"]["response_time"]["count"]
        .as_u64()
        .unwrap();
    assert!(requests > 900, "{requests}");

    assert_eq!(
        prom.settle(&last("pelt_requests_total"), requests as f64),
        Some(requests as f64),
        "{:?}",
        get(prom.port(), "/api/v1/targets")
    );
    assert_eq!(
        prom.settle(&last("pelt_response_time_seconds_count"), timed as f64),
        Some(timed as f64)
    );
    assert_eq!(prom.value(&last("pelt_run_finished")), Some(1.0));
    // The histogram's +Inf bucket is its count, and a Grafana-style
    // quantile lands within a bucket of the report's p99.
    assert_eq!(
        prom.value(&last(
            "pelt_response_time_seconds_bucket%7Ble%3D%22%2BInf%22%7D"
        )),
        Some(timed as f64)
    );
    let p99 = report["latency"]["response_time"]["percentiles_s"]["p99"]
        .as_f64()
        .unwrap();
    let q = prom
        .value(&format!(
            "histogram_quantile(0.99,{})",
            last("pelt_response_time_seconds_bucket")
        ))
        .unwrap();
    assert!(q > p99 / 10.0 && q < p99 * 10.0, "{q} vs {p99}");
    // The 2xx counter agrees with the report.
    assert_eq!(
        prom.value(&last("pelt_responses_total%7Bclass%3D%222xx%22%7D")),
        Some(report["requests"]["successes"].as_u64().unwrap() as f64)
    );
}

/// The in-flight gauge obeys Little's law: at 400 req/s against a server
/// that answers in 50 ms, about 20 requests are in flight at any moment.
/// Read from /metrics while the run goes, as a dashboard would.
#[test]
fn in_flight_is_rate_times_latency() {
    let _heavy = pelt_testkit::pelt::shared();
    let target = server(None);
    let metrics = free_port();
    let url = format!("http://{}/?delay=50ms", target.local_addr());
    let mut child = command()
        .args(["run", &url, "-d", "4s", "--rate", "400", "-c", "100"])
        .args(["--no-save", "--format", "json"])
        .args(["--metrics", &format!("127.0.0.1:{metrics}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Until the gauge has seen a full second of load (bounded).
    let until = Instant::now() + Duration::from_secs(20);
    let mut seen = None;
    while Instant::now() < until && seen.is_none() {
        if let Some((200, text)) = get(metrics, "/metrics") {
            let value = |name: &str| {
                text.lines()
                    .find(|l| l.starts_with(name))
                    .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            };
            if value("pelt_achieved_rate").is_some_and(|r| r >= 300.0) {
                seen = value("pelt_in_flight{").zip(value("pelt_open_connections{"));
            }
        }
        // A poll interval, not a wait for something to happen: the loop
        // ends on what the endpoint says.
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.wait();
    let (in_flight, open) = seen.expect("pelt_in_flight during a loaded second");
    assert!(
        (10.0..=35.0).contains(&in_flight),
        "in flight {in_flight}, expected about 400/s x 50 ms = 20"
    );
    // Each request in flight holds a connection of the pool (-c 100), and
    // the pool grows only as the load needs.
    assert!(
        (in_flight..=100.0).contains(&open),
        "{open} connections open for {in_flight} in flight"
    );
}

/// A target that counts connections: none may arrive when pelt refuses
/// its flags.
fn silent_target() -> TcpListener {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    l
}

fn refused(args: &[&str], hint: &str) {
    let target = silent_target();
    let url = format!("http://{}/", target.local_addr().unwrap());
    let out = pelt()
        .args(["run", &url, "-d", "2s", "--no-save"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains(hint), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(
        target.accept().is_err(),
        "{args:?}: load was sent before refusing"
    );
}

#[test]
fn bad_metrics_addresses_are_refused_before_any_load() {
    let _heavy = pelt_testkit::pelt::shared();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    refused(&["--metrics", &taken], "cannot listen");
    refused(&["--metrics", "0.0.0.0:0"], "--metrics-allow-remote");
    refused(&["--metrics", "localhost"], "give IP:PORT");
}

#[test]
fn metrics_allow_remote_listens_beyond_loopback() {
    let _heavy = pelt_testkit::pelt::shared();
    let target = server(None);
    let url = format!("http://{}/", target.local_addr());
    let out = pelt()
        .args(["run", &url, "-n", "50", "-c", "1", "--no-save"])
        .args(["--metrics", "0.0.0.0:0", "--metrics-allow-remote"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Issue 22 §8: 0.0.0.0 is where it listens, not an address to open.
    assert!(!stderr.contains("0.0.0.0"), "{stderr}");
    assert!(stderr.contains("metrics on http://127.0.0.1:"), "{stderr}");
}

/// Waits until something accepts connections on 127.0.0.1:`port`.
fn wait_listening(port: u16) {
    wait_until(
        Duration::from_secs(30),
        &format!("nothing listens on {port}"),
        || TcpStream::connect(("127.0.0.1", port)).is_ok(),
    );
}

#[test]
fn dashboard_updates_in_chromium_and_ends_with_the_report() {
    let _heavy = pelt_testkit::pelt::shared();
    let dir = tempfile::tempdir().unwrap();
    let target = server(None);
    let port = free_port();
    let url = format!("http://{}/", target.local_addr());
    let pelt_run = command()
        .args(["run", &url, "-d", "5s", "--rate", "200", "--no-save"])
        .args([
            "--format",
            "json",
            "--dashboard",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_listening(port);
    let netlog = dir.path().join("net.json");
    // The event stream keeps the page loading until the run ends, so
    // --dump-dom shows the page after the final report.
    let page = run_url(
        dir.path(),
        &format!("http://127.0.0.1:{port}/"),
        &[
            "--dump-dom".into(),
            "--virtual-time-budget=30000".into(),
            format!("--log-net-log={}", netlog.display()),
        ],
    );
    let out = pelt_run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(page.status.success(), "chromium: {}", page.stderr);
    let report: Value = json(&out);
    let total = report["requests"]["total"].as_u64().unwrap();

    // The figures moved while the run went: several updates, growing.
    let updates: Vec<f64> = console(&page.stderr, "pelt-live update ")
        .iter()
        .map(|l| field(l, "requests"))
        .collect();
    assert!(updates.len() >= 3, "{}", page.stderr);
    assert!(updates.windows(2).all(|w| w[0] <= w[1]), "{updates:?}");
    assert!(updates[0] < updates[updates.len() - 1], "{updates:?}");
    assert_eq!(*updates.last().unwrap(), total as f64);

    // After it, the page shows the final JSON report's figures.
    let finals = console(&page.stderr, "pelt-live final ");
    assert_eq!(finals.len(), 1, "{}", page.stderr);
    assert_eq!(field(finals[0], "requests"), total as f64);
    let p99 = report["latency"]["response_time"]["percentiles_s"]["p99"]
        .as_f64()
        .unwrap();
    assert_eq!(field(finals[0], "p99_s"), p99);
    let dom = page.stdout;
    assert!(
        dom.contains(&format!("id=\"final-requests\" data-raw=\"{total}\"")),
        "{dom}"
    );
    assert!(dom.contains(&format!("id=\"final-p99\" data-raw=\"{p99}\"")));
    // Issue 35 §2: the failed count with its share, as every report.
    let failed = report["requests"]["failed"].as_u64().unwrap();
    assert!(
        dom.contains(&format!(
            "id=\"final-failed\" data-raw=\"{failed}\">{failed} ("
        )),
        "{dom}"
    );
    assert!(dom.contains("<polyline"), "charts drawn: {dom}");

    // Everything the page asked for came from pelt. (Chromium's own
    // background requests have no page as initiator.)
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&netlog).unwrap()).unwrap();
    let ours = format!("http://127.0.0.1:{port}");
    let from_page: Vec<&str> = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["params"]["initiator"]
                .as_str()
                .is_some_and(|i| i != "not an origin")
        })
        .filter_map(|e| e["params"]["url"].as_str())
        .collect();
    assert!(
        from_page.iter().any(|u| u.ends_with("/events")),
        "{from_page:?}"
    );
    for u in &from_page {
        assert!(u.starts_with(&format!("{ours}/")), "the page fetched {u}");
    }
}

/// `pelt experiment --dashboard`: the page shows which run of how many
/// is going as the experiment advances, a row per finished run, and the
/// verdicts; at the end they are the experiment's own.
#[test]
fn experiment_progress_on_the_dashboard() {
    let _heavy = pelt_testkit::pelt::shared();
    let dir = tempfile::tempdir().unwrap();
    let target = server(None);
    let port = free_port();
    let base = format!("http://{}/", target.local_addr());
    std::fs::write(
        dir.path().join("plan.toml"),
        format!(
            r#"
name = "live"
blocks = 6
[load]
rate = 200
connections = 10
duration = "1s"
threads = 1
[[variant]]
name = "A"
url = "{base}"
[[variant]]
name = "B"
url = "{base}?delay=2ms"
"#
        ),
    )
    .unwrap();
    let experiment = command()
        .current_dir(dir.path())
        .args(["experiment", "plan.toml", "-o", "out"])
        .args(["--dashboard", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_listening(port);
    let page = run_url(
        dir.path(),
        &format!("http://127.0.0.1:{port}/"),
        &["--dump-dom".into(), "--virtual-time-budget=60000".into()],
    );
    let out = experiment.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(page.status.success(), "chromium: {}", page.stderr);
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    let runs = report["runs"].as_array().unwrap().len();
    assert_eq!(runs, 12);

    // The progress advanced while the page watched, to the last run.
    let done: Vec<f64> = console(&page.stderr, "pelt-live campaign ")
        .iter()
        .map(|l| field(l, "done"))
        .collect();
    assert!(done.windows(2).all(|w| w[0] <= w[1]), "{done:?}");
    assert!(done.first() < done.last(), "{done:?}");
    assert_eq!(*done.last().unwrap(), runs as f64, "{}", page.stderr);
    // A row per run, and the experiment's verdicts.
    let dom = page.stdout;
    assert_eq!(dom.matches("<tr><td>block ").count(), runs, "{dom}");
    assert!(dom.contains("B vs A"), "{dom}");
    assert!(
        dom.contains(&format!("id=\"campaign-progress\" data-raw=\"{runs}\"")),
        "{dom}"
    );
}

#[test]
fn a_remote_dashboard_needs_its_token() {
    let _heavy = pelt_testkit::pelt::shared();
    let target = server(None);
    let url = format!("http://{}/", target.local_addr());
    let mut pelt_run = command()
        .args(["run", &url, "-d", "3s", "--rate", "50", "--no-save", "-q"])
        .args(["--dashboard", "0.0.0.0:0", "--dashboard-allow-remote"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(pelt_run.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
    // Issue 22 §8: the addresses to open (loopback first), never 0.0.0.0.
    assert!(!line.contains("0.0.0.0"), "{line}");
    let at = line
        .trim()
        .strip_prefix("pelt: dashboard on http://127.0.0.1:")
        .unwrap_or_else(|| panic!("{line}"))
        .split(' ')
        .next()
        .unwrap();
    let (port, token) = at.split_once("/?token=").unwrap();
    let port: u16 = port.parse().unwrap();
    assert_eq!(token.len(), 32, "{token}");
    assert_eq!(get(port, "/").unwrap().0, 403);
    assert_eq!(get(port, "/events").unwrap().0, 403);
    assert_eq!(get(port, "/?token=wrong").unwrap().0, 403);
    let (status, page) = get(port, &format!("/?token={token}")).unwrap();
    assert_eq!(status, 200);
    assert!(page.contains("EventSource"));
    assert!(pelt_run.wait().unwrap().success());
}

#[test]
fn bad_dashboard_addresses_are_refused_before_any_load() {
    let _heavy = pelt_testkit::pelt::shared();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    refused(&["--dashboard", &taken], "cannot listen");
    refused(&["--dashboard", "0.0.0.0:0"], "--dashboard-allow-remote");
    // The second refusal leaves nothing of the first running.
    refused(
        &["--metrics", "127.0.0.1:0", "--dashboard", "10.0.0.1:1"],
        "--dashboard-allow-remote",
    );
}

/// "2.31ms", "870µs", "1.02s" in seconds.
fn human_secs(text: &str) -> f64 {
    for (unit, scale) in [("µs", 1e-6), ("ms", 1e-3), ("ns", 1e-9), ("s", 1.0)] {
        if let Some(n) = text.strip_suffix(unit) {
            return n.parse::<f64>().unwrap() * scale;
        }
    }
    panic!("not a duration: {text}")
}

/// The number after `word ` on the screen.
fn after<'a>(screen: &'a str, word: &str) -> &'a str {
    screen
        .split(word)
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no {word:?} on screen:\n{screen}"))
}

/// `pelt run` in a tmux pane (a real terminal), stdout to a file; the
/// pane stays after it exits, showing `EXIT=code`.
fn run_in_tmux(tmux: &Tmux, dir: &Path, url: &str, extra: &str) -> std::path::PathBuf {
    let out = dir.join("out.json");
    // The pane's shell leads a session of its own: ahead of other work on
    // the machine, whose scheduling would set the tails the tests compare.
    let script = format!(
        "{AHEAD}; PELT_DATA_DIR={} PELT_NO_HISTORY=1 {} run '{url}' -d 6s --rate 200 --no-save --format json {extra} > {}; echo EXIT=$?; exec sleep 120",
        pelt_testkit::pelt::data_dir().display(),
        pelt_testkit::pelt::bin().display(),
        out.display()
    );
    tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "t",
        "-x",
        "110",
        "-y",
        "36",
        "sh",
        "-c",
        &script,
    ]);
    out
}

#[test]
fn tui_in_tmux_shows_the_run_and_restores_the_terminal() {
    // Its p99 is compared across two views: another test's load
    // alongside would set the tail, not the server's delay.
    let _alone = pelt_testkit::pelt::exclusive();
    let dir = tempfile::tempdir().unwrap();
    // Delays spread evenly over 5-50 ms set the p99 (near 49.5 ms in the
    // first 5 s and in all 6 alike), not the busy machine's jitter: with
    // one fixed 5 ms delay, a debug pelt's own millisecond tails made it,
    // and the last second moved it by 15 %. The server runs ahead of
    // other work.
    let (_target, base) = serve_ahead_on("1");
    let url = format!("{base}?delay=5ms&delay_max=50ms");
    let tmux = Tmux::new("tui");
    // No --tui: a terminal and a 6 s run turn it on.
    let out = run_in_tmux(&tmux, dir.path(), &url, "");
    let measured = |s: &str| -> u64 {
        s.split(" s measured")
            .next()
            .and_then(|l| l.split_whitespace().last())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    let first = tmux.wait_for("2 s measured", |s| measured(s) >= 2);
    assert_eq!(
        tmux.cmd(&["display", "-p", "-t", "t", "#{alternate_on}"])
            .trim(),
        "1"
    );
    let second = tmux.wait_for("5 s measured", |s| measured(s) >= 5);
    assert_ne!(first, second, "the screen updates");
    let requests = |s: &str| after(s, "requests ").parse::<u64>().unwrap();
    assert!(requests(&first) < requests(&second));
    // Issue 35 §2: the failed count with its share, the chart's unit in
    // its title (an axis title was drawn over the plot).
    for part in [
        "response time per second, ms",
        "statuses and failures",
        "200: ",
        "failed 0 (0.00%)",
    ] {
        assert!(second.contains(part), "{part}:\n{second}");
    }

    // The last dashboard screen before exit: the p99 of (nearly) the
    // whole run, to set beside the report's.
    let mut last = second.clone();
    let deadline = Instant::now() + Duration::from_secs(40);
    let done = loop {
        let screen = tmux.screen();
        if screen.contains("EXIT=") {
            break screen;
        }
        if screen.contains("pelt live") {
            last = screen;
        }
        assert!(Instant::now() < deadline, "pelt did not exit:\n{last}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(done.contains("EXIT=0"), "{done}");
    // The terminal is as it was: the normal screen, no dashboard left.
    assert_eq!(
        tmux.cmd(&["display", "-p", "-t", "t", "#{alternate_on}"])
            .trim(),
        "0"
    );
    assert!(!done.contains("pelt live"), "{done}");
    // stdout, redirected, has the whole report.
    let report: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    let rate = after(&second, "rate ").parse::<f64>().unwrap();
    assert!((rate - 200.0).abs() <= 20.0, "{rate}");
    let p99 = report["latency"]["response_time"]["percentiles_s"]["p99"]
        .as_f64()
        .unwrap();
    let shown = human_secs(after(&last, "p99 "));
    assert!((shown - p99).abs() <= p99 * 0.1, "{shown} vs {p99}");
}

#[test]
fn no_tui_keeps_the_progress_line() {
    let _heavy = pelt_testkit::pelt::shared();
    let dir = tempfile::tempdir().unwrap();
    let target = server(None);
    let url = format!("http://{}/", target.local_addr());
    let tmux = Tmux::new("notui");
    let out = run_in_tmux(&tmux, dir.path(), &url, "--no-tui");
    let line = tmux.wait_for("the progress line", |s| s.contains("req/s last second"));
    assert!(!line.contains("pelt live"), "{line}");
    assert_eq!(
        tmux.cmd(&["display", "-p", "-t", "t", "#{alternate_on}"])
            .trim(),
        "0"
    );
    let done = tmux.wait_for("EXIT=", |s| s.contains("EXIT="));
    assert!(done.contains("EXIT=0"), "{done}");
    assert!(!done.contains("pelt live"), "{done}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    assert!(report["requests"]["total"].as_u64().unwrap() > 1000);
}

#[test]
fn tui_follows_resizing_says_when_too_small_and_q_stops_the_run() {
    let _heavy = pelt_testkit::pelt::shared();
    let dir = tempfile::tempdir().unwrap();
    let target = server(None);
    let url = format!("http://{}/", target.local_addr());
    let tmux = Tmux::new("resize");
    let out = run_in_tmux(&tmux, dir.path(), &url, "--tui");
    tmux.wait_for("the dashboard", |s| s.contains("pelt live"));
    tmux.cmd(&["resize-window", "-t", "t", "-x", "40", "-y", "10"]);
    tmux.wait_for("the size note", |s| s.contains("terminal too small: 40x10"));
    tmux.cmd(&["resize-window", "-t", "t", "-x", "90", "-y", "30"]);
    let back = tmux.wait_for("the dashboard again", |s| s.contains("pelt live"));
    assert!(back.lines().any(|l| l.chars().count() == 90), "{back}");
    // q stops the run as Ctrl-C does: the report so far, exit 130.
    tmux.cmd(&["send-keys", "-t", "t", "q"]);
    let done = tmux.wait_for("EXIT=", |s| s.contains("EXIT="));
    assert!(done.contains("EXIT=130"), "{done}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    assert_eq!(report["interrupted"], true);
    assert!(report["requests"]["total"].as_u64().unwrap() > 0);
}
