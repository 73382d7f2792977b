//! Running a `RunConfig` as the CLI does: the results file written
//! second by second (to `-o`, the data directory's saved copy, and a
//! temporary file for the history), secrets kept out of every copy, `--until`'s
//! precision stop, a cancel token, and an observer fed each second.

use crate::observe::RunObserver;
use crate::results::Sinks;
use crate::{Cancel, Error, Result};
use pelt_core::{Redactor, RunConfig, RunSummary};
use pelt_engine::{footer_of, Progress, RequestLogFormat, RequestLogSpec, Run};
use std::path::Path;
use std::time::Duration;

/// Where a run's results file goes.
#[derive(Debug, Default)]
pub struct Keep<'a> {
    /// `-o FILE`.
    pub out: Option<&'a Path>,
    /// Save a copy for `pelt report --last` in the data directory.
    pub save: bool,
    /// The data directory ([`crate::Places::data_dir`]): where the saved
    /// copy goes (its `runs/`) and the history's spool. `None`: no saved
    /// copy (a `save` says why), the spool in the system's temp dir.
    pub data_dir: Option<&'a Path>,
    /// Secrets to keep out of every copy and of the summary returned
    /// (the run itself sends them).
    pub secrets: Redactor,
    /// Keep the results file here too, for the history: spooled to a
    /// temporary file with no name, so that memory stays flat however
    /// long the run.
    pub copy: Option<&'a mut Option<pelt_store::Spool>>,
    /// `--log-requests FILE`: every request, one line each.
    pub log: Option<&'a Path>,
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
    pub fn parse(text: &str) -> Result<Until> {
        let bad = || Error::Until(text.escape_debug().to_string());
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

/// Runs `config` with its results file written second by second,
/// `observer` fed each second and `cancel` able to stop it; returns the
/// summary of what was measured, with the secrets of `keep` replaced.
pub fn execute(
    config: RunConfig,
    keep: Keep<'_>,
    cancel: &Cancel,
    observer: &mut dyn RunObserver,
) -> Result<RunSummary> {
    if let Some(path) = keep.out {
        // Find an unwritable -o before any load is sent.
        std::fs::File::create(path).map_err(|e| {
            Error::other(format!(
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
        RequestLogSpec {
            path: path.to_path_buf(),
            format: RequestLogFormat::for_path(path),
            targets_shown: Some(secrets.config(&config).targets),
        }
    });
    let run = Run::start_with_log(config, log).map_err(|error| {
        // Leave no empty -o behind for a run that never started.
        if let Some(path) = keep.out {
            let _ = std::fs::remove_file(path);
        }
        // A failed login names its URL: not its secrets.
        Error::Engine {
            error,
            secrets: Box::new(secrets.clone()),
        }
    })?;
    let header = secrets.header(run.header());
    let save_in = match (keep.save, keep.data_dir) {
        (true, None) => {
            observer.warning(
                "this run will not be saved for `pelt report --last`: no data directory (set PELT_DATA_DIR or HOME)",
            );
            None
        }
        (save, data) => data.filter(|_| save),
    };
    let sinks = Sinks::open(keep.out, save_in, &header)?.with(
        secrets.clone(),
        keep.copy.is_some(),
        keep.data_dir,
        &header,
    );
    cancel.watch(run.canceller());
    observer.started(&planned, run.measure_from());
    if let Some(info) = run
        .header()
        .shard
        .as_ref()
        .filter(|i| i.late_ns > pelt_core::shard::LATE_START_NS)
    {
        // Said now, not only in the report: a late pod's log shows it
        // while the backlog goes out.
        observer.warning(&format!(
            "shard {} starts {} after --start-at: it keeps the run's schedule, so the requests due \
             before now go out at once, counted in send lag and response time (shards need \
             synchronised clocks and time to start)",
            info.shard,
            pelt_core::civil::span(info.late_ns),
        ));
    }
    let late = run.header().late_start_ns;
    if late > pelt_core::shard::LATE_START_NS {
        observer.warning(&format!(
            "the run starts {} after --start-at: it keeps its schedule, so the requests due before \
             now go out at once, counted in send lag and response time",
            pelt_core::civil::span(late),
        ));
    }
    // Results are written and shown from a thread of the lowest priority:
    // on a core shared with a worker (`taskset -c 0 pelt run ...`) it then
    // runs in the worker's idle gaps instead of delaying its sends. A
    // thread of its own, because `execute` may run again from this one and
    // workers take the priority of the thread that starts them.
    let until = keep.until;
    let (mut summary, copy) = std::thread::scope(|scope| {
        let follower = std::thread::Builder::new()
            .name("pelt-results".into())
            .spawn_scoped(scope, move || follow(run, sinks, observer, until))
            .map_err(|e| {
                Error::other(format!(
                    "cannot start a thread: {e}; free some memory or raise the thread limit"
                ))
            })?;
        match follower.join() {
            Ok(done) => Ok::<_, Error>(done),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })?;
    secrets.summary(&mut summary);
    if let Some(slot) = keep.copy {
        *slot = copy;
    }
    Ok(summary)
}

/// Writes and shows each second as it completes, then the whole run;
/// returns it with the history's copy of its results file, if asked for.
fn follow(
    run: Run,
    mut sinks: Sinks,
    observer: &mut dyn RunObserver,
    until: Option<Until>,
) -> (RunSummary, Option<pelt_store::Spool>) {
    let mut priority = run.lower_this_thread();
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
                for problem in sinks.take_problems() {
                    observer.warning(&problem);
                }
                observer.interval(run.elapsed(), &s);
            }
            Progress::Waiting => observer.waiting(run.elapsed()),
            Progress::Finished => break,
        }
    }
    observer.finished();
    let mut summary = run.wait();
    let (copy, problems) = sinks.finish(&footer_of(&summary));
    for problem in problems {
        observer.warning(&problem);
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use pelt_core::{Load, Stop, Target, Url};

    /// Collects what a run says besides its figures.
    #[derive(Default)]
    struct Said(Vec<String>);

    impl RunObserver for Said {
        fn warning(&mut self, message: &str) {
            self.0.push(message.to_string());
        }
    }

    /// A copy that cannot be written is said to the observer, once, and
    /// the run goes on (the library prints nothing itself).
    #[test]
    fn a_copy_that_cannot_be_saved_is_a_warning_not_a_failure() {
        let server = crate::loopback_server();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, "not a folder").unwrap();
        // The data directory under a file: runs/ cannot be made there.
        let data = file.join("data");
        let url = Url::parse(&format!("http://{}/", server.local_addr())).unwrap();
        let stop = Stop {
            requests: Some(20),
            duration: None,
        };
        let mut config = RunConfig::new(vec![Target::get(url)], Load::closed(2), stop);
        config.threads = 1;
        let keep = Keep {
            save: true,
            data_dir: Some(&data),
            ..Keep::default()
        };
        let mut said = Said::default();
        let s = execute(config, keep, &Cancel::new(), &mut said).unwrap();
        assert_eq!(s.total.requests, 20);
        assert_eq!(said.0.len(), 1, "{:?}", said.0);
        assert!(said.0[0].contains("will not be saved"), "{:?}", said.0);
    }
}
