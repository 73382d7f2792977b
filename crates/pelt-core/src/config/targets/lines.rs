//! Reading a targets file line by line, shared by the line formats and
//! by format detection.

pub(super) fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Trimmed lines with their 1-based numbers, without blank lines and `#`
/// comments.
pub(super) fn meaningful_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim()))
        .filter(|(_, line)| !line.is_empty() && !line.starts_with('#'))
}

/// The first whitespace-separated word of a trimmed line and the trimmed
/// rest, or `None` for an empty line.
pub(super) fn split_word(line: &str) -> Option<(&str, &str)> {
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
pub(super) fn is_method_word(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|b| b.is_ascii_uppercase())
}

/// A siege variable definition, `NAME=value`, as `(NAME, value)`.
pub(super) fn variable_definition(line: &str) -> Option<(&str, &str)> {
    let (name, value) = line.split_once('=')?;
    let name = name.trim();
    let mut bytes = name.bytes();
    let first = bytes.next()?;
    let ok = (first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    ok.then_some((name, value.trim()))
}
