//! Delays that keep their promise: `?delay=2ms` answers after 2 ms, not
//! after tokio's millisecond timer rounds the deadline up to the next tick
//! (2.2-3 ms). A calibration server that adds its own error to every delay
//! would be measuring pelt against a moving target.
//!
//! On Linux each wait arms a `timerfd` and waits on it through the reactor
//! (the same approach as pelt-engine's dispatcher timer); the server's
//! threads run with a timer slack of 1 ns so the kernel does not batch the
//! wake-up late. Even so a wake-up comes tens of microseconds after the
//! timer fires (the reactor, the scheduler; ~65 µs on a VM), so each thread
//! learns how late it wakes at the least (a floor that rises slowly when
//! wake-ups get slower) and arms its timers that much early: the response
//! leaves just after the deadline, never before it (a delay is a minimum:
//! tests rely on `delay=20ms` taking at least 20 ms).
//! Elsewhere, or without a descriptor to spare, tokio's timer is used.

use tokio::time::Instant;

/// Sleeps until `deadline`, to within the scheduler's wake-up latency.
pub(crate) async fn sleep_until(deadline: Instant) {
    #[cfg(target_os = "linux")]
    if let Some(()) = precise(deadline.into_std()).await {
        return;
    }
    tokio::time::sleep_until(deadline).await
}

/// Lowers the calling thread's timer slack (the kernel's allowance for
/// waking it late; 50 µs by default). For the server's runtime threads.
pub(crate) fn tight_slack() {
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
}

/// The wait on a timerfd; `None` if one could not be set up (the caller
/// falls back to tokio's timer).
#[cfg(target_os = "linux")]
async fn precise(deadline: std::time::Instant) -> Option<()> {
    use rustix::time::{
        timerfd_create, timerfd_settime, Itimerspec, TimerfdClockId, TimerfdFlags,
        TimerfdTimerFlags, Timespec,
    };
    let early = std::time::Duration::from_nanos(WAKE_LATENESS.with(|l| l.get()));
    let armed = deadline.checked_sub(early).unwrap_or(deadline);
    let now = std::time::Instant::now();
    if armed <= now {
        return Some(());
    }
    let fd = timerfd_create(
        TimerfdClockId::Monotonic,
        TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
    )
    .ok()?;
    // One-shot: no interval.
    let spec = Itimerspec {
        it_interval: Timespec::default(),
        it_value: Timespec::try_from(armed - now).ok()?,
    };
    timerfd_settime(&fd, TimerfdTimerFlags::empty(), &spec).ok()?;
    // `AsyncFd::new` is deprecated because a registered descriptor could be
    // closed behind the reactor's back. The `OwnedFd` is moved in, never
    // handed out mutably, and closed only when the `AsyncFd` (and its
    // registration) is dropped, so that cannot happen; the replacement,
    // `register`, is `unsafe`, which this crate forbids.
    #[allow(deprecated)]
    let fd = tokio::io::unix::AsyncFd::new(fd).ok()?;
    // Readable once: the timer fired (one-shot, so it stays readable).
    let _ = fd.readable().await.ok()?;
    let late = armed.elapsed().as_nanos() as u64;
    // The floor: down at once to a faster wake-up, up by a little on each
    // slower one, so a change in the machine is learnt within a few
    // hundred waits.
    WAKE_LATENESS.with(|l| l.set(late.min(l.get() + LATENESS_RISE_NS).min(MAX_LATENESS_NS)));
    // Woken early after all (the floor was too high): wait out the rest.
    if let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        tokio::time::sleep(left).await;
    }
    Some(())
}

/// How much the learnt floor rises per slower wake-up, nanoseconds.
#[cfg(target_os = "linux")]
const LATENESS_RISE_NS: u64 = 200;

#[cfg(target_os = "linux")]
thread_local! {
    /// How late this thread's timer wake-ups come at the least, in
    /// nanoseconds (starts at nothing, and learns).
    static WAKE_LATENESS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Lateness beyond this is a stall (the thread was busy), not the wake-up
/// path: it is not learnt.
#[cfg(target_os = "linux")]
const MAX_LATENESS_NS: u64 = 500_000;
