//! Tests of the nginx test harness itself (`pelt_testkit::nginx::Nginx`), so that a
//! failure in a load test against nginx can be trusted to be about pelt.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use pelt_testkit::nginx::Nginx;

/// Reads one HTTP/1.1 response with a `Content-Length` body; returns the
/// status code and the body.
fn read_response(reader: &mut BufReader<TcpStream>) -> (u16, Vec<u8>) {
    let mut status_line = String::new();
    reader
        .read_line(&mut status_line)
        .expect("read status line");
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let mut content_length = None;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).expect("read header");
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                content_length = Some(value.trim().parse::<usize>().expect("content-length"));
            }
        }
    }
    let mut body = vec![0; content_length.expect("response has Content-Length")];
    reader.read_exact(&mut body).expect("read body");
    (status, body)
}

fn get(stream: &mut TcpStream, path: &str) {
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").expect("write request");
}

#[test]
fn nginx_serves_keep_alive_requests_and_logs_each() {
    let nginx = Nginx::start("");
    let stream = TcpStream::connect(("127.0.0.1", nginx.port())).expect("connect to nginx");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("set read timeout");
    let mut writer = stream.try_clone().expect("clone stream");
    let mut reader = BufReader::new(stream);

    for _ in 0..3 {
        get(&mut writer, "/ok");
        let (status, body) = read_response(&mut reader);
        assert_eq!(status, 200, "error log:\n{}", nginx.error_log());
        assert_eq!(body, b"ok\n");
    }

    let lines = nginx.access_log_lines(Some(3));
    assert_eq!(lines.len(), 3, "access log: {lines:?}");
    for line in &lines {
        assert!(line.starts_with("GET /ok 200"), "access log line {line:?}");
        assert!(line.ends_with("HTTP/1.1"), "access log line {line:?}");
    }
}

#[test]
fn nginx_serves_the_default_files() {
    let nginx = Nginx::start("");
    let stream = TcpStream::connect(("127.0.0.1", nginx.port())).expect("connect to nginx");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("set read timeout");
    let mut writer = stream.try_clone().expect("clone stream");
    let mut reader = BufReader::new(stream);

    get(&mut writer, "/index.html");
    let (status, body) = read_response(&mut reader);
    assert_eq!(status, 200, "error log:\n{}", nginx.error_log());
    assert_eq!(body, b"hello\n");

    get(&mut writer, "/1k.bin");
    let (status, body) = read_response(&mut reader);
    assert_eq!(status, 200, "error log:\n{}", nginx.error_log());
    assert_eq!(body.len(), 1024);

    // $request_length is the request line and headers as sent by `get`:
    // "GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" is 45 bytes.
    let lines = nginx.access_log_lines(Some(2));
    assert_eq!(
        lines,
        [
            "GET /index.html 200 6 45 HTTP/1.1",
            "GET /1k.bin 200 1024 41 HTTP/1.1"
        ]
    );
}

#[test]
fn extra_locations_are_served() {
    let nginx = Nginx::start(r#"location = /teapot { return 418; }"#);
    let mut stream = TcpStream::connect(("127.0.0.1", nginx.port())).expect("connect to nginx");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("set read timeout");
    get(&mut stream, "/teapot");
    let (status, _) = read_response(&mut BufReader::new(stream));
    assert_eq!(status, 418, "error log:\n{}", nginx.error_log());
    assert_eq!(
        nginx.url("/teapot"),
        format!("http://127.0.0.1:{}/teapot", nginx.port())
    );
}

#[test]
fn two_instances_run_at_once_on_different_ports() {
    let a = Nginx::start("");
    let b = Nginx::start("");
    assert_ne!(a.port(), b.port());
    for nginx in [&a, &b] {
        assert!(
            (20000..32000).contains(&nginx.port()),
            "port {}",
            nginx.port()
        );
        let mut stream = TcpStream::connect(("127.0.0.1", nginx.port())).expect("connect to nginx");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("set read timeout");
        get(&mut stream, "/ok");
        let (status, body) = read_response(&mut BufReader::new(stream));
        assert_eq!((status, body.as_slice()), (200, b"ok\n".as_slice()));
    }
    // Each instance logs only its own request.
    assert_eq!(a.access_log_lines(Some(1)).len(), 1);
    assert_eq!(b.access_log_lines(Some(1)).len(), 1);
}

#[test]
fn dropping_nginx_stops_it_and_removes_its_directory() {
    let nginx = Nginx::start("");
    let port = nginx.port();
    let prefix = nginx.prefix().to_owned();
    assert!(prefix.join("nginx.conf").is_file());
    drop(nginx);
    assert!(!prefix.exists(), "{} still exists", prefix.display());
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "port {port} still accepts connections"
    );
}
