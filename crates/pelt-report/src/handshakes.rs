//! `--0rtt` runs: HTTP/3 connections split by handshake kind (1-RTT, 0-RTT
//! accepted, 0-RTT rejected), each with its count and time. Every view
//! (text, JSON, markdown, HTML) reads them here, from the summary's
//! `total.handshakes`, and words them the same way.

use crate::units::thousands;
use pelt_core::handshake::Handshake;
use pelt_core::{human_ns, RunSummary};

/// The figures' name, as every view shows it.
pub(crate) const TITLE: &str = "connect by handshake (--0rtt)";

/// What each kind's time measures.
pub(crate) const NOTE: &str = "0-RTT accepted: until requests could go, with the handshake; \
     rejected: until the handshake ended, its requests then sent again on a new connection";

/// One kind of handshake in a run.
pub(crate) struct Kind {
    /// Which one.
    pub kind: Handshake,
    /// How many connections were set up this way.
    pub count: u64,
    /// Their mean time, nanoseconds (0 without any).
    pub mean_ns: f64,
    /// Their 99th percentile time, nanoseconds.
    pub p99_ns: u64,
}

impl Kind {
    /// The kind as people read it.
    pub fn words(&self) -> &'static str {
        match self.kind {
            Handshake::OneRtt => "1-RTT",
            Handshake::ZeroRttAccepted => "0-RTT accepted",
            Handshake::ZeroRttRejected => "0-RTT rejected",
        }
    }

    /// `3 (mean 1.2ms, p99 1.5ms)`, or `0`.
    pub fn figures(&self) -> String {
        match self.count {
            0 => "0".to_string(),
            n => format!(
                "{} (mean {}, p99 {})",
                thousands(n),
                human_ns(self.mean_ns as u64),
                human_ns(self.p99_ns)
            ),
        }
    }
}

/// The run's handshakes by kind, in [`Handshake::ALL`]'s order; `None`
/// unless it counted them (a `--0rtt` run).
pub(crate) fn of(s: &RunSummary) -> Option<[Kind; 3]> {
    let h = s.total.handshakes.as_deref()?;
    Some(Handshake::ALL.map(|kind| {
        let times = h.of(kind);
        Kind {
            kind,
            count: times.len(),
            mean_ns: if times.is_empty() { 0.0 } else { times.mean() },
            p99_ns: pelt_core::rank::percentile(times, 99.0),
        }
    }))
}

/// `1-RTT 3 (mean ..., p99 ...); 0-RTT accepted 5 (...); 0-RTT rejected 0`.
pub(crate) fn line(s: &RunSummary) -> Option<String> {
    let kinds = of(s)?;
    Some(
        kinds
            .iter()
            .map(|k| format!("{} {}", k.words(), k.figures()))
            .collect::<Vec<_>>()
            .join("; "),
    )
}
