//! The run history through the CLI, against real runs of the built-in
//! server: its flags (`--history`, `--tag`, `--label`, `--baseline`,
//! `--fail-on`, the queries), exit codes and output, and what only
//! processes show: secrets in no file pelt writes, two writers,
//! crashes, the spooled copy. Each check is a function over a [`Db`],
//! run against a SQLite file and against a private PostgreSQL cluster.
//! What the library concludes from recorded runs (queries, trends,
//! baselines and their verdicts) is pelt-history's to test, from made-up
//! runs (crates/pelt-history/tests/).

use pelt_testkit::files_under;
use pelt_testkit::pelt::{command, json, pelt, server};
use pelt_testkit::postgres::Cluster;
use pelt_testkit::process::{signal, wait_until};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// A history under test.
enum Db<'a> {
    Sqlite(PathBuf),
    Postgres { cluster: &'a Cluster, url: String },
}

impl Db<'_> {
    fn arg(&self) -> String {
        match self {
            Db::Sqlite(p) => p.display().to_string(),
            Db::Postgres { url, .. } => url.clone(),
        }
    }

    fn store(&self) -> pelt_store::Store {
        pelt_store::open(&self.arg()).expect("open the history")
    }

    fn count(&self) -> usize {
        self.store()
            .list(&pelt_store::Filter::default())
            .unwrap()
            .len()
    }

    /// The database's and the history's own checks (`integrity_check`
    /// for SQLite) say all is well.
    fn assert_sound(&self) {
        assert_eq!(self.store().check().unwrap(), vec!["ok".to_string()]);
    }

    /// Everything the database holds, as bytes to search.
    fn contents(&self) -> Vec<(String, Vec<u8>)> {
        match self {
            Db::Sqlite(p) => {
                let dir = p.parent().unwrap();
                files_under(dir)
                    .into_iter()
                    .filter(|f| f.file_name().unwrap().to_string_lossy().starts_with("h"))
                    .map(|f| (f.display().to_string(), std::fs::read(&f).unwrap()))
                    .collect()
            }
            Db::Postgres { cluster, url } => {
                let db = url.rsplit('/').next().unwrap();
                vec![(format!("pg_dump {db}"), cluster.dump(db))]
            }
        }
    }
}

/// `pelt` with the history at `db` and runs saved under `data`, for a
/// process the test drives itself.
fn hcommand(db: &Db<'_>, data: &Path) -> std::process::Command {
    let mut c = command();
    c.env("PELT_DATA_DIR", data)
        .env("PELT_HISTORY", db.arg())
        .env_remove("PELT_NO_HISTORY");
    c
}

/// [`hcommand`] in the foreground, bounded as [`pelt`] is.
fn hpelt(db: &Db<'_>, data: &Path) -> assert_cmd::Command {
    let mut c = pelt();
    c.env("PELT_DATA_DIR", data)
        .env("PELT_HISTORY", db.arg())
        .env_remove("PELT_NO_HISTORY");
    c
}

fn ok(out: &std::process::Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({:?}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn list(db: &Db<'_>, data: &Path, args: &[&str]) -> Vec<Value> {
    let out = hpelt(db, data)
        .args(["history", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    serde_json::from_str::<Value>(&ok(&out, "pelt history"))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn ids(rows: &[Value]) -> Vec<i64> {
    rows.iter().map(|r| r["id"].as_i64().unwrap()).collect()
}

// ---------------------------------------------------------------- checks

fn record_query_trend(db: &Db<'_>) {
    let data = tempfile::tempdir().unwrap();
    let srv = server(None);
    let url = format!("http://{}/", srv.local_addr());
    let slow = format!("http://{}/?delay=3ms", srv.local_addr());
    let run = |url: &str, extra: &[&str]| {
        let out = hpelt(db, data.path())
            .args(["run", url, "-n", "30", "-c", "2", "-q", "--format", "json"])
            .args(extra)
            .output()
            .unwrap();
        ok(&out, "pelt run")
    };
    let first = run(&url, &["--tag", "env=staging", "--label", "nightly"]);
    run(&url, &["--tag", "env=prod", "--tag", "release-1.4"]);
    run(&slow, &["--label", "nightly"]);

    let all = list(db, data.path(), &[]);
    assert_eq!(all.len(), 3);
    let id1 = all[0]["id"].as_i64().unwrap();
    assert_eq!(all[0]["tags"]["env"], "staging");
    assert_eq!(all[0]["label"], "nightly");
    assert_eq!(all[0]["requests"], 30);
    assert_eq!(all[1]["tags"]["release-1.4"], "");
    // Queries by URL, tag, label, date and count.
    assert_eq!(list(db, data.path(), &["--url", &url]).len(), 2);
    assert_eq!(list(db, data.path(), &["--url", &slow]).len(), 1);
    assert_eq!(
        ids(&list(db, data.path(), &["--tag", "env=prod"])),
        vec![id1 + 1]
    );
    assert_eq!(list(db, data.path(), &["--tag", "env"]).len(), 2);
    assert_eq!(list(db, data.path(), &["--label", "nightly"]).len(), 2);
    assert_eq!(ids(&list(db, data.path(), &["--last", "1"])), vec![id1 + 2]);
    assert_eq!(list(db, data.path(), &["--since", "1d"]).len(), 3);
    assert_eq!(list(db, data.path(), &["--until", "2000-01-01"]).len(), 0);

    // `history show` is the run's own JSON report, byte for byte.
    let out = hpelt(db, data.path())
        .args(["history", "show", &id1.to_string()])
        .output()
        .unwrap();
    assert_eq!(ok(&out, "history show"), first);
    // Other formats are rendered from the results file kept in the history.
    let out = hpelt(db, data.path())
        .args(["history", "show", &id1.to_string(), "--format", "text"])
        .output()
        .unwrap();
    assert!(ok(&out, "history show text").contains("Requests     30"));

    // The label names runs of two URLs: a trend of unlike runs is
    // refused, naming the difference (issue 23 §4) ...
    let out = hpelt(db, data.path())
        .args(["history", "trend", "--metric", "p50", "--label", "nightly"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("do not measure the same work as the newest run")
            && err.contains("?delay=3ms"),
        "{err}"
    );
    // ... unless allowed: the trend follows the slow run.
    let out = hpelt(db, data.path())
        .args([
            "history",
            "trend",
            "--metric",
            "p50",
            "--label",
            "nightly",
            "--format",
            "json",
            "--allow-mismatch",
        ])
        .output()
        .unwrap();
    let trend: Value = serde_json::from_str(&ok(&out, "trend")).unwrap();
    let values: Vec<f64> = trend["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["value"].as_f64().unwrap())
        .collect();
    assert_eq!(values.len(), 2);
    assert!(values[1] >= 3e6 && values[0] < 3e6, "{values:?}");
    let out = hpelt(db, data.path())
        .args(["history", "trend", "--metric", "p99", "--url", &url])
        .output()
        .unwrap();
    let text = ok(&out, "trend text");
    assert!(text.contains("p99 of 2 run(s)"), "{text}");
    let out = hpelt(db, data.path())
        .args(["history", "trend", "--metric", "p99", "--format", "html"])
        .arg("--allow-mismatch")
        .output()
        .unwrap();
    let html = ok(&out, "trend html");
    assert!(
        html.contains("<svg") && html.contains("p99 trend"),
        "{html:.300}"
    );
    let out = hpelt(db, data.path())
        .args(["history", "--format", "csv"])
        .output()
        .unwrap();
    assert_eq!(ok(&out, "csv").lines().count(), 4);

    // rm: gone from every query; an unknown id is exit 2.
    let out = hpelt(db, data.path())
        .args(["history", "rm", &id1.to_string()])
        .output()
        .unwrap();
    ok(&out, "rm");
    assert_eq!(list(db, data.path(), &[]).len(), 2);
    let out = hpelt(db, data.path())
        .args(["history", "show", &id1.to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    db.assert_sound();
}

fn baselines(db: &Db<'_>) {
    let data = tempfile::tempdir().unwrap();
    let srv = server(None);
    let fast = format!("http://{}/", srv.local_addr());
    let slow = format!("http://{}/?delay=4ms", srv.local_addr());
    // 40 baseline runs: enough for one new run to get a 95 % verdict
    // (Mann-Whitney needs 39 against 1).
    for _ in 0..40 {
        let out = hpelt(db, data.path())
            .args([
                "run",
                &fast,
                "-n",
                "20",
                "-c",
                "1",
                "-q",
                "--tag",
                "release-1.4",
            ])
            .output()
            .unwrap();
        ok(&out, "baseline run");
    }
    let against_baseline = |url: &str, fail_on: &str, extra: &[&str]| {
        hpelt(db, data.path())
            .args(["run", url, "-n", "20", "-c", "1", "-q"])
            .args(["--baseline", "tag:release-1.4", "--fail-on", fail_on])
            .args(extra)
            .output()
            .unwrap()
    };
    // A run like the baseline passes --fail-on.
    let out = against_baseline(&fast, "material", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("baseline tag:release-1.4"), "{err}");
    // The slowdown here is asked for in the query string, so the URL
    // differs from the baseline's: refused, naming it (issue 23 §4) ...
    let out = against_baseline(&slow, "regression", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("do not measure the same work") && err.contains("?delay=4ms"),
        "{err}"
    );
    // ... unless allowed. A slower one fails it: exit 1, the table on stderr.
    let out = against_baseline(&slow, "regression", &["--allow-mismatch"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("REGRESSION"), "{err}");

    // pelt compare --baseline: the named files against recorded runs.
    let files: Vec<PathBuf> = (0..4)
        .map(|i| {
            let f = data.path().join(format!("b{i}.pelt"));
            let out = hpelt(db, data.path())
                .args(["run", &slow, "-n", "20", "-c", "1", "-q", "-o"])
                .arg(&f)
                .output()
                .unwrap();
            ok(&out, "b run");
            f
        })
        .collect();
    let out = hpelt(db, data.path())
        .args([
            "compare",
            "--baseline",
            "tag:release-1.4",
            "--fail-on",
            "regression",
            "--format",
            "json",
            "--allow-mismatch",
        ])
        .args(&files)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = json(&out);
    assert_eq!(doc["a"].as_array().unwrap().len(), 40);
    let p50 = doc["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"]["name"] == "p50")
        .unwrap();
    assert!(
        p50["comparison"]["verdict"]
            .to_string()
            .contains("regression"),
        "{p50}"
    );
    // The recorded runs compared are never their own baseline.
    let text = ok(&out_text(db, data.path(), &files, "last:10"), "last:10");
    // A holds the earlier runs of the slow URL (how many depends on which
    // gates above refused to start), never the four compared.
    let a_runs: usize = text
        .split("A = ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!((1..=6).contains(&a_runs), "{text}");
    assert!(
        text.contains("(the runs compared themselves, recorded)"),
        "{text}"
    );
    // label: and last: work; an empty baseline is exit 2.
    let out = hpelt(db, data.path())
        .args(["compare", "--baseline", "last:3"])
        .arg(&files[0])
        .output()
        .unwrap();
    let text = ok(&out, "last:3");
    assert!(text.contains("A = 3 run(s)"), "{text}");
    // An interrupted run never enters a baseline (issue 23 §4).
    let child = hcommand(db, data.path())
        .args([
            "run",
            &fast,
            "-c",
            "1",
            "-d",
            "30s",
            "-q",
            "--tag",
            "release-1.4",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until its load is flowing (the server's own count), then Ctrl-C.
    let before = srv.requests();
    wait_until(Duration::from_secs(20), "no load arrived", || {
        srv.requests() >= before + 50
    });
    signal(&child, "INT");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let interrupted = list(db, data.path(), &["--last", "1"]);
    let id = interrupted[0]["id"].as_i64().unwrap();
    let out = against_baseline(&fast, "material", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "Left out of the baseline: #{id} (interrupted or incomplete)"
        )),
        "{err}"
    );
    // A rate run among closed loops: last:N passes over it, a tag that
    // names it is refused (issue 23 §4: mixed baselines).
    let out = hpelt(db, data.path())
        .args(["run", &fast, "--rate", "100", "-d", "1s", "-q"])
        .args(["--tag", "release-1.4"])
        .output()
        .unwrap();
    ok(&out, "rate run");
    let out = against_baseline(&fast, "material", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("(load: rate 100/s vs closed loop, 1 connection)"),
        "{err}"
    );
    let out = hpelt(db, data.path())
        .args(["run", &fast, "-n", "20", "-c", "1", "-q"])
        .args(["--baseline", "last:5"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("A = 5 run(s)"), "{err}");
    assert!(
        err.contains("Passed over 1 run(s) of the URL whose work differs, like #"),
        "{err}"
    );
    let out = hpelt(db, data.path())
        .args(["compare", "--baseline", "label:none-such"])
        .arg(&files[0])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `pelt compare --baseline SPEC FILES` as text.
fn out_text(
    db: &Db<'_>,
    data: &std::path::Path,
    files: &[PathBuf],
    spec: &str,
) -> std::process::Output {
    hpelt(db, data)
        .args(["compare", "--baseline", spec])
        .args(files)
        .output()
        .unwrap()
}

/// The secret in every run below.
const SECRET: &[u8] = b"S3CRET";

fn secrets_never_written(db: &Db<'_>) {
    let data = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    // Keep a connection open, so that pelt's own close does not fold the
    // WAL away before it is searched.
    let _held = match db {
        Db::Sqlite(_) => {
            let mut held = db.store();
            held.list(&pelt_store::Filter::default()).unwrap();
            Some(held)
        }
        _ => None,
    };
    let srv = server(None);
    let addr = srv.local_addr();
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "bearer",
            vec![
                format!("http://{addr}/"),
                "-H".into(),
                "Authorization: Bearer S3CRET".into(),
            ],
        ),
        (
            "cookie",
            vec![
                format!("http://{addr}/"),
                "-H".into(),
                "Cookie: s=S3CRET".into(),
            ],
        ),
        ("userinfo", vec![format!("http://u:S3CRET@{addr}/")]),
        (
            "https-userinfo",
            vec![format!("https://u:S3CRET@{addr}/"), "--insecure".into()],
        ),
        ("token", vec![format!("http://{addr}/?token=S3CRET&a=1")]),
        (
            "basic-auth",
            vec![format!("http://{addr}/"), "-A".into(), "u:S3CRET".into()],
        ),
        (
            "login",
            vec![
                format!("http://{addr}/"),
                "--login".into(),
                format!("POST http://{addr}/ user=u&pass=S3CRET"),
            ],
        ),
        ("api-key", vec![format!("http://{addr}/?api_key=S3CRET")]),
        (
            "secret-header",
            vec![
                format!("http://{addr}/"),
                "-H".into(),
                "X-Api: S3CRET".into(),
                "--secret-header".into(),
                "x-api".into(),
            ],
        ),
    ];
    for (name, args) in &cases {
        let results = out_dir.path().join(format!("{name}.pelt"));
        for format in ["text", "json", "csv", "markdown", "html"] {
            let mut c = hpelt(db, data.path());
            c.arg("run")
                .args(args)
                .args(["-n", "5", "-c", "1", "-q", "--format", format]);
            if format == "json" {
                c.arg("-o").arg(&results);
            }
            let out = c.output().unwrap();
            std::fs::write(
                out_dir.path().join(format!("{name}.run.{format}")),
                &out.stdout,
            )
            .unwrap();
            std::fs::write(
                out_dir.path().join(format!("{name}.run.{format}.err")),
                &out.stderr,
            )
            .unwrap();
        }
        for format in ["text", "json", "csv", "markdown", "html", "hdrlog"] {
            let out = hpelt(db, data.path())
                .args(["report", "--format", format])
                .arg(&results)
                .output()
                .unwrap();
            ok(&out, "report");
            std::fs::write(
                out_dir.path().join(format!("{name}.report.{format}")),
                &out.stdout,
            )
            .unwrap();
        }
    }
    let rows = list(db, data.path(), &[]);
    assert_eq!(rows.len(), cases.len() * 5);
    for id in ids(&rows) {
        for format in ["json", "text", "csv", "markdown", "html"] {
            let out = hpelt(db, data.path())
                .args(["history", "show", &id.to_string(), "--format", format])
                .output()
                .unwrap();
            ok(&out, "history show");
            std::fs::write(
                out_dir.path().join(format!("show-{id}.{format}")),
                &out.stdout,
            )
            .unwrap();
        }
    }
    for args in [
        &["history", "--format", "csv"][..],
        &[
            "history",
            "trend",
            "--metric",
            "p99",
            "--format",
            "html",
            "--allow-mismatch",
        ],
    ] {
        let out = hpelt(db, data.path()).args(args).output().unwrap();
        std::fs::write(out_dir.path().join(args.join("-")), ok(&out, "history")).unwrap();
    }
    let mut searched: Vec<(String, Vec<u8>)> = files_under(data.path())
        .into_iter()
        .chain(files_under(out_dir.path()))
        .map(|f| (f.display().to_string(), std::fs::read(&f).unwrap()))
        .collect();
    searched.extend(db.contents());
    if let Db::Sqlite(p) = db {
        let wal = PathBuf::from(format!("{}-wal", p.display()));
        assert!(
            std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0),
            "the WAL was searched"
        );
    }
    // The saved copies in the data folder, and the -o files, are here.
    assert!(
        searched
            .iter()
            .filter(|(n, _)| n.ends_with(".pelt"))
            .count()
            >= cases.len() * 2
    );
    for (name, bytes) in &searched {
        assert!(
            !bytes.windows(SECRET.len()).any(|w| w == SECRET),
            "S3CRET found in {name}"
        );
    }
    // The secrets were sent, though: each is in the config pelt ran with.
    assert!(searched
        .iter()
        .any(|(n, b)| n.ends_with("bearer.run.json")
            && String::from_utf8_lossy(b).contains("REDACTED")));
}

fn two_writers(db: &Db<'_>) {
    let data = tempfile::tempdir().unwrap();
    let srv = server(None);
    let url = format!("http://{}/", srv.local_addr());
    let before = db.count();
    std::thread::scope(|s| {
        for p in 0..2 {
            let (url, data) = (&url, data.path());
            s.spawn(move || {
                for i in 0..50 {
                    let out = hpelt(db, data)
                        .args([
                            "run",
                            url,
                            "-n",
                            "2",
                            "-c",
                            "1",
                            "-t",
                            "1",
                            "-q",
                            "--no-save",
                        ])
                        .args(["--tag", &format!("writer={p}"), "--label", &i.to_string()])
                        .output()
                        .unwrap();
                    ok(&out, "concurrent run");
                }
            });
        }
    });
    assert_eq!(db.count(), before + 100);
    assert_eq!(list(db, data.path(), &["--tag", "writer=0"]).len(), 50);
    db.assert_sound();
    let out = hpelt(db, data.path())
        .args(["history", "check"])
        .output()
        .unwrap();
    assert_eq!(ok(&out, "history check"), "ok\n");
}

fn killed_while_recording(db: &Db<'_>) {
    let data = tempfile::tempdir().unwrap();
    let srv = server(None);
    let url = format!("http://{}/", srv.local_addr());
    let before = db.count();
    // Killed inside the transaction, every row written but not committed:
    // nothing of the run may remain.
    for i in 0..5 {
        let held = data.path().join(format!("held-{i}"));
        let mut child = hcommand(db, data.path())
            .args([
                "run",
                &url,
                "-n",
                "3",
                "-c",
                "1",
                "-q",
                "--tag",
                &format!("killed={i}"),
            ])
            .env(pelt_store::HOLD_ENV, &held)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // pelt creates the file at the hold point and waits there; a pelt
        // that exits first never will.
        wait_until(Duration::from_secs(120), "pelt at the hold point", || {
            assert!(child.try_wait().unwrap().is_none(), "pelt exited first");
            held.exists()
        });
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        db.assert_sound();
        assert_eq!(db.count(), before, "a killed run was recorded");
    }
    // Killed at moments spread over the run and its recording: each run
    // is there whole or not at all, and the history stays sound.
    for i in 0..12u64 {
        let mut child = hcommand(db, data.path())
            .args(["run", &url, "-n", "400", "-c", "2", "-q", "--no-save"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(15 * i));
        let _ = child.kill();
        child.wait().unwrap();
        db.assert_sound();
        for r in db.store().list(&pelt_store::Filter::default()).unwrap() {
            let run = db.store().get(r.id).unwrap().unwrap();
            assert!(!run.report_json.is_empty() && r.figures.requests == 400);
        }
    }
    // And the history still takes runs.
    let out = hpelt(db, data.path())
        .args(["run", &url, "-n", "3", "-q"])
        .output()
        .unwrap();
    ok(&out, "run after kills");
}

/// Whether pelt `pid` holds a file with no name (unlinked, or made
/// with `O_TMPFILE`) in `dir`: the history's copy of its run, spooled.
fn spooling(pid: u32, dir: &Path) -> bool {
    let dir = dir.display().to_string();
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .map(|target| target.display().to_string())
        .any(|t| t.starts_with(&dir) && t.ends_with(" (deleted)"))
}

/// The memory of a run with the history on and no `-o` stays flat
/// however long it runs: its copy for the history is spooled to a file
/// with no name in the data directory (not kept in memory), stored byte
/// for byte as the results file saved beside it, and nothing of it is
/// left whatever the ending: the run's end, Ctrl-C, SIGTERM.
fn a_run_without_o_is_spooled_and_stored_byte_for_byte(db: &Db<'_>) {
    let srv = server(None);
    let url = format!("http://{}/", srv.local_addr());
    for (ending, code) in [("end", 0), ("INT", 130), ("TERM", 143)] {
        let data = tempfile::tempdir().unwrap();
        let length = if ending == "end" { "3s" } else { "30s" };
        let mut child = hcommand(db, data.path())
            .args(["run", &url, "--rate", "200", "-d", length, "-c", "2", "-q"])
            .args(["--tag", &format!("ending={ending}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_until(
            Duration::from_secs(20),
            "pelt never spooled its copy for the history",
            || spooling(child.id(), data.path()),
        );
        // Nothing named in the data directory but the saved copy.
        let named = files_under(data.path());
        assert!(
            named.len() == 1 && named[0].extension().is_some_and(|e| e == "pelt"),
            "{ending}: {named:?}"
        );
        if ending != "end" {
            // Load flowing first, so the signal stops a run under way.
            let before = srv.requests();
            wait_until(Duration::from_secs(20), "no load arrived", || {
                srv.requests() >= before + 20
            });
            signal(&child, ending);
        }
        wait_until(Duration::from_secs(30), "pelt did not end", || {
            child.try_wait().unwrap().is_some()
        });
        assert_eq!(child.wait().unwrap().code(), Some(code), "{ending}");
        // Gone: the only file left is the saved copy.
        let left = files_under(data.path());
        assert_eq!(left.len(), 1, "{ending}: {left:?}");
        let saved = std::fs::read(&left[0]).unwrap();
        let rows = list(db, data.path(), &["--tag", &format!("ending={ending}")]);
        assert_eq!(rows.len(), 1, "{ending}");
        let run = db.store().get(ids(&rows)[0]).unwrap().unwrap();
        match run.results {
            pelt_store::Results::Blob(bytes) => assert!(
                bytes == saved,
                "{ending}: {} bytes stored, {} saved, not the same",
                bytes.len(),
                saved.len()
            ),
            other => panic!("{ending}: the results file was not kept: {other:?}"),
        }
        assert_eq!(run.row.interrupted, ending != "end", "{ending}");
    }
    db.assert_sound();
}

/// Issue 22 §3: shards are recorded as parts (kind `shard`, tagged with
/// their run and shard) and kept out of baselines and trends; `pelt report
/// --merge --record` records the merged run once.
fn shards_are_parts_and_the_merged_run_is_recorded(db: &Db<'_>) {
    let data = tempfile::tempdir().unwrap();
    let srv = server(None);
    let url = format!("http://{}/", srv.local_addr());
    // Both shards share a --start-at a moment ahead (one past the whole
    // 1 s run is refused: issue 35).
    let start = format!(
        "{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 3
    );
    let files: Vec<PathBuf> = (0..2)
        .map(|i| data.path().join(format!("part-{i}.pelt")))
        .collect();
    let shards: Vec<std::process::Child> = (0..2)
        .map(|i| {
            hcommand(db, data.path())
                .args([&url, "--rate", "100", "-d", "1s", "-c", "4", "-q"])
                .args(["--shard", &format!("{i}/2"), "--start-at", &start])
                .args(["--run-id", "r1", "-o"])
                .arg(&files[i])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for s in shards {
        let out = s.wait_with_output().unwrap();
        ok(&out, "shard");
    }
    assert_eq!(srv.requests(), 100, "the server's count");
    let rows = list(db, data.path(), &[]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    for r in &rows {
        assert_eq!(r["kind"], "shard", "{r}");
        let tags = r["tags"].to_string();
        assert!(tags.contains("r1") && tags.contains("/2"), "{tags}");
    }
    // Not a baseline, not a trend: each is half of a run.
    let out = hpelt(db, data.path())
        .args(["compare", "--baseline", "last:2"])
        .arg(&files[0])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "shards made a baseline: {err}");
    assert!(err.contains("no recorded run matches"), "{err}");
    let out = hpelt(db, data.path())
        .args(["history", "trend", "--metric", "rate"])
        .output()
        .unwrap();
    assert!(ok(&out, "trend").contains("no recorded runs match"));
    // Followed by tag, they are there.
    let out = hpelt(db, data.path())
        .args(["history", "trend", "--metric", "rate", "--tag", "run_id=r1"])
        .output()
        .unwrap();
    assert!(ok(&out, "trend by tag").contains("of 2 run(s)"));

    // The merged run, recorded on request, once.
    let record = || {
        hpelt(db, data.path())
            .arg("report")
            .args(&files)
            .args(["--merge", "--record", "--tag", "env=ci", "--format", "json"])
            .output()
            .unwrap()
    };
    let merged: Value = serde_json::from_str(&ok(&record(), "report --merge --record")).unwrap();
    assert_eq!(merged["requests"]["total"], 100);
    let out = record();
    ok(&out, "again");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not recorded again"));
    let rows = list(db, data.path(), &["--tag", "env=ci"]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let m = &rows[0];
    assert_eq!(m["kind"], "merged", "{m}");
    let tags = m["tags"].to_string();
    assert!(tags.contains("r1") && tags.contains("shards"), "{tags}");
    assert_eq!(m["requests"], 100, "{m}");
    // A shard is a part of the merged run, never its baseline: the run
    // compared with itself is left out, and no other run is there.
    let out = hpelt(db, data.path())
        .args(["compare", "--baseline", "last:2"])
        .arg(&files[0])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the runs compared themselves"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The merged run re-renders from the history.
    let id = m["id"].to_string();
    let out = hpelt(db, data.path())
        .args(["history", "show", &id, "--format", "text"])
        .output()
        .unwrap();
    assert!(ok(&out, "show merged").contains("100"));
    // Asked for where the history is off: refused, not ignored.
    let out = pelt()
        .arg("report")
        .args(&files)
        .args(["--merge", "--record"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("PELT_NO_HISTORY"));
}

// ----------------------------------------------------------------- tests

fn sqlite() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    (dir, path)
}

#[test]
fn sqlite_record_query_trend() {
    let (_d, p) = sqlite();
    record_query_trend(&Db::Sqlite(p));
}

#[test]
fn sqlite_baselines() {
    let _machine = pelt_testkit::pelt::exclusive();
    let (_d, p) = sqlite();
    baselines(&Db::Sqlite(p));
}

#[test]
fn sqlite_shards_are_parts_and_the_merged_run_is_recorded() {
    let (_d, p) = sqlite();
    shards_are_parts_and_the_merged_run_is_recorded(&Db::Sqlite(p));
}

#[test]
fn sqlite_secrets_never_written() {
    let (_d, p) = sqlite();
    secrets_never_written(&Db::Sqlite(p));
}

#[test]
fn sqlite_two_writers_100_rows() {
    let (_d, p) = sqlite();
    two_writers(&Db::Sqlite(p));
}

#[test]
fn sqlite_a_run_without_o_is_spooled_and_stored_byte_for_byte() {
    let (_d, p) = sqlite();
    a_run_without_o_is_spooled_and_stored_byte_for_byte(&Db::Sqlite(p));
}

#[test]
fn sqlite_killed_while_recording() {
    let (_d, p) = sqlite();
    killed_while_recording(&Db::Sqlite(p));
}

#[test]
fn postgres_same_history_tests() {
    let cluster = Cluster::start();
    fn db(c: &Cluster) -> Db<'_> {
        Db::Postgres {
            cluster: c,
            url: c.fresh_db(),
        }
    }
    record_query_trend(&db(&cluster));
    secrets_never_written(&db(&cluster));
    two_writers(&db(&cluster));
    killed_while_recording(&db(&cluster));
    a_run_without_o_is_spooled_and_stored_byte_for_byte(&db(&cluster));
    {
        let _machine = pelt_testkit::pelt::exclusive();
        baselines(&db(&cluster));
    }
    // A database URL's password reaches no message.
    let out = pelt()
        .args(["history", "--history"])
        .arg(format!(
            "postgres://nobody:S3CRET@127.0.0.1:{}/none",
            cluster.port
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("S3CRET") && err.lines().count() == 1, "{err}");
}

#[test]
fn newer_schema_is_refused_with_exit_2_before_any_load() {
    let (_d, p) = sqlite();
    let data = tempfile::tempdir().unwrap();
    let db = Db::Sqlite(p.clone());
    db.store();
    {
        use pelt_store::Backend;
        let mut raw = pelt_store::sqlite::Sqlite::open(&p).unwrap();
        raw.execute(
            "UPDATE pelt_meta SET value = '99' WHERE key = 'schema_version'",
            &[],
        )
        .unwrap();
    }
    let before = std::fs::read(&p).unwrap();
    let srv = server(None);
    let out = hpelt(&db, data.path())
        .args([
            "run",
            &format!("http://{}/", srv.local_addr()),
            "-n",
            "5",
            "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("newer pelt") && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(srv.requests(), 0, "load was sent");
    assert_eq!(std::fs::read(&p).unwrap(), before);
    // --no-history runs all the same.
    let out = hpelt(&db, data.path())
        .args([
            "run",
            &format!("http://{}/", srv.local_addr()),
            "-n",
            "5",
            "-q",
            "--no-history",
        ])
        .output()
        .unwrap();
    ok(&out, "--no-history");
}

#[test]
fn corrupt_database_is_reported_not_overwritten() {
    let (_d, p) = sqlite();
    let data = tempfile::tempdir().unwrap();
    let junk: Vec<u8> = b"SQLite format 3\0"
        .iter()
        .copied()
        .chain((0..9000u32).map(|i| (i % 97) as u8))
        .collect();
    std::fs::write(&p, &junk).unwrap();
    let db = Db::Sqlite(p.clone());
    for args in [
        &["history"][..],
        &["history", "rm", "1"],
        &["history", "check"],
    ] {
        let out = hpelt(&db, data.path()).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("damaged") && err.lines().count() == 1, "{err}");
    }
    let srv = server(None);
    let out = hpelt(&db, data.path())
        .args([
            "run",
            &format!("http://{}/", srv.local_addr()),
            "-n",
            "5",
            "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&p).unwrap(), junk, "the file was changed");
}

#[test]
fn saved_runs_are_imported_once_and_redacted() {
    let data = tempfile::tempdir().unwrap();
    let srv = server(None);
    let url = format!("http://{}/", srv.local_addr());
    // Two saved runs, as an older pelt left them: one with a secret in
    // its header (pelt redacts now, so it is written here by hand).
    for i in 0..2 {
        let out = pelt()
            .env("PELT_DATA_DIR", data.path())
            .args(["run", &url, "-n", "5", "-q", "--no-history"])
            // The second is one shard of a run: imported as a part.
            .args(if i == 1 { &["--shard", "0/2"][..] } else { &[] })
            .output()
            .unwrap();
        ok(&out, "saved run");
    }
    let runs = data.path().join("runs");
    let saved = files_under(&runs);
    assert_eq!(saved.len(), 2);
    {
        let bytes = std::fs::read(&saved[0]).unwrap();
        let mut r = pelt_core::ResultsReader::open(&bytes[..]).unwrap();
        let mut header = r.header().clone();
        header.config.targets[0]
            .headers
            .push(("Authorization".into(), "Bearer S3CRET".into()));
        let mut out = Vec::new();
        // Unredacted: a file from before pelt redacted what it wrote,
        // which the import must redact itself.
        let mut w = pelt_core::ResultsWriter::unredacted(&mut out, &header).unwrap();
        while let Some((s, rec)) = r.next_interval().unwrap() {
            w.interval(s, &rec).unwrap();
        }
        w.finish(r.footer().unwrap()).unwrap();
        std::fs::write(&saved[0], out).unwrap();
    }
    let first = pelt()
        .env("PELT_DATA_DIR", data.path())
        .env_remove("PELT_HISTORY")
        .env_remove("PELT_NO_HISTORY")
        .args(["history", "--format", "json"])
        .output()
        .unwrap();
    let rows: Value = serde_json::from_str(&ok(&first, "history")).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 2);
    let mut kinds: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    kinds.sort_unstable();
    assert_eq!(kinds, ["import", "shard"], "{rows}");
    assert!(String::from_utf8_lossy(&first.stderr).contains("imported 2 saved run(s)"));
    // Once: the next command imports nothing, and a new run adds one.
    let out = pelt()
        .env("PELT_DATA_DIR", data.path())
        .env_remove("PELT_HISTORY")
        .env_remove("PELT_NO_HISTORY")
        .args(["run", &url, "-n", "5", "-q"])
        .output()
        .unwrap();
    ok(&out, "run");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("imported"));
    let db = Db::Sqlite(data.path().join("history.db"));
    assert_eq!(db.count(), 3);
    let bytes = std::fs::read(data.path().join("history.db")).unwrap();
    assert!(!bytes.windows(SECRET.len()).any(|w| w == SECRET));
}

/// A recorded run is run again from the history; its secret header was
/// never stored, so rerun asks for it rather than sending REDACTED.
#[test]
fn a_run_is_rerun_from_the_history_with_its_secret_given_again() {
    let srv = pelt_testkit::pelt::server(None);
    let url = format!("http://{}/", srv.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let db = db.to_str().unwrap();
    let out = pelt()
        .args(["run", &url, "-n", "5", "-c", "1", "--history", db])
        .args(["-H", "Authorization: Bearer S3CRET", "--label", "nightly"])
        .output()
        .unwrap();
    ok(&out, "run");
    let listed = pelt()
        .args(["history", "--history", db, "--format", "json"])
        .output()
        .unwrap();
    let rows: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    let id = rows[0]["id"].as_i64().unwrap().to_string();

    let refused = pelt()
        .args(["history", "rerun", &id, "--history", db])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("-H 'Authorization: ...'"), "{err}");
    assert_eq!(srv.requests(), 5, "nothing sent without the secret");

    let again = pelt()
        .args(["history", "rerun", &id, "--history", db])
        .args(["-H", "Authorization: Bearer S3CRET"])
        .output()
        .unwrap();
    ok(&again, "rerun");
    assert_eq!(srv.requests(), 10);
    let listed = pelt()
        .args([
            "history",
            "--history",
            db,
            "--format",
            "json",
            "--tag",
            &format!("rerun_of={id}"),
        ])
        .output()
        .unwrap();
    let rows: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["label"], "nightly");
    let bytes = std::fs::read(dir.path().join("h.db")).unwrap();
    assert!(
        !bytes.windows(6).any(|w| w == b"S3CRET"),
        "the secret is not stored"
    );
}

#[test]
fn removing_an_unknown_run_is_one_error_not_removed_0_then_an_error() {
    // Issue 22 §8: `pelt history rm 9999` printed "removed 0 run(s)" and
    // then an error.
    let (_d, p) = sqlite();
    let data = tempfile::tempdir().unwrap();
    let db = Db::Sqlite(p);
    let out = hpelt(&db, data.path())
        .args(["history", "rm", "9999"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("removed 0"), "{err}");
    assert!(
        err.contains("no run 9999") && err.contains("nothing removed"),
        "{err}"
    );
}

/// Issue 22 §4 ("never ignore a flag silently"): --baseline where
/// PELT_NO_HISTORY turns the history off was skipped without a word; it is
/// refused before any load.
#[test]
fn a_baseline_without_a_history_is_refused_before_any_load() {
    let srv = server(None);
    let url = format!("http://{}/", srv.local_addr());
    for cmd in [&["run"][..], &["sweep", "--max-rate", "100"][..]] {
        let out = pelt()
            .args(cmd)
            .args([url.as_str(), "--baseline", "last:3"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(err.contains("PELT_NO_HISTORY"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    assert_eq!(srv.requests(), 0, "no load was sent");
}

/// Issue 23 §3: the README's CI gate, `pelt run URL --rate R -d D
/// --baseline last:N --fail-on regression`, against a server slowed from
/// 2 ms to 20 ms at the same URL. It printed INCONCLUSIVE and exited 0
/// (one new run needed 39 baseline runs for a rank-test verdict); now the
/// run is judged against the baseline's prediction interval and fails.
/// Before enough runs are recorded the gate refuses to start (exit 2,
/// naming how many are needed) instead of passing for want of evidence.
fn one_run_gate_fires_when_the_server_slows(db: &Db<'_>) {
    let data = tempfile::tempdir().unwrap();
    let serve = |delay_ms: u64, port: u16| {
        pelt_target::Server::bind(
            std::net::SocketAddr::from(([127, 0, 0, 1], port)),
            pelt_target::ServeConfig {
                threads: 1,
                delay: std::time::Duration::from_millis(delay_ms),
                ..pelt_target::ServeConfig::default()
            },
        )
        .and_then(pelt_target::Server::spawn)
        .expect("start the built-in server")
    };
    let fast = serve(2, 0);
    let port = fast.local_addr().port();
    let url = format!("http://127.0.0.1:{port}/");
    let run = |gate: bool| {
        let mut c = hpelt(db, data.path());
        c.args(["run", &url, "--rate", "300", "-d", "1s", "-q"]);
        if gate {
            c.args(["--baseline", "last:20", "--fail-on", "regression"]);
        }
        c.output().unwrap()
    };
    // No baseline yet: exit 2 before any load, saying how many runs.
    let out = run(true);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: --fail-on needs a baseline of at least 3 recorded runs")
            && err.contains("has 0; record 3 more"),
        "{err}"
    );
    assert_eq!(db.count(), 0, "nothing was run, so nothing recorded");
    for _ in 0..5 {
        ok(&run(false), "baseline run");
    }
    // The server at the same URL, ten times slower.
    drop(fast);
    let _slow = serve(20, port);
    let out = run(true);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("prediction"), "{err}");
    let p50 = err.lines().find(|l| l.starts_with("p50 ")).unwrap();
    assert!(p50.contains("REGRESSION (material)"), "{err}");
    // Issue 23: a baseline precedes the run it judges, and the report
    // says so, and why its material verdicts stand.
    assert!(
        err.contains("Sequential, as a baseline is: every baseline run started before this one")
            && err.contains("Material verdicts stand"),
        "{err}"
    );
}

#[test]
fn sqlite_one_run_gate_fires_when_the_server_slows() {
    let _machine = pelt_testkit::pelt::exclusive();
    let (_d, p) = sqlite();
    one_run_gate_fires_when_the_server_slows(&Db::Sqlite(p));
}
