//! What a comparison's headline names: its most severe verdict, errors
//! first, and which verdicts the runs' own warnings weaken.
//!
//! An experiment whose variant answered 404 to every request headlined
//! "p50 INCONCLUSIVE" and kept "errors +100 pt REGRESSION (material)" in
//! its table: the headline read the median latency whatever else
//! happened. Here verdicts are ranked by how much they should change what
//! the reader does next:
//!
//! 1. a material change in the failed share, either way (a variant that
//!    fails is not a faster or slower variant: its latencies time other
//!    work, like 404 pages);
//! 2. a material regression, then any regression;
//! 3. a material improvement, then any improvement;
//! 4. inconclusive, then equivalent, then no verdict.
//!
//! Within a rank of change (1 to 3), errors and the share sent come
//! first, since they say whether the latencies describe the same work at
//! all; otherwise the metric order of [`crate::runs::metrics`] decides
//! (p50 first).

use crate::runs::Row;
use crate::{Comparison, Verdict};
use pelt_core::Warning;

pub use crate::runs::FAILED;

/// How severe a row's verdict is; lower is more severe. A verdict whose
/// materiality was withheld for a confounded design (`row.confounded`)
/// ranks with the material ones: its interval is beyond the margin, only
/// its cause is in doubt.
fn rank(row: &Row, c: &Comparison) -> u8 {
    let errors = row.metric.name == FAILED;
    let verdict = match c.verdict {
        Verdict::Regression { .. } if row.confounded => Verdict::Regression { material: true },
        Verdict::Improvement { .. } if row.confounded => Verdict::Improvement { material: true },
        v => v,
    };
    match verdict {
        Verdict::Regression { material: true } | Verdict::Improvement { material: true }
            if errors =>
        {
            0
        }
        Verdict::Regression { material: true } => 1,
        Verdict::Regression { material: false } => 2,
        Verdict::Improvement { material: true } => 3,
        Verdict::Improvement { material: false } => 4,
        Verdict::Inconclusive { .. } => 5,
        Verdict::Equivalent => 6,
        Verdict::NoVerdict => 7,
    }
}

/// Metrics whose verdicts come first within a rank.
fn precedence(row: &Row) -> u8 {
    match row.metric.name.as_str() {
        FAILED => 0,
        "sent" => 1,
        _ => 2,
    }
}

/// The row the headline names: the most severe verdict (see the module
/// docs); `None` when no row has a comparison.
pub fn most_severe(rows: &[Row]) -> Option<&Row> {
    rows.iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let c = row.result.as_ref().ok()?;
            let rank = rank(row, c);
            // Errors and the share sent lead among changes; among rows
            // that changed nothing, the metric order (p50 first) does.
            let first = if rank <= 4 { precedence(row) } else { 2 };
            Some(((rank, first, i), row))
        })
        .min_by_key(|(key, _)| *key)
        .map(|(_, row)| row)
}

/// When the verdicts point both ways: the metrics that improved and those
/// that regressed, by name in row order (`None` when they agree, or when
/// fewer than two changed). A headline that names only the most severe
/// would hide the rest (p99 regressed while p50 and throughput improved).
pub fn disagreeing(rows: &[Row]) -> Option<(Vec<&str>, Vec<&str>)> {
    let (mut better, mut worse) = (Vec::new(), Vec::new());
    for row in rows {
        match row.result.as_ref().map(|c| c.verdict) {
            Ok(Verdict::Improvement { .. }) => better.push(row.metric.name.as_str()),
            Ok(Verdict::Regression { .. }) => worse.push(row.metric.name.as_str()),
            _ => {}
        }
    }
    (!better.is_empty() && !worse.is_empty()).then_some((better, worse))
}

/// The error-share comparison when it differs materially (either way,
/// and whether or not the design confounds it with time): flagged at the
/// top of every report.
pub fn failed_differs(rows: &[Row]) -> Option<&Comparison> {
    rows.iter()
        .filter(|r| r.metric.name == FAILED)
        .filter_map(|r| Some((r, r.result.as_ref().ok()?)))
        .find(|(r, c)| match c.verdict {
            Verdict::Regression { material } | Verdict::Improvement { material } => {
                material || r.confounded
            }
            _ => false,
        })
        .map(|(_, c)| c)
}

/// The verdicts a run warning weakens, and why; `None` for warnings
/// that do not bear on a comparison (the run's set-up, a log file).
pub fn weakens(w: &Warning) -> Option<(&'static str, &'static str)> {
    const LATENCY: &str = "p50, p90, p99, p99.9";
    Some(match w {
        Warning::SendLag { .. } => (
            LATENCY,
            "response time includes the time requests waited in the client",
        ),
        Warning::ReadLag { .. } | Warning::ClientBusy { .. } | Warning::ShardClientBusy { .. } => (
            "every metric",
            "pelt was short of CPU: the client may have set the pace",
        ),
        Warning::RateShortfall { .. } => (
            "sent, p50, p90, p99, p99.9",
            "the client sent less than the schedule asked",
        ),
        Warning::ClientResources { .. } => (
            "failed, sent",
            "connections failed on pelt's machine, not the server",
        ),
        Warning::Retransmissions { .. } => (LATENCY, "packets were lost on the way"),
        Warning::LinkSaturated { .. } => ("every metric", "the network link was near its limit"),
        Warning::BufferedStream { .. } => (
            LATENCY,
            "a buffer on the way held streams back: their events arrived in one burst",
        ),
        Warning::Unfinished { .. } => (
            "p99, p99.9",
            "requests still pending at the end are timed only up to then",
        ),
        Warning::Failed { .. } => (LATENCY, "failed requests without a response are not timed"),
        Warning::Drift { .. } => (
            "every metric",
            "latency drifted over the run: its percentiles mix conditions",
        ),
        Warning::Step { .. } => (
            "every metric",
            "latency stepped to another level during the run: its percentiles mix two conditions",
        ),
        Warning::Warmup { .. } => (LATENCY, "the run's start was slower than its rest"),
        Warning::Until { .. } => return None,
        Warning::OffSchedule { .. } => (
            LATENCY,
            "the client's sends strayed from the schedule: the server saw another arrival pattern",
        ),
        // Correlated requests within a run make that run's own intervals
        // too narrow, but comparisons take the run as their unit: the
        // run-to-run spread they rest on already carries it.
        Warning::Autocorrelation { .. } => return None,
        Warning::DebugBuild => ("every metric", "pelt was built without optimisations"),
        Warning::KeepAliveRace { .. } => (
            "failed",
            "requests were lost to a keep-alive race, not refused by the server",
        ),
        Warning::Redirects { .. } => (
            "every metric",
            "the redirects were timed, not the pages they point to",
        ),
        Warning::Interrupted
        | Warning::Terminated { .. }
        | Warning::Aborted { .. }
        | Warning::Incomplete
        | Warning::PartialMerge { .. } => ("every metric", "the run did not cover its whole plan"),
        Warning::LateShard { .. } => ("every metric", "a shard started late"),
        Warning::LateStart { .. } => ("every metric", "the run started late"),
        Warning::RequestLog { .. } | Warning::Sharded { .. } | Warning::FeedRanOut { .. } => {
            return None
        }
    })
}

/// The name of a warning's kind, as its JSON `kind` (`send_lag`).
pub fn kind(w: &Warning) -> &'static str {
    match w {
        Warning::RateShortfall { .. } => "rate_shortfall",
        Warning::SendLag { .. } => "send_lag",
        Warning::ReadLag { .. } => "read_lag",
        Warning::ClientResources { .. } => "client_resources",
        Warning::Retransmissions { .. } => "retransmissions",
        Warning::LinkSaturated { .. } => "link_saturated",
        Warning::BufferedStream { .. } => "buffered_stream",
        Warning::Unfinished { .. } => "unfinished",
        Warning::Failed { .. } => "failed",
        Warning::KeepAliveRace { .. } => "keep_alive_race",
        Warning::Drift { .. } => "drift",
        Warning::Step { .. } => "step",
        Warning::Warmup { .. } => "warmup",
        Warning::Until { .. } => "until",
        Warning::Autocorrelation { .. } => "autocorrelation",
        Warning::OffSchedule { .. } => "off_schedule",
        Warning::FeedRanOut { .. } => "feed_ran_out",
        Warning::DebugBuild => "debug_build",
        Warning::Redirects { .. } => "redirects",
        Warning::Interrupted => "interrupted",
        Warning::Terminated { .. } => "terminated",
        Warning::Aborted { .. } => "aborted",
        Warning::RequestLog { .. } => "request_log",
        Warning::Incomplete => "incomplete",
        Warning::Sharded { .. } => "sharded",
        Warning::PartialMerge { .. } => "partial_merge",
        Warning::LateShard { .. } => "late_shard",
        Warning::LateStart { .. } => "late_start",
        Warning::ShardClientBusy { .. } => "shard_client_busy",
        Warning::ClientBusy { .. } => "client_busy",
    }
}

/// Warnings of a set of runs, grouped by kind: how many runs had each,
/// which (by name), and what it weakens.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WarningGroup {
    /// The warning's kind (`send_lag`).
    pub kind: String,
    /// The runs that had it, by name.
    pub runs: Vec<String>,
    /// The verdicts it weakens.
    pub weakens: String,
    /// Why.
    pub why: String,
    /// One of the warnings' text, as `pelt report` prints it.
    pub example: String,
}

/// Groups `runs` (name, warnings) by warning kind, in the order first met.
pub fn group_warnings<'a>(
    runs: impl IntoIterator<Item = (String, &'a [Warning])>,
) -> Vec<WarningGroup> {
    let mut out: Vec<WarningGroup> = Vec::new();
    for (name, warnings) in runs {
        for w in warnings {
            let Some((weakens, why)) = weakens(w) else {
                continue;
            };
            let k = kind(w);
            match out.iter_mut().find(|g| g.kind == k) {
                Some(g) => {
                    if !g.runs.contains(&name) {
                        g.runs.push(name.clone());
                    }
                }
                None => out.push(WarningGroup {
                    kind: k.into(),
                    runs: vec![name.clone()],
                    weakens: weakens.into(),
                    why: why.into(),
                    example: w.to_string(),
                }),
            }
        }
    }
    out
}

/// One sentence per group: `send_lag in 5 of 6 runs (a, b, ...): weakens
/// p50, p90, p99, p99.9 (response time includes ...). E.g.: ...`.
pub fn warning_notes(groups: &[WarningGroup], total_runs: usize) -> Vec<String> {
    groups
        .iter()
        .map(|g| {
            let mut names = g
                .runs
                .iter()
                .take(4)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if g.runs.len() > 4 {
                names.push_str(", ...");
            }
            format!(
                "Warning {} in {} of {total_runs} runs ({names}): weakens {} ({}). For example: {}",
                g.kind,
                g.runs.len(),
                g.weakens,
                g.why,
                g.example
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::compare_values;

    /// The 404 variant: every request failed, latency unchanged
    /// within noise. The headline must name errors, not p50.
    #[test]
    fn a_failing_variant_headlines_its_errors() {
        let run = |p50: f64, errors: f64| vec![p50, p50, p50, p50, errors, f64::NAN, 1.0];
        let a: Vec<Vec<f64>> = (0..6)
            .map(|i| run(1e6 + (i % 3) as f64 * 3e4, 0.0))
            .collect();
        let b: Vec<Vec<f64>> = (0..6)
            .map(|i| run(1e6 + (i % 2) as f64 * 5e4, 1.0))
            .collect();
        let rows = compare_values(&a, &b, true);
        let top = most_severe(&rows).unwrap();
        assert_eq!(top.metric.name, "failed");
        let c = failed_differs(&rows).unwrap();
        assert_eq!(c.verdict, Verdict::Regression { material: true });
        // Without an error change, a latency regression leads.
        let b: Vec<Vec<f64>> = (0..6).map(|i| run(2e6 + i as f64, 0.0)).collect();
        let rows = compare_values(&a, &b, true);
        assert_eq!(most_severe(&rows).unwrap().metric.name, "p50");
        assert!(failed_differs(&rows).is_none());
    }

    #[test]
    fn kinds_are_the_json_kinds() {
        for w in [
            Warning::Interrupted,
            Warning::Unfinished { count: 1 },
            Warning::ClientBusy {
                on_cpu: 0.9,
                waiting: 0.1,
                threads: 1,
            },
            Warning::RateShortfall {
                offered: 1.0,
                achieved: 0.5,
            },
            Warning::Autocorrelation { r: 0.8, pairs: 100 },
            Warning::OffSchedule {
                d: 0.03,
                critical: 0.02,
                behind: 300,
                at_s: 4.3,
                sent: 10_000,
            },
        ] {
            assert_eq!(serde_json::to_value(&w).unwrap()["kind"], kind(&w));
        }
    }

    #[test]
    fn warnings_are_grouped_with_what_they_weaken() {
        let lag = Warning::SendLag {
            p99_ns: 41_000_000,
            connections: 10,
            connect_p99_ns: None,
        };
        let read = Warning::ReadLag {
            mean_ns: 3_000_000,
            max_ns: 9_000_000,
        };
        let w1 = [lag.clone(), read];
        let w2 = [lag];
        let groups = group_warnings([("r1".to_string(), &w1[..]), ("r2".to_string(), &w2[..])]);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].kind, "send_lag");
        assert_eq!(groups[0].runs, ["r1", "r2"]);
        assert_eq!(groups[0].weakens, "p50, p90, p99, p99.9");
        let notes = warning_notes(&groups, 6);
        assert!(
            notes[0].starts_with("Warning send_lag in 2 of 6 runs (r1, r2): weakens p50"),
            "{}",
            notes[0]
        );
    }
}
