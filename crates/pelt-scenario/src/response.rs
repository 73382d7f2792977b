//! What a step does with its response: extract values into the virtual
//! user's variables (a JSON pointer or small path, a regex group on the
//! body, a header, a cookie) and check it (status in a set, body
//! contains, a JSON value equals or matches). Compiled once; applied to
//! the response head and body bytes the engine copied.

use crate::pruned::at;
pub use crate::pruned::Pointers;
use regex::bytes::Regex;

/// A response as a step sees it.
#[derive(Debug, Clone, Copy)]
pub struct Reply<'a> {
    /// The final status code.
    pub status: u16,
    /// The head: status line and headers, as received.
    pub head: &'a [u8],
    /// The body, its transfer framing removed (the engine decodes
    /// HTTP/1.1's chunks as they arrive; see [`dechunked`]).
    pub body: &'a [u8],
}

/// Where an extracted value comes from.
#[derive(Debug, Clone)]
pub enum From {
    /// A JSON value at a pointer (RFC 6901) in the body; strings without
    /// quotes, anything else as JSON text.
    Json(String),
    /// `json = "/items/*/id"`: of the elements of the JSON list at `list`
    /// whose every `filter` pointer holds its value (`where`), the value
    /// at `item` in one of them, or in all (`pick`).
    JsonList {
        /// The list's pointer (before the `*`).
        list: String,
        /// The value's pointer within an element (after the `*`).
        item: String,
        /// `where`: pointers within an element, and the value each must be.
        filter: Vec<(String, serde_json::Value)>,
        /// Which matching element.
        pick: PickFrom,
    },
    /// A regex's capture group (1 unless the regex has none) in the body.
    Regex(Regex, usize),
    /// A response header's value (the first, by name, any case).
    Header(String),
    /// A `Set-Cookie` value by cookie name.
    Cookie(String),
}

/// Which of a list's matching elements an extraction takes (`pick`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickFrom {
    /// The first (`"first"`, the default).
    First,
    /// Any, each equally likely, drawn by the user's own random numbers
    /// (Locust's `random.choice`).
    Random,
    /// Every one, joined by commas (`1,2,3`).
    All,
}

impl PickFrom {
    /// Parses `pick`.
    pub fn parse(s: &str) -> Result<PickFrom, String> {
        match s {
            "first" => Ok(PickFrom::First),
            "random" => Ok(PickFrom::Random),
            "all" => Ok(PickFrom::All),
            other => Err(format!(
                "pick {other:?}: use \"first\", \"random\" or \"all\""
            )),
        }
    }
}

/// The value `from` takes from `list`, the JSON value at its list's
/// pointer (`None`: no element matched, or it is not a list). `index(n)` draws a number below `n` for `random`.
fn from_list(
    list: Option<&serde_json::Value>,
    (item, filter, pick): (&str, &[(String, serde_json::Value)], PickFrom),
    index: &mut impl FnMut(usize) -> usize,
) -> Option<Vec<u8>> {
    let elements = list?.as_array()?;
    let matching = || {
        elements
            .iter()
            .filter(|el| filter.iter().all(|(p, v)| at(el, p) == Some(v)))
            .filter_map(|el| at(el, item))
    };
    let chosen = match pick {
        PickFrom::First => matching().next()?,
        // Two passes, no allocation: count, then take the one drawn.
        PickFrom::Random => {
            let n = matching().count();
            if n == 0 {
                return None;
            }
            matching().nth(index(n))?
        }
        PickFrom::All => {
            let mut out = Vec::new();
            for (i, v) in matching().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(&value_bytes(v));
            }
            // A list with no matching element is a list of none (a
            // `for_each` over it sends nothing), not a missing value.
            return Some(out);
        }
    };
    Some(value_bytes(chosen).into_owned())
}

/// A JSON value as a variable holds it: a string without its quotes,
/// anything else as JSON text.
fn value_bytes(v: &serde_json::Value) -> std::borrow::Cow<'_, [u8]> {
    match v {
        serde_json::Value::String(s) => s.as_bytes().into(),
        other => other.to_string().into_bytes().into(),
    }
}

/// Calls `f` with a JSON value as a variable holds it ([`value_bytes`]),
/// a number written on the stack (the common extracted id) rather than
/// into a new string.
fn with_value_bytes<R>(v: &serde_json::Value, f: impl FnOnce(&[u8]) -> R) -> R {
    use std::io::Write;
    if let serde_json::Value::Number(n) = v {
        let mut buf = [0u8; 64];
        let mut room = &mut buf[..];
        if write!(room, "{n}").is_ok() {
            let len = 64 - room.len();
            return f(&buf[..len]);
        }
    }
    f(&value_bytes(v))
}

/// One extraction: a variable set from the response.
#[derive(Debug, Clone)]
pub struct Extraction {
    /// The variable's name.
    pub name: String,
    /// Its slot in the virtual user's variables.
    pub slot: usize,
    /// Where the value comes from.
    pub from: From,
}

/// A step's checks; all must pass.
#[derive(Debug, Clone, Default)]
pub struct Checks {
    /// The status must be one of these (empty: any).
    pub status: Vec<u16>,
    /// The body must contain each of these.
    pub body_contains: Vec<Vec<u8>>,
    /// The JSON value at each pointer must equal the value.
    pub json_equals: Vec<(String, serde_json::Value)>,
    /// The JSON value at each pointer, as text, must match the regex.
    pub json_matches: Vec<(String, Regex)>,
}

impl Checks {
    /// Whether there is nothing to check.
    pub fn is_empty(&self) -> bool {
        self.status.is_empty()
            && self.body_contains.is_empty()
            && self.json_equals.is_empty()
            && self.json_matches.is_empty()
    }
}

/// Why a step failed after a complete response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepFailure {
    /// A value to extract was not there.
    Extract(String),
    /// A check did not pass.
    Check(String),
}

/// The body with chunked framing removed, when the head says chunked.
pub fn dechunked<'a>(head: &[u8], body: &'a [u8], scratch: &'a mut Vec<u8>) -> &'a [u8] {
    let chunked = header(head, "transfer-encoding")
        .is_some_and(|v| v.windows(7).any(|w| w.eq_ignore_ascii_case(b"chunked")));
    if !chunked {
        return body;
    }
    scratch.clear();
    let mut rest = body;
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&rest[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok());
        let Some(size) = size.filter(|&n| n > 0) else {
            break;
        };
        let start = eol + 2;
        let end = (start + size).min(rest.len());
        scratch.extend_from_slice(&rest[start..end]);
        rest = &rest[(end + 2).min(rest.len())..];
    }
    scratch
}

/// The first header `name`'s value (trimmed), any case.
pub fn header<'a>(head: &'a [u8], name: &str) -> Option<&'a [u8]> {
    headers(head, name).next()
}

fn headers<'a, 'n>(head: &'a [u8], name: &'n str) -> impl Iterator<Item = &'a [u8]> + use<'a, 'n> {
    let name = name.as_bytes();
    // A field's name ends at its colon, with no space before it (RFC
    // 9112 5.1): a line is compared at the name's length, never scanned
    // for its colon (every step's response is asked).
    head.split(|&b| b == b'\n')
        .skip(1)
        .filter(move |line| {
            line.get(name.len()) == Some(&b':') && line[..name.len()].eq_ignore_ascii_case(name)
        })
        .map(move |line| line[name.len() + 1..].trim_ascii())
}

/// The start of `text`, for an example message.
fn excerpt(text: &[u8]) -> String {
    let cut = text.len().min(80);
    let mut s = String::from_utf8_lossy(&text[..cut]).replace(['\r', '\n'], " ");
    if text.len() > cut {
        s.push('…');
    }
    s
}

/// The JSON pointers `extractions` (a list's pointer for a list) and
/// `checks` (`json_equals`', then `json_matches`') read, in that order,
/// compiled once for [`apply`].
pub fn pointers(extractions: &[Extraction], checks: &Checks) -> Pointers {
    let mut paths: Vec<&str> = Vec::new();
    for e in extractions {
        match &e.from {
            From::Json(p) => paths.push(p),
            From::JsonList { list, .. } => paths.push(list),
            _ => {}
        }
    }
    paths.extend(checks.json_equals.iter().map(|(p, _)| p.as_str()));
    paths.extend(checks.json_matches.iter().map(|(p, _)| p.as_str()));
    Pointers::new(&paths)
}

/// How many pointers' values [`apply`] keeps on the stack (more: in a
/// new list).
const ON_STACK: usize = 4;

/// Applies `extractions` then `checks` to `reply`; each value found goes
/// into `set(slot, value)`; `index(n)` draws a number below `n` (a
/// `pick = "random"`); `pointers` are theirs ([`pointers`]). The first
/// failure ends it.
pub fn apply(
    step: &str,
    reply: Reply<'_>,
    (extractions, checks, pointers): (&[Extraction], &Checks, &Pointers),
    mut set: impl FnMut(usize, &[u8]),
    mut index: impl FnMut(usize) -> usize,
) -> Result<(), StepFailure> {
    // The values the pointers point at, in their order. `is_json`: the
    // body was parsed (it was needed) and is JSON.
    let mut on_stack: [Option<serde_json::Value>; ON_STACK] = Default::default();
    let mut on_heap = Vec::new();
    let found: &mut [Option<serde_json::Value>] = match pointers.len() {
        n if n <= ON_STACK => &mut on_stack[..n],
        n => {
            on_heap.resize(n, None);
            &mut on_heap
        }
    };
    let is_json = !pointers.is_empty() && crate::pruned::find(reply.body, pointers, found);
    let found = &*found;
    let json_at = |i: usize| found.get(i).filter(|_| is_json).and_then(Option::as_ref);
    // The next pointer's place in `json`.
    let mut next = 0;
    if !checks.status.is_empty() && !checks.status.contains(&reply.status) {
        return Err(StepFailure::Check(format!(
            "step '{step}': status {} is not one of {:?}",
            reply.status, checks.status
        )));
    }
    for e in extractions {
        let found: Option<std::borrow::Cow<'_, [u8]>> = match &e.from {
            From::Json(_) => {
                next += 1;
                if let Some(v) = json_at(next - 1) {
                    // A number is written out without allocating.
                    with_value_bytes(v, |b| set(e.slot, b));
                    continue;
                }
                None
            }
            From::JsonList {
                item, filter, pick, ..
            } => {
                next += 1;
                let list = json_at(next - 1);
                from_list(list, (item, filter, *pick), &mut index).map(Into::into)
            }
            From::Regex(re, group) => re
                .captures(reply.body)
                .and_then(|c| c.get(*group))
                .map(|m| m.as_bytes().into()),
            From::Header(name) => header(reply.head, name).map(Into::into),
            From::Cookie(name) => headers(reply.head, "set-cookie").find_map(|v| {
                let pair = v.split(|&b| b == b';').next()?;
                let eq = pair.iter().position(|&b| b == b'=')?;
                (pair[..eq].trim_ascii() == name.as_bytes())
                    .then(|| pair[eq + 1..].trim_ascii().into())
            }),
        };
        match found {
            Some(v) => set(e.slot, &v),
            None => {
                let whence = match &e.from {
                    From::Json(_) | From::JsonList { .. } if !is_json => {
                        format!("the body is not JSON (it starts: {})", excerpt(reply.body))
                    }
                    From::Json(p) => format!(
                        "nothing at JSON pointer {p} (the body starts: {})",
                        excerpt(reply.body)
                    ),
                    From::JsonList { list, item, .. } => format!(
                        "no element of the list at {list} has {} (with its where) (the body starts: {})",
                        if item.is_empty() { "a value" } else { item },
                        excerpt(reply.body)
                    ),
                    From::Regex(re, _) => format!(
                        "regex {} did not match (the body starts: {})",
                        re.as_str(),
                        excerpt(reply.body)
                    ),
                    From::Header(h) => format!("no {h} header"),
                    From::Cookie(c) => format!("no Set-Cookie for {c}"),
                };
                return Err(StepFailure::Extract(format!(
                    "step '{step}': no value for '{}' (status {}): {whence}",
                    e.name, reply.status
                )));
            }
        }
    }
    for needle in &checks.body_contains {
        if !reply
            .body
            .windows(needle.len().max(1))
            .any(|w| w == &needle[..])
        {
            return Err(StepFailure::Check(format!(
                "step '{step}': body does not contain {:?} (it starts: {})",
                String::from_utf8_lossy(needle),
                excerpt(reply.body)
            )));
        }
    }
    for (p, want) in &checks.json_equals {
        next += 1;
        let got = json_at(next - 1);
        if got != Some(want) {
            return Err(StepFailure::Check(format!(
                "step '{step}': JSON at {p} is {} where {want} was expected",
                got.map_or("missing".to_string(), ToString::to_string)
            )));
        }
    }
    for (p, re) in &checks.json_matches {
        next += 1;
        let text: Option<std::borrow::Cow<'_, str>> = json_at(next - 1).map(|v| match v {
            serde_json::Value::String(s) => s.as_str().into(),
            other => other.to_string().into(),
        });
        if !text.as_deref().is_some_and(|t| re.is_match(t.as_bytes())) {
            return Err(StepFailure::Check(format!(
                "step '{step}': JSON at {p} ({}) does not match {}",
                text.as_deref().unwrap_or("missing"),
                re.as_str()
            )));
        }
    }
    Ok(())
}

/// A JSON pointer from a pointer (`/items/0/id`) or a small path
/// (`items[0].id`, `$.items[0].id`); `Err` says why it can never match.
pub fn json_pointer(path: &str) -> Result<String, String> {
    if path.is_empty() {
        return Ok(String::new());
    }
    if path.starts_with('/') {
        // RFC 6901: `~` only as `~0` or `~1`.
        let b = path.as_bytes();
        for (i, &c) in b.iter().enumerate() {
            if c == b'~' && !matches!(b.get(i + 1), Some(b'0' | b'1')) {
                return Err(format!("JSON pointer {path} has a '~' not followed by 0 or 1 (write ~0 for ~, ~1 for /)"));
            }
        }
        return Ok(path.to_string());
    }
    let bad = |why: &str| {
        Err(format!("JSON path {path} cannot match: {why}; write a pointer like /items/0/id or a path like items[0].id"))
    };
    let rest = path
        .strip_prefix("$.")
        .or_else(|| path.strip_prefix('$'))
        .unwrap_or(path);
    let mut out = String::new();
    for seg in rest.split('.') {
        if seg.is_empty() {
            return bad("an empty name between dots");
        }
        let (name, mut idx) = match seg.find('[') {
            Some(i) => (&seg[..i], &seg[i..]),
            None => (seg, ""),
        };
        if !name.is_empty() {
            out.push('/');
            out.push_str(&name.replace('~', "~0").replace('/', "~1"));
        }
        while !idx.is_empty() {
            let Some(close) = idx.find(']') else {
                return bad("a '[' without ']'");
            };
            let n = &idx[1..close];
            // `[*]`: every element (an extraction's list, with pick).
            if n != "*" && (n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit())) {
                return bad("an index that is not a number");
            }
            out.push('/');
            out.push_str(n);
            idx = &idx[close + 1..];
            if !idx.is_empty() && !idx.starts_with('[') {
                return bad("text after ']'");
            }
        }
        if name.is_empty() && !seg.starts_with('[') {
            return bad("an empty name");
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pointer_finds_what_serde_json_finds() {
        let v = serde_json::json!({"a": [{"b/c": 1, "d~e": 2}, 3], "": 4, "01": 5});
        for p in [
            "",
            "/a",
            "/a/0",
            "/a/1",
            "/a/2",
            "/a/0/b~1c",
            "/a/0/d~0e",
            "/a/01",
            "/a/+1",
            "/",
            "/01",
            "/a/-",
            "a",
            "/x/y",
        ] {
            assert_eq!(at(&v, p), v.pointer(p), "{p}");
        }
    }

    const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nSet-Cookie: a=1; Path=/\r\nSet-Cookie: session=xyz; HttpOnly\r\nX-Token: t1\r\n\r\n";

    fn run(
        body: &[u8],
        ex: &[Extraction],
        checks: &Checks,
    ) -> (Result<(), StepFailure>, Vec<(usize, String)>) {
        let mut got = Vec::new();
        let r = apply(
            "s",
            Reply {
                status: 200,
                head: HEAD,
                body,
            },
            (ex, checks, &pointers(ex, checks)),
            |slot, v| got.push((slot, String::from_utf8_lossy(v).into_owned())),
            |n| n - 1,
        );
        (r, got)
    }

    #[test]
    fn extracts_json_regex_header_and_cookie() {
        let ex = vec![
            Extraction {
                name: "id".into(),
                slot: 0,
                from: From::Json(json_pointer("items[1].id").unwrap()),
            },
            Extraction {
                name: "n".into(),
                slot: 1,
                from: From::Json("/items/0/name".into()),
            },
            Extraction {
                name: "r".into(),
                slot: 2,
                from: From::Regex(Regex::new(r#""name":"(\w+)""#).unwrap(), 1),
            },
            Extraction {
                name: "h".into(),
                slot: 3,
                from: From::Header("x-token".into()),
            },
            Extraction {
                name: "c".into(),
                slot: 4,
                from: From::Cookie("session".into()),
            },
        ];
        let (r, got) = run(
            br#"{"items":[{"id":1,"name":"a"},{"id":22}]}"#,
            &ex,
            &Checks::default(),
        );
        assert_eq!(r, Ok(()));
        let vals: Vec<_> = got.into_iter().map(|(_, v)| v).collect();
        assert_eq!(vals, ["22", "a", "a", "t1", "xyz"]);
    }

    #[test]
    fn a_missing_value_is_an_extract_failure_with_an_example() {
        let ex = vec![Extraction {
            name: "id".into(),
            slot: 0,
            from: From::Json("/items/5/id".into()),
        }];
        let (r, _) = run(br#"{"items":[]}"#, &ex, &Checks::default());
        let Err(StepFailure::Extract(m)) = r else {
            panic!("{r:?}")
        };
        assert!(
            m.contains("no value for 'id'") && m.contains("/items/5/id"),
            "{m}"
        );
    }

    #[test]
    fn checks_fail_as_checks() {
        let checks = Checks {
            status: vec![201],
            ..Checks::default()
        };
        assert!(matches!(
            run(b"{}", &[], &checks).0,
            Err(StepFailure::Check(_))
        ));
        let checks = Checks {
            body_contains: vec![b"hello".to_vec()],
            ..Checks::default()
        };
        assert!(matches!(run(b"oh hello", &[], &checks).0, Ok(())));
        assert!(matches!(
            run(b"bye", &[], &checks).0,
            Err(StepFailure::Check(_))
        ));
        let checks = Checks {
            json_equals: vec![("/ok".into(), serde_json::json!(true))],
            json_matches: vec![("/user".into(), Regex::new("^al").unwrap())],
            ..Checks::default()
        };
        assert!(matches!(
            run(br#"{"ok":true,"user":"alice"}"#, &[], &checks).0,
            Ok(())
        ));
        assert!(matches!(
            run(br#"{"ok":false,"user":"alice"}"#, &[], &checks).0,
            Err(StepFailure::Check(_))
        ));
        assert!(matches!(
            run(br#"{"ok":true,"user":"bob"}"#, &[], &checks).0,
            Err(StepFailure::Check(_))
        ));
    }

    #[test]
    fn paths_become_pointers_or_say_why_they_cannot_match() {
        assert_eq!(json_pointer("$.a.b[2][0].c").unwrap(), "/a/b/2/0/c");
        assert_eq!(json_pointer("/a/0").unwrap(), "/a/0");
        assert!(json_pointer("a..b").is_err());
        assert!(json_pointer("a[x]").is_err());
        assert!(json_pointer("/a~2").is_err());
    }

    #[test]
    fn chunked_bodies_are_decoded() {
        let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        let mut scratch = Vec::new();
        assert_eq!(
            dechunked(head, b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", &mut scratch),
            b"abcde"
        );
    }
}
