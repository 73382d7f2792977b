//! `pelt report`: re-render saved runs, merged or overlaid.

use crate::flags::UserError;
use crate::flags::{FormatArg, ReportArgs};
use crate::output::{check, render_one_with};
use pelt_campaign::results::{label, once_each, Merged};
use pelt_core::{SummaryBuilder, Warning, Window};
use pelt_report::html::Labeled;
use std::process::ExitCode;

pub fn command(args: ReportArgs) -> Result<ExitCode, UserError> {
    let files = if args.last {
        vec![crate::flags::places().last_run()?]
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
    if args.record && args.format == FormatArg::Hdrlog {
        return Err(UserError(
            "--record keeps the merged run's report: give another --format (text, json, ...) with --record, and ask for hdrlog apart".into(),
        ));
    }
    // Opened before the files are read: a database pelt cannot use is an
    // input error whatever the files hold.
    let mut recording = if args.record {
        Some(
            pelt_history::Recording::for_merged(&pelt_history::RecordSpec {
                history: args.history.clone(),
                tags: args.tags.clone(),
                label: args.label.clone(),
                places: crate::flags::places(),
                ..Default::default()
            })
            .map(crate::output::said)?,
        )
    } else {
        None
    };
    let write_err = |e: std::io::Error| UserError(format!("cannot write the report: {e}"));
    if several && !args.merge {
        // Overlay: one summary per file, labelled by file name.
        let mut runs = Vec::new();
        for path in &files {
            let merged = Merged::one(path)?;
            runs.push((label(path), merged.summary(window)?));
        }
        let labeled: Vec<Labeled<'_>> = runs
            .iter()
            .map(|(label, summary)| Labeled {
                label: label.clone(),
                summary,
            })
            .collect();
        crate::output::emit(pelt_report::html::render(&labeled).as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    // One file without --merge is that file as it was written (a shard
    // reports its own share, as it did live); --merge asks for the whole
    // run, so one shard of several is refused unless --allow-partial.
    let mut merged = if args.merge {
        Merged::open_checked(&files, args.allow_partial)?
    } else {
        Merged::one(&files[0])?
    };
    if args.format == FormatArg::Hdrlog {
        let offsets = SummaryBuilder::new(merged.header().clone(), None);
        // Read as the log is written, one second in memory; a file that
        // fails part way stops the seconds, and its error wins.
        let mut failure = None;
        let seconds = std::iter::from_fn(|| {
            merged.next_second().unwrap_or_else(|e| {
                failure = Some(e);
                None
            })
        })
        .filter(|(second, _)| window.is_none_or(|w| w.contains(offsets.offset_of(*second))));
        let mut log = Vec::new();
        pelt_report::hdrlog::write_hdrlog(&mut log, seconds).map_err(write_err)?;
        if let Some(e) = failure {
            return Err(e.into());
        }
        crate::output::emit(&log)?;
        return Ok(ExitCode::SUCCESS);
    }
    let summary = match &mut recording {
        Some(history) => {
            let (summary, copy) = merged.summary_and_file()?;
            let run = summary.warnings.iter().find_map(|w| match w {
                Warning::Sharded { run_id, shards, .. } => Some((run_id.clone(), *shards)),
                _ => None,
            });
            let recorded = history.record_merged(&summary, run.clone(), copy)?;
            if let (pelt_history::Merged::Already(row), Some((id, _))) = (recorded, run) {
                eprintln!(
                    "pelt: run {id} is in the history already, as #{row}; not recorded again"
                );
            }
            summary
        }
        None => merged.summary(window)?,
    };
    let options = pelt_report::Options {
        buckets: args.buckets.clone(),
        ..Default::default()
    };
    crate::output::emit(render_one_with(&summary, args.format, &options)?.as_bytes())?;
    Ok(check(&summary, &args.asserts))
}
