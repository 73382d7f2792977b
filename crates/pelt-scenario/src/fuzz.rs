//! Entry points for the fuzz targets in `fuzz/` (docs/FUZZING.md): a
//! scenario file and a HAR file, each from arbitrary bytes. They panic
//! only when a rule breaks: a panic in the parser, or a property of what
//! it accepts. The unit tests below run them with proptest.

use crate::har::{import, HarOptions};
use crate::{Reply, Scenario};
use std::path::Path;

/// A scenario file (feeds resolve against a folder that does not exist,
/// so only feed-less files compile): whatever compiles has flows with
/// steps, a target row per step and flow, and renders and takes a
/// response without panicking.
pub fn scenario(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(s) = Scenario::compile(&text, Path::new("/nonexistent/pelt-fuzz/s.toml")) else {
        return;
    };
    assert!(s.flows.iter().all(|f| !f.steps.is_empty()));
    assert_eq!(s.targets().len(), s.steps.len() + s.flows.len());
    let mut vu = s.vu(0, 1);
    let (mut out, mut scratch) = (Vec::new(), Vec::new());
    for step in 0..s.steps.len() {
        s.render(step, &mut vu, true, b"", &mut out, &mut scratch);
        assert!(
            out.windows(4).any(|w| w == b"\r\n\r\n"),
            "a request has a head"
        );
        let head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n";
        let _ = s.after(
            step,
            &mut vu,
            Reply {
                status: 200,
                head,
                body: data,
            },
        );
    }
}

/// A HAR file, with and without assets: what imports is TOML.
pub fn har(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for include_assets in [false, true] {
        let options = HarOptions {
            include_assets,
            base: None,
            include_origins: Vec::new(),
        };
        if let Ok(out) = import(&text, Path::new("fuzz.har"), &options) {
            if let Err(e) = toml::from_str::<toml::Table>(&out) {
                panic!("the import is not TOML ({e}):\n{out}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn config() -> ProptestConfig {
        ProptestConfig {
            cases: 256,
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    }

    const SCENARIO_WORDS: &[&str] = &[
        "base = \"http://127.0.0.1:1\"\n",
        "[[flow]]\n",
        "name = \"f\"\n",
        "name = \"g\"\n",
        "[[flow.step]]\n",
        "[[once]]\n",
        "url = \"/a/{{vu}}\"\n",
        "url = \"/{{x}}\"\n",
        "flow = \"f\"\n",
        "flow = \"g\"\n",
        "body = \"{{uuid}}{{random_int(1, 3)}}{{x|url}}\"\n",
        "extract = { x = { json = \"/a/0\" } }\n",
        "extract = { x = { regex = \"(.)\" } }\n",
        "check = { status = [200], json = { \"/a\" = 1 } }\n",
        "think = \"1ms..2ms\"\n",
        "{{",
        "}}",
        "\"",
        "\n",
    ];

    const HAR_WORDS: &[&str] = &[
        r#"{"log":{"entries":["#,
        r#"{"startedDateTime":"2024-01-01T00:00:00Z","time":1,"request":{"method":"GET","url":"http://h:1/a/123","headers":[]},"response":{"content":{"mimeType":"application/json","text":"{\"id\":123}"}}}"#,
        r#"{"startedDateTime":"2024-01-01T00:00:01Z","time":1,"request":{"method":"POST","url":"http://h:1/b?t=123","headers":[{"name":"Authorization","value":"x"}],"postData":{"mimeType":"application/x-www-form-urlencoded","text":"t=123&a=\"{{"}},"response":{"content":{"mimeType":"text/html","text":"<i name=\"t\" value=\"123\">"}}}"#,
        ",",
        "]}}",
        "\"",
    ];

    fn near(words: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..256),
            proptest::collection::vec(proptest::sample::select(words), 0..14)
                .prop_map(|w| w.concat().into_bytes()),
        ]
    }

    proptest! {
        #![proptest_config(config())]

        #[test]
        fn scenarios_never_panic(data in near(SCENARIO_WORDS)) {
            scenario(&data);
        }

        #[test]
        fn hars_never_panic_and_import_as_toml(data in near(HAR_WORDS)) {
            har(&data);
        }
    }
}
