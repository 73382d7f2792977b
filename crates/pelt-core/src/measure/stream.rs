//! Streamed responses measured as streams (issue 38): server-sent events,
//! lines (NDJSON) and transport chunks, and LLM token streams. The options
//! that ask for it ([`StreamOptions`], in `HttpOptions`), what one stream
//! ended with ([`Tally`], filled by the engine as events arrive), and the
//! figures every view reads ([`StreamStats`], held by the recorder in the
//! runs that met a stream, merged by adding).
//!
//! Words, one meaning each:
//! - an *event* is an SSE event, a line, a transport chunk, or (LLM mode)
//!   a chunk whose delta carries text: a *token event*;
//! - *time to first event* (TTFE; TTFT in LLM mode) runs from the
//!   request's start as response time does (its intended start in rate
//!   mode, so coordinated omission is corrected) to the first event's
//!   arrival;
//! - a *gap* is the time between two consecutive events of one stream:
//!   every gap goes into one histogram (vLLM's and guidellm's "ITL"
//!   distribution);
//! - a stream's *mean gap* is `(last − first) / (events − 1)`, one value
//!   per stream (what vLLM and guidellm report per request as "ITL");
//! - a stream's *duration* runs from its first event to its last;
//! - a *stall* is a gap longer than `--stall-gap`;
//! - a *burst* is a stream whose events all came within
//!   [`BURST_SPAN_NS`] after a wait at least [`BURST_RATIO`] times longer:
//!   the sign of something between client and server that buffers.

pub use crate::config::stream::*;
use crate::histogram::{new_histogram, record_ns};
use crate::sample::Nanos;
use hdrhistogram::Histogram;

/// A burst: all of a stream's events within this span...
pub const BURST_SPAN_NS: u64 = 5_000_000;
/// ...after a wait for the first at least this many times the span
/// (and at least [`BURST_WAIT_NS`]).
pub const BURST_RATIO: u64 = 10;
/// The shortest wait before a burst that counts as long.
pub const BURST_WAIT_NS: u64 = 100_000_000;
/// The fewest events that can make a burst (one or two events always
/// "arrive together").
pub const BURST_MIN_EVENTS: u64 = 3;

/// One stream as it arrived: filled by the engine event by event, plain
/// data, recorded when the stream ends ([`StreamStats::record_stream`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// The first event's arrival (run nanoseconds), if any came.
    pub first: Option<Nanos>,
    /// The latest event's arrival.
    pub last: Nanos,
    /// Events received.
    pub events: u64,
    /// Gaps longer than the stall gap.
    pub stalls: u64,
    /// LLM mode: the server's own count of output tokens (`usage`), when
    /// it sent one.
    pub usage_tokens: Option<u64>,
    /// Whether the stream's own end marker came (LLM: `[DONE]`); a stream
    /// without one ends at its transport's end.
    pub ended: bool,
    /// The response's status (a 2xx: only those are streams).
    pub status: u16,
    /// `--hold`: the run's end closed it, still going (a complete
    /// stream, no failure).
    pub held: bool,
    /// Body bytes read so far (what a held stream closed at the run's end
    /// counts as its bytes in).
    pub body_bytes: u64,
}

impl Tally {
    /// Notes an event arriving `at`: returns the gap since the previous
    /// one, if any, and whether it is a stall.
    pub fn event(&mut self, at: Nanos, stall_gap: u64) -> Option<u64> {
        self.events += 1;
        let gap = match self.first {
            None => {
                self.first = Some(at);
                None
            }
            Some(_) => {
                let gap = at.saturating_sub(self.last);
                self.stalls += u64::from(gap > stall_gap);
                Some(gap)
            }
        };
        self.last = self.last.max(at);
        gap
    }

    /// Output tokens: the server's `usage` count when it sent one, else
    /// the token events counted.
    pub fn tokens(&self) -> u64 {
        self.usage_tokens.unwrap_or(self.events)
    }

    /// Output tokens per second, in thousandths (histograms hold
    /// integers): [`Tally::tokens`] over the time from the stream's
    /// `start` (its response time's) to its last event, as guidellm's
    /// `output_tokens_per_second` divides them by the request's latency.
    /// `None` without a token, or with no time between.
    pub fn milli_tokens_per_s(&self, start: Nanos) -> Option<u64> {
        let tokens = self.tokens();
        let span = self.last.saturating_sub(start);
        (tokens > 0 && span > 0 && self.first.is_some())
            .then(|| (tokens as u128 * 1_000 * 1_000_000_000 / span as u128) as u64)
    }

    /// Whether the stream looks buffered on the way: every event within
    /// [`BURST_SPAN_NS`] after a long wait from `start`.
    pub fn is_burst(&self, start: Nanos) -> bool {
        let Some(first) = self.first else {
            return false;
        };
        let span = self.last.saturating_sub(first);
        let wait = first.saturating_sub(start);
        self.events >= BURST_MIN_EVENTS
            && span <= BURST_SPAN_NS
            && wait >= BURST_WAIT_NS
            && wait >= span.saturating_mul(BURST_RATIO)
    }
}

/// The stream figures of a set of requests (a worker's second, the run):
/// histograms in nanoseconds but `events`, which holds counts. Counts add
/// and histograms add, so seconds, workers and shards merge exactly.
#[derive(Debug, Clone)]
pub struct StreamStats {
    /// Time to first event, per stream that had one.
    pub first_event: Histogram<u64>,
    /// Every gap between consecutive events (recorded as they arrive).
    pub gaps: Histogram<u64>,
    /// Each complete stream's mean gap, `(last − first) / (events − 1)`,
    /// for streams of two events or more.
    pub mean_gap: Histogram<u64>,
    /// Each complete stream's duration, first event to last.
    pub duration: Histogram<u64>,
    /// Each complete stream's event count (a count, not nanoseconds).
    pub events_per_stream: Histogram<u64>,
    /// Streams that ended complete.
    pub streams: u64,
    /// Events received (in the second they arrived).
    pub events: u64,
    /// Stalls (in the second the event after the stall arrived).
    pub stalls: u64,
    /// Complete streams whose events arrived in one burst.
    pub bursts: u64,
    /// LLM mode: output tokens of complete streams.
    pub tokens: u64,
    /// LLM mode: of `streams`, those whose count is the server's `usage`
    /// (the others' are the token events counted).
    pub usage_counted: u64,
    /// `--event-time`: each event's latency, its arrival minus the time
    /// the server wrote in it (0 when that time is later: the clocks
    /// disagree).
    pub event_latency: Histogram<u64>,
    /// Each complete stream's output tokens per second, in thousandths
    /// ([`Tally::milli_tokens_per_s`]: a rate, not nanoseconds).
    pub tokens_per_s: Histogram<u64>,
    /// `--event-time`: events whose time could not be read (missing, not
    /// a number, no unit fits).
    pub untimed: u64,
    /// `--hold`: streams still held when the run ended, closed by pelt
    /// (counted in `streams`, no failure).
    pub held: u64,
}

impl Default for StreamStats {
    fn default() -> Self {
        StreamStats {
            first_event: new_histogram(),
            gaps: new_histogram(),
            mean_gap: new_histogram(),
            duration: new_histogram(),
            events_per_stream: new_histogram(),
            streams: 0,
            events: 0,
            stalls: 0,
            bursts: 0,
            tokens: 0,
            usage_counted: 0,
            event_latency: new_histogram(),
            tokens_per_s: new_histogram(),
            untimed: 0,
            held: 0,
        }
    }
}

/// `--event-time`: what an event said of when it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventLatency {
    /// Not asked for.
    NotAsked,
    /// Asked for, but missing or unreadable.
    Unreadable,
    /// The latency: its arrival minus its time, in nanoseconds.
    Of(u64),
}

impl StreamStats {
    /// An event arrived, `gap` after its stream's previous one (none for
    /// a first event), a stall if longer than `stall_gap`.
    pub fn record_event(&mut self, gap: Option<u64>, stall_gap: u64, sent: EventLatency) {
        self.events += 1;
        match sent {
            EventLatency::NotAsked => {}
            EventLatency::Unreadable => self.untimed += 1,
            EventLatency::Of(ns) => record_ns(&mut self.event_latency, ns),
        }
        if let Some(gap) = gap {
            record_ns(&mut self.gaps, gap);
            self.stalls += u64::from(gap > stall_gap);
        }
    }

    /// A stream ended: started (its response time's start) at `start`,
    /// `complete` unless cut short. Its first event counts either way;
    /// its per-stream figures only when complete.
    pub fn record_stream(&mut self, start: Nanos, t: &Tally, complete: bool) {
        let Some(first) = t.first else {
            if complete {
                self.streams += 1;
                record_ns(&mut self.events_per_stream, 0);
            }
            return;
        };
        record_ns(&mut self.first_event, first.saturating_sub(start));
        if !complete {
            return;
        }
        self.streams += 1;
        record_ns(&mut self.events_per_stream, t.events);
        let span = t.last.saturating_sub(first);
        record_ns(&mut self.duration, span);
        if t.events >= 2 {
            record_ns(&mut self.mean_gap, span / (t.events - 1));
        }
        self.bursts += u64::from(t.is_burst(start));
        self.tokens += t.tokens();
        self.usage_counted += u64::from(t.usage_tokens.is_some());
        self.held += u64::from(t.held);
        if let Some(rate) = t.milli_tokens_per_s(start) {
            record_ns(&mut self.tokens_per_s, rate);
        }
    }

    /// The histograms in the order the results file stores them.
    pub fn histograms(&self) -> [&Histogram<u64>; 7] {
        [
            &self.first_event,
            &self.gaps,
            &self.mean_gap,
            &self.duration,
            &self.events_per_stream,
            &self.event_latency,
            &self.tokens_per_s,
        ]
    }

    /// The same, to fill.
    pub fn histograms_mut(&mut self) -> [&mut Histogram<u64>; 7] {
        [
            &mut self.first_event,
            &mut self.gaps,
            &mut self.mean_gap,
            &mut self.duration,
            &mut self.events_per_stream,
            &mut self.event_latency,
            &mut self.tokens_per_s,
        ]
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.events == 0 && self.streams == 0 && self.first_event.is_empty() && self.untimed == 0
    }

    /// Adds `other`'s into these.
    pub fn merge(&mut self, other: &StreamStats) {
        for (a, b) in self.histograms_mut().into_iter().zip(other.histograms()) {
            crate::histogram::add(a, b);
        }
        self.streams += other.streams;
        self.events += other.events;
        self.stalls += other.stalls;
        self.bursts += other.bursts;
        self.tokens += other.tokens;
        self.usage_counted += other.usage_counted;
        self.untimed += other.untimed;
        self.held += other.held;
    }

    /// Empties them, keeping their memory.
    pub fn reset(&mut self) {
        for h in self.histograms_mut() {
            h.reset();
        }
        self.streams = 0;
        self.events = 0;
        self.stalls = 0;
        self.bursts = 0;
        self.tokens = 0;
        self.usage_counted = 0;
        self.untimed = 0;
        self.held = 0;
    }

    /// Whether most complete streams of three events or more came in one
    /// burst: the `buffered_stream` warning.
    pub fn mostly_bursts(&self) -> bool {
        self.bursts > 0 && self.bursts * 2 >= self.burstable()
    }

    /// Complete streams of [`BURST_MIN_EVENTS`] events or more: those
    /// that could have come in one burst.
    pub fn burstable(&self) -> u64 {
        let h = &self.events_per_stream;
        h.len() - h.count_between(0, BURST_MIN_EVENTS - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_tally_measures_gaps_stalls_and_bursts() {
        let mut t = Tally::default();
        assert_eq!(t.event(300 * MS, 1_000 * MS), None);
        assert_eq!(t.event(350 * MS, 1_000 * MS), Some(50 * MS));
        assert_eq!(t.event(1_500 * MS, 1_000 * MS), Some(1_150 * MS));
        assert_eq!((t.events, t.stalls, t.tokens()), (3, 1, 3));
        assert!(!t.is_burst(0));
        let mut s = StreamStats::default();
        s.record_stream(0, &t, true);
        assert_eq!(s.streams, 1);
        assert_eq!(crate::rank::quantile(&s.first_event, 0.5) / MS, 300);
        // (1500 − 300) / 2
        assert_eq!(crate::rank::quantile(&s.mean_gap, 0.5) / MS, 600);
        let mut b = Tally::default();
        for at in [900 * MS, 901 * MS, 902 * MS, 903 * MS] {
            b.event(at, 1_000 * MS);
        }
        assert!(b.is_burst(0));
        assert!(!b.is_burst(899 * MS), "no long wait");
        s.record_stream(0, &b, true);
        assert!(s.mostly_bursts());
        let mut other = StreamStats::default();
        other.record_event(Some(5 * MS), 1_000 * MS, EventLatency::Of(3 * MS));
        other.record_event(None, 1_000 * MS, EventLatency::Unreadable);
        other.record_stream(0, &t, false);
        s.merge(&other);
        assert_eq!((s.streams, s.events, s.bursts), (2, 2, 1));
        assert_eq!((s.event_latency.len(), s.untimed), (1, 1));
        // 3 tokens from 0 to the last at 1.5 s: 2 tokens/s.
        assert_eq!(crate::rank::quantile(&s.tokens_per_s, 0.0), 2_000);
        assert_eq!(s.first_event.len(), 3, "a cut stream's first event counts");
        s.reset();
        assert!(s.is_empty());
    }

    #[test]
    fn the_openai_body_streams_and_asks_for_usage() {
        let body = openai_chat_body("m", &generated_prompt(3), 16);
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["model"], "m");
        assert_eq!(v["messages"][0]["content"], "the cat sat");
        assert_eq!(v["max_tokens"], 16);
        assert_eq!(v["stream"], true);
        assert_eq!(v["stream_options"]["include_usage"], true);
    }

    #[test]
    fn content_types_name_their_framing() {
        let f = Framing::of_content_type;
        assert_eq!(f(b"text/event-stream"), Some(Framing::Sse));
        assert_eq!(f(b" Text/Event-Stream ; charset=utf-8"), Some(Framing::Sse));
        assert_eq!(f(b"application/x-ndjson"), Some(Framing::Lines));
        assert_eq!(f(b"application/json"), None);
        assert_eq!(f(b""), None);
    }
}
