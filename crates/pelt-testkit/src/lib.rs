//! What the workspace's tests share: the `pelt` binary run in the
//! foreground or the background, its JSON read and checked against the
//! committed schemas, ports, and the third-party servers and browser the
//! tests drive (nginx, tinyproxy, PostgreSQL, Prometheus, Chromium, a
//! Flask app for scenarios) and a real terminal (tmux); and the one
//! synthetic run ([`summary::Synthetic`]) for tests that need a made-up
//! `RunSummary` or results file.
//!
//! Every server is a private instance: its own temp directory, a port of
//! its own on loopback, started as a child of the test and stopped by its
//! pid when dropped. The Debian packages' own services are never used.
//! Nothing skips: a program that is missing fails the test, naming
//! `scripts/test`, which installs it.
//!
//! The `pelt` feature adds what only the binary's tests need (the binary,
//! the built-in server, the schemas), so that the library crates' tests
//! build none of it.

pub mod aioquic;
pub mod caddy;
pub mod chromium;
pub mod flask;
pub mod http;
pub mod nginx;
#[cfg(feature = "pelt")]
pub mod pelt;
#[cfg(feature = "pelt")]
pub mod pinned;
pub mod ports;
pub mod postgres;
pub mod process;
pub mod prometheus;
#[cfg(feature = "pelt")]
pub mod schema;
pub mod streams;
pub mod summary;
pub mod tinyproxy;
pub mod tmux;
pub mod websocket;

use std::path::{Path, PathBuf};

/// Every file below `dir` (none if it does not exist): what pelt wrote
/// there, to search for what must not be in it.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}
