//! `pelt k8s job` and `pelt slurm`: the generated manifest and script, as
//! golden files, the manifest checked against Kubernetes' own schema by
//! kubernetes-validate (strict), and refusals. No live cluster is
//! available to these tests: docs/DISTRIBUTED.md says so.

use pelt_testkit::pelt::{ok, pelt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Kubernetes version the manifest is checked against: the one
/// pelt-launch's k8s-openapi feature (v1_37) describes.
const KUBERNETES: &str = "1.37.0";

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// Compares `got` with the golden file; PELT_BLESS=1 rewrites it.
fn check_golden(name: &str, got: &str) {
    let path = golden(name);
    if std::env::var_os("PELT_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        got, want,
        "{name} changed; if intended, rerun with PELT_BLESS=1 and review the diff"
    );
}

fn stdout(args: &[&str]) -> String {
    let out = pelt().args(args).output().unwrap();
    ok(&out);
    String::from_utf8(out.stdout).unwrap()
}

const JOB: &[&str] = &[
    "k8s",
    "job",
    "--name",
    "checkout",
    "--shards",
    "4",
    "--image",
    "registry.example/pelt:0.1",
    "--claim",
    "pelt-results",
    "--cpu",
    "4",
    "--memory",
    "2Gi",
    "--spread",
    "--start-at",
    "2036-11-23T23:00:00Z",
    "--run-id",
    "checkout-1",
    "--",
    "http://10.0.0.5/cart",
    "--rate",
    "20000",
    "-d",
    "5m",
    "-H",
    "X-Test: a b",
];

/// kubernetes-validate, installed by scripts/test when missing.
fn kubernetes_validate() -> PathBuf {
    let cached = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/pelt/kubernetes-validate/bin/kubernetes-validate"));
    let on_path = Command::new("kubernetes-validate")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    match (on_path, cached) {
        (true, _) => PathBuf::from("kubernetes-validate"),
        (false, Some(c)) if c.exists() => c,
        _ => panic!("kubernetes-validate is missing: scripts/test installs it (PyPI)"),
    }
}

#[test]
fn the_job_manifest_is_golden_and_valid_kubernetes() {
    let yaml = stdout(JOB);
    check_golden("k8s-job.yaml", &yaml);
    for must in [
        "completionMode: Indexed",
        "completions: 4",
        "parallelism: 4",
        "- auto/4",
        "- '2111094000'",
        "podAntiAffinity",
    ] {
        assert!(yaml.contains(must), "{must}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.yaml");
    std::fs::write(&file, &yaml).unwrap();
    let validate = kubernetes_validate();
    let out = Command::new(&validate)
        .args(["--strict", "-k", KUBERNETES])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The check can fail: a field Kubernetes does not know is refused.
    std::fs::write(&file, yaml.replace("parallelism:", "parallelizm:")).unwrap();
    let out = Command::new(&validate)
        .args(["--strict", "-k", KUBERNETES])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn the_slurm_script_is_golden_and_parses() {
    let script = stdout(&[
        "slurm",
        "--name",
        "checkout",
        "--shards",
        "4",
        "--nodes",
        "2",
        "--results-dir",
        "/shared/pelt",
        "--pelt",
        "/opt/pelt/bin/pelt",
        "--",
        "http://10.0.0.5/cart",
        "--rate",
        "20000",
        "-d",
        "5m",
        "-H",
        "X-Test: it's",
    ]);
    check_golden("slurm.sh", &script);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.sh");
    std::fs::write(&file, &script).unwrap();
    let out = Command::new("bash").arg("-n").arg(&file).output().unwrap();
    ok(&out);
}

#[test]
fn launchers_refuse_what_they_set_themselves() {
    for (args, says) in [
        (
            &[
                "slurm",
                "--shards",
                "2",
                "--results-dir",
                "/x",
                "--",
                "http://h/",
                "--shard",
                "0/2",
            ][..],
            "leave --shard out",
        ),
        (
            &[
                "k8s",
                "job",
                "--shards",
                "2",
                "--image",
                "i",
                "--claim",
                "c",
                "--name",
                "Bad_Name",
                "--",
                "http://h/",
            ],
            "invalid --name",
        ),
        (
            &[
                "k8s",
                "job",
                "--shards",
                "0",
                "--image",
                "i",
                "--claim",
                "c",
                "--",
                "http://h/",
            ],
            "--shards must be",
        ),
    ] {
        let out = pelt().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// Issue 22 §3: the run's arguments are parsed as each shard's `pelt run
/// --shard 0/N` will parse them, and bad ones refused (exit 2, one line,
/// nothing printed) before the queue, the image pull and every pod.
#[test]
fn launchers_refuse_bad_run_arguments_before_printing_anything() {
    let k8s: &[&str] = &[
        "k8s", "job", "--shards", "4", "--image", "i", "--claim", "c", "--",
    ];
    let slurm: &[&str] = &["slurm", "--shards", "4", "--results-dir", "/x", "--"];
    let cases: [(&[&str], &[&str]); 5] = [
        // A typo clap would refuse in every pod.
        (&["http://h/", "--rat", "100"], &["--rat", "--rate"]),
        // A duration without its unit.
        (&["http://h/", "--rate", "100", "-d", "5"], &["-d"]),
        // Fewer connections than shards: some shard would have none.
        (&["http://h/", "--rate", "100", "-c", "2"], &["raise -c"]),
        // No URL.
        (&["--rate", "100"], &["URL"]),
        // The shards keep no history: a tag there would do nothing.
        (&["http://h/", "--tag", "env=ci"], &["--tag", "--record"]),
    ];
    for launcher in [k8s, slurm] {
        for (run, says) in cases {
            let out = pelt().args(launcher).args(run).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{launcher:?} {run:?}: {err}");
            assert!(out.stdout.is_empty(), "{run:?}: printed something");
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(err.starts_with("error: the run's arguments"), "{err}");
            for s in says {
                assert!(err.contains(s), "{run:?}: {s}: {err}");
            }
        }
        // Good arguments still go through.
        let out = pelt()
            .args(launcher)
            .args(["http://h/", "--rate", "100", "-d", "5s", "-c", "8"])
            .output()
            .unwrap();
        ok(&out);
    }
}

/// Issue 22 §3: Slurm's shards keep no SQLite history (often on NFS,
/// where its write-ahead log is unsafe), as Kubernetes' pods do not.
#[test]
fn the_slurm_script_turns_the_history_off_on_the_nodes() {
    let script = stdout(&[
        "slurm",
        "--shards",
        "2",
        "--results-dir",
        "/x",
        "--",
        "http://h/",
        "-n",
        "10",
    ]);
    assert!(script.contains("export PELT_NO_HISTORY=1"), "{script}");
}

/// Issue 35: a start that cannot be met is refused by the launchers
/// (exit 2, one line, nothing printed), not found out by every pod.
#[test]
fn launchers_refuse_a_start_that_cannot_be_met() {
    let k8s: &[&str] = &[
        "k8s", "job", "--shards", "2", "--image", "i", "--claim", "c",
    ];
    let slurm: &[&str] = &["slurm", "--shards", "2", "--results-dir", "/x"];
    let run: &[&str] = &["--", "http://h/", "--rate", "100", "-d", "10s"];
    for (launcher, extra, says) in [
        (
            k8s,
            &["--start-at", "2020-01-01T00:00:00Z"][..],
            "--start-at 2020-01-01T00:00:00Z has passed",
        ),
        (k8s, &["--start-in", "0"], "--start-in 0"),
        (slurm, &["--start-in", "0"], "--start-in 0"),
    ] {
        let out = pelt()
            .args(launcher)
            .args(extra)
            .args(run)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(out.stdout.is_empty(), "{extra:?}: printed something");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.starts_with("error: ") && err.contains(says), "{err}");
    }
}

/// Issue 35 §4: the launchers passed what each shard's `pelt run` or the
/// cluster would refuse (found in every pod, or by sbatch and the API
/// server): refused here, exit 2, one line, nothing printed.
#[test]
fn launchers_refuse_what_the_run_or_the_cluster_would() {
    let k8s: &[&str] = &[
        "k8s", "job", "--shards", "2", "--image", "i", "--claim", "c",
    ];
    let slurm: &[&str] = &["slurm", "--shards", "2", "--results-dir", "/x"];
    let run: &[&str] = &["--", "http://h/", "--rate", "100", "-d", "10m"];
    let metrics: &[&str] = &[
        "--",
        "http://h/",
        "--rate",
        "100",
        "-d",
        "10m",
        "--metrics",
        "0.0.0.0:9091",
    ];
    for (launcher, extra, after, says) in [
        (
            k8s,
            &[][..],
            metrics,
            "--metrics 0.0.0.0:9091 is not a loopback address",
        ),
        (k8s, &["--cpu", "abc"], run, "invalid --cpu 'abc'"),
        (k8s, &["--memory", "2Gb"], run, "invalid --memory '2Gb'"),
        (slurm, &[], metrics, "--metrics-allow-remote"),
        (slurm, &["--nodes", "0"], run, "--nodes must be at least 1"),
        (
            slurm,
            &["--cpus-per-task", "0"],
            run,
            "--cpus-per-task must be at least 1",
        ),
        (slurm, &["--time", "bogus"], run, "invalid --time 'bogus'"),
        (
            slurm,
            &["--time", "00:00:05"],
            run,
            "--time 00:00:05 ends the job before the run does",
        ),
    ] {
        let out = pelt()
            .args(launcher)
            .args(extra)
            .args(after)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?} {after:?}: {err}");
        assert!(out.stdout.is_empty(), "{extra:?}: printed something");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.starts_with("error: ") && err.contains(says),
            "{says}: {err}"
        );
    }
    // Meant, it goes through; and so do quantities and limits that fit.
    let allowed: &[&str] = &[
        "--",
        "http://h/",
        "--rate",
        "100",
        "-d",
        "10m",
        "--metrics",
        "0.0.0.0:9091",
        "--metrics-allow-remote",
    ];
    ok(&pelt()
        .args(k8s)
        .args(["--cpu", "500m", "--memory", "1.5Gi"])
        .args(allowed)
        .output()
        .unwrap());
    ok(&pelt()
        .args(slurm)
        .args(["--time", "0-00:12"])
        .args(run)
        .output()
        .unwrap());
    let out = pelt()
        .args(slurm)
        .args(["--time", "00:10:05"])
        .args(run)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("give --time 00:11:10 or more"), "{err}");
}
