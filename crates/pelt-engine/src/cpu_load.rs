//! How busy a worker thread was, from the kernel's scheduler statistics
//! for the thread itself (`/proc/thread-self/schedstat`: nanoseconds on a
//! CPU, nanoseconds runnable but waiting for one).
//!
//! Read once when a worker starts sending and once when it ends: never on
//! the hot path. The waiting share matters as much as the CPU share: a
//! client that shares its cores with the server (or a build) is short of
//! CPU while using well under 100 % of one.

use pelt_core::ThreadLoad;
use std::time::Instant;

/// One reading of the calling thread's scheduler statistics.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ThreadClock {
    on_cpu_ns: u64,
    waiting_ns: u64,
    at: Instant,
}

impl ThreadClock {
    /// The calling thread's reading, or `None` where the kernel does not
    /// give one (not Linux, or schedstat compiled out).
    pub fn now() -> Option<ThreadClock> {
        let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        let (on_cpu_ns, waiting_ns) = parse(&text)?;
        Some(ThreadClock {
            on_cpu_ns,
            waiting_ns,
            at: Instant::now(),
        })
    }

    /// The thread's load between `start` and this reading, as shares of
    /// the wall-clock time between them.
    pub fn since(&self, start: &ThreadClock) -> ThreadLoad {
        let wall = self.at.duration_since(start.at).as_nanos() as f64;
        // To 0.01 %: more digits would be noise, and a share with few
        // digits reads back from the results file as exactly the same f64
        // (a saved run must report exactly as it did live).
        let share = |ns: u64| match wall > 0.0 {
            true => ((ns as f64 / wall).clamp(0.0, 1.0) * 1e4).round() / 1e4,
            false => 0.0,
        };
        ThreadLoad {
            on_cpu: share(self.on_cpu_ns.saturating_sub(start.on_cpu_ns)),
            waiting: share(self.waiting_ns.saturating_sub(start.waiting_ns)),
        }
    }
}

/// `"<on cpu ns> <waiting ns> <timeslices>\n"`.
fn parse(text: &str) -> Option<(u64, u64)> {
    let mut fields = text.split_ascii_whitespace().map(str::parse::<u64>);
    Some((fields.next()?.ok()?, fields.next()?.ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Whatever the readings, the shares stay in 0..=1 and read back
        /// from JSON (the results file) as exactly the same numbers.
        #[test]
        fn shares_are_bounded_and_survive_json(
            on_cpu in 0u64..20_000_000_000,
            waiting in 0u64..20_000_000_000,
            wall in 0u64..10_000_000_000,
        ) {
            let start = ThreadClock { on_cpu_ns: 7, waiting_ns: 9, at: Instant::now() };
            let end = ThreadClock {
                on_cpu_ns: 7 + on_cpu,
                waiting_ns: 9 + waiting,
                at: start.at + std::time::Duration::from_nanos(wall),
            };
            let l = end.since(&start);
            proptest::prop_assert!((0.0..=1.0).contains(&l.on_cpu));
            proptest::prop_assert!((0.0..=1.0).contains(&l.waiting));
            let back: ThreadLoad =
                serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
            proptest::prop_assert_eq!(back, l);
        }
    }

    #[test]
    fn schedstat_lines_parse_and_garbage_does_not() {
        assert_eq!(parse("276072 1911341 2\n"), Some((276_072, 1_911_341)));
        assert_eq!(parse(""), None);
        assert_eq!(parse("12"), None);
        assert_eq!(parse("x 1 2"), None);
    }

    /// A thread that spins for a while shows mostly on-CPU time; one that
    /// sleeps shows next to none. Shares stay within 0..=1.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_spinning_thread_is_on_cpu_and_a_sleeping_one_is_not() {
        let measure = |work: fn()| {
            std::thread::spawn(move || {
                let start = ThreadClock::now().expect("Linux has schedstat");
                work();
                ThreadClock::now().unwrap().since(&start)
            })
            .join()
            .unwrap()
        };
        let spin = measure(|| {
            let until = Instant::now() + std::time::Duration::from_millis(200);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        });
        let sleep = measure(|| std::thread::sleep(std::time::Duration::from_millis(200)));
        for l in [spin, sleep] {
            assert!((0.0..=1.0).contains(&l.on_cpu) && (0.0..=1.0).contains(&l.waiting));
        }
        // Spinning wants the CPU all along: on it, or waiting for it when
        // the machine is busy.
        assert!(spin.demand() > 0.9, "{spin:?}");
        assert!(sleep.on_cpu < 0.1, "{sleep:?}");
    }
}
