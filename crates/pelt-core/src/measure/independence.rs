//! Are a rate run's requests the independent, on-schedule trials its
//! figures assume? Two running summaries the [`Recorder`](crate::Recorder)
//! keeps per worker, cheap on the hot path and merged by adding, and the
//! two checks made from them once the run is over.
//!
//! # Consecutive response times: lag-1 autocorrelation
//!
//! A percentile's interval from the order statistics of `n` requests
//! (see `summary::quantile_ci`) assumes `n` independent draws.
//! When slow requests come in runs (a queue at the server, a client that
//! stalled, a pause in a neighbour) neighbouring requests carry much the
//! same information, and the interval is too narrow. The lag-1
//! correlation of consecutive response times, each worker's in the order
//! they completed, measures that: for a series whose dependence falls off
//! like an AR(1)'s, `r` shrinks the information in `n` requests to about
//! `n·(1 − r)/(1 + r)`, so an interval is about `√((1 + r)/(1 − r))` times
//! too narrow (×1.7 at `r = 0.5`, ×3 at `r = 0.8`).
//!
//! Kept as running sums over consecutive pairs `(x, y)`: their count and
//! `Σx, Σy, Σx², Σy², Σxy`, from which Pearson's
//! `r = (nΣxy − ΣxΣy) / √((nΣx² − (Σx)²)(nΣy² − (Σy)²))`. Each worker
//! pairs only its own responses, and a pair never spans two of its
//! seconds (each second starts a fresh recorder), so sums from workers and
//! seconds add: one pair per worker per second is lost, nothing else.
//! The values are on a log scale, `log2` taken from the exponent and the
//! next 16 bits of the mantissa (Mitchell's approximation: monotone,
//! within 0.086 of `log2`, and a few integer instructions), so that a
//! handful of timeouts among millisecond responses neither makes nor
//! masks the figure; and in integers, so that sums merge exactly in any
//! order. The warning is an effect size, not a test (with thousands of
//! pairs any correlation is "significant"): `r ≥` [`AUTOCORRELATION_WARN`]
//! over at least [`MIN_PAIRS`] pairs. Under independence `r` is about
//! `N(0, 1/n)`, so 100 pairs put 0.8 eight standard errors away. Why 0.8
//! and not lower: a healthy run against a fast server shows r of 0.5 to
//! 0.7 from the client's own batching (requests that go out in one
//! wake-up are read back in one) and from a rate ramp's changing level,
//! so a lower threshold warned on ordinary runs (a 500..2,500 req/s ramp
//! against `pelt serve` gave 0.54 to 0.73); a queue at the server or a
//! stalled client gives 0.9 and more (a 400 ms pause: 0.96).
//!
//! # Arrivals against the schedule: Kolmogorov–Smirnov on send instants
//!
//! The plan says when each request should go out; the server saw when it
//! did. Over the requests sent, with planned instants `t_i` and actual
//! ones `s_i`, the two empirical distribution functions differ at any
//! time `b` by `(#{t_i ≤ b} − #{s_i ≤ b}) / n`: the requests due and not
//! yet sent (the client's backlog), over `n`. The two-sample KS
//! statistic `D = max_b |F_planned(b) − F_actual(b)|` is therefore the
//! largest backlog (or lead, when a send window sends early) over the
//! run, as a share of it.
//!
//! A request contributes to the backlog only between its planned and
//! actual instants. On a grid of [`GRID_NS`] (10 ms) slots, a request
//! planned in slot `a` and sent in slot `c ≠ a` adds `+1` to slot `a` and
//! `−1` to slot `c` of a difference array; the running sum of that array
//! is the backlog at each slot's end, exactly. A request sent within the
//! slot it was due in (nearly all of them: send lag is micro- to
//! milliseconds) costs two integer divisions and a compare. Slots are
//! absolute (run time / width), so arrays from workers and seconds add.
//! The grid's maximum is KS on the data grouped into slots: a lower bound
//! on the exact `D`, short of it by at most one slot's requests over `n`,
//! which is far below the critical value for any rate at which 10 ms
//! holds fewer than `√n` requests. A grid longer than [`MAX_SLOTS`] (21
//! minutes at 10 ms) halves its resolution by adding neighbouring slots,
//! which keeps every other boundary's sum exact; its memory stays under
//! 1 MB however long the run.
//!
//! The critical value is KS's for two samples of `n` at 5 %:
//! `D > 1.358·√(2/n)`. When the plan is Poisson, its instants (given
//! their number) are independent draws, so this is exactly "the arrivals
//! differ from the plan more than two draws of the plan's own process
//! would"; for a constant rate it is the same tolerance. In requests, the
//! client must fall `1.92·√n` behind: at 1,000 req/s for 10 s, 192
//! requests (about 0.2 s of no sending). Shorter stalls show in send lag
//! ([`crate::Warning::SendLag`]); this check says whether the load the
//! server saw still had the planned shape.

use crate::sample::Nanos;

/// Lag-1 correlation at or above which consecutive response times are
/// "strongly correlated": intervals about 1.7× too narrow or worse.
pub const AUTOCORRELATION_WARN: f64 = 0.8;
/// Fewest consecutive pairs (or requests sent) either check is made on.
pub const MIN_PAIRS: u64 = 100;
/// Width of the send grid's slots at full resolution: 10 ms.
pub const GRID_NS: u64 = 10_000_000;
/// Most slots a send grid holds before it halves its resolution.
pub const MAX_SLOTS: usize = 1 << 17;
/// Coarsest resolution a grid may reach (`GRID_NS << MAX_LEVEL` still
/// fits a u64); a results file claiming more is damaged.
pub const MAX_LEVEL: u8 = 40;
/// Kolmogorov–Smirnov's `c(α)` at α = 0.05: `√(−ln(α/2)/2)`.
pub const KS_C_05: f64 = 1.358;

/// `ns` on the log scale the correlation uses: `log2` in 16.16 fixed
/// point, by Mitchell's approximation (see the module docs).
pub fn log_scale(ns: u64) -> u32 {
    let x = ns.max(1);
    let e = 63 - x.leading_zeros();
    // The 16 bits after the leading one: the mantissa's fraction.
    let m = if e >= 16 {
        (x >> (e - 16)) & 0xFFFF
    } else {
        (x << (16 - e)) & 0xFFFF
    };
    (e << 16) | m as u32
}

/// Running sums over consecutive response times (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct Lag1 {
    /// Consecutive pairs counted.
    pub pairs: u64,
    /// `Σx` over the pairs' first values (log scale).
    pub sum_x: u128,
    /// `Σy` over the pairs' second values.
    pub sum_y: u128,
    /// `Σx²`.
    pub sum_xx: u128,
    /// `Σy²`.
    pub sum_yy: u128,
    /// `Σxy`.
    pub sum_xy: u128,
    /// The last value recorded, to pair with the next; not merged or
    /// stored (a recorder that others merge into records nothing more).
    last: Option<u32>,
}

impl PartialEq for Lag1 {
    /// The sums; the value waiting for its pair is no figure.
    fn eq(&self, o: &Lag1) -> bool {
        self.sums() == o.sums()
    }
}

impl Lag1 {
    /// Pairs `ns` with the response time recorded before it.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let y = log_scale(ns);
        if let Some(x) = self.last {
            let (x, y) = (u128::from(x), u128::from(y));
            self.pairs += 1;
            self.sum_x += x;
            self.sum_y += y;
            self.sum_xx += x * x;
            self.sum_yy += y * y;
            self.sum_xy += x * y;
        }
        self.last = Some(y);
    }

    /// `[pairs, Σx, Σy, Σx², Σy², Σxy]`, as a results file keeps them.
    pub fn sums(&self) -> [u128; 6] {
        [
            u128::from(self.pairs),
            self.sum_x,
            self.sum_y,
            self.sum_xx,
            self.sum_yy,
            self.sum_xy,
        ]
    }

    /// The sums read back from [`Lag1::sums`]; `None` for counts no run
    /// could have made.
    pub fn from_sums(s: [u128; 6]) -> Option<Lag1> {
        Some(Lag1 {
            pairs: u64::try_from(s[0]).ok()?,
            sum_x: s[1],
            sum_y: s[2],
            sum_xx: s[3],
            sum_yy: s[4],
            sum_xy: s[5],
            last: None,
        })
    }

    /// Adds `other`'s pairs.
    pub fn merge(&mut self, other: &Lag1) {
        self.pairs += other.pairs;
        self.sum_x = self.sum_x.saturating_add(other.sum_x);
        self.sum_y = self.sum_y.saturating_add(other.sum_y);
        self.sum_xx = self.sum_xx.saturating_add(other.sum_xx);
        self.sum_yy = self.sum_yy.saturating_add(other.sum_yy);
        self.sum_xy = self.sum_xy.saturating_add(other.sum_xy);
    }

    /// Empty, with nothing waiting for a pair.
    pub fn reset(&mut self) {
        *self = Lag1::default();
    }

    /// Pearson's correlation of the pairs; `None` for fewer than
    /// [`MIN_PAIRS`] pairs or values without spread.
    pub fn correlation(&self) -> Option<f64> {
        if self.pairs < MIN_PAIRS {
            return None;
        }
        // Means first: the values are ~2^20 and their spread ~2^14, so
        // raw-moment differences in f64 keep 12 significant digits.
        let n = self.pairs as f64;
        let (mx, my) = (self.sum_x as f64 / n, self.sum_y as f64 / n);
        let cov = self.sum_xy as f64 / n - mx * my;
        let vx = self.sum_xx as f64 / n - mx * mx;
        let vy = self.sum_yy as f64 / n - my * my;
        let r = cov / (vx * vy).sqrt();
        (vx > 0.0 && vy > 0.0 && r.is_finite()).then(|| r.clamp(-1.0, 1.0))
    }
}

/// How far `r`'s correlation makes an interval that assumes independence
/// too narrow, for an AR(1)-like series: `√((1 + r)/(1 − r))`.
pub fn narrowing(r: f64) -> f64 {
    if r >= 1.0 {
        f64::INFINITY
    } else {
        ((1.0 + r) / (1.0 - r)).max(0.0).sqrt()
    }
}

/// Planned against actual send instants on a grid of slots, as a
/// difference array (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct SendGrid {
    /// Slots are `GRID_NS << level` wide.
    level: u8,
    /// The slot `diff[0]` is (run time / width).
    first: u64,
    /// Planned minus sent, per slot.
    diff: Vec<i64>,
}

impl PartialEq for SendGrid {
    /// The same backlog everywhere: zeros at either end are no figure.
    fn eq(&self, o: &SendGrid) -> bool {
        self.trimmed() == o.trimmed()
    }
}

/// How a run's sends kept to its plan (see [`SendGrid::fit`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScheduleFit {
    /// Kolmogorov–Smirnov's `D`: the largest backlog over `sent`.
    pub d: f64,
    /// `D`'s critical value at 5 % for `sent` requests.
    pub critical: f64,
    /// The largest backlog, in requests: positive when the client was
    /// behind its plan, negative when ahead (a send window).
    pub behind: i64,
    /// When, in run nanoseconds (the end of its slot).
    pub at_ns: Nanos,
    /// Requests sent, the `n` of the test.
    pub sent: u64,
    /// The grid's slot width, nanoseconds.
    pub slot_ns: u64,
}

impl ScheduleFit {
    /// Whether the sends strayed from the plan beyond the critical value.
    pub fn failed(&self) -> bool {
        self.d > self.critical
    }
}

impl SendGrid {
    /// Width of a slot, nanoseconds.
    pub fn slot_ns(&self) -> u64 {
        GRID_NS << self.level
    }

    /// Notes a request planned at `intended` and sent at `sent`: nothing
    /// at all when both fall in one slot.
    #[inline]
    pub fn record(&mut self, intended: Nanos, sent: Nanos) {
        let w = self.slot_ns();
        if intended / w != sent / w {
            self.add_at(intended, 1);
            self.add_at(sent, -1);
        }
    }

    /// Adds `delta` to the slot holding time `t`, halving the resolution
    /// first if the grid would otherwise outgrow [`MAX_SLOTS`].
    fn add_at(&mut self, t: Nanos, delta: i64) {
        loop {
            let slot = t / self.slot_ns();
            if self.diff.is_empty() {
                self.first = slot;
                self.diff.push(delta);
                return;
            }
            let last = self.first + self.diff.len() as u64 - 1;
            let span = last.max(slot) - self.first.min(slot) + 1;
            if span > MAX_SLOTS as u64 && self.level < MAX_LEVEL {
                self.coarsen_to(self.level + 1);
                continue;
            }
            if slot < self.first {
                // Earlier than anything yet (a request answered long
                // after it was planned): rare, so shifting is fine.
                let k = (self.first - slot) as usize;
                self.diff.splice(0..0, std::iter::repeat_n(0, k));
                self.first = slot;
            }
            let i = (slot - self.first) as usize;
            if i >= self.diff.len() {
                self.diff.resize(i + 1, 0);
            }
            self.diff[i] += delta;
            return;
        }
    }

    /// Halves the resolution until it is `level`: each slot's sum goes to
    /// the slot of twice the width holding it.
    fn coarsen_to(&mut self, level: u8) {
        let level = level.min(MAX_LEVEL);
        if self.diff.is_empty() {
            self.level = self.level.max(level);
            return;
        }
        while self.level < level {
            let start = self.first / 2;
            let end = (self.first + self.diff.len() as u64 - 1) / 2;
            let mut out = vec![0i64; (end - start + 1) as usize];
            for (i, &d) in self.diff.iter().enumerate() {
                out[((self.first + i as u64) / 2 - start) as usize] += d;
            }
            self.first = start;
            self.diff = out;
            self.level += 1;
        }
    }

    /// Adds `other`'s slots, at the coarser of the two resolutions.
    pub fn merge(&mut self, other: &SendGrid) {
        if self.level < other.level {
            self.coarsen_to(other.level);
        }
        // Each of their slots by its start, which lies in the slot of
        // any coarser grid that holds it.
        let w = other.slot_ns();
        for (i, &d) in other.diff.iter().enumerate() {
            if d != 0 {
                self.add_at((other.first + i as u64).saturating_mul(w), d);
            }
        }
    }

    /// Empty, at full resolution; keeps its memory.
    pub fn reset(&mut self) {
        self.level = 0;
        self.first = 0;
        self.diff.clear();
    }

    /// The grid as `(level, first slot, planned − sent per slot)`, zeros
    /// at either end left out: what a results file keeps. `None` when
    /// every request went out in the slot it was due in.
    pub fn trimmed(&self) -> Option<(u8, u64, &[i64])> {
        let lead = self.diff.iter().position(|&d| d != 0)?;
        let end = self.diff.iter().rposition(|&d| d != 0)? + 1;
        Some((self.level, self.first + lead as u64, &self.diff[lead..end]))
    }

    /// A grid read back from [`SendGrid::trimmed`]; `None` when it is
    /// larger or coarser than pelt ever makes one.
    pub fn from_parts(level: u8, first: u64, diff: Vec<i64>) -> Option<SendGrid> {
        let fits = level <= MAX_LEVEL
            && diff.len() <= MAX_SLOTS
            && first.checked_add(diff.len() as u64).is_some();
        fits.then_some(SendGrid { level, first, diff })
    }

    /// Kolmogorov–Smirnov between the planned and actual instants of
    /// `sent` requests; `None` for fewer than [`MIN_PAIRS`].
    pub fn fit(&self, sent: u64) -> Option<ScheduleFit> {
        if sent < MIN_PAIRS {
            return None;
        }
        let (mut run, mut worst, mut at) = (0i64, 0i64, 0usize);
        for (i, &d) in self.diff.iter().enumerate() {
            run += d;
            if run.abs() > worst.abs() {
                (worst, at) = (run, i);
            }
        }
        let n = sent as f64;
        Some(ScheduleFit {
            d: worst.unsigned_abs() as f64 / n,
            critical: KS_C_05 * (2.0 / n).sqrt(),
            behind: worst,
            at_ns: (self.first + at as u64 + 1).saturating_mul(self.slot_ns()),
            sent,
            slot_ns: self.slot_ns(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// splitmix64, for the simulations.
    fn uniform(state: &mut u64) -> f64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn normal(state: &mut u64) -> f64 {
        // Box–Muller.
        let (u, v) = (uniform(state).max(1e-300), uniform(state));
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Response times `exp(μ + z_t)` with `z_t = φ·z_{t−1} + ε_t`, in
    /// nanoseconds around 1 ms: lognormal, and AR(1) on the log scale.
    fn ar1(phi: f64, n: usize, seed: u64) -> Vec<u64> {
        let mut state = seed;
        let sd = 0.4 * (1.0 - phi * phi).sqrt();
        let mut z = 0.0;
        (0..n)
            .map(|_| {
                z = phi * z + sd * normal(&mut state);
                (1e6 * z.exp()) as u64
            })
            .collect()
    }

    fn lag1_of(values: &[u64]) -> Lag1 {
        let mut l = Lag1::default();
        for &v in values {
            l.record(v);
        }
        l
    }

    #[test]
    fn log_scale_is_monotone_and_close_to_log2() {
        let mut last = 0;
        for ns in (1..200_000u64).chain((1..2000).map(|k| k * 7_919_993)) {
            let v = log_scale(ns);
            assert!(v >= last, "{ns}");
            last = v;
            let err = (f64::from(v) / 65536.0 - (ns as f64).log2()).abs();
            assert!(err < 0.087, "{ns}: {err}");
        }
        assert_eq!(log_scale(0), 0);
        assert_eq!(log_scale(1 << 20), 20 << 16);
    }

    #[test]
    fn independent_response_times_correlate_near_zero() {
        for seed in 1..=20 {
            let r = lag1_of(&ar1(0.0, 5_000, seed)).correlation().unwrap();
            // Standard error 1/√5000 ≈ 0.014.
            assert!(r.abs() < 0.06, "seed {seed}: {r}");
            assert!(r < AUTOCORRELATION_WARN);
        }
    }

    #[test]
    fn an_ar1_series_with_phi_0_9_is_flagged_and_0_8_measured() {
        for seed in 1..=20 {
            let r = lag1_of(&ar1(0.8, 5_000, seed)).correlation().unwrap();
            assert!((r - 0.8).abs() < 0.05, "seed {seed}: {r}");
            let r = lag1_of(&ar1(0.9, 5_000, seed)).correlation().unwrap();
            assert!((r - 0.9).abs() < 0.05, "seed {seed}: {r}");
            assert!(r >= AUTOCORRELATION_WARN);
            // A healthy run's batching (0.5 to 0.7) is not a warning.
            let r = lag1_of(&ar1(0.6, 5_000, seed)).correlation().unwrap();
            assert!(r < AUTOCORRELATION_WARN, "seed {seed}: {r}");
        }
        assert!((narrowing(0.8) - 3.0).abs() < 1e-9);
        assert!((narrowing(0.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn pairs_merge_exactly_and_too_few_give_no_figure() {
        let v = ar1(0.5, 3_000, 7);
        // Three workers' (or seconds') recorders: a pair is lost at each
        // seam, nothing else.
        let parts: Vec<Lag1> = v.chunks(1_000).map(lag1_of).collect();
        let mut merged = Lag1::default();
        for p in &parts {
            merged.merge(p);
        }
        assert_eq!(merged.pairs, 2_997);
        let whole = lag1_of(&v).correlation().unwrap();
        assert!((merged.correlation().unwrap() - whole).abs() < 0.01);
        let mut other_order = parts[2];
        other_order.merge(&parts[0]);
        other_order.merge(&parts[1]);
        assert_eq!(other_order, merged);
        assert_eq!(Lag1::from_sums(merged.sums()), Some(merged));
        assert_eq!(lag1_of(&v[..MIN_PAIRS as usize]).correlation(), None);
        assert_eq!(lag1_of(&[5_000; 500]).correlation(), None, "no spread");
    }

    /// A constant-rate plan, 1,000 req/s for `secs`, each request sent
    /// `lag(i)` after its slot.
    fn grid_of(n: u64, lag: impl Fn(u64) -> u64) -> SendGrid {
        let mut g = SendGrid::default();
        for i in 0..n {
            let intended = i * 1_000_000;
            g.record(intended, intended + lag(i));
        }
        g
    }

    #[test]
    fn a_schedule_followed_exactly_passes() {
        let exact = grid_of(10_000, |_| 0);
        assert_eq!(exact.trimmed(), None);
        let fit = exact.fit(10_000).unwrap();
        assert_eq!((fit.d, fit.behind), (0.0, 0));
        assert!(!fit.failed());
        // Timer jitter of up to 0.9 ms and a 1 ms timer's batches: a few
        // requests behind at a slot's end, far below 1.92·√n = 192.
        let mut state = 3;
        let jitter: Vec<u64> = (0..10_000)
            .map(|_| (uniform(&mut state) * 900_000.0) as u64)
            .collect();
        let fit = grid_of(10_000, |i| jitter[i as usize]).fit(10_000).unwrap();
        assert!(fit.behind <= 1, "{fit:?}");
        assert!(!fit.failed(), "{fit:?}");
    }

    #[test]
    fn a_stall_fails_and_says_when() {
        // 1,000 req/s for 10 s; the client stalls for 300 ms at 4 s and
        // then sends what it owes at once: 300 requests behind.
        let stall = |i: u64| {
            let t = i * 1_000_000;
            if (4_000_000_000..4_300_000_000).contains(&t) {
                4_300_000_000 - t
            } else {
                20_000
            }
        };
        let fit = grid_of(10_000, stall).fit(10_000).unwrap();
        assert!(fit.failed(), "{fit:?}");
        assert_eq!(fit.behind, 300);
        assert!((fit.d - 0.03).abs() < 1e-12);
        assert!((fit.critical - 0.0192).abs() < 1e-3);
        assert_eq!(fit.at_ns, 4_300_000_000);
        // A 100 ms stall is send lag, not a different arrival pattern.
        let short = |i: u64| {
            let t = i * 1_000_000;
            if (4_000_000_000..4_100_000_000).contains(&t) {
                4_100_000_000 - t
            } else {
                0
            }
        };
        assert!(!grid_of(10_000, short).fit(10_000).unwrap().failed());
        assert_eq!(SendGrid::default().fit(MIN_PAIRS - 1), None);
    }

    #[test]
    fn early_sends_count_as_a_lead() {
        let mut g = SendGrid::default();
        for i in 0..1_000u64 {
            // Sent 15 ms ahead of plan, as a wide send window could.
            let intended = 20_000_000 + i * 10_000_000;
            g.record(intended, intended - 15_000_000);
        }
        let fit = g.fit(1_000).unwrap();
        assert!(fit.behind < 0, "{fit:?}");
    }

    #[test]
    fn grids_merge_in_any_order_and_coarsen_exactly() {
        let whole = grid_of(3_000, |i| (i % 7) * 4_000_000);
        let part = |from: u64, to: u64| {
            let mut g = SendGrid::default();
            for i in from..to {
                let intended = i * 1_000_000;
                g.record(intended, intended + (i % 7) * 4_000_000);
            }
            g
        };
        let (a, b, c) = (part(0, 1_000), part(1_000, 2_000), part(2_000, 3_000));
        let mut left = c.clone();
        left.merge(&a);
        left.merge(&b);
        let mut right = a.clone();
        right.merge(&b);
        right.merge(&c);
        assert_eq!(left, whole);
        assert_eq!(right, whole);
        // Halving keeps the backlog at every other boundary: the
        // coarse grid's worst is one of the fine grid's running sums.
        let mut coarse = whole.clone();
        coarse.coarsen_to(1);
        assert_eq!(coarse.slot_ns(), 2 * GRID_NS);
        let sums = |g: &SendGrid| {
            let mut run = 0;
            g.diff
                .iter()
                .map(|&d| {
                    run += d;
                    run
                })
                .collect::<Vec<_>>()
        };
        let (fine, halved) = (sums(&whole), sums(&coarse));
        let offset = (whole.first % 2) as usize;
        for (j, &s) in halved.iter().enumerate() {
            let i = 2 * j + 1 - offset;
            if i < fine.len() {
                assert_eq!(s, fine[i], "boundary {j}");
            }
        }
        // A fine grid merged into a coarse one is coarsened first.
        let mut mixed = coarse.clone();
        mixed.merge(&SendGrid::default());
        mixed.merge(&part(0, 10));
        assert_eq!(mixed.slot_ns(), 2 * GRID_NS);
        // A grid that outgrows MAX_SLOTS halves itself.
        let mut long = SendGrid::default();
        long.record(0, 3 * GRID_NS);
        long.record(GRID_NS * MAX_SLOTS as u64, GRID_NS * (MAX_SLOTS as u64 + 3));
        assert_eq!(long.level, 1);
        // ... and a request a day late makes no day-long array.
        let mut late = SendGrid::default();
        late.record(0, 86_400 * 1_000_000_000);
        assert!(late.diff.len() <= MAX_SLOTS, "{}", late.diff.len());
        assert_eq!(late.fit(MIN_PAIRS).unwrap().behind, 1);
        assert!(long.diff.len() <= MAX_SLOTS);
        let (level, first, diff) = long.trimmed().unwrap();
        assert_eq!(
            SendGrid::from_parts(level, first, diff.to_vec()).unwrap(),
            long
        );
        assert!(SendGrid::from_parts(MAX_LEVEL + 1, 0, vec![1]).is_none());
    }
}
