//! The CLI's words for library errors: pelt-core's messages name
//! `RunConfig`'s fields (a library user sets those); here the same
//! problems are said in the flags a command-line user gives.

use pelt_core::ConfigError;
use pelt_engine::EngineError;

/// `e` as the command line says it.
pub fn engine_error(e: &EngineError) -> String {
    match e {
        EngineError::Config(c) => config_error(c),
        EngineError::Request(what) => format!("{what}; fix the request, or drop --http2 (or --http3)"),
        EngineError::Login(why) => format!("--login failed, no load sent: {why}"),
        EngineError::Runtime(io) => format!(
            "cannot start a worker's event loop: {io}; raise the open-file limit (ulimit -n) or use fewer -t threads"
        ),
        EngineError::StartPassed {
            start_at_unix_ns,
            late_ns,
            length_ns,
        } => {
            let now = (pelt_core::civil::now_unix_ms() / 1000).max(0) as u64;
            format!(
                "--start-at {} passed {} ago, and the measurement lasts {}: nothing of the run is left to send; give a start still to come, like --start-at {}, or leave --start-at out",
                pelt_core::UtcTime::from_unix(start_at_unix_ns / 1_000_000_000),
                pelt_core::civil::span(*late_ns),
                pelt_core::civil::span(*length_ns),
                now + 60,
            )
        }
        other => other.to_string(),
    }
}

/// `e` as the command line says it: in flags (`-c`, `--rate`), with an
/// example to copy.
pub fn config_error(e: &ConfigError) -> String {
    use ConfigError::*;
    match e {
        NoTargets => "no target to load; give a URL, like pelt run http://127.0.0.1:8080/".into(),
        PoissonNeedsConstantRate => "--arrivals poisson needs a constant --rate (ramps, stages and closed loops are not supported); use --rate R, or drop --arrivals".into(),
        NoConnections => "-c/--connections must be at least 1".into(),
        TooManyConnections => "-c/--connections must be at most 100,000, like -c 50".into(),
        BadRate => "--rate must be a number of requests per second, at least 0.001 and at most 10,000,000, like --rate 1000".into(),
        BadRateSchedule => "a --rate schedule's levels must be between 0 and 10,000,000 req/s and not all 0, like --rate 100..2000/30s".into(),
        BadConnectionSchedule => "a -c schedule's levels must be whole numbers of connections, at most 100,000, and not all 0, like -c 1..50/30s".into(),
        NoRequests => "-n/--requests must be at least 1".into(),
        ZeroDuration => "-d/--duration must be longer than zero, like -d 10s".into(),
        ThinkWithRate => "--delay (think time) is for closed loops; with --rate the schedule already spaces requests".into(),
        NoThreads => "--threads must be at least 1".into(),
        BadShard => "--shard I/N needs 0 <= I < N".into(),
        ShardWithoutConnections => "--shard: every shard needs a connection of its own (connection j goes to shard j mod N); raise -c to at least the number of shards".into(),
        ShardWithoutRequests => "--shard: -n is split over the shards and some would send nothing; raise -n to at least the number of shards".into(),
        ZeroTimeout => "--timeout must be longer than zero".into(),
        ZeroConnectTimeout => "--connect-timeout must be longer than zero".into(),
        BadStreams => "--streams must be between 1 and 1000".into(),
        TooManyStreams => "-c × --streams must be at most 1,000,000 streams in flight; use fewer connections or streams, like -c 100 --streams 100".into(),
        ProxyWith => "--proxy works with plain HTTP/1.1 requests only for now; drop --http2, --follow or --unix-socket".into(),
        StreamsWithoutHttp2 => "--streams is for HTTP/2; add --http2 (or --http3), or use -c for more HTTP/1.1 connections".into(),
        HoldWithRate => "--hold keeps -c N connections subscribed for the whole run; it cannot be given a --rate (streams started per second are --rate without --hold)".into(),
        HoldWithRequests => "--hold keeps its subscriptions for the run's -d; drop -n".into(),
        HoldWithoutDuration => "--hold needs how long to stay subscribed: add -d, like -d 30s".into(),
        HoldWithWarmup => "--hold subscribes at the start, inside the warm-up, whose events are left out; drop --warmup".into(),
        EventTimeWithoutStream => "--event-time reads a time in each event, but nothing is read as a stream: add --stream sse (or lines), --llm, or --hold".into(),
        EventTimeFraming => "--event-time needs whole messages: json:PATH with --stream sse or lines, id with --stream sse (chunks are pieces, lines have no id)".into(),
        NoKeepaliveWithHttp2 => "--no-keepalive is HTTP/1.1's Connection: close (and HTTP/3's connection per request); HTTP/2 always reuses its connections, so drop one of them".into(),
        NoKeepaliveWithStreams => "--no-keepalive with --http3 opens a QUIC connection per request, one stream each; drop --streams or --no-keepalive".into(),
        ZeroRttWithoutHttp3 => "--0rtt is QUIC's 0-RTT resumption, for HTTP/3 only; add --http3 or drop --0rtt".into(),
        ZeroRttWithoutResume => "--0rtt resumes TLS sessions and --no-tls-resume forbids that; drop one of them".into(),
        Http3WithHttp2 => "--http2 and --http3 ask for different protocols; give one of them".into(),
        Http3NeedsHttps => "--http3 runs over QUIC, which always uses TLS; use an https:// URL".into(),
        Http3WithProxy => "--proxy cannot carry HTTP/3 (QUIC runs over UDP, and pelt speaks no CONNECT-UDP); drop --proxy or --http3".into(),
        Http3WithUnixSocket => "--unix-socket cannot carry HTTP/3 (QUIC runs over UDP); drop --unix-socket or --http3".into(),
        BadConnectRate => "--connect-rate must be a number of connections per second, at least 0.001 and at most 10,000,000, like --connect-rate 100".into(),
        BadFollow => "--follow must be at most 100 redirects, like --follow 5".into(),
        AnyHostWithoutFollow => "--follow-any-host needs --follow N to say how many redirects to follow".into(),
        AnyHostWithHttp2 => "--follow-any-host is for HTTP/1.1; with --http2 or --http3, --follow follows redirects within the same origin only".into(),
        UnixSocketTls => "--unix-socket carries no TLS; give the URL without it (http://, not https://; ws://, not wss://): it still gives the Host header and path".into(),
        EmptyUnixSocket => "--unix-socket needs a path, like --unix-socket /run/app.sock".into(),
        AnyHostWithUnixSocket => "--follow-any-host cannot leave a --unix-socket (other origins have no socket); drop one of them".into(),
        ScenarioWithStreams => "with --scenario each virtual user has a connection of its own (over HTTP/2 and HTTP/3 too); drop --streams, and use -c for more users".into(),
        WsMethod { url, method } => format!("{url}: a WebSocket upgrade is always a GET, and each message is the body; drop the method {method} from the targets file"),
        WsMixed => "give ws:// (or wss://) targets or http(s):// targets, not both in one run".into(),
        WsWith(what) => format!("a ws:// run cannot use {what} yet (see docs/WEBSOCKET.md); drop that flag"),
        WsOptionsWithoutWs => "--ws-protocol, --ws-binary and --max-message are for WebSocket runs; use a ws:// or wss:// URL".into(),
        WsMaxMessage => "--max-message must be a size of at least 1 byte, like --max-message 1MiB".into(),
        WsProtocolName(p) => format!("--ws-protocol '{p}' is not a token; give a name of letters, digits and !#$%&'*+-.^_`|~, like --ws-protocol chat.v2"),
        WsTextNotUtf8(url) => format!("{url}: the --body is not UTF-8 and cannot go as a text message; add --ws-binary"),
        ConnectionScheduleWithHttp2 => "a -c schedule counts HTTP/1.1 connections; with --http2 or --http3 use a --rate schedule, or a fixed -c with --streams".into(),
        DuplicateHost { target, count } => {
            format!("{target} has {count} Host headers; give one (-H 'Host: NAME' or --host NAME)")
        }
        // The rest name no field: the library's words serve.
        other => other.to_string(),
    }
}

/// An error the user can fix: printed as one line, exit code 2.
#[derive(Debug)]
pub struct UserError(pub String);

impl From<pelt_campaign::Error> for UserError {
    /// The library's errors in the command line's words: a refused
    /// configuration or an engine's error named by its flags.
    fn from(e: pelt_campaign::Error) -> UserError {
        use pelt_campaign::Error;
        UserError(match e {
            Error::Config(c) => config_error(&c),
            Error::Engine { error, secrets } => secrets.text(&engine_error(&error)),
            Error::Until(text) => format!(
                "invalid --until '{text}': give a percentile and a width, like --until 'p99 ±2%'"
            ),
            Error::StartRate { start, max } => {
                format!("--start-rate {start} must be at least 1 and at most --max-rate {max}")
            }
            Error::Mismatch {
                against,
                mismatches,
                narrow,
            } => {
                let against = match against {
                    pelt_campaign::Against::Run(name) => name,
                    pelt_campaign::Against::Baseline(spec) => {
                        format!("the runs compared (--baseline {spec})")
                    }
                };
                let allow = match narrow {
                    true => "--allow-mismatch (or narrow the runs with --url, --tag, --label)",
                    false => "--allow-mismatch",
                };
                pelt_analyze::alike::refusal(&against, &mismatches, allow)
            }
            Error::Paired { a, b } => format!(
                "--paired needs as many B runs as A runs (got {a} and {b}); drop --paired to compare them as independent sets"
            ),
            Error::Baseline(text) => format!(
                "invalid --baseline '{text}': use tag:KEY[=VALUE], label:NAME or last:N, like --baseline tag:release-1.4"
            ),
            Error::NoBaseline {
                recorded: pelt_campaign::Recorded::Capacity,
                spec,
                ..
            } => format!(
                "no recorded sweep with a capacity matches --baseline {spec}; see pelt history trend --metric capacity"
            ),
            Error::NoBaseline {
                recorded,
                spec,
                detail,
                last,
            } => format!(
                "no recorded {} matches --baseline {spec}{detail}; see pelt history{}",
                recorded.noun(),
                recorded.hint(last)
            ),
            Error::Latency { latency, why } => format!(
                "--metric {latency}: {why}; or compare response_time, which the history keeps for every run"
            ),
            Error::NoHistoryPlace => "cannot tell where the history is kept: set PELT_DATA_DIR or HOME, give --history PATH, or use --no-history".into(),
            Error::HistoryDir { dir, why } => format!(
                "cannot create {dir}: {why}; set PELT_DATA_DIR to a writable folder, or use --no-history"
            ),
            Error::NoHistoryToRecord => "--record: PELT_NO_HISTORY is set, so there is no history to record in; give --history PATH|URL, or unset PELT_NO_HISTORY".into(),
            Error::NoResults { id, file, why: Some(why) } => format!(
                "run {id}'s results file {}cannot be read ({why}); the history keeps its figures and JSON report: use --format json",
                file.map_or(String::new(), |f| format!("{f} "))
            ),
            Error::NoResults { id, why: None, .. } => format!(
                "run {id} was recorded without its results file; use --format json for its stored report"
            ),
            Error::Other(message) => message,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ConfigError::*;

    /// The library speaks of fields, the CLI of flags, for the same
    /// problem: neither leaks into the other.
    #[test]
    fn library_errors_name_fields_and_the_cli_names_flags() {
        for (e, field, flag) in [
            (NoConnections, "`load`'s connections", "-c/--connections"),
            (BadRate, "`load`'s rate", "--rate"),
            (ZeroTimeout, "`http.timeout`", "--timeout"),
            (BadStreams, "`http.streams`", "--streams"),
            (NoRequests, "`stop.requests`", "-n/--requests"),
        ] {
            let library = e.to_string();
            assert!(library.contains(field), "{library}");
            assert!(!library.contains("--"), "{library}");
            assert!(config_error(&e).contains(flag), "{}", config_error(&e));
        }
        let login = EngineError::Login("POST http://h/login: status 401".into());
        assert!(!login.to_string().contains("--"), "{login}");
        assert!(engine_error(&login).starts_with("--login failed, no load sent: POST"));
        // Parsed words too: clap names the flag they came with.
        let assertion = "p99 50ms".parse::<pelt_core::Assertion>().unwrap_err();
        assert!(assertion
            .to_string()
            .starts_with("invalid assertion 'p99 50ms'"));
        let rule = "p99 > 1s".parse::<pelt_core::AbortRule>().unwrap_err();
        assert!(!rule.to_string().contains("--abort-on"), "{rule}");
        // pelt-campaign's, likewise.
        let until = pelt_campaign::Until::parse("p99").unwrap_err();
        assert!(
            until.to_string().contains("(`Keep::until`) 'p99'"),
            "{until}"
        );
        assert_eq!(
            UserError::from(until).0,
            "invalid --until 'p99': give a percentile and a width, like --until 'p99 ±2%'"
        );
        let start = pelt_campaign::Error::StartRate {
            start: 5000.0,
            max: 1000.0,
        };
        assert!(!start.to_string().contains("--"), "{start}");
        assert_eq!(
            UserError::from(start).0,
            "--start-rate 5000 must be at least 1 and at most --max-rate 1000"
        );
        // pelt-history's (its errors are pelt-campaign's type).
        let paired = pelt_campaign::Error::Paired { a: 3, b: 2 };
        assert!(!paired.to_string().contains("--"), "{paired}");
        assert_eq!(
            UserError::from(paired).0,
            "--paired needs as many B runs as A runs (got 3 and 2); drop --paired to compare them as independent sets"
        );
        let baseline = pelt_campaign::Error::Baseline("tag".into());
        assert!(
            baseline.to_string().contains("(`Spec::parse`) 'tag'"),
            "{baseline}"
        );
        assert_eq!(
            UserError::from(baseline).0,
            "invalid --baseline 'tag': use tag:KEY[=VALUE], label:NAME or last:N, like --baseline tag:release-1.4"
        );
        for (e, cli) in [
            (
                pelt_campaign::Error::NoBaseline {
                    recorded: pelt_campaign::Recorded::Run,
                    spec: "last:5".into(),
                    detail: " with the same work and complete".into(),
                    last: true,
                },
                "no recorded run matches --baseline last:5 with the same work and complete; see pelt history (last:N counts runs of the same URL)",
            ),
            (
                pelt_campaign::Error::NoBaseline {
                    recorded: pelt_campaign::Recorded::Capacity,
                    spec: "label:x".into(),
                    detail: String::new(),
                    last: false,
                },
                "no recorded sweep with a capacity matches --baseline label:x; see pelt history trend --metric capacity",
            ),
            (
                pelt_campaign::Error::NoHistoryPlace,
                "cannot tell where the history is kept: set PELT_DATA_DIR or HOME, give --history PATH, or use --no-history",
            ),
            (
                pelt_campaign::Error::HistoryDir {
                    dir: "/d".into(),
                    why: "denied".into(),
                },
                "cannot create /d: denied; set PELT_DATA_DIR to a writable folder, or use --no-history",
            ),
            (
                pelt_campaign::Error::NoHistoryToRecord,
                "--record: PELT_NO_HISTORY is set, so there is no history to record in; give --history PATH|URL, or unset PELT_NO_HISTORY",
            ),
            (
                pelt_campaign::Error::NoResults {
                    id: 4,
                    file: Some("/r/a.pelt".into()),
                    why: Some("gone".into()),
                },
                "run 4's results file /r/a.pelt cannot be read (gone); the history keeps its figures and JSON report: use --format json",
            ),
            (
                pelt_campaign::Error::NoResults {
                    id: 4,
                    file: None,
                    why: None,
                },
                "run 4 was recorded without its results file; use --format json for its stored report",
            ),
            (
                pelt_campaign::Error::Latency {
                    latency: "service_time".into(),
                    why: "gone".into(),
                },
                "--metric service_time: gone; or compare response_time, which the history keeps for every run",
            ),
        ] {
            let library = e.to_string();
            assert!(!library.contains("--"), "{library}");
            assert!(!library.contains("pelt history"), "{library}");
            assert_eq!(UserError::from(e).0, cli);
        }
        for (against, narrow, reference, allow) in [
            (
                pelt_campaign::Against::Run("the newest run, #7".into()),
                true,
                "the newest run, #7",
                "--allow-mismatch (or narrow the runs with --url, --tag, --label)",
            ),
            (
                pelt_campaign::Against::Baseline("last:5".into()),
                false,
                "the runs compared (--baseline last:5)",
                "--allow-mismatch",
            ),
        ] {
            let mismatches = vec![pelt_analyze::alike::Mismatch {
                run: "b.pelt".into(),
                differences: vec![],
            }];
            let e = pelt_campaign::Error::Mismatch {
                against,
                mismatches: mismatches.clone(),
                narrow,
            };
            let library = e.to_string();
            assert!(!library.contains("--"), "{library}");
            assert!(library.contains("`allow_mismatch: true`"), "{library}");
            assert_eq!(
                UserError::from(e).0,
                pelt_analyze::alike::refusal(reference, &mismatches, allow)
            );
        }
    }
}
