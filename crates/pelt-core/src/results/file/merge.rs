//! Several results files of one run, read as one: a run measured from
//! several machines, each writing its own file.

use super::{ResultsError, ResultsReader};
use crate::header::{NotOneRun, RunFooter, RunHeader};
use crate::recorder::Recorder;
use crate::shard::{Shard, ShardInfo};
use crate::summary::{ClientBound, RunSummary, SummaryBuilder, Warning, Window};
use std::io::Read;

/// Why several results files cannot be read as one run.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No file was given.
    #[error("no results file to read; give at least one written by pelt run -o")]
    NoFiles,
    /// The file at `index` (0-based, in the order given) could not be
    /// read; a caller that knows the files' names says which it was.
    #[error("results file {}: {error}", .index + 1)]
    File {
        /// Position of the file among those given.
        index: usize,
        /// What is wrong with it.
        #[source]
        error: ResultsError,
    },
    /// The files are not parts of one run.
    #[error(transparent)]
    NotOneRun(#[from] NotOneRun),
    /// A file is from another run (or the wrong kind of file) than the
    /// first: its run id, configuration or shard count differs.
    #[error("results file {}: {what}; merge only the parts of one run (the same --run-id and flags)", .index + 1)]
    ForeignShard {
        /// Position of the file among those given.
        index: usize,
        /// How it differs.
        what: String,
    },
    /// Two files are the same shard.
    #[error("results file {}: shard {shard} is given twice (also results file {}); give each shard once", .index + 1, .first + 1)]
    DuplicateShard {
        /// Position of the second file with it.
        index: usize,
        /// Position of the first.
        first: usize,
        /// The shard.
        shard: Shard,
    },
    /// Shards whose measurements do not overlap, of a run named by its
    /// flags alone (no `--start-at`, no `--run-id`): parts of two runs
    /// with the same flags, not one run.
    #[error("results file {}: shard {shard} started {} after shard {earliest} (results file {}), and the run lasts {}: their measurements do not overlap, so they are parts of two runs with the same flags (without --start-at or --run-id a run is named by its flags alone); merge the parts of one run, and give every shard the same --start-at and --run-id", .index + 1, crate::civil::span(*.apart_ns), .earliest_index + 1, crate::civil::span(*.length_ns))]
    ApartShards {
        /// Position of the file that started last.
        index: usize,
        /// Its shard.
        shard: Shard,
        /// Position of the file that started first.
        earliest_index: usize,
        /// Its shard.
        earliest: Shard,
        /// How far apart their measurements started.
        apart_ns: u64,
        /// How long the run measures.
        length_ns: u64,
    },
    /// Shards of the run are missing.
    #[error("shard{} {} of {count} missing: give every shard's results file, or add --allow-partial to merge what there is (the report then says it is partial)", if .missing.len() > 1 { "s" } else { "" }, list(.missing))]
    MissingShards {
        /// The missing shards' indexes.
        missing: Vec<u32>,
        /// How many shards the run has.
        count: u32,
    },
    /// The window leaves out every second of the run: an empty report
    /// would look like a run that sent nothing.
    #[error("--window holds none of the run's {seconds} seconds (counted from the start of measurement); pick a part within them, like --window ..{seconds}s")]
    EmptyWindow {
        /// Seconds the run has.
        seconds: u64,
    },
}

/// Several results files of one run read as one: the seconds with the
/// same wall-clock time merge (counts and histograms add), in order.
///
/// A k-way merge over the files' seconds: each file is read one second
/// at a time, and each call takes the earliest second any file has next,
/// so memory holds one second per file whatever the length of the run.
/// Every file's seconds are in order (the writer appends them as they
/// end), and seconds align across machines because intervals are cut at
/// wall-clock seconds. [`Recorder::merge`] is associative and commutative,
/// so the order of the files does not change the result (property-tested
/// below).
///
/// ```no_run
/// use pelt_core::results::{MergedReader, ResultsReader};
/// use std::{fs::File, io::BufReader};
///
/// let open = |p| ResultsReader::open(BufReader::new(File::open(p).unwrap())).unwrap();
/// let merged = MergedReader::new(vec![open("a.pelt"), open("b.pelt")]).unwrap();
/// let summary = merged.summary(None).unwrap();
/// println!("{} requests", summary.total.requests);
/// ```
#[derive(Debug)]
pub struct MergedReader<R: Read> {
    readers: Vec<ResultsReader<R>>,
    /// Each file's next second, read ahead; `None` once a file is done.
    heads: Vec<Option<(u64, Recorder)>>,
    header: RunHeader,
    /// A sharded run: what the merged report must say about its parts.
    shards: Option<Shards>,
}

/// The parts of a sharded run, as merged.
#[derive(Debug, Clone)]
struct Shards {
    count: u32,
    /// Each file's shard info, in the order given.
    parts: Vec<ShardInfo>,
    missing: Vec<u32>,
}

/// "1, 3 and 4".
fn list(items: &[u32]) -> String {
    let s: Vec<String> = items.iter().map(u32::to_string).collect();
    match s.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => s.join(""),
    }
}

pub use crate::shard::LATE_START_NS;

/// Checks that sharded files are each shard of one run exactly once:
/// `None` when no file is sharded.
fn check_shards(headers: &[&RunHeader], allow_partial: bool) -> Result<Option<Shards>, MergeError> {
    let Some(first) = headers.iter().find_map(|h| h.shard.as_ref()) else {
        return Ok(None);
    };
    let mut parts = Vec::new();
    let mut seen: Vec<Option<usize>> = vec![None; first.shard.count as usize];
    for (index, h) in headers.iter().enumerate() {
        let foreign = |what: String| MergeError::ForeignShard { index, what };
        let Some(info) = &h.shard else {
            return Err(foreign(format!(
                "it is a whole run, not a shard of run {}",
                first.run_id
            )));
        };
        if info.run_id != first.run_id {
            return Err(foreign(format!(
                "shard {} is from run {}, not {}",
                info.shard, info.run_id, first.run_id
            )));
        }
        if info.config_hash != first.config_hash || info.shard.count != first.shard.count {
            return Err(foreign(format!(
                "shard {} of run {} was run with other flags (configuration {} of {} shards, not {} of {})",
                info.shard, info.run_id, info.config_hash, info.shard.count, first.config_hash, first.shard.count
            )));
        }
        let slot = &mut seen[info.shard.index as usize];
        if let Some(first) = *slot {
            return Err(MergeError::DuplicateShard {
                index,
                first,
                shard: info.shard,
            });
        }
        *slot = Some(index);
        parts.push(info.clone());
    }
    apart(headers)?;
    let missing: Vec<u32> = (0..first.shard.count)
        .filter(|&i| seen[i as usize].is_none())
        .collect();
    if !missing.is_empty() && !allow_partial {
        return Err(MergeError::MissingShards {
            missing,
            count: first.shard.count,
        });
    }
    Ok(Some(Shards {
        count: first.shard.count,
        parts,
        missing,
    }))
}

/// Refuses shards of a run named by its flags alone (no `--start-at`, no
/// `--run-id`: two runs with the same flags share the name) whose
/// measurements started further apart than the run lasts: they cannot
/// be one run's parts (issue 35: shards 2.1 s apart merged as "600
/// planned in 2.00s"). Closer starts are one run started unevenly, which
/// the `sharded` warning names.
fn apart(headers: &[&RunHeader]) -> Result<(), MergeError> {
    let config = &headers[0].config;
    if config.start_at_unix_ns.is_some() || config.run_id.is_some() {
        return Ok(());
    }
    let Some(length) = config.effective_stop().duration else {
        return Ok(());
    };
    let start = |i: &usize| headers[*i].measure_start_unix_ns;
    let all = 0..headers.len();
    let (Some(earliest), Some(latest)) = (all.clone().min_by_key(start), all.max_by_key(start))
    else {
        return Ok(());
    };
    let apart_ns = start(&latest) - start(&earliest);
    let length_ns = length.as_nanos() as u64;
    let shard = |i: usize| headers[i].shard.as_ref().map(|s| s.shard);
    match (shard(latest), shard(earliest)) {
        (Some(shard), Some(first)) if apart_ns >= length_ns => Err(MergeError::ApartShards {
            index: latest,
            shard,
            earliest_index: earliest,
            earliest: first,
            apart_ns,
            length_ns,
        }),
        _ => Ok(()),
    }
}

impl<R: Read> MergedReader<R> {
    /// Merges the files' headers ([`RunHeader::merge`]: loads add, the
    /// earliest start wins) and reads each file's first second.
    ///
    /// Shards of one run (`--shard`) must each be there exactly once, with
    /// the same run id and configuration; their header is the whole run's.
    pub fn new(readers: Vec<ResultsReader<R>>) -> Result<MergedReader<R>, MergeError> {
        MergedReader::with_partial(readers, false)
    }

    /// As [`MergedReader::new`]; with `allow_partial`, shards may be
    /// missing (the summary then warns that the run is partial).
    pub fn with_partial(
        readers: Vec<ResultsReader<R>>,
        allow_partial: bool,
    ) -> Result<MergedReader<R>, MergeError> {
        let (first, rest) = readers.split_first().ok_or(MergeError::NoFiles)?;
        let headers: Vec<&RunHeader> = readers.iter().map(|r| r.header()).collect();
        let shards = check_shards(&headers, allow_partial)?;
        let mut header = first.header().clone();
        if shards.is_some() {
            // Every part ran the whole run's configuration: it is the
            // merged run's, not their sum.
            header.config.shard = None;
            header.shard = None;
            for r in rest {
                header.merge_environment(r.header());
            }
        } else {
            for r in rest {
                header.merge(r.header())?;
            }
        }
        let mut merged = MergedReader {
            heads: Vec::with_capacity(readers.len()),
            readers,
            header,
            shards,
        };
        for i in 0..merged.readers.len() {
            let head = merged.read(i)?;
            merged.heads.push(head);
        }
        Ok(merged)
    }

    /// One results file on its own, as it was written: nothing is merged,
    /// so a shard keeps its own configuration (its share of the offered
    /// load) and reports exactly as it did live.
    pub fn alone(reader: ResultsReader<R>) -> Result<MergedReader<R>, MergeError> {
        let header = reader.header().clone();
        let mut merged = MergedReader {
            heads: Vec::with_capacity(1),
            readers: vec![reader],
            header,
            shards: None,
        };
        let head = merged.read(0)?;
        merged.heads.push(head);
        Ok(merged)
    }

    /// The header of the run as a whole.
    pub fn header(&self) -> &RunHeader {
        &self.header
    }

    fn read(&mut self, index: usize) -> Result<Option<(u64, Recorder)>, MergeError> {
        self.readers[index]
            .next_interval()
            .map_err(|error| MergeError::File { index, error })
    }

    /// The next second across all files (Unix seconds), merged; `None`
    /// when every file has ended.
    pub fn next_interval(&mut self) -> Result<Option<(u64, Recorder)>, MergeError> {
        let Some(second) = self.heads.iter().flatten().map(|(s, _)| *s).min() else {
            return Ok(None);
        };
        let mut rec = Recorder::new();
        for i in 0..self.heads.len() {
            if self.heads[i].as_ref().is_some_and(|(s, _)| *s == second) {
                if let Some((_, r)) = self.heads[i].take() {
                    rec.merge(&r);
                }
                self.heads[i] = self.read(i)?;
            }
        }
        Ok(Some((second, rec)))
    }

    /// The files' footers combined ([`RunFooter::merge`]), once every
    /// second has been read; `None` if any file has none (its run was
    /// killed).
    pub fn footer(&self) -> Option<RunFooter> {
        let mut footers = self.readers.iter().map(|r| r.footer().cloned());
        let first = footers.next()??;
        footers.try_fold(first, |acc, f| Some(acc.merge(&f?)))
    }

    /// Reads the remaining seconds into the run's summary, as
    /// [`SummaryBuilder`] builds it live; with a `window`, only the
    /// seconds inside it count.
    pub fn summary(self, window: Option<Window>) -> Result<RunSummary, MergeError> {
        self.summary_each(window, |_, _| {})
    }

    /// As [`MergedReader::summary`], handing `each` every merged second
    /// (inside the window) as it goes: to write the merged run's own
    /// results file, say, without a second pass over the files.
    pub fn summary_each(
        mut self,
        window: Option<Window>,
        mut each: impl FnMut(u64, &Recorder),
    ) -> Result<RunSummary, MergeError> {
        let mut builder = SummaryBuilder::new(self.header.clone(), window);
        let (mut seconds, mut kept) = (0u64, 0u64);
        while let Some((second, rec)) = self.next_interval()? {
            seconds += 1;
            if builder.add(second, &rec).is_some() {
                kept += 1;
                each(second, &rec);
            }
        }
        if window.is_some() && seconds > 0 && kept == 0 {
            return Err(MergeError::EmptyWindow { seconds });
        }
        let mut summary = builder.finish(self.footer().as_ref());
        let latest = self
            .shards
            .as_ref()
            .map(|s| s.parts.iter().map(|p| p.late_ns).max().unwrap_or(0));
        if let Some(late_ns) = latest.filter(|&l| l > LATE_START_NS) {
            // The late shard is named below; its catching up is not a
            // reason to raise -c.
            crate::summary::explain_late_start(&mut summary.warnings, late_ns);
        }
        if let Some(s) = self.shards.as_ref().filter(|s| !s.missing.is_empty()) {
            // --allow-partial: the merged shards were offered their share
            // of the whole run's rate, not all of it; "the client could
            // not keep up" against the whole would be false (issue 35).
            let share = s.parts.len() as f64 / f64::from(s.count);
            summary.warnings.retain_mut(|w| match w {
                Warning::RateShortfall { offered, achieved } => {
                    *offered *= share;
                    *achieved < *offered * crate::summary::SHORTFALL_BELOW
                }
                _ => true,
            });
        }
        summary.warnings.extend(self.shard_warnings());
        Ok(summary)
    }

    /// What the merged report says about a sharded run's parts: missing
    /// shards, late starts and client-bound shards, each named.
    fn shard_warnings(&self) -> Vec<Warning> {
        let Some(shards) = &self.shards else {
            return Vec::new();
        };
        let mut w = vec![Warning::Sharded {
            run_id: shards.parts[0].run_id.clone(),
            shards: shards.count,
            merged: shards.parts.len() as u32,
            start_spread_ns: {
                let late = shards.parts.iter().map(|p| p.late_ns);
                late.clone().max().unwrap_or(0) - late.min().unwrap_or(0)
            },
            start_at: shards.parts[0].start_at_unix_ns.is_some(),
        }];
        if !shards.missing.is_empty() {
            w.push(Warning::PartialMerge {
                missing: shards.missing.clone(),
                shards: shards.count,
            });
        }
        for p in shards.parts.iter().filter(|p| p.late_ns > LATE_START_NS) {
            w.push(Warning::LateShard {
                shard: p.shard,
                late_ns: p.late_ns,
            });
        }
        for (p, r) in shards.parts.iter().zip(&self.readers) {
            let bound = r.footer().and_then(|f| {
                f.worker_load
                    .iter()
                    .filter(|t| ClientBound::of(t).is_some())
                    .map(|t| t.demand())
                    .reduce(f64::max)
            });
            if let Some(demand) = bound {
                w.push(Warning::ShardClientBusy {
                    shard: p.shard,
                    demand,
                });
            }
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use crate::error_kind::ErrorKind;
    use crate::recorder::assert_same;
    use proptest::prelude::*;

    /// One file's seconds: which of the run's first six it has, and the
    /// requests in each.
    type File = Vec<(u64, Vec<(u64, u64, u16, Option<ErrorKind>)>)>;

    fn file_strategy() -> impl Strategy<Value = File> {
        let sample = (
            0u64..10_000_000_000,
            1u64..1_000_000_000,
            prop::sample::select(vec![200u16, 404, 500]),
            prop::option::of(Just(ErrorKind::Timeout)),
        );
        prop::collection::btree_map(0u64..6, prop::collection::vec(sample, 0..8), 0..6)
            .prop_map(|m| m.into_iter().collect())
    }

    fn reader(file: &File) -> ResultsReader<std::io::Cursor<Vec<u8>>> {
        let intervals: Vec<(u64, Recorder)> = file
            .iter()
            .map(|(s, samples)| (1_795_000_000 + s, recorder(samples)))
            .collect();
        ResultsReader::open(std::io::Cursor::new(write(&intervals, None))).unwrap()
    }

    fn merged_seconds(files: &[&File]) -> Vec<(u64, Recorder)> {
        let mut m = MergedReader::new(files.iter().map(|f| reader(f)).collect()).unwrap();
        let mut out = Vec::new();
        while let Some(s) = m.next_interval().unwrap() {
            out.push(s);
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Any order of the files gives the same seconds, in order, each
        /// the sum of every file's part of it.
        #[test]
        fn merge_is_independent_of_file_order(
            files in prop::collection::vec(file_strategy(), 1..5),
            rotate in 0usize..4,
        ) {
            let given: Vec<&File> = files.iter().collect();
            let mut other = given.clone();
            let n = other.len();
            other.rotate_left(rotate % n);
            other.reverse();
            let a = merged_seconds(&given);
            let b = merged_seconds(&other);
            // Expected: every second any file has, once, in order.
            let mut expected: Vec<u64> = files
                .iter()
                .flat_map(|f| f.iter().map(|(s, _)| 1_795_000_000 + s))
                .collect();
            expected.sort_unstable();
            expected.dedup();
            prop_assert_eq!(a.iter().map(|(s, _)| *s).collect::<Vec<_>>(), expected);
            prop_assert_eq!(a.len(), b.len());
            for ((sa, ra), (sb, rb)) in a.iter().zip(&b) {
                prop_assert_eq!(sa, sb);
                assert_same(ra, rb);
                // The sum of the files' parts of that second.
                let mut sum = Recorder::new();
                for f in &files {
                    for (s, samples) in f.iter() {
                        if 1_795_000_000 + s == *sa {
                            sum.merge(&recorder(samples));
                        }
                    }
                }
                assert_same(ra, &sum);
            }
        }
    }

    #[test]
    fn headers_merge_and_mismatches_are_refused() {
        let files: File = vec![(0, vec![(0, 5_000_000, 200, None)])];
        let m = MergedReader::new(vec![reader(&files), reader(&files)]).unwrap();
        // Two machines at 100 req/s over 4 connections each.
        assert_eq!(
            m.header().config.load,
            crate::config::Load::rate_of(200.0, 8)
        );
        let mut closed = header();
        closed.config.load = crate::config::Load::closed(3);
        let other =
            ResultsReader::open(std::io::Cursor::new(write_with(&closed, &[], None))).unwrap();
        let e = MergedReader::new(vec![reader(&files), other]).unwrap_err();
        assert!(
            matches!(e, MergeError::NotOneRun(NotOneRun::LoadModels)),
            "{e}"
        );
        let e = MergedReader::<&[u8]>::new(Vec::new()).unwrap_err();
        assert!(matches!(e, MergeError::NoFiles), "{e}");
    }

    #[test]
    fn a_window_past_the_end_is_an_error_not_an_empty_run() {
        let files: File = vec![(0, vec![(0, 5_000_000, 200, None)]), (1, vec![])];
        let window = Window::parse("1m..").unwrap();
        let e = MergedReader::new(vec![reader(&files)])
            .unwrap()
            .summary(Some(window))
            .unwrap_err();
        assert!(matches!(e, MergeError::EmptyWindow { seconds: 2 }), "{e}");
        let whole = MergedReader::new(vec![reader(&files)])
            .unwrap()
            .summary(None)
            .unwrap();
        assert_eq!(whole.total.requests, 1);
        assert!(!whole.complete, "no footer: the run was killed");
    }
}
