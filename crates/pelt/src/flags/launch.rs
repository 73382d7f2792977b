//! `pelt k8s job` and `pelt slurm`.

use clap::{Args, Subcommand};

/// `pelt k8s ...`.
#[derive(Debug, Clone, Args)]
pub struct K8sArgs {
    #[command(subcommand)]
    pub what: K8sCommand,
}

/// What to generate for Kubernetes.
#[derive(Debug, Clone, Subcommand)]
pub enum K8sCommand {
    /// Print an Indexed Job running the run as N shards, one per pod.
    Job(K8sJobArgs),
}

/// `pelt k8s job`.
#[derive(Debug, Clone, Args)]
pub struct K8sJobArgs {
    /// The Job's name; also names the results files.
    #[arg(long, default_value = "pelt")]
    pub name: String,
    /// Shards (pods), each one pelt process.
    #[arg(long, value_name = "N")]
    pub shards: u32,
    /// Container image with pelt on its PATH.
    #[arg(long)]
    pub image: String,
    /// PersistentVolumeClaim the pods write their parts to (ReadWriteMany
    /// if the pods may land on several nodes).
    #[arg(long, value_name = "NAME")]
    pub claim: String,
    /// Where the claim is mounted in each pod.
    #[arg(long = "results-dir", default_value = "/results")]
    pub results_dir: String,
    /// CPU per shard, requested and limited alike (no throttling).
    #[arg(long, default_value = "2")]
    pub cpu: String,
    /// Memory per shard, requested and limited alike.
    #[arg(long, default_value = "1Gi")]
    pub memory: String,
    /// Put every shard on a node of its own (required anti-affinity).
    #[arg(long = "spread")]
    pub spread: bool,
    /// Measurement starts this many seconds after the manifest is
    /// generated: time to apply it and for every pod to be scheduled and
    /// pulled. Apply it at once, or regenerate.
    #[arg(
        long = "start-in",
        value_name = "SECONDS",
        default_value_t = 120,
        conflicts_with = "start_at"
    )]
    pub start_in: u64,
    /// Or an exact start for every shard (RFC 3339 or Unix seconds).
    #[arg(long = "start-at", value_name = "TIME")]
    pub start_at: Option<String>,
    /// The run id [default: NAME-START].
    #[arg(long = "run-id")]
    pub run_id: Option<String>,
    /// The `pelt run` arguments of the whole run, after --: checked here
    /// as each shard's `pelt run --shard 0/N` will check them (files they
    /// name are read). The shards keep no history: record the merged run
    /// with `pelt report --merge --record`.
    #[arg(last = true, required = true, value_name = "RUN ARGS")]
    pub run: Vec<String>,
}

/// `pelt slurm`.
#[derive(Debug, Clone, Args)]
pub struct SlurmArgs {
    /// The job's name; also names the results folder.
    #[arg(long, default_value = "pelt")]
    pub name: String,
    /// Shards (srun tasks), each one pelt process.
    #[arg(long, value_name = "N")]
    pub shards: u32,
    /// Nodes to spread them over.
    #[arg(long, default_value_t = 1)]
    pub nodes: u32,
    /// CPUs per shard.
    #[arg(long = "cpus-per-task", default_value_t = 2)]
    pub cpus_per_task: u32,
    /// A folder every node sees; the parts and the merged report go in a
    /// folder per job inside it.
    #[arg(long = "results-dir", value_name = "DIR")]
    pub results_dir: String,
    /// Seconds from the job starting to measurement starting.
    #[arg(long = "start-in", value_name = "SECONDS", default_value_t = 10)]
    pub start_in: u32,
    /// The pelt binary on the nodes.
    #[arg(long, default_value = "pelt")]
    pub pelt: String,
    /// The job's time limit (sbatch --time).
    #[arg(long, default_value = "00:30:00")]
    pub time: String,
    /// The `pelt run` arguments of the whole run, after --: checked here
    /// as each shard's `pelt run --shard 0/N` will check them (files they
    /// name are read). The shards keep no history: record the merged run
    /// with `pelt report --merge --record`.
    #[arg(last = true, required = true, value_name = "RUN ARGS")]
    pub run: Vec<String>,
}
