//! Processes pinned to CPUs with taskset (util-linux): the built-in
//! server on one CPU and pelt on the other, busy loops to starve one, and
//! pulses of SIGSTOP to make a client read late on a beat.

use crate::pelt::{served_url, under};
use crate::process::Killed;
use std::process::{Command, Stdio};

/// pelt run by taskset on `cpu` (`"0"`, `"1"`), in the tests' environment
/// (see [`crate::pelt::isolate`]). Add pelt's own arguments after.
pub fn pelt_on(cpu: &str) -> Command {
    under("taskset", ["-c", cpu])
}

/// `pelt serve` with one thread pinned to `cpu`; returns it and its URL.
pub fn serve_on(cpu: &str) -> (Killed, String) {
    let mut child = pelt_on(cpu)
        .args(["serve", "-p", "0", "-t", "1"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("taskset (util-linux) runs pelt serve");
    let url = served_url(&mut child);
    (Killed(child), url)
}

/// A shell busy loop pinned to `cpu`, at pelt's priority.
pub fn busy_on(cpu: &str) -> Killed {
    Killed(
        Command::new("taskset")
            .args(["-c", cpu, "sh", "-c", "while :; do :; done"])
            .spawn()
            .unwrap(),
    )
}

/// A process stopped and continued by the kernel on a beat: `SIGSTOP`,
/// `stop` later `SIGCONT`, `run` later again, until it exits. A client
/// descheduled like this reads every response that arrives while it is
/// stopped late by up to `stop`, whatever else the machine is doing: the
/// lateness kernel stamps must keep out of service time, made certain
/// rather than hoped for from a busy loop's share of a CPU.
#[derive(Debug)]
pub struct Pulses {
    shell: Killed,
    pid: u32,
}

impl Pulses {
    /// Starts the beat on `pid`.
    pub fn start(pid: u32, stop: std::time::Duration, run: std::time::Duration) -> Self {
        let script = format!(
            "while kill -STOP {pid} 2>/dev/null; do sleep {}; kill -CONT {pid}; sleep {}; done",
            stop.as_secs_f64(),
            run.as_secs_f64()
        );
        let shell = Command::new("sh")
            .args(["-c", &script])
            .spawn()
            .expect("sh runs the pulses");
        Pulses {
            shell: Killed(shell),
            pid,
        }
    }
}

impl Drop for Pulses {
    fn drop(&mut self) {
        // The beat may stop between a STOP and its CONT: continue the
        // process, or a test waiting on it would hang.
        let _ = self.shell.0.kill();
        let _ = self.shell.0.wait();
        let _ = Command::new("kill")
            .args(["-CONT", &self.pid.to_string()])
            .stderr(Stdio::null())
            .status();
    }
}
