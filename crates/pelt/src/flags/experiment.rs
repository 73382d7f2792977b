//! A plan's `args` are `pelt run` (or `pelt sweep`) flags: lowered here,
//! as the command line's own, into the runs pelt-campaign's experiment
//! makes ([`PlanFlags`], its [`Lower`]).

use super::UserError;
use super::{FormatArg, RunArgs, SweepArgs};
use pelt_campaign::experiment::plan::{Lower, RunWords};
use pelt_campaign::SweepSpec;
use pelt_core::{Load, RunConfig};

/// Lowers a plan's words as the command line lowers its flags.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanFlags;

impl Lower for PlanFlags {
    fn run(&self, words: &RunWords, load: Load) -> Result<RunConfig, String> {
        run(words, load).map_err(|UserError(e)| e)
    }

    fn sweep(&self, words: &RunWords, slo: &str) -> Result<(SweepSpec, RunConfig), String> {
        sweep(words, slo).map_err(|UserError(e)| e)
    }
}

/// `words.args` parsed as `pelt run`'s or `pelt sweep`'s flags (`T`)
/// would be: they are the user's own words. The target comes from the
/// plan, so no URL is required here.
fn flags<T: clap::Args + clap::FromArgMatches>(
    words: &RunWords,
    command: &'static str,
) -> Result<T, UserError> {
    let said = |e: clap::Error| {
        let rendered = e.render().to_string();
        UserError(format!(
            "{} (in the flags {})",
            rendered
                .lines()
                .next()
                .unwrap_or("invalid flags")
                .trim_start_matches("error: "),
            words.args.join(" ")
        ))
    };
    let matches = T::augment_args(clap::Command::new(command))
        .mut_arg("url", |a| {
            a.required_unless_present(clap::builder::Resettable::<clap::Id>::Reset)
        })
        .no_binary_name(true)
        .try_get_matches_from(&words.args)
        .map_err(said)?;
    T::from_arg_matches(&matches).map_err(said)
}

/// The plan's target in `run`'s flags: given there, it would be twice.
fn aim(words: &RunWords, run: &mut RunArgs) -> Result<(), UserError> {
    if run.url.is_some() || run.targets_file.is_some() || run.scenario.is_some() {
        return Err(UserError(
            "a URL, -f or --scenario has no place in args: give url = \"...\", targets = \"file\" or scenario = \"file.toml\" in [load] or the variant (paths from the plan's folder)".into(),
        ));
    }
    run.url = words.url.clone();
    run.targets_file = words.targets.clone();
    run.scenario = words.scenario.clone();
    Ok(())
}

/// What [load] sets must not be in args too: which would win?
fn given_once(words: &RunWords, args: &RunArgs) -> Result<(), UserError> {
    if args.warmup.is_some() {
        return Err(UserError(
            "--warmup has no place in args: give warmup = \"...\" in [load]".into(),
        ));
    }
    if args.threads.is_some() && words.threads.is_some() {
        return Err(UserError(
            "the threads are given twice: drop -t from args, or threads from [load]".into(),
        ));
    }
    if args.duration.is_some() && words.duration.is_some() {
        return Err(UserError(
            "the length is given twice: drop -d from args, or duration from [load]".into(),
        ));
    }
    Ok(())
}

/// One run under `load`, as `pelt run` would make it from the same words,
/// refusing flags that mean nothing inside an experiment.
fn run(words: &RunWords, load: Load) -> Result<RunConfig, UserError> {
    let mut args: RunArgs = flags(words, "run")?;
    refuse_in_runs(&args)?;
    if args.rate.is_some() || args.stages.is_some() || args.connections.is_some() {
        return Err(UserError(
            "--rate, --stages and -c have no place in args: give the load in [load] (rate, connections)".into(),
        ));
    }
    aim(words, &mut args)?;
    given_once(words, &args)?;
    let mut config = args.config_with(Some(load))?;
    // [load]'s length, warm-up and threads, by type.
    if let Some(d) = words.duration {
        config.stop.duration = Some(d);
    }
    config.warmup = words.warmup;
    if let Some(t) = words.threads {
        config.threads = t as usize;
    }
    config
        .validate()
        .map_err(|e| UserError(super::config_error(&e)))?;
    Ok(config)
}

/// The variant's sweep: `pelt sweep`'s flags from the args, [load]'s
/// length, warm-up, threads and pool, under `slo`.
fn sweep(words: &RunWords, slo: &str) -> Result<(SweepSpec, RunConfig), UserError> {
    let mut args: SweepArgs = flags(words, "sweep")?;
    if args.run.out.is_some() || args.run.format != FormatArg::Text {
        return Err(UserError(
            "-o and --format have no place in an experiment's args: every sweep is saved in the experiment's folder".into(),
        ));
    }
    if args.run.connections.is_some() {
        return Err(UserError(
            "-c has no place in args: give the pool as connections = N in [load]".into(),
        ));
    }
    aim(words, &mut args.run)?;
    given_once(words, &args.run)?;
    args.slo = Some(slo.to_string());
    let confirm_given = args.confirm.is_some();
    // Each block's sweep gets a folder of its own (the experiment sets it).
    args.run.out = Some(std::env::temp_dir().join("pelt-plan-check-never-created"));
    let (mut spec, mut base) = args.spec()?;
    if let Some(d) = words.duration {
        spec.step = d;
        if !confirm_given {
            // `pelt sweep`'s default: three steps' length.
            spec.confirm = d * 3;
        }
    }
    spec.warmup = words.warmup;
    if let Some(c) = words.pool {
        spec.pool = c;
    }
    if let Some(t) = words.threads {
        base.threads = t as usize;
    }
    Ok((spec, base))
}

/// Flags that mean nothing inside an experiment's runs.
fn refuse_in_runs(args: &RunArgs) -> Result<(), UserError> {
    if args.out.is_some() || args.format != FormatArg::Text || !args.asserts.is_empty() {
        return Err(UserError(
            "-o, --format and --assert have no place in an experiment's args: every run is saved in the experiment's folder and the report covers them all".into(),
        ));
    }
    if !args.abort_on.is_empty() {
        // A run cut short is left out of the verdicts, as an interrupted
        // one is: the block would be lost without a word.
        return Err(UserError(
            "--abort-on has no place in an experiment's args: every run must last its duration to be compared; bring each variant up healthy (its ready check) instead".into(),
        ));
    }
    if args.until.is_some() {
        // Runs of one block must be alike: a stop that depends on the
        // run's own noise would give each variant its own length.
        return Err(UserError(
            "--until has no place in an experiment's args: every run needs the same length; give -d".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pelt_campaign::experiment::plan::{Plan, DEFAULT_BLOCKS, DEFAULT_WARMUP};
    use std::path::Path;
    use std::time::Duration;

    const TWO: &str = r#"
        name = "two"
        blocks = 6
        [load]
        url = "http://127.0.0.1:9/"
        rate = [100, 200]
        connections = 20
        duration = "2s"
        [[variant]]
        name = "a"
        [[variant]]
        name = "b"
        url = "http://127.0.0.1:9/?delay=2ms"
        args = ["--timeout", "1s"]
    "#;

    #[test]
    fn a_plan_builds_every_runs_config() {
        let p = Plan::parse(TWO, Path::new("."), &PlanFlags).unwrap();
        assert_eq!(p.levels.len(), 2);
        assert_eq!(p.total_runs(), 6 * 2 * 2);
        let b = &p.variants[1];
        assert_eq!(b.configs[1].load.rate(), Some(200.0));
        assert_eq!(b.configs[1].load.connections(), 20);
        assert_eq!(b.configs[0].http.timeout, Duration::from_secs(1));
        assert_eq!(
            p.variants[0].configs[0].http.timeout,
            pelt_core::config::DEFAULT_TIMEOUT
        );
        assert_eq!(b.configs[0].warmup, DEFAULT_WARMUP);
        assert!(b.configs[0].targets[0]
            .url
            .to_string()
            .contains("delay=2ms"));
        assert_eq!(p.run_length, Duration::from_secs(3));
    }

    #[test]
    fn targets_files_are_found_next_to_the_plan() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("urls.txt"),
            "http://127.0.0.1:9/a\nhttp://127.0.0.1:9/b POST x=1\n",
        )
        .unwrap();
        let plan = "[load]\ntargets = \"urls.txt\"\nconnections = [1, 2]\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nurl = \"http://127.0.0.1:9/only\"";
        let p = Plan::parse(plan, dir.path(), &PlanFlags).unwrap();
        assert_eq!(p.blocks, DEFAULT_BLOCKS);
        let a = &p.variants[0].configs[1];
        assert_eq!(a.targets.len(), 2);
        assert_eq!(a.targets[1].method, "POST");
        assert_eq!(a.load.connections(), 2);
        // A variant's own URL replaces the plan's targets file.
        assert_eq!(p.variants[1].configs[0].targets.len(), 1);
        assert_eq!(p.variants[0].ready_url, "http://127.0.0.1:9/a");
    }

    #[test]
    fn blocks_are_counterbalanced() {
        let p = Plan::parse(TWO, Path::new("."), &PlanFlags).unwrap();
        let orders: Vec<Vec<usize>> = (0..4).map(|b| p.order(b)).collect();
        assert_eq!(orders, [vec![0, 1], vec![1, 0], vec![1, 0], vec![0, 1]]);
        // Three variants: each first and last equally often over 6 blocks.
        let mut three = p.clone();
        three.variants.push(three.variants[0].clone());
        let mut first = [0; 3];
        let mut last = [0; 3];
        for b in 0..6 {
            let o = three.order(b);
            first[o[0]] += 1;
            last[o[2]] += 1;
        }
        assert_eq!(first, [2, 2, 2]);
        assert_eq!(last, [2, 2, 2]);
    }

    #[test]
    fn mistakes_are_one_line_with_advice() {
        for (plan, hint) in [
            ("[load]\nrate = 1\nurl = \"http://h/\"", "no variants"),
            ("blocks = 3\n[load]\nrate = 1\nurl = \"http://h/\"\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"", "at least 6 blocks"),
            ("[load]\nurl = \"http://h/\"\n[[variant]]\nname = \"a\"", "give rate = R"),
            ("[load]\nrate = 1\n[[variant]]\nname = \"a\"", "has no target"),
            ("[load]\nrate = 1\nurl = \"http://h/\"\nargs = [\"--bogus\"]\n[[variant]]\nname = \"a\"", "--bogus"),
            ("[load]\nrate = 1\nurl = \"http://h/\"\nargs = [\"-o\", \"x\"]\n[[variant]]\nname = \"a\"", "no place"),
            ("[load]\nrate = 1\nurl = \"http://h/\"\nduration = \"5\"\n[[variant]]\nname = \"a\"", "a unit is missing"),
            ("blocks = 6\n[load]\nrate = 1\nurl = \"http://h/\"\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"a\"", "two variants are named"),
            ("blocks = 6\n[load]\nrate = 1\nurl = \"http://h/\"\n[[variant]]\nname = \"a b\"\n[[variant]]\nname = \"a_b\"", "alike once made safe"),
            ("[load]\nrate = [100, 100]\nurl = \"http://h/\"\n[[variant]]\nname = \"a\"", "listed twice"),
            ("[load]\nrate = 1\nurl = \"http://h/\"\nspeed = 3\n[[variant]]\nname = \"a\"", "line 4"),
            ("[load]\nrate = [1, 2]\nconnections = [1, 2]\nurl = \"http://h/\"\n[[variant]]\nname = \"a\"", "connection pool"),
        ] {
            let e = Plan::parse(plan, Path::new("."), &PlanFlags).unwrap_err().to_string();
            assert!(e.contains(hint), "{plan}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }

    #[test]
    fn a_sweeps_words_keep_its_confirmation_and_the_plans_length() {
        let plan = |args: &str| {
            format!(
                "[load]\nurl = \"http://127.0.0.1:9/\"\nsweep = \"p99 < 50ms\"\nduration = \"2s\"\nconnections = 30\nargs = [{args}]\n[[variant]]\nname = \"a\""
            )
        };
        let p = Plan::parse(
            &plan("\"--confirm\", \"500ms\""),
            Path::new("."),
            &PlanFlags,
        )
        .unwrap();
        let (spec, _) = p.variants[0].sweep.as_ref().unwrap();
        assert_eq!(spec.step, Duration::from_secs(2));
        assert_eq!(spec.confirm, Duration::from_millis(500));
        assert_eq!(spec.pool, 30);
        let p = Plan::parse(&plan(""), Path::new("."), &PlanFlags).unwrap();
        let (spec, _) = p.variants[0].sweep.as_ref().unwrap();
        assert_eq!(spec.confirm, Duration::from_secs(6));
    }
}
