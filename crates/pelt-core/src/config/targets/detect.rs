//! Guessing a targets file's format from its content.

use super::lines::{is_method_word, meaningful_lines, split_word, strip_bom, variable_definition};
use super::plain::weighted_plain_line;
use super::TargetsFormat;

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

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::targets::testing::*;

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
}
