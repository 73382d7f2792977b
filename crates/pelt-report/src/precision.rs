//! How far to trust each percentile of one run: its 95 % interval from
//! the order statistics of the run's samples
//! (`pelt_core::summary::quantile_ci`), and how long a run would narrow
//! an interval that is too wide.

use pelt_core::summary::quantile_ci::{intervals, PercentileCi, WIDE};
use pelt_core::{human_ns, RunSummary};
use std::fmt::Write;

/// `±3.1%`, or `unbounded` when no sample bounds the percentile above.
pub fn half_width(ci: &PercentileCi) -> String {
    match ci.hi {
        Some(_) => format!("±{:.1}%", ci.half_width() * 100.0),
        None => "unbounded".into(),
    }
}

/// `[2.08ms .. 2.11ms]`, `[18.0ms .. ?]` when unbounded above.
pub fn range(ci: &PercentileCi) -> String {
    let hi = ci
        .hi
        .map_or_else(|| "?".into(), |h| human_ns(h).to_string());
    format!("[{} .. {hi}]", human_ns(ci.lo))
}

/// What to do about an interval wider than ±5 %: a run this long would
/// narrow it (widths shrink as 1/√samples).
pub fn advice(ci: &PercentileCi, s: &RunSummary) -> Option<String> {
    let factor = ci.samples_factor()?;
    let secs = (s.duration.as_secs_f64() * factor).ceil();
    Some(match ci.hi {
        Some(_) => format!(
            "too wide: a run of ~{} would narrow it to ±{:.0}%",
            human_secs(secs),
            WIDE * 100.0
        ),
        None => format!(
            "too few samples above it to bound it: run ~{} or more",
            human_secs(secs)
        ),
    })
}

fn human_secs(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0}s")
    } else if s < 7200.0 {
        format!("{:.0}min", (s / 60.0).ceil())
    } else {
        format!("{:.0}h", (s / 3600.0).ceil())
    }
}

/// The headline latency's intervals (response time), one line each.
pub fn text(s: &RunSummary) -> String {
    let cis = intervals(&s.total.response);
    let mut o = String::new();
    if cis.is_empty() {
        return o;
    }
    let _ = writeln!(
        o,
        "Precision   95% interval of each percentile from this run's {} samples (order statistics;\n            \
         how exactly the run pinned its own percentiles, not how far a repeat would differ)",
        cis[0].n
    );
    for ci in &cis {
        let _ = write!(
            o,
            "  {:<10}{:>10}  {:<24}{:>10}",
            format!("p{}", ci.percentile),
            human_ns(ci.value).to_string(),
            range(ci),
            half_width(ci)
        );
        if let Some(a) = advice(ci, s) {
            let _ = write!(o, "  {a}");
        }
        o.push('\n');
    }
    o
}

/// The same as a markdown table.
pub fn markdown(s: &RunSummary) -> String {
    let cis = intervals(&s.total.response);
    let mut o = String::new();
    if cis.is_empty() {
        return o;
    }
    let _ = writeln!(
        o,
        "Precision: 95% interval of each percentile of response time, from {} samples.\n\n\
         | percentile | value | 95% interval | ± | note |\n|---|---:|---|---:|---|",
        cis[0].n
    );
    for ci in &cis {
        let _ = writeln!(
            o,
            "| p{} | {} | {} | {} | {} |",
            ci.percentile,
            human_ns(ci.value),
            range(ci),
            half_width(ci),
            advice(ci, s).unwrap_or_default()
        );
    }
    o.push('\n');
    o
}
