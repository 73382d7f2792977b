//! The Slurm launcher for real: a one-node Slurm (Debian's slurm-wlm and
//! munge, installed by scripts/test) on 127.0.0.1 in a temporary folder
//! runs the script `pelt slurm` prints: 4 shards via srun, `--rate 4000
//! -d 5s` against nginx, merged at the end.

use pelt_testkit::nginx::Nginx;
use pelt_testkit::ports::free_port;
use pelt_testkit::process::Killed;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn find(name: &str) -> PathBuf {
    for dir in ["/usr/sbin", "/usr/bin", "/sbin", "/bin"] {
        let p = Path::new(dir).join(name);
        if p.exists() {
            return p;
        }
    }
    panic!("{name} is missing: scripts/test installs slurm-wlm and munge (Debian)");
}

/// Starts a daemon in the foreground, its output in `log`; stopped by pid
/// when the test ends.
fn spawn(cmd: &mut Command, log: &Path) -> Killed {
    let child = cmd
        .stdout(Stdio::from(std::fs::File::create(log).unwrap()))
        .stderr(Stdio::from(
            std::fs::OpenOptions::new().append(true).open(log).unwrap(),
        ))
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    Killed(child)
}

#[test]
fn four_shards_under_srun_send_exactly_the_schedule() {
    let _machine = pelt_testkit::pelt::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for sub in ["state", "spool", "results"] {
        std::fs::create_dir(d.join(sub)).unwrap();
    }
    // munge: a key of our own and a socket in the temp folder.
    let key = d.join("munge.key");
    std::fs::write(
        &key,
        (0..1024).map(|i| (i * 7 + 3) as u8).collect::<Vec<_>>(),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket = d.join("munge.sock");
    let mut daemons = Vec::new();
    daemons.push(spawn(
        Command::new(find("munged"))
            .arg("--foreground")
            .arg("--force")
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--pid-file={}", d.join("munged.pid").display()))
            .arg(format!("--log-file={}", d.join("munged.log").display()))
            .arg(format!("--seed-file={}", d.join("munged.seed").display())),
        &d.join("munged.out"),
    ));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !socket.exists() {
        assert!(
            Instant::now() < deadline,
            "munged did not start: {}",
            std::fs::read_to_string(d.join("munged.out")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let conf = d.join("slurm.conf");
    std::fs::write(
        &conf,
        format!(
            "ClusterName=pelttest
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={socket}
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SlurmdParameters=config_overrides
ReturnToService=2
SlurmctldPort={p1}
SlurmdPort={p2}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
NodeName=pelt0 NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=local Nodes=pelt0 Default=YES MaxTime=INFINITE State=UP
",
            socket = socket.display(),
            d = d.display(),
            // slurmctld only runs on the host the configuration names.
            host = String::from_utf8(Command::new("hostname").arg("-s").output().unwrap().stdout)
                .unwrap()
                .trim(),
            p1 = free_port(),
            p2 = free_port(),
        ),
    )
    .unwrap();
    let slurm = |name: &str| {
        let mut c = Command::new(find(name));
        c.env("SLURM_CONF", &conf);
        c
    };
    daemons.push(spawn(
        slurm("slurmctld").args(["-D", "-i"]),
        &d.join("slurmctld.out"),
    ));
    daemons.push(spawn(
        slurm("slurmd").args(["-D", "-N", "pelt0"]),
        &d.join("slurmd.out"),
    ));
    let logs = || {
        [
            "slurmctld.log",
            "slurmd.log",
            "slurmctld.out",
            "slurmd.out",
            "munged.log",
        ]
        .iter()
        .map(|f| {
            format!(
                "--- {f}\n{}",
                std::fs::read_to_string(d.join(f)).unwrap_or_default()
            )
        })
        .collect::<String>()
    };
    // Ready when the node is idle.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = slurm("sinfo").args(["-h", "-o", "%T"]).output().unwrap();
        if String::from_utf8_lossy(&out.stdout).trim() == "idle" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "slurm did not come up:\n{}",
            logs()
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    let nginx = Nginx::start("");
    let pelt = pelt_testkit::pelt::bin();
    let results = d.join("results");
    let script = pelt_testkit::pelt::pelt()
        .args([
            "slurm",
            "--name",
            "pelttest",
            "--shards",
            "4",
            "--cpus-per-task",
            "1",
        ])
        .arg("--results-dir")
        .arg(&results)
        .arg("--pelt")
        .arg(&pelt)
        // Ten seconds for srun to bring up four shards on a busy machine:
        // one that plans its run after --start-at is late (asserted below).
        .args(["--start-in", "10", "--time", "00:05:00", "--"])
        .arg(nginx.url("/ok"))
        .args(["--rate", "4000", "-d", "5s", "-c", "400"])
        .output()
        .unwrap();
    assert!(script.status.success());
    let script_path = d.join("job.sh");
    std::fs::write(&script_path, &script.stdout).unwrap();
    let out = slurm("sbatch")
        .arg("--wait")
        .arg(&script_path)
        .current_dir(d)
        .env("PELT_DATA_DIR", d.join("data"))
        .env("PELT_NO_HISTORY", "1")
        .output()
        .unwrap();
    let job_out = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name().to_string_lossy().ends_with(".out")
                && e.file_name().to_string_lossy().starts_with("pelttest")
        })
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<String>();
    assert!(
        out.status.success(),
        "sbatch: {}{}\njob output:\n{job_out}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        logs()
    );
    let folder = std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("merged.json")).unwrap())
            .unwrap_or_else(|e| panic!("{e}: {job_out}"));

    // nginx saw exactly the schedule: 4,000/s for 5 s.
    let lines = nginx.access_log_lines(Some(20_000));
    assert_eq!(lines.len(), 20_000);
    assert_eq!(merged["requests"]["total"], 20_000, "{job_out}");
    assert_eq!(merged["status_codes"]["200"], 20_000);
    let ok = lines.iter().filter(|l| l.contains(" 200 ")).count();
    assert_eq!(ok, 20_000);
    // The merged per-second offered rate is 4,000 (whole seconds inside
    // the run; the edges hold parts of a second).
    let timeline = merged["timeline"].as_array().unwrap();
    let full: Vec<f64> = timeline
        .iter()
        .filter_map(|r| r["offered"].as_f64())
        .filter(|o| *o > 3_000.0)
        .collect();
    assert!(full.len() >= 4, "{timeline:?}");
    for o in &full {
        assert!((o - 4_000.0).abs() <= 1.0, "{o}");
    }
    // Every shard started within 50 ms of --start-at.
    let mut shards = 0;
    for entry in std::fs::read_dir(&folder).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "pelt") {
            let r = pelt_core::ResultsReader::open(std::io::BufReader::new(
                std::fs::File::open(entry.path()).unwrap(),
            ))
            .unwrap();
            let info = r.header().shard.clone().unwrap();
            assert!(info.late_ns < 50_000_000, "{info:?}");
            assert_eq!(info.shard.count, 4);
            shards += 1;
        }
    }
    assert_eq!(shards, 4);
    let sharded = merged["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "sharded")
        .unwrap();
    assert!(sharded["start_spread_ns"].as_u64().unwrap() < 50_000_000);
    drop(daemons);
}
