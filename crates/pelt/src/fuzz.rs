//! Entry point for the experiment-plan fuzz target in `fuzz/` (see
//! docs/FUZZING.md), also run on arbitrary text by the unit tests below.

use crate::flags::PlanFlags;
use pelt_campaign::experiment::plan::{Plan, MAX_BLOCKS};
use std::path::Path;

/// Parses plan text (invalid UTF-8 replaced, as a lossy reader would see
/// it) whose relative paths start in a folder that does not exist.
/// Panics when the parser panics, or when a plan it accepts breaks what
/// the experiment runner relies on: at least one variant and one level, a
/// configuration per variant and level, blocks within bounds, and every
/// block's order a permutation of the variants.
pub fn plan(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(plan) = Plan::parse(&text, Path::new("/nonexistent/pelt-fuzz"), &PlanFlags) else {
        return;
    };
    assert!(!plan.variants.is_empty() && !plan.levels.is_empty());
    assert!((1..=MAX_BLOCKS).contains(&plan.blocks), "{}", plan.blocks);
    for v in &plan.variants {
        assert_eq!(v.configs.len(), plan.levels.len(), "{}", v.name);
    }
    assert_eq!(
        plan.total_runs(),
        plan.blocks as usize * plan.variants.len() * plan.levels.len()
    );
    for block in 0..plan.blocks.min(4) {
        let mut order = plan.order(block);
        order.sort_unstable();
        assert!(order.iter().copied().eq(0..plan.variants.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Pieces of plans, so that arbitrary sequences often parse.
    const WORDS: &[&str] = &[
        "[load]\n",
        "url = \"http://127.0.0.1:1/\"\n",
        "rate = [100, 200]\n",
        "rate = 1e308\n",
        "connections = 4\n",
        "connections = []\n",
        "duration = \"1s\"\n",
        "duration = \"999999999s\"\n",
        "warmup = \"1e9s\"\n",
        "args = [\"-n\", \"5\"]\n",
        "blocks = 6\n",
        "blocks = 0\n",
        "ready_timeout = \"1s\"\n",
        "[[variant]]\n",
        "name = \"a\"\n",
        "name = \"b\"\n",
        "name = \"\"\n",
        "targets = \"t.txt\"\n",
        "ready_url = \"http://[::1]:2/\"\n",
        "=",
        "\"",
        "\n",
    ];

    fn input() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..128),
            proptest::collection::vec(proptest::sample::select(WORDS), 0..16)
                .prop_map(|w| w.concat().into_bytes()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn plan_never_panics(data in input()) {
            plan(&data);
        }
    }

    #[test]
    fn plan_accepts_a_plan() {
        let text = "[load]\nurl = \"http://127.0.0.1:1/\"\nrate = [100, 200]\nduration = \"1s\"\n\n[[variant]]\nname = \"a\"\n\n[[variant]]\nname = \"b\"\n";
        assert!(Plan::parse(text, Path::new("."), &PlanFlags).is_ok());
        plan(text.as_bytes());
    }
}
