//! Why a run could not start. Once it has started, nothing is an error:
//! failed requests are counted in the results by their `ErrorKind`.

use pelt_core::ConfigError;

/// Why [`Run::start`](crate::Run::start) refused a configuration. Each
/// message says what is wrong and how to fix it, naming
/// [`RunConfig`](pelt_core::RunConfig)'s fields (the CLI says the same in
/// its flags).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The configuration is inconsistent (see [`RunConfig::validate`](pelt_core::RunConfig::validate)).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A target's host has no address, or is not a valid TLS name.
    #[error("cannot resolve host '{host}': {detail}; check the URL's host name")]
    Resolve {
        /// The host looked up (after `--connect-to`).
        host: String,
        /// What the resolver said.
        detail: String,
    },
    /// A target cannot be sent as configured (over HTTP/2).
    #[error("{0}; fix the request, or unset `http.http2` (or `http.http3`)")]
    Request(String),
    /// `--scenario`: the scenario file (or a feed it names) cannot be run.
    #[error("{0}")]
    Scenario(#[from] pelt_scenario::ScenarioError),
    /// `http.source_addresses` (`--source-addresses`) holds no address of
    /// a target's family.
    #[error("--source-addresses (`http.source_addresses`) has no address of the family of {to}; give IPv4 sources for an IPv4 target and IPv6 for IPv6, like 127.0.0.2-127.0.0.9 or ::1")]
    SourceFamily {
        /// Where the target's connections go.
        to: std::net::SocketAddr,
    },
    /// An address of `http.source_addresses` cannot be bound to: not one
    /// of this machine's.
    #[error("--source-addresses (`http.source_addresses`): cannot use {addr}: {error}; give addresses of this machine (`ip addr` lists them; all of 127/8 is loopback)")]
    SourceUnusable {
        /// The address.
        addr: std::net::IpAddr,
        /// Why binding to it failed.
        error: std::io::Error,
    },
    /// `--login` failed for a sender: the run stops before any load.
    #[error("the login (`http.session.login`) failed, no load sent: {0}")]
    Login(String),
    /// A blocking call made on the thread that drives a current-thread
    /// tokio runtime with other tasks alive: they (a server the run
    /// loads, say) would stop while it blocks, and every login and
    /// request would wait its whole timeout. [`Run::start`](crate::Run::start)
    /// with a login returns it; the other blocking calls panic with it.
    #[error("{call} blocks this thread, which drives a current-thread tokio runtime with {tasks} other task(s): they would stop while it blocks (a server the run loads would not answer, and every request would time out); await Run::start_async / Run::wait_async instead, call it inside tokio::task::spawn_blocking, or use the multi-thread runtime (#[tokio::test(flavor = \"multi_thread\")])")]
    BlocksRuntime {
        /// The call refused, like `Run::wait`.
        call: &'static str,
        /// The runtime's tasks that would have stalled.
        tasks: usize,
    },
    /// The operating system refused a thread.
    #[error("cannot start worker threads: {0}")]
    Spawn(std::io::Error),
    /// A worker's event loop could not be built (usually out of file
    /// descriptors).
    #[error("cannot start a worker's event loop: {0}; raise the open-file limit (ulimit -n) or use fewer `threads`")]
    Runtime(std::io::Error),
    /// `start_at_unix_ns` (`--start-at`) is so far past that the whole
    /// measurement is behind it: nothing is left to send on schedule.
    #[error("`start_at_unix_ns` passed {:.1} s ago and the measurement lasts {:.1} s: nothing of the run is left; give a start still to come, or none", *late_ns as f64 / 1e9, *length_ns as f64 / 1e9)]
    StartPassed {
        /// The start asked for, Unix nanoseconds.
        start_at_unix_ns: u64,
        /// How far past it is.
        late_ns: u64,
        /// How long the measurement lasts (its duration, or until the
        /// last slot of a rate run with a count).
        length_ns: u64,
    },
    /// The request log (`--log-requests`) cannot be written.
    #[error("cannot write the request log '{path}': {source}; check the directory exists and is writable")]
    RequestLog {
        /// The log's path.
        path: String,
        /// Why it could not be created.
        source: std::io::Error,
    },
}
