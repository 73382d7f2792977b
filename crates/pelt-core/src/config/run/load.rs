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
    /// `exp(...)` or `normal(...)` not written as they must be.
    #[error("invalid think time '{0}': write exp(MEAN), like exp(1s), or normal(MEAN, SD), like normal(1s, 200ms)")]
    Shape(String),
}

/// How a think time's pauses are drawn between its bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ThinkShape {
    /// Uniform in `[min, max]` (a fixed pause when they are equal).
    #[default]
    Uniform,
    /// Exponential with this mean (Locust's and k6's users model
    /// arrivals so), at most 10 means (`EXP_CAP`): a pause stays bounded.
    Exponential {
        /// The mean pause, in nanoseconds.
        mean_ns: u64,
    },
    /// Normal with this mean and standard deviation, kept within
    /// 4 deviations (`NORMAL_CAP`) and never below zero.
    Normal {
        /// The mean pause, in nanoseconds.
        mean_ns: u64,
        /// The standard deviation, in nanoseconds.
        sd_ns: u64,
    },
}

impl ThinkShape {
    fn is_uniform(&self) -> bool {
        *self == ThinkShape::Uniform
    }
}

/// An exponential think time's longest pause, in means (a pause that
/// long comes once in e^10, about 22,000 draws).
pub const EXP_CAP: u32 = 10;
/// A normal think time's pauses stay within this many deviations of
/// its mean.
pub const NORMAL_CAP: u32 = 4;

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
    /// How pauses are drawn between `min` and `max` (uniform, absent in
    /// configurations from before the other shapes).
    #[serde(default, skip_serializing_if = "ThinkShape::is_uniform")]
    pub shape: ThinkShape,
}

impl ThinkTime {
    /// Parses `500ms` (fixed), `0..2s` (uniform between the two),
    /// `exp(1s)` (exponential with that mean) or `normal(1s, 200ms)`
    /// (normal with that mean and deviation).
    pub fn parse(text: &str) -> Result<ThinkTime, ThinkTimeError> {
        let t = text.trim();
        if let Some(args) = t.strip_prefix("exp(").and_then(|r| r.strip_suffix(')')) {
            return Self::exponential(parse_duration(args.trim())?);
        }
        if let Some(args) = t.strip_prefix("normal(").and_then(|r| r.strip_suffix(')')) {
            let (mean, sd) = args
                .split_once(',')
                .ok_or_else(|| ThinkTimeError::Shape(text.escape_debug().to_string()))?;
            return Ok(Self::normal(
                parse_duration(mean.trim())?,
                parse_duration(sd.trim())?,
            ));
        }
        if t.contains('(') {
            return Err(ThinkTimeError::Shape(text.escape_debug().to_string()));
        }
        let (lo, hi) = text.split_once("..").unwrap_or((text, text));
        let t = ThinkTime {
            min: parse_duration(lo)?,
            max: parse_duration(hi)?,
            shape: ThinkShape::Uniform,
        };
        if t.max < t.min {
            return Err(ThinkTimeError::Reversed(text.escape_debug().to_string()));
        }
        Ok(t)
    }

    fn exponential(mean: Duration) -> Result<ThinkTime, ThinkTimeError> {
        Ok(ThinkTime {
            min: Duration::ZERO,
            max: mean * EXP_CAP,
            shape: ThinkShape::Exponential {
                mean_ns: mean.as_nanos() as u64,
            },
        })
    }

    fn normal(mean: Duration, sd: Duration) -> ThinkTime {
        ThinkTime {
            min: mean.saturating_sub(sd * NORMAL_CAP),
            max: mean + sd * NORMAL_CAP,
            shape: ThinkShape::Normal {
                mean_ns: mean.as_nanos() as u64,
                sd_ns: sd.as_nanos() as u64,
            },
        }
    }

    /// The pause before request `seq` of connection `conn`: reproducible,
    /// different per connection and request, within `[min, max]`.
    pub fn pause(&self, conn: u64, seq: u64) -> Duration {
        let span = self.max.saturating_sub(self.min).as_nanos() as u64;
        if span == 0 {
            return self.min;
        }
        let r = splitmix64(conn.wrapping_mul(0x9E37_79B9) ^ splitmix64(seq));
        let ns = match self.shape {
            ThinkShape::Uniform => return self.min + Duration::from_nanos(r % (span + 1)),
            // Inverse transform: -mean · ln(u), u uniform in (0, 1].
            ThinkShape::Exponential { mean_ns } => -(mean_ns as f64) * unit(r).ln(),
            // Box-Muller from two uniforms.
            ThinkShape::Normal { mean_ns, sd_ns } => {
                let z = (-2.0 * unit(r).ln()).sqrt()
                    * (std::f64::consts::TAU * unit(splitmix64(r))).cos();
                mean_ns as f64 + sd_ns as f64 * z
            }
        };
        let (lo, hi) = (self.min.as_nanos() as f64, self.max.as_nanos() as f64);
        Duration::from_nanos(ns.clamp(lo, hi) as u64)
    }

    /// The think time in the words it was given: `exp(1s)`,
    /// `normal(1s, 200ms)`, `500ms` or `0-200ms`.
    pub fn describe(&self) -> String {
        use crate::duration::Human;
        let d = |ns: u64| Human(Duration::from_nanos(ns)).to_string();
        match self.shape {
            ThinkShape::Exponential { mean_ns } => format!("exp({})", d(mean_ns)),
            ThinkShape::Normal { mean_ns, sd_ns } => {
                format!("normal({}, {})", d(mean_ns), d(sd_ns))
            }
            ThinkShape::Uniform if self.min == self.max => Human(self.min).to_string(),
            ThinkShape::Uniform if self.min.is_zero() => format!("0-{}", Human(self.max)),
            ThinkShape::Uniform => format!("{}-{}", Human(self.min), Human(self.max)),
        }
    }
}

/// A uniform number in (0, 1] from 53 random bits (never 0: its
/// logarithm is taken).
fn unit(r: u64) -> f64 {
    ((r >> 11) + 1) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_and_normal_think_times_have_their_mean_within_bounds() {
        let mean_of = |t: &ThinkTime| {
            let n = 20_000u64;
            let sum: f64 = (0..n).map(|seq| t.pause(5, seq).as_secs_f64()).sum();
            sum / n as f64
        };
        let exp = ThinkTime::parse("exp(100ms)").unwrap();
        assert_eq!(exp.max, Duration::from_secs(1));
        // The mean of 20,000 exponential draws is within 3 % of 100 ms
        // far beyond 6 standard errors (0.7 % each); the draws are
        // seeded, so this is the same every run.
        assert!((mean_of(&exp) - 0.1).abs() < 0.003, "{}", mean_of(&exp));
        let normal = ThinkTime::parse("normal(1s, 100ms)").unwrap();
        assert!(
            (mean_of(&normal) - 1.0).abs() < 0.01,
            "{}",
            mean_of(&normal)
        );
        for seq in 0..1000 {
            let p = normal.pause(1, seq);
            assert!(p >= Duration::from_millis(600) && p <= Duration::from_millis(1400));
        }
        assert_eq!(exp.describe(), "exp(100ms)");
        assert!(ThinkTime::parse("exp(1s").is_err());
        assert!(ThinkTime::parse("normal(1s)").is_err());
        assert!(ThinkTime::parse("gamma(1s)").is_err());
    }

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
