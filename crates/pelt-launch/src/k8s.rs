//! A Kubernetes Indexed Job running one shard per pod.
//!
//! `completionMode: Indexed` gives each pod its index as
//! `JOB_COMPLETION_INDEX`; with `completions = parallelism = N` all shards
//! run at once, and `--shard auto/N` reads the index. Every pod gets the
//! same `--start-at`, far enough ahead for the scheduler to place them
//! all. CPU requests equal limits (Guaranteed QoS when memory does too), so
//! a shard is never throttled into being the bottleneck it measures.

use crate::{Launch, LaunchError};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Affinity, Container, EnvVar, EnvVarSource, ObjectFieldSelector,
    PersistentVolumeClaimVolumeSource, PodAffinityTerm, PodAntiAffinity, PodSpec, PodTemplateSpec,
    ResourceRequirements, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use std::collections::BTreeMap;

/// What only the Kubernetes launcher needs.
#[derive(Debug, Clone, PartialEq)]
pub struct KubeOptions {
    /// The container image with `pelt` on its PATH.
    pub image: String,
    /// CPU per shard, requested and limited alike (e.g. "2").
    pub cpu: String,
    /// Memory per shard, requested and limited alike (e.g. "1Gi").
    pub memory: String,
    /// The PersistentVolumeClaim the results are written to (ReadWriteMany
    /// when the pods land on several nodes).
    pub claim: String,
    /// Put each shard on a node of its own.
    pub anti_affinity: bool,
    /// `--start-at` for every shard (RFC 3339 or Unix seconds).
    pub start_at: String,
    /// `--run-id` for every shard.
    pub run_id: String,
}

/// The label every pod of the run carries (for anti-affinity and
/// `kubectl logs -l`).
pub const RUN_LABEL: &str = "pelt.dev/run";

/// Whether `text` is a Kubernetes resource quantity (the API server's
/// grammar: a decimal number, then a binary suffix `Ki`..`Ei`, a decimal
/// one `n u m k M G T P E`, or an exponent `e3`), and more than zero.
pub fn is_quantity(text: &str) -> bool {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let number = number.strip_prefix('+').unwrap_or(number);
    let digits = number.chars().filter(char::is_ascii_digit).count();
    let numeric = digits > 0
        && number.chars().filter(|&c| c == '.').count() <= 1
        && number.chars().all(|c| c.is_ascii_digit() || c == '.');
    let suffix_ok = match suffix {
        "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => true,
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => true,
        s => s
            .strip_prefix(['e', 'E'])
            .map(|e| e.strip_prefix(['+', '-']).unwrap_or(e))
            .is_some_and(|e| !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())),
    };
    numeric && suffix_ok && number.chars().any(|c| ('1'..='9').contains(&c))
}

/// The Indexed Job for `launch`.
pub fn job(launch: &Launch, opts: &KubeOptions) -> Result<Job, LaunchError> {
    launch.check()?;
    // What the API server would refuse (`2Gb`, `abc`), found before the
    // manifest is applied.
    if !is_quantity(&opts.cpu) {
        return Err(LaunchError::Quantity {
            flag: "--cpu",
            value: opts.cpu.escape_debug().to_string(),
            what: "give CPUs as Kubernetes writes them, more than zero",
            example: "--cpu 2, --cpu 0.5 or --cpu 500m",
        });
    }
    if !is_quantity(&opts.memory) {
        return Err(LaunchError::Quantity {
            flag: "--memory",
            value: opts.memory.escape_debug().to_string(),
            what: "give bytes as Kubernetes writes them (Ki, Mi, Gi: powers of 1024; k, M, G: of 1000), more than zero",
            example: "--memory 2Gi or --memory 2G",
        });
    }
    let labels: BTreeMap<String, String> = [
        ("app.kubernetes.io/name".to_string(), "pelt".to_string()),
        (RUN_LABEL.to_string(), launch.name.clone()),
    ]
    .into();
    let mut args = vec!["run".to_string()];
    args.extend(launch.run_args.iter().cloned());
    args.extend([
        "--shard".into(),
        format!("auto/{}", launch.shards),
        "--start-at".into(),
        opts.start_at.clone(),
        "--run-id".into(),
        opts.run_id.clone(),
        "--quiet".into(),
        "--out".into(),
        // Kubernetes expands $(VAR) from the container's env.
        format!(
            "{}/{}-$(JOB_COMPLETION_INDEX).pelt",
            launch.results_dir.trim_end_matches('/'),
            launch.name
        ),
    ]);
    let resources: BTreeMap<String, Quantity> = [
        ("cpu".to_string(), Quantity(opts.cpu.clone())),
        ("memory".to_string(), Quantity(opts.memory.clone())),
    ]
    .into();
    let env = |name: &str, value: &str| EnvVar {
        name: name.into(),
        value: Some(value.into()),
        ..EnvVar::default()
    };
    let container = Container {
        name: "pelt".into(),
        image: Some(opts.image.clone()),
        command: Some(vec!["pelt".into()]),
        args: Some(args),
        env: Some(vec![
            // Declared so that $(JOB_COMPLETION_INDEX) expands in args.
            EnvVar {
                name: "JOB_COMPLETION_INDEX".into(),
                value_from: Some(EnvVarSource {
                    field_ref: Some(ObjectFieldSelector {
                        field_path:
                            "metadata.annotations['batch.kubernetes.io/job-completion-index']"
                                .into(),
                        ..ObjectFieldSelector::default()
                    }),
                    ..EnvVarSource::default()
                }),
                ..EnvVar::default()
            },
            // The pod's own copy of each run is not kept.
            env("PELT_NO_HISTORY", "1"),
            env("PELT_DATA_DIR", "/tmp/pelt"),
        ]),
        resources: Some(ResourceRequirements {
            requests: Some(resources.clone()),
            limits: Some(resources),
            ..ResourceRequirements::default()
        }),
        volume_mounts: Some(vec![VolumeMount {
            name: "results".into(),
            mount_path: launch.results_dir.clone(),
            ..VolumeMount::default()
        }]),
        ..Container::default()
    };
    let affinity = opts.anti_affinity.then(|| Affinity {
        pod_anti_affinity: Some(PodAntiAffinity {
            required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                label_selector: Some(LabelSelector {
                    match_labels: Some([(RUN_LABEL.to_string(), launch.name.clone())].into()),
                    ..LabelSelector::default()
                }),
                topology_key: "kubernetes.io/hostname".into(),
                ..PodAffinityTerm::default()
            }]),
            ..PodAntiAffinity::default()
        }),
        ..Affinity::default()
    });
    let n = launch.shards as i32;
    Ok(Job {
        metadata: ObjectMeta {
            name: Some(launch.name.clone()),
            labels: Some(labels.clone()),
            ..ObjectMeta::default()
        },
        spec: Some(JobSpec {
            completion_mode: Some("Indexed".into()),
            completions: Some(n),
            parallelism: Some(n),
            // A retried shard would start late or twice: fail instead,
            // and let the merge name what is missing.
            backoff_limit: Some(0),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    restart_policy: Some("Never".into()),
                    affinity,
                    containers: vec![container],
                    volumes: Some(vec![Volume {
                        name: "results".into(),
                        persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                            claim_name: opts.claim.clone(),
                            ..PersistentVolumeClaimVolumeSource::default()
                        }),
                        ..Volume::default()
                    }]),
                    ..PodSpec::default()
                }),
            },
            ..JobSpec::default()
        }),
        ..Job::default()
    })
}

/// The Job as YAML, with `apiVersion` and `kind`, ready for `kubectl apply -f -`.
pub fn yaml(job: &Job) -> String {
    let mut out =
        String::from("# Generated by pelt k8s job: one pelt shard per pod of an Indexed Job.\n");
    out.push_str(&serde_norway::to_string(job).expect("a Job always serialises"));
    out
}

#[cfg(test)]
mod tests {
    use super::is_quantity;

    #[test]
    fn quantities_follow_the_api_servers_grammar() {
        for good in [
            "2",
            "0.5",
            "500m",
            "1Gi",
            "2G",
            "1.5Gi",
            "128974848",
            "129e6",
            "1E3",
            "+2",
        ] {
            assert!(is_quantity(good), "{good}");
        }
        for bad in [
            "abc", "2Gb", "", "0", "0m", "1..5", "Gi", "2 Gi", "-1", "1e", "2gi",
        ] {
            assert!(!is_quantity(bad), "{bad}");
        }
    }
}
