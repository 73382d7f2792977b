//! HdrHistogram interval logs: the histograms of every second, in the
//! format HdrHistogram's own tools (HistogramLogProcessor,
//! HistogramLogAnalyzer) read. Values are nanoseconds; the max column is
//! in milliseconds.
//!
//! Response time, the headline, is the log's main series: its lines carry
//! no tag, so the tools find it without `-tag`. Service time and send lag
//! follow each second as tagged lines ([`SERVICE_TIME_TAG`],
//! [`SEND_LAG_TAG`]); `HistogramLogProcessor -tag service_time` reads those.

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use pelt_core::Recorder;
use std::io::{self, Write};
use std::time::{Duration, UNIX_EPOCH};

/// The tag of service-time lines (done − first byte written).
pub const SERVICE_TIME_TAG: &str = "service_time";
/// The tag of send-lag lines (first byte written − intended).
pub const SEND_LAG_TAG: &str = "send_lag";

/// Writes each second's histograms, `(unix second, recorder)` in order,
/// one second in memory at a time; the log's start time is the first
/// second.
pub fn write_hdrlog<W: Write>(
    out: &mut W,
    seconds: impl IntoIterator<Item = (u64, Recorder)>,
) -> io::Result<()> {
    let mut seconds = seconds.into_iter().peekable();
    let first = seconds.peek().map_or(0, |s| s.0);
    let start = UNIX_EPOCH + Duration::from_secs(first);
    let mut serializer = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment(
            "pelt histograms, one per second, values in nanoseconds: response time untagged, \
             service_time and send_lag tagged",
        )
        .with_start_time(start)
        .with_base_time(start)
        .with_max_value_divisor(1e6)
        .begin_log_with(out, &mut serializer)?;
    for (unix_second, rec) in seconds {
        let from_start = Duration::from_secs(unix_second.saturating_sub(first));
        for (h, tag) in [
            (&rec.response, None),
            (&rec.service, Tag::new(SERVICE_TIME_TAG)),
            (&rec.send_lag, Tag::new(SEND_LAG_TAG)),
        ] {
            log.write_histogram(h, from_start, Duration::from_secs(1), tag)
                .map_err(|e| io::Error::other(format!("{e:?}")))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    #[test]
    fn response_time_is_the_untagged_series() {
        let mut seconds = Vec::new();
        for s in 0..3u64 {
            let mut rec = Recorder::new();
            rec.response.record(1_000_000 * (s + 1)).unwrap();
            rec.service.record(500_000).unwrap();
            rec.send_lag.record(10_000).unwrap();
            seconds.push((1_700_000_000 + s, rec));
        }
        let mut log = Vec::new();
        write_hdrlog(&mut log, seconds).unwrap();
        let mut lines = Vec::new();
        for entry in IntervalLogIterator::new(&log) {
            if let LogEntry::Interval(h) = entry.unwrap() {
                lines.push((
                    h.start_timestamp().as_secs(),
                    h.tag().map(|t| t.as_str().to_string()),
                    h.max(),
                ));
            }
        }
        let untagged: Vec<_> = lines.iter().filter(|l| l.1.is_none()).collect();
        assert_eq!(untagged.len(), 3);
        // Max in ms: the response times, 1, 2 and 3 ms.
        let maxes: Vec<f64> = untagged.iter().map(|l| l.2).collect();
        assert_eq!(maxes.len(), 3);
        for (got, want) in maxes.iter().zip([1.0, 2.0, 3.0]) {
            assert!((got - want).abs() < 0.01, "{maxes:?}");
        }
        for tag in [SERVICE_TIME_TAG, SEND_LAG_TAG] {
            let tagged: Vec<u64> = lines
                .iter()
                .filter(|l| l.1.as_deref() == Some(tag))
                .map(|l| l.0)
                .collect();
            assert_eq!(tagged, [0, 1, 2], "{tag}");
        }
    }
}
