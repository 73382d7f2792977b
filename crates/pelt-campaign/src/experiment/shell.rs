//! The variant's own commands (setup, ready, teardown) and the wait for
//! it to serve.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How often a variant that is not ready yet is asked again. Polling an
/// outside process is the only way to learn it is up.
const READY_POLL: Duration = Duration::from_millis(100);

/// Where a command runs and what it is told.
#[derive(Debug)]
pub struct Shell<'a> {
    /// The plan's folder: relative paths in commands start there.
    pub dir: &'a Path,
    /// stdout and stderr of every command are appended here.
    pub log: &'a Path,
    /// `PELT_VARIANT`, `PELT_BLOCK`, `PELT_EXPERIMENT_DIR`, ...
    pub env: Vec<(&'static str, String)>,
    /// Stops a wait for readiness (the caller then tears down).
    pub cancel: &'a crate::Cancel,
}

impl Shell<'_> {
    /// Runs `sh -c command`; Ok when it exits 0 within `timeout`.
    pub fn run(&self, what: &str, command: &str, timeout: Duration) -> Result<(), String> {
        let log = self.open_log(what, command)?;
        let err = log
            .try_clone()
            .map_err(|e| format!("cannot write {}: {e}", self.log.display()))?;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(self.dir)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            // A file, not a pipe: a server the command starts in the
            // background keeps its output somewhere that never fills.
            .stdout(log)
            .stderr(err)
            // Its own process group: a timeout kills everything the command
            // started in the foreground, not just `sh`; and the terminal's
            // Ctrl-C reaches pelt, which then tears down in order.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start sh for the {what} command: {e}"))?;
        let deadline = Instant::now() + timeout;
        loop {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => {
                    return Err(format!(
                        "the {what} command failed ({status}); its output is in {}",
                        self.log.display()
                    ))
                }
                Ok(None) if Instant::now() >= deadline => {
                    kill_group(child.id());
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "the {what} command did not finish within {}; it was killed (its output is in {}); raise command_timeout if it needs longer",
                        pelt_core::Human(timeout),
                        self.log.display()
                    ));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(format!("cannot wait for the {what} command: {e}")),
            }
        }
    }

    /// Waits until the variant serves: `ready` exits 0 (when given), and
    /// `url` answers with an HTTP status line. Refuses after `timeout`.
    pub fn wait_ready(
        &self,
        ready: Option<&str>,
        url: &str,
        timeout: Duration,
    ) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let outcome = match ready {
                Some(cmd) => self
                    .run("ready", cmd, left.max(Duration::from_millis(100)))
                    .and_then(|()| answers(url, left)),
                None => answers(url, left),
            };
            let last = match outcome {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            if self.cancel.is_stopped() {
                // The caller sees the interruption and tears down.
                return Ok(());
            }
            if Instant::now() + READY_POLL >= deadline {
                return Err(format!(
                    "not ready after {} ({last}); check the setup command's output in {}, or raise ready_timeout",
                    pelt_core::Human(timeout),
                    self.log.display()
                ));
            }
            std::thread::sleep(READY_POLL);
        }
    }

    fn open_log(&self, what: &str, command: &str) -> Result<File, String> {
        let mut f = File::options()
            .create(true)
            .append(true)
            .open(self.log)
            .map_err(|e| format!("cannot write {}: {e}", self.log.display()))?;
        let env: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(f, "\n### {what} ({}): {command}", env.join(" "));
        Ok(f)
    }
}

/// SIGKILLs the process group `pgid` (a command and what it started).
fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Whether `url` answers an HTTP GET with a status line (any status: a
/// 404 still proves the server is up).
fn answers(url: &str, timeout: Duration) -> Result<(), String> {
    let u = pelt_core::Url::parse(url).map_err(|e| e.to_string())?;
    let timeout = timeout.clamp(Duration::from_millis(50), Duration::from_secs(2));
    let addr = (u.host.as_str(), u.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", u.host))?
        .next()
        .ok_or_else(|| format!("{} has no address", u.host))?;
    let mut s =
        TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("{url}: connect: {e}"))?;
    if u.scheme == pelt_core::url::Scheme::Https {
        // A TLS server that accepts connections is taken as up.
        return Ok(());
    }
    s.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "GET {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nUser-Agent: pelt-ready\r\n\r\n",
        u.path_and_query,
        u.host_header()
    )
    .map_err(|e| format!("{url}: write: {e}"))?;
    let mut head = [0u8; 12];
    s.read_exact(&mut head)
        .map_err(|e| format!("{url}: no response: {e}"))?;
    if head.starts_with(b"HTTP/1.") {
        Ok(())
    } else {
        Err(format!("{url}: the answer is not HTTP"))
    }
}
