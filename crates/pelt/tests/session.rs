//! Sessions against nginx (issue 16): `--cookies` (a jar per sender, kept
//! across reconnects), `--login` (once per sender, outside every figure;
//! a failed one stops the run before any load), `-A/--basic-auth`, and
//! the secrets of all three in no file pelt writes.

use pelt_testkit::nginx::Nginx;
use pelt_testkit::pelt::{bad_input, ok, pelt, run_json, run_json_nothing_succeeded};
use std::collections::{BTreeMap, BTreeSet};

/// A location setting a per-connection cookie on each connection's first
/// response (see the template's `$first_sid`).
const SESSION: &str = r#"
        location = /session {
            add_header Set-Cookie $first_sid;
            default_type text/plain;
            return 200 "ok\n";
        }
        location = /login {
            if ($arg_password != "right-horse") {
                return 401 "wrong password for $arg_user\n";
            }
            add_header Set-Cookie "session=s3ss10n-ok; Path=/; HttpOnly";
            return 302 /private;
        }
        location = /private {
            if ($cookie_session != "s3ss10n-ok") {
                return 401 "log in first\n";
            }
            default_type text/plain;
            return 200 "private\n";
        }
        location = /go {
            return 302 /login?user=alice&password=right-horse;
        }
        location = /basic {
            if ($http_authorization != "Basic YWxpY2U6b3Blbi1zZXNhbWU=") {
                return 401 "who are you?\n";
            }
            default_type text/plain;
            return 200 "hello alice\n";
        }
"#;

/// The session log's lines: (connection, its request number, cookie).
fn session_lines(nginx: &Nginx, n: usize) -> Vec<(u64, u64, String)> {
    nginx
        .session_log_lines(n)
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[3].to_string(),
            )
        })
        .collect()
}

#[test]
fn each_connection_keeps_its_own_cookie_and_sends_it_back() {
    let nginx = Nginx::start(SESSION);
    let url = nginx.url("/session");
    let r = run_json(&[&url, "--cookies", "-c", "4", "-n", "400", "-t", "1"]);
    assert_eq!(r["requests"]["successes"], 400);
    assert_eq!(r["connections"]["opened"], 4);
    let lines = session_lines(&nginx, 400);
    assert_eq!(lines.len(), 400);
    // A connection's first request has no cookie yet; every later one
    // carries the cookie set on that very connection, no other.
    let mut per_cookie: BTreeMap<String, u64> = BTreeMap::new();
    for (conn, nth, cookie) in &lines {
        if *nth == 1 {
            assert_eq!(cookie, "-", "connection {conn}'s first request");
        } else {
            assert_eq!(
                cookie,
                &format!("c{conn}"),
                "request {nth} of connection {conn}"
            );
            *per_cookie.entry(cookie.clone()).or_default() += 1;
        }
    }
    assert_eq!(per_cookie.len(), 4, "{per_cookie:?}");
    assert_eq!(per_cookie.values().sum::<u64>(), 396);
    assert_eq!(r["session"]["requests_with_cookie"], 396);
    assert_eq!(r["session"]["logins"], 0);

    // Without --cookies, pelt sends the same bytes every time.
    let r = run_json(&[&url, "-c", "4", "-n", "100", "-t", "1"]);
    assert_eq!(r["requests"]["successes"], 100);
    let lines = session_lines(&nginx, 500);
    assert_eq!(lines.len(), 500);
    assert!(lines[400..].iter().all(|(_, _, c)| c == "-"));
    assert_eq!(r["session"]["requests_with_cookie"], 0);
}

/// Over HTTP/2 a stream is the user: the first response on each
/// connection sets that connection's cookie, and only the stream that got
/// it sends it back, on its own connection.
#[test]
fn over_http2_each_stream_has_its_own_jar() {
    let nginx = Nginx::start_h2(SESSION, None);
    let url = nginx.url("/session");
    let r = run_json(&[
        &url,
        "--http2",
        "--streams",
        "2",
        "--cookies",
        "-c",
        "2",
        "-n",
        "200",
        "-t",
        "1",
    ]);
    assert_eq!(r["requests"]["successes"], 200, "{}", r["error_examples"]);
    let lines = session_lines(&nginx, 200);
    assert_eq!(lines.len(), 200);
    let mut cookies = BTreeSet::new();
    for (conn, _, cookie) in &lines {
        if cookie != "-" {
            assert_eq!(cookie, &format!("c{conn}"), "a cookie crossed connections");
            cookies.insert(cookie.clone());
        }
    }
    assert_eq!(cookies.len(), 2, "{lines:?}");
    let with = lines.iter().filter(|(_, _, c)| c != "-").count() as u64;
    assert!(with > 0);
    assert_eq!(r["session"]["requests_with_cookie"].as_u64(), Some(with));
}

/// `--follow` with `--cookies`, as a browser: redirect hops carry the
/// jar's cookies and keep the ones they are given. /go redirects to the
/// login, whose redirect sets the session cookie that /private demands,
/// so every chain ends in 200 only if the cookie set on one hop goes back
/// on the next. Without the jar, every chain ends in 401.
#[test]
fn redirect_hops_carry_and_keep_cookies() {
    for (nginx, proto) in [
        (Nginx::start(SESSION), None),
        (Nginx::start_h2(SESSION, None), Some("--http2")),
    ] {
        let url = nginx.url("/go");
        let mut args = vec![&url[..], "--follow", "2", "-c", "2", "-n", "20", "-t", "1"];
        args.extend(proto);
        let r = run_json(&[&args[..], &["--cookies"]].concat());
        assert_eq!(
            r["status_codes"],
            serde_json::json!({"200": 20}),
            "{proto:?}: {}",
            r["error_examples"]
        );
        assert_eq!(r["session"]["requests_with_cookie"], 20, "{proto:?}");
        // Every request refused: nothing succeeded, exit 3.
        let r = run_json_nothing_succeeded(&args);
        assert_eq!(
            r["status_codes"],
            serde_json::json!({"401": 20}),
            "{proto:?}"
        );
    }
}

/// siege's user keeps its cookies when its connection closes: with
/// --no-keepalive each request is a new connection, whose first response
/// sets a new cookie, and the sender sends the one it holds.
#[test]
fn a_jar_survives_reconnects() {
    let nginx = Nginx::start(SESSION);
    let url = nginx.url("/session");
    let r = run_json(&[
        &url,
        "--cookies",
        "--no-keepalive",
        "-c",
        "2",
        "-n",
        "20",
        "-t",
        "1",
    ]);
    assert_eq!(r["requests"]["successes"], 20);
    assert_eq!(r["connections"]["opened"], 20);
    let lines = session_lines(&nginx, 20);
    assert_eq!(lines.len(), 20);
    // Each connection carries one request, and (but for each sender's
    // first) a cookie set on an earlier connection.
    assert!(lines.iter().all(|(_, nth, _)| *nth == 1));
    let with: Vec<_> = lines.iter().filter(|(_, _, c)| c != "-").collect();
    assert_eq!(with.len(), 18, "{lines:?}");
    assert!(with.iter().all(|(conn, _, c)| c != &format!("c{conn}")));
    assert_eq!(r["session"]["requests_with_cookie"], 18);
}

#[test]
fn a_login_opens_the_session_and_is_not_a_request() {
    let nginx = Nginx::start(SESSION);
    let login = format!(
        "POST {} user=alice",
        nginx.url("/login?user=alice&password=right-horse")
    );
    let r = run_json(&[
        &nginx.url("/private"),
        "--login",
        &login,
        "-c",
        "3",
        "-n",
        "60",
        "-t",
        "1",
    ]);
    assert_eq!(r["requests"]["total"], 60, "the logins are not requests");
    assert_eq!(r["requests"]["successes"], 60, "{}", r["error_examples"]);
    assert_eq!(r["session"]["logins"], 3);
    assert_eq!(r["session"]["requests_with_cookie"], 60);
    let lines = nginx.access_log_lines(Some(63));
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("POST /login"))
            .count(),
        3
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("GET /private 200"))
            .count(),
        60
    );
    // Without the login the page refuses: the check above could fail.
    let r = run_json_nothing_succeeded(&[&nginx.url("/private"), "-n", "5", "-c", "1"]);
    assert_eq!(r["status_codes"]["401"], 5);
}

#[test]
fn a_failed_login_stops_the_run_before_any_load() {
    let nginx = Nginx::start(SESSION);
    let login = format!(
        "POST {}",
        nginx.url("/login?user=alice&password=wrong-horse")
    );
    let out = pelt()
        .args([
            &nginx.url("/private"),
            "--login",
            &login,
            "-c",
            "3",
            "-n",
            "60",
        ])
        .output()
        .unwrap();
    let err = bad_input(&out, "");
    assert!(
        err.contains("--login failed") && err.contains("401"),
        "{err}"
    );
    assert!(
        err.contains("wrong password for alice"),
        "the body's first bytes: {err}"
    );
    assert!(
        !err.contains("wrong-horse"),
        "the password is not shown: {err}"
    );
    let lines = nginx.access_log_lines(None);
    assert!(
        !lines.is_empty()
            && lines
                .iter()
                .all(|l| l.starts_with("POST /login?") && l.contains(" 401 ")),
        "{lines:?}"
    );
}

#[test]
fn basic_auth_is_sent() {
    let nginx = Nginx::start(SESSION);
    let r = run_json(&[
        &nginx.url("/basic"),
        "-A",
        "alice:open-sesame",
        "-n",
        "20",
        "-c",
        "2",
    ]);
    assert_eq!(r["requests"]["successes"], 20);
    let r = run_json_nothing_succeeded(&[&nginx.url("/basic"), "-n", "5", "-c", "1"]);
    assert_eq!(r["status_codes"]["401"], 5);
}

#[test]
fn bad_session_flags_exit_2_naming_the_problem() {
    for (args, says) in [
        (vec!["--login", "http://127.0.0.1:1/login POST"], "--login"),
        (vec!["--login", "POST"], "--login"),
        (vec!["--login", "POST not-a-url"], "--login"),
        (vec!["-A", "alice"], "USER:PASS"),
    ] {
        let out = pelt()
            .arg("http://127.0.0.1:1/")
            .args(&args)
            .args(["-n", "1"])
            .output()
            .unwrap();
        let err = bad_input(&out, &format!("{args:?}"));
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// Every secret a session flag carries, in no file pelt writes: the
/// results file (-o), the saved copy and the history.
#[test]
fn session_secrets_are_in_no_file_pelt_writes() {
    let nginx = Nginx::start(SESSION);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = dir.path().join("run.pelt");
    let login = format!(
        "POST {} user=alice&token=b0dy-t0ken-value",
        nginx.url("/login?user=alice&password=right-horse")
    );
    let run = pelt()
        .env("PELT_DATA_DIR", &data)
        .env_remove("PELT_NO_HISTORY")
        .env_remove("PELT_HISTORY")
        .args([
            &nginx.url("/basic"),
            "-A",
            "alice:open-sesame",
            "--login",
            &login,
            "-H",
            "Cookie: pre=c00kie-secret",
            "-n",
            "10",
            "-c",
            "2",
            "-o",
        ])
        .arg(&out)
        .args(["--format", "json"])
        .output()
        .unwrap();
    ok(&run);
    let stdout = String::from_utf8_lossy(&run.stdout);
    let mut files = vec![out.clone()];
    files.extend(pelt_testkit::files_under(&data));
    assert!(files.len() >= 2, "{files:?}");
    let secrets = [
        "open-sesame",
        "YWxpY2U6b3Blbi1zZXNhbWU=",
        "right-horse",
        "b0dy-t0ken-value",
        "c00kie-secret",
        "s3ss10n-ok",
    ];
    let mut seen = BTreeSet::new();
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        for s in secrets {
            if bytes.windows(s.len()).any(|w| w == s.as_bytes()) {
                seen.insert(format!("{} in {}", s, f.display()));
            }
        }
        // A file written compressed would hide them: pelt's are not.
        assert!(!bytes.is_empty(), "{}", f.display());
    }
    for s in secrets {
        if stdout.contains(s) {
            seen.insert(format!("{s} in the report"));
        }
    }
    assert!(seen.is_empty(), "{seen:?}");
}
