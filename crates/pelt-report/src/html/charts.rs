//! The report's charts, drawn with `plotters` into SVG strings.
//!
//! Each chart overlays every run (one colour per run) and carries its own
//! legend. plotters' SVG backend escapes text and attribute values itself
//! (`&`, `<`, `>`, `"`, `'`), so labels go in as they are; the page's
//! escaping test checks that a hostile label comes out escaped.

use super::Labeled;
use hdrhistogram::Histogram;
use plotters::coord::combinators::{BindKeyPoints, LogCoord};
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::error::Error;
use std::ops::Range;

type ChartResult = Result<(), Box<dyn Error>>;

const WIDTH: u32 = 1100;
const HEIGHT: u32 = 380;
/// Font sizes as plotters takes them (its SVG backend divides by 1.24).
const LABEL_FONT: u32 = 15;
const DESC_FONT: u32 = 17;
const LEGEND_FONT: u32 = 15;
/// Log-spaced buckets in the histogram.
const HISTOGRAM_BUCKETS: usize = 36;
/// Points per decade of the percentile spectrum.
const SPECTRUM_STEPS_PER_DECADE: usize = 50;
/// A y range whose largest value exceeds its smallest positive one by
/// more than this is drawn on a log axis, so the median stays visible
/// beside a tail that is orders of magnitude slower.
const LOG_SPREAD: f64 = 30.0;

/// One colour per run (Tableau 10, readable on white).
const RUN_COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
];
/// For a single run, one colour per percentile line instead.
const PERCENTILE_COLORS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(214, 39, 40),
];
const ERROR_COLOR: RGBColor = RGBColor(214, 39, 40);
/// Legend entries that explain a line style rather than a run.
const KEY_GREY: RGBColor = RGBColor(90, 90, 90);
/// Room right of the plot for the legend, in pixels.
const LEGEND_WIDTH: u32 = 250;
/// Longest legend label that fits in [`LEGEND_WIDTH`].
const MAX_LEGEND_CHARS: usize = 28;

fn run_color(i: usize) -> RGBColor {
    RUN_COLORS[i % RUN_COLORS.len()]
}

/// A unit for latencies, picked by the largest value on the axis.
#[derive(Debug, Clone, Copy)]
struct TimeUnit {
    ns: f64,
    name: &'static str,
}

impl TimeUnit {
    fn for_max(max_ns: f64) -> TimeUnit {
        let (ns, name) = if max_ns < 1e3 {
            (1.0, "ns")
        } else if max_ns < 1e6 {
            (1e3, "µs")
        } else if max_ns < 1e9 {
            (1e6, "ms")
        } else {
            (1e9, "s")
        };
        TimeUnit { ns, name }
    }

    fn of(&self, ns: u64) -> f64 {
        ns as f64 / self.ns
    }
}

/// A number for an axis label: at most three significant digits, no
/// trailing zeros (`0.25`, `12.5`, `1500`).
fn tick(v: f64) -> String {
    let a = v.abs();
    let s = if a == 0.0 {
        return "0".into();
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        // Three significant digits below 1.
        let decimals = (2 - a.log10().floor() as i32).clamp(0, 9) as usize;
        format!("{v:.decimals$}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Labels for a log axis: 1, 2, 5 times each power of ten in `r`, or
/// just the powers of ten when the range spans many decades.
fn log_ticks(r: &Range<f64>) -> Vec<f64> {
    let decades = (r.end / r.start).log10();
    let mantissas: &[f64] = if decades > 4.0 {
        &[1.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    let mut ticks = Vec::new();
    let mut exp = r.start.log10().floor() as i32;
    while 10f64.powi(exp) <= r.end {
        for m in mantissas {
            let t = m * 10f64.powi(exp);
            if t >= r.start && t <= r.end {
                ticks.push(t);
            }
        }
        exp += 1;
    }
    ticks
}

/// A y axis: linear from zero, or logarithmic when the spread is large.
#[derive(Debug, Clone)]
enum YAxis {
    Linear(Range<f64>),
    Log(Range<f64>),
}

impl YAxis {
    /// Fits `values` (all series together), headroom included.
    fn fit(values: impl Iterator<Item = f64>, allow_log: bool) -> YAxis {
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for v in values.filter(|v| v.is_finite() && *v > 0.0) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if hi <= 0.0 {
            return YAxis::Linear(0.0..1.0);
        }
        if allow_log && hi / lo > LOG_SPREAD {
            YAxis::Log(lo / 1.3..hi * 1.3)
        } else {
            YAxis::Linear(0.0..hi * 1.1)
        }
    }

    fn describe(&self, what: &str) -> String {
        match self {
            YAxis::Linear(_) => what.to_string(),
            YAxis::Log(_) => format!("{what}, log scale"),
        }
    }
}

/// How a line looks.
#[derive(Debug, Clone, Copy)]
struct Pen {
    color: RGBColor,
    width: u32,
    /// Dash length and gap, in pixels; `None` for a solid line.
    dash: Option<(u32, u32)>,
}

impl Pen {
    fn solid(color: RGBColor, width: u32) -> Pen {
        Pen {
            color,
            width,
            dash: None,
        }
    }
}

/// A line to draw.
#[derive(Debug, Clone)]
struct Line {
    points: Vec<(f64, f64)>,
    pen: Pen,
}

/// What a legend entry shows beside its label.
#[derive(Debug, Clone, Copy)]
enum Mark {
    Line(Pen),
    Swatch(RGBColor),
}

/// One legend entry. Legends sit to the right of the plot, never over
/// the data; labels longer than the legend is wide are cut (the tables
/// carry them in full).
#[derive(Debug, Clone)]
struct Key {
    label: String,
    mark: Mark,
}

impl Key {
    fn new(label: &str, mark: Mark) -> Key {
        let label = if label.chars().count() > MAX_LEGEND_CHARS {
            let mut cut: String = label.chars().take(MAX_LEGEND_CHARS - 1).collect();
            cut.push('…');
            cut
        } else {
            label.to_string()
        };
        Key { label, mark }
    }
}

/// Axis descriptions and label formats.
struct Axes<'a> {
    x_desc: &'a str,
    x_range: Range<f64>,
    y_desc: &'a str,
    x_labels: usize,
    x_fmt: &'a dyn Fn(&f64) -> String,
}

/// The drawing area split into the plot and, when there is a legend, a
/// column right of it for the legend, so that it never covers the data.
type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn split<'a>(root: &Area<'a>, legend: bool) -> (Area<'a>, Option<Area<'a>>) {
    if legend {
        let (plot, side) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
        (plot, Some(side))
    } else {
        (root.clone(), None)
    }
}

/// A chart with its mesh drawn.
fn chart_on<'a, DB, X, Y>(
    root: &'a DrawingArea<DB, plotters::coord::Shift>,
    axes: &Axes<'_>,
    x: X,
    y: Y,
) -> Result<ChartContext<'a, DB, Cartesian2d<X, Y>>, Box<dyn Error>>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(root)
        .margin(14)
        .margin_right(24)
        .x_label_area_size(48)
        .y_label_area_size(76)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .x_desc(axes.x_desc)
        .y_desc(axes.y_desc)
        .x_labels(axes.x_labels)
        .y_labels(8)
        .x_label_formatter(axes.x_fmt)
        .y_label_formatter(&|v| tick(*v))
        .label_style(("sans-serif", LABEL_FONT))
        .axis_desc_style(("sans-serif", DESC_FONT))
        .light_line_style(RGBColor(240, 240, 240))
        .bold_line_style(RGBColor(214, 214, 214))
        .draw()?;
    Ok(chart)
}

/// Draws `keys` with plotters' own series legend, in `area` (a column of
/// its own): a chart with no mesh whose series are empty but labelled.
fn draw_legend(area: &Area<'_>, keys: &[Key]) -> ChartResult {
    let mut chart = ChartBuilder::on(area)
        .margin_top(14)
        .build_cartesian_2d(0.0..1.0, 0.0..1.0)?;
    for key in keys {
        let mark = key.mark;
        chart
            .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())?
            .label(key.label.as_str())
            .legend(move |(x, y)| -> DynElement<'static, _, (i32, i32)> {
                let path = vec![(x, y), (x + 26, y)];
                match mark {
                    Mark::Line(pen) => {
                        let style = pen.color.stroke_width(pen.width);
                        match pen.dash {
                            None => PathElement::new(path, style).into_dyn(),
                            Some((d, g)) => DashedPathElement::new(path, d, g, style).into_dyn(),
                        }
                    }
                    Mark::Swatch(color) => {
                        Rectangle::new([(x + 4, y - 6), (x + 22, y + 6)], color.mix(0.6).filled())
                            .into_dyn()
                    }
                }
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .legend_area_size(34)
        .label_font(("sans-serif", LEGEND_FONT))
        .background_style(WHITE)
        .border_style(RGBColor(214, 214, 214))
        .draw()?;
    Ok(())
}

fn line_chart(
    axes: &Axes<'_>,
    y: &YAxis,
    lines: &[Line],
    keys: &[Key],
) -> Result<String, Box<dyn Error>> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let (plot, side) = split(&root, !keys.is_empty());
        let x = RangedCoordf64::from(axes.x_range.clone());
        match y {
            YAxis::Linear(r) => draw_lines(&plot, axes, x, RangedCoordf64::from(r.clone()), lines)?,
            YAxis::Log(r) => {
                let y = LogCoord::from(r.clone().log_scale()).with_key_points(log_ticks(r));
                draw_lines(&plot, axes, x, y, lines)?
            }
        }
        if let Some(side) = side {
            draw_legend(&side, keys)?;
        }
        root.present()?;
    }
    Ok(svg)
}

fn draw_lines<DB, X, Y>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    axes: &Axes<'_>,
    x: X,
    y: Y,
    lines: &[Line],
) -> ChartResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = chart_on(root, axes, x, y)?;
    for line in lines {
        let style = line.pen.color.stroke_width(line.pen.width);
        let points = line.points.iter().copied();
        if let [point] = line.points[..] {
            // A line needs two points: a run shorter than two seconds has
            // one per series, drawn as a dot so the chart is not empty.
            chart.draw_series(std::iter::once(Circle::new(
                point,
                line.pen.width + 2,
                line.pen.color.filled(),
            )))?;
            continue;
        }
        match line.pen.dash {
            None => chart.draw_series(LineSeries::new(points, style))?,
            Some((dash, gap)) => {
                chart.draw_series(DashedLineSeries::new(points, dash, gap, style))?
            }
        };
    }
    Ok(())
}

/// A chart that failed to draw says so instead of taking the page down.
fn or_note(chart: Result<String, Box<dyn Error>>) -> String {
    chart.unwrap_or_else(|e| {
        format!(
            "<p class=\"note\">This chart could not be drawn: {}</p>",
            super::esc(&e.to_string())
        )
    })
}

/// A y axis that fits every line's latencies (log when they spread
/// widely), and its description.
fn latency_axis(lines: &[Line], unit: &TimeUnit) -> (YAxis, String) {
    let y = YAxis::fit(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        true,
    );
    let desc = y.describe(&format!("latency ({})", unit.name));
    (y, desc)
}

fn no_data(what: &str) -> String {
    format!("<p class=\"note\">No {what} to draw.</p>")
}

/// The x position of a timeline row: the middle of the part of its
/// wall-clock second that the run covered (the first and last are partial).
fn row_x(offset_s: f64, elapsed_s: f64) -> f64 {
    let from = offset_s.clamp(0.0, elapsed_s);
    let to = (offset_s + 1.0).clamp(0.0, elapsed_s);
    (from + to) / 2.0
}

fn time_x_range(runs: &[Labeled<'_>]) -> Range<f64> {
    let end = runs
        .iter()
        .map(|r| r.summary.elapsed.as_secs_f64())
        .fold(0.0f64, f64::max);
    0.0..end.max(1.0)
}

fn seconds_tick(v: &f64) -> String {
    tick(*v)
}

/// p50, p90, p99 and max of each second.
pub(super) fn latency_over_time(runs: &[Labeled<'_>]) -> String {
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
pub(super) fn throughput_over_time(runs: &[Labeled<'_>]) -> String {
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
                    let (from, to) = row.span(elapsed);
                    row.rate(elapsed)
                        .map(|_| (row_x(row.offset_s, elapsed), pick(row) as f64 / (to - from)))
                })
                .collect()
        };
        lines.push(Line {
            points: series(|r| r.requests),
            pen: request_pen(i),
        });
        lines.push(Line {
            points: series(|r| r.errors),
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
        keys.push(Key::new("errors", Mark::Line(dashed)));
        keys
    } else {
        vec![
            Key::new("requests", Mark::Line(request_pen(0))),
            Key::new("errors", Mark::Line(error_pen(0))),
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
fn run_keys(runs: &[Labeled<'_>], mark: impl Fn(usize) -> Mark) -> Vec<Key> {
    if runs.len() < 2 {
        return Vec::new();
    }
    runs.iter()
        .enumerate()
        .map(|(i, r)| Key::new(&r.label, mark(i)))
        .collect()
}

/// `0`, `90`, `99`, `99.9`, ... for `x` = 0, 1, 2, 3 (x = log10(1/(1-p))).
fn percentile_label(x: &f64) -> String {
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
pub(super) fn percentile_spectrum(runs: &[Labeled<'_>]) -> String {
    let hists: Vec<&Histogram<u64>> = runs.iter().map(|r| &r.summary.total.response).collect();
    if hists.iter().all(|h| h.is_empty()) {
        return no_data("timed responses");
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
                    (x, unit.of(h.value_at_quantile(q)))
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
pub(super) fn histogram(runs: &[Labeled<'_>]) -> String {
    let hists: Vec<&Histogram<u64>> = runs.iter().map(|r| &r.summary.total.response).collect();
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
pub(super) fn latency_vs_load(x_desc: &str, series: &[super::LoadSeries]) -> String {
    let max_ns = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.2.max(p.1)))
        .max()
        .unwrap_or(0);
    if max_ns == 0 {
        return no_data("latencies by load");
    }
    let unit = TimeUnit::for_max(max_ns as f64);
    let (lo, hi) = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    let pad = ((hi - lo) * 0.05).max(hi * 0.05).max(0.5);
    let y = YAxis::fit(
        series
            .iter()
            .flat_map(|s| s.points.iter().flat_map(|p| [unit.of(p.1), unit.of(p.2)])),
        true,
    );
    let y_desc = y.describe(&format!("latency ({}), median of runs", unit.name));
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
                }
                YAxis::Log(r) => {
                    let yc = LogCoord::from(r.clone().log_scale()).with_key_points(log_ticks(r));
                    let mut c = chart_on(&plot, &axes, x, yc)?;
                    draw_load_series(&mut c, series, &unit)?;
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

fn draw_load_series<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    series: &[super::LoadSeries],
    unit: &TimeUnit,
) -> ChartResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
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
pub(super) fn trend(t: &super::Trend) -> String {
    if t.points.is_empty() {
        return no_data(&format!("{} values", t.metric));
    }
    let (scale, unit) = match t.unit {
        super::TrendUnit::Nanos => {
            let u = TimeUnit::for_max(t.points.iter().map(|p| p.1).fold(0.0, f64::max));
            (1.0 / u.ns, u.name)
        }
        super::TrendUnit::PerSecond => (1.0, "per second"),
        super::TrendUnit::Ratio => (100.0, "%"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(1500.0), "1500");
        assert_eq!(tick(12.5), "12.5");
        assert_eq!(tick(2.0), "2");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(0.001234), "0.00123");
    }

    #[test]
    fn log_ticks_step_1_2_5() {
        assert_eq!(log_ticks(&(0.8..60.0)), [1.0, 2.0, 5.0, 10.0, 20.0, 50.0]);
        assert_eq!(log_ticks(&(0.5..2e5)), [1.0, 10.0, 100.0, 1000.0, 1e4, 1e5]);
    }

    #[test]
    fn percentile_labels_follow_decades() {
        let labels: Vec<String> = (0..6).map(|k| percentile_label(&(k as f64))).collect();
        assert_eq!(labels, ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"]);
        assert_eq!(percentile_label(&0.5), "");
    }

    #[test]
    fn units_follow_magnitude() {
        assert_eq!(TimeUnit::for_max(500.0).name, "ns");
        assert_eq!(TimeUnit::for_max(5e5).name, "µs");
        assert_eq!(TimeUnit::for_max(5e7).name, "ms");
        assert_eq!(TimeUnit::for_max(5e9).name, "s");
    }
}
