//! A transport for tests only, and the proof of what adding one takes:
//! this module, implementing [`Transport`], and its line in
//! `worker::senders::spawn_senders` (for its `Protocol::Echo`). Nothing
//! else in the worker knows of it: the plain run's sender loop, the
//! timeout, the recording and a scenario's virtual users drive it as they
//! drive HTTP/1.1, HTTP/2 and HTTP/3.
//!
//! It answers every request itself, with no network: a 200 whose head
//! names the request line (`X-Echo`) and whose body is the request's
//! bytes, so a scenario can extract from it and check it. Each thread
//! counts what it answered (the tests' witness: a worker runs on the
//! thread that starts it).

use super::{Attempt, Outgoing, Runner, Transport};
use crate::outcome::{Failure, Response};
use crate::session::Jar;
use std::cell::Cell;
use std::io::Write;

thread_local! {
    /// Requests answered on this thread.
    static ANSWERED: Cell<u64> = const { Cell::new(0) };
}

/// Requests the echo transport answered on this thread so far.
pub(crate) fn answered() -> u64 {
    ANSWERED.get()
}

/// A sender that answers its own requests.
pub(crate) struct EchoSender {
    /// Its jar (`--cookies`), as a real sender keeps one; unused.
    _jar: Option<Jar>,
}

impl EchoSender {
    pub fn new(jar: Option<Jar>) -> EchoSender {
        EchoSender { _jar: jar }
    }
}

impl Transport for EchoSender {
    async fn send(
        &mut self,
        w: &impl Runner,
        out: &mut Outgoing<'_>,
        sender: usize,
        attempt: &mut Attempt,
    ) -> Result<Response, Failure> {
        let plan = w.plan();
        let bytes: &[u8] = match out {
            Outgoing::Target(t) => &plan.requests[*t as usize].bytes,
            Outgoing::Step(s) => s.bytes,
        };
        attempt.sent = Some(w.mark_sent(sender));
        attempt.bytes_out = bytes.len() as u64;
        // An answer is due at once, but a sender's task yields as a
        // network's would, so the worker's other tasks run.
        tokio::task::yield_now().await;
        attempt.first_byte = Some(w.now());
        let line = bytes.split(|&b| b == b'\r').next().unwrap_or_default();
        let mut head = Vec::new();
        let _ = write!(head, "HTTP/1.1 200 OK\r\nX-Echo: ");
        head.extend_from_slice(line);
        let _ = write!(head, "\r\nContent-Length: {}\r\n\r\n", bytes.len());
        if let Outgoing::Step(s) = out {
            s.head.clear();
            s.head.extend_from_slice(&head);
            *s.sets_cookie = false;
            if let Some(body) = s.body.as_deref_mut() {
                body.clear();
                body.extend_from_slice(bytes);
            }
        }
        ANSWERED.set(ANSWERED.get() + 1);
        Ok(Response {
            status: 200,
            bytes_in: (head.len() + bytes.len()) as u64,
            body_bytes: bytes.len() as u64,
            reusable: true,
        })
    }

    fn reset(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::answered;
    use crate::intervals::WorkerMsg;
    use crate::plan::{Protocol, RunPlan};
    use pelt_core::{Load, RunConfig, Stop, Target, Url};
    use std::sync::Arc;
    use std::time::Duration;

    /// Runs one worker of `config` to its end on this thread, its senders
    /// on the echo transport; returns its seconds merged.
    fn run_on_echo(config: &RunConfig) -> pelt_core::Recorder {
        config.validate().expect("a valid configuration");
        let mut plan = RunPlan::new(config).expect("a plan");
        // The one change that puts a run on another transport.
        plan.protocol = Protocol::Echo;
        let share = plan.shares(config)[0];
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let (tx, rx) = std::sync::mpsc::channel();
        let (_cancel, cancel_rx) = tokio::sync::watch::channel(false);
        crate::worker::run_worker(rt, Arc::new(plan), share, Vec::new(), tx, cancel_rx);
        let mut all = pelt_core::Recorder::new();
        while let Ok(msg) = rx.try_recv() {
            if let WorkerMsg::Interval { rec, .. } = msg {
                all.merge_counts(&*rec);
            }
        }
        all
    }

    fn config(targets: Vec<Target>, connections: u32, requests: u64) -> RunConfig {
        let stop = Stop {
            requests: Some(requests),
            duration: None,
        };
        let mut config = RunConfig::new(targets, Load::closed(connections), stop);
        config.threads = 1;
        // Bounds every exchange, so a test that goes wrong fails, not hangs.
        config.http.timeout = Duration::from_secs(5);
        config
    }

    #[test]
    fn a_plain_run_goes_over_a_transport_plugged_in_with_one_line() {
        // Never dialled: the echo transport answers itself.
        let url = Url::parse("http://127.0.0.1:9/echo").expect("a URL");
        let before = answered();
        let rec = run_on_echo(&config(vec![Target::get(url)], 3, 30));
        assert_eq!(answered() - before, 30, "the transport's own count");
        assert_eq!((rec.requests, rec.successes), (30, 30));
        assert_eq!(rec.failed(), 0);
    }

    /// A flow whose second step carries what the first extracted from
    /// the transport's response head, and checks that the transport's
    /// response body (its request, echoed) has it.
    const ECHO_FLOW: &str = r#"
base = "http://127.0.0.1:9"

[[flow]]
name = "echo"
[[flow.step]]
name = "first"
url = "/a?vu={{vu}}"
extract = { seen = { header = "X-Echo" } }
[[flow.step]]
name = "second"
method = "POST"
url = "/b"
body = "saw {{seen}}"
check = { body_contains = "saw GET /a?vu=" }
"#;

    #[test]
    fn a_scenario_goes_over_a_transport_plugged_in_with_one_line() {
        let file = std::path::Path::new("echo.toml");
        let sc = pelt_scenario::Scenario::compile(ECHO_FLOW, file).expect("a scenario");
        let mut config = config(sc.targets(), 2, 12);
        config.scenario = Some(pelt_core::ScenarioSource {
            path: "echo.toml".into(),
            text: ECHO_FLOW.into(),
            steps: sc.steps.len(),
            goes_on: Vec::new(),
            names: vec!["echo/first".into(), "echo/second".into(), "echo".into()],
        });
        let before = answered();
        let rec = run_on_echo(&config);
        // Twelve flows of two steps, every step answered and every flow
        // complete: the second step's check saw the first's extraction.
        assert_eq!(answered() - before, 24, "the transport's own count");
        assert_eq!((rec.requests, rec.successes), (24, 24));
        let rows: Vec<(u64, u64)> = rec
            .targets
            .iter()
            .map(|t| (t.requests(), t.successes()))
            .collect();
        assert_eq!(rows, [(12, 12), (12, 12), (12, 12)], "steps, then the flow");
    }
}
