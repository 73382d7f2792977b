//! A private PostgreSQL cluster for a test: `initdb` in a temp dir,
//! `pg_ctl start` on a loopback port, stopped by its pid when dropped.
//!
//! Debian's `postgresql` package provides the programs (`scripts/test`
//! installs it when missing); the package's own service is never used.
//! A missing install fails the test, never skips it.

use crate::ports::random_port;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The cluster's superuser; trust authentication on loopback only.
pub const USER: &str = "pelt";

/// A running cluster, stopped by its pid when dropped.
#[derive(Debug)]
pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
    pid: Option<u32>,
    databases: AtomicUsize,
}

/// Where Debian keeps the server programs (`/usr/lib/postgresql/N/bin`),
/// the newest version first.
fn bin_dir() -> PathBuf {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b).unwrap_or_else(|| {
        panic!(
            "PostgreSQL's server programs are missing (/usr/lib/postgresql/*/bin/initdb): \
             install Debian's postgresql package (scripts/test does)"
        )
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// `program args`, as the `postgres` user when we are root (initdb and
/// the server refuse to run as root).
fn as_owner(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn run(mut c: Command, what: &str) -> String {
    let out = c
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl Cluster {
    /// A new cluster, started and accepting connections.
    pub fn start() -> Cluster {
        let bin = bin_dir();
        let dir = tempfile::Builder::new()
            .prefix("pelt-pg-")
            .tempdir()
            .expect("temp dir");
        if is_root() {
            run(
                {
                    let mut c = Command::new("chown");
                    c.args(["postgres:postgres"]).arg(dir.path());
                    c
                },
                "chown",
            );
        }
        let data = dir.path().join("data");
        let mut init = as_owner(&bin.join("initdb"));
        init.arg("-D")
            .arg(&data)
            .args(["-U", USER, "--auth=trust", "--no-sync", "-E", "UTF8"])
            .env("LC_ALL", "C");
        run(init, "initdb");
        // Ports below the ephemeral range (see `ports`), tried in turn
        // until one is free: the server binds by number.
        for attempt in 0..20 {
            let port = random_port(attempt);
            let mut start = as_owner(&bin.join("pg_ctl"));
            start
                .arg("-D")
                .arg(&data)
                .arg("-l")
                .arg(dir.path().join("log"))
                .arg("-o")
                .arg(format!(
                    "-p {port} -c listen_addresses=127.0.0.1 -k {} -c fsync=off",
                    dir.path().display()
                ))
                .args(["-w", "-t", "60", "start"]);
            let ok = start.output().map(|o| o.status.success()).unwrap_or(false);
            if ok {
                let pid = std::fs::read_to_string(data.join("postmaster.pid"))
                    .ok()
                    .and_then(|s| s.lines().next()?.trim().parse().ok());
                return Cluster {
                    dir,
                    bin,
                    port,
                    pid,
                    databases: AtomicUsize::new(0),
                };
            }
        }
        let log = std::fs::read_to_string(dir.path().join("log")).unwrap_or_default();
        panic!("PostgreSQL did not start on any port tried: {log}");
    }

    /// A URL for a new, empty database of its own.
    pub fn fresh_db(&self) -> String {
        let n = self.databases.fetch_add(1, Ordering::SeqCst);
        let name = format!("t{n}");
        let mut c = self.psql_command();
        c.args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", USER])
            .args(["-d", "postgres", "-v", "ON_ERROR_STOP=1", "-c"])
            .arg(format!("CREATE DATABASE {name}"));
        run(c, "psql CREATE DATABASE");
        self.url(&name)
    }

    /// psql: beside the server programs, else Debian's wrapper on PATH.
    fn psql_command(&self) -> Command {
        let beside = self.bin.join("psql");
        Command::new(if beside.exists() {
            beside
        } else {
            PathBuf::from("psql")
        })
    }

    pub fn url(&self, db: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{db}", self.port)
    }

    /// `db` as SQL text (pg_dump): everything the database holds.
    pub fn dump(&self, db: &str) -> Vec<u8> {
        let mut c = Command::new(self.bin.join("pg_dump"));
        c.args([
            "-h",
            "127.0.0.1",
            "-p",
            &self.port.to_string(),
            "-U",
            USER,
            db,
        ]);
        let out = c.output().expect("run pg_dump");
        assert!(
            out.status.success(),
            "pg_dump: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    /// Runs SQL in `db` with psql; returns its unaligned output.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let mut c = self.psql_command();
        c.args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", USER])
            .args(["-d", db, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql]);
        run(c, "psql")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Fast shutdown (SIGINT) by pid, then wait for the process to go.
        if let Some(pid) = self.pid {
            let _ = Command::new("kill")
                .args(["-INT", &pid.to_string()])
                .status();
            for _ in 0..600 {
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
        let _ = &self.dir;
    }
}
