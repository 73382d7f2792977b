//! Campaigns: many runs watched as one, such as `pelt experiment`'s
//! variants x load levels x blocks. The dashboard shows which run of how
//! many is going, a row for each finished run, and the verdicts so far,
//! beside the live charts of the run in progress (which start afresh with
//! each run: see [`crate::Live::next_run`]).
//!
//! Generic on purpose: a run is a label, a status and a few named figures,
//! so any driver of several runs (an experiment, a capacity sweep) can
//! publish its progress without the dashboard knowing what it is.

use serde::Serialize;

/// The progress of several runs, as the dashboard shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Campaign {
    /// What is being run, e.g. `experiment 'nginx tuning'`.
    pub title: String,
    /// Runs planned in all.
    pub total: usize,
    /// The run in progress (e.g. `block 2, variant B, 1000 req/s`), if any.
    pub current: Option<String>,
    /// One row per finished run, in order.
    pub runs: Vec<CampaignRun>,
    /// The verdicts so far, as plain text (the driver's own report); empty
    /// until there are any.
    pub verdicts: String,
}

/// A finished run of a campaign.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CampaignRun {
    /// Which run it was.
    pub label: String,
    /// How it ended: `done`, `interrupted`, `failed`, or the driver's word.
    pub status: String,
    /// Its headline figures, named (`req/s`, `p99`, ...), already
    /// formatted for people.
    pub figures: Vec<(String, String)>,
}

impl CampaignRun {
    /// Run `label`'s row, from its summary: its status and headline
    /// figures (req/s, p50 and p99 of the headline latency, the failed
    /// share), as every campaign view shows them.
    pub fn of(label: String, summary: &pelt_core::RunSummary) -> CampaignRun {
        let l = summary.headline().of(&summary.total);
        let quantile = |q: f64| match l.is_empty() {
            true => "-".to_string(),
            false => pelt_core::human_ns(pelt_core::rank::quantile(l, q)).to_string(),
        };
        let failed = summary.total.failed_share() * 100.0;
        CampaignRun {
            label,
            status: match summary.interrupted {
                true => "interrupted",
                false => "done",
            }
            .into(),
            figures: vec![
                ("req/s".into(), format!("{:.1}", summary.throughput())),
                ("p50".into(), quantile(0.5)),
                ("p99".into(), quantile(0.99)),
                ("failed".into(), format!("{failed:.2}%")),
            ],
        }
    }
}

impl Campaign {
    /// A campaign of `total` runs, none started.
    pub fn new(title: impl Into<String>, total: usize) -> Campaign {
        Campaign {
            title: title.into(),
            total,
            ..Campaign::default()
        }
    }

    /// Runs finished so far.
    pub fn done(&self) -> usize {
        self.runs.len()
    }
}
