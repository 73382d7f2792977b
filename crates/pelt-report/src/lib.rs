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
mod handshakes;
pub mod hdrlog;
pub mod html;
mod json;
mod markdown;
pub mod precision;
mod streams;
pub mod sweep;
mod table;
mod text;
mod units;
mod websocket;

pub use json::{json_value, SCHEMA_ID};
pub use table::Table;

use pelt_core::{Redactor, RunSummary};
use std::borrow::Cow;

/// `s` with its secrets replaced by the default rules: what every report
/// shows unless told otherwise ([`Options::keep_secrets`]).
pub fn without_secrets(s: &RunSummary) -> RunSummary {
    redacted(s).into_owned()
}

/// [`without_secrets`], copied only when there is a secret to replace: a
/// run's summary holds a histogram per target (1,000 targets: ~4 MB), and
/// most runs have nothing to redact in it.
pub(crate) fn redacted(s: &RunSummary) -> Cow<'_, RunSummary> {
    let rules = Redactor::for_config(&s.config);
    let config = rules.config(&s.config);
    if config == s.config && !rules.recorder_needs(&s.total) {
        return Cow::Borrowed(s);
    }
    let mut copy = s.clone();
    copy.config = config;
    rules.recorder(&mut copy.total);
    Cow::Owned(copy)
}

/// The text report of `s`, its secrets replaced ([`without_secrets`]).
pub fn text(s: &RunSummary) -> String {
    text::text(&redacted(s))
}

/// The markdown summary of `s`, its secrets replaced.
pub fn markdown(s: &RunSummary) -> String {
    markdown::markdown(&redacted(s))
}

/// The per-second CSV of `s` (it names no URL; redacted all the same,
/// like every report).
pub fn csv(s: &RunSummary) -> String {
    csv::csv(&redacted(s))
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
    let summary = if options.keep_secrets {
        Cow::Borrowed(summary)
    } else {
        redacted(summary)
    };
    let summary = summary.as_ref();
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
            // The run's name (`3 targets`, not the first URL), its
            // secrets replaced as everywhere in the page.
            label: redacted(summary).config.name(),
            summary,
        }]),
    }
}
