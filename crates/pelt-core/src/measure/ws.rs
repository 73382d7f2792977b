//! WebSocket runs (`ws://`, `wss://`; issue 40): the options a run is
//! made with ([`WsOptions`]: subprotocols, message type, the largest
//! message), and what the recorder keeps besides its requests
//! ([`WsStats`]: each connection's upgrade time, and how connections
//! closed, by close code).
//!
//! A WebSocket run's unit is the *message*: each one sent is a request
//! in the recorder (sent, failed, offered, its reply's round trip in
//! the latency histograms), so every view reads them by the one rule.
//! What is WebSocket's own (the upgrade, the close codes) lives here.

pub use crate::config::ws::*;
use crate::histogram::{new_histogram, record_ns};
use hdrhistogram::Histogram;

/// How a WebSocket connection ended, as the close codes of RFC 6455
/// §7.4.1 name it; the codes pelt does not know are counted together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Close {
    /// The codes counted one by one, by number.
    Code(u16),
    /// Any other code the server sent.
    Other,
}

/// The close codes counted apart, in report order: 1000 normal, 1001
/// going away, 1002 protocol error, 1003 unsupported data, 1005 no code
/// in the close frame, 1006 abnormal (no close frame: the connection
/// dropped, or the server never answered pelt's close within
/// `--timeout`), 1007 invalid data, 1008 policy, 1009 too big, 1010
/// extension, 1011 server error.
pub const CLOSE_CODES: [u16; 11] = [
    1000, 1001, 1002, 1003, 1005, 1006, 1007, 1008, 1009, 1010, 1011,
];

/// The code RFC 6455 reserves for a connection that ended with no close
/// frame: no code on the wire, only in reports.
pub const ABNORMAL: u16 = 1006;

impl Close {
    /// The close with code `code`.
    pub fn of(code: u16) -> Close {
        match CLOSE_CODES.contains(&code) {
            true => Close::Code(code),
            false => Close::Other,
        }
    }

    /// Its index in [`WsStats::closes`].
    fn index(self) -> usize {
        match self {
            Close::Code(c) => CLOSE_CODES
                .iter()
                .position(|&k| k == c)
                .unwrap_or(CLOSE_CODES.len()),
            Close::Other => CLOSE_CODES.len(),
        }
    }

    /// The name reports use: the code's number, or `other`.
    pub fn name(self) -> String {
        match self {
            Close::Code(c) => c.to_string(),
            Close::Other => "other".to_string(),
        }
    }

    /// Whether a connection that closed so ended badly (RFC 6455 §7.4.1:
    /// anything but 1000 normal and 1001 going away).
    pub fn is_abnormal(self) -> bool {
        !matches!(self, Close::Code(1000 | 1001))
    }
}

/// A WebSocket run's own figures: upgrade times (one per connection, in
/// nanoseconds: from the upgrade request written to the `101` read) and
/// closes by code. Counts add when merged, like the recorder's.
#[derive(Debug, Clone)]
pub struct WsStats {
    /// The upgrades' times: its length is the upgrades made.
    pub upgrades: Histogram<u64>,
    /// Connections closed, by [`CLOSE_CODES`] (and one more for others).
    pub closes: [u64; CLOSE_CODES.len() + 1],
}

impl Default for WsStats {
    fn default() -> Self {
        WsStats {
            upgrades: new_histogram(),
            closes: [0; CLOSE_CODES.len() + 1],
        }
    }
}

impl WsStats {
    /// Records one upgrade that took `ns`.
    pub fn record_upgrade(&mut self, ns: u64) {
        record_ns(&mut self.upgrades, ns);
    }

    /// Counts a connection closed with `close`.
    pub fn record_close(&mut self, close: Close) {
        self.closes[close.index()] += 1;
    }

    /// Counts `n` connections that closed with `close`.
    pub fn add_closes(&mut self, close: Close, n: u64) {
        self.closes[close.index()] += n;
    }

    /// Connections closed with `close`.
    pub fn closed(&self, close: Close) -> u64 {
        self.closes[close.index()]
    }

    /// Every close counted, as (close, count), in report order, zeros
    /// left out.
    pub fn closes(&self) -> impl Iterator<Item = (Close, u64)> + '_ {
        CLOSE_CODES
            .iter()
            .map(|&c| Close::Code(c))
            .chain([Close::Other])
            .map(|c| (c, self.closed(c)))
            .filter(|&(_, n)| n > 0)
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.upgrades.is_empty() && self.closes.iter().all(|&n| n == 0)
    }

    /// Adds `other`'s into these.
    pub fn merge(&mut self, other: &WsStats) {
        crate::histogram::add(&mut self.upgrades, &other.upgrades);
        for (a, b) in self.closes.iter_mut().zip(&other.closes) {
            *a += b;
        }
    }

    /// Empties them, keeping their memory.
    pub fn reset(&mut self) {
        self.upgrades.reset();
        self.closes = [0; CLOSE_CODES.len() + 1];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closes_are_counted_by_code_and_merging_adds() {
        let mut a = WsStats::default();
        a.record_upgrade(1_000_000);
        a.record_close(Close::of(1000));
        a.record_close(Close::of(4001));
        let mut b = WsStats::default();
        b.record_upgrade(2_000_000);
        b.record_close(Close::of(1000));
        b.record_close(Close::of(ABNORMAL));
        a.merge(&b);
        assert_eq!(a.upgrades.len(), 2);
        let closes: Vec<(String, u64)> = a.closes().map(|(c, n)| (c.name(), n)).collect();
        assert_eq!(
            closes,
            [("1000".into(), 2), ("1006".into(), 1), ("other".into(), 1)]
        );
        assert!(Close::of(1006).is_abnormal() && !Close::of(1001).is_abnormal());
        a.reset();
        assert!(a.is_empty());
    }
}
