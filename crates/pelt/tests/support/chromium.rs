//! A real headless Chromium, to open HTML reports as a browser would.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
/// Chromium must finish loading a page within this.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The live DOM of `html` after Chromium loaded it (scripts, had any been
/// allowed, would have run by then).
pub fn dump_dom(html: &Path) -> String {
    assert!(
        Path::new(CHROMIUM).exists(),
        "chromium is not installed: run scripts/test, which installs it"
    );
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", html.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let reader = child.stdout.take().unwrap();
    let read = std::thread::spawn(move || {
        let mut r = reader;
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        s
    });
    // Bounded: a page that hangs Chromium fails the test instead.
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            panic!("chromium did not finish within {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    read.join().unwrap()
}
