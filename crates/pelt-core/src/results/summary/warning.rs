//! What a run's report warns about, with what to do.

use super::*;

/// Something about the run the user should know, with what to do about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// The achieved send rate fell short of the offered rate.
    RateShortfall {
        /// Requests per second the schedule offered.
        offered: f64,
        /// Requests per second sent.
        achieved: f64,
    },
    /// Requests waited in the client before being sent.
    SendLag {
        /// 99th percentile send lag, nanoseconds.
        p99_ns: u64,
        /// The connection pool's size.
        connections: u32,
        /// When most requests opened a connection of their own (no
        /// keep-alive, or a server closing each): that connect's p99,
        /// nanoseconds. The lag then went to connecting (or to a short
        /// CPU), not to waiting for a free connection (issue 35 §4: "all
        /// 100 connections were busy" with about 5 in flight).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        connect_p99_ns: Option<u64>,
    },
    /// Responses waited in their sockets before pelt read them: the
    /// client was short of CPU. Their times are the kernel's, so no figure
    /// is wrong, but a client this busy also sends late.
    ReadLag {
        /// Mean wait from a response's arrival to its read, nanoseconds.
        mean_ns: u64,
        /// The longest such wait, nanoseconds.
        max_ns: u64,
    },
    /// Connections failed for want of a resource on pelt's own machine,
    /// not because of the server.
    ClientResources {
        /// Which resource ran out.
        resource: LocalResource,
        /// Connections that failed that way among the examples kept.
        example: String,
    },
    /// The kernel retransmitted a share of the TCP segments pelt's
    /// connections sent (HTTP/3: QUIC declared a share of its packets
    /// lost, and sent their data again): packets are being lost between
    /// pelt and the server, and latency includes retransmission timeouts.
    Retransmissions {
        /// Segments sent again (QUIC: packets lost).
        retransmitted: u64,
        /// Segments sent (QUIC: packets sent).
        segments: u64,
        /// Counted by QUIC (HTTP/3), not by the kernel's TCP.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        quic: bool,
    },
    /// Most streamed responses' events arrived in one burst after a long
    /// wait (see [`crate::stream`]): something between pelt and the
    /// server (a proxy's buffering, a CDN, a compressing middlebox) held
    /// the stream back, so time to first event and gaps describe it, not
    /// the server.
    BufferedStream {
        /// Streams whose events came in one burst.
        bursts: u64,
        /// Complete streams of three events or more.
        streams: u64,
    },
    /// At its busiest second the run moved most of what the network
    /// interface to the server can carry.
    LinkSaturated {
        /// The interface (`eth0`).
        interface: String,
        /// Its speed, megabits per second, as the system reports it.
        speed_mbps: u64,
        /// Bytes in and out in the busiest second.
        peak_bytes_per_s: u64,
    },
    /// Requests with a method that is not idempotent failed because the
    /// server closed the reused connection they went out on without a
    /// response byte (a keep-alive race pelt does not retry for them).
    KeepAliveRace {
        /// How many.
        lost: u64,
    },
    /// Requests were still pending when the run ended.
    Unfinished {
        /// How many.
        count: u64,
    },
    /// A large share of requests failed. (Results files before pelt.run/5
    /// call it `errors`.)
    #[serde(alias = "errors")]
    Failed {
        /// The share that failed, 0 to 1.
        ratio: f64,
        /// The share that failed without a timed response (a refused
        /// connection, a reset): left out of the latency figures. Timeouts,
        /// unfinished requests and length mismatches are timed.
        #[serde(default)]
        untimed: f64,
        /// The share that failed only ab's length check (a response of
        /// another length than the first for its target).
        #[serde(default)]
        length: f64,
        /// The most common failure kind's name (`status_5xx`, `connect`,
        /// ...; see [`crate::failure`]) and its share of the requests.
        #[serde(default)]
        top: Option<(String, f64)>,
    },
    /// Most responses were redirects and `--follow` is off: the run timed
    /// the redirects (often to a login page), not the pages.
    Redirects {
        /// The share of requests answered with a 3xx status.
        share: f64,
        /// The most common redirect status.
        status: u16,
    },
    /// The run was interrupted (Ctrl-C) before its stop condition.
    Interrupted,
    /// A signal other than Ctrl-C's (SIGTERM, SIGHUP) stopped the run
    /// before its stop condition: a CI job cancelled, a pod stopped, a
    /// batch job's time limit.
    Terminated {
        /// Its name, like `SIGTERM`.
        signal: String,
    },
    /// `--scenario`: a `unique` feed ran out; no flow started after it,
    /// and the run ended, complete, when the flows under way did.
    FeedRanOut {
        /// The feed's file name.
        feed: String,
        /// Rows used (with `--shard`, this shard's).
        rows: u64,
        /// When: seconds from the start of measurement.
        at_s: f64,
    },
    /// An `--abort-on` rule stopped the run.
    Aborted {
        /// The rule as written.
        rule: String,
        /// When: seconds from the start of measurement.
        at_s: f64,
    },
    /// Writing the per-request log (`--log-requests`) failed part-way.
    RequestLog {
        /// What the operating system said.
        error: String,
    },
    /// The results file has no footer: the run was killed; the figures
    /// cover its complete seconds.
    Incomplete,
    /// Several shards (`--shard`) merged into one run: which, and how far
    /// apart they started.
    Sharded {
        /// The run id they share.
        run_id: String,
        /// Shards the run has.
        shards: u32,
        /// Shards merged.
        merged: u32,
        /// Latest start minus earliest, against `--start-at`, nanoseconds.
        start_spread_ns: u64,
        /// Whether the run had a `--start-at`.
        start_at: bool,
    },
    /// `--allow-partial`: shards are missing from the merge.
    PartialMerge {
        /// The missing shards' indexes.
        missing: Vec<u32>,
        /// Shards the run has.
        shards: u32,
    },
    /// A whole run started measuring this late after `--start-at`; it
    /// kept its schedule and sent the requests it missed at once.
    LateStart {
        /// How late, nanoseconds.
        late_ns: u64,
    },
    /// A shard came up after `--start-at`.
    LateShard {
        /// Which.
        shard: crate::shard::Shard,
        /// How late, nanoseconds.
        late_ns: u64,
    },
    /// A shard's busiest worker thread wanted a CPU nearly all its run.
    ShardClientBusy {
        /// Which.
        shard: crate::shard::Shard,
        /// The share of the run it wanted a CPU, 0 to 1.
        demand: f64,
    },
    /// Latency moved while the run ran: a clear and large monotone trend
    /// in the per-second p50 (Mann-Kendall; see
    /// [`super::stationarity`]). The run's percentiles mix conditions.
    Drift {
        /// Median p50 of the first fifth of the seconds, nanoseconds.
        from_ns: u64,
        /// Median p50 of the last fifth, nanoseconds.
        to_ns: u64,
        /// Mann-Kendall's Z.
        z: f64,
        /// Seconds tested.
        seconds: usize,
    },
    /// The run's latency stepped to another level partway through
    /// (Pettitt's change-point test on the per-second p50): its
    /// percentiles mix two conditions.
    Step {
        /// Seconds into the run (of those tested) where it stepped.
        at_s: u64,
        /// Median p50 of the seconds before, nanoseconds.
        before_ns: u64,
        /// Median p50 of the seconds after, nanoseconds.
        after_ns: u64,
        /// The test's p-value.
        p: f64,
    },
    /// The run's first seconds were slower (or faster) than the rest:
    /// MSER-5 suggests a warm-up for the next run. Nothing was dropped.
    Warmup {
        /// The suggested `--warmup`, seconds.
        seconds: u64,
        /// Median p50 of those seconds, nanoseconds.
        start_ns: u64,
        /// Median p50 of the rest, nanoseconds.
        rest_ns: u64,
    },
    /// Rate runs: consecutive response times were strongly correlated
    /// (lag-1, on a log scale; see [`crate::independence`]): the run's
    /// requests are not independent trials, so its percentile intervals
    /// are too narrow.
    Autocorrelation {
        /// The lag-1 correlation, -1 to 1.
        r: f64,
        /// Consecutive pairs it is over.
        pairs: u64,
    },
    /// Rate runs: the actual send instants strayed from the planned ones
    /// by more than Kolmogorov–Smirnov allows at 5 % (see
    /// [`crate::independence`]): the server saw another arrival pattern.
    OffSchedule {
        /// KS's `D`: the largest backlog as a share of the sends.
        d: f64,
        /// Its critical value at 5 %.
        critical: f64,
        /// That backlog in requests: behind the plan when positive, ahead
        /// of it when negative.
        behind: i64,
        /// When, in seconds from the first measured request.
        at_s: f64,
        /// Requests sent.
        sent: u64,
    },
    /// `--until`: whether the percentile's interval got as narrow as
    /// asked before `--max-duration`.
    Until {
        /// The percentile, e.g. 99.0.
        percentile: f64,
        /// The width asked for, relative (0.02 = ±2 %).
        target: f64,
        /// The narrowest width reached, relative; None when never bounded.
        achieved: Option<f64>,
        /// Whether `target` was reached.
        reached: bool,
        /// When the run stopped, seconds of measurement.
        after_s: f64,
    },
    /// A worker thread of pelt's wanted a CPU nearly all the run, or
    /// waited for one much of it (see [`ClientBound`]; the text says
    /// which): the client may have set the pace.
    ClientBusy {
        /// Share of the run it ran on a CPU.
        on_cpu: f64,
        /// Share of the run it waited for a CPU.
        waiting: f64,
        /// Worker threads in the run.
        threads: usize,
    },
    /// The engine that ran was built without optimisations (a debug
    /// build, [`crate::Environment::debug_build`]): its own overhead is
    /// in every figure, often doubling the latency of a fast server.
    DebugBuild,
}

/// A resource of pelt's machine that connections can run out of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LocalResource {
    /// EMFILE: the process's file descriptor limit.
    FileDescriptors,
    /// ENFILE: the system's file table.
    SystemFiles,
    /// EADDRNOTAVAIL: local (ephemeral) ports for new connections.
    LocalPorts,
}

impl LocalResource {
    /// The resource a connect failure's message says ran out, if any (by
    /// the operating system's error number, as io::Error prints it).
    pub fn of(message: &str) -> Option<LocalResource> {
        if message.contains("(os error 24)") {
            Some(LocalResource::FileDescriptors)
        } else if message.contains("(os error 23)") {
            Some(LocalResource::SystemFiles)
        } else if message.contains("(os error 99)") {
            Some(LocalResource::LocalPorts)
        } else {
            None
        }
    }

    fn advice(self) -> &'static str {
        match self {
            LocalResource::FileDescriptors => {
                "pelt ran out of file descriptors (EMFILE): raise the limit (ulimit -n 65536) or use fewer connections (-c)"
            }
            LocalResource::SystemFiles => {
                "the system ran out of open files (ENFILE): raise fs.file-max, or use fewer connections (-c)"
            }
            LocalResource::LocalPorts => {
                "pelt ran out of local ports for new connections (EADDRNOTAVAIL): keep connections alive (drop --no-keepalive), \
                 use fewer, widen net.ipv4.ip_local_port_range, or spread connections over more local addresses with --source-addresses (like 127.0.0.2-127.0.0.9 to a loopback target)"
            }
        }
    }
}

impl Warning {
    /// Whether it says the client (pelt, its machine) may have limited
    /// the run, rather than the server or the run's set-up: what
    /// `--strict` fails on.
    pub fn is_client_side(&self) -> bool {
        matches!(
            self,
            Warning::ClientBusy { .. }
                | Warning::ShardClientBusy { .. }
                | Warning::ReadLag { .. }
                | Warning::ClientResources { .. }
                | Warning::Retransmissions { .. }
                | Warning::LinkSaturated { .. }
        )
    }
}

/// Retransmitted share of segments above which [`Warning::Retransmissions`]
/// is given: a healthy path loses well under 0.1 %.
pub const RETRANSMIT_WARN: f64 = 0.005;
/// Fewest retransmissions that can give it: a handful on a short run is
/// noise.
pub const RETRANSMIT_MIN: u64 = 10;
/// Share of an interface's speed that counts as saturated.
pub const LINK_WARN: f64 = 0.8;

/// Whether a run that moved `peak_bytes_per_s` at its busiest second
/// saturated a link of `speed_mbps` (megabits per second).
pub fn link_saturated(peak_bytes_per_s: u64, speed_mbps: u64) -> bool {
    speed_mbps > 0 && peak_bytes_per_s as f64 * 8.0 >= speed_mbps as f64 * 1e6 * LINK_WARN
}

/// Mean read lag above which [`Warning::ReadLag`] is given.
pub(super) const READ_LAG_WARN_NS: u64 = 2_000_000;

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::RateShortfall { offered, achieved } => write!(
                f,
                "sent {achieved:.1} req/s of the {offered:.1} req/s asked for: the client could not keep up \
                 (all connections busy or CPU short); raise -c or --threads, or check the client's CPU"
            ),
            Warning::SendLag {
                p99_ns,
                connect_p99_ns: Some(connect),
                ..
            } => write!(
                f,
                "requests went out late (send lag p99 {}): most opened a connection of their own first \
                 (connect p99 {}), or the client was short of CPU; they did not wait for a free \
                 connection. Response time includes this wait, as a user's would; keep-alive leaves \
                 the connects out of it, and a core of pelt's own the CPU",
                human_ns(*p99_ns),
                human_ns(*connect)
            ),
            Warning::SendLag {
                p99_ns,
                connections,
                connect_p99_ns: None,
            } => write!(
                f,
                "requests waited in the client before sending (send lag p99 {}): all {connections} connections \
                 were busy or the client was short of CPU. Response time includes this wait, as a user's \
                 would; if the server was not slow at the time, raise -c",
                human_ns(*p99_ns)
            ),
            Warning::ReadLag { mean_ns, max_ns } => write!(
                f,
                "responses waited in their sockets {} on average (at most {}) before pelt read them: the \
                 client is short of CPU. Service and response times are the kernel's arrival times, so \
                 they are unaffected, but check send lag, and give pelt a core of its own",
                human_ns(*mean_ns),
                human_ns(*max_ns)
            ),
            Warning::ClientResources { resource, example } => write!(
                f,
                "connections failed on pelt's side, not the server's: {}; as in: {example}",
                resource.advice()
            ),
            Warning::Retransmissions {
                retransmitted,
                segments,
                quic: true,
            } => write!(
                f,
                "QUIC lost {retransmitted} of the {segments} packets pelt's connections sent ({:.2}%) and sent their data again: \
                 packets are being lost between pelt and the server (a lossy or saturated link, a full queue, a UDP buffer), \
                 and latency includes the recovery; check the path (ip -s link, nstat Udp), or load from closer to the server",
                *retransmitted as f64 * 100.0 / (*segments).max(1) as f64
            ),
            Warning::Retransmissions {
                retransmitted,
                segments,
                quic: false,
            } => write!(
                f,
                "TCP retransmitted {retransmitted} of the {segments} segments pelt's connections sent ({:.2}%): \
                 packets are being lost between pelt and the server (a lossy or saturated link, a full queue), \
                 and latency includes the retransmission timeouts; check the path (ip -s link, ss -ti, \
                 nstat TcpRetransSegs), or load from closer to the server",
                *retransmitted as f64 * 100.0 / (*segments).max(1) as f64
            ),
            Warning::LinkSaturated {
                interface,
                speed_mbps,
                peak_bytes_per_s,
            } => write!(
                f,
                "the run moved {:.1} MB/s at its busiest second, {:.0}% of {interface}'s {speed_mbps} Mb/s: \
                 the network may have set the pace, not the server; load from closer to the server or over a faster link",
                *peak_bytes_per_s as f64 / 1e6,
                *peak_bytes_per_s as f64 * 8.0 * 100.0 / (*speed_mbps as f64 * 1e6)
            ),
            Warning::BufferedStream { bursts, streams } => write!(
                f,
                "events arrived in one burst: something between buffers the stream ({bursts} of \
                 {streams} streams had every event within {} after a long wait). Time to first event \
                 and the gaps describe the buffer, not the server; turn buffering off on the way \
                 (nginx: proxy_buffering off, or the response header X-Accel-Buffering: no)",
                human_ns(crate::stream::BURST_SPAN_NS)
            ),
            Warning::KeepAliveRace { lost } => write!(
                f,
                "{lost} requests failed because the server closed a reused connection as they went out \
                 (it answers without 'Connection: close' and then closes, as tinyproxy does); their method \
                 is not idempotent, so pelt did not send them again: run with --no-keepalive"
            ),
            Warning::Unfinished { count } => write!(
                f,
                "{count} requests were still pending when the run ended; they count as 'unfinished' errors \
                 and in response time up to the end"
            ),
            Warning::Failed {
                ratio,
                untimed,
                length,
                top,
            } => {
                if *ratio > 0.5 {
                    write!(
                        f,
                        "most requests failed ({:.1}%): the figures describe a broken service or run, \
                         not a slow one",
                        ratio * 100.0
                    )?;
                } else {
                    write!(f, "{:.1}% of requests failed", ratio * 100.0)?;
                }
                if let Some((kind, share)) = top {
                    write!(f, ", most of them {kind} ({:.1}% of requests)", share * 100.0)?;
                }
                if *untimed > 0.0 {
                    write!(
                        f,
                        "; the {:.1}% that got no response are left out of the latency figures",
                        untimed * 100.0
                    )?;
                } else {
                    write!(f, "; each was timed, so the latency figures include them")?;
                }
                write!(f, ". The Failed lines break them down by kind")?;
                if *length > 0.0 {
                    write!(
                        f,
                        ". {:.1}% only differed in length from the first response (ab's check): \
                         for pages whose length varies, turn the check off with -l \
                         (--accept-variable-length)",
                        length * 100.0
                    )?;
                }
                Ok(())
            }
            Warning::Redirects { share, status } => write!(
                f,
                "{:.1}% of requests were answered with a redirect ({status}) and --follow is off, so the \
                 figures time the redirects, not the pages (a login page?): add --follow, or log in \
                 (--login, -A)",
                share * 100.0
            ),
            // Ctrl-C for the CLI; a library's Canceller::cancel lands here
            // too, so the text does not claim a key was pressed.
            Warning::Interrupted => write!(
                f,
                "interrupted (Ctrl-C, or cancelled): the figures cover the run up to then"
            ),
            Warning::Terminated { signal } if signal == "SIGHUP" => write!(
                f,
                "stopped by SIGHUP (its terminal or session closed): the figures cover the run up to the \
                 hang-up"
            ),
            Warning::Terminated { signal } => write!(
                f,
                "stopped by {signal} (a cancelled job, a stopped pod or a time limit?): the figures cover \
                 the run up to the signal"
            ),
            Warning::Aborted { rule, at_s } => write!(
                f,
                "aborted after {at_s:.1}s by --abort-on '{rule}': the figures cover the run up to then"
            ),
            Warning::FeedRanOut { feed, rows, at_s } => write!(
                f,
                "feed {feed}: all {rows} rows used (pick = \"unique\"); no new flows started after {at_s:.1} s, \
                 and the run ended when the flows under way did: give more rows, or a shorter run"
            ),
            Warning::RequestLog { error } => write!(
                f,
                "the request log is incomplete: writing it failed ({error}); the figures here are complete. \
                 Free some disk space or log elsewhere"
            ),
            Warning::Incomplete => write!(
                f,
                "the run did not finish (it was killed): the figures cover its last complete second and before"
            ),
            Warning::Sharded {
                run_id,
                shards,
                merged,
                start_spread_ns,
                start_at,
            } => {
                write!(f, "merged {merged} of {shards} shards of run {run_id}")?;
                match start_at {
                    true => write!(
                        f,
                        "; their starts against --start-at differ by {:.1} ms (shards need synchronised clocks)",
                        *start_spread_ns as f64 / 1e6
                    ),
                    false => write!(
                        f,
                        "; without --start-at they started whenever each came up, so their seconds may not overlap"
                    ),
                }
            }
            Warning::PartialMerge { missing, shards } => write!(
                f,
                "PARTIAL RUN (--allow-partial): {} of {shards} shards missing ({}); the figures cover only the shards merged",
                missing.len(),
                missing.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
            ),
            Warning::LateStart { late_ns } => write!(
                f,
                "the run started {} after --start-at: it kept its schedule, so the requests due before \
                 it came up went out at once, counted in send lag and response time (give a start still \
                 to come, far enough ahead for pelt to start)",
                human_ns(*late_ns)
            ),
            Warning::LateShard { shard, late_ns } => write!(
                f,
                "shard {shard} started {} after --start-at: the requests it missed went out late, counted in send lag and response time",
                human_ns(*late_ns)
            ),
            Warning::Step {
                at_s,
                before_ns,
                after_ns,
                p,
            } => write!(
                f,
                "latency stepped from {} to {} about {at_s} s into the run (p50 per second; Pettitt's \
                 change-point test, p = {p:.3}): the run was two conditions, so its percentiles mix them; \
                 find the cause (a cache expiring, a neighbour starting, a failover) before comparing it",
                human_ns(*before_ns),
                human_ns(*after_ns)
            ),
            Warning::Drift {
                from_ns,
                to_ns,
                z,
                seconds,
            } => write!(
                f,
                "latency {} from {} to {} over the run (p50 per second, first fifth to last; Mann-Kendall \
                 z = {z:.1} over {seconds} s): the run was not one steady condition, so its percentiles mix \
                 several; find the cause (warm-up, a leak, a busy neighbour) before comparing it",
                if to_ns > from_ns { "climbed" } else { "fell" },
                human_ns(*from_ns),
                human_ns(*to_ns)
            ),
            Warning::Warmup {
                seconds,
                start_ns,
                rest_ns,
            } => write!(
                f,
                "the first {seconds} s had p50 {} against {} for the rest (MSER-5 truncation): these \
                 figures include them; for the next run, --warmup {seconds}s leaves them out",
                human_ns(*start_ns),
                human_ns(*rest_ns)
            ),
            Warning::Autocorrelation { r, pairs } => write!(
                f,
                "consecutive response times were correlated (lag-1 r = {r:.2} over {pairs} pairs): slow \
                 requests came in runs (a queue at the server, or a client that stalled), so the run holds \
                 fewer independent observations than requests and its percentile intervals are about {:.1}x \
                 too narrow; judge a change by several runs (pelt experiment), not by one run's intervals, \
                 and if the server queues, try a lower --rate",
                crate::independence::narrowing(*r)
            ),
            Warning::OffSchedule {
                d,
                critical,
                behind,
                at_s,
                sent,
            } => {
                let (how, advice) = if *behind >= 0 {
                    (
                        "behind",
                        "the client stalled or had no free connection (see send lag): raise -c or --threads, \
                         or give pelt a core of its own",
                    )
                } else {
                    ("ahead of", "a wide --send-window sent early: narrow it")
                };
                write!(
                    f,
                    "the sends strayed from the schedule: {:.1} s in, the client was {} requests {how} it \
                     (Kolmogorov-Smirnov D = {d:.4} over {sent} sends, above {critical:.4} at 5%), so the \
                     server saw another arrival pattern than the one planned; {advice}",
                    at_s,
                    behind.unsigned_abs()
                )
            }
            Warning::Until {
                percentile,
                target,
                achieved,
                reached,
                after_s,
            } => {
                let got = achieved.map_or_else(|| "unbounded".to_string(), |a| format!("±{:.1}%", a * 100.0));
                if *reached {
                    write!(
                        f,
                        "--until p{percentile} ±{:.1}%: reached after {after_s:.1} s (p{percentile} {got}); the run stopped there",
                        target * 100.0
                    )
                } else {
                    write!(
                        f,
                        "--until p{percentile} ±{:.1}%: not reached in {after_s:.1} s (narrowest p{percentile} {got}); \
                         a longer --max-duration, or a less extreme percentile, would get there",
                        target * 100.0
                    )
                }
            }
            Warning::ShardClientBusy { shard, demand } => write!(
                f,
                "shard {shard} was client-bound: its busiest worker thread wanted a CPU {:.0}% of its run; give that machine more cores or add shards",
                demand * 100.0
            ),
            Warning::DebugBuild => write!(
                f,
                "pelt's engine was built without optimisations (a debug build): its own overhead is in \
                 every figure and can double the latency of a fast server. Build with --release \
                 (cargo build --release, cargo run --release) before measuring"
            ),
            Warning::ClientBusy {
                on_cpu,
                waiting,
                threads,
            } => {
                let load = ThreadLoad {
                    on_cpu: *on_cpu,
                    waiting: *waiting,
                };
                match ClientBound::of(&load) {
                    Some(ClientBound::Starved) => write!(
                        f,
                        "pelt's busiest worker thread (of {threads}) waited for a CPU {:.0}% of the run \
                         (and ran on one {:.0}%): other work on its cores (the server, a build, another \
                         pelt) held it back, and its requests waited with it, so the client, not the \
                         server, may have set the pace. Keep other work off pelt's cores (taskset), \
                         or run it from another machine",
                        waiting * 100.0,
                        on_cpu * 100.0
                    ),
                    _ => write!(
                        f,
                        "pelt's busiest worker thread (of {threads}) wanted a CPU {:.0}% of the run ({:.0}% on one, \
                         {:.0}% waiting for one): the client, not the server, may have set the pace. Give pelt more \
                         --threads if cores are idle, keep other work (the server too) off its cores, or run it \
                         from another machine",
                        (on_cpu + waiting) * 100.0,
                        on_cpu * 100.0,
                        waiting * 100.0
                    ),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 27: running out of local ports points at the flag that
    /// spreads connections over more addresses.
    #[test]
    fn out_of_local_ports_names_source_addresses() {
        let kind = LocalResource::of("127.0.0.1:80: Cannot assign requested address (os error 99)");
        assert_eq!(kind, Some(LocalResource::LocalPorts));
        assert!(LocalResource::LocalPorts
            .advice()
            .contains("--source-addresses (like 127.0.0.2-127.0.0.9"));
    }
}
