//! The history through the library ([`Recording`], [`Trend`],
//! [`pelt_history::render`]), from runs whose figures are known because
//! they are made up (pelt-testkit's synthetic run), in a SQLite file and
//! in a private PostgreSQL cluster: recording with tags and labels,
//! queries, the recorded report and results file, trends of like runs,
//! listings, removal. `pelt history`'s flags, exit codes and output, and
//! what only a process shows (two writers, a kill mid-recording, the
//! spooled copy, secrets in every file pelt writes), are the binary's
//! tests (crates/pelt/tests/history.rs).

use pelt_history::{render, RecordSpec, Recording, Trend};
use pelt_store::{Filter, Metric};
use pelt_testkit::postgres::Cluster;
use pelt_testkit::summary::Synthetic;
use std::path::Path;

/// A closed loop of two connections: 30 responses over 3 s to `url`,
/// each about `base_ns` plus up to 0.4 ms, started `k` seconds after
/// `t0` (Unix ms).
fn closed(url: &str, base_ns: u64, t0: u64, k: u64) -> Synthetic {
    Synthetic {
        urls: vec![url.into()],
        rate: false,
        connections: 2,
        per_second: 10,
        base_ns,
        started_unix_ms: t0 + k * 1000,
        ..Synthetic::clean()
    }
}

/// Records `run` in `db` with `label` and `tags`, its results file kept
/// in `dir` (as `pelt run -o` keeps it); returns its id.
fn record(
    db: &str,
    dir: &Path,
    run: &Synthetic,
    label: Option<&str>,
    tags: &[(&str, &str)],
) -> i64 {
    let file = dir.join(format!("{}.pelt", run.started_unix_ms));
    run.write(&file);
    let spec = RecordSpec {
        history: Some(db.into()),
        label: label.map(str::to_string),
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..RecordSpec::default()
    };
    let mut rec = Recording::start(&spec).unwrap().expect("a history");
    let summary = pelt_campaign::results::load(&file).unwrap();
    rec.record(&summary, Some(&file), None).unwrap()
}

fn ids(rows: &[pelt_store::RunRow]) -> Vec<i64> {
    rows.iter().map(|r| r.id).collect()
}

fn record_query_trend(db: &str) {
    let dir = tempfile::tempdir().unwrap();
    let url = "http://127.0.0.1:8080/";
    let slow = "http://127.0.0.1:8080/?delay=3ms";
    // Started a few minutes ago, whole seconds apart.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let t0 = (now_ms / 1000 - 300) * 1000;
    let first = closed(url, 500_000, t0, 0);
    let id1 = record(
        db,
        dir.path(),
        &first,
        Some("nightly"),
        &[("env", "staging")],
    );
    record(
        db,
        dir.path(),
        &closed(url, 500_000, t0, 10),
        None,
        &[("env", "prod"), ("release-1.4", "")],
    );
    record(
        db,
        dir.path(),
        &closed(slow, 3_000_000, t0, 20),
        Some("nightly"),
        &[],
    );
    let mut store = pelt_store::open(db).unwrap();
    let mut list = |f: Filter| store.list(&f).unwrap();

    let all = list(Filter::default());
    assert_eq!(all.len(), 3);
    assert_eq!(all[0].id, id1);
    assert!(all[0]
        .tags
        .contains(&("env".to_string(), "staging".to_string())));
    assert_eq!(all[0].label.as_deref(), Some("nightly"));
    assert_eq!(all[0].figures.requests, 30);
    assert!(all[1]
        .tags
        .contains(&("release-1.4".to_string(), String::new())));
    // Queries by URL, tag, label, date and count.
    let by = |f: fn(&mut Filter)| {
        let mut filter = Filter::default();
        f(&mut filter);
        filter
    };
    let of_url = |u: &str| Filter {
        url: Some(u.into()),
        ..Filter::default()
    };
    assert_eq!(list(of_url(url)).len(), 2);
    assert_eq!(list(of_url(slow)).len(), 1);
    assert_eq!(
        ids(&list(by(|f| f
            .tags
            .push(("env".into(), Some("prod".into())))))),
        vec![id1 + 1]
    );
    assert_eq!(list(by(|f| f.tags.push(("env".into(), None)))).len(), 2);
    assert_eq!(list(by(|f| f.label = Some("nightly".into()))).len(), 2);
    assert_eq!(ids(&list(by(|f| f.last = Some(1)))), vec![id1 + 2]);
    let day_ago = now_ms as i64 - 86_400_000;
    let since = Filter {
        since_ms: Some(day_ago),
        ..Filter::default()
    };
    assert_eq!(list(since).len(), 3);
    // 2000-01-01T00:00:00Z
    assert_eq!(list(by(|f| f.until_ms = Some(946_684_800_000))).len(), 0);

    // The recorded report is the run's own JSON report, byte for byte.
    let stored = store.get(id1).unwrap().unwrap();
    assert_eq!(
        stored.report_json,
        pelt_report::render(&first.summary(), pelt_report::Format::Json)
    );
    // Other formats are rendered from the results file the history keeps.
    let bytes = pelt_history::results_bytes(&stored).unwrap();
    let kept = pelt_history::summary_of(&bytes).unwrap();
    let text = pelt_report::render(&kept, pelt_report::Format::Text);
    assert!(text.contains("Requests     30"), "{text}");

    // The label names runs of two URLs: a trend of unlike runs is
    // refused, naming the difference (issue 23 §4) ...
    let nightly = || by(|f| f.label = Some("nightly".into()));
    let err = Trend::of(&mut store, nightly(), Metric::P50, false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("do not measure the same work as the newest run")
            && err.contains("?delay=3ms"),
        "{err}"
    );
    // ... unless allowed: the trend follows the slow run.
    let t = Trend::of(&mut store, nightly(), Metric::P50, true).unwrap();
    let values: Vec<f64> = t.values.iter().map(|v| v.unwrap()).collect();
    assert_eq!(values.len(), 2);
    assert!(values[1] >= 3e6 && values[0] < 3e6, "{values:?}");
    let text = Trend::of(&mut store, of_url(url), Metric::P99, false)
        .unwrap()
        .text();
    assert!(text.contains("p99 of 2 run(s)"), "{text}");
    let html = Trend::of(&mut store, Filter::default(), Metric::P99, true)
        .unwrap()
        .html();
    assert!(
        html.contains("<svg") && html.contains("p99 trend"),
        "{html:.300}"
    );
    let rows = store.list(&Filter::default()).unwrap();
    assert_eq!(render::csv_table(&rows).lines().count(), 4);

    // Removed: gone from every query.
    assert_eq!(store.remove(&[id1]).unwrap(), vec![id1]);
    assert_eq!(store.list(&Filter::default()).unwrap().len(), 2);
    assert!(store.get(id1).unwrap().is_none());
    assert_eq!(store.check().unwrap(), vec!["ok".to_string()]);
}

#[test]
fn sqlite_record_query_trend() {
    let dir = tempfile::tempdir().unwrap();
    record_query_trend(dir.path().join("h.db").to_str().unwrap());
}

#[test]
fn postgres_record_query_trend() {
    let cluster = Cluster::start();
    record_query_trend(&cluster.fresh_db());
}
