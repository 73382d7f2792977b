//! `pelt k8s job` and `pelt slurm`: print what an engine needs to run a
//! sharded run (pelt-launch builds it; this only reads flags and times).

use crate::flags::UserError;
use crate::flags::{K8sArgs, K8sCommand, SlurmArgs};
use clap::Parser;
use pelt_launch::k8s::KubeOptions;
use pelt_launch::slurm::SlurmOptions;
use pelt_launch::Launch;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

fn user(e: pelt_launch::LaunchError) -> UserError {
    UserError(e.to_string())
}

/// Checks the run's arguments exactly as each shard's `pelt run --shard
/// I/N` will (clap, then every cross-flag rule of the configuration),
/// before anything is printed: a typo found here costs nothing, found in
/// the pods it costs the queue, the image pull and every pod.
fn check_run(launch: &Launch) -> Result<pelt_core::RunConfig, UserError> {
    launch.check().map_err(user)?;
    let mut argv: Vec<std::ffi::OsString> = vec!["pelt".into(), "run".into()];
    argv.extend(launch.run_args.iter().map(Into::into));
    // Shard 0 stands for all: the rules depend on the count only.
    argv.extend(["--shard".into(), format!("0/{}", launch.shards).into()]);
    let bad = |what: String| UserError(format!("the run's arguments after --: {what}"));
    if let Some(line) = crate::flags::other_tools_long_flag(&argv) {
        return Err(bad(line
            .strip_prefix("error: ")
            .unwrap_or(&line)
            .to_string()));
    }
    let cli = crate::flags::Cli::try_parse_from(&argv).map_err(|e| {
        let line = crate::flags::clap_line(&e, &argv);
        bad(line.strip_prefix("error: ").unwrap_or(&line).to_string())
    })?;
    let crate::flags::Command::Run(args) = cli.command else {
        return Err(bad(
            "give the arguments of pelt run, like -- http://10.0.0.5/ --rate 4000 -d 1m".into(),
        ));
    };
    let config = pelt_core::RunConfig::try_from(&*args).map_err(|UserError(e)| bad(e))?;
    // Each pod's pelt run binds these before any load and refuses, say,
    // 0.0.0.0 without --metrics-allow-remote (issue 35).
    let live = &args.live;
    for (flag, addr, remote, allow) in [
        (
            "--metrics",
            &live.metrics,
            live.metrics_allow_remote,
            "--metrics-allow-remote",
        ),
        (
            "--dashboard",
            &live.dashboard,
            live.dashboard_allow_remote,
            "--dashboard-allow-remote",
        ),
    ] {
        if let Some(addr) = addr {
            pelt_live::check_listen(flag, addr, remote, allow).map_err(|e| bad(e.to_string()))?;
        }
    }
    let r = &args.record;
    if r.location.history.is_none()
        && (!r.tags.is_empty() || r.label.is_some() || r.baseline.is_some())
    {
        // The shards run with PELT_NO_HISTORY=1: these would do nothing.
        return Err(bad(
            "the shards keep no history (PELT_NO_HISTORY=1), so --tag, --label and --baseline would do nothing there; leave them out and record the merged run with pelt report --merge --record --tag ...".into(),
        ));
    }
    if args.format == crate::flags::FormatArg::Hdrlog {
        return Err(bad(
            "--format hdrlog is for saved runs; leave it out (each shard writes its results file)"
                .into(),
        ));
    }
    Ok(config)
}

/// An RFC 3339 time in UTC.
fn rfc3339(unix: u64) -> String {
    pelt_core::UtcTime::from_unix(unix).to_string()
}

pub fn k8s(args: K8sArgs) -> Result<ExitCode, UserError> {
    let K8sCommand::Job(a) = args.what;
    check_run(&Launch {
        name: a.name.clone(),
        shards: a.shards,
        run_args: a.run.clone(),
        results_dir: a.results_dir.clone(),
    })?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let start_at = match &a.start_at {
        Some(t) => {
            let ns = pelt_core::civil::parse_time(t).ok_or_else(|| {
                UserError(format!(
                    "invalid --start-at '{}': give an RFC 3339 time like 2026-11-23T22:00:00Z or Unix seconds",
                    t.escape_debug()
                ))
            })?;
            let at = ns / 1_000_000_000;
            // Every pod would start late and send its backlog at once
            // (or be refused by its own pelt run): not a run.
            if at <= now {
                return Err(UserError(format!(
                    "--start-at {} has passed: the pods cannot start on time; give a time far enough ahead to apply the Job and schedule and pull every pod, like --start-at {}, or use --start-in SECONDS",
                    rfc3339(at),
                    now + 120
                )));
            }
            at
        }
        None if a.start_in == 0 => {
            return Err(UserError(
                "--start-in 0 starts measuring as the manifest is printed, before any pod exists: give the seconds to apply it and schedule and pull every pod, like --start-in 120".into(),
            ))
        }
        None => now + a.start_in,
    };
    let launch = Launch {
        name: a.name.clone(),
        shards: a.shards,
        run_args: a.run.clone(),
        results_dir: a.results_dir.clone(),
    };
    let opts = KubeOptions {
        image: a.image,
        cpu: a.cpu,
        memory: a.memory,
        claim: a.claim,
        anti_affinity: a.spread,
        run_id: a.run_id.unwrap_or_else(|| format!("{}-{start_at}", a.name)),
        // Unix seconds: an RFC 3339 time unquoted in YAML reads as a
        // timestamp, not the string an argument must be.
        start_at: start_at.to_string(),
    };
    let job = pelt_launch::k8s::job(&launch, &opts).map_err(user)?;
    crate::output::emit(
        format!(
            "# Measurement starts at {} (--start-at {start_at}).\n",
            rfc3339(start_at)
        )
        .as_bytes(),
    )?;
    crate::output::emit(pelt_launch::k8s::yaml(&job).as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

pub fn slurm(a: SlurmArgs) -> Result<ExitCode, UserError> {
    if a.start_in == 0 {
        return Err(UserError(
            "--start-in 0 starts measuring as the script starts, before srun has started any shard: give srun a few seconds, like --start-in 10".into(),
        ));
    }
    let launch = Launch {
        name: a.name,
        shards: a.shards,
        run_args: a.run,
        results_dir: a.results_dir,
    };
    let config = check_run(&launch)?;
    let opts = SlurmOptions {
        nodes: a.nodes,
        cpus_per_task: a.cpus_per_task,
        start_delay_s: a.start_in,
        pelt: a.pelt,
        time_limit: a.time,
    };
    let script = pelt_launch::slurm::script(&launch, &opts).map_err(user)?;
    // A limit that ends the job before the run: Slurm would stop every
    // shard with SIGTERM part way through, and the merge after it never
    // runs.
    let stop = config.effective_stop();
    if let (Some(Some(limit)), Some(measured)) = (
        pelt_launch::slurm::time_limit(&opts.time_limit),
        stop.duration,
    ) {
        let needed =
            u64::from(opts.start_delay_s) + (config.warmup + measured).as_secs_f64().ceil() as u64;
        if limit < needed {
            // A minute more for the shards to finish and the merge.
            let give = needed + 60;
            return Err(UserError(format!(
                "--time {} ends the job before the run does: it needs {} (--start-in {}s, then the run's {} of warm-up and measurement), and the merge after it; give --time {:02}:{:02}:{:02} or more",
                opts.time_limit,
                pelt_core::civil::span(needed * 1_000_000_000),
                opts.start_delay_s,
                pelt_core::civil::span((config.warmup + measured).as_nanos() as u64),
                give / 3600,
                give / 60 % 60,
                give % 60,
            )));
        }
    }
    crate::output::emit(script.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
