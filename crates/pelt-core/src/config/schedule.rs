//! Load that changes over time: a piecewise-linear level (requests per
//! second for `--rate`, connections for `-c`) as plain data.
//!
//! One grammar serves both flags:
//!
//! - `R`: a constant level (not a [`Schedule`]; see [`Spec`]);
//! - `A..B/DUR`: a linear ramp from `A` to `B` over `DUR`;
//! - `DUR:V,DUR:V,...`: stages, each holding `V` for `DUR` (steps), or
//!   ramping linearly within the stage when written `DUR:A..B`.
//!
//! Time 0 is the start of measurement. Before it (warm-up) the level is the
//! schedule's first; after its end the level stays at the last one. A run
//! given no `-d` lasts exactly the schedule's length.
//!
//! The level is a pure function of time: nothing a server does changes it.

use crate::duration::secs;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// One piece of a schedule: the level goes linearly from `from` to `to`
/// over `duration` (a step when they are equal).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// How long the segment lasts.
    #[serde(with = "secs")]
    pub duration: Duration,
    /// The level at its start.
    pub from: f64,
    /// The level at its end.
    pub to: f64,
}

impl Segment {
    fn secs(&self) -> f64 {
        self.duration.as_secs_f64()
    }

    /// Slope, level per second.
    fn slope(&self) -> f64 {
        // A zero-length segment (only from a crafted results file: the
        // parser refuses them) has no slope rather than a NaN one.
        if self.duration.is_zero() {
            return 0.0;
        }
        (self.to - self.from) / self.secs()
    }

    /// Level `t` seconds into the segment (`0 <= t <= duration`).
    fn level(&self, t: f64) -> f64 {
        self.from + self.slope() * t
    }

    /// Integral of the level over the segment's first `t` seconds:
    /// `λ0·t + a·t²/2`.
    fn area(&self, t: f64) -> f64 {
        self.from * t + self.slope() * t * t / 2.0
    }
}

/// A level over time, as segments laid end to end. Never empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Schedule {
    /// The pieces, in order; never empty.
    pub segments: Vec<Segment>,
}

/// What `--rate` or `-c` said: one number, or a level that changes.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    /// One number: the same level all run.
    Constant(f64),
    /// A level that changes over time.
    Varying(Schedule),
}

/// Why a schedule did not parse; `piece` is the part at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value '{piece}': {reason}; write a number (1000), a ramp A..B/DURATION (100..2000/30s) or stages DURATION:VALUE,... (30s:100,1m:1000,30s:0; 1m:100..1000 ramps within a stage)")]
pub struct ScheduleError {
    /// The part of the text at fault, escaped to stay on one line.
    pub piece: String,
    /// What is wrong with it.
    pub reason: String,
}

fn err(piece: &str, reason: impl Into<String>) -> ScheduleError {
    ScheduleError {
        piece: piece.escape_debug().to_string(),
        reason: reason.into(),
    }
}

fn number(piece: &str, text: &str) -> Result<f64, ScheduleError> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| err(piece, format!("'{}' is not a number", text.trim())))?;
    if !v.is_finite() || v < 0.0 {
        return Err(err(piece, "values must be zero or more"));
    }
    Ok(v)
}

fn duration(piece: &str, text: &str) -> Result<Duration, ScheduleError> {
    let d = crate::duration::parse_duration(text).map_err(|e| err(piece, e.reason))?;
    if d.is_zero() {
        return Err(err(piece, "the duration must be longer than zero"));
    }
    Ok(d)
}

/// `A..B` or `V`, as `(from, to)`.
fn range(piece: &str, text: &str) -> Result<(f64, f64), ScheduleError> {
    match text.split_once("..") {
        Some((a, b)) => Ok((number(piece, a)?, number(piece, b)?)),
        None => {
            let v = number(piece, text)?;
            Ok((v, v))
        }
    }
}

impl Spec {
    /// Parses `R`, `A..B/DUR` or `DUR:V,DUR:A..B,...`.
    pub fn parse(text: &str) -> Result<Spec, ScheduleError> {
        let text = text.trim();
        if text.contains(':') {
            let mut segments = Vec::new();
            for piece in text.split(',') {
                let (d, v) = piece
                    .split_once(':')
                    .ok_or_else(|| err(piece, "a stage is DURATION:VALUE"))?;
                let (from, to) = range(piece, v)?;
                segments.push(Segment {
                    duration: duration(piece, d)?,
                    from,
                    to,
                });
            }
            return Ok(Spec::Varying(Schedule { segments }));
        }
        if let Some((r, d)) = text.split_once('/') {
            if !r.contains("..") {
                return Err(err(text, "a ramp is FROM..TO/DURATION"));
            }
            let (from, to) = range(text, r)?;
            return Ok(Spec::Varying(Schedule {
                segments: vec![Segment {
                    duration: duration(text, d)?,
                    from,
                    to,
                }],
            }));
        }
        if text.contains("..") {
            return Err(err(text, "a ramp needs a duration after '/'"));
        }
        Ok(Spec::Constant(number(text, text)?))
    }
}

impl Schedule {
    /// A constant level for `duration`.
    pub fn constant(level: f64, duration: Duration) -> Schedule {
        Schedule {
            segments: vec![Segment {
                duration,
                from: level,
                to: level,
            }],
        }
    }

    /// Total length of the segments.
    pub fn length(&self) -> Duration {
        // Saturating: a results file may hold any durations.
        self.segments
            .iter()
            .fold(Duration::ZERO, |a, s| a.saturating_add(s.duration))
    }

    /// The highest level anywhere.
    pub fn peak(&self) -> f64 {
        self.segments
            .iter()
            .map(|s| s.from.max(s.to))
            .fold(0.0, f64::max)
    }

    fn first(&self) -> f64 {
        self.segments.first().map_or(0.0, |s| s.from)
    }

    fn last(&self) -> f64 {
        self.segments.last().map_or(0.0, |s| s.to)
    }

    /// The level `t` seconds into the schedule (first level before 0,
    /// last level after the end).
    pub fn level(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return self.first();
        }
        let mut start = 0.0;
        for s in &self.segments {
            let end = start + s.secs();
            if t < end {
                return s.level(t - start);
            }
            start = end;
        }
        self.last()
    }

    /// Integral of the level from 0 to `t` seconds: for a rate, the
    /// requests offered by then. The last level holds after the end.
    pub fn count(&self, t: f64) -> f64 {
        let mut start = 0.0;
        let mut total = 0.0;
        if t <= 0.0 {
            return 0.0;
        }
        for s in &self.segments {
            let end = start + s.secs();
            if t < end {
                return total + s.area(t - start);
            }
            total += s.area(s.secs());
            start = end;
        }
        total + self.last() * (t - start)
    }

    /// The earliest time at or after `from` (seconds) when the level is
    /// above `k`, or `None` if it never is again. For connections: when
    /// connection `k` (0-based) is next active.
    pub fn next_above(&self, k: f64, from: f64) -> Option<f64> {
        let from = from.max(0.0);
        if self.level(from) > k {
            return Some(from);
        }
        let mut start = 0.0;
        for s in &self.segments {
            let end = start + s.secs();
            if end > from {
                let t0 = from.max(start);
                // A step up at the segment's start, or a rise through k.
                if s.level(t0 - start) > k {
                    return Some(t0);
                }
                if s.to > k {
                    let cross = start + (k - s.from) / s.slope();
                    // Just past the crossing, where the level exceeds k.
                    let t = cross.max(t0) + 1e-6;
                    if t < end {
                        return Some(t);
                    }
                    return Some(end);
                }
            }
            start = end;
        }
        None
    }

    /// The levels of two schedules added (runs merged from several
    /// machines), when their segments line up.
    pub fn add(&self, other: &Schedule) -> Option<Schedule> {
        if self.segments.len() != other.segments.len() {
            return None;
        }
        let segments = self
            .segments
            .iter()
            .zip(&other.segments)
            .map(|(a, b)| {
                (a.duration == b.duration).then_some(Segment {
                    duration: a.duration,
                    from: a.from + b.from,
                    to: a.to + b.to,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Schedule { segments })
    }
}

/// The stages form, which reads back to the same schedule.
impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.segments.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let d = s.duration;
            if d.subsec_nanos() == 0 {
                write!(f, "{}s", d.as_secs())?;
            } else if d.as_nanos() % 1_000_000 == 0 {
                write!(f, "{}ms", d.as_millis())?;
            } else {
                write!(f, "{}ns", d.as_nanos())?;
            }
            if s.from == s.to {
                write!(f, ":{}", s.from)?;
            } else {
                write!(f, ":{}..{}", s.from, s.to)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crafted results file once made `pelt report` panic: the length
    /// overflowed, and a zero-length segment gave a NaN level.
    #[test]
    fn schedules_from_files_never_panic_or_give_nan() {
        let huge = Segment {
            duration: Duration::from_secs(10_000_000_000_000_000_000),
            from: 1.0,
            to: 2.0,
        };
        let s = Schedule {
            segments: vec![huge, huge],
        };
        assert_eq!(s.length(), Duration::MAX);
        let zero = Schedule {
            segments: vec![Segment {
                duration: Duration::ZERO,
                from: 1.0,
                to: 5.0,
            }],
        };
        assert!(!zero.level(0.0).is_nan());
    }

    fn sched(text: &str) -> Schedule {
        match Spec::parse(text).unwrap() {
            Spec::Varying(s) => s,
            Spec::Constant(_) => panic!("constant"),
        }
    }

    #[test]
    fn parses_the_three_forms() {
        assert_eq!(Spec::parse("1000").unwrap(), Spec::Constant(1000.0));
        let r = sched("100..2000/30s");
        assert_eq!(r.segments.len(), 1);
        assert_eq!(r.length(), Duration::from_secs(30));
        assert_eq!(r.peak(), 2000.0);
        let s = sched("30s:100,1m:1000,30s:0");
        assert_eq!(s.length(), Duration::from_secs(120));
        assert_eq!(s.level(10.0), 100.0);
        assert_eq!(s.level(30.0), 1000.0);
        assert_eq!(s.level(95.0), 0.0);
        let k = sched("10s:0..100,10s:100..0");
        assert_eq!(k.level(5.0), 50.0);
        assert_eq!(k.level(15.0), 50.0);
        assert_eq!(k.to_string(), "10s:0..100,10s:100..0");
        assert_eq!(sched(&s.to_string()), s);
        assert_eq!(sched("1500ms:3").to_string(), "1500ms:3");
    }

    #[test]
    fn errors_name_the_piece() {
        for (text, piece) in [
            ("30s:100,1m", "'1m'"),
            ("100..2000", "'100..2000'"),
            ("100/30s", "'100/30s'"),
            ("10s:abc", "'10s:abc'"),
            ("0s:5", "'0s:5'"),
            ("10:5", "'10:5'"),
            ("-5", "'-5'"),
            ("1..2/3", "'1..2/3'"),
        ] {
            let e = Spec::parse(text).unwrap_err().to_string();
            assert!(e.contains(piece), "{text}: {e}");
            assert!(e.contains("30s:100,1m:1000"), "{e}");
        }
    }

    #[test]
    fn counts_are_the_integral() {
        let r = sched("0..100/10s");
        // N(t) = a t²/2 with a = 10/s².
        assert_eq!(r.count(10.0), 500.0);
        assert_eq!(r.count(4.0), 80.0);
        // The last level holds afterwards.
        assert_eq!(r.count(12.0), 700.0);
        let s = sched("2s:100,2s:0,1s:50");
        assert_eq!(s.count(5.0), 250.0);
        assert_eq!(s.count(3.0), 200.0);
        assert_eq!(s.count(0.0), 0.0);
    }

    #[test]
    fn next_above_finds_activation_times() {
        let r = sched("1..11/10s");
        // Level 1 + t: above 0 at once, above 5 just after t = 4.
        assert_eq!(r.next_above(0.0, 0.0), Some(0.0));
        let t = r.next_above(5.0, 0.0).unwrap();
        assert!((4.0..4.001).contains(&t), "{t}");
        assert!(r.level(t) > 5.0);
        // Never above 11; held at 11 afterwards.
        assert_eq!(r.next_above(11.0, 0.0), None);
        assert_eq!(r.next_above(10.0, 20.0), Some(20.0));
        let s = sched("2s:1,2s:5,2s:0");
        assert_eq!(s.next_above(2.0, 0.0), Some(2.0));
        assert_eq!(s.next_above(0.0, 4.5), None);
        assert_eq!(s.next_above(0.0, 3.0), Some(3.0));
    }
}
