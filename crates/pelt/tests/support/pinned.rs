//! Processes pinned to CPUs with taskset (util-linux): the built-in
//! server on one CPU and pelt on the other, and busy loops to starve one.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A child process killed (by pid) and reaped when dropped.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The `pelt` binary under test.
pub fn pelt_bin() -> String {
    assert_cmd::cargo::cargo_bin("pelt").display().to_string()
}

/// `pelt serve` with one thread pinned to `cpu`; returns it and its URL.
pub fn serve_on(cpu: &str) -> (Killed, String) {
    let mut child = Command::new("taskset")
        .args(["-c", cpu, &pelt_bin(), "serve", "-p", "0", "-t", "1"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("taskset (util-linux) runs pelt serve");
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();
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
