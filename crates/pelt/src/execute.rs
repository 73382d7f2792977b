//! Running a `RunConfig` as the CLI does: a live progress line, Ctrl-C
//! handling, and the results file written second by second. Used by
//! `pelt run`, `pelt demo` and `pelt experiment`.

use crate::progress::ProgressLine;
use crate::save::Sinks;
use crate::UserError;
use pelt_core::{RunConfig, RunSummary};
use pelt_engine::{footer_of, Progress, RequestLogFormat, RequestLogSpec, Run};
use std::path::Path;
use std::time::Duration;

/// Where a run's results file goes.
#[derive(Debug, Default)]
pub struct Keep<'a> {
    /// `-o FILE`.
    pub out: Option<&'a Path>,
    /// Save a copy for `pelt report --last`.
    pub save: bool,
    /// Secrets to keep out of every copy and of the summary returned
    /// (the run itself sends them).
    pub secrets: pelt_store::Redactor,
    /// Keep the results file in memory too, here (for the history).
    pub copy: Option<&'a mut Option<Vec<u8>>>,
    /// `--log-requests FILE`: every request, one line each.
    pub log: Option<&'a Path>,
    /// The live views (`--metrics`, `--dashboard`, `--tui`), fed each second.
    pub live: Vec<pelt_live::Live>,
    /// `--tui`: the figures the terminal dashboard draws (one of `live`).
    pub tui: Option<pelt_live::Live>,
    /// `--until`: stop once a percentile's interval is this narrow.
    pub until: Option<Until>,
}

/// `--until 'p99 ±2%'`: run until the percentile's 95 % interval
/// (order statistics of the samples so far) spans at most ±2 %.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Until {
    /// The percentile, e.g. 99.0.
    pub percentile: f64,
    /// The widest interval accepted, relative (0.02 = ±2 %).
    pub half_width: f64,
}

impl Until {
    /// `p99 ±2%`, `p99.9 5%`, `p50 +-1%`.
    pub fn parse(text: &str) -> Result<Until, UserError> {
        let bad = || {
            UserError(format!(
                "invalid --until '{}': give a percentile and a width, like --until 'p99 ±2%'",
                text.escape_debug()
            ))
        };
        let mut words = text.split_whitespace();
        let (Some(p), Some(w), None) = (words.next(), words.next(), words.next()) else {
            return Err(bad());
        };
        let percentile: f64 = p
            .strip_prefix('p')
            .and_then(|v| v.parse().ok())
            .filter(|v: &f64| *v > 0.0 && *v < 100.0)
            .ok_or_else(bad)?;
        let w = w
            .strip_prefix('±')
            .or_else(|| w.strip_prefix("+-"))
            .unwrap_or(w);
        let half_width: f64 = w
            .strip_suffix('%')
            .and_then(|v| v.parse().ok())
            .filter(|v: &f64| *v > 0.0 && *v < 100.0)
            .ok_or_else(bad)?;
        Ok(Until {
            percentile,
            half_width: half_width / 100.0,
        })
    }
}

/// Runs `config` with a live progress line (on a terminal), Ctrl-C
/// handling, and its results file written second by second; returns the
/// summary of what was measured.
pub fn execute(config: RunConfig, quiet: bool, keep: Keep<'_>) -> Result<RunSummary, UserError> {
    if let Some(path) = keep.out {
        // Find an unwritable -o before any load is sent.
        std::fs::File::create(path).map_err(|e| {
            UserError(format!(
                "cannot write -o '{}': {e}; check the directory exists and is writable",
                path.display()
            ))
        })?;
    }
    let planned = config.effective_stop();
    let mut secrets = keep.secrets;
    secrets.learn(&config);
    let log = keep.log.map(|path| {
        // The log names each request's URL: with its secrets replaced, as
        // in every file pelt writes.
        let shown = &secrets;
        RequestLogSpec {
            path: path.to_path_buf(),
            format: RequestLogFormat::for_path(path),
            targets_shown: Some(shown.config(&config).targets),
        }
    });
    let run = Run::start_with_log(config, log).map_err(|e| {
        // Leave no empty -o behind for a run that never started.
        if let Some(path) = keep.out {
            let _ = std::fs::remove_file(path);
        }
        // The library names RunConfig's fields; the CLI, its flags.
        let message = crate::flags::engine_error(&e);
        // A failed --login names its URL: not its secrets.
        UserError(secrets.text(&message))
    })?;
    let header = secrets.header(run.header());
    let sinks = Sinks::open(keep.out, keep.save, &header)?.with(
        secrets.clone(),
        keep.copy.is_some(),
        &header,
    );
    crate::signals::cancel_on_signal(run.canceller());
    let tui = keep.tui.and_then(|live| {
        let canceller = run.canceller();
        pelt_live::tui::Tui::start(live, planned.duration, move || canceller.cancel())
            .map_err(|e| eprintln!("pelt: no terminal dashboard ({e}); showing the progress line"))
            .ok()
    });
    let line = ProgressLine::new(quiet || tui.is_some(), planned, run.measure_from());
    let live = keep.live;
    // Results are written and shown from a thread of the lowest priority:
    // on a core shared with a worker (`taskset -c 0 pelt run ...`) it then
    // runs in the worker's idle gaps instead of delaying its sends. A
    // thread of its own, because `execute` may run again from this one and
    // workers take the priority of the thread that starts them.
    let follower = std::thread::Builder::new()
        .name("pelt-results".into())
        .spawn(move || follow(run, sinks, line, live, keep.until))
        .map_err(|e| {
            UserError(format!(
                "cannot start a thread: {e}; free some memory or raise the thread limit"
            ))
        })?;
    let joined = follower.join();
    // The terminal back as it was before the report is printed.
    drop(tui);
    let (mut summary, copy) = match joined {
        Ok(done) => done,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    secrets.summary(&mut summary);
    if let Some(slot) = keep.copy {
        *slot = copy;
    }
    Ok(summary)
}

/// Writes and shows each second as it completes, then the whole run;
/// returns it with the in-memory copy of its results file, if asked for.
fn follow(
    run: Run,
    mut sinks: Sinks,
    mut line: ProgressLine,
    live: Vec<pelt_live::Live>,
    until: Option<Until>,
) -> (RunSummary, Option<Vec<u8>>) {
    let mut priority = pelt_engine::Background::lower(run.header().config.load.rate().is_some());
    // --until: the response times so far, and how narrow the interval got.
    let mut so_far = None;
    let mut narrowest: Option<f64> = None;
    let mut reached_at: Option<f64> = None;
    loop {
        match run.progress(Duration::from_millis(200)) {
            Progress::Interval(s) => {
                if let (Some(u), None) = (until, reached_at) {
                    let first = so_far.is_none();
                    let h = so_far.get_or_insert_with(|| s.recorder.response.clone());
                    if !first {
                        // Same bounds in every second's recorder: cannot fail.
                        let _ = h.add(&s.recorder.response);
                    }
                    let ci = pelt_core::summary::quantile_ci::interval(h, u.percentile);
                    if let Some(ci) = ci {
                        let w = ci.half_width();
                        narrowest = Some(narrowest.map_or(w, |n: f64| n.min(w)));
                        if w <= u.half_width {
                            reached_at = Some(
                                run.elapsed()
                                    .saturating_sub(run.measure_from())
                                    .as_secs_f64(),
                            );
                            run.canceller().enough();
                        }
                    }
                }
                priority.keep_up(s.row.unix_second);
                sinks.interval(s.row.unix_second, &s.recorder);
                for view in &live {
                    view.feed(
                        &s.row,
                        &s.recorder,
                        pelt_live::Gauges {
                            in_flight: s.in_flight,
                            connections_open: s.connections_open,
                        },
                    );
                }
                line.update(run.elapsed(), Some(&s));
            }
            Progress::Waiting => line.update(run.elapsed(), None),
            Progress::Finished => break,
        }
    }
    line.clear();
    let mut summary = run.wait();
    let copy = sinks.finish(&footer_of(&summary));
    if let Some(u) = until {
        summary.warnings.push(pelt_core::Warning::Until {
            percentile: u.percentile,
            target: u.half_width,
            achieved: narrowest.filter(|w| w.is_finite()),
            reached: reached_at.is_some(),
            after_s: reached_at.unwrap_or(summary.duration.as_secs_f64()),
        });
    }
    (summary, copy)
}
