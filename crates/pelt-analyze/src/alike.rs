//! Like with like: whether two runs measured the same work, so that a
//! verdict between them is about the server and not about the runs.
//!
//! One rule for every comparison (`pelt compare`, baselines from the
//! history, `pelt history trend`): two runs are alike when they have
//!
//! - the same targets (method, scheme, path and query, body, weight, in
//!   order) and target order;
//! - the same load model and level: a closed loop of the same connections
//!   (and think time), or the same rate (and arrivals); the same schedule;
//! - the same HTTP options that change the work: protocol (HTTP/1.1 or 2,
//!   streams), keep-alive, proxy, redirects followed, cookies and login.
//!
//! A rate run and a closed loop answer different questions (the first
//! sees queueing, the second cannot), a run through a proxy or of other
//! URLs does other work, so a latency verdict between them is about the
//! set-up. What else a run may differ in (duration, warm-up, threads,
//! timeouts, headers' values, which may be secrets replaced in the
//! history) does not make it another experiment. Nor does the server's
//! address (host and port, `--connect-to`, `--unix-socket`): two servers
//! doing the same work, a blue and a green deployment, nginx against
//! Caddy, are what a comparison is for; [`servers`] says when they differ.
//!
//! Runs that were interrupted or have no footer are not complete (see
//! [`incomplete`]); whether they may enter is the caller's rule.

use pelt_core::{Load, RunConfig, RunSummary};
use serde::Serialize;
use std::fmt;

/// One way two runs' work differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// What differs (`load`, `target 2 URL`, `protocol`).
    pub what: String,
    /// The first run's.
    pub a: String,
    /// The second run's.
    pub b: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} vs {}", self.what, self.a, self.b)
    }
}

/// How the run loads the server, as people say it: `rate 1000/s`,
/// `closed loop, 50 connections`.
pub fn load_model(config: &RunConfig) -> String {
    match &config.load {
        Load::Closed { connections, .. } => {
            format!(
                "closed loop, {connections} connection{}",
                if *connections == 1 { "" } else { "s" }
            )
        }
        Load::Rate { rate, .. } => format!("rate {rate}/s"),
    }
}

/// Every way `b`'s work differs from `a`'s, in the order of the module
/// docs; empty when the runs are alike. At most the first differing
/// target is named, with the count of targets when that differs.
pub fn differences(a: &RunConfig, b: &RunConfig) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut differ = |what: &str, x: String, y: String| {
        if x != y {
            out.push(Difference {
                what: what.into(),
                a: x,
                b: y,
            });
        }
    };
    differ(
        "targets",
        a.targets.len().to_string(),
        b.targets.len().to_string(),
    );
    if let Some((i, (ta, tb))) = a
        .targets
        .iter()
        .zip(&b.targets)
        .enumerate()
        .find(|(_, (x, y))| target_key(x) != target_key(y))
    {
        let n = if a.targets.len() > 1 || b.targets.len() > 1 {
            format!("target {} ", i + 1)
        } else {
            String::new()
        };
        differ(&format!("{n}method"), ta.method.clone(), tb.method.clone());
        differ(&format!("{n}URL"), ta.url.to_string(), tb.url.to_string());
        differ(&format!("{n}body"), body(&ta.body), body(&tb.body));
        differ(
            &format!("{n}weight"),
            ta.weight.to_string(),
            tb.weight.to_string(),
        );
    }
    if a.targets.len() > 1 && b.targets.len() > 1 {
        differ(
            "target order",
            format!("{:?}", a.order),
            format!("{:?}", b.order),
        );
    }
    differ("load", load_model(a), load_model(b));
    let schedule = |c: &RunConfig| match &c.load {
        Load::Closed { schedule, .. } | Load::Rate { schedule, .. } => schedule
            .as_ref()
            .map_or("none".to_string(), |s| format!("{s:?}")),
    };
    differ("load schedule", schedule(a), schedule(b));
    if matches!(a.load, Load::Rate { .. }) && matches!(b.load, Load::Rate { .. }) {
        differ(
            "arrivals",
            format!("{:?}", a.arrivals),
            format!("{:?}", b.arrivals),
        );
    }
    differ("think time", think(a), think(b));
    let (ha, hb) = (&a.http, &b.http);
    differ("protocol", protocol(a), protocol(b));
    differ(
        "keep-alive",
        on_off(ha.keepalive).into(),
        on_off(hb.keepalive).into(),
    );
    differ("proxy", proxy(a), proxy(b));
    differ(
        "--follow",
        format!("{} {}", ha.follow, on_off(ha.follow_any_host)),
        format!("{} {}", hb.follow, on_off(hb.follow_any_host)),
    );
    differ(
        "--cookies",
        on_off(ha.session.cookies).into(),
        on_off(hb.session.cookies).into(),
    );
    differ(
        "--login",
        ha.session
            .login
            .as_ref()
            .map_or("none".into(), |t| format!("{} {}", t.method, t.url)),
        hb.session
            .login
            .as_ref()
            .map_or("none".into(), |t| format!("{} {}", t.method, t.url)),
    );
    out
}

fn target_key(t: &pelt_core::Target) -> (&str, String, &str, &[u8], u32) {
    (
        &t.method,
        format!("{:?}", t.url.scheme),
        &t.url.path_and_query,
        &t.body,
        t.weight,
    )
}

/// Where a run's requests go: its targets' hosts and ports, and any
/// `--connect-to` or `--unix-socket`.
fn servers_of(c: &RunConfig) -> String {
    let mut hosts: Vec<String> = c
        .targets
        .iter()
        .map(|t| format!("{}:{}", t.url.host, t.url.port))
        .collect();
    hosts.dedup();
    let mut s = hosts.join(" ");
    for ct in &c.http.connect_to {
        s.push_str(&format!(
            " (connect to {}:{})",
            ct.connect_host.as_deref().unwrap_or("*"),
            ct.connect_port.map_or("*".into(), |p| p.to_string())
        ));
    }
    if let Some(u) = &c.http.unix_socket {
        s.push_str(&format!(" (socket {u})"));
    }
    s
}

/// How the runs' servers differ, when they do: not a mismatch (see the
/// module docs), but worth a line in the report.
pub fn servers(a: &RunConfig, b: &RunConfig) -> Option<Difference> {
    let (x, y) = (servers_of(a), servers_of(b));
    (x != y).then_some(Difference {
        what: "server".into(),
        a: x,
        b: y,
    })
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// A body as a reader can tell two apart: its length and a hash.
fn body(b: &[u8]) -> String {
    if b.is_empty() {
        return "none".into();
    }
    // FNV-1a: stable across builds (std's hasher is not), plenty to tell
    // two bodies apart in a message.
    let h = b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{} bytes (#{:08x})", b.len(), h as u32)
}

fn think(c: &RunConfig) -> String {
    c.think
        .map_or("none".into(), |t| format!("{:?}..{:?}", t.min, t.max))
}

fn protocol(c: &RunConfig) -> String {
    if c.http.multiplexed() {
        format!("{}, {} streams", c.http.protocol(), c.http.streams)
    } else {
        "HTTP/1.1".into()
    }
}

fn proxy(c: &RunConfig) -> String {
    let p = &c.http.proxy;
    let one = |x: &Option<pelt_core::Proxy>| {
        x.as_ref()
            .map_or("none".into(), |p| format!("{}:{}", p.host, p.port))
    };
    if p.is_off() {
        "none".into()
    } else {
        format!("http {}, https {}", one(&p.http), one(&p.https))
    }
}

/// Why a run is not complete, if it is not: stopped by Ctrl-C, or its
/// results file has no footer (the process was killed).
pub fn incomplete(run: &RunSummary) -> Option<&'static str> {
    if run.interrupted {
        Some("interrupted")
    } else if !run.complete {
        Some("incomplete (no footer: the run was killed)")
    } else {
        None
    }
}

/// A run that does not match the reference, with how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// The run, as the caller names it (a file, `#12`).
    pub run: String,
    /// How it differs from the reference run, or why it is not complete.
    pub differences: Vec<Difference>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (", self.run)?;
        for (i, d) in self.differences.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str(")")
    }
}

/// Each of `runs` (named) against `reference` (named `reference_name`):
/// those whose work differs, and those not complete. Empty when all are
/// alike and complete.
pub fn mismatches<'a>(
    reference: &RunConfig,
    runs: impl IntoIterator<Item = (String, &'a RunSummary)>,
) -> Vec<Mismatch> {
    runs.into_iter()
        .filter_map(|(name, run)| {
            let mut differences = differences(reference, &run.config);
            if let Some(why) = incomplete(run) {
                differences.push(Difference {
                    what: "completeness".into(),
                    a: "complete".into(),
                    b: why.into(),
                });
            }
            (!differences.is_empty()).then_some(Mismatch {
                run: name,
                differences,
            })
        })
        .collect()
}

/// The one-line refusal for `mismatches` (at most three named), with
/// `allow` as the way to allow them (a flag, or a library's option).
pub fn refusal(reference: &str, mismatches: &[Mismatch], allow: &str) -> String {
    let shown: Vec<String> = mismatches.iter().take(3).map(|m| m.to_string()).collect();
    let more = mismatches.len().saturating_sub(3);
    format!(
        "the runs do not measure the same work as {reference}: {}{}; compare like with like (same targets, \
         load model and level, protocol, proxy, complete runs), or pass {allow} to compare them anyway",
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pelt_core::{Target, Url};

    fn config(url: &str, load: Load) -> RunConfig {
        RunConfig::new(
            vec![Target::get(Url::parse(url).unwrap())],
            load,
            pelt_core::Stop::default(),
        )
    }

    #[test]
    fn alike_runs_have_no_difference() {
        let a = config("http://127.0.0.1:8080/", Load::closed(10));
        let mut b = a.clone();
        // Duration, threads and timeouts do not make another experiment.
        b.threads += 1;
        b.http.timeout *= 2;
        assert_eq!(differences(&a, &b), vec![]);
    }

    #[test]
    fn the_issue_s_mixed_baseline_is_told_apart() {
        let closed = config("http://127.0.0.1:8080/", Load::closed(10));
        let rate = config("http://127.0.0.1:8080/", Load::rate_of(1000.0, 10));
        let d = differences(&closed, &rate);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            d[0].to_string(),
            "load: closed loop, 10 connections vs rate 1000/s"
        );
        let other = config("http://127.0.0.1:8080/other", Load::closed(10));
        assert_eq!(
            differences(&closed, &other)[0].to_string(),
            "URL: http://127.0.0.1:8080/ vs http://127.0.0.1:8080/other"
        );
        // Another server doing the same work is what a comparison is for.
        let elsewhere = config("http://127.0.0.1:8081/", Load::closed(10));
        assert_eq!(differences(&closed, &elsewhere), vec![]);
        assert_eq!(
            servers(&closed, &elsewhere).unwrap().to_string(),
            "server: 127.0.0.1:8080 vs 127.0.0.1:8081"
        );
        // Six targets whose first matches are not one target.
        let mut six = closed.clone();
        for i in 0..5 {
            six.targets.push(Target::get(
                Url::parse(&format!("http://127.0.0.1:8080/{i}")).unwrap(),
            ));
        }
        assert_eq!(differences(&closed, &six)[0].to_string(), "targets: 1 vs 6");
        let mut proxied = closed.clone();
        proxied.http.proxy.http = Some(pelt_core::Proxy {
            host: "127.0.0.1".into(),
            port: 3128,
            authorization: None,
            authenticated: false,
        });
        assert_eq!(
            differences(&closed, &proxied)[0].to_string(),
            "proxy: none vs http 127.0.0.1:3128, https none"
        );
        let mut h2 = closed.clone();
        h2.http.http2 = true;
        assert_eq!(differences(&closed, &h2)[0].what, "protocol");
        // HTTP/2 against HTTP/3 at the same streams: unlike too.
        let mut h3 = h2.clone();
        (h3.http.http2, h3.http.http3) = (false, true);
        assert_eq!(differences(&h2, &h3)[0].what, "protocol");
        let mut post = closed.clone();
        post.targets[0].method = "POST".into();
        post.targets[0].body = b"{}".to_vec();
        let d = differences(&closed, &post);
        assert_eq!(
            d.iter().map(|d| d.what.as_str()).collect::<Vec<_>>(),
            ["method", "body"]
        );
        let other_rate = config("http://127.0.0.1:8080/", Load::rate_of(500.0, 10));
        assert_eq!(
            differences(&rate, &other_rate)[0].to_string(),
            "load: rate 1000/s vs rate 500/s"
        );
    }
}
