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
    spawn_server(pelt_on(cpu))
}

fn spawn_server(pelt: Command) -> (Killed, String) {
    spawn_server_with(pelt, &[])
}

fn spawn_server_with(mut pelt: Command, extra: &[&str]) -> (Killed, String) {
    let mut child = pelt
        .args(["serve", "-p", "0", "-t", "1"])
        .args(extra)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("taskset (util-linux) runs pelt serve");
    let url = served_url(&mut child);
    (Killed(child), url)
}

/// Puts the calling shell's session ahead of every ordinary process: its
/// autogroup at nice -20. Other work on the machine (a
/// parallel `cargo build`, a shared CI runner) would otherwise take turns
/// on a pinned server's CPU and move the capacity a test knows it has (a
/// capacity search found 425 of 1,000 req/s beside two busy loops), or
/// delay the client's reads.
///
/// Not `nice -n -20` alone: the kernel's autogroups weigh sessions
/// against each other first, so a nice value only ranks the processes of
/// one session (that search found the same 425). Not a real-time class:
/// pelt moves its collector thread to the idle class, where busy loops at
/// the top level starved it and stalled the workers for 2.5 s; inside a
/// group of its own it runs whenever the workers sleep.
///
/// A shell that is already a session's leader (a tmux pane's) runs
/// [`AHEAD`] itself.
pub const AHEAD: &str = "echo -20 > /proc/self/autogroup";

/// Like [`pelt_on`], ahead of other work (see [`AHEAD`]): a client whose
/// timing a test judges.
pub fn pelt_ahead_on(cpu: &str) -> Command {
    ahead_under("taskset", &["-c", cpu])
}

/// `PROGRAM ARGS pelt` (as [`under`]) ahead of other work (see
/// [`AHEAD`]), on any CPU: `ahead_under("prlimit", &["--nofile=7000"])`.
pub fn ahead_under(program: &str, args: &[&str]) -> Command {
    let script = format!("{AHEAD} && exec \"$@\"");
    let mut words = vec!["sh", "-c", &script, "sh", program];
    words.extend_from_slice(args);
    under("setsid", words)
}

/// Like [`serve_on`], ahead of other work (see [`AHEAD`]): a server
/// whose capacity a test knows.
pub fn serve_ahead_on(cpu: &str) -> (Killed, String) {
    spawn_server(pelt_ahead_on(cpu))
}

/// Like [`serve_ahead_on`], with `pelt serve` flags (`--delay 2ms`).
pub fn serve_ahead_with(cpu: &str, flags: &[&str]) -> (Killed, String) {
    spawn_server_with(pelt_ahead_on(cpu), flags)
}

/// Puts a running process and its children (nginx's master and workers)
/// ahead of other work, in the real-time round-robin class at its lowest
/// priority: their session is the test's, so its autogroup cannot be
/// raised alone (see [`AHEAD`]). The kernel still lends ordinary work
/// 50 ms of each second a real-time process starves it of.
pub fn put_ahead(pid: u32) {
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    for pid in
        std::iter::once(pid.to_string()).chain(children.split_whitespace().map(str::to_owned))
    {
        let status = Command::new("chrt")
            .args(["--all-tasks", "--pid", "--rr", "1", &pid])
            .status()
            .expect("chrt (util-linux) runs");
        assert!(status.success(), "chrt --rr --pid 1 {pid}: {status}");
    }
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
