//! Running the `pelt` binary (against the built-in server), and reading
//! what it prints.
//!
//! Every way of starting pelt here goes through [`isolate`]: runs are
//! saved under [`data_dir`], away from the real data directory, and are
//! not recorded in a history (the shared data dir would collect every
//! test run for ever). A test of the history sets its own.

use pelt_target::{Pause, ServeConfig, Server, ServerHandle};
use serde_json::Value;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

/// How long a foreground [`pelt`] may run before it is killed.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The `pelt` binary Cargo built for this test run.
pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("pelt")
}

/// Where test runs are saved, away from the real data directory.
pub fn data_dir() -> PathBuf {
    std::env::temp_dir().join("pelt-test-data")
}

/// Gives `c` (pelt, or a program that starts pelt) the tests'
/// environment: runs saved under [`data_dir`], no history.
pub fn isolate(c: &mut Command) -> &mut Command {
    c.env("PELT_DATA_DIR", data_dir())
        .env("PELT_NO_HISTORY", "1")
}

/// `pelt` as a plain [`Command`], for a process the test drives itself:
/// spawned in the background, signalled, killed. Unbounded: the test
/// bounds it.
pub fn command() -> Command {
    let mut c = Command::new(bin());
    isolate(&mut c);
    c
}

/// `PROGRAM ARGS pelt`, e.g. `under("taskset", ["-c", "0"])`: pelt run
/// by another program, which passes the environment on. Add pelt's own
/// arguments after.
pub fn under<S: AsRef<OsStr>>(program: &str, args: impl IntoIterator<Item = S>) -> Command {
    let mut c = Command::new(program);
    c.args(args).arg(bin());
    isolate(&mut c);
    c
}

/// The `pelt` binary in the foreground, bounded to 60 s.
pub fn pelt() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::from_std(command());
    c.timeout(TIMEOUT);
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

/// The built-in server on a loopback port, one thread, serving HTTP/3
/// too (UDP, the same port number, a self-signed certificate).
pub fn server_h3(config: ServeConfig) -> ServerHandle {
    Server::bind(
        "127.0.0.1:0".parse().unwrap(),
        ServeConfig {
            threads: 1,
            http3: true,
            ..config
        },
    )
    .and_then(Server::spawn)
    .expect("start the built-in server with HTTP/3")
}

/// The URL `pelt serve` prints on its first line of stderr, read from
/// `child` (spawned with stderr piped).
pub fn served_url(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("stderr is piped"))
        .read_line(&mut line)
        .unwrap();
    line.split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string()
}

/// `out`'s stdout as one JSON document (its stderr in the message if not).
pub fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Checks that `out` succeeded (its exit code and stderr in the message
/// if not).
pub fn ok(out: &Output) -> &Output {
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Checks that `out` succeeded; returns its stdout as text.
pub fn ok_stdout(out: &Output) -> String {
    String::from_utf8(ok(out).stdout.clone()).expect("stdout is UTF-8")
}

/// Checks that `out` succeeded; returns its stdout as one JSON document.
pub fn ok_json(out: &Output) -> Value {
    json(ok(out))
}

/// Checks that pelt refused its input as bad input must be refused: exit
/// 2 and one line on stderr (`error: <what>, <how to fix>`); returns that
/// stderr. `context` (the arguments, say) leads the message if not.
pub fn bad_input(out: &Output, context: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{context}: {err}");
    assert_eq!(err.lines().count(), 1, "{context}: one line, got:\n{err}");
    err
}

/// Waits for a child spawned with stdout and stderr piped; checks that
/// it succeeded and returns its stdout as one JSON document.
pub fn finish(child: Child) -> Value {
    ok_json(&child.wait_with_output().unwrap())
}

/// `pelt ARGS --format json`, run to its end.
fn output_json(args: &[&str]) -> Output {
    pelt()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap()
}

/// Runs `pelt ARGS --format json`, checks success, returns the report.
pub fn run_json(args: &[&str]) -> Value {
    let out = output_json(args);
    assert!(
        out.status.success(),
        "pelt {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out)
}

/// Runs `pelt ARGS --format json` where no request can get a response:
/// checks that pelt exits 3 and says why in one line, returns the report.
pub fn run_json_no_response(args: &[&str]) -> Value {
    let out = output_json(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "pelt {args:?}: {err}");
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("pelt: no request got a response: "))
            .count(),
        1,
        "{err}"
    );
    json(&out)
}

/// Runs `pelt ARGS --format json` where responses come back and not one
/// succeeds (every request failed; in a scenario, every flow): checks
/// that pelt exits 3 and says so in one line, returns the report.
pub fn run_json_nothing_succeeded(args: &[&str]) -> Value {
    let out = output_json(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "pelt {args:?}: {err}");
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("pelt: nothing succeeded: all "))
            .count(),
        1,
        "{err}"
    );
    json(&out)
}

/// Runs `pelt ARGS --format json` where some requests may get a response
/// and possibly none: exit 0 or 3, returns the report.
pub fn run_json_maybe_no_response(args: &[&str]) -> Value {
    let out = output_json(args);
    let code = out.status.code();
    assert!(
        code == Some(0) || code == Some(3),
        "pelt {args:?}: {code:?} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out)
}

/// A count in a report.
pub fn count(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// A number in a report.
pub fn number(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The kinds of a report's warnings, in order.
pub fn warning_kinds(r: &Value) -> Vec<String> {
    r["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings list in {r}"))
        .iter()
        .map(|w| w["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Whether a report warns of `kind`.
pub fn warned(r: &Value, kind: &str) -> bool {
    warning_kinds(r).iter().any(|k| k == kind)
}

static MACHINE: RwLock<()> = RwLock::new(());

/// Holds the machine for one test at a time within a test binary: for
/// tests whose figures (timings, verdicts) would be skewed by another
/// test's load running alongside. Two experiments in lockstep, say, put
/// the same outside load on the same variant in every block.
pub fn exclusive() -> RwLockWriteGuard<'static, ()> {
    MACHINE
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Marks a heavy test (a browser, a Prometheus, a long run) that may run
/// beside other heavy tests but never beside an `exclusive` one, whose
/// tail latencies it would otherwise set.
pub fn shared() -> RwLockReadGuard<'static, ()> {
    MACHINE
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
