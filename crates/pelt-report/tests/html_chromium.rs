//! The HTML report opened in a real browser: headless Chromium (Debian's
//! `chromium` package, which `scripts/test` installs) takes a screenshot,
//! dumps the DOM it built, and logs the console to stderr.
//!
//! The report carries hostile text where a server, user or targets file
//! could put it; the browser must show it as text, never run it.

use pelt_core::RunSummary;
use pelt_report::html::{render, Labeled};
use pelt_report::json_value;
use pelt_testkit::chromium::{self, console_lines};
use std::path::{Path, PathBuf};

/// Sets the title if it runs, with and without a script element.
const PAYLOAD: &str =
    r#"<script>document.title='pwned'</script><img src=x onerror="document.title='pwned'">"#;
/// The same, spelled without spaces so that it fits in a URL.
const URL_PAYLOAD: &str =
    "<script>document.title='pwned'</script><img/src=x/onerror=document.title='pwned'>";

/// Ten seconds at 500 req/s with a latency tail (growing over time by
/// `slowdown`), a few timeouts, resets and 503s, and the payload in the
/// URL, a header and error messages: pelt-testkit's synthetic run.
fn summary(slowdown: u64) -> RunSummary {
    pelt_testkit::summary::Synthetic {
        urls: vec![format!("http://127.0.0.1:8080/search?q={URL_PAYLOAD}")],
        header: Some(("X-Payload".into(), PAYLOAD.into())),
        seconds: 10,
        per_second: 500,
        slowdown_ns: slowdown * 60_000,
        message: PAYLOAD.into(),
        ..Default::default()
    }
    .summary()
}

fn write_report(dir: &Path, runs: &[Labeled<'_>]) -> PathBuf {
    let page = render(runs);
    let path = dir.join("report.html");
    std::fs::write(&path, page).unwrap();
    path
}

#[test]
fn screenshot_is_a_real_picture() {
    let dir = tempfile::tempdir().unwrap();
    // Two runs, to see the overlays and legends too.
    let (before, after) = (summary(0), summary(1));
    let page = write_report(
        dir.path(),
        &[
            Labeled {
                label: "before".into(),
                summary: &before,
            },
            Labeled {
                label: format!("after {PAYLOAD}"),
                summary: &after,
            },
        ],
    );
    let shot = dir.path().join("shot.png");
    let run = chromium::run(
        dir.path(),
        &page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2400".into(),
            "--hide-scrollbars".into(),
        ],
    );
    assert!(run.status.success(), "chromium failed:\n{}", run.stderr);
    let png = std::fs::read(&shot).expect("chromium wrote the screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG file");
    assert!(
        png.len() > 10 * 1024,
        "a {} byte screenshot is too small to hold the report",
        png.len()
    );
    assert_eq!(console_lines(&run.stderr), Vec::<&str>::new());
    // To look at the page: PELT_HTML_SCREENSHOT=/tmp/report.png cargo test ...
    // keeps the screenshot there, and the page beside it (/tmp/report.html).
    if let Some(keep) = std::env::var_os("PELT_HTML_SCREENSHOT") {
        let keep = PathBuf::from(keep);
        std::fs::copy(&shot, &keep).unwrap();
        std::fs::copy(&page, keep.with_extension("html")).unwrap();
    }
}

#[test]
fn browser_builds_the_report_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = summary(1);
    let page = write_report(
        dir.path(),
        &[Labeled {
            label: format!("run {PAYLOAD}"),
            summary: &s,
        }],
    );
    let run = chromium::run(dir.path(), &page, &["--dump-dom".into()]);
    assert!(run.status.success(), "chromium failed:\n{}", run.stderr);
    let dom = run.stdout;
    assert!(dom.contains("<svg"), "no chart in the DOM:\n{dom}");
    assert_eq!(dom.matches("<svg").count(), 4, "four charts");

    // The numbers the browser shows carry the JSON report's values.
    let json = json_value(&s);
    for (key, value) in [
        ("requests.total", &json["requests"]["total"]),
        ("requests.sent_rate", &json["requests"]["sent_rate"]),
        ("requests.success_ratio", &json["requests"]["success_ratio"]),
        ("duration_s", &json["duration_s"]),
        (
            "latency.response_time.percentiles_s.p99",
            &json["latency"]["response_time"]["percentiles_s"]["p99"],
        ),
        ("failures.timeout", &json["failures"]["timeout"]),
        ("requests.failed", &json["requests"]["failed"]),
        ("status_codes.503", &json["status_codes"]["503"]),
    ] {
        assert!(value.is_number(), "{key} is a number in the JSON report");
        let attrs = format!("data-key=\"{key}\" data-value=\"{value}\"");
        assert!(dom.contains(&attrs), "the DOM has {attrs}");
    }

    // The payload stayed text: no element came of it, and nothing ran.
    let title_start = dom.find("<title>").expect("a title") + "<title>".len();
    let title = &dom[title_start..title_start + dom[title_start..].find("</title>").unwrap()];
    // (The title names the URL, so the payload's text is in it, escaped.)
    assert!(
        title.starts_with("pelt report: GET http://"),
        "title is {title:?}"
    );
    assert_ne!(title.trim(), "pwned");
    let lower = dom.to_lowercase();
    assert!(!lower.contains("<script"), "a script element in the DOM");
    assert!(!lower.contains("<img"), "an img element in the DOM");
    assert!(dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"));
    assert!(
        dom.contains("timed out &lt;script&gt;"),
        "the error example is shown"
    );

    assert_eq!(console_lines(&run.stderr), Vec::<&str>::new());
}

/// The console check above is only worth something if this Chromium
/// reports console output the way `console_lines` expects.
#[test]
fn console_errors_would_be_seen() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("noisy.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><title>noisy</title><script>console.error('seen'); notDefined();</script>",
    )
    .unwrap();
    let run = chromium::run(dir.path(), &page, &["--dump-dom".into()]);
    assert!(run.status.success(), "chromium failed:\n{}", run.stderr);
    let lines = console_lines(&run.stderr);
    assert!(
        lines.iter().any(|l| l.contains("seen")),
        "console.error not logged:\n{}",
        run.stderr
    );
    assert!(
        lines.iter().any(|l| l.contains("Uncaught")),
        "uncaught exception not logged:\n{}",
        run.stderr
    );
}
