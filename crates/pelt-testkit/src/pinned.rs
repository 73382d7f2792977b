//! Processes pinned to CPUs with taskset (util-linux): the built-in
//! server on one CPU and pelt on the other, and busy loops to starve one.

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

/// One CPU's use over a window, from /proc/stat: the share of its time
/// that was busy (neither idle nor waiting for I/O), and the share the
/// hypervisor gave to another guest (steal).
#[derive(Debug, Clone, Copy)]
pub struct CpuUse {
    pub cpu: usize,
    pub busy: f64,
    pub steal: f64,
}

fn cpu_ticks() -> Vec<(usize, u64, u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    stat.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let cpu: usize = words.next()?.strip_prefix("cpu")?.parse().ok()?;
            let v: Vec<u64> = words.filter_map(|w| w.parse().ok()).collect();
            // user nice system idle iowait irq softirq steal ...
            let total: u64 = v.iter().take(8).sum();
            let idle = v.get(3)? + v.get(4).unwrap_or(&0);
            Some((cpu, total, idle, *v.get(7).unwrap_or(&0)))
        })
        .collect()
}

/// Each CPU's use over `window`, measured now.
pub fn cpu_use(window: std::time::Duration) -> Vec<CpuUse> {
    let before = cpu_ticks();
    std::thread::sleep(window);
    let after = cpu_ticks();
    before
        .iter()
        .zip(&after)
        .map(|(&(cpu, t0, i0, s0), &(_, t1, i1, s1))| {
            let total = (t1 - t0).max(1) as f64;
            CpuUse {
                cpu,
                busy: (total - (i1 - i0) as f64) / total,
                steal: (s1 - s0) as f64 / total,
            }
        })
        .collect()
}

/// Others' load, measured for a second while this test runs nothing:
/// `Some(what)` when a CPU was more than 15 % busy or 5 % stolen, enough
/// to move timings by the margins these tests hold.
pub fn machine_busy() -> Option<String> {
    let busy: Vec<String> = cpu_use(std::time::Duration::from_secs(1))
        .iter()
        .filter(|c| c.busy > 0.15 || c.steal > 0.05)
        .map(|c| {
            format!(
                "CPU {} {:.0}% busy, {:.0}% stolen",
                c.cpu,
                c.busy * 100.0,
                c.steal * 100.0
            )
        })
        .collect();
    (!busy.is_empty()).then(|| busy.join(", "))
}

/// A timing test on a machine that may be busy with other work: runs
/// `attempt` (which returns why a bound failed) up to three times. After
/// a failure it measures the machine with nothing of the test running:
/// quiet, the failure is pelt's and panics at once; busy, the attempt is
/// made again, and the last failure panics naming the load it met.
pub fn timing<T>(mut attempt: impl FnMut() -> Result<T, String>) -> T {
    const ATTEMPTS: usize = 3;
    let mut seen = Vec::new();
    for n in 1..=ATTEMPTS {
        let why = match attempt() {
            Ok(v) => return v,
            Err(why) => why,
        };
        match machine_busy() {
            None => panic!("{why} (the machine was quiet just after: not other work's doing)"),
            Some(load) => {
                eprintln!(
                    "attempt {n} of {ATTEMPTS}: {why}; the machine is busy ({load}): trying again"
                );
                seen.push(format!("{why} [{load}]"));
                // Up to ten more seconds' measuring for the load to pass
                // (a build finishing), then the next attempt either way.
                for _ in 0..10 {
                    if n == ATTEMPTS || machine_busy().is_none() {
                        break;
                    }
                }
            }
        }
    }
    panic!(
        "the machine was too busy with other work to hold these timings in {ATTEMPTS} attempts; \
         run the test again on a quieter machine: {}",
        seen.join("; ")
    )
}
