//! The results file (`.pelt`): a run, durable.
//!
//! Written as the run goes, so a run that is killed leaves a file that is
//! readable up to its last complete second. Layout (all integers little
//! endian; format documented in docs/RESULTS-FORMAT.md):
//!
//! ```text
//! file   = magic "PELT-RUN" , version:u32 , frame*
//! frame  = kind:u8 , length:u32 , crc32:u32 , payload[length]
//! kind   = 1 header (JSON) | 2 interval (JSON) | 3 footer (JSON)
//! ```
//!
//! The CRC-32 covers the kind byte and the payload. A frame cut short at
//! the end of the file is a run that was killed mid-write: everything
//! before it is kept. A checksum that does not match is corruption, and
//! the file is refused rather than half-believed.

use crate::error::ErrorKind;
pub use crate::header::{RunFooter, RunHeader};
use crate::recorder::{ErrorExample, Recorder, MAX_STATUS};
use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};

pub const MAGIC: &[u8; 8] = b"PELT-RUN";
pub const FORMAT_VERSION: u32 = 1;
/// No frame is this large; a length beyond it means a foreign or corrupt file.
const MAX_FRAME: u32 = 64 << 20;

const KIND_HEADER: u8 = 1;
const KIND_INTERVAL: u8 = 2;
const KIND_FOOTER: u8 = 3;

/// Why a results file cannot be read, phrased for the user.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("not a pelt results file (it does not start with PELT-RUN); give a file written by pelt run -o")]
    NotResults,
    #[error("results format version {0} is newer than this pelt understands ({FORMAT_VERSION}); upgrade pelt")]
    UnsupportedVersion(u32),
    #[error("corrupt results file at byte {offset}: {reason}; the file changed after pelt wrote it (a bad copy or disk?): use another copy, or run again")]
    Corrupt { offset: u64, reason: String },
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Appends a run to a results file, flushing every frame so that what was
/// written survives the process being killed.
#[derive(Debug)]
pub struct ResultsWriter<W: Write> {
    out: W,
}

impl<W: Write> ResultsWriter<W> {
    /// Writes the magic, version and header.
    pub fn new(mut out: W, header: &RunHeader) -> io::Result<ResultsWriter<W>> {
        out.write_all(MAGIC)?;
        out.write_all(&FORMAT_VERSION.to_le_bytes())?;
        let mut w = ResultsWriter { out };
        w.frame(KIND_HEADER, &serde_json::to_vec(header)?)?;
        Ok(w)
    }

    /// Appends one second of the run.
    pub fn interval(&mut self, unix_second: u64, rec: &Recorder) -> io::Result<()> {
        let record = IntervalRecord::from_recorder(unix_second, rec)?;
        self.frame(KIND_INTERVAL, &serde_json::to_vec(&record)?)
    }

    /// Writes the footer and hands back the output.
    pub fn finish(mut self, footer: &RunFooter) -> io::Result<W> {
        self.frame(KIND_FOOTER, &serde_json::to_vec(footer)?)?;
        Ok(self.out)
    }

    fn frame(&mut self, kind: u8, payload: &[u8]) -> io::Result<()> {
        let mut crc = crc32fast::Hasher::new();
        crc.update(&[kind]);
        crc.update(payload);
        let mut head = [0u8; 9];
        head[0] = kind;
        head[1..5].copy_from_slice(&(payload.len() as u32).to_le_bytes());
        head[5..9].copy_from_slice(&crc.finalize().to_le_bytes());
        self.out.write_all(&head)?;
        self.out.write_all(payload)?;
        self.out.flush()
    }
}

/// Reads a results file one second at a time: memory stays at one
/// interval whatever the length of the run.
#[derive(Debug)]
pub struct ResultsReader<R: Read> {
    input: R,
    header: RunHeader,
    footer: Option<RunFooter>,
    offset: u64,
    truncated: bool,
    done: bool,
}

impl<R: Read> ResultsReader<R> {
    /// Checks the magic and version and reads the header.
    pub fn open(mut input: R) -> Result<ResultsReader<R>, ResultsError> {
        let mut start = [0u8; 12];
        if read_full(&mut input, &mut start)? < 12 || &start[..8] != MAGIC {
            return Err(ResultsError::NotResults);
        }
        let version = u32::from_le_bytes(start[8..12].try_into().expect("4 bytes"));
        if version != FORMAT_VERSION {
            return Err(ResultsError::UnsupportedVersion(version));
        }
        let mut offset = 12;
        let header = match read_frame(&mut input, &mut offset)? {
            Frame::Complete(KIND_HEADER, payload) => {
                serde_json::from_slice(&payload).map_err(|e| ResultsError::Corrupt {
                    offset: 12,
                    reason: format!("unreadable header: {e}"),
                })?
            }
            Frame::Complete(kind, _) => {
                return Err(ResultsError::Corrupt {
                    offset: 12,
                    reason: format!("expected the header, found a frame of kind {kind}"),
                })
            }
            Frame::End | Frame::Truncated => {
                return Err(ResultsError::Corrupt {
                    offset: 12,
                    reason: "the file ends before its header is complete".into(),
                })
            }
        };
        Ok(ResultsReader {
            input,
            header,
            footer: None,
            offset,
            truncated: false,
            done: false,
        })
    }

    pub fn header(&self) -> &RunHeader {
        &self.header
    }

    /// The next second, or `None` at the end of the file.
    pub fn next_interval(&mut self) -> Result<Option<(u64, Recorder)>, ResultsError> {
        while !self.done {
            let at = self.offset;
            match read_frame(&mut self.input, &mut self.offset)? {
                Frame::Complete(KIND_INTERVAL, payload) => {
                    let record: IntervalRecord =
                        serde_json::from_slice(&payload).map_err(|e| ResultsError::Corrupt {
                            offset: at,
                            reason: format!("unreadable interval: {e}"),
                        })?;
                    let second = record.second;
                    let rec = record
                        .into_recorder()
                        .map_err(|reason| ResultsError::Corrupt { offset: at, reason })?;
                    return Ok(Some((second, rec)));
                }
                Frame::Complete(KIND_FOOTER, payload) => {
                    self.footer = Some(serde_json::from_slice(&payload).map_err(|e| {
                        ResultsError::Corrupt {
                            offset: at,
                            reason: format!("unreadable footer: {e}"),
                        }
                    })?);
                    self.done = true;
                }
                // Unknown kinds from a later minor version are skipped.
                Frame::Complete(_, _) => {}
                Frame::End => self.done = true,
                Frame::Truncated => {
                    self.truncated = true;
                    self.done = true;
                }
            }
        }
        Ok(None)
    }

    /// The footer, once the last interval has been read; `None` for a run
    /// that was killed before it could write one.
    pub fn footer(&self) -> Option<&RunFooter> {
        self.footer.as_ref()
    }

    /// Whether the file ended in the middle of a frame.
    pub fn truncated(&self) -> bool {
        self.truncated
    }
}

enum Frame {
    Complete(u8, Vec<u8>),
    /// Clean end of file at a frame boundary.
    End,
    /// The file ends inside a frame: the writer was killed.
    Truncated,
}

fn read_frame<R: Read>(input: &mut R, offset: &mut u64) -> Result<Frame, ResultsError> {
    let mut head = [0u8; 9];
    match read_full(input, &mut head)? {
        0 => return Ok(Frame::End),
        9 => {}
        _ => return Ok(Frame::Truncated),
    }
    let kind = head[0];
    let len = u32::from_le_bytes(head[1..5].try_into().expect("4 bytes"));
    let crc = u32::from_le_bytes(head[5..9].try_into().expect("4 bytes"));
    if len > MAX_FRAME {
        return Err(ResultsError::Corrupt {
            offset: *offset,
            reason: format!("a frame claims {len} bytes"),
        });
    }
    let mut payload = vec![0u8; len as usize];
    if read_full(input, &mut payload)? < payload.len() {
        return Ok(Frame::Truncated);
    }
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&[kind]);
    hasher.update(&payload);
    if hasher.finalize() != crc {
        return Err(ResultsError::Corrupt {
            offset: *offset,
            reason: "checksum mismatch".into(),
        });
    }
    *offset += 9 + u64::from(len);
    Ok(Frame::Complete(kind, payload))
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full<R: Read>(input: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// One second of a recorder, as stored.
#[derive(Debug, Serialize, Deserialize)]
struct IntervalRecord {
    second: u64,
    requests: u64,
    successes: u64,
    bytes_in: u64,
    body_bytes_in: u64,
    bytes_out: u64,
    reused: u64,
    connections: u64,
    first_intended: u64,
    last_sent: u64,
    last_done: u64,
    /// `[code, count]` for codes that occurred.
    statuses: Vec<(u16, u64)>,
    /// Counts for kinds that occurred.
    errors: Vec<(ErrorKind, u64)>,
    /// `[target, requests, successes, errors]` for targets with requests.
    #[serde(default)]
    targets: Vec<(u32, u64, u64, u64)>,
    /// Status classes, error kinds and response time per target with
    /// requests (absent in files from before per-target latency).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    target_detail: Vec<TargetDetail>,
    examples: Vec<(ErrorKind, String)>,
    /// HdrHistogram V2 + deflate, base64: response, service, send_lag,
    /// ttfb, connect, tls.
    histograms: [String; 6],
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
    /// Response time, encoded like the run's histograms (2 significant
    /// digits); absent for targets beyond the timed ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    response: Option<String>,
}

fn encode(h: &Histogram<u64>) -> io::Result<String> {
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

/// Checks the histogram's own header before hdrhistogram sees it: its
/// deserialiser allocates whatever payload length and bounds a file
/// claims, so a 100-byte crafted file could ask for gigabytes.
fn check_histogram_header(bytes: &[u8]) -> Result<(), String> {
    use std::io::Read;
    let word = |b: &[u8], at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    if word(bytes, 0) != Some(V2_COMPRESSED_COOKIE) {
        return Err("not a compressed V2 histogram".into());
    }
    let mut head = [0u8; 40];
    flate2::read::ZlibDecoder::new(bytes.get(8..).unwrap_or_default())
        .read_exact(&mut head)
        .map_err(|e| format!("bad histogram compression: {e}"))?;
    let (cookie, payload, digits) = (word(&head, 0), word(&head, 4), word(&head, 12));
    if cookie != Some(V2_COOKIE) {
        return Err("bad histogram cookie".into());
    }
    if payload.is_none_or(|p| p > MAX_HISTOGRAM_PAYLOAD) {
        return Err("a histogram claims an impossible size".into());
    }
    if digits.is_none_or(|d| d > u32::from(crate::recorder::SIGNIFICANT_DIGITS)) {
        return Err("a histogram claims more precision than pelt records".into());
    }
    Ok(())
}

fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("bad histogram encoding: {e}"))?;
    check_histogram_header(&bytes)?;
    let h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| format!("bad histogram: {e:?}"))?;
    // Re-home into pelt's bounds so recorders from any file merge.
    let mut out = crate::recorder::new_histogram();
    out.add(&h)
        .map_err(|e| format!("histogram outside pelt's range: {e:?}"))?;
    Ok(out)
}

/// Decodes a per-target histogram into the per-target bounds.
fn decode_target(text: &str) -> Result<Histogram<u64>, String> {
    let h = decode(text)?;
    let mut out = crate::recorder::new_target_histogram();
    out.add(&h)
        .map_err(|e| format!("target histogram outside pelt's range: {e:?}"))?;
    Ok(out)
}

impl IntervalRecord {
    fn from_recorder(second: u64, r: &Recorder) -> io::Result<IntervalRecord> {
        Ok(IntervalRecord {
            second,
            requests: r.requests,
            successes: r.successes,
            bytes_in: r.bytes_in,
            body_bytes_in: r.body_bytes_in,
            bytes_out: r.bytes_out,
            reused: r.reused,
            connections: r.connections,
            first_intended: r.first_intended,
            last_sent: r.last_sent,
            last_done: r.last_done,
            statuses: r.status_counts().collect(),
            errors: ErrorKind::ALL
                .iter()
                .filter(|k| r.errors[k.index()] > 0)
                .map(|&k| (k, r.errors[k.index()]))
                .collect(),
            targets: r
                .targets
                .iter()
                .enumerate()
                .filter(|(_, t)| t.requests > 0)
                .map(|(i, t)| (i as u32, t.requests, t.successes, t.errors))
                .collect(),
            target_detail: r
                .targets
                .iter()
                .enumerate()
                .filter(|(_, t)| t.requests > 0)
                .map(|(i, t)| {
                    Ok(TargetDetail {
                        target: i as u32,
                        classes: t.classes().collect(),
                        errors: ErrorKind::ALL
                            .iter()
                            .filter(|k| t.error_kinds[k.index()] > 0)
                            .map(|&k| (k, t.error_kinds[k.index()]))
                            .collect(),
                        response: t.response.as_deref().map(encode).transpose()?,
                    })
                })
                .collect::<io::Result<_>>()?,
            examples: r
                .examples
                .iter()
                .map(|e| (e.kind, e.message.clone()))
                .collect(),
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

    fn into_recorder(self) -> Result<Recorder, String> {
        let mut r = Recorder::new();
        let [response, service, send_lag, ttfb, connect, tls] = self.histograms;
        r.response = decode(&response)?;
        r.service = decode(&service)?;
        r.send_lag = decode(&send_lag)?;
        r.ttfb = decode(&ttfb)?;
        r.connect = decode(&connect)?;
        r.tls = decode(&tls)?;
        r.requests = self.requests;
        r.successes = self.successes;
        r.bytes_in = self.bytes_in;
        r.body_bytes_in = self.body_bytes_in;
        r.bytes_out = self.bytes_out;
        r.reused = self.reused;
        r.connections = self.connections;
        r.first_intended = self.first_intended;
        r.last_sent = self.last_sent;
        r.last_done = self.last_done;
        for (code, n) in self.statuses {
            let slot = r
                .statuses
                .get_mut(usize::from(code).min(MAX_STATUS))
                .ok_or("status code out of range")?;
            *slot += n;
        }
        for (kind, n) in self.errors {
            r.errors[kind.index()] += n;
        }
        for (t, requests, successes, errors) in self.targets {
            // A bound on what a file may make us allocate.
            let i = t as usize;
            if i >= 1 << 20 {
                return Err("target index out of range".into());
            }
            if i >= r.targets.len() {
                r.targets
                    .resize_with(i + 1, crate::recorder::TargetStats::default);
            }
            let t = &mut r.targets[i];
            (t.requests, t.successes, t.errors) = (requests, successes, errors);
        }
        for d in self.target_detail {
            let t = r
                .targets
                .get_mut(d.target as usize)
                .ok_or("target detail for a target without counts")?;
            for (class, n) in d.classes {
                *t.status_classes
                    .get_mut(usize::from(class))
                    .ok_or("status class out of range")? += n;
            }
            for (kind, n) in d.errors {
                t.error_kinds[kind.index()] += n;
            }
            if let Some(h) = d.response {
                t.response = Some(Box::new(decode_target(&h)?));
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
    use super::*;
    use crate::config::{Load, RunConfig, Stop, Target};
    use crate::header::{Environment, ThreadLoad};
    use crate::sample::Sample;
    use crate::summary::{SummaryBuilder, Warning};
    use crate::url::Url;
    use proptest::prelude::*;

    fn header() -> RunHeader {
        RunHeader {
            config: RunConfig::new(
                vec![Target::get(Url::parse("http://127.0.0.1:1/x").unwrap())],
                Load::rate_of(100.0, 4),
                Stop::default(),
            ),
            env: Environment {
                pelt_version: "test".into(),
                os: "linux".into(),
                arch: "x86_64".into(),
                cores: 2,
                threads: 1,
                target_addrs: vec!["127.0.0.1:1".into()],
                started_unix_ms: 1_795_000_000_000,
            },
            measure_start_unix_ns: 1_795_000_000_000_000_000,
            measure_from_ns: 0,
        }
    }

    fn recorder(samples: &[(u64, u64, u16, Option<ErrorKind>)]) -> Recorder {
        let mut r = Recorder::new();
        for &(intended, service, status, error) in samples {
            r.record(&Sample {
                target: (intended % 3) as u32,
                intended,
                sent: Some(intended + 10),
                first_byte: Some(intended + 10 + service / 2),
                done: intended + 10 + service,
                status,
                bytes_in: 100,
                body_bytes: 40,
                bytes_out: 60,
                reused: intended % 2 == 0,
                error,
            });
            if let Some(k) = error {
                r.add_example(k, format!("<{k:?}> \"quoted\"\n"));
            }
        }
        r.record_connection(1234, Some(5678));
        r
    }

    fn write(intervals: &[(u64, Recorder)], footer: Option<&RunFooter>) -> Vec<u8> {
        write_with(&header(), intervals, footer)
    }

    fn write_with(
        header: &RunHeader,
        intervals: &[(u64, Recorder)],
        footer: Option<&RunFooter>,
    ) -> Vec<u8> {
        let mut w = ResultsWriter::new(Vec::new(), header).unwrap();
        for (second, r) in intervals {
            w.interval(*second, r).unwrap();
        }
        match footer {
            Some(f) => w.finish(f).unwrap(),
            None => w.out,
        }
    }

    /// Intervals, footer, and whether the file was cut short.
    type ReadBack = (Vec<(u64, Recorder)>, Option<RunFooter>, bool);

    fn read_all(bytes: &[u8]) -> Result<ReadBack, ResultsError> {
        let mut r = ResultsReader::open(bytes)?;
        assert_eq!(r.header(), &header());
        let mut out = Vec::new();
        while let Some(i) = r.next_interval()? {
            out.push(i);
        }
        Ok((out, r.footer().cloned(), r.truncated()))
    }

    fn sample_strategy() -> impl Strategy<Value = (u64, u64, u16, Option<ErrorKind>)> {
        (
            0u64..10_000_000_000,
            1u64..3_600_000_000_000,
            prop::sample::select(vec![200u16, 201, 302, 404, 500, 999]),
            prop::option::of(prop::sample::select(ErrorKind::ALL.to_vec())),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn record_file_report_round_trip(
            seconds in prop::collection::vec(prop::collection::vec(sample_strategy(), 0..30), 1..6),
        ) {
            let intervals: Vec<(u64, Recorder)> = seconds
                .iter()
                .enumerate()
                .map(|(i, s)| (1_795_000_000 + i as u64, recorder(s)))
                .collect();
            let footer = RunFooter { duration_ns: 5, elapsed_ns: 6, warmup_requests: 7, interrupted: false, worker_load: vec![ThreadLoad { on_cpu: 0.5, waiting: 0.125 }] };
            let bytes = write(&intervals, Some(&footer));
            let (back, f, truncated) = read_all(&bytes).unwrap();
            prop_assert_eq!(f, Some(footer));
            prop_assert!(!truncated);
            prop_assert_eq!(back.len(), intervals.len());
            for ((s1, r1), (s2, r2)) in intervals.iter().zip(&back) {
                prop_assert_eq!(s1, s2);
                crate::recorder::assert_same(r1, r2);
                prop_assert_eq!(&r1.examples, &r2.examples);
            }
        }
    }

    /// The busiest worker thread decides: one that wanted a CPU 90 % of the
    /// run or more gets a warning, however idle the others were, and the
    /// warning comes back from the file as it was given live.
    #[test]
    fn a_busy_worker_thread_is_a_warning_that_survives_the_file() {
        let busy = |loads: Vec<ThreadLoad>| {
            let footer = RunFooter {
                duration_ns: 1_000_000_000,
                elapsed_ns: 1_000_000_000,
                warmup_requests: 0,
                interrupted: false,
                worker_load: loads,
            };
            let bytes = write(&[], Some(&footer));
            let mut reader = ResultsReader::open(&bytes[..]).unwrap();
            while reader.next_interval().unwrap().is_some() {}
            let summary =
                SummaryBuilder::new(reader.header().clone(), None).finish(reader.footer());
            summary
                .warnings
                .into_iter()
                .find(|w| matches!(w, Warning::ClientBusy { .. }))
        };
        let load = |on_cpu, waiting| ThreadLoad { on_cpu, waiting };
        assert_eq!(busy(vec![]), None);
        assert_eq!(busy(vec![load(0.5, 0.1), load(0.85, 0.04)]), None);
        assert_eq!(busy(vec![load(0.6, 0.2999)]), None);
        // Exactly 90 %, though 0.6 + 0.3 < 0.9 in floating point.
        assert_eq!(
            busy(vec![load(0.6, 0.3)]),
            Some(Warning::ClientBusy {
                on_cpu: 0.6,
                waiting: 0.3,
                threads: 1
            })
        );
        assert_eq!(
            busy(vec![load(0.2, 0.0), load(0.75, 0.2)]),
            Some(Warning::ClientBusy {
                on_cpu: 0.75,
                waiting: 0.2,
                threads: 2
            })
        );
    }

    /// A run of a few milliseconds is mostly its threads' start: however
    /// busy they were, no warning (`pelt URL -n 1` was flagged more often
    /// than not). From a second on, warm-up included, the shares count.
    #[test]
    fn a_run_too_short_to_say_is_not_client_busy() {
        let busy = |elapsed_ns: u64, warmup: std::time::Duration| {
            let footer = RunFooter {
                duration_ns: elapsed_ns,
                elapsed_ns,
                warmup_requests: 0,
                interrupted: false,
                worker_load: vec![ThreadLoad {
                    on_cpu: 0.6,
                    waiting: 0.39,
                }],
            };
            let mut header = header();
            header.config.warmup = warmup;
            let bytes = write_with(&header, &[], Some(&footer));
            let mut reader = ResultsReader::open(&bytes[..]).unwrap();
            while reader.next_interval().unwrap().is_some() {}
            let summary =
                SummaryBuilder::new(reader.header().clone(), None).finish(reader.footer());
            let busy = summary
                .warnings
                .iter()
                .any(|w| matches!(w, Warning::ClientBusy { .. }));
            // The figures are reported all the same.
            assert_eq!(summary.worker_load, footer.worker_load);
            busy
        };
        let none = std::time::Duration::ZERO;
        assert!(!busy(1_400_000, none));
        assert!(!busy(999_000_000, none));
        assert!(busy(1_000_000_000, none));
        assert!(busy(200_000_000, std::time::Duration::from_secs(1)));
    }

    /// Footers from before pelt measured its own threads still read.
    #[test]
    fn footers_without_worker_load_still_read() {
        let old = r#"{"duration_ns":5,"elapsed_ns":6,"warmup_requests":7,"interrupted":false}"#;
        let f: RunFooter = serde_json::from_str(old).unwrap();
        assert!(f.worker_load.is_empty());
        // And a footer without it is written as before.
        assert_eq!(serde_json::to_string(&f).unwrap(), old);
    }

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
        assert_eq!(back.targets[0].requests, 1);
        assert_eq!(back.targets[1].requests, 1);
        assert!(back.targets[0].response.is_none());
        assert_eq!(back.targets[1].status_classes, [0; 10]);
        // With the detail, classes and histograms come back.
        let full = IntervalRecord::from_recorder(100, &r)
            .unwrap()
            .into_recorder()
            .unwrap();
        assert_eq!(full.targets[1].status_classes[5], 1);
        assert_eq!(full.targets[1].response.as_ref().unwrap().len(), 1);
    }

    #[test]
    fn a_killed_writer_leaves_every_complete_second_readable() {
        let intervals: Vec<(u64, Recorder)> = (0..4)
            .map(|i| (100 + i, recorder(&[(i * 1000, 5_000_000, 200, None)])))
            .collect();
        let bytes = write(&intervals, None);
        // Cut the file anywhere inside the last frame, as SIGKILL would.
        let without_last = write(&intervals[..3], None).len();
        for cut in [without_last + 1, without_last + 9, bytes.len() - 1] {
            let (back, footer, truncated) = read_all(&bytes[..cut]).unwrap();
            assert_eq!(back.len(), 3, "cut at {cut}");
            assert!(footer.is_none());
            assert!(truncated);
        }
        let (back, _, truncated) = read_all(&bytes).unwrap();
        assert_eq!((back.len(), truncated), (4, false));
    }

    #[test]
    fn headers_and_footers_of_one_run_merge() {
        let mut a = header();
        let mut b = header();
        b.env.target_addrs = vec!["127.0.0.1:2".into()];
        b.measure_start_unix_ns -= 5;
        a.merge(&b).unwrap();
        assert_eq!(a.config.load, crate::config::Load::rate_of(200.0, 8));
        assert_eq!((a.env.threads, a.env.cores), (2, 4));
        assert_eq!(a.env.target_addrs.len(), 2);
        assert_eq!(a.measure_start_unix_ns, b.measure_start_unix_ns);
        let mut closed = header();
        closed.config.load = crate::config::Load::closed(3);
        assert_eq!(a.merge(&closed), Err(crate::header::NotOneRun::LoadModels));

        let load = |on_cpu| ThreadLoad {
            on_cpu,
            waiting: 0.0,
        };
        let f = RunFooter {
            duration_ns: 5,
            elapsed_ns: 9,
            warmup_requests: 1,
            interrupted: false,
            worker_load: vec![load(0.5)],
        };
        let g = RunFooter {
            duration_ns: 7,
            elapsed_ns: 8,
            warmup_requests: 2,
            interrupted: true,
            worker_load: vec![load(0.25), load(0.75)],
        };
        // Each machine's threads stay threads of the merged run.
        assert_eq!(
            f.merge(&g),
            RunFooter {
                duration_ns: 7,
                elapsed_ns: 9,
                warmup_requests: 3,
                interrupted: true,
                worker_load: vec![load(0.5), load(0.25), load(0.75)],
            }
        );
        // A file that does not say makes the merged run not say: "busiest
        // of 1 thread" would hide the other file's threads.
        let unmeasured = RunFooter {
            worker_load: Vec::new(),
            ..g.clone()
        };
        assert_eq!(f.merge(&unmeasured).worker_load, vec![]);
        assert_eq!(unmeasured.merge(&f).worker_load, vec![]);
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
        let err = decode(&text).unwrap_err();
        assert!(err.contains("impossible size"), "{err}");
        // And a real one still decodes.
        let mut h = crate::recorder::new_histogram();
        h.record(12345).unwrap();
        let back = decode(&encode(&h).unwrap()).unwrap();
        assert_eq!(back.len(), 1);
    }

    #[test]
    fn corruption_and_foreign_files_are_refused() {
        let intervals = vec![(100, recorder(&[(0, 5_000_000, 200, None)]))];
        let mut bytes = write(&intervals, None);
        let middle = bytes.len() - 20;
        bytes[middle] ^= 0x40;
        let err = read_all(&bytes).unwrap_err();
        assert!(err.to_string().contains("checksum mismatch"), "{err}");
        let err = ResultsReader::open(&b"[workspace]\nmembers = []\n"[..]).unwrap_err();
        assert!(matches!(err, ResultsError::NotResults), "{err}");
        let mut future = write(&[], None);
        future[8] = 9;
        let err = ResultsReader::open(&future[..]).unwrap_err();
        assert!(err.to_string().contains("upgrade pelt"), "{err}");
    }
}
