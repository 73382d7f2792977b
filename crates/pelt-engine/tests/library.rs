//! pelt used as a library keeps the CLI's promises: what a library user
//! writes (a results file, a report, a request log, an error) holds no
//! secret; a run from async code works, or refuses at once, on either
//! flavour of runtime, with the server under test on it; a run dropped
//! or timed out stops its load; a login is read by its framing. Every
//! test loads servers on loopback: `pelt serve`, and a few written here
//! (a service on the test's own runtime, a raw socket that answers and
//! keeps the connection open).

use pelt_core::secrets::split_userinfo;
use pelt_core::{Load, ResultsReader, ResultsWriter, RunConfig, Stop, Target, Url};
use pelt_engine::{footer_of, EngineError, Progress, RequestLogFormat, RequestLogSpec, Run};
use pelt_target::{ServeConfig, Server};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
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
        late_start_ns: 0,
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

/// A login target: POST `url` with `body`, as `pelt run --login` makes it.
fn login_to(url: &str, body: &str) -> pelt_core::SessionOptions {
    pelt_core::SessionOptions::login(&format!("POST {url} {body}")).unwrap()
}

/// 200 requests a second for 6 seconds: far more load than a run that
/// stopped when it should could send in the seconds a test watches.
fn a_long_rate_run(addr: SocketAddr) -> RunConfig {
    RunConfig::new(
        vec![Target::get(Url::parse(&format!("http://{addr}/")).unwrap())],
        Load::rate_of(200.0, 20),
        Stop {
            requests: None,
            duration: Some(Duration::from_secs(6)),
        },
    )
}

/// Requests the server receives in the `WATCH` after a run was given up
/// on: at 200/s a run still going sends about 600 in it; one cancelled
/// sends at most what was already on its way (20 connections).
const WATCH: Duration = Duration::from_secs(3);
const AFTER_CANCEL_AT_MOST: u64 = 100;

/// Issue 35 §6: a dropped `Run` went on loading the server (97 → 397
/// requests in the next 1.5 s). Dropping it cancels it, as Ctrl-C does;
/// the witness is the server's own count.
#[test]
fn dropping_a_run_stops_its_load() {
    let server = serve();
    let run = Run::start(a_long_rate_run(server.local_addr())).unwrap();
    // The load is under way: its first second has been counted.
    while !matches!(run.progress(Duration::from_secs(10)), Progress::Interval(_)) {}
    assert!(server.requests() > 0, "the run was loading the server");
    drop(run);
    let at_drop = server.requests();
    // Not a wait for something to happen: a window in which nothing may.
    std::thread::sleep(WATCH);
    let after = server.requests() - at_drop;
    assert!(
        after < AFTER_CANCEL_AT_MOST,
        "{after} requests reached the server after the run was dropped"
    );
}

/// The same when a `tokio::time::timeout` around the wait expires: the
/// future owns the run, and dropping it drops the run.
#[test]
fn a_timeout_around_the_wait_cancels_the_run() {
    let server = serve();
    let config = a_long_rate_run(server.local_addr());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let timed_out = rt.block_on(async move {
        let run = Run::start_async(config).await.unwrap();
        tokio::time::timeout(Duration::from_millis(1500), run.wait_async()).await
    });
    assert!(timed_out.is_err(), "a 6 s run cannot end within 1.5 s");
    assert!(server.requests() > 0, "the run was loading the server");
    let at_timeout = server.requests();
    std::thread::sleep(WATCH);
    let after = server.requests() - at_timeout;
    assert!(
        after < AFTER_CANCEL_AT_MOST,
        "{after} requests reached the server after the wait timed out"
    );
}

/// A service under test as a harness runs it: spawned on the caller's own
/// runtime (here a current-thread one, `#[tokio::test]`'s flavour), it
/// answers every request 200 over kept-alive connections (`/login` with a
/// session cookie) and counts them.
async fn spawn_service() -> (SocketAddr, Arc<AtomicU64>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicU64::new(0));
    let counted = count.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve_connection(stream, counted.clone()));
        }
    });
    (addr, count)
}

/// One connection of [`spawn_service`]: request after request until the
/// client closes it (or asks to).
async fn serve_connection(mut stream: tokio::net::TcpStream, count: Arc<AtomicU64>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let (head, len) = loop {
            if let Some((head, len)) = request_at(&buf) {
                break (head, len);
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        buf.drain(..len);
        count.fetch_add(1, Ordering::SeqCst);
        let answer: &[u8] = if head.starts_with("post /login") {
            b"HTTP/1.1 200 OK\r\nSet-Cookie: session=s1\r\nContent-Length: 2\r\n\r\nin"
        } else {
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        };
        if stream.write_all(answer).await.is_err() || head.contains("connection: close") {
            return;
        }
    }
}

/// A whole request at the start of `buf`: its head (lower case) and its
/// length, body included (by Content-Length); `None` until it is all in.
fn request_at(buf: &[u8]) -> Option<(String, usize)> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    let body: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    (buf.len() >= end + body).then_some((head, end + body))
}

/// A run with a login against [`spawn_service`], `requests` long.
fn service_run(addr: SocketAddr, requests: u64) -> RunConfig {
    let mut config = RunConfig::new(
        vec![Target::get(Url::parse(&format!("http://{addr}/")).unwrap())],
        Load::closed(2),
        stop(requests),
    );
    config.http.session = login_to(&format!("http://{addr}/login"), "user=alice&pass=example");
    // What the refused calls used to cost: every login's whole timeout.
    config.http.timeout = Duration::from_secs(3);
    config
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Issue 35 §6: with the service on the test's own current-thread
/// runtime, `Run::start` with a login failed after the whole timeout and
/// `run.wait()` failed every request as a timeout: the blocked thread was
/// the service's. The async calls (and `spawn_blocking`) work there, with
/// the service's own count as witness.
#[test]
fn a_service_on_the_callers_current_thread_runtime_is_loaded() {
    let rt = current_thread();
    rt.block_on(async {
        let (addr, served) = spawn_service().await;
        let summary = Run::start_async(service_run(addr, 40))
            .await
            .unwrap()
            .wait_async()
            .await;
        assert_eq!(summary.total.logins, 2);
        assert_eq!(
            (summary.total.requests, summary.total.successes),
            (40, 40),
            "{:?}",
            summary.total.examples
        );
        assert_eq!(
            served.load(Ordering::SeqCst),
            42,
            "40 requests and 2 logins"
        );

        // The other fix the refusal names: wait on a blocking thread.
        let run = Run::start_async(service_run(addr, 40)).await.unwrap();
        let summary = tokio::task::spawn_blocking(move || run.wait())
            .await
            .unwrap();
        assert_eq!((summary.total.requests, summary.total.successes), (40, 40));
        assert_eq!(served.load(Ordering::SeqCst), 84);
    });
}

/// ... and the blocking calls, which cannot work there, refuse at once
/// (before any login or request reaches the service), naming the fix.
#[test]
fn blocking_calls_on_a_busy_current_thread_runtime_refuse_at_once() {
    let rt = current_thread();
    rt.block_on(async {
        let (addr, served) = spawn_service().await;
        let refused = Run::start(service_run(addr, 40)).unwrap_err();
        assert!(
            matches!(refused, EngineError::BlocksRuntime { .. }),
            "{refused}"
        );
        let said = refused.to_string();
        for fix in ["Run::start_async", "spawn_blocking", "multi_thread"] {
            assert!(said.contains(fix), "{said}");
        }
        assert_eq!(served.load(Ordering::SeqCst), 0, "no login was tried");

        // Without a login the start blocks for no answer, but the wait
        // would: it panics before blocking, and the run, dropped, stops.
        let mut config = service_run(addr, 40);
        config.http.session = Default::default();
        let run = Run::start(config).unwrap();
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run.wait()))
            .expect_err("Run::wait refuses");
        let said = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            said.contains("Run::wait") && said.contains("wait_async"),
            "{said}"
        );
    });
}

/// A raw server on a thread of its own, for behaviour no real server
/// here has: it accepts `n` connections, reads one request from each
/// (head and Content-Length body), writes what `answer` makes of its
/// number and the request, and keeps every connection open until the
/// returned sender is dropped.
fn raw_server(
    n: usize,
    answer: impl Fn(usize, &[u8]) -> Vec<u8> + Send + 'static,
) -> (SocketAddr, std::sync::mpsc::Sender<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut open = Vec::new();
        for i in 0..n {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            let len = loop {
                if let Some((_, len)) = request_at(&buf) {
                    break len;
                }
                match stream.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(k) => buf.extend_from_slice(&chunk[..k]),
                }
            };
            let _ = stream.write_all(&answer(i, &buf[..len]));
            open.push(stream);
        }
        // Until the test is done: the connections stay open.
        let _ = stopped.recv();
    });
    (addr, stop)
}

/// Issue 35 §6: a login read its response to EOF, so a server that
/// answers in full but ignores `Connection: close` failed every login
/// after the whole `--timeout`. Read by its framing (Content-Length for
/// one sender, chunked for the other), both logins succeed at once.
#[test]
fn a_login_answered_in_full_on_a_connection_kept_open_succeeds() {
    let server = serve();
    let (login, done) = raw_server(2, |i, _| {
        match i {
        0 => b"HTTP/1.1 200 OK\r\nSet-Cookie: s=1\r\nContent-Length: 9\r\n\r\nlogged in".to_vec(),
        _ => b"HTTP/1.1 200 OK\r\nSet-Cookie: s=2\r\nTransfer-Encoding: chunked\r\n\r\n9\r\nlogged in\r\n0\r\n\r\n".to_vec(),
    }
    });
    let mut config = RunConfig::new(
        vec![Target::get(
            Url::parse(&format!("http://{}/", server.local_addr())).unwrap(),
        )],
        Load::closed(2),
        stop(20),
    );
    config.http.session = login_to(&format!("http://{login}/login"), "user=alice&pass=example");
    // Bounds the old behaviour: it failed after this.
    config.http.timeout = Duration::from_secs(5);
    let run = Run::start(config).expect("both logins were answered in full");
    let summary = run.wait();
    drop(done);
    assert_eq!(summary.total.logins, 2);
    assert_eq!((summary.total.requests, summary.total.successes), (20, 20));
}

/// Issue 35 §6: the error from `Run::start` quoted a refused login's
/// response, and a service that echoes the form showed the password.
#[test]
fn a_refused_logins_error_quotes_no_secret() {
    let password = "PASSW0RD-ECHOED-3b1f";
    let (login, done) = raw_server(1, |_, request| {
        let end = request.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let form = &request[end..];
        let mut answer = format!(
            "HTTP/1.1 401 Unauthorized\r\nContent-Length: {}\r\n\r\n",
            form.len()
        )
        .into_bytes();
        answer.extend_from_slice(form);
        answer
    });
    let server = serve();
    let mut config = RunConfig::new(
        vec![Target::get(
            Url::parse(&format!("http://{}/", server.local_addr())).unwrap(),
        )],
        Load::closed(1),
        stop(5),
    );
    config.http.session = login_to(
        &format!("http://{login}/login"),
        &format!("user=alice&password={password}"),
    );
    config.http.timeout = Duration::from_secs(5);
    let said = Run::start(config).unwrap_err().to_string();
    drop(done);
    assert!(said.contains("401"), "{said}");
    assert!(!said.contains(password), "{said}");
    assert!(said.contains("REDACTED"), "{said}");
    assert_eq!(server.requests(), 0, "no load after a failed login");
}

/// Issue 35 §6: `Run::start_with_log` with `targets_shown: None` wrote
/// `?token=<secret>` on every line.
#[test]
fn the_request_log_names_no_secret_by_default() {
    let server = serve();
    let token = "T0KEN-IN-THE-LOG-8e2d";
    let config = RunConfig::new(
        vec![Target::get(
            Url::parse(&format!(
                "http://{}/a?token={token}&x=1",
                server.local_addr()
            ))
            .unwrap(),
        )],
        Load::closed(1),
        stop(10),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("requests.csv");
    let spec = RequestLogSpec {
        path: path.clone(),
        format: RequestLogFormat::Csv,
        targets_shown: None,
    };
    let summary = Run::start_with_log(config, Some(spec)).unwrap().wait();
    assert_eq!(summary.total.requests, 10);
    let log = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        log.lines().count(),
        11,
        "a header and a line per request:\n{log}"
    );
    assert!(!log.contains(token), "{log}");
    assert!(log.contains("/a?token=REDACTED&x=1"), "{log}");
}
