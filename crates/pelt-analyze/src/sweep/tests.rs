use super::*;

fn run(plan: SearchPlan, holds: impl Fn(f64) -> bool) -> (Outcome, Search, Vec<f64>) {
    let mut search = Search::new(plan);
    let mut tried = Vec::new();
    for _ in 0..100 {
        match search.next() {
            Next::Step { rate, .. } => {
                tried.push(rate);
                search.record(rate, holds(rate));
            }
            Next::Done(o) => return (o, search, tried),
        }
    }
    panic!("no end after 100 steps: {tried:?}");
}

#[test]
fn finds_capacities_within_the_tolerance() {
    for truth in [150.0, 999.0, 1_000.0, 3_333.0, 20_000.0, 77_777.0] {
        let (o, s, tried) = run(SearchPlan::default(), |r| r <= truth);
        let (p, f) = s.bracket();
        let (p, f) = (p.unwrap(), f.unwrap());
        assert_eq!(o, Outcome::Found, "{truth}: {tried:?}");
        assert!(p <= truth && truth < f, "{truth}: [{p}, {f}]");
        assert!((f - p) / p <= 0.05 + 1e-9, "{truth}: [{p}, {f}] {tried:?}");
        // Geometric growth, then ×1.25, then bisection: few steps.
        assert!(
            tried.len() <= 18,
            "{truth}: {} steps {tried:?}",
            tried.len()
        );
    }
}

#[test]
fn grows_by_two_then_by_a_quarter() {
    let (_, _, tried) = run(SearchPlan::default(), |r| r <= 1_000.0);
    assert_eq!(&tried[..5], &[100.0, 200.0, 400.0, 800.0, 1_600.0]);
    assert_eq!(tried[5], 1_000.0);
    assert_eq!(tried[6], 1_250.0);
}

#[test]
fn a_failed_confirmation_moves_the_answer_down() {
    // Steps up to 1,000 pass, but a long run at 960+ fails.
    let mut search = Search::new(SearchPlan::default());
    let mut confirmed = Vec::new();
    let outcome = loop {
        match search.next() {
            Next::Step { rate, confirm } => {
                let ok = if confirm {
                    confirmed.push(rate);
                    rate < 960.0
                } else {
                    rate <= 1_000.0
                };
                search.record(rate, ok);
            }
            Next::Done(o) => break o,
        }
    };
    assert_eq!(outcome, Outcome::Found, "{confirmed:?}");
    let (p, f) = search.bracket();
    assert!(p.unwrap() < 960.0 && f.unwrap() <= 1_000.0, "{p:?} {f:?}");
    assert!(confirmed.len() >= 2);
}

#[test]
fn ends_at_the_edges() {
    let (o, _, tried) = run(SearchPlan::default(), |_| false);
    assert_eq!((o, tried), (Outcome::FailsAtStart, vec![100.0]));
    let plan = SearchPlan {
        max: 1_000.0,
        ..SearchPlan::default()
    };
    let (o, s, tried) = run(plan, |_| true);
    assert_eq!(o, Outcome::AtMaxRate);
    assert_eq!(tried.last(), Some(&1_000.0));
    assert_eq!(s.bracket(), (Some(1_000.0), None));
    // Flaky confirmations give up rather than loop.
    let mut search = Search::new(SearchPlan::default());
    let outcome = loop {
        match search.next() {
            Next::Step { rate, confirm } => search.record(rate, !confirm && rate <= 500.0),
            Next::Done(o) => break o,
        }
    };
    assert_eq!(outcome, Outcome::Unstable);
}

#[test]
fn levels_double_and_plateaus_are_seen() {
    assert_eq!(
        connection_levels(1, 200),
        vec![1, 2, 4, 8, 16, 32, 64, 128, 200]
    );
    assert_eq!(connection_levels(8, 8), vec![8]);
    let growing = [(1, 100.0), (2, 190.0), (4, 370.0)];
    assert!(!plateaued(&growing));
    let flat = [(1, 100.0), (2, 190.0), (4, 196.0), (8, 193.0)];
    assert!(plateaued(&flat));
    assert_eq!(saturation(&flat), Some(2));
}

#[test]
fn slo_terms_parse_and_name_the_bad_one() {
    let slo = parse_slo("p99 < 50ms, errors < 0.1%").unwrap();
    assert_eq!(slo.len(), 2);
    let e = parse_slo("p99 < 50ms, errors < 5").unwrap_err().to_string();
    assert!(e.contains("'errors < 5'"), "{e}");
}

#[test]
fn kendall_tau_sees_a_rise() {
    assert_eq!(kendall_tau(&[1, 2, 3, 4]), 1.0);
    assert_eq!(kendall_tau(&[4, 3, 2, 1]), -1.0);
    assert!(kendall_tau(&[5, 3, 5, 3]).abs() < 0.5);
}
