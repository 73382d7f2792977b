//! A sleep with microsecond precision for the rate dispatcher.
//!
//! tokio's timer wheel has millisecond granularity and rounds deadlines up,
//! so a dispatcher sleeping on it sends every request ~1 ms late: harmless
//! for a timeout, but it adds a millisecond to every response time of a
//! server that answers in 50 µs. A `timerfd` armed with the exact deadline
//! wakes the event loop through the reactor at the right moment instead.
//! Elsewhere (non-Linux) tokio's sleep is used and the lag shows, honestly,
//! as send lag.

use std::time::Instant;

#[derive(Debug)]
pub(crate) struct PreciseTimer {
    #[cfg(target_os = "linux")]
    fd: tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>,
}

impl PreciseTimer {
    /// A timer for the current runtime; also lowers this thread's timer
    /// slack (default 50 µs) so wake-ups are not batched late by the kernel.
    #[cfg(target_os = "linux")]
    pub fn new() -> std::io::Result<PreciseTimer> {
        use rustix::time::{timerfd_create, TimerfdClockId, TimerfdFlags};
        let fd = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )?;
        let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
        // `AsyncFd::new` is deprecated because a registered descriptor could
        // be closed behind the reactor's back. Here the `OwnedFd` is moved
        // in, never handed out mutably, and closed only when the `AsyncFd`
        // (and its registration) is dropped, so that cannot happen; the
        // replacement, `register`, is `unsafe`, which this crate forbids.
        #[allow(deprecated)]
        let fd = tokio::io::unix::AsyncFd::new(fd)?;
        Ok(PreciseTimer { fd })
    }

    #[cfg(not(target_os = "linux"))]
    pub fn new() -> std::io::Result<PreciseTimer> {
        Ok(PreciseTimer {})
    }

    /// Sleeps until `deadline`. Cancel-safe: re-arming replaces the old
    /// deadline and resets the expiry count.
    #[cfg(target_os = "linux")]
    pub async fn sleep_until(&self, deadline: Instant) {
        use rustix::time::{timerfd_settime, Itimerspec, TimerfdTimerFlags, Timespec};
        let now = Instant::now();
        if deadline <= now {
            return;
        }
        // One-shot (no interval); a wait too long for a `timespec` falls
        // back to tokio's timer.
        let Ok(it_value) = Timespec::try_from(deadline - now) else {
            return tokio::time::sleep_until(deadline.into()).await;
        };
        let spec = Itimerspec {
            it_interval: Timespec::default(),
            it_value,
        };
        if timerfd_settime(&self.fd, TimerfdTimerFlags::empty(), &spec).is_err() {
            return tokio::time::sleep_until(deadline.into()).await;
        }
        loop {
            let Ok(mut ready) = self.fd.readable().await else {
                return tokio::time::sleep_until(deadline.into()).await;
            };
            let mut expirations = [0u8; 8];
            match ready.try_io(|fd| Ok(rustix::io::read(fd, &mut expirations)?)) {
                Ok(_) => {
                    // Consumed: the next wait must not start with a stale
                    // readiness and a wasted `read` that finds nothing.
                    ready.clear_ready();
                    return;
                }
                // Readiness left over from an earlier, replaced deadline.
                Err(_would_block) => continue,
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub async fn sleep_until(&self, deadline: Instant) {
        tokio::time::sleep_until(deadline.into()).await
    }
}

thread_local! {
    /// While rate mode's dispatcher sleeps until its next wake-up with a
    /// send window: that wake-up. See [`Batching`].
    static BATCH_UNTIL: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// Rate mode with a send window: until the dispatcher's next wake-up, the
/// worker's thread sleeps instead of waiting on its sockets, so responses
/// arriving meanwhile are read together at that wake-up rather than each
/// waking the thread. Honest only because every response is timed by the
/// kernel's receive stamp (`conn::StampedTcp`); the plan sets no window
/// otherwise. Ending the guard (the dispatcher woke, or was stopped)
/// restores the usual wait.
#[derive(Debug)]
pub(crate) struct Batching(());

impl Batching {
    /// Batches until `until`, never sleeping longer than `window` at once
    /// (ns), however far off `until` is.
    pub fn until(until: Instant, window: u64) -> Batching {
        let cap = Instant::now() + std::time::Duration::from_nanos(window);
        BATCH_UNTIL.with(|b| b.set(Some(until.min(cap))));
        Batching(())
    }
}

impl Drop for Batching {
    fn drop(&mut self) {
        BATCH_UNTIL.with(|b| b.set(None));
    }
}

/// The worker runtime's park hook: called when the thread has nothing to
/// run and is about to wait on its sockets and timers. While batching, it
/// sleeps until the batch's end first (a wake-up from Ctrl-C or a timer
/// is then late by at most the window, which is small); the wait that
/// follows finds every socket that became ready meanwhile at once.
pub(crate) fn before_park() {
    let Some(until) = BATCH_UNTIL.with(|b| b.get()) else {
        return;
    };
    let now = Instant::now();
    if until > now {
        std::thread::sleep(until - now);
    }
}
