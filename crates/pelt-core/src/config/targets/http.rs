//! vegeta's http format: a `METHOD URL` line, then `Name: value` header
//! lines, then an optional `@FILE` body; a blank line ends a target.

use super::lines::{is_method_word, split_word};
use super::parser::Parser;
use super::TargetsError;
use crate::config::quote::quote;
use crate::config::{check_header, Target};

impl Parser<'_> {
    pub(super) fn vegeta_http(&mut self, text: &str) -> Result<Vec<Target>, TargetsError> {
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
}

/// Does a line start a new vegeta target (`METHOD something`)?
fn starts_target(line: &str) -> bool {
    split_word(line).is_some_and(|(word, rest)| is_method_word(word) && !rest.is_empty())
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::targets::testing::*;

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
}
