//! What asks for streamed responses to be measured as streams: the
//! framing (`--stream`), `--stall-gap`, `--llm` and the OpenAI chat body
//! it sends. What a stream measures is [`crate::measure::stream`].

use crate::duration::secs;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How a response body is cut into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Framing {
    /// Server-sent events (WHATWG HTML §9.2): an event is dispatched at a
    /// blank line after at least one `data:` field.
    Sse,
    /// A line (LF, CRLF or CR ended), blank lines left out: NDJSON.
    Lines,
    /// A piece of the body as the transport delivered it: an HTTP/1.1
    /// chunk, an HTTP/2 or HTTP/3 DATA frame, a read of a body that runs
    /// to the connection's close.
    Chunks,
}

impl Framing {
    /// The name the flag and reports use.
    pub fn name(self) -> &'static str {
        match self {
            Framing::Sse => "sse",
            Framing::Lines => "lines",
            Framing::Chunks => "chunks",
        }
    }

    /// The framing a `Content-Type` value names, if it names a stream:
    /// `text/event-stream` (SSE) or `application/x-ndjson` (lines).
    pub fn of_content_type(value: &[u8]) -> Option<Framing> {
        let media = value.split(|&b| b == b';').next().unwrap_or_default();
        let media = media.trim_ascii();
        if media.eq_ignore_ascii_case(b"text/event-stream") {
            Some(Framing::Sse)
        } else if media.eq_ignore_ascii_case(b"application/x-ndjson")
            || media.eq_ignore_ascii_case(b"application/jsonl")
        {
            Some(Framing::Lines)
        } else {
            None
        }
    }
}

/// `--llm`: the API whose streamed answers are read as token streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmApi {
    /// OpenAI's chat completions (and completions): SSE whose `data:`
    /// chunks carry `choices[].delta.content` (or `choices[].text`), a
    /// last chunk with `usage` when asked, then `data: [DONE]`.
    Openai,
}

/// An OpenAI chat-completions request body that streams (`--llm
/// openai`): `model`, one user message, `max_tokens`, `stream: true` and
/// `stream_options.include_usage` (so the last chunk carries the
/// server's token count). Serialised once, before the run.
pub fn openai_chat_body(model: &str, prompt: &str, max_tokens: u32) -> Vec<u8> {
    let body = serde_json::json!({
        "model": model,
        "messages": [{ "role": "user", "content": prompt }],
        "max_tokens": max_tokens,
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    serde_json::to_vec(&body).expect("a JSON value serialises")
}

/// A prompt of about `tokens` tokens (`--prompt-tokens`): common short
/// words, each one token in the usual BPE vocabularies (GPT's, Llama's),
/// so the input length is known without the model's tokenizer. The
/// server's `usage.prompt_tokens` gives the exact count.
pub fn generated_prompt(tokens: u32) -> String {
    const WORDS: [&str; 8] = ["the", "cat", "sat", "on", "a", "mat", "and", "ran"];
    let mut p = String::with_capacity(tokens as usize * 4);
    for i in 0..tokens as usize {
        if i > 0 {
            p.push(' ');
        }
        p.push_str(WORDS[i % WORDS.len()]);
    }
    p
}

/// `--event-time`: where an event carries the time the server sent it,
/// as a number (or a string holding one) of seconds, milliseconds,
/// microseconds or nanoseconds since the Unix epoch, told apart by its
/// size (see [`unix_ns_of`]): a unit cannot be given wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum EventTime {
    /// `id`: the SSE `id:` field.
    Id,
    /// `json:PATH`: a value in the event's data (an SSE event's `data:`,
    /// a line), read as JSON: a JSON pointer (`/meta/ts`) or a dotted
    /// path (`meta.ts`; a number is an array's index either way).
    Json(String),
}

impl EventTime {
    /// Reads `--event-time`'s value: `id` or `json:PATH`.
    pub fn parse(text: &str) -> Result<EventTime, String> {
        let text = text.trim();
        if text == "id" {
            return Ok(EventTime::Id);
        }
        match text.strip_prefix("json:") {
            Some(path) if !path.is_empty() && path != "/" && path != "." => {
                Ok(EventTime::Json(path.to_string()))
            }
            _ => Err(format!(
                "invalid value '{}': give id (the SSE id: field) or json:PATH (a JSON pointer like \
                 json:/ts, or a dotted path like json:meta.sent_at)",
                text.escape_debug()
            )),
        }
    }

    /// A `json:` path's steps, unescaped (a pointer's `~1` is `/`, `~0`
    /// is `~`); empty for `id`.
    pub fn steps(&self) -> Vec<String> {
        match self {
            EventTime::Id => Vec::new(),
            EventTime::Json(p) => match p.strip_prefix('/') {
                Some(pointer) => pointer
                    .split('/')
                    .map(|s| s.replace("~1", "/").replace("~0", "~"))
                    .collect(),
                None => p.split('.').map(str::to_string).collect(),
            },
        }
    }
}

impl std::fmt::Display for EventTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EventTime::Id => f.write_str("id"),
            EventTime::Json(p) => write!(f, "json:{p}"),
        }
    }
}

impl TryFrom<String> for EventTime {
    type Error = String;
    fn try_from(s: String) -> Result<EventTime, String> {
        EventTime::parse(&s)
    }
}

impl From<EventTime> for String {
    fn from(e: EventTime) -> String {
        e.to_string()
    }
}

/// A timestamp since the Unix epoch in nanoseconds, from a number whose
/// unit its size tells (any time since 2001-09-09): below 10^11 it is
/// seconds (fractions kept), below 10^14 milliseconds, below 10^17
/// microseconds, else nanoseconds. `None`: not positive, or before 2001
/// in seconds (10^9), so no unit fits.
pub fn unix_ns_of(value: f64) -> Option<u64> {
    if !value.is_finite() || value < 1e9 {
        return None;
    }
    // Whole units and the fraction apart: an f64 of nanoseconds since
    // 1970 is only good to 256 ns.
    let (scale, whole) = if value < 1e11 {
        (1_000_000_000, value.trunc())
    } else if value < 1e14 {
        (1_000_000, value.trunc())
    } else if value < 1e17 {
        (1_000, value.trunc())
    } else {
        (1, value.round())
    };
    let whole = unix_ns_of_int(whole as u64)?;
    let fraction = (value.fract() * scale as f64).round() as u64;
    whole.checked_add(fraction.min(scale - 1))
}

/// [`unix_ns_of`] for an integer, exactly (a nanosecond count is beyond
/// an `f64`'s 53 bits).
pub fn unix_ns_of_int(value: u64) -> Option<u64> {
    match value {
        0..=999_999_999 => None,
        1_000_000_000..=99_999_999_999 => value.checked_mul(1_000_000_000),
        100_000_000_000..=99_999_999_999_999 => value.checked_mul(1_000_000),
        100_000_000_000_000..=99_999_999_999_999_999 => value.checked_mul(1_000),
        _ => Some(value),
    }
}

/// The default `--stall-gap`.
pub const DEFAULT_STALL_GAP: Duration = Duration::from_secs(1);

/// How streamed responses are measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamOptions {
    /// `--stream`: how every response's body is cut into events. `None`:
    /// only responses whose `Content-Type` names a stream
    /// (`text/event-stream`, `application/x-ndjson`) are measured as
    /// streams, by that framing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framing: Option<Framing>,
    /// `--stall-gap`: a gap longer than this is a stall.
    #[serde(with = "secs", default = "default_stall_gap")]
    pub stall_gap: Duration,
    /// `--llm`: events are the API's token chunks (SSE framing), and a
    /// stream that ends before its `[DONE]` is cut short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<LlmApi>,
    /// `--hold`: each connection (`-c`) sends one request and stays
    /// subscribed to its stream for the whole run (`-d`); a stream that
    /// ends is counted and subscribed to again; the run's end closes the
    /// held streams, which are no failures.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hold: bool,
    /// `--event-time`: where each event says when the server sent it; an
    /// event's latency is its arrival minus that time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_time: Option<EventTime>,
}

fn default_stall_gap() -> Duration {
    DEFAULT_STALL_GAP
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            framing: None,
            stall_gap: DEFAULT_STALL_GAP,
            llm: None,
            hold: false,
            event_time: None,
        }
    }
}

impl StreamOptions {
    /// Nothing asked: streams are detected by `Content-Type` only, with
    /// the default stall gap (so a configuration without them writes
    /// nothing).
    pub fn is_default(&self) -> bool {
        *self == StreamOptions::default()
    }

    /// The framing every response is read with, if one was asked for
    /// (`--llm` reads SSE).
    pub fn forced(&self) -> Option<Framing> {
        match self.llm {
            Some(_) => Some(Framing::Sse),
            None => self.framing,
        }
    }
}
