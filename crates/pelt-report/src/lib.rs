//! pelt-report: turns a [`RunSummary`] into something people read.
//!
//! Renderers read results only, never the network, so a saved run renders
//! exactly like a live one.

mod csv;
pub mod hdrlog;
pub mod html;
mod json;
mod markdown;
mod text;
mod units;

pub use csv::csv;
pub use json::{json_value, SCHEMA_ID};
pub use markdown::markdown;
pub use text::text;

use pelt_core::RunSummary;

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
}

/// Renders `summary` in `format`.
pub fn render(summary: &RunSummary, format: Format) -> String {
    match format {
        Format::Text => text(summary),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&json_value(summary))
                .expect("a JSON value always serialises");
            s.push('\n');
            s
        }
        Format::Csv => csv(summary),
        Format::Markdown => markdown(summary),
    }
}
