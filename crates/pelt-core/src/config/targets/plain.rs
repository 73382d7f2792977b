//! The plain format: one absolute URL per line, each a `GET`, optionally
//! after a weight (`3 http://host/path`).

use super::lines::{meaningful_lines, split_word};
use super::parser::{check_weight, Parser};
use super::TargetsError;
use crate::config::quote::quote;
use crate::config::Target;

impl Parser<'_> {
    /// `URL` or `WEIGHT URL` per line.
    pub(super) fn plain(&mut self, text: &str) -> Result<Vec<Target>, TargetsError> {
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
}

/// A line of the plain format with a weight: `DIGITS URL`.
pub(super) fn weighted_plain_line(line: &str) -> bool {
    split_word(line).is_some_and(|(first, rest)| {
        !first.is_empty()
            && first.bytes().all(|b| b.is_ascii_digit())
            && split_word(rest).is_some_and(|(url, extra)| extra.is_empty() && url.contains("://"))
    })
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::targets::testing::*;

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
        assert!(
            e.contains("only http://, https://, ws:// and wss://"),
            "{e}"
        );
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
}
