//! `pelt run`: flags -> RunConfig -> Run -> report.

use crate::cli::{FormatArg, RunArgs};
use crate::execute::{execute, Keep};
use crate::output::{check, render_one_with};
use crate::UserError;
use pelt_core::config::{DEFAULT_CLOSED_CONNECTIONS, DEFAULT_RATE_CONNECTIONS, MAX_BODY};
use pelt_core::targets::{read_limited, ReadError, TargetsFormat};
use pelt_core::{
    check_header, check_method, parse_duration, ConnectTo, HttpOptions, Load, Order, RunConfig,
    Spec, Stop, Target, TargetError, ThinkTime, Url,
};
use std::time::Duration;

impl TryFrom<&RunArgs> for RunConfig {
    type Error = UserError;

    fn try_from(a: &RunArgs) -> Result<RunConfig, UserError> {
        if a.targets_format.is_some() && a.targets_file.is_none() {
            // clap's `requires` does not see it next to a URL.
            return Err(UserError(
                "--targets-format applies to a targets file; add -f FILE, or drop it for a single URL".into(),
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
        let method = match &a.method {
            Some(m) => {
                check_method(m).map_err(|_| {
                    UserError(format!(
                        "invalid method '{}'; use a plain word like GET, POST or PUT",
                        m.escape_debug()
                    ))
                })?;
                m.to_ascii_uppercase()
            }
            None if body.is_empty() => "GET".to_string(),
            None => "POST".to_string(),
        };
        let headers = a
            .headers
            .iter()
            .map(|h| parse_header(h))
            .collect::<Result<Vec<_>, _>>()?;

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
        let load = load(a)?;
        // Not a re-check of validate(): it sees `streams: 1`, the default,
        // and cannot tell that `--streams` was given without `--http2`.
        if a.streams.is_some() && !a.http2 {
            return Err(UserError(crate::flag_errors::config_error(
                &pelt_core::ConfigError::StreamsWithoutHttp2,
            )));
        }
        let mut http = HttpOptions {
            keepalive: !a.no_keepalive,
            insecure: a.insecure,
            http2: a.http2,
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
            connect_rate: a.connect_rate,
            follow: a.follow.unwrap_or(0),
            follow_any_host: a.follow_any_host,
            accept_variable_length: a.accept_variable_length,
            tx_stamps: a.tx_stamps,
            session: a.session.options()?,
            proxy: a.proxy.options()?,
            ..HttpOptions::default()
        };
        let host = a.host.as_deref().map(host_header).transpose()?;
        if let Some(t) = opt_duration(&a.timeout, "--timeout")? {
            http.timeout = t;
        }
        if let Some(t) = opt_duration(&a.connect_timeout, "--connect-timeout")? {
            http.connect_timeout = t;
        }
        let targets = match (&a.url, &a.targets_file) {
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
                pelt_core::targets::add_headers(&mut targets, &headers, format);
                targets
            }
            (Some(url), None) => {
                // user:password@ becomes a Basic Authorization header
                // (as curl sends it), so the URL holds no secret.
                let (url, headers) = crate::history::userinfo(url, headers);
                vec![Target {
                    method,
                    url: Url::parse(&url).map_err(|e| UserError(e.to_string()))?,
                    headers,
                    body,
                    weight: 1,
                }]
            }
            (None, None) => return Err(UserError("give a URL, or a targets file with -f".into())),
        };
        let mut targets = targets;
        a.session.apply(&mut targets)?;
        if let Some(host) = host {
            // --host replaces any Host header, from -H or a targets file.
            for t in &mut targets {
                t.headers.retain(|(n, _)| !n.eq_ignore_ascii_case("host"));
                t.headers.push(("Host".into(), host.clone()));
            }
        }
        let mut config =
            RunConfig {
                targets,
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
                load,
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
                    Some(_) if a.rate.is_none() && a.stages.is_none() => return Err(UserError(
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
            };
        a.sharding.apply(&mut config)?;
        config
            .validate()
            .map_err(|e| UserError(crate::flag_errors::config_error(&e)))?;
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

/// `--host`: a host name, IPv4 address or [IPv6] address, optionally
/// with :PORT.
fn host_header(value: &str) -> Result<String, UserError> {
    let bad = |why: &str| {
        UserError(format!(
            "invalid --host '{}': {why}; give a host name, like --host api.example.com or --host example.com:8080",
            value.escape_debug()
        ))
    };
    let (name, port) = match value.strip_prefix('[') {
        Some(v6) => {
            let (addr, rest) = v6
                .split_once(']')
                .ok_or_else(|| bad("the IPv6 address has no closing ']'"))?;
            if addr.is_empty()
                || !addr
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
            {
                return Err(bad("not an IPv6 address"));
            }
            match rest {
                "" => (addr, None),
                _ => (
                    addr,
                    Some(
                        rest.strip_prefix(':')
                            .ok_or_else(|| bad("unexpected text after ']'"))?,
                    ),
                ),
            }
        }
        None => match value.rsplit_once(':') {
            Some((n, p)) => {
                if n.is_empty()
                    || !n
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
                {
                    return Err(bad(
                        "a host name has letters, digits, '-', '.' and '_' only",
                    ));
                }
                (n, Some(p))
            }
            None => {
                if value.is_empty()
                    || !value
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
                {
                    return Err(bad(if value.is_empty() {
                        "it is empty"
                    } else {
                        "a host name has letters, digits, '-', '.' and '_' only"
                    }));
                }
                (value, None)
            }
        },
    };
    if name.is_empty() {
        return Err(bad("it is empty"));
    }
    if let Some(p) = port {
        if p.parse::<u16>().ok().filter(|&p| p != 0).is_none() {
            return Err(bad("the port must be a number from 1 to 65535"));
        }
    }
    Ok(value.to_string())
}

/// `-H 'Name: value'`, checked by the same rule as a targets file's
/// headers ([`check_header`]) and worded for the flag.
pub(crate) fn parse_header(h: &str) -> Result<(String, String), UserError> {
    let bad = |why: &str| {
        UserError(format!(
            "invalid header '{}': {why}; use -H 'Name: value'",
            h.escape_debug()
        ))
    };
    let (name, value) = h.split_once(':').ok_or_else(|| bad("there is no ':'"))?;
    let name = name.trim();
    // The untrimmed value: a trailing line break is still one.
    check_header(name, value).map_err(|e| match e {
        TargetError::HeaderValue(_) => bad("the value contains a line break or NUL"),
        TargetError::HeaderName(_) | TargetError::Method(_) => {
            bad("the name must be a single word such as X-Request-Id")
        }
    })?;
    Ok((name.to_string(), value.trim().to_string()))
}

/// Notes for habits from ab and siege whose flags mean something else
/// here, or whose defaults differ: said before the run, never silently.
fn habits(args: &RunArgs, config: &RunConfig) -> Vec<String> {
    let mut notes = Vec::new();
    // siege's `-r 10` is ten repetitions per user; pelt's -r is --rate.
    let argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let (Some(r), true) = (
        &args.rate,
        argv.iter().any(|a| {
            a == "-r" || (a.starts_with("-r") && a[2..].starts_with(|c: char| c.is_ascii_digit()))
        }),
    ) {
        let c = config.load.connections();
        let count = r
            .trim()
            .parse::<u64>()
            .ok()
            .map_or("N x C".to_string(), |n| {
                n.saturating_mul(u64::from(c)).to_string()
            });
        notes.push(format!(
            "pelt: note: -r {r} is --rate {r} here: an open loop of {r} requests per second in \
             total. For siege's -r (repetitions per user) give the count: -n {count} -c {c} \
             (with --delay for siege's -d)"
        ));
    }
    for t in config.targets.iter().take(1) {
        let typed = t
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
        if !t.body.is_empty() && !typed && args.targets_file.is_none() {
            // ab's -p sends text/plain unless -T says otherwise.
            notes.push(
                "pelt: note: the body goes without a Content-Type header (ab sends text/plain); \
                 add one like -H 'Content-Type: application/json' (ab's -T) if the server needs it"
                    .to_string(),
            );
        }
    }
    let mut seen = Vec::new();
    for t in &config.targets {
        if seen.contains(&t.method) {
            continue;
        }
        seen.push(t.method.clone());
        if let Some(guess) = pelt_core::unregistered_method(&t.method) {
            let hint = match guess {
                "" => "check the spelling".to_string(),
                g => format!("did you mean {g}?"),
            };
            // Not the URL: it may hold a secret.
            notes.push(format!(
                "pelt: warning: method '{}' is not a registered HTTP method and is sent as \
                 written; {hint}",
                t.method.escape_debug(),
            ));
        }
        if seen.len() > 100 {
            break;
        }
    }
    notes
}

/// `pelt run`.
pub fn command(args: RunArgs) -> Result<std::process::ExitCode, UserError> {
    let config = RunConfig::try_from(&args)?;
    if let (Some(t), None, None) = (args.threads, &args.duration, args.requests) {
        // ab's `-t 3` is a 3 s time limit; here it is 3 threads, and the
        // run lasts its default. With -n, the count says how long.
        eprintln!(
            "pelt: note: -t {t} runs {t} worker thread{} (as in wrk), not a time limit (ab's and siege's -t): for that, use -d {t}s",
            if t == 1 { "" } else { "s" }
        );
    }
    for note in habits(&args, &config) {
        eprintln!("{note}");
    }
    if let Some(note) = crate::calibrate::note_for(&config) {
        eprintln!("{note}");
    }
    if args.format == FormatArg::Hdrlog {
        // Refuse before sending load, not after.
        return Err(UserError("--format hdrlog is for saved runs: pelt run URL -o run.pelt, then pelt report run.pelt --format hdrlog".into()));
    }
    // The history is opened before any load is sent: a database pelt
    // cannot use is an input error, not a surprise after the run.
    crate::history::baseline::check_spec(args.record.baseline.as_deref())?;
    let mut history = crate::history::Recording::start(&args.record)?;
    if history.is_none() && args.record.baseline.is_some() {
        // Without a history the baseline would be skipped without a word.
        return Err(UserError(
            "--baseline reads the history, and PELT_NO_HISTORY is set: give --history PATH|URL, or drop --baseline".into(),
        ));
    }
    crate::history::baseline::before_run(
        history.as_mut().map(|h| h.store()),
        args.record.baseline.as_deref(),
        &config,
        args.record.fail_on,
        args.record.allow_mismatch,
    )?;
    // Listening before any load is sent: a port in use is bad input.
    let views =
        crate::live::Views::start(&args.live, &config, &args.record.redactor(), args.quiet)?;
    let mut copy = None;
    let until = args
        .until
        .as_deref()
        .map(crate::execute::Until::parse)
        .transpose()?;
    let keep = Keep {
        until,
        out: args.out.as_deref(),
        save: !args.no_save,
        secrets: args.record.redactor(),
        copy: history
            .as_ref()
            .filter(|_| crate::history::Recording::wants_copy(args.out.as_deref()))
            .map(|_| &mut copy),
        log: args.log_requests.as_deref(),
        live: views.feed(),
        tui: views.tui(),
    };
    let summary = execute(config, args.quiet, keep)?;
    let id = history
        .as_mut()
        .and_then(|h| h.record(&summary, args.out.as_deref(), copy));
    let options = pelt_report::Options {
        buckets: args.buckets.clone(),
        ..Default::default()
    };
    crate::emit(render_one_with(&summary, args.format, &options)?.as_bytes())?;
    views.close(&summary);
    // Every ending is judged the same way, a run cut short too: its
    // asserts are printed for what was measured (a CI log then shows
    // them), while the exit code says how it ended.
    let mut checked = check(&summary, &args.asserts);
    if args.strict {
        if let Some(w) = summary.warnings.iter().find(|w| w.is_client_side()) {
            eprintln!("pelt: --strict: the client or the network may have limited this run: {w}");
            checked = std::process::ExitCode::from(1);
        }
    }
    let no_response = summary.no_response();
    if let Some(what) = &no_response {
        eprintln!("pelt: no request got a response: {what}");
    }
    if let Some(code) = crate::signals::ending(&summary) {
        // A signal's 128 + its number, as shells report a command it
        // stopped; an --abort-on rule's own code.
        if let Some(pelt_core::StopCause::Abort { rule, at_s }) = &summary.stopped_by {
            eprintln!("pelt: aborted after {at_s:.1}s: --abort-on '{rule}' held");
        }
        return Ok(code);
    }
    if no_response.is_some() {
        // Nothing to measure is not a pass, whatever the asserts say.
        return Ok(std::process::ExitCode::from(crate::NO_RESPONSE));
    }
    match (&mut history, &args.record.baseline) {
        (Some(h), Some(spec)) if checked == std::process::ExitCode::SUCCESS => {
            crate::history::baseline::after_run(
                h.store(),
                spec,
                &summary,
                id,
                args.record.fail_on,
                args.record.allow_mismatch,
            )
        }
        _ => Ok(checked),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn config(args: &[&str]) -> Result<RunConfig, UserError> {
        let mut argv = vec!["pelt", "run"];
        argv.extend_from_slice(args);
        let cli = crate::cli::Cli::try_parse_from(argv).expect("clap accepts");
        match cli.command {
            crate::cli::Command::Run(a) => RunConfig::try_from(&*a),
            _ => unreachable!(),
        }
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
                "plain HTTP only",
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
