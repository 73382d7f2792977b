//! A real terminal for a test: a private tmux server (its own socket,
//! `-L`), killed when dropped. The screen is read with `capture-pane`;
//! a session killed closes its terminal as a closed window or a dropped
//! SSH connection does.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Debian's tmux, which scripts/test installs.
pub const BINARY: &str = "/usr/bin/tmux";

/// A tmux server of this test's own (`-L`), killed when dropped.
#[derive(Debug)]
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// A server named after the test process and `name` (not started
    /// until the first `new-session`).
    pub fn new(name: &str) -> Tmux {
        assert!(
            Path::new(BINARY).exists(),
            "tmux is not installed: run scripts/test, which installs it"
        );
        Tmux {
            socket: format!("pelt-test-{}-{name}", std::process::id()),
        }
    }

    /// `tmux ARGS` on this server; panics if it fails. Its stdout.
    pub fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new(BINARY)
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Session `t`'s pane's text now.
    pub fn screen(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", "t"])
    }

    /// Polls the screen (tmux has no event for it) until `done` holds,
    /// within 40 s.
    pub fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(40);
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(Instant::now() < deadline, "no {what} on screen:\n{screen}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Session `t`'s pane's terminal device, like `/dev/pts/3`.
    pub fn pane_tty(&self) -> String {
        self.cmd(&["display", "-p", "-t", "t", "#{pane_tty}"])
            .trim()
            .to_string()
    }

    /// The pid of session `t`'s pane's process.
    pub fn pane_pid(&self) -> u32 {
        self.cmd(&["display", "-p", "-t", "t", "#{pane_pid}"])
            .trim()
            .parse()
            .expect("tmux gives the pane's pid")
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new(BINARY)
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}
