//! Per-target counts and coarse response-time histograms: exact counts
//! for every target in 16 bytes until a target has more than 2xx to
//! say, and a histogram for the first [`MAX_TIMED_TARGETS`].

use super::MAX_TRACKABLE_NS;
use crate::error_kind::ErrorKind;
use crate::failure::{self, FailureKind};
use hdrhistogram::Histogram;

/// Per-target histograms keep 1 significant digit (values within 10 %,
/// buckets 1/16 wide)...
pub const TARGET_SIGNIFICANT_DIGITS: u8 = 1;
/// What [`TARGET_SIGNIFICANT_DIGITS`] guarantees: a per-target percentile
/// is within this many percent of the true value (HdrHistogram's bound for
/// one significant digit; its buckets are 1/16 wide, so usually closer).
pub const TARGET_PRECISION_PERCENT: u32 = 10;
/// ... from 1 µs: about 3.7 KB each instead of the 256 KB of a
/// whole-run histogram (2 digits took 27 KB: 1,000 targets cost 100 MB
/// of memory), since a site list can hold thousands of targets.
pub const TARGET_LOWEST_NS: u64 = 1_000;
/// Targets (by index) that get a response-time histogram; later targets
/// are counted (requests, statuses, errors) but not timed, so a recorder
/// never holds more than about 27 MB of per-target histograms.
pub const MAX_TIMED_TARGETS: usize = 1_000;

/// A new per-target response-time histogram (coarser than the totals).
pub fn new_target_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(
        TARGET_LOWEST_NS,
        MAX_TRACKABLE_NS,
        TARGET_SIGNIFICANT_DIGITS,
    )
    .expect("constant histogram bounds are valid")
}

/// Figures for one target (index into `RunConfig::targets`).
///
/// Sized for runs of 100,000 targets: every recorder (each worker's
/// second, the collector's, the total) holds one per target index, so the
/// common case, a target whose every request got a complete 2xx response
/// and that is not timed, takes 16 bytes: a count and an empty pointer.
/// Anything else (another status class, a transport failure, the
/// response-time histogram of the first [`MAX_TIMED_TARGETS`] targets)
/// goes to a [`TargetDetail`] made on the target's first such request in
/// that recorder (once per target per interval, never per request). The
/// counts are exact either way; the accessors add both parts.
#[derive(Debug, Clone, Default)]
pub struct TargetStats {
    /// Complete 2xx responses not counted in `detail`.
    plain_2xx: u64,
    detail: Option<Box<TargetDetail>>,
}

/// The part of a [`TargetStats`] beyond its plain 2xx count. Its counts
/// are of the requests it was told of; [`TargetStats`]'s accessors add
/// the plain 2xx count to them.
#[derive(Debug, Clone, Default)]
pub struct TargetDetail {
    /// Requests recorded here, failed or not.
    pub requests: u64,
    /// Of those, requests without error and with a 2xx or 3xx status.
    pub successes: u64,
    /// Of those, requests that failed in transport (an [`ErrorKind`]).
    pub errors: u64,
    /// Complete responses (no transport failure) by status class: index =
    /// code / 100 (2 = 2xx, ...).
    pub status_classes: [u64; 10],
    /// Of those, responses a scenario's check or extraction failed, by
    /// class (see [`Recorder::judged`](super::Recorder::judged)).
    pub judged: [u64; 10],
    /// Transport failures by kind (index = `ErrorKind::index`).
    pub error_kinds: [u64; ErrorKind::COUNT],
    /// Response time of every timed request of the target (the plain 2xx
    /// ones too), for the first [`MAX_TIMED_TARGETS`] targets.
    pub response: Option<Histogram<u64>>,
}

/// What a target without detail reports for its error kinds.
const NO_ERRORS: [u64; ErrorKind::COUNT] = [0; ErrorKind::COUNT];

impl TargetStats {
    /// Requests recorded for the target, failed or not.
    pub fn requests(&self) -> u64 {
        self.plain_2xx + self.detail.as_ref().map_or(0, |d| d.requests)
    }

    /// Requests without error and with a 2xx or 3xx status.
    pub fn successes(&self) -> u64 {
        self.plain_2xx + self.detail.as_ref().map_or(0, |d| d.successes)
    }

    /// Requests that failed in transport (an [`ErrorKind`]); with the
    /// responses outside 2xx/3xx, they make [`TargetStats::failed`].
    pub fn errors(&self) -> u64 {
        self.detail.as_ref().map_or(0, |d| d.errors)
    }

    /// Complete responses (no transport failure) by status class: index =
    /// code / 100 (2 = 2xx, ...).
    pub fn status_classes(&self) -> [u64; 10] {
        let mut c = self.detail.as_ref().map_or([0; 10], |d| d.status_classes);
        c[2] += self.plain_2xx;
        c
    }

    /// Of [`TargetStats::status_classes`], the responses a scenario's
    /// check or extraction failed, by class.
    pub fn judged_classes(&self) -> [u64; 10] {
        self.detail.as_ref().map_or([0; 10], |d| d.judged)
    }

    /// Failures by kind (index = `ErrorKind::index`), a scenario's
    /// judgements included.
    pub fn error_kinds(&self) -> &[u64; ErrorKind::COUNT] {
        self.detail.as_ref().map_or(&NO_ERRORS, |d| &d.error_kinds)
    }

    /// Response time, for the first [`MAX_TIMED_TARGETS`] targets; made on
    /// the target's first timed request in this recorder.
    pub fn response(&self) -> Option<&Histogram<u64>> {
        self.detail.as_ref().and_then(|d| d.response.as_ref())
    }

    /// The detail, made empty if there was none: for building a target's
    /// figures from elsewhere (a results file). Counts added to it add to
    /// the target's.
    pub fn detail_mut(&mut self) -> &mut TargetDetail {
        self.detail.get_or_insert_with(Default::default)
    }

    /// Folds in `n` requests of one outcome: a complete response of
    /// `status` (0: none) or a transport failure `error`, timed at
    /// `response_ns` when `timed`.
    pub(super) fn record(
        &mut self,
        target: usize,
        status: u16,
        error: Option<ErrorKind>,
        timed: Option<u64>,
        n: u64,
    ) {
        // As `Recorder::record`: a judged response is complete.
        let judged = error.is_some_and(ErrorKind::is_judgement);
        let answered = status != 0 && (error.is_none() || judged);
        if answered && status / 100 == 2 && error.is_none() {
            self.plain_2xx += n;
        } else {
            let d = self.detail_mut();
            d.requests += n;
            if answered {
                let class = usize::from(status / 100).min(9);
                d.status_classes[class] += n;
                d.judged[class] += u64::from(judged) * n;
                d.successes += u64::from(status / 100 == 3 && error.is_none()) * n;
            }
            if let Some(kind) = error {
                d.errors += n;
                d.error_kinds[kind.index()] += n;
            }
        }
        if let Some(ns) = timed.filter(|_| target < MAX_TIMED_TARGETS) {
            let h = self
                .detail_mut()
                .response
                .get_or_insert_with(new_target_histogram);
            let _ = h.record_n(ns.min(MAX_TRACKABLE_NS), n);
        }
    }

    /// Requests that failed: a transport failure or a status outside
    /// 2xx/3xx (see [`crate::failure`]).
    pub fn failed(&self) -> u64 {
        self.requests() - self.successes()
    }

    /// The failures by kind, most common first (see [`crate::failure`]).
    pub fn failures(&self) -> Vec<(FailureKind, u64)> {
        // A judged response fails once, by its judgement's kind.
        let judged = self.judged_classes();
        let statuses = self.classes().filter_map(|(c, n)| {
            FailureKind::of_status(u16::from(c) * 100)
                .map(|k| (k, n.saturating_sub(judged[usize::from(c)])))
        });
        failure::breakdown(self.error_kinds(), statuses)
    }

    /// Status classes that occurred, as `(class digit, count)`.
    pub fn classes(&self) -> impl Iterator<Item = (u8, u64)> {
        self.status_classes()
            .into_iter()
            .enumerate()
            .filter(|&(_, n)| n > 0)
            .map(|(c, n)| (c as u8, n))
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &TargetStats) {
        self.plain_2xx += other.plain_2xx;
        let Some(theirs) = &other.detail else {
            return;
        };
        let mine = self.detail_mut();
        mine.requests += theirs.requests;
        mine.successes += theirs.successes;
        mine.errors += theirs.errors;
        for (a, b) in mine.status_classes.iter_mut().zip(theirs.status_classes) {
            *a += b;
        }
        for (a, b) in mine.judged.iter_mut().zip(theirs.judged) {
            *a += b;
        }
        for (a, b) in mine.error_kinds.iter_mut().zip(theirs.error_kinds) {
            *a += b;
        }
        if let Some(h) = &theirs.response {
            match &mut mine.response {
                Some(m) => m
                    .add(h)
                    .expect("per-target histograms share bounds, so adding cannot fail"),
                None => mine.response = Some(h.clone()),
            }
        }
    }
}
