//! Streamed responses measured as streams (issue 38), against real
//! servers: server-sent events from sse-starlette, NDJSON and an
//! OpenAI-compatible streaming endpoint on uvicorn (pelt-testkit's
//! `StreamServer`), each pacing its events at times the request sets, and
//! nginx in front with its buffering off and on. The pacing is the truth;
//! the server's log (streams and events sent) the witness. Bounds are
//! what the pacing guarantees on a busy machine (an event never arrives
//! before the server sends it; counts are exact), not how close a quiet
//! machine comes.

use pelt_testkit::caddy::Caddy;
use pelt_testkit::nginx::{self_signed_cert, Nginx};
use pelt_testkit::pelt::{count, number, run_json, run_json_nothing_succeeded, warned};
use pelt_testkit::streams::StreamServer;
use serde_json::Value;

/// The report's stream figures, the report checked against its schema.
fn streamed(r: &Value) -> &Value {
    pelt_testkit::schema::run(r);
    let s = &r["streamed"];
    assert!(
        s.is_object(),
        "no streamed figures: {}",
        r["error_examples"]
    );
    s
}

/// Seconds of one of a stream latency's figures (`min_s`, `max_s`, or a
/// percentile like `p50`).
fn secs(s: &Value, measure: &str, figure: &str) -> f64 {
    let m = &s[measure];
    match figure.strip_prefix('p') {
        Some(_) if figure != "p" => number(&m["percentiles_s"][figure]),
        _ => number(&m[figure]),
    }
}

#[test]
fn sse_first_event_gaps_and_counts_follow_the_servers_pacing() {
    let server = StreamServer::start();
    // 10 events: the first 300 ms after the request, then every 50 ms.
    let url = server.url("/sse?first_ms=300&gap_ms=50&events=10");
    let r = run_json(&["run", &url, "-c", "2", "-n", "6"]);
    let s = streamed(&r);
    assert_eq!(s["framing"], "by Content-Type");
    assert_eq!(count(&s["streams"]), 6);
    assert_eq!(count(&s["events"]), 60);
    assert_eq!(count(&s["events_per_stream"]["max"]), 10);
    assert_eq!(count(&s["stream_cut"]), 0);
    // No event arrives before the server sends it.
    assert!(secs(s, "first_event", "min_s") >= 0.300, "{s}");
    assert_eq!(count(&s["gaps"]["count"]), 54, "every gap, once");
    assert_eq!(count(&s["mean_gap"]["count"]), 6, "one mean gap per stream");
    // The last event is 450 ms after the first by the server's clock; the
    // whole stream no sooner than 750 ms after its request went out.
    assert!(number(&r["latency"]["service_time"]["min_s"]) >= 0.750);
    // The timeline's events add up to the total.
    let timeline: u64 = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["events"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(timeline, 60);
    assert!(!warned(&r, "buffered_stream"), "{}", r["warnings"]);
    // The witness: six streams of ten events, each ended by the server.
    let sent = server.sent(6);
    assert_eq!(sent.len(), 6);
    assert!(sent.iter().all(|s| s.events == 10 && s.ended), "{sent:?}");
}

#[test]
fn ndjson_lines_are_events_and_stream_forces_a_framing() {
    let server = StreamServer::start();
    let url = server.url("/ndjson?first_ms=20&gap_ms=10&events=5");
    let r = run_json(&["run", &url, "-c", "1", "-n", "3"]);
    let s = streamed(&r);
    assert_eq!((count(&s["streams"]), count(&s["events"])), (3, 15));
    // Forced: the same body read as SSE has no events (no data: field),
    // read as lines has five per stream whatever its type says.
    let r = run_json(&["run", &url, "-c", "1", "-n", "2", "--stream", "lines"]);
    assert_eq!(streamed(&r)["framing"], "lines");
    assert_eq!(count(&streamed(&r)["events"]), 10);
    let r = run_json(&["run", &url, "-c", "1", "-n", "2", "--stream", "sse"]);
    assert_eq!(count(&streamed(&r)["events"]), 0);
    assert_eq!(count(&streamed(&r)["streams"]), 2);
}

#[test]
fn a_gap_over_the_stall_gap_is_a_stall() {
    let server = StreamServer::start();
    // Five events 20 ms apart, but 1.2 s between the third and fourth.
    let url = server.url("/sse?gap_ms=20&events=5&stall_ms=1200&stall_after=2");
    let r = run_json(&["run", &url, "-n", "1", "--stall-gap", "1s"]);
    let s = streamed(&r);
    assert_eq!(count(&s["events"]), 5);
    assert!(count(&s["stalls"]) >= 1, "{s}");
    assert!(secs(s, "gaps", "max_s") >= 1.2, "{s}");
    let stalls: u64 = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["stalls"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(stalls, count(&s["stalls"]), "the timeline shows it");
}

#[test]
fn a_stream_cut_short_fails_as_stream_cut() {
    let server = StreamServer::start();
    let url = server.url("/sse?gap_ms=10&events=3&cut=1");
    let r = run_json_nothing_succeeded(&["run", &url, "-c", "1", "-n", "2"]);
    assert_eq!(count(&r["failures"]["stream_cut"]), 2, "{}", r["failures"]);
    let s = streamed(&r);
    assert_eq!(count(&s["stream_cut"]), 2);
    assert_eq!(count(&s["streams"]), 0, "a cut stream is not complete");
    // Its events arrived and count; its first event too.
    assert_eq!(count(&s["events"]), 6);
    assert_eq!(count(&s["first_event"]["count"]), 2);
    let sent = server.sent(2);
    assert!(sent.iter().all(|s| s.events == 3 && !s.ended), "{sent:?}");
}

/// `pelt run URL --llm openai --model test` and `more`.
fn llm<'a>(url: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", url, "--llm", "openai", "--model", "test"];
    args.extend_from_slice(more);
    args
}

/// A stream longer than `--timeout` is a `timeout` (censored, as every
/// timeout is), and what came of it counts: its events and its first.
#[test]
fn a_stream_cut_by_the_timeout_keeps_its_events_and_first_event() {
    let server = StreamServer::start();
    let url = server.url("/sse?first_ms=100&gap_ms=100&events=30");
    let r = pelt_testkit::pelt::run_json_maybe_no_response(&[
        "run",
        &url,
        "-c",
        "1",
        "-n",
        "2",
        "--timeout",
        "1s",
    ]);
    assert_eq!(count(&r["failures"]["timeout"]), 2, "{}", r["failures"]);
    let s = streamed(&r);
    assert_eq!(count(&s["streams"]), 0);
    assert_eq!(count(&s["first_event"]["count"]), 2);
    assert!(secs(s, "first_event", "min_s") >= 0.100, "{s}");
    // Events until the timeout: at most 10 each (100 ms apart from 100 ms).
    let events = count(&s["events"]);
    assert!((2..=20).contains(&events), "{s}");
}

#[test]
fn llm_openai_ttft_itl_and_tokens_from_usage() {
    let server = StreamServer::start();
    let url = server.url("/v1/chat/completions?first_ms=300&gap_ms=20");
    let r = run_json(&llm(
        &url,
        &[
            "--prompt-tokens",
            "10",
            "--max-tokens",
            "8",
            "-c",
            "1",
            "-n",
            "3",
        ],
    ));
    let s = streamed(&r);
    assert_eq!(s["llm"], true);
    assert_eq!(count(&s["streams"]), 3);
    // The role chunk, the finish chunk and the usage chunk are no tokens.
    assert_eq!(count(&s["events"]), 24);
    assert_eq!(count(&s["tokens"]["output"]), 24);
    assert_eq!(s["tokens"]["counted_by"], "usage");
    assert!(secs(s, "first_event", "min_s") >= 0.300, "{s}");
    assert_eq!(count(&s["gaps"]["count"]), 21);
    // The request was the chat body, POSTed as JSON.
    let t = &r["config"]["targets"][0];
    assert_eq!(t["method"], "POST");
    assert_eq!(r["config"]["http"]["streamed"]["llm"], "openai");
    let sent = server.sent(3);
    assert!(sent.iter().all(|s| s.events == 8 && s.ended), "{sent:?}");
}

/// A saved run re-reports its stream figures exactly, in every format.
#[test]
fn a_saved_runs_stream_figures_report_again_as_they_did_live() {
    let server = StreamServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.pelt");
    let url = server.url("/sse?first_ms=30&gap_ms=10&events=4");
    let live = run_json(&["run", &url, "-n", "3", "-o", file.to_str().unwrap()]);
    let again = pelt_testkit::pelt::ok_json(
        &pelt_testkit::pelt::pelt()
            .args(["report", file.to_str().unwrap(), "--format", "json"])
            .output()
            .unwrap(),
    );
    assert_eq!(streamed(&live), streamed(&again));
    // `pelt compare` judges the first event and the gaps beside the
    // whole run's metrics when both sides' runs met streams.
    let slower = dir.path().join("slower.pelt");
    let url = server.url("/sse?first_ms=300&gap_ms=10&events=4");
    run_json(&["run", &url, "-n", "3", "-o", slower.to_str().unwrap()]);
    let cmp = pelt_testkit::pelt::ok_json(
        &pelt_testkit::pelt::pelt()
            .args(["compare", file.to_str().unwrap(), slower.to_str().unwrap()])
            .args(["--allow-mismatch", "--format", "json"])
            .output()
            .unwrap(),
    );
    pelt_testkit::schema::compare(&cmp);
    let names: Vec<&str> = cmp["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["metric"]["name"].as_str().unwrap())
        .collect();
    for name in ["first event p50", "first event p99", "gap p99"] {
        assert!(names.contains(&name), "{names:?}");
    }
    for (format, says) in [
        ("text", "time to first event"),
        ("markdown", "| mean gap per stream |"),
        ("html", "id=\"stream-gaps\""),
        ("csv", ",events,stalls"),
    ] {
        let out = pelt_testkit::pelt::pelt()
            .args(["report", file.to_str().unwrap(), "--format", format])
            .output()
            .unwrap();
        let text = pelt_testkit::pelt::ok_stdout(&out);
        assert!(text.contains(says), "{format}: {text}");
    }
}

#[test]
fn an_llm_stream_without_done_is_cut_short() {
    let server = StreamServer::start();
    let url = server.url("/v1/chat/completions?gap_ms=5&done=0");
    let r = run_json_nothing_succeeded(&llm(
        &url,
        &["--prompt", "hi", "--max-tokens", "4", "-n", "2"],
    ));
    assert_eq!(count(&r["failures"]["stream_cut"]), 2, "{}", r["failures"]);
    assert!(r["error_examples"].to_string().contains("[DONE]"));
}

#[test]
fn rate_mode_times_the_first_event_from_the_intended_start() {
    let server = StreamServer::start();
    // One connection, six streams of at least 310 ms offered at 10/s:
    // the sixth is due at 0.5 s but cannot start before ~1.55 s, so its
    // first event is at least 1.35 s after it was due.
    let url = server.url("/sse?first_ms=300&gap_ms=10&events=2");
    let r = run_json(&["run", &url, "--rate", "10", "-n", "6", "-c", "1"]);
    let s = streamed(&r);
    assert_eq!(count(&s["streams"]), 6);
    assert!(secs(s, "first_event", "max_s") >= 1.3, "{s}");
    // From the same start as response time, so never past it.
    assert!(
        secs(s, "first_event", "max_s") <= number(&r["latency"]["response_time"]["max_s"]),
        "{s}"
    );
}

/// nginx in front: with `proxy_buffering off` events pass as sent (no
/// burst); with it on (and sse-starlette's `X-Accel-Buffering: no`
/// ignored) over an HTTP/1.0 upstream (a body to the close: nginx 1.22
/// forwards a chunked upstream's pieces as they come even when
/// buffering, seen here) nginx holds the small events until the stream
/// ends, and the report says the stream was buffered.
#[test]
fn nginx_buffering_makes_a_burst_and_the_report_says_so() {
    let server = StreamServer::start();
    let upstream = format!("http://127.0.0.1:{}", server.port());
    let nginx = Nginx::start(&format!(
        "location /off/ {{ proxy_pass {upstream}/; proxy_http_version 1.1; proxy_buffering off; }}\n\
         location /on/ {{ proxy_pass {upstream}/; proxy_http_version 1.0; proxy_buffering on; \
         proxy_ignore_headers X-Accel-Buffering; }}\n"
    ));
    // Six streams through each location: the same count of events.
    let through = |location: &str| {
        let url = nginx.url(&format!("/{location}/sse?first_ms=50&gap_ms=30&events=10"));
        let r = run_json(&["run", &url, "-c", "2", "-n", "6"]);
        let s = streamed(&r);
        assert_eq!((count(&s["streams"]), count(&s["events"])), (6, 60));
        r
    };
    let off = through("off");
    assert!(secs(&off["streamed"], "first_event", "min_s") >= 0.050);
    assert!(!warned(&off, "buffered_stream"), "{}", off["warnings"]);
    let on = through("on");
    let s = &on["streamed"];
    // Held until the last event was sent, 320 ms in.
    assert!(secs(s, "first_event", "min_s") >= 0.320, "{s}");
    assert!(count(&s["bursts"]) >= 3, "{s}");
    assert!(warned(&on, "buffered_stream"), "{}", on["warnings"]);
    assert_eq!(server.sent(12).len(), 12);
}

/// HTTP/2 (nginx, h2c, proxying) and HTTP/2 and HTTP/3 (Caddy, TLS,
/// flushing each piece): the same stream, the same counts, no event
/// before the server sent it; each request in the proxy's log under its
/// protocol.
#[test]
fn sse_over_http2_and_http3_through_proxies() {
    let server = StreamServer::start();
    let upstream = format!("http://127.0.0.1:{}", server.port());
    let pacing = "sse?first_ms=100&gap_ms=20&events=5";
    let nginx = Nginx::start_h2(
        &format!(
            "location /up/ {{ proxy_pass {upstream}/; proxy_http_version 1.1; proxy_buffering off; }}\n"
        ),
        None,
    );
    let url = nginx.url(&format!("/up/{pacing}"));
    let r = run_json(&[
        "run",
        &url,
        "--http2",
        "-c",
        "1",
        "--streams",
        "2",
        "-n",
        "4",
    ]);
    let s = streamed(&r);
    assert_eq!((count(&s["streams"]), count(&s["events"])), (4, 20), "{s}");
    assert!(secs(s, "first_event", "min_s") >= 0.100, "{s}");
    let lines = nginx.access_log_lines(Some(4));
    assert!(lines.iter().all(|l| l.ends_with(" HTTP/2.0")), "{lines:?}");

    let tls = self_signed_cert();
    let caddy = Caddy::start_proxy(&tls, server.port());
    let url = caddy.url(&format!("/stream/{pacing}"));
    for protocol in ["--http2", "--http3"] {
        let r = run_json(&["run", &url, protocol, "--insecure", "-c", "1", "-n", "3"]);
        let s = streamed(&r);
        assert_eq!(
            (count(&s["streams"]), count(&s["events"])),
            (3, 15),
            "{protocol}: {s} {}",
            r["error_examples"]
        );
        assert!(secs(s, "first_event", "min_s") >= 0.100, "{protocol}: {s}");
    }
    let protos: Vec<String> = caddy
        .log_entries()
        .iter()
        .map(|e| e["request"]["proto"].as_str().unwrap_or("?").to_string())
        .collect();
    assert_eq!(
        protos.iter().filter(|p| *p == "HTTP/2.0").count(),
        3,
        "{protos:?}"
    );
    assert_eq!(
        protos.iter().filter(|p| *p == "HTTP/3.0").count(),
        3,
        "{protos:?}"
    );
    assert_eq!(server.sent(10).len(), 10);
}

#[test]
fn bad_stream_flags_are_refused_with_a_fix() {
    let url = "http://127.0.0.1:9/v1/chat/completions";
    for (args, says) in [
        (vec!["--llm", "openai", "--prompt", "hi"], "--model"),
        (vec!["--llm", "openai", "--model", "m"], "--prompt"),
        (
            vec![
                "--llm", "openai", "--model", "m", "--prompt", "x", "--stream", "lines",
            ],
            "--stream sse",
        ),
        (vec!["--stall-gap", "0s"], "more than 0"),
        (vec!["--hold", "--rate", "5", "-d", "2s"], "--rate"),
        (vec!["--hold", "-n", "5", "-d", "2s"], "drop -n"),
        (vec!["--hold", "-c", "3"], "add -d"),
        (
            vec!["--hold", "-d", "2s", "--warmup", "1s"],
            "drop --warmup",
        ),
        (vec!["--event-time", "json:/ts", "-n", "1"], "--stream sse"),
        (
            vec!["--event-time", "id", "--stream", "lines", "-n", "1"],
            "id with --stream sse",
        ),
        (
            vec!["--event-time", "json:/ts", "--stream", "chunks", "-n", "1"],
            "whole messages",
        ),
        (
            vec!["--event-time", "ts", "--stream", "sse", "-n", "1"],
            "json:PATH",
        ),
    ] {
        let out = pelt_testkit::pelt::pelt()
            .arg("run")
            .arg(url)
            .args(&args)
            .output()
            .unwrap();
        let err = pelt_testkit::pelt::bad_input(&out, &format!("{args:?}"));
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// `--hold`: each connection subscribes once and stays for the run; the
/// server sends five events, each stamped with its clock, then stays
/// silent until pelt leaves at the run's end. Every event the server
/// sent arrives (its log is the witness), each timed from its stamp
/// (`json:/ts`, seconds; `id`, milliseconds): the same machine's clock,
/// so the latency is positive and small. The held streams are closed by
/// the run's end and fail nothing.
#[test]
fn held_subscriptions_time_each_event_from_the_servers_stamp() {
    let server = StreamServer::start();
    let url = server.url("/sse?gap_ms=100&events=5&ts=1&hold_from=0");
    for (event_time, connections) in [("json:/ts", 3u64), ("id", 2)] {
        let c = connections.to_string();
        let r = run_json(&[
            "run",
            &url,
            "--hold",
            "-c",
            &c,
            "-d",
            "2s",
            "--event-time",
            event_time,
        ]);
        let s = streamed(&r);
        assert_eq!(
            count(&r["requests"]["total"]),
            connections,
            "{event_time}: {}",
            r["failures"]
        );
        assert_eq!(
            count(&r["requests"]["failed"]),
            0,
            "{event_time}: {}",
            r["error_examples"]
        );
        assert_eq!(count(&s["streams"]), connections, "{event_time}: {s}");
        assert_eq!(count(&s["held"]), connections, "{event_time}: {s}");
        assert_eq!(count(&s["events"]), 5 * connections, "{event_time}: {s}");
        assert_eq!(count(&s["untimed"]), 0, "{event_time}: {s}");
        assert_eq!(count(&s["event_latency"]["count"]), 5 * connections);
        let p50 = secs(s, "event_latency", "p50");
        assert!(p50 > 0.0 && p50 < 0.5, "{event_time}: {s}");
        // Messages per second, by second: all of them.
        let timeline: u64 = r["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["events"].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(timeline, 5 * connections);
    }
    let sent = server.sent(5);
    assert_eq!(sent.len(), 5, "{sent:?}");
    assert!(sent.iter().all(|s| s.events == 5 && !s.ended), "{sent:?}");
}

/// A stream the server ends during a hold is counted, complete, and its
/// connection subscribes again: the server ends its first four streams
/// after three events and holds the later ones.
#[test]
fn a_stream_that_ends_during_a_hold_is_subscribed_to_again() {
    let server = StreamServer::start();
    let url = server.url("/sse?gap_ms=20&events=3&hold_from=4");
    let r = run_json(&["run", &url, "--hold", "-c", "2", "-d", "3s"]);
    let s = streamed(&r);
    assert_eq!(count(&r["requests"]["total"]), 6, "{}", r["error_examples"]);
    assert_eq!(
        count(&r["requests"]["failed"]),
        0,
        "{}",
        r["error_examples"]
    );
    assert_eq!((count(&s["streams"]), count(&s["held"])), (6, 2), "{s}");
    assert_eq!(count(&s["events"]), 18, "{s}");
    let sent = server.sent(6);
    assert_eq!(sent.iter().filter(|s| s.ended).count(), 4, "{sent:?}");
    assert!(sent.iter().all(|s| s.events == 3), "{sent:?}");
}

/// Output tokens per second per stream (guidellm's definition: tokens
/// over the time from the request's start to the last token), against
/// 20 tokens 25 ms apart from the request's arrival: never above
/// 20 / 475 ms = 42.1/s (the server sends no faster), and `--assert`
/// judges it; per second in the timeline, in JSON and CSV.
#[test]
fn llm_tokens_per_second_per_stream_follow_the_pacing() {
    let server = StreamServer::start();
    let url = server.url("/v1/chat/completions?first_ms=0&gap_ms=25");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.pelt");
    let r = run_json(&llm(
        &url,
        &[
            "--prompt",
            "hi",
            "--max-tokens",
            "20",
            "-c",
            "2",
            "-n",
            "6",
            "--assert",
            "tokens_per_s p50 > 20",
            "-o",
            file.to_str().unwrap(),
        ],
    ));
    let s = streamed(&r);
    let t = &s["tokens"];
    assert_eq!(count(&t["output"]), 120);
    assert_eq!(count(&t["per_stream"]["count"]), 6, "{t}");
    let (p50, max) = (
        number(&t["per_stream"]["p50"]),
        number(&t["per_stream"]["max"]),
    );
    assert!(p50 > 20.0 && max <= 42.2, "{t}");
    let timeline: u64 = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["tokens"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(timeline, 120);
    let csv = pelt_testkit::pelt::ok_stdout(
        &pelt_testkit::pelt::pelt()
            .args(["report", file.to_str().unwrap(), "--format", "csv"])
            .output()
            .unwrap(),
    );
    let column = csv
        .lines()
        .next()
        .unwrap()
        .split(',')
        .position(|c| c == "tokens");
    let column = column.expect("a tokens column");
    let sum: u64 = csv
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(column)?.parse::<u64>().ok())
        .sum();
    assert_eq!(sum, 120, "{csv}");
    for (format, says) in [
        ("text", "output tokens/s per stream: p50"),
        ("markdown", "| output tokens/s per stream |"),
        ("html", "output tokens/s per stream"),
    ] {
        let out = pelt_testkit::pelt::pelt()
            .args(["report", file.to_str().unwrap(), "--format", format])
            .output()
            .unwrap();
        assert!(
            pelt_testkit::pelt::ok_stdout(&out).contains(says),
            "{format}"
        );
    }
    // The same run judged against a rate it cannot reach fails (exit 1).
    let out = pelt_testkit::pelt::pelt()
        .args([
            "report",
            file.to_str().unwrap(),
            "--assert",
            "tokens_per_s p50 > 43",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
