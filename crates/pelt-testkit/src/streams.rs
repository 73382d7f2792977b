//! Streamed responses at known times for the stream tests (issue 38):
//! `stream_server.py` (beside this file) on uvicorn, with an SSE
//! endpoint (sse-starlette), an NDJSON one and an OpenAI-compatible
//! streaming chat endpoint (FastAPI), all from PyPI (scripts/test
//! installs them in aioquic's venv under ~/.cache/pelt). Each request
//! sets its pacing in its query string (`first_ms`, `gap_ms`, `events`,
//! `stall_ms`, `stall_after`, `cut`; see the script), which is the truth
//! the tests check pelt's figures against; the server logs each stream it
//! sent ([`Sent`]), the tests' witness.

use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// The running server, stopped (by its pid) when dropped.
#[derive(Debug)]
pub struct StreamServer {
    child: Child,
    port: u16,
    log: PathBuf,
    /// Held open: the server exits when it closes.
    _stdin: ChildStdin,
    _dir: TempDir,
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
        let dir = tempfile::Builder::new()
            .prefix("pelt-streams-")
            .tempdir()
            .expect("temp dir for the server's log");
        let log = dir.path().join("streams.jsonl");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/stream_server.py");
        let python = crate::aioquic::python();
        let mut child = Command::new(python)
            .arg(script)
            .arg(&log)
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect(
                "start the stream server (scripts/test installs uvicorn, sse-starlette, fastapi)",
            );
        let stdin = child.stdin.take().expect("piped");
        let port = crate::process::announced_port(
            &mut child,
            Duration::from_secs(60),
            "the stream server (scripts/test installs uvicorn, sse-starlette and fastapi)",
        );
        StreamServer {
            child,
            port,
            log,
            _stdin: stdin,
            _dir: dir,
        }
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT` + `path_and_query`.
    pub fn url(&self, path_and_query: &str) -> String {
        format!("http://127.0.0.1:{}{path_and_query}", self.port)
    }

    /// The streams it logged, once there are `n` (waiting at most 10 s:
    /// a stream is logged as its generator ends, just after its last
    /// bytes left).
    pub fn sent(&self, n: usize) -> Vec<Sent> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
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

impl Drop for StreamServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
