//! Values a response handed out and a later request sent back: found in
//! the recording, named, and taken back with an extraction checked
//! against the recorded response.

use super::quote;
use std::collections::BTreeMap;

pub(super) fn url_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16)
                {
                    Ok(v) => {
                        out.push(v);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A plain variable name from `hint`.
pub(super) fn var_name(hint: &str, taken: &mut BTreeMap<String, usize>) -> String {
    let mut base: String = hint
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
        base = format!("v_{base}");
    }
    let n = taken.entry(base.clone()).or_insert(0);
    *n += 1;
    if *n == 1 {
        base
    } else {
        format!("{base}_{n}")
    }
}

/// Every scalar in `v` with its JSON pointer.
pub(super) fn scalars(v: &serde_json::Value, at: String, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                scalars(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                scalars(x, format!("{at}/{i}"), out);
            }
        }
        serde_json::Value::String(s) => out.push((at, s.clone())),
        serde_json::Value::Number(n) => out.push((at, n.to_string())),
        _ => {}
    }
}

/// An extraction for `value` from a recorded response `text`: a JSON
/// pointer when the body is JSON and holds it, else a regex from the
/// text just before it.
pub(super) fn extraction_for(value: &str, text: &str, json: bool) -> Option<String> {
    if json {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
            let mut all = Vec::new();
            scalars(&v, String::new(), &mut all);
            return all
                .into_iter()
                .find(|(_, s)| s == value)
                .map(|(p, _)| format!("{{ json = {} }}", quote(&p)));
        }
    }
    let at = text.find(value)?;
    // The shortest context before the value whose regex, run on the
    // recorded response as the run will run it, takes this very value
    // (a bare `value="` would take the page's first hidden input: a
    // currency code, not the CSRF token).
    for (back, within_tag) in [(24, true), (48, true), (96, true), (48, false), (96, false)] {
        let Some(re) = regex_before(text, at, back, within_tag) else {
            continue;
        };
        let takes = regex::Regex::new(&re).ok().and_then(|r| {
            r.captures(text)
                .and_then(|c| c.get(1))
                .map(|m| m.as_str() == value)
        });
        if takes == Some(true) {
            return Some(format!("{{ regex = {} }}", quote(&re)));
        }
    }
    None
}

/// A regex of the `back` characters before byte `at` of `text` (from
/// the tag or line it is in when `within_tag`, from a word's start) and
/// a group for the value; `None` when too little context is left.
pub(super) fn regex_before(text: &str, at: usize, back: usize, within_tag: bool) -> Option<String> {
    let start = text[..at]
        .char_indices()
        .rev()
        .nth(back - 1)
        .map_or(0, |(i, _)| i);
    let mut prefix = &text[start..at];
    // From the attribute or tag it is in, so that the regex holds on a
    // page that differs elsewhere.
    if let Some(i) = prefix.rfind(['<', '\n']).filter(|_| within_tag) {
        prefix = &prefix[i + 1..];
    }
    // From a word's start: `name="csrf" value="`, not `den" name=...`.
    if let Some(i) = prefix.find(' ').filter(|&i| prefix.len() - i > 6) {
        prefix = &prefix[i + 1..];
    }
    (prefix.len() >= 6).then(|| format!("{}([^\"'&<>\\s]+)", regex::escape(prefix)))
}

/// The environment variable a recorded login's password becomes.
pub const PASSWORD_VAR: &str = "PELT_LOGIN_PASSWORD";

/// Whether a form field or JSON key names a password.
pub(super) fn is_password_field(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("pass") || n == "pwd" || n.ends_with("_pwd")
}

/// A JSON body with every password-like key's string value replaced by
/// `{{env.PELT_LOGIN_PASSWORD}}`; `None` when it holds none (or is not
/// JSON).
pub(super) fn json_without_password(text: &str) -> Option<String> {
    fn walk(v: &mut serde_json::Value, found: &mut bool) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    if x.is_string() && is_password_field(k) {
                        *x = serde_json::Value::String(format!("{{{{env.{PASSWORD_VAR}}}}}"));
                        *found = true;
                    } else {
                        walk(x, found);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| walk(x, found)),
            _ => {}
        }
    }
    let mut v: serde_json::Value = serde_json::from_str(text).ok()?;
    let mut found = false;
    walk(&mut v, &mut found);
    found.then(|| v.to_string())
}
