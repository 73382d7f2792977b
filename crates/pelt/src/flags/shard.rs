//! `pelt run --shard I/N --start-at TIME --run-id ID`: this process is one
//! part of a run spread over many (see docs/DISTRIBUTED.md). Flags only;
//! the dealing is pelt-core's and the engine's.

use super::UserError;
use clap::Args;
use pelt_core::{RunConfig, Shard};

/// The flags of a sharded run (their own block, flattened into `pelt run`).
#[derive(Debug, Clone, Default, Args)]
pub struct ShardArgs {
    /// Send only part I of N of the run the other flags describe (0 <= I <
    /// N <= 10000): with --rate, request k of the whole schedule goes to
    /// shard k mod N at its planned time; in a closed loop, connection j
    /// goes to shard j mod N and -n is split exactly. `auto` reads srun's
    /// or a Slurm array's environment; `auto/N` a Kubernetes Indexed Job's
    /// (JOB_COMPLETION_INDEX). Merge the parts with pelt report --merge.
    #[arg(long, value_name = "I/N|auto|auto/N", help_heading = "Sharded runs")]
    pub shard: Option<String>,

    /// Start measuring at this wall-clock time on every shard: RFC 3339
    /// (2026-11-23T22:00:00Z) or Unix seconds. Warm-up runs before it. A
    /// shard that comes up late keeps the schedule and says so as it
    /// starts: what it missed goes out at once, counted as send lag, and
    /// the merged report names it. A start with the whole measurement
    /// behind it (past by the run's length or more) is refused, exit 2.
    /// Shards need synchronised clocks (NTP).
    #[arg(long = "start-at", value_name = "TIME", help_heading = "Sharded runs")]
    pub start_at: Option<String>,

    /// The id every shard of this run shares, checked by pelt report
    /// --merge [default: from the configuration and --start-at].
    #[arg(
        long = "run-id",
        value_name = "ID",
        requires = "shard",
        help_heading = "Sharded runs"
    )]
    pub run_id: Option<String>,
}

impl ShardArgs {
    /// Puts the shard, start time and run id into `config`.
    pub fn apply(&self, config: &mut RunConfig) -> Result<(), UserError> {
        if let Some(text) = &self.shard {
            let shard = Shard::parse(text, |name| std::env::var(name).ok())
                .map_err(|e| UserError(e.to_string()))?;
            config.shard = Some(shard);
        }
        if let Some(text) = &self.start_at {
            let at = pelt_core::civil::parse_time(text).ok_or_else(|| {
                UserError(format!(
                    "invalid --start-at '{}': give an RFC 3339 time like 2026-11-23T22:00:00Z or Unix seconds like 1795476000",
                    text.escape_debug()
                ))
            })?;
            config.start_at_unix_ns = Some(at);
        }
        if let Some(id) = &self.run_id {
            if id.is_empty() || id.len() > 200 || id.chars().any(char::is_control) {
                return Err(UserError(
                    "invalid --run-id: give a short name without control characters, like the job's id".into(),
                ));
            }
            config.run_id = Some(id.clone());
        }
        Ok(())
    }
}
