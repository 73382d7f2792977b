//! `pelt import har FILE.har`: a browser's recording (DevTools "Save all
//! as HAR") turned into a scenario of one flow, its requests in the order
//! recorded.
//!
//! - Static assets (images, styles, scripts, fonts) are left out unless
//!   asked for: a browser caches them, and they are rarely the question.
//! - Think times are the recorded gaps: from a request's end to the next
//!   one's start (none when they overlapped).
//! - Cookies are left to each virtual user's jar: `Cookie` headers are
//!   dropped, and the responses' `Set-Cookie` fill the jar as recorded.
//! - Secrets are not copied: `Authorization`, `Proxy-Authorization` and
//!   API-key headers become `{{env.PELT_SECRET_<NAME>}}`, set at run time.
//! - Values a response handed out and a later request sent back (a CSRF
//!   token in a form, an id from a JSON list in a URL) are correlated:
//!   the earlier step extracts them (a JSON pointer, or a regex from the
//!   text around them) and the later one sends the variable, so the
//!   journey replays with fresh tokens and the ids each user gets.

use crate::error::ScenarioError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// What the import keeps.
#[derive(Debug, Clone, Default)]
pub struct HarOptions {
    /// Keep requests for static assets too.
    pub include_assets: bool,
    /// Send to this origin (`http://host:port`) instead of the recorded
    /// one (the first request's).
    pub base: Option<String>,
    /// Third-party origins to keep (`https://cdn.example.net`); the rest
    /// of the origins outside the recorded site are left out.
    pub include_origins: Vec<String>,
}

/// `https://host:port` of a URL.
fn origin_of(url: &str) -> &str {
    let after = url.find("://").map_or(0, |i| i + 3);
    let end = url[after..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| after + i);
    &url[..end]
}

/// Whether `origin` belongs to the site of `site` (the first request's
/// origin): the same host, or a host under the same parent domain
/// (`api.shop.example` beside `www.shop.example`); anything else (an
/// analytics beacon, a CDN elsewhere) is a third party.
fn same_site(origin: &str, site: &str) -> bool {
    let host = |o: &str| {
        let h = o.split_once("://").map_or(o, |(_, h)| h);
        h.rsplit_once(':')
            .filter(|(_, p)| p.bytes().all(|b| b.is_ascii_digit()))
            .map_or(h, |(h, _)| h)
            .to_ascii_lowercase()
    };
    let (a, b) = (host(origin), host(site));
    let parent = |h: &str| -> String {
        // An address is its own site; a name's parent is its last two labels.
        if h.parse::<std::net::IpAddr>().is_ok() || h.starts_with('[') {
            return h.to_string();
        }
        let labels: Vec<&str> = h.rsplit('.').take(2).collect();
        labels.into_iter().rev().collect::<Vec<_>>().join(".")
    };
    a == b || parent(&a) == parent(&b)
}

#[derive(Debug, Deserialize)]
struct Har {
    log: Log,
}

#[derive(Debug, Deserialize)]
struct Log {
    entries: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    started_date_time: String,
    #[serde(default)]
    time: f64,
    request: Request,
    response: Response,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    method: String,
    url: String,
    #[serde(default)]
    headers: Vec<Header>,
    post_data: Option<PostData>,
}

#[derive(Debug, Deserialize)]
struct Header {
    name: String,
    value: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PostData {
    #[serde(default)]
    mime_type: String,
    #[serde(default)]
    text: String,
}

#[derive(Debug, Deserialize)]
struct Response {
    #[serde(default)]
    content: Content,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Content {
    #[serde(default)]
    mime_type: String,
    text: Option<String>,
    encoding: Option<String>,
}

/// Headers never copied: the transport's own, the jar's, and those that
/// would change the response's encoding (pelt does not decompress).
const DROPPED: &[&str] = &[
    "host",
    "content-length",
    "cookie",
    "connection",
    "keep-alive",
    "accept-encoding",
    "transfer-encoding",
    "upgrade",
    "te",
    "proxy-connection",
];

/// Headers whose values are secrets.
const SECRET: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "x-auth-token",
    "api-key",
];

const ASSET_EXTENSIONS: &[&str] = &[
    ".css", ".js", ".mjs", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp", ".avif",
    ".woff", ".woff2", ".ttf", ".otf", ".eot", ".map", ".mp4", ".webm", ".mp3",
];

fn is_asset(e: &Entry) -> bool {
    let mime = e.response.content.mime_type.to_ascii_lowercase();
    let path = e
        .request
        .url
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    [
        "image/",
        "font/",
        "text/css",
        "javascript",
        "video/",
        "audio/",
    ]
    .iter()
    .any(|m| mime.contains(m))
        || ASSET_EXTENSIONS.iter().any(|x| path.ends_with(x))
}

/// Milliseconds since the epoch of an ISO 8601 time (`2024-01-02T03:04:05.678Z`
/// or with an offset), for gaps between requests.
fn millis(iso: &str) -> Option<f64> {
    let (date, rest) = iso.split_once('T')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (clock, offset_min) = match rest.find(['Z', '+', '-']) {
        Some(i) if &rest[i..i + 1] == "Z" => (&rest[..i], 0i64),
        Some(i) => {
            let sign = if &rest[i..i + 1] == "-" { -1 } else { 1 };
            let off = rest[i + 1..].replace(':', "");
            let h: i64 = off.get(..2)?.parse().ok()?;
            let mi: i64 = off.get(2..4).unwrap_or("0").parse().ok()?;
            (&rest[..i], sign * (h * 60 + mi))
        }
        None => (rest, 0),
    };
    let mut c = clock.split(':');
    let (h, mi): (i64, i64) = (c.next()?.parse().ok()?, c.next()?.parse().ok()?);
    let s: f64 = c.next().unwrap_or("0").parse().ok()?;
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    Some(((days * 86_400 + h * 3600 + mi * 60 - offset_min * 60) as f64 + s) * 1000.0)
}

/// A TOML basic string.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn url_decode(s: &str) -> String {
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
fn var_name(hint: &str, taken: &mut BTreeMap<String, usize>) -> String {
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
fn scalars(v: &serde_json::Value, at: String, out: &mut Vec<(String, String)>) {
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
fn extraction_for(value: &str, text: &str, json: bool) -> Option<String> {
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
fn regex_before(text: &str, at: usize, back: usize, within_tag: bool) -> Option<String> {
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
fn is_password_field(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("pass") || n == "pwd" || n.ends_with("_pwd")
}

/// A JSON body with every password-like key's string value replaced by
/// `{{env.PELT_LOGIN_PASSWORD}}`; `None` when it holds none (or is not
/// JSON).
fn json_without_password(text: &str) -> Option<String> {
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

/// Converts the HAR `text` (read from `file`) into a scenario's text.
pub fn import(text: &str, file: &Path, options: &HarOptions) -> Result<String, ScenarioError> {
    let har: Har = serde_json::from_str(text).map_err(|e| {
        ScenarioError::at(file, Some(e.line()), format!("not a HAR file ({e}); export one from the browser's network panel (Save all as HAR)"))
    })?;
    let http: Vec<&Entry> = har
        .log
        .entries
        .iter()
        .filter(|e| options.include_assets || !is_asset(e))
        .filter(|e| e.request.url.starts_with("http://") || e.request.url.starts_with("https://"))
        .collect();
    // The site is the first request's; other origins are third parties
    // (beacons, CDNs), left out unless named.
    let site = http
        .first()
        .map_or("", |e| origin_of(&e.request.url))
        .to_string();
    let kept = |e: &&Entry| {
        let o = origin_of(&e.request.url);
        same_site(o, &site)
            || options
                .include_origins
                .iter()
                .any(|i| i.trim_end_matches('/') == o)
    };
    let mut left_out: Vec<String> = Vec::new();
    for e in http.iter().filter(|e| !kept(e)) {
        let o = origin_of(&e.request.url).to_string();
        if !left_out.contains(&o) {
            left_out.push(o);
        }
    }
    let entries: Vec<&Entry> = http.into_iter().filter(kept).collect();
    let Some(first) = entries.first() else {
        return Err(ScenarioError::at(
            file,
            None,
            "the HAR has no HTTP requests to import (only assets? add --include-assets)",
        ));
    };
    let recorded = origin_of(&first.request.url).to_string();
    let base = options.base.clone().unwrap_or_else(|| recorded.clone());
    // Values handed out by responses, most recent first when searched.
    let mut taken = BTreeMap::new();
    let mut extracts: Vec<Vec<(String, String)>> = vec![Vec::new(); entries.len()];
    let mut known: Vec<(String, String)> = Vec::new(); // value -> variable
                                                       // Values a response held and a later request sent, for which no
                                                       // extraction took that value back from the recorded response.
    let mut unverified: Vec<String> = Vec::new();
    // Correlates `value` (sent by request `i`) with the latest earlier
    // response that holds it; returns the variable to send instead.
    let mut correlate = |i: usize,
                         value: &str,
                         hint: &str,
                         extracts: &mut Vec<Vec<(String, String)>>,
                         known: &mut Vec<(String, String)>|
     -> Option<String> {
        // Ids and tokens, not words: a path's `login` is on every page.
        let token_like =
            value.len() >= 3 && (value.bytes().any(|b| b.is_ascii_digit()) || value.len() >= 16);
        if !token_like {
            return None;
        }
        // Seen before: the variable that already holds it.
        if let Some((_, var)) = known.iter().find(|(v, _)| v == value) {
            return Some(var.clone());
        }
        for j in (0..i).rev() {
            let c = &entries[j].response.content;
            let Some(body) = c.text.as_deref().filter(|_| c.encoding.is_none()) else {
                continue;
            };
            if !body.contains(value) {
                continue;
            }
            let Some(how) = extraction_for(value, body, c.mime_type.contains("json")) else {
                let note = format!("'{hint}' (request {}, from response {})", i + 1, j + 1);
                if !unverified.contains(&note) {
                    unverified.push(note);
                }
                return None;
            };
            let var = var_name(hint, &mut taken);
            extracts[j].push((var.clone(), how));
            known.push((value.to_string(), var.clone()));
            return Some(var);
        }
        None
    };
    // Each request's URL (path and query) and body, with correlated
    // values replaced by variables.
    let mut urls = Vec::new();
    let mut bodies = Vec::new();
    let mut headers: Vec<Vec<(String, String)>> = Vec::new();
    let mut login: Option<usize> = None;
    for (i, e) in entries.iter().enumerate() {
        let url = &e.request.url;
        let o = origin_of(url);
        let rest = url[o.len()..].split('#').next().unwrap_or("");
        let (path, query) = rest
            .split_once('?')
            .map_or((rest, None), |(p, q)| (p, Some(q)));
        let mut out = String::new();
        for seg in path.split('/').skip(1) {
            out.push('/');
            let prev = out
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("")
                .to_string();
            let hint = if prev.is_empty() || prev.starts_with("{{") {
                "id".to_string()
            } else {
                format!("{prev}_id")
            };
            match correlate(i, &url_decode(seg), &hint, &mut extracts, &mut known) {
                Some(var) => {
                    let _ = write!(out, "{{{{{var}|url}}}}");
                }
                None => out.push_str(seg),
            }
        }
        if out.is_empty() {
            out.push('/');
        }
        if let Some(q) = query {
            out.push('?');
            let pairs: Vec<String> = q
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, v)) => {
                        match correlate(i, &url_decode(v), k, &mut extracts, &mut known) {
                            Some(var) => format!("{k}={{{{{var}|url}}}}"),
                            None => kv.to_string(),
                        }
                    }
                    None => kv.to_string(),
                })
                .collect();
            out.push_str(&pairs.join("&"));
        }
        let full = if o == recorded {
            out
        } else {
            format!("{o}{out}")
        };
        urls.push(full);
        let body = e.request.post_data.as_ref().map(|p| {
            if p.mime_type.contains("x-www-form-urlencoded") {
                p.text
                    .split('&')
                    .map(|kv| match kv.split_once('=') {
                        // A login's password is never copied: it is read
                        // from the environment at the start.
                        Some((k, _)) if is_password_field(k) => {
                            login.get_or_insert(i);
                            format!("{k}={{{{env.{PASSWORD_VAR}|url}}}}")
                        }
                        Some((k, v)) => {
                            match correlate(i, &url_decode(v), k, &mut extracts, &mut known) {
                                Some(var) => format!("{k}={{{{{var}|url}}}}"),
                                None => kv.to_string(),
                            }
                        }
                        None => kv.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("&")
            } else if let Some(json) = p
                .mime_type
                .contains("json")
                .then(|| json_without_password(&p.text))
                .flatten()
            {
                login.get_or_insert(i);
                json
            } else {
                p.text.clone()
            }
        });
        bodies.push(body);
        // Secret headers: a per-user token a response handed out (a
        // login's) is extracted from it and sent back; any other is read
        // from the environment, never copied.
        let mut hs: Vec<(String, String)> = Vec::new();
        for h in &e.request.headers {
            let lower = h.name.to_ascii_lowercase();
            if lower.starts_with(':')
                || DROPPED.contains(&lower.as_str())
                || hs.iter().any(|(n, _)| n.eq_ignore_ascii_case(&h.name))
            {
                continue;
            }
            let value = if SECRET.contains(&lower.as_str()) {
                // `Bearer abc...`: the credential after the scheme.
                let (scheme, credential) = match h.value.split_once(' ') {
                    Some((s, c)) => (format!("{s} "), c),
                    None => (String::new(), h.value.as_str()),
                };
                match correlate(i, credential, "token", &mut extracts, &mut known) {
                    Some(var) => format!("{scheme}{{{{{var}}}}}"),
                    None => format!(
                        "{{{{env.PELT_SECRET_{}}}}}",
                        lower.to_ascii_uppercase().replace('-', "_")
                    ),
                }
            } else {
                h.value.replace("{{", "{ {")
            };
            hs.push((h.name.clone(), value));
        }
        // A body's type from the recording's postData when its headers
        // lack one (some exports keep it only there): without it the
        // server parses none of the body.
        if let Some(p) = e
            .request
            .post_data
            .as_ref()
            .filter(|p| !p.mime_type.is_empty())
        {
            if !hs
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            {
                hs.push(("Content-Type".into(), p.mime_type.clone()));
            }
        }
        headers.push(hs);
    }
    // The login (the first request sending a password) and the requests
    // before it (its form page, a CSRF token) become `[[once]]` steps,
    // run once per user, when a flow is left after them.
    let once_until = login.filter(|&l| l + 1 < entries.len());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Imported by `pelt import har` from {}: one flow, the requests in their",
        file.display()
    );
    let _ = writeln!(
        out,
        "# recorded order{}. Cookies are left to each",
        if options.include_assets {
            ""
        } else {
            " (static assets left out; --include-assets keeps them)"
        }
    );
    out.push_str(
        "# virtual user's jar; secret headers read environment variables unless a\n\
         # response handed their token out (then it is extracted, per user).\n",
    );
    if let Some(l) = login {
        let _ = write!(
            out,
            "# The login (request {}) sends a password: it is not copied. Set {PASSWORD_VAR}\n\
             # before the run ({PASSWORD_VAR}=... pelt run --scenario FILE), or put the user and\n\
             # password in a [[feed]] with per = \"user\" and use {{{{feed.column}}}} instead.\n",
            l + 1
        );
        if let Some(o) = once_until {
            let _ = write!(
                out,
                "# Requests 1 to {} (the login and what leads to it) are [[once]] steps: each\n\
                 # virtual user logs in once, before its flows.\n",
                o + 1
            );
        }
    }
    if !unverified.is_empty() {
        let _ = writeln!(
            out,
            "# Not correlated (no extraction took the value back from the recorded response; \
             sent as recorded): {}.",
            unverified.join(", ")
        );
    }
    if !left_out.is_empty() {
        let _ = writeln!(
            out,
            "# Left out, another site's (--include-origin ORIGIN keeps one): {}.",
            left_out.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "# Think times are the recorded gaps. See docs/SCENARIOS.md."
    );
    let _ = writeln!(out, "base = {}", quote(&base));
    for (i, e) in entries.iter().enumerate() {
        let r = &e.request;
        let o = origin_of(&r.url);
        let path_only = r.url[o.len()..].split(['?', '#']).next().unwrap_or("");
        if once_until.is_some_and(|l| i <= l) {
            let _ = writeln!(out, "\n[[once]]");
        } else {
            if i == once_until.map_or(0, |l| l + 1) {
                let _ = writeln!(out, "\n[[flow]]\nname = \"recorded\"");
            }
            let _ = writeln!(out, "\n[[flow.step]]");
        }
        let _ = writeln!(
            out,
            "name = {}",
            quote(&format!("{} {} {}", i + 1, r.method, path_only))
        );
        if r.method != "GET" {
            let _ = writeln!(out, "method = {}", quote(&r.method));
        }
        let _ = writeln!(out, "url = {}", quote(&urls[i]));
        let headers = &headers[i];
        if !headers.is_empty() {
            let list: Vec<String> = headers
                .iter()
                .map(|(n, v)| format!("{} = {}", quote(n), quote(v)))
                .collect();
            let _ = writeln!(out, "headers = {{ {} }}", list.join(", "));
        }
        if let Some(b) = &bodies[i] {
            let _ = writeln!(out, "body = {}", quote(b));
        }
        // The gap from this request's end to the next one's start.
        if let (Some(next), Some(start)) = (entries.get(i + 1), millis(&e.started_date_time)) {
            if let Some(next_start) = millis(&next.started_date_time) {
                let gap = next_start - (start + e.time.max(0.0));
                if gap >= 1.0 {
                    let _ = writeln!(out, "think = \"{}ms\"", gap.round() as u64);
                }
            }
        }
        if !extracts[i].is_empty() {
            let list: Vec<String> = extracts[i]
                .iter()
                .map(|(n, how)| format!("{n} = {how}"))
                .collect();
            let _ = writeln!(out, "extract = {{ {} }}", list.join(", "));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 37 §5: `value="([^"]+)"` took the page's first hidden input
    /// (a currency code) for the CSRF token. An extraction is written
    /// only if it takes the sent value back from the recorded response.
    #[test]
    fn an_extraction_is_checked_against_the_recording() {
        let page = r#"<form><input type="hidden" value="EUR"><input type="hidden" value="tok-0123456789abcdef" name="csrf"></form>"#;
        let how = extraction_for("tok-0123456789abcdef", page, false).unwrap();
        let re: String = toml::from_str::<toml::Table>(&format!("x = {how}")).unwrap()["x"]
            ["regex"]
            .as_str()
            .unwrap()
            .to_string();
        let got = regex::Regex::new(&re).unwrap().captures(page).unwrap()[1].to_string();
        assert_eq!(got, "tok-0123456789abcdef", "{re}");
        // A value the regex's class cannot hold is not correlated.
        assert_eq!(
            extraction_for("a b c d e f g", "<p>x</p> a b c d e f g", false),
            None
        );
    }

    #[test]
    fn a_site_is_its_host_and_hosts_under_its_parent_domain() {
        assert!(same_site(
            "https://api.shop.example",
            "https://www.shop.example"
        ));
        assert!(same_site("http://127.0.0.1:8080", "http://127.0.0.1:8080"));
        assert!(!same_site(
            "https://www.google-analytics.com",
            "https://www.shop.example"
        ));
        assert!(!same_site("http://127.0.0.2:8080", "http://127.0.0.1:8080"));
    }

    #[test]
    fn times_parse_to_the_millisecond() {
        let a = millis("2024-03-01T10:00:00.250Z").unwrap();
        let b = millis("2024-03-01T11:00:01.000+01:00").unwrap();
        assert_eq!(b - a, 750.0);
        assert_eq!(millis("1970-01-01T00:00:01Z"), Some(1000.0));
    }

    fn entry(
        t: &str,
        method: &str,
        url: &str,
        headers: &str,
        post: &str,
        mime: &str,
        body: &str,
    ) -> String {
        format!(
            r#"{{"startedDateTime":"{t}","time":10,"request":{{"method":"{method}","url":"{url}","headers":[{headers}]{post}}},"response":{{"status":200,"content":{{"mimeType":"{mime}","text":{}}}}}}}"#,
            serde_json::to_string(body).unwrap()
        )
    }

    #[test]
    fn a_recording_becomes_one_flow_with_values_carried_and_secrets_left_out() {
        let entries = [
            entry(
                "2024-01-01T00:00:00.000Z",
                "GET",
                "http://h:1/list",
                r#"{"name":"Authorization","value":"Bearer s3cret"},{"name":"Cookie","value":"a=1"}"#,
                "",
                "application/json",
                r#"{"items":[{"id":4711}]}"#,
            ),
            entry(
                "2024-01-01T00:00:00.020Z",
                "GET",
                "http://h:1/logo.png",
                "",
                "",
                "image/png",
                "",
            ),
            entry(
                "2024-01-01T00:00:00.510Z",
                "GET",
                "http://h:1/item/4711?x=1",
                "",
                "",
                "text/html",
                r#"<input type="hidden" name="token" value="Tk-0123456789abcdef">"#,
            ),
            entry(
                "2024-01-01T00:00:01.000Z",
                "POST",
                "http://h:1/item/4711/buy",
                "",
                r#","postData":{"mimeType":"application/x-www-form-urlencoded","text":"token=Tk-0123456789abcdef&n=2"}"#,
                "text/html",
                "ok",
            ),
        ];
        let har = format!(r#"{{"log":{{"entries":[{}]}}}}"#, entries.join(","));
        let out = import(&har, Path::new("r.har"), &HarOptions::default()).unwrap();
        assert!(
            !out.contains("s3cret") && out.contains("{{env.PELT_SECRET_AUTHORIZATION}}"),
            "{out}"
        );
        assert!(
            !out.contains("\"Cookie\"") && !out.contains("logo.png"),
            "{out}"
        );
        assert!(
            out.contains(r#"extract = { item_id = { json = "/items/0/id" } }"#),
            "{out}"
        );
        assert!(
            out.contains(r#"url = "/item/{{item_id|url}}?x=1""#),
            "{out}"
        );
        assert!(out.contains(r#"body = "token={{token|url}}&n=2""#), "{out}");
        // 500 ms from the list's end (10 ms) to the item, skipping the asset.
        assert!(out.contains("think = \"500ms\""), "{out}");
        // And it compiles as a scenario.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        std::env::set_var("PELT_SECRET_AUTHORIZATION", "x");
        crate::Scenario::compile(&out, &path).unwrap();
        let with_assets = import(
            &har,
            Path::new("r.har"),
            &HarOptions {
                include_assets: true,
                base: None,
                include_origins: Vec::new(),
            },
        )
        .unwrap();
        assert!(with_assets.contains("logo.png"));
    }

    /// Issue 37 §5: a recorded login's password was written in clear,
    /// the token its response handed out became a shared environment
    /// variable, and the login ran every iteration. The password is read
    /// from PELT_LOGIN_PASSWORD (named in the header comment), the token
    /// is extracted from the login's response per user, and the login
    /// (with the form page before it) is a `[[once]]` step.
    #[test]
    fn a_recorded_login_keeps_no_password_extracts_its_token_and_runs_once() {
        let bearer = r#"{"name":"Authorization","value":"Bearer eyJhbGciOi.abc123456789"}"#;
        let entries = [
            entry(
                "2024-01-01T00:00:00.000Z",
                "GET",
                "http://h:1/login",
                "",
                "",
                "text/html",
                r#"<input type="hidden" name="csrf" value="Tk-0123456789abcdef">"#,
            ),
            entry(
                "2024-01-01T00:00:00.100Z",
                "POST",
                "http://h:1/login",
                "",
                r#","postData":{"mimeType":"application/x-www-form-urlencoded","text":"user=u0&password=hunter2-S3cret&csrf=Tk-0123456789abcdef"}"#,
                "application/json",
                r#"{"token":"eyJhbGciOi.abc123456789"}"#,
            ),
            entry(
                "2024-01-01T00:00:00.200Z",
                "GET",
                "http://h:1/api/items",
                bearer,
                "",
                "application/json",
                r#"{"items":[{"id":4711}]}"#,
            ),
            entry(
                "2024-01-01T00:00:00.300Z",
                "POST",
                "http://h:1/api/session",
                bearer,
                r#","postData":{"mimeType":"application/json","text":"{\"login\":{\"name\":\"u0\",\"passwd\":\"other-S3cret\"}}"}"#,
                "application/json",
                "{}",
            ),
        ];
        let har = format!(r#"{{"log":{{"entries":[{}]}}}}"#, entries.join(","));
        let out = import(&har, Path::new("r.har"), &HarOptions::default()).unwrap();
        for secret in [
            "hunter2-S3cret",
            "other-S3cret",
            "PELT_SECRET_AUTHORIZATION",
        ] {
            assert!(!out.contains(secret), "{secret}: {out}");
        }
        assert!(
            out.contains("password={{env.PELT_LOGIN_PASSWORD|url}}"),
            "{out}"
        );
        assert!(
            out.contains(r#"\"passwd\":\"{{env.PELT_LOGIN_PASSWORD}}\""#),
            "{out}"
        );
        assert!(out.contains("# The login (request 2) sends a password: it is not copied. Set PELT_LOGIN_PASSWORD"), "{out}");
        assert!(
            out.contains(r#"extract = { token = { json = "/token" } }"#),
            "{out}"
        );
        assert!(
            out.contains(r#""Authorization" = "Bearer {{token}}""#),
            "{out}"
        );
        let once = out.lines().filter(|l| *l == "[[once]]").count();
        assert_eq!(once, 2, "{out}");
        assert!(out.find("\n[[once]]\n") < out.find("\n[[flow]]\n"), "{out}");
        let dir = tempfile::tempdir().unwrap();
        std::env::set_var(PASSWORD_VAR, "p w&d");
        let sc = crate::Scenario::compile(&out, &dir.path().join("s.toml")).unwrap();
        assert_eq!(sc.once, [0, 1]);
        assert_eq!(sc.flows[0].steps, [2, 3]);
    }

    #[test]
    fn not_json_names_the_line() {
        let e = import(
            "{\n  \"log\": [\n  nope",
            Path::new("x.har"),
            &HarOptions::default(),
        )
        .unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("not a HAR file"), "{e}");
    }
}
