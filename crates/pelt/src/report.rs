//! `pelt report`: re-render saved runs, merged or overlaid.

use crate::cli::{FormatArg, ReportArgs};
use crate::run::{html, render_one};
use crate::save;
use crate::UserError;
use pelt_core::results::{MergeError, MergedReader};
use pelt_core::{Recorder, ResultsReader, RunSummary, SummaryBuilder, Window};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn command(args: ReportArgs) -> Result<ExitCode, UserError> {
    let files = if args.last {
        vec![save::last_run()?]
    } else {
        args.files.clone()
    };
    let window = args
        .window
        .as_deref()
        .map(Window::parse)
        .transpose()
        .map_err(|e| UserError(e.to_string()))?;
    let several = files.len() > 1;
    if several && !args.merge && !args.asserts.is_empty() {
        return Err(UserError(
            "--assert checks one run: add --merge, or check each file on its own".into(),
        ));
    }
    if several && !args.merge && args.format != FormatArg::Html {
        return Err(UserError(
            "several files given: add --merge to combine one run measured from several machines, or use --format html to overlay different runs".into(),
        ));
    }
    if several && args.merge {
        once_each(
            &files,
            "--merge adds up runs measured from different machines",
        )?;
    }
    let write_err = |e: std::io::Error| UserError(format!("cannot write the report: {e}"));
    if several && !args.merge {
        // Overlay: one summary per file, labelled by file name.
        let mut runs = Vec::new();
        for path in &files {
            let merged = Merged::open(std::slice::from_ref(path))?;
            runs.push((label(path), merged.summary(window)?));
        }
        let labeled: Vec<(String, &RunSummary)> =
            runs.iter().map(|(label, s)| (label.clone(), s)).collect();
        crate::emit(html(&labeled)?.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    // One file alone (a shard looked at on its own) is partial by intent.
    let mut merged = Merged::open_checked(&files, args.allow_partial || !several)?;
    if args.format == FormatArg::Hdrlog {
        let mut seconds = Vec::new();
        let offsets = SummaryBuilder::new(merged.reader.header().clone(), None);
        while let Some((second, rec)) = merged.next()? {
            if window.is_none_or(|w| w.contains(offsets.offset_of(second))) {
                seconds.push((second, rec.response));
            }
        }
        let mut log = Vec::new();
        pelt_report::hdrlog::write_hdrlog(&mut log, &seconds).map_err(write_err)?;
        crate::emit(&log)?;
        return Ok(ExitCode::SUCCESS);
    }
    let summary = merged.summary(window)?;
    crate::emit(render_one(&summary, args.format)?.as_bytes())?;
    Ok(crate::run::check(&summary, &args.asserts))
}

/// Refuses a file named twice in `files`: merged or compared, its
/// requests would count twice (`what` says where).
pub fn once_each(files: &[PathBuf], what: &str) -> Result<(), UserError> {
    let mut seen = std::collections::HashSet::new();
    for path in files {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if !seen.insert(key) {
            return Err(UserError(format!(
                "'{}' is given twice; {what}, so give each file once",
                path.display()
            )));
        }
    }
    Ok(())
}

/// The summary of one saved run.
pub fn load(path: &Path) -> Result<RunSummary, UserError> {
    Merged::open(&[path.to_path_buf()])?.summary(None)
}

pub fn label(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Several results files of one run, read as one (pelt-core's k-way
/// merge), with errors naming the file at fault.
struct Merged {
    files: Vec<PathBuf>,
    reader: MergedReader<BufReader<File>>,
}

impl Merged {
    fn open(files: &[PathBuf]) -> Result<Merged, UserError> {
        Merged::open_checked(files, true)
    }

    /// `allow_partial`: shards of a sharded run may be missing.
    fn open_checked(files: &[PathBuf], allow_partial: bool) -> Result<Merged, UserError> {
        let mut readers = Vec::new();
        for path in files {
            if path.is_dir() {
                return Err(UserError(format!(
                    "'{}' is a folder; give a results file written by pelt run -o (or pelt report --last)",
                    path.display()
                )));
            }
            let file = File::open(path).map_err(|e| {
                UserError(format!(
                    "cannot read '{}': {e}; check the path",
                    path.display()
                ))
            })?;
            let reader = ResultsReader::open(BufReader::new(file))
                .map_err(|e| UserError(format!("'{}': {e}", path.display())))?;
            readers.push(reader);
        }
        let reader = MergedReader::with_partial(readers, allow_partial)
            .map_err(|e| merge_error(files, e))?;
        Ok(Merged {
            files: files.to_vec(),
            reader,
        })
    }

    /// The next second across all files, merged.
    fn next(&mut self) -> Result<Option<(u64, Recorder)>, UserError> {
        self.reader
            .next_interval()
            .map_err(|e| merge_error(&self.files, e))
    }

    fn summary(self, window: Option<Window>) -> Result<RunSummary, UserError> {
        self.reader
            .summary(window)
            .map_err(|e| merge_error(&self.files, e))
    }
}

/// A merge error as the user sees it: a file at fault is named by its path.
fn merge_error(files: &[PathBuf], e: MergeError) -> UserError {
    match e {
        MergeError::File { index, error } => {
            UserError(format!("'{}': {error}", files[index].display()))
        }
        MergeError::ForeignShard { index, .. } | MergeError::DuplicateShard { index, .. } => {
            UserError(format!("'{}': {e}", files[index].display()))
        }
        other => UserError(other.to_string()),
    }
}
