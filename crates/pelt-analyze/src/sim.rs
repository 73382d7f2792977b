//! A seeded random source for the statistics' simulations (tests only):
//! SplitMix64 (pelt-core's, stepped), so every simulation is reproducible
//! and none needs a dependency.

/// SplitMix64 with its state.
pub(crate) struct SplitMix(pub(crate) u64);

impl SplitMix {
    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let out = pelt_core::splitmix64(self.0);
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        out
    }

    /// Uniform on the open interval (0, 1).
    pub(crate) fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}
