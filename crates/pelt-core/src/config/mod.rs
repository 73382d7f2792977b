//! The first room, what to run: the run configuration ([`RunConfig`]) and
//! everything it is made of or read from — targets and their files, the
//! schedule of rates, URLs, durations, `--assert` and `--abort-on` rules,
//! histogram buckets, shards and secrets. Plain, serialisable data: no
//! clock, no socket.

mod run;
pub use run::*;

pub mod abort;
pub mod buckets;
pub mod check;
pub mod duration;
pub mod op;
pub(crate) mod quote;
pub mod schedule;
pub mod secrets;
pub mod shard;
pub mod stream;
pub mod targets;
pub mod url;
pub mod ws;
