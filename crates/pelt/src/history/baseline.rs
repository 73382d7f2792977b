//! Baselines: recorded runs as side A of a comparison.
//!
//! `pelt compare --baseline tag:release-1.4 new*.pelt` and `pelt run ...
//! --baseline last:5 --fail-on regression` compare through the same
//! verdict method as `pelt compare` (runs as replicates, Hodges-Lehmann
//! and Mann-Whitney), with A's values read from the history's figure
//! columns: the baseline's results files need not be at hand.

use super::{open, store_error, Location};
use crate::cli::{CompareArgs, CompareFormat, FailOn};
use crate::output::fails;
use crate::UserError;
use clap::Args;
use pelt_analyze::runs::{self, compare_values, values, Row};
use pelt_core::RunSummary;
use pelt_store::{Filter, Metric, RunRow, Store};
use std::process::ExitCode;

/// `pelt compare`'s flags for a baseline from the history.
#[derive(Debug, Clone, Default, Args)]
pub struct BaselineArgs {
    /// Compare the FILEs (B) with recorded runs (A): tag:KEY[=VALUE],
    /// label:NAME or last:N (the newest N runs of B's URL).
    #[arg(long = "baseline", value_name = "tag:X|label:X|last:N", conflicts_with_all = ["vs", "paired"])]
    pub baseline: Option<String>,

    #[command(flatten)]
    pub location: Location,
}

/// Which recorded runs make the baseline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    Tag(String, Option<String>),
    Label(String),
    Last(u64),
}

impl Spec {
    pub fn parse(text: &str) -> Result<Spec, UserError> {
        let bad = || {
            UserError(format!(
                "invalid --baseline '{}': use tag:KEY[=VALUE], label:NAME or last:N, like --baseline tag:release-1.4",
                text.escape_debug()
            ))
        };
        let (kind, rest) = text.split_once(':').ok_or_else(bad)?;
        let rest = rest.trim();
        if rest.is_empty() {
            return Err(bad());
        }
        Ok(match kind.trim() {
            "tag" => match rest.split_once('=') {
                Some((k, v)) => Spec::Tag(k.trim().into(), Some(v.trim().into())),
                None => Spec::Tag(rest.into(), None),
            },
            "label" => Spec::Label(rest.into()),
            "last" => Spec::Last(rest.parse().ok().filter(|&n| n > 0).ok_or_else(bad)?),
            _ => return Err(bad()),
        })
    }

    /// The runs of the baseline, without `exclude` (the run just made).
    /// `last:N` counts runs of `url` only: the newest runs of another
    /// target are no baseline.
    pub fn runs(
        &self,
        store: &mut Store,
        url: Option<&str>,
        exclude: Option<i64>,
    ) -> Result<Vec<RunRow>, UserError> {
        let mut filter = Filter::default();
        match self {
            Spec::Tag(k, v) => filter.tags.push((k.clone(), v.clone())),
            Spec::Label(l) => filter.label = Some(l.clone()),
            Spec::Last(n) => {
                filter.url = url.map(str::to_string);
                filter.last = Some(n + u64::from(exclude.is_some()));
            }
        }
        let mut runs = store.list(&filter).map_err(store_error)?;
        runs.retain(|r| Some(r.id) != exclude);
        if let Spec::Last(n) = self {
            let extra = runs.len().saturating_sub(*n as usize);
            runs.drain(..extra);
        }
        if runs.is_empty() {
            return Err(UserError(format!(
                "no recorded run matches --baseline {}; see pelt history{}",
                self.describe(),
                match self {
                    Spec::Last(_) => " (last:N counts runs of the same URL)",
                    _ => "",
                }
            )));
        }
        Ok(runs)
    }

    fn describe(&self) -> String {
        match self {
            Spec::Tag(k, Some(v)) => format!("tag:{k}={v}"),
            Spec::Tag(k, None) => format!("tag:{k}"),
            Spec::Label(l) => format!("label:{l}"),
            Spec::Last(n) => format!("last:{n}"),
        }
    }
}

/// A recorded run's values, in the order of `runs::metrics`, as
/// `runs::values` gives them for a run at hand (a rate run's
/// throughput is its schedule's, and not compared).
fn stored_values(row: &RunRow) -> Vec<f64> {
    runs::metrics()
        .iter()
        .map(|m| match m.name.parse::<Metric>() {
            Ok(Metric::Throughput) if row.mode == "rate" => None,
            Ok(metric) => row.figures.get(metric),
            Err(_) => None,
        })
        .map(|v| v.unwrap_or(f64::NAN))
        .collect()
}

/// The comparison of `b` with the baseline's runs. One new run is judged
/// against the baseline's prediction interval (`pelt_analyze::predict`):
/// the rank test needs 39 baseline runs before it can say anything.
pub fn rows(baseline: &[RunRow], b: &[Vec<f64>]) -> Vec<Row> {
    let a: Vec<Vec<f64>> = baseline.iter().map(stored_values).collect();
    match b {
        [one] => pelt_analyze::predict::compare_values(&a, one),
        _ => compare_values(&a, b, false),
    }
}

/// Said above a one-run comparison's table: how its intervals are made,
/// and at what confidence (the column says 95 %; these are wider).
fn prediction_note(rows: &[Row]) -> String {
    let confidence = rows
        .iter()
        .find_map(|r| r.result.as_ref().ok().and_then(|c| c.confidence))
        .unwrap_or(pelt_analyze::CONFIDENCE);
    format!(
        "one run against the baseline's run-to-run spread: each interval is a {:.1}% Student t prediction\n\
         interval of the baseline runs (log scale for latency; A = their geometric mean), {:.1}% so that\n\
         the gate over all metrics calls a regression that is not there at most 5% of the time\n",
        confidence * 100.0,
        confidence * 100.0
    )
}

fn names(rows: &[RunRow]) -> Vec<String> {
    rows.iter().map(|r| format!("#{}", r.id)).collect()
}

fn render(
    format: CompareFormat,
    rows: &[Row],
    spec: &Spec,
    a: &[RunRow],
    b_names: &[String],
) -> Result<String, UserError> {
    Ok(match format {
        CompareFormat::Text => {
            let mut t = pelt_report::compare::text(rows, &names(a), b_names, false);
            if b_names.len() == 1 {
                t.insert_str(0, &prediction_note(rows));
            }
            t.insert_str(0, &format!("baseline {}: recorded runs as A\n", spec.describe()));
            t
        }
        CompareFormat::Markdown => pelt_report::compare::markdown(rows),
        CompareFormat::Json => {
            let metrics = pelt_report::compare::json_rows(rows);
            let doc = serde_json::json!({
                "schema": "pelt.compare/1",
                "paired": false,
                "baseline": spec.describe(),
                "a": a.iter().map(|r| format!("history:{}", r.id)).collect::<Vec<_>>(),
                "b": b_names,
                "metrics": metrics,
            });
            let mut s = serde_json::to_string_pretty(&doc).expect("a JSON value always serialises");
            s.push('\n');
            s
        }
        CompareFormat::Html => {
            return Err(UserError(
                "--format html is not available with --baseline (the baseline's charts need its results files); use text, json or markdown".into(),
            ))
        }
    })
}

/// `pelt compare --baseline SPEC FILE...`.
pub fn compare(args: CompareArgs) -> Result<ExitCode, UserError> {
    let spec = Spec::parse(args.baseline.baseline.as_deref().unwrap_or_default())?;
    crate::save::once_each(&args.files, "each of B's runs is one replicate")?;
    let b: Vec<RunSummary> = args
        .files
        .iter()
        .map(|f| crate::save::load(f))
        .collect::<Result<_, _>>()?;
    let url = single_url(&b);
    let mut store = open(&args.baseline.location)?;
    let a = spec.runs(&mut store, url.as_deref(), None)?;
    let b_values: Vec<Vec<f64>> = b.iter().map(values).collect();
    let rows = rows(&a, &b_values);
    let b_names: Vec<String> = args.files.iter().map(|f| crate::save::label(f)).collect();
    crate::emit(render(args.format, &rows, &spec, &a, &b_names)?.as_bytes())?;
    if args.fail_on.is_some() && !pelt_analyze::predict::gate_has_verdict(&rows) {
        // A gate that could not judge must not pass.
        return Err(UserError(format!(
            "--fail-on: no verdict was possible with {} baseline run(s) against {} run(s); record at least {} baseline runs (one file), or give 4 or more files and have 4 or more baseline runs",
            a.len(),
            b.len(),
            pelt_analyze::predict::MIN_BASELINE_RUNS
        )));
    }
    Ok(if fails(args.fail_on, |m| runs::regressed(&rows, m)) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The one URL every run loaded (as recorded, secrets replaced), if so.
fn single_url(runs: &[RunSummary]) -> Option<String> {
    let redactor = pelt_store::Redactor::default();
    let mut urls = runs.iter().map(|s| {
        let mut u = s.config.targets[0].url.clone();
        redactor.url(&mut u);
        u.to_string()
    });
    let first = urls.next()?;
    urls.all(|u| u == first).then_some(first)
}

/// `pelt run ... --baseline SPEC`: the run just recorded (`id`) against
/// the baseline; the table goes to stderr (stdout has the run's report).
/// Exit 1 when `fail_on` is met.
pub fn after_run(
    store: &mut Store,
    spec_text: &str,
    summary: &RunSummary,
    id: Option<i64>,
    fail_on: Option<FailOn>,
) -> Result<ExitCode, UserError> {
    let spec = Spec::parse(spec_text)?;
    let url = single_url(std::slice::from_ref(summary));
    let a = spec.runs(store, url.as_deref(), id)?;
    let rows = rows(&a, &[values(summary)]);
    let name = id.map_or_else(|| "this run".to_string(), |id| format!("#{id} (this run)"));
    eprint!(
        "{}",
        render(CompareFormat::Text, &rows, &spec, &a, &[name])?
    );
    if fail_on.is_some() && !pelt_analyze::predict::gate_has_verdict(&rows) {
        // A gate that could not judge must not pass.
        return Err(UserError(format!(
            "--fail-on: no verdict was possible against --baseline {} ({} run(s) with latencies); record at least {} runs of this configuration first",
            spec.describe(),
            a.len(),
            pelt_analyze::predict::MIN_BASELINE_RUNS
        )));
    }
    Ok(if fails(fail_on, |m| runs::regressed(&rows, m)) {
        eprintln!("pelt: --fail-on: this run regressed against the baseline");
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Checks `--baseline` before the run: a typo must not cost a run.
pub fn check_spec(text: Option<&str>) -> Result<(), UserError> {
    text.map(Spec::parse).transpose().map(drop)
}

/// Before any load: a `--fail-on` gate must be able to give a verdict,
/// so the baseline needs [`MIN_BASELINE_RUNS`] recorded runs (exit 2,
/// naming how many more, when it has fewer). A gate that passes because
/// it could not judge would pass every regression.
///
/// [`MIN_BASELINE_RUNS`]: pelt_analyze::predict::MIN_BASELINE_RUNS
pub fn before_run(
    store: Option<&mut Store>,
    spec_text: Option<&str>,
    config: &pelt_core::RunConfig,
    fail_on: Option<FailOn>,
) -> Result<(), UserError> {
    let (Some(text), Some(_)) = (spec_text, fail_on) else {
        return Ok(());
    };
    let spec = Spec::parse(text)?;
    let Some(store) = store else {
        return Err(UserError(format!(
            "--fail-on with --baseline {} needs the history, which PELT_NO_HISTORY turns off; unset it or give --history PATH",
            spec.describe()
        )));
    };
    let min = pelt_analyze::predict::MIN_BASELINE_RUNS;
    let mut url = config.targets[0].url.clone();
    pelt_store::Redactor::default().url(&mut url);
    let found = match spec.runs(store, Some(&url.to_string()), None) {
        Ok(runs) => runs.len(),
        Err(_) => 0,
    };
    if found < min {
        return Err(UserError(format!(
            "--fail-on needs a baseline of at least {min} recorded runs for a verdict, and --baseline {} has {found}; record {} more (the same pelt run without --fail-on), then gate",
            spec.describe(),
            min - found
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Spec;

    #[test]
    fn specs() {
        assert_eq!(
            Spec::parse("tag:env=prod").unwrap(),
            Spec::Tag("env".into(), Some("prod".into()))
        );
        assert_eq!(
            Spec::parse("tag:release-1.4").unwrap(),
            Spec::Tag("release-1.4".into(), None)
        );
        assert_eq!(
            Spec::parse("label:nightly").unwrap(),
            Spec::Label("nightly".into())
        );
        assert_eq!(Spec::parse("last:5").unwrap(), Spec::Last(5));
        for bad in ["last:0", "last:x", "tag:", "release", "id:3"] {
            let e = Spec::parse(bad).unwrap_err().0;
            assert!(e.contains("tag:KEY"), "{bad}: {e}");
        }
    }

    #[test]
    fn stored_values_follow_compare_s_metrics() {
        // Every metric `pelt compare` uses has a column.
        for m in pelt_analyze::runs::metrics() {
            assert!(m.name.parse::<pelt_store::Metric>().is_ok(), "{}", m.name);
        }
    }
}
