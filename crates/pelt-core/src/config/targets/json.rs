//! vegeta's JSON lines: one target object per line,
//! `{"method":"GET","url":"...","header":{"Name":["v"]},"body":"<base64>"}`,
//! plus pelt's optional `"weight": N`.

use super::lines::meaningful_lines;
use super::parser::{check_weight, Parser};
use super::TargetsError;
use crate::config::quote::{one_line, quote};
use crate::config::{check_header, check_method, Target, MAX_BODY};
use base64::Engine;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;

impl Parser<'_> {
    pub(super) fn vegeta_json(&mut self, text: &str) -> Result<Vec<Target>, TargetsError> {
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
            check_method(&method).map_err(|e| self.error(n, e))?;
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

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::targets::testing::*;

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
}
