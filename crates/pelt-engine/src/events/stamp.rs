//! `--event-time`: the time a server wrote in an event, read without
//! keeping anything: a JSON path walked with serde (other keys and values
//! skipped, keys compared as they are read), or the SSE `id:` field's
//! text. The value is a number, or a string holding one, of seconds,
//! milliseconds, microseconds or nanoseconds since the Unix epoch, its
//! unit told by its size (`pelt_core::stream::unix_ns_of`).

use pelt_core::stream::{unix_ns_of, unix_ns_of_int};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The Unix time (ns) at `steps` in the JSON `data`, if it is there and
/// reads as a time.
pub(crate) fn json_at(data: &[u8], steps: &[String]) -> Option<u64> {
    let mut de = serde_json::Deserializer::from_slice(data);
    At { steps }.deserialize(&mut de).ok().flatten()
}

/// The Unix time (ns) a text says (an SSE `id:`), if it reads as one.
pub(crate) fn text_at(text: &[u8]) -> Option<u64> {
    std::str::from_utf8(text).ok().and_then(number_in)
}

/// A number written as text: digits (read exactly), or a decimal.
fn number_in(s: &str) -> Option<u64> {
    let s = s.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse::<u64>().ok().and_then(unix_ns_of_int);
    }
    s.parse::<f64>().ok().and_then(unix_ns_of)
}

/// The value at `steps` below the one being read.
struct At<'s> {
    steps: &'s [String],
}

impl<'de> DeserializeSeed<'de> for At<'_> {
    type Value = Option<u64>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<u64>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for At<'_> {
    type Value = Option<u64>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_u64<E>(self, v: u64) -> Result<Option<u64>, E> {
        Ok(self.steps.is_empty().then(|| unix_ns_of_int(v)).flatten())
    }

    fn visit_i64<E>(self, v: i64) -> Result<Option<u64>, E> {
        let v = u64::try_from(v).ok().filter(|_| self.steps.is_empty());
        Ok(v.and_then(unix_ns_of_int))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Option<u64>, E> {
        Ok(self.steps.is_empty().then(|| unix_ns_of(v)).flatten())
    }

    fn visit_str<E>(self, v: &str) -> Result<Option<u64>, E> {
        Ok(self.steps.is_empty().then(|| number_in(v)).flatten())
    }

    fn visit_bool<E>(self, _: bool) -> Result<Option<u64>, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Option<u64>, E> {
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Option<u64>, A::Error> {
        let mut found = None;
        match self.steps.split_first() {
            Some((step, rest)) => {
                while let Some(is) = m.next_key_seed(KeyIs(step))? {
                    if is && found.is_none() {
                        found = m.next_value_seed(At { steps: rest })?;
                    } else {
                        m.next_value::<IgnoredAny>()?;
                    }
                }
            }
            None => while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {},
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Option<u64>, A::Error> {
        let mut found = None;
        let wanted = self
            .steps
            .split_first()
            .and_then(|(step, rest)| Some((step.parse::<usize>().ok()?, rest)));
        let mut i = 0usize;
        loop {
            let more = match wanted {
                Some((index, rest)) if index == i => {
                    s.next_element_seed(At { steps: rest })?.map(|v| found = v)
                }
                _ => s.next_element::<IgnoredAny>()?.map(|_| ()),
            };
            if more.is_none() {
                break;
            }
            i += 1;
        }
        Ok(found)
    }
}

/// Whether a key is `.0`.
struct KeyIs<'s>(&'s str);

impl<'de> DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIs<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, v: &str) -> Result<bool, E> {
        Ok(v == self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pelt_core::stream::EventTime;

    fn at(data: &str, path: &str) -> Option<u64> {
        let steps = EventTime::parse(path).unwrap().steps();
        json_at(data.as_bytes(), &steps)
    }

    #[test]
    fn times_are_read_at_their_path_in_any_unit() {
        let s = 1_764_300_000u64;
        let ns = s * 1_000_000_000;
        // Seconds, with a fraction; milliseconds; microseconds; nanoseconds.
        assert_eq!(
            at(r#"{"ts": 1764300000.25}"#, "json:/ts"),
            Some(ns + 250_000_000)
        );
        assert_eq!(
            at(r#"{"a":1,"ts_ms":1764300000123}"#, "json:ts_ms"),
            Some(ns + 123_000_000)
        );
        assert_eq!(
            at(r#"{"t":1764300000123456}"#, "json:/t"),
            Some(ns + 123_456_000)
        );
        assert_eq!(
            at(r#"{"t":1764300000123456789}"#, "json:/t"),
            Some(ns + 123_456_789)
        );
        // Nested, in arrays, after other values, as strings.
        let doc = r#"{"x":[1,{"y":2}],"meta":{"skip":{"ts":1},"sent":[0,"1764300000"]}}"#;
        assert_eq!(at(doc, "json:/meta/sent/1"), Some(ns));
        assert_eq!(at(doc, "json:meta.sent.1"), Some(ns));
        assert_eq!(
            at(r#"{"a/b":{"c~d":1764300000}}"#, "json:/a~1b/c~0d"),
            Some(ns)
        );
        // Missing, not a number, before 2001 (no unit fits), not JSON.
        assert_eq!(at(r#"{"ts":1764300000}"#, "json:/t"), None);
        assert_eq!(at(r#"{"ts":"soon"}"#, "json:/ts"), None);
        assert_eq!(at(r#"{"ts":12345}"#, "json:/ts"), None);
        assert_eq!(at(r#"{"ts":-1764300000}"#, "json:/ts"), None);
        assert_eq!(at(r#"{"ts":{"s":1764300000}}"#, "json:/ts"), None);
        assert_eq!(at("not json", "json:/ts"), None);
        assert_eq!(text_at(b"1764300000.5"), Some(ns + 500_000_000));
        assert_eq!(text_at(b"1764300000123"), Some(ns + 123_000_000));
        assert_eq!(text_at(b"7"), None);
        assert_eq!(text_at(b"\xff"), None);
    }
}
