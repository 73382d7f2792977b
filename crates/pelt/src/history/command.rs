//! `pelt history`: list, show, remove and follow recorded runs.

use super::open;
use crate::flags::FormatArg;
use crate::flags::{
    HistoryArgs, HistoryCommand, ListArgs, Location, RerunArgs, RmArgs, ShowArgs, TableFormat,
    TrendArgs, TrendFormat,
};
use crate::UserError;
use pelt_campaign::history::{
    render, results_bytes, store_error, summary_of, RUN_ID_TAG, SHARD_TAG, STEP_TAG, SWEEP_TAG,
};
use pelt_store::{Kind, Metric, RunRow};
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
    use pelt_store::secrets::MARKER;
    let mut store = open(loc)?;
    let run = store.get(a.id).map_err(store_error)?.ok_or_else(|| {
        UserError(format!(
            "no run {} in the history; see the ids with pelt history",
            a.id
        ))
    })?;
    let mut config: pelt_core::RunConfig = serde_json::from_str(&run.config_json)
        .map_err(|e| UserError(format!("run {}'s configuration cannot be read: {e}", a.id)))?;
    let given = a
        .headers
        .iter()
        .map(|h| crate::flags::parse_header(h))
        .collect::<Result<Vec<_>, _>>()?;
    for t in &mut config.targets {
        if t.url.to_string().contains(MARKER) {
            return Err(UserError(format!(
                "run {}'s URL had secrets (userinfo or a token-like parameter), which the history does not keep: \
                 run it again with pelt run and the full URL",
                a.id
            )));
        }
        for (name, value) in &mut t.headers {
            if value.contains(MARKER) {
                match given.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
                    Some((_, v)) => *value = v.clone(),
                    None => {
                        return Err(UserError(format!(
                            "run {}'s {name} header was secret, and the history does not keep it: \
                             give it again, like pelt history rerun {} -H '{name}: ...'",
                            a.id, a.id
                        )))
                    }
                }
            }
        }
    }
    drop(store);
    let record = crate::flags::RecordArgs {
        location: loc.clone(),
        tags: vec![("rerun_of".to_string(), a.id.to_string())],
        label: run.row.label.clone(),
        ..crate::flags::RecordArgs::default()
    };
    let mut history = pelt_campaign::history::Recording::start(&record.spec())?;
    let mut copy = None;
    let keep = pelt_campaign::Keep {
        until: None,
        secrets: record.redactor(),
        copy: history.as_ref().map(|_| &mut copy),
        ..pelt_campaign::Keep::default()
    };
    let summary = crate::live::execute(config, false, keep, Vec::new())?;
    if let Some(h) = history.as_mut() {
        h.record(&summary, None, copy);
    }
    crate::emit(crate::output::render_one(&summary, a.format)?.as_bytes())?;
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
    crate::emit(out.as_bytes())?;
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
        crate::emit(run.report_json.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let bytes = results_bytes(&run)?;
    if a.format == FormatArg::Hdrlog {
        return Err(UserError(
            "--format hdrlog reads a results file: pelt history show ID --format json, or pelt report FILE --format hdrlog".into(),
        ));
    }
    let summary =
        summary_of(&bytes).map_err(|e| UserError(format!("run {}'s results file: {e}", a.id)))?;
    crate::emit(crate::output::render_one(&summary, a.format)?.as_bytes())?;
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
    let mut filter = a.select.filter()?;
    let by_part = filter
        .tags
        .iter()
        .any(|(k, _)| [SHARD_TAG, RUN_ID_TAG, SWEEP_TAG, STEP_TAG].contains(&k.as_str()));
    if a.metric == Metric::Capacity {
        // Only sweeps have a capacity.
        filter.kinds.push(Kind::Sweep);
    } else if !by_part {
        // A shard's figures are its part of a run (four shards would read
        // as four runs of a quarter of the load), a sweep's steps are at
        // rates it chose, and a sweep's row is its capacity step. Asked
        // for by tag, they are followed like any run.
        filter
            .without
            .extend([Kind::Shard, Kind::Step, Kind::Sweep]);
    }
    let mut store = open(loc)?;
    let rows = store.list(&filter).map_err(store_error)?;
    // Sweeps are alike by their URL and tags; runs by their work.
    if !a.allow_mismatch && a.metric != Metric::Capacity && !by_part {
        like_with_like(&mut store, &rows)?;
    }
    let m = a.metric;
    let values: Vec<Option<f64>> = rows.iter().map(|r| r.figures.get(m)).collect();
    let mut urls: Vec<&str> = rows.iter().map(|r| r.url.as_str()).collect();
    urls.sort_unstable();
    urls.dedup();
    if urls.len() > 1 {
        eprintln!(
            "pelt: note: these runs load {} different URLs; add --url to follow one target",
            urls.len()
        );
    }
    let out = match a.format {
        TrendFormat::Text => render::trend_text(m, &rows, &values, &urls),
        TrendFormat::Json => render::trend_json(m, &rows, &values),
        TrendFormat::Csv => render::trend_csv(m, &rows, &values),
        TrendFormat::Html => render::trend_html(m, &rows, &values, &urls),
    };
    crate::emit(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// A trend follows one experiment over time: every run must do the newest
/// run's work and be complete (see `pelt_analyze::alike`), or the trend is
/// refused, naming the difference.
fn like_with_like(store: &mut pelt_store::Store, rows: &[RunRow]) -> Result<(), UserError> {
    use pelt_analyze::alike::{self, Difference, Mismatch};
    let Some(newest) = rows.last() else {
        return Ok(());
    };
    let Some(reference) = pelt_campaign::baseline::stored_config(store, newest.id)? else {
        return Ok(());
    };
    let mut mismatches = Vec::new();
    for r in rows.iter().rev() {
        let mut differences = match pelt_campaign::baseline::stored_config(store, r.id)? {
            Some(c) => alike::differences(&reference, &c),
            None => Vec::new(),
        };
        if r.interrupted || !r.complete {
            differences.push(Difference {
                what: "completeness".into(),
                a: "complete".into(),
                b: if r.interrupted {
                    "interrupted"
                } else {
                    "incomplete"
                }
                .into(),
            });
        }
        if !differences.is_empty() {
            mismatches.push(Mismatch {
                run: format!("#{}", r.id),
                differences,
            });
        }
    }
    if mismatches.is_empty() {
        return Ok(());
    }
    Err(UserError(alike::refusal(
        &format!("the newest run, #{}", newest.id),
        &mismatches,
        "--allow-mismatch (or narrow the runs with --url, --tag, --label)",
    )))
}
