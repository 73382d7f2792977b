//! The per-target table of the text report.

use super::*;

/// One line per target: counts, response-time percentiles, and the mix of
/// status classes and failure kinds.
pub(super) fn write_targets(o: &mut String, s: &RunSummary) -> std::fmt::Result {
    let t = &s.total;
    let c = &s.config;
    writeln!(
        o,
        "Targets      requests        ok    failed       p50       p90       p99  target (statuses; failures)"
    )?;
    let empty = TargetStats::default();
    for (i, target) in c.targets.iter().enumerate().take(MAX_TARGET_ROWS) {
        let n = t.targets.get(i).unwrap_or(&empty);
        let p = |q: f64| match n.response() {
            Some(h) if !h.is_empty() => human_ns(pelt_core::rank::quantile(h, q)).to_string(),
            _ => "-".to_string(),
        };
        let mut mix: String = n
            .classes()
            .map(|(class, k)| format!("{class}xx {}", thousands(k)))
            .collect::<Vec<_>>()
            .join(", ");
        // pelt-core's one breakdown: a 503 is a failure as in every view.
        let failures: Vec<String> = n
            .failures()
            .into_iter()
            .map(|(k, count)| format!("{} {}", k.name(), thousands(count)))
            .collect();
        if !failures.is_empty() {
            if !mix.is_empty() {
                mix.push_str("; ");
            }
            mix.push_str(&failures.join(", "));
        }
        let weight = if target.weight == 1 {
            String::new()
        } else {
            format!(" (weight {})", target.weight)
        };
        writeln!(
            o,
            "  {:>19} {:>9} {:>9} {:>9} {:>9} {:>9}  {} {}{weight}  ({})",
            thousands(n.requests()),
            thousands(n.successes()),
            thousands(n.failed()),
            p(0.5),
            p(0.9),
            p(0.99),
            target.method,
            target.url,
            if mix.is_empty() { "none" } else { &mix },
        )?;
    }
    if c.targets.len() > MAX_TARGET_ROWS {
        writeln!(
            o,
            "  ... {} more targets in --format json",
            c.targets.len() - MAX_TARGET_ROWS
        )?;
    }
    if c.targets.len() > MAX_TIMED_TARGETS {
        writeln!(
            o,
            "  targets after the first {} are counted but not timed (no per-target percentiles)",
            thousands(MAX_TIMED_TARGETS as u64)
        )?;
    }
    // Said once, so that nobody reads a target's p99 beside the run's as
    // if they were as exact.
    writeln!(
        o,
        "  per-target percentiles are within {}% (the run's above within 0.1%)",
        pelt_core::recorder::TARGET_PRECISION_PERCENT
    )?;
    writeln!(o)
}
