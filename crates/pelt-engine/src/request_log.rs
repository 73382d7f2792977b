//! The per-request log (`--log-requests FILE`): one line per measured
//! request, streamed to disk as requests finish, for people who plot and
//! join them (vegeta's results, hey's `-o csv`, ab's `-g`).
//!
//! Memory stays flat: each worker formats a line into a reused buffer and
//! appends it to its own 64 KiB `BufWriter` over the shared file, opened
//! with `O_APPEND`. A line is handed to the buffer whole, so every
//! `write(2)` the buffer makes holds whole lines, and appends from several
//! workers interleave by line, never within one. Warm-up requests are not
//! logged, as they are in no figure.

use crate::error::EngineError;
use pelt_core::{Nanos, Sample, Target};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Buffer per worker: a few hundred lines between writes.
const BUFFER: usize = 64 * 1024;

/// The CSV header line; JSON lines use the same names as keys.
pub const CSV_HEADER: &str =
    "intended_unix_ns,sent_unix_ns,first_byte_unix_ns,done_unix_ns,status,bytes_in,bytes_out,error,target,method,url";

/// A scenario run's further columns (after [`CSV_HEADER`]'s): the
/// virtual user, its flow (`once` for a once step), the user's
/// iteration (flows it started, from 1; 0 for once steps) and the step
/// (`flow/step`). Empty for a request logged with no user (one the
/// run's end found in flight).
pub const CSV_SCENARIO_COLUMNS: &str = "user,flow,iteration,step";

/// Who sent a scenario's request: the virtual user's number and its
/// iteration (the flow and step follow from the request's target).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StepOf {
    pub user: u64,
    pub iteration: u64,
}

/// How the log is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestLogFormat {
    /// Comma-separated, with a header line.
    Csv,
    /// One JSON object per line.
    JsonLines,
}

impl RequestLogFormat {
    /// JSON lines for `.json`, `.jsonl` and `.ndjson` files, CSV otherwise.
    pub fn for_path(path: &Path) -> RequestLogFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some("json" | "jsonl" | "ndjson") => RequestLogFormat::JsonLines,
            _ => RequestLogFormat::Csv,
        }
    }
}

/// Where and how to log every request of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestLogSpec {
    /// The file, created (or emptied) when the run starts.
    pub path: PathBuf,
    /// Its format.
    pub format: RequestLogFormat,
    /// The targets as the log should name them, in the config's order;
    /// `None` names the config's own with their secrets replaced by
    /// [`pelt_core::Redactor::for_config`]'s rules, as in every file
    /// pelt writes (give the config's own targets to keep the secrets,
    /// or a [`pelt_core::Redactor`] of more rules' copy to hide more).
    pub targets_shown: Option<pelt_core::Targets>,
}

/// What the workers share: the file's path and format, each target's
/// method and URL already escaped for the format, and the first write
/// error (after which logging stops and the run says so).
#[derive(Debug)]
pub(crate) struct SharedLog {
    spec: RequestLogSpec,
    /// `method` and `url` columns per target, escaped once, up front.
    targets: Vec<String>,
    /// A scenario run's `flow` and `step` columns per step, escaped
    /// once (`None`: not a scenario, no further columns).
    steps: Option<Vec<(String, String)>>,
    unix_ns_at_epoch: u64,
    pub error: OnceLock<String>,
}

impl SharedLog {
    /// Creates (or empties) the file and writes the CSV header, before any
    /// load: a log that cannot be written refuses the run.
    /// `scenario` names a scenario run's rows (its step labels first,
    /// `flow/step`), which adds the columns of [`CSV_SCENARIO_COLUMNS`].
    pub fn create(
        spec: RequestLogSpec,
        targets: &[Target],
        scenario: Option<&pelt_core::ScenarioSource>,
        unix_ns_at_epoch: u64,
    ) -> Result<Arc<SharedLog>, EngineError> {
        let cannot = |e: std::io::Error| EngineError::RequestLog {
            path: spec.path.display().to_string(),
            source: e,
        };
        let targets = spec.targets_shown.as_ref().map_or(targets, |t| &t[..]);
        let mut file = File::create(&spec.path).map_err(cannot)?;
        if spec.format == RequestLogFormat::Csv {
            match scenario {
                Some(_) => writeln!(file, "{CSV_HEADER},{CSV_SCENARIO_COLUMNS}"),
                None => writeln!(file, "{CSV_HEADER}"),
            }
            .map_err(cannot)?;
        }
        let steps = scenario.map(|sc| {
            sc.names[..sc.steps]
                .iter()
                .map(|label| {
                    // A flow's name has no '/': the label's first part.
                    let flow = label.split_once('/').map_or(label.as_str(), |(f, _)| f);
                    match spec.format {
                        RequestLogFormat::Csv => (csv_field(flow), csv_field(label)),
                        RequestLogFormat::JsonLines => (json_string(flow), json_string(label)),
                    }
                })
                .collect()
        });
        let targets = targets
            .iter()
            .map(|t| match spec.format {
                RequestLogFormat::Csv => {
                    format!("{},{}", csv_field(&t.method), csv_field(&t.url.to_string()))
                }
                RequestLogFormat::JsonLines => format!(
                    "\"method\":{},\"url\":{}",
                    json_string(&t.method),
                    json_string(&t.url.to_string())
                ),
            })
            .collect();
        Ok(Arc::new(SharedLog {
            spec,
            targets,
            steps,
            unix_ns_at_epoch,
            error: OnceLock::new(),
        }))
    }
}

/// A JSON string literal (quotes, backslashes and control characters
/// escaped).
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A CSV field, quoted when it holds a comma, quote or line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One worker's writer.
pub(crate) struct RequestLog {
    shared: Arc<SharedLog>,
    out: Option<BufWriter<File>>,
    line: Vec<u8>,
}

impl RequestLog {
    /// Opens the shared file for appending; a failure is kept as the
    /// log's error and this worker logs nothing.
    pub fn open(shared: Arc<SharedLog>) -> RequestLog {
        let out = match OpenOptions::new().append(true).open(&shared.spec.path) {
            Ok(f) => Some(BufWriter::with_capacity(BUFFER, f)),
            Err(e) => {
                let _ = shared.error.set(e.to_string());
                None
            }
        };
        RequestLog {
            shared,
            out,
            line: Vec::with_capacity(256),
        }
    }

    /// Logs `n` requests like `s` (more than one only for requests never
    /// sent, which share everything but their planned time when grouped);
    /// `by` is the virtual user that sent a scenario's step, if known.
    pub fn write(&mut self, s: &Sample, n: u64, by: Option<StepOf>) {
        let Some(out) = &mut self.out else { return };
        let unix = |t: Nanos| self.shared.unix_ns_at_epoch + t;
        let opt = |t: Option<Nanos>| t.map(unix);
        let target = &self.shared.targets[s.target as usize];
        self.line.clear();
        let line = &mut self.line;
        // Writing into a Vec cannot fail.
        let _ = match self.shared.spec.format {
            RequestLogFormat::Csv => {
                let cell = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
                write!(
                    line,
                    "{},{},{},{},{},{},{},{},{},{target}",
                    unix(s.intended),
                    cell(opt(s.sent)),
                    cell(opt(s.first_byte)),
                    unix(s.done),
                    s.status,
                    s.bytes_in,
                    s.bytes_out,
                    s.error.map_or("", |k| k.name()),
                    s.target,
                )
            }
            RequestLogFormat::JsonLines => {
                let cell = |v: Option<u64>| v.map_or("null".to_string(), |v| v.to_string());
                write!(
                    line,
                    "{{\"intended_unix_ns\":{},\"sent_unix_ns\":{},\"first_byte_unix_ns\":{},\"done_unix_ns\":{},\
                     \"status\":{},\"bytes_in\":{},\"bytes_out\":{},\"error\":{},\"target\":{},{target}",
                    unix(s.intended),
                    cell(opt(s.sent)),
                    cell(opt(s.first_byte)),
                    unix(s.done),
                    s.status,
                    s.bytes_in,
                    s.bytes_out,
                    s.error
                        .map_or("null".to_string(), |k| format!("\"{}\"", k.name())),
                    s.target,
                )
            }
        };
        let step = self
            .shared
            .steps
            .as_ref()
            .map(|steps| steps.get(s.target as usize));
        let _ = match (self.shared.spec.format, step, by) {
            (RequestLogFormat::Csv, None, _) => writeln!(line),
            (RequestLogFormat::Csv, Some(Some((flow, label))), Some(by)) => {
                writeln!(line, ",{},{flow},{},{label}", by.user, by.iteration)
            }
            (RequestLogFormat::Csv, Some(_), _) => writeln!(line, ",,,,"),
            (RequestLogFormat::JsonLines, None, _) => writeln!(line, "}}"),
            (RequestLogFormat::JsonLines, Some(Some((flow, label))), Some(by)) => writeln!(
                line,
                ",\"user\":{},\"flow\":{flow},\"iteration\":{},\"step\":{label}}}",
                by.user, by.iteration
            ),
            (RequestLogFormat::JsonLines, Some(_), _) => writeln!(
                line,
                ",\"user\":null,\"flow\":null,\"iteration\":null,\"step\":null}}"
            ),
        };
        for _ in 0..n {
            // Whole lines only: see the module docs.
            if let Err(e) = out.write_all(&self.line) {
                let _ = self.shared.error.set(e.to_string());
                self.out = None;
                return;
            }
        }
    }

    /// Writes out what is buffered.
    pub fn flush(&mut self) {
        if let Some(out) = &mut self.out {
            if let Err(e) = out.flush() {
                let _ = self.shared.error.set(e.to_string());
            }
        }
        self.out = None;
    }
}

impl std::fmt::Debug for RequestLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestLog")
            .field("path", &self.shared.spec.path)
            .finish_non_exhaustive()
    }
}
