//! Secrets kept out of what a run leaves behind: the [`Redactor`] (whose
//! rules are configuration, [`crate::secrets`]) applied to a results
//! file's header, a second's error messages and a finished run's summary.

use crate::secrets::Redactor;
use crate::{Recorder, RunHeader, RunSummary};

impl Redactor {
    /// A results file's header with its secrets replaced.
    pub fn header(&self, header: &RunHeader) -> RunHeader {
        RunHeader {
            config: self.config(&header.config),
            ..header.clone()
        }
    }

    /// Whether `rec`'s error messages hold a secret value (most seconds
    /// have none: the recorder need not be copied).
    pub fn recorder_needs(&self, rec: &Recorder) -> bool {
        rec.examples.iter().any(|e| self.holds_value(&e.message))
    }

    /// Scrubs `rec`'s error messages.
    pub fn recorder(&self, rec: &mut Recorder) {
        for e in &mut rec.examples {
            e.message = self.text(&e.message);
        }
    }

    /// A finished run's summary with its secrets replaced: what reports
    /// and the history may see.
    pub fn summary(&self, s: &mut RunSummary) {
        s.config = self.config(&s.config);
        self.recorder(&mut s.total);
    }
}
