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
//! to nice 19 with [`catch_up`].
//!
//! The `unsafe` here is `sched_setscheduler` and `sched_getscheduler`,
//! which no safe crate in the tree wraps. Invariants: the `sched_param` passed is a live,
//! initialised value on the caller's stack that the kernel only reads
//! during the call; pid 0 names the calling thread, so no other thread's
//! state changes; a refusal (EPERM, an old kernel) is returned, not acted
//! on, and leaves the thread as it was.
#![allow(unsafe_code)]

/// The niceness of bookkeeping threads outside the idle class.
pub(crate) const BACKGROUND_NICE: i32 = 19;

/// Puts the calling thread in the idle scheduling class, or at nice 19 if
/// that is refused. Elsewhere than Linux, nothing changes.
pub fn background() {
    #[cfg(target_os = "linux")]
    if set_policy(libc::SCHED_IDLE).is_ok() {
        return;
    }
    set_nice(BACKGROUND_NICE);
}

/// The calling thread is behind: back to the normal class at nice 19,
/// where it gets a share of a busy core. A thread outside the idle class
/// keeps its priority.
pub fn catch_up() {
    #[cfg(target_os = "linux")]
    if policy() != libc::SCHED_IDLE {
        return;
    }
    // Nice first: an unprivileged thread may leave the idle class only
    // for a niceness its RLIMIT_NICE allows, and 19 always is.
    set_nice(BACKGROUND_NICE);
    #[cfg(target_os = "linux")]
    let _ = set_policy(libc::SCHED_OTHER);
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
#[cfg(target_os = "linux")]
fn policy() -> libc::c_int {
    // SAFETY: pid 0 is this thread; the call only reads its state.
    unsafe { libc::sched_getscheduler(0) }
}

/// Sets the calling thread's niceness (Linux schedules threads apart, so
/// the thread id names it alone).
pub(crate) fn set_nice(nice: i32) {
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
    fn background_then_catch_up() {
        std::thread::spawn(|| {
            background();
            assert_eq!(policy(), libc::SCHED_IDLE);
            catch_up();
            assert_eq!(policy(), libc::SCHED_OTHER);
            // Outside the idle class, catching up changes nothing.
            set_nice(10);
            catch_up();
            assert_eq!(
                rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap(),
                10
            );
        })
        .join()
        .unwrap();
    }
}
