//! A sweep conducted by the library ([`Sweep`]) against pelt's own
//! server: a target that fails its SLO at the lowest rate ends the
//! search there, with no capacity and the failing term named, and its
//! one step saved. The searches that judge a known capacity run pinned
//! to CPUs ahead of other work, which only a process of their own can
//! be: they are the binary's tests (crates/pelt/tests/sweep.rs), with
//! `pelt sweep`'s flags, exit codes and output.

use pelt_analyze::sweep::{parse_slo, Failure, Outcome};
use pelt_campaign::{Cancel, Sweep, SweepSpec, Unobserved};
use pelt_core::{Load, RunConfig, Stop, Target, Url};
use std::time::Duration;

#[test]
fn failing_at_the_lowest_rate_ends_the_search_there() {
    let server = pelt_target::Server::bind(
        ([127, 0, 0, 1], 0).into(),
        pelt_target::ServeConfig::default(),
    )
    .and_then(pelt_target::Server::spawn)
    .expect("pelt's server on loopback");
    let url = Url::parse(&format!("http://{}/?status=503", server.local_addr())).unwrap();
    let base = RunConfig::new(vec![Target::get(url)], Load::closed(1), Stop::default());
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("sweep");
    let mut spec = SweepSpec::new(folder.clone());
    spec.slo = parse_slo("failed < 1%").unwrap();
    (spec.step, spec.warmup, spec.cooldown) = (
        Duration::from_secs(1),
        Duration::ZERO,
        Duration::from_secs(1),
    );
    let (report, reports) = Sweep::new(spec, base)
        .unwrap()
        .conduct(&Cancel::new(), &mut Unobserved)
        .unwrap();
    assert_eq!(report.outcome, Outcome::FailsAtStart, "{}", reports.text);
    assert_eq!(report.capacity, None);
    assert_eq!(report.steps.len(), 1);
    let first = &report.steps[0];
    assert_eq!(first.offered, Some(100.0), "the lowest rate");
    assert!(!first.passed);
    assert!(
        first.failures.iter().any(
            |f| matches!(f, Failure::Slo { term, actual } if term == "failed < 1%" && actual.contains("100.000%"))
        ),
        "{:?}",
        first.failures
    );
    // Its step is saved where the report says.
    let file = folder.join(first.file.as_deref().expect("the step's file"));
    assert!(file.is_file(), "{}", file.display());
    assert!(server.requests() >= 100, "{}", server.requests());
}
