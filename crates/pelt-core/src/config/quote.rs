//! User text inside one-line error messages.

/// A message from elsewhere (serde) that may quote user text: control
/// characters escaped, so it stays one line, and shortened.
pub(crate) fn one_line(s: &str) -> String {
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
pub(crate) fn quote(s: &str) -> String {
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
