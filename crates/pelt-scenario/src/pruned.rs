//! A response body parsed as JSON keeping only what a step's pointers
//! reach. Extraction and checks read a value or two of a body; building
//! the whole document (a map and a string per field) was the largest
//! part of a step's cost beyond a plain request's (docs/BENCHMARKS.md).
//! Here one pass of serde_json's parser skips every field and element
//! no pointer goes through (`IgnoredAny`, no allocation) and builds the
//! rest: the same `Value` along each pointer's path, so
//! `response::at` finds in it what it would find in the whole document.
//! A skipped array element before a kept one is `null`, so indices hold.
//! The body must still be valid JSON throughout, or the parse fails as
//! the whole document's would.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

/// `body` as JSON, pruned to what `paths` (RFC 6901 pointers, escaped)
/// reach; `None` when it is not JSON.
pub(crate) fn parse(body: &[u8], paths: &[&str]) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let v = Prune { paths, prefix: "" }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(v)
}

/// Where the parse is: the pointers, and the escaped prefix (a slice of
/// one of them) that leads here. Escaping is canonical (`~0`, `~1`), so
/// every pointer through here starts with these very bytes.
#[derive(Clone, Copy)]
struct Prune<'p> {
    paths: &'p [&'p str],
    prefix: &'p str,
}

impl<'p> Prune<'p> {
    /// Whether a pointer ends here: the whole value is wanted.
    fn whole(&self) -> bool {
        self.paths
            .iter()
            .any(|p| p.len() == self.prefix.len() && same(p, self.prefix))
    }

    /// The next segment of pointer `p` if it goes through here.
    fn after(&self, p: &'p str) -> Option<&'p str> {
        let at = self.prefix.len();
        if p.len() <= at || p.as_bytes()[at] != b'/' || !same(p, self.prefix) {
            return None;
        }
        let rest = &p[at + 1..];
        Some(rest.find('/').map_or(rest, |i| &rest[..i]))
    }

    /// The next segments of the pointers through here.
    fn next(&self) -> impl Iterator<Item = &'p str> + '_ {
        self.paths.iter().filter_map(|p| self.after(p))
    }

    /// The prefix one segment further, for the first pointer whose next
    /// segment `matches`.
    fn child(&self, matches: impl Fn(&str) -> bool) -> Option<&'p str> {
        let at = self.prefix.len();
        self.paths.iter().find_map(|p| {
            let seg = self.after(p)?;
            matches(seg).then(|| &p[..at + 1 + seg.len()])
        })
    }
}

/// Whether `p` starts with `prefix`, compared byte by byte in place: the
/// prefixes are a few bytes, and a call to `memcmp` for each key of each
/// object was a visible share of a step's cost.
fn same(p: &str, prefix: &str) -> bool {
    p.len() >= prefix.len()
        && p.as_bytes()
            .iter()
            .zip(prefix.as_bytes())
            .all(|(a, b)| a == b)
}

/// Whether the escaped segment `seg` names the key `key`.
fn names(seg: &str, key: &str) -> bool {
    match seg.contains('~') {
        true => seg.replace("~1", "/").replace("~0", "~") == key,
        false => seg == key,
    }
}

/// The array index segment `seg` names (digits, no leading zero, as
/// serde_json's `pointer` reads it).
fn index(seg: &str) -> Option<usize> {
    if seg.starts_with('+') || (seg.len() > 1 && seg.starts_with('0')) {
        return None;
    }
    seg.parse().ok()
}

impl<'de> DeserializeSeed<'de> for Prune<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self.whole() {
            return Value::deserialize(d);
        }
        d.deserialize_any(self)
    }
}

/// A key: `Some((key, prefix))` when a pointer goes through it.
struct Key<'a, 'p>(&'a Prune<'p>);

impl<'de, 'p> DeserializeSeed<'de> for Key<'_, 'p> {
    type Value = Option<(String, &'p str)>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, 'p> Visitor<'de> for Key<'_, 'p> {
    type Value = Option<(String, &'p str)>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
        Ok(self
            .0
            .child(|seg| names(seg, key))
            .map(|prefix| (key.to_string(), prefix)))
    }
}

impl<'de> Visitor<'de> for Prune<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }

    // A scalar where a pointer wants to go further: nothing there.
    fn visit_bool<E>(self, _: bool) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_str<E>(self, _: &str) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(kept) = m.next_key_seed(Key(&self))? {
            match kept {
                Some((key, prefix)) => {
                    let v = m.next_value_seed(Prune { prefix, ..self })?;
                    out.insert(key, v);
                }
                None => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Value, A::Error> {
        // Elements after the last one wanted are skipped without a place.
        let last = self.next().filter_map(index).max();
        let mut out = Vec::new();
        let mut i = 0;
        loop {
            let kept = self.child(|seg| index(seg) == Some(i));
            match kept {
                Some(prefix) => match s.next_element_seed(Prune { prefix, ..self })? {
                    Some(v) => out.push(v),
                    None => break,
                },
                None => match s.next_element::<IgnoredAny>()? {
                    Some(_) if last.is_some_and(|l| i < l) => out.push(Value::Null),
                    Some(_) => {}
                    None => break,
                },
            }
            i += 1;
        }
        Ok(Value::Array(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What each pointer finds in the pruned document is what it finds
    /// in the whole one.
    #[test]
    fn a_pruned_document_answers_its_pointers_as_the_whole_one() {
        let body = br#"{"a":[{"b/c":1,"d~e":[2,3]},"x",{"f":{"g":null}}],"":4,"01":5,"h":"i","n":[0,1,2,3,4,5]}"#;
        let whole: Value = serde_json::from_slice(body).unwrap();
        let pointers = [
            "",
            "/a",
            "/a/0",
            "/a/1",
            "/a/2/f/g",
            "/a/0/b~1c",
            "/a/0/d~0e/1",
            "/a/01",
            "/a/+1",
            "/",
            "/01",
            "/a/-",
            "/x/y",
            "/h/0",
            "/n/4",
            "/a/2/f",
        ];
        for p in pointers {
            let pruned = parse(body, &[p]).unwrap();
            assert_eq!(crate::response::at(&pruned, p), whole.pointer(p), "{p}");
        }
        // Several at once.
        let pruned = parse(body, &pointers).unwrap();
        for p in pointers {
            assert_eq!(crate::response::at(&pruned, p), whole.pointer(p), "{p}");
        }
        // Not JSON, or JSON followed by more: none, as a whole parse.
        assert_eq!(parse(b"<html>", &["/a"]), None);
        assert_eq!(parse(br#"{"a":1} x"#, &["/a"]), None);
        assert_eq!(parse(br#"{"a":1,"b":[1,}"#, &["/a"]), None);
    }
}
