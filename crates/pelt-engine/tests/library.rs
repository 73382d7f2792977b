//! pelt used as a library keeps the CLI's promises: what a library user
//! writes (a results file, a report) holds no secret, and starting a run
//! from async code does not panic. Every test loads `pelt serve` on
//! loopback.

use pelt_core::secrets::split_userinfo;
use pelt_core::{Load, ResultsReader, ResultsWriter, RunConfig, Stop, Target, Url};
use pelt_engine::{footer_of, Progress, Run};
use pelt_target::{ServeConfig, Server};
use std::time::Duration;

/// A few requests, bounded in count and in time.
fn stop(requests: u64) -> Stop {
    Stop {
        requests: Some(requests),
        duration: Some(Duration::from_secs(10)),
    }
}

fn serve() -> pelt_target::ServerHandle {
    Server::bind(([127, 0, 0, 1], 0).into(), ServeConfig::default())
        .unwrap()
        .spawn()
        .unwrap()
}

/// Runs `config` to its end, writing its results file as a library user
/// would (`ResultsWriter::new`, a second at a time, the footer); returns
/// the file's bytes and the summary.
fn run_to_file(config: RunConfig) -> (Vec<u8>, pelt_core::RunSummary) {
    let run = Run::start(config).unwrap();
    let path = std::env::temp_dir().join(format!("pelt-library-{}.pelt", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    let mut writer = ResultsWriter::new(std::io::BufWriter::new(file), run.header()).unwrap();
    loop {
        match run.progress(Duration::from_millis(100)) {
            Progress::Interval(s) => writer.interval(s.row.unix_second, &s.recorder).unwrap(),
            Progress::Waiting => {}
            Progress::Finished => break,
        }
    }
    let summary = run.wait();
    writer.finish(&footer_of(&summary)).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    (bytes, summary)
}

#[test]
fn results_file_and_json_report_hold_no_secret() {
    let server = serve();
    let addr = server.local_addr();
    let bearer = "S3CRET-BEARER-7f3a";
    let cookie = "C00KIE-VALUE-91bd";
    let password = "PASSW0RD-USERINFO-c2e4";
    let token = "T0KEN-QUERY-55aa";

    let mut first = Target::get(Url::parse(&format!("http://{addr}/a?token={token}&x=1")).unwrap());
    first
        .headers
        .push(("Authorization".into(), format!("Bearer {bearer}")));
    first
        .headers
        .push(("Cookie".into(), format!("session={cookie}")));
    // URL userinfo becomes an Authorization header, as curl sends it.
    let (plain, basic) = split_userinfo(&format!("http://alice:{password}@{addr}/b")).unwrap();
    let mut second = Target::get(Url::parse(&plain).unwrap());
    second.headers.push(("Authorization".into(), basic.clone()));
    let config = RunConfig::new(vec![first, second], Load::closed(2), stop(40));

    let (file, summary) = run_to_file(config);
    assert!(summary.total.successes > 0, "the server answered");
    // The run itself sent the real values: the summary keeps them.
    assert!(summary.config.targets[0].headers[0].1.contains(bearer));

    let json = pelt_report::render(&summary, pelt_report::Format::Json);
    let secrets = [
        bearer,
        cookie,
        password,
        token,
        basic.trim_start_matches("Basic "),
    ];
    for (what, text) in [
        ("results file", String::from_utf8_lossy(&file).into_owned()),
        ("JSON report", json.clone()),
    ] {
        for s in secrets {
            assert!(!text.contains(s), "{what} holds the secret {s}");
        }
        assert!(text.contains("REDACTED"), "{what} marks what it replaced");
    }
    // The history, recorded as a library user would: the summary as the
    // run returned it, its JSON report and its results file.
    let dir = tempfile::tempdir().unwrap();
    let mut store = pelt_store::Store::sqlite(&dir.path().join("history.db")).unwrap();
    let id = store
        .record(pelt_store::NewRun {
            kind: pelt_store::Kind::Run,
            label: None,
            tags: vec![],
            summary: std::borrow::Cow::Borrowed(&summary),
            report_json: json.clone(),
            results: pelt_store::Results::Blob(file.clone()),
            capacity: None,
        })
        .unwrap();
    let stored = store.get(id).unwrap().unwrap();
    let rows = serde_json::to_string(&store.list(&Default::default()).unwrap()).unwrap();
    for (what, text) in [
        ("stored configuration", &stored.config_json),
        ("stored report", &stored.report_json),
        ("history listing", &rows),
        ("stored URL", &stored.row.url),
    ] {
        for s in secrets {
            assert!(!text.contains(s), "{what} holds the secret {s}");
        }
    }
    assert!(stored.config_json.contains("REDACTED"));

    // Every other report too.
    for format in [
        pelt_report::Format::Text,
        pelt_report::Format::Markdown,
        pelt_report::Format::Html,
        pelt_report::Format::Csv,
    ] {
        let report = pelt_report::render(&summary, format);
        for s in secrets {
            assert!(!report.contains(s), "{format:?} holds the secret {s}");
        }
    }

    // This test binary is a debug build, and so is the engine in it: the
    // run records that, and its report warns.
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(summary.env.debug_build, cfg!(debug_assertions));
    assert_eq!(
        report["environment"]["debug_build"] == true,
        cfg!(debug_assertions)
    );
    let debug_warning = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "debug_build");
    assert_eq!(
        debug_warning,
        cfg!(debug_assertions),
        "{}",
        report["warnings"]
    );

    // The file still reads back, with the run's shape: only values went.
    let reader = ResultsReader::open(&file[..]).unwrap();
    let header = reader.header();
    assert_eq!(header.config.targets.len(), 2);
    assert_eq!(header.config.targets[0].headers[0].1, "REDACTED");
    assert_eq!(
        header.config.targets[0].url.path_and_query,
        "/a?token=REDACTED&x=1"
    );

    // Opting out is explicit, and then keeps them.
    let kept = pelt_report::render_with(
        &summary,
        pelt_report::Format::Json,
        &pelt_report::Options {
            keep_secrets: true,
            ..Default::default()
        },
    );
    assert!(kept.contains(bearer));
    let mut raw = ResultsWriter::unredacted(Vec::new(), &reader_header(&summary)).unwrap();
    raw.interval(0, &summary.total).unwrap();
    let raw = raw.finish(&footer_of(&summary)).unwrap();
    assert!(String::from_utf8_lossy(&raw).contains(token));
}

/// A header for `summary`'s configuration, for writing it again.
fn reader_header(summary: &pelt_core::RunSummary) -> pelt_core::RunHeader {
    pelt_core::RunHeader {
        config: summary.config.clone(),
        env: summary.env.clone(),
        measure_start_unix_ns: 0,
        measure_from_ns: 0,
        shard: None,
    }
}

/// A run with a login, started and waited for from inside a tokio runtime
/// of `flavor`, as a library user's `#[tokio::main]` (multi-thread) or
/// `#[tokio::test]` (current-thread) would.
fn run_with_login_inside(rt: tokio::runtime::Runtime) {
    // The server's own runtime is made and dropped outside the caller's.
    let server = serve();
    let addr = server.local_addr();
    let mut config = RunConfig::new(
        vec![Target::get(Url::parse(&format!("http://{addr}/")).unwrap())],
        Load::closed(2),
        stop(20),
    );
    let mut login = Target::get(Url::parse(&format!("http://{addr}/login")).unwrap());
    login.method = "POST".into();
    login.body = b"user=alice&pass=secret".to_vec();
    config.http.session.login = Some(login);
    let summary = rt.block_on(async move {
        let run = Run::start(config).expect("a run with a login starts inside a runtime");
        run.wait()
    });
    assert!(
        summary.total.logins >= 2,
        "each sender logged in: {}",
        summary.total.logins
    );
    assert!(summary.total.successes > 0, "the server answered");
}

#[test]
fn run_with_login_starts_inside_a_multi_thread_runtime() {
    run_with_login_inside(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap(),
    );
}

#[test]
fn run_with_login_starts_inside_a_current_thread_runtime() {
    run_with_login_inside(
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
    );
}

/// Snapshots come to an observer without polling: every second once, in
/// order, the last one's running total the summary's.
#[test]
fn an_observer_sees_every_second() {
    let server = serve();
    let addr = server.local_addr();
    let config = RunConfig::new(
        vec![Target::get(Url::parse(&format!("http://{addr}/")).unwrap())],
        Load::closed(2),
        stop(300),
    );
    let mut seconds = Vec::new();
    let summary = Run::start(config)
        .unwrap()
        .observe(|s| seconds.push((s.row.unix_second, s.total_requests)));
    assert!(!seconds.is_empty());
    assert!(seconds.windows(2).all(|w| w[0].0 < w[1].0), "{seconds:?}");
    assert_eq!(seconds.last().unwrap().1, summary.total.requests);
    assert_eq!(summary.total.requests, 300);
}
