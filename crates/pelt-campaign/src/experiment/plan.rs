//! The experiment plan: a TOML file read into plain data, checked whole
//! before any command runs or any load is sent.

use crate::{Error, Result};
use crate::{Sweep, SweepSpec};
pub use pelt_analyze::experiment::{Level, LevelKind};
use pelt_core::config::DEFAULT_RATE_CONNECTIONS;
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
    scenario: Option<PathBuf>,
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
    scenario: Option<PathBuf>,
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
    /// The variant's name (unique once made safe for file names).
    pub name: String,
    /// The command that brings the variant up.
    pub setup: Option<String>,
    /// A command that succeeds once the variant serves.
    pub ready: Option<String>,
    /// A URL that answers (any HTTP status) once the variant serves.
    pub ready_url: String,
    /// The command that takes the variant down.
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
    /// The plan's name (reports, the history's label).
    pub name: String,
    /// Blocks: each variant once per block, in counterbalanced order.
    pub blocks: u32,
    /// The load levels every variant is run at.
    pub levels: Vec<Level>,
    /// The first is the baseline every other is compared with.
    pub variants: Vec<Variant>,
    /// Where commands run and relative paths start: the plan's folder.
    pub dir: PathBuf,
    /// How long a variant may take to answer once set up.
    pub ready_timeout: Duration,
    /// How long a setup or teardown command may take.
    pub command_timeout: Duration,
    /// Warm-up plus measurement of one run (the warm-up alone when the
    /// runs stop by count: see `requests_per_run`).
    pub run_length: Duration,
    /// Runs that stop after so many requests (`-n` in `args`, no
    /// duration): how long they take is the server's pace, unknown until
    /// the first has run.
    pub requests_per_run: Option<u64>,
    /// `[load] sweep`: the SLO each variant's capacity is searched under.
    pub sweep: Option<String>,
    /// The plan's own commands, once before the first variant's setup and
    /// once after everything (a backend all variants share, say).
    pub setup: Option<String>,
    /// The plan's own command after everything, whatever happened.
    pub teardown: Option<String>,
    /// `--metric`: the latency the verdicts' percentiles compare.
    pub latency: pelt_analyze::latency::Latency,
    /// The plan as written, kept with the experiment's results.
    pub text: String,
}

impl Plan {
    /// Reads and checks `path`: every run's configuration is built here,
    /// so a mistake in the plan is found before any command runs.
    pub fn read(path: &Path, lower: &dyn Lower) -> Result<Plan> {
        let cannot = |e: &dyn std::fmt::Display| {
            Error::other(format!(
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
            return Err(Error::other(format!(
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
        Plan::parse(&text, &dir, lower)
            .map_err(|e| Error::other(format!("{}: {e}", path.display())))
    }

    /// Parses plan text whose relative paths start at `dir`.
    pub fn parse(text: &str, dir: &Path, lower: &dyn Lower) -> Result<Plan> {
        let file: PlanFile = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
        let blocks = file.blocks.unwrap_or(DEFAULT_BLOCKS);
        let bad = |m: String| Err(Error::Other(m));
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
            // A variant's own target (a URL, a targets file or a
            // scenario) wins over [load]'s; one place gives one of them.
            let own = |url: &Option<String>,
                       targets: &Option<PathBuf>,
                       scenario: &Option<PathBuf>,
                       at: &str| {
                match (url, targets, scenario) {
                    (None, None, None) => Ok(None),
                    (None, None, Some(s)) => Ok(Some((None, None, Some(dir.join(s))))),
                    (_, _, Some(_)) => Err(Error::Other(format!(
                        "{at} gives a scenario and a url or targets; keep one (a scenario names its own URLs)"
                    ))),
                    // A targets file wins over a URL beside it, as it always has.
                    (_, Some(t), None) => Ok(Some((None, Some(dir.join(t)), None))),
                    (Some(u), None, None) => Ok(Some((Some(u.clone()), None, None))),
                }
            };
            let variant_at = format!("variant '{}'", v.name);
            let (url, targets, scenario) =
                match own(&v.url, &v.targets, &v.scenario, &variant_at)? {
                    Some(t) => t,
                    None => match own(&load.url, &load.targets, &load.scenario, "[load]")? {
                        Some(t) => t,
                        None => return bad(format!(
                            "variant '{}' has no target: set url = \"http://...\" (or targets = \"file\", or scenario = \"file.toml\") in [load] or in the variant",
                            v.name
                        )),
                    },
                };
            let words = RunWords {
                args: load.args.iter().chain(&v.args).cloned().collect(),
                url,
                targets,
                scenario,
                duration: file_duration(&load.duration, "[load] duration")?,
                warmup,
                threads: load.threads,
                pool: match &load.connections {
                    Some(OneOrMany::One(c)) => Some(*c),
                    _ => None,
                },
            };
            let sweep =
                match &load.sweep {
                    Some(slo) => Some(lower.sweep(&words, slo).map_err(|e| {
                        Error::other(format!("variant '{}', its sweep: {e}", v.name))
                    })?),
                    None => None,
                };
            let configs = match &sweep {
                // The sweep's first step stands for its load.
                Some((spec, base)) => vec![Sweep::new(spec.clone(), base.clone())?.first_config()?],
                None => levels
                    .iter()
                    .map(|level| {
                        let load = match level.kind {
                            LevelKind::Rate => Load::rate_of(
                                level.value,
                                words.pool.unwrap_or(DEFAULT_RATE_CONNECTIONS),
                            ),
                            LevelKind::Connections => Load::closed(level.value as u32),
                        };
                        lower.run(&words, load).map_err(|e| {
                            Error::other(format!("variant '{}' at {}: {e}", v.name, level.label()))
                        })
                    })
                    .collect::<Result<Vec<_>>>()?,
            };
            let ready_url = match (&v.ready_url, &configs[0].targets[..]) {
                (Some(u), _) => u.clone(),
                (None, [first, ..]) => first.url.to_string(),
                (None, []) => unreachable!("validated configs have a target"),
            };
            pelt_core::Url::parse(&ready_url)
                .map_err(|e| Error::other(format!("variant '{}': ready_url: {e}", v.name)))?;

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
        // With -n only, the length is unknown until run: say so rather
        // than guess (a guess of the default 10 s said 8 min for 26 s).
        let stop = variants[0].configs[0].effective_stop();
        let requests_per_run = stop.requests.filter(|_| stop.duration.is_none());
        let measured = stop.duration.unwrap_or(Duration::ZERO);
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
            requests_per_run,
            sweep: load.sweep.clone(),
            setup: file.setup,
            teardown: file.teardown,
            latency: Default::default(),
            text: text.to_string(),
        })
    }

    /// Runs in the whole experiment.
    pub fn total_runs(&self) -> usize {
        self.blocks as usize * self.variants.len() * self.levels.len()
    }

    /// The order of variants in block `block`
    /// ([`pelt_analyze::experiment::order`]: counterbalanced).
    pub fn order(&self, block: u32) -> Vec<usize> {
        pelt_analyze::experiment::order(self.variants.len(), block)
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

/// What a plan says about one variant's runs: the user's `args` (the
/// plan's, then the variant's) and the plan's own values, for a
/// [`Lower`] to make runs of.
#[derive(Debug, Clone)]
pub struct RunWords {
    /// `[load] args` then the variant's `args`: `pelt run` flags.
    pub args: Vec<String>,
    /// The variant's URL, unless it loads a targets file.
    pub url: Option<String>,
    /// The variant's targets file, its path resolved from the plan's folder.
    pub targets: Option<PathBuf>,
    /// The variant's scenario file (`pelt run --scenario`), its path
    /// resolved from the plan's folder.
    pub scenario: Option<PathBuf>,
    /// `[load] duration`.
    pub duration: Option<Duration>,
    /// `[load] warmup` (or [`DEFAULT_WARMUP`]).
    pub warmup: Duration,
    /// `[load] threads`.
    pub threads: Option<u32>,
    /// `[load] connections` with a rate or a sweep: the connection pool.
    pub pool: Option<u32>,
}

/// Turns a plan's words into runs. A command line parses `args` as its
/// own flags; a program may refuse them, or read them its own way.
pub trait Lower {
    /// The run of `words` under `load` (a level of the plan).
    fn run(&self, words: &RunWords, load: Load) -> std::result::Result<RunConfig, String>;
    /// The sweep of `words` under `slo`, and the run its steps start from.
    fn sweep(
        &self,
        words: &RunWords,
        slo: &str,
    ) -> std::result::Result<(SweepSpec, RunConfig), String>;
}

fn file_duration(v: &Option<String>, what: &str) -> Result<Option<Duration>> {
    v.as_deref()
        .map(|d| parse_duration(d).map_err(|e| Error::other(format!("{what}: {e}"))))
        .transpose()
}

/// A timeout: zero would fail every variant once its setup had run.
fn timeout(v: &Option<String>, what: &str) -> Result<Option<Duration>> {
    match file_duration(v, what)? {
        Some(d) if d.is_zero() => Err(Error::other(format!(
            "{what} = \"{}\": must be longer than zero, like \"30s\"",
            v.as_deref().unwrap_or_default().escape_debug()
        ))),
        d => Ok(d),
    }
}

/// toml's errors are several lines with a caret; keep one line with the
/// line number.
fn toml_error(text: &str, e: &toml::de::Error) -> Error {
    let line = e
        .span()
        .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
    let message = e.message().replace('\n', " ");
    // serde's words say what is wrong, not what a plan looks like.
    let fix = "see pelt experiment --help for a plan's fields";
    match line {
        Some(l) => Error::other(format!("line {l}: {message}; {fix}")),
        None => Error::other(format!("{message}; {fix}")),
    }
}
