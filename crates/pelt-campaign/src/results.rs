//! Where runs are kept, writing them as they happen, and reading them
//! back (one file, or several merged) under the names reports give them.

use crate::observe::Observer;
use crate::{Error, Result};
use pelt_core::results::{MergeError, MergedReader};
use pelt_core::Redactor;
use pelt_core::{Recorder, ResultsReader, ResultsWriter, RunFooter, RunHeader, RunSummary, Window};
use pelt_store::Spool;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};

/// Saved runs kept in the data directory; older ones are removed.
const KEEP_RUNS: usize = 100;

/// Saved runs in `dir`, oldest first (names sort by time).
pub fn saved_runs(dir: &Path) -> Vec<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pelt"))
        .collect();
    runs.sort();
    runs
}

/// Writes a run to every destination as it goes: `-o FILE` and the saved
/// copy. A destination that fails is reported once and dropped; the run
/// itself goes on, because measurements matter more than their copies.
///
/// Every copy is written without secrets: `header` comes redacted, and
/// each second's error messages are scrubbed of the run's secret values.
#[derive(Debug, Default)]
pub struct Sinks {
    writers: Vec<(PathBuf, ResultsWriter<BufWriter<File>>)>,
    /// A copy for the history, in a temporary file with no name (see
    /// [`spool_file`]): in memory it would grow with the run's length.
    spool: Option<ResultsWriter<BufWriter<File>>>,
    secrets: Redactor,
    /// Copies given up on, said for a person; the caller shows them
    /// ([`Sinks::take_problems`]): a library prints nothing.
    problems: Vec<String>,
}

impl Sinks {
    /// Opens the destinations: `-o` and, when `save_in` names the data
    /// directory, a copy in its `runs/`. An unwritable `-o` is an input
    /// error (exit 2) found before any load is sent; an unwritable data
    /// directory only warns.
    pub fn open(out: Option<&Path>, save_in: Option<&Path>, header: &RunHeader) -> Result<Sinks> {
        let mut sinks = Sinks::default();
        if let Some(path) = out {
            let writer = File::create(path)
                .and_then(|f| ResultsWriter::new(BufWriter::new(f), header))
                .map_err(|e| {
                    Error::other(format!(
                        "cannot write -o '{}': {e}; check the directory exists and is writable",
                        path.display()
                    ))
                })?;
            sinks.writers.push((path.to_path_buf(), writer));
        }
        if let Some(data) = save_in {
            match Self::open_saved(&data.join("runs"), header) {
                Ok(w) => sinks.writers.push(w),
                Err(e) => sinks.problems.push(format!(
                    "this run will not be saved for `pelt report --last`: {e}"
                )),
            }
        }
        Ok(sinks)
    }

    fn open_saved(
        dir: &Path,
        header: &RunHeader,
    ) -> Result<(PathBuf, ResultsWriter<BufWriter<File>>), String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut old = saved_runs(dir);
        while old.len() >= KEEP_RUNS {
            let _ = std::fs::remove_file(old.remove(0));
        }
        let secs = header.env.started_unix_ms / 1000;
        let path = dir.join(format!("{}-{}.pelt", utc_stamp(secs), std::process::id()));
        let writer = File::create(&path)
            .and_then(|f| ResultsWriter::new(BufWriter::new(f), header))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok((path, writer))
    }

    /// Also keeps the results file for the history, spooled to a
    /// temporary file ([`Sinks::finish`] returns it), and scrubs
    /// `secrets`' values from every copy. The spool goes in `data` when
    /// given (a file with no name: the system frees it however pelt ends).
    pub fn with(
        mut self,
        secrets: Redactor,
        copy: bool,
        data: Option<&Path>,
        header: &RunHeader,
    ) -> Sinks {
        self.secrets = secrets;
        if copy {
            match spool_file(data).and_then(|f| ResultsWriter::new(BufWriter::new(f), header)) {
                Ok(w) => self.spool = Some(w),
                Err(e) => self.problems.push(format!(
                    "the history will keep this run without its results file: no temporary file for it ({e})"
                )),
            }
        }
        self
    }

    /// Writes one second to every copy (a copy that fails is dropped, with a warning).
    pub fn interval(&mut self, second: u64, rec: &Recorder) {
        let scrubbed;
        let rec = if self.secrets.recorder_needs(rec) {
            let mut copy = rec.clone();
            self.secrets.recorder(&mut copy);
            scrubbed = copy;
            &scrubbed
        } else {
            rec
        };
        let problems = &mut self.problems;
        if let Some(w) = &mut self.spool {
            if let Err(e) = w.interval(second, rec) {
                problems.push(format!(
                    "the history will keep this run without its results file: {e}"
                ));
                self.spool = None;
            }
        }
        self.writers
            .retain_mut(|(path, w)| match w.interval(second, rec) {
                Ok(()) => true,
                Err(e) => {
                    problems.push(format!("stopped writing {}: {e}", path.display()));
                    false
                }
            });
    }

    /// The copies given up on since the last call, one line each.
    pub fn take_problems(&mut self) -> Vec<String> {
        std::mem::take(&mut self.problems)
    }

    /// Ends every copy; returns the one kept for the history, if asked
    /// for, and the copies that could not be finished (one line each).
    pub fn finish(self, footer: &RunFooter) -> (Option<Spool>, Vec<String>) {
        let mut problems = self.problems;
        for (path, w) in self.writers {
            if let Err(e) = w.finish(footer) {
                problems.push(format!("could not finish {}: {e}", path.display()));
            }
        }
        let spool = self.spool.map(|w| {
            w.finish(footer)
                .and_then(|b| b.into_inner().map_err(std::io::IntoInnerError::into_error))
                .and_then(Spool::new)
        });
        let spool = match spool {
            Some(Err(e)) => {
                problems.push(format!(
                    "the history will keep this run without its results file: {e}"
                ));
                None
            }
            other => other.and_then(Result::ok),
        };
        (spool, problems)
    }
}

/// A temporary file for the history's copy of a run, created with no
/// name (`O_TMPFILE`, or unlinked at once): however pelt ends (Ctrl-C,
/// SIGTERM, even SIGKILL) the system frees it, and nothing is left to
/// clean. In the data directory, which holds the saved copies of runs
/// anyway (a temp dir is often a tmpfs, memory again); the system's temp
/// dir without one.
fn spool_file(data: Option<&Path>) -> std::io::Result<File> {
    if let Some(dir) = data {
        if let Ok(f) = std::fs::create_dir_all(dir).and_then(|()| tempfile::tempfile_in(dir)) {
            return Ok(f);
        }
    }
    tempfile::tempfile()
}

/// `20261121-160301` for a Unix time, UTC: file names that sort by time.
pub fn utc_stamp(unix_secs: u64) -> String {
    pelt_core::UtcTime::from_unix(unix_secs).stamp()
}

/// Refuses a file named twice in `files`: merged or compared, its
/// requests would count twice (`what` says where).
pub fn once_each(files: &[PathBuf], what: &str) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for path in files {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if !seen.insert(key) {
            return Err(Error::other(format!(
                "'{}' is given twice; {what}, so give each file once",
                path.display()
            )));
        }
    }
    Ok(())
}

/// A results file's name in reports: its file name without `.pelt`.
pub fn label(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// The summary of one saved run.
///
/// A folder is one sharded run: its `.pelt` files (the parts, as `pelt
/// slurm` or a Kubernetes volume collects them) merged, every shard
/// required, so `pelt compare` takes merged runs.
pub fn load(path: &Path) -> Result<RunSummary> {
    if path.is_dir() {
        let read = |e: std::io::Error| {
            Error::other(format!("cannot read the folder '{}': {e}", path.display()))
        };
        let mut parts: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(read)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .map_err(read)?;
        parts.retain(|p| p.extension().is_some_and(|e| e == "pelt"));
        parts.sort();
        if parts.is_empty() {
            return Err(Error::other(format!(
                "the folder '{}' holds no .pelt results files; give a results file, or the folder of a sharded run's parts",
                path.display()
            )));
        }
        return Merged::open_checked(&parts, false)?.summary(None);
    }
    Merged::one(path)?.summary(None)
}

/// Several results files of one run, read as one (pelt-core's k-way
/// merge), with errors naming the file at fault.
pub struct Merged {
    files: Vec<PathBuf>,
    reader: MergedReader<BufReader<File>>,
}

impl std::fmt::Debug for Merged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Merged")
            .field("files", &self.files)
            .finish()
    }
}

impl Merged {
    /// One results file as it was written: a shard's part reports as
    /// that shard did live (its own share of the load, nothing merged).
    pub fn one(path: &Path) -> Result<Merged> {
        let files = [path.to_path_buf()];
        let reader = MergedReader::alone(Merged::read_all(&files)?.remove(0))
            .map_err(|e| merge_error(&files, e))?;
        Ok(Merged {
            files: files.to_vec(),
            reader,
        })
    }

    /// The files as one run (`pelt report --merge`); unless
    /// `allow_partial`, a sharded run must have every shard.
    pub fn open_checked(files: &[PathBuf], allow_partial: bool) -> Result<Merged> {
        let readers = Merged::read_all(files)?;
        let reader = MergedReader::with_partial(readers, allow_partial)
            .map_err(|e| merge_error(files, e))?;
        Ok(Merged {
            files: files.to_vec(),
            reader,
        })
    }

    fn read_all(files: &[PathBuf]) -> Result<Vec<ResultsReader<BufReader<File>>>> {
        let mut readers = Vec::new();
        for path in files {
            if path.is_dir() {
                return Err(Error::other(format!(
                    "'{}' is a folder; give a results file written by pelt run -o (or pelt report --last)",
                    path.display()
                )));
            }
            let file = File::open(path).map_err(|e| {
                Error::other(format!(
                    "cannot read '{}': {e}; check the path",
                    path.display()
                ))
            })?;
            let reader = ResultsReader::open(BufReader::new(file))
                .map_err(|e| Error::other(format!("'{}': {e}", path.display())))?;
            readers.push(reader);
        }
        Ok(readers)
    }

    /// The merged header of the files.
    pub fn header(&self) -> &RunHeader {
        self.reader.header()
    }

    /// The next second across all files, merged.
    pub fn next_second(&mut self) -> Result<Option<(u64, Recorder)>> {
        self.reader
            .next_interval()
            .map_err(|e| merge_error(&self.files, e))
    }

    /// The run the files hold, or the part of it `window` picks.
    pub fn summary(self, window: Option<Window>) -> Result<RunSummary> {
        self.reader
            .summary(window)
            .map_err(|e| merge_error(&self.files, e))
    }

    /// The summary, and the merged run as one results file (in memory),
    /// for the history: `pelt history show ID --format html` then works
    /// without the parts at hand.
    pub fn summary_and_file(self) -> Result<(RunSummary, Option<Vec<u8>>)> {
        let header = self.reader.header().clone();
        // Writing to a Vec cannot fail.
        let mut writer = ResultsWriter::new(Vec::new(), &header).ok();
        let summary = self
            .reader
            .summary_each(None, |second, rec| {
                if let Some(w) = &mut writer {
                    let _ = w.interval(second, rec);
                }
            })
            .map_err(|e| merge_error(&self.files, e))?;
        // A shard that was killed has no footer, so the whole has none to
        // write: its figures are recorded without a file.
        let bytes = writer
            .filter(|_| summary.complete)
            .and_then(|w| w.finish(&pelt_engine::footer_of(&summary)).ok());
        Ok((summary, bytes))
    }
}

/// A merge error as the user sees it: a file at fault is named by its path.
fn merge_error(files: &[PathBuf], e: MergeError) -> Error {
    match e {
        MergeError::File { index, error } => {
            Error::other(format!("'{}': {error}", files[index].display()))
        }
        MergeError::ForeignShard { index, .. } | MergeError::DuplicateShard { index, .. } => {
            Error::other(format!("'{}': {e}", files[index].display()))
        }
        other => Error::other(other.to_string()),
    }
}

/// Writes a report made in every format to `folder`: report.txt, .md,
/// .html and .json (experiments and sweeps).
pub fn write_reports(
    folder: &Path,
    text: &str,
    markdown: &str,
    html: &str,
    json: &str,
) -> Result<()> {
    for (name, body) in [
        ("report.txt", text),
        ("report.md", markdown),
        ("report.html", html),
        ("report.json", json),
    ] {
        let path = folder.join(name);
        std::fs::write(&path, body).map_err(|e| {
            Error::other(format!(
                "cannot write {}: {e}; check the disk",
                path.display()
            ))
        })?;
    }
    Ok(())
}

/// Writes a sweep's or a capacity experiment's report to `folder` (see
/// [`write_reports`]) and hands it to `observer`: the campaign is done.
pub(crate) fn publish(
    folder: &Path,
    reports: &pelt_report::sweep::SweepReports,
    observer: &mut (impl Observer + ?Sized),
) -> Result<()> {
    let r = reports;
    write_reports(folder, &r.text, &r.markdown, &r.html, &r.json)?;
    observer.done(&r.text, &r.json);
    Ok(())
}

/// Refuses a folder that holds anything, or a path that is not a folder.
pub fn refuse_non_empty(folder: &Path) -> Result<()> {
    if folder.exists() && !folder.is_dir() {
        return Err(Error::other(format!(
            "'{}' is not a folder; choose a new folder with -o",
            folder.display()
        )));
    }
    if folder
        .read_dir()
        .is_ok_and(|mut entries| entries.next().is_some())
    {
        return Err(Error::other(format!(
            "'{}' is not empty; choose a new folder with -o, so that no earlier results are mixed in or overwritten",
            folder.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::utc_stamp;

    #[test]
    fn stamps_are_utc_calendar_dates() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
        // Checked against `date -u -d @1795276981 +%Y%m%d-%H%M%S`.
        assert_eq!(utc_stamp(1_795_276_981), "20261121-160301");
    }
}
