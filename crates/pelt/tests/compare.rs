//! `pelt compare`'s flags, exit codes and output: on real runs (a real
//! slowdown is a material regression, and CI can fail on it) and on
//! results files of made-up runs (pelt-testkit's synthetic run). What a
//! comparison concludes is pelt-history's to test
//! (crates/pelt-history/tests/compare.rs).

use pelt_testkit::pelt::{json, ok, pelt, server};
use pelt_testkit::pinned::{pelt_ahead_on, serve_ahead_on};
use pelt_testkit::schema;
use pelt_testkit::summary::Synthetic;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A 1 s run at 200 req/s against `url`, saved as `dir/NAME.pelt`. pelt
/// runs on CPU 0 ahead of other work: the verdicts judge its timing, and a
/// parallel build's turns on the CPU would blur a 3 ms slowdown into an
/// inconclusive one (seen at a load average of 4).
fn run(dir: &std::path::Path, name: &str, url: &str, extra: &[&str]) -> PathBuf {
    let file = dir.join(format!("{name}.pelt"));
    let out = pelt_ahead_on("0")
        .arg(url)
        .args(if extra.is_empty() {
            &["--rate", "200"][..]
        } else {
            extra
        })
        .args(["-d", "1s", "-q", "--no-save", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    ok(&out);
    file
}

/// Four runs of each URL, interleaved (a b b a a b b a), so that the
/// machine's drift falls on both alike.
fn interleaved(dir: &std::path::Path, a: &str, b: &str) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for i in 0..4 {
        let first_a = i % 2 == 0;
        for (side, url) in if first_a {
            [(0, a), (1, b)]
        } else {
            [(1, b), (0, a)]
        } {
            let name = format!("{}{i}", if side == 0 { "a" } else { "b" });
            let f = run(dir, &name, url, &[]);
            if side == 0 {
                xs.push(f)
            } else {
                ys.push(f)
            }
        }
    }
    (xs, ys)
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

/// A made-up rate run at 200 req/s, started `at` seconds into the test's
/// timeline, its responses taking `base_ns` plus up to 1.9 ms: `made`
/// changes what else it varies. Written as `dir/NAME.pelt`.
fn synthetic(
    dir: &Path,
    name: &str,
    base_ns: u64,
    at: u64,
    made: impl FnOnce(&mut Synthetic),
) -> PathBuf {
    let mut s = Synthetic {
        base_ns,
        started_unix_ms: 1_700_000_000_000 + at * 1000,
        ..Synthetic::clean()
    };
    made(&mut s);
    let file = dir.join(format!("{name}.pelt"));
    s.write(&file);
    file
}

/// Four made-up runs a side interleaved in time (a b b a a b b a): A's
/// about 1.5 ms, B's `b_base_ns` more, and `b` changes B's.
fn synthetic_pairs(
    dir: &Path,
    b_base_ns: u64,
    b: impl Fn(&mut Synthetic),
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    let mut at = 0;
    for i in 0..4u64 {
        for side in if i % 2 == 0 { [0, 1] } else { [1, 0] } {
            at += 5;
            let base = 500_000 + i * 30_000;
            if side == 0 {
                xs.push(synthetic(dir, &format!("a{i}"), base, at, |_| ()));
            } else {
                ys.push(synthetic(dir, &format!("b{i}"), base + b_base_ns, at, &b));
            }
        }
    }
    (xs, ys)
}

#[test]
fn a_real_slowdown_is_a_material_regression() {
    // The server's delays are the truth the verdict is judged against: it
    // runs on CPU 1, ahead of other work, as pelt does on CPU 0.
    let (_server, base) = serve_ahead_on("1");
    let base = base.trim_end_matches('/');
    let dir = tempfile::tempdir().unwrap();
    let fast = format!("{base}/?delay=1ms&delay_max=2ms");
    let slow = format!("{base}/?delay=4ms&delay_max=5ms");
    // The "change" is made by the query string, which makes the URLs
    // differ: --allow-mismatch says that is meant.
    let (a, b) = interleaved(dir.path(), &fast, &slow);

    let out = pelt()
        .arg("compare")
        .args(&a)
        .arg("--vs")
        .args(&b)
        .args([
            "--format",
            "json",
            "--fail-on",
            "regression",
            "--allow-mismatch",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a regression fails the build");
    let doc: Value = json(&out);
    schema::compare(&doc);
    assert_eq!(doc["design"]["order"]["kind"], "interleaved", "{doc:#}");
    assert_eq!(doc["confounded_with_time"], false);
    assert_eq!(doc["mismatches_allowed"].as_array().unwrap().len(), 4);
    let p50 = verdict(&doc, "p50");
    assert_eq!(p50["kind"], "regression", "{doc:#}");
    assert_eq!(p50["material"], true);
    // Throughput (successes over the time to the last response) really is a
    // hair lower when responses are slower, and runs are steady enough to
    // show it: a regression, but far inside the 2 % margin.
    assert_ne!(verdict(&doc, "throughput")["material"], true, "{doc:#}");
    assert_ne!(verdict(&doc, "failed")["kind"], "regression");

    // --metric service_time: the percentiles from the actual send, which
    // leave the client's send lag out (issue 23 §2), so A's p50 is lower.
    let out = pelt()
        .arg("compare")
        .args(&a)
        .arg("--vs")
        .args(&b)
        .args([
            "--format",
            "json",
            "--allow-mismatch",
            "--metric",
            "service_time",
        ])
        .output()
        .unwrap();
    let service: Value = json(&out);
    schema::compare(&service);
    assert_eq!(service["latency"], "service_time");
    assert_eq!(doc["latency"], "response_time");
    let a_p50 = |d: &Value| d["metrics"][0]["comparison"]["a"].as_f64().unwrap();
    assert!(a_p50(&service) < a_p50(&doc), "{service:#}");
    assert_eq!(verdict(&service, "p50")["kind"], "regression");

    // The other way round p50 is an improvement, and nothing material fails.
    let out = pelt()
        .arg("compare")
        .args(&b)
        .arg("--vs")
        .args(&a)
        .args([
            "--format",
            "json",
            "--fail-on",
            "material",
            "--allow-mismatch",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = json(&out);
    assert_eq!(verdict(&doc, "p50")["kind"], "improvement");

    // The HTML page: the same verdicts, pooled spectra and timelines, no script.
    let out = pelt()
        .arg("compare")
        .args(&a)
        .arg("--vs")
        .args(&b)
        .args(["--format", "html", "--allow-mismatch"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains("<td class=\"verdict-regression\">REGRESSION (material)</td>"));
    assert!(page.contains("Latency by percentile") && page.contains("Over time"));
    assert_eq!(
        page.matches("<svg").count(),
        3,
        "spectrum, latency and throughput"
    );
    assert!(!page.contains("<script"));

    // One run each: differences, and no verdict.
    let out = pelt()
        .arg("compare")
        .arg(&a[0])
        .arg(&b[0])
        .arg("--allow-mismatch")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("no verdict"), "{text}");
    assert!(text.contains("cannot separate a change from run-to-run noise"));

    // --paired needs equal counts.
    let out = pelt()
        .arg("compare")
        .args(&a)
        .arg("--vs")
        .arg(&b[0])
        .arg("--paired")
        .arg("--allow-mismatch")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `--metric failed` (and its older word `errors`) and `--metric
/// throughput` (issue 23 §2): one figure judged alone, and `--fail-on`
/// gates on it. Every other response of B's made-up runs is a 503.
#[test]
fn metric_errors_or_throughput_is_judged_alone_and_gated() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = synthetic_pairs(dir.path(), 0, |s| s.every_503 = 2);
    let compare = |a: &[PathBuf], b: &[PathBuf], metric: &str| {
        let out = pelt()
            .arg("compare")
            .args(a)
            .arg("--vs")
            .args(b)
            .args(["--format", "json", "--fail-on", "regression"])
            .args(["--metric", metric])
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        schema::compare(&doc);
        (out.status.code(), doc)
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

    // "errors", the older word, is still read as --metric failed.
    let (code, doc) = compare(&a, &b, "errors");
    only(&doc, "failed");
    assert_eq!(code, Some(1), "{doc:#}");
    assert_eq!(verdict(&doc, "failed")["kind"], "regression");
    let (code, doc) = compare(&a, &b, "failed");
    only(&doc, "failed");
    assert_eq!(code, Some(1), "{doc:#}");

    let (code, doc) = compare(&a, &b, "throughput");
    only(&doc, "throughput");
    assert_eq!(code, Some(1), "{doc:#}");
    assert_eq!(verdict(&doc, "throughput")["kind"], "regression");

    // The other way round throughput improved: a gate on regressions
    // passes.
    let (code, doc) = compare(&b, &a, "throughput");
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(verdict(&doc, "throughput")["kind"], "improvement");
    let text = pelt()
        .arg("compare")
        .args(&b)
        .arg("--vs")
        .args(&a)
        .args(["--metric", "errors"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("Judged: the failed share alone"), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("p50")), "{text}");
}

/// A saturated client looks like a slow server: a run whose worker
/// thread was busy all along is flagged by `pelt report` (in its table
/// and a warning) and by `pelt compare` (one line on stderr, stdout
/// left as it is).
#[test]
fn client_bound_runs_are_flagged_in_reports_and_comparisons() {
    use pelt_core::ThreadLoad;
    let dir = tempfile::tempdir().unwrap();
    let real = synthetic(dir.path(), "a0", 500_000, 0, |_| ());
    let light = synthetic(dir.path(), "a1", 500_000, 5, |_| ());
    let busy = synthetic(dir.path(), "busy", 500_000, 10, |s| {
        s.worker_load = vec![
            ThreadLoad {
                on_cpu: 0.2,
                waiting: 0.0,
            },
            ThreadLoad {
                on_cpu: 0.93,
                waiting: 0.04,
            },
        ]
    });

    let out = pelt().arg("report").arg(&busy).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "Client       busiest of 2 worker threads on a CPU 93% of the run, waiting for one 4%"
        ),
        "{text}"
    );
    assert!(
        text.contains("warning: pelt's busiest worker thread (of 2) wanted a CPU 97% of the run"),
        "{text}"
    );

    let out = pelt()
        .arg("compare")
        .arg(&real)
        .arg(&busy)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("pelt was short of CPU in busy (client_busy: "),
        "{err}"
    );
    // A light run is not flagged.
    let out = pelt()
        .arg("compare")
        .arg(&real)
        .arg(&light)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "");
}

/// Issue 23 §1: "4 runs, change, 4 runs" confounds the change with time:
/// the text says so, `--fail-on material` passes on a verdict withheld,
/// and `--sequential-ok` keeps it (exit 1).
#[test]
fn sequential_runs_are_confounded_with_time() {
    let dir = tempfile::tempdir().unwrap();
    let side = |name: &str, base_ns: u64, from: u64| -> Vec<PathBuf> {
        (0..4u64)
            .map(|i| {
                synthetic(
                    dir.path(),
                    &format!("{name}{i}"),
                    base_ns + i * 30_000,
                    from + 5 * i,
                    |_| (),
                )
            })
            .collect()
    };
    let before = side("before", 500_000, 0);
    // A/A, one side after the other: said, whatever the verdicts.
    let out = pelt()
        .arg("compare")
        .args(&before)
        .arg("--vs")
        .args(side("after", 500_000, 20))
        .args(["--fail-on", "material"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("Sequential design: every A run started before every B run, so the change is confounded with time"),
        "{text}"
    );
    assert!(text.contains("\nheadline: "), "{text}");

    // A slowdown, sequential: a regression, but not a material one.
    let after = side("slow", 3_500_000, 20);
    let compare = |extra: &[&str]| {
        pelt()
            .arg("compare")
            .args(&before)
            .arg("--vs")
            .args(&after)
            .args(["--fail-on", "material", "--format", "json"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = compare(&[]);
    assert_eq!(out.status.code(), Some(0), "material withheld: no failure");
    let doc: Value = json(&out);
    schema::compare(&doc);
    assert_eq!(doc["confounded_with_time"], true);
    assert_eq!(verdict(&doc, "p50")["material"], false);
    // The user vouches for the conditions: the verdict stands.
    let out = compare(&["--sequential-ok"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = json(&out);
    assert_eq!(verdict(&doc, "p50")["material"], true);
    assert_eq!(doc["confounded_with_time"], false);
}

/// Issue 23 §4: a rate run and a closed loop answer different questions,
/// a run compared with itself is no evidence: both refused (exit 2, one
/// line naming the difference), unless --allow-mismatch.
#[test]
fn unlike_runs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let rate = synthetic(dir.path(), "rate", 500_000, 0, |_| ());
    let closed = synthetic(dir.path(), "closed", 500_000, 10, |s| {
        (s.rate, s.connections) = (false, 2)
    });
    let out = pelt()
        .arg("compare")
        .arg(&rate)
        .arg(&closed)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: the runs do not measure the same work as rate (A's first run): closed (load: rate 200/s vs closed loop, 2 connections)"),
        "{err}"
    );
    assert!(err.contains("--allow-mismatch"), "{err}");
    let out = pelt()
        .arg("compare")
        .arg(&rate)
        .arg(&closed)
        .arg("--allow-mismatch")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("--allow-mismatch: compared although the runs' work differs: closed (load: rate 200/s vs closed loop, 2 connections)"),
        "{text}"
    );
    // The same run on both sides.
    let out = pelt()
        .arg("compare")
        .arg(&rate)
        .arg(&rate)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("compared with itself"), "{err}");
}

/// A run made by a program as docs/LIBRARY.md says, written to a results
/// file as a library user writes one: `session` as its session, 100
/// requests over 2 connections to `url`.
fn library_run(file: &std::path::Path, url: &str, session: pelt_core::SessionOptions) {
    use pelt_core::{Load, ResultsWriter, RunConfig, Stop};
    let target = pelt_core::config::RequestWords::get(url).target().unwrap();
    let stop = Stop {
        requests: Some(100),
        duration: None,
    };
    let mut config = RunConfig::new(vec![target], Load::closed(2), stop);
    config.http.session = session;
    let run = pelt_engine::Run::start(config).unwrap();
    let out = std::io::BufWriter::new(std::fs::File::create(file).unwrap());
    let mut writer = ResultsWriter::new(out, run.header()).unwrap();
    let summary = run.observe(|s| writer.interval(s.row.unix_second, &s.recorder).unwrap());
    assert_eq!(summary.total.logins, 2, "each sender logged in");
    writer.finish(&pelt_engine::footer_of(&summary)).unwrap();
}

/// Issue 35 §6: the docs' login (no Content-Type, cookies off) made a
/// run that `pelt compare` refused against `pelt run --login`'s
/// ("--cookies: off vs on"). `SessionOptions::login` makes the CLI's
/// login, so the two compare like with like.
#[test]
fn a_programs_login_run_compares_with_the_clis() {
    let server = server(None);
    let url = format!("http://{}/", server.local_addr());
    let login = format!(
        "POST http://{}/login user=alice&password=example",
        server.local_addr()
    );
    let dir = tempfile::tempdir().unwrap();
    let cli = dir.path().join("cli.pelt");
    let out = pelt()
        .arg(&url)
        .args([
            "-c",
            "2",
            "-n",
            "100",
            "--login",
            &login,
            "-q",
            "--no-save",
            "-o",
        ])
        .arg(&cli)
        .output()
        .unwrap();
    ok(&out);
    let compare = |lib: &std::path::Path| {
        pelt()
            .arg("compare")
            .arg(lib)
            .arg("--vs")
            .arg(&cli)
            .output()
            .unwrap()
    };

    let lib = dir.path().join("lib.pelt");
    library_run(
        &lib,
        &url,
        pelt_core::SessionOptions::login(&login).unwrap(),
    );
    let out = compare(&lib);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(!said.contains("--cookies"), "{said}");

    // The login the docs used to build by hand: the same request line,
    // without the form's type, cookies off. Refused, naming the
    // difference: the check above could fail.
    let mut by_hand = pelt_core::targets::request_line(&login).unwrap();
    by_hand.headers.clear();
    let hand = dir.path().join("hand.pelt");
    library_run(
        &hand,
        &url,
        pelt_core::SessionOptions {
            cookies: false,
            login: Some(by_hand),
        },
    );
    let said = pelt_testkit::pelt::bad_input(&compare(&hand), "a hand-made login");
    assert!(said.contains("--cookies"), "{said}");
}
