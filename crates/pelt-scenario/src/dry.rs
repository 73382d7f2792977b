//! `pelt run --scenario FILE --dry-run`: what the first users would send,
//! rendered as the run renders it (feeds read, templates filled), sent
//! nowhere. A value an earlier step would extract from its response is
//! shown as its `{{name}}`, since no response exists.

use crate::{Scenario, VuVars};

impl Scenario {
    /// One iteration of each flow (its `once` steps first) for the first
    /// `users` virtual users, each request as its HTTP/1.1 bytes would
    /// go, `redact` applied to each (secrets replaced).
    pub fn dry_run(&self, users: u64, redact: impl Fn(&str) -> String) -> String {
        self.walk(
            users,
            |_, vu| self.placeholders(vu),
            |step, number, vu, (), out| {
                self.show(step, number, vu, &redact, out);
                true
            },
        )
    }

    /// One iteration of each flow, `once` steps first, for the first
    /// `users` virtual users: `begin` makes a user's state (after its
    /// variables), `visit` shows a step, `false` when it failed (which
    /// ends the once steps, or the flow unless the step says
    /// `on_failure = "continue"`, as in a run).
    fn walk<U>(
        &self,
        users: u64,
        mut begin: impl FnMut(u64, &mut VuVars) -> U,
        mut visit: impl FnMut(usize, u64, &mut VuVars, &mut U, &mut String) -> bool,
    ) -> String {
        let mut out = String::new();
        for number in 0..users {
            let mut vu = self.vu(number, pelt_core::splitmix64(number));
            let mut user = begin(number, &mut vu);
            if !self.begin_user(&mut vu) {
                out.push_str("(a unique feed has no row left for this user)\n");
                break;
            }
            for &step in &self.once {
                if !visit(step, number, &mut vu, &mut user, &mut out) {
                    break;
                }
            }
            for flow in &self.flows {
                if !self.draw(&mut vu, crate::feed::Per::Iteration) {
                    out.push_str("(a unique feed has no row left for this flow)\n");
                    return out;
                }
                vu.iteration += 1;
                for &step in &flow.steps {
                    if !visit(step, number, &mut vu, &mut user, &mut out)
                        && self.steps[step].on_failure != crate::OnFailure::Continue
                    {
                        out.push_str(&format!(
                            "# user {number}: flow {} ends here (its step failed)\n\n",
                            flow.name
                        ));
                        break;
                    }
                }
            }
        }
        out
    }

    /// Every slot an extraction fills shows as `{{name}}` until then.
    fn placeholders(&self, vu: &mut VuVars) {
        for e in self.steps.iter().flat_map(|s| &s.extract) {
            vu.slots[e.slot] = format!("{{{{{}}}}}", e.name).into_bytes();
            vu.set[e.slot] = true;
        }
    }

    /// Appends step `step`'s request for user `number`, with a heading.
    fn show(
        &self,
        step: usize,
        number: u64,
        vu: &mut VuVars,
        redact: &impl Fn(&str) -> String,
        out: &mut String,
    ) {
        let s = &self.steps[step];
        // A loop's count from a response is not known without one: its
        // first round is shown, and the count as written.
        let mut list = Vec::new();
        let rounds = match self.rounds(step, vu, &mut list) {
            Ok(n) => n.min(1),
            Err(_) => 1,
        };
        let note = match s.rounds.is_some() {
            true => ", the first of its rounds (repeat/for_each)",
            false => "",
        };
        if rounds == 0 {
            out.push_str(&format!(
                "# user {number}, iteration {}, step {}: no rounds (its repeat/for_each count is 0)\n\n",
                vu.iteration, s.label
            ));
            return;
        }
        self.enter_round(step, 0, vu, &list, &mut 0);
        let heading = match self.runs(step, vu) {
            true => format!(
                "# user {number}, iteration {}, step {}{note}\n",
                vu.iteration, s.label
            ),
            false => {
                out.push_str(&format!(
                    "# user {number}, iteration {}, step {}: not sent (its when/skip_if)\n\n",
                    vu.iteration, s.label
                ));
                return;
            }
        };
        let (mut request, mut scratch) = (Vec::new(), Vec::new());
        self.render(step, vu, true, b"", &mut request, &mut scratch);
        out.push_str(&heading);
        out.push_str(redact(&String::from_utf8_lossy(&request)).trim_end());
        out.push_str("\n\n");
    }
}

/// `--dry-run=send`: what sends a rendered step and reads its answer
/// (the engine's, with a connection and a cookie jar per virtual user).
pub trait DrySender {
    /// Header lines to add to step `step`'s request (the jar's
    /// `Cookie: ...\r\n`), or nothing.
    fn extra(&mut self, step: usize) -> Vec<u8>;
    /// Sends step `step`'s `request` and reads the response.
    fn send(&mut self, step: usize, request: &[u8]) -> Result<DryReply, String>;
}

/// A response as the dry run shows it.
#[derive(Debug, Clone, Default)]
pub struct DryReply {
    /// Its status.
    pub status: u16,
    /// Its head (status line and headers).
    pub head: Vec<u8>,
    /// Its body (chunked framing still on), at most what was read.
    pub body: Vec<u8>,
    /// How long it took, milliseconds.
    pub ms: f64,
}

/// How the dry run hides secrets: in a request, in other text, and
/// whether a variable's name marks a secret (its value is then hidden).
pub struct Redact<'a> {
    /// A rendered request.
    pub request: &'a dyn Fn(&str) -> String,
    /// Any other text (a response's body).
    pub text: &'a dyn Fn(&str) -> String,
    /// A variable whose name is a secret's (`token`, `password`, ...).
    pub secret_name: &'a dyn Fn(&str) -> bool,
}

impl std::fmt::Debug for Redact<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redact").finish_non_exhaustive()
    }
}

/// How much of a response body the dry run shows.
const BODY_SHOWN: usize = 300;

impl Scenario {
    /// `--dry-run=send`: one iteration of each flow (its `once` steps
    /// first) for the first `users` virtual users, each step sent by the
    /// sender `sender(user)` gives, every round of a loop, and shown with
    /// its response (status, a body cut to 300 characters) and what each
    /// extraction took and each check found; secrets through `redact`.
    pub fn dry_send<S: DrySender>(
        &self,
        users: u64,
        redact: &Redact<'_>,
        mut sender: impl FnMut(u64) -> S,
    ) -> String {
        self.walk(
            users,
            |number, _| sender(number),
            |step, number, vu, s, out| self.send_shown(step, number, vu, s, redact, out),
        )
    }

    /// Sends step `step`'s rounds for user `number` and shows each;
    /// `false` when one failed.
    fn send_shown(
        &self,
        step: usize,
        number: u64,
        vu: &mut VuVars,
        sender: &mut impl DrySender,
        redact: &Redact<'_>,
        out: &mut String,
    ) -> bool {
        let s = &self.steps[step];
        let mut list = Vec::new();
        let rounds = match self.rounds(step, vu, &mut list) {
            Ok(n) => n,
            Err(why) => {
                out.push_str(&format!(
                    "# user {number}, iteration {}, step {}: not sent: {why} (fails as extract)\n\n",
                    vu.iteration, s.label
                ));
                return false;
            }
        };
        let mut at = 0;
        for round in 0..rounds {
            self.enter_round(step, round, vu, &list, &mut at);
            let of = match s.rounds.is_some() {
                true => format!(", round {} of {rounds}", round + 1),
                false => String::new(),
            };
            let heading = format!(
                "# user {number}, iteration {}, step {}{of}",
                vu.iteration, s.label
            );
            if !self.runs(step, vu) {
                out.push_str(&format!("{heading}: not sent (its when/skip_if)\n\n"));
                continue;
            }
            let (mut request, mut scratch) = (Vec::new(), Vec::new());
            let extra = sender.extra(step);
            self.render(step, vu, true, &extra, &mut request, &mut scratch);
            out.push_str(&heading);
            out.push('\n');
            out.push_str((redact.request)(&String::from_utf8_lossy(&request)).trim_end());
            out.push_str("\n\n");
            let reply = match sender.send(step, &request) {
                Ok(r) => r,
                Err(why) => {
                    out.push_str(&format!("-> no response: {why}\n\n"));
                    return false;
                }
            };
            let mut scratch = Vec::new();
            let body = crate::response::dechunked(&reply.head, &reply.body, &mut scratch);
            let body_text = {
                let text = String::from_utf8_lossy(body);
                let shown: String = text.chars().take(BODY_SHOWN).collect();
                match text.chars().count() > BODY_SHOWN {
                    true => format!("{shown}... ({} bytes)", body.len()),
                    false => shown,
                }
            };
            out.push_str(&format!(
                "-> {} in {:.1} ms\n   body: {}\n",
                reply.status,
                reply.ms,
                (redact.text)(body_text.trim_end()).replace('\n', "\n         ")
            ));
            let result = self.after(
                step,
                vu,
                crate::Reply {
                    status: reply.status,
                    head: &reply.head,
                    body,
                },
            );
            // Extractions run in order and stop at the first missing
            // value: the ones after it were not tried.
            let missing = match &result {
                Err(crate::StepFailure::Extract(m)) => s
                    .extract
                    .iter()
                    .position(|e| m.contains(&format!("'{}'", e.name))),
                _ => None,
            };
            for (i, e) in s.extract.iter().enumerate() {
                let value = match missing {
                    Some(m) if i == m => "(missing)".to_string(),
                    Some(m) if i > m => "(not tried)".to_string(),
                    _ if (redact.secret_name)(&e.name) => pelt_core::secrets::MARKER.to_string(),
                    _ => (redact.text)(&String::from_utf8_lossy(&vu.slots[e.slot])),
                };
                out.push_str(&format!("   extract {} = {value}\n", e.name));
            }
            let failed = match &result {
                Ok(()) => !(200..400).contains(&reply.status),
                Err(_) => true,
            };
            match &result {
                Err(crate::StepFailure::Extract(m)) => {
                    out.push_str(&format!("   extract failed: {}\n", (redact.text)(m)))
                }
                Err(crate::StepFailure::Check(m)) => {
                    out.push_str(&format!("   check failed: {}\n", (redact.text)(m)))
                }
                Ok(()) if !s.checks.is_empty() => out.push_str("   check: passed\n"),
                Ok(()) => {}
            }
            if failed && result.is_ok() {
                out.push_str(&format!(
                    "   failed: status {} is outside 2xx/3xx\n",
                    reply.status
                ));
            }
            out.push('\n');
            if failed && s.on_failure != crate::OnFailure::Continue {
                return false;
            }
        }
        true
    }
}
