//! Live views keep the whole picture (issue 22 §5): a dashboard opened
//! late draws the run so far, its final tiles are per second of the run,
//! and two runs with the same flags are two series.

mod support;

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::time::{Duration, Instant};
use support::pelt::{pelt, server};

/// A loopback port free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The first event of a new `/events` stream on 127.0.0.1:`port`, or
/// `None` if nothing listens yet.
fn first_event(port: u16) -> Option<Value> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut lines = BufReader::new(s).lines();
    lines.find_map(|l| {
        let l = l.ok()?;
        serde_json::from_str(l.strip_prefix("data: ")?).ok()
    })
}

/// The console lines the page logged with `prefix`.
fn console<'a>(stderr: &'a str, prefix: &str) -> Vec<&'a str> {
    stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .filter_map(|l| l.split_once(prefix).map(|(_, rest)| rest))
        .collect()
}

/// `name=VALUE` from a console line.
fn field(line: &str, name: &str) -> f64 {
    line.split([' ', '"'])
        .find_map(|w| w.strip_prefix(&format!("{name}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}

/// `data-raw` of the element with `id` in the page's DOM.
fn raw(dom: &str, id: &str) -> f64 {
    let at = dom
        .find(&format!("id=\"{id}\" data-raw=\""))
        .unwrap_or_else(|| panic!("no {id} in {dom}"));
    let rest = &dom[at..].split_once("data-raw=\"").unwrap().1;
    rest.split('"').next().unwrap().parse().unwrap()
}

// The page was opened (or reloaded) 3 s into the run: it started with
// empty charts. Now its first update draws every second so far; and at
// the end, the rate tiles are per second of the run, not the last
// second's sliver ("25 req/s of 18 offered" for a 500 req/s run).
#[test]
fn a_dashboard_opened_late_draws_the_whole_run_and_ends_per_second() {
    let _heavy = support::pelt::shared();
    let dir = tempfile::tempdir().unwrap();
    let target = server(None);
    let port = free_port();
    let url = format!("http://{}/", target.local_addr());
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_pelt"))
        .env("PELT_DATA_DIR", support::pelt::data_dir())
        .env("PELT_NO_HISTORY", "1")
        .args(["run", &url, "-d", "7s", "--rate", "200", "--no-save"])
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
    // Until 3 seconds are measured (the stream's own figure, polled).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let seconds = first_event(port).map_or(0, |e| e["seconds"].as_u64().unwrap());
        if seconds >= 3 {
            break;
        }
        assert!(Instant::now() < deadline, "the run never reached 3 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    let page = support::chromium::run_url(
        dir.path(),
        &format!("http://127.0.0.1:{port}/"),
        &["--dump-dom".into(), "--virtual-time-budget=30000".into()],
    );
    let out = run.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(page.status.success(), "chromium: {}", page.stderr);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();

    let updates = console(&page.stderr, "pelt-live update ");
    let first = updates.first().unwrap_or_else(|| panic!("{}", page.stderr));
    // The first update already has every measured second (and the
    // partial one before them).
    assert!(field(first, "rows") >= 3.0, "{first}");
    assert!(field(first, "rows") >= field(first, "seconds"), "{first}");
    let last = updates.last().unwrap();
    let rows = report["timeline"].as_array().unwrap().len() as f64;
    assert_eq!(field(last, "rows"), rows, "{last}");

    // The final tiles: about the rate asked for, not a partial second's
    // count.
    let dom = page.stdout;
    let rate = raw(&dom, "rate");
    let offered = raw(&dom, "offered");
    assert!((offered - 200.0).abs() < 2.0, "offered {offered}");
    assert!((150.0..=250.0).contains(&rate), "rate {rate}");
    // Charts with a time axis and a legend.
    assert!(dom.contains("time into the run"), "{dom}");
    assert!(dom.contains("class=\"legend\""), "{dom}");
}

/// The `run="..."` label pelt printed beside its metrics address.
fn run_label(args: &[&str]) -> String {
    let target = server(None);
    let url = format!("http://{}/", target.local_addr());
    let out = pelt()
        .args(["run", &url, "-n", "20", "-c", "1", "--no-save"])
        .args(["--metrics", "127.0.0.1:0"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains("metrics on http://"))
        .unwrap_or_else(|| panic!("{stderr}"));
    line.split_once("run=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(id, _)| id.to_string())
        .unwrap_or_else(|| panic!("{line}"))
}

// Two runs with the same flags shared one `run` label (the config hash),
// so their counters made one series that went backwards.
#[test]
fn each_run_gets_its_own_run_label_unless_run_id_names_it() {
    let _heavy = support::pelt::shared();
    let a = run_label(&[]);
    let b = run_label(&[]);
    assert_ne!(a, b);
    // --run-id (a sharded run's, so that its shards share it) is kept.
    let named = ["--shard", "0/1", "--run-id", "nightly-7"];
    assert_eq!(run_label(&named), "nightly-7");
}
