//! A scenario file compiled: TOML read with the place of every value,
//! names resolved to slots, templates, regexes and JSON pointers checked,
//! flows inlined (a cycle refused), feeds opened. Everything that can be
//! wrong is found here, before any load, with the file and line.

use crate::error::{line_of, ScenarioError};
use crate::feed::{parse_per, parse_pick, Feed, Per, Pick};
use crate::response::{json_pointer, Checks, Extraction, From};
use crate::template::{substitute_env, Template};
use crate::{FlowDef, Scenario, Step};
use pelt_core::{Target, ThinkTime, Url};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    base: Option<Spanned<String>>,
    /// Locust's `constant_pacing`: each user starts a flow every so often.
    pacing: Option<Spanned<String>>,
    #[serde(default)]
    feed: Vec<RawFeed>,
    #[serde(default)]
    once: Vec<RawStep>,
    #[serde(default)]
    flow: Vec<RawFlow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFeed {
    name: Spanned<String>,
    file: Spanned<String>,
    format: Option<String>,
    pick: Option<Spanned<String>>,
    per: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    name: Spanned<String>,
    weight: Option<Spanned<u32>>,
    #[serde(default)]
    step: Vec<RawStep>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    name: Option<Spanned<String>>,
    method: Option<Spanned<String>>,
    url: Option<Spanned<String>>,
    /// Includes another flow's steps here.
    flow: Option<Spanned<String>>,
    #[serde(default)]
    headers: BTreeMap<String, Spanned<String>>,
    body: Option<Spanned<String>>,
    think: Option<Spanned<String>>,
    /// Sent only when this holds (`"id"`, `"iteration == 1"`).
    when: Option<Spanned<String>>,
    /// Not sent when this holds.
    skip_if: Option<Spanned<String>>,
    /// `"end_flow"` (default), `"continue"` or `"end_user"`.
    on_failure: Option<Spanned<String>>,
    /// Sent this many times in a row (`3`, `"{{n}}"`).
    repeat: Option<Spanned<CountOrText>>,
    /// Sent once per element of this (comma-joined) variable.
    for_each: Option<Spanned<String>>,
    /// The variable each round of `repeat` / `for_each` sets.
    #[serde(rename = "as")]
    round_var: Option<Spanned<String>>,
    #[serde(default)]
    extract: BTreeMap<String, Spanned<RawExtract>>,
    check: Option<Spanned<RawCheck>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExtract {
    json: Option<String>,
    regex: Option<String>,
    group: Option<usize>,
    header: Option<String>,
    cookie: Option<String>,
    /// With a `*` in `json`: which matching element.
    pick: Option<String>,
    /// With a `*` in `json`: pointers within an element and their values.
    #[serde(rename = "where")]
    filter: Option<BTreeMap<String, serde_json::Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    status: Option<Vec<u16>>,
    body_contains: Option<OneOrMany>,
    json: Option<BTreeMap<String, serde_json::Value>>,
    json_matches: Option<BTreeMap<String, String>>,
}

/// `repeat = 3` or `repeat = "{{n}}"`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum CountOrText {
    Count(i64),
    Text(String),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// The compiler's state: the file, its text, and the variables so far.
struct Compiler<'a> {
    file: &'a Path,
    text: &'a str,
    slots: HashMap<String, usize>,
    next_slot: usize,
    base: Option<String>,
    /// Columns of feeds read per iteration (`users.name`), which a
    /// `once` step, run before any iteration, cannot use.
    iteration_columns: Vec<String>,
    /// What the file does that works but is likely a mistake.
    warnings: Vec<crate::ScenarioWarning>,
}

impl Compiler<'_> {
    fn err<T>(
        &self,
        span: std::ops::Range<usize>,
        message: impl Into<String>,
    ) -> Result<T, ScenarioError> {
        Err(ScenarioError::at(
            self.file,
            Some(line_of(self.text, span.start)),
            message,
        ))
    }

    fn slot(&mut self, name: &str) -> usize {
        if let Some(&s) = self.slots.get(name) {
            return s;
        }
        let s = self.next_slot;
        self.next_slot += 1;
        self.slots.insert(name.to_string(), s);
        s
    }

    /// Compiles template `s` in the variables `scope` holds.
    fn template(
        &self,
        s: &Spanned<String>,
        scope: &HashMap<String, usize>,
    ) -> Result<Template, ScenarioError> {
        Template::compile(s.get_ref(), &mut |n| scope.get(n).copied()).map_err(|e| {
            // The hole's own line when the string spans several.
            let extra = s.get_ref()[..e.at.min(s.get_ref().len())]
                .matches('\n')
                .count();
            // A per-iteration feed's column where there is no iteration
            // yet (a once step): say so, not "unknown variable".
            let hole = s.get_ref()[e.at.min(s.get_ref().len())..]
                .trim_start_matches('{')
                .split(['}', '|'])
                .next()
                .unwrap_or("")
                .trim();
            let message = match self.iteration_columns.iter().find(|c| *c == hole) {
                Some(col) => format!(
                    "'{col}' comes from a feed read per iteration, and a [[once]] step runs \
                     before any iteration; set per = \"user\" on the feed '{}' (a row per \
                     virtual user), or move the step into a flow",
                    col.split('.').next().unwrap_or("")
                ),
                None => e.message,
            };
            ScenarioError::at(
                self.file,
                Some(line_of(self.text, s.span().start) + extra),
                message,
            )
        })
    }
}

/// A JSON extraction from its pointer: one value, or (a `*` segment)
/// one of a list's elements by `pick` and `where`.
fn json_from(pointer: &str, r: &RawExtract) -> Result<From, String> {
    let Some(star) = pointer
        .find("/*")
        .filter(|&i| matches!(pointer.as_bytes().get(i + 2), None | Some(b'/')))
    else {
        if r.pick.is_some() || r.filter.is_some() {
            return Err(format!(
                "pick and where choose from a list: put a * where the list's index goes, like /items/*/id (not {pointer})"
            ));
        }
        return Ok(From::Json(pointer.to_string()));
    };
    let (list, item) = (&pointer[..star], &pointer[star + 2..]);
    if item.contains("/*") {
        return Err("one * in a JSON path, the list to pick from".to_string());
    }
    let pick = match &r.pick {
        Some(p) => crate::response::PickFrom::parse(p)?,
        None => crate::response::PickFrom::First,
    };
    let mut filter = Vec::new();
    for (p, v) in r.filter.iter().flatten() {
        filter.push((json_pointer(p)?, v.clone()));
    }
    Ok(From::JsonList {
        list: list.to_string(),
        item: item.to_string(),
        filter,
        pick,
    })
}

/// Compiles the scenario `text`, read from `file` (feeds are found from
/// its folder).
pub(crate) fn compile(text: &str, file: &Path) -> Result<Scenario, ScenarioError> {
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        ScenarioError::at(
            file,
            line,
            format!(
                "{}; see docs/SCENARIOS.md for the file's form",
                e.message().trim_end_matches('\n')
            ),
        )
    })?;
    let mut c = Compiler {
        file,
        text,
        slots: HashMap::new(),
        next_slot: 0,
        base: None,
        iteration_columns: Vec::new(),
        warnings: Vec::new(),
    };
    if let Some(b) = &raw.base {
        let v = substitute_env(b.get_ref())
            .map_err(|e| ScenarioError::at(file, Some(line_of(text, b.span().start)), e.message))?;
        if let Err(e) = Url::parse(&v) {
            return c.err(b.span(), format!("base {v:?} is not a URL: {e}"));
        }
        c.base = Some(v.trim_end_matches('/').to_string());
    }
    let pacing = match &raw.pacing {
        Some(p) => Some((
            pelt_core::parse_duration(p.get_ref())
                .or_else(|e| c.err(p.span(), format!("pacing {:?}: {e}", p.get_ref())))?,
            line_of(text, p.span().start),
        )),
        None => None,
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    // Feeds: their columns are variables `feed.column`.
    let mut feeds = Vec::new();
    let mut user_scope = HashMap::new();
    let mut all_feed_scope = HashMap::new();
    for f in &raw.feed {
        let name = f.name.get_ref();
        if name.is_empty() || name.contains(['.', '{', '}', ' ']) {
            return c.err(
                f.name.span(),
                format!("feed name {name:?} must be a plain word (no dots, braces or spaces)"),
            );
        }
        if feeds.iter().any(|x: &Feed| &x.name == name) {
            return c.err(
                f.name.span(),
                format!("a second feed named '{name}'; give each feed its own name"),
            );
        }
        let pick = match &f.pick {
            Some(p) => parse_pick(p.get_ref()).or_else(|m| c.err(p.span(), m))?,
            None => Pick::InTurn,
        };
        let per = match &f.per {
            Some(p) => parse_per(p.get_ref()).or_else(|m| c.err(p.span(), m))?,
            None => Per::Iteration,
        };
        let path = dir.join(f.file.get_ref());
        let first = c.next_slot;
        let feed = Feed::open(name, &path, f.format.as_deref(), pick, per, first)
            .or_else(|m| c.err(f.file.span(), m))?;
        for col in &feed.columns {
            let s = c.slot(&format!("{name}.{col}"));
            all_feed_scope.insert(format!("{name}.{col}"), s);
            if per == Per::User {
                user_scope.insert(format!("{name}.{col}"), s);
            } else {
                c.iteration_columns.push(format!("{name}.{col}"));
            }
        }
        feeds.push(feed);
    }
    let mut steps = Vec::new();
    // `once` steps see per-user feed rows and what earlier once steps
    // extracted.
    let mut scope = user_scope;
    let mut once = Vec::new();
    for (i, s) in raw.once.iter().enumerate() {
        if let Some(f) = &s.flow {
            return c.err(
                f.span(),
                "a once step cannot include a flow; list its steps under [[once]]",
            );
        }
        once.push(steps.len());
        let step = compile_step(&mut c, s, "once", i, &mut scope)?;
        steps.push(step);
    }
    for (k, v) in all_feed_scope {
        scope.insert(k, v);
    }
    let once_scope = scope;
    // Flows: each inlined in order, its included flows' steps in place.
    let by_name: HashMap<&str, &RawFlow> = raw
        .flow
        .iter()
        .map(|f| (f.name.get_ref().as_str(), f))
        .collect();
    let mut flows = Vec::new();
    for f in &raw.flow {
        if raw
            .flow
            .iter()
            .filter(|g| g.name.get_ref() == f.name.get_ref())
            .count()
            > 1
        {
            return c.err(
                f.name.span(),
                format!(
                    "two flows named '{}'; give each its own name",
                    f.name.get_ref()
                ),
            );
        }
        if f.name.get_ref().is_empty()
            || f.name.get_ref().contains('/')
            || f.name.get_ref() == "once"
        {
            return c.err(
                f.name.span(),
                format!(
                    "flow name {:?}: give a non-empty name without '/', other than \"once\"",
                    f.name.get_ref()
                ),
            );
        }
        let weight = f.weight.as_ref().map_or(Ok(1), |w| {
            if *w.get_ref() == 0 {
                c.err(
                    w.span(),
                    "weight 0 would never run the flow; give it 1 or more, or remove the flow",
                )
            } else {
                Ok(*w.get_ref())
            }
        })?;
        if f.step.is_empty() {
            return c.err(
                f.name.span(),
                format!("flow '{}' has no [[flow.step]]; add one", f.name.get_ref()),
            );
        }
        let mut scope = once_scope.clone();
        let mut ids = Vec::new();
        let mut stack = vec![f.name.get_ref().as_str()];
        inline(
            &mut c,
            f,
            &by_name,
            &mut stack,
            &mut scope,
            &mut steps,
            &mut ids,
            f.name.get_ref(),
        )?;
        flows.push(FlowDef {
            name: f.name.get_ref().clone(),
            weight,
            steps: ids,
            row: 0,
        });
    }
    if flows.is_empty() && once.is_empty() {
        return Err(ScenarioError::at(file, None, "no [[flow]] and no [[once]] steps: nothing to send; add a [[flow]] with a [[flow.step]]"));
    }
    if flows.is_empty() {
        return Err(ScenarioError::at(
            file,
            None,
            "only [[once]] steps: add a [[flow]] to repeat",
        ));
    }
    let n = steps.len();
    for (i, f) in flows.iter_mut().enumerate() {
        f.row = n + i;
    }
    let mut cumulative = Vec::new();
    let mut sum = 0u64;
    for f in &flows {
        sum += u64::from(f.weight);
        cumulative.push(sum);
    }
    Ok(Scenario {
        steps,
        once,
        flows,
        feeds,
        pacing,
        warnings: c.warnings,
        slots: c.next_slot,
        counter: std::sync::atomic::AtomicU64::new(0),
        cumulative,
    })
}

/// Appends flow `f`'s steps (those of flows it includes in place).
#[allow(clippy::too_many_arguments)]
fn inline<'r>(
    c: &mut Compiler<'_>,
    f: &'r RawFlow,
    by_name: &HashMap<&str, &'r RawFlow>,
    stack: &mut Vec<&'r str>,
    scope: &mut HashMap<String, usize>,
    steps: &mut Vec<Step>,
    ids: &mut Vec<usize>,
    top: &str,
) -> Result<(), ScenarioError> {
    for (i, s) in f.step.iter().enumerate() {
        if let Some(inc) = &s.flow {
            let name = inc.get_ref().as_str();
            let Some(g) = by_name.get(name) else {
                return c.err(
                    inc.span(),
                    format!("no flow named '{name}' to include; check the name"),
                );
            };
            if stack.contains(&name) {
                let mut cycle: Vec<&str> = stack.clone();
                cycle.push(name);
                return c.err(
                    inc.span(),
                    format!(
                        "flows include each other in a cycle ({}); break the cycle",
                        cycle.join(" -> ")
                    ),
                );
            }
            if s.url.is_some() || s.method.is_some() || s.body.is_some() {
                return c.err(
                    inc.span(),
                    "a step that includes a flow has no method, url or body of its own",
                );
            }
            stack.push(g.name.get_ref());
            inline(c, g, by_name, stack, scope, steps, ids, top)?;
            stack.pop();
            continue;
        }
        ids.push(steps.len());
        let step = compile_step(c, s, top, i, scope)?;
        steps.push(step);
    }
    Ok(())
}

fn compile_step(
    c: &mut Compiler<'_>,
    s: &RawStep,
    flow: &str,
    index: usize,
    scope: &mut HashMap<String, usize>,
) -> Result<Step, ScenarioError> {
    let name = s
        .name
        .as_ref()
        .map_or_else(|| format!("step {}", index + 1), |n| n.get_ref().clone());
    let Some(url) = &s.url else {
        let at = s.name.as_ref().map(|n| n.span()).unwrap_or(0..0);
        return c.err(at, format!("step '{name}' of '{flow}' has no url; add url = \"/path\" (with base) or a full URL"));
    };
    let url_text = substitute_env(url.get_ref()).map_err(|e| {
        ScenarioError::at(c.file, Some(line_of(c.text, url.span().start)), e.message)
    })?;
    let full = if url_text.starts_with('/') {
        match &c.base {
            Some(b) => format!("{b}{url_text}"),
            None => return c.err(url.span(), format!("url {url_text:?} is a path; set base = \"http://host:port\" at the top, or give a full URL")),
        }
    } else {
        url_text.clone()
    };
    // The origin is fixed: connections are opened to it before the run.
    let Some(scheme_end) = full.find("://") else {
        return c.err(
            url.span(),
            format!("url {full:?} needs http:// or https://"),
        );
    };
    let path_at = full[scheme_end + 3..]
        .find(['/', '?'])
        .map_or(full.len(), |i| i + scheme_end + 3);
    let origin = &full[..path_at];
    if origin.contains("{{") {
        return c.err(url.span(), "the URL's scheme, host and port cannot hold a {{...}} (connections are opened before the run); template the path, or use {{env.NAME}}");
    }
    let origin_url = Url::parse(&format!("{origin}/"))
        .or_else(|e| c.err(url.span(), format!("url {full:?}: {e}")))?;
    let path_text = match &full[path_at..] {
        "" => "/".to_string(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_string(),
    };
    // The loop comes first: its `as` variable is in the step's own
    // templates and condition.
    let rounds = compile_rounds(c, s, scope)?;
    let spanned = |t: &str, at: &Spanned<String>| Spanned::new(at.span(), t.to_string());
    let path = c.template(&spanned(&path_text, url), scope)?;
    let method_text = s
        .method
        .as_ref()
        .map_or("GET".to_string(), |m| m.get_ref().clone());
    let method = match &s.method {
        Some(m) => c.template(m, scope)?,
        None => Template::literal("GET"),
    };
    if method.is_literal() && pelt_core::check_method(&method_text).is_err() {
        return c.err(
            s.method.as_ref().map_or(0..0, |m| m.span()),
            format!("invalid method {method_text:?}; use a word like GET or POST"),
        );
    }
    let mut headers = Vec::new();
    for (k, v) in &s.headers {
        if pelt_core::check_header(k, "x").is_err() {
            return c.err(v.span(), format!("invalid header name {k:?}"));
        }
        headers.push((k.clone(), c.template(v, scope)?));
    }
    let body = s.body.as_ref().map(|b| c.template(b, scope)).transpose()?;
    if let Some(b) = &s.body {
        let typed = s
            .headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("content-type"));
        if !typed && !b.get_ref().is_empty() {
            c.warnings
                .push(crate::ScenarioWarning::BodyWithoutContentType {
                    file: c.file.to_path_buf(),
                    line: line_of(c.text, b.span().start),
                    step: format!("{flow}/{name}"),
                });
        }
    }
    let think = match &s.think {
        Some(t) => Some(
            ThinkTime::parse(t.get_ref())
                .or_else(|e| c.err(t.span(), format!("think {:?}: {e}", t.get_ref())))?,
        ),
        None => None,
    };
    // Read before this step's own extractions exist.
    let when = match (&s.when, &s.skip_if) {
        (Some(w), Some(_)) => {
            return c.err(w.span(), "a step takes when or skip_if, not both; keep one")
        }
        (Some(t), None) | (None, Some(t)) => Some(
            crate::condition::Condition::compile(t.get_ref(), scope, s.skip_if.is_some())
                .or_else(|m| c.err(t.span(), m))?,
        ),
        (None, None) => None,
    };
    let on_failure = match &s.on_failure {
        None => crate::OnFailure::EndFlow,
        Some(o) => match o.get_ref().as_str() {
            "end_flow" => crate::OnFailure::EndFlow,
            "continue" => crate::OnFailure::Continue,
            "end_user" => crate::OnFailure::EndUser,
            other => {
                return c.err(
                    o.span(),
                    format!("on_failure {other:?}: use \"end_flow\", \"continue\" or \"end_user\""),
                )
            }
        },
    };
    // Extractions: defined from here on, for later steps.
    let mut extract = Vec::new();
    for (var, e) in &s.extract {
        if var.is_empty() || var.contains(['.', '{', '}', '|', ' ']) {
            return c.err(
                e.span(),
                format!("variable name {var:?} must be a plain word"),
            );
        }
        let r = e.get_ref();
        // An extraction is compiled once: a hole in it would be taken
        // literally and fail on every response.
        let texts = [&r.json, &r.regex, &r.header, &r.cookie];
        if texts
            .iter()
            .any(|t| t.as_deref().is_some_and(|t| t.contains("{{")))
        {
            return c.err(
                e.span(),
                format!(
                    "extract '{var}': a {{{{...}}}} in an extraction is not filled in (it is \
                     compiled once, before the run, and would fail on every response); write \
                     the path itself"
                ),
            );
        }
        let given = [
            r.json.is_some(),
            r.regex.is_some(),
            r.header.is_some(),
            r.cookie.is_some(),
        ];
        if given.iter().filter(|&&g| g).count() != 1 {
            return c.err(
                e.span(),
                format!("extract '{var}' needs exactly one of json, regex, header or cookie"),
            );
        }
        let from = if let Some(p) = &r.json {
            let pointer = json_pointer(p).or_else(|m| c.err(e.span(), m))?;
            json_from(&pointer, r).or_else(|m| c.err(e.span(), format!("extract '{var}': {m}")))?
        } else if r.pick.is_some() || r.filter.is_some() {
            return c.err(
                e.span(),
                format!("extract '{var}': pick and where choose from a JSON list; use json = \"/items/*/id\""),
            );
        } else if let Some(re) = &r.regex {
            let compiled = regex::bytes::Regex::new(re).or_else(|err| {
                c.err(
                    e.span(),
                    format!(
                        "extract '{var}': bad regex {re:?}: {}",
                        err.to_string().lines().last().unwrap_or("")
                    ),
                )
            })?;
            let groups = compiled.captures_len() - 1;
            let group = r.group.unwrap_or(usize::from(groups > 0));
            if group > groups {
                return c.err(
                    e.span(),
                    format!("extract '{var}': the regex has {groups} group(s), not group {group}"),
                );
            }
            From::Regex(compiled, group)
        } else if let Some(h) = &r.header {
            From::Header(h.clone())
        } else {
            From::Cookie(r.cookie.clone().unwrap_or_default())
        };
        extract.push(Extraction {
            name: var.clone(),
            slot: 0,
            from,
        });
    }
    for e in &mut extract {
        e.slot = c.slot(&e.name);
        scope.insert(e.name.clone(), e.slot);
    }
    let mut checks = Checks::default();
    if let Some(ch) = &s.check {
        let r = ch.get_ref();
        checks.status = r.status.clone().unwrap_or_default();
        if checks.status.iter().any(|&s| !(100..=599).contains(&s)) {
            return c.err(ch.span(), "check status: codes are 100 to 599");
        }
        checks.body_contains = match &r.body_contains {
            Some(OneOrMany::One(s)) => vec![s.as_bytes().to_vec()],
            Some(OneOrMany::Many(v)) => v.iter().map(|s| s.as_bytes().to_vec()).collect(),
            None => Vec::new(),
        };
        for (p, v) in r.json.iter().flatten() {
            checks
                .json_equals
                .push((json_pointer(p).or_else(|m| c.err(ch.span(), m))?, v.clone()));
        }
        for (p, re) in r.json_matches.iter().flatten() {
            let compiled = regex::bytes::Regex::new(re).or_else(|err| {
                c.err(
                    ch.span(),
                    format!(
                        "check json_matches {p}: bad regex {re:?}: {}",
                        err.to_string().lines().last().unwrap_or("")
                    ),
                )
            })?;
            checks
                .json_matches
                .push((json_pointer(p).or_else(|m| c.err(ch.span(), m))?, compiled));
        }
    }
    let host = origin_url.host_header();
    let label = Template::label(&path_text);
    let target_url = Url::parse(&format!(
        "{origin}{}",
        if label.starts_with('/') {
            label.clone()
        } else {
            format!("/{label}")
        }
    ))
    .or_else(|e| c.err(url.span(), format!("url {full:?}: {e}")))?;
    let display_method = if method.is_literal() {
        method_text.clone()
    } else {
        "GET".into()
    };
    Ok(Step {
        request_head: Step::request_head(&method, &path, &headers, &host),
        label: format!("{flow}/{name}"),
        name,
        flow: flow.to_string(),
        head_request: method_text.eq_ignore_ascii_case("HEAD"),
        method,
        path,
        host,
        headers,
        body,
        think,
        when,
        on_failure,
        rounds,
        pointers: crate::response::pointers(&extract, &checks),
        extract,
        checks,
        target: Target {
            method: display_method,
            url: target_url,
            headers: Vec::new(),
            body: Vec::new(),
            weight: 1,
        },
    })
}

/// A step's `repeat` or `for_each` (with `as`), checked: one of the two,
/// a literal count within [`crate::rounds::MAX_ROUNDS`], a list that is
/// a variable in scope. The `as` variable joins `scope`.
fn compile_rounds(
    c: &mut Compiler<'_>,
    s: &RawStep,
    scope: &mut HashMap<String, usize>,
) -> Result<Option<crate::rounds::Rounds>, ScenarioError> {
    use crate::rounds::{Count, Rounds, MAX_ROUNDS};
    let count = match (&s.repeat, &s.for_each) {
        (Some(r), Some(_)) => {
            return c.err(
                r.span(),
                "a step takes repeat or for_each, not both; keep one",
            )
        }
        (None, None) => {
            if let Some(a) = &s.round_var {
                return c.err(
                    a.span(),
                    "as names the variable of a repeat or for_each; add one, or remove as",
                );
            }
            return Ok(None);
        }
        (Some(r), None) => {
            let text = match r.get_ref() {
                CountOrText::Count(n) => n.to_string(),
                CountOrText::Text(t) => t.clone(),
            };
            let t = c.template(&Spanned::new(r.span(), text.clone()), scope)?;
            if t.is_literal() {
                let n: i64 = text.trim().parse().or_else(|_| {
                    c.err(r.span(), format!("repeat {text:?}: give a whole number or a variable, like repeat = 3 or repeat = \"{{{{n}}}}\""))
                })?;
                if !(0..=MAX_ROUNDS as i64).contains(&n) {
                    return c.err(r.span(), format!("repeat {n}: at most {MAX_ROUNDS} rounds a step (a bound every loop keeps); send fewer, or split the flow"));
                }
            }
            Count::Times(t)
        }
        (None, Some(f)) => {
            let name = f
                .get_ref()
                .trim()
                .trim_start_matches("{{")
                .trim_end_matches("}}")
                .trim();
            match scope.get(name) {
                Some(&slot) => Count::Each(slot),
                None => return c.err(f.span(), format!("for_each {name:?}: no earlier step's extract or feed column of that name; name a variable holding a list (extract it with pick = \"all\")")),
            }
        }
    };
    let var = match &s.round_var {
        None => None,
        Some(a) => {
            let name = a.get_ref();
            if name.is_empty() || name.contains(['.', '{', '}', '|', ' ']) {
                return c.err(
                    a.span(),
                    format!("as {name:?}: a variable's name is a plain word"),
                );
            }
            let slot = c.slot(name);
            scope.insert(name.clone(), slot);
            Some(slot)
        }
    };
    Ok(Some(Rounds { count, var }))
}
