//! pelt-scenario: user journeys for pelt (`pelt run --scenario FILE`).
//!
//! A scenario file (TOML, docs/SCENARIOS.md) holds data feeds, steps
//! (a request with templates in its method, URL, headers and body; what
//! to extract from its response; what to check), flows of steps with
//! think times and weights, and `once` steps each virtual user runs
//! before its first flow (a login). It is compiled once, before any load,
//! into plain data ([`Scenario`]): templates into literal bytes and
//! holes, names into slots, regexes and JSON pointers checked, flows
//! inlined. Every mistake is a [`ScenarioError`] naming the file and
//! line. The engine then runs it with no interpreter: a request is
//! rendered by copying bytes into a buffer ([`Scenario::render`]), a
//! response is matched by [`Scenario::after`].
//!
//! - [`template`]: `{{...}}` holes and built-ins;
//! - [`feed`]: CSV and JSON-lines feeds, streamed;
//! - [`response`]: extraction and checks;
//! - [`har`]: a browser's HAR export turned into a scenario;
//! - [`targets`]: a targets file turned into a scenario.

#![warn(missing_docs)]

mod compile;
pub mod condition;
mod dry;
mod error;
pub mod feed;
#[doc(hidden)]
pub mod fuzz;
pub mod har;
mod pruned;
pub mod response;
pub mod rounds;
pub mod targets;
pub mod template;

pub use dry::{DryReply, DrySender, Redact};
pub use error::ScenarioError;
pub use feed::Feed;
pub use response::{Reply, StepFailure};
pub use template::{Template, VuVars};

use pelt_core::{RunConfig, ScenarioSource, Target, ThinkTime, Url};
use std::path::Path;
use std::sync::atomic::AtomicU64;

/// One step: a request to render, and what to do with its response.
#[derive(Debug)]
pub struct Step {
    /// Its name in the file (`step N` when unnamed).
    pub name: String,
    /// The flow it belongs to (`once` for once steps).
    pub flow: String,
    /// `flow/name`, as reports show it.
    pub label: String,
    /// The method.
    pub method: Template,
    /// Whether it is a HEAD request (its response has no body).
    pub head_request: bool,
    /// The path and query.
    pub path: Template,
    /// The `Host` header's value (the URL's, fixed).
    pub host: String,
    /// Extra headers.
    pub headers: Vec<(String, Template)>,
    /// The body, if any.
    pub body: Option<Template>,
    /// The request line and headers (`Host` included) as one template,
    /// literal runs joined: what [`Scenario::render`] copies first.
    pub request_head: Template,
    /// The pause after it, before the flow's next step.
    pub think: Option<ThinkTime>,
    /// `when` / `skip_if`: whether it is sent (a step not sent is not a
    /// request, and its flow goes on).
    pub when: Option<condition::Condition>,
    /// What its failure does to its flow and user.
    pub on_failure: OnFailure,
    /// `repeat` / `for_each`: sent this many times in a row (once when
    /// `None`).
    pub rounds: Option<rounds::Rounds>,
    /// Values to take from its response.
    pub extract: Vec<response::Extraction>,
    /// What its response must be.
    pub checks: response::Checks,
    /// The JSON pointers its extractions and checks read, compiled
    /// ([`response::pointers`]).
    pub pointers: response::Pointers,
    /// Its row in the run's targets (method, URL with holes as `:name`).
    pub target: Target,
}

impl Step {
    /// The request line, `headers` and a `Host` line (unless `headers`
    /// has one) as one template ([`Step::request_head`]).
    pub(crate) fn request_head(
        method: &Template,
        path: &Template,
        headers: &[(String, Template)],
        host: &str,
    ) -> Template {
        let mut t = Template::default();
        t.push_template(method);
        t.push_literal(b" ");
        t.push_template(path);
        t.push_literal(b" HTTP/1.1\r\n");
        for (name, value) in headers {
            t.push_literal(name.as_bytes());
            t.push_literal(b": ");
            t.push_template(value);
            t.push_literal(b"\r\n");
        }
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
            t.push_literal(b"Host: ");
            t.push_literal(host.as_bytes());
            t.push_literal(b"\r\n");
        }
        t
    }

    /// Whether its response's head and body are needed (extraction or
    /// checks beyond the status); else they are counted and dropped.
    pub fn reads_response(&self) -> bool {
        !self.extract.is_empty()
            || !self.checks.body_contains.is_empty()
            || !self.checks.json_equals.is_empty()
            || !self.checks.json_matches.is_empty()
    }
}

/// `on_failure`: what a failed step does next (Locust's
/// `catch_response` with `response.failure()`, then going on or not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnFailure {
    /// `"end_flow"` (the default): the flow ends, failed; the user
    /// starts its next flow.
    #[default]
    EndFlow,
    /// `"continue"`: counted failed, and the flow goes on to its next
    /// step (the flow still counts failed, by its first failure).
    Continue,
    /// `"end_user"`: the flow ends, failed, and the virtual user stops
    /// (no more flows).
    EndUser,
}

/// A flow: steps in order, and how often it is picked.
#[derive(Debug, Clone)]
pub struct FlowDef {
    /// Its name.
    pub name: String,
    /// Its share of flows started, relative to the others.
    pub weight: u32,
    /// Its steps (indices into [`Scenario::steps`]), included flows inlined.
    pub steps: Vec<usize>,
    /// Its row in the run's targets (after every step's).
    pub row: usize,
}

/// A compiled scenario: plain data for the engine, shared by its workers.
#[derive(Debug)]
pub struct Scenario {
    /// Every step: once steps first, then each flow's. Step `i` is the
    /// run's target `i`.
    pub steps: Vec<Step>,
    /// Steps each virtual user runs once, before its first flow.
    pub once: Vec<usize>,
    /// The flows.
    pub flows: Vec<FlowDef>,
    /// The feeds, open.
    pub feeds: Vec<Feed>,
    /// `pacing`: each virtual user starts a flow at most this often (the
    /// next one at the last one's start plus this, or at once if it took
    /// longer), with the line it is on. Closed loop only.
    pub pacing: Option<(std::time::Duration, usize)>,
    /// What the file does that works but is likely a mistake: said
    /// before the run (`pelt: warning: ...`), never refused.
    pub warnings: Vec<ScenarioWarning>,
    /// Variable slots a virtual user holds.
    pub slots: usize,
    /// `{{counter}}`: one count for the whole process.
    pub counter: AtomicU64,
    cumulative: Vec<u64>,
}

impl Scenario {
    /// Compiles the scenario `text` read from `file` (feeds are opened
    /// from its folder).
    pub fn compile(text: &str, file: &Path) -> Result<Scenario, ScenarioError> {
        compile::compile(text, file)
    }

    /// Compiles the scenario a run keeps.
    pub fn from_source(source: &ScenarioSource) -> Result<Scenario, ScenarioError> {
        compile::compile(&source.text, Path::new(&source.path))
    }

    /// Makes this process shard `index` of `count` of the run
    /// (`--shard I/N`): `in turn` and `unique` feeds hand it only its
    /// share of rows (row k to shard k mod N), so a `unique` row is used
    /// once across all shards.
    pub fn for_shard(&mut self, index: u32, count: u32) {
        for f in &mut self.feeds {
            f.set_shard(index, count);
        }
    }

    /// The run's targets: a row per step, then a row per flow.
    pub fn targets(&self) -> Vec<Target> {
        let mut t: Vec<Target> = self.steps.iter().map(|s| s.target.clone()).collect();
        for f in &self.flows {
            let first = &self.steps[f.steps[0]].target;
            // Never sent: the row's method and URL are its first step's
            // (a registered method, so nothing warns about it).
            t.push(Target {
                method: first.method.clone(),
                url: first.url.clone(),
                headers: Vec::new(),
                body: Vec::new(),
                weight: f.weight,
            });
        }
        t
    }

    /// A virtual user's variables: `number` across the run, random
    /// numbers from `seed`.
    pub fn vu(&self, number: u64, seed: u64) -> VuVars {
        VuVars {
            slots: vec![Vec::new(); self.slots],
            set: vec![false; self.slots],
            vu: number,
            iteration: 0,
            rng: fastrand::Rng::with_seed(seed),
        }
    }

    /// Takes the rows of feeds read once per virtual user (before its
    /// `once` steps). `false`: a `unique` feed ran out.
    pub fn begin_user(&self, vu: &mut VuVars) -> bool {
        self.draw(vu, feed::Per::User)
    }

    /// Starts a flow: takes the rows of feeds read per iteration and
    /// picks a flow by weight. `None`: a `unique` feed ran out (no flow
    /// starts; the run ends when every virtual user has stopped).
    pub fn begin_flow(&self, vu: &mut VuVars) -> Option<usize> {
        if !self.draw(vu, feed::Per::Iteration) {
            return None;
        }
        vu.iteration += 1;
        let total = *self.cumulative.last().unwrap_or(&1);
        let r = vu.rng.u64(..total);
        Some(self.cumulative.iter().position(|&c| r < c).unwrap_or(0))
    }

    /// The first `unique` feed that ran out: its file's name and the
    /// rows this process used of it (the report says so).
    pub fn ran_out(&self) -> Option<(String, u64)> {
        self.feeds.iter().find_map(|f| {
            let rows = f.ran_out()?;
            let file = f
                .path()
                .file_name()
                .map_or_else(|| f.name.clone(), |n| n.to_string_lossy().into_owned());
            Some((file, rows))
        })
    }

    fn draw(&self, vu: &mut VuVars, per: feed::Per) -> bool {
        self.feeds
            .iter()
            .filter(|f| f.per == per)
            .all(|f| f.next_row(&mut vu.rng, &mut vu.slots, &mut vu.set))
    }

    /// Writes step `step`'s HTTP/1.1 request for `vu` into `out` (cleared
    /// first), with `extra` (whole header lines, such as the jar's
    /// `Cookie: ...\r\n`, or nothing) among its headers; `scratch` holds
    /// the body while its length is unknown.
    pub fn render(
        &self,
        step: usize,
        vu: &mut VuVars,
        keepalive: bool,
        extra: &[u8],
        out: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
    ) {
        let s = &self.steps[step];
        out.clear();
        s.request_head.render(vu, &self.counter, out);
        if !keepalive {
            out.extend_from_slice(b"Connection: close\r\n");
        }
        out.extend_from_slice(extra);
        scratch.clear();
        if let Some(body) = &s.body {
            body.render(vu, &self.counter, scratch);
        }
        if s.body.is_some() || matches!(s.target.method.as_str(), "POST" | "PUT" | "PATCH") {
            use std::io::Write;
            let _ = write!(out, "Content-Length: {}\r\n", scratch.len());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(scratch);
    }

    /// How many times step `step` is sent now (1 without `repeat` or
    /// `for_each`); `list` keeps a `for_each` list for
    /// [`Scenario::enter_round`]. `Err`: why the count is unusable (the
    /// step then fails, kind `extract`).
    pub fn rounds(
        &self,
        step: usize,
        vu: &mut VuVars,
        list: &mut Vec<u8>,
    ) -> Result<usize, String> {
        match &self.steps[step].rounds {
            None => Ok(1),
            Some(r) => r.count(vu, &self.counter, list),
        }
    }

    /// Starts round `round` of step `step`: its `as` variable set from
    /// `list` (read from `*at` on).
    pub fn enter_round(
        &self,
        step: usize,
        round: usize,
        vu: &mut VuVars,
        list: &[u8],
        at: &mut usize,
    ) {
        if let Some(r) = &self.steps[step].rounds {
            r.enter(round, vu, list, at);
        }
    }

    /// Whether step `step` is sent for `vu` now (its `when`/`skip_if`).
    pub fn runs(&self, step: usize, vu: &VuVars) -> bool {
        self.steps[step].when.as_ref().is_none_or(|c| c.holds(vu))
    }

    /// Applies step `step`'s extractions and checks to its response (its
    /// body without transfer framing: [`response::dechunked`] removes a
    /// chunked one), storing what it extracts in `vu`'s variables.
    pub fn after(&self, step: usize, vu: &mut VuVars, reply: Reply<'_>) -> Result<(), StepFailure> {
        let s = &self.steps[step];
        if s.extract.is_empty() && s.checks.is_empty() {
            return Ok(());
        }
        response::apply(
            &s.label,
            reply,
            (&s.extract, &s.checks, &s.pointers),
            |slot, v| {
                vu.slots[slot].clear();
                vu.slots[slot].extend_from_slice(v);
                vu.set[slot] = true;
            },
            |n| vu.rng.usize(..n),
        )
    }
}

/// What a scenario file does that works but is likely a mistake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScenarioWarning {
    /// A step sends a body and no `Content-Type`: most servers then
    /// parse nothing of it (a form's fields, a JSON document).
    BodyWithoutContentType {
        /// The scenario file.
        file: std::path::PathBuf,
        /// The body's line.
        line: usize,
        /// `flow/step`.
        step: String,
    },
}

impl std::fmt::Display for ScenarioWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScenarioWarning::BodyWithoutContentType { file, line, step } => write!(
                f,
                "{}:{line}: step '{step}' sends a body without a Content-Type header, so the \
                 server may parse none of it; add headers = {{ \"Content-Type\" = \
                 \"application/x-www-form-urlencoded\" }} (a form) or \"application/json\"",
                file.display()
            ),
        }
    }
}

/// `pelt run --scenario FILE`: reads and compiles `file` (every check,
/// feeds opened, before any load) and makes `config` run it: its targets
/// become the scenario's rows, and the file's text goes with the run.
/// Returns what the file does that is likely a mistake, to say before
/// the run.
pub fn lower(file: &Path, config: &mut RunConfig) -> Result<Vec<ScenarioWarning>, ScenarioError> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        ScenarioError::at(
            file,
            None,
            format!("cannot read the scenario file: {e}; check the path"),
        )
    })?;
    let scenario = Scenario::compile(&text, file)?;
    if let (Some((_, line)), Some(_)) = (scenario.pacing, config.load.rate()) {
        return Err(ScenarioError::at(
            file,
            Some(line),
            "pacing sets when each user starts its flows and --rate when the run starts them; \
             use one (remove pacing, or --rate)",
        ));
    }
    config.targets = scenario.targets().into();
    config.scenario = Some(ScenarioSource {
        goes_on: scenario
            .steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.on_failure == OnFailure::Continue)
            .map(|(i, _)| i)
            .collect(),
        path: file.to_string_lossy().into_owned(),
        text,
        steps: scenario.steps.len(),
        names: scenario
            .steps
            .iter()
            .map(|s| s.label.clone())
            .chain(scenario.flows.iter().map(|f| f.name.clone()))
            .collect(),
    });
    Ok(scenario.warnings)
}

/// A URL placeholder for a run's flags before `--scenario` replaces its
/// targets.
pub fn placeholder_url() -> Url {
    Url::parse("http://127.0.0.1/").expect("a valid URL")
}

#[cfg(test)]
mod tests;
