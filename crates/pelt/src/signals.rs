//! Ctrl-C: the first stops the current run and prints what was measured;
//! a second one quits at once.
//!
//! One handler serves the whole process, so a command that makes many runs
//! (`pelt experiment`) points it at each run in turn and asks afterwards
//! whether the user wants to stop.

use pelt_engine::Canceller;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

#[derive(Debug, Default)]
struct Interrupt {
    fired: AtomicBool,
    current: Mutex<Option<Canceller>>,
}

static INTERRUPT: OnceLock<Interrupt> = OnceLock::new();

/// Makes Ctrl-C cancel `canceller` (replacing any earlier run's), starting
/// the handler on first use. If Ctrl-C came already, cancels at once.
pub fn cancel_on_ctrl_c(canceller: Canceller) {
    let interrupt = INTERRUPT.get_or_init(|| {
        spawn_handler();
        Interrupt::default()
    });
    // Publish first, then look: either the handler sees this canceller or
    // this sees the handler's flag, so a Ctrl-C is never lost in between.
    *interrupt.current.lock().unwrap_or_else(|e| e.into_inner()) = Some(canceller.clone());
    if interrupt.fired.load(Ordering::SeqCst) {
        canceller.cancel();
    }
}

/// Whether the user pressed Ctrl-C.
pub fn interrupted() -> bool {
    INTERRUPT
        .get()
        .is_some_and(|i| i.fired.load(Ordering::SeqCst))
}

fn spawn_handler() {
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
            rt.block_on(async {
                if tokio::signal::ctrl_c().await.is_err() {
                    return;
                }
                eprintln!(
                    "\npelt: stopping; finishing requests in flight (Ctrl-C again to quit now)"
                );
                if let Some(i) = INTERRUPT.get() {
                    i.fired.store(true, Ordering::SeqCst);
                    let current = i.current.lock().unwrap_or_else(|e| e.into_inner());
                    if let Some(c) = current.as_ref() {
                        c.cancel();
                    }
                }
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            });
        });
    if let Err(e) = spawned {
        eprintln!("pelt: warning: Ctrl-C will not stop the run gracefully: {e}");
    }
}
