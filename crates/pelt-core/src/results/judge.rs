//! A run judged by its `--assert` terms: each [`Assertion`] (parsed in
//! the first room, [`crate::check`]) evaluated on a [`RunSummary`].

use crate::check::{Assertion, Checked, Latency, Measure, Op, TargetRef};
use crate::duration::human_ns;
use crate::summary::RunSummary;
use hdrhistogram::Histogram;

impl Assertion {
    /// Evaluates the assertion on `s`.
    pub fn check(&self, s: &RunSummary) -> Checked {
        let (actual, shown) = match &self.target {
            None => self.measure_run(s),
            Some(t) => match find_target(s, t) {
                Ok(i) => self.measure_target(s, i),
                Err(why) => (f64::NAN, why),
            },
        };
        // NaN compares false: an assertion about nothing fails.
        let ok = match self.op {
            Op::Lt => actual < self.threshold,
            Op::Le => actual <= self.threshold,
            Op::Gt => actual > self.threshold,
            Op::Ge => actual >= self.threshold,
            Op::Eq => actual == self.threshold,
        };
        Checked {
            assertion: self.to_string(),
            actual: shown,
            ok,
        }
    }
}

impl Assertion {
    /// The measured value and its text, over the whole run.
    fn measure_run(&self, s: &RunSummary) -> (f64, String) {
        let (h, name) = match self.latency {
            Latency::Headline => (s.headline().of(&s.total), s.headline().name()),
            Latency::Response => (&s.total.response, "response time"),
            Latency::Service => (&s.total.service, "service time"),
            Latency::SendLag => (&s.total.send_lag, "send lag"),
            Latency::WsUpgrade => {
                let ws = s.total.ws.as_deref().map(|w| &w.upgrades);
                return match (ws, self.measure) {
                    (None, _) => (f64::NAN, "no WebSocket upgrades".to_string()),
                    (h, Measure::Percentile(_) | Measure::Mean | Measure::Max) => self.named(
                        self.measure_of(h, s.total.requests, s.total.successes),
                        "WebSocket upgrade",
                    ),
                    _ => (f64::NAN, "not measured".to_string()),
                };
            }
            stream => {
                let st = s.total.streamed.as_deref();
                let (h, name) = match stream {
                    Latency::FirstEvent => (st.map(|t| &t.first_event), "time to first event"),
                    Latency::Gap => (st.map(|t| &t.gaps), "gap between events"),
                    Latency::MeanGap => (st.map(|t| &t.mean_gap), "mean gap per stream"),
                    Latency::EventLatency => (st.map(|t| &t.event_latency), "event latency"),
                    Latency::TokensPerStream => {
                        return self.tokens_per_s(st.map(|t| &t.tokens_per_s));
                    }
                    _ => (st.map(|t| &t.duration), "stream duration"),
                };
                return match (h, self.measure) {
                    (None, _) => (f64::NAN, "no streamed responses".to_string()),
                    (h, m) if !matches!(m, Measure::Rate | Measure::Throughput) => self.named(
                        self.measure_of(h, s.total.requests, s.total.successes),
                        name,
                    ),
                    _ => (f64::NAN, "not measured".to_string()),
                };
            }
        };
        match self.measure {
            Measure::Rate => (s.sent_rate(), format!("{:.1}/s", s.sent_rate())),
            Measure::Throughput => (s.throughput(), format!("{:.1}/s", s.throughput())),
            _ => self.named(
                self.measure_of(Some(h), s.total.requests, s.total.successes),
                name,
            ),
        }
    }

    /// `tokens_per_s.`: a percentile, the mean or the max of the complete
    /// streams' output tokens per second (held in thousandths).
    fn tokens_per_s(&self, h: Option<&Histogram<u64>>) -> (f64, String) {
        let Some(h) = h else {
            return (f64::NAN, "no streamed responses".to_string());
        };
        if h.is_empty() {
            return (f64::NAN, "no stream with output tokens".to_string());
        }
        let v = match self.measure {
            Measure::Percentile(p) => crate::rank::percentile(h, p) as f64,
            Measure::Mean => h.mean(),
            Measure::Max => h.max() as f64,
            _ => return (f64::NAN, "not measured".to_string()),
        } / 1_000.0;
        (v, format!("{v:.1} tokens/s per stream"))
    }

    /// The measured value and its text, for target `i`.
    fn measure_target(&self, s: &RunSummary, i: usize) -> (f64, String) {
        let empty = crate::recorder::TargetStats::default();
        let t = s.total.targets.get(i).unwrap_or(&empty);
        let timed = i < crate::recorder::MAX_TIMED_TARGETS;
        match (t.response(), self.measure) {
            (_, Measure::Percentile(_) | Measure::Mean | Measure::Max) if !timed => (
                f64::NAN,
                format!(
                    "not timed: only the first {} targets have percentiles",
                    crate::recorder::MAX_TIMED_TARGETS
                ),
            ),
            // A target keeps response time only: said, since a closed
            // loop's bare p99 is otherwise service time.
            (h, _) => self.named(
                self.measure_of(h, t.requests(), t.successes()),
                "response time",
            ),
        }
    }

    /// A latency's text with the latency it read (`3.1ms service time`),
    /// so that the line says which one was judged.
    fn named(&self, (v, text): (f64, String), name: &str) -> (f64, String) {
        match self.measure {
            Measure::Percentile(_) | Measure::Mean | Measure::Max if v.is_finite() => {
                (v, format!("{text} {name}"))
            }
            _ => (v, text),
        }
    }

    /// A latency of `h`, or a share or count of `requests`.
    fn measure_of(
        &self,
        h: Option<&Histogram<u64>>,
        requests: u64,
        successes: u64,
    ) -> (f64, String) {
        let latency = |v: u64| (v as f64, human_ns(v).to_string());
        match (self.measure, h) {
            (Measure::Percentile(_) | Measure::Mean | Measure::Max, h)
                if h.is_none_or(|h| h.is_empty()) =>
            {
                (f64::NAN, "no timed responses".to_string())
            }
            (Measure::Percentile(p), Some(h)) => latency(crate::rank::percentile(h, p)),
            (Measure::Mean, Some(h)) => latency(h.mean() as u64),
            (Measure::Max, Some(h)) => latency(h.max()),
            (Measure::Failed, _) => {
                // The failed count: requests that did not succeed.
                let failed = requests - successes;
                let share = if requests == 0 {
                    f64::NAN
                } else {
                    failed as f64 / requests as f64
                };
                (share, format!("{:.3}%", share * 100.0))
            }
            (Measure::Requests, _) => (requests as f64, requests.to_string()),
            // Rate and throughput are the run's (refused per target).
            _ => (f64::NAN, "not measured".to_string()),
        }
    }
}

/// The index of the target `t` names in `s`'s configuration, or why none.
fn find_target(s: &RunSummary, t: &TargetRef) -> Result<usize, String> {
    let targets = &s.config.targets;
    match t {
        TargetRef::Position(n) if *n <= targets.len() => Ok(n - 1),
        TargetRef::Position(_) => Err(format!(
            "no such target: the run has {} target{}",
            targets.len(),
            if targets.len() == 1 { "" } else { "s" }
        )),
        TargetRef::Url(u) => {
            let hits: Vec<usize> = targets
                .iter()
                .enumerate()
                .filter(|(_, t)| t.url.to_string() == *u || t.url.path_and_query == *u)
                .map(|(i, _)| i)
                .collect();
            match hits.as_slice() {
                [i] => Ok(*i),
                [] => Err(format!("no target's URL or path is {u}")),
                many => Err(format!(
                    "{} targets have {u}: use target[N], N from 1",
                    many.len()
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of `n` responses: 1 ms each but the top `tail.len()`.
    fn summary_with_tail(n: u64, tail: &[u64]) -> RunSummary {
        use crate::config::Load;
        let mut rec = crate::Recorder::new();
        rec.requests = n;
        rec.successes = n;
        // A closed loop: its headline is service time; response time
        // here adds the same 1 ms turnaround to every request.
        rec.service
            .record_n(1_000_000, n - tail.len() as u64)
            .unwrap();
        rec.response
            .record_n(2_000_000, n - tail.len() as u64)
            .unwrap();
        for &v in tail {
            rec.service.record(v).unwrap();
            rec.response.record(v + 1_000_000).unwrap();
        }
        let mut header = crate::results::testing::header();
        header.config.load = Load::closed(1);
        let mut b = crate::SummaryBuilder::new(header, None);
        b.add(1_795_000_000, &rec);
        b.finish(None)
    }

    /// Issue 38: streams' latencies by name; a run without streams fails
    /// them, saying so, and none goes per target.
    #[test]
    fn stream_latencies_are_judged_by_name() {
        let plain = summary_with_tail(100, &[]);
        let a: Assertion = "ttft p99 < 200ms".parse().unwrap();
        let c = a.check(&plain);
        assert!(!c.ok);
        assert_eq!(c.actual, "no streamed responses");
        let mut rec = crate::Recorder::new();
        rec.requests = 1;
        rec.successes = 1;
        let mut t = crate::stream::Tally::default();
        for at in [150_000_000, 200_000_000, 260_000_000] {
            let gap = t.event(at, 1_000_000_000);
            rec.record_event(
                gap,
                1_000_000_000,
                crate::stream::EventLatency::Of(at / 100),
            );
        }
        rec.record_stream(0, &t, true);
        let mut b = crate::SummaryBuilder::new(crate::results::testing::header(), None);
        b.add(1_795_000_000, &rec);
        let s = b.finish(None);
        for (text, ok) in [
            ("ttft p99 < 200ms", true),
            ("ttft.p50 < 100ms", false),
            ("itl.max <= 61ms", true),
            ("mean_itl.p50 < 50ms", false),
            ("stream_duration.max < 111ms", true),
            // Event latency: 1.5, 2 and 2.6 ms.
            ("event_latency p50 < 2100us", true),
            ("event_latency.max < 2500us", false),
            // 3 tokens by 260 ms from the start: 11.5 tokens/s.
            ("tokens_per_s p50 > 11", true),
            ("tokens_per_s.p50 > 12/s", false),
        ] {
            let c = text.parse::<Assertion>().unwrap().check(&s);
            assert_eq!(c.ok, ok, "{text}: {}", c.actual);
        }
        assert!("target[1].ttft.p99 < 1s".parse::<Assertion>().is_err());
        assert!("ttft.failed < 1%".parse::<Assertion>().is_err());
    }

    // Issue 22 §5: at 4,000 samples the report's p99.9 was the 3,997th
    // value (21.168 ms), not the nearest rank's 3,996th (21.087 ms). The
    // report, `--assert` and the gauges read one function.
    #[test]
    fn p99_9_is_the_nearest_rank_in_the_report_and_the_assertion() {
        for (n, tail, want) in [
            (
                4_000,
                &[21_087_000, 21_168_000, 22_000_000, 23_000_000, 24_000_000][..],
                21_087_000,
            ),
            (1_000, &[5_000_000, 9_000_000][..], 5_000_000),
        ] {
            let s = summary_with_tail(n, tail);
            let h = &s.total.service;
            let reported = crate::LatencyStats::of(h).at(99.9).unwrap();
            assert_eq!(reported, h.highest_equivalent(want), "n = {n}");
            assert_eq!(reported, crate::rank::quantile(h, 0.999), "n = {n}");
            let at = format!("p99.9 <= {}ns", reported);
            let a: Assertion = at.parse().unwrap();
            assert!(a.check(&s).ok, "{at} at n = {n}");
            let below = format!("p99.9 < {}ns", reported);
            assert!(!below.parse::<Assertion>().unwrap().check(&s).ok);
        }
    }

    // Issue 35 §2: JSON named a closed loop's headline service time while
    // a bare `p50` judged response time (connect and turnaround in).
    #[test]
    fn a_closed_loops_bare_percentile_is_its_service_time() {
        let s = summary_with_tail(1_000, &[]);
        assert_eq!(s.headline(), crate::Headline::ServiceTime);
        let check = |t: &str| t.parse::<Assertion>().unwrap().check(&s);
        let bare = check("p50 < 1.5ms");
        assert!(bare.ok, "{bare}");
        assert!(bare.actual.ends_with("service time"), "{bare}");
        assert!(check("service p50 < 1.5ms").ok);
        assert!(check("service_time.p50 < 1.5ms").ok);
        let response = check("response p50 < 1.5ms");
        assert!(!response.ok, "{response}");
        assert!(response.actual.ends_with("response time"), "{response}");
        assert!(!check("response_time.p50 < 1.5ms").ok);
        // A target keeps response time only: asked for by name too.
        let a: Assertion = "target[1].response_time.p50 < 1ms".parse().unwrap();
        assert_eq!(a.latency, Latency::Response);
        assert!("target[1].service_time.p50 < 1ms"
            .parse::<Assertion>()
            .is_err());
    }
}
