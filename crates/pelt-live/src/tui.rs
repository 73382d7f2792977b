//! The terminal dashboard (`--tui`): ratatui on stderr's alternate
//! screen, redrawn from a [`Live`] a few times a second by a thread of
//! its own, so stdout stays free for the report.

use crate::metrics::{bucket_counts, BUCKETS_S};
use crate::state::State;
use crate::Live;
use pelt_core::human_ns;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::crossterm::{cursor, execute};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::Line;
use ratatui::widgets::{
    Axis, Bar, BarChart, BarGroup, Block, Chart, Dataset, GraphType, Paragraph,
};
use ratatui::{Frame, Terminal};
use std::io::{self, Stderr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The smallest terminal the dashboard draws in; smaller gets a note.
pub const MIN_SIZE: (u16, u16) = (60, 16);
/// How often the screen is redrawn (and keys read).
const TICK: Duration = Duration::from_millis(250);

/// Why the dashboard asks for the run to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// `q`, or Ctrl-C (raw mode turns it into a key): as Ctrl-C.
    Quit,
    /// The terminal went away: its input ended or failed (a closed tmux
    /// session, a dropped SSH connection), or drawing on it failed. A
    /// hang-up, as SIGHUP says, which may never come (a process outside
    /// the terminal's session gets none).
    Gone,
}

/// A running terminal dashboard.
#[derive(Debug)]
pub struct Tui {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl Tui {
    /// Takes over the terminal (stderr) and draws `live` until
    /// [`Tui::stop`]; calls `ask` with [`Stop::Quit`] on `q` or Ctrl-C,
    /// and once with [`Stop::Gone`] if the terminal goes away (the
    /// dashboard then ends: nothing is left to draw on). `planned` is the
    /// run's measured length, if known.
    pub fn start(
        live: Live,
        planned: Option<Duration>,
        ask: impl Fn(Stop) + Send + 'static,
    ) -> io::Result<Tui> {
        enable_raw_mode()?;
        let mut err = io::stderr();
        if let Err(e) = execute!(err, EnterAlternateScreen, cursor::Hide) {
            let _ = disable_raw_mode();
            return Err(e);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("pelt-tui".into())
            .spawn(move || {
                let mut term = Terminal::new(CrosstermBackend::new(io::stderr()))?;
                let mut keys = Keys::open();
                while !stopping.load(Ordering::Acquire) {
                    // A terminal that cannot be drawn on is gone too.
                    let input = match draw(&mut term, &live, planned) {
                        Ok(()) => keys.next(TICK),
                        Err(_) => Input::Gone,
                    };
                    match input {
                        Input::Nothing => {}
                        Input::Quit => ask(Stop::Quit),
                        Input::Gone => {
                            ask(Stop::Gone);
                            break;
                        }
                    }
                }
                Ok(())
            });
        match thread {
            Ok(t) => Ok(Tui {
                stop,
                thread: Some(t),
            }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }

    /// Stops drawing and gives the terminal back as it was.
    pub fn stop(mut self) {
        self.end();
    }

    fn end(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
            restore();
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        // Also on a panic: a terminal left in raw mode is unusable.
        self.end();
    }
}

/// What the terminal's input said within a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Input {
    Nothing,
    Quit,
    Gone,
}

/// The terminal's keys, read here rather than by crossterm's event
/// reader: on a terminal that has gone away (`read` gives 0, or EIO)
/// crossterm 0.28 reads again for ever inside `event::poll`, so the
/// dashboard's thread spun and the run, waiting to join it, never ended
/// (issue 35). Here end of input, an error or a hang-up is [`Input::Gone`].
/// Resizes need no event: every draw fits the terminal's size.
#[derive(Debug)]
struct Keys {
    /// stdin if it is the terminal, else `/dev/tty` (as crossterm picks);
    /// none if neither opens: then only the drawing is paced.
    #[cfg(unix)]
    fd: Option<std::os::fd::OwnedFd>,
}

impl Keys {
    #[cfg(unix)]
    fn open() -> Keys {
        use std::io::IsTerminal;
        use std::os::fd::AsFd;
        let stdin = io::stdin();
        let fd = match stdin.is_terminal() {
            true => stdin.as_fd().try_clone_to_owned().ok(),
            false => std::fs::File::open("/dev/tty").ok().map(Into::into),
        };
        Keys { fd }
    }

    #[cfg(not(unix))]
    fn open() -> Keys {
        Keys {}
    }

    /// Waits up to `tick` for a key.
    #[cfg(unix)]
    fn next(&mut self, tick: Duration) -> Input {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        use rustix::io::Errno;
        let Some(fd) = &self.fd else {
            std::thread::sleep(tick);
            return Input::Nothing;
        };
        let timeout = Timespec {
            tv_sec: tick.as_secs() as _,
            tv_nsec: tick.subsec_nanos().into(),
        };
        let mut fds = [PollFd::new(fd, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) | Err(Errno::INTR) => return Input::Nothing,
            Ok(_) => {}
            Err(_) => return Input::Gone,
        }
        // A hung-up terminal polls as HUP (and ERR); a pty whose other
        // side closed, as HUP.
        if fds[0]
            .revents()
            .intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL)
        {
            return Input::Gone;
        }
        let mut buf = [0u8; 256];
        match rustix::io::read(fd, &mut buf) {
            Ok(0) => Input::Gone,
            Ok(n) if quits(&buf[..n]) => Input::Quit,
            Ok(_) | Err(Errno::INTR | Errno::AGAIN) => Input::Nothing,
            Err(_) => Input::Gone,
        }
    }

    #[cfg(not(unix))]
    fn next(&mut self, tick: Duration) -> Input {
        std::thread::sleep(tick);
        Input::Nothing
    }
}

/// Whether a read of the terminal in raw mode holds `q` or Ctrl-C (byte
/// 3), outside an escape sequence (an arrow key, a paste's markers).
#[cfg_attr(not(unix), allow(dead_code))]
fn quits(bytes: &[u8]) -> bool {
    bytes.first() != Some(&0x1b) && bytes.iter().any(|&b| b == b'q' || b == 3)
}

fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(io::stderr(), LeaveAlternateScreen, cursor::Show);
}

fn draw(
    term: &mut Terminal<CrosstermBackend<Stderr>>,
    live: &Live,
    planned: Option<Duration>,
) -> io::Result<()> {
    live.read(|s| term.draw(|f| frame(f, s, planned)).map(|_| ()))
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// The figures at the top, one line each (the tmux test reads them).
pub fn header(s: &State, planned: Option<Duration>) -> Vec<String> {
    let t = &s.total;
    let row = s.rows.last();
    let elapsed = s.seconds;
    let left = match planned {
        Some(p) if !s.finished => {
            format!(", {} s left", p.as_secs().saturating_sub(elapsed))
        }
        _ => String::new(),
    };
    // A WebSocket run's requests are messages (a scenario's rate unit
    // counts flows, its requests are still requests).
    let unit = match s.rate_unit {
        "messages/s" => "messages/s",
        _ => "req/s",
    };
    let rate = row.map_or("-".into(), |r| format!("{} {unit}", r.requests));
    let offered = row.and_then(|r| r.offered).map_or(String::new(), |o| {
        format!(" (offered {o:.0} {})", s.rate_unit)
    });
    let h = s.headline.of(t);
    let p99 = if h.is_empty() {
        "-".to_string()
    } else {
        human_ns(pelt_core::rank::quantile(h, 0.99)).to_string()
    };
    let lag = s
        .last
        .as_ref()
        .filter(|(_, r)| !r.send_lag.is_empty())
        .map_or("-".to_string(), |(_, r)| {
            human_ns(pelt_core::rank::quantile(&r.send_lag, 0.99)).to_string()
        });
    vec![
        format!(
            "pelt live   {elapsed} s measured{left}{}   q: stop",
            if s.finished { ", finished" } else { "" }
        ),
        format!(
            "requests {}   rate {rate}{offered}   failed {} ({:.2}%)",
            t.requests,
            t.failed(),
            // pelt-core's one share, as every report gives it.
            t.failed_share() * 100.0
        ),
        format!(
            "{} p99 {p99} (run so far)   send lag p99 {lag} (last second)   in flight {}   connections {}",
            s.headline.name(),
            s.gauges.in_flight,
            s.gauges.connections_open
        ),
    ]
}

fn frame(f: &mut Frame<'_>, s: &State, planned: Option<Duration>) {
    let area = f.area();
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        f.render_widget(
            Paragraph::new(format!(
                "terminal too small: {}x{}, need {}x{}",
                area.width, area.height, MIN_SIZE.0, MIN_SIZE.1
            )),
            area,
        );
        return;
    }
    let [top, middle, bottom] = Layout::vertical([
        Constraint::Length(5),
        Constraint::Percentage(55),
        Constraint::Min(6),
    ])
    .areas(area);
    let lines: Vec<Line<'_>> = header(s, planned).into_iter().map(Line::from).collect();
    f.render_widget(Paragraph::new(lines).block(Block::bordered()), top);
    latency_chart(f, s, middle);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(bottom);
    histogram(f, s, left);
    outcomes(f, s, right);
}

/// A chart line: its name, colour, and figure of a second.
type Series = (&'static str, Color, fn(&pelt_core::IntervalRow) -> u64);

fn latency_chart(f: &mut Frame<'_>, s: &State, area: Rect) {
    let series: [Series; 4] = [
        ("p50", Color::Green, |r| r.p50_ns),
        ("p90", Color::Yellow, |r| r.p90_ns),
        ("p99", Color::LightRed, |r| r.p99_ns),
        ("max", Color::Red, |r| r.max_ns),
    ];
    let points: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|(_, _, get)| {
            s.rows
                .iter()
                .enumerate()
                .map(|(i, r)| (i as f64, ms(get(r))))
                .collect()
        })
        .collect();
    let top = points
        .iter()
        .flatten()
        .map(|p| p.1)
        .fold(0.0_f64, f64::max)
        .max(0.001);
    let n = s.rows.len().max(2) as f64;
    let datasets = series
        .iter()
        .zip(&points)
        .map(|((name, color, _), pts)| {
            Dataset::default()
                .name(*name)
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(Style::default().fg(*color))
                .data(pts)
        })
        .collect();
    // The unit is in the title and the labels: an axis title ("ms") is
    // drawn inside the plot's top row, over the lines (issue 35).
    let chart = Chart::new(datasets)
        .block(Block::bordered().title(format!(
            "{} per second, ms (p50, p90, p99, max of its requests)",
            s.headline.name()
        )))
        .x_axis(
            Axis::default()
                .title("time into the run")
                .bounds([0.0, n - 1.0])
                .labels([
                    "0 s".to_string(),
                    format!("{} s", s.rows.len().saturating_sub(1)),
                ]),
        )
        .y_axis(
            Axis::default()
                .bounds([0.0, top])
                .labels(["0 ms".to_string(), format!("{top:.2} ms")]),
        )
        // The legend always, whatever the panel's size: four coloured
        // lines mean nothing without it.
        .legend_position(Some(ratatui::widgets::LegendPosition::TopLeft))
        .hidden_legend_constraints((Constraint::Ratio(1, 1), Constraint::Ratio(1, 1)));
    f.render_widget(chart, area);
}

fn histogram(f: &mut Frame<'_>, s: &State, area: Rect) {
    let bars = histogram_bars(s.headline.of(&s.total));
    let bars: Vec<Bar<'_>> = bars
        .into_iter()
        .map(|(label, n)| Bar::default().value(n).label(Line::from(label)))
        .collect();
    f.render_widget(
        BarChart::default()
            .block(Block::bordered().title(format!(
                "requests by {}, each bar up to its bound",
                s.headline.name()
            )))
            .bar_width(5)
            .bar_gap(1)
            .data(BarGroup::default().bars(&bars)),
        area,
    );
}

/// The histogram's bars: `(upper bound with its unit, requests in the
/// bucket)`, from the first bucket with any up to the last (at least
/// one), so a narrow panel shows where the requests are. Bounds say
/// `ms` or `s`: `0.5m` read as half a minute.
fn histogram_bars(h: &hdrhistogram::Histogram<u64>) -> Vec<(String, u64)> {
    let cumulative = bucket_counts(h);
    let mut prev = 0;
    let all: Vec<(String, u64)> = BUCKETS_S
        .iter()
        .zip(cumulative)
        .map(|(b, c)| {
            let n = c - prev;
            prev = c;
            (bound_label(*b), n)
        })
        .collect();
    let first = all.iter().position(|b| b.1 > 0).unwrap_or(0);
    let last = all.iter().rposition(|b| b.1 > 0).unwrap_or(0);
    all[first..=last].to_vec()
}

/// A bucket's bound in at most 5 characters: `0.5ms`, `250ms`, `2.5s`.
fn bound_label(seconds: f64) -> String {
    if seconds < 1.0 {
        format!("{}ms", seconds * 1e3)
    } else {
        format!("{seconds}s")
    }
}

fn outcomes(f: &mut Frame<'_>, s: &State, area: Rect) {
    let t = &s.total;
    let mut lines: Vec<Line<'_>> = t
        .status_counts()
        .map(|(code, n)| Line::from(format!("{code}: {n}")))
        .collect();
    let failed = t.failed();
    if failed > 0 {
        lines.push(Line::from(format!("failed: {failed}")));
    }
    for (kind, n) in t.failures() {
        lines.push(Line::from(format!("  {}: {n}", kind.name())));
    }
    if let Some(st) = t.streamed.as_deref() {
        // Issue 38: streamed responses, in runs that met one.
        let p99 = |h: &hdrhistogram::Histogram<u64>| match h.is_empty() {
            true => "-".to_string(),
            false => human_ns(pelt_core::rank::quantile(h, 0.99)).to_string(),
        };
        let last = s.rows.last().and_then(|r| r.events).unwrap_or(0);
        lines.push(Line::from(format!(
            "streams: {} complete, {} events ({last} last second), {} stalls",
            st.streams, st.events, st.stalls
        )));
        lines.push(Line::from(format!(
            "  first event p99 {}, gap p99 {}",
            p99(&st.first_event),
            p99(&st.gaps)
        )));
    }
    if let Some(e) = t.examples.last() {
        lines.push(Line::from(format!(
            "newest: {}: {}",
            e.kind.name(),
            e.message
        )));
    }
    if lines.is_empty() {
        lines.push(Line::from("no responses yet"));
    }
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title("statuses and failures")),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Gauges, TargetLabels};
    use pelt_core::Recorder;
    use ratatui::backend::TestBackend;

    #[test]
    fn q_and_ctrl_c_quit_outside_escape_sequences() {
        assert!(quits(b"q"));
        assert!(quits(&[3]));
        assert!(quits(b"xq"));
        assert!(!quits(b"x"));
        assert!(!quits(b"\x1b[A"));
        assert!(!quits(b"\x1bOq"));
    }

    #[test]
    fn bounds_name_their_unit() {
        assert_eq!(bound_label(0.0005), "0.5ms");
        assert_eq!(bound_label(0.25), "250ms");
        assert_eq!(bound_label(2.5), "2.5s");
        assert!(BUCKETS_S.iter().all(|b| bound_label(*b).len() <= 5));
    }

    #[test]
    fn bars_span_the_buckets_with_requests() {
        let mut h = pelt_core::recorder::new_histogram();
        h.record(3_000_000).unwrap();
        h.record(40_000_000).unwrap();
        let bars = histogram_bars(&h);
        assert_eq!(bars.first().unwrap(), &("5ms".to_string(), 1));
        assert_eq!(bars.last().unwrap(), &("50ms".to_string(), 1));
        assert_eq!(bars.iter().map(|b| b.1).sum::<u64>(), 2);
    }

    // Issue 22 §5: the histogram said `0.5m 1m 2.5m` for milliseconds
    // and the chart had no legend.
    #[test]
    fn the_screen_has_units_axes_and_a_legend() {
        let live = Live::new("r".into(), TargetLabels::default());
        for ms in [1u64, 2, 30] {
            let mut rec = Recorder::new();
            rec.requests = 1;
            rec.response.record(ms * 1_000_000).unwrap();
            let row = pelt_core::IntervalRow::from_recorder(
                0,
                0.0,
                &rec,
                pelt_core::Headline::ResponseTime,
            );
            live.feed(&row, &rec, Gauges::default());
        }
        let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
        live.read(|s| term.draw(|f| frame(f, s, None)).map(|_| ()))
            .unwrap();
        let screen: String = term
            .backend()
            .buffer()
            .content()
            .chunks(120)
            .map(|row| row.iter().map(|c| c.symbol()).collect::<String>() + "\n")
            .collect();
        for want in [
            "2.5ms",
            "10ms",
            "50ms",
            "time into the run",
            "p50",
            "p99",
            "max",
            "ms",
        ] {
            assert!(screen.contains(want), "{want} not on screen:\n{screen}");
        }
        assert!(!screen.contains("0.5m "), "minutes for milliseconds");
    }

    /// Issue 35 §2: the chart's "ms" axis title was drawn inside the plot
    /// (its top row, over the legend and the lines); the unit is in the
    /// chart's title and its labels. The header gives the failed count
    /// with its share, and the latency drawn is the run's headline.
    #[test]
    fn the_chart_has_no_axis_title_over_its_plot_and_failed_has_its_share() {
        let live = Live::new("r".into(), TargetLabels::default());
        live.set_headline(pelt_core::Headline::ServiceTime);
        for ms in [1u64, 2, 30] {
            let mut rec = Recorder::new();
            rec.requests = 4;
            rec.successes = 3;
            rec.service.record(ms * 1_000_000).unwrap();
            rec.response.record(ms * 2_000_000).unwrap();
            let row = pelt_core::IntervalRow::from_recorder(
                0,
                0.0,
                &rec,
                pelt_core::Headline::ServiceTime,
            );
            live.feed(&row, &rec, Gauges::default());
        }
        let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
        live.read(|s| term.draw(|f| frame(f, s, None)).map(|_| ()))
            .unwrap();
        let rows: Vec<String> = term
            .backend()
            .buffer()
            .content()
            .chunks(120)
            .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
            .collect();
        let screen = rows.join("\n");
        let title = rows
            .iter()
            .position(|r| r.contains("service time per second, ms"))
            .unwrap_or_else(|| panic!("the chart's title:\n{screen}"));
        // The row under the title is the plot's first: no lone "ms" there.
        let first = &rows[title + 1];
        // (It was drawn right after the y axis: "30.02 ms│ms ...".)
        assert!(!first.contains("│ms "), "{first}\n{screen}");
        assert!(screen.contains("failed 3 (25.00%)"), "{screen}");
        assert!(screen.contains("service time p99 "), "{screen}");
        assert!(screen.contains("requests by service time"), "{screen}");
    }
}
