//! `--scenario`: the steps and flows tables of the text report, in
//! place of the per-target table (a scenario's targets are its steps,
//! then its flows).

use super::*;
use pelt_core::ScenarioSource;

/// Steps (count, ok, failed, skipped, percentiles, failures by kind),
/// then flows (started, completed, failed, duration percentiles).
pub(super) fn write_scenario(o: &mut String, s: &RunSummary, sc: &ScenarioSource) -> fmt::Result {
    let t = &s.total;
    let empty = TargetStats::default();
    let row = |i: usize| t.targets.get(i).unwrap_or(&empty);
    let p = |n: &TargetStats, q: f64| match n.response() {
        Some(h) if !h.is_empty() => human_ns(pelt_core::rank::quantile(h, q)).to_string(),
        _ => "-".to_string(),
    };
    let failures = |n: &TargetStats| {
        let f: Vec<String> = n
            .failures()
            .into_iter()
            .map(|(k, c)| format!("{} {}", k.name(), thousands(c)))
            .collect();
        if f.is_empty() {
            "none".to_string()
        } else {
            f.join(", ")
        }
    };
    // A row's end, the same for a step and a flow: its percentiles, its
    // name and its failures.
    let tail = |i: usize| {
        let n = row(i);
        let (p50, p90, p99) = (p(n, 0.5), p(n, 0.9), p(n, 0.99));
        format!(
            "{p50:>9} {p90:>9} {p99:>9}  {}  ({})",
            sc.names[i],
            failures(n)
        )
    };
    writeln!(
        o,
        "Steps        requests        ok    failed   skipped       p50       p90       p99  step (failures)"
    )?;
    for i in 0..sc.steps.min(sc.names.len()) {
        let n = row(i);
        let skipped = sc.skipped(i, |j| row(j).failed());
        writeln!(
            o,
            "  {:>19} {:>9} {:>9} {:>9} {}",
            thousands(n.requests()),
            thousands(n.successes()),
            thousands(n.failed()),
            thousands(skipped),
            tail(i),
        )?;
    }
    writeln!(
        o,
        "  response time from each step's intended start: the flow's start for its first step, the previous step's end plus think time after"
    )?;
    writeln!(o)?;
    writeln!(
        o,
        "Flows        started  completed    failed       p50       p90       p99  flow (duration; failures)"
    )?;
    for i in sc.steps..sc.names.len() {
        let n = row(i);
        writeln!(
            o,
            "  {:>19} {:>10} {:>9} {}",
            thousands(n.requests()),
            thousands(n.successes()),
            thousands(n.failed()),
            tail(i),
        )?;
    }
    writeln!(o)
}
