//! The warnings a run gets: worked out once, when it ends, and kept
//! with it so that a saved run explains itself.

use super::*;

impl RunSummary {
    /// Works out the warnings for this run. Called once by the engine; kept
    /// with the run so saved results explain themselves.
    pub fn diagnose(&self) -> Vec<Warning> {
        let mut w = Vec::new();
        if !self.complete {
            w.push(Warning::Incomplete);
        } else if self.interrupted {
            w.push(match &self.stopped_by {
                Some(StopCause::Abort { rule, at_s }) => Warning::Aborted {
                    rule: rule.clone(),
                    at_s: *at_s,
                },
                Some(StopCause::Signal { signal }) if signal != "SIGINT" => Warning::Terminated {
                    signal: signal.clone(),
                },
                _ => Warning::Interrupted,
            });
        } else if let Some(StopCause::FeedRanOut { feed, rows, at_s }) = &self.stopped_by {
            w.push(Warning::FeedRanOut {
                feed: feed.clone(),
                rows: *rows,
                at_s: *at_s,
            });
        }
        // Nothing to connect to leaves requests unsent and the workers
        // busy failing fast: the client's shortfall then says nothing
        // about the client, and "raise -c" would send the user the wrong
        // way (the report's failures and `no_response` say what happened).
        let unreachable = self.mostly_unreachable();
        if let Some(offered) = self.offered_rate() {
            // What went out, not what was planned: requests never sent are
            // recorded (as unfinished), and must not count as sent.
            let achieved = self.sent_rate();
            let count_limited = self.config.stop.requests.is_some();
            if !self.interrupted
                && self.complete
                && self.window.is_none()
                && !count_limited
                && !unreachable
                && achieved < offered * SHORTFALL_BELOW
            {
                w.push(Warning::RateShortfall { offered, achieved });
            }
            let lag = &self.total.send_lag;
            if !lag.is_empty() && crate::rank::quantile(lag, 0.99) > SEND_LAG_WARN_NS {
                // A connection opened per request puts its connect into
                // the lag: then no pool ran short, and "raise -c" is wrong.
                let t = &self.total;
                let per_request = t.requests > 0 && t.connections * 2 >= t.requests;
                w.push(Warning::SendLag {
                    p99_ns: crate::rank::quantile(lag, 0.99),
                    connections: self.config.load.connections(),
                    connect_p99_ns: per_request.then(|| crate::rank::quantile(&t.connect, 0.99)),
                });
            }
            // Issue 23 §5: are the requests the independent, on-schedule
            // trials the figures assume?
            if let Some(found) = self.independence() {
                // A ramp or stages change the load, and with it the
                // latency, by design: consecutive requests then correlate
                // through the trend (0.83 was seen on a 500..2,500 req/s
                // ramp against a healthy server), which says nothing
                // about a queue. Judged at a constant rate only.
                let constant = matches!(self.config.load, Load::Rate { schedule: None, .. });
                if let Some(r) = found
                    .lag1
                    .filter(|&r| constant && r >= crate::independence::AUTOCORRELATION_WARN)
                {
                    w.push(Warning::Autocorrelation {
                        r,
                        pairs: found.pairs,
                    });
                }
                if let Some(fit) = found.schedule.filter(|f| f.failed()) {
                    w.push(Warning::OffSchedule {
                        d: fit.d,
                        critical: fit.critical,
                        behind: fit.behind,
                        at_s: self.since_first_planned(fit.at_ns),
                        sent: fit.sent,
                    });
                }
            }
        }
        if let Some(mean) = self
            .total
            .read_lag_ns_sum
            .checked_div(self.total.kernel_timed)
        {
            // Beyond what a send window's batching accounts for (a read
            // waits at most one window, 1 ms by default).
            if mean > READ_LAG_WARN_NS {
                w.push(Warning::ReadLag {
                    mean_ns: mean,
                    max_ns: self.total.read_lag_ns_max,
                });
            }
        }
        if let Some((resource, e)) = self.total.examples.iter().find_map(|e| {
            (e.kind == ErrorKind::Connect)
                .then(|| LocalResource::of(&e.message).map(|r| (r, e)))
                .flatten()
        }) {
            w.push(Warning::ClientResources {
                resource,
                example: e.message.clone(),
            });
        }
        if let Some(st) = self
            .total
            .streamed
            .as_deref()
            .filter(|st| st.mostly_bursts())
        {
            w.push(Warning::BufferedStream {
                bursts: st.bursts,
                streams: st.burstable(),
            });
        }
        let (segments, retransmitted) = (self.total.tcp_segs_out, self.total.tcp_retrans);
        if retransmitted >= RETRANSMIT_MIN
            && retransmitted as f64 >= segments as f64 * RETRANSMIT_WARN
        {
            w.push(Warning::Retransmissions {
                retransmitted,
                segments,
                // HTTP/3 runs count QUIC's packets in the same fields.
                quic: self.config.http.http3,
            });
        }
        if let Some(link) = &self.env.link {
            let elapsed = self.elapsed.as_secs_f64();
            // Whole seconds: a partial one's bytes are not its rate.
            let peak = self
                .timeline
                .iter()
                .filter(|row| {
                    let (from, to) = row.span(elapsed);
                    to - from >= 0.99
                })
                .map(|row| row.bytes_in + row.bytes_out)
                .max()
                .unwrap_or(0);
            if link_saturated(peak, link.speed_mbps) {
                w.push(Warning::LinkSaturated {
                    interface: link.interface.clone(),
                    speed_mbps: link.speed_mbps,
                    peak_bytes_per_s: peak,
                });
            }
        }
        if self.total.lost_on_reuse > 0 {
            w.push(Warning::KeepAliveRace {
                lost: self.total.lost_on_reuse,
            });
        }
        // Stationarity (issue 23 §5): only for a whole run, as a window
        // is a part the user chose.
        if self.window.is_none() {
            let elapsed = self.elapsed.as_secs_f64();
            if let Some(d) = stationarity::drift(&self.timeline, elapsed) {
                w.push(Warning::Drift {
                    from_ns: d.from_ns,
                    to_ns: d.to_ns,
                    z: d.z,
                    seconds: d.seconds,
                });
            } else if let Some(s) = stationarity::stepped(&self.timeline, elapsed) {
                // A step Mann-Kendall did not see (issue 35).
                w.push(Warning::Step {
                    at_s: s.after_seconds as u64,
                    before_ns: s.before_ns,
                    after_ns: s.after_ns,
                    p: s.p,
                });
            } else if let Some((seconds, start_ns, rest_ns)) =
                stationarity::warmup(&self.timeline, elapsed)
            {
                w.push(Warning::Warmup {
                    seconds,
                    start_ns,
                    rest_ns,
                });
            }
        }
        let unfinished = self.total.errors[ErrorKind::Unfinished.index()];
        if unfinished > 0 {
            w.push(Warning::Unfinished { count: unfinished });
        }
        if self.total.requests > 0 {
            // The one meaning of failed (crate::failure): a 503 counts.
            let ratio = self.total.failed_share();
            if ratio >= 0.05 {
                let share = |n: u64| n as f64 / self.total.requests as f64;
                let untimed = ErrorKind::ALL
                    .iter()
                    .filter(|k| !k.is_timed())
                    .map(|k| self.total.errors[k.index()])
                    .sum();
                w.push(Warning::Failed {
                    ratio,
                    untimed: share(untimed),
                    length: share(self.total.errors[ErrorKind::Length.index()]),
                    top: self
                        .total
                        .failures()
                        .first()
                        .map(|&(k, n)| (k.name().to_string(), share(n))),
                });
            }
            if self.config.http.follow == 0 {
                let redirects: Vec<(u16, u64)> = self
                    .total
                    .status_counts()
                    .filter(|(code, _)| (300..400).contains(code))
                    .collect();
                let all: u64 = redirects.iter().map(|&(_, n)| n).sum();
                if all * 2 > self.total.requests {
                    let status = redirects
                        .iter()
                        .max_by_key(|&&(_, n)| n)
                        .map_or(302, |&(c, _)| c);
                    w.push(Warning::Redirects {
                        share: share(all, self.total.requests),
                        status,
                    });
                }
            }
        }
        let long_enough = self.config.warmup + self.elapsed >= CLIENT_BUSY_MIN_RUN;
        if let Some(t) = self
            .client_bound_thread()
            .filter(|_| long_enough && !unreachable)
        {
            w.push(Warning::ClientBusy {
                on_cpu: t.on_cpu,
                waiting: t.waiting,
                threads: self.worker_load.len(),
            });
        }
        if self.env.debug_build {
            w.push(Warning::DebugBuild);
        }
        w
    }
}

fn share(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 / of as f64
    }
}

impl RunSummary {
    /// Whether nearly every request failed to connect (at least
    /// [`UNREACHABLE_SHARE`]): nothing listening, a wrong port, a
    /// firewall.
    pub fn mostly_unreachable(&self) -> bool {
        let connect = self.total.errors[ErrorKind::Connect.index()];
        self.total.requests > 0 && connect as f64 >= self.total.requests as f64 * UNREACHABLE_SHARE
    }
}

/// The share of requests refused a connection beyond which a run is about
/// the target being unreachable, not about the client's pace.
pub const UNREACHABLE_SHARE: f64 = 0.9;
