//! `pelt import`: flags only (the conversion is pelt-scenario's).

use clap::{Args, Subcommand};
use std::path::PathBuf;

pub const IMPORT_HELP: &str = "\
Examples:
  pelt import har session.har > journey.toml       then: pelt run --scenario journey.toml -c 10 -d 1m
                                                   (a login's password: PELT_LOGIN_PASSWORD=... pelt run ...)
  pelt import har session.har --base http://127.0.0.1:8080 > local.toml
  pelt import har session.har --include-assets > with-assets.toml
  pelt import targets urls.txt > journey.toml         a URL list, siege or vegeta targets file";

#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub what: ImportWhat,
}

#[derive(Debug, Clone, Subcommand)]
pub enum ImportWhat {
    /// A browser's HAR export (DevTools: Save all as HAR) as a scenario: one
    /// flow, steps in order, think times from the recorded gaps, cookies left
    /// to the jar, secret headers read from the environment, tokens and ids
    /// carried from response to request. A recorded login is a [[once]]
    /// step per user and its password is read from $PELT_LOGIN_PASSWORD.
    Har(HarArgs),
    /// A targets file (a URL list, siege's urls file, vegeta's http or JSON
    /// lines) as a scenario: one flow, its requests in order, to which you
    /// add extraction, checks and templates.
    Targets(TargetsImportArgs),
}

#[derive(Debug, Clone, Args)]
pub struct TargetsImportArgs {
    /// The targets file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Its format (plain, siege, http, json) instead of detecting it.
    #[arg(long = "targets-format", value_name = "FORMAT")]
    pub format: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct HarArgs {
    /// The HAR file.
    #[arg(value_name = "FILE.har")]
    pub file: PathBuf,
    /// Keep requests for static assets (images, CSS, scripts, fonts).
    #[arg(long)]
    pub include_assets: bool,
    /// Send to this origin (http://host:port) instead of the recorded one.
    #[arg(long, value_name = "URL")]
    pub base: Option<String>,
    /// Keep the requests to this other origin (https://cdn.example.net);
    /// by default only the recorded site's are kept (the first request's
    /// host, and hosts under its parent domain), so analytics beacons and
    /// third-party CDNs are left out. Repeat for several.
    #[arg(long = "include-origin", value_name = "ORIGIN")]
    pub include_origin: Vec<String>,
}
