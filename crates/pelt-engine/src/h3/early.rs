//! `--0rtt`: a resumed QUIC connection carries requests before its
//! handshake completes, and whether the server took them is known only
//! when it does. [`Early`] is that answer, awaited by the requests that
//! went (or waited) on such a connection.

use super::no_error;
use crate::outcome::Failure;
use pelt_core::ErrorKind;
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// What became of a 0-RTT connection's early data, known when its
/// handshake completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    Accepted,
    /// The server completed the handshake without the early data.
    Rejected,
    /// The connection failed before its handshake completed.
    Failed,
}

/// A 0-RTT connection's [`Fate`], set by [`Early::watch`], and the time
/// its handshake took.
#[derive(Debug, Default)]
pub(crate) struct Early {
    fate: Cell<Option<Fate>>,
    handshake_ns: Cell<u64>,
    known: tokio::sync::Notify,
}

impl Early {
    /// Waits for the handshake's end (bounded by `--connect-timeout`, see
    /// [`Early::watch`]).
    pub(crate) async fn fate(&self) -> Fate {
        loop {
            // Registered before the cell is read: a fate set in between
            // is not missed.
            let known = self.known.notified();
            if let Some(fate) = self.fate.get() {
                return fate;
            }
            known.await;
        }
    }

    /// How long the handshake took, once its fate is known.
    pub(crate) fn handshake_ns(&self) -> u64 {
        self.handshake_ns.get()
    }

    /// Awaits `conn`'s handshake (dialled at `start`, `accepted` being
    /// quinn's answer about its early data) for at most `timeout`, then
    /// sets the fate. A rejected connection lost its HTTP/3 layer with
    /// the early data (h3's own control streams were opened in 0-RTT
    /// too): `on_rejected` takes it out of use, and it is closed.
    pub(crate) async fn watch(
        self: Rc<Self>,
        conn: quinn::Connection,
        accepted: quinn::ZeroRttAccepted,
        timeout: Duration,
        start: Instant,
        on_rejected: impl FnOnce(),
    ) {
        let (accepted, timed_out) = match tokio::time::timeout(timeout, accepted).await {
            Ok(accepted) => (accepted, false),
            Err(_) => {
                conn.close(no_error(), b"no QUIC handshake within the connect timeout");
                (false, true)
            }
        };
        // A rejection ends the handshake with the connection up (or
        // closed by h3, whose control streams it lost).
        let fate = match (accepted, conn.close_reason()) {
            (true, _) => Fate::Accepted,
            (false, None | Some(quinn::ConnectionError::LocallyClosed)) if !timed_out => {
                Fate::Rejected
            }
            (false, _) => Fate::Failed,
        };
        self.handshake_ns.set(start.elapsed().as_nanos() as u64);
        if fate == Fate::Rejected {
            on_rejected();
            conn.close(no_error(), b"0-RTT rejected");
        }
        self.fate.set(Some(fate));
        self.known.notify_waiters();
    }
}

/// `f`, a request's failure on a 0-RTT connection whose handshake never
/// completed, counted as `connect`.
pub(crate) fn early_failed(f: Failure) -> Failure {
    Failure {
        kind: ErrorKind::Connect,
        detail: format!(
            "the resumed (0-RTT) QUIC handshake never completed: {}; \
             does an HTTP/3 server still listen on this UDP port?",
            f.detail
        ),
        ..f
    }
}
