//! CSV: the per-second timeline, one row per second, for spreadsheets and
//! plotting scripts.

use pelt_core::RunSummary;
use std::fmt::Write;

/// Column names, in order.
/// `from_s` and `to_s` are the part of the wall-clock second inside the
/// run (the first and last are partial; never negative), `rate` the
/// requests per second over that part (empty when it is under 0.1 s);
/// `events` and `stalls` (runs that met a streamed response, else empty)
/// the stream events that arrived in the second and, of them, those that
/// came after a gap over `--stall-gap`; `tokens` (`--llm` runs, else
/// empty) the output tokens of the streams that ended complete in it.
pub const COLUMNS: &str =
    "unix_second,from_s,to_s,requests,rate,successes,failed,bytes_in,p50_s,p90_s,p99_s,max_s,offered,active_connections,events,stalls,tokens";

/// The timeline of `s` as CSV with a header line.
pub fn csv(s: &RunSummary) -> String {
    let mut out = String::with_capacity(64 * (s.timeline.len() + 1));
    out.push_str(COLUMNS);
    out.push('\n');
    let llm = s.config.http.streamed.llm.is_some();
    for r in &s.timeline {
        let (from, to) = s.row_span(r);
        let _ = writeln!(
            out,
            "{},{:.3},{:.3},{},{},{},{},{},{:.9},{:.9},{:.9},{:.9},{},{},{},{},{}",
            r.unix_second,
            from,
            to,
            r.requests,
            s.row_rate(r).map_or(String::new(), |v| format!("{v:.1}")),
            r.successes,
            r.failed,
            r.bytes_in,
            r.p50_ns as f64 / 1e9,
            r.p90_ns as f64 / 1e9,
            r.p99_ns as f64 / 1e9,
            r.max_ns as f64 / 1e9,
            r.offered.map_or(String::new(), |n| format!("{n:.3}")),
            r.active_connections
                .map_or(String::new(), |n| n.to_string()),
            r.events.map_or(String::new(), |n| n.to_string()),
            r.stalls.map_or(String::new(), |n| n.to_string()),
            r.tokens
                .filter(|_| llm)
                .map_or(String::new(), |n| n.to_string()),
        );
    }
    out
}

/// ab's `-e` file: for each whole percentile 0..=100, the headline latency
/// ([`pelt_core::Headline`]: response time with `--rate`, service time in
/// a closed loop) in milliseconds, under ab's own header. Only the header
/// when nothing was timed.
pub fn percentiles(s: &RunSummary) -> String {
    let h = s.headline().of(&s.total);
    let mut out = String::from("Percentage served,Time in ms\n");
    if h.is_empty() {
        return out;
    }
    for p in 0..=100u32 {
        let ns = if p == 0 {
            h.min()
        } else {
            pelt_core::rank::percentile(h, f64::from(p))
        };
        let _ = writeln!(out, "{p},{:.3}", ns as f64 / 1e6);
    }
    out
}
