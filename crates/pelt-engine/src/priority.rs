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
//! Once every worker has stopped sending, nothing is left to protect, and
//! a thread still held low would let any busy process on its core (a
//! build, another benchmark) put off the run's end without bound: a sweep
//! step pinned beside a busy loop once took over 300 s to report. A
//! thread in the idle class cannot even run to raise itself, so the last
//! worker to stop raises them all ([`Lowered::worker_done`]).
//!
//! The `unsafe` here is `sched_setscheduler` and `sched_getscheduler`,
//! which no safe crate in the tree wraps. Invariants: the `sched_param`
//! passed is a live, initialised value on the caller's stack that the
//! kernel only reads during the call; the pid passed names the calling
//! thread (0) or a bookkeeping thread of this process that registered its
//! own id and is raised back to where it was; a refusal (EPERM, an old kernel) is returned, not acted
//! on, and leaves the thread as it was.
#![allow(unsafe_code)]

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The niceness of bookkeeping threads outside the idle class.
const BACKGROUND_NICE: i32 = 19;

/// How far behind the run a bookkeeping thread may fall before it leaves
/// the idle class.
const BEHIND: Duration = Duration::from_secs(1);

/// One run's lowered bookkeeping threads, raised back to where they were
/// by the last of its workers to stop sending.
#[derive(Debug)]
pub struct Lowered {
    state: Mutex<LoweredState>,
}

#[derive(Debug)]
struct LoweredState {
    /// Workers still sending.
    sending: usize,
    /// Each lowered thread: its id, its niceness before, whether it is in
    /// the idle class.
    threads: Vec<Thread>,
}

#[derive(Debug, Clone, Copy)]
struct Thread {
    tid: i32,
    was_nice: i32,
    idle: bool,
}

impl Lowered {
    /// For a run of `workers` workers.
    pub(crate) fn new(workers: usize) -> Arc<Lowered> {
        Arc::new(Lowered {
            state: Mutex::new(LoweredState {
                sending: workers,
                threads: Vec::new(),
            }),
        })
    }

    fn state(&self) -> MutexGuard<'_, LoweredState> {
        // A thread that panicked holding it left plain data behind.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Lowers the calling thread until the workers stop sending: the
    /// idle class in rate runs (where a delayed send is an error in the
    /// figures), nice 19 in closed loops (whose workers rarely sleep and
    /// would starve it). Nothing changes if they already have stopped.
    pub(crate) fn lower(self: &Arc<Self>, open_loop: bool) -> Background {
        self.lower_to(Level::for_load(open_loop))
    }

    /// The calling thread at `nice` until the workers stop sending, never
    /// in the idle class.
    pub(crate) fn lower_to_nice(self: &Arc<Self>, nice_value: i32) -> Background {
        self.lower_to(Level::Nice(nice_value))
    }

    fn lower_to(self: &Arc<Self>, level: Level) -> Background {
        let mut state = self.state();
        let background = Background {
            lowered: self.clone(),
            tid: gettid(),
        };
        if state.sending == 0 {
            return background;
        }
        let was_nice = nice_of(0);
        let idle = match level {
            Level::Idle => {
                // Nice first: leaving the idle class later needs only the
                // right to run at nice 19, not at the old niceness.
                set_nice(0, BACKGROUND_NICE);
                may_leave_idle() && set_policy(0, Policy::Idle).is_ok()
            }
            Level::Nice(n) => {
                set_nice(0, n);
                false
            }
        };
        state.threads.push(Thread {
            tid: background.tid,
            was_nice,
            idle,
        });
        background
    }

    /// A worker has stopped sending; the last raises every lowered thread
    /// back to the normal class and its old niceness, as far as the kernel
    /// allows (raising needs `CAP_SYS_NICE` or an `RLIMIT_NICE` that
    /// permits it; without them a thread stays at nice 19, out of the idle
    /// class).
    pub(crate) fn worker_done(&self) {
        let mut state = self.state();
        state.sending = state.sending.saturating_sub(1);
        if state.sending > 0 {
            return;
        }
        for t in std::mem::take(&mut state.threads) {
            if t.idle {
                let _ = set_policy(t.tid, Policy::Other);
            }
            set_nice(t.tid, t.was_nice);
        }
    }

    /// Whether the workers still send.
    fn sending(&self) -> bool {
        self.state().sending > 0
    }
}

/// Ends a worker's sending when dropped, on any way out of its thread (a
/// panic included), so that the bookkeeping is never left low.
#[derive(Debug)]
pub(crate) struct SendingEnds(pub(crate) Arc<Lowered>);

impl Drop for SendingEnds {
    fn drop(&mut self) {
        self.0.worker_done();
    }
}

#[derive(Debug, Clone, Copy)]
enum Level {
    Idle,
    Nice(i32),
}

impl Level {
    fn for_load(open_loop: bool) -> Level {
        match open_loop {
            true => Level::Idle,
            false => Level::Nice(BACKGROUND_NICE),
        }
    }
}

/// A bookkeeping thread's place while its run's workers send: lowered
/// below them ([`crate::Run::lower_this_thread`]) until the last of them
/// stops, which raises it back.
///
/// The idle class is only entered where the thread may leave it again
/// (`CAP_SYS_NICE`, or an `RLIMIT_NICE` of at least 1): an unprivileged
/// thread in it for good gets almost nothing next to any busy process on
/// its core.
#[derive(Debug)]
pub struct Background {
    lowered: Arc<Lowered>,
    tid: i32,
}

impl Background {
    /// Between two steps of a second's work: offers the core to a worker
    /// that shares it. Even at a low priority the scheduler lets a thread
    /// finish its time slice (a millisecond or more) before a waking
    /// worker gets the core. Once the sending is over, nothing to offer.
    pub fn pause(&self) {
        if self.lowered.sending() {
            std::thread::yield_now();
        }
    }

    /// Call as each Unix `second` of the run is handled: if it ended
    /// more than a second ago, other work keeps the cores too busy for the
    /// idle class, and seconds (a recorder of a megabyte or so each) would
    /// pile up: back to nice 19.
    pub fn keep_up(&mut self, second: u64) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        if now <= Duration::from_secs(second + 1) + BEHIND {
            return;
        }
        // Under the lock: the last worker's raise must not be undone.
        let mut state = self.lowered.state();
        if let Some(t) = state
            .threads
            .iter_mut()
            .find(|t| t.tid == self.tid && t.idle)
        {
            // Nice 19 already, from the lowering: out of the idle class.
            let _ = set_policy(0, Policy::Other);
            t.idle = false;
        }
    }
}

/// Whether this thread could leave the idle class at nice 19: with
/// `CAP_SYS_NICE`, or an `RLIMIT_NICE` of at least 1 (the kernel treats
/// the idle class as nice 20).
fn may_leave_idle() -> bool {
    may_leave_idle_with(os::has_cap_sys_nice(), os::rlimit_nice())
}

fn may_leave_idle_with(cap_sys_nice: bool, rlimit_nice: u64) -> bool {
    cap_sys_nice || rlimit_nice >= 1
}

use os::{gettid, nice_of, set_nice, set_policy};

#[derive(Debug, Clone, Copy)]
enum Policy {
    Idle,
    Other,
}

/// The scheduler's calls; elsewhere than Linux nothing changes.
#[cfg(target_os = "linux")]
mod os {
    use super::Policy;

    /// Whether this thread's effective capabilities hold `CAP_SYS_NICE`
    /// (a root in a container may lack it).
    pub(super) fn has_cap_sys_nice() -> bool {
        const CAP_SYS_NICE: u32 = 23;
        std::fs::read_to_string("/proc/thread-self/status")
            .ok()
            .and_then(|status| {
                let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
                u64::from_str_radix(hex.trim(), 16).ok()
            })
            .is_some_and(|caps| caps & (1 << CAP_SYS_NICE) != 0)
    }

    pub(super) fn rlimit_nice() -> u64 {
        rustix::process::getrlimit(rustix::process::Resource::Nice)
            .current
            .unwrap_or(u64::MAX)
    }

    pub(super) fn gettid() -> i32 {
        rustix::thread::gettid().as_raw_nonzero().get()
    }

    /// A thread's niceness (0: the calling thread; 0 where it cannot be
    /// read).
    pub(super) fn nice_of(tid: i32) -> i32 {
        rustix::process::getpriority_process(rustix::process::Pid::from_raw(tid)).unwrap_or(0)
    }

    /// Sets a thread's niceness (0: the calling thread; Linux schedules
    /// threads apart, so the thread id names it alone).
    pub(super) fn set_nice(tid: i32, nice: i32) {
        let _ = rustix::process::setpriority_process(rustix::process::Pid::from_raw(tid), nice);
    }

    /// Sets a thread's scheduling class (0: the calling thread).
    pub(super) fn set_policy(tid: i32, policy: Policy) -> std::io::Result<()> {
        let policy = match policy {
            Policy::Idle => libc::SCHED_IDLE,
            Policy::Other => libc::SCHED_OTHER,
        };
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: see the module's invariants: `param` outlives the call and
        // is only read; `tid` is this thread or a registered one of this
        // process.
        let rc = unsafe { libc::sched_setscheduler(tid, policy, &param) };
        match rc {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    use super::Policy;

    pub(super) fn has_cap_sys_nice() -> bool {
        false
    }
    pub(super) fn rlimit_nice() -> u64 {
        0
    }
    pub(super) fn gettid() -> i32 {
        0
    }
    pub(super) fn nice_of(_tid: i32) -> i32 {
        0
    }
    pub(super) fn set_nice(_tid: i32, _nice: i32) {}
    pub(super) fn set_policy(_tid: i32, _policy: Policy) -> std::io::Result<()> {
        Ok(())
    }
}

/// The calling thread's scheduling class.
#[cfg(all(test, target_os = "linux"))]
fn policy() -> libc::c_int {
    // SAFETY: pid 0 is this thread; the call only reads its state.
    unsafe { libc::sched_getscheduler(0) }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn nice() -> i32 {
        nice_of(0)
    }

    /// Runs `f` on a thread of its own (priorities are per thread).
    fn on_a_thread(f: impl FnOnce() + Send + 'static) {
        std::thread::spawn(f).join().unwrap();
    }

    #[test]
    fn idle_in_rate_runs_then_caught_up_when_behind() {
        on_a_thread(|| {
            let lowered = Lowered::new(1);
            let mut bg = lowered.lower(true);
            if !may_leave_idle() {
                // No way back from the idle class here: not entered.
                assert_eq!(policy(), libc::SCHED_OTHER);
                return;
            }
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
        });
    }

    #[test]
    fn closed_loops_and_many_workers_stay_out_of_the_idle_class() {
        on_a_thread(|| {
            let lowered = Lowered::new(1);
            let mut bg = lowered.lower(false);
            assert_eq!(policy(), libc::SCHED_OTHER);
            assert_eq!(nice(), BACKGROUND_NICE);
            let mut bg10 = lowered.lower_to_nice(10);
            bg.keep_up(0);
            bg10.keep_up(0);
            assert_eq!(nice(), 10, "keep_up leaves a normal-class thread alone");
        });
    }

    /// The last worker to stop raises a thread lowered elsewhere: one in
    /// the idle class could not run to raise itself.
    #[test]
    fn the_last_worker_to_stop_gives_the_bookkeeping_back() {
        let lowered = Lowered::new(2);
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (check_tx, check_rx) = std::sync::mpsc::channel::<()>();
        let l = lowered.clone();
        let bookkeeper = std::thread::spawn(move || {
            let bg = l.lower(true);
            let idle = policy() == libc::SCHED_IDLE;
            ready_tx.send((idle, nice())).unwrap();
            check_rx.recv().unwrap();
            bg.pause();
            (policy(), nice())
        });
        let (idle, lowered_nice) = ready_rx.recv().unwrap();
        assert_eq!(idle, may_leave_idle(), "idle only where it can be left");
        assert_eq!(lowered_nice, BACKGROUND_NICE);
        lowered.worker_done();
        assert!(lowered.sending(), "one worker still sends");
        drop(SendingEnds(lowered.clone()));
        assert!(!lowered.sending());
        check_tx.send(()).unwrap();
        let (policy_after, nice_after) = bookkeeper.join().unwrap();
        assert_eq!(policy_after, libc::SCHED_OTHER);
        // Back to nice 0 where the kernel lets a thread be raised.
        let expected = match os::has_cap_sys_nice() {
            true => 0,
            false => BACKGROUND_NICE,
        };
        assert_eq!(nice_after, expected);
    }

    #[test]
    fn a_thread_lowered_after_the_sending_stays_as_it_was() {
        on_a_thread(|| {
            let lowered = Lowered::new(1);
            lowered.worker_done();
            let _bg = lowered.lower(true);
            assert_eq!(policy(), libc::SCHED_OTHER);
            assert_eq!(nice(), 0);
        });
    }

    #[test]
    fn the_idle_class_only_where_it_can_be_left() {
        assert!(may_leave_idle_with(true, 0));
        assert!(may_leave_idle_with(false, 1));
        assert!(
            !may_leave_idle_with(false, 0),
            "no way back at RLIMIT_NICE 0"
        );
    }
}
