//! A small web app for the scenario tests: `flask_app.py` (beside this
//! file) on Flask (Debian's `python3-flask`; scripts/test installs it): a
//! login form with a CSRF token and a session cookie, a JSON API of the
//! ids the user owns, a page that needs an id, a form POST. It logs each
//! request with its user as a JSON line ([`Entry`]), the tests' witness.

use std::path::Path;
use std::time::Duration;

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
            Path::new("python3"),
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
