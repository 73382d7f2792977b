//! A small web app for the scenario tests: `flask_app.py` (beside this
//! file) on Flask behind gunicorn (Debian's `python3-flask` and
//! `gunicorn`; scripts/test installs them; without gunicorn, Werkzeug's
//! server): a
//! login form with a CSRF token and a session cookie, a JSON API of the
//! ids the user owns, a page that needs an id, a form POST. It logs each
//! request with its user as a JSON line ([`Entry`]), the tests' witness.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The Python to run the app with: Debian's when it has Flask and
/// gunicorn (the app then runs behind gunicorn, as a deployed app would),
/// else the one on the PATH (the app then runs on Werkzeug's server).
/// Asked once per test process.
fn interpreter() -> &'static str {
    static WHICH: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    WHICH.get_or_init(|| {
        let debian = Command::new("/usr/bin/python3")
            .args(["-c", "import flask, gunicorn"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if debian {
            "/usr/bin/python3"
        } else {
            "python3"
        }
    })
}

/// The running app, stopped when dropped.
#[derive(Debug)]
pub struct FlaskApp {
    server: crate::process::ScriptServer,
}

/// One logged request.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Seconds since the Unix epoch, when answered.
    pub t: f64,
    /// The session's user, if logged in (after the request).
    pub user: Option<String>,
    /// The session id (`sid` cookie) it carried.
    pub sid: Option<String>,
    /// The `X-VU` header it carried.
    pub vu: Option<String>,
    /// Method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Status answered.
    pub status: u16,
    /// The CSRF token a POST carried.
    pub csrf: Option<String>,
    /// The user a login POST named.
    pub login_user: Option<String>,
    /// The CSRF token the response handed out (login page, item page).
    pub issued: Option<String>,
    /// The session that token belongs to.
    pub issued_sid: Option<String>,
}

impl FlaskApp {
    /// Starts the app on a free loopback port; waits (at most 30 s) until
    /// it listens.
    pub fn start() -> FlaskApp {
        let server = crate::process::ScriptServer::start(
            "pelt-flask-",
            Path::new(interpreter()),
            "flask_app.py",
            |log| vec![log.into()],
            Duration::from_secs(30),
            "the Flask app (scripts/test installs python3-flask)",
        );
        FlaskApp { server }
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.server.port
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.server.port)
    }

    /// The requests it answered so far, in the order logged.
    pub fn log(&self) -> Vec<Entry> {
        let text = std::fs::read_to_string(&self.server.log).unwrap_or_default();
        text.lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("a JSON log line");
                let s = |k: &str| v[k].as_str().map(str::to_owned);
                Entry {
                    t: v["t"].as_f64().unwrap_or(0.0),
                    user: s("user"),
                    sid: s("sid"),
                    vu: s("vu"),
                    method: s("method").unwrap_or_default(),
                    path: s("path").unwrap_or_default(),
                    status: v["status"].as_u64().unwrap_or(0) as u16,
                    csrf: s("csrf"),
                    login_user: s("login_user"),
                    issued: s("issued"),
                    issued_sid: s("issued_sid"),
                }
            })
            .collect()
    }
}
