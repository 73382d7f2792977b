//! Debian's Prometheus (`scripts/test` installs it), to scrape pelt's
//! `--metrics` or receive its `--metrics-push` remote writes.
//!
//! Each [`Prometheus`] is a private instance: its config and data in a
//! directory the test gives, a port of its own on 127.0.0.1 (below the
//! ephemeral range, see [`crate::ports`]), killed by its pid when dropped.

use crate::http::get;
use crate::ports::free_port;
use crate::process::Killed;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

const PROMETHEUS: &str = "/usr/bin/prometheus";
/// How long Prometheus gets to be ready (and to scrape its target once).
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long [`Prometheus::settle`] waits for a value.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(15);
/// Pause between polls of Prometheus's API: another process, nothing to
/// block on but the clock.
const POLL: Duration = Duration::from_millis(100);

/// A running Prometheus, killed by pid when dropped.
#[derive(Debug)]
pub struct Prometheus {
    child: Killed,
    port: u16,
}

impl Prometheus {
    /// Scraping 127.0.0.1:`target` every second; its data in `dir`.
    /// Returns once it has scraped the target (down, if nothing listens
    /// there yet) at least once.
    pub fn scraping(dir: &Path, target: u16) -> Prometheus {
        let p = Prometheus::start(
            dir,
            &format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: pelt\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
            ),
            &[],
        );
        // Targets come from discovery, which Prometheus applies a few
        // seconds after start: wait until it scrapes ours (down, for now).
        let deadline = Instant::now() + READY_TIMEOUT;
        while !get(p.port, "/api/v1/targets")
            .is_some_and(|(_, body)| body.contains("\"lastScrape\":\"2"))
        {
            assert!(Instant::now() < deadline, "prometheus does not scrape");
            thread::sleep(POLL);
        }
        p
    }

    /// A remote-write receiver that scrapes nothing; its data in `dir`.
    pub fn receiver(dir: &Path) -> Prometheus {
        Prometheus::start(
            dir,
            "global:\n  scrape_interval: 15s\n",
            &["--web.enable-remote-write-receiver"],
        )
    }

    fn start(dir: &Path, config: &str, args: &[&str]) -> Prometheus {
        assert!(
            Path::new(PROMETHEUS).exists(),
            "prometheus is not installed: run scripts/test, which installs it"
        );
        let config_path = dir.join("prometheus.yml");
        std::fs::write(&config_path, config).unwrap();
        let port = free_port();
        let child = Command::new(PROMETHEUS)
            .arg(format!("--config.file={}", config_path.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
            .spawn()
            .unwrap();
        let mut p = Prometheus {
            child: Killed(child),
            port,
        };
        let deadline = Instant::now() + READY_TIMEOUT;
        while get(p.port, "/-/ready").map(|r| r.0) != Some(200) {
            if let Some(status) = p.child.0.try_wait().unwrap() {
                panic!(
                    "prometheus exited ({status}) on port {port}: {}",
                    std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default()
                );
            }
            assert!(Instant::now() < deadline, "prometheus did not get ready");
            thread::sleep(POLL);
        }
        p
    }

    /// The port its API listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The result vector of an instant `query` (URL-encoded), or `None`
    /// if Prometheus did not answer.
    pub fn query(&self, query: &str) -> Option<Vec<Value>> {
        let (status, body) = get(self.port, &format!("/api/v1/query?query={query}"))?;
        assert_eq!(status, 200, "{query}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["data"]["result"].as_array().cloned()
    }

    /// The single value of an instant `query` (URL-encoded), if there is
    /// one. Once pelt exits, its target is down and Prometheus marks its
    /// series stale: read them with `last_over_time`.
    pub fn value(&self, query: &str) -> Option<f64> {
        let result = self.query(query)?;
        assert!(result.len() <= 1, "{query}: {result:?}");
        result.first()?["value"][1].as_str()?.parse().ok()
    }

    /// Polls `query` (samples arrive a scrape at a time) until it equals
    /// `want` or 15 s pass; returns the last value seen.
    pub fn settle(&self, query: &str, want: f64) -> Option<f64> {
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        loop {
            let got = self.value(query);
            if got == Some(want) || Instant::now() > deadline {
                return got;
            }
            thread::sleep(Duration::from_millis(200));
        }
    }
}
