//! `repeat` and `for_each`: a step sent several times in a row, as many
//! as a value says (`repeat = "{{n}}"`, `repeat = 3`) or once per element
//! of a list an earlier step extracted (`for_each = "ids"`, a `pick =
//! "all"` extraction's comma-joined values), with `as = "name"` holding
//! the round's element (or, with `repeat`, its number from 1).
//!
//! Always bounded: at most [`MAX_ROUNDS`] rounds. A literal count above
//! it is refused at the start; a count read at run time that is above
//! it, or is not a number, fails the step (kind `extract`, an example
//! naming the value) instead of sending fewer or more requests than the
//! journey asked for without a word: a silently capped loop would be a
//! different journey measured under the same name.

use crate::template::{Template, VuVars};
use std::sync::atomic::AtomicU64;

/// The most rounds a step's `repeat` or `for_each` sends, per flow.
/// A thousand requests from one step of one flow is already a crawl, not
/// a user; a value above it is more likely a wrong extraction (a total,
/// a timestamp) than a loop anyone meant.
pub const MAX_ROUNDS: usize = 1000;

/// How many rounds a step sends.
#[derive(Debug, Clone, PartialEq)]
pub enum Count {
    /// `repeat`: a number, literal or rendered from a template.
    Times(Template),
    /// `for_each`: one round per comma-separated element of a variable.
    Each(usize),
}

/// A step's loop: its count and the variable each round sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Rounds {
    /// How many.
    pub count: Count,
    /// `as`: the slot set to the round's element (`for_each`) or number
    /// from 1 (`repeat`), if named.
    pub var: Option<usize>,
}

impl Rounds {
    /// How many rounds now, for `vu`: `list` receives the `for_each`
    /// list (copied: a round's own extraction may overwrite the
    /// variable). `Err`: why the count is unusable (not a number, above
    /// [`MAX_ROUNDS`]), for the step's failure.
    pub fn count(
        &self,
        vu: &mut VuVars,
        counter: &AtomicU64,
        list: &mut Vec<u8>,
    ) -> Result<usize, String> {
        list.clear();
        match &self.count {
            Count::Times(t) => {
                t.render(vu, counter, list);
                let text = String::from_utf8_lossy(list);
                let n: usize = text.trim().parse().map_err(|_| {
                    format!(
                        "repeat: {:?} is not a count (a whole number 0 to {MAX_ROUNDS})",
                        cut(&text)
                    )
                })?;
                if n > MAX_ROUNDS {
                    return Err(format!(
                        "repeat: {n} rounds is above the cap of {MAX_ROUNDS}; the step was not sent"
                    ));
                }
                Ok(n)
            }
            Count::Each(slot) => {
                if !vu.set[*slot] || vu.slots[*slot].is_empty() {
                    return Ok(0);
                }
                list.extend_from_slice(&vu.slots[*slot]);
                let n = list.iter().filter(|&&b| b == b',').count() + 1;
                if n > MAX_ROUNDS {
                    return Err(format!(
                        "for_each: the list has {n} elements, above the cap of {MAX_ROUNDS}; the step was not sent"
                    ));
                }
                Ok(n)
            }
        }
    }

    /// Starts round `round` (from 0): sets the `as` variable to its
    /// element of `list` (from `*at`, moved past it) or its number.
    pub fn enter(&self, round: usize, vu: &mut VuVars, list: &[u8], at: &mut usize) {
        let Some(slot) = self.var else { return };
        let value = &mut vu.slots[slot];
        value.clear();
        vu.set[slot] = true;
        match self.count {
            Count::Times(_) => {
                use std::io::Write;
                let _ = write!(value, "{}", round + 1);
            }
            Count::Each(_) => {
                let rest = &list[(*at).min(list.len())..];
                let end = rest.iter().position(|&b| b == b',').unwrap_or(rest.len());
                value.extend_from_slice(&rest[..end]);
                *at += end + 1;
            }
        }
    }
}

/// At most 40 characters of a value, for a message.
fn cut(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}
