//! Launchers for sharded runs (`pelt run --shard`): pelt has no
//! coordinator of its own, so an engine people already run places and
//! starts the shards, and pelt generates what that engine needs.
//!
//! - [`k8s`]: a Kubernetes Indexed Job (`completionMode: Indexed`), built
//!   from the typed objects of `k8s-openapi`, printed as YAML;
//! - [`slurm`]: an `sbatch` script that starts the shards with `srun` (a
//!   common start) and merges their parts at the end.
//!
//! Both are plain functions of a [`Launch`]: the caller (the CLI) decides
//! times and names, so the output is reproducible and reviewable.

#![warn(missing_docs)]

pub mod k8s;
pub mod slurm;

/// What both launchers need to know.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// A name for the run: the Job's name, the Slurm job's name and the
    /// prefix of the results files. Lowercase letters, digits and '-'.
    pub name: String,
    /// How many shards (processes) the run is split into.
    pub shards: u32,
    /// The `pelt run` arguments of the whole run (URL, --rate, -d, ...),
    /// without --shard, --start-at, --run-id or -o, which the launcher adds.
    pub run_args: Vec<String>,
    /// Where the shards write their results files (a shared folder).
    pub results_dir: String,
}

/// Why a launcher cannot be generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    /// The name is not a DNS label.
    #[error("invalid --name '{0}': use 1 to 40 lowercase letters, digits and '-', starting with a letter (it names the Job and the results files)")]
    Name(String),
    /// No shards, or too many.
    #[error("--shards must be from 1 to 10000")]
    Shards,
    /// The run arguments already say what the launcher sets.
    #[error("leave {0} out of the run's arguments: the launcher sets it for each shard")]
    Reserved(String),
    /// No run arguments.
    #[error("give the run's arguments after --, like -- http://10.0.0.5/ --rate 4000 -d 1m")]
    NoRun,
    /// A Kubernetes resource quantity the API server would refuse (or a
    /// pod could not run on: zero).
    #[error("invalid {flag} '{value}': {what}, like {example}")]
    Quantity {
        /// The flag.
        flag: &'static str,
        /// What was given.
        value: String,
        /// What it must be.
        what: &'static str,
        /// One to copy.
        example: &'static str,
    },
    /// A Slurm count that sbatch would refuse.
    #[error("{flag} must be at least 1")]
    Zero {
        /// The flag.
        flag: &'static str,
    },
    /// A Slurm time limit sbatch would refuse.
    #[error("invalid --time '{0}': give Slurm's time limit, like 30 (minutes), 00:30:00, 1-00:00:00 (a day) or UNLIMITED")]
    TimeLimit(String),
}

impl Launch {
    /// Checks the name, the shard count and the run's arguments.
    pub fn check(&self) -> Result<(), LaunchError> {
        let n = &self.name;
        let ok = (1..=40).contains(&n.len())
            && n.starts_with(|c: char| c.is_ascii_lowercase())
            && !n.ends_with('-')
            && n.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !ok {
            return Err(LaunchError::Name(n.escape_debug().to_string()));
        }
        if !(1..=10_000).contains(&self.shards) {
            return Err(LaunchError::Shards);
        }
        if self.run_args.is_empty() {
            return Err(LaunchError::NoRun);
        }
        for a in &self.run_args {
            let flag = a.split('=').next().unwrap_or(a);
            if ["--shard", "--start-at", "--run-id", "-o", "--out"].contains(&flag) {
                return Err(LaunchError::Reserved(flag.to_string()));
            }
        }
        Ok(())
    }
}

/// `text` quoted for a POSIX shell: as is when safe, else in single quotes.
pub fn shell_quote(text: &str) -> String {
    let safe = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if safe {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}
