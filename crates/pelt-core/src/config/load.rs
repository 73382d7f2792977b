//! How much load, and for how long: the load model (closed loop or
//! rate), the stop condition, and a closed loop's think time.

use super::pick::splitmix64;
use crate::duration::{opt_secs, parse_duration, secs, DurationError};
use crate::schedule::Schedule;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Default connections for closed-loop runs (wrk's default).
pub const DEFAULT_CLOSED_CONNECTIONS: u32 = 10;
/// Default connection pool for rate runs: enough for 1,000 req/s at 100 ms
/// per request. When every connection is busy, requests wait in the client
/// with their clock running, and the report says so.
pub const DEFAULT_RATE_CONNECTIONS: u32 = 100;
/// Highest accepted `--rate`: beyond any one machine, and keeps schedule
/// arithmetic (f64 nanoseconds) exact.
pub const MAX_RATE: f64 = 10_000_000.0;
/// Lowest accepted `--rate` and `--connect-rate`: one every 1,000 s.
/// Below it a "rate" is a zero in disguise (`--rate 1e-300 -n 2` waited
/// 10^300 s for its second request).
pub const MIN_RATE: f64 = 0.001;
/// Most connections a run may use (fixed `-c`, a `--rate` pool, or the
/// peak of a `-c` schedule): beyond what one machine's ports allow, and
/// each connection's state is allocated up front.
pub const MAX_CONNECTIONS: u32 = 100_000;
/// Most requests in flight at once with HTTP/2 (`-c` × `--streams`): each
/// stream's state is allocated up front, like a connection's.
pub const MAX_SENDERS: u64 = 1_000_000;
/// Most connections a `-c` schedule may reach.
pub const MAX_SCHEDULED_CONNECTIONS: f64 = MAX_CONNECTIONS as f64;
/// Default run length when neither a count nor a duration is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// How load is generated.
///
/// A `schedule` makes the level change over time (`--rate 100..2000/30s`,
/// `-c 10s:1,10s:10`); files written before schedules existed have none
/// and read as a constant level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum Load {
    /// `connections` each send the next request as soon as the last one
    /// ends (ab, wrk, siege). Cannot see queueing: a slow server just slows
    /// the senders down. With a `schedule` (of connection counts),
    /// connection `k` (0-based) works only while the level is above `k`,
    /// and `connections` is the schedule's peak.
    Closed {
        /// Connections working at once (a schedule's peak, with one).
        connections: u32,
        /// Connections over time, if they change.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        schedule: Option<Schedule>,
    },
    /// `rate` requests per second in total, on a schedule that ignores
    /// responses (vegeta, wrk2), sent over at most `connections`. With a
    /// `schedule` (of requests per second), `rate` is its peak.
    Rate {
        /// Requests per second, in total (a schedule's peak, with one).
        rate: f64,
        /// The most connections the requests may use at once.
        connections: u32,
        /// Requests per second over time, if the rate changes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        schedule: Option<Schedule>,
    },
}

impl Load {
    /// A closed loop of a fixed number of connections.
    pub fn closed(connections: u32) -> Load {
        Load::Closed {
            connections,
            schedule: None,
        }
    }

    /// A constant rate over a pool of `connections`.
    pub fn rate_of(rate: f64, connections: u32) -> Load {
        Load::Rate {
            rate,
            connections,
            schedule: None,
        }
    }

    /// Connections to open at most (the peak of a connection schedule).
    pub fn connections(&self) -> u32 {
        match *self {
            Load::Closed { connections, .. } | Load::Rate { connections, .. } => connections,
        }
    }

    /// The offered rate of rate runs: the constant rate, or a schedule's
    /// peak. For comparing with what was sent, see [`Load::offered_count`].
    pub fn rate(&self) -> Option<f64> {
        match *self {
            Load::Rate { rate, .. } => Some(rate),
            Load::Closed { .. } => None,
        }
    }

    /// The schedule of a load that changes over time: requests per second
    /// for rate runs, connections for closed loops.
    pub fn schedule(&self) -> Option<&Schedule> {
        match self {
            Load::Closed { schedule, .. } | Load::Rate { schedule, .. } => schedule.as_ref(),
        }
    }

    /// Rate runs: requests the schedule offers in the first `t` of
    /// measurement.
    pub fn offered_count(&self, t: Duration) -> Option<f64> {
        match self {
            Load::Rate {
                schedule: Some(s), ..
            } => Some(s.count(t.as_secs_f64())),
            Load::Rate { rate, .. } => Some(rate * t.as_secs_f64()),
            Load::Closed { .. } => None,
        }
    }

    /// Rate runs: the mean rate offered over the first `t` of measurement
    /// (the constant rate when there is no schedule).
    pub fn offered_rate(&self, t: Duration) -> Option<f64> {
        match self {
            Load::Rate {
                schedule: Some(s), ..
            } if !t.is_zero() => Some(s.count(t.as_secs_f64()) / t.as_secs_f64()),
            Load::Rate {
                schedule: Some(s), ..
            } => Some(s.level(0.0)),
            Load::Rate { rate, .. } => Some(*rate),
            Load::Closed { .. } => None,
        }
    }
}

/// When the run stops: after `requests` measured requests, after
/// `duration` of measurement, or whichever comes first.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Stop {
    /// Stop after this many measured requests.
    pub requests: Option<u64>,
    /// Stop after this long of measurement.
    #[serde(default, with = "opt_secs")]
    pub duration: Option<Duration>,
}

/// Why a think time (`--delay`) did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThinkTimeError {
    /// One of the two durations is not a duration.
    #[error(transparent)]
    Duration(#[from] DurationError),
    /// `A..B` with `B` shorter than `A` (the text, escaped).
    #[error("invalid think time '{0}': the second value must not be smaller, like 0..2s")]
    Reversed(String),
}

/// A pause between a closed-loop connection's requests (siege's `-d`),
/// uniform in `[min, max]`, excluded from every latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkTime {
    /// The shortest pause.
    #[serde(with = "secs")]
    pub min: Duration,
    /// The longest pause.
    #[serde(with = "secs")]
    pub max: Duration,
}

impl ThinkTime {
    /// Parses `500ms` (fixed) or `0..2s` (uniform between the two).
    pub fn parse(text: &str) -> Result<ThinkTime, ThinkTimeError> {
        let (lo, hi) = text.split_once("..").unwrap_or((text, text));
        let t = ThinkTime {
            min: parse_duration(lo)?,
            max: parse_duration(hi)?,
        };
        if t.max < t.min {
            return Err(ThinkTimeError::Reversed(text.escape_debug().to_string()));
        }
        Ok(t)
    }

    /// The pause before request `seq` of connection `conn`: reproducible,
    /// different per connection and request.
    pub fn pause(&self, conn: u64, seq: u64) -> Duration {
        let span = self.max.saturating_sub(self.min).as_nanos() as u64;
        if span == 0 {
            return self.min;
        }
        let r = splitmix64(conn.wrapping_mul(0x9E37_79B9) ^ splitmix64(seq));
        self.min + Duration::from_nanos(r % (span + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn think_time_parses_and_stays_in_range() {
        let t = ThinkTime::parse("100ms..300ms").unwrap();
        for seq in 0..1000 {
            let p = t.pause(3, seq);
            assert!(p >= Duration::from_millis(100) && p <= Duration::from_millis(300));
        }
        assert_eq!(t.pause(3, 7), t.pause(3, 7));
        assert_ne!(t.pause(3, 7), t.pause(4, 7));
        let fixed = ThinkTime::parse("250ms").unwrap();
        assert_eq!(fixed.pause(1, 2), Duration::from_millis(250));
        assert!(ThinkTime::parse("2s..1s").is_err());
        assert!(ThinkTime::parse("2").is_err());
    }
}
