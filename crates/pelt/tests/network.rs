//! The network, not only the CPU: a run over a lossy path is flagged with
//! the kernel's own count of retransmitted segments (TCP_INFO), and the
//! same run without loss is not. The loss is made in a network namespace
//! the test creates (loopback only inside it): nftables drops 5 % of TCP
//! packets (tc's netem is not in every kernel; this one lacks it). HTTP/3
//! likewise, with 5 % of UDP packets dropped and QUIC's own count of the
//! packets it lost (quinn's statistics).

use pelt_testkit::pelt::{isolate, json, served_url, warned};
use std::process::{Child, Command, Output, Stdio};

/// A network namespace, deleted (with what runs in it) on drop.
struct Namespace {
    name: String,
    server: Option<Child>,
}

impl Namespace {
    /// A namespace with loopback up, dropping `loss_in_20` of every 20 TCP
    /// packets sent in it. `Err` says why one cannot be made here.
    fn new(tag: &str, loss_in_20: u32) -> Result<Namespace, String> {
        Namespace::with_loss(tag, loss_in_20, "tcp")
    }

    /// Like [`Namespace::new`], dropping packets of `l4proto` (`tcp`,
    /// `udp`).
    fn with_loss(tag: &str, loss_in_20: u32, l4proto: &str) -> Result<Namespace, String> {
        let name = format!("pelt-test-{}-{tag}", std::process::id());
        let ip = |args: &[&str]| -> Result<(), String> {
            let out = Command::new("ip")
                .args(args)
                .output()
                .map_err(|e| format!("ip: {e}"))?;
            out.status.success().then_some(()).ok_or_else(|| {
                format!(
                    "ip {}: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                )
            })
        };
        ip(&["netns", "add", &name])?;
        let ns = Namespace { name, server: None };
        ns.exec_ok(&["ip", "link", "set", "lo", "up"])?;
        if loss_in_20 > 0 {
            ns.exec_ok(&["nft", "add", "table", "inet", "loss"])?;
            ns.exec_ok(&[
                "nft",
                "add",
                "chain",
                "inet",
                "loss",
                "out",
                "{ type filter hook output priority 0; }",
            ])?;
            ns.exec_ok(&[
                "nft",
                "add",
                "rule",
                "inet",
                "loss",
                "out",
                "meta",
                "l4proto",
                l4proto,
                "numgen",
                "random",
                "mod",
                "20",
                "<",
                &loss_in_20.to_string(),
                "drop",
            ])?;
        }
        Ok(ns)
    }

    fn exec(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name]).args(args);
        c
    }

    fn exec_ok(&self, args: &[&str]) -> Result<(), String> {
        let out = self
            .exec(args)
            .output()
            .map_err(|e| format!("{}: {e}", args[0]))?;
        out.status.success().then_some(()).ok_or_else(|| {
            format!(
                "{}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })
    }

    /// Starts `pelt serve` (one thread) inside; returns its URL.
    fn serve(&mut self) -> String {
        self.serve_with(&[])
    }

    /// Starts `pelt serve -p 0 -t 1 EXTRA` inside; returns its URL.
    fn serve_with(&mut self, extra: &[&str]) -> String {
        let mut child = self
            .exec(&[&[pelt_bin().as_str(), "serve", "-p", "0", "-t", "1"], extra].concat())
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let url = served_url(&mut child);
        self.server = Some(child);
        url
    }

    /// `pelt run ARGS --format json` inside, bounded.
    fn run(&self, args: &[&str]) -> Output {
        let mut run = self.exec(&[&pelt_bin(), "run"]);
        isolate(&mut run);
        let mut c = assert_cmd::Command::from_std(run);
        c.args(args)
            .args(["--format", "json"])
            .timeout(std::time::Duration::from_secs(60));
        c.output().unwrap()
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        if let Some(mut child) = self.server.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

fn pelt_bin() -> String {
    pelt_testkit::pelt::bin().display().to_string()
}

#[test]
fn a_lossy_path_is_flagged_and_a_clean_one_is_not() {
    let _one = pelt_testkit::pelt::exclusive();
    // Namespaces need root and iproute2 (scripts/test installs iproute2
    // and nftables; CI runs as root).
    let (mut lossy, mut clean) = match (Namespace::new("lossy", 1), Namespace::new("clean", 0)) {
        (Ok(l), Ok(c)) => (l, c),
        // Never a silent skip: without namespaces the test cannot say
        // anything, so it fails and says what is missing.
        (Err(e), _) | (_, Err(e)) => panic!(
            "cannot make a network namespace (needs root, iproute2 and nftables; \
             scripts/test installs them): {e}"
        ),
    };
    let args = |url: &str| -> Vec<String> {
        [
            &format!("{url}?size=4k"),
            "--rate",
            "500",
            "-d",
            "3s",
            "-c",
            "20",
            "--strict",
        ]
        .map(String::from)
        .to_vec()
    };
    let url = lossy.serve();
    let a = args(&url);
    let out = lossy.run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let v = json(&out);
    let (sent, again) = (
        v["connections"]["tcp_segments_sent"].as_u64().unwrap(),
        v["connections"]["tcp_retransmitted"].as_u64().unwrap(),
    );
    assert!(sent > 1_000, "segments sent: {sent}");
    assert!(
        again as f64 > sent as f64 * 0.005,
        "{again} of {sent} retransmitted"
    );
    assert!(warned(&v, "retransmissions"), "{}", v["warnings"]);
    // The network may have set the numbers: --strict fails the run.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--strict") && stderr.contains("retransmitted"),
        "{stderr}"
    );

    let url = clean.serve();
    let a = args(&url);
    let out = clean.run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let v = json(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(v["connections"]["tcp_segments_sent"].as_u64().unwrap() > 1_000);
    assert_eq!(v["connections"]["tcp_retransmitted"], 0);
    assert!(!warned(&v, "retransmissions"), "{}", v["warnings"]);
}

#[test]
fn quic_loss_is_flagged_and_counts_stay_exact() {
    let _one = pelt_testkit::pelt::exclusive();
    let (mut lossy, mut clean) = match (
        Namespace::with_loss("udp-lossy", 1, "udp"),
        Namespace::with_loss("udp-clean", 0, "udp"),
    ) {
        (Ok(l), Ok(c)) => (l, c),
        (Err(e), _) | (_, Err(e)) => panic!(
            "cannot make a network namespace (needs root, iproute2 and nftables; \
             scripts/test installs them): {e}"
        ),
    };
    let args = |url: &str| -> Vec<String> {
        let url = url.replace("http://", "https://");
        [
            &format!("{url}?size=4k"),
            "--http3",
            "--insecure",
            "-n",
            "2000",
            "-c",
            "4",
            "--streams",
            "4",
            "--strict",
        ]
        .map(String::from)
        .to_vec()
    };
    // 5 % of UDP packets dropped, both ways: QUIC recovers every request
    // (counts exact), says how many packets it lost, and the run is
    // flagged; --strict fails it.
    let url = lossy.serve_with(&["--http3"]);
    let a = args(&url);
    let out = lossy.run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let v = json(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(v["requests"]["total"], 2000, "{stderr}");
    assert_eq!(v["requests"]["successes"], 2000, "{}", v["error_examples"]);
    assert_eq!(v["bytes"]["body_in"], 2000 * 4096);
    let (sent, lost) = (
        v["connections"]["quic_packets_sent"].as_u64().unwrap(),
        v["connections"]["quic_packets_lost"].as_u64().unwrap(),
    );
    assert!(sent > 1_000, "packets sent: {sent}");
    assert!(lost as f64 > sent as f64 * 0.005, "{lost} of {sent} lost");
    assert_eq!(v["connections"]["tcp_retransmitted"], 0);
    assert!(warned(&v, "retransmissions"), "{}", v["warnings"]);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--strict") && stderr.contains("QUIC lost"),
        "{stderr}"
    );

    let url = clean.serve_with(&["--http3"]);
    let a = args(&url);
    let out = clean.run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let v = json(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(v["requests"]["successes"], 2000);
    assert!(v["connections"]["quic_packets_sent"].as_u64().unwrap() > 1_000);
    assert_eq!(v["connections"]["quic_packets_lost"], 0);
    assert!(!warned(&v, "retransmissions"), "{}", v["warnings"]);
}
