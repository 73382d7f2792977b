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

mod figures;
pub(super) use figures::{
    histogram, latency_over_time, latency_vs_load, percentile_spectrum, spectrum_of,
    throughput_over_time, trend,
};

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

/// A plotters backend the charts draw on: its errors are boxed, so they
/// must outlive the chart.
trait Canvas: DrawingBackend<ErrorType: 'static> {}
impl<DB: DrawingBackend<ErrorType: 'static>> Canvas for DB {}

/// An axis of `f64` values that labels its ticks.
trait Axis: Ranged<ValueType = f64> + ValueFormatter<f64> {}
impl<A: Ranged<ValueType = f64> + ValueFormatter<f64>> Axis for A {}

/// A chart with its mesh drawn.
fn chart_on<'a, DB: Canvas, X: Axis, Y: Axis>(
    root: &'a DrawingArea<DB, plotters::coord::Shift>,
    axes: &Axes<'_>,
    x: X,
    y: Y,
) -> Result<ChartContext<'a, DB, Cartesian2d<X, Y>>, Box<dyn Error>> {
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

fn draw_lines<DB: Canvas, X: Axis, Y: Axis>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    axes: &Axes<'_>,
    x: X,
    y: Y,
    lines: &[Line],
) -> ChartResult {
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
#[cfg(test)]
mod tests {
    use super::figures::percentile_label;
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
