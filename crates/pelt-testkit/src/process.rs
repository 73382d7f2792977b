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
