use super::*;

/// Issue 37 §5: `value="([^"]+)"` took the page's first hidden input
/// (a currency code) for the CSRF token. An extraction is written
/// only if it takes the sent value back from the recorded response.
#[test]
fn an_extraction_is_checked_against_the_recording() {
    let page = r#"<form><input type="hidden" value="EUR"><input type="hidden" value="tok-0123456789abcdef" name="csrf"></form>"#;
    let how = extraction_for("tok-0123456789abcdef", page, false).unwrap();
    let re: String = toml::from_str::<toml::Table>(&format!("x = {how}")).unwrap()["x"]["regex"]
        .as_str()
        .unwrap()
        .to_string();
    let got = regex::Regex::new(&re).unwrap().captures(page).unwrap()[1].to_string();
    assert_eq!(got, "tok-0123456789abcdef", "{re}");
    // A value the regex's class cannot hold is not correlated.
    assert_eq!(
        extraction_for("a b c d e f g", "<p>x</p> a b c d e f g", false),
        None
    );
}

#[test]
fn a_site_is_its_host_and_hosts_under_its_parent_domain() {
    assert!(same_site(
        "https://api.shop.example",
        "https://www.shop.example"
    ));
    assert!(same_site("http://127.0.0.1:8080", "http://127.0.0.1:8080"));
    assert!(!same_site(
        "https://www.google-analytics.com",
        "https://www.shop.example"
    ));
    assert!(!same_site("http://127.0.0.2:8080", "http://127.0.0.1:8080"));
}

#[test]
fn times_parse_to_the_millisecond() {
    let a = millis("2024-03-01T10:00:00.250Z").unwrap();
    let b = millis("2024-03-01T11:00:01.000+01:00").unwrap();
    assert_eq!(b - a, 750.0);
    assert_eq!(millis("1970-01-01T00:00:01Z"), Some(1000.0));
}

fn entry(
    t: &str,
    method: &str,
    url: &str,
    headers: &str,
    post: &str,
    mime: &str,
    body: &str,
) -> String {
    format!(
        r#"{{"startedDateTime":"{t}","time":10,"request":{{"method":"{method}","url":"{url}","headers":[{headers}]{post}}},"response":{{"status":200,"content":{{"mimeType":"{mime}","text":{}}}}}}}"#,
        serde_json::to_string(body).unwrap()
    )
}

#[test]
fn a_recording_becomes_one_flow_with_values_carried_and_secrets_left_out() {
    let entries = [
        entry(
            "2024-01-01T00:00:00.000Z",
            "GET",
            "http://h:1/list",
            r#"{"name":"Authorization","value":"Bearer s3cret"},{"name":"Cookie","value":"a=1"}"#,
            "",
            "application/json",
            r#"{"items":[{"id":4711}]}"#,
        ),
        entry(
            "2024-01-01T00:00:00.020Z",
            "GET",
            "http://h:1/logo.png",
            "",
            "",
            "image/png",
            "",
        ),
        entry(
            "2024-01-01T00:00:00.510Z",
            "GET",
            "http://h:1/item/4711?x=1",
            "",
            "",
            "text/html",
            r#"<input type="hidden" name="token" value="Tk-0123456789abcdef">"#,
        ),
        entry(
            "2024-01-01T00:00:01.000Z",
            "POST",
            "http://h:1/item/4711/buy",
            "",
            r#","postData":{"mimeType":"application/x-www-form-urlencoded","text":"token=Tk-0123456789abcdef&n=2"}"#,
            "text/html",
            "ok",
        ),
    ];
    let har = format!(r#"{{"log":{{"entries":[{}]}}}}"#, entries.join(","));
    let out = import(&har, Path::new("r.har"), &HarOptions::default()).unwrap();
    assert!(
        !out.contains("s3cret") && out.contains("{{env.PELT_SECRET_AUTHORIZATION}}"),
        "{out}"
    );
    assert!(
        !out.contains("\"Cookie\"") && !out.contains("logo.png"),
        "{out}"
    );
    assert!(
        out.contains(r#"extract = { item_id = { json = "/items/0/id" } }"#),
        "{out}"
    );
    assert!(
        out.contains(r#"url = "/item/{{item_id|url}}?x=1""#),
        "{out}"
    );
    assert!(out.contains(r#"body = "token={{token|url}}&n=2""#), "{out}");
    // 500 ms from the list's end (10 ms) to the item, skipping the asset.
    assert!(out.contains("think = \"500ms\""), "{out}");
    // And it compiles as a scenario.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::env::set_var("PELT_SECRET_AUTHORIZATION", "x");
    crate::Scenario::compile(&out, &path).unwrap();
    let with_assets = import(
        &har,
        Path::new("r.har"),
        &HarOptions {
            include_assets: true,
            base: None,
            include_origins: Vec::new(),
        },
    )
    .unwrap();
    assert!(with_assets.contains("logo.png"));
}

/// Issue 37 §5: a recorded login's password was written in clear,
/// the token its response handed out became a shared environment
/// variable, and the login ran every iteration. The password is read
/// from PELT_LOGIN_PASSWORD (named in the header comment), the token
/// is extracted from the login's response per user, and the login
/// (with the form page before it) is a `[[once]]` step.
#[test]
fn a_recorded_login_keeps_no_password_extracts_its_token_and_runs_once() {
    let bearer = r#"{"name":"Authorization","value":"Bearer eyJhbGciOi.abc123456789"}"#;
    let entries = [
        entry(
            "2024-01-01T00:00:00.000Z",
            "GET",
            "http://h:1/login",
            "",
            "",
            "text/html",
            r#"<input type="hidden" name="csrf" value="Tk-0123456789abcdef">"#,
        ),
        entry(
            "2024-01-01T00:00:00.100Z",
            "POST",
            "http://h:1/login",
            "",
            r#","postData":{"mimeType":"application/x-www-form-urlencoded","text":"user=u0&password=hunter2-S3cret&csrf=Tk-0123456789abcdef"}"#,
            "application/json",
            r#"{"token":"eyJhbGciOi.abc123456789"}"#,
        ),
        entry(
            "2024-01-01T00:00:00.200Z",
            "GET",
            "http://h:1/api/items",
            bearer,
            "",
            "application/json",
            r#"{"items":[{"id":4711}]}"#,
        ),
        entry(
            "2024-01-01T00:00:00.300Z",
            "POST",
            "http://h:1/api/session",
            bearer,
            r#","postData":{"mimeType":"application/json","text":"{\"login\":{\"name\":\"u0\",\"passwd\":\"other-S3cret\"}}"}"#,
            "application/json",
            "{}",
        ),
    ];
    let har = format!(r#"{{"log":{{"entries":[{}]}}}}"#, entries.join(","));
    let out = import(&har, Path::new("r.har"), &HarOptions::default()).unwrap();
    for secret in [
        "hunter2-S3cret",
        "other-S3cret",
        "PELT_SECRET_AUTHORIZATION",
    ] {
        assert!(!out.contains(secret), "{secret}: {out}");
    }
    assert!(
        out.contains("password={{env.PELT_LOGIN_PASSWORD|url}}"),
        "{out}"
    );
    assert!(
        out.contains(r#"\"passwd\":\"{{env.PELT_LOGIN_PASSWORD}}\""#),
        "{out}"
    );
    assert!(
        out.contains(
            "# The login (request 2) sends a password: it is not copied. Set PELT_LOGIN_PASSWORD"
        ),
        "{out}"
    );
    assert!(
        out.contains(r#"extract = { token = { json = "/token" } }"#),
        "{out}"
    );
    assert!(
        out.contains(r#""Authorization" = "Bearer {{token}}""#),
        "{out}"
    );
    let once = out.lines().filter(|l| *l == "[[once]]").count();
    assert_eq!(once, 2, "{out}");
    assert!(out.find("\n[[once]]\n") < out.find("\n[[flow]]\n"), "{out}");
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var(PASSWORD_VAR, "p w&d");
    let sc = crate::Scenario::compile(&out, &dir.path().join("s.toml")).unwrap();
    assert_eq!(sc.once, [0, 1]);
    assert_eq!(sc.flows[0].steps, [2, 3]);
}

#[test]
fn not_json_names_the_line() {
    let e = import(
        "{\n  \"log\": [\n  nope",
        Path::new("x.har"),
        &HarOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("not a HAR file"), "{e}");
}
