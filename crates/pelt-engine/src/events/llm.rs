//! `--llm openai`: what one SSE event of a streamed chat completion (or
//! completion) says. Each `data:` is a JSON chunk; a chunk with a
//! non-empty `choices[].delta.content` (chat; `reasoning_content` too, as
//! reasoning models send first) or `choices[].text` (completions) is a
//! token event; the last may carry `usage.completion_tokens` (asked by
//! `stream_options.include_usage`); `[DONE]` ends the stream.
//!
//! Read with serde into types that keep nothing: strings are only tested
//! for emptiness and unknown fields skipped, so a chunk allocates only
//! when its strings hold escapes (serde_json's scratch buffer).

use pelt_core::stream::LlmApi;
use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// What a chunk said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chunk {
    /// `[DONE]`: the stream's end.
    Done,
    /// Text was generated (with the server's count so far, if the chunk
    /// carried `usage`).
    Token { usage: Option<u64> },
    /// No text, but the server's count of output tokens.
    Usage(u64),
    /// Anything else: a role, a finish reason, a keep-alive, not JSON.
    Other,
}

/// Reads one event's data.
pub(crate) fn read(api: LlmApi, data: &[u8]) -> Chunk {
    match api {
        LlmApi::Openai => openai(data),
    }
}

fn openai(data: &[u8]) -> Chunk {
    if data.trim_ascii() == b"[DONE]" {
        return Chunk::Done;
    }
    let Ok(c) = serde_json::from_slice::<OpenaiChunk>(data) else {
        return Chunk::Other;
    };
    let usage = c.usage.and_then(|u| u.completion_tokens);
    match (c.choices.0, usage) {
        (true, usage) => Chunk::Token { usage },
        (false, Some(n)) => Chunk::Usage(n),
        (false, None) => Chunk::Other,
    }
}

#[derive(Deserialize)]
struct OpenaiChunk {
    #[serde(default)]
    choices: AnyText,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    completion_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    /// Completions' text.
    #[serde(default)]
    text: Option<NonEmpty>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<NonEmpty>,
    #[serde(default)]
    reasoning_content: Option<NonEmpty>,
}

impl Choice {
    fn has_text(&self) -> bool {
        let full = |s: &Option<NonEmpty>| s.as_ref().is_some_and(|s| s.0);
        full(&self.text)
            || self
                .delta
                .as_ref()
                .is_some_and(|d| full(&d.content) || full(&d.reasoning_content))
    }
}

/// Whether any choice carries text (a list read element by element, kept
/// in a flag rather than a `Vec`).
#[derive(Default)]
struct AnyText(bool);

impl<'de> Deserialize<'de> for AnyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AnyText;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of choices")
            }
            fn visit_unit<E>(self) -> Result<AnyText, E> {
                Ok(AnyText(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AnyText, A::Error> {
                let mut any = false;
                while let Some(c) = seq.next_element::<Option<Choice>>()? {
                    any |= c.is_some_and(|c| c.has_text());
                }
                Ok(AnyText(any))
            }
        }
        d.deserialize_any(V)
    }
}

/// Whether a string is not empty (anything else: no).
struct NonEmpty(bool);

impl<'de> Deserialize<'de> for NonEmpty {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NonEmpty;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, s: &str) -> Result<NonEmpty, E> {
                Ok(NonEmpty(!s.is_empty()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<NonEmpty, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(NonEmpty(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<NonEmpty, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(NonEmpty(false))
            }
            fn visit_bool<E>(self, _: bool) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_i64<E>(self, _: i64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_u64<E>(self, _: u64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_f64<E>(self, _: f64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_unit<E>(self) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_openai_chunks() {
        let r = |s: &str| read(LlmApi::Openai, s.as_bytes());
        assert_eq!(r("[DONE]"), Chunk::Done);
        assert_eq!(r(" [DONE] "), Chunk::Done);
        // The first chunk's role and empty content: no token.
        assert_eq!(
            r(
                r#"{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#
            ),
            Chunk::Other
        );
        assert_eq!(
            r(r#"{"choices":[{"index":0,"delta":{"content":"He\"llo"},"logprobs":null}]}"#),
            Chunk::Token { usage: None }
        );
        assert_eq!(
            r(r#"{"choices":[{"delta":{"reasoning_content":"hmm","content":null}}]}"#),
            Chunk::Token { usage: None }
        );
        assert_eq!(
            r(
                r#"{"choices":[{"text":"x","index":0}],"usage":{"prompt_tokens":3,"completion_tokens":9}}"#
            ),
            Chunk::Token { usage: Some(9) }
        );
        assert_eq!(
            r(
                r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":12,"total_tokens":15}}"#
            ),
            Chunk::Usage(12)
        );
        assert_eq!(
            r(r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#),
            Chunk::Other
        );
        assert_eq!(r(r#"{"choices":null,"usage":null}"#), Chunk::Other);
        assert_eq!(r("not json"), Chunk::Other);
        assert_eq!(
            r(r#"{"choices":[{"delta":{"content":["odd"]}}]}"#),
            Chunk::Other
        );
    }
}
