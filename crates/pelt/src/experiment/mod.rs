//! `pelt experiment plan.toml`: the before/after experiment people run by
//! hand (stop the server, start it with another config, load it, repeat),
//! done properly: variants interleaved in counterbalanced blocks, every
//! run saved, and a verdict per metric and load level from the runs as
//! the unit of replication (see pelt-analyze).

mod capacity;
pub(crate) mod plan;
mod shell;

use crate::flags::ExperimentArgs;
use crate::live::execute;
use crate::live::Watch;
use crate::output::fail_on;
use crate::UserError;
use pelt_analyze::experiment::{regressed, Outcome, RunRecord};
use pelt_campaign::Keep;
use pelt_core::Human;
use pelt_report::experiment::{Experiment, Reports};
use plan::{slug, Plan};
use shell::Shell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

pub fn command(args: ExperimentArgs) -> Result<ExitCode, UserError> {
    let mut plan = Plan::read(&args.plan)?;
    plan.latency = args.metric.into();
    if args.dry_run {
        // A dry run checks everything a real one would before it starts.
        if let Some(dir) = &args.out {
            pelt_campaign::results::refuse_non_empty(dir)?;
        }
        crate::emit(schedule(&plan).as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.live.tui {
        return Err(UserError(
            "--tui watches a single run; watch an experiment with --dashboard IP:PORT".into(),
        ));
    }
    // Before any run: the live views' ports and a history pelt cannot use
    // are input errors.
    let views = crate::live::Views::start(
        &crate::flags::LiveArgs {
            no_tui: true,
            ..args.live.clone()
        },
        &plan.variants[0].configs[0],
        &pelt_store::Redactor::default(),
        true,
    )?;
    let mut watch = Watch {
        campaign: pelt_live::Campaign::new(
            format!("experiment '{}'", plan.name),
            plan.total_runs(),
        ),
        views,
    };
    let mut history =
        crate::history::Recording::for_experiment(&args.location, args.no_history, &plan.name)?;
    let folder = match &args.out {
        Some(dir) => dir.clone(),
        None => default_folder(&plan)?,
    };
    prepare_folder(&folder, &args.plan)?;
    // From here a Ctrl-C, even during a setup or a ready wait, stops the
    // experiment through its teardown instead of killing pelt.
    crate::signals::install();
    // The plan's own setup and teardown bracket everything, whatever
    // happens in between.
    let log = folder.join("logs").join(PLAN_LOG);
    let shell = plan_shell(&plan, &folder, &log);
    let result = match &plan.setup {
        Some(cmd) => shell
            .run("plan's setup", cmd, plan.command_timeout)
            .map_err(|e| UserError(format!("experiment not started: {e}")))
            .and_then(|()| conduct_plan(&plan, &args, &folder, &mut watch, &mut history)),
        None => conduct_plan(&plan, &args, &folder, &mut watch, &mut history),
    };
    if let Some(cmd) = &plan.teardown {
        if let Err(e) = shell.run("plan's teardown", cmd, plan.command_timeout) {
            eprintln!("pelt: warning: {e}");
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
    args: &ExperimentArgs,
    folder: &Path,
    watch: &mut Watch,
    history: &mut Option<crate::history::Recording>,
) -> Result<ExitCode, UserError> {
    if let Some(slo) = &plan.sweep {
        return capacity::command(plan, args, folder, slo, watch);
    }
    let mut outcome = Outcome::new(plan.variants.len(), plan.levels.len(), folder.to_path_buf());
    let failure = conduct(plan, args, &mut outcome, history, watch).err();
    if let Some(e) = &failure {
        outcome.problems.push(e.clone());
    }
    let reports = write_reports(plan, &outcome)?;
    crate::emit(reports.text.as_bytes())?;
    watch.campaign.verdicts = reports.text.clone();
    watch.views.campaign(&watch.campaign);
    watch.views.close_campaign(reports.json.clone());
    if let Some(e) = failure {
        return Err(UserError(format!(
            "experiment stopped: {e}; the runs so far and the report are in {}",
            folder.display()
        )));
    }
    if outcome.interrupted {
        return Ok(crate::signals::exit_code());
    }
    Ok(fail_on(args.fail_on, |material_only| {
        regressed(&reports.comparisons, material_only)
    }))
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
        latency: plan.latency,
    }
    .render()
}

/// Renders the report and writes it, in every format, to the folder.
fn write_reports(plan: &Plan, outcome: &Outcome) -> Result<Reports, UserError> {
    let reports = render(plan, outcome);
    pelt_campaign::results::write_reports(
        &outcome.folder,
        &reports.text,
        &reports.markdown,
        &reports.html,
        &reports.json,
    )?;
    Ok(reports)
}

/// Runs every block; stops at the first setup or readiness failure, or at
/// Ctrl-C, always tearing the current variant down.
fn conduct(
    plan: &Plan,
    args: &ExperimentArgs,
    outcome: &mut Outcome,
    history: &mut Option<crate::history::Recording>,
    watch: &mut Watch,
) -> Result<(), String> {
    let total = plan.total_runs();
    let started = Instant::now();
    let logs = outcome.folder.join("logs");
    for block in 0..plan.blocks {
        for v in plan.order(block) {
            let variant = &plan.variants[v];
            let log = logs.join(format!("{}.log", slug(&variant.name)));
            let shell = shell_for(plan, &outcome.folder, &log, &variant.name, block);
            let result = measure_variant(
                plan, args, &shell, block, v, outcome, total, started, history, watch,
            );
            if let Some(cmd) = &variant.teardown {
                if let Err(e) = shell.run("teardown", cmd, plan.command_timeout) {
                    let problem = format!("variant '{}', block {}: {e}", variant.name, block + 1);
                    eprintln!("pelt: warning: {problem}");
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

/// Setup, readiness, then one run per load level.
#[allow(clippy::too_many_arguments)]
fn measure_variant(
    plan: &Plan,
    args: &ExperimentArgs,
    shell: &Shell<'_>,
    block: u32,
    v: usize,
    outcome: &mut Outcome,
    total: usize,
    started: Instant,
    history: &mut Option<crate::history::Recording>,
    watch: &mut Watch,
) -> Result<(), String> {
    let variant = &plan.variants[v];
    bring_up(plan, shell, variant)?;
    for (l, level) in plan.levels.iter().enumerate() {
        if crate::signals::interrupted() {
            outcome.interrupted = true;
            return Ok(());
        }
        let done = outcome.runs.len();
        if !args.quiet {
            // Time left from the pace so far (set-ups included), or from
            // the plan before the first run.
            let per_run = if done == 0 {
                plan.run_length
            } else {
                started.elapsed() / done as u32
            };
            eprintln!(
                "pelt: run {}/{total}: block {}/{}, {}, {} (about {} left)",
                done + 1,
                block + 1,
                plan.blocks,
                variant.name,
                level.label(),
                Human(round_s(per_run * (total - done) as u32)),
            );
        }
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
        watch.start(label, &run_id, &variant.configs[l]);
        let keep = Keep {
            until: None,
            out: Some(&file),
            save: false,
            ..Keep::default()
        };
        let summary = execute(
            variant.configs[l].clone(),
            args.quiet,
            keep,
            watch.views.feed(),
        )
        .map_err(|UserError(e)| e)?;
        if let Some(h) = history {
            let tags = [
                ("experiment", plan.name.clone()),
                ("variant", variant.name.clone()),
                ("level", level.label()),
                ("block", (block + 1).to_string()),
            ];
            h.record_tagged(
                &summary,
                Some(&file),
                tags.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            );
        }
        let mut record = RunRecord::new(block, v, l, file, &summary);
        record.values = pelt_analyze::latency::values(&summary, plan.latency);
        let interrupted = record.interrupted;
        let shown = watch.views.watched().then(|| summary.clone());
        outcome.add(record, summary);
        if let Some(summary) = shown {
            watch.finished(&summary, render(plan, outcome).text);
        }
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

/// The order of runs, for `--dry-run`.
fn schedule(plan: &Plan) -> String {
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
            "pelt experiment '{}': {} variant(s) x {} load level(s) x {} block(s) = {} runs, about {} of load",
            plan.name,
            plan.variants.len(),
            plan.levels.len(),
            plan.blocks,
            plan.total_runs(),
            Human(plan.run_length * plan.total_runs() as u32)
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
fn bring_up(plan: &Plan, shell: &Shell<'_>, variant: &plan::Variant) -> Result<(), String> {
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
fn plan_shell<'a>(plan: &'a Plan, folder: &Path, log: &'a Path) -> Shell<'a> {
    Shell {
        dir: &plan.dir,
        log,
        env: vec![
            ("PELT_EXPERIMENT_DIR", absolute(folder)),
            // This pelt, for commands that start `pelt serve`.
            ("PELT", pelt_exe()),
        ],
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
) -> Shell<'a> {
    let mut shell = plan_shell(plan, folder, log);
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

fn default_folder(plan: &Plan) -> Result<PathBuf, UserError> {
    let data = pelt_campaign::results::data_dir().ok_or_else(|| {
        UserError(
            "cannot tell where to save the experiment: give -o DIR, or set PELT_DATA_DIR or HOME"
                .into(),
        )
    })?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Ok(data.join("experiments").join(format!(
        "{}-{}",
        pelt_campaign::results::utc_stamp(now),
        slug(&plan.name)
    )))
}

/// Creates the folder (refusing one that holds anything) and keeps a copy
/// of the plan in it.
fn prepare_folder(folder: &Path, plan: &Path) -> Result<(), UserError> {
    let cannot = |e: std::io::Error| {
        UserError(format!(
            "cannot create '{}': {e}; choose another folder with -o",
            folder.display()
        ))
    };
    pelt_campaign::results::refuse_non_empty(folder)?;
    std::fs::create_dir_all(folder.join("runs")).map_err(cannot)?;
    std::fs::create_dir_all(folder.join("logs")).map_err(cannot)?;
    std::fs::copy(plan, folder.join("plan.toml")).map_err(cannot)?;
    Ok(())
}
