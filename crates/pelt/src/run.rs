//! `pelt run`: flags -> RunConfig -> Run -> report.

use crate::flags::UserError;
use crate::flags::{FormatArg, RunArgs};
use crate::output::{check, render_one_with};
use pelt_campaign::Keep;
use pelt_core::RunConfig;
use pelt_history::{RecordSpec, Recording};
use std::process::ExitCode;

/// Notes for habits from ab and siege whose flags mean something else
/// here, or whose defaults differ: said before the run, never silently.
fn habits(args: &RunArgs, config: &RunConfig) -> Vec<String> {
    let mut notes = Vec::new();
    // siege's `-r 10` is ten repetitions per user; pelt's -r is --rate.
    if let (Some(r), true) = (&args.rate, args.rate_typed_as_r) {
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
        if !t.body.is_empty() && !typed && args.targets_file.is_none() && !t.url.scheme.is_ws() {
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
/// `pelt run`: a pipeline of named steps. Everything that can be refused
/// is refused before any load is sent (the flags, the history, the live
/// views' ports); every ending is reported before it is judged.
pub fn command(args: RunArgs) -> Result<ExitCode, UserError> {
    let config = RunConfig::try_from(&args)?;
    say_notes(&args, &config);
    if let Some(how) = args.dry_run {
        // Before any history or live view: nothing is sent or kept.
        return dry_run(&config, &args.record.redactor(), how);
    }
    if args.format == FormatArg::Hdrlog {
        // Refuse before sending load, not after.
        return Err(UserError("--format hdrlog is for saved runs: pelt run URL -o run.pelt, then pelt report run.pelt --format hdrlog".into()));
    }
    let (record, mut history) = open_history(&args, &config)?;
    // Listening before any load is sent: a port in use is bad input.
    let views = crate::live::start(&args.live, &config, &args.record.redactor(), args.quiet)?;
    let (summary, id) = measure(&args, config, &record, history.as_mut(), &views)?;
    report(&args, &summary, views)?;
    judge(&args, &summary, history.as_mut(), id)
}

/// What other tools' habits would misread, said before the run: `-t` as
/// a time limit, siege's `-r`, a body without a type, a run asking more
/// than this machine was calibrated to send.
fn say_notes(args: &RunArgs, config: &RunConfig) {
    if let Some(t) = args.threads {
        // ab's `-t 30` is a 30 s time limit; here it is 30 threads. Said
        // when the run has no length of its own (it then lasts its
        // default), and when the number is more than the cores, as
        // seconds usually are (ab's `-t 30 -n 50000`, issue 35).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if (args.duration.is_none() && args.requests.is_none()) || t > cores {
            let more = match t > cores {
                true => format!(", more than the {cores} cores here"),
                false => String::new(),
            };
            eprintln!(
                "pelt: note: -t {t} asks for {t} worker thread{} (as in wrk{more}), not a time limit (ab's and siege's -t): for that, use -d {t}s",
                if t == 1 { "" } else { "s" }
            );
        }
    }
    for note in habits(args, config) {
        eprintln!("{note}");
    }
    if let Some(note) = crate::calibrate::note_for(config) {
        eprintln!("{note}");
    }
}

/// The history, opened before any load is sent (a database pelt cannot
/// use is an input error, not a surprise after the run), and the
/// baseline checked against it.
fn open_history(
    args: &RunArgs,
    config: &RunConfig,
) -> Result<(RecordSpec, Option<Recording>), UserError> {
    crate::history::baseline::check_spec(args.record.baseline.as_deref())?;
    let record = args.record.spec();
    let mut history = Recording::start(&record)?.map(crate::output::said);
    if history.is_none() && args.record.baseline.is_some() {
        // Without a history the baseline would be skipped without a word.
        return Err(UserError(
            "--baseline reads the history, and PELT_NO_HISTORY is set: give --history PATH|URL, or drop --baseline".into(),
        ));
    }
    crate::history::baseline::before_run(
        history.as_mut().map(|h| h.store()),
        args.record.baseline.as_deref(),
        config,
        args.record.fail_on,
        args.record.allow_mismatch,
    )?;
    Ok((record, history))
}

/// The run itself, watched, its files kept, and recorded in the history
/// (a recording that fails is a warning: the run happened). Returns the
/// summary and the history's row.
fn measure(
    args: &RunArgs,
    config: RunConfig,
    record: &RecordSpec,
    history: Option<&mut Recording>,
    views: &crate::live::Views,
) -> Result<(pelt_core::RunSummary, Option<i64>), UserError> {
    let mut copy = None;
    let until = args
        .until
        .as_deref()
        .map(pelt_campaign::Until::parse)
        .transpose()?;
    let keep = Keep {
        until,
        out: args.out.as_deref(),
        save: !args.no_save,
        data_dir: record.places.data_dir.as_deref(),
        secrets: args.record.redactor(),
        copy: history
            .as_ref()
            .filter(|_| Recording::wants_copy(args.out.as_deref()))
            .map(|_| &mut copy),
        log: args.log_requests.as_deref(),
    };
    let summary = crate::live::execute_watched(config, args.quiet, keep, views)?;
    let id = history.and_then(|h| match h.record(&summary, args.out.as_deref(), copy) {
        Ok(id) => Some(id),
        Err(e) => {
            crate::output::not_recorded("the run", &e);
            None
        }
    });
    Ok((summary, id))
}

/// The report, on stdout in the format asked, and to the live views as
/// they close.
fn report(
    args: &RunArgs,
    summary: &pelt_core::RunSummary,
    views: crate::live::Views,
) -> Result<(), UserError> {
    let options = pelt_report::Options {
        buckets: args.buckets.clone(),
        ..Default::default()
    };
    crate::output::emit(render_one_with(summary, args.format, &options)?.as_bytes())?;
    // The report as `--format json` prints it, written a target at a
    // time: as a whole `serde_json::Value`, 100,000 targets took ~1 GB.
    views.close(summary, || {
        pelt_report::render(summary, pelt_report::Format::Json)
    });
    Ok(())
}

/// The exit code. Every ending is judged the same way, a run cut short
/// too: its asserts are printed for what was measured (a CI log then
/// shows them), while the exit code says how it ended: a signal or an
/// abort rule first, then nothing answered or nothing succeeded (exit 3),
/// then the asserts and `--strict`, then the baseline.
fn judge(
    args: &RunArgs,
    summary: &pelt_core::RunSummary,
    history: Option<&mut Recording>,
    id: Option<i64>,
) -> Result<ExitCode, UserError> {
    let mut checked = check(summary, &args.asserts);
    if args.strict {
        if let Some(w) = summary.warnings.iter().find(|w| w.is_client_side()) {
            eprintln!("pelt: --strict: the client or the network may have limited this run: {w}");
            checked = ExitCode::from(1);
        }
    }
    let no_response = summary.no_response();
    if let Some(what) = &no_response {
        eprintln!("pelt: no request got a response: {what}");
    }
    if let Some(code) = crate::signals::ending(summary) {
        // A signal's 128 + its number, as shells report a command it
        // stopped; an --abort-on rule's own code.
        if let Some(pelt_core::StopCause::Abort { rule, at_s }) = &summary.stopped_by {
            eprintln!("pelt: aborted after {at_s:.1}s: --abort-on '{rule}' held");
        }
        return Ok(code);
    }
    if no_response.is_some() {
        // Nothing to measure is not a pass, whatever the asserts say.
        return Ok(ExitCode::from(crate::output::NO_RESPONSE));
    }
    if let Some(what) = nothing_succeeded(summary, &args.asserts) {
        eprintln!("pelt: nothing succeeded: {what}");
        return Ok(ExitCode::from(crate::output::NO_RESPONSE));
    }
    match (history, &args.record.baseline) {
        (Some(h), Some(spec)) if checked == ExitCode::SUCCESS => {
            crate::history::baseline::after_run(
                h.store(),
                spec,
                summary,
                id,
                args.record.fail_on,
                args.record.allow_mismatch,
            )
        }
        _ => Ok(checked),
    }
}

/// A run whose every request failed (every flow, in a scenario) is not a
/// pass, for plain runs and scenarios alike, unless an `--assert` on the
/// whole run's `failed` share says what the user accepts (a test of an
/// error page, a rate limiter's 429s): then the asserts decide.
fn nothing_succeeded(
    summary: &pelt_core::RunSummary,
    asserts: &[pelt_core::Assertion],
) -> Option<String> {
    let judged_by_user = asserts
        .iter()
        .any(|a| a.measure == pelt_core::check::Measure::Failed && a.target.is_none());
    match judged_by_user {
        true => None,
        false => summary.nothing_succeeded(),
    }
}

/// `--dry-run`: the first users' requests, rendered and redacted, sent
/// nowhere; `--dry-run=send`: sent, each with its response.
fn dry_run(
    config: &RunConfig,
    secrets: &pelt_core::secrets::Redactor,
    how: crate::flags::DryRunArg,
) -> Result<std::process::ExitCode, UserError> {
    let source = config.scenario.as_ref().ok_or_else(|| {
        UserError("--dry-run shows a scenario's requests: give --scenario FILE".into())
    })?;
    let mut secrets = secrets.clone();
    secrets.learn(config);
    // A secret read from the environment (a HAR login's password) is
    // scrubbed wherever it shows, a JSON body too.
    for value in
        pelt_scenario::template::secret_env_values(&source.text, |n| secrets.is_secret_param(n))
    {
        secrets.add_value(&value);
    }
    let request = |r: &str| redact_request(&secrets, r);
    let shown = match how {
        crate::flags::DryRunArg::Show => pelt_scenario::Scenario::from_source(source)
            .map_err(|e| UserError(e.to_string()))?
            .dry_run(2, request),
        crate::flags::DryRunArg::Send => {
            let text = |t: &str| secrets.text(t);
            let secret_name = |n: &str| secrets.is_secret_param(n);
            let redact = pelt_scenario::Redact {
                request: &request,
                text: &text,
                secret_name: &secret_name,
            };
            pelt_engine::dry_send(config, 2, &redact).map_err(UserError)?
        }
    };
    crate::output::emit(shown.as_bytes())?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// One rendered HTTP/1.1 request with its secrets replaced: secret
/// headers' values, secret query parameters, and (a form body) secret
/// fields, as every copy of a run redacts them.
fn redact_request(secrets: &pelt_core::secrets::Redactor, request: &str) -> String {
    let (head, body) = request.split_once("\r\n\r\n").unwrap_or((request, ""));
    let mut out = Vec::new();
    for (i, line) in head.split("\r\n").enumerate() {
        let line = match (i, line.split_once(": "), line.split_once('?')) {
            (0, _, Some((path, rest))) => {
                let (query, version) = rest.rsplit_once(' ').unwrap_or((rest, ""));
                format!("{path}?{} {version}", secrets.query(query))
            }
            (_, Some((name, _)), _) if i > 0 && secrets.is_secret_header(name) => {
                format!("{name}: {}", pelt_core::secrets::MARKER)
            }
            _ => line.to_string(),
        };
        out.push(line);
    }
    let body = match body.contains('=') && !body.trim_start().starts_with(['{', '[']) {
        true => secrets.query(body),
        false => body.to_string(),
    };
    secrets.text(&format!("{}\n\n{body}", out.join("\n")))
}
