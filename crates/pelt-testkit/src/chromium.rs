//! A real headless Chromium (Debian's `chromium` package, which
//! `scripts/test` installs), to open HTML reports as a browser would.
//! One way to start the browser for every crate's tests.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
/// No Chromium run here takes more than a few seconds; this bounds a hang.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(60);

fn binary() -> &'static Path {
    let path = Path::new(CHROMIUM);
    assert!(
        path.exists(),
        "chromium is not installed: run scripts/test, which installs it"
    );
    path
}

/// What one Chromium run left behind.
#[derive(Debug)]
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs headless Chromium on `page` with `args`, in its own process group
/// (so a hung run is killed with every helper process it started), with
/// a fresh profile and nothing that would reach the network.
pub fn run(dir: &Path, page: &Path, args: &[String]) -> Run {
    run_url(dir, &format!("file://{}", page.display()), args)
}

/// [`run`] for any URL (a page served over loopback).
pub fn run_url(dir: &Path, url: &str, args: &[String]) -> Run {
    let profile = tempfile::tempdir_in(dir).unwrap();
    let out_path = dir.join(format!("out-{}.txt", fastish_id()));
    let err_path = dir.join(format!("err-{}.txt", fastish_id()));
    let mut child = Command::new(binary())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap())
        .process_group(0)
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + CHROMIUM_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            // Kill the whole group: the browser and its helpers.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            panic!(
                "chromium did not finish within {CHROMIUM_TIMEOUT:?}; stderr:\n{}",
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Run {
        status,
        stdout: std::fs::read_to_string(&out_path).unwrap(),
        stderr: std::fs::read_to_string(&err_path).unwrap(),
    }
}

/// Distinct file names for runs within one temp dir.
fn fastish_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The live DOM of `page` after Chromium loaded it (scripts, had any been
/// allowed, would have run by then).
pub fn dump_dom(page: &Path) -> String {
    let dir = tempfile::tempdir().unwrap();
    let run = run(dir.path(), page, &["--dump-dom".into()]);
    assert!(run.status.success(), "chromium failed: {}", run.stderr);
    run.stdout
}

/// The page's console messages in a run's stderr: Chromium logs them (any
/// level, uncaught exceptions included) as
/// `...:INFO:CONSOLE(line)] "message", source: ...`.
pub fn console_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

/// What follows `prefix` in each console message that has it.
pub fn console<'a>(stderr: &'a str, prefix: &str) -> Vec<&'a str> {
    console_lines(stderr)
        .into_iter()
        .filter_map(|l| l.split_once(prefix).map(|(_, rest)| rest))
        .collect()
}

/// `name=VALUE` from a console line.
pub fn field(line: &str, name: &str) -> f64 {
    line.split([' ', '"'])
        .find_map(|w| w.strip_prefix(&format!("{name}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}
