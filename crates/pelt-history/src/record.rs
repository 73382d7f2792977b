//! The run history as pelt keeps it: where it is, recording a run (a
//! shard, a sweep and its steps, an experiment's runs, a merged run) as
//! it ends, and the one-off import of the data folder's saved runs.
//!
//! The store itself (SQLite or PostgreSQL, the schema) is pelt-store's;
//! this is how runs of runs go into it.

use crate::{Error, Result};
use pelt_campaign::results as save;
use pelt_campaign::Places;
use pelt_core::{ResultsReader, ResultsWriter, RunSummary, SummaryBuilder};
use pelt_store::{Kind, NewRun, Redactor, Results, Store, StoreError};
use std::borrow::Cow;
use std::path::Path;

/// What to record runs as, and where.
#[derive(Debug, Clone, Default)]
pub struct RecordSpec {
    /// The history: a SQLite file or `postgres://...` [default:
    /// `places.history`, else history.db in the data directory].
    pub history: Option<String>,
    /// Record nothing (also: `places.no_history` without `history`).
    pub no_history: bool,
    /// The runs' label.
    pub label: Option<String>,
    /// The runs' tags.
    pub tags: Vec<(String, String)>,
    /// The data directory and the default history.
    pub places: Places,
}

/// Where the history is: `given`, else `places.history`, else the data
/// directory's history.db. The flag says whether it is the default one
/// (the one the data folder's saved runs are imported into).
pub fn location(given: Option<&str>, places: &Places) -> Result<(String, bool)> {
    if let Some(h) = given.or(places.history.as_deref()) {
        return Ok((h.to_string(), false));
    }
    let dir = places.data_dir.as_ref().ok_or(Error::NoHistoryPlace)?;
    Ok((dir.join("history.db").to_string_lossy().into_owned(), true))
}

/// The history, opened, with what the caller should tell the user (the
/// first opening of the default history imports the data folder's saved
/// runs, and says how many, and which files it could not read).
#[derive(Debug)]
pub struct Opened {
    /// The open history.
    pub store: Store,
    /// Notes for the user, one line each.
    pub notes: Vec<String>,
}

/// Opens the history (exit 2 with one line when it cannot be used: a
/// damaged file, a newer pelt's database, a server that does not answer).
/// The default history imports the data folder's saved runs the first
/// time.
pub fn open(given: Option<&str>, places: &Places) -> Result<Opened> {
    let (place, default) = location(given, places)?;
    if default {
        if let Some(parent) = Path::new(&place).parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::HistoryDir {
                dir: parent.display().to_string(),
                why: e.to_string(),
            })?;
        }
    }
    let mut store = pelt_store::open(&place).map_err(store_error)?;
    let mut notes = Vec::new();
    if default {
        if let Some(dir) = places.runs_dir() {
            let key = dir.to_string_lossy().into_owned();
            let imported = store
                .import_once(&key, || import_saved(&dir, &mut notes))
                .map_err(store_error)?;
            if let Some(n) = imported.filter(|&n| n > 0) {
                notes.push(format!(
                    "imported {n} saved run(s) from {} into the history {place}",
                    dir.display()
                ));
            }
        }
    }
    Ok(Opened { store, notes })
}

/// A store's error, said for a person.
pub fn store_error(e: StoreError) -> Error {
    Error::other(e.to_string())
}

/// The tag naming the run a shard or merged run belongs to (`--run-id`).
pub const RUN_ID_TAG: &str = "run_id";
/// The tag naming a shard, `I/N`.
pub const SHARD_TAG: &str = "shard";
/// The tag of a merged run: how many shards it merged.
pub const SHARDS_TAG: &str = "shards";
/// The tag naming the sweep (its folder) a sweep's row and steps belong to.
pub const SWEEP_TAG: &str = "sweep";
/// The tag of a sweep's step: its number.
pub const STEP_TAG: &str = "step";

/// A run about to be recorded: the open history and what to tag it with.
#[derive(Debug)]
pub struct Recording {
    store: Store,
    kind: Kind,
    label: Option<String>,
    tags: Vec<(String, String)>,
    notes: Vec<String>,
}

/// A merged run's row: new, or the one recorded by an earlier merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merged {
    /// Recorded now, as this row.
    New(i64),
    /// In the history already, as this row: not recorded again.
    Already(i64),
}

impl Recording {
    /// Opens the history before any load is sent, so that a database
    /// pelt cannot use stops the run at once (exit 2), not after it.
    /// `None` with --no-history.
    pub fn start(args: &RecordSpec) -> Result<Option<Recording>> {
        if args.no_history || (args.places.no_history && args.history.is_none()) {
            return Ok(None);
        }
        let opened = open(args.history.as_deref(), &args.places)?;
        Ok(Some(Recording {
            store: opened.store,
            kind: Kind::Run,
            label: args.label.clone(),
            tags: args.tags.clone(),
            notes: opened.notes,
        }))
    }

    /// What to tell the user about the history so far (the first
    /// opening's import), taken once.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// The history for `pelt report --merge --record`: the user asked for
    /// it, so PELT_NO_HISTORY (set where shards run) does not silently
    /// turn it off; it is refused unless --history names a database.
    pub fn for_merged(args: &RecordSpec) -> Result<Recording> {
        if args.places.no_history && args.history.is_none() {
            return Err(Error::NoHistoryToRecord);
        }
        let opened = open(args.history.as_deref(), &args.places)?;
        Ok(Recording {
            store: opened.store,
            kind: Kind::Merged,
            label: args.label.clone(),
            tags: args.tags.clone(),
            notes: opened.notes,
        })
    }

    /// Records a merged run once: a run id already recorded as merged is
    /// not recorded again (the merge is re-run for each format). Returns
    /// the new row's id, or the existing one's.
    pub fn record_merged(
        &mut self,
        summary: &RunSummary,
        run: Option<(String, u32)>,
        copy: Option<Vec<u8>>,
    ) -> Result<Merged> {
        if let Some((id, shards)) = run {
            let filter = pelt_store::Filter {
                tags: vec![(RUN_ID_TAG.into(), Some(id.clone()))],
                ..pelt_store::Filter::default()
            };
            let rows = self.store.list(&filter).map_err(store_error)?;
            if let Some(row) = rows.iter().find(|r| r.kind == Kind::Merged.name()) {
                return Ok(Merged::Already(row.id));
            }
            self.tags
                .retain(|(k, _)| k != RUN_ID_TAG && k != SHARDS_TAG);
            self.tags.push((RUN_ID_TAG.into(), id));
            self.tags.push((SHARDS_TAG.into(), shards.to_string()));
        }
        let results = match copy {
            Some(bytes) => Results::Blob(bytes),
            None => Results::None,
        };
        let run = NewRun {
            kind: self.kind,
            label: self.label.clone(),
            tags: self.tags.clone(),
            summary: Cow::Borrowed(summary),
            report_json: pelt_report::render(summary, pelt_report::Format::Json),
            results,
            capacity: None,
        };
        self.store.record(run).map(Merged::New).map_err(store_error)
    }

    /// The history for `pelt sweep` (its flags: --tag, --label,
    /// --history); `None` with --no-history.
    pub fn for_sweep(args: &RecordSpec) -> Result<Option<Recording>> {
        Ok(Recording::start(args)?.map(|mut r| {
            r.kind = Kind::Sweep;
            r
        }))
    }

    /// Records step `index` of sweep `sweep` (kind `step`, tagged with
    /// both), its results file referenced where the sweep saved it. A
    /// failure is for a warning: the step happened and its file is saved.
    pub fn record_step(
        &mut self,
        summary: &RunSummary,
        file: &Path,
        sweep: &str,
        index: usize,
    ) -> Result<i64> {
        let tags = vec![
            (SWEEP_TAG.to_string(), sweep.to_string()),
            (STEP_TAG.to_string(), index.to_string()),
        ];
        self.insert(Kind::Step, tags, summary, Some(file), None, None)
    }

    /// Records the sweep itself (kind `sweep`, with its capacity, the
    /// user's tags and label, and `sweep=ID`): the figures and results file
    /// are those of the step that set the capacity (or the last step), the
    /// JSON report the sweep's.
    pub fn record_sweep(
        &mut self,
        step: &RunSummary,
        file: &Path,
        sweep: &str,
        capacity: Option<f64>,
        report_json: String,
    ) -> Result<i64> {
        let mut tags = self.tags.clone();
        tags.retain(|(k, _)| k != SWEEP_TAG);
        tags.push((SWEEP_TAG.to_string(), sweep.to_string()));
        self.insert(
            Kind::Sweep,
            tags,
            step,
            Some(file),
            Some(report_json),
            capacity,
        )
    }

    fn insert(
        &mut self,
        kind: Kind,
        tags: Vec<(String, String)>,
        summary: &RunSummary,
        file: Option<&Path>,
        report_json: Option<String>,
        capacity: Option<f64>,
    ) -> Result<i64> {
        let results = match file {
            Some(path) => Results::File(
                std::fs::canonicalize(path)
                    .unwrap_or_else(|_| path.to_path_buf())
                    .to_string_lossy()
                    .into_owned(),
            ),
            None => Results::None,
        };
        let run = NewRun {
            kind,
            label: self.label.clone(),
            tags,
            summary: Cow::Borrowed(summary),
            report_json: report_json
                .unwrap_or_else(|| pelt_report::render(summary, pelt_report::Format::Json)),
            results,
            capacity,
        };
        self.store.record(run).map_err(store_error)
    }

    /// The history for the runs of experiment `name` (labelled with it),
    /// opened before any run; `None` with --no-history.
    pub fn for_experiment(
        history: Option<&str>,
        no_history: bool,
        places: &Places,
        name: &str,
    ) -> Result<Option<Recording>> {
        let args = RecordSpec {
            history: history.map(str::to_string),
            no_history,
            label: Some(name.to_string()),
            places: places.clone(),
            ..RecordSpec::default()
        };
        Ok(Recording::start(&args)?.map(|mut r| {
            r.kind = Kind::Experiment;
            r
        }))
    }

    /// [`Recording::record`] with these tags (an experiment's variant,
    /// level and block) instead of the flags'.
    pub fn record_tagged(
        &mut self,
        summary: &RunSummary,
        out: Option<&Path>,
        tags: Vec<(String, String)>,
    ) -> Result<i64> {
        self.tags = tags;
        self.record(summary, out, None)
    }

    /// Whether the results file must be kept for the history (spooled
    /// to a temporary file): yes, unless the user saves it where they
    /// said (`-o`).
    pub fn wants_copy(out: Option<&Path>) -> bool {
        out.is_none()
    }

    /// Records `summary` (already redacted) with its results file: the
    /// copy spooled while it ran (streamed into the history), or the `-o`
    /// file referenced. A failure is for a
    /// warning: the run happened and its results file is saved.
    pub fn record(
        &mut self,
        summary: &RunSummary,
        out: Option<&Path>,
        copy: Option<pelt_store::Spool>,
    ) -> Result<i64> {
        let results = match (out, copy) {
            (Some(path), _) => Results::File(
                std::fs::canonicalize(path)
                    .unwrap_or_else(|_| path.to_path_buf())
                    .to_string_lossy()
                    .into_owned(),
            ),
            (None, Some(spool)) => Results::Spool(spool),
            (None, None) => Results::None,
        };
        let (mut kind, mut tags) = (self.kind, self.tags.clone());
        if let (Kind::Run, Some(shard)) = (kind, summary.config.shard) {
            // A part of a run: tagged with the run it belongs to, and kept
            // out of baselines and trends (the merged run stands for it).
            kind = Kind::Shard;
            tags.retain(|(k, _)| k != RUN_ID_TAG && k != SHARD_TAG);
            tags.push((RUN_ID_TAG.into(), summary.config.run_id()));
            tags.push((SHARD_TAG.into(), shard.to_string()));
        }
        let run = NewRun {
            kind,
            label: self.label.clone(),
            tags,
            summary: Cow::Borrowed(summary),
            report_json: pelt_report::render(summary, pelt_report::Format::Json),
            results,
            capacity: None,
        };
        self.store.record(run).map_err(store_error)
    }

    /// The open history.
    pub fn store(&mut self) -> &mut Store {
        &mut self.store
    }
}

/// The data folder's saved runs, redacted, as runs to record. A file that
/// cannot be read is skipped with a note: the import must not stop every
/// later run.
fn import_saved(dir: &Path, notes: &mut Vec<String>) -> Vec<NewRun<'static>> {
    let redactor = Redactor::default();
    let mut runs = Vec::new();
    for path in save::saved_runs(dir) {
        match import_one(&path, &redactor) {
            Ok(run) => runs.push(run),
            Err(e) => notes.push(format!(
                "warning: not imported into the history: {}: {e}",
                path.display()
            )),
        }
    }
    runs
}

/// One saved run, re-encoded with its secrets replaced (files written
/// before pelt redacted them may hold some).
fn import_one(path: &Path, redactor: &Redactor) -> Result<NewRun<'static>, String> {
    let (summary, bytes) =
        read_redacted(&std::fs::read(path).map_err(|e| e.to_string())?, redactor)?;
    // A shard's saved copy is a part, as when it is recorded as it ends.
    let (kind, tags) = match summary.config.shard {
        Some(shard) => (
            Kind::Shard,
            vec![
                (RUN_ID_TAG.to_string(), summary.config.run_id()),
                (SHARD_TAG.to_string(), shard.to_string()),
            ],
        ),
        None => (Kind::Import, Vec::new()),
    };
    Ok(NewRun {
        kind,
        label: None,
        tags,
        report_json: pelt_report::render(&summary, pelt_report::Format::Json),
        summary: Cow::Owned(summary),
        results: Results::Blob(bytes),
        capacity: None,
    })
}

/// Reads a results file, and writes it again with `redactor` applied;
/// returns its summary (redacted) and the new bytes.
pub fn read_redacted(bytes: &[u8], redactor: &Redactor) -> Result<(RunSummary, Vec<u8>), String> {
    let mut reader = ResultsReader::open(bytes).map_err(|e| e.to_string())?;
    let mut redactor = redactor.clone();
    redactor.learn(&reader.header().config);
    let header = redactor.header(reader.header());
    let mut bytes = Vec::new();
    let mut writer = ResultsWriter::new(&mut bytes, &header).map_err(|e| e.to_string())?;
    let mut builder = SummaryBuilder::new(header, None);
    while let Some((second, mut rec)) = reader.next_interval().map_err(|e| e.to_string())? {
        redactor.recorder(&mut rec);
        writer.interval(second, &rec).map_err(|e| e.to_string())?;
        builder.add(second, &rec);
    }
    let footer = reader.footer().cloned();
    // A killed run has no footer: it is kept as it was written.
    if let Some(f) = &footer {
        writer.finish(f).map_err(|e| e.to_string())?;
    }
    Ok((builder.finish(footer.as_ref()), bytes))
}

/// The summary of a results file held in memory.
pub fn summary_of(bytes: &[u8]) -> Result<RunSummary, String> {
    read_redacted(bytes, &Redactor::default()).map(|(s, _)| s)
}

/// `2026-05-01 14:30:00` (UTC) for ms since the Unix epoch.
pub fn utc(ms: i64) -> String {
    pelt_core::UtcTime::from_unix((ms.max(0) / 1000) as u64).plain()
}

/// A results file of a recorded run, read from the history or from where
/// `-o` saved it.
pub fn results_bytes(run: &pelt_store::StoredRun) -> Result<Vec<u8>> {
    match &run.results {
        Results::Blob(b) => Ok(b.clone()),
        Results::Spool(s) => s.to_vec().map_err(|e| Error::NoResults {
            id: run.row.id,
            file: None,
            why: Some(e.to_string()),
        }),
        Results::File(p) => std::fs::read(p).map_err(|e| Error::NoResults {
            id: run.row.id,
            file: Some(p.to_string()),
            why: Some(e.to_string()),
        }),
        Results::None => Err(Error::NoResults {
            id: run.row.id,
            file: None,
            why: None,
        }),
    }
}

/// A recorded scenario run's steps as the history kept them (schema 3),
/// for when its results file is gone: a table like the report's Steps
/// table, under a line saying what it is. Empty for a run without steps.
pub fn recorded_steps(run: &pelt_store::StoredRun) -> String {
    use std::fmt::Write;
    if run.steps.is_empty() {
        return String::new();
    }
    let ns =
        |v: Option<u64>| v.map_or_else(|| "-".to_string(), |n| pelt_core::human_ns(n).to_string());
    let mut o = format!(
        "run {} ({}), steps as recorded (its results file is not at hand):\n",
        run.row.id, run.row.url
    );
    let _ = writeln!(
        o,
        "Steps        requests    failed   skipped       p50       p99  step"
    );
    for s in &run.steps {
        let _ = writeln!(
            o,
            "  {:>19} {:>9} {:>9} {:>9} {:>9}  {}",
            s.requests,
            s.failed,
            s.skipped,
            ns(s.p50_ns),
            ns(s.p99_ns),
            s.name
        );
    }
    o
}

/// A recorded run's configuration; `None` when it cannot be read (a run
/// recorded by a pelt whose configuration this one cannot parse).
pub fn stored_config(store: &mut Store, id: i64) -> Result<Option<pelt_core::RunConfig>> {
    let json = store.config_json(id).map_err(store_error)?;
    Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_reads_unix_milliseconds() {
        // Checked against `date -u -d @1777645805`.
        assert_eq!(utc(1_777_645_805_000), "2026-05-01 14:30:05");
        assert_eq!(utc(0), "1970-01-01 00:00:00");
    }
}
