//! One second of a run, as every view lists it.

use super::*;

/// One second of the run (intervals are aligned to wall-clock seconds,
/// so the first and last may be partial).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IntervalRow {
    /// Start of the interval, seconds since the Unix epoch.
    pub unix_second: u64,
    /// Seconds from the start of measurement to the interval's start
    /// (negative for the partial first second; reports show
    /// [`IntervalRow::span`] instead).
    pub offset_s: f64,
    /// Requests recorded in the interval.
    pub requests: u64,
    /// Requests without error and with a 2xx or 3xx status.
    pub successes: u64,
    /// Requests that failed: a transport failure or a status outside
    /// 2xx/3xx (`requests - successes`; see [`crate::failure`]).
    #[serde(alias = "errors")]
    pub failed: u64,
    /// Bytes received.
    pub bytes_in: u64,
    /// Bytes sent.
    #[serde(default)]
    pub bytes_out: u64,
    /// Median of the headline latency ([`Headline`]: response time in
    /// rate mode, service time in a closed loop) of the requests completed
    /// in the interval, nanoseconds.
    pub p50_ns: u64,
    /// 90th percentile of the headline latency, nanoseconds.
    pub p90_ns: u64,
    /// 99th percentile of the headline latency, nanoseconds.
    pub p99_ns: u64,
    /// Slowest headline latency, nanoseconds.
    pub max_ns: u64,
    /// Rate runs: requests the schedule offered in the interval (the part
    /// of it inside the measured duration), to set beside `requests`.
    #[serde(default)]
    pub offered: Option<f64>,
    /// Closed loops with a `-c` schedule: connections the schedule had
    /// active at the interval's middle.
    #[serde(default)]
    pub active_connections: Option<u32>,
    /// Runs that met a streamed response: events that arrived in the
    /// interval (see [`crate::stream`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
    /// Of those, events that came after a stall (a gap over
    /// `--stall-gap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls: Option<u64>,
    /// Runs that met a streamed response: output tokens of the streams
    /// that ended complete in the second (the run's `tokens`, by second;
    /// the views show it in `--llm` runs).
    pub tokens: Option<u64>,
}

/// A timeline row covering less of the run than this (the first or last
/// wall-clock second, cut by the run's start or end) gets no rate: a few
/// requests over a few milliseconds would read as a spike or a dip that
/// never happened. Its counts are still reported.
pub const MIN_RATE_SPAN_S: f64 = 0.1;

impl IntervalRow {
    /// The part of this wall-clock second inside the run, in seconds from
    /// the start of measurement, given the run's `elapsed_s`: `[0, 0.47]`
    /// for a first second that began 0.53 s before measurement. Never
    /// negative.
    pub fn span(&self, elapsed_s: f64) -> (f64, f64) {
        let end = elapsed_s.max(0.0);
        (
            self.offset_s.clamp(0.0, end),
            (self.offset_s + 1.0).clamp(0.0, end),
        )
    }

    /// Requests completed per second over the part of the second the run
    /// covered, so partial first and last seconds are not drawn as dips;
    /// `None` when that part is shorter than [`MIN_RATE_SPAN_S`].
    pub fn rate(&self, elapsed_s: f64) -> Option<f64> {
        let (from, to) = self.span(elapsed_s);
        (to - from >= MIN_RATE_SPAN_S).then(|| self.requests as f64 / (to - from))
    }

    /// Summarises one interval's recorder, its latencies of `headline`.
    pub fn from_recorder(
        unix_second: u64,
        offset_s: f64,
        r: &Recorder,
        headline: Headline,
    ) -> IntervalRow {
        let h = headline.of(r);
        IntervalRow {
            unix_second,
            offset_s,
            requests: r.requests,
            successes: r.successes,
            failed: r.failed(),
            bytes_in: r.bytes_in,
            bytes_out: r.bytes_out,
            p50_ns: quantile(h, 0.5),
            p90_ns: quantile(h, 0.9),
            p99_ns: quantile(h, 0.99),
            max_ns: if h.is_empty() { 0 } else { h.max() },
            offered: None,
            active_connections: None,
            events: r.streamed.as_ref().map(|s| s.events),
            stalls: r.streamed.as_ref().map(|s| s.stalls),
            tokens: r.streamed.as_ref().map(|s| s.tokens),
        }
    }
}

fn quantile(h: &Histogram<u64>, q: f64) -> u64 {
    if h.is_empty() {
        0
    } else {
        crate::rank::quantile(h, q)
    }
}
