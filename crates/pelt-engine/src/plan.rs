//! The run plan: everything workers need to know, fixed before the first
//! request and read-only after (hosts resolved, requests serialised, the
//! pacer, the clock's zero), and each worker's share of it.

use crate::conn::{
    for_origin, quic_client_config, resolve_origins, tls_connector, Origin, StampsOn,
};
use crate::error::EngineError;
use crate::h1::PreparedRequest;
use crate::pacer::{ConstantRate, Pacer, Piecewise, PoissonRate};
use crate::parts::PreparedParts;
use crate::session::jar::cookie_url;
use pelt_core::shard::owned;
use pelt_core::{Load, Nanos, RunConfig};
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long requests in flight may finish after sending stops (one
/// constant, kept in pelt-core so reports can explain the wait).
pub use pelt_core::summary::GRACE;
/// Workers start together this long after `Run::start`, so the schedule
/// does not begin while threads are still being created and (rate mode)
/// their first connections opened: a dozen connects to a loopback server
/// on one busy core took 3-8 ms, and a 5 ms delay left the first
/// requests of a 20,000 req/s run up to 4.5 ms late.
const START_DELAY: Duration = Duration::from_millis(20);
/// Which transport carries a run's requests: chosen here, from the
/// configuration, and matched in one place, `worker::senders`, which
/// starts each sender on its transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// HTTP/1.1: `transport::h1`.
    Http1,
    /// `--http2`: `transport::h2`.
    Http2,
    /// `--http3`: `transport::h3`.
    Http3,
    /// `ws://`, `wss://` targets: `transport::ws`.
    Ws,
    /// Tests only: `transport::echo`, which answers every request itself,
    /// to show that a transport plugs in with its one line.
    #[cfg(test)]
    Echo,
}

/// Marks a target whose first successful body length is not known yet.
pub(crate) const LENGTH_UNSET: u64 = u64::MAX;

/// `--source-addresses` split by family (IPv4, IPv6); refused when a TCP
/// origin has none of its family.
fn sources_by_family(
    all: &[std::net::IpAddr],
    origins: &[Origin],
) -> Result<[Vec<std::net::IpAddr>; 2], EngineError> {
    for &addr in all {
        // A foreign address would fail every connect as EADDRNOTAVAIL,
        // which reads as running out of ports: refuse it now instead.
        let socket = match addr {
            std::net::IpAddr::V4(_) => tokio::net::TcpSocket::new_v4(),
            std::net::IpAddr::V6(_) => tokio::net::TcpSocket::new_v6(),
        };
        if let Err(error) = socket.and_then(|s| s.bind(std::net::SocketAddr::new(addr, 0))) {
            return Err(EngineError::SourceUnusable { addr, error });
        }
    }
    let (v6, v4): (Vec<_>, Vec<_>) = all.iter().partition(|a| a.is_ipv6());
    if !all.is_empty() {
        for o in origins {
            if let crate::conn::Addr::Tcp(to) = o.addr {
                if [&v4, &v6][usize::from(to.is_ipv6())].is_empty() {
                    return Err(EngineError::SourceFamily { to });
                }
            }
        }
    }
    Ok([v4, v6])
}

/// Read-only facts every worker shares.
pub(crate) struct RunPlan {
    /// Time zero of the run; all `Nanos` are measured from here.
    pub epoch: Instant,
    /// Wall clock at `epoch`, so intervals align to wall-clock seconds.
    pub unix_ns_at_epoch: u64,
    /// With `--start-at`: how late this process came up, in nanoseconds
    /// (0 when on time). Its schedule is not moved: the slots it missed
    /// go out at once, their lateness measured as send lag.
    pub late_ns: u64,
    /// The part of the run this process sends (the whole run: 0/1).
    pub shard: pelt_core::Shard,
    /// Wall clock when the run was planned, in milliseconds since the Unix
    /// epoch (the environment's start time).
    pub started_unix_ms: u64,
    /// Worker threads.
    pub workers: usize,
    pub requests: Vec<PreparedRequest>,
    /// With `--http2` or `--http3`: the same requests as `http` parts
    /// (else empty); both protocols send them.
    pub http_parts: Vec<PreparedParts>,
    /// The transport that carries the requests.
    pub protocol: Protocol,
    /// HTTP/2 or HTTP/3 streams per connection; 0 for HTTP/1.1.
    pub streams: u32,
    /// Which target each request goes to.
    pub picker: pelt_core::TargetPicker,
    /// Closed loop: pause between a connection's requests.
    pub think: Option<pelt_core::ThinkTime>,
    /// Origin index of each target.
    pub target_origin: Vec<usize>,
    pub origins: Vec<Origin>,
    pub tls: Option<tokio_rustls::TlsConnector>,
    /// With `--http3`: the QUIC client configuration (TLS 1.3, ALPN h3).
    pub quic: Option<quinn::ClientConfig>,
    /// `None` for a closed loop.
    pub pacer: Option<Box<dyn Pacer>>,
    /// Closed loop with a `-c` schedule: connection `k` (numbered across
    /// workers) works only while the level is above `k`.
    pub connection_schedule: Option<pelt_core::Schedule>,
    /// Rate mode with `-n`: schedule slots in all (warm-up included).
    pub total_slots: Option<u64>,
    /// Requests intended before this are warm-up.
    pub measure_from: Nanos,
    /// No request starts at or after this.
    pub deadline: Option<Nanos>,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub keepalive: bool,
    /// How long in-flight requests may finish after sending stops.
    pub grace: Duration,
    /// Body length of the first successful response per target (ab's check).
    pub expected_len: Vec<AtomicU64>,
    /// `--connect-rate`: each worker opens at most one connection per
    /// interval (its share of the rate).
    pub connect_interval: Option<Nanos>,
    /// The targets as configured, for building redirected requests.
    pub targets: pelt_core::Targets,
    /// `--log-requests`: the file every worker appends its requests to.
    pub request_log: Option<std::sync::Arc<crate::request_log::SharedLog>>,
    pub http: pelt_core::HttpOptions,
    /// `--cookies` (or `--login`): each target's URL, as the jars match
    /// cookies against it.
    pub cookie_urls: Vec<url::Url>,
    /// `--login`: logins made (all before the epoch; the jars they filled
    /// are handed to each worker by `Run::start`).
    pub logins: u64,
    /// Whether HTTP/1.1 connections ask the kernel to stamp what they
    /// receive, so responses are timed at their arrival rather than when
    /// they are read (TCP and TLS on Linux; HTTP/2 frames share a
    /// connection, and Unix sockets have no stamps).
    pub stamp_reads: bool,
    /// With `stamp_reads`: the kernel's stamping kept on for the run, so
    /// that a connection per request does not switch it on and off (see
    /// [`StampsOn`]).
    pub _stamps_on: Option<StampsOn>,
    /// `--tx-stamps` (with `stamp_reads`): requests' departures stamped by
    /// the kernel too.
    pub stamp_sends: bool,
    /// Rate mode: the send window (see [`pelt_core::SendWindow`]); none
    /// (`Max(0)`, a wake-up for every request) whenever a response could
    /// go unstamped (a reader that batches its wake-ups would then add its
    /// lateness to the server's time).
    pub send_window: pelt_core::SendWindow,
    /// `--source-addresses`, by family (IPv4, IPv6): connections take
    /// them in turn (see [`RunPlan::source_for`]).
    pub sources: [Vec<std::net::IpAddr>; 2],
    /// The next connection's turn in `sources`, across workers.
    pub next_source: std::sync::atomic::AtomicUsize,
    /// Set by [`crate::Canceller::enough`]: a stop the caller's own
    /// condition asked for (`--until`), so the run ends complete, not
    /// interrupted.
    pub enough: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// `--scenario`: the compiled scenario the senders run as virtual
    /// users (`worker::flows`); targets are then its steps and flows.
    pub scenario: Option<std::sync::Arc<pelt_scenario::Scenario>>,
}

impl RunPlan {
    /// The local address the next connection to `origin` is bound to
    /// (`--source-addresses`, in turn), or `None` to let the system pick.
    pub fn source_for(&self, origin: &Origin) -> Option<std::net::IpAddr> {
        let crate::conn::Addr::Tcp(to) = origin.addr else {
            return None;
        };
        let list = &self.sources[usize::from(to.is_ipv6())];
        if list.is_empty() {
            return None;
        }
        // Once per connection, not per request.
        let turn = self
            .next_source
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(list[turn % list.len()])
    }

    /// Plans a run of `config` (already validated): resolves its hosts,
    /// serialises its requests, picks its pacer and sets its clock's zero
    /// a moment ahead, for the workers to start on together.
    pub fn new(config: &RunConfig) -> Result<RunPlan, EngineError> {
        let stop = config.effective_stop();
        let workers = config.effective_threads();

        let scenario = match &config.scenario {
            Some(source) => {
                let mut sc = pelt_scenario::Scenario::from_source(source)?;
                let shard = config.shard_or_whole();
                sc.for_shard(shard.index, shard.count);
                Some(std::sync::Arc::new(sc))
            }
            None => None,
        };
        let (origins, target_origin) = resolve_origins(config)?;
        // A redirect to another host may need TLS even if no target does.
        let tls =
            (origins.iter().any(|o| o.tls.is_some()) || config.http.follow_any_host).then(|| {
                tls_connector(
                    config.http.insecure,
                    config.http.http2,
                    !config.http.no_tls_resume,
                )
            });
        let requests = config
            .targets
            .iter()
            .zip(&target_origin)
            .map(|(t, &o)| {
                let mut r = PreparedRequest::new(t, config.http.keepalive);
                // --proxy: plain HTTP goes to the proxy in absolute form.
                r.bytes = for_origin(r.bytes, &t.url, &origins[o]);
                // Serialised with room to spare: 100,000 targets kept
                // 25 MB of it.
                r.bytes.shrink_to_fit();
                r
            })
            .collect();
        let quic = config.http.http3.then(|| {
            quic_client_config(
                config.http.insecure,
                config.http.zero_rtt,
                !config.http.no_tls_resume,
                !config.http.no_gso,
            )
        });
        // A scenario renders each step's request as it goes (its targets'
        // URLs hold templates): nothing to prepare.
        let http_parts = match config.http.multiplexed() && scenario.is_none() {
            true => config
                .targets
                .iter()
                .map(PreparedParts::new)
                .collect::<Result<Vec<_>, _>>()
                .map_err(EngineError::Request)?,
            false => Vec::new(),
        };
        let pacer: Option<Box<dyn Pacer>> = match &config.load {
            Load::Rate {
                schedule: Some(s), ..
            } => Some(Box::new(Piecewise::new(s, config.warmup))),
            Load::Rate { rate, .. } => match config.arrivals {
                pelt_core::Arrivals::Uniform => Some(Box::new(ConstantRate::new(*rate))),
                pelt_core::Arrivals::Poisson { seed } => {
                    Some(Box::new(PoissonRate::new(*rate, seed)))
                }
            },
            Load::Closed { .. } => None,
        };
        let connection_schedule = match &config.load {
            Load::Closed { schedule, .. } => schedule.clone(),
            Load::Rate { .. } => None,
        };
        let measure_from = config.warmup.as_nanos() as Nanos;
        let deadline = stop.duration.map(|d| measure_from + d.as_nanos() as Nanos);
        // Rate mode with -n: the schedule's warm-up slots plus n measured.
        let total_slots = match (&pacer, stop.requests) {
            (Some(p), Some(n)) => Some(p.count_before(measure_from) + n),
            _ => None,
        };

        let stamp_reads = cfg!(target_os = "linux")
            && !config.http.multiplexed()
            && origins
                .iter()
                .all(|o| matches!(o.addr, crate::conn::Addr::Tcp(_)));
        let now = Instant::now();
        let start_wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let (epoch, unix_ns_at_epoch, late_ns) =
            start_time(now, start_wall, config.start_at_unix_ns, config.warmup);
        // A start so late that the whole measurement is behind it would
        // send every slot of the run at once (a start years back: CPU
        // and memory growing with the lateness, issue 35) or measure
        // nothing: refused. A start late by less keeps the schedule.
        let end = match (deadline, &pacer, total_slots) {
            (Some(d), _, _) => Some(d),
            (None, Some(p), Some(n)) if n > 0 => Some(p.at(n - 1) + 1),
            _ => None,
        };
        if let (Some(at), Some(end)) = (config.start_at_unix_ns, end) {
            let length_ns = end.saturating_sub(measure_from);
            if late_ns > 0 && late_ns >= length_ns {
                return Err(EngineError::StartPassed {
                    start_at_unix_ns: at,
                    late_ns,
                    length_ns,
                });
            }
        }
        let sources = sources_by_family(&config.http.source_addresses, &origins)?;
        Ok(RunPlan {
            sources,
            next_source: Default::default(),
            epoch,
            enough: Default::default(),
            unix_ns_at_epoch,
            late_ns,
            shard: config.shard_or_whole(),
            started_unix_ms: start_wall.as_millis() as u64,
            workers,
            requests,
            http_parts,
            protocol: match (config.http.http3, config.http.http2) {
                _ if config.is_ws() => Protocol::Ws,
                (true, _) => Protocol::Http3,
                (false, true) => Protocol::Http2,
                (false, false) => Protocol::Http1,
            },
            streams: if config.http.multiplexed() {
                config.http.streams
            } else {
                0
            },
            picker: pelt_core::TargetPicker::new(config.order, &config.targets),
            think: config.think,
            target_origin,
            origins,
            tls,
            quic,
            pacer,
            connection_schedule,
            total_slots,
            measure_from,
            deadline,
            timeout: config.http.timeout,
            connect_timeout: config.http.connect_timeout,
            keepalive: config.http.keepalive,
            grace: GRACE.min(config.http.timeout),
            expected_len: config
                .targets
                .iter()
                .map(|_| AtomicU64::new(LENGTH_UNSET))
                .collect(),
            // Each worker paces its own share of --connect-rate.
            // --connect-rate is the whole run's: each shard's each
            // worker takes its share.
            connect_interval: config.http.connect_rate.map(|r| {
                (workers as f64 * f64::from(config.shard_or_whole().count) * 1e9 / r).max(1.0)
                    as Nanos
            }),
            targets: config.targets.clone(),
            request_log: None,
            http: config.http.clone(),
            // A scenario's users always keep a jar: its steps are the
            // first targets, in order.
            cookie_urls: match config.http.session.is_off() && scenario.is_none() {
                true => Vec::new(),
                false => config.targets.iter().map(|t| cookie_url(&t.url)).collect(),
            },
            logins: 0,
            stamp_reads,
            _stamps_on: stamp_reads.then(StampsOn::hold),
            stamp_sends: stamp_reads && config.http.tx_stamps,
            // A scenario's later step is sent when the previous response
            // is read: while the thread waits out a send window it reads
            // nothing, so the step would go out up to a window late (its
            // time counts it, as send lag). So no window unless asked for
            // (`--send-window D`: fewer wake-ups for that lateness).
            send_window: match stamp_reads && config.http.follow == 0 {
                true if scenario.is_some() && config.send_window.is_auto() => {
                    pelt_core::SendWindow::Max(std::time::Duration::ZERO)
                }
                true => config.send_window,
                false => pelt_core::SendWindow::Max(std::time::Duration::ZERO),
            },
            scenario,
        })
    }

    /// Senders of worker `share`: its connections × streams.
    pub fn senders(&self, share: &Share) -> usize {
        share.connections as usize * self.streams.max(1) as usize
    }

    /// `--login`: notes the `logins` made, and sets the clock's zero
    /// afresh, so that the run starts after them and no figure includes
    /// one.
    pub fn restart_after_logins(&mut self, logins: u64) {
        self.logins = logins;
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        self.epoch = Instant::now() + START_DELAY;
        self.unix_ns_at_epoch = (wall + START_DELAY).as_nanos() as u64;
    }

    /// Run time `t` as an instant tokio can sleep until.
    pub fn instant(&self, t: Nanos) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.epoch + Duration::from_nanos(t))
    }

    /// Rate mode: the target and planned time of `share`'s `seq`-th slot,
    /// or `None` past its last (count or deadline). A pure function of the
    /// slot's number in the whole run, so shards and workers send exactly
    /// what one process would.
    pub fn slot(&self, share: &Share, seq: u64) -> Option<(u32, Nanos)> {
        let pacer = self.pacer.as_ref()?;
        if share.slots.is_some_and(|limit| seq >= limit) {
            return None;
        }
        let global = share.global(seq);
        let intended = pacer.at(global);
        if self.deadline.is_some_and(|d| intended >= d) {
            return None;
        }
        Some((self.picker.pick(global) as u32, intended))
    }

    /// Each worker's share of `config`'s connections and counts.
    ///
    /// Items of the whole run (rate slots, connections) are dealt first to
    /// shards (`k mod N`), then within a shard to workers: worker `w` of
    /// `W` in shard `I` of `N` owns the items `s·W·N + w·N + I`.
    pub fn shares(&self, config: &RunConfig) -> Vec<Share> {
        let workers = self.workers;
        let shard = self.shard;
        let requests = config.effective_stop().requests;
        let connections = u64::from(config.load.connections());
        let stride = workers as u64 * u64::from(shard.count);
        (0..workers)
            .map(|index| {
                let offset = index as u64 * u64::from(shard.count) + u64::from(shard.index);
                Share {
                    index,
                    stride,
                    offset,
                    connections: owned(connections, stride, offset) as u32,
                    budget: match self.pacer.is_none() {
                        true => requests.map(|n| split(shard.part_of(n), workers, index)),
                        false => None,
                    },
                    slots: self.total_slots.map(|n| owned(n, stride, offset)),
                }
            })
            .collect()
    }
}

/// This worker's share of the run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Share {
    pub index: usize,
    /// Items of the whole run this worker owns are `offset + s·stride`.
    pub stride: u64,
    pub offset: u64,
    pub connections: u32,
    /// Closed loop with `-n`: measured requests this worker sends.
    pub budget: Option<u64>,
    /// Rate mode with `-n`: schedule slots this worker owns (every
    /// `workers`-th slot, starting at `index`), warm-up included.
    pub slots: Option<u64>,
}

impl Share {
    /// The whole run's number of this worker's `local`-th item (rate slot,
    /// connection, closed-loop request).
    pub fn global(&self, local: u64) -> u64 {
        local * self.stride + self.offset
    }
}

/// When the run's clock starts: `(epoch, wall clock at epoch, lateness)`.
/// Without `--start-at`, a moment from now. With it, `warmup` before that
/// time; if that is already past, the epoch is in the past too (the
/// schedule keeps its times: what is overdue goes out at once, late).
fn start_time(
    now: Instant,
    now_wall: Duration,
    start_at_unix_ns: Option<u64>,
    warmup: Duration,
) -> (Instant, u64, u64) {
    let Some(at) = start_at_unix_ns else {
        return (
            now + START_DELAY,
            (now_wall + START_DELAY).as_nanos() as u64,
            0,
        );
    };
    let epoch_wall = at.saturating_sub(warmup.as_nanos() as u64);
    let now_ns = now_wall.as_nanos() as u64;
    if epoch_wall >= now_ns {
        return (
            now + Duration::from_nanos(epoch_wall - now_ns),
            epoch_wall,
            0,
        );
    }
    let behind = Duration::from_nanos(now_ns - epoch_wall);
    let epoch = now.checked_sub(behind).unwrap_or(now);
    let late = now_ns.saturating_sub(at);
    (epoch, epoch_wall, late)
}

/// Share `index` of `total` split as evenly as possible over `parts`.
fn split(total: u64, parts: usize, index: usize) -> u64 {
    let parts = parts as u64;
    total / parts + u64::from((index as u64) < total % parts)
}

#[cfg(test)]
mod tests {
    use super::{split, RunPlan};
    use pelt_core::{Load, Order, RunConfig, Schedule, Segment, Shard, Stop, Target, Url};
    use proptest::prelude::*;
    use std::time::Duration;

    /// Every slot a run's workers would send: `(planned time, target)`.
    fn slots(config: &RunConfig) -> Vec<(u64, u32)> {
        let plan = RunPlan::new(config).unwrap();
        let mut out = Vec::new();
        for share in plan.shares(config) {
            let mut seq = 0;
            while let Some((target, at)) = plan.slot(&share, seq) {
                out.push((at, target));
                seq += 1;
            }
        }
        out.sort_unstable();
        out
    }

    fn sharded(config: &RunConfig, count: u32) -> Vec<RunConfig> {
        (0..count)
            .map(|index| RunConfig {
                shard: Some(Shard { index, count }),
                ..config.clone()
            })
            .collect()
    }

    fn load_strategy() -> impl Strategy<Value = Load> {
        let segment = (100u64..1500, 0u32..1500, 0u32..1500).prop_map(|(ms, from, to)| Segment {
            duration: Duration::from_millis(ms),
            from: f64::from(from),
            to: f64::from(to),
        });
        prop_oneof![
            (1u32..3000).prop_map(|r| Load::rate_of(f64::from(r), 16)),
            // A ramp (one segment) or stages (several).
            prop::collection::vec(segment, 1..4)
                .prop_filter("some rate", |s| s.iter().any(|g| g.from.max(g.to) >= 1.0))
                .prop_map(|segments| Load::Rate {
                    rate: 1.0,
                    connections: 16,
                    schedule: Some(Schedule { segments }),
                }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// The union is the schedule: N shards' planned times and targets,
        /// put together and sorted, are exactly the unsharded run's.
        #[test]
        fn the_union_of_the_shards_is_the_schedule(
            load in load_strategy(),
            count in 1u32..=16,
            threads in 1usize..4,
            requests in prop::option::of(1u64..4000),
            duration_ms in prop::option::of(200u64..2500),
            order in prop_oneof![Just(Order::RoundRobin), (0u64..100).prop_map(|seed| Order::Random { seed })],
            weights in prop::collection::vec(1u32..5, 1..4),
            warmup_ms in prop_oneof![Just(0u64), 1u64..300],
        ) {
            let targets = weights
                .iter()
                .enumerate()
                .map(|(i, &weight)| Target {
                    weight,
                    ..Target::get(Url::parse(&format!("http://127.0.0.1:9/{i}")).unwrap())
                })
                .collect();
            let mut config = RunConfig::new(
                targets,
                load,
                Stop { requests, duration: duration_ms.map(Duration::from_millis) },
            );
            if requests.is_none() && duration_ms.is_none() && config.load.schedule().is_none() {
                config.stop.duration = Some(Duration::from_secs(1));
            }
            config.order = order;
            config.warmup = Duration::from_millis(warmup_ms);
            config.threads = 1;
            let whole = slots(&config);
            prop_assert!(!whole.is_empty());
            config.threads = threads;
            let mut union: Vec<(u64, u32)> =
                sharded(&config, count).iter().flat_map(slots).collect();
            union.sort_unstable();
            prop_assert_eq!(union.len(), whole.len());
            prop_assert!(union == whole);
        }

        /// Closed loop: connection j goes to shard j mod N, every
        /// connection once, and -n is split exactly.
        #[test]
        fn connections_and_counts_are_dealt_exactly(
            connections in 16u32..200,
            count in 1u32..=16,
            threads in 1usize..5,
            requests in 16u64..10_000,
        ) {
            let url = Url::parse("http://127.0.0.1:9/").unwrap();
            let mut config = RunConfig::new(
                vec![Target::get(url)],
                Load::closed(connections),
                Stop { requests: Some(requests), duration: None },
            );
            config.threads = threads;
            let (mut ids, mut budget) = (Vec::new(), 0);
            for part in sharded(&config, count) {
                let shard = part.shard.unwrap();
                let plan = RunPlan::new(&part).unwrap();
                for share in plan.shares(&part) {
                    for c in 0..u64::from(share.connections) {
                        let j = share.global(c);
                        prop_assert_eq!(j % u64::from(count), u64::from(shard.index));
                        ids.push(j);
                    }
                    budget += share.budget.unwrap();
                }
            }
            ids.sort_unstable();
            prop_assert_eq!(ids, (0..u64::from(connections)).collect::<Vec<_>>());
            prop_assert_eq!(budget, requests);
        }
    }

    #[test]
    fn split_is_exact() {
        for total in [0u64, 1, 7, 1000, 1001] {
            for parts in 1..5 {
                let sum: u64 = (0..parts).map(|i| split(total, parts, i)).sum();
                assert_eq!(sum, total);
            }
        }
    }
}
