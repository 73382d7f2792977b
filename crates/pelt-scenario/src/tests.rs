//! The compiler's checks, each with its line, and a compiled scenario
//! rendered.

use super::*;
use std::io::Write;

/// A folder holding `scenario.toml` with `text` and a `users.csv` feed.
fn dir_with(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::File::create(dir.path().join("users.csv"))
        .unwrap()
        .write_all(b"name,password\nann,pw1\nbob,pw2\n")
        .unwrap();
    std::fs::File::create(dir.path().join("empty.csv"))
        .unwrap()
        .write_all(b"name\n")
        .unwrap();
    let path = dir.path().join("scenario.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn compile_text(text: &str) -> Result<Scenario, ScenarioError> {
    let (_dir, path) = dir_with(text);
    Scenario::compile(text, &path)
}

const GOOD: &str = r#"
base = "http://127.0.0.1:8000"

[[feed]]
name = "users"
file = "users.csv"
pick = "unique"
per = "user"

[[once]]
name = "login page"
url = "/login"
extract = { csrf = { regex = 'name="csrf" value="([^"]+)"' } }

[[once]]
name = "login"
method = "POST"
url = "/login"
headers = { "Content-Type" = "application/x-www-form-urlencoded" }
body = "user={{users.name}}&password={{users.password}}&csrf={{csrf|url}}"
check = { status = [302] }

[[flow]]
name = "browse"
weight = 3
[[flow.step]]
name = "list"
url = "/api/items"
think = "10ms..20ms"
extract = { id = { json = "items[0].id" } }
check = { status = [200], json = { "/ok" = true } }
[[flow.step]]
name = "item"
url = "/item/{{id}}?vu={{vu}}"

[[flow]]
name = "again"
[[flow.step]]
flow = "browse"
"#;

#[test]
fn a_scenario_compiles_into_steps_and_flows() {
    let s = compile_text(GOOD).unwrap();
    assert_eq!(s.once, [0, 1]);
    assert_eq!(s.flows.len(), 2);
    assert_eq!(s.flows[0].steps, [2, 3]);
    // An included flow's steps are inlined as steps of their own.
    assert_eq!(s.flows[1].steps, [4, 5]);
    assert_eq!(s.flows[1].row, 7);
    let t = s.targets();
    assert_eq!(t.len(), 8);
    assert_eq!(
        t[3].url.to_string(),
        "http://127.0.0.1:8000/item/:id?vu=:vu"
    );
    assert_eq!(t[6].url, t[2].url);
    assert_eq!(s.steps[3].label, "browse/item");
}

#[test]
fn requests_render_with_the_user_s_values() {
    let s = compile_text(GOOD).unwrap();
    let mut vu = s.vu(4, 1);
    assert!(s.begin_user(&mut vu));
    let page = br#"<input name="csrf" value="a+b/c=">"#;
    let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
    s.after(
        0,
        &mut vu,
        Reply {
            status: 200,
            head,
            body: page,
        },
    )
    .unwrap();
    let (mut out, mut scratch) = (Vec::new(), Vec::new());
    s.render(1, &mut vu, true, b"Cookie: a=1\r\n", &mut out, &mut scratch);
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(text.starts_with("POST /login HTTP/1.1\r\n"), "{text}");
    assert!(text.contains("Host: 127.0.0.1:8000\r\n"), "{text}");
    assert!(text.contains("\r\nCookie: a=1\r\n"), "{text}");
    let body = "user=ann&password=pw1&csrf=a%2Bb%2Fc%3D";
    assert!(
        text.ends_with(&format!("Content-Length: {}\r\n\r\n{body}", body.len())),
        "{text}"
    );
    // Byte for byte: the request line, the headers in order, Host, the
    // extra lines, the length, the body.
    assert_eq!(
        text,
        format!(
            "POST /login HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n\
             Host: 127.0.0.1:8000\r\nCookie: a=1\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    );
    let json = br#"{"ok":true,"items":[{"id":42}]}"#;
    s.after(
        2,
        &mut vu,
        Reply {
            status: 200,
            head,
            body: json,
        },
    )
    .unwrap();
    s.render(3, &mut vu, false, b"", &mut out, &mut scratch);
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        text,
        "GET /item/42?vu=4 HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nConnection: close\r\n\r\n"
    );
    // The unique feed hands out its second row, then none.
    let mut other = s.vu(5, 2);
    assert!(s.begin_user(&mut other));
    assert!(!s.begin_user(&mut s.vu(6, 3)));
}

/// The error for `text`, which must name the scenario file and `line`.
fn error_at(text: &str, line: usize, says: &str) {
    let (_dir, path) = dir_with(text);
    let e = Scenario::compile(text, &path).unwrap_err();
    assert_eq!(e.line, Some(line), "{e}");
    assert!(
        e.to_string()
            .starts_with(&format!("{}:{line}: ", path.display())),
        "{e}"
    );
    assert!(e.message.contains(says), "{e} lacks {says:?}");
}

const FLOW: &str = "base = \"http://127.0.0.1:1\"\n[[flow]]\nname = \"f\"\n[[flow.step]]\n";

#[test]
fn each_mistake_names_its_line() {
    error_at(
        &format!("{FLOW}url = \"/a\"\n[[flow.step]]\nurl = \"/b/{{{{nope}}}}\"\n"),
        7,
        "unknown variable 'nope'",
    );
    error_at(
        &format!("{FLOW}url = \"/a\"\nextract = {{ x = {{ regex = \"(\" }} }}\n"),
        6,
        "bad regex",
    );
    error_at(
        &format!("{FLOW}url = \"/a\"\nextract = {{ x = {{ json = \"a..b\" }} }}\n"),
        6,
        "cannot match",
    );
    const TAIL: &str = "[[flow]]\nname = \"f\"\n[[flow.step]]\nurl = \"http://h:1/\"\n";
    error_at(
        &format!("[[feed]]\nname = \"u\"\nfile = \"missing.csv\"\n{TAIL}"),
        3,
        "cannot open feed",
    );
    error_at(
        &format!("[[feed]]\nname = \"u\"\nfile = \"empty.csv\"\npick = \"unique\"\n{TAIL}"),
        3,
        "has no rows",
    );
    error_at(
        "base = \"http://h:1\"\n[[flow]]\nname = \"a\"\n[[flow.step]]\nflow = \"b\"\n[[flow]]\nname = \"b\"\n[[flow.step]]\nflow = \"a\"\n",
        9,
        "cycle (a -> b -> a)",
    );
    error_at(
        &format!("{FLOW}url = \"/a\"\nthink = \"2s..1s\"\n"),
        6,
        "think",
    );
    error_at(
        &format!("{FLOW}url = \"http://{{{{vu}}}}/a\"\n"),
        5,
        "scheme, host and port",
    );
    error_at(
        &format!("{FLOW}url = \"/a\"\nbogus = 1\n"),
        6,
        "unknown field",
    );
    error_at(
        "[[flow]]\nname = \"f\"\n[[flow.step]]\nurl = \"/a\"\n",
        4,
        "set base",
    );
    // A value extracted by a later step is not there yet.
    error_at(&format!("{FLOW}url = \"/a/{{{{id}}}}\"\n[[flow.step]]\nurl = \"/b\"\nextract = {{ id = {{ json = \"/id\" }} }}\n"), 5, "unknown variable 'id'");
}

#[test]
fn loops_are_bounded_and_refused_where_they_cannot_work() {
    error_at(
        &format!("{FLOW}url = \"/a\"\nrepeat = 5000\n"),
        6,
        "at most 1000 rounds",
    );
    error_at(
        &format!("{FLOW}url = \"/a\"\nrepeat = -1\n"),
        6,
        "at most 1000 rounds",
    );
    error_at(
        &format!("{FLOW}url = \"/a\"\nrepeat = \"lots\"\n"),
        6,
        "whole number",
    );
    error_at(
        &format!("{FLOW}url = \"/a\"\nfor_each = \"ids\"\n"),
        6,
        "for_each \"ids\"",
    );
    error_at(
        &format!("{FLOW}url = \"/a\"\nas = \"id\"\n"),
        6,
        "as names the variable",
    );
    error_at(
        &format!("{FLOW}url = \"/a\"\nrepeat = 2\nfor_each = \"x\"\n"),
        6,
        "not both",
    );
    // The loop's variable is its own step's, and later steps'.
    assert!(compile_text(&format!(
        "{FLOW}url = \"/a\"\nextract = {{ ids = {{ json = \"/*/id\", pick = \"all\" }} }}\n\
         [[flow.step]]\nurl = \"/i/{{{{id}}}}\"\nfor_each = \"ids\"\nas = \"id\"\nwhen = \"id != 2\"\n\
         [[flow.step]]\nurl = \"/last/{{{{id}}}}\"\n"
    ))
    .is_ok());
}

#[test]
fn a_loops_count_and_elements_come_from_the_users_values() {
    let s = compile_text(&format!(
        "{FLOW}url = \"/a\"\nextract = {{ n = {{ json = \"/n\" }}, ids = {{ json = \"/ids/*\", pick = \"all\" }} }}\n\
         [[flow.step]]\nurl = \"/r/{{{{i}}}}\"\nrepeat = \"{{{{n}}}}\"\nas = \"i\"\n\
         [[flow.step]]\nurl = \"/e/{{{{id}}}}\"\nfor_each = \"ids\"\nas = \"id\"\n"
    ))
    .unwrap();
    let mut vu = s.vu(0, 1);
    let head = b"HTTP/1.1 200 OK\r\n\r\n";
    let reply = |body: &'static [u8]| Reply {
        status: 200,
        head,
        body,
    };
    s.after(0, &mut vu, reply(br#"{"n":3,"ids":[7,8,9]}"#))
        .unwrap();
    let (mut list, mut out, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
    let mut paths = Vec::new();
    for step in [1, 2] {
        let n = s.rounds(step, &mut vu, &mut list).unwrap();
        let mut at = 0;
        for round in 0..n {
            s.enter_round(step, round, &mut vu, &list, &mut at);
            s.render(step, &mut vu, true, b"", &mut out, &mut scratch);
            let line = String::from_utf8_lossy(&out)
                .lines()
                .next()
                .unwrap()
                .to_string();
            paths.push(line.split(' ').nth(1).unwrap().to_string());
        }
    }
    assert_eq!(paths, ["/r/1", "/r/2", "/r/3", "/e/7", "/e/8", "/e/9"]);
    // Above the cap, or not a number: the step fails, saying why.
    s.after(0, &mut vu, reply(br#"{"n":1001,"ids":[1]}"#))
        .unwrap();
    let e = s.rounds(1, &mut vu, &mut list).unwrap_err();
    assert!(e.contains("above the cap of 1000"), "{e}");
    let Some(rounds::Rounds {
        count: rounds::Count::Each(ids),
        ..
    }) = s.steps[2].rounds
    else {
        panic!("a for_each step")
    };
    vu.slots[ids].clear();
    assert_eq!(s.rounds(2, &mut vu, &mut list), Ok(0), "an empty list");
    s.after(0, &mut vu, reply(br#"{"n":"x","ids":[1]}"#))
        .unwrap();
    let e = s.rounds(1, &mut vu, &mut list).unwrap_err();
    assert!(e.contains("\"x\" is not a count"), "{e}");
}
