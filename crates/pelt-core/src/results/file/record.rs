//! One second of a run as the results file stores it: counts as JSON,
//! histograms in HdrHistogram's V2 + deflate encoding (base64), checked
//! before they are trusted.

use super::Corruption;
use crate::error_kind::ErrorKind;
use crate::independence::{Lag1, SendGrid};
use crate::recorder::{ErrorExample, Recorder, MAX_STATUS};
use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::io;

/// One second of a recorder, as stored.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct IntervalRecord {
    pub(super) second: u64,
    requests: u64,
    successes: u64,
    bytes_in: u64,
    body_bytes_in: u64,
    bytes_out: u64,
    reused: u64,
    connections: u64,
    /// `--cookies` and `--login` (absent in files from before them).
    #[serde(default, skip_serializing_if = "is_zero")]
    with_cookie: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    logins: u64,
    /// Requests sent again after a reused connection closed unanswered.
    #[serde(default, skip_serializing_if = "is_zero")]
    retried: u64,
    /// Non-idempotent requests lost that way, not sent again.
    #[serde(default, skip_serializing_if = "is_zero")]
    lost_on_reuse: u64,
    /// `--proxy` tunnels: `[count, total ns, longest ns]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tunnels: Option<(u64, u64, u64)>,
    /// Responses timed by kernel receive stamps, with their read lag:
    /// `[count, total ns, longest ns]` (absent in files from before them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kernel_timed: Option<(u64, u64, u64)>,
    /// TCP segments sent and retransmitted: `[sent, retransmitted]`
    /// (absent in files from before them, and when none were counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tcp: Option<(u64, u64)>,
    /// Requests whose departure the kernel stamped (`--tx-stamps`).
    #[serde(default, skip_serializing_if = "is_zero")]
    tx_stamped: u64,
    /// Transport failures after a status line (the response broke off).
    #[serde(default, skip_serializing_if = "is_zero")]
    cut_short: u64,
    first_intended: u64,
    last_sent: u64,
    last_done: u64,
    /// Consecutive response times' sums, `[pairs, Σx, Σy, Σx², Σy², Σxy]`
    /// (see `crate::independence`; absent in files from before them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lag1: Option<[u128; 6]>,
    /// The send grid, `[level, first slot, [planned − sent per slot]]`;
    /// absent when every request went out in its slot, and in files from
    /// before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sends: Option<(u8, u64, Vec<i64>)>,
    /// `[code, count]` for codes that occurred.
    statuses: Vec<(u16, u64)>,
    /// Counts for kinds that occurred.
    errors: Vec<(ErrorKind, u64)>,
    /// `[class digit, count]`: of `statuses`, the responses a scenario's
    /// check or extraction failed (absent when none, and in files from
    /// before judged responses kept their status).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    judged: Vec<(u8, u64)>,
    /// `[target, requests, successes, errors]` for targets with requests.
    #[serde(default)]
    targets: Vec<(u32, u64, u64, u64)>,
    /// Status classes, error kinds and response time per target with
    /// requests (absent in files from before per-target latency).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    target_detail: Vec<TargetDetail>,
    examples: Vec<(ErrorKind, String)>,
    /// Runs that count handshakes (https over TCP, `--0rtt`): times by
    /// kind (full, 0-RTT accepted, 0-RTT rejected, resumed: the
    /// discriminants' order), encoded as `histograms` are; absent
    /// otherwise. Files from before resumption was counted have three.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    handshakes: Option<Vec<String>>,
    /// Runs that met a streamed response: its figures (absent otherwise,
    /// and in files from before streams).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    streamed: Option<StreamsRecord>,
    /// WebSocket runs: upgrade times and closes by code (absent
    /// otherwise, and in files from before WebSocket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ws: Option<WsRecord>,
    /// HdrHistogram V2 + deflate, base64: response, service, send_lag,
    /// ttfb, connect, tls.
    histograms: [String; 6],
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A second's WebSocket figures (`crate::ws::WsStats`).
#[derive(Debug, Serialize, Deserialize)]
struct WsRecord {
    /// Upgrade times, encoded as `histograms` are.
    upgrades: String,
    /// `[code, count]` for closes that occurred; code 0 for codes
    /// counted together (`other`).
    closes: Vec<(u16, u64)>,
}

/// A second's stream figures (`crate::stream::StreamStats`).
#[derive(Debug, Serialize, Deserialize)]
struct StreamsRecord {
    /// `[streams, events, stalls, bursts, tokens, usage_counted]`.
    counts: [u64; 6],
    /// Encoded as `histograms` are: first event, gaps, mean gap,
    /// duration, events per stream (a count, not nanoseconds).
    histograms: [String; 5],
    /// `--event-time` and `--hold`: `[untimed, held]` (absent in files
    /// from before them, and when both are 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    more_counts: Option<[u64; 2]>,
    /// Event latency and tokens per second per stream (thousandths),
    /// encoded as `histograms` are (absent in files from before them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    more_histograms: Option<[String; 2]>,
}

/// The rest of one target's figures in an interval.
#[derive(Debug, Serialize, Deserialize)]
struct TargetDetail {
    target: u32,
    /// `[class digit, count]`: `[2, 95]` is 95 responses in 2xx.
    #[serde(default)]
    classes: Vec<(u8, u64)>,
    #[serde(default)]
    errors: Vec<(ErrorKind, u64)>,
    /// `[class digit, count]`: of `classes`, the judged responses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    judged: Vec<(u8, u64)>,
    /// Response time, encoded like the run's histograms (2 significant
    /// digits); absent for targets beyond the timed ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    response: Option<String>,
}

pub(super) fn encode(h: &Histogram<u64>) -> io::Result<String> {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .map_err(|e| io::Error::other(format!("{e:?}")))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// hdrhistogram's V2 + deflate encoding starts with this cookie.
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
const V2_COOKIE: u32 = 0x1c84_9313;
/// The largest encoded counts array pelt ever writes is ~300 KB.
const MAX_HISTOGRAM_PAYLOAD: u32 = 4 << 20;

/// Why a histogram in a results file does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistogramError {
    /// Not base64.
    #[error("bad histogram encoding: {0}")]
    Base64(String),
    /// Not HdrHistogram's compressed V2 encoding.
    #[error("not a compressed V2 histogram")]
    NotV2,
    /// The deflate stream is broken.
    #[error("bad histogram compression: {0}")]
    Compression(String),
    /// The inner V2 cookie is wrong.
    #[error("bad histogram cookie")]
    Cookie,
    /// It claims a payload larger than pelt ever writes (checked before
    /// anything is allocated).
    #[error("a histogram claims an impossible size")]
    Size,
    /// It claims more significant digits than pelt records.
    #[error("a histogram claims more precision than pelt records")]
    Precision,
    /// HdrHistogram's decoder refused it.
    #[error("bad histogram: {0}")]
    Decode(String),
    /// Its values do not fit pelt's histogram bounds.
    #[error("histogram outside pelt's range: {0}")]
    Range(String),
    /// Its values do not fit pelt's per-target histogram bounds.
    #[error("target histogram outside pelt's range: {0}")]
    TargetRange(String),
}

/// Checks the histogram's own header before hdrhistogram sees it: its
/// deserialiser allocates whatever payload length and bounds a file
/// claims, so a 100-byte crafted file could ask for gigabytes.
fn check_histogram_header(bytes: &[u8]) -> Result<(), HistogramError> {
    use std::io::Read;
    let word = |b: &[u8], at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    if word(bytes, 0) != Some(V2_COMPRESSED_COOKIE) {
        return Err(HistogramError::NotV2);
    }
    let mut head = [0u8; 40];
    flate2::read::ZlibDecoder::new(bytes.get(8..).unwrap_or_default())
        .read_exact(&mut head)
        .map_err(|e| HistogramError::Compression(e.to_string()))?;
    let (cookie, payload, digits) = (word(&head, 0), word(&head, 4), word(&head, 12));
    if cookie != Some(V2_COOKIE) {
        return Err(HistogramError::Cookie);
    }
    if payload.is_none_or(|p| p > MAX_HISTOGRAM_PAYLOAD) {
        return Err(HistogramError::Size);
    }
    if digits.is_none_or(|d| d > u32::from(crate::recorder::SIGNIFICANT_DIGITS)) {
        return Err(HistogramError::Precision);
    }
    Ok(())
}

fn decode(text: &str) -> Result<Histogram<u64>, HistogramError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| HistogramError::Base64(e.to_string()))?;
    check_histogram_header(&bytes)?;
    let h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| HistogramError::Decode(format!("{e:?}")))?;
    // Beyond pelt's bounds is not a file pelt wrote (the recorder clamps
    // to them); a growing histogram would otherwise take it.
    if !h.is_empty() && h.lowest_equivalent(h.max()) > crate::recorder::MAX_TRACKABLE_NS {
        return Err(HistogramError::Range(format!(
            "a value of {} ns, above pelt's limit of one hour",
            h.max()
        )));
    }
    // Re-home into pelt's bounds so recorders from any file merge.
    let mut out = crate::recorder::new_histogram();
    crate::histogram::add(&mut out, &h);
    Ok(out)
}

/// Class counts as stored: `[class digit, count]` for classes with any.
fn classes(counts: [u64; 10]) -> Vec<(u8, u64)> {
    (0u8..10).zip(counts).filter(|&(_, n)| n > 0).collect()
}

/// Adds stored class counts into `into`.
fn add_classes(into: &mut [u64; 10], stored: Vec<(u8, u64)>) -> Result<(), Corruption> {
    for (class, n) in stored {
        *into
            .get_mut(usize::from(class))
            .ok_or(Corruption::Counts("status class out of range"))? += n;
    }
    Ok(())
}

/// Decodes a per-target histogram into the per-target bounds.
fn decode_target(text: &str) -> Result<Histogram<u64>, HistogramError> {
    let h = decode(text)?;
    let mut out = crate::recorder::new_target_histogram();
    out.add(&h)
        .map_err(|e| HistogramError::TargetRange(format!("{e:?}")))?;
    Ok(out)
}

impl IntervalRecord {
    pub(super) fn from_recorder(second: u64, r: &Recorder) -> io::Result<IntervalRecord> {
        Ok(IntervalRecord {
            second,
            requests: r.requests,
            successes: r.successes,
            bytes_in: r.bytes_in,
            body_bytes_in: r.body_bytes_in,
            bytes_out: r.bytes_out,
            reused: r.reused,
            connections: r.connections,
            with_cookie: r.with_cookie,
            logins: r.logins,
            retried: r.retried,
            lost_on_reuse: r.lost_on_reuse,
            tunnels: (r.tunnels > 0).then_some((r.tunnels, r.tunnel_ns_sum, r.tunnel_ns_max)),
            kernel_timed: (r.kernel_timed > 0).then_some((
                r.kernel_timed,
                r.read_lag_ns_sum,
                r.read_lag_ns_max,
            )),
            tcp: (r.tcp_segs_out > 0).then_some((r.tcp_segs_out, r.tcp_retrans)),
            tx_stamped: r.tx_stamped,
            cut_short: r.cut_short,
            first_intended: r.first_intended,
            last_sent: r.last_sent,
            last_done: r.last_done,
            lag1: (r.lag1.pairs > 0).then(|| r.lag1.sums()),
            sends: r
                .sends
                .trimmed()
                .map(|(level, first, diff)| (level, first, diff.to_vec())),
            statuses: r.status_counts().collect(),
            errors: ErrorKind::ALL
                .iter()
                .filter(|k| r.errors[k.index()] > 0)
                .map(|&k| (k, r.errors[k.index()]))
                .collect(),
            judged: classes(r.judged),
            targets: r
                .targets
                .iter()
                .enumerate()
                .filter(|(_, t)| t.requests() > 0)
                .map(|(i, t)| (i as u32, t.requests(), t.successes(), t.errors()))
                .collect(),
            target_detail: r
                .targets
                .iter()
                .enumerate()
                .filter(|(_, t)| t.requests() > 0)
                .map(|(i, t)| {
                    Ok(TargetDetail {
                        target: i as u32,
                        classes: t.classes().collect(),
                        errors: ErrorKind::ALL
                            .iter()
                            .filter(|k| t.error_kinds()[k.index()] > 0)
                            .map(|&k| (k, t.error_kinds()[k.index()]))
                            .collect(),
                        judged: classes(t.judged_classes()),
                        response: t.response().map(encode).transpose()?,
                    })
                })
                .collect::<io::Result<_>>()?,
            examples: r
                .examples
                .iter()
                .map(|e| (e.kind, e.message.clone()))
                .collect(),
            handshakes: match r.handshakes.as_deref().filter(|h| !h.is_empty()) {
                Some(h) => Some(h.times.iter().map(encode).collect::<io::Result<_>>()?),
                None => None,
            },
            streamed: match r.streamed.as_deref().filter(|s| !s.is_empty()) {
                Some(s) => {
                    let [a, b, c, d, e, f, g] = s.histograms();
                    Some(StreamsRecord {
                        more_counts: (s.untimed > 0 || s.held > 0).then_some([s.untimed, s.held]),
                        more_histograms: match f.is_empty() && g.is_empty() {
                            true => None,
                            false => Some([encode(f)?, encode(g)?]),
                        },
                        counts: [
                            s.streams,
                            s.events,
                            s.stalls,
                            s.bursts,
                            s.tokens,
                            s.usage_counted,
                        ],
                        histograms: [encode(a)?, encode(b)?, encode(c)?, encode(d)?, encode(e)?],
                    })
                }
                None => None,
            },
            ws: match r.ws.as_deref().filter(|w| !w.is_empty()) {
                Some(w) => Some(WsRecord {
                    upgrades: encode(&w.upgrades)?,
                    closes: w
                        .closes()
                        .map(|(c, n)| match c {
                            crate::ws::Close::Code(code) => (code, n),
                            crate::ws::Close::Other => (0, n),
                        })
                        .collect(),
                }),
                None => None,
            },
            histograms: [
                encode(&r.response)?,
                encode(&r.service)?,
                encode(&r.send_lag)?,
                encode(&r.ttfb)?,
                encode(&r.connect)?,
                encode(&r.tls)?,
            ],
        })
    }

    pub(super) fn into_recorder(self) -> Result<Recorder, Corruption> {
        let mut r = Recorder::new();
        let [response, service, send_lag, ttfb, connect, tls] = self.histograms;
        r.response = decode(&response)?;
        r.service = decode(&service)?;
        r.send_lag = decode(&send_lag)?;
        r.ttfb = decode(&ttfb)?;
        r.connect = decode(&connect)?;
        r.tls = decode(&tls)?;
        if let Some(WsRecord { upgrades, closes }) = self.ws {
            let mut w = crate::ws::WsStats {
                upgrades: decode(&upgrades)?,
                ..Default::default()
            };
            for (code, n) in closes {
                let close = match code {
                    0 => crate::ws::Close::Other,
                    c => crate::ws::Close::of(c),
                };
                w.add_closes(close, n);
            }
            r.ws = Some(Box::new(w));
        }
        if let Some(kinds) = self.handshakes {
            let mut h = crate::handshake::Handshakes::default();
            if kinds.len() > h.times.len() {
                return Err(Corruption::Counts("more handshake kinds than pelt knows"));
            }
            for (times, encoded) in h.times.iter_mut().zip(&kinds) {
                *times = decode(encoded)?;
            }
            r.handshakes = Some(Box::new(h));
        }
        if let Some(StreamsRecord {
            counts,
            histograms,
            more_counts,
            more_histograms,
        }) = self.streamed
        {
            let [streams, events, stalls, bursts, tokens, usage_counted] = counts;
            let [a, b, c, d, e] = histograms;
            let [untimed, held] = more_counts.unwrap_or_default();
            let (f, g) = match more_histograms {
                Some([f, g]) => (decode(&f)?, decode(&g)?),
                None => (
                    crate::histogram::new_histogram(),
                    crate::histogram::new_histogram(),
                ),
            };
            r.streamed = Some(Box::new(crate::stream::StreamStats {
                first_event: decode(&a)?,
                gaps: decode(&b)?,
                mean_gap: decode(&c)?,
                duration: decode(&d)?,
                events_per_stream: decode(&e)?,
                streams,
                events,
                stalls,
                bursts,
                tokens,
                usage_counted,
                event_latency: f,
                tokens_per_s: g,
                untimed,
                held,
            }));
        }
        r.requests = self.requests;
        r.successes = self.successes;
        r.bytes_in = self.bytes_in;
        r.body_bytes_in = self.body_bytes_in;
        r.bytes_out = self.bytes_out;
        r.reused = self.reused;
        r.connections = self.connections;
        r.with_cookie = self.with_cookie;
        r.logins = self.logins;
        r.retried = self.retried;
        r.lost_on_reuse = self.lost_on_reuse;
        if let Some((n, sum, max)) = self.tunnels {
            (r.tunnels, r.tunnel_ns_sum, r.tunnel_ns_max) = (n, sum, max);
        }
        if let Some((n, sum, max)) = self.kernel_timed {
            (r.kernel_timed, r.read_lag_ns_sum, r.read_lag_ns_max) = (n, sum, max);
        }
        r.tx_stamped = self.tx_stamped;
        r.cut_short = self.cut_short;
        if let Some((sent, again)) = self.tcp {
            (r.tcp_segs_out, r.tcp_retrans) = (sent, again);
        }
        r.first_intended = self.first_intended;
        r.last_sent = self.last_sent;
        r.last_done = self.last_done;
        if let Some(sums) = self.lag1 {
            r.lag1 = Lag1::from_sums(sums).ok_or(Corruption::Counts("lag-1 pairs out of range"))?;
        }
        if let Some((level, first, diff)) = self.sends {
            r.sends = SendGrid::from_parts(level, first, diff)
                .ok_or(Corruption::Counts("send grid out of range"))?;
        }
        for (code, n) in self.statuses {
            let slot = r
                .statuses
                .get_mut(usize::from(code).min(MAX_STATUS))
                .ok_or(Corruption::Counts("status code out of range"))?;
            *slot += n;
        }
        for (kind, n) in self.errors {
            r.errors[kind.index()] += n;
        }
        add_classes(&mut r.judged, self.judged)?;
        for (t, requests, successes, errors) in self.targets {
            // A bound on what a file may make us allocate.
            let i = t as usize;
            if i >= 1 << 20 {
                return Err(Corruption::Counts("target index out of range"));
            }
            if i >= r.targets.len() {
                r.targets
                    .resize_with(i + 1, crate::recorder::TargetStats::default);
            }
            let t = r.targets[i].detail_mut();
            (t.requests, t.successes, t.errors) = (requests, successes, errors);
        }
        for d in self.target_detail {
            let t = r
                .targets
                .get_mut(d.target as usize)
                .ok_or(Corruption::Counts(
                    "target detail for a target without counts",
                ))?
                .detail_mut();
            for (class, n) in d.classes {
                *t.status_classes
                    .get_mut(usize::from(class))
                    .ok_or(Corruption::Counts("status class out of range"))? += n;
            }
            for (kind, n) in d.errors {
                t.error_kinds[kind.index()] += n;
            }
            add_classes(&mut t.judged, d.judged)?;
            if let Some(h) = d.response {
                t.response = Some(decode_target(&h)?);
            }
        }
        r.examples = self
            .examples
            .into_iter()
            .map(|(kind, message)| ErrorExample { kind, message })
            .collect();
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    /// Files from before per-target latency have per-target counts only.
    #[test]
    fn intervals_without_target_detail_still_read() {
        let r = recorder(&[(0, 5_000_000, 200, None), (1, 7_000_000, 500, None)]);
        let mut record = IntervalRecord::from_recorder(100, &r).unwrap();
        assert_eq!(record.target_detail.len(), 2);
        record.target_detail.clear();
        let json = serde_json::to_string(&record).unwrap();
        assert!(!json.contains("target_detail"));
        let back: IntervalRecord = serde_json::from_str(&json).unwrap();
        let back = back.into_recorder().unwrap();
        assert_eq!(back.targets[0].requests(), 1);
        assert_eq!(back.targets[1].requests(), 1);
        assert!(back.targets[0].response().is_none());
        assert_eq!(back.targets[1].status_classes(), [0; 10]);
        // With the detail, classes and histograms come back.
        let full = IntervalRecord::from_recorder(100, &r)
            .unwrap()
            .into_recorder()
            .unwrap();
        assert_eq!(full.targets[1].status_classes()[5], 1);
        assert_eq!(full.targets[1].response().unwrap().len(), 1);
    }

    /// The independence sums and the send grid survive a file, and files
    /// from before them read with none.
    #[test]
    fn independence_figures_round_trip_and_older_files_read() {
        let mut r = Recorder::new();
        for i in 0..500u64 {
            let intended = i * 1_000_000;
            // Every third request sent 15 ms late: it crosses a slot.
            let sent = intended + if i % 3 == 0 { 15_000_000 } else { 5_000 };
            r.record(&crate::Sample {
                target: 0,
                intended,
                sent: Some(sent),
                first_byte: Some(sent + 100_000),
                done: sent + 200_000 + (i % 5) * 10_000,
                status: 200,
                bytes_in: 10,
                body_bytes: 5,
                bytes_out: 5,
                reused: true,
                error: None,
            });
        }
        assert_eq!(r.lag1.pairs, 499);
        assert!(r.sends.trimmed().is_some());
        let record = IntervalRecord::from_recorder(100, &r).unwrap();
        let json = serde_json::to_string(&record).unwrap();
        let back: IntervalRecord = serde_json::from_str(&json).unwrap();
        let back = back.into_recorder().unwrap();
        assert_eq!(back.lag1, r.lag1);
        assert_eq!(back.sends, r.sends);
        let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
        let fields = old.as_object_mut().unwrap();
        assert!(fields.remove("lag1").is_some() && fields.remove("sends").is_some());
        let old: IntervalRecord = serde_json::from_value(old).unwrap();
        let old = old.into_recorder().unwrap();
        assert_eq!((old.lag1.pairs, old.sends.trimmed()), (0, None));
    }

    /// `--0rtt`'s handshakes by kind survive a file and add when merged;
    /// other runs' records carry none.
    #[test]
    fn handshakes_round_trip_and_are_absent_from_other_runs() {
        use crate::handshake::Handshake;
        let mut r = Recorder::new();
        let json = serde_json::to_string(&IntervalRecord::from_recorder(1, &r).unwrap()).unwrap();
        assert!(!json.contains("handshakes"), "{json}");
        r.record_handshake(Handshake::Full, 2_000_000);
        r.record_handshake(Handshake::ZeroRttAccepted, 40_000);
        r.record_handshake(Handshake::ZeroRttAccepted, 45_000);
        r.record_handshake(Handshake::Resumed, 500_000);
        let json = serde_json::to_string(&IntervalRecord::from_recorder(1, &r).unwrap()).unwrap();
        let back: IntervalRecord = serde_json::from_str(&json).unwrap();
        let mut back = back.into_recorder().unwrap();
        back.merge(&r);
        let h = back.handshakes.as_ref().unwrap();
        let counts = Handshake::ALL.map(|k| h.count(k));
        assert_eq!(counts, [2, 2, 4, 0]);
        // A file from before resumption was counted: three kinds, read
        // as full, 0-RTT accepted and 0-RTT rejected.
        let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
        old["handshakes"].as_array_mut().unwrap().pop();
        let old: IntervalRecord = serde_json::from_value(old).unwrap();
        let old = old.into_recorder().unwrap();
        let h = old.handshakes.as_ref().unwrap();
        assert_eq!(Handshake::ALL.map(|k| h.count(k)), [1, 0, 2, 0]);
    }

    /// WebSocket upgrades and closes survive a file and add when merged;
    /// other runs' records carry none.
    #[test]
    fn ws_figures_round_trip_and_are_absent_from_other_runs() {
        use crate::ws::Close;
        let mut r = Recorder::new();
        let json = serde_json::to_string(&IntervalRecord::from_recorder(1, &r).unwrap()).unwrap();
        assert!(!json.contains("\"ws\""), "{json}");
        r.record_ws_upgrade(300_000);
        r.record_ws_close(Close::of(1000));
        r.record_ws_close(Close::of(1006));
        r.record_ws_close(Close::of(4000));
        let json = serde_json::to_string(&IntervalRecord::from_recorder(1, &r).unwrap()).unwrap();
        let back: IntervalRecord = serde_json::from_str(&json).unwrap();
        let mut back = back.into_recorder().unwrap();
        back.merge(&r);
        let w = back.ws.as_ref().unwrap();
        assert_eq!(w.upgrades.len(), 2);
        let closes: Vec<(String, u64)> = w.closes().map(|(c, n)| (c.name(), n)).collect();
        assert_eq!(
            closes,
            [("1000".into(), 2), ("1006".into(), 2), ("other".into(), 2)]
        );
    }

    /// Stream figures survive a file and add when merged; runs without a
    /// stream carry none.
    #[test]
    fn stream_figures_round_trip_and_are_absent_from_other_runs() {
        use crate::stream::Tally;
        let mut r = Recorder::new();
        let json = serde_json::to_string(&IntervalRecord::from_recorder(1, &r).unwrap()).unwrap();
        assert!(!json.contains("streamed"), "{json}");
        let mut t = Tally::default();
        for at in [300_000_000, 350_000_000, 400_000_000] {
            let gap = t.event(at, 1_000_000_000);
            r.record_event(
                gap,
                1_000_000_000,
                crate::stream::EventLatency::Of(2_000_000),
            );
        }
        r.record_event(None, 1_000_000_000, crate::stream::EventLatency::Unreadable);
        t.usage_tokens = Some(4);
        t.held = true;
        r.record_stream(0, &t, true);
        let json = serde_json::to_string(&IntervalRecord::from_recorder(1, &r).unwrap()).unwrap();
        let back: IntervalRecord = serde_json::from_str(&json).unwrap();
        let mut back = back.into_recorder().unwrap();
        back.merge(&r);
        let s = back.streamed.as_ref().unwrap();
        assert_eq!(
            (s.streams, s.events, s.tokens, s.usage_counted),
            (2, 8, 8, 2)
        );
        assert_eq!((s.untimed, s.held), (2, 2));
        assert_eq!((s.event_latency.len(), s.tokens_per_s.len()), (6, 2));
        // 4 tokens by the last event, 400 ms after the start: 10/s.
        assert_eq!(s.tokens_per_s.max() / 1_000, 10);
        assert_eq!(s.gaps.len(), 4);
        assert_eq!(s.events_per_stream.max(), 3);
    }

    /// Regression: hdrhistogram's deserialiser allocated whatever payload
    /// length a file claimed (up to 4 GiB) before reading it.
    #[test]
    fn a_crafted_histogram_size_is_refused_before_allocating() {
        use std::io::Write;
        let mut inner = Vec::new();
        inner.extend_from_slice(&V2_COOKIE.to_be_bytes());
        inner.extend_from_slice(&u32::MAX.to_be_bytes()); // payload length
        inner.extend_from_slice(&0u32.to_be_bytes());
        inner.extend_from_slice(&3u32.to_be_bytes());
        inner.extend_from_slice(&1u64.to_be_bytes());
        inner.extend_from_slice(&3_600_000_000_000u64.to_be_bytes());
        inner.extend_from_slice(&1f64.to_be_bytes());
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&inner).unwrap();
        let deflated = z.finish().unwrap();
        let mut bytes = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        bytes.extend_from_slice(&(deflated.len() as u32).to_be_bytes());
        bytes.extend_from_slice(&deflated);
        let text = base64::engine::general_purpose::STANDARD.encode(&bytes);
        assert_eq!(decode(&text).unwrap_err(), HistogramError::Size);
        // And a real one still decodes.
        let mut h = crate::recorder::new_histogram();
        h.record(12345).unwrap();
        let back = decode(&encode(&h).unwrap()).unwrap();
        assert_eq!(back.len(), 1);
    }

    #[test]
    fn a_histogram_past_the_hour_is_refused() {
        // pelt's recorder clamps to the hour, so a file with more was not
        // written by it; pelt's histograms grow, and must not grow for it.
        let mut h = Histogram::<u64>::new_with_bounds(1, u64::MAX / 4, 3).unwrap();
        h.record(crate::recorder::MAX_TRACKABLE_NS * 100).unwrap();
        let err = decode(&encode(&h).unwrap()).unwrap_err();
        assert!(matches!(err, HistogramError::Range(_)), "{err:?}");
        let mut ok = Histogram::<u64>::new_with_bounds(1, u64::MAX / 4, 3).unwrap();
        ok.record(crate::recorder::MAX_TRACKABLE_NS).unwrap();
        assert_eq!(decode(&encode(&ok).unwrap()).unwrap().len(), 1);
    }
}
