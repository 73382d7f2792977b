//! Priorities of the bookkeeping threads (the collector, the binary's
//! results writer) against the workers they may share a core with.
//!
//! Pinned to one core with a worker (`taskset -c 0 pelt run ...`), a
//! bookkeeping thread that runs its once-a-second millisecond of merging
//! and encoding *instead of* the worker sends every request due meanwhile
//! late. At nice 19 the scheduler still lets it finish its slice before a
//! waking worker gets the core: rate runs at 20,000 req/s showed sends
//! 0.9-1.1 ms late at every second's start. `SCHED_IDLE` is preempted by
//! any waking normal thread at once (0.3-0.5 ms late, the rest being the
//! sleep and wake-up themselves).
//!
//! An idle-class thread on a core the workers keep busy all the time gets
//! almost nothing, and its work would pile up (each pending second holds a
//! megabyte-sized recorder), so a thread that finds itself behind goes back
//! to nice 19 ([`Background::keep_up`]).
//!
//! The `unsafe` here is `sched_setscheduler` and `sched_getscheduler`,
//! which no safe crate in the tree wraps. Invariants: the `sched_param`
//! passed is a live, initialised value on the caller's stack that the
//! kernel only reads during the call; pid 0 names the calling thread, so no other thread's
//! state changes; a refusal (EPERM, an old kernel) is returned, not acted
//! on, and leaves the thread as it was.
#![allow(unsafe_code)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The niceness of bookkeeping threads outside the idle class.
const BACKGROUND_NICE: i32 = 19;

/// How far behind the run a bookkeeping thread may fall before it leaves
/// the idle class.
const BEHIND: Duration = Duration::from_secs(1);

/// A bookkeeping thread's lowered priority: the idle class in rate runs
/// (where a delayed send is an error in the figures), nice 19 in closed
/// loops (whose workers rarely sleep and would starve it), raised to nice
/// 19 once if the thread falls behind.
#[derive(Debug)]
pub struct Background {
    /// Whether the thread is in the idle class and still may need raising.
    idle: bool,
}

impl Background {
    /// Lowers the calling thread (on Linux; elsewhere nothing changes).
    pub fn lower(open_loop: bool) -> Background {
        #[cfg(target_os = "linux")]
        if open_loop && set_policy(libc::SCHED_IDLE).is_ok() {
            return Background { idle: true };
        }
        set_nice(BACKGROUND_NICE);
        Background { idle: false }
    }

    /// The calling thread at `nice`, never in the idle class.
    pub fn at_nice(nice: i32) -> Background {
        set_nice(nice);
        Background { idle: false }
    }

    /// Call as each Unix `second` of the run is handled: if it ended
    /// more than a second ago, other work keeps the cores too busy for the
    /// idle class, and seconds (a recorder of a megabyte or so each) would
    /// pile up: back to nice 19.
    pub fn keep_up(&mut self, second: u64) {
        if !self.idle {
            return;
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        if now > Duration::from_secs(second + 1) + BEHIND {
            // Nice first: an unprivileged thread may leave the idle class
            // only for a niceness its RLIMIT_NICE allows, and 19 always is.
            set_nice(BACKGROUND_NICE);
            #[cfg(target_os = "linux")]
            let _ = set_policy(libc::SCHED_OTHER);
            self.idle = false;
        }
    }
}

#[cfg(target_os = "linux")]
fn set_policy(policy: libc::c_int) -> std::io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: see the module's invariants: `param` outlives the call and
    // is only read; pid 0 is this thread.
    let rc = unsafe { libc::sched_setscheduler(0, policy, &param) };
    match rc {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// The calling thread's scheduling class.
#[cfg(all(test, target_os = "linux"))]
fn policy() -> libc::c_int {
    // SAFETY: pid 0 is this thread; the call only reads its state.
    unsafe { libc::sched_getscheduler(0) }
}

/// Sets the calling thread's niceness (Linux schedules threads apart, so
/// the thread id names it alone).
fn set_nice(nice: i32) {
    #[cfg(target_os = "linux")]
    {
        let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), nice);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn idle_in_rate_runs_then_caught_up_when_behind() {
        std::thread::spawn(|| {
            let mut bg = Background::lower(true);
            assert_eq!(policy(), libc::SCHED_IDLE);
            let this_second = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs();
            bg.keep_up(this_second);
            assert_eq!(policy(), libc::SCHED_IDLE, "not behind yet");
            bg.keep_up(this_second - 5);
            assert_eq!(policy(), libc::SCHED_OTHER);
            assert_eq!(nice(), BACKGROUND_NICE);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn closed_loops_and_many_workers_stay_out_of_the_idle_class() {
        std::thread::spawn(|| {
            let mut bg = Background::lower(false);
            assert_eq!(policy(), libc::SCHED_OTHER);
            assert_eq!(nice(), BACKGROUND_NICE);
            let mut bg10 = Background::at_nice(10);
            bg.keep_up(0);
            bg10.keep_up(0);
            assert_eq!(nice(), 10, "keep_up leaves a normal-class thread alone");
        })
        .join()
        .unwrap();
    }

    fn nice() -> i32 {
        rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap()
    }
}
