//! pelt's latency histograms: their bounds, and how a value goes in.
//! Below the recorder (and the handshakes, which the recorder holds),
//! so both share the one rule.

use hdrhistogram::{Counter, Histogram};

/// Highest latency tracked: one hour in nanoseconds. Larger values are
/// clamped to it (and a run that long has bigger problems).
pub const MAX_TRACKABLE_NS: u64 = 3_600_000_000_000;
/// Three significant digits: 0.1 % value resolution at every magnitude.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// A new latency histogram with pelt's bounds: from 1 ns, three
/// significant digits, up to [`MAX_TRACKABLE_NS`] through [`record_ns`].
///
/// Its counts grow, exactly, with the largest value recorded instead of
/// being allocated for an hour up front: 16 KB empty, about 110 KB for values
/// up to 10 ms, 270 KB only at the full hour. A run holds a few dozen
/// (six per recorder, a few recorders per worker), most of them empty
/// (TLS, connect) or in the milliseconds, and at full size they were
/// half of pelt's fixed memory. Percentiles are the same either way:
/// the buckets a value falls in do not depend on how many there are.
pub fn new_histogram() -> Histogram<u64> {
    sized_for(1)
}

/// [`new_histogram`] with counters of type `C`: a worker's one-second
/// recorder counts in `u32` (no bucket sees four billion values in a
/// second), which halves what its histograms hold.
pub fn new_counts<C: Counter>() -> Histogram<C> {
    sized_for(1)
}

/// An empty histogram with pelt's bounds whose counts cover exactly the
/// buckets `ns` needs, and not one more.
fn sized_for<C: Counter>(ns: u64) -> Histogram<C> {
    let mut h = Histogram::new_with_bounds(1, covered_through(ns), SIGNIFICANT_DIGITS)
        .expect("pelt's histogram bounds are valid");
    // Merges into it still grow it if a caller adds directly.
    h.auto(true);
    h
}

/// The highest value the buckets needed for `ns` cover: each bucket
/// doubles the range of the 2,048 sub-buckets that three significant
/// digits take, so that is one less than a power of two, at least 2,047.
fn covered_through(ns: u64) -> u64 {
    (ns.min(MAX_TRACKABLE_NS) | 2047)
        .checked_next_power_of_two()
        .map_or(u64::MAX, |p| p - 1)
}

/// Grows `h` to cover `ns`, exactly. hdrhistogram's own growth resizes
/// its counts like any `Vec`, doubling their capacity: a histogram for
/// 40 ms (136 KB of counts) held 256 KB, and one recycled second after
/// another kept the slack.
#[cold]
fn grow<C: Counter>(h: &mut Histogram<C>, ns: u64) {
    let mut bigger = sized_for(ns);
    bigger
        .add(&*h)
        .expect("a wider histogram takes a narrower one's values");
    *h = bigger;
}

/// Adds `from` into `into`, growing `into` exactly as [`record_ns`] would
/// for `from`'s largest value.
pub fn add<C: Counter>(into: &mut Histogram<C>, from: &Histogram<C>) {
    if !from.is_empty() && from.max() > into.high() {
        grow(into, from.max());
    }
    into.add(from)
        .expect("a histogram grown for another's values takes them");
}

/// [`add`] from a histogram with narrower counters (a worker's second):
/// value by recorded value, each at its bucket's highest equivalent, so
/// every count lands in the same bucket as with [`add`].
pub fn add_counts<C: Counter>(into: &mut Histogram<u64>, from: &Histogram<C>) {
    if from.is_empty() {
        return;
    }
    if from.max() > into.high() {
        grow(into, from.max());
    }
    for v in from.iter_recorded() {
        let _ = into.record_n(v.value_iterated_to(), v.count_at_value().as_u64());
    }
}

/// Records `ns` in a histogram from [`new_histogram`], clamped to
/// [`MAX_TRACKABLE_NS`] (its counts grow to hold it; a growing histogram
/// would otherwise grow to any value, so the clamp is what bounds it).
#[inline]
pub fn record_ns<C: Counter>(h: &mut Histogram<C>, ns: u64) {
    let ns = fit(h, ns);
    // Cannot fail: the histogram now covers `ns`.
    let _ = h.record(ns);
}

/// `ns` clamped to [`MAX_TRACKABLE_NS`], with `h` grown to cover it (the
/// clamp keeps its size at most the full hour's).
#[inline]
fn fit<C: Counter>(h: &mut Histogram<C>, ns: u64) -> u64 {
    let ns = ns.min(MAX_TRACKABLE_NS);
    if ns > h.high() {
        grow(h, ns);
    }
    ns
}

/// [`record_ns`] for `n` equal values.
#[inline]
pub fn record_ns_n<C: Counter>(h: &mut Histogram<C>, ns: u64, n: u64) {
    let ns = fit(h, ns);
    // Cannot fail: the histogram covers `ns`. A count too large for `C`
    // goes in pieces (pelt's counters are at least `u32`).
    let mut left = n;
    while left > 0 {
        let step = left.min(u64::from(u32::MAX));
        let count = <C as num_traits::FromPrimitive>::from_u64(step)
            .expect("pelt's histograms count in u32 or u64");
        let _ = h.record_n(ns, count);
        left -= step;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The histogram pelt used to allocate: the whole hour up front.
    fn full() -> Histogram<u64> {
        Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, SIGNIFICANT_DIGITS).unwrap()
    }

    #[test]
    fn a_growing_histogram_reads_as_the_full_one_and_is_smaller() {
        let (mut grown, mut whole) = (new_histogram(), full());
        let empty = grown.distinct_values();
        let mut x = 12_345u64;
        for _ in 0..10_000 {
            // Values from 1 µs to about 8 ms.
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let v = 1_000 + (x >> 40) % 8_000_000;
            record_ns(&mut grown, v);
            whole.record(v).unwrap();
        }
        for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(
                grown.value_at_quantile(q),
                whole.value_at_quantile(q),
                "q {q}"
            );
        }
        assert_eq!(
            (grown.min(), grown.max(), grown.len()),
            (whole.min(), whole.max(), whole.len())
        );
        assert!(
            grown.distinct_values() * 2 < whole.distinct_values(),
            "{}",
            grown.distinct_values()
        );
        assert!(
            empty * 10 < whole.distinct_values(),
            "an empty one holds {empty} counts"
        );

        // Either adds into the other, and both keep every count.
        let mut sum = new_histogram();
        sum.add(&whole).unwrap();
        sum.add(&grown).unwrap();
        whole.add(&grown).unwrap();
        assert_eq!(sum.len(), 20_000);
        assert_eq!(sum.value_at_quantile(0.99), whole.value_at_quantile(0.99));
    }

    /// The counts a histogram covering `ns` from the start holds.
    fn counts_for(ns: u64) -> usize {
        Histogram::<u64>::new_with_bounds(1, ns.max(2), SIGNIFICANT_DIGITS)
            .unwrap()
            .distinct_values()
    }

    #[test]
    fn a_histogram_grows_exactly_and_only_past_its_buckets() {
        let mut h = new_histogram();
        assert_eq!(h.distinct_values(), counts_for(2_047));
        for ns in [5_000, 40_000_000, 1_900_000_000] {
            record_ns(&mut h, ns);
            assert_eq!(h.distinct_values(), counts_for(ns), "after {ns} ns");
            // Anything else in the same buckets leaves it as it is.
            let (counts, high) = (h.distinct_values(), h.high());
            record_ns(&mut h, ns / 2 + 1);
            record_ns(&mut h, high);
            assert_eq!((h.distinct_values(), h.high()), (counts, high));
            // `high` is where its buckets end: one past it needs more.
            assert!(high >= ns && counts_for(high + 1) > counts, "{high}");
        }
        // Adding grows the same way: to the other's largest value.
        let mut sum = new_histogram();
        add(&mut sum, &h);
        assert_eq!(sum.distinct_values(), h.distinct_values());
        assert_eq!((sum.len(), sum.max()), (h.len(), h.max()));
        add(&mut sum, &new_histogram());
        assert_eq!(sum.len(), h.len());
    }

    #[test]
    fn narrow_counts_add_into_the_same_buckets() {
        let (mut wide, mut narrow) = (new_histogram(), new_counts::<u32>());
        let mut x = 99u64;
        for _ in 0..5_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let v = (x >> 33) % 3_000_000_000;
            record_ns(&mut wide, v);
            record_ns(&mut narrow, v);
        }
        record_ns_n(&mut wide, 7_777, 3);
        record_ns_n(&mut narrow, 7_777, 3);
        let (mut a, mut b) = (new_histogram(), new_histogram());
        add(&mut a, &wide);
        add_counts(&mut b, &narrow);
        assert_eq!((a.len(), a.min(), a.max()), (b.len(), b.min(), b.max()));
        assert_eq!(a.distinct_values(), b.distinct_values());
        assert!(a.iter_recorded().eq(b.iter_recorded()));
        // Into one that already holds values, too.
        add(&mut a, &wide);
        add_counts(&mut b, &narrow);
        assert!(a.iter_recorded().eq(b.iter_recorded()));
        assert_eq!(b.len(), 2 * 5_003);
    }

    #[test]
    fn values_past_the_hour_are_clamped_not_grown_for() {
        let mut h = new_histogram();
        record_ns(&mut h, u64::MAX);
        record_ns_n(&mut h, MAX_TRACKABLE_NS * 4, 3);
        assert_eq!(h.len(), 4);
        assert!(h.lowest_equivalent(h.max()) <= MAX_TRACKABLE_NS);
        assert!(h.distinct_values() <= full().distinct_values());
    }
}
