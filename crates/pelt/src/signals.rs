//! Ctrl-C: the first stops the current run and prints what was measured;
//! a second one quits at once.
//!
//! One handler serves the whole process, so a command that makes many runs
//! (`pelt experiment`) points it at each run in turn and asks afterwards
//! whether the user wants to stop.

use pelt_engine::Canceller;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};

/// Set by the first Ctrl-C.
static FIRED: AtomicBool = AtomicBool::new(false);
/// The run a Ctrl-C stops.
static CURRENT: Mutex<Option<Canceller>> = Mutex::new(None);
static STARTED: Once = Once::new();

/// Starts the handler (once): from here on the first Ctrl-C only sets
/// [`interrupted`] and stops the current run, if any. A command that does
/// work between runs (an experiment's setup) calls this first, so a Ctrl-C
/// then cannot kill pelt before it has cleaned up.
pub fn install() {
    STARTED.call_once(spawn_handler);
}

/// Makes Ctrl-C cancel `canceller` (replacing any earlier run's), starting
/// the handler on first use. If Ctrl-C came already, cancels at once.
pub fn cancel_on_ctrl_c(canceller: Canceller) {
    install();
    // Publish first, then look: either the handler sees this canceller or
    // this sees the handler's flag, so a Ctrl-C is never lost in between.
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = Some(canceller.clone());
    if FIRED.load(Ordering::SeqCst) {
        canceller.cancel();
    }
}

/// Whether the user pressed Ctrl-C.
pub fn interrupted() -> bool {
    FIRED.load(Ordering::SeqCst)
}

/// Starts the handler thread and returns once SIGINT is caught, so that a
/// Ctrl-C arriving right after `install` is never the default kill.
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
            // Registering the stream installs the handler, now.
            let sigint = {
                let _in_runtime = rt.enter();
                signal(SignalKind::interrupt())
            };
            let _ = ready_tx.send(());
            let Ok(mut sigint) = sigint else {
                return;
            };
            rt.block_on(async {
                if sigint.recv().await.is_none() {
                    return;
                }
                eprintln!(
                    "\npelt: stopping; finishing requests in flight (Ctrl-C again to quit now)"
                );
                FIRED.store(true, Ordering::SeqCst);
                if let Some(c) = CURRENT.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                    c.cancel();
                }
                if sigint.recv().await.is_some() {
                    std::process::exit(130);
                }
            });
        });
    match spawned {
        // Bounded: a thread that cannot start its runtime says so by
        // dropping the sender.
        Ok(_) => {
            let _ = ready_rx.recv_timeout(std::time::Duration::from_secs(5));
        }
        Err(e) => eprintln!("pelt: warning: Ctrl-C will not stop the run gracefully: {e}"),
    }
}
