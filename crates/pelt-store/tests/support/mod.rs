//! Helpers for pelt-store's integration tests.
pub mod postgres;
