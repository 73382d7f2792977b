//! Streamed responses cut into events as their bodies arrive (issue 38):
//! wire code, below the transports, which feed a [`Tap`] each piece of a
//! body with its arrival time. The tap frames the pieces ([`sse`], lines,
//! chunks), reads an LLM's token chunks ([`llm`]) and keeps the stream's
//! [`Tally`]; each event goes to a sink (the worker's recorder of the
//! second it arrived in). Nothing here allocates per event: the parser's
//! buffers are the tap's, and a tap is its sender's for the run.

pub(crate) mod llm;
pub(crate) mod sse;
pub(crate) mod stamp;

use pelt_core::stream::{EventTime, Framing, LlmApi, StreamOptions, Tally};
use pelt_core::Nanos;
use sse::SseParser;

/// A body cut into events by one framing.
#[derive(Debug)]
enum Framer {
    Sse(SseParser),
    Lines(Lines),
    Chunks,
}

/// What an event said of when the server sent it (`--event-time`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SentAt {
    /// Not asked for.
    NotAsked,
    /// Asked for, but missing or unreadable.
    Unreadable,
    /// Unix time, nanoseconds.
    Unix(u64),
}

/// `--event-time`, compiled once per tap.
#[derive(Debug)]
enum Stamp {
    Id,
    Json(Vec<String>),
}

impl Stamp {
    fn of(e: &EventTime) -> Stamp {
        match e {
            EventTime::Id => Stamp::Id,
            EventTime::Json(_) => Stamp::Json(e.steps()),
        }
    }

    /// An SSE event's time.
    fn sse(this: &Option<Stamp>, e: &sse::Event<'_>) -> SentAt {
        let unix = match this {
            None => return SentAt::NotAsked,
            Some(Stamp::Id) => e.id.and_then(stamp::text_at),
            Some(Stamp::Json(_)) if e.truncated => None,
            Some(Stamp::Json(steps)) => stamp::json_at(e.data, steps),
        };
        unix.map_or(SentAt::Unreadable, SentAt::Unix)
    }

    /// A line's time (`id` reads nothing from a line).
    fn line(this: &Option<Stamp>, line: &[u8], truncated: bool) -> SentAt {
        match this {
            None => SentAt::NotAsked,
            Some(Stamp::Json(steps)) if !truncated => {
                stamp::json_at(line, steps).map_or(SentAt::Unreadable, SentAt::Unix)
            }
            Some(_) => SentAt::Unreadable,
        }
    }
}

/// Lines (LF, CRLF or CR), blank ones left out; the data of the current
/// line kept when asked (up to `sse::MAX_DATA` bytes).
#[derive(Debug, Default)]
struct Lines {
    /// Bytes of the current line so far.
    len: usize,
    after_cr: bool,
    keep: bool,
    data: Vec<u8>,
}

impl Lines {
    fn feed(&mut self, bytes: &[u8], on_line: &mut impl FnMut(&[u8], bool)) {
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    self.end(on_line);
                }
                _ => {
                    self.len += 1;
                    if self.keep && self.data.len() < sse::MAX_DATA {
                        self.data.push(b);
                    }
                }
            }
        }
    }

    /// A line ends: an event if it has bytes.
    fn end(&mut self, on_line: &mut impl FnMut(&[u8], bool)) {
        if self.len > 0 {
            on_line(&self.data, self.len > self.data.len() && self.keep);
        }
        self.len = 0;
        self.data.clear();
    }

    /// The body ended: an unterminated last line is a line.
    fn finish(&mut self, on_line: &mut impl FnMut(&[u8], bool)) {
        self.end(on_line);
    }
}

/// One sender's stream reader: its framing's state and the stream's
/// tally, reused from response to response.
#[derive(Debug)]
pub(crate) struct Tap {
    framer: Framer,
    /// The stream so far.
    pub tally: Tally,
    /// Whether the sender's latest response was a stream (set when one
    /// starts, cleared before each response).
    pub active: bool,
    stall_gap: u64,
    llm: Option<LlmApi>,
    stamp: Option<Stamp>,
}

impl Tap {
    /// A tap for a response of `status` framed as `framing`, under `opts`.
    pub fn new(framing: Framing, opts: &StreamOptions, status: u16) -> Tap {
        let mut tap = Tap {
            framer: Framer::Chunks,
            tally: Tally::default(),
            active: true,
            stall_gap: opts.stall_gap.as_nanos() as u64,
            llm: opts.llm,
            stamp: opts.event_time.as_ref().map(Stamp::of),
        };
        tap.restart(framing, status);
        tap
    }

    /// Ready for a new response of `status` framed as `framing` (buffers
    /// kept).
    pub fn restart(&mut self, framing: Framing, status: u16) {
        self.tally = Tally {
            status,
            ..Tally::default()
        };
        self.active = true;
        // LLM chunks and `--event-time json:` read each event's data.
        let keep = self.llm.is_some() || matches!(self.stamp, Some(Stamp::Json(_)));
        self.framer = match (framing, std::mem::replace(&mut self.framer, Framer::Chunks)) {
            (Framing::Sse, Framer::Sse(mut p)) => {
                p.restart(keep);
                Framer::Sse(p)
            }
            (Framing::Sse, _) => Framer::Sse(SseParser::new(keep)),
            (Framing::Lines, Framer::Lines(mut l)) => {
                l.data.clear();
                Framer::Lines(Lines {
                    keep,
                    data: l.data,
                    ..Lines::default()
                })
            }
            (Framing::Lines, _) => Framer::Lines(Lines {
                keep,
                ..Lines::default()
            }),
            (Framing::Chunks, _) => Framer::Chunks,
        };
    }

    /// A piece of the body (de-chunked) arrived `at`: a new transport
    /// chunk if `new_piece`. Each event it completes is counted in the
    /// tally and given to `sink` with its gap since the previous one.
    pub fn feed(
        &mut self,
        bytes: &[u8],
        new_piece: bool,
        at: Nanos,
        sink: &mut (impl FnMut(Nanos, Option<u64>, SentAt) + ?Sized),
    ) {
        let Tap {
            framer,
            tally,
            stall_gap,
            llm,
            stamp,
            ..
        } = self;
        tally.body_bytes += bytes.len() as u64;
        let mut count =
            |tally: &mut Tally, sent: SentAt| sink(at, tally.event(at, *stall_gap), sent);
        match framer {
            Framer::Sse(p) => p.feed(bytes, &mut |e| match llm {
                None => count(tally, Stamp::sse(stamp, &e)),
                Some(api) => match llm::read(*api, e.data) {
                    llm::Chunk::Done => tally.ended = true,
                    llm::Chunk::Other => {}
                    llm::Chunk::Token { usage } => {
                        tally.usage_tokens = usage.or(tally.usage_tokens);
                        count(tally, Stamp::sse(stamp, &e))
                    }
                    llm::Chunk::Usage(n) => tally.usage_tokens = Some(n),
                },
            }),
            Framer::Lines(l) => l.feed(bytes, &mut |line, cut| {
                count(tally, Stamp::line(stamp, line, cut))
            }),
            Framer::Chunks => {
                // `--event-time` is refused with chunks: a piece is no
                // whole message.
                if new_piece && !bytes.is_empty() {
                    count(tally, SentAt::NotAsked)
                }
            }
        }
    }

    /// The body ended at `at`: what the framing still held (a last line
    /// without its end) is an event; an SSE event cut off is dropped,
    /// as the spec says.
    pub fn finish(
        &mut self,
        at: Nanos,
        sink: &mut (impl FnMut(Nanos, Option<u64>, SentAt) + ?Sized),
    ) {
        if let Framer::Lines(l) = &mut self.framer {
            let (tally, stall_gap, stamp) = (&mut self.tally, self.stall_gap, &self.stamp);
            l.finish(&mut |line, cut| {
                sink(
                    at,
                    tally.event(at, stall_gap),
                    Stamp::line(stamp, line, cut),
                )
            });
        }
    }
}

/// The stream of a sender's latest response, if it was one: its events
/// so far (what the response's end, a failure or a timeout left).
pub(crate) fn streamed(tap: &Option<Box<Tap>>) -> Option<Tally> {
    tap.as_deref().filter(|t| t.active).map(|t| t.tally)
}

/// A sender's next request begins: no stream yet.
pub(crate) fn idle(tap: &mut Option<Box<Tap>>) {
    if let Some(t) = tap.as_deref_mut() {
        t.active = false;
    }
}

/// The fuzz target's entry (docs/FUZZING.md): every framing fed `data`
/// split where its first bytes say, plain and as an LLM stream, must not
/// panic, and the split must not change the events counted.
pub fn fuzz_events(data: &[u8]) {
    let Some((&cut, body)) = data.split_first() else {
        return;
    };
    let cut = usize::from(cut).min(body.len());
    for framing in [Framing::Sse, Framing::Lines, Framing::Chunks] {
        for (llm, event_time) in [
            (None, None),
            (Some(LlmApi::Openai), None),
            (None, Some(EventTime::Json("/t".into()))),
            (None, Some(EventTime::Id)),
        ] {
            let opts = StreamOptions {
                llm,
                event_time,
                ..StreamOptions::default()
            };
            let count = |pieces: &[&[u8]]| {
                let mut tap = Tap::new(framing, &opts, 200);
                let mut n = 0u64;
                for p in pieces {
                    tap.feed(p, false, 1, &mut |_, _, _| n += 1);
                }
                tap.finish(2, &mut |_, _, _| n += 1);
                assert_eq!(n, tap.tally.events);
                (n, tap.tally.ended, tap.tally.usage_tokens)
            };
            let whole = count(&[body]);
            let split = count(&[&body[..cut], &body[cut..]]);
            if framing != Framing::Chunks {
                assert_eq!(whole, split, "{framing:?} {:?}", opts);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const MS: u64 = 1_000_000;

    fn opts() -> StreamOptions {
        StreamOptions {
            stall_gap: Duration::from_millis(100),
            ..StreamOptions::default()
        }
    }

    #[test]
    fn lines_and_chunks_are_counted_with_their_gaps() {
        let mut tap = Tap::new(Framing::Lines, &opts(), 200);
        let mut gaps = Vec::new();
        tap.feed(b"{\"a\":1}\r\n\n{\"a\"", true, 10 * MS, &mut |_, g, _| {
            gaps.push(g)
        });
        tap.feed(b":2}\n{\"a\":3}", true, 250 * MS, &mut |_, g, _| {
            gaps.push(g)
        });
        tap.finish(260 * MS, &mut |_, g, _| gaps.push(g));
        assert_eq!(gaps, [None, Some(240 * MS), Some(10 * MS)]);
        assert_eq!((tap.tally.events, tap.tally.stalls), (3, 1));
        tap.restart(Framing::Chunks, 200);
        let mut n = 0;
        tap.feed(b"abc", true, MS, &mut |_, _, _| n += 1);
        tap.feed(b"def", false, MS, &mut |_, _, _| n += 1);
        tap.feed(b"", true, MS, &mut |_, _, _| n += 1);
        tap.feed(b"g", true, 2 * MS, &mut |_, _, _| n += 1);
        assert_eq!((n, tap.tally.events), (2, 2));
    }

    #[test]
    fn sse_events_are_timed_when_they_complete() {
        let mut tap = Tap::new(Framing::Sse, &opts(), 200);
        let mut n = 0;
        tap.feed(b"data: a\n\ndata: b\n", true, 5 * MS, &mut |_, _, _| n += 1);
        assert_eq!(tap.tally.events, 1);
        tap.feed(b"\n", true, 7 * MS, &mut |_, _, _| n += 1);
        assert_eq!((tap.tally.first, tap.tally.last), (Some(5 * MS), 7 * MS));
        tap.feed(b"data: cut", true, 8 * MS, &mut |_, _, _| n += 1);
        tap.finish(9 * MS, &mut |_, _, _| n += 1);
        assert_eq!((n, tap.tally.events), (2, 2));
    }

    /// `--event-time`: each event's own time, from its data (SSE or a
    /// line) or its SSE id, split anywhere; none where it is missing.
    #[test]
    fn events_carry_the_time_the_server_wrote_in_them() {
        const S: u64 = 1_764_300_000;
        let unix = |ms: u64| SentAt::Unix(S * 1_000_000_000 + ms * 1_000_000);
        let times = |framing, event_time: &str, body: &[u8]| {
            let opts = StreamOptions {
                event_time: Some(EventTime::parse(event_time).unwrap()),
                ..opts()
            };
            let mut out = Vec::new();
            for cut in 0..=body.len() {
                let mut tap = Tap::new(framing, &opts, 200);
                let mut seen = Vec::new();
                tap.feed(&body[..cut], true, MS, &mut |_, _, t| seen.push(t));
                tap.feed(&body[cut..], true, MS, &mut |_, _, t| seen.push(t));
                tap.finish(MS, &mut |_, _, t| seen.push(t));
                assert_eq!(tap.tally.body_bytes, body.len() as u64);
                if cut > 0 {
                    assert_eq!(seen, out, "cut at {cut}");
                }
                out = seen;
            }
            out
        };
        let sse = b"id: 1764300000.5\ndata: {\"ts\":1764300000250}\n\ndata: {\"x\":1}\n\n";
        assert_eq!(
            times(Framing::Sse, "json:/ts", sse),
            [unix(250), SentAt::Unreadable]
        );
        assert_eq!(
            times(Framing::Sse, "id", sse),
            [unix(500), SentAt::Unreadable]
        );
        let lines = b"{\"m\":{\"t\":1764300000.125}}\n{\"m\":{}}\n{\"m\":{\"t\":\"1764300000\"}}";
        assert_eq!(
            times(Framing::Lines, "json:m.t", lines),
            [unix(125), SentAt::Unreadable, unix(0)]
        );
    }

    #[test]
    fn fuzz_entry_holds_on_samples() {
        fuzz_events(
            b"\x05data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n",
        );
        fuzz_events(b"\x00");
        fuzz_events(b"");
        fuzz_events(b"\xffa\nb\r\nc");
    }
}
