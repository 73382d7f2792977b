//! The HTML report: one self-contained page per run, or per comparison of
//! runs, that opens offline and runs no JavaScript.
//!
//! Charts are SVG drawn by `plotters` and inlined; styling is one inline
//! `<style>`; a Content-Security-Policy forbids scripts and every network
//! load, so even a mistake in escaping could not run code or call out.
//!
//! Every number in the tables carries `data-key` and `data-value`
//! attributes whose key path and value are those of the JSON report
//! ([`crate::json_value`]): the tables are filled *from* that document,
//! so the page cannot disagree with it, and tests or scripts can read the
//! page without parsing display text. Key paths join object keys with `.`
//! (a key may itself contain a dot, like `p99.9`).
//!
//! Everything that comes from a user, a server or a targets file (URLs,
//! methods, headers, labels, error messages, warnings) is escaped.

mod charts;
mod details;
mod document;
mod page;
mod style;
mod tables;
#[cfg(test)]
mod tests;

pub use crate::table::Table;
pub use document::{document, Block, LoadSeries, Marks, Trend, TrendUnit};

use pelt_core::RunSummary;
use serde_json::Value;

/// One run to draw, with the name shown in legends.
#[derive(Debug, Clone)]
pub struct Labeled<'a> {
    /// The run's name in table heads and legends.
    pub label: String,
    /// The run.
    pub summary: &'a RunSummary,
}

/// The whole report as one HTML document: no network access needed to
/// view it, no JavaScript required.
///
/// Each run's secrets are replaced ([`crate::without_secrets`]), as in
/// every report; the labels are shown as given.
pub fn render(runs: &[Labeled<'_>]) -> String {
    let redacted: Vec<std::borrow::Cow<'_, RunSummary>> =
        runs.iter().map(|r| crate::redacted(r.summary)).collect();
    let runs: Vec<Labeled<'_>> = runs
        .iter()
        .zip(&redacted)
        .map(|(r, summary)| Labeled {
            label: r.label.clone(),
            summary,
        })
        .collect();
    let runs = &runs[..];
    let jsons: Vec<Value> = runs
        .iter()
        .map(|r| crate::json::json_value_as_is(r.summary))
        .collect();
    let mut o = String::with_capacity(256 * 1024);
    // Writing to a String cannot fail; `let _` keeps the happy path plain.
    let _ = page::write_page(&mut o, runs, &jsons);
    o
}

/// Escapes text for HTML content and quoted attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
