//! A WebSocket echo server for the WebSocket tests (issue 40):
//! `ws_server.py` (beside this file) on Python's websockets (PyPI;
//! scripts/test installs it in aioquic's venv under ~/.cache/pelt). It
//! logs each connection as it ends ([`Conn`]: messages and bytes
//! received, subprotocol, headers, the client's close code): the tests'
//! witness, so that pelt's count of messages sent is checked against the
//! server's count of messages received.

use std::time::{Duration, Instant};

/// The running server, stopped (by its pid) when dropped.
#[derive(Debug)]
pub struct WsServer {
    server: crate::process::ScriptServer,
}

/// One connection the server served, as it logged it.
#[derive(Debug, Clone, PartialEq)]
pub struct Conn {
    /// The upgrade request's path.
    pub path: String,
    /// Messages received.
    pub received: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The subprotocol chosen, if any.
    pub subprotocol: Option<String>,
    /// The upgrade request's `Cookie` header.
    pub cookie: Option<String>,
    /// The upgrade request's `X-Test` header.
    pub x_test: Option<String>,
    /// The close code the client sent, if it sent a close frame.
    pub close_code: Option<u64>,
}

impl WsServer {
    /// Starts the server on a free loopback port (the system's pick,
    /// kept); waits (at most 60 s, for a busy machine) until it listens.
    pub fn start() -> WsServer {
        let server = crate::process::ScriptServer::start(
            "pelt-ws-",
            &crate::aioquic::python(),
            "ws_server.py",
            |log| vec![log.into()],
            Duration::from_secs(60),
            "the WebSocket server (scripts/test installs websockets)",
        );
        WsServer { server }
    }

    /// `ws://127.0.0.1:PORT` + `path_and_query`.
    pub fn url(&self, path_and_query: &str) -> String {
        format!("ws://127.0.0.1:{}{path_and_query}", self.server.port)
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.server.port
    }

    /// The connections it logged, once there are `n` (waiting at most
    /// 10 s: a connection is logged as its handler ends, just after the
    /// close handshake).
    pub fn conns(&self, n: usize) -> Vec<Conn> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&self.server.log).unwrap_or_default();
            let conns: Vec<Conn> = text
                .lines()
                .map(|l| {
                    let v: serde_json::Value = serde_json::from_str(l).expect("a JSON log line");
                    let s = |k: &str| v[k].as_str().map(str::to_string);
                    Conn {
                        path: s("path").unwrap_or_default(),
                        received: v["received"].as_u64().unwrap_or(0),
                        bytes: v["bytes"].as_u64().unwrap_or(0),
                        subprotocol: s("subprotocol"),
                        cookie: s("cookie"),
                        x_test: s("x_test"),
                        close_code: v["close_code"].as_u64(),
                    }
                })
                .collect();
            if conns.len() >= n || Instant::now() > deadline {
                return conns;
            }
            // Waiting on another process's file: nothing to block on.
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
