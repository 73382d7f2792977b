//! Part of a run to report on (`--window 10s..50s`).

use super::*;

/// Part of a run, in seconds from the start of measurement: `10s..50s`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// Start, in seconds from the start of measurement (−∞ for the very start).
    pub from_s: f64,
    /// End, in seconds from the start of measurement (∞ for the very end).
    pub to_s: f64,
}

/// Why a `--window` did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid window '{text}': {problem}")]
pub struct WindowError {
    /// The window as given, escaped to stay on one line.
    pub text: String,
    /// What is wrong with it.
    pub problem: WindowProblem,
}

/// What is wrong with a window.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WindowProblem {
    /// No `..` between the two ends.
    #[error("use FROM..TO, like 10s..50s")]
    NoRange,
    /// One end is not a duration.
    #[error("{0}")]
    Duration(crate::duration::DurationError),
    /// The end is not after the start.
    #[error("the end must come after the start")]
    Reversed,
}

impl Window {
    /// Parses `FROM..TO` (either side may be empty: `..30s`, `10s..`).
    pub fn parse(text: &str) -> Result<Window, WindowError> {
        let bad = |problem| WindowError {
            text: text.escape_debug().to_string(),
            problem,
        };
        let (from, to) = text
            .split_once("..")
            .ok_or_else(|| bad(WindowProblem::NoRange))?;
        let side = |v: &str, default: f64| -> Result<f64, WindowError> {
            if v.trim().is_empty() {
                Ok(default)
            } else {
                crate::duration::parse_duration(v)
                    .map(|d| d.as_secs_f64())
                    .map_err(|e| bad(WindowProblem::Duration(e)))
            }
        };
        // An open start means from the very start: the first, partial
        // second lies before 0 and must not be cut off.
        let w = Window {
            from_s: side(from, f64::NEG_INFINITY)?,
            to_s: side(to, f64::INFINITY)?,
        };
        if w.to_s <= w.from_s {
            return Err(bad(WindowProblem::Reversed));
        }
        Ok(w)
    }

    /// Whether an interval starting at `offset_s` belongs to the window:
    /// seconds are whole units, assigned by their midpoint.
    pub fn contains(&self, offset_s: f64) -> bool {
        let mid = offset_s + 0.5;
        mid >= self.from_s && mid < self.to_s
    }
}

#[cfg(test)]
mod window_tests {
    use super::Window;

    #[test]
    fn an_open_start_keeps_the_first_partial_second() {
        let w = Window::parse("..30s").unwrap();
        assert!(
            w.contains(-0.9),
            "a second starting 0.9 s before measurement"
        );
        assert!(!w.contains(29.6));
        let w = Window::parse("10s..").unwrap();
        assert!(w.contains(9.6) && !w.contains(9.4));
        assert!(Window::parse("5s..1s").is_err());
        assert!(Window::parse("10s").is_err());
    }
}
