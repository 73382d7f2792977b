//! HdrHistogram interval logs: the response-time histogram of every
//! second, in the format HdrHistogram's own tools (HistogramLogAnalyzer,
//! HistogramLogProcessor) read. Values are nanoseconds; the max column is
//! in milliseconds.

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use std::io::{self, Write};
use std::time::{Duration, UNIX_EPOCH};

/// Writes one histogram per second, `(unix second, histogram)` in order;
/// the log's start time is the first second.
pub fn write_hdrlog<W: Write>(out: &mut W, seconds: &[(u64, Histogram<u64>)]) -> io::Result<()> {
    let first = seconds.first().map_or(0, |s| s.0);
    let start = UNIX_EPOCH + Duration::from_secs(first);
    let mut serializer = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment("pelt response-time histograms, one per second, values in nanoseconds")
        .with_start_time(start)
        .with_base_time(start)
        .with_max_value_divisor(1e6)
        .begin_log_with(out, &mut serializer)?;
    let tag = Tag::new("response_time");
    for (unix_second, h) in seconds {
        let from_start = Duration::from_secs(unix_second - first);
        log.write_histogram(h, from_start, Duration::from_secs(1), tag)
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
    }
    Ok(())
}
