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

/// One second's event: the run so far and its newest second. Rates are
/// per second of the run the row covers, as the HTML report draws them:
/// the first and last wall-clock seconds are cut by the run's start and
/// end, and their counts alone would read as a dip (25 req/s of 18
/// offered, for a 500 req/s run's last 0.04 s).
pub fn event(s: &State) -> serde_json::Value {
    event_with(s, false)
}

/// [`event`], with `timeline`: every second so far, for a page that
/// connects late or reloads (the first event of each stream), and again
/// once the run has ended and its last second's share is known.
pub fn event_with(s: &State, timeline: bool) -> serde_json::Value {
    let t = &s.total;
    let end = s.end_s();
    let row = s.last.as_ref().map(|(row, _)| row_json(row, end));
    // The tiles: the newest second that covered enough of the run to give
    // a rate (a last second cut to a few milliseconds gives none).
    let shown = s
        .rows
        .iter()
        .rev()
        .find(|r| r.rate(end).is_some())
        .or(s.rows.last());
    let tile = shown.map(|r| row_json(r, end));
    let pick = |k: &str| {
        tile.as_ref()
            .map_or(serde_json::Value::Null, |t| t[k].clone())
    };
    let mut e = json!({
        "run_id": s.run_id,
        "campaign": s.campaign,
        "seconds": s.seconds,
        "requests": t.requests,
        "successes": t.successes,
        "failed": t.failed(),
        // pelt-core's one share, as every report gives it.
        "failed_share": t.failed_share(),
        // What the latency tiles and chart measure (the reports' headline).
        "headline": s.headline.name(),
        "rate": pick("rate"),
        "offered": pick("offered"),
        // flows/s for a scenario: its schedule starts flows.
        "offered_unit": s.rate_unit,
        "p50_ms": pick("p50_ms"),
        "p90_ms": pick("p90_ms"),
        "p99_ms": pick("p99_ms"),
        "max_ms": pick("max_ms"),
        "row": row,
        "in_flight": s.gauges.in_flight,
        "connections": s.gauges.connections_open,
        "finished": s.finished,
        // Issue 38: streamed responses, in runs that met one.
        "streams": t.streamed.as_deref().map(|st| {
            let p99 = |h: &hdrhistogram::Histogram<u64>| match h.is_empty() {
                true => serde_json::Value::Null,
                false => json!(pelt_core::rank::quantile(h, 0.99) as f64 / 1e6),
            };
            json!({
                "streams": st.streams,
                "events": st.events,
                "stalls": st.stalls,
                "events_per_s": pick("events"),
                "first_event_p99_ms": p99(&st.first_event),
                "gap_p99_ms": p99(&st.gaps),
            })
        }),
    });
    if timeline || s.finished {
        e["timeline"] = s.rows.iter().map(|r| row_json(r, end)).collect();
    }
    e
}

/// One second as the charts draw it: `t`, the seconds of the run at its
/// start (0 for the partial first), and its figures per second covered.
fn row_json(r: &pelt_core::IntervalRow, end: f64) -> serde_json::Value {
    let ms = |ns: u64| ns as f64 / 1e6;
    let (from, to) = r.span(end);
    let per_s = |n: f64| r.rate(end).map(|_| n / (to - from));
    json!({
        "t": from,
        "rate": per_s(r.requests as f64),
        "offered": r.offered.and_then(per_s),
        "p50_ms": ms(r.p50_ns),
        "p90_ms": ms(r.p90_ns),
        "p99_ms": ms(r.p99_ns),
        "max_ms": ms(r.max_ns),
        "events": r.events.and_then(|n| per_s(n as f64)),
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
                Some(r) => Response::ok("application/json", r.as_bytes().to_vec()),
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
    // The first event carries the timeline so far: a page opened late,
    // or reloaded, draws the whole run, not just what comes next.
    let (mut seen, mut text, mut done) =
        live.read(|s| (s.generation, event_with(s, true).to_string(), s.finished));
    loop {
        if write!(out, "data: {text}\n\n")
            .and_then(|_| out.flush())
            .is_err()
        {
            return;
        }
        if done {
            let report = live.read(|s| s.report.clone()).unwrap_or_default();
            let _ = write_final(out, &report);
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

/// Writes the `final` event: the report (JSON as `--format json` prints
/// it, over many lines) as one `data:` line per line, which a browser
/// joins with line breaks again. Buffered: with many targets the report
/// has millions of lines.
fn write_final(out: &mut TcpStream, report: &str) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::with_capacity(64 * 1024, out);
    w.write_all(b"event: final\n")?;
    let mut lines = report.lines().peekable();
    if lines.peek().is_none() {
        // No report: an empty `data:` still dispatches the event (the
        // page then stops listening), where no data line would not.
        w.write_all(b"data: \n")?;
    }
    for line in lines {
        w.write_all(b"data: ")?;
        w.write_all(line.as_bytes())?;
        w.write_all(b"\n")?;
    }
    w.write_all(b"\n")?;
    w.flush()
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

    /// A 500 req/s run measured for `elapsed` s whose wall-clock seconds
    /// start 0.6 s before measurement: rows at -0.6, 0.4, 1.4, 2.4 s with
    /// their share of the requests.
    fn run_of_500_per_s(elapsed: f64) -> Live {
        let live = Live::new("r".into(), crate::TargetLabels::default());
        for offset in [-0.6, 0.4, 1.4, 2.4] {
            let (from, to) = (f64::max(offset, 0.0), f64::min(offset + 1.0, elapsed));
            let n = ((to - from) * 500.0).round() as u64;
            let mut rec = pelt_core::Recorder::new();
            rec.requests = n;
            rec.successes = n;
            let mut row = pelt_core::IntervalRow::from_recorder(
                0,
                offset,
                &rec,
                pelt_core::Headline::ResponseTime,
            );
            row.offered = Some(n as f64);
            live.feed(&row, &rec, crate::Gauges::default());
        }
        live
    }

    // Issue 37 §1: a scenario's offered rate is flows per second; the
    // tile said "offered req/s".
    #[test]
    fn the_offered_rate_says_its_unit() {
        let live = run_of_500_per_s(2.8);
        assert_eq!(live.read(event)["offered_unit"], "req/s");
        live.set_rate_unit("flows/s");
        assert_eq!(live.read(event)["offered_unit"], "flows/s");
    }

    // Issue 22 §5: a page opened late started empty.
    #[test]
    fn a_stream_starts_with_the_timeline_so_far() {
        let live = run_of_500_per_s(2.8);
        let first = live.read(|s| event_with(s, true));
        let timeline = first["timeline"].as_array().unwrap();
        assert_eq!(timeline.len(), 4);
        assert_eq!(timeline[0]["t"], 0.0);
        assert_eq!(timeline[3]["t"], 2.4);
        // Later events carry only the newest second.
        assert!(live.read(event).get("timeline").is_none());
    }

    // Issue 22 §5: the final tiles read "25 req/s of 18 offered" for a
    // 500 req/s run: the last second's counts over a sliver of it.
    #[test]
    fn final_rates_are_per_second_of_the_run_covered() {
        // The last second covers 0.2 s of the run: 100 requests, 500/s.
        let live = run_of_500_per_s(2.6);
        live.finish_run(None, 2.6);
        let e = live.read(event);
        let close = |v: &serde_json::Value, want: f64| (v.as_f64().unwrap() - want).abs() < 1.0;
        assert!(close(&e["rate"], 500.0), "{e}");
        assert!(close(&e["offered"], 500.0), "{e}");
        let timeline = e["timeline"].as_array().unwrap();
        assert!(timeline.iter().all(|r| close(&r["rate"], 500.0)), "{e}");
        // A last second of 0.03 s gives no rate: the tiles show the
        // newest second that does.
        let live = run_of_500_per_s(2.43);
        live.finish_run(None, 2.43);
        let e = live.read(event);
        assert!(close(&e["rate"], 500.0), "{e}");
        assert!(e["timeline"][3]["rate"].is_null(), "{e}");
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        for needle in ["http://", "https://", "//cdn", "@import", "<link", "src="] {
            assert!(!PAGE.contains(needle), "the page mentions {needle}");
        }
    }
}
