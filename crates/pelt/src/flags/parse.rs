//! From the command line to `Cli`: `pelt URL` as `pelt run URL`, and
//! clap's errors cut to one line with advice (other tools' flags named).

use super::SUBCOMMANDS;
use std::process::ExitCode;

/// `pelt URL ...` means `pelt run URL ...`, and so do `pelt -c 10 URL`
/// (flags first, as with wrk) and `pelt 127.0.0.1:8080` (which `run` then
/// refuses with advice to write the scheme, rather than clap calling it
/// an unknown subcommand).
pub fn with_implicit_run(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let Some(first) = args.get(1).and_then(|a| a.to_str()) else {
        return args;
    };
    if SUBCOMMANDS.contains(&first) || matches!(first, "-h" | "--help" | "-V" | "--version") {
        return args;
    }
    let targets_flag = |a: &str| a == "-f" || a == "--targets";
    let is_flag = first.starts_with('-');
    // A saved run or a plan is for `pelt report` or `pelt experiment`.
    let a_file = first.ends_with(".pelt") || first.ends_with(".toml");
    let looks_like_host =
        first.is_empty() || first == "localhost" || (!a_file && first.contains(['.', ':', '/']));
    let later_url = args[2..].iter().any(|a| {
        a.to_str()
            .is_some_and(|a| a.contains("://") || targets_flag(a))
    });
    if targets_flag(first)
        || (!is_flag && (first.contains("://") || looks_like_host))
        || (is_flag && later_url)
    {
        args.insert(1, "run".into());
    }
    args
}

/// ab's and siege's flags that pelt spells otherwise: what to write here.
fn other_tools_flag(arg: &str) -> Option<&'static str> {
    // `-pFILE` as well as `-p FILE`: clap names the flag's first letters.
    let flag = arg.get(..2)?;
    Some(match flag {
        "-p" => "ab's -p FILE (a POST body) is --body-file FILE here (POST is the default with a body; ab's -T is -H 'Content-Type: TYPE')",
        "-T" => "ab's -T TYPE is -H 'Content-Type: TYPE' here",
        "-C" => "ab's -C 'NAME=VALUE' is -H 'Cookie: NAME=VALUE' here (--cookies keeps the cookies the server sets)",
        "-X" => "ab's -X HOST:PORT is --proxy http://HOST:PORT here",
        "-P" => "ab's -P USER:PASS (proxy credentials) is --proxy http://USER:PASS@HOST:PORT here",
        "-e" => "ab's -e FILE is --format percentiles-csv > FILE here",
        "-g" => "ab's -g FILE (each request's times) is --log-requests FILE here",
        "-i" => "siege's -i (a random URL from the file) is --random here",
        "-b" => "siege's -b (no delay between requests) is the default here; --delay adds one",
        "-s" => "ab's -s SECONDS is --timeout DURATION here, like --timeout 30s",
        "-v" => "pelt has no verbose mode: --log-requests FILE logs every request",
        _ => return None,
    })
}

/// The subcommand whose `--help` answers a mistake in `args`.
fn help_hint(args: &[std::ffi::OsString]) -> String {
    match args
        .iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .find(|a| SUBCOMMANDS.contains(a) && *a != "help")
    {
        Some(sub) => format!("see 'pelt {sub} --help'"),
        None => "see 'pelt --help'".into(),
    }
}

/// clap's errors, cut to one line with its suggestion, exit code 2;
/// `--help` and `--version` print as usual.
pub fn clap_error(e: clap::Error, args: &[std::ffi::OsString]) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        // Bare `pelt`: the help is the answer, but the command was not.
        let _ = e.print();
        return ExitCode::from(2);
    }
    eprintln!("{}", clap_line(&e, args));
    ExitCode::from(2)
}

/// clap's error `e` for `args` as one line: its first, with what is
/// missing, the values it would accept and its suggestion.
pub fn clap_line(e: &clap::Error, args: &[std::ffi::OsString]) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let rendered = e.render().to_string();
    let first = rendered
        .lines()
        .next()
        .unwrap_or("error: invalid arguments");
    let mut line = first.trim_end_matches(':').to_string();
    let strings = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    match e.kind() {
        // clap lists what is missing on the lines below its first.
        ErrorKind::MissingRequiredArgument => {
            let missing = strings(ContextKind::InvalidArg);
            if !missing.is_empty() {
                line.push_str(&format!(": {}", missing.join(", ")));
            }
            if missing.iter().any(|m| m == "[URL]" || m == "<URL>") {
                line.push_str(
                    "; give a URL, like pelt run http://127.0.0.1:8080/, or a targets file with -f FILE",
                );
            }
        }
        // And the values it would accept.
        ErrorKind::InvalidValue => {
            let valid = strings(ContextKind::ValidValue);
            if !valid.is_empty() {
                line.push_str(&format!("; use one of: {}", valid.join(", ")));
            }
        }
        ErrorKind::UnknownArgument => {
            let arg = strings(ContextKind::InvalidArg).concat();
            let mut chars = arg.chars();
            if chars.next() == Some('-') && chars.next().is_some_and(|c| c.is_ascii_digit()) {
                // `-n -1`: clap takes a negative value for a flag.
                line.push_str("; values cannot be negative: give a positive number or duration right after the flag, like -n 100 or -d 10s");
            } else if arg.contains("://") {
                line.push_str(
                    "; a run loads one URL: to load several, list them in a file and use -f FILE",
                );
            } else if let Some(hint) = other_tools_flag(&arg) {
                line.push_str(&format!("; {hint}"));
            }
        }
        _ => {}
    }
    match e
        .get(ContextKind::SuggestedArg)
        .or(e.get(ContextKind::SuggestedSubcommand))
    {
        Some(ContextValue::String(s)) => line.push_str(&format!("; did you mean '{s}'?")),
        Some(ContextValue::Strings(v)) if !v.is_empty() => {
            line.push_str(&format!("; did you mean '{}'?", v[0]))
        }
        _ => {}
    }
    line.push_str(&format!("; {}", help_hint(args)));
    line
}
