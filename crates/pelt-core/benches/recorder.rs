//! The recorder's hot path: one `record` per request, one interval swap
//! and one merge per worker per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pelt_core::{ErrorKind, Recorder, Sample};
use std::hint::black_box;

/// Samples with realistic spread: latencies from 50 µs to ~50 ms.
fn samples(n: usize) -> Vec<Sample> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let intended = i as u64 * 50_000;
            let lag = x % 20_000;
            let service = 50_000 + (x >> 20) % 50_000_000;
            Sample {
                target: 0,
                intended,
                sent: Some(intended + lag),
                first_byte: Some(intended + lag + service / 2),
                done: intended + lag + service,
                status: if x.is_multiple_of(100) { 503 } else { 200 },
                bytes_in: 200,
                body_bytes: 100,
                bytes_out: 80,
                reused: true,
                error: x.is_multiple_of(1000).then_some(ErrorKind::Timeout),
            }
        })
        .collect()
}

fn record(c: &mut Criterion) {
    let batch = samples(10_000);
    let mut g = c.benchmark_group("recorder");
    g.throughput(Throughput::Elements(batch.len() as u64));
    g.bench_function("record", |b| {
        let mut r = Recorder::new();
        b.iter(|| {
            for s in &batch {
                r.record(black_box(s));
            }
        })
    });
    g.finish();
}

fn interval(c: &mut Criterion) {
    let mut full = Recorder::new();
    for s in samples(100_000) {
        full.record(&s);
    }
    c.bench_function("recorder/interval_swap", |b| {
        // What a worker does once a second: take the full recorder, leave
        // a fresh one.
        let mut current = full.clone();
        b.iter(|| black_box(std::mem::take(&mut current)))
    });
    c.bench_function("recorder/merge", |b| {
        let mut total = Recorder::new();
        b.iter(|| total.merge(black_box(&full)))
    });
}

criterion_group!(benches, record, interval);
criterion_main!(benches);
