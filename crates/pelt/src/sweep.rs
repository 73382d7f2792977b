//! `pelt sweep URL --slo '...'`: the flags lowered into a sweep
//! (flags/campaign.rs), run by pelt-campaign, its report printed and
//! recorded, and its capacity judged against a baseline.

use crate::flags::UserError;
use crate::flags::{FormatArg, SweepArgs};
use crate::live::{Campaign, Watch};
use pelt_analyze::sweep::Outcome;
use pelt_campaign::Sweep;
use std::process::ExitCode;

pub fn command(args: SweepArgs) -> Result<ExitCode, UserError> {
    let record = &args.run.record;
    crate::history::baseline::check_spec(record.baseline.as_deref())?;
    let (spec, base) = args.spec()?;
    let sweep = Sweep::new(spec, base)?;
    // Opened before any load: a history pelt cannot use is bad input.
    let mut history = pelt_history::Recording::for_sweep(&record.spec())?.map(crate::output::said);
    if history.is_none() && record.baseline.is_some() {
        return Err(UserError(
            "--baseline reads the history, and PELT_NO_HISTORY is set: give --history PATH|URL, or drop --baseline".into(),
        ));
    }
    let first = sweep.first_config()?;
    let views = crate::live::start(
        &crate::flags::LiveArgs {
            no_tui: true,
            ..args.run.live.clone()
        },
        &first,
        &record.redactor(),
        true,
    )?;
    let mut watch = Watch {
        campaign: pelt_live::Campaign::new(
            format!(
                "sweep of {}",
                pelt_campaign::sweep::target_of(&first, &sweep.spec().secrets)
            ),
            0,
        ),
        views,
    };
    let id = sweep.id();
    let (report, reports) = sweep.conduct(
        &crate::signals::token(),
        &mut Campaign {
            watch: Some(&mut watch),
            prefix: "pelt: ",
            quiet: args.run.quiet,
            history: history.as_mut().map(|h| (h, id.clone())),
        },
    )?;
    if !args.run.quiet {
        eprintln!(
            "pelt: the sweep's steps and reports are in {}",
            sweep.spec().folder.display()
        );
    }
    // The sweep's row: the step that set the capacity stands for it.
    let recorded = match (history.as_mut(), sweep.capacity_step(&report)) {
        (Some(h), Some(file)) => match pelt_campaign::results::load(&file) {
            Ok(step) => Some((
                h.record_sweep(&step, &file, &id, report.capacity, reports.json.clone())
                    .map_err(|e| crate::output::not_recorded("the sweep", &e))
                    .ok(),
                step,
            )),
            Err(e) => {
                eprintln!("pelt: warning: the sweep was not recorded in the history: {e}");
                None
            }
        },
        _ => None,
    };
    crate::output::emit(
        match args.run.format {
            FormatArg::Json => &reports.json,
            FormatArg::Markdown => &reports.markdown,
            FormatArg::Html => &reports.html,
            _ => &reports.text,
        }
        .as_bytes(),
    )?;
    if let (Some(spec), Some((id, step)), Some(h)) = (&record.baseline, recorded, &mut history) {
        if report.outcome != Outcome::Interrupted {
            let judged = crate::history::baseline::after_sweep(
                h.store(),
                spec,
                &step,
                id,
                report.capacity,
                record.fail_on,
            )?;
            if judged != ExitCode::SUCCESS {
                return Ok(judged);
            }
        }
    }
    Ok(match report.outcome {
        Outcome::Interrupted => crate::signals::exit_code(),
        Outcome::Found | Outcome::AtMaxRate | Outcome::Levels => ExitCode::SUCCESS,
        Outcome::MaxTime if report.last_pass.is_some() => ExitCode::SUCCESS,
        _ => {
            eprintln!("pelt: {}", report.headline());
            ExitCode::FAILURE
        }
    })
}
