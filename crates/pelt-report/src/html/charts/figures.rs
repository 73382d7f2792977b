//! The report's figures, each a chart over one or more runs: latency and
//! throughput over time, the percentile spectrum, the histogram, latency
//! against load and a metric's trend. The drawing primitives they share
//! (axes, pens, legends, line charts) are in the parent module.

use super::*;
use pelt_analyze::latency::Latency;

pub(in crate::html) fn latency_over_time(runs: &[Labeled<'_>]) -> String {
    if runs
        .iter()
        .all(|r| r.summary.timeline.iter().all(|row| row.requests == 0))
    {
        return no_data("per-second latencies");
    }
    let max_ns = runs
        .iter()
        .flat_map(|r| r.summary.timeline.iter().map(|row| row.max_ns))
        .max()
        .unwrap_or(0);
    let unit = TimeUnit::for_max(max_ns as f64);
    type Pick = fn(&pelt_core::IntervalRow) -> u64;
    let picks: [(&str, Pick); 4] = [
        ("p50", |r| r.p50_ns),
        ("p90", |r| r.p90_ns),
        ("p99", |r| r.p99_ns),
        ("max", |r| r.max_ns),
    ];
    // One run: a colour per percentile. Several: a colour per run and a
    // line style per percentile.
    let several = runs.len() > 1;
    let pen = |run: usize, percentile: usize| -> Pen {
        if !several {
            return Pen::solid(
                PERCENTILE_COLORS[percentile],
                if percentile == 2 { 3 } else { 2 },
            );
        }
        let color = run_color(run);
        match percentile {
            0 => Pen::solid(color, 1),
            1 => Pen {
                color,
                width: 2,
                dash: Some((8, 4)),
            },
            2 => Pen::solid(color, 3),
            _ => Pen {
                color,
                width: 1,
                dash: Some((2, 3)),
            },
        }
    };
    let mut lines = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let elapsed = run.summary.elapsed.as_secs_f64();
        for (j, (_, pick)) in picks.iter().enumerate() {
            let points = run
                .summary
                .timeline
                .iter()
                .filter(|row| row.requests > 0 && pick(row) > 0)
                .map(|row| (row_x(row.offset_s, elapsed), unit.of(pick(row))))
                .collect();
            lines.push(Line {
                points,
                pen: pen(i, j),
            });
        }
    }
    let mut keys = Vec::new();
    if several {
        keys.extend(
            runs.iter()
                .enumerate()
                .map(|(i, r)| Key::new(&r.label, Mark::Line(Pen::solid(run_color(i), 3)))),
        );
    }
    for (j, (name, _)) in picks.iter().enumerate() {
        let mut p = pen(0, j);
        if several {
            p.color = KEY_GREY;
        }
        keys.push(Key::new(name, Mark::Line(p)));
    }
    let (y, y_desc) = latency_axis(&lines, &unit);
    let axes = Axes {
        x_desc: "time since start (s)",
        y_desc: &y_desc,
        x_range: time_x_range(runs),
        x_labels: 12,
        x_fmt: &seconds_tick,
    };
    or_note(line_chart(&axes, &y, &lines, &keys))
}

/// Requests and errors completed in each second.
pub(in crate::html) fn throughput_over_time(runs: &[Labeled<'_>]) -> String {
    if runs.iter().all(|r| r.summary.timeline.is_empty()) {
        return no_data("per-second counts");
    }
    let several = runs.len() > 1;
    let request_pen = |i: usize| Pen::solid(run_color(i), 2);
    let error_pen = |i: usize| {
        if several {
            Pen {
                color: run_color(i),
                width: 2,
                dash: Some((6, 4)),
            }
        } else {
            Pen::solid(ERROR_COLOR, 2)
        }
    };
    let mut lines = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let elapsed = run.summary.elapsed.as_secs_f64();
        // Per second of the run covered: a partial first or last second's
        // count is no dip. Seconds too short to give a rate are left out.
        let series = |pick: fn(&pelt_core::IntervalRow) -> u64| -> Vec<(f64, f64)> {
            run.summary
                .timeline
                .iter()
                .filter_map(|row| {
                    let (from, to) = run.summary.row_span(row);
                    run.summary
                        .row_rate(row)
                        .map(|_| (row_x(row.offset_s, elapsed), pick(row) as f64 / (to - from)))
                })
                .collect()
        };
        lines.push(Line {
            points: series(|r| r.requests),
            pen: request_pen(i),
        });
        lines.push(Line {
            points: series(|r| r.failed),
            pen: error_pen(i),
        });
    }
    let keys = if several {
        let mut keys: Vec<Key> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| Key::new(&r.label, Mark::Line(request_pen(i))))
            .collect();
        keys.push(Key::new("requests", Mark::Line(Pen::solid(KEY_GREY, 2))));
        let mut dashed = error_pen(0);
        dashed.color = KEY_GREY;
        keys.push(Key::new("failed", Mark::Line(dashed)));
        keys
    } else {
        vec![
            Key::new("requests", Mark::Line(request_pen(0))),
            Key::new("failed", Mark::Line(error_pen(0))),
        ]
    };
    let y = YAxis::fit(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        false,
    );
    let axes = Axes {
        x_desc: "time since start (s)",
        y_desc: "completed per second",
        x_range: time_x_range(runs),
        x_labels: 12,
        x_fmt: &seconds_tick,
    };
    or_note(line_chart(&axes, &y, &lines, &keys))
}

/// One legend entry per run, or none for a single run: the page is
/// about it.
pub(super) fn run_keys(runs: &[Labeled<'_>], mark: impl Fn(usize) -> Mark) -> Vec<Key> {
    if runs.len() < 2 {
        return Vec::new();
    }
    runs.iter()
        .enumerate()
        .map(|(i, r)| Key::new(&r.label, mark(i)))
        .collect()
}

/// `0`, `90`, `99`, `99.9`, ... for `x` = 0, 1, 2, 3 (x = log10(1/(1-p))).
pub(super) fn percentile_label(x: &f64) -> String {
    let k = x.round();
    if (x - k).abs() > 1e-6 || k < 0.0 {
        return String::new();
    }
    let k = k as usize;
    match k {
        0 => "0%".into(),
        1 => "90%".into(),
        2 => "99%".into(),
        _ => format!("99.{}%", "9".repeat(k - 2)),
    }
}

/// Latency against percentile, HdrHistogram's way: the x axis stretches
/// the tail, one decade of 1/(1-p) per label.
pub(in crate::html) fn percentile_spectrum(runs: &[Labeled<'_>], latency: Latency) -> String {
    let hists: Vec<&Histogram<u64>> = runs.iter().map(|r| latency.histogram(r.summary)).collect();
    spectrum_of(runs, &hists, "timed responses")
}

/// [`percentile_spectrum`] of one histogram per run (`what` names what a
/// run without values lacks).
pub(in crate::html) fn spectrum_of(
    runs: &[Labeled<'_>],
    hists: &[&Histogram<u64>],
    what: &str,
) -> String {
    if hists.iter().all(|h| h.is_empty()) {
        return no_data(what);
    }
    let most = hists.iter().map(|h| h.len()).max().unwrap_or(1).max(1);
    // Resolve the tail as far as the data can (one decade past the
    // sample count shows the maximum), up to 99.999%.
    let decades = ((most as f64).log10().ceil() as usize + 1).clamp(2, 5);
    let max_ns = hists
        .iter()
        .filter(|h| !h.is_empty())
        .map(|h| h.max())
        .max()
        .unwrap_or(1);
    let unit = TimeUnit::for_max(max_ns as f64);
    let steps = decades * SPECTRUM_STEPS_PER_DECADE;
    let lines: Vec<Line> = hists
        .iter()
        .enumerate()
        .filter(|(_, h)| !h.is_empty())
        .map(|(i, h)| Line {
            points: (0..=steps)
                .map(|k| {
                    let x = k as f64 / SPECTRUM_STEPS_PER_DECADE as f64;
                    let q = 1.0 - 10f64.powf(-x);
                    (x, unit.of(pelt_core::rank::quantile(h, q)))
                })
                .collect(),
            pen: Pen::solid(run_color(i), 3),
        })
        .collect();
    let keys = run_keys(runs, |i| Mark::Line(Pen::solid(run_color(i), 3)));
    let (y, y_desc) = latency_axis(&lines, &unit);
    let axes = Axes {
        x_desc: "percentile",
        y_desc: &y_desc,
        x_range: 0.0..decades as f64,
        x_labels: decades + 1,
        x_fmt: &percentile_label,
    };
    or_note(line_chart(&axes, &y, &lines, &keys))
}

/// Share of requests per log-spaced latency bucket, runs overlaid.
pub(in crate::html) fn histogram(runs: &[Labeled<'_>], latency: Latency) -> String {
    let hists: Vec<&Histogram<u64>> = runs.iter().map(|r| latency.histogram(r.summary)).collect();
    let filled: Vec<&&Histogram<u64>> = hists.iter().filter(|h| !h.is_empty()).collect();
    if filled.is_empty() {
        return no_data("timed responses");
    }
    let lo_ns = filled.iter().map(|h| h.min().max(1)).min().unwrap_or(1);
    let hi_ns = filled.iter().map(|h| h.max()).max().unwrap_or(1);
    let unit = TimeUnit::for_max(hi_ns as f64);
    // Equal widths in log space; a run whose responses all took the same
    // time still gets a visible bar.
    let lo = unit.of(lo_ns) / 1.05;
    let hi = unit.of(hi_ns) * 1.05;
    let ratio = (hi / lo).powf(1.0 / HISTOGRAM_BUCKETS as f64);
    let edges: Vec<f64> = (0..=HISTOGRAM_BUCKETS)
        .map(|i| lo * ratio.powi(i as i32))
        .collect();
    let shares: Vec<Vec<f64>> = hists
        .iter()
        .map(|h| {
            let mut counts = vec![0u64; HISTOGRAM_BUCKETS];
            for v in h.iter_recorded() {
                let x = unit.of(v.value_iterated_to());
                let b = ((x / lo).ln() / ratio.ln()).floor();
                let b = (b.max(0.0) as usize).min(HISTOGRAM_BUCKETS - 1);
                counts[b] += v.count_at_value();
            }
            let total = h.len().max(1) as f64;
            counts.iter().map(|&c| c as f64 * 100.0 / total).collect()
        })
        .collect();
    let top = shares
        .iter()
        .flatten()
        .copied()
        .fold(0.0f64, f64::max)
        .max(1.0)
        * 1.1;
    let several = runs.len() > 1;
    let keys = run_keys(runs, |i| Mark::Swatch(run_color(i)));
    let x_desc = format!("latency ({}, log scale)", unit.name);
    let axes = Axes {
        x_desc: &x_desc,
        y_desc: "share of requests (%)",
        x_range: lo..hi,
        x_labels: 12,
        x_fmt: &|v| tick(*v),
    };
    let chart = || -> Result<String, Box<dyn Error>> {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
            root.fill(&WHITE)?;
            let x = LogCoord::from((lo..hi).log_scale()).with_key_points(log_ticks(&(lo..hi)));
            let y = RangedCoordf64::from(0.0..top);
            let (plot, side) = split(&root, !keys.is_empty());
            let mut chart = chart_on(&plot, &axes, x, y)?;
            for (i, share) in shares.iter().enumerate() {
                let color = run_color(i);
                // Overlaid runs are see-through, so each shows through the other.
                let fill = color.mix(if several { 0.35 } else { 0.75 }).filled();
                let outline = color.stroke_width(if several { 2 } else { 1 });
                let bar = |(b, s): (usize, &f64)| [(edges[b], 0.0), (edges[b + 1], *s)];
                let bars = share.iter().enumerate().filter(|(_, s)| **s > 0.0);
                chart.draw_series(bars.clone().map(|b| Rectangle::new(bar(b), fill)))?;
                chart.draw_series(bars.map(|b| Rectangle::new(bar(b), outline)))?;
            }
            if let Some(side) = side {
                draw_legend(&side, &keys)?;
            }
            root.present()?;
        }
        Ok(svg)
    };
    or_note(chart())
}

/// Latency against load, one colour per series: p50 thin, p99 thick and
/// dashed, a dot at each measured level (the seeds' "response time vs
/// concurrency" plot, with the tail beside the median).
pub(in crate::html) fn latency_vs_load(
    x_desc: &str,
    series: &[crate::html::LoadSeries],
    marks: &crate::html::Marks,
) -> String {
    let max_ns = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.2.max(p.1)))
        .max()
        .unwrap_or(0);
    if max_ns == 0 {
        return no_data("latencies by load");
    }
    let unit = TimeUnit::for_max(max_ns.max(marks.slo_ns.unwrap_or(0)) as f64);
    let (lo, hi) = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .chain(marks.knee.iter().map(|k| k.1))
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    let pad = ((hi - lo) * 0.05).max(hi * 0.05).max(0.5);
    let y = YAxis::fit(
        series
            .iter()
            .flat_map(|s| s.points.iter().flat_map(|p| [unit.of(p.1), unit.of(p.2)]))
            .chain(marks.slo_ns.map(|v| unit.of(v))),
        true,
    );
    let y_desc = y.describe(&format!("latency ({}), median of runs", unit.name));
    let y_ends = match &y {
        YAxis::Linear(r) | YAxis::Log(r) => (r.start, r.end),
    };
    let axes = Axes {
        x_desc,
        y_desc: &y_desc,
        x_range: (lo - pad).max(0.0)..hi + pad,
        x_labels: 10,
        x_fmt: &|v: &f64| tick(*v),
    };
    let mut keys: Vec<Key> = series
        .iter()
        .enumerate()
        .map(|(i, s)| Key::new(&s.label, Mark::Line(Pen::solid(run_color(i), 3))))
        .collect();
    keys.push(Key::new("p50", Mark::Line(Pen::solid(KEY_GREY, 1))));
    keys.push(Key::new(
        "p99",
        Mark::Line(Pen {
            color: KEY_GREY,
            width: 3,
            dash: Some((8, 4)),
        }),
    ));
    let draw = || -> Result<String, Box<dyn Error>> {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
            root.fill(&WHITE)?;
            let (plot, side) = split(&root, true);
            let x = RangedCoordf64::from(axes.x_range.clone());
            match &y {
                YAxis::Linear(r) => {
                    let mut c = chart_on(&plot, &axes, x, RangedCoordf64::from(r.clone()))?;
                    draw_load_series(&mut c, series, &unit)?;
                    draw_marks(&mut c, marks, &unit, &axes.x_range, y_ends)?;
                }
                YAxis::Log(r) => {
                    let yc = LogCoord::from(r.clone().log_scale()).with_key_points(log_ticks(r));
                    let mut c = chart_on(&plot, &axes, x, yc)?;
                    draw_load_series(&mut c, series, &unit)?;
                    draw_marks(&mut c, marks, &unit, &axes.x_range, y_ends)?;
                }
            }
            if let Some(side) = side {
                draw_legend(&side, &keys)?;
            }
            root.present()?;
        }
        Ok(svg)
    };
    or_note(draw())
}

/// The SLO's latency (red, across) and the knee (grey, up), when given.
fn draw_marks<DB: Canvas, X: Axis, Y: Axis>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    marks: &crate::html::Marks,
    unit: &TimeUnit,
    x_range: &Range<f64>,
    (y_lo, y_hi): (f64, f64),
) -> ChartResult {
    if let Some(slo) = marks.slo_ns {
        let y = unit.of(slo);
        chart.draw_series(DashedLineSeries::new(
            [(x_range.start, y), (x_range.end, y)],
            6,
            4,
            ERROR_COLOR.stroke_width(2),
        ))?;
    }
    if let Some((label, x)) = &marks.knee {
        chart.draw_series(LineSeries::new(
            [(*x, y_lo), (*x, y_hi)],
            KEY_GREY.stroke_width(2),
        ))?;
        chart.draw_series(std::iter::once(Text::new(
            label.clone(),
            (*x, y_hi),
            ("sans-serif", LABEL_FONT).into_font().color(&KEY_GREY),
        )))?;
    }
    Ok(())
}

pub(super) fn draw_load_series<DB: Canvas, X: Axis, Y: Axis>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    series: &[crate::html::LoadSeries],
    unit: &TimeUnit,
) -> ChartResult {
    for (i, s) in series.iter().enumerate() {
        let color = run_color(i);
        let p50: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0, unit.of(p.1))).collect();
        let p99: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0, unit.of(p.2))).collect();
        chart.draw_series(LineSeries::new(p50.iter().copied(), color.stroke_width(1)))?;
        chart.draw_series(DashedLineSeries::new(
            p99.iter().copied(),
            8,
            4,
            color.stroke_width(3),
        ))?;
        chart.draw_series(
            p50.into_iter()
                .chain(p99)
                .map(|p| Circle::new(p, 4, color.filled())),
        )?;
    }
    Ok(())
}

/// One metric over runs, oldest left: a line through each run's value,
/// labelled by run.
pub(in crate::html) fn trend(t: &crate::html::Trend) -> String {
    if t.points.is_empty() {
        return no_data(&format!("{} values", t.metric));
    }
    let (scale, unit) = match t.unit {
        crate::html::TrendUnit::Nanos => {
            let u = TimeUnit::for_max(t.points.iter().map(|p| p.1).fold(0.0, f64::max));
            (1.0 / u.ns, u.name)
        }
        crate::html::TrendUnit::PerSecond => (1.0, "per second"),
        crate::html::TrendUnit::Ratio => (100.0, "%"),
    };
    let points: Vec<(f64, f64)> = t
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| (i as f64, p.1 * scale))
        .collect();
    let labels: Vec<String> = t.points.iter().map(|p| p.0.clone()).collect();
    let y = YAxis::fit(points.iter().map(|p| p.1), false);
    let y_desc = y.describe(&format!("{} ({unit})", t.metric));
    let x_fmt = |v: &f64| {
        let i = v.round();
        if (v - i).abs() < 1e-6 && i >= 0.0 {
            labels.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let last = (points.len() - 1) as f64;
    let axes = Axes {
        x_desc: "run, oldest to newest",
        x_range: -0.5..last + 0.5,
        y_desc: &y_desc,
        x_labels: points.len().min(12),
        x_fmt: &x_fmt,
    };
    let line = Line {
        points,
        pen: Pen::solid(run_color(0), 3),
    };
    or_note(line_chart(&axes, &y, &[line], &[]))
}
