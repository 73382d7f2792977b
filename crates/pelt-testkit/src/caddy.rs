//! A private Caddy (Debian's `caddy`, which scripts/test installs) serving
//! HTTP/1.1, HTTP/2 and HTTP/3 on one loopback port (TCP and UDP) with a
//! certificate the test made, and a JSON access log that names each
//! request's protocol (`"proto":"HTTP/3.0"`).
//!
//! Caddy runs from a JSON configuration in a temp dir that also holds its
//! data, its autosaved configuration and its log (its HOME and XDG
//! directories point there), with the admin API off: nothing outside the
//! temp dir is written, and the process is stopped by pid when dropped.

use crate::nginx::TlsFiles;
use crate::ports::random_port;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use tempfile::TempDir;

/// Debian's Caddy.
pub const BINARY: &str = "/usr/bin/caddy";

/// Ports tried before giving up (another server may take the pick).
const ATTEMPTS: usize = 8;

/// How long Caddy may take to start.
const START: Duration = Duration::from_secs(30);

/// A running Caddy, stopped (by pid) when dropped.
#[derive(Debug)]
pub struct Caddy {
    child: Child,
    port: u16,
    log: PathBuf,
    _dir: TempDir,
}

/// Where Caddy's certificate comes from.
enum Cert<'a> {
    /// The test's own files.
    Files(&'a TlsFiles),
    /// Caddy's internal CA, for this name.
    Internal(&'a str),
}

/// Why a start failed.
enum Failed {
    AddrInUse(String),
    Other(String),
}

impl Caddy {
    /// Starts Caddy with `tls`'s certificate on a loopback port. Its
    /// routes: `/ok` answers 200 `ok`, `/status/503` a 503, `/big` 10,000
    /// bytes, `/login` 200 with `Set-Cookie: session=abc; Path=/`,
    /// anything else 404.
    pub fn start(tls: &TlsFiles) -> Caddy {
        Caddy::start_with(&Cert::Files(tls), None)
    }

    /// As [`Caddy::start`], also proxying `/stream/...` to
    /// `127.0.0.1:upstream` (the prefix stripped), flushing each piece as
    /// it comes (`flush_interval: -1`): streamed responses over HTTP/1.1,
    /// HTTP/2 and HTTP/3 from an HTTP/1.1 server.
    pub fn start_proxy(tls: &TlsFiles, upstream: u16) -> Caddy {
        Caddy::start_with(&Cert::Files(tls), Some(upstream))
    }

    /// As [`Caddy::start`], with a certificate for `name` from Caddy's own
    /// CA (the Caddyfile's `tls internal`), chosen by the server name a
    /// client sends: a handshake without one (a URL with an IP address
    /// sends none) finds no certificate and is refused.
    pub fn start_internal(name: &str) -> Caddy {
        Caddy::start_with(&Cert::Internal(name), None)
    }

    fn start_with(tls: &Cert<'_>, upstream: Option<u16>) -> Caddy {
        assert!(
            std::path::Path::new(BINARY).exists(),
            "Caddy is missing: scripts/test installs Debian's caddy"
        );
        let mut last = String::new();
        for attempt in 0..ATTEMPTS {
            match Caddy::try_start(tls, random_port(attempt), upstream) {
                Ok(caddy) => return caddy,
                Err(Failed::AddrInUse(log)) => last = log,
                Err(Failed::Other(log)) => panic!("Caddy did not start:\n{log}"),
            }
        }
        panic!("Caddy found no free port after {ATTEMPTS} tries:\n{last}");
    }

    fn try_start(tls: &Cert<'_>, port: u16, upstream: Option<u16>) -> Result<Caddy, Failed> {
        let dir = tempfile::Builder::new()
            .prefix("pelt-caddy-")
            .tempdir()
            .expect("temp dir for Caddy");
        let log = dir.path().join("access.log");
        let config_file = dir.path().join("caddy.json");
        let config = config(tls, port, &log, &dir.path().join("data"), upstream);
        std::fs::write(&config_file, config.to_string()).expect("write Caddy's configuration");
        let mut child = Command::new(BINARY)
            .arg("run")
            .arg("--config")
            .arg(&config_file)
            .env("HOME", dir.path())
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start caddy");
        // Caddy logs (JSON, on stderr) that it serves once every listener
        // is up, or the error that stopped it; read on a thread so that a
        // Caddy that says neither fails the test instead of hanging it.
        // With its own CA, Caddy issues the certificate just after: wait
        // for that too.
        let mut waiting: Vec<&'static str> = vec!["serving initial configuration"];
        if let Cert::Internal(_) = tls {
            waiting.push("certificate obtained successfully");
        }
        let stderr = child.stderr.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut seen = String::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                seen.push_str(&line);
                seen.push('\n');
                let before = waiting.len();
                waiting.retain(|w| !line.contains(w));
                if waiting.is_empty() && before > 0 {
                    let _ = tx.send(Ok(()));
                }
                // Keep draining, so Caddy never blocks on a full pipe.
            }
            let _ = tx.send(Err(seen));
        });
        match rx.recv_timeout(START) {
            Ok(Ok(())) => Ok(Caddy {
                child,
                port,
                log,
                _dir: dir,
            }),
            Ok(Err(seen)) => {
                let _ = child.kill();
                let _ = child.wait();
                match seen.contains("address already in use") {
                    true => Err(Failed::AddrInUse(seen)),
                    false => Err(Failed::Other(seen)),
                }
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(Failed::Other(format!("not serving within {START:?}")))
            }
        }
    }

    /// The port it listens on (TCP and UDP).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `https://127.0.0.1:PORT` and `path`.
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// The `Cookie` header of each logged request (empty when it had none).
    pub fn cookies(&self) -> Vec<String> {
        self.log_entries()
            .iter()
            .map(|e| {
                e["request"]["headers"]["Cookie"]
                    .as_array()
                    .map(|v| {
                        v.iter()
                            .filter_map(|c| c.as_str())
                            .collect::<Vec<_>>()
                            .join("; ")
                    })
                    .unwrap_or_default()
            })
            .collect()
    }

    /// The access log's entries (one JSON object per request).
    pub fn log_entries(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The access log, one `METHOD URI STATUS PROTO` line per request
    /// (`GET /ok 200 HTTP/3.0`).
    pub fn log_lines(&self) -> Vec<String> {
        self.log_entries()
            .iter()
            .map(|e| {
                format!(
                    "{} {} {} {}",
                    e["request"]["method"].as_str().unwrap_or("?"),
                    e["request"]["uri"].as_str().unwrap_or("?"),
                    e["status"],
                    e["request"]["proto"].as_str().unwrap_or("?"),
                )
            })
            .collect()
    }
}

impl Drop for Caddy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Caddy's JSON configuration: one server on `127.0.0.1:port` speaking
/// h1, h2 and h3 with the test's certificate, access log to `log`; with
/// an `upstream`, `/stream/...` proxied to it.
fn config(
    tls: &Cert<'_>,
    port: u16,
    log: &std::path::Path,
    data: &std::path::Path,
    upstream: Option<u16>,
) -> Value {
    let respond = |status: u16, body: &str| json!({"handler": "static_response", "status_code": status, "body": body});
    let route =
        |path: &str, handler: Value| json!({"match": [{"path": [path]}], "handle": [handler]});
    let login = json!({
        "handler": "static_response",
        "status_code": 200,
        "body": "ok",
        "headers": {"Set-Cookie": ["session=abc; Path=/"]},
    });
    let mut routes = vec![
        route("/ok", respond(200, "ok")),
        route("/status/503", respond(503, "unavailable")),
        route("/big", respond(200, &"x".repeat(10_000))),
        route("/login", login),
    ];
    if let Some(up) = upstream {
        routes.push(json!({
            "match": [{"path": ["/stream/*"]}],
            "handle": [
                {"handler": "rewrite", "strip_path_prefix": "/stream"},
                {"handler": "reverse_proxy", "upstreams": [{"dial": format!("127.0.0.1:{up}")}], "flush_interval": -1},
            ],
        }));
    }
    routes.push(json!({"handle": [respond(404, "")]}));
    json!({
        "admin": {"disabled": true, "config": {"persist": false}},
        "storage": {"module": "file_system", "root": data},
        "logging": {"logs": {
            "default": {"level": "INFO", "exclude": ["http.log.access.access"]},
            "access": {
                "writer": {"output": "file", "filename": log},
                "encoder": {"format": "json"},
                "include": ["http.log.access.access"],
            },
        }},
        "apps": {
            "http": {
                "http_port": 0,
                "https_port": port,
                "servers": {"pelt": {
                    "listen": [format!("127.0.0.1:{port}")],
                    "protocols": ["h1", "h2", "h3"],
                    "routes": routes,
                    "tls_connection_policies": [{}],
                    "automatic_https": {"disable": true},
                    // Cookies in the log as sent (Caddy redacts them unless
                    // told): the cookie tests count them.
                    "logs": {"default_logger_name": "access", "should_log_credentials": true},
                }},
            },
            "tls": match tls {
                Cert::Files(files) => json!({
                    "certificates": {"load_files": [{
                        "certificate": files.cert,
                        "key": files.key,
                    }]},
                }),
                // Issued at start (`automate`), by the CA below.
                Cert::Internal(name) => json!({
                    "certificates": {"automate": [name]},
                    "automation": {"policies": [{
                        "subjects": [name],
                        "issuers": [{"module": "internal"}],
                    }]},
                }),
            },
            // Caddy's own CA, kept in the temp dir: never installed in
            // the system's trust store.
            "pki": {"certificate_authorities": {"local": {"install_trust": false}}},
        },
    })
}
