//! Comparisons of runs, judged by one method: two sets of results files
//! ([`Comparison::files`]), or new runs against a baseline of recorded
//! ones (`baseline::against_*`). `pelt compare`, `pelt run --baseline`,
//! `pelt sweep --baseline` and a program's CI gate all make a
//! [`Comparison`], and render or gate it by the same rules.
//!
//! Each run is reduced to one value per metric (from its merged
//! histogram) and the runs, not the requests, are compared: see
//! pelt-analyze for why and how; pelt-report renders the result.

use crate::{Against, Error, Result};
use pelt_analyze::alike::{self, Mismatch};
use pelt_analyze::design::{self, Timed};
use pelt_analyze::headline;
use pelt_analyze::latency::Latency;
use pelt_analyze::runs::{self, Row};
use pelt_campaign::results::{label, load, once_each};
use pelt_core::RunSummary;
use pelt_report::compare::{self as render, Context};
use pelt_report::html::Labeled;
use std::path::PathBuf;

/// How two sets of runs are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// A's and B's runs were made in pairs (A1 with B1, ...): compare the
    /// differences within pairs.
    pub paired: bool,
    /// Which latency the percentile metrics are of.
    pub latency: Latency,
    /// The runs were made one side after the other on purpose: keep the
    /// material verdicts a sequential design would otherwise withhold.
    pub sequential_ok: bool,
    /// Compare runs whose work differs, listing the differences, instead
    /// of refusing.
    pub allow_mismatch: bool,
    /// [`Comparison::runs`]: keep the runs' secrets (`Authorization`,
    /// secret query values, a login's body) in what the comparison holds
    /// and renders. Off, they are replaced with `REDACTED` as in every
    /// file pelt writes, so that no rendering (text, JSON, Markdown,
    /// HTML) or listed difference carries one.
    pub keep_secrets: bool,
}

/// A judged comparison of A's runs with B's, ready to render or gate on.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// One row per metric: the change, its interval and the verdict.
    pub rows: Vec<Row>,
    /// What the report says around the table: design, warnings, notes.
    pub context: Context,
    /// A's runs, each by its name (a file's label, or `#ID` of a
    /// recorded run).
    pub a: Vec<String>,
    /// B's runs, each by its name.
    pub b: Vec<String>,
    /// A's and B's runs as JSON names them (a file's path, or
    /// `history:ID`).
    pub sources: (Vec<String>, Vec<String>),
    /// Whether runs were compared in pairs.
    pub paired: bool,
    /// A's and B's runs themselves, for charts; empty for a baseline,
    /// whose runs are rows of the history.
    pub runs: (Vec<RunSummary>, Vec<RunSummary>),
    /// Lines said above the text table (a baseline says what it is).
    pub preface: String,
    /// The metrics a one-run gate could not judge although the run lies
    /// outside the whole baseline (`pelt_analyze::predict::unjudged`):
    /// `--fail-on` fails on them.
    pub unjudged: Vec<String>,
}

impl Comparison {
    /// A's results files against B's (each file one run), after the
    /// checks that make it a fair comparison: no run twice, like with
    /// like (refused, naming the differences, unless `allow_mismatch`).
    pub fn files(a_files: &[PathBuf], b_files: &[PathBuf], o: &Options) -> Result<Comparison> {
        pairs(a_files.len(), b_files.len(), o.paired)?;
        // The same run twice on one side would count as two runs' evidence.
        once_each(a_files, "each of A's runs is one replicate")?;
        once_each(b_files, "each of B's runs is one replicate")?;
        // ... and on both sides it would be compared with itself.
        let both: Vec<PathBuf> = a_files.iter().chain(b_files).cloned().collect();
        once_each(&both, "a run on both sides would be compared with itself")?;
        let load_all =
            |files: &[PathBuf]| files.iter().map(|f| load(f)).collect::<Result<Vec<_>>>();
        let names = |files: &[PathBuf]| files.iter().map(|f| label(f)).collect::<Vec<_>>();
        let paths = |files: &[PathBuf]| {
            files
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
        };
        Comparison::judge(
            Side {
                names: names(a_files),
                sources: paths(a_files),
                runs: load_all(a_files)?,
            },
            Side {
                names: names(b_files),
                sources: paths(b_files),
                runs: load_all(b_files)?,
            },
            o,
        )
    }

    /// A's runs against B's, made by a program (named `a1`, `a2`, ...
    /// and `b1`, ...): the same checks and method as [`Comparison::files`].
    /// The runs' secrets are replaced first (as a results file's are, so
    /// two runs that differ only in a token compare as files of them
    /// would), unless [`Options::keep_secrets`].
    pub fn runs(a: Vec<RunSummary>, b: Vec<RunSummary>, o: &Options) -> Result<Comparison> {
        let side = |prefix: &str, mut runs: Vec<RunSummary>| {
            if !o.keep_secrets {
                for s in &mut runs {
                    pelt_core::Redactor::for_config(&s.config).summary(s);
                }
            }
            let names: Vec<String> = (1..=runs.len()).map(|i| format!("{prefix}{i}")).collect();
            Side {
                sources: names.clone(),
                names,
                runs,
            }
        };
        Comparison::judge(side("a", a), side("b", b), o)
    }

    fn judge(a: Side, b: Side, o: &Options) -> Result<Comparison> {
        if a.runs.is_empty() || b.runs.is_empty() {
            return Err(Error::other(
                "a comparison needs at least one run on each side",
            ));
        }
        pairs(a.runs.len(), b.runs.len(), o.paired)?;
        let allowed = like_with_like(&a, &b, o.allow_mismatch)?;
        // The default is the runs' headline: service time for a closed
        // loop's, response time for rate runs' (alike: one load model).
        let latency = o.latency.resolve_for(&b.runs[0]);
        let (ta, tb) = (timed(&a.runs, latency), timed(&b.runs, latency));
        let mut rows = runs::compare_values(&values(&ta), &values(&tb), o.paired);
        // Scenario runs: each step's p50, p99 and failed share beside the
        // whole run's, judged by the same method.
        rows.extend(runs::compare_runs_steps(&a.runs, &b.runs, o.paired));
        // Streamed responses (issue 38): time to first event and gaps,
        // when every run on both sides met a stream.
        rows.extend(runs::compare_runs_streams(&a.runs, &b.runs, o.paired));
        rows = latency.judge(rows);
        // The rows judged as one family: an A/A calls a change at most
        // 5 % of the time however many metrics (pelt_analyze::family).
        let family = pelt_analyze::family::control(&mut rows);
        let time_design = design::assess(&runs::metrics(), &ta, &tb, o.sequential_ok);
        design::withhold_material(&mut rows, &time_design);
        let context = Context {
            design: Some(time_design),
            warnings: headline::group_warnings(
                a.names
                    .iter()
                    .zip(&a.runs)
                    .chain(b.names.iter().zip(&b.runs))
                    .map(|(name, s)| (name.clone(), s.warnings.as_slice())),
            ),
            runs: a.runs.len() + b.runs.len(),
            allowed,
            notes: alike::servers(&a.runs[0].config, &b.runs[0].config)
                .map(|d| format!("A and B ran against different servers ({d}): compared as two servers doing the same work."))
                .into_iter()
                .collect(),
            latency,
            baseline: None,
            family,
        };
        Ok(Comparison {
            rows,
            context,
            a: a.names,
            b: b.names,
            sources: (a.sources, b.sources),
            paired: o.paired,
            runs: (a.runs, b.runs),
            preface: String::new(),
            unjudged: Vec::new(),
        })
    }

    /// The runs pelt was short of CPU in (`client_busy`), by name: there
    /// the client may have set the pace, and a difference be pelt's.
    pub fn client_busy(&self) -> Vec<String> {
        self.a
            .iter()
            .zip(&self.runs.0)
            .chain(self.b.iter().zip(&self.runs.1))
            .filter(|(_, s)| runs::client_busy(s))
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// The report as text: the preface, then `pelt compare`'s table.
    pub fn text(&self) -> String {
        let table = render::text(&self.rows, &self.a, &self.b, self.paired, &self.context);
        format!("{}{table}", self.preface)
    }

    /// The report as Markdown.
    pub fn markdown(&self) -> String {
        render::markdown_report(&self.rows, &self.context)
    }

    /// The report as JSON (`pelt.compare/2`).
    pub fn json(&self) -> String {
        render::json(
            &self.rows,
            &self.sources.0,
            &self.sources.1,
            self.paired,
            &self.context,
        )
    }

    /// The report as a self-contained HTML page with charts; `None` when
    /// the runs are not at hand (a baseline of recorded runs).
    pub fn html(&self) -> Option<String> {
        if self.runs.0.is_empty() || self.runs.1.is_empty() {
            return None;
        }
        Some(render::html(
            &self.rows,
            &labeled(&self.a, &self.runs.0),
            &labeled(&self.b, &self.runs.1),
            self.paired,
            &self.context,
        ))
    }

    /// Whether a gate can judge: at least one metric has a verdict. A
    /// gate that could not judge must not pass.
    pub fn has_verdict(&self) -> bool {
        pelt_analyze::predict::gate_has_verdict(&self.rows)
    }

    /// Whether any metric regressed (materially, if `material_only`).
    pub fn regressed(&self, material_only: bool) -> bool {
        runs::regressed(&self.rows, material_only)
    }
}

/// Each run with its name, for charts.
fn labeled<'a>(names: &[String], runs: &'a [RunSummary]) -> Vec<Labeled<'a>> {
    names
        .iter()
        .zip(runs)
        .map(|(label, summary)| Labeled {
            label: label.clone(),
            summary,
        })
        .collect()
}

/// Each run's start and values (its percentiles of `latency`), for the
/// comparison and the design's checks.
pub fn timed(runs: &[RunSummary], latency: Latency) -> Vec<Timed> {
    runs.iter()
        .map(|s| Timed {
            started_ms: s.env.started_unix_ms,
            values: pelt_analyze::latency::values(s, latency),
        })
        .collect()
}

/// The values of each timed run.
pub(crate) fn values(t: &[Timed]) -> Vec<Vec<f64>> {
    t.iter().map(|r| r.values.clone()).collect()
}

/// Paired runs come in pairs.
fn pairs(a: usize, b: usize, paired: bool) -> Result<()> {
    match paired && a != b {
        true => Err(Error::Paired { a, b }),
        false => Ok(()),
    }
}

/// One side of a comparison: its runs, their names in tables, and in JSON.
struct Side {
    names: Vec<String>,
    sources: Vec<String>,
    runs: Vec<RunSummary>,
}

/// Like with like (see `pelt_analyze::alike`): every run, A's and B's,
/// against A's first, and each complete. Differences refuse the
/// comparison (naming them) unless `allow`, when they are returned to be
/// listed in the report. Two runs that are the same run (the same start
/// and work) are refused whatever `allow` says: a run compared with
/// itself is no evidence.
fn like_with_like(a: &Side, b: &Side, allow: bool) -> Result<Vec<Mismatch>> {
    for (fa, ra) in a.sources.iter().zip(&a.runs) {
        for (fb, rb) in b.sources.iter().zip(&b.runs) {
            if ra.env.started_unix_ms == rb.env.started_unix_ms
                && ra.env.started_unix_ms != 0
                && ra.config == rb.config
            {
                return Err(Error::other(format!(
                    "'{fa}' and '{fb}' are the same run (same start and configuration), on both sides; \
                     give each run on one side only"
                )));
            }
        }
    }
    let all = a
        .names
        .iter()
        .zip(&a.runs)
        .chain(b.names.iter().zip(&b.runs))
        .map(|(name, s)| (name.clone(), s));
    let mismatches = alike::mismatches(&a.runs[0].config, all);
    if mismatches.is_empty() || allow {
        return Ok(mismatches);
    }
    Err(Error::Mismatch {
        against: Against::Run(format!("{} (A's first run)", a.names[0])),
        mismatches,
        narrow: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pelt_campaign::{execute, Cancel, Keep, Unobserved};
    use pelt_core::{Load, RunConfig, Stop, Target, Url};

    /// Two runs against pelt's own server, each kept in a results file.
    fn two_runs(dir: &std::path::Path) -> (PathBuf, PathBuf) {
        let server = crate::loopback_server();
        let url = Url::parse(&format!("http://{}/", server.local_addr())).unwrap();
        let run = |name: &str| {
            let file = dir.join(name);
            let stop = Stop {
                requests: Some(200),
                duration: None,
            };
            let mut config = RunConfig::new(vec![Target::get(url.clone())], Load::closed(2), stop);
            config.threads = 1;
            let keep = Keep {
                out: Some(&file),
                ..Keep::default()
            };
            execute(config, keep, &Cancel::new(), &mut Unobserved).unwrap();
            file
        };
        (run("a.pelt"), run("b.pelt"))
    }

    /// One comparison, rendered four ways from the same rows; the checks
    /// that make it fair refuse a run on both sides and unequal pairs.
    #[test]
    fn two_files_make_one_comparison_in_every_format() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = two_runs(dir.path());
        let c = Comparison::files(
            std::slice::from_ref(&a),
            std::slice::from_ref(&b),
            &Options::default(),
        )
        .unwrap();
        assert_eq!(
            (c.a.clone(), c.b.clone()),
            (vec!["a".to_string()], vec!["b".to_string()])
        );
        assert_eq!(c.rows.len(), runs::metrics().len());
        // One run a side cannot give an interval: no verdict, and a gate
        // asking for one must know it.
        assert!(!c.has_verdict());
        assert!(!c.regressed(false));
        assert!(c.text().contains("p99"), "{}", c.text());
        let json: serde_json::Value = serde_json::from_str(&c.json()).unwrap();
        assert_eq!(json["a"][0], a.display().to_string(), "{json}");
        assert!(c.html().is_some_and(|h| h.contains("<html")));
        assert!(c.client_busy().is_empty());

        let same = Comparison::files(
            std::slice::from_ref(&a),
            std::slice::from_ref(&a),
            &Options::default(),
        );
        assert!(same
            .unwrap_err()
            .to_string()
            .contains("compared with itself"));
        let paired = Options {
            paired: true,
            ..Options::default()
        };
        let unequal = Comparison::files(&[a.clone(), b.clone()], &[b], &paired);
        assert!(unequal.unwrap_err().to_string().contains("`paired` needs"));
    }

    /// Issue 35 §6: `Comparison::runs` on `Run::wait` summaries printed a
    /// secret query value in text, JSON, Markdown and HTML (the listed
    /// differences name each side's URL). Redacted by default; kept only
    /// when asked.
    #[test]
    fn a_programs_runs_compare_without_their_secrets() {
        let server = crate::loopback_server();
        let (token_a, token_b) = ("T0KEN-SIDE-A-41c9", "T0KEN-SIDE-B-9d07");
        let bearer = "BEARER-COMPARED-6a2f";
        let run = |path: &str, token: &str| {
            let url = format!("http://{}/{path}?token={token}", server.local_addr());
            let mut target = Target::get(Url::parse(&url).unwrap());
            target
                .headers
                .push(("Authorization".into(), format!("Bearer {bearer}")));
            let stop = Stop {
                requests: Some(50),
                duration: None,
            };
            let mut config = RunConfig::new(vec![target], Load::closed(2), stop);
            config.threads = 1;
            pelt_engine::Run::start(config).unwrap().wait()
        };
        let (a, b) = (run("a", token_a), run("b", token_b));
        let allow = Options {
            allow_mismatch: true,
            ..Options::default()
        };
        let c = Comparison::runs(vec![a.clone()], vec![b.clone()], &allow).unwrap();
        let html = c.html().unwrap();
        for (what, text) in [
            ("text", c.text()),
            ("JSON", c.json()),
            ("Markdown", c.markdown()),
            ("HTML", html),
        ] {
            for secret in [token_a, token_b, bearer] {
                assert!(!text.contains(secret), "{what} holds {secret}:\n{text}");
            }
        }
        assert!(c.text().contains("token=REDACTED"), "{}", c.text());
        // Opting out keeps them: the check above could fail.
        let keep = Options {
            keep_secrets: true,
            ..allow
        };
        let kept = Comparison::runs(vec![a], vec![b], &keep).unwrap();
        assert!(kept.text().contains(token_a), "{}", kept.text());
    }
}
