//! Table cells and rows filled from the JSON report: each number carries
//! its JSON key path in `data-key` and its raw value in `data-value`, so
//! the page cannot disagree with the JSON report.

use super::{esc, Labeled};
use crate::units::{bytes, rate, thousands};
use pelt_core::Human;
use serde_json::Value;
use std::fmt::Write;
use std::time::Duration;

/// The value at a dotted key path of the JSON report. Object keys may
/// contain dots themselves (`percentiles_s.p99.9`), so at each level the
/// longest key that matches the path's start wins; array elements are
/// addressed by index.
pub(super) fn lookup<'v>(v: &'v Value, path: &str) -> Option<&'v Value> {
    if path.is_empty() {
        return Some(v);
    }
    match v {
        Value::Object(map) => map
            .iter()
            .filter_map(|(k, child)| {
                let rest = path.strip_prefix(k.as_str())?;
                if rest.is_empty() {
                    Some((k.len(), child, ""))
                } else {
                    rest.strip_prefix('.').map(|r| (k.len(), child, r))
                }
            })
            .max_by_key(|(len, _, _)| *len)
            .and_then(|(_, child, rest)| lookup(child, rest)),
        Value::Array(items) => {
            let (head, rest) = path.split_once('.').unwrap_or((path, ""));
            lookup(items.get(head.parse::<usize>().ok()?)?, rest)
        }
        _ => None,
    }
}

/// How a number from the JSON report is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fmt {
    Count,
    PerSecond,
    Ratio,
    Seconds,
    Bytes,
    YesNo,
    UnixMs,
}

impl Fmt {
    fn show(self, v: &Value) -> String {
        let f = v.as_f64().unwrap_or(0.0);
        match self {
            Fmt::Count => match v.as_u64() {
                Some(n) => thousands(n),
                None => rate(f),
            },
            Fmt::PerSecond => format!("{}/s", rate(f)),
            Fmt::Ratio => format!("{:.2}%", f * 100.0),
            Fmt::Seconds if f == 0.0 => "0".into(),
            Fmt::Seconds => match Duration::try_from_secs_f64(f) {
                Ok(d) => Human(d).to_string(),
                Err(_) => f.to_string(),
            },
            Fmt::Bytes => bytes(f),
            Fmt::YesNo => match v.as_bool() {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => v.to_string(),
            },
            Fmt::UnixMs => utc(v.as_u64().unwrap_or(0)),
        }
    }
}

/// A table cell for the JSON report's value at `key`, with its raw value
/// in `data-value`; a dash when the report has none (e.g. no offered rate
/// in a closed-loop run).
pub(super) fn num_cell(run: usize, json: &Value, key: &str, fmt: Fmt) -> String {
    match lookup(json, key) {
        Some(v @ (Value::Number(_) | Value::Bool(_))) => format!(
            "<td class=\"num\" data-run=\"{run}\" data-key=\"{}\" data-value=\"{}\">{}</td>",
            esc(key),
            esc(&v.to_string()),
            esc(&fmt.show(v))
        ),
        _ => "<td class=\"num missing\">–</td>".to_string(),
    }
}

pub(super) fn num_row(
    o: &mut String,
    label: &str,
    jsons: &[Value],
    key: &dyn Fn(usize) -> String,
    fmt: Fmt,
) {
    let _ = write!(o, "<tr><th>{}</th>", esc(label));
    for (i, json) in jsons.iter().enumerate() {
        o.push_str(&num_cell(i, json, &key(i), fmt));
    }
    o.push_str("</tr>\n");
}

pub(super) fn fixed(key: &'static str) -> impl Fn(usize) -> String {
    move |_| key.to_string()
}

pub(super) fn group_row(o: &mut String, title: &str, runs: usize) {
    let _ = writeln!(
        o,
        "<tr class=\"group\"><th colspan=\"{}\">{}</th></tr>",
        runs + 1,
        esc(title)
    );
}

/// Text cells, one per run, already escaped by the caller.
pub(super) fn html_row(o: &mut String, label: &str, cells: impl Iterator<Item = String>) {
    let _ = write!(o, "<tr><th>{}</th>", esc(label));
    for c in cells {
        let _ = write!(o, "<td>{c}</td>");
    }
    o.push_str("</tr>\n");
}

pub(super) fn head_row(o: &mut String, first: &str, runs: &[Labeled<'_>]) {
    let _ = write!(o, "<thead><tr><th>{}</th>", esc(first));
    for r in runs {
        let _ = write!(o, "<th class=\"run\">{}</th>", esc(&r.label));
    }
    o.push_str("</tr></thead>\n");
}

/// `2024-05-01 12:34:56 UTC` for milliseconds since the Unix epoch.
pub(super) fn utc(ms: u64) -> String {
    format!("{} UTC", pelt_core::UtcTime::from_unix(ms / 1000).plain())
}

/// `LABEL COUNT` for the count at `key`, with its key and value.
pub(super) fn count_span(run: usize, json: &Value, key: &str, label: &str) -> String {
    let v = lookup(json, key).cloned().unwrap_or(Value::Null);
    format!(
        "<span data-run=\"{run}\" data-key=\"{}\" data-value=\"{}\">{} {}</span>",
        esc(key),
        esc(&v.to_string()),
        esc(label),
        esc(&Fmt::Count.show(&v))
    )
}
