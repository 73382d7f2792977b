//! `pelt run`'s streamed-response flags (issue 38): `--stream`,
//! `--stall-gap`, `--llm` and the LLM request's words, lowered into
//! `StreamOptions` and, for `--llm`, the request's body.

use crate::UserError;
use clap::{Args, ValueEnum};
use pelt_core::stream::{EventTime, Framing, LlmApi, StreamOptions};

/// How responses are read as streams, and LLM requests.
#[derive(Debug, Clone, Args)]
pub struct StreamArgs {
    /// Read every 2xx response as a stream of events, timed one by one:
    /// sse (server-sent events: an event per blank line after data:),
    /// lines (NDJSON: an event per line) or chunks (an event per HTTP/1.1
    /// chunk, HTTP/2 or HTTP/3 DATA frame, or read). Without it, responses
    /// whose Content-Type is text/event-stream (sse) or
    /// application/x-ndjson (lines) are read as streams. The report adds
    /// time to first event (from each request's start, its scheduled send
    /// with --rate), every gap between events, each stream's mean gap,
    /// events per stream and per second, and stalls; --assert takes
    /// 'ttft p99 < 200ms', 'itl.p99 < 50ms'. A stream whose connection
    /// closes or resets before its end is a stream_cut failure.
    #[arg(long = "stream", value_enum, value_name = "FRAMING")]
    pub stream: Option<FramingArg>,

    /// A gap between two events of a stream longer than this is a stall,
    /// counted (and shown per second in the timeline) [default: 1s].
    #[arg(long = "stall-gap", value_name = "DURATION")]
    pub stall_gap: Option<String>,

    /// Load an LLM's streaming API: openai (POST to its
    /// /v1/chat/completions). The body is built from --model, --prompt (or
    /// --prompt-tokens) and --max-tokens with stream: true and
    /// stream_options.include_usage, unless --body gives one. Each data:
    /// chunk with text is a token event: time to first token (TTFT),
    /// inter-token latency (ITL) and output tokens/s, counted from the
    /// server's final usage when it sends one; a stream without its
    /// [DONE] is a stream_cut failure. Like:
    /// pelt run http://127.0.0.1:8000/v1/chat/completions --llm openai
    /// --model m --prompt-tokens 200 --max-tokens 64 --rate 2 -d 30s
    #[arg(long = "llm", value_enum, value_name = "API")]
    pub llm: Option<LlmArg>,

    /// Subscriptions: each of -c N connections sends one request and stays
    /// subscribed to its stream for the whole run (-d), rather than a
    /// stream per request. A stream the server ends (or cuts: stream_cut)
    /// is counted and subscribed to again at once; the run's end closes
    /// the held streams, which are no failures. Not with --rate or -n.
    /// Like: pelt run http://127.0.0.1:8000/events --hold -c 1000 -d 1m
    /// --event-time json:/ts
    #[arg(long = "hold")]
    pub hold: bool,

    /// Each event's latency: its arrival (the kernel's receive stamp over
    /// HTTP/1.1) minus the time the server wrote in it, read from
    /// json:PATH (a JSON pointer like json:/ts, or a dotted path like
    /// json:meta.sent_at, into an SSE event's data or a line) or id (the
    /// SSE event's own id: field). The time is a number (or a string of
    /// one) of seconds (fractions kept), milliseconds, microseconds or
    /// nanoseconds since the Unix epoch: its size tells which, so no unit
    /// is given. Events without a readable time are counted as untimed.
    /// The server's clock must be the client's (same machine, or both on
    /// NTP).
    #[arg(long = "event-time", value_name = "json:PATH|id")]
    pub event_time: Option<String>,

    /// --llm: the model to ask for.
    #[arg(long = "model", value_name = "NAME", requires = "llm")]
    pub model: Option<String>,

    /// --llm: the user message sent.
    #[arg(
        long = "prompt",
        value_name = "TEXT",
        requires = "llm",
        conflicts_with = "prompt_tokens"
    )]
    pub prompt: Option<String>,

    /// --llm: a generated user message of about N tokens (common words of
    /// one token each; the server's usage.prompt_tokens gives the count).
    #[arg(long = "prompt-tokens", value_name = "N", requires = "llm")]
    pub prompt_tokens: Option<u32>,

    /// --llm: the most tokens each answer may have [default: 128].
    #[arg(long = "max-tokens", value_name = "N", requires = "llm")]
    pub max_tokens: Option<u32>,
}

/// `--stream`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FramingArg {
    /// Server-sent events.
    Sse,
    /// A line each (NDJSON).
    Lines,
    /// A transport chunk each.
    Chunks,
}

/// `--llm`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LlmArg {
    /// OpenAI's chat completions (vLLM, llama.cpp, Ollama, TGI speak it).
    Openai,
}

impl StreamArgs {
    /// The stream options these flags ask for.
    pub fn options(&self) -> Result<StreamOptions, UserError> {
        let framing = self.stream.map(|f| match f {
            FramingArg::Sse => Framing::Sse,
            FramingArg::Lines => Framing::Lines,
            FramingArg::Chunks => Framing::Chunks,
        });
        let llm = self.llm.map(|LlmArg::Openai| LlmApi::Openai);
        if llm.is_some() && framing.is_some_and(|f| f != Framing::Sse) {
            return Err(UserError(
                "--llm openai reads server-sent events: drop --stream, or make it --stream sse"
                    .into(),
            ));
        }
        let event_time = self
            .event_time
            .as_deref()
            .map(EventTime::parse)
            .transpose()
            .map_err(|e| UserError(format!("--event-time: {e}")))?;
        let mut opts = StreamOptions {
            framing,
            llm,
            hold: self.hold,
            event_time,
            ..StreamOptions::default()
        };
        if let Some(gap) = &self.stall_gap {
            opts.stall_gap = pelt_core::parse_duration(gap)
                .map_err(|e| UserError(format!("--stall-gap: {e}")))?;
            if opts.stall_gap.is_zero() {
                return Err(UserError(
                    "--stall-gap: must be more than 0, like 1s or 250ms".into(),
                ));
            }
        }
        Ok(opts)
    }

    /// The request body: `body` (from --body or --body-file) as given, or
    /// with --llm and no body, the API's request built from --model,
    /// --prompt or --prompt-tokens and --max-tokens.
    pub fn body(&self, body: Vec<u8>) -> Result<Vec<u8>, UserError> {
        let Some(LlmArg::Openai) = self.llm else {
            return Ok(body);
        };
        if !body.is_empty() {
            if self.model.is_some() || self.prompt.is_some() || self.prompt_tokens.is_some() {
                return Err(UserError(
                    "--llm with --body sends that body as is: drop --model, --prompt and --prompt-tokens, \
                     or drop --body to have pelt build it"
                        .into(),
                ));
            }
            return Ok(body);
        }
        let model = self.model.as_deref().ok_or_else(|| {
            UserError(
                "--llm openai needs the model to ask for: add --model NAME (the server's \
                 /v1/models lists them), or give the whole request with --body"
                    .into(),
            )
        })?;
        let prompt =
            match (&self.prompt, self.prompt_tokens) {
                (Some(p), _) => p.clone(),
                (None, Some(n)) => pelt_core::stream::generated_prompt(n),
                (None, None) => return Err(UserError(
                    "--llm openai needs a prompt: add --prompt TEXT or --prompt-tokens N, or give \
                     the whole request with --body"
                        .into(),
                )),
            };
        Ok(pelt_core::stream::openai_chat_body(
            model,
            &prompt,
            self.max_tokens.unwrap_or(128),
        ))
    }

    /// Whether the request is built as JSON here (so it is sent with
    /// `Content-Type: application/json`).
    pub fn builds_json(&self) -> bool {
        self.llm.is_some()
    }
}
