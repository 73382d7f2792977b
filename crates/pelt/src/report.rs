//! `pelt report`: re-render saved runs, merged or overlaid.

use crate::cli::{FormatArg, ReportArgs};
use crate::output::{check, render_one};
use crate::save::{self, label, once_each};
use crate::UserError;
use pelt_core::{
    Recorder, ResultsReader, RunFooter, RunHeader, RunSummary, SummaryBuilder, Window,
};
use pelt_report::html::Labeled;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

type Reader = ResultsReader<BufReader<File>>;

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
        .map_err(UserError)?;
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
            let mut merged = Merged::open(std::slice::from_ref(path))?;
            runs.push((label(path), merged.summary(window)?));
        }
        let labeled: Vec<Labeled<'_>> = runs
            .iter()
            .map(|(label, summary)| Labeled {
                label: label.clone(),
                summary,
            })
            .collect();
        crate::emit(pelt_report::html::render(&labeled).as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut merged = Merged::open(&files)?;
    if args.format == FormatArg::Hdrlog {
        let offsets = SummaryBuilder::new(merged.header.clone(), None);
        // Read as the log is written, one second in memory; a file that
        // fails part way stops the seconds, and its error wins.
        let mut failure = None;
        let seconds = std::iter::from_fn(|| {
            merged.next().unwrap_or_else(|e| {
                failure = Some(e);
                None
            })
        })
        .filter(|(second, _)| window.is_none_or(|w| w.contains(offsets.offset_of(*second))));
        let mut log = Vec::new();
        pelt_report::hdrlog::write_hdrlog(&mut log, seconds).map_err(write_err)?;
        if let Some(e) = failure {
            return Err(e);
        }
        crate::emit(&log)?;
        return Ok(ExitCode::SUCCESS);
    }
    let summary = merged.summary(window)?;
    crate::emit(render_one(&summary, args.format)?.as_bytes())?;
    Ok(check(&summary, &args.asserts))
}

/// The summary of one saved run.
pub fn load(path: &Path) -> Result<RunSummary, UserError> {
    Merged::open(&[path.to_path_buf()])?.summary(None)
}

/// Several results files of one run read as one: seconds with the same
/// wall-clock time are merged (histograms add), in order, one second in
/// memory per file.
struct Merged {
    files: Vec<PathBuf>,
    readers: Vec<Reader>,
    heads: Vec<Option<(u64, Recorder)>>,
    header: RunHeader,
}

impl Merged {
    fn open(files: &[PathBuf]) -> Result<Merged, UserError> {
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
        let mut header = readers[0].header().clone();
        for r in &readers[1..] {
            header.merge(r.header()).map_err(UserError)?;
        }
        let mut merged = Merged {
            files: files.to_vec(),
            heads: Vec::new(),
            readers,
            header,
        };
        for i in 0..merged.readers.len() {
            let head = merged.read(i)?;
            merged.heads.push(head);
        }
        Ok(merged)
    }

    fn read(&mut self, i: usize) -> Result<Option<(u64, Recorder)>, UserError> {
        self.readers[i]
            .next_interval()
            .map_err(|e| UserError(format!("'{}': {e}", self.files[i].display())))
    }

    /// The next second across all files, merged.
    fn next(&mut self) -> Result<Option<(u64, Recorder)>, UserError> {
        let Some(second) = self.heads.iter().flatten().map(|(s, _)| *s).min() else {
            return Ok(None);
        };
        let mut rec = Recorder::new();
        for i in 0..self.heads.len() {
            if self.heads[i].as_ref().is_some_and(|(s, _)| *s == second) {
                if let Some((_, r)) = self.heads[i].take() {
                    rec.merge(&r);
                }
                self.heads[i] = self.read(i)?;
            }
        }
        Ok(Some((second, rec)))
    }

    /// The footers, combined; `None` if any run was killed.
    fn footer(&self) -> Option<RunFooter> {
        let mut footers = self.readers.iter().map(|r| r.footer().cloned());
        let first = footers.next()??;
        footers.try_fold(first, |acc, f| Some(acc.merge(&f?)))
    }

    fn summary(&mut self, window: Option<Window>) -> Result<RunSummary, UserError> {
        let mut builder = SummaryBuilder::new(self.header.clone(), window);
        let (mut seconds, mut kept) = (0u64, 0u64);
        while let Some((second, rec)) = self.next()? {
            seconds += 1;
            kept += u64::from(builder.add(second, &rec).is_some());
        }
        if window.is_some() && seconds > 0 && kept == 0 {
            // An empty report of a window past the end would look like a
            // run that sent nothing.
            return Err(UserError(format!(
                "--window holds none of the run's {seconds} seconds (counted from the start of measurement); pick a part within them, like --window ..{seconds}s"
            )));
        }
        Ok(builder.finish(self.footer().as_ref()))
    }
}
