//! `pelt run`'s flags lowered into a `RunConfig`: the cross-flag checks
//! (messages that name flags), pelt-core's rules for the words
//! (`RequestWords`, schedules, durations), then `RunConfig::validate`.

use super::RunArgs;
use super::UserError;
use pelt_core::config::{
    WordError, DEFAULT_CLOSED_CONNECTIONS, DEFAULT_RATE_CONNECTIONS, MAX_BODY,
};
use pelt_core::targets::{read_limited, ReadError, TargetsFormat};
use pelt_core::{
    parse_duration, ConnectTo, HttpOptions, Load, Order, RunConfig, Spec, Stop, ThinkTime,
};
use std::time::Duration;

impl TryFrom<&RunArgs> for RunConfig {
    type Error = UserError;

    fn try_from(a: &RunArgs) -> Result<RunConfig, UserError> {
        a.config_with(None)
    }
}

impl RunArgs {
    /// The run these flags describe; with `load`, under that load instead
    /// of -c/--rate/--stages' (a sweep's or an experiment's step, which
    /// then overrides its length and warm-up by type, not by flags).
    pub fn config_with(&self, given: Option<Load>) -> Result<RunConfig, UserError> {
        let a = self;
        if a.targets_format.is_some() && a.targets_file.is_none() {
            // clap's `requires` does not see it next to a URL.
            return Err(UserError(
                "--targets-format applies to a targets file; add -f FILE, or drop it for a single URL".into(),
            ));
        }
        if a.scenario.is_some()
            && (a.method.is_some()
                || a.body.is_some()
                || a.body_file.is_some()
                || !a.headers.is_empty()
                || a.host.is_some()
                || a.session.login.is_some())
        {
            return Err(UserError(
                "-m, --body, -H, --host and --login apply to a URL or targets file; with --scenario, put methods, headers, bodies and a login ([[once]] steps) in the scenario file".into(),
            ));
        }
        if a.targets_file.is_some()
            && (a.method.is_some() || a.body.is_some() || a.body_file.is_some())
        {
            return Err(UserError(
                "-m, --body and --body-file apply to a single URL; with -f, give methods and bodies in the targets file".into(),
            ));
        }
        let body = match (&a.body, &a.body_file) {
            (Some(text), _) => text.clone().into_bytes(),
            // Capped: `--body-file /dev/zero` must not read forever.
            (None, Some(path)) => {
                read_limited(path, MAX_BODY).map_err(|e| {
                    let fix = match e {
                        // It says what to do already.
                        ReadError::TooLarge { .. } => "",
                        ReadError::Io(_) | ReadError::Directory => "; check the path",
                    };
                    UserError(format!(
                        "cannot read --body-file '{}': {e}{fix}",
                        path.display()
                    ))
                })?
            }
            (None, None) => Vec::new(),
        };
        let body = a.streamed.body(body)?;
        let mut headers = a.headers.clone();
        let typed = headers.iter().any(|h| {
            h.split_once(':')
                .is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case("content-type"))
        });
        if a.streamed.builds_json() && !typed {
            headers.push("Content-Type: application/json".into());
        }
        let words = pelt_core::config::RequestWords {
            url: a.url.clone().unwrap_or_default(),
            method: a.method.clone(),
            headers,
            body,
            host: a.host.clone(),
        };
        // --until runs for at most --max-duration (stopping earlier when
        // its interval is narrow enough: `execute`).
        let duration = match (&a.max_duration, &a.duration) {
            (Some(_), _) => opt_duration(&a.max_duration, "--max-duration")?,
            // siege's `-d 1` is a delay between a user's requests; here -d
            // is how long the run lasts.
            (None, Some(d)) if d.trim().parse::<f64>().is_ok_and(|v| v != 0.0) => {
                let d = d.trim();
                return Err(UserError(format!(
                    "-d/--duration: invalid duration '{d}': a unit is missing; -d is how long the run lasts here: \
                     write -d {d}s for {d} seconds of load (siege's -d {d}, a pause between a \
                     user's requests, is --delay {d}s; a number of requests is -n)"
                )));
            }
            (None, _) => opt_duration(&a.duration, "-d/--duration")?,
        };
        let warmup = opt_duration(&a.warmup, "--warmup")?.unwrap_or(Duration::ZERO);
        let load = match given {
            Some(load) => load,
            None => load(a)?,
        };
        // Not a re-check of validate(): it sees `streams: 1`, the default,
        // and cannot tell that `--streams` was given without `--http2`.
        if a.streams.is_some() && !a.http2 && !a.http3 {
            return Err(UserError(super::errors::config_error(
                &pelt_core::ConfigError::StreamsWithoutHttp2,
            )));
        }
        let mut http = HttpOptions {
            keepalive: !a.no_keepalive,
            insecure: a.insecure,
            http2: a.http2,
            http3: a.http3,
            zero_rtt: a.zero_rtt,
            streams: a.streams.unwrap_or(1),
            connect_to: a
                .connect_to
                .iter()
                .map(|c| ConnectTo::parse(c))
                .collect::<Result<_, _>>()
                .map_err(|e| UserError(e.to_string()))?,
            unix_socket: a
                .unix_socket
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned()),
            source_addresses: match &a.source_addresses {
                Some(list) => {
                    pelt_core::parse_source_addresses(list).map_err(|e| UserError(e.to_string()))?
                }
                None => Vec::new(),
            },
            connect_rate: a.connect_rate,
            follow: a.follow.unwrap_or(0),
            follow_any_host: a.follow_any_host,
            accept_variable_length: a.accept_variable_length,
            tx_stamps: a.tx_stamps,
            // A measuring switch, not a flag (docs/BENCHMARKS.md).
            no_gso: std::env::var_os("PELT_QUIC_GSO").is_some_and(|v| v == "0"),
            no_tls_resume: a.no_tls_resume,
            session: a.session.options()?,
            proxy: a.proxy.options()?,
            streamed: a.streamed.options()?,
            ws: a.ws.options()?,
            ..HttpOptions::default()
        };
        if let Some(t) = opt_duration(&a.timeout, "--timeout")? {
            http.timeout = t;
        }
        if let Some(t) = opt_duration(&a.connect_timeout, "--connect-timeout")? {
            http.connect_timeout = t;
        }
        let mut targets = match (&a.url, &a.targets_file) {
            (_, Some(path)) => {
                let format = a
                    .targets_format
                    .as_deref()
                    .map(str::parse::<TargetsFormat>)
                    .transpose()
                    .map_err(|e| UserError(e.to_string()))?;
                let (mut targets, format) = pelt_core::targets::read_detected(path, format)
                    .map_err(|e| UserError(e.to_string()))?;
                // -H adds to every target (an Authorization header, say).
                let headers = a
                    .headers
                    .iter()
                    .map(|h| parse_header(h))
                    .collect::<Result<Vec<_>, _>>()?;
                pelt_core::targets::add_headers(&mut targets, &headers, format);
                if let Some(host) = &a.host {
                    // --host replaces any Host header, from -H or the file.
                    pelt_core::config::check_host(host).map_err(word_error)?;
                    pelt_core::config::apply_host(&mut targets, host);
                }
                targets
            }
            // One set of rules for a request's words, a program's too.
            (Some(_), None) => vec![words.target().map_err(word_error)?],
            // Replaced by the scenario's steps below.
            (None, None) if a.scenario.is_some() => {
                vec![pelt_core::Target::get(
                    pelt_core::Url::parse("http://127.0.0.1/").expect("a URL"),
                )]
            }
            (None, None) => return Err(UserError("give a URL, or a targets file with -f".into())),
        };
        if a.method.is_some() && targets.iter().any(|t| t.url.scheme.is_ws()) {
            return Err(UserError(
                "-m: a WebSocket upgrade is always a GET, and each message is the --body; drop -m"
                    .into(),
            ));
        }
        a.session.apply(&mut targets)?;
        let mut config =
            RunConfig {
                targets: targets.into(),
                order: if a.random {
                    Order::Random {
                        seed: a.seed.unwrap_or(1),
                    }
                } else {
                    Order::RoundRobin
                },
                think: a
                    .delay
                    .as_deref()
                    .map(ThinkTime::parse)
                    .transpose()
                    .map_err(|e| UserError(format!("--delay: {e}")))?,
                load: load.clone(),
                stop: Stop {
                    requests: a.requests,
                    duration,
                },
                warmup,
                threads: a.threads.unwrap_or_else(pelt_core::config::default_threads),
                http,
                shard: None,
                run_id: None,
                start_at_unix_ns: None,
                arrivals: match a.arrivals.as_deref() {
                    Some("poisson") => pelt_core::Arrivals::Poisson {
                        seed: a.seed.unwrap_or(1),
                    },
                    _ if a.seed.is_some() && !a.random => {
                        return Err(UserError(
                            "--seed seeds --random and --arrivals poisson: add one, or drop --seed"
                                .into(),
                        ))
                    }
                    _ => pelt_core::Arrivals::Uniform,
                },
                send_window: match a.send_window.as_deref() {
                    Some(_) if load.rate().is_none() => return Err(UserError(
                        "--send-window times rate-mode sends: add --rate R, or drop --send-window"
                            .into(),
                    )),
                    None | Some("auto") => pelt_core::SendWindow::Auto,
                    Some(v) => pelt_core::SendWindow::Max(
                        parse_duration(v)
                            .map_err(|e| UserError(format!("--send-window: {e}; or `auto`")))?,
                    ),
                },
                abort_on: a.abort_on.clone(),
                scenario: None,
            };
        if let Some(path) = &a.scenario {
            let warnings =
                pelt_scenario::lower(path, &mut config).map_err(|e| UserError(e.to_string()))?;
            // Before any load: the run goes on, the user can still stop it.
            for w in warnings {
                eprintln!("pelt: warning: {w}");
            }
        }
        a.sharding.apply(&mut config)?;
        config
            .validate()
            .map_err(|e| UserError(super::errors::config_error(&e)))?;
        Ok(config)
    }
}

/// `--rate`/`--stages` and `-c`, each a number or a schedule.
fn load(a: &RunArgs) -> Result<Load, UserError> {
    let parse =
        |flag: &str, text: &str| Spec::parse(text).map_err(|e| UserError(format!("{flag}: {e}")));
    let rate = match (&a.rate, &a.stages) {
        (Some(r), _) => Some(parse("--rate", r)?),
        (None, Some(s)) => match parse("--stages", s)? {
            Spec::Constant(_) => {
                return Err(UserError(format!(
                    "--stages: invalid value '{}': stages are DURATION:RATE,...; use --stages 30s:100,1m:1000 or --rate for one rate",
                    s.escape_debug()
                )))
            }
            varying => Some(varying),
        },
        (None, None) => None,
    };
    let connections = a
        .connections
        .as_deref()
        .map(|c| parse("-c/--connections", c))
        .transpose()?;
    // Only what a u32 cannot say; the range is validate()'s (a count
    // beyond u32 saturates, and validate() refuses it as too many).
    let whole = |v: f64| -> Result<u32, UserError> {
        if v.fract() != 0.0 {
            return Err(UserError(format!(
                "-c/--connections must be a whole number, like -c 50 (got {v})"
            )));
        }
        Ok(v as u32)
    };
    // Range checks, with the other cross-flag rules, in validate().
    Ok(match (rate, connections) {
        (Some(_), Some(Spec::Varying(_))) => {
            return Err(UserError(
                "a -c schedule is for closed loops; with --rate, -c is the connection pool's size, a number like -c 200 (the rate's schedule sets the load)".into(),
            ))
        }
        (Some(rate), c) => {
            let connections = match c {
                Some(Spec::Constant(v)) => whole(v)?,
                _ => DEFAULT_RATE_CONNECTIONS,
            };
            match rate {
                Spec::Constant(rate) => Load::rate_of(rate, connections),
                Spec::Varying(s) => Load::Rate {
                    rate: s.peak(),
                    connections,
                    schedule: Some(s),
                },
            }
        }
        (None, Some(Spec::Varying(s))) => Load::Closed {
            connections: s.peak().ceil().min(f64::from(u32::MAX)) as u32,
            schedule: Some(s),
        },
        (None, Some(Spec::Constant(v))) => Load::closed(whole(v)?),
        (None, None) => Load::closed(DEFAULT_CLOSED_CONNECTIONS),
    })
}

fn opt_duration(value: &Option<String>, flag: &str) -> Result<Option<Duration>, UserError> {
    value
        .as_deref()
        .map(|v| parse_duration(v).map_err(|e| UserError(format!("{flag}: {e}"))))
        .transpose()
}

/// A request's words refused by pelt-core's rules, said in the flags'.
fn word_error(e: WordError) -> UserError {
    UserError(match &e {
        WordError::Host { text, why } => format!(
            "invalid --host '{}': {why}; give a host name, like --host api.example.com or --host example.com:8080",
            text.escape_debug()
        ),
        WordError::Header { text, why } => format!(
            "invalid header '{}': {why}; use -H 'Name: value'",
            text.escape_debug()
        ),
        WordError::Method(m) => format!(
            "invalid method '{}'; use a plain word like GET, POST or PUT",
            m.escape_debug()
        ),
        WordError::Url(_) | WordError::Request(_) => e.to_string(),
    })
}

/// `-H 'Name: value'`, by pelt-core's rule ([`pelt_core::config::parse_header`],
/// also a targets file's), worded for the flag.
pub fn parse_header(h: &str) -> Result<(String, String), UserError> {
    pelt_core::config::parse_header(h).map_err(word_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn config(args: &[&str]) -> Result<RunConfig, UserError> {
        let mut argv = vec!["pelt", "run"];
        argv.extend_from_slice(args);
        let cli = crate::flags::Cli::try_parse_from(argv).expect("clap accepts");
        match cli.command {
            crate::flags::Command::Run(a) => RunConfig::try_from(&*a),
            _ => unreachable!(),
        }
    }

    /// Issue 28 §3: a program's words and the command line's make the same
    /// run, defaults included (threads per core, GET or POST, Basic auth
    /// from the URL, --host).
    #[test]
    fn a_programs_words_make_the_clis_run() {
        let cli = config(&[
            "http://alice:pw@127.0.0.1:1/x",
            "-H",
            "X-A: 1",
            "--body",
            "{}",
            "--host",
            "api.example",
            "--rate",
            "50",
            "-d",
            "2s",
        ])
        .unwrap();
        let words = pelt_core::config::RequestWords {
            url: "http://alice:pw@127.0.0.1:1/x".into(),
            headers: vec!["X-A: 1".into()],
            body: b"{}".to_vec(),
            host: Some("api.example".into()),
            ..Default::default()
        };
        let stop = Stop {
            requests: None,
            duration: Some(Duration::from_secs(2)),
        };
        let library = RunConfig::new(
            vec![words.target().unwrap()],
            Load::rate_of(50.0, pelt_core::config::DEFAULT_RATE_CONNECTIONS),
            stop,
        );
        assert_eq!(cli, library);
        // And the closed loop's defaults.
        let cli = config(&["http://127.0.0.1:1/"]).unwrap();
        let library = RunConfig::new(
            vec![pelt_core::config::RequestWords::get("http://127.0.0.1:1/")
                .target()
                .unwrap()],
            Load::closed(pelt_core::config::DEFAULT_CLOSED_CONNECTIONS),
            Stop::default(),
        );
        assert_eq!(cli, library);
    }

    /// Issue 35 §6: the docs' login sent its form with no Content-Type
    /// and left cookies off, so `pelt compare` refused a program's run
    /// against the CLI's ("--cookies: off vs on"). The library's builder
    /// makes the CLI's login.
    #[test]
    fn a_programs_login_is_the_clis_login() {
        let line = "POST http://127.0.0.1:1/login user=alice&password=example";
        let cli = config(&["http://127.0.0.1:1/", "--login", line]).unwrap();
        let mut library = RunConfig::new(
            vec![pelt_core::config::RequestWords::get("http://127.0.0.1:1/")
                .target()
                .unwrap()],
            Load::closed(pelt_core::config::DEFAULT_CLOSED_CONNECTIONS),
            Stop::default(),
        );
        library.http.session = pelt_core::SessionOptions::login(line).unwrap();
        assert_eq!(cli, library);
        let login = library.http.session.login.as_ref().unwrap();
        assert!(library.http.session.cookies);
        assert_eq!(
            login.headers,
            [(
                "Content-Type".to_string(),
                "application/x-www-form-urlencoded".to_string()
            )]
        );
    }

    #[test]
    fn defaults_follow_the_load_model() {
        let c = config(&["http://127.0.0.1:1/"]).unwrap();
        assert_eq!(c.load, Load::closed(10));
        assert_eq!(c.targets[0].method, "GET");
        let c = config(&["http://127.0.0.1:1/", "--rate", "500", "--body", "x"]).unwrap();
        assert_eq!(c.load, Load::rate_of(500.0, 100));
        assert_eq!(c.targets[0].method, "POST");
    }

    #[test]
    fn bad_input_says_how_to_fix_it() {
        for (args, hint) in [
            (&["localhost:80"][..], "no scheme"),
            (&["http://h/", "-d", "10"], "write -d 10s"),
            (&["http://h/", "-d", "1"], "is --delay 1s"),
            (&["http://h/", "-d", "10x"], "the unit is not one of"),
            (&["http://h/", "--rate", "0"], "--rate must be"),
            (&["http://h/", "-H", "NoColon"], "-H 'Name: value'"),
            (&["http://h/", "-m", "GE T"], "invalid method"),
            (&["http://h/", "-c", "0"], "at least 1"),
            (&["http://h/", "-H", "X: a\nb"], "line break"),
            (&["http://h/", "-H", "X: a\0b"], "line break or NUL"),
            (&["http://h/", "--host", ""], "invalid --host"),
            (&["http://h/", "--host", "a b"], "invalid --host"),
            (&["http://h/", "--host", "h:0"], "port must be"),
            (&["http://h/", "--host", "[::1"], "closing"),
            (&["http://h/", "--connect-to", "a:1:b"], "four fields"),
            (
                &["http://h/", "--connect-rate", "0"],
                "--connect-rate must be",
            ),
            (&["http://h/", "--follow", "1000"], "at most 100"),
            (
                &["https://h/", "--unix-socket", "/x.sock"],
                "carries no TLS",
            ),
            (
                &["http://h/", "--follow", "2", "--follow-any-host", "--http2"],
                "same origin only",
            ),
            (
                &[
                    "http://h/",
                    "--unix-socket",
                    "/x.sock",
                    "--follow",
                    "2",
                    "--follow-any-host",
                ],
                "cannot leave a --unix-socket",
            ),
            (
                &["http://h/", "--http2", "-c", "1..4/2s"],
                "a -c schedule counts HTTP/1.1 connections",
            ),
            (
                &["https://h/", "--http3", "--http2"],
                "--http2 and --http3 ask for different protocols",
            ),
            (&["http://h/", "--http3"], "use an https:// URL"),
            (
                &["https://h/", "--http3", "--proxy", "http://127.0.0.1:3128"],
                "no CONNECT-UDP",
            ),
            (
                &["https://h/", "--http3", "--unix-socket", "/x.sock"],
                "--unix-socket cannot carry HTTP/3",
            ),
            (
                &[
                    "https://h/",
                    "--http3",
                    "--follow",
                    "2",
                    "--follow-any-host",
                ],
                "same origin only",
            ),
            (&["http://h/a\nb", "-n", "1"], "invalid URL"),
            (&["http://h/", "--rate", "1e300"], "at most 10,000,000"),
            (
                &["http://h/", "--body-file", "/no/such/file"],
                "cannot read --body-file",
            ),
        ] {
            let e = config(args).unwrap_err().0;
            assert!(e.contains(hint), "{args:?}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }
}
