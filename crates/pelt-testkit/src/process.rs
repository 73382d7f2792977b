//! Child processes a test drives: stopped by pid, signalled, waited on.

use std::process::{Child, Command};
use std::thread;
use std::time::{Duration, Instant};

/// Pause between polls of another process's progress: nothing to block
/// on but the clock.
const POLL: Duration = Duration::from_millis(20);

/// A child process killed (by pid) and reaped when dropped.
#[derive(Debug)]
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Polls `ready` (another process's progress, seen through a file, a
/// server's count or a port) until it holds; panics with `what` once
/// `limit` has passed. Returns when the wait started.
pub fn wait_until(limit: Duration, what: &str, mut ready: impl FnMut() -> bool) -> Instant {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < limit, "{what}");
        thread::sleep(POLL);
    }
    started
}

/// Sends `signal` (`INT`, `TERM`, `HUP`...) to `child`, by its pid.
pub fn signal(child: &Child, signal: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal} {}", child.id());
}

/// A helper server run from a script beside this file (a Python server
/// the tests need), with a temp dir for its log: it says its port on its
/// first line of output (see [`announced_port`]), exits when its standard
/// input closes, and is stopped by its pid when dropped.
#[derive(Debug)]
pub struct ScriptServer {
    child: std::process::Child,
    /// The port it said it listens on.
    pub port: u16,
    /// Its log, in its temp dir.
    pub log: std::path::PathBuf,
    /// Held open: the server exits when it closes.
    _stdin: std::process::ChildStdin,
    _dir: tempfile::TempDir,
}

impl ScriptServer {
    /// Runs `program` on `src/SCRIPT` in a new temp dir (named from
    /// `prefix`, and its working directory), with the arguments `args`
    /// gives for the log's path, and reads its port within `limit`;
    /// `what` names it in a failure.
    pub fn start(
        prefix: &str,
        program: &std::path::Path,
        script: &str,
        args: impl FnOnce(&std::path::Path) -> Vec<std::ffi::OsString>,
        limit: Duration,
        what: &str,
    ) -> ScriptServer {
        use std::process::{Command, Stdio};
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .expect("a temp dir for a helper server's log");
        let log = dir.path().join("server.log");
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src")
            .join(script);
        let mut child = Command::new(program)
            .arg(script)
            .args(args(&log))
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {what}: {e}"));
        let stdin = child.stdin.take().expect("piped");
        let port = announced_port(&mut child, limit, what);
        ScriptServer {
            child,
            port,
            log,
            _stdin: stdin,
            _dir: dir,
        }
    }
}

impl Drop for ScriptServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The port a helper server says on its first line of standard output
/// (`port N`), read on a thread so a server that never says it fails the
/// test within `limit` instead of hanging it; the child is killed and
/// reaped before the panic, which names `what` and the line read.
pub fn announced_port(child: &mut Child, limit: Duration, what: &str) -> u16 {
    use std::io::{BufRead, BufReader};
    let stdout = child.stdout.take().expect("the child's stdout is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(limit).unwrap_or_default();
    match line
        .trim()
        .strip_prefix("port ")
        .and_then(|p| p.parse().ok())
    {
        Some(port) => port,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not say its port within {limit:?}: {line:?}");
        }
    }
}

/// Waits up to `limit` for `child` to exit, reading its peak resident
/// memory (`VmHWM`, KiB) from /proc as it goes; kills it and panics with
/// `what` if it is still running then. Returns its status and the
/// highest peak read (the last read before it exited).
pub fn wait_with_peak_memory(
    child: &mut Child,
    limit: Duration,
    what: &str,
) -> (std::process::ExitStatus, u64) {
    let started = Instant::now();
    let mut peak = 0;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, peak);
        }
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()));
        if let Some(kib) = status.ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        }) {
            peak = peak.max(kib);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}, {peak} KiB resident at its peak");
        }
        thread::sleep(POLL);
    }
}
