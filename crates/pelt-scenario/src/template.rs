//! Templates: text with `{{ ... }}` holes, compiled once into literal
//! bytes and holes, and rendered on the hot path by copying bytes.
//!
//! A hole holds a variable (`{{id}}`, a feed's column `{{users.name}}`)
//! or a built-in (`{{uuid}}`, `{{counter}}`, `{{vu}}`, `{{iteration}}`,
//! `{{unix_time}}`, `{{unix_ms}}`, `{{random_int(1, 100)}}`,
//! `{{random_string(8)}}`); `{{env.NAME}}` is read once at compile time.
//! A hole may end with `|url` to percent-encode its value (a form body's
//! CSRF token). `{{` always opens a hole.

use std::sync::atomic::{AtomicU64, Ordering};

/// A compiled template: literal runs and holes, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Lit(Vec<u8>),
    Hole(Source, Filter),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filter {
    None,
    Url,
}

/// Where a hole's value comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Source {
    /// A virtual user's variable slot (a feed column or an extracted value).
    Var(usize),
    Uuid,
    Counter,
    Vu,
    Iteration,
    UnixTime,
    UnixMs,
    RandomInt(i64, i64),
    RandomString(usize),
}

/// A virtual user's state as templates see it: its variables by slot,
/// its number, its iteration and its random numbers.
#[derive(Debug)]
pub struct VuVars {
    /// Values by slot; empty until set.
    pub slots: Vec<Vec<u8>>,
    /// Whether each slot was ever set (an empty value is a value).
    pub set: Vec<bool>,
    /// The virtual user's number, from 0, across the run's workers.
    pub vu: u64,
    /// Flows this virtual user has started, from 0.
    pub iteration: u64,
    /// Its own random numbers.
    pub rng: fastrand::Rng,
}

/// Why a template does not compile: the message, and the byte offset in
/// the template's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TemplateError {
    pub at: usize,
    pub message: String,
}

/// Substitutes `{{env.NAME}}` holes in `text` (once, at compile time).
pub(crate) fn substitute_env(text: &str) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut base = 0;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open..].find("}}") else {
            out.push_str(rest);
            return Ok(out);
        };
        let inner = rest[open + 2..open + close].trim();
        if let Some(name) = inner.strip_prefix("env.") {
            // `{{env.NAME|url}}`: percent-encoded (a password in a form).
            let (name, url) = match name.split_once('|') {
                Some((n, f)) if f.trim() == "url" => (n.trim(), true),
                _ => (name, false),
            };
            let value = std::env::var(name).map_err(|_| TemplateError {
                at: base + open,
                message: format!(
                    "environment variable {name} is not set (used as {{{{env.{name}}}}}); export it before the run"
                ),
            })?;
            out.push_str(&rest[..open]);
            match url {
                true => {
                    let mut encoded = Vec::new();
                    percent_encode(value.as_bytes(), &mut encoded);
                    out.push_str(&String::from_utf8_lossy(&encoded));
                }
                false => out.push_str(&value),
            }
        } else {
            out.push_str(&rest[..open + close + 2]);
        }
        base += open + close + 2;
        rest = &rest[open + close + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The values of the environment variables `text` reads (`{{env.NAME}}`)
/// whose names `secret` calls secret (`PELT_LOGIN_PASSWORD`), as set
/// now, raw and percent-encoded: what a view of the rendered requests
/// must scrub (a JSON body's password has no secret field name to go by).
pub fn secret_env_values(text: &str, secret: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    for hole in text.split("{{env.").skip(1) {
        let name = hole.split(['}', '|']).next().unwrap_or("").trim();
        if let (true, Ok(value)) = (secret(name), std::env::var(name)) {
            let mut encoded = Vec::new();
            percent_encode(value.as_bytes(), &mut encoded);
            out.push(String::from_utf8_lossy(&encoded).into_owned());
            out.push(value);
        }
    }
    out
}

impl Template {
    /// Compiles `text`; `var` maps a variable's name to its slot, or
    /// `None` when no feed column or earlier extraction defines it.
    pub(crate) fn compile(
        text: &str,
        var: &mut dyn FnMut(&str) -> Option<usize>,
    ) -> Result<Template, TemplateError> {
        let text = substitute_env(text)?;
        let mut parts = Vec::new();
        let mut rest = &text[..];
        let mut base = 0;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                parts.push(Part::Lit(rest.as_bytes()[..open].to_vec()));
            }
            let Some(close) = rest[open..].find("}}") else {
                return Err(TemplateError {
                    at: base + open,
                    message: "'{{' is never closed by '}}'; close the hole".into(),
                });
            };
            let inner = &rest[open + 2..open + close];
            let (expr, filter) = match inner.split_once('|') {
                Some((e, f)) if f.trim() == "url" => (e.trim(), Filter::Url),
                Some((_, f)) => {
                    return Err(TemplateError {
                        at: base + open,
                        message: format!("unknown filter '|{}'; the only filter is |url", f.trim()),
                    })
                }
                None => (inner.trim(), Filter::None),
            };
            let source = builtin(expr)
                .map_err(|message| TemplateError {
                    at: base + open,
                    message,
                })?
                .or_else(|| var(expr).map(Source::Var))
                .ok_or_else(|| TemplateError {
                    at: base + open,
                    message: format!(
                        "unknown variable '{expr}': no feed column or earlier step's extract defines it, and it is no built-in (uuid, counter, vu, iteration, unix_time, unix_ms, random_int(a, b), random_string(n), env.NAME)"
                    ),
                })?;
            parts.push(Part::Hole(source, filter));
            base += open + close + 2;
            rest = &rest[open + close + 2..];
        }
        if !rest.is_empty() {
            parts.push(Part::Lit(rest.as_bytes().to_vec()));
        }
        Ok(Template { parts })
    }

    /// A template of literal text only.
    pub fn literal(text: &str) -> Template {
        Template {
            parts: if text.is_empty() {
                Vec::new()
            } else {
                vec![Part::Lit(text.as_bytes().to_vec())]
            },
        }
    }

    /// Appends `text` as literal bytes, joined to a literal run that
    /// ends the template (one copy when rendered, not one per piece).
    pub(crate) fn push_literal(&mut self, text: &[u8]) {
        match self.parts.last_mut() {
            Some(Part::Lit(run)) => run.extend_from_slice(text),
            _ if text.is_empty() => {}
            _ => self.parts.push(Part::Lit(text.to_vec())),
        }
    }

    /// Appends `other`'s parts, its first literal run joined to one that
    /// ends this template.
    pub(crate) fn push_template(&mut self, other: &Template) {
        for part in &other.parts {
            match part {
                Part::Lit(run) => self.push_literal(run),
                hole => self.parts.push(hole.clone()),
            }
        }
    }

    /// Whether it has no holes.
    pub fn is_literal(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Lit(_)))
    }

    /// Appends the rendered template to `out`.
    pub fn render(&self, vu: &mut VuVars, counter: &AtomicU64, out: &mut Vec<u8>) {
        for part in &self.parts {
            match part {
                Part::Lit(b) => out.extend_from_slice(b),
                Part::Hole(source, Filter::None) => value(*source, vu, counter, out),
                Part::Hole(source, Filter::Url) => {
                    let start = out.len();
                    value(*source, vu, counter, out);
                    // Encoded only when a byte needs it (no copy else).
                    if out[start..].iter().any(|&b| !unreserved(b)) {
                        let raw = out.split_off(start);
                        percent_encode(&raw, out);
                    }
                }
            }
        }
    }

    /// The text with each hole shown as `:name` (a route's notation), for
    /// reports' labels.
    pub(crate) fn label(text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            out.push_str(&rest[..open]);
            let close = rest[open..].find("}}").map_or(rest.len(), |c| open + c);
            let inner = rest[(open + 2).min(close)..close].trim();
            let name = inner.split(['|', '(']).next().unwrap_or("").trim();
            out.push(':');
            out.push_str(&name.replace('.', "_"));
            rest = &rest[(close + 2).min(rest.len())..];
        }
        out.push_str(rest);
        out
    }
}

/// The built-in a hole names, `Ok(None)` when it names none.
fn builtin(expr: &str) -> Result<Option<Source>, String> {
    let call = |name: &str| -> Option<Vec<&str>> {
        let args = expr.strip_prefix(name)?.trim_start().strip_prefix('(')?;
        let args = args.strip_suffix(')')?;
        Some(args.split(',').map(str::trim).collect())
    };
    Ok(Some(match expr {
        "uuid" => Source::Uuid,
        "counter" => Source::Counter,
        "vu" => Source::Vu,
        "iteration" => Source::Iteration,
        "unix_time" => Source::UnixTime,
        "unix_ms" => Source::UnixMs,
        _ => {
            if let Some(args) = call("random_int") {
                let bad =
                    || format!("bad {expr}: write random_int(LOW, HIGH) with integers LOW <= HIGH");
                let [lo, hi] = args[..] else {
                    return Err(bad());
                };
                let (lo, hi): (i64, i64) = (
                    lo.parse().map_err(|_| bad())?,
                    hi.parse().map_err(|_| bad())?,
                );
                if lo > hi {
                    return Err(bad());
                }
                Source::RandomInt(lo, hi)
            } else if let Some(args) = call("random_string") {
                let bad =
                    || format!("bad {expr}: write random_string(N) with a length N from 1 to 4096");
                let [n] = args[..] else { return Err(bad()) };
                let n: usize = n.parse().map_err(|_| bad())?;
                if !(1..=4096).contains(&n) {
                    return Err(bad());
                }
                Source::RandomString(n)
            } else if expr.starts_with("random_int") || expr.starts_with("random_string") {
                return Err(format!(
                    "bad {expr}: write random_int(LOW, HIGH) or random_string(N)"
                ));
            } else {
                return Ok(None);
            }
        }
    }))
}

const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

fn value(source: Source, vu: &mut VuVars, counter: &AtomicU64, out: &mut Vec<u8>) {
    use std::io::Write;
    match source {
        Source::Var(slot) => out.extend_from_slice(&vu.slots[slot]),
        Source::Vu => {
            let _ = write!(out, "{}", vu.vu);
        }
        Source::Iteration => {
            let _ = write!(out, "{}", vu.iteration);
        }
        Source::Counter => {
            let _ = write!(out, "{}", counter.fetch_add(1, Ordering::Relaxed));
        }
        Source::UnixTime | Source::UnixMs => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            let v = match source {
                Source::UnixTime => now.as_secs(),
                _ => now.as_millis() as u64,
            };
            let _ = write!(out, "{v}");
        }
        Source::RandomInt(lo, hi) => {
            let _ = write!(out, "{}", vu.rng.i64(lo..=hi));
        }
        Source::RandomString(n) => {
            for _ in 0..n {
                out.push(ALNUM[vu.rng.usize(..ALNUM.len())]);
            }
        }
        Source::Uuid => {
            // Version 4 (random), RFC 9562's layout.
            let mut b = vu.rng.u128(..).to_be_bytes();
            b[6] = (b[6] & 0x0f) | 0x40;
            b[8] = (b[8] & 0x3f) | 0x80;
            for (i, byte) in b.iter().enumerate() {
                if matches!(i, 4 | 6 | 8 | 10) {
                    out.push(b'-');
                }
                let _ = write!(out, "{byte:02x}");
            }
        }
    }
}

/// RFC 3986 unreserved characters pass; every other byte is `%XX`.
/// Whether `b` stands for itself in a URL (RFC 3986's unreserved).
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn percent_encode(raw: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in raw {
        if unreserved(b) {
            out.push(b);
        } else {
            out.extend_from_slice(&[b'%', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vu() -> VuVars {
        VuVars {
            slots: vec![b"a b&c".to_vec()],
            set: vec![true],
            vu: 7,
            iteration: 3,
            rng: fastrand::Rng::with_seed(1),
        }
    }

    fn render(t: &Template) -> String {
        let mut out = Vec::new();
        t.render(&mut vu(), &AtomicU64::new(5), &mut out);
        String::from_utf8(out).unwrap()
    }

    fn compile(text: &str) -> Result<Template, TemplateError> {
        Template::compile(text, &mut |n| (n == "x").then_some(0))
    }

    #[test]
    fn holes_render_variables_and_builtins() {
        let t = compile("/u/{{vu}}/{{ iteration }}/{{x}}?c={{counter}}&q={{x|url}}").unwrap();
        assert_eq!(render(&t), "/u/7/3/a b&c?c=5&q=a%20b%26c");
        let u = render(&compile("{{uuid}}").unwrap());
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        let r: i64 = render(&compile("{{random_int(3, 3)}}").unwrap())
            .parse()
            .unwrap();
        assert_eq!(r, 3);
        assert_eq!(render(&compile("{{random_string(12)}}").unwrap()).len(), 12);
    }

    #[test]
    fn unknown_names_and_bad_builtins_are_errors_with_their_offset() {
        let e = compile("/a/{{nope}}").unwrap_err();
        assert_eq!(e.at, 3);
        assert!(
            e.message.contains("unknown variable 'nope'"),
            "{}",
            e.message
        );
        assert!(compile("{{random_int(5, 1)}}").is_err());
        assert!(compile("{{random_string(0)}}").is_err());
        assert!(compile("{{x|upper}}").is_err());
        assert!(compile("{{x").is_err());
    }

    #[test]
    fn env_is_read_at_compile_time() {
        std::env::set_var("PELT_SCENARIO_TEST_ENV", "v1");
        assert_eq!(
            render(&compile("a{{env.PELT_SCENARIO_TEST_ENV}}b").unwrap()),
            "av1b"
        );
        assert!(compile("{{env.PELT_SCENARIO_SURELY_UNSET}}").is_err());
    }

    #[test]
    fn labels_show_holes_as_route_names() {
        assert_eq!(
            Template::label("/item/{{id}}?u={{users.name|url}}"),
            "/item/:id?u=:users_name"
        );
    }
}
