//! Connections split by handshake kind, each with its count and time:
//! TLS over TCP (full, resumed) and HTTP/3 with `--0rtt` (full, 0-RTT
//! accepted, 0-RTT rejected). Every view (text, JSON, markdown, HTML)
//! reads them here, from the summary's `total.handshakes`, and words
//! them the same way.

use crate::units::thousands;
use pelt_core::handshake::Handshake;
use pelt_core::{human_ns, RunSummary};

/// The figures' name, as every view shows it.
pub(crate) const TITLE: &str = "handshakes by kind";

/// What each kind's time measures.
pub(crate) const NOTE: &str = "full and resumed: until the handshake ended (over TCP the TLS \
     handshake alone, after the connect); resumed: a session an earlier connection got, \
     no certificate; 0-RTT accepted: until requests could go, with the handshake; \
     rejected: until the handshake ended, its requests then sent again on a new connection";

/// Where [`NOTE`] turns to 0-RTT.
const ZERO_RTT_NOTE: &str = "0-RTT accepted:";

/// [`NOTE`]'s part about the kinds `s` shows ([`line`]): TLS over TCP's,
/// or `--0rtt`'s.
pub(crate) fn note(s: &RunSummary) -> &'static str {
    let at = NOTE.find(ZERO_RTT_NOTE).unwrap_or(0);
    match s.config.http.zero_rtt {
        true => &NOTE[at..],
        false => NOTE[..at].trim_end_matches([' ', ';']),
    }
}

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
            Handshake::Full => "full",
            Handshake::Resumed => "resumed",
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
/// unless it counted them (https over TCP, a `--0rtt` run).
pub(crate) fn of(s: &RunSummary) -> Option<[Kind; 4]> {
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

/// `full 3 (mean ..., p99 ...); resumed 997 (...)` for TLS over TCP;
/// `full 3 (...); 0-RTT accepted 5 (...); 0-RTT rejected 0` for a
/// `--0rtt` run (the kinds the other kind of run cannot have are left
/// out; JSON keeps them all).
pub(crate) fn line(s: &RunSummary) -> Option<String> {
    let kinds = of(s)?;
    let zero_rtt = s.config.http.zero_rtt;
    Some(
        kinds
            .iter()
            .filter(|k| match k.kind {
                Handshake::Full => true,
                Handshake::Resumed => !zero_rtt,
                Handshake::ZeroRttAccepted | Handshake::ZeroRttRejected => zero_rtt,
            })
            .map(|k| format!("{} {}", k.words(), k.figures()))
            .collect::<Vec<_>>()
            .join("; "),
    )
}
