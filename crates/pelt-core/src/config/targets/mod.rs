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
//! bad line fails before the run starts: URLs with
//! [`Url::parse`](crate::Url::parse), methods and headers with
//! [`check_method`](crate::check_method) and
//! [`check_header`](crate::check_header) (the rules `-m` and `-H` use),
//! body sizes against [`MAX_BODY`](crate::config::MAX_BODY).
//!
//! Weights (`Target::weight`, 1 to [`MAX_WEIGHT`], default 1) can be given
//! in the plain format (a number before the URL: siege lines start with
//! their URL, so the two cannot be confused) and in JSON lines. siege's
//! format has no room for one (a trailing token is part of the body), nor
//! has vegeta's http format; repeat a line there to send it more often.

mod detect;
mod http;
mod json;
mod lines;
mod parser;
mod plain;
mod siege;
// Here, beside the request line it reads, not in `config`: `config` is
// below `targets` (crates/pelt/tests/layers.rs).
impl crate::config::SessionOptions {
    /// The session `pelt run --login 'METHOD URL [BODY|<FILE]'` makes,
    /// by the same rule: the request line read as a targets file's siege
    /// line (a body is sent as `application/x-www-form-urlencoded`, a
    /// `<FILE` body read from the current directory), and cookies on, so
    /// that each sender keeps what its login set. A run made with it
    /// compares with the CLI's like with like.
    ///
    /// ```
    /// let s = pelt_core::SessionOptions::login("POST http://127.0.0.1:8080/login user=a&pass=b")?;
    /// assert!(s.cookies);
    /// let login = s.login.unwrap();
    /// assert_eq!(login.method, "POST");
    /// assert!(login.headers.contains(&("Content-Type".into(), "application/x-www-form-urlencoded".into())));
    /// # Ok::<(), pelt_core::config::WordError>(())
    /// ```
    pub fn login(request: &str) -> Result<crate::config::SessionOptions, crate::config::WordError> {
        Ok(crate::config::SessionOptions {
            cookies: true,
            login: Some(request_line(request)?),
        })
    }
}

/// `METHOD URL [BODY|<FILE]` (a login): a targets file's siege line,
/// method first as the request line reads. Relative `<FILE`s are from
/// the current directory.
pub fn request_line(text: &str) -> Result<Target, crate::config::WordError> {
    let bad = |why: &str| crate::config::WordError::Request(why.to_string());
    let text = text.trim();
    if text.contains('\n') {
        return Err(bad("expected one line"));
    }
    let mut words = text.splitn(3, char::is_whitespace);
    let (Some(method), Some(url)) = (words.next(), words.next()) else {
        return Err(bad("expected a method and a URL"));
    };
    if method.contains("://") || !method.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(bad(&format!(
            "expected a method like POST first, found {method:?}"
        )));
    }
    let rest = words.next().unwrap_or("").trim();
    let line = format!("{url} {} {rest}", method.to_ascii_uppercase());
    let mut targets = parse(&line, TargetsFormat::Siege, "request", Path::new("."))
        // Its message alone: the file name and line (`request:1`) are
        // not the user's.
        .map_err(|e| bad(&e.message))?;
    match targets.len() {
        1 => Ok(targets.remove(0)),
        _ => Err(bad("expected one request")),
    }
}

#[cfg(test)]
mod testing;

pub use detect::detect;
pub use parser::{read_limited, ReadError, MAX_WEIGHT};

use crate::config::Target;
use lines::strip_bom;
use parser::Parser;
use std::fmt;
use std::io::Read;
use std::path::Path;
use std::str::FromStr;

/// Largest targets file: pelt holds every target in memory.
pub const MAX_TARGETS_FILE: usize = 256 << 20;
/// Largest sum of all bodies in one targets file (each body is also held to
/// [`MAX_BODY`](crate::config::MAX_BODY)): a body file shared by many lines is copied into each.
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

/// A targets format name that is none of [`TargetsFormat::ALL`]'s (as
/// given, escaped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown targets format '{0}'; use plain, siege, http or json")]
pub struct UnknownTargetsFormat(pub String);

impl FromStr for TargetsFormat {
    type Err = UnknownTargetsFormat;

    /// `plain`, `siege`, `http` (or `vegeta-http`), `json` (or
    /// `vegeta-json`), in any case.
    fn from_str(s: &str) -> Result<TargetsFormat, UnknownTargetsFormat> {
        match s.to_ascii_lowercase().as_str() {
            "plain" => Ok(TargetsFormat::Plain),
            "siege" => Ok(TargetsFormat::Siege),
            "http" | "vegeta-http" | "vegeta" => Ok(TargetsFormat::VegetaHttp),
            "json" | "vegeta-json" | "jsonl" => Ok(TargetsFormat::VegetaJson),
            _ => Err(UnknownTargetsFormat(s.escape_debug().to_string())),
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
    let mut p = Parser::new(file_name, base_dir);
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_request_line_is_method_url_body() {
        let t = request_line("POST http://127.0.0.1:1/login user=a&pass=b").unwrap();
        assert_eq!(t.method, "POST");
        assert_eq!(t.url.path_and_query, "/login");
        assert_eq!(t.body, b"user=a&pass=b");
        let t = request_line("get http://127.0.0.1:1/").unwrap();
        assert_eq!((t.method.as_str(), t.body.len()), ("GET", 0));
        for bad in [
            "",
            "POST",
            "http://h/ POST",
            "POST notaurl",
            "P0ST http://h/",
        ] {
            assert!(request_line(bad).is_err(), "{bad:?}");
        }
        // Issue 22 §8: a made-up file name must not show in the message.
        let e = request_line("POST notaurl").unwrap_err().to_string();
        assert!(!e.contains("request:1"), "{e}");
    }

    use super::*;
    use crate::targets::testing::*;
    use proptest::prelude::*;

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
            .to_string()
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
