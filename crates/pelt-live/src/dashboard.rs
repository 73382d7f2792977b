//! The web dashboard: one self-contained page (no external scripts,
//! styles or fonts: it works offline) fed by server-sent events, one a
//! second, and the final report when the run ends.

use crate::server::{self, Bound, Request, Response};
use crate::state::State;
use crate::Live;
use serde_json::json;
use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

/// The page.
pub const PAGE: &str = include_str!("dashboard.html");

/// How often an idle event stream gets a comment, so that proxies and
/// browsers keep it open through a long quiet stretch.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// One second's event: the run so far and its newest second.
pub fn event(s: &State) -> serde_json::Value {
    let t = &s.total;
    let row = s.last.as_ref().map(|(row, _)| row);
    let ms = |ns: u64| ns as f64 / 1e6;
    json!({
        "run_id": s.run_id,
        "campaign": s.campaign,
        "seconds": s.seconds,
        "requests": t.requests,
        "successes": t.successes,
        "failed": t.failed(),
        "rate": row.map(|r| r.requests),
        "offered": row.and_then(|r| r.offered),
        "p50_ms": row.map(|r| ms(r.p50_ns)),
        "p90_ms": row.map(|r| ms(r.p90_ns)),
        "p99_ms": row.map(|r| ms(r.p99_ns)),
        "max_ms": row.map(|r| ms(r.max_ns)),
        "in_flight": s.gauges.in_flight,
        "connections": s.gauges.connections_open,
        "finished": s.finished,
    })
}

/// Whether `query` carries `token=TOKEN`.
fn has_token(query: &str, token: &str) -> bool {
    query
        .split('&')
        .any(|kv| kv.strip_prefix("token=") == Some(token))
}

/// Serves the dashboard of `live` on `bound` until the process ends; with
/// `token`, every request must carry it (`?token=...`).
pub fn serve(bound: Bound, live: Live, token: Option<String>) -> std::io::Result<()> {
    server::spawn(bound, move |req: Request<'_>| {
        if let Some(token) = &token {
            if !has_token(req.query, token) {
                return Response::forbidden(
                    "pelt: this dashboard needs the token pelt printed at start (?token=...)",
                );
            }
        }
        match req.path {
            "/" => Response::ok("text/html; charset=utf-8", PAGE.as_bytes().to_vec()),
            "/events" => {
                let live = live.clone();
                Response::Stream {
                    content_type: "text/event-stream",
                    write: Box::new(move |out| stream(&live, out)),
                }
            }
            "/report.json" => match live.read(|s| s.report.clone()) {
                Some(r) => Response::ok("application/json", r.into_bytes()),
                None => Response::not_found(),
            },
            _ => Response::not_found(),
        }
    })
}

/// Writes an event each time the figures change, and the final report
/// as a `final` event, then ends.
fn stream(live: &Live, out: &mut TcpStream) {
    // A watcher: the run waits for it to get the final report.
    live.delivered(false);
    let (mut seen, mut text, mut done) =
        live.read(|s| (s.generation, event(s).to_string(), s.finished));
    loop {
        if write!(out, "data: {text}\n\n")
            .and_then(|_| out.flush())
            .is_err()
        {
            return;
        }
        if done {
            let report = live.read(|s| s.report.clone()).unwrap_or_default();
            let _ = write!(out, "event: final\ndata: {report}\n\n").and_then(|_| out.flush());
            // Written: the run may end now.
            live.delivered(true);
            return;
        }
        loop {
            let (generation, t, d) = live.wait_change(seen, KEEPALIVE, |s| {
                (s.generation, event(s).to_string(), s.finished)
            });
            if generation != seen {
                (seen, text, done) = (generation, t, d);
                break;
            }
            if out.write_all(b": keepalive\n\n").is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_must_match_exactly() {
        assert!(has_token("token=abc", "abc"));
        assert!(has_token("x=1&token=abc", "abc"));
        assert!(!has_token("token=abcd", "abc"));
        assert!(!has_token("", "abc"));
        assert!(!has_token("xtoken=abc", "abc"));
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        for needle in ["http://", "https://", "//cdn", "@import", "<link", "src="] {
            assert!(!PAGE.contains(needle), "the page mentions {needle}");
        }
    }
}
