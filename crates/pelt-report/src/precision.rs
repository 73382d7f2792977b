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
///
/// A run that stopped by count (`-n`) is told a count: its length was the
/// server's pace, and a length from it (0.6 s x 9,000 = "~90 min") reads
/// as advice to run for that long.
pub fn advice(ci: &PercentileCi, s: &RunSummary) -> Option<String> {
    let factor = ci.samples_factor()?;
    let by_count = s.config.stop.requests.is_some() && s.config.stop.duration.is_none();
    let longer = match by_count {
        true => format!(
            "{} requests (-n)",
            thousands((s.total.requests as f64 * factor).ceil() as u64)
        ),
        false => human_secs((s.duration.as_secs_f64() * factor).ceil()),
    };
    Some(match ci.hi {
        Some(_) => format!(
            "too wide: a run of ~{longer} would narrow it to ±{:.0}%",
            WIDE * 100.0
        ),
        None => format!("too few samples above it to bound it: run ~{longer} or more"),
    })
}

/// `1,234,567`.
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Said under the intervals: they hold for one steady condition, and a
/// run the stationarity checks flagged (a drift or a step) was not one.
fn stationary_note(s: &RunSummary) -> &'static str {
    let moved = s.warnings.iter().any(|w| {
        matches!(
            w,
            pelt_core::Warning::Drift { .. } | pelt_core::Warning::Step { .. }
        )
    });
    match moved {
        true => "these intervals assume a stationary run (one steady condition), and this one was not (see the \
                 warnings): they are too narrow, and the percentiles mix conditions",
        false => "assumes a stationary run: one steady condition throughout (the warnings say when it was not)",
    }
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

/// The headline latency's intervals ([`pelt_core::Headline`]), one line
/// each.
pub fn text(s: &RunSummary) -> String {
    let cis = intervals(s.headline().of(&s.total));
    let mut o = String::new();
    if cis.is_empty() {
        return o;
    }
    let _ = writeln!(
        o,
        "Precision   95% interval of each percentile of {} from this run's {} samples (order\n            \
         statistics; how exactly the run pinned its own percentiles, not how far a repeat would differ)",
        s.headline().name(),
        cis[0].n
    );
    let _ = writeln!(o, "            {}", stationary_note(s));
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
    let cis = intervals(s.headline().of(&s.total));
    let mut o = String::new();
    if cis.is_empty() {
        return o;
    }
    let _ = writeln!(
        o,
        "Precision: 95% interval of each percentile of {}, from {} samples; {}.\n\n\
         | percentile | value | 95% interval | ± | note |\n|---|---:|---|---:|---|",
        s.headline().name(),
        cis[0].n,
        stationary_note(s)
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
