//! The Prometheus text exposition format (0.0.4, which OpenMetrics
//! scrapers read too) of a run's live figures.
//!
//! Counters and histograms cover the run's measured seconds so far (after
//! warm-up), so at the end they equal the report's totals. Gauges show
//! the newest second. Every series carries `run` (the run's id); with
//! several targets, the per-target series carry `target`, bounded by
//! [`crate::TargetLabels`].

use crate::state::State;
use hdrhistogram::Histogram;
use pelt_core::{FailureKind, Recorder};
use std::fmt::Write;

/// The Content-Type of [`render`]'s text.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Upper bounds of the latency histograms' buckets, in seconds: from half
/// a millisecond (a fast loopback server) to 30 s (the default timeout),
/// about three per decade, so `histogram_quantile` stays within a bucket
/// of the truth at any scale.
pub const BUCKETS_S: [f64; 17] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 15.0,
    20.0, 30.0,
];

/// Percentiles of the run so far, as gauges (the report's figures).
const QUANTILES: [(f64, &str); 5] = [
    (0.5, "0.5"),
    (0.9, "0.9"),
    (0.99, "0.99"),
    (0.999, "0.999"),
    (1.0, "1"),
];

/// A label value, escaped as the format requires.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn secs(ns: f64) -> f64 {
    ns / 1e9
}

/// Cumulative counts of `h` at each of [`BUCKETS_S`]. A value counts in
/// the first bucket at or above the top of its hdr bucket, so counts can
/// only ever be placed up (by at most 0.1 %), never lost.
pub fn bucket_counts(h: &Histogram<u64>) -> [u64; BUCKETS_S.len()] {
    let bounds = BUCKETS_S.map(|b| (b * 1e9).round() as u64);
    let mut counts = [0u64; BUCKETS_S.len()];
    for v in h.iter_recorded() {
        let top = h.highest_equivalent(v.value_iterated_to());
        if let Some(i) = bounds.iter().position(|&b| top <= b) {
            counts[i] += v.count_at_value();
        }
    }
    let mut sum = 0;
    for c in &mut counts {
        sum += *c;
        *c = sum;
    }
    counts
}

fn histogram(out: &mut String, name: &str, help: &str, run: &str, h: &Histogram<u64>) {
    head(out, name, "histogram", help);
    for (b, count) in BUCKETS_S.iter().zip(bucket_counts(h)) {
        let _ = writeln!(out, "{name}_bucket{{run=\"{run}\",le=\"{b}\"}} {count}");
    }
    let _ = writeln!(
        out,
        "{name}_bucket{{run=\"{run}\",le=\"+Inf\"}} {}",
        h.len()
    );
    // hdr keeps no exact sum; the mean times the count is within its
    // 0.1 % resolution.
    let sum = if h.is_empty() {
        0.0
    } else {
        secs(h.mean() * h.len() as f64)
    };
    let _ = writeln!(out, "{name}_sum{{run=\"{run}\"}} {sum}");
    let _ = writeln!(out, "{name}_count{{run=\"{run}\"}} {}", h.len());
}

fn counter(out: &mut String, name: &str, help: &str, run: &str, value: u64) {
    head(out, name, "counter", help);
    let _ = writeln!(out, "{name}{{run=\"{run}\"}} {value}");
}

fn gauge(out: &mut String, name: &str, help: &str, run: &str, value: f64) {
    head(out, name, "gauge", help);
    let _ = writeln!(out, "{name}{{run=\"{run}\"}} {value}");
}

fn quantile_ns(h: &Histogram<u64>, q: f64) -> u64 {
    if h.is_empty() {
        0
    } else if q >= 1.0 {
        h.max()
    } else {
        pelt_core::rank::quantile(h, q)
    }
}

/// The metrics text of `s`.
pub fn render(s: &State) -> String {
    let run = escape(&s.run_id);
    let run = run.as_str();
    let t: &Recorder = &s.total;
    let mut out = String::with_capacity(8 * 1024);

    counter(
        &mut out,
        "pelt_requests_total",
        "Measured requests completed or given up (the report's request count).",
        run,
        t.requests,
    );
    counter(
        &mut out,
        "pelt_successes_total",
        "Requests without error and with a 2xx or 3xx status.",
        run,
        t.successes,
    );
    head(
        &mut out,
        "pelt_responses_total",
        "counter",
        "Responses by status class.",
    );
    let mut classes = [0u64; 10];
    for (code, n) in t.status_counts() {
        classes[usize::from(code / 100).min(9)] += n;
    }
    for (class, n) in classes
        .iter()
        .enumerate()
        .filter(|(c, _)| (1..=5).contains(c))
    {
        let _ = writeln!(
            out,
            "pelt_responses_total{{run=\"{run}\",class=\"{class}xx\"}} {n}"
        );
    }
    head(
        &mut out,
        "pelt_failures_total",
        "counter",
        "Requests that failed, by kind: no response (connect, reset, timeout, ...) or a status \
         outside 2xx/3xx (status_4xx, status_5xx, ...). Summed over kinds: the report's failed.",
    );
    for kind in FailureKind::all() {
        let _ = writeln!(
            out,
            "pelt_failures_total{{run=\"{run}\",kind=\"{}\"}} {}",
            kind.name(),
            t.failed_of(kind)
        );
    }
    counter(
        &mut out,
        "pelt_received_bytes_total",
        "Bytes received (heads and bodies).",
        run,
        t.bytes_in,
    );
    counter(
        &mut out,
        "pelt_sent_bytes_total",
        "Bytes sent.",
        run,
        t.bytes_out,
    );
    counter(
        &mut out,
        "pelt_connections_opened_total",
        "Connections opened.",
        run,
        t.connections,
    );

    if !s.targets.is_empty() {
        // Summed into the bounded labels: "other" holds every target
        // past the first few.
        let mut per: Vec<(&str, u64, u64)> = Vec::new();
        for (i, target) in t.targets.iter().enumerate() {
            let label = s.targets.of(i).unwrap_or("other");
            match per.iter_mut().find(|(l, _, _)| *l == label) {
                Some(p) => {
                    p.1 += target.requests();
                    p.2 += target.requests() - target.successes();
                }
                None => per.push((
                    label,
                    target.requests(),
                    target.requests() - target.successes(),
                )),
            }
        }
        head(
            &mut out,
            "pelt_target_requests_total",
            "counter",
            "Measured requests by target.",
        );
        for (label, n, _) in &per {
            let _ = writeln!(
                out,
                "pelt_target_requests_total{{run=\"{run}\",target=\"{}\"}} {n}",
                escape(label)
            );
        }
        head(
            &mut out,
            "pelt_target_failures_total",
            "counter",
            "Requests by target that failed or got a status outside 2xx/3xx.",
        );
        for (label, _, n) in &per {
            let _ = writeln!(
                out,
                "pelt_target_failures_total{{run=\"{run}\",target=\"{}\"}} {n}",
                escape(label)
            );
        }
    }

    histogram(
        &mut out,
        "pelt_response_time_seconds",
        "Response time, from when each request was due (corrected for coordinated omission).",
        run,
        &t.response,
    );
    histogram(
        &mut out,
        "pelt_service_time_seconds",
        "Service time, from when each request was sent.",
        run,
        &t.service,
    );
    // Issue 38: streamed responses, in runs that met one.
    if let Some(st) = t.streamed.as_deref() {
        counter(
            &mut out,
            "pelt_streams_total",
            "Streamed responses that ended complete (stream_cut failures are in pelt_failures_total).",
            run,
            st.streams,
        );
        counter(
            &mut out,
            "pelt_stream_events_total",
            "Stream events received (SSE events, lines, chunks; token events with --llm).",
            run,
            st.events,
        );
        counter(
            &mut out,
            "pelt_stream_stalls_total",
            "Gaps between a stream's events longer than --stall-gap.",
            run,
            st.stalls,
        );
        histogram(
            &mut out,
            "pelt_stream_first_event_seconds",
            "Time to first event (TTFT with --llm), from when each request was due, as response time runs.",
            run,
            &st.first_event,
        );
        histogram(
            &mut out,
            "pelt_stream_gap_seconds",
            "Every gap between consecutive events of a stream (inter-token latency with --llm).",
            run,
            &st.gaps,
        );
    }
    head(
        &mut out,
        "pelt_response_time_quantile_seconds",
        "gauge",
        "The run's response-time percentiles so far (the report's; 1 is the maximum).",
    );
    for (q, name) in QUANTILES {
        let _ = writeln!(
            out,
            "pelt_response_time_quantile_seconds{{run=\"{run}\",quantile=\"{name}\"}} {}",
            secs(quantile_ns(&t.response, q) as f64)
        );
    }

    if let Some((row, last)) = &s.last {
        if let Some(offered) = row.offered {
            gauge(
                &mut out,
                "pelt_offered_rate",
                "Requests per second the schedule offered in the newest second (a scenario: flows per second).",
                run,
                offered,
            );
        }
        gauge(
            &mut out,
            "pelt_achieved_rate",
            "Requests completed in the newest second.",
            run,
            row.requests as f64,
        );
        gauge(
            &mut out,
            "pelt_send_lag_p99_seconds",
            "The newest second's 99th percentile of send lag (how late requests went out).",
            run,
            secs(quantile_ns(&last.send_lag, 0.99) as f64),
        );
        gauge(
            &mut out,
            "pelt_in_flight",
            "Requests sent and not yet answered at the end of the newest second.",
            run,
            s.gauges.in_flight as f64,
        );
        gauge(
            &mut out,
            "pelt_open_connections",
            "Connections open at the end of the newest second.",
            run,
            s.gauges.connections_open as f64,
        );
        if let Some(c) = row.active_connections {
            gauge(
                &mut out,
                "pelt_connections",
                "Connections the -c schedule had active in the newest second.",
                run,
                f64::from(c),
            );
        }
    }
    gauge(
        &mut out,
        "pelt_run_finished",
        "1 once the run has ended and the figures are final.",
        run,
        if s.finished { 1.0 } else { 0.0 },
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Live, TargetLabels};
    use pelt_core::recorder::new_histogram;

    #[test]
    fn buckets_are_cumulative_and_end_with_the_count() {
        let mut h = new_histogram();
        for ms in [0.2, 0.7, 3.0, 3.0, 40.0, 2000.0, 90_000.0] {
            h.record((ms * 1e6) as u64).unwrap();
        }
        let c = bucket_counts(&h);
        assert_eq!(c[0], 1, "0.2 ms <= 0.5 ms");
        assert_eq!(c[1], 2, "0.7 ms <= 1 ms");
        assert_eq!(c[3], 4, "3 ms <= 5 ms");
        assert_eq!(c[6], 5, "40 ms <= 50 ms");
        assert_eq!(c[11], 6, "2 s <= 2.5 s");
        assert_eq!(*c.last().unwrap(), 6, "90 s is only in +Inf");
        assert!(c.windows(2).all(|w| w[0] <= w[1]));
    }

    // Issue 22 §5: the p99.9 gauge is the report's, to the nanosecond.
    #[test]
    fn the_p99_9_gauge_is_the_reports_nearest_rank() {
        let mut rec = Recorder::new();
        rec.requests = 4_000;
        rec.response.record_n(1_000_000, 3_995).unwrap();
        for v in [21_087_000, 21_168_000, 22_000_000, 23_000_000, 24_000_000] {
            rec.response.record(v).unwrap();
        }
        let live = Live::new("r".into(), TargetLabels::new(["GET http://x/".into()]));
        let row =
            pelt_core::IntervalRow::from_recorder(0, 0.0, &rec, pelt_core::Headline::ResponseTime);
        live.feed(&row, &rec, crate::Gauges::default());
        let text = live.read(render);
        let report = pelt_core::LatencyStats::of(&rec.response).at(99.9).unwrap();
        assert_eq!(report, rec.response.highest_equivalent(21_087_000));
        let line = format!(
            "pelt_response_time_quantile_seconds{{run=\"r\",quantile=\"0.999\"}} {}\n",
            secs(report as f64)
        );
        assert!(text.contains(&line), "{line}{text}");
    }

    #[test]
    fn text_has_the_counters_and_escapes_labels() {
        let live = Live::new(
            "a\"b".into(),
            TargetLabels::new(["GET http://x/1".into(), "GET http://x/\"2\"".into()]),
        );
        let mut rec = Recorder::new();
        rec.requests = 3;
        rec.response.record(1_000_000).unwrap();
        let row =
            pelt_core::IntervalRow::from_recorder(0, 0.0, &rec, pelt_core::Headline::ResponseTime);
        let gauges = |in_flight| crate::Gauges {
            in_flight,
            connections_open: 2,
        };
        live.feed(&row, &rec, gauges(5));
        live.feed(&row, &rec, gauges(3));
        let text = live.read(render);
        assert!(
            text.contains("pelt_requests_total{run=\"a\\\"b\"} 6\n"),
            "{text}"
        );
        assert!(text.contains("pelt_response_time_seconds_count{run=\"a\\\"b\"} 2\n"));
        assert!(text.contains("le=\"+Inf\"} 2\n"));
        assert!(text.contains("pelt_run_finished{run=\"a\\\"b\"} 0\n"));
        assert!(text.contains("pelt_open_connections{run=\"a\\\"b\"} 2\n"));
        // A gauge: the newest second's, not a sum.
        assert!(
            text.contains("pelt_in_flight{run=\"a\\\"b\"} 3\n"),
            "{text}"
        );
        // Every sample line is NAME{labels} VALUE, with a number.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let value = line.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
        }
    }

    /// A 503 is a failure here as in every report: the Grafana share
    /// Issue 38: a run that met a streamed response has its stream
    /// figures; others have none.
    #[test]
    fn streams_have_their_counters_and_histograms() {
        let mut rec = Recorder::new();
        let row =
            pelt_core::IntervalRow::from_recorder(0, 0.0, &rec, pelt_core::Headline::ResponseTime);
        let live = Live::new("r".into(), TargetLabels::new(["GET http://x/".into()]));
        live.feed(&row, &rec, crate::Gauges::default());
        assert!(!live.read(render).contains("pelt_stream"));
        let mut t = pelt_core::stream::Tally::default();
        for at in [200_000_000, 250_000_000] {
            let gap = t.event(at, 1_000_000_000);
            rec.record_event(
                gap,
                1_000_000_000,
                pelt_core::stream::EventLatency::NotAsked,
            );
        }
        rec.record_stream(0, &t, true);
        let row =
            pelt_core::IntervalRow::from_recorder(1, 1.0, &rec, pelt_core::Headline::ResponseTime);
        live.feed(&row, &rec, crate::Gauges::default());
        let text = live.read(render);
        assert!(text.contains("pelt_streams_total{run=\"r\"} 1\n"), "{text}");
        assert!(
            text.contains("pelt_stream_events_total{run=\"r\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("pelt_stream_first_event_seconds_count{run=\"r\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("pelt_stream_gap_seconds_count{run=\"r\"} 1\n"),
            "{text}"
        );
    }

    /// `sum(rate(pelt_failures_total)) / sum(rate(pelt_requests_total))`
    /// reads the report's failed share, not 0 %.
    #[test]
    fn failures_count_statuses_outside_2xx_3xx_by_kind() {
        let live = Live::new("r".into(), TargetLabels::new(["GET http://x/".into()]));
        let mut rec = Recorder::new();
        let sample = |status, error| pelt_core::Sample {
            target: 0,
            status,
            error,
            intended: 1,
            sent: Some(2),
            first_byte: Some(3),
            done: 4,
            bytes_in: 10,
            body_bytes: 5,
            bytes_out: 10,
            reused: false,
        };
        for _ in 0..2 {
            rec.record(&sample(200, None));
        }
        rec.record(&sample(503, None));
        rec.record(&sample(0, Some(pelt_core::ErrorKind::Reset)));
        let row =
            pelt_core::IntervalRow::from_recorder(0, 0.0, &rec, pelt_core::Headline::ResponseTime);
        live.feed(
            &row,
            &rec,
            crate::Gauges {
                in_flight: 0,
                connections_open: 0,
            },
        );
        let text = live.read(render);
        assert!(
            text.contains("pelt_failures_total{run=\"r\",kind=\"status_5xx\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("pelt_failures_total{run=\"r\",kind=\"reset\"} 1\n"),
            "{text}"
        );
        let failed: u64 = text
            .lines()
            .filter(|l| l.starts_with("pelt_failures_total{"))
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(failed, rec.failed());
        assert_eq!(failed, 2);
    }
}
