//! Stopping a run from outside it: the caller (Ctrl-C, a signal, its own
//! stop condition) or the collector (an `--abort-on` rule). Its own
//! module, below both the run and the collector, which each hold one.

use pelt_core::StopCause;
use std::sync::{Arc, OnceLock};
use tokio::sync::watch;

/// Stops a run early (Ctrl-C, a signal, an `--abort-on` rule).
/// Cloneable and usable from any thread.
#[derive(Debug, Clone)]
pub struct Canceller {
    tx: Arc<watch::Sender<bool>>,
    cause: Arc<OnceLock<StopCause>>,
    enough: Arc<std::sync::atomic::AtomicBool>,
}

impl Canceller {
    pub(crate) fn new(
        enough: Arc<std::sync::atomic::AtomicBool>,
    ) -> (Canceller, watch::Receiver<bool>) {
        let (tx, rx) = watch::channel(false);
        let canceller = Canceller {
            tx: Arc::new(tx),
            cause: Arc::new(OnceLock::new()),
            enough,
        };
        (canceller, rx)
    }

    /// Stops sending; requests in flight get a short grace to finish.
    pub fn cancel(&self) {
        self.tx.send_replace(true);
    }

    /// [`Canceller::cancel`], saying why: the run's footer and summary
    /// keep the reason (`stopped_by`) if the run had not ended by then.
    /// The first reason given stands.
    pub fn stop(&self, cause: StopCause) {
        let _ = self.cause.set(cause);
        self.cancel();
    }

    /// Why the run was stopped, if a reason was given.
    pub(crate) fn cause(&self) -> Option<StopCause> {
        self.cause.get().cloned()
    }

    /// Stops sending as [`Canceller::cancel`] does, because the caller's
    /// own stop condition was met (`--until`): the run is complete, its
    /// duration is up to the stop, and it is not marked interrupted.
    pub fn enough(&self) {
        self.enough.store(true, std::sync::atomic::Ordering::SeqCst);
        self.cancel();
    }
}
