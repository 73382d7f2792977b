//! An HTTP/3 server for the tests: `h3_server.py` (beside this file) on aioquic
//! (PyPI; scripts/test installs it in a venv under ~/.cache/pelt), an
//! implementation independent of pelt's own (quinn and h3). It listens on
//! a UDP loopback port the system picks, with a certificate the test made,
//! and logs each request it answers.

use crate::nginx::TlsFiles;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;
use tempfile::TempDir;

/// aioquic's venv, as scripts/test makes it.
pub fn python() -> PathBuf {
    let venv = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/pelt/aioquic/bin/python"))
        .filter(|p| p.exists());
    venv.unwrap_or_else(|| {
        panic!("aioquic is missing: scripts/test installs it (PyPI) into ~/.cache/pelt/aioquic")
    })
}

/// A running aioquic HTTP/3 server, stopped when dropped.
#[derive(Debug)]
pub struct H3Server {
    child: Child,
    port: u16,
    log: PathBuf,
    /// Held open: the server exits when it closes.
    _stdin: ChildStdin,
    _dir: TempDir,
}

impl H3Server {
    /// Starts the server with `tls`'s certificate; waits (at most 30 s)
    /// until it listens.
    pub fn start(tls: &TlsFiles) -> H3Server {
        let dir = tempfile::Builder::new()
            .prefix("pelt-h3-")
            .tempdir()
            .expect("temp dir for the access log");
        let log = dir.path().join("access.log");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/h3_server.py");
        let mut child = Command::new(python())
            .arg(script)
            .arg("--cert")
            .arg(&tls.cert)
            .arg("--key")
            .arg(&tls.key)
            .arg("--log")
            .arg(&log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the aioquic server");
        let stdin = child.stdin.take().expect("piped");
        let port = crate::process::announced_port(
            &mut child,
            Duration::from_secs(30),
            "the aioquic server",
        );
        H3Server {
            child,
            port,
            log,
            _stdin: stdin,
            _dir: dir,
        }
    }

    /// The UDP port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `https://127.0.0.1:PORT` and `path`.
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// The requests it answered, one line each: `METHOD PATH STATUS h3`.
    pub fn log_lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for H3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
