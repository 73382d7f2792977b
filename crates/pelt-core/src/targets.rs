//! Targets files: many requests to send, read once before a run.
//!
//! Four formats are understood, so that files written for other tools work
//! unchanged:
//!
//! - [`TargetsFormat::Plain`]: one absolute URL per line, each a `GET`,
//!   optionally after a weight: `3 http://host/path`.
//! - [`TargetsFormat::Siege`]: siege's urls file, `URL [METHOD [BODY | <FILE]]`
//!   per line, with `NAME=value` variables used as `$(NAME)` or `${NAME}`.
//! - [`TargetsFormat::VegetaHttp`]: vegeta's http format, a `METHOD URL`
//!   line, then `Name: value` header lines, then an optional `@FILE` body.
//! - [`TargetsFormat::VegetaJson`]: vegeta's JSON lines,
//!   `{"method":"GET","url":"...","header":{"Name":["v"]},"body":"<base64>"}`,
//!   plus pelt's optional `"weight": N`.
//!
//! Parsing never panics and never guesses past an error: every problem is a
//! [`TargetsError`] naming the file, the 1-based line and what was expected,
//! on one line. Everything is checked here rather than in the engine, so a
//! bad line fails before the run starts: URLs with [`Url::parse`], methods
//! and header names as RFC 9110 tokens, header values without CR, LF or
//! NUL, body sizes against [`MAX_BODY`].
//!
//! Weights (`Target::weight`, 1 to [`MAX_WEIGHT`], default 1) can be given
//! in the plain format (a number before the URL: siege lines start with
//! their URL, so the two cannot be confused) and in JSON lines. siege's
//! format has no room for one (a trailing token is part of the body), nor
//! has vegeta's http format; repeat a line there to send it more often.

use crate::config::{Target, MAX_BODY};
use crate::url::Url;
use base64::Engine;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Largest targets file: pelt holds every target in memory.
pub const MAX_TARGETS_FILE: usize = 256 << 20;
/// Largest sum of all bodies in one targets file (each body is also held to
/// [`MAX_BODY`]): a body file shared by many lines is copied into each.
pub const MAX_TOTAL_BODY: usize = 256 << 20;
/// Largest value of one siege variable.
pub const MAX_VARIABLE: usize = 64 << 10;

/// The layout of a targets file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TargetsFormat {
    /// One absolute URL per line; each is a `GET`.
    Plain,
    /// siege's urls file: `URL [METHOD [BODY | <FILE]]`, with variables.
    Siege,
    /// vegeta's http format: `METHOD URL`, header lines, `@FILE`.
    VegetaHttp,
    /// vegeta's JSON lines: one target object per line.
    VegetaJson,
}

impl TargetsFormat {
    /// Every format, in the order [`detect`] considers them least to most
    /// specific.
    pub const ALL: [TargetsFormat; 4] = [
        TargetsFormat::Plain,
        TargetsFormat::Siege,
        TargetsFormat::VegetaHttp,
        TargetsFormat::VegetaJson,
    ];

    /// The name accepted by [`FromStr`] (and meant for a
    /// `--targets-format` flag).
    pub fn name(self) -> &'static str {
        match self {
            TargetsFormat::Plain => "plain",
            TargetsFormat::Siege => "siege",
            TargetsFormat::VegetaHttp => "http",
            TargetsFormat::VegetaJson => "json",
        }
    }
}

impl fmt::Display for TargetsFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TargetsFormat {
    type Err = String;

    /// `plain`, `siege`, `http` (or `vegeta-http`), `json` (or
    /// `vegeta-json`), in any case.
    fn from_str(s: &str) -> Result<TargetsFormat, String> {
        match s.to_ascii_lowercase().as_str() {
            "plain" => Ok(TargetsFormat::Plain),
            "siege" => Ok(TargetsFormat::Siege),
            "http" | "vegeta-http" | "vegeta" => Ok(TargetsFormat::VegetaHttp),
            "json" | "vegeta-json" | "jsonl" => Ok(TargetsFormat::VegetaJson),
            _ => Err(format!(
                "unknown targets format '{}'; use plain, siege, http or json",
                s.escape_debug()
            )),
        }
    }
}

/// What is wrong with a targets file, and where: one line,
/// `file:line: message` (or `file: message` for the file as a whole).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", fmt_line(.line))]
pub struct TargetsError {
    /// The file name as given to [`parse`].
    pub file: String,
    /// 1-based line number; `None` when the problem is the whole file.
    pub line: Option<usize>,
    /// What was expected, and what was found.
    pub message: String,
}

fn fmt_line(line: &Option<usize>) -> String {
    match line {
        Some(n) => format!(":{n}"),
        None => String::new(),
    }
}

/// Guesses the format of a targets file from its content.
///
/// Only *meaningful* lines count: trimmed, not blank, not starting with `#`
/// (a leading UTF-8 byte-order mark is ignored). The rules, first match
/// wins:
///
/// 1. The first meaningful line starts with `{`: [`TargetsFormat::VegetaJson`].
/// 2. The first meaningful line defines a siege variable (`NAME=value` or
///    `NAME = value`, `NAME` being ASCII letters, digits and `_`, not
///    starting with a digit): [`TargetsFormat::Siege`].
/// 3. The first meaningful line is a method word (one or more ASCII capital
///    letters, like `GET` or `PURGE`) followed by whitespace and more text,
///    as in `GET http://host/`: [`TargetsFormat::VegetaHttp`].
/// 4. Any meaningful line has more than one whitespace-separated word
///    (`URL POST body`), defines a variable or uses one (`$(` or `${`):
///    [`TargetsFormat::Siege`].
/// 5. Otherwise (one word per line, or no meaningful line at all):
///    [`TargetsFormat::Plain`].
///
/// Detection never fails; a wrong guess shows up as a parse error that
/// names the line.
pub fn detect(text: &str) -> TargetsFormat {
    let text = strip_bom(text);
    let mut lines = meaningful_lines(text).map(|(_, line)| line);
    let Some(first) = lines.next() else {
        return TargetsFormat::Plain;
    };
    if first.starts_with('{') {
        return TargetsFormat::VegetaJson;
    }
    if variable_definition(first).is_some() {
        return TargetsFormat::Siege;
    }
    if let Some((word, rest)) = split_word(first) {
        if is_method_word(word) && !rest.is_empty() {
            return TargetsFormat::VegetaHttp;
        }
    }
    // Every line a URL, or a weight and a URL: a weighted plain list (a
    // siege line starts with its URL, never with a number).
    let plain_like = |line: &str| {
        let siege_marks =
            variable_definition(line).is_some() || line.contains("$(") || line.contains("${");
        !siege_marks
            && (split_word(line).is_some_and(|(_, rest)| rest.is_empty())
                || weighted_plain_line(line))
    };
    if meaningful_lines(text).all(|(_, line)| plain_like(line)) {
        return TargetsFormat::Plain;
    }
    let siege_like = |line: &str| {
        split_word(line).is_some_and(|(_, rest)| !rest.is_empty())
            || variable_definition(line).is_some()
            || line.contains("$(")
            || line.contains("${")
    };
    if siege_like(first) || lines.any(siege_like) {
        TargetsFormat::Siege
    } else {
        TargetsFormat::Plain
    }
}

/// Parses a targets file already read into `text`.
///
/// `file_name` is used only in error messages. `base_dir` resolves relative
/// body file paths (siege's `<file`, vegeta's `@file`); absolute paths are
/// used as they are. Body files are read here, once each, so that the run
/// itself does no file I/O.
///
/// A file with no targets at all is an error.
pub fn parse(
    text: &str,
    format: TargetsFormat,
    file_name: &str,
    base_dir: &Path,
) -> Result<Vec<Target>, TargetsError> {
    let mut p = Parser {
        file: file_name,
        base_dir,
        bodies: HashMap::new(),
        total_body: 0,
    };
    if text.len() > MAX_TARGETS_FILE {
        return Err(p.file_error(
            "the file is larger than 256 MiB; pelt holds every target in memory, so split it",
        ));
    }
    let text = strip_bom(text);
    let targets = match format {
        TargetsFormat::Plain => p.plain(text)?,
        TargetsFormat::Siege => p.siege(text)?,
        TargetsFormat::VegetaHttp => p.vegeta_http(text)?,
        TargetsFormat::VegetaJson => p.vegeta_json(text)?,
    };
    if targets.is_empty() {
        return Err(p.file_error(match format {
            TargetsFormat::Plain | TargetsFormat::Siege => {
                "no targets found; add one URL per line, like http://127.0.0.1:8080/"
            }
            TargetsFormat::VegetaHttp => {
                "no targets found; add a METHOD URL line, like GET http://127.0.0.1:8080/"
            }
            TargetsFormat::VegetaJson => {
                "no targets found; add one JSON object per line, like {\"method\":\"GET\",\"url\":\"http://127.0.0.1:8080/\"}"
            }
        }));
    }
    Ok(targets)
}

/// Reads and parses the targets file at `path`, detecting its format when
/// `format` is `None`. Relative body paths resolve against the file's
/// directory.
pub fn read(path: &Path, format: Option<TargetsFormat>) -> Result<Vec<Target>, TargetsError> {
    read_detected(path, format).map(|(targets, _)| targets)
}

/// [`read`], also returning the format the file was read as (detected,
/// or `format`). `-` reads standard input (vegeta's
/// `echo "GET URL" | vegeta attack`), with body paths relative to the
/// current directory.
pub fn read_detected(
    path: &Path,
    format: Option<TargetsFormat>,
) -> Result<(Vec<Target>, TargetsFormat), TargetsError> {
    let stdin = path == Path::new("-");
    let name = if stdin {
        "standard input".to_string()
    } else {
        path.display().to_string()
    };
    let whole = |message: String| TargetsError {
        file: name.clone(),
        line: None,
        message,
    };
    let mut bytes = Vec::new();
    let limit = MAX_TARGETS_FILE as u64 + 1;
    if stdin {
        std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| whole(format!("cannot read targets from standard input: {e}")))?;
    } else {
        std::fs::File::open(path)
            .and_then(|f| f.take(limit).read_to_end(&mut bytes))
            .map_err(|e| whole(format!("cannot read the targets file: {e}; check the path")))?;
    }
    if bytes.len() > MAX_TARGETS_FILE {
        return Err(whole(
            "the file is larger than 256 MiB; pelt holds every target in memory, so split it"
                .into(),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        TargetsError {
            file: name.clone(),
            line: Some(line),
            message: "the file is not UTF-8 text; save it as UTF-8 (JSON bodies are base64)".into(),
        }
    })?;
    let format = format.unwrap_or_else(|| detect(&text));
    let base_dir = match path.parent() {
        Some(dir) if !stdin => dir,
        _ => Path::new("."),
    };
    parse(&text, format, &name, base_dir).map(|t| (t, format))
}

/// Adds the command line's `-H` headers to every target read from a file
/// in `format`. A header the target already has is kept: the file's line
/// set it. Two exceptions make `-H 'Content-Type: ...'` mean what users
/// expect: it goes only on requests with a body (a GET line gets none),
/// and it replaces the Content-Type the format merely implies (siege's
/// `application/x-www-form-urlencoded` on a POST line, which has no way
/// to set its own).
pub fn add_headers(targets: &mut [Target], headers: &[(String, String)], format: TargetsFormat) {
    for t in targets {
        for (name, value) in headers {
            let content_type = name.eq_ignore_ascii_case("content-type");
            if content_type && t.body.is_empty() {
                continue;
            }
            if content_type && format == TargetsFormat::Siege {
                t.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            }
            if !t.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
                t.headers.push((name.clone(), value.clone()));
            }
        }
    }
}

struct Parser<'a> {
    file: &'a str,
    base_dir: &'a Path,
    /// Body files already read, by resolved path.
    bodies: HashMap<PathBuf, Vec<u8>>,
    total_body: usize,
}

impl Parser<'_> {
    fn error(&self, line: usize, message: impl Into<String>) -> TargetsError {
        TargetsError {
            file: self.file.to_string(),
            line: Some(line),
            message: message.into(),
        }
    }

    fn file_error(&self, message: &str) -> TargetsError {
        TargetsError {
            file: self.file.to_string(),
            line: None,
            message: message.to_string(),
        }
    }

    fn url(&self, n: usize, s: &str) -> Result<Url, TargetsError> {
        Url::parse(s).map_err(|e| {
            self.error(
                n,
                format!(
                    "expected a URL like http://host/path, found {} ({})",
                    quote(s),
                    e.reason
                ),
            )
        })
    }

    /// Counts a body against [`MAX_BODY`] and [`MAX_TOTAL_BODY`].
    fn account(&mut self, n: usize, len: usize) -> Result<(), TargetsError> {
        if len > MAX_BODY {
            return Err(self.error(
                n,
                "the body is larger than 32 MiB; pelt holds bodies in memory, so use a smaller one",
            ));
        }
        self.total_body = self.total_body.saturating_add(len);
        if self.total_body > MAX_TOTAL_BODY {
            return Err(self.error(
                n,
                "the bodies of all targets add up to more than 256 MiB; pelt holds them in memory, so use fewer or smaller ones",
            ));
        }
        Ok(())
    }

    /// Reads a body file named on line `n`, relative to `base_dir`.
    fn body_file(&mut self, n: usize, name: &str, marker: char) -> Result<Vec<u8>, TargetsError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(self.error(
                n,
                format!("expected a file name after '{marker}', like {marker}body.json"),
            ));
        }
        let path = self.base_dir.join(name);
        let body = match self.bodies.get(&path) {
            Some(body) => body.clone(),
            None => {
                let body = read_limited(&path, MAX_BODY).map_err(|e| {
                    let fix = if e.contains(';') {
                        ""
                    } else {
                        "; check the path (a relative one starts at the targets file's folder)"
                    };
                    self.error(
                        n,
                        format!(
                            "cannot read the body file {}: {e}{fix}",
                            quote(&path.display().to_string())
                        ),
                    )
                })?;
                self.bodies.insert(path, body.clone());
                body
            }
        };
        self.account(n, body.len())?;
        Ok(body)
    }

    /// `URL` or `WEIGHT URL` per line.
    fn plain(&mut self, text: &str) -> Result<Vec<Target>, TargetsError> {
        meaningful_lines(text)
            .map(|(n, line)| {
                let (first, rest) = split_word(line).unwrap_or((line, ""));
                if rest.is_empty() {
                    return self.url(n, line).map(Target::get);
                }
                if !first.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(self.error(
                        n,
                        format!(
                            "expected a URL or a weight and a URL, like 3 http://host/path, found {}; \
                             percent-encode spaces in URLs (%20)",
                            quote(line)
                        ),
                    ));
                }
                let weight = check_weight(first).map_err(|m| self.error(n, m))?;
                let (url, extra) = split_word(rest).unwrap_or((rest, ""));
                if !extra.is_empty() {
                    return Err(self.error(
                        n,
                        format!(
                            "expected the line to end after the URL, found {}; percent-encode spaces in URLs (%20)",
                            quote(extra)
                        ),
                    ));
                }
                let mut target = Target::get(self.url(n, url)?);
                target.weight = weight;
                Ok(target)
            })
            .collect()
    }

    fn siege(&mut self, text: &str) -> Result<Vec<Target>, TargetsError> {
        let mut vars: HashMap<String, String> = HashMap::new();
        let mut targets = Vec::new();
        for (n, line) in meaningful_lines(text) {
            if let Some((name, value)) = variable_definition(line) {
                let value = expand(value, &vars, MAX_VARIABLE).map_err(|m| self.error(n, m))?;
                vars.insert(name.to_string(), value);
                continue;
            }
            let line =
                expand(line, &vars, MAX_BODY + MAX_VARIABLE).map_err(|m| self.error(n, m))?;
            let line = line.trim();
            let Some((url, rest)) = split_word(line) else {
                return Err(self.error(
                    n,
                    "expected a URL like http://host/path, found nothing after expanding variables",
                ));
            };
            let url = self.url(n, url)?;
            let mut target = Target::get(url);
            if let Some((method, body)) = split_word(rest) {
                if !is_method_word(method) {
                    return Err(self.error(
                        n,
                        format!(
                            "expected a method like POST or PUT after the URL, found {}",
                            quote(method)
                        ),
                    ));
                }
                target.method = method.to_string();
                let body = if let Some(file) = body.strip_prefix('<') {
                    self.body_file(n, file, '<')?
                } else {
                    self.account(n, body.len())?;
                    body.as_bytes().to_vec()
                };
                if !body.is_empty() {
                    // siege's default content type; a file needing another
                    // one can use the vegeta http format, which has headers.
                    target.headers.push((
                        "Content-Type".into(),
                        "application/x-www-form-urlencoded".into(),
                    ));
                }
                target.body = body;
            }
            targets.push(target);
        }
        Ok(targets)
    }

    fn vegeta_http(&mut self, text: &str) -> Result<Vec<Target>, TargetsError> {
        let mut targets = Vec::new();
        // The target being read, while its header lines may follow.
        let mut open: Option<Target> = None;
        for (n, raw) in text.lines().enumerate() {
            let n = n + 1;
            let line = raw.trim();
            if line.is_empty() {
                targets.extend(open.take());
                continue;
            }
            if line.starts_with('#') {
                continue;
            }
            if let Some(target) = open.as_mut() {
                if let Some(file) = line.strip_prefix('@') {
                    let body = self.body_file(n, file, '@')?;
                    target.body = body;
                    targets.extend(open.take());
                    continue;
                }
                if !starts_target(line) {
                    let (name, value) = self.header_line(n, line)?;
                    target.headers.push((name, value));
                    continue;
                }
                // A new METHOD URL line ends the target without a blank line.
                targets.extend(open.take());
            }
            open = Some(self.request_line(n, line)?);
        }
        targets.extend(open);
        Ok(targets)
    }

    /// vegeta's `METHOD URL` line.
    fn request_line(&self, n: usize, line: &str) -> Result<Target, TargetsError> {
        let expected = || {
            self.error(
                n,
                format!(
                    "expected a METHOD URL line like GET http://host/path, found {}",
                    quote(line)
                ),
            )
        };
        let (method, rest) = split_word(line).ok_or_else(expected)?;
        if !is_method_word(method) || rest.is_empty() {
            return Err(expected());
        }
        let (url, extra) = split_word(rest).ok_or_else(expected)?;
        let url = self.url(n, url)?;
        if !extra.is_empty() {
            return Err(self.error(
                n,
                format!(
                    "expected the line to end after the URL, found {}; percent-encode spaces in URLs (%20)",
                    quote(extra)
                ),
            ));
        }
        Ok(Target {
            method: method.to_string(),
            ..Target::get(url)
        })
    }

    /// vegeta's `Name: value` line.
    fn header_line(&self, n: usize, line: &str) -> Result<(String, String), TargetsError> {
        let Some((name, value)) = line.split_once(':') else {
            return Err(self.error(
                n,
                format!(
                    "expected a header like Name: value, a body like @file, or a blank line, found {}",
                    quote(line)
                ),
            ));
        };
        let (name, value) = (name.trim(), value.trim());
        check_header(name, value).map_err(|m| self.error(n, m))?;
        Ok((name.to_string(), value.to_string()))
    }

    fn vegeta_json(&mut self, text: &str) -> Result<Vec<Target>, TargetsError> {
        let mut targets = Vec::new();
        for (n, line) in meaningful_lines(text) {
            if !line.starts_with('{') {
                return Err(self.error(
                    n,
                    format!(
                        "expected a JSON object like {{\"method\":\"GET\",\"url\":\"http://host/path\"}}, found {}",
                        quote(line)
                    ),
                ));
            }
            let json: JsonTarget = serde_json::from_str(line).map_err(|e| {
                self.error(
                    n,
                    format!(
                        "invalid JSON target: {}; write one JSON object per line",
                        one_line(&e.to_string())
                    ),
                )
            })?;
            let method = json.method.ok_or_else(|| {
                self.error(
                    n,
                    "the target has no \"method\"; add one, like \"method\":\"GET\"",
                )
            })?;
            if method.is_empty() || !method.bytes().all(is_token_byte) {
                return Err(self.error(
                    n,
                    format!(
                        "expected a method like GET or POST, found {}",
                        quote(&method)
                    ),
                ));
            }
            let url = json.url.ok_or_else(|| {
                self.error(
                    n,
                    "the target has no \"url\"; add one, like \"url\":\"http://host/path\"",
                )
            })?;
            let url = self.url(n, &url)?;
            let mut headers = Vec::new();
            for (name, values) in json.header.map(|h| h.0).unwrap_or_default() {
                for value in values.unwrap_or_default() {
                    check_header(&name, &value).map_err(|m| self.error(n, m))?;
                    headers.push((name.clone(), value));
                }
            }
            let body = match json.body {
                None => Vec::new(),
                Some(b64) => {
                    // Too long to decode to at most MAX_BODY bytes: fail
                    // before allocating.
                    if b64.len() > (MAX_BODY / 3 + 1) * 4 {
                        self.account(n, MAX_BODY + 1)?;
                    }
                    let body = base64::engine::general_purpose::STANDARD
                        .decode(b64.as_bytes())
                        .map_err(|e| {
                            self.error(
                                n,
                                format!("\"body\" must be base64 (standard, padded): {}; encode it with base64 -w0 FILE", one_line(&e.to_string()).trim_end_matches('.')),
                            )
                        })?;
                    self.account(n, body.len())?;
                    body
                }
            };
            let weight = match json.weight {
                None => 1,
                Some(w) => check_weight(&w.to_string()).map_err(|m| self.error(n, m))?,
            };
            targets.push(Target {
                method,
                url,
                headers,
                body,
                weight,
            });
        }
        Ok(targets)
    }
}

/// One line of vegeta's JSON format. `null` is accepted wherever Go's
/// encoder may write it (a nil map, slice or body).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonTarget {
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    header: Option<OrderedHeaders>,
    #[serde(default)]
    body: Option<String>,
    /// pelt's addition: the target's share of requests (default 1).
    #[serde(default)]
    weight: Option<serde_json::Number>,
}

/// A JSON header object, in file order (a map would sort or shuffle it).
struct OrderedHeaders(Vec<(String, Option<Vec<String>>)>);

impl<'de> Deserialize<'de> for OrderedHeaders {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<OrderedHeaders, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedHeaders;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of header names to arrays of values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderedHeaders, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    out.push(entry);
                }
                Ok(OrderedHeaders(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Reads at most `limit` bytes of `path`, failing beyond it. Reading with a
/// cap (not trusting the file's size) keeps `/dev/zero` and growing files
/// harmless.
pub fn read_limited(path: &Path, limit: usize) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    if let Ok(meta) = file.metadata() {
        if meta.is_dir() {
            return Err("it is a directory".into());
        }
        if meta.len() > limit as u64 {
            return Err("it is larger than 32 MiB; pelt holds bodies in memory".into());
        }
    }
    let mut body = Vec::new();
    file.take(limit as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| e.to_string())?;
    if body.len() > limit {
        return Err("it is larger than 32 MiB; pelt holds bodies in memory".into());
    }
    Ok(body)
}

fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Trimmed lines with their 1-based numbers, without blank lines and `#`
/// comments.
fn meaningful_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim()))
        .filter(|(_, line)| !line.is_empty() && !line.starts_with('#'))
}

/// The first whitespace-separated word of a trimmed line and the trimmed
/// rest, or `None` for an empty line.
fn split_word(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_start();
    if line.is_empty() {
        return None;
    }
    match line.find(char::is_whitespace) {
        Some(i) => Some((&line[..i], line[i..].trim())),
        None => Some((line, "")),
    }
}

/// A method as written in the line formats: ASCII capital letters. Stricter
/// than an RFC 9110 token on purpose, so that `GET http://...` is told
/// apart from a header line or a URL with a stray space.
fn is_method_word(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|b| b.is_ascii_uppercase())
}

/// Does a line start a new vegeta target (`METHOD something`)?
fn starts_target(line: &str) -> bool {
    split_word(line).is_some_and(|(word, rest)| is_method_word(word) && !rest.is_empty())
}

/// RFC 9110 token characters: what a method or header name may contain.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn check_header(name: &str, value: &str) -> Result<(), String> {
    if name.is_empty() || !name.bytes().all(is_token_byte) {
        return Err(format!(
            "expected a header name made of letters, digits and -, like X-Request-Id, found {}",
            quote(name)
        ));
    }
    if value.contains(['\r', '\n', '\0']) {
        return Err(format!(
            "the value of header {} contains a line break or NUL, which would split the request",
            quote(name)
        ));
    }
    Ok(())
}

/// Largest weight of one target.
pub const MAX_WEIGHT: u32 = 1_000_000;

/// A target's weight: a whole number from 1 to [`MAX_WEIGHT`].
fn check_weight(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(w @ 1..=MAX_WEIGHT) => Ok(w),
        _ => Err(format!(
            "expected a weight from 1 to {MAX_WEIGHT}, found {}; a weight is a whole number, \
             relative to the other targets' (remove a target to send it nothing)",
            quote(text)
        )),
    }
}

/// A line of the plain format with a weight: `DIGITS URL`.
fn weighted_plain_line(line: &str) -> bool {
    split_word(line).is_some_and(|(first, rest)| {
        !first.is_empty()
            && first.bytes().all(|b| b.is_ascii_digit())
            && split_word(rest).is_some_and(|(url, extra)| extra.is_empty() && url.contains("://"))
    })
}

/// A siege variable definition, `NAME=value`, as `(NAME, value)`.
fn variable_definition(line: &str) -> Option<(&str, &str)> {
    let (name, value) = line.split_once('=')?;
    let name = name.trim();
    let mut bytes = name.bytes();
    let first = bytes.next()?;
    let ok = (first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    ok.then_some((name, value.trim()))
}

/// Expands siege's `$(NAME)` and `${NAME}`; a `$` followed by anything else
/// is kept as it is. Fails past `limit` bytes, so that variables doubling
/// each other cannot exhaust memory.
fn expand(s: &str, vars: &HashMap<String, String>, limit: usize) -> Result<String, String> {
    let too_long = || {
        format!(
            "the line is longer than {} KiB after expanding variables",
            limit >> 10
        )
    };
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let close = match after.as_bytes().first() {
            Some(b'(') => ')',
            Some(b'{') => '}',
            _ => {
                out.push('$');
                rest = after;
                continue;
            }
        };
        // The opening bracket is one ASCII byte.
        let inner = &after[1..];
        let end = inner.find(close).ok_or_else(|| {
            format!(
                "unterminated variable reference {}; write $(NAME) or ${{NAME}}",
                quote(&rest[i..])
            )
        })?;
        let name = &inner[..end];
        let value = vars.get(name).ok_or_else(|| {
            format!(
                "undefined variable {}; define it on an earlier line, like NAME=http://127.0.0.1:8080",
                quote(name)
            )
        })?;
        if out.len() + value.len() > limit {
            return Err(too_long());
        }
        out.push_str(value);
        rest = &inner[end + 1..];
    }
    out.push_str(rest);
    if out.len() > limit {
        return Err(too_long());
    }
    Ok(out)
}

/// A message from elsewhere (serde) that may quote user text: control
/// characters escaped, so it stays one line, and shortened.
fn one_line(s: &str) -> String {
    const MAX: usize = 200;
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == MAX {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// User text for an error message: quoted, escaped (so the message stays
/// one line) and shortened.
fn quote(s: &str) -> String {
    const MAX: usize = 60;
    let mut out = String::from("'");
    for (i, c) in s.chars().enumerate() {
        if i == MAX {
            out.push('…');
            break;
        }
        out.extend(c.escape_debug());
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A scratch directory removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> TempDir {
            let path = std::env::temp_dir().join(format!(
                "pelt-targets-{name}-{}-{:?}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos()
            ));
            std::fs::create_dir_all(&path).unwrap();
            TempDir(path)
        }

        fn write(&self, name: &str, content: &[u8]) {
            std::fs::write(self.0.join(name), content).unwrap();
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn nowhere() -> &'static Path {
        Path::new("/nonexistent-pelt-targets-dir")
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn target(method: &str, u: &str, headers: &[(&str, &str)], body: &[u8]) -> Target {
        Target {
            method: method.into(),
            url: url(u),
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            body: body.to_vec(),
            weight: 1,
        }
    }

    fn err(text: &str, format: TargetsFormat) -> String {
        let e = parse(text, format, "targets.txt", nowhere()).unwrap_err();
        let s = e.to_string();
        assert!(!s.contains('\n'), "error is not one line: {s}");
        s
    }

    // ---- plain ----

    #[test]
    fn plain_one_get_per_url_skipping_comments_and_blanks() {
        let text = "\u{feff}# my targets\r\nhttp://127.0.0.1:8080/a\r\n\r\n  https://example.com/b?x=1  \n#http://skipped/\nhttp://[::1]:9000\n";
        let got = parse(text, TargetsFormat::Plain, "t", nowhere()).unwrap();
        assert_eq!(
            got,
            vec![
                target("GET", "http://127.0.0.1:8080/a", &[], b""),
                target("GET", "https://example.com/b?x=1", &[], b""),
                target("GET", "http://[::1]:9000/", &[], b""),
            ]
        );
    }

    #[test]
    fn plain_errors_name_file_and_line() {
        let e = err("http://a/\n\nfoo\n", TargetsFormat::Plain);
        assert!(
            e.starts_with("targets.txt:3: expected a URL like http://host/path, found 'foo'"),
            "{e}"
        );
        let e = err("ftp://a/x\n", TargetsFormat::Plain);
        assert!(e.starts_with("targets.txt:1: expected a URL"), "{e}");
        assert!(e.contains("only http:// and https://"), "{e}");
        let e = err("# c\nhttp://a/ POST x=1\n", TargetsFormat::Plain);
        assert!(e.starts_with("targets.txt:2: "), "{e}");
        let e = err("http://a:99999/\n", TargetsFormat::Plain);
        assert!(
            e.starts_with("targets.txt:1: ") && e.contains("port"),
            "{e}"
        );
        assert_eq!(
            err("# only a comment\n\n", TargetsFormat::Plain),
            "targets.txt: no targets found; add one URL per line, like http://127.0.0.1:8080/"
        );
    }

    // ---- siege ----

    #[test]
    fn siege_methods_bodies_and_variables() {
        let dir = TempDir::new("siege");
        dir.write("form.txt", b"a=1&b=2\n");
        let text = "\
# siege urls
HOST=http://127.0.0.1:8080
API = ${HOST}/api
$(HOST)/index.html
$(API)/login POST name=jeff&lang=perl  x
$(API)/upload PUT <form.txt
$(API)/upload PUT < form.txt
http://other/ DELETE
http://other/price$5
";
        let got = parse(text, TargetsFormat::Siege, "urls.txt", &dir.0).unwrap();
        let form = ("Content-Type", "application/x-www-form-urlencoded");
        assert_eq!(
            got,
            vec![
                target("GET", "http://127.0.0.1:8080/index.html", &[], b""),
                target(
                    "POST",
                    "http://127.0.0.1:8080/api/login",
                    &[form],
                    b"name=jeff&lang=perl  x"
                ),
                target(
                    "PUT",
                    "http://127.0.0.1:8080/api/upload",
                    &[form],
                    b"a=1&b=2\n"
                ),
                target(
                    "PUT",
                    "http://127.0.0.1:8080/api/upload",
                    &[form],
                    b"a=1&b=2\n"
                ),
                target("DELETE", "http://other/", &[], b""),
                target("GET", "http://other/price$5", &[], b""),
            ]
        );
    }

    #[test]
    fn siege_errors_name_file_and_line() {
        let e = err("http://a/\n$(HOST)/x\n", TargetsFormat::Siege);
        assert!(
            e.starts_with("targets.txt:2: undefined variable 'HOST'; define it"),
            "{e}"
        );
        // A variable is only visible after its definition.
        let e = err("$(H)/x\nH=http://a\n", TargetsFormat::Siege);
        assert!(
            e.starts_with("targets.txt:1: undefined variable 'H'"),
            "{e}"
        );
        let e = err("H=http://a\n${H/x\n", TargetsFormat::Siege);
        assert!(
            e.starts_with("targets.txt:2: unterminated variable reference"),
            "{e}"
        );
        let e = err("http://a/ post x=1\n", TargetsFormat::Siege);
        assert!(
            e.starts_with(
                "targets.txt:1: expected a method like POST or PUT after the URL, found 'post'"
            ),
            "{e}"
        );
        let e = err("\n\nhttp://a/ POST <missing.json\n", TargetsFormat::Siege);
        assert!(
            e.starts_with(
                "targets.txt:3: cannot read the body file '/nonexistent-pelt-targets-dir/missing.json'"
            ),
            "{e}"
        );
        let e = err("http://a/ POST <\n", TargetsFormat::Siege);
        assert!(
            e.starts_with("targets.txt:1: expected a file name after '<'"),
            "{e}"
        );
        let e = err("localhost/x POST a=b\n", TargetsFormat::Siege);
        assert!(
            e.starts_with(
                "targets.txt:1: expected a URL like http://host/path, found 'localhost/x'"
            ),
            "{e}"
        );
        let e = err("E=\n$(E)\n", TargetsFormat::Siege);
        assert!(e.starts_with("targets.txt:2: expected a URL"), "{e}");
    }

    #[test]
    fn siege_variables_cannot_blow_up() {
        let mut text = String::from("A=xxxxxxxxxxxxxxxx\n");
        for i in 0..40 {
            text.push_str(&format!("V{}=$({})$({})\n", i, prev(i), prev(i)));
        }
        fn prev(i: usize) -> String {
            if i == 0 {
                "A".into()
            } else {
                format!("V{}", i - 1)
            }
        }
        let e = err(&text, TargetsFormat::Siege);
        assert!(e.contains("longer than 64 KiB after expanding"), "{e}");
    }

    #[test]
    fn body_size_is_limited() {
        let dir = TempDir::new("big");
        let big = std::fs::File::create(dir.0.join("big.bin")).unwrap();
        big.set_len(MAX_BODY as u64 + 1).unwrap();
        drop(big);
        let e = parse(
            "http://a/ POST <big.bin\n",
            TargetsFormat::Siege,
            "t",
            &dir.0,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("larger than 32 MiB"), "{e}");
        let e = parse(
            "POST http://a/\n@big.bin\n",
            TargetsFormat::VegetaHttp,
            "t",
            &dir.0,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(2));
        let e = parse(
            "POST http://a/\n@.\n",
            TargetsFormat::VegetaHttp,
            "t",
            &dir.0,
        )
        .unwrap_err();
        assert!(e.message.contains("directory"), "{e}");
    }

    #[test]
    fn total_body_size_is_limited() {
        let dir = TempDir::new("total");
        dir.write("b.bin", &vec![7u8; 16 << 20]);
        let one = "POST http://a/\n@b.bin\n\n";
        let ok = one.repeat(MAX_TOTAL_BODY / (16 << 20));
        let got = parse(&ok, TargetsFormat::VegetaHttp, "t", &dir.0).unwrap();
        assert_eq!(got.len(), 16);
        let e = parse(&(ok + one), TargetsFormat::VegetaHttp, "t", &dir.0).unwrap_err();
        assert_eq!(e.line, Some(50));
        assert!(e.message.contains("add up to more than 256 MiB"), "{e}");
    }

    // ---- vegeta http ----

    #[test]
    fn vegeta_http_headers_and_bodies() {
        let dir = TempDir::new("vegeta");
        dir.write("body.json", b"{\"a\":1}");
        let text = "\
# first
GET http://127.0.0.1:8080/a
X-Account-ID: 8675309
X-Many: 1
X-Many:  2 : with colon
Host: example.com

  # comment between targets

POST https://127.0.0.1/b
Content-Type: application/json
# a comment among headers
@body.json
DELETE http://127.0.0.1:8080/c
HEAD http://127.0.0.1:8080/d
Empty:
";
        let got = parse(text, TargetsFormat::VegetaHttp, "targets.http", &dir.0).unwrap();
        assert_eq!(
            got,
            vec![
                target(
                    "GET",
                    "http://127.0.0.1:8080/a",
                    &[
                        ("X-Account-ID", "8675309"),
                        ("X-Many", "1"),
                        ("X-Many", "2 : with colon"),
                        ("Host", "example.com"),
                    ],
                    b""
                ),
                target(
                    "POST",
                    "https://127.0.0.1/b",
                    &[("Content-Type", "application/json")],
                    b"{\"a\":1}"
                ),
                target("DELETE", "http://127.0.0.1:8080/c", &[], b""),
                target("HEAD", "http://127.0.0.1:8080/d", &[("Empty", "")], b""),
            ]
        );
    }

    #[test]
    fn vegeta_http_errors_name_file_and_line() {
        use TargetsFormat::VegetaHttp as H;
        let e = err("GET http://a/\nBad Header: x\n", H);
        assert!(
            e.starts_with("targets.txt:2: expected a header name made of letters"),
            "{e}"
        );
        let e = err("GET http://a/\nno colon here\n", H);
        assert!(
            e.starts_with("targets.txt:2: expected a header like Name: value"),
            "{e}"
        );
        let e = err("get http://a/\n", H);
        assert!(
            e.starts_with("targets.txt:1: expected a METHOD URL line like GET http://host/path, found 'get http://a/'"),
            "{e}"
        );
        let e = err("GET\n", H);
        assert!(
            e.starts_with("targets.txt:1: expected a METHOD URL line"),
            "{e}"
        );
        let e = err("GET http://a/ b\n", H);
        assert!(
            e.starts_with("targets.txt:1: expected the line to end after the URL, found 'b'"),
            "{e}"
        );
        let e = err("GET /relative\n", H);
        assert!(
            e.starts_with("targets.txt:1: expected a URL like http://host/path, found '/relative'"),
            "{e}"
        );
        let e = err("POST http://a/\n\n\nX: y\n", H);
        assert!(
            e.starts_with("targets.txt:4: expected a METHOD URL line"),
            "{e}"
        );
        let e = err("POST http://a/\nX: 1\n@nope.bin\n", H);
        assert!(
            e.starts_with("targets.txt:3: cannot read the body file"),
            "{e}"
        );
        assert!(e.contains("nope.bin"), "{e}");
        let e = err("POST http://a/\n@\n", H);
        assert!(
            e.starts_with("targets.txt:2: expected a file name after '@'"),
            "{e}"
        );
        let e = err("POST http://a/\nX: a\u{0}b\n", H);
        assert!(
            e.starts_with("targets.txt:2: the value of header 'X' contains a line break"),
            "{e}"
        );
        let e = err("POST http://a/\nX: a\rb\n", H);
        assert!(
            e.starts_with("targets.txt:2: the value of header 'X' contains a line break"),
            "{e}"
        );
        assert!(err("# nothing\n", H).starts_with("targets.txt: no targets found"));
    }

    // ---- vegeta json ----

    #[test]
    fn vegeta_json_lines() {
        let text = r#"{"method":"GET","url":"http://127.0.0.1:8080/a"}

{"url":"https://example.com/b","method":"POST","header":{"Zeta":["1","2"],"Alpha":["x"],"Content-Type":["text/plain"]},"body":"aGVsbG8AAQ=="}
{"method":"PURGE","url":"http://h/c","header":null,"body":null}
{"method":"get","url":"http://h/d","header":{"A":null,"B":[]},"body":""}
"#;
        let got = parse(text, TargetsFormat::VegetaJson, "t.json", nowhere()).unwrap();
        assert_eq!(
            got,
            vec![
                target("GET", "http://127.0.0.1:8080/a", &[], b""),
                target(
                    "POST",
                    "https://example.com/b",
                    &[
                        ("Zeta", "1"),
                        ("Zeta", "2"),
                        ("Alpha", "x"),
                        ("Content-Type", "text/plain"),
                    ],
                    b"hello\x00\x01"
                ),
                target("PURGE", "http://h/c", &[], b""),
                target("get", "http://h/d", &[], b""),
            ]
        );
    }

    #[test]
    fn vegeta_json_errors_name_file_and_line() {
        use TargetsFormat::VegetaJson as J;
        let e = err(
            "{\"method\":\"GET\",\"url\":\"http://a/\"}\n{\"method\":\"GET\"\n",
            J,
        );
        assert!(e.starts_with("targets.txt:2: invalid JSON target: "), "{e}");
        let e = err("{\"url\":\"http://a/\"}\n", J);
        assert!(
            e.starts_with("targets.txt:1: the target has no \"method\""),
            "{e}"
        );
        let e = err("{\"method\":\"GET\"}\n", J);
        assert!(
            e.starts_with("targets.txt:1: the target has no \"url\""),
            "{e}"
        );
        let e = err("{\"method\":\"G T\",\"url\":\"http://a/\"}\n", J);
        assert!(
            e.starts_with("targets.txt:1: expected a method like GET or POST, found 'G T'"),
            "{e}"
        );
        let e = err("{\"method\":\"GET\",\"url\":\"nope\"}\n", J);
        assert!(
            e.starts_with("targets.txt:1: expected a URL like http://host/path, found 'nope'"),
            "{e}"
        );
        let e = err(
            "{\"method\":\"GET\",\"url\":\"http://a/\",\"body\":\"not base64!\"}\n",
            J,
        );
        assert!(
            e.starts_with("targets.txt:1: \"body\" must be base64"),
            "{e}"
        );
        let e = err(
            "{\"method\":\"GET\",\"url\":\"http://a/\",\"header\":{\"X\":[\"a\\r\\nEvil: 1\"]}}\n",
            J,
        );
        assert!(
            e.starts_with("targets.txt:1: the value of header 'X' contains a line break"),
            "{e}"
        );
        let e = err(
            "{\"method\":\"GET\",\"url\":\"http://a/\",\"header\":{\"X Y\":[\"1\"]}}\n",
            J,
        );
        assert!(
            e.starts_with("targets.txt:1: expected a header name"),
            "{e}"
        );
        let e = err(
            "{\"method\":\"GET\",\"url\":\"http://a/\",\"header\":{\"X\":\"1\"}}\n",
            J,
        );
        assert!(
            e.starts_with("targets.txt:1: invalid JSON target: invalid type"),
            "{e}"
        );
        let e = err(
            "{\"method\":\"GET\",\"url\":\"http://a/\",\"headers\":{}}\n",
            J,
        );
        assert!(
            e.starts_with("targets.txt:1: invalid JSON target: unknown field `headers`"),
            "{e}"
        );
        let e = err("\n[1,2]\n", J);
        assert!(
            e.starts_with("targets.txt:2: expected a JSON object"),
            "{e}"
        );
        let e = err("{\"method\":\"GET\",\"url\":\"http://a/\"} trailing\n", J);
        assert!(
            e.starts_with("targets.txt:1: invalid JSON target: trailing characters"),
            "{e}"
        );
    }

    // ---- detection ----

    #[test]
    fn weights_in_plain_and_json_lines() {
        let weighted = |w: u32, u: &str| Target {
            weight: w,
            ..target("GET", u, &[], b"")
        };
        let text = "3 http://a/x\nhttp://a/y\n  10\thttp://a/z?q=1\n";
        assert_eq!(detect(text), TargetsFormat::Plain);
        let got = parse(text, detect(text), "t", nowhere()).unwrap();
        assert_eq!(
            got,
            vec![
                weighted(3, "http://a/x"),
                weighted(1, "http://a/y"),
                weighted(10, "http://a/z?q=1"),
            ]
        );
        let text = "{\"method\":\"GET\",\"url\":\"http://a/x\",\"weight\":5}\n{\"method\":\"GET\",\"url\":\"http://a/y\"}\n";
        let got = parse(text, detect(text), "t", nowhere()).unwrap();
        assert_eq!(
            got,
            vec![weighted(5, "http://a/x"), weighted(1, "http://a/y")]
        );
        // Bad weights name the line and the range.
        for bad in ["0 http://a/", "1000001 http://a/", "99999999999 http://a/"] {
            let e = err(&format!("http://a/\n{bad}\n"), TargetsFormat::Plain);
            assert!(
                e.starts_with("targets.txt:2: expected a weight from 1 to 1000000"),
                "{bad}: {e}"
            );
        }
        let e = err("3 http://a/ extra\n", TargetsFormat::Plain);
        assert!(e.contains("percent-encode spaces"), "{e}");
        for bad in ["0", "2.5", "-3"] {
            let e = err(
                &format!("{{\"method\":\"GET\",\"url\":\"http://a/\",\"weight\":{bad}}}\n"),
                TargetsFormat::VegetaJson,
            );
            assert!(e.starts_with("targets.txt:1: "), "{bad}: {e}");
            assert!(e.contains("weight"), "{bad}: {e}");
        }
        // A number before a URL never turns a siege file plain, nor the
        // other way round.
        assert_eq!(
            detect("3 http://a/\nhttp://a/ POST x=1\n"),
            TargetsFormat::Siege
        );
        assert_eq!(detect("http://a/\nHOST=x\n"), TargetsFormat::Siege);
    }

    #[test]
    fn detects_each_format() {
        use TargetsFormat::*;
        assert_eq!(detect("http://a/\nhttps://b/x\n"), Plain);
        assert_eq!(detect(""), Plain);
        assert_eq!(detect("# only comments\n\n"), Plain);
        assert_eq!(detect("# c\nhttp://a/\nhttp://a/ POST x=1\n"), Siege);
        assert_eq!(detect("HOST=http://a\n$(HOST)/x\n"), Siege);
        assert_eq!(detect("HOST = http://a\n$(HOST)/x\n"), Siege);
        assert_eq!(detect("GET http://a/?x=1\n"), VegetaHttp);
        assert_eq!(detect("http://a/\n${HOST}/x\n"), Siege);
        assert_eq!(detect("http://a/ PUT <body.json\n"), Siege);
        assert_eq!(detect("# c\n\nGET http://a/\nX: y\n"), VegetaHttp);
        assert_eq!(detect("PURGE http://a/\n"), VegetaHttp);
        assert_eq!(
            detect("\u{feff}\n  {\"method\":\"GET\",\"url\":\"http://a/\"}\n"),
            VegetaJson
        );
        assert_eq!(detect("# c\n{\"method\":\"GET\"}"), VegetaJson);
        // What detection picks, parse accepts.
        for text in [
            "http://a/\nhttps://b/x\n",
            "HOST=http://a\n$(HOST)/x POST a=b\n",
            "GET http://a/\nX: y\n\nPOST http://a/b\n",
            "{\"method\":\"GET\",\"url\":\"http://a/\"}\n",
        ] {
            parse(text, detect(text), "t", nowhere()).unwrap();
        }
    }

    #[test]
    fn format_names_round_trip() {
        for f in TargetsFormat::ALL {
            assert_eq!(f.name().parse::<TargetsFormat>(), Ok(f));
            assert_eq!(f.to_string(), f.name());
        }
        assert_eq!("vegeta-json".parse(), Ok(TargetsFormat::VegetaJson));
        assert!("yaml"
            .parse::<TargetsFormat>()
            .unwrap_err()
            .contains("plain, siege"));
    }

    #[test]
    fn read_detects_and_resolves_bodies_next_to_the_file() {
        let dir = TempDir::new("read");
        dir.write("b.txt", b"x=1");
        dir.write("urls.txt", b"http://a/ POST <b.txt\n");
        let got = read(&dir.0.join("urls.txt"), None).unwrap();
        assert_eq!(got[0].body, b"x=1");
        dir.write("bad.txt", b"http://a/\n\xff\n");
        let e = read(&dir.0.join("bad.txt"), None).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("not UTF-8"), "{e}");
        let e = read(&dir.0.join("missing.txt"), None).unwrap_err();
        assert_eq!(e.line, None);
        assert!(
            e.to_string()
                .contains("missing.txt: cannot read the targets file"),
            "{e}"
        );
    }

    #[test]
    fn long_input_is_shortened_in_errors() {
        let line = "x".repeat(10_000);
        let e = err(&line, TargetsFormat::Plain);
        assert!(e.len() < 400, "{e}");
    }

    // ---- never panic ----

    /// Text built from the pieces each format is made of, to reach deep
    /// paths more often than uniform random strings do.
    fn pieces() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("http://h/".to_string()),
            Just("https://[::1]:8/".to_string()),
            Just("GET ".to_string()),
            Just("POST ".to_string()),
            Just(" PUT ".to_string()),
            Just("<".to_string()),
            Just("@".to_string()),
            Just("$(".to_string()),
            Just("${".to_string()),
            Just(")".to_string()),
            Just("}".to_string()),
            Just("H=".to_string()),
            Just("H".to_string()),
            Just("X: v".to_string()),
            Just("#".to_string()),
            Just("\n".to_string()),
            Just("\r\n".to_string()),
            Just("\r".to_string()),
            Just("{\"method\":\"GET\",\"url\":\"http://h/\"".to_string()),
            Just(",\"header\":{\"A\":[\"1\"]}".to_string()),
            Just(",\"body\":\"AA==\"".to_string()),
            Just("}".to_string()),
            Just("\u{feff}".to_string()),
            Just("é".to_string()),
            "[ -~]{0,6}",
        ];
        proptest::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    fn never_panics(text: &str) {
        for format in TargetsFormat::ALL {
            if let Err(e) = parse(text, format, "f.txt", nowhere()) {
                let s = e.to_string();
                assert!(s.starts_with("f.txt"), "{s}");
                assert!(!s.contains('\n') && !s.contains('\r'), "{s:?}");
            }
        }
        let _ = detect(text);
    }

    proptest! {
        #[test]
        fn parse_never_panics_on_arbitrary_text(text in any::<String>()) {
            never_panics(&text);
        }

        #[test]
        fn parse_never_panics_on_near_miss_text(text in pieces()) {
            never_panics(&text);
        }
    }
}
