//! tinyproxy from Debian as the forward proxy for `--proxy` tests.
//!
//! Each [`Tinyproxy`] is a private instance: its own temp directory
//! (config, log), a port of its own on 127.0.0.1, in the foreground as a
//! child of the test, stopped by its pid on drop. The package's own
//! service is never used.

use crate::ports::random_port;
use std::fs;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};
use tempfile::TempDir;

const NOT_INSTALLED: &str =
    "tinyproxy is not installed: run scripts/test, which installs it (apt-get install tinyproxy)";
/// How long tinyproxy gets to listen, and its log to show what we wait for.
const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause between polls of tinyproxy's port and log: another process,
/// nothing to block on but the clock.
const POLL: Duration = Duration::from_millis(10);

/// A running tinyproxy, stopped on drop.
#[derive(Debug)]
pub struct Tinyproxy {
    child: Child,
    port: u16,
    dir: TempDir,
}

impl Tinyproxy {
    /// Starts tinyproxy on 127.0.0.1, asking for `auth` (`user`, `pass`)
    /// if given, and waits until it accepts connections.
    pub fn start(auth: Option<(&str, &str)>) -> Tinyproxy {
        let bin = ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
            .expect(NOT_INSTALLED);
        let mut last = String::new();
        for attempt in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            // tinyproxy started as root runs as nobody: let it write its log.
            fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
            let port = random_port(attempt + 100);
            let mut conf = format!(
                "User nobody\nGroup nogroup\nPort {port}\nListen 127.0.0.1\nTimeout 30\n\
                 LogFile \"{log}\"\nLogLevel Info\nMaxClients 1000\nAllow 127.0.0.1\n\
                 DisableViaHeader Yes\n",
                log = dir.path().join("tinyproxy.log").display()
            );
            if let Some((user, pass)) = auth {
                conf.push_str(&format!("BasicAuth {user} {pass}\n"));
            }
            let conf_path = dir.path().join("tinyproxy.conf");
            fs::write(&conf_path, conf).unwrap();
            let mut child = Command::new(&bin)
                .arg("-d")
                .arg("-c")
                .arg(&conf_path)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect(NOT_INSTALLED);
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
            let started = Instant::now();
            loop {
                if let Some(status) = child.try_wait().unwrap() {
                    last = format!(
                        "exited {status}: {}",
                        fs::read_to_string(dir.path().join("tinyproxy.log")).unwrap_or_default()
                    );
                    break;
                }
                if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                    return Tinyproxy { child, port, dir };
                }
                if started.elapsed() > READY_TIMEOUT {
                    let _ = child.kill();
                    let _ = child.wait();
                    last = "did not listen within 10 s".into();
                    break;
                }
                thread::sleep(POLL);
            }
        }
        panic!("tinyproxy did not start: {last}");
    }

    /// `http://127.0.0.1:PORT`, with `user:pass@` if given.
    pub fn url(&self, auth: Option<(&str, &str)>) -> String {
        match auth {
            Some((u, p)) => format!("http://{u}:{p}@127.0.0.1:{}", self.port),
            None => format!("http://127.0.0.1:{}", self.port),
        }
    }

    /// The requests tinyproxy logged (`GET http://... HTTP/1.1`,
    /// `CONNECT h:p HTTP/1.1`), waiting up to 10 s for at least `expected`.
    pub fn requests(&self, expected: usize) -> Vec<String> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let text =
                fs::read_to_string(self.dir.path().join("tinyproxy.log")).unwrap_or_default();
            let lines: Vec<String> = text
                .lines()
                .filter_map(|l| l.split_once("]: Request (file descriptor "))
                .filter_map(|(_, rest)| rest.split_once("): "))
                .map(|(_, req)| req.to_string())
                .collect();
            if lines.len() >= expected || Instant::now() >= deadline {
                return lines;
            }
            thread::sleep(POLL);
        }
    }
}

impl Drop for Tinyproxy {
    fn drop(&mut self) {
        // Our own child, by its pid.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
