//! From the command line to `Cli`: `pelt URL` as `pelt run URL`, and
//! clap's errors cut to one line with advice (other tools' flags named).

use super::SUBCOMMANDS;
use std::process::ExitCode;

/// Whether the command line has `-r` or `-rN` (pelt's `--rate`; siege's
/// repetitions per user).
pub fn typed_dash_r(args: &[std::ffi::OsString]) -> bool {
    args.iter().map(|a| a.to_string_lossy()).any(|a| {
        a == "-r" || (a.starts_with("-r") && a[2..].starts_with(|c: char| c.is_ascii_digit()))
    })
}

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

/// Long flags of other tools written with one dash, as vegeta and hey
/// spell them: the tool and what pelt writes instead. clap would read
/// them as pelt's short flags with a value glued on: `-header` and
/// `-http2` as `-h` (help, exit 0, no load), `-output=res.bin` as `-o
/// utput=res.bin`, `-rate=100` as `-r ate=100`.
fn single_dash_flag(name: &str) -> Option<(&'static str, &'static str)> {
    const VEGETA: &str = "vegeta";
    Some(match name {
        "header" => (VEGETA, "-H 'NAME: VALUE' (or --header)"),
        "http2" => (VEGETA, "--http2"),
        "h2c" => (VEGETA, "--http2 with an http:// URL"),
        "output" => (VEGETA, "-o FILE (or --out), pelt's results file"),
        "rate" => (VEGETA, "--rate R (or -r R): requests per second, like --rate 100; vegeta's -rate=0 (as fast as possible) is a closed loop, -c N"),
        "duration" => (VEGETA, "-d DURATION (or --duration), like -d 30s"),
        "targets" => (VEGETA, "-f FILE (or --targets); vegeta's http and JSON formats are read as they are"),
        "format" => (VEGETA, "--targets-format http|json"),
        "body" => (VEGETA, "--body-file FILE"),
        "timeout" => (VEGETA, "--timeout DURATION"),
        "workers" | "max-workers" | "connections" | "max-connections" => {
            (VEGETA, "-c N (connections; with --rate, the pool's size)")
        }
        "insecure" => (VEGETA, "--insecure"),
        "keepalive" => (VEGETA, "nothing: keep-alive is the default (--no-keepalive for -keepalive=false)"),
        "redirects" => (VEGETA, "--follow N"),
        "connect-to" => (VEGETA, "--connect-to HOST:PORT:CONNECT_HOST:CONNECT_PORT"),
        "unix-socket" => (VEGETA, "--unix-socket PATH"),
        "laddr" => (VEGETA, "--source-addresses LIST"),
        "name" => (VEGETA, "--label NAME"),
        "prometheus-addr" => (VEGETA, "--metrics IP:PORT"),
        "h2" => ("hey", "--http2"),
        "host" => ("hey", "--host NAME"),
        "disable-keepalive" => ("hey", "--no-keepalive"),
        "disable-redirects" => ("hey", "nothing: redirects are not followed unless --follow N"),
        "cpus" => ("hey", "-t N (worker threads)"),
        _ => return None,
    })
}

/// `pelt run`'s arguments (`args`, after the subcommand) holding another
/// tool's long flag written with one dash: the one line that says so,
/// pointing to pelt's flag. `takes_value` tells a flag of pelt's whose
/// next argument is its value (`-H -header` sends a header named so).
pub fn single_dash_error(args: &[String], takes_value: impl Fn(&str) -> bool) -> Option<String> {
    let mut after_value = false;
    for a in args {
        if a == "--" {
            return None;
        }
        let value = std::mem::replace(&mut after_value, takes_value(a));
        if value || a.starts_with("--") {
            continue;
        }
        let Some(word) = a.strip_prefix('-') else {
            continue;
        };
        let name = word.split('=').next().unwrap_or(word);
        if name.len() < 2 {
            continue;
        }
        if let Some((tool, pelt)) = single_dash_flag(name) {
            return Some(format!(
                "error: unexpected argument '{a}' found: {tool}'s -{name} (one dash) is {pelt} here; see 'pelt run --help'",
            ));
        }
    }
    None
}

/// `pelt run`'s flags that take a value, as written (`-H`, `--header`).
pub fn run_flags_with_values() -> Vec<String> {
    use clap::CommandFactory;
    let cli = super::Cli::command();
    let Some(run) = cli.find_subcommand("run") else {
        return Vec::new();
    };
    run.get_arguments()
        .filter(|a| a.get_action().takes_values() && !a.is_positional())
        .flat_map(|a| {
            let short = a.get_short().map(|c| format!("-{c}"));
            let long = a.get_long().map(|l| format!("--{l}"));
            short.into_iter().chain(long)
        })
        .collect()
}

/// [`single_dash_error`] for a whole command line (`pelt run ...`, after
/// [`with_implicit_run`]): `None` for other subcommands.
pub fn other_tools_long_flag(args: &[std::ffi::OsString]) -> Option<String> {
    if args.get(1).and_then(|a| a.to_str()) != Some("run") {
        return None;
    }
    let words: Vec<String> = args[2..]
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let valued = run_flags_with_values();
    single_dash_error(&words, |a| valued.iter().any(|v| v == a))
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
