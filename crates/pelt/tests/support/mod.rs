//! Helpers shared by the integration tests in `crates/pelt/tests/*.rs`.
//!
//! Each test file is its own binary and declares `mod support;`, so it
//! compiles the whole module but uses only part of it: what one binary leaves
//! unused is not dead for the others.
#![allow(dead_code)]

pub mod aioquic;
// One way to start Chromium for every crate's tests: pelt-report's.
#[path = "../../../pelt-report/tests/chromium/mod.rs"]
pub mod chromium;
pub mod nginx;
pub mod pelt;
pub mod pinned;
pub mod proxy;
