//! One run spread over many processes (machines): which part of the whole
//! run a process is, and how the whole run's requests and connections are
//! dealt to the parts.
//!
//! pelt has no coordinator. An engine (Kubernetes, Slurm, a shell loop)
//! starts N processes with the same configuration; each knows only its
//! index `I` and `N`. Dealing is a pure function of the run's numbering:
//!
//! - rate mode: request `k` of the whole schedule belongs to shard
//!   `k mod N` and keeps the planned time and target the unsharded run
//!   gives it, so the shards together send exactly the unsharded schedule;
//! - closed loop: connection `j` (numbered over the whole run, so `-c`
//!   schedules keep their meaning) belongs to shard `j mod N`, and `-n` is
//!   split so the shards' counts add up to it.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A shard whose process came up later than this after `--start-at` is
/// named in its own report and in the merged one.
pub const LATE_START_NS: u64 = 50_000_000;

/// The most shards a run may have.
pub const MAX_SHARDS: u32 = 10_000;

/// Shard `index` of `count` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shard {
    /// This part, `0 <= index < count`.
    pub index: u32,
    /// How many parts the run has.
    pub count: u32,
}

/// Why `--shard` could not be worked out; each names the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not `I/N`, `auto` or `auto/N`.
    #[error("invalid --shard '{0}': write I/N (0 <= I < N <= 10000, like 0/4), auto (under srun or a Slurm array job) or auto/N (a Kubernetes Indexed Job of N completions)")]
    Syntax(String),
    /// `I >= N`, `N = 0` or `N` too large.
    #[error("invalid --shard {index}/{count}: the index counts from 0 and must be below the count (0 <= I < N <= 10000), like 0/{count}")]
    OutOfRange {
        /// The index given.
        index: u64,
        /// The count given.
        count: u64,
    },
    /// `--shard auto` found no engine's variables.
    #[error("--shard auto found no engine's environment (SLURM_PROCID/SLURM_NTASKS under srun, SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT in an array job, JOB_COMPLETION_INDEX in a Kubernetes Indexed Job with --shard auto/N); outside an engine give --shard I/N")]
    NoEnvironment,
    /// A variable is not a number.
    #[error("--shard auto: {name}='{value}' is not a whole number; is this really the engine's environment? Give --shard I/N instead")]
    BadVariable {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
    /// A Kubernetes index without a count.
    #[error("--shard auto: JOB_COMPLETION_INDEX is set but Kubernetes does not give the number of completions; write --shard auto/N with N = the Job's completions")]
    NoCount,
    /// The engine's count and the one given disagree.
    #[error("--shard auto/{given}: the engine says there are {found} shards ({vars}); make the Job's completions (or srun's tasks) and N agree")]
    Contradiction {
        /// N as given.
        given: u32,
        /// N as the environment says.
        found: u64,
        /// Which variables said so.
        vars: &'static str,
    },
}

impl Shard {
    /// The whole run as one part.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Checks `0 <= index < count <= MAX_SHARDS`.
    pub fn new(index: u64, count: u64) -> Result<Shard, ShardError> {
        if count == 0 || count > u64::from(MAX_SHARDS) || index >= count {
            return Err(ShardError::OutOfRange { index, count });
        }
        Ok(Shard {
            index: index as u32,
            count: count as u32,
        })
    }

    /// Parses `--shard`: `I/N`, `auto` or `auto/N`, reading the engine's
    /// variables through `env` for the automatic forms.
    pub fn parse(text: &str, env: impl Fn(&str) -> Option<String>) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax(text.escape_debug().to_string());
        let whole = |s: &str| s.trim().parse::<u64>().map_err(|_| syntax());
        let text = text.trim();
        if text == "auto" {
            return Shard::from_env(None, env);
        }
        let (i, n) = text.split_once('/').ok_or_else(syntax)?;
        let n = whole(n)?;
        if i.trim() == "auto" {
            let n = u32::try_from(n)
                .ok()
                .filter(|&n| n > 0 && n <= MAX_SHARDS)
                .ok_or(ShardError::OutOfRange { index: 0, count: n })?;
            return Shard::from_env(Some(n), env);
        }
        Shard::new(whole(i)?, n)
    }

    /// The shard an engine's environment names: srun's task, a Slurm
    /// array task, or a Kubernetes Indexed Job's completion index (whose
    /// count must be `given`).
    fn from_env(
        given: Option<u32>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Shard, ShardError> {
        let var = |name: &'static str| -> Result<Option<u64>, ShardError> {
            match env(name) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| ShardError::BadVariable { name, value: v }),
            }
        };
        let srun = (var("SLURM_PROCID")?, var("SLURM_NTASKS")?);
        let array = (var("SLURM_ARRAY_TASK_ID")?, var("SLURM_ARRAY_TASK_COUNT")?);
        // srun's tasks first; a single task inside an array job is
        // numbered by the array.
        let found = match (srun, array) {
            ((Some(i), Some(n)), _) if n > 1 => Some((i, n, "SLURM_PROCID/SLURM_NTASKS")),
            (_, (Some(i), Some(n))) => Some((i, n, "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT")),
            ((Some(i), Some(n)), _) => Some((i, n, "SLURM_PROCID/SLURM_NTASKS")),
            _ => None,
        };
        if found.is_none() {
            if let Some(i) = var("JOB_COMPLETION_INDEX")? {
                let n = given.ok_or(ShardError::NoCount)?;
                return Shard::new(i, u64::from(n));
            }
            return Err(ShardError::NoEnvironment);
        }
        let (i, n, vars) = found.expect("checked");
        if let Some(given) = given.filter(|&g| u64::from(g) != n) {
            return Err(ShardError::Contradiction {
                given,
                found: n,
                vars,
            });
        }
        Shard::new(i, n)
    }

    /// How many of the whole run's items `0..total` are this shard's
    /// (those with `item mod count == index`).
    pub fn items_of(&self, total: u64) -> u64 {
        owned(total, u64::from(self.count), u64::from(self.index))
    }

    /// The whole run's number of this shard's `local`-th item.
    pub fn global(&self, local: u64) -> u64 {
        local * u64::from(self.count) + u64::from(self.index)
    }

    /// This shard's part of a count that is split, not dealt (`-n` in a
    /// closed loop): the parts add up to `total`.
    pub fn part_of(&self, total: u64) -> u64 {
        owned(total, u64::from(self.count), u64::from(self.index))
    }
}

/// How many of `0..total` are `offset` modulo `stride` (`offset < stride`).
pub fn owned(total: u64, stride: u64, offset: u64) -> u64 {
    if total <= offset {
        0
    } else {
        (total - offset).div_ceil(stride)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A stable hash of a configuration's text (FNV-1a, 64 bits, as hex): the
/// same configuration gives the same hash on every machine and version of
/// Rust, so shards can check that they ran the same run.
pub fn config_hash(json: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in json {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// What ties a results file to the other parts of its run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// Shared by all parts of one run.
    pub run_id: String,
    /// Which part this file is.
    pub shard: Shard,
    /// [`config_hash`] of the whole run's configuration (without the
    /// shard): every part must have the same.
    pub config_hash: String,
    /// `--start-at`, nanoseconds since the Unix epoch, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at_unix_ns: Option<u64>,
    /// How late this part started measuring, against `--start-at`
    /// (0 when on time or without one), in nanoseconds.
    #[serde(default)]
    pub late_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn parses_explicit_shards_and_refuses_bad_ones() {
        let none = env(&[]);
        assert_eq!(Shard::parse("1/4", &none), Ok(Shard { index: 1, count: 4 }));
        assert_eq!(
            Shard::parse("4/4", &none),
            Err(ShardError::OutOfRange { index: 4, count: 4 })
        );
        assert!(Shard::parse("0/0", &none).is_err());
        assert!(Shard::parse("0/10001", &none).is_err());
        assert!(Shard::parse("9999/10000", &none).is_ok());
        assert!(matches!(
            Shard::parse("x", &none),
            Err(ShardError::Syntax(_))
        ));
        assert!(matches!(
            Shard::parse("1/b", &none),
            Err(ShardError::Syntax(_))
        ));
        assert_eq!(Shard::parse("auto", &none), Err(ShardError::NoEnvironment));
    }

    #[test]
    fn reads_each_engines_environment() {
        let srun = env(&[("SLURM_PROCID", "2"), ("SLURM_NTASKS", "4")]);
        assert_eq!(
            Shard::parse("auto", &srun),
            Ok(Shard { index: 2, count: 4 })
        );
        assert_eq!(
            Shard::parse("auto/4", &srun),
            Ok(Shard { index: 2, count: 4 })
        );
        assert!(matches!(
            Shard::parse("auto/3", &srun),
            Err(ShardError::Contradiction {
                given: 3,
                found: 4,
                ..
            })
        ));
        let array = env(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "1"),
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
        ]);
        assert_eq!(
            Shard::parse("auto", &array),
            Ok(Shard { index: 5, count: 8 })
        );
        let k8s = env(&[("JOB_COMPLETION_INDEX", "3")]);
        assert_eq!(Shard::parse("auto", &k8s), Err(ShardError::NoCount));
        assert_eq!(
            Shard::parse("auto/5", &k8s),
            Ok(Shard { index: 3, count: 5 })
        );
        assert!(Shard::parse("auto/3", &k8s).is_err());
        let bad = env(&[("SLURM_PROCID", "x"), ("SLURM_NTASKS", "4")]);
        assert!(matches!(
            Shard::parse("auto", &bad),
            Err(ShardError::BadVariable { .. })
        ));
    }

    #[test]
    fn items_are_dealt_exactly() {
        for total in [0u64, 1, 5, 16, 17, 1000] {
            for count in 1..=16u32 {
                let shards = (0..count).map(|index| Shard { index, count });
                assert_eq!(shards.map(|s| s.items_of(total)).sum::<u64>(), total);
            }
        }
        let s = Shard { index: 2, count: 3 };
        assert_eq!((0..3).map(|l| s.global(l)).collect::<Vec<_>>(), [2, 5, 8]);
        assert_eq!(config_hash(b"{}"), config_hash(b"{}"));
        assert_ne!(config_hash(b"{}"), config_hash(b"{ }"));
    }
}
