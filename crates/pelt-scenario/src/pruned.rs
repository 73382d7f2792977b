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
//!
//! A step's pointers are compiled once, before the run ([`Pointers`]):
//! split into segments, unescaped, each segment's array index read, and
//! sorted, so the pointers through any one value are neighbours. A key
//! is then compared with the next segment of the few pointers that go
//! through its object, as it is (no prefix comparison, no unescaping, no
//! allocation per response).

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::cell::Cell;

/// A step's JSON pointers (RFC 6901, escaped), compiled once.
#[derive(Debug, Clone, Default)]
pub struct Pointers {
    /// How many pointers were given (those that can never match too).
    given: usize,
    /// The pointers that can match (`""` or starting with `/`), as
    /// segments, sorted: the pointers through a value are a run.
    sorted: Box<[Box<[Seg]>]>,
    /// Each sorted pointer's place in the order given.
    place: Box<[usize]>,
}

/// One segment of a pointer: the key, unescaped, and the array index it
/// names (digits, no leading zero, as serde_json's `pointer` reads it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Seg {
    key: Box<str>,
    index: Option<usize>,
}

impl Pointers {
    /// Compiles `paths`; the values found come back in their order.
    pub fn new(paths: &[&str]) -> Pointers {
        let mut compiled: Vec<(Box<[Seg]>, usize)> = paths
            .iter()
            .enumerate()
            .filter_map(|(place, p)| Some((segments(p)?, place)))
            .collect();
        compiled.sort();
        Pointers {
            given: paths.len(),
            place: compiled.iter().map(|(_, place)| *place).collect(),
            sorted: compiled.into_iter().map(|(segs, _)| segs).collect(),
        }
    }

    /// How many pointers there are.
    pub fn len(&self) -> usize {
        self.given
    }

    /// Whether there are none (the body need not be parsed).
    pub fn is_empty(&self) -> bool {
        self.given == 0
    }
}

/// Pointer `p`'s segments; `None` if it can never match (not empty and
/// not starting with `/`).
fn segments(p: &str) -> Option<Box<[Seg]>> {
    if p.is_empty() {
        return Some(Box::new([]));
    }
    let segs = p.strip_prefix('/')?.split('/').map(|seg| {
        let key = match seg.contains('~') {
            true => seg.replace("~1", "/").replace("~0", "~"),
            false => seg.to_string(),
        };
        Seg {
            index: index(&key),
            key: key.into(),
        }
    });
    Some(segs.collect())
}

/// The values `pointers` point at in `body`, each at its place in the
/// order given into `found` (`None` where there is none; `found` holds
/// one per pointer); `false` when `body` is not JSON.
pub(crate) fn find(body: &[u8], pointers: &Pointers, found: &mut [Option<Value>]) -> bool {
    assert_eq!(found.len(), pointers.given, "one place per pointer");
    found.fill(None);
    let cells = Cell::from_mut(found).as_slice_of_cells();
    let mut de = serde_json::Deserializer::from_slice(body);
    let all = Find {
        pointers,
        lo: 0,
        hi: pointers.sorted.len(),
        depth: 0,
        found: cells,
    };
    all.deserialize(&mut de).is_ok() && de.end().is_ok()
}

/// Where the parse is: the sorted pointers `lo..hi` go through here,
/// all alike in their first `depth` segments (those that end here
/// first), and where what each finds goes.
#[derive(Clone, Copy)]
struct Find<'p, 'f> {
    pointers: &'p Pointers,
    lo: usize,
    hi: usize,
    depth: usize,
    found: &'f [Cell<Option<Value>>],
}

impl Find<'_, '_> {
    fn seg(&self, i: usize) -> &[Seg] {
        &self.pointers.sorted[i]
    }

    fn set(&self, i: usize, v: Option<Value>) {
        self.found[self.pointers.place[i]].set(v);
    }

    /// The first pointer here that goes further (those before it end
    /// here).
    fn further(&self) -> usize {
        (self.lo..self.hi)
            .find(|&i| self.seg(i).len() > self.depth)
            .unwrap_or(self.hi)
    }

    /// The pointers whose next segment `matches` (a run: they are
    /// sorted), one segment further; `None` if none.
    fn child(&self, matches: impl Fn(&Seg) -> bool) -> Option<Self> {
        let d = self.depth;
        let start = (self.further()..self.hi).find(|&i| matches(&self.seg(i)[d]))?;
        let first = &self.seg(start)[d];
        let end = (start + 1..self.hi)
            .find(|&i| self.seg(i)[d] != *first)
            .unwrap_or(self.hi);
        Some(Find {
            lo: start,
            hi: end,
            depth: d + 1,
            ..*self
        })
    }

    /// Forgets what was found here and below: a later duplicate key's
    /// value replaces an earlier one's, as in a map.
    fn forget(&self) {
        for i in self.lo..self.hi {
            self.set(i, None);
        }
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
        let further = self.further();
        if further == self.lo {
            // Only pointers going further (or none: the whole body is
            // still checked to be JSON).
            return d.deserialize_any(self);
        }
        // A pointer ends here: this value is built whole, and pointers
        // that go further find their values in it (rare).
        let v = Value::deserialize(d)?;
        for i in further..self.hi {
            self.set(i, at_segs(&v, &self.seg(i)[self.depth..]).cloned());
        }
        // The last one that ends here takes the value itself.
        for i in self.lo..further - 1 {
            self.set(i, Some(v.clone()));
        }
        self.set(further - 1, Some(v));
        Ok(())
    }
}

/// A key: the pointers one segment further when any goes through it.
struct Key<'a, 'p, 'f>(&'a Find<'p, 'f>);

impl<'de, 'p, 'f> DeserializeSeed<'de> for Key<'_, 'p, 'f> {
    type Value = Option<Find<'p, 'f>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, 'p, 'f> Visitor<'de> for Key<'_, 'p, 'f> {
    type Value = Option<Find<'p, 'f>>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
        Ok(self.0.child(|seg| *seg.key == *key))
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
                Some(here) => {
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
            let more = match self.child(|seg| seg.index == Some(i)) {
                Some(here) => s.next_element_seed(here)?.is_some(),
                None => s.next_element::<IgnoredAny>()?.is_some(),
            };
            if !more {
                return Ok(());
            }
            i += 1;
        }
    }
}

/// The value at the compiled segments `segs` in `v`.
fn at_segs<'v>(v: &'v Value, segs: &[Seg]) -> Option<&'v Value> {
    segs.iter().try_fold(v, |cur, seg| match cur {
        Value::Object(m) => m.get(&*seg.key),
        Value::Array(a) => a.get(seg.index?),
        _ => None,
    })
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

    /// What `paths` find in `body`, compiled as a step's are.
    fn find_all(body: &[u8], paths: &[&str]) -> Option<Vec<Option<Value>>> {
        let mut found = vec![Some(Value::Null); paths.len()];
        find(body, &Pointers::new(paths), &mut found).then_some(found)
    }

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
            "a",
            "/a/0/b~1c",
            "/n/04",
            "/n/-1",
        ];
        for p in pointers {
            let found = find_all(body, &[p]).unwrap();
            assert_eq!(found[0].as_ref(), whole.pointer(p), "{p}");
        }
        // Several at once, one inside another's value among them.
        let found = find_all(body, &pointers).unwrap();
        for (p, v) in pointers.iter().zip(&found) {
            assert_eq!(v.as_ref(), whole.pointer(p), "{p}");
        }
        // In any order: each comes back at its own place.
        let reversed: Vec<&str> = pointers.iter().rev().copied().collect();
        let found = find_all(body, &reversed).unwrap();
        for (p, v) in reversed.iter().zip(&found) {
            assert_eq!(v.as_ref(), whole.pointer(p), "{p}");
        }
        // Not JSON, or JSON followed by more: none, as a whole parse.
        assert_eq!(find_all(b"<html>", &["/a"]), None);
        assert_eq!(find_all(br#"{"a":1} x"#, &["/a"]), None);
        assert_eq!(find_all(br#"{"a":1,"b":[1,}"#, &["/a"]), None);
        assert_eq!(find_all(br#"{"a":1,"b":[1,}"#, &[]), None);
        assert_eq!(find_all(br#"[1]"#, &[]), Some(vec![]));
    }
}
