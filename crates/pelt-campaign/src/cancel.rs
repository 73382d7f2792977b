//! Stopping a campaign from outside: a token the caller keeps and any
//! thread may fire (a signal handler, a terminal dashboard's `q`, a
//! service's shutdown), instead of process-wide signal state.

use pelt_core::StopCause;
use pelt_engine::Canceller;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Stops the run in progress and every later one. Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct Cancel {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    stopped: AtomicBool,
    cause: Mutex<Option<StopCause>>,
    /// The run a stop stops now.
    current: Mutex<Option<Canceller>>,
}

impl Cancel {
    /// A token nobody has fired.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Stops the current run (which ends as any run does: its report and
    /// results file finished) and every later one, naming why.
    pub fn stop(&self, cause: StopCause) {
        let mut slot = self.inner.cause.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert(cause.clone());
        drop(slot);
        self.fire(|c| c.stop(cause));
    }

    /// Stops as [`Cancel::stop`] does, without a cause (a person asked).
    pub fn cancel(&self) {
        self.fire(|c| c.cancel());
    }

    fn fire(&self, stop: impl FnOnce(&Canceller)) {
        self.inner.stopped.store(true, Ordering::SeqCst);
        if let Some(c) = &*self.inner.current.lock().unwrap_or_else(|e| e.into_inner()) {
            stop(c);
        }
    }

    /// Whether it was fired.
    pub fn is_stopped(&self) -> bool {
        self.inner.stopped.load(Ordering::SeqCst)
    }

    /// Why, if a cause was given.
    pub fn cause(&self) -> Option<StopCause> {
        self.inner
            .cause
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Makes a stop stop this run (replacing any earlier run's); stops it
    /// at once if the token was fired already.
    pub fn watch(&self, canceller: Canceller) {
        // Published under the lock `fire` takes: either `fire` sees this
        // canceller or this sees `stopped`, so a stop is never lost.
        let mut current = self.inner.current.lock().unwrap_or_else(|e| e.into_inner());
        *current = Some(canceller.clone());
        drop(current);
        if self.is_stopped() {
            match self.cause() {
                Some(cause) => canceller.stop(cause),
                None => canceller.cancel(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{execute, Keep, Unobserved};
    use pelt_core::{Load, RunConfig, Stop, Target, Url};
    use std::time::{Duration, Instant};

    fn long_run() -> (pelt_target::ServerHandle, RunConfig) {
        let server = crate::loopback_server();
        let url = Url::parse(&format!("http://{}/", server.local_addr())).unwrap();
        let stop = Stop {
            requests: None,
            duration: Some(Duration::from_secs(60)),
        };
        let mut config = RunConfig::new(vec![Target::get(url)], Load::closed(2), stop);
        config.threads = 1;
        (server, config)
    }

    #[test]
    fn a_token_fired_before_the_run_stops_it_at_once_with_its_cause() {
        let (_server, config) = long_run();
        let cancel = Cancel::new();
        let cause = StopCause::Signal {
            signal: "SIGTERM".into(),
        };
        cancel.stop(cause.clone());
        let started = Instant::now();
        let s = execute(config, Keep::default(), &cancel, &mut Unobserved).unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
        assert!(s.interrupted);
        assert_eq!(s.stopped_by, Some(cause));
        assert!(cancel.is_stopped());
    }

    #[test]
    fn a_token_fired_from_another_thread_stops_the_run_in_progress() {
        let (_server, config) = long_run();
        let cancel = Cancel::new();
        let firing = cancel.clone();
        // Fired once the run has measured a second (the observer sees
        // it): a stop during the run, not before it.
        struct FireAfterFirst(Option<Cancel>);
        impl crate::RunObserver for FireAfterFirst {
            fn interval(&mut self, _: Duration, _: &pelt_engine::Snapshot) {
                if let Some(c) = self.0.take() {
                    c.cancel();
                }
            }
        }
        let s = execute(
            config,
            Keep::default(),
            &cancel,
            &mut FireAfterFirst(Some(firing)),
        )
        .unwrap();
        assert!(s.interrupted);
        assert_eq!(s.stopped_by, None);
        assert!(s.total.requests > 0);
        assert!(s.duration < Duration::from_secs(30), "{:?}", s.duration);
    }
}
