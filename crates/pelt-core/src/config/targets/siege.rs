//! siege's urls file: `URL [METHOD [BODY | <FILE]]` per line, with
//! `NAME=value` variables used as `$(NAME)` or `${NAME}`.

use super::lines::{is_method_word, meaningful_lines, split_word, variable_definition};
use super::parser::Parser;
use super::{TargetsError, MAX_VARIABLE};
use crate::config::quote::quote;
use crate::config::{Target, MAX_BODY};
use std::collections::HashMap;

impl Parser<'_> {
    pub(super) fn siege(&mut self, text: &str) -> Result<Vec<Target>, TargetsError> {
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
}

/// Why a line's variables could not be expanded.
#[derive(Debug, thiserror::Error)]
enum ExpandError {
    /// `$(` or `${` without its closing bracket (the text from the `$`).
    #[error("unterminated variable reference {}; write $(NAME) or ${{NAME}}", quote(.0))]
    Unterminated(String),
    /// A name not defined on an earlier line.
    #[error(
        "undefined variable {}; define it on an earlier line, like NAME=http://127.0.0.1:8080",
        quote(.0)
    )]
    Undefined(String),
    /// The expanded line would pass `limit` bytes.
    #[error("the line is longer than {} KiB after expanding variables", .limit >> 10)]
    TooLong { limit: usize },
}

/// Expands siege's `$(NAME)` and `${NAME}`; a `$` followed by anything else
/// is kept as it is. Fails past `limit` bytes, so that variables doubling
/// each other cannot exhaust memory.
fn expand(s: &str, vars: &HashMap<String, String>, limit: usize) -> Result<String, ExpandError> {
    let too_long = || ExpandError::TooLong { limit };
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
        let end = inner
            .find(close)
            .ok_or_else(|| ExpandError::Unterminated(rest[i..].to_string()))?;
        let name = &inner[..end];
        let value = vars
            .get(name)
            .ok_or_else(|| ExpandError::Undefined(name.to_string()))?;
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

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::targets::testing::*;

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
}
