//! The headline latency, defined once, and a latency histogram's figures.

use super::*;

/// The headline latency, defined once. In rate mode it is response
/// time: from each request's planned start, so time spent waiting for a
/// connection or for the client counts, as it would for a user. A closed
/// loop has no plan to measure from: its "intended" start is when a
/// connection got round to the request, so response time there adds the
/// connect and the client's own turnaround to what the server did, and the
/// headline is service time (from the first byte written). Every view (text,
/// markdown, HTML, CSV, JSON's `headline`, the TUI, `--assert pNN`, a
/// comparison's default `--metric`) reads it from here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Headline {
    /// Done minus the planned start (rate mode).
    ResponseTime,
    /// Done minus the first byte written (a closed loop).
    ServiceTime,
}

impl Headline {
    /// Rate mode's headline, or a closed loop's.
    pub fn for_rate_mode(rate_mode: bool) -> Headline {
        match rate_mode {
            true => Headline::ResponseTime,
            false => Headline::ServiceTime,
        }
    }

    /// The JSON key: `response_time` or `service_time`.
    pub fn key(self) -> &'static str {
        match self {
            Headline::ResponseTime => "response_time",
            Headline::ServiceTime => "service_time",
        }
    }

    /// For people: `response time` or `service time`.
    pub fn name(self) -> &'static str {
        match self {
            Headline::ResponseTime => "response time",
            Headline::ServiceTime => "service time",
        }
    }

    /// This latency's histogram in `r`.
    pub fn of(self, r: &Recorder) -> &Histogram<u64> {
        match self {
            Headline::ResponseTime => &r.response,
            Headline::ServiceTime => &r.service,
        }
    }
}

/// The percentiles every report shows.
pub const PERCENTILES: [f64; 7] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99];

/// A histogram reduced to the numbers reports print (nanoseconds).
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyStats {
    /// Values recorded.
    pub count: u64,
    /// Smallest value.
    pub min: u64,
    /// Mean value.
    pub mean: f64,
    /// Standard deviation.
    pub stdev: f64,
    /// Largest value.
    pub max: u64,
    /// `(percentile, value)` for each percentile asked for: those of
    /// [`PERCENTILES`] from [`LatencyStats::of`].
    pub percentiles: Vec<(f64, u64)>,
}

impl LatencyStats {
    /// The numbers of `h` at [`PERCENTILES`]; all zero for an empty
    /// histogram.
    pub fn of(h: &Histogram<u64>) -> LatencyStats {
        LatencyStats::at_percentiles(h, &PERCENTILES)
    }

    /// The numbers of `h` at `percentiles` (each 0 to 100, like 98.0),
    /// by nearest rank as every report reads them
    /// ([`crate::rank::percentile`]); all zero for an empty histogram.
    pub fn at_percentiles(h: &Histogram<u64>, percentiles: &[f64]) -> LatencyStats {
        if h.is_empty() {
            return LatencyStats {
                count: 0,
                min: 0,
                mean: 0.0,
                stdev: 0.0,
                max: 0,
                percentiles: percentiles.iter().map(|&p| (p, 0)).collect(),
            };
        }
        LatencyStats {
            count: h.len(),
            min: h.min(),
            mean: h.mean(),
            stdev: h.stdev(),
            max: h.max(),
            percentiles: percentiles
                .iter()
                .map(|&p| (p, crate::rank::percentile(h, p)))
                .collect(),
        }
    }

    /// The value at percentile `p`, if it is one these stats hold (one
    /// of [`PERCENTILES`] for [`LatencyStats::of`]); `None` for any other,
    /// which only the histogram can give: `LatencyStats::at_percentiles(h,
    /// &[p])`, or [`crate::rank::percentile`]`(h, p)`.
    pub fn at(&self, p: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|(q, _)| (*q - p).abs() < 1e-9)
            .map(|&(_, v)| v)
    }
}
