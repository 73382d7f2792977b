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
        let mut out = String::new();
        for number in 0..users {
            let mut vu = self.vu(number, pelt_core::splitmix64(number));
            self.placeholders(&mut vu);
            if !self.begin_user(&mut vu) {
                out.push_str("(a unique feed has no row left for this user)\n");
                break;
            }
            for &step in &self.once {
                self.show(step, number, &mut vu, &redact, &mut out);
            }
            for flow in &self.flows {
                if !self.draw(&mut vu, crate::feed::Per::Iteration) {
                    out.push_str("(a unique feed has no row left for this flow)\n");
                    return out;
                }
                vu.iteration += 1;
                for &step in &flow.steps {
                    self.show(step, number, &mut vu, &redact, &mut out);
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
        out.push_str(&redact(&String::from_utf8_lossy(&request)));
        out.push_str("\n\n");
    }
}
