//! Helpers shared by the results tests: a header, recorders of given
//! samples, and files written from them.

use super::*;
use crate::config::{Load, RunConfig, Stop, Target};
use crate::error_kind::ErrorKind;
use crate::header::Environment;
use crate::sample::Sample;
use crate::url::Url;

/// A rate run's header (100 req/s, 4 connections), for tests across
/// the crate: change `config` to suit.
pub(crate) fn header() -> RunHeader {
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
            link: None,
            debug_build: false,
        },
        measure_start_unix_ns: 1_795_000_000_000_000_000,
        measure_from_ns: 0,
        shard: None,
        late_start_ns: 0,
    }
}

pub(super) fn recorder(samples: &[(u64, u64, u16, Option<ErrorKind>)]) -> Recorder {
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

pub(super) fn write(intervals: &[(u64, Recorder)], footer: Option<&RunFooter>) -> Vec<u8> {
    write_with(&header(), intervals, footer)
}

pub(super) fn write_with(
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
pub(super) type ReadBack = (Vec<(u64, Recorder)>, Option<RunFooter>, bool);

pub(super) fn read_all(bytes: &[u8]) -> Result<ReadBack, ResultsError> {
    let mut r = ResultsReader::open(bytes)?;
    assert_eq!(r.header(), &header());
    let mut out = Vec::new();
    while let Some(i) = r.next_interval()? {
        out.push(i);
    }
    Ok((out, r.footer().cloned(), r.truncated()))
}
