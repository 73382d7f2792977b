//! `pelt history`: list, show, remove and follow recorded runs.

use super::open;
use crate::flags::FormatArg;
use crate::flags::UserError;
use crate::flags::{
    HistoryArgs, HistoryCommand, ListArgs, Location, RerunArgs, RmArgs, ShowArgs, TableFormat,
    TrendArgs, TrendFormat,
};
use pelt_history::{
    recorded_steps, render, rerun_config, results_bytes, store_error, summary_of, Trend,
};
use std::process::ExitCode;

pub fn command(args: HistoryArgs) -> Result<ExitCode, UserError> {
    let location = args.location;
    match args.command.unwrap_or(HistoryCommand::List(args.list)) {
        HistoryCommand::List(a) => list(&location, a),
        HistoryCommand::Show(a) => show(&location, a),
        HistoryCommand::Rm(a) => rm(&location, a),
        HistoryCommand::Trend(a) => trend(&location, a),
        HistoryCommand::Check => check(&location),
        HistoryCommand::Rerun(a) => rerun(&location, a),
    }
}

/// `pelt history rerun ID`: the stored configuration, its secrets given
/// again, run and recorded as a new run.
fn rerun(loc: &Location, a: RerunArgs) -> Result<ExitCode, UserError> {
    let given = a
        .headers
        .iter()
        .map(|h| crate::flags::parse_header(h))
        .collect::<Result<Vec<_>, _>>()?;
    let (config, label) = rerun_config(&mut open(loc)?, a.id, &given)?;
    let record = crate::flags::RecordArgs {
        location: loc.clone(),
        tags: vec![("rerun_of".to_string(), a.id.to_string())],
        label,
        ..crate::flags::RecordArgs::default()
    };
    let spec = record.spec();
    let mut history = pelt_history::Recording::start(&spec)?.map(crate::output::said);
    let mut copy = None;
    let keep = pelt_campaign::Keep {
        until: None,
        secrets: record.redactor(),
        copy: history.as_ref().map(|_| &mut copy),
        data_dir: spec.places.data_dir.as_deref(),
        ..pelt_campaign::Keep::default()
    };
    let summary = crate::live::execute(config, false, keep, Vec::new())?;
    if let Some(Err(e)) = history.as_mut().map(|h| h.record(&summary, None, copy)) {
        crate::output::not_recorded("the run", &e);
    }
    crate::output::emit(crate::output::render_one(&summary, a.format)?.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn list(loc: &Location, a: ListArgs) -> Result<ExitCode, UserError> {
    let filter = a.select.filter()?;
    let rows = open(loc)?.list(&filter).map_err(store_error)?;
    let out = match a.format {
        TableFormat::Text => render::text_table(&rows),
        TableFormat::Json => render::json_table(&rows),
        TableFormat::Csv => render::csv_table(&rows),
    };
    crate::output::emit(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn show(loc: &Location, a: ShowArgs) -> Result<ExitCode, UserError> {
    let mut store = open(loc)?;
    let run = store.get(a.id).map_err(store_error)?.ok_or_else(|| {
        UserError(format!(
            "no run {} in the history; see the ids with pelt history",
            a.id
        ))
    })?;
    if a.format == FormatArg::Json {
        crate::output::emit(run.report_json.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let bytes = match results_bytes(&run) {
        Ok(bytes) => bytes,
        // A scenario run's steps outlive its results file.
        Err(e) if a.format == FormatArg::Text && !run.steps.is_empty() => {
            eprintln!("pelt: {}", UserError::from(e).0);
            crate::output::emit(recorded_steps(&run).as_bytes())?;
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => return Err(e.into()),
    };
    if a.format == FormatArg::Hdrlog {
        return Err(UserError(
            "--format hdrlog reads a results file: pelt history show ID --format json, or pelt report FILE --format hdrlog".into(),
        ));
    }
    let summary =
        summary_of(&bytes).map_err(|e| UserError(format!("run {}'s results file: {e}", a.id)))?;
    crate::output::emit(crate::output::render_one(&summary, a.format)?.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn rm(loc: &Location, a: RmArgs) -> Result<ExitCode, UserError> {
    let removed = open(loc)?.remove(&a.ids).map_err(store_error)?;
    let missing: Vec<String> = a
        .ids
        .iter()
        .filter(|id| !removed.contains(id))
        .map(|id| id.to_string())
        .collect();
    // "removed 0" and then an error said the same thing twice.
    if !removed.is_empty() {
        eprintln!("pelt: removed {} run(s) from the history", removed.len());
    }
    if !missing.is_empty() {
        return Err(UserError(format!(
            "no run {} in the history{}; see the ids with pelt history",
            missing.join(", "),
            if removed.is_empty() {
                ", nothing removed"
            } else {
                ""
            }
        )));
    }
    Ok(ExitCode::SUCCESS)
}

fn check(loc: &Location) -> Result<ExitCode, UserError> {
    let problems = open(loc)?.check().map_err(store_error)?;
    println!("{}", problems.join("\n"));
    Ok(if problems == ["ok"] {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn trend(loc: &Location, a: TrendArgs) -> Result<ExitCode, UserError> {
    let t = Trend::of(
        &mut open(loc)?,
        a.select.filter()?,
        a.metric,
        a.allow_mismatch,
    )?;
    if t.urls.len() > 1 {
        eprintln!(
            "pelt: note: these runs load {} different URLs; add --url to follow one target",
            t.urls.len()
        );
    }
    let out = match a.format {
        TrendFormat::Text => t.text(),
        TrendFormat::Json => t.json(),
        TrendFormat::Csv => t.csv(),
        TrendFormat::Html => t.html(),
    };
    crate::output::emit(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
