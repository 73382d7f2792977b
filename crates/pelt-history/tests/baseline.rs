//! Baselines of recorded runs ([`pelt_history::baseline`]) judged by the
//! library, from runs whose figures are known because they are made up
//! (pelt-testkit's synthetic run), recorded in a SQLite file and in a
//! private PostgreSQL cluster: a run like the baseline passes, a slower
//! one regresses, unlike work is refused (or allowed and listed), the
//! runs compared are never their own baseline, interrupted runs and runs
//! of other work are left out or refused. `--baseline`'s flags, exit
//! codes and output are the binary's tests (crates/pelt/tests/history.rs).

use pelt_history::baseline::{against_files, against_run, Spec};
use pelt_history::compare::Options;
use pelt_history::{RecordSpec, Recording};
use pelt_testkit::postgres::Cluster;
use pelt_testkit::summary::Synthetic;
use serde_json::Value;
use std::path::{Path, PathBuf};

const FAST: &str = "http://127.0.0.1:8080/";
const SLOW: &str = "http://127.0.0.1:8080/?delay=4ms";

/// A closed loop of one connection, 20 responses in a second to `url`,
/// each about `base_ns` plus up to 0.4 ms (varied run to run by `k`),
/// the `k`-th second of the test's timeline.
fn closed(url: &str, base_ns: u64, k: u64) -> Synthetic {
    Synthetic {
        urls: vec![url.into()],
        rate: false,
        connections: 1,
        seconds: 1,
        per_second: 20,
        base_ns: base_ns + (k % 7) * 20_000,
        started_unix_ms: 1_700_000_000_000 + k * 1000,
        ..Synthetic::clean()
    }
}

/// Records `run` in history `db` with `tags` (its results file written
/// to `dir`, as `pelt run -o` keeps it); returns its id.
fn record(db: &str, dir: &Path, run: &Synthetic, tags: &[(&str, &str)]) -> (i64, PathBuf) {
    let file = dir.join(format!("{}.pelt", run.started_unix_ms));
    run.write(&file);
    let spec = RecordSpec {
        history: Some(db.into()),
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..RecordSpec::default()
    };
    let mut rec = Recording::start(&spec)
        .expect("the history opens")
        .expect("a history is named");
    let summary = pelt_campaign::results::load(&file).unwrap();
    let id = rec.record(&summary, Some(&file), None).expect("recorded");
    (id, file)
}

fn store(db: &str) -> pelt_store::Store {
    pelt_store::open(db).expect("open the history")
}

fn baselines(db: &str) {
    let dir = tempfile::tempdir().unwrap();
    let tag = Spec::parse("tag:release-1.4").unwrap();
    // 40 baseline runs: enough for four new runs to get a 95 % verdict
    // by rank test.
    let mut k = 0;
    let mut next = || {
        k += 1;
        k
    };
    for _ in 0..40 {
        record(
            db,
            dir.path(),
            &closed(FAST, 500_000, next()),
            &[("release-1.4", "")],
        );
    }
    // A run like the baseline passes a gate on material regressions.
    let like = closed(FAST, 500_000, next());
    let (id, _) = record(db, dir.path(), &like, &[]);
    let c = against_run(&mut store(db), &tag, &like.summary(), Some(id), false).unwrap();
    assert!(
        c.text().contains("baseline tag:release-1.4"),
        "{}",
        c.text()
    );
    assert!(!c.regressed(true), "{}", c.text());
    assert_eq!(c.a.len(), 40);
    // A slowdown asked for in the query string makes the URL differ from
    // the baseline's: refused, naming it (issue 23 §4) ...
    let slow = closed(SLOW, 4_000_000, next());
    let err = against_run(&mut store(db), &tag, &slow.summary(), None, false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("do not measure the same work") && err.contains("?delay=4ms"),
        "{err}"
    );
    // ... unless allowed. A slower one regresses.
    let (id, _) = record(db, dir.path(), &slow, &[]);
    let c = against_run(&mut store(db), &tag, &slow.summary(), Some(id), true).unwrap();
    assert!(c.regressed(false), "{}", c.text());
    assert!(c.text().contains("REGRESSION"), "{}", c.text());

    // Files against recorded runs (`pelt compare --baseline`), recorded
    // themselves as `pelt run -o` records them.
    let files: Vec<PathBuf> = (0..4)
        .map(|_| record(db, dir.path(), &closed(SLOW, 4_000_000, next()), &[]).1)
        .collect();
    let allow = Options {
        allow_mismatch: true,
        ..Options::default()
    };
    let c = against_files(&mut store(db), &tag, &files, &allow).unwrap();
    assert!(c.regressed(false), "{}", c.text());
    let doc: Value = serde_json::from_str(&c.json()).unwrap();
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
    // The recorded runs compared are never their own baseline: A holds
    // the one earlier run of the slow URL, not the four compared.
    let last10 = Spec::parse("last:10").unwrap();
    let text = against_files(&mut store(db), &last10, &files, &Options::default())
        .unwrap()
        .text();
    assert!(text.contains("A = 1 run(s)"), "{text}");
    assert!(
        text.contains("(the runs compared themselves, recorded)"),
        "{text}"
    );
    // last:N takes the newest N others of the URL.
    let last3 = Spec::parse("last:3").unwrap();
    let text = against_files(&mut store(db), &last3, &files[..1], &Options::default())
        .unwrap()
        .text();
    assert!(text.contains("A = 3 run(s)"), "{text}");

    // An interrupted run never enters a baseline (issue 23 §4).
    let (stopped, _) = record(
        db,
        dir.path(),
        &Synthetic {
            interrupted: true,
            ..closed(FAST, 500_000, next())
        },
        &[("release-1.4", "")],
    );
    let like = closed(FAST, 500_000, next());
    let c = against_run(&mut store(db), &tag, &like.summary(), None, false).unwrap();
    assert!(
        c.text().contains(&format!(
            "Left out of the baseline: #{stopped} (interrupted or incomplete)"
        )),
        "{}",
        c.text()
    );
    // A rate run among closed loops: a tag that names it is refused
    // (mixed baselines), last:N passes over it.
    record(
        db,
        dir.path(),
        &Synthetic {
            urls: vec![FAST.into()],
            per_second: 100,
            seconds: 1,
            started_unix_ms: 1_700_000_000_000 + next() * 1000,
            ..Synthetic::clean()
        },
        &[("release-1.4", "")],
    );
    let like = closed(FAST, 500_000, next());
    let err = against_run(&mut store(db), &tag, &like.summary(), None, false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("(load: rate 100/s vs closed loop, 1 connection)"),
        "{err}"
    );
    let last5 = Spec::parse("last:5").unwrap();
    let c = against_run(&mut store(db), &last5, &like.summary(), None, false).unwrap();
    let text = c.text();
    assert!(text.contains("A = 5 run(s)"), "{text}");
    assert!(
        text.contains("Passed over 1 run(s) of the URL whose work differs, like #"),
        "{text}"
    );
    // A baseline that names no run.
    let none = Spec::parse("label:none-such").unwrap();
    let err = against_files(&mut store(db), &none, &files[..1], &Options::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("no recorded run matches"), "{err}");
}

/// Issue 23 §3: one new run against a few recorded ones is judged by the
/// baseline's prediction interval: a server ten times slower at the same
/// URL is a material regression, and the report says the design is
/// sequential, as a baseline is, and why its verdicts stand.
fn one_run_against_a_few_is_judged_by_prediction(db: &str) {
    let dir = tempfile::tempdir().unwrap();
    let rate = |base_ns: u64, k: u64| Synthetic {
        urls: vec![FAST.into()],
        per_second: 300,
        seconds: 1,
        base_ns: 2_000_000 + base_ns + (k % 3) * 50_000,
        started_unix_ms: 1_700_000_000_000 + k * 1000,
        ..Synthetic::clean()
    };
    for k in 0..5 {
        record(db, dir.path(), &rate(0, k), &[]);
    }
    let slow = rate(18_000_000, 10);
    let (id, _) = record(db, dir.path(), &slow, &[]);
    let last20 = Spec::parse("last:20").unwrap();
    let c = against_run(&mut store(db), &last20, &slow.summary(), Some(id), false).unwrap();
    let text = c.text();
    assert!(c.regressed(true), "{text}");
    assert!(text.contains("prediction"), "{text}");
    let p50 = text.lines().find(|l| l.starts_with("p50 ")).unwrap();
    assert!(p50.contains("REGRESSION (material)"), "{text}");
    assert!(
        text.contains("Sequential, as a baseline is: every baseline run started before this one")
            && text.contains("Material verdicts stand"),
        "{text}"
    );
}

#[test]
fn sqlite_baselines() {
    let dir = tempfile::tempdir().unwrap();
    baselines(dir.path().join("h.db").to_str().unwrap());
}

#[test]
fn sqlite_one_run_against_a_few_is_judged_by_prediction() {
    let dir = tempfile::tempdir().unwrap();
    one_run_against_a_few_is_judged_by_prediction(dir.path().join("h.db").to_str().unwrap());
}

#[test]
fn postgres_baselines() {
    let cluster = Cluster::start();
    baselines(&cluster.fresh_db());
    one_run_against_a_few_is_judged_by_prediction(&cluster.fresh_db());
}
