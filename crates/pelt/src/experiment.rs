//! `pelt experiment plan.toml`: the plan read (its `args` lowered as this
//! command line's flags, flags/experiment.rs), conducted by pelt-campaign
//! with the live views and the history watching, its report printed.

use crate::flags::UserError;
use crate::flags::{ExperimentArgs, PlanFlags};
use crate::live::{Campaign, Watch};
use crate::output::fail_on;
use pelt_campaign::experiment::plan::Plan;
use pelt_campaign::experiment::{conduct, default_folder, schedule, ExperimentObserver};
use std::process::ExitCode;

pub fn command(args: ExperimentArgs) -> Result<ExitCode, UserError> {
    let mut plan = Plan::read(&args.plan, &PlanFlags)?;
    plan.latency = args.metric.into();
    if args.dry_run {
        // A dry run checks everything a real one would before it starts.
        if let Some(dir) = &args.out {
            pelt_campaign::results::refuse_non_empty(dir)?;
        }
        crate::output::emit(schedule(&plan).as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.live.tui {
        return Err(UserError(
            "--tui watches a single run; watch an experiment with --dashboard IP:PORT".into(),
        ));
    }
    // Before any run: the live views' ports and a history pelt cannot use
    // are input errors.
    let views = crate::live::start(
        &crate::flags::LiveArgs {
            no_tui: true,
            ..args.live.clone()
        },
        &plan.variants[0].configs[0],
        &pelt_core::Redactor::default(),
        true,
    )?;
    let mut watch = Watch {
        campaign: pelt_live::Campaign::new(
            format!("experiment '{}'", plan.name),
            plan.total_runs(),
        ),
        views,
    };
    let places = crate::flags::places();
    let mut history = pelt_history::Recording::for_experiment(
        args.location.history.as_deref(),
        args.no_history,
        &places,
        &plan.name,
    )?
    .map(crate::output::said);
    let folder = match &args.out {
        Some(dir) => dir.clone(),
        None => default_folder(&plan, &places)?,
    };
    // From here a Ctrl-C, even during a setup or a ready wait, stops the
    // experiment through its teardown instead of killing pelt.
    let token = crate::signals::token();
    let conducted = conduct(
        &plan,
        &folder,
        &token,
        &mut Recorded {
            campaign: Campaign {
                watch: Some(&mut watch),
                prefix: "pelt: ",
                quiet: args.quiet,
                history: None,
            },
            history: history.as_mut(),
        },
    )?;
    crate::output::emit(conducted.text.as_bytes())?;
    if let Some(e) = conducted.stopped {
        let what = if plan.sweep.is_some() {
            "sweeps"
        } else {
            "runs"
        };
        return Err(UserError(format!(
            "experiment stopped: {e}; the {what} so far and the report are in {}",
            folder.display()
        )));
    }
    if conducted.interrupted {
        return Ok(crate::signals::exit_code());
    }
    let r = conducted.regressed;
    Ok(fail_on(args.fail_on, |material_only| {
        if material_only {
            r.material
        } else {
            r.any
        }
    }))
}

/// The command line's view of an experiment, with each run recorded in
/// the history, tagged.
struct Recorded<'a> {
    campaign: Campaign<'a>,
    history: Option<&'a mut pelt_history::Recording>,
}

impl pelt_campaign::Observer for Recorded<'_> {
    fn say(&mut self, line: &str) {
        self.campaign.say(line);
    }

    fn run_started(&mut self, label: &str, run_id: &str, config: &pelt_core::RunConfig) {
        self.campaign.run_started(label, run_id, config);
    }

    fn run_observer(&mut self) -> Box<dyn pelt_campaign::RunObserver> {
        self.campaign.run_observer()
    }

    fn run_finished(&mut self, summary: &pelt_core::RunSummary, so_far: String) {
        self.campaign.run_finished(summary, so_far);
    }

    fn done(&mut self, text: &str, json: &str) {
        self.campaign.done(text, json);
    }
}

impl ExperimentObserver for Recorded<'_> {
    fn run_saved(
        &mut self,
        summary: &pelt_core::RunSummary,
        file: &std::path::Path,
        tags: Vec<(String, String)>,
    ) {
        if let Some(Err(e)) = self
            .history
            .as_mut()
            .map(|h| h.record_tagged(summary, Some(file), tags))
        {
            crate::output::not_recorded("an experiment's run", &e);
        }
    }
}
