//! Baselines: recorded runs as side A of a comparison. A [`Spec`]
//! (`tag:X`, `label:X`, `last:N`) chooses them by one rule (like with
//! like, complete, never the candidate itself); [`rows`] compares a new
//! run or runs with them, through the same verdict method as `pelt
//! compare`, A's values read from the history's figure columns; the
//! `against_*` functions make the whole [`Comparison`] that `pelt
//! compare --baseline`, `pelt run --baseline` and `pelt sweep --baseline`
//! print and gate on, and [`usable_runs`] checks a gate before any load.

use crate::compare::{values, Comparison, Options};
use crate::store_error;
use crate::{Against, Error, Recorded, Result};
use pelt_analyze::alike::{self, Mismatch};
use pelt_analyze::design::{self, Timed};
use pelt_analyze::headline;
use pelt_analyze::latency::Latency;
use pelt_analyze::runs::{self, compare_values, Row};
use pelt_core::{RunConfig, RunSummary};
use pelt_report::compare::Context;
use pelt_store::{Filter, Kind, Metric, RunRow, Store};
use std::path::PathBuf;

/// Which recorded runs make the baseline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    /// `tag:KEY` or `tag:KEY=VALUE`: runs tagged so.
    Tag(String, Option<String>),
    /// `label:NAME`: runs labelled so.
    Label(String),
    /// `last:N`: the newest N runs doing the candidates' work.
    Last(u64),
}

impl Spec {
    /// `tag:KEY[=VALUE]`, `label:NAME` or `last:N`.
    pub fn parse(text: &str) -> Result<Spec> {
        let bad = || Error::Baseline(text.escape_debug().to_string());
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

    /// The runs of the baseline for `candidates` (the runs compared with
    /// it), by one rule (see `pelt_analyze::alike`): never `exclude` (the
    /// run just recorded) nor a candidate itself (a recorded run with a
    /// candidate's start), complete runs only, and only runs whose work
    /// is the candidates'. `last:N` takes the newest N such runs of the
    /// candidates' URL, passing over the others; a tag or label that
    /// names runs doing other work is refused (naming the difference)
    /// unless `allow`, when they are kept and listed.
    pub fn select(
        &self,
        store: &mut Store,
        candidates: &[RunSummary],
        exclude: Option<i64>,
        allow: bool,
    ) -> Result<Selection> {
        let starts: Vec<i64> = candidates
            .iter()
            .map(|c| c.env.started_unix_ms as i64)
            .collect();
        self.select_like(
            store,
            &candidates[0].config,
            &starts,
            single_url(candidates),
            exclude,
            allow,
        )
    }

    /// [`Spec::select`] for runs doing `config`'s work, before they exist
    /// (`starts` are the candidates' start times, none before a run).
    pub fn select_like(
        &self,
        store: &mut Store,
        config: &RunConfig,
        starts: &[i64],
        url: Option<String>,
        exclude: Option<i64>,
        allow: bool,
    ) -> Result<Selection> {
        // A shard sent a part of its run: as a baseline it would read as
        // a run of a fraction of the load (merged runs stand for the
        // whole); a sweep's steps ran at rates it chose, and its row is one
        // of them.
        let mut filter = Filter {
            without: vec![Kind::Shard, Kind::Step, Kind::Sweep],
            ..Filter::default()
        };
        match self {
            Spec::Tag(k, v) => filter.tags.push((k.clone(), v.clone())),
            Spec::Label(l) => filter.label = Some(l.clone()),
            Spec::Last(_) => filter.url = url.clone(),
        }
        let listed = store.list(&filter).map_err(store_error)?;
        let redactor = pelt_store::Redactor::default();
        let reference = redactor.config(config);
        let mut out = Selection::default();
        let (mut incomplete, mut themselves, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
        let mut mismatched = Vec::new();
        // Newest first, so that last:N takes the newest alike runs.
        for row in listed.into_iter().rev() {
            if Some(row.id) == exclude {
                continue;
            }
            if let Spec::Last(n) = self {
                if out.runs.len() as u64 >= *n {
                    break;
                }
            }
            if starts.contains(&row.started_ms) {
                themselves.push(format!("#{}", row.id));
                continue;
            }
            if row.interrupted || !row.complete {
                incomplete.push(format!("#{}", row.id));
                continue;
            }
            let differences = match crate::stored_config(store, row.id)? {
                Some(config) => alike::differences(&config, &reference),
                None => vec![alike::Difference {
                    what: "configuration".into(),
                    a: "unreadable".into(),
                    b: "known".into(),
                }],
            };
            if differences.is_empty() {
                out.runs.push(row);
                continue;
            }
            let m = Mismatch {
                run: format!("#{}", row.id),
                differences,
            };
            match self {
                Spec::Last(_) => skipped.push(m),
                _ if allow => {
                    out.allowed.push(m);
                    out.runs.push(row);
                }
                _ => mismatched.push(m),
            }
        }
        out.runs.reverse();
        if !mismatched.is_empty() {
            return Err(Error::Mismatch {
                against: Against::Baseline(self.describe()),
                mismatches: mismatched,
                narrow: false,
            });
        }
        if !themselves.is_empty() {
            out.notes.push(format!(
                "Left out of the baseline: {} (the runs compared themselves, recorded).",
                themselves.join(", ")
            ));
        }
        if !incomplete.is_empty() {
            out.notes.push(format!(
                "Left out of the baseline: {} (interrupted or incomplete).",
                incomplete.join(", ")
            ));
        }
        if !skipped.is_empty() {
            out.notes.push(format!(
                "Passed over {} run(s) of the URL whose work differs, like {}.",
                skipped.len(),
                skipped[0]
            ));
        }
        if out.runs.is_empty() {
            let mut why = out.notes.join(" ");
            if !skipped.is_empty() && why.is_empty() {
                why = format!("{}", skipped[0]);
            }
            return Err(Error::NoBaseline {
                recorded: Recorded::Run,
                spec: self.describe(),
                detail: format!(
                    " with the same work and complete{}",
                    if why.is_empty() {
                        String::new()
                    } else {
                        format!(" ({why})")
                    }
                ),
                last: matches!(self, Spec::Last(_)),
            });
        }
        Ok(out)
    }

    /// The recorded sweeps of the baseline (kind `sweep`), without
    /// `exclude` (the sweep just made). A sweep's capacity is judged
    /// against sweeps only; their likeness is the URL's (last:N) or the
    /// tag or label the user chose.
    pub fn sweeps(
        &self,
        store: &mut Store,
        url: Option<&str>,
        exclude: Option<i64>,
    ) -> Result<Vec<RunRow>> {
        let mut filter = Filter {
            kinds: vec![Kind::Sweep],
            ..Filter::default()
        };
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
            return Err(Error::NoBaseline {
                recorded: Recorded::Sweep,
                spec: self.describe(),
                detail: String::new(),
                last: matches!(self, Spec::Last(_)),
            });
        }
        Ok(runs)
    }

    /// The spec as written: `tag:K=V`, `label:X`, `last:N`.
    pub fn describe(&self) -> String {
        match self {
            Spec::Tag(k, Some(v)) => format!("tag:{k}={v}"),
            Spec::Tag(k, None) => format!("tag:{k}"),
            Spec::Label(l) => format!("label:{l}"),
            Spec::Last(n) => format!("last:{n}"),
        }
    }
}

/// The recorded runs a baseline is made of, with what the report says
/// about the choice.
#[derive(Debug, Default)]
pub struct Selection {
    /// The baseline's runs, oldest first.
    pub runs: Vec<RunRow>,
    /// Runs kept although their work differs (`--allow-mismatch`).
    pub allowed: Vec<Mismatch>,
    /// Runs left out or passed over, one sentence each.
    pub notes: Vec<String>,
}

/// A recorded run's values with its percentiles of `latency`, from its
/// results file (the figure columns hold response time only).
pub fn recorded_values(store: &mut Store, id: i64, latency: Latency) -> Result<Vec<f64>> {
    let run = store.get(id).map_err(store_error)?.ok_or_else(|| {
        Error::other(format!(
            "run #{id} left the history while it was read; run again"
        ))
    })?;
    let bytes = crate::results_bytes(&run).map_err(|e| Error::Latency {
        latency: latency.name().to_string(),
        why: e.to_string(),
    })?;
    let summary = crate::summary_of(&bytes).map_err(|e| {
        Error::other(format!(
            "run #{id}'s results cannot be read ({e}); compare response_time instead"
        ))
    })?;
    Ok(pelt_analyze::latency::values(&summary, latency))
}

/// A recorded run's values, in the order of `runs::metrics`, as
/// `runs::values` gives them for a run at hand (a rate run's
/// throughput is its schedule's, and not compared).
pub fn stored_values(row: &RunRow) -> Vec<f64> {
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

/// The one URL every run loads (secrets replaced), if they agree.
pub fn single_url(runs: &[RunSummary]) -> Option<String> {
    let redactor = pelt_store::Redactor::default();
    let mut urls = runs.iter().map(|s| {
        let mut u = s.config.targets[0].url.clone();
        redactor.url(&mut u);
        u.to_string()
    });
    let first = urls.next()?;
    urls.all(|u| u == first).then_some(first)
}

/// The baseline runs a one-run gate leaves out as outliers
/// (`pelt_analyze::predict::outliers`), one sentence per run, saying the
/// rule.
fn outlier_notes(a: &[RunRow], values: &[Vec<f64>]) -> Vec<String> {
    let found = pelt_analyze::predict::outliers(values);
    let mut runs: Vec<usize> = found.iter().map(|o| o.run).collect();
    runs.sort_unstable();
    runs.dedup();
    runs.iter()
        .filter_map(|&run| {
            let of: Vec<&pelt_analyze::predict::Outlier> =
                found.iter().filter(|o| o.run == run).collect();
            let first = of.first()?;
            let id = a.get(run).map_or_else(|| format!("run {}", run + 1), |r| format!("#{}", r.id));
            Some(format!(
                "Outlier left out of the baseline: {id} for {} ({} {} against the baseline's median {}); \
                 rule: a run more than {} robust standard deviations (1.4826 x the median absolute \
                 deviation, log scale) from the baseline's median is left out, while {} runs remain.",
                of.iter().map(|o| o.metric.as_str()).collect::<Vec<_>>().join(", "),
                first.metric,
                pelt_core::human_ns(first.value as u64),
                pelt_core::human_ns(first.median as u64),
                pelt_analyze::predict::OUTLIER_Z,
                pelt_analyze::predict::MIN_BASELINE_RUNS,
            ))
        })
        .collect()
}

/// Names of recorded runs, `#ID` each.
fn names(rows: &[RunRow]) -> Vec<String> {
    rows.iter().map(|r| format!("#{}", r.id)).collect()
}

/// A comparison whose A side is the baseline's recorded runs.
fn comparison(
    spec: &Spec,
    a: &[RunRow],
    b: Vec<String>,
    rows: Vec<Row>,
    context: Context,
) -> Comparison {
    let mut preface = format!("baseline {}: recorded runs as A\n", spec.describe());
    if b.len() == 1 {
        preface.push_str(&prediction_note(&rows));
    }
    Comparison {
        rows,
        context: Context {
            baseline: Some(spec.describe()),
            ..context
        },
        a: names(a),
        sources: (
            a.iter().map(|r| format!("history:{}", r.id)).collect(),
            b.clone(),
        ),
        b,
        paired: false,
        runs: (Vec::new(), Vec::new()),
        preface,
        unjudged: Vec::new(),
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
         interval of the baseline runs (log scale for latency; A = their mean: geometric for latencies, plain for shares), {:.1}% so that\n\
         the gate over all metrics calls a regression that is not there at most 5% of the time\n",
        confidence * 100.0,
        confidence * 100.0
    )
}

/// `pelt compare --baseline SPEC FILE...`: B's results files against the
/// recorded runs `spec` selects. B's runs must be alike too (they stand
/// for one candidate); A's values are the history's figure columns, or
/// read from the recorded results files for a latency other than
/// response time.
pub fn against_files(
    store: &mut Store,
    spec: &Spec,
    files: &[PathBuf],
    o: &Options,
) -> Result<Comparison> {
    pelt_campaign::results::once_each(files, "each of B's runs is one replicate")?;
    let b: Vec<RunSummary> = files
        .iter()
        .map(|f| pelt_campaign::results::load(f))
        .collect::<Result<_>>()?;
    let b_names: Vec<String> = files
        .iter()
        .map(|f| pelt_campaign::results::label(f))
        .collect();
    let mut b_mismatches = alike::mismatches(&b[0].config, b_names.iter().cloned().zip(b.iter()));
    if !b_mismatches.is_empty() && !o.allow_mismatch {
        return Err(Error::Mismatch {
            against: Against::Run(format!("{} (B's first run)", b_names[0])),
            mismatches: b_mismatches,
            narrow: false,
        });
    }
    let selection = spec.select(store, &b, None, o.allow_mismatch)?;
    let a = &selection.runs;
    // The default is the runs' headline (service time for a closed loop).
    let latency = o.latency.resolve_for(&b[0]);
    let b_timed = crate::compare::timed(&b, latency);
    // The baseline's runs were recorded before these, as a rule: the
    // change is confounded with time like any before/after.
    let a_timed: Vec<Timed> = a
        .iter()
        .map(|r| {
            Ok(Timed {
                started_ms: r.started_ms.max(0) as u64,
                values: match latency {
                    // The figure columns hold response time only.
                    Latency::ResponseTime => stored_values(r),
                    other => recorded_values(store, r.id, other)?,
                },
            })
        })
        .collect::<Result<_>>()?;
    // One new run is judged against the baseline's prediction interval
    // (pelt_analyze::predict): the rank test needs 39 baseline runs.
    let (av, bv) = (values(&a_timed), values(&b_timed));
    let mut notes = selection.notes.clone();
    let mut unjudged = Vec::new();
    if let [one] = bv.as_slice() {
        notes.extend(outlier_notes(a, &av));
        unjudged = pelt_analyze::predict::unjudged(
            &pelt_analyze::predict::compare_values(&av, one),
            &av,
            one,
        );
    }
    let mut rows = match bv.as_slice() {
        [one] => pelt_analyze::predict::compare_values(&av, one),
        more => compare_values(&av, more, false),
    };
    rows = latency.judge(rows);
    let family = pelt_analyze::family::control(&mut rows);
    let time_design = design::assess(&runs::metrics(), &a_timed, &b_timed, o.sequential_ok);
    design::withhold_material(&mut rows, &time_design);
    b_mismatches.extend(selection.allowed.iter().cloned());
    let context = Context {
        design: Some(time_design),
        warnings: headline::group_warnings(
            b_names
                .iter()
                .cloned()
                .zip(b.iter().map(|s| s.warnings.as_slice())),
        ),
        runs: b.len(),
        allowed: b_mismatches,
        notes,
        latency,
        baseline: None,
        family,
    };
    let mut c = comparison(spec, a, b_names, rows, context);
    c.unjudged = unjudged;
    Ok(c)
}

/// `pelt run ... --baseline SPEC`: the run just made (recorded as `id`,
/// left out of its own baseline) against the baseline. Sequential by
/// nature: the report says so, with any trend within the baseline
/// (`pelt_analyze::predict::design_notes` says why verdicts stand).
pub fn against_run(
    store: &mut Store,
    spec: &Spec,
    summary: &RunSummary,
    id: Option<i64>,
    allow_mismatch: bool,
) -> Result<Comparison> {
    let selection = spec.select(store, std::slice::from_ref(summary), id, allow_mismatch)?;
    let a = &selection.runs;
    // The run's headline: service time for a closed loop, read from the
    // recorded runs' results files (the figure columns hold response
    // time). A baseline run kept without its file leaves the gate on
    // response time, said in the notes.
    let mut notes = selection.notes.clone();
    let mut latency = Latency::Headline.resolve_for(summary);
    let mut a_values: Vec<Vec<f64>> = Vec::new();
    if latency != Latency::ResponseTime {
        for r in a {
            match recorded_values(store, r.id, latency) {
                Ok(v) => a_values.push(v),
                Err(e) => {
                    notes.push(format!(
                        "judged on response time, not the headline {}: {e}",
                        latency.name()
                    ));
                    latency = Latency::ResponseTime;
                    break;
                }
            }
        }
    }
    if latency == Latency::ResponseTime {
        a_values = a.iter().map(stored_values).collect();
    }
    let this_values = pelt_analyze::latency::values(summary, latency);
    let rows = pelt_analyze::predict::compare_values(&a_values, &this_values);
    notes.extend(outlier_notes(a, &a_values));
    let unjudged = pelt_analyze::predict::unjudged(&rows, &a_values, &this_values);
    let name = id.map_or_else(|| "this run".to_string(), |id| format!("#{id} (this run)"));
    let timed = |started_ms: u64, values: Vec<f64>| Timed { started_ms, values };
    let baseline: Vec<Timed> = a
        .iter()
        .zip(a_values)
        .map(|(r, v)| timed(r.started_ms.max(0) as u64, v))
        .collect();
    let this = [timed(summary.env.started_unix_ms, this_values)];
    let context = Context {
        design: Some(design::assess(&runs::metrics(), &baseline, &this, false)),
        notes,
        allowed: selection.allowed.clone(),
        runs: 1,
        latency,
        ..Context::default()
    };
    let mut c = comparison(spec, a, vec![name], rows, context);
    c.unjudged = unjudged;
    Ok(c)
}

/// A sweep's capacity against the baseline's sweeps.
#[derive(Debug, Clone)]
pub struct SweepJudgement {
    /// The comparison; `None` when this sweep found no capacity, so there
    /// is nothing to set against the baseline.
    pub comparison: Option<Comparison>,
    /// Baseline sweeps left out because they found no capacity (`#ID`).
    pub left_out: Vec<String>,
}

/// `pelt sweep ... --baseline SPEC`: this sweep's capacity (`id`
/// recorded, `step` the summary of the step that set it) against the
/// capacities of the recorded sweeps `spec` selects, by `pelt compare`'s
/// method with capacity's margin (5 %, a sweep's resolution).
pub fn against_sweep(
    store: &mut Store,
    spec: &Spec,
    step: &RunSummary,
    id: Option<i64>,
    capacity: Option<f64>,
) -> Result<SweepJudgement> {
    let url = single_url(std::slice::from_ref(step));
    let a = spec.sweeps(store, url.as_deref(), id)?;
    let (a, without): (Vec<RunRow>, Vec<RunRow>) =
        a.into_iter().partition(|r| r.figures.capacity.is_some());
    let left_out = names(&without);
    let Some(b) = capacity else {
        return Ok(SweepJudgement {
            comparison: None,
            left_out,
        });
    };
    if a.is_empty() {
        return Err(Error::NoBaseline {
            recorded: Recorded::Capacity,
            spec: spec.describe(),
            detail: String::new(),
            last: false,
        });
    }
    let values: Vec<f64> = a.iter().filter_map(|r| r.figures.capacity).collect();
    let metric = pelt_analyze::sweep::capacity_metric();
    let rows = vec![Row {
        result: pelt_analyze::compare::compare_unpaired(&metric, &values, &[b]),
        metric,
        confounded: false,
    }];
    let name = id.map_or_else(
        || "this sweep".to_string(),
        |id| format!("#{id} (this sweep)"),
    );
    let context = Context {
        runs: a.len() + 1,
        ..Context::default()
    };
    let mut comparison = comparison(spec, &a, vec![name], rows, context);
    // A capacity is one figure, not a prediction interval of runs.
    comparison.preface = format!("baseline {}: recorded runs as A\n", spec.describe());
    Ok(SweepJudgement {
        comparison: Some(comparison),
        left_out,
    })
}

/// How many recorded runs `spec` holds that do `config`'s work, counted
/// by the one rule of likeness a gate uses, with why others do not count
/// (`None` when none were found at all). A gate needs
/// [`MIN_BASELINE_RUNS`](pelt_analyze::predict::MIN_BASELINE_RUNS) of
/// them to give a verdict: check before any load.
pub fn usable_runs(
    store: &mut Store,
    spec: &Spec,
    config: &RunConfig,
    allow_mismatch: bool,
) -> Result<(usize, Option<Error>)> {
    let mut url = config.targets[0].url.clone();
    pelt_store::Redactor::default().url(&mut url);
    Ok(
        match spec.select_like(
            store,
            config,
            &[],
            Some(url.to_string()),
            None,
            allow_mismatch,
        ) {
            Ok(selection) => (selection.runs.len(), None),
            // None at all says itself in the count; runs doing other work
            // are named, so the user sees why they do not count.
            Err(Error::NoBaseline {
                recorded: Recorded::Run,
                ..
            }) => (0, None),
            Err(e) => (0, Some(e)),
        },
    )
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
            let e = Spec::parse(bad).unwrap_err().to_string();
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
