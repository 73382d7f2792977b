//! The experiment plan: a TOML file read into plain data, checked whole
//! before any command runs or any load is sent.

use crate::flags::{FormatArg, RunArgs, SweepArgs};
use crate::UserError;
pub use pelt_analyze::experiment::{Level, LevelKind};
use pelt_campaign::{Sweep, SweepSpec};
use pelt_core::{parse_duration, Load, RunConfig};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Blocks when the plan does not say: enough to resolve a 5 % change at
/// typical run-to-run noise.
pub const DEFAULT_BLOCKS: u32 = 10;
/// Fewest blocks that give a 95 % Wilcoxon interval (2/2^6 = 3.1 %).
pub const MIN_BLOCKS: u32 = 6;
/// Most blocks: far past any useful precision, and keeps the plan's list
/// of runs (made up front) small.
pub const MAX_BLOCKS: u32 = 1000;
/// Largest plan file: plans are a page of TOML; the cap keeps
/// `pelt experiment /dev/zero` from reading forever.
const MAX_PLAN_BYTES: u64 = 1 << 20;
/// Warm-up of each run when the plan does not say: every run discards
/// its start (cold caches, connection set-up).
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(1);
/// How long a variant may take to become ready.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a setup or teardown command may take.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// `plan.toml` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    name: Option<String>,
    blocks: Option<u32>,
    ready_timeout: Option<String>,
    command_timeout: Option<String>,
    setup: Option<String>,
    teardown: Option<String>,
    load: LoadFile,
    #[serde(default, rename = "variant")]
    variants: Vec<VariantFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LoadFile {
    url: Option<String>,
    targets: Option<PathBuf>,
    rate: Option<OneOrMany<f64>>,
    connections: Option<OneOrMany<u32>>,
    duration: Option<String>,
    warmup: Option<String>,
    threads: Option<u32>,
    /// A capacity search per variant and block under this SLO, instead
    /// of fixed load levels.
    sweep: Option<String>,
    #[serde(default)]
    args: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VariantFile {
    name: String,
    setup: Option<String>,
    ready: Option<String>,
    ready_url: Option<String>,
    teardown: Option<String>,
    url: Option<String>,
    targets: Option<PathBuf>,
    #[serde(default)]
    args: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T: Clone> OneOrMany<T> {
    fn to_vec(&self) -> Vec<T> {
        match self {
            OneOrMany::One(v) => vec![v.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// A configuration under test and the shell commands that bring it up
/// and down.
#[derive(Debug, Clone)]
pub struct Variant {
    pub name: String,
    pub setup: Option<String>,
    /// A command that succeeds once the variant serves.
    pub ready: Option<String>,
    /// A URL that answers (any HTTP status) once the variant serves.
    pub ready_url: String,
    pub teardown: Option<String>,
    /// One `RunConfig` per load level, in the order of [`Plan::levels`].
    pub configs: Vec<RunConfig>,
    /// With `[load] sweep`: this variant's sweep (its folder is set per
    /// block) and the run its steps start from.
    pub sweep: Option<(SweepSpec, RunConfig)>,
}

/// A checked plan.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub blocks: u32,
    pub levels: Vec<Level>,
    /// The first is the baseline every other is compared with.
    pub variants: Vec<Variant>,
    /// Where commands run and relative paths start: the plan's folder.
    pub dir: PathBuf,
    pub ready_timeout: Duration,
    pub command_timeout: Duration,
    /// Warm-up plus measurement of one run.
    pub run_length: Duration,
    /// `[load] sweep`: the SLO each variant's capacity is searched under.
    pub sweep: Option<String>,
    /// The plan's own commands, once before the first variant's setup and
    /// once after everything (a backend all variants share, say).
    pub setup: Option<String>,
    pub teardown: Option<String>,
    /// `--metric`: the latency the verdicts' percentiles compare.
    pub latency: pelt_analyze::latency::Latency,
}

impl Plan {
    /// Reads and checks `path`: every run's configuration is built here,
    /// so a mistake in the plan is found before any command runs.
    pub fn read(path: &Path) -> Result<Plan, UserError> {
        let cannot = |e: &dyn std::fmt::Display| {
            UserError(format!(
                "cannot read plan '{}': {e}; check the path",
                path.display()
            ))
        };
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| {
                use std::io::Read;
                f.take(MAX_PLAN_BYTES + 1).read_to_end(&mut bytes)
            })
            .map_err(|e| cannot(&e))?;
        if bytes.len() as u64 > MAX_PLAN_BYTES {
            return Err(UserError(format!(
                "plan '{}' is larger than 1 MiB; give a plan file (TOML, see pelt experiment --help)",
                path.display()
            )));
        }
        let text = String::from_utf8(bytes).map_err(|e| cannot(&e))?;
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        Plan::parse(&text, &dir).map_err(|e| UserError(format!("{}: {}", path.display(), e.0)))
    }

    /// Parses plan text whose relative paths start at `dir`.
    pub fn parse(text: &str, dir: &Path) -> Result<Plan, UserError> {
        let file: PlanFile = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
        let blocks = file.blocks.unwrap_or(DEFAULT_BLOCKS);
        let bad = |m: String| Err(UserError(m));
        if file.variants.is_empty() {
            return bad(
                "no variants; add at least one [[variant]] with a name (and setup/teardown commands if it needs them)".into(),
            );
        }
        if file.variants.len() > 1 && blocks < MIN_BLOCKS {
            return bad(format!(
                "blocks = {blocks}: comparing variants needs at least {MIN_BLOCKS} blocks for a 95% interval; set blocks = {MIN_BLOCKS} or more (10 is the default)"
            ));
        }
        if blocks == 0 {
            return bad("blocks = 0: set blocks = 1 or more".into());
        }
        if blocks > MAX_BLOCKS {
            return bad(format!(
                "blocks = {blocks}: at most {MAX_BLOCKS}; set blocks = 10 (the default) or a few dozen"
            ));
        }
        let mut names = std::collections::HashSet::new();
        for v in &file.variants {
            if v.name.trim().is_empty() || v.name.contains(['/', '\\', '\n']) {
                return bad(format!(
                    "variant name '{}' must be a non-empty name without slashes or line breaks",
                    v.name.escape_debug()
                ));
            }
            // Runs and logs are files named after the variant.
            if !names.insert(slug(&v.name)) {
                return bad(format!(
                    "two variants are named '{}' (or alike once made safe for file names: letters, digits, - _ . are kept); give each a different name",
                    v.name
                ));
            }
        }
        let load = &file.load;
        if load.sweep.is_some()
            && (load.rate.is_some() || matches!(load.connections, Some(OneOrMany::Many(_))))
        {
            return bad("[load]: with sweep, each sweep chooses its rates: drop rate (give args = [\"--start-rate\", \"500\", \"--max-rate\", \"20000\"] to bound it); connections may only be the pool, one number".into());
        }
        let sweep_level = load.sweep.as_ref().map(|_| OneOrMany::One(100.0));
        let (kind, values) = match (sweep_level.as_ref().or(load.rate.as_ref()), &load.connections) {
            (Some(_), Some(OneOrMany::Many(_))) => {
                return bad("[load]: with a rate, connections is the connection pool and must be one number; give a list of rates instead, like rate = [500, 1000, 2000]".into())
            }
            (Some(r), _) => (LevelKind::Rate, r.to_vec()),
            (None, Some(c)) => (
                LevelKind::Connections,
                c.to_vec().into_iter().map(f64::from).collect(),
            ),
            (None, None) => {
                return bad("[load]: give rate = R (open loop, for latency) or connections = N (closed loop); a list of either makes load levels".into())
            }
        };
        if values.is_empty() {
            return bad("[load]: the list of load levels is empty; give at least one value".into());
        }
        let levels: Vec<Level> = values
            .into_iter()
            .map(|value| Level { kind, value })
            .collect();
        for (i, l) in levels.iter().enumerate() {
            if levels[..i].iter().any(|o| o.value == l.value) {
                return bad(format!(
                    "[load]: the load level {} is listed twice; list each level once (blocks repeat them)",
                    l.label()
                ));
            }
        }
        let warmup = file_duration(&load.warmup, "[load] warmup")?.unwrap_or(DEFAULT_WARMUP);
        let mut variants = Vec::new();
        for v in &file.variants {
            let url = v.url.as_ref().or(load.url.as_ref());
            let targets = v.targets.as_ref().or(load.targets.as_ref());
            if url.is_none() && targets.is_none() {
                return bad(format!(
                    "variant '{}' has no target: set url = \"http://...\" (or targets = \"file\") in [load] or in the variant",
                    v.name
                ));
            }
            let words = Words {
                load,
                variant: v,
                url,
                targets,
                dir,
                warmup,
            };
            let sweep =
                match &load.sweep {
                    Some(slo) => Some(words.sweep(slo).map_err(|e| {
                        UserError(format!("variant '{}', its sweep: {}", v.name, e.0))
                    })?),
                    None => None,
                };
            let configs = match &sweep {
                // The sweep's first step stands for its load.
                Some((spec, base)) => vec![Sweep::new(spec.clone(), base.clone())?.first_config()?],
                None => levels
                    .iter()
                    .map(|level| {
                        words.run(level).map_err(|e| {
                            UserError(format!(
                                "variant '{}' at {}: {}",
                                v.name,
                                level.label(),
                                e.0
                            ))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            };
            let ready_url = match (&v.ready_url, &configs[0].targets[..]) {
                (Some(u), _) => u.clone(),
                (None, [first, ..]) => first.url.to_string(),
                (None, []) => unreachable!("validated configs have a target"),
            };
            pelt_core::Url::parse(&ready_url)
                .map_err(|e| UserError(format!("variant '{}': ready_url: {e}", v.name)))?;

            variants.push(Variant {
                name: v.name.clone(),
                setup: v.setup.clone(),
                ready: v.ready.clone(),
                ready_url,
                teardown: v.teardown.clone(),
                configs,
                sweep,
            });
        }
        // With -n only, the length is unknown until run: guess the default.
        let measured = variants[0].configs[0]
            .effective_stop()
            .duration
            .unwrap_or(pelt_core::config::DEFAULT_DURATION);
        Ok(Plan {
            name: file.name.unwrap_or_else(|| "experiment".into()),
            blocks,
            levels,
            variants,
            dir: dir.to_path_buf(),
            ready_timeout: timeout(&file.ready_timeout, "ready_timeout")?
                .unwrap_or(DEFAULT_READY_TIMEOUT),
            command_timeout: timeout(&file.command_timeout, "command_timeout")?
                .unwrap_or(DEFAULT_COMMAND_TIMEOUT),
            run_length: warmup + measured,
            sweep: load.sweep.clone(),
            setup: file.setup,
            teardown: file.teardown,
            latency: Default::default(),
        })
    }

    /// Runs in the whole experiment.
    pub fn total_runs(&self) -> usize {
        self.blocks as usize * self.variants.len() * self.levels.len()
    }

    /// The order of variants in block `b`: rotated by one each block and
    /// reversed every other cycle (AB, BA, AB, ... for two), so each
    /// variant runs first, last and after each other variant equally
    /// often and slow drifts of the machine fall on all of them alike.
    pub fn order(&self, block: u32) -> Vec<usize> {
        let k = self.variants.len();
        let shift = block as usize % k;
        let mut order: Vec<usize> = (0..k).map(|i| (i + shift) % k).collect();
        if (block as usize / k) % 2 == 1 {
            order.reverse();
        }
        order
    }
}

/// A name safe in a file name.
pub fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.trim_matches('.').to_string()
}

/// What a plan says about one variant's runs: its target, [load]'s
/// length, warm-up, threads and pool, and every `args`.
struct Words<'a> {
    load: &'a LoadFile,
    variant: &'a VariantFile,
    url: Option<&'a String>,
    targets: Option<&'a PathBuf>,
    dir: &'a Path,
    warmup: Duration,
}

impl Words<'_> {
    /// The plan's and the variant's `args`, parsed as `pelt run`'s or
    /// `pelt sweep`'s flags (`T`) would be: they are the user's own words.
    /// The target comes from the plan, so no URL is required here.
    fn flags<T: clap::Args + clap::FromArgMatches>(
        &self,
        command: &'static str,
    ) -> Result<T, UserError> {
        let args: Vec<&String> = self.load.args.iter().chain(&self.variant.args).collect();
        let said = |e: clap::Error| {
            let rendered = e.render().to_string();
            UserError(format!(
                "{} (in the flags {})",
                rendered
                    .lines()
                    .next()
                    .unwrap_or("invalid flags")
                    .trim_start_matches("error: "),
                args.iter()
                    .map(|a| a.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            ))
        };
        let matches = T::augment_args(clap::Command::new(command))
            .mut_arg("url", |a| {
                a.required_unless_present(clap::builder::Resettable::<clap::Id>::Reset)
            })
            .no_binary_name(true)
            .try_get_matches_from(&args)
            .map_err(said)?;
        T::from_arg_matches(&matches).map_err(said)
    }

    /// The target: a variant's own wins over [load]'s.
    fn aim(&self, run: &mut RunArgs) -> Result<(), UserError> {
        if run.url.is_some() || run.targets_file.is_some() {
            return Err(UserError(
                "a URL or -f has no place in args: give url = \"...\" or targets = \"file\" in [load] or the variant".into(),
            ));
        }
        match (self.targets, self.url) {
            (Some(t), _) if self.variant.targets.is_some() || self.variant.url.is_none() => {
                run.targets_file = Some(self.dir.join(t));
            }
            (_, Some(u)) => run.url = Some(u.clone()),
            (Some(t), None) => run.targets_file = Some(self.dir.join(t)),
            (None, None) => {}
        }
        Ok(())
    }

    /// What [load] sets must not be in args too: which would win?
    fn given_once(&self, args: &RunArgs) -> Result<(), UserError> {
        if args.warmup.is_some() {
            return Err(UserError(
                "--warmup has no place in args: give warmup = \"...\" in [load]".into(),
            ));
        }
        if args.threads.is_some() && self.load.threads.is_some() {
            return Err(UserError(
                "the threads are given twice: drop -t from args, or threads from [load]".into(),
            ));
        }
        Ok(())
    }

    /// [load]'s length, if it gives one.
    fn duration(&self) -> Result<Option<Duration>, UserError> {
        file_duration(&self.load.duration, "[load] duration")
    }

    /// One run at `level`, as `pelt run` would make it from the same
    /// words, refusing flags that mean nothing inside an experiment.
    fn run(&self, level: &Level) -> Result<RunConfig, UserError> {
        let mut args: RunArgs = self.flags("run")?;
        refuse_in_runs(&args)?;
        if args.rate.is_some() || args.stages.is_some() || args.connections.is_some() {
            return Err(UserError(
                "--rate, --stages and -c have no place in args: give the load in [load] (rate, connections)".into(),
            ));
        }
        self.aim(&mut args)?;
        let pool = match &self.load.connections {
            Some(OneOrMany::One(c)) => *c,
            _ => pelt_core::config::DEFAULT_RATE_CONNECTIONS,
        };
        let load = match level.kind {
            LevelKind::Rate => Load::rate_of(level.value, pool),
            LevelKind::Connections => Load::closed(level.value as u32),
        };
        self.given_once(&args)?;
        let mut config = args.config_with(Some(load))?;
        self.override_run(&mut config, args.duration.is_some())?;
        Ok(config)
    }

    /// [load]'s length, warm-up and threads over what the args said.
    fn override_run(&self, config: &mut RunConfig, args_duration: bool) -> Result<(), UserError> {
        if let Some(d) = self.duration()? {
            if args_duration {
                return Err(UserError(
                    "the length is given twice: drop -d from args, or duration from [load]".into(),
                ));
            }
            config.stop.duration = Some(d);
        }
        config.warmup = self.warmup;
        if let Some(t) = self.load.threads {
            config.threads = t as usize;
        }
        config
            .validate()
            .map_err(|e| UserError(crate::flags::config_error(&e)))
    }

    /// The variant's sweep: `pelt sweep`'s flags from the args, [load]'s
    /// length, warm-up, threads and pool, under `slo`.
    fn sweep(&self, slo: &str) -> Result<(SweepSpec, RunConfig), UserError> {
        let mut args: SweepArgs = self.flags("sweep")?;
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
        self.aim(&mut args.run)?;
        self.given_once(&args.run)?;
        if args.run.duration.is_some() && self.load.duration.is_some() {
            return Err(UserError(
                "the length is given twice: drop -d from args, or duration from [load]".into(),
            ));
        }
        args.slo = Some(slo.to_string());
        // Each block's sweep gets a folder of its own (Variant::sweep).
        args.run.out = Some(std::env::temp_dir().join("pelt-plan-check-never-created"));
        let (mut spec, mut base) = args.spec()?;
        if let Some(d) = self.duration()? {
            spec.step = d;
            spec.confirm = d * 3;
        }
        spec.warmup = self.warmup;
        if let Some(OneOrMany::One(c)) = &self.load.connections {
            spec.pool = *c;
        }
        if let Some(t) = self.load.threads {
            base.threads = t as usize;
        }
        Ok((spec, base))
    }
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

fn file_duration(v: &Option<String>, what: &str) -> Result<Option<Duration>, UserError> {
    v.as_deref()
        .map(|d| parse_duration(d).map_err(|e| UserError(format!("{what}: {e}"))))
        .transpose()
}

/// A timeout: zero would fail every variant once its setup had run.
fn timeout(v: &Option<String>, what: &str) -> Result<Option<Duration>, UserError> {
    match file_duration(v, what)? {
        Some(d) if d.is_zero() => Err(UserError(format!(
            "{what} = \"{}\": must be longer than zero, like \"30s\"",
            v.as_deref().unwrap_or_default().escape_debug()
        ))),
        d => Ok(d),
    }
}

/// toml's errors are several lines with a caret; keep one line with the
/// line number.
fn toml_error(text: &str, e: &toml::de::Error) -> UserError {
    let line = e
        .span()
        .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
    let message = e.message().replace('\n', " ");
    // serde's words say what is wrong, not what a plan looks like.
    let fix = "see pelt experiment --help for a plan's fields";
    match line {
        Some(l) => UserError(format!("line {l}: {message}; {fix}")),
        None => UserError(format!("{message}; {fix}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let p = Plan::parse(TWO, Path::new(".")).unwrap();
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
        let p = Plan::parse(plan, dir.path()).unwrap();
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
        let p = Plan::parse(TWO, Path::new(".")).unwrap();
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
            let e = Plan::parse(plan, Path::new(".")).unwrap_err().0;
            assert!(e.contains(hint), "{plan}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }
}
