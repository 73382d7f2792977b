//! The run report page, rendered from synthetic runs with hostile text.

use super::tables::{lookup, utc};
use super::*;
use pelt_core::{ErrorKind, Recorder, RunConfig, Warning};

const XSS: &str = "<script>alert(1)</script>";

/// A synthetic run (pelt-testkit's one made-up run): `seconds` of
/// `per_second` requests with latencies spread over two orders of
/// magnitude, a few timeouts and resets, and hostile text wherever a
/// server or user could put some.
fn summary(rate_mode: bool, seconds: u64, per_second: u64, slow: u64) -> RunSummary {
    let mut s = pelt_testkit::summary::Synthetic {
        urls: vec![
            format!("http://127.0.0.1:8080/a?q={XSS}"),
            format!("http://127.0.0.1:8080/b?q={XSS}"),
        ],
        header: Some(("X-Test".into(), XSS.into())),
        rate: rate_mode,
        seconds,
        per_second,
        // Slower later in the run.
        slowdown_ns: slow * 100_000,
        message: XSS.into(),
        warmup_requests: 42,
        ..Default::default()
    }
    .summary();
    s.warnings.push(Warning::Failed {
        ratio: 0.5,
        untimed: 0.5,
        length: 0.0,
        top: None,
    });
    s
}

/// `(run, key, value)` of every element with a `data-key`.
fn data_cells(page: &str) -> Vec<(usize, String, String)> {
    let attr = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        let len = tag[start..].find('"')?;
        Some(tag[start..start + len].to_string())
    };
    let mut cells = Vec::new();
    let mut rest = page;
    while let Some(at) = rest.find("data-key=\"") {
        let tag_start = rest[..at].rfind('<').expect("data-key inside a tag");
        let tag_end = at + rest[at..].find('>').expect("tag closes");
        let tag = &rest[tag_start..tag_end];
        let run = attr(tag, "data-run").expect("data-run").parse().unwrap();
        let key = attr(tag, "data-key").unwrap();
        let value = attr(tag, "data-value").expect("data-value");
        cells.push((run, key, value));
        rest = &rest[tag_end..];
    }
    cells
}

/// Checks every data-key cell against the JSON report of its run.
fn assert_cells_match_json(page: &str, summaries: &[&RunSummary]) -> Vec<String> {
    let jsons: Vec<Value> = summaries.iter().map(|s| crate::json_value(s)).collect();
    let cells = data_cells(page);
    assert!(!cells.is_empty());
    for (run, key, value) in &cells {
        let expected = lookup(&jsons[*run], key)
            .unwrap_or_else(|| panic!("data-key {key} is not in the JSON report"));
        match expected {
            Value::Number(n) => {
                let got: f64 = value.parse().unwrap();
                assert_eq!(got, n.as_f64().unwrap(), "{key}: page {value}, JSON {n}");
                if let Some(int) = n.as_u64() {
                    assert_eq!(value, &int.to_string(), "{key} is an integer");
                }
            }
            Value::Bool(b) => assert_eq!(value, &b.to_string(), "{key}"),
            other => panic!("{key}: a data-value for a non-number {other}"),
        }
    }
    cells.into_iter().map(|(_, k, _)| k).collect()
}

#[test]
fn page_has_the_four_charts_and_every_section() {
    let s = summary(true, 8, 400, 1);
    let page = render(&[Labeled {
        label: "run".into(),
        summary: &s,
    }]);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(page.matches("<svg").count(), 4, "four charts");
    for id in [
        "summary",
        "latency-over-time",
        "throughput-over-time",
        "percentile-spectrum",
        "latency-histogram",
        "status-codes",
        "failures",
        "configuration",
        "warnings",
        "targets",
    ] {
        assert!(page.contains(&format!("id=\"{id}\"")), "section {id}");
    }
    // Axis descriptions carry units; the spectrum is labelled by percentile.
    assert!(page.contains("latency (ms"), "latency axis in ms");
    assert!(page.contains("99.9%"));
    assert!(page.contains("time since start (s)"));
    assert!(page.contains(ErrorKind::Timeout.describe()));
    assert!(page.contains(&esc(&Warning::Failed {
        ratio: 0.5,
        untimed: 0.5,
        length: 0.0,
        top: None,
    }
    .to_string())));
    assert!(
        !page.contains("http://") || !page.contains("src=\"http"),
        "no remote loads"
    );
}

#[test]
fn data_keys_equal_the_json_report() {
    for rate_mode in [true, false] {
        let s = summary(rate_mode, 5, 300, 1);
        let page = render(&[Labeled {
            label: "run".into(),
            summary: &s,
        }]);
        let keys = assert_cells_match_json(&page, &[&s]);
        let latency = if rate_mode {
            "response_time"
        } else {
            "service_time"
        };
        for key in [
            "requests.total",
            "requests.sent_rate",
            "requests.sent",
            "requests.completed",
            "sending_s",
            "requests.throughput",
            "requests.success_ratio",
            "requests.warmup",
            "duration_s",
            "elapsed_s",
            "bytes.in",
            "bytes.out",
            "connections.opened",
            "interrupted",
            "status_codes.200",
            "status_codes.503",
            "failures.timeout",
            "failures.reset",
            "failures.status_5xx",
            "requests.failed",
            "config.load.connections",
            "environment.cores",
            &format!("latency.{latency}.min_s"),
            &format!("latency.{latency}.mean_s"),
            &format!("latency.{latency}.percentiles_s.p50"),
            &format!("latency.{latency}.percentiles_s.p99"),
            &format!("latency.{latency}.percentiles_s.p99.9"),
            &format!("latency.{latency}.max_s"),
            "targets.0.requests",
            "targets.1.failed",
            "targets.1.response_time.percentiles_s.p99",
            "targets.0.status_classes.5xx",
            "targets.1.failures.timeout",
        ] {
            assert!(keys.iter().any(|k| k == key), "page has {key}");
        }
        assert_eq!(keys.iter().any(|k| k == "offered_rate"), rate_mode);
    }
}

#[test]
fn lookup_handles_dotted_keys_and_arrays() {
    let v = serde_json::json!({"a": {"p99": 1, "p99.9": 2, "b": [10, {"c": 3}]}});
    assert_eq!(lookup(&v, "a.p99"), Some(&serde_json::json!(1)));
    assert_eq!(lookup(&v, "a.p99.9"), Some(&serde_json::json!(2)));
    assert_eq!(lookup(&v, "a.b.1.c"), Some(&serde_json::json!(3)));
    assert_eq!(lookup(&v, "a.b.0"), Some(&serde_json::json!(10)));
    assert_eq!(lookup(&v, "a.nope"), None);
    assert_eq!(lookup(&v, "a.p9"), None);
}

#[test]
fn hostile_text_is_escaped_everywhere() {
    let s = summary(true, 3, 200, 0);
    let other = summary(true, 3, 200, 1);
    // Two runs, so that the labels are in the charts' legends too.
    let page = render(&[
        Labeled {
            label: XSS.into(),
            summary: &s,
        },
        Labeled {
            label: "other".into(),
            summary: &other,
        },
    ]);
    // The page has no script of its own, so any "<script" is injected.
    assert!(
        !page.to_lowercase().contains("<script"),
        "unescaped script tag"
    );
    let escaped = "&lt;script&gt;alert(1)&lt;/script&gt;";
    // URL (header, title and configuration), header value, error
    // examples, and the label in table heads and the SVG legends.
    assert!(page.contains(&format!("q={escaped}")), "URL");
    assert!(page.contains(&format!("X-Test: {escaped}")), "header");
    assert!(page.contains(&format!("timed out {escaped}")), "example");
    assert!(
        page.contains(&format!("reset by peer {escaped}")),
        "example"
    );
    assert!(
        page.contains(&format!("<th class=\"run\">{escaped}</th>")),
        "label"
    );
    for svg in page.split("<svg").skip(1) {
        assert!(svg.contains(escaped), "label in each SVG legend");
    }
}

#[test]
fn quotes_cannot_leave_an_attribute() {
    assert_eq!(esc(r#"a"b'c<d>&e"#), "a&quot;b&#39;c&lt;d&gt;&amp;e");
    let s = summary(false, 2, 100, 0);
    let label = "x\" onmouseover=\"alert(1)";
    let page = render(&[Labeled {
        label: label.into(),
        summary: &s,
    }]);
    assert!(!page.contains("\" onmouseover=\""));
}

#[test]
fn two_runs_overlay_with_a_legend_and_a_column_each() {
    let a = summary(true, 6, 300, 0);
    let b = summary(true, 4, 500, 2);
    let page = render(&[
        Labeled {
            label: "baseline-run".into(),
            summary: &a,
        },
        Labeled {
            label: "candidate-run".into(),
            summary: &b,
        },
    ]);
    assert_eq!(page.matches("<svg").count(), 4);
    // Each chart's legend names both runs.
    for chart in page.split("<svg").skip(1) {
        let svg = &chart[..chart.find("</svg>").unwrap()];
        assert!(svg.contains("baseline-run"), "legend has run 1");
        assert!(svg.contains("candidate-run"), "legend has run 2");
    }
    // Tables: one column per run, each checked against its own JSON.
    assert!(
        page.contains("<th class=\"run\">baseline-run</th><th class=\"run\">candidate-run</th>")
    );
    assert_cells_match_json(&page, &[&a, &b]);
    let totals: Vec<_> = data_cells(&page)
        .into_iter()
        .filter(|(_, k, _)| k == "requests.total")
        .map(|(run, _, v)| (run, v))
        .collect();
    assert_eq!(totals, [(0, "1800".to_string()), (1, "2000".to_string())]);
}

#[test]
fn empty_run_still_renders() {
    let mut s = summary(false, 1, 10, 0);
    s.total = Recorder::new();
    s.timeline.clear();
    let page = render(&[Labeled {
        label: "empty".into(),
        summary: &s,
    }]);
    assert!(page.contains("No request failed."));
    assert!(page.contains("No timed responses to draw."));
    assert_cells_match_json(&page, &[&s]);
    assert!(render(&[]).contains("no runs"));
}

#[test]
fn utc_dates() {
    assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
    assert_eq!(utc(1_700_000_000_000), "2023-11-14 22:13:20 UTC");
    assert_eq!(utc(951_825_600_000), "2000-02-29 12:00:00 UTC");
}

/// The SVG of the page's section `id`.
fn section<'p>(page: &'p str, id: &str) -> &'p str {
    let start = page
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("section {id}"));
    let len = page[start..].find("</section>").expect("section closes");
    &page[start..start + len]
}

#[test]
fn a_run_of_one_second_draws_its_timelines_as_points() {
    // One timeline row: one point per series, which no line can join.
    let s = summary(true, 1, 300, 0);
    assert_eq!(s.timeline.len(), 1);
    let page = render(&[Labeled {
        label: "short".into(),
        summary: &s,
    }]);
    // p50, p90, p99 and max; requests and errors.
    assert_eq!(
        section(&page, "latency-over-time")
            .matches("<circle")
            .count(),
        4
    );
    assert_eq!(
        section(&page, "throughput-over-time")
            .matches("<circle")
            .count(),
        2
    );
    // Two runs, one second each: a point per series and run.
    let other = summary(true, 1, 200, 1);
    let page = render(&[
        Labeled {
            label: "a".into(),
            summary: &s,
        },
        Labeled {
            label: "b".into(),
            summary: &other,
        },
    ]);
    assert_eq!(
        section(&page, "latency-over-time")
            .matches("<circle")
            .count(),
        8
    );
    // Longer runs are lines, without dots.
    let long = summary(true, 3, 300, 0);
    let page = render(&[Labeled {
        label: "long".into(),
        summary: &long,
    }]);
    for id in ["latency-over-time", "throughput-over-time"] {
        let svg = section(&page, id);
        assert_eq!(svg.matches("<circle").count(), 0, "{id}");
        assert!(svg.contains("<polyline"), "{id} has lines");
    }
}

#[test]
fn a_run_through_a_proxy_says_so() {
    // Issue 22 §8: a --proxy run never mentioned the proxy.
    let mut s = summary(true, 2, 100, 0);
    let plain = render(&[Labeled {
        label: "run".into(),
        summary: &s,
    }]);
    assert!(
        plain.contains("<th>proxy</th><td>none</td>"),
        "proxy row missing"
    );
    let proxy = pelt_core::Proxy {
        host: "127.0.0.1".into(),
        port: 8888,
        authorization: Some("Basic c2VjcmV0".into()),
        authenticated: true,
    };
    s.config.http.proxy.http = Some(proxy.clone());
    s.config.http.proxy.https = Some(proxy);
    let page = render(&[Labeled {
        label: "run".into(),
        summary: &s,
    }]);
    assert!(page.contains("<code>http://127.0.0.1:8888 (with credentials)</code>"));
    assert!(!page.contains("c2VjcmV0"));
}

/// Issue 27: the JSON report written a target row at a time (to hold one
/// row in memory, not 100,000) is exactly the one made from the whole
/// value, with hostile text in the targets, with and without buckets,
/// and without targets at all.
#[test]
fn the_json_report_written_row_by_row_is_the_whole_values() {
    for rate_mode in [true, false] {
        let mut s = summary(rate_mode, 3, 200, 1);
        let whole = crate::json::pretty(&crate::json::json_value_as_is(&s));
        assert_eq!(crate::json::report_text(&s, |_| {}), whole);
        let value: serde_json::Value = serde_json::from_str(&whole).unwrap();
        assert_eq!(value["targets"].as_array().unwrap().len(), 2);
        let buckets: pelt_core::buckets::Buckets = "0,1ms,10ms".parse().unwrap();
        let with =
            crate::json::report_text(&s, |v| v["buckets"] = crate::json::buckets(&s, &buckets));
        let mut v = crate::json::json_value_as_is(&s);
        v["buckets"] = crate::json::buckets(&s, &buckets);
        assert_eq!(with, crate::json::pretty(&v));
        s.config.targets = Vec::new().into();
        assert_eq!(
            crate::json::report_text(&s, |_| {}),
            crate::json::pretty(&crate::json::json_value_as_is(&s))
        );
    }
}

#[test]
fn a_summary_is_copied_to_redact_only_when_it_holds_a_secret() {
    use std::borrow::Cow;
    // Nothing secret: the report reads the run's own summary (a copy of
    // its per-target histograms was the biggest part of a report's
    // memory with many targets).
    let s = summary(true, 2, 50, 0);
    assert!(matches!(crate::redacted(&s), Cow::Borrowed(_)));
    // A secret header, its value quoted by an error message too.
    let mut target = s.config.targets[0].clone();
    target
        .headers
        .push(("Authorization".into(), "Bearer hunter2".into()));
    let mut secret = s.clone();
    secret.config = RunConfig::new(vec![target], s.config.load.clone(), s.config.stop);
    secret
        .total
        .add_example(ErrorKind::Reset, "reset after Bearer hunter2".into());
    let redacted = crate::redacted(&secret);
    assert!(matches!(redacted, Cow::Owned(_)));
    assert_eq!(
        redacted.config.targets[0].headers.last().unwrap().1,
        "REDACTED"
    );
    for format in [
        crate::Format::Json,
        crate::Format::Markdown,
        crate::Format::Text,
    ] {
        let shown = crate::render(&secret, format);
        assert!(!shown.contains("hunter2"), "{format:?}: {shown}");
    }
}
