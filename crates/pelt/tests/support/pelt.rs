//! Running the `pelt` binary against the built-in server.

use assert_cmd::Command;
use pelt_target::{Pause, ServeConfig, Server, ServerHandle};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// Where test runs are saved, away from the real data directory.
pub fn data_dir() -> PathBuf {
    std::env::temp_dir().join("pelt-test-data")
}

/// The `pelt` binary, saving runs under [`data_dir`], bounded to 60 s.
pub fn pelt() -> Command {
    let mut c = Command::cargo_bin("pelt").unwrap();
    // Runs are not recorded in a history: the shared data dir would
    // collect every test run for ever (tests/history.rs records its own).
    c.env("PELT_DATA_DIR", data_dir())
        .env("PELT_NO_HISTORY", "1")
        .timeout(Duration::from_secs(60));
    c
}

/// The built-in server on a loopback port, one thread, optionally pausing.
pub fn server(pause: Option<Pause>) -> ServerHandle {
    Server::bind(
        "127.0.0.1:0".parse().unwrap(),
        ServeConfig {
            threads: 1,
            pause,
            ..ServeConfig::default()
        },
    )
    .and_then(Server::spawn)
    .expect("start the built-in server")
}

/// Runs `pelt ARGS --format json`, checks success, returns the report.
pub fn run_json(args: &[&str]) -> Value {
    let out = pelt()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pelt {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// Runs `pelt ARGS --format json` where no request can get a response:
/// checks that pelt exits 3 and says why in one line, returns the report.
pub fn run_json_no_response(args: &[&str]) -> Value {
    let out = pelt()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "pelt {args:?}: {err}");
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("pelt: no request got a response: "))
            .count(),
        1,
        "{err}"
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// Runs `pelt ARGS --format json` where some requests may get a response
/// and possibly none: exit 0 or 3, returns the report.
pub fn run_json_maybe_no_response(args: &[&str]) -> Value {
    let out = pelt()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let code = out.status.code();
    assert!(
        code == Some(0) || code == Some(3),
        "pelt {args:?}: {code:?} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// A count in a report.
pub fn count(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// A number in a report.
pub fn number(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

static MACHINE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Holds the machine for one test at a time within a test binary: for
/// tests whose figures (timings, verdicts) would be skewed by another
/// test's load running alongside. Two experiments in lockstep, say, put
/// the same outside load on the same variant in every block.
pub fn exclusive() -> std::sync::RwLockWriteGuard<'static, ()> {
    MACHINE
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Marks a heavy test (a browser, a Prometheus, a long run) that may run
/// beside other heavy tests but never beside an `exclusive` one, whose
/// tail latencies it would otherwise set.
pub fn shared() -> std::sync::RwLockReadGuard<'static, ()> {
    MACHINE
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
