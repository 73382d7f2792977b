//! Streamed responses at known times for the stream tests (issue 38):
//! `stream_server.py` (beside this file) on uvicorn, with an SSE
//! endpoint (sse-starlette), an NDJSON one and an OpenAI-compatible
//! streaming chat endpoint (FastAPI), all from PyPI (scripts/test
//! installs them in aioquic's venv under ~/.cache/pelt). Each request
//! sets its pacing in its query string (`first_ms`, `gap_ms`, `events`,
//! `stall_ms`, `stall_after`, `cut`; see the script), which is the truth
//! the tests check pelt's figures against; the server logs each stream it
//! sent ([`Sent`]), the tests' witness.

use std::time::{Duration, Instant};

/// The running server, stopped (by its pid) when dropped.
#[derive(Debug)]
pub struct StreamServer {
    server: crate::process::ScriptServer,
}

/// One stream the server sent, as it logged it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    /// The endpoint's path.
    pub path: String,
    /// Events (tokens) it sent.
    pub events: u64,
    /// Whether it ended the stream (rather than cutting it, or being cut
    /// by the client).
    pub ended: bool,
}

impl StreamServer {
    /// Starts the server on a free loopback port (the system's pick, kept);
    /// waits (at most 60 s: uvicorn and FastAPI import slowly on a busy
    /// machine) until it listens.
    pub fn start() -> StreamServer {
        let server = crate::process::ScriptServer::start(
            "pelt-streams-",
            &crate::aioquic::python(),
            "stream_server.py",
            |log| vec![log.into()],
            Duration::from_secs(60),
            "the stream server (scripts/test installs uvicorn, sse-starlette and fastapi)",
        );
        StreamServer { server }
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.server.port
    }

    /// `http://127.0.0.1:PORT` + `path_and_query`.
    pub fn url(&self, path_and_query: &str) -> String {
        format!("http://127.0.0.1:{}{path_and_query}", self.server.port)
    }

    /// The streams it logged, once there are `n` (waiting at most 10 s:
    /// a stream is logged as its generator ends, just after its last
    /// bytes left).
    pub fn sent(&self, n: usize) -> Vec<Sent> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&self.server.log).unwrap_or_default();
            let sent: Vec<Sent> = text
                .lines()
                .map(|l| {
                    let v: serde_json::Value = serde_json::from_str(l).expect("a JSON log line");
                    Sent {
                        path: v["path"].as_str().unwrap_or_default().to_string(),
                        events: v["events"].as_u64().unwrap_or(0),
                        ended: v["ended"].as_bool().unwrap_or(false),
                    }
                })
                .collect();
            if sent.len() >= n || Instant::now() > deadline {
                return sent;
            }
            // Waiting on another process's file: nothing to block on.
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
