//! Handshakes by kind, each with its time: TLS over TCP (`https`, full or
//! resumed from a session ticket or ID) and HTTP/3's with `--0rtt` (full,
//! or resumptions whose 0-RTT data the server accepted or rejected).
//! Kept apart from the [`Recorder`](crate::Recorder)'s other fields
//! (which every run has) because only runs that make such handshakes
//! fill it.

use crate::histogram::{new_histogram, record_ns};
use hdrhistogram::Histogram;

/// How a TLS or QUIC connection was set up. The discriminants index
/// [`Handshakes::times`] (and a results file's list: `Resumed` came
/// last).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handshake {
    /// A full handshake: the server's certificate sent and verified, keys
    /// agreed afresh; requests waited for it (one round trip in TLS 1.3
    /// and QUIC, two in TLS 1.2).
    Full = 0,
    /// A resumption whose 0-RTT data the server took: requests went out
    /// with the first flight.
    ZeroRttAccepted = 1,
    /// A resumption whose 0-RTT data the server refused: the requests
    /// sent as 0-RTT were never seen by the server, and were sent again.
    ZeroRttRejected = 2,
    /// TLS over TCP: a session resumed from a ticket (or TLS 1.2 session
    /// ID) an earlier connection got, without early data: no certificate
    /// sent or verified. The server chooses; a client only offers.
    Resumed = 3,
}

impl Handshake {
    /// Every kind, in the order reports list them.
    pub const ALL: [Handshake; 4] = [
        Handshake::Full,
        Handshake::Resumed,
        Handshake::ZeroRttAccepted,
        Handshake::ZeroRttRejected,
    ];

    /// The name reports use (JSON keys).
    pub fn name(self) -> &'static str {
        match self {
            Handshake::Full => "full",
            Handshake::Resumed => "resumed",
            Handshake::ZeroRttAccepted => "zero_rtt_accepted",
            Handshake::ZeroRttRejected => "zero_rtt_rejected",
        }
    }
}

/// Handshake times by kind, one value per connection (nanoseconds): for
/// a full or resumed handshake, until it completed (over TCP, the TLS
/// handshake alone, after the TCP connect); for an accepted 0-RTT one,
/// until the connection could carry requests (no round trip); for a
/// rejected one, until the handshake completed and the rejection was
/// known. Counts are the histograms' lengths, so merging adds them.
#[derive(Debug, Clone)]
pub struct Handshakes {
    /// By [`Handshake`] kind, indexed by its discriminant.
    pub times: [Histogram<u64>; 4],
}

impl Default for Handshakes {
    fn default() -> Self {
        Handshakes {
            times: [
                new_histogram(),
                new_histogram(),
                new_histogram(),
                new_histogram(),
            ],
        }
    }
}

impl Handshakes {
    /// Records one handshake of `kind` that took `ns`.
    pub fn record(&mut self, kind: Handshake, ns: u64) {
        record_ns(&mut self.times[kind as usize], ns);
    }

    /// The times of handshakes of `kind`.
    pub fn of(&self, kind: Handshake) -> &Histogram<u64> {
        &self.times[kind as usize]
    }

    /// Handshakes of `kind`.
    pub fn count(&self, kind: Handshake) -> u64 {
        self.of(kind).len()
    }

    /// Whether none was recorded.
    pub fn is_empty(&self) -> bool {
        self.times.iter().all(|h| h.is_empty())
    }

    /// Adds `other`'s into these.
    pub fn merge(&mut self, other: &Handshakes) {
        for (a, b) in self.times.iter_mut().zip(&other.times) {
            crate::histogram::add(a, b);
        }
    }

    /// Empties them, keeping their memory.
    pub fn reset(&mut self) {
        for h in &mut self.times {
            h.reset();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_counted_apart_and_merging_adds() {
        let mut a = Handshakes::default();
        a.record(Handshake::Full, 1_000_000);
        a.record(Handshake::Resumed, 300_000);
        a.record(Handshake::ZeroRttAccepted, 50_000);
        let mut b = Handshakes::default();
        b.record(Handshake::ZeroRttAccepted, 60_000);
        b.record(Handshake::ZeroRttRejected, 900_000);
        a.merge(&b);
        let counts: Vec<u64> = Handshake::ALL.iter().map(|&k| a.count(k)).collect();
        assert_eq!(counts, [1, 1, 2, 1]);
        assert!(a.of(Handshake::ZeroRttAccepted).max() < 61_000);
        // The recorder's histograms (a results file's) add to these, up
        // to the longest value pelt keeps.
        let mut r = crate::recorder::new_histogram();
        crate::histogram::record_ns(&mut r, u64::MAX);
        a.times[0].add(&r).expect("handshake histograms grow");
        assert_eq!(a.count(Handshake::Full), 2);
        a.reset();
        assert!(a.is_empty());
    }
}
