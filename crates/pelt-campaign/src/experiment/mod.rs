//! An experiment: the before/after comparison people make by hand (stop
//! the server, start it with another config, load it, repeat), done
//! properly: variants interleaved in counterbalanced blocks, every run
//! saved, and a verdict per metric and load level from the runs as the
//! unit of replication (see pelt-analyze). [`plan::Plan`] is what to do;
//! [`conduct`] does it.

mod capacity;
pub mod plan;
mod shell;

use crate::execute::{execute, Keep};
use crate::{Cancel, Error, Observer, Result, RunObserver};
use pelt_analyze::experiment::{regressed, Outcome, RunRecord};
use pelt_core::{Human, RunSummary};
use pelt_report::experiment::{Experiment, Reports};
use plan::{slug, Plan};
use shell::Shell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What an experiment tells its caller as it goes, besides [`Observer`]'s.
pub trait ExperimentObserver: Observer {
    /// A run was saved in `file`; `tags` name it (experiment, variant,
    /// level, block), as a history would record it.
    fn run_saved(&mut self, _summary: &RunSummary, _file: &Path, _tags: Vec<(String, String)>) {}
}

impl ExperimentObserver for crate::Unobserved {}

/// What an experiment found. Its reports are in its folder already.
#[derive(Debug)]
pub struct Conducted {
    /// The report as text.
    pub text: String,
    /// The report as JSON.
    pub json: String,
    /// A verdict regressed (any, and beyond its margin).
    pub regressed: Regressed,
    /// Why it stopped before the end (a setup or readiness failure).
    pub stopped: Option<String>,
    /// A cancel stopped it; the complete blocks are reported.
    pub interrupted: bool,
}

/// Whether any verdict regressed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Regressed {
    /// Any statistically clear regression.
    pub any: bool,
    /// A regression whose whole interval is beyond the margin.
    pub material: bool,
}

/// Runs `plan`, saving every run and the reports in `folder` (new or
/// empty), and returns what it found. The plan's own setup and teardown
/// bracket everything, whatever happens in between; `cancel` stops it
/// after tearing the current variant down.
pub fn conduct(
    plan: &Plan,
    folder: &Path,
    cancel: &Cancel,
    observer: &mut dyn ExperimentObserver,
) -> Result<Conducted> {
    prepare_folder(folder, plan)?;
    let log = folder.join("logs").join(PLAN_LOG);
    let shell = plan_shell(plan, folder, &log, cancel);
    let result = match &plan.setup {
        Some(cmd) => shell
            .run("plan's setup", cmd, plan.command_timeout)
            .map_err(|e| Error::other(format!("experiment not started: {e}")))
            .and_then(|()| conduct_plan(plan, folder, cancel, observer)),
        None => conduct_plan(plan, folder, cancel, observer),
    };
    if let Some(cmd) = &plan.teardown {
        if let Err(e) = shell.run("plan's teardown", cmd, plan.command_timeout) {
            observer.say(&format!("warning: {e}"));
        }
    }
    result
}

/// The plan's log: `@` is in no variant's log name (see [`slug`]).
const PLAN_LOG: &str = "@plan.log";

/// Every variant in every block, at fixed load levels or swept, and the
/// reports.
fn conduct_plan(
    plan: &Plan,
    folder: &Path,
    cancel: &Cancel,
    observer: &mut dyn ExperimentObserver,
) -> Result<Conducted> {
    if let Some(slo) = &plan.sweep {
        return capacity::conduct(plan, folder, slo, cancel, observer);
    }
    let mut outcome = Outcome::new(plan.variants.len(), plan.levels.len(), folder.to_path_buf());
    let failure = run_blocks(plan, &mut outcome, cancel, observer).err();
    if let Some(e) = &failure {
        outcome.problems.push(e.clone());
    }
    let reports = write_reports(plan, &outcome)?;
    observer.done(&reports.text, &reports.json);
    Ok(Conducted {
        regressed: Regressed {
            any: regressed(&reports.comparisons, false),
            material: regressed(&reports.comparisons, true),
        },
        text: reports.text,
        json: reports.json,
        stopped: failure,
        interrupted: outcome.interrupted,
    })
}

/// The experiment's report of `outcome` so far.
fn render(plan: &Plan, outcome: &Outcome) -> Reports {
    let variants: Vec<String> = plan.variants.iter().map(|v| v.name.clone()).collect();
    Experiment {
        name: &plan.name,
        blocks: plan.blocks,
        levels: &plan.levels,
        variants: &variants,
        outcome,
        latency: latency(plan),
    }
    .render()
}

/// The latency the plan's verdicts judge: `--metric`, its default the
/// runs' headline (service time for a closed loop's runs).
fn latency(plan: &Plan) -> pelt_analyze::latency::Latency {
    let rate_mode = plan
        .variants
        .first()
        .and_then(|v| v.configs.first())
        .is_some_and(|c| c.load.rate().is_some());
    plan.latency.resolve(rate_mode)
}

/// Renders the report and writes it, in every format, to the folder.
fn write_reports(plan: &Plan, outcome: &Outcome) -> Result<Reports> {
    let reports = render(plan, outcome);
    crate::results::write_reports(
        &outcome.folder,
        &reports.text,
        &reports.markdown,
        &reports.html,
        &reports.json,
    )?;
    Ok(reports)
}

/// Runs every block; stops at the first setup or readiness failure, or at
/// a cancel, always tearing the current variant down.
fn run_blocks(
    plan: &Plan,
    outcome: &mut Outcome,
    cancel: &Cancel,
    observer: &mut dyn ExperimentObserver,
) -> std::result::Result<(), String> {
    let started = Instant::now();
    let logs = outcome.folder.join("logs");
    for block in 0..plan.blocks {
        for v in plan.order(block) {
            let variant = &plan.variants[v];
            let log = logs.join(format!("{}.log", slug(&variant.name)));
            let shell = shell_for(plan, &outcome.folder, &log, &variant.name, block, cancel);
            let at = At { block, v, started };
            let result = measure_variant(plan, &shell, at, outcome, cancel, observer);
            if let Some(cmd) = &variant.teardown {
                if let Err(e) = shell.run("teardown", cmd, plan.command_timeout) {
                    let problem = format!("variant '{}', block {}: {e}", variant.name, block + 1);
                    observer.say(&format!("warning: {problem}"));
                    outcome.problems.push(problem);
                }
            }
            result.map_err(|e| format!("variant '{}', block {}: {e}", variant.name, block + 1))?;
            if outcome.interrupted {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Where in the experiment a variant's turn is.
#[derive(Debug, Clone, Copy)]
struct At {
    block: u32,
    v: usize,
    /// When the experiment started: the pace so far says the time left.
    started: Instant,
}

/// Setup, readiness, then one run per load level.
fn measure_variant(
    plan: &Plan,
    shell: &Shell<'_>,
    At { block, v, started }: At,
    outcome: &mut Outcome,
    cancel: &Cancel,
    observer: &mut dyn ExperimentObserver,
) -> std::result::Result<(), String> {
    let total = plan.total_runs();
    let variant = &plan.variants[v];
    bring_up(plan, shell, variant)?;
    for (l, level) in plan.levels.iter().enumerate() {
        if cancel.is_stopped() {
            outcome.interrupted = true;
            return Ok(());
        }
        let done = outcome.runs.len();
        // Time left from the pace so far (set-ups included), or from the
        // plan before the first run.
        let per_run = if done == 0 {
            plan.run_length
        } else {
            started.elapsed() / done as u32
        };
        let left = match (done, plan.requests_per_run) {
            // Count-limited runs: no pace yet, no guess.
            (0, Some(_)) => "time left known after the first run".to_string(),
            _ => format!(
                "about {} left",
                Human(round_s(per_run * (total - done) as u32))
            ),
        };
        observer.say(&format!(
            "run {}/{total}: block {}/{}, {}, {} ({left})",
            done + 1,
            block + 1,
            plan.blocks,
            variant.name,
            level.label(),
        ));
        let file = outcome.folder.join("runs").join(format!(
            "{}-b{:02}-{}.pelt",
            level.slug(),
            block + 1,
            slug(&variant.name)
        ));
        let run_id = format!(
            "{}-b{:02}-{}-{}",
            slug(&plan.name),
            block + 1,
            slug(&variant.name),
            level.slug()
        );
        let label = format!(
            "block {}/{}, {}, {}",
            block + 1,
            plan.blocks,
            variant.name,
            level.label()
        );
        observer.run_started(&label, &run_id, &variant.configs[l]);
        let keep = Keep {
            until: None,
            out: Some(&file),
            save: false,
            ..Keep::default()
        };
        let mut seconds: Box<dyn RunObserver> = observer.run_observer();
        let summary = execute(variant.configs[l].clone(), keep, cancel, &mut *seconds)
            .map_err(|e| e.to_string())?;
        let tags = [
            ("experiment", plan.name.clone()),
            ("variant", variant.name.clone()),
            ("level", level.label()),
            ("block", (block + 1).to_string()),
        ];
        observer.run_saved(
            &summary,
            &file,
            tags.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        );
        let mut record = RunRecord::new(block, v, l, file, &summary);
        record.judge(&summary, latency(plan));
        let interrupted = record.interrupted;
        let shown = summary.clone();
        outcome.add(record, summary);
        observer.run_finished(&shown, render(plan, outcome).text);
        if interrupted {
            // Saved and listed, but left out of the verdicts and charts.
            outcome.interrupted = true;
            return Ok(());
        }
    }
    Ok(())
}

fn round_s(d: Duration) -> Duration {
    Duration::from_secs(d.as_secs().max(1))
}

/// The order of runs and the time they take, for a dry run.
pub fn schedule(plan: &Plan) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    if plan.sweep.is_some() {
        let _ = writeln!(
            o,
            "pelt experiment '{}': {} variant(s) x {} block(s) = {} sweeps (each as long as its search takes)",
            plan.name,
            plan.variants.len(),
            plan.blocks,
            plan.variants.len() * plan.blocks as usize,
        );
    } else {
        let _ = writeln!(
            o,
            "pelt experiment '{}': {} variant(s) x {} load level(s) x {} block(s) = {} runs, {}",
            plan.name,
            plan.variants.len(),
            plan.levels.len(),
            plan.blocks,
            plan.total_runs(),
            match plan.requests_per_run {
                // -n in args: the server's pace sets each run's length.
                Some(n) => format!(
                    "each until its {n} requests (how long that takes is the server's pace: the \
                     progress lines say the time left from the first run on)"
                ),
                None => format!(
                    "about {} of load",
                    Human(plan.run_length * plan.total_runs() as u32)
                ),
            }
        );
    }
    for block in 0..plan.blocks {
        let order: Vec<&str> = plan
            .order(block)
            .into_iter()
            .map(|v| plan.variants[v].name.as_str())
            .collect();
        let _ = writeln!(o, "  block {:>2}: {}", block + 1, order.join(", "));
    }
    let levels: Vec<String> = plan.levels.iter().map(|l| l.label()).collect();
    let load = match &plan.sweep {
        Some(slo) => format!("a capacity sweep under '{slo}' (pelt sweep)"),
        None => levels.join(", "),
    };
    if let Some(cmd) = &plan.setup {
        let _ = writeln!(o, "first, once: {cmd}");
    }
    let _ = writeln!(
        o,
        "each variant, in its turn: setup, ready check, then {load}, then teardown"
    );
    if let Some(cmd) = &plan.teardown {
        let _ = writeln!(o, "last, once, whatever happened: {cmd}");
    }
    for v in &plan.variants {
        let _ = writeln!(
            o,
            "  {}: {} {}",
            v.name, v.configs[0].targets[0].method, v.configs[0].targets[0].url
        );
    }
    o
}

/// Runs a variant's setup and waits until it serves.
fn bring_up(
    plan: &Plan,
    shell: &Shell<'_>,
    variant: &plan::Variant,
) -> std::result::Result<(), String> {
    if let Some(cmd) = &variant.setup {
        shell.run("setup", cmd, plan.command_timeout)?;
    }
    shell.wait_ready(
        variant.ready.as_deref(),
        &variant.ready_url,
        plan.ready_timeout,
    )
}

/// Where the plan's own commands run, what they see, and where their
/// output goes.
fn plan_shell<'a>(plan: &'a Plan, folder: &Path, log: &'a Path, cancel: &'a Cancel) -> Shell<'a> {
    Shell {
        dir: &plan.dir,
        log,
        env: vec![
            ("PELT_EXPERIMENT_DIR", absolute(folder)),
            // This pelt, for commands that start `pelt serve`.
            ("PELT", pelt_exe()),
        ],
        cancel,
    }
}

/// The same for a variant's commands, which are also told which variant
/// and block they are.
fn shell_for<'a>(
    plan: &'a Plan,
    folder: &Path,
    log: &'a Path,
    variant: &str,
    block: u32,
    cancel: &'a Cancel,
) -> Shell<'a> {
    let mut shell = plan_shell(plan, folder, log, cancel);
    shell.env.extend([
        ("PELT_VARIANT", variant.to_string()),
        ("PELT_BLOCK", (block + 1).to_string()),
    ]);
    shell
}

fn absolute(p: &Path) -> String {
    std::path::absolute(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

fn pelt_exe() -> String {
    std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "pelt".into())
}

/// A new folder for `plan` in the data directory's experiments/, named
/// by the time and the plan.
pub fn default_folder(plan: &Plan, places: &crate::Places) -> Result<PathBuf> {
    places.dated_folder("experiments", Some(&slug(&plan.name)))
}

/// Creates the folder (refusing one that holds anything) and keeps a copy
/// of the plan in it, without the secrets its runs use (see
/// [`plan_copy`]).
fn prepare_folder(folder: &Path, plan: &Plan) -> Result<()> {
    let cannot = |e: std::io::Error| {
        Error::other(format!(
            "cannot create '{}': {e}; choose another folder with -o",
            folder.display()
        ))
    };
    crate::results::refuse_non_empty(folder)?;
    std::fs::create_dir_all(folder.join("runs")).map_err(cannot)?;
    std::fs::create_dir_all(folder.join("logs")).map_err(cannot)?;
    std::fs::write(folder.join("plan.toml"), plan_copy(plan)).map_err(cannot)?;
    Ok(())
}

/// The plan's text with every secret value its runs send replaced by
/// `REDACTED`, as in the runs' own files: a token in a URL's query, an
/// `Authorization` or `Cookie` header in `args`, `-A`'s or a URL's
/// credentials, a login's form. The plan keeps its shape (a copy to read
/// and rerun once the secrets are given back), and the runs send the
/// real values.
fn plan_copy(plan: &Plan) -> String {
    let mut secrets = pelt_core::Redactor::default();
    for v in &plan.variants {
        for config in v.configs.iter().chain(v.sweep.as_ref().map(|(_, c)| c)) {
            secrets.learn(config);
        }
    }
    secrets.text(&plan.text)
}

#[cfg(test)]
mod tests {
    use super::plan::{Lower, RunWords};
    use super::*;
    use pelt_core::{Load, RunConfig, Stop, Target, Url};

    /// A program's own lowering: no flags, the plan's target and length.
    struct NoFlags;

    impl Lower for NoFlags {
        fn run(&self, w: &RunWords, load: Load) -> std::result::Result<RunConfig, String> {
            if !w.args.is_empty() {
                return Err("this program takes no args".into());
            }
            let url = Url::parse(w.url.as_deref().ok_or("a URL")?).map_err(|e| e.to_string())?;
            let stop = Stop {
                requests: None,
                duration: w.duration,
            };
            let mut c = RunConfig::new(vec![Target::get(url)], load, stop);
            c.warmup = w.warmup;
            c.threads = 1;
            Ok(c)
        }

        fn sweep(
            &self,
            _: &RunWords,
            _: &str,
        ) -> std::result::Result<(crate::SweepSpec, RunConfig), String> {
            Err("no sweeps here".into())
        }
    }

    /// Every file under `dir`, at any depth.
    fn files_under(dir: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            match path.is_dir() {
                true => files.extend(files_under(&path)),
                false => files.push(path),
            }
        }
        files
    }

    #[derive(Default)]
    struct Seen {
        runs: Vec<Vec<(String, String)>>,
        done: bool,
    }

    impl Observer for Seen {
        fn done(&mut self, _: &str, json: &str) {
            assert!(json.starts_with('{'), "{json}");
            self.done = true;
        }
    }

    impl ExperimentObserver for Seen {
        fn run_saved(&mut self, s: &RunSummary, file: &Path, tags: Vec<(String, String)>) {
            assert!(s.total.requests > 0 && file.exists(), "{}", file.display());
            self.runs.push(tags);
        }
    }

    #[test]
    fn a_program_runs_an_experiment_with_its_own_lowering() {
        let server = crate::loopback_server();
        // Issue 35 §6: the plan's copy in the folder kept this verbatim.
        let token = "T0KEN-IN-THE-PLAN-0c5e";
        let plan = format!(
            r#"
            name = "a/a"
            blocks = 6
            [load]
            url = "http://{}/?token={token}"
            connections = 2
            duration = "200ms"
            warmup = "0s"
            [[variant]]
            name = "a"
            [[variant]]
            name = "b"
            "#,
            server.local_addr()
        );
        let dir = tempfile::tempdir().unwrap();
        let plan = Plan::parse(&plan, dir.path(), &NoFlags).unwrap();
        assert!(schedule(&plan).contains("2 variant(s) x 1 load level(s) x 6 block(s) = 12 runs"));
        let folder = dir.path().join("out");
        let mut seen = Seen::default();
        let done = conduct(&plan, &folder, &Cancel::new(), &mut seen).unwrap();
        assert_eq!(seen.runs.len(), 12);
        assert!(seen.done);
        assert!(seen.runs[0].contains(&("experiment".into(), "a/a".into())));
        assert_eq!((done.stopped, done.interrupted), (None, false));
        // The same server twice: no material regression.
        assert!(!done.regressed.material, "{}", done.text);
        for name in ["report.txt", "report.json", "report.html", "plan.toml"] {
            assert!(folder.join(name).exists(), "{name}");
        }
        // The runs sent the token; no file in the folder holds it.
        let copy = std::fs::read_to_string(folder.join("plan.toml")).unwrap();
        assert!(copy.contains("?token=REDACTED"), "{copy}");
        for file in files_under(&folder) {
            let bytes = std::fs::read(&file).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(token),
                "{} holds the token",
                file.display()
            );
        }
        // Args this lowering refuses are the plan's error, before any run.
        let bad = "[load]\nurl = \"http://127.0.0.1:9/\"\nrate = 1\nargs = [\"-k\"]\n[[variant]]\nname = \"a\"";
        let e = Plan::parse(bad, dir.path(), &NoFlags)
            .unwrap_err()
            .to_string();
        assert!(e.contains("takes no args"), "{e}");
    }
}
