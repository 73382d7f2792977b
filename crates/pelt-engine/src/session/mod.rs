//! Sessions (`--cookies`, `--login`): what makes a sender a simulated
//! user rather than a replayer of fixed bytes.
//!
//! - [`jar`]: one cookie jar per sender (RFC 6265),
//!   kept for the sender's life, across reconnects.
//! - [`login`]: each sender's login, made once before the run's clock
//!   starts, untimed and outside every figure.

pub(crate) mod jar;
pub(crate) mod login;

pub(crate) use jar::Jar;
