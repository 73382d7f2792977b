//! `pelt import targets FILE`: a targets file (a URL list, siege's urls
//! file, vegeta's http or JSON-lines format) as a scenario of one flow,
//! its requests in file order, ready to gain extraction and checks.

use crate::har::quote;
use pelt_core::Target;
use std::fmt::Write;

/// The scenario text for `targets`, read from `file`.
pub fn scenario(targets: &[Target], file: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Imported by `pelt import targets` from {file}: one flow, the requests"
    );
    let _ = writeln!(
        out,
        "# in the file's order. Add extract, check and think to its steps, and"
    );
    let _ = writeln!(
        out,
        "# {{{{...}}}} templates to their paths and bodies; see docs/SCENARIOS.md."
    );
    let _ = writeln!(out, "\n[[flow]]\nname = \"targets\"");
    for (i, t) in targets.iter().enumerate() {
        let _ = writeln!(out, "\n[[flow.step]]");
        let _ = writeln!(
            out,
            "name = {}",
            quote(&format!("{} {} {}", i + 1, t.method, t.url.path_and_query))
        );
        if t.method != "GET" {
            let _ = writeln!(out, "method = {}", quote(&t.method));
        }
        // A `{{` in a recorded URL or body is text, not a hole.
        let _ = writeln!(
            out,
            "url = {}",
            quote(&t.url.to_string().replace("{{", "{ {"))
        );
        if !t.headers.is_empty() {
            let list: Vec<String> = t
                .headers
                .iter()
                .map(|(n, v)| format!("{} = {}", quote(n), quote(v)))
                .collect();
            let _ = writeln!(out, "headers = {{ {} }}", list.join(", "));
        }
        if !t.body.is_empty() {
            let body = String::from_utf8_lossy(&t.body).replace("{{", "{ {");
            let _ = writeln!(out, "body = {}", quote(&body));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pelt_core::Url;

    #[test]
    fn targets_become_steps_that_compile() {
        let mut post = Target::get(Url::parse("http://127.0.0.1:1/api?a=1").unwrap());
        post.method = "POST".into();
        post.headers = vec![("Content-Type".into(), "application/json".into())];
        post.body = br#"{"q":"{{x}}"}"#.to_vec();
        let text = scenario(
            &[
                Target::get(Url::parse("http://127.0.0.1:1/").unwrap()),
                post,
            ],
            "t.txt",
        );
        assert!(text.contains("method = \"POST\""), "{text}");
        let dir = tempfile::tempdir().unwrap();
        let s = crate::Scenario::compile(&text, &dir.path().join("s.toml")).unwrap();
        assert_eq!(s.flows[0].steps.len(), 2);
        let (mut out, mut scratch) = (Vec::new(), Vec::new());
        let mut vu = s.vu(0, 1);
        s.render(1, &mut vu, true, b"", &mut out, &mut scratch);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("POST /api?a=1 HTTP/1.1\r\n"), "{text}");
        assert!(text.ends_with(r#"{"q":"{ {x}}"}"#), "{text}");
    }
}
