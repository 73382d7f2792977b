//! Which latency the percentile rows of a comparison measure.
//!
//! The headline latency is response time: from each request's scheduled
//! send to its response, so time a request waited in the client counts,
//! as it would for a user. For a fast server much of that can be the
//! client's own timer jitter (at 100 req/s a 191 µs p50 was 122 µs of
//! service and 68 µs of send lag), and a change to the server is then
//! diluted by noise the server never saw. Service time (from the actual
//! send) leaves the client's lag out; send lag is the client's health on
//! its own. Each is compared run by run like response time.

use crate::runs;
use hdrhistogram::Histogram;
use pelt_core::RunSummary;
use serde::{Deserialize, Serialize};

/// The latency the p50 .. p99.9 rows compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Latency {
    /// From the scheduled send to the response (the headline).
    #[default]
    ResponseTime,
    /// From the actual send to the response: the server's part.
    ServiceTime,
    /// From the scheduled send to the actual one: the client's part.
    SendLag,
}

impl Latency {
    /// `response_time`, `service_time`, `send_lag`.
    pub fn name(self) -> &'static str {
        match self {
            Latency::ResponseTime => "response_time",
            Latency::ServiceTime => "service_time",
            Latency::SendLag => "send_lag",
        }
    }

    /// One sentence for a report.
    pub fn describe(self) -> &'static str {
        match self {
            Latency::ResponseTime => {
                "Latency: response time, from each request's scheduled send to its response (the client's send lag included)."
            }
            Latency::ServiceTime => {
                "Latency: service time, from each request's actual send to its response (the client's send lag left out)."
            }
            Latency::SendLag => {
                "Latency: send lag, from each request's scheduled send to its actual send (the client's health, not the server's)."
            }
        }
    }

    fn histogram(self, run: &RunSummary) -> &Histogram<u64> {
        match self {
            Latency::ResponseTime => &run.total.response,
            Latency::ServiceTime => &run.total.service,
            Latency::SendLag => &run.total.send_lag,
        }
    }
}

/// [`runs::values`] with the percentile rows read from `latency`'s
/// histogram (NaN when it is empty).
pub fn values(run: &RunSummary, latency: Latency) -> Vec<f64> {
    let mut v = runs::values(run);
    if latency == Latency::ResponseTime {
        return v;
    }
    let h = latency.histogram(run);
    for (i, m) in runs::metrics().iter().enumerate() {
        let p = match m.name.as_str() {
            "p50" => 50.0,
            "p90" => 90.0,
            "p99" => 99.0,
            "p99.9" => 99.9,
            _ => continue,
        };
        v[i] = if h.is_empty() {
            f64::NAN
        } else {
            pelt_core::rank::percentile(h, p) as f64
        };
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde() {
        for l in [
            Latency::ResponseTime,
            Latency::ServiceTime,
            Latency::SendLag,
        ] {
            let json = serde_json::to_value(l).unwrap();
            assert_eq!(json, l.name());
            assert_eq!(serde_json::from_value::<Latency>(json).unwrap(), l);
        }
    }
}
