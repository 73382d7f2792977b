//! Human durations: `250ms`, `10s`, `1.5m`, `2h`, `1m30s`, `500us`.
//!
//! One parser for every flag and query parameter so that `-d 10s`,
//! `--timeout 2s` and `pelt serve`'s `?delay=5ms` accept exactly the same
//! spellings and fail with the same helpful message.

use std::fmt;
use std::time::Duration;

/// Why a duration did not parse. The message says what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration '{input}': {reason}; use a number with a unit, like 500ms, 10s, 1.5m or 1m30s")]
pub struct DurationError {
    /// The text as given, escaped to stay on one line.
    pub input: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// Parses a duration made of one or more `<number><unit>` parts.
///
/// Units: `ns`, `us` (or `µs`), `ms`, `s`, `m`, `h`, and siege's `S`, `M`,
/// `H` (seconds, minutes, hours), with their spelled-out forms (`500msec`,
/// `2secs`, `2seconds`, `1min`, `1hour`, ...); a space may stand between a
/// number and its unit (`50 ms`, as people write in an `--assert`). A bare `0` is allowed;
/// any other bare number is rejected, because `-d 10` could mean seconds or
/// milliseconds and guessing wrong silently ruins a benchmark.
pub fn parse_duration(input: &str) -> Result<Duration, DurationError> {
    let err = |reason| DurationError {
        input: input.escape_debug().to_string(),
        reason,
    };
    let s = input.trim();
    if s.is_empty() {
        return Err(err("it is empty"));
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        rest = rest.trim_start();
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(err("expected a number"));
        }
        let value: f64 = rest[..num_len]
            .parse()
            .map_err(|_| err("the number is malformed"))?;
        rest = rest[num_len..].trim_start();
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.' || c.is_whitespace())
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" | "nsec" | "nsecs" | "nanosecond" | "nanoseconds" => 1e-9,
            "us" | "µs" | "usec" | "usecs" | "microsecond" | "microseconds" => 1e-6,
            "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => 1e-3,
            "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
            "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
            // siege's spelling (-t 10S, 1M, 1H): unambiguous, since no
            // unit of pelt's is upper case.
            "S" => 1.0,
            "M" => 60.0,
            "H" => 3600.0,
            "" => return Err(err("a unit is missing")),
            _ => return Err(err("the unit is not one of ns, us, ms, s, m, h")),
        };
        rest = &rest[unit_len..];
        total += value * scale;
    }
    if !total.is_finite() || total > 1e9 {
        return Err(err("it is too large"));
    }
    Ok(Duration::from_secs_f64(total))
}

/// A `Display` wrapper that prints a duration the way people read latencies:
/// three significant digits and the largest unit that keeps the number >= 1.
#[derive(Debug, Clone, Copy)]
pub struct Human(pub Duration);

impl fmt::Display for Human {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0.as_nanos() as f64;
        let (v, unit) = if ns < 1e3 {
            (ns, "ns")
        } else if ns < 1e6 {
            (ns / 1e3, "µs")
        } else if ns < 1e9 {
            (ns / 1e6, "ms")
        } else if ns < 60e9 {
            (ns / 1e9, "s")
        } else {
            let secs = self.0.as_secs();
            return f.pad(&format!("{}m{:02}s", secs / 60, secs % 60));
        };
        let text = if v >= 100.0 {
            format!("{v:.0}{unit}")
        } else if v >= 10.0 {
            format!("{v:.1}{unit}")
        } else {
            format!("{v:.2}{unit}")
        };
        f.pad(&text)
    }
}

/// Formats nanoseconds with [`Human`].
pub fn human_ns(ns: u64) -> Human {
    Human(Duration::from_nanos(ns))
}

/// Durations as seconds (floats) in serialised form.
pub mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    /// Writes a duration as seconds.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    /// Reads seconds into a duration; refuses negative or unrepresentable values.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }
}

/// Optional durations as seconds (floats) in serialised form.
pub mod opt_secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    /// Writes an optional duration as seconds, or nothing.
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }
    /// Reads optional seconds into a duration.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<f64>::deserialize(d)?
            .map(|v| Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_compounds() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1.5m").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500us").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        // siege's spelling.
        assert_eq!(parse_duration("10S").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("1M").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("1H").unwrap(), Duration::from_secs(3600));
    }

    #[test]
    fn spelled_out_units_and_a_space_before_the_unit() {
        // Issue 22 §8: what people type, from other tools and from prose.
        assert_eq!(parse_duration("2secs").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("2seconds").unwrap(), Duration::from_secs(2));
        assert_eq!(
            parse_duration("500msec").unwrap(),
            Duration::from_millis(500)
        );
        assert_eq!(parse_duration("50 ms").unwrap(), Duration::from_millis(50));
        assert_eq!(
            parse_duration("1 min 30 s").unwrap(),
            Duration::from_secs(90)
        );
        assert_eq!(parse_duration("1hour").unwrap(), Duration::from_secs(3600));
        assert_eq!(
            parse_duration("250usec").unwrap(),
            Duration::from_micros(250)
        );
        // Still no bare numbers, even with a space.
        assert!(parse_duration("5 0").is_err());
    }

    #[test]
    fn rejects_ambiguous_and_malformed() {
        for bad in ["", "10", "s", "10x", "1..2s", "-1s", "ms10", "10MS", "1Ms"] {
            let e = parse_duration(bad).unwrap_err();
            assert!(e.to_string().contains("like 500ms"), "{bad}: {e}");
        }
    }

    #[test]
    fn human_formatting_keeps_three_digits() {
        assert_eq!(human_ns(1_234).to_string(), "1.23µs");
        assert_eq!(human_ns(12_345_678).to_string(), "12.3ms");
        assert_eq!(human_ns(940_000_000).to_string(), "940ms");
        assert_eq!(human_ns(1_500_000_000).to_string(), "1.50s");
        assert_eq!(human_ns(90_000_000_000).to_string(), "1m30s");
    }
}
