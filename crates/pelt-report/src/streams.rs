//! Streamed responses (issue 38): the figures every view (text, JSON,
//! markdown, HTML) reads, from the summary's `total.streamed`, and the
//! words they are shown with, once. In `--llm` runs an event is a token
//! event and the words say so.

use pelt_core::stream::StreamStats;
use pelt_core::{ErrorKind, Histogram, RunSummary};

/// One latency of streams: its JSON key, its words, its histogram.
pub(crate) struct Measure<'a> {
    /// The JSON key (`first_event`, `gaps`, `mean_gap`, `duration`,
    /// `event_latency`).
    pub key: &'static str,
    /// What people read.
    pub words: &'static str,
    /// What it measures, in a sentence.
    pub note: &'static str,
    /// Its values.
    pub hist: &'a Histogram<u64>,
}

/// A run's stream figures.
pub(crate) struct Streams<'a> {
    /// The recorder's.
    pub stats: &'a StreamStats,
    /// Whether events are LLM token events (`--llm`).
    pub llm: bool,
    /// Streams cut short (the `stream_cut` failures).
    pub cut: u64,
    /// Seconds the run's events arrived over (its elapsed time).
    pub elapsed_s: f64,
    /// `--stall-gap`, seconds.
    pub stall_gap_s: f64,
    /// `--stream`'s framing, or "by Content-Type".
    pub framing: &'static str,
    /// `--event-time`, as given.
    pub event_time: Option<String>,
    /// `--hold`.
    pub hold: bool,
}

/// The run's stream figures; `None` when it met no streamed response.
pub(crate) fn of(s: &RunSummary) -> Option<Streams<'_>> {
    let stats = s.total.streamed.as_deref()?;
    let opts = &s.config.http.streamed;
    Some(Streams {
        stats,
        llm: opts.llm.is_some(),
        cut: s.total.errors[ErrorKind::StreamCut.index()],
        elapsed_s: s.elapsed.as_secs_f64(),
        stall_gap_s: opts.stall_gap.as_secs_f64(),
        framing: match (opts.llm, opts.framing) {
            (Some(_), _) => "llm openai (sse)",
            (None, Some(f)) => f.name(),
            (None, None) => "by Content-Type",
        },
        event_time: opts.event_time.as_ref().map(|e| e.to_string()),
        hold: opts.hold,
    })
}

/// A per-stream rate's percentile `p` (0..=100), per second: the
/// histogram holds thousandths.
pub(crate) fn per_s_at(h: &Histogram<u64>, p: f64) -> f64 {
    match h.is_empty() {
        true => 0.0,
        false => pelt_core::rank::percentile(h, p) as f64 / 1_000.0,
    }
}

/// What the per-stream tokens/s are, in a sentence.
pub(crate) const TOKENS_PER_S_NOTE: &str = "one value per complete stream: its output tokens / the time from the request's start (as response time runs) to its last token, as guidellm's output_tokens_per_second";

impl Streams<'_> {
    /// The latencies, in the order every view shows them: four, and the
    /// event latency with `--event-time`.
    pub fn measures(&self) -> Vec<Measure<'_>> {
        let st = self.stats;
        let (first, gap, mean) = match self.llm {
            true => (
                "time to first token (TTFT)",
                "inter-token latency (ITL), every gap",
                "mean ITL per stream",
            ),
            false => (
                "time to first event",
                "gap between events, every gap",
                "mean gap per stream",
            ),
        };
        let mut all = vec![
            Measure {
                key: "first_event",
                words: first,
                note: "from the request's start, as response time runs (its scheduled send time with --rate)",
                hist: &st.first_event,
            },
            Measure {
                key: "gaps",
                words: gap,
                note: "every gap between consecutive events of a stream, one value each",
                hist: &st.gaps,
            },
            Measure {
                key: "mean_gap",
                words: mean,
                note: "one value per stream: (last event - first) / (events - 1), as vLLM and guidellm report ITL",
                hist: &st.mean_gap,
            },
            Measure {
                key: "duration",
                words: "stream duration",
                note: "one value per stream: its first event to its last",
                hist: &st.duration,
            },
        ];
        if self.event_time.is_some() {
            all.push(Measure {
                key: "event_latency",
                words: "event latency (from its --event-time)",
                note: "every event: its arrival minus the time the server wrote in it (--event-time; 0 when that is later)",
                hist: &st.event_latency,
            });
        }
        all
    }

    /// "event" or "token event".
    pub fn event_word(&self) -> &'static str {
        if self.llm {
            "token events"
        } else {
            "events"
        }
    }

    /// Events per second over the run.
    pub fn events_per_s(&self) -> f64 {
        per_s(self.stats.events, self.elapsed_s)
    }

    /// LLM runs: output tokens per second over the run.
    pub fn tokens_per_s(&self) -> f64 {
        per_s(self.stats.tokens, self.elapsed_s)
    }

    /// Where the token counts came from: `usage` (the server's count),
    /// `events` (token events counted) or `mixed`.
    pub fn tokens_counted_by(&self) -> &'static str {
        match (self.stats.usage_counted, self.stats.streams) {
            (0, _) => "events",
            (u, n) if u == n => "usage",
            _ => "mixed",
        }
    }

    /// The counts line every view shows:
    /// `12 complete, 1 cut short; 240 events (48.0/s), 20 per stream (max 20); 0 stalls over 1s; 0 in one burst`.
    pub fn counts_line(&self) -> String {
        let st = self.stats;
        let per = &st.events_per_stream;
        let mut line = format!(
            "{} complete, {} cut short (stream_cut); {} {} ({:.1}/s), {:.1} per stream (max {}); {} stalls over {}s; {} in one burst",
            st.streams,
            self.cut,
            st.events,
            self.event_word(),
            self.events_per_s(),
            if per.is_empty() { 0.0 } else { per.mean() },
            if per.is_empty() { 0 } else { per.max() },
            st.stalls,
            self.stall_gap_s,
            st.bursts,
        );
        if self.hold {
            line.push_str(&format!("; {} held to the run's end (--hold)", st.held));
        }
        if self.event_time.is_some() {
            line.push_str(&format!("; {} without a readable --event-time", st.untimed));
        }
        if self.llm {
            line.push_str(&format!(
                "; {} output tokens ({:.1}/s, counted by {})",
                st.tokens,
                self.tokens_per_s(),
                self.tokens_counted_by()
            ));
        }
        line
    }

    /// `--llm` runs: output tokens/s per stream, one line:
    /// `p50 41.0, p10 39.8, p1 39.5, min 39.4 (N streams)`; `None` when no
    /// stream had one.
    pub fn tokens_per_stream_line(&self) -> Option<String> {
        let h = &self.stats.tokens_per_s;
        (self.llm && !h.is_empty()).then(|| {
            format!(
                "p50 {:.1}, p10 {:.1}, p1 {:.1}, min {:.1}, max {:.1} ({} streams)",
                per_s_at(h, 50.0),
                per_s_at(h, 10.0),
                per_s_at(h, 1.0),
                per_s_at(h, 0.0),
                per_s_at(h, 100.0),
                h.len()
            )
        })
    }
}

fn per_s(n: u64, s: f64) -> f64 {
    if s > 0.0 {
        n as f64 / s
    } else {
        0.0
    }
}
