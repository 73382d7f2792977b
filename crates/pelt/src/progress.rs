//! The live progress line: elapsed time, requests, current rate, errors.
//! Drawn on stderr, and only when stderr is a terminal, so piped or
//! redirected output never contains control characters.

use pelt_core::Stop;
use pelt_engine::Snapshot;
use std::io::{IsTerminal, Write};
use std::time::Duration;

const BAR: usize = 24;

#[derive(Debug)]
pub struct ProgressLine {
    enabled: bool,
    planned: Stop,
    warmup: Duration,
    /// Running totals and the last second's requests.
    last: Option<(u64, u64, u64)>,
    drawn: bool,
}

impl ProgressLine {
    pub fn new(quiet: bool, planned: Stop, warmup: Duration) -> ProgressLine {
        ProgressLine {
            enabled: !quiet && std::io::stderr().is_terminal(),
            planned,
            warmup,
            last: None,
            drawn: false,
        }
    }

    pub fn update(&mut self, elapsed: Duration, snapshot: Option<&Snapshot>) {
        if let Some(s) = snapshot {
            self.last = Some((s.total_requests, s.total_failed, s.row.requests));
        }
        if !self.enabled {
            return;
        }
        let (requests, failed, rate) = self.last.unwrap_or_default();
        let measuring = elapsed.saturating_sub(self.warmup);
        let fraction = match (self.planned.duration, self.planned.requests) {
            (Some(d), _) => measuring.as_secs_f64() / d.as_secs_f64(),
            (None, Some(n)) => requests as f64 / n as f64,
            (None, None) => 0.0,
        }
        .clamp(0.0, 1.0);
        let filled = (fraction * BAR as f64).round() as usize;
        // "\r\x1b[2K": back to the start and clear, so a shorter line
        // leaves no stale characters behind.
        let line = if elapsed < self.warmup {
            format!(
                "\r\x1b[2K[{}] warm-up {:.1}s of {:.1}s (not measured)",
                "-".repeat(BAR),
                elapsed.as_secs_f64(),
                self.warmup.as_secs_f64()
            )
        } else {
            format!(
                "\r\x1b[2K[{}{}] {:>6.1}s  {requests} requests  {rate} req/s last second  {failed} failed",
                "#".repeat(filled),
                "-".repeat(BAR - filled),
                measuring.as_secs_f64(),
            )
        };
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(line.as_bytes());
        let _ = err.flush();
        self.drawn = true;
    }

    pub fn clear(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
            self.drawn = false;
        }
    }
}
