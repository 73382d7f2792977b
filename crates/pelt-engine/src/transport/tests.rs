//! Transport tests (to come).
