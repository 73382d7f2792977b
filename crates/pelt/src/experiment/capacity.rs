//! An experiment whose load is a capacity search (`[load] sweep = "SLO"`):
//! each variant, in each block, set up, swept (`pelt sweep`) and torn
//! down; then each variant's capacity against the first's, paired by
//! block, with the same statistics as every other verdict.

use super::plan::{slug, Plan};
use super::{bring_up, shell_for, Watch};
use crate::flags::ExperimentArgs;
use crate::UserError;
use pelt_analyze::runs::Row;
use pelt_analyze::sweep::capacity_metric;
use pelt_report::sweep::CapacityExperiment;
use std::path::Path;
use std::process::ExitCode;

pub fn command(
    plan: &Plan,
    args: &ExperimentArgs,
    folder: &Path,
    slo: &str,
    watch: &mut Watch,
) -> Result<ExitCode, UserError> {
    let blocks = plan.blocks as usize;
    let mut capacities = vec![vec![None; blocks]; plan.variants.len()];
    let mut problem = None;
    let total = blocks * plan.variants.len();
    let mut done = 0;
    'blocks: for block in 0..plan.blocks {
        for v in plan.order(block) {
            if crate::signals::interrupted() {
                break 'blocks;
            }
            let variant = &plan.variants[v];
            done += 1;
            if !args.quiet {
                eprintln!(
                    "pelt: sweep {done}/{total}: block {}/{}, {}",
                    block + 1,
                    plan.blocks,
                    variant.name
                );
            }
            let log = folder
                .join("logs")
                .join(format!("{}.log", slug(&variant.name)));
            let shell = shell_for(plan, folder, &log, &variant.name, block);
            let sweep_dir =
                folder
                    .join("sweeps")
                    .join(format!("b{:02}-{}", block + 1, slug(&variant.name)));
            let result = (|| -> Result<Option<f64>, String> {
                bring_up(plan, &shell, variant)?;
                watch.campaign.current = Some(format!(
                    "block {}/{}, {}: sweeping",
                    block + 1,
                    plan.blocks,
                    variant.name
                ));
                watch.views.campaign(&watch.campaign);
                match &variant.sweep {
                    Some(s) => sweep(s, &sweep_dir).map_err(|UserError(e)| e),
                    None => Err("the plan has no sweep".to_string()),
                }
            })();
            if let Some(cmd) = &variant.teardown {
                if let Err(e) = shell.run("teardown", cmd, plan.command_timeout) {
                    eprintln!(
                        "pelt: warning: variant '{}', block {}: {e}",
                        variant.name,
                        block + 1
                    );
                }
            }
            match result {
                Ok(capacity) => capacities[v][block as usize] = capacity,
                Err(e) => {
                    problem = Some(format!(
                        "variant '{}', block {}: {e}",
                        variant.name,
                        block + 1
                    ));
                    break 'blocks;
                }
            }
        }
    }
    let names: Vec<String> = plan.variants.iter().map(|v| v.name.clone()).collect();
    let rows: Vec<(String, Row)> = (1..names.len())
        .map(|v| {
            // Paired by block, over the blocks where both found a capacity.
            let (a, b): (Vec<f64>, Vec<f64>) = capacities[0]
                .iter()
                .zip(&capacities[v])
                .filter_map(|(a, b)| Some(((*a)?, (*b)?)))
                .unzip();
            let metric = capacity_metric();
            let result = pelt_analyze::compare_paired(&metric, &a, &b);
            (
                format!("{} vs {}", names[v], names[0]),
                Row {
                    metric,
                    result,
                    confounded: false,
                },
            )
        })
        .collect();
    let reports = CapacityExperiment {
        name: &plan.name,
        slo,
        variants: &names,
        capacities: &capacities,
        rows: &rows,
    }
    .render();
    pelt_campaign::results::write_reports(
        folder,
        &reports.text,
        &reports.markdown,
        &reports.html,
        &reports.json,
    )?;
    crate::emit(reports.text.as_bytes())?;
    watch.campaign.verdicts = reports.text.clone();
    watch.views.campaign(&watch.campaign);
    // As for fixed load levels: the live views end with the report.
    watch.views.close_campaign(reports.json.clone());
    if let Some(e) = problem {
        return Err(UserError(format!(
            "experiment stopped: {e}; the sweeps so far and the report are in {}",
            folder.display()
        )));
    }
    if crate::signals::interrupted() {
        return Ok(crate::signals::exit_code());
    }
    Ok(crate::output::fail_on(args.fail_on, |material_only| {
        rows.iter().any(|(_, row)| {
            matches!(&row.result, Ok(c) if matches!(c.verdict,
                pelt_analyze::Verdict::Regression { material } if material || !material_only))
        })
    }))
}

/// One sweep, saved in `dir`: the capacity it found, if any.
fn sweep(
    (spec, base): &(pelt_campaign::SweepSpec, pelt_core::RunConfig),
    dir: &Path,
) -> Result<Option<f64>, UserError> {
    let mut spec = spec.clone();
    spec.folder = dir.to_path_buf();
    let (report, _) = pelt_campaign::Sweep::new(spec, base.clone())?
        .conduct(&crate::signals::token(), &mut pelt_campaign::Unobserved)?;
    Ok(report.capacity)
}
