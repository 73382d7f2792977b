//! What a comparison concludes ([`Comparison`]), from runs whose figures
//! are known because they are made up (pelt-testkit's synthetic run): a
//! slowdown is a material regression and the other way an improvement,
//! the failed share and throughput are judged in the right direction, a
//! sequential design is confounded with time, unlike runs are refused,
//! a busy client is named. `pelt compare`'s flags and output are the
//! binary's tests (crates/pelt/tests/compare.rs).

use pelt_analyze::latency::Latency;
use pelt_core::{RunSummary, ThreadLoad};
use pelt_history::compare::{Comparison, Options};
use pelt_testkit::summary::Synthetic;
use serde_json::Value;

/// A steady rate run at 200 req/s started `at` seconds into the test's
/// timeline, its responses taking `base_ns` plus up to 1.9 ms. Sends
/// are 200 µs late, so that service time and response time differ.
fn run(base_ns: u64, at: u64) -> Synthetic {
    Synthetic {
        base_ns,
        lag_ns: 200_000,
        started_unix_ms: 1_700_000_000_000 + at * 1000,
        ..Synthetic::clean()
    }
}

/// Four runs a side interleaved in time (a b b a a b b a), A's made by
/// `a(i)` and B's by `b(i)`.
fn interleaved(
    a: impl Fn(u64) -> Synthetic,
    b: impl Fn(u64) -> Synthetic,
) -> (Vec<RunSummary>, Vec<RunSummary>) {
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    let mut at = 0;
    for i in 0..4 {
        let sides = if i % 2 == 0 { [0, 1] } else { [1, 0] };
        for side in sides {
            at += 5;
            if side == 0 {
                xs.push(Synthetic {
                    started_unix_ms: 1_700_000_000_000 + at * 1000,
                    ..a(i)
                });
            } else {
                ys.push(Synthetic {
                    started_unix_ms: 1_700_000_000_000 + at * 1000,
                    ..b(i)
                });
            }
        }
    }
    let summaries = |v: Vec<Synthetic>| v.iter().map(Synthetic::summary).collect();
    (summaries(xs), summaries(ys))
}

/// A's runs about 1.5 ms, B's 3 ms slower; each run a little off its
/// side's level, as real runs are.
fn slowdown() -> (Vec<RunSummary>, Vec<RunSummary>) {
    interleaved(
        |i| run(500_000 + i * 30_000, 0),
        |i| run(3_500_000 + i * 30_000, 0),
    )
}

fn doc(c: &Comparison) -> Value {
    serde_json::from_str(&c.json()).expect("the comparison's JSON")
}

fn verdict<'a>(doc: &'a Value, metric: &str) -> &'a Value {
    doc["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"]["name"] == metric)
        .map(|m| &m["comparison"]["verdict"])
        .unwrap_or_else(|| panic!("no {metric} in {doc:#}"))
}

fn compare(a: &[RunSummary], b: &[RunSummary], o: &Options) -> Comparison {
    Comparison::runs(a.to_vec(), b.to_vec(), o).expect("a comparison")
}

#[test]
fn a_slowdown_is_a_material_regression_and_the_other_way_an_improvement() {
    let (a, b) = slowdown();
    let c = compare(&a, &b, &Options::default());
    // A gate on regressions fails, as `--fail-on regression` does.
    assert!(c.regressed(false) && c.regressed(true));
    assert!(c.has_verdict());
    let d = doc(&c);
    assert_eq!(d["design"]["order"]["kind"], "interleaved", "{d:#}");
    assert_eq!(d["confounded_with_time"], false);
    assert_eq!(d["latency"], "response_time", "a rate run's headline");
    let p50 = verdict(&d, "p50");
    assert_eq!(p50["kind"], "regression", "{d:#}");
    assert_eq!(p50["material"], true);
    // Throughput and the failed share did not change.
    assert_ne!(verdict(&d, "throughput")["material"], true, "{d:#}");
    assert_ne!(verdict(&d, "failed")["kind"], "regression");

    // Service time: from the actual send, which leaves the client's
    // 200 µs of send lag out (issue 23 §2), so A's p50 is lower.
    let service = doc(&compare(
        &a,
        &b,
        &Options {
            latency: Latency::ServiceTime,
            ..Options::default()
        },
    ));
    assert_eq!(service["latency"], "service_time");
    let a_p50 = |d: &Value| d["metrics"][0]["comparison"]["a"].as_f64().unwrap();
    assert!(a_p50(&service) < a_p50(&d), "{service:#}");
    assert_eq!(verdict(&service, "p50")["kind"], "regression");

    // The other way round p50 is an improvement, and nothing material
    // fails (`--fail-on material`).
    let back = compare(&b, &a, &Options::default());
    assert_eq!(verdict(&doc(&back), "p50")["kind"], "improvement");
    assert!(!back.regressed(true));

    // The HTML page: the same verdicts, pooled spectra and timelines, no
    // script.
    let page = c.html().expect("the runs are at hand");
    assert!(page.contains("<td class=\"verdict-regression\">REGRESSION (material)</td>"));
    assert!(page.contains("Latency by percentile") && page.contains("Over time"));
    assert_eq!(
        page.matches("<svg").count(),
        3,
        "spectrum, latency and throughput"
    );
    assert!(!page.contains("<script"));

    // One run each: differences, and no verdict.
    let one = compare(&a[..1], &b[..1], &Options::default());
    assert!(!one.has_verdict());
    let text = one.text();
    assert!(text.contains("no verdict"), "{text}");
    assert!(text.contains("cannot separate a change from run-to-run noise"));

    // Paired runs need equal counts.
    let paired = Options {
        paired: true,
        ..Options::default()
    };
    let unequal = Comparison::runs(a.clone(), b[..1].to_vec(), &paired);
    assert!(unequal
        .unwrap_err()
        .to_string()
        .contains("needs as many B runs as A runs"));
    // Equal counts are paired.
    assert!(compare(&a, &b, &paired).paired);
}

/// Issue 23 §2: the failed share or throughput judged alone, with the
/// same run-level machinery, in the right direction. Every other
/// response of B's is a 503: its failed share rises by 50 points (a
/// regression), and its successful responses per second halve (a
/// regression, in a rate run too); the other way round throughput is an
/// improvement and nothing fails.
#[test]
fn the_failed_share_or_throughput_is_judged_alone_in_the_right_direction() {
    let (a, b) = interleaved(
        |i| run(500_000 + i * 30_000, 0),
        |i| Synthetic {
            every_503: 2,
            ..run(500_000 + i * 30_000, 0)
        },
    );
    let alone = |latency| Options {
        latency,
        ..Options::default()
    };
    let only = |doc: &Value, metric: &str| {
        let names: Vec<&str> = doc["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["metric"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, [metric], "{doc:#}");
        assert_eq!(doc["headline_metric"], metric);
        assert_eq!(doc["latency"], metric);
    };

    let c = compare(&a, &b, &alone(Latency::Failed));
    let d = doc(&c);
    only(&d, "failed");
    assert!(c.regressed(false), "{d:#}");
    let failed = verdict(&d, "failed");
    assert_eq!(
        (failed["kind"].as_str(), failed["material"].as_bool()),
        (Some("regression"), Some(true))
    );
    let row = &d["metrics"][0]["comparison"];
    assert_eq!(row["a"].as_f64(), Some(0.0));
    assert!((row["b"].as_f64().unwrap() - 0.5).abs() < 0.01, "{row}");

    // Rate runs: throughput is no longer "fixed by the schedule" once it
    // is what is judged: 200 successes a second against about 100.
    let c = compare(&a, &b, &alone(Latency::Throughput));
    let d = doc(&c);
    only(&d, "throughput");
    assert!(c.regressed(false), "{d:#}");
    let tp = verdict(&d, "throughput");
    assert_eq!(
        (tp["kind"].as_str(), tp["material"].as_bool()),
        (Some("regression"), Some(true))
    );
    let row = &d["metrics"][0]["comparison"];
    let (ta, tb) = (row["a"].as_f64().unwrap(), row["b"].as_f64().unwrap());
    assert!(ta > 150.0 && tb < 0.6 * ta, "{row}");

    // Higher throughput is better: the other way round it improved, and
    // a gate on regressions passes.
    let back = compare(&b, &a, &alone(Latency::Throughput));
    assert!(!back.regressed(false));
    assert_eq!(verdict(&doc(&back), "throughput")["kind"], "improvement");
    let text = compare(&b, &a, &alone(Latency::Failed)).text();
    assert!(text.contains("Judged: the failed share alone"), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("p50")), "{text}");
    // The failed share's own warning weakens latencies, not the share.
    assert!(!text.contains("Warning failed"), "{text}");
}

/// A saturated client looks like a slow server: a run whose worker
/// thread was busy all along is named, a light one is not.
#[test]
fn a_busy_client_is_named() {
    let (a, b) = slowdown();
    assert!(compare(&a, &b, &Options::default())
        .client_busy()
        .is_empty());
    let mut busy = run(3_500_000, 100);
    busy.worker_load = vec![
        ThreadLoad {
            on_cpu: 0.2,
            waiting: 0.0,
        },
        ThreadLoad {
            on_cpu: 0.93,
            waiting: 0.04,
        },
    ];
    let c = compare(&a[..1], &[busy.summary()], &Options::default());
    assert_eq!(c.client_busy(), ["b1"]);
}

/// Issue 23 §1: "4 runs, change, 4 runs" confounds the change with time.
/// An A/A test made that way was called a material p99 regression (the
/// machine got busier). The sequential design is named, and a material
/// verdict withheld unless `sequential_ok`.
#[test]
fn sequential_runs_are_confounded_with_time() {
    let side = |base_ns: u64, from: u64| -> Vec<RunSummary> {
        (0..4)
            .map(|i| run(base_ns + i * 30_000, from + 5 * i).summary())
            .collect()
    };
    let before = side(500_000, 0);
    // A/A, one side after the other: said, whatever the verdicts.
    let same = compare(&before, &side(500_000, 20), &Options::default());
    let text = same.text();
    assert!(!same.regressed(true), "{text}");
    assert!(
        text.contains("Sequential design: every A run started before every B run, so the change is confounded with time"),
        "{text}"
    );
    assert!(text.contains("\nheadline: "), "{text}");

    // A real slowdown, sequential: a regression, but not a material one.
    let after = side(3_500_000, 20);
    let c = compare(&before, &after, &Options::default());
    assert!(!c.regressed(true), "material withheld: no failure");
    let d = doc(&c);
    assert_eq!(d["confounded_with_time"], true);
    assert_eq!(d["design"]["order"]["kind"], "sequential");
    assert_eq!(d["design"]["order"]["a_first"], true);
    let p50 = verdict(&d, "p50");
    assert_eq!(
        (&p50["kind"], &p50["material"]),
        (&"regression".into(), &false.into())
    );
    let row = d["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"]["name"] == "p50")
        .unwrap();
    assert_eq!(row["confounded_with_time"], true);
    assert!(
        d["headline"]
            .as_str()
            .unwrap()
            .contains("REGRESSION (confounded with time)"),
        "{d:#}"
    );
    // The user vouches for the conditions: the verdict stands.
    let ok = Options {
        sequential_ok: true,
        ..Options::default()
    };
    let c = compare(&before, &after, &ok);
    assert!(c.regressed(true));
    let d = doc(&c);
    assert_eq!(verdict(&d, "p50")["material"], true);
    assert_eq!(d["confounded_with_time"], false);
}

/// Issue 23 §4: a rate run and a closed loop answer different questions,
/// a run compared with itself is no evidence: both refused, naming the
/// difference, unless `allow_mismatch` (which lists it).
#[test]
fn unlike_runs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let rate = dir.path().join("rate.pelt");
    run(500_000, 0).write(&rate);
    let closed = dir.path().join("closed.pelt");
    Synthetic {
        rate: false,
        connections: 2,
        ..run(500_000, 10)
    }
    .write(&closed);
    let files = |o: &Options| {
        Comparison::files(
            std::slice::from_ref(&rate),
            std::slice::from_ref(&closed),
            o,
        )
    };
    let err = files(&Options::default()).unwrap_err().to_string();
    assert!(
        err.starts_with("the runs do not measure the same work as rate (A's first run): closed (load: rate 200/s vs closed loop, 2 connections)"),
        "{err}"
    );
    assert!(err.contains("`allow_mismatch: true`"), "{err}");
    let allow = Options {
        allow_mismatch: true,
        ..Options::default()
    };
    let text = files(&allow).unwrap().text();
    assert!(
        text.contains("--allow-mismatch: compared although the runs' work differs: closed (load: rate 200/s vs closed loop, 2 connections)"),
        "{text}"
    );
    // The same run on both sides: as one file, and as one run twice.
    let same = Comparison::files(
        std::slice::from_ref(&rate),
        std::slice::from_ref(&rate),
        &allow,
    );
    assert!(same
        .unwrap_err()
        .to_string()
        .contains("compared with itself"));
    let once = run(500_000, 0).summary();
    let twice = Comparison::runs(vec![once.clone()], vec![once], &allow);
    assert!(twice.unwrap_err().to_string().contains("are the same run"));
}

/// The synthetic run is what its results file says: a comparison of the
/// files is the comparison of the summaries.
#[test]
fn files_and_runs_compare_alike() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for i in 0..4 {
        let (fa, fb) = (
            dir.path().join(format!("a{}.pelt", i + 1)),
            dir.path().join(format!("b{}.pelt", i + 1)),
        );
        run(500_000 + i * 30_000, 10 * i).write(&fa);
        run(3_500_000 + i * 30_000, 10 * i + 5).write(&fb);
        a.push(fa);
        b.push(fb);
    }
    let from_files = Comparison::files(&a, &b, &Options::default()).unwrap();
    let load = |v: &[std::path::PathBuf]| -> Vec<RunSummary> {
        v.iter()
            .map(|f| pelt_campaign::results::load(f).unwrap())
            .collect()
    };
    let from_runs = compare(&load(&a), &load(&b), &Options::default());
    assert_eq!(from_files.text(), from_runs.text());
    assert_eq!(verdict(&doc(&from_files), "p50")["kind"], "regression");
}
