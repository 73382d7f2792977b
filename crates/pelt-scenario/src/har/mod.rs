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
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

mod correlate;
mod model;

use correlate::*;
use model::*;

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

#[cfg(test)]
mod tests;
