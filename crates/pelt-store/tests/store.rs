//! The store against real databases: a SQLite file in a temp dir, and a
//! private PostgreSQL cluster (the same checks, one function each, run
//! against both).

use pelt_core::{
    Environment, HttpOptions, Load, Order, Recorder, RunConfig, RunFooter, RunHeader, Sample, Stop,
    SummaryBuilder, Target, Url,
};
use pelt_store::{Backend, Filter, Kind, Metric, NewRun, Results, Store, StoreError, Value};
#[cfg(feature = "postgres")]
use pelt_testkit::postgres::Cluster;
use std::time::Duration;

/// A finished run of `n` requests taking `ms` each, started at `start_ms`.
fn run(url: &str, n: u64, ms: u64, start_ms: u64) -> pelt_core::RunSummary {
    let config = RunConfig {
        targets: vec![Target {
            method: "GET".into(),
            url: Url::parse(url).unwrap(),
            headers: vec![("Accept".into(), "*/*".into())],
            body: Vec::new(),
            weight: 1,
        }]
        .into(),
        order: Order::default(),
        think: None,
        load: Load::closed(1),
        stop: Stop {
            requests: Some(n),
            duration: None,
        },
        warmup: Duration::ZERO,
        threads: 1,
        http: HttpOptions::default(),
        shard: None,
        run_id: None,
        start_at_unix_ns: None,
        send_window: Default::default(),
        arrivals: Default::default(),
        abort_on: Vec::new(),
        scenario: None,
    };
    let header = RunHeader {
        config,
        env: Environment {
            pelt_version: "test".into(),
            os: "linux".into(),
            arch: "x86_64".into(),
            cores: 1,
            threads: 1,
            target_addrs: vec![],
            started_unix_ms: start_ms,
            link: None,
            debug_build: false,
        },
        measure_start_unix_ns: start_ms * 1_000_000,
        measure_from_ns: 0,
        shard: None,
        late_start_ns: 0,
    };
    let mut rec = Recorder::new();
    for i in 0..n {
        let t = i * ms * 1_000_000;
        rec.record(&Sample {
            target: 0,
            intended: t,
            sent: Some(t),
            first_byte: Some(t + ms * 1_000_000),
            done: t + ms * 1_000_000,
            status: 200,
            bytes_in: 100,
            body_bytes: 10,
            bytes_out: 50,
            reused: i > 0,
            error: None,
        });
    }
    let mut b = SummaryBuilder::new(header, None);
    b.add(start_ms / 1000, &rec);
    b.finish(Some(&RunFooter {
        duration_ns: n * ms * 1_000_000,
        elapsed_ns: n * ms * 1_000_000,
        warmup_requests: 0,
        interrupted: false,
        stopped_by: None,
        worker_load: vec![],
        server_software: None,
    }))
}

fn new_run(
    url: &str,
    ms: u64,
    start_ms: u64,
    tags: &[(&str, &str)],
    label: Option<&str>,
) -> NewRun<'static> {
    NewRun {
        kind: Kind::Run,
        label: label.map(str::to_string),
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        summary: std::borrow::Cow::Owned(run(url, 10, ms, start_ms)),
        report_json: format!("{{\"ms\":{ms}}}\n"),
        results: Results::Blob(vec![1, 2, 3, ms as u8]),
        capacity: None,
    }
}

fn record_and_query(location: &str) {
    let mut s = pelt_store::open(location).unwrap();
    assert_eq!(s.schema_version().unwrap(), pelt_store::SCHEMA_VERSION);
    let a = s
        .record(new_run(
            "http://127.0.0.1:1/a",
            2,
            1_000_000,
            &[("env", "staging")],
            Some("v1"),
        ))
        .unwrap();
    let b = s
        .record(new_run(
            "http://127.0.0.1:1/a",
            5,
            2_000_000,
            &[("env", "prod")],
            None,
        ))
        .unwrap();
    let c = s
        .record(new_run(
            "http://127.0.0.1:1/b",
            9,
            3_000_000,
            &[],
            Some("v1"),
        ))
        .unwrap();
    assert!(a < b && b < c);

    let all = s.list(&Filter::default()).unwrap();
    assert_eq!(all.iter().map(|r| r.id).collect::<Vec<_>>(), vec![a, b, c]);
    assert_eq!(
        all[0].tags,
        vec![("env".to_string(), "staging".to_string())]
    );
    near(2_000_000, all[0].figures.p50_ns);
    assert_eq!(all[2].figures.requests, 10);

    let ids =
        |f: &Filter, s: &mut Store| s.list(f).unwrap().iter().map(|r| r.id).collect::<Vec<_>>();
    let any = Filter::default;
    for (filter, expected) in [
        (
            Filter {
                url: Some("http://127.0.0.1:1/a".into()),
                ..any()
            },
            vec![a, b],
        ),
        (
            Filter {
                tags: vec![("env".into(), Some("prod".into()))],
                ..any()
            },
            vec![b],
        ),
        (
            Filter {
                tags: vec![("env".into(), None)],
                ..any()
            },
            vec![a, b],
        ),
        (
            Filter {
                label: Some("v1".into()),
                ..any()
            },
            vec![a, c],
        ),
        (
            Filter {
                since_ms: Some(2_000_000),
                ..any()
            },
            vec![b, c],
        ),
        (
            Filter {
                last: Some(2),
                ..any()
            },
            vec![b, c],
        ),
    ] {
        assert_eq!(ids(&filter, &mut s), expected, "{filter:?}");
    }

    // Figures as columns: a trend is a column over rows.
    let p99: Vec<f64> = all
        .iter()
        .map(|r| r.figures.get(Metric::P99).unwrap())
        .collect();
    assert!(p99[0] < p99[1] && p99[1] < p99[2], "{p99:?}");

    let got = s.get(b).unwrap().unwrap();
    assert_eq!(got.report_json, "{\"ms\":5}\n");
    assert_eq!(got.results, Results::Blob(vec![1, 2, 3, 5]));
    assert!(
        got.config_json.contains("\"path_and_query\":\"/a\""),
        "{}",
        got.config_json
    );
    assert!(s.get(c + 100).unwrap().is_none());

    assert_eq!(s.remove(&[b, c + 100]).unwrap(), vec![b]);
    assert_eq!(ids(&Filter::default(), &mut s), vec![a, c]);
    assert_eq!(s.check().unwrap(), vec!["ok".to_string()]);

    // Reopening migrates nothing and keeps everything.
    drop(s);
    let mut s = pelt_store::open(location).unwrap();
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 2);
    // A removed id is not given again.
    let d = s
        .record(new_run("http://127.0.0.1:1/a", 1, 4_000_000, &[], None))
        .unwrap();
    assert!(d > c);
}

/// A results file spooled to a temporary file (how `pelt run` keeps its
/// copy) is stored byte for byte, streamed in chunks: sizes around the
/// copy's and the backends' chunk sizes, and none.
fn spooled_results_are_stored_byte_for_byte(location: &str) {
    use std::io::Write;
    let mut s = pelt_store::open(location).unwrap();
    // Not a pattern that repeats at any chunk size: a chunk copied twice,
    // or dropped, changes the bytes.
    let mut x: u32 = 0x9e37_79b9;
    let noise: Vec<u8> = (0..3_000_017)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    for len in [0, 1, 4095, 4096, 8193, noise.len()] {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&noise[..len]).unwrap();
        let spool = pelt_store::Spool::new(file).unwrap();
        assert_eq!(spool.len(), len as u64);
        let mut run = new_run("http://127.0.0.1:1/s", 3, 5_000_000, &[], None);
        run.results = Results::Spool(spool);
        let id = s.record(run).unwrap();
        let got = s.get(id).unwrap().unwrap();
        match got.results {
            Results::Blob(bytes) => {
                assert_eq!(bytes.len(), len);
                assert!(bytes == noise[..len], "{len} bytes stored differently");
            }
            other => panic!("{len} bytes: expected a blob, got {other:?}"),
        }
    }
    assert_eq!(s.check().unwrap(), vec!["ok".to_string()]);
}

/// Percentiles come out of a histogram with 3 significant digits.
fn near(expected: u64, got: Option<u64>) -> u64 {
    let got = got.expect("a percentile");
    assert!(
        got.abs_diff(expected) * 100 <= expected,
        "{got} vs {expected}"
    );
    got
}

fn import_runs_once(location: &str) {
    let mut s = pelt_store::open(location).unwrap();
    let n = s
        .import_once("/data/runs", || {
            vec![new_run("http://127.0.0.1:1/i", 1, 5, &[], None)]
        })
        .unwrap();
    assert_eq!(n, Some(1));
    let again = s
        .import_once("/data/runs", || panic!("imported twice"))
        .unwrap();
    assert_eq!(again, None);
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 1);
}

fn concurrent_writers(location: &str) {
    pelt_store::open(location).unwrap();
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let location = location.to_string();
            std::thread::spawn(move || {
                let mut s = pelt_store::open(&location).unwrap();
                for i in 0..50u64 {
                    s.record(new_run(
                        "http://127.0.0.1:1/c",
                        1,
                        t * 100 + i,
                        &[("t", &t.to_string())],
                        None,
                    ))
                    .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut s = pelt_store::open(location).unwrap();
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 100);
    assert_eq!(s.check().unwrap(), vec!["ok".to_string()]);
}

#[test]
fn sqlite_records_and_queries() {
    let dir = tempfile::tempdir().unwrap();
    record_and_query(dir.path().join("h.db").to_str().unwrap());
}

#[test]
fn sqlite_spooled_results_are_stored_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    spooled_results_are_stored_byte_for_byte(dir.path().join("h.db").to_str().unwrap());
}

#[test]
fn sqlite_rows_list_in_id_order_whatever_their_start() {
    // Issue 22 §8: a run that started earlier but was recorded later
    // (overlapping runs) was listed before older ids.
    let dir = tempfile::tempdir().unwrap();
    let mut s = pelt_store::open(dir.path().join("h.db").to_str().unwrap()).unwrap();
    let a = s
        .record(new_run("http://127.0.0.1:1/a", 2, 2_000_000, &[], None))
        .unwrap();
    let b = s
        .record(new_run("http://127.0.0.1:1/b", 2, 1_000_000, &[], None))
        .unwrap();
    let listed: Vec<i64> = s
        .list(&Filter::default())
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(listed, vec![a, b]);
    let last = s
        .list(&Filter {
            last: Some(1),
            ..Filter::default()
        })
        .unwrap();
    assert_eq!(last.iter().map(|r| r.id).collect::<Vec<_>>(), vec![b]);
}

#[test]
fn sqlite_imports_once() {
    let dir = tempfile::tempdir().unwrap();
    import_runs_once(dir.path().join("h.db").to_str().unwrap());
}

#[test]
fn sqlite_two_writers_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    concurrent_writers(path.to_str().unwrap());
    let mut db = pelt_store::sqlite::Sqlite::open(&path).unwrap();
    let mode = db.query("PRAGMA journal_mode", &[]).unwrap();
    assert_eq!(mode[0][0], Value::Text("wal".into()));
}

/// Schema 2 (a sweep's capacity): a version-1 history, with a run in it,
/// is migrated in place; the old run keeps its figures, a new one its
/// capacity.
/// Schema 3: a scenario run's steps are recorded with it and read back;
/// a run of plain targets has none.
fn scenario_steps_round_trip(location: &str) {
    let mut s = pelt_store::open(location).unwrap();
    let mut journey = new_run("http://127.0.0.1:1/login", 4, 3_000_000, &[], None);
    // Target 0 is the scenario's one step (its 10 requests of 4 ms each).
    journey.summary.to_mut().config.scenario = Some(pelt_core::ScenarioSource {
        path: "journey.toml".into(),
        text: String::new(),
        steps: 1,
        goes_on: Vec::new(),
        names: vec!["browse/login".into(), "browse".into()],
    });
    let id = s.record(journey).unwrap();
    let plain = s
        .record(new_run("http://127.0.0.1:1/", 4, 3_000_001, &[], None))
        .unwrap();
    let steps = s.get(id).unwrap().unwrap().steps;
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert_eq!(
        (
            steps[0].name.as_str(),
            steps[0].requests,
            steps[0].failed,
            steps[0].skipped
        ),
        ("browse/login", 10, 0, 0)
    );
    // A step's histogram is a target's: values within 10 %.
    for p in [steps[0].p50_ns, steps[0].p99_ns] {
        let p = p.expect("a percentile");
        assert!(p.abs_diff(4_000_000) * 10 <= 4_000_000, "{p}");
    }
    assert!(s.get(plain).unwrap().unwrap().steps.is_empty());
}

#[test]
fn sqlite_version_1_gains_the_capacity_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let location = path.to_str().unwrap();
    let (old, before) = {
        let mut store = pelt_store::open(location).unwrap();
        let id = store
            .record(new_run("http://a/", 5, 100, &[], None))
            .unwrap();
        let rows = store.list(&Filter::default()).unwrap();
        (id, rows[0].figures)
    };
    {
        // Back to version 1, as a pelt before sweeps were recorded left it.
        let mut db = pelt_store::sqlite::Sqlite::open(&path).unwrap();
        db.batch(
            "ALTER TABLE pelt_runs DROP COLUMN capacity; ALTER TABLE pelt_runs DROP COLUMN steps_json; \
             ALTER TABLE pelt_runs RENAME COLUMN failed TO errors; \
             ALTER TABLE pelt_runs RENAME COLUMN failed_share TO error_ratio",
        )
        .unwrap();
        db.execute(
            "UPDATE pelt_meta SET value = '1' WHERE key = 'schema_version'",
            &[],
        )
        .unwrap();
    }
    let mut store = pelt_store::open(location).unwrap();
    // Schemas 2 (capacity), 3 (a scenario run's steps) and 4 (errors,
    // error_ratio renamed failed, failed_share) in turn.
    assert_eq!(store.schema_version().unwrap(), 4);
    assert!(store.get(old).unwrap().unwrap().steps.is_empty());
    scenario_steps_round_trip(location);
    let mut sweep = new_run("http://a/", 6, 100, &[], None);
    sweep.kind = Kind::Sweep;
    sweep.capacity = Some(1234.5);
    let new = store.record(sweep).unwrap();
    let rows = store.list(&Filter::default()).unwrap();
    let of = |id| rows.iter().find(|r| r.id == id).unwrap();
    assert_eq!(of(old).figures.capacity, None);
    assert_eq!(of(old).figures.requests, 10);
    assert_eq!(of(old).figures.failed, before.failed);
    assert_eq!(of(old).figures.failed_share, before.failed_share);
    assert_eq!(of(new).figures.capacity, Some(1234.5));
    assert_eq!(of(new).kind, "sweep");
    let only = store
        .list(&Filter {
            kinds: vec![Kind::Sweep],
            ..Filter::default()
        })
        .unwrap();
    assert_eq!(only.len(), 1);
}

#[test]
fn sqlite_newer_schema_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    pelt_store::open(path.to_str().unwrap()).unwrap();
    {
        let mut db = pelt_store::sqlite::Sqlite::open(&path).unwrap();
        db.execute(
            "UPDATE pelt_meta SET value = '99' WHERE key = 'schema_version'",
            &[],
        )
        .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    match pelt_store::open(path.to_str().unwrap()) {
        Err(StoreError::Newer {
            found: 99, known, ..
        }) => {
            assert_eq!(known, pelt_store::SCHEMA_VERSION)
        }
        other => panic!("expected Newer, got {other:?}"),
    }
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file was changed"
    );
}

#[test]
fn sqlite_corrupt_file_is_reported_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let junk: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &junk).unwrap();
    let err = pelt_store::open(path.to_str().unwrap()).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("left it as it is"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), junk);
    // Nor is another program's database taken over.
    let other = dir.path().join("other.db");
    {
        let mut db = pelt_store::sqlite::Sqlite::open(&other).unwrap();
        db.batch("CREATE TABLE accounts (id INTEGER)").unwrap();
    }
    let err = pelt_store::open(other.to_str().unwrap()).unwrap_err();
    assert!(err.to_string().contains("accounts"), "{err}");
}

#[cfg(feature = "postgres")]
#[test]
fn postgres_same_checks() {
    let cluster = Cluster::start();
    record_and_query(&cluster.fresh_db());
    import_runs_once(&cluster.fresh_db());
    concurrent_writers(&cluster.fresh_db());
    spooled_results_are_stored_byte_for_byte(&cluster.fresh_db());
    // Schemas 3 (a scenario run's steps) and 4 (failed, failed_share): a
    // version-2 history migrates.
    let url = cluster.fresh_db();
    pelt_store::open(&url).unwrap();
    let db = url.rsplit('/').next().unwrap();
    cluster.psql(
        db,
        "ALTER TABLE pelt_runs DROP COLUMN steps_json; \
         ALTER TABLE pelt_runs RENAME COLUMN failed TO errors; \
         ALTER TABLE pelt_runs RENAME COLUMN failed_share TO error_ratio; \
         UPDATE pelt_meta SET value = '2' WHERE key = 'schema_version'",
    );
    assert_eq!(pelt_store::open(&url).unwrap().schema_version().unwrap(), 4);
    scenario_steps_round_trip(&url);
    // Newer schema: refused, left as it was.
    let url = cluster.fresh_db();
    pelt_store::open(&url).unwrap();
    let db = url.rsplit('/').next().unwrap();
    cluster.psql(
        db,
        "UPDATE pelt_meta SET value = '99' WHERE key = 'schema_version'",
    );
    match pelt_store::open(&url) {
        Err(StoreError::Newer { found: 99, .. }) => {}
        other => panic!("expected Newer, got {other:?}"),
    }
    assert_eq!(
        cluster
            .psql(
                db,
                "SELECT value FROM pelt_meta WHERE key = 'schema_version'"
            )
            .trim(),
        "99"
    );
    // A password in the URL shows in no message.
    let err = pelt_store::open(&format!(
        "postgres://nobody:S3CRET@127.0.0.1:{}/nodb",
        cluster.port
    ))
    .unwrap_err();
    let text = err.to_string();
    assert!(
        !text.contains("S3CRET") && text.contains("REDACTED"),
        "{text}"
    );
}

/// Without the `postgres` feature, a PostgreSQL history is refused with
/// a message that says why, and no password.
#[cfg(not(feature = "postgres"))]
#[test]
fn postgres_without_the_feature_is_refused_clearly() {
    let err = pelt_store::open("postgres://pelt:S3CRET@127.0.0.1:5432/db").unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("without PostgreSQL"), "{text}");
    assert!(!text.contains("S3CRET"), "{text}");
}
