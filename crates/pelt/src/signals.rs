//! Ctrl-C, SIGTERM and SIGHUP: the first stops the current run, which then
//! ends as any run does (report, results file finished, history row marked
//! interrupted, asserts evaluated); a second one quits at once.
//!
//! SIGTERM is how CI cancels a job, Kubernetes stops a pod (and enforces
//! `activeDeadlineSeconds`) and Slurm ends a job at its time limit;
//! SIGHUP, a closed terminal or session. Killed by them, pelt would leave
//! no report: all three take Ctrl-C's path, and pelt exits 128 + the
//! signal's number as a shell reports a command killed by it (130, 143,
//! 129), after the report.
//!
//! A terminal that goes away (a tmux session killed, an SSH connection
//! dropped) is a hang-up whether or not a SIGHUP reaches pelt (a process
//! outside the terminal's session gets none; the terminal dashboard sees
//! its input end): [`hang_up`] ends the run as SIGHUP does. Either way the
//! standard streams still pointing at the dead terminal are pointed at
//! /dev/null first, so that what pelt says on its way out (the report,
//! asserts, warnings) cannot fail with EIO and take the ending with it.
//!
//! One handler serves the whole process: it fires the process's one
//! [`Cancel`] token ([`token`]), which the library's runs watch, so a
//! command that makes many runs (`pelt experiment`, `pelt sweep`) stops
//! the one in progress and makes no more.

use pelt_campaign::Cancel;
use pelt_core::{RunSummary, StopCause};
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Once, OnceLock};

/// The signals that stop a run, with their numbers (Linux and the BSDs
/// agree on these three).
const SIGNALS: [(&str, i32); 3] = [("SIGINT", 2), ("SIGTERM", 15), ("SIGHUP", SIGHUP)];
/// SIGHUP's number: a hang-up, signalled or seen on the terminal.
const SIGHUP: i32 = 1;
/// Exit code of a run stopped by a signal: 128 + its number.
const SIGNAL_EXIT_BASE: i32 = 128;
/// Ctrl-C's: the code of a run stopped without a known cause (the
/// terminal dashboard's `q`).
const SIGINT_EXIT: u8 = 130;

/// The number of the first signal caught; 0 before.
static FIRED: AtomicI32 = AtomicI32::new(0);
/// What a signal fires.
static TOKEN: OnceLock<Cancel> = OnceLock::new();
static STARTED: Once = Once::new();

/// Starts the handler (once): from here on the first signal only sets
/// [`interrupted`] and stops the current run, if any. A command that does
/// work between runs (an experiment's setup) calls this first, so a
/// signal then cannot kill pelt before it has cleaned up.
pub fn install() {
    STARTED.call_once(spawn_handler);
}

/// The token a signal fires, with the handler started: pass it to every
/// run and campaign the command makes.
pub fn token() -> Cancel {
    install();
    TOKEN.get_or_init(Cancel::new).clone()
}

/// The terminal went away without a SIGHUP (the dashboard read the end
/// of its input): the run ends as on SIGHUP, exit code 129. A signal
/// caught before wins; a SIGHUP after this is not a second one.
pub fn hang_up() {
    install();
    detach_dead_terminal();
    if FIRED
        .compare_exchange(0, SIGHUP, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        TOKEN.get_or_init(Cancel::new).stop(StopCause::Signal {
            signal: "SIGHUP".to_string(),
        });
    }
}

/// Points stdin, stdout and stderr that are a terminal which has hung up
/// at /dev/null: writing to a hung-up terminal fails with EIO, and
/// `eprintln!` panics on that. A stream that is a file or a working pipe
/// polls without HUP and is left alone.
fn detach_dead_terminal() {
    #[cfg(unix)]
    {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        use std::os::fd::AsFd;
        let hung_up = |fd: std::os::fd::BorrowedFd<'_>| {
            let mut fds = [PollFd::new(&fd, PollFlags::empty())];
            let now = Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            poll(&mut fds, Some(&now)).is_ok() && fds[0].revents().contains(PollFlags::HUP)
        };
        let null = || {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/null")
        };
        let Ok(null) = null() else {
            return;
        };
        if hung_up(std::io::stdin().as_fd()) {
            let _ = rustix::stdio::dup2_stdin(&null);
        }
        if hung_up(std::io::stdout().as_fd()) {
            let _ = rustix::stdio::dup2_stdout(&null);
        }
        if hung_up(std::io::stderr().as_fd()) {
            let _ = rustix::stdio::dup2_stderr(&null);
        }
    }
}

/// Exit code of a command that a signal stopped: 128 + the first signal's
/// number (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP), 130 when
/// none came (a run stopped from the terminal dashboard).
pub fn exit_code() -> ExitCode {
    ExitCode::from(code_of(FIRED.load(Ordering::SeqCst)))
}

fn code_of(signal: i32) -> u8 {
    match signal {
        0 => SIGINT_EXIT,
        n => u8::try_from(SIGNAL_EXIT_BASE + n).unwrap_or(SIGINT_EXIT),
    }
}

/// The exit code of a run that ended before its stop condition: by its
/// stop cause (a signal's code, or [`crate::output::ABORTED`]); `None` for a run
/// that reached it.
pub fn ending(summary: &RunSummary) -> Option<ExitCode> {
    if !summary.interrupted {
        return None;
    }
    Some(match &summary.stopped_by {
        Some(StopCause::Abort { .. }) => ExitCode::from(crate::output::ABORTED),
        Some(StopCause::Signal { signal }) => {
            let number = SIGNALS
                .iter()
                .find(|(name, _)| name == signal)
                .map_or(0, |&(_, n)| n);
            ExitCode::from(code_of(number))
        }
        // A feed that ran out ends a complete run, never an interrupted one.
        Some(StopCause::FeedRanOut { .. }) | None => exit_code(),
    })
}

/// Starts the handler thread and returns once the signals are caught, so
/// that a signal arriving right after `install` is never the default kill.
fn spawn_handler() {
    use tokio::signal::unix::{signal, SignalKind};
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    // A small runtime of its own, so the engine's workers stay untouched.
    let spawned = std::thread::Builder::new()
        .name("pelt-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
            else {
                return;
            };
            // Registering the streams installs the handlers, now.
            let streams: Result<Vec<_>, _> = {
                let _in_runtime = rt.enter();
                SIGNALS
                    .iter()
                    .map(|&(name, n)| signal(SignalKind::from_raw(n)).map(|s| (s, name, n)))
                    .collect()
            };
            let _ = ready_tx.send(());
            let Ok(mut streams) = streams else {
                return;
            };
            rt.block_on(async {
                let Some((name, number)) = next(&mut streams).await else {
                    return;
                };
                if number == SIGHUP {
                    // Before anything is written to the terminal.
                    detach_dead_terminal();
                }
                // Not eprintln!: after SIGHUP the terminal may be gone, and
                // a failed write must not take this thread down.
                let again = match number {
                    2 => "Ctrl-C again to quit now".to_string(),
                    _ => format!("{name} again or Ctrl-C to quit now"),
                };
                let what = match number {
                    2 => String::new(),
                    _ => format!(" on {name}"),
                };
                let _ = writeln!(
                    std::io::stderr(),
                    "\npelt: stopping{what}; finishing requests in flight ({again})"
                );
                // The first ending's number: a hang-up the dashboard saw
                // first stays one.
                let _ = FIRED.compare_exchange(0, number, Ordering::SeqCst, Ordering::SeqCst);
                TOKEN.get_or_init(Cancel::new).stop(StopCause::Signal {
                    signal: name.to_string(),
                });
                if let Some((_, number)) = next(&mut streams).await {
                    std::process::exit(i32::from(code_of(number)));
                }
            });
        });
    match spawned {
        // Bounded: a thread that cannot start its runtime says so by
        // dropping the sender.
        Ok(_) => {
            let _ = ready_rx.recv_timeout(std::time::Duration::from_secs(5));
        }
        Err(e) => {
            eprintln!("pelt: warning: Ctrl-C and SIGTERM will not stop the run gracefully: {e}")
        }
    }
}

/// The next of the signals caught: its name and number.
async fn next(
    streams: &mut [(tokio::signal::unix::Signal, &'static str, i32)],
) -> Option<(&'static str, i32)> {
    use std::task::Poll;
    std::future::poll_fn(|cx| {
        for (stream, name, n) in streams.iter_mut() {
            if let Poll::Ready(got) = stream.poll_recv(cx) {
                return Poll::Ready(got.map(|()| (*name, *n)));
            }
        }
        Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_128_plus_the_signal() {
        assert_eq!(code_of(2), 130);
        assert_eq!(code_of(15), 143);
        assert_eq!(code_of(1), 129);
        assert_eq!(code_of(0), 130);
    }
}
