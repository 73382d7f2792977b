use super::*;
use proptest::prelude::*;

fn sample_strategy() -> impl Strategy<Value = Sample> {
    (
        0u32..3,
        0u64..1_000_000_000,
        0u64..50_000_000,
        0u64..50_000_000,
        prop::option::of(prop::sample::select(ErrorKind::ALL.to_vec())),
        prop::sample::select(vec![0u16, 200, 204, 301, 404, 500, 999]),
        0u64..100_000,
        any::<bool>(),
    )
        .prop_map(
            |(target, intended, lag, service, error, status, bytes, reused)| {
                let sent = intended + lag;
                // As the engine makes them: a success or a judgement
                // always has a complete response's status.
                let answered = error.is_none_or(ErrorKind::is_judgement);
                let status = if answered && status == 0 { 200 } else { status };
                Sample {
                    target,
                    intended,
                    sent: Some(sent),
                    first_byte: Some(sent + service / 2),
                    done: sent + service,
                    status,
                    bytes_in: bytes + 100,
                    body_bytes: bytes,
                    bytes_out: 80,
                    reused,
                    error,
                }
            },
        )
}

fn recorder_of(samples: &[Sample]) -> Recorder {
    counted_in(samples)
}

fn counted_in<C: hdrhistogram::Counter>(samples: &[Sample]) -> Recorder<C> {
    let mut r = Recorder::<C>::empty();
    for s in samples {
        r.record(s);
        if let Some(k) = s.error {
            r.add_example(k, format!("{k:?} at {}", s.intended));
        }
    }
    r
}

// Each case builds and compares several recorders of a few MB each
// (unoptimised in tests): 64 random cases, not proptest's 256, keep
// the suite quick without narrowing what the samples can be.
proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn merge_is_associative_and_loses_nothing(
        a in prop::collection::vec(sample_strategy(), 0..40),
        b in prop::collection::vec(sample_strategy(), 0..40),
        c in prop::collection::vec(sample_strategy(), 0..40),
    ) {
        let (ra, rb, rc) = (recorder_of(&a), recorder_of(&b), recorder_of(&c));
        // (a + b) + c
        let mut left = ra.clone();
        left.merge(&rb);
        left.merge(&rc);
        // a + (b + c)
        let mut bc = rb.clone();
        bc.merge(&rc);
        let mut right = ra.clone();
        right.merge(&bc);
        assert_same(&left, &right);
        // Pairs never span two recorders, so only the sums of the
        // same parts agree exactly.
        prop_assert_eq!(left.lag1, right.lag1);
        // ... and both equal one recorder fed every sample.
        let all: Vec<Sample> = a.iter().chain(&b).chain(&c).copied().collect();
        let whole = recorder_of(&all);
        assert_same(&left, &whole);
        prop_assert_eq!(left.requests, all.len() as u64);
        prop_assert_eq!(
            left.error_count() + left.successes + all.iter().filter(|s| s.error.is_none() && !s.is_success()).count() as u64,
            all.len() as u64
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Workers' seconds count in `u32`: added into the run's recorder they
    /// make exactly what `u64` seconds make, connections and handshakes
    /// included.
    #[test]
    fn u32_seconds_merge_exactly_as_u64_ones(
        a in prop::collection::vec(sample_strategy(), 0..40),
        b in prop::collection::vec(sample_strategy(), 0..40),
        connects in prop::collection::vec(1u64..5_000_000_000, 0..5),
    ) {
        let (mut wide, mut narrow) = (Recorder::new(), Recorder::new());
        for part in [&a, &b] {
            let (mut w, mut n) = (counted_in::<u64>(part), counted_in::<u32>(part));
            for &c in &connects {
                w.record_connection(c, Some(c / 3));
                n.record_connection(c, Some(c / 3));
                w.record_handshake(crate::handshake::Handshake::ZeroRttAccepted, c);
                n.record_handshake(crate::handshake::Handshake::ZeroRttAccepted, c);
            }
            wide.merge(&w);
            narrow.merge_counts(&n);
        }
        assert_same(&wide, &narrow);
        prop_assert_eq!(wide.lag1, narrow.lag1);
        prop_assert_eq!(
            wide.handshakes.map(|h| h.count(crate::handshake::Handshake::ZeroRttAccepted)),
            narrow.handshakes.map(|h| h.count(crate::handshake::Handshake::ZeroRttAccepted))
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// A reset recorder, reused, ends up exactly like a fresh one fed
    /// the same samples (and merges like one): nothing from before the
    /// reset leaks into the next second.
    #[test]
    fn reset_recorder_is_as_good_as_new(
        before in prop::collection::vec(sample_strategy(), 1..40),
        after in prop::collection::vec(sample_strategy(), 0..40),
    ) {
        let mut reused = recorder_of(&before);
        reused.record_connection(1_000, Some(2_000));
        reused.record_unsent(2, 5, 10, 3);
        reused.reset();
        for s in &after {
            reused.record(s);
            if let Some(k) = s.error {
                reused.add_example(k, format!("{k:?} at {}", s.intended));
            }
        }
        let fresh = recorder_of(&after);
        assert_same(&reused, &fresh);
        prop_assert_eq!(reused.lag1, fresh.lag1);
        prop_assert_eq!(&reused.examples, &fresh.examples);
        let mut total = recorder_of(&before);
        total.merge(&reused);
        let mut expected = recorder_of(&before);
        expected.merge(&fresh);
        assert_same(&total, &expected);
    }
}

/// Every count the run reports per target adds up to the run's own.
fn assert_targets_sum_to_total(r: &Recorder) {
    let sum = |f: &dyn Fn(&TargetStats) -> u64| r.targets.iter().map(f).sum::<u64>();
    assert_eq!(sum(&|t| t.requests()), r.requests);
    assert_eq!(sum(&|t| t.successes()), r.successes);
    assert_eq!(sum(&|t| t.errors()), r.error_count());
    // One meaning of failed: its parts and its breakdown add up to it.
    assert_eq!(
        r.failed(),
        r.transport_errors() + r.non_success_statuses() + r.judged_failed()
    );
    let by_kind = |f: Vec<(crate::FailureKind, u64)>| f.iter().map(|x| x.1).sum::<u64>();
    assert_eq!(by_kind(r.failures()), r.failed());
    for t in &r.targets {
        assert_eq!(by_kind(t.failures()), t.failed());
    }
    for kind in ErrorKind::ALL {
        let i = kind.index();
        assert_eq!(sum(&|t| t.error_kinds()[i]), r.errors[i], "{kind:?}");
    }
    let mut classes = [0u64; 10];
    for (code, n) in r.status_counts() {
        classes[usize::from(code / 100).min(9)] += n;
    }
    for (c, &n) in classes.iter().enumerate() {
        assert_eq!(sum(&|t| t.status_classes()[c]), n, "{c}xx");
    }
    // Timed targets: one response time per timed request.
    let timed: u64 = r
        .targets
        .iter()
        .take(MAX_TIMED_TARGETS)
        .filter_map(|t| t.response().map(|h| h.len()))
        .sum();
    assert!(timed <= r.response.len());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Per-target counts sum exactly to the totals, whether a target
    /// is timed or beyond [`MAX_TIMED_TARGETS`], whether its requests
    /// were plain 2xx responses or not, recorded one by one, unsent,
    /// merged from several recorders or read back from a results file.
    #[test]
    fn per_target_counts_sum_to_the_total(
        parts in prop::collection::vec(
            prop::collection::vec(
                (sample_strategy(), prop::sample::select(vec![0u32, 1, 2, 999, 1_000, 1_001, 70_000])),
                0..60,
            ),
            1..4,
        ),
        unsent in prop::collection::vec((0u32..1_200, 1u64..5), 0..4),
    ) {
        let mut total = Recorder::new();
        for part in &parts {
            let mut r = Recorder::new();
            for &(mut s, target) in part {
                s.target = target;
                r.record(&s);
            }
            assert_targets_sum_to_total(&r);
            total.merge(&r);
        }
        for &(target, n) in &unsent {
            total.record_unsent(target, 10, 1_000_000, n);
        }
        assert_targets_sum_to_total(&total);
        let all = parts.iter().map(Vec::len).sum::<usize>() as u64;
        prop_assert_eq!(total.requests, all + unsent.iter().map(|u| u.1).sum::<u64>());
        let back = crate::results::through_record(&total);
        assert_targets_sum_to_total(&back);
        assert_same(&back, &total);
    }
}

#[test]
fn censored_failures_are_timed_and_fast_failures_are_not() {
    let mut r = Recorder::new();
    let mut s = Sample::failed(0, 0, 2_000_000_000, ErrorKind::Timeout);
    s.sent = Some(1_000);
    r.record(&s);
    r.record(&Sample::failed(0, 0, 500, ErrorKind::Connect));
    assert_eq!(r.requests, 2);
    assert_eq!(r.response.len(), 1);
    assert!(r.response.max() >= 1_999_000_000);
    assert_eq!(r.errors[ErrorKind::Timeout.index()], 1);
    assert_eq!(r.errors[ErrorKind::Connect.index()], 1);
}

#[test]
fn targets_get_status_classes_error_kinds_and_latency_up_to_the_cap() {
    let mut r = Recorder::new();
    let mut ok = Sample::failed(1, 0, 5_000_000, ErrorKind::Timeout);
    ok.error = None;
    ok.status = 200;
    ok.sent = Some(0);
    r.record(&ok);
    let mut bad = ok;
    bad.status = 503;
    bad.done = 9_000_000;
    r.record(&bad);
    r.record(&Sample::failed(1, 0, 500, ErrorKind::Closed));
    let mut far = ok;
    far.target = MAX_TIMED_TARGETS as u32;
    r.record(&far);
    let t = &r.targets[1];
    assert_eq!((t.requests(), t.successes(), t.errors()), (3, 1, 1));
    assert_eq!((t.status_classes()[2], t.status_classes()[5]), (1, 1));
    assert_eq!(t.error_kinds()[ErrorKind::Closed.index()], 1);
    let h = t.response().unwrap();
    assert_eq!(h.len(), 2);
    assert!(h.equivalent(h.value_at_quantile(1.0), 9_000_000));
    assert!(r.targets[0].response().is_none(), "untouched target");
    let beyond = &r.targets[MAX_TIMED_TARGETS];
    assert_eq!(beyond.requests(), 1);
    assert!(beyond.response().is_none(), "beyond the cap: counted only");
    r.record_unsent(1, 0, 20_000_000, 4);
    let t = &r.targets[1];
    assert_eq!(t.error_kinds()[ErrorKind::Unfinished.index()], 4);
    assert_eq!(t.response().unwrap().len(), 6);
}

/// Issue 37: a step whose status check fails on a 404 keeps its status
/// (in the status codes and outside 2xx/3xx), is no transport error, and
/// fails once, by its check; a failed extraction on a 200 keeps its 200.
#[test]
fn judged_responses_keep_their_status_and_fail_once() {
    let mut r = Recorder::new();
    let mut s = Sample::failed(0, 0, 1_000, ErrorKind::Check);
    s.status = 404;
    r.record(&s);
    s.status = 200;
    s.error = Some(ErrorKind::Extract);
    r.record(&s);
    assert_eq!(r.status_counts().collect::<Vec<_>>(), [(200, 1), (404, 1)]);
    assert_eq!(r.non_success_statuses(), 1);
    assert_eq!((r.transport_errors(), r.cut_short), (0, 0));
    assert_eq!(r.failed(), 2);
    let check = crate::FailureKind::Error(ErrorKind::Check);
    let extract = crate::FailureKind::Error(ErrorKind::Extract);
    assert_eq!(r.failures(), [(extract, 1), (check, 1)]);
    assert_eq!(r.failed_of(crate::FailureKind::Status(4)), 0);
    assert_eq!(r.targets[0].failures(), [(extract, 1), (check, 1)]);
    assert_eq!(r.targets[0].status_classes()[4], 1);
}

#[test]
fn examples_are_capped_per_kind() {
    let mut r = Recorder::new();
    for i in 0..10 {
        r.add_example(ErrorKind::Read, format!("e{i}"));
        r.add_example(ErrorKind::Read, "dup".into());
    }
    r.add_example(ErrorKind::Tls, "t".into());
    assert_eq!(r.examples.len(), EXAMPLES_PER_KIND + 1);
    assert!(!r.wants_example(ErrorKind::Read));
    assert!(r.wants_example(ErrorKind::Connect));
}
