//! pelt-report: turns a [`RunSummary`] into something people read.
//!
//! Renderers read results only, never the network, so a saved run renders
//! exactly like a live one. One run renders with [`render`] in any
//! [`Format`] (several overlaid with [`html::render`]); the per-second
//! histograms of a saved run go to [`hdrlog`]; comparisons of runs and
//! experiments, whose numbers come from pelt-analyze, render with
//! [`compare`] and [`experiment`].
#![warn(missing_docs)]

pub mod compare;
mod csv;
pub mod experiment;
pub mod hdrlog;
pub mod html;
mod json;
mod markdown;
pub mod precision;
pub mod sweep;
mod table;
mod text;
mod units;

pub use json::{json_value, SCHEMA_ID};
pub use table::Table;

use pelt_core::{Redactor, RunSummary};

/// `s` with its secrets replaced by the default rules: what every report
/// shows unless told otherwise ([`Options::keep_secrets`]).
pub fn without_secrets(s: &RunSummary) -> RunSummary {
    let mut copy = s.clone();
    Redactor::for_config(&s.config).summary(&mut copy);
    copy
}

/// The text report of `s`, its secrets replaced ([`without_secrets`]).
pub fn text(s: &RunSummary) -> String {
    text::text(&without_secrets(s))
}

/// The markdown summary of `s`, its secrets replaced.
pub fn markdown(s: &RunSummary) -> String {
    markdown::markdown(&without_secrets(s))
}

/// The per-second CSV of `s` (it names no URL; redacted all the same,
/// like every report).
pub fn csv(s: &RunSummary) -> String {
    csv::csv(&without_secrets(s))
}

/// Output formats for a single run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The human report: ab's and vegeta's figures, and more.
    Text,
    /// One JSON document; see `schema/run.schema.json`.
    Json,
    /// The per-second timeline.
    Csv,
    /// A summary for issues and pull requests.
    Markdown,
    /// A self-contained page with charts, labelled by the run's first URL.
    Html,
    /// ab's `-e` file: the headline latency at every whole percentile,
    /// `Percentage served,Time in ms`.
    PercentilesCsv,
}

/// Choices that change what a report shows, beyond its format.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `--buckets`: count the headline latency into these ranges (text
    /// and JSON).
    pub buckets: Option<pelt_core::buckets::Buckets>,
    /// Show the run's secrets (Authorization and Cookie values, token-like
    /// query parameters, a login's body) as they were sent. Off by
    /// default: a report replaces them with `REDACTED`
    /// ([`pelt_core::Redactor`]), as a results file does.
    pub keep_secrets: bool,
}

/// Renders `summary` in `format`.
pub fn render(summary: &RunSummary, format: Format) -> String {
    render_with(summary, format, &Options::default())
}

/// Renders `summary` in `format`, with `options`.
pub fn render_with(summary: &RunSummary, format: Format, options: &Options) -> String {
    let redacted;
    let summary = if options.keep_secrets {
        summary
    } else {
        redacted = without_secrets(summary);
        &redacted
    };
    match format {
        Format::Text => {
            let mut out = text::text(summary);
            if let Some(b) = &options.buckets {
                text::append_buckets(&mut out, summary, b);
            }
            out
        }
        Format::Json => json::report_text(summary, |v| {
            if let Some(b) = &options.buckets {
                v["buckets"] = json::buckets(summary, b);
            }
        }),
        Format::PercentilesCsv => csv::percentiles(summary),
        Format::Csv => csv::csv(summary),
        Format::Markdown => markdown::markdown(summary),
        Format::Html => html::render(&[html::Labeled {
            label: summary.config.targets[0].url.to_string(),
            summary,
        }]),
    }
}
