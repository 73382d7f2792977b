//! What "failed" means, once for every view.
//!
//! A request **failed** when it got no usable response: a transport
//! failure (an [`ErrorKind`]: refused, reset, timed out, unfinished, a
//! scenario step's failed extract or check, a
//! length mismatch...) or a complete response whose status is outside
//! 2xx/3xx. Every request is exactly one of: a success, a transport
//! failure, or a failed status, so
//!
//! ```text
//! requests = successes + failed
//! failed   = transport failures (by ErrorKind) + responses outside 2xx/3xx
//! ```
//!
//! The text, JSON, CSV, markdown and HTML reports, the live views, the
//! metrics, the history, `--assert`, SLOs, compare and experiment all read
//! the count from [`Recorder::failed`](crate::Recorder::failed) and the
//! breakdown from [`Recorder::failures`](crate::Recorder::failures), so a
//! 503 is a failure in every one of them.

use crate::error_kind::ErrorKind;

/// One kind of failure: a transport error, or a class of status codes
/// outside 2xx/3xx.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureKind {
    /// No usable response: the request failed in transport.
    Error(ErrorKind),
    /// A complete response whose status was outside 2xx/3xx; the class
    /// digit (1 = 1xx, 4 = 4xx, 5 = 5xx, anything else = an unregistered
    /// class).
    Status(u8),
}

impl FailureKind {
    /// The status classes that are failures, in report order.
    pub const STATUS_CLASSES: [u8; 3] = [4, 5, 1];

    /// Every kind, transport kinds first: the label set of
    /// `pelt_failures_total`, which keeps a series per kind from the start.
    pub fn all() -> impl Iterator<Item = FailureKind> {
        ErrorKind::ALL
            .into_iter()
            .map(FailureKind::Error)
            .chain([4, 5, 1, 0].map(FailureKind::Status))
    }

    /// The snake_case name used in JSON, CSV, metrics labels and the text
    /// report: the [`ErrorKind`]'s name, or `status_4xx`, `status_5xx`,
    /// `status_1xx`, `status_other`.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Error(k) => k.name(),
            FailureKind::Status(4) => "status_4xx",
            FailureKind::Status(5) => "status_5xx",
            FailureKind::Status(1) => "status_1xx",
            FailureKind::Status(_) => "status_other",
        }
    }

    /// A short explanation for reports.
    pub fn describe(self) -> &'static str {
        match self {
            FailureKind::Error(k) => k.describe(),
            FailureKind::Status(4) => {
                "answered with a 4xx status (client error: URL, auth, method?)"
            }
            FailureKind::Status(5) => "answered with a 5xx status (server error)",
            FailureKind::Status(1) => "answered with a 1xx status as the final response",
            FailureKind::Status(_) => "answered with a status outside 100-599",
        }
    }

    /// The class digit of a status code, folded as [`FailureKind::Status`]
    /// names it (`None` for 2xx and 3xx, which are not failures).
    pub fn of_status(code: u16) -> Option<FailureKind> {
        match code / 100 {
            2 | 3 => None,
            c @ (1 | 4 | 5) => Some(FailureKind::Status(c as u8)),
            _ => Some(FailureKind::Status(0)),
        }
    }
}

/// The failures of a set of requests, by kind, most common first; kinds
/// with no failure are left out. Built by
/// [`Recorder::failures`](crate::Recorder::failures) and
/// [`TargetStats::failures`](crate::TargetStats::failures).
pub(crate) fn breakdown(
    errors: &[u64; ErrorKind::COUNT],
    statuses: impl IntoIterator<Item = (FailureKind, u64)>,
) -> Vec<(FailureKind, u64)> {
    let mut all: Vec<(FailureKind, u64)> = ErrorKind::ALL
        .iter()
        .map(|&k| (FailureKind::Error(k), errors[k.index()]))
        .filter(|&(_, n)| n > 0)
        .collect();
    for (kind, n) in statuses.into_iter().filter(|&(_, n)| n > 0) {
        // Classes 0 and 6-9 are all "status_other": one row.
        match all.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, m)) => *m += n,
            None => all.push((kind, n)),
        }
    }
    // Stable: equal counts keep the fixed order (transport kinds first).
    all.sort_by_key(|b| std::cmp::Reverse(b.1));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_classes_name_themselves() {
        assert_eq!(FailureKind::of_status(200), None);
        assert_eq!(FailureKind::of_status(302), None);
        assert_eq!(FailureKind::of_status(503).unwrap().name(), "status_5xx");
        assert_eq!(FailureKind::of_status(401).unwrap().name(), "status_4xx");
        assert_eq!(FailureKind::of_status(101).unwrap().name(), "status_1xx");
        assert_eq!(FailureKind::of_status(999).unwrap().name(), "status_other");
    }

    #[test]
    fn breakdown_is_most_common_first_without_zeros() {
        let mut errors = [0; ErrorKind::COUNT];
        errors[ErrorKind::Timeout.index()] = 2;
        let b = breakdown(
            &errors,
            [(FailureKind::Status(5), 7), (FailureKind::Status(4), 0)],
        );
        assert_eq!(
            b,
            vec![
                (FailureKind::Status(5), 7),
                (FailureKind::Error(ErrorKind::Timeout), 2)
            ]
        );
    }
}
