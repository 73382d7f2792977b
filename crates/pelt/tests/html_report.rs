//! The HTML report end to end: real runs against a hostile server, saved,
//! overlaid by `pelt report --format html`, opened in headless Chromium.

use pelt_testkit::pelt::{ok, pelt};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

const TITLE_ATTACK: &str = "document.title='pwned'";

/// Answers up to `connections` connections with responses that put markup
/// where pelt reports server data: a header value, and the bytes of a
/// response that is not HTTP.
fn hostile_server(connections: usize) -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        for stream in listener.incoming().take(connections) {
            let Ok(mut s) = stream else { continue };
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]);
            let response = if request.contains("/header") {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: <script>{TITLE_ATTACK}</script>\r\n\r\n"
                )
            } else {
                format!(
                    "<img src=x onerror=\"{TITLE_ATTACK}\"><script>{TITLE_ATTACK}</script>\r\n\r\n"
                )
            };
            let _ = s.write_all(response.as_bytes());
        }
    });
    (port, handle)
}

#[test]
fn server_and_url_markup_is_escaped_and_never_runs() {
    let data = tempfile::tempdir().unwrap();
    let (port, server) = hostile_server(10);
    let mut files = Vec::new();
    for part in ["header", "body"] {
        let file = data.path().join(format!("{part}.pelt"));
        let url = format!("http://127.0.0.1:{port}/<script>{TITLE_ATTACK}</script>/{part}");
        let out = pelt()
            .args([&url, "-n", "5", "-c", "1", "--no-keepalive", "-o"])
            .arg(&file)
            .output()
            .unwrap();
        // Garbage for a response is no response at all: exit 3, with the
        // results file written as for any run.
        assert!(
            matches!(out.status.code(), Some(0 | 3)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        files.push(file);
    }
    server.join().unwrap();
    let out = pelt()
        .arg("report")
        .args(&files)
        .args(["--format", "html"])
        .output()
        .unwrap();
    ok(&out);
    let page = String::from_utf8(out.stdout).unwrap();
    // The server's markup is in the page, as text.
    assert!(
        page.contains("&lt;script&gt;"),
        "URL and messages shown escaped"
    );
    assert!(
        page.contains("&lt;img"),
        "the body excerpt is shown escaped"
    );
    assert!(!page.contains("<script"), "no script element");
    assert!(!page.contains("<img"), "no img element");
    // Every request failed fast, so nothing is timed: the two timelines are
    // drawn, the two latency distributions say there is nothing to draw.
    assert_eq!(page.matches("<svg").count(), 2, "the timelines");
    assert!(page.contains("No timed responses"));

    // And a browser agrees: nothing ran.
    let html = data.path().join("report.html");
    std::fs::write(&html, &page).unwrap();
    let dom = pelt_testkit::chromium::dump_dom(&html);
    let title = dom
        .split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .unwrap_or_default();
    assert!(!title.contains("pwned"), "a script ran: title {title:?}");
    assert!(title.contains("pelt"), "title {title:?}");
    assert!(
        !dom.contains("<script"),
        "no script element in the live DOM"
    );
    assert_eq!(dom.matches("<svg").count(), 2);
}
