//! The HTTP/1.1 transport against a scripted server: a real TCP listener on
//! loopback that answers each request it reads with the next step of a
//! script (a response, a reset, silence, a close), and the samples a real
//! worker makes of the attempts, timeout included.

use super::h1::H1Sender;
use super::redirect::Redirects;
use super::Runner;
use crate::plan::RunPlan;
use crate::worker::Worker;
use pelt_core::{ErrorKind, HttpOptions, Load, RunConfig, Sample, Stop, Target, Url};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server does with the next request it reads.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Writes these bytes (a whole response) and keeps the connection.
    Respond(&'static str),
    /// Writes the response, then closes the connection while it is idle
    /// (a keep-alive timeout on the server).
    RespondThenClose(&'static str),
    /// Resets the connection (RST) instead of answering.
    Reset,
    /// Closes the connection (FIN) instead of answering.
    Close,
    /// Never answers; the connection stays open until the client gives up.
    Silent,
}

/// A request line the server read, and on which of its connections
/// (numbered from 1 in the order accepted).
type Seen = (usize, String);

const OK: &str = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
const FOUND: &str = "HTTP/1.1 302 Found\r\nLocation: /next\r\nContent-Length: 0\r\n\r\n";
const FOUND_AGAIN: &str = "HTTP/1.1 302 Found\r\nLocation: /last\r\nContent-Length: 0\r\n\r\n";

/// Plays `script`, one step per request, whichever connection the request
/// comes on; a request on a connection the client has closed is read from
/// the next connection accepted.
async fn serve(listener: TcpListener, script: Vec<Step>, seen: Rc<RefCell<Vec<Seen>>>) {
    let mut conn: Option<(usize, TcpStream)> = None;
    let mut accepted = 0;
    for step in script {
        let (id, line) = loop {
            if conn.is_none() {
                let (stream, _) = listener.accept().await.expect("accept");
                accepted += 1;
                conn = Some((accepted, stream));
            }
            let (id, stream) = conn.as_mut().expect("set above");
            match read_request_line(stream).await {
                Some(line) => break (*id, line),
                // The client closed it: the request comes on a new one.
                None => conn = None,
            }
        };
        seen.borrow_mut().push((id, line));
        let (_, stream) = conn.as_mut().expect("a request was read on it");
        match step {
            Step::Respond(bytes) => stream.write_all(bytes.as_bytes()).await.expect("write"),
            Step::RespondThenClose(bytes) => {
                stream.write_all(bytes.as_bytes()).await.expect("write");
                conn = None;
            }
            Step::Reset => {
                stream.set_zero_linger().expect("SO_LINGER");
                conn = None;
            }
            Step::Close => conn = None,
            Step::Silent => {
                // Until the client closes (or resets) it.
                let mut buf = [0u8; 1024];
                while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {}
                conn = None;
            }
        }
    }
}

/// Reads a request head (the tests send no bodies); returns its first
/// line, or `None` if the connection ended first.
async fn read_request_line(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&head);
    Some(text.lines().next().unwrap_or_default().to_string())
}

/// Sends `requests` requests, one after another, from one HTTP/1.1 sender
/// of a real worker to a server playing `script`; returns the samples and
/// what the server read. `configure` adjusts the run's options.
fn play(
    script: Vec<Step>,
    requests: usize,
    configure: impl FnOnce(&mut HttpOptions),
) -> (Vec<Sample>, Vec<Seen>) {
    let (samples, seen, _) = play_config(script, requests, |c| configure(&mut c.http));
    (samples, seen)
}

/// As [`play`], with the whole configuration to adjust; also returns how
/// many requests the worker counted as retried, and as lost on a reused
/// connection without a retry.
fn play_config(
    script: Vec<Step>,
    requests: usize,
    configure: impl FnOnce(&mut RunConfig),
) -> (Vec<Sample>, Vec<Seen>, [u64; 2]) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/", listener.local_addr().expect("address"));
        let seen = Rc::new(RefCell::new(Vec::new()));
        tokio::task::spawn_local(serve(listener, script, seen.clone()));
        let mut config = config_for(&url);
        configure(&mut config);
        let (samples, counts) = exchange_counting(&config, requests).await;
        let seen = seen.borrow().clone();
        (samples, seen, counts)
    })
}

/// A closed-loop configuration of one connection to `url`.
fn config_for(url: &str) -> RunConfig {
    let url = Url::parse(url).expect("a valid URL");
    let stop = Stop {
        requests: Some(1),
        duration: None,
    };
    let mut config = RunConfig::new(vec![Target::get(url)], Load::closed(1), stop);
    // Bounds every exchange, so a test that goes wrong fails, not hangs.
    config.http.timeout = Duration::from_secs(5);
    config
}

/// Runs `requests` exchanges of target 0 on sender 0 of a worker for
/// `config`, as the worker's own loop does: the same transport each time.
async fn exchange_all(config: &RunConfig, requests: usize) -> Vec<Sample> {
    exchange_counting(config, requests).await.0
}

/// As [`exchange_all`], also returning the requests counted as retried
/// and as lost.
async fn exchange_counting(config: &RunConfig, requests: usize) -> (Vec<Sample>, [u64; 2]) {
    config.validate().expect("a valid configuration");
    let plan = Arc::new(RunPlan::new(config).expect("a plan"));
    let share = plan.shares(config)[0];
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = Worker::new(plan, share, tx);
    // The plan's clock starts a moment ahead, as for a real run.
    tokio::time::sleep_until(worker.plan().instant(0)).await;
    let mut transport = H1Sender::new(None);
    let mut samples = Vec::new();
    for _ in 0..requests {
        let intended = worker.now();
        samples.push(worker.exchange(&mut transport, 0, intended, 0).await);
    }
    // The current second's count, and those of any seconds handed on.
    let mut counts = worker.races_so_far();
    while let Ok(msg) = rx.try_recv() {
        if let crate::intervals::WorkerMsg::Interval { rec, .. } = msg {
            counts[0] += rec.retried;
            counts[1] += rec.lost_on_reuse;
        }
    }
    (samples, counts)
}

#[test]
fn a_response_is_a_sample_and_the_connection_is_reused() {
    let (samples, seen) = play(vec![Step::Respond(OK), Step::Respond(OK)], 2, |_| {});
    for s in &samples {
        assert_eq!((s.status, s.error), (200, None), "{s:?}");
        assert_eq!((s.bytes_in, s.body_bytes), (OK.len() as u64, 5));
        assert!(s.bytes_out > 0);
        let (sent, first) = (s.sent.expect("sent"), s.first_byte.expect("first byte"));
        assert!(
            s.intended <= sent && sent <= first && first <= s.done,
            "{s:?}"
        );
    }
    assert_eq!(
        samples.iter().map(|s| s.reused).collect::<Vec<_>>(),
        [false, true]
    );
    assert_eq!(
        seen,
        [(1, "GET / HTTP/1.1".into()), (1, "GET / HTTP/1.1".into())]
    );
}

#[test]
fn a_reset_is_counted_reset_and_the_next_request_reconnects() {
    let (samples, seen) = play(vec![Step::Reset, Step::Respond(OK)], 2, |_| {});
    assert_eq!(samples[0].error, Some(ErrorKind::Reset), "{:?}", samples[0]);
    assert!(samples[0].sent.is_some() && samples[0].first_byte.is_none());
    assert_eq!((samples[1].status, samples[1].error), (200, None));
    assert!(!samples[1].reused, "a reset connection is not reused");
    assert_eq!(
        seen.iter().map(|(conn, _)| *conn).collect::<Vec<_>>(),
        [1, 2]
    );
}

#[test]
fn a_close_before_the_response_is_counted_closed() {
    let (samples, _) = play(vec![Step::Close], 1, |_| {});
    assert_eq!(
        samples[0].error,
        Some(ErrorKind::Closed),
        "{:?}",
        samples[0]
    );
    assert_eq!(samples[0].bytes_in, 0);
}

#[test]
fn a_server_that_never_answers_is_a_timeout_bounded_by_the_request_timeout() {
    let timeout = Duration::from_millis(200);
    let (samples, seen) = play(vec![Step::Silent, Step::Respond(OK)], 2, |http| {
        http.timeout = timeout;
    });
    let s = &samples[0];
    assert_eq!(s.error, Some(ErrorKind::Timeout), "{s:?}");
    assert!(s.sent.is_some(), "the request was sent, then waited");
    let waited = Duration::from_nanos(s.done - s.intended);
    assert!(
        waited >= timeout,
        "gave up after {waited:?}, before --timeout"
    );
    assert!(waited < timeout * 20, "gave up only after {waited:?}");
    // The timed-out connection is dropped: the next request gets a new one.
    assert_eq!((samples[1].status, samples[1].reused), (200, false));
    assert_eq!(
        seen.iter().map(|(conn, _)| *conn).collect::<Vec<_>>(),
        [1, 2]
    );
}

#[test]
fn an_idle_connection_the_server_closed_is_reopened_not_failed() {
    let (samples, seen) = play(
        vec![Step::RespondThenClose(OK), Step::Respond(OK)],
        2,
        |_| {},
    );
    for s in &samples {
        assert_eq!((s.status, s.error), (200, None), "{s:?}");
    }
    assert!(!samples[1].reused);
    assert_eq!(
        seen.iter().map(|(conn, _)| *conn).collect::<Vec<_>>(),
        [1, 2]
    );
}

/// The request line of each connection the server read one on, in order.
fn connections(seen: &[Seen]) -> Vec<usize> {
    seen.iter().map(|(conn, _)| *conn).collect()
}

// tinyproxy's pattern (issue 22 §6): a response with no `Connection:
// close`, then the connection closed as the next request goes out.
#[test]
fn a_reused_connection_closed_unanswered_is_retried_once_on_a_fresh_one() {
    let script = vec![Step::Respond(OK), Step::Close, Step::Respond(OK)];
    let (samples, seen, [retried, _]) = play_config(script, 2, |_| {});
    for s in &samples {
        assert_eq!((s.status, s.error), (200, None), "{s:?}");
    }
    // The retry went on a new connection, which the sample reports.
    assert!(!samples[1].reused);
    assert_eq!(connections(&seen), [1, 1, 2]);
    assert_eq!(retried, 1);
    // Both writes count as bytes sent.
    assert_eq!(samples[1].bytes_out, 2 * samples[0].bytes_out);
}

#[test]
fn a_reused_connection_reset_unanswered_is_retried_too() {
    let script = vec![Step::Respond(OK), Step::Reset, Step::Respond(OK)];
    let (samples, seen, [retried, _]) = play_config(script, 2, |_| {});
    assert_eq!((samples[1].status, samples[1].error), (200, None));
    assert_eq!(connections(&seen), [1, 1, 2]);
    assert_eq!(retried, 1);
}

#[test]
fn a_retry_is_made_once_and_its_failure_counted() {
    let script = vec![Step::Respond(OK), Step::Close, Step::Close];
    let (samples, seen, [retried, _]) = play_config(script, 2, |_| {});
    assert_eq!(
        samples[1].error,
        Some(ErrorKind::Closed),
        "{:?}",
        samples[1]
    );
    // No third try: the fresh connection's close is the server's answer.
    assert_eq!(connections(&seen), [1, 1, 2]);
    assert_eq!(retried, 1);
}

#[test]
fn a_post_lost_on_a_reused_connection_is_not_sent_again() {
    let script = vec![Step::Respond(OK), Step::Close, Step::Respond(OK)];
    let (samples, seen, [retried, lost]) = play_config(script, 2, |c| {
        c.targets[0].method = "POST".into();
    });
    assert_eq!(
        samples[1].error,
        Some(ErrorKind::Closed),
        "{:?}",
        samples[1]
    );
    assert_eq!(connections(&seen), [1, 1]);
    // Counted as lost, for the report's warning, not as retried.
    assert_eq!(retried, 0);
    assert_eq!(lost, 1);
}

#[test]
fn a_fresh_connection_closed_unanswered_is_not_retried() {
    let (samples, seen, [retried, _]) =
        play_config(vec![Step::Close, Step::Respond(OK)], 1, |_| {});
    assert_eq!(samples[0].error, Some(ErrorKind::Closed));
    assert_eq!(connections(&seen), [1]);
    assert_eq!(retried, 0);
}

#[test]
fn a_refused_connection_is_counted_connect() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let local = tokio::task::LocalSet::new();
    let samples = local.block_on(&rt, async {
        // A port nothing listens on any more.
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/", listener.local_addr().expect("address"));
        drop(listener);
        exchange_all(&config_for(&url), 1).await
    });
    let s = &samples[0];
    assert_eq!(s.error, Some(ErrorKind::Connect), "{s:?}");
    assert!(s.sent.is_none(), "nothing was sent");
}

#[test]
fn without_follow_a_redirect_is_its_own_response() {
    let (samples, seen) = play(vec![Step::Respond(FOUND)], 1, |_| {});
    assert_eq!((samples[0].status, samples[0].error), (302, None));
    assert_eq!(seen.len(), 1);
}

#[test]
fn follow_sends_the_redirect_on_the_same_connection_as_one_request() {
    let (samples, seen) = play(vec![Step::Respond(FOUND), Step::Respond(OK)], 1, |http| {
        http.follow = 2;
    });
    let s = &samples[0];
    assert_eq!((s.status, s.error), (200, None), "{s:?}");
    assert_eq!(
        s.bytes_in,
        (FOUND.len() + OK.len()) as u64,
        "both hops' bytes"
    );
    assert_eq!(s.body_bytes, 5, "the final body");
    assert_eq!(
        seen,
        [
            (1, "GET / HTTP/1.1".into()),
            (1, "GET /next HTTP/1.1".into())
        ]
    );
}

#[test]
fn follow_reopens_the_connection_a_redirect_closed() {
    const FOUND_CLOSE: &str =
        "HTTP/1.1 302 Found\r\nLocation: /next\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    let script = vec![Step::RespondThenClose(FOUND_CLOSE), Step::Respond(OK)];
    let (samples, seen) = play(script, 1, |http| http.follow = 1);
    assert_eq!((samples[0].status, samples[0].error), (200, None));
    assert_eq!(seen[1], (2, "GET /next HTTP/1.1".into()));
}

/// A server whose keep-alive timeout closes the connection just after a
/// redirect that did not say so: the hop goes on a new connection, as a
/// first request would, not on the closed one (which would read `closed`).
#[test]
fn follow_reopens_a_connection_closed_after_a_keep_alive_redirect() {
    let script = vec![Step::RespondThenClose(FOUND), Step::Respond(OK)];
    let (samples, seen) = play(script, 1, |http| http.follow = 1);
    assert_eq!(
        (samples[0].status, samples[0].error),
        (200, None),
        "{:?}",
        samples[0]
    );
    assert_eq!(seen[1], (2, "GET /next HTTP/1.1".into()));
}

#[test]
fn more_redirects_than_follow_allows_is_an_invalid_response() {
    let script = vec![Step::Respond(FOUND), Step::Respond(FOUND_AGAIN)];
    let (samples, seen) = play(script, 1, |http| http.follow = 1);
    let s = &samples[0];
    assert_eq!(s.error, Some(ErrorKind::InvalidResponse), "{s:?}");
    assert_eq!(s.status, 302, "the status of the redirect not followed");
    assert_eq!(s.bytes_in, (FOUND.len() + FOUND_AGAIN.len()) as u64);
    assert_eq!(seen.len(), 2, "no third request");
}

#[test]
fn a_redirect_chain_turns_post_into_get_as_browsers_do() {
    let mut target = Target::get(Url::parse("http://127.0.0.1:1/form").unwrap());
    target.method = "POST".into();
    target.body = b"x=1".to_vec();
    let http = HttpOptions {
        follow: 5,
        ..HttpOptions::default()
    };
    // 307 keeps the method and body; 302 after a POST becomes a GET.
    let mut chain = Redirects::new(&target);
    assert_eq!(chain.step(&http, "/again", 307, 0).ok(), Some(true));
    assert_eq!((chain.method, chain.body), ("POST", true));
    assert_eq!(chain.step(&http, "/done", 302, 0).ok(), Some(true));
    assert_eq!((chain.method, chain.body), ("GET", false));
    assert_eq!(chain.url.path_and_query, "/done");
    // Another origin needs --follow-any-host.
    let f = chain
        .step(&http, "http://example.com/", 301, 42)
        .expect_err("another origin");
    assert_eq!(
        (f.kind, f.status, f.bytes_in),
        (ErrorKind::InvalidResponse, 301, 42)
    );
    assert!(f.detail.contains("--follow-any-host"), "{}", f.detail);
}
