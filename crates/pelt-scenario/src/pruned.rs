//! The values a step's JSON pointers point at in a response body, found
//! in one pass of serde_json's parser: every field and element no
//! pointer goes through is skipped unbuilt (`IgnoredAny`, no
//! allocation), and only the value at the end of each pointer is built.
//! Extraction and checks read a value or two of a body: building the
//! whole document (a map and a string per field) was the largest part
//! of a step's cost beyond a plain request's, and building the pruned
//! document along each pointer's path (a map, a key and a list per level)
//! the largest left after that (docs/BENCHMARKS.md). What each pointer
//! finds is what `Value::pointer` finds in the whole document: a later
//! duplicate key wins, as it does in a map. The body must still be valid
//! JSON throughout, or nothing is found, as the whole document's parse
//! would fail.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::cell::RefCell;

/// The value each of `paths` (RFC 6901 pointers, escaped) points at in
/// `body`, in order (`None` where there is none); `None` when `body` is
/// not JSON.
pub(crate) fn find(body: &[u8], paths: &[&str]) -> Option<Vec<Option<Value>>> {
    let found = RefCell::new(vec![None; paths.len()]);
    let mut de = serde_json::Deserializer::from_slice(body);
    Find {
        paths,
        prefix: "",
        found: &found,
    }
    .deserialize(&mut de)
    .ok()?;
    de.end().ok()?;
    Some(found.into_inner())
}

/// Where the parse is: the pointers, the escaped prefix (a slice of one
/// of them) that leads here, and what was found so far. Escaping is
/// canonical (`~0`, `~1`), so every pointer through here starts with
/// these very bytes.
#[derive(Clone, Copy)]
struct Find<'p, 'f> {
    paths: &'p [&'p str],
    prefix: &'p str,
    found: &'f RefCell<Vec<Option<Value>>>,
}

impl<'p> Find<'p, '_> {
    /// Whether pointer `p` ends here.
    fn ends_here(&self, p: &str) -> bool {
        p.len() == self.prefix.len() && same(p, self.prefix)
    }

    /// The next segment of pointer `p` if it goes through here.
    fn after(&self, p: &'p str) -> Option<&'p str> {
        let at = self.prefix.len();
        if p.len() <= at || p.as_bytes()[at] != b'/' || !same(p, self.prefix) {
            return None;
        }
        let rest = &p[at + 1..];
        // A byte search: `str::find(char)` showed in the profile.
        let end = rest.bytes().position(|b| b == b'/').unwrap_or(rest.len());
        Some(&rest[..end])
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

    /// Forgets what was found here and below: a later duplicate key's
    /// value replaces an earlier one's, as in a map.
    fn forget(&self) {
        let mut found = self.found.borrow_mut();
        for (i, p) in self.paths.iter().enumerate() {
            if self.ends_here(p) || self.after(p).is_some() {
                found[i] = None;
            }
        }
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
    match seg.as_bytes().contains(&b'~') {
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

impl<'de> DeserializeSeed<'de> for Find<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let ends = self.paths.iter().any(|p| self.ends_here(p));
        if !ends {
            // Only pointers going further (or none: the whole body is
            // still checked to be JSON).
            return d.deserialize_any(self);
        }
        // A pointer ends here: this value is built whole, and pointers
        // that go further find their values in it (rare).
        let v = Value::deserialize(d)?;
        let mut found = self.found.borrow_mut();
        for (i, p) in self.paths.iter().enumerate() {
            if self.ends_here(p) {
                found[i] = Some(v.clone());
            } else if self.after(p).is_some() {
                found[i] = at(&v, &p[self.prefix.len()..]).cloned();
            }
        }
        Ok(())
    }
}

/// A key: the prefix one segment further when a pointer goes through it.
struct Key<'a, 'p, 'f>(&'a Find<'p, 'f>);

impl<'de, 'p> DeserializeSeed<'de> for Key<'_, 'p, '_> {
    type Value = Option<&'p str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, 'p> Visitor<'de> for Key<'_, 'p, '_> {
    type Value = Option<&'p str>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
        Ok(self.0.child(|seg| names(seg, key)))
    }
}

impl<'de> Visitor<'de> for Find<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }

    // A scalar where a pointer wants to go further: nothing there.
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        while let Some(kept) = m.next_key_seed(Key(&self))? {
            match kept {
                Some(prefix) => {
                    let here = Find { prefix, ..self };
                    here.forget();
                    m.next_value_seed(here)?;
                }
                None => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            let more = match self.child(|seg| index(seg) == Some(i)) {
                Some(prefix) => s.next_element_seed(Find { prefix, ..self })?.is_some(),
                None => s.next_element::<IgnoredAny>()?.is_some(),
            };
            if !more {
                return Ok(());
            }
            i += 1;
        }
    }
}

/// The value at RFC 6901 pointer `p` in `v`, as `Value::pointer` finds
/// it, without its two allocations per segment (it unescapes every
/// segment with `replace`: a visible share of a step's cost, measured in
/// docs/BENCHMARKS.md); a segment is copied only when it holds a `~`.
pub(crate) fn at<'v>(v: &'v serde_json::Value, p: &str) -> Option<&'v serde_json::Value> {
    if p.is_empty() {
        return Some(v);
    }
    let mut cur = v;
    for seg in p.strip_prefix('/')?.split('/') {
        let unescaped;
        let key = match seg.contains('~') {
            true => {
                unescaped = seg.replace("~1", "/").replace("~0", "~");
                unescaped.as_str()
            }
            false => seg,
        };
        cur = match cur {
            serde_json::Value::Object(m) => m.get(key)?,
            serde_json::Value::Array(a) => {
                // As serde_json: digits only, no leading zero.
                if key.starts_with('+') || (key.len() > 1 && key.starts_with('0')) {
                    return None;
                }
                a.get(key.parse::<usize>().ok()?)?
            }
            _ => return None,
        };
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What each pointer finds is what it finds in the whole document.
    #[test]
    fn each_pointer_finds_what_it_finds_in_the_whole_document() {
        let body = br#"{"a":[{"b/c":1,"d~e":[2,3]},"x",{"f":{"g":null}}],"":4,"01":5,"h":"i","n":[0,1,2,3,4,5],"dup":{"k":1},"dup":{"j":2}}"#;
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
            "/dup/k",
            "/dup/j",
            "/dup",
        ];
        for p in pointers {
            let found = find(body, &[p]).unwrap();
            assert_eq!(found[0].as_ref(), whole.pointer(p), "{p}");
        }
        // Several at once, one inside another's value among them.
        let found = find(body, &pointers).unwrap();
        for (p, v) in pointers.iter().zip(&found) {
            assert_eq!(v.as_ref(), whole.pointer(p), "{p}");
        }
        // Not JSON, or JSON followed by more: none, as a whole parse.
        assert_eq!(find(b"<html>", &["/a"]), None);
        assert_eq!(find(br#"{"a":1} x"#, &["/a"]), None);
        assert_eq!(find(br#"{"a":1,"b":[1,}"#, &["/a"]), None);
        assert_eq!(find(br#"{"a":1,"b":[1,}"#, &[]), None);
        assert_eq!(find(br#"[1]"#, &[]), Some(vec![]));
    }
}
