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

mod merge;
mod record;
#[cfg(test)]
pub(crate) mod testing;

pub use crate::header::{RunFooter, RunHeader};
pub use merge::{MergeError, MergedReader};
pub use record::HistogramError;

use crate::recorder::Recorder;
use crate::secrets::Redactor;
use record::IntervalRecord;

/// `rec` written as a results file's interval record and read back
/// (tests elsewhere in the crate).
#[cfg(test)]
pub(crate) fn through_record(rec: &crate::Recorder) -> crate::Recorder {
    IntervalRecord::from_recorder(0, rec)
        .expect("a recorder encodes")
        .into_recorder()
        .expect("and decodes")
}
use std::io::{self, Read, Write};

/// The first eight bytes of every results file.
pub const MAGIC: &[u8; 8] = b"PELT-RUN";
/// The version of the layout this pelt writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// No frame is this large; a length beyond it means a foreign or corrupt file.
const MAX_FRAME: u32 = 64 << 20;

const KIND_HEADER: u8 = 1;
const KIND_INTERVAL: u8 = 2;
const KIND_FOOTER: u8 = 3;

/// Why a results file cannot be read, phrased for the user.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// The file does not start with [`MAGIC`].
    #[error("not a pelt results file (it does not start with PELT-RUN); give a file written by pelt run -o")]
    NotResults,
    /// A version this pelt does not know (a newer pelt wrote it).
    #[error("results format version {0} is newer than this pelt understands ({FORMAT_VERSION}); upgrade pelt")]
    UnsupportedVersion(u32),
    /// The file's bytes are not what pelt wrote.
    #[error("corrupt results file at byte {offset}: {reason}; the file changed after pelt wrote it (a bad copy or disk?): use another copy, or run again")]
    Corrupt {
        /// Where the bad frame starts, in bytes from the file's start.
        offset: u64,
        /// What is wrong there.
        reason: Corruption,
    },
    /// Reading failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// What is wrong inside a corrupt results file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Corruption {
    /// A frame's JSON does not read (`frame` names which: header,
    /// interval or footer).
    #[error("unreadable {frame}: {detail}")]
    Unreadable {
        /// The kind of frame.
        frame: &'static str,
        /// The JSON parser's message.
        detail: String,
    },
    /// The first frame is not the header (its kind is given).
    #[error("expected the header, found a frame of kind {0}")]
    NotHeader(u8),
    /// The file ends inside its header.
    #[error("the file ends before its header is complete")]
    HeaderCut,
    /// A frame claims more bytes than any frame pelt writes.
    #[error("a frame claims {0} bytes")]
    FrameTooLarge(u32),
    /// The frame's CRC-32 does not match its bytes.
    #[error("checksum mismatch")]
    Checksum,
    /// A histogram in an interval does not decode.
    #[error(transparent)]
    Histogram(#[from] HistogramError),
    /// An interval's counts do not fit together (what is wrong is given).
    #[error("{0}")]
    Counts(&'static str),
}

/// Appends a run to a results file, flushing every frame so that what was
/// written survives the process being killed.
///
/// Secrets stay out by default: [`ResultsWriter::new`] writes the header's
/// configuration through a [`Redactor`] (secret headers, query parameters
/// and a login's body replaced by `REDACTED`) and scrubs the values it
/// replaced from every second's error messages. A file with the real
/// values is asked for by name: [`ResultsWriter::unredacted`].
#[derive(Debug)]
pub struct ResultsWriter<W: Write> {
    out: W,
    /// `None` only when asked for ([`ResultsWriter::unredacted`]).
    secrets: Option<Redactor>,
}

impl<W: Write> ResultsWriter<W> {
    /// Writes the magic, version and header, the header's secrets
    /// replaced by the default rules ([`Redactor::for_config`]).
    pub fn new(out: W, header: &RunHeader) -> io::Result<ResultsWriter<W>> {
        let secrets = Redactor::for_config(&header.config);
        Self::with_redactor(out, header, secrets)
    }

    /// Like [`ResultsWriter::new`], with rules of the caller's (more
    /// secret headers or parameters, see [`Redactor::new`]). The values
    /// `header`'s configuration uses are learnt here.
    pub fn with_redactor(
        out: W,
        header: &RunHeader,
        mut secrets: Redactor,
    ) -> io::Result<ResultsWriter<W>> {
        secrets.learn(&header.config);
        let header = secrets.header(header);
        Self::start(out, &header, Some(secrets))
    }

    /// Writes `header` as it is, secrets included: for a caller that has
    /// redacted it already, or that means to keep them.
    pub fn unredacted(out: W, header: &RunHeader) -> io::Result<ResultsWriter<W>> {
        Self::start(out, header, None)
    }

    fn start(
        mut out: W,
        header: &RunHeader,
        secrets: Option<Redactor>,
    ) -> io::Result<ResultsWriter<W>> {
        out.write_all(MAGIC)?;
        out.write_all(&FORMAT_VERSION.to_le_bytes())?;
        let mut w = ResultsWriter { out, secrets };
        w.frame(KIND_HEADER, &serde_json::to_vec(header)?)?;
        Ok(w)
    }

    /// Appends one second of the run (its error messages scrubbed of the
    /// run's secret values, unless [`ResultsWriter::unredacted`]).
    pub fn interval(&mut self, unix_second: u64, rec: &Recorder) -> io::Result<()> {
        let record = match &self.secrets {
            // Most seconds hold no secret: the recorder is copied only
            // when one does.
            Some(secrets) if secrets.recorder_needs(rec) => {
                let mut copy = rec.clone();
                secrets.recorder(&mut copy);
                IntervalRecord::from_recorder(unix_second, &copy)?
            }
            _ => IntervalRecord::from_recorder(unix_second, rec)?,
        };
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
                    reason: Corruption::Unreadable {
                        frame: "header",
                        detail: e.to_string(),
                    },
                })?
            }
            Frame::Complete(kind, _) => {
                return Err(ResultsError::Corrupt {
                    offset: 12,
                    reason: Corruption::NotHeader(kind),
                })
            }
            Frame::End | Frame::Truncated => {
                return Err(ResultsError::Corrupt {
                    offset: 12,
                    reason: Corruption::HeaderCut,
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

    /// The run's header.
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
                            reason: Corruption::Unreadable {
                                frame: "interval",
                                detail: e.to_string(),
                            },
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
                            reason: Corruption::Unreadable {
                                frame: "footer",
                                detail: e.to_string(),
                            },
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
            reason: Corruption::FrameTooLarge(len),
        });
    }
    // Grown by what arrives, not sized by what the header claims: a
    // damaged length in a short file allocates only the bytes there are.
    let mut payload = Vec::new();
    read_up_to(input, u64::from(len), &mut payload)?;
    if payload.len() < len as usize {
        return Ok(Frame::Truncated);
    }
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&[kind]);
    hasher.update(&payload);
    if hasher.finalize() != crc {
        return Err(ResultsError::Corrupt {
            offset: *offset,
            reason: Corruption::Checksum,
        });
    }
    *offset += 9 + u64::from(len);
    Ok(Frame::Complete(kind, payload))
}

/// Appends up to `n` bytes of `input` to `out`, fewer if it ends first.
fn read_up_to<R: Read>(input: &mut R, n: u64, out: &mut Vec<u8>) -> io::Result<()> {
    input.take(n).read_to_end(out).map(|_| ())
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

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use crate::error_kind::ErrorKind;
    use crate::header::{StopCause, ThreadLoad};
    use crate::summary::{SummaryBuilder, Warning};
    use proptest::prelude::*;

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
            let footer = RunFooter { duration_ns: 5, elapsed_ns: 6, warmup_requests: 7, interrupted: true, stopped_by: Some(StopCause::Abort { rule: "failed > 50% for 2s".into(), at_s: 2.5 }), worker_load: vec![ThreadLoad { on_cpu: 0.5, waiting: 0.125 }], server_software: Some("nginx/1.22.1".into()) };
            let bytes = write(&intervals, Some(&footer));
            let (back, f, truncated) = read_all(&bytes).unwrap();
            prop_assert_eq!(f, Some(footer));
            prop_assert!(!truncated);
            prop_assert_eq!(back.len(), intervals.len());
            for ((s1, r1), (s2, r2)) in intervals.iter().zip(&back) {
                prop_assert_eq!(s1, s2);
                crate::recorder::assert_same(r1, r2);
                prop_assert_eq!(&r1.examples, &r2.examples);
                prop_assert_eq!(r1.lag1, r2.lag1);
            }
        }
    }

    /// A run made by a debug build says so in its environment, and its
    /// summary warns, from the file as live; an optimised build's file
    /// does not carry the field at all (older files read the same).
    #[test]
    fn a_debug_build_is_recorded_and_warned_about() {
        let warned = |debug_build: bool| {
            let mut header = testing::header();
            header.env.debug_build = debug_build;
            let footer = RunFooter {
                duration_ns: 1_000_000_000,
                elapsed_ns: 1_000_000_000,
                warmup_requests: 0,
                interrupted: false,
                stopped_by: None,
                worker_load: vec![],
                server_software: None,
            };
            let bytes = ResultsWriter::new(Vec::new(), &header)
                .unwrap()
                .finish(&footer)
                .unwrap();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            assert_eq!(text.contains("\"debug_build\""), debug_build, "{text}");
            let mut reader = ResultsReader::open(&bytes[..]).unwrap();
            while reader.next_interval().unwrap().is_some() {}
            assert_eq!(reader.header().env.debug_build, debug_build);
            let summary =
                SummaryBuilder::new(reader.header().clone(), None).finish(reader.footer());
            summary.warnings.contains(&Warning::DebugBuild)
        };
        assert!(warned(true));
        assert!(!warned(false));
        // The advice says what to do.
        assert!(Warning::DebugBuild.to_string().contains("--release"));
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
                stopped_by: None,
                worker_load: loads,
                server_software: None,
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
        // Waiting under a quarter of the run (see the starved bound's
        // own test below), so only the sum counts.
        assert_eq!(busy(vec![load(0.66, 0.2399)]), None);
        // Exactly 90 %, though 0.7 + 0.2 < 0.9 in floating point.
        assert_eq!(
            busy(vec![load(0.7, 0.2)]),
            Some(Warning::ClientBusy {
                on_cpu: 0.7,
                waiting: 0.2,
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

    /// Issue 44: a worker on a CPU 12 % of the run and waiting for one
    /// 67 % (79 % in all, under the busy bound) set the pace of a
    /// connection-per-request run, and nothing warned. Waiting a quarter
    /// of the run is enough, and the text says the thread waited rather
    /// than worked; a thread busy on its own work is told apart.
    #[test]
    fn a_worker_waiting_for_a_cpu_is_client_bound_and_the_warning_says_so() {
        let warning = |on_cpu, waiting| {
            let footer = RunFooter {
                duration_ns: 2_000_000_000,
                elapsed_ns: 2_000_000_000,
                warmup_requests: 0,
                interrupted: false,
                stopped_by: None,
                worker_load: vec![
                    ThreadLoad {
                        on_cpu: 0.05,
                        waiting: 0.01,
                    },
                    ThreadLoad { on_cpu, waiting },
                ],
                server_software: None,
            };
            let bytes = write(&[], Some(&footer));
            let mut reader = ResultsReader::open(&bytes[..]).unwrap();
            while reader.next_interval().unwrap().is_some() {}
            SummaryBuilder::new(reader.header().clone(), None)
                .finish(reader.footer())
                .warnings
                .into_iter()
                .find(|w| matches!(w, Warning::ClientBusy { .. }))
        };
        let starved = warning(0.12, 0.67).expect("12 % on a CPU, 67 % waiting: client-bound");
        assert_eq!(
            starved,
            Warning::ClientBusy {
                on_cpu: 0.12,
                waiting: 0.67,
                threads: 2
            }
        );
        let text = starved.to_string();
        assert!(
            text.contains("waited for a CPU 67% of the run (and ran on one 12%)"),
            "{text}"
        );
        assert!(text.contains("other work on its cores"), "{text}");
        // The bound, exactly, in the shares' 0.01 % steps.
        assert!(warning(0.1, 0.25).is_some());
        assert_eq!(warning(0.1, 0.2499), None);
        // Busy on its own work: the other text.
        let busy = warning(0.93, 0.04).unwrap().to_string();
        assert!(
            busy.contains("wanted a CPU 97% of the run (93% on one"),
            "{busy}"
        );
        assert!(busy.contains("more --threads"), "{busy}");
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
                stopped_by: None,
                worker_load: vec![ThreadLoad {
                    on_cpu: 0.6,
                    waiting: 0.39,
                }],
                server_software: None,
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
        assert_eq!(f.server_software, None);
        // And a footer without it is written as before.
        assert_eq!(serde_json::to_string(&f).unwrap(), old);
    }

    /// The server's name (ab's "Server Software") is kept in the footer
    /// and comes back from the file into the summary.
    #[test]
    fn server_software_survives_the_file() {
        let footer = RunFooter {
            duration_ns: 1,
            elapsed_ns: 1,
            warmup_requests: 0,
            interrupted: false,
            stopped_by: None,
            worker_load: Vec::new(),
            server_software: Some("nginx/1.22.1".into()),
        };
        let bytes = write(&[], Some(&footer));
        let mut reader = ResultsReader::open(&bytes[..]).unwrap();
        while reader.next_interval().unwrap().is_some() {}
        let summary = SummaryBuilder::new(reader.header().clone(), None).finish(reader.footer());
        assert_eq!(summary.server_software.as_deref(), Some("nginx/1.22.1"));
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
            stopped_by: None,
            worker_load: vec![load(0.5)],
            server_software: None,
        };
        let g = RunFooter {
            duration_ns: 7,
            elapsed_ns: 8,
            warmup_requests: 2,
            interrupted: true,
            stopped_by: Some(StopCause::Signal {
                signal: "SIGTERM".into(),
            }),
            worker_load: vec![load(0.25), load(0.75)],
            server_software: Some("nginx/1.22.1".into()),
        };
        // Each machine's threads stay threads of the merged run.
        assert_eq!(
            f.merge(&g),
            RunFooter {
                duration_ns: 7,
                elapsed_ns: 9,
                warmup_requests: 3,
                interrupted: true,
                stopped_by: Some(StopCause::Signal {
                    signal: "SIGTERM".into(),
                }),
                worker_load: vec![load(0.5), load(0.25), load(0.75)],
                // Only the second machine saw a Server header.
                server_software: Some("nginx/1.22.1".into()),
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
