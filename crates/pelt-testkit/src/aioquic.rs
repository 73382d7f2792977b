//! An HTTP/3 server for the tests: `h3_server.py` (beside this file) on aioquic
//! (PyPI; scripts/test installs it in a venv under ~/.cache/pelt), an
//! implementation independent of pelt's own (quinn and h3). It listens on
//! a UDP loopback port the system picks, with a certificate the test made,
//! and logs each request it answers.

use crate::nginx::TlsFiles;
use std::path::PathBuf;
use std::time::Duration;

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
    server: crate::process::ScriptServer,
}

impl H3Server {
    /// Starts the server with `tls`'s certificate; waits (at most 30 s)
    /// until it listens.
    pub fn start(tls: &TlsFiles) -> H3Server {
        let server = crate::process::ScriptServer::start(
            "pelt-h3-",
            &python(),
            "h3_server.py",
            |log| {
                vec![
                    "--cert".into(),
                    tls.cert.clone().into(),
                    "--key".into(),
                    tls.key.clone().into(),
                    "--log".into(),
                    log.into(),
                ]
            },
            Duration::from_secs(30),
            "the aioquic server",
        );
        H3Server { server }
    }

    /// The UDP port it listens on.
    pub fn port(&self) -> u16 {
        self.server.port
    }

    /// `https://127.0.0.1:PORT` and `path`.
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.server.port)
    }

    /// The requests it answered, one line each: `METHOD PATH STATUS h3`.
    pub fn log_lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.server.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}
