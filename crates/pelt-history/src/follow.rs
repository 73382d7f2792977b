//! Following recorded runs: a metric's trend over time, like with like,
//! and a recorded run made again.

use crate::{render, store_error, RUN_ID_TAG, SHARD_TAG, STEP_TAG, SWEEP_TAG};
use crate::{Against, Error, Result};
use pelt_analyze::alike::{self, Difference, Mismatch};
use pelt_core::RunConfig;
use pelt_store::{Filter, Kind, Metric, RunRow, Store};

/// One metric of the runs a filter selects, oldest first.
#[derive(Debug, Clone)]
pub struct Trend {
    /// The metric followed.
    pub metric: Metric,
    /// The runs, oldest first.
    pub rows: Vec<RunRow>,
    /// The metric's value in each run (`None` where it has none).
    pub values: Vec<Option<f64>>,
    /// The distinct URLs the runs load, sorted.
    pub urls: Vec<String>,
}

impl Trend {
    /// `metric` over the runs `filter` selects. Shards, a sweep's steps
    /// and sweeps are left out unless the filter asks for them by tag (a
    /// shard's figures are its part of a run; steps are at rates a sweep
    /// chose); capacity follows sweeps only. Runs must do the newest
    /// run's work and be complete, or the trend is refused naming the
    /// difference, unless `allow_mismatch`.
    pub fn of(
        store: &mut Store,
        mut filter: Filter,
        metric: Metric,
        allow_mismatch: bool,
    ) -> Result<Trend> {
        let by_part = filter
            .tags
            .iter()
            .any(|(k, _)| [SHARD_TAG, RUN_ID_TAG, SWEEP_TAG, STEP_TAG].contains(&k.as_str()));
        if metric == Metric::Capacity {
            filter.kinds.push(Kind::Sweep);
        } else if !by_part {
            filter
                .without
                .extend([Kind::Shard, Kind::Step, Kind::Sweep]);
        }
        let rows = store.list(&filter).map_err(store_error)?;
        // Sweeps are alike by their URL and tags; runs by their work.
        if !allow_mismatch && metric != Metric::Capacity && !by_part {
            like_with_like(store, &rows)?;
        }
        let values = rows.iter().map(|r| r.figures.get(metric)).collect();
        let mut urls: Vec<String> = rows.iter().map(|r| r.url.clone()).collect();
        urls.sort_unstable();
        urls.dedup();
        Ok(Trend {
            metric,
            rows,
            values,
            urls,
        })
    }

    fn urls(&self) -> Vec<&str> {
        self.urls.iter().map(String::as_str).collect()
    }

    /// A sparkline and a table.
    pub fn text(&self) -> String {
        render::trend_text(self.metric, &self.rows, &self.values, &self.urls())
    }

    /// JSON: one object per run.
    pub fn json(&self) -> String {
        render::trend_json(self.metric, &self.rows, &self.values)
    }

    /// CSV: one row per run.
    pub fn csv(&self) -> String {
        render::trend_csv(self.metric, &self.rows, &self.values)
    }

    /// A self-contained HTML page with a chart.
    pub fn html(&self) -> String {
        render::trend_html(self.metric, &self.rows, &self.values, &self.urls())
    }
}

/// A trend follows one experiment over time: every run must do the newest
/// run's work and be complete (see `pelt_analyze::alike`), or the trend is
/// refused, naming the difference.
fn like_with_like(store: &mut Store, rows: &[RunRow]) -> Result<()> {
    let Some(newest) = rows.last() else {
        return Ok(());
    };
    let Some(reference) = super::stored_config(store, newest.id)? else {
        return Ok(());
    };
    let mut mismatches = Vec::new();
    for r in rows.iter().rev() {
        let mut differences = match super::stored_config(store, r.id)? {
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
    Err(Error::Mismatch {
        against: Against::Run(format!("the newest run, #{}", newest.id)),
        mismatches,
        narrow: true,
    })
}

/// Recorded run `id`'s configuration, to run again, with the secrets the
/// history does not keep given back (`given` headers, matched by name),
/// and its label. A secret not given, or one in the URL, is refused
/// saying how to give it.
pub fn rerun_config(
    store: &mut Store,
    id: i64,
    given: &[(String, String)],
) -> Result<(RunConfig, Option<String>)> {
    use pelt_core::secrets::MARKER;
    let run = store.get(id).map_err(store_error)?.ok_or_else(|| {
        Error::other(format!(
            "no run {id} in the history; see the ids with pelt history"
        ))
    })?;
    let mut config: RunConfig = serde_json::from_str(&run.config_json)
        .map_err(|e| Error::other(format!("run {id}'s configuration cannot be read: {e}")))?;
    for t in &mut config.targets {
        if t.url.to_string().contains(MARKER) {
            return Err(Error::other(format!(
                "run {id}'s URL had secrets (userinfo or a token-like parameter), which the history does not keep: \
                 run it again with pelt run and the full URL"
            )));
        }
        for (name, value) in &mut t.headers {
            if value.contains(MARKER) {
                match given.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
                    Some((_, v)) => *value = v.clone(),
                    None => {
                        return Err(Error::other(format!(
                        "run {id}'s {name} header was secret, and the history does not keep it: \
                             give it again, like pelt history rerun {id} -H '{name}: ...'"
                    )))
                    }
                }
            }
        }
    }
    Ok((config, run.row.label.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{open, RecordSpec, Recording};
    use pelt_campaign::{execute, Cancel, Keep, Places, Unobserved};
    use pelt_core::{Load, Stop, Target, Url};

    /// Runs of pelt's server recorded in a fresh SQLite history: `rates`
    /// in order, one with a secret header.
    fn recorded(db: &str, rates: &[f64]) {
        let server = crate::loopback_server();
        let spec = RecordSpec {
            history: Some(db.to_string()),
            ..RecordSpec::default()
        };
        let mut history = Recording::start(&spec).unwrap().expect("a history");
        for &rate in rates {
            let url = Url::parse(&format!("http://{}/", server.local_addr())).unwrap();
            let stop = Stop {
                requests: Some(20),
                duration: None,
            };
            let mut target = Target::get(url);
            target
                .headers
                .push(("Authorization".into(), "Bearer s3cret".into()));
            let mut config = RunConfig::new(vec![target], Load::rate_of(rate, 4), stop);
            config.threads = 1;
            let mut copy = None;
            let keep = Keep {
                copy: Some(&mut copy),
                secrets: pelt_core::Redactor::for_config(&config),
                ..Keep::default()
            };
            let summary = execute(config, keep, &Cancel::new(), &mut Unobserved).unwrap();
            history.record(&summary, None, copy).unwrap();
        }
    }

    /// A trend follows runs doing the same work and refuses unlike ones
    /// (naming the difference) unless allowed; a re-run gets its secret
    /// back by name, or is refused saying how to give it.
    #[test]
    fn a_trend_follows_like_runs_and_a_rerun_gets_its_secrets_back() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("history.db").display().to_string();
        recorded(&db, &[400.0, 400.0]);
        let mut store = open(Some(db.as_str()), &Places::default()).unwrap().store;
        let t = Trend::of(&mut store, Filter::default(), Metric::P99, false).unwrap();
        assert_eq!(t.rows.len(), 2);
        assert!(t.values.iter().all(Option::is_some), "{:?}", t.values);
        assert_eq!(t.urls.len(), 1);
        assert!(t.csv().lines().count() >= 3, "{}", t.csv());

        drop(store);
        recorded(&db, &[800.0]);
        let mut store = open(Some(db.as_str()), &Places::default()).unwrap().store;
        let refused = Trend::of(&mut store, Filter::default(), Metric::P99, false);
        assert!(refused
            .unwrap_err()
            .to_string()
            .contains("`allow_mismatch: true` (or narrow"));
        let allowed = Trend::of(&mut store, Filter::default(), Metric::P99, true).unwrap();
        assert_eq!(allowed.rows.len(), 3);

        let id = allowed.rows[0].id;
        let lost = rerun_config(&mut store, id, &[]).unwrap_err().to_string();
        assert!(lost.contains("Authorization header was secret"), "{lost}");
        let given = [("authorization".to_string(), "Bearer again".to_string())];
        let (config, _) = rerun_config(&mut store, id, &given).unwrap();
        assert!(config.targets[0]
            .headers
            .contains(&("Authorization".to_string(), "Bearer again".to_string())));
        assert!(rerun_config(&mut store, 9_999, &[]).is_err());
    }
}
