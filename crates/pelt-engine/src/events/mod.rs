//! Streamed responses cut into events as their bodies arrive (issue 38):
//! wire code, below the transports, which feed a [`Tap`] each piece of a
//! body with its arrival time. The tap frames the pieces ([`sse`], lines,
//! chunks), reads an LLM's token chunks ([`llm`]) and keeps the stream's
//! [`Tally`]; each event goes to a sink (the worker's recorder of the
//! second it arrived in). Nothing here allocates per event: the parser's
//! buffers are the tap's, and a tap is its sender's for the run.

pub(crate) mod llm;
pub(crate) mod sse;

use pelt_core::stream::{Framing, LlmApi, StreamOptions, Tally};
use pelt_core::Nanos;
use sse::SseParser;

/// A body cut into events by one framing.
#[derive(Debug)]
enum Framer {
    Sse(SseParser),
    Lines(Lines),
    Chunks,
}

/// Lines (LF, CRLF or CR), blank ones left out; the data of the current
/// line kept when asked.
#[derive(Debug, Default)]
struct Lines {
    /// Bytes of the current line so far.
    len: usize,
    after_cr: bool,
}

impl Lines {
    fn feed(&mut self, bytes: &[u8], on_line: &mut impl FnMut()) {
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
                    if self.len > 0 {
                        on_line();
                    }
                    self.len = 0;
                }
                _ => self.len += 1,
            }
        }
    }

    /// The body ended: an unterminated last line is a line.
    fn finish(&mut self, on_line: &mut impl FnMut()) {
        if self.len > 0 {
            on_line();
        }
        self.len = 0;
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
}

impl Tap {
    /// A tap for a response framed as `framing`, under `opts`.
    pub fn new(framing: Framing, opts: &StreamOptions) -> Tap {
        let mut tap = Tap {
            framer: Framer::Chunks,
            tally: Tally::default(),
            active: true,
            stall_gap: opts.stall_gap.as_nanos() as u64,
            llm: opts.llm,
        };
        tap.restart(framing);
        tap
    }

    /// Ready for a new response framed as `framing` (buffers kept).
    pub fn restart(&mut self, framing: Framing) {
        self.tally = Tally::default();
        self.active = true;
        let keep = self.llm.is_some();
        self.framer = match (framing, std::mem::replace(&mut self.framer, Framer::Chunks)) {
            (Framing::Sse, Framer::Sse(mut p)) => {
                p.restart(keep);
                Framer::Sse(p)
            }
            (Framing::Sse, _) => Framer::Sse(SseParser::new(keep)),
            (Framing::Lines, _) => Framer::Lines(Lines::default()),
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
        sink: &mut (impl FnMut(Nanos, Option<u64>) + ?Sized),
    ) {
        let Tap {
            framer,
            tally,
            stall_gap,
            llm,
            ..
        } = self;
        let mut count = |tally: &mut Tally| sink(at, tally.event(at, *stall_gap));
        match framer {
            Framer::Sse(p) => p.feed(bytes, &mut |e| match llm {
                None => count(tally),
                Some(api) => match llm::read(*api, e.data) {
                    llm::Chunk::Done => tally.ended = true,
                    llm::Chunk::Other => {}
                    llm::Chunk::Token { usage } => {
                        tally.usage_tokens = usage.or(tally.usage_tokens);
                        count(tally)
                    }
                    llm::Chunk::Usage(n) => tally.usage_tokens = Some(n),
                },
            }),
            Framer::Lines(l) => l.feed(bytes, &mut || count(tally)),
            Framer::Chunks => {
                if new_piece && !bytes.is_empty() {
                    count(tally)
                }
            }
        }
    }

    /// The body ended at `at`: what the framing still held (a last line
    /// without its end) is an event; an SSE event cut off is dropped,
    /// as the spec says.
    pub fn finish(&mut self, at: Nanos, sink: &mut (impl FnMut(Nanos, Option<u64>) + ?Sized)) {
        if let Framer::Lines(l) = &mut self.framer {
            let (tally, stall_gap) = (&mut self.tally, self.stall_gap);
            l.finish(&mut || sink(at, tally.event(at, stall_gap)));
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
        for llm in [None, Some(LlmApi::Openai)] {
            let opts = StreamOptions {
                llm,
                ..StreamOptions::default()
            };
            let count = |pieces: &[&[u8]]| {
                let mut tap = Tap::new(framing, &opts);
                let mut n = 0u64;
                for p in pieces {
                    tap.feed(p, false, 1, &mut |_, _| n += 1);
                }
                tap.finish(2, &mut |_, _| n += 1);
                assert_eq!(n, tap.tally.events);
                (n, tap.tally.ended, tap.tally.usage_tokens)
            };
            let whole = count(&[body]);
            let split = count(&[&body[..cut], &body[cut..]]);
            if framing != Framing::Chunks {
                assert_eq!(whole, split, "{framing:?} {llm:?}");
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
        let mut tap = Tap::new(Framing::Lines, &opts());
        let mut gaps = Vec::new();
        tap.feed(b"{\"a\":1}\r\n\n{\"a\"", true, 10 * MS, &mut |_, g| {
            gaps.push(g)
        });
        tap.feed(b":2}\n{\"a\":3}", true, 250 * MS, &mut |_, g| gaps.push(g));
        tap.finish(260 * MS, &mut |_, g| gaps.push(g));
        assert_eq!(gaps, [None, Some(240 * MS), Some(10 * MS)]);
        assert_eq!((tap.tally.events, tap.tally.stalls), (3, 1));
        tap.restart(Framing::Chunks);
        let mut n = 0;
        tap.feed(b"abc", true, MS, &mut |_, _| n += 1);
        tap.feed(b"def", false, MS, &mut |_, _| n += 1);
        tap.feed(b"", true, MS, &mut |_, _| n += 1);
        tap.feed(b"g", true, 2 * MS, &mut |_, _| n += 1);
        assert_eq!((n, tap.tally.events), (2, 2));
    }

    #[test]
    fn sse_events_are_timed_when_they_complete() {
        let mut tap = Tap::new(Framing::Sse, &opts());
        let mut n = 0;
        tap.feed(b"data: a\n\ndata: b\n", true, 5 * MS, &mut |_, _| n += 1);
        assert_eq!(tap.tally.events, 1);
        tap.feed(b"\n", true, 7 * MS, &mut |_, _| n += 1);
        assert_eq!((tap.tally.first, tap.tally.last), (Some(5 * MS), 7 * MS));
        tap.feed(b"data: cut", true, 8 * MS, &mut |_, _| n += 1);
        tap.finish(9 * MS, &mut |_, _| n += 1);
        assert_eq!((n, tap.tally.events), (2, 2));
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
