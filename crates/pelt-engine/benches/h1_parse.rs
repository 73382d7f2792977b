//! The HTTP/1.1 response path: head parsing and body framing, per request.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pelt_engine::h1::{read_response, READ_BUF};
use std::hint::black_box;

const NGINX_OK: &[u8] = b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sat, 21 Nov 2026 14:00:00 GMT\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nok\n";

fn chunked_body() -> Vec<u8> {
    let mut r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..4 {
        r.extend_from_slice(b"400\r\n");
        r.extend(std::iter::repeat_n(b'x', 1024));
        r.extend_from_slice(b"\r\n");
    }
    r.extend_from_slice(b"0\r\n\r\n");
    r
}

fn parse(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let chunked = chunked_body();
    let mut buf = vec![0u8; READ_BUF];
    let mut g = c.benchmark_group("h1");
    g.throughput(Throughput::Elements(1));
    for (name, bytes) in [("small_response", NGINX_OK), ("chunked_4k", &chunked[..])] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut input: &[u8] = black_box(bytes);
                let r = rt.block_on(read_response(&mut input, &mut buf, false, || {}));
                black_box(r.expect("well-formed response"))
            })
        });
    }
    g.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
