//! An experiment whose load is a capacity search (`[load] sweep = "SLO"`):
//! each variant, in each block, set up, swept (`pelt sweep`) and torn
//! down; then each variant's capacity against the first's, paired by
//! block, with the same statistics as every other verdict.

use super::plan::{slug, Plan};
use super::{bring_up, shell_for, Conducted, ExperimentObserver, Regressed};
use crate::{Cancel, Result};
use pelt_analyze::runs::Row;
use pelt_analyze::sweep::capacity_metric;
use pelt_report::sweep::CapacityExperiment;
use std::path::Path;

pub fn conduct(
    plan: &Plan,
    folder: &Path,
    slo: &str,
    cancel: &Cancel,
    observer: &mut dyn ExperimentObserver,
) -> Result<Conducted> {
    let blocks = plan.blocks as usize;
    let mut capacities = vec![vec![None; blocks]; plan.variants.len()];
    let mut problem = None;
    let total = blocks * plan.variants.len();
    let mut done = 0;
    'blocks: for block in 0..plan.blocks {
        for v in plan.order(block) {
            if cancel.is_stopped() {
                break 'blocks;
            }
            let variant = &plan.variants[v];
            done += 1;
            observer.say(&format!(
                "sweep {done}/{total}: block {}/{}, {}",
                block + 1,
                plan.blocks,
                variant.name
            ));
            let log = folder
                .join("logs")
                .join(format!("{}.log", slug(&variant.name)));
            let shell = shell_for(plan, folder, &log, &variant.name, block, cancel);
            let sweep_dir =
                folder
                    .join("sweeps")
                    .join(format!("b{:02}-{}", block + 1, slug(&variant.name)));
            let result = (|| -> Result<Option<f64>, String> {
                bring_up(plan, &shell, variant)?;
                observer.run_started(
                    &format!(
                        "block {}/{}, {}: sweeping",
                        block + 1,
                        plan.blocks,
                        variant.name
                    ),
                    &format!("sweep-b{:02}-{}", block + 1, slug(&variant.name)),
                    &variant.configs[0],
                );
                match &variant.sweep {
                    Some(s) => sweep(s, &sweep_dir, cancel).map_err(|e| e.to_string()),
                    None => Err("the plan has no sweep".to_string()),
                }
            })();
            if let Some(cmd) = &variant.teardown {
                if let Err(e) = shell.run("teardown", cmd, plan.command_timeout) {
                    observer.say(&format!(
                        "warning: variant '{}', block {}: {e}",
                        variant.name,
                        block + 1
                    ));
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
    crate::results::publish(folder, &reports, observer)?;
    let regressed = |material_only: bool| {
        rows.iter().any(|(_, row)| {
            matches!(&row.result, Ok(c) if matches!(c.verdict,
                pelt_analyze::Verdict::Regression { material } if material || !material_only))
        })
    };
    Ok(Conducted {
        regressed: Regressed {
            any: regressed(false),
            material: regressed(true),
        },
        text: reports.text,
        json: reports.json,
        stopped: problem,
        interrupted: cancel.is_stopped(),
    })
}

/// One sweep, saved in `dir`: the capacity it found, if any.
fn sweep(
    (spec, base): &(crate::SweepSpec, pelt_core::RunConfig),
    dir: &Path,
    cancel: &Cancel,
) -> Result<Option<f64>> {
    let mut spec = spec.clone();
    spec.folder = dir.to_path_buf();
    let (report, _) =
        crate::Sweep::new(spec, base.clone())?.conduct(cancel, &mut crate::Unobserved)?;
    Ok(report.capacity)
}
