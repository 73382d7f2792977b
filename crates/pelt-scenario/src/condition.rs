//! `when` and `skip_if`: whether a step is sent, from one variable,
//! compiled once into a slot and bytes to compare (no interpreter: a
//! condition is a slot read and a byte comparison).
//!
//! Forms: `"name"` (holds when the variable is set and neither empty,
//! `0` nor `false`), `"name == value"`, `"name != value"`; the value is
//! bare or in single or double quotes; `{{name}}` is read as `name`. The
//! variable is an earlier step's extraction, a feed's column, or the
//! built-in `iteration` or `vu`.

use crate::template::VuVars;
use std::collections::HashMap;

/// Which value a condition reads.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Var {
    Slot(usize),
    Iteration,
    Vu,
}

/// How it compares.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Test {
    Truthy,
    Equals(Vec<u8>),
    Differs(Vec<u8>),
}

/// A compiled `when` (or, negated, `skip_if`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    var: Var,
    test: Test,
    /// `skip_if`: the step is sent when the test fails.
    negate: bool,
}

impl Condition {
    /// Compiles `text` against the variables in `scope`; `negate` for
    /// `skip_if`. The error says what to write.
    pub(crate) fn compile(
        text: &str,
        scope: &HashMap<String, usize>,
        negate: bool,
    ) -> Result<Condition, String> {
        let (name, test) = match (text.split_once("=="), text.split_once("!=")) {
            (Some((n, v)), _) => (n, Test::Equals(unquote(v).into_bytes())),
            (None, Some((n, v))) => (n, Test::Differs(unquote(v).into_bytes())),
            (None, None) => (text, Test::Truthy),
        };
        let name = name
            .trim()
            .trim_start_matches("{{")
            .trim_end_matches("}}")
            .trim();
        let var = match name {
            "iteration" => Var::Iteration,
            "vu" => Var::Vu,
            n => Var::Slot(*scope.get(n).ok_or_else(|| {
                format!(
                    "condition {text:?}: unknown variable '{n}': name an earlier step's extract, \
                     a feed column (feed.column), iteration or vu, like \"id\", \
                     \"iteration == 1\" or \"cart != ''\""
                )
            })?),
        };
        Ok(Condition { var, test, negate })
    }

    /// Whether the step is sent, for `vu` now.
    pub fn holds(&self, vu: &VuVars) -> bool {
        let mut number = [0u8; 20];
        let value: &[u8] = match self.var {
            Var::Slot(s) if !vu.set[s] => b"",
            Var::Slot(s) => &vu.slots[s],
            Var::Iteration => digits(vu.iteration, &mut number),
            Var::Vu => digits(vu.vu, &mut number),
        };
        let ok = match &self.test {
            Test::Truthy => !matches!(value, b"" | b"0" | b"false"),
            Test::Equals(v) => value == v.as_slice(),
            Test::Differs(v) => value != v.as_slice(),
        };
        ok != self.negate
    }
}

/// `'x'`, `"x"` or `x`, trimmed.
fn unquote(v: &str) -> String {
    let v = v.trim();
    for q in ['\'', '"'] {
        if let Some(inner) = v.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    v.to_string()
}

/// `n` in decimal, in `buf`, without allocating.
fn digits(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vu(slots: Vec<&str>, iteration: u64) -> VuVars {
        VuVars {
            set: slots.iter().map(|s| !s.is_empty()).collect(),
            slots: slots.into_iter().map(|s| s.as_bytes().to_vec()).collect(),
            vu: 7,
            iteration,
            rng: fastrand::Rng::with_seed(1),
        }
    }

    #[test]
    fn conditions_read_a_slot_or_a_built_in() {
        let scope = HashMap::from([("cart".to_string(), 0)]);
        let c = |t: &str, neg| Condition::compile(t, &scope, neg).unwrap();
        assert!(c("cart", false).holds(&vu(vec!["42"], 1)));
        assert!(!c("cart", false).holds(&vu(vec![""], 1)));
        assert!(!c("{{cart}}", false).holds(&vu(vec!["false"], 1)));
        assert!(c("cart == '42'", false).holds(&vu(vec!["42"], 1)));
        assert!(c("cart != 42", false).holds(&vu(vec!["41"], 1)));
        assert!(c("iteration == 1", false).holds(&vu(vec![""], 1)));
        assert!(!c("iteration == 1", false).holds(&vu(vec![""], 10)));
        assert!(c("iteration == 1", true).holds(&vu(vec![""], 10)));
        assert!(c("vu == 7", false).holds(&vu(vec![""], 1)));
        assert!(Condition::compile("nope", &scope, false).is_err());
    }
}
