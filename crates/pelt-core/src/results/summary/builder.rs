//! Folding a run's seconds into its summary, live or from a saved file.

use super::*;

/// Folds a run's seconds, in order, into a [`RunSummary`].
///
/// The engine builds its live summary with this, and `pelt report`
/// rebuilds a saved one with it, so a saved run reports exactly as it did
/// live.
#[derive(Debug)]
pub struct SummaryBuilder {
    header: RunHeader,
    window: Option<Window>,
    total: Recorder,
    timeline: Vec<IntervalRow>,
}

impl SummaryBuilder {
    /// A builder for the run described by `header`; with a `window`, only the seconds inside it count.
    pub fn new(header: RunHeader, window: Option<Window>) -> SummaryBuilder {
        SummaryBuilder {
            header,
            window,
            total: Recorder::new(),
            timeline: Vec::new(),
        }
    }

    /// The header of the run being built.
    pub fn header(&self) -> &RunHeader {
        &self.header
    }

    /// Seconds from the start of measurement to the start of `unix_second`.
    pub fn offset_of(&self, unix_second: u64) -> f64 {
        (unix_second as f64 * 1e9 - self.header.measure_start_unix_ns as f64) / 1e9
    }

    /// Adds one second of the run; returns its row, or `None` if the
    /// window leaves it out.
    pub fn add(&mut self, unix_second: u64, rec: &Recorder) -> Option<IntervalRow> {
        let offset_s = self.offset_of(unix_second);
        if self.window.is_some_and(|w| !w.contains(offset_s)) {
            return None;
        }
        let headline = Headline::for_rate_mode(self.header.config.load.rate().is_some());
        let mut row = IntervalRow::from_recorder(unix_second, offset_s, rec, headline);
        self.plan_row(&mut row);
        self.total.merge(rec);
        self.timeline.push(row);
        Some(row)
    }

    /// Fills in what the schedule planned for `row`'s second: requests
    /// offered (rate runs) or connections active (a `-c` schedule).
    fn plan_row(&self, row: &mut IntervalRow) {
        let config = &self.header.config;
        let end = config
            .effective_stop()
            .duration
            .map_or(f64::INFINITY, |d| d.as_secs_f64());
        let from = row.offset_s.clamp(0.0, end);
        let to = (row.offset_s + 1.0).clamp(0.0, end);
        let count = |t: f64| {
            // A crafted results file can put `t` beyond any Duration.
            let t = std::time::Duration::try_from_secs_f64(t).ok()?;
            config.load.offered_count(t)
        };
        if let (Some(a), Some(b)) = (count(from), count(to)) {
            // One shard offered its share of the whole run's.
            row.offered = Some((b - a) / f64::from(config.shard_or_whole().count));
        }
        if let (crate::config::Load::Closed { .. }, Some(s)) =
            (&config.load, config.load.schedule())
        {
            row.active_connections = Some(s.level(row.offset_s + 0.5).ceil() as u32);
        }
    }

    /// Everything added so far.
    pub fn total(&self) -> &Recorder {
        &self.total
    }

    /// The summary. `footer` is `None` for a run that was killed.
    pub fn finish(self, footer: Option<&RunFooter>) -> RunSummary {
        let measured_end_ns = self
            .total
            .last_done
            .saturating_sub(self.header.measure_from_ns);
        let (duration, elapsed) = match footer {
            Some(f) => (f.duration_ns, f.elapsed_ns),
            None => (measured_end_ns, measured_end_ns),
        };
        let sending = self
            .total
            .last_sent
            .saturating_sub(self.header.measure_from_ns)
            .max(duration)
            .min(elapsed.max(duration));
        let (duration, elapsed, sending) = match self.window {
            None => (duration, elapsed, sending),
            Some(_) => {
                // Each included second covers its share of the run.
                let end = elapsed as f64 / 1e9;
                let covered: f64 = self
                    .timeline
                    .iter()
                    .map(|r| ((r.offset_s + 1.0).min(end) - r.offset_s.max(0.0)).max(0.0))
                    .sum();
                let ns = (covered * 1e9) as u64;
                (ns.min(duration), ns, ns.min(duration))
            }
        };
        let late_shard = self.header.shard.as_ref().map(|i| (i.shard, i.late_ns));
        let late_start = self.header.late_start_ns;
        let mut summary = RunSummary {
            config: self.header.config,
            env: self.header.env,
            total: self.total,
            timeline: self.timeline,
            duration: Duration::from_nanos(duration),
            elapsed: Duration::from_nanos(elapsed),
            sending: Duration::from_nanos(sending),
            warmup_requests: footer.map_or(0, |f| f.warmup_requests),
            interrupted: footer.is_none_or(|f| f.interrupted),
            stopped_by: footer.and_then(|f| f.stopped_by.clone()),
            complete: footer.is_some(),
            window: self.window,
            worker_load: footer.map_or_else(Vec::new, |f| f.worker_load.clone()),
            server_software: footer.and_then(|f| f.server_software.clone()),
            warnings: Vec::new(),
        };
        summary.warnings = summary.diagnose();
        if let Some((shard, late_ns)) = late_shard.filter(|&(_, l)| l > LATE_START_NS) {
            // One shard's own report (live, or its file alone): a shard
            // that came up after --start-at sent what it missed at once.
            explain_late_start(&mut summary.warnings, late_ns);
            summary.warnings.push(Warning::LateShard { shard, late_ns });
        } else if late_start > LATE_START_NS {
            // A whole run late against its --start-at sent its backlog at
            // once, as a late shard does (issue 35 §1: the warnings blamed
            // the connections, "raise -c").
            explain_late_start(&mut summary.warnings, late_start);
            summary.warnings.push(Warning::LateStart {
                late_ns: late_start,
            });
        }
        summary
    }
}

/// Drops the send-lag warning that a shard's late start explains: the
/// requests due before it came up went out at once, late by at most the
/// delay, so "raise -c" would be the wrong advice. Send lag beyond the
/// delay (plus the usual allowance) has another cause and keeps its
/// warning.
pub fn explain_late_start(warnings: &mut Vec<Warning>, late_ns: u64) {
    // The backlog it leaves peaks by the time the shard is up (and one
    // send grid slot for the slot's end).
    let late_s = (late_ns + crate::independence::GRID_NS) as f64 / 1e9;
    warnings.retain(|w| {
        !matches!(w, Warning::SendLag { p99_ns, .. } if *p99_ns <= late_ns.saturating_add(SEND_LAG_WARN_NS))
            && !matches!(w, Warning::OffSchedule { behind, at_s, .. } if *behind > 0 && *at_s <= late_s)
    });
}
