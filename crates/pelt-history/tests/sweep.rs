//! A sweep remembered by the library (issue 22 §4), from made-up steps
//! (pelt-testkit's synthetic run): its steps recorded as kind `step`
//! (tagged with the sweep and their number), the sweep as kind `sweep`
//! with its capacity, tags and label; the capacity's trend follows it,
//! neither is a run's baseline, and a sweep's capacity is judged against
//! recorded sweeps'. `pelt sweep --history/--baseline`'s flags and output
//! are the binary's tests (crates/pelt/tests/sweep.rs).

use pelt_history::baseline::{against_sweep, Spec};
use pelt_history::{RecordSpec, Recording, Trend};
use pelt_store::{Filter, Metric};
use pelt_testkit::summary::Synthetic;
use std::path::PathBuf;

/// A sweep's step: a rate run at `rate` for a second, written to `dir`.
fn step(dir: &std::path::Path, rate: u64, k: u64) -> (pelt_core::RunSummary, PathBuf) {
    let s = Synthetic {
        per_second: rate,
        seconds: 1,
        started_unix_ms: 1_700_000_000_000 + k * 1000,
        ..Synthetic::clean()
    };
    let file = dir.join(format!("step-{k}.pelt"));
    s.write(&file);
    (pelt_campaign::results::load(&file).unwrap(), file)
}

fn recording(db: &str, label: &str, tags: &[(&str, &str)]) -> Recording {
    let spec = RecordSpec {
        history: Some(db.into()),
        label: Some(label.into()),
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..RecordSpec::default()
    };
    Recording::for_sweep(&spec)
        .expect("the history opens")
        .expect("a history is named")
}

#[test]
fn a_sweep_is_recorded_with_its_capacity_and_steps() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let db = db.to_str().unwrap();
    let mut rec = recording(db, "nightly", &[("env", "ci")]);
    let steps = [step(dir.path(), 50, 0), step(dir.path(), 100, 2)];
    for (i, (summary, file)) in steps.iter().enumerate() {
        rec.record_step(summary, file, "sweep-1", i).unwrap();
    }
    let report = r#"{"capacity": 100.0}"#.to_string();
    let (last, last_file) = &steps[1];
    let id = rec
        .record_sweep(last, last_file, "sweep-1", Some(100.0), report.clone())
        .unwrap();
    drop(rec);

    let mut store = pelt_store::open(db).unwrap();
    let rows = store.list(&Filter::default()).unwrap();
    let of = |kind: &str| -> Vec<&pelt_store::RunRow> {
        rows.iter().filter(|r| r.kind == kind).collect()
    };
    assert_eq!(of("step").len(), 2, "{rows:?}");
    for s in of("step") {
        let keys: Vec<&str> = s.tags.iter().map(|(k, _)| k.as_str()).collect();
        assert!(
            keys.contains(&"step") && keys.contains(&"sweep"),
            "{keys:?}"
        );
    }
    let sweeps = of("sweep");
    assert_eq!(sweeps.len(), 1, "{rows:?}");
    assert!(sweeps[0]
        .tags
        .contains(&("env".to_string(), "ci".to_string())));
    assert_eq!(sweeps[0].label.as_deref(), Some("nightly"));
    assert_eq!(rows.len(), 3, "nothing else: {rows:?}");

    // The trend of capacity: the sweep's 100 req/s.
    let t = Trend::of(&mut store, Filter::default(), Metric::Capacity, false).unwrap();
    assert_eq!(t.values, [Some(100.0)], "{}", t.text());
    // The sweep's row shows the sweep's own report.
    assert_eq!(store.get(id).unwrap().unwrap().report_json, report);
    // Neither steps nor sweeps are a run's baseline.
    let err = Spec::parse("last:5")
        .unwrap()
        .select(&mut store, std::slice::from_ref(&steps[0].0), None, false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no recorded run matches"), "{err}");

    // A sweep's capacity is judged against recorded sweeps'. 40 that
    // held 1,000 req/s make a baseline against which one new sweep can
    // get a verdict (Mann-Whitney, 1 against 39+).
    let mut fast = recording(db, "fast", &[]);
    for i in 0..40 {
        fast.record_sweep(
            last,
            last_file,
            &format!("fast-{i}"),
            Some(1000.0),
            "{}".into(),
        )
        .unwrap();
    }
    drop(fast);
    let mut judge = |spec: &str| {
        against_sweep(
            &mut store,
            &Spec::parse(spec).unwrap(),
            last,
            None,
            Some(100.0),
        )
    };
    // 100 req/s against 1,000: a regression.
    let c = judge("label:fast").unwrap().comparison.unwrap();
    let text = c.text();
    assert!(c.regressed(false), "{text}");
    assert!(
        text.contains("capacity") && text.contains("REGRESSION"),
        "{text}"
    );
    assert!(text.contains("A = 40 run(s)"), "{text}");
    // Against its own kind (100 req/s): no regression.
    let c = judge("tag:env=ci").unwrap().comparison.unwrap();
    assert!(!c.regressed(false), "{}", c.text());
    assert!(c.text().contains("baseline tag:env=ci"), "{}", c.text());
    // Only sweeps are a sweep's baseline.
    let err = judge("label:none-such").unwrap_err().to_string();
    assert!(err.contains("no recorded sweep"), "{err}");
    // A sweep that found no capacity has nothing to set against it.
    let none = against_sweep(
        &mut store,
        &Spec::parse("label:fast").unwrap(),
        last,
        None,
        None,
    )
    .unwrap();
    assert!(none.comparison.is_none());
}
