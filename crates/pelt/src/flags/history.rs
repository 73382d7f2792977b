//! The history's flags: where it is, what a run is recorded as, its
//! secrets and baseline; `pelt history`'s subcommands.

use super::UserError;
use super::{FailOn, FormatArg};
use clap::{Args, Subcommand, ValueEnum};
use pelt_store::{Filter, Metric, Redactor};

/// `--history` for every command that reads or writes the history.
#[derive(Debug, Clone, Default, Args)]
pub struct Location {
    /// The history database: a SQLite file, or postgres://USER@HOST/DB for
    /// a shared one [default: $PELT_HISTORY, else history.db in pelt's
    /// data directory].
    #[arg(long = "history", value_name = "PATH|URL", global = true)]
    pub history: Option<String>,
}

/// Flags of `pelt run` about the history and secrets.
#[derive(Debug, Clone, Default, Args)]
pub struct RecordArgs {
    #[command(flatten)]
    pub location: Location,

    /// Do not record this run in the history (also: PELT_NO_HISTORY=1).
    #[arg(long = "no-history", conflicts_with_all = ["history", "tags", "label", "baseline"])]
    pub no_history: bool,

    /// Tag the run in the history, like --tag env=staging or --tag release-1.4.
    /// Repeatable.
    #[arg(long = "tag", value_name = "KEY[=VALUE]", value_parser = parse_tag)]
    pub tags: Vec<(String, String)>,

    /// Name the run in the history, like --label nightly.
    #[arg(long = "label", value_name = "NAME")]
    pub label: Option<String>,

    /// A header whose value is secret: replaced by REDACTED in the results
    /// file, the history and every report (Authorization, Cookie and
    /// Proxy-Authorization always are). Repeatable.
    #[arg(long = "secret-header", value_name = "NAME")]
    pub secret_headers: Vec<String>,

    /// Query parameters whose name contains WORD are secret too (token,
    /// key, sig, password and secret always are). Repeatable.
    #[arg(long = "secret-param", value_name = "WORD")]
    pub secret_params: Vec<String>,

    /// After the run, compare it with these recorded runs: tag:KEY[=VALUE],
    /// label:NAME or last:N (the newest N runs of the same URL).
    #[arg(long = "baseline", value_name = "tag:X|label:X|last:N")]
    pub baseline: Option<String>,

    /// With --baseline: exit 1 when a metric regressed (`regression`), or
    /// only beyond its margin (`material`), and when a latency or the
    /// failed share is INCONCLUSIVE while this run is worse than every
    /// baseline run (the gate could not judge: it never passes on that).
    /// Needs a baseline of 3 or more recorded runs, checked before any
    /// load (exit 2 otherwise). Outlying baseline runs are left out and
    /// named.
    #[arg(
        long = "fail-on",
        value_enum,
        value_name = "WHAT",
        requires = "baseline"
    )]
    pub fail_on: Option<FailOn>,

    /// With --baseline tag:X or label:X: compare with recorded runs whose
    /// work differs (targets, load model or level, protocol, proxy),
    /// which are refused by default.
    #[arg(long = "allow-mismatch", requires = "baseline")]
    pub allow_mismatch: bool,
}

impl RecordArgs {
    /// What and where these flags record.
    pub fn spec(&self) -> pelt_history::RecordSpec {
        pelt_history::RecordSpec {
            history: self.location.history.clone(),
            no_history: self.no_history,
            label: self.label.clone(),
            tags: self.tags.clone(),
            places: super::places(),
        }
    }

    /// The redaction rules these flags ask for.
    pub fn redactor(&self) -> Redactor {
        Redactor::new(&self.secret_headers, &self.secret_params)
    }
}

/// `--tag KEY=VALUE` or `--tag NAME` (a tag with an empty value).
pub fn parse_tag(text: &str) -> Result<(String, String), String> {
    let (k, v) = text.split_once('=').unwrap_or((text, ""));
    let k = k.trim();
    if k.is_empty() || k.chars().any(char::is_control) || v.chars().any(char::is_control) {
        return Err(format!(
            "invalid tag '{}': use KEY=VALUE or a name, like --tag env=staging",
            text.escape_debug()
        ));
    }
    Ok((k.to_string(), v.trim().to_string()))
}

/// `pelt compare`'s flags for a baseline from the history.
#[derive(Debug, Clone, Default, Args)]
pub struct BaselineArgs {
    /// Compare the FILEs (B) with recorded runs (A): tag:KEY[=VALUE],
    /// label:NAME or last:N (the newest N runs of B's URL). Only complete
    /// runs doing B's work (targets, load model and level, protocol,
    /// proxy) and never B's own runs: last:N passes over the others, a
    /// tag or label naming them is refused (see --allow-mismatch).
    #[arg(long = "baseline", value_name = "tag:X|label:X|last:N", conflicts_with_all = ["vs", "paired"])]
    pub baseline: Option<String>,

    #[command(flatten)]
    pub location: Location,
}

pub const HISTORY_HELP: &str = "\
Every `pelt run` is recorded in the history (a SQLite file in pelt's data
directory, or the database --history or $PELT_HISTORY names, which may be
postgres://USER@HOST/DB), with its figures, tags, label and results file.
Secrets (Authorization, Cookie and Proxy-Authorization headers, URL
passwords, token-like query parameters) are never stored.

Examples:
  pelt history                                all runs, oldest first
  pelt history --url http://127.0.0.1:8080/ --last 10
  pelt history --tag env=staging --since 7d --format csv
  pelt history show 42                        run 42's JSON report
  pelt history show 42 --format html > r.html
  pelt history trend --metric p99 --url http://127.0.0.1:8080/
  pelt history trend --metric rate --label nightly --format html > t.html
  pelt history rm 40 41
  pelt history check                          the database's integrity";

#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: Option<HistoryCommand>,

    #[command(flatten)]
    pub list: ListArgs,

    #[command(flatten)]
    pub location: Location,
}

#[derive(Debug, Clone, Subcommand)]
pub enum HistoryCommand {
    /// A table of recorded runs (the default).
    List(ListArgs),
    /// One run: its JSON report as it printed, or re-rendered from its results file.
    Show(ShowArgs),
    /// Remove runs from the history.
    Rm(RmArgs),
    /// A metric over the selected runs, oldest first: text, or a chart with --format html.
    Trend(TrendArgs),
    /// Check the database's integrity (SQLite's integrity_check and pelt's own).
    Check,
    /// Run a recorded run's configuration again (recorded as a new run,
    /// tagged rerun_of=ID). Secrets were never stored: give them again.
    Rerun(RerunArgs),
}

#[derive(Debug, Clone, Args)]
pub struct RerunArgs {
    /// The run's id (the first column of `pelt history`).
    pub id: i64,

    /// A header to send again in place of a secret one the history
    /// replaced by REDACTED, like -H 'Authorization: Bearer ...'.
    /// Repeatable.
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,

    /// Report format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
}

/// Which runs: every condition given must hold.
#[derive(Debug, Clone, Default, Args)]
pub struct Select {
    /// Runs of this URL (as recorded: secrets replaced by REDACTED).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,

    /// Runs with this tag: KEY=VALUE, or KEY for any value. Repeatable.
    #[arg(long = "tag", value_name = "KEY[=VALUE]")]
    pub tags: Vec<String>,

    /// Runs with this label.
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,

    /// Runs started since: a date (2026-05-01, UTC), a time (2026-05-01T14:30) or a time ago (36h, 7d).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Runs started before WHEN (as --since).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,

    /// Only the newest N runs of those selected.
    #[arg(long, value_name = "N")]
    pub last: Option<u64>,
}

impl Select {
    pub fn filter(&self) -> Result<Filter, UserError> {
        let now = pelt_core::civil::now_unix_ms();
        let when = |w: &Option<String>, flag: &str| {
            w.as_deref()
                .map(|w| parse_when(w, now).map_err(|e| UserError(format!("{flag}: {e}"))))
                .transpose()
        };
        // Compared as recorded: parsed and printed, secrets replaced.
        let url = self.url.as_ref().map(|u| match pelt_core::Url::parse(u) {
            Ok(mut url) => {
                pelt_store::Redactor::default().url(&mut url);
                url.to_string()
            }
            Err(_) => u.clone(),
        });
        Ok(Filter {
            ids: Vec::new(),
            url,
            tags: self
                .tags
                .iter()
                .map(|t| match t.split_once('=') {
                    Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
                    None => (t.trim().to_string(), None),
                })
                .collect(),
            label: self.label.clone(),
            since_ms: when(&self.since, "--since")?,
            until_ms: when(&self.until, "--until")?,
            last: self.last,
            without: Vec::new(),
            kinds: Vec::new(),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum TableFormat {
    #[default]
    Text,
    Json,
    Csv,
}

#[derive(Debug, Clone, Default, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub select: Select,

    /// Output format.
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
}

#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// The run's id (the first column of `pelt history`).
    pub id: i64,

    /// json: the report as the run printed it (kept in the history); other
    /// formats are rendered again from the run's results file (text of a
    /// scenario run whose results file is gone: its steps as recorded).
    #[arg(long, value_enum, default_value_t = FormatArg::Json)]
    pub format: FormatArg,
}

#[derive(Debug, Clone, Args)]
pub struct RmArgs {
    /// The ids of the runs to remove.
    #[arg(required = true)]
    pub ids: Vec<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TrendFormat {
    Text,
    Json,
    Csv,
    /// A page with the chart and the table.
    Html,
}

#[derive(Debug, Clone, Args)]
pub struct TrendArgs {
    /// The figure to follow: p50, p90, p99, p99.9, max, rate, throughput,
    /// failed (the failed share; errors is read too), sent, client_busy;
    /// or capacity (of recorded sweeps).
    #[arg(long, value_name = "METRIC", value_parser = |s: &str| s.parse::<Metric>())]
    pub metric: Metric,

    #[command(flatten)]
    pub select: Select,

    /// Output format.
    #[arg(long, value_enum, default_value_t = TrendFormat::Text)]
    pub format: TrendFormat,

    /// Follow runs whose work differs from the newest's (targets, load
    /// model or level, protocol, proxy), and interrupted runs: by default
    /// a trend of unlike runs is refused, naming the difference.
    #[arg(long = "allow-mismatch")]
    pub allow_mismatch: bool,
}

/// `--since`/`--until`'s WHEN, by pelt-core's rule
/// ([`pelt_core::civil::parse_when`]), worded for the flag.
pub fn parse_when(when: &str, now_ms: i64) -> Result<i64, String> {
    pelt_core::civil::parse_when(when, now_ms).ok_or_else(|| {
        format!(
            "invalid time '{}': give a date like 2026-05-01, a UTC time like 2026-05-01T14:30, or a time ago like 36h or 7d",
            when.trim().escape_debug()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_key_value_or_a_name() {
        assert_eq!(
            parse_tag("env=staging").unwrap(),
            ("env".into(), "staging".into())
        );
        assert_eq!(
            parse_tag("release-1.4").unwrap(),
            ("release-1.4".into(), "".into())
        );
        assert!(parse_tag("=x").is_err());
    }
}
