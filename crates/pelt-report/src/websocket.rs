//! WebSocket runs (`ws://`, `wss://`; issue 40): the upgrades (count and
//! time) and how connections closed, by close code. Every view (text,
//! JSON, markdown, HTML) reads them here, from the summary's `total.ws`,
//! and words them the same way. Messages themselves are the run's
//! requests: sent, failed and offered are the one rule's
//! (`pelt_core::failure`), their unit `messages/s`.

use crate::units::thousands;
use pelt_core::ws::Close;
use pelt_core::{human_ns, RunSummary};

/// The figures' name, as every view shows it.
pub(crate) const TITLE: &str = "WebSocket";

/// What the close codes say.
pub(crate) const NOTE: &str = "closes by code: the server's close frame, pelt's own when it \
     failed the connection (1002 protocol, 1007 invalid data, 1009 too big), 1006 when a \
     connection ended with no close frame (dropped, or no answer to pelt's close)";

/// A run's WebSocket figures.
pub(crate) struct Ws {
    /// Upgrades made (outside warm-up).
    pub upgrades: u64,
    /// Their times, nanoseconds: mean, p50, p99, max.
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    /// Closes by code, in report order, zeros left out.
    pub closes: Vec<(Close, u64)>,
}

impl Ws {
    /// `1000 ×3, 1006 ×1`, or `none`.
    pub fn closes_words(&self) -> String {
        match self.closes.is_empty() {
            true => "none".to_string(),
            false => self
                .closes
                .iter()
                .map(|(c, n)| format!("{} ×{}", c.name(), thousands(*n)))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// `4 upgrades (mean 1.2ms, p50 1.1ms, p99 2.0ms, max 2.1ms); closes 1000 ×4`.
    pub fn line(&self) -> String {
        let upgrades = match self.upgrades {
            0 => "0 upgrades".to_string(),
            n => format!(
                "{} upgrade{} (mean {}, p50 {}, p99 {}, max {})",
                thousands(n),
                if n == 1 { "" } else { "s" },
                human_ns(self.mean_ns as u64),
                human_ns(self.p50_ns),
                human_ns(self.p99_ns),
                human_ns(self.max_ns),
            ),
        };
        format!("{upgrades}; closes {}", self.closes_words())
    }
}

/// The run's WebSocket figures; `None` unless it is a WebSocket run.
pub(crate) fn of(s: &RunSummary) -> Option<Ws> {
    if !s.config.is_ws() {
        return None;
    }
    let default = pelt_core::ws::WsStats::default();
    let w = s.total.ws.as_deref().unwrap_or(&default);
    let h = &w.upgrades;
    Some(Ws {
        upgrades: h.len(),
        mean_ns: if h.is_empty() { 0.0 } else { h.mean() },
        p50_ns: pelt_core::rank::percentile(h, 50.0),
        p99_ns: pelt_core::rank::percentile(h, 99.0),
        max_ns: h.max(),
        closes: w.closes().collect(),
    })
}
