//! The text report's histogram bars and per-second timeline.

use super::*;

pub(super) fn write_histogram(o: &mut String, h: &Histogram<u64>, name: &str) -> std::fmt::Result {
    if h.len() < 2 || h.max() == h.min() {
        return Ok(());
    }
    let low = h.min().max(1);
    let top = pelt_core::rank::quantile(h, 0.999).max(low + 1);
    let ratio = (top as f64 / low as f64).powf(1.0 / HISTOGRAM_BUCKETS as f64);
    let mut buckets = Vec::new();
    let mut from = 0u64;
    for i in 1..=HISTOGRAM_BUCKETS {
        let to = if i == HISTOGRAM_BUCKETS {
            top
        } else {
            ((low as f64) * ratio.powi(i as i32)) as u64
        };
        if to < from {
            continue;
        }
        buckets.push((to, h.count_between(from, to)));
        from = h.next_non_equivalent(to);
    }
    if h.max() >= from {
        let tail = h.count_between(from, h.max());
        match buckets.last_mut() {
            // The max is within display rounding of p99.9 ("304ms" twice
            // would read as a bug): one row up to the max holds both.
            Some(last) if human_ns(last.0).to_string() == human_ns(h.max()).to_string() => {
                *last = (h.max(), last.1 + tail);
            }
            _ => buckets.push((h.max(), tail)),
        }
    }
    let peak = buckets.iter().map(|b| b.1).max().unwrap_or(1).max(1);
    // Named for the latency it counts: the run's headline.
    let mut title = name.to_string();
    if let Some(first) = title.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    writeln!(o, "{title} histogram (up to, count)")?;
    for (to, n) in buckets {
        let bar = (n * BAR_WIDTH).div_ceil(peak) as usize;
        writeln!(
            o,
            "  {:>9} {:>10} {}",
            human_ns(to).to_string(),
            thousands(n),
            "■".repeat(bar)
        )?;
    }
    writeln!(o)
}

pub(super) fn write_timeline(o: &mut String, s: &RunSummary) -> std::fmt::Result {
    if s.timeline.len() < 2 {
        return Ok(());
    }
    writeln!(
        o,
        "\nPer second (response time of the requests completed in it)"
    )?;
    // With a schedule, what it planned for each second, beside the result.
    let (plan_title, plan): (&str, fn(&pelt_core::IntervalRow) -> String) =
        match (s.config.load.schedule(), s.is_rate_mode()) {
            (None, _) => ("", |_| String::new()),
            (Some(_), true) => ("offered", |r| {
                r.offered
                    .map_or(String::new(), |n| thousands(n.round() as u64))
            }),
            (Some(_), false) => ("conns", |r| {
                r.active_connections
                    .map_or(String::new(), |n| n.to_string())
            }),
        };
    let cell = |v: String| {
        if plan_title.is_empty() {
            String::new()
        } else {
            format!(" {v:>9}")
        }
    };
    writeln!(
        o,
        "  {:>11}{} {:>10} {:>9} {:>8} {:>10} {:>10} {:>10}",
        "seconds",
        cell(plan_title.into()),
        if s.config.is_ws() {
            "messages"
        } else {
            "requests"
        },
        if s.config.is_ws() { "msg/s" } else { "req/s" },
        "failed",
        "p50",
        "p99",
        "max"
    )?;
    // Intervals follow wall-clock seconds, so the first and last are
    // partial: label each with the part of the run it covers, and give
    // its rate over that part (a partial second's count is no dip).
    for row in s.timeline.iter().take(MAX_TIMELINE_ROWS) {
        let (from, to) = s.row_span(row);
        if to <= from && row.requests == 0 {
            // A wall-clock second that began as the run ended, with
            // nothing in it: a `4.00-4.00 0 - 0 0.00ns` row says nothing.
            continue;
        }
        let digits = if to - from < pelt_core::summary::MIN_RATE_SPAN_S {
            2
        } else {
            1
        };
        writeln!(
            o,
            "  {:>11}{} {:>10} {:>9} {:>8} {:>10} {:>10} {:>10}",
            format!("{from:.digits$}-{to:.digits$}"),
            cell(plan(row)),
            thousands(row.requests),
            s.row_rate(row).map_or("-".to_string(), rate),
            thousands(row.failed),
            human_ns(row.p50_ns).to_string(),
            human_ns(row.p99_ns).to_string(),
            human_ns(row.max_ns).to_string(),
        )?;
    }
    if s.timeline.len() > MAX_TIMELINE_ROWS {
        writeln!(
            o,
            "  ... {} more seconds in --format json",
            s.timeline.len() - MAX_TIMELINE_ROWS
        )?;
    }
    Ok(())
}
