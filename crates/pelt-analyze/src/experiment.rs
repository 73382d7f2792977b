//! The statistics of an experiment: variants run at load levels in
//! interleaved blocks. Each variant is compared with the first (the
//! baseline) at each level, paired by block, run by run.

use crate::runs::{self, median_of_numbers, Row};
use pelt_core::RunSummary;
use std::path::PathBuf;

/// What varies between load levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelKind {
    /// Offered requests per second (open loop).
    Rate,
    /// Connections (closed loop).
    Connections,
}

/// One load level: the rate or the connection count of every run at it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Level {
    /// Rate or connections.
    pub kind: LevelKind,
    /// Requests per second, or the number of connections.
    pub value: f64,
}

impl Level {
    /// `1000 req/s`, `50 connections`.
    pub fn label(&self) -> String {
        match self.kind {
            LevelKind::Rate => format!("{} req/s", self.value),
            LevelKind::Connections if self.value == 1.0 => "1 connection".into(),
            LevelKind::Connections => format!("{} connections", self.value),
        }
    }

    /// Safe in a file name: `rate-1000`, `c-50`.
    pub fn slug(&self) -> String {
        match self.kind {
            LevelKind::Rate => format!("rate-{}", self.value),
            LevelKind::Connections => format!("c-{}", self.value),
        }
    }
}

/// One finished run, reduced to what the report needs: the metric
/// values, not the histograms (an experiment can have hundreds of runs).
#[derive(Debug, Clone)]
pub struct RunRecord {
    /// The block it ran in, from 0.
    pub block: u32,
    /// Index of its variant; 0 is the baseline.
    pub variant: usize,
    /// Index of its load level.
    pub level: usize,
    /// Its results file.
    pub file: PathBuf,
    /// In the order of [`runs::metrics`].
    pub values: Vec<f64>,
    /// A scenario run's steps ([`runs::step_names`]); empty otherwise.
    pub steps: Vec<String>,
    /// The steps' values, three a step ([`runs::step_values`] of `steps`).
    pub step_values: Vec<f64>,
    /// A run that met streamed responses: its [`runs::stream_values`].
    pub stream_values: Option<Vec<f64>>,
    /// p50 of the latency judged (the headline unless
    /// [`RunRecord::judge`] says otherwise), for the latency-versus-load
    /// chart.
    pub p50_ns: u64,
    /// p99 of the same, for the latency-versus-load chart.
    pub p99_ns: u64,
    /// Stopped by Ctrl-C: saved and listed, left out of the verdicts.
    pub interrupted: bool,
    /// pelt's busiest worker thread wanted a CPU nearly all the run: the
    /// client may have set the pace (see [`runs::client_busy`]).
    pub client_busy: bool,
    /// The run's own warnings (send lag, read lag, ...), carried into
    /// the experiment's report with the verdicts they weaken.
    pub warnings: Vec<pelt_core::Warning>,
}

impl RunRecord {
    /// The record of `run`, made in `block` of `variant` at `level`.
    pub fn new(block: u32, variant: usize, level: usize, file: PathBuf, run: &RunSummary) -> Self {
        let (p50_ns, p99_ns) = p50_p99(run.headline().of(&run.total));
        RunRecord {
            block,
            variant,
            level,
            file,
            values: runs::values(run),
            step_values: runs::step_values(run, &runs::step_names(run)),
            steps: runs::step_names(run),
            stream_values: runs::stream_values(run),
            p50_ns,
            p99_ns,
            interrupted: run.interrupted,
            client_busy: runs::client_busy(run),
            warnings: run.warnings.clone(),
        }
    }

    /// Judge `latency` in `run` (this record's run): its values, and the
    /// p50 and p99 the latency-against-load chart draws, so that the chart
    /// shows what the verdicts judge.
    pub fn judge(&mut self, run: &RunSummary, latency: crate::latency::Latency) {
        self.values = crate::latency::values(run, latency);
        let (p50_ns, p99_ns) = p50_p99(latency.histogram(run));
        self.p50_ns = p50_ns;
        self.p99_ns = p99_ns;
    }

    /// This run's values of `steps` (three a step, NaN for a step it
    /// does not have), in the order of [`runs::step_metrics`].
    pub fn values_of_steps(&self, steps: &[String]) -> Vec<f64> {
        steps
            .iter()
            .flat_map(|s| match self.steps.iter().position(|n| n == s) {
                Some(i) => self.step_values[3 * i..3 * i + 3].to_vec(),
                None => vec![f64::NAN; 3],
            })
            .collect()
    }
}

/// What an experiment produced: its runs, one pooled summary per variant
/// and level for the charts, and what went wrong.
#[derive(Debug)]
pub struct Outcome {
    /// Every run made, in order, interrupted ones included.
    pub runs: Vec<RunRecord>,
    /// `[variant][level]`: every complete run's histograms merged, for
    /// overlaid percentile spectra (a picture, not a statistic).
    pub pooled: Vec<Vec<Option<RunSummary>>>,
    /// Setup, readiness and teardown failures, one line each.
    pub problems: Vec<String>,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
    /// Where the runs and reports are.
    pub folder: PathBuf,
}

impl Outcome {
    /// An outcome with no runs yet, for `variants` × `levels`.
    pub fn new(variants: usize, levels: usize, folder: PathBuf) -> Self {
        Outcome {
            runs: Vec::new(),
            pooled: vec![vec![None; levels]; variants],
            problems: Vec::new(),
            interrupted: false,
            folder,
        }
    }

    /// Records a finished run and adds it to its variant's and level's
    /// pool (unless it was interrupted: it stays out of the charts).
    pub fn add(&mut self, record: RunRecord, run: RunSummary) {
        if !record.interrupted {
            runs::pool(&mut self.pooled[record.variant][record.level], run);
        }
        self.runs.push(record);
    }

    /// Complete runs of `variant` at `level`, by block.
    pub fn runs_of(&self, variant: usize, level: usize) -> Vec<&RunRecord> {
        self.runs
            .iter()
            .filter(|r| r.variant == variant && r.level == level && !r.interrupted)
            .collect()
    }

    /// Each metric's median over a variant's complete runs at a level;
    /// `None` before it has any.
    pub fn medians(&self, variant: usize, level: usize) -> Option<Vec<f64>> {
        let runs = self.runs_of(variant, level);
        let n = runs.first()?.values.len();
        Some(
            (0..n)
                .map(|i| median_of_numbers(runs.iter().map(|r| r.values[i]).collect()))
                .collect(),
        )
    }

    /// The median over a variant's complete runs at a level of their p50
    /// and of their p99 (nanoseconds).
    pub fn latency_medians(&self, variant: usize, level: usize) -> Option<(u64, u64)> {
        let runs = self.runs_of(variant, level);
        if runs.is_empty() {
            return None;
        }
        let med = |v: Vec<u64>| median_of_numbers(v.into_iter().map(|x| x as f64).collect());
        let p50 = med(runs.iter().map(|r| r.p50_ns).collect());
        let p99 = med(runs.iter().map(|r| r.p99_ns).collect());
        Some((p50 as u64, p99 as u64))
    }

    /// Each other variant against the baseline (variant 0) at each of
    /// `levels` levels, its runs paired with the baseline's of the same
    /// block; pairs with a block missing on either side are left out.
    pub fn comparisons(&self, variants: usize, levels: usize) -> Vec<LevelComparison> {
        let mut out = Vec::new();
        for level in 0..levels {
            let base = self.runs_of(0, level);
            for variant in 1..variants {
                let other = self.runs_of(variant, level);
                let pairs: Vec<(&RunRecord, &RunRecord)> = base
                    .iter()
                    .filter_map(|ra| {
                        other
                            .iter()
                            .find(|rb| rb.block == ra.block)
                            .map(|rb| (*ra, *rb))
                    })
                    .collect();
                if pairs.is_empty() {
                    continue;
                }
                let (a, b): (Vec<Vec<f64>>, Vec<Vec<f64>>) = pairs
                    .iter()
                    .map(|(ra, rb)| (ra.values.clone(), rb.values.clone()))
                    .unzip();
                let mut rows = runs::compare_values(&a, &b, true);
                // Scenario runs: each step both variants ran, judged alike.
                let steps = runs::common_steps(
                    pairs
                        .iter()
                        .flat_map(|(ra, rb)| [ra.steps.as_slice(), rb.steps.as_slice()]),
                );
                if !steps.is_empty() {
                    let (sa, sb): (Vec<Vec<f64>>, Vec<Vec<f64>>) = pairs
                        .iter()
                        .map(|(ra, rb)| (ra.values_of_steps(&steps), rb.values_of_steps(&steps)))
                        .unzip();
                    rows.extend(runs::compare_steps(&steps, &sa, &sb, true));
                }
                // Streamed responses, when every run of both met streams.
                let side = |baseline: bool| {
                    pairs
                        .iter()
                        .map(|(ra, rb)| if baseline { ra } else { rb }.stream_values.clone())
                        .collect::<Option<Vec<Vec<f64>>>>()
                };
                if let (Some(sa), Some(sb)) = (side(true), side(false)) {
                    rows.extend(runs::compare_streams(&sa, &sb, true));
                }
                out.push(LevelComparison {
                    level,
                    variant,
                    blocks: pairs.len(),
                    rows,
                });
            }
        }
        out
    }
}

/// One variant against the baseline at one level.
#[derive(Debug, Clone)]
pub struct LevelComparison {
    /// Index of the load level.
    pub level: usize,
    /// Index of the variant compared with variant 0.
    pub variant: usize,
    /// Blocks with a complete run of both.
    pub blocks: usize,
    /// One row per metric of [`runs::metrics`], then with scenario runs
    /// [`runs::step_metrics`]' of the steps both ran, then with streams
    /// [`runs::stream_metrics`]'.
    pub rows: Vec<Row>,
}

/// The order of `k` variants in block `block`: rotated by one each block
/// and reversed every other cycle (AB, BA, AB, ... for two), so each
/// variant runs first, last and after each other variant equally often
/// and slow drifts of the machine fall on all of them alike.
pub fn order(k: usize, block: u32) -> Vec<usize> {
    if k == 0 {
        return Vec::new();
    }
    let shift = block as usize % k;
    let mut order: Vec<usize> = (0..k).map(|i| (i + shift) % k).collect();
    if (block as usize / k) % 2 == 1 {
        order.reverse();
    }
    order
}

/// Whether any variant regressed against the baseline at any level (see
/// [`runs::regressed`]).
pub fn regressed(comparisons: &[LevelComparison], material_only: bool) -> bool {
    comparisons
        .iter()
        .any(|c| runs::regressed(&c.rows, material_only))
}

/// p50 and p99 of `h` (0 and 0 when it is empty).
fn p50_p99(h: &hdrhistogram::Histogram<u64>) -> (u64, u64) {
    if h.is_empty() {
        (0, 0)
    } else {
        (
            pelt_core::rank::percentile(h, 50.0),
            pelt_core::rank::percentile(h, 99.0),
        )
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn every_variant_is_first_and_last_as_often_as_the_others() {
        for k in 2..=4usize {
            let blocks = 2 * k as u32;
            let mut first = vec![0; k];
            let mut last = vec![0; k];
            for b in 0..blocks {
                let o = order(k, b);
                let mut sorted = o.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..k).collect::<Vec<_>>(), "a permutation");
                first[o[0]] += 1;
                last[o[k - 1]] += 1;
            }
            assert!(first.iter().all(|&n| n == 2), "k={k} first {first:?}");
            assert!(last.iter().all(|&n| n == 2), "k={k} last {last:?}");
        }
        assert_eq!(order(2, 0), [0, 1]);
        assert_eq!(order(2, 1), [1, 0]);
    }
    use super::*;

    fn record(block: u32, variant: usize, level: usize, x: f64) -> RunRecord {
        RunRecord {
            block,
            variant,
            level,
            file: PathBuf::from("runs/x.pelt"),
            values: vec![x, x, x, x, 0.0, 1e9 / x, f64::NAN],
            steps: Vec::new(),
            step_values: Vec::new(),
            stream_values: None,
            p50_ns: x as u64,
            p99_ns: 2 * x as u64,
            interrupted: false,
            client_busy: false,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn pairs_by_block_and_skips_incomplete_blocks() {
        let mut o = Outcome::new(2, 1, PathBuf::from("."));
        for block in 0..6 {
            o.runs.push(record(block, 0, 0, 1e6 + block as f64));
            o.runs.push(record(block, 1, 0, 2e6 + block as f64));
        }
        // Block 6 has the baseline only; an interrupted run never counts.
        o.runs.push(record(6, 0, 0, 1e6));
        let mut stopped = record(7, 1, 0, 9e9);
        stopped.interrupted = true;
        o.runs.push(stopped);
        let c = o.comparisons(2, 1);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].level, c[0].variant, c[0].blocks), (0, 1, 6));
        assert!(regressed(&c, true));
        assert_eq!(o.runs_of(1, 0).len(), 6);
        assert_eq!(o.latency_medians(1, 0), Some((2_000_002, 4_000_005)));
        // Blocks 0..5 and block 6's extra baseline run: seven values.
        assert_eq!(o.medians(0, 0).unwrap()[0], 1e6 + 2.0);
        assert_eq!(o.medians(1, 1), None);
    }

    #[test]
    fn levels_are_labelled_for_people_and_files() {
        let rate = Level {
            kind: LevelKind::Rate,
            value: 1000.0,
        };
        assert_eq!(
            (rate.label(), rate.slug()),
            ("1000 req/s".into(), "rate-1000".into())
        );
        let one = Level {
            kind: LevelKind::Connections,
            value: 1.0,
        };
        assert_eq!(
            (one.label(), one.slug()),
            ("1 connection".into(), "c-1".into())
        );
    }
}
